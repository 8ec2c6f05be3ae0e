/* Float convolutions, and the big float products on AVX-512, through oneDNN, the library
 * TensorFlow itself runs on x86.
 *
 * oneDNN's direct convolutions (brgconv / jit kernels for the CPU's instruction set)
 * replace im2col + GEMM where they measure faster: 1.9-2.3x per thread on the CNN layers
 * of scripts/bench/cnn.sh (BENCHMARKS.md). Its sgemm runs ops/cpu/gemm.c's tiles of the
 * float products from 8M multiply-adds where BLIS's kernel set is AVX-512's: on a Zen 5 one
 * thread of BLIS's skx kernels gave 194-207 GFLOP/s at 256-4096, oneDNN's 221-239, and TF's
 * MatMul beat raw BLIS. libdnnl.so.2 is loaded on first use, so nothing is paid by
 * processes that never convolve or multiply big matrices; without it (or with TFSH_DNNL=0)
 * ops/cpu/conv.c keeps its own kernels and gemm.c BLIS.
 *
 * oneDNN runs one thread per call: ops/cpu/conv.c cuts the batch into tiles that the
 * intra-op pool hands out, as gemm.c does its GEMM tiles, so a busy core costs its share
 * only. */
#ifndef TFSH_OPS_CPU_ONEDNN_H
#define TFSH_OPS_CPU_ONEDNN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The three directions of one convolution, NHWC input [n, ih, iw, ic], HWIO filter
 * [kh, kw, ic, oc], NHWC output [n, oh, ow, oc]; pt / pl the top and left padding (the
 * bottom and right follow from the output size). */
enum { OP_DNNL_FWD, OP_DNNL_BWD_DATA, OP_DNNL_BWD_WEIGHTS };
typedef struct op_dnnl_conv {
  int64_t n, ih, iw, ic, kh, kw, oc, sh, sw, oh, ow, pt, pl;
} op_dnnl_conv;

/* A prepared primitive (cached for the process); NULL: oneDNN cannot run this one fast
 * (not loaded, disabled, a reference implementation, an error), use the own kernels. */
typedef struct op_dnnl_prim op_dnnl_prim;
op_dnnl_prim *op_dnnl_prepare(int kind, const op_dnnl_conv *g);

/* Bytes of scratch one call of p needs (a thread's own; 0: none). */
size_t op_dnnl_scratch(const op_dnnl_prim *p);

/* The filter in the kernel's own layout: bytes of it (0: the kernel takes TF's HWIO as it
 * is), whether p and q share it, and the conversion between it and HWIO, one way for FWD
 * and BWD_DATA (hwio -> own) and the other for BWD_WEIGHTS (own -> hwio); true when there
 * is none to do. */
size_t op_dnnl_filter_bytes(const op_dnnl_prim *p);
bool op_dnnl_same_filter(const op_dnnl_prim *p, const op_dnnl_prim *q);
bool op_dnnl_filter(const op_dnnl_prim *p, float *hwio, void *own);

/* One call on the calling thread, over p's batch: FWD y = conv(x, w); BWD_DATA x = the
 * input gradient of dy (in y); BWD_WEIGHTS w = the filter gradient of x and dy (in y);
 * w in the kernel's layout (op_dnnl_filter).
 * Returns false on an error from oneDNN (nothing written that the caller keeps). */
bool op_dnnl_run(const op_dnnl_prim *p, float *x, float *w, float *y, void *scratch);

/* Off: op_dnnl_prepare answers NULL (the own kernels run), for benchmarks and tests that
 * set the two paths side by side in one process. On by default. */
void op_dnnl_enable(bool on);

/* "oneDNN 2.6.3" once loaded and enabled, else NULL (loads it). */
const char *op_dnnl_version(void);

/* Float GEMM, C[m,n] = A[m,k] B[k,n] + beta C with C row-major (row stride rsc), A and B
 * given by (row, column) strides as ops/cpu/gemm.h takes them: op_dnnl_gemm_can says
 * whether oneDNN is loaded and enabled and takes these strides (one of each operand's is
 * 1); op_dnnl_sgemm runs it on the calling thread alone (false: an error, C untouched).
 * ops/cpu/gemm.c decides where it runs instead of BLIS. */
bool op_dnnl_gemm_can(int64_t m, int64_t n, int64_t k, int64_t rsa, int64_t csa, int64_t rsb,
                      int64_t csb, int64_t rsc);
bool op_dnnl_sgemm(int64_t m, int64_t n, int64_t k, const float *a, int64_t rsa, int64_t csa,
                   const float *b, int64_t rsb, int64_t csb, float beta, float *c, int64_t rsc);
/* C = A B, all row-major and dense, on `threads` of oneDNN's own OpenMP threads: the raw
 * baseline of scripts/bench (false: oneDNN not loaded). */
bool op_dnnl_sgemm_threads(int threads, int64_t m, int64_t n, int64_t k, const float *a,
                           const float *b, float *c);

#endif
