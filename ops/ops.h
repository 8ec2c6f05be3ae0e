/* ops/: op descriptions and their kernels. One entry point registers them all. */
#ifndef TFSH_OPS_H
#define TFSH_OPS_H

/* Register every op with the runtime's registry. Idempotent and thread-safe; call it once
 * at start-up (the shell's main and the server both do). Also sets BLIS up (BLIS_ARCH_TYPE
 * for this CPU unless the user set it, threads for large products). */
void op_register_all(void);

/* Benchmark baseline: the best time (seconds) of `reps` raw BLIS sgemm calls of size n×n×n
 * on `threads` threads, in this process. */
double op_bench_sgemm(int n, int reps, int threads);

#endif
