/* One float32 GEMM (n x n x n, or m x k x n) on several tile grids and as raw BLIS, the
 * calls alternating so that every grid meets the same load: the measurements behind
 * ops/cpu/gemm.c's grid.
 *   gemm_grid N THREADS REPS GRID...   (N: n, or MxKxN for an m x k times k x n product)
 * GRID: raw (one BLIS call on THREADS of BLIS's own threads), auto (op_gemm's choice) or
 * GMxGN (tiles over the intra-op pool); blis:auto or blis:GMxGN, the same on BLIS alone
 * where op_gemm would take oneDNN's sgemm (ops/cpu/gemm.c). GEMM_GRID_CPU_TIME=1 times the calling thread's CPU
 * time instead of the wall clock: with THREADS 1, a grid's own cost with the neighbours'
 * load left out. GEMM_GRID_TRANS_B=1 stores B as its transpose (n x k, a dense layer's
 * input gradient: dy times W^T). Prints "gemm_grid N THREADS ARCH" and GRID GFLOP/s, the
 * best of REPS rounds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ops/cpu/blas.h"
#include "ops/cpu/gemm.h"
#include "ops/ops.h"

static clockid_t clock_id = CLOCK_MONOTONIC;

static double now(void) {
  struct timespec t;
  clock_gettime(clock_id, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv) {
  enum { MAX_GRIDS = 32 };
  int m = 0, k = 0, n = 0, threads = argc > 4 ? atoi(argv[2]) : 0;
  int reps = argc > 4 ? atoi(argv[3]) : 0, grids = argc - 4;
  if (argc > 4 && sscanf(argv[1], "%dx%dx%d", &m, &k, &n) != 3) m = k = n = atoi(argv[1]);
  if (m < 1 || k < 1 || n < 1 || threads < 1 || reps < 1 || grids > MAX_GRIDS) {
    fprintf(stderr, "usage: gemm_grid N|MxKxN THREADS REPS GRID... (GRID: raw, auto or GMxGN)\n");
    return 2;
  }
  const char *cpu = getenv("GEMM_GRID_CPU_TIME");
  if (cpu && *cpu == '1') clock_id = CLOCK_THREAD_CPUTIME_ID;
  const char *tb = getenv("GEMM_GRID_TRANS_B");
  bool trans_b = tb && *tb == '1';
  int64_t rsb = trans_b ? 1 : n, csb = trans_b ? k : 1;   /* B[i][j] at b[i * rsb + j * csb] */
  long long gm[MAX_GRIDS], gn[MAX_GRIDS];
  bool blis[MAX_GRIDS];
  for (int g = 0; g < grids; g++) {
    const char *s = argv[4 + g];
    blis[g] = !strncmp(s, "blis:", 5);
    if (blis[g]) s += 5;
    gm[g] = gn[g] = 0;   /* auto */
    if (!strcmp(s, "raw")) gm[g] = -1;
    else if (strcmp(s, "auto") &&
             (sscanf(s, "%lldx%lld", &gm[g], &gn[g]) != 2 || gm[g] < 1 || gn[g] < 1)) {
      fprintf(stderr, "gemm_grid: bad grid '%s'\n", argv[4 + g]);
      return 2;
    }
  }
  op_register_all();   /* BLIS set up as tfsh does it (kernel set from the instruction set) */
  size_t na = (size_t)m * (size_t)k, nb = (size_t)k * (size_t)n;
  float *a = malloc(na * sizeof(float)), *b = malloc(nb * sizeof(float));
  float *c = calloc((size_t)m * (size_t)n, sizeof(float));
  if (!a || !b || !c) {
    fprintf(stderr, "gemm_grid: out of memory\n");
    return 1;
  }
  for (size_t i = 0; i < na; i++) a[i] = (float)(i % 7) * 0.25f;
  for (size_t i = 0; i < nb; i++) b[i] = (float)(i % 5) * 0.5f;
  double best[MAX_GRIDS];
  for (int r = 0; r < reps; r++)
    for (int g = 0; g < grids; g++) {
      /* Each call timed warm, after one untimed call of its own (its threads awake), and
       * BLIS's OpenMP threads, which spin for a while after a call, left to stop first:
       * spinning, they held the CPU the next grid's pool thread wanted (-15 % at 256). */
      if (gm[(g + grids - 1) % grids] < 0) usleep(5000);
      double t = 0;
      for (int warm = 1; warm >= 0; warm--) {
        t = now();
        if (gm[g] < 0) {
          float one = 1, zero = 0;
          rntm_t rntm = BLIS_RNTM_INITIALIZER;
          bli_rntm_set_num_threads(threads, &rntm);
          bli_sgemm_ex(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, m, n, k, &one, a, k, 1, b, rsb, csb,
                       &zero, c, n, 1, NULL, &rntm);
        } else {
          op_gemm_use_dnnl(!blis[g]);
          op_gemm_on_grid(true, m, n, k, a, k, 1, b, rsb, csb, 0, c, n, threads, gm[g], gn[g]);
        }
        t = now() - t;
      }
      if (r == 0 || t < best[g]) best[g] = t;
    }
  printf("gemm_grid %s %d %s", argv[1], threads, bli_arch_string(bli_arch_query_id()));
  for (int g = 0; g < grids; g++) printf(" %s %.1f", argv[4 + g], 2.0 * m * n * k / best[g] / 1e9);
  printf("\n");
  free(a), free(b), free(c);
  return 0;
}
