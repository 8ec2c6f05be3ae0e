/* The object model: allocation, the built-in types' core behaviour (numbers, strings,
 * containers), generic operations, exceptions, classes and modules. Methods of str, list
 * and dict live in builtins.c; functions and frames in eval.c; formatting in format.c. */
#define _GNU_SOURCE
#include "shell/lang/value.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "shell/lang/interp.h"

const char *const sh_binop_symbol[SH_BINOP_COUNT] = {
  "+", "-", "*", "/", "//", "%", "** or pow()", "@", "<<", ">>", "&", "|", "^"};
const char *const sh_cmpop_symbol[SH_CMPOP_COUNT] = {"<", "<=", "==", "!=", ">", ">="};
static const char *const binop_dunder[SH_BINOP_COUNT] = {
  "__add__", "__sub__", "__mul__", "__truediv__", "__floordiv__", "__mod__", "__pow__",
  "__matmul__", "__lshift__", "__rshift__", "__and__", "__or__", "__xor__"};
static const char *const binop_rdunder[SH_BINOP_COUNT] = {
  "__radd__", "__rsub__", "__rmul__", "__rtruediv__", "__rfloordiv__", "__rmod__",
  "__rpow__", "__rmatmul__", "__rlshift__", "__rrshift__", "__rand__", "__ror__", "__rxor__"};
static const char *const cmp_dunder[SH_CMPOP_COUNT] = {
  "__lt__", "__le__", "__eq__", "__ne__", "__gt__", "__ge__"};

/* ---- allocation ------------------------------------------------------------------------ */

/* Ints and floats are allocated and freed constantly: keep a free list of each. */
#define FREELIST_MAX 256
static sh_obj *int_free[FREELIST_MAX], *float_free[FREELIST_MAX];
static int n_int_free, n_float_free;

void *sh_new(sh_type *t) {
  sh_obj *o = calloc(1, t->size ? t->size : sizeof(sh_obj));
  if (!o) { fputs("tfsh: out of memory\n", stderr); abort(); }
  o->refcnt = 1;
  o->type = t;
  if (t->flags & SH_TF_HEAP) SH_INCREF(t);
  return o;
}

void sh_dealloc(sh_obj *o) {
  sh_type *t = o->type;
  if (t == &sh_int_type && n_int_free < FREELIST_MAX) { int_free[n_int_free++] = o; return; }
  if (t == &sh_float_type && n_float_free < FREELIST_MAX) { float_free[n_float_free++] = o; return; }
  /* A pending exception must survive destructors that run Python code. */
  for (sh_type *d = t; d; d = d->base)
    if (d->destroy) { d->destroy(o); break; }
  free(o);
  if (t->flags & SH_TF_HEAP) SH_DECREF(t);
}

bool sh_is_subtype(const sh_type *t, const sh_type *base) {
  if (base == &sh_object_type) return true;
  for (; t; t = t->base)
    if (t == base) return true;
  return false;
}

/* ---- singletons ------------------------------------------------------------------------ */
static sh_obj *none_repr(sh_obj *o) { return sh_str("None"); }
static sh_obj *ellipsis_repr(sh_obj *o) { return sh_str("Ellipsis"); }
static sh_obj *notimpl_repr(sh_obj *o) { return sh_str("NotImplemented"); }
static int none_truth(sh_obj *o) { return 0; }
sh_type sh_none_type = {SH_TYPE_HEAD, .name = "NoneType", .repr = none_repr, .truth = none_truth};
sh_type sh_ellipsis_type = {SH_TYPE_HEAD, .name = "ellipsis", .repr = ellipsis_repr};
sh_type sh_notimpl_type = {SH_TYPE_HEAD, .name = "NotImplementedType", .repr = notimpl_repr};
sh_obj sh_none_obj = SH_OBJ_HEAD(&sh_none_type);
sh_obj sh_ellipsis_obj = SH_OBJ_HEAD(&sh_ellipsis_type);
sh_obj sh_notimpl_obj = SH_OBJ_HEAD(&sh_notimpl_type);
static sh_int_obj true_obj = {SH_OBJ_HEAD(&sh_bool_type), 1};
static sh_int_obj false_obj = {SH_OBJ_HEAD(&sh_bool_type), 0};
sh_obj *sh_true = &true_obj.head, *sh_false = &false_obj.head;
sh_obj *sh_none(void) { return sh_incref(SH_NONE); }
sh_obj *sh_bool(bool b) { return sh_incref(b ? sh_true : sh_false); }

/* ---- int and float --------------------------------------------------------------------- */
#define SMALL_MIN (-5)
#define SMALL_MAX 1024
static sh_int_obj small_ints[SMALL_MAX - SMALL_MIN + 1];

sh_obj *sh_int(int64_t v) {
  if (v >= SMALL_MIN && v <= SMALL_MAX) return sh_incref(&small_ints[v - SMALL_MIN].head);
  sh_int_obj *o;
  if (n_int_free) { o = (sh_int_obj *)int_free[--n_int_free]; o->head.refcnt = 1; }
  else o = sh_new(&sh_int_type);
  o->v = v;
  return &o->head;
}

sh_obj *sh_float(double v) {
  sh_float_obj *o;
  if (n_float_free) { o = (sh_float_obj *)float_free[--n_float_free]; o->head.refcnt = 1; }
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

static bool cmp_result(int op, int c) {
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
  return sh_bool(cmp_result(op, num_cmp3(a, b)));
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

/* ---- str ------------------------------------------------------------------------------- */
static int64_t utf8_count(const char *s, size_t n) {
  int64_t c = 0;
  for (size_t i = 0; i < n; i++) c += ((unsigned char)s[i] & 0xC0) != 0x80;
  return c;
}

static sh_obj *empty_str;

/* A str of n bytes, contents not yet filled. */
static sh_str_obj *str_alloc(size_t n) {
  sh_str_obj *o = malloc(sizeof(sh_str_obj) + n + 1);
  if (!o) { fputs("tfsh: out of memory\n", stderr); abort(); }
  o->head.refcnt = 1;
  o->head.type = &sh_str_type;
  o->len = n;
  o->hash = -1;
  o->interned = false;
  o->s[n] = 0;
  return o;
}

sh_obj *sh_strn(const char *s, size_t n) {
  if (n == 0 && empty_str) return sh_incref(empty_str);
  sh_str_obj *o = str_alloc(n);
  memcpy(o->s, s, n);
  o->nchars = utf8_count(s, n);
  return &o->head;
}

sh_obj *sh_str(const char *s) { return sh_strn(s, strlen(s)); }

sh_obj *sh_strf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *buf = NULL;
  int n = vasprintf(&buf, fmt, ap);
  va_end(ap);
  if (n < 0) abort();
  sh_obj *s = sh_strn(buf, n);
  free(buf);
  return s;
}

static int64_t str_hash_value(sh_str_obj *s) {
  if (s->hash == -1) {
    uint64_t h = 1469598103934665603ULL;
    for (int64_t i = 0; i < s->len; i++) h = (h ^ (unsigned char)s->s[i]) * 1099511628211ULL;
    s->hash = (int64_t)(h >> 1);
  }
  return s->hash;
}

static int str_hash(sh_obj *o, int64_t *out) { *out = str_hash_value((sh_str_obj *)o); return 0; }

static sh_obj *interned;   /* dict str -> same str */

sh_obj *sh_intern(const char *s) {
  sh_obj *k = sh_str(s);
  sh_obj *found = sh_dict_get(interned, k);
  if (found) { sh_decref(k); return sh_incref(found); }
  ((sh_str_obj *)k)->interned = true;
  sh_dict_set(interned, k, k);
  return k;
}

/* Python's repr of a string: single quotes unless the text has ' and no ". */
sh_obj *sh_str_repr_cstr(const char *s, size_t n) {
  bool sq = memchr(s, '\'', n) != NULL, dq = memchr(s, '"', n) != NULL;
  char q = sq && !dq ? '"' : '\'';
  sh_buf b = {0};
  sh_buf_putc(&b, q);
  for (size_t i = 0; i < n; i++) {
    unsigned char c = s[i];
    if (c == q || c == '\\') { sh_buf_putc(&b, '\\'); sh_buf_putc(&b, c); }
    else if (c == '\n') sh_buf_puts(&b, "\\n");
    else if (c == '\t') sh_buf_puts(&b, "\\t");
    else if (c == '\r') sh_buf_puts(&b, "\\r");
    else if (c < 32 || c == 127) sh_buf_printf(&b, "\\x%02x", c);
    else sh_buf_putc(&b, c);
  }
  sh_buf_putc(&b, q);
  return sh_buf_finish(&b);
}

static sh_obj *str_repr(sh_obj *o) { return sh_str_repr_cstr(sh_str_cstr(o), sh_str_len(o)); }
static sh_obj *str_str(sh_obj *o) { return sh_incref(o); }
static int64_t str_len(sh_obj *o) { return ((sh_str_obj *)o)->nchars; }
static int str_truth(sh_obj *o) { return sh_str_len(o) != 0; }

sh_obj *sh_str_concat(sh_obj *a, sh_obj *b) {
  int64_t na = sh_str_len(a), nb = sh_str_len(b);
  if (nb == 0) return sh_incref(a);
  if (na == 0) return sh_incref(b);
  sh_str_obj *o = str_alloc(na + nb);
  memcpy(o->s, sh_str_cstr(a), na);
  memcpy(o->s + na, sh_str_cstr(b), nb);
  o->nchars = ((sh_str_obj *)a)->nchars + ((sh_str_obj *)b)->nchars;
  return &o->head;
}

static sh_obj *seq_repeat(sh_obj *seq, int64_t n);

static sh_obj *str_binop(int op, sh_obj *a, sh_obj *b) {
  if (op == SH_ADD && sh_is_str(a)) {
    if (!sh_is_str(b))
      return sh_raise(sh_TypeError, "can only concatenate str (not \"%s\") to str", sh_type_name(b));
    return sh_str_concat(a, b);
  }
  if (op == SH_MUL) {
    if (sh_is_str(a) && sh_is_int(b)) return seq_repeat(a, sh_int_value(b));
    if (sh_is_int(a) && sh_is_str(b)) return seq_repeat(b, sh_int_value(a));
  }
  if (op == SH_MOD && sh_is_str(a)) return sh_percent_format(a, b);
  return sh_incref(SH_NOTIMPL);
}

static sh_obj *str_compare(int op, sh_obj *a, sh_obj *b) {
  if (!sh_is_str(a) || !sh_is_str(b)) return sh_incref(SH_NOTIMPL);
  int64_t na = sh_str_len(a), nb = sh_str_len(b);
  int c = memcmp(sh_str_cstr(a), sh_str_cstr(b), na < nb ? na : nb);
  if (c == 0) c = (na > nb) - (na < nb);
  return sh_bool(cmp_result(op, c < 0 ? -1 : c > 0));
}

static int str_contains(sh_obj *s, sh_obj *item) {
  if (!sh_is_str(item)) {
    sh_raise(sh_TypeError, "'in <string>' requires string as left operand, not %s", sh_type_name(item));
    return -1;
  }
  return strstr(sh_str_cstr(s), sh_str_cstr(item)) != NULL;
}

/* Byte offset of code point i in s (s may be non-ASCII). */
static int64_t str_offset(sh_str_obj *s, int64_t i) {
  if (s->nchars == s->len) return i;
  int64_t off = 0;
  for (int64_t c = 0; c < i && off < s->len; c++) {
    off++;
    while (off < s->len && ((unsigned char)s->s[off] & 0xC0) == 0x80) off++;
  }
  return off;
}

static int norm_index(sh_obj *key, int64_t n, int64_t *out, const char *what) {
  int64_t i = sh_int_value(key);
  if (i < 0) i += n;
  if (i < 0 || i >= n) { sh_raise(sh_IndexError, "%s index out of range", what); return -1; }
  *out = i;
  return 0;
}

static sh_obj *str_getitem(sh_obj *o, sh_obj *key) {
  sh_str_obj *s = (sh_str_obj *)o;
  if (sh_is_int(key)) {
    int64_t i;
    if (norm_index(key, s->nchars, &i, "string") < 0) return NULL;
    int64_t a = str_offset(s, i), b = str_offset(s, i + 1);
    return sh_strn(s->s + a, b - a);
  }
  if (key->type == &sh_slice_type) {
    int64_t start, stop, step, count;
    if (sh_slice_indices(key, s->nchars, &start, &stop, &step, &count) < 0) return NULL;
    if (step == 1) {
      int64_t a = str_offset(s, start), b = str_offset(s, start + count);
      return sh_strn(s->s + a, b - a);
    }
    sh_buf b = {0};
    for (int64_t k = 0, i = start; k < count; k++, i += step) {
      int64_t x = str_offset(s, i), y = str_offset(s, i + 1);
      sh_buf_put(&b, s->s + x, y - x);
    }
    return sh_buf_finish(&b);
  }
  return sh_raise(sh_TypeError, "string indices must be integers, not '%s'", sh_type_name(key));
}

typedef struct { sh_obj head; sh_obj *seq; int64_t i; } seqiter;
static sh_obj *seqiter_new(sh_obj *seq);
static sh_obj *str_iter(sh_obj *o) { return seqiter_new(o); }

sh_type sh_str_type = {SH_TYPE_HEAD, .name = "str", .repr = str_repr, .str = str_str,
  .len = str_len, .truth = str_truth, .binop = str_binop, .compare = str_compare,
  .hash = str_hash, .contains = str_contains, .getitem = str_getitem, .iter = str_iter,
  .methods = sh_str_methods, .help = "str(object=''): text"};

/* ---- growing byte buffer (internal) ----------------------------------------------------- */
void sh_buf_put(sh_buf *b, const char *s, size_t n) {
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 64;
    while (cap < b->len + n + 1) cap *= 2;
    b->data = realloc(b->data, cap);
    b->cap = cap;
  }
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = 0;
}
void sh_buf_puts(sh_buf *b, const char *s) { sh_buf_put(b, s, strlen(s)); }
void sh_buf_putc(sh_buf *b, char c) { sh_buf_put(b, &c, 1); }
void sh_buf_printf(sh_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = NULL;
  int n = vasprintf(&s, fmt, ap);
  va_end(ap);
  if (n > 0) sh_buf_put(b, s, n);
  free(s);
}
int sh_buf_put_obj(sh_buf *b, sh_obj *o, bool use_repr) {
  sh_obj *s = use_repr ? sh_repr(o) : sh_to_str(o);
  if (!s) return -1;
  sh_buf_put(b, sh_str_cstr(s), sh_str_len(s));
  sh_decref(s);
  return 0;
}
sh_obj *sh_buf_finish(sh_buf *b) {
  sh_obj *s = sh_strn(b->data ? b->data : "", b->len);
  free(b->data);
  *b = (sh_buf){0};
  return s;
}
void sh_buf_free(sh_buf *b) { free(b->data); *b = (sh_buf){0}; }

/* ---- list and tuple -------------------------------------------------------------------- */
static void list_grow(sh_list_obj *l, int64_t need) {
  if (need <= l->cap) return;
  int64_t cap = l->cap ? l->cap * 2 : 4;
  while (cap < need) cap *= 2;
  l->items = realloc(l->items, cap * sizeof *l->items);
  l->cap = cap;
}

sh_obj *sh_list_new(int64_t n) {
  sh_list_obj *l = sh_new(&sh_list_type);
  list_grow(l, n);
  for (int64_t i = 0; i < n; i++) l->items[i] = sh_none();
  l->n = n;
  return &l->head;
}

int sh_list_append_steal(sh_obj *list, sh_obj *item) {
  sh_list_obj *l = (sh_list_obj *)list;
  list_grow(l, l->n + 1);
  l->items[l->n++] = item;
  return 0;
}
int sh_list_append(sh_obj *list, sh_obj *item) { return sh_list_append_steal(list, sh_incref(item)); }
void sh_list_set_steal(sh_obj *list, int64_t i, sh_obj *item) {
  sh_obj **p = &SH_LIST_ITEMS(list)[i];
  sh_obj *old = *p;
  *p = item;
  sh_decref(old);
}

void sh_list_insert(sh_obj *list, int64_t i, sh_obj *item) {
  sh_list_obj *l = (sh_list_obj *)list;
  list_grow(l, l->n + 1);
  memmove(l->items + i + 1, l->items + i, (l->n - i) * sizeof *l->items);
  l->items[i] = sh_incref(item);
  l->n++;
}

static void list_destroy(sh_obj *o) {
  sh_list_obj *l = (sh_list_obj *)o;
  for (int64_t i = 0; i < l->n; i++) sh_decref(l->items[i]);
  free(l->items);
}

sh_obj *sh_tuple_new(int64_t n) {
  sh_tuple_obj *t = calloc(1, sizeof(sh_tuple_obj) + n * sizeof(sh_obj *));
  if (!t) abort();
  t->head.refcnt = 1;
  t->head.type = &sh_tuple_type;
  t->n = n;
  return &t->head;
}

sh_obj *sh_tuple_of(int n, ...) {
  sh_obj *t = sh_tuple_new(n);
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++) SH_TUPLE_ITEMS(t)[i] = va_arg(ap, sh_obj *);
  va_end(ap);
  return t;
}

static void tuple_destroy(sh_obj *o) {
  for (int64_t i = 0; i < SH_TUPLE_N(o); i++) sh_decref(SH_TUPLE_ITEMS(o)[i]);
}

/* items/count of a list or tuple (borrowed view). */
static bool seq_view(sh_obj *o, sh_obj ***items, int64_t *n) {
  if (o->type == &sh_list_type || sh_is_subtype(o->type, &sh_list_type)) {
    *items = SH_LIST_ITEMS(o); *n = SH_LIST_N(o); return true;
  }
  if (o->type == &sh_tuple_type) { *items = SH_TUPLE_ITEMS(o); *n = SH_TUPLE_N(o); return true; }
  return false;
}

static sh_obj *seq_from_items(sh_type *t, sh_obj **items, int64_t n) {
  if (t == &sh_tuple_type) {
    sh_obj *r = sh_tuple_new(n);
    for (int64_t i = 0; i < n; i++) SH_TUPLE_ITEMS(r)[i] = sh_incref(items[i]);
    return r;
  }
  sh_obj *r = sh_list_new(0);
  list_grow((sh_list_obj *)r, n);
  for (int64_t i = 0; i < n; i++) SH_LIST_ITEMS(r)[i] = sh_incref(items[i]);
  SH_LIST_N(r) = n;
  return r;
}

static sh_obj *seq_repeat(sh_obj *seq, int64_t n) {
  if (n < 0) n = 0;
  if (sh_is_str(seq)) {
    int64_t len = sh_str_len(seq);
    if (len * n == 0) return sh_strn("", 0);
    sh_str_obj *o = str_alloc(len * n);
    for (int64_t i = 0; i < n; i++) memcpy(o->s + i * len, sh_str_cstr(seq), len);
    o->nchars = ((sh_str_obj *)seq)->nchars * n;
    return &o->head;
  }
  sh_obj **items = NULL; int64_t len = 0;
  seq_view(seq, &items, &len);
  sh_obj **all = malloc((len * n + 1) * sizeof *all);
  for (int64_t i = 0; i < n; i++) memcpy(all + i * len, items, len * sizeof *all);
  sh_obj *r = seq_from_items(seq->type == &sh_tuple_type ? &sh_tuple_type : &sh_list_type, all, len * n);
  free(all);
  return r;
}

static sh_obj *seq_binop(int op, sh_obj *a, sh_obj *b) {
  sh_obj **ia = NULL, **ib = NULL; int64_t na = 0, nb = 0;
  if (op == SH_ADD && seq_view(a, &ia, &na)) {
    bool same = (a->type == &sh_tuple_type) == (b->type == &sh_tuple_type);
    if (!seq_view(b, &ib, &nb) || !same)
      return sh_raise(sh_TypeError, "can only concatenate %s (not \"%s\") to %s",
                      sh_type_name(a), sh_type_name(b), sh_type_name(a));
    sh_obj **all = malloc((na + nb + 1) * sizeof *all);
    if (na) memcpy(all, ia, na * sizeof *all);
    if (nb) memcpy(all + na, ib, nb * sizeof *all);
    sh_obj *r = seq_from_items(a->type == &sh_tuple_type ? &sh_tuple_type : &sh_list_type, all, na + nb);
    free(all);
    return r;
  }
  if (op == SH_MUL) {
    if (seq_view(a, &ia, &na) && sh_is_int(b)) return seq_repeat(a, sh_int_value(b));
    if (seq_view(b, &ib, &nb) && sh_is_int(a)) return seq_repeat(b, sh_int_value(a));
  }
  return sh_incref(SH_NOTIMPL);
}

static sh_obj *seq_compare(int op, sh_obj *a, sh_obj *b) {
  sh_obj **ia = NULL, **ib = NULL; int64_t na = 0, nb = 0;
  if (!seq_view(a, &ia, &na) || !seq_view(b, &ib, &nb) ||
      (a->type == &sh_tuple_type) != (b->type == &sh_tuple_type))
    return sh_incref(SH_NOTIMPL);
  int64_t i = 0;
  for (; i < na && i < nb; i++) {
    int e = sh_eq(ia[i], ib[i]);
    if (e < 0) return NULL;
    if (!e) break;
  }
  if (i >= na || i >= nb) return sh_bool(cmp_result(op, (na > nb) - (na < nb)));
  if (op == SH_EQ) return sh_bool(false);
  if (op == SH_NE) return sh_bool(true);
  return sh_compare(op, ia[i], ib[i]);
}

static sh_obj *seq_repr(sh_obj *o) {
  sh_obj **items = NULL; int64_t n = 0;
  seq_view(o, &items, &n);
  bool tuple = o->type == &sh_tuple_type;
  if (sh_repr_enter(o)) return sh_str(tuple ? "(...)" : "[...]");
  sh_buf b = {0};
  sh_buf_putc(&b, tuple ? '(' : '[');
  for (int64_t i = 0; i < n; i++) {
    if (i) sh_buf_puts(&b, ", ");
    if (sh_buf_put_obj(&b, items[i], true) < 0) { sh_buf_free(&b); sh_repr_leave(o); return NULL; }
  }
  if (tuple && n == 1) sh_buf_putc(&b, ',');
  sh_buf_putc(&b, tuple ? ')' : ']');
  sh_repr_leave(o);
  return sh_buf_finish(&b);
}

static int64_t seq_len(sh_obj *o) { sh_obj **it = NULL; int64_t n = 0; seq_view(o, &it, &n); return n; }

static int seq_contains(sh_obj *o, sh_obj *item) {
  sh_obj **it = NULL; int64_t n = 0;
  seq_view(o, &it, &n);
  for (int64_t i = 0; i < n; i++) {
    if (it[i] == item) return 1;
    int e = sh_eq(it[i], item);
    if (e) return e;
  }
  return 0;
}

static sh_obj *seq_getitem(sh_obj *o, sh_obj *key) {
  sh_obj **items = NULL; int64_t n = 0;
  seq_view(o, &items, &n);
  const char *what = o->type == &sh_tuple_type ? "tuple" : "list";
  if (sh_is_int(key)) {
    int64_t i;
    if (norm_index(key, n, &i, what) < 0) return NULL;
    return sh_incref(items[i]);
  }
  if (key->type == &sh_slice_type) {
    int64_t start, stop, step, count;
    if (sh_slice_indices(key, n, &start, &stop, &step, &count) < 0) return NULL;
    sh_obj **sel = malloc((count + 1) * sizeof *sel);
    for (int64_t k = 0, i = start; k < count; k++, i += step) sel[k] = items[i];
    sh_obj *r = seq_from_items(o->type == &sh_tuple_type ? &sh_tuple_type : &sh_list_type, sel, count);
    free(sel);
    return r;
  }
  return sh_raise(sh_TypeError, "%s indices must be integers or slices, not %s", what, sh_type_name(key));
}

static int list_setitem(sh_obj *o, sh_obj *key, sh_obj *v) {
  sh_list_obj *l = (sh_list_obj *)o;
  if (sh_is_int(key)) {
    int64_t i = sh_int_value(key);
    if (i < 0) i += l->n;
    if (i < 0 || i >= l->n) {
      sh_raise(sh_IndexError, v ? "list assignment index out of range" : "list index out of range");
      return -1;
    }
    if (v) { sh_list_set_steal(o, i, sh_incref(v)); return 0; }
    sh_decref(l->items[i]);
    memmove(l->items + i, l->items + i + 1, (l->n - i - 1) * sizeof *l->items);
    l->n--;
    return 0;
  }
  if (key->type == &sh_slice_type) {
    int64_t start, stop, step, count;
    if (sh_slice_indices(key, l->n, &start, &stop, &step, &count) < 0) return -1;
    sh_obj *src = NULL;
    if (v) { src = sh_sequence_to_list(v); if (!src) return -1; }
    if (step != 1) {
      if (src && SH_LIST_N(src) != count) {
        sh_raise(sh_ValueError, "attempt to assign sequence of size %lld to extended slice of size %lld",
                 (long long)SH_LIST_N(src), (long long)count);
        sh_decref(src);
        return -1;
      }
      if (src) {
        for (int64_t k = 0, i = start; k < count; k++, i += step)
          sh_list_set_steal(o, i, sh_incref(SH_LIST_ITEMS(src)[k]));
        sh_decref(src);
        return 0;
      }
      /* delete extended slice: rebuild */
      sh_obj **keep = malloc((l->n + 1) * sizeof *keep);
      int64_t nk = 0;
      for (int64_t i = 0; i < l->n; i++) {
        bool del = step > 0 ? (i >= start && i < stop && (i - start) % step == 0)
                            : (i <= start && i > stop && (start - i) % (-step) == 0);
        if (del) sh_decref(l->items[i]); else keep[nk++] = l->items[i];
      }
      memcpy(l->items, keep, nk * sizeof *keep);
      free(keep);
      l->n = nk;
      return 0;
    }
    if (stop < start) stop = start;
    int64_t nnew = src ? SH_LIST_N(src) : 0, nold = stop - start;
    for (int64_t i = start; i < stop; i++) sh_decref(l->items[i]);
    list_grow(l, l->n - nold + nnew);
    memmove(l->items + start + nnew, l->items + stop, (l->n - stop) * sizeof *l->items);
    for (int64_t k = 0; k < nnew; k++) l->items[start + k] = sh_incref(SH_LIST_ITEMS(src)[k]);
    l->n += nnew - nold;
    sh_decref(src);
    return 0;
  }
  sh_raise(sh_TypeError, "list indices must be integers or slices, not %s", sh_type_name(key));
  return -1;
}

static int seq_truth(sh_obj *o) { return seq_len(o) != 0; }
static sh_obj *seq_iter(sh_obj *o) { return seqiter_new(o); }

static int tuple_hash(sh_obj *o, int64_t *out) {
  uint64_t h = 0x345678;
  for (int64_t i = 0; i < SH_TUPLE_N(o); i++) {
    int64_t x;
    if (sh_hash(SH_TUPLE_ITEMS(o)[i], &x) < 0) return -1;
    h = (h ^ (uint64_t)x) * 1000003;
  }
  *out = (int64_t)(h >> 1);
  return 0;
}

static int list_hash(sh_obj *o, int64_t *out) {
  sh_raise(sh_TypeError, "unhashable type: '%s'", sh_type_name(o));
  return -1;
}

sh_type sh_list_type = {SH_TYPE_HEAD, .name = "list", .size = sizeof(sh_list_obj),
  .destroy = list_destroy, .repr = seq_repr, .len = seq_len, .truth = seq_truth,
  .binop = seq_binop, .compare = seq_compare, .contains = seq_contains,
  .getitem = seq_getitem, .setitem = list_setitem, .iter = seq_iter, .hash = list_hash,
  .methods = sh_list_methods, .help = "list(iterable=()): a mutable sequence"};
sh_type sh_tuple_type = {SH_TYPE_HEAD, .name = "tuple", .destroy = tuple_destroy,
  .repr = seq_repr, .len = seq_len, .truth = seq_truth, .binop = seq_binop,
  .compare = seq_compare, .contains = seq_contains, .getitem = seq_getitem,
  .iter = seq_iter, .hash = tuple_hash, .methods = sh_tuple_methods,
  .help = "tuple(iterable=()): an immutable sequence"};

/* ---- sequence iterator (str, list, tuple) ----------------------------------------------- */
static void seqiter_destroy(sh_obj *o) { sh_decref(((seqiter *)o)->seq); }
static sh_obj *seqiter_next(sh_obj *o) {
  seqiter *it = (seqiter *)o;
  if (!it->seq) return NULL;
  if (sh_is_str(it->seq)) {
    sh_str_obj *s = (sh_str_obj *)it->seq;
    if (it->i >= s->len) { sh_clear(&it->seq); return NULL; }
    int64_t a = it->i++;
    while (it->i < s->len && ((unsigned char)s->s[it->i] & 0xC0) == 0x80) it->i++;
    return sh_strn(s->s + a, it->i - a);
  }
  sh_obj **items = NULL; int64_t n = 0;
  seq_view(it->seq, &items, &n);
  if (it->i >= n) { sh_clear(&it->seq); return NULL; }
  return sh_incref(items[it->i++]);
}
static sh_obj *self_iter(sh_obj *o) { return sh_incref(o); }
sh_type sh_iter_type = {SH_TYPE_HEAD, .name = "iterator", .size = sizeof(seqiter),
  .destroy = seqiter_destroy, .iter = self_iter, .next = seqiter_next};
static sh_obj *seqiter_new(sh_obj *seq) {
  seqiter *it = sh_new(&sh_iter_type);
  it->seq = sh_incref(seq);
  return &it->head;
}

sh_obj *sh_sequence_to_list(sh_obj *seq) {
  sh_obj **items = NULL; int64_t n = 0;
  if (seq_view(seq, &items, &n)) return seq_from_items(&sh_list_type, items, n);
  sh_obj *it = sh_iter(seq);
  if (!it) return NULL;
  sh_obj *l = sh_list_new(0), *x;
  while ((x = sh_next(it))) sh_list_append_steal(l, x);
  sh_decref(it);
  if (sh_err_occurred()) { sh_decref(l); return NULL; }
  return l;
}

sh_obj *sh_sequence_to_tuple(sh_obj *seq) {
  if (seq->type == &sh_tuple_type) return sh_incref(seq);
  sh_obj *l = sh_sequence_to_list(seq);
  if (!l) return NULL;
  sh_obj *t = seq_from_items(&sh_tuple_type, SH_LIST_ITEMS(l), SH_LIST_N(l));
  sh_decref(l);
  return t;
}

/* ---- dict and set ---------------------------------------------------------------------- */
/* Insertion-ordered: entries[] in insertion order (deleted ones have key NULL), and an
 * open-addressing index of entry numbers (-1 empty, -2 deleted). */
typedef struct { int64_t hash; sh_obj *key, *value; } dentry;
typedef struct sh_dict {
  sh_obj head;
  int64_t used, nentries, cap;
  dentry *entries;
  int64_t *index;
  int64_t mask;
} sh_dict_obj;

static void dict_rebuild(sh_dict_obj *d, int64_t cap) {
  int64_t k = 0;
  for (int64_t i = 0; i < d->nentries; i++)
    if (d->entries[i].key) d->entries[k++] = d->entries[i];
  d->nentries = k;
  if (cap > d->cap) { d->entries = realloc(d->entries, cap * sizeof(dentry)); d->cap = cap; }
  int64_t isize = 8;
  while (isize < d->cap * 3 / 2 + 1) isize *= 2;
  free(d->index);
  d->index = malloc(isize * sizeof(int64_t));
  for (int64_t i = 0; i < isize; i++) d->index[i] = -1;
  d->mask = isize - 1;
  for (int64_t e = 0; e < d->nentries; e++) {
    uint64_t h = d->entries[e].hash, perturb = h, i = h & d->mask;
    while (d->index[i] != -1) { perturb >>= 5; i = (i * 5 + perturb + 1) & d->mask; }
    d->index[i] = e;
  }
}

static bool keys_equal(sh_obj *a, sh_obj *b, int *err) {
  if (a == b) return true;
  if (sh_is_str(a) && sh_is_str(b))
    return sh_str_len(a) == sh_str_len(b) && memcmp(sh_str_cstr(a), sh_str_cstr(b), sh_str_len(a)) == 0;
  int e = sh_eq(a, b);
  if (e < 0) *err = 1;
  return e > 0;
}

/* Index slot for key: returns the slot in d->index; *entry = entry number or -1. */
static int64_t dict_lookup(sh_dict_obj *d, sh_obj *key, int64_t hash, int64_t *entry) {
  *entry = -1;
  if (!d->index) dict_rebuild(d, 8);
  uint64_t perturb = hash, i = hash & d->mask;
  int64_t free_slot = -1;
  int err = 0;
  for (;;) {
    int64_t e = d->index[i];
    if (e == -1) return free_slot >= 0 ? free_slot : (int64_t)i;
    if (e == -2) { if (free_slot < 0) free_slot = i; }
    else if (d->entries[e].hash == hash && keys_equal(d->entries[e].key, key, &err)) {
      *entry = e;
      return i;
    }
    if (err) return -2;
    perturb >>= 5;
    i = (i * 5 + perturb + 1) & d->mask;
  }
}

sh_obj *sh_dict_new(void) { return sh_new(&sh_dict_type); }
sh_obj *sh_set_new(void) { return sh_new(&sh_set_type); }

static int dict_set_h(sh_obj *o, sh_obj *key, int64_t hash, sh_obj *value) {
  sh_dict_obj *d = (sh_dict_obj *)o;
  int64_t e, slot = dict_lookup(d, key, hash, &e);
  if (slot == -2) return -1;
  if (e >= 0) {
    sh_obj *old = d->entries[e].value;
    d->entries[e].value = sh_incref(value);
    sh_decref(old);
    return 0;
  }
  if (d->nentries >= d->cap) {
    dict_rebuild(d, d->used * 2 + 8);
    slot = dict_lookup(d, key, hash, &e);
  }
  d->entries[d->nentries] = (dentry){hash, sh_incref(key), sh_incref(value)};
  d->index[slot] = d->nentries++;
  d->used++;
  return 0;
}

int sh_dict_set(sh_obj *d, sh_obj *key, sh_obj *value) {
  int64_t h;
  if (sh_hash(key, &h) < 0) return -1;
  return dict_set_h(d, key, h, value);
}

int sh_dict_set_str(sh_obj *d, const char *key, sh_obj *value) {
  sh_obj *k = sh_intern(key);
  int r = sh_dict_set(d, k, value);
  sh_decref(k);
  return r;
}

sh_obj *sh_dict_get(sh_obj *o, sh_obj *key) {
  sh_dict_obj *d = (sh_dict_obj *)o;
  if (d->used == 0) return NULL;
  int64_t h, e;
  if (sh_is_str(key)) h = str_hash_value((sh_str_obj *)key);
  else if (sh_hash(key, &h) < 0) return NULL;
  if (dict_lookup(d, key, h, &e) == -2 || e < 0) return NULL;
  return d->entries[e].value;
}

sh_obj *sh_dict_get_str(sh_obj *d, const char *key) {
  sh_obj *k = sh_str(key);
  sh_obj *v = sh_dict_get(d, k);
  sh_decref(k);
  return v;
}

int sh_dict_del(sh_obj *o, sh_obj *key) {
  sh_dict_obj *d = (sh_dict_obj *)o;
  int64_t h, e;
  if (sh_hash(key, &h) < 0) return -1;
  if (d->used == 0) return 0;
  int64_t slot = dict_lookup(d, key, h, &e);
  if (slot == -2) return -1;
  if (e < 0) return 0;
  d->index[slot] = -2;
  sh_obj *k = d->entries[e].key, *v = d->entries[e].value;
  d->entries[e].key = d->entries[e].value = NULL;
  d->used--;
  sh_decref(k);
  sh_decref(v);
  return 1;
}

int64_t sh_dict_len(sh_obj *d) { return ((sh_dict_obj *)d)->used; }

bool sh_dict_next(sh_obj *o, int64_t *pos, sh_obj **key, sh_obj **value) {
  sh_dict_obj *d = (sh_dict_obj *)o;
  while (*pos < d->nentries) {
    dentry *e = &d->entries[(*pos)++];
    if (e->key) { *key = e->key; if (value) *value = e->value; return true; }
  }
  return false;
}

void sh_dict_clear(sh_obj *o) {
  sh_dict_obj *d = (sh_dict_obj *)o;
  dentry *ents = d->entries;
  int64_t n = d->nentries;
  free(d->index);
  d->entries = NULL; d->index = NULL; d->used = d->nentries = d->cap = 0; d->mask = 0;
  for (int64_t i = 0; i < n; i++) { sh_decref(ents[i].key); sh_decref(ents[i].value); }
  free(ents);
}

static void dict_destroy(sh_obj *o) { sh_dict_clear(o); }

int sh_set_add(sh_obj *s, sh_obj *item) { return sh_dict_set(s, item, SH_NONE); }
int sh_set_contains(sh_obj *s, sh_obj *item) {
  sh_obj *v = sh_dict_get(s, item);
  if (!v && sh_err_occurred()) return -1;
  return v != NULL;
}

static sh_obj *dict_repr(sh_obj *o) {
  bool set = o->type != &sh_dict_type && sh_is_subtype(o->type, &sh_set_type);
  if (set && sh_dict_len(o) == 0) return sh_str("set()");
  if (sh_repr_enter(o)) return sh_str("{...}");
  sh_buf b = {0};
  sh_buf_putc(&b, '{');
  sh_obj *k, *v;
  int first = 1;
  for (int64_t i = 0; sh_dict_next(o, &i, &k, &v); first = 0) {
    if (!first) sh_buf_puts(&b, ", ");
    if (sh_buf_put_obj(&b, k, true) < 0) goto fail;
    if (set) continue;
    sh_buf_puts(&b, ": ");
    if (sh_buf_put_obj(&b, v, true) < 0) goto fail;
  }
  sh_buf_putc(&b, '}');
  sh_repr_leave(o);
  return sh_buf_finish(&b);
fail:
  sh_repr_leave(o);
  sh_buf_free(&b);
  return NULL;
}

static int64_t dict_len(sh_obj *o) { return sh_dict_len(o); }
static int dict_truth(sh_obj *o) { return sh_dict_len(o) != 0; }
static int dict_contains(sh_obj *o, sh_obj *k) {
  sh_obj *v = sh_dict_get(o, k);
  if (!v && sh_err_occurred()) return -1;
  return v != NULL;
}

static sh_obj *dict_getitem(sh_obj *o, sh_obj *key) {
  sh_obj *v = sh_dict_get(o, key);
  if (v) return sh_incref(v);
  if (sh_err_occurred()) return NULL;
  sh_obj *r = sh_call_method(o, "__missing__", 1, &key, NULL);  /* defaultdict-like classes */
  if (r || !sh_err_matches(sh_AttributeError)) return r;
  sh_err_clear();
  sh_obj *exc = sh_call((sh_obj *)sh_KeyError, 1, &key, NULL);
  sh_raise_obj(exc);
  sh_decref(exc);
  return NULL;
}

static int dict_setitem(sh_obj *o, sh_obj *key, sh_obj *v) {
  if (v) return sh_dict_set(o, key, v);
  int r = sh_dict_del(o, key);
  if (r == 0) {
    sh_obj *exc = sh_call((sh_obj *)sh_KeyError, 1, &key, NULL);
    sh_raise_obj(exc);
    sh_decref(exc);
    return -1;
  }
  return r < 0 ? -1 : 0;
}

/* Iterator over keys, values or items of a dict (or items of a set). */
typedef struct { sh_obj head; sh_obj *d; int64_t pos; int kind; } dictiter;
static void dictiter_destroy(sh_obj *o) { sh_decref(((dictiter *)o)->d); }
static sh_obj *dictiter_next(sh_obj *o) {
  dictiter *it = (dictiter *)o;
  sh_obj *k, *v;
  if (!sh_dict_next(it->d, &it->pos, &k, &v)) return NULL;
  if (it->kind == 0) return sh_incref(k);
  if (it->kind == 1) return sh_incref(v);
  return sh_tuple_of(2, sh_incref(k), sh_incref(v));
}
static sh_type dictiter_type = {SH_TYPE_HEAD, .name = "dict_iterator", .size = sizeof(dictiter),
  .destroy = dictiter_destroy, .iter = self_iter, .next = dictiter_next};
sh_obj *sh_dict_iter(sh_obj *d, int kind) {
  dictiter *it = sh_new(&dictiter_type);
  it->d = sh_incref(d);
  it->kind = kind;
  return &it->head;
}
static sh_obj *dict_iter(sh_obj *o) { return sh_dict_iter(o, 0); }

static sh_obj *dict_compare(int op, sh_obj *a, sh_obj *b) {
  bool aset = sh_isinstance(a, &sh_set_type), bset = sh_isinstance(b, &sh_set_type);
  if (aset != bset || !(sh_isinstance(a, &sh_dict_type) || aset) ||
      !(sh_isinstance(b, &sh_dict_type) || bset))
    return sh_incref(SH_NOTIMPL);
  int64_t na = sh_dict_len(a), nb = sh_dict_len(b);
  sh_obj *k, *v;
  if (op == SH_EQ || op == SH_NE) {
    bool eq = na == nb;
    for (int64_t i = 0; eq && sh_dict_next(a, &i, &k, &v);) {
      sh_obj *w = sh_dict_get(b, k);
      if (!w) { if (sh_err_occurred()) return NULL; eq = false; break; }
      if (!aset) { int e = sh_eq(v, w); if (e < 0) return NULL; eq = e; }
    }
    return sh_bool(op == SH_EQ ? eq : !eq);
  }
  if (!aset) return sh_incref(SH_NOTIMPL);
  /* subset tests */
  sh_obj *x = a, *y = b;
  bool strict = op == SH_LT || op == SH_GT;
  if (op == SH_GT || op == SH_GE) { x = b; y = a; }
  if (sh_dict_len(x) > sh_dict_len(y) || (strict && sh_dict_len(x) == sh_dict_len(y)))
    return sh_bool(false);
  for (int64_t i = 0; sh_dict_next(x, &i, &k, &v);)
    if (!sh_dict_get(y, k)) return sh_bool(false);
  return sh_bool(true);
}

static sh_obj *set_binop(int op, sh_obj *a, sh_obj *b) {
  if (!sh_isinstance(a, &sh_set_type) || !sh_isinstance(b, &sh_set_type))
    return sh_incref(SH_NOTIMPL);
  sh_obj *r = sh_new(a->type == &sh_set_type ? &sh_set_type : a->type), *k;
  switch (op) {
  case SH_BITOR:
    for (int64_t i = 0; sh_dict_next(a, &i, &k, NULL);) sh_set_add(r, k);
    for (int64_t i = 0; sh_dict_next(b, &i, &k, NULL);) sh_set_add(r, k);
    return r;
  case SH_BITAND:
    for (int64_t i = 0; sh_dict_next(a, &i, &k, NULL);)
      if (sh_dict_get(b, k)) sh_set_add(r, k);
    return r;
  case SH_SUB:
    for (int64_t i = 0; sh_dict_next(a, &i, &k, NULL);)
      if (!sh_dict_get(b, k)) sh_set_add(r, k);
    return r;
  case SH_BITXOR:
    for (int64_t i = 0; sh_dict_next(a, &i, &k, NULL);)
      if (!sh_dict_get(b, k)) sh_set_add(r, k);
    for (int64_t i = 0; sh_dict_next(b, &i, &k, NULL);)
      if (!sh_dict_get(a, k)) sh_set_add(r, k);
    return r;
  }
  sh_decref(r);
  return sh_incref(SH_NOTIMPL);
}

static sh_obj *dict_binop(int op, sh_obj *a, sh_obj *b) {
  if (op != SH_BITOR || !sh_isinstance(a, &sh_dict_type) || !sh_isinstance(b, &sh_dict_type))
    return sh_incref(SH_NOTIMPL);
  sh_obj *r = sh_dict_new(), *k, *v;
  for (int64_t i = 0; sh_dict_next(a, &i, &k, &v);) sh_dict_set(r, k, v);
  for (int64_t i = 0; sh_dict_next(b, &i, &k, &v);) sh_dict_set(r, k, v);
  return r;
}

sh_type sh_dict_type = {SH_TYPE_HEAD, .name = "dict", .size = sizeof(sh_dict_obj),
  .destroy = dict_destroy, .repr = dict_repr, .len = dict_len, .truth = dict_truth,
  .contains = dict_contains, .getitem = dict_getitem, .setitem = dict_setitem,
  .iter = dict_iter, .compare = dict_compare, .binop = dict_binop, .hash = list_hash,
  .methods = sh_dict_methods, .help = "dict(**kwargs): an insertion-ordered mapping"};
sh_type sh_set_type = {SH_TYPE_HEAD, .name = "set", .size = sizeof(sh_dict_obj),
  .destroy = dict_destroy, .repr = dict_repr, .len = dict_len, .truth = dict_truth,
  .contains = dict_contains, .iter = dict_iter, .compare = dict_compare,
  .binop = set_binop, .hash = list_hash, .methods = sh_set_methods,
  .help = "set(iterable=()): an unordered collection of unique items"};

/* dict.keys() / values() / items() views. */
typedef struct { sh_obj head; sh_obj *d; int kind; } dictview;
static void dictview_destroy(sh_obj *o) { sh_decref(((dictview *)o)->d); }
static sh_obj *dictview_iter(sh_obj *o) { dictview *v = (dictview *)o; return sh_dict_iter(v->d, v->kind); }
static int64_t dictview_len(sh_obj *o) { return sh_dict_len(((dictview *)o)->d); }
static sh_obj *dictview_repr(sh_obj *o) {
  static const char *names[] = {"dict_keys", "dict_values", "dict_items"};
  sh_obj *l = sh_sequence_to_list(o);
  if (!l) return NULL;
  sh_obj *r = sh_repr(l);
  sh_decref(l);
  if (!r) return NULL;
  sh_obj *s = sh_strf("%s(%s)", names[((dictview *)o)->kind], sh_str_cstr(r));
  sh_decref(r);
  return s;
}
static int dictview_contains(sh_obj *o, sh_obj *item) {
  dictview *v = (dictview *)o;
  if (v->kind == 0) return dict_contains(v->d, item);
  sh_obj *it = dictview_iter(o), *x;
  int found = 0;
  while (!found && (x = sh_next(it))) { found = sh_eq(x, item); sh_decref(x); }
  sh_decref(it);
  return found;
}
sh_type sh_dictview_type = {SH_TYPE_HEAD, .name = "dict_view", .size = sizeof(dictview),
  .destroy = dictview_destroy, .iter = dictview_iter, .len = dictview_len,
  .repr = dictview_repr, .contains = dictview_contains};
sh_obj *sh_dictview_new(sh_obj *d, int kind) {
  dictview *v = sh_new(&sh_dictview_type);
  v->d = sh_incref(d);
  v->kind = kind;
  return &v->head;
}

/* ---- range, slice ---------------------------------------------------------------------- */
static int64_t range_len(sh_obj *o) {
  sh_range_obj *r = (sh_range_obj *)o;
  if (r->step > 0 && r->start < r->stop) return (r->stop - r->start + r->step - 1) / r->step;
  if (r->step < 0 && r->start > r->stop) return (r->start - r->stop - r->step - 1) / (-r->step);
  return 0;
}
static sh_obj *range_repr(sh_obj *o) {
  sh_range_obj *r = (sh_range_obj *)o;
  if (r->step == 1) return sh_strf("range(%lld, %lld)", (long long)r->start, (long long)r->stop);
  return sh_strf("range(%lld, %lld, %lld)", (long long)r->start, (long long)r->stop, (long long)r->step);
}
typedef struct { sh_obj head; int64_t cur, step, left; } rangeiter;
static sh_obj *rangeiter_next(sh_obj *o) {
  rangeiter *it = (rangeiter *)o;
  if (it->left <= 0) return NULL;
  it->left--;
  int64_t v = it->cur;
  it->cur += it->step;
  return sh_int(v);
}
static sh_type rangeiter_type = {SH_TYPE_HEAD, .name = "range_iterator",
  .size = sizeof(rangeiter), .iter = self_iter, .next = rangeiter_next};
static sh_obj *range_iter(sh_obj *o) {
  sh_range_obj *r = (sh_range_obj *)o;
  rangeiter *it = sh_new(&rangeiter_type);
  it->cur = r->start; it->step = r->step; it->left = range_len(o);
  return &it->head;
}
static sh_obj *range_getitem(sh_obj *o, sh_obj *key) {
  sh_range_obj *r = (sh_range_obj *)o;
  if (sh_is_int(key)) {
    int64_t i;
    if (norm_index(key, range_len(o), &i, "range object") < 0) return NULL;
    return sh_int(r->start + i * r->step);
  }
  if (key->type == &sh_slice_type) {
    int64_t start, stop, step, count;
    if (sh_slice_indices(key, range_len(o), &start, &stop, &step, &count) < 0) return NULL;
    sh_range_obj *n = sh_new(&sh_range_type);
    n->start = r->start + start * r->step;
    n->step = r->step * step;
    n->stop = n->start + count * n->step;
    return &n->head;
  }
  return sh_raise(sh_TypeError, "range indices must be integers or slices, not %s", sh_type_name(key));
}
static int range_contains(sh_obj *o, sh_obj *x) {
  sh_range_obj *r = (sh_range_obj *)o;
  if (!sh_is_int(x)) return 0;
  int64_t v = sh_int_value(x);
  if (r->step > 0 ? (v < r->start || v >= r->stop) : (v > r->start || v <= r->stop)) return 0;
  return (v - r->start) % r->step == 0;
}
static int range_truth(sh_obj *o) { return range_len(o) != 0; }
sh_type sh_range_type = {SH_TYPE_HEAD, .name = "range", .size = sizeof(sh_range_obj),
  .len = range_len, .repr = range_repr, .iter = range_iter, .getitem = range_getitem,
  .contains = range_contains, .truth = range_truth,
  .help = "range(stop) / range(start, stop[, step])"};

static void slice_destroy(sh_obj *o) {
  sh_slice_obj *s = (sh_slice_obj *)o;
  sh_decref(s->start); sh_decref(s->stop); sh_decref(s->step);
}
static sh_obj *slice_repr(sh_obj *o) {
  sh_slice_obj *s = (sh_slice_obj *)o;
  sh_obj *t = sh_tuple_of(3, sh_incref(s->start), sh_incref(s->stop), sh_incref(s->step));
  sh_obj *r = sh_repr(t);
  sh_decref(t);
  if (!r) return NULL;
  sh_obj *x = sh_strf("slice%s", sh_str_cstr(r));
  sh_decref(r);
  return x;
}
static sh_obj *slice_getattr(sh_obj *o, const char *name) {
  sh_slice_obj *s = (sh_slice_obj *)o;
  if (!strcmp(name, "start")) return sh_incref(s->start);
  if (!strcmp(name, "stop")) return sh_incref(s->stop);
  if (!strcmp(name, "step")) return sh_incref(s->step);
  return NULL;
}
sh_type sh_slice_type = {SH_TYPE_HEAD, .name = "slice", .size = sizeof(sh_slice_obj),
  .destroy = slice_destroy, .repr = slice_repr, .getattr = slice_getattr};

sh_obj *sh_slice_new(sh_obj *start, sh_obj *stop, sh_obj *step) {
  sh_slice_obj *s = sh_new(&sh_slice_type);
  s->start = sh_incref(start ? start : SH_NONE);
  s->stop = sh_incref(stop ? stop : SH_NONE);
  s->step = sh_incref(step ? step : SH_NONE);
  return &s->head;
}

int sh_slice_indices(sh_obj *slice, int64_t len, int64_t *pstart, int64_t *pstop,
                     int64_t *pstep, int64_t *count) {
  sh_slice_obj *s = (sh_slice_obj *)slice;
  int64_t step = 1, start, stop;
  if (s->step != SH_NONE) {
    if (sh_as_int(s->step, &step) < 0) return -1;
    if (step == 0) { sh_raise(sh_ValueError, "slice step cannot be zero"); return -1; }
  }
  int64_t lo = step < 0 ? -1 : 0, hi = step < 0 ? len - 1 : len;
  if (s->start == SH_NONE) start = step < 0 ? hi : lo;
  else {
    if (sh_as_int(s->start, &start) < 0) return -1;
    if (start < 0) { start += len; if (start < lo) start = lo; }
    else if (start > hi) start = hi;
  }
  if (s->stop == SH_NONE) stop = step < 0 ? lo : hi;
  else {
    if (sh_as_int(s->stop, &stop) < 0) return -1;
    if (stop < 0) { stop += len; if (stop < lo) stop = lo; }
    else if (stop > hi) stop = hi;
  }
  int64_t n = 0;
  if (step > 0 && start < stop) n = (stop - start + step - 1) / step;
  if (step < 0 && start > stop) n = (start - stop - step - 1) / (-step);
  *pstart = start; *pstop = stop; *pstep = step; *count = n;
  return 0;
}

/* ---- cells, builtins, bound methods, modules -------------------------------------------- */
static void cell_destroy(sh_obj *o) { sh_decref(((sh_cell_obj *)o)->v); }
sh_type sh_cell_type = {SH_TYPE_HEAD, .name = "cell", .size = sizeof(sh_cell_obj), .destroy = cell_destroy};

static void builtin_destroy(sh_obj *o) { sh_decref(((sh_builtin_obj *)o)->self); }
static sh_obj *builtin_call(sh_obj *o, int argc, sh_obj **argv, sh_obj *kw) {
  sh_builtin_obj *b = (sh_builtin_obj *)o;
  return b->fn(b->self, argc, argv, kw);
}
static sh_obj *builtin_repr(sh_obj *o) {
  sh_builtin_obj *b = (sh_builtin_obj *)o;
  if (b->self && b->self->type != &sh_module_type)
    return sh_strf("<built-in method %s of %s object>", b->name, sh_type_name(b->self));
  return sh_strf("<built-in function %s>", b->name);
}
static sh_obj *builtin_getattr(sh_obj *o, const char *name) {
  if (!strcmp(name, "__name__")) return sh_str(((sh_builtin_obj *)o)->name);
  if (!strcmp(name, "__doc__")) {
    const char *h = ((sh_builtin_obj *)o)->help;
    return h ? sh_str(h) : sh_none();
  }
  return NULL;
}
sh_type sh_builtin_type = {SH_TYPE_HEAD, .name = "builtin_function_or_method",
  .size = sizeof(sh_builtin_obj), .destroy = builtin_destroy, .call = builtin_call,
  .repr = builtin_repr, .getattr = builtin_getattr};

sh_obj *sh_builtin_new(const char *name, sh_cfunc fn, sh_obj *self, const char *sig,
                       const char *help) {
  sh_builtin_obj *b = sh_new(&sh_builtin_type);
  b->name = name; b->fn = fn; b->self = sh_incref(self); b->sig = sig; b->help = help;
  return &b->head;
}

static void method_destroy(sh_obj *o) {
  sh_method_obj *m = (sh_method_obj *)o;
  sh_decref(m->self); sh_decref(m->func);
}
static sh_obj *method_call(sh_obj *o, int argc, sh_obj **argv, sh_obj *kw) {
  sh_method_obj *m = (sh_method_obj *)o;
  sh_obj *small[8], **args = argc + 1 <= 8 ? small : malloc((argc + 1) * sizeof *args);
  args[0] = m->self;
  if (argc) memcpy(args + 1, argv, argc * sizeof *argv);
  sh_obj *r = sh_call(m->func, argc + 1, args, kw);
  if (args != small) free(args);
  return r;
}
static sh_obj *method_repr(sh_obj *o) {
  sh_method_obj *m = (sh_method_obj *)o;
  sh_obj *n = sh_getattr_opt(m->func, "__name__");
  sh_obj *r = sh_strf("<bound method %s of %s object>", n && sh_is_str(n) ? sh_str_cstr(n) : "?",
                      sh_type_name(m->self));
  sh_decref(n);
  return r;
}
static sh_obj *method_getattr(sh_obj *o, const char *name) {
  sh_method_obj *m = (sh_method_obj *)o;
  if (!strcmp(name, "__self__")) return sh_incref(m->self);
  if (!strcmp(name, "__func__")) return sh_incref(m->func);
  return sh_getattr_opt(m->func, name);
}
sh_type sh_method_type = {SH_TYPE_HEAD, .name = "method", .size = sizeof(sh_method_obj),
  .destroy = method_destroy, .call = method_call, .repr = method_repr, .getattr = method_getattr};

sh_obj *sh_method_new(sh_obj *func, sh_obj *self) {
  sh_method_obj *m = sh_new(&sh_method_type);
  m->func = sh_incref(func);
  m->self = sh_incref(self);
  return &m->head;
}

static void module_destroy(sh_obj *o) {
  sh_module_obj *m = (sh_module_obj *)o;
  sh_decref(m->dict); sh_decref(m->name);
}
static sh_obj *module_repr(sh_obj *o) {
  return sh_strf("<module '%s'>", sh_str_cstr(((sh_module_obj *)o)->name));
}
sh_type sh_module_type = {SH_TYPE_HEAD, .name = "module", .size = sizeof(sh_module_obj),
  .destroy = module_destroy, .repr = module_repr};

sh_obj *sh_module_new(const char *name) {
  sh_module_obj *m = sh_new(&sh_module_type);
  m->dict = sh_dict_new();
  m->name = sh_str(name);
  sh_dict_set_str(m->dict, "__name__", m->name);
  return &m->head;
}
int sh_module_add(sh_obj *mod, const char *name, sh_obj *value) {
  if (!value) return -1;
  int r = sh_dict_set_str(((sh_module_obj *)mod)->dict, name, value);
  sh_decref(value);
  return r;
}
int sh_module_add_func(sh_obj *mod, const char *name, sh_cfunc fn, const char *sig,
                       const char *help) {
  return sh_module_add(mod, name, sh_builtin_new(name, fn, NULL, sig, help));
}
int sh_module_add_funcs(sh_obj *mod, const sh_method *t) {
  for (; t->name; t++) sh_module_add_func(mod, t->name, t->fn, t->sig, t->help);
  return 0;
}
int sh_module_add_sub(sh_obj *mod, const char *name, sh_obj *sub) {
  return sh_module_add(mod, name, sub);
}

/* ---- exceptions ------------------------------------------------------------------------- */
static sh_obj *pending;   /* the raised, not yet handled exception instance */

sh_type *sh_BaseException, *sh_Exception, *sh_SystemExit, *sh_KeyboardInterrupt,
    *sh_StopIteration, *sh_ArithmeticError, *sh_ZeroDivisionError, *sh_OverflowError,
    *sh_AssertionError, *sh_AttributeError, *sh_ImportError, *sh_ModuleNotFoundError,
    *sh_LookupError, *sh_IndexError, *sh_KeyError, *sh_NameError, *sh_UnboundLocalError,
    *sh_OSError, *sh_FileNotFoundError, *sh_RuntimeError, *sh_NotImplementedError,
    *sh_RecursionError, *sh_SyntaxError, *sh_TypeError, *sh_ValueError, *sh_EOFError,
    *sh_UnicodeError;

bool sh_err_occurred(void) { return pending != NULL; }
sh_obj *sh_err_get(void) { return pending; }
bool sh_err_matches(sh_type *t) { return pending && sh_isinstance(pending, t); }
sh_obj *sh_err_fetch(void) { sh_obj *e = pending; pending = NULL; return e; }
void sh_err_restore(sh_obj *exc) { sh_obj *old = pending; pending = exc; sh_decref(old); }
void sh_err_clear(void) { sh_clear(&pending); }

sh_obj *sh_exc_new(sh_type *t, sh_obj *args) {
  sh_inst *e = sh_new(t);
  e->args = args;
  e->tb = sh_list_new(0);
  return &e->head;
}

sh_obj *sh_raise(sh_type *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *msg = NULL;
  if (vasprintf(&msg, fmt, ap) < 0) abort();
  va_end(ap);
  sh_err_restore(sh_exc_new(t, sh_tuple_of(1, sh_str(msg))));
  free(msg);
  return NULL;
}

sh_obj *sh_raise_obj(sh_obj *exc) {
  if (sh_isinstance(exc, &sh_type_type)) {
    sh_type *t = (sh_type *)exc;
    if (!sh_is_subtype(t, sh_BaseException))
      return sh_raise(sh_TypeError, "exceptions must derive from BaseException");
    sh_obj *inst = sh_call(exc, 0, NULL, NULL);
    if (!inst) return NULL;
    sh_err_restore(inst);
    return NULL;
  }
  if (!sh_isinstance(exc, sh_BaseException))
    return sh_raise(sh_TypeError, "exceptions must derive from BaseException");
  sh_err_restore(sh_incref(exc));
  return NULL;
}

int sh_check_interrupt(void) {
  if (!sh_interrupted) return 0;
  sh_interrupted = 0;
  sh_err_restore(sh_exc_new(sh_KeyboardInterrupt, sh_tuple_new(0)));
  return -1;
}

static sh_obj *exc_str(sh_obj *o) {
  sh_inst *e = (sh_inst *)o;
  if (!e->args || SH_TUPLE_N(e->args) == 0) return sh_str("");
  if (SH_TUPLE_N(e->args) == 1) {
    if (sh_isinstance(o, sh_KeyError)) return sh_repr(SH_TUPLE_ITEMS(e->args)[0]);
    return sh_to_str(SH_TUPLE_ITEMS(e->args)[0]);
  }
  return sh_repr(e->args);
}

static sh_obj *exc_repr(sh_obj *o) {
  sh_inst *e = (sh_inst *)o;
  sh_obj *r = e->args ? sh_repr(e->args) : sh_str("()");
  if (!r) return NULL;
  sh_obj *s;
  if (e->args && SH_TUPLE_N(e->args) == 1)  /* "('x',)" -> "('x')" */
    s = sh_strf("%s(%.*s)", sh_type_name(o), (int)sh_str_len(r) - 3, sh_str_cstr(r) + 1);
  else
    s = sh_strf("%s%s", sh_type_name(o), sh_str_cstr(r));
  sh_decref(r);
  return s;
}

char *sh_exc_message(sh_obj *exc) {
  sh_obj *s = sh_to_str(exc);
  char *out = NULL;
  if (!s) { sh_err_clear(); return strdup(sh_type_name(exc)); }
  if (sh_str_len(s)) { if (asprintf(&out, "%s: %s", sh_type_name(exc), sh_str_cstr(s)) < 0) abort(); }
  else out = strdup(sh_type_name(exc));
  sh_decref(s);
  return out;
}

/* ---- classes and instances --------------------------------------------------------------- */
static sh_obj *lookup_class_attr(sh_type *t, sh_obj *name);

/* Find a dunder method defined by a class (Python or native table); borrowed. */
static sh_obj *find_dunder(sh_obj *o, const char *name) {
  if (!(o->type->flags & SH_TF_INSTANCE)) return NULL;
  sh_obj *n = sh_intern(name);
  sh_obj *f = lookup_class_attr(o->type, n);
  sh_decref(n);
  return f;
}

static sh_obj *call_dunder(sh_obj *o, sh_obj *f, int argc, sh_obj **argv) {
  sh_obj *args[4] = {o};
  for (int i = 0; i < argc; i++) args[i + 1] = argv[i];
  return sh_call(f, argc + 1, args, NULL);
}

static sh_obj *inst_repr(sh_obj *o) {
  sh_obj *f = find_dunder(o, "__repr__");
  if (f) return call_dunder(o, f, 0, NULL);
  if (sh_isinstance(o, sh_BaseException)) return exc_repr(o);
  sh_obj *m = ((sh_type *)o->type)->dict ? sh_dict_get_str(o->type->dict, "__module__") : NULL;
  return sh_strf("<%s.%s object at %p>", m && sh_is_str(m) ? sh_str_cstr(m) : "__main__",
                 sh_type_name(o), (void *)o);
}
static sh_obj *inst_str(sh_obj *o) {
  sh_obj *f = find_dunder(o, "__str__");
  if (f) return call_dunder(o, f, 0, NULL);
  if (sh_isinstance(o, sh_BaseException)) return exc_str(o);
  return inst_repr(o);
}
static void inst_destroy(sh_obj *o) {
  sh_inst *i = (sh_inst *)o;
  sh_decref(i->dict); sh_decref(i->args); sh_decref(i->tb);
}
static sh_obj *inst_call(sh_obj *o, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *f = find_dunder(o, "__call__");
  if (!f) return sh_raise(sh_TypeError, "'%s' object is not callable", sh_type_name(o));
  sh_obj *m = sh_method_new(f, o);
  sh_obj *r = sh_call(m, argc, argv, kw);
  sh_decref(m);
  return r;
}
static sh_obj *inst_binop(int op, sh_obj *a, sh_obj *b) {
  sh_obj *f;
  if ((f = find_dunder(a, binop_dunder[op]))) {
    sh_obj *r = call_dunder(a, f, 1, &b);
    if (r != SH_NOTIMPL) return r;
    sh_decref(r);
  }
  if (a != b && (f = find_dunder(b, binop_rdunder[op]))) return call_dunder(b, f, 1, &a);
  return sh_incref(SH_NOTIMPL);
}
static sh_obj *inst_unop(int op, sh_obj *a) {
  static const char *names[] = {"__neg__", "__pos__", "__invert__"};
  sh_obj *f = find_dunder(a, names[op]);
  return f ? call_dunder(a, f, 0, NULL) : sh_incref(SH_NOTIMPL);
}
static sh_obj *inst_compare(int op, sh_obj *a, sh_obj *b) {
  static const int swapped[] = {SH_GT, SH_GE, SH_EQ, SH_NE, SH_LT, SH_LE};
  sh_obj *f;
  if ((f = find_dunder(a, cmp_dunder[op]))) {
    sh_obj *r = call_dunder(a, f, 1, &b);
    if (r != SH_NOTIMPL) return r;
    sh_decref(r);
  }
  if ((f = find_dunder(b, cmp_dunder[swapped[op]]))) return call_dunder(b, f, 1, &a);
  if (op == SH_NE && (f = find_dunder(a, "__eq__"))) {
    sh_obj *r = call_dunder(a, f, 1, &b);
    if (!r || r == SH_NOTIMPL) return r;
    int t = sh_truth(r);
    sh_decref(r);
    return t < 0 ? NULL : sh_bool(!t);
  }
  return sh_incref(SH_NOTIMPL);
}
static sh_obj *inst_getitem(sh_obj *o, sh_obj *key) {
  sh_obj *f = find_dunder(o, "__getitem__");
  if (!f) return sh_raise(sh_TypeError, "'%s' object is not subscriptable", sh_type_name(o));
  return call_dunder(o, f, 1, &key);
}
static int inst_setitem(sh_obj *o, sh_obj *key, sh_obj *v) {
  sh_obj *args[2] = {key, v};
  sh_obj *f = find_dunder(o, v ? "__setitem__" : "__delitem__");
  if (!f) {
    sh_raise(sh_TypeError, "'%s' object does not support item %s", sh_type_name(o), v ? "assignment" : "deletion");
    return -1;
  }
  sh_obj *r = call_dunder(o, f, v ? 2 : 1, args);
  sh_decref(r);
  return r ? 0 : -1;
}
static int64_t inst_len(sh_obj *o) {
  sh_obj *f = find_dunder(o, "__len__");
  if (!f) { sh_raise(sh_TypeError, "object of type '%s' has no len()", sh_type_name(o)); return -1; }
  sh_obj *r = call_dunder(o, f, 0, NULL);
  if (!r) return -1;
  int64_t n = -1;
  sh_as_int(r, &n);
  sh_decref(r);
  return n;
}
static int inst_truth(sh_obj *o) {
  sh_obj *f = find_dunder(o, "__bool__");
  if (f) {
    sh_obj *r = call_dunder(o, f, 0, NULL);
    if (!r) return -1;
    int t = sh_truth(r);
    sh_decref(r);
    return t;
  }
  if (find_dunder(o, "__len__")) { int64_t n = inst_len(o); return n < 0 ? -1 : n != 0; }
  return 1;
}
static sh_obj *getitem_iter_new(sh_obj *o);
static sh_obj *inst_iter(sh_obj *o) {
  sh_obj *f = find_dunder(o, "__iter__");
  if (f) return call_dunder(o, f, 0, NULL);
  if (find_dunder(o, "__getitem__")) return getitem_iter_new(o);
  return sh_raise(sh_TypeError, "'%s' object is not iterable", sh_type_name(o));
}
static sh_obj *inst_next(sh_obj *o) {
  sh_obj *f = find_dunder(o, "__next__");
  if (!f) return sh_raise(sh_TypeError, "'%s' object is not an iterator", sh_type_name(o));
  sh_obj *r = call_dunder(o, f, 0, NULL);
  if (!r && sh_err_matches(sh_StopIteration)) sh_err_clear();
  return r;
}
static int inst_contains(sh_obj *o, sh_obj *item) {
  sh_obj *f = find_dunder(o, "__contains__");
  if (!f) {
    sh_obj *it = sh_iter(o), *x;
    if (!it) return -1;
    int found = 0;
    while (!found && (x = sh_next(it))) { found = sh_eq(x, item); sh_decref(x); }
    sh_decref(it);
    return sh_err_occurred() ? -1 : found;
  }
  sh_obj *r = call_dunder(o, f, 1, &item);
  if (!r) return -1;
  int t = sh_truth(r);
  sh_decref(r);
  return t;
}
static int inst_hash(sh_obj *o, int64_t *out) {
  sh_obj *f = find_dunder(o, "__hash__");
  if (!f) { *out = (int64_t)(intptr_t)o >> 4; return 0; }
  sh_obj *r = call_dunder(o, f, 0, NULL);
  if (!r) return -1;
  int rc = sh_as_int(r, out);
  sh_decref(r);
  return rc;
}
static sh_obj *inst_enter(sh_obj *o) {
  sh_obj *f = find_dunder(o, "__enter__");
  if (!f) return sh_raise(sh_TypeError, "'%s' object does not support the context manager protocol", sh_type_name(o));
  return call_dunder(o, f, 0, NULL);
}
static int inst_exit(sh_obj *o, sh_obj *exc) {
  sh_obj *f = find_dunder(o, "__exit__");
  if (!f) return 0;
  sh_obj *args[3] = {exc ? (sh_obj *)exc->type : SH_NONE, exc ? exc : SH_NONE, SH_NONE};
  sh_obj *r = call_dunder(o, f, 3, args);
  if (!r) return -1;
  int t = sh_truth(r);
  sh_decref(r);
  return t;
}

/* T(...) for classes whose instances are sh_inst. */
static sh_obj *inst_construct(sh_obj *cls, int argc, sh_obj **argv, sh_obj *kw) {
  sh_type *t = (sh_type *)cls;
  sh_inst *o = sh_new(t);
  if (sh_is_subtype(t, sh_BaseException)) {
    o->args = sh_tuple_new(argc);
    for (int i = 0; i < argc; i++) SH_TUPLE_ITEMS(o->args)[i] = sh_incref(argv[i]);
    o->tb = sh_list_new(0);
  }
  sh_obj *init = find_dunder(&o->head, "__init__");
  if (init) {
    sh_obj *self = &o->head;
    sh_obj *m = sh_method_new(init, self);
    sh_obj *r = sh_call(m, argc, argv, kw);
    sh_decref(m);
    if (!r) { sh_decref(self); return NULL; }
    if (r != SH_NONE) {
      sh_decref(r); sh_decref(self);
      return sh_raise(sh_TypeError, "__init__() should return None, not '%s'", sh_type_name(r));
    }
    sh_decref(r);
  } else if ((argc || kw) && !sh_is_subtype(t, sh_BaseException)) {
    sh_decref(&o->head);
    return sh_raise(sh_TypeError, "%s() takes no arguments", t->name);
  }
  return &o->head;
}

static sh_obj *exc_getattr(sh_obj *o, const char *name) {
  sh_inst *e = (sh_inst *)o;
  if (!strcmp(name, "args") && e->args) return sh_incref(e->args);
  if (!strcmp(name, "code") && sh_isinstance(o, sh_SystemExit) && e->args)
    return sh_incref(SH_TUPLE_N(e->args) ? SH_TUPLE_ITEMS(e->args)[0] : SH_NONE);
  return NULL;
}

static int exc_setattr(sh_obj *o, const char *name, sh_obj *v) {
  sh_inst *e = (sh_inst *)o;
  if (!strcmp(name, "args")) {
    sh_obj *t = sh_sequence_to_tuple(v);
    if (!t) return -1;
    sh_decref(e->args);
    e->args = t;
    return 0;
  }
  return 1;
}

static void type_fill_instance_hooks(sh_type *t) {
  t->size = sizeof(sh_inst);
  t->destroy = inst_destroy; t->repr = inst_repr; t->str = inst_str; t->call = inst_call;
  t->binop = inst_binop; t->unop = inst_unop; t->compare = inst_compare;
  t->getitem = inst_getitem; t->setitem = inst_setitem; t->len = inst_len;
  t->truth = inst_truth; t->iter = inst_iter; t->next = inst_next;
  t->contains = inst_contains; t->hash = inst_hash; t->enter = inst_enter;
  t->exit = inst_exit; t->construct = inst_construct;
  t->getattr = exc_getattr; t->setattr = exc_setattr;
}

sh_type *sh_heap_type_new(const char *name, sh_type *base, sh_obj *dict) {
  if (base && !(base->flags & SH_TF_INSTANCE) && base != &sh_object_type)
    return (sh_type *)sh_raise(sh_TypeError, "cannot subclass native type '%s'", base->name);
  sh_type *t = calloc(1, sizeof(sh_type));
  t->head.refcnt = 1;
  t->head.type = &sh_type_type;
  t->name = strdup(name);
  t->base = base == &sh_object_type ? NULL : base;
  if (t->base) SH_INCREF(t->base);
  t->dict = dict ? sh_incref(dict) : sh_dict_new();
  t->flags = SH_TF_HEAP | SH_TF_INSTANCE | SH_TF_READY;
  type_fill_instance_hooks(t);
  return t;
}

sh_type *sh_class_new(const char *name, sh_type *base, const sh_method *methods, const char *help) {
  sh_type *t = sh_heap_type_new(name, base, NULL);
  if (!t) return NULL;
  t->help = help;
  for (const sh_method *m = methods; m && m->name; m++) {
    sh_obj *f = sh_builtin_new(m->name, m->fn, NULL, m->sig, m->help);
    ((sh_builtin_obj *)f)->unbound = true;
    sh_dict_set_str(t->dict, m->name, f);
    sh_decref(f);
  }
  return t;
}

sh_type *sh_exc_class_new(const char *name, sh_type *base) {
  return sh_heap_type_new(name, base ? base : sh_Exception, NULL);
}

/* Class attribute lookup along the base chain; borrowed. Native types get their method
 * tables copied into a dict on first use. */
static void type_ready(sh_type *t) {
  if (t->flags & SH_TF_READY) return;
  t->flags |= SH_TF_READY;
  if (!t->dict) t->dict = sh_dict_new();
  for (const sh_method *m = t->methods; m && m->name; m++) {
    sh_obj *f = sh_builtin_new(m->name, m->fn, NULL, m->sig, m->help);
    ((sh_builtin_obj *)f)->unbound = true;
    sh_dict_set_str(t->dict, m->name, f);
    sh_decref(f);
  }
}

static sh_obj *lookup_class_attr(sh_type *t, sh_obj *name) {
  for (; t; t = t->base) {
    type_ready(t);
    sh_obj *v = sh_dict_get(t->dict, name);
    if (v) return v;
  }
  return NULL;
}

sh_obj *sh_class_lookup(sh_type *t, sh_obj *name) { return lookup_class_attr(t, name); }

sh_obj *sh_bind(sh_obj *v, sh_obj *o) {
  if (v->type == &sh_func_type) return sh_method_new(v, o);
  if (v->type == &sh_builtin_type && ((sh_builtin_obj *)v)->unbound) {
    sh_builtin_obj *b = (sh_builtin_obj *)v;
    return sh_builtin_new(b->name, b->fn, o, b->sig, b->help);
  }
  if (v->type == &sh_staticmethod_type) return sh_incref(((sh_cell_obj *)v)->v);
  if (v->type == &sh_classmethod_type) return sh_method_new(((sh_cell_obj *)v)->v, (sh_obj *)o->type);
  if (v->type == &sh_property_type) {
    sh_obj *get = ((sh_cell_obj *)v)->v;
    return sh_call(get, 1, &o, NULL);
  }
  return sh_incref(v);
}

static void type_destroy(sh_obj *o) {
  sh_type *t = (sh_type *)o;
  sh_decref(t->dict);
  if (t->flags & SH_TF_HEAP) { SH_DECREF(t->base); free((char *)t->name); }
}
static sh_obj *type_repr(sh_obj *o) {
  sh_type *t = (sh_type *)o;
  if (t->flags & SH_TF_HEAP && !sh_is_subtype(t, sh_BaseException)) {
    sh_obj *m = sh_dict_get_str(t->dict, "__module__");
    return sh_strf("<class '%s.%s'>", m && sh_is_str(m) ? sh_str_cstr(m) : "__main__", t->name);
  }
  return sh_strf("<class '%s'>", t->name);
}
static sh_obj *type_call(sh_obj *o, int argc, sh_obj **argv, sh_obj *kw) {
  sh_type *t = (sh_type *)o;
  for (sh_type *c = t; c; c = c->base)
    if (c->construct) return c->construct(o, argc, argv, kw);
  return sh_raise(sh_TypeError, "cannot create '%s' instances", t->name);
}
static sh_obj *type_getattr(sh_obj *o, const char *name) {
  sh_type *t = (sh_type *)o;
  if (!strcmp(name, "__name__")) return sh_str(t->name);
  if (!strcmp(name, "__doc__") && t->help) return sh_str(t->help);
  if (!strcmp(name, "__base__") || !strcmp(name, "__bases__")) {
    sh_obj *b = t->base ? (sh_obj *)t->base : (sh_obj *)&sh_object_type;
    return name[6] == 's' ? sh_tuple_of(1, sh_incref(b)) : sh_incref(b);
  }
  sh_obj *n = sh_intern(name);
  sh_obj *v = lookup_class_attr(t, n);
  sh_decref(n);
  if (v && v->type == &sh_staticmethod_type) v = ((sh_cell_obj *)v)->v;
  if (v && v->type == &sh_classmethod_type) return sh_method_new(((sh_cell_obj *)v)->v, o);
  if (!v && !strcmp(name, "__doc__")) return sh_none();
  return sh_incref(v);
}
static int type_setattr(sh_obj *o, const char *name, sh_obj *v) {
  sh_type *t = (sh_type *)o;
  if (!(t->flags & SH_TF_HEAP)) {
    sh_raise(sh_TypeError, "cannot set '%s' attribute of immutable type '%s'", name, t->name);
    return -1;
  }
  if (!v) {
    sh_obj *k = sh_str(name);
    int r = sh_dict_del(t->dict, k);
    sh_decref(k);
    return r > 0 ? 0 : -1;
  }
  return sh_dict_set_str(t->dict, name, v);
}
static int type_hash(sh_obj *o, int64_t *out) { *out = (int64_t)(intptr_t)o >> 4; return 0; }
sh_type sh_type_type = {SH_TYPE_HEAD, .name = "type", .destroy = type_destroy,
  .repr = type_repr, .call = type_call, .getattr = type_getattr, .setattr = type_setattr,
  .hash = type_hash};
static sh_obj *object_construct(sh_obj *cls, int argc, sh_obj **argv, sh_obj *kw) {
  return inst_construct((sh_obj *)cls, argc, argv, kw);
}
sh_type sh_object_type = {SH_TYPE_HEAD, .name = "object", .construct = object_construct};

/* ---- generic operations ----------------------------------------------------------------- */
/* Guard against infinite recursion in repr of self-containing containers. */
static sh_obj *repr_stack[64];
static int repr_depth;
bool sh_repr_enter(sh_obj *o) {
  for (int i = 0; i < repr_depth && i < 64; i++) if (repr_stack[i] == o) return true;
  if (repr_depth < 64) repr_stack[repr_depth] = o;
  repr_depth++;
  return false;
}
void sh_repr_leave(sh_obj *o) { repr_depth--; }

sh_obj *sh_repr(sh_obj *o) {
  if (repr_depth > 10000) return sh_raise(sh_RecursionError, "maximum recursion depth exceeded while getting the repr of an object");
  for (sh_type *t = o->type; t; t = t->base)
    if (t->repr) {
      sh_obj *r = t->repr(o);
      if (r && !sh_is_str(r)) {
        sh_decref(r);
        return sh_raise(sh_TypeError, "__repr__ returned non-string (type %s)", sh_type_name(r));
      }
      return r;
    }
  return sh_strf("<%s object at %p>", sh_type_name(o), (void *)o);
}

sh_obj *sh_to_str(sh_obj *o) {
  if (sh_is_str(o)) return sh_incref(o);
  for (sh_type *t = o->type; t; t = t->base) {
    if (t->str) {
      sh_obj *r = t->str(o);
      if (r && !sh_is_str(r)) {
        sh_decref(r);
        return sh_raise(sh_TypeError, "__str__ returned non-string (type %s)", sh_type_name(r));
      }
      return r;
    }
    if (t->repr) break;
  }
  return sh_repr(o);
}

int sh_fprint(FILE *f, sh_obj *o, bool use_repr) {
  sh_obj *s = use_repr ? sh_repr(o) : sh_to_str(o);
  if (!s) return -1;
  fwrite(sh_str_cstr(s), 1, sh_str_len(s), f);
  sh_decref(s);
  return 0;
}

static sh_obj *instance_dict(sh_obj *o) {
  return (o->type->flags & SH_TF_INSTANCE) ? ((sh_inst *)o)->dict : NULL;
}

/* The evaluator's attribute lookup, by interned name. */
sh_obj *sh_getattr_s(sh_obj *o, sh_obj *name, bool raise) {
  const char *cname = sh_str_cstr(name);
  sh_type *t = o->type;
  for (sh_type *c = t; c; c = c->base)
    if (c->getattr) {
      sh_obj *v = c->getattr(o, cname);
      if (v || sh_err_occurred()) return v;
      break;
    }
  sh_obj *d = instance_dict(o);
  if (d) { sh_obj *v = sh_dict_get(d, name); if (v) return sh_incref(v); }
  if (t == &sh_module_type) {
    sh_obj *v = sh_dict_get(((sh_module_obj *)o)->dict, name);
    if (v) return sh_incref(v);
  } else if (t != &sh_type_type) {
    sh_obj *v = lookup_class_attr(t, name);
    if (v) return sh_bind(v, o);
  }
  if (!strcmp(cname, "__class__")) return sh_incref((sh_obj *)t);
  if (!strcmp(cname, "__dict__")) {
    if (d) return sh_incref(d);
    if (t == &sh_module_type) return sh_incref(((sh_module_obj *)o)->dict);
  }
  if (!raise) return NULL;
  if (t == &sh_module_type)
    return sh_raise(sh_AttributeError, "module '%s' has no attribute '%s'",
                    sh_str_cstr(((sh_module_obj *)o)->name), cname);
  if (t == &sh_type_type)
    return sh_raise(sh_AttributeError, "type object '%s' has no attribute '%s'",
                    ((sh_type *)o)->name, cname);
  return sh_raise(sh_AttributeError, "'%s' object has no attribute '%s'", t->name, cname);
}

sh_obj *sh_getattr(sh_obj *o, const char *name) {
  sh_obj *n = sh_intern(name);
  sh_obj *r = sh_getattr_s(o, n, true);
  sh_decref(n);
  return r;
}
sh_obj *sh_getattr_opt(sh_obj *o, const char *name) {
  sh_obj *n = sh_intern(name);
  sh_obj *r = sh_getattr_s(o, n, false);
  sh_decref(n);
  return r;
}

int sh_setattr_s(sh_obj *o, sh_obj *name, sh_obj *v) {
  const char *cname = sh_str_cstr(name);
  for (sh_type *c = o->type; c; c = c->base)
    if (c->setattr) {
      int r = c->setattr(o, cname, v);
      if (r <= 0) return r;
      break;
    }
  if (o->type->flags & SH_TF_INSTANCE) {
    sh_inst *i = (sh_inst *)o;
    if (!i->dict) i->dict = sh_dict_new();
    if (v) return sh_dict_set(i->dict, name, v);
    int r = sh_dict_del(i->dict, name);
    if (r > 0) return 0;
    if (r == 0) sh_raise(sh_AttributeError, "'%s' object has no attribute '%s'", sh_type_name(o), cname);
    return -1;
  }
  if (o->type == &sh_module_type) {
    sh_obj *d = ((sh_module_obj *)o)->dict;
    if (v) return sh_dict_set(d, name, v);
    return sh_dict_del(d, name) > 0 ? 0 : -1;
  }
  if (o->type == &sh_func_type) return sh_func_setattr(o, name, v);
  sh_raise(sh_AttributeError, "'%s' object has no attribute '%s'", sh_type_name(o), cname);
  return -1;
}

int sh_setattr(sh_obj *o, const char *name, sh_obj *value) {
  sh_obj *n = sh_intern(name);
  int r = sh_setattr_s(o, n, value);
  sh_decref(n);
  return r;
}
int sh_delattr(sh_obj *o, const char *name) { return sh_setattr(o, name, NULL); }

sh_obj *sh_call(sh_obj *f, int argc, sh_obj **argv, sh_obj *kw) {
  if (sh_interrupted && sh_check_interrupt() < 0) return NULL;
  if (f->type == &sh_func_type) return sh_func_call(f, argc, argv, kw);
  if (f->type == &sh_builtin_type) {
    sh_builtin_obj *b = (sh_builtin_obj *)f;
    if (b->unbound && !b->self) {   /* Class.method(obj, ...) */
      if (argc < 1) return sh_raise(sh_TypeError, "%s() needs an argument", b->name);
      return b->fn(argv[0], argc - 1, argv + 1, kw);
    }
    return b->fn(b->self, argc, argv, kw);
  }
  for (sh_type *t = f->type; t; t = t->base)
    if (t->call) return t->call(f, argc, argv, kw);
  return sh_raise(sh_TypeError, "'%s' object is not callable", sh_type_name(f));
}

sh_obj *sh_call_method(sh_obj *o, const char *name, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *m = sh_getattr(o, name);
  if (!m) return NULL;
  sh_obj *r = sh_call(m, argc, argv, kw);
  sh_decref(m);
  return r;
}

static sh_obj *try_binop(sh_type *t, int op, sh_obj *a, sh_obj *b) {
  for (; t; t = t->base)
    if (t->binop) return t->binop(op, a, b);
  return sh_incref(SH_NOTIMPL);
}

sh_obj *sh_binop(int op, sh_obj *a, sh_obj *b) {
  sh_obj *r = try_binop(a->type, op, a, b);
  if (r != SH_NOTIMPL) return r;
  sh_decref(r);
  if (b->type != a->type) {
    r = try_binop(b->type, op, a, b);
    if (r != SH_NOTIMPL) return r;
    sh_decref(r);
  }
  return sh_raise(sh_TypeError, "unsupported operand type(s) for %s: '%s' and '%s'",
                  sh_binop_symbol[op], sh_type_name(a), sh_type_name(b));
}

sh_obj *sh_unop(int op, sh_obj *a) {
  static const char *sym[] = {"unary -", "unary +", "unary ~"};
  for (sh_type *t = a->type; t; t = t->base)
    if (t->unop) {
      sh_obj *r = t->unop(op, a);
      if (r != SH_NOTIMPL) return r;
      sh_decref(r);
      break;
    }
  return sh_raise(sh_TypeError, "bad operand type for %s: '%s'", sym[op], sh_type_name(a));
}

static sh_obj *try_compare(sh_type *t, int op, sh_obj *a, sh_obj *b) {
  for (; t; t = t->base)
    if (t->compare) return t->compare(op, a, b);
  return sh_incref(SH_NOTIMPL);
}

sh_obj *sh_compare(int op, sh_obj *a, sh_obj *b) {
  static const int swapped[] = {SH_GT, SH_GE, SH_EQ, SH_NE, SH_LT, SH_LE};
  sh_obj *r = try_compare(a->type, op, a, b);
  if (r != SH_NOTIMPL) return r;
  sh_decref(r);
  if (b->type != a->type) {
    r = try_compare(b->type, swapped[op], b, a);
    if (r != SH_NOTIMPL) return r;
    sh_decref(r);
  }
  if (op == SH_EQ) return sh_bool(a == b);
  if (op == SH_NE) return sh_bool(a != b);
  return sh_raise(sh_TypeError, "'%s' not supported between instances of '%s' and '%s'",
                  sh_cmpop_symbol[op], sh_type_name(a), sh_type_name(b));
}

int sh_compare_bool(int op, sh_obj *a, sh_obj *b) {
  sh_obj *r = sh_compare(op, a, b);
  if (!r) return -1;
  int t = r == sh_true ? 1 : r == sh_false ? 0 : sh_truth(r);
  sh_decref(r);
  return t;
}

int sh_eq(sh_obj *a, sh_obj *b) {
  if (a == b) return 1;
  if (sh_is_int(a) && sh_is_int(b)) return sh_int_value(a) == sh_int_value(b);
  if (sh_is_str(a) && sh_is_str(b))
    return sh_str_len(a) == sh_str_len(b) && !memcmp(sh_str_cstr(a), sh_str_cstr(b), sh_str_len(a));
  return sh_compare_bool(SH_EQ, a, b);
}

int sh_truth(sh_obj *o) {
  if (o == sh_true) return 1;
  if (o == sh_false || o == SH_NONE) return 0;
  for (sh_type *t = o->type; t; t = t->base) {
    if (t->truth) return t->truth(o);
    if (t->len) { int64_t n = t->len(o); return n < 0 ? -1 : n != 0; }
  }
  return 1;
}
int sh_as_bool(sh_obj *o) { return sh_truth(o); }

int sh_hash(sh_obj *o, int64_t *out) {
  if (sh_is_str(o)) { *out = str_hash_value((sh_str_obj *)o); return 0; }
  for (sh_type *t = o->type; t; t = t->base)
    if (t->hash) return t->hash(o, out);
  *out = (int64_t)(intptr_t)o >> 4;
  return 0;
}

sh_obj *sh_getitem(sh_obj *o, sh_obj *key) {
  for (sh_type *t = o->type; t; t = t->base)
    if (t->getitem) return t->getitem(o, key);
  if (o->type == &sh_type_type)   /* list[int] style annotations: return the class */
    return sh_incref(o);
  return sh_raise(sh_TypeError, "'%s' object is not subscriptable", sh_type_name(o));
}

int sh_setitem(sh_obj *o, sh_obj *key, sh_obj *value) {
  for (sh_type *t = o->type; t; t = t->base)
    if (t->setitem) return t->setitem(o, key, value);
  sh_raise(sh_TypeError, value ? "'%s' object does not support item assignment"
                               : "'%s' object doesn't support item deletion", sh_type_name(o));
  return -1;
}

/* Iterating a type that has getitem but no iter hook: o[0], o[1], ... until IndexError. */
typedef struct { sh_obj head; sh_obj *seq; int64_t i; } getitem_iter;
static void getitem_iter_destroy(sh_obj *o) { sh_decref(((getitem_iter *)o)->seq); }
static sh_obj *getitem_iter_next(sh_obj *o) {
  getitem_iter *it = (getitem_iter *)o;
  if (!it->seq) return NULL;
  sh_obj *k = sh_int(it->i++);
  sh_obj *v = sh_getitem(it->seq, k);
  sh_decref(k);
  if (!v && (sh_err_matches(sh_IndexError) || sh_err_matches(sh_StopIteration))) {
    sh_err_clear();
    sh_clear(&it->seq);
  }
  return v;
}
static sh_type getitem_iter_type = {SH_TYPE_HEAD, .name = "iterator", .size = sizeof(getitem_iter),
  .destroy = getitem_iter_destroy, .iter = self_iter, .next = getitem_iter_next};

static sh_obj *getitem_iter_new(sh_obj *o) {
  getitem_iter *it = sh_new(&getitem_iter_type);
  it->seq = sh_incref(o);
  return &it->head;
}

sh_obj *sh_iter(sh_obj *o) {
  for (sh_type *t = o->type; t; t = t->base)
    if (t->iter) return t->iter(o);
  for (sh_type *t = o->type; t; t = t->base)
    if (t->getitem && !(t->flags & SH_TF_INSTANCE)) return getitem_iter_new(o);
  return sh_raise(sh_TypeError, "'%s' object is not iterable", sh_type_name(o));
}

sh_obj *sh_next(sh_obj *it) {
  for (sh_type *t = it->type; t; t = t->base)
    if (t->next) return t->next(it);
  return sh_raise(sh_TypeError, "'%s' object is not an iterator", sh_type_name(it));
}

int64_t sh_len(sh_obj *o) {
  for (sh_type *t = o->type; t; t = t->base)
    if (t->len) return t->len(o);
  sh_raise(sh_TypeError, "object of type '%s' has no len()", sh_type_name(o));
  return -1;
}

int sh_contains(sh_obj *c, sh_obj *item) {
  for (sh_type *t = c->type; t; t = t->base)
    if (t->contains) return t->contains(c, item);
  sh_obj *it = sh_iter(c), *x;
  if (!it) {
    sh_err_clear();
    sh_raise(sh_TypeError, "argument of type '%s' is not iterable", sh_type_name(c));
    return -1;
  }
  int found = 0;
  while (!found && (x = sh_next(it))) { found = sh_eq(x, item); sh_decref(x); }
  sh_decref(it);
  return sh_err_occurred() ? -1 : found;
}

sh_obj *sh_as_number(sh_obj *o) {
  if (sh_is_int(o) || sh_is_float(o)) return sh_incref(o);
  if (sh_is_str(o)) return NULL;
  sh_obj *f = sh_getattr_opt(o, "__float__");
  if (!f) {
    sh_err_clear();
    return NULL;
  }
  sh_obj *r = sh_call(f, 0, NULL, NULL);
  sh_decref(f);
  if (r && (sh_is_float(r) || sh_is_int(r))) return r;
  sh_decref(r);
  sh_err_clear();
  return NULL;
}

int sh_as_int(sh_obj *o, int64_t *out) {
  if (sh_is_int(o)) { *out = sh_int_value(o); return 0; }
  sh_obj *idx = sh_getattr_opt(o, "__index__");
  if (idx) {
    sh_obj *r = sh_call(idx, 0, NULL, NULL);
    sh_decref(idx);
    if (r && sh_is_int(r)) { *out = sh_int_value(r); sh_decref(r); return 0; }
    sh_decref(r);
  }
  sh_err_clear();
  sh_raise(sh_TypeError, "'%s' object cannot be interpreted as an integer", sh_type_name(o));
  return -1;
}

int sh_as_double(sh_obj *o, double *out) {
  if (sh_is_int(o)) { *out = (double)sh_int_value(o); return 0; }
  if (sh_is_float(o)) { *out = sh_float_value(o); return 0; }
  sh_obj *n = sh_as_number(o);   /* numpy scalars and other objects with __float__ */
  if (n) {
    *out = sh_is_int(n) ? (double)sh_int_value(n) : sh_float_value(n);
    sh_decref(n);
    return 0;
  }
  sh_raise(sh_TypeError, "must be real number, not %s", sh_type_name(o));
  return -1;
}

const char *sh_as_cstr(sh_obj *o) {
  if (sh_is_str(o)) return sh_str_cstr(o);
  sh_raise(sh_TypeError, "expected str, got %s", sh_type_name(o));
  return NULL;
}

/* ---- argument parsing ------------------------------------------------------------------- */
int sh_parse_args(const char *fname, int argc, sh_obj **argv, sh_obj *kw, const char *spec, ...) {
  char names[32][48];
  int n = 0, nreq = -1, kwonly = -1;
  bool any_kw = false;
  for (const char *p = spec; *p;) {
    while (*p == ' ') p++;
    if (!*p) break;
    if (p[0] == '*' && p[1] == '*') { any_kw = true; p += 2; continue; }
    if (*p == '|') { nreq = n; p++; continue; }
    if (*p == '*') { kwonly = n; if (nreq < 0) nreq = n; p++; continue; }
    int k = 0;
    while (*p && *p != ' ' && *p != '|' && k < 47) names[n][k++] = *p++;
    names[n][k] = 0;
    if (++n == 32) break;
  }
  if (nreq < 0) nreq = n;
  int npos = kwonly < 0 ? n : kwonly;
  va_list ap;
  va_start(ap, spec);
  sh_obj **outs[32];
  for (int i = 0; i < n; i++) outs[i] = va_arg(ap, sh_obj **);
  va_end(ap);
  if (argc > npos) {
    sh_raise(sh_TypeError, "%s() takes %s%d positional argument%s but %d %s given", fname,
             nreq < npos ? "at most " : "", npos, npos == 1 ? "" : "s", argc, argc == 1 ? "was" : "were");
    return -1;
  }
  bool got[32] = {0};
  for (int i = 0; i < argc; i++) { *outs[i] = argv[i]; got[i] = true; }
  if (kw) {
    sh_obj *k, *v;
    for (int64_t pos = 0; sh_dict_next(kw, &pos, &k, &v);) {
      int i = 0;
      while (i < n && strcmp(names[i], sh_str_cstr(k))) i++;
      if (i == n) {
        if (any_kw) continue;
        sh_raise(sh_TypeError, "%s() got an unexpected keyword argument '%s'", fname, sh_str_cstr(k));
        return -1;
      }
      if (got[i]) {
        sh_raise(sh_TypeError, "%s() got multiple values for argument '%s'", fname, names[i]);
        return -1;
      }
      *outs[i] = v;
      got[i] = true;
    }
  }
  for (int i = 0; i < nreq; i++)
    if (!got[i]) {
      sh_raise(sh_TypeError, "%s() missing required argument '%s' (pos %d)", fname, names[i], i + 1);
      return -1;
    }
  return 0;
}

/* ---- init ------------------------------------------------------------------------------- */
static sh_type *exc(const char *name, sh_type *base) {
  sh_type *t = sh_heap_type_new(name, base ? base : &sh_object_type, NULL);
  return t;
}

void sh_value_init(void) {
  for (int64_t v = SMALL_MIN; v <= SMALL_MAX; v++)
    small_ints[v - SMALL_MIN] = (sh_int_obj){SH_OBJ_HEAD(&sh_int_type), v};
  interned = sh_dict_new();
  empty_str = sh_strn("", 0);
  sh_BaseException = exc("BaseException", NULL);
  sh_Exception = exc("Exception", sh_BaseException);
  sh_SystemExit = exc("SystemExit", sh_BaseException);
  sh_KeyboardInterrupt = exc("KeyboardInterrupt", sh_BaseException);
  sh_StopIteration = exc("StopIteration", sh_Exception);
  sh_ArithmeticError = exc("ArithmeticError", sh_Exception);
  sh_ZeroDivisionError = exc("ZeroDivisionError", sh_ArithmeticError);
  sh_OverflowError = exc("OverflowError", sh_ArithmeticError);
  sh_AssertionError = exc("AssertionError", sh_Exception);
  sh_AttributeError = exc("AttributeError", sh_Exception);
  sh_ImportError = exc("ImportError", sh_Exception);
  sh_ModuleNotFoundError = exc("ModuleNotFoundError", sh_ImportError);
  sh_LookupError = exc("LookupError", sh_Exception);
  sh_IndexError = exc("IndexError", sh_LookupError);
  sh_KeyError = exc("KeyError", sh_LookupError);
  sh_NameError = exc("NameError", sh_Exception);
  sh_UnboundLocalError = exc("UnboundLocalError", sh_NameError);
  sh_OSError = exc("OSError", sh_Exception);
  sh_FileNotFoundError = exc("FileNotFoundError", sh_OSError);
  sh_RuntimeError = exc("RuntimeError", sh_Exception);
  sh_NotImplementedError = exc("NotImplementedError", sh_RuntimeError);
  sh_RecursionError = exc("RecursionError", sh_RuntimeError);
  sh_SyntaxError = exc("SyntaxError", sh_Exception);
  sh_TypeError = exc("TypeError", sh_Exception);
  sh_ValueError = exc("ValueError", sh_Exception);
  sh_EOFError = exc("EOFError", sh_Exception);
  sh_UnicodeError = exc("UnicodeError", sh_ValueError);
}

void sh_value_fini(void) {
  sh_err_clear();
  sh_type **all[] = {&sh_UnicodeError, &sh_EOFError, &sh_ValueError, &sh_TypeError,
    &sh_SyntaxError, &sh_RecursionError, &sh_NotImplementedError, &sh_RuntimeError,
    &sh_FileNotFoundError, &sh_OSError, &sh_UnboundLocalError, &sh_NameError, &sh_KeyError,
    &sh_IndexError, &sh_LookupError, &sh_ModuleNotFoundError, &sh_ImportError,
    &sh_AttributeError, &sh_AssertionError, &sh_OverflowError, &sh_ZeroDivisionError,
    &sh_ArithmeticError, &sh_StopIteration, &sh_KeyboardInterrupt, &sh_SystemExit,
    &sh_Exception, &sh_BaseException};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
    sh_type *t = *all[i];
    *all[i] = NULL;
    sh_dict_clear(t->dict);
    SH_DECREF(t);
  }
  sh_type *statics[] = {&sh_str_type, &sh_list_type, &sh_tuple_type, &sh_dict_type,
    &sh_set_type, &sh_int_type, &sh_float_type, &sh_bool_type, &sh_file_type,
    &sh_range_type, &sh_none_type, &sh_object_type};
  for (size_t i = 0; i < sizeof statics / sizeof *statics; i++) sh_clear(&statics[i]->dict);
  sh_clear(&empty_str);
  sh_clear(&interned);
  while (n_int_free) free(int_free[--n_int_free]);
  while (n_float_free) free(float_free[--n_float_free]);
}
