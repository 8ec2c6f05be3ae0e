/* Raw BLIS sgemm, the baseline scripts/bench/cpu.sh pairs MatMul against: the kernel set
 * tfsh chooses (op_register_all sets BLIS up the same way; BLIS_ARCH_TYPE overrides it),
 * a given thread count, same-size square operands.
 *   sgemm_bench N [THREADS [REPS]]   (THREADS 0: tfsh's own intra-op choice)
 * Prints "sgemm N THREADS ARCH GFLOP/s", the best of REPS calls after a warm-up. */
#include <stdio.h>
#include <stdlib.h>

#include "ops/cpu/blas.h"
#include "ops/ops.h"
#include "runtime/op.h"

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: sgemm_bench N [THREADS [REPS]]\n");
    return 2;
  }
  int n = atoi(argv[1]), threads = argc > 2 ? atoi(argv[2]) : 0;
  int reps = argc > 3 ? atoi(argv[3]) : 5;
  if (n < 1 || n > 65536 || threads < 0 || reps < 1) {
    fprintf(stderr, "sgemm_bench: bad arguments\n");
    return 2;
  }
  op_register_all();
  if (!threads) threads = rt_intra_threads();
  double s = op_bench_sgemm(n, reps, threads);
  if (s <= 0) {
    fprintf(stderr, "sgemm_bench: out of memory\n");
    return 1;
  }
  printf("sgemm %d %d %s %.1f\n", n, threads, bli_arch_string(bli_arch_query_id()),
         2.0 * n * n * n / s / 1e9);
  return 0;
}
