/* The op functions of the tf module. Most are one row: a Python name, the op it builds,
 * and how its Python parameters map onto the op's inputs and attrs (TF1's Python names
 * differ from the op's in places: input_tensor -> input, axis -> reduction_indices).
 * A generic builder reads the op's signature from the registry, so types are bound from
 * tensor arguments first and Python values converted to match, as TF1's op_def_library
 * does. The few functions TF1 builds out of several ops are written out below. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/str.h"
#include "runtime/gradients.h"
#include "runtime/graphdef.h"
#include "runtime/op.h"
#include "shell/tf/tf.h"

/* A row: params are "py[:op]" words; after '|' they are optional. */
typedef struct tf_opfn {
  const char *py;
  const char *op;
  const char *params;
  const char *help;
} tf_opfn;

#define MAXP 40

typedef struct bound {
  int n;
  char py[MAXP][32];
  char op[MAXP][32];
  bool optional[MAXP];
  sh_obj *val[MAXP];    /* borrowed; NULL when not given */
} bound;

static int parse_params(const char *spec, bound *b) {
  char buf[512];
  str_puts(buf, sizeof buf, 0, spec);
  bool opt = false;
  b->n = 0;
  char *save = NULL;
  for (char *w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
    if (*w == '|') {
      opt = true;
      if (!*++w) continue;
    }
    if (b->n == MAXP) return -1;
    char *colon = strchr(w, ':');
    if (colon) *colon = '\0';
    str_puts(b->py[b->n], 32, 0, w);
    str_puts(b->op[b->n], 32, 0, colon ? colon + 1 : w);
    b->optional[b->n] = opt;
    b->val[b->n] = NULL;
    b->n++;
  }
  return 0;
}

/* Bind positional and keyword arguments as Python would; "name" is always accepted. */
static int bind_args(const char *fname, bound *b, int argc, sh_obj **argv, sh_obj *kw,
                     sh_obj **name) {
  *name = NULL;
  if (argc > b->n + 1) {
    sh_raise(sh_TypeError, "%s() takes at most %d positional arguments (%d given)", fname, b->n + 1, argc);
    return -1;
  }
  for (int i = 0; i < argc; i++) {
    if (i < b->n) b->val[i] = argv[i];
    else *name = argv[i];
  }
  sh_obj *k, *v;
  for (int64_t pos = 0; kw && sh_dict_next(kw, &pos, &k, &v);) {
    const char *key = sh_str_cstr(k);
    if (!strcmp(key, "name")) {
      *name = v;
      continue;
    }
    int i = 0;
    while (i < b->n && strcmp(b->py[i], key)) i++;
    if (i == b->n) {
      sh_raise(sh_TypeError, "%s() got an unexpected keyword argument '%s'", fname, key);
      return -1;
    }
    if (b->val[i]) {
      sh_raise(sh_TypeError, "%s() got multiple values for argument '%s'", fname, key);
      return -1;
    }
    b->val[i] = v;
  }
  for (int i = 0; i < b->n; i++)
    if (!b->optional[i] && !b->val[i]) {
      sh_raise(sh_TypeError, "%s() missing required argument: '%s'", fname, b->py[i]);
      return -1;
    }
  return 0;
}

/* Set attr `a` of n from a Python value. */
int tf_set_attr(rt_node *n, const rt_attr_sig *a, sh_obj *v, const char *fname) {
  switch (a->kind) {
  case RT_ATTR_INT: {
    int64_t i;
    if (sh_as_int(v, &i) < 0) return -1;
    rt_node_set_int(n, a->name, i);
    return 0;
  }
  case RT_ATTR_FLOAT: {
    double d;
    if (sh_as_double(v, &d) < 0) return -1;
    rt_node_set_float(n, a->name, d);
    return 0;
  }
  case RT_ATTR_BOOL: {
    int t = sh_truth(v);
    if (t < 0) return -1;
    rt_node_set_bool(n, a->name, t);
    return 0;
  }
  case RT_ATTR_STRING: {
    const char *s = sh_is_str(v) ? sh_str_cstr(v) : sh_is_bytes(v) ? sh_bytes_data(v) : NULL;
    if (!s) {
      sh_raise(sh_TypeError, "%s(): %s must be a string, not %s", fname, a->name, sh_type_name(v));
      return -1;
    }
    rt_node_set_string(n, a->name, s);
    return 0;
  }
  case RT_ATTR_TYPE: {
    rt_dtype t = np_dtype_of(v);
    if (t == RT_INVALID) {
      sh_raise(sh_TypeError, "%s(): %s must be a dtype, not %s", fname, a->name, sh_type_name(v));
      return -1;
    }
    rt_node_set_type(n, a->name, t);
    return 0;
  }
  case RT_ATTR_SHAPE: {
    rt_shape s;
    if (tf_shape_from_obj(v, &s) < 0) return -1;
    rt_node_set_shape(n, a->name, &s);
    return 0;
  }
  case RT_ATTR_LIST_INT: {
    sh_obj *t = sh_sequence_to_tuple(v);
    if (!t) return -1;
    int64_t cnt = SH_TUPLE_N(t), vals[64];
    if (cnt > 64) cnt = 64;
    for (int64_t i = 0; i < cnt; i++)
      if (sh_as_int(SH_TUPLE_ITEMS(t)[i], &vals[i]) < 0) {
        sh_decref(t);
        return -1;
      }
    sh_decref(t);
    rt_node_set_ints(n, a->name, (int)cnt, vals);
    return 0;
  }
  case RT_ATTR_LIST_TYPE: case RT_ATTR_LIST_SHAPE: case RT_ATTR_LIST_STRING:
    return tf_set_list_attr(n, a, v, fname);
  default:
    sh_raise(sh_TypeError, "%s(): cannot set attr %s from Python", fname, a->name);
    return -1;
  }
}

/* Is attr `name` of sig a list(type) (an argument whose inputs each have their own type)? */
static bool type_list_attr(const rt_op_sig *sig, const char *name) {
  for (int i = 0; i < sig->n_attrs; i++)
    if (!strcmp(sig->attrs[i].name, name)) return sig->attrs[i].kind == RT_ATTR_LIST_TYPE;
  return false;
}

/* The dtype an input of the op should have, from attrs bound so far. */
static rt_dtype input_hint(const rt_node *n, const rt_op_sig *sig, const rt_arg_sig *arg) {
  if (arg->fixed != RT_INVALID) return arg->fixed;
  rt_dtype t = rt_node_type(n, arg->type_attr, RT_INVALID);
  if (t != RT_INVALID) return t;
  for (int i = 0; i < sig->n_attrs; i++)
    if (!strcmp(sig->attrs[i].name, arg->type_attr) && sig->attrs[i].has_default)
      return sig->attrs[i].dflt.type;
  return RT_INVALID;
}

static sh_obj *build(const char *fname, const char *op, bound *b, sh_obj *name, bool want_op) {
  const rt_op_sig *sig = rt_op_find(op);
  if (!sig) return sh_raise(sh_NotImplementedError, "%s: op %s is not available in this build", fname, op);
  rt_node *n = tf_node_begin_c(op, name && name != SH_NONE && sh_is_str(name) ? sh_str_cstr(name) : NULL);
  /* attrs first (a dtype given explicitly binds inputs) */
  for (int i = 0; i < b->n; i++) {
    if (!b->val[i] || b->val[i] == SH_NONE) continue;
    for (int a = 0; a < sig->n_attrs; a++)
      if (!strcmp(sig->attrs[a].name, b->op[i]) && tf_set_attr(n, &sig->attrs[a], b->val[i], fname) < 0) {
        rt_node_free(n);
        return NULL;
      }
  }
  /* bind type attrs from tensor-like inputs */
  for (int k = 0; k < sig->n_in; k++) {
    const rt_arg_sig *arg = &sig->in[k];
    if (arg->fixed != RT_INVALID || rt_node_attr(n, arg->type_attr)) continue;
    for (int i = 0; i < b->n; i++) {
      if (!b->val[i] || strcmp(b->op[i], arg->name)) continue;
      sh_obj *v = b->val[i];
      rt_dtype t = RT_INVALID;
      if (arg->number_attr[0] && (Py_TYPE(v) == (PyTypeObject *)&sh_list_type || Py_TYPE(v) == (PyTypeObject *)&sh_tuple_type)) {
        sh_obj *seq = sh_sequence_to_tuple(v);
        if (seq && type_list_attr(sig, arg->type_attr)) {   /* list(type): one type an input (IdentityN) */
          rt_attr_value tl = {.kind = RT_ATTR_LIST_TYPE};
          tl.list.n = (int)SH_TUPLE_N(seq);
          tl.list.v = xcalloc((size_t)tl.list.n + 1, sizeof(rt_dtype));
          for (int64_t j = 0; j < SH_TUPLE_N(seq); j++) {
            rt_dtype h = tf_dtype_hint(SH_TUPLE_ITEMS(seq)[j]);
            ((rt_dtype *)tl.list.v)[j] = h != RT_INVALID ? h : RT_FLOAT;
          }
          rt_node_set_attr(n, arg->type_attr, &tl);
          sh_decref(seq);
          continue;
        }
        for (int64_t j = 0; seq && j < SH_TUPLE_N(seq) && t == RT_INVALID; j++) t = tf_dtype_hint(SH_TUPLE_ITEMS(seq)[j]);
        sh_decref(seq);
      } else {
        t = tf_dtype_hint(v);
      }
      if (t != RT_INVALID) rt_node_set_type(n, arg->type_attr, t);
    }
  }
  /* inputs in signature order */
  for (int k = 0; k < sig->n_in; k++) {
    const rt_arg_sig *arg = &sig->in[k];
    sh_obj *v = NULL;
    for (int i = 0; i < b->n && !v; i++)
      if (!strcmp(b->op[i], arg->name) && b->val[i] && b->val[i] != SH_NONE) v = b->val[i];
    if (!v) {
      rt_node_free(n);
      return sh_raise(sh_TypeError, "%s() needs argument '%s'", fname, arg->name);
    }
    rt_dtype hint = input_hint(n, sig, arg);
    if (arg->number_attr[0] && !tf_is_tensorlike(v)) {
      sh_obj *seq = sh_sequence_to_tuple(v);
      if (!seq) {
        rt_node_free(n);
        return NULL;
      }
      for (int64_t j = 0; j < SH_TUPLE_N(seq); j++)
        if (tf_node_input(n, SH_TUPLE_ITEMS(seq)[j], hint) < 0) {
          sh_decref(seq);
          return NULL;
        }
      /* the list's length (an op of two lists, DynamicStitch's, leaves no count to infer) */
      if (!rt_node_attr(n, arg->number_attr)) rt_node_set_int(n, arg->number_attr, SH_TUPLE_N(seq));
      sh_decref(seq);
    } else if (tf_node_input(n, v, hint) < 0) {
      return NULL;
    }
  }
  if (want_op || sig->n_out != 1 || !sig->out[0].number_attr[0]) return want_op ? tf_node_finish(n) : tf_node_finish_tensor(n);
  /* one list of outputs (IdentityN): a list of tensors, as TF's wrappers give */
  tf_op *made = (tf_op *)tf_node_finish(n);
  if (!made) return NULL;
  sh_obj *out = sh_list_new(0);
  for (int i = 0; i < tf_rt(made->graph)->nodes[made->id]->n_outputs; i++)
    sh_list_append_steal(out, tf_tensor_new(made->graph, made->id, i));
  sh_decref((sh_obj *)made);
  return out;
}

/* ---- gradients in Python: tf.RegisterGradient, Graph.gradient_override_map ---------- */

static sh_obj *py_grads;   /* dict: name -> fn(op, *grads), as tf.RegisterGradient keeps them */

/* rt_gradients' hook: a node whose _gradient_op_type (or op type) has a Python gradient gets
 * it, called as TF calls it (in the gradient's name scope, the op and one gradient an output,
 * zeros where none reached it), its results one an input (None: no gradient). A Python
 * error stays raised for tf.gradients. */
static int py_grad_hook(rt_grad_ctx *ctx, bool *handled) {
  const rt_node *n = ctx->node;
  const char *key = rt_node_string(n, "_gradient_op_type", n->op);
  sh_obj *fn = py_grads ? sh_dict_get_str(py_grads, key) : NULL;
  if (!fn) return sh_err_occurred() ? rt_error(ctx->st, RT_INTERNAL, "gradient registry") : RT_OK;
  *handled = true;
  tf_graph *g = tf_default_graph();
  if (tf_rt(g) != ctx->g)
    return rt_error(ctx->st, RT_INVALID_ARGUMENT, "the gradient of '%s' is built outside its graph", n->name);
  int id = n->id, nout = n->n_outputs, nin = n->n_data_inputs;
  char saved[TF_SCOPE_MAX];
  snprintf(saved, sizeof saved, "%s", tf_graph_scope(g));
  snprintf(tf_graph_scope(g), TF_SCOPE_MAX, "%s", ctx->scope);
  const rt_grad_ctx *outer = tf_loop_grad;
  tf_loop_grad = ctx;
  sh_obj *args = sh_tuple_new(nout + 1), *r = NULL;
  PyTuple_SET_ITEM(args, 0, tf_op_new(g, id));
  for (int o = 0; o < nout; o++) {
    sh_obj *t = NULL;
    rt_node *src;
    int idx;
    if (ctx->dy[o] && rt_graph_output(ctx->g, ctx->dy[o], &src, &idx, ctx->st)) {
      tf_raise_status(ctx->st);
    } else if (ctx->dy[o]) {
      t = tf_tensor_new(g, src->id, idx);
    } else {
      sh_obj *y = tf_tensor_new(g, id, o);
      t = tf_unary_op("ZerosLike", NULL, y);
      sh_decref(y);
    }
    PyTuple_SET_ITEM(args, o + 1, t ? t : sh_none());
    if (!t) break;
  }
  if (!sh_err_occurred()) r = sh_call(fn, nout + 1, SH_TUPLE_ITEMS(args), NULL);
  tf_loop_grad = outer;
  sh_decref(args);
  snprintf(tf_graph_scope(g), TF_SCOPE_MAX, "%s", saved);
  if (!r) return rt_error(ctx->st, RT_INTERNAL, "the gradient function of %s raised", key);
  sh_obj *seq = Py_TYPE(r) == (PyTypeObject *)&sh_list_type || Py_TYPE(r) == (PyTypeObject *)&sh_tuple_type
                    ? sh_sequence_to_tuple(r) : sh_tuple_of(1, sh_incref(r));
  sh_decref(r);
  if (seq && SH_TUPLE_N(seq) != nin) {
    sh_raise(sh_ValueError, "Num gradients %lld generated for op %s do not match num inputs %d",
             (long long)SH_TUPLE_N(seq), n->name, nin);
    sh_decref(seq);
    seq = NULL;
  }
  for (int k = 0; seq && k < nin; k++) {
    sh_obj *x = SH_TUPLE_ITEMS(seq)[k];
    if (x == SH_NONE) continue;
    sh_obj *t = tf_convert(x, RT_INVALID);
    if (!t) break;
    char name[400];
    const char *dx = tf_tensor_name((tf_tensor *)t, name, sizeof name);
    if (ctx->remap) dx = ctx->remap(ctx->remap_arg, dx);   /* a forward value given back as is */
    ctx->dx[k] = dx ? xstrdup(dx) : NULL;
    sh_decref(t);
    if (!dx) {
      if (!ctx->st->code) rt_error(ctx->st, RT_INTERNAL, "the gradient function of %s: no copy in the loop", key);
      break;
    }
  }
  sh_decref(seq);
  if (ctx->st->code) return ctx->st->code;
  return sh_err_occurred() ? rt_error(ctx->st, RT_INTERNAL, "the gradient function of %s failed", key) : RT_OK;
}

/* _register_gradient(name, fn): tf.RegisterGradient's registry */
static sh_obj *f_register_gradient(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *name, *fn;
  if (sh_parse_args("_register_gradient", argc, argv, kw, "name fn", &name, &fn) < 0) return NULL;
  const char *s = sh_as_cstr(name);
  if (!s) return NULL;
  if (!py_grads) py_grads = sh_dict_new();
  const rt_op_sig *sig = rt_op_find(s);
  if (sh_dict_get_str(py_grads, s) || (sig && sig->def->grad))   /* TF's own are registered too */
    return sh_raise(sh_KeyError, "Registering two gradient with name '%s'!", s);
  if (sh_dict_set_str(py_grads, s, fn) < 0) return NULL;
  rt_gradients_set_hook(py_grad_hook);
  return sh_none();
}

/* ---- tf.raw_ops and the gen_*_ops modules: any registered op, by its signature ------ */

/* Attr a is set from the inputs (a type or a count), so it is no parameter (TF's rule). */
static bool inferred_attr(const rt_op_sig *sig, const char *a) {
  for (int k = 0; k < sig->n_in; k++)
    if (!strcmp(sig->in[k].type_attr, a) || !strcmp(sig->in[k].number_attr, a)) return true;
  return false;
}

/* op, or the op a GraphDef's name stands for here (AddV2: Add), if users may build it. */
static const rt_op_sig *public_op(const char *op) {
  const rt_op_sig *sig = op ? rt_op_find(rt_graphdef_op(op)) : NULL;
  return sig && !(sig->def->flags & RT_OP_INTERNAL) ? sig : NULL;
}

/* The parameters of op as TF's generated wrappers take them: the inputs, the attrs without
 * a default, then those with one (optional). */
static int raw_params(const rt_op_sig *sig, bound *b) {
  b->n = 0;
  for (int pass = 0; pass < 3; pass++) {
    int n = pass ? sig->n_attrs : sig->n_in;
    for (int i = 0; i < n; i++) {
      const char *p = pass ? sig->attrs[i].name : sig->in[i].name;
      if (pass && (inferred_attr(sig, p) || sig->attrs[i].has_default != (pass == 2))) continue;
      if (b->n == MAXP) return -1;
      str_puts(b->py[b->n], 32, 0, p);
      str_puts(b->op[b->n], 32, 0, p);
      b->optional[b->n] = pass == 2;
      b->val[b->n++] = NULL;
    }
  }
  return 0;
}

/* _raw_op(op, fname, *args, **kw): the Operation of op from TF's wrapper arguments */
static sh_obj *f_raw_op(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  const char *op = argc >= 2 ? sh_as_cstr(argv[0]) : NULL, *fname = op ? sh_as_cstr(argv[1]) : NULL;
  if (!fname) return argc >= 2 ? NULL : sh_raise(sh_TypeError, "_raw_op(op, fname, *args, **kw)");
  const rt_op_sig *sig = public_op(op);
  if (!sig) return sh_raise(sh_NotImplementedError, "%s: op %s is not available in this build", fname, op);
  bound b;
  sh_obj *name;
  if (raw_params(sig, &b) < 0) return sh_raise(sh_NotImplementedError, "%s: op %s has over %d parameters", fname, op, MAXP);
  if (bind_args(fname, &b, argc - 2, argv + 2, kw, &name) < 0) return NULL;
  return build(fname, sig->def->name, &b, name, true);
}

/* _op_sig(op): None, or (parameters, optional ones, outputs), as _raw_op takes them */
static sh_obj *f_op_sig(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *o;
  if (sh_parse_args("_op_sig", argc, argv, kw, "op", &o) < 0) return NULL;
  const char *op = sh_as_cstr(o);
  if (!op) return NULL;
  const rt_op_sig *sig = public_op(op);
  bound b;
  if (!sig || raw_params(sig, &b) < 0) return sh_none();
  sh_obj *params = sh_list_new(0), *optional = sh_list_new(0), *outs = sh_list_new(0);
  for (int i = 0; i < b.n; i++) sh_list_append_steal(b.optional[i] ? optional : params, sh_str(b.py[i]));
  for (int i = 0; i < sig->n_out; i++)   /* name, and whether it is a list (N * T) */
    sh_list_append_steal(outs, sh_tuple_of(2, sh_str(sig->out[i].name),
                                           sh_bool(sig->out[i].number_attr[0] != '\0')));
  return sh_tuple_of(3, params, optional, outs);
}

/* _op_names(): every op a user may build */
static sh_obj *f_op_names(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  if (sh_parse_args("_op_names", argc, argv, kw, "") < 0) return NULL;
  sh_obj *l = sh_list_new(0);
  for (int i = 0; rt_op_at(i); i++)
    if (!(rt_op_at(i)->def->flags & RT_OP_INTERNAL)) sh_list_append_steal(l, sh_str(rt_op_at(i)->def->name));
  if (!rt_op_find("AddV2") && public_op("AddV2")) sh_list_append_steal(l, sh_str("AddV2"));
  return l;
}

static const tf_opfn *find_row(const tf_opfn *rows, const char *py);

/* One entry point for every row: self is a str holding "module.name". */
static sh_obj *generic(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw);

/* ---- the rows ---------------------------------------------------------------------- */

static const tf_opfn rows[] = {
  {"add", "Add", "x y", "x + y elementwise (broadcasting)."},
  {"subtract", "Sub", "x y", "x - y elementwise."},
  {"multiply", "Mul", "x y", "x * y elementwise."},
  {"realdiv", "RealDiv", "x y", "x / y for floats."},
  {"div_no_nan", "DivNoNan", "x y", "x / y, 0 where y is 0."},
  {"div", "Div", "x y", "x / y (integer division for ints), TF1's tf.div."},
  {"floordiv", "FloorDiv", "x y", "x // y."},
  {"floormod", "FloorMod", "x y", "x % y (Python's sign rule)."},
  {"mod", "FloorMod", "x y", "x % y (Python's sign rule)."},
  {"pow", "Pow", "x y", "x ** y."},
  {"maximum", "Maximum", "x y", "Elementwise maximum."},
  {"minimum", "Minimum", "x y", "Elementwise minimum."},
  {"matmul", "MatMul", "a b |transpose_a transpose_b", "Matrix product (BLIS GEMM on CPU)."},
  {"negative", "Neg", "x", "-x."},
  {"square", "Square", "x", "x * x."},
  {"sqrt", "Sqrt", "x", "Square root."},
  {"rsqrt", "Rsqrt", "x", "1 / sqrt(x)."},
  {"exp", "Exp", "x", "e ** x."},
  {"log", "Log", "x", "Natural logarithm."},
  {"abs", "Abs", "x", "Absolute value."},
  {"sign", "Sign", "x", "-1, 0 or 1."},
  {"floor", "Floor", "x", "Largest integer not above x."},
  {"round", "Round", "x", "The nearest integer to x, halves to even."},
  {"sin", "Sin", "x", "Sine."},
  {"cos", "Cos", "x", "Cosine."},
  {"tan", "Tan", "x", "Tangent."},
  {"asin", "Asin", "x", "Arcsine."},
  {"acos", "Acos", "x", "Arccosine."},
  {"atan", "Atan", "x", "Arctangent."},
  {"sinh", "Sinh", "x", "Hyperbolic sine."},
  {"cosh", "Cosh", "x", "Hyperbolic cosine."},
  {"expm1", "Expm1", "x", "exp(x) - 1, exact for small x."},
  {"erf", "Erf", "x", "The error function."},
  {"erfc", "Erfc", "x", "The complementary error function."},
  {"atan2", "Atan2", "y:x x:y", "The angle of (x, y)."},
  {"ceil", "Ceil", "x", "Smallest integer not below x."},
  {"log1p", "Log1p", "x", "log(1 + x)."},
  {"sigmoid", "Sigmoid", "x", "1 / (1 + exp(-x))."},
  {"tanh", "Tanh", "x", "Hyperbolic tangent."},
  {"equal", "Equal", "x y", "x == y elementwise."},
  {"not_equal", "NotEqual", "x y", "x != y elementwise."},
  {"less", "Less", "x y", "x < y elementwise."},
  {"less_equal", "LessEqual", "x y", "x <= y elementwise."},
  {"greater", "Greater", "x y", "x > y elementwise."},
  {"greater_equal", "GreaterEqual", "x y", "x >= y elementwise."},
  {"logical_and", "LogicalAnd", "x y", "x and y elementwise."},
  {"logical_or", "LogicalOr", "x y", "x or y elementwise."},
  {"logical_not", "LogicalNot", "x", "not x elementwise."},
  {"cast", "Cast", "x |dtype:DstT", "x converted to dtype."},
  {"identity", "Identity", "input", "The same tensor (a new node)."},
  {"stop_gradient", "StopGradient", "input", "The same tensor; gradients stop here."},
  {"identity_n", "IdentityN", "input", "The same tensors, each of its own type."},
  {"reshape", "Reshape", "tensor shape", "The same values in a new shape."},
  {"transpose", "Transpose", "a:x |perm", "Permute dimensions (reversed when perm is None)."},
  {"expand_dims", "ExpandDims", "input |axis:dim dim", "Insert a dimension of size 1."},
  {"squeeze", "Squeeze", "input |axis:squeeze_dims squeeze_dims", "Remove dimensions of size 1."},
  {"concat", "ConcatV2", "values axis", "Join tensors along an axis."},
  {"shape", "Shape", "input |out_type", "The shape of a tensor, as a tensor."},
  {"size", "Size", "input |out_type", "The number of elements, as a tensor."},
  {"rank", "Rank", "input", "The number of dimensions, as a tensor."},
  {"fill", "Fill", "dims value", "A tensor of shape dims filled with value."},
  {"tile", "Tile", "input multiples", "Repeat a tensor."},
  {"broadcast_to", "BroadcastTo", "input shape", "The input broadcast to shape (numpy's rules)."},
  {"dynamic_stitch", "DynamicStitch", "indices data", "Interleave data by indices."},
  {"_pad", "Pad", "tensor:input paddings", "Pad with zeros (tf.pad builds on it)."},
  {"_gather", "Gather", "params indices", "Rows of params picked by indices (tf.gather builds on it)."},
  {"one_hot", "OneHot", "indices depth |on_value off_value axis dtype:T", "One-hot encoding."},
  {"slice", "Slice", "input_:input begin size", "A slice: begin and size per dimension."},
  {"stack", "Pack", "values |axis", "Stack tensors along a new axis."},
  {"unstack", "Unpack", "value |num axis", "Split a tensor along an axis into a list."},
  {"add_n", "AddN", "inputs", "Sum of a list of tensors."},
  {"reduce_sum", "Sum", "input_tensor:input |axis:reduction_indices keepdims:keep_dims keep_dims reduction_indices", "Sum over axes."},
  {"reduce_mean", "Mean", "input_tensor:input |axis:reduction_indices keepdims:keep_dims keep_dims reduction_indices", "Mean over axes."},
  {"reduce_max", "Max", "input_tensor:input |axis:reduction_indices keepdims:keep_dims keep_dims reduction_indices", "Maximum over axes."},
  {"reduce_min", "Min", "input_tensor:input |axis:reduction_indices keepdims:keep_dims keep_dims reduction_indices", "Minimum over axes."},
  {"reduce_prod", "Prod", "input_tensor:input |axis:reduction_indices keepdims:keep_dims keep_dims reduction_indices", "Product over axes."},
  {"argmax", "ArgMax", "input |axis:dimension dimension output_type", "Index of the largest value along an axis."},
  {"argmin", "ArgMin", "input |axis:dimension dimension output_type", "Index of the smallest value along an axis."},
  {"check_numerics", "CheckNumerics", "tensor message", "Fail the step if tensor has NaN or Inf."},
  {"nn.relu", "Relu", "features", "max(features, 0)."},
  {"nn.relu6", "Relu6", "features", "min(max(features, 0), 6)."},
  {"nn.elu", "Elu", "features", "Exponential linear unit."},
  {"nn.softplus", "Softplus", "features", "log(exp(features) + 1)."},
  {"nn.sigmoid", "Sigmoid", "x", "1 / (1 + exp(-x))."},
  {"nn.tanh", "Tanh", "x", "Hyperbolic tangent."},
  {"nn.softmax", "Softmax", "logits", "Softmax over the last axis."},
  {"nn.log_softmax", "LogSoftmax", "logits", "Log of the softmax over the last axis."},
  {"nn.bias_add", "BiasAdd", "value bias |data_format", "Add a bias vector to the last axis."},
  {"nn.l2_loss", "L2Loss", "t", "sum(t ** 2) / 2."},
  {"nn.conv2d", "Conv2D", "input filter strides padding |use_cudnn_on_gpu data_format dilations", "2-D convolution (NHWC)."},
  {"nn.conv2d_backprop_input", "Conv2DBackpropInput",
   "input_sizes filter out_backprop strides padding |use_cudnn_on_gpu data_format dilations",
   "Conv2D's gradient for its input (of shape input_sizes)."},
  {"nn.conv2d_backprop_filter", "Conv2DBackpropFilter",
   "input filter_sizes out_backprop strides padding |use_cudnn_on_gpu data_format dilations",
   "Conv2D's gradient for its filter (of shape filter_sizes)."},
  {"nn.max_pool", "MaxPool", "value:input ksize strides padding |data_format", "Max pooling (NHWC)."},
  {"nn.avg_pool", "AvgPool", "value ksize strides padding |data_format", "Average pooling (NHWC)."},
  {"random_shuffle", "RandomShuffle", "value |seed seed2", "Shuffle along the first axis."},
  {NULL},
};

static const tf_opfn *find_row(const tf_opfn *r, const char *py) {
  for (; r->py; r++)
    if (!strcmp(r->py, py)) return r;
  return NULL;
}

/* Reductions with no axis reduce every axis: TF1 builds range(rank). */
static int fill_all_axes(bound *b, const char *op, sh_obj **made) {
  *made = NULL;
  if (strcmp(op, "Sum") && strcmp(op, "Mean") && strcmp(op, "Max") && strcmp(op, "Min") && strcmp(op, "Prod"))
    return 0;
  for (int i = 0; i < b->n; i++)
    if (!strcmp(b->op[i], "reduction_indices") && b->val[i] && b->val[i] != SH_NONE) return 0;
  sh_obj *x = b->val[0];
  sh_obj *t = tf_convert(x, RT_INVALID);
  if (!t) return -1;
  rt_node *node = tf_tensor_node((tf_tensor *)t);
  int rank = node->out_shapes[((tf_tensor *)t)->index].ndims;
  sh_obj *axes;
  if (rank < 0) {   /* unknown rank: range(rank(x)), computed in the step, as TF builds it */
    sh_obj *tfm = sh_import("tensorflow");
    sh_obj *rk = tfm ? sh_call_method(tfm, "rank", 1, &t, NULL) : NULL;
    axes = rk ? sh_call_method(tfm, "range", 1, &rk, NULL) : NULL;
    sh_decref(rk);
    sh_decref(tfm);
    if (!axes) {
      sh_decref(t);
      return -1;
    }
  } else {
    axes = sh_list_new(0);
    for (int i = 0; i < rank; i++) sh_list_append_steal(axes, sh_int(i));
  }
  b->val[0] = t;
  *made = sh_tuple_of(2, t, axes);
  for (int i = 0; i < b->n; i++)
    if (!strcmp(b->op[i], "reduction_indices")) {
      b->val[i] = axes;
      break;
    }
  return 0;
}

static sh_obj *generic(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  const tf_opfn *row = find_row(rows, sh_str_cstr(self));
  bound b;
  sh_obj *name, *made = NULL;
  if (parse_params(row->params, &b) < 0) return sh_raise(sh_RuntimeError, "bad row for %s", row->py);
  if (bind_args(row->py, &b, argc, argv, kw, &name) < 0) return NULL;
  if (fill_all_axes(&b, row->op, &made) < 0) return NULL;
  /* transpose(a) without perm reverses the axes */
  if (!strcmp(row->op, "Transpose") && (!b.val[1] || b.val[1] == SH_NONE)) {
    sh_obj *t = tf_convert(b.val[0], RT_INVALID);
    if (!t) return NULL;
    int rank = tf_tensor_node((tf_tensor *)t)->out_shapes[((tf_tensor *)t)->index].ndims;
    sh_obj *perm = sh_list_new(0);
    for (int i = rank - 1; i >= 0; i--) sh_list_append_steal(perm, sh_int(i));
    b.val[0] = t;
    b.val[1] = perm;
    made = sh_tuple_of(2, t, perm);
  }
  sh_obj *r = build(row->py, row->op, &b, name, false);
  sh_decref(made);
  return r;
}

/* ---- functions TF1 builds from several ops, and the special ones ------------------- */

static sh_obj *f_constant(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *value, *dtype = NULL, *shape = NULL, *name = NULL, *verify = NULL;
  if (sh_parse_args("constant", argc, argv, kw, "value |dtype shape name verify_shape", &value, &dtype,
                    &shape, &name, &verify) < 0)
    return NULL;
  rt_dtype t = np_dtype_of(dtype);
  if (dtype && dtype != SH_NONE && t == RT_INVALID) return sh_raise(sh_TypeError, "Cannot convert %s to a dtype", sh_type_name(dtype));
  if (tf_is_tensorlike(value)) return sh_raise(sh_TypeError, "constant() takes a Python value or array, not a Tensor");
  if (t != RT_INVALID && rt_dtype_is_int(t) && sh_is_float(value)) {
    char buf[64];
    sh_format_double_repr(sh_float_value(value), buf, sizeof buf);
    return sh_raise(sh_TypeError, "Expected %s, got %s of type 'float' instead.", rt_dtype_name(t), buf);
  }
  rt_tensor *x = np_to_tensor(value, t, false);
  if (!x) return NULL;
  if (shape && shape != SH_NONE) {
    rt_shape s;
    if (tf_shape_from_obj(shape, &s) < 0 || !rt_shape_fully_known(&s)) {
      rt_tensor_unref(x);
      return sh_err_occurred() ? NULL : sh_raise(sh_ValueError, "constant(): shape must be fully defined");
    }
    int64_t n = rt_shape_numel(&s), have = rt_tensor_numel(x);
    if (have == 1 && n != 1) {   /* a scalar fills the shape */
      rt_tensor *f = rt_tensor_new(x->dtype, &s);
      size_t es = rt_dtype_size(x->dtype);
      for (int64_t i = 0; f && x->dtype != RT_STRING && i < n; i++)
        memcpy((char *)rt_tensor_data(f) + (size_t)i * es, rt_tensor_data(x), es);
      rt_tensor_unref(x);
      x = f;
    } else if (have == n) {
      x->shape = s;
    } else {
      char a[128], bb[128];
      rt_tensor_unref(x);
      return sh_raise(sh_TypeError, "Expected Tensor's shape: %s, got %s.", rt_shape_str(&s, a, sizeof a),
                      rt_shape_str(&(rt_shape){.ndims = 1, .dims = {have}}, bb, sizeof bb));
    }
  }
  sh_obj *r = tf_make_const(x, name);
  rt_tensor_unref(x);
  return r;
}

static sh_obj *f_placeholder(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *dtype, *shape = NULL, *name = NULL;
  if (sh_parse_args("placeholder", argc, argv, kw, "dtype |shape name", &dtype, &shape, &name) < 0) return NULL;
  rt_dtype t = np_dtype_of(dtype);
  if (t == RT_INVALID) return sh_raise(sh_TypeError, "placeholder(): dtype must be a dtype, not %s", sh_type_name(dtype));
  rt_shape s;
  if (tf_shape_from_obj(shape, &s) < 0) return NULL;
  rt_node *n = tf_node_begin("Placeholder", name);
  rt_node_set_type(n, "dtype", t);
  rt_node_set_shape(n, "shape", &s);
  return tf_node_finish_tensor(n);
}

static sh_obj *f_placeholder_with_default(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *input, *shape, *name = NULL;
  if (sh_parse_args("placeholder_with_default", argc, argv, kw, "input shape |name", &input, &shape, &name) < 0)
    return NULL;
  /* TF's op: the default passed on unless fed (the partitioner turns a fed node into a
   * Placeholder of the fragment); its shape attr, not the default's, is the static shape
   * that feeds are checked against */
  rt_shape s = rt_shape_unknown();
  if (shape && shape != SH_NONE && tf_shape_from_obj(shape, &s) < 0) return NULL;
  rt_node *n = tf_node_begin_c("PlaceholderWithDefault", name && sh_is_str(name) ? sh_str_cstr(name) : "PlaceholderWithDefault");
  if (tf_node_input(n, input, RT_INVALID) < 0) return NULL;
  rt_node_set_shape(n, "shape", &s);
  return tf_node_finish_tensor(n);
}

static rt_tensor *uint8_scalar(double v) {
  rt_shape s = rt_shape_scalar();
  rt_tensor *t = rt_tensor_new(RT_UINT8, &s);
  if (t) *(uint8_t *)rt_tensor_data(t) = (uint8_t)v;
  return t;
}

static sh_obj *filled(const char *fname, int argc, sh_obj **argv, sh_obj *kw, double v) {
  sh_obj *shape, *dtype = NULL, *name = NULL;
  if (sh_parse_args(fname, argc, argv, kw, "shape |dtype name", &shape, &dtype, &name) < 0) return NULL;
  rt_dtype t = dtype && dtype != SH_NONE ? np_dtype_of(dtype) : RT_FLOAT;
  rt_shape s;
  if (tf_is_tensorlike(shape)) {   /* a dynamic shape: Fill */
    rt_tensor *val = t == RT_FLOAT ? rt_tensor_scalar_f32((float)v) : t == RT_DOUBLE ? rt_tensor_scalar_f64(v)
                   : t == RT_INT32 ? rt_tensor_scalar_i32((int32_t)v) : t == RT_INT64 ? rt_tensor_scalar_i64((int64_t)v)
                   : t == RT_UINT8 ? uint8_scalar(v) : rt_tensor_scalar_bool(v != 0);
    sh_obj *vt = tf_make_const(val, NULL);
    rt_tensor_unref(val);
    if (!vt) return NULL;
    rt_node *n = tf_node_begin(fname[0] == 'z' ? "zeros" : "ones", name);
    n->op = (free(n->op), xstrdup("Fill"));
    if (tf_node_input(n, shape, RT_INT32) < 0 || tf_node_input(n, vt, t) < 0) { sh_decref(vt); return NULL; }
    sh_decref(vt);
    return tf_node_finish_tensor(n);
  }
  if (tf_shape_from_obj(shape, &s) < 0) return NULL;
  if (!rt_shape_fully_known(&s)) return sh_raise(sh_ValueError, "%s(): shape must be fully defined", fname);
  if (rt_shape_numel(&s) >= 1000) {   /* TF1: a constant only when small, else Fill */
    sh_obj *dims = sh_list_new(0);
    for (int i = 0; i < s.ndims; i++) sh_list_append_steal(dims, sh_int(s.dims[i]));
    sh_obj *r = NULL;
    rt_tensor *val = t == RT_FLOAT ? rt_tensor_scalar_f32((float)v) : t == RT_DOUBLE ? rt_tensor_scalar_f64(v)
                   : t == RT_INT32 ? rt_tensor_scalar_i32((int32_t)v) : t == RT_INT64 ? rt_tensor_scalar_i64((int64_t)v)
                   : t == RT_UINT8 ? uint8_scalar(v) : rt_tensor_scalar_bool(v != 0);
    sh_obj *vt = tf_make_const(val, NULL);
    rt_tensor_unref(val);
    rt_node *n = vt ? tf_node_begin_c("Fill", name && sh_is_str(name) ? sh_str_cstr(name) : fname) : NULL;
    if (n && tf_node_input(n, dims, RT_INT32) == 0 && tf_node_input(n, vt, t) == 0) r = tf_node_finish_tensor(n);
    sh_decref(vt);
    sh_decref(dims);
    return r;
  }
  rt_tensor *x = rt_tensor_new(t, &s);
  if (!x) return sh_raise(sh_ValueError, "%s(): tensor too large", fname);
  for (int64_t i = 0; v != 0 && i < rt_tensor_numel(x); i++) {
    void *p = rt_tensor_data(x);
    switch (t) {
    case RT_FLOAT: ((float *)p)[i] = (float)v; break;
    case RT_DOUBLE: ((double *)p)[i] = v; break;
    case RT_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
    case RT_INT64: ((int64_t *)p)[i] = (int64_t)v; break;
    case RT_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case RT_BOOL: ((bool *)p)[i] = true; break;
    default: break;
    }
  }
  sh_obj *nm = name && name != SH_NONE ? sh_incref(name) : sh_str(fname);
  sh_obj *r = tf_make_const(x, nm);
  sh_decref(nm);
  rt_tensor_unref(x);
  return r;
}

static sh_obj *f_zeros(sh_obj *s, int c, sh_obj **v, sh_obj *k) { return filled("zeros", c, v, k, 0); }
static sh_obj *f_ones(sh_obj *s, int c, sh_obj **v, sh_obj *k) { return filled("ones", c, v, k, 1); }

static sh_obj *like(const char *op, const char *fname, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *t, *dtype = NULL, *name = NULL, *opt = NULL;
  if (sh_parse_args(fname, argc, argv, kw, "tensor |dtype name optimize", &t, &dtype, &name, &opt) < 0) return NULL;
  rt_node *n = tf_node_begin(op, name);
  if (tf_node_input(n, t, RT_INVALID) < 0) return NULL;
  sh_obj *r = tf_node_finish_tensor(n);
  if (r && dtype && dtype != SH_NONE && np_dtype_of(dtype) != tf_dtype_hint(r)) {
    rt_node *c = tf_node_begin_c("Cast", "Cast");
    rt_node_set_type(c, "DstT", np_dtype_of(dtype));
    if (tf_node_input(c, r, RT_INVALID) < 0) { sh_decref(r); return NULL; }
    sh_decref(r);
    r = tf_node_finish_tensor(c);
  }
  return r;
}
static sh_obj *f_zeros_like(sh_obj *s, int c, sh_obj **v, sh_obj *k) { return like("ZerosLike", "zeros_like", c, v, k); }
static sh_obj *f_ones_like(sh_obj *s, int c, sh_obj **v, sh_obj *k) { return like("OnesLike", "ones_like", c, v, k); }

static sh_obj *f_no_op(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *name = NULL;
  if (sh_parse_args("no_op", argc, argv, kw, "|name", &name) < 0) return NULL;
  return tf_node_finish(tf_node_begin("NoOp", name));
}

/* Names of the ops behind a list of ops / tensors / variables. */
static int add_controls_from(rt_node *n, sh_obj *items) {
  sh_obj *it = sh_iter(items);
  if (!it) return -1;
  for (sh_obj *x; (x = sh_next(it));) {
    sh_obj *o = tf_variable_check(x) ? tf_variable_control(x) : x;
    if (Py_TYPE(o) == (PyTypeObject *)&tf_op_type) rt_node_add_control(n, tf_op_node((tf_op *)o)->name);
    else if (Py_TYPE(o) == (PyTypeObject *)&tf_tensor_type) rt_node_add_control(n, tf_tensor_node((tf_tensor *)o)->name);
    else if (Py_TYPE(o) == (PyTypeObject *)&sh_list_type || Py_TYPE(o) == (PyTypeObject *)&sh_tuple_type) {
      if (add_controls_from(n, o) < 0) { sh_decref(x); sh_decref(it); return -1; }
    } else if (o != SH_NONE) {
      sh_raise(sh_TypeError, "Expected tf.group() expected Tensor arguments not '%s' with type '%s'",
               "...", sh_type_name(o));
      sh_decref(x);
      sh_decref(it);
      return -1;
    }
    sh_decref(x);
  }
  sh_decref(it);
  return sh_err_occurred() ? -1 : 0;
}

/* TF1's group() makes its NoOp on its inputs' device when they all share one (an
 * optimizer's update group then sits on the ps with the variables). */
static void same_device_group(rt_node *n) {
  const rt_graph *g = tf_rt(tf_default_graph());
  const char *dev = NULL;
  for (int i = 0; i < n->n_inputs; i++) {
    const rt_node *in = rt_graph_find(g, n->inputs[i] + (n->inputs[i][0] == '^'));
    if (!in || !in->device || !*in->device || (dev && strcmp(dev, in->device))) return;
    dev = in->device;
  }
  if (dev) rt_node_set_device(n, dev);
}

static sh_obj *f_group(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *name = kw ? sh_dict_get_str(kw, "name") : NULL;
  sh_obj *k, *v;
  for (int64_t pos = 0; kw && sh_dict_next(kw, &pos, &k, &v);)
    if (strcmp(sh_str_cstr(k), "name")) return sh_raise(sh_TypeError, "group() got an unexpected keyword argument '%s'", sh_str_cstr(k));
  rt_node *n = tf_node_begin("NoOp", name ? name : NULL);
  if (!name) {   /* TF1 names it "group_deps" */
    rt_node_free(n);
    n = tf_node_begin_c("NoOp", "group_deps");
  }
  sh_obj *args = sh_tuple_new(argc);
  for (int i = 0; i < argc; i++) SH_TUPLE_ITEMS(args)[i] = sh_incref(argv[i]);
  int rc = add_controls_from(n, args);
  sh_decref(args);
  if (rc < 0) {
    rt_node_free(n);
    return NULL;
  }
  sh_obj *op = tf_node_finish(n);
  if (op) same_device_group(tf_op_node((tf_op *)op));
  return op;
}

/* Random ops: seeds as TF1's get_seed. */
static void set_seeds(rt_node *n, sh_obj *seed) {
  int64_t gs = tf_graph_seed(tf_default_graph()), os = -1;
  if (seed && seed != SH_NONE) sh_as_int(seed, &os);
  if (gs >= 0 && os < 0) os = tf_rt(tf_default_graph())->n_nodes;
  if (gs < 0 && os >= 0) gs = 87654321;   /* TF1's DEFAULT_GRAPH_SEED */
  rt_node_set_int(n, "seed", gs < 0 ? 0 : gs);
  rt_node_set_int(n, "seed2", os < 0 ? 0 : os);
}

/* TF1's composite ops build their pieces inside a name scope ("random_normal/mul") and
 * name the result after the scope itself ("random_normal"): op_scope_open enters the
 * unique scope for name (or dflt), op_scope_close leaves it; s->exact names the result. */
typedef struct {
  tf_graph *g;
  char saved[512];
  char exact[600];   /* "outer/random_normal/" : tf_node_begin_c names that node exactly */
} op_scope;

static void op_scope_open(op_scope *s, sh_obj *name, const char *dflt) {
  s->g = tf_default_graph();
  const char *n = name && name != SH_NONE && sh_is_str(name) ? sh_str_cstr(name) : dflt;
  sh_obj *u = tf_unique_scope(s->g, n);
  snprintf(s->exact, sizeof s->exact, "%s", sh_str_cstr(u));
  sh_decref(u);
  snprintf(s->saved, sizeof s->saved, "%s", tf_graph_scope(s->g));
  snprintf(tf_graph_scope(s->g), TF_SCOPE_MAX, "%s", s->exact);
}

static void op_scope_close(op_scope *s) { snprintf(tf_graph_scope(s->g), TF_SCOPE_MAX, "%s", s->saved); }

/* tf.tuple(tensors): each output waits for all of them, named as TF's: in scope tuple/ (or
 * name/), a NoOp group_deps on the tensors' ops and an Identity control_dependency[_k] each. */
static sh_obj *f_tuple(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *tensors, *name = NULL, *control = NULL;
  if (sh_parse_args("tuple", argc, argv, kw, "tensors |name control_inputs", &tensors, &name, &control) < 0) return NULL;
  sh_obj *seq = sh_sequence_to_list(tensors);
  if (!seq) return NULL;
  op_scope sc;
  op_scope_open(&sc, name, "tuple");
  sh_obj *out = NULL, *gate = NULL;
  rt_node *g = tf_node_begin_c("NoOp", "group_deps");
  if (add_controls_from(g, seq) < 0 || (control && control != SH_NONE && add_controls_from(g, control) < 0)) {
    rt_node_free(g);
    goto done;
  }
  if (!(gate = tf_node_finish(g))) goto done;
  out = sh_list_new(0);
  for (int64_t i = 0; i < SH_LIST_N(seq); i++) {
    sh_obj *t = SH_LIST_ITEMS(seq)[i];
    if (t == SH_NONE) { sh_list_append(out, t); continue; }
    rt_node *n = tf_node_begin_c("Identity", "control_dependency");
    if (tf_node_input(n, t, RT_INVALID) < 0) { sh_decref(out); out = NULL; break; }
    rt_node_add_control(n, tf_op_node((tf_op *)gate)->name);
    sh_obj *r = tf_node_finish_tensor(n);
    if (!r) { sh_decref(out); out = NULL; break; }
    sh_list_append_steal(out, r);
  }
done:
  op_scope_close(&sc);
  sh_decref(gate);
  sh_decref(seq);
  return out;
}

/* x as a tensor of dtype hint; a Python value becomes a Const called name. */
static sh_obj *named_tensor(sh_obj *x, rt_dtype hint, const char *name) {
  if (tf_is_tensorlike(x)) return tf_convert(x, hint);
  rt_tensor *t = np_to_tensor(x, hint, false);
  if (!t) return NULL;
  sh_obj *n = sh_str(name);
  sh_obj *r = tf_make_const(t, n);
  sh_decref(n);
  rt_tensor_unref(t);
  return r;
}

/* The random op itself (inside the scope), on a shape tensor. */
static sh_obj *random_op(const char *op, sh_obj *shape, rt_dtype t, sh_obj *seed) {
  rt_node *n = tf_node_begin_c(op, op);
  rt_node_set_type(n, "dtype", t);
  set_seeds(n, seed);
  if (tf_node_input(n, shape, RT_INT32) < 0) return NULL;
  return tf_node_finish_tensor(n);
}

/* random_normal / truncated_normal: scope/{shape,mean,stddev,OP,mul}, then scope = mul + mean */
static sh_obj *normal_fn(const char *fname, const char *op, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *shape, *mean = NULL, *stddev = NULL, *dtype = NULL, *seed = NULL, *name = NULL;
  if (sh_parse_args(fname, argc, argv, kw, "shape |mean stddev dtype seed name", &shape, &mean, &stddev, &dtype,
                    &seed, &name) < 0)
    return NULL;
  rt_dtype t = dtype && dtype != SH_NONE ? np_dtype_of(dtype) : RT_FLOAT;
  op_scope sc;
  op_scope_open(&sc, name, fname);
  sh_obj *zero = sh_float(0), *one = sh_float(1);
  sh_obj *sh = named_tensor(shape, RT_INT32, "shape");
  sh_obj *m = sh ? named_tensor(mean && mean != SH_NONE ? mean : zero, t, "mean") : NULL;
  sh_obj *sd = m ? named_tensor(stddev && stddev != SH_NONE ? stddev : one, t, "stddev") : NULL;
  sh_obj *z = sd ? random_op(op, sh, t, seed) : NULL;
  sh_obj *mul = z ? tf_binary_op("Mul", "mul", z, sd) : NULL;
  sh_obj *r = mul ? tf_binary_op("Add", sc.exact, mul, m) : NULL;
  op_scope_close(&sc);
  sh_decref(zero);
  sh_decref(one);
  sh_decref(sh);
  sh_decref(m);
  sh_decref(sd);
  sh_decref(z);
  sh_decref(mul);
  return r;
}

static sh_obj *f_random_normal(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  return normal_fn("random_normal", "RandomStandardNormal", argc, argv, kw);
}

static sh_obj *f_truncated_normal(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  return normal_fn("truncated_normal", "TruncatedNormal", argc, argv, kw);
}

/* random_uniform: scope/{shape,min,max}, then RandomUniformInt named scope (integers) or
 * scope/{RandomUniform,sub,mul} and scope = mul + min (TF 1.15's graph). */
static sh_obj *f_random_uniform(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *shape, *lo = NULL, *hi = NULL, *dtype = NULL, *seed = NULL, *name = NULL;
  if (sh_parse_args("random_uniform", argc, argv, kw, "shape |minval maxval dtype seed name", &shape, &lo, &hi,
                    &dtype, &seed, &name) < 0)
    return NULL;
  rt_dtype t = dtype && dtype != SH_NONE ? np_dtype_of(dtype) : RT_FLOAT;
  bool isint = rt_dtype_is_int(t);
  if (isint && (!hi || hi == SH_NONE))
    return sh_raise(sh_ValueError, "Must specify maxval for integer dtype %s", rt_dtype_name(t));
  op_scope sc;
  op_scope_open(&sc, name, "random_uniform");
  sh_obj *zero = isint ? sh_int(0) : sh_float(0), *one = sh_float(1);
  sh_obj *sh = named_tensor(shape, RT_INT32, "shape");
  sh_obj *mn = sh ? named_tensor(lo && lo != SH_NONE ? lo : zero, t, "min") : NULL;
  sh_obj *mx = mn ? named_tensor(hi && hi != SH_NONE ? hi : one, t, "max") : NULL;
  sh_obj *r = NULL;
  if (mx && isint) {
    rt_node *n = tf_node_begin_c("RandomUniformInt", sc.exact);
    set_seeds(n, seed);
    if (tf_node_input(n, sh, RT_INT32) >= 0 && tf_node_input(n, mn, t) >= 0 && tf_node_input(n, mx, t) >= 0)
      r = tf_node_finish_tensor(n);
  } else if (mx) {
    sh_obj *u = random_op("RandomUniform", sh, t, seed);
    sh_obj *range = u ? tf_binary_op("Sub", "sub", mx, mn) : NULL;
    sh_obj *mul = range ? tf_binary_op("Mul", "mul", u, range) : NULL;
    r = mul ? tf_binary_op("Add", sc.exact, mul, mn) : NULL;
    sh_decref(u);
    sh_decref(range);
    sh_decref(mul);
  }
  op_scope_close(&sc);
  sh_decref(zero);
  sh_decref(one);
  sh_decref(sh);
  sh_decref(mn);
  sh_decref(mx);
  return r;
}

static sh_obj *f_clip_by_value(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *t, *lo, *hi, *name = NULL;
  if (sh_parse_args("clip_by_value", argc, argv, kw, "t clip_value_min clip_value_max |name", &t, &lo, &hi, &name) < 0)
    return NULL;
  sh_obj *m = tf_binary_op("Minimum", "clip_by_value/Minimum", t, hi);
  if (!m) return NULL;
  rt_node *n = tf_node_begin_c("Maximum", "clip_by_value");
  if (tf_node_input(n, m, RT_INVALID) < 0 || tf_node_input(n, lo, tf_dtype_hint(m)) < 0) {
    sh_decref(m);
    return NULL;
  }
  sh_decref(m);
  return tf_node_finish_tensor(n);
}

static sh_obj *f_xw_plus_b(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *x, *w, *b, *name = NULL;
  if (sh_parse_args("xw_plus_b", argc, argv, kw, "x weights biases |name", &x, &w, &b, &name) < 0) return NULL;
  sh_obj *mm = tf_binary_op("MatMul", "xw_plus_b/MatMul", x, w);
  if (!mm) return NULL;
  rt_node *n = tf_node_begin("BiasAdd", name ? name : NULL);
  if (tf_node_input(n, mm, RT_INVALID) < 0 || tf_node_input(n, b, tf_dtype_hint(mm)) < 0) {
    sh_decref(mm);
    return NULL;
  }
  sh_decref(mm);
  return tf_node_finish_tensor(n);
}

/* dropout: x * floor(keep_prob + uniform) / keep_prob */
static sh_obj *f_dropout(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *x, *keep = NULL, *noise = NULL, *seed = NULL, *name = NULL, *rate = NULL;
  if (sh_parse_args("dropout", argc, argv, kw, "x |keep_prob noise_shape seed name rate", &x, &keep, &noise, &seed,
                    &name, &rate) < 0)
    return NULL;
  sh_obj *xt = tf_convert(x, RT_INVALID);
  if (!xt) return NULL;
  rt_dtype t = tf_dtype_hint(xt);
  sh_obj *kp = NULL;
  if (keep && keep != SH_NONE) kp = tf_convert(keep, t);
  else if (rate && rate != SH_NONE) {
    sh_obj *one = sh_float(1);
    kp = tf_binary_op("Sub", "sub", one, rate);
    sh_decref(one);
  } else {
    sh_decref(xt);
    return sh_raise(sh_ValueError, "dropout needs keep_prob (or rate)");
  }
  if (!kp) { sh_decref(xt); return NULL; }
  rt_node *sh = tf_node_begin_c("Shape", "dropout/Shape");
  if (tf_node_input(sh, noise && noise != SH_NONE ? noise : xt, RT_INVALID) < 0) { sh_decref(xt); sh_decref(kp); return NULL; }
  sh_obj *shape = tf_node_finish_tensor(sh);
  sh_obj *u = shape ? random_op("RandomUniform", shape, t, seed) : NULL;
  sh_obj *sum = u ? tf_binary_op("Add", "dropout/add", kp, u) : NULL;
  sh_obj *mask = sum ? tf_unary_op("Floor", "dropout/Floor", sum) : NULL;
  sh_obj *scaled = mask ? tf_binary_op("RealDiv", "dropout/div", xt, kp) : NULL;
  rt_node *n = scaled ? tf_node_begin("Mul", name ? name : NULL) : NULL;
  sh_obj *r = NULL;
  if (n && tf_node_input(n, scaled, RT_INVALID) == 0 && tf_node_input(n, mask, RT_INVALID) == 0)
    r = tf_node_finish_tensor(n);
  sh_decref(shape);
  sh_decref(u);
  sh_decref(sum);
  sh_decref(mask);
  sh_decref(scaled);
  sh_decref(kp);
  sh_decref(xt);
  return r;
}

static sh_obj *xent(const char *fname, const char *op, int argc, sh_obj **argv, sh_obj *kw, bool sparse) {
  sh_obj *sentinel = NULL, *labels = NULL, *logits = NULL, *name = NULL, *dim = NULL;
  if (sh_parse_args(fname, argc, argv, kw, "|_sentinel labels logits dim name axis", &sentinel, &labels, &logits,
                    &dim, &name, &dim) < 0)
    return NULL;
  if (sentinel) return sh_raise(sh_ValueError, "Only call `%s` with named arguments (labels=..., logits=..., ...)", fname);
  if (!labels || !logits) return sh_raise(sh_ValueError, "Both labels and logits must be provided.");
  rt_node *n = tf_node_begin(op, name ? name : NULL);
  if (tf_node_input(n, logits, RT_INVALID) < 0) return NULL;
  rt_dtype lt = rt_node_type(n, "T", RT_INVALID);
  (void)lt;
  if (tf_node_input(n, labels, sparse ? RT_INT32 : RT_INVALID) < 0) return NULL;
  return tf_node_finish_tensor(n);   /* output 0: the loss per example */
}

static sh_obj *f_softmax_xent(sh_obj *s, int c, sh_obj **v, sh_obj *k) {
  return xent("softmax_cross_entropy_with_logits", "SoftmaxCrossEntropyWithLogits", c, v, k, false);
}
static sh_obj *f_sparse_softmax_xent(sh_obj *s, int c, sh_obj **v, sh_obj *k) {
  return xent("sparse_softmax_cross_entropy_with_logits", "SparseSoftmaxCrossEntropyWithLogits", c, v, k, true);
}

static sh_obj *f_range(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *start, *limit = NULL, *delta = NULL, *dtype = NULL, *name = NULL;
  if (sh_parse_args("range", argc, argv, kw, "start |limit delta dtype name", &start, &limit, &delta, &dtype, &name) < 0)
    return NULL;
  sh_obj *zero = sh_int(0), *one = sh_int(1);
  if (!limit || limit == SH_NONE) { limit = start; start = zero; }
  rt_dtype t = dtype && dtype != SH_NONE ? np_dtype_of(dtype) : RT_INVALID;
  if (t == RT_INVALID) {
    t = RT_INT32;
    sh_obj *all[3] = {start, limit, delta ? delta : one};
    for (int i = 0; i < 3; i++)
      if (sh_is_float(all[i])) t = RT_FLOAT;
      else if (tf_is_tensorlike(all[i])) t = tf_dtype_hint(all[i]);
  }
  rt_node *n = tf_node_begin("Range", name ? name : NULL);
  sh_obj *r = NULL;
  if (tf_node_input(n, start, t) == 0 && tf_node_input(n, limit, t) == 0 &&
      tf_node_input(n, delta && delta != SH_NONE ? delta : one, t) == 0)
    r = tf_node_finish_tensor(n);
  sh_decref(zero);
  sh_decref(one);
  return r;
}

static sh_obj *f_convert_to_tensor(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *value, *dtype = NULL, *name = NULL, *pref = NULL;
  if (sh_parse_args("convert_to_tensor", argc, argv, kw, "value |dtype name preferred_dtype", &value, &dtype,
                    &name, &pref) < 0)
    return NULL;
  return tf_convert(value, np_dtype_of(dtype));
}

static sh_obj *f_split(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *value, *num = NULL, *axis = NULL, *name = NULL, *numo = NULL;
  if (sh_parse_args("split", argc, argv, kw, "value num_or_size_splits |axis num name", &value, &num, &axis, &numo,
                    &name) < 0)
    return NULL;
  int64_t k;
  if (sh_as_int(num, &k) < 0) return NULL;
  sh_obj *zero = sh_int(0);
  rt_node *n = tf_node_begin("Split", name ? name : NULL);
  rt_node_set_int(n, "num_split", k);
  if (tf_node_input(n, axis ? axis : zero, RT_INT32) < 0 || tf_node_input(n, value, RT_INVALID) < 0) {
    sh_decref(zero);
    return NULL;
  }
  sh_decref(zero);
  sh_obj *op = tf_node_finish(n);
  if (!op) return NULL;
  sh_obj *l = sh_list_new(0);
  for (int64_t i = 0; i < k; i++) sh_list_append_steal(l, tf_tensor_new(((tf_op *)op)->graph, ((tf_op *)op)->id, (int)i));
  sh_decref(op);
  return l;
}

/* tf.gradients(ys, xs, grad_ys=None, name='gradients') */
/* handles: a resource variable stands for its handle (the xs of tf.gradients, as TF). */
static sh_obj *names_of(sh_obj *seq, int *n, char ***out, bool allow_none, bool handles) {
  sh_obj *l = tf_is_tensorlike(seq) ? sh_tuple_of(1, sh_incref(seq)) : sh_sequence_to_tuple(seq);
  if (!l) return NULL;
  *n = (int)SH_TUPLE_N(l);
  *out = xcalloc((size_t)*n + 1, sizeof **out);
  for (int i = 0; i < *n; i++) {
    sh_obj *x = SH_TUPLE_ITEMS(l)[i];
    if (allow_none && x == SH_NONE) continue;
    sh_obj *t = handles && tf_variable_is_resource(x) ? sh_incref(tf_variable_ref(x))
                : tf_variable_check(x) ? sh_incref(tf_variable_value(x)) : tf_convert(x, RT_INVALID);
    if (!t) { sh_decref(l); return NULL; }
    char buf[400];
    (*out)[i] = xstrdup(tf_tensor_name((tf_tensor *)t, buf, sizeof buf));
    sh_decref(t);
  }
  return l;
}

static void free_names(char **v, int n) {
  for (int i = 0; i < n; i++) free(v[i]);
  free(v);
}

/* The ref output of a Variable (gradients of variables flow to their read snapshots). */
sh_obj *tf_gradients_impl(sh_obj *ys, sh_obj *xs, sh_obj *grad_ys, const char *scope_name, bool gate) {
  int ny = 0, nx = 0, ng = 0;
  char **yn = NULL, **xn = NULL, **gn = NULL;
  sh_obj *hold_y = names_of(ys, &ny, &yn, false, false);
  sh_obj *hold_x = hold_y ? names_of(xs, &nx, &xn, false, true) : NULL;
  sh_obj *hold_g = hold_x && grad_ys && grad_ys != SH_NONE ? names_of(grad_ys, &ng, &gn, true, false) : NULL;
  sh_obj *result = NULL;
  if (!hold_x || (grad_ys && grad_ys != SH_NONE && !hold_g)) goto out;
  tf_graph *g = tf_default_graph();
  /* a unique scope, as TF1 ("gradients/", "gradients_1/", ...) */
  char scope[600];
  sh_obj *u = tf_unique_scope(g, scope_name);
  snprintf(scope, sizeof scope, "%s", sh_str_cstr(u));
  sh_decref(u);
  char **dx = xcalloc((size_t)nx + 1, sizeof *dx);
  int first = tf_rt(g)->n_nodes;
  rt_status st = {0};
  if (rt_gradients_gated(tf_rt(g), ny, (const char *const *)yn, (const char *const *)gn, nx,
                         (const char *const *)xn, scope, gate, dx, &st)) {
    if (!sh_err_occurred()) {   /* else a Python gradient's own error stays */
      tf_raise_status(&st);
      if (st.code == RT_INVALID_ARGUMENT || st.code == RT_NOT_FOUND) {
        sh_err_clear();
        sh_raise(sh_ValueError, "%s", st.msg);
      }
    }
  } else {
    for (int i = first; i < tf_rt(g)->n_nodes; i++)
      if (tf_apply_device_stack(g, i) < 0) break;
    if (!sh_err_occurred()) tf_apply_controls_after(g, first);
    if (!sh_err_occurred()) {
      result = sh_list_new(0);
      for (int i = 0; i < nx; i++) {
        if (!dx[i]) {
          sh_list_append(result, SH_NONE);
          continue;
        }
        rt_node *node;
        int idx;
        rt_graph_output(tf_rt(g), dx[i], &node, &idx, &st);
        sh_list_append_steal(result, tf_tensor_new(g, node->id, idx));
      }
    }
  }
  free_names(dx, nx);
out:
  free_names(yn, ny);
  free_names(xn, nx);
  free_names(gn, ng);
  sh_decref(hold_y);
  sh_decref(hold_x);
  sh_decref(hold_g);
  return result;
}

static sh_obj *f_gradients(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *ys, *xs, *grad_ys = NULL, *name = NULL, *a = NULL, *b = NULL, *c = NULL, *d = NULL;
  if (sh_parse_args("gradients", argc, argv, kw,
                    "ys xs |grad_ys name colocate_gradients_with_ops gate_gradients aggregation_method stop_gradients",
                    &ys, &xs, &grad_ys, &name, &a, &b, &c, &d) < 0)
    return NULL;
  return tf_gradients_impl(ys, xs, grad_ys, name && sh_is_str(name) ? sh_str_cstr(name) : "gradients",
                           b && b != SH_NONE && sh_truth(b) > 0);
}

/* Whether an index of tensor[...] is a tensor, or a slice with a tensor bound. */
static bool dynamic_index(sh_obj *items) {
  for (int64_t i = 0; i < SH_TUPLE_N(items); i++) {
    sh_obj *k = SH_TUPLE_ITEMS(items)[i];
    if (tf_is_tensorlike(k)) return true;
    if (Py_TYPE(k) == (PyTypeObject *)&sh_slice_type) {
      sh_slice_obj *s = (sh_slice_obj *)k;
      if ((s->start && tf_is_tensorlike(s->start)) || (s->stop && tf_is_tensorlike(s->stop)) ||
          (s->step && tf_is_tensorlike(s->step)))
        return true;
    }
  }
  return false;
}

/* tensor[...]: StridedSlice with TF1's masks (indices that are tensors: prelude's _getitem_dynamic). */
sh_obj *tf_getitem(sh_obj *t, sh_obj *key) {
  sh_obj *items = Py_TYPE(key) == (PyTypeObject *)&sh_tuple_type ? sh_incref(key) : sh_tuple_of(1, sh_incref(key));
  int64_t n = SH_TUPLE_N(items);
  if (dynamic_index(items)) {
    sh_decref(items);
    sh_obj *tfm = sh_import("tensorflow"), *f = tfm ? sh_getattr(tfm, "_getitem_dynamic") : NULL;
    sh_decref(tfm);
    if (!f) return NULL;
    sh_obj *args[2] = {t, key};
    sh_obj *r = sh_call(f, 2, args, NULL);
    sh_decref(f);
    return r;
  }
  if (n > 16) { sh_decref(items); return sh_raise(sh_ValueError, "too many indices"); }
  int64_t begin[16], end[16], strides[16];
  int64_t bm = 0, em = 0, ellipsis = 0, newaxis = 0, shrink = 0;
  for (int64_t i = 0; i < n; i++) {
    sh_obj *k = SH_TUPLE_ITEMS(items)[i];
    begin[i] = end[i] = 0;
    strides[i] = 1;
    if (sh_is_int(k) && !PyBool_Check(k)) {   /* t[i], i fetched */
      if (sh_as_int(k, &begin[i]) < 0) goto bad;
      end[i] = begin[i] + 1;
      shrink |= 1 << i;
    } else if (Py_TYPE(k) == (PyTypeObject *)&sh_slice_type) {
      sh_slice_obj *s = (sh_slice_obj *)k;
      if (s->start == SH_NONE || !s->start) bm |= 1 << i;
      else if (sh_as_int(s->start, &begin[i]) < 0) goto bad;
      if (s->stop == SH_NONE || !s->stop) em |= 1 << i;
      else if (sh_as_int(s->stop, &end[i]) < 0) goto bad;
      if (s->step && s->step != SH_NONE && sh_as_int(s->step, &strides[i]) < 0) goto bad;
      if (strides[i] == 0) { sh_decref(items); return sh_raise(sh_ValueError, "slice step cannot be zero"); }
    } else if (k == SH_ELLIPSIS) {
      ellipsis |= 1 << i;
    } else if (k == SH_NONE) {
      newaxis |= 1 << i;
    } else {
      sh_decref(items);
      return sh_raise(sh_TypeError, "Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) "
                      "and scalar tf.int32/tf.int64 tensors are valid indices, got %s", sh_type_name(k));
    }
  }
  sh_decref(items);
  int64_t nd = n;
  rt_shape s1 = rt_shape_make(1, &nd);
  rt_tensor *tb = rt_tensor_new(RT_INT32, &s1), *te = rt_tensor_new(RT_INT32, &s1), *ts = rt_tensor_new(RT_INT32, &s1);
  for (int64_t i = 0; i < n; i++) {
    ((int32_t *)rt_tensor_data(tb))[i] = (int32_t)begin[i];
    ((int32_t *)rt_tensor_data(te))[i] = (int32_t)end[i];
    ((int32_t *)rt_tensor_data(ts))[i] = (int32_t)strides[i];
  }
  /* TF's names: strided_slice/stack, stack_1, stack_2, then strided_slice itself */
  op_scope sc;
  op_scope_open(&sc, NULL, "strided_slice");
  sh_obj *nb = sh_str("stack"), *ne = sh_str("stack_1"), *ns = sh_str("stack_2");
  sh_obj *cb = tf_make_const(tb, nb), *ce = cb ? tf_make_const(te, ne) : NULL, *cs = ce ? tf_make_const(ts, ns) : NULL;
  sh_decref(nb);
  sh_decref(ne);
  sh_decref(ns);
  rt_tensor_unref(tb);
  rt_tensor_unref(te);
  rt_tensor_unref(ts);
  sh_obj *r = NULL;
  if (cs) {
    rt_node *node = tf_node_begin_c("StridedSlice", sc.exact);
    rt_node_set_int(node, "begin_mask", bm);
    rt_node_set_int(node, "end_mask", em);
    rt_node_set_int(node, "ellipsis_mask", ellipsis);
    rt_node_set_int(node, "new_axis_mask", newaxis);
    rt_node_set_int(node, "shrink_axis_mask", shrink);
    if (tf_node_input(node, t, RT_INVALID) == 0 && tf_node_input(node, cb, RT_INT32) == 0 &&
        tf_node_input(node, ce, RT_INT32) == 0 && tf_node_input(node, cs, RT_INT32) == 0)
      r = tf_node_finish_tensor(node);
  }
  op_scope_close(&sc);
  sh_decref(cb);
  sh_decref(ce);
  sh_decref(cs);
  return r;
bad:
  sh_decref(items);
  return NULL;
}

/* ---- registration ------------------------------------------------------------------ */

static const sh_method special_funcs[] = {
  {"constant", f_constant, "constant(value, dtype=None, shape=None, name='Const')", "A constant tensor."},
  {"placeholder", f_placeholder, "placeholder(dtype, shape=None, name=None)", "A tensor whose value must be fed."},
  {"placeholder_with_default", f_placeholder_with_default, "placeholder_with_default(input, shape, name=None)", "A tensor that is input unless fed."},
  {"zeros", f_zeros, "zeros(shape, dtype=tf.float32, name=None)", "A tensor of zeros."},
  {"ones", f_ones, "ones(shape, dtype=tf.float32, name=None)", "A tensor of ones."},
  {"zeros_like", f_zeros_like, "zeros_like(tensor, dtype=None, name=None)", "Zeros shaped like tensor."},
  {"ones_like", f_ones_like, "ones_like(tensor, dtype=None, name=None)", "Ones shaped like tensor."},
  {"no_op", f_no_op, "no_op(name=None)", "An op that does nothing (a target for control dependencies)."},
  {"group", f_group, "group(*inputs, name=None)", "An op that runs after all inputs."},
  {"tuple", f_tuple, "tuple(tensors, name=None, control_inputs=None)", "The tensors, each waiting for all of them."},
  {"random_normal", f_random_normal, "random_normal(shape, mean=0.0, stddev=1.0, dtype=tf.float32, seed=None, name=None)", "Normally distributed values."},
  {"truncated_normal", f_truncated_normal, "truncated_normal(shape, mean=0.0, stddev=1.0, dtype=tf.float32, seed=None, name=None)", "Normal values within two standard deviations."},
  {"random_uniform", f_random_uniform, "random_uniform(shape, minval=0, maxval=None, dtype=tf.float32, seed=None, name=None)", "Uniformly distributed values."},
  {"clip_by_value", f_clip_by_value, "clip_by_value(t, clip_value_min, clip_value_max, name=None)", "Values clipped to [min, max]."},
  {"range", f_range, "range(start, limit=None, delta=1, dtype=None, name='range')", "A sequence of numbers."},
  {"convert_to_tensor", f_convert_to_tensor, "convert_to_tensor(value, dtype=None, name=None)", "value as a Tensor."},
  {"split", f_split, "split(value, num_or_size_splits, axis=0, name='split')", "Split into equal pieces along an axis."},
  {"gradients", f_gradients, "gradients(ys, xs, grad_ys=None, name='gradients')", "Symbolic derivatives of sum(ys) with respect to each x."},
  {"_register_gradient", f_register_gradient, "_register_gradient(name, fn)", "tf.RegisterGradient's registry (internal)."},
  {"_raw_op", f_raw_op, "_raw_op(op, fname, *args, **kw)", "Build any op from its inputs and attrs (tf.raw_ops; internal)."},
  {"_op_sig", f_op_sig, "_op_sig(op)", "An op's parameters and outputs for _raw_op (internal)."},
  {"_op_names", f_op_names, "_op_names()", "Every op a user may build (internal)."},
  {NULL},
};

static const sh_method nn_funcs[] = {
  {"dropout", f_dropout, "dropout(x, keep_prob, noise_shape=None, seed=None, name=None)", "Randomly zero elements; scale the rest by 1/keep_prob."},
  {"softmax_cross_entropy_with_logits", f_softmax_xent, "softmax_cross_entropy_with_logits(labels=..., logits=..., dim=-1, name=None)", "Cross entropy of softmax(logits) against labels, per example."},
  {"softmax_cross_entropy_with_logits_v2", f_softmax_xent, "softmax_cross_entropy_with_logits_v2(labels=..., logits=..., name=None)", "Cross entropy of softmax(logits) against labels, per example."},
  {"sparse_softmax_cross_entropy_with_logits", f_sparse_softmax_xent, "sparse_softmax_cross_entropy_with_logits(labels=..., logits=..., name=None)", "Cross entropy against class indices, per example."},
  {"xw_plus_b", f_xw_plus_b, "xw_plus_b(x, weights, biases, name=None)", "matmul(x, weights) + biases."},
  {NULL},
};

/* The signature text of a generic row: "matmul(a, b, transpose_a=None, ..., name=None)". */
static char row_sigs[sizeof rows / sizeof *rows][512];   /* the builtins keep pointers to these */

static char *row_sig(const tf_opfn *r) {
  bound b;
  parse_params(r->params, &b);
  char *buf = row_sigs[r - rows];
  size_t off = (size_t)snprintf(buf, 512, "%s(", strchr(r->py, '.') ? strchr(r->py, '.') + 1 : r->py);
  for (int i = 0; i < b.n && off < 512; i++)
    off += (size_t)snprintf(buf + off, 512 - off, "%s%s%s", i ? ", " : "", b.py[i], b.optional[i] ? "=None" : "");
  if (off < 512) snprintf(buf + off, 512 - off, "%sname=None)", b.n ? ", " : "");
  return buf;
}

void tf_ops_add(sh_obj *tf) {
  sh_obj *nn = sh_getattr_opt(tf, "nn");
  if (!nn) {
    nn = sh_module_new("tensorflow.nn");
    sh_module_add_sub(tf, "nn", sh_incref(nn));
  }
  for (const tf_opfn *r = rows; r->py; r++) {
    bool in_nn = !strncmp(r->py, "nn.", 3);
    const char *short_name = in_nn ? r->py + 3 : r->py;
    char *sig = row_sig(r);
    /* signatures and help strings must outlive the builtins: keep them (tiny, once) */
    sh_obj *key = sh_str(r->py);
    sh_module_add(in_nn ? nn : tf, short_name, sh_builtin_new(short_name, generic, key, sig, r->help));
    sh_decref(key);
  }
  sh_module_add_funcs(tf, special_funcs);
  sh_module_add_funcs(nn, nn_funcs);
  /* aliases TF1 keeps at the top level */
  static const char *const aliases[][2] = {
    {"truediv", "realdiv"}, {"divide", "realdiv"}, {"sub", "subtract"}, {"mul", "multiply"},
    {"neg", "negative"}, {"arg_max", "argmax"}, {"arg_min", "argmin"}, {"concat_v2", "concat"},
  };
  for (size_t i = 0; i < sizeof aliases / sizeof *aliases; i++) {
    sh_obj *f = sh_getattr_opt(tf, aliases[i][1]);
    if (f) sh_module_add(tf, aliases[i][0], f);
  }
  sh_decref(nn);
}
