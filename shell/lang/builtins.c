/* Built-in functions (print, len, sorted, isinstance, ...) and the constructors of the
 * built-in types. The methods of each type live with its core (str.c, list.c, dict.c,
 * class.c, file.c). */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "shell/lang/eval.h"
#include "shell/lang/interp.h"

__attribute__((weak)) void sh_modules_init_extra(void) {}

/* ---- print and friends ------------------------------------------------------------------ */
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
  int rc = sh_file_write(file, b.data, b.len);
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
  sh_gil_release();   /* input(): other threads run meanwhile */
  ssize_t n = getline(&line, &cap, stdin);
  sh_gil_acquire();
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
  return sh_strn(s, c == 0 ? 1 : strlen(s));   /* chr(0) is one NUL, not '' */
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
  .destroy = genit_destroy, .iter = sh_self_iter, .next = genit_next};

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

/* Sort a list in place with optional key function. */

static sh_obj *bi_sorted(ARGS) {
  sh_obj *seq, *key = NULL, *rev = NULL;
  if (sh_parse_args("sorted", argc, argv, kw, "iterable * key reverse", &seq, &key, &rev) < 0) return NULL;
  sh_obj *l = sh_sequence_to_list(seq);
  if (!l) return NULL;
  if (sh_list_sort(l, key, rev && sh_truth(rev) > 0) < 0) { sh_decref(l); return NULL; }
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
  sh_obj *check = sh_isinstance(cls, &sh_type_type) ? NULL : sh_getattr_opt(cls, sub ? "__subclasscheck__" : "__instancecheck__");
  if (check) {   /* a class-like object (np.float32, a dtype that stands for numpy's scalar type) */
    sh_obj *r = sh_call(check, 1, &o, NULL);
    sh_decref(check);
    int t = r ? sh_truth(r) : -1;
    sh_decref(r);
    return t;
  }
  if (!sh_isinstance(cls, &sh_type_type)) {
    sh_err_clear();
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
    sh_list_sort(l, NULL, false);
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
  sh_dict_update(ns, 1, &argv[2], NULL);
  sh_type *t = sh_heap_type_new(name, base, ns);
  sh_decref(ns);
  return (sh_obj *)t;
}
static sh_obj *slice_new(ARGS) {
  NARGS("slice", 1, 3);
  if (argc == 1) return sh_slice_new(NULL, argv[0], NULL);
  return sh_slice_new(argv[0], argv[1], argc == 3 ? argv[2] : NULL);
}

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
  if (l) sh_list_sort(l, NULL, false);
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
  if (rc < 0) return xstrdup("?");
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
  {"open", sh_builtin_open, "open(file, mode='r', encoding=None)", "Open a text file."},
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
    {&sh_dict_type, sh_dict_construct}, {&sh_set_type, sh_set_construct}, {&sh_range_type, range_new},
    {&sh_type_type, type_new}, {&sh_slice_type, slice_new}};
  for (size_t i = 0; i < sizeof ctors / sizeof *ctors; i++) {
    ctors[i].t->construct = ctors[i].ctor;
    sh_dict_set_str(b, ctors[i].t->name, (sh_obj *)ctors[i].t);
  }
  sh_dict_set_str(b, "bytes", (sh_obj *)&sh_bytes_type);
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
  sh_exc_add_methods();
}
