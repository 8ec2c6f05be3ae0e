#include "base/alloc.h"
#include "runtime/session.h"
#include "runtime/tfsession.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/peer.h"
#include "runtime/codec.h"
#include "runtime/gpu/gpu.h"
#include "runtime/op.h"
#include "runtime/server.h"
#include "runtime/session_int.h"
#include "runtime/partition.h"   /* views: partition_graphs */
#include "runtime/trace.h"       /* views: step_stats */

/* Owner rule: one caller owns the session and frees it (rt_session_free) after every other
 * thread's call on it has returned; those threads may run steps concurrently (the peer
 * carries many calls at once), and rt_session_close from the owner ends their steps. */
struct rt_session {
  rt_graph *g;
  rt_tfs *tf;                /* a TensorFlow master over TF's gRPC (tfsession.h); else NULL */
  int sent;                  /* nodes of g the master has (the owner's thread) */
  uint64_t handle;           /* set once, by rt_session_new */
  atomic_bool closed;        /* rt_session_close came: steps in flight end Cancelled */
  atomic_uint_fast64_t steps;   /* the last RunStep's id: CancelRun names the one it stops */
  rt_server *local;          /* our own server for an empty target */
  net_peer *c;               /* the master: in this process (no socket) or over one */
  char endpoint[256];
  char target[256];
  int64_t timeout_ms;
  /* views: Progress requests, one in flight at a time */
  net_cq *probe;
  uint64_t probe_id;
  bool probe_pending;
};

/* An interrupt flag another thread (or a signal handler) sets: read atomically, so the
 * setter's atomic store and this read are ordered (TSan saw the plain read race). */
static bool raised(const volatile int *p) { return p && __atomic_load_n(p, __ATOMIC_RELAXED); }

typedef struct waiter {
  rt_session *s;
  const volatile int *interrupt;
  bool report;              /* say what we wait for after 2 s (CreateSession) */
  int64_t last_report;
  int (*tick)(void *arg, int64_t elapsed_ms);   /* views: the live view's */
  void *tick_arg;
} waiter;

/* After 1.5 s, and every 2 s after, say what the session waits for: the master itself, or
 * (asked with WaitStatus on a second connection) the tasks the master waits for. */
static void report_wait(waiter *w, int64_t elapsed_ms) {
  rt_session *s = w->s;
  char what[1100] = "";
  if (!net_peer_connected(s->c)) {
    snprintf(what, sizeof what, "the master at %s (not connected)", s->endpoint);
  } else {
    rt_status st;
    net_in *rep = NULL;
    if (!net_peer_call(s->c, net_msg_new("WaitStatus"), &rep, &(net_wait){.timeout_ms = 300}, &st)) {
      const char *p;
      size_t len;
      if (!net_get_str(rep, "waiting_for", &p, &len, &st) && len)
        snprintf(what, sizeof what, "%.*s", (int)(len < 1000 ? len : 1000), p);
    }
    net_in_free(rep);
    if (!what[0]) snprintf(what, sizeof what, "the master at %s (connected, no answer yet)", s->endpoint);
  }
  fprintf(stderr, "tfsh: waiting for %s (%lld s)\n", what, (long long)(elapsed_ms / 1000));
}

static int tick(void *arg, int64_t elapsed_ms) {
  waiter *w = arg;
  if (raised(w->interrupt)) return 1;
  if (w->tick && w->tick(w->tick_arg, elapsed_ms)) return 1;   /* views */
  /* first after 1.5 s (the promise is "within 2 s"), then every 2 s */
  if (w->report && elapsed_ms >= 1500 && (!w->last_report || elapsed_ms - w->last_report >= 2000)) {
    w->last_report = elapsed_ms;
    report_wait(w, elapsed_ms);
  }
  return 0;
}

/* The user interrupted a call: say so, and stop that step (`step`, 0: none) on the cluster
 * too, not only our wait for it (the master aborts it on every worker); the steps other
 * threads run in the session (a QueueRunner's) go on. */
static void interrupted(rt_session *s, uint64_t step, rt_status *st) {
  rt_error(st, RT_CANCELLED, "interrupted");
  if (!s->handle || !step || atomic_load(&s->closed)) return;
  net_msg *c = net_msg_new("CancelRun");
  net_msg_uint(c, "session", s->handle);
  net_msg_uint(c, "step", step);
  rt_status ignore;
  net_peer_send_oneway(s->c, c, &ignore);
}

static int call_report(rt_session *s, net_msg *req, net_in **rep, const volatile int *interrupt,
                       bool report, rt_status *st) {
  waiter wt = {s, interrupt, report, 0, NULL, NULL};
  net_wait w = {.timeout_ms = -1, .tick_ms = 50, .tick = tick, .arg = &wt};
  int rc = net_peer_call(s->c, req, rep, &w, st);
  if (rc == RT_CANCELLED && raised(interrupt)) interrupted(s, 0, st);
  return rc;
}

static int call(rt_session *s, net_msg *req, net_in **rep, const volatile int *interrupt,
                rt_status *st) {
  return call_report(s, req, rep, interrupt, false, st);
}

/* A target no session can be made for (TF: no factory takes it): neither empty, nor a URL,
 * nor host:port. */
static int target_check(const char *target, rt_status *st) {
  if (!target || !*target || strstr(target, "://") || strchr(target, ':')) return RT_OK;
  return rt_error(st, RT_NOT_FOUND, "No session factory registered for the given session options: "
                  "{target: \"%s\" config: } Registered factories are {DIRECT_SESSION, GRPC_SESSION}.", target);
}

rt_session *rt_session_new(const char *target, rt_graph *g, const rt_session_config *cfg,
                           rt_status *st) {
  if (target_check(target, st)) return NULL;
  rt_session *s = xcalloc(1, sizeof *s);
  s->g = g;
  snprintf(s->target, sizeof s->target, "%s", target ? target : "");
  if (rt_tfs_wanted(target)) {
    if (!(s->tf = rt_tfs_new(target, g, cfg, st))) goto fail;
    snprintf(s->endpoint, sizeof s->endpoint, "%s", target);
    return s;
  }
  if (cfg) rt_threads_set(cfg->intra_op_threads, cfg->inter_op_threads);
  if (cfg) rt_gpu_set_memory_options(cfg->gpu_memory_fraction, cfg->gpu_allow_growth);
  if (!target || !*target) {
    if (!(s->local = rt_server_start_local(cfg ? cfg->n_cpus : 1, cfg ? cfg->max_gpus : 0, st))) goto fail;
    snprintf(s->endpoint, sizeof s->endpoint, "%s", rt_server_endpoint(s->local));
  } else {
    rt_endpoint(target, s->endpoint, sizeof s->endpoint);
  }
  if (!(s->c = net_peer_get(s->endpoint, st))) goto fail;

  net_msg *req = net_msg_new("CreateSession");
  msgpack_packer *pk = net_msg_field(req, "config");
  int nfilt = cfg ? cfg->n_device_filters : 0;
  msgpack_pack_map(pk, 5);
  msgpack_pack_str(pk, 21);
  msgpack_pack_str_body(pk, "isolate_session_state", 21);
  cfg && cfg->isolate_session_state ? msgpack_pack_true(pk) : msgpack_pack_false(pk);
  msgpack_pack_str(pk, 14);
  msgpack_pack_str_body(pk, "device_filters", 14);
  msgpack_pack_array(pk, (size_t)nfilt);
  for (int i = 0; i < nfilt; i++) {
    size_t len = strlen(cfg->device_filters[i]);
    msgpack_pack_str(pk, len);
    msgpack_pack_str_body(pk, cfg->device_filters[i], len);
  }
  msgpack_pack_str(pk, 20);
  msgpack_pack_str_body(pk, "allow_soft_placement", 20);
  cfg && cfg->allow_soft_placement ? msgpack_pack_true(pk) : msgpack_pack_false(pk);
  msgpack_pack_str(pk, 20);
  msgpack_pack_str_body(pk, "log_device_placement", 20);
  cfg && cfg->log_device_placement ? msgpack_pack_true(pk) : msgpack_pack_false(pk);
  msgpack_pack_str(pk, 23);
  msgpack_pack_str_body(pk, "operation_timeout_in_ms", 23);
  msgpack_pack_int64(pk, cfg ? cfg->operation_timeout_ms : 0);
  rt_pack_nodes(req, net_msg_field(req, "graph"), g, 0);
  s->sent = g->n_nodes;
  s->timeout_ms = cfg ? cfg->operation_timeout_ms : 0;
  net_in *rep = NULL;
  int rc = call_report(s, req, &rep, cfg ? cfg->interrupt : NULL, true, st);
  if (!rc) rc = net_get_uint(rep, "session", &s->handle, st);
  net_in_free(rep);
  if (rc) goto fail;
  return s;
fail:
  rt_session_free(s);
  return NULL;
}

void rt_session_free(rt_session *s) {
  if (!s) return;
  rt_session_close(s);
  rt_tfs_free(s->tf);
  net_cq_free(s->probe);   /* views */
  rt_server_free(s->local);
  free(s);
}

const char *rt_session_target(const rt_session *s) { return s->target; }

static void pack_strs(msgpack_packer *pk, int n, const char *const *v) {
  msgpack_pack_array(pk, (size_t)n);
  for (int i = 0; i < n; i++) {
    size_t len = strlen(v[i]);
    msgpack_pack_str(pk, len);
    msgpack_pack_str_body(pk, v[i], len);
  }
}

int rt_session_extend(rt_session *s, const volatile int *interrupt, rt_status *st) {
  if (s->tf) return rt_tfs_extend(s->tf, st);
  if (!s->handle || atomic_load(&s->closed)) return rt_error(st, RT_CANCELLED, "Session has been closed.");
  if (s->sent >= s->g->n_nodes) return RT_OK;
  net_msg *req = net_msg_new("ExtendSession");
  net_msg_uint(req, "session", s->handle);
  rt_pack_nodes(req, net_msg_field(req, "graph"), s->g, s->sent);
  net_in *rep = NULL;
  int rc = call(s, req, &rep, interrupt, st);
  net_in_free(rep);
  if (!rc) s->sent = s->g->n_nodes;
  return rc;
}

void rt_session_close(rt_session *s) {
  if (s && s->tf) {
    rt_tfs_close(s->tf);
    return;
  }
  if (!s || !s->c || !s->handle || atomic_exchange(&s->closed, true)) return;
  net_msg *req = net_msg_new("CloseSession");
  net_msg_uint(req, "session", s->handle);
  net_in *rep = NULL;
  rt_status st;
  net_peer_call(s->c, req, &rep, &(net_wait){.timeout_ms = 5000}, &st);
  net_in_free(rep);
}

/* A step this client's close ended: TF's DirectSession says "Run call was cancelled" for an
 * in-process session; a remote one keeps the master's text (Session::Close), also when the
 * step reached the master after the session had gone. */
static void closed_under(const rt_session *s, rt_status *st) {
  if (s->local)
    rt_error(st, RT_CANCELLED, "Run call was cancelled");
  else if (st->code != RT_CANCELLED || !strstr(st->msg, "Session::Close"))
    rt_error(st, RT_CANCELLED, "Session::Close: the session was closed while this step ran");
}

int rt_session_run_step(rt_session *s, const rt_session_run *r, rt_status *st) {
  return rt_session_run_step_views(s, r, NULL, st);
}


/* A warning text not said yet by this process (a program's several sessions, one master
 * each, would otherwise repeat it). */
static bool first_time(const char *p, size_t n) {
  static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
  static uint64_t said[64];
  static int n_said;
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
  pthread_mutex_lock(&mu);
  bool fresh = true;
  for (int i = 0; i < n_said && fresh; i++) fresh = said[i] != h;
  if (fresh && n_said < 64) said[n_said++] = h;
  pthread_mutex_unlock(&mu);
  return fresh;
}

int rt_session_run_step_views(rt_session *s, const rt_session_run *r, const rt_session_views *v,
                              rt_status *st) {
  static const rt_session_views none;   /* views: no options */
  if (!v) v = &none;
  if (s->tf) return rt_tfs_run(s->tf, r, v, st);   /* TF's master: views from its RunMetadata */
  int rc = RT_OK;
  for (int i = 0; i < r->n_fetches; i++) r->fetched[i] = NULL;
  if (atomic_load(&s->closed)) {   /* closed by another thread since the caller looked */
    closed_under(s, st);
    return st->code;
  }
  if (!r->graph_sent && (rc = rt_session_extend(s, r->interrupt, st))) return rc;
  net_msg *req = net_msg_new("RunStep");
  net_msg_uint(req, "session", s->handle);
  uint64_t step = atomic_fetch_add(&s->steps, 1) + 1;
  net_msg_uint(req, "step", step);
  msgpack_packer *pk = net_msg_field(req, "feeds");
  msgpack_pack_array(pk, (size_t)r->n_feeds);
  for (int i = 0; i < r->n_feeds; i++) rt_pack_feed(req, pk, r->feed_names[i], r->feeds[i]);
  /* A fetch that is also fed is the fed value, as in TF: the master is not asked for it. */
  int *fed = xcalloc((size_t)r->n_fetches + 1, sizeof *fed), n_asked = 0;
  const char **asked = xcalloc((size_t)r->n_fetches + 1, sizeof *asked);
  for (int i = 0; i < r->n_fetches; i++) {
    fed[i] = -1;
    for (int j = 0; j < r->n_feeds && fed[i] < 0; j++)
      if (!strcmp(r->fetch_names[i], r->feed_names[j])) fed[i] = j;
    if (fed[i] < 0) asked[n_asked++] = r->fetch_names[i];
  }
  pack_strs(net_msg_field(req, "fetches"), n_asked, asked);
  free(asked);
  pack_strs(net_msg_field(req, "targets"), r->n_targets, r->targets);
  if (v->trace_level > 0 || v->output_partition_graphs || v->busy || r->timeout_ms > 0) {   /* RunOptions */
    pk = net_msg_field(req, "options");
    msgpack_pack_map(pk, 4);
    msgpack_pack_str(pk, 13);
    msgpack_pack_str_body(pk, "timeout_in_ms", 13);
    msgpack_pack_int64(pk, r->timeout_ms);
    msgpack_pack_str(pk, 4);
    msgpack_pack_str_body(pk, "busy", 4);
    v->busy ? msgpack_pack_true(pk) : msgpack_pack_false(pk);
    msgpack_pack_str(pk, 11);
    msgpack_pack_str_body(pk, "trace_level", 11);
    msgpack_pack_int(pk, v->trace_level);
    msgpack_pack_str(pk, 23);
    msgpack_pack_str_body(pk, "output_partition_graphs", 23);
    v->output_partition_graphs ? msgpack_pack_true(pk) : msgpack_pack_false(pk);
  }
  net_in *rep = NULL;
  waiter wt = {s, r->interrupt, false, 0, v->tick, v->tick_arg};
  net_wait nw = {.timeout_ms = -1, .tick_ms = 50, .tick = tick, .arg = &wt};
  rc = net_peer_call(s->c, req, &rep, &nw, st);
  if (rc == RT_CANCELLED && raised(r->interrupt)) interrupted(s, step, st);
  else if ((rc == RT_CANCELLED || rc == RT_ABORTED) && atomic_load(&s->closed)) closed_under(s, st);
  const msgpack_object_array *ts = NULL;
  if (!rc) rc = net_get_array(rep, "tensors", &ts, st);
  if (!rc && ts->size != (uint32_t)n_asked)
    rc = rt_error(st, RT_INTERNAL, "RunStep returned %u tensors for %d fetches", ts->size,
                  n_asked);
  for (int i = 0, k = 0; !rc && i < r->n_fetches; i++)
    if (fed[i] < 0) rc = rt_unpack_tensor_msg(rep, &ts->ptr[k++], "RunStep.tensors", &r->fetched[i], st);
    else if (!(r->fetched[i] = rt_tensor_copy(r->feeds[fed[i]])))   /* a copy: the fetch is not the feed */
      rc = rt_error(st, RT_RESOURCE_EXHAUSTED, "out of memory for fetch %s", r->fetch_names[i]);
  free(fed);
  const char *wp;
  size_t wl;
  if (!rc && net_has(rep, "warning") && !net_get_str(rep, "warning", &wp, &wl, st) && first_time(wp, wl))
    fprintf(stderr, "tfsh: warning: %.*s\n", (int)wl, wp);   /* each master says it once a session */
  /* views: RunMetadata */
  if (!rc && v->step_stats && net_get(rep, "step_stats"))
    rc = rt_unpack_step_stats(net_get(rep, "step_stats"), "RunStep.step_stats", v->step_stats, st);
  if (v->n_busy) *v->n_busy = 0;
  if (!rc && v->busy && net_get(rep, "busy"))
    rc = rt_unpack_busy(net_get(rep, "busy"), "RunStep.busy", v->busy, v->n_busy, RT_MAX_BUSY, st);
  if (!rc && v->partition_graphs && net_get(rep, "partition_graphs")) {
    const msgpack_object_array *pa = NULL;
    rc = net_obj_array(net_get(rep, "partition_graphs"), "RunStep.partition_graphs", &pa, st);
    rt_partition *pg = rc ? NULL : xcalloc((size_t)pa->size + 1, sizeof *pg);
    int npg = 0;
    for (uint32_t i = 0; !rc && i < pa->size; i++) {
      const msgpack_object *dv = net_obj_key(&pa->ptr[i], "device"), *gv = net_obj_key(&pa->ptr[i], "graph");
      const char *p = "";
      size_t len = 0;
      if (!dv || !gv) {
        rc = rt_error(st, RT_INVALID_ARGUMENT, "RunStep.partition_graphs[%u]: needs device and graph", i);
        break;
      }
      if ((rc = net_obj_str(dv, "RunStep.partition_graphs.device", &p, &len, st))) break;
      pg[npg].name = xstrndup(p, len);
      pg[npg].g = rt_graph_new();
      npg++;
      rc = rt_unpack_nodes(rep, gv, "RunStep.partition_graphs.graph", pg[npg - 1].g, st);
    }
    if (rc) {
      rt_partitions_free(pg, npg);
    } else {
      *v->partition_graphs = pg;
      if (v->n_partition_graphs) *v->n_partition_graphs = npg;
    }
  }
  net_in_free(rep);
  if (rc)
    for (int i = 0; i < r->n_fetches; i++) {
      rt_tensor_unref(r->fetched[i]);
      r->fetched[i] = NULL;
    }
  return rc;
}

/* ---- views -------------------------------------------------------------------------- */

const char *rt_session_endpoint(const rt_session *s) { return s->endpoint; }
uint64_t rt_session_handle(const rt_session *s) { return s->handle; }

rt_tfs *rt_session_tf(const rt_session *s) { return s->tf; }
bool rt_session_on_tf(const rt_session *s) { return s && s->tf; }

int rt_session_call(rt_session *s, net_msg *req, net_in **rep, int timeout_ms, rt_status *st) {
  if (s->tf) {
    net_msg_free(req);
    return rt_error(st, RT_UNIMPLEMENTED, "a session on a TensorFlow master (TFSH_PEER=tf) has no tfsh master to ask");
  }
  net_msg_uint(req, "session", s->handle);
  return net_peer_call(s->c, req, rep, &(net_wait){.timeout_ms = timeout_ms}, st);
}

int rt_session_progress(rt_session *s, rt_progress *p, bool *fresh, rt_status *st) {
  if (s->tf) return rt_error(st, RT_UNIMPLEMENTED, "a session on a TensorFlow master has no live view yet");
  *fresh = false;
  if (!s->probe) s->probe = net_cq_new();
  if (s->probe_pending) {
    for (;;) {
      net_in *rep = NULL;
      uint64_t tag;
      rt_status ws;
      int rc = net_cq_wait(s->probe, &(net_wait){.timeout_ms = 0}, NULL, &tag, &rep, &ws);
      if (tag == NET_CQ_NONE) return RT_OK;   /* not yet */
      s->probe_pending = false;
      if (rc) *st = ws;
      if (rc) return rc;
      p->running = rt_obj_int(net_in_header(rep), "running") != 0;   /* a bool */
      p->elapsed_us = rt_obj_int(net_in_header(rep), "elapsed_us");
      p->n = 0;
      const msgpack_object *d = net_get(rep, "devices");
      for (uint32_t i = 0; d && d->type == MSGPACK_OBJECT_ARRAY && i < d->via.array.size && p->n < 64; i++) {
        const msgpack_object *e = &d->via.array.ptr[i];
        rt_progress_dev *pd = &p->dev[p->n++];
        rt_obj_str(e, "device", pd->device, sizeof pd->device);
        rt_obj_str(e, "op", pd->op, sizeof pd->op);
        pd->done = (int)rt_obj_int(e, "done");
        pd->total = (int)rt_obj_int(e, "total");
        pd->sent = rt_obj_int(e, "sent");
        pd->recv = rt_obj_int(e, "recv");
      }
      net_in_free(rep);
      *fresh = true;
      break;
    }
  }
  net_msg *req = net_msg_new("Progress");
  net_msg_uint(req, "session", s->handle);
  int rc = net_peer_send(s->c, req, s->probe, 0, &s->probe_id, st);
  if (!rc) s->probe_pending = true;
  return rc;
}

int rt_session_reset(const char *target, int n, const char *const *containers, int n_filters,
                     const char *const *filters, rt_status *st) {
  if (!target || !*target) return RT_OK;   /* local sessions own their server */
  if (target_check(target, st)) return st->code;
  char ep[256];
  rt_endpoint(target, ep, sizeof ep);
  net_peer *c = net_peer_get(ep, st);
  if (!c) return st->code;
  net_msg *req = net_msg_new("Reset");
  msgpack_packer *pk = net_msg_field(req, "containers");
  if (n) pack_strs(pk, n, containers);
  else msgpack_pack_nil(pk);
  if (n_filters) pack_strs(net_msg_field(req, "device_filters"), n_filters, filters);
  net_in *rep = NULL;
  int rc = net_peer_call(c, req, &rep, &(net_wait){.timeout_ms = 30000}, st);
  net_in_free(rep);
  return rc;
}
