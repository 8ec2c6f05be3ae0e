/* 3-D convolutions and pools, as TF 1.x has them (tf.nn.conv3d, conv3d_transpose,
 * max_pool3d, avg_pool3d; C3D, 3D U-Net):
 *   Conv3D(input, filter)                                  filter [kd, kh, kw, in, out]
 *   Conv3DBackpropInputV2(input_sizes, filter, out_backprop)
 *   Conv3DBackpropFilterV2(input, filter_sizes, out_backprop)
 *   MaxPool3D, MaxPool3DGrad(orig_input, orig_output, grad)
 *   AvgPool3D, AvgPool3DGrad(orig_input_shape, grad)
 * NDHWC on the CPU, float and double; padding SAME or VALID; Conv3D's dilations any. Conv3D
 * is an im2col into op_gemm; the rest are direct loops whose innermost loop runs over a
 * channel axis of both tensors, so they vectorize. Every kernel gathers (one output element
 * written by one thread), and the filter gradient sums per-tile partials in tile order, so
 * no result depends on the thread count. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "ops/cpu/gemm.h"
#include "ops/ops_int.h"
#include "runtime/pool.h"

#define IN(i) (c->node->inputs[i])
#define DY (c->dy[0])

enum { PAR_MIN = 1 << 14 };             /* multiply-adds below which one thread does the op */
#define ATTR_MAX INT64_C(0x7fffffff)    /* strides, dilations, ksize: keeps the index sums in range */
#define DIM_MAX (INT64_C(1) << 40)      /* a spatial size or window from a tensor */

static bool cf_format(const rt_node *n) { return !strcmp(rt_node_string(n, "data_format", "NDHWC"), "NCDHW"); }

/* ---- shapes ---------------------------------------------------------------------- */

/* A list attr of 5 (count < 5: TF's op-def words; more: the shape function's `more`). */
static const int64_t *list5(rt_shape_ctx *c, const char *name, const char *more) {
  int n;
  const int64_t *v = op_list_ints(c->node, name, &n);
  if (n < 5) {
    op_shape_error(c, 0, "Attr '%s' of '%s' Op passed list of length %d less than minimum 5.", name,
                   c->node->op, n);
    return NULL;
  }
  if (n != 5) {
    op_shape_error(c, 0, "%s attribute to contain 5 values, but got: %d", more, n);
    return NULL;
  }
  for (int i = 0; i < 5; i++)
    if (v[i] < 1 || v[i] > ATTR_MAX) {
      if (!strcmp(name, "strides") && v[i] < 1) op_shape_error(c, 0, "Stride must be > 0, but got %lld", (long long)v[i]);
      else op_shape_error(c, 0, "%s must be > 0 and < 2^31, but got %lld", name, (long long)v[i]);
      return NULL;
    }
  return v;
}

static int padding_attr(rt_shape_ctx *c, bool *same) {
  const char *p = rt_node_string(c->node, "padding", "");
  *same = !strcmp(p, "SAME");
  if (!*same && strcmp(p, "VALID"))
    return op_shape_error(c, 0, "Attr 'padding' of '%s' Op passed string '%s' not in: \"SAME\", \"VALID\".",
                          c->node->op, p);
  return RT_OK;
}

/* One spatial output size from a known size and window (else unknown), TF1's shape words. */
static int out_dim(rt_shape_ctx *c, int64_t in, int64_t k, int64_t s, int64_t d, bool same, int64_t *out) {
  *out = -1;
  if (in >= 0 && in <= DIM_MAX && same) {   /* SAME needs no window */
    *out = (in + s - 1) / s;
    return RT_OK;
  }
  if (in < 0 || k < 0 || k > DIM_MAX || in > DIM_MAX || (k > 1 && k - 1 > (INT64_C(1) << 62) / d)) return RT_OK;
  int64_t eff = k ? (k - 1) * d + 1 : 0;
  if (in < eff)
    return op_shape_error(c, 0, "Negative dimension size caused by subtracting %lld from %lld",
                          (long long)eff, (long long)in);
  else *out = (in - eff + s) / s;
  return RT_OK;
}

/* Spatial axes and the channel axis of a 5-D tensor in this node's format. */
static void axes(const rt_node *n, int *sp, int *ch) { *sp = cf_format(n) ? 2 : 1, *ch = cf_format(n) ? 1 : 4; }

static int conv3d_shape(rt_shape_ctx *c) {
  const rt_shape *x = &c->in_shapes[0], *f = &c->in_shapes[1];
  if (x->ndims >= 0 && x->ndims != 5) return op_rank_error(c, 5, x->ndims);
  if (f->ndims >= 0 && f->ndims != 5) return op_rank_error(c, 5, f->ndims);
  const int64_t *s = list5(c, "strides", "Conv3D requires the stride"), *d = NULL;
  if (!s) return c->st->code;
  int nd;
  op_list_ints(c->node, "dilations", &nd);
  static const int64_t ones[5] = {1, 1, 1, 1, 1};
  if (nd && !(d = list5(c, "dilations", "Conv3D requires the dilation"))) return c->st->code;
  if (!d) d = ones;
  bool same;
  if (padding_attr(c, &same)) return c->st->code;
  int sp, cd;
  axes(c->node, &sp, &cd);
  int64_t n = -1, sz[3] = {-1, -1, -1}, ch = -1, k[3] = {-1, -1, -1}, fc = -1, oc = -1, o[3];
  if (x->ndims == 5) {
    n = x->dims[0], ch = x->dims[cd];
    for (int i = 0; i < 3; i++) sz[i] = x->dims[sp + i];
  }
  if (f->ndims == 5) {
    for (int i = 0; i < 3; i++) k[i] = f->dims[i];
    fc = f->dims[3], oc = f->dims[4];
  }
  if (ch >= 0 && fc > 0 && ch % fc)
    return op_shape_error(c, 0, "Depth of input (%lld) is not a multiple of input depth of filter (%lld)",
                          (long long)ch, (long long)fc);
  if (ch >= 0 && fc > 0 && oc >= 0 && oc % (ch / fc))
    return op_shape_error(c, 0, "Depth of output (%lld) is not a multiple of the number of groups (%lld)",
                          (long long)oc, (long long)(ch / fc));
  for (int i = 0; i < 3; i++)
    if (out_dim(c, sz[i], k[i], s[sp + i], d[sp + i], same, &o[i])) return c->st->code;
  c->out_shapes[0] = cf_format(c->node) ? rt_shape_make(5, (int64_t[]){n, oc, o[0], o[1], o[2]})
                                        : rt_shape_make(5, (int64_t[]){n, o[0], o[1], o[2], oc});
  return RT_OK;
}

/* The backprops' and AvgPool3DGrad's: output 0 is the 5-vector input `sizes` (as far as it
 * is known); the other inputs rank 5. */
static int sizes_shape(rt_shape_ctx *c, int sizes, bool conv) {
  for (int i = 0; i < (conv ? 3 : 2); i++)
    if (i != sizes && c->in_shapes[i].ndims >= 0 && c->in_shapes[i].ndims != 5)
      return op_rank_error(c, 5, c->in_shapes[i].ndims);
  const rt_shape *sv = &c->in_shapes[sizes];
  if (sv->ndims >= 0 && sv->ndims != 1) return op_rank_error(c, 1, sv->ndims);
  if (conv ? !list5(c, "strides", "Conv3D requires the stride")
           : !list5(c, "ksize", "Pool3D requires the ksize") || !list5(c, "strides", "Pool3D ops require the stride"))
    return c->st->code;
  bool same;
  if (padding_attr(c, &same)) return c->st->code;
  rt_shape out;
  if (op_shape_input(c, sizes, &out) && out.ndims >= 0) {
    if (out.ndims != 5) return op_rank_error(c, 5, out.ndims);
    for (int k = 0; k < 5; k++)
      if (out.dims[k] < -1) return op_shape_error(c, 1u << sizes, "Dimension %d must be >= -1", k);
    c->out_shapes[0] = out;
    return RT_OK;
  }
  if (sv->ndims == 1 && sv->dims[0] >= 0 && sv->dims[0] != 5) return op_rank_error(c, 5, (int)sv->dims[0]);
  c->out_shapes[0] = rt_shape_make(5, (int64_t[]){-1, -1, -1, -1, -1});
  return RT_OK;
}
static int backprop_input_shape(rt_shape_ctx *c) { return sizes_shape(c, 0, true); }
static int backprop_filter_shape(rt_shape_ctx *c) { return sizes_shape(c, 1, true); }
static int avg_pool_grad_shape(rt_shape_ctx *c) { return sizes_shape(c, 0, false); }

static int pool_shape(rt_shape_ctx *c) {
  const rt_shape *x = &c->in_shapes[0];
  if (x->ndims >= 0 && x->ndims != 5) return op_rank_error(c, 5, x->ndims);
  const int64_t *k = list5(c, "ksize", "Pool3D requires the ksize"), *s;
  if (!k || !(s = list5(c, "strides", "Pool3D ops require the stride"))) return c->st->code;
  bool same;
  if (padding_attr(c, &same)) return c->st->code;
  int sp, cd;
  axes(c->node, &sp, &cd);
  int64_t v[5] = {-1, -1, -1, -1, -1};
  if (x->ndims == 5) memcpy(v, x->dims, sizeof v);
  for (int i = 0; i < 3; i++)
    if (out_dim(c, v[sp + i], k[sp + i], s[sp + i], 1, same, &v[sp + i])) return c->st->code;
  c->out_shapes[0] = rt_shape_make(5, v);
  return RT_OK;
}

/* MaxPool3DGrad: orig_input's shape; all three rank 5. */
static int max_pool_grad_shape(rt_shape_ctx *c) {
  for (int i = 0; i < 3; i++)
    if (c->in_shapes[i].ndims >= 0 && c->in_shapes[i].ndims != 5) return op_rank_error(c, 5, c->in_shapes[i].ndims);
  c->out_shapes[0] = c->in_shapes[0].ndims == 5 ? c->in_shapes[0] : rt_shape_make(5, (int64_t[]){-1, -1, -1, -1, -1});
  return RT_OK;
}

/* ---- geometry -------------------------------------------------------------------- */

typedef struct geom {
  int64_t n, in[3], ic;       /* input: batch, depth / rows / cols, channels */
  int64_t k[3], oc;           /* window; output channels (convolutions) */
  int64_t s[3], d[3];         /* strides, dilations */
  int64_t out[3], pad[3];     /* output size; padding before */
} geom;

static int64_t pixels(const int64_t *v) { return v[0] * v[1] * v[2]; }

static int need_float(rt_kernel_ctx *c, rt_dtype t) {
  if (t == RT_FLOAT || t == RT_DOUBLE) return RT_OK;
  return rt_kernel_error(c, RT_UNIMPLEMENTED, "no CPU kernel for %s of %s", c->node->op, op_tf_type(t));
}

static int padding_kernel(rt_kernel_ctx *c, bool *same) {
  const char *p = rt_node_string(c->node, "padding", "");
  *same = !strcmp(p, "SAME");
  if (!*same && strcmp(p, "VALID"))
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Value for attr 'padding' of \"%s\" is not in the list of "
                           "allowed values: \"SAME\", \"VALID\"", p);
  return RT_OK;
}

/* A 5-list attr for a kernel, each value in [1, 2^31). */
static const int64_t *klist5(rt_kernel_ctx *c, const char *name, const char *count_msg, const char *what) {
  int n;
  const int64_t *v = op_list_ints(c->node, name, &n);
  if (n != 5) {
    rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s", count_msg);
    return NULL;
  }
  for (int i = 0; i < 5; i++)
    if (v[i] < 1 || v[i] > ATTR_MAX) {
      rt_kernel_error(c, RT_INVALID_ARGUMENT, "Sliding window %s must be positive. The specified or inferred %s "
                      "is: %lld,%lld,%lld,%lld,%lld", what, what, (long long)v[0], (long long)v[1],
                      (long long)v[2], (long long)v[3], (long long)v[4]);
      return NULL;
    }
  return v;
}

/* Output size and padding of one spatial axis, as TF's GetWindowedOutputSize (VALID with
 * the window past the input: 0 while (in - eff + s) / s is not negative). */
static int window_dim(rt_kernel_ctx *c, geom *g, int a, bool same) {
  int64_t in = g->in[a], k = g->k[a], s = g->s[a], d = g->d[a];
  if (in > DIM_MAX || k > DIM_MAX || (k > 1 && k - 1 > (INT64_C(1) << 62) / d))
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s: sizes too large: input %lld, window %lld, dilation %lld",
                           c->node->op, (long long)in, (long long)k, (long long)d);
  int64_t eff = k ? (k - 1) * d + 1 : 0;
  if (same) {
    g->out[a] = (in + s - 1) / s;
    int64_t need = (g->out[a] - 1) * s + eff - in;
    g->pad[a] = need > 0 ? need / 2 : 0;
    return RT_OK;
  }
  g->out[a] = (in - eff + s) / s, g->pad[a] = 0;
  if (g->out[a] < 0)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Computed output size would be negative: %lld [input_size: %lld, "
                           "effective_filter_size: %lld, stride: %lld]", (long long)g->out[a], (long long)in,
                           (long long)eff, (long long)s);
  return RT_OK;
}

/* A convolution's attrs as TF's CPU kernels check them, into g. */
static int conv_attrs(rt_kernel_ctx *c, geom *g, bool *same) {
  if (strcmp(rt_node_string(c->node, "data_format", "NDHWC"), "NDHWC"))
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "%s on the CPU supports only the NDHWC data format, not %s",
                           c->node->op, rt_node_string(c->node, "data_format", ""));
  const int64_t *s = klist5(c, "strides", "Sliding window strides field must specify 5 dimensions", "stride"), *d;
  if (!s) return c->st->code;
  if (s[0] != 1 || s[4] != 1)
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "Current implementation does not yet support strides in the "
                           "batch and depth dimensions.");
  int nd;
  op_list_ints(c->node, "dilations", &nd);
  static const int64_t ones[5] = {1, 1, 1, 1, 1};
  d = nd ? klist5(c, "dilations", "Dilation rates field must specify 5 dimensions", "dilation") : ones;
  if (!d) return c->st->code;
  if (d[0] != 1 || d[4] != 1)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Current implementation does not yet support dilations rates in "
                           "the batch and depth dimensions.");
  for (int i = 0; i < 3; i++) g->s[i] = s[i + 1], g->d[i] = d[i + 1];
  return padding_kernel(c, same);
}

/* g of a convolution from input dims xd and filter dims fd (5 each); `label` prefixes the
 * backprops' messages. */
static int conv_geom(rt_kernel_ctx *c, const char *label, const int64_t *xd, const int64_t *fd, geom *g) {
  bool same = false;
  if (conv_attrs(c, g, &same)) return c->st->code;
  if (xd[4] != fd[3])
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%sinput and filter must have the same depth: %lld vs %lld",
                           label, (long long)xd[4], (long long)fd[3]);
  g->n = xd[0], g->ic = xd[4], g->oc = fd[4];
  for (int a = 0; a < 3; a++) {
    g->in[a] = xd[a + 1], g->k[a] = fd[a];
    if (window_dim(c, g, a, same)) return c->st->code;
  }
  return RT_OK;
}

/* A pool's attrs and geometry from input dims xd (5). */
static int pool_geom(rt_kernel_ctx *c, const int64_t *xd, bool avg, geom *g) {
  if (strcmp(rt_node_string(c->node, "data_format", "NDHWC"), "NDHWC"))
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Default Pooling3DOp only supports NDHWC on device type CPU");
  const int64_t *k = klist5(c, "ksize", "Sliding window ksize field must specify 5 dimensions", "ksize"), *s;
  if (!k || !(s = klist5(c, "strides", "Sliding window stride field must specify 5 dimensions", "stride")))
    return c->st->code;
  if (k[0] != 1 || s[0] != 1)
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "Pooling is not yet supported on the batch dimension.");
  if (k[4] != 1 || s[4] != 1)
    return rt_kernel_error(c, RT_UNIMPLEMENTED, avg ? "AvgPooling3D supports exactly one of pooling across depth "
                           "or pooling across depth/width/height." : "Pooling is not yet supported on the depth "
                           "dimension.");
  bool same;
  if (padding_kernel(c, &same)) return c->st->code;
  g->n = xd[0], g->ic = g->oc = xd[4];
  for (int a = 0; a < 3; a++) {
    g->in[a] = xd[a + 1], g->k[a] = k[a + 1], g->s[a] = s[a + 1], g->d[a] = 1;
    if (window_dim(c, g, a, same)) return c->st->code;
  }
  return RT_OK;
}

/* A 5-vector of sizes (input_sizes, filter_sizes, orig_input_shape) into v; its element
 * count must fit in int64. */
static int sizes_vec(rt_kernel_ctx *c, const char *label, const char *what, const rt_tensor *t, int64_t *v) {
  char sa[160];
  if (t->shape.ndims != 1 || t->shape.dims[0] != 5)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s: %s must be a vector of 5 sizes, not %s", label, what,
                           op_shape_tf(&t->shape, sa, sizeof sa));
  int64_t total = 1;
  for (int d = 0; d < 5; d++) {
    if ((v[d] = rt_tensor_get_i64(t, d)) < 0)
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s: Dimension %d of %s must be >= 0, not %lld", label, d,
                             what, (long long)v[d]);
    if (v[d] > DIM_MAX || (v[d] && total > INT64_MAX / 16 / v[d]))
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s: Dimension %d of %s is too large: %lld", label, d, what,
                             (long long)v[d]);
    total *= v[d] ? v[d] : 1;
  }
  return RT_OK;
}

/* `what` of shape `got` must be `want` (the backprops' out_backprop, the pool gradients). */
static int check_shape(rt_kernel_ctx *c, const char *what, const rt_shape *got, const int64_t *want) {
  bool ok = got->ndims == 5;
  for (int i = 0; ok && i < 5; i++) ok = got->dims[i] == want[i];
  if (ok) return RT_OK;
  char sa[160], sb[160];
  rt_shape w = rt_shape_make(5, want);
  return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Expected %s shape to be %s, but got %s", what,
                         op_shape_tf(&w, sa, sizeof sa), op_shape_tf(got, sb, sizeof sb));
}

static void out_dims(const geom *g, int64_t *v) {
  v[0] = g->n, v[1] = g->out[0], v[2] = g->out[1], v[3] = g->out[2], v[4] = g->oc;
}

static int need_rank5(rt_kernel_ctx *c, const char *label, const char *what, const rt_tensor *t) {
  if (t->shape.ndims == 5) return RT_OK;
  char sa[160];
  return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s%s must be 5-dimensional: %s", label, what,
                         op_shape_tf(&t->shape, sa, sizeof sa));
}

/* Large scratch: NULL with RESOURCE_EXHAUSTED set when it cannot be had. */
static void *scratch(rt_kernel_ctx *c, int64_t elems, size_t esize) {
  void *p = elems > 0 && (uint64_t)elems <= SIZE_MAX / esize ? malloc((size_t)elems * esize) : NULL;
  if (!p)
    rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "%s: out of memory for %lld elements of scratch", c->node->op,
                    (long long)elems);
  return p;
}

/* ---- kernels --------------------------------------------------------------------- */

typedef struct job {
  const geom *g;
  const void *x, *f, *dy, *y;
  void *out, *part;
  int64_t p0, tiles, rows;
  const int64_t *cnt[3];    /* AvgPool3DGrad: the windows' sizes per axis */
} job;

/* The valid window taps of output o on axis a: [lo, hi) of tap indices. */
static void taps(const geom *g, int a, int64_t o, int64_t *lo, int64_t *hi) {
  int64_t start = o * g->s[a] - g->pad[a], d = g->d[a];
  *lo = start >= 0 ? 0 : (-start + d - 1) / d;
  int64_t last = g->in[a] - 1 - start;          /* taps t with start + t * d <= in - 1 */
  *hi = last < 0 ? 0 : last / d + 1;
  if (*hi > g->k[a]) *hi = g->k[a];
  if (*lo > *hi) *lo = *hi;
}

/* The outputs whose window holds input i on axis a (pools: dilation 1): [lo, hi). */
static void windows(const geom *g, int a, int64_t i, int64_t *lo, int64_t *hi) {
  int64_t p = i + g->pad[a], s = g->s[a];
  *lo = p < g->k[a] ? 0 : (p - g->k[a]) / s + 1;
  *hi = p / s + 1;
  if (*hi > g->out[a]) *hi = g->out[a];
  if (*lo > *hi) *lo = *hi;
}

/* For element type T:
 * im2col:    patches of output pixels [p0 + lo, p0 + hi): row p holds taps x channels.
 * bin_rows:  input rows [lo, hi) of n * id * ih of the input gradient, gathered from the
 *            output pixels whose windows hold them; ft is the filter as [tap][out][in].
 * bfil_tile: one tile of output rows' filter sums into its own partial.
 * maxp_rows / avgp_rows: pool output rows [lo, hi) of n * od * oh.
 * maxg_rows / avgg_rows: the pools' input-gradient rows [lo, hi) of n * id * ih. */
#define CONV3D(T)                                                                               \
  static void im2col_##T(void *arg, int64_t lo, int64_t hi, int who) {                         \
    (void)who;                                                                                  \
    const job *j = arg;                                                                         \
    const geom *g = j->g;                                                                       \
    const T *x = j->x;                                                                          \
    const int64_t C = g->ic, K = g->k[0] * g->k[1] * g->k[2] * C;                              \
    for (int64_t r = lo; r < hi; r++) {                                                         \
      int64_t p = j->p0 + r, ox = p % g->out[2], oy = p / g->out[2] % g->out[1];               \
      int64_t oz = p / (g->out[2] * g->out[1]) % g->out[0], b = p / pixels(g->out);            \
      T *row = (T *)j->out + r * K;                                                             \
      for (int64_t a = 0; a < g->k[0]; a++) {                                                   \
        int64_t iz = oz * g->s[0] - g->pad[0] + a * g->d[0];                                    \
        for (int64_t bb = 0; bb < g->k[1]; bb++) {                                              \
          int64_t iy = oy * g->s[1] - g->pad[1] + bb * g->d[1];                                 \
          for (int64_t cc = 0; cc < g->k[2]; cc++) {                                            \
            int64_t ix = ox * g->s[2] - g->pad[2] + cc * g->d[2];                               \
            T *o = row + ((a * g->k[1] + bb) * g->k[2] + cc) * C;                               \
            if (iz < 0 || iz >= g->in[0] || iy < 0 || iy >= g->in[1] || ix < 0 || ix >= g->in[2]) \
              memset(o, 0, (size_t)C * sizeof(T));                                              \
            else                                                                                \
              memcpy(o, x + (((b * g->in[0] + iz) * g->in[1] + iy) * g->in[2] + ix) * C,          \
                     (size_t)C * sizeof(T));                                                    \
          }                                                                                     \
        }                                                                                       \
      }                                                                                         \
    }                                                                                           \
  }                                                                                             \
  static void bin_rows_##T(void *arg, int64_t lo, int64_t hi, int who) {                       \
    (void)who;                                                                                  \
    const job *j = arg;                                                                         \
    const geom *g = j->g;                                                                       \
    const T *dy = j->dy, *ft = j->f;                                                            \
    T *dx = j->out;                                                                             \
    const int64_t C = g->ic, OC = g->oc;                                                        \
    for (int64_t r = lo; r < hi; r++) {                                                         \
      int64_t iy = r % g->in[1], iz = r / g->in[1] % g->in[0], b = r / (g->in[1] * g->in[0]);  \
      for (int64_t ix = 0; ix < g->in[2]; ix++) {                                               \
        T *restrict o = dx + (r * g->in[2] + ix) * C;                                           \
        for (int64_t k = 0; k < C; k++) o[k] = 0;                                               \
        for (int64_t a = 0; a < g->k[0]; a++) {                                                 \
          int64_t t = iz + g->pad[0] - a * g->d[0];                                             \
          if (t < 0 || t % g->s[0] || t / g->s[0] >= g->out[0]) continue;                       \
          for (int64_t bb = 0; bb < g->k[1]; bb++) {                                            \
            int64_t u = iy + g->pad[1] - bb * g->d[1];                                          \
            if (u < 0 || u % g->s[1] || u / g->s[1] >= g->out[1]) continue;                     \
            for (int64_t cc = 0; cc < g->k[2]; cc++) {                                          \
              int64_t v = ix + g->pad[2] - cc * g->d[2];                                        \
              if (v < 0 || v % g->s[2] || v / g->s[2] >= g->out[2]) continue;                   \
              const T *restrict d = dy + (((b * g->out[0] + t / g->s[0]) * g->out[1] + u / g->s[1]) \
                                          * g->out[2] + v / g->s[2]) * OC;                     \
              const T *restrict fp = ft + ((a * g->k[1] + bb) * g->k[2] + cc) * OC * C;         \
              for (int64_t q = 0; q < OC; q++) {                                                \
                T w = d[q];                                                                     \
                _Pragma("omp simd") for (int64_t k = 0; k < C; k++) o[k] += w * fp[q * C + k];  \
              }                                                                                 \
            }                                                                                   \
          }                                                                                     \
        }                                                                                       \
      }                                                                                         \
    }                                                                                           \
  }                                                                                             \
  static void bfil_tile_##T(void *arg, int64_t tile, int who) {                                \
    (void)who;                                                                                  \
    const job *j = arg;                                                                         \
    const geom *g = j->g;                                                                       \
    const T *x = j->x, *dy = j->dy;                                                             \
    const int64_t C = g->ic, OC = g->oc, len = g->k[0] * g->k[1] * g->k[2] * C * OC;           \
    T *part = (T *)j->part + tile * len;                                                        \
    int64_t lo, hi;                                                                             \
    rt_tile_range(j->rows, j->tiles, tile, &lo, &hi);                                           \
    memset(part, 0, (size_t)len * sizeof(T));                                                   \
    for (int64_t r = lo; r < hi; r++) {                                                         \
      int64_t oy = r % g->out[1], oz = r / g->out[1] % g->out[0], b = r / (g->out[1] * g->out[0]); \
      int64_t za, zb, ya, yb;                                                                   \
      taps(g, 0, oz, &za, &zb);                                                                 \
      taps(g, 1, oy, &ya, &yb);                                                                 \
      for (int64_t ox = 0; ox < g->out[2]; ox++) {                                              \
        const T *restrict d = dy + (r * g->out[2] + ox) * OC;                                   \
        int64_t xa, xb;                                                                         \
        taps(g, 2, ox, &xa, &xb);                                                               \
        for (int64_t a = za; a < zb; a++) {                                                     \
          int64_t iz = oz * g->s[0] - g->pad[0] + a * g->d[0];                                  \
          for (int64_t bb = ya; bb < yb; bb++) {                                                \
            int64_t iy = oy * g->s[1] - g->pad[1] + bb * g->d[1];                               \
            for (int64_t cc = xa; cc < xb; cc++) {                                              \
              int64_t ix = ox * g->s[2] - g->pad[2] + cc * g->d[2];                             \
              const T *restrict xp = x + (((b * g->in[0] + iz) * g->in[1] + iy) * g->in[2] + ix) * C; \
              T *restrict p = part + ((a * g->k[1] + bb) * g->k[2] + cc) * C * OC;              \
              for (int64_t ch = 0; ch < C; ch++) {                                              \
                T v = xp[ch];                                                                   \
                _Pragma("omp simd") for (int64_t q = 0; q < OC; q++) p[ch * OC + q] += v * d[q]; \
              }                                                                                 \
            }                                                                                   \
          }                                                                                     \
        }                                                                                       \
      }                                                                                         \
    }                                                                                           \
  }                                                                                             \
  static void pool_rows_##T(void *arg, int64_t lo, int64_t hi, int who, bool avg) {            \
    (void)who;                                                                                  \
    const job *j = arg;                                                                         \
    const geom *g = j->g;                                                                       \
    const T *x = j->x;                                                                          \
    const int64_t C = g->ic;                                                                    \
    for (int64_t r = lo; r < hi; r++) {                                                         \
      int64_t oy = r % g->out[1], oz = r / g->out[1] % g->out[0], b = r / (g->out[1] * g->out[0]); \
      int64_t za, zb, ya, yb;                                                                   \
      taps(g, 0, oz, &za, &zb);                                                                 \
      taps(g, 1, oy, &ya, &yb);                                                                 \
      for (int64_t ox = 0; ox < g->out[2]; ox++) {                                              \
        T *restrict o = (T *)j->out + (r * g->out[2] + ox) * C;                                 \
        int64_t xa, xb;                                                                         \
        taps(g, 2, ox, &xa, &xb);                                                               \
        for (int64_t k = 0; k < C; k++) o[k] = avg ? 0 : -INFINITY;                             \
        for (int64_t a = za; a < zb; a++)                                                       \
          for (int64_t bb = ya; bb < yb; bb++)                                                  \
            for (int64_t cc = xa; cc < xb; cc++) {                                              \
              int64_t iz = oz * g->s[0] - g->pad[0] + a, iy = oy * g->s[1] - g->pad[1] + bb;    \
              int64_t ix = ox * g->s[2] - g->pad[2] + cc;                                       \
              const T *restrict xp = x + (((b * g->in[0] + iz) * g->in[1] + iy) * g->in[2] + ix) * C; \
              if (avg) {                                                                        \
                _Pragma("omp simd") for (int64_t k = 0; k < C; k++) o[k] += xp[k];              \
              } else {                                                                          \
                _Pragma("omp simd") for (int64_t k = 0; k < C; k++) o[k] = xp[k] > o[k] ? xp[k] : o[k]; \
              }                                                                                 \
            }                                                                                   \
        if (avg) {                                                                              \
          T n = (T)((zb - za) * (yb - ya) * (xb - xa));                                         \
          for (int64_t k = 0; k < C; k++) o[k] /= n;                                            \
        }                                                                                       \
      }                                                                                         \
    }                                                                                           \
  }                                                                                             \
  static void maxp_rows_##T(void *arg, int64_t lo, int64_t hi, int who) { pool_rows_##T(arg, lo, hi, who, false); } \
  static void avgp_rows_##T(void *arg, int64_t lo, int64_t hi, int who) { pool_rows_##T(arg, lo, hi, who, true); } \
  static void poolg_rows_##T(void *arg, int64_t lo, int64_t hi, int who, bool avg) {           \
    (void)who;                                                                                  \
    const job *j = arg;                                                                         \
    const geom *g = j->g;                                                                       \
    const T *x = j->x, *y = j->y, *dy = j->dy;                                                  \
    const int64_t C = g->ic;                                                                    \
    for (int64_t r = lo; r < hi; r++) {                                                         \
      int64_t iy = r % g->in[1], iz = r / g->in[1] % g->in[0], b = r / (g->in[1] * g->in[0]);  \
      int64_t za, zb, ya, yb;                                                                   \
      windows(g, 0, iz, &za, &zb);                                                              \
      windows(g, 1, iy, &ya, &yb);                                                              \
      for (int64_t ix = 0; ix < g->in[2]; ix++) {                                               \
        T *restrict o = (T *)j->out + (r * g->in[2] + ix) * C;                                  \
        const T *restrict xp = avg ? NULL : x + (r * g->in[2] + ix) * C;                        \
        int64_t xa, xb;                                                                         \
        windows(g, 2, ix, &xa, &xb);                                                            \
        for (int64_t k = 0; k < C; k++) o[k] = 0;                                               \
        for (int64_t a = za; a < zb; a++)                                                       \
          for (int64_t bb = ya; bb < yb; bb++)                                                  \
            for (int64_t cc = xa; cc < xb; cc++) {                                              \
              int64_t w = ((b * g->out[0] + a) * g->out[1] + bb) * g->out[2] + cc;              \
              const T *restrict d = dy + w * C;                                                 \
              if (avg) {                                                                        \
                T n = (T)(j->cnt[0][a] * j->cnt[1][bb] * j->cnt[2][cc]);                        \
                _Pragma("omp simd") for (int64_t k = 0; k < C; k++) o[k] += d[k] / n;           \
              } else {                                                                          \
                const T *restrict yp = y + w * C;                                               \
                _Pragma("omp simd") for (int64_t k = 0; k < C; k++)                             \
                  o[k] += (xp[k] - yp[k] < (T)1e-5 && yp[k] - xp[k] < (T)1e-5) ? d[k] : 0;      \
              }                                                                                 \
            }                                                                                   \
      }                                                                                         \
    }                                                                                           \
  }                                                                                             \
  static void maxg_rows_##T(void *arg, int64_t lo, int64_t hi, int who) { poolg_rows_##T(arg, lo, hi, who, false); } \
  static void avgg_rows_##T(void *arg, int64_t lo, int64_t hi, int who) { poolg_rows_##T(arg, lo, hi, who, true); }
CONV3D(float)
CONV3D(double)

/* Threads for `work` multiply-adds. */
static int threads_for(double work) { return work >= PAR_MIN ? rt_intra_threads() : 1; }

static double ktaps(const geom *g) { return (double)pixels(g->k); }

enum { CHUNK = 1 << 20 };   /* im2col elements per GEMM */

static int conv3d_kernel(rt_kernel_ctx *c) {
  const rt_tensor *x = c->inputs[0], *f = c->inputs[1];
  char sa[160];
  geom g;
  if (need_float(c, x->dtype)) return c->st->code;
  if (x->shape.ndims != 5)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "input must be 5-dimensional: %s",
                           op_shape_tf(&x->shape, sa, sizeof sa));
  if (need_rank5(c, "", "filter", f) || conv_geom(c, "", x->shape.dims, f->shape.dims, &g)) return c->st->code;
  int64_t od[5];
  out_dims(&g, od);
  rt_shape os = rt_shape_make(5, od);
  rt_tensor *y = rt_kernel_output(c, 0, x->dtype, &os);
  if (!y) return c->st->code;
  int64_t P = g.n * pixels(g.out), K = pixels(g.k) * g.ic;
  if (P == 0 || g.oc == 0) return RT_OK;
  bool f32 = x->dtype == RT_FLOAT;
  size_t es = rt_dtype_size(x->dtype);
  int th = threads_for((double)P * (double)K * (double)g.oc);
  if (K == 0) {
    memset(rt_tensor_data(y), 0, rt_tensor_nbytes(y));
    return RT_OK;
  }
  bool pointwise = pixels(g.k) == 1 && g.s[0] == 1 && g.s[1] == 1 && g.s[2] == 1;
  if (pointwise) {   /* 1x1x1 at stride 1: the input is the patch matrix */
    op_gemm(f32, P, g.oc, K, rt_tensor_data(x), K, 1, rt_tensor_data(f), g.oc, 1, 0.0, rt_tensor_data(y), g.oc, th);
    return RT_OK;
  }
  int64_t rows = CHUNK / K > 0 ? CHUNK / K : 1;
  if (rows > P) rows = P;
  job j = {.g = &g, .x = rt_tensor_data(x), .out = scratch(c, rows * K, es)};
  if (!j.out) return c->st->code;
  for (j.p0 = 0; j.p0 < P; j.p0 += rows) {
    int64_t m = P - j.p0 < rows ? P - j.p0 : rows;
    rt_parallel_range(m, 1, threads_for((double)m * (double)K), f32 ? im2col_float : im2col_double, &j);
    op_gemm(f32, m, g.oc, K, j.out, K, 1, rt_tensor_data(f), g.oc, 1, 0.0,
            (char *)rt_tensor_data(y) + (size_t)(j.p0 * g.oc) * es, g.oc, th);
  }
  free(j.out);
  return RT_OK;
}

static int backprop_input_kernel(rt_kernel_ctx *c) {
  static const char *label = "Conv3DBackpropInputOp";
  const rt_tensor *f = c->inputs[1], *dy = c->inputs[2];
  int64_t xd[5], od[5];
  geom g;
  if (need_float(c, f->dtype) || sizes_vec(c, label, "input_sizes", c->inputs[0], xd) ||
      need_rank5(c, "", "filter", f) || conv_geom(c, "", xd, f->shape.dims, &g))
    return c->st->code;
  out_dims(&g, od);
  if (check_shape(c, "out_backprop", &dy->shape, od)) return c->st->code;
  rt_shape xs = rt_shape_make(5, xd);
  rt_tensor *dx = rt_kernel_output(c, 0, f->dtype, &xs);
  if (!dx) return c->st->code;
  if (rt_tensor_numel(dx) == 0) return RT_OK;
  size_t es = rt_dtype_size(f->dtype);
  int64_t T = pixels(g.k), C = g.ic, OC = g.oc, rows = g.n * g.in[0] * g.in[1];
  /* The filter as [tap][out][in], so the inner loop runs over the input channels. */
  char *ft = scratch(c, T * C * OC > 0 ? T * C * OC : 1, es);
  if (!ft) return c->st->code;
  const char *fs = rt_tensor_data(f);
  for (int64_t t = 0; t < T; t++)
    for (int64_t i = 0; i < C; i++)
      for (int64_t q = 0; q < OC; q++)
        memcpy(ft + (size_t)((t * OC + q) * C + i) * es, fs + (size_t)((t * C + i) * OC + q) * es, es);
  job j = {.g = &g, .f = ft, .dy = rt_tensor_data(dy), .out = rt_tensor_data(dx)};
  rt_parallel_range(rows, 1, threads_for((double)rows * g.in[2] * ktaps(&g) * C * OC),
                    f->dtype == RT_FLOAT ? bin_rows_float : bin_rows_double, &j);
  free(ft);
  return RT_OK;
}

static int backprop_filter_kernel(rt_kernel_ctx *c) {
  static const char *label = "Conv3DBackpropFilterOp";
  const rt_tensor *x = c->inputs[0], *dy = c->inputs[2];
  int64_t fd[5], od[5];
  geom g;
  if (need_float(c, x->dtype) || sizes_vec(c, label, "filter_sizes", c->inputs[1], fd) ||
      need_rank5(c, "", "input", x) || conv_geom(c, "", x->shape.dims, fd, &g))
    return c->st->code;
  out_dims(&g, od);
  if (check_shape(c, "out_backprop", &dy->shape, od)) return c->st->code;
  rt_shape fs = rt_shape_make(5, fd);
  rt_tensor *df = rt_kernel_output(c, 0, x->dtype, &fs);
  if (!df) return c->st->code;
  int64_t len = rt_tensor_numel(df), rows = g.n * g.out[0] * g.out[1];
  if (len == 0) return RT_OK;
  if (rows == 0 || g.out[2] == 0) {
    memset(rt_tensor_data(df), 0, rt_tensor_nbytes(df));
    return RT_OK;
  }
  /* Tiles of at least ~256K multiply-adds and at most 2^24 partial elements in all; the
   * count depends only on the sizes. */
  double per_row = (double)g.out[2] * ktaps(&g) * (double)(g.ic * g.oc);
  int64_t min_rows = per_row >= 262144 ? 1 : (int64_t)(262144 / per_row) + 1;
  int64_t tiles = rt_sum_tiles(rows, min_rows), cap = ((int64_t)1 << 24) / len;
  if (tiles > cap) tiles = cap > 1 ? cap : 1;
  job j = {.g = &g, .x = rt_tensor_data(x), .dy = rt_tensor_data(dy), .rows = rows, .tiles = tiles};
  if (!(j.part = scratch(c, tiles * len, rt_dtype_size(x->dtype)))) return c->st->code;
  bool f32 = x->dtype == RT_FLOAT;
  rt_parallel_tiles(j.tiles, threads_for((double)rows * per_row), f32 ? bfil_tile_float : bfil_tile_double, &j);
  op_add_partials(f32, j.part, j.tiles, len, rt_tensor_data(df));
  free(j.part);
  return RT_OK;
}

static int pool_kernel(rt_kernel_ctx *c, bool avg) {
  const rt_tensor *x = c->inputs[0];
  int64_t od[5];
  geom g;
  if (need_float(c, x->dtype)) return c->st->code;
  if (x->shape.ndims != 5) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "tensor_in must be 5-dimensional");
  if (pool_geom(c, x->shape.dims, avg, &g)) return c->st->code;
  out_dims(&g, od);
  rt_shape os = rt_shape_make(5, od);
  rt_tensor *y = rt_kernel_output(c, 0, x->dtype, &os);
  if (!y || rt_tensor_numel(y) == 0) return c->st->code;
  int64_t rows = g.n * g.out[0] * g.out[1];
  job j = {.g = &g, .x = rt_tensor_data(x), .out = rt_tensor_data(y)};
  bool f32 = x->dtype == RT_FLOAT;
  rt_parallel_range(rows, 1, threads_for((double)rt_tensor_numel(y) * ktaps(&g)),
                    avg ? (f32 ? avgp_rows_float : avgp_rows_double) : (f32 ? maxp_rows_float : maxp_rows_double),
                    &j);
  return RT_OK;
}
static int max_pool_kernel(rt_kernel_ctx *c) { return pool_kernel(c, false); }
static int avg_pool_kernel(rt_kernel_ctx *c) { return pool_kernel(c, true); }

static int max_pool_grad_kernel(rt_kernel_ctx *c) {
  const rt_tensor *x = c->inputs[0], *y = c->inputs[1], *dy = c->inputs[2];
  int64_t od[5];
  geom g;
  if (need_float(c, x->dtype)) return c->st->code;
  if (x->dtype != y->dtype || x->dtype != dy->dtype)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "MaxPool3DGrad: orig_input, orig_output and grad must have "
                           "one dtype");
  if (x->shape.ndims != 5) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "tensor_in must be 5-dimensional");
  if (pool_geom(c, x->shape.dims, false, &g)) return c->st->code;
  out_dims(&g, od);
  if (check_shape(c, "orig_output", &y->shape, od) || check_shape(c, "grad", &dy->shape, od)) return c->st->code;
  rt_tensor *dx = rt_kernel_output(c, 0, x->dtype, &x->shape);
  if (!dx || rt_tensor_numel(dx) == 0) return c->st->code;
  int64_t rows = g.n * g.in[0] * g.in[1];
  job j = {.g = &g, .x = rt_tensor_data(x), .y = rt_tensor_data(y), .dy = rt_tensor_data(dy),
           .out = rt_tensor_data(dx)};
  rt_parallel_range(rows, 1, threads_for((double)rt_tensor_numel(dx) * ktaps(&g)),
                    x->dtype == RT_FLOAT ? maxg_rows_float : maxg_rows_double, &j);
  return RT_OK;
}

static int avg_pool_grad_kernel(rt_kernel_ctx *c) {
  const rt_tensor *dy = c->inputs[1];
  int64_t xd[5], od[5];
  geom g;
  if (need_float(c, dy->dtype) || sizes_vec(c, "AvgPool3DGrad", "orig_input_shape", c->inputs[0], xd) ||
      pool_geom(c, xd, true, &g))
    return c->st->code;
  out_dims(&g, od);
  if (check_shape(c, "grad", &dy->shape, od)) return c->st->code;
  rt_shape xs = rt_shape_make(5, xd);
  rt_tensor *dx = rt_kernel_output(c, 0, dy->dtype, &xs);
  if (!dx || rt_tensor_numel(dx) == 0) return c->st->code;
  if (rt_tensor_numel(dy) == 0) {
    memset(rt_tensor_data(dx), 0, rt_tensor_nbytes(dx));
    return RT_OK;
  }
  /* Each window's size per axis (the padding not counted). */
  int64_t *cnt = xmalloc((size_t)(g.out[0] + g.out[1] + g.out[2]) * sizeof *cnt);   /* output-sized / channels */
  job j = {.g = &g, .dy = rt_tensor_data(dy), .out = rt_tensor_data(dx)};
  for (int a = 0, off = 0; a < 3; off += (int)g.out[a], a++) {
    j.cnt[a] = cnt + off;
    for (int64_t o = 0; o < g.out[a]; o++) {
      int64_t lo, hi;
      taps(&g, a, o, &lo, &hi);
      cnt[off + o] = hi - lo;
    }
  }
  int64_t rows = g.n * g.in[0] * g.in[1];
  rt_parallel_range(rows, 1, threads_for((double)rt_tensor_numel(dx) * ktaps(&g)),
                    dy->dtype == RT_FLOAT ? avgg_rows_float : avgg_rows_double, &j);
  free(cnt);
  return RT_OK;
}

/* ---- gradients ------------------------------------------------------------------- */

static void conv_attrs_copy(rt_node *n, const void *arg) {
  static const char *const names[] = {"strides", "padding", "data_format", "dilations", NULL};
  op_copy_attrs(n, arg, names);
}
static void pool_attrs_copy(rt_node *n, const void *arg) {
  static const char *const names[] = {"ksize", "strides", "padding", "data_format", NULL};
  op_copy_attrs(n, arg, names);
}

static const op_conv_ops conv3d_ops_g = {"Conv3D", "Conv3DBackpropInputV2", "Conv3DBackpropFilterV2",
                                          conv_attrs_copy};
static int conv3d_grad(rt_grad_ctx *c) { return op_conv_grads(c, &conv3d_ops_g, 0); }
static int backprop_input_grad(rt_grad_ctx *c) { return op_conv_grads(c, &conv3d_ops_g, 1); }
static int backprop_filter_grad(rt_grad_ctx *c) { return op_conv_grads(c, &conv3d_ops_g, 2); }

static int max_pool_grad(rt_grad_ctx *c) {
  if (!DY) return RT_OK;
  const char *in[] = {IN(0), c->node->name, DY};
  c->dx[0] = op_grad_node(c, "MaxPool3DGrad", "MaxPool3DGrad", 3, in, pool_attrs_copy, c->node);
  return c->st->code;
}

static int avg_pool_grad(rt_grad_ctx *c) {
  if (!DY) return RT_OK;
  char *s = op_gshape_vec(c, IN(0));
  const char *in[] = {s, DY};
  c->dx[0] = s ? op_grad_node(c, "AvgPool3DGrad", "AvgPool3DGrad", 2, in, pool_attrs_copy, c->node) : NULL;
  free(s);
  return c->st->code;
}

/* AvgPool3DGrad is linear in grad: its gradient there is the pool itself. */
static int avg_pool_grad_grad(rt_grad_ctx *c) {
  if (!DY) return RT_OK;
  const char *in[] = {DY};
  c->dx[1] = op_grad_node(c, "AvgPool3D", "AvgPool3D", 1, in, pool_attrs_copy, c->node);
  return c->st->code;
}

/* ---- the table ------------------------------------------------------------------- */

#define CONV3D_ATTRS                                                                            \
  "T: {float, double}, strides: list(int) >= 5, padding: string, data_format: string = 'NDHWC', " \
  "dilations: list(int) = []"
#define POOL3D_ATTRS                                                                            \
  "ksize: list(int) >= 5, strides: list(int) >= 5, padding: string, data_format: string = 'NDHWC', " \
  "T: {float, double}"

static const rt_op_def conv3d_ops[] = {
  {.name = "Conv3D", .inputs = "input: T, filter: T", .outputs = "output: T", .attrs = CONV3D_ATTRS,
   .help = "3-D convolution: input [batch, depth, rows, cols, in] with filter [kd, kh, kw, in, out].",
   .shape = conv3d_shape, .kernel = {[RT_DEV_CPU] = conv3d_kernel}, .grad = conv3d_grad},
  {.name = "Conv3DBackpropInputV2", .inputs = "input_sizes: Tshape, filter: T, out_backprop: T",
   .outputs = "output: T", .attrs = CONV3D_ATTRS ", Tshape: {int32, int64} = int32",
   .help = "Conv3D's gradient for its input, of shape input_sizes (tf.nn.conv3d_transpose).",
   .shape = backprop_input_shape, .kernel = {[RT_DEV_CPU] = backprop_input_kernel}, .grad = backprop_input_grad},
  {.name = "Conv3DBackpropFilterV2", .inputs = "input: T, filter_sizes: int32, out_backprop: T",
   .outputs = "output: T", .attrs = CONV3D_ATTRS,
   .help = "Conv3D's gradient for its filter, of shape filter_sizes.",
   .shape = backprop_filter_shape, .kernel = {[RT_DEV_CPU] = backprop_filter_kernel},
   .grad = backprop_filter_grad},
  {.name = "MaxPool3D", .inputs = "input: T", .outputs = "output: T", .attrs = POOL3D_ATTRS,
   .help = "Maximum over each ksize window (padding not counted), moved by strides.",
   .shape = pool_shape, .kernel = {[RT_DEV_CPU] = max_pool_kernel}, .grad = max_pool_grad},
  {.name = "MaxPool3DGrad", .inputs = "orig_input: TInput, orig_output: TInput, grad: T", .outputs = "output: T",
   .attrs = POOL3D_ATTRS ", TInput: {float, double} = float",
   .help = "MaxPool3D's gradient: each window's grad to every element within 1e-5 of its maximum (TF's CPU).",
   .shape = max_pool_grad_shape, .kernel = {[RT_DEV_CPU] = max_pool_grad_kernel}},
  {.name = "AvgPool3D", .inputs = "input: T", .outputs = "output: T", .attrs = POOL3D_ATTRS,
   .help = "Mean over each ksize window (padding not counted), moved by strides.",
   .shape = pool_shape, .kernel = {[RT_DEV_CPU] = avg_pool_kernel}, .grad = avg_pool_grad},
  {.name = "AvgPool3DGrad", .inputs = "orig_input_shape: int32, grad: T", .outputs = "output: T",
   .attrs = POOL3D_ATTRS, .help = "AvgPool3D's gradient: grad spread evenly over each window.",
   .shape = avg_pool_grad_shape, .kernel = {[RT_DEV_CPU] = avg_pool_grad_kernel}, .grad = avg_pool_grad_grad},
};

void op_conv3d_register(void) { rt_op_register(conv3d_ops, OP_COUNT(conv3d_ops)); }
