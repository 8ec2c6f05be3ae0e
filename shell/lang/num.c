/* int, float and bool: small-int cache, arithmetic, parsing and printing. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "shell/lang/interp.h"

/* ---- int and float --------------------------------------------------------------------- */
#define SMALL_MIN (-5)
#define SMALL_MAX 1024
static sh_int_obj small_ints[SMALL_MAX - SMALL_MIN + 1];

sh_obj *sh_int(int64_t v) {
  if (v >= SMALL_MIN && v <= SMALL_MAX) return sh_incref(&small_ints[v - SMALL_MIN].head);
  sh_int_obj *o;
  if (sh_n_int_free) { o = (sh_int_obj *)sh_int_free[--sh_n_int_free]; o->head.refcnt = 1; }
  else o = sh_new(&sh_int_type);
  o->v = v;
  return &o->head;
}

sh_obj *sh_float(double v) {
  sh_float_obj *o;
  if (sh_n_float_free) { o = (sh_float_obj *)sh_float_free[--sh_n_float_free]; o->head.refcnt = 1; }
  else o = sh_new(&sh_float_type);
  o->v = v;
  return &o->head;
}

static sh_obj *int_repr(sh_obj *o) {
  if (o->type == &sh_bool_type) return sh_str(sh_int_value(o) ? "True" : "False");
  return sh_strf("%lld", (long long)sh_int_value(o));
}

void sh_format_double_repr(double v, char *buf, size_t size) {
  if (isnan(v)) { snprintf(buf, size, "nan"); return; }
  if (isinf(v)) { snprintf(buf, size, v < 0 ? "-inf" : "inf"); return; }
  char tmp[40];
  for (int p = 1; p <= 17; p++) {
    snprintf(tmp, sizeof tmp, "%.*e", p - 1, v);
    if (strtod(tmp, NULL) == v) break;
  }
  /* tmp is "-d.ddde+XX": split into sign, digits and exponent. */
  const char *s = tmp;
  bool neg = *s == '-';
  if (neg) s++;
  char digits[24];
  int nd = 0;
  for (; *s && *s != 'e'; s++)
    if (*s != '.') digits[nd++] = *s;
  while (nd > 1 && digits[nd - 1] == '0') nd--;
  digits[nd] = 0;
  int exp = atoi(s + 1);
  char *out = buf;
  size_t left = size;
#define PUT(...) do { int k_ = snprintf(out, left, __VA_ARGS__); out += k_; left -= k_; } while (0)
  if (neg) PUT("-");
  if (exp < -4 || exp >= 16) {
    PUT("%c", digits[0]);
    if (nd > 1) PUT(".%s", digits + 1);
    PUT("e%c%02d", exp < 0 ? '-' : '+', abs(exp));
  } else if (exp < 0) {
    PUT("0.");
    for (int i = 0; i < -exp - 1; i++) PUT("0");
    PUT("%s", digits);
  } else {
    for (int i = 0; i <= exp; i++) PUT("%c", i < nd ? digits[i] : '0');
    PUT(".");
    if (nd > exp + 1) PUT("%s", digits + exp + 1);
    else PUT("0");
  }
#undef PUT
}

static sh_obj *float_repr(sh_obj *o) {
  char buf[64];
  sh_format_double_repr(sh_float_value(o), buf, sizeof buf);
  return sh_str(buf);
}

static int int_truth(sh_obj *o) { return sh_int_value(o) != 0; }
static int float_truth(sh_obj *o) { return sh_float_value(o) != 0.0; }

static int64_t hash_double(double d) {
  if (d == floor(d) && fabs(d) < 9.2e18) return (int64_t)d;
  int64_t bits;
  memcpy(&bits, &d, sizeof bits);
  return bits ^ (bits >> 29);
}

static sh_obj *zero_div(const char *msg) { return sh_raise(sh_ZeroDivisionError, "%s", msg); }
static sh_obj *overflow(void) {
  return sh_raise(sh_OverflowError, "integer overflow (tfsh ints are 64-bit)");
}

static int64_t floordiv64(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
  return q;
}
static int64_t mod64(int64_t a, int64_t b) {
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

static sh_obj *int_pow(int64_t a, int64_t b) {
  if (b < 0) {
    if (a == 0) return zero_div("0.0 cannot be raised to a negative power");
    return sh_float(pow((double)a, (double)b));
  }
  int64_t r = 1;
  while (b) {
    if (b & 1 && __builtin_mul_overflow(r, a, &r)) return overflow();
    b >>= 1;
    if (b && __builtin_mul_overflow(a, a, &a)) return overflow();
  }
  return sh_int(r);
}

static sh_obj *float_binop_d(int op, double x, double y) {
  switch (op) {
  case SH_ADD: return sh_float(x + y);
  case SH_SUB: return sh_float(x - y);
  case SH_MUL: return sh_float(x * y);
  case SH_TRUEDIV:
    if (y == 0) return zero_div("float division by zero");
    return sh_float(x / y);
  case SH_FLOORDIV:
    if (y == 0) return zero_div("float floor division by zero");
    return sh_float(floor(x / y));
  case SH_MOD: {
    if (y == 0) return zero_div("float modulo");
    double r = fmod(x, y);
    if (r != 0 && ((r < 0) != (y < 0))) r += y;
    return sh_float(r);
  }
  case SH_POW:
    if (x == 0 && y < 0) return zero_div("0.0 cannot be raised to a negative power");
    return sh_float(pow(x, y));
  }
  return sh_incref(SH_NOTIMPL);
}

static sh_obj *num_binop(int op, sh_obj *a, sh_obj *b) {
  bool ai = sh_is_int(a), bi = sh_is_int(b);
  if (ai && bi) {
    int64_t x = sh_int_value(a), y = sh_int_value(b), r;
    switch (op) {
    case SH_ADD: if (__builtin_add_overflow(x, y, &r)) return overflow(); return sh_int(r);
    case SH_SUB: if (__builtin_sub_overflow(x, y, &r)) return overflow(); return sh_int(r);
    case SH_MUL: if (__builtin_mul_overflow(x, y, &r)) return overflow(); return sh_int(r);
    case SH_TRUEDIV:
      if (y == 0) return zero_div("division by zero");
      return sh_float((double)x / (double)y);
    case SH_FLOORDIV:
      if (y == 0) return zero_div("integer division or modulo by zero");
      if (y == -1) { if (x == INT64_MIN) return overflow(); return sh_int(-x); }
      return sh_int(floordiv64(x, y));
    case SH_MOD:
      if (y == 0) return zero_div("integer modulo by zero");
      if (y == -1) return sh_int(0);
      return sh_int(mod64(x, y));
    case SH_POW: return int_pow(x, y);
    case SH_LSHIFT:
      if (y < 0) return sh_raise(sh_ValueError, "negative shift count");
      if (y >= 63 || (x << y) >> y != x) return overflow();
      return sh_int(x << y);
    case SH_RSHIFT:
      if (y < 0) return sh_raise(sh_ValueError, "negative shift count");
      return sh_int(y >= 63 ? (x < 0 ? -1 : 0) : x >> y);
    case SH_BITAND:
      if (a->type == &sh_bool_type && b->type == &sh_bool_type) return sh_bool(x & y);
      return sh_int(x & y);
    case SH_BITOR:
      if (a->type == &sh_bool_type && b->type == &sh_bool_type) return sh_bool(x | y);
      return sh_int(x | y);
    case SH_BITXOR:
      if (a->type == &sh_bool_type && b->type == &sh_bool_type) return sh_bool(x ^ y);
      return sh_int(x ^ y);
    }
    return sh_incref(SH_NOTIMPL);
  }
  if ((ai || sh_is_float(a)) && (bi || sh_is_float(b)) && op <= SH_POW && op != SH_MATMUL) {
    double x = ai ? (double)sh_int_value(a) : sh_float_value(a);
    double y = bi ? (double)sh_int_value(b) : sh_float_value(b);
    return float_binop_d(op, x, y);
  }
  return sh_incref(SH_NOTIMPL);
}

static sh_obj *num_unop(int op, sh_obj *a) {
  if (sh_is_int(a)) {
    int64_t v = sh_int_value(a);
    if (op == SH_NEG) { if (v == INT64_MIN) return overflow(); return sh_int(-v); }
    if (op == SH_POS) return sh_int(v);
    return sh_int(~v);
  }
  if (op == SH_NEG) return sh_float(-sh_float_value(a));
  if (op == SH_POS) return sh_float(sh_float_value(a));
  return sh_incref(SH_NOTIMPL);
}

/* Three-way compare of two numbers; exact for int vs int. */
static int num_cmp3(sh_obj *a, sh_obj *b) {
  if (sh_is_int(a) && sh_is_int(b)) {
    int64_t x = sh_int_value(a), y = sh_int_value(b);
    return (x > y) - (x < y);
  }
  double x = sh_is_int(a) ? (double)sh_int_value(a) : sh_float_value(a);
  double y = sh_is_int(b) ? (double)sh_int_value(b) : sh_float_value(b);
  if (isnan(x) || isnan(y)) return 2;  /* unordered */
  return (x > y) - (x < y);
}

bool sh_cmp_result(int op, int c) {
  if (c == 2) return op == SH_NE;
  switch (op) {
  case SH_LT: return c < 0;
  case SH_LE: return c <= 0;
  case SH_EQ: return c == 0;
  case SH_NE: return c != 0;
  case SH_GT: return c > 0;
  default: return c >= 0;
  }
}

static bool is_num(sh_obj *o) { return sh_is_int(o) || sh_is_float(o); }

static sh_obj *num_compare(int op, sh_obj *a, sh_obj *b) {
  if (!is_num(a) || !is_num(b)) return sh_incref(SH_NOTIMPL);
  return sh_bool(sh_cmp_result(op, num_cmp3(a, b)));
}

static int int_hash(sh_obj *o, int64_t *out) { *out = sh_int_value(o); return 0; }
static int float_hash(sh_obj *o, int64_t *out) { *out = hash_double(sh_float_value(o)); return 0; }

sh_type sh_int_type = {SH_TYPE_HEAD, .name = "int", .size = sizeof(sh_int_obj),
  .repr = int_repr, .binop = num_binop, .unop = num_unop, .compare = num_compare,
  .truth = int_truth, .hash = int_hash, .help = "int(x=0, base=10): a 64-bit integer"};
sh_type sh_bool_type = {SH_TYPE_HEAD, .name = "bool", .base = &sh_int_type,
  .size = sizeof(sh_int_obj), .repr = int_repr, .binop = num_binop, .unop = num_unop,
  .compare = num_compare, .truth = int_truth, .hash = int_hash};
sh_type sh_float_type = {SH_TYPE_HEAD, .name = "float", .size = sizeof(sh_float_obj),
  .repr = float_repr, .binop = num_binop, .unop = num_unop, .compare = num_compare,
  .truth = float_truth, .hash = float_hash, .help = "float(x=0.0): a double"};

void sh_num_init(void) {
  for (int64_t v = SMALL_MIN; v <= SMALL_MAX; v++)
    small_ints[v - SMALL_MIN] = (sh_int_obj){SH_OBJ_HEAD(&sh_int_type), v};
}
