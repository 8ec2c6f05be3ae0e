/* numpy's string arrays. The runtime has one string dtype (TF's: bytes), so an array says
 * what numpy would hold on top of it: an object array of bytes (what TF's fetches are),
 * a bytes array ('|S2') or a str array ('<U2', elements kept as UTF-8). Here: their dtype
 * objects, conversions to and from them (astype) and comparisons. */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "shell/np/np.h"

/* ---- dtype('<U2'), dtype('S1'), dtype('O') ------------------------------------------- */

typedef struct np_sdtype {
  sh_dtype d;      /* d.name: str()'s text */
  int kind;
  int32_t width;   /* characters ('U') or bytes ('S'); 0 for np.str_ and object */
  char text[24];
} np_sdtype;

static sh_obj *sdtype_make(int kind, int32_t width, const char *name) {
  np_sdtype *d = sh_new(&np_sdtype_type);
  if (kind == NP_STR_OBJTEXT) kind = NP_STR_OBJECT;   /* dtype('O') either way */
  d->d.t = RT_STRING;
  d->kind = kind;
  d->width = width;
  if (name) snprintf(d->text, sizeof d->text, "%s", name);
  else if (kind == NP_STR_TEXT) snprintf(d->text, sizeof d->text, "<U%d", (int)width);
  else if (kind == NP_STR_BYTES) snprintf(d->text, sizeof d->text, "|S%d", (int)width);
  else snprintf(d->text, sizeof d->text, "object");
  d->d.name = d->text;
  return &d->d.head;
}

sh_obj *np_str_dtype(int kind, int32_t width) { return sdtype_make(kind, width, NULL); }

static sh_obj *sdtype_repr(sh_obj *self) {
  np_sdtype *d = (np_sdtype *)self;
  if (d->kind == NP_STR_OBJECT) return sh_str("dtype('O')");
  if (d->kind == NP_STR_BYTES) return sh_strf("dtype('S%d')", (int)d->width);   /* no '|' here */
  return sh_strf("dtype('%s')", d->text);
}
static sh_obj *sdtype_str(sh_obj *self) { return sh_str(((np_sdtype *)self)->text); }

static sh_obj *sdtype_getattr(sh_obj *self, const char *name) {
  np_sdtype *d = (np_sdtype *)self;
  char k = d->kind == NP_STR_TEXT ? 'U' : d->kind == NP_STR_BYTES ? 'S' : 'O';
  int64_t itemsize = d->kind == NP_STR_TEXT ? 4 * (int64_t)d->width : d->kind == NP_STR_BYTES ? d->width : 8;
  if (!strcmp(name, "kind") || !strcmp(name, "char")) return sh_strn(&k, 1);
  if (!strcmp(name, "itemsize")) return sh_int(itemsize);
  if (!strcmp(name, "name"))
    return d->kind == NP_STR_OBJECT ? sh_str("object")
                                    : sh_strf("%s%lld", k == 'U' ? "str" : "bytes", (long long)itemsize * 8);
  if (!strcmp(name, "str")) return sh_strf("%s", d->kind == NP_STR_OBJECT ? "|O" : d->text);
  return NULL;
}

static sh_obj *sdtype_compare(int op, sh_obj *a, sh_obj *b) {
  if (op != SH_EQ && op != SH_NE) return SH_NOTIMPL;
  int ka, kb;
  int32_t wa, wb;
  bool eq = np_str_kind_arg(a, &ka, &wa) && np_str_kind_arg(b, &kb, &wb) && ka == kb &&
            (ka == NP_STR_OBJECT || wa == wb);
  return sh_bool(op == SH_EQ ? eq : !eq);
}

static int sdtype_hash(sh_obj *self, int64_t *out) {
  *out = ((np_sdtype *)self)->kind * 1000003 + ((np_sdtype *)self)->width;
  return 0;
}

/* np.str_('a') is 'a', np.str_(b'a') is "b'a'" (str()), as numpy's scalar types. */
static sh_obj *sdtype_call(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *v = NULL;
  if (sh_parse_args(((np_sdtype *)self)->text, argc, argv, kw, "|x", &v) < 0) return NULL;
  if (!v) return sh_str("");
  return sh_to_str(v);
}

sh_type np_sdtype_type = {
  SH_TYPE_HEAD, .name = "dtype", .size = sizeof(np_sdtype), .help = "A numpy string dtype.",
  .repr = sdtype_repr, .str = sdtype_str, .getattr = sdtype_getattr, .compare = sdtype_compare,
  .hash = sdtype_hash, .call = sdtype_call,
};

static int parse_width(const char *s, int32_t *width) {
  if (!*s) { *width = 0; return 1; }
  long w = 0;
  for (; *s; s++) {
    if (*s < '0' || *s > '9' || w > 100000000) return 0;
    w = w * 10 + (*s - '0');
  }
  *width = (int32_t)w;
  return 1;
}

int np_str_kind_arg(sh_obj *dt, int *kind, int32_t *width) {
  *width = 0;
  if (!dt || dt == SH_NONE) return 0;
  if (dt->type == &np_sdtype_type) {
    *kind = ((np_sdtype *)dt)->kind;
    *width = ((np_sdtype *)dt)->width;
    return 1;
  }
  if (dt == (sh_obj *)&sh_str_type) return *kind = NP_STR_TEXT, 1;
  if (dt == (sh_obj *)&sh_bytes_type || (dt->type == &np_dtype_type && ((sh_dtype *)dt)->t == RT_STRING))
    return *kind = NP_STR_BYTES, 1;
  if (dt == (sh_obj *)&sh_object_type) return *kind = NP_STR_OBJECT, 1;
  if (!sh_is_str(dt)) return 0;
  const char *s = sh_str_cstr(dt);
  if (!strcmp(s, "str") || !strcmp(s, "str_") || !strcmp(s, "unicode")) return *kind = NP_STR_TEXT, 1;
  if (!strcmp(s, "bytes") || !strcmp(s, "bytes_")) return *kind = NP_STR_BYTES, 1;
  if (!strcmp(s, "O") || !strcmp(s, "object") || !strcmp(s, "|O")) return *kind = NP_STR_OBJECT, 1;
  if (*s == '<' || *s == '=' || *s == '|') s++;
  if (*s == 'U') return *kind = NP_STR_TEXT, parse_width(s + 1, width);
  if (*s == 'S') return *kind = NP_STR_BYTES, parse_width(s + 1, width);
  return 0;
}

/* ---- widths and wrapping ------------------------------------------------------------- */

static size_t utf8_chars(const char *p, size_t n) {
  size_t c = 0;
  for (size_t i = 0; i < n; i++) c += ((unsigned char)p[i] & 0xC0) != 0x80;
  return c;
}

int32_t np_str_width(const rt_tensor *t, int kind) {
  if (np_str_is_object(kind)) return 0;
  const rt_str *s = rt_tensor_data(t);
  size_t w = 1;
  for (int64_t i = 0, n = rt_tensor_numel(t); i < n; i++) {
    size_t l = kind == NP_STR_TEXT ? utf8_chars(s[i].ptr ? s[i].ptr : "", s[i].len) : s[i].len;
    if (l > w) w = l;
  }
  return w > INT32_MAX ? INT32_MAX : (int32_t)w;
}

sh_obj *np_wrap_str(rt_tensor *t, int kind, int32_t width) {
  sh_obj *r = np_wrap(t);
  if (r && t->dtype == RT_STRING) {
    ((np_array *)r)->skind = (uint8_t)kind;
    ((np_array *)r)->swidth = width ? width : np_str_width(t, kind);
  }
  return r;
}

sh_obj *np_element(const rt_tensor *t, int64_t i, int kind) {
  const rt_str *s = (const rt_str *)rt_tensor_data(t) + i;
  const char *p = s->ptr ? s->ptr : "";
  return np_str_is_text(kind) ? sh_strn(p, s->len) : sh_bytes(p, s->len);
}

/* Cut every element of t (its own) to width characters or bytes, as numpy stores them. */
static void truncate_to(rt_tensor *t, int kind, int32_t width) {
  rt_str *s = rt_tensor_data(t);
  for (int64_t i = 0, n = rt_tensor_numel(t); i < n; i++) {
    size_t keep = s[i].len;
    if (kind == NP_STR_TEXT) {
      size_t c = 0, j = 0;
      for (; j < s[i].len; j++)
        if (((unsigned char)s[i].ptr[j] & 0xC0) != 0x80 && c++ == (size_t)width) break;
      keep = j;
    } else if (keep > (size_t)width) {
      keep = (size_t)width;
    }
    if (keep < s[i].len) {
      char *cut = xmalloc(keep + 1);
      memcpy(cut, s[i].ptr, keep);
      cut[keep] = '\0';
      rt_tensor_set_str(t, i, cut, keep);
      free(cut);
    }
  }
}

/* ---- astype ----------------------------------------------------------------------------- */

/* the width numpy gives the text of a number: int64 '<U21', float '<U32', ... */
static int32_t number_width(rt_dtype t) {
  switch (t) {
  case RT_INT32: return 11;
  case RT_INT64: return 21;
  case RT_BOOL: return 5;
  default: return 32;
  }
}

/* One element as the Python value astype would store: strings as they are (bytes and
 * str both UTF-8; an object array's bytes decode, as numpy's astype(str) does there), and
 * for numbers the text numpy's scalar prints. */
static sh_obj *element_text(np_array *src, int64_t i) {
  rt_tensor *t = src->t;
  if (t->dtype == RT_STRING) return np_element(t, i, src->skind);
  rt_shape s = rt_shape_scalar();
  rt_tensor *one = rt_tensor_new(t->dtype, &s);
  if (!one) return sh_raise(sh_ValueError, "out of memory");
  size_t es = rt_dtype_size(t->dtype);
  memcpy(rt_tensor_data(one), (const char *)rt_tensor_data(t) + (size_t)i * es, es);
  sh_obj *sc = np_scalar_or_array(np_wrap(one));
  sh_obj *r = sc ? sh_to_str(sc) : NULL;
  sh_decref(sc);
  return r;
}

sh_obj *np_str_astype(np_array *src, rt_dtype to, int kind, int32_t width) {
  rt_tensor *t = src->t;
  int64_t n = rt_tensor_numel(t);
  if (to == RT_STRING && kind == NP_STR_OBJECT && t->dtype != RT_STRING)
    return sh_raise(sh_TypeError, "tfsh's numpy holds strings only in object arrays, not %s", rt_dtype_name(t->dtype));
  if (to == RT_STRING && kind == NP_STR_OBJECT && t->dtype == RT_STRING && np_str_is_text(src->skind))
    kind = NP_STR_OBJTEXT;   /* str objects stay str */
  if (to == RT_STRING) {
    rt_tensor *r = rt_tensor_new(RT_STRING, &t->shape);
    if (!r) return sh_raise(sh_ValueError, "out of memory");
    for (int64_t i = 0; i < n; i++) {
      sh_obj *e = element_text(src, i);
      if (!e) { rt_tensor_unref(r); return NULL; }
      if (sh_is_str(e)) rt_tensor_set_str(r, i, sh_str_cstr(e), (size_t)sh_str_len(e));
      else rt_tensor_set_str(r, i, sh_bytes_data(e), (size_t)sh_bytes_len(e));
      sh_decref(e);
    }
    if (width && !np_str_is_object(kind)) truncate_to(r, kind, width);
    if (!width && t->dtype != RT_STRING) width = number_width(t->dtype);
    if (!width && !np_str_is_object(src->skind)) width = src->swidth;
    return np_wrap_str(r, kind, width);
  }
  /* strings to numbers: each element through int() / float() (bool: non-empty) */
  if (to == RT_BOOL) {
    rt_tensor *r = rt_tensor_new(RT_BOOL, &t->shape);
    if (!r) return sh_raise(sh_ValueError, "out of memory");
    for (int64_t i = 0; i < n; i++) ((bool *)rt_tensor_data(r))[i] = ((const rt_str *)rt_tensor_data(t))[i].len != 0;
    return np_wrap(r);
  }
  sh_obj *conv = sh_dict_get_str(sh_builtins_dict(), rt_dtype_is_float(to) ? "float" : "int");
  sh_obj *flat = sh_list_new(0);
  for (int64_t i = 0; i < n; i++) {
    sh_obj *e = np_element(t, i, NP_STR_TEXT);
    sh_obj *v = sh_call(conv, 1, &e, NULL);
    sh_decref(e);
    if (!v) { sh_decref(flat); return NULL; }
    sh_list_append_steal(flat, v);
  }
  rt_tensor *r = n ? np_to_tensor(flat, to, true) : rt_tensor_new(to, &t->shape);
  sh_decref(flat);
  if (!r) return NULL;
  r->shape = t->shape;
  return np_wrap(r);
}

/* ---- comparisons -------------------------------------------------------------------- */

/* a or b as string elements: (tensor, text?); NULL (no exception) when not strings. */
static rt_tensor *as_strings(sh_obj *v, bool *text) {
  if (np_check(v)) {
    np_array *a = (np_array *)v;
    if (a->t->dtype != RT_STRING) return NULL;
    *text = np_str_is_text(a->skind);
    return rt_tensor_ref(a->t);
  }
  if (sh_is_str(v) || sh_is_bytes(v)) {
    *text = sh_is_str(v);
    return np_to_tensor(v, RT_STRING, true);
  }
  if (v->type != &sh_list_type && v->type != &sh_tuple_type) return NULL;
  sh_obj *arr = np_wrap(np_to_tensor(v, RT_INVALID, true));   /* f_array's kind rules */
  if (!arr) { sh_err_clear(); return NULL; }
  rt_tensor *t = NULL;
  if (((np_array *)arr)->t->dtype == RT_STRING) {
    t = rt_tensor_ref(((np_array *)arr)->t);
    /* a list of str is text, of bytes is not */
    sh_obj *first = v;
    while (first->type == &sh_list_type || first->type == &sh_tuple_type) {
      int64_t k = first->type == &sh_list_type ? SH_LIST_N(first) : SH_TUPLE_N(first);
      if (!k) break;
      first = first->type == &sh_list_type ? SH_LIST_ITEMS(first)[0] : SH_TUPLE_ITEMS(first)[0];
    }
    *text = sh_is_str(first);
  }
  sh_decref(arr);
  return t;
}

static int str_cmp(const rt_str *x, const rt_str *y) {
  size_t n = x->len < y->len ? x->len : y->len;
  int c = n ? memcmp(x->ptr, y->ptr, n) : 0;
  return c ? c : (x->len > y->len) - (x->len < y->len);
}

sh_obj *np_str_compare(int op, sh_obj *a, sh_obj *b) {
  bool ta = false, tb = false;
  rt_tensor *x = as_strings(a, &ta), *y = x ? as_strings(b, &tb) : NULL;
  if (!x || !y) {
    rt_tensor_unref(x);
    return SH_NOTIMPL;
  }
  rt_shape s;
  if (np_broadcast_shape(x, y, &s) < 0) {
    rt_tensor_unref(x);
    rt_tensor_unref(y);
    return NULL;
  }
  if (ta != tb && op != SH_EQ && op != SH_NE) {
    rt_tensor_unref(x);
    rt_tensor_unref(y);
    return sh_raise(sh_TypeError, "'%s' not supported between arrays of str and bytes",
                    op == SH_LT ? "<" : op == SH_LE ? "<=" : op == SH_GT ? ">" : ">=");
  }
  rt_tensor *r = rt_tensor_new(RT_BOOL, &s);
  if (!r) {
    rt_tensor_unref(x);
    rt_tensor_unref(y);
    return sh_raise(sh_ValueError, "out of memory");
  }
  const rt_str *xs = rt_tensor_data(x), *ys = rt_tensor_data(y);
  for (int64_t k = 0, n = rt_shape_numel(&s); k < n; k++) {
    int64_t ix, iy;
    np_broadcast_index(&s, x, y, k, &ix, &iy);
    int c = ta != tb ? 1 : str_cmp(&xs[ix], &ys[iy]);
    bool v = op == SH_LT ? c < 0 : op == SH_LE ? c <= 0 : op == SH_EQ ? c == 0
           : op == SH_NE ? c != 0 : op == SH_GT ? c > 0 : c >= 0;
    ((bool *)rt_tensor_data(r))[k] = v;
  }
  rt_tensor_unref(x);
  rt_tensor_unref(y);
  return np_scalar_or_array(np_wrap(r));
}
