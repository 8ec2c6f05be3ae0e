/* Conv2D kernel vs the raw BLIS sgemm of the same size, same process.
 * Built with tfsh (the conv_bench target):
 *   build/conv_bench [N H W C KH KW K]     (default 32 28 28 32 5 5 64: MNIST's conv2, SAME)
 *   BLIS_NUM_THREADS=1 build/conv_bench    (one core, raw and kernels alike)
 *   WINO_ISA=1 ONEDNN_MAX_CPU_ISA=AVX2 build/conv_bench   (AVX2 kernels on an AVX-512 CPU)
 * Prints the best GFLOP/s over interleaved trials of raw bli_sgemm_ex on every core for the product im2col makes
 * ([N*OH*OW, KH*KW*C] x [KH*KW*C, K], the column matrix built once, untimed), of the Conv2D
 * kernel through rt_kernel_ctx (output and column buffer recycled, as the executor does),
 * and of its two backprop kernels, with the ratios to raw. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ops/cpu/blas.h"
#include "ops/cpu/onednn.h"
#include "ops/cpu/winograd.h"
#include "ops/ops.h"
#include "runtime/graph.h"
#include "runtime/op.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* One benchmark: a function, its argument, its best rate so far. */
typedef struct case_ {
  const char *name;
  void (*fn)(void *);
  void *arg;
  double best;
} case_;

/* Trials interleave the cases (each ~0.3 s of work a trial, after a warm-up), so load from
 * other processes hits them alike; the best trial of each counts. */
static void run_cases(case_ *cs, int n, double flops, int trials) {
  int reps = (int)(3e10 / flops) + 1;
  for (int i = 0; i < n; i++) cs[i].fn(cs[i].arg);
  for (int t = 0; t < trials; t++)
    for (int i = 0; i < n; i++) {
      double t0 = now();
      for (int r = 0; r < reps; r++) cs[i].fn(cs[i].arg);
      double g = flops * reps / (now() - t0) / 1e9;
      if (g > cs[i].best) cs[i].best = g;
    }
}

typedef struct {
  int64_t m, n, k;
  float *a, *b, *c;
  rntm_t *rntm;
} raw_args;

static void raw(void *p) {
  raw_args *R = p;
  float one = 1, zero = 0;
  bli_sgemm_ex(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, R->m, R->n, R->k, &one, R->a, R->k, 1, R->b,
               R->n, 1, &zero, R->c, R->n, 1, NULL, R->rntm);
}

typedef struct {
  rt_kernel_ctx kc;
  rt_tensor *in[3], *out[1], *reuse[1];
  void *state;
  rt_status st;
} kernel_args;

static void kernel(void *p) {
  kernel_args *K = p;
  K->reuse[0] = K->out[0];   /* the executor recycles last step's output */
  K->out[0] = NULL;
  if (K->kc.node->def->kernel[RT_DEV_CPU](&K->kc)) {
    fprintf(stderr, "%s\n", K->st.msg);
    abort();
  }
  rt_tensor_unref(K->reuse[0]);
  K->reuse[0] = NULL;
}

/* The same kernel with oneDNN's convolutions on (the others run with it off). */
static void kernel_dnnl(void *p) {
  op_dnnl_enable(true);
  kernel(p);
  op_dnnl_enable(false);
}

/* With the Winograd kernels on as well (ops/cpu/winograd.h: 5x5 and 3x3 shapes). */
static void kernel_wino(void *p) {
  op_wino_enable(true);
  kernel_dnnl(p);
  op_wino_enable(false);
}

static rt_tensor *filled(int nd, const int64_t *d, int mod) {
  rt_shape s = rt_shape_make(nd, d);
  rt_tensor *t = rt_tensor_new(RT_FLOAT, &s);
  for (int64_t i = 0; i < rt_tensor_numel(t); i++)
    ((float *)rt_tensor_data(t))[i] = (float)(i % mod) * 0.25f - 1;
  return t;
}

static rt_tensor *sizes(const int64_t *d) {
  rt_shape s = rt_shape_make(1, (int64_t[]){4});
  rt_tensor *t = rt_tensor_new(RT_INT32, &s);
  for (int i = 0; i < 4; i++) ((int32_t *)rt_tensor_data(t))[i] = (int32_t)d[i];
  return t;
}

static void kernel_setup(kernel_args *K, const char *op, rt_tensor *a, rt_tensor *b, rt_tensor *c) {
  rt_node *node = rt_node_new(op, op);
  node->def = rt_op_find(op)->def;
  rt_node_set_ints(node, "strides", 4, (int64_t[]){1, 1, 1, 1});
  rt_node_set_string(node, "padding", "SAME");
  *K = (kernel_args){.in = {a, b, c}};
  K->kc = (rt_kernel_ctx){.node = node, .n_inputs = c ? 3 : 2, .inputs = K->in, .n_outputs = 1,
                          .outputs = K->out, .reuse = K->reuse, .st = &K->st, .state = &K->state};
}

static void kernel_free(kernel_args *K) {
  rt_tensor_unref(K->out[0]);
  free(K->state);
  rt_node_free((rt_node *)K->kc.node);
}

int main(int argc, char **argv) {
  op_register_all();
  bli_init();   /* linked here, not loaded by blis_dl.c: initialised before its queries */
  op_dnnl_enable(false);   /* on only in the oneDNN cases */
  op_wino_enable(false);   /* and Winograd in its own */
  if (getenv("WINO_ISA"))
    printf("Winograd kernels: %s\n", op_wino_isa(atoi(getenv("WINO_ISA"))) == 2 ? "AVX-512" : "AVX2");
  int64_t v[7] = {32, 28, 28, 32, 5, 5, 64};
  for (int i = 0; i < 7 && i + 1 < argc; i++) v[i] = atoll(argv[i + 1]);
  int64_t n = v[0], h = v[1], w = v[2], c = v[3], kh = v[4], kw = v[5], k = v[6];
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (getenv("BLIS_NUM_THREADS")) cores = atol(getenv("BLIS_NUM_THREADS"));   /* as the kernels */
  printf("BLIS arch %s, %ld threads\n", bli_arch_string(bli_arch_query_id()), cores);
  printf("Conv2D [%lld,%lld,%lld,%lld] x [%lld,%lld,%lld,%lld] SAME, stride 1\n", (long long)n,
         (long long)h, (long long)w, (long long)c, (long long)kh, (long long)kw, (long long)c,
         (long long)k);
  int64_t m = n * h * w, kk = kh * kw * c;   /* SAME, stride 1: OH = H, OW = W */
  double flops = 2.0 * (double)m * (double)k * (double)kk;
  raw_args R = {.m = m, .n = k, .k = kk, .a = malloc(sizeof(float) * (size_t)(m * kk)),
                .b = malloc(sizeof(float) * (size_t)(kk * k)), .c = malloc(sizeof(float) * (size_t)(m * k))};
  for (int64_t i = 0; i < m * kk; i++) R.a[i] = (float)(i % 7) * 0.25f - 1;
  for (int64_t i = 0; i < kk * k; i++) R.b[i] = (float)(i % 5) * 0.25f - 1;
  rntm_t rntm = BLIS_RNTM_INITIALIZER;
  bli_rntm_set_num_threads(cores, &rntm);
  R.rntm = &rntm;

  int64_t xd[4] = {n, h, w, c}, fd[4] = {kh, kw, c, k}, yd[4] = {n, h, w, k};
  rt_tensor *x = filled(4, xd, 7), *f = filled(4, fd, 5), *dy = filled(4, yd, 3);
  rt_tensor *xs = sizes(xd), *fs = sizes(fd);
  kernel_args K[3];
  kernel_setup(&K[0], "Conv2D", x, f, NULL);
  kernel_setup(&K[1], "Conv2DBackpropInput", xs, f, dy);
  kernel_setup(&K[2], "Conv2DBackpropFilter", x, fs, dy);
  case_ cs[] = {{"raw sgemm", raw, &R, 0}, {"Conv2D kernel", kernel, &K[0], 0},
                {"Conv2DBackpropInput", kernel, &K[1], 0},
                {"Conv2DBackpropFilter", kernel, &K[2], 0},
                {"Conv2D oneDNN", kernel_dnnl, &K[0], 0},
                {"BackpropInput oneDNN", kernel_dnnl, &K[1], 0},
                {"BackpropFilter oneDNN", kernel_dnnl, &K[2], 0},
                {"Conv2D Winograd", kernel_wino, &K[0], 0},
                {"BackpropInput Winograd", kernel_wino, &K[1], 0},
                {"BackpropFilter Winograd", kernel_wino, &K[2], 0}};
  int ncases = op_dnnl_version() ? 10 : 4;
  run_cases(cs, ncases, flops, 7);
  printf("%-22s %8.1f GFLOP/s  (m=%lld n=%lld k=%lld, one call)\n", cs[0].name, cs[0].best,
         (long long)m, (long long)k, (long long)kk);
  for (int i = 1; i < ncases; i++)
    printf("%-22s %8.1f GFLOP/s  ratio %.3f\n", cs[i].name, cs[i].best, cs[i].best / cs[0].best);
  for (int i = 0; i < 3; i++) kernel_free(&K[i]);
  free(R.a), free(R.b), free(R.c);
  rt_tensor_unref(x), rt_tensor_unref(f), rt_tensor_unref(dy), rt_tensor_unref(xs),
      rt_tensor_unref(fs);
  return 0;
}
