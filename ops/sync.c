/* Synchronous replicas (tf.train.SyncReplicasOptimizer): a gradient accumulator per
 * variable and a token queue, kept as resources on the variable's device (the ps).
 *
 *   _AccumApply(local_step, grad)   adds grad unless it is stale (computed before the
 *                                   accumulator's global step): stale ones are dropped
 *   _AccumTake(num_required)        waits for num_required gradients, outputs their mean,
 *                                   resets, and advances the accumulator's global step
 *   _AccumSetGlobalStep(step)       sets the accumulator's global step (the chief's init:
 *                                   the training's global step, restored or not)
 *   _TokenEnqueue(tokens)           appends int64 tokens
 *   _TokenDequeue()                 waits for a token and takes it
 *
 * Waits poll the step's cancellation every 50 ms, so an aborted step never hangs. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "ops/ops_int.h"
#include "runtime/device.h"
#include "runtime/step.h"

typedef struct accum {
  rt_tensor *sum;      /* float64 sum of the gradients taken in, shape of the first */
  int count;
  int64_t global_step; /* gradients computed before this step are stale */
  int64_t dropped;
} accum;

static void accum_free(void *p) {
  accum *a = p;
  if (a) rt_tensor_unref(a->sum);
  free(a);
}

typedef struct tokens {
  int64_t *v;
  int n, cap, head;
} tokens;

static void tokens_free(void *p) {
  tokens *t = p;
  if (t) free(t->v);
  free(t);
}

static rt_resource *named(rt_kernel_ctx *c, void *(*make)(void), void (*fr)(void *)) {
  rt_resource *r = rt_device_resource_in(c->device, c->scope, "", rt_node_string(c->node, "shared_name", c->node->name), true);
  if (!r) return NULL;
  pthread_mutex_lock(&r->mu);
  if (!r->state) {
    r->state = make();
    r->state_free = fr;
  }
  pthread_mutex_unlock(&r->mu);
  return r;
}

static void *new_accum(void) { return xcalloc(1, sizeof(accum)); }
static void *new_tokens(void) { return xcalloc(1, sizeof(tokens)); }

static int accum_apply(rt_kernel_ctx *c) {
  rt_resource *r = named(c, new_accum, accum_free);
  if (!r) return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  int64_t local_step = rt_tensor_get_i64(c->inputs[0], 0);
  rt_tensor *g = c->inputs[1];
  int rc = RT_OK;
  pthread_mutex_lock(&r->mu);
  accum *a = r->state;
  if (local_step < a->global_step) {
    a->dropped++;   /* stale: computed before the last aggregated step */
  } else {
    if (!a->sum) a->sum = rt_tensor_new(RT_DOUBLE, &g->shape);
    if (!a->sum || !rt_shape_equal(&a->sum->shape, &g->shape)) {
      char x[64], y[64];
      rc = rt_kernel_error(c, RT_INVALID_ARGUMENT, "gradient of shape %s for an accumulator of shape %s",
                           op_shape_tf(&g->shape, x, sizeof x), a->sum ? op_shape_tf(&a->sum->shape, y, sizeof y) : "?");
    } else {
      double *s = rt_tensor_data(a->sum);
      for (int64_t i = 0; i < rt_tensor_numel(g); i++) s[i] += rt_tensor_get_f64(g, i);
      a->count++;
      pthread_cond_broadcast(&r->cv);
    }
  }
  pthread_mutex_unlock(&r->mu);
  return rc;
}

static int accum_take(rt_kernel_ctx *c) {
  rt_resource *r = named(c, new_accum, accum_free);
  if (!r) return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  int64_t need = rt_tensor_get_i64(c->inputs[0], 0);
  rt_dtype dt = rt_node_type(c->node, "dtype", RT_FLOAT);
  int rc = RT_OK;
  pthread_mutex_lock(&r->mu);
  accum *a = r->state;
  while (a->count < need)
    if (!op_wait_a_bit(c, r)) {
      rc = rt_kernel_error(c, RT_CANCELLED, "cancelled while waiting for %lld gradients (%d so far)",
                           (long long)need, a->count);
      break;
    }
  if (!rc) {
    rt_tensor *o = rt_kernel_output(c, 0, dt, &a->sum->shape);
    if (!o) {
      rc = c->st->code;
    } else {
      double *s = rt_tensor_data(a->sum);
      for (int64_t i = 0; i < rt_tensor_numel(o); i++) {
        double m = s[i] / a->count;
        if (dt == RT_FLOAT) ((float *)rt_tensor_data(o))[i] = (float)m;
        else ((double *)rt_tensor_data(o))[i] = m;
        s[i] = 0;
      }
      a->count = 0;
      a->global_step++;
    }
  }
  pthread_mutex_unlock(&r->mu);
  return rc;
}

static int accum_set_step(rt_kernel_ctx *c) {
  rt_resource *r = named(c, new_accum, accum_free);
  if (!r) return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  pthread_mutex_lock(&r->mu);
  ((accum *)r->state)->global_step = rt_tensor_get_i64(c->inputs[0], 0);
  pthread_mutex_unlock(&r->mu);
  return RT_OK;
}

static int token_enqueue(rt_kernel_ctx *c) {
  rt_resource *r = named(c, new_tokens, tokens_free);
  if (!r) return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  rt_tensor *in = c->inputs[0];
  pthread_mutex_lock(&r->mu);
  tokens *t = r->state;
  for (int64_t i = 0; i < rt_tensor_numel(in); i++) {
    if (t->n == t->cap) {
      /* compact, then grow */
      if (t->head) memmove(t->v, t->v + t->head, (size_t)(t->n - t->head) * sizeof *t->v);
      t->n -= t->head;
      t->head = 0;
      if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 16;
        t->v = xrealloc(t->v, (size_t)t->cap * sizeof *t->v);
      }
    }
    t->v[t->n++] = rt_tensor_get_i64(in, i);
  }
  pthread_cond_broadcast(&r->cv);
  pthread_mutex_unlock(&r->mu);
  return RT_OK;
}

static int token_dequeue(rt_kernel_ctx *c) {
  rt_resource *r = named(c, new_tokens, tokens_free);
  if (!r) return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  int rc = RT_OK;
  int64_t tok = 0;
  pthread_mutex_lock(&r->mu);
  tokens *t = r->state;
  while (t->head == t->n)
    if (!op_wait_a_bit(c, r)) {
      rc = rt_kernel_error(c, RT_CANCELLED, "cancelled while waiting for a sync token");
      break;
    }
  if (!rc) tok = t->v[t->head++];
  pthread_mutex_unlock(&r->mu);
  if (rc) return rc;
  rt_shape s = rt_shape_scalar();
  rt_tensor *o = rt_kernel_output(c, 0, RT_INT64, &s);
  if (!o) return c->st->code;
  *(int64_t *)rt_tensor_data(o) = tok;
  return RT_OK;
}

static int scalar_out(rt_shape_ctx *c) {
  c->out_shapes[0] = rt_shape_scalar();
  return RT_OK;
}

static const rt_op_def sync_ops[] = {
  {.name = "_AccumApply", .inputs = "local_step: int64, gradient: dtype",
   .attrs = "dtype: {float, double}, shared_name: string",
   .help = "Add a gradient to an accumulator unless it is stale.", .kernel = {[RT_DEV_CPU] = accum_apply},
   .flags = RT_OP_STATEFUL},
  {.name = "_AccumTake", .inputs = "num_required: int32", .outputs = "average: dtype",
   .attrs = "dtype: {float, double}, shared_name: string",
   .help = "Wait for num_required gradients and output their mean.", .kernel = {[RT_DEV_CPU] = accum_take},
   .flags = RT_OP_STATEFUL},
  {.name = "_AccumSetGlobalStep", .inputs = "new_global_step: int64", .attrs = "shared_name: string",
   .help = "Set an accumulator's global step (gradients computed before it are stale).",
   .kernel = {[RT_DEV_CPU] = accum_set_step}, .flags = RT_OP_STATEFUL},
  {.name = "_TokenEnqueue", .inputs = "tokens: int64", .attrs = "shared_name: string",
   .help = "Append tokens to a sync token queue.", .kernel = {[RT_DEV_CPU] = token_enqueue},
   .flags = RT_OP_STATEFUL},
  {.name = "_TokenDequeue", .outputs = "token: int64", .attrs = "shared_name: string",
   .help = "Wait for a token of a sync token queue and take it.", .shape = scalar_out,
   .kernel = {[RT_DEV_CPU] = token_dequeue}, .flags = RT_OP_STATEFUL | RT_OP_SOURCE},
};

void op_sync_register(void) {
  rt_op_register(sync_ops, OP_COUNT(sync_ops));
}
