/* dict and set: the hash tables (core) and their methods. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "shell/lang/interp.h"

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
  if (cap > d->cap) { d->entries = xrealloc(d->entries, cap * sizeof(dentry)); d->cap = cap; }
  int64_t isize = 8;
  while (isize < d->cap * 3 / 2 + 1) isize *= 2;
  free(d->index);
  d->index = xmalloc(isize * sizeof(int64_t));
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
  if (sh_is_str(key)) h = sh_str_hash_value((sh_str_obj *)key);
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
  .destroy = dictiter_destroy, .iter = sh_self_iter, .next = dictiter_next};
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
  .iter = dict_iter, .compare = dict_compare, .binop = dict_binop, .hash = sh_unhashable,
  .methods = sh_dict_methods, .help = "dict(**kwargs): an insertion-ordered mapping"};
sh_type sh_set_type = {SH_TYPE_HEAD, .name = "set", .size = sizeof(sh_dict_obj),
  .destroy = dict_destroy, .repr = dict_repr, .len = dict_len, .truth = dict_truth,
  .contains = dict_contains, .iter = dict_iter, .compare = dict_compare,
  .binop = set_binop, .hash = sh_unhashable, .methods = sh_set_methods,
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

/* ---- constructors: dict(...), set(...) ---------------------------------------------- */
int sh_dict_update(sh_obj *d, int argc, sh_obj **argv, sh_obj *kw) {
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
sh_obj *sh_dict_construct(ARGS) {
  sh_obj *d = sh_dict_new();
  if (sh_dict_update(d, argc, argv, kw) < 0) { sh_decref(d); return NULL; }
  return d;
}
sh_obj *sh_set_construct(ARGS) {
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
static sh_obj *dict_update_m(ARGS) { return sh_dict_update(self, argc, argv, kw) < 0 ? NULL : sh_none(); }
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
    sh_obj *other = sh_set_construct(NULL, 1, &argv[i], NULL);
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
  sh_obj *other = sh_set_construct(NULL, 1, &arg, NULL);
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
