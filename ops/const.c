/* Sources and plumbing: Const, Placeholder, Identity, IdentityN, StopGradient, NoOp. */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "ops/ops_int.h"

static int const_shape(rt_shape_ctx *c) {
  const rt_attr_value *v = rt_node_attr(c->node, "value");
  if (!v || v->kind != RT_ATTR_TENSOR || !v->tensor)
    return rt_error(c->st, RT_INVALID_ARGUMENT, "node '%s': Const needs a tensor 'value'",
                    c->node->name);
  if (v->tensor->dtype != c->out_types[0])
    return rt_error(c->st, RT_INVALID_ARGUMENT,
                    "node '%s': Const value has dtype %s but dtype attr is %s", c->node->name,
                    rt_dtype_name(v->tensor->dtype), rt_dtype_name(c->out_types[0]));
  c->out_shapes[0] = v->tensor->shape;
  return RT_OK;
}

static int placeholder_shape(rt_shape_ctx *c) {
  const rt_attr_value *v = rt_node_attr(c->node, "shape");
  c->out_shapes[0] = v && v->kind == RT_ATTR_SHAPE ? v->shape : rt_shape_unknown();
  return RT_OK;
}

static int identity_grad(rt_grad_ctx *c) {
  c->dx[0] = c->dy[0] ? xstrdup(c->dy[0]) : NULL;
  return RT_OK;
}

/* IdentityN: each output its input, of its own type (T, a list). */
static int identity_n_shape(rt_shape_ctx *c) {
  for (int i = 0; i < c->n_outputs && i < c->n_inputs; i++)
    c->out_types[i] = c->in_types[i], c->out_shapes[i] = c->in_shapes[i];
  return RT_OK;
}

static int identity_n_kernel(rt_kernel_ctx *c) {
  for (int i = 0; i < c->n_outputs && i < c->n_inputs; i++) {
    rt_tensor_unref(c->outputs[i]);
    c->outputs[i] = rt_tensor_ref(c->inputs[i]);
  }
  return RT_OK;
}

static int identity_n_grad(rt_grad_ctx *c) {
  for (int i = 0; i < c->node->n_outputs; i++) c->dx[i] = c->dy[i] ? xstrdup(c->dy[i]) : NULL;
  return RT_OK;
}

static const rt_op_def const_ops[] = {
  {.name = "Const", .outputs = "output: dtype", .attrs = "value: tensor, dtype: type",
   .help = "A constant tensor (its value is part of the graph).", .shape = const_shape,
   .kernel = {[RT_DEV_CPU] = op_cpu_const}, .flags = RT_OP_SOURCE},
  {.name = "Placeholder", .outputs = "output: dtype", .attrs = "dtype: type, shape: shape = ?",
   .help = "A value fed at run time through feed_dict.", .shape = placeholder_shape,
   .kernel = {[RT_DEV_CPU] = op_cpu_placeholder}, .flags = RT_OP_SOURCE},
  {.name = "Identity", .inputs = "input: T", .outputs = "output: T", .attrs = "T: type",
   .help = "Returns its input (same buffer, no copy).", .shape = op_shape_unchanged,
   .kernel = {[RT_DEV_CPU] = op_cpu_identity}, .grad = identity_grad},
  {.name = "IdentityN", .inputs = "input: N * T", .outputs = "output: N * T",
   .attrs = "N: int >= 1, T: list(type)",
   .help = "Returns its inputs, each of its own type (tf.identity_n; tf.keras's optimizers).",
   .shape = identity_n_shape, .kernel = {[RT_DEV_CPU] = identity_n_kernel}, .grad = identity_n_grad},
  {.name = "StopGradient", .inputs = "input: T", .outputs = "output: T", .attrs = "T: type",
   .help = "Returns its input; gradients do not flow through it.", .shape = op_shape_unchanged,
   .kernel = {[RT_DEV_CPU] = op_cpu_identity}, .grad = op_no_grad},
  {.name = "NoOp", .help = "Does nothing; a target for control dependencies (tf.group).",
   .kernel = {[RT_DEV_CPU] = op_cpu_noop}},
};

void op_const_register(void) { rt_op_register(const_ops, OP_COUNT(const_ops)); }
