/* MatMul kernel vs raw BLIS sgemm, same process, same buffers.
 * Build: cc -O2 -I. -I/usr/include/x86_64-linux-gnu/blis-openmp scripts/bench/matmul_bench.c \
 *          build/libtfsh_core.a -lblis -fopenmp -lm -lpthread -o matmul_bench
 * Prints n, GFLOP/s of raw bli_sgemm on every core, of the MatMul kernel called through
 * rt_kernel_ctx (with output reuse, as the executor does), and their ratio. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "ops/cpu/blas.h"
#include "ops/ops.h"
#include "runtime/graph.h"
#include "runtime/op.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Best of several timed runs, each at least ~0.2 s of work. */
static double best_gflops(double flops, void (*fn)(void *), void *arg) {
  fn(arg);   /* warm-up: first touch, packing buffers, threads */
  int reps = (int)(2e10 / flops) + 1;
  double best = 0;
  for (int trial = 0; trial < 3; trial++) {
    double t0 = now();
    for (int r = 0; r < reps; r++) fn(arg);
    double g = flops * reps / (now() - t0) / 1e9;
    if (g > best) best = g;
  }
  return best;
}

typedef struct {
  int64_t n;
  rt_tensor *a, *b, *c;
  rt_kernel_ctx *kc;
  rntm_t *rntm;
} bench;

static void raw(void *p) {
  bench *B = p;
  float one = 1, zero = 0;
  bli_sgemm_ex(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, B->n, B->n, B->n, &one, rt_tensor_data(B->a),
               B->n, 1, rt_tensor_data(B->b), B->n, 1, &zero, rt_tensor_data(B->c), B->n, 1, NULL,
               B->rntm);
}

static void kernel(void *p) {
  bench *B = p;
  rt_kernel_ctx *kc = B->kc;
  kc->reuse[0] = kc->outputs[0];   /* the executor recycles last step's output */
  kc->outputs[0] = NULL;
  if (kc->node->def->kernel[RT_DEV_CPU](kc)) abort();
}

int main(int argc, char **argv) {
  op_register_all();
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  printf("BLIS arch %s, %ld cores\n", bli_arch_string(bli_arch_query_id()), cores);
  printf("%6s %12s %12s %7s\n", "n", "raw GFLOP/s", "kernel", "ratio");
  rt_node *node = rt_node_new("MatMul", "MatMul");
  node->def = rt_op_find("MatMul")->def;
  int max = argc > 1 ? atoi(argv[1]) : 4096;
  for (int64_t n = 64; n <= max; n *= 2) {
    rt_shape s = rt_shape_make(2, (int64_t[]){n, n});
    bench B = {.n = n, .a = rt_tensor_new(RT_FLOAT, &s), .b = rt_tensor_new(RT_FLOAT, &s),
               .c = rt_tensor_new(RT_FLOAT, &s)};
    for (int64_t i = 0; i < n * n; i++) {
      ((float *)rt_tensor_data(B.a))[i] = (float)(i % 7) - 3;
      ((float *)rt_tensor_data(B.b))[i] = (float)(i % 5) - 2;
    }
    rntm_t rntm = BLIS_RNTM_INITIALIZER;
    bli_rntm_set_num_threads(cores, &rntm);
    B.rntm = &rntm;
    rt_tensor *in[] = {B.a, B.b}, *out[1] = {0}, *reuse[1] = {0};
    rt_status st = {0};
    rt_kernel_ctx kc = {.node = node, .n_inputs = 2, .inputs = in, .n_outputs = 1,
                        .outputs = out, .reuse = reuse, .st = &st};
    B.kc = &kc;
    double flops = 2.0 * n * n * n;
    double r = best_gflops(flops, raw, &B), k = best_gflops(flops, kernel, &B);
    printf("%6lld %12.1f %12.1f %7.3f\n", (long long)n, r, k, k / r);
    fflush(stdout);
    rt_tensor_unref(out[0]);
    rt_tensor_unref(reuse[0]);
    rt_tensor_unref(B.a), rt_tensor_unref(B.b), rt_tensor_unref(B.c);
  }
  rt_node_free(node);
  return 0;
}
