/* Convolution and pooling: Conv2D and its two backprop ops, MaxPool / MaxPoolGrad,
 * AvgPool / AvgPoolGrad, with TF1's signatures, window arithmetic and shape errors.
 * Kernels are NHWC only on the CPU (as TF1's); shape functions understand NCHW too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/ops_int.h"
#include "runtime/remap.h"

#define FLT "{float, double}"
#define IN(i) (c->node->inputs[i])
#define DY (c->dy[0])

bool op_window_dim(int64_t in, int64_t k, int64_t s, bool same, int64_t *out, int64_t *pad_before) {
  if (same) {
    *out = (in + s - 1) / s;
    int64_t need = (*out - 1) * s + k - in;
    *pad_before = need > 0 ? need / 2 : 0;
    return true;
  }
  *pad_before = 0;
  if (in < k) return false;
  *out = (in - k + s) / s;
  return true;
}

/* ---- shapes ---------------------------------------------------------------------- */

static bool nchw(const rt_node *n) { return !strcmp(rt_node_string(n, "data_format", "NHWC"), "NCHW"); }

/* padding must be SAME or VALID; sets *same. */
static int check_padding(rt_shape_ctx *c, bool *same) {
  const char *p = rt_node_string(c->node, "padding", "");
  *same = !strcmp(p, "SAME");
  if (*same || !strcmp(p, "VALID")) return RT_OK;
  return op_shape_error(c, 0, "Value for attr 'padding' of \"%s\" is not in the list of allowed "
                        "values: \"SAME\", \"VALID\"", p);
}

/* One spatial output dim from known sizes (or unknown). */
static int out_dim(rt_shape_ctx *c, int64_t in, int64_t k, int64_t s, bool same, int64_t *out) {
  int64_t pad;
  *out = -1;
  if (in < 0 || k < 0) return RT_OK;
  if (!op_window_dim(in, k, s, same, out, &pad))
    return op_shape_error(c, 0, "Negative dimension size caused by subtracting %lld from %lld",
                          (long long)k, (long long)in);
  return RT_OK;
}

static int conv2d_shape(rt_shape_ctx *c) {
  const rt_shape *x = &c->in_shapes[0], *f = &c->in_shapes[1];
  int ns, nd;
  const int64_t *s = op_list_ints(c->node, "strides", &ns);
  op_list_ints(c->node, "dilations", &nd);
  bool same;
  if (ns != 4)
    return op_shape_error(c, 0, "Conv2D requires the stride attribute to contain 4 values, but "
                          "got: %d", ns);
  if (nd != 0 && nd != 4)
    return op_shape_error(c, 0, "Conv2D requires the dilation attribute to contain 4 values, but "
                          "got: %d", nd);
  if (x->ndims >= 0 && x->ndims != 4) return op_rank_error(c, 4, x->ndims);
  if (f->ndims >= 0 && f->ndims != 4) return op_rank_error(c, 4, f->ndims);
  if (check_padding(c, &same)) return c->st->code;
  bool cf = nchw(c->node);
  int hd = cf ? 2 : 1, cd = cf ? 1 : 3;
  int64_t n = -1, h = -1, w = -1, ch = -1, kh = -1, kw = -1, ic = -1, oc = -1;
  if (x->ndims == 4) n = x->dims[0], h = x->dims[hd], w = x->dims[hd + 1], ch = x->dims[cd];
  if (f->ndims == 4) kh = f->dims[0], kw = f->dims[1], ic = f->dims[2], oc = f->dims[3];
  if (ch >= 0 && ic >= 0 && ch != ic) return op_dims_error(c, ch, ic);
  int64_t oh, ow;
  if (out_dim(c, h, kh, s[hd], same, &oh) || out_dim(c, w, kw, s[hd + 1], same, &ow))
    return c->st->code;
  c->out_shapes[0] = cf ? rt_shape_make(4, (int64_t[]){n, oc, oh, ow})
                        : rt_shape_make(4, (int64_t[]){n, oh, ow, oc});
  return RT_OK;
}

/* _FusedConv2D's: Conv2D's, pooled 2x2 at stride 2 where fused_ops ends in MaxPool. */
static int fused_conv2d_shape(rt_shape_ctx *c) {
  if (conv2d_shape(c)) return c->st->code;
  const rt_attr_value *v = rt_node_attr(c->node, "fused_ops");
  if (!v || v->kind != RT_ATTR_LIST_STRING || v->list.n != 3 ||
      strcmp(((char *const *)v->list.v)[2], "MaxPool"))
    return RT_OK;
  rt_shape *o = &c->out_shapes[0];
  if (o->ndims != 4) return RT_OK;
  bool same = !strcmp(rt_node_string(c->node, "pool_padding", "VALID"), "SAME");
  for (int d = 1; d <= 2; d++)
    if (o->dims[d] >= 0 && out_dim(c, o->dims[d], 2, 2, same, &o->dims[d])) return c->st->code;
  return RT_OK;
}

/* _FusedConv2DWithArgmax's: _FusedConv2D's pooled output, and its workspace alike. */
static int fused_conv2d_argmax_shape(rt_shape_ctx *c) {
  if (fused_conv2d_shape(c)) return c->st->code;
  c->out_shapes[1] = c->out_shapes[0];
  return RT_OK;
}

/* _FusedMaxPoolGradWithArgmax's: the pool's input, twice the rows and columns of grad. */
static int max_pool_grad_argmax_shape(rt_shape_ctx *c) {
  for (int i = 0; i < 2; i++)
    if (c->in_shapes[i].ndims >= 0 && c->in_shapes[i].ndims != 4)
      return op_rank_error(c, 4, c->in_shapes[i].ndims);
  rt_shape s = c->in_shapes[1];
  for (int d = 1; d <= 2 && s.ndims == 4; d++)
    if (s.dims[d] >= 0) s.dims[d] *= 2;
  c->out_shapes[0] = s;
  return RT_OK;
}

/* Output 0 from a 4-vector of sizes (input i): exact when constant, as far as known when
 * it is Shape(x). */
static int sizes_shape(rt_shape_ctx *c, int i) {
  const rt_shape *s = &c->in_shapes[i];
  if (s->ndims >= 0 && s->ndims != 1) return op_rank_error(c, 1, s->ndims);
  if (s->ndims == 1 && s->dims[0] >= 0 && s->dims[0] != 4 && (i || s->dims[0] != 2))
    return op_shape_error(c, 0, "Dimension must be 4 but is %lld", (long long)s->dims[0]);
  int64_t v[RT_MAX_DIMS];
  int n;
  rt_shape from;
  if (op_const_ints(c, i, v, RT_MAX_DIMS, &n) && n == 4) {
    for (int d = 0; d < 4; d++)
      if (v[d] < 0) return op_shape_error(c, 1u << i, "Dimension %d must be >= 0", d);
    c->out_shapes[0] = rt_shape_make(4, v);
  } else if (op_shape_input(c, i, &from) && from.ndims == 4) {
    c->out_shapes[0] = from;
  } else {
    c->out_shapes[0] = rt_shape_make(4, (int64_t[]){-1, -1, -1, -1});
  }
  return RT_OK;
}

static int backprop_shape(rt_shape_ctx *c, int sizes) {
  int ns;
  op_list_ints(c->node, "strides", &ns);
  bool same;
  if (ns != 4)
    return op_shape_error(c, 0, "Conv2D requires the stride attribute to contain 4 values, but "
                          "got: %d", ns);
  for (int i = 0; i < 3; i++)
    if (i != sizes && c->in_shapes[i].ndims >= 0 && c->in_shapes[i].ndims != 4)
      return op_rank_error(c, 4, c->in_shapes[i].ndims);
  if (check_padding(c, &same)) return c->st->code;
  return sizes_shape(c, sizes);
}

/* TF 2's input_sizes may also hold just the two spatial sizes: batch from out_backprop,
 * depth from the filter. */
static int backprop_input_shape(rt_shape_ctx *c) {
  const rt_shape *f = &c->in_shapes[1], *dy = &c->in_shapes[2];
  int64_t v[RT_MAX_DIMS];
  int n, cd = nchw(c->node) ? 1 : 3;
  if (f->ndims == 4 && dy->ndims == 4 && f->dims[3] >= 0 && dy->dims[cd] >= 0 && f->dims[3] != dy->dims[cd])
    return op_dims_error(c, dy->dims[cd], f->dims[3]);
  if (op_const_ints(c, 0, v, RT_MAX_DIMS, &n) && n != 4 && n != 2)
    return op_shape_error(c, 1, "Conv2DBackpropInput requires input_sizes to contain 4 values or 2 "
                          "values, but got: %d", n);
  if (backprop_shape(c, 0)) return c->st->code;
  if (op_const_ints(c, 0, v, RT_MAX_DIMS, &n) && n == 2)
    c->out_shapes[0] = rt_shape_make(4, (int64_t[]){dy->ndims == 4 ? dy->dims[0] : -1, v[0], v[1],
                                                    f->ndims == 4 ? f->dims[2] : -1});
  if (op_const_ints(c, 0, v, RT_MAX_DIMS, &n) && n == 2 && cd == 1)
    c->out_shapes[0] = rt_shape_make(4, (int64_t[]){dy->ndims == 4 ? dy->dims[0] : -1,
                                                    f->ndims == 4 ? f->dims[2] : -1, v[0], v[1]});
  return RT_OK;
}

/* _FusedConv2DBackpropFilterWithArgmax's: the filter from filter_shape, the bias its outputs. */
static int backprop_filter_argmax_shape(rt_shape_ctx *c) {
  int nf;
  const int64_t *f = op_list_ints(c->node, "filter_shape", &nf);
  for (int i = 0; i < 3; i++)
    if (c->in_shapes[i].ndims >= 0 && c->in_shapes[i].ndims != 4)
      return op_rank_error(c, 4, c->in_shapes[i].ndims);
  if (!f || nf != 4)
    return op_shape_error(c, 0, "filter_shape must have 4 sizes, not %d", f ? nf : 0);
  c->out_shapes[0] = rt_shape_make(4, f);
  c->out_shapes[1] = rt_shape_make(1, (int64_t[]){f[3]});
  return RT_OK;
}
static int backprop_filter_shape(rt_shape_ctx *c) { return backprop_shape(c, 1); }

static int pool_attrs(rt_shape_ctx *c, const int64_t **k, const int64_t **s, bool *same) {
  int nk, ns;
  *k = op_list_ints(c->node, "ksize", &nk);
  *s = op_list_ints(c->node, "strides", &ns);
  if (ns != 4)
    return op_shape_error(c, 0, "%s requires the stride attribute to contain 4 values, but got: "
                          "%d", c->node->op, ns);
  if (nk != 4)
    return op_shape_error(c, 0, "%s requires the ksize attribute to contain 4 values, but got: "
                          "%d", c->node->op, nk);
  return check_padding(c, same);
}

static int pool_shape(rt_shape_ctx *c) {
  const rt_shape *x = &c->in_shapes[0];
  const int64_t *k, *s;
  bool same;
  if (pool_attrs(c, &k, &s, &same)) return c->st->code;
  if (x->ndims >= 0 && x->ndims != 4) return op_rank_error(c, 4, x->ndims);
  bool cf = nchw(c->node);
  int hd = cf ? 2 : 1, cd = cf ? 1 : 3;
  int64_t n = -1, h = -1, w = -1, ch = -1, oh, ow;
  if (x->ndims == 4) n = x->dims[0], h = x->dims[hd], w = x->dims[hd + 1], ch = x->dims[cd];
  if (out_dim(c, h, k[hd], s[hd], same, &oh) || out_dim(c, w, k[hd + 1], s[hd + 1], same, &ow))
    return c->st->code;
  c->out_shapes[0] = cf ? rt_shape_make(4, (int64_t[]){n, ch, oh, ow})
                        : rt_shape_make(4, (int64_t[]){n, oh, ow, ch});
  return RT_OK;
}

static int max_pool_grad_shape(rt_shape_ctx *c) {
  const int64_t *k, *s;
  bool same;
  if (pool_attrs(c, &k, &s, &same)) return c->st->code;
  for (int i = 0; i < 3; i++)
    if (c->in_shapes[i].ndims >= 0 && c->in_shapes[i].ndims != 4)
      return op_rank_error(c, 4, c->in_shapes[i].ndims);
  return op_shape_unchanged(c);
}

/* MaxPoolGradGrad's: the pool's output (input 1). */
static int max_pool_grad_grad_shape(rt_shape_ctx *c) {
  if (max_pool_grad_shape(c)) return c->st->code;
  c->out_shapes[0] = c->in_shapes[1];
  return RT_OK;
}

static int avg_pool_grad_shape(rt_shape_ctx *c) {
  const int64_t *k, *s;
  bool same;
  if (pool_attrs(c, &k, &s, &same)) return c->st->code;
  if (c->in_shapes[1].ndims >= 0 && c->in_shapes[1].ndims != 4)
    return op_rank_error(c, 4, c->in_shapes[1].ndims);
  return sizes_shape(c, 0);
}

/* ---- gradients ------------------------------------------------------------------- */

/* The forward node's window attrs onto a gradient node. */
static void copy_window_attrs(rt_node *n, const void *arg) {
  static const char *const names[] = {"strides", "padding", "data_format", "dilations", "use_cudnn_on_gpu", "ksize",
                                      NULL};
  op_copy_attrs(n, arg, names);
}

static const op_conv_ops conv2d_ops = {"Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter",
                                        copy_window_attrs};
static int conv2d_grad(rt_grad_ctx *c) { return op_conv_grads(c, &conv2d_ops, 0); }
/* Conv2DBackpropInput is conv2d_transpose */
static int conv2d_backprop_input_grad(rt_grad_ctx *c) { return op_conv_grads(c, &conv2d_ops, 1); }
static int conv2d_backprop_filter_grad(rt_grad_ctx *c) { return op_conv_grads(c, &conv2d_ops, 2); }

static int max_pool_grad(rt_grad_ctx *c) {
  if (!DY) return RT_OK;
  const char *in[] = {IN(0), c->node->name, DY};
  c->dx[0] = op_grad_node(c, "MaxPoolGrad", "MaxPoolGrad", 3, in, copy_window_attrs, c->node);
  return c->st->code;
}

/* MaxPoolGrad and MaxPoolGradGrad are linear in grad and each other's gradient there;
 * the pool's input and output only choose the pixels (no gradient, as in TF). */
static int max_pool_grad_pair(rt_grad_ctx *c, const char *op) {
  if (!DY) return RT_OK;
  const char *in[] = {IN(0), IN(1), DY};
  c->dx[0] = op_g1(c, "ZerosLike", IN(0));
  c->dx[1] = op_g1(c, "ZerosLike", IN(1));
  c->dx[2] = op_grad_node(c, op, op, 3, in, copy_window_attrs, c->node);
  return c->st->code;
}
static int max_pool_grad_grad(rt_grad_ctx *c) { return max_pool_grad_pair(c, "MaxPoolGradGrad"); }
static int max_pool_grad_grad_grad(rt_grad_ctx *c) { return max_pool_grad_pair(c, "MaxPoolGrad"); }

static int avg_pool_grad(rt_grad_ctx *c) {
  if (!DY) return RT_OK;
  char *s0 = op_gshape_vec(c, IN(0));
  const char *in[] = {s0, DY};
  c->dx[0] = s0 ? op_grad_node(c, "AvgPoolGrad", "AvgPoolGrad", 2, in, copy_window_attrs, c->node)
                : NULL;
  free(s0);
  return c->st->code;
}

/* AvgPoolGrad is linear in grad: its gradient is the pool itself (none for the shape). */
static int avg_pool_grad_grad(rt_grad_ctx *c) {
  if (!DY) return RT_OK;
  const char *in[] = {DY};
  c->dx[1] = op_grad_node(c, "AvgPool", "AvgPool", 1, in, copy_window_attrs, c->node);
  return c->st->code;
}

/* ---- the table ------------------------------------------------------------------- */

#define CONV_ATTRS                                                                       \
  "T: " FLT ", strides: list(int), use_cudnn_on_gpu: bool = true, padding: string, "      \
  "data_format: string = 'NHWC', dilations: list(int) = []"
#define POOL_ATTRS                                                                       \
  "T: " FLT ", ksize: list(int) >= 4, strides: list(int) >= 4, padding: string, "        \
  "data_format: string = 'NHWC'"

#define FUSED_CONV_ATTRS                                                                   \
  CONV_ATTRS ", num_args: int >= 0, fused_ops: list(string) = [], epsilon: float = 0.0001, " \
             "leakyrelu_alpha: float = 0.2, pool_padding: string = 'VALID'"

static const rt_op_def conv_ops[] = {
  {.name = "Conv2D", .inputs = "input: T, filter: T", .outputs = "output: T", .attrs = CONV_ATTRS,
   .help = "2-D convolution of NHWC input with a [height, width, in, out] filter.",
   .shape = conv2d_shape, .kernel = {[RT_DEV_CPU] = op_cpu_conv2d}, .grad = conv2d_grad},
  /* Made only by the remapper (runtime/remap.c) from Conv2D -> BiasAdd (-> Relu (->
   * MaxPool 2x2, stride 2)) on a CPU, after the gradients are built, as TF's grappler does:
   * no gradient of its own. */
  {.name = "_FusedConv2D", .inputs = "input: T, filter: T, args: num_args * T",
   .outputs = "output: T",
   .attrs = FUSED_CONV_ATTRS,
   .help = "Conv2D with its BiasAdd, BiasAdd and Relu, or those and a 2x2 MaxPool at "
           "stride 2 (padding pool_padding), in one pass (fused_ops).",
   .shape = fused_conv2d_shape, .kernel = {[RT_DEV_CPU] = op_cpu_fused_conv2d},
   .flags = RT_OP_INTERNAL},
  /* The remapper's, for a training step: the same with the pool's workspace, so that the
   * gradient needs neither the Relu's output nor the pool's (max_2x2_ws, ops/cpu/conv.c). */
  {.name = "_FusedConv2DWithArgmax", .inputs = "input: T, filter: T, args: num_args * T",
   .outputs = "output: T, argmax: uint8",
   .attrs = FUSED_CONV_ATTRS,
   .help = "_FusedConv2D with fused_ops [BiasAdd, Relu, MaxPool], and for each pooled value "
           "a byte: which pixel of its window held it first, plus 4 if it is above 0.",
   .shape = fused_conv2d_argmax_shape, .kernel = {[RT_DEV_CPU] = op_cpu_fused_conv2d_argmax},
   .flags = RT_OP_INTERNAL},
  {.name = "Conv2DBackpropInput", .inputs = "input_sizes: int32, filter: T, out_backprop: T",
   .outputs = "output: T", .attrs = CONV_ATTRS,
   .help = "Conv2D's gradient for its input, of shape input_sizes.",
   .shape = backprop_input_shape, .kernel = {[RT_DEV_CPU] = op_cpu_conv2d_backprop_input},
   .grad = conv2d_backprop_input_grad},
  {.name = "Conv2DBackpropFilter", .inputs = "input: T, filter_sizes: int32, out_backprop: T",
   .outputs = "output: T", .attrs = CONV_ATTRS,
   .help = "Conv2D's gradient for its filter, of shape filter_sizes.",
   .shape = backprop_filter_shape, .kernel = {[RT_DEV_CPU] = op_cpu_conv2d_backprop_filter},
   .grad = conv2d_backprop_filter_grad},
  /* The remapper's: a first layer's Conv2DBackpropFilter and bias gradient from the
   * workspace of its pool, where nothing needs the layer's input gradient. */
  {.name = "_FusedConv2DBackpropFilterWithArgmax", .inputs = "input: T, argmax: uint8, grad: T",
   .outputs = "filter_backprop: T, bias_backprop: T",
   .attrs = CONV_ATTRS ", filter_shape: list(int), bias_sum: string = '_SumToShapeOf'",
   .help = "Conv2DBackpropFilter and the bias gradient of a convolution whose output went through "
           "bias, Relu and a 2x2 pool at stride 2, from the pool's workspace and gradient.",
   .shape = backprop_filter_argmax_shape,
   .kernel = {[RT_DEV_CPU] = op_cpu_fused_conv2d_backprop_filter_argmax}, .flags = RT_OP_INTERNAL},
  {.name = "MaxPool", .inputs = "input: T", .outputs = "output: T", .attrs = POOL_ATTRS,
   .help = "Maximum over each ksize window, moved by strides.", .shape = pool_shape,
   .kernel = {[RT_DEV_CPU] = op_cpu_max_pool}, .grad = max_pool_grad},
  {.name = "MaxPoolGrad", .inputs = "orig_input: T, orig_output: T, grad: T",
   .outputs = "output: T", .attrs = POOL_ATTRS,
   .help = "MaxPool's gradient: grad routed to the first maximum of each window.",
   .shape = max_pool_grad_shape, .kernel = {[RT_DEV_CPU] = op_cpu_max_pool_grad},
   .grad = max_pool_grad_grad},
  {.name = "MaxPoolGradGrad", .inputs = "orig_input: T, orig_output: T, grad: T",
   .outputs = "output: T", .attrs = POOL_ATTRS,
   .help = "MaxPoolGrad's gradient: of grad (shaped as orig_input), each window's value at its "
           "first maximum.",
   .shape = max_pool_grad_grad_shape, .kernel = {[RT_DEV_CPU] = op_cpu_max_pool_grad_grad},
   .grad = max_pool_grad_grad_grad},
  /* The remapper's (runtime/remap.c): MaxPoolGrad -> ReluGrad on orig_input, on a CPU. */
  {.name = "_FusedMaxPoolGrad", .inputs = "orig_input: T, orig_output: T, grad: T",
   .outputs = "output: T", .attrs = POOL_ATTRS ", fused_ops: list(string) = []",
   .help = "MaxPoolGrad, then ReluGrad on orig_input, in one pass (fused_ops [ReluGrad]).",
   .shape = max_pool_grad_shape, .kernel = {[RT_DEV_CPU] = op_cpu_fused_max_pool_grad},
   .flags = RT_OP_INTERNAL},
  /* The remapper's: _FusedMaxPoolGrad from _FusedConv2DWithArgmax's workspace. */
  {.name = "_FusedMaxPoolGradWithArgmax", .inputs = "argmax: uint8, grad: T",
   .outputs = "output: T", .attrs = POOL_ATTRS ", fused_ops: list(string) = []",
   .help = "_FusedMaxPoolGrad of a 2x2 pool at stride 2 from its workspace "
           "(_FusedConv2DWithArgmax's output 1).",
   .shape = max_pool_grad_argmax_shape,
   .kernel = {[RT_DEV_CPU] = op_cpu_fused_max_pool_grad_argmax}, .flags = RT_OP_INTERNAL},
  {.name = "AvgPool", .inputs = "value: T", .outputs = "output: T", .attrs = POOL_ATTRS,
   .help = "Mean over each ksize window (padding not counted), moved by strides.",
   .shape = pool_shape, .kernel = {[RT_DEV_CPU] = op_cpu_avg_pool}, .grad = avg_pool_grad},
  {.name = "AvgPoolGrad", .inputs = "orig_input_shape: int32, grad: T", .outputs = "output: T",
   .attrs = POOL_ATTRS, .help = "AvgPool's gradient: grad spread evenly over each window.",
   .shape = avg_pool_grad_shape, .kernel = {[RT_DEV_CPU] = op_cpu_avg_pool_grad}, .grad = avg_pool_grad_grad},
};

void op_conv_register(void) {
  rt_op_register(conv_ops, OP_COUNT(conv_ops));
  rt_remap_set_filter_argmax(op_cpu_filter_argmax_fast);
}
