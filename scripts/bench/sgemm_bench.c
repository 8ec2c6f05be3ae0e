/* Raw BLIS sgemm, the baseline scripts/bench/cpu.sh pairs MatMul against: the kernel set
 * tfsh chooses (op_register_all sets BLIS up the same way; BLIS_ARCH_TYPE overrides it),
 * a given thread count, same-size square operands; with `dnnl`, raw oneDNN sgemm on its
 * own OpenMP threads instead (what tfsh's tiles run on AVX-512).
 *   sgemm_bench N [THREADS [REPS [dnnl]]]   (THREADS 0: tfsh's own intra-op choice)
 * Prints "sgemm N THREADS ARCH GFLOP/s" (ARCH "onednn" for dnnl), the best of REPS calls
 * after a warm-up; exits 77 where oneDNN is wanted and not there. */
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

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
  bool dnnl = argc > 4 && !strcmp(argv[4], "dnnl");
  if (n < 1 || n > 65536 || threads < 0 || reps < 1) {
    fprintf(stderr, "sgemm_bench: bad arguments\n");
    return 2;
  }
  op_register_all();
  if (!threads) threads = rt_intra_threads();
  double s = dnnl ? op_bench_dnnl_sgemm(n, reps, threads) : op_bench_sgemm(n, reps, threads);
  if (s <= 0) {
    fprintf(stderr, "sgemm_bench: %s\n", dnnl ? "no oneDNN (or out of memory)" : "out of memory");
    return dnnl ? 77 : 1;
  }
  printf("sgemm %d %d %s %.1f\n", n, threads, dnnl ? "onednn" : bli_arch_string(bli_arch_query_id()),
         2.0 * n * n * n / s / 1e9);
  return 0;
}
