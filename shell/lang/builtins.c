/* Built-in functions, the constructors of the built-in types, and the methods of str,
 * list, tuple, dict and set. Also the file type behind open() and sys.stdout. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "shell/lang/eval.h"
#include "shell/lang/interp.h"

#define ARGS sh_obj *self, int argc, sh_obj **argv, sh_obj *kw
#define NOKW(name) do { if (kw && sh_dict_len(kw)) return sh_raise(sh_TypeError, "%s() takes no keyword arguments", name); } while (0)
#define NARGS(name, lo, hi) do { \
    if (argc < (lo) || argc > (hi)) { \
      if ((lo) == (hi)) return sh_raise(sh_TypeError, "%s() takes exactly %d argument%s (%d given)", name, lo, (lo) == 1 ? "" : "s", argc); \
      if (argc < (lo)) return sh_raise(sh_TypeError, "%s expected at least %d argument%s, got %d", name, lo, (lo) == 1 ? "" : "s", argc); \
      return sh_raise(sh_TypeError, "%s expected at most %d argument%s, got %d", name, hi, (hi) == 1 ? "" : "s", argc); \
    } } while (0)

__attribute__((weak)) void sh_modules_init_extra(void) {}

/* ---- files ------------------------------------------------------------------------------ */
typedef struct { sh_obj head; FILE *fp; sh_obj *name; char mode[8]; bool owned; } file_obj;

static void file_destroy(sh_obj *o) {
  file_obj *f = (file_obj *)o;
  if (f->fp && f->owned) fclose(f->fp);
  sh_decref(f->name);
}
static sh_obj *file_repr(sh_obj *o) {
  file_obj *f = (file_obj *)o;
  return sh_strf("<_io.TextIOWrapper name=%s mode='%s'>", f->name ? sh_str_cstr(f->name) : "?", f->mode);
}
static int file_check(file_obj *f) {
  if (!f->fp) { sh_raise(sh_ValueError, "I/O operation on closed file."); return -1; }
  return 0;
}
static sh_obj *file_read(ARGS) {
  file_obj *f = (file_obj *)self;
  if (file_check(f) < 0) return NULL;
  int64_t n = -1;
  if (argc > 0 && argv[0] != SH_NONE && sh_as_int(argv[0], &n) < 0) return NULL;
  sh_buf b = {0};
  char buf[65536];
  size_t got;
  while ((n < 0 || (int64_t)b.len < n) &&
         (got = fread(buf, 1, n < 0 || n - (int64_t)b.len > (int64_t)sizeof buf ? sizeof buf : (size_t)(n - b.len), f->fp)) > 0)
    sh_buf_put(&b, buf, got);
  return sh_buf_finish(&b);
}
static sh_obj *file_readline(ARGS) {
  file_obj *f = (file_obj *)self;
  if (file_check(f) < 0) return NULL;
  char *line = NULL;
  size_t cap = 0;
  ssize_t n = getline(&line, &cap, f->fp);
  sh_obj *r = sh_strn(n > 0 ? line : "", n > 0 ? (size_t)n : 0);
  free(line);
  return r;
}
static sh_obj *file_next(sh_obj *o) {
  file_obj *f = (file_obj *)o;
  if (!f->fp) return sh_raise(sh_ValueError, "I/O operation on closed file.");
  sh_obj *line = file_readline(o, 0, NULL, NULL);
  if (line && sh_str_len(line) == 0) { sh_decref(line); return NULL; }
  return line;
}
static sh_obj *file_readlines(ARGS) {
  sh_obj *l = sh_list_new(0), *x;
  while ((x = file_next(self))) sh_list_append_steal(l, x);
  if (sh_err_occurred()) { sh_decref(l); return NULL; }
  return l;
}
void (*sh_screen_hook)(bool idle);

static sh_obj *file_write(ARGS) {
  file_obj *f = (file_obj *)self;
  if (file_check(f) < 0) return NULL;
  NARGS("write", 1, 1);
  if (!sh_is_str(argv[0])) return sh_raise(sh_TypeError, "write() argument must be str, not %s", sh_type_name(argv[0]));
  if (f->fp == stdout || f->fp == stderr) sh_screen_clear(false);
  fwrite(sh_str_cstr(argv[0]), 1, sh_str_len(argv[0]), f->fp);
  if (f->fp == stderr) fflush(stderr);
  return sh_int(((sh_str_obj *)argv[0])->nchars);
}
static sh_obj *file_writelines(ARGS) {
  NARGS("writelines", 1, 1);
  sh_obj *it = sh_iter(argv[0]), *x;
  if (!it) return NULL;
  while ((x = sh_next(it))) {
    sh_obj *r = file_write(self, 1, &x, NULL);
    sh_decref(x);
    if (!r) { sh_decref(it); return NULL; }
    sh_decref(r);
  }
  sh_decref(it);
  return sh_err_occurred() ? NULL : sh_none();
}
static sh_obj *file_flush(ARGS) { file_obj *f = (file_obj *)self; if (f->fp) fflush(f->fp); return sh_none(); }
static sh_obj *file_close(ARGS) {
  file_obj *f = (file_obj *)self;
  if (f->fp && f->owned) fclose(f->fp);
  f->fp = NULL;
  return sh_none();
}
static sh_obj *file_isatty(ARGS) { file_obj *f = (file_obj *)self; return sh_bool(f->fp && isatty(fileno(f->fp))); }
static sh_obj *file_fileno(ARGS) { file_obj *f = (file_obj *)self; return f->fp ? sh_int(fileno(f->fp)) : sh_raise(sh_ValueError, "I/O operation on closed file."); }
static sh_obj *file_enter(sh_obj *o) { return sh_incref(o); }
static int file_exit(sh_obj *o, sh_obj *exc) { sh_decref(file_close(o, 0, NULL, NULL)); return 0; }
static sh_obj *file_getattr(sh_obj *o, const char *name) {
  file_obj *f = (file_obj *)o;
  if (!strcmp(name, "name")) return sh_incref(f->name ? f->name : SH_NONE);
  if (!strcmp(name, "closed")) return sh_bool(!f->fp);
  if (!strcmp(name, "mode")) return sh_str(f->mode);
  return NULL;
}
static sh_obj *self_iter(sh_obj *o) { return sh_incref(o); }
static const sh_method file_methods[] = {
  {"read", file_read, "read(size=-1)", "Read up to size characters (all when negative)."},
  {"readline", file_readline, "readline()", "Read one line, with its newline."},
  {"readlines", file_readlines, "readlines()", "All remaining lines as a list."},
  {"write", file_write, "write(s)", "Write a string; returns its length."},
  {"writelines", file_writelines, "writelines(lines)", "Write each string of an iterable."},
  {"flush", file_flush, "flush()", "Flush the write buffer."},
  {"close", file_close, "close()", "Close the file."},
  {"isatty", file_isatty, "isatty()", "Whether the file is a terminal."},
  {"fileno", file_fileno, "fileno()", "The file descriptor."},
  {NULL}};
sh_type sh_file_type = {SH_TYPE_HEAD, .name = "TextIOWrapper", .size = sizeof(file_obj),
  .destroy = file_destroy, .repr = file_repr, .methods = file_methods, .iter = self_iter,
  .next = file_next, .enter = file_enter, .exit = file_exit, .getattr = file_getattr};

sh_obj *sh_file_wrap(FILE *fp, const char *name, const char *mode, bool owned) {
  file_obj *f = sh_new(&sh_file_type);
  f->fp = fp;
  f->name = sh_str(name);
  snprintf(f->mode, sizeof f->mode, "%s", mode);
  f->owned = owned;
  return &f->head;
}

static sh_obj *bi_open(ARGS) {
  sh_obj *path, *mode = NULL, *enc = NULL, *buffering = NULL, *errors = NULL, *newline = NULL;
  if (sh_parse_args("open", argc, argv, kw, "file |mode buffering encoding errors newline", &path, &mode, &buffering, &enc, &errors, &newline) < 0) return NULL;
  const char *p = sh_as_cstr(path), *m = mode ? sh_as_cstr(mode) : "r";
  if (!p || !m) return NULL;
  char cm[8];
  snprintf(cm, sizeof cm, "%s", m);
  for (char *c = cm; *c; c++) if (*c == 't') memmove(c, c + 1, strlen(c));
  FILE *fp = fopen(p, cm);
  if (!fp) {
    sh_type *t = errno == ENOENT ? sh_FileNotFoundError : sh_OSError;
    return sh_raise(t, "[Errno %d] %s: '%s'", errno, strerror(errno), p);
  }
  return sh_file_wrap(fp, p, m, true);
}

/* ---- print and friends ------------------------------------------------------------------ */
static int write_to(sh_obj *file, const char *s, size_t n) {
  if (file->type == &sh_file_type) {
    file_obj *f = (file_obj *)file;
    if (file_check(f) < 0) return -1;
    if (f->fp == stdout || f->fp == stderr) sh_screen_clear(false);
    fwrite(s, 1, n, f->fp);
    return 0;
  }
  sh_obj *str = sh_strn(s, n);
  sh_obj *r = sh_call_method(file, "write", 1, &str, NULL);
  sh_decref(str);
  sh_decref(r);
  return r ? 0 : -1;
}

static sh_obj *bi_print(ARGS) {
  sh_obj *sep = NULL, *end = NULL, *file = NULL, *flush = NULL;
  if (kw) {
    sh_obj *k, *v;
    for (int64_t p = 0; sh_dict_next(kw, &p, &k, &v);) {
      const char *n = sh_str_cstr(k);
      if (!strcmp(n, "sep")) sep = v;
      else if (!strcmp(n, "end")) end = v;
      else if (!strcmp(n, "file")) file = v;
      else if (!strcmp(n, "flush")) flush = v;
      else return sh_raise(sh_TypeError, "'%s' is an invalid keyword argument for print()", n);
    }
  }
  if (sep == SH_NONE) sep = NULL;
  if (end == SH_NONE) end = NULL;
  if (file == SH_NONE) file = NULL;
  if ((sep && !sh_is_str(sep)) || (end && !sh_is_str(end)))
    return sh_raise(sh_TypeError, "%s must be None or a string, not %s", sep && !sh_is_str(sep) ? "sep" : "end",
                    sh_type_name(sep && !sh_is_str(sep) ? sep : end));
  if (!file) file = sh_sys_stdout();
  sh_buf b = {0};
  for (int i = 0; i < argc; i++) {
    if (i) sh_buf_puts(&b, sep ? sh_str_cstr(sep) : " ");
    if (sh_buf_put_obj(&b, argv[i], false) < 0) { sh_buf_free(&b); return NULL; }
  }
  sh_buf_puts(&b, end ? sh_str_cstr(end) : "\n");
  int rc = write_to(file, b.data, b.len);
  sh_buf_free(&b);
  if (rc < 0) return NULL;
  if (flush && sh_truth(flush) > 0) sh_decref(sh_call_method(file, "flush", 0, NULL, NULL));
  return sh_none();
}

static sh_obj *bi_input(ARGS) {
  if (argc > 0) {
    sh_obj *s = sh_to_str(argv[0]);
    if (!s) return NULL;
    fputs(sh_str_cstr(s), stdout);
    fflush(stdout);
    sh_decref(s);
  }
  char *line = NULL;
  size_t cap = 0;
  ssize_t n = getline(&line, &cap, stdin);
  if (n < 0) { free(line); return sh_raise(sh_EOFError, "EOF when reading a line"); }
  if (n && line[n - 1] == '\n') n--;
  sh_obj *r = sh_strn(line, n);
  free(line);
  return r;
}

static sh_obj *bi_len(ARGS) {
  NOKW("len");
  NARGS("len", 1, 1);
  int64_t n = sh_len(argv[0]);
  return n < 0 ? NULL : sh_int(n);
}

static sh_obj *bi_repr(ARGS) { NARGS("repr", 1, 1); return sh_repr(argv[0]); }
static sh_obj *bi_id(ARGS) { NARGS("id", 1, 1); return sh_int((int64_t)(intptr_t)argv[0]); }
static sh_obj *bi_hash(ARGS) {
  NARGS("hash", 1, 1);
  int64_t h;
  return sh_hash(argv[0], &h) < 0 ? NULL : sh_int(h);
}
static sh_obj *bi_callable(ARGS) {
  NARGS("callable", 1, 1);
  sh_obj *o = argv[0];
  bool c = o->type == &sh_func_type || o->type == &sh_builtin_type || o->type == &sh_type_type;
  for (sh_type *t = o->type; t && !c; t = t->base) c = t->call != NULL && t != &sh_object_type;
  if (c && (o->type->flags & SH_TF_INSTANCE)) {
    sh_obj *f = sh_getattr_opt(o, "__call__");
    c = f != NULL;
    sh_decref(f);
    sh_err_clear();
  }
  return sh_bool(c);
}

static sh_obj *bi_abs(ARGS) {
  NARGS("abs", 1, 1);
  sh_obj *x = argv[0];
  if (sh_is_int(x)) {
    int64_t v = sh_int_value(x);
    if (v == INT64_MIN) return sh_raise(sh_OverflowError, "integer overflow (tfsh ints are 64-bit)");
    return sh_int(v < 0 ? -v : v);
  }
  if (sh_is_float(x)) return sh_float(fabs(sh_float_value(x)));
  sh_obj *f = sh_getattr_opt(x, "__abs__");
  if (f) { sh_obj *r = sh_call(f, 0, NULL, NULL); sh_decref(f); return r; }
  sh_err_clear();
  return sh_raise(sh_TypeError, "bad operand type for abs(): '%s'", sh_type_name(x));
}

static sh_obj *bi_round(ARGS) {
  sh_obj *x, *nd = NULL;
  if (sh_parse_args("round", argc, argv, kw, "number |ndigits", &x, &nd) < 0) return NULL;
  if (nd == SH_NONE) nd = NULL;
  if (sh_is_int(x)) {
    if (!nd || sh_int_value(nd) >= 0) return sh_int(sh_int_value(x));
    int64_t p = 1, v = sh_int_value(x);
    for (int64_t i = 0; i < -sh_int_value(nd) && p < INT64_MAX / 10; i++) p *= 10;
    double r = rint((double)v / p) * p;
    return sh_int((int64_t)r);
  }
  if (!sh_is_float(x)) {
    sh_obj *f = sh_getattr_opt(x, "__round__");
    if (f) { sh_obj *r = sh_call(f, nd ? 1 : 0, &nd, NULL); sh_decref(f); return r; }
    sh_err_clear();
    return sh_raise(sh_TypeError, "type %s doesn't define __round__ method", sh_type_name(x));
  }
  double v = sh_float_value(x);
  if (!nd) {
    if (isnan(v)) return sh_raise(sh_ValueError, "cannot convert float NaN to integer");
    if (isinf(v)) return sh_raise(sh_OverflowError, "cannot convert float infinity to integer");
    return sh_int((int64_t)rint(v));
  }
  int64_t n;
  if (sh_as_int(nd, &n) < 0) return NULL;
  if (!isfinite(v)) return sh_float(v);
  if (n > 300) return sh_float(v);
  if (n >= 0) {
    char buf[512];
    snprintf(buf, sizeof buf, "%.*f", (int)n, v);   /* correctly rounded from the exact value */
    return sh_float(strtod(buf, NULL));
  }
  double p = pow(10, (double)-n);
  return sh_float(rint(v / p) * p);
}

static sh_obj *bi_divmod(ARGS) {
  NARGS("divmod", 2, 2);
  sh_obj *q = sh_binop(SH_FLOORDIV, argv[0], argv[1]);
  if (!q) return NULL;
  sh_obj *r = sh_binop(SH_MOD, argv[0], argv[1]);
  if (!r) { sh_decref(q); return NULL; }
  return sh_tuple_of(2, q, r);
}

static sh_obj *bi_pow(ARGS) {
  NARGS("pow", 2, 3);
  sh_obj *r = sh_binop(SH_POW, argv[0], argv[1]);
  if (r && argc == 3) { sh_obj *m = sh_binop(SH_MOD, r, argv[2]); sh_decref(r); r = m; }
  return r;
}

static sh_obj *bi_chr(ARGS) {
  NARGS("chr", 1, 1);
  int64_t c;
  if (sh_as_int(argv[0], &c) < 0) return NULL;
  if (c < 0 || c > 0x10FFFF) return sh_raise(sh_ValueError, "chr() arg not in range(0x110000)");
  char s[5] = {0};
  if (c < 0x80) s[0] = c;
  else if (c < 0x800) { s[0] = 0xC0 | c >> 6; s[1] = 0x80 | (c & 63); }
  else if (c < 0x10000) { s[0] = 0xE0 | c >> 12; s[1] = 0x80 | (c >> 6 & 63); s[2] = 0x80 | (c & 63); }
  else { s[0] = 0xF0 | c >> 18; s[1] = 0x80 | (c >> 12 & 63); s[2] = 0x80 | (c >> 6 & 63); s[3] = 0x80 | (c & 63); }
  return sh_str(s);
}

static sh_obj *bi_ord(ARGS) {
  NARGS("ord", 1, 1);
  sh_obj *s = argv[0];
  if (!sh_is_str(s)) return sh_raise(sh_TypeError, "ord() expected string of length 1, but %s found", sh_type_name(s));
  if (((sh_str_obj *)s)->nchars != 1)
    return sh_raise(sh_TypeError, "ord() expected a character, but string of length %lld found", (long long)((sh_str_obj *)s)->nchars);
  const unsigned char *p = (const unsigned char *)sh_str_cstr(s);
  int64_t c = p[0];
  if (c >= 0xF0) c = (c & 7) << 18 | (p[1] & 63) << 12 | (p[2] & 63) << 6 | (p[3] & 63);
  else if (c >= 0xE0) c = (c & 15) << 12 | (p[1] & 63) << 6 | (p[2] & 63);
  else if (c >= 0xC0) c = (c & 31) << 6 | (p[1] & 63);
  return sh_int(c);
}

static sh_obj *int_base_str(sh_obj *x, const char *spec) {
  int64_t v;
  if (sh_as_int(x, &v) < 0) return NULL;
  return sh_format_spec(x, spec);
}
static sh_obj *bi_hex(ARGS) { NARGS("hex", 1, 1); return int_base_str(argv[0], "#x"); }
static sh_obj *bi_oct(ARGS) { NARGS("oct", 1, 1); return int_base_str(argv[0], "#o"); }
static sh_obj *bi_bin(ARGS) { NARGS("bin", 1, 1); return int_base_str(argv[0], "#b"); }

static sh_obj *bi_format(ARGS) {
  NARGS("format", 1, 2);
  const char *spec = argc > 1 ? sh_as_cstr(argv[1]) : "";
  return spec ? sh_format_spec(argv[0], spec) : NULL;
}

/* ---- iteration helpers ------------------------------------------------------------------ */
typedef struct { sh_obj head; sh_obj *fn; sh_obj *its; int64_t i; int kind; } genit;
enum { G_ENUMERATE, G_ZIP, G_MAP, G_FILTER };
static void genit_destroy(sh_obj *o) { genit *g = (genit *)o; sh_decref(g->fn); sh_decref(g->its); }
static sh_obj *genit_next(sh_obj *o) {
  genit *g = (genit *)o;
  if (!g->its) return NULL;
  int64_t n = SH_TUPLE_N(g->its);
  sh_obj **its = SH_TUPLE_ITEMS(g->its);
  if (sh_interrupted && sh_check_interrupt() < 0) return NULL;
  switch (g->kind) {
  case G_ENUMERATE: {
    sh_obj *x = sh_next(its[0]);
    if (!x) return NULL;
    return sh_tuple_of(2, sh_int(g->i++), x);
  }
  case G_FILTER:
    for (;;) {
      sh_obj *x = sh_next(its[0]);
      if (!x) return NULL;
      sh_obj *t = g->fn == SH_NONE ? sh_incref(x) : sh_call(g->fn, 1, &x, NULL);
      if (!t) { sh_decref(x); return NULL; }
      int b = sh_truth(t);
      sh_decref(t);
      if (b < 0) { sh_decref(x); return NULL; }
      if (b) return x;
      sh_decref(x);
    }
  default: {
    sh_obj *t = sh_tuple_new(n);
    for (int64_t i = 0; i < n; i++) {
      sh_obj *x = sh_next(its[i]);
      if (!x) {
        for (int64_t k = i; k < n; k++) SH_TUPLE_ITEMS(t)[k] = sh_none();
        sh_decref(t);
        return NULL;
      }
      SH_TUPLE_ITEMS(t)[i] = x;
    }
    if (g->kind == G_ZIP) return t;
    sh_obj *r = sh_call(g->fn, (int)n, SH_TUPLE_ITEMS(t), NULL);
    sh_decref(t);
    return r;
  }
  }
}
static sh_type genit_type = {SH_TYPE_HEAD, .name = "iterator", .size = sizeof(genit),
  .destroy = genit_destroy, .iter = self_iter, .next = genit_next};

static sh_obj *genit_new(int kind, sh_obj *fn, int n, sh_obj **seqs) {
  sh_obj *its = sh_tuple_new(n);
  for (int i = 0; i < n; i++) {
    sh_obj *it = sh_iter(seqs[i]);
    if (!it) { for (int k = i; k < n; k++) SH_TUPLE_ITEMS(its)[k] = sh_none(); sh_decref(its); return NULL; }
    SH_TUPLE_ITEMS(its)[i] = it;
  }
  genit *g = sh_new(&genit_type);
  g->kind = kind;
  g->fn = sh_incref(fn);
  g->its = its;
  return &g->head;
}

static sh_obj *bi_enumerate(ARGS) {
  sh_obj *it, *start = NULL;
  if (sh_parse_args("enumerate", argc, argv, kw, "iterable |start", &it, &start) < 0) return NULL;
  sh_obj *g = genit_new(G_ENUMERATE, NULL, 1, &it);
  if (g && start && sh_as_int(start, &((genit *)g)->i) < 0) { sh_decref(g); return NULL; }
  return g;
}
static sh_obj *bi_zip(ARGS) { NOKW("zip"); return genit_new(G_ZIP, NULL, argc, argv); }
static sh_obj *bi_map(ARGS) {
  NOKW("map");
  if (argc < 2) return sh_raise(sh_TypeError, "map() must have at least two arguments.");
  return genit_new(G_MAP, argv[0], argc - 1, argv + 1);
}
static sh_obj *bi_filter(ARGS) { NARGS("filter", 2, 2); return genit_new(G_FILTER, argv[0], 1, argv + 1); }

static sh_obj *bi_iter(ARGS) { NARGS("iter", 1, 1); return sh_iter(argv[0]); }
static sh_obj *bi_next(ARGS) {
  NARGS("next", 1, 2);
  sh_obj *r = sh_next(argv[0]);
  if (r || sh_err_occurred()) return r;
  if (argc > 1) return sh_incref(argv[1]);
  sh_err_restore(sh_exc_new(sh_StopIteration, sh_tuple_new(0)));
  return NULL;
}

static sh_obj *bi_reversed(ARGS) {
  NARGS("reversed", 1, 1);
  sh_obj *o = argv[0];
  if (o->type == &sh_range_type) {
    sh_range_obj *r = (sh_range_obj *)o, *n = sh_new(&sh_range_type);
    int64_t len = sh_len(o);
    n->start = r->start + (len - 1) * r->step;
    n->step = -r->step;
    n->stop = r->start - r->step;
    sh_obj *it = sh_iter(&n->head);
    sh_decref(&n->head);
    return it;
  }
  if (sh_isinstance(o, &sh_set_type)) return sh_raise(sh_TypeError, "'set' object is not reversible");
  sh_obj *l = sh_sequence_to_list(o);
  if (!l) return NULL;
  int64_t n = SH_LIST_N(l);
  for (int64_t i = 0; i < n / 2; i++) {
    sh_obj *t = SH_LIST_ITEMS(l)[i];
    SH_LIST_ITEMS(l)[i] = SH_LIST_ITEMS(l)[n - 1 - i];
    SH_LIST_ITEMS(l)[n - 1 - i] = t;
  }
  sh_obj *it = sh_iter(l);
  sh_decref(l);
  return it;
}

/* Stable merge sort of items by keys (parallel arrays). */
static int sort_items(sh_obj **items, sh_obj **keys, int64_t n, bool reverse) {
  if (n < 2) return 0;
  sh_obj **ti = malloc(n * sizeof *ti), **tk = malloc(n * sizeof *tk);
  int rc = 0;
  for (int64_t width = 1; width < n && rc == 0; width *= 2) {
    for (int64_t lo = 0; lo < n && rc == 0; lo += 2 * width) {
      int64_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
      int64_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) {
        /* take right first only when strictly before left */
        int lt = reverse ? sh_compare_bool(SH_LT, keys[i], keys[j]) : sh_compare_bool(SH_LT, keys[j], keys[i]);
        if (lt < 0) { rc = -1; break; }
        if (lt) { ti[k] = items[j]; tk[k++] = keys[j++]; }
        else { ti[k] = items[i]; tk[k++] = keys[i++]; }
      }
      if (rc) break;
      while (i < mid) { ti[k] = items[i]; tk[k++] = keys[i++]; }
      while (j < hi) { ti[k] = items[j]; tk[k++] = keys[j++]; }
      memcpy(items + lo, ti + lo, (hi - lo) * sizeof *ti);
      memcpy(keys + lo, tk + lo, (hi - lo) * sizeof *tk);
    }
  }
  free(ti);
  free(tk);
  return rc;
}

/* Sort a list in place with optional key function. */
static int list_sort(sh_obj *list, sh_obj *key, bool reverse) {
  int64_t n = SH_LIST_N(list);
  sh_obj **items = malloc((n + 1) * sizeof *items), **keys = malloc((n + 1) * sizeof *keys);
  if (n) memcpy(items, SH_LIST_ITEMS(list), n * sizeof *items);
  int rc = 0;
  int64_t nk = 0;
  for (; nk < n; nk++) {
    keys[nk] = key && key != SH_NONE ? sh_call(key, 1, &items[nk], NULL) : sh_incref(items[nk]);
    if (!keys[nk]) { rc = -1; break; }
  }
  if (rc == 0) rc = sort_items(items, keys, n, reverse);
  if (rc == 0 && n) memcpy(SH_LIST_ITEMS(list), items, n * sizeof *items);
  for (int64_t i = 0; i < nk; i++) sh_decref(keys[i]);
  free(items);
  free(keys);
  return rc;
}

static sh_obj *bi_sorted(ARGS) {
  sh_obj *seq, *key = NULL, *rev = NULL;
  if (sh_parse_args("sorted", argc, argv, kw, "iterable * key reverse", &seq, &key, &rev) < 0) return NULL;
  sh_obj *l = sh_sequence_to_list(seq);
  if (!l) return NULL;
  if (list_sort(l, key, rev && sh_truth(rev) > 0) < 0) { sh_decref(l); return NULL; }
  return l;
}

static sh_obj *minmax(const char *name, int op, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *key = NULL, *dflt = NULL;
  if (kw) { key = sh_dict_get_str(kw, "key"); dflt = sh_dict_get_str(kw, "default"); }
  if (key == SH_NONE) key = NULL;
  if (argc == 0) return sh_raise(sh_TypeError, "%s expected at least 1 argument, got 0", name);
  sh_obj *seq = argc == 1 ? sh_incref(argv[0]) : sh_tuple_new(argc);
  if (argc > 1) for (int i = 0; i < argc; i++) SH_TUPLE_ITEMS(seq)[i] = sh_incref(argv[i]);
  sh_obj *it = sh_iter(seq), *x, *best = NULL, *bestk = NULL;
  sh_decref(seq);
  if (!it) return NULL;
  while ((x = sh_next(it))) {
    sh_obj *k = key ? sh_call(key, 1, &x, NULL) : sh_incref(x);
    if (!k) { sh_decref(x); break; }
    int better = best ? sh_compare_bool(op, k, bestk) : 1;
    if (better < 0) { sh_decref(x); sh_decref(k); break; }
    if (better) { sh_decref(best); sh_decref(bestk); best = x; bestk = k; }
    else { sh_decref(x); sh_decref(k); }
  }
  sh_decref(it);
  sh_decref(bestk);
  if (sh_err_occurred()) { sh_decref(best); return NULL; }
  if (!best) {
    if (dflt) return sh_incref(dflt);
    return sh_raise(sh_ValueError, "%s() arg is an empty sequence", name);
  }
  return best;
}
static sh_obj *bi_min(ARGS) { return minmax("min", SH_LT, argc, argv, kw); }
static sh_obj *bi_max(ARGS) { return minmax("max", SH_GT, argc, argv, kw); }

static sh_obj *bi_sum(ARGS) {
  sh_obj *seq, *start = NULL;
  if (sh_parse_args("sum", argc, argv, kw, "iterable |start", &seq, &start) < 0) return NULL;
  if (start && sh_is_str(start)) return sh_raise(sh_TypeError, "sum() can't sum strings [use ''.join(seq) instead]");
  sh_obj *acc = start ? sh_incref(start) : sh_int(0);
  sh_obj *it = sh_iter(seq), *x;
  if (!it) { sh_decref(acc); return NULL; }
  while ((x = sh_next(it))) {
    sh_obj *r = sh_binop(SH_ADD, acc, x);
    sh_decref(x);
    sh_decref(acc);
    if (!(acc = r)) break;
  }
  sh_decref(it);
  if (sh_err_occurred()) { sh_decref(acc); return NULL; }
  return acc;
}

static sh_obj *anyall(int argc, sh_obj **argv, bool want) {
  if (argc != 1) return sh_raise(sh_TypeError, "expected 1 argument, got %d", argc);
  sh_obj *it = sh_iter(argv[0]), *x;
  if (!it) return NULL;
  bool found = false;
  while (!found && (x = sh_next(it))) {
    int t = sh_truth(x);
    sh_decref(x);
    if (t < 0) break;
    found = (t != 0) == want;
  }
  sh_decref(it);
  if (sh_err_occurred()) return NULL;
  return sh_bool(want ? found : !found);
}
static sh_obj *bi_any(ARGS) { return anyall(argc, argv, true); }
static sh_obj *bi_all(ARGS) { return anyall(argc, argv, false); }

/* ---- reflection ------------------------------------------------------------------------- */
static int class_match(sh_obj *o, sh_obj *cls, bool sub) {
  if (cls->type == &sh_tuple_type) {
    for (int64_t i = 0; i < SH_TUPLE_N(cls); i++) {
      int m = class_match(o, SH_TUPLE_ITEMS(cls)[i], sub);
      if (m) return m;
    }
    return 0;
  }
  if (!sh_isinstance(cls, &sh_type_type)) {
    sh_raise(sh_TypeError, "%s() arg 2 must be a type, a tuple of types, or a union", sub ? "issubclass" : "isinstance");
    return -1;
  }
  if (sub) return sh_is_subtype((sh_type *)o, (sh_type *)cls);
  return sh_isinstance(o, (sh_type *)cls);
}
static sh_obj *bi_isinstance(ARGS) {
  NARGS("isinstance", 2, 2);
  int m = class_match(argv[0], argv[1], false);
  return m < 0 ? NULL : sh_bool(m);
}
static sh_obj *bi_issubclass(ARGS) {
  NARGS("issubclass", 2, 2);
  if (!sh_isinstance(argv[0], &sh_type_type)) return sh_raise(sh_TypeError, "issubclass() arg 1 must be a class");
  int m = class_match(argv[0], argv[1], true);
  return m < 0 ? NULL : sh_bool(m);
}

static sh_obj *bi_getattr(ARGS) {
  NARGS("getattr", 2, 3);
  const char *name = sh_as_cstr(argv[1]);
  if (!name) return NULL;
  sh_obj *v = sh_getattr(argv[0], name);
  if (!v && argc == 3 && sh_err_matches(sh_AttributeError)) { sh_err_clear(); return sh_incref(argv[2]); }
  return v;
}
static sh_obj *bi_hasattr(ARGS) {
  NARGS("hasattr", 2, 2);
  const char *name = sh_as_cstr(argv[1]);
  if (!name) return NULL;
  sh_obj *v = sh_getattr(argv[0], name);
  if (!v) {
    if (!sh_err_matches(sh_AttributeError)) return NULL;
    sh_err_clear();
  }
  sh_decref(v);
  return sh_bool(v != NULL);
}
static sh_obj *bi_setattr(ARGS) {
  NARGS("setattr", 3, 3);
  const char *name = sh_as_cstr(argv[1]);
  if (!name || sh_setattr(argv[0], name, argv[2]) < 0) return NULL;
  return sh_none();
}
static sh_obj *bi_delattr(ARGS) {
  NARGS("delattr", 2, 2);
  const char *name = sh_as_cstr(argv[1]);
  if (!name || sh_delattr(argv[0], name) < 0) return NULL;
  return sh_none();
}

static sh_obj *bi_dir(ARGS) {
  NARGS("dir", 0, 1);
  if (argc == 0) {
    sh_frame *f = sh_current_frame();
    sh_obj *d = f ? f->globals : sh_main_globals(), *l = sh_list_new(0), *k;
    for (int64_t p = 0; sh_dict_next(d, &p, &k, NULL);) sh_list_append(l, k);
    list_sort(l, NULL, false);
    return l;
  }
  return sh_dir(argv[0]);
}

static sh_obj *bi_vars(ARGS) {
  NARGS("vars", 0, 1);
  if (argc == 0) { sh_frame *f = sh_current_frame(); return sh_incref(f ? f->globals : sh_main_globals()); }
  return sh_getattr(argv[0], "__dict__");
}
static sh_obj *bi_globals(ARGS) { sh_frame *f = sh_current_frame(); return sh_incref(f ? f->globals : sh_main_globals()); }

static sh_obj *bi_help(ARGS) {
  NARGS("help", 0, 1);
  if (!argc) {
    printf("Type name? (or help(name)) for the signature and help of an object; %%help lists the shell's magics.\n");
    return sh_none();
  }
  char *d = sh_describe(argv[0]);
  printf("%s\n", d);
  free(d);
  return sh_none();
}

static sh_obj *bi_exec(ARGS) {
  sh_obj *src, *g = NULL, *l = NULL;
  if (sh_parse_args("exec", argc, argv, kw, "source |globals locals", &src, &g, &l) < 0) return NULL;
  const char *s = sh_as_cstr(src);
  if (!s) return NULL;
  if (g == SH_NONE) g = NULL;
  if (g && !sh_isinstance(g, &sh_dict_type)) return sh_raise(sh_TypeError, "exec() globals must be a dict, not %s", sh_type_name(g));
  if (!g) { sh_frame *f = sh_current_frame(); g = f ? f->globals : sh_main_globals(); }
  if (sh_exec_string(s, "<string>", g) < 0) return NULL;
  return sh_none();
}
static sh_obj *bi_eval(ARGS) {
  sh_obj *src, *g = NULL, *l = NULL;
  if (sh_parse_args("eval", argc, argv, kw, "source |globals locals", &src, &g, &l) < 0) return NULL;
  const char *s = sh_as_cstr(src);
  if (!s) return NULL;
  if (g == SH_NONE) g = NULL;
  return sh_eval_string(s, "<string>", g);
}

/* ---- constructors of built-in types ------------------------------------------------------- */
static sh_obj *parse_int_str(const char *s, int base, sh_obj *orig) {
  const char *p = s;
  while (isspace((unsigned char)*p)) p++;
  bool neg = false;
  if (*p == '+' || *p == '-') neg = *p++ == '-';
  if ((base == 16 || base == 0) && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) { p += 2; base = 16; }
  else if ((base == 8 || base == 0) && p[0] == '0' && (p[1] == 'o' || p[1] == 'O')) { p += 2; base = 8; }
  else if ((base == 2 || base == 0) && p[0] == '0' && (p[1] == 'b' || p[1] == 'B')) { p += 2; base = 2; }
  if (base == 0) base = 10;
  uint64_t v = 0;
  int nd = 0;
  bool overflow = false;
  for (; *p; p++) {
    if (*p == '_' && nd) continue;
    int d = isdigit((unsigned char)*p) ? *p - '0' : isalpha((unsigned char)*p) ? tolower(*p) - 'a' + 10 : 99;
    if (d >= base) break;
    if (v > (UINT64_MAX - d) / base) overflow = true;
    v = v * base + d;
    nd++;
  }
  while (isspace((unsigned char)*p)) p++;
  if (*p || nd == 0) {
    sh_obj *r = sh_repr(orig);
    sh_raise(sh_ValueError, "invalid literal for int() with base %d: %s", base, r ? sh_str_cstr(r) : "?");
    sh_decref(r);
    return NULL;
  }
  if (overflow || v > (uint64_t)INT64_MAX + neg)
    return sh_raise(sh_OverflowError, "int too large (tfsh ints are 64-bit)");
  return sh_int(neg ? (int64_t)(0 - v) : (int64_t)v);
}

static sh_obj *int_new(ARGS) {
  sh_obj *x = NULL, *base = NULL;
  if (sh_parse_args("int", argc, argv, kw, "|x base", &x, &base) < 0) return NULL;
  if (!x) return sh_int(0);
  if (base) {
    int64_t b;
    if (sh_as_int(base, &b) < 0) return NULL;
    if (!sh_is_str(x)) return sh_raise(sh_TypeError, "int() can't convert non-string with explicit base");
    return parse_int_str(sh_str_cstr(x), (int)b, x);
  }
  if (sh_is_int(x)) return sh_int(sh_int_value(x));
  if (sh_is_float(x)) {
    double d = sh_float_value(x);
    if (isnan(d)) return sh_raise(sh_ValueError, "cannot convert float NaN to integer");
    if (isinf(d)) return sh_raise(sh_OverflowError, "cannot convert float infinity to integer");
    if (fabs(d) >= 9.223372036854775807e18) return sh_raise(sh_OverflowError, "int too large (tfsh ints are 64-bit)");
    return sh_int((int64_t)d);
  }
  if (sh_is_str(x)) return parse_int_str(sh_str_cstr(x), 10, x);
  sh_obj *f = sh_getattr_opt(x, "__int__");
  if (f) { sh_obj *r = sh_call(f, 0, NULL, NULL); sh_decref(f); return r; }
  sh_err_clear();
  return sh_raise(sh_TypeError, "int() argument must be a string, a bytes-like object or a real number, not '%s'", sh_type_name(x));
}

static sh_obj *float_new(ARGS) {
  NOKW("float");
  NARGS("float", 0, 1);
  if (!argc) return sh_float(0.0);
  sh_obj *x = argv[0];
  if (sh_is_float(x)) return sh_incref(x);
  if (sh_is_int(x)) return sh_float((double)sh_int_value(x));
  if (sh_is_str(x)) {
    const char *s = sh_str_cstr(x);
    char buf[128];
    size_t k = 0;
    for (const char *p = s; *p && k < sizeof buf - 1; p++) if (*p != '_') buf[k++] = *p;
    buf[k] = 0;
    char *end;
    const char *start = buf;
    while (isspace((unsigned char)*start)) start++;
    errno = 0;
    double d = strtod(start, &end);
    while (isspace((unsigned char)*end)) end++;
    if (end == start || *end) {
      sh_obj *r = sh_repr(x);
      sh_raise(sh_ValueError, "could not convert string to float: %s", sh_str_cstr(r));
      sh_decref(r);
      return NULL;
    }
    return sh_float(d);
  }
  sh_obj *f = sh_getattr_opt(x, "__float__");
  if (f) { sh_obj *r = sh_call(f, 0, NULL, NULL); sh_decref(f); return r; }
  sh_err_clear();
  return sh_raise(sh_TypeError, "float() argument must be a string or a real number, not '%s'", sh_type_name(x));
}

static sh_obj *str_new(ARGS) {
  sh_obj *x = NULL, *enc = NULL, *err = NULL;
  if (sh_parse_args("str", argc, argv, kw, "|object encoding errors", &x, &enc, &err) < 0) return NULL;
  return x ? sh_to_str(x) : sh_str("");
}
static sh_obj *bool_new(ARGS) {
  NARGS("bool", 0, 1);
  if (!argc) return sh_bool(false);
  int t = sh_truth(argv[0]);
  return t < 0 ? NULL : sh_bool(t);
}
static sh_obj *list_new(ARGS) {
  NOKW("list");
  NARGS("list", 0, 1);
  return argc ? sh_sequence_to_list(argv[0]) : sh_list_new(0);
}
static sh_obj *tuple_new(ARGS) {
  NOKW("tuple");
  NARGS("tuple", 0, 1);
  return argc ? sh_sequence_to_tuple(argv[0]) : sh_tuple_new(0);
}
static int dict_update(sh_obj *d, int argc, sh_obj **argv, sh_obj *kw) {
  if (argc > 1) { sh_raise(sh_TypeError, "update expected at most 1 argument, got %d", argc); return -1; }
  if (argc == 1) {
    sh_obj *src = argv[0], *k, *v;
    if (sh_isinstance(src, &sh_dict_type)) {
      for (int64_t p = 0; sh_dict_next(src, &p, &k, &v);) if (sh_dict_set(d, k, v) < 0) return -1;
    } else {
      sh_obj *it = sh_iter(src), *x;
      if (!it) return -1;
      int64_t i = 0;
      while ((x = sh_next(it))) {
        sh_obj *pair = sh_sequence_to_tuple(x);
        sh_decref(x);
        if (!pair || SH_TUPLE_N(pair) != 2) {
          if (pair) sh_raise(sh_ValueError, "dictionary update sequence element #%lld has length %lld; 2 is required",
                             (long long)i, (long long)SH_TUPLE_N(pair));
          sh_decref(pair);
          sh_decref(it);
          return -1;
        }
        sh_dict_set(d, SH_TUPLE_ITEMS(pair)[0], SH_TUPLE_ITEMS(pair)[1]);
        sh_decref(pair);
        i++;
      }
      sh_decref(it);
      if (sh_err_occurred()) return -1;
    }
  }
  if (kw) {
    sh_obj *k, *v;
    for (int64_t p = 0; sh_dict_next(kw, &p, &k, &v);) sh_dict_set(d, k, v);
  }
  return 0;
}
static sh_obj *dict_new(ARGS) {
  sh_obj *d = sh_dict_new();
  if (dict_update(d, argc, argv, kw) < 0) { sh_decref(d); return NULL; }
  return d;
}
static sh_obj *set_new(ARGS) {
  NOKW("set");
  NARGS("set", 0, 1);
  sh_obj *s = sh_set_new();
  if (!argc) return s;
  sh_obj *it = sh_iter(argv[0]), *x;
  if (!it) { sh_decref(s); return NULL; }
  while ((x = sh_next(it))) { int r = sh_set_add(s, x); sh_decref(x); if (r < 0) break; }
  sh_decref(it);
  if (sh_err_occurred()) { sh_decref(s); return NULL; }
  return s;
}
static sh_obj *range_new(ARGS) {
  NOKW("range");
  NARGS("range", 1, 3);
  int64_t v[3] = {0, 0, 1};
  for (int i = 0; i < argc; i++) if (sh_as_int(argv[i], &v[i]) < 0) return NULL;
  sh_range_obj *r = sh_new(&sh_range_type);
  if (argc == 1) { r->start = 0; r->stop = v[0]; r->step = 1; }
  else { r->start = v[0]; r->stop = v[1]; r->step = argc == 3 ? v[2] : 1; }
  if (r->step == 0) { sh_decref(&r->head); return sh_raise(sh_ValueError, "range() arg 3 must not be zero"); }
  return &r->head;
}
static sh_obj *type_new(ARGS) {
  NARGS("type", 1, 3);
  if (argc == 1) return SH_INCREF(argv[0]->type);
  if (argc != 3) return sh_raise(sh_TypeError, "type() takes 1 or 3 arguments");
  const char *name = sh_as_cstr(argv[0]);
  if (!name) return NULL;
  sh_type *base = SH_TUPLE_N(argv[1]) ? (sh_type *)SH_TUPLE_ITEMS(argv[1])[0] : &sh_object_type;
  sh_obj *ns = sh_dict_new();
  dict_update(ns, 1, &argv[2], NULL);
  sh_type *t = sh_heap_type_new(name, base, ns);
  sh_decref(ns);
  return (sh_obj *)t;
}
static sh_obj *slice_new(ARGS) {
  NARGS("slice", 1, 3);
  if (argc == 1) return sh_slice_new(NULL, argv[0], NULL);
  return sh_slice_new(argv[0], argv[1], argc == 3 ? argv[2] : NULL);
}

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
static sh_obj *str_encode(ARGS) { return sh_incref(self); }
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
    char *field = strndup(start, s - start);
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

/* ---- list methods ----------------------------------------------------------------------- */
static sh_obj *list_append(ARGS) { NARGS("append", 1, 1); sh_list_append(self, argv[0]); return sh_none(); }
static sh_obj *list_extend(ARGS) {
  NARGS("extend", 1, 1);
  sh_obj *l = sh_sequence_to_list(argv[0]);
  if (!l) return NULL;
  for (int64_t i = 0; i < SH_LIST_N(l); i++) sh_list_append(self, SH_LIST_ITEMS(l)[i]);
  sh_decref(l);
  return sh_none();
}
static sh_obj *list_insert(ARGS) {
  NARGS("insert", 2, 2);
  int64_t i, n = SH_LIST_N(self);
  if (sh_as_int(argv[0], &i) < 0) return NULL;
  if (i < 0) i += n;
  if (i < 0) i = 0;
  if (i > n) i = n;
  sh_list_insert(self, i, argv[1]);
  return sh_none();
}
static sh_obj *list_pop(ARGS) {
  NARGS("pop", 0, 1);
  int64_t n = SH_LIST_N(self), i = n - 1;
  if (argc && sh_as_int(argv[0], &i) < 0) return NULL;
  if (n == 0) return sh_raise(sh_IndexError, "pop from empty list");
  if (i < 0) i += n;
  if (i < 0 || i >= n) return sh_raise(sh_IndexError, "pop index out of range");
  sh_obj *v = SH_LIST_ITEMS(self)[i];
  memmove(SH_LIST_ITEMS(self) + i, SH_LIST_ITEMS(self) + i + 1, (n - i - 1) * sizeof(sh_obj *));
  SH_LIST_N(self)--;
  return v;
}
static int64_t list_find(sh_obj *self, sh_obj *x) {
  for (int64_t i = 0; i < SH_LIST_N(self); i++) {
    int e = sh_eq(SH_LIST_ITEMS(self)[i], x);
    if (e < 0) return -2;
    if (e) return i;
  }
  return -1;
}
static sh_obj *list_remove(ARGS) {
  NARGS("remove", 1, 1);
  int64_t i = list_find(self, argv[0]);
  if (i == -2) return NULL;
  if (i < 0) return sh_raise(sh_ValueError, "list.remove(x): x not in list");
  sh_obj *v = list_pop(self, 1, (sh_obj *[]){sh_int(i)}, NULL);
  sh_decref(v);
  return sh_none();
}
static sh_obj *seq_index(ARGS) {
  NARGS("index", 1, 3);
  sh_obj **items;
  int64_t n;
  if (self->type == &sh_tuple_type) { items = SH_TUPLE_ITEMS(self); n = SH_TUPLE_N(self); }
  else { items = SH_LIST_ITEMS(self); n = SH_LIST_N(self); }
  for (int64_t i = 0; i < n; i++) {
    int e = sh_eq(items[i], argv[0]);
    if (e < 0) return NULL;
    if (e) return sh_int(i);
  }
  if (self->type == &sh_tuple_type) return sh_raise(sh_ValueError, "tuple.index(x): x not in tuple");
  sh_obj *r = sh_repr(argv[0]);
  sh_raise(sh_ValueError, "%s is not in list", r ? sh_str_cstr(r) : "?");
  sh_decref(r);
  return NULL;
}
static sh_obj *seq_count(ARGS) {
  NARGS("count", 1, 1);
  sh_obj **items;
  int64_t n, c = 0;
  if (self->type == &sh_tuple_type) { items = SH_TUPLE_ITEMS(self); n = SH_TUPLE_N(self); }
  else { items = SH_LIST_ITEMS(self); n = SH_LIST_N(self); }
  for (int64_t i = 0; i < n; i++) {
    int e = sh_eq(items[i], argv[0]);
    if (e < 0) return NULL;
    c += e;
  }
  return sh_int(c);
}
static sh_obj *list_sort_m(ARGS) {
  sh_obj *key = NULL, *rev = NULL;
  if (sh_parse_args("sort", argc, argv, kw, "* key reverse", &key, &rev) < 0) return NULL;
  if (list_sort(self, key, rev && sh_truth(rev) > 0) < 0) return NULL;
  return sh_none();
}
static sh_obj *list_reverse(ARGS) {
  int64_t n = SH_LIST_N(self);
  sh_obj **it = SH_LIST_ITEMS(self);
  for (int64_t i = 0; i < n / 2; i++) { sh_obj *t = it[i]; it[i] = it[n - 1 - i]; it[n - 1 - i] = t; }
  return sh_none();
}
static sh_obj *list_copy(ARGS) { return sh_sequence_to_list(self); }
static sh_obj *list_clear(ARGS) {
  sh_obj *s = sh_slice_new(NULL, NULL, NULL);
  int r = sh_setitem(self, s, NULL);
  sh_decref(s);
  return r < 0 ? NULL : sh_none();
}
const sh_method sh_list_methods[] = {
  {"append", list_append, "append(x)", "Add x at the end."},
  {"extend", list_extend, "extend(iterable)", "Add every item of iterable."},
  {"insert", list_insert, "insert(i, x)", "Insert x before index i."},
  {"pop", list_pop, "pop(i=-1)", "Remove and return item i (default last)."},
  {"remove", list_remove, "remove(x)", "Remove the first item equal to x."},
  {"index", seq_index, "index(x)", "Index of the first item equal to x."},
  {"count", seq_count, "count(x)", "Number of items equal to x."},
  {"sort", list_sort_m, "sort(*, key=None, reverse=False)", "Sort in place (stable)."},
  {"reverse", list_reverse, "reverse()", "Reverse in place."},
  {"copy", list_copy, "copy()", "A shallow copy."},
  {"clear", list_clear, "clear()", "Remove every item."},
  {NULL}};
const sh_method sh_tuple_methods[] = {
  {"index", seq_index, "index(x)", "Index of the first item equal to x."},
  {"count", seq_count, "count(x)", "Number of items equal to x."},
  {NULL}};

/* ---- dict methods ----------------------------------------------------------------------- */
static sh_obj *dict_keys(ARGS) { return sh_dictview_new(self, 0); }
static sh_obj *dict_values(ARGS) { return sh_dictview_new(self, 1); }
static sh_obj *dict_items(ARGS) { return sh_dictview_new(self, 2); }
static sh_obj *dict_get(ARGS) {
  NARGS("get", 1, 2);
  sh_obj *v = sh_dict_get(self, argv[0]);
  if (!v && sh_err_occurred()) return NULL;
  return sh_incref(v ? v : argc > 1 ? argv[1] : SH_NONE);
}
static sh_obj *key_error(sh_obj *k) {
  sh_obj *exc = sh_call((sh_obj *)sh_KeyError, 1, &k, NULL);
  sh_raise_obj(exc);
  sh_decref(exc);
  return NULL;
}
static sh_obj *dict_pop(ARGS) {
  NARGS("pop", 1, 2);
  sh_obj *v = sh_dict_get(self, argv[0]);
  if (!v) {
    if (sh_err_occurred()) return NULL;
    if (argc > 1) return sh_incref(argv[1]);
    return key_error(argv[0]);
  }
  sh_incref(v);
  sh_dict_del(self, argv[0]);
  return v;
}
static sh_obj *dict_popitem(ARGS) {
  sh_obj *k = NULL, *v = NULL, *kk, *vv;
  for (int64_t p = 0; sh_dict_next(self, &p, &kk, &vv);) { k = kk; v = vv; }
  if (!k) return sh_raise(sh_KeyError, "popitem(): dictionary is empty");
  sh_obj *r = sh_tuple_of(2, sh_incref(k), sh_incref(v));
  sh_dict_del(self, k);
  return r;
}
static sh_obj *dict_setdefault(ARGS) {
  NARGS("setdefault", 1, 2);
  sh_obj *v = sh_dict_get(self, argv[0]);
  if (v) return sh_incref(v);
  if (sh_err_occurred()) return NULL;
  sh_obj *d = argc > 1 ? argv[1] : SH_NONE;
  if (sh_dict_set(self, argv[0], d) < 0) return NULL;
  return sh_incref(d);
}
static sh_obj *dict_update_m(ARGS) { return dict_update(self, argc, argv, kw) < 0 ? NULL : sh_none(); }
static sh_obj *dict_copy(ARGS) {
  sh_obj *d = sh_new(self->type == &sh_set_type ? &sh_set_type : &sh_dict_type), *k, *v;
  for (int64_t p = 0; sh_dict_next(self, &p, &k, &v);) sh_dict_set(d, k, v);
  return d;
}
static sh_obj *dict_clear_m(ARGS) { sh_dict_clear(self); return sh_none(); }
const sh_method sh_dict_methods[] = {
  {"keys", dict_keys, "keys()", "A view of the keys."},
  {"values", dict_values, "values()", "A view of the values."},
  {"items", dict_items, "items()", "A view of (key, value) pairs."},
  {"get", dict_get, "get(key, default=None)", "The value for key, or default."},
  {"pop", dict_pop, "pop(key[, default])", "Remove key and return its value."},
  {"popitem", dict_popitem, "popitem()", "Remove and return the last (key, value)."},
  {"setdefault", dict_setdefault, "setdefault(key, default=None)", "Get key, inserting default when absent."},
  {"update", dict_update_m, "update([other], **kwargs)", "Add the pairs of other and kwargs."},
  {"copy", dict_copy, "copy()", "A shallow copy."},
  {"clear", dict_clear_m, "clear()", "Remove every item."},
  {NULL}};

/* ---- set methods ------------------------------------------------------------------------ */
static sh_obj *set_add_m(ARGS) { NARGS("add", 1, 1); return sh_set_add(self, argv[0]) < 0 ? NULL : sh_none(); }
static sh_obj *set_remove(ARGS) {
  NARGS("remove", 1, 1);
  int r = sh_dict_del(self, argv[0]);
  if (r < 0) return NULL;
  if (r == 0) return key_error(argv[0]);
  return sh_none();
}
static sh_obj *set_discard(ARGS) { NARGS("discard", 1, 1); return sh_dict_del(self, argv[0]) < 0 ? NULL : sh_none(); }
static sh_obj *set_pop(ARGS) {
  sh_obj *k, *v;
  int64_t p = 0;
  if (!sh_dict_next(self, &p, &k, &v)) return sh_raise(sh_KeyError, "pop from an empty set");
  sh_incref(k);
  sh_dict_del(self, k);
  return k;
}
static sh_obj *set_update(ARGS) {
  for (int i = 0; i < argc; i++) {
    sh_obj *it = sh_iter(argv[i]), *x;
    if (!it) return NULL;
    while ((x = sh_next(it))) { sh_set_add(self, x); sh_decref(x); }
    sh_decref(it);
    if (sh_err_occurred()) return NULL;
  }
  return sh_none();
}
static sh_obj *set_op(sh_obj *self, int argc, sh_obj **argv, int op) {
  sh_obj *acc = dict_copy(self, 0, NULL, NULL);
  for (int i = 0; i < argc; i++) {
    sh_obj *other = set_new(NULL, 1, &argv[i], NULL);
    if (!other) { sh_decref(acc); return NULL; }
    sh_obj *r = sh_binop(op, acc, other);
    sh_decref(other);
    sh_decref(acc);
    if (!(acc = r)) return NULL;
  }
  return acc;
}
static sh_obj *set_union(ARGS) { return set_op(self, argc, argv, SH_BITOR); }
static sh_obj *set_intersection(ARGS) { return set_op(self, argc, argv, SH_BITAND); }
static sh_obj *set_difference(ARGS) { return set_op(self, argc, argv, SH_SUB); }
static sh_obj *set_symdiff(ARGS) { return set_op(self, argc, argv, SH_BITXOR); }
static sh_obj *set_cmp(sh_obj *self, sh_obj *arg, int op) {
  sh_obj *other = set_new(NULL, 1, &arg, NULL);
  if (!other) return NULL;
  sh_obj *r = sh_compare(op, self, other);
  sh_decref(other);
  return r;
}
static sh_obj *set_issubset(ARGS) { NARGS("issubset", 1, 1); return set_cmp(self, argv[0], SH_LE); }
static sh_obj *set_issuperset(ARGS) { NARGS("issuperset", 1, 1); return set_cmp(self, argv[0], SH_GE); }
static sh_obj *set_isdisjoint(ARGS) {
  NARGS("isdisjoint", 1, 1);
  sh_obj *r = set_op(self, 1, argv, SH_BITAND);
  if (!r) return NULL;
  bool d = sh_dict_len(r) == 0;
  sh_decref(r);
  return sh_bool(d);
}
const sh_method sh_set_methods[] = {
  {"add", set_add_m, "add(x)", "Add x."},
  {"remove", set_remove, "remove(x)", "Remove x; KeyError if absent."},
  {"discard", set_discard, "discard(x)", "Remove x if present."},
  {"pop", set_pop, "pop()", "Remove and return an item."},
  {"update", set_update, "update(*iterables)", "Add the items of each iterable."},
  {"union", set_union, "union(*iterables)", "A new set with the items of all."},
  {"intersection", set_intersection, "intersection(*iterables)", "Items common to all."},
  {"difference", set_difference, "difference(*iterables)", "Items not in the others."},
  {"symmetric_difference", set_symdiff, "symmetric_difference(other)", "Items in exactly one."},
  {"issubset", set_issubset, "issubset(other)", "Every item is in other."},
  {"issuperset", set_issuperset, "issuperset(other)", "Every item of other is here."},
  {"isdisjoint", set_isdisjoint, "isdisjoint(other)", "No item in common."},
  {"copy", dict_copy, "copy()", "A shallow copy."},
  {"clear", dict_clear_m, "clear()", "Remove every item."},
  {NULL}};

/* ---- exceptions ------------------------------------------------------------------------- */
static sh_obj *exc_init(ARGS) {
  if (!self || !(self->type->flags & SH_TF_INSTANCE)) return sh_none();
  sh_inst *e = (sh_inst *)self;
  sh_obj *t = sh_tuple_new(argc);
  for (int i = 0; i < argc; i++) SH_TUPLE_ITEMS(t)[i] = sh_incref(argv[i]);
  sh_decref(e->args);
  e->args = t;
  return sh_none();
}
static sh_obj *exc_with_traceback(ARGS) { return sh_incref(self); }

/* ---- describe / dir --------------------------------------------------------------------- */
sh_obj *sh_dir(sh_obj *o) {
  sh_obj *seen = sh_set_new(), *k;
  if (o->type == &sh_module_type) {
    for (int64_t p = 0; sh_dict_next(((sh_module_obj *)o)->dict, &p, &k, NULL);) sh_set_add(seen, k);
  } else {
    if ((o->type->flags & SH_TF_INSTANCE) && ((sh_inst *)o)->dict)
      for (int64_t p = 0; sh_dict_next(((sh_inst *)o)->dict, &p, &k, NULL);) sh_set_add(seen, k);
    sh_type *t = o->type == &sh_type_type ? (sh_type *)o : o->type;
    for (sh_type *a = t; a; a = a->base)
      for (const char *const *n = a->attr_names; n && *n; n++) {
        sh_obj *s = sh_str(*n);
        sh_set_add(seen, s);
        sh_decref(s);
      }
    for (; t; t = t->base) {
      sh_obj *n = sh_intern("__init__");
      sh_decref(sh_incref(sh_class_lookup(t, n)));   /* makes sure the dict is filled */
      sh_decref(n);
      if (t->dict) for (int64_t p = 0; sh_dict_next(t->dict, &p, &k, NULL);) sh_set_add(seen, k);
    }
  }
  sh_obj *l = sh_sequence_to_list(seen);
  sh_decref(seen);
  if (l) list_sort(l, NULL, false);
  return l;
}

char *sh_describe(sh_obj *o) {
  char *out = NULL;
  int rc = 0;
  if (o->type == &sh_builtin_type) {
    sh_builtin_obj *b = (sh_builtin_obj *)o;
    rc = asprintf(&out, "%s\n    %s", b->sig ? b->sig : b->name, b->help ? b->help : "");
  } else if (o->type == &sh_func_type) {
    char *sig = sh_func_signature(o);
    sh_func *f = (sh_func *)o;
    rc = asprintf(&out, "%s\n    %s", sig, f->code->doc ? sh_str_cstr(f->code->doc) : "(no docstring)");
    free(sig);
  } else if (o->type == &sh_method_type) {
    return sh_describe(((sh_method_obj *)o)->func);
  } else if (sh_isinstance(o, &sh_type_type)) {
    sh_type *t = (sh_type *)o;
    sh_obj *doc = t->dict ? sh_dict_get_str(t->dict, "__doc__") : NULL;
    rc = asprintf(&out, "class %s\n    %s", t->name, t->help ? t->help : doc && sh_is_str(doc) ? sh_str_cstr(doc) : "");
  } else if (o->type == &sh_module_type) {
    sh_obj *doc = sh_dict_get_str(((sh_module_obj *)o)->dict, "__doc__");
    rc = asprintf(&out, "module %s\n    %s", sh_str_cstr(((sh_module_obj *)o)->name),
                  doc && sh_is_str(doc) ? sh_str_cstr(doc) : "");
  } else {
    sh_obj *r = sh_repr(o);
    sh_err_clear();
    rc = asprintf(&out, "%s object: %s\n    %s", sh_type_name(o), r ? sh_str_cstr(r) : "?",
                  o->type->help ? o->type->help : "");
    sh_decref(r);
  }
  if (rc < 0) return strdup("?");
  return out;
}

/* ---- the table -------------------------------------------------------------------------- */
static const sh_method builtin_funcs[] = {
  {"print", bi_print, "print(*values, sep=' ', end='\\n', file=sys.stdout, flush=False)", "Print values to a stream (stdout by default)."},
  {"input", bi_input, "input(prompt='')", "Read a line from stdin."},
  {"len", bi_len, "len(obj)", "Number of items of a container."},
  {"repr", bi_repr, "repr(obj)", "The canonical string of obj."},
  {"id", bi_id, "id(obj)", "The identity of obj."},
  {"hash", bi_hash, "hash(obj)", "The hash of obj."},
  {"callable", bi_callable, "callable(obj)", "Whether obj can be called."},
  {"abs", bi_abs, "abs(x)", "Absolute value."},
  {"round", bi_round, "round(number, ndigits=None)", "Round half to even (like Python)."},
  {"divmod", bi_divmod, "divmod(a, b)", "(a // b, a % b)."},
  {"pow", bi_pow, "pow(base, exp, mod=None)", "base ** exp (% mod)."},
  {"chr", bi_chr, "chr(i)", "The character with code point i."},
  {"ord", bi_ord, "ord(c)", "The code point of one character."},
  {"hex", bi_hex, "hex(n)", "Hexadecimal string of an int."},
  {"oct", bi_oct, "oct(n)", "Octal string of an int."},
  {"bin", bi_bin, "bin(n)", "Binary string of an int."},
  {"format", bi_format, "format(value, spec='')", "Format value by a format spec."},
  {"enumerate", bi_enumerate, "enumerate(iterable, start=0)", "Pairs (index, item)."},
  {"zip", bi_zip, "zip(*iterables)", "Tuples of items taken in parallel."},
  {"map", bi_map, "map(func, *iterables)", "func applied to each item."},
  {"filter", bi_filter, "filter(func, iterable)", "The items for which func is true."},
  {"iter", bi_iter, "iter(obj)", "An iterator over obj."},
  {"next", bi_next, "next(iterator[, default])", "The next item of an iterator."},
  {"reversed", bi_reversed, "reversed(seq)", "An iterator in reverse order."},
  {"sorted", bi_sorted, "sorted(iterable, *, key=None, reverse=False)", "A new sorted list (stable)."},
  {"min", bi_min, "min(iterable, *, key=None, default=...) / min(a, b, ...)", "The smallest item."},
  {"max", bi_max, "max(iterable, *, key=None, default=...) / max(a, b, ...)", "The largest item."},
  {"sum", bi_sum, "sum(iterable, start=0)", "The sum of the items."},
  {"any", bi_any, "any(iterable)", "Whether any item is true."},
  {"all", bi_all, "all(iterable)", "Whether every item is true."},
  {"isinstance", bi_isinstance, "isinstance(obj, class_or_tuple)", "Whether obj is an instance of the class(es)."},
  {"issubclass", bi_issubclass, "issubclass(cls, class_or_tuple)", "Whether cls derives from the class(es)."},
  {"getattr", bi_getattr, "getattr(obj, name[, default])", "Attribute name of obj."},
  {"hasattr", bi_hasattr, "hasattr(obj, name)", "Whether obj has attribute name."},
  {"setattr", bi_setattr, "setattr(obj, name, value)", "Set attribute name of obj."},
  {"delattr", bi_delattr, "delattr(obj, name)", "Delete attribute name of obj."},
  {"dir", bi_dir, "dir([obj])", "Sorted names of obj's attributes (or of the globals)."},
  {"vars", bi_vars, "vars([obj])", "obj.__dict__ (or the globals)."},
  {"globals", bi_globals, "globals()", "The module's global names."},
  {"locals", bi_globals, "locals()", "The module's global names (tfsh: no function locals)."},
  {"open", bi_open, "open(file, mode='r', encoding=None)", "Open a text file."},
  {"help", bi_help, "help(obj)", "Print the signature and help of obj."},
  {"exec", bi_exec, "exec(source, globals=None)", "Run statements."},
  {"eval", bi_eval, "eval(source, globals=None)", "Evaluate an expression."},
  {NULL}};

void sh_builtins_init(sh_obj *b) {
  for (const sh_method *m = builtin_funcs; m->name; m++) {
    sh_obj *f = sh_builtin_new(m->name, m->fn, NULL, m->sig, m->help);
    sh_dict_set_str(b, m->name, f);
    sh_decref(f);
  }
  static const struct { sh_type *t; sh_cfunc ctor; } ctors[] = {
    {&sh_int_type, int_new}, {&sh_float_type, float_new}, {&sh_str_type, str_new},
    {&sh_bool_type, bool_new}, {&sh_list_type, list_new}, {&sh_tuple_type, tuple_new},
    {&sh_dict_type, dict_new}, {&sh_set_type, set_new}, {&sh_range_type, range_new},
    {&sh_type_type, type_new}, {&sh_slice_type, slice_new}};
  for (size_t i = 0; i < sizeof ctors / sizeof *ctors; i++) {
    ctors[i].t->construct = ctors[i].ctor;
    sh_dict_set_str(b, ctors[i].t->name, (sh_obj *)ctors[i].t);
  }
  sh_dict_set_str(b, "frozenset", (sh_obj *)&sh_set_type);
  sh_dict_set_str(b, "object", (sh_obj *)&sh_object_type);
  sh_dict_set_str(b, "None", SH_NONE);
  sh_dict_set_str(b, "Ellipsis", SH_ELLIPSIS);
  sh_dict_set_str(b, "NotImplemented", SH_NOTIMPL);
  sh_type *excs[] = {sh_BaseException, sh_Exception, sh_SystemExit, sh_KeyboardInterrupt,
    sh_StopIteration, sh_ArithmeticError, sh_ZeroDivisionError, sh_OverflowError,
    sh_AssertionError, sh_AttributeError, sh_ImportError, sh_ModuleNotFoundError,
    sh_LookupError, sh_IndexError, sh_KeyError, sh_NameError, sh_UnboundLocalError,
    sh_OSError, sh_FileNotFoundError, sh_RuntimeError, sh_NotImplementedError,
    sh_RecursionError, sh_SyntaxError, sh_TypeError, sh_ValueError, sh_EOFError,
    sh_UnicodeError};
  for (size_t i = 0; i < sizeof excs / sizeof *excs; i++)
    sh_dict_set_str(b, excs[i]->name, (sh_obj *)excs[i]);
  sh_dict_set_str(b, "IOError", (sh_obj *)sh_OSError);
  sh_dict_set_str(b, "EnvironmentError", (sh_obj *)sh_OSError);
  sh_obj *f = sh_builtin_new("__init__", exc_init, NULL, "__init__(*args)", "Store args.");
  ((sh_builtin_obj *)f)->unbound = true;
  sh_dict_set_str(sh_BaseException->dict, "__init__", f);
  sh_decref(f);
  f = sh_builtin_new("with_traceback", exc_with_traceback, NULL, "with_traceback(tb)", "Returns self.");
  ((sh_builtin_obj *)f)->unbound = true;
  sh_dict_set_str(sh_BaseException->dict, "with_traceback", f);
  sh_decref(f);
}
