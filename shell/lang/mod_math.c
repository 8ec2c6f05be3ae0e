/* The math module. */
#define _GNU_SOURCE
#include <math.h>

#include "shell/lang/interp.h"


static int one_double(const char *name, int argc, sh_obj **argv, double *x) {
  if (argc != 1) { sh_raise(sh_TypeError, "math.%s() takes exactly one argument (%d given)", name, argc); return -1; }
  return sh_as_double(argv[0], x);
}

static sh_obj *checked(double r) {
  if (isnan(r)) return sh_raise(sh_ValueError, "math domain error");
  if (isinf(r)) return sh_raise(sh_OverflowError, "math range error");
  return sh_float(r);
}

#define F1(name, expr, domain) \
  static sh_obj *m_##name(ARGS) { \
    double x; \
    if (one_double(#name, argc, argv, &x) < 0) return NULL; \
    if (!(domain)) return sh_raise(sh_ValueError, "math domain error"); \
    return checked(expr); \
  }
F1(sqrt, sqrt(x), x >= 0)
F1(exp, exp(x), 1)
F1(log10, log10(x), x > 0)
F1(log2, log2(x), x > 0)
F1(sin, sin(x), !isinf(x))
F1(cos, cos(x), !isinf(x))
F1(tan, tan(x), !isinf(x))
F1(asin, asin(x), x >= -1 && x <= 1)
F1(acos, acos(x), x >= -1 && x <= 1)
F1(atan, atan(x), 1)
F1(sinh, sinh(x), 1)
F1(cosh, cosh(x), 1)
F1(tanh, tanh(x), 1)
F1(fabs, fabs(x), 1)
F1(degrees, x * 180.0 / M_PI, 1)
F1(radians, x * M_PI / 180.0, 1)
F1(erf, erf(x), 1)
F1(log1p, log1p(x), x > -1)
F1(expm1, expm1(x), 1)

static sh_obj *m_log(ARGS) {
  if (argc < 1 || argc > 2) return sh_raise(sh_TypeError, "log expected 1 or 2 arguments, got %d", argc);
  double x, b = M_E;
  if (sh_as_double(argv[0], &x) < 0 || (argc == 2 && sh_as_double(argv[1], &b) < 0)) return NULL;
  if (x <= 0 || b <= 0 || b == 1) return sh_raise(sh_ValueError, "math domain error");
  return sh_float(argc == 2 ? log(x) / log(b) : log(x));
}
static sh_obj *m_pow(ARGS) {
  double x, y;
  if (argc != 2) return sh_raise(sh_TypeError, "pow expected 2 arguments, got %d", argc);
  if (sh_as_double(argv[0], &x) < 0 || sh_as_double(argv[1], &y) < 0) return NULL;
  return checked(pow(x, y));
}
static sh_obj *m_atan2(ARGS) {
  double y, x;
  if (argc != 2) return sh_raise(sh_TypeError, "atan2 expected 2 arguments, got %d", argc);
  if (sh_as_double(argv[0], &y) < 0 || sh_as_double(argv[1], &x) < 0) return NULL;
  return sh_float(atan2(y, x));
}
static sh_obj *m_hypot(ARGS) {
  double s = 0;
  for (int i = 0; i < argc; i++) { double v; if (sh_as_double(argv[i], &v) < 0) return NULL; s += v * v; }
  return sh_float(sqrt(s));
}
static sh_obj *to_int(double r) {
  if (isnan(r)) return sh_raise(sh_ValueError, "cannot convert float NaN to integer");
  if (isinf(r)) return sh_raise(sh_OverflowError, "cannot convert float infinity to integer");
  return sh_int((int64_t)r);
}
static sh_obj *m_floor(ARGS) {
  double x;
  if (argc == 1 && sh_is_int(argv[0])) return sh_int(sh_int_value(argv[0]));
  if (one_double("floor", argc, argv, &x) < 0) return NULL;
  return to_int(floor(x));
}
static sh_obj *m_ceil(ARGS) {
  double x;
  if (argc == 1 && sh_is_int(argv[0])) return sh_int(sh_int_value(argv[0]));
  if (one_double("ceil", argc, argv, &x) < 0) return NULL;
  return to_int(ceil(x));
}
static sh_obj *m_trunc(ARGS) {
  double x;
  if (argc == 1 && sh_is_int(argv[0])) return sh_int(sh_int_value(argv[0]));
  if (one_double("trunc", argc, argv, &x) < 0) return NULL;
  return to_int(trunc(x));
}
static sh_obj *m_isnan(ARGS) { double x; if (one_double("isnan", argc, argv, &x) < 0) return NULL; return sh_bool(isnan(x)); }
static sh_obj *m_isinf(ARGS) { double x; if (one_double("isinf", argc, argv, &x) < 0) return NULL; return sh_bool(isinf(x)); }
static sh_obj *m_isfinite(ARGS) { double x; if (one_double("isfinite", argc, argv, &x) < 0) return NULL; return sh_bool(isfinite(x)); }
static sh_obj *m_isclose(ARGS) {
  sh_obj *a, *b, *rt = NULL, *at = NULL;
  if (sh_parse_args("isclose", argc, argv, kw, "a b * rel_tol abs_tol", &a, &b, &rt, &at) < 0) return NULL;
  double x, y, r = 1e-9, t = 0;
  if (sh_as_double(a, &x) < 0 || sh_as_double(b, &y) < 0) return NULL;
  if ((rt && sh_as_double(rt, &r) < 0) || (at && sh_as_double(at, &t) < 0)) return NULL;
  double d = fabs(x - y);
  return sh_bool(x == y || d <= fmax(r * fmax(fabs(x), fabs(y)), t));
}
static sh_obj *m_factorial(ARGS) {
  int64_t n, r = 1;
  if (argc != 1 || !sh_is_int(argv[0])) return sh_raise(sh_TypeError, "factorial() only accepts integral values");
  n = sh_int_value(argv[0]);
  if (n < 0) return sh_raise(sh_ValueError, "factorial() not defined for negative values");
  for (int64_t i = 2; i <= n; i++)
    if (__builtin_mul_overflow(r, i, &r)) return sh_raise(sh_OverflowError, "integer overflow (tfsh ints are 64-bit)");
  return sh_int(r);
}
static sh_obj *m_gcd(ARGS) {
  int64_t g = 0;
  for (int i = 0; i < argc; i++) {
    int64_t v;
    if (sh_as_int(argv[i], &v) < 0) return NULL;
    v = v < 0 ? -v : v;
    while (v) { int64_t t = g % v; g = v; v = t; }
  }
  return sh_int(g);
}
static sh_obj *m_fsum(ARGS) {
  if (argc != 1) return sh_raise(sh_TypeError, "fsum() takes exactly one argument");
  sh_obj *it = sh_iter(argv[0]), *x;
  if (!it) return NULL;
  double s = 0, c = 0;   /* Kahan summation */
  while ((x = sh_next(it))) {
    double v;
    int rc = sh_as_double(x, &v);
    sh_decref(x);
    if (rc < 0) break;
    double y = v - c, t = s + y;
    c = (t - s) - y;
    s = t;
  }
  sh_decref(it);
  return sh_err_occurred() ? NULL : sh_float(s);
}
static sh_obj *m_prod(ARGS) {
  if (argc != 1) return sh_raise(sh_TypeError, "prod() takes exactly one argument");
  sh_obj *it = sh_iter(argv[0]), *x, *acc = sh_int(1);
  if (!it) { sh_decref(acc); return NULL; }
  while (acc && (x = sh_next(it))) { sh_obj *r = sh_binop(SH_MUL, acc, x); sh_decref(x); sh_decref(acc); acc = r; }
  sh_decref(it);
  if (sh_err_occurred()) { sh_decref(acc); return NULL; }
  return acc;
}
static sh_obj *m_copysign(ARGS) {
  double x, y;
  if (argc != 2 || sh_as_double(argv[0], &x) < 0 || sh_as_double(argv[1], &y) < 0)
    return sh_err_occurred() ? NULL : sh_raise(sh_TypeError, "copysign expected 2 arguments");
  return sh_float(copysign(x, y));
}
static sh_obj *m_fmod(ARGS) {
  double x, y;
  if (argc != 2 || sh_as_double(argv[0], &x) < 0 || sh_as_double(argv[1], &y) < 0)
    return sh_err_occurred() ? NULL : sh_raise(sh_TypeError, "fmod expected 2 arguments");
  if (y == 0) return sh_raise(sh_ValueError, "math domain error");
  return sh_float(fmod(x, y));
}

static const sh_method math_funcs[] = {
  {"sqrt", m_sqrt, "sqrt(x)", "Square root."},
  {"exp", m_exp, "exp(x)", "e ** x."},
  {"log", m_log, "log(x[, base])", "Logarithm (natural by default)."},
  {"log10", m_log10, "log10(x)", "Base-10 logarithm."},
  {"log2", m_log2, "log2(x)", "Base-2 logarithm."},
  {"log1p", m_log1p, "log1p(x)", "log(1 + x), accurate near 0."},
  {"expm1", m_expm1, "expm1(x)", "exp(x) - 1, accurate near 0."},
  {"pow", m_pow, "pow(x, y)", "x ** y as floats."},
  {"sin", m_sin, "sin(x)", "Sine (radians)."},
  {"cos", m_cos, "cos(x)", "Cosine (radians)."},
  {"tan", m_tan, "tan(x)", "Tangent (radians)."},
  {"asin", m_asin, "asin(x)", "Arc sine."},
  {"acos", m_acos, "acos(x)", "Arc cosine."},
  {"atan", m_atan, "atan(x)", "Arc tangent."},
  {"atan2", m_atan2, "atan2(y, x)", "Arc tangent of y/x, in the right quadrant."},
  {"sinh", m_sinh, "sinh(x)", "Hyperbolic sine."},
  {"cosh", m_cosh, "cosh(x)", "Hyperbolic cosine."},
  {"tanh", m_tanh, "tanh(x)", "Hyperbolic tangent."},
  {"hypot", m_hypot, "hypot(*coordinates)", "Euclidean norm."},
  {"fabs", m_fabs, "fabs(x)", "Absolute value as a float."},
  {"floor", m_floor, "floor(x)", "Largest int <= x."},
  {"ceil", m_ceil, "ceil(x)", "Smallest int >= x."},
  {"trunc", m_trunc, "trunc(x)", "x truncated towards 0."},
  {"degrees", m_degrees, "degrees(x)", "Radians to degrees."},
  {"radians", m_radians, "radians(x)", "Degrees to radians."},
  {"erf", m_erf, "erf(x)", "Error function."},
  {"isnan", m_isnan, "isnan(x)", "Whether x is NaN."},
  {"isinf", m_isinf, "isinf(x)", "Whether x is infinite."},
  {"isfinite", m_isfinite, "isfinite(x)", "Whether x is neither infinite nor NaN."},
  {"isclose", m_isclose, "isclose(a, b, *, rel_tol=1e-09, abs_tol=0.0)", "Whether a and b are close."},
  {"factorial", m_factorial, "factorial(n)", "n!"},
  {"gcd", m_gcd, "gcd(*integers)", "Greatest common divisor."},
  {"fsum", m_fsum, "fsum(iterable)", "Accurate float sum."},
  {"prod", m_prod, "prod(iterable)", "Product of the items."},
  {"copysign", m_copysign, "copysign(x, y)", "x with the sign of y."},
  {"fmod", m_fmod, "fmod(x, y)", "C's fmod."},
  {NULL}};

sh_obj *sh_mod_math_init(void) {
  sh_obj *m = sh_module_new("math");
  sh_module_add_funcs(m, math_funcs);
  sh_module_add(m, "pi", sh_float(M_PI));
  sh_module_add(m, "e", sh_float(M_E));
  sh_module_add(m, "tau", sh_float(2 * M_PI));
  sh_module_add(m, "inf", sh_float(INFINITY));
  sh_module_add(m, "nan", sh_float(NAN));
  sh_module_add(m, "__doc__", sh_str("Mathematical functions."));
  return m;
}
