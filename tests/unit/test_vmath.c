/* ops/cpu/vmath.h: the vectorizable float tanh and sigmoid against libm in double, rounded
 * once to float. A sweep over every 61st float bit pattern (both signs: tiny, denormal,
 * large and every range between) plus +-0, +-inf and NaN; the answer must be within one
 * ulp of the reference for tanh, two for sigmoid (the worst either has), NaN must give
 * NaN, and signs and saturation must be exact. */
/* as ops/cpu/elementwise.c compiles them: no contraction into FMAs */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#else
#pragma GCC optimize("fp-contract=off")
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <string.h>

#include <cmocka.h>

#include "ops/cpu/vmath.h"

static int64_t ordered(float x) {   /* float bits mapped so that adjacent floats differ by 1 */
  int32_t i;
  memcpy(&i, &x, sizeof i);
  return i < 0 ? -(int64_t)(i & 0x7fffffff) : i;
}

static int64_t ulps(float a, float b) {
  int64_t d = ordered(a) - ordered(b);
  return d < 0 ? -d : d;
}

static double ref_tanh(double x) { return tanh(x); }
static double ref_sigmoid(double x) { return 1 / (1 + exp(-x)); }

static void sweep(float (*f)(float), double (*ref)(double), const char *name, int64_t bound) {
  int64_t worst = 0;
  float worst_x = 0;
  for (uint64_t u = 0; u <= 0xffffffffu; u += 61) {
    uint32_t b = (uint32_t)u;
    float x;
    memcpy(&x, &b, sizeof x);
    float got = f(x), want = (float)ref((double)x);
    if (isnan(x)) {
      if (!isnan(got)) fail_msg("%s(nan bits %08x) = %g, not NaN", name, b, (double)got);
      continue;
    }
    int64_t d = ulps(got, want);
    if (d > worst) worst = d, worst_x = x;
  }
  if (worst > bound) fail_msg("%s: %lld ulp at x = %.9g", name, (long long)worst, (double)worst_x);
}

static void test_tanh_sweep(void **state) {
  (void)state;
  sweep(vm_tanhf, ref_tanh, "tanh", 1);
}

static void test_sigmoid_sweep(void **state) {
  (void)state;
  sweep(vm_sigmoidf, ref_sigmoid, "sigmoid", 2);
}

static void test_specials(void **state) {
  (void)state;
  assert_true(vm_tanhf(INFINITY) == 1.0f);
  assert_true(vm_tanhf(-INFINITY) == -1.0f);
  assert_true(vm_tanhf(3e38f) == 1.0f);
  assert_true(vm_tanhf(-3e38f) == -1.0f);
  assert_true(isnan(vm_tanhf(NAN)));
  assert_true(isnan(vm_tanhf(-NAN)));
  assert_true(vm_tanhf(0.0f) == 0.0f && !signbit(vm_tanhf(0.0f)));
  assert_true(vm_tanhf(-0.0f) == 0.0f && signbit(vm_tanhf(-0.0f)));
  assert_true(vm_tanhf(1e-30f) == 1e-30f);
  assert_true(vm_tanhf(-1.4e-45f) == -1.4e-45f);
  assert_true(vm_sigmoidf(INFINITY) == 1.0f);
  assert_true(vm_sigmoidf(-INFINITY) == 0.0f);
  assert_true(vm_sigmoidf(3e38f) == 1.0f);
  assert_true(vm_sigmoidf(-3e38f) == 0.0f);
  assert_true(isnan(vm_sigmoidf(NAN)));
  assert_true(vm_sigmoidf(0.0f) == 0.5f);
  assert_true(vm_sigmoidf(1e-30f) == 0.5f);
  assert_true(vm_sigmoidf(-100.0f) == (float)ref_sigmoid(-100.0));   /* a denormal */
  for (float x = -20; x <= 20; x += 0.125f) {
    assert_true(ulps(vm_tanhf(x), (float)tanh(x)) <= 1);
    assert_true(ulps(vm_sigmoidf(x), (float)ref_sigmoid(x)) <= 2);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tanh_sweep),
      cmocka_unit_test(test_sigmoid_sweep),
      cmocka_unit_test(test_specials),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
