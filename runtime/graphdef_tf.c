/* tfsh's own helper ops as TensorFlow's ops, for GraphDefs that leave tfsh (files TF
 * reads): _SumToShapeOf, _ReduceGrad (gradients) and _ReportUninitialized (the ready op of a
 * Supervisor or MonitoredTrainingSession) have no TF kernel, so the encoder writes each as a
 * few nodes of TF's (and tfsh's) ops computing the same thing, the last one under the
 * helper's name so that its consumers need not change. See rt_graphdef_tf_ops. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "runtime/graphdef.h"

typedef struct builder {
  const rt_node *src;
  rt_node **out;
  int n;
} builder;

static rt_node *emit(builder *b, const char *suffix, const char *op, int n_in, const char *const *in) {
  char name[1024];
  if (suffix) snprintf(name, sizeof name, "%s/%s", b->src->name, suffix);
  else snprintf(name, sizeof name, "%s", b->src->name);
  rt_node *x = rt_node_new(name, op);
  for (int k = 0; k < n_in; k++) rt_node_add_input(x, in[k]);
  if (b->src->device && b->src->device[0]) rt_node_set_device(x, b->src->device);
  b->out = xrealloc(b->out, (size_t)(b->n + 1) * sizeof *b->out);
  b->out[b->n++] = x;
  return x;
}

/* The last node: the helper's own name, its control inputs too. */
static rt_node *emit_last(builder *b, const char *op, int n_in, const char *const *in) {
  rt_node *x = emit(b, NULL, op, n_in, in);
  for (int k = b->src->n_data_inputs; k < b->src->n_inputs; k++) rt_node_add_input(x, b->src->inputs[k]);
  return x;
}

static rt_node *shape_of(builder *b, const char *suffix, const char *in, rt_dtype t) {
  rt_node *x = emit(b, suffix, "Shape", 1, &in);
  rt_node_set_type(x, "T", t);
  rt_node_set_type(x, "out_type", RT_INT32);
  return x;
}

static rt_node *int_const(builder *b, const char *suffix, int n, const int32_t *v, bool vector) {
  rt_node *x = emit(b, suffix, "Const", 0, NULL);
  rt_shape s = vector ? rt_shape_make(1, (int64_t[]){n}) : rt_shape_scalar();
  rt_tensor *t = rt_tensor_new(RT_INT32, &s);
  if (t && n) memcpy(rt_tensor_data(t), v, (size_t)n * sizeof *v);
  rt_node_set_type(x, "dtype", RT_INT32);
  if (t) rt_node_set_tensor(x, "value", t);
  rt_tensor_unref(t);
  return x;
}

static rt_node *binary(builder *b, const char *suffix, const char *op, const char *x, const char *y, rt_dtype t) {
  const char *in[2] = {x, y};
  rt_node *n = suffix ? emit(b, suffix, op, 2, in) : emit_last(b, op, 2, in);
  rt_node_set_type(n, "T", t);
  return n;
}

static char *out0(const rt_node *n) { return n->name; }

/* y = Reshape(Sum(x, BroadcastGradientArgs(Shape(x), Shape(like))[1]), Shape(like)) */
static void sum_to_shape(builder *b, const rt_graph *g) {
  const rt_node *s = b->src;
  const rt_node *like = g->nodes[s->edges[1].node];
  rt_dtype t = rt_node_type(s, "T", RT_FLOAT), u = like->out_types[s->edges[1].index];
  rt_node *sx = shape_of(b, "Shape", s->inputs[0], t);
  rt_node *sl = shape_of(b, "Shape_1", s->inputs[1], u);
  const char *bin[2] = {out0(sx), out0(sl)};
  rt_node *bga = emit(b, "BroadcastGradientArgs", "BroadcastGradientArgs", 2, bin);
  rt_node_set_type(bga, "T", RT_INT32);
  char axes[1100];
  snprintf(axes, sizeof axes, "%s:1", bga->name);
  const char *sin[2] = {s->inputs[0], axes};
  rt_node *sum = emit(b, "Sum", "Sum", 2, sin);
  rt_node_set_type(sum, "T", t);
  rt_node_set_type(sum, "Tidx", RT_INT32);
  rt_node_set_bool(sum, "keep_dims", false);
  const char *rin[2] = {out0(sum), out0(sl)};
  rt_node *r = emit_last(b, "Reshape", 2, rin);
  rt_node_set_type(r, "T", t);
  rt_node_set_type(r, "Tshape", RT_INT32);
}

/* With the reduced axes known (a Const) and like's rank known: K = S*keep + red (dy's shape
 * with kept dims), M = S*red + keep (the tiling); y = Tile(Reshape(dy, K), M), / Prod(M)
 * for a mean. False (nothing emitted) when the axes or the rank are not known. */
static bool reduce_grad(builder *b, const rt_graph *g) {
  const rt_node *s = b->src;
  const rt_node *like = g->nodes[s->edges[1].node], *ax = g->nodes[s->edges[2].node];
  const rt_shape *ls = &like->out_shapes[s->edges[1].index];
  const rt_attr_value *av = rt_node_attr(ax, "value");
  if (ls->ndims < 0 || strcmp(ax->op, "Const") || !av || av->kind != RT_ATTR_TENSOR || !av->tensor) return false;
  int r = ls->ndims;
  int32_t red[RT_MAX_DIMS] = {0}, keep[RT_MAX_DIMS];
  int64_t na = rt_tensor_numel(av->tensor);
  for (int64_t i = 0; i < na; i++) {
    int64_t a = rt_tensor_get_i64(av->tensor, i);
    if (a < -r || a >= r) return false;
    red[a < 0 ? a + r : a] = 1;
  }
  for (int d = 0; d < r; d++) {
    if (na == 0) red[d] = 1;   /* tfsh's reductions: no axes is every axis */
    keep[d] = 1 - red[d];
  }
  rt_dtype t = rt_node_type(s, "T", RT_FLOAT), u = like->out_types[s->edges[1].index];
  rt_node *sl = shape_of(b, "Shape", s->inputs[1], u);
  rt_node *kc = int_const(b, "keep", r, keep, true), *rc = int_const(b, "reduced", r, red, true);
  rt_node *k1 = binary(b, "kept_shape/Mul", "Mul", out0(sl), out0(kc), RT_INT32);
  rt_node *k = binary(b, "kept_shape", "Add", out0(k1), out0(rc), RT_INT32);
  rt_node *m1 = binary(b, "multiples/Mul", "Mul", out0(sl), out0(rc), RT_INT32);
  rt_node *m = binary(b, "multiples", "Add", out0(m1), out0(kc), RT_INT32);
  const char *rin[2] = {s->inputs[0], out0(k)};
  rt_node *rs = emit(b, "Reshape", "Reshape", 2, rin);
  rt_node_set_type(rs, "T", t);
  rt_node_set_type(rs, "Tshape", RT_INT32);
  bool mean = rt_node_bool(s, "mean", false);
  const char *tin[2] = {out0(rs), out0(m)};
  rt_node *tile = mean ? emit(b, "Tile", "Tile", 2, tin) : emit_last(b, "Tile", 2, tin);
  rt_node_set_type(tile, "T", t);
  rt_node_set_type(tile, "Tmultiples", RT_INT32);
  if (!mean) return true;
  int32_t zero = 0;
  rt_node *z = int_const(b, "count/axes", 1, &zero, true);
  rt_node *cnt = binary(b, "count", "Prod", out0(m), out0(z), RT_INT32);
  rt_node_set_type(cnt, "Tidx", RT_INT32);
  rt_node_set_bool(cnt, "keep_dims", false);
  const char *cin[1] = {out0(cnt)};
  rt_node *cf = emit(b, "count/Cast", "Cast", 1, cin);
  rt_node_set_type(cf, "SrcT", RT_INT32);
  rt_node_set_type(cf, "DstT", t);
  rt_node_set_bool(cf, "Truncate", false);
  binary(b, NULL, "RealDiv", out0(tile), out0(cf), t);
  return true;
}

/* tf.report_uninitialized_variables as TF builds it: the variables' names masked by
 * LogicalNot(Pack(IsVariableInitialized...)) (boolean_mask: Where, Squeeze, GatherV2); no
 * variables: an empty string vector. */
static void report_uninitialized(builder *b) {
  const rt_node *s = b->src;
  const rt_attr_value *names = rt_node_attr(s, "var_names");
  int n = s->n_data_inputs;
  rt_shape vs = rt_shape_make(1, (int64_t[]){n});
  rt_tensor *nt = rt_tensor_new(RT_STRING, &vs);
  for (int i = 0; nt && i < n; i++) {
    const char *v = names && names->kind == RT_ATTR_LIST_STRING && i < names->list.n ? ((char **)names->list.v)[i] : "?";
    rt_tensor_set_str(nt, i, v, strlen(v));
  }
  rt_node *c = n ? emit(b, "Const", "Const", 0, NULL) : emit_last(b, "Const", 0, NULL);
  rt_node_set_type(c, "dtype", RT_STRING);
  if (nt) rt_node_set_tensor(c, "value", nt);
  rt_tensor_unref(nt);
  if (!n) return;
  rt_node *pk = emit(b, "stack", "Pack", n, (const char *const *)s->inputs);
  rt_node_set_type(pk, "T", RT_BOOL);
  rt_node_set_int(pk, "N", n);
  rt_node_set_int(pk, "axis", 0);
  const char *in[3] = {out0(pk)};
  rt_node *not = emit(b, "LogicalNot", "LogicalNot", 1, in);
  in[0] = out0(not);
  rt_node *wh = emit(b, "boolean_mask/Where", "Where", 1, in);
  rt_node_set_type(wh, "T", RT_BOOL);
  in[0] = out0(wh);
  rt_node *sq = emit(b, "boolean_mask/Squeeze", "Squeeze", 1, in);
  rt_node_set_type(sq, "T", RT_INT64);
  rt_node_set_ints(sq, "squeeze_dims", 1, (int64_t[]){1});
  int32_t zero = 0;
  rt_node *ax = int_const(b, "boolean_mask/GatherV2/axis", 1, &zero, false);
  in[0] = out0(c), in[1] = out0(sq), in[2] = out0(ax);
  rt_node *gv = emit_last(b, "GatherV2", 3, in);
  rt_node_set_type(gv, "Tparams", RT_STRING);
  rt_node_set_type(gv, "Tindices", RT_INT64);
  rt_node_set_type(gv, "Taxis", RT_INT32);
  rt_node_set_int(gv, "batch_dims", 0);
}

int rt_graphdef_tf_ops(const rt_graph *g, const rt_node *n, rt_node ***out) {
  builder b = {n, NULL, 0};
  *out = NULL;
  if (!strcmp(n->op, "_ReportUninitialized")) report_uninitialized(&b);
  else if (!n->edges) return 0;
  else if (!strcmp(n->op, "_SumToShapeOf") && n->n_data_inputs == 2) sum_to_shape(&b, g);
  else if (!strcmp(n->op, "_ReduceGrad") && n->n_data_inputs == 3 && !reduce_grad(&b, g)) {
    for (int i = 0; i < b.n; i++) rt_node_free(b.out[i]);
    b.n = 0;
  }
  if (!b.n) {
    free(b.out);
    return 0;
  }
  *out = b.out;
  return b.n;
}

const rt_node *rt_graphdef_tf_unexportable(const rt_graph *g, const char **why) {
  static const char *const own[][2] = {
    {"_AccumApply", "SyncReplicasOptimizer's gradient accumulator"},
    {"_AccumTake", "SyncReplicasOptimizer's gradient accumulator"},
    {"_TokenEnqueue", "SyncReplicasOptimizer's token queue"},
    {"_TokenDequeue", "SyncReplicasOptimizer's token queue"},
  };
  for (int i = 0; i < g->n_nodes; i++) {
    const rt_node *n = g->nodes[i];
    if (n->op[0] != '_') continue;
    for (size_t k = 0; k < sizeof own / sizeof own[0]; k++)
      if (!strcmp(n->op, own[k][0])) {
        *why = own[k][1];
        return n;
      }
    if (!strcmp(n->op, "_ReduceGrad")) {   /* written as TF's ops only when its axes and rank are known */
      rt_node **x = NULL;
      int nx = rt_graphdef_tf_ops(g, n, &x);
      for (int k = 0; k < nx; k++) rt_node_free(x[k]);
      free(x);
      if (!nx) {
        *why = "a reduction's gradient over axes or a rank not known when the graph was built";
        return n;
      }
    }
  }
  return NULL;
}
