/* Branch-free float tanh and sigmoid that GCC vectorizes inside `omp simd` loops (libm's
 * tanhf and expf are scalar calls, a fifth of an LSTM step's time).
 *
 * In float, eight lanes to an AVX2 vector: e^y by Cody-Waite reduction y = n ln2 + r,
 * |r| <= ln2/2 (ln2 in two parts, the first with n * hi exact), e^r - 1 = r q(r) with q of
 * degree 5 (a relative-error fit of ours on [-ln2/2, ln2/2], 1.7e-8 with float
 * coefficients), and 2^n built in the exponent bits. tanh |x| < 0.55 is x + x^3 P(x^2), P
 * of degree 4 fitted the same way (1.8e-9); above, (e^2a - 1) / (e^2a + 1) with e^2a - 1 =
 * 2^n r q(r) + (2^n - 1), where n >= 2 leaves no cancellation. Sigmoid is 1 / (1 + e) or
 * e / (1 + e), e = e^-|x| scaled in two steps so that a denormal answer is rounded once.
 * tests/unit/test_vmath.c sweeps both against libm in double: tanh within 1 ulp of the
 * correctly rounded answer, sigmoid within 2 (the double-precision version this replaces
 * was within 1 at 2.3x the time; Eigen's, TF's, is within a few). No fused multiply-adds
 * (elementwise.c compiles without contraction), so every clone rounds alike. NaN in gives
 * NaN out; +-inf and large |x| saturate. */
#ifndef TFSH_OPS_CPU_VMATH_H
#define TFSH_OPS_CPU_VMATH_H

#include <stdint.h>
#include <string.h>

#define VM_INLINE static inline __attribute__((always_inline))

/* Selects test the float's bits with integer compares: a float compare may trap, which
 * keeps GCC from turning the selects into vector blends. */
VM_INLINE uint32_t vm_bits(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

VM_INLINE float vm_float(uint32_t u) {
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}

enum {
  VM_NAN_ABOVE = 0x7f800000,    /* |x| bits above this: NaN */
  VM_TANH_SAT = 0x41200000,     /* 10.0f: tanh(10) rounds to 1.0f */
  VM_TANH_POLY = 0x3f0ccccd,    /* 0.55f: below it tanh's polynomial */
  VM_SIGM_SAT = 0x42d00000,     /* 104.0f: sigmoid(-104) rounds to 0.0f, sigmoid(104) to 1 */
};

/* y = n ln2 + r: r, and n in *n (|y| < 2^22 ln2). */
VM_INLINE float vm_reduce(float y, int32_t *n) {
  const float shift = 0x1.8p23f;                    /* rounds to an integer in the low bits */
  float t = y * 0x1.715476p0f + shift;              /* y / ln2 + shift */
  float nf = t - shift;
  float r = y - nf * 0x1.62e400p-1f;                /* ln2's high part: nf * hi is exact */
  r = r - nf * 0x1.7f7d1cp-20f;                     /* ln2's low part */
  *n = (int32_t)(vm_bits(t) - vm_bits(shift));
  return r;
}

/* e^r - 1 for |r| <= ln2/2 */
VM_INLINE float vm_expm1_small(float r) {
  float q = 0x1.6af7a2p-10f;
  q = q * r + 0x1.126734p-7f;
  q = q * r + 0x1.55580cp-5f;
  q = q * r + 0x1.55541ap-3f;
  q = q * r + 0x1.fffffcp-2f;
  q = q * r + 1.0f;
  return r * q;
}

VM_INLINE float vm_pow2(int32_t n) { return vm_float((uint32_t)(n + 127) << 23); }   /* normal n */

VM_INLINE float vm_tanhf(float x) {
  uint32_t u = vm_bits(x), ua = u & 0x7fffffff;
  float a = vm_float(ua < VM_TANH_SAT ? ua : VM_TANH_SAT);
  int32_t n;
  float r = vm_reduce(2 * a, &n);                   /* n in [0, 29] */
  float s = vm_pow2(n), em = s * vm_expm1_small(r) + (s - 1);
  float big = em / (em + 2);
  float z = a * a, p = -0x1.9a8ee0p-8f;
  p = p * z + 0x1.591dbep-6f;
  p = p * z - 0x1.b9243ap-5f;
  p = p * z + 0x1.110d08p-3f;
  p = p * z - 0x1.55554ap-2f;
  float small = a + a * (z * p);
  float t = ua < VM_TANH_POLY ? small : big;
  float res = vm_float(vm_bits(t) | (u & 0x80000000));
  return ua > VM_NAN_ABOVE ? x : res;
}

VM_INLINE float vm_sigmoidf(float x) {
  uint32_t u = vm_bits(x), ua = u & 0x7fffffff;
  float a = vm_float(ua < VM_SIGM_SAT ? ua : VM_SIGM_SAT);
  int32_t n;
  float r = vm_reduce(-a, &n);                      /* n in [-150, 0] */
  int32_t h = n / 2;                                /* 2^n = 2^h 2^(n-h), both normal */
  float e = ((1 + vm_expm1_small(r)) * vm_pow2(h)) * vm_pow2(n - h);   /* e^-|x| */
  float res = (u >> 31 ? e : 1.0f) / (1 + e);
  return ua > VM_NAN_ABOVE ? x : res;
}

#endif
