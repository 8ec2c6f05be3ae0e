/* A session on a real TensorFlow master over TF's own gRPC (tfsession.h): the graph goes as
 * TF's GraphDef through CreateSession / ExtendSession, steps through RunStep, tensors as
 * TensorProto (runtime/graphdef.h), errors as TF's codes and messages. */
#include "runtime/tfsession.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "net/grpc.h"
#include "runtime/graphdef.h"
#include "runtime/proto/graph.pb-c.h"
#include "runtime/proto/master.pb-c.h"

/* TF's master waits for every task of its cluster before CreateSession answers; TF1's
 * client waited with it, for ever. tfsh gives up after this and says what to run. */
enum { CREATE_TIMEOUT_MS = 30000, MAX_REPLY = 0x7fffffff };

struct rt_tfs {
  net_grpc_channel *ch;
  char target[256];             /* host:port */
  char handle[256];
  int64_t version;
  rt_graph *g;
  pthread_mutex_t mu;           /* extend */
  size_t sent;                  /* NodeDefs the master has */
  int sent_nodes;               /* g->n_nodes when they were sent: no new node, no GraphDef */
  int64_t timeout_ms;           /* operation_timeout_in_ms */
  bool closed;
};

bool rt_tfs_wanted(const char *target) {
  const char *peer = getenv("TFSH_PEER");
  return target && !strncmp(target, "grpc://", 7) && peer && !strcmp(peer, "tf");
}

/* A gRPC status as TF's error: TF's codes are gRPC's, its message the status details. */
static int call_error(const net_grpc_call *c, const char *what, const rt_tfs *t, rt_status *st) {
  if (c->code == NET_GRPC_UNAVAILABLE)
    return rt_error(st, RT_UNAVAILABLE, "%s on the TensorFlow master at %s: %s (is a TF server "
                    "running there? `tfsh probe` asks every task)", what, t->target, c->details);
  if (c->code == NET_GRPC_UNIMPLEMENTED)
    return rt_error(st, RT_UNIMPLEMENTED, "%s: the server at %s has no TensorFlow MasterService "
                    "(%s)", what, t->target, c->details);
  if (c->code < 0 || c->code > 16)
    return rt_error(st, RT_INTERNAL, "%s on %s: %s", what, t->target, c->details);
  return rt_error(st, c->code, "%s", c->details);
}

static int rpc(rt_tfs *t, const char *method, const uint8_t *req, size_t n, int64_t timeout_ms,
               net_grpc_call *c, rt_status *st) {
  *c = (net_grpc_call){.target = t->target, .method = method, .req = req, .req_len = n};
  net_grpc_call_on(t->ch, c, timeout_ms);
  return c->code == NET_GRPC_OK ? RT_OK : call_error(c, method + strlen("/tensorflow.MasterService/"), t, st);
}

/* TF's GraphDef of the nodes the master does not have yet: the whole graph is encoded
 * (its NodeDefs come in node order, each new node after the old) and the first `sent`
 * NodeDefs left out. *from is the count before, *to after. */
static int new_nodes(rt_tfs *t, unsigned char **out, size_t *n, size_t *to, rt_status *st) {
  const char *why = NULL;
  const rt_node *bad = rt_graphdef_tf_unexportable(t->g, &why);
  if (bad)
    return rt_error(st, RT_UNIMPLEMENTED, "node '%s' (op %s) cannot run on a TensorFlow master: %s",
                    bad->name, bad->op, why ? why : "it is tfsh's own");
  unsigned char *all = NULL;
  size_t len = 0;
  int rc = rt_graphdef_encode(t->g, RT_GD_REQUESTED, &all, &len, st);
  if (rc) return rc;
  Tensorflow__GraphDef *gd = tensorflow__graph_def__unpack(NULL, len, all);
  free(all);
  if (!gd) return rt_error(st, RT_INTERNAL, "tfsh's own GraphDef does not decode");
  *to = gd->n_node;
  size_t skip = t->sent < gd->n_node ? t->sent : gd->n_node;
  Tensorflow__NodeDef **nodes = gd->node;
  gd->node += skip, gd->n_node -= skip;
  *n = tensorflow__graph_def__get_packed_size(gd);
  *out = xmalloc(*n ? *n : 1);
  tensorflow__graph_def__pack(gd, *out);
  gd->node = nodes, gd->n_node += skip;
  tensorflow__graph_def__free_unpacked(gd, NULL);
  return RT_OK;
}

rt_tfs *rt_tfs_new(const char *target, rt_graph *g, const rt_session_config *cfg, rt_status *st) {
  rt_tfs *t = xcalloc(1, sizeof *t);
  snprintf(t->target, sizeof t->target, "%s", target + strlen("grpc://"));
  t->g = g;
  pthread_mutex_init(&t->mu, NULL);
  t->timeout_ms = cfg ? cfg->operation_timeout_ms : 0;
  char why[300];
  if (!(t->ch = net_grpc_open(t->target, MAX_REPLY, why, sizeof why))) {
    rt_error(st, RT_UNAVAILABLE, "tf.Session(\"%s\"): %s", target, why);
    rt_tfs_free(t);
    return NULL;
  }
  Tensorflow__CreateSessionRequest req = TENSORFLOW__CREATE_SESSION_REQUEST__INIT;
  Tensorflow__ConfigProto conf = TENSORFLOW__CONFIG_PROTO__INIT;
  if (cfg) {
    conf.n_device_filters = (size_t)cfg->n_device_filters;
    conf.device_filters = (char **)cfg->device_filters;
    conf.allow_soft_placement = cfg->allow_soft_placement;
    conf.log_device_placement = cfg->log_device_placement;
    conf.operation_timeout_in_ms = cfg->operation_timeout_ms;
    conf.isolate_session_state = cfg->isolate_session_state;
  }
  req.config = &conf;
  size_t to = 0;
  int rc = new_nodes(t, &req.graph_def.data, &req.graph_def.len, &to, st);
  net_grpc_call c = {0};
  if (!rc) {
    size_t n = tensorflow__create_session_request__get_packed_size(&req);
    uint8_t *b = xmalloc(n ? n : 1);
    tensorflow__create_session_request__pack(&req, b);
    int64_t wait = t->timeout_ms > 0 ? t->timeout_ms : CREATE_TIMEOUT_MS;
    rc = rpc(t, "/tensorflow.MasterService/CreateSession", b, n, wait, &c, st);
    free(b);
    if (rc && c.code == NET_GRPC_DEADLINE_EXCEEDED)
      rt_error(st, RT_DEADLINE_EXCEEDED, "CreateSession on the TensorFlow master at %s had no "
               "answer in %lld ms: TF's master waits for every task of its cluster; `tfsh probe "
               "SPEC` names the one it waits for", t->target, (long long)wait);
  }
  free(req.graph_def.data);
  if (!rc) {
    Tensorflow__CreateSessionResponse *r = tensorflow__create_session_response__unpack(NULL, c.resp_len, c.resp);
    if (!r || !r->session_handle || !*r->session_handle)
      rc = rt_error(st, RT_DATA_LOSS, "CreateSession: %s answered without a session handle", t->target);
    else {
      snprintf(t->handle, sizeof t->handle, "%s", r->session_handle);
      t->version = r->graph_version;
      t->sent = to, t->sent_nodes = g->n_nodes;
    }
    if (r) tensorflow__create_session_response__free_unpacked(r, NULL);
  }
  net_grpc_call_clear(&c);
  if (rc) {
    rt_tfs_free(t);
    return NULL;
  }
  return t;
}

int rt_tfs_extend(rt_tfs *t, rt_status *st) {
  pthread_mutex_lock(&t->mu);
  unsigned char *gd = NULL;
  size_t n = 0, to = 0;
  if (!t->closed && t->g->n_nodes == t->sent_nodes) {   /* the common step: nothing new */
    pthread_mutex_unlock(&t->mu);
    return RT_OK;
  }
  int rc = t->closed ? rt_error(st, RT_CANCELLED, "Session has been closed.") : new_nodes(t, &gd, &n, &to, st);
  int nodes = t->g->n_nodes;
  if (!rc && to <= t->sent) t->sent_nodes = nodes;
  if (!rc && to > t->sent) {
    Tensorflow__ExtendSessionRequest req = TENSORFLOW__EXTEND_SESSION_REQUEST__INIT;
    req.session_handle = t->handle;
    req.graph_def.data = gd, req.graph_def.len = n;
    req.current_graph_version = t->version;
    size_t len = tensorflow__extend_session_request__get_packed_size(&req);
    uint8_t *b = xmalloc(len ? len : 1);
    tensorflow__extend_session_request__pack(&req, b);
    net_grpc_call c;
    rc = rpc(t, "/tensorflow.MasterService/ExtendSession", b, len, 60000, &c, st);
    free(b);
    if (!rc) {
      Tensorflow__ExtendSessionResponse *r = tensorflow__extend_session_response__unpack(NULL, c.resp_len, c.resp);
      if (r) t->version = r->new_graph_version, tensorflow__extend_session_response__free_unpacked(r, NULL);
      t->sent = to, t->sent_nodes = nodes;
    }
    net_grpc_call_clear(&c);
  }
  free(gd);
  pthread_mutex_unlock(&t->mu);
  return rc;
}

static int fill_fetches(const Tensorflow__RunStepResponse *r, const rt_session_run *run, rt_status *st) {
  for (int i = 0; i < run->n_fetches; i++) {
    const Tensorflow__NamedTensorProto *nt = NULL;
    for (size_t k = 0; k < r->n_tensor && !nt; k++)
      if (r->tensor[k]->name && !strcmp(r->tensor[k]->name, run->fetch_names[i])) nt = r->tensor[k];
    if (!nt) return rt_error(st, RT_INTERNAL, "RunStep: the TensorFlow master sent no value for '%s'", run->fetch_names[i]);
    int rc = rt_tensor_proto_decode(nt->tensor.data, nt->tensor.len, run->fetch_names[i], &run->fetched[i], st);
    if (rc) return rc;
  }
  return RT_OK;
}

int rt_tfs_run(rt_tfs *t, const rt_session_run *run, rt_status *st) {
  for (int i = 0; i < run->n_fetches; i++) run->fetched[i] = NULL;
  int rc = run->graph_sent ? RT_OK : rt_tfs_extend(t, st);
  if (rc) return rc;
  Tensorflow__RunStepRequest req = TENSORFLOW__RUN_STEP_REQUEST__INIT;
  req.session_handle = t->handle;
  Tensorflow__NamedTensorProto *feeds = xcalloc((size_t)run->n_feeds + 1, sizeof *feeds);
  Tensorflow__NamedTensorProto **fp = xcalloc((size_t)run->n_feeds + 1, sizeof *fp);
  for (int i = 0; i < run->n_feeds && !rc; i++) {
    tensorflow__named_tensor_proto__init(&feeds[i]);
    feeds[i].name = (char *)run->feed_names[i];
    rc = rt_tensor_proto_encode(run->feeds[i], &feeds[i].tensor.data, &feeds[i].tensor.len, st);
    fp[i] = &feeds[i];
  }
  req.n_feed = (size_t)run->n_feeds, req.feed = fp;
  req.n_fetch = (size_t)run->n_fetches, req.fetch = (char **)run->fetch_names;
  req.n_target = (size_t)run->n_targets, req.target = (char **)run->targets;
  Tensorflow__RunOptions opts = TENSORFLOW__RUN_OPTIONS__INIT;
  int64_t timeout = run->timeout_ms > 0 ? run->timeout_ms : t->timeout_ms;
  if (run->timeout_ms > 0) opts.timeout_in_ms = run->timeout_ms, req.options = &opts;
  net_grpc_call c = {0};
  if (!rc) {
    size_t n = tensorflow__run_step_request__get_packed_size(&req);
    uint8_t *b = xmalloc(n ? n : 1);
    tensorflow__run_step_request__pack(&req, b);
    rc = rpc(t, "/tensorflow.MasterService/RunStep", b, n, timeout, &c, st);
    free(b);
  }
  for (int i = 0; i < run->n_feeds; i++) free(feeds[i].tensor.data);
  free(feeds), free(fp);
  if (!rc) {
    Tensorflow__RunStepResponse *r = tensorflow__run_step_response__unpack(NULL, c.resp_len, c.resp);
    if (!r) rc = rt_error(st, RT_DATA_LOSS, "RunStep: %zu bytes from %s that are not a RunStepResponse", c.resp_len, t->target);
    else if (r->status_code) rc = rt_error(st, r->status_code, "%s", r->status_error_message ? r->status_error_message : "");
    else rc = fill_fetches(r, run, st);
    if (r) tensorflow__run_step_response__free_unpacked(r, NULL);
  }
  net_grpc_call_clear(&c);
  if (rc)
    for (int i = 0; i < run->n_fetches; i++) rt_tensor_unref(run->fetched[i]), run->fetched[i] = NULL;
  return rc;
}

void rt_tfs_close(rt_tfs *t) {
  pthread_mutex_lock(&t->mu);
  bool was = t->closed;
  t->closed = true;
  pthread_mutex_unlock(&t->mu);
  if (was || !t->handle[0]) return;
  Tensorflow__CloseSessionRequest req = TENSORFLOW__CLOSE_SESSION_REQUEST__INIT;
  req.session_handle = t->handle;
  size_t n = tensorflow__close_session_request__get_packed_size(&req);
  uint8_t *b = xmalloc(n ? n : 1);
  tensorflow__close_session_request__pack(&req, b);
  net_grpc_call c;
  rt_status st;
  rpc(t, "/tensorflow.MasterService/CloseSession", b, n, 5000, &c, &st);
  net_grpc_call_clear(&c);
  free(b);
}

void rt_tfs_free(rt_tfs *t) {
  if (!t) return;
  rt_tfs_close(t);
  net_grpc_close(t->ch);
  pthread_mutex_destroy(&t->mu);
  free(t);
}
