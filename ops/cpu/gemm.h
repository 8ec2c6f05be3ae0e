/* C[m,n] = A[m,k] B[k,n] + beta C on BLIS's kernels (oneDNN's for big float products on
 * AVX-512), in tiles over the intra-op pool (ops/cpu/gemm.c). Operands are given by (row, column) strides in elements; C is
 * row-major with row stride rsc. threads: at most this many (1: this thread alone). */
#ifndef TFSH_OPS_CPU_GEMM_H
#define TFSH_OPS_CPU_GEMM_H

#include <stdbool.h>
#include <stdint.h>

void op_gemm(bool f32, int64_t m, int64_t n, int64_t k, const void *a, int64_t rsa, int64_t csa,
             const void *b, int64_t rsb, int64_t csb, double beta, void *c, int64_t rsc,
             int threads);
/* batch products, matrix i at a + i*sa, b + i*sb, c + i*sc (elements). */
void op_gemm_batch(bool f32, int64_t batch, int64_t m, int64_t n, int64_t k, const void *a,
                   int64_t rsa, int64_t csa, int64_t sa, const void *b, int64_t rsb,
                   int64_t csb, int64_t sb, double beta, void *c, int64_t rsc, int64_t sc,
                   int threads);
/* op_gemm on a given gm x gn grid of tiles (scripts/bench/gemm_grid.c measures grids); a
 * product small enough for BLIS's small-matrix path stays one tile (gemm.c, sup_path). */
void op_gemm_on_grid(bool f32, int64_t m, int64_t n, int64_t k, const void *a, int64_t rsa,
                     int64_t csa, const void *b, int64_t rsb, int64_t csb, double beta, void *c,
                     int64_t rsc, int threads, int64_t gm, int64_t gn);
/* One thread's C[m,n] = A B + beta C for small float products (at most OP_SMALL_GEMM_MAX
 * multiply-adds, k at most kc: BLIS's KC block) on the CPU's AVX-512 without packing,
 * bitwise what BLIS's skx kernel gives; false: not handled (no AVX-512, too big, beta
 * neither 0 nor 1), call BLIS. ops/cpu/small_gemm.c. */
#define OP_SMALL_GEMM_MAX (1 << 22)
bool op_small_sgemm(int64_t m, int64_t n, int64_t k, const float *a, int64_t rsa, int64_t csa,
                    const float *b, int64_t rsb, int64_t csb, double beta, float *c,
                    int64_t rsc, int64_t kc);
/* The tile grid (gm x gn per matrix) op_gemm_batch uses for `threads` threads; where two
 * grids cost the same, cols_first (a row-preferring kernel set's choice) cuts columns. */
void op_gemm_grid(int64_t m, int64_t n, int64_t batch, int threads, bool cols_first, int64_t *gm,
                  int64_t *gn);

/* oneDNN's sgemm for the big float products on AVX-512 (gemm.c, dnnl_path): on by default
 * there, unless TFSH_GEMM=blis; off: BLIS alone (benchmarks and tests set both side by
 * side). */
void op_gemm_use_dnnl(bool on);
/* ", oneDNN's sgemm for ..." where op_gemm takes it, else "" (the CPU line's part; libdnnl
 * itself is loaded by the first such product, and BLIS runs them where it is missing). */
const char *op_gemm_summary(void);

#endif
