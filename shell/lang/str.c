/* str: the core (interning, hashing, concatenation, repr), the growing byte buffer, and
 * the methods of str. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "shell/lang/interp.h"

/* ---- str ------------------------------------------------------------------------------- */
static int64_t utf8_count(const char *s, size_t n) {
  int64_t c = 0;
  for (size_t i = 0; i < n; i++) c += ((unsigned char)s[i] & 0xC0) != 0x80;
  return c;
}

static sh_obj *empty_str;

/* A str of n bytes, contents not yet filled. */
sh_str_obj *sh_str_alloc(size_t n) {
  if (n > PTRDIFF_MAX / 2) x_oom(n);   /* also tells gcc -O3 the size is sane */
  sh_str_obj *o = xmalloc(sizeof(sh_str_obj) + n + 1);
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
  sh_str_obj *o = sh_str_alloc(n);
  memcpy(o->s, s, n);
  o->nchars = utf8_count(s, n);
  return &o->head;
}

sh_obj *sh_str(const char *s) { return sh_strn(s, strlen(s)); }

sh_obj *sh_strf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *buf = NULL;
  int n = vasprintf(&buf, fmt, ap);   /* the length counts NULs a %c may write */
  va_end(ap);
  if (n < 0) x_oom(0);
  sh_obj *s = sh_strn(buf, n);
  free(buf);
  return s;
}

int64_t sh_str_hash_value(sh_str_obj *s) {
  if (s->hash == -1) {
    uint64_t h = 1469598103934665603ULL;
    for (int64_t i = 0; i < s->len; i++) h = (h ^ (unsigned char)s->s[i]) * 1099511628211ULL;
    s->hash = (int64_t)(h >> 1);
  }
  return s->hash;
}

static int str_hash(sh_obj *o, int64_t *out) { *out = sh_str_hash_value((sh_str_obj *)o); return 0; }

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
    else if (c >= 0xC2 && c < 0xF0) {
      /* the non-printable code points Python escapes (C1 controls, separators, format and
       * private-use characters); others stay as they are */
      size_t len = c >= 0xE0 ? 3 : 2;
      if (i + len > n) { sh_buf_putc(&b, c); continue; }
      uint32_t cp = len == 2 ? (c & 31u) << 6 | (s[i + 1] & 63u)
                             : (c & 15u) << 12 | (s[i + 1] & 63u) << 6 | (s[i + 2] & 63u);
      bool np = (cp >= 0x80 && cp <= 0xA0) || cp == 0xAD || cp == 0x1680 || cp == 0x180E ||
                (cp >= 0x2000 && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202F) ||
                (cp >= 0x205F && cp <= 0x206F) || cp == 0x3000 || cp == 0xFEFF || (cp >= 0xE000 && cp <= 0xF8FF);
      if (np && cp <= 0xFF) sh_buf_printf(&b, "\\x%02x", cp);
      else if (np) sh_buf_printf(&b, "\\u%04x", cp);
      else sh_buf_put(&b, s + i, len);
      i += len - 1;
    } else sh_buf_putc(&b, c);
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
  sh_str_obj *o = sh_str_alloc(na + nb);
  memcpy(o->s, sh_str_cstr(a), na);
  memcpy(o->s + na, sh_str_cstr(b), nb);
  o->nchars = ((sh_str_obj *)a)->nchars + ((sh_str_obj *)b)->nchars;
  return &o->head;
}


static sh_obj *str_binop(int op, sh_obj *a, sh_obj *b) {
  if (op == SH_ADD && sh_is_str(a)) {
    if (!sh_is_str(b))
      return sh_raise(sh_TypeError, "can only concatenate str (not \"%s\") to str", sh_type_name(b));
    return sh_str_concat(a, b);
  }
  if (op == SH_MUL) {
    if (sh_is_str(a) && sh_is_int(b)) return sh_seq_repeat(a, sh_int_value(b));
    if (sh_is_int(a) && sh_is_str(b)) return sh_seq_repeat(b, sh_int_value(a));
  }
  if (op == SH_MOD && sh_is_str(a)) return sh_percent_format(a, b);
  return sh_incref(SH_NOTIMPL);
}

static sh_obj *str_compare(int op, sh_obj *a, sh_obj *b) {
  if (!sh_is_str(a) || !sh_is_str(b)) return sh_incref(SH_NOTIMPL);
  int64_t na = sh_str_len(a), nb = sh_str_len(b);
  int c = memcmp(sh_str_cstr(a), sh_str_cstr(b), na < nb ? na : nb);
  if (c == 0) c = (na > nb) - (na < nb);
  return sh_bool(sh_cmp_result(op, c < 0 ? -1 : c > 0));
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

int sh_norm_index(sh_obj *key, int64_t n, int64_t *out, const char *what) {
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
    if (sh_norm_index(key, s->nchars, &i, "string") < 0) return NULL;
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

static sh_obj *str_iter(sh_obj *o) { return sh_seqiter_new(o); }

sh_type sh_str_type = {SH_TYPE_HEAD, .name = "str", .repr = str_repr, .str = str_str,
  .len = str_len, .truth = str_truth, .binop = str_binop, .compare = str_compare,
  .hash = str_hash, .contains = str_contains, .getitem = str_getitem, .iter = str_iter,
  .methods = sh_str_methods, .help = "str(object=''): text"};

void sh_str_init(void) {
  interned = sh_dict_new();
  empty_str = sh_strn("", 0);
}

void sh_str_fini(void) {
  sh_clear(&empty_str);
  sh_clear(&interned);
}

/* ---- growing byte buffer (internal) ----------------------------------------------------- */
void sh_buf_put(sh_buf *b, const char *s, size_t n) {
  if (n > PTRDIFF_MAX / 2) x_oom(n);   /* also tells gcc -O3 the size is sane */
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 64;
    while (cap < b->len + n + 1) cap *= 2;
    b->data = xrealloc(b->data, cap);
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

/* ---- str methods ------------------------------------------------------------------------ */
#define S(o) sh_str_cstr(o)
#define SLEN(o) sh_str_len(o)

static int want_str(sh_obj *o, const char *fn) {
  if (sh_is_str(o)) return 0;
  sh_raise(sh_TypeError, "%s arg must be None or str", fn);
  return -1;
}

static sh_obj *strip_impl(sh_obj *self, int argc, sh_obj **argv, int which) {
  const char *chars = " \t\n\r\f\v";
  if (argc > 0 && argv[0] != SH_NONE) { if (want_str(argv[0], "strip") < 0) return NULL; chars = S(argv[0]); }
  const char *s = S(self);
  int64_t a = 0, b = SLEN(self);
  if (which & 1) while (a < b && strchr(chars, s[a]) && s[a]) a++;
  if (which & 2) while (b > a && strchr(chars, s[b - 1]) && s[b - 1]) b--;
  return sh_strn(s + a, b - a);
}
static sh_obj *str_strip(ARGS) { return strip_impl(self, argc, argv, 3); }
static sh_obj *str_lstrip(ARGS) { return strip_impl(self, argc, argv, 1); }
static sh_obj *str_rstrip(ARGS) { return strip_impl(self, argc, argv, 2); }

static sh_obj *split_impl(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw, bool right) {
  sh_obj *sep = NULL, *maxo = NULL;
  if (sh_parse_args(right ? "rsplit" : "split", argc, argv, kw, "|sep maxsplit", &sep, &maxo) < 0) return NULL;
  int64_t maxsplit = -1;
  if (maxo && sh_as_int(maxo, &maxsplit) < 0) return NULL;
  if (sep == SH_NONE) sep = NULL;
  if (sep && want_str(sep, "split") < 0) return NULL;
  if (sep && SLEN(sep) == 0) return sh_raise(sh_ValueError, "empty separator");
  const char *s = S(self);
  int64_t n = SLEN(self);
  sh_obj *out = sh_list_new(0);
  if (!right) {
    int64_t i = 0, splits = 0;
    if (!sep) {
      for (;;) {
        while (i < n && isspace((unsigned char)s[i])) i++;
        if (i >= n) break;
        int64_t j = i;
        if (maxsplit >= 0 && splits >= maxsplit) {
          int64_t e = n;
          while (e > i && isspace((unsigned char)s[e - 1])) e--;
          sh_list_append_steal(out, sh_strn(s + i, e - i));
          break;
        }
        while (j < n && !isspace((unsigned char)s[j])) j++;
        sh_list_append_steal(out, sh_strn(s + i, j - i));
        splits++;
        i = j;
      }
      return out;
    }
    const char *sp = S(sep);
    int64_t sl = SLEN(sep);
    for (;;) {
      const char *hit = (maxsplit < 0 || splits < maxsplit) ? memmem(s + i, n - i, sp, sl) : NULL;
      if (!hit) { sh_list_append_steal(out, sh_strn(s + i, n - i)); break; }
      sh_list_append_steal(out, sh_strn(s + i, hit - (s + i)));
      i = hit - s + sl;
      splits++;
    }
    return out;
  }
  /* rsplit: collect from the right, then reverse */
  int64_t j = n, splits = 0;
  if (!sep) {
    for (;;) {
      while (j > 0 && isspace((unsigned char)s[j - 1])) j--;
      if (j <= 0) break;
      if (maxsplit >= 0 && splits >= maxsplit) {
        int64_t b = 0;
        while (b < j && isspace((unsigned char)s[b])) b++;
        sh_list_append_steal(out, sh_strn(s + b, j - b));
        break;
      }
      int64_t i = j;
      while (i > 0 && !isspace((unsigned char)s[i - 1])) i--;
      sh_list_append_steal(out, sh_strn(s + i, j - i));
      splits++;
      j = i;
    }
  } else {
    const char *sp = S(sep);
    int64_t sl = SLEN(sep);
    for (;;) {
      int64_t k = -1;
      if (maxsplit < 0 || splits < maxsplit)
        for (int64_t p = j - sl; p >= 0; p--) if (!memcmp(s + p, sp, sl)) { k = p; break; }
      if (k < 0) { sh_list_append_steal(out, sh_strn(s, j)); break; }
      sh_list_append_steal(out, sh_strn(s + k + sl, j - k - sl));
      j = k;
      splits++;
    }
  }
  int64_t m = SH_LIST_N(out);
  for (int64_t i = 0; i < m / 2; i++) {
    sh_obj *t = SH_LIST_ITEMS(out)[i];
    SH_LIST_ITEMS(out)[i] = SH_LIST_ITEMS(out)[m - 1 - i];
    SH_LIST_ITEMS(out)[m - 1 - i] = t;
  }
  return out;
}
static sh_obj *str_split(ARGS) { return split_impl(self, argc, argv, kw, false); }
static sh_obj *str_rsplit(ARGS) { return split_impl(self, argc, argv, kw, true); }

static sh_obj *str_splitlines(ARGS) {
  sh_obj *keep = NULL;
  if (sh_parse_args("splitlines", argc, argv, kw, "|keepends", &keep) < 0) return NULL;
  bool k = keep && sh_truth(keep) > 0;
  const char *s = S(self);
  int64_t n = SLEN(self), i = 0;
  sh_obj *out = sh_list_new(0);
  while (i < n) {
    int64_t j = i;
    while (j < n && s[j] != '\n' && s[j] != '\r') j++;
    int64_t e = j;
    if (j < n) { j += (s[j] == '\r' && j + 1 < n && s[j + 1] == '\n') ? 2 : 1; }
    sh_list_append_steal(out, sh_strn(s + i, (k ? j : e) - i));
    i = j;
  }
  return out;
}

static sh_obj *str_join(ARGS) {
  NARGS("join", 1, 1);
  sh_obj *l = sh_sequence_to_list(argv[0]);
  if (!l) return NULL;
  sh_buf b = {0};
  for (int64_t i = 0; i < SH_LIST_N(l); i++) {
    sh_obj *x = SH_LIST_ITEMS(l)[i];
    if (!sh_is_str(x)) {
      sh_buf_free(&b);
      sh_decref(l);
      return sh_raise(sh_TypeError, "sequence item %lld: expected str instance, %s found", (long long)i, sh_type_name(x));
    }
    if (i) sh_buf_put(&b, S(self), SLEN(self));
    sh_buf_put(&b, S(x), SLEN(x));
  }
  sh_decref(l);
  return sh_buf_finish(&b);
}

static sh_obj *case_map(sh_obj *self, int mode) {
  sh_obj *r = sh_strn(S(self), SLEN(self));
  char *s = ((sh_str_obj *)r)->s;
  bool start = true;
  for (int64_t i = 0; i < SLEN(r); i++) {
    unsigned char c = s[i];
    switch (mode) {
    case 0: s[i] = tolower(c); break;
    case 1: s[i] = toupper(c); break;
    case 2: s[i] = i == 0 ? toupper(c) : tolower(c); break;
    case 3: s[i] = start ? toupper(c) : tolower(c); start = !isalpha(c); break;
    case 4: s[i] = isupper(c) ? tolower(c) : toupper(c); break;
    }
  }
  return r;
}
static sh_obj *str_lower(ARGS) { return case_map(self, 0); }
static sh_obj *str_upper(ARGS) { return case_map(self, 1); }
static sh_obj *str_capitalize(ARGS) { return case_map(self, 2); }
static sh_obj *str_title(ARGS) { return case_map(self, 3); }
static sh_obj *str_swapcase(ARGS) { return case_map(self, 4); }

/* startswith/endswith(prefix or tuple of prefixes[, start[, end]]) */
static sh_obj *affix(sh_obj *self, int argc, sh_obj **argv, bool end) {
  const char *fn = end ? "endswith" : "startswith";
  if (argc < 1 || argc > 3) return sh_raise(sh_TypeError, "%s() takes 1 to 3 arguments (%d given)", fn, argc);
  sh_obj *s = sh_incref(self);
  if (argc > 1) {   /* the [start:end] part of self */
    sh_obj *slice = sh_slice_new(argv[1], argc > 2 ? argv[2] : NULL, NULL);
    sh_decref(s);
    s = sh_getitem(self, slice);
    sh_decref(slice);
    if (!s) return NULL;
  }
  sh_obj *pre = argv[0], **cands = &pre;
  int64_t nc = 1;
  if (pre->type == &sh_tuple_type) { cands = SH_TUPLE_ITEMS(pre); nc = SH_TUPLE_N(pre); }
  bool hit = false;
  for (int64_t i = 0; i < nc && !hit; i++) {
    sh_obj *p = cands[i];
    if (!sh_is_str(p)) {
      sh_decref(s);
      return sh_raise(sh_TypeError, "%s first arg must be str or a tuple of str, not %s", fn, sh_type_name(p));
    }
    int64_t n = SLEN(s), m = SLEN(p);
    hit = m <= n && !memcmp(S(s) + (end ? n - m : 0), S(p), m);
  }
  sh_decref(s);
  return sh_bool(hit);
}
static sh_obj *str_startswith(ARGS) { return affix(self, argc, argv, false); }
static sh_obj *str_endswith(ARGS) { return affix(self, argc, argv, true); }

static sh_obj *str_replace(ARGS) {
  NARGS("replace", 2, 3);
  if (want_str(argv[0], "replace") < 0 || want_str(argv[1], "replace") < 0) return NULL;
  int64_t count = -1;
  if (argc == 3 && sh_as_int(argv[2], &count) < 0) return NULL;
  const char *s = S(self), *old = S(argv[0]), *new = S(argv[1]);
  int64_t n = SLEN(self), ol = SLEN(argv[0]), nl = SLEN(argv[1]), i = 0, done = 0;
  sh_buf b = {0};
  if (ol == 0) {
    for (int64_t k = 0; k <= n; k++) {
      if (count < 0 || done < count) { sh_buf_put(&b, new, nl); done++; }
      if (k < n) sh_buf_putc(&b, s[k]);
    }
    return sh_buf_finish(&b);
  }
  while (i < n) {
    const char *hit = (count < 0 || done < count) ? memmem(s + i, n - i, old, ol) : NULL;
    if (!hit) { sh_buf_put(&b, s + i, n - i); break; }
    sh_buf_put(&b, s + i, hit - (s + i));
    sh_buf_put(&b, new, nl);
    i = hit - s + ol;
    done++;
  }
  return sh_buf_finish(&b);
}

/* find/rfind/index/rindex/count over [start, end) in code points (ASCII fast). */
static int64_t find_impl(sh_obj *self, int argc, sh_obj **argv, bool rev, int64_t *count) {
  if (argc < 1 || argc > 3) { sh_raise(sh_TypeError, "expected 1 to 3 arguments, got %d", argc); return -2; }
  if (!sh_is_str(argv[0])) { sh_raise(sh_TypeError, "must be str, not %s", sh_type_name(argv[0])); return -2; }
  int64_t n = SLEN(self), start = 0, end = n;
  if (argc > 1 && argv[1] != SH_NONE) { if (sh_as_int(argv[1], &start) < 0) return -2; if (start < 0) start += n; if (start < 0) start = 0; }
  if (argc > 2 && argv[2] != SH_NONE) { if (sh_as_int(argv[2], &end) < 0) return -2; if (end < 0) end += n; if (end > n) end = n; }
  const char *s = S(self), *p = S(argv[0]);
  int64_t m = SLEN(argv[0]), found = -1, c = 0;
  for (int64_t i = start; i + m <= end; i++) {
    if (memcmp(s + i, p, m)) continue;
    if (count) { c++; if (m) i += m - 1; continue; }
    found = i;
    if (!rev) break;
  }
  if (count) { *count = m == 0 ? (end >= start ? end - start + 1 : 0) : c; return 0; }
  return found;
}
static sh_obj *str_find(ARGS) { int64_t r = find_impl(self, argc, argv, false, NULL); return r == -2 ? NULL : sh_int(r); }
static sh_obj *str_rfind(ARGS) { int64_t r = find_impl(self, argc, argv, true, NULL); return r == -2 ? NULL : sh_int(r); }
static sh_obj *str_index(ARGS) {
  int64_t r = find_impl(self, argc, argv, false, NULL);
  if (r == -1) return sh_raise(sh_ValueError, "substring not found");
  return r == -2 ? NULL : sh_int(r);
}
static sh_obj *str_rindex(ARGS) {
  int64_t r = find_impl(self, argc, argv, true, NULL);
  if (r == -1) return sh_raise(sh_ValueError, "substring not found");
  return r == -2 ? NULL : sh_int(r);
}
static sh_obj *str_count(ARGS) {
  int64_t c;
  return find_impl(self, argc, argv, false, &c) == -2 ? NULL : sh_int(c);
}

static sh_obj *str_class(sh_obj *self, int (*pred)(int)) {
  if (SLEN(self) == 0) return sh_bool(false);
  for (int64_t i = 0; i < SLEN(self); i++) if (!pred((unsigned char)S(self)[i])) return sh_bool(false);
  return sh_bool(true);
}
static sh_obj *str_isdigit(ARGS) { return str_class(self, isdigit); }
static sh_obj *str_isalpha(ARGS) { return str_class(self, isalpha); }
static sh_obj *str_isalnum(ARGS) { return str_class(self, isalnum); }
static sh_obj *str_isspace(ARGS) { return str_class(self, isspace); }
static sh_obj *str_case_is(sh_obj *self, bool upper) {
  bool cased = false;
  for (int64_t i = 0; i < SLEN(self); i++) {
    int c = (unsigned char)S(self)[i];
    if (upper ? islower(c) : isupper(c)) return sh_bool(false);
    if (isalpha(c)) cased = true;
  }
  return sh_bool(cased);
}
static sh_obj *str_isupper(ARGS) { return str_case_is(self, true); }
static sh_obj *str_islower(ARGS) { return str_case_is(self, false); }
static sh_obj *str_isidentifier(ARGS) {
  const char *s = S(self);
  if (!*s || isdigit((unsigned char)*s)) return sh_bool(false);
  for (; *s; s++) if (!isalnum((unsigned char)*s) && *s != '_') return sh_bool(false);
  return sh_bool(true);
}

static sh_obj *justify(sh_obj *self, int argc, sh_obj **argv, char how) {
  if (argc < 1 || argc > 2) return sh_raise(sh_TypeError, "expected 1 or 2 arguments, got %d", argc);
  int64_t w;
  if (sh_as_int(argv[0], &w) < 0) return NULL;
  char fill = ' ';
  if (argc == 2) {
    if (!sh_is_str(argv[1]) || SLEN(argv[1]) != 1) return sh_raise(sh_TypeError, "The fill character must be exactly one character long");
    fill = S(argv[1])[0];
  }
  int64_t n = ((sh_str_obj *)self)->nchars;
  if (w <= n) return sh_incref(self);
  int64_t total = w - n, left = how == '<' ? 0 : how == '>' ? total : total / 2 + (total & w & 1);
  sh_buf b = {0};
  for (int64_t i = 0; i < left; i++) sh_buf_putc(&b, fill);
  sh_buf_put(&b, S(self), SLEN(self));
  for (int64_t i = 0; i < total - left; i++) sh_buf_putc(&b, fill);
  return sh_buf_finish(&b);
}
static sh_obj *str_ljust(ARGS) { return justify(self, argc, argv, '<'); }
static sh_obj *str_rjust(ARGS) { return justify(self, argc, argv, '>'); }
static sh_obj *str_center(ARGS) { return justify(self, argc, argv, '^'); }
static sh_obj *str_zfill(ARGS) {
  NARGS("zfill", 1, 1);
  int64_t w;
  if (sh_as_int(argv[0], &w) < 0) return NULL;
  int64_t n = SLEN(self);
  if (w <= n) return sh_incref(self);
  sh_buf b = {0};
  const char *s = S(self);
  int64_t i = 0;
  if (n && (s[0] == '-' || s[0] == '+')) { sh_buf_putc(&b, s[0]); i = 1; }
  for (int64_t k = 0; k < w - n; k++) sh_buf_putc(&b, '0');
  sh_buf_put(&b, s + i, n - i);
  return sh_buf_finish(&b);
}

static sh_obj *partition_impl(sh_obj *self, int argc, sh_obj **argv, bool rev) {
  if (argc != 1 || !sh_is_str(argv[0])) return sh_raise(sh_TypeError, "must be str");
  const char *s = S(self), *p = S(argv[0]);
  int64_t n = SLEN(self), m = SLEN(argv[0]), at = -1;
  if (m == 0) return sh_raise(sh_ValueError, "empty separator");
  for (int64_t i = rev ? n - m : 0; rev ? i >= 0 : i + m <= n; i += rev ? -1 : 1)
    if (!memcmp(s + i, p, m)) { at = i; break; }
  if (at < 0) return rev ? sh_tuple_of(3, sh_str(""), sh_str(""), sh_incref(self))
                         : sh_tuple_of(3, sh_incref(self), sh_str(""), sh_str(""));
  return sh_tuple_of(3, sh_strn(s, at), sh_incref(argv[0]), sh_strn(s + at + m, n - at - m));
}
static sh_obj *str_partition(ARGS) { return partition_impl(self, argc, argv, false); }
static sh_obj *str_rpartition(ARGS) { return partition_impl(self, argc, argv, true); }
static sh_obj *str_encode(ARGS) {
  sh_obj *enc = NULL, *err = NULL;
  if (sh_parse_args("encode", argc, argv, kw, "|encoding errors", &enc, &err) < 0) return NULL;
  return sh_str_encode(self, enc, err);
}
static sh_obj *str_expandtabs(ARGS) {
  int64_t ts = 8;
  if (argc && sh_as_int(argv[0], &ts) < 0) return NULL;
  sh_buf b = {0};
  int64_t col = 0;
  for (const char *s = S(self); *s; s++) {
    if (*s == '\t') { int64_t k = ts ? ts - col % ts : 0; for (int64_t i = 0; i < k; i++) sh_buf_putc(&b, ' '); col += k; }
    else { sh_buf_putc(&b, *s); col = *s == '\n' ? 0 : col + 1; }
  }
  return sh_buf_finish(&b);
}

/* str.format: "{0} {name} {x.attr} {y[0]:>10} {{literal}}" */
static sh_obj *str_format(ARGS) {
  const char *s = S(self);
  sh_buf b = {0};
  int auto_idx = 0;
  while (*s) {
    if (*s == '{' && s[1] == '{') { sh_buf_putc(&b, '{'); s += 2; continue; }
    if (*s == '}' && s[1] == '}') { sh_buf_putc(&b, '}'); s += 2; continue; }
    if (*s == '}') { sh_buf_free(&b); return sh_raise(sh_ValueError, "Single '}' encountered in format string"); }
    if (*s != '{') { sh_buf_putc(&b, *s++); continue; }
    s++;
    /* field: up to a top-level '}' with nested {} in the spec */
    const char *start = s;
    int depth = 0;
    while (*s && (depth || *s != '}')) { if (*s == '{') depth++; else if (*s == '}') depth--; s++; }
    if (!*s) { sh_buf_free(&b); return sh_raise(sh_ValueError, "expected '}' before end of string"); }
    char *field = xstrndup(start, s - start);
    s++;
    char *spec = NULL, conv = 0;
    char *colon = NULL, *bang = NULL;
    for (char *p = field; *p; p++) {
      if (*p == '[') { while (*p && *p != ']') p++; if (!*p) break; continue; }
      if (*p == '!' && !bang && !colon) bang = p;
      if (*p == ':') { colon = p; break; }
    }
    if (colon) { *colon = 0; spec = colon + 1; }
    if (bang) { conv = bang[1]; *bang = 0; }
    /* the object: first name or index, then .attr / [key] */
    char *p = field;
    size_t nlen = strcspn(p, ".[");
    sh_obj *v = NULL;
    if (nlen == 0) {
      if (auto_idx >= argc) { free(field); sh_buf_free(&b); return sh_raise(sh_IndexError, "Replacement index %d out of range for positional args tuple", auto_idx); }
      v = sh_incref(argv[auto_idx++]);
    } else if (isdigit((unsigned char)p[0])) {
      int idx = atoi(p);
      if (idx >= argc) { free(field); sh_buf_free(&b); return sh_raise(sh_IndexError, "Replacement index %d out of range for positional args tuple", idx); }
      v = sh_incref(argv[idx]);
    } else {
      char name[256];
      snprintf(name, sizeof name, "%.*s", (int)nlen, p);
      sh_obj *x = kw ? sh_dict_get_str(kw, name) : NULL;
      if (!x) {
        sh_obj *k = sh_str(name);
        sh_obj *exc = sh_call((sh_obj *)sh_KeyError, 1, &k, NULL);
        sh_decref(k);
        sh_raise_obj(exc);
        sh_decref(exc);
        free(field);
        sh_buf_free(&b);
        return NULL;
      }
      v = sh_incref(x);
    }
    p += nlen;
    while (v && *p) {
      if (*p == '.') {
        size_t k = strcspn(p + 1, ".[");
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)k, p + 1);
        sh_obj *a = sh_getattr(v, name);
        sh_decref(v);
        v = a;
        p += 1 + k;
      } else if (*p == '[') {
        char *e = strchr(p, ']');
        if (!e) break;
        sh_obj *key = isdigit((unsigned char)p[1]) ? sh_int(atoll(p + 1)) : sh_strn(p + 1, e - p - 1);
        sh_obj *a = sh_getitem(v, key);
        sh_decref(key);
        sh_decref(v);
        v = a;
        p = e + 1;
      } else break;
    }
    if (!v) { free(field); sh_buf_free(&b); return NULL; }
    if (conv) {
      sh_obj *c = conv == 's' ? sh_to_str(v) : sh_repr(v);
      sh_decref(v);
      if (!(v = c)) { free(field); sh_buf_free(&b); return NULL; }
    }
    sh_obj *specstr = NULL;
    if (spec && strchr(spec, '{')) {   /* nested replacement fields in the spec */
      sh_obj *t = sh_str(spec);
      specstr = str_format(t, argc, argv, kw);
      sh_decref(t);
      if (!specstr) { sh_decref(v); free(field); sh_buf_free(&b); return NULL; }
    }
    sh_obj *r = sh_format_spec(v, specstr ? S(specstr) : spec ? spec : "");
    sh_decref(specstr);
    sh_decref(v);
    free(field);
    if (!r) { sh_buf_free(&b); return NULL; }
    sh_buf_put(&b, S(r), SLEN(r));
    sh_decref(r);
  }
  return sh_buf_finish(&b);
}

const sh_method sh_str_methods[] = {
  {"split", str_split, "split(sep=None, maxsplit=-1)", "Split on sep (runs of whitespace when None)."},
  {"rsplit", str_rsplit, "rsplit(sep=None, maxsplit=-1)", "Split from the right."},
  {"splitlines", str_splitlines, "splitlines(keepends=False)", "Split at line boundaries."},
  {"join", str_join, "join(iterable)", "Concatenate strings with this one between them."},
  {"strip", str_strip, "strip(chars=None)", "Remove leading and trailing whitespace (or chars)."},
  {"lstrip", str_lstrip, "lstrip(chars=None)", "Remove leading whitespace (or chars)."},
  {"rstrip", str_rstrip, "rstrip(chars=None)", "Remove trailing whitespace (or chars)."},
  {"lower", str_lower, "lower()", "Lower-case copy."},
  {"upper", str_upper, "upper()", "Upper-case copy."},
  {"capitalize", str_capitalize, "capitalize()", "First character upper-case, the rest lower."},
  {"title", str_title, "title()", "Each word capitalized."},
  {"swapcase", str_swapcase, "swapcase()", "Swap upper and lower case."},
  {"format", str_format, "format(*args, **kwargs)", "Substitute {} fields."},
  {"startswith", str_startswith, "startswith(prefix[, start[, end]])", "Whether the string starts with prefix (or one of a tuple)."},
  {"endswith", str_endswith, "endswith(suffix[, start[, end]])", "Whether the string ends with suffix (or one of a tuple)."},
  {"replace", str_replace, "replace(old, new, count=-1)", "Replace occurrences of old by new."},
  {"find", str_find, "find(sub[, start[, end]])", "Lowest index of sub, or -1."},
  {"rfind", str_rfind, "rfind(sub[, start[, end]])", "Highest index of sub, or -1."},
  {"index", str_index, "index(sub[, start[, end]])", "Like find but raises ValueError."},
  {"rindex", str_rindex, "rindex(sub[, start[, end]])", "Like rfind but raises ValueError."},
  {"count", str_count, "count(sub[, start[, end]])", "Number of non-overlapping occurrences."},
  {"isdigit", str_isdigit, "isdigit()", "All characters are digits."},
  {"isalpha", str_isalpha, "isalpha()", "All characters are letters."},
  {"isalnum", str_isalnum, "isalnum()", "All characters are letters or digits."},
  {"isspace", str_isspace, "isspace()", "All characters are whitespace."},
  {"isupper", str_isupper, "isupper()", "All cased characters are upper-case."},
  {"islower", str_islower, "islower()", "All cased characters are lower-case."},
  {"isidentifier", str_isidentifier, "isidentifier()", "A valid identifier."},
  {"isnumeric", str_isdigit, "isnumeric()", "All characters are digits."},
  {"isdecimal", str_isdigit, "isdecimal()", "All characters are digits."},
  {"zfill", str_zfill, "zfill(width)", "Pad with zeros on the left."},
  {"ljust", str_ljust, "ljust(width, fillchar=' ')", "Left-justify in width."},
  {"rjust", str_rjust, "rjust(width, fillchar=' ')", "Right-justify in width."},
  {"center", str_center, "center(width, fillchar=' ')", "Center in width."},
  {"partition", str_partition, "partition(sep)", "(head, sep, tail) at the first sep."},
  {"rpartition", str_rpartition, "rpartition(sep)", "(head, sep, tail) at the last sep."},
  {"encode", str_encode, "encode(encoding='utf-8')", "The string itself (tfsh has no bytes type)."},
  {"decode", str_encode, "decode(encoding='utf-8')", "The string itself (tfsh has no bytes type)."},
  {"expandtabs", str_expandtabs, "expandtabs(tabsize=8)", "Replace tabs by spaces."},
  {NULL}};
