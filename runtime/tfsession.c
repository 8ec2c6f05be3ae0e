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
#include "runtime/partition.h"
#include "runtime/proto/graph.pb-c.h"
#include "runtime/proto/master.pb-c.h"
#include "runtime/proto/step_stats.pb-c.h"
#include "runtime/trace.h"
#include "runtime/views.h"

/* TF's master waits for every task of its cluster before CreateSession answers; TF1's
 * client waited with it, for ever. tfsh gives up after this and says what to run. */
enum { CREATE_TIMEOUT_MS = 30000, MAX_REPLY = 0x7fffffff, MAX_PLACED = 16 };

/* views: the partition graphs TF's master returned for a step, kept for the placement
 * views (TF places a graph only when it runs it). */
typedef struct placed_step {
  char *key;                    /* the step's feeds, fetches and targets */
  int n_names;
  char **names;                 /* the nodes of its fetches and targets */
  int n_parts;
  rt_partition *parts;          /* per device, as TF's RunMetadata.partition_graphs */
  uint64_t used;                /* when it last ran (t->clock) */
} placed_step;

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
  /* views, under mu */
  int n_placed;
  placed_step placed[MAX_PLACED];
  uint64_t clock;
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

/* One call; tick (may be NULL) runs while it waits, and cancels it by returning nonzero. */
static int rpc_ticking(rt_tfs *t, const char *method, const uint8_t *req, size_t n, int64_t timeout_ms,
                       int (*tick)(void *, int64_t), void *arg, net_grpc_call *c, rt_status *st) {
  *c = (net_grpc_call){.target = t->target, .method = method, .req = req, .req_len = n};
  net_grpc_call_ticking(t->ch, c, timeout_ms, tick, arg);
  return c->code == NET_GRPC_OK ? RT_OK : call_error(c, method + strlen("/tensorflow.MasterService/"), t, st);
}

static int rpc(rt_tfs *t, const char *method, const uint8_t *req, size_t n, int64_t timeout_ms,
               net_grpc_call *c, rt_status *st) {
  return rpc_ticking(t, method, req, n, timeout_ms, NULL, NULL, c, st);
}

/* A step's wait: the live view's tick, and Ctrl-C (the run's interrupt), which cancels the
 * call; TF's master then cancels the step. */
typedef struct step_wait {
  const rt_session_run *run;
  const rt_session_views *v;
  bool interrupted;
} step_wait;

static int step_tick(void *arg, int64_t elapsed_ms) {
  step_wait *w = arg;
  if (w->run->interrupt && __atomic_load_n(w->run->interrupt, __ATOMIC_RELAXED)) return w->interrupted = true, 1;
  return w->v->tick ? w->v->tick(w->v->tick_arg, elapsed_ms) : 0;
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

/* ---- views: RunMetadata ---------------------------------------------------------------- */

/* TF's StepStats as tfsh's (runtime/trace.h), appended to out. */
static void step_stats_from_tf(const Tensorflow__StepStats *ss, rt_step_stats *out) {
  for (size_t i = 0; ss && i < ss->n_dev_stats; i++) {
    const Tensorflow__DeviceStepStats *ds = ss->dev_stats[i];
    rt_dev_stats *d = rt_dev_stats_new(ds->device);
    for (size_t k = 0; k < ds->n_node_stats; k++) {
      const Tensorflow__NodeExecStats *ns = ds->node_stats[k];
      rt_node_stats *n = rt_dev_stats_add(d);
      n->node_name = xstrdup(ns->node_name ? ns->node_name : "");
      n->timeline_label = xstrdup(ns->timeline_label ? ns->timeline_label : "");
      n->all_start_micros = ns->all_start_micros;
      n->op_start_rel_micros = ns->op_start_rel_micros;
      n->op_end_rel_micros = ns->op_end_rel_micros;
      n->all_end_rel_micros = ns->all_end_rel_micros;
      n->thread_id = ns->thread_id;
      n->outputs = xcalloc(ns->n_output + 1, sizeof *n->outputs);
      for (size_t o = 0; o < ns->n_output; o++) {
        const Tensorflow__TensorDescription *td = ns->output[o]->tensor_description;
        rt_output_stats *os = &n->outputs[n->n_outputs++];
        os->shape.ndims = -1;
        if (!td) continue;
        os->dtype = (rt_dtype)td->dtype;
        if (td->shape && !td->shape->unknown_rank && td->shape->n_dim <= RT_MAX_DIMS) {
          os->shape.ndims = (int)td->shape->n_dim;
          for (size_t k2 = 0; k2 < td->shape->n_dim; k2++) os->shape.dims[k2] = td->shape->dim[k2]->size;
        }
        if (td->allocation_description) {
          os->bytes = td->allocation_description->requested_bytes;
          os->alloc = td->allocation_description->allocated_bytes > 0;
        }
      }
    }
    rt_step_stats_append(out, d);
  }
}

/* TF's partition graphs as tfsh graphs, one per device (the device of their nodes), their
 * nodes as TF wrote them (TF's own ops: shown, never run). */
static int partitions_from_tf(const Tensorflow__RunMetadata *md, rt_partition **out, int *n_out, rt_status *st) {
  rt_partition *parts = xcalloc(md->n_partition_graphs + 1, sizeof *parts);
  int n = 0, rc = RT_OK;
  for (size_t i = 0; i < md->n_partition_graphs && !rc; i++) {
    size_t len = tensorflow__graph_def__get_packed_size(md->partition_graphs[i]);
    uint8_t *b = xmalloc(len + 1);
    tensorflow__graph_def__pack(md->partition_graphs[i], b);
    rt_graphdef gd = {0};
    rc = rt_graphdef_decode(b, len, "RunMetadata.partition_graphs", &gd, st);
    free(b);
    if (!rc && gd.n) {
      rt_partition *p = &parts[n++];
      p->name = xstrdup(gd.nodes[0]->device ? gd.nodes[0]->device : "");
      p->g = rt_graph_new();
      for (int k = 0; k < gd.n && !rc; k++) {
        rc = rt_graph_add_unchecked(p->g, gd.nodes[k], st);
        gd.nodes[k] = NULL;
      }
    }
    rt_graphdef_free(&gd);
  }
  if (rc) {
    rt_partitions_free(parts, n);
    return rc;
  }
  *out = parts, *n_out = n;
  return RT_OK;
}

static void placed_clear(placed_step *p) {
  free(p->key);
  for (int i = 0; i < p->n_names; i++) free(p->names[i]);
  free(p->names);
  rt_partitions_free(p->parts, p->n_parts);
  memset(p, 0, sizeof *p);
}

/* "feeds|fetches|targets", each name followed by a comma. */
static char *step_key(const rt_session_run *run) {
  size_t n = 4;
  for (int i = 0; i < run->n_feeds; i++) n += strlen(run->feed_names[i]) + 1;
  for (int i = 0; i < run->n_fetches; i++) n += strlen(run->fetch_names[i]) + 1;
  for (int i = 0; i < run->n_targets; i++) n += strlen(run->targets[i]) + 1;
  char *k = xmalloc(n), *p = k;
  for (int i = 0; i < run->n_feeds; i++) p += sprintf(p, "%s,", run->feed_names[i]);
  *p++ = '|';
  for (int i = 0; i < run->n_fetches; i++) p += sprintf(p, "%s,", run->fetch_names[i]);
  *p++ = '|';
  for (int i = 0; i < run->n_targets; i++) p += sprintf(p, "%s,", run->targets[i]);
  *p = '\0';
  return k;
}

static placed_step *placed_find(rt_tfs *t, const char *key) {
  for (int i = 0; i < t->n_placed; i++)
    if (!strcmp(t->placed[i].key, key)) return &t->placed[i];
  return NULL;
}

/* A node's name from a tensor's ("y:0" -> "y"), into buf. */
static const char *node_of(const char *tensor, char *buf, size_t n) {
  int idx;
  if (!rt_tensor_name_parse(tensor, buf, n, &idx)) snprintf(buf, n, "%s", tensor);
  return buf;
}

/* Keeps the step's partition graphs (taken: *parts is NULL after), the least recently run
 * step's making room. mu held. */
static void placed_keep(rt_tfs *t, char *key, const rt_session_run *run, rt_partition **parts, int n_parts) {
  placed_step *p = placed_find(t, key);
  if (!p && t->n_placed < MAX_PLACED) p = &t->placed[t->n_placed++];
  if (!p) {
    p = &t->placed[0];
    for (int i = 1; i < t->n_placed; i++)
      if (t->placed[i].used < p->used) p = &t->placed[i];
  }
  placed_clear(p);
  p->key = key;
  p->names = xcalloc((size_t)run->n_fetches + (size_t)run->n_targets + 1, sizeof *p->names);
  char buf[512];
  for (int i = 0; i < run->n_fetches; i++) p->names[p->n_names++] = xstrdup(node_of(run->fetch_names[i], buf, sizeof buf));
  for (int i = 0; i < run->n_targets; i++) p->names[p->n_names++] = xstrdup(run->targets[i]);
  p->parts = *parts, p->n_parts = n_parts;
  *parts = NULL;
  p->used = ++t->clock;
}

/* RunStepResponse.metadata into the views' outputs, and kept for the placement views. */
static int take_metadata(rt_tfs *t, const Tensorflow__RunStepResponse *r, const rt_session_run *run,
                         const rt_session_views *v, bool keep, rt_status *st) {
  if (!r->metadata.len) return RT_OK;
  Tensorflow__RunMetadata *md = tensorflow__run_metadata__unpack(NULL, r->metadata.len, r->metadata.data);
  if (!md) return rt_error(st, RT_DATA_LOSS, "RunStep: %zu bytes of metadata from %s that are not a RunMetadata",
                           r->metadata.len, t->target);
  int rc = RT_OK;
  if (v->step_stats) step_stats_from_tf(md->step_stats, v->step_stats);
  if (v->partition_graphs && md->n_partition_graphs) {
    int n = 0;
    rc = partitions_from_tf(md, v->partition_graphs, &n, st);
    if (!rc && v->n_partition_graphs) *v->n_partition_graphs = n;
  }
  if (!rc && keep && md->n_partition_graphs) {
    rt_partition *parts = NULL;
    int n = 0;
    rc = partitions_from_tf(md, &parts, &n, st);
    if (!rc) {
      pthread_mutex_lock(&t->mu);
      placed_keep(t, step_key(run), run, &parts, n);
      pthread_mutex_unlock(&t->mu);
    }
  }
  tensorflow__run_metadata__free_unpacked(md, NULL);
  return rc;
}

int rt_tfs_run(rt_tfs *t, const rt_session_run *run, const rt_session_views *v, rt_status *st) {
  static const rt_session_views none;
  if (!v) v = &none;
  for (int i = 0; i < run->n_fetches; i++) run->fetched[i] = NULL;
  int rc = run->graph_sent ? RT_OK : rt_tfs_extend(t, st);
  if (rc) return rc;
  bool keep = false;   /* views: a step new to the session keeps its partition graphs */
  if (v->note_placement) {
    char *key = step_key(run);
    pthread_mutex_lock(&t->mu);
    placed_step *p = placed_find(t, key);
    if (p) p->used = ++t->clock;
    keep = !p;
    pthread_mutex_unlock(&t->mu);
    free(key);
  }
  if ((rc = rt_grpc_message_fits("RunStep's feeds", run->feeds, run->n_feeds, 0, RT_GRPC_FEED_ADVICE, st)))
    return rc;
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
  if (run->timeout_ms > 0) opts.timeout_in_ms = run->timeout_ms;
  if (v->trace_level > 0) opts.trace_level = v->trace_level;
  opts.output_partition_graphs = v->output_partition_graphs || keep;
  if (run->timeout_ms > 0 || v->trace_level > 0 || opts.output_partition_graphs) req.options = &opts;
  net_grpc_call c = {0};
  if (!rc) rc = rt_grpc_message_fits("RunStep's request", NULL, 0, tensorflow__run_step_request__get_packed_size(&req),
                                     RT_GRPC_FEED_ADVICE, st);
  if (!rc) {
    size_t n = tensorflow__run_step_request__get_packed_size(&req);
    uint8_t *b = xmalloc(n ? n : 1);
    tensorflow__run_step_request__pack(&req, b);
    step_wait w = {run, v, false};
    bool ticks = run->interrupt || v->tick;
    rc = rpc_ticking(t, "/tensorflow.MasterService/RunStep", b, n, timeout, ticks ? step_tick : NULL, &w, &c, st);
    if (rc && w.interrupted) rc = rt_error(st, RT_CANCELLED, "interrupted");
    free(b);
  }
  for (int i = 0; i < run->n_feeds; i++) free(feeds[i].tensor.data);
  free(feeds), free(fp);
  if (!rc) {
    Tensorflow__RunStepResponse *r = tensorflow__run_step_response__unpack(NULL, c.resp_len, c.resp);
    if (!r) rc = rt_error(st, RT_DATA_LOSS, "RunStep: %zu bytes from %s that are not a RunStepResponse", c.resp_len, t->target);
    else if (r->status_code) rc = rt_error(st, r->status_code, "%s", r->status_error_message ? r->status_error_message : "");
    else rc = fill_fetches(r, run, st);
    if (!rc) rc = take_metadata(t, r, run, v, keep, st);
    if (r) tensorflow__run_step_response__free_unpacked(r, NULL);
  }
  net_grpc_call_clear(&c);
  if (rc)
    for (int i = 0; i < run->n_fetches; i++) rt_tensor_unref(run->fetched[i]), run->fetched[i] = NULL;
  return rc;
}

/* ---- views: placement ------------------------------------------------------------------ */

/* Whether step p ran every node named. */
static bool placed_covers(const placed_step *p, int n, const char *const *names) {
  char buf[512];
  for (int i = 0; i < n; i++) {
    node_of(names[i], buf, sizeof buf);
    bool in = false;
    for (int k = 0; k < p->n_names && !in; k++) in = !strcmp(p->names[k], buf);
    if (!in) return false;
  }
  return true;
}

/* The partition that holds node name (-1: none). */
static int part_of(const placed_step *p, const char *name) {
  for (int i = 0; i < p->n_parts; i++)
    if (rt_graph_find(p->parts[i].g, name)) return i;
  return -1;
}

/* One crossing edge: a _Send whose receiver is on another device. A control edge crosses
 * as a _Send of a dummy Const TF adds (its control input the edge's source). */
static void add_edge(rt_tfs *t, const rt_partition *part, const rt_node *send, rt_placement *out) {
  const char *from = rt_node_string(send, "send_device", ""), *to = rt_node_string(send, "recv_device", "");
  if (!strcmp(from, to) || send->n_inputs < 1) return;
  rt_placed_edge *e = &out->edges[out->n_edges++];
  char node[512], buf[600];
  node_of(send->inputs[0], node, sizeof node);
  const rt_node *src = rt_graph_find(t->g, node), *made = rt_graph_find(part->g, node);
  e->shape.ndims = -1;
  e->dtype = rt_node_type(send, "T", RT_FLOAT);
  if (!src && made && !strcmp(made->op, "Const") && made->n_inputs && made->inputs[0][0] == '^') {
    snprintf(buf, sizeof buf, "%s/_ctl", made->inputs[0] + 1);
    e->control = true;
  } else {
    if (!src && made && !strcmp(made->op, "_Recv"))   /* a fed tensor, from the client, passed on */
      snprintf(buf, sizeof buf, "%s", rt_node_string(made, "tensor_name", made->name));
    else
      snprintf(buf, sizeof buf, "%s%s", send->inputs[0], strchr(send->inputs[0], ':') ? "" : ":0");
    node_of(buf, node, sizeof node);
    src = rt_graph_find(t->g, node);
    rt_node *sn;
    int idx;
    rt_status ignore;
    if (src && !rt_graph_output(t->g, buf, &sn, &idx, &ignore) && sn->out_shapes) e->shape = sn->out_shapes[idx];
  }
  e->tensor = xstrdup(buf);
  e->send = xstrdup(send->name);
  e->from = xstrdup(from);
  e->to = xstrdup(to);
}

int rt_tfs_placement(rt_tfs *t, int n, const char *const *names, rt_placement *out, rt_status *st) {
  memset(out, 0, sizeof *out);
  pthread_mutex_lock(&t->mu);
  const placed_step *p = NULL;
  for (int i = 0; i < t->n_placed; i++)
    if ((!p || t->placed[i].used > p->used) && placed_covers(&t->placed[i], n, names)) p = &t->placed[i];
  if (!p) {
    pthread_mutex_unlock(&t->mu);
    return rt_error(st, RT_FAILED_PRECONDITION, "a TensorFlow master places a graph only when it runs it, and this "
                    "session has run %s since the views were first asked for: run it (sess.run), then ask again",
                    n ? "nothing you named" : "nothing");
  }
  out->parts = xcalloc((size_t)p->n_parts + 1, sizeof *out->parts);
  int n_sends = 0;
  for (int i = 0; i < p->n_parts; i++) {
    rt_partition *dst = &out->parts[out->n_parts++];
    dst->name = xstrdup(p->parts[i].name);
    dst->g = rt_graph_new();
    for (int k = 0; k < p->parts[i].g->n_nodes; k++) {
      const rt_node *x = p->parts[i].g->nodes[k];
      n_sends += !strcmp(x->op, "_Send");
      rt_graph_add_unchecked(dst->g, rt_node_clone(x), st);
    }
  }
  out->nodes = xcalloc((size_t)t->g->n_nodes + 1, sizeof *out->nodes);
  for (int i = 0; i < t->g->n_nodes; i++) {
    const rt_node *x = t->g->nodes[i];
    int k = part_of(p, x->name);
    if (k < 0) continue;
    out->nodes[out->n_nodes++] = (rt_placed_node){xstrdup(x->name), xstrdup(x->op), xstrdup(x->device ? x->device : ""),
                                                  xstrdup(p->parts[k].name), xstrdup("TensorFlow's placer")};
  }
  out->edges = xcalloc((size_t)n_sends + 1, sizeof *out->edges);
  for (int i = 0; i < p->n_parts; i++)
    for (int k = 0; k < p->parts[i].g->n_nodes; k++)
      if (!strcmp(p->parts[i].g->nodes[k]->op, "_Send")) add_edge(t, &p->parts[i], p->parts[i].g->nodes[k], out);
  pthread_mutex_unlock(&t->mu);
  return RT_OK;
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
  for (int i = 0; i < t->n_placed; i++) placed_clear(&t->placed[i]);
  pthread_mutex_destroy(&t->mu);
  free(t);
}
