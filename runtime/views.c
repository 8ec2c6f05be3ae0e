/* The views' typed calls (runtime/views.h): Placement asked of a session's master, and a
 * cluster's tasks asked with GetStatus and GetProgress over peers, each reply turned into
 * plain structs. Replies are read leniently: a field that is missing or of another kind
 * reads as empty, so a view shows what a task said rather than failing. */
#include "runtime/views.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "net/peer.h"
#include "runtime/cluster.h"
#include "runtime/codec.h"
#include "runtime/placer.h"
#include "runtime/session_int.h"
#include "runtime/tfsession.h"
#include "runtime/trace.h"   /* rt_obj_str, rt_obj_int */

static int64_t now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* key's str of a map, as a new string ("" when absent or not a str). */
static char *obj_strdup(const msgpack_object *o, const char *key) {
  const msgpack_object *v = o ? net_obj_key(o, key) : NULL;
  if (!v || v->type != MSGPACK_OBJECT_STR) return xstrdup("");
  char *s = xmalloc(v->via.str.size + 1);
  memcpy(s, v->via.str.ptr, v->via.str.size);
  s[v->via.str.size] = '\0';
  return s;
}

static const msgpack_object_array *obj_array(const msgpack_object *o) {
  return o && o->type == MSGPACK_OBJECT_ARRAY ? &o->via.array : NULL;
}

/* ---- placement ---------------------------------------------------------------------- */

static void pack_names(net_msg *req, const char *key, int n, const char *const *v) {
  msgpack_packer *pk = net_msg_field(req, key);
  msgpack_pack_array(pk, (size_t)n);
  for (int i = 0; i < n; i++) {
    msgpack_pack_str(pk, strlen(v[i]));
    msgpack_pack_str_body(pk, v[i], strlen(v[i]));
  }
}

static void edge_shape(const msgpack_object *e, rt_shape *s) {
  const msgpack_object_array *a = obj_array(net_obj_key(e, "shape"));
  s->ndims = -1;
  if (!a || a->size > RT_MAX_DIMS) return;
  s->ndims = (int)a->size;
  for (int i = 0; i < s->ndims; i++) {
    const msgpack_object *d = &a->ptr[i];
    s->dims[i] = d->type == MSGPACK_OBJECT_NEGATIVE_INTEGER ? d->via.i64 : (int64_t)d->via.u64;
  }
}

/* PlacementOk {"nodes": [{name, op, requested, assigned, reason}], "partitions": [{device,
 * graph}], "edges": [{tensor, send, from, to, dtype, shape, control}]} -> *p. */
static int read_placement(const net_in *rep, rt_placement *p, rt_status *st) {
  const msgpack_object_array *nodes = obj_array(net_get(rep, "nodes"));
  const msgpack_object_array *parts = obj_array(net_get(rep, "partitions"));
  const msgpack_object_array *edges = obj_array(net_get(rep, "edges"));
  if (nodes) {
    p->nodes = xcalloc(nodes->size + 1, sizeof *p->nodes);
    for (uint32_t i = 0; i < nodes->size; i++) {
      const msgpack_object *o = &nodes->ptr[i];
      p->nodes[p->n_nodes++] = (rt_placed_node){obj_strdup(o, "name"), obj_strdup(o, "op"),
                                                obj_strdup(o, "requested"), obj_strdup(o, "assigned"),
                                                obj_strdup(o, "reason")};
    }
  }
  if (parts) {
    p->parts = xcalloc(parts->size + 1, sizeof *p->parts);
    for (uint32_t i = 0; i < parts->size; i++) {
      const msgpack_object *o = &parts->ptr[i], *g = net_obj_key(o, "graph");
      rt_partition *pt = &p->parts[p->n_parts++];
      pt->name = obj_strdup(o, "device");
      pt->g = rt_graph_new();
      if (g && rt_unpack_nodes(rep, g, "PlacementOk.partitions.graph", pt->g, st)) return st->code;
    }
  }
  if (edges) {
    p->edges = xcalloc(edges->size + 1, sizeof *p->edges);
    for (uint32_t i = 0; i < edges->size; i++) {
      const msgpack_object *o = &edges->ptr[i];
      rt_placed_edge *e = &p->edges[p->n_edges++];
      e->tensor = obj_strdup(o, "tensor");
      e->send = obj_strdup(o, "send");
      e->from = obj_strdup(o, "from");
      e->to = obj_strdup(o, "to");
      e->control = rt_obj_int(o, "control") != 0;
      e->dtype = (rt_dtype)rt_obj_int(o, "dtype");
      edge_shape(o, &e->shape);
    }
  }
  return RT_OK;
}

int rt_session_placement(rt_session *s, int n_feeds, const char *const *feeds, int n_fetches,
                         const char *const *fetches, int n_targets, const char *const *targets,
                         rt_placement *out, rt_status *st) {
  memset(out, 0, sizeof *out);
  if (rt_session_tf(s)) {   /* TF's master: the partition graphs of a step it ran */
    const char **names = xcalloc((size_t)(n_fetches + n_targets) + 1, sizeof *names);
    for (int i = 0; i < n_fetches; i++) names[i] = fetches[i];
    for (int i = 0; i < n_targets; i++) names[n_fetches + i] = targets[i];
    int rc = rt_tfs_placement(rt_session_tf(s), n_fetches + n_targets, names, out, st);
    free(names);
    return rc;
  }
  /* the master must know every node: an empty step sends what the graph gained */
  rt_session_run none = {0};
  int rc = rt_session_run_step(s, &none, st);
  if (rc) return rc;
  net_msg *req = net_msg_new("Placement");
  pack_names(req, "feeds", n_feeds, feeds);
  pack_names(req, "fetches", n_fetches, fetches);
  pack_names(req, "targets", n_targets, targets);
  net_in *rep = NULL;
  rc = rt_session_call(s, req, &rep, 30000, st);
  if (!rc) rc = read_placement(rep, out, st);
  net_in_free(rep);
  if (rc) rt_placement_clear(out);
  return rc;
}

int rt_placement_compute(rt_graph *g, const bool *needed, const char *const *devices, int n_devices,
                         const rt_place_opts *po, uint64_t (*incarnation)(void *arg, const char *device),
                         void *arg, rt_placement *out, rt_status *st) {
  memset(out, 0, sizeof *out);
  int rc = rt_place(g, devices, n_devices, po, st);
  if (rc) return rc;
  bool *nd = xcalloc((size_t)g->n_nodes + 1, sizeof *nd);
  for (int i = 0; i < g->n_nodes; i++) nd[i] = needed ? needed[i] : true;
  rt_partition_opts o = {.by_task = false, .incarnation = incarnation, .arg = arg};
  rc = rt_partition_graph(g, nd, &o, &out->parts, &out->n_parts, st);
  if (rc) {
    free(nd);
    return rc;
  }
  out->nodes = xcalloc((size_t)g->n_nodes + 1, sizeof *out->nodes);
  for (int i = 0; i < g->n_nodes; i++) {
    if (!nd[i]) continue;
    const rt_node *n = g->nodes[i];
    out->nodes[out->n_nodes++] = (rt_placed_node){xstrdup(n->name), xstrdup(n->op), xstrdup(n->device ? n->device : ""),
                                                  xstrdup(n->assigned ? n->assigned : ""), xstrdup(n->reason ? n->reason : "")};
  }
  free(nd);
  /* one edge per _Send: the tensor, its devices, dtype and static shape */
  int ne = 0;
  for (int p = 0; p < out->n_parts; p++)
    for (int i = 0; i < out->parts[p].g->n_nodes; i++) ne += !strcmp(out->parts[p].g->nodes[i]->op, "_Send");
  out->edges = xcalloc((size_t)ne + 1, sizeof *out->edges);
  for (int p = 0; p < out->n_parts; p++)
    for (int i = 0; i < out->parts[p].g->n_nodes; i++) {
      const rt_node *n = out->parts[p].g->nodes[i];
      if (strcmp(n->op, "_Send")) continue;
      const char *tn = rt_node_string(n, "tensor_name", "");
      rt_node *src = NULL;
      int idx = 0;
      rt_status ig;
      bool ctl = strstr(tn, "/_ctl") != NULL;
      if (ctl || rt_graph_output(g, tn, &src, &idx, &ig)) src = NULL;
      rt_placed_edge *e = &out->edges[out->n_edges++];
      e->tensor = xstrdup(tn);
      e->send = xstrdup(n->name);
      e->from = xstrdup(rt_node_string(n, "send_device", ""));
      e->to = xstrdup(rt_node_string(n, "recv_device", ""));
      e->control = ctl;
      e->dtype = src ? src->out_types[idx] : RT_FLOAT;
      e->shape = src ? src->out_shapes[idx] : rt_shape_unknown();
    }
  return RT_OK;
}

void rt_placement_clear(rt_placement *p) {
  for (int i = 0; i < p->n_nodes; i++) {
    rt_placed_node *n = &p->nodes[i];
    free(n->name), free(n->op), free(n->requested), free(n->assigned), free(n->reason);
  }
  for (int i = 0; i < p->n_edges; i++) {
    rt_placed_edge *e = &p->edges[i];
    free(e->tensor), free(e->send), free(e->from), free(e->to);
  }
  free(p->nodes);
  free(p->edges);
  rt_partitions_free(p->parts, p->n_parts);
  memset(p, 0, sizeof *p);
}

/* ---- the tasks of a cluster --------------------------------------------------------- */

/* GetStatusOk's devices: names into t. */
static void read_devices(const net_in *rep, rt_task_status *t) {
  const msgpack_object_array *d = obj_array(net_get(rep, "devices"));
  free(t->devices);
  free(t->descs);
  t->devices = xcalloc((d ? d->size : 0) + 1, sizeof *t->devices);
  t->descs = xcalloc((d ? d->size : 0) + 1, sizeof *t->descs);
  t->n_devices = 0;
  for (uint32_t k = 0; d && k < d->size; k++) {
    rt_obj_str(&d->ptr[k], "desc", t->descs[t->n_devices], sizeof *t->descs);
    rt_obj_str(&d->ptr[k], "name", t->devices[t->n_devices++], sizeof *t->devices);
  }
  const msgpack_object *note = net_get(rep, "gpu_note");
  t->gpu_note[0] = '\0';
  if (note && note->type == MSGPACK_OBJECT_STR)
    snprintf(t->gpu_note, sizeof t->gpu_note, "%.*s", (int)note->via.str.size, note->via.str.ptr);
  note = net_get(rep, "cpu_note");
  t->cpu_note[0] = '\0';
  if (note && note->type == MSGPACK_OBJECT_STR)
    snprintf(t->cpu_note, sizeof t->cpu_note, "%.*s", (int)note->via.str.size, note->via.str.ptr);
  t->has_devices = true;
}

/* GetProgressOk's totals into t. */
static void read_load(const net_in *rep, rt_task_status *t) {
  const msgpack_object *h = net_in_header(rep);
  t->runs = (uint64_t)rt_obj_int(h, "runs");
  t->busy_us = rt_obj_int(h, "busy_us");
  t->rss_bytes = rt_obj_int(h, "rss_bytes");
  rt_obj_str(h, "gpu_memory", t->gpu_memory, sizeof t->gpu_memory);
  rt_obj_str(h, "last_error", t->last_error, sizeof t->last_error);
  t->has_load = true;
}

/* The tasks of the cluster the server at endpoint reports ("/job:J/task:I=address" lines),
 * each with the endpoint to ask it at; the server itself (by its task name) at endpoint. */
static void list_tasks(const net_in *rep, const char *endpoint, rt_cluster_status *cs, char (**eps)[300]) {
  const msgpack_object_array *cl = obj_array(net_get(rep, "cluster"));
  char self[160];
  rt_obj_str(net_in_header(rep), "task", self, sizeof self);
  cs->tasks = xcalloc((cl ? cl->size : 0) + 1, sizeof *cs->tasks);
  *eps = xcalloc((cl ? cl->size : 0) + 1, sizeof **eps);
  for (uint32_t i = 0; cl && i < cl->size; i++) {
    const msgpack_object *o = &cl->ptr[i];
    if (o->type != MSGPACK_OBJECT_STR) continue;
    char line[600], job[64];
    int idx = 0;
    snprintf(line, sizeof line, "%.*s", (int)(o->via.str.size < sizeof line ? o->via.str.size : sizeof line - 1),
             o->via.str.ptr);
    char *eq = strchr(line, '=');
    if (!eq || sscanf(line, "/job:%63[^/]/task:%d", job, &idx) != 2) continue;
    rt_task_status *t = &cs->tasks[cs->n];
    rt_task_name(job, idx, t->task, sizeof t->task);
    snprintf(t->addr, sizeof t->addr, "%s", eq + 1);
    t->self = !strcmp(t->task, self);
    if (t->self) snprintf((*eps)[cs->n], sizeof **eps, "%s", endpoint);
    else rt_endpoint(t->addr, (*eps)[cs->n], sizeof **eps);
    cs->n++;
  }
  if (!cs->n) {   /* a lone local server: itself */
    rt_task_status *t = &cs->tasks[cs->n];
    snprintf(t->task, sizeof t->task, "%s", self[0] ? self : "/job:localhost/replica:0/task:0");
    snprintf(t->addr, sizeof t->addr, "%s", endpoint);
    t->self = true;
    snprintf((*eps)[cs->n], sizeof **eps, "%s", endpoint);
    cs->n++;
  }
}

int rt_cluster_status_get(const char *endpoint, int timeout_ms, rt_cluster_status *out,
                          rt_status *st) {
  memset(out, 0, sizeof *out);
  net_peer *master = net_peer_get(endpoint, st);
  if (!master) return st->code;
  net_in *rep = NULL;
  int rc = net_peer_call(master, net_msg_new("GetStatus"), &rep, &(net_wait){.timeout_ms = 2 * timeout_ms}, st);
  if (rc) return rc;
  char (*eps)[300] = NULL;
  list_tasks(rep, endpoint, out, &eps);
  net_in_free(rep);

  /* every task's GetStatus (tag 2i) and GetProgress (tag 2i+1), all in flight at once */
  net_cq *q = net_cq_new();
  bool *failed = xcalloc((size_t)out->n + 1, sizeof *failed);
  int pending = 0;
  for (int i = 0; i < out->n; i++) {
    rt_status ig;
    net_peer *p = net_peer_get(eps[i], &ig);
    if (!p) continue;
    pending += !net_peer_send(p, net_msg_new("GetStatus"), q, 2 * (uint64_t)i, NULL, &ig);
    pending += !net_peer_send(p, net_msg_new("GetProgress"), q, 2 * (uint64_t)i + 1, NULL, &ig);
  }
  int64_t t0 = now_us();
  for (; pending > 0; pending--) {
    int left = timeout_ms - (int)((now_us() - t0) / 1000);
    if (left <= 0) break;
    uint64_t tag;
    net_in *r = NULL;
    rt_status ps;
    int rrc = net_cq_wait(q, &(net_wait){.timeout_ms = left}, NULL, &tag, &r, &ps);
    if (tag == NET_CQ_NONE) break;   /* the time is up */
    rt_task_status *t = &out->tasks[tag / 2];
    if (rrc || failed[tag / 2]) {   /* a task that fails a request says nothing more */
      failed[tag / 2] = true;
      net_in_free(r);
      continue;
    }
    t->connected = true;
    t->answered_us = now_us();
    t->incarnation = (uint64_t)rt_obj_int(net_in_header(r), "incarnation");
    if (tag % 2 == 0) read_devices(r, t);
    else read_load(r, t);
    net_in_free(r);
  }
  net_cq_free(q);
  free(failed);
  free(eps);
  return RT_OK;
}

void rt_cluster_status_clear(rt_cluster_status *cs) {
  for (int i = 0; i < cs->n; i++) {
    free(cs->tasks[i].devices);
    free(cs->tasks[i].descs);
  }
  free(cs->tasks);
  memset(cs, 0, sizeof *cs);
}
