/* TF's MasterService served by a tfsh server (tfmaster.h). Each TF session is a tfsh
 * session on this server's own master: TF's GraphDef becomes tfsh's graph (as
 * tf.import_graph_def makes it), RunStep becomes rt_session_run_step, tensors travel as
 * TensorProto, errors as TF's codes and messages. */
#include "runtime/tfmaster.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "net/grpc.h"
#include "runtime/graphdef.h"
#include "runtime/op.h"
#include "runtime/proto/master.pb-c.h"
#include "runtime/proto/worker.pb-c.h"
#include "runtime/session.h"
#include "runtime/views.h"

enum { MAX_SESSIONS = 256, SERVE_THREADS = 4, STATUS_TIMEOUT_MS = 2000 };

/* A callable: a step's feeds, fetches and targets named once (MakeCallable). */
typedef struct tf_callable {
  int nf, nt, ng;
  char **feed, **fetch, **target;
  int64_t timeout_ms;
} tf_callable;

typedef struct tf_sess {
  char handle[40];
  rt_graph *g;
  rt_session *s;
  int64_t version;
  pthread_mutex_t mu;   /* the graph: extend against runs; the callables */
  int users;            /* calls in flight (under M.mu) */
  tf_callable **calls;  /* by handle, from 0 as TF's; NULL once released */
  int64_t n_calls;
} tf_sess;

static void callable_free(tf_callable *c) {
  if (!c) return;
  for (int i = 0; i < c->nf; i++) free(c->feed[i]);
  for (int i = 0; i < c->nt; i++) free(c->fetch[i]);
  for (int i = 0; i < c->ng; i++) free(c->target[i]);
  free(c->feed), free(c->fetch), free(c->target), free(c);
}

static struct {
  pthread_mutex_t mu;
  tf_sess *live[MAX_SESSIONS];
  uint64_t next;
  char endpoint[256];   /* this server's own master */
  net_grpc_server *srv;
} M = {.mu = PTHREAD_MUTEX_INITIALIZER};

static tf_sess *take(const char *handle) {   /* a reference, or NULL */
  tf_sess *t = NULL;
  pthread_mutex_lock(&M.mu);
  for (int i = 0; i < MAX_SESSIONS && !t; i++)
    if (M.live[i] && handle && !strcmp(M.live[i]->handle, handle)) t = M.live[i], t->users++;
  pthread_mutex_unlock(&M.mu);
  return t;
}

/* take(handle), or TF's error for a session that is not there. */
static tf_sess *take_or_abort(const char *handle, rt_status *st) {
  tf_sess *t = take(handle);
  if (!t) rt_error(st, RT_ABORTED, "Session %s is not found.", handle ? handle : "");
  return t;
}

static void drop(tf_sess *t) {
  pthread_mutex_lock(&M.mu);
  bool last = --t->users == 0;
  pthread_mutex_unlock(&M.mu);
  if (!last) return;
  rt_session_free(t->s);
  rt_graph_free(t->g);
  for (int64_t i = 0; i < t->n_calls; i++) callable_free(t->calls[i]);
  free(t->calls);
  pthread_mutex_destroy(&t->mu);
  free(t);
}

/* A reply message packed into *rep (the caller's to free). */
static void reply_msg(const ProtobufCMessage *m, uint8_t **rep, size_t *rep_n) {
  *rep_n = protobuf_c_message_get_packed_size(m);
  *rep = xmalloc(*rep_n + 1);
  protobuf_c_message_pack(m, *rep);
}

/* TF's GraphDef nodes added to g, inputs before their users (tf.import_graph_def's way). */
static int add_graphdef(rt_graph *g, const uint8_t *p, size_t n, rt_status *st) {
  rt_graphdef gd = {0};
  int rc = rt_graphdef_decode(p, n, "the client's GraphDef", &gd, st);
  if (rc) return rc;
  int *order = rt_graphdef_order(&gd, st);
  for (int i = 0; order && i < gd.n && !rc; i++) {
    const rt_node *src = gd.nodes[order[i]];
    rt_node *x = rt_node_new(src->name, rt_graphdef_op(src->op));
    for (int k = 0; k < src->n_inputs; k++)
      if (src->inputs[k][0] == '^') rt_node_add_control(x, src->inputs[k] + 1);
      else rt_node_add_input(x, src->inputs[k]);
    if (src->device && *src->device) rt_node_set_device(x, src->device);
    for (int k = 0; k < src->n_attrs; k++) {
      rt_attr_value v;
      rt_attr_value_copy(&v, &src->attrs[k].value);
      rt_node_set_attr(x, src->attrs[k].name, &v);
    }
    const rt_op_sig *sig = rt_op_find(x->op);
    if (!sig) {
      rc = rt_error(st, RT_UNIMPLEMENTED, "node '%s': op %s, which tfsh does not have", x->name, src->op);
      rt_node_free(x);
      break;
    }
    rt_graphdef_fit_attrs(x, sig);
    rc = rt_graph_add(g, x, st);
  }
  if (!order) rc = st->code;
  free(order);
  rt_graphdef_free(&gd);
  return rc;
}

static int create(const uint8_t *req, size_t n, uint8_t **rep, size_t *rep_n, rt_status *st) {
  Tensorflow__CreateSessionRequest *r = tensorflow__create_session_request__unpack(NULL, n, req);
  if (!r) return rt_error(st, RT_INVALID_ARGUMENT, "CreateSession: %zu bytes that are not a CreateSessionRequest", n);
  tf_sess *t = xcalloc(1, sizeof *t);
  pthread_mutex_init(&t->mu, NULL);
  t->g = rt_graph_new();
  t->users = 1;
  int rc = add_graphdef(t->g, r->graph_def.data, r->graph_def.len, st);
  rt_session_config cfg = {0};
  if (r->config) {
    cfg.allow_soft_placement = r->config->allow_soft_placement;
    cfg.log_device_placement = r->config->log_device_placement;
    cfg.operation_timeout_ms = r->config->operation_timeout_in_ms;
    cfg.isolate_session_state = r->config->isolate_session_state;
    cfg.n_device_filters = (int)r->config->n_device_filters;
    cfg.device_filters = (const char *const *)r->config->device_filters;
  }
  if (!rc && !(t->s = rt_session_new(M.endpoint, t->g, &cfg, st))) rc = st->code;
  tensorflow__create_session_request__free_unpacked(r, NULL);
  pthread_mutex_lock(&M.mu);
  int slot = -1;
  for (int i = 0; i < MAX_SESSIONS && slot < 0 && !rc; i++)
    if (!M.live[i]) slot = i;
  if (!rc && slot < 0) rc = rt_error(st, RT_RESOURCE_EXHAUSTED, "CreateSession: %d sessions are open already", MAX_SESSIONS);
  if (!rc) {
    snprintf(t->handle, sizeof t->handle, "tfsh-%llu", (unsigned long long)++M.next);
    M.live[slot] = t;
  }
  pthread_mutex_unlock(&M.mu);
  if (rc) {
    drop(t);
    return rc;
  }
  Tensorflow__CreateSessionResponse out = TENSORFLOW__CREATE_SESSION_RESPONSE__INIT;
  out.session_handle = t->handle;
  out.graph_version = t->version;
  reply_msg(&out.base, rep, rep_n);
  return RT_OK;
}

static int extend(const uint8_t *req, size_t n, uint8_t **rep, size_t *rep_n, rt_status *st) {
  Tensorflow__ExtendSessionRequest *r = tensorflow__extend_session_request__unpack(NULL, n, req);
  if (!r) return rt_error(st, RT_INVALID_ARGUMENT, "ExtendSession: %zu bytes that are not an ExtendSessionRequest", n);
  tf_sess *t = take_or_abort(r->session_handle, st);
  int rc = t ? RT_OK : st->code;
  if (t) {
    pthread_mutex_lock(&t->mu);
    rc = add_graphdef(t->g, r->graph_def.data, r->graph_def.len, st);
    if (!rc) t->version++;
    Tensorflow__ExtendSessionResponse out = TENSORFLOW__EXTEND_SESSION_RESPONSE__INIT;
    out.new_graph_version = t->version;
    pthread_mutex_unlock(&t->mu);
    if (!rc) {
      reply_msg(&out.base, rep, rep_n);
    }
    drop(t);
  }
  tensorflow__extend_session_request__free_unpacked(r, NULL);
  return rc;
}

/* One step of t: feeds (TensorProto bytes) by name, fetches into got[nt]; `what` names
 * the fetches in the error for too many bytes. */
static int run_named(tf_sess *t, const char *what, int nf, const char *const *feed_names,
                     const ProtobufCBinaryData *feed_bytes, int nt, const char *const *fetches, int ng,
                     const char *const *targets, int64_t timeout_ms, rt_tensor **got, rt_status *st) {
  int rc = RT_OK;
  rt_tensor **feeds = xcalloc((size_t)nf + 1, sizeof *feeds);
  for (int i = 0; i < nf && !rc; i++)
    rc = rt_tensor_proto_decode(feed_bytes[i].data, feed_bytes[i].len, feed_names[i], &feeds[i], st);
  if (!rc) {
    rt_session_run run = {.n_feeds = nf, .feed_names = feed_names, .feeds = feeds, .n_fetches = nt,
                          .fetch_names = fetches, .fetched = got, .n_targets = ng, .targets = targets,
                          .timeout_ms = timeout_ms, .graph_sent = true};
    pthread_mutex_lock(&t->mu);   /* new nodes go to the master under the graph's lock */
    rc = rt_grpc_fetches_fit(t->g, fetches, nt, st);   /* before computing them */
    if (!rc) rc = rt_session_extend(t->s, NULL, st);
    pthread_mutex_unlock(&t->mu);
    if (!rc) rc = rt_session_run_step(t->s, &run, st);
  }
  if (!rc) rc = rt_grpc_message_fits(what, got, nt, 0, RT_GRPC_FETCH_ADVICE, st);
  for (int i = 0; i < nf; i++) rt_tensor_unref(feeds[i]);
  free(feeds);
  return rc;
}

/* The fetched tensors as TensorProto bytes (out[i], the caller's to free). */
static int encode_fetches(rt_tensor *const *got, int nt, ProtobufCBinaryData *out, rt_status *st) {
  int rc = RT_OK;
  for (int i = 0; i < nt && !rc; i++) rc = rt_tensor_proto_encode(got[i], &out[i].data, &out[i].len, st);
  return rc;
}

static int run_step(const uint8_t *req, size_t n, uint8_t **rep, size_t *rep_n, rt_status *st) {
  Tensorflow__RunStepRequest *r = tensorflow__run_step_request__unpack(NULL, n, req);
  if (!r) return rt_error(st, RT_INVALID_ARGUMENT, "RunStep: %zu bytes that are not a RunStepRequest", n);
  tf_sess *t = take_or_abort(r->session_handle, st);
  int rc = t ? RT_OK : st->code;
  int nf = (int)r->n_feed, nt = (int)r->n_fetch;
  if (!rc && r->partial_run_handle && *r->partial_run_handle)
    rc = rt_error(st, RT_UNIMPLEMENTED, "tfsh's TF master has no partial runs (Session.partial_run_setup)");
  rt_tensor **got = xcalloc((size_t)nt + 1, sizeof *got);
  const char **feed_names = xcalloc((size_t)nf + 1, sizeof *feed_names);
  ProtobufCBinaryData *feed_bytes = xcalloc((size_t)nf + 1, sizeof *feed_bytes);
  for (int i = 0; i < nf; i++) {
    feed_names[i] = r->feed[i]->name ? r->feed[i]->name : "";
    feed_bytes[i] = r->feed[i]->tensor;
  }
  if (!rc)
    rc = run_named(t, "RunStep's fetches", nf, feed_names, feed_bytes, nt, (const char *const *)r->fetch,
                   (int)r->n_target, (const char *const *)r->target, r->options ? r->options->timeout_in_ms : 0, got, st);
  if (!rc) {
    Tensorflow__RunStepResponse out = TENSORFLOW__RUN_STEP_RESPONSE__INIT;
    Tensorflow__NamedTensorProto *nts = xcalloc((size_t)nt + 1, sizeof *nts), **ntp = xcalloc((size_t)nt + 1, sizeof *ntp);
    ProtobufCBinaryData *bytes = xcalloc((size_t)nt + 1, sizeof *bytes);
    rc = encode_fetches(got, nt, bytes, st);
    for (int i = 0; i < nt; i++) {
      tensorflow__named_tensor_proto__init(&nts[i]);
      nts[i].name = r->fetch[i];
      nts[i].tensor = bytes[i];
      ntp[i] = &nts[i];
    }
    out.n_tensor = (size_t)nt, out.tensor = ntp;
    if (!rc) rc = rt_grpc_message_fits("RunStep's reply", NULL, 0, tensorflow__run_step_response__get_packed_size(&out),
                                       RT_GRPC_FETCH_ADVICE, st);
    if (!rc) {
      reply_msg(&out.base, rep, rep_n);
    }
    for (int i = 0; i < nt; i++) free(bytes[i].data);
    free(nts), free(ntp), free(bytes);
  }
  for (int i = 0; i < nt; i++) rt_tensor_unref(got[i]);
  free(got), free(feed_names), free(feed_bytes);
  if (t) drop(t);
  tensorflow__run_step_request__free_unpacked(r, NULL);
  return rc;
}

/* ---- callables ----------------------------------------------------------------------- */

static char **dup_strs(char **v, size_t n) {
  char **out = xcalloc(n + 1, sizeof *out);
  for (size_t i = 0; i < n; i++) out[i] = xstrdup(v[i] ? v[i] : "");
  return out;
}

/* TF's checks of a callable's names (its words): feeds and fetches are tensors of g,
 * targets its nodes (or their tensors: "step:0" names the node step). */
static int check_names(const rt_graph *g, const Tensorflow__CallableOptions *o, rt_status *st) {
  char node[512];
  int idx;
  for (size_t i = 0; i < o->n_feed; i++)
    if (!rt_tensor_name_parse(o->feed[i], node, sizeof node, &idx) || !rt_graph_find(g, node))
      return rt_error(st, RT_NOT_FOUND, "FeedInputs: unable to find feed output %s", o->feed[i]);
  for (size_t i = 0; i < o->n_fetch; i++)
    if (!rt_tensor_name_parse(o->fetch[i], node, sizeof node, &idx) || !rt_graph_find(g, node))
      return rt_error(st, RT_NOT_FOUND, "FetchOutputs node %s: not found", o->fetch[i]);
  for (size_t i = 0; i < o->n_target; i++)
    if (!rt_tensor_name_parse(o->target[i], node, sizeof node, &idx) || !rt_graph_find(g, node))
      return rt_error(st, RT_NOT_FOUND, "PruneForTargets: Some target nodes not found: %s ", o->target[i]);
  return RT_OK;
}

static int make_callable(const uint8_t *req, size_t n, uint8_t **rep, size_t *rep_n, rt_status *st) {
  Tensorflow__MakeCallableRequest *r = tensorflow__make_callable_request__unpack(NULL, n, req);
  if (!r) return rt_error(st, RT_INVALID_ARGUMENT, "MakeCallable: %zu bytes that are not a MakeCallableRequest", n);
  tf_sess *t = take_or_abort(r->session_handle, st);
  int rc = t ? RT_OK : st->code;
  Tensorflow__CallableOptions none = TENSORFLOW__CALLABLE_OPTIONS__INIT, *o = r->options ? r->options : &none;
  if (!rc && (o->n_feed_devices || o->n_fetch_devices))   /* TF's words */
    rc = rt_error(st, RT_UNIMPLEMENTED, "CallableOptions::feed_devices and CallableOptions::fetch_devices to configure "
                  "feeding/fetching tensors to/from device memory is not yet supported when using a remote session.");
  if (!rc && o->n_tensor_connection)
    rc = rt_error(st, RT_UNIMPLEMENTED, "tfsh's TF master has no CallableOptions.tensor_connection (%s to %s)",
                  o->tensor_connection[0]->from_tensor, o->tensor_connection[0]->to_tensor);
  int64_t handle = 0;
  if (!rc) {
    pthread_mutex_lock(&t->mu);
    rc = check_names(t->g, o, st);
    if (!rc) {
      tf_callable *c = xcalloc(1, sizeof *c);
      c->nf = (int)o->n_feed, c->nt = (int)o->n_fetch, c->ng = (int)o->n_target;
      c->feed = dup_strs(o->feed, o->n_feed), c->fetch = dup_strs(o->fetch, o->n_fetch);
      c->target = dup_strs(o->target, o->n_target);
      for (int i = 0; i < c->ng; i++) {   /* the node's name */
        char node[512];
        int idx;
        rt_tensor_name_parse(c->target[i], node, sizeof node, &idx);
        free(c->target[i]);
        c->target[i] = xstrdup(node);
      }
      c->timeout_ms = o->run_options ? o->run_options->timeout_in_ms : 0;
      t->calls = xrealloc(t->calls, (size_t)(t->n_calls + 1) * sizeof *t->calls);
      handle = t->n_calls;
      t->calls[t->n_calls++] = c;
    }
    pthread_mutex_unlock(&t->mu);
  }
  if (!rc) {
    Tensorflow__MakeCallableResponse out = TENSORFLOW__MAKE_CALLABLE_RESPONSE__INIT;
    out.handle = handle;
    reply_msg(&out.base, rep, rep_n);
  }
  if (t) drop(t);
  tensorflow__make_callable_request__free_unpacked(r, NULL);
  return rc;
}

/* A copy of callable h of t, or TF's error for one never made or released. */
static tf_callable *callable_copy(tf_sess *t, int64_t h, rt_status *st) {
  tf_callable *c = NULL;
  pthread_mutex_lock(&t->mu);
  if (h < 0 || h >= t->n_calls) {
    rt_error(st, RT_INVALID_ARGUMENT, "No such callable handle: %lld", (long long)h);
  } else if (!t->calls[h]) {
    rt_error(st, RT_INVALID_ARGUMENT, "Attempted to run callable after handle was released: %lld", (long long)h);
  } else {
    const tf_callable *s = t->calls[h];
    c = xcalloc(1, sizeof *c);
    *c = *s;
    c->feed = dup_strs(s->feed, (size_t)s->nf), c->fetch = dup_strs(s->fetch, (size_t)s->nt);
    c->target = dup_strs(s->target, (size_t)s->ng);
  }
  pthread_mutex_unlock(&t->mu);
  return c;
}

static int run_callable(const uint8_t *req, size_t n, uint8_t **rep, size_t *rep_n, rt_status *st) {
  Tensorflow__RunCallableRequest *r = tensorflow__run_callable_request__unpack(NULL, n, req);
  if (!r) return rt_error(st, RT_INVALID_ARGUMENT, "RunCallable: %zu bytes that are not a RunCallableRequest", n);
  tf_sess *t = take_or_abort(r->session_handle, st);
  tf_callable *c = t ? callable_copy(t, r->handle, st) : NULL;
  int rc = c ? RT_OK : st->code;
  if (!rc && (int)r->n_feed != c->nf)   /* TF's server dies here */
    rc = rt_error(st, RT_INVALID_ARGUMENT, "RunCallable: callable %lld takes %d feed%s, got %zu", (long long)r->handle,
                  c->nf, c->nf == 1 ? "" : "s", r->n_feed);
  int nt = c ? c->nt : 0;
  rt_tensor **got = xcalloc((size_t)nt + 1, sizeof *got);
  ProtobufCBinaryData *bytes = xcalloc((size_t)nt + 1, sizeof *bytes);
  if (!rc)
    rc = run_named(t, "RunCallable's fetches", c->nf, (const char *const *)c->feed, r->feed, nt,
                   (const char *const *)c->fetch, c->ng, (const char *const *)c->target, c->timeout_ms, got, st);
  if (!rc) rc = encode_fetches(got, nt, bytes, st);
  if (!rc) {
    Tensorflow__RunCallableResponse out = TENSORFLOW__RUN_CALLABLE_RESPONSE__INIT;
    out.n_fetch = (size_t)nt, out.fetch = bytes;
    rc = rt_grpc_message_fits("RunCallable's reply", NULL, 0, tensorflow__run_callable_response__get_packed_size(&out),
                              RT_GRPC_FETCH_ADVICE, st);
    if (!rc) {
      reply_msg(&out.base, rep, rep_n);
    }
  }
  for (int i = 0; i < nt; i++) rt_tensor_unref(got[i]), free(bytes[i].data);
  free(got), free(bytes);
  callable_free(c);
  if (t) drop(t);
  tensorflow__run_callable_request__free_unpacked(r, NULL);
  return rc;
}

/* ReleaseCallable: as TF's, a handle that is not there (any more) is no error. */
static int release_callable(const uint8_t *req, size_t n, uint8_t **rep, size_t *rep_n, rt_status *st) {
  Tensorflow__ReleaseCallableRequest *r = tensorflow__release_callable_request__unpack(NULL, n, req);
  if (!r)
    return rt_error(st, RT_INVALID_ARGUMENT, "ReleaseCallable: %zu bytes that are not a ReleaseCallableRequest", n);
  tf_sess *t = take_or_abort(r->session_handle, st);
  int rc = t ? RT_OK : st->code;
  if (t) {
    tf_callable *gone = NULL;
    pthread_mutex_lock(&t->mu);
    if (r->handle >= 0 && r->handle < t->n_calls) gone = t->calls[r->handle], t->calls[r->handle] = NULL;
    pthread_mutex_unlock(&t->mu);
    callable_free(gone);
    drop(t);
    *rep = xmalloc(1), *rep_n = 0;
  }
  tensorflow__release_callable_request__free_unpacked(r, NULL);
  return rc;
}

static int close_session(const uint8_t *req, size_t n, uint8_t **rep, size_t *rep_n, rt_status *st) {
  Tensorflow__CloseSessionRequest *r = tensorflow__close_session_request__unpack(NULL, n, req);
  if (!r) return rt_error(st, RT_INVALID_ARGUMENT, "CloseSession: %zu bytes that are not a CloseSessionRequest", n);
  tf_sess *t = NULL;
  pthread_mutex_lock(&M.mu);
  for (int i = 0; i < MAX_SESSIONS && !t; i++)
    if (M.live[i] && r->session_handle && !strcmp(M.live[i]->handle, r->session_handle)) t = M.live[i], M.live[i] = NULL;
  pthread_mutex_unlock(&M.mu);
  tensorflow__close_session_request__free_unpacked(r, NULL);
  if (!t) return rt_error(st, RT_ABORTED, "Session is not found.");
  rt_session_close(t->s);   /* steps in flight end; the last user frees it */
  drop(t);
  *rep = xmalloc(1), *rep_n = 0;
  return RT_OK;
}

/* One of a task's devices as TF's DeviceAttributes ("/job:w/replica:0/task:0/device:CPU:0"
 * is a CPU); strings point into t. */
static void device_attrs(const rt_task_status *t, int k, Tensorflow__DeviceAttributes *d) {
  tensorflow__device_attributes__init(d);
  d->name = t->devices[k];
  const char *dev = strstr(t->devices[k], "/device:");
  static char types[2][8] = {"CPU", "GPU"};
  d->device_type = dev && !strncmp(dev + 8, "GPU", 3) ? types[1] : types[0];
  d->incarnation = t->incarnation;
  d->physical_device_desc = t->descs ? t->descs[k] : (char *)"";
}

/* ListDevices: TF's Master::ListDevices lists this task's devices as local and every
 * other task's as remote (a session's handle, when given, must be one of ours). */
static int list_devices(const uint8_t *req, size_t n, uint8_t **rep, size_t *rep_n, rt_status *st) {
  Tensorflow__ListDevicesRequest *r = tensorflow__list_devices_request__unpack(NULL, n, req);
  if (!r) return rt_error(st, RT_INVALID_ARGUMENT, "ListDevices: %zu bytes that are not a ListDevicesRequest", n);
  int rc = RT_OK;
  if (r->session_handle && *r->session_handle) {
    tf_sess *t = take(r->session_handle);
    if (t) drop(t);
    else rc = rt_error(st, RT_INVALID_ARGUMENT, "Session %s is not found. Possibly, this master has restarted.",
                       r->session_handle);
  }
  tensorflow__list_devices_request__free_unpacked(r, NULL);
  if (rc) return rc;
  rt_cluster_status cs;
  if (rt_cluster_status_get(M.endpoint, STATUS_TIMEOUT_MS, &cs, st)) return st->code;
  int total = 0;
  for (int i = 0; i < cs.n; i++) {
    if (!cs.tasks[i].connected || !cs.tasks[i].has_devices)
      rc = rt_error(st, RT_UNAVAILABLE, "ListDevices: task %s (%s) did not answer in %d ms", cs.tasks[i].task,
                    cs.tasks[i].addr, STATUS_TIMEOUT_MS);
    else total += cs.tasks[i].n_devices;
  }
  Tensorflow__DeviceAttributes *da = xcalloc((size_t)total + 1, sizeof *da);
  Tensorflow__DeviceAttributes **local = xcalloc((size_t)total + 1, sizeof *local);
  Tensorflow__DeviceAttributes **remote = xcalloc((size_t)total + 1, sizeof *remote);
  Tensorflow__ListDevicesResponse out = TENSORFLOW__LIST_DEVICES_RESPONSE__INIT;
  out.local_device = local, out.remote_device = remote;
  for (int i = 0, m = 0; !rc && i < cs.n; i++)
    for (int k = 0; k < cs.tasks[i].n_devices; k++, m++) {
      device_attrs(&cs.tasks[i], k, &da[m]);
      if (cs.tasks[i].self) local[out.n_local_device++] = &da[m];
      else remote[out.n_remote_device++] = &da[m];
    }
  if (!rc) {
    reply_msg(&out.base, rep, rep_n);
  }
  free(da), free(local), free(remote);
  rt_cluster_status_clear(&cs);
  return rc;
}

/* Reset: as TF's Master::Reset, every session of this master closes, and every task (with
 * device_filters: this one and those they name) drops the containers named (all when none
 * are). */
static int reset(const uint8_t *req, size_t n, uint8_t **rep, size_t *rep_n, rt_status *st) {
  Tensorflow__ResetRequest *r = tensorflow__reset_request__unpack(NULL, n, req);
  if (!r) return rt_error(st, RT_INVALID_ARGUMENT, "Reset: %zu bytes that are not a ResetRequest", n);
  tf_sess *gone[MAX_SESSIONS];
  int n_gone = 0;
  pthread_mutex_lock(&M.mu);
  for (int i = 0; i < MAX_SESSIONS; i++)
    if (M.live[i]) gone[n_gone++] = M.live[i], M.live[i] = NULL;
  pthread_mutex_unlock(&M.mu);
  for (int i = 0; i < n_gone; i++) {
    rt_session_close(gone[i]->s);
    drop(gone[i]);
  }
  int rc = rt_session_reset(M.endpoint, (int)r->n_container, (const char *const *)r->container,
                            (int)r->n_device_filters, (const char *const *)r->device_filters, st);
  tensorflow__reset_request__free_unpacked(r, NULL);
  if (rc) return rc;
  *rep = xmalloc(1), *rep_n = 0;
  return RT_OK;
}

static int handle(void *arg, const char *method, const uint8_t *req, size_t n, uint8_t **rep,
                  size_t *rep_n, char *err, size_t err_len) {
  (void)arg;
  static const struct {
    const char *name;
    int (*fn)(const uint8_t *, size_t, uint8_t **, size_t *, rt_status *);
  } methods[] = {{"CreateSession", create}, {"ExtendSession", extend}, {"RunStep", run_step},
                 {"CloseSession", close_session}, {"ListDevices", list_devices}, {"Reset", reset},
                 {"MakeCallable", make_callable}, {"RunCallable", run_callable},
                 {"ReleaseCallable", release_callable}};
  static const char prefix[] = "/tensorflow.MasterService/";
  rt_status st = {0};
  int rc = -1;
  for (size_t i = 0; i < sizeof methods / sizeof *methods && rc < 0; i++)
    if (!strncmp(method, prefix, sizeof prefix - 1) && !strcmp(method + sizeof prefix - 1, methods[i].name))
      rc = methods[i].fn(req, n, rep, rep_n, &st);
  if (rc < 0) rc = rt_error(&st, RT_UNIMPLEMENTED, "tfsh's TF master has no method %s", method);
  if (rc) snprintf(err, err_len, "%s", st.msg);
  return rc > 0 && rc <= 16 ? rc : rc ? RT_INTERNAL : 0;
}

int rt_tfmaster_start(const char *addr, const char *endpoint, rt_status *st) {
  snprintf(M.endpoint, sizeof M.endpoint, "%s", endpoint);
  char why[300];
  if (!(M.srv = net_grpc_serve(addr, SERVE_THREADS, handle, NULL, why, sizeof why)))
    return rt_error(st, RT_UNAVAILABLE, "--grpc %s: %s", addr, why);
  return RT_OK;
}
