/* Image ops of TF1 input pipelines and CNNs, with TF's arithmetic:
 *   ReverseV2(x, axis)                      flips (tf.reverse, image flips)
 *   ResizeBilinear, ResizeNearestNeighbor   TF's legacy and half-pixel samplings, + grads
 *   LRN, LRNGrad                            local response normalization (the CIFAR-10 model)
 *   ReadFile                                a whole file as one string
 *   DecodePng, EncodePng                    8-bit PNG (gray, gray+alpha, RGB, RGBA, palette,
 *                                           1-8 bit depths), decoded by hand over zlib:
 *                                           lossless, so the pixels are TF's exactly
 * CPU only. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/alloc.h"
#include "ops/ops_int.h"

#define IN(i) (c->node->inputs[i])
#define DY (c->dy[0])

static int oom(rt_kernel_ctx *c) { return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory"); }

/* ---- ReverseV2 ------------------------------------------------------------------------- */

static int reverse_kernel(rt_kernel_ctx *c) {
  const rt_tensor *x = c->inputs[0], *ax = c->inputs[1];
  int nd = x->shape.ndims;
  bool flip[RT_MAX_DIMS] = {0};
  for (int64_t i = 0, n = rt_tensor_numel(ax); i < n; i++) {
    int64_t a = ax->dtype == RT_INT64 ? ((const int64_t *)rt_tensor_data(ax))[i] : ((const int32_t *)rt_tensor_data(ax))[i];
    if (a < -nd || a >= nd)
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "'axis'[%lld] = %lld is out of valid range [%d, %d]", (long long)i,
                             (long long)a, -nd, nd - 1);
    if (a < 0) a += nd;
    if (flip[a]) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "axis %lld specified more than once.", (long long)a);
    flip[a] = true;
  }
  rt_tensor *o = rt_kernel_output(c, 0, x->dtype, &x->shape);
  if (!o) return c->st->code;
  int64_t n = rt_tensor_numel(x);
  size_t w = rt_dtype_size(x->dtype);
  bool str = rt_dtype_is_str(x->dtype);
  int64_t stride[RT_MAX_DIMS];
  for (int d = nd - 1, s = 1; d >= 0; d--) stride[d] = s, s *= (int)x->shape.dims[d];
  for (int64_t i = 0; i < n; i++) {   /* the source of each output element */
    int64_t src = 0, rest = i;
    for (int d = 0; d < nd; d++) {
      int64_t k = rest / stride[d];
      rest %= stride[d];
      src += (flip[d] ? x->shape.dims[d] - 1 - k : k) * stride[d];
    }
    if (str) {
      const rt_str *s = (const rt_str *)rt_tensor_data(x) + src;
      if (rt_tensor_set_str(o, i, s->ptr ? s->ptr : "", s->len) < 0) return oom(c);
    } else {
      memcpy((char *)rt_tensor_data(o) + (size_t)i * w, (const char *)rt_tensor_data(x) + (size_t)src * w, w);
    }
  }
  return RT_OK;
}

static int reverse_grad(rt_grad_ctx *c) {
  if (!DY) return RT_OK;
  const char *in[] = {DY, IN(1)};
  c->dx[0] = op_grad_node(c, "ReverseV2", "ReverseV2", 2, in, NULL, NULL);
  return c->st->code;
}

/* ---- resizing ---------------------------------------------------------------------------- */

static float resize_scale(int64_t in, int64_t out, bool align) {
  return align && out > 1 ? (float)(in - 1) / (float)(out - 1) : (float)in / (float)out;
}

/* The output size (input 1) and checks shared by the resize kernels and their grads. */
static int resize_size(rt_kernel_ctx *c, const rt_tensor *img, const rt_tensor *size, int64_t *oh, int64_t *ow) {
  char a[128];
  if (img->shape.ndims != 4)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "input must be 4-dimensional%s", op_shape_tf(&img->shape, a, sizeof a));
  if (size->shape.ndims != 1 || size->shape.dims[0] != 2 || size->dtype != RT_INT32)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "shape_t must be 1-dimensional with 2 elements, got %s",
                           op_shape_tf(&size->shape, a, sizeof a));
  const int32_t *s = rt_tensor_data(size);
  *oh = s[0], *ow = s[1];
  if (*oh <= 0 || *ow <= 0) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "output dimensions must be positive");
  if (rt_node_bool(c->node, "align_corners", false) && rt_node_bool(c->node, "half_pixel_centers", false))
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "If half_pixel_centers is True, align_corners must be False.");
  return RT_OK;
}

static float value_at(const rt_tensor *t, int64_t i) {
  const void *d = rt_tensor_data(t);
  switch (t->dtype) {
  case RT_FLOAT: return ((const float *)d)[i];
  case RT_DOUBLE: return (float)((const double *)d)[i];
  case RT_UINT8: return ((const uint8_t *)d)[i];
  case RT_INT32: return (float)((const int32_t *)d)[i];
  default: return (float)((const int64_t *)d)[i];
  }
}

typedef struct lerp {
  int64_t lo, hi;
  float f;
} lerp;

static void weights(int64_t in, int64_t out, float scale, bool half, lerp *w) {
  for (int64_t i = 0; i < out; i++) {
    float v = half ? ((float)i + 0.5f) * scale - 0.5f : (float)i * scale;
    float fl = floorf(v);
    w[i].lo = fl > 0 ? (int64_t)fl : 0;
    w[i].hi = (int64_t)ceilf(v) < in - 1 ? (int64_t)ceilf(v) : in - 1;
    if (w[i].hi < 0) w[i].hi = 0;
    w[i].f = v - fl;
  }
}

static int resize_bilinear_kernel(rt_kernel_ctx *c) {
  const rt_tensor *x = c->inputs[0];
  int64_t oh, ow;
  int rc = resize_size(c, x, c->inputs[1], &oh, &ow);
  if (rc) return rc;
  int64_t b = x->shape.dims[0], h = x->shape.dims[1], w = x->shape.dims[2], ch = x->shape.dims[3];
  bool align = rt_node_bool(c->node, "align_corners", false), half = rt_node_bool(c->node, "half_pixel_centers", false);
  rt_shape os = {.ndims = 4, .dims = {b, oh, ow, ch}};
  rt_tensor *o = rt_kernel_output(c, 0, RT_FLOAT, &os);
  if (!o) return c->st->code;
  lerp *ys = xmalloc((size_t)oh * sizeof *ys), *xs = xmalloc((size_t)ow * sizeof *xs);
  weights(h, oh, resize_scale(h, oh, align), half, ys);
  weights(w, ow, resize_scale(w, ow, align), half, xs);
  float *out = rt_tensor_data(o);
  for (int64_t n = 0; n < b; n++)
    for (int64_t y = 0; y < oh; y++)
      for (int64_t xx = 0; xx < ow; xx++)
        for (int64_t k = 0; k < ch; k++) {
          int64_t base = n * h * w * ch;
          float tl = value_at(x, base + (ys[y].lo * w + xs[xx].lo) * ch + k);
          float tr = value_at(x, base + (ys[y].lo * w + xs[xx].hi) * ch + k);
          float bl = value_at(x, base + (ys[y].hi * w + xs[xx].lo) * ch + k);
          float br = value_at(x, base + (ys[y].hi * w + xs[xx].hi) * ch + k);
          float top = tl + (tr - tl) * xs[xx].f, bottom = bl + (br - bl) * xs[xx].f;
          *out++ = top + (bottom - top) * ys[y].f;
        }
  free(ys);
  free(xs);
  return RT_OK;
}

/* ResizeBilinearGrad(grads [b, oh, ow, c] float, original_image): grads spread back with the
 * forward weights. */
static int resize_bilinear_grad_kernel(rt_kernel_ctx *c) {
  const rt_tensor *g = c->inputs[0], *orig = c->inputs[1];
  if (g->shape.ndims != 4 || orig->shape.ndims != 4)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "input_grad and original_image must be 4-dimensional");
  int64_t b = orig->shape.dims[0], h = orig->shape.dims[1], w = orig->shape.dims[2], ch = orig->shape.dims[3];
  int64_t oh = g->shape.dims[1], ow = g->shape.dims[2];
  bool align = rt_node_bool(c->node, "align_corners", false), half = rt_node_bool(c->node, "half_pixel_centers", false);
  rt_tensor *o = rt_kernel_output(c, 0, orig->dtype, &orig->shape);
  if (!o) return c->st->code;
  lerp *ys = xmalloc((size_t)oh * sizeof *ys), *xs = xmalloc((size_t)ow * sizeof *xs);
  weights(h, oh, resize_scale(h, oh, align), half, ys);
  weights(w, ow, resize_scale(w, ow, align), half, xs);
  int64_t n_out = rt_tensor_numel(o);
  float *acc = xcalloc((size_t)n_out, sizeof *acc);
  const float *gd = rt_tensor_data(g);
  for (int64_t n = 0; n < b; n++)
    for (int64_t y = 0; y < oh; y++)
      for (int64_t xx = 0; xx < ow; xx++)
        for (int64_t k = 0; k < ch; k++) {
          float gv = *gd++, dt = (1 - ys[y].f) * gv, db = ys[y].f * gv;
          float *a = acc + n * h * w * ch + k;
          a[(ys[y].lo * w + xs[xx].lo) * ch] += dt * (1 - xs[xx].f);
          a[(ys[y].lo * w + xs[xx].hi) * ch] += dt * xs[xx].f;
          a[(ys[y].hi * w + xs[xx].lo) * ch] += db * (1 - xs[xx].f);
          a[(ys[y].hi * w + xs[xx].hi) * ch] += db * xs[xx].f;
        }
  for (int64_t i = 0; i < n_out; i++) {
    if (o->dtype == RT_DOUBLE) ((double *)rt_tensor_data(o))[i] = acc[i];
    else ((float *)rt_tensor_data(o))[i] = acc[i];
  }
  free(acc);
  free(ys);
  free(xs);
  return RT_OK;
}

static int64_t nn_index(int64_t i, float scale, int64_t in, bool align, bool half) {
  float v = half ? ((float)i + 0.5f) * scale : (float)i * scale;
  int64_t k = align ? (int64_t)roundf(v) : (int64_t)floorf(v);
  if (k > in - 1) k = in - 1;
  return k < 0 ? 0 : k;
}

/* ResizeNearestNeighbor (grad: 0) and ResizeNearestNeighborGrad (1): the same index map. */
static int nearest(rt_kernel_ctx *c, bool grad) {
  const rt_tensor *x = c->inputs[0];
  int64_t sh, sw;
  int rc = resize_size(c, x, c->inputs[1], &sh, &sw);
  if (rc) return rc;
  int64_t b = x->shape.dims[0], h = x->shape.dims[1], w = x->shape.dims[2], ch = x->shape.dims[3];
  bool align = rt_node_bool(c->node, "align_corners", false), half = rt_node_bool(c->node, "half_pixel_centers", false);
  /* forward: x [b,h,w] -> [b,sh,sw]; grad: dy [b,h,w] -> [b,sh,sw] summing into the source */
  rt_shape os = {.ndims = 4, .dims = {b, sh, sw, ch}};
  rt_tensor *o = rt_kernel_output(c, 0, x->dtype, &os);
  if (!o) return c->st->code;
  size_t es = rt_dtype_size(x->dtype);
  if (!grad) {
    float hs = resize_scale(h, sh, align), ws = resize_scale(w, sw, align);
    char *out = rt_tensor_data(o);
    for (int64_t n = 0; n < b; n++)
      for (int64_t y = 0; y < sh; y++) {
        int64_t iy = nn_index(y, hs, h, align, half);
        for (int64_t xx = 0; xx < sw; xx++, out += (size_t)ch * es) {
          int64_t ix = nn_index(xx, ws, w, align, half);
          memcpy(out, (const char *)rt_tensor_data(x) + (size_t)(((n * h + iy) * w + ix) * ch) * es, (size_t)ch * es);
        }
      }
    return RT_OK;
  }
  if (x->dtype != RT_FLOAT) return rt_kernel_error(c, RT_UNIMPLEMENTED, "ResizeNearestNeighborGrad: float32 only in tfsh");
  float hs = resize_scale(sh, h, align), ws = resize_scale(sw, w, align);
  float *out = rt_tensor_data(o);
  memset(out, 0, (size_t)rt_tensor_numel(o) * sizeof *out);
  const float *g = rt_tensor_data(x);
  for (int64_t n = 0; n < b; n++)
    for (int64_t y = 0; y < h; y++) {
      int64_t oy = nn_index(y, hs, sh, align, half);
      for (int64_t xx = 0; xx < w; xx++) {
        int64_t ox = nn_index(xx, ws, sw, align, half);
        for (int64_t k = 0; k < ch; k++) out[((n * sh + oy) * sw + ox) * ch + k] += *g++;
      }
    }
  return RT_OK;
}

static int nearest_kernel(rt_kernel_ctx *c) { return nearest(c, false); }
static int nearest_grad_kernel(rt_kernel_ctx *c) { return nearest(c, true); }

static void copy_resize_attrs(rt_node *n, const void *arg) {
  rt_node_set_bool(n, "align_corners", rt_node_bool(arg, "align_corners", false));
  rt_node_set_bool(n, "half_pixel_centers", rt_node_bool(arg, "half_pixel_centers", false));
}

static int resize_bilinear_grad(rt_grad_ctx *c) {
  if (!DY) return RT_OK;
  const char *in[] = {DY, IN(0)};
  c->dx[0] = op_grad_node(c, "ResizeBilinearGrad", "ResizeBilinearGrad", 2, in, copy_resize_attrs, c->node);
  c->dx[1] = NULL;
  return c->st->code;
}

static int nearest_grad(rt_grad_ctx *c) {
  if (!DY) return RT_OK;
  rt_shape s = op_gshape(c, IN(0));
  if (s.ndims != 4 || s.dims[1] < 0 || s.dims[2] < 0)
    return rt_error(c->st, RT_UNIMPLEMENTED, "the gradient of ResizeNearestNeighbor needs the input's height and width known");
  int64_t hw[2] = {s.dims[1], s.dims[2]};
  char *size = op_gints(c, 2, hw);
  const char *in[] = {DY, size};
  c->dx[0] = size ? op_grad_node(c, "ResizeNearestNeighborGrad", "ResizeNearestNeighborGrad", 2, in, copy_resize_attrs, c->node)
                  : NULL;
  free(size);
  return c->st->code;
}

static int resize_shape(rt_shape_ctx *c) {
  const rt_shape *x = &c->in_shapes[0];
  if (x->ndims >= 0 && x->ndims != 4) return op_rank_error(c, 4, x->ndims);
  int64_t hw[2];
  int n;
  rt_shape o = {.ndims = 4, .dims = {-1, -1, -1, -1}};
  if (x->ndims == 4) o.dims[0] = x->dims[0], o.dims[3] = x->dims[3];
  if (op_const_ints(c, 1, hw, 2, &n) && n == 2) o.dims[1] = hw[0], o.dims[2] = hw[1];
  c->out_shapes[0] = o;
  return RT_OK;
}

static int resize_bilinear_shape(rt_shape_ctx *c) {
  c->out_types[0] = RT_FLOAT;
  return resize_shape(c);
}

static int like_input1(rt_shape_ctx *c) {
  c->out_types[0] = c->in_types[1];
  c->out_shapes[0] = c->in_shapes[1];
  return RT_OK;
}

/* ---- LRN --------------------------------------------------------------------------------- */

typedef struct lrn_params {
  int64_t r;
  float bias, alpha, beta;
} lrn_params;

static lrn_params lrn_of(const rt_node *n) {
  return (lrn_params){rt_node_int(n, "depth_radius", 5), (float)rt_node_float(n, "bias", 1.0),
                      (float)rt_node_float(n, "alpha", 1.0), (float)rt_node_float(n, "beta", 0.5)};
}

static int lrn_kernel(rt_kernel_ctx *c) {
  const rt_tensor *x = c->inputs[0];
  if (x->shape.ndims != 4 || x->dtype != RT_FLOAT)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "input must be 4-dimensional float32");
  lrn_params p = lrn_of(c->node);
  rt_tensor *o = rt_kernel_output(c, 0, RT_FLOAT, &x->shape);
  if (!o) return c->st->code;
  int64_t depth = x->shape.dims[3], rows = rt_tensor_numel(x) / (depth ? depth : 1);
  const float *in = rt_tensor_data(x);
  float *out = rt_tensor_data(o);
  for (int64_t r = 0; r < rows; r++, in += depth, out += depth)
    for (int64_t d = 0; d < depth; d++) {
      int64_t lo = d - p.r > 0 ? d - p.r : 0, hi = d + p.r + 1 < depth ? d + p.r + 1 : depth;
      float sq = 0;
      for (int64_t k = lo; k < hi; k++) sq += in[k] * in[k];
      out[d] = in[d] / powf(p.bias + p.alpha * sq, p.beta);
    }
  return RT_OK;
}

/* LRNGrad(input_grads, input_image, output_image). */
static int lrn_grad_kernel(rt_kernel_ctx *c) {
  const rt_tensor *g = c->inputs[0], *x = c->inputs[1];
  if (x->shape.ndims != 4 || !rt_shape_equal(&g->shape, &x->shape))
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "LRNGrad: input_grads and input_image must be 4-dimensional and alike");
  lrn_params p = lrn_of(c->node);
  rt_tensor *o = rt_kernel_output(c, 0, RT_FLOAT, &x->shape);
  if (!o) return c->st->code;
  int64_t depth = x->shape.dims[3], rows = rt_tensor_numel(x) / (depth ? depth : 1);
  const float *in = rt_tensor_data(x), *gs = rt_tensor_data(g);
  float *out = rt_tensor_data(o);
  memset(out, 0, (size_t)rt_tensor_numel(o) * sizeof *out);
  for (int64_t r = 0; r < rows; r++, in += depth, gs += depth, out += depth)
    for (int64_t j = 0; j < depth; j++) {
      int64_t lo = j - p.r > 0 ? j - p.r : 0, hi = j + p.r + 1 < depth ? j + p.r + 1 : depth;
      float norm = 0;
      for (int64_t k = lo; k < hi; k++) norm += in[k] * in[k];
      norm = norm * p.alpha + p.bias;
      float pw = powf(norm, -p.beta), act = in[j] * pw;
      for (int64_t k = lo; k < hi; k++) {
        float dyi = -2.0f * p.alpha * p.beta * in[k] * act / norm;
        if (k == j) dyi += pw;
        out[k] += dyi * gs[j];
      }
    }
  return RT_OK;
}

static void copy_lrn_attrs(rt_node *n, const void *arg) {
  lrn_params p = lrn_of(arg);
  rt_node_set_int(n, "depth_radius", p.r);
  rt_node_set_float(n, "bias", p.bias);
  rt_node_set_float(n, "alpha", p.alpha);
  rt_node_set_float(n, "beta", p.beta);
}

static int lrn_grad(rt_grad_ctx *c) {
  if (!DY) return RT_OK;
  const char *in[] = {DY, IN(0), c->node->name};
  c->dx[0] = op_grad_node(c, "LRNGrad", "LRNGrad", 3, in, copy_lrn_attrs, c->node);
  return c->st->code;
}

/* ---- ReadFile ---------------------------------------------------------------------------- */

static int read_file_kernel(rt_kernel_ctx *c) {
  const rt_tensor *fn = c->inputs[0];
  if (rt_tensor_numel(fn) != 1) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "filename must be scalar");
  const rt_str *s = rt_tensor_data(fn);
  char *path = xstrndup(s->ptr ? s->ptr : "", s->len);
  FILE *f = fopen(path, "rb");
  if (!f) {
    int rc = rt_kernel_error(c, RT_NOT_FOUND, "%s; %s", path, strerror(errno));
    free(path);
    return rc;
  }
  char *buf = NULL;
  size_t n = 0, cap = 0, got;
  do {
    if (cap - n < 65536) buf = xrealloc(buf, cap = cap * 2 + 65536);
    got = fread(buf + n, 1, cap - n, f);
    n += got;
  } while (got);
  int bad = ferror(f);
  fclose(f);
  int rc = RT_OK;
  if (bad) rc = rt_kernel_error(c, RT_DATA_LOSS, "%s: read error", path);
  rt_shape sc = rt_shape_scalar();
  rt_tensor *o = rc ? NULL : rt_kernel_output(c, 0, RT_STRING, &sc);
  if (!rc && !o) rc = c->st->code;
  if (!rc && rt_tensor_set_str(o, 0, buf ? buf : "", n) < 0) rc = oom(c);
  free(buf);
  free(path);
  return rc;
}

/* ---- PNG --------------------------------------------------------------------------------- */

static uint32_t be32(const unsigned char *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }

static int paeth(int a, int b, int cc) {
  int p = a + b - cc, pa = abs(p - a), pb = abs(p - b), pc = abs(p - cc);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : cc;
}

typedef struct png {
  uint32_t w, h;
  int depth, color, chans;          /* samples per pixel in the file */
  unsigned char pal[256][4];
  int npal;
  bool has_trns;
  unsigned char *z;                 /* concatenated IDAT */
  size_t zn;
} png;

/* Decode into rgba-or-less 8-bit samples (out: w*h*chans_out, malloc'd). Message on error. */
static const char *png_decode(const unsigned char *d, size_t n, png *p, unsigned char **pix, int *chans_out) {
  static const unsigned char sig[8] = {137, 80, 78, 71, 13, 10, 26, 10};
  if (n < 8 || memcmp(d, sig, 8)) return "Invalid PNG header, data size %zu";
  size_t i = 8;
  bool ihdr = false, iend = false;
  while (i + 12 <= n && !iend) {
    uint32_t len = be32(d + i);
    const unsigned char *type = d + i + 4, *body = d + i + 8;
    if (len > n - i - 12) return "Invalid PNG data, size %zu";
    if (!memcmp(type, "IHDR", 4)) {
      if (len != 13) return "Invalid PNG: bad IHDR";
      p->w = be32(body), p->h = be32(body + 4), p->depth = body[8], p->color = body[9];
      if (body[12]) return "interlaced PNG images are not supported in tfsh";
      ihdr = true;
    } else if (!memcmp(type, "PLTE", 4)) {
      p->npal = (int)(len / 3 > 256 ? 256 : len / 3);
      for (int k = 0; k < p->npal; k++) memcpy(p->pal[k], body + 3 * k, 3), p->pal[k][3] = 255;
    } else if (!memcmp(type, "tRNS", 4)) {
      if (p->color == 3)
        for (uint32_t k = 0; k < len && k < 256; k++) p->pal[k][3] = body[k];
      p->has_trns = p->color == 3;
    } else if (!memcmp(type, "IDAT", 4)) {
      p->z = xrealloc(p->z, p->zn + len + 1);
      memcpy(p->z + p->zn, body, len);
      p->zn += len;
    } else if (!memcmp(type, "IEND", 4)) {
      iend = true;
    }
    i += 12 + len;
  }
  if (!ihdr || !p->zn) return "Invalid PNG data, size %zu";
  switch (p->color) {
  case 0: p->chans = 1; break;
  case 2: p->chans = 3; break;
  case 3: p->chans = 1; break;
  case 4: p->chans = 2; break;
  case 6: p->chans = 4; break;
  default: return "Invalid PNG: unknown color type";
  }
  if (p->depth == 16) return "16-bit PNG images are not supported in tfsh (decode_png dtype uint8)";
  if (p->depth != 8 && !(p->depth < 8 && (p->color == 0 || p->color == 3) && (p->depth == 1 || p->depth == 2 || p->depth == 4)))
    return "Invalid PNG: bad bit depth";
  if (!p->w || !p->h || p->w > (1u << 24) || p->h > (1u << 24) || (uint64_t)p->w * p->h > (1ull << 30))
    return "PNG image is too large or empty";
  size_t bpp = p->depth == 8 ? (size_t)p->chans : 1;   /* bytes per pixel for filtering */
  size_t stride = ((size_t)p->w * p->chans * p->depth + 7) / 8;
  size_t raw_n = (stride + 1) * p->h;
  unsigned char *raw = xmalloc(raw_n);
  uLongf got = raw_n;
  if (uncompress(raw, &got, p->z, p->zn) != Z_OK || got != raw_n) {
    free(raw);
    return "Invalid PNG data: bad compressed image";
  }
  unsigned char *prev = NULL;
  for (uint32_t y = 0; y < p->h; y++) {
    unsigned char *row = raw + y * (stride + 1), f = row[0], *cur = row + 1;
    if (f > 4) {
      free(raw);
      return "Invalid PNG data: bad filter";
    }
    for (size_t k = 0; k < stride; k++) {
      int a = k >= bpp ? cur[k - bpp] : 0, b = prev ? prev[k] : 0, cc = prev && k >= bpp ? prev[k - bpp] : 0;
      int v = f == 1 ? a : f == 2 ? b : f == 3 ? (a + b) / 2 : f == 4 ? paeth(a, b, cc) : 0;
      cur[k] = (unsigned char)(cur[k] + v);
    }
    prev = cur;
  }
  int outc = p->color == 3 ? (p->has_trns ? 4 : 3) : p->chans;
  unsigned char *out = xmalloc((size_t)p->w * p->h * (size_t)outc);
  for (uint32_t y = 0; y < p->h; y++) {
    const unsigned char *cur = raw + y * (stride + 1) + 1;
    for (uint32_t x = 0; x < p->w; x++) {
      unsigned char *o = out + ((size_t)y * p->w + x) * (size_t)outc;
      if (p->depth < 8) {
        int per = 8 / p->depth, shift = 8 - p->depth * (int)(x % (uint32_t)per + 1);
        int v = (cur[x / (uint32_t)per] >> shift) & ((1 << p->depth) - 1);
        if (p->color == 3) memcpy(o, p->pal[v], (size_t)outc);
        else o[0] = (unsigned char)(v * 255 / ((1 << p->depth) - 1));
      } else if (p->color == 3) {
        memcpy(o, p->pal[cur[x]], (size_t)outc);
      } else {
        memcpy(o, cur + (size_t)x * (size_t)p->chans, (size_t)p->chans);
      }
    }
  }
  free(raw);
  *pix = out;
  *chans_out = outc;
  return NULL;
}

/* Convert 8-bit samples between channel counts as TF's decoders do (gray <-> rgb,
 * alpha added as 255 or dropped); RGB to gray uses libpng's default weights. */
static void convert_channels(const unsigned char *in, int ic, unsigned char *out, int oc, size_t npix) {
  for (size_t i = 0; i < npix; i++, in += ic, out += oc) {
    int gray = ic >= 3 ? (6968 * in[0] + 23434 * in[1] + 2366 * in[2] + 16384) >> 15 : in[0];
    int alpha = ic == 2 ? in[1] : ic == 4 ? in[3] : 255;
    if (oc == 1) out[0] = (unsigned char)gray;
    else if (oc == 2) out[0] = (unsigned char)gray, out[1] = (unsigned char)alpha;
    else {
      for (int k = 0; k < 3; k++) out[k] = ic >= 3 ? in[k] : (unsigned char)gray;
      if (oc == 4) out[3] = (unsigned char)alpha;
    }
  }
}

static int decode_png_kernel(rt_kernel_ctx *c) {
  const rt_tensor *in = c->inputs[0];
  if (in->shape.ndims != 0) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "contents must be scalar");
  int64_t want = rt_node_int(c->node, "channels", 0);
  if (want != 0 && want != 1 && want != 2 && want != 3 && want != 4)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "channels must be 0, 1, 2, 3, or 4, got %lld", (long long)want);
  if (rt_node_type(c->node, "dtype", RT_UINT8) != RT_UINT8)
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "decode_png: dtype uint8 only in tfsh");
  const rt_str *s = rt_tensor_data(in);
  png p = {0};
  unsigned char *pix = NULL;
  int ch = 0;
  const char *why = png_decode((const unsigned char *)(s->ptr ? s->ptr : ""), s->len, &p, &pix, &ch);
  free(p.z);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
  if (why) return rt_kernel_error(c, RT_INVALID_ARGUMENT, why, s->len);   /* every message takes the size */
#pragma GCC diagnostic pop
  int oc = want ? (int)want : ch;
  rt_shape os = {.ndims = 3, .dims = {p.h, p.w, oc}};
  rt_tensor *o = rt_kernel_output(c, 0, RT_UINT8, &os);
  if (o) convert_channels(pix, ch, rt_tensor_data(o), oc, (size_t)p.w * p.h);
  free(pix);
  return o ? RT_OK : c->st->code;
}

static void put_chunk(unsigned char **buf, size_t *n, const char *type, const unsigned char *body, uint32_t len) {
  *buf = xrealloc(*buf, *n + 12 + len);
  unsigned char *p = *buf + *n;
  p[0] = (unsigned char)(len >> 24), p[1] = (unsigned char)(len >> 16), p[2] = (unsigned char)(len >> 8), p[3] = (unsigned char)len;
  memcpy(p + 4, type, 4);
  if (len) memcpy(p + 8, body, len);
  uLong crc = crc32(crc32(0L, Z_NULL, 0), p + 4, len + 4);
  p[8 + len] = (unsigned char)(crc >> 24), p[9 + len] = (unsigned char)(crc >> 16);
  p[10 + len] = (unsigned char)(crc >> 8), p[11 + len] = (unsigned char)crc;
  *n += 12 + len;
}

static int encode_png_kernel(rt_kernel_ctx *c) {
  const rt_tensor *im = c->inputs[0];
  if (im->shape.ndims != 3 || im->dtype != RT_UINT8)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "image must be 3-dimensional uint8 (tfsh encodes 8-bit PNG)");
  int64_t h = im->shape.dims[0], w = im->shape.dims[1], ch = im->shape.dims[2];
  if (ch < 1 || ch > 4) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "image must have 1, 2, 3, or 4 channels, got %lld", (long long)ch);
  if (h <= 0 || w <= 0 || h > (1 << 24) || w > (1 << 24)) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "bad image size");
  static const int color[] = {0, 0, 4, 2, 6};
  size_t stride = (size_t)(w * ch), raw_n = (stride + 1) * (size_t)h;
  unsigned char *raw = xmalloc(raw_n);
  for (int64_t y = 0; y < h; y++) {
    raw[y * (int64_t)(stride + 1)] = 0;
    memcpy(raw + y * (int64_t)(stride + 1) + 1, (const unsigned char *)rt_tensor_data(im) + y * (int64_t)stride, stride);
  }
  uLongf zn = compressBound(raw_n);
  unsigned char *z = xmalloc(zn);
  int level = (int)rt_node_int(c->node, "compression", -1);
  int zr = compress2(z, &zn, raw, raw_n, level < -1 || level > 9 ? -1 : level);
  free(raw);
  if (zr != Z_OK) return free(z), rt_kernel_error(c, RT_INTERNAL, "PNG compression failed");
  unsigned char *buf = xmalloc(8), hdr[13];
  memcpy(buf, "\211PNG\r\n\032\n", 8);
  size_t n = 8;
  for (int k = 0; k < 4; k++) hdr[k] = (unsigned char)(w >> (24 - 8 * k)), hdr[4 + k] = (unsigned char)(h >> (24 - 8 * k));
  hdr[8] = 8, hdr[9] = (unsigned char)color[ch], hdr[10] = hdr[11] = hdr[12] = 0;
  put_chunk(&buf, &n, "IHDR", hdr, 13);
  put_chunk(&buf, &n, "IDAT", z, (uint32_t)zn);
  put_chunk(&buf, &n, "IEND", NULL, 0);
  free(z);
  rt_shape sc = rt_shape_scalar();
  rt_tensor *o = rt_kernel_output(c, 0, RT_STRING, &sc);
  int rc = !o ? c->st->code : rt_tensor_set_str(o, 0, (const char *)buf, n) < 0 ? oom(c) : RT_OK;
  free(buf);
  return rc;
}

static int decode_png_shape(rt_shape_ctx *c) {
  int64_t ch = rt_node_int(c->node, "channels", 0);
  c->out_types[0] = RT_UINT8;
  c->out_shapes[0] = (rt_shape){.ndims = 3, .dims = {-1, -1, ch ? ch : -1}};
  return RT_OK;
}

static int scalar_out(rt_shape_ctx *c) {
  c->out_shapes[0] = rt_shape_scalar();
  return RT_OK;
}

static int same_as_input(rt_shape_ctx *c) {
  c->out_shapes[0] = c->in_shapes[0];
  return RT_OK;
}

#define RESIZE_ATTRS "align_corners: bool = false, half_pixel_centers: bool = false"
#define LRN_ATTRS "depth_radius: int = 5, bias: float = 1.0, alpha: float = 1.0, beta: float = 0.5, T: {float} = float"

static const rt_op_def image_ops[] = {
  {.name = "ReverseV2", .inputs = "tensor: T, axis: Tidx", .outputs = "output: T", .attrs = "Tidx: {int32, int64} = int32, T: type",
   .help = "tensor reversed along the given axes.", .shape = same_as_input, .kernel = {[RT_DEV_CPU] = reverse_kernel},
   .grad = reverse_grad},
  {.name = "ResizeBilinear", .inputs = "images: T, size: int32", .outputs = "resized_images: float",
   .attrs = "T: {uint8, int32, int64, float, double}, " RESIZE_ATTRS,
   .help = "Images [batch, h, w, c] resized to size by bilinear interpolation (float32 out).", .shape = resize_bilinear_shape,
   .kernel = {[RT_DEV_CPU] = resize_bilinear_kernel}, .grad = resize_bilinear_grad},
  {.name = "ResizeBilinearGrad", .inputs = "grads: float, original_image: T", .outputs = "output: T",
   .attrs = "T: {float, double}, " RESIZE_ATTRS, .help = "The gradient of ResizeBilinear.", .shape = like_input1,
   .kernel = {[RT_DEV_CPU] = resize_bilinear_grad_kernel}},
  {.name = "ResizeNearestNeighbor", .inputs = "images: T, size: int32", .outputs = "resized_images: T",
   .attrs = "T: {uint8, int32, int64, float, double}, " RESIZE_ATTRS,
   .help = "Images [batch, h, w, c] resized to size by nearest neighbor.", .shape = resize_shape,
   .kernel = {[RT_DEV_CPU] = nearest_kernel}, .grad = nearest_grad},
  {.name = "ResizeNearestNeighborGrad", .inputs = "grads: T, size: int32", .outputs = "output: T",
   .attrs = "T: {float}, " RESIZE_ATTRS, .help = "The gradient of ResizeNearestNeighbor.", .shape = resize_shape,
   .kernel = {[RT_DEV_CPU] = nearest_grad_kernel}},
  {.name = "LRN", .inputs = "input: T", .outputs = "output: T", .attrs = LRN_ATTRS,
   .help = "Local response normalization across channels (the last axis).", .shape = same_as_input,
   .kernel = {[RT_DEV_CPU] = lrn_kernel}, .grad = lrn_grad},
  {.name = "LRNGrad", .inputs = "input_grads: T, input_image: T, output_image: T", .outputs = "output: T", .attrs = LRN_ATTRS,
   .help = "The gradient of LRN.", .shape = same_as_input, .kernel = {[RT_DEV_CPU] = lrn_grad_kernel}},
  {.name = "ReadFile", .inputs = "filename: string", .outputs = "contents: string",
   .help = "The bytes of a file, as one string.", .shape = scalar_out, .kernel = {[RT_DEV_CPU] = read_file_kernel},
   .grad = op_no_grad, .flags = RT_OP_STATEFUL},
  {.name = "DecodePng", .inputs = "contents: string", .outputs = "image: dtype",
   .attrs = "channels: int = 0, dtype: {uint8} = uint8",
   .help = "A PNG image as a uint8 tensor [height, width, channels].", .shape = decode_png_shape,
   .kernel = {[RT_DEV_CPU] = decode_png_kernel}, .grad = op_no_grad},
  {.name = "EncodePng", .inputs = "image: T", .outputs = "contents: string", .attrs = "compression: int = -1, T: {uint8} = uint8",
   .help = "A uint8 image [height, width, channels] as PNG bytes.", .shape = scalar_out,
   .kernel = {[RT_DEV_CPU] = encode_png_kernel}, .grad = op_no_grad},
};

void op_image_register(void) { rt_op_register(image_ops, OP_COUNT(image_ops)); }
