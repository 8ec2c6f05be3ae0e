/* Branch-free float tanh and sigmoid that GCC vectorizes inside `omp simd` loops (libm's
 * tanhf and expf are scalar calls, a fifth of an LSTM step's time).
 *
 * Both work in double: exp(y) by Cody-Waite reduction y = n ln2 + r, |r| <= ln2/2, a
 * degree-10 Taylor polynomial for e^r (truncation below 1e-12 relative) and 2^n built in
 * the exponent bits; the double result is then rounded once to float, so the float answer
 * is within one ulp of the correctly rounded one (tests/unit/test_vmath.c sweeps it
 * against libm in double). NaN in gives NaN out; +-inf and large |x| saturate. */
#ifndef TFSH_OPS_CPU_VMATH_H
#define TFSH_OPS_CPU_VMATH_H

#include <stdint.h>
#include <string.h>

#define VM_INLINE static inline __attribute__((always_inline))

/* e^y for y in [-708, 708] (callers clamp; NaN must not reach here). */
VM_INLINE double vm_exp_d(double y) {
  const double shift = 0x1.8p52;                    /* rounds to an integer in the low bits */
  double t = y * 0x1.71547652b82fep0 + shift;       /* y / ln2 + shift */
  double n = t - shift;
  double r = y - n * 0x1.62e42fee00000p-1;          /* ln2's high part: n * hi is exact */
  r = r - n * 0x1.a39ef35793c76p-33;                /* ln2's low part */
  double p = 1.0 / 3628800;
  p = p * r + 1.0 / 362880;
  p = p * r + 1.0 / 40320;
  p = p * r + 1.0 / 5040;
  p = p * r + 1.0 / 720;
  p = p * r + 1.0 / 120;
  p = p * r + 1.0 / 24;
  p = p * r + 1.0 / 6;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  uint64_t bits;
  memcpy(&bits, &t, sizeof bits);                   /* low bits: n (two's complement) */
  bits = (bits << 52) + ((uint64_t)1023 << 52);     /* 2^n */
  double scale;
  memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}

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
  VM_TANH_SMALL = 0x39800000,   /* 2^-12: below it x - x^3/3 is exact to float */
  VM_SIGM_SAT = 0x42dc0000,     /* 110.0f: sigmoid(-110) rounds to 0.0f, sigmoid(110) to 1 */
};

VM_INLINE float vm_tanhf(float x) {
  uint32_t u = vm_bits(x), ua = u & 0x7fffffff;
  double a = vm_float(ua < VM_TANH_SAT ? ua : VM_TANH_SAT);
  double e = vm_exp_d(2 * a);
  double big = (e - 1) / (e + 1);
  double small = a - a * a * a * (1.0 / 3);         /* no cancellation for tiny |x| */
  float t = (float)(ua < VM_TANH_SMALL ? small : big);
  float r = vm_float(vm_bits(t) | (u & 0x80000000));
  return ua > VM_NAN_ABOVE ? x : r;
}

VM_INLINE float vm_sigmoidf(float x) {
  uint32_t u = vm_bits(x), ua = u & 0x7fffffff;
  float c = vm_float((ua < VM_SIGM_SAT ? ua : VM_SIGM_SAT) | (u & 0x80000000));
  float r = (float)(1 / (1 + vm_exp_d(-(double)c)));
  return ua > VM_NAN_ABOVE ? x : r;
}

#endif
