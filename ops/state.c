/* Variables, TF1 style: VariableV2 outputs a reference to a tensor kept in its device's
 * resource table (so values outlive steps and sessions: that is what a ps holds), and
 * Assign / AssignAdd / AssignSub update it in place under the variable's lock. */
#include <stdio.h>
#include <string.h>

#include "ops/ops_int.h"
#include "runtime/device.h"

static rt_resource *var_resource(rt_kernel_ctx *c) {
  const char *shared = rt_node_string(c->node, "shared_name", "");
  return rt_device_resource_in(c->device, c->scope, rt_node_string(c->node, "container", ""),
                            shared[0] ? shared : c->node->name, true);
}

/* A reference output viewing the variable's current value (no buffer if uninitialized). */
int op_output_ref(rt_kernel_ctx *c, rt_resource *r, rt_dtype dtype) {
  pthread_mutex_lock(&r->mu);
  rt_tensor *t;
  if (r->value) {
    t = rt_tensor_wrap(r->value->dtype, &r->value->shape, r->value->buf);
  } else {
    rt_shape unknown = rt_shape_unknown();
    t = rt_tensor_wrap(dtype, &unknown, NULL);
  }
  pthread_mutex_unlock(&r->mu);
  if (!t) return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  t->ref = r;
  rt_tensor_unref(c->outputs[0]);
  c->outputs[0] = t;
  return RT_OK;
}

static int variable_kernel(rt_kernel_ctx *c) {
  rt_resource *r = var_resource(c);
  if (!r) return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  return op_output_ref(c, r, rt_node_type(c->node, "dtype", RT_FLOAT));
}

/* ops_int.h: in place when the shape and dtype stay, else a copy of v. */
bool op_store_value(rt_resource *r, const rt_tensor *v) {
  if (r->value && r->value->buf && rt_shape_equal(&r->value->shape, &v->shape) &&
      r->value->dtype == v->dtype && !rt_dtype_is_str(v->dtype)) {
    memcpy(rt_tensor_data(r->value), rt_tensor_data((rt_tensor *)v), rt_tensor_nbytes(v));
    return true;
  }
  rt_tensor *copy = rt_tensor_copy(v);
  if (!copy) return false;
  rt_tensor_unref(r->value);
  r->value = copy;
  return true;
}

static int assign_kernel(rt_kernel_ctx *c) {
  rt_resource *r = c->inputs[0]->ref;
  rt_tensor *v = c->inputs[1];
  if (!r) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Assign needs a variable as input 0");
  bool validate = rt_node_bool(c->node, "validate_shape", true);
  pthread_mutex_lock(&r->mu);
  int rc = RT_OK;
  if (r->value && validate && !rt_shape_equal(&r->value->shape, &v->shape)) {
    char a[128], b[128];
    rc = rt_kernel_error(c, RT_INVALID_ARGUMENT,
                         "Assign requires shapes of both tensors to match. lhs shape= %s rhs "
                         "shape= %s", op_shape_tf(&r->value->shape, a, sizeof a),
                         op_shape_tf(&v->shape, b, sizeof b));
  } else if (!op_store_value(r, v)) {
    rc = rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  }
  pthread_mutex_unlock(&r->mu);
  return rc ? rc : op_output_ref(c, r, v->dtype);
}

#define UPDATE(fn, OP)                                                          \
  static void fn##_f32(float *x, const float *y, int64_t n, bool scalar) {      \
    for (int64_t i = 0; i < n; i++) x[i] OP y[scalar ? 0 : i];                  \
  }                                                                             \
  static void fn##_f64(double *x, const double *y, int64_t n, bool scalar) {    \
    for (int64_t i = 0; i < n; i++) x[i] OP y[scalar ? 0 : i];                  \
  }                                                                             \
  static void fn##_i32(int32_t *x, const int32_t *y, int64_t n, bool scalar) {  \
    for (int64_t i = 0; i < n; i++) x[i] OP y[scalar ? 0 : i];                  \
  }                                                                             \
  static void fn##_i64(int64_t *x, const int64_t *y, int64_t n, bool scalar) {  \
    for (int64_t i = 0; i < n; i++) x[i] OP y[scalar ? 0 : i];                  \
  }
UPDATE(add, +=)
UPDATE(sub, -=)

static int update(rt_kernel_ctx *c, bool subtract) {
  rt_resource *r = c->inputs[0]->ref;
  rt_tensor *v = c->inputs[1];
  if (!r) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s needs a variable as input 0", c->node->op);
  pthread_mutex_lock(&r->mu);
  int rc = RT_OK;
  rt_tensor *x = r->value;
  int64_t n = x ? rt_tensor_numel(x) : 0;
  bool scalar = rt_tensor_numel(v) == 1 && n != 1;
  if (!x) {
    rc = rt_kernel_error(c, RT_FAILED_PRECONDITION, "Attempting to use uninitialized value %s",
                         c->node->inputs[0]);
  } else if (!scalar && !rt_shape_equal(&x->shape, &v->shape)) {
    char a[128], b[128];
    rc = rt_kernel_error(c, RT_INVALID_ARGUMENT, "Must have the same shape: %s vs %s",
                         op_shape_tf(&x->shape, a, sizeof a), op_shape_tf(&v->shape, b, sizeof b));
  } else {
    void *xd = rt_tensor_data(x), *yd = rt_tensor_data(v);
    switch (x->dtype) {
    case RT_FLOAT: (subtract ? sub_f32 : add_f32)(xd, yd, n, scalar); break;
    case RT_DOUBLE: (subtract ? sub_f64 : add_f64)(xd, yd, n, scalar); break;
    case RT_INT32: (subtract ? sub_i32 : add_i32)(xd, yd, n, scalar); break;
    case RT_INT64: (subtract ? sub_i64 : add_i64)(xd, yd, n, scalar); break;
    default:
      rc = rt_kernel_error(c, RT_UNIMPLEMENTED, "%s does not support %s", c->node->op,
                           rt_dtype_name(x->dtype));
    }
  }
  pthread_mutex_unlock(&r->mu);
  return rc ? rc : op_output_ref(c, r, x->dtype);
}

static int assign_add_kernel(rt_kernel_ctx *c) { return update(c, false); }
static int assign_sub_kernel(rt_kernel_ctx *c) { return update(c, true); }

static int is_initialized_kernel(rt_kernel_ctx *c) {
  rt_resource *r = c->inputs[0]->ref;
  bool init = false;
  if (r) {
    pthread_mutex_lock(&r->mu);
    init = r->value != NULL;
    pthread_mutex_unlock(&r->mu);
  }
  rt_shape s = rt_shape_scalar();
  rt_tensor *o = rt_kernel_output(c, 0, RT_BOOL, &s);
  if (!o) return c->st->code;
  *(bool *)rt_tensor_data(o) = init;
  return RT_OK;
}

static int variable_shape(rt_shape_ctx *c) {
  const rt_attr_value *s = rt_node_attr(c->node, "shape");
  if (s) c->out_shapes[0] = s->shape;
  return RT_OK;
}

static int assign_shape(rt_shape_ctx *c) {
  c->out_shapes[0] = rt_node_bool(c->node, "validate_shape", true) ? c->in_shapes[0]
                                                                     : c->in_shapes[1];
  if (c->in_shapes[0].ndims < 0) c->out_shapes[0] = c->in_shapes[1];
  return RT_OK;
}

static int ref_shape(rt_shape_ctx *c) {
  c->out_shapes[0] = c->in_shapes[0];
  return RT_OK;
}

static int scalar_shape(rt_shape_ctx *c) {
  c->out_shapes[0] = rt_shape_scalar();
  return RT_OK;
}

static const rt_op_def state_ops[] = {
  {.name = "VariableV2", .outputs = "ref: Ref(dtype)",
   .attrs = "shape: shape, dtype: type, container: string = '', shared_name: string = ''",
   .help = "A variable: state kept on its device across steps and sessions.",
   .shape = variable_shape, .kernel = {[RT_DEV_CPU] = variable_kernel},
   .flags = RT_OP_STATEFUL | RT_OP_SOURCE},
  {.name = "Assign", .inputs = "ref: Ref(T), value: T", .outputs = "output_ref: Ref(T)",
   .attrs = "T: type, validate_shape: bool = true, use_locking: bool = true",
   .help = "ref = value; outputs the updated variable.", .shape = assign_shape,
   .kernel = {[RT_DEV_CPU] = assign_kernel}, .flags = RT_OP_STATEFUL},
  {.name = "AssignAdd", .inputs = "ref: Ref(T), value: T", .outputs = "output_ref: Ref(T)",
   .attrs = "T: {float, double, int32, int64}, use_locking: bool = false",
   .help = "ref += value, atomically; outputs the updated variable.", .shape = ref_shape,
   .kernel = {[RT_DEV_CPU] = assign_add_kernel}, .flags = RT_OP_STATEFUL},
  {.name = "AssignSub", .inputs = "ref: Ref(T), value: T", .outputs = "output_ref: Ref(T)",
   .attrs = "T: {float, double, int32, int64}, use_locking: bool = false",
   .help = "ref -= value, atomically; outputs the updated variable.", .shape = ref_shape,
   .kernel = {[RT_DEV_CPU] = assign_sub_kernel}, .flags = RT_OP_STATEFUL},
  {.name = "IsVariableInitialized", .inputs = "ref: Ref(dtype)", .outputs = "is_initialized: bool",
   .attrs = "dtype: type", .help = "Whether the variable has been initialized.",
   .shape = scalar_shape, .kernel = {[RT_DEV_CPU] = is_initialized_kernel},
   .flags = RT_OP_STATEFUL},
};


void op_state_register_report(void);

/* report_uninitialized_variables: the names whose flag is false, as a 1-D string tensor. */
static int report_kernel(rt_kernel_ctx *c) {
  const rt_attr_value *names = rt_node_attr(c->node, "var_names");
  int64_t n = 0;
  for (int i = 0; i < c->n_inputs; i++) n += !*(bool *)rt_tensor_data(c->inputs[i]);
  rt_shape s = rt_shape_make(1, &n);
  rt_tensor *o = rt_tensor_new(RT_STRING, &s);
  if (!o) return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  for (int i = 0, k = 0; i < c->n_inputs; i++) {
    if (*(bool *)rt_tensor_data(c->inputs[i])) continue;
    const char *name = names && i < names->list.n ? ((char **)names->list.v)[i] : "?";
    rt_tensor_set_str(o, k++, name, strlen(name));
  }
  rt_tensor_unref(c->outputs[0]);
  c->outputs[0] = o;
  return RT_OK;
}

static int report_shape(rt_shape_ctx *c) {
  c->out_shapes[0] = rt_shape_make(1, (int64_t[]){-1});
  return RT_OK;
}

static const rt_op_def report_ops[] = {
  {.name = "_ReportUninitialized", .inputs = "flags: N * bool", .outputs = "names: string",
   .attrs = "N: int >= 0, var_names: list(string) = []",
   .help = "Names of the variables whose IsVariableInitialized flag is false.",
   .shape = report_shape, .kernel = {[RT_DEV_CPU] = report_kernel}, .flags = RT_OP_STATEFUL},
};

void op_state_register_report(void) { rt_op_register(report_ops, OP_COUNT(report_ops)); }

void op_state_register(void) {
  rt_op_register(state_ops, OP_COUNT(state_ops));
  op_state_register_report();
}
