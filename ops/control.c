/* Control flow as TF1 builds it: Switch and Merge (tf.cond), Enter, Exit, NextIteration and
 * LoopCond (tf.while_loop frames). What they mean (dead outputs, frames, iterations) is the
 * executor's business (runtime/exec_cf.c): their kernels only forward a value, and Switch
 * and Merge, which the executor runs itself, refuse to run anywhere else. */
#include <pthread.h>
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

/* A loop variable's Enter and Merge may carry the shape tf.while_loop gives them (a shape
 * invariant, or none for a TensorArray not written yet): _cf_shape (list(int), -1 for an
 * unknown dimension) or _cf_unknown_shape, so every graph that holds them infers alike. */
static bool cf_shape_attr(const rt_node *n, rt_shape *s) {
  if (rt_node_bool(n, "_cf_unknown_shape", false)) {
    *s = rt_shape_unknown();
    return true;
  }
  const rt_attr_value *v = rt_node_attr(n, "_cf_shape");
  if (!v || v->kind != RT_ATTR_LIST_INT || v->list.n > RT_MAX_DIMS) return false;
  s->ndims = v->list.n;
  for (int i = 0; i < v->list.n; i++) s->dims[i] = ((const int64_t *)v->list.v)[i];
  return true;
}

static int enter_shape(rt_shape_ctx *c) {
  if (!cf_shape_attr(c->node, &c->out_shapes[0])) c->out_shapes[0] = c->in_shapes[0];
  return RT_OK;
}

static int merge_shape(rt_shape_ctx *c) {
  c->out_shapes[1] = rt_shape_scalar();
  if (cf_shape_attr(c->node, &c->out_shapes[0])) return RT_OK;
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

/* ---- stacks: a forward loop pushes what its gradient loop pops ------------------------------
 * A handle is an int64 naming a stack in a process-wide table; _StackNew makes a fresh one
 * each step, the pop that empties a stack frees it. Push and pop pass the handle on, so a
 * loop can chain them from one iteration to the next (the order of the iterations). */

typedef struct op_stack {
  int64_t id;
  int n, cap;
  rt_tensor **v;
  struct op_stack *next;
} op_stack;

static pthread_mutex_t stacks_mu = PTHREAD_MUTEX_INITIALIZER;
static op_stack *stacks;
static int64_t stacks_next = 1;

static op_stack *stack_find(int64_t id) {
  op_stack *s = stacks;
  while (s && s->id != id) s = s->next;
  return s;
}

/* The stack id in input 0; false (and the kernel's error set) when it is not one. A bool
 * rather than rt_kernel_error's code, so the compiler sees *id set wherever it is true. */
static bool handle_of(rt_kernel_ctx *c, int64_t *id) {
  const rt_tensor *h = c->inputs[0];
  if (h->dtype != RT_INT64 || rt_shape_numel(&h->shape) != 1) {
    rt_kernel_error(c, RT_INVALID_ARGUMENT, "a stack handle is an int64 scalar");
    return false;
  }
  *id = *(const int64_t *)rt_tensor_data(h);
  return true;
}

static int stack_new(rt_kernel_ctx *c) {
  op_stack *s = xcalloc(1, sizeof *s);
  pthread_mutex_lock(&stacks_mu);
  s->id = stacks_next++;
  s->next = stacks;
  stacks = s;
  pthread_mutex_unlock(&stacks_mu);
  rt_tensor_unref(c->outputs[0]);
  c->outputs[0] = rt_tensor_scalar_i64(s->id);
  return RT_OK;
}

static int stack_push(rt_kernel_ctx *c) {
  int64_t id;
  if (!handle_of(c, &id)) return c->st->code;
  pthread_mutex_lock(&stacks_mu);
  op_stack *s = stack_find(id);
  if (s) {
    if (s->n == s->cap) {
      s->cap = s->cap ? 2 * s->cap : 16;
      s->v = xrealloc(s->v, (size_t)s->cap * sizeof *s->v);
    }
    s->v[s->n++] = rt_tensor_ref(c->inputs[1]);
  }
  pthread_mutex_unlock(&stacks_mu);
  if (!s) return rt_kernel_error(c, RT_NOT_FOUND, "stack %lld does not exist", (long long)id);
  rt_tensor_unref(c->outputs[0]);
  c->outputs[0] = rt_tensor_ref(c->inputs[0]);
  return RT_OK;
}

static int stack_pop(rt_kernel_ctx *c) {
  int64_t id;
  if (!handle_of(c, &id)) return c->st->code;
  rt_tensor *t = NULL;
  pthread_mutex_lock(&stacks_mu);
  op_stack **p = &stacks;
  while (*p && (*p)->id != id) p = &(*p)->next;
  op_stack *s = *p;
  if (s && s->n > 0) {
    t = s->v[--s->n];
    if (s->n == 0) {   /* emptied: the gradient loop is done with it */
      *p = s->next;
      free(s->v);
      free(s);
    }
  }
  pthread_mutex_unlock(&stacks_mu);
  if (!t) return rt_kernel_error(c, RT_OUT_OF_RANGE, "pop from an empty or unknown stack %lld", (long long)id);
  rt_tensor_unref(c->outputs[0]);
  c->outputs[0] = t;
  rt_tensor_unref(c->outputs[1]);
  c->outputs[1] = rt_tensor_ref(c->inputs[0]);
  return RT_OK;
}

static int stack_new_shape(rt_shape_ctx *c) {
  c->out_shapes[0] = rt_shape_scalar();
  return RT_OK;
}

static int stack_pop_shape(rt_shape_ctx *c) {
  const rt_attr_value *v = rt_node_attr(c->node, "elem_shape");
  c->out_shapes[0] = v && v->kind == RT_ATTR_SHAPE ? v->shape : rt_shape_unknown();
  c->out_shapes[1] = rt_shape_scalar();
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
   .shape = enter_shape, .kernel = {[RT_DEV_CPU] = ctl_forward, [RT_DEV_GPU] = ctl_forward}},
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
  {.name = "_StackNew", .outputs = "handle: int64", .help = "A new, empty stack (a loop's gradient).",
   .shape = stack_new_shape, .kernel = {[RT_DEV_CPU] = stack_new, [RT_DEV_GPU] = stack_new},
   .flags = RT_OP_STATEFUL | RT_OP_INTERNAL},
  {.name = "_StackPush", .inputs = "handle: int64, elem: T", .outputs = "handle_out: int64", .attrs = "T: type",
   .help = "Push elem on the stack; the handle passes on.", .shape = stack_new_shape,
   .kernel = {[RT_DEV_CPU] = stack_push, [RT_DEV_GPU] = stack_push}, .flags = RT_OP_STATEFUL | RT_OP_INTERNAL},
  {.name = "_StackPop", .inputs = "handle: int64", .outputs = "elem: elem_type, handle_out: int64",
   .attrs = "elem_type: type, elem_shape: shape = ?", .help = "Pop the last element pushed; the handle passes on.",
   .shape = stack_pop_shape, .kernel = {[RT_DEV_CPU] = stack_pop, [RT_DEV_GPU] = stack_pop},
   .flags = RT_OP_STATEFUL | RT_OP_INTERNAL},
  {.name = "LoopCond", .inputs = "input: bool", .outputs = "output: bool",
   .help = "A loop's condition: its Switches go on while it is true.", .shape = scalar_shape,
   .kernel = {[RT_DEV_CPU] = ctl_forward, [RT_DEV_GPU] = ctl_forward}},
};

void op_control_register(void) { rt_op_register(control_ops, OP_COUNT(control_ops)); }
