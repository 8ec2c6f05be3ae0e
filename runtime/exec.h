/* The executor: runs one graph fragment on one device.
 *
 * rt_exec_new prepares a fragment once (kernels resolved, edges turned into slots);
 * rt_exec_run runs the part of it that the fetches and targets need, feeding the given
 * tensors in place of node outputs. Scheduling is dataflow: a node runs when its inputs are
 * ready; a _Recv whose tensor has not arrived yet is set aside while other work runs, so
 * fragments on several devices exchanging tensors never deadlock. Output buffers of the
 * previous step are recycled when nobody else holds them. */
#ifndef TFSH_EXEC_H
#define TFSH_EXEC_H

#include "runtime/device.h"
#include "runtime/graph.h"
#include "runtime/step.h"

typedef struct rt_exec rt_exec;

/* The graph must outlive the executor. Every node needs a kernel for dev's type. */
int rt_exec_new(const rt_graph *g, rt_device *dev, rt_exec **out, rt_status *st);
void rt_exec_free(rt_exec *x);

typedef struct rt_run_args {
  int n_feeds;
  const char *const *feed_names;   /* "x", "x:0" */
  rt_tensor *const *feeds;
  int n_fetches;
  const char *const *fetch_names;
  rt_tensor **fetched;             /* out: owned references */
  int n_targets;
  const char *const *targets;      /* node names */
} rt_run_args;

/* Not reentrant: one run at a time per executor. A session's steps may run at once (two
 * signatures, or a queue runner beside the training step), each on its own executors; the
 * callers keep one executor to one step (the worker's run_mu per registered graph, the
 * master's step_mu per signature). */
int rt_exec_run(rt_exec *x, rt_step *step, const rt_run_args *a, rt_status *st);

/* Kernel state shared by every executor of one session (random generators keep going from
 * one signature to another, as TF1's stateful kernels do), by node name. Steps of two
 * signatures run at once, so each entry has a lock the kernel holds while it reads or moves
 * its state on (rt_kernel_ctx.state_mu). */
typedef struct rt_state_table rt_state_table;
rt_state_table *rt_state_table_new(void);
void rt_state_table_free(rt_state_table *t);   /* frees every state with free() */
/* Take kernel state slots from t instead of the executor's own. */
void rt_exec_share_state(rt_exec *x, rt_state_table *t);
/* ConfigProto.isolate_session_state: the kernels' resources (variables, queues, readers,
 * tables) live in this scope of the device's table (rt_device_resource_in), not the shared
 * one. The string must outlive the executor (the worker's session record holds it). */
void rt_exec_set_scope(rt_exec *x, const char *scope);

/* Rendezvous key of a _Send/_Recv node:
 * "send_device;send_incarnation(hex);recv_device;tensor_name;0:0" (TF's format). */
void rt_rendezvous_key(const rt_node *n, char *buf, size_t len);

#endif
