/* Max pooling with the position of each maximum, and patch extraction, as TF 1.x has them:
 *   MaxPoolWithArgmax(input) -> (output, argmax)   argmax: ((b*H + y)*W + x)*C + c of the
 *                                                  first maximum (b only with include_batch_in_index)
 *   MaxPoolGradWithArgmax(input, grad, argmax)     grad added into zeros at each argmax
 *   ExtractImagePatches(images) -> patches         each window's pixels, (row, column, channel)
 *                                                  order, as the output's depth
 *   _ExtractImagePatchesGrad(images, grad)         ExtractImagePatches' gradient (tfsh's own):
 *                                                  each patch element added back onto its pixel
 * NHWC, CPU only. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "ops/ops_int.h"

#define IN(i) (c->node->inputs[i])
#define DY (c->dy[0])
#define POOL_T "{float, double, int32, int64, uint8, int8, int16, uint16}"

/* 1 for SAME, 0 for VALID, -1 for anything else. */
static int padding_same(const rt_node *n) {
  const char *p = rt_node_string(n, "padding", "");
  return !strcmp(p, "SAME") ? 1 : !strcmp(p, "VALID") ? 0 : -1;
}

static int bad_padding(rt_shape_ctx *c) {
  return op_shape_error(c, 0, "Value for attr 'padding' of \"%s\" is not in the list of allowed "
                        "values: \"SAME\", \"VALID\"", rt_node_string(c->node, "padding", ""));
}

/* One spatial dimension of a window: output size and padding before, TF's arithmetic with an
 * effective window eff = (k - 1) * rate + 1. False where VALID leaves a negative size (the
 * division truncates, as TF's: 0 rows where eff exceeds in by less than s). */
static bool window_dim(int64_t in, int64_t eff, int64_t s, bool same, int64_t *out, int64_t *pad) {
  if (same) {
    *out = (in + s - 1) / s;
    int64_t need = (*out - 1) * s + eff - in;
    *pad = need > 0 ? need / 2 : 0;
    return true;
  }
  *pad = 0;
  *out = (in - eff + s) / s;
  return *out >= 0;
}

/* ---- MaxPoolWithArgmax and its gradient ------------------------------------------- */

/* ksize and strides: 4 values each, positive. Sets *k, *s. */
static int pool_attrs(rt_shape_ctx *c, const int64_t **k, const int64_t **s) {
  int nk, ns;
  *k = op_list_ints(c->node, "ksize", &nk);
  *s = op_list_ints(c->node, "strides", &ns);
  if (ns != 4)
    return op_shape_error(c, 0, "MaxPool requires the stride attribute to contain 4 values, but got: %d", ns);
  if (nk != 4)
    return op_shape_error(c, 0, "MaxPool requires the ksize attribute to contain 4 values, but got: %d", nk);
  for (int d = 0; d < 4; d++)
    if ((*k)[d] <= 0 || (*k)[d] > INT32_MAX)
      return op_shape_error(c, 0, "ksize must be a positive int32 value, got:%lld", (long long)(*k)[d]);
  for (int d = 0; d < 4; d++) {
    if ((*s)[d] <= 0) return op_shape_error(c, 0, "Stride must be > 0, but got %lld", (long long)(*s)[d]);
    if ((*s)[d] > INT32_MAX)
      return op_shape_error(c, 0, "Stride must be an int32 value, but got %lld", (long long)(*s)[d]);
  }
  if (padding_same(c->node) < 0) return bad_padding(c);
  return RT_OK;
}

/* The pooled shape of NHWC x (unknown dims stay unknown). */
static int pooled_shape(rt_shape_ctx *c, const rt_shape *x, const int64_t *k, const int64_t *s, rt_shape *o) {
  if (x->ndims >= 0 && x->ndims != 4) return op_rank_error(c, 4, x->ndims);
  *o = rt_shape_make(4, (int64_t[]){-1, -1, -1, -1});
  if (x->ndims < 0) return RT_OK;
  bool same = padding_same(c->node) == 1;
  o->dims[0] = x->dims[0], o->dims[3] = x->dims[3];
  for (int d = 1; d <= 2; d++) {
    int64_t pad;
    if (x->dims[d] < 0) continue;
    if ((!same && x->dims[d] < k[d]) || !window_dim(x->dims[d], k[d], s[d], same, &o->dims[d], &pad))
      return op_shape_error(c, 0, "Negative dimension size caused by subtracting %lld from %lld",
                            (long long)k[d], (long long)x->dims[d]);
  }
  return RT_OK;
}

static int argmax_type_ok(rt_shape_ctx *c, rt_dtype t) {
  if (t == RT_INT32 || t == RT_INT64) return RT_OK;
  return op_shape_error(c, 0, "Value passed to parameter 'Targmax' has DataType %s not in list of "
                        "allowed values: int32, int64", rt_dtype_name(t));
}

static int max_pool_argmax_shape(rt_shape_ctx *c) {
  const int64_t *k, *s;
  if (pool_attrs(c, &k, &s) || argmax_type_ok(c, c->out_types[1])) return c->st->code;
  rt_shape o;
  if (pooled_shape(c, &c->in_shapes[0], k, s, &o)) return c->st->code;
  c->out_shapes[0] = c->out_shapes[1] = o;
  return RT_OK;
}

static int max_pool_grad_argmax_shape(rt_shape_ctx *c) {
  const int64_t *k, *s;
  if (pool_attrs(c, &k, &s)) return c->st->code;
  for (int i = 0; i < 2; i++)
    if (c->in_shapes[i].ndims >= 0 && c->in_shapes[i].ndims != 4) return op_rank_error(c, 4, c->in_shapes[i].ndims);
  return op_shape_unchanged(c);
}

/* The kernels' window: input [n, h, w, ch] pooled to [n, oh, ow, ch], padding pt / pl. */
typedef struct pool_win {
  int64_t n, h, w, ch, kh, kw, sh, sw, oh, ow, pt, pl;
} pool_win;

/* The window of input shape x from the node's attrs, with TF's kernel errors. */
static int pool_window(rt_kernel_ctx *c, const rt_shape *x, pool_win *p) {
  int nk, ns, same = padding_same(c->node);
  const int64_t *k = op_list_ints(c->node, "ksize", &nk), *s = op_list_ints(c->node, "strides", &ns);
  if (nk != 4 || ns != 4 || same < 0)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s needs 4 ksize and 4 strides and padding SAME or VALID",
                           c->node->op);
  for (int d = 0; d < 4; d++)
    if (k[d] <= 0 || s[d] <= 0 || k[d] > INT32_MAX || s[d] > INT32_MAX)
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "ksize and strides must be positive int32 values");
  if (x->ndims != 4) {
    char b[160];
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "input must be 4-dimensional: %s", op_shape_tf(x, b, sizeof b));
  }
  if (k[0] != 1 || s[0] != 1)
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "Pooling is not yet supported on the batch dimension.");
  if (k[3] != 1 && (k[1] != 1 || k[2] != 1))
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "MaxPooling supports exactly one of pooling across depth "
                           "or pooling across width/height.");
  if (k[3] != 1)
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "%s across depth is not implemented in tfsh", c->node->op);
  *p = (pool_win){.n = x->dims[0], .h = x->dims[1], .w = x->dims[2], .ch = x->dims[3], .kh = k[1], .kw = k[2],
                  .sh = s[1], .sw = s[2]};
  if ((!same && (p->h < p->kh || p->w < p->kw)) || !window_dim(p->h, p->kh, p->sh, same, &p->oh, &p->pt) ||
      !window_dim(p->w, p->kw, p->sw, same, &p->ow, &p->pl))
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Negative dimension size caused by subtracting %lld from %lld",
                           (long long)(p->h < p->kh ? p->kh : p->kw), (long long)(p->h < p->kh ? p->h : p->w));
  return RT_OK;
}

/* For each output element, the maximum (out) and its index within its batch (am). The first
 * element of the window is taken, then any greater one: ties keep the first in row-major
 * order, and a NaN counts only where it comes first, as TF's CPU kernel picks. */
#define POOL(T)                                                                             \
  do {                                                                                      \
    const T *x = rt_tensor_data(in);                                                        \
    T *out = rt_tensor_data(y);                                                             \
    for (int64_t b = 0; b < p.n; b++)                                                       \
      for (int64_t oy = 0; oy < p.oh; oy++)                                                 \
        for (int64_t ox = 0; ox < p.ow; ox++) {                                             \
          int64_t o = ((b * p.oh + oy) * p.ow + ox) * p.ch;                                 \
          int64_t y0 = oy * p.sh - p.pt, x0 = ox * p.sw - p.pl;                             \
          int64_t y1 = y0 + p.kh < p.h ? y0 + p.kh : p.h, x1 = x0 + p.kw < p.w ? x0 + p.kw : p.w; \
          for (int64_t ch = 0; ch < p.ch; ch++) am[o + ch] = -1;                            \
          for (int64_t iy = y0 < 0 ? 0 : y0; iy < y1; iy++)                                 \
            for (int64_t ix = x0 < 0 ? 0 : x0; ix < x1; ix++) {                             \
              int64_t at = (iy * p.w + ix) * p.ch;                                          \
              const T *px = x + b * plane + at;                                             \
              for (int64_t ch = 0; ch < p.ch; ch++)                                         \
                if (am[o + ch] < 0 || px[ch] > out[o + ch]) out[o + ch] = px[ch], am[o + ch] = at + ch; \
            }                                                                               \
        }                                                                                   \
  } while (0)

static int max_pool_argmax_kernel(rt_kernel_ctx *c) {
  const rt_tensor *in = c->inputs[0];
  pool_win p;
  if (pool_window(c, &in->shape, &p)) return c->st->code;
  rt_dtype at = rt_node_type(c->node, "Targmax", RT_INT64);
  if (at != RT_INT32 && at != RT_INT64)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Targmax must be int32 or int64, not %s", op_tf_type(at));
  rt_shape os = rt_shape_make(4, (int64_t[]){p.n, p.oh, p.ow, p.ch});
  rt_tensor *y = rt_kernel_output(c, 0, in->dtype, &os), *a = y ? rt_kernel_output(c, 1, at, &os) : NULL;
  if (!a) return c->st->code;
  int64_t total = rt_shape_numel(&os), plane = p.h * p.w * p.ch;
  int64_t *am = xmalloc((size_t)(total ? total : 1) * sizeof *am);
  switch (in->dtype) {
  case RT_FLOAT: POOL(float); break;
  case RT_DOUBLE: POOL(double); break;
  case RT_INT32: POOL(int32_t); break;
  case RT_INT64: POOL(int64_t); break;
  case RT_UINT8: POOL(uint8_t); break;
  case RT_INT8: POOL(int8_t); break;
  case RT_INT16: POOL(int16_t); break;
  case RT_UINT16: POOL(uint16_t); break;
  default:
    free(am);
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "MaxPoolWithArgmax of %s is not implemented in tfsh",
                           op_tf_type(in->dtype));
  }
  /* Indices count from the input's start where include_batch_in_index. */
  bool with_b = rt_node_bool(c->node, "include_batch_in_index", false);
  int64_t per_b = p.oh * p.ow * p.ch;
  for (int64_t i = 0; i < total; i++) {
    int64_t v = am[i] + (with_b ? i / per_b * plane : 0);
    if (at == RT_INT64) ((int64_t *)rt_tensor_data(a))[i] = v;
    else ((int32_t *)rt_tensor_data(a))[i] = (int32_t)v;
  }
  free(am);
  return RT_OK;
}

#define SCATTER(T)                                                                          \
  do {                                                                                      \
    T *o = rt_tensor_data(y);                                                               \
    const T *g = rt_tensor_data(gr);                                                        \
    for (int64_t i = 0; i < total; i++) o[ix[i]] += g[i];                                  \
  } while (0)

/* grad (shaped as the pool's output) added into zeros shaped as input, at argmax; each
 * index checked first, so a bad one is an error and never a write out of bounds. */
static int max_pool_grad_argmax_kernel(rt_kernel_ctx *c) {
  const rt_tensor *in = c->inputs[0], *gr = c->inputs[1], *am = c->inputs[2];
  pool_win p;
  if (pool_window(c, &in->shape, &p)) return c->st->code;
  rt_shape os = rt_shape_make(4, (int64_t[]){p.n, p.oh, p.ow, p.ch});
  char b1[160], b2[160];
  if (!rt_shape_equal(&gr->shape, &os))
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Expected grad shape to be %s, but got %s",
                           op_shape_tf(&os, b1, sizeof b1), op_shape_tf(&gr->shape, b2, sizeof b2));
  if (!rt_shape_equal(&am->shape, &os))
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Expected argmax shape to be %s, but got %s",
                           op_shape_tf(&os, b1, sizeof b1), op_shape_tf(&am->shape, b2, sizeof b2));
  if (am->dtype != RT_INT32 && am->dtype != RT_INT64)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "argmax must be int32 or int64, not %s", op_tf_type(am->dtype));
  if (gr->dtype != in->dtype)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "grad must be %s as input is, not %s", op_tf_type(in->dtype),
                           op_tf_type(gr->dtype));
  bool with_b = rt_node_bool(c->node, "include_batch_in_index", false);
  int64_t total = rt_shape_numel(&os), plane = p.h * p.w * p.ch, per_b = p.oh * p.ow * p.ch;
  int64_t *ix = xmalloc((size_t)(total ? total : 1) * sizeof *ix);
  for (int64_t i = 0; i < total; i++) {
    int64_t v = am->dtype == RT_INT64 ? ((const int64_t *)rt_tensor_data(am))[i]
                                      : ((const int32_t *)rt_tensor_data(am))[i];
    /* Within the input where include_batch_in_index, else within the element's batch. */
    int64_t lo = with_b ? 0 : i / per_b * plane, hi = with_b ? p.n * plane : plane;
    if (v < 0 || v >= hi) {
      free(ix);
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Invalid argmax index %lld at grad element %lld: must be "
                             "in [0, %lld)", (long long)v, (long long)i, (long long)hi);
    }
    ix[i] = lo + v;
  }
  rt_tensor *y = rt_kernel_output(c, 0, in->dtype, &in->shape);
  if (!y) {
    free(ix);
    return c->st->code;
  }
  memset(rt_tensor_data(y), 0, rt_tensor_nbytes(y));
  switch (in->dtype) {
  case RT_FLOAT: SCATTER(float); break;
  case RT_DOUBLE: SCATTER(double); break;
  case RT_INT32: SCATTER(int32_t); break;
  case RT_INT64: SCATTER(int64_t); break;
  case RT_UINT8: SCATTER(uint8_t); break;
  case RT_INT8: SCATTER(int8_t); break;
  case RT_INT16: SCATTER(int16_t); break;
  case RT_UINT16: SCATTER(uint16_t); break;
  default:
    free(ix);
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "MaxPoolGradWithArgmax of %s is not implemented in tfsh",
                           op_tf_type(in->dtype));
  }
  free(ix);
  return RT_OK;
}

/* ---- ExtractImagePatches and its gradient ----------------------------------------- */

static bool int32_attrs(const int64_t *k, const int64_t *s, const int64_t *r) {
  for (int d = 0; d < 4; d++)
    if (k[d] < INT32_MIN || k[d] > INT32_MAX || s[d] < INT32_MIN || s[d] > INT32_MAX || r[d] < INT32_MIN ||
        r[d] > INT32_MAX)
      return false;
  return true;
}

/* ksizes, strides and rates: 4 values each. */
static int patch_attrs(rt_shape_ctx *c, const int64_t **k, const int64_t **s, const int64_t **r) {
  int nk, ns, nr;
  *k = op_list_ints(c->node, "ksizes", &nk);
  *s = op_list_ints(c->node, "strides", &ns);
  *r = op_list_ints(c->node, "rates", &nr);
  const char *what = nk != 4 ? "ksizes" : ns != 4 ? "stride" : nr != 4 ? "rates" : NULL;
  if (what)
    return op_shape_error(c, 0, "ExtractImagePatches requires the %s attribute to contain 4 values, but got: %d",
                          what, nk != 4 ? nk : ns != 4 ? ns : nr);
  if (!int32_attrs(*k, *s, *r))   /* keeps the window arithmetic within int64 */
    return op_shape_error(c, 0, "ExtractImagePatches' ksizes, strides and rates must be int32 values");
  if (padding_same(c->node) < 0) return bad_padding(c);
  return RT_OK;
}

/* The patches' shape for NHWC images x (unknown dims stay unknown), TF's shape errors. */
static int patches_shape_of(rt_shape_ctx *c, const rt_shape *x, rt_shape *o) {
  const int64_t *k, *s, *r;
  if (patch_attrs(c, &k, &s, &r)) return c->st->code;
  if (x->ndims >= 0 && x->ndims != 4) return op_rank_error(c, 4, x->ndims);
  *o = rt_shape_make(4, (int64_t[]){-1, -1, -1, -1});
  if (x->ndims < 0) return RT_OK;
  bool same = padding_same(c->node) == 1;
  int64_t kk = k[1] * k[2];
  o->dims[0] = x->dims[0];
  if (x->dims[3] >= 0) {
    if (kk < 0 || __builtin_mul_overflow(kk, x->dims[3], &o->dims[3]))
      return op_shape_error(c, 0, "Negative dimension size caused by overflow when multiplying %lld and %lld",
                            (long long)x->dims[3], (long long)kk);
  }
  for (int d = 1; d <= 2; d++) {
    if (s[d] <= 0) return op_shape_error(c, 0, "Stride must be > 0, but got %lld", (long long)s[d]);
    int64_t eff = (k[d] - 1) * r[d] + 1, pad;
    if (x->dims[1] < 0 || x->dims[2] < 0) continue;   /* TF's: both unknown unless both known */
    if (!window_dim(x->dims[d], eff, s[d], same, &o->dims[d], &pad))
      return op_shape_error(c, 0, "Computed output size would be negative: %lld [input_size: %lld, "
                            "effective_filter_size: %lld, stride: %lld]", (long long)o->dims[d],
                            (long long)x->dims[d], (long long)eff, (long long)s[d]);
  }
  return RT_OK;
}

static int patches_shape(rt_shape_ctx *c) { return patches_shape_of(c, &c->in_shapes[0], &c->out_shapes[0]); }

static int patches_grad_shape(rt_shape_ctx *c) {
  rt_shape o;
  if (patches_shape_of(c, &c->in_shapes[0], &o)) return c->st->code;
  if (c->in_shapes[1].ndims >= 0 && c->in_shapes[1].ndims != 4) return op_rank_error(c, 4, c->in_shapes[1].ndims);
  return op_shape_unchanged(c);
}

/* The kernels' window: images [n, h, w, ch] to [n, oh, ow, kh*kw*ch]. */
typedef struct patch_win {
  int64_t n, h, w, ch, kh, kw, sh, sw, rh, rw, oh, ow, pt, pl;
} patch_win;

static int patch_window(rt_kernel_ctx *c, const rt_shape *x, patch_win *p) {
  int nk, ns, nr, same = padding_same(c->node);
  const int64_t *k = op_list_ints(c->node, "ksizes", &nk), *s = op_list_ints(c->node, "strides", &ns),
                *r = op_list_ints(c->node, "rates", &nr);
  if (nk != 4 || ns != 4 || nr != 4 || same < 0)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s needs 4 ksizes, strides and rates, and padding SAME or VALID",
                           c->node->op);
  if (x->ndims != 4) {
    char b[160];
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "input must be 4-dimensional: %s", op_shape_tf(x, b, sizeof b));
  }
  if (k[0] != 1 || k[3] != 1) return rt_kernel_error(c, RT_UNIMPLEMENTED, "Only support ksizes across space.");
  if (s[0] != 1 || s[3] != 1) return rt_kernel_error(c, RT_UNIMPLEMENTED, "Only support strides across space.");
  if (r[0] != 1 || r[3] != 1) return rt_kernel_error(c, RT_UNIMPLEMENTED, "Only support rates across space.");
  if (k[1] < 1 || k[2] < 1) return rt_kernel_error(c, RT_OUT_OF_RANGE, "ksizes is out of range.");
  if (r[1] < 1 || r[2] < 1) return rt_kernel_error(c, RT_OUT_OF_RANGE, "rates is out of range.");
  if (s[1] < 1 || s[2] < 1)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Stride must be > 0, but got %lld",
                           (long long)(s[1] < 1 ? s[1] : s[2]));
  int64_t depth;
  if (!int32_attrs(k, s, r) || __builtin_mul_overflow(k[1] * k[2], x->dims[3], &depth))
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "ExtractImagePatches' window is too large: ksizes, strides and "
                           "rates must be int32 values");
  *p = (patch_win){.n = x->dims[0], .h = x->dims[1], .w = x->dims[2], .ch = x->dims[3], .kh = k[1], .kw = k[2],
                   .sh = s[1], .sw = s[2], .rh = r[1], .rw = r[2]};
  int64_t eh = (p->kh - 1) * p->rh + 1, ew = (p->kw - 1) * p->rw + 1;
  if (!window_dim(p->h, eh, p->sh, same, &p->oh, &p->pt) || !window_dim(p->w, ew, p->sw, same, &p->ow, &p->pl))
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Computed output size would be negative: [input_size: %lld x %lld, "
                           "effective_filter_size: %lld x %lld]", (long long)p->h, (long long)p->w, (long long)eh,
                           (long long)ew);
  int64_t total;
  if (__builtin_mul_overflow(p->n * p->oh * p->ow, depth, &total) || total > INT64_MAX / 16)
    return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "ExtractImagePatches' output of %lld x %lld x %lld x %lld "
                           "elements is too large", (long long)p->n, (long long)p->oh, (long long)p->ow,
                           (long long)depth);
  return RT_OK;
}

/* For each patch element in output order, the flat index of its image pixel's first channel,
 * or -1 where it falls in the padding. */
static void patch_map(const patch_win *p, int64_t *src) {
  int64_t k = 0;
  for (int64_t b = 0; b < p->n; b++)
    for (int64_t oy = 0; oy < p->oh; oy++)
      for (int64_t ox = 0; ox < p->ow; ox++)
        for (int64_t ky = 0; ky < p->kh; ky++)
          for (int64_t kx = 0; kx < p->kw; kx++) {
            int64_t iy = oy * p->sh - p->pt + ky * p->rh, ix = ox * p->sw - p->pl + kx * p->rw;
            src[k++] = iy < 0 || iy >= p->h || ix < 0 || ix >= p->w ? -1 : ((b * p->h + iy) * p->w + ix) * p->ch;
          }
}

static int64_t patch_count(const patch_win *p) { return p->n * p->oh * p->ow * p->kh * p->kw; }

static int patches_kernel(rt_kernel_ctx *c) {
  const rt_tensor *x = c->inputs[0];
  if (rt_dtype_is_str(x->dtype) || x->dtype == RT_RESOURCE)
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "ExtractImagePatches of %s is not implemented in tfsh",
                           op_tf_type(x->dtype));
  patch_win p;
  if (patch_window(c, &x->shape, &p)) return c->st->code;
  rt_shape os = rt_shape_make(4, (int64_t[]){p.n, p.oh, p.ow, p.kh * p.kw * p.ch});
  rt_tensor *y = rt_kernel_output(c, 0, x->dtype, &os);
  if (!y || !rt_shape_numel(&os)) return c->st->code;
  int64_t np = patch_count(&p);
  int64_t *src = xmalloc((size_t)(np ? np : 1) * sizeof *src);
  patch_map(&p, src);
  size_t es = rt_dtype_size(x->dtype), run = (size_t)p.ch * es;
  char *dst = rt_tensor_data(y);
  const char *from = rt_tensor_data(x);
  for (int64_t k = 0; k < np; k++, dst += run)   /* a pixel's channels, or zeros */
    if (src[k] < 0) memset(dst, 0, run);
    else memcpy(dst, from + (size_t)src[k] * es, run);
  free(src);
  return RT_OK;
}

#define FOLD(T, LANES)                                                                      \
  do {                                                                                      \
    T *o = rt_tensor_data(y);                                                               \
    const T *g = rt_tensor_data(gr);                                                        \
    int64_t l = (LANES) * p.ch;                                                             \
    for (int64_t k = 0; k < np; k++, g += l)                                                \
      if (src[k] >= 0)                                                                      \
        for (int64_t j = 0; j < l; j++) o[src[k] * (LANES) + j] += g[j];                    \
  } while (0)

static int patches_grad_kernel(rt_kernel_ctx *c) {
  const rt_tensor *x = c->inputs[0], *gr = c->inputs[1];
  patch_win p;
  if (patch_window(c, &x->shape, &p)) return c->st->code;
  rt_shape os = rt_shape_make(4, (int64_t[]){p.n, p.oh, p.ow, p.kh * p.kw * p.ch});
  if (!rt_shape_equal(&gr->shape, &os)) {
    char b1[160], b2[160];
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Expected grad shape to be %s, but got %s",
                           op_shape_tf(&os, b1, sizeof b1), op_shape_tf(&gr->shape, b2, sizeof b2));
  }
  rt_tensor *y = rt_kernel_output(c, 0, gr->dtype, &x->shape);
  if (!y) return c->st->code;
  memset(rt_tensor_data(y), 0, rt_tensor_nbytes(y));
  if (!rt_shape_numel(&os)) return RT_OK;
  int64_t np = patch_count(&p);
  int64_t *src = xmalloc((size_t)(np ? np : 1) * sizeof *src);
  patch_map(&p, src);
  switch (gr->dtype) {
  case RT_FLOAT: FOLD(float, 1); break;
  case RT_COMPLEX64: FOLD(float, 2); break;   /* real and imaginary parts add alike */
  case RT_DOUBLE: FOLD(double, 1); break;
  case RT_INT32: FOLD(int32_t, 1); break;
  case RT_INT64: FOLD(int64_t, 1); break;
  case RT_UINT8: FOLD(uint8_t, 1); break;
  case RT_INT8: FOLD(int8_t, 1); break;
  case RT_INT16: FOLD(int16_t, 1); break;
  case RT_UINT16: FOLD(uint16_t, 1); break;
  default:
    free(src);
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "ExtractImagePatches' gradient of %s is not implemented in tfsh",
                           op_tf_type(gr->dtype));
  }
  free(src);
  return RT_OK;
}

/* ---- gradients ------------------------------------------------------------------- */

static void copy_attrs(rt_node *n, const void *arg) {
  static const char *const names[] = {"ksize", "ksizes", "strides", "rates", "padding", "include_batch_in_index",
                                      NULL};
  op_copy_attrs(n, arg, names);
}

/* The pooled values' gradient goes to their argmax; the argmax output has none. */
static int max_pool_argmax_grad(rt_grad_ctx *c) {
  if (!DY) return RT_OK;
  char am[300];
  snprintf(am, sizeof am, "%s:1", c->node->name);
  const char *in[] = {IN(0), DY, am};
  c->dx[0] = op_grad_node(c, "MaxPoolGradWithArgmax", "MaxPoolGradWithArgmax", 3, in, copy_attrs, c->node);
  return c->st->code;
}

static int patches_grad(rt_grad_ctx *c) {
  if (!DY) return RT_OK;
  const char *in[] = {IN(0), DY};
  c->dx[0] = op_grad_node(c, "_ExtractImagePatchesGrad", "ExtractImagePatchesGrad", 2, in, copy_attrs, c->node);
  return c->st->code;
}

/* The fold is linear in grad: its gradient is the patches of dy; none for images (only
 * their shape counts). */
static int patches_grad_grad(rt_grad_ctx *c) {
  if (!DY) return RT_OK;
  c->dx[1] = op_grad_node(c, "ExtractImagePatches", "ExtractImagePatches", 1, &DY, copy_attrs, c->node);
  return c->st->code;
}

#define PATCH_ATTRS "ksizes: list(int) >= 4, strides: list(int) >= 4, rates: list(int) >= 4, padding: string"

static const rt_op_def pool_more_ops[] = {
  {.name = "MaxPoolWithArgmax", .inputs = "input: T", .outputs = "output: T, argmax: Targmax",
   .attrs = "ksize: list(int) >= 4, strides: list(int) >= 4, Targmax: {int32, int64} = int64, "
            "padding: string, include_batch_in_index: bool = false, T: " POOL_T,
   .help = "Maximum over each ksize window, moved by strides, and the flat index of the first maximum "
           "((b*height + y)*width + x)*channels + c, with b only if include_batch_in_index.",
   .shape = max_pool_argmax_shape, .kernel = {[RT_DEV_CPU] = max_pool_argmax_kernel}, .grad = max_pool_argmax_grad},
  {.name = "MaxPoolGradWithArgmax", .inputs = "input: T, grad: T, argmax: Targmax", .outputs = "output: T",
   .attrs = "ksize: list(int) >= 4, strides: list(int) >= 4, padding: string, "
            "include_batch_in_index: bool = false, Targmax: {int32, int64}, T: " POOL_T,
   .help = "MaxPoolWithArgmax's gradient: grad added into zeros shaped as input at each argmax.",
   .shape = max_pool_grad_argmax_shape, .kernel = {[RT_DEV_CPU] = max_pool_grad_argmax_kernel}},
  {.name = "ExtractImagePatches", .inputs = "images: T", .outputs = "patches: T",
   .attrs = PATCH_ATTRS ", T: type",
   .help = "Each ksizes window (rates apart, moved by strides; zeros outside for SAME) as the depth "
           "of one output pixel, in (row, column, channel) order.",
   .shape = patches_shape, .kernel = {[RT_DEV_CPU] = patches_kernel}, .grad = patches_grad},
  {.name = "_ExtractImagePatchesGrad", .inputs = "images: T, grad: T", .outputs = "output: T",
   .attrs = PATCH_ATTRS ", T: type",
   .help = "ExtractImagePatches' gradient: each element of grad added onto its pixel of images' shape.",
   .shape = patches_grad_shape, .kernel = {[RT_DEV_CPU] = patches_grad_kernel}, .grad = patches_grad_grad,
   .flags = RT_OP_INTERNAL},
};

void op_pool_more_register(void) { rt_op_register(pool_more_ops, OP_COUNT(pool_more_ops)); }
