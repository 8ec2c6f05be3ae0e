#include "runtime/gradients.h"
#include "base/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/gradients_int.h"
#include "runtime/op.h"

typedef rt_grad_list glist;

void rt_grad_list_add(glist *l, char *name) {
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 2;
    l->v = xrealloc(l->v, (size_t)l->cap * sizeof *l->v);
  }
  l->v[l->n++] = name;
}

void rt_grad_list_free(glist *l) {
  for (int i = 0; i < l->n; i++) free(l->v[i]);
  free(l->v);
  l->n = l->cap = 0;
  l->v = NULL;
}

#define glist_add rt_grad_list_add
#define glist_free rt_grad_list_free

static char *aggregate(rt_graph *g, glist *l, const char *scope, const char *base, rt_status *st);

/* The frame of Exit node x: its Switch's Merge's Enter's frame_name ("" if not a loop's). */
const char *rt_grad_exit_frame(const rt_graph *g, const rt_node *x) {
  const rt_node *sw = g->nodes[x->edges[0].node];
  if (sw->n_data_inputs < 1) return "";
  const rt_node *m = g->nodes[sw->edges[0].node];
  if (m->n_data_inputs < 1) return "";
  const rt_node *e = g->nodes[m->edges[0].node];
  return rt_node_string(e, "frame_name", "");
}

/* Node i is an Exit: build its loop's gradient loop once, for all the loop's Exits, and
 * hand what it gives to the values that went into the loop. */
static int loop_grad(rt_graph *g, int n0, int i, glist **grads, const char *scope, char ***done,
                     int *n_done, rt_status *st) {
  const char *frame = rt_grad_exit_frame(g, g->nodes[i]);
  for (int d = 0; d < *n_done; d++)
    if (!strcmp((*done)[d], frame)) return RT_OK;
  *done = xrealloc(*done, (size_t)(*n_done + 1) * sizeof **done);
  (*done)[(*n_done)++] = xstrdup(frame);
  int n_exits = 0, *ids = xcalloc((size_t)n0 + 1, sizeof *ids);
  char **dys = xcalloc((size_t)n0 + 1, sizeof *dys);
  int rc = RT_OK;
  for (int e = 0; e < n0 && !rc; e++) {
    const rt_node *x = g->nodes[e];
    if (strcmp(x->op, "Exit") || strcmp(rt_grad_exit_frame(g, x), frame)) continue;
    ids[n_exits] = e;
    if (grads[e]) {
      char base[300];
      snprintf(base, sizeof base, "%s_grad", x->name);
      dys[n_exits] = aggregate(g, &grads[e][0], scope, base, st);
      if (!dys[n_exits] && st->code) rc = st->code;
    }
    n_exits++;
  }
  rt_grad_out *outs = NULL;
  int n_outs = 0;
  if (!rc) rc = rt_grad_while(g, n0, frame, (const char *const *)dys, ids, n_exits, scope, &outs, &n_outs, st);
  for (int o = 0; o < n_outs; o++) {
    rt_grad_out *go = &outs[o];
    if (!grads[go->node]) grads[go->node] = xcalloc((size_t)g->nodes[go->node]->n_outputs, sizeof(glist));
    glist_add(&grads[go->node][go->index], go->grad);
  }
  free(outs);
  for (int e = 0; e < n_exits; e++) free(dys[e]);
  free(dys);
  free(ids);
  return rc;
}

static int add_node(rt_graph *g, rt_node *n, rt_status *st) { return rt_graph_add(g, n, st); }

/* One tensor holding the sum of the list (the list is emptied). */
static char *aggregate(rt_graph *g, glist *l, const char *scope, const char *base,
                       rt_status *st) {
  if (l->n == 0) return NULL;
  if (l->n == 1) {
    l->n = 0;
    return l->v[0];
  }
  char name[512], want[512];
  snprintf(want, sizeof want, "%s%s/AddN", scope, base);
  rt_graph_unique_name(g, want, name, sizeof name);
  rt_node *n = rt_node_new(name, "AddN");
  for (int i = 0; i < l->n; i++) rt_node_add_input(n, l->v[i]);
  for (int i = 0; i < l->n; i++) free(l->v[i]);
  l->n = 0;
  if (add_node(g, n, st)) return NULL;
  return xstrdup(name);
}

/* The seed of y's gradient when none is given, as TF builds it: Fill(Shape(y), 1) named
 * SCOPE grad_ys_I (its 1 grad_ys_I/Const, the shape SCOPE Shape: a Const where y's shape is
 * known); OnesLike for a dtype tfsh has no scalar constant of. */
static char *ones_like(rt_graph *g, const char *y, int i, const char *scope, rt_status *st) {
  char name[512], want[512], shape[512], one[512];
  rt_node *yn;
  int idx;
  if (rt_graph_output(g, y, &yn, &idx, st)) return NULL;
  rt_dtype t = yn->out_types[idx];
  rt_tensor *v = t == RT_FLOAT    ? rt_tensor_scalar_f32(1)
                 : t == RT_DOUBLE ? rt_tensor_scalar_f64(1)
                 : t == RT_INT32  ? rt_tensor_scalar_i32(1)
                 : t == RT_INT64  ? rt_tensor_scalar_i64(1)
                                  : NULL;
  if (!v) {
    snprintf(want, sizeof want, "%sOnesLike", scope);
    rt_graph_unique_name(g, want, name, sizeof name);
    rt_node *n = rt_node_new(name, "OnesLike");
    rt_node_add_input(n, y);
    if (add_node(g, n, st)) return NULL;
    return xstrdup(name);
  }
  snprintf(want, sizeof want, "%sShape", scope);
  rt_graph_unique_name(g, want, shape, sizeof shape);
  const rt_shape *ys = &yn->out_shapes[idx];
  bool known = ys->ndims >= 0;
  for (int d = 0; known && d < ys->ndims; d++) known = ys->dims[d] >= 0;
  rt_node *sn = rt_node_new(shape, known ? "Const" : "Shape");
  if (known) {   /* a shape known while building is a constant, as TF's array_ops.shape makes it */
    int64_t nd = ys->ndims;
    rt_shape vs = rt_shape_make(1, &nd);
    rt_tensor *sv = rt_tensor_new(RT_INT32, &vs);
    for (int d = 0; sv && d < ys->ndims; d++) ((int32_t *)rt_tensor_data(sv))[d] = (int32_t)ys->dims[d];
    rt_node_set_type(sn, "dtype", RT_INT32);
    if (sv) rt_node_set_tensor(sn, "value", sv);
    rt_tensor_unref(sv);
  } else {
    rt_node_add_input(sn, y);
  }
  if (add_node(g, sn, st)) {
    rt_tensor_unref(v);
    return NULL;
  }
  snprintf(want, sizeof want, "%sgrad_ys_%d", scope, i);
  rt_graph_unique_name(g, want, name, sizeof name);
  snprintf(one, sizeof one, "%s/Const", name);
  rt_node *cn = rt_node_new(one, "Const");
  rt_node_set_type(cn, "dtype", t);
  rt_node_set_tensor(cn, "value", v);
  rt_tensor_unref(v);
  if (add_node(g, cn, st)) return NULL;
  rt_node *fn = rt_node_new(name, "Fill");
  rt_node_add_input(fn, shape);
  rt_node_add_input(fn, one);
  if (add_node(g, fn, st)) return NULL;
  return xstrdup(name);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* gate_gradients: an op's input gradients, when more than one, each wait for all of them
 * (TF's tf.tuple in SCOPE OP_grad/tuple/: NoOp group_deps on their ops, sorted as TF lists
 * control inputs, then an Identity control_dependency[_k] per gradient), so that no update
 * reads one before the op's other gradients, which may read the same variable, are done.
 * Unlike TF's, group_deps waits only for the gradients that lead to xs (need[k]): TF's also
 * computes, every step, a MatMul's gradient towards a placeholder that nothing uses (its
 * control_dependency is there, named as TF's, for nobody). */
static int gate(rt_graph *g, char **in, const bool *need, int n, const char *sc, rt_status *st) {
  int live = 0;
  for (int k = 0; k < n; k++) live += in[k] != NULL;
  if (live < 2) return RT_OK;
  char tsc[600], want[700], name[700];
  snprintf(want, sizeof want, "%stuple", sc);
  rt_graph_unique_name(g, want, tsc, sizeof tsc);
  snprintf(want, sizeof want, "%s/group_deps", tsc);
  rt_graph_unique_name(g, want, name, sizeof name);
  char **ops = xcalloc((size_t)live, sizeof *ops);
  live = 0;
  for (int k = 0; k < n; k++) {
    if (!in[k] || !need[k]) continue;
    char node[512];
    int idx;
    rt_tensor_name_parse(in[k], node, sizeof node, &idx);
    bool seen = false;
    for (int j = 0; j < live; j++) seen |= !strcmp(ops[j], node);
    if (!seen) ops[live++] = xstrdup(node);
  }
  qsort(ops, (size_t)live, sizeof *ops, cmp_str);
  rt_node *deps = rt_node_new(name, "NoOp");
  for (int j = 0; j < live; j++) rt_node_add_control(deps, ops[j]);
  for (int j = 0; j < live; j++) free(ops[j]);
  free(ops);
  if (add_node(g, deps, st)) return st->code;
  char group[700];
  snprintf(group, sizeof group, "%s", name);
  for (int k = 0; k < n; k++) {
    if (!in[k]) continue;
    snprintf(want, sizeof want, "%s/control_dependency", tsc);
    rt_graph_unique_name(g, want, name, sizeof name);
    rt_node *id = rt_node_new(name, "Identity");
    rt_node_add_input(id, in[k]);
    rt_node_add_control(id, group);
    if (add_node(g, id, st)) return st->code;
    free(in[k]);
    in[k] = xstrdup(name);
  }
  return RT_OK;
}

int rt_gradients(rt_graph *g, int n_ys, const char *const *ys, const char *const *grad_ys,
                 int n_xs, const char *const *xs, const char *scope, char **dx, rt_status *st) {
  return rt_gradients_gated(g, n_ys, ys, grad_ys, n_xs, xs, scope, false, dx, st);
}

static rt_grad_hook grad_hook;
void rt_gradients_set_hook(rt_grad_hook hook) { grad_hook = hook; }
int rt_grad_call_hook(rt_grad_ctx *ctx, bool *handled) {
  *handled = false;
  return grad_hook ? grad_hook(ctx, handled) : RT_OK;
}

int rt_gradients_gated(rt_graph *g, int n_ys, const char *const *ys, const char *const *grad_ys, int n_xs,
                       const char *const *xs, const char *scope, bool gate_gradients, char **dx, rt_status *st) {
  int n0 = g->n_nodes, rc = RT_OK;
  for (int i = 0; i < n_xs; i++) dx[i] = NULL;
  bool *fwd = xcalloc((size_t)n0 + 1, sizeof *fwd);   /* reachable from xs */
  bool *bwd = xcalloc((size_t)n0 + 1, sizeof *bwd);   /* reaches ys */
  glist **grads = xcalloc((size_t)n0 + 1, sizeof *grads);
  rt_node *nd;
  int idx;
  for (int i = 0; i < n_xs && !rc; i++)
    if (!(rc = rt_graph_output(g, xs[i], &nd, &idx, st))) fwd[nd->id] = true;
  /* Node order is topological (inputs are added first), so one pass forward... (a loop's
   * back edge, NextIteration -> Merge, points forward: passes again until nothing changes) */
  for (bool changed = true; changed && !rc;) {
    changed = false;
    for (int i = 0; i < n0; i++)
      for (int k = 0; k < g->nodes[i]->n_data_inputs && !fwd[i]; k++)
        changed |= fwd[i] = fwd[g->nodes[i]->edges[k].node];
  }
  for (int i = 0; i < n_ys && !rc; i++)
    if (!(rc = rt_graph_output(g, ys[i], &nd, &idx, st))) bwd[nd->id] = true;
  /* ...and one backward (again, loops: until nothing changes). */
  for (bool changed = true; changed && !rc;) {
    changed = false;
    for (int i = n0 - 1; i >= 0; i--)
      if (bwd[i])
        for (int k = 0; k < g->nodes[i]->n_data_inputs; k++)
          if (!bwd[g->nodes[i]->edges[k].node]) changed = bwd[g->nodes[i]->edges[k].node] = true;
  }
  if (rc) goto out;

  /* Seed with grad_ys (or ones). */
  for (int i = 0; i < n_ys && !rc; i++) {
    rt_graph_output(g, ys[i], &nd, &idx, st);
    if (!fwd[nd->id]) continue;
    if (!grads[nd->id]) grads[nd->id] = xcalloc((size_t)nd->n_outputs, sizeof(glist));
    char *seed = grad_ys && grad_ys[i] ? xstrdup(grad_ys[i]) : ones_like(g, ys[i], i, scope, st);
    if (!seed) {
      rc = st->code;
      break;
    }
    glist_add(&grads[nd->id][idx], seed);
  }

  char **done = NULL;   /* loops whose gradient loop is built */
  int n_done = 0;
  for (int i = n0 - 1; i >= 0 && !rc; i--) {
    if (!fwd[i] || !bwd[i] || !grads[i]) continue;
    rt_node *n = g->nodes[i];
    if (!strcmp(n->op, "Exit")) {
      rc = loop_grad(g, n0, i, grads, scope, &done, &n_done, st);
      continue;
    }
    bool is_x = false;
    for (int k = 0; k < n_xs; k++) {
      char node[256];
      int xi;
      rt_tensor_name_parse(xs[k], node, sizeof node, &xi);
      is_x |= !strcmp(node, n->name);
    }
    /* Sum what reached each output. */
    char **dy = xcalloc((size_t)n->n_outputs + 1, sizeof *dy);
    bool any = false;
    for (int o = 0; o < n->n_outputs && !rc; o++) {
      char base[300];
      snprintf(base, sizeof base, "%s_grad", n->name);
      dy[o] = aggregate(g, &grads[i][o], scope, base, st);
      if (!dy[o] && st->code) rc = st->code;
      any |= dy[o] != NULL;
    }
    /* An x keeps its summed gradient; differentiation stops at xs that are sources. */
    if (!rc && is_x) {
      for (int k = 0; k < n_xs; k++) {
        char node[256];
        int xi;
        rt_tensor_name_parse(xs[k], node, sizeof node, &xi);
        if (!strcmp(node, n->name) && xi < n->n_outputs && dy[xi] && !dx[k]) dx[k] = xstrdup(dy[xi]);
      }
    }
    bool needs_inputs = false;
    for (int k = 0; k < n->n_data_inputs; k++) needs_inputs |= fwd[n->edges[k].node];
    if (!rc && any && needs_inputs) {
      const rt_op_def *def = n->def;
      char sc[600];
      snprintf(sc, sizeof sc, "%s%s_grad/", scope, n->name);
      char **in_grads = xcalloc((size_t)n->n_data_inputs + 1, sizeof *in_grads);
      rt_grad_ctx ctx = {.g = g, .node = n, .dy = (const char *const *)dy, .dx = in_grads, .scope = sc, .st = st};
      bool handled = false;
      rc = rt_grad_call_hook(&ctx, &handled);
      if (!rc && !handled && (!def || !def->grad)) {
        rc = rt_error(st, RT_LOOKUP_ERROR, "No gradient defined for operation '%s' (op type: %s)",
                      n->name, n->op);
        free(in_grads);
      } else {
        if (!rc && !handled) rc = def->grad(&ctx);
        n = g->nodes[i];   /* g->nodes may have moved */
        if (!rc && gate_gradients) {
          bool *need = xcalloc((size_t)n->n_data_inputs + 1, sizeof *need);
          for (int k = 0; k < n->n_data_inputs; k++) need[k] = fwd[n->edges[k].node];
          rc = gate(g, in_grads, need, n->n_data_inputs, sc, st);
          free(need);
          n = g->nodes[i];
        }
        for (int k = 0; k < n->n_data_inputs; k++) {
          if (!in_grads[k]) continue;
          const rt_edge *e = &n->edges[k];
          if (!rc && fwd[e->node]) {
            if (!grads[e->node])
              grads[e->node] = xcalloc((size_t)g->nodes[e->node]->n_outputs, sizeof(glist));
            glist_add(&grads[e->node][e->index], in_grads[k]);
          } else {
            free(in_grads[k]);
          }
        }
        free(in_grads);
      }
    }
    for (int o = 0; o < n->n_outputs; o++) free(dy[o]);
    free(dy);
  }
  for (int d = 0; d < n_done; d++) free(done[d]);
  free(done);
out:
  for (int i = 0; i < n0; i++)
    if (grads && grads[i]) {
      for (int o = 0; o < g->nodes[i]->n_outputs; o++) glist_free(&grads[i][o]);
      free(grads[i]);
    }
  free(grads);
  free(fwd);
  free(bwd);
  if (rc)
    for (int i = 0; i < n_xs; i++) {
      free(dx[i]);
      dx[i] = NULL;
    }
  return rc;
}
