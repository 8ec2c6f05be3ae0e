/* Printing tensors exactly as numpy prints arrays: str() (what print(arr) shows) and repr().
 *
 * This follows numpy's arrayprint.py with its default options (linewidth 75, precision 8,
 * floatmode 'maxprec', threshold 1000, edgeitems 3, legacy off) as numpy 1.14 through 1.26
 * print: the numpy TF1 ran with. numpy 2.x prints arrays identically; it differs only in
 * float32 scalars (2.x switches to e-notation at 1e6, 1.x at 1e16) and in adding
 * "shape=(..)" to the repr of summarized arrays (2.2+).
 *
 * Floats use the shortest decimal that reads back as the same float32 / float64 (what
 * numpy's Dragon4 produces), found by printf with increasing precision; string tensors
 * print as TF1 returns them, object arrays of bytes. */
#include "runtime/tensor.h"
#include "base/alloc.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a growing string ------------------------------------------------------------- */

typedef struct sb {
  char *p;
  size_t len, cap;
} sb;

static void sb_addn(sb *b, const char *s, size_t n) {
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 64;
    while (b->len + n + 1 > cap) cap *= 2;
    char *p = xrealloc(b->p, cap);
    b->p = p;
    b->cap = cap;
  }
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = '\0';
}

static void sb_add(sb *b, const char *s) { sb_addn(b, s, strlen(s)); }

static void sb_pad(sb *b, int n) {
  for (; n > 0; n--) sb_addn(b, " ", 1);
}

static void sb_printf(sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sb *b, const char *fmt, ...) {
  char tmp[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  sb_addn(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* The string so far, never NULL; the builder gives it up. */
static char *sb_take(sb *b) {
  if (!b->p) sb_addn(b, "", 0);
  char *p = b->p;
  *b = (sb){0};
  return p;
}

/* ---- float to decimal ------------------------------------------------------------- */

/* A finite, non-negative value as decimal digits d[0..n) with d[0] at 10^exp. */
typedef struct dec {
  char d[40];
  int n, exp;
} dec;

/* Parse printf's "%.Ne" output ("1.2345e+07") into digits, dropping trailing zeros. */
static void dec_parse(const char *s, dec *out) {
  out->n = 0;
  for (; *s && *s != 'e'; s++)
    if (*s >= '0' && *s <= '9') out->d[out->n++] = *s;
  out->exp = *s == 'e' ? atoi(s + 1) : 0;
  while (out->n > 1 && out->d[out->n - 1] == '0') out->n--;
}

/* Shortest digits that read back as the same value (float32 when f32). */
static void dec_shortest(double x, bool f32, dec *out) {
  char buf[64];
  for (int p = 1; p <= 17; p++) {
    snprintf(buf, sizeof buf, "%.*e", p - 1, x);
    if (f32 ? strtof(buf, NULL) == (float)x : strtod(buf, NULL) == x) break;
  }
  dec_parse(buf, out);
}

/* Positional parts of v: int part (with '-') and fraction digits, trailing zeros trimmed.
 * prec < 0: a scalar's str — the shortest digits, zeros up to the point ("39418750.0").
 * prec >= 0: numpy's array elements (dragon4_positional, unique, precision=prec,
 * min_digits=0): the shortest fraction, at most prec digits, and the integer part's exact
 * digits ("39418752."). */
static void pos_parts(double v, bool f32, int prec, char *ip, char *fp) {
  char *o = ip;
  if (signbit(v)) *o++ = '-';
  double x = fabs(v);
  *fp = '\0';
  if (x == 0) {
    strcpy(o, "0");
    return;
  }
  dec d;
  dec_shortest(x, f32, &d);
  int nfrac = d.n - 1 - d.exp;
  if (nfrac < 0) nfrac = 0;
  if (prec >= 0) {
    char buf[400];
    snprintf(buf, sizeof buf, "%.*f", nfrac < prec ? nfrac : prec, x);
    char *dot = strchr(buf, '.');
    if (dot) {
      *dot = '\0';
      strcpy(fp, dot + 1);
      for (size_t k = strlen(fp); k > 0 && fp[k - 1] == '0'; k--) fp[k - 1] = '\0';
    }
    strcpy(o, buf);
    return;
  }
  if (d.exp >= 0) {
    for (int k = 0; k <= d.exp; k++) *o++ = k < d.n ? d.d[k] : '0';
    *o = '\0';
    for (int k = d.exp + 1; k < d.n; k++) *fp++ = d.d[k];
  } else {
    strcpy(o, "0");
    for (int k = 0; k < -d.exp - 1; k++) *fp++ = '0';
    for (int k = 0; k < d.n; k++) *fp++ = d.d[k];
  }
  *fp = '\0';
}

/* Scientific parts: leading digit (with '-'), fraction digits, exponent.
 * exact < 0: the shortest digits, at most prec of them (prec < 0: no limit).
 * exact >= 0: exactly that many fraction digits of the value, rounded (numpy pads an
 * array's elements to a common precision with the value's true digits, not zeros). */
static void sci_parts(double v, bool f32, int prec, int exact, char *ip, char *fp, int *exp) {
  char *o = ip;
  if (signbit(v)) *o++ = '-';
  double x = fabs(v);
  dec d = {.d = "0", .n = 1, .exp = 0};
  char buf[64];
  if (exact >= 0) {
    snprintf(buf, sizeof buf, "%.*e", exact, x);
    dec_parse(buf, &d);
    while (d.n < exact + 1) d.d[d.n++] = '0';
  } else if (x != 0) {
    dec_shortest(x, f32, &d);
    if (prec >= 0 && d.n - 1 > prec) {
      snprintf(buf, sizeof buf, "%.*e", prec, x);
      dec_parse(buf, &d);
    }
  }
  *o++ = d.d[0];
  *o = '\0';
  memcpy(fp, d.d + 1, (size_t)d.n - 1);
  fp[d.n - 1] = '\0';
  *exp = d.exp;
}

static int ndigits(int64_t v) {
  int n = 1;
  for (uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v; u >= 10; u /= 10) n++;
  return n;
}

/* A float as Python's str() shows a numpy scalar: positional with at least one fraction
 * digit inside [1e-4, cutoff), else e-notation without a bare dot ("1e+16"). */
static void scalar_float(sb *b, double v, bool f32) {
  if (isnan(v)) return sb_add(b, "nan");
  if (isinf(v)) return sb_add(b, v < 0 ? "-inf" : "inf");
  char ip[400], fp[400];
  double a = fabs(v);
  if (a == 0 || (a >= 1e-4 && a < 1e16)) {
    pos_parts(v, f32, -1, ip, fp);
    sb_printf(b, "%s.%s", ip, *fp ? fp : "0");
    return;
  }
  int e;
  sci_parts(v, f32, -1, -1, ip, fp, &e);
  sb_printf(b, "%s%s%se%c%02d", ip, *fp ? "." : "", fp, e < 0 ? '-' : '+', abs(e));
}

/* ---- element formats (numpy's FloatingFormat, IntegerFormat, BoolFormat, object) --- */

typedef struct efmt {
  rt_dtype dtype;
  bool scalar;                 /* a 0-d array: no padding for bools */
  bool text;                   /* strings are str (numpy's '<U'), not bytes */
  /* floats */
  bool exp;
  int pad_left, pad_right, prec, exp_size;
  /* ints */
  int width;
} efmt;

static double elem_f(const rt_tensor *t, int64_t i) {
  return t->dtype == RT_FLOAT ? ((const float *)rt_tensor_data(t))[i]
                              : ((const double *)rt_tensor_data(t))[i];
}

/* Build the element format from the elements that will be shown (idx[0..n)). */
static void efmt_init(efmt *f, const rt_tensor *t, const int64_t *idx, int64_t n) {
  memset(f, 0, sizeof *f);
  f->dtype = t->dtype;
  f->scalar = t->shape.ndims == 0;
  if (rt_dtype_is_int(t->dtype)) {
    for (int64_t k = 0; k < n; k++) {
      int64_t v = rt_tensor_get_i64(t, idx[k]);
      int w = ndigits(v) + (v < 0);
      if (w > f->width) f->width = w;
    }
    return;
  }
  if (!rt_dtype_is_float(t->dtype)) return;
  bool f32 = t->dtype == RT_FLOAT;
  double mx = 0, mn = INFINITY;
  int64_t nfinite = 0;
  bool neginf = false;
  for (int64_t k = 0; k < n; k++) {
    double v = elem_f(t, idx[k]);
    if (!isfinite(v)) {
      neginf |= isinf(v) && v < 0;
      continue;
    }
    nfinite++;
    double a = fabs(v);
    if (a == 0) continue;
    if (a > mx) mx = a;
    if (a < mn) mn = a;
  }
  if (mx > 0 && (mx >= 1e8 || mn < 1e-4 || mx / mn > 1e3)) f->exp = true;
  char ip[400], fp[400];
  for (int64_t k = 0; k < n; k++) {
    double v = elem_f(t, idx[k]);
    if (!isfinite(v)) continue;
    int il, fl;
    if (f->exp) {
      int e;
      sci_parts(v, f32, 8, -1, ip, fp, &e);
      int es = ndigits(e) < 2 ? 2 : ndigits(e);
      if (es > f->exp_size) f->exp_size = es;
    } else {
      pos_parts(v, f32, 8, ip, fp);
    }
    il = (int)strlen(ip);
    fl = (int)strlen(fp);
    if (il > f->pad_left) f->pad_left = il;
    if (fl > f->pad_right) f->pad_right = fl;
  }
  if (f->exp) {
    f->prec = f->pad_right;
    f->pad_right = f->exp_size + 2 + f->prec;
  }
  if (nfinite == 0) f->pad_left = f->pad_right = 0;
  if (nfinite < n) {   /* room for "nan", "inf", "-inf" */
    int offset = f->pad_right + 1;
    if (3 - offset > f->pad_left) f->pad_left = 3 - offset;
    if (3 + neginf - offset > f->pad_left) f->pad_left = 3 + neginf - offset;
  }
}

/* Python's repr of a bytes object, or of a str (text: UTF-8, its non-ASCII kept). */
static void bytes_repr_as(sb *b, const rt_str *s, bool text) {
  const char *p = s->ptr ? s->ptr : "";
  bool sq = memchr(p, '\'', s->len) != NULL, dq = memchr(p, '"', s->len) != NULL;
  char q = sq && !dq ? '"' : '\'';
  sb_printf(b, "%s%c", text ? "" : "b", q);
  for (size_t i = 0; i < s->len; i++) {
    unsigned char c = (unsigned char)p[i];
    if (c == (unsigned char)q || c == '\\') sb_printf(b, "\\%c", c);
    else if (c == '\t') sb_add(b, "\\t");
    else if (c == '\n') sb_add(b, "\\n");
    else if (c == '\r') sb_add(b, "\\r");
    else if (c < 0x20 || c == 0x7f || (c > 0x7f && !text)) sb_printf(b, "\\x%02x", c);
    else sb_addn(b, (const char *)&c, 1);
  }
  sb_addn(b, &q, 1);
}
static void bytes_repr(sb *b, const rt_str *s) { bytes_repr_as(b, s, false); }

static void efmt_elem(const efmt *f, const rt_tensor *t, int64_t i, sb *b) {
  switch (t->dtype) {
  case RT_INT32:
  case RT_INT64:
  case RT_UINT8:
    sb_printf(b, "%*lld", f->width, (long long)rt_tensor_get_i64(t, i));
    return;
  case RT_BOOL:
    sb_add(b, ((const bool *)rt_tensor_data(t))[i] ? (f->scalar ? "True" : " True") : "False");
    return;
  case RT_STRING:
    bytes_repr_as(b, (const rt_str *)rt_tensor_data(t) + i, f->text);
    return;
  case RT_FLOAT:
  case RT_DOUBLE: break;
  default: sb_add(b, "?"); return;
  }
  double v = elem_f(t, i);
  if (!isfinite(v)) {
    const char *s = isnan(v) ? "nan" : v < 0 ? "-inf" : "inf";
    sb_pad(b, f->pad_left + f->pad_right + 1 - (int)strlen(s));
    sb_add(b, s);
    return;
  }
  char ip[400], fp[400];
  if (f->exp) {
    int e;
    sci_parts(v, t->dtype == RT_FLOAT, -1, f->prec, ip, fp, &e);
    sb_pad(b, f->pad_left - (int)strlen(ip));
    sb_printf(b, "%s.%s", ip, fp);
    sb_printf(b, "e%c%0*d", e < 0 ? '-' : '+', f->exp_size, abs(e));
  } else {
    pos_parts(v, t->dtype == RT_FLOAT, 8, ip, fp);
    sb_pad(b, f->pad_left - (int)strlen(ip));
    sb_printf(b, "%s.%s", ip, fp);
    sb_pad(b, f->pad_right - (int)strlen(fp));
  }
}

/* ---- the array layout (numpy's _formatArray) -------------------------------------- */

enum { LINE_WIDTH = 75, THRESHOLD = 1000, EDGE = 3 };

typedef struct layout {
  const rt_tensor *t;
  efmt f;
  int64_t stride[RT_MAX_DIMS];
  bool summarize;
  const char *sep;     /* " " for str, ", " for repr */
} layout;

/* Items shown along an axis of length n: [0, lead) and [n - trail, n). */
static void shown(const layout *L, int64_t n, int64_t *lead, int64_t *trail) {
  bool cut = L->summarize && 2 * EDGE < n;
  *lead = cut ? EDGE : 0;
  *trail = cut ? EDGE : n;
}

static void collect(const layout *L, int axis, int64_t off, int64_t *idx, int64_t *n) {
  if (axis == L->t->shape.ndims) {
    idx[(*n)++] = off;
    return;
  }
  int64_t len = L->t->shape.dims[axis], lead, trail;
  shown(L, len, &lead, &trail);
  for (int64_t i = 0; i < lead; i++) collect(L, axis + 1, off + i * L->stride[axis], idx, n);
  for (int64_t i = len - trail; i < len; i++)
    collect(L, axis + 1, off + i * L->stride[axis], idx, n);
}

static size_t rstrip_len(const char *s, size_t n) {
  while (n > 0 && s[n - 1] == ' ') n--;
  return n;
}

/* numpy's _extendLine: wrap before `word` if the line would pass `width`, unless wrapping
 * cannot help (the line holds only the indent). */
static void extend_line(sb *s, sb *line, const char *word, int width, const char *hang) {
  size_t hl = strlen(hang);
  if (line->len + strlen(word) > (size_t)width && line->len > hl) {
    sb_addn(s, line->p, rstrip_len(line->p, line->len));
    sb_add(s, "\n");
    line->len = 0;
    sb_add(line, hang);
  }
  sb_add(line, word);
}

static char *recurse(const layout *L, int axis, int64_t off, const char *hang, int width) {
  const rt_tensor *t = L->t;
  if (axis == t->shape.ndims) {
    sb e = {0};
    efmt_elem(&L->f, t, off, &e);
    return sb_take(&e);
  }
  size_t hl = strlen(hang);
  char *next_hang = xmalloc(hl + 2);
  memcpy(next_hang, hang, hl);
  strcpy(next_hang + hl, " ");
  int next_width = width - 1;
  int64_t len = t->shape.dims[axis], lead, trail;
  shown(L, len, &lead, &trail);
  bool cut = lead > 0;
  int64_t st = L->stride[axis];
  int left = t->shape.ndims - axis;
  sb s = {0};
  sb_add(&s, "");
  if (left == 1) {
    int elem_width = width - 1;   /* room for the separator's ',' or the ']' */
    sb line = {0};
    sb_add(&line, hang);
    for (int64_t i = 0; i < len; i++) {
      if (cut && i == lead) {
        extend_line(&s, &line, "...", elem_width, hang);
        sb_add(&line, L->sep);
        i = len - trail;
      }
      char *w = recurse(L, axis + 1, off + i * st, next_hang, next_width);
      extend_line(&s, &line, w, elem_width, hang);
      free(w);
      if (i < len - 1) sb_add(&line, L->sep);
    }
    sb_addn(&s, line.p, line.len);
    free(line.p);
  } else {
    size_t seplen = rstrip_len(L->sep, strlen(L->sep));
    for (int64_t i = 0; i < len; i++) {
      if (cut && i == lead) {
        sb_add(&s, hang);
        sb_add(&s, "...");
        sb_addn(&s, L->sep, seplen);
        for (int k = 1; k < left; k++) sb_add(&s, "\n");
        i = len - trail;
      }
      char *w = recurse(L, axis + 1, off + i * st, next_hang, next_width);
      sb_add(&s, hang);
      sb_add(&s, w);
      free(w);
      if (i < len - 1) {
        sb_addn(&s, L->sep, seplen);
        for (int k = 1; k < left; k++) sb_add(&s, "\n");
      }
    }
  }
  free(next_hang);
  sb out = {0};
  sb_add(&out, "[");
  sb_add(&out, s.p + hl);
  sb_add(&out, "]");
  free(s.p);
  return sb_take(&out);
}

/* array2string(t, separator=sep, prefix) with `width` already reduced by any suffix. */
static char *array2string(const rt_tensor *t, const char *sep, int prefix_len, int width, bool text) {
  int64_t n = rt_tensor_numel(t);
  if (n == 0) return xstrdup("[]");
  layout L = {.t = t, .sep = sep, .summarize = n > THRESHOLD};
  int64_t s = 1;
  for (int d = t->shape.ndims - 1; d >= 0; d--) {
    L.stride[d] = s;
    s *= t->shape.dims[d];
  }
  int64_t *idx = xmalloc(sizeof *idx * (size_t)(n < 1 ? 1 : n));
  int64_t m = 0;
  collect(&L, 0, 0, idx, &m);
  efmt_init(&L.f, t, idx, m);
  L.f.text = text;
  free(idx);
  char hang[96];
  int hl = prefix_len + 1 < (int)sizeof hang - 1 ? prefix_len + 1 : (int)sizeof hang - 1;
  memset(hang, ' ', (size_t)hl);
  hang[hl] = '\0';
  return recurse(&L, 0, 0, hang, width);
}

char *rt_tensor_format(const rt_tensor *t) { return rt_tensor_format_as(t, false); }
char *rt_tensor_repr(const rt_tensor *t) { return rt_tensor_repr_as(t, false, NULL); }

char *rt_tensor_format_as(const rt_tensor *t, bool text) {
  if (t->shape.ndims != 0) return array2string(t, " ", 0, LINE_WIDTH, text);
  /* A 0-d result is a numpy scalar (or bytes): printed as Python prints it. */
  sb b = {0};
  switch (t->dtype) {
  case RT_FLOAT: scalar_float(&b, ((const float *)rt_tensor_data(t))[0], true); break;
  case RT_DOUBLE: scalar_float(&b, ((const double *)rt_tensor_data(t))[0], false); break;
  case RT_INT32:
  case RT_INT64:
  case RT_UINT8: sb_printf(&b, "%lld", (long long)rt_tensor_get_i64(t, 0)); break;
  case RT_BOOL: sb_add(&b, ((const bool *)rt_tensor_data(t))[0] ? "True" : "False"); break;
  case RT_STRING: {
    const rt_str *s = rt_tensor_data(t);
    if (text) sb_addn(&b, s->ptr ? s->ptr : "", s->len);
    else bytes_repr(&b, s);
    break;
  }
  default: sb_add(&b, "?"); break;
  }
  return sb_take(&b);
}

char *rt_tensor_repr_as(const rt_tensor *t, bool text, const char *dtype_text) {
  static const char prefix[] = "array(";
  int plen = (int)sizeof prefix - 1;
  char *body = array2string(t, ", ", plen, LINE_WIDTH - 1, text);
  sb b = {0};
  sb_add(&b, prefix);
  sb_add(&b, body);
  free(body);
  int64_t n = rt_tensor_numel(t);
  /* numpy leaves out the dtypes it can infer from the text: float64, int64, bool. */
  bool implied = t->dtype == RT_DOUBLE || t->dtype == RT_INT64 || t->dtype == RT_BOOL;
  sb extra = {0};
  if (n == 0 && !(t->shape.ndims == 1)) {
    sb_add(&extra, "shape=(");
    for (int d = 0; d < t->shape.ndims; d++)
      sb_printf(&extra, "%s%lld", d ? ", " : "", (long long)t->shape.dims[d]);
    sb_add(&extra, t->shape.ndims == 1 ? ",)" : ")");
  }
  if (!implied || n == 0) {
    const char *dn = dtype_text ? dtype_text : t->dtype == RT_STRING ? "object" : rt_dtype_name(t->dtype);
    sb_printf(&extra, "%sdtype=%s", extra.len ? ", " : "", dn);
  }
  if (!extra.len) {
    sb_add(&b, ")");
    return sb_take(&b);
  }
  sb_add(&b, ",");
  const char *nl = strrchr(b.p, '\n');
  size_t last = b.len - (nl ? (size_t)(nl - b.p) + 1 : 0);
  if (last + extra.len + 2 > LINE_WIDTH) {   /* the extras, ")" and a space */
    sb_add(&b, "\n");
    sb_pad(&b, plen);
  } else {
    sb_add(&b, " ");
  }
  sb_add(&b, extra.p);
  sb_add(&b, ")");
  free(extra.p);
  return sb_take(&b);
}
