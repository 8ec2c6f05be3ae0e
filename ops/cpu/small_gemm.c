/* Small float products without BLIS's packing: see op_small_sgemm in gemm.h.
 *
 * An LSTM step's products ([128, 65] x [65, 256] and its two gradients) are 1-2M
 * multiply-adds; BLIS packs both operands for each, and on them ran at 60-90 GFLOP/s a
 * core where its kernel reaches 200 on big ones. Here rows of C take 6 at a time and up to
 * 64 columns (4 registers of 16), B's rows are read where they lie (packed once when B is
 * transposed) and A's elements broadcast from where they lie. Each element of C is one
 * register lane summing a_ik * b_kj by fused multiply-add for k in order, from zero, then
 * + C when beta is 1: the operations of BLIS's AVX-512 micro-kernel over one KC block, so
 * the bits are BLIS's (tests/unit/test_gemm_small.c checks them). */
#include "ops/cpu/gemm.h"

#include <stdlib.h>
#include <string.h>

#include "ops/cpu/cpuarch.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define SMALL_TARGET __attribute__((target("avx512f")))

#if defined(__clang__)
#define UNROLL(n) _Pragma("unroll")
#else
#define UNROLL_(s) _Pragma(#s)
#define UNROLL(n) UNROLL_(GCC unroll n)
#endif

enum { ROWS = 6, PACK_MAX = 24 << 10 };   /* PACK_MAX: floats of a transposed B on the stack */

/* rows x (16 nv) of C, the last register masked by `last`. */
static inline __attribute__((always_inline)) SMALL_TARGET void
block(int rows, int nv, __mmask16 last, int64_t k, const float *a, int64_t rsa, int64_t csa,
      const float *b, int64_t ldb, bool add, float *c, int64_t ldc) {
  __m512 acc[ROWS][4];
  UNROLL(6) for (int r = 0; r < rows; r++)
    UNROLL(4) for (int v = 0; v < nv; v++) acc[r][v] = _mm512_setzero_ps();
  for (int64_t kk = 0; kk < k; kk++) {
    __m512 bv[4];
    UNROLL(4) for (int v = 0; v < nv; v++)
      bv[v] = _mm512_maskz_loadu_ps(v == nv - 1 ? last : 0xffff, b + kk * ldb + 16 * v);
    UNROLL(6) for (int r = 0; r < rows; r++) {
      __m512 av = _mm512_set1_ps(a[r * rsa + kk * csa]);
      UNROLL(4) for (int v = 0; v < nv; v++) acc[r][v] = _mm512_fmadd_ps(av, bv[v], acc[r][v]);
    }
  }
  UNROLL(6) for (int r = 0; r < rows; r++)
    UNROLL(4) for (int v = 0; v < nv; v++) {
      __mmask16 m = v == nv - 1 ? last : 0xffff;
      float *p = c + r * ldc + 16 * v;
      __m512 x = acc[r][v];
      if (add) x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(m, p));
      _mm512_mask_storeu_ps(p, m, x);
    }
}

/* One block with rows and nv made constants, so that acc lives in registers. */
#define NV_CASES(R)                                                                        \
  case R * 4 + 1: block(R, 1, last, k, a, rsa, csa, b, ldb, add, c, ldc); break;           \
  case R * 4 + 2: block(R, 2, last, k, a, rsa, csa, b, ldb, add, c, ldc); break;           \
  case R * 4 + 3: block(R, 3, last, k, a, rsa, csa, b, ldb, add, c, ldc); break;           \
  case R * 4 + 4: block(R, 4, last, k, a, rsa, csa, b, ldb, add, c, ldc); break;
static SMALL_TARGET void block_any(int rows, int nv, __mmask16 last, int64_t k, const float *a,
                                   int64_t rsa, int64_t csa, const float *b, int64_t ldb,
                                   bool add, float *c, int64_t ldc) {
  switch (rows * 4 + nv) {
    NV_CASES(1) NV_CASES(2) NV_CASES(3) NV_CASES(4) NV_CASES(5) NV_CASES(6)
  default: break;
  }
}

static SMALL_TARGET void run(int64_t m, int64_t n, int64_t k, const float *a, int64_t rsa,
                             int64_t csa, const float *b, int64_t ldb, bool add, float *c,
                             int64_t ldc) {
  for (int64_t j0 = 0; j0 < n; j0 += 64) {
    int64_t cols = n - j0 < 64 ? n - j0 : 64;
    int nv = (int)((cols + 15) / 16);
    __mmask16 last = (__mmask16)(cols % 16 ? (1u << (cols % 16)) - 1 : 0xffff);
    for (int64_t i0 = 0; i0 < m; i0 += ROWS) {
      int rows = (int)(m - i0 < ROWS ? m - i0 : ROWS);
      block_any(rows, nv, last, k, a + i0 * rsa, rsa, csa, b + j0, ldb, add, c + i0 * ldc + j0,
                ldc);
    }
  }
}

/* r[0..15] (16 rows of 16) transposed in registers: lanes of 4, then 4x4 blocks of them. */
static inline __attribute__((always_inline)) SMALL_TARGET void transpose16(__m512 r[16]) {
  __m512 t[16];
  for (int i = 0; i < 8; i++)
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]),
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  for (int g = 0; g < 4; g++) {   /* r[4g + q], lane L: column 4L + q of rows 4g..4g+3 */
    r[4 * g] = _mm512_shuffle_ps(t[4 * g], t[4 * g + 2], 0x44);
    r[4 * g + 1] = _mm512_shuffle_ps(t[4 * g], t[4 * g + 2], 0xee);
    r[4 * g + 2] = _mm512_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0x44);
    r[4 * g + 3] = _mm512_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0xee);
  }
  for (int q = 0; q < 4; q++) {   /* row 4L + q: lane L of r[q], r[4 + q], r[8 + q], r[12 + q] */
    __m512 x0 = _mm512_shuffle_f32x4(r[q], r[4 + q], 0x44);
    __m512 x1 = _mm512_shuffle_f32x4(r[q], r[4 + q], 0xee);
    __m512 x2 = _mm512_shuffle_f32x4(r[8 + q], r[12 + q], 0x44);
    __m512 x3 = _mm512_shuffle_f32x4(r[8 + q], r[12 + q], 0xee);
    t[q] = _mm512_shuffle_f32x4(x0, x2, 0x88), t[4 + q] = _mm512_shuffle_f32x4(x0, x2, 0xdd);
    t[8 + q] = _mm512_shuffle_f32x4(x1, x3, 0x88), t[12 + q] = _mm512_shuffle_f32x4(x1, x3, 0xdd);
  }
  for (int i = 0; i < 16; i++) r[i] = t[i];
}

/* bt[kk * n + j] = B[kk, j] for B stored by columns (b[j * csb + kk]: an LSTM's W^T in its
 * input gradient), 16x16 blocks at a time; the strided scalar copy this replaces was a
 * fifth of dynamic_rnn's training step. */
static SMALL_TARGET void pack_columns(int64_t k, int64_t n, const float *b, int64_t csb,
                                      float *bt) {
  int64_t k16 = k / 16 * 16, n16 = n / 16 * 16;
  for (int64_t j0 = 0; j0 < n16; j0 += 16)
    for (int64_t k0 = 0; k0 < k16; k0 += 16) {
      __m512 r[16];
      for (int i = 0; i < 16; i++) r[i] = _mm512_loadu_ps(b + (j0 + i) * csb + k0);
      transpose16(r);
      for (int i = 0; i < 16; i++) _mm512_storeu_ps(bt + (k0 + i) * n + j0, r[i]);
    }
  for (int64_t kk = 0; kk < k; kk++)   /* the tails: columns past n16, rows past k16 */
    for (int64_t j = kk < k16 ? n16 : 0; j < n; j++) bt[kk * n + j] = b[j * csb + kk];
}

bool op_small_sgemm(int64_t m, int64_t n, int64_t k, const float *a, int64_t rsa, int64_t csa,
                    const float *b, int64_t rsb, int64_t csb, double beta, float *c,
                    int64_t rsc, int64_t kc) {
  if (!op_cpu_avx512() || k < 1 || k > kc || (beta != 0 && beta != 1)) return false;
  if ((double)m * (double)n * (double)k > OP_SMALL_GEMM_MAX) return false;
  if (csb == 1) {
    run(m, n, k, a, rsa, csa, b, rsb, beta == 1, c, rsc);
    return true;
  }
  if (k * n > PACK_MAX) return false;
  float bt[PACK_MAX];   /* B's rows laid out for the kernel: bt[kk * n + j] = B[kk, j] */
  if (rsb == 1)
    pack_columns(k, n, b, csb, bt);
  else
    for (int64_t kk = 0; kk < k; kk++)
      for (int64_t j = 0; j < n; j++) bt[kk * n + j] = b[kk * rsb + j * csb];
  run(m, n, k, a, rsa, csa, bt, n, beta == 1, c, rsc);
  return true;
}

#else

bool op_small_sgemm(int64_t m, int64_t n, int64_t k, const float *a, int64_t rsa, int64_t csa,
                    const float *b, int64_t rsb, int64_t csb, double beta, float *c,
                    int64_t rsc, int64_t kc) {
  (void)m, (void)n, (void)k, (void)a, (void)rsa, (void)csa, (void)b, (void)rsb, (void)csb;
  (void)beta, (void)c, (void)rsc, (void)kc;
  return false;
}

#endif
