/* Resource variables, as TF's ResourceVariable builds them: VarHandleOp outputs a handle
 * (DT_RESOURCE) naming the variable on its device; ReadVariableOp, AssignVariableOp and the
 * other ops take that handle and act on the variable's slot in the device's resource table
 * (the same table VariableV2 uses, so values outlive steps and sessions). The placer puts
 * every op with a resource input on the device that made the handle; a kernel that still
 * gets a handle of another device fails, naming both. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "ops/ops_int.h"
#include "runtime/device.h"

/* The variable the handle in input i names (NULL with an error when it names another
 * device or is malformed). Created when create is set (AssignVariableOp). */
rt_resource *op_resource_of(rt_kernel_ctx *c, int i, bool create, const char **name) {
  rt_handle h;
  const rt_tensor *t = c->inputs[i];
  if (t->dtype != RT_RESOURCE || rt_tensor_numel(t) != 1 || !rt_handle_get(t, 0, &h)) {
    rt_kernel_error(c, RT_INVALID_ARGUMENT, "input %d of %s is not a resource handle", i,
                    c->node->op);
    return NULL;
  }
  if (strcmp(h.device, c->device->name)) {
    rt_kernel_error(c, RT_INVALID_ARGUMENT,
                    "%s runs on %s but its resource '%s' lives on %s: an op that uses a "
                    "resource must run on the resource's device; colocate it with the op "
                    "that made the handle (tf.colocate_with) or drop its explicit device",
                    c->node->op, c->device->name, h.name, h.device);
    return NULL;
  }
  if (name) *name = h.name;
  rt_resource *r = rt_device_resource_in(c->device, c->scope, h.container, h.name, create);
  if (!r && create) rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  return r;
}

/* TF's words for a variable that is not there (or has no value yet). */
static int not_found(rt_kernel_ctx *c, const char *name) {
  return rt_kernel_error(c, RT_NOT_FOUND,
                         "Container localhost does not exist. (Could not find resource: "
                         "localhost/%s)", name);
}

/* The variable's value with its lock held; NULL (lock released, error set) if absent. */
static rt_resource *locked_value(rt_kernel_ctx *c, int i, const char **name) {
  const char *nm = "";
  rt_resource *r = op_resource_of(c, i, false, &nm);
  if (name) *name = nm;
  if (!r) {
    if (!c->st->code) not_found(c, nm);
    return NULL;
  }
  pthread_mutex_lock(&r->mu);
  if (!r->value || !r->value->buf) {
    pthread_mutex_unlock(&r->mu);
    not_found(c, nm);
    return NULL;
  }
  return r;
}

static int var_handle_kernel(rt_kernel_ctx *c) {
  const char *shared = rt_node_string(c->node, "shared_name", "");
  rt_shape s = rt_shape_scalar();
  rt_tensor *o = rt_kernel_output(c, 0, RT_RESOURCE, &s);
  if (!o) return c->st->code;
  rt_handle h = {c->device->name, rt_node_string(c->node, "container", ""),
                 shared[0] ? shared : c->node->name, "Var"};
  if (rt_handle_set(o, 0, &h)) return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  return RT_OK;
}

static int read_kernel(rt_kernel_ctx *c) {
  const char *name = "";
  rt_resource *r = op_resource_of(c, 0, false, &name);
  if (!r && c->st->code) return c->st->code;
  if (r) pthread_mutex_lock(&r->mu);
  if (!r || !r->value || !r->value->buf) {
    if (r) pthread_mutex_unlock(&r->mu);
    return rt_kernel_error(c, RT_FAILED_PRECONDITION,
                           "Could not find variable %s. This could mean that the variable has "
                           "been deleted. In TF1, it can also mean the variable is uninitialized. "
                           "Debug info: container=localhost, status error message=Container "
                           "localhost does not exist. (Could not find resource: localhost/%s)",
                           name, name);
  }
  rt_dtype want = rt_node_type(c->node, "dtype", r->value->dtype);
  int rc = RT_OK;
  if (want != r->value->dtype) {
    rc = rt_kernel_error(c, RT_INVALID_ARGUMENT,
                         "Trying to read variable with wrong dtype. Expected %s got %s",
                         op_tf_type(r->value->dtype), op_tf_type(want));
  } else {
    rt_tensor *copy = rt_tensor_copy(r->value);   /* a snapshot: updates go in place */
    if (!copy) {
      rc = rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
    } else {
      rt_tensor_unref(c->outputs[0]);
      c->outputs[0] = copy;
    }
  }
  pthread_mutex_unlock(&r->mu);
  return rc;
}

static int assign_kernel(rt_kernel_ctx *c) {
  rt_resource *r = op_resource_of(c, 0, true, NULL);
  if (!r) return c->st->code;
  rt_tensor *v = c->inputs[1];
  rt_dtype want = rt_node_type(c->node, "dtype", v->dtype);
  if (want != v->dtype)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT,
                           "Trying to assign variable with wrong dtype. Expected %s got %s",
                           op_tf_type(want), op_tf_type(v->dtype));
  int rc = RT_OK;
  pthread_mutex_lock(&r->mu);
  if (r->value && r->value->buf && r->value->dtype != v->dtype) {
    rc = rt_kernel_error(c, RT_INVALID_ARGUMENT,
                         "Trying to assign variable with wrong dtype. Expected %s got %s",
                         op_tf_type(r->value->dtype), op_tf_type(v->dtype));
  } else if (!op_store_value(r, v)) {
    rc = rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  }
  pthread_mutex_unlock(&r->mu);
  return rc;
}

#define UPDATE(T, sfx)                                                                 \
  static void add_##sfx(T *x, const T *y, int64_t n, int sign) {                       \
    if (sign > 0)                                                                      \
      for (int64_t i = 0; i < n; i++) x[i] += y[i];                                    \
    else if (sign < 0)                                                                 \
      for (int64_t i = 0; i < n; i++) x[i] -= y[i];                                    \
    else                                                                               \
      for (int64_t i = 0; i < n; i++) x[i] = y[i];                                     \
  }
UPDATE(float, f32)
UPDATE(double, f64)
UPDATE(int32_t, i32)
UPDATE(int64_t, i64)

/* x (+|-|=)= y over n elements of dtype t (sign 1, -1, 0); false if t is not supported. */
static bool combine(rt_dtype t, void *x, const void *y, int64_t n, int sign) {
  switch (t) {
  case RT_FLOAT: add_f32(x, y, n, sign); return true;
  case RT_DOUBLE: add_f64(x, y, n, sign); return true;
  case RT_INT32: add_i32(x, y, n, sign); return true;
  case RT_INT64: add_i64(x, y, n, sign); return true;
  default: return false;
  }
}

static int update(rt_kernel_ctx *c, int sign) {
  rt_resource *r = locked_value(c, 0, NULL);
  if (!r) return c->st->code;
  rt_tensor *x = r->value, *v = c->inputs[1];
  int rc = RT_OK;
  char a[128], b[128];
  if (x->dtype != v->dtype)
    rc = rt_kernel_error(c, RT_INVALID_ARGUMENT,
                         "Trying to assign variable with wrong dtype. Expected %s got %s",
                         op_tf_type(x->dtype), op_tf_type(v->dtype));
  else if (!rt_shape_equal(&x->shape, &v->shape))
    rc = rt_kernel_error(c, RT_INVALID_ARGUMENT,
                         "Cannot update variable with shape %s using a Tensor with shape %s, "
                         "shapes must be equal.", op_shape_tf(&x->shape, a, sizeof a),
                         op_shape_tf(&v->shape, b, sizeof b));
  else if (!combine(x->dtype, rt_tensor_data(x), rt_tensor_data(v), rt_tensor_numel(x), sign))
    rc = rt_kernel_error(c, RT_UNIMPLEMENTED, "%s does not support %s", c->node->op,
                         rt_dtype_name(x->dtype));
  pthread_mutex_unlock(&r->mu);
  return rc;
}

static int assign_add_kernel(rt_kernel_ctx *c) { return update(c, 1); }
static int assign_sub_kernel(rt_kernel_ctx *c) { return update(c, -1); }

static int is_initialized_kernel(rt_kernel_ctx *c) {
  rt_resource *r = op_resource_of(c, 0, false, NULL);
  if (!r && c->st->code) return c->st->code;
  bool init = false;
  if (r) {
    pthread_mutex_lock(&r->mu);
    init = r->value && r->value->buf;
    pthread_mutex_unlock(&r->mu);
  }
  rt_shape s = rt_shape_scalar();
  rt_tensor *o = rt_kernel_output(c, 0, RT_BOOL, &s);
  if (!o) return c->st->code;
  *(bool *)rt_tensor_data(o) = init;
  return RT_OK;
}

static int variable_shape_kernel(rt_kernel_ctx *c) {
  rt_resource *r = locked_value(c, 0, NULL);
  if (!r) return c->st->code;
  rt_shape s = r->value->shape;
  pthread_mutex_unlock(&r->mu);
  int64_t n = s.ndims;
  rt_shape os = rt_shape_make(1, &n);
  rt_dtype t = rt_node_type(c->node, "out_type", RT_INT32);
  rt_tensor *o = rt_kernel_output(c, 0, t, &os);
  if (!o) return c->st->code;
  for (int d = 0; d < s.ndims; d++) {
    if (t == RT_INT64) ((int64_t *)rt_tensor_data(o))[d] = s.dims[d];
    else ((int32_t *)rt_tensor_data(o))[d] = (int32_t)s.dims[d];
  }
  return RT_OK;
}

/* Gather on a snapshot of the value, by the Gather kernel. */
static int gather_kernel(rt_kernel_ctx *c) {
  rt_resource *r = locked_value(c, 0, NULL);
  if (!r) return c->st->code;
  rt_tensor *snap = rt_tensor_copy(r->value);
  pthread_mutex_unlock(&r->mu);
  if (!snap) return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  rt_tensor *in[2] = {snap, c->inputs[1]};
  rt_kernel_ctx k = *c;
  k.inputs = in;
  int rc = op_cpu_gather(&k);
  rt_tensor_unref(snap);
  return rc;
}

/* var[indices[i], ...] (+|=)= updates[i, ...] */
static int scatter(rt_kernel_ctx *c, int sign) {
  rt_resource *r = locked_value(c, 0, NULL);
  if (!r) return c->st->code;
  rt_tensor *x = r->value;
  const rt_tensor *ix = c->inputs[1], *u = c->inputs[2];
  int64_t rows = x->shape.ndims > 0 ? x->shape.dims[0] : 0, n = rt_tensor_numel(ix);
  int64_t row = rows ? rt_tensor_numel(x) / rows : 0;
  int rc = RT_OK;
  char a[128], b[128];
  if (x->shape.ndims < 1) {
    rc = rt_kernel_error(c, RT_INVALID_ARGUMENT, "params must be at least 1 dimensional");
  } else if (x->dtype != u->dtype) {
    rc = rt_kernel_error(c, RT_INVALID_ARGUMENT, "updates of dtype %s for a variable of %s",
                         op_tf_type(u->dtype), op_tf_type(x->dtype));
  } else if (rt_tensor_numel(u) != n * row) {
    rc = rt_kernel_error(c, RT_INVALID_ARGUMENT,
                         "updates has shape %s but the variable's shape %s and indices' %s need "
                         "%lld elements", op_shape_tf(&u->shape, a, sizeof a),
                         op_shape_tf(&x->shape, b, sizeof b),
                         op_shape_tf(&ix->shape, (char[128]){0}, 128), (long long)(n * row));
  }
  for (int64_t i = 0; i < n && !rc; i++) {
    int64_t k = rt_tensor_get_i64(ix, i);
    if (k < 0 || k >= rows)
      rc = rt_kernel_error(c, RT_INVALID_ARGUMENT, "indices[%lld] = %lld is not in [0, %lld)",
                           (long long)i, (long long)k, (long long)rows);
  }
  size_t esz = rt_dtype_size(x->dtype);
  for (int64_t i = 0; i < n && !rc; i++) {
    char *dst = (char *)rt_tensor_data(x) + (size_t)(rt_tensor_get_i64(ix, i) * row) * esz;
    const char *src = (const char *)rt_tensor_data(u) + (size_t)(i * row) * esz;
    if (!combine(x->dtype, dst, src, row, sign))
      rc = rt_kernel_error(c, RT_UNIMPLEMENTED, "%s does not support %s", c->node->op,
                           rt_dtype_name(x->dtype));
  }
  pthread_mutex_unlock(&r->mu);
  return rc;
}

static int scatter_add_kernel(rt_kernel_ctx *c) { return scatter(c, 1); }
static int scatter_update_kernel(rt_kernel_ctx *c) { return scatter(c, 0); }

/* The variable loses its value (it reads as not found afterwards). */
static int destroy_kernel(rt_kernel_ctx *c) {
  const char *name = "";
  rt_resource *r = op_resource_of(c, 0, false, &name);
  if (!r && c->st->code) return c->st->code;
  bool had = false;
  if (r) {
    pthread_mutex_lock(&r->mu);
    had = r->value != NULL;
    rt_tensor_unref(r->value);
    r->value = NULL;
    pthread_mutex_unlock(&r->mu);
  }
  if (!had && !rt_node_bool(c->node, "ignore_lookup_error", true)) return not_found(c, name);
  return RT_OK;
}

/* ---- shapes ------------------------------------------------------------------------ */

static int scalar_shape(rt_shape_ctx *c) {
  c->out_shapes[0] = rt_shape_scalar();
  return RT_OK;
}

/* The shape a handle's variable was declared with: VarHandleOp's "shape", found through
 * the Identity / Enter / Switch nodes a handle may pass (TF's handle data). */
static bool handle_shape(const rt_shape_ctx *c, int i, rt_shape *out) {
  if (!c->g || i >= c->n_inputs) return false;
  const rt_graph *g = c->g;
  const rt_node *n = g->nodes[c->node->edges[i].node];
  for (int hops = 0; hops < 64 && n; hops++) {
    if (!strcmp(n->op, "VarHandleOp")) {
      const rt_attr_value *s = rt_node_attr(n, "shape");
      if (!s || s->kind != RT_ATTR_SHAPE) return false;
      *out = s->shape;
      return true;
    }
    if (n->n_data_inputs < 1 || (strcmp(n->op, "Identity") && strcmp(n->op, "Enter") &&
                                 strcmp(n->op, "Switch") && strcmp(n->op, "RefIdentity")))
      return false;
    n = g->nodes[n->edges[0].node];
  }
  return false;
}

static int read_shape(rt_shape_ctx *c) {
  rt_shape s;
  if (handle_shape(c, 0, &s)) c->out_shapes[0] = s;
  return RT_OK;
}

static int variable_shape_shape(rt_shape_ctx *c) {
  rt_shape s;
  int64_t n = handle_shape(c, 0, &s) && s.ndims >= 0 ? s.ndims : -1;
  c->out_shapes[0] = rt_shape_make(1, &n);
  return RT_OK;
}

static int gather_shape(rt_shape_ctx *c) {
  rt_shape p, o = c->in_shapes[1];
  if (!handle_shape(c, 0, &p) || p.ndims < 1 || o.ndims < 0) return RT_OK;
  if (o.ndims + p.ndims - 1 > RT_MAX_DIMS) return op_shape_error(c, 0, "Too many dimensions");
  for (int d = 1; d < p.ndims; d++) o.dims[o.ndims++] = p.dims[d];
  c->out_shapes[0] = o;
  return RT_OK;
}

/* ---- gradients --------------------------------------------------------------------- */

/* d read / d handle = dy: the optimizer's gradient "for the variable" arrives at the handle. */
static int read_grad(rt_grad_ctx *c) {
  c->dx[0] = c->dy[0] ? xstrdup(c->dy[0]) : NULL;
  return RT_OK;
}

static void set_shrink(rt_node *n, const void *arg) {
  (void)arg;
  rt_node_set_int(n, "shrink_axis_mask", 1);
}

/* Rows of dy summed into a zero tensor of the variable's shape (dense, as tfsh's Gather
 * gradient is). */
static int gather_grad(rt_grad_ctx *c) {
  if (!c->dy[0]) return RT_OK;
  const char *h = c->node->inputs[0], *ix = c->node->inputs[1];
  char *sp = op_grad_node(c, "VariableShape", "VariableShape", 1, &h, NULL, NULL);
  char *b = op_gints(c, 1, (int64_t[]){0}), *e = op_gints(c, 1, (int64_t[]){1});
  const char *sin[] = {sp, b, e, e};
  char *rows = sp && b && e ? op_grad_node(c, "StridedSlice", "strided_slice", 4, sin,
                                           set_shrink, NULL) : NULL;
  const char *in[] = {c->dy[0], ix, rows};
  c->dx[0] = rows ? op_grad_node(c, "UnsortedSegmentSum", "UnsortedSegmentSum", 3, in, NULL, NULL)
                  : NULL;
  free(sp), free(b), free(e), free(rows);
  return c->st->code;
}

static const rt_op_def resource_var_ops[] = {
  {.name = "VarHandleOp", .outputs = "resource: resource",
   .attrs = "container: string = '', shared_name: string = '', dtype: type, shape: shape, "
            "debug_name: string = '', allowed_devices: list(string) = []",
   .help = "A handle to the resource variable shared_name (or the node's name) on this device.",
   .shape = scalar_shape, .kernel = {[RT_DEV_CPU] = var_handle_kernel},
   .flags = RT_OP_STATEFUL | RT_OP_SOURCE},
  {.name = "ReadVariableOp", .inputs = "resource: resource", .outputs = "value: dtype",
   .attrs = "dtype: type", .help = "The variable's current value (a snapshot).",
   .shape = read_shape, .kernel = {[RT_DEV_CPU] = read_kernel}, .grad = read_grad,
   .flags = RT_OP_STATEFUL},
  {.name = "AssignVariableOp", .inputs = "resource: resource, value: dtype",
   .attrs = "dtype: type, validate_shape: bool = false",
   .help = "Sets the variable to value (creating it on first use).",
   .kernel = {[RT_DEV_CPU] = assign_kernel}, .grad = op_no_grad, .flags = RT_OP_STATEFUL},
  {.name = "AssignAddVariableOp", .inputs = "resource: resource, value: dtype",
   .attrs = "dtype: type", .help = "variable += value, atomically.",
   .kernel = {[RT_DEV_CPU] = assign_add_kernel}, .grad = op_no_grad, .flags = RT_OP_STATEFUL},
  {.name = "AssignSubVariableOp", .inputs = "resource: resource, value: dtype",
   .attrs = "dtype: type", .help = "variable -= value, atomically.",
   .kernel = {[RT_DEV_CPU] = assign_sub_kernel}, .grad = op_no_grad, .flags = RT_OP_STATEFUL},
  {.name = "VarIsInitializedOp", .inputs = "resource: resource", .outputs = "is_initialized: bool",
   .help = "Whether the resource variable has a value.", .shape = scalar_shape,
   .kernel = {[RT_DEV_CPU] = is_initialized_kernel}, .grad = op_no_grad,
   .flags = RT_OP_STATEFUL},
  {.name = "VariableShape", .inputs = "input: resource", .outputs = "output: out_type",
   .attrs = "out_type: {int32, int64} = int32", .help = "The resource variable's shape.",
   .shape = variable_shape_shape, .kernel = {[RT_DEV_CPU] = variable_shape_kernel},
   .grad = op_no_grad, .flags = RT_OP_STATEFUL},
  {.name = "ResourceGather", .inputs = "resource: resource, indices: Tindices",
   .outputs = "output: dtype",
   .attrs = "batch_dims: int = 0, validate_indices: bool = true, dtype: type, "
            "Tindices: {int32, int64}",
   .help = "Rows of the variable picked by indices.", .shape = gather_shape,
   .kernel = {[RT_DEV_CPU] = gather_kernel}, .grad = gather_grad, .flags = RT_OP_STATEFUL},
  {.name = "ResourceScatterAdd", .inputs = "resource: resource, indices: Tindices, updates: dtype",
   .attrs = "dtype: {float, double, int32, int64}, Tindices: {int32, int64}",
   .help = "variable[indices] += updates, row by row.",
   .kernel = {[RT_DEV_CPU] = scatter_add_kernel}, .grad = op_no_grad, .flags = RT_OP_STATEFUL},
  {.name = "ResourceScatterUpdate", .inputs = "resource: resource, indices: Tindices, updates: dtype",
   .attrs = "dtype: {float, double, int32, int64}, Tindices: {int32, int64}",
   .help = "variable[indices] = updates, row by row.",
   .kernel = {[RT_DEV_CPU] = scatter_update_kernel}, .grad = op_no_grad,
   .flags = RT_OP_STATEFUL},
  {.name = "DestroyResourceOp", .inputs = "resource: resource",
   .attrs = "ignore_lookup_error: bool = true",
   .help = "Drops the variable's value (it reads as not found afterwards).",
   .kernel = {[RT_DEV_CPU] = destroy_kernel}, .grad = op_no_grad, .flags = RT_OP_STATEFUL},
};

void op_resource_var_register(void) {
  rt_op_register(resource_var_ops, OP_COUNT(resource_var_ops));
}
