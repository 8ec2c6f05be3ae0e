/* ops/: op descriptions and their kernels. One entry point registers them all. */
#ifndef TFSH_OPS_H
#define TFSH_OPS_H

#include <stddef.h>
#include <stdint.h>

/* Register every op with the runtime's registry. Idempotent and thread-safe; call it once
 * at start-up (the shell's main and the server both do). Also sets BLIS up (BLIS_ARCH_TYPE
 * for this CPU unless the user set it, threads for large products). */
void op_register_all(void);

/* Benchmark baseline: the best time (seconds) of `reps` raw BLIS sgemm calls of size n×n×n
 * on `threads` threads, in this process. */
double op_bench_sgemm(int n, int reps, int threads);

/* GPU benchmark baselines on GPU:0, best seconds of reps (ops/gpu/bench.c): "sgemm" (raw
 * cuBLAS, n x n x n), "h2d_raw" (raw cudaMemcpyAsync of n bytes from pinned memory),
 * "h2d_runtime" (the runtime's staged copy of n bytes). -1 with why (no GPU, ...). */
double op_bench_gpu(const char *what, int64_t n, int reps, char *why, size_t why_len);

#endif
