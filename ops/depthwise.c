/* Depthwise convolution, as TF 1.x has it (tf.nn.depthwise_conv2d, separable_conv2d):
 *   DepthwiseConv2dNative(input, filter)                          each input channel c convolved
 *       with its own filter[:, :, c, q] for q < multiplier: output channel c * multiplier + q
 *   DepthwiseConv2dNativeBackpropInput(input_sizes, filter, out_backprop)
 *   DepthwiseConv2dNativeBackpropFilter(input, filter_sizes, out_backprop)
 * Each op's gradient is the other two (TF's). NHWC on the CPU, float and double; strides
 * and dilations may differ between rows and columns; padding SAME or VALID. The filter's
 * [in, multiplier] axes flattened are the output channels, so every inner loop runs over
 * the innermost (channel) axis of both tensors, which vectorizes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "ops/ops_int.h"
#include "runtime/pool.h"

#define IN(i) (c->node->inputs[i])
#define DY (c->dy[0])

enum { PAR_MIN = 1 << 14 };   /* multiply-adds below which one thread does the whole op */

static bool nchw(const rt_node *n) { return !strcmp(rt_node_string(n, "data_format", "NHWC"), "NCHW"); }

/* ---- shapes ---------------------------------------------------------------------- */

/* strides and dilations (4 each, positive) and padding (SAME or VALID); sets *same. */
static int shape_attrs(rt_shape_ctx *c, const int64_t **s, const int64_t **d, bool *same) {
  int ns, nd;
  *s = op_list_ints(c->node, "strides", &ns);
  *d = op_list_ints(c->node, "dilations", &nd);
  if (ns != 4)
    return op_shape_error(c, 0, "DepthwiseConv2D requires the stride attribute to contain 4 values, but "
                          "got: %d", ns);
  if (nd != 0 && nd != 4)
    return op_shape_error(c, 0, "DepthwiseConv2D requires the dilations attribute to contain 4 values, but "
                          "got: %d", nd);
  static const int64_t ones[4] = {1, 1, 1, 1};
  if (!nd) *d = ones;
  for (int i = 0; i < 4; i++)
    if ((*s)[i] < 1 || (*d)[i] < 1)
      return op_shape_error(c, 0, "DepthwiseConv2D requires positive strides and dilations, but got "
                            "%s %lld", (*s)[i] < 1 ? "stride" : "dilation",
                            (long long)((*s)[i] < 1 ? (*s)[i] : (*d)[i]));
  const char *p = rt_node_string(c->node, "padding", "");
  *same = !strcmp(p, "SAME");
  if (!strcmp(p, "EXPLICIT"))
    return op_shape_error(c, 0, "padding EXPLICIT of DepthwiseConv2dNative is not implemented in tfsh");
  if (!*same && strcmp(p, "VALID"))
    return op_shape_error(c, 0, "Attr 'padding' of 'DepthwiseConv2dNative' Op passed string '%s' not in: "
                          "\"SAME\", \"VALID\", \"EXPLICIT\".", p);
  return RT_OK;
}

/* One spatial output size from a known input size and window (else unknown). */
static int out_dim(rt_shape_ctx *c, int64_t in, int64_t k, int64_t s, int64_t d, bool same, int64_t *out) {
  int64_t pad;
  *out = -1;
  if (in < 0 || k < 0) return RT_OK;
  int64_t eff = k ? (k - 1) * d + 1 : 0;
  if (!op_window_dim(in, eff, s, same, out, &pad))
    return op_shape_error(c, 0, "Negative dimension size caused by subtracting %lld from %lld",
                          (long long)eff, (long long)in);
  return RT_OK;
}

static int depthwise_shape(rt_shape_ctx *c) {
  const rt_shape *x = &c->in_shapes[0], *f = &c->in_shapes[1];
  const int64_t *s, *d;
  bool same = false;
  if (x->ndims >= 0 && x->ndims != 4) return op_rank_error(c, 4, x->ndims);
  if (f->ndims >= 0 && f->ndims != 4) return op_rank_error(c, 4, f->ndims);
  if (shape_attrs(c, &s, &d, &same)) return c->st->code;
  bool cf = nchw(c->node);
  int hd = cf ? 2 : 1, cd = cf ? 1 : 3;
  int64_t n = -1, h = -1, w = -1, ch = -1, kh = -1, kw = -1, ic = -1, m = -1;
  if (x->ndims == 4) n = x->dims[0], h = x->dims[hd], w = x->dims[hd + 1], ch = x->dims[cd];
  if (f->ndims == 4) kh = f->dims[0], kw = f->dims[1], ic = f->dims[2], m = f->dims[3];
  if (ch >= 0 && ic >= 0 && ch != ic) return op_dims_error(c, ch, ic);
  if (ic < 0) ic = ch;
  int64_t oc = ic >= 0 && m >= 0 ? ic * m : -1, oh, ow;
  if (out_dim(c, h, kh, s[hd], d[hd], same, &oh) || out_dim(c, w, kw, s[hd + 1], d[hd + 1], same, &ow))
    return c->st->code;
  c->out_shapes[0] = cf ? rt_shape_make(4, (int64_t[]){n, oc, oh, ow})
                        : rt_shape_make(4, (int64_t[]){n, oh, ow, oc});
  return RT_OK;
}

/* The backprops': output 0 is the 4-vector input `sizes` (exact when constant); the other
 * two inputs rank 4. */
static int backprop_shape(rt_shape_ctx *c, int sizes) {
  const int64_t *s, *d;
  bool same = false;
  const rt_shape *sv = &c->in_shapes[sizes];
  for (int i = 0; i < 3; i++)
    if (i != sizes && c->in_shapes[i].ndims >= 0 && c->in_shapes[i].ndims != 4)
      return op_rank_error(c, 4, c->in_shapes[i].ndims);
  if (sv->ndims >= 0 && sv->ndims != 1) return op_rank_error(c, 1, sv->ndims);
  if (shape_attrs(c, &s, &d, &same)) return c->st->code;
  int64_t v[RT_MAX_DIMS];
  int n;
  if (op_const_ints(c, sizes, v, RT_MAX_DIMS, &n)) {
    if (n != 4) return op_rank_error(c, 4, n);
    for (int k = 0; k < 4; k++)
      if (v[k] < 0) return op_shape_error(c, 1u << sizes, "Dimension %d must be >= 0", k);
    c->out_shapes[0] = rt_shape_make(4, v);
    return RT_OK;
  }
  if (sv->ndims == 1 && sv->dims[0] >= 0 && sv->dims[0] != 4) return op_rank_error(c, 4, (int)sv->dims[0]);
  c->out_shapes[0] = rt_shape_make(4, (int64_t[]){-1, -1, -1, -1});
  return RT_OK;
}
static int backprop_input_shape(rt_shape_ctx *c) { return backprop_shape(c, 0); }
static int backprop_filter_shape(rt_shape_ctx *c) { return backprop_shape(c, 1); }

/* ---- kernels --------------------------------------------------------------------- */

typedef struct geom {
  int64_t n, ih, iw, ic, m;          /* input; channel multiplier */
  int64_t kh, kw, sh, sw, dh, dw;    /* window, strides, dilations */
  int64_t oh, ow, pt, pl;            /* output size; padding before */
} geom;

/* The attrs as TF's CPU kernel checks them, into g's strides and dilations. */
static int kernel_attrs(rt_kernel_ctx *c, geom *g, bool *same) {
  int ns, nd;
  const int64_t *s = op_list_ints(c->node, "strides", &ns), *d = op_list_ints(c->node, "dilations", &nd);
  const char *p = rt_node_string(c->node, "padding", "");
  if (nchw(c->node) || strcmp(rt_node_string(c->node, "data_format", "NHWC"), "NHWC"))
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "Depthwise convolution on CPU is only supported for NHWC format");
  if (ns != 4)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Sliding window strides field must specify 4 dimensions");
  if (s[0] != 1 || s[3] != 1)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Current implementation does not yet support strides in the "
                           "batch and depth dimensions.");
  if (nd && nd != 4)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Sliding window dilations field must specify 4 dimensions");
  if (nd && (d[0] != 1 || d[3] != 1))
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Current implementation does not yet support dilations in the "
                           "batch and depth dimensions.");
  g->sh = s[1], g->sw = s[2], g->dh = nd ? d[1] : 1, g->dw = nd ? d[2] : 1;
  if (g->sh < 1 || g->sw < 1 || g->dh < 1 || g->dw < 1)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Strides and dilations must be > 0");
  *same = !strcmp(p, "SAME");
  if (!strcmp(p, "EXPLICIT"))
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "padding EXPLICIT of DepthwiseConv2dNative is not implemented in tfsh");
  if (!*same && strcmp(p, "VALID"))
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Value for attr 'padding' of \"%s\" is not in the list of "
                           "allowed values: \"SAME\", \"VALID\", \"EXPLICIT\"", p);
  return RT_OK;
}

/* Output size and padding of one spatial axis. */
static int window_dim(rt_kernel_ctx *c, int64_t in, int64_t k, int64_t s, int64_t d, bool same, int64_t *out,
                      int64_t *pad) {
  int64_t eff = k ? (k - 1) * d + 1 : 0;
  if (op_window_dim(in, eff, s, same, out, pad)) return RT_OK;
  return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Computed output size would be negative: %lld [input_size: %lld, "
                         "effective_filter_size: %lld, stride: %lld]", (long long)((in - eff + s) / s),
                         (long long)in, (long long)eff, (long long)s);
}

/* g from input dims xd and filter dims fd (both 4), attrs checked; `label` prefixes the
 * backprops' messages ("" for the forward op). */
static int make_geom(rt_kernel_ctx *c, const char *label, const int64_t *xd, const int64_t *fd, geom *g) {
  bool same = false;
  if (kernel_attrs(c, g, &same)) return c->st->code;
  if (xd[3] != fd[2])
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%sinput and filter must have the same depth: %lld vs %lld",
                           label, (long long)xd[3], (long long)fd[2]);
  g->n = xd[0], g->ih = xd[1], g->iw = xd[2], g->ic = xd[3], g->kh = fd[0], g->kw = fd[1], g->m = fd[3];
  if (window_dim(c, g->ih, g->kh, g->sh, g->dh, same, &g->oh, &g->pt) ||
      window_dim(c, g->iw, g->kw, g->sw, g->dw, same, &g->ow, &g->pl))
    return c->st->code;
  return RT_OK;
}

/* out_backprop's shape against the geometry (the backprops). */
static int check_dy(rt_kernel_ctx *c, const char *label, const rt_shape *dy, const geom *g) {
  if (dy->ndims != 4)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s: out_backprop must be 4-dimensional", label);
  const int64_t *d = dy->dims;
  if (d[0] != g->n)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s: input and out_backprop must have the same batch size", label);
  if (d[1] != g->oh)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s: Number of rows of out_backprop doesn't match computed: "
                           "actual = %lld, computed = %lld", label, (long long)d[1], (long long)g->oh);
  if (d[2] != g->ow)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s: Number of cols of out_backprop doesn't match computed: "
                           "actual = %lld, computed = %lld", label, (long long)d[2], (long long)g->ow);
  if (d[3] != g->ic * g->m)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s: depth_multiplier * in_depth not equal to out_depth", label);
  return RT_OK;
}

/* A 4-vector of sizes (input_sizes, filter_sizes) into v. */
static int sizes_vec(rt_kernel_ctx *c, const char *label, const char *what, const rt_tensor *t, int64_t *v) {
  if (t->shape.ndims != 1 || t->shape.dims[0] != 4) {
    char sa[160];
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s: %s must be a vector of 4 sizes, not %s", label, what,
                           op_shape_tf(&t->shape, sa, sizeof sa));
  }
  for (int d = 0; d < 4; d++)
    if ((v[d] = rt_tensor_get_i64(t, d)) < 0)
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s: Dimension %d of %s must be >= 0, not %lld", label, d,
                             what, (long long)v[d]);
  return RT_OK;
}

static int need_float(rt_kernel_ctx *c, rt_dtype t) {
  if (t == RT_FLOAT || t == RT_DOUBLE) return RT_OK;
  return rt_kernel_error(c, RT_UNIMPLEMENTED, "no CPU kernel for depthwise convolution of %s", op_tf_type(t));
}

typedef struct job {
  const geom *g;
  const void *x, *f, *dy;
  void *y, *part;
  int64_t tiles, rows;
} job;

/* The three loops for element type T:
 * fwd_rows:  output rows [lo, hi) of n * oh: y[k] = sum over taps of x[k / m] * f[tap][k].
 * bin_rows:  input rows [lo, hi) of n * ih, gathered from the output pixels whose windows
 *            hold them (no scatter, so rows split freely over threads).
 * bfil_tile: one tile of output rows' filter sums, into its own partial (added in tile
 *            order afterwards, so the bits do not depend on the thread count). */
#define DEPTHWISE(T)                                                                            \
  static void fwd_rows_##T(void *arg, int64_t lo, int64_t hi, int who) {                       \
    (void)who;                                                                                  \
    const job *j = arg;                                                                         \
    const geom *g = j->g;                                                                       \
    const T *x = j->x, *f = j->f;                                                               \
    T *y = j->y;                                                                                \
    const int64_t C = g->ic, M = g->m, OC = C * M;                                              \
    for (int64_t r = lo; r < hi; r++) {                                                         \
      int64_t b = r / g->oh, oy = r % g->oh;                                                    \
      const T *xb = x + b * g->ih * g->iw * C;                                                  \
      for (int64_t ox = 0; ox < g->ow; ox++) {                                                  \
        T *restrict o = y + (r * g->ow + ox) * OC;                                              \
        for (int64_t k = 0; k < OC; k++) o[k] = 0;                                              \
        for (int64_t i = 0; i < g->kh; i++) {                                                   \
          int64_t iy = oy * g->sh - g->pt + i * g->dh;                                          \
          if (iy < 0 || iy >= g->ih) continue;                                                  \
          for (int64_t jj = 0; jj < g->kw; jj++) {                                              \
            int64_t ix = ox * g->sw - g->pl + jj * g->dw;                                       \
            if (ix < 0 || ix >= g->iw) continue;                                                \
            const T *restrict xp = xb + (iy * g->iw + ix) * C;                                  \
            const T *restrict fp = f + (i * g->kw + jj) * OC;                                   \
            if (M == 1) {                                                                       \
              _Pragma("omp simd") for (int64_t k = 0; k < C; k++) o[k] += xp[k] * fp[k];        \
            } else {                                                                            \
              for (int64_t ch = 0; ch < C; ch++) {                                              \
                T v = xp[ch];                                                                   \
                _Pragma("omp simd") for (int64_t q = 0; q < M; q++) o[ch * M + q] += v * fp[ch * M + q]; \
              }                                                                                 \
            }                                                                                   \
          }                                                                                     \
        }                                                                                       \
      }                                                                                         \
    }                                                                                           \
  }                                                                                             \
  static void bin_rows_##T(void *arg, int64_t lo, int64_t hi, int who) {                       \
    (void)who;                                                                                  \
    const job *j = arg;                                                                         \
    const geom *g = j->g;                                                                       \
    const T *dy = j->dy, *f = j->f;                                                             \
    T *dx = j->y;                                                                               \
    const int64_t C = g->ic, M = g->m, OC = C * M;                                              \
    for (int64_t r = lo; r < hi; r++) {                                                         \
      int64_t b = r / g->ih, iy = r % g->ih;                                                    \
      for (int64_t ix = 0; ix < g->iw; ix++) {                                                  \
        T *restrict o = dx + (r * g->iw + ix) * C;                                              \
        for (int64_t k = 0; k < C; k++) o[k] = 0;                                               \
        for (int64_t i = 0; i < g->kh; i++) {                                                   \
          int64_t t = iy + g->pt - i * g->dh;                                                   \
          if (t < 0 || t % g->sh || t / g->sh >= g->oh) continue;                               \
          for (int64_t jj = 0; jj < g->kw; jj++) {                                              \
            int64_t u = ix + g->pl - jj * g->dw;                                                \
            if (u < 0 || u % g->sw || u / g->sw >= g->ow) continue;                             \
            const T *restrict d = dy + ((b * g->oh + t / g->sh) * g->ow + u / g->sw) * OC;      \
            const T *restrict fp = f + (i * g->kw + jj) * OC;                                   \
            if (M == 1) {                                                                       \
              _Pragma("omp simd") for (int64_t k = 0; k < C; k++) o[k] += d[k] * fp[k];         \
            } else {                                                                            \
              for (int64_t ch = 0; ch < C; ch++) {                                              \
                T s = 0;                                                                        \
                for (int64_t q = 0; q < M; q++) s += d[ch * M + q] * fp[ch * M + q];            \
                o[ch] += s;                                                                     \
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
    const int64_t C = g->ic, M = g->m, OC = C * M;                                              \
    T *part = (T *)j->part + tile * g->kh * g->kw * OC;                                         \
    int64_t lo, hi;                                                                             \
    rt_tile_range(j->rows, j->tiles, tile, &lo, &hi);                                           \
    memset(part, 0, (size_t)(g->kh * g->kw * OC) * sizeof(T));                                  \
    for (int64_t r = lo; r < hi; r++) {                                                         \
      int64_t b = r / g->oh, oy = r % g->oh;                                                    \
      const T *xb = x + b * g->ih * g->iw * C;                                                  \
      for (int64_t ox = 0; ox < g->ow; ox++) {                                                  \
        const T *restrict d = dy + (r * g->ow + ox) * OC;                                       \
        for (int64_t i = 0; i < g->kh; i++) {                                                   \
          int64_t iy = oy * g->sh - g->pt + i * g->dh;                                          \
          if (iy < 0 || iy >= g->ih) continue;                                                  \
          for (int64_t jj = 0; jj < g->kw; jj++) {                                              \
            int64_t ix = ox * g->sw - g->pl + jj * g->dw;                                       \
            if (ix < 0 || ix >= g->iw) continue;                                                \
            const T *restrict xp = xb + (iy * g->iw + ix) * C;                                  \
            T *restrict p = part + (i * g->kw + jj) * OC;                                       \
            if (M == 1) {                                                                       \
              _Pragma("omp simd") for (int64_t k = 0; k < C; k++) p[k] += xp[k] * d[k];         \
            } else {                                                                            \
              for (int64_t ch = 0; ch < C; ch++) {                                              \
                T v = xp[ch];                                                                   \
                _Pragma("omp simd") for (int64_t q = 0; q < M; q++) p[ch * M + q] += v * d[ch * M + q]; \
              }                                                                                 \
            }                                                                                   \
          }                                                                                     \
        }                                                                                       \
      }                                                                                         \
    }                                                                                           \
  }
DEPTHWISE(float)
DEPTHWISE(double)

/* Threads for `work` multiply-adds. */
static int threads_for(double work) { return work >= PAR_MIN ? rt_intra_threads() : 1; }

static double taps(const geom *g) { return (double)(g->kh * g->kw) * (double)(g->ic * g->m); }

static int depthwise_kernel(rt_kernel_ctx *c) {
  const rt_tensor *x = c->inputs[0], *f = c->inputs[1];
  char sa[160];
  geom g;
  if (need_float(c, x->dtype)) return c->st->code;
  if (x->shape.ndims != 4)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "input must be 4-dimensional%s",
                           op_shape_tf(&x->shape, sa, sizeof sa));
  if (f->shape.ndims != 4)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "filter must be 4-dimensional: %s",
                           op_shape_tf(&f->shape, sa, sizeof sa));
  if (make_geom(c, "", x->shape.dims, f->shape.dims, &g)) return c->st->code;
  rt_shape os = rt_shape_make(4, (int64_t[]){g.n, g.oh, g.ow, g.ic * g.m});
  rt_tensor *y = rt_kernel_output(c, 0, x->dtype, &os);
  if (!y) return c->st->code;
  int64_t rows = g.n * g.oh;
  if (rt_tensor_numel(y) == 0) return RT_OK;
  job j = {.g = &g, .x = rt_tensor_data(x), .f = rt_tensor_data(f), .y = rt_tensor_data(y)};
  rt_parallel_range(rows, 1, threads_for((double)rows * g.ow * taps(&g)),
                    x->dtype == RT_FLOAT ? fwd_rows_float : fwd_rows_double, &j);
  return RT_OK;
}

static int backprop_input_kernel(rt_kernel_ctx *c) {
  static const char *label = "DepthwiseConv2DBackpropInput";
  const rt_tensor *f = c->inputs[1], *dy = c->inputs[2];
  int64_t xd[4];
  geom g;
  if (need_float(c, f->dtype)) return c->st->code;
  if (sizes_vec(c, label, "input_sizes", c->inputs[0], xd)) return c->st->code;
  if (f->shape.ndims != 4)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s: filter must be 4-dimensional", label);
  if (make_geom(c, "DepthwiseConv2DBackpropInput: ", xd, f->shape.dims, &g) || check_dy(c, label, &dy->shape, &g))
    return c->st->code;
  rt_shape xs = rt_shape_make(4, xd);
  rt_tensor *dx = rt_kernel_output(c, 0, f->dtype, &xs);
  if (!dx) return c->st->code;
  if (rt_tensor_numel(dx) == 0) return RT_OK;
  int64_t rows = g.n * g.ih;
  job j = {.g = &g, .f = rt_tensor_data(f), .dy = rt_tensor_data(dy), .y = rt_tensor_data(dx)};
  rt_parallel_range(rows, 1, threads_for((double)rows * g.iw * taps(&g)),
                    f->dtype == RT_FLOAT ? bin_rows_float : bin_rows_double, &j);
  return RT_OK;
}

static int backprop_filter_kernel(rt_kernel_ctx *c) {
  static const char *label = "DepthwiseConv2DBackpropFilter";
  const rt_tensor *x = c->inputs[0], *dy = c->inputs[2];
  int64_t fd[4];
  geom g;
  if (need_float(c, x->dtype)) return c->st->code;
  if (sizes_vec(c, label, "filter_sizes", c->inputs[1], fd)) return c->st->code;
  if (x->shape.ndims != 4)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s: input must be 4-dimensional", label);
  if (make_geom(c, "DepthwiseConv2DBackpropFilter: ", x->shape.dims, fd, &g) || check_dy(c, label, &dy->shape, &g))
    return c->st->code;
  rt_shape fs = rt_shape_make(4, fd);
  rt_tensor *df = rt_kernel_output(c, 0, x->dtype, &fs);
  if (!df) return c->st->code;
  int64_t len = rt_tensor_numel(df), rows = g.n * g.oh;
  if (len == 0) return RT_OK;
  if (rows == 0 || g.ow == 0) {
    memset(rt_tensor_data(df), 0, rt_tensor_nbytes(df));
    return RT_OK;
  }
  /* Tiles of at least ~64K multiply-adds; their count depends only on the sizes. */
  double per_row = (double)g.ow * taps(&g);
  int64_t min_rows = per_row >= 65536 ? 1 : (int64_t)(65536 / per_row) + 1;
  job j = {.g = &g, .x = rt_tensor_data(x), .dy = rt_tensor_data(dy), .rows = rows,
           .tiles = rt_sum_tiles(rows, min_rows)};
  j.part = xmalloc((size_t)(j.tiles * len) * rt_dtype_size(x->dtype));   /* tiles filters: small */
  bool f32 = x->dtype == RT_FLOAT;
  rt_parallel_tiles(j.tiles, threads_for((double)rows * per_row), f32 ? bfil_tile_float : bfil_tile_double, &j);
  op_add_partials(f32, j.part, j.tiles, len, rt_tensor_data(df));
  free(j.part);
  return RT_OK;
}

/* ---- gradients ------------------------------------------------------------------- */

static void copy_attrs(rt_node *n, const void *arg) {
  static const char *const names[] = {"strides", "padding", "data_format", "dilations", "explicit_paddings", NULL};
  op_copy_attrs(n, arg, names);
}

static const op_conv_ops depthwise_ops_g = {"DepthwiseConv2dNative", "DepthwiseConv2dNativeBackpropInput",
                                             "DepthwiseConv2dNativeBackpropFilter", copy_attrs};
static int depthwise_grad(rt_grad_ctx *c) { return op_conv_grads(c, &depthwise_ops_g, 0); }
static int backprop_input_grad(rt_grad_ctx *c) { return op_conv_grads(c, &depthwise_ops_g, 1); }
static int backprop_filter_grad(rt_grad_ctx *c) { return op_conv_grads(c, &depthwise_ops_g, 2); }

/* ---- the table ------------------------------------------------------------------- */

#define DW_ATTRS                                                                               \
  "T: {float, double}, strides: list(int), padding: string, explicit_paddings: list(int) = [], " \
  "data_format: string = 'NHWC', dilations: list(int) = []"

static const rt_op_def depthwise_ops[] = {
  {.name = "DepthwiseConv2dNative", .inputs = "input: T, filter: T", .outputs = "output: T", .attrs = DW_ATTRS,
   .help = "Each input channel c convolved with filter[:, :, c, q] for each q: output channel c * multiplier + q.",
   .shape = depthwise_shape, .kernel = {[RT_DEV_CPU] = depthwise_kernel}, .grad = depthwise_grad},
  {.name = "DepthwiseConv2dNativeBackpropInput", .inputs = "input_sizes: int32, filter: T, out_backprop: T",
   .outputs = "output: T", .attrs = DW_ATTRS,
   .help = "DepthwiseConv2dNative's gradient for its input, of shape input_sizes.",
   .shape = backprop_input_shape, .kernel = {[RT_DEV_CPU] = backprop_input_kernel}, .grad = backprop_input_grad},
  {.name = "DepthwiseConv2dNativeBackpropFilter", .inputs = "input: T, filter_sizes: int32, out_backprop: T",
   .outputs = "output: T", .attrs = DW_ATTRS,
   .help = "DepthwiseConv2dNative's gradient for its filter, of shape filter_sizes.",
   .shape = backprop_filter_shape, .kernel = {[RT_DEV_CPU] = backprop_filter_kernel},
   .grad = backprop_filter_grad},
};

void op_depthwise_register(void) { rt_op_register(depthwise_ops, OP_COUNT(depthwise_ops)); }
