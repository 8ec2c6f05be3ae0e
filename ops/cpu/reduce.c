/* Reductions (Sum, Mean, Max, ArgMax) and the two gradient helpers that undo them
 * (_SumToShapeOf for broadcasting, _ReduceGrad for reductions).
 *
 * All of them map each element of a "big" tensor to an element of a "small" one whose
 * dims are the big one's with some set to 1: `small_strides` gives, per big dim, the
 * stride in the small tensor (0 where reduced). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/ops_int.h"
#include "runtime/pool.h"

static void small_strides(const rt_shape *big, const bool *red, int64_t *st) {
  int64_t s = 1;
  for (int d = big->ndims - 1; d >= 0; d--) {
    st[d] = red[d] ? 0 : s;
    if (!red[d]) s *= big->dims[d];
  }
}

/* Walk big's elements in order, calling body with (big index i, small index o). */
#define FOR_MAPPED(big, st, body)                                                      \
  do {                                                                               \
    int64_t idx_[RT_MAX_DIMS] = {0}, o = 0, n_ = rt_shape_numel(big);                \
    for (int64_t i = 0; i < n_; i++) {                                               \
      body;                                                                          \
      for (int d_ = (big)->ndims - 1; d_ >= 0; d_--) {                               \
        o += (st)[d_];                                                               \
        if (++idx_[d_] < (big)->dims[d_]) break;                                     \
        o -= (st)[d_] * idx_[d_];                                                    \
        idx_[d_] = 0;                                                                \
      }                                                                              \
    }                                                                                \
  } while (0)

/* Axes from a tensor into a mask (an empty list reduces nothing, as in TF). */
static int read_axes(rt_kernel_ctx *c, const rt_tensor *axes, int ndims, bool *red) {
  int64_t n = rt_tensor_numel(axes);
  memset(red, 0, RT_MAX_DIMS * sizeof *red);
  for (int64_t i = 0; i < n; i++) {
    int64_t a = rt_tensor_get_i64(axes, i);
    if (a < -ndims || a >= ndims)
      return rt_kernel_error(c, RT_INVALID_ARGUMENT,
                             "Invalid reduction dimension (%lld for input with %d dimension(s)",
                             (long long)a, ndims);
    red[a < 0 ? a + ndims : a] = true;
  }
  return RT_OK;
}

enum { R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD };

/* Are the reduced dims (stride 0) all before the kept ones, so that x is rows of the
 * small tensor's ny elements laid end to end? (Nothing reduced counts: one row.) */
static bool lead_block(const rt_shape *s, const int64_t *st, int64_t ny) {
  int d = 0;
  while (d < s->ndims && st[d] == 0) d++;
  for (; d < s->ndims; d++)
    if (st[d] == 0 && s->dims[d] != 1) return false;
  return ny > 0;
}

/* Sums over leading dims (lead_block) add the rows of ny in runs of SUM_ROWS, 64 outputs
 * at a time in a local accumulator, as tiles of the pool; more than one run each leave a
 * partial sum (in the accumulator's precision) that are then added in order. The bits
 * depend on the shape alone, never on the threads. Nothing reduced: a copy. */
enum { SUM_ROWS = 1024 };
typedef struct rows_job {
  const void *x;
  void *y, *part;   /* part: runs x ny partial sums, NULL for one run */
  int64_t rows, ny, count, nblk;
  int kind;
} rows_job;

#define REDUCE_T(T, ACC)                                                                \
  /* rows 1: the elements [lo, hi); else the tiles (run, block of 64 outputs) */        \
  OP_CLONES static void sum_blocks_##T(void *arg, int64_t lo, int64_t hi, int who) {    \
    const rows_job *j = arg;                                                            \
    const T *x = j->x;                                                                  \
    T *y = j->y;                                                                        \
    ACC *part = j->part;                                                                \
    int64_t rows = j->rows, ny = j->ny, count = j->count;                               \
    int kind = j->kind;                                                                 \
    if (rows == 1) { /* nothing reduced: 0 + x, as the accumulator would give */       \
      _Pragma("omp simd") for (int64_t k = lo; k < hi; k++) y[k] = x[k] + (T)0;         \
      return;                                                                           \
    }                                                                                   \
    for (int64_t t = lo; t < hi; t++) {                                                 \
      int64_t p = t / j->nblk, k0 = t % j->nblk * 64, kn = ny - k0 < 64 ? ny - k0 : 64; \
      int64_t r0 = p * SUM_ROWS, r1 = r0 + SUM_ROWS < rows ? r0 + SUM_ROWS : rows;      \
      ACC acc[64];                                                                      \
      for (int64_t k = 0; k < kn; k++) acc[k] = 0;                                      \
      for (int64_t r = r0; r < r1; r++) {                                               \
        const T *xr = x + r * ny + k0;                                                  \
        _Pragma("omp simd") for (int64_t k = 0; k < kn; k++) acc[k] += (ACC)xr[k];      \
      }                                                                                 \
      if (part) memcpy(part + p * ny + k0, acc, sizeof(ACC) * (size_t)kn);              \
      else                                                                              \
        for (int64_t k = 0; k < kn; k++)                                                \
          y[k0 + k] = (T)(kind == R_MEAN && count ? acc[k] / (ACC)count : acc[k]);      \
    }                                                                                   \
  }                                                                                     \
  static bool sum_rows_##T(const T *x, int64_t rows, T *y, int64_t ny, int kind,        \
                           int64_t count) {                                             \
    int64_t nblk = (ny + 63) / 64, runs = rows == 1 ? 1 : (rows + SUM_ROWS - 1) / SUM_ROWS; \
    int64_t tiles = rows == 1 ? ny : nblk * runs;                                       \
    bool par = rows == 1 ? ny >= (1 << 17) : tiles > 1 && rows * ny >= (1 << 15);       \
    ACC *acc = NULL;                                                                    \
    if (runs > 1 && !(acc = malloc(sizeof *acc * (size_t)(runs * ny)))) return false;    \
    rows_job j = {.x = x, .y = y, .part = acc, .rows = rows, .ny = ny, .count = count,  \
                  .nblk = nblk, .kind = kind};                                          \
    rt_parallel_range(tiles, 1, par ? rt_intra_threads() : 1, sum_blocks_##T, &j);      \
    for (int64_t k = 0; acc && k < ny; k++) {                                           \
      ACC s = 0;                                                                        \
      for (int64_t p = 0; p < runs; p++) s += acc[p * ny + k];                          \
      y[k] = (T)(kind == R_MEAN && count ? s / (ACC)count : s);                         \
    }                                                                                   \
    free(acc);                                                                          \
    return true;                                                                        \
  }                                                                                     \
  static bool reduce_##T(const T *x, const rt_shape *s, const int64_t *st, T *y,        \
                         int64_t ny, int kind, int64_t count) {                         \
    int64_t nx = rt_shape_numel(s);                                                     \
    if ((kind == R_SUM || kind == R_MEAN) && ny > 1 && lead_block(s, st, ny)) {         \
      return sum_rows_##T(x, nx / ny, y, ny, kind, count);                              \
    }                                                                                   \
    ACC *acc = malloc(sizeof *acc * (size_t)(ny ? ny : 1));   /* output-sized */         \
    if (!acc) return false;                                                             \
    for (int64_t j = 0; j < ny; j++) acc[j] = kind == R_PROD;                          \
    if (kind == R_MAX || kind == R_MIN) /* start from an element of each group */      \
      FOR_MAPPED(s, st, acc[o] = x[i]);                                                \
    if (kind == R_MAX) {                                                                \
      FOR_MAPPED(s, st, if (x[i] > acc[o] || x[i] != x[i]) acc[o] = x[i]);             \
    } else if (kind == R_MIN) {                                                         \
      FOR_MAPPED(s, st, if (x[i] < acc[o] || x[i] != x[i]) acc[o] = x[i]);             \
    } else if (kind == R_PROD) {                                                        \
      FOR_MAPPED(s, st, acc[o] *= x[i]);                                               \
    } else if (ny == 1) {                                                               \
      for (int64_t i = 0; i < nx; i++) acc[0] += x[i];                                  \
    } else {                                                                            \
      FOR_MAPPED(s, st, acc[o] += x[i]);                                               \
    }                                                                                   \
    for (int64_t j = 0; j < ny; j++)                                                   \
      y[j] = (T)(kind == R_MEAN && count ? acc[j] / (ACC)count : acc[j]);              \
    free(acc);                                                                          \
    return true;                                                                        \
  }
REDUCE_T(float, double)
REDUCE_T(double, double)
REDUCE_T(int32_t, int64_t)
REDUCE_T(int64_t, int64_t)
REDUCE_T(uint8_t, uint64_t)   /* sums and products wrap as in TF, means do not */

static int reduce(rt_kernel_ctx *c, int kind) {
  const rt_tensor *x = c->inputs[0];
  bool red[RT_MAX_DIMS];
  int rc = read_axes(c, c->inputs[1], x->shape.ndims, red);
  if (rc) return rc;
  bool keep = rt_node_bool(c->node, "keep_dims", false);
  rt_shape o = {.ndims = 0};
  int64_t count = 1;
  for (int d = 0; d < x->shape.ndims; d++) {
    if (red[d]) count *= x->shape.dims[d];
    if (!red[d]) o.dims[o.ndims++] = x->shape.dims[d];
    else if (keep) o.dims[o.ndims++] = 1;
  }
  if ((kind == R_MAX || kind == R_MIN) && count == 0 && rt_tensor_numel(x) == 0 && rt_shape_numel(&o) > 0)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Reduction over an empty axis");
  rt_tensor *y = rt_kernel_output(c, 0, x->dtype, &o);
  if (!y) return c->st->code;
  int64_t st[RT_MAX_DIMS], ny = rt_shape_numel(&o);
  small_strides(&x->shape, red, st);
  void *yd = rt_tensor_data(y);
  const void *xd = rt_tensor_data(x);
  bool ok;
  switch (x->dtype) {
  case RT_FLOAT: ok = reduce_float(xd, &x->shape, st, yd, ny, kind, count); break;
  case RT_DOUBLE: ok = reduce_double(xd, &x->shape, st, yd, ny, kind, count); break;
  case RT_INT32: ok = reduce_int32_t(xd, &x->shape, st, yd, ny, kind, count); break;
  case RT_INT64: ok = reduce_int64_t(xd, &x->shape, st, yd, ny, kind, count); break;
  case RT_UINT8: ok = reduce_uint8_t(xd, &x->shape, st, yd, ny, kind, count); break;
  default:
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "no CPU kernel for %s", rt_dtype_name(x->dtype));
  }
  if (!ok)
    return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory: %lld accumulators of a reduction",
                           (long long)ny);
  return RT_OK;
}

int op_cpu_sum(rt_kernel_ctx *c) { return reduce(c, R_SUM); }
int op_cpu_mean(rt_kernel_ctx *c) { return reduce(c, R_MEAN); }
int op_cpu_max(rt_kernel_ctx *c) { return reduce(c, R_MAX); }
int op_cpu_min(rt_kernel_ctx *c) { return reduce(c, R_MIN); }
int op_cpu_prod(rt_kernel_ctx *c) { return reduce(c, R_PROD); }

static int arg_extreme(rt_kernel_ctx *c, bool is_min) {
  const rt_tensor *x = c->inputs[0];
  int nd = x->shape.ndims;
  int64_t ax = rt_tensor_numel(c->inputs[1]) == 1 ? rt_tensor_get_i64(c->inputs[1], 0) : nd;
  if (ax < -nd || ax >= nd)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT,
                           "Expected dimension in the range [%d, %d), but got %lld", -nd, nd,
                           (long long)ax);
  if (ax < 0) ax += nd;
  rt_shape o = {.ndims = 0};
  int64_t outer = 1, len = x->shape.dims[ax], inner = 1;
  for (int d = 0; d < nd; d++) {
    if (d != ax) o.dims[o.ndims++] = x->shape.dims[d];
    if (d < ax) outer *= x->shape.dims[d];
    if (d > ax) inner *= x->shape.dims[d];
  }
  if (len == 0)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Reduction axis %lld is empty in shape",
                           (long long)ax);
  rt_dtype ot = rt_node_type(c->node, "output_type", RT_INT64);
  rt_tensor *y = rt_kernel_output(c, 0, ot, &o);
  if (!y) return c->st->code;
  for (int64_t a = 0; a < outer; a++)
    for (int64_t b = 0; b < inner; b++) {
      int64_t base = a * len * inner + b, best = 0;
      double bv = rt_tensor_get_f64(x, base);
      for (int64_t k = 1; k < len; k++) {
        double v = rt_tensor_get_f64(x, base + k * inner);
        if (is_min ? v < bv : v > bv) bv = v, best = k;
      }
      if (ot == RT_INT32) ((int32_t *)rt_tensor_data(y))[a * inner + b] = (int32_t)best;
      else ((int64_t *)rt_tensor_data(y))[a * inner + b] = best;
    }
  return RT_OK;
}

int op_cpu_argmax(rt_kernel_ctx *c) { return arg_extreme(c, false); }
int op_cpu_argmin(rt_kernel_ctx *c) { return arg_extreme(c, true); }

/* x (a broadcast result) summed down to like's shape. */
int op_cpu_sum_to(rt_kernel_ctx *c) {
  const rt_tensor *x = c->inputs[0];
  const rt_shape *ls = &c->inputs[1]->shape;
  bool red[RT_MAX_DIMS] = {0};
  int lead = x->shape.ndims - ls->ndims;
  if (lead < 0)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "cannot sum rank %d down to rank %d",
                           x->shape.ndims, ls->ndims);
  for (int d = 0; d < x->shape.ndims; d++)
    red[d] = d < lead || (ls->dims[d - lead] == 1 && x->shape.dims[d] != 1);
  rt_tensor *y = rt_kernel_output_from(c, 0, 1, x->dtype, ls);
  if (!y) return c->st->code;
  bool numeric = x->dtype == RT_FLOAT || x->dtype == RT_DOUBLE || x->dtype == RT_INT32 ||
                 x->dtype == RT_INT64;
  if (numeric && rt_shape_equal(&x->shape, ls)) {   /* nothing to sum: x, as TF's Sum forwards it */
    if (y != x) memcpy(rt_tensor_data(y), rt_tensor_data(x), rt_tensor_nbytes(x));
    return RT_OK;
  }
  int64_t st[RT_MAX_DIMS], ny = rt_shape_numel(ls);
  small_strides(&x->shape, red, st);
  const void *xd = rt_tensor_data(x);
  void *yd = rt_tensor_data(y);
  bool ok;
  switch (x->dtype) {
  case RT_FLOAT: ok = reduce_float(xd, &x->shape, st, yd, ny, R_SUM, 1); break;
  case RT_DOUBLE: ok = reduce_double(xd, &x->shape, st, yd, ny, R_SUM, 1); break;
  case RT_INT32: ok = reduce_int32_t(xd, &x->shape, st, yd, ny, R_SUM, 1); break;
  case RT_INT64: ok = reduce_int64_t(xd, &x->shape, st, yd, ny, R_SUM, 1); break;
  default:
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "no CPU kernel for %s", rt_dtype_name(x->dtype));
  }
  return ok ? RT_OK : rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory: a sum of %lld "
                                      "elements to %lld", (long long)rt_shape_numel(&x->shape),
                                      (long long)ny);
}

/* dy (a reduction's gradient, with or without kept dims) spread over like's shape. */
int op_cpu_reduce_grad(rt_kernel_ctx *c) {
  const rt_tensor *dy = c->inputs[0];
  const rt_shape *ls = &c->inputs[1]->shape;
  bool red[RT_MAX_DIMS];
  int rc = read_axes(c, c->inputs[2], ls->ndims, red);
  if (rc) return rc;
  int64_t count = 1;
  for (int d = 0; d < ls->ndims; d++)
    if (red[d]) count *= ls->dims[d];
  if (!rt_dtype_is_float(dy->dtype))
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "no CPU kernel for %s", rt_dtype_name(dy->dtype));
  rt_tensor *y = rt_kernel_output(c, 0, dy->dtype, ls);
  if (!y) return c->st->code;
  double scale = rt_node_bool(c->node, "mean", false) && count ? 1.0 / (double)count : 1.0;
  int64_t st[RT_MAX_DIMS];
  small_strides(ls, red, st);
  int64_t ny = rt_tensor_numel(dy), n = rt_shape_numel(ls);
  if (dy->dtype == RT_FLOAT && ny > 0 && lead_block(ls, st, ny)) {
    /* the reduced dims lead (a mean over everything, or over the batch): rows of dy's ny
     * values, each the same products as the walk below makes */
    const float *s = rt_tensor_data(dy);
    float *d = rt_tensor_data(y);
    for (int64_t k = 0; k < ny && k < n; k++) d[k] = (float)(s[k] * scale);
    for (int64_t at = ny; at < n; at *= 2)   /* doubling: a scalar's mean fills n in log n copies */
      memcpy(d + at, d, (size_t)(at < n - at ? at : n - at) * sizeof *d);
  } else if (dy->dtype == RT_FLOAT) {
    const float *s = rt_tensor_data(dy);
    float *d = rt_tensor_data(y);
    FOR_MAPPED(ls, st, d[i] = (float)(s[o] * scale));
  } else {
    const double *s = rt_tensor_data(dy);
    double *d = rt_tensor_data(y);
    FOR_MAPPED(ls, st, d[i] = s[o] * scale);
  }
  return RT_OK;
}
