/* The client side of a session: what tf.Session does. It talks to a master over the wire
 * protocol — to a remote task's server, or, with an empty target, to a server of its own
 * started in this process on inproc:// (TF1's local session keeps its own variables too).
 * The graph is sent incrementally: each run first sends the nodes added since the last. */
#ifndef TFSH_SESSION_H
#define TFSH_SESSION_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "runtime/graph.h"
#include "base/status.h"

typedef struct rt_session rt_session;

typedef struct rt_session_config {
  bool allow_soft_placement;
  bool log_device_placement;
  int64_t operation_timeout_ms;    /* 0: none */
  bool isolate_session_state;      /* its own resource containers (variables) on every task */
  int n_device_filters;            /* ConfigProto.device_filters: tasks the session needs */
  const char *const *device_filters;
  int n_cpus;                      /* local sessions: CPU devices (device_count={'CPU': n}) */
  int max_gpus;                    /* local sessions: device_count={'GPU': n} (rt_server_opts) */
  double gpu_memory_fraction;      /* gpu_options.per_process_gpu_memory_fraction; 0: default */
  bool gpu_allow_growth;           /* gpu_options.allow_growth */
  int intra_op_threads;            /* ConfigProto's, for this process (runtime/op.h); 0: as is */
  int inter_op_threads;
  const volatile int *interrupt;   /* cancels a wait for the cluster (Ctrl-C) */
} rt_session_config;

/* target: "" (local), "tfs://host:port", "grpc://host:port", "host:port", or a ZeroMQ
 * endpoint. The graph g is the one this session runs (it may grow between runs). */
rt_session *rt_session_new(const char *target, rt_graph *g, const rt_session_config *cfg,
                           rt_status *st);
/* Close: releases everything the master holds for this session. Safe on NULL. */
void rt_session_free(rt_session *s);

typedef struct rt_session_run {
  int n_feeds;
  const char *const *feed_names;
  rt_tensor *const *feeds;
  int n_fetches;
  const char *const *fetch_names;
  rt_tensor **fetched;              /* out: owned references */
  int n_targets;
  const char *const *targets;
  /* Set nonzero (e.g. by a SIGINT handler) to cancel the run; NULL: not cancellable. */
  const volatile int *interrupt;
  /* The caller sent the graph's new nodes already (rt_session_extend): runs of several
   * threads, while others may add nodes, do this under the caller's own lock. */
  bool graph_sent;
  int64_t timeout_ms;   /* RunOptions.timeout_in_ms (0: the session's operation timeout) */
} rt_session_run;

/* Send the nodes added to the graph since the last run (ExtendSession). */
int rt_session_extend(rt_session *s, const volatile int *interrupt, rt_status *st);
/* CloseSession without freeing: the master cancels the steps in flight, and runs of
 * other threads return (an error) before the caller frees s. */
void rt_session_close(rt_session *s);

int rt_session_run_step(rt_session *s, const rt_session_run *r, rt_status *st);
/* tf.Session.reset(target, containers): the cluster of target drops those resource
 * containers (all when n is 0) and its master closes its sessions. With device filters
 * (TF's ResetRequest.device_filters: "/job:ps", "/job:worker/task:1"), only the master's
 * own task and the tasks they name drop them, as TF's master does. "" is a no-op. */
int rt_session_reset(const char *target, int n, const char *const *containers, int n_filters,
                     const char *const *filters, rt_status *st);

/* views: a step with RunOptions / RunMetadata and a live-view tick; every field
 * optional (zero: none). */
typedef struct rt_session_views {
  int trace_level;                       /* RunOptions.trace_level; > 0 fills step_stats */
  struct rt_step_stats *step_stats;      /* out: every task's DeviceStepStats (caller clears) */
  bool output_partition_graphs;          /* fills partition_graphs */
  struct rt_partition **partition_graphs;   /* out: per-device graphs (rt_partitions_free) */
  int *n_partition_graphs;
  struct rt_busy *busy;                  /* not NULL: out, each device's busy time (the */
  int *n_busy;                           /* live view of a loop), RT_MAX_BUSY at most */
  /* a session on a TensorFlow master (TFSH_PEER=tf), where a graph is placed only when it
   * runs: a step whose fetches and targets are new to the session asks for its partition
   * graphs and keeps them for rt_session_placement (the shell sets this once a view is
   * wanted; a repeated step asks nothing more) */
  bool note_placement;
  /* called about every 50 ms while the step runs (the live view); nonzero cancels */
  int (*tick)(void *arg, int64_t elapsed_ms);
  void *tick_arg;
} rt_session_views;
int rt_session_run_step_views(rt_session *s, const rt_session_run *r, const rt_session_views *v,
                              rt_status *st);
const char *rt_session_target(const rt_session *s);
/* Whether the session's master is a TensorFlow master (TFSH_PEER=tf, tfsession.h). */
bool rt_session_on_tf(const rt_session *s);

/* ---- views -------------------------------------------------------------------------- */

/* The master's endpoint, and its session handle. */
const char *rt_session_endpoint(const rt_session *s);
uint64_t rt_session_handle(const rt_session *s);

/* Live progress of the step in flight, from the master's Progress message (asked on a
 * second connection, never blocking): each call takes the answer to the previous request
 * if it has come (*fresh = true, *p filled) and sends the next one when none is pending. */
typedef struct rt_progress_dev {
  char device[200];
  int done, total;
  char op[160];
  int64_t sent, recv;
} rt_progress_dev;
typedef struct rt_progress {
  bool running;
  int64_t elapsed_us;
  int n;
  rt_progress_dev dev[64];
} rt_progress;
int rt_session_progress(rt_session *s, rt_progress *p, bool *fresh, rt_status *st);

/* Placement and the cluster's tasks: runtime/views.h. */

#endif
