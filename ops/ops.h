/* ops/: op descriptions and their kernels. One entry point registers them all. */
#ifndef TFSH_OPS_H
#define TFSH_OPS_H

#include <stddef.h>
#include <stdint.h>

/* Register every op with the runtime's registry. Idempotent and thread-safe; call it once
 * at start-up (the shell's main and the server both do). Also sets BLIS up (BLIS_ARCH_TYPE
 * for this CPU unless the user set it, threads for large products). */
#include <stdint.h>

#include "base/status.h"
#include "runtime/tensor.h"

/* Choose BLIS's kernels for this CPU (ops/cpu/cpuarch.c: from the instruction set, unless
 * the user set BLIS_ARCH_TYPE) and start it (idempotent). op_register_all does it;
 * the shell does it first, before the interpreter, whose numpy may use the same BLIS
 * through the BLAS interface and would otherwise start it with its own choice. */
void op_cpu_blas_init(void);

void op_register_all(void);

/* One line saying which CPU, instruction set, BLIS kernel set and intra-op thread count
 * this process uses, and why (after op_register_all; the buffer is the calling thread's,
 * valid until its next call): "CPU AMD EPYC (AuthenticAMD family 0x1a model 0x2),
 * AVX-512 (F/DQ/CD/BW/VL), BLIS kernels skx (from the instruction set), 2 intra-op threads
 * (affinity 2 of 2 CPUs)". `tfsh server` prints it at start. */
const char *op_cpu_summary(void);

/* tf.data's host iterators (ops/dataset.c): the shell sets these. next replaces out[0..n)
 * (unref what is there) with owned tensors; init starts over (n, out unused). Both return
 * RT_OK or a code with st set (RT_OUT_OF_RANGE: the iterator is exhausted). */
/* next: fills out[0..n); init: gets the initializer's n inputs in out (borrowed) */
typedef int (*op_host_iterator_fn)(int64_t id, int n, rt_tensor **out, rt_status *st);
void op_set_host_iterator(op_host_iterator_fn next, op_host_iterator_fn init);
/* tf.py_func's callback (shell/tf/dataset.c): call the function registered as id on the
 * inputs; fill out[0..n_out) with tensors of types[i]. Node names the op in messages. */
typedef int (*op_host_pyfunc_fn)(int64_t id, const char *node, int n_in, rt_tensor **in, int n_out,
                                 const rt_dtype *types, rt_tensor **out, rt_status *st);
void op_set_host_pyfunc(op_host_pyfunc_fn fn);

/* Benchmark baseline: the best time (seconds) of `reps` raw BLIS sgemm calls of size n×n×n
 * on `threads` threads, in this process. */
double op_bench_sgemm(int n, int reps, int threads);
/* The same on oneDNN's sgemm and its own OpenMP threads; -1 where oneDNN is not loaded. */
double op_bench_dnnl_sgemm(int n, int reps, int threads);

/* GPU benchmark baselines on GPU:0, best seconds of reps (ops/gpu/bench.c): "sgemm" (raw
 * cuBLAS, n x n x n), "h2d_raw" (raw cudaMemcpyAsync of n bytes from pinned memory),
 * "h2d_runtime" (the runtime's staged copy of n bytes). -1 with why (no GPU, ...). */
double op_bench_gpu(const char *what, int64_t n, int reps, char *why, size_t why_len);

#endif
