#include "runtime/tensor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"

/* ---- dtypes ---------------------------------------------------------------------- */

typedef struct {
  rt_dtype type;
  const char *name;
  size_t size;
} dtype_info;

static const dtype_info dtypes[] = {
  {RT_FLOAT, "float32", 4}, {RT_DOUBLE, "float64", 8}, {RT_INT32, "int32", 4},
  {RT_UINT8, "uint8", 1},
  {RT_INT64, "int64", 8},   {RT_BOOL, "bool", 1},      {RT_STRING, "string", sizeof(rt_str)},
  {RT_RESOURCE, "resource", sizeof(rt_str)},
  {RT_INT16, "int16", 2},   {RT_INT8, "int8", 1},      {RT_COMPLEX64, "complex64", 8},
  {RT_BFLOAT16, "bfloat16", 2}, {RT_UINT16, "uint16", 2}, {RT_HALF, "float16", 2},
};

static const dtype_info *dtype_find(rt_dtype t) {
  for (size_t i = 0; i < sizeof dtypes / sizeof *dtypes; i++)
    if (dtypes[i].type == t) return &dtypes[i];
  return NULL;
}

const char *rt_dtype_name(rt_dtype t) {
  const dtype_info *d = dtype_find(t);
  return d ? d->name : "invalid";
}

size_t rt_dtype_size(rt_dtype t) {
  const dtype_info *d = dtype_find(t);
  return d ? d->size : 0;
}

bool rt_dtype_from_name(const char *name, rt_dtype *out) {
  static const struct { const char *alias; rt_dtype t; } aliases[] = {
    {"float", RT_FLOAT}, {"double", RT_DOUBLE}, {"int", RT_INT64}, {"str", RT_STRING},
    {"bytes", RT_STRING}, {"bool_", RT_BOOL},
    {"half", RT_HALF},
  };
  for (size_t i = 0; i < sizeof dtypes / sizeof *dtypes; i++)
    if (!strcmp(dtypes[i].name, name)) return *out = dtypes[i].type, true;
  for (size_t i = 0; i < sizeof aliases / sizeof *aliases; i++)
    if (!strcmp(aliases[i].alias, name)) return *out = aliases[i].t, true;
  return false;
}

bool rt_dtype_is_float(rt_dtype t) { return t == RT_FLOAT || t == RT_DOUBLE; }
bool rt_dtype_is_int(rt_dtype t) { return t == RT_INT32 || t == RT_INT64 || t == RT_UINT8; }

/* ---- shapes ---------------------------------------------------------------------- */

rt_shape rt_shape_scalar(void) { return (rt_shape){.ndims = 0}; }
rt_shape rt_shape_unknown(void) { return (rt_shape){.ndims = -1}; }

rt_shape rt_shape_make(int ndims, const int64_t *dims) {
  rt_shape s = {.ndims = ndims};
  for (int i = 0; i < ndims && i < RT_MAX_DIMS; i++) s.dims[i] = dims[i];
  return s;
}

int64_t rt_shape_numel(const rt_shape *s) {
  if (s->ndims < 0) return -1;
  int64_t n = 1;
  for (int i = 0; i < s->ndims; i++) {
    if (s->dims[i] < 0) return -1;
    n *= s->dims[i];
  }
  return n;
}

bool rt_shape_fully_known(const rt_shape *s) { return rt_shape_numel(s) >= 0; }

bool rt_shape_equal(const rt_shape *a, const rt_shape *b) {
  if (a->ndims != b->ndims) return false;
  for (int i = 0; i < a->ndims; i++)
    if (a->dims[i] != b->dims[i]) return false;
  return true;
}

bool rt_shape_compatible(const rt_shape *a, const rt_shape *b) {
  if (a->ndims < 0 || b->ndims < 0) return true;
  if (a->ndims != b->ndims) return false;
  for (int i = 0; i < a->ndims; i++)
    if (a->dims[i] >= 0 && b->dims[i] >= 0 && a->dims[i] != b->dims[i]) return false;
  return true;
}

char *rt_shape_str(const rt_shape *s, char *buf, size_t n) {
  if (s->ndims < 0) {
    snprintf(buf, n, "<unknown>");
    return buf;
  }
  size_t off = (size_t)snprintf(buf, n, "(");
  for (int i = 0; i < s->ndims && off < n; i++) {
    const char *sep = i ? ", " : "";
    if (s->dims[i] < 0)
      off += (size_t)snprintf(buf + off, n - off, "%s?", sep);
    else
      off += (size_t)snprintf(buf + off, n - off, "%s%lld", sep, (long long)s->dims[i]);
  }
  if (off < n) snprintf(buf + off, n - off, s->ndims == 1 ? ",)" : ")");
  return buf;
}

/* ---- buffers --------------------------------------------------------------------- */

rt_buffer *rt_buffer_new(size_t nbytes, bool strings) {
  rt_buffer *b = xcalloc(1, sizeof *b);
  /* 64-byte alignment suits AVX-512 kernels; never a zero-size allocation. */
  size_t alloc = (nbytes + 63) & ~(size_t)63;
  b->data = aligned_alloc(64, alloc ? alloc : 64);
  if (!b->data) {
    free(b);
    return NULL;
  }
  if (strings) memset(b->data, 0, nbytes);
  atomic_init(&b->refs, 1);
  b->dev = RT_DEV_CPU;
  b->strings = strings;
  b->nbytes = nbytes;
  return b;
}

rt_buffer *rt_buffer_ref(rt_buffer *b) {
  if (b) atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed);
  return b;
}

void rt_buffer_unref(rt_buffer *b) {
  if (!b || atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) != 1) return;
  if (b->strings) {
    rt_str *s = b->data;
    for (size_t i = 0; i < b->nbytes / sizeof(rt_str); i++) free(s[i].ptr);
  }
  if (b->free_fn)
    b->free_fn(b->data, b->free_arg);
  else
    free(b->data);
  free(b);
}

/* ---- tensors --------------------------------------------------------------------- */

rt_tensor *rt_tensor_wrap(rt_dtype t, const rt_shape *shape, rt_buffer *buf) {
  rt_tensor *x = xcalloc(1, sizeof *x);
  atomic_init(&x->refs, 1);
  x->dtype = t;
  x->shape = *shape;
  x->buf = rt_buffer_ref(buf);
  return x;
}

rt_tensor *rt_tensor_new_uninit(rt_dtype t, const rt_shape *shape) {
  int64_t n = rt_shape_numel(shape);
  if (n < 0 || rt_dtype_size(t) == 0) return NULL;
  rt_buffer *b = rt_buffer_new((size_t)n * rt_dtype_size(t), rt_dtype_is_str(t));
  if (!b) return NULL;
  rt_tensor *x = rt_tensor_wrap(t, shape, b);
  rt_buffer_unref(b);
  return x;
}

rt_tensor *rt_tensor_new(rt_dtype t, const rt_shape *shape) {
  rt_tensor *x = rt_tensor_new_uninit(t, shape);
  if (x && !rt_dtype_is_str(t)) memset(rt_tensor_data(x), 0, x->buf->nbytes);
  return x;
}

rt_tensor *rt_tensor_ref(rt_tensor *t) {
  if (t) atomic_fetch_add_explicit(&t->refs, 1, memory_order_relaxed);
  return t;
}

void rt_tensor_unref(rt_tensor *t) {
  if (!t || atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) != 1) return;
  rt_buffer_unref(t->buf);
  free(t);
}

size_t rt_tensor_nbytes(const rt_tensor *t) {
  int64_t n = rt_tensor_numel(t);
  return n < 0 ? 0 : (size_t)n * rt_dtype_size(t->dtype);
}

int rt_tensor_set_str(rt_tensor *t, int64_t i, const char *s, size_t len) {
  rt_str *e = (rt_str *)rt_tensor_data(t) + i;
  char *p = malloc(len + 1);
  if (!p) return RT_RESOURCE_EXHAUSTED;
  if (len) memcpy(p, s, len);   /* s may be NULL for an empty string (an empty protobuf bytes field) */
  p[len] = '\0';
  free(e->ptr);
  e->ptr = p;
  e->len = len;
  return RT_OK;
}

rt_tensor *rt_tensor_copy(const rt_tensor *t) {
  rt_tensor *c = rt_tensor_new(t->dtype, &t->shape);
  if (!c) return NULL;
  if (rt_dtype_is_str(t->dtype)) {
    const rt_str *s = rt_tensor_data(t);
    for (int64_t i = 0; i < rt_tensor_numel(t); i++)
      if (rt_tensor_set_str(c, i, s[i].ptr ? s[i].ptr : "", s[i].len)) {
        rt_tensor_unref(c);
        return NULL;
      }
  } else {
    memcpy(rt_tensor_data(c), rt_tensor_data(t), rt_tensor_nbytes(t));
  }
  return c;
}

int rt_handle_set(rt_tensor *t, int64_t i, const rt_handle *h) {
  const char *part[4] = {h->device, h->container, h->name, h->kind};
  size_t len[4], n = 0;
  for (int k = 0; k < 4; k++) n += (len[k] = part[k] ? strlen(part[k]) : 0) + 1;
  char *p = malloc(n);
  if (!p) return RT_RESOURCE_EXHAUSTED;
  char *q = p;
  for (int k = 0; k < 4; k++) {
    if (len[k]) memcpy(q, part[k], len[k]);
    q += len[k];
    *q++ = '\0';
  }
  int rc = rt_tensor_set_str(t, i, p, n - 1);   /* the last NUL is the string's own */
  free(p);
  return rc;
}

bool rt_handle_get(const rt_tensor *t, int64_t i, rt_handle *h) {
  if (t->dtype != RT_RESOURCE || i < 0 || i >= rt_tensor_numel(t) || !t->buf) return false;
  const rt_str *s = (const rt_str *)rt_tensor_data(t) + i;
  if (!s->ptr) return false;
  const char *part[4], *p = s->ptr, *end = s->ptr + s->len;
  for (int k = 0; k < 4; k++) {
    if (p > end) return false;
    part[k] = p;
    p += strlen(p) + 1;
  }
  if (p != end + 1) return false;   /* exactly four parts */
  *h = (rt_handle){part[0], part[1], part[2], part[3]};
  return true;
}

#define SCALAR_CTOR(fn, ctype, dt)                 \
  rt_tensor *fn(ctype v) {                         \
    rt_shape s = rt_shape_scalar();                \
    rt_tensor *t = rt_tensor_new(dt, &s);          \
    if (t) *(ctype *)rt_tensor_data(t) = v;        \
    return t;                                      \
  }
SCALAR_CTOR(rt_tensor_scalar_f32, float, RT_FLOAT)
SCALAR_CTOR(rt_tensor_scalar_f64, double, RT_DOUBLE)
SCALAR_CTOR(rt_tensor_scalar_i32, int32_t, RT_INT32)
SCALAR_CTOR(rt_tensor_scalar_i64, int64_t, RT_INT64)
SCALAR_CTOR(rt_tensor_scalar_bool, bool, RT_BOOL)

rt_tensor *rt_tensor_scalar_str(const char *s) {
  rt_shape sh = rt_shape_scalar();
  rt_tensor *t = rt_tensor_new(RT_STRING, &sh);
  if (t && rt_tensor_set_str(t, 0, s, strlen(s))) {
    rt_tensor_unref(t);
    return NULL;
  }
  return t;
}

double rt_tensor_get_f64(const rt_tensor *t, int64_t i) {
  const void *d = rt_tensor_data(t);
  switch (t->dtype) {
  case RT_FLOAT: return ((const float *)d)[i];
  case RT_DOUBLE: return ((const double *)d)[i];
  case RT_INT32: return ((const int32_t *)d)[i];
  case RT_INT64: return (double)((const int64_t *)d)[i];
  case RT_UINT8: return ((const uint8_t *)d)[i];
  case RT_BOOL: return ((const bool *)d)[i];
  default: return 0;
  }
}

int64_t rt_tensor_get_i64(const rt_tensor *t, int64_t i) {
  const void *d = rt_tensor_data(t);
  switch (t->dtype) {
  case RT_FLOAT: return (int64_t)((const float *)d)[i];
  case RT_DOUBLE: return (int64_t)((const double *)d)[i];
  case RT_INT32: return ((const int32_t *)d)[i];
  case RT_INT64: return ((const int64_t *)d)[i];
  case RT_UINT8: return ((const uint8_t *)d)[i];
  case RT_BOOL: return ((const bool *)d)[i];
  default: return 0;
  }
}
