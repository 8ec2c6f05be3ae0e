/* Control-flow contexts for tf.while_loop and tf.cond (their Python is in
 * control_flow.py.inc): the graph remembers in which context each op was made, and while
 * a context is current, an input from outside it goes through the context's hook, which
 * builds the Enter or Switch that brings it in, as TF1's WhileContext / CondContext do. */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "runtime/op.h"
#include "shell/tf/tf.h"

int tf_cf_ctx_of(tf_graph *g, int id) {
  tf_cf_state *c = tf_graph_cf(g);
  return id >= 0 && id < c->cap ? c->ctx_of[id] : 0;
}

static void set_ctx_of(tf_cf_state *c, int id, int ctx) {
  if (id >= c->cap) {
    if (!ctx) return;
    int cap = c->cap ? c->cap : 256;
    while (cap <= id) cap *= 2;
    c->ctx_of = xrealloc(c->ctx_of, (size_t)cap * sizeof *c->ctx_of);
    memset(c->ctx_of + c->cap, 0, (size_t)(cap - c->cap) * sizeof *c->ctx_of);
    c->cap = cap;
  }
  c->ctx_of[id] = ctx;
}

void tf_cf_record(tf_graph *g, int id) {
  tf_cf_state *c = tf_graph_cf(g);
  if (c->ctx || id < c->cap) set_ctx_of(c, id, c->busy ? 0 : c->ctx);
}

sh_obj *tf_cf_call(tf_graph *g, sh_obj *t, const char *consumer, bool is_ref) {
  tf_cf_state *c = tf_graph_cf(g);
  sh_obj *args[3] = {t, sh_str(consumer), sh_bool(is_ref)};
  c->busy++;
  sh_obj *r = sh_call(c->hook, 3, args, NULL);
  c->busy--;
  sh_decref(args[1]);
  sh_decref(args[2]);
  return r;
}

/* _cf_set(ctx, hook): make ctx (0: none) and its hook current; returns the previous pair. */
static sh_obj *f_cf_set(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *ctx, *hook;
  int64_t id;
  if (sh_parse_args("_cf_set", argc, argv, kw, "ctx hook", &ctx, &hook) < 0 || sh_as_int(ctx, &id) < 0)
    return NULL;
  tf_cf_state *c = tf_graph_cf(tf_default_graph());
  sh_obj *r = sh_tuple_new(2);
  SH_TUPLE_ITEMS(r)[0] = sh_int(c->ctx);
  SH_TUPLE_ITEMS(r)[1] = c->hook ? c->hook : sh_none();   /* the reference moves */
  c->ctx = (int)id;
  c->hook = hook == SH_NONE ? NULL : sh_incref(hook);
  return r;
}

static int op_id(sh_obj *o, int *id) {
  if (Py_TYPE(o) == (PyTypeObject *)&tf_op_type) *id = ((tf_op *)o)->id;
  else if (Py_TYPE(o) == (PyTypeObject *)&tf_tensor_type) *id = ((tf_tensor *)o)->id;
  else {
    sh_raise(sh_TypeError, "expected an Operation or a Tensor");
    return -1;
  }
  return 0;
}

/* _cf_ctx_of(op_or_tensor) -> the context it was made in (0: none). */
static sh_obj *f_cf_ctx_of(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *o;
  int id;
  if (sh_parse_args("_cf_ctx_of", argc, argv, kw, "op", &o) < 0 || op_id(o, &id) < 0) return NULL;
  return sh_int(tf_cf_ctx_of(tf_default_graph(), id));
}

/* _cf_mark(op_or_tensor, ctx): say op belongs to ctx. */
static sh_obj *f_cf_mark(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *o, *ctx;
  int id;
  int64_t cx;
  if (sh_parse_args("_cf_mark", argc, argv, kw, "op ctx", &o, &ctx) < 0 || op_id(o, &id) < 0 ||
      sh_as_int(ctx, &cx) < 0)
    return NULL;
  set_ctx_of(tf_graph_cf(tf_default_graph()), id, (int)cx);
  return sh_none();
}

/* _update_input(op, k, tensor): TF's op._update_input (a loop's Merge gets its
 * NextIteration). */
static sh_obj *f_update_input(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *o, *k, *t;
  int id;
  int64_t kk;
  if (sh_parse_args("_update_input", argc, argv, kw, "op k tensor", &o, &k, &t) < 0 ||
      op_id(o, &id) < 0 || sh_as_int(k, &kk) < 0)
    return NULL;
  if (Py_TYPE(t) != (PyTypeObject *)&tf_tensor_type) return sh_raise(sh_TypeError, "_update_input needs a Tensor");
  tf_graph *g = tf_default_graph();
  char name[400];
  rt_status st = {0};
  if (rt_graph_update_input(tf_rt(g), id, (int)kk, tf_tensor_name((tf_tensor *)t, name, sizeof name), &st))
    return sh_raise(sh_ValueError, "%s", st.msg);
  return sh_none();
}

static const sh_method cflow_funcs[] = {
  {"_cf_set", f_cf_set, "_cf_set(ctx, hook)", "Make a control-flow context current (internal)."},
  {"_cf_ctx_of", f_cf_ctx_of, "_cf_ctx_of(op)", "The control-flow context an op was made in (internal)."},
  {"_cf_mark", f_cf_mark, "_cf_mark(op, ctx)", "Put an op in a control-flow context (internal)."},
  {"_update_input", f_update_input, "_update_input(op, k, tensor)", "Rewire data input k of an op (internal)."},
  {NULL},
};

void tf_cflow_add(sh_obj *tf) { sh_module_add_funcs(tf, cflow_funcs); }
