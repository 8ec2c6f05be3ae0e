/* NN kernels: BiasAdd and its gradient, softmax and the cross-entropy losses (row-wise over
 * the last dimension), L2Loss, CheckNumerics. Float kernels are written once per type
 * with a macro; rows are split into tiles of the intra-op pool when there is enough work. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/ops_int.h"
#include "runtime/pool.h"

enum { PAR_MIN = 1 << 15 };

static int need_float(rt_kernel_ctx *c, rt_dtype t) {
  if (t == RT_FLOAT || t == RT_DOUBLE) return RT_OK;
  return rt_kernel_error(c, RT_UNIMPLEMENTED, "no CPU kernel for %s", rt_dtype_name(t));
}

/* ---- BiasAdd ---------------------------------------------------------------------- */

/* value viewed as [outer, ch, inner]: inner = 1 for NHWC, H*W for NCHW */
static void bias_layout(const rt_kernel_ctx *c, const rt_shape *s, int64_t *outer, int64_t *ch,
                        int64_t *inner) {
  int cd = !strcmp(rt_node_string(c->node, "data_format", "NHWC"), "NCHW") ? 1 : s->ndims - 1;
  *outer = *inner = 1;
  *ch = s->dims[cd];
  for (int d = 0; d < s->ndims; d++)
    if (d < cd) *outer *= s->dims[d];
    else if (d > cd) *inner *= s->dims[d];
}

/* NHWC (inner 1) runs along the channels. The gradient sums runs of BG_ROWS rows apiece
 * (tiles of the pool), then those partial sums in order: its bits depend on the shape
 * alone, never on the threads. */
enum { BG_ROWS = 1024 };
typedef struct bias_job {
  const void *x, *b;
  void *y, *part;
  int64_t outer, ch, inner;
} bias_job;

#define BIAS_ADD(T)                                                                     \
  static void bias_add_rows_##T(void *arg, int64_t lo, int64_t hi, int who) {           \
    const bias_job *j = arg;                                                            \
    const T *x = j->x, *b = j->b;                                                       \
    T *y = j->y;                                                                        \
    int64_t ch = j->ch, inner = j->inner;                                               \
    for (int64_t o = lo; o < hi; o++) {                                                 \
      if (inner == 1) {                                                                 \
        const T *xr = x + o * ch;                                                       \
        T *yr = y + o * ch;                                                             \
        _Pragma("omp simd") for (int64_t k = 0; k < ch; k++) yr[k] = xr[k] + b[k];      \
        continue;                                                                       \
      }                                                                                 \
      for (int64_t k = 0; k < ch; k++) {                                                \
        const T *xr = x + (o * ch + k) * inner;                                         \
        T *yr = y + (o * ch + k) * inner, bk = b[k];                                    \
        _Pragma("omp simd") for (int64_t i = 0; i < inner; i++) yr[i] = xr[i] + bk;     \
      }                                                                                 \
    }                                                                                   \
  }                                                                                     \
  static void bias_add_##T(const T *x, const T *b, T *y, int64_t outer, int64_t ch,     \
                           int64_t inner) {                                             \
    bias_job j = {.x = x, .b = b, .y = y, .outer = outer, .ch = ch, .inner = inner};    \
    rt_parallel_range(outer, 1, outer * ch * inner >= PAR_MIN ? rt_intra_threads() : 1, \
                      bias_add_rows_##T, &j);                                           \
  }                                                                                     \
  /* inner 1: partial sums [lo, hi) of BG_ROWS rows each into part, a block of channels \
   * at a time in a local accumulator; else all of db at once ([0, 1)) */               \
  OP_CLONES static void bias_grad_blocks_##T(void *arg, int64_t lo, int64_t hi, int who) { \
    const bias_job *j = arg;                                                            \
    const T *dy = j->x;                                                                 \
    T *db = j->y;                                                                       \
    int64_t outer = j->outer, ch = j->ch, inner = j->inner;                             \
    if (inner == 1) {                                                                   \
      for (int64_t p = lo; p < hi; p++) {                                               \
        int64_t r0 = p * BG_ROWS, r1 = r0 + BG_ROWS < outer ? r0 + BG_ROWS : outer;     \
        for (int64_t k0 = 0; k0 < ch; k0 += 64) {                                       \
          int64_t kn = ch - k0 < 64 ? ch - k0 : 64;                                     \
          T acc[64] = {0};                                                              \
          for (int64_t o = r0; o < r1; o++) {                                           \
            const T *r = dy + o * ch + k0;                                              \
            _Pragma("omp simd") for (int64_t k = 0; k < kn; k++) acc[k] += r[k];        \
          }                                                                             \
          memcpy((T *)j->part + p * ch + k0, acc, sizeof(T) * (size_t)kn);              \
        }                                                                               \
      }                                                                                 \
      return;                                                                           \
    }                                                                                   \
    for (int64_t o = 0; o < outer; o++)                                                 \
      for (int64_t k = 0; k < ch; k++) {                                                \
        const T *r = dy + (o * ch + k) * inner;                                         \
        T s = 0;                                                                        \
        for (int64_t i = 0; i < inner; i++) s += r[i];                                  \
        db[k] += s;                                                                     \
      }                                                                                 \
  }                                                                                     \
  static bool bias_grad_##T(const T *dy, T *db, int64_t outer, int64_t ch, int64_t inner) { \
    int64_t parts = inner == 1 ? (outer + BG_ROWS - 1) / BG_ROWS : 1;                   \
    bias_job j = {.x = dy, .y = db, .outer = outer, .ch = ch, .inner = inner};          \
    memset(db, 0, sizeof(T) * (size_t)ch);                                              \
    T *part = NULL;                                                                     \
    if (inner == 1 && !(j.part = part = malloc(sizeof(T) * (size_t)(parts * ch + 1))))  \
      return false;                                                                     \
    rt_parallel_range(parts, 1, parts > 1 && outer * ch >= PAR_MIN ? rt_intra_threads() : 1, \
                      bias_grad_blocks_##T, &j);                                        \
    for (int64_t p = 0; part && p < parts; p++)                                         \
      _Pragma("omp simd") for (int64_t k = 0; k < ch; k++) db[k] += part[p * ch + k];  \
    free(part);                                                                         \
    return true;                                                                        \
  }
BIAS_ADD(float)
BIAS_ADD(double)
BIAS_ADD(int32_t)
BIAS_ADD(int64_t)

int op_cpu_bias_add(rt_kernel_ctx *c) {
  const rt_tensor *x = c->inputs[0], *b = c->inputs[1];
  int64_t outer, ch, inner;
  char sx[160], sb[160];
  if (x->shape.ndims < 2)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Input tensor must be at least 2D: %s",
                           op_shape_tf(&x->shape, sx, sizeof sx));
  bias_layout(c, &x->shape, &outer, &ch, &inner);
  if (b->shape.ndims != 1 || b->shape.dims[0] != ch)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Must provide as many biases as the last "
                           "dimension of the input tensor: %s vs. %s",
                           op_shape_tf(&b->shape, sb, sizeof sb), op_shape_tf(&x->shape, sx, sizeof sx));
  rt_tensor *y = rt_kernel_output(c, 0, x->dtype, &x->shape);
  if (!y) return c->st->code;
  const void *xd = rt_tensor_data(x), *bd = rt_tensor_data(b);
  void *yd = rt_tensor_data(y);
  switch (x->dtype) {
  case RT_FLOAT: bias_add_float(xd, bd, yd, outer, ch, inner); break;
  case RT_DOUBLE: bias_add_double(xd, bd, yd, outer, ch, inner); break;
  case RT_INT32: bias_add_int32_t(xd, bd, yd, outer, ch, inner); break;
  case RT_INT64: bias_add_int64_t(xd, bd, yd, outer, ch, inner); break;
  default: return rt_kernel_error(c, RT_UNIMPLEMENTED, "no CPU kernel for %s", rt_dtype_name(x->dtype));
  }
  return RT_OK;
}

int op_cpu_bias_add_grad(rt_kernel_ctx *c) {
  const rt_tensor *dy = c->inputs[0];
  int64_t outer, ch, inner;
  char s[160];
  if (dy->shape.ndims < 2)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Input tensor must be at least 2D: %s",
                           op_shape_tf(&dy->shape, s, sizeof s));
  bias_layout(c, &dy->shape, &outer, &ch, &inner);
  rt_shape o = rt_shape_make(1, &ch);
  rt_tensor *y = rt_kernel_output(c, 0, dy->dtype, &o);
  if (!y) return c->st->code;
  const void *d = rt_tensor_data(dy);
  void *db = rt_tensor_data(y);
  bool ok;
  switch (dy->dtype) {
  case RT_FLOAT: ok = bias_grad_float(d, db, outer, ch, inner); break;
  case RT_DOUBLE: ok = bias_grad_double(d, db, outer, ch, inner); break;
  case RT_INT32: ok = bias_grad_int32_t(d, db, outer, ch, inner); break;
  case RT_INT64: ok = bias_grad_int64_t(d, db, outer, ch, inner); break;
  default: return rt_kernel_error(c, RT_UNIMPLEMENTED, "no CPU kernel for %s", rt_dtype_name(dy->dtype));
  }
  return ok ? RT_OK : rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
}

/* ---- softmax and cross-entropy ---------------------------------------------------- */

/* Row-wise: y = softmax(x) (or log-softmax), stable (max subtracted). When labels are
 * given (dense `p` or sparse `cls`), also loss[r] = -sum p log softmax and
 * backprop = softmax - p. */
typedef struct softmax_job {
  const void *x, *p;
  void *y, *loss;
  const int64_t *cls;
  int64_t n;
  bool log_out;
} softmax_job;

#define SOFTMAX(T, EXP, LOG)                                                            \
  static void softmax_rows_##T(void *arg, int64_t lo, int64_t hi, int who) {            \
    const softmax_job *j = arg;                                                         \
    const T *x = j->x, *p = j->p;                                                       \
    T *y = j->y, *loss = j->loss;                                                       \
    const int64_t *cls = j->cls;                                                        \
    int64_t n = j->n;                                                                   \
    for (int64_t r = lo; r < hi; r++) {                                                 \
      const T *xr = x + r * n;                                                          \
      T *yr = y + r * n, mx = xr[0], sum = 0;                                           \
      for (int64_t i = 1; i < n; i++) mx = xr[i] > mx ? xr[i] : mx;                     \
      for (int64_t i = 0; i < n; i++) sum += EXP(xr[i] - mx);                           \
      T lse = LOG(sum);                                                                 \
      if (loss) {                                                                       \
        T l = 0;                                                                        \
        for (int64_t i = 0; i < n; i++) {                                               \
          T lp = xr[i] - mx - lse, pi = p ? p[r * n + i] : (T)(i == cls[r]);            \
          if (pi != 0) l -= pi * lp;                                                    \
          yr[i] = EXP(lp) - pi;                                                         \
        }                                                                               \
        loss[r] = l;                                                                    \
      } else if (j->log_out) {                                                          \
        for (int64_t i = 0; i < n; i++) yr[i] = xr[i] - mx - lse;                       \
      } else {                                                                          \
        for (int64_t i = 0; i < n; i++) yr[i] = EXP(xr[i] - mx) / sum;                  \
      }                                                                                 \
    }                                                                                   \
  }                                                                                     \
  static void softmax_##T(const T *x, T *y, int64_t rows, int64_t n, bool log_out,      \
                          const T *p, const int64_t *cls, T *loss) {                   \
    softmax_job j = {.x = x, .p = p, .y = y, .loss = loss, .cls = cls, .n = n,          \
                     .log_out = log_out};                                               \
    rt_parallel_range(rows, 1, rows * n >= PAR_MIN ? rt_intra_threads() : 1,            \
                      softmax_rows_##T, &j);                                            \
  }
SOFTMAX(float, expf, logf)
SOFTMAX(double, exp, log)

static int softmax_run(rt_kernel_ctx *c, bool log_out) {
  const rt_tensor *x = c->inputs[0];
  if (need_float(c, x->dtype)) return c->st->code;
  if (x->shape.ndims < 1)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "logits must have >= 1 dimension, got []");
  rt_tensor *y = rt_kernel_output(c, 0, x->dtype, &x->shape);
  if (!y) return c->st->code;
  int64_t n = x->shape.dims[x->shape.ndims - 1], rows = n ? rt_tensor_numel(x) / n : 0;
  if (x->dtype == RT_FLOAT)
    softmax_float(rt_tensor_data(x), rt_tensor_data(y), rows, n, log_out, NULL, NULL, NULL);
  else
    softmax_double(rt_tensor_data(x), rt_tensor_data(y), rows, n, log_out, NULL, NULL, NULL);
  return RT_OK;
}

int op_cpu_softmax(rt_kernel_ctx *c) { return softmax_run(c, false); }
int op_cpu_log_softmax(rt_kernel_ctx *c) { return softmax_run(c, true); }

int op_xent_shapes(rt_kernel_ctx *c, bool sparse) {
  const rt_tensor *f = c->inputs[0], *l = c->inputs[1];
  char a[160], b[160];
  if (f->shape.ndims != 2 || (sparse ? l->shape.ndims != 1 || l->shape.dims[0] != f->shape.dims[0]
                                     : !rt_shape_equal(&f->shape, &l->shape)))
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, sparse
                           ? "logits and labels must have the same first dimension, got logits "
                             "shape %s and labels shape %s"
                           : "logits and labels must be same size: logits_size=%s labels_size=%s",
                           op_shape_tf(&f->shape, a, sizeof a), op_shape_tf(&l->shape, b, sizeof b));
  return RT_OK;
}

static int xent_run(rt_kernel_ctx *c, bool sparse) {
  const rt_tensor *f = c->inputs[0], *l = c->inputs[1];
  if (need_float(c, f->dtype)) return c->st->code;
  if (op_xent_shapes(c, sparse)) return c->st->code;
  int64_t rows = f->shape.dims[0], n = f->shape.dims[1];
  int64_t *cls = NULL;
  if (sparse) {
    cls = malloc(sizeof *cls * (size_t)(rows ? rows : 1));
    if (!cls) return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
    for (int64_t r = 0; r < rows; r++) cls[r] = rt_tensor_get_i64(l, r);
    for (int64_t r = 0; r < rows; r++)
      if (cls[r] < 0 || cls[r] >= n) {
        char vals[200];
        size_t off = 0;
        for (int64_t k = 0; k < rows && off < sizeof vals; k++)
          off += (size_t)snprintf(vals + off, sizeof vals - off, "%s%lld", k ? " " : "",
                                  (long long)cls[k]);
        free(cls);
        return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Received a label value of %lld which is "
                               "outside the valid range of [0, %lld).  Label values: %s",
                               (long long)rt_tensor_get_i64(l, r), (long long)n, vals);
      }
  }
  rt_shape ls = rt_shape_make(1, &rows);
  rt_tensor *loss = rt_kernel_output(c, 0, f->dtype, &ls);
  rt_tensor *bp = loss ? rt_kernel_output(c, 1, f->dtype, &f->shape) : NULL;
  if (bp && f->dtype == RT_FLOAT)
    softmax_float(rt_tensor_data(f), rt_tensor_data(bp), rows, n, false,
                  sparse ? NULL : rt_tensor_data(l), cls, rt_tensor_data(loss));
  else if (bp)
    softmax_double(rt_tensor_data(f), rt_tensor_data(bp), rows, n, false,
                   sparse ? NULL : rt_tensor_data(l), cls, rt_tensor_data(loss));
  free(cls);
  return bp ? RT_OK : c->st->code;
}

int op_cpu_xent(rt_kernel_ctx *c) { return xent_run(c, false); }
int op_cpu_sparse_xent(rt_kernel_ctx *c) { return xent_run(c, true); }

/* ---- L2Loss, CheckNumerics -------------------------------------------------------- */

/* Partial sums of squares on rt_sum_tiles, added in tile order: the same bits for any
 * number of threads (under PAR_MIN elements one tile, the plain loop). */
typedef struct l2_job {
  const void *x;
  int64_t n, tiles;
  bool f32;
  double *part;
} l2_job;

static void l2_tile(void *arg, int64_t t, int who) {
  const l2_job *j = arg;
  int64_t lo, hi;
  double acc = 0;
  rt_tile_range(j->n, j->tiles, t, &lo, &hi);
  if (j->f32)
    for (int64_t i = lo; i < hi; i++) acc += (double)((const float *)j->x)[i] * ((const float *)j->x)[i];
  else
    for (int64_t i = lo; i < hi; i++) acc += ((const double *)j->x)[i] * ((const double *)j->x)[i];
  j->part[t] = acc;
}

int op_cpu_l2_loss(rt_kernel_ctx *c) {
  const rt_tensor *x = c->inputs[0];
  if (need_float(c, x->dtype)) return c->st->code;
  rt_shape s = rt_shape_scalar();
  rt_tensor *y = rt_kernel_output(c, 0, x->dtype, &s);
  if (!y) return c->st->code;
  int64_t n = rt_tensor_numel(x);
  double part[RT_SUM_TILES], acc = 0;
  l2_job j = {.x = rt_tensor_data(x), .n = n, .tiles = rt_sum_tiles(n, PAR_MIN / 2),
              .f32 = x->dtype == RT_FLOAT, .part = part};
  rt_parallel_tiles(j.tiles, n >= PAR_MIN ? rt_intra_threads() : 1, l2_tile, &j);
  for (int64_t t = 0; t < j.tiles; t++) acc += part[t];
  if (j.f32) *(float *)rt_tensor_data(y) = (float)(acc / 2);
  else *(double *)rt_tensor_data(y) = acc / 2;
  return RT_OK;
}

int op_cpu_check_numerics(rt_kernel_ctx *c) {
  const rt_tensor *x = c->inputs[0];
  if (need_float(c, x->dtype)) return c->st->code;
  bool nan = false, inf = false;
  int64_t n = rt_tensor_numel(x);
  for (int64_t i = 0; i < n; i++) {
    double v = x->dtype == RT_FLOAT ? ((const float *)rt_tensor_data(x))[i]
                                    : ((const double *)rt_tensor_data(x))[i];
    nan |= isnan(v);
    inf |= isinf(v);
  }
  if (nan || inf)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s : Tensor had %s values",
                           rt_node_string(c->node, "message", ""),
                           nan && inf ? "NaN and Inf" : nan ? "NaN" : "Inf");
  rt_tensor_unref(c->outputs[0]);
  c->outputs[0] = rt_tensor_ref(c->inputs[0]);
  return RT_OK;
}
