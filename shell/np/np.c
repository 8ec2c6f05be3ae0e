/* A small numpy: ndarray over runtime tensors, enough for feeds and results — building
 * arrays, printing them exactly as numpy does, indexing, iteration, shape, reshape,
 * tolist, elementwise arithmetic with broadcasting and a few reductions. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "shell/np/np.h"

/* ---- conversion from Python values ---------------------------------------------------- */

typedef struct conv {
  rt_shape shape;
  bool any_float, any_int, any_bool, any_str, any_array;
  bool any_text, any_bytes;   /* str (or str arrays) / bytes (or other string arrays) */
  rt_dtype array_dtype;
} conv;

/* First pass: the shape (regular nesting only) and what kinds of scalars occur. */
static int scan(sh_obj *v, int depth, conv *c) {
  if (np_check(v)) {
    rt_tensor *t = ((np_array *)v)->t;
    if (depth + t->shape.ndims > RT_MAX_DIMS) goto deep;
    for (int i = 0; i < t->shape.ndims; i++) {
      if (c->shape.ndims <= depth + i) c->shape.dims[depth + i] = t->shape.dims[i];
      else if (c->shape.dims[depth + i] != t->shape.dims[i]) goto ragged;
    }
    if (c->shape.ndims < depth + t->shape.ndims) c->shape.ndims = depth + t->shape.ndims;
    c->any_array = true;
    if (rt_dtype_is_float(t->dtype)) c->any_float = true;
    else if (rt_dtype_is_int(t->dtype)) c->any_int = true;
    else if (t->dtype == RT_BOOL) c->any_bool = true;
    else {
      c->any_str = true;
      if (np_str_is_text(((np_array *)v)->skind)) c->any_text = true;
      else c->any_bytes = true;
    }
    if (c->array_dtype == RT_INVALID || rt_dtype_size(t->dtype) > rt_dtype_size(c->array_dtype))
      c->array_dtype = t->dtype;
    return 0;
  }
  if (v->type == &sh_list_type || v->type == &sh_tuple_type) {
    int64_t n = v->type == &sh_list_type ? SH_LIST_N(v) : SH_TUPLE_N(v);
    sh_obj **items = v->type == &sh_list_type ? SH_LIST_ITEMS(v) : SH_TUPLE_ITEMS(v);
    if (depth >= RT_MAX_DIMS) goto deep;
    if (c->shape.ndims <= depth) {
      c->shape.ndims = depth + 1;
      c->shape.dims[depth] = n;
    } else if (c->shape.dims[depth] != n) {
      goto ragged;
    }
    for (int64_t i = 0; i < n; i++)
      if (scan(items[i], depth + 1, c) < 0) return -1;
    return 0;
  }
  if (c->shape.ndims > depth) goto ragged;
  if (v->type == &sh_bool_type) c->any_bool = true;
  else if (sh_is_int(v)) c->any_int = true;
  else if (sh_is_float(v)) c->any_float = true;
  else if (sh_is_str(v)) c->any_str = c->any_text = true;
  else if (sh_is_bytes(v)) c->any_str = c->any_bytes = true;
  else {
    sh_raise(sh_TypeError, "Expected a number, a string or a (nested) list of them, got %s",
             sh_type_name(v));
    return -1;
  }
  return 0;
ragged:
  sh_raise(sh_ValueError, "setting an array element with a sequence: the nested lists are "
           "not all the same length");
  return -1;
deep:
  sh_raise(sh_ValueError, "too many dimensions (at most %d)", RT_MAX_DIMS);
  return -1;
}

static void store(rt_tensor *t, int64_t i, double d, int64_t n) {
  void *p = rt_tensor_data(t);
  switch (t->dtype) {
  case RT_FLOAT: ((float *)p)[i] = (float)d; break;
  case RT_DOUBLE: ((double *)p)[i] = d; break;
  case RT_INT32: ((int32_t *)p)[i] = (int32_t)n; break;
  case RT_INT64: ((int64_t *)p)[i] = n; break;
  case RT_UINT8: ((uint8_t *)p)[i] = (uint8_t)n; break;
  case RT_BOOL: ((bool *)p)[i] = n != 0 || d != 0; break;
  default: break;
  }
}

/* Second pass: the values, in row-major order. */
static int fill(sh_obj *v, rt_tensor *t, int64_t *pos) {
  if (np_check(v)) {
    rt_tensor *s = ((np_array *)v)->t;
    int64_t n = rt_tensor_numel(s);
    for (int64_t i = 0; i < n; i++, (*pos)++) {
      if (t->dtype == RT_STRING) {
        const rt_str *e = (const rt_str *)rt_tensor_data(s) + i;
        if (s->dtype != RT_STRING) return sh_raise(sh_TypeError, "cannot mix strings and numbers"), -1;
        rt_tensor_set_str(t, *pos, e->ptr ? e->ptr : "", e->len);
      } else if (s->dtype == RT_STRING) {
        return sh_raise(sh_TypeError, "cannot convert a string array to numbers"), -1;
      } else {
        store(t, *pos, rt_tensor_get_f64(s, i), rt_tensor_get_i64(s, i));
      }
    }
    return 0;
  }
  if (v->type == &sh_list_type || v->type == &sh_tuple_type) {
    int64_t n = v->type == &sh_list_type ? SH_LIST_N(v) : SH_TUPLE_N(v);
    sh_obj **items = v->type == &sh_list_type ? SH_LIST_ITEMS(v) : SH_TUPLE_ITEMS(v);
    for (int64_t i = 0; i < n; i++)
      if (fill(items[i], t, pos) < 0) return -1;
    return 0;
  }
  if (t->dtype == RT_STRING) {
    if (sh_is_bytes(v)) {
      rt_tensor_set_str(t, (*pos)++, sh_bytes_data(v), (size_t)sh_bytes_len(v));
      return 0;
    }
    if (!sh_is_str(v)) return sh_raise(sh_TypeError, "cannot mix strings and numbers"), -1;
    rt_tensor_set_str(t, (*pos)++, sh_str_cstr(v), (size_t)sh_str_len(v));
    return 0;
  }
  if (sh_is_bytes(v)) {
    sh_raise(sh_ValueError, "could not convert bytes to %s", rt_dtype_name(t->dtype));
    return -1;
  }
  if (sh_is_str(v)) {
    sh_raise(sh_ValueError, "could not convert string to %s: '%s'", rt_dtype_name(t->dtype),
             sh_str_cstr(v));
    return -1;
  }
  double d = sh_is_float(v) ? sh_float_value(v) : (double)sh_int_value(v);
  int64_t n = sh_is_float(v) ? (int64_t)d : sh_int_value(v);
  store(t, (*pos)++, d, n);
  return 0;
}

/* np_to_tensor, and in *kind the string kind numpy would give the values: text if any
 * str occurs, else bytes (an object array's kind when v is one). */
static rt_tensor *to_tensor_kind(sh_obj *v, rt_dtype want, bool numpy_defaults, int *kind) {
  *kind = NP_STR_OBJECT;
  if (np_check(v) && (want == RT_INVALID || want == ((np_array *)v)->t->dtype)) {
    *kind = ((np_array *)v)->skind;
    return rt_tensor_ref(((np_array *)v)->t);
  }
  conv c = {.shape = {.ndims = 0}};
  if (scan(v, 0, &c) < 0) return NULL;
  *kind = c.any_text ? NP_STR_TEXT : NP_STR_BYTES;
  rt_dtype t = want;
  if (t == RT_INVALID) {
    if (c.any_str) t = RT_STRING;
    else if (c.any_array && !c.any_float) t = c.any_int && c.array_dtype == RT_BOOL ? RT_INT64 : c.array_dtype;
    else if (c.any_array && c.any_float) t = rt_dtype_is_float(c.array_dtype) ? c.array_dtype : RT_DOUBLE;
    else if (c.any_float) t = numpy_defaults ? RT_DOUBLE : RT_FLOAT;
    else if (c.any_int) t = numpy_defaults ? RT_INT64 : RT_INT32;
    else if (c.any_bool) t = RT_BOOL;
    else t = numpy_defaults ? RT_DOUBLE : RT_FLOAT;   /* [] */
  }
  if (c.any_str && t != RT_STRING) {
    sh_raise(sh_TypeError, "cannot convert strings to %s", rt_dtype_name(t));
    return NULL;
  }
  rt_tensor *x = rt_tensor_new(t, &c.shape);
  if (!x) {
    sh_raise(sh_ValueError, "array too large");
    return NULL;
  }
  int64_t pos = 0;
  if (fill(v, x, &pos) < 0) {
    rt_tensor_unref(x);
    return NULL;
  }
  return x;
}

rt_tensor *np_to_tensor(sh_obj *v, rt_dtype want, bool numpy_defaults) {
  int kind;
  return to_tensor_kind(v, want, numpy_defaults, &kind);
}

/* ---- ndarray ----------------------------------------------------------------------- */

sh_obj *np_wrap(rt_tensor *t) {
  if (!t) return sh_raise(sh_ValueError, "out of memory");
  np_array *a = sh_new(&np_array_type);
  a->t = t;
  return (sh_obj *)a;
}

static void array_destroy(sh_obj *self) { rt_tensor_unref(((np_array *)self)->t); }

static sh_obj *owned_str(char *s) {
  if (!s) return sh_raise(sh_ValueError, "out of memory");
  sh_obj *r = sh_str(s);
  free(s);
  return r;
}

static sh_obj *array_repr(sh_obj *self) {
  np_array *a = (np_array *)self;
  if (a->t->dtype != RT_STRING) return owned_str(rt_tensor_repr(a->t));
  if (np_str_is_object(a->skind)) return owned_str(rt_tensor_repr_as(a->t, np_str_is_text(a->skind), NULL));
  char dt[32];
  snprintf(dt, sizeof dt, "'%c%c%d'", a->skind == NP_STR_TEXT ? '<' : '|', a->skind == NP_STR_TEXT ? 'U' : 'S',
           (int)a->swidth);
  return owned_str(rt_tensor_repr_as(a->t, a->skind == NP_STR_TEXT, dt));
}
/* A numpy scalar's repr is its str, as in numpy 1.x: print(sess.run([loss, acc])) shows
 * [0.5, 0.25] (numpy 2 would show [np.float32(0.5), ...]). */
static sh_obj *array_str(sh_obj *self) {
  np_array *a = (np_array *)self;
  return owned_str(rt_tensor_format_as(a->t, a->t->dtype == RT_STRING && np_str_is_text(a->skind)));
}

/* r (a new array cut from self, or NULL) holds the same kind of strings as self */
static sh_obj *adopt(sh_obj *r, sh_obj *self) {
  np_array *a = (np_array *)self;
  if (r && np_check(r) && ((np_array *)r)->t->dtype == RT_STRING && a->t->dtype == RT_STRING) {
    ((np_array *)r)->skind = a->skind;
    ((np_array *)r)->swidth = a->swidth;
  }
  return r;
}

/* Element i as a Python object. */
static sh_obj *element(const rt_tensor *t, int64_t i) {
  switch (t->dtype) {
  case RT_FLOAT: case RT_DOUBLE: return sh_float(rt_tensor_get_f64(t, i));
  case RT_INT32: case RT_INT64: case RT_UINT8: return sh_int(rt_tensor_get_i64(t, i));
  case RT_BOOL: return sh_bool(rt_tensor_get_i64(t, i) != 0);
  case RT_STRING: return np_element(t, i, NP_STR_OBJECT);   /* TF fetches bytes */
  default: return sh_none();
  }
}

static sh_obj *shape_tuple(const rt_shape *s) {
  sh_obj *t = sh_tuple_new(s->ndims);
  for (int i = 0; i < s->ndims; i++) SH_TUPLE_ITEMS(t)[i] = sh_int(s->dims[i]);
  return t;
}

/* Row src of t (row elements) into row dst of r (same dtype). */
static void copy_row(rt_tensor *r, int64_t dst, const rt_tensor *t, int64_t src, int64_t row) {
  if (t->dtype == RT_STRING) {
    const rt_str *e = (const rt_str *)rt_tensor_data(t) + src * row;
    for (int64_t j = 0; j < row; j++) rt_tensor_set_str(r, dst * row + j, e[j].ptr ? e[j].ptr : "", e[j].len);
  } else {
    size_t es = rt_dtype_size(t->dtype);
    memcpy((char *)rt_tensor_data(r) + (size_t)(dst * row) * es, (const char *)rt_tensor_data(t) + (size_t)(src * row) * es,
           (size_t)row * es);
  }
}

/* A new tensor: rows [start, start+count) of axis 0 with step. */
static rt_tensor *take_rows(const rt_tensor *t, int64_t start, int64_t step, int64_t count,
                            bool drop_axis) {
  rt_shape s = t->shape;
  int64_t row = 1;
  for (int i = 1; i < s.ndims; i++) row *= s.dims[i];
  if (drop_axis) {
    for (int i = 1; i < s.ndims; i++) s.dims[i - 1] = s.dims[i];
    s.ndims--;
  } else {
    s.dims[0] = count;
  }
  rt_tensor *r = rt_tensor_new(t->dtype, &s);
  if (!r) return NULL;
  for (int64_t k = 0; k < count; k++) copy_row(r, k, t, start + k * step, row);
  return r;
}

/* a[idx] with an array or list of ints (rows gathered, result shape idx.shape + the rest),
 * or of bools as long as axis 0 (the rows where true), as numpy's advanced indexing on
 * the first axis. */
static sh_obj *index_array(rt_tensor *t, sh_obj *key) {
  rt_tensor *ix = np_check(key) ? rt_tensor_ref(((np_array *)key)->t) : np_to_tensor(key, RT_INVALID, true);
  if (!ix) return NULL;
  int64_t n = t->shape.dims[0], m = rt_tensor_numel(ix), *rows = NULL, count = 0;
  int lead = 1;   /* the axes of t the index spans (a boolean mask spans its own rank) */
  rt_shape s;
  if (ix->dtype == RT_BOOL) {
    /* a mask of rank k picks among the first k axes flattened: result (count,) + the rest */
    lead = ix->shape.ndims < 1 ? 1 : ix->shape.ndims;
    if (lead > t->shape.ndims) {
      rt_tensor_unref(ix);
      return sh_raise(sh_IndexError, "too many indices for array: array is %d-dimensional, but %d were indexed",
                      t->shape.ndims, lead);
    }
    for (int d = 0; d < lead; d++) {
      int64_t want = t->shape.dims[d], got = ix->shape.ndims ? ix->shape.dims[d] : 1;
      if (want != got) {
        rt_tensor_unref(ix);
        return sh_raise(sh_IndexError, "boolean index did not match indexed array along axis %d; size of axis is "
                        "%lld but size of corresponding boolean axis is %lld", d, (long long)want, (long long)got);
      }
    }
    rows = xmalloc((size_t)(m ? m : 1) * sizeof *rows);
    for (int64_t i = 0; i < m; i++)
      if (((const bool *)rt_tensor_data(ix))[i]) rows[count++] = i;
    s.ndims = t->shape.ndims - lead + 1;
    s.dims[0] = count;
    for (int d = lead; d < t->shape.ndims; d++) s.dims[d - lead + 1] = t->shape.dims[d];
  } else if (ix->dtype == RT_INT32 || ix->dtype == RT_INT64) {
    if (ix->shape.ndims + t->shape.ndims - 1 > RT_MAX_DIMS) {
      rt_tensor_unref(ix);
      return sh_raise(sh_IndexError, "too many dimensions in the result");
    }
    rows = xmalloc((size_t)(m ? m : 1) * sizeof *rows);
    for (int64_t i = 0; i < m; i++) {
      int64_t v = ix->dtype == RT_INT64 ? ((const int64_t *)rt_tensor_data(ix))[i]
                                        : ((const int32_t *)rt_tensor_data(ix))[i];
      if (v < -n || v >= n) {
        free(rows);
        rt_tensor_unref(ix);
        return sh_raise(sh_IndexError, "index %lld is out of bounds for axis 0 with size %lld", (long long)v,
                        (long long)n);
      }
      rows[count++] = v < 0 ? v + n : v;
    }
    s.ndims = ix->shape.ndims + t->shape.ndims - 1;
    for (int i = 0; i < ix->shape.ndims; i++) s.dims[i] = ix->shape.dims[i];
    for (int i = 1; i < t->shape.ndims; i++) s.dims[ix->shape.ndims + i - 1] = t->shape.dims[i];
  } else {
    rt_tensor_unref(ix);
    return sh_raise(sh_IndexError, "arrays used as indices must be of integer (or boolean) type");
  }
  rt_tensor_unref(ix);
  rt_tensor *r = rt_tensor_new(t->dtype, &s);
  int64_t row = 1;
  for (int i = lead; i < t->shape.ndims; i++) row *= t->shape.dims[i];
  for (int64_t k = 0; r && k < count; k++) copy_row(r, k, t, rows[k], row);
  free(rows);
  return r ? np_wrap(r) : sh_raise(sh_ValueError, "out of memory");
}

static sh_obj *index_axis0(rt_tensor *t, sh_obj *key) {
  if (t->shape.ndims == 0) return sh_raise(sh_IndexError, "too many indices for array: array is 0-dimensional, but 1 were indexed");
  int64_t n = t->shape.dims[0];
  if (sh_is_int(key)) {
    int64_t i = sh_int_value(key);
    if (i < 0) i += n;
    if (i < 0 || i >= n)
      return sh_raise(sh_IndexError, "index %lld is out of bounds for axis 0 with size %lld",
                      (long long)sh_int_value(key), (long long)n);
    return np_wrap(take_rows(t, i, 1, 1, true));
  }
  if (key->type == &sh_slice_type) {
    int64_t start, stop, step, count;
    if (sh_slice_indices(key, n, &start, &stop, &step, &count) < 0) return NULL;
    return np_wrap(take_rows(t, start, step, count, false));
  }
  if (np_check(key) || key->type == &sh_list_type) return index_array(t, key);
  return sh_raise(sh_IndexError, "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and "
                  "integer or boolean arrays are valid indices");
}

/* A result as numpy gives it: a 0-d one is a numpy scalar (numpy.float32, numpy.int64, ...;
 * a Python str for strings, which tfsh has no numpy type for). Steals r (NULL passes). */
static sh_obj *scalar_or_array(sh_obj *r) {
  if (!r) return NULL;
  rt_tensor *t = ((np_array *)r)->t;
  if (t->shape.ndims != 0 || np_is_scalar(r)) return r;
  sh_type *st = np_scalar_type_of(t->dtype);
  sh_obj *e;
  if (st) {
    np_array *a = sh_new(st);
    a->t = rt_tensor_ref(t);
    e = (sh_obj *)a;
  } else {
    e = t->dtype == RT_STRING ? np_element(t, 0, ((np_array *)r)->skind) : element(t, 0);
  }
  sh_decref(r);
  return e;
}
sh_obj *np_scalar_or_array(sh_obj *r) { return scalar_or_array(r); }

/* numpy integer scalars index as the ints they hold: a[step % n], a[i, j] with i, j fetched */
static sh_obj *int_key(sh_obj *k) {
  if (np_is_scalar(k) && rt_dtype_is_int(((np_array *)k)->t->dtype))
    return sh_int(rt_tensor_get_i64(((np_array *)k)->t, 0));
  return sh_incref(k);
}
static sh_obj *plain_key(sh_obj *key) {
  if (key->type != &sh_tuple_type) return int_key(key);
  sh_obj *t = sh_tuple_new(SH_TUPLE_N(key));
  for (int64_t i = 0; i < SH_TUPLE_N(key); i++) SH_TUPLE_ITEMS(t)[i] = int_key(SH_TUPLE_ITEMS(key)[i]);
  return t;
}

static sh_obj *getitem_plain(sh_obj *self, sh_obj *key);
static sh_obj *array_getitem(sh_obj *self, sh_obj *key) {
  sh_obj *k = plain_key(key);
  sh_obj *r = getitem_plain(self, k);
  sh_decref(k);
  return r;
}

/* Basic indexing as numpy's: ints, slices, None (a new axis of 1) and one Ellipsis, over
 * the axes after the first `skip` (kept whole). The result's axes are the sliced and new ones
 * in order; its elements are copied, a contiguous innermost run at a time. */
static sh_obj *basic_index(rt_tensor *t, int skip, sh_obj *const *ix, int64_t n, bool *made_scalar) {
  int nd = t->shape.ndims, n_real = 0, n_ell = 0;
  for (int64_t k = 0; k < n; k++) {
    if (ix[k] == SH_ELLIPSIS) n_ell++;
    else if (ix[k] != SH_NONE) n_real++;
  }
  if (n_ell > 1) return sh_raise(sh_IndexError, "an index can only have a single ellipsis ('...')");
  if (skip + n_real > nd)
    return sh_raise(sh_IndexError, "too many indices for array: array is %d-dimensional, but %d were indexed", nd,
                    skip + n_real);
  int64_t stride[RT_MAX_DIMS + 1], ostride[RT_MAX_DIMS], base = 0;
  stride[nd] = 1;
  for (int d = nd - 1; d >= 0; d--) stride[d] = stride[d + 1] * t->shape.dims[d];
  rt_shape os = {.ndims = 0};
#define OUT_AXIS(count, str)                                                             \
  do {                                                                                   \
    if (os.ndims == RT_MAX_DIMS) return sh_raise(sh_IndexError, "too many dimensions in the result"); \
    os.dims[os.ndims] = (count), ostride[os.ndims++] = (str);                            \
  } while (0)
  int d = 0;
  for (; d < skip; d++) OUT_AXIS(t->shape.dims[d], stride[d + 1]);
  for (int64_t k = 0; k < n; k++) {
    sh_obj *o = ix[k];
    if (o == SH_ELLIPSIS) {
      for (int e = skip + n_real; e < nd; e++, d++) OUT_AXIS(t->shape.dims[d], stride[d + 1]);
    } else if (o == SH_NONE) {
      OUT_AXIS(1, 0);
    } else if (sh_is_int(o)) {
      int64_t i = sh_int_value(o), len = t->shape.dims[d];
      if (i < -len || i >= len)
        return sh_raise(sh_IndexError, "index %lld is out of bounds for axis %d with size %lld", (long long)i, d,
                        (long long)len);
      base += (i < 0 ? i + len : i) * stride[d + 1];
      d++;
    } else if (o->type == &sh_slice_type) {
      int64_t start, stop, step, count;
      if (sh_slice_indices(o, t->shape.dims[d], &start, &stop, &step, &count) < 0) return NULL;
      base += start * stride[d + 1];
      OUT_AXIS(count, step * stride[d + 1]);
      d++;
    } else if (np_check(o) || o->type == &sh_list_type) {
      return sh_raise(sh_IndexError, "tfsh's numpy takes an integer or boolean array index on the first axis only");
    } else {
      return sh_raise(sh_IndexError, "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and "
                      "integer or boolean arrays are valid indices");
    }
  }
  for (; d < nd; d++) OUT_AXIS(t->shape.dims[d], stride[d + 1]);
#undef OUT_AXIS
  *made_scalar = os.ndims == 0 && !n_ell;
  rt_tensor *r = rt_tensor_new(t->dtype, &os);
  if (!r) return sh_raise(sh_ValueError, "out of memory");
  int64_t total = rt_tensor_numel(r);
  /* the innermost axis, when it steps by one element, is copied as a run */
  int64_t run = os.ndims && ostride[os.ndims - 1] == 1 ? os.dims[os.ndims - 1] : 1;
  int outer = run > 1 ? os.ndims - 1 : os.ndims;
  int64_t at[RT_MAX_DIMS] = {0}, src = base;
  size_t es = rt_dtype_size(t->dtype);
  const rt_str *ss = t->dtype == RT_STRING ? rt_tensor_data(t) : NULL;
  for (int64_t o = 0; o < total && run; o += run) {
    if (ss)
      for (int64_t j = 0; j < run; j++)
        rt_tensor_set_str(r, o + j, ss[src + j].ptr ? ss[src + j].ptr : "", ss[src + j].len);
    else
      memcpy((char *)rt_tensor_data(r) + (size_t)o * es, (const char *)rt_tensor_data(t) + (size_t)src * es,
             (size_t)run * es);
    for (int a = outer - 1; a >= 0; a--) {   /* the next position, odometer-wise */
      src += ostride[a];
      if (++at[a] < os.dims[a]) break;
      src -= ostride[a] * os.dims[a];
      at[a] = 0;
    }
  }
  return np_wrap(r);
}

static sh_obj *getitem_plain(sh_obj *self, sh_obj *key) {
  rt_tensor *t = ((np_array *)self)->t;
  bool scalar = false;
  if (key == SH_ELLIPSIS || key == SH_NONE) return adopt(basic_index(t, 0, &key, 1, &scalar), self);
  if (key->type != &sh_tuple_type) {
    sh_obj *r = adopt(index_axis0(t, key), self);
    return r && sh_is_int(key) ? scalar_or_array(r) : r;
  }
  int64_t n = SH_TUPLE_N(key);
  sh_obj *const *ix = SH_TUPLE_ITEMS(key);
  if (n && (np_check(ix[0]) || ix[0]->type == &sh_list_type)) {
    /* an array index on the first axis, then basic indexing of the axes after its own */
    sh_obj *rows = index_axis0(t, ix[0]);
    if (!rows) return NULL;
    rt_tensor *rt = ((np_array *)rows)->t;
    sh_obj *r = adopt(basic_index(rt, rt->shape.ndims - (t->shape.ndims - 1), ix + 1, n - 1, &scalar), self);
    sh_decref(rows);
    return r;
  }
  sh_obj *r = adopt(basic_index(t, 0, ix, n, &scalar), self);
  return r && scalar ? scalar_or_array(r) : r;
}

/* a shape as numpy's broadcast errors write it: (2,3), (3,), () */
static const char *shape_text(const rt_shape *s, char *buf, size_t n) {
  size_t off = (size_t)snprintf(buf, n, "(");
  for (int i = 0; i < s->ndims && off < n; i++)
    off += (size_t)snprintf(buf + off, n - off, "%s%lld", i ? "," : "", (long long)s->dims[i]);
  if (off < n) snprintf(buf + off, n - off, s->ndims == 1 ? ",)" : ")");
  return buf;
}

/* a[i, j:k, ...] = v: basic indexing (ints and slices, one per leading axis) written in
 * place, v broadcast over the selection when it is a scalar or matches its trailing axes,
 * as numpy does. The array's buffer is made its own first (copy on write): it may be shared
 * with another array or be read-only memory a fetched tensor wraps. */
static int setitem_plain(sh_obj *self, sh_obj *key, sh_obj *value);
static int array_setitem(sh_obj *self, sh_obj *key, sh_obj *value) {
  sh_obj *k = plain_key(key);
  int r = setitem_plain(self, k, value);
  sh_decref(k);
  return r;
}

/* The array's tensor with a buffer of its own, ready to write (copy on write: the buffer
 * may be shared with another array or be read-only memory a fetched tensor wraps); NULL
 * with an error raised when out of memory. */
static rt_tensor *own_buffer(np_array *a) {
  rt_tensor *t = a->t;
  if (atomic_load(&t->refs) > 1 || atomic_load(&t->buf->refs) > 1 || t->buf->free_fn) {
    rt_tensor *own = rt_tensor_copy(t);
    if (!own) {
      sh_raise(sh_ValueError, "out of memory copying the array");
      return NULL;
    }
    rt_tensor_unref(t);
    a->t = t = own;
  }
  return t;
}

/* a[mask] = v with a boolean array of a's leading shape: v is a scalar, one row (the axes
 * after the mask's), or one row for each true element, as numpy. */
static int setitem_mask(np_array *a, rt_tensor *mask, sh_obj *value) {
  rt_tensor *t = a->t;
  int lead = mask->shape.ndims < 1 ? 1 : mask->shape.ndims;
  if (lead > t->shape.ndims) {
    sh_raise(sh_IndexError, "too many indices for array: array is %d-dimensional, but %d were indexed",
             t->shape.ndims, lead);
    return -1;
  }
  for (int d = 0; d < lead; d++) {
    int64_t want = t->shape.dims[d], got = mask->shape.ndims ? mask->shape.dims[d] : 1;
    if (want != got) {
      sh_raise(sh_IndexError, "boolean index did not match indexed array along axis %d; size of axis is "
               "%lld but size of corresponding boolean axis is %lld", d, (long long)want, (long long)got);
      return -1;
    }
  }
  int64_t m = rt_tensor_numel(mask), count = 0, row = 1;
  for (int d = lead; d < t->shape.ndims; d++) row *= t->shape.dims[d];
  const bool *mk = rt_tensor_data(mask);
  for (int64_t i = 0; i < m; i++) count += mk[i];
  rt_tensor *v = np_to_tensor(value, t->dtype, true);
  if (!v) return -1;
  int64_t vn = rt_tensor_numel(v);
  bool fits = vn == 1 || vn == row || vn == count * row;
  if (!fits)
    sh_raise(sh_ValueError, "NumPy boolean array indexing assignment cannot assign %lld input values to the %lld "
             "output values where the mask is true", (long long)vn, (long long)(count * row));
  if (!fits || !(t = own_buffer(a))) {
    rt_tensor_unref(v);
    return -1;
  }
  size_t es = rt_dtype_size(t->dtype);
  char *dst = rt_tensor_data(t);
  const char *src = rt_tensor_data(v);
  for (int64_t i = 0, k = 0; i < m; i++) {
    if (!mk[i]) continue;
    for (int64_t j = 0; j < row; j++) {
      int64_t from = vn == 1 ? 0 : vn == row ? j : k * row + j;
      memcpy(dst + (size_t)(i * row + j) * es, src + (size_t)from * es, es);
    }
    k++;
  }
  rt_tensor_unref(v);
  return 0;
}

static int setitem_plain(sh_obj *self, sh_obj *key, sh_obj *value) {
  np_array *a = (np_array *)self;
  if (!value) {
    sh_raise(sh_ValueError, "cannot delete array elements");
    return -1;
  }
  if (np_check(key) && ((np_array *)key)->t->dtype == RT_BOOL && a->t->dtype != RT_STRING)
    return setitem_mask(a, ((np_array *)key)->t, value);
  rt_tensor *t = a->t;
  int nd = t->shape.ndims;
  int64_t n_ix = key->type == &sh_tuple_type ? SH_TUPLE_N(key) : 1;
  if (nd == 0 || n_ix > nd) {
    sh_raise(sh_IndexError, "too many indices for array: array is %d-dimensional, but %lld were indexed", nd,
             (long long)n_ix);
    return -1;
  }
  if (t->dtype == RT_STRING) {
    sh_raise(sh_TypeError, "assignment into string arrays is not supported in tfsh's numpy");
    return -1;
  }
  int64_t start[RT_MAX_DIMS], step[RT_MAX_DIMS], count[RT_MAX_DIMS];
  rt_shape sel = {.ndims = 0};   /* the selection's shape: the axes sliced, not indexed */
  for (int d = 0; d < nd; d++) {
    sh_obj *ix = d >= n_ix ? NULL : key->type == &sh_tuple_type ? SH_TUPLE_ITEMS(key)[d] : key;
    int64_t len = t->shape.dims[d], stop;
    if (ix && sh_is_int(ix)) {
      int64_t i = sh_int_value(ix);
      if (i < -len || i >= len) {
        sh_raise(sh_IndexError, "index %lld is out of bounds for axis %d with size %lld", (long long)i, d,
                 (long long)len);
        return -1;
      }
      start[d] = i < 0 ? i + len : i, step[d] = 1, count[d] = 1;
      continue;
    }
    if (!ix) {
      start[d] = 0, step[d] = 1, count[d] = len;
    } else if (ix->type == &sh_slice_type) {
      if (sh_slice_indices(ix, len, &start[d], &stop, &step[d], &count[d]) < 0) return -1;
    } else {
      sh_raise(sh_IndexError, "tfsh's numpy assigns through integers and slices (`:`) only, not %s",
               sh_type_name(ix));
      return -1;
    }
    sel.dims[sel.ndims++] = count[d];
  }
  rt_tensor *v = np_to_tensor(value, t->dtype, true);
  if (!v) return -1;
  /* v's shape must be the selection's trailing axes (a scalar: none of them) */
  int64_t vn = rt_tensor_numel(v);
  bool fits = vn == 1 || v->shape.ndims <= sel.ndims;
  for (int i = 0; vn != 1 && fits && i < v->shape.ndims; i++)
    fits = v->shape.dims[v->shape.ndims - 1 - i] == sel.dims[sel.ndims - 1 - i];
  if (!fits) {
    char vs[96], ss[96];
    sh_raise(sh_ValueError, "could not broadcast input array from shape %s into shape %s",
             shape_text(&v->shape, vs, sizeof vs), shape_text(&sel, ss, sizeof ss));
    rt_tensor_unref(v);
    return -1;
  }
  if (!(t = own_buffer(a))) {
    rt_tensor_unref(v);
    return -1;
  }
  size_t es = rt_dtype_size(t->dtype);
  int64_t stride[RT_MAX_DIMS], idx[RT_MAX_DIMS] = {0}, total = 1;
  stride[nd - 1] = 1;
  for (int d = nd - 2; d >= 0; d--) stride[d] = stride[d + 1] * t->shape.dims[d + 1];
  for (int d = 0; d < nd; d++) total *= count[d];
  char *dst = rt_tensor_data(t);
  const char *src = rt_tensor_data(v);
  for (int64_t k = 0; k < total; k++) {   /* every selected element, in order */
    int64_t off = 0;
    for (int d = 0; d < nd; d++) off += (start[d] + idx[d] * step[d]) * stride[d];
    memcpy(dst + (size_t)off * es, src + (size_t)(vn == 1 ? 0 : k % vn) * es, es);
    for (int d = nd - 1; d >= 0 && ++idx[d] == count[d]; d--) idx[d] = 0;
  }
  rt_tensor_unref(v);
  return 0;
}

static int64_t array_len(sh_obj *self) {
  rt_tensor *t = ((np_array *)self)->t;
  if (t->shape.ndims == 0) {
    sh_raise(sh_TypeError, "len() of unsized object");
    return -1;
  }
  return t->shape.dims[0];
}

typedef struct np_iter {
  sh_obj head;
  sh_obj *arr;
  int64_t i;
} np_iter;

static void iter_destroy(sh_obj *self) { sh_decref(((np_iter *)self)->arr); }
static sh_obj *iter_next(sh_obj *self) {
  np_iter *it = (np_iter *)self;
  rt_tensor *t = ((np_array *)it->arr)->t;
  if (it->i >= t->shape.dims[0]) return NULL;
  sh_obj *k = sh_int(it->i++);
  sh_obj *r = array_getitem(it->arr, k);
  sh_decref(k);
  return r;
}
static sh_obj *iter_self(sh_obj *self) { return sh_incref(self); }
static sh_type np_iter_type = {SH_TYPE_HEAD, .name = "ndarray_iterator", .size = sizeof(np_iter),
                               .destroy = iter_destroy, .next = iter_next, .iter = iter_self};

static sh_obj *array_iter(sh_obj *self) {
  if (((np_array *)self)->t->shape.ndims == 0) return sh_raise(sh_TypeError, "iteration over a 0-d array");
  np_iter *it = sh_new(&np_iter_type);
  it->arr = sh_incref(self);
  return (sh_obj *)it;
}

static int array_truth(sh_obj *self) {
  rt_tensor *t = ((np_array *)self)->t;
  int64_t n = rt_tensor_numel(t);
  if (n == 1 && t->dtype != RT_STRING) return rt_tensor_get_f64(t, 0) != 0;
  if (n == 0) return 0;
  sh_raise(sh_ValueError, "The truth value of an array with more than one element is "
           "ambiguous. Use a.any() or a.all()");
  return -1;
}

/* tolist(): nested Python lists (a scalar for 0-d). */
static sh_obj *tolist_rec(const rt_tensor *t, int axis, int64_t *pos, int kind) {
  if (axis == t->shape.ndims) return t->dtype == RT_STRING ? np_element(t, (*pos)++, kind) : element(t, (*pos)++);
  sh_obj *l = sh_list_new(0);
  for (int64_t i = 0; i < t->shape.dims[axis]; i++) {
    sh_obj *e = tolist_rec(t, axis + 1, pos, kind);
    if (!e) { sh_decref(l); return NULL; }
    sh_list_append_steal(l, e);
  }
  return l;
}

static sh_obj *m_tolist(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  int64_t pos = 0;
  return tolist_rec(((np_array *)self)->t, 0, &pos, ((np_array *)self)->skind);
}

static sh_obj *m_item(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  rt_tensor *t = ((np_array *)self)->t;
  if (rt_tensor_numel(t) != 1)
    return sh_raise(sh_ValueError, "can only convert an array of size 1 to a Python scalar");
  return t->dtype == RT_STRING ? np_element(t, 0, ((np_array *)self)->skind) : element(t, 0);
}

/* Parse a shape from (2, 3), [2, 3] or 2, 3 — with one -1 to infer. */
static int parse_shape(int argc, sh_obj **argv, int64_t numel, rt_shape *s) {
  sh_obj **items = argv;
  int64_t n = argc;
  if (argc == 1 && (argv[0]->type == &sh_tuple_type || argv[0]->type == &sh_list_type)) {
    items = argv[0]->type == &sh_tuple_type ? SH_TUPLE_ITEMS(argv[0]) : SH_LIST_ITEMS(argv[0]);
    n = argv[0]->type == &sh_tuple_type ? SH_TUPLE_N(argv[0]) : SH_LIST_N(argv[0]);
  }
  if (n > RT_MAX_DIMS) return sh_raise(sh_ValueError, "too many dimensions"), -1;
  s->ndims = (int)n;
  int infer = -1;
  int64_t known = 1;
  for (int i = 0; i < n; i++) {
    int64_t d;
    if (sh_as_int(items[i], &d) < 0) return -1;
    if (d == -1) {
      if (infer >= 0) return sh_raise(sh_ValueError, "can only specify one unknown dimension"), -1;
      infer = i;
      d = 1;
    } else if (d < 0) {
      return sh_raise(sh_ValueError, "negative dimensions not allowed"), -1;
    }
    s->dims[i] = d;
    known *= d;
  }
  if (infer >= 0 && known > 0 && numel % known == 0) s->dims[infer] = numel / known;
  if (rt_shape_numel(s) != numel) {
    char buf[128];
    sh_raise(sh_ValueError, "cannot reshape array of size %lld into shape %s", (long long)numel,
             rt_shape_str(s, buf, sizeof buf));
    return -1;
  }
  return 0;
}

static sh_obj *m_reshape(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  rt_tensor *t = ((np_array *)self)->t;
  rt_shape s;
  if (parse_shape(argc, argv, rt_tensor_numel(t), &s) < 0) return NULL;
  return adopt(np_wrap(rt_tensor_wrap(t->dtype, &s, t->buf)), self);
}

static sh_obj *m_flatten(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  rt_tensor *t = ((np_array *)self)->t;
  int64_t n = rt_tensor_numel(t);
  rt_shape s = rt_shape_make(1, &n);
  rt_tensor *c = rt_tensor_copy(t);
  if (c) c->shape = s;
  return adopt(np_wrap(c), self);
}

/* on a numpy scalar, a scalar again (np.float32(1).astype(np.float64) is a numpy.float64) */
static sh_obj *same_kind(sh_obj *self, sh_obj *r) { return np_is_scalar(self) ? scalar_or_array(r) : r; }

static sh_obj *m_copy(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  return same_kind(self, adopt(np_wrap(rt_tensor_copy(((np_array *)self)->t)), self));
}

/* a.tobytes() (and numpy 1.x's a.tostring()): the elements' bytes in C order. */
static sh_obj *m_tobytes(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  if (sh_parse_args("tobytes", argc, argv, kw, "") < 0) return NULL;
  const rt_tensor *t = ((np_array *)self)->t;
  if (rt_dtype_is_str(t->dtype)) return sh_raise(sh_TypeError, "tobytes: tfsh has no raw bytes for a string array");
  return sh_bytes(rt_tensor_data(t), rt_tensor_nbytes(t));
}

static sh_obj *m_astype(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *dt;
  if (sh_parse_args("astype", argc, argv, kw, "dtype", &dt) < 0) return NULL;
  np_array *a = (np_array *)self;
  int kind;
  int32_t width;
  if (np_str_kind_arg(dt, &kind, &width)) return np_str_astype(a, RT_STRING, kind, width);
  rt_dtype t = np_dtype_of(dt);
  if (t != RT_INVALID && t != RT_STRING && a->t->dtype == RT_STRING) return np_str_astype(a, t, NP_STR_OBJECT, 0);
  if (t == RT_INVALID) return sh_raise(sh_TypeError, "data type not understood");
  rt_tensor *x = np_to_tensor(self, t, true);
  if (x == ((np_array *)self)->t) {
    rt_tensor_unref(x);
    x = rt_tensor_copy(((np_array *)self)->t);
  }
  return x ? same_kind(self, np_wrap(x)) : NULL;
}

/* ---- reductions ------------------------------------------------------------------- */

enum { R_SUM, R_MEAN, R_MAX, R_MIN, R_ARGMAX, R_ARGMIN, R_PROD, R_ANY, R_ALL, R_VAR, R_STD };

static rt_dtype reduce_type(const rt_tensor *t, int kind) {
  if (kind == R_ARGMAX || kind == R_ARGMIN) return RT_INT64;
  if (kind == R_MEAN || kind == R_VAR || kind == R_STD) return t->dtype == RT_FLOAT ? RT_FLOAT : RT_DOUBLE;
  if (kind == R_ANY || kind == R_ALL) return RT_BOOL;
  if ((t->dtype == RT_BOOL || t->dtype == RT_INT32 || t->dtype == RT_UINT8) && kind != R_MAX && kind != R_MIN) return RT_INT64;
  return t->dtype;
}

/* Reduce over the axes marked in red (several, or all): each output element gathers the
 * input elements that share its kept coordinates. var/std take ddof; keepdims keeps the
 * reduced axes as 1s. */
static sh_obj *reduce_multi(rt_tensor *t, int kind, const bool *red, int64_t ddof, bool keepdims) {
  int nd = t->shape.ndims;
  rt_shape os = {.ndims = 0};
  int64_t ostride[RT_MAX_DIMS] = {0}, st = 1;
  for (int d = nd - 1; d >= 0; d--)
    if (!red[d]) ostride[d] = st, st *= t->shape.dims[d];
  for (int d = 0; d < nd; d++)
    if (!red[d]) os.dims[os.ndims++] = t->shape.dims[d];
    else if (keepdims) os.dims[os.ndims++] = 1;
  int64_t n = rt_tensor_numel(t), nout = st;
  if (n == 0 && (kind == R_MAX || kind == R_MIN))
    return sh_raise(sh_ValueError, "zero-size array to reduction operation which has no identity");
  double *acc = xcalloc((size_t)nout + 1, sizeof *acc), *best = xcalloc((size_t)nout + 1, sizeof *best);
  int64_t *iacc = xcalloc((size_t)nout + 1, sizeof *iacc), *cnt = xcalloc((size_t)nout + 1, sizeof *cnt);
  for (int64_t o = 0; o < nout; o++) {
    acc[o] = kind == R_PROD || kind == R_ALL ? 1 : 0;
    iacc[o] = kind == R_PROD ? 1 : 0;
  }
  for (int pass = 0; pass < (kind == R_VAR || kind == R_STD ? 2 : 1); pass++) {
    int64_t coord[RT_MAX_DIMS] = {0}, o = 0;
    for (int64_t i = 0; i < n; i++) {
      double v = rt_tensor_get_f64(t, i);
      if (pass == 1) {
        double dv = v - acc[o] / (double)cnt[o];
        best[o] += dv * dv;
      } else {
        int64_t iv = rt_tensor_get_i64(t, i);
        if (cnt[o] == 0 || isnan(v) || (!isnan(best[o]) && (kind == R_MAX ? v > best[o] : v < best[o]))) best[o] = v;
        switch (kind) {
        case R_PROD: acc[o] *= v; iacc[o] *= iv; break;
        case R_ANY: acc[o] = acc[o] || v != 0; break;
        case R_ALL: acc[o] = acc[o] && v != 0; break;
        default: acc[o] += v; iacc[o] += iv; break;
        }
        cnt[o]++;
      }
      for (int d = nd - 1; d >= 0; d--) {   /* the next coordinate, and its output index */
        coord[d]++;
        o += ostride[d];
        if (coord[d] < t->shape.dims[d]) break;
        o -= ostride[d] * coord[d];
        coord[d] = 0;
      }
    }
    if (kind == R_VAR || kind == R_STD)
      for (int64_t k = 0; pass == 0 && k < nout; k++) best[k] = 0;
  }
  rt_tensor *r = rt_tensor_new(reduce_type(t, kind), &os);
  for (int64_t o = 0; o < nout; o++) {
    double c = (double)cnt[o], res;
    switch (kind) {
    case R_MEAN: res = acc[o] / c; break;
    case R_MAX: case R_MIN: res = best[o]; break;
    case R_VAR: res = best[o] / (c - (double)ddof); break;
    case R_STD: res = sqrt(best[o] / (c - (double)ddof)); break;
    default: res = acc[o]; break;
    }
    store(r, o, res, kind == R_SUM || kind == R_PROD ? iacc[o] : (int64_t)res);
  }
  free(acc), free(best), free(iacc), free(cnt);
  return scalar_or_array(np_wrap(r));
}

/* axis as a mask: None all, an int one, a tuple several; -1 with an exception. */
static int axis_mask(const rt_tensor *t, sh_obj *axis_obj, bool *red) {
  int nd = t->shape.ndims;
  for (int d = 0; d < nd; d++) red[d] = !axis_obj || axis_obj == SH_NONE;
  if (!axis_obj || axis_obj == SH_NONE) return 0;
  bool seq = axis_obj->type == &sh_tuple_type || axis_obj->type == &sh_list_type;
  int64_t k = seq ? (axis_obj->type == &sh_tuple_type ? SH_TUPLE_N(axis_obj) : SH_LIST_N(axis_obj)) : 1;
  for (int64_t i = 0; i < k; i++) {
    sh_obj *e = !seq ? axis_obj : axis_obj->type == &sh_tuple_type ? SH_TUPLE_ITEMS(axis_obj)[i] : SH_LIST_ITEMS(axis_obj)[i];
    int64_t a;
    if (sh_as_int(e, &a) < 0) return -1;
    int64_t orig = a;
    if (a < 0) a += nd;
    if (a < 0 || a >= nd) {
      sh_raise(sh_ValueError, "axis %lld is out of bounds for array of dimension %d", (long long)orig, nd);
      return -1;
    }
    if (red[a]) {
      sh_raise(sh_ValueError, "duplicate value in 'axis'");
      return -1;
    }
    red[a] = true;
  }
  return 0;
}

static sh_obj *reduce(rt_tensor *t, int kind, sh_obj *axis_obj) {
  if (axis_obj && (axis_obj->type == &sh_tuple_type || axis_obj->type == &sh_list_type || kind == R_VAR || kind == R_STD)) {
    if (kind == R_ARGMAX || kind == R_ARGMIN) return sh_raise(sh_TypeError, "'tuple' object cannot be interpreted as an integer");
    if (t->dtype == RT_STRING) return sh_raise(sh_TypeError, "cannot reduce a string array");
    bool red[RT_MAX_DIMS];
    if (axis_mask(t, axis_obj, red) < 0) return NULL;
    return reduce_multi(t, kind, red, 0, false);
  }
  int64_t n = rt_tensor_numel(t);
  bool arg = kind == R_ARGMAX || kind == R_ARGMIN;
  rt_dtype out_t = arg ? RT_INT64
                 : kind == R_MEAN ? (t->dtype == RT_FLOAT ? RT_FLOAT : RT_DOUBLE)
                 : kind == R_ANY || kind == R_ALL ? RT_BOOL
                 : (t->dtype == RT_BOOL || t->dtype == RT_INT32 || t->dtype == RT_UINT8) && kind != R_MAX && kind != R_MIN ? RT_INT64
                 : t->dtype;
  if (t->dtype == RT_STRING) return sh_raise(sh_TypeError, "cannot reduce a string array");
  int axis = -1;
  if (axis_obj && axis_obj != SH_NONE) {
    int64_t a;
    if (sh_as_int(axis_obj, &a) < 0) return NULL;
    if (a < 0) a += t->shape.ndims;
    if (a < 0 || a >= t->shape.ndims)
      return sh_raise(sh_ValueError, "axis %lld is out of bounds for array of dimension %d",
                      (long long)sh_int_value(axis_obj), t->shape.ndims);
    axis = (int)a;
  }
  int64_t outer = 1, len = n, inner = 1;
  rt_shape os = rt_shape_scalar();
  if (axis >= 0) {
    len = t->shape.dims[axis];
    for (int i = 0; i < axis; i++) outer *= t->shape.dims[i];
    for (int i = axis + 1; i < t->shape.ndims; i++) inner *= t->shape.dims[i];
    os.ndims = 0;
    for (int i = 0; i < t->shape.ndims; i++)
      if (i != axis) os.dims[os.ndims++] = t->shape.dims[i];
  }
  if (len == 0 && (kind == R_MAX || kind == R_MIN || arg))
    return sh_raise(sh_ValueError, "zero-size array to reduction operation which has no identity");
  rt_tensor *r = rt_tensor_new(out_t, &os);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t in = 0; in < inner; in++) {
      double acc = kind == R_PROD || kind == R_ALL ? 1 : 0, best = 0;
      int64_t besti = 0, iacc = kind == R_PROD ? 1 : 0;
      for (int64_t k = 0; k < len; k++) {
        int64_t idx = (o * len + k) * inner + in;
        double v = rt_tensor_get_f64(t, idx);
        int64_t iv = rt_tensor_get_i64(t, idx);
        if (k == 0 || (kind == R_MAX || kind == R_ARGMAX ? v > best : v < best) || isnan(v)) {
          if (k == 0 || !isnan(best)) { best = v; besti = k; }
        }
        switch (kind) {
        case R_SUM: case R_MEAN: acc += v; iacc += iv; break;
        case R_PROD: acc *= v; iacc *= iv; break;
        case R_ANY: acc = acc || v != 0; break;
        case R_ALL: acc = acc && v != 0; break;
        }
      }
      double res = kind == R_MEAN ? acc / (double)len
                 : kind == R_MAX || kind == R_MIN ? best
                 : arg ? (double)besti : acc;
      int64_t ires = kind == R_MAX || kind == R_MIN ? (int64_t)best
                   : arg ? besti : kind == R_SUM || kind == R_PROD ? iacc : (int64_t)res;
      store(r, o * inner + in, res, ires);
    }
  return scalar_or_array(np_wrap(r));
}

#define REDUCER(fn, KIND)                                                              \
  static sh_obj *fn(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {               \
    sh_obj *axis = NULL;                                                                 \
    if (sh_parse_args(&#fn[2], argc, argv, kw, "|axis **", &axis) < 0) return NULL;     \
    return reduce(((np_array *)self)->t, KIND, axis);                                    \
  }
REDUCER(m_sum, R_SUM)
REDUCER(m_mean, R_MEAN)
REDUCER(m_max, R_MAX)
REDUCER(m_min, R_MIN)
REDUCER(m_argmax, R_ARGMAX)
REDUCER(m_argmin, R_ARGMIN)
REDUCER(m_prod, R_PROD)
REDUCER(m_any, R_ANY)
REDUCER(m_all, R_ALL)

/* std / var: numpy's (ddof, keepdims, axis None / int / tuple) */
static sh_obj *spread(rt_tensor *t, int kind, sh_obj *axis, sh_obj *ddof_o, sh_obj *keep_o) {
  int64_t ddof = 0;
  if (ddof_o && ddof_o != SH_NONE && sh_as_int(ddof_o, &ddof) < 0) return NULL;
  int keep = keep_o && keep_o != SH_NONE ? sh_as_bool(keep_o) : 0;
  if (keep < 0) return NULL;
  if (t->dtype == RT_STRING) return sh_raise(sh_TypeError, "cannot reduce a string array");
  bool red[RT_MAX_DIMS];
  if (axis_mask(t, axis, red) < 0) return NULL;
  return reduce_multi(t, kind, red, ddof, keep);
}

static sh_obj *m_std(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *axis = NULL, *dt = NULL, *out = NULL, *ddof = NULL, *keep = NULL;
  if (sh_parse_args("std", argc, argv, kw, "|axis dtype out ddof keepdims", &axis, &dt, &out, &ddof, &keep) < 0) return NULL;
  return spread(((np_array *)self)->t, R_STD, axis, ddof, keep);
}

static sh_obj *m_var(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *axis = NULL, *dt = NULL, *out = NULL, *ddof = NULL, *keep = NULL;
  if (sh_parse_args("var", argc, argv, kw, "|axis dtype out ddof keepdims", &axis, &dt, &out, &ddof, &keep) < 0) return NULL;
  return spread(((np_array *)self)->t, R_VAR, axis, ddof, keep);
}

/* float(a), int(a), '%f' % a, f"{a:.3f}" for arrays of one element (numpy scalars). */
static sh_obj *m_float(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  rt_tensor *t = ((np_array *)self)->t;
  if (rt_tensor_numel(t) != 1 || t->dtype == RT_STRING)
    return sh_raise(sh_TypeError, "only size-1 arrays can be converted to Python scalars");
  return sh_float(rt_tensor_get_f64(t, 0));
}

static sh_obj *m_int(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  rt_tensor *t = ((np_array *)self)->t;
  if (rt_tensor_numel(t) != 1 || t->dtype == RT_STRING)
    return sh_raise(sh_TypeError, "only size-1 arrays can be converted to Python scalars");
  return sh_int(rt_tensor_get_i64(t, 0));
}

static sh_obj *m_index(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  rt_tensor *t = ((np_array *)self)->t;
  if (rt_tensor_numel(t) != 1 || !(rt_dtype_is_int(t->dtype) || t->dtype == RT_BOOL))
    return sh_raise(sh_TypeError, "only integer scalar arrays can be converted to a scalar index");
  return sh_int(rt_tensor_get_i64(t, 0));
}

/* format(x, spec), "{}".format(x): numpy formats a scalar as the Python number it holds
 * (so "{}" of np.float32(0.1) is 0.10000000149011612, while str() is 0.1), an ndarray
 * with an empty spec as str(a). */
static sh_obj *m_format(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *spec;
  if (sh_parse_args("__format__", argc, argv, kw, "format_spec", &spec) < 0) return NULL;
  const char *fs = sh_as_cstr(spec);
  rt_tensor *t = ((np_array *)self)->t;
  if (!fs) return NULL;
  if (!np_is_scalar(self) && !*fs) return array_str(self);
  if (t->shape.ndims > 0) return sh_raise(sh_TypeError, "unsupported format string passed to numpy.ndarray.__format__");
  sh_obj *n = element(t, 0);
  sh_obj *r = n ? sh_format_spec(n, fs) : NULL;
  sh_decref(n);
  return r;
}

static sh_obj *m_abs(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  rt_tensor *t = ((np_array *)self)->t;
  if (t->dtype == RT_STRING) return sh_raise(sh_TypeError, "bad operand type for abs(): '%s'", sh_type_name(self));
  rt_tensor *r = rt_tensor_new(t->dtype, &t->shape);
  for (int64_t i = 0; r && i < rt_tensor_numel(t); i++) {
    int64_t iv = rt_tensor_get_i64(t, i);
    store(r, i, fabs(rt_tensor_get_f64(t, i)), iv < 0 ? -iv : iv);
  }
  return same_kind(self, np_wrap(r));
}

/* round(x): an int; round(x, n): the same kind rounded half to even at n decimals, as numpy */
static sh_obj *m_round(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *nd = NULL;
  if (sh_parse_args("__round__", argc, argv, kw, "|ndigits", &nd) < 0) return NULL;
  rt_tensor *t = ((np_array *)self)->t;
  if (t->dtype == RT_STRING) return sh_raise(sh_TypeError, "type %s doesn't define __round__ method", sh_type_name(self));
  if (!nd || nd == SH_NONE) {
    if (rt_tensor_numel(t) != 1) return sh_raise(sh_TypeError, "only size-1 arrays can be converted to Python scalars");
    double v = rt_tensor_get_f64(t, 0);
    if (isnan(v)) return sh_raise(sh_ValueError, "cannot convert float NaN to integer");
    if (isinf(v)) return sh_raise(sh_OverflowError, "cannot convert float infinity to integer");
    return sh_int(rt_dtype_is_float(t->dtype) ? (int64_t)rint(v) : rt_tensor_get_i64(t, 0));
  }
  int64_t n;
  if (sh_as_int(nd, &n) < 0) return NULL;
  double p = pow(10.0, (double)n);
  rt_tensor *r = rt_tensor_new(t->dtype, &t->shape);
  for (int64_t i = 0; r && i < rt_tensor_numel(t); i++) {
    double v = rt_tensor_get_f64(t, i), x = rt_dtype_is_float(t->dtype) ? rint(v * p) / p : v;
    store(r, i, x, rt_tensor_get_i64(t, i));
  }
  return same_kind(self, np_wrap(r));
}

static const sh_method array_methods[] = {
  {"__abs__", m_abs, "__abs__()", "abs(a): elementwise absolute value."},
  {"__round__", m_round, "__round__(ndigits=None)", "round(x): an int; round(x, n): rounded to n decimals."},
  {"__format__", m_format, "__format__(format_spec)", "format(x, spec): a scalar as the Python number it holds."},
  {"__float__", m_float, "__float__()", "The value as a Python float (size-1 arrays)."},
  {"__int__", m_int, "__int__()", "The value as a Python int (size-1 arrays)."},
  {"__index__", m_index, "__index__()", "The value as an index (integer size-1 arrays)."},
  {"tolist", m_tolist, "tolist()", "The array as nested Python lists."},
  {"item", m_item, "item()", "The only element as a Python scalar."},
  {"reshape", m_reshape, "reshape(*shape)", "The same data with a new shape."},
  {"flatten", m_flatten, "flatten()", "A 1-d copy."},
  {"ravel", m_flatten, "ravel()", "A 1-d copy."},
  {"copy", m_copy, "copy()", "A copy."},
  {"astype", m_astype, "astype(dtype)", "A copy converted to dtype."},
  {"tobytes", m_tobytes, "tobytes()", "The elements' raw bytes in C order."},
  {"tostring", m_tobytes, "tostring()", "numpy 1.x's name for tobytes()."},
  {"sum", m_sum, "sum(axis=None)", "Sum of elements."},
  {"mean", m_mean, "mean(axis=None)", "Mean of elements."},
  {"std", m_std, "std(axis=None, ddof=0, keepdims=False)", "Standard deviation of elements."},
  {"var", m_var, "var(axis=None, ddof=0, keepdims=False)", "Variance of elements."},
  {"max", m_max, "max(axis=None)", "Largest element."},
  {"min", m_min, "min(axis=None)", "Smallest element."},
  {"argmax", m_argmax, "argmax(axis=None)", "Index of the largest element."},
  {"argmin", m_argmin, "argmin(axis=None)", "Index of the smallest element."},
  {"prod", m_prod, "prod(axis=None)", "Product of elements."},
  {"any", m_any, "any(axis=None)", "Whether any element is true."},
  {"all", m_all, "all(axis=None)", "Whether every element is true."},
  {NULL},
};

static sh_obj *array_getattr(sh_obj *self, const char *name) {
  rt_tensor *t = ((np_array *)self)->t;
  if (!strcmp(name, "shape")) return shape_tuple(&t->shape);
  if (!strcmp(name, "dtype"))
    return t->dtype == RT_STRING ? np_str_dtype(((np_array *)self)->skind, ((np_array *)self)->swidth)
                                 : sh_incref(np_dtype_obj(t->dtype));
  if (!strcmp(name, "ndim")) return sh_int(t->shape.ndims);
  if (!strcmp(name, "size")) return sh_int(rt_tensor_numel(t));
  if (!strcmp(name, "nbytes")) return sh_int((int64_t)rt_tensor_nbytes(t));
  if (!strcmp(name, "T")) {
    if (t->shape.ndims != 2) return sh_incref(self);
    int64_t r = t->shape.dims[0], c = t->shape.dims[1];
    rt_shape s = rt_shape_make(2, (int64_t[]){c, r});
    rt_tensor *x = rt_tensor_new(t->dtype, &s);
    if (!x) return sh_raise(sh_ValueError, "out of memory");
    const rt_str *ss = t->dtype == RT_STRING ? rt_tensor_data(t) : NULL;
    for (int64_t i = 0; i < r; i++)
      for (int64_t j = 0; j < c; j++)
        if (ss) rt_tensor_set_str(x, j * r + i, ss[i * c + j].ptr ? ss[i * c + j].ptr : "", ss[i * c + j].len);
        else store(x, j * r + i, rt_tensor_get_f64(t, i * c + j), rt_tensor_get_i64(t, i * c + j));
    return adopt(np_wrap(x), self);
  }
  return NULL;
}

/* ---- arithmetic ------------------------------------------------------------------- */

/* numpy's result dtype for a binary op (scalars do not upcast arrays: value-based casting). */
static rt_dtype result_type(sh_obj *a, sh_obj *b, int op) {
  rt_dtype ta = np_check(a) ? ((np_array *)a)->t->dtype : RT_INVALID;
  rt_dtype tb = np_check(b) ? ((np_array *)b)->t->dtype : RT_INVALID;
  bool fa = sh_is_float(a), fb = sh_is_float(b);
  rt_dtype r;
  if (ta && tb) {
    if (rt_dtype_is_float(ta) || rt_dtype_is_float(tb))
      r = (ta == RT_DOUBLE || tb == RT_DOUBLE || !rt_dtype_is_float(ta) || !rt_dtype_is_float(tb))
              ? (ta == RT_FLOAT && tb == RT_FLOAT ? RT_FLOAT : RT_DOUBLE) : RT_FLOAT;
    else if (ta == RT_BOOL && tb == RT_BOOL) r = RT_BOOL;
    else if (ta == RT_BOOL || tb == RT_BOOL) r = ta == RT_BOOL ? tb : ta;
    else if (ta == RT_UINT8 && tb == RT_UINT8) r = RT_UINT8;
    else r = ta == RT_INT64 || tb == RT_INT64 ? RT_INT64 : RT_INT32;
    if (rt_dtype_is_float(ta) && rt_dtype_is_float(tb)) r = (ta == RT_DOUBLE || tb == RT_DOUBLE) ? RT_DOUBLE : RT_FLOAT;
  } else {
    rt_dtype t = ta ? ta : tb;
    bool f = ta ? fb : fa;
    bool pybool = (ta ? b : a)->type == &sh_bool_type;   /* np.True_ & True stays bool */
    r = f && !rt_dtype_is_float(t) ? RT_DOUBLE : t == RT_BOOL && !pybool && op != SH_TRUEDIV ? RT_INT64 : t;
  }
  if (op == SH_TRUEDIV && !rt_dtype_is_float(r)) r = RT_DOUBLE;
  return r;
}

static double apply(int op, double x, double y, bool integral) {
  switch (op) {
  case SH_ADD: return x + y;
  case SH_SUB: return x - y;
  case SH_MUL: return x * y;
  case SH_TRUEDIV: return x / y;
  case SH_FLOORDIV: return integral && y == 0 ? 0 : floor(x / y);
  case SH_MOD: {
    if (integral && y == 0) return 0;
    double m = fmod(x, y);
    return m != 0 && ((m < 0) != (y < 0)) ? m + y : m;
  }
  case SH_POW: return pow(x, y);
  default: return NAN;
  }
}

int np_broadcast_shape(const rt_tensor *x, const rt_tensor *y, rt_shape *s) {
  s->ndims = x->shape.ndims > y->shape.ndims ? x->shape.ndims : y->shape.ndims;
  for (int i = 0; i < s->ndims; i++) {
    int ix = i - (s->ndims - x->shape.ndims), iy = i - (s->ndims - y->shape.ndims);
    int64_t dx = ix >= 0 ? x->shape.dims[ix] : 1, dy = iy >= 0 ? y->shape.dims[iy] : 1;
    if (dx != dy && dx != 1 && dy != 1) {
      char b1[128], b2[128];
      sh_raise(sh_ValueError, "operands could not be broadcast together with shapes %s %s",
               rt_shape_str(&x->shape, b1, sizeof b1), rt_shape_str(&y->shape, b2, sizeof b2));
      return -1;
    }
    s->dims[i] = dx == 1 ? dy : dx;
  }
  return 0;
}

void np_broadcast_index(const rt_shape *s, const rt_tensor *x, const rt_tensor *y, int64_t k, int64_t *ix,
                        int64_t *iy) {
  int64_t rem = k, sx = 1, sy = 1;
  *ix = *iy = 0;
  for (int i = s->ndims - 1; i >= 0; i--) {
    int64_t c = rem % s->dims[i];
    rem /= s->dims[i];
    int jx = i - (s->ndims - x->shape.ndims), jy = i - (s->ndims - y->shape.ndims);
    if (jx >= 0) { if (x->shape.dims[jx] != 1) *ix += c * sx; sx *= x->shape.dims[jx]; }
    if (jy >= 0) { if (y->shape.dims[jy] != 1) *iy += c * sy; sy *= y->shape.dims[jy]; }
  }
}

static sh_obj *array_binop(int op, sh_obj *a, sh_obj *b) {
  if (op > SH_POW || op == SH_MATMUL) return SH_NOTIMPL;
  /* Only plain Python numbers and ndarrays: leave Tensors to their own hook. */
  for (sh_obj *o = a;; o = b) {
    if (!np_check(o) && !sh_is_int(o) && !sh_is_float(o) && o->type != &sh_list_type &&
        o->type != &sh_tuple_type)
      return SH_NOTIMPL;
    if (o == b) break;
  }
  rt_tensor *x = np_to_tensor(a, RT_INVALID, true), *y = x ? np_to_tensor(b, RT_INVALID, true) : NULL;
  if (!x || !y) {
    rt_tensor_unref(x);
    return NULL;
  }
  if (x->dtype == RT_STRING || y->dtype == RT_STRING) {
    rt_tensor_unref(x);
    rt_tensor_unref(y);
    return sh_raise(sh_TypeError, "numpy: arithmetic on string arrays is not supported");
  }
  rt_dtype rt = result_type(np_check(a) ? a : np_check(b) ? b : a, np_check(a) ? b : a, op);
  if (!np_check(a) || !np_check(b)) rt = result_type(a, b, op);
  rt_shape s;
  if (np_broadcast_shape(x, y, &s) < 0) {
    rt_tensor_unref(x);
    rt_tensor_unref(y);
    return NULL;
  }
  rt_tensor *r = rt_tensor_new(rt, &s);
  int64_t n = rt_shape_numel(&s);
  bool integral = !rt_dtype_is_float(rt);
  for (int64_t k = 0; k < n; k++) {
    int64_t ix, iy;
    np_broadcast_index(&s, x, y, k, &ix, &iy);
    double v = apply(op, rt_tensor_get_f64(x, ix), rt_tensor_get_f64(y, iy), integral);
    int64_t iv;
    if (integral && (op == SH_ADD || op == SH_SUB || op == SH_MUL)) {
      int64_t p = rt_tensor_get_i64(x, ix), q = rt_tensor_get_i64(y, iy);
      iv = op == SH_ADD ? p + q : op == SH_SUB ? p - q : p * q;
    } else {
      iv = (int64_t)v;
    }
    store(r, k, v, iv);
  }
  rt_tensor_unref(x);
  rt_tensor_unref(y);
  return scalar_or_array(np_wrap(r));
}

static sh_obj *array_unop(int op, sh_obj *a) {
  rt_tensor *t = ((np_array *)a)->t;
  if (op == SH_POS) return sh_incref(a);
  if (op != SH_NEG || t->dtype == RT_STRING || t->dtype == RT_BOOL) return SH_NOTIMPL;
  rt_tensor *r = rt_tensor_new(t->dtype, &t->shape);
  for (int64_t i = 0; i < rt_tensor_numel(t); i++)
    store(r, i, -rt_tensor_get_f64(t, i), -rt_tensor_get_i64(t, i));
  return scalar_or_array(np_wrap(r));
}

/* o, or a uint8 array as int64 (comparisons subtract, which must not wrap); a new reference. */
static sh_obj *widen_u8(sh_obj *o) {
  if (!np_check(o) || ((np_array *)o)->t->dtype != RT_UINT8) return sh_incref(o);
  const rt_tensor *t = ((np_array *)o)->t;
  rt_tensor *x = rt_tensor_new(RT_INT64, &t->shape);
  if (!x) return sh_raise(sh_ValueError, "out of memory");
  for (int64_t i = 0; i < rt_tensor_numel(t); i++) ((int64_t *)rt_tensor_data(x))[i] = rt_tensor_get_i64(t, i);
  return np_wrap(x);
}

static sh_obj *array_compare(int op, sh_obj *a, sh_obj *b) {
  if (!np_check(a) && !np_check(b)) return SH_NOTIMPL;
  if ((np_check(a) && ((np_array *)a)->t->dtype == RT_STRING) || (np_check(b) && ((np_array *)b)->t->dtype == RT_STRING))
    return np_str_compare(op, a, b);
  for (sh_obj *o = a;; o = b) {
    if (!np_check(o) && !sh_is_int(o) && !sh_is_float(o) && o->type != &sh_list_type)
      return SH_NOTIMPL;
    if (o == b) break;
  }
  sh_obj *wa = widen_u8(a), *wb = wa ? widen_u8(b) : NULL;
  sh_obj *diff = wb ? array_binop(SH_SUB, wa, wb) : NULL;
  if (wa) sh_decref(wa);
  if (wb) sh_decref(wb);
  if (!diff || diff == SH_NOTIMPL) return diff;
  rt_tensor *d = ((np_array *)diff)->t;
  rt_tensor *r = rt_tensor_new(RT_BOOL, &d->shape);
  for (int64_t i = 0; i < rt_tensor_numel(d); i++) {
    double v = rt_tensor_get_f64(d, i);
    bool res = op == SH_LT ? v < 0 : op == SH_LE ? v <= 0 : op == SH_EQ ? v == 0
             : op == SH_NE ? v != 0 : op == SH_GT ? v > 0 : v >= 0;
    ((bool *)rt_tensor_data(r))[i] = res;
  }
  sh_decref(diff);
  return scalar_or_array(np_wrap(r));
}

sh_type np_array_type = {
  SH_TYPE_HEAD, .name = "ndarray", .size = sizeof(np_array),
  .help = "A numpy array (values fetched by sess.run, or built with np.array).",
  .methods = array_methods, .destroy = array_destroy, .repr = array_repr, .str = array_str,
  .getattr = array_getattr, .binop = array_binop, .unop = array_unop, .compare = array_compare,
  .getitem = array_getitem, .setitem = array_setitem, .iter = array_iter, .len = array_len, .truth = array_truth,
};

/* ---- numpy scalars ------------------------------------------------------------------ */

/* x[()] is x and x[...] a 0-d array, as in numpy; anything else indexes nothing. */
static sh_obj *scalar_getitem(sh_obj *self, sh_obj *key) {
  if (key->type == &sh_tuple_type && SH_TUPLE_N(key) == 0) return sh_incref(self);
  if (key == SH_ELLIPSIS) return np_wrap(rt_tensor_ref(((np_array *)self)->t));
  return sh_raise(sh_IndexError, "invalid index to scalar variable.");
}

static sh_obj *scalar_iter(sh_obj *self) {
  return sh_raise(sh_TypeError, "'%s' object is not iterable", sh_type_name(self));
}

/* Hashes as the Python number it holds, so np.int64(3) and 3 are the same dict key. */
static int scalar_hash(sh_obj *self, int64_t *out) {
  sh_obj *n = element(((np_array *)self)->t, 0);
  int r = sh_hash(n, out);
  sh_decref(n);
  return r;
}

#define NP_SCALAR(NAME, WHAT)                                                                       \
  {SH_TYPE_HEAD, .name = "numpy." NAME, .size = sizeof(np_array),                                  \
   .help = "A numpy " WHAT " scalar (sess.run's value of a 0-d tensor, an element of an array).",  \
   .methods = array_methods, .destroy = array_destroy, .repr = array_str, .str = array_str,         \
   .getattr = array_getattr, .binop = array_binop, .unop = array_unop, .compare = array_compare,    \
   .getitem = scalar_getitem, .iter = scalar_iter, .truth = array_truth, .hash = scalar_hash}
sh_type np_scalar_type[NP_N_SCALAR_TYPES] = {
  NP_SCALAR("float32", "float32"), NP_SCALAR("float64", "float64"), NP_SCALAR("int32", "int32"),
  NP_SCALAR("int64", "int64"), NP_SCALAR("bool_", "bool"), NP_SCALAR("uint8", "uint8"),
};
#undef NP_SCALAR

sh_type *np_scalar_type_of(rt_dtype t) {
  switch (t) {
  case RT_FLOAT: return &np_scalar_type[0];
  case RT_DOUBLE: return &np_scalar_type[1];
  case RT_INT32: return &np_scalar_type[2];
  case RT_INT64: return &np_scalar_type[3];
  case RT_BOOL: return &np_scalar_type[4];
  case RT_UINT8: return &np_scalar_type[5];
  default: return NULL;
  }
}

/* ---- the numpy module ------------------------------------------------------------- */

sh_obj *np_scalar_ctor(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *v = NULL;
  if (sh_parse_args(((sh_dtype *)self)->name, argc, argv, kw, "|x", &v) < 0) return NULL;
  if (!v) {
    rt_shape s = rt_shape_scalar();
    return scalar_or_array(np_wrap(rt_tensor_new(((sh_dtype *)self)->t, &s)));
  }
  rt_tensor *t = np_to_tensor(v, ((sh_dtype *)self)->t, true);
  return t ? scalar_or_array(np_wrap(t)) : NULL;
}

/* np.array(v, dtype) (copy) and np.asarray(v, dtype) */
static sh_obj *make_array(sh_obj *v, sh_obj *dt, bool copy) {
  int skind;
  int32_t width;
  if (np_str_kind_arg(dt, &skind, &width)) {   /* to strings: as astype does */
    sh_obj *src = np_check(v) ? sh_incref(v) : make_array(v, NULL, false);
    if (!src) return NULL;
    bool same = ((np_array *)src)->t->dtype == RT_STRING && ((np_array *)src)->skind == skind && !width;
    sh_obj *r = same && !copy ? sh_incref(src) : np_str_astype((np_array *)src, RT_STRING, skind, width);
    if (r && !width && !np_check(v) && !np_str_is_object(skind))   /* np.array([1, 22], dtype=str): '<U2' */
      ((np_array *)r)->swidth = np_str_width(((np_array *)r)->t, skind);
    sh_decref(src);
    return r;
  }
  rt_dtype t = np_dtype_of(dt);
  if (dt && dt != SH_NONE && t == RT_INVALID) return sh_raise(sh_TypeError, "data type not understood");
  if (np_check(v) && ((np_array *)v)->t->dtype == RT_STRING && t != RT_INVALID && t != RT_STRING)
    return np_str_astype((np_array *)v, t, NP_STR_OBJECT, 0);
  int kind;
  rt_tensor *x = to_tensor_kind(v, t, true, &kind);
  if (x && np_check(v) && x == ((np_array *)v)->t) {
    if (!copy) return sh_incref(v);
    rt_tensor *c = rt_tensor_copy(x);   /* np.array copies */
    rt_tensor_unref(x);
    x = c;
  }
  if (!x) return NULL;
  if (x->dtype != RT_STRING) return np_wrap(x);
  if (np_check(v)) return np_wrap_str(x, ((np_array *)v)->skind, ((np_array *)v)->swidth);
  return np_wrap_str(x, kind, 0);
}

static sh_obj *f_array(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *v, *dt = NULL;
  if (sh_parse_args("array", argc, argv, kw, "object |dtype **", &v, &dt) < 0) return NULL;
  return make_array(v, dt, true);
}

static sh_obj *f_asarray(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *v, *dt = NULL;
  if (sh_parse_args("asarray", argc, argv, kw, "a |dtype **", &v, &dt) < 0) return NULL;
  return make_array(v, dt, false);
}

static sh_obj *filled(const char *fn, int argc, sh_obj **argv, sh_obj *kw, double value) {
  sh_obj *shape, *dt = NULL;
  if (sh_parse_args(fn, argc, argv, kw, "shape |dtype", &shape, &dt) < 0) return NULL;
  rt_shape s;
  if (sh_is_int(shape)) {
    int64_t d = sh_int_value(shape);
    s = rt_shape_make(1, &d);
  } else {
    sh_obj *t = sh_sequence_to_tuple(shape);
    if (!t) return NULL;
    int64_t n = SH_TUPLE_N(t);
    s.ndims = (int)(n > RT_MAX_DIMS ? RT_MAX_DIMS : n);
    for (int i = 0; i < s.ndims; i++)
      if (sh_as_int(SH_TUPLE_ITEMS(t)[i], &s.dims[i]) < 0) { sh_decref(t); return NULL; }
    sh_decref(t);
  }
  if (!rt_shape_fully_known(&s)) return sh_raise(sh_ValueError, "negative dimensions are not allowed");
  rt_dtype t = dt && dt != SH_NONE ? np_dtype_of(dt) : RT_DOUBLE;
  if (t == RT_INVALID) return sh_raise(sh_TypeError, "data type not understood");
  rt_tensor *x = rt_tensor_new(t, &s);
  for (int64_t i = 0; value != 0 && i < rt_tensor_numel(x); i++) store(x, i, value, (int64_t)value);
  return np_wrap(x);
}

static sh_obj *f_zeros(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) { return filled("zeros", argc, argv, kw, 0); }
static sh_obj *f_ones(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) { return filled("ones", argc, argv, kw, 1); }

/* np.frombuffer(buffer, dtype=float64, count=-1, offset=0): a 1-d array of buffer's bytes. */
static sh_obj *f_frombuffer(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *buf, *dt = NULL, *count_o = NULL, *off_o = NULL;
  if (sh_parse_args("frombuffer", argc, argv, kw, "buffer |dtype count offset", &buf, &dt, &count_o, &off_o) < 0) return NULL;
  if (!sh_is_bytes(buf)) return sh_raise(sh_TypeError, "frombuffer: a bytes-like object is required");
  rt_dtype t = dt && dt != SH_NONE ? np_dtype_of(dt) : RT_DOUBLE;
  size_t w = rt_dtype_size(t);
  if (t == RT_INVALID || rt_dtype_is_str(t) || !w) return sh_raise(sh_TypeError, "frombuffer: data type not understood");
  int64_t count = -1, off = 0, len = sh_bytes_len(buf);
  if (count_o && count_o != SH_NONE && sh_as_int(count_o, &count) < 0) return NULL;
  if (off_o && off_o != SH_NONE && sh_as_int(off_o, &off) < 0) return NULL;
  if (off < 0 || off > len)
    return sh_raise(sh_ValueError, "offset must be non-negative and no greater than buffer length (%lld)",
                    (long long)len);
  int64_t avail = len - off;
  if (count < 0) {
    if (avail % (int64_t)w) return sh_raise(sh_ValueError, "buffer size must be a multiple of element size");
    count = avail / (int64_t)w;
  } else if (count * (int64_t)w > avail) {
    return sh_raise(sh_ValueError, "buffer is smaller than requested size");
  }
  rt_shape s = rt_shape_make(1, &count);
  rt_tensor *x = rt_tensor_new_uninit(t, &s);
  if (!x) return sh_raise(sh_ValueError, "out of memory");
  if (count) memcpy(rt_tensor_data(x), sh_bytes_data(buf) + off, (size_t)count * w);
  return np_wrap(x);
}

static sh_obj *f_arange(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *a = NULL, *b = NULL, *c = NULL, *dt = NULL;
  if (sh_parse_args("arange", argc, argv, kw, "start |stop step dtype", &a, &b, &c, &dt) < 0) return NULL;
  double start = 0, stop, step = 1;
  bool flt = sh_is_float(a) || (b && sh_is_float(b)) || (c && sh_is_float(c));
  if (!b || b == SH_NONE) { if (sh_as_double(a, &stop) < 0) return NULL; }
  else if (sh_as_double(a, &start) < 0 || sh_as_double(b, &stop) < 0) return NULL;
  if (c && c != SH_NONE && sh_as_double(c, &step) < 0) return NULL;
  if (step == 0) return sh_raise(sh_ValueError, "Maximum allowed size exceeded");
  int64_t n = (int64_t)ceil((stop - start) / step);
  if (n < 0) n = 0;
  rt_dtype t = dt && dt != SH_NONE ? np_dtype_of(dt) : flt ? RT_DOUBLE : RT_INT64;
  rt_shape s = rt_shape_make(1, &n);
  rt_tensor *x = rt_tensor_new(t, &s);
  for (int64_t i = 0; i < n; i++) store(x, i, start + (double)i * step, (int64_t)(start + (double)i * step));
  return np_wrap(x);
}

#define NP_REDUCER(fn, KIND, NAME)                                                         \
  static sh_obj *fn(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {                   \
    sh_obj *a, *axis = NULL;                                                                 \
    if (sh_parse_args(NAME, argc, argv, kw, "a |axis **", &a, &axis) < 0) return NULL;      \
    rt_tensor *t = np_to_tensor(a, RT_INVALID, true);                                        \
    if (!t) return NULL;                                                                     \
    sh_obj *r = reduce(t, KIND, axis);                                                       \
    rt_tensor_unref(t);                                                                      \
    return r;                                                                                \
  }
NP_REDUCER(f_sum, R_SUM, "sum")
NP_REDUCER(f_mean, R_MEAN, "mean")

#define NP_SPREAD(fn, KIND, NAME)                                                             \
  static sh_obj *fn(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {                     \
    sh_obj *a, *axis = NULL, *dt = NULL, *out = NULL, *ddof = NULL, *keep = NULL;               \
    if (sh_parse_args(NAME, argc, argv, kw, "a |axis dtype out ddof keepdims", &a, &axis, &dt, &out, &ddof, &keep) < 0) \
      return NULL;                                                                              \
    rt_tensor *t = np_to_tensor(a, RT_INVALID, true);                                           \
    if (!t) return NULL;                                                                        \
    sh_obj *r = spread(t, KIND, axis, ddof, keep);                                              \
    rt_tensor_unref(t);                                                                         \
    return r;                                                                                   \
  }
NP_SPREAD(f_std, R_STD, "std")
NP_SPREAD(f_var, R_VAR, "var")
NP_REDUCER(f_max, R_MAX, "max")
NP_REDUCER(f_min, R_MIN, "min")
NP_REDUCER(f_argmax, R_ARGMAX, "argmax")
NP_REDUCER(f_argmin, R_ARGMIN, "argmin")
NP_REDUCER(f_prod, R_PROD, "prod")
NP_REDUCER(f_all, R_ALL, "all")
NP_REDUCER(f_any, R_ANY, "any")

static sh_obj *unary_math(const char *name, int argc, sh_obj **argv, sh_obj *kw, double (*fn)(double)) {
  sh_obj *a;
  if (sh_parse_args(name, argc, argv, kw, "x", &a) < 0) return NULL;
  rt_tensor *t = np_to_tensor(a, RT_INVALID, true);
  if (!t) return NULL;
  rt_dtype rt = t->dtype == RT_FLOAT ? RT_FLOAT : RT_DOUBLE;
  rt_tensor *r = rt_tensor_new(rt, &t->shape);
  for (int64_t i = 0; i < rt_tensor_numel(t); i++) store(r, i, fn(rt_tensor_get_f64(t, i)), 0);
  rt_tensor_unref(t);
  return scalar_or_array(np_wrap(r));
}
static sh_obj *f_sqrt(sh_obj *s, int c, sh_obj **v, sh_obj *k) { return unary_math("sqrt", c, v, k, sqrt); }
static sh_obj *f_exp(sh_obj *s, int c, sh_obj **v, sh_obj *k) { return unary_math("exp", c, v, k, exp); }
static sh_obj *f_log(sh_obj *s, int c, sh_obj **v, sh_obj *k) { return unary_math("log", c, v, k, log); }
static sh_obj *f_abs(sh_obj *s, int c, sh_obj **v, sh_obj *k) { return unary_math("abs", c, v, k, fabs); }
static sh_obj *f_sin(sh_obj *s, int c, sh_obj **v, sh_obj *k) { return unary_math("sin", c, v, k, sin); }
static sh_obj *f_cos(sh_obj *s, int c, sh_obj **v, sh_obj *k) { return unary_math("cos", c, v, k, cos); }
static sh_obj *f_tanh(sh_obj *s, int c, sh_obj **v, sh_obj *k) { return unary_math("tanh", c, v, k, tanh); }

/* np.round / np.around: x * 10**d rounded half to even, / 10**d, in x's own float type (as
 * numpy does for float32); integer arrays come back unchanged for d >= 0. */
static sh_obj *f_round(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *a, *dec = NULL;
  if (sh_parse_args("round", argc, argv, kw, "a |decimals", &a, &dec) < 0) return NULL;
  int64_t d = 0;
  if (dec && dec != SH_NONE && sh_as_int(dec, &d) < 0) return NULL;
  rt_tensor *t = np_to_tensor(a, RT_INVALID, true);
  if (!t) return NULL;
  rt_tensor *r = rt_tensor_copy(t);
  rt_tensor_unref(t);
  if (!r) return sh_raise(sh_RuntimeError, "out of memory");
  double p = pow(10.0, (double)(d < 0 ? -d : d));
  for (int64_t i = 0, n = rt_tensor_numel(r); i < n; i++) {
    if (r->dtype == RT_FLOAT) {
      float *x = (float *)rt_tensor_data(r) + i, fp = (float)p;
      *x = d >= 0 ? rintf(*x * fp) / fp : rintf(*x / fp) * fp;
    } else if (r->dtype == RT_DOUBLE) {
      double *x = (double *)rt_tensor_data(r) + i;
      *x = d >= 0 ? rint(*x * p) / p : rint(*x / p) * p;
    } else if (d < 0 && (r->dtype == RT_INT32 || r->dtype == RT_INT64)) {
      store(r, i, rint(rt_tensor_get_f64(r, i) / p) * p, (int64_t)(rint(rt_tensor_get_f64(r, i) / p) * p));
    }
  }
  return scalar_or_array(np_wrap(r));
}

static sh_obj *predicate(const char *name, int argc, sh_obj **argv, sh_obj *kw, int (*fn)(double)) {
  sh_obj *a;
  if (sh_parse_args(name, argc, argv, kw, "x", &a) < 0) return NULL;
  rt_tensor *t = np_to_tensor(a, RT_INVALID, true);
  if (!t) return NULL;
  rt_tensor *r = rt_tensor_new(RT_BOOL, &t->shape);
  for (int64_t i = 0; i < rt_tensor_numel(t); i++) ((bool *)rt_tensor_data(r))[i] = fn(rt_tensor_get_f64(t, i));
  rt_tensor_unref(t);
  return scalar_or_array(np_wrap(r));
}
static int is_nan(double d) { return isnan(d); }
static int is_inf(double d) { return isinf(d); }
static int is_finite(double d) { return isfinite(d); }
static sh_obj *f_isnan(sh_obj *s, int c, sh_obj **v, sh_obj *k) { return predicate("isnan", c, v, k, is_nan); }
static sh_obj *f_isinf(sh_obj *s, int c, sh_obj **v, sh_obj *k) { return predicate("isinf", c, v, k, is_inf); }
static sh_obj *f_isfinite(sh_obj *s, int c, sh_obj **v, sh_obj *k) { return predicate("isfinite", c, v, k, is_finite); }

static sh_obj *f_equal(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *a, *b;
  if (sh_parse_args("equal", argc, argv, kw, "x1 x2", &a, &b) < 0) return NULL;
  sh_obj *na = np_check(a) ? sh_incref(a) : np_wrap(np_to_tensor(a, RT_INVALID, true));
  if (!na) return NULL;
  sh_obj *r = array_compare(SH_EQ, na, b);
  sh_decref(na);
  return r;
}

static sh_obj *f_allclose(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *a, *b, *rtol_o = NULL, *atol_o = NULL;
  if (sh_parse_args("allclose", argc, argv, kw, "a b |rtol atol", &a, &b, &rtol_o, &atol_o) < 0) return NULL;
  double rtol = 1e-5, atol = 1e-8;
  if (rtol_o && sh_as_double(rtol_o, &rtol) < 0) return NULL;
  if (atol_o && sh_as_double(atol_o, &atol) < 0) return NULL;
  sh_obj *d = array_binop(SH_SUB, np_check(a) ? a : a, b);
  if (!d || d == SH_NOTIMPL) return d == SH_NOTIMPL ? sh_raise(sh_TypeError, "allclose needs arrays") : NULL;
  rt_tensor *y = np_to_tensor(b, RT_DOUBLE, true);
  rt_tensor *dt = ((np_array *)d)->t;
  bool ok = y != NULL;
  int64_t ny = y ? rt_tensor_numel(y) : 1;
  for (int64_t i = 0; ok && i < rt_tensor_numel(dt); i++)
    ok = fabs(rt_tensor_get_f64(dt, i)) <= atol + rtol * fabs(rt_tensor_get_f64(y, ny == 1 ? 0 : i % ny));
  rt_tensor_unref(y);
  sh_decref(d);
  return sh_bool(ok);
}

static sh_obj *f_reshape(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *a, *shape;
  if (sh_parse_args("reshape", argc, argv, kw, "a newshape", &a, &shape) < 0) return NULL;
  sh_obj *arr = np_check(a) ? sh_incref(a) : np_wrap(np_to_tensor(a, RT_INVALID, true));
  if (!arr) return NULL;
  sh_obj *r = m_reshape(arr, 1, &shape, NULL);
  sh_decref(arr);
  return r;
}

static const sh_method np_funcs[] = {
  {"array", f_array, "array(object, dtype=None)", "An array from nested lists or another array."},
  {"asarray", f_asarray, "asarray(a, dtype=None)", "a as an array (no copy when possible)."},
  {"zeros", f_zeros, "zeros(shape, dtype=float64)", "An array of zeros."},
  {"frombuffer", f_frombuffer, "frombuffer(buffer, dtype=float64, count=-1, offset=0)", "A 1-d array of a bytes object's raw elements."},
  {"ones", f_ones, "ones(shape, dtype=float64)", "An array of ones."},
  {"arange", f_arange, "arange([start,] stop[, step], dtype=None)", "Evenly spaced values."},
  {"sum", f_sum, "sum(a, axis=None)", "Sum of elements."},
  {"mean", f_mean, "mean(a, axis=None)", "Mean of elements."},
  {"std", f_std, "std(a, axis=None, ddof=0, keepdims=False)", "Standard deviation of elements."},
  {"all", f_all, "all(a, axis=None)", "Whether every element is true."},
  {"any", f_any, "any(a, axis=None)", "Whether some element is true."},
  {"var", f_var, "var(a, axis=None, ddof=0, keepdims=False)", "Variance of elements."},
  {"max", f_max, "max(a, axis=None)", "Largest element."},
  {"amax", f_max, "amax(a, axis=None)", "Largest element."},
  {"min", f_min, "min(a, axis=None)", "Smallest element."},
  {"amin", f_min, "amin(a, axis=None)", "Smallest element."},
  {"argmax", f_argmax, "argmax(a, axis=None)", "Index of the largest element."},
  {"argmin", f_argmin, "argmin(a, axis=None)", "Index of the smallest element."},
  {"prod", f_prod, "prod(a, axis=None)", "Product of elements."},
  {"sqrt", f_sqrt, "sqrt(x)", "Elementwise square root."},
  {"sin", f_sin, "sin(x)", "Elementwise sine."},
  {"cos", f_cos, "cos(x)", "Elementwise cosine."},
  {"tanh", f_tanh, "tanh(x)", "Elementwise hyperbolic tangent."},
  {"round", f_round, "round(a, decimals=0)", "Round to the given number of decimals, halves to even."},
  {"around", f_round, "around(a, decimals=0)", "Round to the given number of decimals, halves to even."},
  {"exp", f_exp, "exp(x)", "Elementwise exponential."},
  {"log", f_log, "log(x)", "Elementwise natural logarithm."},
  {"abs", f_abs, "abs(x)", "Elementwise absolute value."},
  {"equal", f_equal, "equal(x1, x2)", "Elementwise x1 == x2."},
  {"isnan", f_isnan, "isnan(x)", "Elementwise: is it NaN?"},
  {"isinf", f_isinf, "isinf(x)", "Elementwise: is it infinite?"},
  {"isfinite", f_isfinite, "isfinite(x)", "Elementwise: is it finite?"},
  {"allclose", f_allclose, "allclose(a, b, rtol=1e-05, atol=1e-08)", "Whether a and b agree within tolerances."},
  {"reshape", f_reshape, "reshape(a, newshape)", "a with a new shape."},
  {NULL},
};

sh_obj *np_module_init(void) {
  sh_obj *m = sh_module_new("numpy");
  sh_module_add_funcs(m, np_funcs);
  const sh_dtype *d;
  for (int i = 0; (d = np_dtype_nth(i)); i++) sh_module_add(m, d->name, sh_incref((sh_obj *)d));
  sh_module_add(m, "float", sh_incref(np_dtype_obj(RT_DOUBLE)));
  sh_module_add(m, "bool_", sh_incref(np_dtype_obj(RT_BOOL)));
  sh_module_add(m, "str_", np_str_dtype(NP_STR_TEXT, 0));
  sh_module_add(m, "object_", np_str_dtype(NP_STR_OBJECT, 0));
  sh_module_add(m, "ndarray", sh_incref((sh_obj *)&np_array_type));
  sh_module_add(m, "newaxis", sh_none());
  sh_module_add(m, "pi", sh_float(M_PI));
  sh_module_add(m, "e", sh_float(M_E));
  sh_module_add(m, "inf", sh_float(INFINITY));
  sh_module_add(m, "nan", sh_float(NAN));
  sh_module_add(m, "__version__", sh_str("1.26.4 (tfsh subset)"));
  sh_obj *r = sh_dict_get_str(sh_modules_dict(), "numpy.random");
  r = r ? sh_incref(r) : np_random_module();
  sh_dict_set_str(sh_modules_dict(), "numpy.random", r);
  sh_module_add(m, "random", r);
  return m;
}

sh_obj *np_result(rt_tensor *t) { return scalar_or_array(np_wrap(t)); }
