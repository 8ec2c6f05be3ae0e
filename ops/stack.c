/* Stacks as TF1's gradient of a tf.while_loop (control flow v1) uses them: StackV2 makes a
 * per-step stack resource named by a DT_RESOURCE handle; the forward loop pushes each
 * iteration's value (StackPushV2, which passes the value on) and the gradient loop pops them
 * back in reverse order (StackPopV2). StackCloseV2 drops what is left. Like a TensorArray
 * (ops/tensor_array.c), the stack lives in the step's container of its device
 * (rt_step_container), so the executor drops it when the step ends however it ends.
 * Pushes keep a reference to the value (no copy). Error messages are TF's words. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "ops/ops_int.h"
#include "runtime/device.h"
#include "runtime/step.h"

typedef struct stack {
  char name[256];      /* "<stack_name or node name>_<count>": what messages call it */
  rt_dtype dtype;
  int64_t max_size;    /* < 0: no limit */
  bool closed;
  int64_t n, cap;
  rt_tensor **v;
} stack;

static void stack_free(void *p) {
  stack *s = p;
  for (int64_t i = 0; i < s->n; i++) rt_tensor_unref(s->v[i]);
  free(s->v);
  free(s);
}

static int create_kernel(rt_kernel_ctx *c) {
  if (c->inputs[0]->shape.ndims != 0)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "max_size must be a scalar, but had shape: %s",
                           op_shape_tf(&c->inputs[0]->shape, (char[128]){0}, 128));
  stack *s = xcalloc(1, sizeof *s);
  /* TF's name: the stack_name attr (else the node's name) and a count, "f_acc_3": one stack
   * per run of the node (an iteration of an outer loop makes a new one) */
  static atomic_int counter;
  const char *base = rt_node_string(c->node, "stack_name", "");
  snprintf(s->name, sizeof s->name, "%s_%d", base[0] ? base : c->node->name, atomic_fetch_add(&counter, 1));
  s->dtype = rt_node_type(c->node, "elem_type", RT_FLOAT);
  s->max_size = rt_tensor_get_i64(c->inputs[0], 0);
  char container[64], name[300];
  rt_step_container(c->step, container, sizeof container);
  snprintf(name, sizeof name, "%s", s->name);
  rt_resource *r = c->device ? rt_device_resource(c->device, container, name, true) : NULL;
  if (!r) {
    stack_free(s);
    return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  }
  pthread_mutex_lock(&r->mu);
  if (r->state) {
    stack_free(s);
  } else {
    r->state = s;
    r->state_free = stack_free;
  }
  pthread_mutex_unlock(&r->mu);
  if (c->step) atomic_store(&c->step->has_step_resources, true);
  rt_shape sc = rt_shape_scalar();
  rt_tensor *h = rt_tensor_new(RT_RESOURCE, &sc);
  rt_handle hd = {c->device ? c->device->name : "", container, name, "Stack"};
  if (!h || rt_handle_set(h, 0, &hd)) {
    rt_tensor_unref(h);
    return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  }
  rt_tensor_unref(c->outputs[0]);
  c->outputs[0] = h;
  return RT_OK;
}

/* The stack input 0 names, locked (NULL with the error set). */
static rt_resource *lock_stack(rt_kernel_ctx *c, stack **out) {
  rt_handle h;
  if (!rt_handle_get(c->inputs[0], 0, &h) || strcmp(h.kind, "Stack")) {
    rt_kernel_error(c, RT_INVALID_ARGUMENT, "input 0 is not a Stack handle");
    return NULL;
  }
  if (c->device && h.device[0] && strcmp(h.device, c->device->name)) {
    rt_kernel_error(c, RT_INVALID_ARGUMENT, "Stack %s lives on %s, not on %s where this op runs", h.name, h.device,
                    c->device->name);
    return NULL;
  }
  rt_resource *r = c->device ? rt_device_resource(c->device, h.container, h.name, false) : NULL;
  if (r) pthread_mutex_lock(&r->mu);
  if (!r || !r->state) {
    if (r) pthread_mutex_unlock(&r->mu);
    rt_kernel_error(c, RT_NOT_FOUND, "Container %s does not exist. (Could not find resource: %s/%s)", h.container,
                    h.container, h.name);
    return NULL;
  }
  *out = r->state;
  if ((*out)->closed) {
    pthread_mutex_unlock(&r->mu);
    rt_kernel_error(c, RT_INVALID_ARGUMENT, "Stack[%s] has already been closed.", (*out)->name);
    return NULL;
  }
  return r;
}

static int push_kernel(rt_kernel_ctx *c) {
  stack *s;
  rt_resource *r = lock_stack(c, &s);
  if (!r) return c->st->code;
  rt_tensor *v = c->inputs[1];
  int rc = RT_OK;
  if (v->dtype != s->dtype) {   /* TF pushes it anyway; a pop would then hand out the wrong type */
    rc = rt_kernel_error(c, RT_INVALID_ARGUMENT, "Stack[%s] holds %s, not %s", s->name, op_tf_type(s->dtype),
                         op_tf_type(v->dtype));
  } else if (s->max_size >= 0 && s->n >= s->max_size) {
    rc = rt_kernel_error(c, RT_INVALID_ARGUMENT, "Stack[%s] overflowed its max_size (%lld)", s->name,
                         (long long)s->max_size);
  } else {
    if (s->n == s->cap) {
      int64_t cap = s->cap ? 2 * s->cap : 16;
      s->v = xrealloc(s->v, (size_t)cap * sizeof *s->v);
      s->cap = cap;
    }
    s->v[s->n++] = rt_tensor_ref(v);
  }
  pthread_mutex_unlock(&r->mu);
  if (rc) return rc;
  rt_tensor_unref(c->outputs[0]);
  c->outputs[0] = rt_tensor_ref(v);
  return RT_OK;
}

static int pop_kernel(rt_kernel_ctx *c) {
  stack *s;
  rt_resource *r = lock_stack(c, &s);
  if (!r) return c->st->code;
  rt_dtype want = rt_node_type(c->node, "elem_type", s->dtype);
  rt_tensor *v = NULL;
  int rc = RT_OK;
  if (s->n == 0) rc = rt_kernel_error(c, RT_INVALID_ARGUMENT, "Stack[%s] is empty when calling Pop().", s->name);
  else if (want != s->dtype)
    rc = rt_kernel_error(c, RT_INVALID_ARGUMENT, "Stack[%s] holds %s but the pop asks for %s", s->name,
                         op_tf_type(s->dtype), op_tf_type(want));
  else v = s->v[--s->n];
  pthread_mutex_unlock(&r->mu);
  if (rc) return rc;
  rt_tensor_unref(c->outputs[0]);
  c->outputs[0] = v;
  return RT_OK;
}

static int close_kernel(rt_kernel_ctx *c) {
  stack *s;
  rt_resource *r = lock_stack(c, &s);
  if (!r) return c->st->code;
  for (int64_t i = 0; i < s->n; i++) rt_tensor_unref(s->v[i]);
  s->n = 0;
  s->closed = true;
  pthread_mutex_unlock(&r->mu);
  return RT_OK;
}

static int trigger_kernel(rt_kernel_ctx *c) {
  (void)c;
  return RT_OK;
}

static int handle_shape(rt_shape_ctx *c) {
  c->out_shapes[0] = rt_shape_scalar();
  return RT_OK;
}

static int push_shape(rt_shape_ctx *c) {
  c->out_shapes[0] = c->in_shapes[1];
  return RT_OK;
}

static const rt_op_def stack_ops[] = {
  {.name = "StackV2", .inputs = "max_size: int32", .outputs = "handle: resource",
   .attrs = "elem_type: type, stack_name: string = \"\"",
   .help = "A stack of tensors of elem_type (at most max_size of them; < 0: no limit), kept for this step.",
   .shape = handle_shape, .kernel = {[RT_DEV_CPU] = create_kernel}, .grad = op_no_grad, .flags = RT_OP_STATEFUL},
  {.name = "StackPushV2", .inputs = "handle: resource, elem: T", .outputs = "output: T",
   .attrs = "T: type, swap_memory: bool = false",
   .help = "Push elem on a stack (kept, not copied) and pass it on.",
   .shape = push_shape, .kernel = {[RT_DEV_CPU] = push_kernel}, .grad = op_no_grad, .flags = RT_OP_STATEFUL},
  {.name = "StackPopV2", .inputs = "handle: resource", .outputs = "elem: elem_type", .attrs = "elem_type: type",
   .help = "Pop the top of a stack.",
   .shape = NULL, .kernel = {[RT_DEV_CPU] = pop_kernel}, .grad = op_no_grad, .flags = RT_OP_STATEFUL},
  {.name = "StackCloseV2", .inputs = "handle: resource",
   .help = "Close a stack: what it holds goes, and later uses fail.",
   .kernel = {[RT_DEV_CPU] = close_kernel}, .grad = op_no_grad, .flags = RT_OP_STATEFUL},
  {.name = "ControlTrigger",
   .help = "Does nothing; runs even when its control inputs are dead (the executor), so what waits on it runs.",
   .kernel = {[RT_DEV_CPU] = trigger_kernel}, .grad = op_no_grad},
};

void op_stack_register(void) { rt_op_register(stack_ops, OP_COUNT(stack_ops)); }
