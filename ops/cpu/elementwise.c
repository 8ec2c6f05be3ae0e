/* Elementwise CPU kernels: binary ops with numpy broadcasting, unary math, Cast, AddN.
 *
 * Each op is a small loop per dtype. Binary loops come in three shapes (both vectors,
 * x scalar, y scalar) so that the common cases vectorize; general broadcasting walks the
 * output row by row, each row being one of those shapes. Large ranges go to the intra-op
 * pool in tiles of whole CHUNKs, each chunk one loop call, as on one thread. */
/* No trapping math: the results are the same IEEE ones, but GCC may then compute both arms
 * of a select and blend them, which vectorizes Tanh and Sigmoid (ops/cpu/vmath.h). No
 * contraction into FMAs either, so the AVX clones below round exactly as the baseline. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#else
#pragma GCC optimize("no-trapping-math", "fp-contract=off")
#endif
#include <math.h>
#include <string.h>

#include "ops/cpu/vmath.h"
#include "ops/ops_int.h"
#include "runtime/pool.h"

enum { VV, SV, VS };   /* x and y both vectors, x scalar, y scalar */
enum { PAR_MIN = 1 << 16, CHUNK = 1 << 14 };

typedef void (*bin_loop)(const void *x, const void *y, void *z, int64_t n, int mode);
typedef void (*un_loop)(const void *x, void *y, int64_t n);

#define BIN_LOOP(name, T, TO, expr)                                                      \
  OP_CLONES static void name(const void *xv, const void *yv, void *zv, int64_t n, int mode) { \
    const T *restrict x = xv, *restrict y = yv;                                           \
    TO *restrict z = zv;                                                                  \
    if (mode == VV) {                                                                     \
      _Pragma("omp simd") for (int64_t i = 0; i < n; i++) {                              \
        T a = x[i], b = y[i];                                                            \
        z[i] = (expr);                                                                    \
      }                                                                                   \
    } else if (mode == SV) {                                                              \
      T a = x[0];                                                                         \
      _Pragma("omp simd") for (int64_t i = 0; i < n; i++) {                              \
        T b = y[i];                                                                       \
        z[i] = (expr);                                                                    \
      }                                                                                   \
    } else {                                                                              \
      T b = y[0];                                                                         \
      _Pragma("omp simd") for (int64_t i = 0; i < n; i++) {                              \
        T a = x[i];                                                                       \
        z[i] = (expr);                                                                    \
      }                                                                                   \
    }                                                                                     \
  }

/* One op over the four numeric dtypes; `fexpr` for floats, `iexpr` for integers. */
#define BIN_OP(op, fexpr, iexpr)                      \
  BIN_LOOP(op##_f32, float, float, fexpr)             \
  BIN_LOOP(op##_f64, double, double, fexpr)           \
  BIN_LOOP(op##_i32, int32_t, int32_t, iexpr)         \
  BIN_LOOP(op##_i64, int64_t, int64_t, iexpr)
#define CMP_OP(op, expr)                              \
  BIN_LOOP(op##_f32, float, bool, expr)               \
  BIN_LOOP(op##_f64, double, bool, expr)              \
  BIN_LOOP(op##_i32, int32_t, bool, expr)             \
  BIN_LOOP(op##_i64, int64_t, bool, expr)

static inline int64_t ipow(int64_t a, int64_t b) {
  int64_t r = 1;
  for (; b > 0; b >>= 1, a *= a)
    if (b & 1) r *= a;
  return r;
}

BIN_OP(add, a + b, a + b)
BIN_OP(sub, a - b, a - b)
BIN_OP(mul, a * b, a * b)
BIN_OP(div, a / b, a / b)              /* integer zero divisors are checked first */
BIN_OP(max, a > b || a != a ? a : b, a > b ? a : b)
BIN_OP(min, a < b || a != a ? a : b, a < b ? a : b)
BIN_LOOP(pow_f32, float, float, powf(a, b))
BIN_LOOP(pow_f64, double, double, pow(a, b))
BIN_LOOP(div_no_nan_f32, float, float, b == 0 ? 0 : a / b)
BIN_LOOP(div_no_nan_f64, double, double, b == 0 ? 0 : a / b)
BIN_LOOP(atan2_f32, float, float, atan2f(a, b))
BIN_LOOP(atan2_f64, double, double, atan2(a, b))
BIN_LOOP(pow_i32, int32_t, int32_t, (int32_t)ipow(a, b))
BIN_LOOP(pow_i64, int64_t, int64_t, ipow(a, b))
CMP_OP(eq, a == b)
CMP_OP(gt, a > b)
BIN_OP(relu_grad, b > 0 ? a : 0, b > 0 ? a : 0)       /* (gradients, features) */
BIN_OP(sigmoid_grad, b * a * (1 - a), b * a * (1 - a)) /* (y, dy) */
BIN_OP(tanh_grad, b * (1 - a * a), b * (1 - a * a))   /* (y, dy) */
BIN_OP(relu6_grad, b > 0 && b < 6 ? a : 0, b > 0 && b < 6 ? a : 0)  /* (gradients, features) */
BIN_LOOP(elu_grad_f32, float, float, b > 0 ? a : a * (b + 1))       /* (gradients, outputs) */
BIN_LOOP(elu_grad_f64, double, double, b > 0 ? a : a * (b + 1))
BIN_LOOP(softplus_grad_f32, float, float, a / (1 + expf(-b)))       /* (gradients, features) */
BIN_LOOP(softplus_grad_f64, double, double, a / (1 + exp(-b)))
BIN_LOOP(rsqrt_grad_f32, float, float, -0.5f * b * a * a * a)       /* (y, dy) */
BIN_LOOP(rsqrt_grad_f64, double, double, -0.5 * b * a * a * a)
/* uint8 (images): wrapping arithmetic, min/max and comparisons */
BIN_LOOP(add_u8, uint8_t, uint8_t, (uint8_t)(a + b))
BIN_LOOP(sub_u8, uint8_t, uint8_t, (uint8_t)(a - b))
BIN_LOOP(mul_u8, uint8_t, uint8_t, (uint8_t)(a * b))
BIN_LOOP(max_u8, uint8_t, uint8_t, a > b ? a : b)
BIN_LOOP(min_u8, uint8_t, uint8_t, a < b ? a : b)
BIN_LOOP(eq_u8, uint8_t, bool, a == b)
BIN_LOOP(ne_u8, uint8_t, bool, a != b)
BIN_LOOP(lt_u8, uint8_t, bool, a < b)
BIN_LOOP(le_u8, uint8_t, bool, a <= b)
BIN_LOOP(gt_u8, uint8_t, bool, a > b)
BIN_LOOP(ge_u8, uint8_t, bool, a >= b)
/* int16, int8, uint16 (legacy models' small integers): wrapping arithmetic, min and max */
#define SMALL_INT_OPS(sfx, T)                                \
  BIN_LOOP(add_##sfx, T, T, (T)(a + b))                      \
  BIN_LOOP(sub_##sfx, T, T, (T)(a - b))                      \
  BIN_LOOP(mul_##sfx, T, T, (T)((uint32_t)a * (uint32_t)b))  \
  BIN_LOOP(max_##sfx, T, T, a > b ? a : b)                   \
  BIN_LOOP(min_##sfx, T, T, a < b ? a : b)
SMALL_INT_OPS(i16, int16_t)
SMALL_INT_OPS(i8, int8_t)
SMALL_INT_OPS(u16, uint16_t)
CMP_OP(ne, a != b)
CMP_OP(lt, a < b)
CMP_OP(le, a <= b)
CMP_OP(ge, a >= b)
BIN_LOOP(and_b, bool, bool, a && b)
BIN_LOOP(or_b, bool, bool, a || b)
BIN_LOOP(eq_b, bool, bool, a == b)
BIN_LOOP(ne_b, bool, bool, a != b)
/* Python's // and %: round toward -inf, the remainder takes the divisor's sign. */
static inline int64_t floordiv_i(int64_t a, int64_t b) {
  int64_t q = a / b;
  return q * b != a && (a < 0) != (b < 0) ? q - 1 : q;
}
static inline int64_t floormod_i(int64_t a, int64_t b) {
  int64_t r = a % b;
  return r && (r < 0) != (b < 0) ? r + b : r;
}
BIN_LOOP(floordiv_f32, float, float, floorf(a / b))
BIN_LOOP(floordiv_f64, double, double, floor(a / b))
BIN_LOOP(floordiv_i32, int32_t, int32_t, (int32_t)floordiv_i(a, b))
BIN_LOOP(floordiv_i64, int64_t, int64_t, floordiv_i(a, b))
BIN_LOOP(floormod_f32, float, float, a - floorf(a / b) * b)
BIN_LOOP(floormod_f64, double, double, a - floor(a / b) * b)
BIN_LOOP(floormod_i32, int32_t, int32_t, (int32_t)floormod_i(a, b))
BIN_LOOP(floormod_i64, int64_t, int64_t, floormod_i(a, b))

typedef struct binop {
  bin_loop f[9];      /* float, double, int32, int64, bool, uint8, int16, int8, uint16 */
  bool to_bool;
  bool int_divisor;   /* integer y must not be 0 */
  bool int_exponent;  /* integer y must not be negative */
} binop;

#define LOOPS(op) {op##_f32, op##_f64, op##_i32, op##_i64}
#define LOOPS_U8(op) {op##_f32, op##_f64, op##_i32, op##_i64, NULL, op##_u8}
#define LOOPS_SMALL(op) {op##_f32, op##_f64, op##_i32, op##_i64, NULL, op##_u8, op##_i16, op##_i8, op##_u16}

static int type_slot(rt_dtype t) {
  switch (t) {
  case RT_FLOAT: return 0;
  case RT_DOUBLE: return 1;
  case RT_INT32: return 2;
  case RT_INT64: return 3;
  case RT_BOOL: return 4;
  case RT_UINT8: return 5;
  case RT_INT16: return 6;
  case RT_INT8: return 7;
  case RT_UINT16: return 8;
  default: return -1;
  }
}

/* A binary (bf) or unary (uf) loop over n elements, CHUNK at a time. */
typedef struct split_job {
  bin_loop bf;
  un_loop uf;
  const char *x, *y;
  char *z;
  size_t sx, sy, sz;
  int64_t n;
  int mode;
} split_job;

static void split_chunks(void *arg, int64_t lo, int64_t hi, int who) {
  const split_job *j = arg;
  for (int64_t k = lo; k < hi; k++) {
    int64_t at = k * CHUNK, len = j->n - at < CHUNK ? j->n - at : CHUNK;
    if (j->uf) {
      j->uf(j->x + (size_t)at * j->sx, j->z + (size_t)at * j->sz, len);
      continue;
    }
    j->bf(j->x + (j->mode == SV ? 0 : (size_t)at * j->sx),
          j->y + (j->mode == VS ? 0 : (size_t)at * j->sy), j->z + (size_t)at * j->sz, len, j->mode);
  }
}

static void split(const split_job *j) {
  rt_parallel_range((j->n + CHUNK - 1) / CHUNK, 1, j->n >= PAR_MIN ? rt_intra_threads() : 1,
                    split_chunks, (void *)j);
}

static void run_split(bin_loop f, const char *x, size_t sx, const char *y, size_t sy, char *z,
                      size_t sz, int64_t n, int mode) {
  if (n < PAR_MIN) {
    f(x, y, z, n, mode);
    return;
  }
  split(&(split_job){.bf = f, .x = x, .y = y, .z = z, .sx = sx, .sy = sy, .sz = sz, .n = n,
                     .mode = mode});
}

static bool has_bad_ints(const rt_tensor *y, bool negative) {
  for (int64_t i = 0; i < rt_tensor_numel(y); i++) {
    int64_t v = rt_tensor_get_i64(y, i);
    if (negative ? v < 0 : v == 0) return true;
  }
  return false;
}

static int binary(rt_kernel_ctx *c, const binop *op) {
  const rt_tensor *x = c->inputs[0], *y = c->inputs[1];
  rt_shape s;
  int slot = type_slot(x->dtype);
  if (slot < 0 || !op->f[slot] || x->dtype != y->dtype)
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "no CPU kernel for %s and %s",
                           rt_dtype_name(x->dtype), rt_dtype_name(y->dtype));
  if (op_broadcast_shape(&x->shape, &y->shape, &s, NULL, NULL)) {
    char a[160], b[160];
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Incompatible shapes: %s vs. %s",
                           op_shape_tf(&x->shape, a, sizeof a), op_shape_tf(&y->shape, b, sizeof b));
  }
  if ((slot == 2 || slot == 3) && op->int_divisor && has_bad_ints(y, false))
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Integer division by zero");
  if ((slot == 2 || slot == 3) && op->int_exponent && has_bad_ints(y, true))
    return rt_kernel_error(c, RT_INVALID_ARGUMENT,
                           "Integers to negative integer powers are not allowed");
  rt_dtype zt = op->to_bool ? RT_BOOL : x->dtype;
  rt_tensor *z = rt_kernel_output_from(c, 0, 3, zt, &s);   /* over x or y (same index) */
  if (!z) return c->st->code;
  bin_loop f = op->f[slot];
  size_t es = rt_dtype_size(x->dtype), zs = rt_dtype_size(zt);
  const char *xd = rt_tensor_data(x), *yd = rt_tensor_data(y);
  char *zd = rt_tensor_data(z);
  int64_t n = rt_shape_numel(&s), nx = rt_tensor_numel(x), ny = rt_tensor_numel(y);
  if (n == 0) return RT_OK;
  if (nx == n && ny == n) return run_split(f, xd, es, yd, es, zd, zs, n, VV), RT_OK;
  if (nx == 1 && ny == n) return run_split(f, xd, es, yd, es, zd, zs, n, SV), RT_OK;
  if (ny == 1 && nx == n) return run_split(f, xd, es, yd, es, zd, zs, n, VS), RT_OK;

  /* General broadcasting: element strides of x and y over the output's dims (0 where
   * broadcast), then one loop call per output row. */
  int nd = s.ndims;
  int64_t sx[RT_MAX_DIMS], sy[RT_MAX_DIMS], idx[RT_MAX_DIMS] = {0};
  int64_t ax = 1, ay = 1;
  for (int d = nd - 1; d >= 0; d--) {
    int dx = d - (nd - x->shape.ndims), dy = d - (nd - y->shape.ndims);
    int64_t lx = dx >= 0 ? x->shape.dims[dx] : 1, ly = dy >= 0 ? y->shape.dims[dy] : 1;
    sx[d] = lx == 1 ? 0 : ax;
    sy[d] = ly == 1 ? 0 : ay;
    ax *= lx;
    ay *= ly;
  }
  int64_t row = s.dims[nd - 1], rows = n / row;
  for (int64_t r = 0; r < rows; r++) {
    int64_t ox = 0, oy = 0;
    for (int d = 0; d < nd - 1; d++) ox += idx[d] * sx[d], oy += idx[d] * sy[d];
    const char *xp = xd + (size_t)ox * es, *yp = yd + (size_t)oy * es;
    char *zp = zd + (size_t)(r * row) * zs;
    if (sx[nd - 1] && sy[nd - 1]) f(xp, yp, zp, row, VV);
    else if (sy[nd - 1]) f(xp, yp, zp, row, SV);
    else if (sx[nd - 1]) f(xp, yp, zp, row, VS);
    else
      for (int64_t i = 0; i < row; i++) f(xp, yp, zp + (size_t)i * zs, 1, VV);
    for (int d = nd - 2; d >= 0 && ++idx[d] == s.dims[d]; d--) idx[d] = 0;
  }
  return RT_OK;
}

#define BIN_KERNEL(fn, ...)                        \
  int fn(rt_kernel_ctx *c) {                       \
    static const binop op = {.f = __VA_ARGS__};       \
    return binary(c, &op);                         \
  }
BIN_KERNEL(op_cpu_add, LOOPS_SMALL(add))
BIN_KERNEL(op_cpu_sub, LOOPS_SMALL(sub))
BIN_KERNEL(op_cpu_mul, LOOPS_SMALL(mul))
BIN_KERNEL(op_cpu_div, LOOPS(div), .int_divisor = true)
BIN_KERNEL(op_cpu_maximum, LOOPS_SMALL(max))
BIN_KERNEL(op_cpu_minimum, LOOPS_SMALL(min))
BIN_KERNEL(op_cpu_pow, LOOPS(pow), .int_exponent = true)
BIN_KERNEL(op_cpu_atan2, {atan2_f32, atan2_f64})
BIN_KERNEL(op_cpu_div_no_nan, {div_no_nan_f32, div_no_nan_f64})
BIN_KERNEL(op_cpu_equal, {eq_f32, eq_f64, eq_i32, eq_i64, eq_b, eq_u8}, .to_bool = true)
BIN_KERNEL(op_cpu_not_equal, {ne_f32, ne_f64, ne_i32, ne_i64, ne_b, ne_u8}, .to_bool = true)
BIN_KERNEL(op_cpu_less, LOOPS_U8(lt), .to_bool = true)
BIN_KERNEL(op_cpu_less_equal, LOOPS_U8(le), .to_bool = true)
BIN_KERNEL(op_cpu_greater_equal, LOOPS_U8(ge), .to_bool = true)
BIN_KERNEL(op_cpu_logical_and, {[4] = and_b}, .to_bool = true)
BIN_KERNEL(op_cpu_logical_or, {[4] = or_b}, .to_bool = true)
BIN_KERNEL(op_cpu_floor_div, LOOPS(floordiv), .int_divisor = true)
BIN_KERNEL(op_cpu_floor_mod, LOOPS(floormod), .int_divisor = true)
BIN_KERNEL(op_cpu_relu6_grad, LOOPS(relu6_grad))
BIN_KERNEL(op_cpu_elu_grad, {elu_grad_f32, elu_grad_f64})
BIN_KERNEL(op_cpu_softplus_grad, {softplus_grad_f32, softplus_grad_f64})
BIN_KERNEL(op_cpu_rsqrt_grad, {rsqrt_grad_f32, rsqrt_grad_f64})
BIN_KERNEL(op_cpu_greater, LOOPS_U8(gt), .to_bool = true)
BIN_KERNEL(op_cpu_relu_grad, LOOPS(relu_grad))
BIN_KERNEL(op_cpu_sigmoid_grad, LOOPS(sigmoid_grad))
BIN_KERNEL(op_cpu_tanh_grad, LOOPS(tanh_grad))

/* ---- unary ------------------------------------------------------------------------ */

#define UN_LOOP(name, T, expr)                                     \
  OP_CLONES static void name(const void *xv, void *yv, int64_t n) { \
    const T *restrict x = xv;                                      \
    T *restrict y = yv;                                            \
    _Pragma("omp simd") for (int64_t i = 0; i < n; i++) {         \
      T a = x[i];                                                  \
      y[i] = (expr);                                               \
    }                                                              \
  }
#define UN_FLOAT(op, fexpr, dexpr) UN_LOOP(op##_f32, float, fexpr) UN_LOOP(op##_f64, double, dexpr)
#define UN_INT(op, expr) UN_LOOP(op##_i32, int32_t, expr) UN_LOOP(op##_i64, int64_t, expr)

UN_FLOAT(neg, -a, -a)
UN_INT(neg, -a)
UN_FLOAT(square, a * a, a * a)
UN_INT(square, a * a)
UN_FLOAT(sqrt, sqrtf(a), sqrt(a))
UN_FLOAT(exp, expf(a), exp(a))
UN_FLOAT(log, logf(a), log(a))
UN_FLOAT(relu, a > 0 ? a : 0, a > 0 ? a : 0)
UN_INT(relu, a > 0 ? a : 0)
/* Float Tanh and Sigmoid (ops/cpu/vmath.h) in double. */
#define VM_LOOP(name, expr)                                                               \
  OP_CLONES static void name(                                                             \
      const void *xv, void *yv, int64_t n) {                                              \
    const float *restrict x = xv;                                                         \
    float *restrict y = yv;                                                               \
    _Pragma("omp simd") for (int64_t i = 0; i < n; i++) {                                \
      float a = x[i];                                                                     \
      y[i] = (expr);                                                                      \
    }                                                                                     \
  }
VM_LOOP(sigmoid_f32, vm_sigmoidf(a))
UN_LOOP(sigmoid_f64, double, 1 / (1 + exp(-a)))
VM_LOOP(tanh_f32, vm_tanhf(a))
UN_LOOP(tanh_f64, double, tanh(a))
UN_FLOAT(abs, fabsf(a), fabs(a))
UN_INT(abs, a < 0 ? -a : a)
UN_FLOAT(rsqrt, 1 / sqrtf(a), 1 / sqrt(a))
UN_FLOAT(reciprocal, 1 / a, 1 / a)
UN_FLOAT(sign, (float)((a > 0) - (a < 0)), (double)((a > 0) - (a < 0)))
UN_INT(sign, (a > 0) - (a < 0))
UN_FLOAT(relu6, a > 0 ? (a < 6 ? a : 6) : 0, a > 0 ? (a < 6 ? a : 6) : 0)
UN_INT(relu6, a > 0 ? (a < 6 ? a : 6) : 0)
UN_FLOAT(elu, a > 0 ? a : expm1f(a), a > 0 ? a : expm1(a))
/* log(1 + e^a) without overflow */
UN_FLOAT(softplus, a > 0 ? a + log1pf(expf(-a)) : log1pf(expf(a)),
         a > 0 ? a + log1p(exp(-a)) : log1p(exp(a)))
UN_LOOP(not_b, bool, !a)
UN_FLOAT(floor, floorf(a), floor(a))
UN_FLOAT(round_even, rintf(a), rint(a))   /* half to even, as TF's Round */
UN_FLOAT(sin, sinf(a), sin(a))
UN_FLOAT(cos, cosf(a), cos(a))
UN_FLOAT(tan, tanf(a), tan(a))
UN_FLOAT(asin, asinf(a), asin(a))
UN_FLOAT(acos, acosf(a), acos(a))
UN_FLOAT(atan, atanf(a), atan(a))
UN_FLOAT(sinh, sinhf(a), sinh(a))
UN_FLOAT(cosh, coshf(a), cosh(a))
UN_FLOAT(expm1, expm1f(a), expm1(a))
UN_FLOAT(erf, erff(a), erf(a))
UN_FLOAT(erfc, erfcf(a), erfc(a))
UN_FLOAT(ceil, ceilf(a), ceil(a))
UN_FLOAT(log1p, log1pf(a), log1p(a))

static int unary(rt_kernel_ctx *c, const un_loop f[5]) {
  const rt_tensor *x = c->inputs[0];
  int slot = type_slot(x->dtype);
  if (slot < 0 || slot > 4 || !f[slot])   /* no unary loops for uint8 */
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "no CPU kernel for %s", rt_dtype_name(x->dtype));
  rt_tensor *y = rt_kernel_output_from(c, 0, 1, x->dtype, &x->shape);
  if (!y) return c->st->code;
  size_t es = rt_dtype_size(x->dtype);
  split(&(split_job){.uf = f[slot], .x = rt_tensor_data(x), .z = rt_tensor_data(y), .sx = es,
                     .sz = es, .n = rt_tensor_numel(x)});
  return RT_OK;
}

#define UN_KERNEL(fn, a, b, c_, d, ...)              \
  int fn(rt_kernel_ctx *c) {                         \
    static const un_loop f[5] = {a, b, c_, d, __VA_ARGS__}; \
    return unary(c, f);                              \
  }
UN_KERNEL(op_cpu_neg, neg_f32, neg_f64, neg_i32, neg_i64)
UN_KERNEL(op_cpu_square, square_f32, square_f64, square_i32, square_i64)
UN_KERNEL(op_cpu_sqrt, sqrt_f32, sqrt_f64, NULL, NULL)
UN_KERNEL(op_cpu_exp, exp_f32, exp_f64, NULL, NULL)
UN_KERNEL(op_cpu_log, log_f32, log_f64, NULL, NULL)
UN_KERNEL(op_cpu_relu, relu_f32, relu_f64, relu_i32, relu_i64)
UN_KERNEL(op_cpu_sigmoid, sigmoid_f32, sigmoid_f64, NULL, NULL)
UN_KERNEL(op_cpu_tanh, tanh_f32, tanh_f64, NULL, NULL)
UN_KERNEL(op_cpu_abs, abs_f32, abs_f64, abs_i32, abs_i64)
UN_KERNEL(op_cpu_rsqrt, rsqrt_f32, rsqrt_f64, NULL, NULL)
UN_KERNEL(op_cpu_reciprocal, reciprocal_f32, reciprocal_f64, NULL, NULL)
UN_KERNEL(op_cpu_sign, sign_f32, sign_f64, sign_i32, sign_i64)
UN_KERNEL(op_cpu_relu6, relu6_f32, relu6_f64, relu6_i32, relu6_i64)
UN_KERNEL(op_cpu_elu, elu_f32, elu_f64, NULL, NULL)
UN_KERNEL(op_cpu_softplus, softplus_f32, softplus_f64, NULL, NULL)
UN_KERNEL(op_cpu_logical_not, NULL, NULL, NULL, NULL, not_b)
UN_KERNEL(op_cpu_floor, floor_f32, floor_f64, NULL, NULL)
UN_KERNEL(op_cpu_round, round_even_f32, round_even_f64, NULL, NULL)
UN_KERNEL(op_cpu_sin, sin_f32, sin_f64, NULL, NULL)
UN_KERNEL(op_cpu_cos, cos_f32, cos_f64, NULL, NULL)
UN_KERNEL(op_cpu_tan, tan_f32, tan_f64, NULL, NULL)
UN_KERNEL(op_cpu_asin, asin_f32, asin_f64, NULL, NULL)
UN_KERNEL(op_cpu_acos, acos_f32, acos_f64, NULL, NULL)
UN_KERNEL(op_cpu_atan, atan_f32, atan_f64, NULL, NULL)
UN_KERNEL(op_cpu_sinh, sinh_f32, sinh_f64, NULL, NULL)
UN_KERNEL(op_cpu_cosh, cosh_f32, cosh_f64, NULL, NULL)
UN_KERNEL(op_cpu_expm1, expm1_f32, expm1_f64, NULL, NULL)
UN_KERNEL(op_cpu_erf, erf_f32, erf_f64, NULL, NULL)
UN_KERNEL(op_cpu_erfc, erfc_f32, erfc_f64, NULL, NULL)
UN_KERNEL(op_cpu_ceil, ceil_f32, ceil_f64, NULL, NULL)
UN_KERNEL(op_cpu_log1p, log1p_f32, log1p_f64, NULL, NULL)

/* ---- Cast ------------------------------------------------------------------------- */

#define CAST_FROM(TO, to)                                                       \
  switch (x->dtype) {                                                           \
  case RT_FLOAT: for (int64_t i = 0; i < n; i++) to[i] = (TO)((const float *)xd)[i]; break;   \
  case RT_DOUBLE: for (int64_t i = 0; i < n; i++) to[i] = (TO)((const double *)xd)[i]; break; \
  case RT_INT32: for (int64_t i = 0; i < n; i++) to[i] = (TO)((const int32_t *)xd)[i]; break; \
  case RT_INT64: for (int64_t i = 0; i < n; i++) to[i] = (TO)((const int64_t *)xd)[i]; break; \
  case RT_BOOL: /* read as bytes, which vectorizes */                                       \
    for (int64_t i = 0; i < n; i++) to[i] = (TO)(((const uint8_t *)xd)[i] != 0);            \
    break;                                                                                  \
  case RT_UINT8: for (int64_t i = 0; i < n; i++) to[i] = (TO)((const uint8_t *)xd)[i]; break; \
  default: return rt_kernel_error(c, RT_UNIMPLEMENTED, "Cast from %s is not supported",       \
                                  rt_dtype_name(x->dtype));                                   \
  }

/* A float's uint8 as TF's CPU kernel makes it: truncated to int32 (NaN and values out of
 * int32's range become INT32_MIN, as x86 does), then the low byte. */
static uint8_t u8_of(double v) {
  int32_t i = isnan(v) || v <= -2147483649.0 || v >= 2147483648.0 ? INT32_MIN : (int32_t)v;
  return (uint8_t)i;
}

static int cast_to_u8(rt_kernel_ctx *c, const rt_tensor *x, uint8_t *o, int64_t n) {
  const void *xd = rt_tensor_data(x);
  switch (x->dtype) {
  case RT_FLOAT: for (int64_t i = 0; i < n; i++) o[i] = u8_of(((const float *)xd)[i]); break;
  case RT_DOUBLE: for (int64_t i = 0; i < n; i++) o[i] = u8_of(((const double *)xd)[i]); break;
  case RT_INT32: for (int64_t i = 0; i < n; i++) o[i] = (uint8_t)((const int32_t *)xd)[i]; break;
  case RT_INT64: for (int64_t i = 0; i < n; i++) o[i] = (uint8_t)((const int64_t *)xd)[i]; break;
  case RT_BOOL: for (int64_t i = 0; i < n; i++) o[i] = ((const bool *)xd)[i]; break;
  case RT_UINT8: memcpy(o, xd, (size_t)n); break;
  default: return rt_kernel_error(c, RT_UNIMPLEMENTED, "Cast from %s is not supported", rt_dtype_name(x->dtype));
  }
  return RT_OK;
}

/* float16 <-> float32, IEEE binary16 bit by bit (round to nearest even, as Eigen::half). */
static float half_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff, u;
  if (e == 0x1f) u = sign | 0x7f800000u | (m << 13);                  /* inf, NaN */
  else if (e) u = sign | ((e + 112) << 23) | (m << 13);                 /* normal */
  else if (!m) u = sign;                                                /* zero */
  else {                                                                /* subnormal */
    int k = -1;
    do m <<= 1, k++; while (!(m & 0x400));
    u = sign | ((uint32_t)(112 - k) << 23) | ((m & 0x3ff) << 13);
  }
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static uint16_t f32_to_half(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return sign | 0x7e00 | (uint16_t)((a >> 13) & 0x3ff);   /* NaN stays NaN */
  if (a >= 0x477ff000u) return sign | 0x7c00;                     /* rounds past 65504: inf */
  if (a < 0x38800000u) {                                          /* subnormal or zero */
    if (a < 0x33000000u) return sign;                             /* below half the least */
    uint32_t m = (a & 0x7fffff) | 0x800000, shift = 126 - (a >> 23);   /* 14..24 */
    uint32_t r = m >> shift, rem = m & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (r & 1))) r++;
    return sign | (uint16_t)r;
  }
  uint32_t r = a - 0x38000000u;                                   /* rebias 127 -> 15 */
  uint32_t h = r >> 13, rem = r & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) h++;
  return sign | (uint16_t)h;
}

/* An integer of at most 32 bits from a float, as TF's CPU kernel makes it: truncated to
 * int32 (NaN and values out of int32's range become INT32_MIN, as x86 does), then the
 * low bits. */
static int32_t i32_of(double v) {
  return isnan(v) || v <= -2147483649.0 || v >= 2147483648.0 ? INT32_MIN : (int32_t)v;
}

static bool is_int_type(rt_dtype t) {
  return t == RT_INT8 || t == RT_INT16 || t == RT_INT32 || t == RT_INT64 || t == RT_UINT8 ||
         t == RT_UINT16 || t == RT_BOOL;
}

/* The slow, general Cast between any two of float32, float64, float16, complex64 and the
 * integer types (int8, int16, int32, int64, uint8, uint16, bool): each element through an
 * int64 (integer sources) or a double pair (float and complex sources; complex to real
 * keeps the real part, as tf.cast does). */
static int cast_general(rt_kernel_ctx *c, const rt_tensor *x, rt_dtype dst, void *yd, int64_t n) {
  const void *xd = rt_tensor_data(x);
  rt_dtype src = x->dtype;
  static const rt_dtype known[] = {RT_FLOAT, RT_DOUBLE, RT_HALF, RT_COMPLEX64, RT_INT8, RT_INT16,
                                   RT_INT32, RT_INT64, RT_UINT8, RT_UINT16, RT_BOOL};
  bool src_ok = false, dst_ok = false;
  for (size_t k = 0; k < sizeof known / sizeof *known; k++) src_ok |= known[k] == src, dst_ok |= known[k] == dst;
  if (!src_ok) return rt_kernel_error(c, RT_UNIMPLEMENTED, "Cast from %s is not supported", rt_dtype_name(src));
  if (!dst_ok) return rt_kernel_error(c, RT_UNIMPLEMENTED, "Cast to %s is not supported", rt_dtype_name(dst));
  bool from_int = is_int_type(src);
  for (int64_t i = 0; i < n; i++) {
    int64_t iv = 0;
    double re = 0, im = 0;
    switch (src) {
    case RT_INT8: iv = ((const int8_t *)xd)[i]; break;
    case RT_INT16: iv = ((const int16_t *)xd)[i]; break;
    case RT_INT32: iv = ((const int32_t *)xd)[i]; break;
    case RT_INT64: iv = ((const int64_t *)xd)[i]; break;
    case RT_UINT8: iv = ((const uint8_t *)xd)[i]; break;
    case RT_UINT16: iv = ((const uint16_t *)xd)[i]; break;
    case RT_BOOL: iv = ((const bool *)xd)[i]; break;
    case RT_FLOAT: re = ((const float *)xd)[i]; break;
    case RT_DOUBLE: re = ((const double *)xd)[i]; break;
    case RT_HALF: re = half_to_f32(((const uint16_t *)xd)[i]); break;
    default: re = ((const float *)xd)[2 * i], im = ((const float *)xd)[2 * i + 1]; break;   /* complex64 */
    }
    if (from_int) re = (double)iv;
    int64_t ov = from_int ? iv : dst == RT_INT64 ? (isnan(re) || fabs(re) >= 9.2233720368547758e18 ? INT64_MIN : (int64_t)re)
                                                 : i32_of(re);
    switch (dst) {
    case RT_INT8: ((int8_t *)yd)[i] = (int8_t)ov; break;
    case RT_INT16: ((int16_t *)yd)[i] = (int16_t)ov; break;
    case RT_INT32: ((int32_t *)yd)[i] = (int32_t)ov; break;
    case RT_INT64: ((int64_t *)yd)[i] = ov; break;
    case RT_UINT8: ((uint8_t *)yd)[i] = (uint8_t)ov; break;
    case RT_UINT16: ((uint16_t *)yd)[i] = (uint16_t)ov; break;
    case RT_BOOL: ((bool *)yd)[i] = from_int ? iv != 0 : (re != 0 || im != 0); break;
    case RT_FLOAT: ((float *)yd)[i] = from_int ? (float)iv : (float)re; break;
    case RT_DOUBLE: ((double *)yd)[i] = re; break;
    case RT_HALF: ((uint16_t *)yd)[i] = f32_to_half(from_int ? (float)iv : (float)re); break;
    default: ((float *)yd)[2 * i] = from_int ? (float)iv : (float)re, ((float *)yd)[2 * i + 1] = (float)im; break;
    }
  }
  return RT_OK;
}

static bool cast_fast_type(rt_dtype t) {
  return t == RT_FLOAT || t == RT_DOUBLE || t == RT_INT32 || t == RT_INT64 || t == RT_BOOL || t == RT_UINT8;
}

int op_cpu_cast(rt_kernel_ctx *c) {
  const rt_tensor *x = c->inputs[0];
  rt_dtype dst = rt_node_type(c->node, "DstT", x->dtype);
  rt_tensor *y = rt_kernel_output(c, 0, dst, &x->shape);
  if (!y) return c->st->code;
  int64_t n = rt_tensor_numel(x);
  const void *xd = rt_tensor_data(x);
  void *yd = rt_tensor_data(y);
  if (!cast_fast_type(x->dtype) || !cast_fast_type(dst)) {
    if (x->dtype == dst) return memcpy(yd, xd, (size_t)n * rt_dtype_size(dst)), RT_OK;
    return cast_general(c, x, dst, yd, n);
  }
  switch (dst) {
  case RT_FLOAT: { float *o = yd; CAST_FROM(float, o) break; }
  case RT_DOUBLE: { double *o = yd; CAST_FROM(double, o) break; }
  case RT_INT32: { int32_t *o = yd; CAST_FROM(int32_t, o) break; }
  case RT_INT64: { int64_t *o = yd; CAST_FROM(int64_t, o) break; }
  case RT_BOOL: { bool *o = yd; CAST_FROM(bool, o) break; }
  case RT_UINT8: return cast_to_u8(c, x, yd, n);
  default:
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "Cast to %s is not supported", rt_dtype_name(dst));
  }
  return RT_OK;
}

/* ---- AddN ------------------------------------------------------------------------- */

int op_cpu_addn(rt_kernel_ctx *c) {
  const rt_tensor *x0 = c->inputs[0];
  int slot = type_slot(x0->dtype);
  if (slot < 0 || slot == 4 || slot > 5) return rt_kernel_error(c, RT_UNIMPLEMENTED, "no CPU kernel for %s",
                                       rt_dtype_name(x0->dtype));
  for (int i = 1; i < c->n_inputs; i++)
    if (!rt_shape_equal(&c->inputs[i]->shape, &x0->shape)) {
      char a[160], b[160];
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Incompatible shapes: %s vs. %s",
                             op_shape_tf(&x0->shape, a, sizeof a),
                             op_shape_tf(&c->inputs[i]->shape, b, sizeof b));
    }
  /* over input 0 or 1 only: the first add reads both, later ones read inputs 2.. still */
  rt_tensor *z = rt_kernel_output_from(c, 0, 3, x0->dtype, &x0->shape);
  if (!z) return c->st->code;
  static const bin_loop adds[6] = LOOPS_U8(add);
  size_t es = rt_dtype_size(x0->dtype);
  int64_t n = rt_tensor_numel(x0);
  if (c->n_inputs == 1) {
    if (z != x0) memcpy(rt_tensor_data(z), rt_tensor_data(x0), (size_t)n * es);
    return RT_OK;
  }
  run_split(adds[slot], rt_tensor_data(x0), es, rt_tensor_data(c->inputs[1]), es,
            rt_tensor_data(z), es, n, VV);
  for (int i = 2; i < c->n_inputs; i++)
    run_split(adds[slot], rt_tensor_data(z), es, rt_tensor_data(c->inputs[i]), es,
              rt_tensor_data(z), es, n, VV);
  return RT_OK;
}
