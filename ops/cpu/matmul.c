/* MatMul and BatchMatMul on BLIS's kernels (float, double) and a plain loop (int32, int64).
 * BLIS's kernel set is chosen from the instruction set at start-up (ops/cpu/cpuarch.c).
 *
 * Threads: products of at least THREAD_MIN_FLOPS multiply-adds are cut into tiles over the
 * intra-op pool (ops/cpu/gemm.c; rt_intra_threads: ConfigProto, then BLIS_NUM_THREADS,
 * then the CPUs this task may use: runtime/cpus.h), smaller ones run on one thread. A
 * device's executor runs one node at a time, so an LSTM step's products (batch x units x
 * 4*units, 1-2M) are where its second core comes from: with the threshold down from 4M
 * (and gemm.c's sup_grid), static_rnn's step on a Zen 3 went 6.45 -> 5.25 ms (rnn.sh);
 * down to 384K, the 100-step LSTMs' 786K products (dynamic_rnn, Keras) are cut as well. */
#include "ops/cpu/gemm.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ops/ops_int.h"

#define THREAD_MIN_FLOPS (384.0 * 1024)

static int threads_for(int64_t m, int64_t n, int64_t k) {
  return (double)m * (double)n * (double)k >= THREAD_MIN_FLOPS ? rt_intra_threads() : 1;
}

#define INT_MATMUL(T)                                                                 \
  static void matmul_##T(const T *a, int64_t rsa, int64_t csa, const T *b, int64_t rsb, \
                         int64_t csb, T *c, int64_t m, int64_t n, int64_t k) {         \
    memset(c, 0, sizeof(T) * (size_t)(m * n));                                        \
    for (int64_t i = 0; i < m; i++)                                                   \
      for (int64_t p = 0; p < k; p++) {                                               \
        T av = a[i * rsa + p * csa];                                                  \
        for (int64_t j = 0; j < n; j++) c[i * n + j] += av * b[p * rsb + j * csb];     \
      }                                                                               \
  }
INT_MATMUL(int32_t)
INT_MATMUL(int64_t)

int op_matmul_dims(rt_kernel_ctx *c, bool ta, bool tb, int64_t *m, int64_t *k, int64_t *n) {
  const rt_tensor *a = c->inputs[0], *b = c->inputs[1];
  char sa[160], sb[160];
  if (a->shape.ndims != 2)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "In[0] is not a matrix. Instead it has shape %s",
                           op_shape_tf(&a->shape, sa, sizeof sa));
  if (b->shape.ndims != 2)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "In[1] is not a matrix. Instead it has shape %s",
                           op_shape_tf(&b->shape, sb, sizeof sb));
  *m = a->shape.dims[ta], *k = a->shape.dims[!ta], *n = b->shape.dims[!tb];
  if (*k != b->shape.dims[tb])
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Matrix size-incompatible: In[0]: %s, In[1]: %s",
                           op_shape_tf(&a->shape, sa, sizeof sa),
                           op_shape_tf(&b->shape, sb, sizeof sb));
  return RT_OK;
}

int op_cpu_matmul(rt_kernel_ctx *c) {
  const rt_tensor *a = c->inputs[0], *b = c->inputs[1];
  bool ta = rt_node_bool(c->node, "transpose_a", false);
  bool tb = rt_node_bool(c->node, "transpose_b", false);
  int64_t m, k, n;
  int rc = op_matmul_dims(c, ta, tb, &m, &k, &n);
  if (rc) return rc;
  rt_shape s = rt_shape_make(2, (int64_t[]){m, n});
  rt_tensor *out = rt_kernel_output(c, 0, a->dtype, &s);
  if (!out) return c->st->code;
  if (m == 0 || n == 0) return RT_OK;
  /* Row-major operands as BLIS strides: a transpose just swaps them. */
  int64_t rsa = ta ? 1 : k, csa = ta ? m : 1, rsb = tb ? 1 : n, csb = tb ? k : 1;
  void *ad = rt_tensor_data(a), *bd = rt_tensor_data(b), *cd = rt_tensor_data(out);
  if (k == 0) {
    memset(cd, 0, rt_tensor_nbytes(out));
    return RT_OK;
  }
  switch (a->dtype) {
  case RT_FLOAT:
  case RT_DOUBLE:
    op_gemm(a->dtype == RT_FLOAT, m, n, k, ad, rsa, csa, bd, rsb, csb, 0, cd, n, threads_for(m, n, k));
    break;
  case RT_INT32: matmul_int32_t(ad, rsa, csa, bd, rsb, csb, cd, m, n, k); break;
  case RT_INT64: matmul_int64_t(ad, rsa, csa, bd, rsb, csb, cd, m, n, k); break;
  default:
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "no CPU kernel for %s", rt_dtype_name(a->dtype));
  }
  return RT_OK;
}

/* BatchMatMul: one product per batch index (the leading dims of x and y must agree). */
int op_cpu_batch_matmul(rt_kernel_ctx *c) {
  const rt_tensor *a = c->inputs[0], *b = c->inputs[1];
  bool ta = rt_node_bool(c->node, "adj_x", false), tb = rt_node_bool(c->node, "adj_y", false);
  int r = a->shape.ndims;
  char sa[160], sb[160];
  bool ok = r >= 2 && b->shape.ndims == r;
  for (int d = 0; ok && d < r - 2; d++) ok = a->shape.dims[d] == b->shape.dims[d];
  int64_t m = ok ? a->shape.dims[r - 2 + ta] : 0, k = ok ? a->shape.dims[r - 1 - ta] : 0;
  int64_t kb = ok ? b->shape.dims[r - 2 + tb] : 0, n = ok ? b->shape.dims[r - 1 - tb] : 0;
  if (!ok || k != kb)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "In[0] and In[1] must have compatible batch "
                           "dimensions and inner sizes: %s vs. %s",
                           op_shape_tf(&a->shape, sa, sizeof sa), op_shape_tf(&b->shape, sb, sizeof sb));
  rt_shape s = a->shape;
  s.dims[r - 2] = m, s.dims[r - 1] = n;
  rt_tensor *out = rt_kernel_output(c, 0, a->dtype, &s);
  if (!out) return c->st->code;
  int64_t batch = 1;
  for (int d = 0; d < r - 2; d++) batch *= a->shape.dims[d];
  if (k == 0) memset(rt_tensor_data(out), 0, rt_tensor_nbytes(out));
  if (m == 0 || n == 0 || k == 0) return RT_OK;
  int64_t rsa = ta ? 1 : k, csa = ta ? m : 1, rsb = tb ? 1 : n, csb = tb ? k : 1;
  size_t es = rt_dtype_size(a->dtype);
  if (a->dtype == RT_FLOAT || a->dtype == RT_DOUBLE) {
    op_gemm_batch(a->dtype == RT_FLOAT, batch, m, n, k, rt_tensor_data(a), rsa, csa, m * k,
                  rt_tensor_data(b), rsb, csb, k * n, 0, rt_tensor_data(out), n, m * n,
                  threads_for(batch * m, n, k));
    return RT_OK;
  }
  for (int64_t i = 0; i < batch; i++) {
    char *ad = (char *)rt_tensor_data(a) + (size_t)(i * m * k) * es;
    char *bd = (char *)rt_tensor_data(b) + (size_t)(i * k * n) * es;
    char *cd = (char *)rt_tensor_data(out) + (size_t)(i * m * n) * es;
    switch (a->dtype) {
    case RT_INT32: matmul_int32_t((void *)ad, rsa, csa, (void *)bd, rsb, csb, (void *)cd, m, n, k); break;
    case RT_INT64: matmul_int64_t((void *)ad, rsa, csa, (void *)bd, rsb, csb, (void *)cd, m, n, k); break;
    default:
      return rt_kernel_error(c, RT_UNIMPLEMENTED, "no CPU kernel for %s", rt_dtype_name(a->dtype));
    }
  }
  return RT_OK;
}
