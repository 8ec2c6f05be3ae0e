/* The small float products (ops/cpu/small_gemm.c) against BLIS itself: the same bits for
 * every transposition of A and B, beta 0 and 1, row and column tails, k up to BLIS's KC,
 * called alone and through op_gemm's tiles. They run where BLIS uses its skx kernel
 * (AVX-512); elsewhere the test is skipped (exit 77). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ops/cpu/blas.h"
#include "ops/cpu/cpuarch.h"
#include "ops/cpu/gemm.h"

static float *filled(int64_t n, unsigned *seed) {
  float *v = malloc(sizeof *v * (size_t)n);
  for (int64_t i = 0; i < n; i++) v[i] = (float)(rand_r(seed) % 2001 - 1000) / 997.0f;
  return v;
}

/* One shape, A and B transposed or not (tr bits 1, 2), beta 0 or 1; false: not taken. */
static bool same_as_blis(int64_t m, int64_t n, int64_t k, int tr, int beta, bool tiles) {
  unsigned seed = (unsigned)(m * 131 + n * 17 + k + tr * 7 + beta);
  float *a = filled(m * k, &seed), *b = filled(k * n, &seed), *want = filled(m * n, &seed);
  float *got = malloc(sizeof *got * (size_t)(m * n));
  memcpy(got, want, sizeof *got * (size_t)(m * n));
  int64_t rsa = tr & 1 ? 1 : k, csa = tr & 1 ? m : 1, rsb = tr & 2 ? 1 : n, csb = tr & 2 ? k : 1;
  float one = 1, bt = (float)beta;
  rntm_t rntm = BLIS_RNTM_INITIALIZER;
  bli_rntm_set_num_threads(1, &rntm);
  bli_sgemm_ex(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, m, n, k, &one, a, rsa, csa, b, rsb, csb, &bt,
               want, n, 1, NULL, &rntm);
  int64_t kc = bli_cntx_get_blksz_def_dt(BLIS_FLOAT, BLIS_KC, (cntx_t *)bli_gks_query_cntx());
  bool taken = true;
  if (tiles) op_gemm(true, m, n, k, a, rsa, csa, b, rsb, csb, beta, got, n, 2);
  else taken = op_small_sgemm(m, n, k, a, rsa, csa, b, rsb, csb, beta, got, n, kc);
  if (taken) {
    int64_t i = 0;
    while (i < m * n && !memcmp(&got[i], &want[i], sizeof *got)) i++;
    if (i < m * n)
      print_error("m %lld n %lld k %lld tr %d beta %d: [%lld] %.9g, BLIS %.9g\n", (long long)m,
                  (long long)n, (long long)k, tr, beta, (long long)i, got[i], want[i]);
    assert_int_equal(i, m * n);
  }
  free(a), free(b), free(want), free(got);
  return taken;
}

static const int64_t shapes[][3] = {
    {128, 256, 65},   /* an LSTM step's product, its gradients below */
    {128, 65, 256}, {65, 256, 128}, {1, 1, 1}, {7, 17, 3}, {6, 64, 1}, {5, 300, 40},
    {13, 48, 384},    /* k = skx's KC */
    {32, 100, 96}, {32, 96, 256},   /* dynamic_rnn's input gradient: dgates x W^T */
};

static void test_bits(void **s) {
  (void)s;
  for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
    for (int tr = 0; tr < 4; tr++)
      for (int beta = 0; beta < 2; beta++) {
        const int64_t *d = shapes[i];
        assert_true(same_as_blis(d[0], d[1], d[2], tr, beta, false) || (tr & 2));
        same_as_blis(d[0], d[1], d[2], tr, beta, true);
      }
}

/* What it leaves to BLIS: k past KC, beta other than 0 and 1, large products. */
static void test_declines(void **s) {
  (void)s;
  float x[4] = {0};
  int64_t kc = bli_cntx_get_blksz_def_dt(BLIS_FLOAT, BLIS_KC, (cntx_t *)bli_gks_query_cntx());
  assert_false(op_small_sgemm(1, 1, kc + 1, x, 1, 1, x, 1, 1, 0, x, 1, kc));
  assert_false(op_small_sgemm(1, 1, 1, x, 1, 1, x, 1, 1, 0.5, x, 1, kc));
  assert_false(op_small_sgemm(1024, 1024, 8, x, 1, 1, x, 1, 1, 0, x, 1, kc));
}

int main(void) {
  if (!op_cpu_avx512()   /* first: it sets BLIS's kernel set, as tfsh's start-up does */ || bli_arch_query_id() != BLIS_ARCH_SKX) {
    printf("skip: BLIS runs %s kernels here, not skx's (AVX-512)\n",
           bli_arch_string(bli_arch_query_id()));
    return 77;
  }
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_bits), cmocka_unit_test(test_declines)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
