/* bytes: an immutable sequence of byte values (0..255), as in Python 3. b'' literals,
 * str.encode / bytes.decode (UTF-8, latin-1, ascii), indexing gives ints, slicing gives
 * bytes; what string tensors fetch as (TF hands back bytes for tf.string). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "shell/lang/interp.h"

sh_obj *sh_bytes(const char *s, size_t n) {
  if (n > PTRDIFF_MAX / 2) x_oom(n);
  sh_bytes_obj *o = xmalloc(sizeof(sh_bytes_obj) + n + 1);
  o->head.refcnt = 1;
  o->head.type = &sh_bytes_type;
  o->len = (int64_t)n;
  o->hash = -1;
  if (n && s) memcpy(o->s, s, n);
  o->s[n] = 0;
  return &o->head;
}

/* The repr Python gives: b'...' with \xNN for what is not printable ASCII. */
static sh_obj *bytes_repr(sh_obj *o) {
  const char *s = sh_bytes_data(o);
  size_t n = (size_t)sh_bytes_len(o);
  bool sq = memchr(s, '\'', n) != NULL, dq = memchr(s, '"', n) != NULL;
  char q = sq && !dq ? '"' : '\'';
  sh_buf b = {0};
  sh_buf_putc(&b, 'b');
  sh_buf_putc(&b, q);
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == q || c == '\\') { sh_buf_putc(&b, '\\'); sh_buf_putc(&b, (char)c); }
    else if (c == '\n') sh_buf_puts(&b, "\\n");
    else if (c == '\t') sh_buf_puts(&b, "\\t");
    else if (c == '\r') sh_buf_puts(&b, "\\r");
    else if (c < 32 || c >= 127) sh_buf_printf(&b, "\\x%02x", c);
    else sh_buf_putc(&b, (char)c);
  }
  sh_buf_putc(&b, q);
  return sh_buf_finish(&b);
}

static int64_t bytes_len_hook(sh_obj *o) { return sh_bytes_len(o); }
static int bytes_truth(sh_obj *o) { return sh_bytes_len(o) != 0; }

static int bytes_hash(sh_obj *o, int64_t *out) {
  sh_bytes_obj *b = (sh_bytes_obj *)o;
  if (b->hash == -1) {   /* the same as str's, as Python's hash(b'a') == hash('a') */
    uint64_t h = 1469598103934665603ULL;
    for (int64_t i = 0; i < b->len; i++) h = (h ^ (unsigned char)b->s[i]) * 1099511628211ULL;
    b->hash = (int64_t)(h >> 1);
  }
  *out = b->hash;
  return 0;
}

static sh_obj *bytes_concat(sh_obj *a, sh_obj *b) {
  int64_t na = sh_bytes_len(a), nb = sh_bytes_len(b);
  sh_bytes_obj *o = (sh_bytes_obj *)sh_bytes(NULL, (size_t)(na + nb));
  memcpy(o->s, sh_bytes_data(a), (size_t)na);
  memcpy(o->s + na, sh_bytes_data(b), (size_t)nb);
  return &o->head;
}

static sh_obj *bytes_repeat(sh_obj *a, int64_t k) {
  int64_t n = sh_bytes_len(a);
  if (k < 0) k = 0;
  if (n && k > INT64_MAX / 2 / n) return sh_raise(sh_OverflowError, "repeated bytes are too long");
  sh_bytes_obj *o = (sh_bytes_obj *)sh_bytes(NULL, (size_t)(n * k));
  for (int64_t i = 0; i < k; i++) memcpy(o->s + i * n, sh_bytes_data(a), (size_t)n);
  return &o->head;
}

static sh_obj *bytes_format(sh_obj *fmt, sh_obj *args);

static sh_obj *bytes_binop(int op, sh_obj *a, sh_obj *b) {
  if (op == SH_ADD && sh_is_bytes(a)) {
    if (!sh_is_bytes(b)) return sh_raise(sh_TypeError, "can't concat %s to bytes", sh_type_name(b));
    return bytes_concat(a, b);
  }
  if (op == SH_MOD && sh_is_bytes(a)) return bytes_format(a, b);
  if (op == SH_MUL) {
    if (sh_is_bytes(a) && sh_is_int(b)) return bytes_repeat(a, sh_int_value(b));
    if (sh_is_int(a) && sh_is_bytes(b)) return bytes_repeat(b, sh_int_value(a));
  }
  return sh_incref(SH_NOTIMPL);
}

/* b'%d' % args: formatted as str over the bytes' latin-1 text (bytes arguments too) */
static sh_obj *latin1(sh_obj *b) {
  sh_obj *enc = sh_str("latin-1");
  sh_obj *r = sh_call_method(b, "decode", 1, &enc, NULL);
  sh_decref(enc);
  return r;
}
static sh_obj *bytes_format(sh_obj *fmt, sh_obj *args) {
  sh_obj *f = latin1(fmt), *a = NULL, *r = NULL;
  if (!f) return NULL;
  if (args->type == &sh_tuple_type) {
    a = sh_tuple_new(SH_TUPLE_N(args));
    for (int64_t i = 0; i < SH_TUPLE_N(args); i++) {
      sh_obj *x = SH_TUPLE_ITEMS(args)[i];
      SH_TUPLE_ITEMS(a)[i] = sh_is_bytes(x) ? latin1(x) : sh_incref(x);
    }
  } else {
    a = sh_is_bytes(args) ? latin1(args) : sh_incref(args);
  }
  sh_obj *s = sh_percent_format(f, a);
  if (s) {
    sh_obj *enc = sh_str("latin-1");
    r = sh_str_encode(s, enc, NULL);
    sh_decref(enc);
  }
  sh_decref(s);
  sh_decref(a);
  sh_decref(f);
  return r;
}

static sh_obj *bytes_compare(int op, sh_obj *a, sh_obj *b) {
  if (!sh_is_bytes(a) || !sh_is_bytes(b)) return sh_incref(SH_NOTIMPL);
  int64_t na = sh_bytes_len(a), nb = sh_bytes_len(b);
  int c = memcmp(sh_bytes_data(a), sh_bytes_data(b), (size_t)(na < nb ? na : nb));
  if (c == 0) c = (na > nb) - (na < nb);
  return sh_bool(sh_cmp_result(op, c < 0 ? -1 : c > 0));
}

static const char *find_sub(const char *h, int64_t hn, const char *n, int64_t nn) {
  if (nn == 0) return h;
  for (int64_t i = 0; i + nn <= hn; i++)
    if (!memcmp(h + i, n, (size_t)nn)) return h + i;
  return NULL;
}

static int bytes_contains(sh_obj *s, sh_obj *item) {
  if (sh_is_int(item)) {
    int64_t v = sh_int_value(item);
    if (v < 0 || v > 255) { sh_raise(sh_ValueError, "byte must be in range(0, 256)"); return -1; }
    return memchr(sh_bytes_data(s), (int)v, (size_t)sh_bytes_len(s)) != NULL;
  }
  if (!sh_is_bytes(item)) {
    sh_raise(sh_TypeError, "a bytes-like object is required, not '%s'", sh_type_name(item));
    return -1;
  }
  return find_sub(sh_bytes_data(s), sh_bytes_len(s), sh_bytes_data(item), sh_bytes_len(item)) != NULL;
}

static sh_obj *bytes_getitem(sh_obj *o, sh_obj *key) {
  const unsigned char *s = (const unsigned char *)sh_bytes_data(o);
  int64_t n = sh_bytes_len(o);
  if (sh_is_int(key)) {
    int64_t i;
    if (sh_norm_index(key, n, &i, "index") < 0) return NULL;
    return sh_int(s[i]);
  }
  if (key->type == &sh_slice_type) {
    int64_t start, stop, step, count;
    if (sh_slice_indices(key, n, &start, &stop, &step, &count) < 0) return NULL;
    sh_bytes_obj *r = (sh_bytes_obj *)sh_bytes(NULL, (size_t)count);
    for (int64_t k = 0, i = start; k < count; k++, i += step) r->s[k] = (char)s[i];
    return &r->head;
  }
  return sh_raise(sh_TypeError, "byte indices must be integers or slices, not %s", sh_type_name(key));
}

/* bytes(), bytes(n), bytes(iterable of ints), bytes(str, encoding), bytes(bytes) */
static sh_obj *bytes_new(ARGS) {
  sh_obj *x = NULL, *enc = NULL, *err = NULL;
  if (sh_parse_args("bytes", argc, argv, kw, "|source encoding errors", &x, &enc, &err) < 0) return NULL;
  if (!x) return sh_bytes("", 0);
  if (sh_is_bytes(x)) return sh_incref(x);
  if (sh_is_str(x)) {
    if (!enc) return sh_raise(sh_TypeError, "string argument without an encoding");
    return sh_call_method(x, "encode", 1, &enc, NULL);
  }
  if (sh_is_int(x)) {
    int64_t n = sh_int_value(x);
    if (n < 0) return sh_raise(sh_ValueError, "negative count");
    sh_bytes_obj *r = (sh_bytes_obj *)sh_bytes(NULL, (size_t)n);
    memset(r->s, 0, (size_t)n);
    return &r->head;
  }
  sh_obj *l = sh_sequence_to_list(x);
  if (!l) return NULL;
  sh_bytes_obj *r = (sh_bytes_obj *)sh_bytes(NULL, (size_t)SH_LIST_N(l));
  for (int64_t i = 0; i < SH_LIST_N(l); i++) {
    sh_obj *v = SH_LIST_ITEMS(l)[i];
    if (!sh_is_int(v)) {
      sh_decref(l);
      SH_DECREF(r);
      return sh_raise(sh_TypeError, "'%s' object cannot be interpreted as an integer", sh_type_name(v));
    }
    if (sh_int_value(v) < 0 || sh_int_value(v) > 255) {
      sh_decref(l);
      SH_DECREF(r);
      return sh_raise(sh_ValueError, "bytes must be in range(0, 256)");
    }
    r->s[i] = (char)sh_int_value(v);
  }
  sh_decref(l);
  return &r->head;
}

/* ---- encodings ------------------------------------------------------------------------ */
/* 0 utf-8, 1 latin-1, 2 ascii; -1 with LookupError */
static int codec(sh_obj *enc) {
  if (!enc || enc == SH_NONE) return 0;
  const char *e = sh_as_cstr(enc);
  if (!e) return -1;
  char low[32];
  size_t i = 0;
  for (; e[i] && i < sizeof low - 1; i++) low[i] = (char)(e[i] == '_' ? '-' : tolower((unsigned char)e[i]));
  low[i] = 0;
  if (!strcmp(low, "utf-8") || !strcmp(low, "utf8")) return 0;
  if (!strcmp(low, "latin-1") || !strcmp(low, "latin1") || !strcmp(low, "iso-8859-1")) return 1;
  if (!strcmp(low, "ascii") || !strcmp(low, "us-ascii")) return 2;
  sh_raise(sh_LookupError, "unknown encoding: %s", e);
  return -1;
}

static bool strict_errors(sh_obj *err, const char **name) {
  *name = err && sh_is_str(err) ? sh_str_cstr(err) : "strict";
  return !strcmp(*name, "strict");
}

/* Length of the valid UTF-8 sequence at s[0..n), or 0. */
static int utf8_seq(const unsigned char *s, int64_t n) {
  int k = s[0] < 0x80 ? 1 : (s[0] & 0xE0) == 0xC0 ? 2 : (s[0] & 0xF0) == 0xE0 ? 3 : (s[0] & 0xF8) == 0xF0 ? 4 : 0;
  if (!k || k > n) return 0;
  for (int i = 1; i < k; i++)
    if ((s[i] & 0xC0) != 0x80) return 0;
  if (k == 2 && s[0] < 0xC2) return 0;
  return k;
}

static sh_obj *bytes_decode(ARGS) {
  sh_obj *enc = NULL, *err = NULL;
  if (sh_parse_args("decode", argc, argv, kw, "|encoding errors", &enc, &err) < 0) return NULL;
  int c = codec(enc);
  if (c < 0) return NULL;
  const char *ename;
  bool strict = strict_errors(err, &ename);
  const unsigned char *s = (const unsigned char *)sh_bytes_data(self);
  int64_t n = sh_bytes_len(self);
  sh_buf b = {0};
  for (int64_t i = 0; i < n;) {
    int k = c == 0 ? utf8_seq(s + i, n - i) : c == 2 ? s[i] < 0x80 : 0;
    if (c == 1) {   /* latin-1: every byte is its code point */
      unsigned v = s[i++];
      if (v < 0x80) sh_buf_putc(&b, (char)v);
      else { sh_buf_putc(&b, (char)(0xC0 | v >> 6)); sh_buf_putc(&b, (char)(0x80 | (v & 63))); }
      continue;
    }
    if (k) {
      sh_buf_put(&b, (const char *)s + i, (size_t)k);
      i += k;
      continue;
    }
    if (strict) {
      sh_buf_free(&b);
      return sh_raise(sh_UnicodeError, "'%s' codec can't decode byte 0x%02x in position %lld: %s",
                      c == 0 ? "utf-8" : "ascii", s[i], (long long)i,
                      c == 0 ? "invalid start byte" : "ordinal not in range(128)");
    }
    if (!strcmp(ename, "replace")) sh_buf_puts(&b, "\xef\xbf\xbd");
    else if (strcmp(ename, "ignore")) {
      sh_buf_free(&b);
      return sh_raise(sh_LookupError, "unknown error handler name '%s'", ename);
    }
    i++;
  }
  return sh_buf_finish(&b);
}

sh_obj *sh_str_encode(sh_obj *self, sh_obj *enc, sh_obj *err) {
  int c = codec(enc);
  if (c < 0) return NULL;
  if (c == 0) return sh_bytes(sh_str_cstr(self), (size_t)sh_str_len(self));
  const char *ename;
  bool strict = strict_errors(err, &ename);
  const unsigned char *s = (const unsigned char *)sh_str_cstr(self);
  int64_t n = sh_str_len(self), pos = 0;
  sh_buf b = {0};
  for (int64_t i = 0; i < n; pos++) {
    int k = utf8_seq(s + i, n - i);
    if (!k) k = 1;
    unsigned v = k == 1 ? s[i] : k == 2 ? (s[i] & 31u) << 6 | (s[i + 1] & 63u)
               : k == 3 ? (s[i] & 15u) << 12 | (s[i + 1] & 63u) << 6 | (s[i + 2] & 63u)
               : (s[i] & 7u) << 18 | (s[i + 1] & 63u) << 12 | (s[i + 2] & 63u) << 6 | (s[i + 3] & 63u);
    i += k;
    if (v < (c == 1 ? 256u : 128u)) { sh_buf_putc(&b, (char)v); continue; }
    if (strict) {
      sh_buf_free(&b);
      return sh_raise(sh_UnicodeError, "'%s' codec can't encode character '\\x%02x' in position %lld: ordinal not in range(%d)",
                      c == 1 ? "latin-1" : "ascii", v, (long long)pos, c == 1 ? 256 : 128);
    }
    if (!strcmp(ename, "replace")) sh_buf_putc(&b, '?');
  }
  sh_obj *r = sh_bytes(b.data ? b.data : "", b.len);
  sh_buf_free(&b);
  return r;
}

/* ---- methods -------------------------------------------------------------------------- */
static int want_bytes(sh_obj *o, const char *fn) {
  if (sh_is_bytes(o)) return 0;
  sh_raise(sh_TypeError, "%s: a bytes-like object is required, not '%s'", fn, sh_type_name(o));
  return -1;
}

static sh_obj *bytes_hex(ARGS) {
  NARGS("hex", 0, 0);
  const unsigned char *s = (const unsigned char *)sh_bytes_data(self);
  sh_buf b = {0};
  for (int64_t i = 0; i < sh_bytes_len(self); i++) sh_buf_printf(&b, "%02x", s[i]);
  return sh_buf_finish(&b);
}

static sh_obj *affix(sh_obj *self, int argc, sh_obj **argv, bool end) {
  NARGS(end ? "endswith" : "startswith", 1, 1);
  sh_obj *p = argv[0];
  int64_t n = sh_bytes_len(self);
  if (p->type == &sh_tuple_type) {
    for (int64_t i = 0; i < SH_TUPLE_N(p); i++) {
      sh_obj *r = affix(self, 1, &SH_TUPLE_ITEMS(p)[i], end);
      if (!r || r == sh_true) return r;
      sh_decref(r);
    }
    return sh_bool(false);
  }
  if (want_bytes(p, end ? "endswith" : "startswith") < 0) return NULL;
  int64_t m = sh_bytes_len(p);
  if (m > n) return sh_bool(false);
  return sh_bool(!memcmp(sh_bytes_data(self) + (end ? n - m : 0), sh_bytes_data(p), (size_t)m));
}
static sh_obj *bytes_startswith(ARGS) { return affix(self, argc, argv, false); }
static sh_obj *bytes_endswith(ARGS) { return affix(self, argc, argv, true); }

static sh_obj *bytes_strip_impl(sh_obj *self, int argc, sh_obj **argv, int which) {
  NARGS("strip", 0, 1);
  const char *set = " \t\n\r\v\f";
  int64_t setn = 6;
  if (argc && argv[0] != SH_NONE) {
    if (want_bytes(argv[0], "strip") < 0) return NULL;
    set = sh_bytes_data(argv[0]);
    setn = sh_bytes_len(argv[0]);
  }
  const char *s = sh_bytes_data(self);
  int64_t a = 0, b = sh_bytes_len(self);
  if (which & 1) while (a < b && memchr(set, s[a], (size_t)setn)) a++;
  if (which & 2) while (b > a && memchr(set, s[b - 1], (size_t)setn)) b--;
  return sh_bytes(s + a, (size_t)(b - a));
}
static sh_obj *bytes_strip(ARGS) { return bytes_strip_impl(self, argc, argv, 3); }
static sh_obj *bytes_lstrip(ARGS) { return bytes_strip_impl(self, argc, argv, 1); }
static sh_obj *bytes_rstrip(ARGS) { return bytes_strip_impl(self, argc, argv, 2); }

static sh_obj *bytes_split(ARGS) {
  sh_obj *sep = NULL, *maxo = NULL;
  if (sh_parse_args("split", argc, argv, kw, "|sep maxsplit", &sep, &maxo) < 0) return NULL;
  int64_t maxsplit = -1;
  if (maxo && sh_as_int(maxo, &maxsplit) < 0) return NULL;
  const char *s = sh_bytes_data(self);
  int64_t n = sh_bytes_len(self), i = 0;
  sh_obj *out = sh_list_new(0);
  if (!sep || sep == SH_NONE) {
    while (i < n) {
      while (i < n && isspace((unsigned char)s[i])) i++;
      if (i >= n) break;
      int64_t j = i;
      if (maxsplit >= 0 && SH_LIST_N(out) >= maxsplit) j = n;
      else while (j < n && !isspace((unsigned char)s[j])) j++;
      int64_t e = j;
      if (j == n) while (e > i && isspace((unsigned char)s[e - 1])) e--;
      sh_list_append_steal(out, sh_bytes(s + i, (size_t)(e - i)));
      i = j;
    }
    return out;
  }
  if (want_bytes(sep, "split") < 0) { sh_decref(out); return NULL; }
  int64_t m = sh_bytes_len(sep);
  if (!m) { sh_decref(out); return sh_raise(sh_ValueError, "empty separator"); }
  for (;;) {
    const char *hit = maxsplit >= 0 && SH_LIST_N(out) >= maxsplit ? NULL
                    : find_sub(s + i, n - i, sh_bytes_data(sep), m);
    if (!hit) { sh_list_append_steal(out, sh_bytes(s + i, (size_t)(n - i))); break; }
    sh_list_append_steal(out, sh_bytes(s + i, (size_t)(hit - (s + i))));
    i = hit - s + m;
  }
  return out;
}

static sh_obj *bytes_join(ARGS) {
  NARGS("join", 1, 1);
  sh_obj *l = sh_sequence_to_list(argv[0]);
  if (!l) return NULL;
  sh_buf b = {0};
  for (int64_t i = 0; i < SH_LIST_N(l); i++) {
    sh_obj *x = SH_LIST_ITEMS(l)[i];
    if (!sh_is_bytes(x)) {
      sh_buf_free(&b);
      sh_decref(l);
      return sh_raise(sh_TypeError, "sequence item %lld: expected a bytes-like object, %s found", (long long)i,
                      sh_type_name(x));
    }
    if (i) sh_buf_put(&b, sh_bytes_data(self), (size_t)sh_bytes_len(self));
    sh_buf_put(&b, sh_bytes_data(x), (size_t)sh_bytes_len(x));
  }
  sh_decref(l);
  sh_obj *r = sh_bytes(b.data ? b.data : "", b.len);
  sh_buf_free(&b);
  return r;
}

static sh_obj *bytes_find(ARGS) {
  NARGS("find", 1, 1);
  if (want_bytes(argv[0], "find") < 0) return NULL;
  const char *hit = find_sub(sh_bytes_data(self), sh_bytes_len(self), sh_bytes_data(argv[0]), sh_bytes_len(argv[0]));
  return sh_int(hit ? hit - sh_bytes_data(self) : -1);
}

static sh_obj *bytes_count(ARGS) {
  NARGS("count", 1, 1);
  if (want_bytes(argv[0], "count") < 0) return NULL;
  const char *s = sh_bytes_data(self), *p = sh_bytes_data(argv[0]);
  int64_t n = sh_bytes_len(self), m = sh_bytes_len(argv[0]), c = 0;
  for (int64_t i = 0; i + m <= n;) {
    const char *hit = find_sub(s + i, n - i, p, m);
    if (!hit) break;
    c++;
    i = hit - s + (m ? m : 1);
  }
  return sh_int(c);
}

static sh_obj *bytes_replace(ARGS) {
  NARGS("replace", 2, 2);
  if (want_bytes(argv[0], "replace") < 0 || want_bytes(argv[1], "replace") < 0) return NULL;
  const char *s = sh_bytes_data(self), *p = sh_bytes_data(argv[0]);
  int64_t n = sh_bytes_len(self), m = sh_bytes_len(argv[0]), i = 0;
  if (!m) return sh_incref(self);
  sh_buf b = {0};
  for (;;) {
    const char *hit = find_sub(s + i, n - i, p, m);
    if (!hit) { sh_buf_put(&b, s + i, (size_t)(n - i)); break; }
    sh_buf_put(&b, s + i, (size_t)(hit - (s + i)));
    sh_buf_put(&b, sh_bytes_data(argv[1]), (size_t)sh_bytes_len(argv[1]));
    i = hit - s + m;
  }
  sh_obj *r = sh_bytes(b.data ? b.data : "", b.len);
  sh_buf_free(&b);
  return r;
}

static sh_obj *case_map(sh_obj *self, bool upper) {
  sh_bytes_obj *r = (sh_bytes_obj *)sh_bytes(sh_bytes_data(self), (size_t)sh_bytes_len(self));
  for (int64_t i = 0; i < r->len; i++) {
    unsigned char c = (unsigned char)r->s[i];
    if (c < 128) r->s[i] = (char)(upper ? toupper(c) : tolower(c));
  }
  return &r->head;
}
static sh_obj *bytes_upper(ARGS) { return case_map(self, true); }
static sh_obj *bytes_lower(ARGS) { return case_map(self, false); }

static const sh_method bytes_methods[] = {
  {"decode", bytes_decode, "decode(encoding='utf-8', errors='strict')", "The text these bytes encode."},
  {"hex", bytes_hex, "hex()", "Two hex digits per byte."},
  {"startswith", bytes_startswith, "startswith(prefix)", "Whether the bytes start with prefix."},
  {"endswith", bytes_endswith, "endswith(suffix)", "Whether the bytes end with suffix."},
  {"strip", bytes_strip, "strip(chars=None)", "Without leading and trailing whitespace (or chars)."},
  {"lstrip", bytes_lstrip, "lstrip(chars=None)", "Without leading whitespace (or chars)."},
  {"rstrip", bytes_rstrip, "rstrip(chars=None)", "Without trailing whitespace (or chars)."},
  {"split", bytes_split, "split(sep=None, maxsplit=-1)", "The pieces between separators."},
  {"join", bytes_join, "join(iterable)", "The items with these bytes between them."},
  {"find", bytes_find, "find(sub)", "Offset of the first sub, or -1."},
  {"count", bytes_count, "count(sub)", "How often sub occurs (not overlapping)."},
  {"replace", bytes_replace, "replace(old, new)", "Every old replaced by new."},
  {"upper", bytes_upper, "upper()", "ASCII letters in upper case."},
  {"lower", bytes_lower, "lower()", "ASCII letters in lower case."},
  {NULL}};

sh_type sh_bytes_type = {SH_TYPE_HEAD, .name = "bytes", .repr = bytes_repr,
  .len = bytes_len_hook, .truth = bytes_truth, .binop = bytes_binop, .compare = bytes_compare,
  .hash = bytes_hash, .contains = bytes_contains, .getitem = bytes_getitem,
  .construct = bytes_new, .methods = bytes_methods,
  .help = "bytes(source=b''): an immutable sequence of byte values"};

/* The value of a b'...' literal's body s[0..n): escapes decoded to single bytes (\xff is
 * one byte, not UTF-8). NULL, nothing raised, when it holds a non-ASCII character. */
sh_obj *sh_bytes_literal(const char *s, size_t n, bool raw) {
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)s[i] >= 0x80) return NULL;
  if (raw) return sh_bytes(s, n);
  sh_buf b = {0};
  for (size_t i = 0; i < n; i++) {
    if (s[i] != '\\' || i + 1 >= n) { sh_buf_putc(&b, s[i]); continue; }
    char c = s[++i];
    static const char from[] = "ntrabfv\\'\"", to[] = "\n\t\r\a\b\f\v\\'\"";
    const char *k = strchr(from, c);
    if (c == '\n') continue;
    if (k && c) { sh_buf_putc(&b, to[k - from]); continue; }
    if (c == 'x' && i + 2 < n && isxdigit((unsigned char)s[i + 1]) && isxdigit((unsigned char)s[i + 2])) {
      char h[3] = {s[i + 1], s[i + 2], 0};
      sh_buf_putc(&b, (char)strtol(h, NULL, 16));
      i += 2;
      continue;
    }
    if (c >= '0' && c <= '7') {
      unsigned v = (unsigned)(c - '0');
      for (int j = 0; j < 2 && i + 1 < n && s[i + 1] >= '0' && s[i + 1] <= '7'; j++) v = v * 8 + (unsigned)(s[++i] - '0');
      sh_buf_putc(&b, (char)(v & 255));
      continue;
    }
    sh_buf_putc(&b, '\\');   /* unknown escapes stay, as in Python */
    sh_buf_putc(&b, c);
  }
  sh_obj *r = sh_bytes(b.data ? b.data : "", b.len);
  sh_buf_free(&b);
  return r;
}
