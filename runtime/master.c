/* The master service: sessions over the cluster.
 *
 *   CreateSession {config, graph: [nodes]}                      -> {session}
 *   ExtendSession {session, graph: [new nodes]}                  -> {}
 *   RunStep {session, step, feeds: [{name, tensor}], fetches, targets} -> {tensors}
 *   CloseSession {session}                                       -> {}
 *   ListDevices {}                                               -> {devices}
 *   WaitStatus {}                                                -> {waiting_for, elapsed_ms}
 *   CancelRun {session, step}                                    -> {}
 *   Reset {containers, device_filters?}                          -> {}
 *   Placement {session, feeds, fetches, targets}                 -> {nodes, partitions, edges}
 *   Progress {session}                                           -> {running, step, devices}
 *
 * (rt_master_messages, at the end, dispatches them; net/PROTOCOL.md has every field.)
 *
 * A run signature (feeds, fetches, targets) is prepared once: the graph is pruned to what
 * it needs, placed, partitioned per task, and each fragment registered with its worker.
 * Each step then sends one RunGraph per worker, all in flight at once; the first error
 * aborts the others and reaches the client, prefixed by its task when there are several. */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "runtime/codec.h"
#include "runtime/op.h"
#include "runtime/partition.h"
#include "runtime/placer.h"
#include "runtime/remap.h"
#include "runtime/server_int.h"
#include "runtime/trace.h"
#include "runtime/views.h"   /* views: traces, placement, progress */
#include "runtime/wire_fmt.h"

typedef struct mpart {
  char task[160];
  char endpoint[256];
  uint64_t handle;
  uint64_t incarnation;   /* of the task when the session was made: a restart changes it */
  bool recv;              /* its fragment receives tensors from other tasks (a _Recv) */
  bool waits;             /* nothing of its fragment but trivial nodes (consts, variables,
                             identities) can run before one of its _Recvs has come */
} mpart;

typedef struct mrun {
  struct mrun *next;
  char *sig;
  int n_parts;
  mpart *parts;
  int *feed_part;    /* per feed: partition index, -1 if no partition needs it */
  int *fetch_part;   /* per fetch: partition index, -1 when the fetch is fed */
  int n_needed;      /* views: the pruned node set, for partition_graphs */
  bool *needed;
  char *warning;     /* said once, with the first step of this signature */
  pthread_mutex_t step_mu;   /* its steps run one at a time (its registered graphs do) */
  uint64_t step;             /* the client's id of the step in flight, 0: none (s->mu) */
  atomic_bool cancelled;     /* CancelRun named that step */
} mrun;

typedef struct mdev {
  char name[200];
  char task[160];
  char endpoint[256];
  uint64_t incarnation;
} mdev;

/* Owner rule: the master's list holds one reference and every handler that found the
 * session (session_find, under m->mu) holds one until session_unref; refs is guarded by
 * m->mu, and the last reference deregisters its graphs and frees it. */
typedef struct msess {
  struct msess *next;
  int refs;              /* m->mu */
  bool closed;           /* s->mu: CloseSession or Reset came; no step starts from now on */
  /* CancelRun (Ctrl-C in the client), CloseSession, Reset: +1 aborts the steps in flight
   * (each step remembers the count it started with). Steps of a session run concurrently
   * (a queue runner's enqueue beside the training step's dequeue); those of one signature
   * one at a time. */
  atomic_uint cancel;
  uint64_t cancelled[8];   /* CancelRun's step ids that no running step had yet (s->mu) */
  unsigned n_cancelled;
  int running;           /* steps in flight (s->mu); close waits for them on idle */
  pthread_cond_t idle;
  uint64_t handle;
  rt_graph *g;
  pthread_mutex_t mu;
  bool soft, log_placement;
  bool isolate;          /* ConfigProto.isolate_session_state: its own resources on every task */
  bool warned;           /* the unshared-variables warning is said once per session */
  int64_t timeout_ms;
  int n_devs;
  mdev *devs;
  int n_tasks;
  mrun *runs;
  /* views: the step in flight, for Progress (guarded by the master's mu) */
  uint64_t cur_step;
  int64_t cur_start_us;
  int n_cur;
  char (*cur_ep)[256];
} msess;

struct rt_master {
  rt_server *srv;
  pthread_mutex_t mu;
  msess *sessions;
  char wait_msg[1024];   /* what a CreateSession waits for now ("" when nothing) */
  int64_t wait_ms;
};

rt_master *rt_master_new(rt_server *s) {
  rt_master *m = xcalloc(1, sizeof *m);
  m->srv = s;
  pthread_mutex_init(&m->mu, NULL);
  return m;
}

static void mrun_free(mrun *r) {
  free(r->sig);
  free(r->warning);
  free(r->parts);
  free(r->feed_part);
  free(r->fetch_part);
  free(r->needed);
  pthread_mutex_destroy(&r->step_mu);
  free(r);
}

static void deregister_all(msess *s) {
  for (mrun *r = s->runs; r; r = r->next)
    for (int i = 0; i < r->n_parts; i++) {
      rt_status st;
      net_peer *p = net_peer_get(r->parts[i].endpoint, &st);
      if (!p) continue;
      /* fire and forget: a dead task must not hold up closing the session */
      net_msg *req = net_msg_new("DeregisterGraph");
      net_msg_uint(req, "handle", r->parts[i].handle);
      net_peer_send_oneway(p, req, &st);
    }
}

static void msess_free(msess *s) {
  while (s->runs) {
    mrun *r = s->runs;
    s->runs = r->next;
    mrun_free(r);
  }
  rt_graph_free(s->g);
  free(s->cur_ep);
  free(s->devs);
  pthread_mutex_destroy(&s->mu);
  pthread_cond_destroy(&s->idle);
  free(s);
}

void rt_master_free(rt_master *m) {
  if (!m) return;
  while (m->sessions) {
    msess *s = m->sessions;
    m->sessions = s->next;
    msess_free(s);
  }
  pthread_mutex_destroy(&m->mu);
  free(m);
}

/* ---- helpers ------------------------------------------------------------------------ */

static void wait_idle(msess *s);

static int reply_status(net_req *req, int rc, const rt_status *st) {
  return net_reply_error(req, rc, "%s", st->msg);
}

/* The session named by the request, with a reference the caller drops (session_unref). */
static msess *session_find(rt_master *m, const net_in *in, rt_status *st) {
  uint64_t h;
  if (net_get_uint(in, "session", &h, st)) return NULL;
  pthread_mutex_lock(&m->mu);
  msess *s = m->sessions;
  while (s && s->handle != h) s = s->next;
  if (s) s->refs++;
  pthread_mutex_unlock(&m->mu);
  if (!s)
    rt_error(st, RT_ABORTED, "Session %016" PRIx64 " is not found on %s (closed, or the "
             "master task restarted)", h, m->srv->task);
  return s;
}

static void session_unref(rt_master *m, msess *s) {
  if (!s) return;
  pthread_mutex_lock(&m->mu);
  bool last = --s->refs == 0;
  pthread_mutex_unlock(&m->mu);
  if (!last) return;
  deregister_all(s);
  msess_free(s);
}

/* What a step cancelled by its session's close ends with (the client, which knows whether
 * the session is in-process, says TF's DirectSession text instead for local ones). */
#define CLOSED_MSG "Session::Close: the session was closed while this step ran"

/* Close a session taken off the master's list (whose reference the caller now holds): no
 * step starts from now on, the steps in flight are cancelled and waited for, and the
 * reference is dropped. */
static void session_close(rt_master *m, msess *s) {
  pthread_mutex_lock(&s->mu);
  s->closed = true;
  atomic_fetch_add(&s->cancel, 1);
  wait_idle(s);
  pthread_mutex_unlock(&s->mu);
  session_unref(m, s);
}

typedef struct discover {
  rt_master *m;
  int n;
  char (*task)[160];
  char (*addr)[256];
  net_peer **pr;
  bool *done;
  char msg[1024];   /* what this CreateSession waits for (m->wait_msg: the latest of any) */
} discover;

/* Record what the master waits for, for WaitStatus (and so the client can print it). */
static int discover_tick(void *arg, int64_t elapsed_ms) {
  discover *d = arg;
  char *msg = d->msg;
  size_t off = 0;
  msg[0] = '\0';
  for (int i = 0; i < d->n && off < sizeof d->msg; i++)
    if (d->pr[i] && !d->done[i])
      off += (size_t)snprintf(msg + off, sizeof d->msg - off, "%s%s at %s (%s)", off ? ", " : "", d->task[i],
                              d->addr[i], net_peer_connected(d->pr[i]) ? "connected, no answer yet" : "not connected");
  pthread_mutex_lock(&d->m->mu);
  snprintf(d->m->wait_msg, sizeof d->m->wait_msg, "%s", msg);
  d->m->wait_ms = elapsed_ms;
  pthread_mutex_unlock(&d->m->mu);
  return 0;
}

/* device_filters (an array of str, or absent) parsed into filters[MAX_FILTERS]. */
enum { MAX_FILTERS = 64 };
static int parse_filters(const msgpack_object *fl, const char *what, rt_devname *filters, int *nf, rt_status *st) {
  *nf = 0;
  int rc = RT_OK;
  if (fl && fl->type == MSGPACK_OBJECT_ARRAY)
    for (uint32_t i = 0; !rc && i < fl->via.array.size && *nf < MAX_FILTERS; i++) {
      const char *p;
      size_t len;
      char buf[256];
      if ((rc = net_obj_str(&fl->via.array.ptr[i], what, &p, &len, st))) break;
      snprintf(buf, sizeof buf, "%.*s", (int)(len < 255 ? len : 255), p);
      if ((rc = rt_devname_parse(buf, &filters[*nf], st))) rt_status_prefix(st, "device_filters: ");
      (*nf)++;
    }
  return rc;
}

/* Does a task pass the session's device_filters? */
static bool task_wanted(const rt_devname *filters, int nf, const char *job, int index) {
  if (nf == 0) return true;
  for (int i = 0; i < nf; i++)
    if ((!filters[i].job[0] || !strcmp(filters[i].job, job)) && (filters[i].task < 0 || filters[i].task == index))
      return true;
  return false;
}

static int check_cluster(rt_master *m, const char *task, const net_in *rep, rt_status *st);

/* Ask every task (the session's device_filters allowing) for its devices, all at once. */
static int discover_devices(rt_master *m, msess *s, const rt_devname *filters, int nf, rt_status *st) {
  const rt_cluster *c = m->srv->cluster;
  discover d = {.m = m, .n = c->n};
  d.task = xcalloc((size_t)c->n + 1, sizeof *d.task);
  d.addr = xcalloc((size_t)c->n + 1, sizeof *d.addr);
  d.pr = xcalloc((size_t)c->n + 1, sizeof *d.pr);
  d.done = xcalloc((size_t)c->n + 1, sizeof *d.done);
  net_cq *q = net_cq_new();
  int rc = RT_OK, pending = 0;
  for (int i = 0; i < c->n && !rc; i++) {
    if (!task_wanted(filters, nf, c->tasks[i].job, c->tasks[i].index)) continue;
    char ep[256];
    rt_task_name(c->tasks[i].job, c->tasks[i].index, d.task[i], sizeof d.task[i]);
    snprintf(d.addr[i], sizeof d.addr[i], "%s", c->tasks[i].addr);
    rt_endpoint(c->tasks[i].addr, ep, sizeof ep);
    if (!strcmp(d.task[i], m->srv->task)) snprintf(ep, sizeof ep, "%s", m->srv->endpoint);
    if (!(d.pr[i] = net_peer_get(ep, st))) {
      rc = st->code;
      break;
    }
    if ((rc = net_peer_send(d.pr[i], net_msg_new("GetStatus"), q, (uint64_t)i, NULL, st))) break;
    pending++;
  }
  net_wait w = {.timeout_ms = s->timeout_ms > 0 ? (int)s->timeout_ms : -1, .tick_ms = 250,
                .tick = discover_tick, .arg = &d};
  while (!rc && pending > 0) {
    uint64_t tag;
    net_in *rep = NULL;
    rt_status ps = {0};
    rc = net_cq_wait(q, &w, NULL, &tag, &rep, &ps);
    if (tag == NET_CQ_NONE) {   /* timed out or cancelled */
      discover_tick(&d, 0);
      if (rc == RT_DEADLINE_EXCEEDED)
        rt_error(st, RT_DEADLINE_EXCEEDED, "Timed out after %lld ms (operation_timeout_in_ms) waiting for %s: "
                 "is the task started, at that address?", (long long)s->timeout_ms, d.msg);
      else
        *st = ps;
      break;
    }
    if (rc) *st = ps;
    int ready = (int)tag;
    d.done[ready] = true;
    pending--;
    const msgpack_object_array *devs = NULL;
    if (!rc) rc = check_cluster(m, d.task[ready], rep, st);
    if (!rc) rc = net_get_array(rep, "devices", &devs, st);
    for (uint32_t k = 0; !rc && k < devs->size; k++) {
      const char *p;
      size_t len;
      uint64_t inc = 0;
      const msgpack_object *dv = &devs->ptr[k];
      rc = net_obj_str(net_obj_key(dv, "name") ? net_obj_key(dv, "name") : dv, "GetStatus.devices", &p, &len, st);
      if (!rc && net_obj_key(dv, "incarnation"))
        rc = net_obj_uint(net_obj_key(dv, "incarnation"), "GetStatus.incarnation", &inc, st);
      if (rc) break;
      s->devs = xrealloc(s->devs, (size_t)(s->n_devs + 1) * sizeof *s->devs);
      mdev *md = &s->devs[s->n_devs++];
      snprintf(md->name, sizeof md->name, "%.*s", (int)(len < 199 ? len : 199), p);
      snprintf(md->task, sizeof md->task, "%s", d.task[ready]);
      snprintf(md->endpoint, sizeof md->endpoint, "%s", net_peer_endpoint(d.pr[ready]));
      md->incarnation = inc;
    }
    net_in_free(rep);
    if (rc && !strstr(st->msg, d.task[ready])) rt_status_prefix(st, "%s: ", d.task[ready]);
    if (!rc) s->n_tasks++;
  }
  pthread_mutex_lock(&m->mu);
  m->wait_msg[0] = '\0';
  pthread_mutex_unlock(&m->mu);
  free(d.task);
  free(d.addr);
  net_cq_free(q);
  free(d.pr);
  free(d.done);
  return rc;
}

static uint64_t dev_incarnation(void *arg, const char *device) {
  msess *s = arg;
  for (int i = 0; i < s->n_devs; i++)
    if (!strcmp(s->devs[i].name, device)) return s->devs[i].incarnation;
  return 0;
}

/* "x" -> "x:0"; anything else unchanged. */
static void canon_tensor(const char *in, char *out, size_t n) {
  char node[256];
  int idx;
  if (rt_tensor_name_parse(in, node, sizeof node, &idx) && idx >= 0)
    snprintf(out, n, "%s:%d", node, idx);
  else
    snprintf(out, n, "%s", in);
}

/* ---- handlers ----------------------------------------------------------------------- */

/* Does msg already say which task failed ("/job:ps/replica:0/task:0: ...": a part that
 * could not reach another names that one)? */
static bool names_task(const char *msg) {
  const char *sp = strchr(msg, ' ');
  return !strncmp(msg, "/job:", 5) && sp && sp[-1] == ':';
}

/* Ops that cost nothing worth starting early: a fragment whose other nodes all wait on a
 * _Recv gains nothing from its RunGraph coming before the tensor does. */
static bool trivial_op(const char *op) {
  static const char *const ops[] = {"Const", "NoOp", "Identity", "VariableV2", "Variable",
                                    "VarHandleOp", "ReadVariableOp", "_Send", NULL};
  for (int i = 0; ops[i]; i++)
    if (!strcmp(op, ops[i])) return true;
  return false;
}

/* mpart.waits for fragment g: every node that does not depend on a _Recv is trivial.
 * Nodes come inputs first (a fragment is built so); a graph where a forward pass does not
 * settle it counts as not waiting. */
static bool fragment_waits(const rt_graph *g) {
  bool *after = xcalloc((size_t)g->n_nodes + 1, sizeof *after);   /* depends on a _Recv */
  bool waits = true;
  for (int i = 0; i < g->n_nodes && waits; i++) {
    const rt_node *n = g->nodes[i];
    after[i] = !strcmp(n->op, "_Recv");
    for (int k = 0; k < n->n_inputs && !after[i]; k++) {
      int src = n->edges[k].node;
      if (src >= i) waits = false;   /* not inputs first: no verdict */
      else after[i] = after[src];
    }
    if (!after[i] && !trivial_op(n->op)) waits = false;
  }
  free(after);
  return waits;
}

static void handle_create(rt_master *m, net_req *req) {
  const net_in *in = net_req_msg(req);
  rt_status st = {0};
  msess *s = xcalloc(1, sizeof *s);
  s->g = rt_graph_new();
  pthread_mutex_init(&s->mu, NULL);
  pthread_cond_init(&s->idle, NULL);
  int rc = RT_OK;
  const msgpack_object *cfg = net_get(in, "config");
  if (cfg && cfg->type == MSGPACK_OBJECT_MAP) {
    const msgpack_object *v;
    if (!rc && (v = net_obj_key(cfg, "allow_soft_placement")))
      rc = net_obj_bool(v, "config.allow_soft_placement", &s->soft, &st);
    if (!rc && (v = net_obj_key(cfg, "log_device_placement")))
      rc = net_obj_bool(v, "config.log_device_placement", &s->log_placement, &st);
    if (!rc && (v = net_obj_key(cfg, "operation_timeout_in_ms")))
      rc = net_obj_int(v, "config.operation_timeout_in_ms", &s->timeout_ms, &st);
    if (!rc && (v = net_obj_key(cfg, "isolate_session_state")))
      rc = net_obj_bool(v, "config.isolate_session_state", &s->isolate, &st);
  }
  if (!rc && net_has(in, "graph")) rc = rt_unpack_nodes(in, net_get(in, "graph"), "graph", s->g, &st);
  rt_devname filters[MAX_FILTERS];
  int nf = 0;
  if (!rc) rc = parse_filters(cfg ? net_obj_key(cfg, "device_filters") : NULL, "config.device_filters", filters, &nf, &st);
  if (!rc) rc = discover_devices(m, s, filters, nf, &st);
  if (rc) {
    msess_free(s);
    reply_status(req, rc, &st);
    return;
  }
  pthread_mutex_lock(&m->mu);
  s->handle = rt_random_u64();
  s->refs = 1;
  s->next = m->sessions;
  m->sessions = s;
  pthread_mutex_unlock(&m->mu);
  net_msg *rep = net_msg_new("CreateSessionOk");
  net_msg_uint(rep, "session", s->handle);
  net_reply(req, rep);
}

static void handle_extend(rt_master *m, net_req *req) {
  const net_in *in = net_req_msg(req);
  rt_status st = {0};
  msess *s = session_find(m, in, &st);
  if (!s) {
    reply_status(req, st.code, &st);
    return;
  }
  pthread_mutex_lock(&s->mu);
  int rc = rt_unpack_nodes(in, net_get(in, "graph"), "graph", s->g, &st);
  pthread_mutex_unlock(&s->mu);
  session_unref(m, s);
  if (rc)
    reply_status(req, rc, &st);
  else
    net_reply(req, net_msg_new("ExtendSessionOk"));
}

/* A fragment's RegisterGraph request. */
static net_msg *register_msg(const msess *s, const rt_graph *g) {
  net_msg *req = net_msg_new("RegisterGraph");
  net_msg_uint(req, "session", s->handle);
  if (s->isolate) net_msg_bool(req, "isolate", true);
  rt_pack_nodes(req, net_msg_field(req, "graph"), g, 0);
  return req;
}

/* Prepare a run signature: prune, place, partition, register. s->mu held. */
/* A cluster with a ps job whose variables land elsewhere: other workers cannot share them
 * (a classic mistake: replica_device_setter forgotten). A warning naming them, or NULL. */
static char *unshared_variables(rt_master *m, const rt_graph *g, const bool *needed) {
  if (rt_cluster_num_tasks(m->srv->cluster, "ps") == 0) return NULL;
  char names[600] = "", where[200] = "";
  size_t off = 0;
  int count = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    const rt_node *n = g->nodes[i];
    if (!needed[i] || strcmp(n->op, "VariableV2") || !n->assigned || !strncmp(n->assigned, "/job:ps/", 8))
      continue;
    if (!count) {
      rt_devname d;
      rt_devname_parse(n->assigned, &d, NULL);
      rt_devname_task_str(&d, where, sizeof where);
    }
    if (count < 8 && off < sizeof names)
      off += (size_t)snprintf(names + off, sizeof names - off, "%s%s", count ? ", " : "", n->name);
    count++;
  }
  if (!count) return NULL;
  char *w = xmalloc(1200);
  snprintf(w, 1200, "variable%s %s%s %s placed on %s, not on a ps task: other workers cannot share "
           "%s. Place variables with tf.device(tf.train.replica_device_setter(cluster=...)) or "
           "tf.device(\"/job:ps/task:0\").", count == 1 ? "" : "s", names, count > 8 ? ", ..." : "",
           count == 1 ? "is" : "are", where, count == 1 ? "it" : "them");
  return w;
}

/* RT_OP_CLIENT nodes (tf.data's iterators) run in the process whose interpreter built them:
 * when that is this process, they go to this task's CPU, whatever device the script named
 * (their elements reach their consumers by Send/Recv); from any other process they could
 * run nowhere in the cluster, so a step that needs them is refused before it starts. */
static int pin_client_ops(rt_graph *g, const bool *needed, const char *here, rt_status *st) {
  for (int i = 0; i < g->n_nodes; i++) {
    rt_node *n = g->nodes[i];
    if (!n->def || !(n->def->flags & RT_OP_CLIENT)) continue;
    bool mine = rt_node_int(n, "owner", 0) == rt_process_token();
    if (!mine && !needed[i]) continue;   /* the placer places every node: pin them all */
    if (!mine)
      return rt_error(st, RT_UNIMPLEMENTED,
                      "node '%s' (%s): a tf.data iterator runs in the process whose script built it, "
                      "and that process is not this session's master: start a tf.train.Server in "
                      "the script and run the session on its target, or feed the elements with "
                      "feed_dict", n->name, n->op);
    if (strcmp(n->device, here)) {
      free(n->device);
      n->device = xstrdup(here);
    }
  }
  return RT_OK;
}

static int prepare(rt_master *m, msess *s, int nf, char **feeds, int nx, char **fetches, int nt,
                   char **targets, mrun **out, rt_status *st) {
  int rc;
  bool *needed = xcalloc((size_t)s->g->n_nodes + 1, sizeof *needed);
  const char **names = xcalloc((size_t)s->n_devs + 1, sizeof *names);
  for (int i = 0; i < s->n_devs; i++) names[i] = s->devs[i].name;
  char dflt[200];
  snprintf(dflt, sizeof dflt, "%s/device:CPU:0", m->srv->task);
  rt_place_opts po = {.soft = s->soft, .default_device = dflt};
  rc = rt_graph_needed(s->g, nf, (const char *const *)feeds, nx, (const char *const *)fetches, nt,
                       (const char *const *)targets, needed, st);
  if (!rc) rc = pin_client_ops(s->g, needed, dflt, st);
  if (!rc) rc = rt_place(s->g, names, s->n_devs, &po, st);
  if (!rc && s->log_placement)
    for (int i = 0; i < s->g->n_nodes; i++)
      if (needed[i])
        fprintf(stderr, "%s: (%s): %s\n", s->g->nodes[i]->name, s->g->nodes[i]->op,
                s->g->nodes[i]->assigned);
  char *warning = rc ? NULL : unshared_variables(m, s->g, needed);
  rt_partition *parts = NULL;
  int np = 0;
  rt_partition_opts pto = {.by_task = true, .borrow = true, .incarnation = dev_incarnation, .arg = s};
  if (!rc) rc = rt_partition_graph(s->g, needed, &pto, &parts, &np, st);
  if (!rc) {   /* grappler's remapping, on what each task runs; the run's names stay */
    const char **keep = xcalloc((size_t)(nf + nx + nt) + 1, sizeof *keep);
    int nk = 0;
    for (int i = 0; i < nf; i++) keep[nk++] = feeds[i];
    for (int i = 0; i < nx; i++) keep[nk++] = fetches[i];
    for (int i = 0; i < nt; i++) keep[nk++] = targets[i];
    for (int i = 0; i < np && !rc; i++) rc = rt_remap_graph(&parts[i].g, keep, nk, st);
    free(keep);
    if (rc) rt_partitions_free(parts, np);
  }
  free(names);
  if (rc) {
    free(needed);
    free(warning);
    return rc;
  }

  mrun *r = xcalloc(1, sizeof *r);
  pthread_mutex_init(&r->step_mu, NULL);
  r->warning = warning;
  r->needed = needed;              /* views: kept for partition_graphs */
  r->n_needed = s->g->n_nodes;
  r->n_parts = np;
  r->parts = xcalloc((size_t)np + 1, sizeof *r->parts);
  r->feed_part = xcalloc((size_t)nf + 1, sizeof *r->feed_part);
  r->fetch_part = xcalloc((size_t)nx + 1, sizeof *r->fetch_part);
  char node[256];
  int idx;
  for (int i = 0; i < nf; i++) {
    rt_tensor_name_parse(feeds[i], node, sizeof node, &idx);
    r->feed_part[i] = rt_partition_of(parts, np, node);
  }
  for (int i = 0; i < nx; i++) {
    r->fetch_part[i] = -1;
    for (int k = 0; k < nf; k++)
      if (!strcmp(fetches[i], feeds[k])) r->fetch_part[i] = -2 - k;   /* fed: echo it back */
    if (r->fetch_part[i] != -1) continue;
    rt_tensor_name_parse(fetches[i], node, sizeof node, &idx);
    r->fetch_part[i] = rt_partition_of(parts, np, node);
  }
  /* Every fragment is registered at once: the other tasks' first (packed and sent before
   * this task's own is packed), then this task's own on this thread while they decode theirs
   * (a big graph's registration is most of its first step). */
  net_wait rw = {.timeout_ms = s->timeout_ms > 0 ? (int)s->timeout_ms : -1};
  net_cq *q = net_cq_new();
  int owed = 0, here = -1;
  net_peer *here_peer = NULL;
  net_msg *here_req = NULL;
  for (int i = 0; i < np && !rc; i++) {
    mpart *p = &r->parts[i];
    snprintf(p->task, sizeof p->task, "%s", parts[i].name);
    for (int d = 0; d < s->n_devs; d++)
      if (!strcmp(s->devs[d].task, p->task)) {
        snprintf(p->endpoint, sizeof p->endpoint, "%s", s->devs[d].endpoint);
        p->incarnation = s->devs[d].incarnation;
      }
    net_peer *c = net_peer_get(p->endpoint, st);
    if (!c) {
      rc = st->code;
      break;
    }
    for (int k = 0; k < parts[i].g->n_nodes && !p->recv; k++) p->recv = !strcmp(parts[i].g->nodes[k]->op, "_Recv");
    p->waits = p->recv && fragment_waits(parts[i].g);
    if (here < 0 && net_peer_local(c)) {
      here = i, here_peer = c;
      continue;
    }
    if (!(rc = net_peer_send(c, register_msg(s, parts[i].g), q, (uint64_t)i, NULL, st))) {
      owed++;
    } else if (s->n_tasks > 1) {
      rt_status_prefix(st, "%s: ", p->task);
    }
  }
  if (here >= 0 && !rc) here_req = register_msg(s, parts[here].g);
  /* The fragments are packed: freed while the other tasks decode theirs. */
  rt_partitions_free(parts, np);
  if (here_req && !rc) {
    net_in *rep = NULL;
    rc = net_peer_call(here_peer, here_req, &rep, &rw, st);
    if (!rc) rc = net_get_uint(rep, "handle", &r->parts[here].handle, st);
    net_in_free(rep);
    if (rc && s->n_tasks > 1) rt_status_prefix(st, "%s: ", r->parts[here].task);
  } else {
    net_msg_free(here_req);
  }
  while (owed > 0) {
    uint64_t tag;
    net_in *rep = NULL;
    rt_status rs = {0};
    int rrc = net_cq_wait(q, &rw, NULL, &tag, &rep, &rs);
    if (tag == NET_CQ_NONE) {   /* timed out */
      if (!rc) rc = rrc, *st = rs;
      break;
    }
    owed--;
    if (!rrc) rrc = net_get_uint(rep, "handle", &r->parts[tag].handle, &rs);
    net_in_free(rep);
    if (rrc && !rc) {
      rc = rrc, *st = rs;
      if (s->n_tasks > 1) rt_status_prefix(st, "%s: ", r->parts[tag].task);
    }
  }
  net_cq_free(q);   /* a registration still owed after a failure is discarded */
  if (rc) {
    mrun_free(r);
    return rc;
  }
  *out = r;
  return RT_OK;
}

static int check_feed(const msess *s, const char *name, const rt_tensor *t, rt_status *st) {
  rt_node *n;
  int idx;
  int rc = rt_graph_output(s->g, name, &n, &idx, st);
  if (rc) return rc;
  if (n->out_types[idx] != t->dtype)
    return rt_error(st, RT_INVALID_ARGUMENT,
                    "Cannot feed value of dtype %s for Tensor '%s', which has dtype %s",
                    rt_dtype_name(t->dtype), name, rt_dtype_name(n->out_types[idx]));
  if (!rt_shape_compatible(&n->out_shapes[idx], &t->shape)) {
    char a[128], b[128];
    return rt_error(st, RT_INVALID_ARGUMENT,
                    "Cannot feed value of shape %s for Tensor '%s', which has shape '%s'",
                    rt_shape_str(&t->shape, a, sizeof a), name,
                    rt_shape_str(&n->out_shapes[idx], b, sizeof b));
  }
  return RT_OK;
}

/* What a step watches: the session's cancel count, against the one it started with, and
 * a CancelRun that named this step. */
typedef struct cancel_watch {
  msess *s;
  unsigned gen;
  mrun *r;
} cancel_watch;

static int cancel_tick(void *arg, int64_t elapsed_ms) {
  (void)elapsed_ms;
  cancel_watch *w = arg;
  return atomic_load(&w->s->cancel) != w->gen || atomic_load(&w->r->cancelled);
}

/* What a fragment run on the master's own thread watches: the session's cancel, and the
 * other parts (a failure among them stops it). */
typedef struct here_watch {
  cancel_watch c;
  net_cq *q;
} here_watch;

static int here_tick(void *arg, int64_t elapsed_ms) {
  here_watch *h = arg;
  return cancel_tick(&h->c, elapsed_ms) || net_cq_has_error(h->q);
}

/* Wait (s->mu held) until no step of s is in flight. */
static void wait_idle(msess *s) {
  while (s->running > 0) pthread_cond_wait(&s->idle, &s->mu);
}

/* AbortStep to every part not done: fire and forget. */
static void abort_parts(net_peer **cl, const bool *done, int np, uint64_t step, int code,
                        const char *msg) {
  for (int i = 0; i < np; i++)
    if (cl[i] && !done[i]) {
      rt_status ignore;
      net_msg *ab = net_msg_new("AbortStep");
      net_msg_uint(ab, "step", step);
      net_msg_int(ab, "code", code);
      net_msg_str(ab, "msg", msg);
      net_peer_send_oneway(cl[i], ab, &ignore);
    }
}

/* A step out of time: what each part not done waits in (the op its executor is in, asked
 * with GetProgress, 300 ms at most), or that its task has not answered. */
static void step_waits(net_peer **cl, const bool *done, const mrun *r, uint64_t step, char *buf, size_t n) {
  size_t off = 0;
  buf[0] = '\0';
  net_cq *q = net_cq_new();
  int pending = 0;
  bool *asked = xcalloc((size_t)r->n_parts + 1, sizeof *asked);
  for (int i = 0; i < r->n_parts; i++) {
    rt_status ignore;
    net_msg *msg = net_msg_new("GetProgress");
    net_msg_uint(msg, "step", step);
    if (cl[i] && !done[i] && !net_peer_send(cl[i], msg, q, (uint64_t)i, NULL, &ignore)) asked[i] = true, pending++;
  }
  int64_t t0 = rt_trace_micros();
  while (pending > 0) {
    int left = 300 - (int)((rt_trace_micros() - t0) / 1000);
    uint64_t tag;
    net_in *rep = NULL;
    rt_status ps;
    if (left <= 0) break;
    int rrc = net_cq_wait(q, &(net_wait){.timeout_ms = left}, NULL, &tag, &rep, &ps);
    if (tag == NET_CQ_NONE) break;
    pending--;
    asked[tag] = false;
    const msgpack_object *d = rrc ? NULL : net_get(rep, "devices");
    for (uint32_t k = 0; d && d->type == MSGPACK_OBJECT_ARRAY && k < d->via.array.size && off < n; k++) {
      char dev[200], op[256];
      rt_obj_str(&d->via.array.ptr[k], "device", dev, sizeof dev);
      rt_obj_str(&d->via.array.ptr[k], "op", op, sizeof op);
      if (op[0])
        off += (size_t)snprintf(buf + off, n - off, "%snode '%s' on %s", off ? ", " : "", op, dev);
    }
    net_in_free(rep);
  }
  for (int i = 0; i < r->n_parts && off < n; i++)
    if (asked[i])
      off += (size_t)snprintf(buf + off, n - off, "%s%s (no answer)", off ? ", " : "", r->parts[i].task);
  if (!buf[0]) snprintf(buf, n, "the step's RunGraph replies");
  free(asked);
  net_cq_free(q);
}

/* One step: a RunGraph per partition, all in flight; the first error aborts the rest. A
 * step longer than timeout_ms (RunOptions.timeout_in_ms; else the session's
 * operation_timeout_in_ms; <= 0: none) ends with DeadlineExceeded naming what it waits in. */
/* The RunGraph request of part i of signature r for one step: its feeds and fetches. */
static net_msg *rungraph_msg(const mrun *r, int i, uint64_t step, bool trace, bool busy, int nf,
                             char **feeds, rt_tensor **fv, int nx, char **fetches) {
  net_msg *req = net_msg_new("RunGraph");
  net_msg_uint(req, "handle", r->parts[i].handle);
  net_msg_uint(req, "incarnation", r->parts[i].incarnation);
  net_msg_uint(req, "step", step);
  if (trace) net_msg_bool(req, "trace", true);   /* views: RunOptions.FULL_TRACE */
  if (busy) net_msg_bool(req, "busy", true);     /* views: the live view of a loop */
  int n = 0;
  for (int k = 0; k < nf; k++) n += r->feed_part[k] == i;
  msgpack_packer *pk = net_msg_field(req, "feeds");
  msgpack_pack_array(pk, (size_t)n);
  for (int k = 0; k < nf; k++)
    if (r->feed_part[k] == i) rt_pack_feed(req, pk, feeds[k], fv[k]);
  n = 0;
  for (int k = 0; k < nx; k++) n += r->fetch_part[k] == i;
  pk = net_msg_field(req, "fetches");
  msgpack_pack_array(pk, (size_t)n);
  for (int k = 0; k < nx; k++)
    if (r->fetch_part[k] == i) {
      msgpack_pack_str(pk, strlen(fetches[k]));
      msgpack_pack_str_body(pk, fetches[k], strlen(fetches[k]));
    }
  return req;
}

/* Send every part's RunGraph but skip's, each reply to q with its index as tag; counts
 * them in *in_flight. */
static int send_parts(const mrun *r, net_peer **cl, net_cq *q, int skip, uint64_t step, bool trace,
                      bool busy, int nf, char **feeds, rt_tensor **fv, int nx, char **fetches,
                      int *in_flight, rt_status *st) {
  for (int i = 0; i < r->n_parts; i++) {
    if (i == skip) continue;
    net_msg *req = rungraph_msg(r, i, step, trace, busy, nf, feeds, fv, nx, fetches);
    int rc = net_peer_send(cl[i], req, q, (uint64_t)i, NULL, st);
    if (rc) {
      rt_status_prefix(st, "%s: ", r->parts[i].task);
      return rc;
    }
    ++*in_flight;
  }
  return RT_OK;
}

/* Part ready's RunGraphOk: its fetches into out, its traces and busy times (views). */
static int take_reply(const net_in *rep, const mrun *r, int ready, int nx, rt_tensor **out,
                      rt_step_stats *trace, rt_busy *busy, int *n_busy, rt_status *rs) {
  const msgpack_object_array *ts = NULL;
  int rrc = net_get_array(rep, "tensors", &ts, rs);
  int j = 0;
  for (int k = 0; !rrc && k < nx; k++)
    if (r->fetch_part[k] == ready) {
      if ((uint32_t)j >= ts->size)
        rrc = rt_error(rs, RT_INTERNAL, "RunGraph returned too few tensors");
      else
        rrc = rt_unpack_tensor_msg(rep, &ts->ptr[j++], "RunGraph.tensors", &out[k], rs);
    }
  /* views: this task's per-device traces */
  if (!rrc && trace && net_get(rep, "step_stats"))
    rrc = rt_unpack_step_stats(net_get(rep, "step_stats"), "RunGraph.step_stats", trace, rs);
  if (!rrc && busy && net_get(rep, "busy"))
    rrc = rt_unpack_busy(net_get(rep, "busy"), "RunGraph.busy", busy, n_busy, RT_MAX_BUSY, rs);
  return rrc;
}

static int run_step(rt_master *m, msess *s, mrun *r, unsigned gen, int64_t timeout_ms, int nf, char **feeds, rt_tensor **fv, int nx,
                    char **fetches, rt_tensor **out, rt_step_stats *trace, rt_busy *busy, int *n_busy,
                    rt_status *st) {
  int np = r->n_parts, rc = RT_OK;
  uint64_t step = rt_random_u64();
  /* views: publish the step in flight for Progress */
  pthread_mutex_lock(&m->mu);
  s->cur_step = step;
  s->cur_start_us = rt_trace_micros();
  s->cur_ep = xrealloc(s->cur_ep, (size_t)(np + 1) * sizeof *s->cur_ep);
  s->n_cur = np;
  for (int i = 0; i < np; i++) snprintf(s->cur_ep[i], sizeof s->cur_ep[i], "%s", r->parts[i].endpoint);
  pthread_mutex_unlock(&m->mu);
  net_peer **cl = xcalloc((size_t)np + 1, sizeof *cl);
  bool *done = xcalloc((size_t)np + 1, sizeof *done);
  net_cq *q = net_cq_new();
  int in_flight = 0;
  /* The fragment on this process's own worker runs on this thread: no hop to a handler
   * thread and back. While it runs, its waits for tensors and its executor between nodes
   * look every 50 ms at here_tick: a failed part elsewhere, Ctrl-C or a cancel stops it.
   * It runs before the others are sent when it receives nothing and every other part
   * waits on what it sends (mpart.waits: nothing there could start sooner): their tensors
   * then go in one write with their RunGraph, and their executors start with them instead
   * of waking for each; else the others go first, so they start at once and a dead task
   * among them is seen while this one runs. A step with a time limit runs its fragment on
   * a handler thread instead, where the wait below keeps the limit to the millisecond. */
  int here_part = -1;
  const char *limit = timeout_ms > 0 ? "RunOptions.timeout_in_ms" : "operation_timeout_in_ms";
  if (timeout_ms <= 0) timeout_ms = s->timeout_ms;
  for (int i = 0; i < np && !rc; i++) {
    if (!(cl[i] = net_peer_get(r->parts[i].endpoint, st))) rc = st->code;
    else if (timeout_ms <= 0 && here_part < 0 && net_peer_local(cl[i])) here_part = i;
  }
  bool here_first = here_part >= 0 && !r->parts[here_part].recv;
  for (int i = 0; i < np && here_first; i++) here_first = i == here_part || r->parts[i].waits;
  net_msg *here = NULL;
  if (!rc && here_part >= 0) {
    here = rungraph_msg(r, here_part, step, trace != NULL, busy != NULL, nf, feeds, fv, nx, fetches);
    in_flight++;
  }
  if (!rc && !here_first) rc = send_parts(r, cl, q, here_part, step, trace != NULL, busy != NULL, nf, feeds, fv, nx, fetches, &in_flight, st);
  int first_err = rc;
  rt_status err = *st;
  cancel_watch cw = {s, gen, r};
  net_wait w = {.timeout_ms = timeout_ms > 0 ? (int)timeout_ms : -1, .tick_ms = 50,
                .tick = cancel_tick, .arg = &cw};
  here_watch hw = {{s, gen, r}, q};
  net_wait hwait = {.timeout_ms = w.timeout_ms, .tick_ms = 50, .tick = here_tick, .arg = &hw};
  if (here && rc) {   /* a send failed: the local part never runs */
    net_msg_free(here);
    here = NULL;
    in_flight--;
  }
  while (in_flight > 0) {
    uint64_t tag = here ? (uint64_t)here_part : 0;
    net_in *rep = NULL;
    rt_status rs = {0};
    bool first_here = here && here_first;
    if (first_here) net_peer_hold();   /* its tensors for the others go with their RunGraph */
    int rrc = here ? net_peer_call(cl[here_part], here, &rep, &hwait, &rs)
                   : net_cq_wait(q, &w, NULL, &tag, &rep, &rs);
    here = NULL;
    if (first_here) {   /* the others now, unless it failed: each RunGraph in one write with
                           the tensors held for its task, then what is left held */
      int frc = rrc ? RT_OK
                    : send_parts(r, cl, q, here_part, step, trace != NULL, busy != NULL, nf, feeds,
                                 fv, nx, fetches, &in_flight, &err);
      rt_status ferr;
      int flrc = net_peer_flush(&ferr);
      if (flrc && !frc) {
        frc = flrc, err = ferr;
        rt_status_prefix(&err, "%s: ", r->parts[here_part].task);
      }
      if (frc && !first_err) first_err = frc, abort_parts(cl, done, np, step, frc, err.msg);
    }
    if (tag == NET_CQ_NONE) {
      /* Timeout or cancellation: abort everything still running. */
      if (!first_err && rrc == RT_DEADLINE_EXCEEDED) {
        char what[900];
        step_waits(cl, done, r, step, what, sizeof what);
        first_err = rt_error(&err, RT_DEADLINE_EXCEEDED, "Timed out after %lld ms (%s) waiting for %s",
                             (long long)timeout_ms, limit, what);
      }
      if (!first_err) first_err = rrc, err = rs;
      abort_parts(cl, done, np, step, first_err, err.msg);
      break;
    }
    int ready = (int)tag;
    done[ready] = true;
    in_flight--;
    if (!rrc) rrc = take_reply(rep, r, ready, nx, out, trace, busy, n_busy, &rs);
    net_in_free(rep);
    if (rrc && (!first_err || (first_err == RT_CANCELLED && rrc != RT_CANCELLED))) {
      bool news = !first_err;
      first_err = rrc;
      err = rs;
      if (s->n_tasks > 1 && !names_task(err.msg)) rt_status_prefix(&err, "%s: ", r->parts[ready].task);
      if (news) abort_parts(cl, done, np, step, rrc, err.msg);
    }
  }
  net_cq_free(q);   /* replies still owed (aborted parts) are discarded */
  free(cl);
  free(done);
  pthread_mutex_lock(&m->mu);   /* views: no step in flight */
  s->cur_step = 0;
  s->n_cur = 0;
  pthread_mutex_unlock(&m->mu);
  if (first_err == RT_CANCELLED) {   /* by the session's close? */
    pthread_mutex_lock(&s->mu);
    if (s->closed) rt_error(&err, RT_CANCELLED, CLOSED_MSG);
    pthread_mutex_unlock(&s->mu);
  }
  for (int k = 0; k < nx && !first_err; k++)
    if (r->fetch_part[k] <= -2) out[k] = rt_tensor_ref(fv[-2 - r->fetch_part[k]]);
  if (first_err) *st = err;
  return first_err;
}

/* ---- views: partition graphs, placement, progress ----------------------------------- */

static void free_strs(char **v, int n);
static int get_names(const net_in *in, const char *key, char ***out, int *n, rt_status *st);

/* The placed graph split per device (as the workers split their fragments): the
 * partition_graphs of RunMetadata and what %partitions / %dot show. s->mu held. */
static int views_device_partitions(msess *s, const bool *needed, int n_needed, rt_partition **parts,
                                   int *np, rt_status *st) {
  bool *nd = xcalloc((size_t)s->g->n_nodes + 1, sizeof *nd);
  for (int i = 0; i < s->g->n_nodes; i++) nd[i] = needed ? i < n_needed && needed[i] : s->g->nodes[i]->assigned != NULL;
  rt_partition_opts o = {.by_task = false, .incarnation = dev_incarnation, .arg = s};
  int rc = rt_partition_graph(s->g, nd, &o, parts, np, st);
  free(nd);
  return rc;
}

/* [{"device": str, "graph": nodes}] */
static void views_pack_partitions(net_msg *m, msgpack_packer *pk, const rt_partition *parts, int np) {
  msgpack_pack_array(pk, (size_t)np);
  for (int i = 0; i < np; i++) {
    msgpack_pack_map(pk, 2);
    rt_pack_kstr(pk, "device", parts[i].name);
    msgpack_pack_str(pk, 5);
    msgpack_pack_str_body(pk, "graph", 5);
    rt_pack_nodes(m, pk, parts[i].g, 0);
  }
}

/* Placement {session, feeds: [name], fetches, targets} -> {"nodes": [{name, op, requested,
 * assigned, reason}], "partitions": [{device, graph}], "edges": [{tensor, from, to, dtype,
 * shape}]}. Places what the fetches need (everything when none are given) without running
 * or registering anything. */
static void handle_placement(rt_master *m, net_req *req) {
  const net_in *in = net_req_msg(req);
  rt_status st = {0};
  char **feeds = NULL, **fetches = NULL, **targets = NULL;
  int nf = 0, nx = 0, nt = 0, rc = RT_OK;
  msess *s = session_find(m, in, &st);
  if (!s) rc = st.code;
  if (!rc) rc = get_names(in, "feeds", &feeds, &nf, &st);
  if (!rc) rc = get_names(in, "fetches", &fetches, &nx, &st);
  if (!rc) rc = get_names(in, "targets", &targets, &nt, &st);
  if (rc) {
    reply_status(req, rc, &st);
    free_strs(feeds, nf);
    free_strs(fetches, nx);
    free_strs(targets, nt);
    session_unref(m, s);
    return;
  }
  pthread_mutex_lock(&s->mu);
  bool *needed = xcalloc((size_t)s->g->n_nodes + 1, sizeof *needed);
  const char **names = xcalloc((size_t)s->n_devs + 1, sizeof *names);
  for (int i = 0; i < s->n_devs; i++) names[i] = s->devs[i].name;
  char dflt[200];
  snprintf(dflt, sizeof dflt, "%s/device:CPU:0", m->srv->task);
  rt_place_opts po = {.soft = s->soft, .default_device = dflt};
  if (nx + nt > 0)
    rc = rt_graph_needed(s->g, nf, (const char *const *)feeds, nx, (const char *const *)fetches, nt,
                         (const char *const *)targets, needed, &st);
  else
    for (int i = 0; i < s->g->n_nodes; i++) needed[i] = true;
  rt_placement pl = {0};
  if (!rc) rc = pin_client_ops(s->g, needed, dflt, &st);
  if (!rc) rc = rt_placement_compute(s->g, needed, names, s->n_devs, &po, dev_incarnation, s, &pl, &st);
  if (rc) {
    reply_status(req, rc, &st);
  } else {
    net_msg *rep = net_msg_new("PlacementOk");
    msgpack_packer *pk = net_msg_field(rep, "nodes");
    msgpack_pack_array(pk, (size_t)pl.n_nodes);
    for (int i = 0; i < pl.n_nodes; i++) {
      const rt_placed_node *nd = &pl.nodes[i];
      msgpack_pack_map(pk, 5);
      rt_pack_kstr(pk, "name", nd->name);
      rt_pack_kstr(pk, "op", nd->op);
      rt_pack_kstr(pk, "requested", nd->requested);
      rt_pack_kstr(pk, "assigned", nd->assigned);
      rt_pack_kstr(pk, "reason", nd->reason);
    }
    views_pack_partitions(rep, net_msg_field(rep, "partitions"), pl.parts, pl.n_parts);
    pk = net_msg_field(rep, "edges");
    msgpack_pack_array(pk, (size_t)pl.n_edges);
    for (int i = 0; i < pl.n_edges; i++) {
      const rt_placed_edge *e = &pl.edges[i];
      msgpack_pack_map(pk, 7);
      rt_pack_kstr(pk, "tensor", e->tensor);
      rt_pack_kstr(pk, "send", e->send);
      rt_pack_kstr(pk, "from", e->from);
      rt_pack_kstr(pk, "to", e->to);
      rt_pack_kint(pk, "dtype", e->dtype);
      msgpack_pack_str(pk, 5);
      msgpack_pack_str_body(pk, "shape", 5);
      if (e->shape.ndims < 0) {
        msgpack_pack_nil(pk);
      } else {
        msgpack_pack_array(pk, (size_t)e->shape.ndims);
        for (int d = 0; d < e->shape.ndims; d++) msgpack_pack_int64(pk, e->shape.dims[d]);
      }
      rt_pack_kint(pk, "control", e->control);
    }
    net_reply(req, rep);
  }
  rt_placement_clear(&pl);
  pthread_mutex_unlock(&s->mu);
  session_unref(m, s);
  free(needed);
  free(names);
  free_strs(feeds, nf);
  free_strs(fetches, nx);
  free_strs(targets, nt);
}

/* Progress {session} -> {"running": bool, "elapsed_us", "devices": [GetProgress entries]}:
 * asks the workers of the session's step in flight (GetProgress, all at once, 500 ms at
 * most) and merges their answers. Never takes the session's lock (a step holds it). */
static void handle_progress(rt_master *m, net_req *req) {
  const net_in *in = net_req_msg(req);
  rt_status st = {0};
  uint64_t h = 0, step = 0;
  int64_t start = 0;
  int n = 0;
  char (*eps)[256] = NULL;
  if (net_get_uint(in, "session", &h, &st)) {
    reply_status(req, st.code, &st);
    return;
  }
  pthread_mutex_lock(&m->mu);
  msess *s = m->sessions;
  while (s && s->handle != h) s = s->next;
  if (s && s->cur_step) {
    step = s->cur_step;
    start = s->cur_start_us;
    n = s->n_cur;
    eps = xcalloc((size_t)n + 1, sizeof *eps);
    for (int i = 0; eps && i < n; i++) memcpy(eps[i], s->cur_ep[i], sizeof eps[i]);
  }
  pthread_mutex_unlock(&m->mu);
  if (!eps) n = 0;
  net_in **reps = xcalloc((size_t)n + 1, sizeof *reps);
  net_cq *q = net_cq_new();
  int pending = 0;
  for (int i = 0; i < n; i++) {
    bool dup = false;
    for (int k = 0; k < i; k++) dup |= !strcmp(eps[k], eps[i]);
    net_peer *p = dup ? NULL : net_peer_get(eps[i], &st);
    if (!p) continue;
    net_msg *msg = net_msg_new("GetProgress");
    net_msg_uint(msg, "step", step);
    if (!net_peer_send(p, msg, q, (uint64_t)i, NULL, &st)) pending++;
  }
  net_wait w = {.timeout_ms = 500};
  int64_t t0 = rt_trace_micros();
  while (pending > 0) {
    w.timeout_ms = 500 - (int)((rt_trace_micros() - t0) / 1000);
    uint64_t tag;
    net_in *r = NULL;
    rt_status ps;
    if (w.timeout_ms <= 0) break;
    int rrc = net_cq_wait(q, &w, NULL, &tag, &r, &ps);
    if (tag == NET_CQ_NONE) break;
    pending--;
    if (!rrc) reps[tag] = r;   /* lost: report what the others say */
  }
  net_cq_free(q);
  net_msg *rep = net_msg_new("ProgressOk");
  net_msg_bool(rep, "running", step != 0);
  net_msg_uint(rep, "step", step);
  net_msg_int(rep, "elapsed_us", step ? rt_trace_micros() - start : 0);
  int total = 0;
  for (int i = 0; i < n; i++) {
    const msgpack_object *d = reps[i] ? net_get(reps[i], "devices") : NULL;
    if (d && d->type == MSGPACK_OBJECT_ARRAY) total += (int)d->via.array.size;
  }
  msgpack_packer *pk = net_msg_field(rep, "devices");
  msgpack_pack_array(pk, (size_t)total);
  for (int i = 0; i < n; i++) {
    const msgpack_object *d = reps[i] ? net_get(reps[i], "devices") : NULL;
    if (d && d->type == MSGPACK_OBJECT_ARRAY)
      for (uint32_t k = 0; k < d->via.array.size; k++) msgpack_pack_object(pk, d->via.array.ptr[k]);
  }
  net_reply(req, rep);
  for (int i = 0; i < n; i++) net_in_free(reps[i]);
  free(reps);
  free(eps);
}

static void free_strs(char **v, int n) {
  for (int i = 0; i < n; i++) free(v[i]);
  free(v);
}

static int get_names(const net_in *in, const char *key, char ***out, int *n, rt_status *st) {
  const msgpack_object_array *a = NULL;
  *n = 0;
  *out = NULL;
  if (!net_has(in, key)) return RT_OK;
  int rc = net_get_array(in, key, &a, st);
  if (rc) return rc;
  *out = xcalloc((size_t)a->size + 1, sizeof **out);
  for (uint32_t i = 0; i < a->size; i++) {
    const char *p;
    size_t len;
    char what[64], name[512], canon[520];
    snprintf(what, sizeof what, "RunStep.%s[%u]", key, i);
    if ((rc = net_obj_str(&a->ptr[i], what, &p, &len, st))) return rc;
    snprintf(name, sizeof name, "%.*s", (int)(len < 511 ? len : 511), p);
    if (strcmp(key, "targets"))
      canon_tensor(name, canon, sizeof canon);
    else
      snprintf(canon, sizeof canon, "%s", name);
    (*out)[(*n)++] = xstrdup(canon);
  }
  return RT_OK;
}

/* The step `step` of signature r starts (r->step_mu held): CancelRun can name it now, and
 * one that came before it did ends it at once. */
static void step_begin(msess *s, mrun *r, uint64_t step) {
  pthread_mutex_lock(&s->mu);
  r->step = step;
  bool early = false;
  for (unsigned i = 0; step && i < 8 && i < s->n_cancelled; i++) early |= s->cancelled[i] == step;
  atomic_store(&r->cancelled, early);
  pthread_mutex_unlock(&s->mu);
}

static void handle_run(rt_master *m, net_req *req) {
  const net_in *in = net_req_msg(req);
  rt_status st = {0};
  char **feeds = NULL, **fetches = NULL, **targets = NULL;
  rt_tensor **fv = NULL, **out = NULL;
  int nf = 0, nx = 0, nt = 0, rc = RT_OK;
  msess *s = session_find(m, in, &st);
  if (!s) rc = st.code;
  const msgpack_object_array *fa = NULL;
  if (!rc && net_has(in, "feeds")) rc = net_get_array(in, "feeds", &fa, &st);
  if (!rc && fa) {
    feeds = xcalloc(fa->size + 1, sizeof *feeds);
    fv = xcalloc(fa->size + 1, sizeof *fv);
    for (uint32_t i = 0; !rc && i < fa->size; i++) {
      const msgpack_object *f = &fa->ptr[i];
      const msgpack_object *nm = net_obj_key(f, "name"), *tv = net_obj_key(f, "tensor");
      const char *p;
      size_t len;
      char name[512], canon[520];
      if (!nm || !tv) {
        rc = rt_error(&st, RT_INVALID_ARGUMENT, "RunStep.feeds[%u]: needs name and tensor", i);
        break;
      }
      if ((rc = net_obj_str(nm, "RunStep.feeds.name", &p, &len, &st))) break;
      snprintf(name, sizeof name, "%.*s", (int)(len < 511 ? len : 511), p);
      canon_tensor(name, canon, sizeof canon);
      feeds[nf] = xstrdup(canon);
      rc = rt_unpack_tensor_msg(in, tv, "RunStep.feeds.tensor", &fv[nf], &st);
      nf++;
    }
  }
  if (!rc) rc = get_names(in, "fetches", &fetches, &nx, &st);
  if (!rc) rc = get_names(in, "targets", &targets, &nt, &st);
  uint64_t step = 0;   /* the client's id for CancelRun; older clients send none */
  if (!rc && net_has(in, "step")) rc = net_get_uint(in, "step", &step, &st);
  /* views: RunOptions {"trace_level": int, "output_partition_graphs": bool} */
  int64_t trace_level = 0, timeout_ms = 0;
  bool want_pg = false, want_busy = false;
  const msgpack_object *opts = rc ? NULL : net_get(in, "options");
  if (opts && opts->type == MSGPACK_OBJECT_MAP) {
    const msgpack_object *v;
    if ((v = net_obj_key(opts, "trace_level"))) rc = net_obj_int(v, "RunStep.options.trace_level", &trace_level, &st);
    if (!rc && (v = net_obj_key(opts, "output_partition_graphs")))
      rc = net_obj_bool(v, "RunStep.options.output_partition_graphs", &want_pg, &st);
    if (!rc && (v = net_obj_key(opts, "busy"))) rc = net_obj_bool(v, "RunStep.options.busy", &want_busy, &st);
    if (!rc && (v = net_obj_key(opts, "timeout_in_ms")))
      rc = net_obj_int(v, "RunStep.options.timeout_in_ms", &timeout_ms, &st);
  }
  rt_busy *busy = want_busy ? xcalloc(RT_MAX_BUSY, sizeof *busy) : NULL;
  int n_busy = 0;
  rt_step_stats trace = {0};
  char *warning = NULL;
  rt_partition *pgs = NULL;
  int n_pgs = 0;
  if (!rc) {
    out = xcalloc((size_t)nx + 1, sizeof *out);
    pthread_mutex_lock(&s->mu);
    /* A CancelRun for an earlier step must not cancel this one; one arriving from now on,
     * during preparation or the step, does. */
    unsigned gen = atomic_load(&s->cancel);
    if (s->closed) rc = rt_error(&st, RT_CANCELLED, CLOSED_MSG);
    for (int i = 0; !rc && i < nf; i++) rc = check_feed(s, feeds[i], fv[i], &st);
    /* The signature: feeds, fetches and targets as given. */
    size_t len = 16;
    for (int i = 0; i < nf; i++) len += strlen(feeds[i]) + 1;
    for (int i = 0; i < nx; i++) len += strlen(fetches[i]) + 1;
    for (int i = 0; i < nt; i++) len += strlen(targets[i]) + 1;
    char *sig = xcalloc(len, 1);
    for (int i = 0; i < nf; i++) strcat(strcat(sig, feeds[i]), ",");
    strcat(sig, "|");
    for (int i = 0; i < nx; i++) strcat(strcat(sig, fetches[i]), ",");
    strcat(sig, "|");
    for (int i = 0; i < nt; i++) strcat(strcat(sig, targets[i]), ",");
    mrun *r = NULL;
    for (r = s->runs; r && strcmp(r->sig, sig); r = r->next) {}
    if (!rc && !r && !(rc = prepare(m, s, nf, feeds, nx, fetches, nt, targets, &r, &st))) {
      r->sig = sig;
      sig = NULL;
      r->next = s->runs;
      s->runs = r;
    }
    free(sig);
    /* The step runs without s->mu (other steps of the session may run meanwhile: queue
     * runners); a CloseSession waits until none is in flight. */
    if (!rc) {
      s->running++;
      pthread_mutex_unlock(&s->mu);
      pthread_mutex_lock(&r->step_mu);
      step_begin(s, r, step);
      rc = run_step(m, s, r, gen, timeout_ms, nf, feeds, fv, nx, fetches, out, trace_level > 0 ? &trace : NULL, busy, &n_busy, &st);
      pthread_mutex_lock(&s->mu);
      r->step = 0;
      pthread_mutex_unlock(&r->step_mu);
      if (--s->running == 0) pthread_cond_broadcast(&s->idle);
    }
    if (!rc && want_pg) rc = views_device_partitions(s, r->needed, r->n_needed, &pgs, &n_pgs, &st);
    if (!rc && r->warning) {   /* said once per session, not once per signature */
      if (!s->warned) warning = r->warning;
      else free(r->warning);
      r->warning = NULL;
      s->warned = true;
    }
    pthread_mutex_unlock(&s->mu);
  }
  session_unref(m, s);
  if (rc) {
    reply_status(req, rc, &st);
  } else {
    net_msg *rep = net_msg_new("RunStepOk");
    msgpack_packer *pk = net_msg_field(rep, "tensors");
    msgpack_pack_array(pk, (size_t)nx);
    for (int i = 0; i < nx; i++) rt_pack_tensor_msg(rep, pk, out[i]);
    if (trace_level > 0) {   /* views: every task's DeviceStepStats */
      pk = net_msg_field(rep, "step_stats");
      msgpack_pack_array(pk, (size_t)trace.n);
      for (int i = 0; i < trace.n; i++) rt_pack_dev_stats(pk, trace.dev[i]);
    }
    if (want_pg) views_pack_partitions(rep, net_msg_field(rep, "partition_graphs"), pgs, n_pgs);
    if (busy) {   /* views: every device's busy time in this step */
      pk = net_msg_field(rep, "busy");
      msgpack_pack_array(pk, (size_t)n_busy);
      for (int i = 0; i < n_busy; i++) rt_pack_busy(pk, &busy[i]);
    }
    if (warning) net_msg_str(rep, "warning", warning);
    net_reply(req, rep);
  }
  free(warning);
  free(busy);
  rt_step_stats_clear(&trace);
  rt_partitions_free(pgs, n_pgs);
  for (int i = 0; i < nf; i++) rt_tensor_unref(fv[i]);
  for (int i = 0; out && i < nx; i++) rt_tensor_unref(out[i]);
  free(fv);
  free(out);
  free_strs(feeds, nf);
  free_strs(fetches, nx);
  free_strs(targets, nt);
}

static void handle_close(rt_master *m, net_req *req) {
  const net_in *in = net_req_msg(req);
  rt_status st = {0};
  uint64_t h;
  if (net_get_uint(in, "session", &h, &st)) {
    reply_status(req, st.code, &st);
    return;
  }
  msess *found = NULL;
  pthread_mutex_lock(&m->mu);
  for (msess **p = &m->sessions; *p; p = &(*p)->next)
    if ((*p)->handle == h) {
      found = *p;
      *p = found->next;
      break;
    }
  pthread_mutex_unlock(&m->mu);
  if (found) session_close(m, found);
  net_reply(req, net_msg_new("CloseSessionOk"));
}

/* Reset {containers: [str] | nil, device_filters?: [str]}: tf.Session.reset — every task of
 * the cluster drops the resources (variables) in those containers (all when nil), and this
 * master's sessions are closed. With device_filters, as TF's master: this task and the
 * tasks they name. */
static void handle_reset(rt_master *m, net_req *req) {
  const net_in *in = net_req_msg(req);
  const rt_cluster *c = m->srv->cluster;
  rt_status st = {0};
  rt_devname filters[MAX_FILTERS];
  int nf = 0;
  int rc = parse_filters(net_get(in, "device_filters"), "device_filters", filters, &nf, &st);
  if (rc) {   /* refused before anything is dropped (TF's master dies on such a filter) */
    reply_status(req, rc, &st);
    return;
  }
  for (int i = 0; i < c->n && !rc; i++) {
    char task[160], ep[256];
    rt_task_name(c->tasks[i].job, c->tasks[i].index, task, sizeof task);
    rt_endpoint(c->tasks[i].addr, ep, sizeof ep);
    bool self = !strcmp(task, m->srv->task);
    if (self) snprintf(ep, sizeof ep, "%s", m->srv->endpoint);
    else if (!task_wanted(filters, nf, c->tasks[i].job, c->tasks[i].index)) continue;
    net_peer *cl = net_peer_get(ep, &st);
    if (!cl) {
      rc = st.code;
      break;
    }
    net_msg *r = net_msg_new("ResetWorker");
    const msgpack_object *cont = net_get(in, "containers");
    msgpack_packer *pk = net_msg_field(r, "containers");
    if (cont) msgpack_pack_object(pk, *cont);
    else msgpack_pack_nil(pk);
    net_in *rep = NULL;
    if ((rc = net_peer_call(cl, r, &rep, &(net_wait){.timeout_ms = 5000}, &st)))
      rt_status_prefix(&st, "%s: ", task);
    net_in_free(rep);
  }
  pthread_mutex_lock(&m->mu);
  msess *all = m->sessions;
  m->sessions = NULL;
  pthread_mutex_unlock(&m->mu);
  while (all) {
    msess *s = all;
    all = s->next;
    session_close(m, s);
  }
  if (rc)
    reply_status(req, rc, &st);
  else
    net_reply(req, net_msg_new("ResetOk"));
}

static void handle_list_devices(rt_master *m, net_req *req) {
  /* The local worker's devices; ListDevices across the cluster comes with sessions. */
  net_msg *rep = net_msg_new("ListDevicesOk");
  rt_pack_devices(net_msg_field(rep, "devices"), m->srv->devices, m->srv->n_devices);
  net_reply(req, rep);
}

/* CancelRun {session, step}: the client was interrupted; that step aborts everywhere, the
 * session's other steps (a QueueRunner's) go on. One that has not started yet is kept
 * (the last 8) and ends as it starts. Without a step (an older client): every step. */
static void handle_cancel(rt_master *m, net_req *req) {
  const net_in *in = net_req_msg(req);
  rt_status st = {0};
  uint64_t step = 0;
  msess *s = session_find(m, in, &st);
  if (s && net_has(in, "step") && !net_get_uint(in, "step", &step, &st) && step) {
    pthread_mutex_lock(&s->mu);
    mrun *r = s->runs;
    while (r && r->step != step) r = r->next;
    if (r) atomic_store(&r->cancelled, true);
    else s->cancelled[s->n_cancelled++ % 8] = step;
    pthread_mutex_unlock(&s->mu);
  } else if (s) {
    atomic_fetch_add(&s->cancel, 1);
  }
  session_unref(m, s);
  net_reply(req, net_msg_new("CancelRunOk"));
}

static void handle_wait_status(rt_master *m, net_req *req) {
  net_msg *rep = net_msg_new("WaitStatusOk");
  pthread_mutex_lock(&m->mu);
  net_msg_str(rep, "waiting_for", m->wait_msg);
  net_msg_int(rep, "elapsed_ms", m->wait_ms);
  pthread_mutex_unlock(&m->mu);
  net_reply(req, rep);
}

/* ---- the cluster digest: every task must have been started with the same spec ---- */

/* Compare the cluster a task reports with ours; name what differs. */
static int check_cluster(rt_master *m, const char *task, const net_in *rep, rt_status *st) {
  const msgpack_object *o = net_get(rep, "cluster");
  if (!o || o->type != MSGPACK_OBJECT_ARRAY) return RT_OK;   /* an older peer: nothing to check */
  char **mine = rt_cluster_lines(m->srv->cluster);
  int n = m->srv->cluster->n;
  char diff[900];
  size_t off = 0;
  diff[0] = '\0';
  const msgpack_object_array *a = &o->via.array;
  for (uint32_t i = 0; i < a->size && off < sizeof diff; i++) {
    if (a->ptr[i].type != MSGPACK_OBJECT_STR) continue;
    char line[600];
    snprintf(line, sizeof line, "%.*s", (int)a->ptr[i].via.str.size, a->ptr[i].via.str.ptr);
    bool found = false;
    for (int k = 0; k < n && !found; k++) found = !strcmp(mine[k], line);
    if (!found) off += (size_t)snprintf(diff + off, sizeof diff - off, "%s has %s but %s does not; ", task, line, m->srv->task);
  }
  for (int k = 0; k < n && off < sizeof diff; k++) {
    bool found = false;
    for (uint32_t i = 0; i < a->size && !found; i++)
      found = a->ptr[i].type == MSGPACK_OBJECT_STR && a->ptr[i].via.str.size == strlen(mine[k]) &&
              !memcmp(a->ptr[i].via.str.ptr, mine[k], strlen(mine[k]));
    if (!found) off += (size_t)snprintf(diff + off, sizeof diff - off, "%s has %s but %s does not; ", m->srv->task, mine[k], task);
  }
  for (int k = 0; k < n; k++) free(mine[k]);
  free(mine);
  if (!diff[0]) return RT_OK;
  diff[strlen(diff) - 2] = '\0';
  return rt_error(st, RT_FAILED_PRECONDITION,
                  "%s was started with a different cluster spec than %s (%s); start every task with "
                  "the same cluster spec", task, m->srv->task, diff);
}

/* Looked up in this order (runtime/server.c): the frequent ones first. */
const rt_message rt_master_messages[] = {
  {"RunStep", .master = handle_run, .summary = "one step of a session: feeds in, targets run, fetches out"},
  {"CreateSession", .master = handle_create, .summary = "a session over the cluster, from a graph and a config"},
  {"ExtendSession", .master = handle_extend, .summary = "add nodes to a session's graph"},
  {"CloseSession", .master = handle_close, .summary = "close a session"},
  {"ListDevices", .master = handle_list_devices, .summary = "this task's devices"},
  {"WaitStatus", .master = handle_wait_status, .summary = "the tasks a CreateSession waits for, and since when"},
  {"CancelRun", .master = handle_cancel, .summary = "abort a session's step in flight (Ctrl-C in the client)"},
  {"Reset", .master = handle_reset, .summary = "drop resource containers on every task; close the sessions"},
  {"Placement", .master = handle_placement, .summary = "views: where a session's nodes would run, and why"},
  {"Progress", .master = handle_progress, .summary = "views: how far a session's step in flight is, on every task"},
  {0},
};
