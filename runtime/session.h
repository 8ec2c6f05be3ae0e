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
#include "runtime/status.h"

typedef struct rt_session rt_session;

typedef struct rt_session_config {
  bool allow_soft_placement;
  bool log_device_placement;
  int64_t operation_timeout_ms;    /* 0: none */
  int n_device_filters;            /* ConfigProto.device_filters: tasks the session needs */
  const char *const *device_filters;
  int n_cpus;                      /* local sessions: CPU devices (device_count={'CPU': n}) */
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
} rt_session_run;

int rt_session_run_step(rt_session *s, const rt_session_run *r, rt_status *st);
const char *rt_session_target(const rt_session *s);

#endif
