/* rt_tensor_format / rt_tensor_repr against numpy. Every expected string below was printed
 * by numpy 1.26 (str(a) and repr(a); for 0-d arrays str(a[()]), which is what print()
 * shows for the scalar sess.run returns). Regenerate rather than edit by hand. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runtime/tensor.h"

enum { GEN_NONE, GEN_ARANGE, GEN_ARANGE_M30 };

typedef struct fmt_case {
  const char *name;
  rt_dtype dtype;
  int ndims;
  int64_t dims[RT_MAX_DIMS];
  int gen;                       /* values made by a rule instead of listed */
  const double *values;          /* numeric and bool elements */
  const char *const *strs;       /* string elements, with their lengths */
  const int *lens;
  const char *str, *repr;
} fmt_case;

static const fmt_case cases[] = {
  {"matmul result", RT_FLOAT, 2, {2, 2}, GEN_NONE, (const double[]){0x1.c000000000000p+2, 0x1.4000000000000p+3, 0x1.e000000000000p+3, 0x1.6000000000000p+4}, NULL, NULL,
   "[[ 7. 10.]\n"
      " [15. 22.]]",
   "array([[ 7., 10.],\n"
      "       [15., 22.]], dtype=float32)"},
  {"float32 scalar", RT_FLOAT, 0, {0}, GEN_NONE, (const double[]){0x1.c000000000000p+2}, NULL, NULL,
   "7.0",
   "array(7., dtype=float32)"},
  {"float32 scalar 0.1", RT_FLOAT, 0, {0}, GEN_NONE, (const double[]){0x1.99999a0000000p-4}, NULL, NULL,
   "0.1",
   "array(0.1, dtype=float32)"},
  {"float32 scalar tiny", RT_FLOAT, 0, {0}, GEN_NONE, (const double[]){0x1.4f8b580000000p-17}, NULL, NULL,
   "1e-05",
   "array(1.e-05, dtype=float32)"},
  {"float32 scalar 1e-4 rounds below", RT_FLOAT, 0, {0}, GEN_NONE, (const double[]){0x1.a36e2e0000000p-14}, NULL, NULL,
   "1e-04",
   "array(1.e-04, dtype=float32)"},
  {"float64 scalar 1e-4", RT_DOUBLE, 0, {0}, GEN_NONE, (const double[]){0x1.a36e2eb1c432dp-14}, NULL, NULL,
   "0.0001",
   "array(0.0001)"},
  {"float64 scalar large", RT_DOUBLE, 0, {0}, GEN_NONE, (const double[]){0x1.1c37937e08000p+53}, NULL, NULL,
   "1e+16",
   "array(1.e+16)"},
  {"float32 scalar 1e6", RT_FLOAT, 0, {0}, GEN_NONE, (const double[]){0x1.e848000000000p+19}, NULL, NULL,
   "1000000.0",
   "array(1000000., dtype=float32)"},
  {"float64 scalar third", RT_DOUBLE, 0, {0}, GEN_NONE, (const double[]){0x1.5555555555555p-2}, NULL, NULL,
   "0.3333333333333333",
   "array(0.33333333)"},
  {"negative zero scalar", RT_FLOAT, 0, {0}, GEN_NONE, (const double[]){-0x0.0p+0}, NULL, NULL,
   "-0.0",
   "array(-0., dtype=float32)"},
  {"nan scalar", RT_DOUBLE, 0, {0}, GEN_NONE, (const double[]){NAN}, NULL, NULL,
   "nan",
   "array(nan)"},
  {"-inf scalar", RT_FLOAT, 0, {0}, GEN_NONE, (const double[]){-INFINITY}, NULL, NULL,
   "-inf",
   "array(-inf, dtype=float32)"},
  {"trailing dot pad", RT_FLOAT, 1, {2}, GEN_NONE, (const double[]){0x1.8000000000000p+0, 0x1.0000000000000p+1}, NULL, NULL,
   "[1.5 2. ]",
   "array([1.5, 2. ], dtype=float32)"},
  {"zeros signed", RT_DOUBLE, 1, {2}, GEN_NONE, (const double[]){0x0.0p+0, -0x0.0p+0}, NULL, NULL,
   "[ 0. -0.]",
   "array([ 0., -0.])"},
  {"nan inf", RT_FLOAT, 1, {2}, GEN_NONE, (const double[]){NAN, INFINITY}, NULL, NULL,
   "[nan inf]",
   "array([nan, inf], dtype=float32)"},
  {"nan -inf finite", RT_DOUBLE, 1, {3}, GEN_NONE, (const double[]){NAN, -INFINITY, 0x1.8000000000000p+0}, NULL, NULL,
   "[ nan -inf  1.5]",
   "array([ nan, -inf,  1.5])"},
  {"exp by min", RT_FLOAT, 1, {2}, GEN_NONE, (const double[]){0x1.4f8b580000000p-17, 0x1.0000000000000p+0}, NULL, NULL,
   "[1.e-05 1.e+00]",
   "array([1.e-05, 1.e+00], dtype=float32)"},
  {"exp by max", RT_DOUBLE, 1, {2}, GEN_NONE, (const double[]){0x1.7d78400000000p+26, 0x1.0000000000000p+0}, NULL, NULL,
   "[1.e+08 1.e+00]",
   "array([1.e+08, 1.e+00])"},
  {"exp by ratio", RT_DOUBLE, 1, {2}, GEN_NONE, (const double[]){0x1.0000000000000p+0, 0x1.f480000000000p+9}, NULL, NULL,
   "[1.000e+00 1.001e+03]",
   "array([1.000e+00, 1.001e+03])"},
  {"no exp at ratio 1000", RT_DOUBLE, 1, {2}, GEN_NONE, (const double[]){0x1.0000000000000p+0, 0x1.f400000000000p+9}, NULL, NULL,
   "[   1. 1000.]",
   "array([   1., 1000.])"},
  {"exp mixed digits", RT_FLOAT, 1, {3}, GEN_NONE, (const double[]){0x1.4f8b580000000p-17, 0x1.bf08ec0000000p+33, -0x1.2000000000000p+1}, NULL, NULL,
   "[ 1.00e-05  1.50e+10 -2.25e+00]",
   "array([ 1.00e-05,  1.50e+10, -2.25e+00], dtype=float32)"},
  {"exp 3-digit exponent", RT_DOUBLE, 1, {2}, GEN_NONE, (const double[]){0x1.bff2ee48e0530p-333, 0x1.249ad2594c37dp+332}, NULL, NULL,
   "[1.e-100 1.e+100]",
   "array([1.e-100, 1.e+100])"},
  {"exp exact digits f32", RT_FLOAT, 1, {3}, GEN_NONE, (const double[]){0x1.99999a0000000p-4, 0x1.4f8b580000000p-17, 0x1.f7ceda0000000p-4}, NULL, NULL,
   "[1.00e-01 1.00e-05 1.23e-01]",
   "array([1.00e-01, 1.00e-05, 1.23e-01], dtype=float32)"},
  {"precision 8 float64", RT_DOUBLE, 1, {2}, GEN_NONE, (const double[]){0x1.0624dd2f1a9fcp-10, 0x1.f9add37469512p-4}, NULL, NULL,
   "[0.001      0.12345679]",
   "array([0.001     , 0.12345679])"},
  {"shortest float32", RT_FLOAT, 1, {3}, GEN_NONE, (const double[]){0x1.5555560000000p-2, 0x1.5555560000000p-1, 0x1.99999a0000000p-4}, NULL, NULL,
   "[0.33333334 0.6666667  0.1       ]",
   "array([0.33333334, 0.6666667 , 0.1       ], dtype=float32)"},
  {"exact int part f32", RT_FLOAT, 1, {2}, GEN_NONE, (const double[]){0x1.2cbdc00000000p+25, 0x1.0000000000000p+0}, NULL, NULL,
   "[3.941875e+07 1.000000e+00]",
   "array([3.941875e+07, 1.000000e+00], dtype=float32)"},
  {"rounding carry", RT_DOUBLE, 1, {2}, GEN_NONE, (const double[]){0x1.fffffff768fa1p-1, 0x1.0000000000000p-1}, NULL, NULL,
   "[1.  0.5]",
   "array([1. , 0.5])"},
  {"3d", RT_FLOAT, 3, {2, 3, 4}, GEN_NONE, (const double[]){-0x1.8000000000000p+1, -0x1.6000000000000p+1, -0x1.4000000000000p+1, -0x1.2000000000000p+1, -0x1.0000000000000p+1, -0x1.c000000000000p+0, -0x1.8000000000000p+0, -0x1.4000000000000p+0, -0x1.0000000000000p+0, -0x1.8000000000000p-1, -0x1.0000000000000p-1, -0x1.0000000000000p-2, 0x0.0p+0, 0x1.0000000000000p-2, 0x1.0000000000000p-1, 0x1.8000000000000p-1, 0x1.0000000000000p+0, 0x1.4000000000000p+0, 0x1.8000000000000p+0, 0x1.c000000000000p+0, 0x1.0000000000000p+1, 0x1.2000000000000p+1, 0x1.4000000000000p+1, 0x1.6000000000000p+1}, NULL, NULL,
   "[[[-3.   -2.75 -2.5  -2.25]\n"
      "  [-2.   -1.75 -1.5  -1.25]\n"
      "  [-1.   -0.75 -0.5  -0.25]]\n"
      "\n"
      " [[ 0.    0.25  0.5   0.75]\n"
      "  [ 1.    1.25  1.5   1.75]\n"
      "  [ 2.    2.25  2.5   2.75]]]",
   "array([[[-3.  , -2.75, -2.5 , -2.25],\n"
      "        [-2.  , -1.75, -1.5 , -1.25],\n"
      "        [-1.  , -0.75, -0.5 , -0.25]],\n"
      "\n"
      "       [[ 0.  ,  0.25,  0.5 ,  0.75],\n"
      "        [ 1.  ,  1.25,  1.5 ,  1.75],\n"
      "        [ 2.  ,  2.25,  2.5 ,  2.75]]], dtype=float32)"},
  {"wrap 1d", RT_DOUBLE, 1, {12}, GEN_NONE, (const double[]){0x0.0p+0, 0x1.745d1745d1746p-4, 0x1.745d1745d1746p-3, 0x1.1745d1745d174p-2, 0x1.745d1745d1746p-2, 0x1.d1745d1745d18p-2, 0x1.1745d1745d174p-1, 0x1.45d1745d1745dp-1, 0x1.745d1745d1746p-1, 0x1.a2e8ba2e8ba2fp-1, 0x1.d1745d1745d18p-1, 0x1.0000000000000p+0}, NULL, NULL,
   "[0.         0.09090909 0.18181818 0.27272727 0.36363636 0.45454545\n"
      " 0.54545455 0.63636364 0.72727273 0.81818182 0.90909091 1.        ]",
   "array([0.        , 0.09090909, 0.18181818, 0.27272727, 0.36363636,\n"
      "       0.45454545, 0.54545455, 0.63636364, 0.72727273, 0.81818182,\n"
      "       0.90909091, 1.        ])"},
  {"wrap 2d", RT_FLOAT, 2, {2, 12}, GEN_NONE, (const double[]){0x0.0p+0, 0x1.642c860000000p-5, 0x1.642c860000000p-4, 0x1.0b21640000000p-3, 0x1.642c860000000p-3, 0x1.bd37a60000000p-3, 0x1.0b21640000000p-2, 0x1.37a6f40000000p-2, 0x1.642c860000000p-2, 0x1.90b2160000000p-2, 0x1.bd37a60000000p-2, 0x1.e9bd380000000p-2, 0x1.0b21640000000p-1, 0x1.21642c0000000p-1, 0x1.37a6f40000000p-1, 0x1.4de9be0000000p-1, 0x1.642c860000000p-1, 0x1.7a6f4e0000000p-1, 0x1.90b2160000000p-1, 0x1.a6f4de0000000p-1, 0x1.bd37a60000000p-1, 0x1.d37a700000000p-1, 0x1.e9bd380000000p-1, 0x1.0000000000000p+0}, NULL, NULL,
   "[[0.         0.04347826 0.08695652 0.13043478 0.17391305 0.2173913\n"
      "  0.26086956 0.3043478  0.3478261  0.39130434 0.4347826  0.47826087]\n"
      " [0.5217391  0.5652174  0.6086956  0.65217394 0.6956522  0.73913044\n"
      "  0.7826087  0.82608694 0.8695652  0.9130435  0.95652175 1.        ]]",
   "array([[0.        , 0.04347826, 0.08695652, 0.13043478, 0.17391305,\n"
      "        0.2173913 , 0.26086956, 0.3043478 , 0.3478261 , 0.39130434,\n"
      "        0.4347826 , 0.47826087],\n"
      "       [0.5217391 , 0.5652174 , 0.6086956 , 0.65217394, 0.6956522 ,\n"
      "        0.73913044, 0.7826087 , 0.82608694, 0.8695652 , 0.9130435 ,\n"
      "        0.95652175, 1.        ]], dtype=float32)"},
  {"summarize 1d", RT_DOUBLE, 1, {1001}, GEN_ARANGE, NULL, NULL, NULL,
   "[   0.    1.    2. ...  998.  999. 1000.]",
   "array([   0.,    1.,    2., ...,  998.,  999., 1000.])"},
  {"summarize 2d", RT_FLOAT, 2, {40, 50}, GEN_ARANGE, NULL, NULL, NULL,
   "[[0.000e+00 1.000e+00 2.000e+00 ... 4.700e+01 4.800e+01 4.900e+01]\n"
      " [5.000e+01 5.100e+01 5.200e+01 ... 9.700e+01 9.800e+01 9.900e+01]\n"
      " [1.000e+02 1.010e+02 1.020e+02 ... 1.470e+02 1.480e+02 1.490e+02]\n"
      " ...\n"
      " [1.850e+03 1.851e+03 1.852e+03 ... 1.897e+03 1.898e+03 1.899e+03]\n"
      " [1.900e+03 1.901e+03 1.902e+03 ... 1.947e+03 1.948e+03 1.949e+03]\n"
      " [1.950e+03 1.951e+03 1.952e+03 ... 1.997e+03 1.998e+03 1.999e+03]]",
   "array([[0.000e+00, 1.000e+00, 2.000e+00, ..., 4.700e+01, 4.800e+01,\n"
      "        4.900e+01],\n"
      "       [5.000e+01, 5.100e+01, 5.200e+01, ..., 9.700e+01, 9.800e+01,\n"
      "        9.900e+01],\n"
      "       [1.000e+02, 1.010e+02, 1.020e+02, ..., 1.470e+02, 1.480e+02,\n"
      "        1.490e+02],\n"
      "       ...,\n"
      "       [1.850e+03, 1.851e+03, 1.852e+03, ..., 1.897e+03, 1.898e+03,\n"
      "        1.899e+03],\n"
      "       [1.900e+03, 1.901e+03, 1.902e+03, ..., 1.947e+03, 1.948e+03,\n"
      "        1.949e+03],\n"
      "       [1.950e+03, 1.951e+03, 1.952e+03, ..., 1.997e+03, 1.998e+03,\n"
      "        1.999e+03]], dtype=float32)"},
  {"empty 1d", RT_FLOAT, 1, {0}, GEN_NONE, NULL, NULL, NULL,
   "[]",
   "array([], dtype=float32)"},
  {"empty 2d", RT_DOUBLE, 2, {0, 3}, GEN_NONE, NULL, NULL, NULL,
   "[]",
   "array([], shape=(0, 3), dtype=float64)"},
  {"int32", RT_INT32, 1, {3}, GEN_NONE, (const double[]){1.0, -20.0, 300.0}, NULL, NULL,
   "[  1 -20 300]",
   "array([  1, -20, 300], dtype=int32)"},
  {"int64 2d", RT_INT64, 2, {2, 2}, GEN_NONE, (const double[]){1.0, -20.0, 300.0, 4.0}, NULL, NULL,
   "[[  1 -20]\n"
      " [300   4]]",
   "array([[  1, -20],\n"
      "       [300,   4]])"},
  {"int64 scalar", RT_INT64, 0, {0}, GEN_NONE, (const double[]){-7.0}, NULL, NULL,
   "-7",
   "array(-7)"},
  {"int32 extremes", RT_INT32, 1, {2}, GEN_NONE, (const double[]){2147483647.0, -2147483648.0}, NULL, NULL,
   "[ 2147483647 -2147483648]",
   "array([ 2147483647, -2147483648], dtype=int32)"},
  {"int wrap", RT_INT64, 1, {60}, GEN_NONE, (const double[]){-30.0, -29.0, -28.0, -27.0, -26.0, -25.0, -24.0, -23.0, -22.0, -21.0, -20.0, -19.0, -18.0, -17.0, -16.0, -15.0, -14.0, -13.0, -12.0, -11.0, -10.0, -9.0, -8.0, -7.0, -6.0, -5.0, -4.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0}, NULL, NULL,
   "[-30 -29 -28 -27 -26 -25 -24 -23 -22 -21 -20 -19 -18 -17 -16 -15 -14 -13\n"
      " -12 -11 -10  -9  -8  -7  -6  -5  -4  -3  -2  -1   0   1   2   3   4   5\n"
      "   6   7   8   9  10  11  12  13  14  15  16  17  18  19  20  21  22  23\n"
      "  24  25  26  27  28  29]",
   "array([-30, -29, -28, -27, -26, -25, -24, -23, -22, -21, -20, -19, -18,\n"
      "       -17, -16, -15, -14, -13, -12, -11, -10,  -9,  -8,  -7,  -6,  -5,\n"
      "        -4,  -3,  -2,  -1,   0,   1,   2,   3,   4,   5,   6,   7,   8,\n"
      "         9,  10,  11,  12,  13,  14,  15,  16,  17,  18,  19,  20,  21,\n"
      "        22,  23,  24,  25,  26,  27,  28,  29])"},
  {"int32 dtype wrap", RT_INT32, 1, {7}, GEN_NONE, (const double[]){-40073.0, -22014.0, -69892.0, -5079.0, -22327.0, -63530.0, -82780.0}, NULL, NULL,
   "[-40073 -22014 -69892  -5079 -22327 -63530 -82780]",
   "array([-40073, -22014, -69892,  -5079, -22327, -63530, -82780],\n"
      "      dtype=int32)"},
  {"int summarize", RT_INT32, 2, {10, 500}, GEN_ARANGE, NULL, NULL, NULL,
   "[[   0    1    2 ...  497  498  499]\n"
      " [ 500  501  502 ...  997  998  999]\n"
      " [1000 1001 1002 ... 1497 1498 1499]\n"
      " ...\n"
      " [3500 3501 3502 ... 3997 3998 3999]\n"
      " [4000 4001 4002 ... 4497 4498 4499]\n"
      " [4500 4501 4502 ... 4997 4998 4999]]",
   "array([[   0,    1,    2, ...,  497,  498,  499],\n"
      "       [ 500,  501,  502, ...,  997,  998,  999],\n"
      "       [1000, 1001, 1002, ..., 1497, 1498, 1499],\n"
      "       ...,\n"
      "       [3500, 3501, 3502, ..., 3997, 3998, 3999],\n"
      "       [4000, 4001, 4002, ..., 4497, 4498, 4499],\n"
      "       [4500, 4501, 4502, ..., 4997, 4998, 4999]], dtype=int32)"},
  {"bool", RT_BOOL, 1, {2}, GEN_NONE, (const double[]){1.0, 0.0}, NULL, NULL,
   "[ True False]",
   "array([ True, False])"},
  {"bool all true", RT_BOOL, 2, {1, 2}, GEN_NONE, (const double[]){1.0, 1.0}, NULL, NULL,
   "[[ True  True]]",
   "array([[ True,  True]])"},
  {"bool scalar", RT_BOOL, 0, {0}, GEN_NONE, (const double[]){1.0}, NULL, NULL,
   "True",
   "array(True)"},
  {"strings", RT_STRING, 1, {4}, GEN_NONE, NULL, (const char *const[]){"a", "it's", "\x00""\n"
      "\\", "\xff"""}, (const int[]){1, 4, 3, 1},
   "[b'a' b\"it's\" b'\\x00\\n\\\\' b'\\xff']",
   "array([b'a', b\"it's\", b'\\x00\\n\\\\', b'\\xff'], dtype=object)"},
  {"string scalar", RT_STRING, 0, {0}, GEN_NONE, NULL, (const char *const[]){"hello"}, (const int[]){5},
   "b'hello'",
   "array(b'hello', dtype=object)"},
};

static rt_tensor *make(const fmt_case *c) {
  rt_shape s = rt_shape_make(c->ndims, c->dims);
  rt_tensor *t = rt_tensor_new(c->dtype, &s);
  assert_non_null(t);
  void *d = rt_tensor_data(t);
  for (int64_t i = 0; i < rt_tensor_numel(t); i++) {
    double v = c->gen == GEN_ARANGE ? (double)i
             : c->gen == GEN_ARANGE_M30 ? (double)(i - 30)
             : c->values ? c->values[i] : 0;
    switch (c->dtype) {
    case RT_FLOAT: ((float *)d)[i] = (float)v; break;
    case RT_DOUBLE: ((double *)d)[i] = v; break;
    case RT_INT32: ((int32_t *)d)[i] = (int32_t)v; break;
    case RT_INT64: ((int64_t *)d)[i] = (int64_t)v; break;
    case RT_BOOL: ((bool *)d)[i] = v != 0; break;
    case RT_STRING: assert_int_equal(rt_tensor_set_str(t, i, c->strs[i], (size_t)c->lens[i]), 0); break;
    default: fail();
    }
  }
  return t;
}

static void check(const char *name, const char *got, const char *want) {
  if (strcmp(got, want))
    print_error("case '%s':\n got: %s\nwant: %s\n", name, got, want);
  assert_string_equal(got, want);
}

static void test_cases(void **state) {
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    rt_tensor *t = make(&cases[i]);
    char *s = rt_tensor_format(t), *r = rt_tensor_repr(t);
    check(cases[i].name, s, cases[i].str);
    check(cases[i].name, r, cases[i].repr);
    free(s);
    free(r);
    rt_tensor_unref(t);
  }
}

/* The spine's first result, spelled out. */
static void test_matmul_example(void **state) {
  int64_t dims[] = {2, 2};
  rt_shape s = rt_shape_make(2, dims);
  rt_tensor *t = rt_tensor_new(RT_FLOAT, &s);
  float v[] = {7, 10, 15, 22};
  memcpy(rt_tensor_data(t), v, sizeof v);
  char *out = rt_tensor_format(t);
  assert_string_equal(out, "[[ 7. 10.]\n [15. 22.]]");
  free(out);
  rt_tensor_unref(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_matmul_example),
    cmocka_unit_test(test_cases),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
