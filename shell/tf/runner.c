/* A runner: one op run over and over by a thread of its own, on its own session to the
 * same master — what TF1's QueueRunner threads do, on a C thread that never needs the GIL. Used by
 * SyncReplicasOptimizer's chief to aggregate gradients while its own steps run.
 *
 * Its op usually waits (for gradients, in _AccumTake), so stopping it cancels the step in
 * flight on the cluster (CancelRun: the ps's wait ends within its 50 ms poll) and closes
 * its session. As in TF, where closing a session cancels its pending ops and the queue
 * runner exits quietly, closing the session a runner was started on stops it, and so does
 * the end of the program (tf_runners_stop), before the servers go. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "runtime/session.h"
#include "shell/tf/tf.h"


typedef struct tf_runner {
  sh_obj head;
  pthread_t thread;
  bool started;
  atomic_int stop;
  rt_graph *g;          /* a copy: the interpreter may keep adding to the original */
  rt_session *s;
  char *target;
  char err[512];
  int64_t runs;
  const sh_obj *owner;  /* the tf.Session it was started on (borrowed; NULL once closed) */
} tf_runner;

/* The runners alive (the interpreter's thread alone touches this). */
static tf_runner **live;
static int n_live, cap_live;

static void *runner_main(void *arg) {
  tf_runner *r = arg;
  rt_status st = {0};
  while (!atomic_load(&r->stop)) {
    rt_session_run run = {.n_targets = 1, .targets = (const char *const *)&r->target,
                          .interrupt = (const volatile int *)&r->stop};
    if (rt_session_run_step(r->s, &run, &st)) {
      if (!atomic_load(&r->stop)) snprintf(r->err, sizeof r->err, "%s", st.msg);
      break;
    }
    r->runs++;
  }
  return NULL;
}

static void runner_stop(tf_runner *r) {
  if (!r->started) return;
  atomic_store(&r->stop, 1);
  pthread_join(r->thread, NULL);
  r->started = false;
}

/* Stopped for good: the step in flight cancelled, the session closed. */
static void runner_close(tf_runner *r) {
  runner_stop(r);
  rt_session_free(r->s);
  r->s = NULL;
  r->owner = NULL;
}

void tf_runners_stop(const sh_obj *session) {
  for (int i = 0; i < n_live; i++)
    if (!session || live[i]->owner == session) runner_close(live[i]);
}

static void runner_destroy(sh_obj *self) {
  tf_runner *r = (tf_runner *)self;
  runner_close(r);
  for (int i = 0; i < n_live; i++)
    if (live[i] == r) live[i] = live[--n_live];
  rt_graph_free(r->g);
  free(r->target);
}

static sh_obj *m_stop(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  runner_stop((tf_runner *)self);
  return sh_none();
}

static sh_obj *runner_getattr(sh_obj *self, const char *name) {
  tf_runner *r = (tf_runner *)self;
  if (!strcmp(name, "runs")) return sh_int(r->runs);
  if (!strcmp(name, "error")) return r->err[0] ? sh_str(r->err) : sh_none();
  return NULL;
}

static const sh_method runner_methods[] = {
  {"stop", m_stop, "stop()", "Stop the runner's thread (its step in flight is cancelled)."},
  {NULL},
};

static sh_type tf_runner_type = {
  SH_TYPE_HEAD, .name = "_Runner", .size = sizeof(tf_runner),
  .help = "An op run in a loop by its own thread, on its own session.", .methods = runner_methods,
  .destroy = runner_destroy, .getattr = runner_getattr,
};

/* _start_runner(session, op): run op (an Operation of session's graph) in a loop. */
sh_obj *tf_start_runner(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *sess, *op;
  if (sh_parse_args("_start_runner", argc, argv, kw, "session op", &sess, &op) < 0) return NULL;
  tf_graph *g = NULL;
  rt_session *rs = tf_session_rt(sess, &g);
  if (!rs || Py_TYPE(op) != (PyTypeObject *)&tf_op_type) return sh_raise(sh_TypeError, "_start_runner(session, operation)");
  tf_runner *r = sh_new(&tf_runner_type);
  /* copy the graph as it is now, node by node (they were validated once already) */
  rt_graph *src = tf_rt(g);
  r->g = rt_graph_new();
  rt_status st = {0};
  for (int i = 0; i < src->n_nodes; i++) {
    rt_node *c = rt_node_clone(src->nodes[i]);
    free(c->assigned);
    c->assigned = NULL;
    if (rt_graph_add(r->g, c, &st)) {
      sh_decref((sh_obj *)r);
      return tf_raise_status(&st);
    }
  }
  r->target = xstrdup(tf_op_node((tf_op *)op)->name);
  if (n_live == cap_live) {
    cap_live = cap_live ? 2 * cap_live : 8;
    live = xrealloc(live, (size_t)cap_live * sizeof *live);
  }
  live[n_live++] = r;   /* from here on runner_destroy unlists it */
  r->s = rt_session_new(rt_session_endpoint(rs), r->g, NULL, &st);
  if (!r->s) {
    sh_decref((sh_obj *)r);
    return tf_raise_status(&st);
  }
  if (pthread_create(&r->thread, NULL, runner_main, r)) {
    sh_decref((sh_obj *)r);
    return sh_raise(sh_RuntimeError, "cannot start a runner thread");
  }
  r->started = true;
  r->owner = sess;   /* a tf.Session: tf_session_rt checked */
  return (sh_obj *)r;
}
