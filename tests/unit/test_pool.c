/* The intra-op pool (runtime/pool.h) and the tiled GEMM on it (ops/cpu/gemm.h): every tile
 * runs exactly once, `who` stays below the thread count and never runs two tiles at once,
 * a call from inside a tile runs inline, callers on several threads share the pool, ranges
 * cover [0, n) once in whole tiles, sums on rt_sum_tiles give the same bits on any number
 * of threads, and a tiled product matches one BLIS call. Not bitwise: BLIS picks its small-matrix ("sup")
 * kernels, which sum in another order, from each call's own sizes, so a tile may take
 * them where the whole product did not (haswell and zen kernel sets; skx has none). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ops/cpu/blas.h"
#include "ops/cpu/cpuarch.h"
#include "ops/cpu/gemm.h"
#include "ops/cpu/onednn.h"
#include "ops/ops.h"
#include "runtime/pool.h"

enum { MAX_TILES = 1000, MAX_WHO = 8 };

typedef struct {
  _Atomic int runs[MAX_TILES];
  _Atomic int busy[MAX_WHO];
  _Atomic int bad_who, overlap, nested_ok;
  int threads;
  bool nest;
} count;

static void leaf(void *arg, int64_t t, int who) {
  count *c = arg;
  (void)t;
  if (who != 0) atomic_fetch_add(&c->bad_who, 1);   /* nested: inline, on the caller's thread */
  atomic_fetch_add(&c->nested_ok, 1);
}

static void counted(void *arg, int64_t t, int who) {
  count *c = arg;
  if (who < 0 || who >= c->threads || who >= MAX_WHO) {
    atomic_fetch_add(&c->bad_who, 1);
    return;
  }
  if (atomic_exchange(&c->busy[who], 1)) atomic_fetch_add(&c->overlap, 1);
  atomic_fetch_add(&c->runs[t], 1);
  if (c->nest) rt_parallel_tiles(3, c->threads, leaf, c);
  atomic_store(&c->busy[who], 0);
}

static void check_once(int64_t ntiles, int threads, bool nest) {
  count *c = calloc(1, sizeof *c);
  c->threads = threads, c->nest = nest;
  rt_parallel_tiles(ntiles, threads, counted, c);
  for (int64_t t = 0; t < ntiles; t++) assert_int_equal(c->runs[t], 1);
  for (int64_t t = ntiles; t < MAX_TILES; t++) assert_int_equal(c->runs[t], 0);
  assert_int_equal(c->bad_who, 0);
  assert_int_equal(c->overlap, 0);
  assert_int_equal(c->nested_ok, nest ? 3 * ntiles : 0);
  free(c);
}

static void test_every_tile_once(void **state) {
  (void)state;
  static const int64_t sizes[] = {0, 1, 2, 3, 7, 8, 64, 999, 1000};
  for (int threads = 1; threads <= MAX_WHO; threads++)
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) check_once(sizes[i], threads, false);
  for (int round = 0; round < 200; round++) check_once(17, 4, false);   /* back to back */
}

static void test_nested_inline(void **state) {
  (void)state;
  check_once(40, 4, true);
  check_once(5, 2, true);
}

static void *caller_main(void *arg) {
  (void)arg;
  for (int round = 0; round < 100; round++) check_once(31 + round % 5, 3, round % 7 == 0);
  return NULL;
}

static void test_concurrent_callers(void **state) {
  (void)state;
  pthread_t t[4];
  for (int i = 0; i < 4; i++) assert_int_equal(pthread_create(&t[i], NULL, caller_main, NULL), 0);
  for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
}

/* rt_parallel_range: [0, n) exactly once; tiles start at multiples of min, all but the last
 * at least min long; one call on the caller when threads <= 1 or n < 2 * min. */
enum { RANGE_MAX = 5000 };
typedef struct {
  _Atomic int runs[RANGE_MAX];
  _Atomic int busy[MAX_WHO];
  _Atomic int calls, bad;
  int64_t n, min;
  int threads;
} ranges;

static void ranged(void *arg, int64_t lo, int64_t hi, int who) {
  ranges *r = arg;
  atomic_fetch_add(&r->calls, 1);
  if (who < 0 || who >= r->threads || who >= MAX_WHO || lo < 0 || hi > r->n || lo >= hi ||
      lo % r->min || (hi < r->n && hi - lo < r->min)) {
    atomic_fetch_add(&r->bad, 1);
    return;
  }
  if (atomic_exchange(&r->busy[who], 1)) atomic_fetch_add(&r->bad, 1);
  for (int64_t i = lo; i < hi; i++) atomic_fetch_add(&r->runs[i], 1);
  atomic_store(&r->busy[who], 0);
}

static void test_range_covers(void **state) {
  (void)state;
  static const int64_t ns[] = {0, 1, 2, 5, 63, 64, 65, 100, 1000, 4097, RANGE_MAX};
  static const int64_t mins[] = {1, 3, 64, 1000};
  for (int threads = 1; threads <= MAX_WHO; threads++)
    for (size_t i = 0; i < sizeof ns / sizeof *ns; i++)
      for (size_t m = 0; m < sizeof mins / sizeof *mins; m++) {
        ranges *r = calloc(1, sizeof *r);
        r->n = ns[i], r->min = mins[m], r->threads = threads;
        rt_parallel_range(r->n, r->min, threads, ranged, r);
        for (int64_t k = 0; k < RANGE_MAX; k++) assert_int_equal(r->runs[k], k < r->n);
        assert_int_equal(r->bad, 0);
        if (r->n && (threads == 1 || r->n < 2 * r->min)) assert_int_equal(r->calls, 1);
        int64_t want = threads * RT_RANGE_PER_THREAD;   /* enough work: about 4 a thread */
        if (threads > 1 && r->n >= 2 * r->min * want)
          assert_true(r->calls <= want && 3 * r->calls >= 2 * want);
        free(r);
      }
}

/* A sum on rt_sum_tiles, partials added in tile order: the same bits on 1 to 8 threads. */
typedef struct {
  const float *x;
  int64_t n, tiles;
  float part[RT_SUM_TILES];
} summed;

static void sum_tile(void *arg, int64_t t, int who) {
  (void)who;
  summed *s = arg;
  int64_t lo, hi;
  rt_tile_range(s->n, s->tiles, t, &lo, &hi);
  float acc = 0;
  for (int64_t i = lo; i < hi; i++) acc += s->x[i];
  s->part[t] = acc;
}

static void fill(float *x, int64_t n, uint32_t seed);

static void test_sum_tiles(void **state) {
  (void)state;
  assert_int_equal(rt_sum_tiles(0, 100), 1);
  assert_int_equal(rt_sum_tiles(199, 100), 1);
  assert_int_equal(rt_sum_tiles(200, 100), 2);
  assert_int_equal(rt_sum_tiles(1 << 30, 100), RT_SUM_TILES);
  enum { N = 100003 };
  float *x = malloc(sizeof(float) * N), want = 0;
  fill(x, N, 7);
  for (int threads = 1; threads <= MAX_WHO; threads++) {
    summed s = {.x = x, .n = N, .tiles = rt_sum_tiles(N, 1000)};
    rt_parallel_tiles(s.tiles, threads, sum_tile, &s);
    float got = 0;
    for (int64_t t = 0; t < s.tiles; t++) got += s.part[t];
    if (threads == 1) want = got;
    assert_memory_equal(&got, &want, sizeof got);
  }
  free(x);
}

static void test_grid(void **state) {
  (void)state;
  static const struct {
    int64_t m, n, batch;
    int threads;
    bool cols_first;
    int64_t gm, gn;
  } cases[] = {
      {2048, 2048, 1, 2, false, 2, 1},   /* one tile a thread: a 2x2 grid would pack 2.3 % more */
      {2048, 2048, 1, 2, true, 1, 2},    /* the same, a row-preferring kernel: columns cut */
      {4096, 4096, 1, 2, false, 2, 2},   /* two a thread cost 1.2 % more: within the budget */
      {256, 256, 1, 2, false, 2, 1},     /* rows cut on a tie */
      {256, 256, 1, 2, true, 1, 2},      /* columns cut on a tie */
      {128, 512, 1, 2, false, 1, 2},     /* the MLP's batch x hidden product: cut the longer edge */
      {512, 128, 1, 2, true, 2, 1},      /* the longer edge whatever the tie rule */
      {10, 1000, 1, 2, false, 1, 2},     /* too few rows to split: columns only */
      {100, 100, 1, 4, false, 1, 1},     /* no tile under 64 rows or columns */
      {200, 200, 1, 4, false, 2, 2},     /* 4x1 would have 50-row edges */
      {200, 100, 1, 4, false, 3, 1},     /* no 4-tile grid: 3 */
      {256, 256, 16, 2, false, 1, 1},    /* enough matrices: one tile each */
      {256, 256, 3, 2, false, 2, 1},     /* 3 matrices on 2 threads: 6 tiles, none idle at the end */
      {256, 256, 3, 2, true, 1, 2},
      {512, 512, 1, 1, true, 1, 1},      /* one thread: one tile */
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    int64_t gm, gn;
    op_gemm_grid(cases[i].m, cases[i].n, cases[i].batch, cases[i].threads, cases[i].cols_first, &gm, &gn);
    if (gm != cases[i].gm || gn != cases[i].gn)
      fail_msg("%lldx%lld, batch %lld, %d threads%s: grid %lldx%lld, want %lldx%lld",
               (long long)cases[i].m, (long long)cases[i].n, (long long)cases[i].batch,
               cases[i].threads, cases[i].cols_first ? ", columns first" : "", (long long)gm,
               (long long)gn, (long long)cases[i].gm, (long long)cases[i].gn);
  }
}

/* Within 4 float ulps of the magnitude sum(|a||b|) that bounds the rounding. */
static void near(const float *got, const float *want, const float *mag, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    if (fabsf(got[i] - want[i]) > 4 * 1.2e-7f * mag[i])
      fail_msg("element %lld: %.9g vs %.9g", (long long)i, got[i], want[i]);
}

static void fill(float *x, int64_t n, uint32_t seed) {
  for (int64_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    x[i] = (float)((seed >> 8) % 2001) / 1000.0f - 1.0f;
  }
}

/* The tiled product (4 threads, transposes as strides, beta 0 and 1) against one BLIS call. */
static void test_gemm_tiled(void **state) {
  (void)state;
  static const int64_t shapes[][3] = {{300, 200, 77}, {1, 1000, 64}, {513, 65, 129}, {64, 64, 1},
                                      {300, 200, 211}};
  for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
    for (int ta = 0; ta < 2; ta++)
      for (int beta = 0; beta < 2; beta++) {
        int64_t m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
        float *a = malloc(sizeof(float) * m * k), *b = malloc(sizeof(float) * k * n);
        float *want = malloc(sizeof(float) * m * n), *got = malloc(sizeof(float) * m * n);
        float *mag = malloc(sizeof(float) * m * n);
        fill(a, m * k, 1), fill(b, k * n, 2), fill(want, m * n, 3), fill(got, m * n, 3);
        int64_t rsa = ta ? 1 : k, csa = ta ? m : 1;
        float one = 1, bt = (float)beta;
        rntm_t rntm = BLIS_RNTM_INITIALIZER;
        bli_rntm_set_num_threads(1, &rntm);
        bli_sgemm_ex(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, m, n, k, &one, a, rsa, csa, b, n, 1,
                     &bt, want, n, 1, NULL, &rntm);
        op_gemm(true, m, n, k, a, rsa, csa, b, n, 1, beta, got, n, 4);
        for (int64_t i = 0; i < m; i++)
          for (int64_t j = 0; j < n; j++) {
            float s = beta ? fabsf(want[i * n + j]) : 0;
            for (int64_t p = 0; p < k; p++) s += fabsf(a[i * rsa + p * csa] * b[p * n + j]);
            mag[i * n + j] = s + 1;
          }
        near(got, want, mag, m * n);
        free(a), free(b), free(want), free(got), free(mag);
      }
}

/* Bitwise the same on 1, 2 and 4 threads, whatever the grid: on the AVX2 kernel sets a
 * 1024-row product is packed while its 510-row tiles would have crossed BLIS's
 * small-matrix threshold (m < 512 on zen3), whose sums differ in the last bits, and 130
 * rows, under it too, are packed as well (above SUP_MAX_MACS). The rest take that path,
 * cut by their shape alone (gemm.c, sup_grid): an LSTM step's three products (A or B
 * transposed: t 1 or 2), and shapes whose halves gave other bits than one call. On
 * AVX-512 the products from 8M multiply-adds run on oneDNN's sgemm, a tile a call (the
 * CNN's dense layer and its two gradients, an odd shape, and long sums over short or
 * narrow ones: oneDNN picks its kernel and k blocks from each call's sizes, and 64-row
 * tiles of [128,3136]x[3136,1024] gave other bits than one call; the grids tfsh chooses
 * on 2-8 threads kept them in a sweep of 664 shapes and thread counts). */
static void test_gemm_threads_bitwise(void **state) {
  (void)state;
  static const int64_t shapes[][4] = {{1024, 256, 300, 0}, {600, 1024, 64, 0}, {130, 700, 257, 0},
                                      {100, 300, 130, 0},  {128, 256, 65, 0},  {128, 65, 256, 2},
                                      {65, 256, 128, 1},   {65, 256, 128, 0},  {128, 200, 128, 0},
                                      {200, 301, 65, 1},   {197, 301, 7, 2},    {128, 1024, 784, 0},
                                      {784, 1024, 128, 1}, {128, 784, 1024, 2}, {333, 517, 101, 0},
                                      {128, 1024, 3136, 0}, {2048, 64, 3136, 0}, {384, 2048, 1000, 0}};
  for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
    int64_t m = shapes[s][0], n = shapes[s][1], k = shapes[s][2], t = shapes[s][3];
    int64_t rsa = t == 1 ? 1 : k, csa = t == 1 ? m : 1, rsb = t == 2 ? 1 : n, csb = t == 2 ? k : 1;
    float *a = malloc(sizeof(float) * m * k), *b = malloc(sizeof(float) * k * n);
    float *c1 = malloc(sizeof(float) * m * n), *ct = malloc(sizeof(float) * m * n);
    fill(a, m * k, 4), fill(b, k * n, 5);
    op_gemm(true, m, n, k, a, rsa, csa, b, rsb, csb, 0, c1, n, 1);
    for (int threads = 2; threads <= 8; threads *= 2) {
      op_gemm(true, m, n, k, a, rsa, csa, b, rsb, csb, 0, ct, n, threads);
      for (int64_t i = 0; i < m * n; i++)
        if (memcmp(&c1[i], &ct[i], sizeof(float)))
          fail_msg("%lldx%lldx%lld (%lld) on %d threads, element %lld: %a vs %a on one", (long long)m,
                   (long long)n, (long long)k, (long long)t, threads, (long long)i, ct[i], c1[i]);
    }
    free(a), free(b), free(c1), free(ct);
  }
}

/* beta 0 writes C whatever it held (a reused buffer may hold NaN), on every path: the
 * small kernel, BLIS, oneDNN's sgemm. */
static void test_gemm_beta0_overwrites(void **state) {
  (void)state;
  static const int64_t shapes[][3] = {{16, 16, 16}, {200, 200, 120}, {256, 256, 256}};
  for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
    int64_t m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
    float *a = malloc(sizeof(float) * m * k), *b = malloc(sizeof(float) * k * n);
    float *c = malloc(sizeof(float) * m * n), *want = malloc(sizeof(float) * m * n);
    fill(a, m * k, 6), fill(b, k * n, 7);
    op_gemm(true, m, n, k, a, k, 1, b, n, 1, 0, want, n, 2);
    for (int64_t i = 0; i < m * n; i++) c[i] = NAN;
    op_gemm(true, m, n, k, a, k, 1, b, n, 1, 0, c, n, 2);
    assert_memory_equal(c, want, sizeof(float) * m * n);
    for (int64_t i = 0; i < m * n; i++) assert_false(isnan(c[i]));
    free(a), free(b), free(c), free(want);
  }
}

static void test_gemm_batch(void **state) {
  (void)state;
  enum { B = 5, M = 70, N = 90, K = 33 };
  double *a = malloc(sizeof(double) * B * M * K), *b = malloc(sizeof(double) * B * K * N);
  double *want = calloc(B * M * N, sizeof(double)), *got = calloc(B * M * N, sizeof(double));
  for (int i = 0; i < B * M * K; i++) a[i] = (i % 17) * 0.25 - 2;
  for (int i = 0; i < B * K * N; i++) b[i] = (i % 13) * 0.5 - 3;
  for (int i = 0; i < B; i++) {
    double one = 1, zero = 0;
    rntm_t rntm = BLIS_RNTM_INITIALIZER;
    bli_rntm_set_num_threads(1, &rntm);
    bli_dgemm_ex(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, M, N, K, &one, a + i * M * K, K, 1,
                 b + i * K * N, N, 1, &zero, want + i * M * N, N, 1, NULL, &rntm);
  }
  op_gemm_batch(false, B, M, N, K, a, K, 1, M * K, b, N, 1, K * N, 0, got, N, M * N, 3);
  for (int i = 0; i < B * M * N; i++) assert_true(fabs(got[i] - want[i]) <= 1e-12 * (1 + fabs(want[i])) * K);
  free(a), free(b), free(want), free(got);
}

static int on_blis(void **state) {
  (void)state;
  op_gemm_use_dnnl(false);
  return 0;
}

static int on_dnnl(void **state) {
  (void)state;
  op_gemm_use_dnnl(true);
  return 0;
}

int main(void) {
  op_cpu_blas_init();   /* the kernel set tfsh chooses */
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_tile_once),    cmocka_unit_test(test_nested_inline),
      cmocka_unit_test(test_concurrent_callers), cmocka_unit_test(test_range_covers),
      cmocka_unit_test(test_sum_tiles),          cmocka_unit_test(test_grid),
      cmocka_unit_test(test_gemm_batch),
  };
  const struct CMUnitTest gemm[] = {
      cmocka_unit_test(test_gemm_tiled),
      cmocka_unit_test(test_gemm_threads_bitwise),
      cmocka_unit_test(test_gemm_beta0_overwrites),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  failed += cmocka_run_group_tests_name("BLIS", gemm, on_blis, NULL);
  /* oneDNN's sgemm where tfsh takes it: AVX-512, libdnnl present (not in sanitizer builds) */
  if (op_cpu_avx512() && op_dnnl_version())
    failed += cmocka_run_group_tests_name("oneDNN", gemm, on_dnnl, NULL);
  else
    printf("[  SKIPPED ] oneDNN's sgemm: %s\n", op_cpu_avx512() ? "no libdnnl" : "no AVX-512");
  return failed;
}
