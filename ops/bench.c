/* The baselines for benchmarks of the runtime: raw BLIS sgemm, and raw oneDNN sgemm on its
 * own OpenMP threads, in this process (so a benchmark script compares sess.run with the raw
 * libraries under the same conditions). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ops/cpu/blas.h"
#include "ops/cpu/onednn.h"
#include "ops/ops.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The best of reps n^3 products after a warm-up, by BLIS or (dnnl) oneDNN's sgemm. */
static double bench(int n, int reps, int threads, bool dnnl) {
  size_t bytes = (size_t)n * (size_t)n * sizeof(float);
  float *a = aligned_alloc(64, bytes), *b = aligned_alloc(64, bytes), *c = aligned_alloc(64, bytes);
  if (!a || !b || !c) {
    free(a), free(b), free(c);
    return -1;
  }
  for (size_t i = 0; i < (size_t)n * (size_t)n; i++) a[i] = b[i] = (float)(i % 7) * 0.25f, c[i] = 0;
  float one = 1, zero = 0;
  rntm_t rntm = BLIS_RNTM_INITIALIZER;
  bli_rntm_set_num_threads(threads, &rntm);
  double best = 1e30;
  for (int r = -1; r < reps; r++) {   /* -1: the warm-up */
    double t = now_s();
    if (dnnl && !op_dnnl_sgemm_threads(threads, n, n, n, a, b, c)) {
      best = -1;
      break;
    }
    if (!dnnl)
      bli_sgemm_ex(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, n, n, n, &one, a, n, 1, b, n, 1, &zero, c,
                   n, 1, NULL, &rntm);
    t = now_s() - t;
    if (r >= 0 && t < best) best = t;
  }
  free(a), free(b), free(c);
  return best;
}

double op_bench_sgemm(int n, int reps, int threads) { return bench(n, reps, threads, false); }
double op_bench_dnnl_sgemm(int n, int reps, int threads) { return bench(n, reps, threads, true); }
