/* Control flow as TF1 builds it: Switch and Merge (tf.cond), Enter, Exit, NextIteration and
 * LoopCond (tf.while_loop frames). What they mean (dead outputs, frames, iterations) is the
 * executor's business (runtime/exec_cf.c): their kernels only forward a value, and Switch
 * and Merge, which the executor runs itself, refuse to run anywhere else. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"

#include "ops/ops_int.h"

static int ctl_forward(rt_kernel_ctx *c) {
  rt_tensor_unref(c->outputs[0]);
  c->outputs[0] = rt_tensor_ref(c->inputs[0]);
  return RT_OK;
}

static int ctl_in_frames(rt_kernel_ctx *c) {
  return rt_kernel_error(c, RT_INTERNAL, "%s runs only in the executor's control-flow frames",
                         c->node->op);
}

static int merge_shape(rt_shape_ctx *c) {
  rt_shape s = c->in_shapes[0];
  for (int i = 1; i < c->n_inputs && s.ndims >= 0; i++) {
    const rt_shape *o = &c->in_shapes[i];
    if (o->ndims != s.ndims) {
      s = rt_shape_unknown();
      break;
    }
    for (int d = 0; d < s.ndims; d++)
      if (o->dims[d] != s.dims[d]) s.dims[d] = -1;
  }
  c->out_shapes[0] = s;
  c->out_shapes[1] = rt_shape_scalar();
  return RT_OK;
}

static int switch_shape(rt_shape_ctx *c) {
  if (c->in_shapes[1].ndims > 0)
    return op_shape_error(c, 0, "Shape must be rank 0 but is rank %d", c->in_shapes[1].ndims);
  c->out_shapes[0] = c->out_shapes[1] = c->in_shapes[0];
  return RT_OK;
}

static int scalar_shape(rt_shape_ctx *c) {
  if (c->in_shapes[0].ndims > 0)
    return op_shape_error(c, 0, "Shape must be rank 0 but is rank %d", c->in_shapes[0].ndims);
  c->out_shapes[0] = rt_shape_scalar();
  return RT_OK;
}

/* ---- gradients of tf.cond (TF1's _SwitchGrad / _MergeGrad in a CondContext) ------------- */

static char *output_name(const char *node, int i) {
  char buf[400];
  snprintf(buf, sizeof buf, "%s:%d", node, i);
  return xstrdup(buf);
}

/* Switch: the branch taken sends its gradient back; the other side is zeros behind a Switch
 * of the input on that side (dead whenever that branch is not taken), and a Merge takes
 * whichever is live. */
static int switch_grad(rt_grad_ctx *c) {
  const rt_node *n = c->node;
  if (!c->dy[0] && !c->dy[1]) return RT_OK;
  char *g[2] = {NULL, NULL};
  for (int i = 0; i < 2; i++) {
    if (c->dy[i]) {
      g[i] = xstrdup(c->dy[i]);
      continue;
    }
    const char *in[] = {n->inputs[0], n->inputs[1]};
    char *sw = op_grad_node(c, "Switch", "Switch", 2, in, NULL, NULL);
    if (!sw) break;
    char *side = output_name(sw, i);
    g[i] = op_g1(c, "ZerosLike", side);
    free(sw);
    free(side);
    if (!g[i]) break;
  }
  if (g[0] && g[1]) {
    const char *in[] = {g[0], g[1]};
    char *m = op_grad_node(c, "Merge", "cond_grad", 2, in, NULL, NULL);
    if (m) c->dx[0] = output_name(m, 0);
    free(m);
  }
  free(g[0]);
  free(g[1]);
  return c->st->code;
}

/* Merge: the gradient goes to the input that was live, through a Switch on the cond's
 * predicate (tf.cond leaves its name in _cond_pred). */
static int merge_grad(rt_grad_ctx *c) {
  const rt_node *n = c->node;
  if (!c->dy[0]) return RT_OK;
  const char *pred = rt_node_string(n, "_cond_pred", NULL);
  if (!pred || n->n_data_inputs != 2)
    return rt_error(c->st, RT_UNIMPLEMENTED,
                    "node '%s': tfsh has no gradient through tf.while_loop yet (only through tf.cond)",
                    n->name);
  const char *in[] = {c->dy[0], pred};
  char *sw = op_grad_node(c, "Switch", "cond_grad", 2, in, NULL, NULL);
  if (!sw) return c->st->code;
  c->dx[0] = output_name(sw, 0);
  c->dx[1] = output_name(sw, 1);
  free(sw);
  return RT_OK;
}

#define ENTER_ATTRS "T: type, frame_name: string, is_constant: bool = false, parallel_iterations: int = 10"

static const rt_op_def control_ops[] = {
  {.name = "Switch", .inputs = "data: T, pred: bool", .outputs = "output_false: T, output_true: T",
   .attrs = "T: type", .help = "data to output_true when pred, else to output_false (the other is dead).",
   .shape = switch_shape, .kernel = {[RT_DEV_CPU] = ctl_in_frames, [RT_DEV_GPU] = ctl_in_frames},
   .grad = switch_grad},
  {.name = "RefSwitch", .inputs = "data: Ref(T), pred: bool",
   .outputs = "output_false: Ref(T), output_true: Ref(T)", .attrs = "T: type",
   .help = "Switch for a reference (a variable a branch assigns).", .shape = switch_shape,
   .kernel = {[RT_DEV_CPU] = ctl_in_frames, [RT_DEV_GPU] = ctl_in_frames}, .grad = switch_grad},
  {.name = "Merge", .inputs = "inputs: N * T", .outputs = "output: T, value_index: int32",
   .attrs = "T: type, N: int >= 1", .help = "The first of its inputs that is not dead, and its index.",
   .shape = merge_shape, .kernel = {[RT_DEV_CPU] = ctl_in_frames, [RT_DEV_GPU] = ctl_in_frames},
   .grad = merge_grad},
  {.name = "RefMerge", .inputs = "inputs: N * Ref(T)", .outputs = "output: Ref(T), value_index: int32",
   .attrs = "T: type, N: int >= 1", .help = "Merge for references.", .shape = merge_shape,
   .kernel = {[RT_DEV_CPU] = ctl_in_frames, [RT_DEV_GPU] = ctl_in_frames}},
  {.name = "Enter", .inputs = "data: T", .outputs = "output: T", .attrs = ENTER_ATTRS,
   .help = "data, into the child frame frame_name (every iteration's when is_constant).",
   .shape = op_shape_unchanged, .kernel = {[RT_DEV_CPU] = ctl_forward, [RT_DEV_GPU] = ctl_forward}},
  {.name = "RefEnter", .inputs = "data: Ref(T)", .outputs = "output: Ref(T)", .attrs = ENTER_ATTRS,
   .help = "Enter for a reference.", .shape = op_shape_unchanged,
   .kernel = {[RT_DEV_CPU] = ctl_forward, [RT_DEV_GPU] = ctl_forward}},
  {.name = "Exit", .inputs = "data: T", .outputs = "output: T", .attrs = "T: type",
   .help = "data, out of its frame into the parent frame.", .shape = op_shape_unchanged,
   .kernel = {[RT_DEV_CPU] = ctl_forward, [RT_DEV_GPU] = ctl_forward}},
  {.name = "RefExit", .inputs = "data: Ref(T)", .outputs = "output: Ref(T)", .attrs = "T: type",
   .help = "Exit for a reference.", .shape = op_shape_unchanged,
   .kernel = {[RT_DEV_CPU] = ctl_forward, [RT_DEV_GPU] = ctl_forward}},
  {.name = "NextIteration", .inputs = "data: T", .outputs = "output: T", .attrs = "T: type",
   .help = "data, to the next iteration of its frame.", .shape = op_shape_unchanged,
   .kernel = {[RT_DEV_CPU] = ctl_forward, [RT_DEV_GPU] = ctl_forward}},
  {.name = "RefNextIteration", .inputs = "data: Ref(T)", .outputs = "output: Ref(T)", .attrs = "T: type",
   .help = "NextIteration for a reference.", .shape = op_shape_unchanged,
   .kernel = {[RT_DEV_CPU] = ctl_forward, [RT_DEV_GPU] = ctl_forward}},
  {.name = "LoopCond", .inputs = "input: bool", .outputs = "output: bool",
   .help = "A loop's condition: its Switches go on while it is true.", .shape = scalar_shape,
   .kernel = {[RT_DEV_CPU] = ctl_forward, [RT_DEV_GPU] = ctl_forward}},
};

void op_control_register(void) { rt_op_register(control_ops, OP_COUNT(control_ops)); }
