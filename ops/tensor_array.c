/* TensorArrays as TF1 builds them (the TensorArrayV3 family): a per-step resource holding a
 * list of tensors, named by a DT_RESOURCE handle, written and read one element at a time
 * (write keeps a reference to the value and read hands it out: no copy of the array), or
 * all at once (gather, scatter, concat, split: one copy of what moves). Every op but Close
 * takes and gives a float scalar "flow" that orders them, also through while loops, where
 * the flow is the loop variable.
 *
 * The array lives in the step's container of its device (rt_step_container): the executor
 * drops it when the step ends, on success, error or cancellation alike. Gradient arrays
 * (TensorArrayGradV3) sit beside their forward array under "<name>@<source>", share its
 * size and element shape and add up what is written twice to one index. Error messages
 * are TF's words. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "ops/ops_int.h"
#include "runtime/device.h"
#include "runtime/step.h"

enum { E_EMPTY = 0, E_WRITTEN = 1, E_CLEARED = 2 };

typedef struct tarray {
  char name[256];          /* "TensorArray_0": what messages call it */
  rt_dtype dtype;
  rt_shape elem;           /* what is known of the element shape (ndims -1: nothing) */
  bool identical, dynamic, clear_after_read, aggregate, closed;
  int64_t size, cap;
  rt_tensor **v;
  uint8_t *state;          /* per index: E_* */
} tarray;

static atomic_int ta_counter;

static void ta_free(void *p) {
  tarray *a = p;
  for (int64_t i = 0; i < a->size; i++) rt_tensor_unref(a->v[i]);
  free(a->v);
  free(a->state);
  free(a);
}

static int ta_resize(tarray *a, int64_t n) {
  if (n > a->cap) {
    int64_t cap = a->cap ? a->cap : 8;
    while (cap < n) cap *= 2;
    rt_tensor **v = realloc(a->v, (size_t)cap * sizeof *v);
    if (!v) return RT_RESOURCE_EXHAUSTED;
    a->v = v;
    uint8_t *s = realloc(a->state, (size_t)cap);
    if (!s) return RT_RESOURCE_EXHAUSTED;
    a->state = s;
    a->cap = cap;
  }
  for (int64_t i = a->size; i < n; i++) a->v[i] = NULL, a->state[i] = E_EMPTY;
  if (n > a->size) a->size = n;
  return RT_OK;
}

/* The element shape of node attr `attr` (unknown when absent). */
static rt_shape attr_shape(const rt_node *n, const char *attr) {
  const rt_attr_value *v = rt_node_attr(n, attr);
  return v && v->kind == RT_ATTR_SHAPE ? v->shape : rt_shape_unknown();
}

static bool shape_compatible(const rt_shape *want, const rt_shape *s) {
  if (want->ndims < 0) return true;
  if (want->ndims != s->ndims) return false;
  for (int d = 0; d < s->ndims; d++)
    if (want->dims[d] >= 0 && want->dims[d] != s->dims[d]) return false;
  return true;
}

/* Output i: a new resource handle naming (container, name) on this device. */
static int out_handle(rt_kernel_ctx *c, int i, const char *container, const char *name) {
  rt_shape sc = rt_shape_scalar();
  rt_tensor *h = rt_tensor_new(RT_RESOURCE, &sc);
  rt_handle hd = {c->device ? c->device->name : "", container, name, "TensorArray"};
  if (!h || rt_handle_set(h, 0, &hd)) {
    rt_tensor_unref(h);
    return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  }
  rt_tensor_unref(c->outputs[i]);
  c->outputs[i] = h;
  return RT_OK;
}

/* Output i: the flow, passed on from input `in`. */
static int out_flow(rt_kernel_ctx *c, int i, int in) {
  rt_tensor_unref(c->outputs[i]);
  c->outputs[i] = rt_tensor_ref(c->inputs[in]);
  return RT_OK;
}

static rt_resource *new_array(rt_kernel_ctx *c, const char *container, const char *name, tarray *a) {
  rt_resource *r = rt_device_resource(c->device, container, name, true);
  if (!r) {
    ta_free(a);
    rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
    return NULL;
  }
  pthread_mutex_lock(&r->mu);
  if (r->state) {
    ta_free(a);
  } else {
    r->state = a;
    r->state_free = ta_free;
  }
  pthread_mutex_unlock(&r->mu);
  if (c->step) atomic_store(&c->step->has_step_resources, true);
  return r;
}

/* The array input 0 names, locked (NULL with the error set). */
static rt_resource *lock_array(rt_kernel_ctx *c, tarray **out) {
  rt_handle h;
  if (!rt_handle_get(c->inputs[0], 0, &h) || strcmp(h.kind, "TensorArray")) {
    rt_kernel_error(c, RT_INVALID_ARGUMENT, "input 0 is not a TensorArray handle");
    return NULL;
  }
  if (c->device && h.device[0] && strcmp(h.device, c->device->name)) {
    rt_kernel_error(c, RT_INVALID_ARGUMENT, "TensorArray %s lives on %s, not on %s where this op runs", h.name,
                    h.device, c->device->name);
    return NULL;
  }
  rt_resource *r = c->device ? rt_device_resource(c->device, h.container, h.name, false) : NULL;
  if (r) pthread_mutex_lock(&r->mu);
  if (!r || !r->state) {
    if (r) pthread_mutex_unlock(&r->mu);
    rt_kernel_error(c, RT_NOT_FOUND, "Container %s does not exist. (Could not find resource: %s/%s)",
                    h.container, h.container, h.name);
    return NULL;
  }
  *out = r->state;
  if ((*out)->closed) {
    pthread_mutex_unlock(&r->mu);
    rt_kernel_error(c, RT_INVALID_ARGUMENT, "TensorArray %s has already been closed.", (*out)->name);
    return NULL;
  }
  return r;
}

/* ---- element access (array locked) ---------------------------------------------------- */

static int write_one(rt_kernel_ctx *c, tarray *a, int64_t i, rt_tensor *v) {
  char s1[128], s2[128];
  if (v->dtype != a->dtype)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "TensorArray dtype is %s but Op is trying to write dtype %s.",
                           op_tf_type(a->dtype), op_tf_type(v->dtype));
  if (i < 0 || (!a->dynamic && i >= a->size))
    return rt_kernel_error(c, RT_INVALID_ARGUMENT,
                           "TensorArray %s: Tried to write to index %lld but array is not resizeable and size is: %lld",
                           a->name, (long long)i, (long long)a->size);
  if (i >= a->size && ta_resize(a, i + 1)) return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  if (!shape_compatible(&a->elem, &v->shape))
    return rt_kernel_error(c, RT_INVALID_ARGUMENT,
                           "TensorArray %s: Could not write to TensorArray index %lld because the value shape is %s "
                           "which is incompatible with the TensorArray's inferred element shape: %s (consider "
                           "setting infer_shape=False).", a->name, (long long)i, op_shape_tf(&v->shape, s1, sizeof s1),
                           op_shape_tf(&a->elem, s2, sizeof s2));
  if (a->identical) a->elem = v->shape;
  if (a->state[i] == E_CLEARED)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT,
                           "TensorArray %s: Could not write to TensorArray index %lld because it has already been read.",
                           a->name, (long long)i);
  if (a->state[i] == E_WRITTEN && !a->aggregate)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT,
                           "TensorArray %s: Could not write to TensorArray index %lld because it has already been "
                           "written to.", a->name, (long long)i);
  if (a->state[i] == E_WRITTEN) {   /* a gradient array: the writes add up */
    rt_tensor *old = a->v[i];
    if (!rt_shape_equal(&old->shape, &v->shape))
      return rt_kernel_error(c, RT_INVALID_ARGUMENT,
                             "TensorArray %s: Could not aggregate to TensorArray index %lld because the existing "
                             "shape is %s but the new input shape is %s.", a->name, (long long)i,
                             op_shape_tf(&old->shape, s1, sizeof s1), op_shape_tf(&v->shape, s2, sizeof s2));
    rt_tensor *sum = rt_tensor_new_uninit(v->dtype, &v->shape);
    if (!sum) return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
    int64_t n = rt_tensor_numel(v);
    if (v->dtype == RT_FLOAT) {
      float *o = rt_tensor_data(sum);
      const float *x = rt_tensor_data(old), *y = rt_tensor_data(v);
      for (int64_t k = 0; k < n; k++) o[k] = x[k] + y[k];
    } else if (v->dtype == RT_DOUBLE) {
      double *o = rt_tensor_data(sum);
      const double *x = rt_tensor_data(old), *y = rt_tensor_data(v);
      for (int64_t k = 0; k < n; k++) o[k] = x[k] + y[k];
    } else {
      rt_tensor_unref(sum);
      return rt_kernel_error(c, RT_UNIMPLEMENTED, "TensorArray %s: adding up writes of %s is not supported",
                             a->name, op_tf_type(v->dtype));
    }
    rt_tensor_unref(old);
    a->v[i] = sum;
    return RT_OK;
  }
  a->v[i] = rt_tensor_ref(v);
  a->state[i] = E_WRITTEN;
  return RT_OK;
}

/* Element i as a new reference (cleared from the array after the read when it clears). */
static int read_one(rt_kernel_ctx *c, tarray *a, int64_t i, rt_tensor **out) {
  char s1[128];
  *out = NULL;
  if (i < 0 || i >= a->size)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Tried to read from index %lld but array size is: %lld",
                           (long long)i, (long long)a->size);
  if (a->state[i] == E_CLEARED)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT,
                           "TensorArray %s: Could not read index %lld twice because it was cleared after a previous "
                           "read (perhaps try setting clear_after_read = false?).", a->name, (long long)i);
  if (a->state[i] == E_EMPTY) {
    if (!rt_shape_fully_known(&a->elem))
      return rt_kernel_error(c, RT_INVALID_ARGUMENT,
                             "TensorArray %s: Could not read from TensorArray index %lld.  Furthermore, the element "
                             "shape is not fully defined: %s.  It is possible you are working with a resizeable "
                             "TensorArray and stop_gradients is not allowing the gradients to be written.  If you set "
                             "the full element_shape property on the forward TensorArray, the proper all-zeros tensor "
                             "will be returned instead of incurring this error.", a->name, (long long)i,
                             op_shape_tf(&a->elem, s1, sizeof s1));
    *out = rt_tensor_new(a->dtype, &a->elem);
    return *out ? RT_OK : rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  }
  *out = a->v[i];
  if (a->clear_after_read) {
    a->v[i] = NULL;
    a->state[i] = E_CLEARED;
  } else {
    rt_tensor_ref(*out);
  }
  return RT_OK;
}

/* ---- kernels --------------------------------------------------------------------------- */

/* Input i must be a scalar (TF's words: "<what> must be scalar, but had shape: [2]"). */
static int need_scalar(rt_kernel_ctx *c, int i, const char *what) {
  if (c->inputs[i]->shape.ndims == 0) return RT_OK;
  return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s must be scalar, but had shape: %s", what,
                         op_shape_tf(&c->inputs[i]->shape, (char[128]){0}, 128));
}

/* The dtype attr of a reading op against the array's. */
static int check_dtype(rt_kernel_ctx *c, const tarray *a) {
  rt_dtype want = rt_node_type(c->node, "dtype", a->dtype);
  if (want == a->dtype) return RT_OK;
  return rt_kernel_error(c, RT_INVALID_ARGUMENT, "TensorArray dtype is %s but Op requested dtype %s.",
                         op_tf_type(a->dtype), op_tf_type(want));
}

static int create_kernel(rt_kernel_ctx *c) {
  if (need_scalar(c, 0, "TensorArray size")) return c->st->code;
  int64_t size = rt_tensor_get_i64(c->inputs[0], 0);
  if (size < 0) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Size should be >= 0.");
  tarray *a = xcalloc(1, sizeof *a);
  const char *base = rt_node_string(c->node, "tensor_array_name", "");
  snprintf(a->name, sizeof a->name, "%s_%d", base[0] ? base : c->node->name, atomic_fetch_add(&ta_counter, 1));
  a->dtype = rt_node_type(c->node, "dtype", RT_FLOAT);
  a->elem = attr_shape(c->node, "element_shape");
  a->identical = rt_node_bool(c->node, "identical_element_shapes", false);
  a->dynamic = rt_node_bool(c->node, "dynamic_size", false);
  a->clear_after_read = rt_node_bool(c->node, "clear_after_read", true);
  if (ta_resize(a, size)) {
    ta_free(a);
    return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  }
  char container[64], name[300];
  rt_step_container(c->step, container, sizeof container);
  snprintf(name, sizeof name, "%s", a->name);
  if (!new_array(c, container, name, a)) return c->st->code;
  int rc = out_handle(c, 0, container, name);
  if (rc) return rc;
  rt_shape sc = rt_shape_scalar();
  rt_tensor *f = rt_kernel_output(c, 1, RT_FLOAT, &sc);
  if (!f) return c->st->code;
  *(float *)rt_tensor_data(f) = 0.0f;
  return RT_OK;
}

static int grad_kernel(rt_kernel_ctx *c) {
  tarray *a;
  rt_resource *r = lock_array(c, &a);
  if (!r) return c->st->code;
  rt_handle h;
  rt_handle_get(c->inputs[0], 0, &h);
  char container[256], name[300];
  snprintf(container, sizeof container, "%s", h.container);
  snprintf(name, sizeof name, "%s@%s", a->name, rt_node_string(c->node, "source", ""));
  rt_resource *have = rt_device_resource(c->device, container, name, false);
  if (have) {
    pthread_mutex_lock(&have->mu);
    if (!have->state) have = (pthread_mutex_unlock(&have->mu), NULL);
  }
  if (have) {
    pthread_mutex_unlock(&have->mu);   /* made by an earlier call (each iteration of a gradient loop asks) */
    pthread_mutex_unlock(&r->mu);
    int rc = out_handle(c, 0, container, name);
    return rc ? rc : out_flow(c, 1, 1);
  }
  tarray *g = xcalloc(1, sizeof *g);
  snprintf(g->name, sizeof g->name, "%s", name);
  g->dtype = a->dtype;
  g->elem = a->elem;
  g->identical = a->identical;
  g->clear_after_read = true;
  g->aggregate = true;
  int rc = ta_resize(g, a->size);
  pthread_mutex_unlock(&r->mu);
  if (rc) {
    ta_free(g);
    return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  }
  if (!new_array(c, container, name, g)) return c->st->code;   /* one made meanwhile is kept */
  rc = out_handle(c, 0, container, name);
  return rc ? rc : out_flow(c, 1, 1);
}

static int write_kernel(rt_kernel_ctx *c) {
  if (need_scalar(c, 1, "TensorArray index")) return c->st->code;
  tarray *a;
  rt_resource *r = lock_array(c, &a);
  if (!r) return c->st->code;
  int rc = write_one(c, a, rt_tensor_get_i64(c->inputs[1], 0), c->inputs[2]);
  pthread_mutex_unlock(&r->mu);
  return rc ? rc : out_flow(c, 0, 3);
}

static int read_kernel(rt_kernel_ctx *c) {
  if (need_scalar(c, 1, "TensorArray index")) return c->st->code;
  tarray *a;
  rt_resource *r = lock_array(c, &a);
  if (!r) return c->st->code;
  rt_tensor *v = NULL;
  int rc = check_dtype(c, a);
  if (!rc) rc = read_one(c, a, rt_tensor_get_i64(c->inputs[1], 0), &v);
  pthread_mutex_unlock(&r->mu);
  if (rc) return rc;
  rt_tensor_unref(c->outputs[0]);
  c->outputs[0] = v;
  return RT_OK;
}

/* Stack tensors v[0, n) (same shape `row`) into output 0: [n] + row. */
static int stack_into(rt_kernel_ctx *c, rt_tensor **v, int64_t n, const rt_shape *row) {
  rt_shape s = {.ndims = row->ndims + 1};
  s.dims[0] = n;
  for (int d = 0; d < row->ndims; d++) s.dims[d + 1] = row->dims[d];
  rt_tensor *o = rt_kernel_output(c, 0, v && n ? v[0]->dtype : rt_node_type(c->node, "dtype", RT_FLOAT), &s);
  if (!o) return c->st->code;
  size_t bytes = (size_t)rt_shape_numel(row) * rt_dtype_size(o->dtype);
  for (int64_t i = 0; i < n; i++) memcpy((char *)rt_tensor_data(o) + (size_t)i * bytes, rt_tensor_data(v[i]), bytes);
  return RT_OK;
}

static int gather_kernel(rt_kernel_ctx *c) {
  const rt_tensor *idx = c->inputs[1];
  if (idx->shape.ndims != 1)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "indices must be a vector, but had shape: %s",
                           op_shape_tf(&idx->shape, (char[64]){0}, 64));
  if (rt_node_type(c->node, "dtype", RT_FLOAT) == RT_STRING)
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "TensorArrayGatherV3 of strings is not supported");
  int64_t n = rt_tensor_numel(idx);
  tarray *a;
  rt_resource *r = lock_array(c, &a);
  if (!r) return c->st->code;
  int rc = check_dtype(c, a);
  if (rc) {
    pthread_mutex_unlock(&r->mu);
    return rc;
  }
  if (n == 0) {
    rt_shape e = attr_shape(c->node, "element_shape");
    if (!rt_shape_fully_known(&e)) e = a->elem;
    pthread_mutex_unlock(&r->mu);
    if (!rt_shape_fully_known(&e))
      return rt_kernel_error(c, RT_UNIMPLEMENTED,
                             "TensorArray has size zero, but element shape %s is not fully defined. Currently only "
                             "static shapes are supported when packing zero-size TensorArrays.",
                             op_shape_tf(&e, (char[128]){0}, 128));
    return stack_into(c, NULL, 0, &e);
  }
  rt_tensor **v = xcalloc((size_t)n, sizeof *v);
  for (int64_t i = 0; !rc && i < n; i++) rc = read_one(c, a, rt_tensor_get_i64(idx, i), &v[i]);
  pthread_mutex_unlock(&r->mu);
  for (int64_t i = 1; !rc && i < n; i++)
    if (!rt_shape_equal(&v[0]->shape, &v[i]->shape)) {
      char s1[128], s2[128];
      rc = rt_kernel_error(c, RT_INVALID_ARGUMENT,
                           "TensorArray has inconsistent shapes.  Index 0 has shape: %s but index %lld has shape: %s",
                           op_shape_tf(&v[0]->shape, s1, sizeof s1), (long long)i, op_shape_tf(&v[i]->shape, s2, sizeof s2));
    }
  if (!rc) rc = stack_into(c, v, n, &v[0]->shape);
  for (int64_t i = 0; i < n; i++) rt_tensor_unref(v[i]);
  free(v);
  return rc;
}

/* Rows [start, start + len) of t along axis 0, as a tensor of its own. */
static rt_tensor *rows_of(const rt_tensor *t, int64_t start, int64_t len, bool drop_axis) {
  rt_shape s = t->shape;
  if (drop_axis) {
    s.ndims--;
    for (int d = 0; d < s.ndims; d++) s.dims[d] = t->shape.dims[d + 1];
  } else {
    s.dims[0] = len;
  }
  rt_tensor *o = rt_tensor_new_uninit(t->dtype, &s);
  if (!o) return NULL;
  int64_t row = t->shape.dims[0] ? rt_tensor_numel(t) / t->shape.dims[0] : 0;
  size_t es = rt_dtype_size(t->dtype);
  if (row > 0 && len > 0) memcpy(rt_tensor_data(o), (const char *)rt_tensor_data(t) + (size_t)(start * row) * es, (size_t)(row * len) * es);
  return o;
}

static int scatter_kernel(rt_kernel_ctx *c) {
  const rt_tensor *idx = c->inputs[1], *val = c->inputs[2];
  if (idx->shape.ndims != 1)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "indices must be a vector, but had shape: %s",
                           op_shape_tf(&idx->shape, (char[64]){0}, 64));
  int64_t n = rt_tensor_numel(idx);
  if (val->shape.ndims < 1 || val->shape.dims[0] != n)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Expected len(indices) == values.shape[0], but saw: %lld vs. %lld",
                           (long long)n, (long long)(val->shape.ndims < 1 ? 0 : val->shape.dims[0]));
  if (val->dtype == RT_STRING) return rt_kernel_error(c, RT_UNIMPLEMENTED, "TensorArrayScatterV3 of strings is not supported");
  tarray *a;
  rt_resource *r = lock_array(c, &a);
  if (!r) return c->st->code;
  int rc = RT_OK;
  for (int64_t i = 0; !rc && i < n; i++) {
    rt_tensor *row = rows_of(val, i, 1, true);
    rc = row ? write_one(c, a, rt_tensor_get_i64(idx, i), row) : rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
    rt_tensor_unref(row);
  }
  pthread_mutex_unlock(&r->mu);
  return rc ? rc : out_flow(c, 0, 3);
}

static int concat_kernel(rt_kernel_ctx *c) {
  if (rt_node_type(c->node, "dtype", RT_FLOAT) == RT_STRING)
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "TensorArrayConcatV3 of strings is not supported");
  tarray *a;
  rt_resource *r = lock_array(c, &a);
  if (!r) return c->st->code;
  int64_t n = a->size;
  rt_tensor **v = xcalloc((size_t)n + 1, sizeof *v);
  int rc = check_dtype(c, a);
  for (int64_t i = 0; !rc && i < n; i++) rc = read_one(c, a, i, &v[i]);
  pthread_mutex_unlock(&r->mu);
  char s1[128], s2[128];
  rt_shape rest = attr_shape(c->node, "element_shape_except0");
  int64_t total = 0;
  for (int64_t i = 0; !rc && i < n; i++) {
    if (v[i]->shape.ndims < 1) {
      rc = rt_kernel_error(c, RT_INVALID_ARGUMENT, "Concat saw a scalar shape at index %lld but requires at least vectors.",
                           (long long)i);
      break;
    }
    rt_shape ri = {.ndims = v[i]->shape.ndims - 1};
    for (int d = 0; d < ri.ndims; d++) ri.dims[d] = v[i]->shape.dims[d + 1];
    if (i == 0) {
      rest = ri;
    } else if (!rt_shape_equal(&rest, &ri)) {
      rc = rt_kernel_error(c, RT_INVALID_ARGUMENT,
                           "TensorArray has inconsistent shapes.  Index 0 has (exclusive of the first dimension) "
                           "shape: %s but index %lld has (exclusive of the first dimension) shape: %s",
                           op_shape_tf(&rest, s1, sizeof s1), (long long)i, op_shape_tf(&ri, s2, sizeof s2));
    }
    total += v[i]->shape.dims[0];
  }
  if (!rc && n == 0 && !rt_shape_fully_known(&rest))
    rc = rt_kernel_error(c, RT_UNIMPLEMENTED,
                         "TensorArray has size zero, but element_shape_except0 %s is not fully defined. Currently "
                         "only static shapes are supported when concatenating zero-size TensorArrays.",
                         op_shape_tf(&rest, s1, sizeof s1));
  if (!rc) {
    rt_shape s = {.ndims = rest.ndims + 1};
    s.dims[0] = total;
    for (int d = 0; d < rest.ndims; d++) s.dims[d + 1] = rest.dims[d];
    rt_shape ls = rt_shape_make(1, (int64_t[]){n});
    rt_tensor *o = rt_kernel_output(c, 0, rt_node_type(c->node, "dtype", RT_FLOAT), &s);
    rt_tensor *l = o ? rt_kernel_output(c, 1, RT_INT64, &ls) : NULL;
    if (!l) rc = c->st->code;
    size_t off = 0;
    for (int64_t i = 0; !rc && i < n; i++) {
      size_t b = rt_tensor_nbytes(v[i]);
      if (b) memcpy((char *)rt_tensor_data(o) + off, rt_tensor_data(v[i]), b);
      off += b;
      ((int64_t *)rt_tensor_data(l))[i] = v[i]->shape.dims[0];
    }
  }
  for (int64_t i = 0; i < n; i++) rt_tensor_unref(v[i]);
  free(v);
  return rc;
}

static int split_kernel(rt_kernel_ctx *c) {
  const rt_tensor *val = c->inputs[1], *len = c->inputs[2];
  char s1[128];
  if (val->shape.ndims < 1)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Expected value to be at least a vector, but received shape: %s",
                           op_shape_tf(&val->shape, s1, sizeof s1));
  if (len->shape.ndims != 1)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Expected lengths to be a vector, received shape: %s",
                           op_shape_tf(&len->shape, s1, sizeof s1));
  if (val->dtype == RT_STRING) return rt_kernel_error(c, RT_UNIMPLEMENTED, "TensorArraySplitV3 of strings is not supported");
  int64_t n = rt_tensor_numel(len), sum = 0;
  for (int64_t i = 0; i < n; i++) {
    int64_t l = rt_tensor_get_i64(len, i);
    if (l < 0) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Expected lengths to be non-negative, but saw: %lld", (long long)l);
    sum += l;
  }
  if (sum != val->shape.dims[0])
    return rt_kernel_error(c, RT_INVALID_ARGUMENT,
                           "Expected sum of lengths to be equal to values.shape[0], but sum of lengths is %lld and "
                           "value's shape is: %s", (long long)sum, op_shape_tf(&val->shape, s1, sizeof s1));
  tarray *a;
  rt_resource *r = lock_array(c, &a);
  if (!r) return c->st->code;
  int rc = RT_OK;
  if (!a->dynamic && a->size != n)
    rc = rt_kernel_error(c, RT_INVALID_ARGUMENT,
                         "TensorArray's size is not equal to the size of lengths (%lld vs. %lld), and the "
                         "TensorArray is not marked as dynamically resizeable", (long long)a->size, (long long)n);
  int64_t start = 0;
  for (int64_t i = 0; !rc && i < n; i++) {
    int64_t l = rt_tensor_get_i64(len, i);
    rt_tensor *piece = rows_of(val, start, l, false);
    rc = piece ? write_one(c, a, i, piece) : rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
    rt_tensor_unref(piece);
    start += l;
  }
  pthread_mutex_unlock(&r->mu);
  return rc ? rc : out_flow(c, 0, 3);
}

static int size_kernel(rt_kernel_ctx *c) {
  tarray *a;
  rt_resource *r = lock_array(c, &a);
  if (!r) return c->st->code;
  int64_t n = a->size;
  pthread_mutex_unlock(&r->mu);
  rt_shape sc = rt_shape_scalar();
  rt_tensor *o = rt_kernel_output(c, 0, RT_INT32, &sc);
  if (!o) return c->st->code;
  *(int32_t *)rt_tensor_data(o) = (int32_t)n;
  return RT_OK;
}

static int close_kernel(rt_kernel_ctx *c) {
  tarray *a;
  rt_resource *r = lock_array(c, &a);
  if (!r) return c->st->code;
  for (int64_t i = 0; i < a->size; i++) {
    rt_tensor_unref(a->v[i]);
    a->v[i] = NULL;
  }
  a->closed = true;
  pthread_mutex_unlock(&r->mu);
  return RT_OK;
}

/* ---- shapes ---------------------------------------------------------------------------- */

static int scalar_outputs(rt_shape_ctx *c) {
  for (int i = 0; i < c->n_outputs; i++) c->out_shapes[i] = rt_shape_scalar();
  return RT_OK;
}

/* [?] + the attr's shape (unknown when its rank is). */
static rt_shape prepend_unknown(const rt_node *n, const char *attr) {
  rt_shape e = attr_shape(n, attr);
  if (e.ndims < 0 || e.ndims >= RT_MAX_DIMS) return rt_shape_unknown();
  rt_shape s = {.ndims = e.ndims + 1};
  s.dims[0] = -1;
  for (int d = 0; d < e.ndims; d++) s.dims[d + 1] = e.dims[d];
  return s;
}

static int gather_shape(rt_shape_ctx *c) {
  c->out_shapes[0] = prepend_unknown(c->node, "element_shape");
  return RT_OK;
}

static int concat_shape(rt_shape_ctx *c) {
  c->out_shapes[0] = prepend_unknown(c->node, "element_shape_except0");
  c->out_shapes[1] = rt_shape_make(1, (int64_t[]){-1});
  return RT_OK;
}

/* ---- gradients (TF's tensor_array_grad.py) --------------------------------------------- */

/* The gradient source: the first part of the scope ("gradients", "gradients_1"). */
static void grad_source(const rt_grad_ctx *c, char *buf, size_t n) {
  const char *s = c->scope ? c->scope : "";
  size_t k = strcspn(s, "/");
  snprintf(buf, n, "%.*s", (int)k, s);
}

static void set_source(rt_node *n, const void *arg) { rt_node_set_string(n, "source", arg); }

typedef struct { rt_dtype t; const char *attr; } dt_arg;
static void set_dt(rt_node *n, const void *arg) {
  const dt_arg *a = arg;
  rt_node_set_type(n, a->attr, a->t);
}

static char *out1(const char *node) {
  size_t n = strlen(node) + 3;
  char *s = xmalloc(n);
  snprintf(s, n, "%s:1", node);
  return s;
}

/* One gradient builder as data: on the gradient array of the forward handle (its flow the
 * forward input flow_in, or dy when flow_in < 0), op takes the gradient handle, the `mid`
 * tensors (forward input i; MID_DY: dy; MID_OUT1: the forward output 1) and the gradient
 * array's flow; its output is dx[out], and dx[pass] is dy (the flow passes) unless pass < 0.
 * The dtype attr `from` of the forward op is the new op's attr `to`. */
enum { MID_DY = -1, MID_OUT1 = -2 };
typedef struct grad_spec {
  const char *op, *base, *from, *to;
  int flow_in, n_mid, mid[2], out, pass;
} grad_spec;

static const grad_spec grad_specs[] = {
  {"TensorArrayWriteV3", "TensorArrayWrite/TensorArrayWriteV3", "dtype", "T", 2, 2, {1, MID_DY}, 2, -1},   /* Read */
  {"TensorArrayReadV3", "TensorArrayReadV3", "T", "dtype", -1, 1, {1}, 2, 3},                               /* Write */
  {"TensorArrayScatterV3", "TensorArrayScatter/TensorArrayScatterV3", "dtype", "T", 2, 2, {1, MID_DY}, 2, -1},  /* Gather */
  {"TensorArrayGatherV3", "TensorArrayGatherV3", "T", "dtype", -1, 1, {1}, 2, 3},                           /* Scatter */
  {"TensorArraySplitV3", "TensorArraySplit/TensorArraySplitV3", "dtype", "T", 1, 2, {MID_DY, MID_OUT1}, 1, -1},  /* Concat */
  {"TensorArrayConcatV3", "TensorArrayConcatV3", "T", "dtype", -1, 0, {0}, 1, 3},                           /* Split */
};

static int ta_grad(rt_grad_ctx *c, const grad_spec *s) {
  if (!c->dy[0]) return RT_OK;
  char src[128];
  grad_source(c, src, sizeof src);
  const char *gin[] = {c->node->inputs[0], s->flow_in < 0 ? c->dy[0] : c->node->inputs[s->flow_in]};
  char *g = op_grad_node(c, "TensorArrayGradV3", "TensorArrayGrad/TensorArrayGradV3", 2, gin, set_source, src);
  if (!g) return c->st->code;
  char *gf = out1(g), *o1 = out1(c->node->name);
  const char *in[4] = {g};
  int n = 1;
  for (int i = 0; i < s->n_mid; i++)
    in[n++] = s->mid[i] == MID_DY ? c->dy[0] : s->mid[i] == MID_OUT1 ? o1 : c->node->inputs[s->mid[i]];
  in[n++] = gf;
  dt_arg d = {rt_node_type(c->node, s->from, RT_FLOAT), s->to};
  c->dx[s->out] = op_grad_node(c, s->op, s->base, n, in, set_dt, &d);
  free(g);
  free(gf);
  free(o1);
  if (!c->dx[s->out]) return c->st->code;
  if (s->pass >= 0) c->dx[s->pass] = xstrdup(c->dy[0]);
  return RT_OK;
}

static int read_grad(rt_grad_ctx *c) { return ta_grad(c, &grad_specs[0]); }
static int write_grad(rt_grad_ctx *c) { return ta_grad(c, &grad_specs[1]); }
static int gather_grad(rt_grad_ctx *c) { return ta_grad(c, &grad_specs[2]); }
static int scatter_grad(rt_grad_ctx *c) { return ta_grad(c, &grad_specs[3]); }
static int concat_grad(rt_grad_ctx *c) { return ta_grad(c, &grad_specs[4]); }
static int split_grad(rt_grad_ctx *c) { return ta_grad(c, &grad_specs[5]); }

/* ---- the table ------------------------------------------------------------------------- */

#define TA_FLAGS RT_OP_STATEFUL

static const rt_op_def ta_ops[] = {
  {.name = "TensorArrayV3", .inputs = "size: int32", .outputs = "handle: resource, flow: float",
   .attrs = "dtype: type, element_shape: shape = ?, dynamic_size: bool = false, clear_after_read: bool = true, "
            "identical_element_shapes: bool = false, tensor_array_name: string = \"\"",
   .help = "A TensorArray of `size` elements (growing when dynamic_size), kept for this step.",
   .shape = scalar_outputs, .kernel = {[RT_DEV_CPU] = create_kernel}, .grad = op_no_grad, .flags = TA_FLAGS},
  {.name = "TensorArrayGradV3", .inputs = "handle: resource, flow_in: float",
   .outputs = "grad_handle: resource, flow_out: float", .attrs = "source: string",
   .help = "The gradient TensorArray of a TensorArray for one gradient source (made once, then shared).",
   .shape = scalar_outputs, .kernel = {[RT_DEV_CPU] = grad_kernel}, .grad = op_no_grad, .flags = TA_FLAGS},
  {.name = "TensorArrayWriteV3", .inputs = "handle: resource, index: int32, value: T, flow_in: float",
   .outputs = "flow_out: float", .attrs = "T: type",
   .help = "Write value at index of a TensorArray (kept, not copied).",
   .shape = scalar_outputs, .kernel = {[RT_DEV_CPU] = write_kernel}, .grad = write_grad, .flags = TA_FLAGS},
  {.name = "TensorArrayReadV3", .inputs = "handle: resource, index: int32, flow_in: float",
   .outputs = "value: dtype", .attrs = "dtype: type",
   .help = "Read the element at index of a TensorArray.",
   .shape = NULL, .kernel = {[RT_DEV_CPU] = read_kernel}, .grad = read_grad, .flags = TA_FLAGS},
  {.name = "TensorArrayGatherV3", .inputs = "handle: resource, indices: int32, flow_in: float",
   .outputs = "value: dtype", .attrs = "dtype: type, element_shape: shape = ?",
   .help = "The elements at indices of a TensorArray, stacked.",
   .shape = gather_shape, .kernel = {[RT_DEV_CPU] = gather_kernel}, .grad = gather_grad, .flags = TA_FLAGS},
  {.name = "TensorArrayScatterV3", .inputs = "handle: resource, indices: int32, value: T, flow_in: float",
   .outputs = "flow_out: float", .attrs = "T: type",
   .help = "Write the rows of value at indices of a TensorArray.",
   .shape = scalar_outputs, .kernel = {[RT_DEV_CPU] = scatter_kernel}, .grad = scatter_grad, .flags = TA_FLAGS},
  {.name = "TensorArrayConcatV3", .inputs = "handle: resource, flow_in: float",
   .outputs = "value: dtype, lengths: int64", .attrs = "dtype: type, element_shape_except0: shape = ?",
   .help = "Every element of a TensorArray concatenated along axis 0, and their lengths.",
   .shape = concat_shape, .kernel = {[RT_DEV_CPU] = concat_kernel}, .grad = concat_grad, .flags = TA_FLAGS},
  {.name = "TensorArraySplitV3", .inputs = "handle: resource, value: T, lengths: int64, flow_in: float",
   .outputs = "flow_out: float", .attrs = "T: type",
   .help = "Split value along axis 0 into pieces of the given lengths, one per element of a TensorArray.",
   .shape = scalar_outputs, .kernel = {[RT_DEV_CPU] = split_kernel}, .grad = split_grad, .flags = TA_FLAGS},
  {.name = "TensorArraySizeV3", .inputs = "handle: resource, flow_in: float", .outputs = "size: int32",
   .help = "The size of a TensorArray.",
   .shape = scalar_outputs, .kernel = {[RT_DEV_CPU] = size_kernel}, .grad = op_no_grad, .flags = TA_FLAGS},
  {.name = "TensorArrayCloseV3", .inputs = "handle: resource",
   .help = "Close a TensorArray: its elements go, and later uses fail.",
   .kernel = {[RT_DEV_CPU] = close_kernel}, .grad = op_no_grad, .flags = TA_FLAGS},
};

void op_tensor_array_register(void) { rt_op_register(ta_ops, OP_COUNT(ta_ops)); }
