/* The sequences: list and tuple (core and methods), their iterator, range and slice. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "shell/lang/interp.h"

typedef struct { sh_obj head; sh_obj *seq; int64_t i; } seqiter;

/* ---- list and tuple -------------------------------------------------------------------- */
static void list_grow(sh_list_obj *l, int64_t need) {
  if (need <= l->cap) return;
  int64_t cap = l->cap ? l->cap * 2 : 4;
  while (cap < need) cap *= 2;
  l->items = xrealloc(l->items, cap * sizeof *l->items);
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
  sh_tuple_obj *t = xcalloc(1, sizeof(sh_tuple_obj) + n * sizeof(sh_obj *));
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

sh_obj *sh_seq_repeat(sh_obj *seq, int64_t n) {
  if (n < 0) n = 0;
  if (sh_is_str(seq)) {
    int64_t len = sh_str_len(seq);
    if (len * n == 0) return sh_strn("", 0);
    sh_str_obj *o = sh_str_alloc(len * n);
    for (int64_t i = 0; i < n; i++) memcpy(o->s + i * len, sh_str_cstr(seq), len);
    o->nchars = ((sh_str_obj *)seq)->nchars * n;
    return &o->head;
  }
  sh_obj **items = NULL; int64_t len = 0;
  seq_view(seq, &items, &len);
  sh_obj **all = xmalloc((len * n + 1) * sizeof *all);
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
    sh_obj **all = xmalloc((na + nb + 1) * sizeof *all);
    if (na) memcpy(all, ia, na * sizeof *all);
    if (nb) memcpy(all + na, ib, nb * sizeof *all);
    sh_obj *r = seq_from_items(a->type == &sh_tuple_type ? &sh_tuple_type : &sh_list_type, all, na + nb);
    free(all);
    return r;
  }
  if (op == SH_MUL) {
    if (seq_view(a, &ia, &na) && sh_is_int(b)) return sh_seq_repeat(a, sh_int_value(b));
    if (seq_view(b, &ib, &nb) && sh_is_int(a)) return sh_seq_repeat(b, sh_int_value(a));
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
  if (i >= na || i >= nb) return sh_bool(sh_cmp_result(op, (na > nb) - (na < nb)));
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
    if (sh_norm_index(key, n, &i, what) < 0) return NULL;
    return sh_incref(items[i]);
  }
  if (key->type == &sh_slice_type) {
    int64_t start, stop, step, count;
    if (sh_slice_indices(key, n, &start, &stop, &step, &count) < 0) return NULL;
    sh_obj **sel = xmalloc((count + 1) * sizeof *sel);
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
      sh_obj **keep = xmalloc((l->n + 1) * sizeof *keep);
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
static sh_obj *seq_iter(sh_obj *o) { return sh_seqiter_new(o); }

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

int sh_unhashable(sh_obj *o, int64_t *out) {
  sh_raise(sh_TypeError, "unhashable type: '%s'", sh_type_name(o));
  return -1;
}

sh_type sh_list_type = {SH_TYPE_HEAD, .name = "list", .size = sizeof(sh_list_obj),
  .destroy = list_destroy, .repr = seq_repr, .len = seq_len, .truth = seq_truth,
  .binop = seq_binop, .compare = seq_compare, .contains = seq_contains,
  .getitem = seq_getitem, .setitem = list_setitem, .iter = seq_iter, .hash = sh_unhashable,
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
sh_type sh_iter_type = {SH_TYPE_HEAD, .name = "iterator", .size = sizeof(seqiter),
  .destroy = seqiter_destroy, .iter = sh_self_iter, .next = seqiter_next};
sh_obj *sh_seqiter_new(sh_obj *seq) {
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
  .size = sizeof(rangeiter), .iter = sh_self_iter, .next = rangeiter_next};
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
    if (sh_norm_index(key, range_len(o), &i, "range object") < 0) return NULL;
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

/* Stable merge sort of items by keys (parallel arrays). */
static int sort_items(sh_obj **items, sh_obj **keys, int64_t n, bool reverse) {
  if (n < 2) return 0;
  sh_obj **ti = xmalloc(n * sizeof *ti), **tk = xmalloc(n * sizeof *tk);
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

int sh_list_sort(sh_obj *list, sh_obj *key, bool reverse) {
  int64_t n = SH_LIST_N(list);
  sh_obj **items = xmalloc((n + 1) * sizeof *items), **keys = xmalloc((n + 1) * sizeof *keys);
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
  if (sh_list_sort(self, key, rev && sh_truth(rev) > 0) < 0) return NULL;
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
