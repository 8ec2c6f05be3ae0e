/* The executor's insides, shared by exec.c (graphs without control flow) and exec_cf.c
 * (frames and iterations, for graphs with Switch/Merge/Enter/Exit/NextIteration). */
#ifndef TFSH_EXEC_INT_H
#define TFSH_EXEC_INT_H

#include <time.h>

#include "runtime/exec.h"
#include "runtime/op.h"

typedef struct xnode {
  const rt_node *node;
  rt_kernel_fn kernel;
  int first_out;       /* slot of output 0 */
  int *in_slots;       /* slot per data input */
  int n_consumers;     /* nodes that wait on this one (data or control) */
  int *consumers;
  bool *ref_in;        /* per data input: the op takes a reference (Assign's ref) */
  bool is_send, is_recv;
  bool forwards;       /* a control-flow op: passes any value on, initialized or not */
  char *key;           /* rendezvous key for _Send/_Recv */
} xnode;

struct rt_exec {
  const rt_graph *g;
  rt_device *dev;
  int n, n_slots;
  xnode *nodes;
  int *in_all, *cons_all;   /* every node's in_slots and consumers, in one block each */
  bool *ref_all;            /* every node's ref_in */
  rt_tensor **reuse;   /* per slot: last step's output */
  void **state;        /* per node: kernel state (rt_kernel_ctx.state), the executor's own */
  void ***slot;        /* per node: where its state lives (own, or a session's table) */
  pthread_mutex_t **slot_mu;   /* per node: the lock of a session's slot (NULL: own) */
  const char *scope;   /* an isolated session's resource scope (rt_exec_set_scope); NULL: shared */
  /* per-run scratch, sized once */
  rt_tensor **values;
  int *pending, *ready, *uses;
  bool *needed, *fed;
  /* the feeds, fetches and targets x->needed was last marked for (need_len 0: none): a step
   * that asks the same as the last one skips the walk; key is the scratch it is built in */
  char *need, *key;
  size_t need_len, need_cap, key_cap;
  struct cf_exec *cf;  /* control flow (Switch, Merge, frames): exec_cf.c; NULL without */
};

/* Run xn's kernel on inputs (n_data_inputs of them) into outputs (n_outputs, NULL or
 * recyclable), as the plain executor does; reuse may be NULL. *fwd (NULL: none): in, the
 * inputs the kernel may forward (rt_kernel_ctx.forward); out, those it did. */
int rt_exec_kernel(rt_exec *x, xnode *xn, rt_step *step, rt_tensor **inputs, rt_tensor **outputs,
                   rt_tensor **reuse, uint64_t *fwd, rt_status *st);
/* May a kernel write over value v, as far as v itself tells (no other reference to the
 * tensor or its bytes, host memory the tensor allocator owns, not a string)? The caller
 * adds what v cannot tell: that no other consumer still wants it. (RT_DEAD's count is
 * never 1.) Inline: the frame executor asks twice per input of every node. */
static inline bool rt_exec_forwardable(const rt_tensor *v) {
  return v && atomic_load_explicit(&v->refs, memory_order_acquire) == 1 && v->buf && !v->ref &&
         v->dtype != RT_STRING && v->buf->dev != RT_DEV_GPU && !v->buf->free_fn &&
         atomic_load_explicit(&v->buf->refs, memory_order_acquire) == 1;
}
/* views: one trace record for xn (outputs as given), `where` ("" or " [frame:iter]"). */
void rt_exec_trace(rt_exec *x, xnode *xn, rt_step *step, int64_t t0, uint32_t tid,
                   rt_tensor *const *outputs, const char *where);

/* Slot of tensor "x:1" in x's graph, or -1 (st set). */
int rt_exec_slot_of(rt_exec *x, const char *name, rt_status *st);
/* x->needed: what the fetches and targets need, stopping at fed outputs (x->fed). stack
 * holds n + fetches + targets ints. */
int rt_exec_mark_needed(rt_exec *x, const rt_run_args *a, int *stack, rt_status *st);
/* t, or a copy when its buffer is shared (a variable's): what leaves the executor. */
rt_tensor *rt_exec_private_value(rt_tensor *t);

/* A tensor arriving (_Recv, feed) moved to x's device; *t replaced (gpu.h's hook). */
int rt_exec_accept(rt_exec *x, rt_tensor **t, rt_status *st);
/* Set the feeds (x->values, x->fed) and clear a->fetched. */
int rt_exec_feed(rt_exec *x, const rt_run_args *a, rt_status *st);
/* Nothing else to run: wait for whichever deferred _Recv's tensor comes first. */
int rt_exec_wait_recv(rt_exec *x, rt_step *step, const int *deferred, int n_def, int *which,
                      rt_tensor **t, rt_status *st);
/* Unless rc: a->fetched from x->values (a missing value is TF's "Retval[i] does not have
 * value" where dead_is_user_error, else an internal error). On failure nothing is fetched. */
int rt_exec_fetch(rt_exec *x, const rt_run_args *a, int rc, bool dead_is_user_error, rt_status *st);

/* exec_cf.c */
bool rt_cf_graph(const rt_graph *g);                 /* any control-flow op? */
/* Between nodes of a step with poll_between: at most every 50 ms (a clock read a node;
 * nodes may each take long), ask step->poll whether the call running it wants out. The
 * coarse clock (a few ms' resolution) is enough for that and costs a load: the precise
 * one, ~20 ns a read in these VMs, was 3 % of a dynamic_rnn step's 20,000 nodes. *at_us
 * is the loop's. */
static inline bool rt_exec_poll_due(rt_step *step, int64_t *at_us) {
  if (!step->poll_between) return false;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  int64_t now = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
  if (now - *at_us < 50000) return false;
  *at_us = now;
  return step->poll(step) != 0;
}

int rt_cf_new(rt_exec *x, rt_status *st);             /* frames of x's graph: x->cf */
void rt_cf_free(struct cf_exec *cf);
int rt_cf_run(rt_exec *x, rt_step *step, const rt_run_args *a, rt_status *st);

#endif
