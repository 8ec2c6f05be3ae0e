/* Neural-network ops: activations and the gradient ops their gradients use, BiasAdd,
 * softmax and the cross-entropy losses, L2Loss, CheckNumerics. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "ops/ops_int.h"

#define FLT "{float, double}"

/* On Relu's output, as TF's _ReluGrad (y > 0 exactly where x > 0): the pre-activation is
 * then read by Relu alone, so Conv2D + BiasAdd + Relu can fuse (runtime/remap.h). */
static int relu_grad(rt_grad_ctx *c) {
  c->dx[0] = op_g2(c, "ReluGrad", c->dy[0], c->node->name);
  return c->st->code;
}

static int sigmoid_grad(rt_grad_ctx *c) {
  c->dx[0] = op_g2(c, "SigmoidGrad", c->node->name, c->dy[0]);
  return c->st->code;
}

static int tanh_grad(rt_grad_ctx *c) {
  c->dx[0] = op_g2(c, "TanhGrad", c->node->name, c->dy[0]);
  return c->st->code;
}

#define IN(i) (c->node->inputs[i])
#define DY (c->dy[0])

/* ---- the gradient ops' own gradients (double backprop: gradient penalties, Hessians) ---- */

/* ReluGrad(g, x) and Relu6Grad(g, x) are linear in g with x's mask, constant in x. */
static int masked_grad_grad(rt_grad_ctx *c) {
  if (!DY) return RT_OK;
  c->dx[0] = op_g2(c, c->node->op, DY, IN(1));
  c->dx[1] = c->dx[0] ? op_g1(c, "ZerosLike", IN(1)) : NULL;
  return c->st->code;
}

/* SigmoidGrad(y, d) = d * y * (1 - y): TF's _SigmoidGradGrad, g * d - 2 * (g * d) * y and
 * SigmoidGrad(y, g). */
static int sigmoid_grad_grad(rt_grad_ctx *c) {
  if (!DY) return RT_OK;
  char *gb = op_g2(c, "Mul", DY, IN(1)), *two = gb ? op_gconst(c, op_gin_type(c, 0), 2.0) : NULL;
  char *t = two ? op_g2(c, "Mul", two, gb) : NULL, *t2 = t ? op_g2(c, "Mul", t, IN(0)) : NULL;
  c->dx[0] = t2 ? op_g2(c, "Sub", gb, t2) : NULL;
  c->dx[1] = c->dx[0] ? op_g2(c, "SigmoidGrad", IN(0), DY) : NULL;
  free(gb), free(two), free(t), free(t2);
  return c->st->code;
}

/* TanhGrad(y, d) = d * (1 - y * y): TF's _TanhGradGrad, g * -2 * d * y and TanhGrad(y, g). */
static int tanh_grad_grad(rt_grad_ctx *c) {
  if (!DY) return RT_OK;
  char *m2 = op_gconst(c, op_gin_type(c, 0), -2.0), *t = m2 ? op_g2(c, "Mul", DY, m2) : NULL;
  char *t2 = t ? op_g2(c, "Mul", t, IN(1)) : NULL;
  c->dx[0] = t2 ? op_g2(c, "Mul", t2, IN(0)) : NULL;
  c->dx[1] = c->dx[0] ? op_g2(c, "TanhGrad", IN(0), DY) : NULL;
  free(m2), free(t), free(t2);
  return c->st->code;
}

/* EluGrad(g, y): TF's _EluGradGrad, EluGrad(dy, y) and dy * g where y < 0 (else 0). */
static int elu_grad_grad(rt_grad_ctx *c) {
  if (!DY) return RT_OK;
  c->dx[0] = op_g2(c, "EluGrad", DY, IN(1));
  char *zero = op_gconst(c, op_gin_type(c, 1), 0.0), *neg = op_g2(c, "Less", IN(1), zero);
  char *m = op_g2(c, "Mul", DY, IN(0)), *z = op_g1(c, "ZerosLike", IN(1));
  const char *in[] = {neg, m, z};
  c->dx[1] = neg && m && z ? op_grad_node(c, "Select", "Select", 3, in, NULL, NULL) : NULL;
  free(zero), free(neg), free(m), free(z);
  return c->st->code;
}

/* SoftplusGrad(g, x) = g * sigmoid(x): TF's _SoftplusGradGrad, SoftplusGrad(dy, x) and
 * dy * g / (exp(-x) + 2 + exp(x)). */
static int softplus_grad_grad(rt_grad_ctx *c) {
  if (!DY) return RT_OK;
  c->dx[0] = op_g2(c, "SoftplusGrad", DY, IN(1));
  char *nx = op_g1(c, "Neg", IN(1)), *e1 = op_g1(c, "Exp", nx), *two = op_gconst(c, op_gin_type(c, 1), 2.0);
  char *a = op_g2(c, "Add", e1, two), *e2 = op_g1(c, "Exp", IN(1)), *den = op_g2(c, "Add", a, e2);
  char *num = op_g2(c, "Mul", DY, IN(0));
  c->dx[1] = op_g2(c, "RealDiv", num, den);
  free(nx), free(e1), free(two), free(a), free(e2), free(den), free(num);
  return c->st->code;
}

static int relu6_grad(rt_grad_ctx *c) {
  c->dx[0] = op_g2(c, "Relu6Grad", DY, IN(0));
  return c->st->code;
}

static int elu_grad(rt_grad_ctx *c) {
  c->dx[0] = op_g2(c, "EluGrad", DY, c->node->name);
  return c->st->code;
}

static int softplus_grad(rt_grad_ctx *c) {
  c->dx[0] = op_g2(c, "SoftplusGrad", DY, IN(0));
  return c->st->code;
}

/* ---- shapes ---------------------------------------------------------------------- */

static int channel_dim(const rt_node *n, int rank) {
  return !strcmp(rt_node_string(n, "data_format", "NHWC"), "NCHW") ? 1 : rank - 1;
}

static int bias_add_shape(rt_shape_ctx *c) {
  const rt_shape *x = &c->in_shapes[0], *b = &c->in_shapes[1];
  if (x->ndims >= 0 && x->ndims < 2)
    return op_shape_error(c, 0, "Shape must be at least rank 2 but is rank %d", x->ndims);
  if (b->ndims >= 0 && b->ndims != 1) return op_rank_error(c, 1, b->ndims);
  c->out_shapes[0] = *x;
  if (x->ndims < 0 || b->ndims < 0) return RT_OK;
  int64_t ch = x->dims[channel_dim(c->node, x->ndims)];
  if (ch >= 0 && b->dims[0] >= 0 && ch != b->dims[0]) return op_dims_error(c, ch, b->dims[0]);
  return RT_OK;
}

static int bias_add_grad_shape(rt_shape_ctx *c) {
  const rt_shape *x = &c->in_shapes[0];
  if (x->ndims >= 0 && x->ndims < 2)
    return op_shape_error(c, 0, "Shape must be at least rank 2 but is rank %d", x->ndims);
  c->out_shapes[0] = rt_shape_make(1, (int64_t[]){x->ndims < 0 ? -1 : x->dims[channel_dim(c->node, x->ndims)]});
  return RT_OK;
}

static int softmax_shape(rt_shape_ctx *c) {
  if (c->in_shapes[0].ndims == 0)
    return op_shape_error(c, 0, "Shape must be at least rank 1 but is rank 0");
  return op_shape_unchanged(c);
}

/* (loss [batch], backprop [batch, classes]) from rank-2 logits. */
static int xent_shape(rt_shape_ctx *c, bool sparse) {
  const rt_shape *f = &c->in_shapes[0], *l = &c->in_shapes[1];
  if (f->ndims >= 0 && f->ndims != 2) return op_rank_error(c, 2, f->ndims);
  if (l->ndims >= 0 && l->ndims != (sparse ? 1 : 2)) return op_rank_error(c, sparse ? 1 : 2, l->ndims);
  rt_shape s = f->ndims == 2 ? *f : rt_shape_make(2, (int64_t[]){-1, -1});
  for (int d = 0; d < (sparse ? 1 : 2) && l->ndims >= 0; d++) {
    if (s.dims[d] >= 0 && l->dims[d] >= 0 && s.dims[d] != l->dims[d])
      return op_dims_error(c, s.dims[d], l->dims[d]);
    if (s.dims[d] < 0) s.dims[d] = l->dims[d];
  }
  c->out_shapes[0] = rt_shape_make(1, s.dims);
  c->out_shapes[1] = s;
  return RT_OK;
}

static int dense_xent_shape(rt_shape_ctx *c) { return xent_shape(c, false); }
static int sparse_xent_shape(rt_shape_ctx *c) { return xent_shape(c, true); }

static int scalar_shape(rt_shape_ctx *c) {
  c->out_shapes[0] = rt_shape_scalar();
  return RT_OK;
}

/* ---- gradients ------------------------------------------------------------------- */

static void set_format(rt_node *n, const void *arg) {
  rt_node_set_string(n, "data_format", rt_node_string(arg, "data_format", "NHWC"));
}

static int bias_add_grad(rt_grad_ctx *c) {
  if (!DY) return RT_OK;
  c->dx[0] = xstrdup(DY);
  c->dx[1] = op_grad_node(c, "BiasAddGrad", "BiasAddGrad", 1, &DY, set_format, c->node);
  return c->st->code;
}

/* BiasAddGrad sums out_backprop over all but the channel axis: its gradient is dy
 * broadcast back (NCHW: the channel axis first of the last ndims - 1). */
static int bias_add_grad_grad(rt_grad_ctx *c) {
  if (!DY) return RT_OK;
  rt_shape xs = op_gshape(c, IN(0));
  bool cf = !strcmp(rt_node_string(c->node, "data_format", "NHWC"), "NCHW");
  if (cf && xs.ndims < 3)
    return rt_error(c->st, RT_UNIMPLEMENTED, "BiasAddGrad's gradient (NCHW) needs out_backprop of known rank >= 3");
  char *shape = op_g1(c, "Shape", IN(0)), *col = NULL;
  if (cf) {
    int64_t v[RT_MAX_DIMS] = {-1};
    for (int d = 1; d < xs.ndims - 1; d++) v[d] = 1;
    char *s = op_gints(c, xs.ndims - 1, v);
    col = op_g2(c, "Reshape", DY, s);
    free(s);
  }
  c->dx[0] = op_g2(c, "BroadcastTo", cf ? col : DY, shape);
  free(shape), free(col);
  return c->st->code;
}

static void set_keep(rt_node *n, const void *arg) { rt_node_set_bool(n, "keep_dims", true); }

/* sum(x, axis=-1, keep_dims=True) */
static char *gsum_last(rt_grad_ctx *c, const char *x) {
  char *ax = op_gints(c, 1, (int64_t[]){-1});
  const char *in[] = {x, ax};
  char *r = x && ax ? op_grad_node(c, "Sum", "Sum", 2, in, set_keep, NULL) : NULL;
  free(ax);
  return r;
}

/* (dy - sum(dy * y)) * y */
static int softmax_grad(rt_grad_ctx *c) {
  const char *y = c->node->name;
  char *p = op_g2(c, "Mul", DY, y), *s = gsum_last(c, p), *d = op_g2(c, "Sub", DY, s);
  c->dx[0] = op_g2(c, "Mul", d, y);
  free(p), free(s), free(d);
  return c->st->code;
}

/* dy - exp(y) * sum(dy) */
static int log_softmax_grad(rt_grad_ctx *c) {
  char *e = op_g1(c, "Exp", c->node->name), *s = gsum_last(c, DY), *m = op_g2(c, "Mul", e, s);
  c->dx[0] = op_g2(c, "Sub", DY, m);
  free(e), free(s), free(m);
  return c->st->code;
}

/* d loss / d logits = dloss[:, None] * backprop; d loss / d labels = -dloss * log_softmax */
static int xent_grad(rt_grad_ctx *c) {
  if (!DY) return RT_OK;
  bool sparse = !strcmp(c->node->op, "SparseSoftmaxCrossEntropyWithLogits");
  char bp[300], *ax = op_gconst(c, RT_INT32, -1);
  snprintf(bp, sizeof bp, "%s:1", c->node->name);
  char *g = op_g2(c, "ExpandDims", DY, ax);
  c->dx[0] = op_g2(c, "Mul", g, bp);
  if (!sparse) {
    char *ls = op_g1(c, "LogSoftmax", IN(0)), *n = op_g1(c, "Neg", ls);
    c->dx[1] = op_g2(c, "Mul", g, n);
    free(ls), free(n);
  }
  free(ax), free(g);
  return c->st->code;
}

static int l2_loss_grad(rt_grad_ctx *c) {
  c->dx[0] = op_g2(c, "Mul", IN(0), DY);
  return c->st->code;
}

static void set_grad_message(rt_node *n, const void *arg) {
  char msg[600];
  snprintf(msg, sizeof msg, "Not a number (NaN) or infinity (Inf) values detected in gradient. %s",
           rt_node_string(arg, "message", ""));
  rt_node_set_string(n, "message", msg);
}

static int check_numerics_grad(rt_grad_ctx *c) {
  c->dx[0] = DY ? op_grad_node(c, "CheckNumerics", "CheckNumerics", 1, &DY, set_grad_message,
                               c->node) : NULL;
  return c->st->code;
}

#define ACT(nm, types, k, g, h)                                                          \
  {.name = nm, .inputs = "features: T", .outputs = "activations: T", .attrs = "T: " types, \
   .help = h, .shape = op_shape_unchanged, .kernel = {[RT_DEV_CPU] = k}, .grad = g}
#define ACT_GRAD(nm, in, types, k, h)                                                    \
  {.name = nm, .inputs = in, .outputs = "backprops: T", .attrs = "T: " types, .help = h,  \
   .shape = op_shape_unchanged, .kernel = {[RT_DEV_CPU] = k}}
#define ACT_GRAD_G(nm, in, types, k, g, h) \
  {.name = nm, .inputs = in, .outputs = "backprops: T", .attrs = "T: " types, .help = h, \
   .shape = op_shape_unchanged, .kernel = {[RT_DEV_CPU] = k}, .grad = g}
#define NUM "{float, double, int32, int64}"

/* ---- TopKV2: the k largest of each row (last axis), sorted, ties to the lower index ---- */

static int top_k_k(const rt_tensor *kt, int64_t *k) {
  if (!kt || rt_tensor_numel(kt) != 1) return -1;
  *k = rt_tensor_get_i64(kt, 0);
  return 0;
}

static int top_k_shape(rt_shape_ctx *c) {
  const rt_shape *x = &c->in_shapes[0];
  int64_t k = -1;
  if (c->in_values[1] && top_k_k(c->in_values[1], &k) == 0 && k < 0)
    return op_shape_error(c, 2, "Need k >= 0, got %lld", (long long)k);
  if (x->ndims == 0) return op_shape_error(c, 1, "input must be at least 1-D");
  for (int o = 0; o < 2; o++) {
    c->out_shapes[o] = *x;
    if (x->ndims > 0) c->out_shapes[o].dims[x->ndims - 1] = k;
  }
  return RT_OK;
}

typedef struct { double v; int32_t i; } topk_item;
static int topk_cmp(const void *a, const void *b) {
  const topk_item *x = a, *y = b;
  if (x->v != y->v) return x->v > y->v ? -1 : 1;   /* larger first (NaN handled by the caller) */
  return x->i < y->i ? -1 : x->i > y->i;
}

static int top_k_kernel(rt_kernel_ctx *c) {
  const rt_tensor *x = c->inputs[0];
  int64_t k;
  if (top_k_k(c->inputs[1], &k) < 0) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "k must be a scalar");
  if (x->shape.ndims < 1) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "input must be at least 1-D");
  int64_t n = x->shape.dims[x->shape.ndims - 1];
  if (k < 0) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Need k >= 0, got %lld", (long long)k);
  if (n < k)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "input must have at least k columns. Had %lld, needed %lld",
                           (long long)n, (long long)k);
  rt_shape s = x->shape;
  s.dims[s.ndims - 1] = k;
  rt_tensor *vals = rt_kernel_output(c, 0, x->dtype, &s), *idx = rt_kernel_output(c, 1, RT_INT32, &s);
  if (!vals || !idx) return c->st->code;
  int64_t rows = n ? rt_tensor_numel(x) / n : 0;
  topk_item *it = malloc((size_t)(n ? n : 1) * sizeof *it);
  if (!it) return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  for (int64_t r = 0; r < rows; r++) {
    for (int64_t j = 0; j < n; j++) {
      double v = rt_tensor_get_f64(x, r * n + j);
      it[j] = (topk_item){isnan(v) ? INFINITY : v, (int32_t)j};   /* NaN: ranked as +inf (our rule) */
    }
    qsort(it, (size_t)n, sizeof *it, topk_cmp);
    for (int64_t j = 0; j < k; j++) {
      int64_t src = r * n + it[j].i, dst = r * k + j;
      memcpy((char *)rt_tensor_data(vals) + dst * rt_dtype_size(x->dtype),
             (const char *)rt_tensor_data(x) + src * rt_dtype_size(x->dtype), rt_dtype_size(x->dtype));
      ((int32_t *)rt_tensor_data(idx))[dst] = it[j].i;
    }
  }
  free(it);
  return RT_OK;
}

static const rt_op_def nn_ops[] = {
  {.name = "TopKV2", .inputs = "input: T, k: int32", .outputs = "values: T, indices: int32",
   .attrs = "sorted: bool = true, T: {float, double, int32, int64}",
   .help = "The k largest entries of each row (last axis) and their indices, largest first.",
   .shape = top_k_shape, .kernel = {[RT_DEV_CPU] = top_k_kernel}, .grad = op_no_grad},
  {.name = "Relu", .inputs = "features: T", .outputs = "activations: T",
   .attrs = "T: {float, double, int32, int64}", .help = "max(features, 0) elementwise.",
   .shape = op_shape_unchanged, .kernel = {[RT_DEV_CPU] = op_cpu_relu}, .grad = relu_grad},
  {.name = "Sigmoid", .inputs = "x: T", .outputs = "y: T", .attrs = "T: " FLT,
   .help = "1 / (1 + exp(-x)) elementwise.", .shape = op_shape_unchanged,
   .kernel = {[RT_DEV_CPU] = op_cpu_sigmoid}, .grad = sigmoid_grad},
  {.name = "Tanh", .inputs = "x: T", .outputs = "y: T", .attrs = "T: " FLT,
   .help = "Hyperbolic tangent elementwise.", .shape = op_shape_unchanged,
   .kernel = {[RT_DEV_CPU] = op_cpu_tanh}, .grad = tanh_grad},
  {.name = "ReluGrad", .inputs = "gradients: T, features: T", .outputs = "backprops: T",
   .attrs = "T: {float, double, int32, int64}",
   .help = "Relu's gradient: gradients where features > 0, else 0.",
   .shape = op_shape_unchanged, .kernel = {[RT_DEV_CPU] = op_cpu_relu_grad}, .grad = masked_grad_grad},
  {.name = "SigmoidGrad", .inputs = "y: T, dy: T", .outputs = "z: T", .attrs = "T: " FLT,
   .help = "Sigmoid's gradient from its output: dy * y * (1 - y).",
   .shape = op_shape_unchanged, .kernel = {[RT_DEV_CPU] = op_cpu_sigmoid_grad}, .grad = sigmoid_grad_grad},
  {.name = "TanhGrad", .inputs = "y: T, dy: T", .outputs = "z: T", .attrs = "T: " FLT,
   .help = "Tanh's gradient from its output: dy * (1 - y * y).",
   .shape = op_shape_unchanged, .kernel = {[RT_DEV_CPU] = op_cpu_tanh_grad}, .grad = tanh_grad_grad},
  ACT("Relu6", NUM, op_cpu_relu6, relu6_grad, "min(max(features, 0), 6) elementwise."),
  ACT("Elu", FLT, op_cpu_elu, elu_grad, "features if > 0, else exp(features) - 1."),
  ACT("Softplus", FLT, op_cpu_softplus, softplus_grad, "log(exp(features) + 1) elementwise."),
  ACT_GRAD_G("Relu6Grad", "gradients: T, features: T", NUM, op_cpu_relu6_grad, masked_grad_grad,
           "Relu6's gradient: gradients where 0 < features < 6, else 0."),
  ACT_GRAD_G("EluGrad", "gradients: T, outputs: T", FLT, op_cpu_elu_grad, elu_grad_grad,
           "Elu's gradient from its output: gradients * (outputs + 1) where outputs <= 0."),
  ACT_GRAD_G("SoftplusGrad", "gradients: T, features: T", FLT, op_cpu_softplus_grad, softplus_grad_grad,
           "Softplus's gradient: gradients * sigmoid(features)."),
  {.name = "BiasAdd", .inputs = "value: T, bias: T", .outputs = "output: T",
   .attrs = "T: " NUM ", data_format: string = 'NHWC'",
   .help = "Adds a 1-D bias along the channel dimension (last for NHWC, 1 for NCHW).",
   .shape = bias_add_shape, .kernel = {[RT_DEV_CPU] = op_cpu_bias_add}, .grad = bias_add_grad},
  {.name = "BiasAddGrad", .inputs = "out_backprop: T", .outputs = "output: T",
   .attrs = "T: " NUM ", data_format: string = 'NHWC'",
   .help = "BiasAdd's gradient for the bias: out_backprop summed over all but channels.",
   .shape = bias_add_grad_shape, .kernel = {[RT_DEV_CPU] = op_cpu_bias_add_grad}, .grad = bias_add_grad_grad},
  {.name = "Softmax", .inputs = "logits: T", .outputs = "softmax: T", .attrs = "T: " FLT,
   .help = "exp(logits) / sum(exp(logits)) along the last dimension.", .shape = softmax_shape,
   .kernel = {[RT_DEV_CPU] = op_cpu_softmax}, .grad = softmax_grad},
  {.name = "LogSoftmax", .inputs = "logits: T", .outputs = "logsoftmax: T", .attrs = "T: " FLT,
   .help = "logits - log(sum(exp(logits))) along the last dimension.", .shape = softmax_shape,
   .kernel = {[RT_DEV_CPU] = op_cpu_log_softmax}, .grad = log_softmax_grad},
  {.name = "SoftmaxCrossEntropyWithLogits", .inputs = "features: T, labels: T",
   .outputs = "loss: T, backprop: T", .attrs = "T: " FLT,
   .help = "Per-row cross-entropy of softmax(features) against label distributions.",
   .shape = dense_xent_shape, .kernel = {[RT_DEV_CPU] = op_cpu_xent}, .grad = xent_grad},
  {.name = "SparseSoftmaxCrossEntropyWithLogits", .inputs = "features: T, labels: Tlabels",
   .outputs = "loss: T, backprop: T", .attrs = "T: " FLT ", Tlabels: {int32, int64} = int64",
   .help = "Per-row cross-entropy of softmax(features) against class indices.",
   .shape = sparse_xent_shape, .kernel = {[RT_DEV_CPU] = op_cpu_sparse_xent}, .grad = xent_grad},
  {.name = "L2Loss", .inputs = "t: T", .outputs = "output: T", .attrs = "T: " FLT,
   .help = "sum(t ** 2) / 2.", .shape = scalar_shape, .kernel = {[RT_DEV_CPU] = op_cpu_l2_loss},
   .grad = l2_loss_grad},
  {.name = "CheckNumerics", .inputs = "tensor: T", .outputs = "output: T",
   .attrs = "T: " FLT ", message: string",
   .help = "Passes tensor through; fails naming the node if it holds NaN or Inf.",
   .shape = op_shape_unchanged, .kernel = {[RT_DEV_CPU] = op_cpu_check_numerics},
   .grad = check_numerics_grad},
};

void op_nn_register(void) { rt_op_register(nn_ops, OP_COUNT(nn_ops)); }
