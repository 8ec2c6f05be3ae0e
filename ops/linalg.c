/* Linear algebra: Qr (Householder, as Eigen's HouseholderQR that TF's CPU kernel runs: the
 * reflector of column k maps it to beta e_k with beta = -sign(a_kk) * norm, no reflection
 * when the column below the diagonal is already zero) over the last two dimensions, and
 * DiagPart (tf.diag_part: the diagonal of a [d1..dk, d1..dk] tensor). Both for the
 * orthogonal initializer's q * sign(diag(r)). Computed in double. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "ops/ops_int.h"

static double get(const rt_tensor *t, int64_t i) {
  return t->dtype == RT_FLOAT ? ((const float *)rt_tensor_data(t))[i] : ((const double *)rt_tensor_data(t))[i];
}

static void put(rt_tensor *t, int64_t i, double v) {
  if (t->dtype == RT_FLOAT) ((float *)rt_tensor_data(t))[i] = (float)v;
  else ((double *)rt_tensor_data(t))[i] = v;
}

/* One m x n matrix a (row-major, overwritten by the factored form): tau[k] and the
 * reflectors' vectors below the diagonal (v_k[k] = 1 implied); diag[k] = R's diagonal. */
static void householder(double *a, int64_t m, int64_t n, double *tau, double *diag) {
  int64_t kk = m < n ? m : n;
  for (int64_t k = 0; k < kk; k++) {
    double c0 = a[k * n + k], tail = 0;
    for (int64_t i = k + 1; i < m; i++) tail += a[i * n + k] * a[i * n + k];
    if (tail <= 0x1p-1022) {   /* Eigen: tailSqNorm <= (std::numeric_limits<RealScalar>::min)() */
      tau[k] = 0;
      diag[k] = c0;
      for (int64_t i = k + 1; i < m; i++) a[i * n + k] = 0;
      continue;
    }
    double beta = sqrt(c0 * c0 + tail);
    if (c0 >= 0) beta = -beta;
    for (int64_t i = k + 1; i < m; i++) a[i * n + k] /= (c0 - beta);
    tau[k] = (beta - c0) / beta;
    diag[k] = beta;
    /* apply H = I - tau v v^T to the columns right of k */
    for (int64_t j = k + 1; j < n; j++) {
      double s = a[k * n + j];
      for (int64_t i = k + 1; i < m; i++) s += a[i * n + k] * a[i * n + j];
      s *= tau[k];
      a[k * n + j] -= s;
      for (int64_t i = k + 1; i < m; i++) a[i * n + j] -= s * a[i * n + k];
    }
  }
}

static int qr_dims(const rt_shape *s, int64_t *m, int64_t *n, int64_t *batch) {
  if (s->ndims < 2) return -1;
  *m = s->dims[s->ndims - 2];
  *n = s->dims[s->ndims - 1];
  *batch = 1;
  for (int d = 0; d < s->ndims - 2; d++) *batch *= s->dims[d];
  return 0;
}

static int qr_kernel(rt_kernel_ctx *c) {
  const rt_tensor *x = c->inputs[0];
  bool full = rt_node_bool(c->node, "full_matrices", false);
  int64_t m, n, batch;
  char sb[160];
  if (x->dtype != RT_FLOAT && x->dtype != RT_DOUBLE)
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "no CPU kernel for %s", rt_dtype_name(x->dtype));
  if (qr_dims(&x->shape, &m, &n, &batch))
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "input must have rank >= 2, got shape %s",
                           op_shape_tf(&x->shape, sb, sizeof sb));
  int64_t k = m < n ? m : n, qc = full ? m : k;
  rt_shape qs = x->shape, rs = x->shape;
  qs.dims[qs.ndims - 1] = qc;
  rs.dims[rs.ndims - 2] = qc;
  rt_tensor *q = rt_kernel_output(c, 0, x->dtype, &qs), *r = rt_kernel_output(c, 1, x->dtype, &rs);
  if (!q || !r) return c->st->code;
  double *a = xmalloc(sizeof(double) * (size_t)(m * n + 2 * k + 1)), *tau = a + m * n, *diag = tau + k;
  for (int64_t b = 0; b < batch; b++) {
    for (int64_t i = 0; i < m * n; i++) a[i] = get(x, b * m * n + i);
    householder(a, m, n, tau, diag);
    /* R: the upper triangle (rows past k zero when full) */
    for (int64_t i = 0; i < qc; i++)
      for (int64_t j = 0; j < n; j++)
        put(r, b * qc * n + i * n + j, i == j ? diag[i] : (i < j && i < k) ? a[i * n + j] : 0.0);
    /* Q = H_0 ... H_{k-1} applied to the first qc columns of the identity, right to left */
    int64_t qo = b * m * qc;
    double *col = xmalloc(sizeof(double) * (size_t)(m + 1));
    for (int64_t j = 0; j < qc; j++) {
      for (int64_t i = 0; i < m; i++) col[i] = i == j;
      for (int64_t h = k - 1; h >= 0; h--) {
        if (tau[h] == 0) continue;
        double s = col[h];
        for (int64_t i = h + 1; i < m; i++) s += a[i * n + h] * col[i];
        s *= tau[h];
        col[h] -= s;
        for (int64_t i = h + 1; i < m; i++) col[i] -= s * a[i * n + h];
      }
      for (int64_t i = 0; i < m; i++) put(q, qo + i * qc + j, col[i]);
    }
    free(col);
  }
  free(a);
  return RT_OK;
}

static int qr_shape(rt_shape_ctx *c) {
  const rt_shape *x = &c->in_shapes[0];
  if (x->ndims < 0) return RT_OK;
  if (x->ndims < 2) return op_shape_error(c, 0, "Shape must be at least rank 2 but is rank %d", x->ndims);
  bool full = rt_node_bool(c->node, "full_matrices", false);
  int64_t m = x->dims[x->ndims - 2], n = x->dims[x->ndims - 1];
  int64_t k = m < 0 || n < 0 ? -1 : (m < n ? m : n), qc = full ? m : k;
  c->out_shapes[0] = c->out_shapes[1] = *x;
  c->out_shapes[0].dims[x->ndims - 1] = qc;
  c->out_shapes[1].dims[x->ndims - 2] = qc;
  return RT_OK;
}

/* ---- DiagPart --------------------------------------------------------------------- */

static int diag_part_kernel(rt_kernel_ctx *c) {
  const rt_tensor *x = c->inputs[0];
  int nd = x->shape.ndims, h = nd / 2;
  char sb[160];
  if (nd == 0 || nd % 2)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "The rank of the tensor should be even and positive, got shape %s",
                           op_shape_tf(&x->shape, sb, sizeof sb));
  for (int d = 0; d < h; d++)
    if (x->shape.dims[d] != x->shape.dims[d + h])
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Invalid shape %s: dimensions %d and %d do not match.",
                             op_shape_tf(&x->shape, sb, sizeof sb), d, d + h);
  rt_shape o = rt_shape_make(h, x->shape.dims);
  rt_tensor *y = rt_kernel_output(c, 0, x->dtype, &o);
  if (!y) return c->st->code;
  int64_t n = rt_tensor_numel(y);
  size_t es = rt_dtype_size(x->dtype);
  for (int64_t i = 0; i < n; i++)
    memcpy((char *)rt_tensor_data(y) + i * es, (const char *)rt_tensor_data(x) + (i * n + i) * es, es);
  return RT_OK;
}

static int diag_part_shape(rt_shape_ctx *c) {
  const rt_shape *x = &c->in_shapes[0];
  if (x->ndims < 0) return RT_OK;
  if (x->ndims == 0 || x->ndims % 2)
    return op_shape_error(c, 0, "Input must have even and non-zero rank, input rank is %d", x->ndims);
  int h = x->ndims / 2;
  rt_shape o = rt_shape_make(h, x->dims);
  for (int d = 0; d < h; d++) {
    int64_t a = x->dims[d], b = x->dims[d + h];
    if (a >= 0 && b >= 0 && a != b) return op_dims_error(c, a, b);
    o.dims[d] = a >= 0 ? a : b;
  }
  c->out_shapes[0] = o;
  return RT_OK;
}

static const rt_op_def linalg_ops[] = {
  {.name = "Qr", .inputs = "input: T", .outputs = "q: T, r: T",
   .attrs = "full_matrices: bool = false, T: {float, double}",
   .help = "QR decomposition of the inner matrices (Householder): q orthonormal columns, r upper triangular.",
   .shape = qr_shape, .kernel = {[RT_DEV_CPU] = qr_kernel}},
  {.name = "DiagPart", .inputs = "input: T", .outputs = "diagonal: T",
   .attrs = "T: {float, double, int32, int64}",
   .help = "The diagonal of a [d1..dk, d1..dk] tensor, of shape [d1..dk].",
   .shape = diag_part_shape, .kernel = {[RT_DEV_CPU] = diag_part_kernel}},
};

void op_linalg_register(void) { rt_op_register(linalg_ops, OP_COUNT(linalg_ops)); }
