#include "runtime/exec.h"
#include "runtime/gpu/gpu.h"
#include "base/alloc.h"

#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/op.h"
#include "runtime/trace.h"   /* views: per-node trace records */
#include "runtime/exec_int.h"
#include "runtime/step.h"

void rt_rendezvous_key(const rt_node *n, char *buf, size_t len) {
  snprintf(buf, len, "%s;%016" PRIx64 ";%s;%s;0:0", rt_node_string(n, "send_device", ""),
           (uint64_t)rt_node_int(n, "send_device_incarnation", 0),
           rt_node_string(n, "recv_device", ""), rt_node_string(n, "tensor_name", ""));
}

void rt_exec_free(rt_exec *x) {
  if (!x) return;
  rt_cf_free(x->cf);
  for (int i = 0; x->nodes && i < x->n; i++) free(x->nodes[i].key);
  free(x->in_all);
  free(x->cons_all);
  free(x->ref_all);
  for (int i = 0; i < x->n_slots; i++) rt_tensor_unref(x->reuse[i]);
  for (int i = 0; x->state && i < x->n; i++) free(x->state[i]);
  free(x->state);
  free(x->slot);
  free(x->slot_mu);
  free(x->nodes);
  free(x->reuse);
  free(x->values);
  free(x->pending);
  free(x->ready);
  free(x->uses);
  free(x->needed);
  free(x->need);
  free(x->key);
  free(x->fed);
  free(x);
}

int rt_exec_new(const rt_graph *g, rt_device *dev, rt_exec **out, rt_status *st) {
  rt_exec *x = xcalloc(1, sizeof *x);
  x->g = g;
  x->dev = dev;
  x->n = g->n_nodes;
  x->nodes = xcalloc((size_t)x->n + 1, sizeof *x->nodes);
  size_t n_data = 0, n_edges = 0;
  for (int i = 0; i < x->n; i++) {
    n_data += (size_t)g->nodes[i]->n_data_inputs;
    n_edges += (size_t)g->nodes[i]->n_inputs;
  }
  x->in_all = xcalloc(n_data + 1, sizeof *x->in_all);
  x->ref_all = xcalloc(n_data + 1, sizeof *x->ref_all);
  x->cons_all = xcalloc(n_edges + 1, sizeof *x->cons_all);
  for (int i = 0; i < x->n; i++) {
    const rt_node *n = g->nodes[i];
    xnode *xn = &x->nodes[i];
    xn->node = n;
    xn->first_out = x->n_slots;
    x->n_slots += n->n_outputs;
    xn->is_send = n->op[0] == '_' && !strcmp(n->op, "_Send");
    xn->is_recv = n->op[0] == '_' && !strcmp(n->op, "_Recv");
    if (xn->is_send || xn->is_recv) {
      char key[1024];
      rt_rendezvous_key(n, key, sizeof key);
      xn->key = xstrdup(key);
    } else {
      xn->kernel = rt_op_kernel(n->def, dev->fake_gpu ? RT_DEV_CPU : dev->type);
      if (!xn->kernel && !(n->def && (n->def->flags & RT_OP_SOURCE) &&
                           !strcmp(n->op, "Placeholder"))) {
        rt_exec_free(x);
        return rt_error(st, RT_INVALID_ARGUMENT,
                        "No kernel for op %s on device %s (node '%s')", n->op, dev->name,
                        n->name);
      }
    }
  }
  /* Which data inputs are references, from the op's signature. */
  size_t off = 0;
  for (int i = 0; i < x->n; i++, off += (size_t)g->nodes[i - 1]->n_data_inputs) {
    const rt_node *n = g->nodes[i];
    const rt_op_sig *sig = rt_op_find_cached(n->op);
    x->nodes[i].ref_in = x->ref_all + off;
    x->nodes[i].in_slots = x->in_all + off;
    for (int a = 0, k = 0; sig && a < sig->n_in; a++) {
      int count = sig->in[a].number_attr[0] ? (int)rt_node_int(n, sig->in[a].number_attr, 0) : 1;
      for (int j = 0; j < count && k < n->n_data_inputs; j++, k++)
        x->nodes[i].ref_in[k] = sig->in[a].ref;
    }
  }
  /* Consumers: count first, then fill. */
  for (int i = 0; i < x->n; i++) {
    const rt_node *n = g->nodes[i];
    for (int k = 0; k < n->n_inputs; k++) {
      const rt_edge *e = &n->edges[k];
      x->nodes[e->node].n_consumers++;
      if (e->index >= 0) x->nodes[i].in_slots[k] = x->nodes[e->node].first_out + e->index;
    }
  }
  off = 0;
  for (int i = 0; i < x->n; i++) {
    x->nodes[i].consumers = x->cons_all + off;
    off += (size_t)x->nodes[i].n_consumers;
    x->nodes[i].n_consumers = 0;
  }
  for (int i = 0; i < x->n; i++)
    for (int k = 0; k < g->nodes[i]->n_inputs; k++) {
      xnode *src = &x->nodes[g->nodes[i]->edges[k].node];
      src->consumers[src->n_consumers++] = i;
    }
  size_t ns = (size_t)x->n_slots + 1, nn = (size_t)x->n + 1;
  x->reuse = xcalloc(ns, sizeof *x->reuse);
  x->values = xcalloc(ns, sizeof *x->values);
  x->uses = xcalloc(ns, sizeof *x->uses);
  x->fed = xcalloc(ns, sizeof *x->fed);
  x->pending = xcalloc(nn, sizeof *x->pending);
  x->ready = xcalloc(nn, sizeof *x->ready);
  x->needed = xcalloc(nn, sizeof *x->needed);
  x->state = xcalloc(nn, sizeof *x->state);
  x->slot = xcalloc(nn, sizeof *x->slot);
  x->slot_mu = xcalloc(nn, sizeof *x->slot_mu);
  for (int i = 0; i < x->n; i++) x->slot[i] = &x->state[i];
  if (rt_cf_graph(g) && rt_cf_new(x, st)) {
    rt_exec_free(x);
    return st->code;
  }
  *out = x;
  return RT_OK;
}

/* Slot of tensor name "x:1" in this fragment, or -1. */
int rt_exec_slot_of(rt_exec *x, const char *name, rt_status *st) {
  rt_node *n;
  int idx;
  if (rt_graph_output(x->g, name, &n, &idx, st)) return -1;
  return x->nodes[n->id].first_out + idx;
}

rt_tensor *rt_kernel_output(rt_kernel_ctx *ctx, int i, rt_dtype t, const rt_shape *shape) {
  rt_tensor *r = ctx->reuse ? ctx->reuse[i] : NULL;
  int64_t n = rt_shape_numel(shape);
  if (r && n >= 0 && t != RT_STRING && r->dtype != RT_STRING &&
      atomic_load(&r->refs) == 1 && atomic_load(&r->buf->refs) == 1 && !r->buf->free_fn &&
      r->buf->nbytes == (size_t)n * rt_dtype_size(t)) {
    ctx->reuse[i] = NULL;
    r->dtype = t;
    r->shape = *shape;
  } else {
    r = rt_tensor_new_uninit(t, shape);
    if (!r) {
      rt_kernel_error(ctx, RT_RESOURCE_EXHAUSTED, "out of memory allocating output %d", i);
      return NULL;
    }
  }
  rt_tensor_unref(ctx->outputs[i]);
  ctx->outputs[i] = r;
  return r;
}

rt_tensor *rt_kernel_output_from(rt_kernel_ctx *ctx, int i, uint64_t inputs, rt_dtype t,
                                 const rt_shape *shape) {
  uint64_t can = inputs & ctx->forward;
  for (int k = 0; can && k < ctx->n_inputs && k < 64; k++) {
    rt_tensor *x = ctx->inputs[k];
    if (!(can >> k & 1) || x->dtype != t || !rt_shape_equal(&x->shape, shape)) continue;
    ctx->forward &= ~(UINT64_C(1) << k);   /* one output per input */
    ctx->forwarded |= UINT64_C(1) << k;
    rt_tensor_unref(ctx->outputs[i]);
    ctx->outputs[i] = rt_tensor_ref(x);
    return x;
  }
  return rt_kernel_output(ctx, i, t, shape);
}

/* Mark what the fetches and targets need, stopping at fed outputs. */
/* Append n strings, each with its '\0', then a '\1' ending the list, to x->key at *len. */
static void key_add(rt_exec *x, size_t *len, int n, const char *const *v) {
  for (int i = 0; i <= n; i++) {
    size_t l = i < n ? strlen(v[i]) + 1 : 1;
    if (*len + l > x->key_cap) x->key = xrealloc(x->key, x->key_cap = 2 * (*len + l) + 64);
    if (i < n) memcpy(x->key + *len, v[i], l);
    else x->key[*len] = '\1';
    *len += l;
  }
}

static int mark_needed(rt_exec *x, const rt_run_args *a, int *stack, rt_status *st);

int rt_exec_mark_needed(rt_exec *x, const rt_run_args *a, int *stack, rt_status *st) {
  size_t len = 0;
  key_add(x, &len, a->n_feeds, a->feed_names);
  key_add(x, &len, a->n_fetches, a->fetch_names);
  key_add(x, &len, a->n_targets, a->targets);
  if (len == x->need_len && !memcmp(x->key, x->need, len)) return RT_OK;   /* as last step */
  x->need_len = 0;
  int rc = mark_needed(x, a, stack, st);
  if (rc) return rc;
  char *k = x->need;   /* keep this key; the old one becomes the scratch */
  size_t c = x->need_cap;
  x->need = x->key, x->need_cap = x->key_cap, x->need_len = len;
  x->key = k, x->key_cap = c;
  return RT_OK;
}

static int mark_needed(rt_exec *x, const rt_run_args *a, int *stack, rt_status *st) {
  int sp = 0;
  memset(x->needed, 0, (size_t)x->n * sizeof *x->needed);
  for (int i = 0; i < a->n_fetches; i++) {
    int s = rt_exec_slot_of(x, a->fetch_names[i], st);
    if (s < 0) return st->code;
    if (x->fed[s]) continue;
    rt_node *n;
    int idx;
    rt_graph_output(x->g, a->fetch_names[i], &n, &idx, st);
    if (!x->needed[n->id]) {
      x->needed[n->id] = true;
      stack[sp++] = n->id;
    }
  }
  for (int i = 0; i < a->n_targets; i++) {
    rt_node *n = rt_graph_find(x->g, a->targets[i]);
    if (!n)
      return rt_error(st, RT_NOT_FOUND, "The operation '%s' does not exist in the graph.",
                      a->targets[i]);
    if (!x->needed[n->id]) {
      x->needed[n->id] = true;
      stack[sp++] = n->id;
    }
  }
  /* marked when pushed, so each node is pushed once and the stack (n) cannot overrun */
  while (sp) {
    int id = stack[--sp];
    const rt_node *n = x->g->nodes[id];
    for (int k = 0; k < n->n_inputs; k++) {
      const rt_edge *e = &n->edges[k];
      if (e->index >= 0 && x->fed[x->nodes[e->node].first_out + e->index]) continue;
      if (!x->needed[e->node]) {
        x->needed[e->node] = true;
        stack[sp++] = e->node;
      }
    }
  }
  return RT_OK;
}

static void drop_values(rt_exec *x) {
  for (int s = 0; s < x->n_slots; s++) {
    rt_tensor_unref(x->values[s]);
    x->values[s] = NULL;
  }
}

/* A value nobody else can change: a buffer shared with a variable (or anything else) is
 * copied before it leaves the executor (fetch, send), so later updates cannot reach it. */
rt_tensor *rt_exec_private_value(rt_tensor *t) {
  if (t->buf && atomic_load(&t->buf->refs) == 1 && !t->ref) return rt_tensor_ref(t);
  return rt_tensor_copy(t);
}

/* A tensor arriving at this executor (_Recv, feed) goes to its device (gpu.h's hook). */
int rt_exec_accept(rt_exec *x, rt_tensor **t, rt_status *st) {
  if (*t == RT_DEAD)   /* partition.c marks the _Recvs that may get one (exec_cf.c takes them) */
    return rt_error(st, RT_INTERNAL, "a dead value reached a part of the graph without control flow");
  if (x->dev->type == RT_DEV_CPU || x->dev->fake_gpu || !*t) return RT_OK;
  rt_tensor *d = NULL;
  int rc = rt_device_accept(x->dev, *t, &d, st);
  rt_tensor_unref(*t);
  *t = d;
  return rc;
}

int rt_exec_kernel(rt_exec *x, xnode *xn, rt_step *step, rt_tensor **inputs, rt_tensor **outputs,
                   rt_tensor **reuse, uint64_t *fwd, rt_status *st) {
  const rt_node *n = xn->node;
  uint64_t may_forward = fwd && x->dev->type == RT_DEV_CPU ? *fwd : 0;
  if (fwd) *fwd = 0;
  for (int k = 0; k < n->n_data_inputs; k++) {
    if (!inputs[k])
      return rt_error(st, RT_INTERNAL, "node '%s': input %d ('%s') has no value", n->name, k,
                      n->inputs[k]);
    if (!inputs[k]->buf && !xn->ref_in[k] && !xn->forwards) {
      char var[256];
      int idx;
      if (!rt_tensor_name_parse(n->inputs[k], var, sizeof var, &idx)) snprintf(var, sizeof var, "?");
      return rt_error(st, RT_FAILED_PRECONDITION,
                      "Attempting to use uninitialized value %s\n\t [[node %s (op: %s)]]", var,
                      n->name, n->op);
    }
  }
  int rc;
  if (xn->is_send) {
    /* A rendezvous that copies the bytes anyway (into shared memory) takes a shared buffer
     * as it is: its copy is the snapshot. Otherwise the value goes private first. A value
     * in device memory leaves through the host (gpu.h: the device hook). */
    rt_tensor *host = NULL;
    rc = rt_device_to_host(x->dev, inputs[0], &host, st);
    rc = rc                   ? rc
         : step->send_snapshot ? step->send_snapshot(step, xn->key, host, st)
                               : RT_UNAVAILABLE;
    if (rc == RT_UNAVAILABLE) {
      rt_tensor *v = rt_exec_private_value(host);
      rc = !v ? rt_error(st, RT_RESOURCE_EXHAUSTED, "out of memory")
           : step->send ? step->send(step, xn->key, v, st)
                        : rt_error(st, RT_INTERNAL, "node '%s': no rendezvous for _Send", n->name);
      rt_tensor_unref(v);
    }
    rt_tensor_unref(host);
  } else if (!xn->kernel) {
    rt_shape sh = rt_node_attr(n, "shape") ? rt_node_attr(n, "shape")->shape : rt_shape_unknown();
    char shs[128];
    rt_shape_str(&sh, shs, sizeof shs);
    rc = rt_error(st, RT_INVALID_ARGUMENT,
                  "You must feed a value for placeholder tensor '%s' with dtype %s and shape %s",
                  n->name, rt_dtype_name(rt_node_type(n, "dtype", RT_FLOAT)), shs);
  } else {
    rt_kernel_ctx ctx = {
      .node = n, .n_inputs = n->n_data_inputs, .inputs = inputs, .n_outputs = n->n_outputs,
      .outputs = outputs, .device = x->dev, .step = step, .st = st,
      .reuse = reuse, .state = x->slot[n->id], .state_mu = x->slot_mu[n->id],
      .scope = x->scope, .forward = may_forward,
    };
    atomic_store_explicit(&step->current_op, n->name, memory_order_release);   /* views; a plain store on x86 */
    bool held = rt_inter_acquire();
    rc = xn->kernel(&ctx);
    if (held) rt_inter_release();
    if (fwd) *fwd = ctx.forwarded;
    for (int i = 0; !rc && i < n->n_outputs; i++)
      if (!ctx.outputs[i])
        rc = rt_error(st, RT_INTERNAL, "node '%s' (%s) produced no output %d", n->name, n->op, i);
  }
  return rc;
}

static int run_node(rt_exec *x, xnode *xn, rt_step *step, rt_status *st) {
  const rt_node *n = xn->node;
  rt_tensor *ins[64], **inputs = ins;
  if (n->n_data_inputs > 64) inputs = xcalloc((size_t)n->n_data_inputs, sizeof *inputs);
  uint64_t fwd = 0;   /* an input whose last use this is may become an output */
  for (int k = 0; k < n->n_data_inputs; k++) {
    int s = xn->in_slots[k];
    inputs[k] = x->values[s];
    if (k < 64 && x->uses[s] == 1 && !x->fed[s] && !xn->ref_in[k] && rt_exec_forwardable(inputs[k]))
      fwd |= UINT64_C(1) << k;
  }
  int rc = rt_exec_kernel(x, xn, step, inputs, x->values + xn->first_out, x->reuse + xn->first_out,
                          &fwd, st);
  for (int k = 0; fwd && k < n->n_data_inputs && k < 64; k++)
    if (fwd >> k & 1) {   /* the output holds it now: the slot lets go (release_inputs skips it) */
      rt_tensor_unref(x->values[xn->in_slots[k]]);
      x->values[xn->in_slots[k]] = NULL;
    }
  if (inputs != ins) free(inputs);
  return rc;
}

static bool rt_tensor_name_is_zero(const char *s) {
  size_t n = strlen(s);
  return n > 2 && !strcmp(s + n - 2, ":0");
}

/* views: one NodeExecStats record for node xn, which ran from t0 to now. */
static void trace_node(rt_exec *x, xnode *xn, rt_step *step, int64_t t0, uint32_t tid) {
  rt_exec_trace(x, xn, step, t0, tid, x->values + xn->first_out, "");
}

void rt_exec_trace(rt_exec *x, xnode *xn, rt_step *step, int64_t t0, uint32_t tid,
                   rt_tensor *const *outputs, const char *where) {
  (void)x;
  const rt_node *n = xn->node;
  int64_t t1 = rt_trace_micros();
  rt_node_stats *ns = rt_dev_stats_add(step->trace);
  ns->node_name = xstrdup(n->name);
  ns->all_start_micros = t0;
  ns->op_start_rel_micros = 0;
  ns->op_end_rel_micros = t1 - t0;
  ns->all_end_rel_micros = t1 - t0;
  ns->thread_id = tid;
  size_t len = strlen(n->name) + strlen(n->op) + strlen(where) + 16, off;
  if (xn->is_send || xn->is_recv) {
    const char *tn = rt_node_string(n, "tensor_name", ""), *rd = rt_node_string(n, "recv_device", "");
    len += strlen(tn) + strlen(rd);
    ns->timeline_label = xmalloc(len);
    snprintf(ns->timeline_label, len, "%s = %s(%s @%s)%s", n->name, n->op, tn, rd, where);
  } else {
    for (int k = 0; k < n->n_inputs; k++) len += strlen(n->inputs[k]) + 2;
    ns->timeline_label = xmalloc(len);
    off = (size_t)snprintf(ns->timeline_label, len, "%s = %s(", n->name, n->op);
    for (int k = 0; k < n->n_inputs; k++)
      off += (size_t)snprintf(ns->timeline_label + off, len - off, "%s%.*s", k ? ", " : "",
                              (int)(strlen(n->inputs[k]) - (rt_tensor_name_is_zero(n->inputs[k]) ? 2 : 0)),
                              n->inputs[k]);   /* "x" for "x:0", as TF1 labels */
    snprintf(ns->timeline_label + off, len - off, ")%s", where);
  }
  if (n->n_outputs > 0) {
    ns->outputs = xcalloc((size_t)n->n_outputs, sizeof *ns->outputs);
    for (int i = 0; i < n->n_outputs; i++) {
      const rt_tensor *t = outputs[i];
      rt_output_stats *o = &ns->outputs[ns->n_outputs++];
      o->dtype = t ? t->dtype : n->out_types[i];
      o->shape = t ? t->shape : n->out_shapes[i];
      o->bytes = t && t->buf ? (int64_t)rt_tensor_nbytes(t) : 0;
      /* allocated here when this output alone holds its buffer (a forwarded input, a
       * variable's or a constant's value is held elsewhere too): TF's memory per node */
      o->alloc = t && t->buf && !t->ref && atomic_load(&t->refs) == 1 && atomic_load(&t->buf->refs) == 1;
    }
  }
}

/* Release a consumed input slot once its last consumer in this step has run. */
static void release_inputs(rt_exec *x, xnode *xn) {
  for (int k = 0; k < xn->node->n_data_inputs; k++) {
    int s = xn->in_slots[k];
    if (--x->uses[s] == 0 && x->values[s]) {
      /* keep it for recycling next step (not device memory: rt_kernel_output never
       * recycles it, so it goes back to the device's allocator at once), unless another
       * slot holds this very tensor: one an Identity passed on, kept here too, had a second
       * reference that kept the consumer from writing over it (a chain of Mul and Identity
       * on [128,64] ran 2.2 us a node instead of 0.3). A view's buffer (Reshape) is still
       * kept: rt_kernel_output takes it next step once the view has let go. */
      rt_tensor *v = x->values[s];
      bool keep = !v->buf || (v->buf->dev != RT_DEV_GPU && atomic_load(&v->refs) == 1);
      rt_tensor_unref(x->reuse[s]);
      x->reuse[s] = keep ? v : NULL;
      if (!keep) rt_tensor_unref(v);
      x->values[s] = NULL;
    }
  }
}

int rt_exec_feed(rt_exec *x, const rt_run_args *a, rt_status *st) {
  memset(x->fed, 0, (size_t)x->n_slots * sizeof *x->fed);
  for (int i = 0; i < a->n_fetches; i++) a->fetched[i] = NULL;
  for (int i = 0; i < a->n_feeds; i++) {
    int s = rt_exec_slot_of(x, a->feed_names[i], st);
    if (s < 0) return st->code;
    rt_tensor *t = rt_tensor_ref(a->feeds[i]);
    int rc = rt_exec_accept(x, &t, st);
    if (rc) return rc;
    rt_tensor_unref(x->values[s]);
    x->values[s] = t;
    x->fed[s] = true;
  }
  return RT_OK;
}

int rt_exec_wait_recv(rt_exec *x, rt_step *step, const int *deferred, int n_def, int *which,
                      rt_tensor **t, rt_status *st) {
  *which = 0;
  atomic_store(&step->current_op, x->nodes[deferred[0]].node->name);   /* views */
  if (!step->recv_any) return step->recv(step, x->nodes[deferred[0]].key, true, t, st);
  const char *keys[256], **kp = keys;
  if (n_def > 256) kp = xmalloc((size_t)n_def * sizeof *kp);
  for (int d = 0; d < n_def; d++) kp[d] = x->nodes[deferred[d]].key;
  int rc = step->recv_any(step, kp, n_def, which, t, st);
  if (kp != keys) free(kp);
  return rc;
}

int rt_exec_fetch(rt_exec *x, const rt_run_args *a, int rc, bool dead_is_user_error, rt_status *st) {
  if (!rc) rc = rt_device_step_end(x->dev, st);   /* a GPU: wait on its stream's event */
  for (int i = 0; !rc && i < a->n_fetches; i++) {
    int s = rt_exec_slot_of(x, a->fetch_names[i], st);
    if (!x->values[s])
      rc = dead_is_user_error ? rt_error(st, RT_INVALID_ARGUMENT, "Retval[%d] does not have value", i)
                              : rt_error(st, RT_INTERNAL, "fetch '%s' produced no value", a->fetch_names[i]);
    else if (!x->values[s]->buf) {
      char var[256];
      int idx;
      if (!rt_tensor_name_parse(a->fetch_names[i], var, sizeof var, &idx)) var[0] = '\0';
      rc = rt_error(st, RT_FAILED_PRECONDITION, "Attempting to use uninitialized value %s", var);
    }
    else {
      rt_tensor *host = NULL;
      if ((rc = rt_device_to_host(x->dev, x->values[s], &host, st))) break;
      a->fetched[i] = rt_exec_private_value(host);
      rt_tensor_unref(host);
      if (!a->fetched[i])
        rc = rt_error(st, RT_RESOURCE_EXHAUSTED, "out of memory fetching '%s'", a->fetch_names[i]);
    }
  }
  if (rc)
    for (int i = 0; i < a->n_fetches; i++) {
      rt_tensor_unref(a->fetched[i]);
      a->fetched[i] = NULL;
    }
  return rc;
}

static int exec_run_plain(rt_exec *x, rt_step *step, const rt_run_args *a, rt_status *st);

int rt_exec_run(rt_exec *x, rt_step *step, const rt_run_args *a, rt_status *st) {
  int rc = x->cf ? rt_cf_run(x, step, a, st) : exec_run_plain(x, step, a, st);
  if (atomic_exchange(&step->has_step_resources, false)) {   /* the step's TensorArrays go */
    char container[64];
    rt_step_container(step, container, sizeof container);
    rt_device_clear_resources(x->dev, container);
  }
  return rc;
}

static int exec_run_plain(rt_exec *x, rt_step *step, const rt_run_args *a, rt_status *st) {
  int rc = RT_OK;
  int *stack = xcalloc((size_t)x->n + (size_t)a->n_fetches + (size_t)a->n_targets + 1,
                       sizeof *stack);
  rc = rt_exec_feed(x, a, st);
  if (!rc) rc = rt_exec_mark_needed(x, a, stack, st);

  /* Count waits and uses among needed nodes; fetched slots get one extra use. */
  int n_ready = 0, total = 0;
  if (!rc) {
    memset(x->uses, 0, (size_t)x->n_slots * sizeof *x->uses);
    for (int i = 0; i < x->n; i++) {
      x->pending[i] = 0;
      if (!x->needed[i]) continue;
      total++;
      const rt_node *n = x->g->nodes[i];
      for (int k = 0; k < n->n_inputs; k++) {
        const rt_edge *e = &n->edges[k];
        if (e->index >= 0) {
          int s = x->nodes[e->node].first_out + e->index;
          x->uses[s]++;
          if (x->fed[s]) continue;
        }
        if (x->needed[e->node]) x->pending[i]++;
      }
      if (x->pending[i] == 0) x->ready[n_ready++] = i;
    }
    assert(n_ready <= total);
    for (int i = 0; i < a->n_fetches; i++) {
      int s = rt_exec_slot_of(x, a->fetch_names[i], st);
      x->uses[s]++;
    }
  }
  atomic_store(&step->ops_total, total);
  atomic_store(&step->ops_done, 0);

  /* Dataflow loop. Ready _Recv nodes whose tensor is not there yet wait in `deferred`. */
  int *deferred = stack, n_def = 0, done = 0, since_sweep = 0;
  uint32_t trace_tid = step->trace ? rt_trace_thread_id() : 0;   /* views */
  int64_t poll_at = 0;   /* the executor's last look at step->poll (poll_between) */
  while (!rc && done < total) {
    int64_t trace_t0 = step->trace ? rt_trace_micros() : 0;       /* views */
    if (atomic_load(&step->cancelled) || rt_exec_poll_due(step, &poll_at)) {
      rc = rt_error(st, RT_CANCELLED, "Step was cancelled");
      break;
    }
    int id;
    if (n_ready) {
      id = x->ready[--n_ready];
      assert(x->needed[id] && x->pending[id] == 0);   /* ready once, when its last input came */
      xnode *xn = &x->nodes[id];
      if (xn->is_recv) {
        rt_tensor *t = NULL;
        int r = step->recv ? step->recv(step, xn->key, false, &t, st)
                           : rt_error(st, RT_INTERNAL, "no rendezvous for _Recv");
        if (r == RT_UNAVAILABLE) {
          deferred[n_def++] = id;
          continue;
        }
        if (!r) r = rt_exec_accept(x, &t, st);
        if ((rc = r)) break;
        rt_tensor_unref(x->values[xn->first_out]);
        x->values[xn->first_out] = t;
      } else {
        int64_t t0 = step->timed ? rt_trace_micros() : 0;   /* views: busy share */
        rc = run_node(x, xn, step, st);
        if (step->timed) step->busy_us += rt_trace_micros() - t0;
        if (rc) break;
      }
    } else if (n_def) {
      /* Nothing else to do: wait for whichever deferred _Recv arrives first. */
      int which = 0;
      rt_tensor *t = NULL;
      if ((rc = rt_exec_wait_recv(x, step, deferred, n_def, &which, &t, st))) break;
      id = deferred[which];
      memmove(deferred + which, deferred + which + 1, (size_t)(--n_def - which) * sizeof *deferred);
      xnode *xn = &x->nodes[id];
      if ((rc = rt_exec_accept(x, &t, st))) break;
      rt_tensor_unref(x->values[xn->first_out]);
      x->values[xn->first_out] = t;
    } else {
      rc = rt_error(st, RT_INTERNAL, "graph has a cycle or a missing input (%d of %d ran)", done,
                    total);
      break;
    }
    xnode *xn = &x->nodes[id];
    if (step->trace) trace_node(x, xn, step, trace_t0, trace_tid);   /* views */
    done++;
    atomic_store_explicit(&step->ops_done, done, memory_order_relaxed);   /* views: progress */
    release_inputs(x, xn);
    for (int c = 0; c < xn->n_consumers; c++) {
      int cid = xn->consumers[c];
      if (!x->needed[cid]) continue;
      assert(x->pending[cid] > 0);   /* each input edge counted once, from a needed node */
      if (--x->pending[cid] == 0) x->ready[n_ready++] = cid;
    }
    assert(n_ready + n_def <= total - done);   /* ready or deferred: run at most once each */
    /* A deferred _Recv may have become available: give them another chance when there is
     * nothing else to run, and every 64 nodes meanwhile (a tensor that came can unblock
     * work the other tasks wait for). After every node, as before, a long chain with many
     * _Recvs waiting cost nodes x _Recvs lookups: quadratic at 100k nodes. */
    if (n_def && (n_ready == 0 || ++since_sweep >= 64)) {
      for (int d = 0; d < n_def; d++) x->ready[n_ready++] = deferred[d];
      n_def = 0;
      since_sweep = 0;
    }
  }
  atomic_store(&step->current_op, NULL);
  assert(rc || (done == total && n_ready == 0 && n_def == 0));

  rc = rt_exec_fetch(x, a, rc, false, st);
  drop_values(x);
  free(stack);
  return rc;
}

/* ---- kernel state shared by a session ------------------------------------------------- */

/* Owner rule: the table owns its entries (freed with it, by the session's last fragment);
 * an executor borrows an entry's slot and lock for as long as it lives. */
typedef struct state_entry {
  char *name;
  void *state;          /* the kernel's; stays at this address however the table grows */
  pthread_mutex_t mu;   /* the kernel holds it to read or move state on */
} state_entry;

struct rt_state_table {
  pthread_mutex_t mu;   /* n, cap, e: fragments of one session may register at once */
  int n, cap;
  state_entry **e;
};

rt_state_table *rt_state_table_new(void) {
  rt_state_table *t = xcalloc(1, sizeof *t);
  pthread_mutex_init(&t->mu, NULL);
  return t;
}

void rt_state_table_free(rt_state_table *t) {
  if (!t) return;
  for (int i = 0; i < t->n; i++) {
    free(t->e[i]->name);
    free(t->e[i]->state);
    pthread_mutex_destroy(&t->e[i]->mu);
    free(t->e[i]);
  }
  free(t->e);
  pthread_mutex_destroy(&t->mu);
  free(t);
}

static state_entry *state_entry_of(rt_state_table *t, const char *name) {
  pthread_mutex_lock(&t->mu);
  state_entry *e = NULL;
  for (int i = 0; i < t->n && !e; i++)
    if (!strcmp(t->e[i]->name, name)) e = t->e[i];
  if (!e) {
    if (t->n == t->cap) {
      t->cap = t->cap ? 2 * t->cap : 16;
      t->e = xrealloc(t->e, (size_t)t->cap * sizeof *t->e);
    }
    e = xcalloc(1, sizeof *e);
    e->name = xstrdup(name);
    pthread_mutex_init(&e->mu, NULL);
    t->e[t->n++] = e;
  }
  pthread_mutex_unlock(&t->mu);
  return e;
}

void rt_exec_set_scope(rt_exec *x, const char *scope) { x->scope = scope && *scope ? scope : NULL; }

void rt_exec_share_state(rt_exec *x, rt_state_table *t) {
  for (int i = 0; i < x->n; i++) {
    const rt_node *n = x->nodes[i].node;
    if (!n->def || !(n->def->flags & RT_OP_STATEFUL)) continue;
    state_entry *e = state_entry_of(t, n->name);
    x->slot[i] = &e->state;
    x->slot_mu[i] = &e->mu;
  }
}
