/* A runner: one op run over and over by a thread of its own, on its own session to the
 * same master — what TF1's QueueRunner threads do (the language has no threads). Used by
 * SyncReplicasOptimizer's chief to aggregate gradients while its own steps run. */
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
} tf_runner;

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

static void runner_destroy(sh_obj *self) {
  tf_runner *r = (tf_runner *)self;
  runner_stop(r);
  rt_session_free(r->s);
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
  if (!rs || op->type != &tf_op_type) return sh_raise(sh_TypeError, "_start_runner(session, operation)");
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
  return (sh_obj *)r;
}
