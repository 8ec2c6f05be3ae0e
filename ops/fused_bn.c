/* Fused batch normalization: FusedBatchNorm, V2 and V3 and their gradient ops, as TF's CPU
 * kernels compute them. One channel axis (the last for NHWC/NDHWC, 1 for NCHW/NCDHW); the
 * tensor is viewed as [outer, C, inner]. Training normalizes with the batch's moments and
 * outputs the Bessel-corrected batch variance (blended with the running one by
 * exponential_avg_factor when that is not 1); reserve_space_1/2 keep the batch mean and the
 * uncorrected variance for the gradient. Inference normalizes with the given mean and
 * variance and passes them through. Sums are accumulated in double. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "ops/ops_int.h"
#include "runtime/pool.h"

enum { PAR_MIN = 1 << 15 };

typedef struct {
  int64_t outer, ch, inner, n;   /* n = outer * inner: values per channel */
} bn_layout;

static bool channels_first(const rt_node *node) {
  const char *f = rt_node_string(node, "data_format", "NHWC");
  return !strcmp(f, "NCHW") || !strcmp(f, "NCDHW");
}

static bool format_ok(const char *f) {
  return !strcmp(f, "NHWC") || !strcmp(f, "NCHW") || !strcmp(f, "NDHWC") || !strcmp(f, "NCDHW");
}

static int bn_check_x(rt_kernel_ctx *c, const rt_tensor *x, const char *what, bn_layout *l) {
  bool v3 = strstr(c->node->op, "V3") != NULL;
  int nd = x->shape.ndims;
  const char *f = rt_node_string(c->node, "data_format", "NHWC");
  if (!format_ok(f)) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Invalid data format: %s", f);
  char sb[160];
  if (nd != 4 && !(v3 && nd == 5))   /* TF's words (its shape string right after) */
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s must be 4-dimensional%s", what,
                           op_shape_tf(&x->shape, sb, sizeof sb));
  int cd = channels_first(c->node) ? 1 : nd - 1;
  l->outer = l->inner = 1;
  l->ch = x->shape.dims[cd];
  for (int d = 0; d < nd; d++)
    if (d < cd) l->outer *= x->shape.dims[d];
    else if (d > cd) l->inner *= x->shape.dims[d];
  l->n = l->outer * l->inner;
  return RT_OK;
}

/* A per-channel vector input: 1-D of length C (or empty when allowed). */
static int bn_check_vec(rt_kernel_ctx *c, int i, const char *what, int64_t ch, bool may_be_empty) {
  const rt_tensor *t = c->inputs[i];
  if (t->shape.ndims != 1)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s must be 1-dimensional", what);
  if (t->shape.dims[0] == ch || (may_be_empty && t->shape.dims[0] == 0)) return RT_OK;
  return rt_kernel_error(c, RT_INVALID_ARGUMENT,
                         "%s must have the same number of elements as the channels of x, got %lld and %lld",
                         what, (long long)t->shape.dims[0], (long long)ch);
}

/* Per-channel sums over outer and inner: mode SUM: s1 = sum x; SQDEV: s1 = sum (x - m)^2;
 * GRAD: s1 = sum g, s2 = sum g * (x - m). Partial sums a tile of rows on rt_sum_tiles
 * (tiles of PAR_MIN / 2 values or more), added in tile order: the same bits for any number
 * of threads. NHWC (inner 1) walks rows of C contiguous values. */
enum { SUM, SQDEV, GRAD };

typedef struct bn_job {
  const bn_layout *l;
  int mode;
  const float *x, *g, *a, *b, *m, *d;   /* chan_apply's a, b, m, d */
  const double *mean;                    /* chan_reduce's m */
  float *y;
  double *part;                          /* 2 * C a tile */
  int64_t tiles;
} bn_job;

static void reduce_tile(void *arg, int64_t t, int who) {
  const bn_job *j = arg;
  const bn_layout *l = j->l;
  int64_t C = l->ch, o0, o1;
  const float *x = j->x, *g = j->g;
  const double *m = j->mean;
  double *a = j->part + t * 2 * C, *b = a + C;
  int mode = j->mode;
  rt_tile_range(l->outer, j->tiles, t, &o0, &o1);
  for (int64_t o = o0; o < o1; o++) {
    const float *xr = x + o * C * l->inner, *gr = g ? g + o * C * l->inner : NULL;
    if (l->inner == 1) {
      if (mode == SUM)
        for (int64_t k = 0; k < C; k++) a[k] += xr[k];
      else if (mode == SQDEV)
        for (int64_t k = 0; k < C; k++) a[k] += (xr[k] - m[k]) * (xr[k] - m[k]);
      else
        for (int64_t k = 0; k < C; k++) a[k] += gr[k], b[k] += gr[k] * (xr[k] - m[k]);
      continue;
    }
    for (int64_t k = 0; k < C; k++) {
      const float *r = xr + k * l->inner, *q = gr ? gr + k * l->inner : NULL;
      double u = 0, w = 0, mk = m ? m[k] : 0.0;
      if (mode == SUM)
        for (int64_t i = 0; i < l->inner; i++) u += r[i];
      else if (mode == SQDEV)
        for (int64_t i = 0; i < l->inner; i++) u += (r[i] - mk) * (r[i] - mk);
      else
        for (int64_t i = 0; i < l->inner; i++) u += q[i], w += q[i] * (r[i] - mk);
      a[k] += u, b[k] += w;
    }
  }
}

static void chan_reduce(const bn_layout *l, int mode, const float *x, const float *g, const double *m,
                        double *s1, double *s2) {
  int64_t C = l->ch, row = C * l->inner;
  int64_t tiles = rt_sum_tiles(l->outer, row ? (PAR_MIN / 2 + row - 1) / row : 1);
  bn_job j = {.l = l, .mode = mode, .x = x, .g = g, .mean = m, .tiles = tiles,
              .part = xcalloc((size_t)(2 * C * tiles + 1), sizeof(double))};
  rt_parallel_tiles(tiles, l->n * C >= PAR_MIN ? rt_intra_threads() : 1, reduce_tile, &j);
  memset(s1, 0, sizeof(double) * (size_t)C);
  if (s2) memset(s2, 0, sizeof(double) * (size_t)C);
  for (int64_t t = 0; t < tiles; t++)
    for (int64_t k = 0; k < C; k++) {
      s1[k] += j.part[t * 2 * C + k];
      if (s2) s2[k] += j.part[t * 2 * C + C + k];
    }
  free(j.part);
}

/* y = x * a[k] + b[k], or with g given (the training gradient):
 * y = a[k] * (g - b[k] - (x - m[k]) * d[k]) */
static void apply_rows(void *arg, int64_t lo, int64_t hi, int who) {
  const bn_job *j = arg;
  int64_t C = j->l->ch, inner = j->l->inner;
  const float *a = j->a, *b = j->b, *m = j->m, *d = j->d;
  for (int64_t o = lo; o < hi; o++) {
    int64_t base = o * C * inner;
    const float *xr = j->x + base, *gr = j->g ? j->g + base : NULL;
    float *yr = j->y + base;
    if (inner == 1) {
      if (!gr)
        for (int64_t k = 0; k < C; k++) yr[k] = xr[k] * a[k] + b[k];
      else
        for (int64_t k = 0; k < C; k++) yr[k] = a[k] * (gr[k] - b[k] - (xr[k] - m[k]) * d[k]);
      continue;
    }
    for (int64_t k = 0; k < C; k++) {
      const float *r = xr + k * inner, *q = gr ? gr + k * inner : NULL;
      float *w = yr + k * inner, ak = a[k], bk = b[k];
      if (!gr)
        for (int64_t i = 0; i < inner; i++) w[i] = r[i] * ak + bk;
      else
        for (int64_t i = 0; i < inner; i++) w[i] = ak * (q[i] - bk - (r[i] - m[k]) * d[k]);
    }
  }
}

static void chan_apply(const bn_layout *l, const float *x, const float *g, const float *a, const float *b,
                       const float *m, const float *d, float *y) {
  bn_job j = {.l = l, .x = x, .g = g, .a = a, .b = b, .m = m, .d = d, .y = y};
  rt_parallel_range(l->outer, 1, l->n * l->ch >= PAR_MIN ? rt_intra_threads() : 1, apply_rows, &j);
}

static rt_tensor *vec_out(rt_kernel_ctx *c, int i, int64_t n) {
  rt_shape s = rt_shape_make(1, &n);
  return rt_kernel_output(c, i, RT_FLOAT, &s);
}

/* FusedBatchNorm{,V2,V3}(x, scale, offset, mean, variance) -> y, batch_mean, batch_variance,
 * reserve_space_1, reserve_space_2 [, reserve_space_3] */
static int fused_bn_kernel(rt_kernel_ctx *c) {
  const rt_tensor *x = c->inputs[0];
  bn_layout l;
  bool training = rt_node_bool(c->node, "is_training", true);
  double eps = rt_node_float(c->node, "epsilon", 1e-4);
  double f = rt_node_float(c->node, "exponential_avg_factor", 1.0);
  if (x->dtype != RT_FLOAT) return rt_kernel_error(c, RT_UNIMPLEMENTED, "no CPU kernel for %s", rt_dtype_name(x->dtype));
  if (bn_check_x(c, x, "input", &l)) return c->st->code;
  bool empty_ok = training && f == 1.0;
  if (bn_check_vec(c, 1, "scale", l.ch, false) || bn_check_vec(c, 2, "offset", l.ch, false) ||
      bn_check_vec(c, 3, "estimated_mean", l.ch, empty_ok) ||
      bn_check_vec(c, 4, "estimated_variance", l.ch, empty_ok))
    return c->st->code;
  rt_tensor *y = rt_kernel_output(c, 0, RT_FLOAT, &x->shape);
  rt_tensor *o[5];
  for (int i = 1; i < 5; i++)
    if (!(o[i] = vec_out(c, i, l.ch))) return c->st->code;
  if (!y) return c->st->code;
  if (c->n_outputs > 5 && !vec_out(c, 5, 0)) return c->st->code;
  const float *xd = rt_tensor_data(x), *sc = rt_tensor_data(c->inputs[1]),
              *of = rt_tensor_data(c->inputs[2]), *em = rt_tensor_data(c->inputs[3]),
              *ev = rt_tensor_data(c->inputs[4]);
  float *bm = rt_tensor_data(o[1]), *bv = rt_tensor_data(o[2]), *r1 = rt_tensor_data(o[3]),
        *r2 = rt_tensor_data(o[4]);
  double *mean = calloc((size_t)(2 * l.ch + 1), sizeof(double)), *var = mean + l.ch;
  float *a = malloc(sizeof(float) * (size_t)(2 * l.ch + 1)), *b = a ? a + l.ch : NULL;
  if (!mean || !a) {
    free(mean), free(a);
    return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  }
  if (training) {
    chan_reduce(&l, SUM, xd, NULL, NULL, mean, NULL);
    for (int64_t k = 0; k < l.ch; k++) mean[k] = l.n ? mean[k] / (double)l.n : 0.0;
    chan_reduce(&l, SQDEV, xd, NULL, mean, var, NULL);
    for (int64_t k = 0; k < l.ch; k++) var[k] = l.n ? var[k] / (double)l.n : 0.0;
  } else {
    for (int64_t k = 0; k < l.ch; k++) mean[k] = em[k], var[k] = ev[k];
  }
  for (int64_t k = 0; k < l.ch; k++) {
    double inv = 1.0 / sqrt(var[k] + eps);
    a[k] = (float)(sc[k] * inv);
    b[k] = (float)(of[k] - mean[k] * sc[k] * inv);
    if (training) {
      double corrected = l.n > 1 ? var[k] * (double)l.n / (double)(l.n - 1) : 0.0;
      bm[k] = f == 1.0 ? (float)mean[k] : (float)((1.0 - f) * em[k] + f * mean[k]);
      bv[k] = f == 1.0 ? (float)corrected : (float)((1.0 - f) * ev[k] + f * corrected);
      r1[k] = (float)mean[k];
      r2[k] = (float)var[k];
    } else {
      bm[k] = r1[k] = em[k];
      bv[k] = r2[k] = ev[k];
    }
  }
  chan_apply(&l, xd, NULL, a, b, NULL, NULL, rt_tensor_data(y));
  free(mean), free(a);
  return RT_OK;
}

/* FusedBatchNormGrad{,V2,V3}(y_backprop, x, scale, reserve_space_1, reserve_space_2
 * [, reserve_space_3]) -> x_backprop, scale_backprop, offset_backprop, reserve_space_3/4,
 * reserve_space_4/5. The reserve spaces are the saved batch moments when training, the
 * population mean and variance otherwise. */
static int fused_bn_grad_kernel(rt_kernel_ctx *c) {
  const rt_tensor *dy = c->inputs[0], *x = c->inputs[1];
  bn_layout l;
  bool training = rt_node_bool(c->node, "is_training", true);
  double eps = rt_node_float(c->node, "epsilon", 1e-4);
  if (x->dtype != RT_FLOAT) return rt_kernel_error(c, RT_UNIMPLEMENTED, "no CPU kernel for %s", rt_dtype_name(x->dtype));
  if (bn_check_x(c, dy, "input", &l) || bn_check_x(c, x, "input", &l)) return c->st->code;
  if (!rt_shape_equal(&dy->shape, &x->shape))
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "x and y_backprop must have same shape");
  if (bn_check_vec(c, 2, "scale", l.ch, false) || bn_check_vec(c, 3, "reserve_space_1", l.ch, false) ||
      bn_check_vec(c, 4, "reserve_space_2", l.ch, false))
    return c->st->code;
  rt_tensor *dx = rt_kernel_output(c, 0, RT_FLOAT, &x->shape), *ds = vec_out(c, 1, l.ch),
            *db = vec_out(c, 2, l.ch);
  rt_shape scalar = rt_shape_make(0, NULL);
  rt_tensor *p3 = rt_kernel_output(c, 3, RT_FLOAT, &scalar), *p4 = rt_kernel_output(c, 4, RT_FLOAT, &scalar);
  if (!dx || !ds || !db || !p3 || !p4) return c->st->code;
  *(float *)rt_tensor_data(p3) = 0.0f;
  *(float *)rt_tensor_data(p4) = 0.0f;
  const float *dyd = rt_tensor_data(dy), *xd = rt_tensor_data(x), *sc = rt_tensor_data(c->inputs[2]),
              *rm = rt_tensor_data(c->inputs[3]), *rv = rt_tensor_data(c->inputs[4]);
  int64_t C = l.ch;
  double *sdy = xcalloc((size_t)(4 * C + 1), sizeof(double)), *sdyx = sdy + C, *inv = sdyx + C, *md = inv + C;
  float *a = xmalloc(sizeof(float) * (size_t)(3 * C + 1)), *b = a + C, *d = b + C;
  for (int64_t k = 0; k < C; k++) inv[k] = 1.0 / sqrt((double)rv[k] + eps), md[k] = rm[k];
  /* sum(dy) and sum(dy * (x - mean)) per channel; xhat = (x - mean) * inv */
  chan_reduce(&l, GRAD, xd, dyd, md, sdy, sdyx);
  float *dsd = rt_tensor_data(ds), *dbd = rt_tensor_data(db), *dxd = rt_tensor_data(dx);
  double nn = l.n ? (double)l.n : 1.0;
  for (int64_t k = 0; k < C; k++) {
    dsd[k] = (float)(sdyx[k] * inv[k]);
    dbd[k] = (float)sdy[k];
    a[k] = (float)(sc[k] * inv[k]);
    /* training: dx = scale * inv * (dy - mean(dy) - (x - mean) * inv^2 * mean(dy * (x - mean))) */
    b[k] = training ? (float)(sdy[k] / nn) : 0.0f;
    d[k] = (float)(inv[k] * inv[k] * sdyx[k] / nn);
  }
  if (training) chan_apply(&l, xd, dyd, a, b, rm, d, dxd);
  else chan_apply(&l, dyd, NULL, a, b, NULL, NULL, dxd);
  free(sdy), free(a);
  return RT_OK;
}

/* ---- shapes ---------------------------------------------------------------------- */

static int fused_bn_shape(rt_shape_ctx *c) {
  const rt_shape *x = &c->in_shapes[0];
  bool v3 = strstr(c->node->op, "V3") != NULL;
  const char *f = rt_node_string(c->node, "data_format", "NHWC");
  if (!format_ok(f)) return op_shape_error(c, 0, "Invalid data format: %s", f);
  if (x->ndims >= 0 && x->ndims != 4 && !(v3 && x->ndims == 5)) return op_rank_error(c, 4, x->ndims);
  int64_t ch = -1;
  if (x->ndims >= 0) ch = x->dims[channels_first(c->node) ? 1 : x->ndims - 1];
  for (int i = 1; i < 3; i++) {
    const rt_shape *s = &c->in_shapes[i];
    if (s->ndims >= 0 && s->ndims != 1) return op_rank_error(c, 1, s->ndims);
    if (s->ndims == 1 && s->dims[0] >= 0) {
      if (ch >= 0 && s->dims[0] != ch) return op_dims_error(c, ch, s->dims[0]);
      ch = s->dims[0];
    }
  }
  c->out_shapes[0] = *x;
  if (x->ndims >= 0 && ch >= 0) c->out_shapes[0].dims[channels_first(c->node) ? 1 : x->ndims - 1] = ch;
  for (int i = 1; i < 5; i++) c->out_shapes[i] = rt_shape_make(1, &ch);
  return RT_OK;
}

static int fused_bn_grad_shape(rt_shape_ctx *c) {
  const rt_shape *x = &c->in_shapes[1];
  int64_t ch = -1;
  if (x->ndims >= 0) ch = x->dims[channels_first(c->node) ? 1 : x->ndims - 1];
  if (ch < 0 && c->in_shapes[2].ndims == 1) ch = c->in_shapes[2].dims[0];
  c->out_shapes[0] = *x;
  c->out_shapes[1] = c->out_shapes[2] = rt_shape_make(1, &ch);
  return RT_OK;
}

/* ---- gradient -------------------------------------------------------------------- */

typedef struct {
  const rt_node *fwd;
  const char *format;   /* the gradient op's data_format */
} bn_grad_arg;

static void copy_bn_attrs(rt_node *n, const void *arg) {
  const bn_grad_arg *a = arg;
  rt_node_set_float(n, "epsilon", rt_node_float(a->fwd, "epsilon", 1e-4));
  rt_node_set_string(n, "data_format", a->format);
  rt_node_set_bool(n, "is_training", rt_node_bool(a->fwd, "is_training", true));
}

/* x transposed by perm (rank nd) */
static char *transposed(rt_grad_ctx *c, const char *x, int nd, const int64_t *perm) {
  char *p = op_gints(c, nd, perm), *t = p ? op_g2(c, "Transpose", x, p) : NULL;
  free(p);
  return t;
}

/* TF's _BaseFusedBatchNormGrad: the saved batch moments when training; otherwise the
 * population mean and variance (inputs 3 and 4), with channels-first x and dy transposed
 * to channels-last around the gradient op as TF does. */
static int fused_bn_grad(rt_grad_ctx *c) {
  if (!c->dy[0]) return RT_OK;
  const rt_node *n = c->node;
  bool v3 = !strcmp(n->op, "FusedBatchNormV3"), training = rt_node_bool(n, "is_training", true);
  const char *fmt = rt_node_string(n, "data_format", "NHWC");
  bool first = !training && channels_first(n);
  int nd = !strcmp(fmt, "NCDHW") ? 5 : 4;
  static const int64_t to_last4[] = {0, 2, 3, 1}, to_first4[] = {0, 3, 1, 2};
  static const int64_t to_last5[] = {0, 2, 3, 4, 1}, to_first5[] = {0, 4, 1, 2, 3};
  char r1[300], r2[300], r3[300];
  snprintf(r1, sizeof r1, "%s:3", n->name);
  snprintf(r2, sizeof r2, "%s:4", n->name);
  snprintf(r3, sizeof r3, "%s:5", n->name);
  char *x = NULL, *dy = NULL;
  if (first) {
    x = transposed(c, n->inputs[0], nd, nd == 5 ? to_last5 : to_last4);
    dy = x ? transposed(c, c->dy[0], nd, nd == 5 ? to_last5 : to_last4) : NULL;
    if (!dy) {
      free(x);
      return c->st->code;
    }
  }
  const char *in[6] = {first ? dy : c->dy[0], first ? x : n->inputs[0], n->inputs[1],
                       training ? r1 : n->inputs[3], training ? r2 : n->inputs[4], r3};
  const char *op = v3 ? "FusedBatchNormGradV3" : !strcmp(n->op, "FusedBatchNormV2") ? "FusedBatchNormGradV2"
                                                                                   : "FusedBatchNormGrad";
  bn_grad_arg arg = {n, first ? (nd == 5 ? "NDHWC" : "NHWC") : fmt};
  char *g = op_grad_node(c, op, op, v3 ? 6 : 5, in, copy_bn_attrs, &arg);
  free(x), free(dy);
  if (!g) return c->st->code;
  char buf[300];
  c->dx[0] = first ? transposed(c, g, nd, nd == 5 ? to_first5 : to_first4) : xstrdup(g);
  snprintf(buf, sizeof buf, "%s:1", g);
  c->dx[1] = xstrdup(buf);
  snprintf(buf, sizeof buf, "%s:2", g);
  c->dx[2] = xstrdup(buf);
  free(g);
  return c->st->code;
}

#define BN_ATTRS "epsilon: float = 0.0001, data_format: string = 'NHWC', is_training: bool = true"
#define BN_IN "x: T, scale: U, offset: U, mean: U, variance: U"
#define BN_OUT "y: T, batch_mean: U, batch_variance: U, reserve_space_1: U, reserve_space_2: U"
#define BNG_IN "y_backprop: T, x: T, scale: float, reserve_space_1: U, reserve_space_2: U"
#define BNG_OUT "x_backprop: T, scale_backprop: U, offset_backprop: U, reserve_space_3: U, reserve_space_4: U"

static const rt_op_def fused_bn_ops[] = {
  {.name = "FusedBatchNorm", .inputs = "x: T, scale: T, offset: T, mean: T, variance: T",
   .outputs = "y: T, batch_mean: T, batch_variance: T, reserve_space_1: T, reserve_space_2: T",
   .attrs = "T: {float}, " BN_ATTRS ", exponential_avg_factor: float = 1",
   .help = "Batch normalization of a 4-D tensor along its channels (the batch's moments when is_training).",
   .shape = fused_bn_shape, .kernel = {[RT_DEV_CPU] = fused_bn_kernel}, .grad = fused_bn_grad},
  {.name = "FusedBatchNormV2", .inputs = BN_IN, .outputs = BN_OUT,
   .attrs = "T: {float}, U: {float}, " BN_ATTRS ", exponential_avg_factor: float = 1",
   .help = "FusedBatchNorm with the statistics of type U.",
   .shape = fused_bn_shape, .kernel = {[RT_DEV_CPU] = fused_bn_kernel}, .grad = fused_bn_grad},
  {.name = "FusedBatchNormV3", .inputs = BN_IN, .outputs = BN_OUT ", reserve_space_3: U",
   .attrs = "T: {float}, U: {float}, " BN_ATTRS ", exponential_avg_factor: float = 1",
   .help = "Batch normalization of a 4-D or 5-D tensor along its channels; the moving statistics "
           "blended by exponential_avg_factor.",
   .shape = fused_bn_shape, .kernel = {[RT_DEV_CPU] = fused_bn_kernel}, .grad = fused_bn_grad},
  {.name = "FusedBatchNormGrad", .inputs = "y_backprop: T, x: T, scale: T, reserve_space_1: T, reserve_space_2: T",
   .outputs = "x_backprop: T, scale_backprop: T, offset_backprop: T, reserve_space_3: T, reserve_space_4: T",
   .attrs = "T: {float}, " BN_ATTRS, .help = "FusedBatchNorm's gradient.",
   .shape = fused_bn_grad_shape, .kernel = {[RT_DEV_CPU] = fused_bn_grad_kernel}},
  {.name = "FusedBatchNormGradV2", .inputs = BNG_IN, .outputs = BNG_OUT,
   .attrs = "T: {float}, U: {float}, " BN_ATTRS, .help = "FusedBatchNormV2's gradient.",
   .shape = fused_bn_grad_shape, .kernel = {[RT_DEV_CPU] = fused_bn_grad_kernel}},
  {.name = "FusedBatchNormGradV3", .inputs = BNG_IN ", reserve_space_3: U",
   .outputs = "x_backprop: T, scale_backprop: U, offset_backprop: U, reserve_space_4: U, reserve_space_5: U",
   .attrs = "T: {float}, U: {float}, " BN_ATTRS, .help = "FusedBatchNormV3's gradient.",
   .shape = fused_bn_grad_shape, .kernel = {[RT_DEV_CPU] = fused_bn_grad_kernel}},
};

void op_fused_bn_register(void) { rt_op_register(fused_bn_ops, OP_COUNT(fused_bn_ops)); }
