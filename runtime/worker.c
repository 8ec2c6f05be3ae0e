/* The worker service: devices, registered fragments, steps and their rendezvous.
 *
 *   RegisterGraph {session, isolate?, graph: [placed nodes]} -> {handle}
 *   RunGraph      {handle, step, feeds: [{name, tensor}], fetches: [name]} -> {tensors}
 *   PushTensor    {step, key, tensor}                       -> no reply (errors abort)
 *   ShmRelease    {off}                                     -> no reply
 *   AbortStep     {step, code, msg}                         -> {}
 *   DeregisterGraph {handle}                                -> {}
 *   GetStatus     {}                                        -> {task, devices}
 *   ResetWorker   {containers}                              -> {}
 *   GetProgress   {step?}                                   -> {task, runs, devices}
 *
 * (rt_worker_messages, at the end, dispatches them; net/PROTOCOL.md has every field.)
 *
 * A registered fragment is split again per device; each device's part runs in its own
 * thread (kept with the fragment) with its own executor. Tensors between parts of this
 * worker meet in the step's rendezvous table. A tensor for another task is pushed to it
 * as soon as it is produced (PushTensor, over the one connection this process keeps to
 * that task), and lands in the same table there, handled on the server's I/O thread: an
 * executor only ever waits on the table, for its own keys. */
#include <errno.h>
#include <inttypes.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/shm.h"
#include "runtime/codec.h"
#include "base/alloc.h"
#include "runtime/exec.h"
#include "runtime/op.h"
#include "runtime/gpu/gpu.h"
#include "runtime/partition.h"
#include "runtime/server_int.h"
#include "runtime/step.h"
#include "runtime/trace.h"   /* views: RunGraph traces, GetProgress */
#include "runtime/wire_fmt.h"

/* Kernel state of one session (random generators), shared by its fragments. Owner rule:
 * each registered fragment of the session holds one reference (refs, under w->mu). */
typedef struct wsess {
  struct wsess *next;
  uint64_t session;
  int refs;
  rt_state_table *states;
  char scope[40];   /* isolate_session_state: its resources' scope on our devices ("" shared) */
} wsess;

/* Owner rule: the worker's list holds one reference and every RunGraph that found the
 * fragment (graph_find, under w->mu) holds one until graph_unref; refs is guarded by w->mu,
 * and the last reference frees it (DeregisterGraph during a step: the step ends first). */
typedef struct wgraph {
  struct wgraph *next;
  int refs;                 /* w->mu */
  struct rt_worker *w;
  wsess *sess;
  uint64_t handle;
  rt_graph *g;
  int n_parts;
  rt_partition *parts;
  rt_exec **execs;
  rt_device **devs;
  /* per part: its sinks (nodes nobody consumes), the targets of every step, found once here:
   * every node of a registered fragment runs (the master pruned it already) */
  const char ***targets;
  int *n_targets;
  pthread_mutex_t run_mu;   /* an executor runs one step at a time */
  /* parts 1.. run on threads of their own, started once (part 0 on the caller's) */
  pthread_t *threads;
  pthread_mutex_t go_mu;
  pthread_cond_t go_cv, done_cv;
  struct wrun *go;          /* this step's runs (NULL: none yet) */
  uint64_t gen;             /* bumped for every step; threads run each gen once */
  int n_done;
  bool quit;
} wgraph;

typedef struct wrun wrun;

/* A key of a step's rendezvous: a tensor that arrived, or a run waiting for it. */
typedef struct rdv_item {
  struct rdv_item *next;
  uint64_t hash;
  rt_tensor *t;
  wrun *waiter;
  char key[];
} rdv_item;

#define RDV_BUCKETS 64

typedef struct wstep {
  struct wstep *next;
  uint64_t id;
  rdv_item *items[RDV_BUCKETS];
  int n_items;              /* holding a tensor */
  int users;
  bool aborted;
  rt_status abort;
  wrun *runs;               /* parts running now, for cancellation */
  bool ran;                 /* a RunGraph of this step came here */
  int64_t born_ms;          /* when a pushed tensor made it, before any RunGraph */
} wstep;

struct wrun {
  rt_step step;             /* first: the executor's step points here */
  rt_worker *w;
  wstep *ws;
  wrun *next;
  wgraph *wg;
  int part;
  const rt_run_args *args;
  rt_status st;
  int rc;
  pthread_cond_t cv;        /* a _Recv of this run waits here, for its own keys */
};

/* Steps aborted recently: a RecvTensor or RunGraph that arrives after the abort fails at
 * once instead of waiting for a tensor that will never come. */
#define TOMBSTONES 256

struct rt_worker {
  rt_server *srv;
  int n_devices;
  rt_device **devices;
  pthread_mutex_t mu;
  net_limits limits;         /* a pushed tensor must fit the receiver's max_frame */
  wgraph *graphs;
  wstep *steps;
  wsess *sessions;
  bool shutdown;             /* every step fails from now on */
  uint64_t dead[TOMBSTONES];
  rt_status dead_why[TOMBSTONES];
  int dead_next;
  /* views: what GetProgress reports for %top (w->mu) */
  uint64_t n_runs;           /* RunGraph calls answered */
  int64_t busy_us;           /* wall time spent inside RunGraph */
  char last_error[256];
  const char *gpu_note;      /* why this worker has no GPU ("" when it has, or no CUDA) */
};

/* ---- lifecycle ---------------------------------------------------------------------- */

rt_worker *rt_worker_new(rt_server *s, int n_cpus, int max_gpus) {
  rt_worker *w = xcalloc(1, sizeof *w);
  w->srv = s;
  if (n_cpus < 1) n_cpus = 1;
  /* GPUs after the CPUs: every visible one unless device_count limits them. */
  const rt_gpu_info *gpus;
  int n_gpus = rt_gpu_devices(&gpus, &w->gpu_note);
  if (max_gpus < 0) n_gpus = 0;
  else if (max_gpus > 0 && max_gpus < n_gpus) n_gpus = max_gpus;
  w->n_devices = n_cpus + n_gpus;
  w->devices = xcalloc((size_t)w->n_devices, sizeof *w->devices);
  for (int i = 0; i < w->n_devices; i++) {
    char name[200];
    bool gpu = i >= n_cpus;
    snprintf(name, sizeof name, "%s/device:%s:%d", s->task, gpu ? "GPU" : "CPU", gpu ? i - n_cpus : i);
    w->devices[i] = rt_device_new(name, gpu ? RT_DEV_GPU : RT_DEV_CPU, s->incarnation);
    if (gpu && w->devices[i]) {
      const rt_gpu_info *gi = &gpus[i - n_cpus];
      w->devices[i]->gpu_ordinal = gi->ordinal;
      w->devices[i]->fake_gpu = gi->fake;
      snprintf(w->devices[i]->desc, sizeof w->devices[i]->desc, "%s, %.1f GiB", gi->name,
               (double)gi->total_bytes / (1u << 30));
    }
  }
  s->devices = w->devices;   /* the master's ListDevices reports them */
  s->n_devices = w->n_devices;
  pthread_mutex_init(&w->mu, NULL);
  net_options o;
  net_options_default(&o);
  w->limits = o.limits;
  return w;
}

static wsess *sess_get(rt_worker *w, uint64_t session, bool isolate);   /* w->mu held */
static void sess_release(rt_worker *w, wsess *s);          /* w->mu held */

static void wgraph_free(wgraph *wg) {
  if (wg->threads) {
    pthread_mutex_lock(&wg->go_mu);
    wg->quit = true;
    pthread_cond_broadcast(&wg->go_cv);
    pthread_mutex_unlock(&wg->go_mu);
    for (int i = 1; i < wg->n_parts; i++) pthread_join(wg->threads[i], NULL);
    free(wg->threads);
  }
  pthread_mutex_destroy(&wg->go_mu);
  pthread_cond_destroy(&wg->go_cv);
  pthread_cond_destroy(&wg->done_cv);
  for (int i = 0; i < wg->n_parts; i++) rt_exec_free(wg->execs[i]);
  if (wg->sess) {
    pthread_mutex_lock(&wg->w->mu);
    sess_release(wg->w, wg->sess);
    pthread_mutex_unlock(&wg->w->mu);
  }
  for (int i = 0; wg->targets && i < wg->n_parts; i++) free(wg->targets[i]);
  free(wg->targets);
  free(wg->n_targets);
  rt_partitions_free(wg->parts, wg->n_parts);
  free(wg->execs);
  free(wg->devs);
  rt_graph_free(wg->g);
  pthread_mutex_destroy(&wg->run_mu);
  free(wg);
}

static wsess *sess_get(rt_worker *w, uint64_t session, bool isolate) {
  for (wsess *s = w->sessions; s; s = s->next)
    if (s->session == session) {
      s->refs++;
      return s;
    }
  wsess *s = xcalloc(1, sizeof *s);
  s->session = session;
  s->refs = 1;
  s->states = rt_state_table_new();
  if (isolate) snprintf(s->scope, sizeof s->scope, "_isolated_%016llx", (unsigned long long)session);
  s->next = w->sessions;
  w->sessions = s;
  return s;
}

static void sess_release(rt_worker *w, wsess *s) {
  if (--s->refs > 0) return;
  for (wsess **p = &w->sessions; *p; p = &(*p)->next)
    if (*p == s) {
      *p = s->next;
      break;
    }
  rt_state_table_free(s->states);
  /* an isolated session's variables go with it (TF: its worker session's resource managers) */
  for (int d = 0; s->scope[0] && d < w->n_devices; d++) rt_device_clear_scope(w->devices[d], s->scope);
  free(s);
}

static void items_free(wstep *s) {
  for (int b = 0; b < RDV_BUCKETS; b++)
    for (rdv_item *it = s->items[b], *next; it; it = next) {
      next = it->next;
      rt_tensor_unref(it->t);
      free(it);
    }
}

static void step_abort(rt_worker *w, wstep *s, const rt_status *why);

void rt_worker_shutdown(rt_worker *w) {
  rt_status why;
  rt_error(&why, RT_CANCELLED, "%s is shutting down", w->srv->task);
  pthread_mutex_lock(&w->mu);
  __atomic_store_n(&w->shutdown, true, __ATOMIC_RELEASE);
  for (wstep *s = w->steps; s; s = s->next) step_abort(w, s, &why);
  pthread_mutex_unlock(&w->mu);
}

void rt_worker_free(rt_worker *w) {
  if (!w) return;
  while (w->graphs) {
    wgraph *g = w->graphs;
    w->graphs = g->next;
    wgraph_free(g);
  }
  while (w->steps) {
    wstep *s = w->steps;
    w->steps = s->next;
    items_free(s);
    free(s);
  }
  for (int i = 0; i < w->n_devices; i++) rt_device_free(w->devices[i]);
  free(w->devices);
  pthread_mutex_destroy(&w->mu);
  free(w);
}

static rt_device *device_named(rt_worker *w, const char *name) {
  for (int i = 0; i < w->n_devices; i++)
    if (!strcmp(w->devices[i]->name, name)) return w->devices[i];
  return NULL;
}

/* ---- steps and the rendezvous (w->mu held) ------------------------------------------ */

/* Steps a pushed tensor made, whose RunGraph has not come within 10 s, are dropped: one
 * for a step that never comes here must not be kept forever. */
#define BORN_MS 10000

static void step_unlink(rt_worker *w, wstep *s) {
  for (wstep **p = &w->steps; *p; p = &(*p)->next)
    if (*p == s) {
      *p = s->next;
      break;
    }
  items_free(s);
  free(s);
}

static wstep *step_get(rt_worker *w, uint64_t id) {
  for (wstep *s = w->steps; s; s = s->next)
    if (s->id == id) return s;
  int64_t now = rt_trace_micros() / 1000;
  for (wstep *s = w->steps, *next; s; s = next) {
    next = s->next;
    if (!s->ran && !s->users && now - s->born_ms > BORN_MS) step_unlink(w, s);
  }
  wstep *s = xcalloc(1, sizeof *s);
  s->id = id;
  s->born_ms = now;
  s->next = w->steps;
  w->steps = s;
  /* born aborted when the step was aborted before (or the worker is going away) */
  for (int i = 0; i < TOMBSTONES; i++)
    if (w->dead[i] == id) {
      s->aborted = true;
      s->abort = w->dead_why[i];
    }
  if (w->shutdown) {
    s->aborted = true;
    rt_error(&s->abort, RT_CANCELLED, "%s is shutting down", w->srv->task);
  }
  return s;
}

/* Drop a step once nobody uses it and every tensor it holds has been taken. Aborted steps
 * are dropped too: their late arrivals find the tombstone. */
static void step_release(rt_worker *w, wstep *s) {
  if (--s->users > 0 || (s->n_items && !s->aborted)) return;
  step_unlink(w, s);
}

static void step_abort(rt_worker *w, wstep *s, const rt_status *why) {
  if (s->aborted) return;
  s->aborted = true;
  s->abort = *why;
  w->dead[w->dead_next] = s->id;
  w->dead_why[w->dead_next] = *why;
  w->dead_next = (w->dead_next + 1) % TOMBSTONES;
  for (wrun *r = s->runs; r; r = r->next) {
    atomic_store(&r->step.cancelled, true);
    pthread_cond_signal(&r->cv);
  }
}

static uint64_t key_hash(const char *key) {
  uint64_t h = 1469598103934665603ull;   /* FNV-1a */
  for (const unsigned char *p = (const unsigned char *)key; *p; p++) h = (h ^ *p) * 1099511628211ull;
  return h;
}

static rdv_item **item_slot(wstep *s, const char *key, uint64_t h) {
  rdv_item **p = &s->items[h % RDV_BUCKETS];
  while (*p && ((*p)->hash != h || strcmp((*p)->key, key))) p = &(*p)->next;
  return p;
}

static rdv_item *item_new(rdv_item **slot, const char *key, uint64_t h) {
  size_t n = strlen(key) + 1;
  rdv_item *it = xcalloc(1, sizeof *it + n);
  memcpy(it->key, key, n);
  it->hash = h;
  *slot = it;
  return it;
}

/* A tensor arrives under key (w->mu held; takes t): wake the run waiting for it. */
static void item_put(wstep *s, const char *key, rt_tensor *t) {
  uint64_t h = key_hash(key);
  rdv_item **slot = item_slot(s, key, h);
  rdv_item *it = *slot ? *slot : item_new(slot, key, h);
  if (it->t) {   /* sent twice: the newer wins (a key names its loop iteration: sent once) */
    rt_tensor_unref(it->t);
    s->n_items--;
  }
  it->t = t;
  s->n_items++;
  if (it->waiter) pthread_cond_signal(&it->waiter->cv);
}

/* Take the tensor under key if it is there (w->mu held). */
static rt_tensor *item_take(wstep *s, const char *key) {
  uint64_t h = key_hash(key);
  rdv_item **slot = item_slot(s, key, h), *it = *slot;
  if (!it || !it->t) return NULL;
  rt_tensor *t = it->t;
  *slot = it->next;
  free(it);
  s->n_items--;
  return t;
}

/* Register r as the one waiting for key, or stop waiting (r NULL) (w->mu held). */
static void item_wait(wstep *s, const char *key, wrun *r) {
  uint64_t h = key_hash(key);
  rdv_item **slot = item_slot(s, key, h), *it = *slot;
  if (r) {
    if (!it) it = item_new(slot, key, h);
    it->waiter = r;
  } else if (it && !it->t) {
    *slot = it->next;
    free(it);
  } else if (it) {
    it->waiter = NULL;
  }
}

/* The task ("/job:J/replica:R/task:T") of a key's sending (field 0) or receiving (field 2)
 * device. */
static void key_task(const char *key, int field, char *task, size_t n) {
  task[0] = '\0';
  const char *p = key - 1;
  for (int i = 0; i < field && p; i++) p = strchr(p + 1, ';');
  const char *e = p ? strchr(p + 1, ';') : NULL;
  if (!e) return;
  char dev[256];
  size_t len = (size_t)(e - p - 1);
  if (len >= sizeof dev) return;
  memcpy(dev, p + 1, len);
  dev[len] = '\0';
  rt_devname d;
  if (!rt_devname_parse(dev, &d, NULL)) rt_devname_task_str(&d, task, n);
}

/* Push t to the task that receives key: one message over the connection this process
 * keeps to it, the tensor's bytes sent from its own buffer. No reply: a failure there
 * aborts the step there, and the master hears of it. */
static int push_remote(rt_worker *w, uint64_t step, const char *key, const char *task,
                       const rt_tensor *t, bool snapshot_only, rt_status *st) {
  rt_devname d;
  rt_devname_parse(task, &d, NULL);
  const rt_task_addr *a = rt_cluster_find(w->srv->cluster, d.job, d.task);
  if (!a) return rt_error(st, RT_INTERNAL, "no address for task %s (key %s)", task, key);
  size_t max = w->limits.max_frame;
  if (rt_tensor_nbytes(t) > max)
    return rt_error(st, RT_RESOURCE_EXHAUSTED, "cannot send %s to %s: a tensor of %zu bytes is over "
                    "the message limit of %zu bytes (TFSH_MAX_MESSAGE_BYTES)", key, task,
                    rt_tensor_nbytes(t), max);
  char ep[256], path[80];
  uint64_t off;
  rt_endpoint(a->addr, ep, sizeof ep);
  net_peer *p = net_peer_get(ep, st);
  if (!p) return st->code;
  /* A big tensor for a task of this host (not this process) goes through shared memory:
   * a copy at memory speed instead of two through the kernel. */
  size_t nb = rt_tensor_nbytes(t);
  bool shm = nb >= NET_SHM_MIN && t->dtype != RT_STRING && !net_peer_local(p) &&
             net_shm_reaches(ep) && net_shm_put(rt_tensor_data(t), nb, path, sizeof path, &off);
  if (!shm && snapshot_only) return RT_UNAVAILABLE;
  net_msg *m = net_msg_new("PushTensor");
  net_msg_uint(m, "step", step);
  net_msg_str(m, "key", key);
  if (t == RT_DEAD) net_msg_bool(m, "dead", true);   /* no tensor: the receiver's value is dead */
  else if (shm) rt_pack_tensor_shm(net_msg_field(m, "tensor"), t, path, off);
  else rt_pack_tensor_msg(m, net_msg_field(m, "tensor"), t);
  return net_peer_send_oneway(p, m, st);
}

/* A tensor that came through shared memory is freed: its block is the sender's again. */
static void shm_release(void *arg, uint64_t off) {
  net_msg *m = net_msg_new("ShmRelease");
  net_msg_uint(m, "off", off);
  rt_status ignore;
  net_peer_send_oneway(arg, m, &ignore);
}

/* The peer of the task that sent key. */
static net_peer *sender_peer(rt_worker *w, const char *key, rt_status *st) {
  char task[160], ep[256];
  key_task(key, 0, task, sizeof task);
  rt_devname d;
  const rt_task_addr *a = NULL;
  if (task[0] && !rt_devname_parse(task, &d, NULL)) a = rt_cluster_find(w->srv->cluster, d.job, d.task);
  if (!a) {
    rt_error(st, RT_INVALID_ARGUMENT, "PushTensor: key %s names no task of the cluster", key);
    return NULL;
  }
  rt_endpoint(a->addr, ep, sizeof ep);
  return net_peer_get(ep, st);
}

static int rdv_send(rt_step *step, const char *key, rt_tensor *t, rt_status *st) {
  wrun *r = (wrun *)step;
  rt_worker *w = r->w;
  char task[160];
  key_task(key, 2, task, sizeof task);
  atomic_fetch_add(&step->bytes_sent, (long long)rt_tensor_nbytes(t));
  if (task[0] && strcmp(task, w->srv->task)) {
    int rc = push_remote(w, step->id, key, task, t, false, st);
    /* a task that cannot be reached is the one to name (it died, or the network cut it
     * off), as the master names it when its RunGraph fails so */
    if (rc) rt_status_prefix(st, "%s: ", rc == RT_UNAVAILABLE ? task : w->srv->task);
    return rc;
  }
  pthread_mutex_lock(&w->mu);
  item_put(r->ws, key, rt_tensor_ref(t));
  pthread_mutex_unlock(&w->mu);
  return RT_OK;
}

/* A shared buffer bound for shared memory: the copy into the outbox is the snapshot. */
static int rdv_send_snapshot(rt_step *step, const char *key, const rt_tensor *t, rt_status *st) {
  wrun *r = (wrun *)step;
  char task[160];
  key_task(key, 2, task, sizeof task);
  if (!task[0] || !strcmp(task, r->w->srv->task) || rt_tensor_nbytes(t) < NET_SHM_MIN) return RT_UNAVAILABLE;
  int rc = push_remote(r->w, step->id, key, task, t, true, st);
  if (rc == RT_OK) atomic_fetch_add(&step->bytes_sent, (long long)rt_tensor_nbytes(t));
  else if (rc != RT_UNAVAILABLE) rt_status_prefix(st, "%s: ", r->w->srv->task);
  return rc;
}

/* rt_step.poll: a blocking kernel run on the thread of an in-process call asks whether
 * that call wants out (its other parts failed, Ctrl-C, the session closing). */
static int step_poll(rt_step *s) {
  (void)s;
  return net_wait_outer_here() ? net_wait_outer() : 0;
}

/* Wait until one of keys has arrived (w->mu held): its index, or -1 when the step was
 * aborted (*st says why). */
static int wait_keys(wrun *r, const char *const *keys, int n, rt_tensor **t, rt_status *st) {
  wstep *s = r->ws;
  rt_worker *w = r->w;
  int which = -1;
  bool inline_call = net_wait_outer_here();
  for (;;) {
    if (s->aborted) {
      rt_error(st, s->abort.code, "%s", s->abort.msg);
      break;
    }
    for (int k = 0; k < n && which < 0; k++)
      if ((*t = item_take(s, keys[k]))) which = k;
    if (which >= 0) break;
    for (int k = 0; k < n; k++) item_wait(s, keys[k], r);
    if (!inline_call) {
      pthread_cond_wait(&r->cv, &w->mu);
      continue;
    }
    /* Run on the thread of a blocking in-process call (a master running this part
     * itself): look up every 50 ms whether that call wants out (its other parts failed,
     * Ctrl-C), since nobody else can tell this run. */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 50 * 1000000L;
    if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
    if (pthread_cond_timedwait(&r->cv, &w->mu, &ts) != ETIMEDOUT) continue;
    pthread_mutex_unlock(&w->mu);
    int out = net_wait_outer();
    pthread_mutex_lock(&w->mu);
    if (out) {
      rt_status why;
      rt_error(&why, RT_CANCELLED, "step cancelled while %s waited for a tensor", w->srv->task);
      step_abort(w, s, &why);
    }
  }
  for (int k = 0; k < n; k++)
    if (k != which) item_wait(s, keys[k], NULL);
  if (which >= 0) atomic_fetch_add(&r->step.bytes_recv, (long long)rt_tensor_nbytes(*t));
  return which;
}

static int rdv_recv(rt_step *step, const char *key, bool block, rt_tensor **t, rt_status *st) {
  wrun *r = (wrun *)step;
  rt_worker *w = r->w;
  int rc = RT_OK;
  pthread_mutex_lock(&w->mu);
  if (r->ws->aborted) {
    rc = rt_error(st, r->ws->abort.code, "%s", r->ws->abort.msg);
  } else if (!block) {
    if ((*t = item_take(r->ws, key))) atomic_fetch_add(&step->bytes_recv, (long long)rt_tensor_nbytes(*t));
    else rc = RT_UNAVAILABLE;
  } else if (wait_keys(r, &key, 1, t, st) < 0) {
    rc = st->code;
  }
  pthread_mutex_unlock(&w->mu);
  return rc;
}

static int rdv_recv_any(rt_step *step, const char *const *keys, int n, int *which, rt_tensor **t,
                        rt_status *st) {
  wrun *r = (wrun *)step;
  pthread_mutex_lock(&r->w->mu);
  *which = wait_keys(r, keys, n, t, st);
  pthread_mutex_unlock(&r->w->mu);
  return *which < 0 ? st->code : RT_OK;
}

/* ---- handlers ----------------------------------------------------------------------- */

static uint64_t local_incarnation(void *arg, const char *device) {
  rt_worker *w = arg;
  rt_device *d = device_named(w, device);
  return d ? d->incarnation : 0;
}

/* w->mu held: the fragment, with a reference the caller drops (graph_unref, without w->mu). */
static wgraph *graph_find(rt_worker *w, uint64_t handle) {
  for (wgraph *g = w->graphs; g; g = g->next)
    if (g->handle == handle) {
      g->refs++;
      return g;
    }
  return NULL;
}

static void wgraph_free(wgraph *wg);

static void graph_unref(rt_worker *w, wgraph *wg) {
  pthread_mutex_lock(&w->mu);
  bool last = --wg->refs == 0;
  pthread_mutex_unlock(&w->mu);
  if (last) wgraph_free(wg);
}

static void *run_part(void *arg);

/* A part's thread: runs its part of every step of the fragment, until the fragment goes. */
typedef struct part_arg {
  wgraph *wg;
  int i;
} part_arg;

static void *part_main(void *arg) {
  part_arg pa = *(part_arg *)arg;
  free(arg);
  wgraph *wg = pa.wg;
  pthread_mutex_lock(&wg->go_mu);
  uint64_t seen = 0;   /* gen is 0 when the threads start: a step may come before this runs */
  for (;;) {
    while (!wg->quit && wg->gen == seen) pthread_cond_wait(&wg->go_cv, &wg->go_mu);
    if (wg->quit) break;
    seen = wg->gen;
    wrun *runs = wg->go;
    pthread_mutex_unlock(&wg->go_mu);
    run_part(&runs[pa.i]);
    pthread_mutex_lock(&wg->go_mu);
    wg->n_done++;
    pthread_cond_signal(&wg->done_cv);
  }
  pthread_mutex_unlock(&wg->go_mu);
  return NULL;
}

static int start_part_threads(wgraph *wg, rt_status *st) {
  if (!(wg->threads = xcalloc((size_t)wg->n_parts, sizeof *wg->threads)))
    return rt_error(st, RT_RESOURCE_EXHAUSTED, "out of memory");
  for (int i = 1; i < wg->n_parts; i++) {
    part_arg *pa = xmalloc(sizeof *pa);
    *pa = (part_arg){wg, i};
    if (pthread_create(&wg->threads[i], NULL, part_main, pa)) {
      free(pa);
      pthread_mutex_lock(&wg->go_mu);   /* stop those started */
      wg->quit = true;
      pthread_cond_broadcast(&wg->go_cv);
      pthread_mutex_unlock(&wg->go_mu);
      for (int k = 1; k < i; k++) pthread_join(wg->threads[k], NULL);
      free(wg->threads);
      wg->threads = NULL;
      return rt_error(st, RT_RESOURCE_EXHAUSTED, "cannot start a thread for device %s",
                      wg->parts[i].name);
    }
  }
  return RT_OK;
}

static void handle_register(rt_worker *w, net_req *req) {
  const net_in *in = net_req_msg(req);
  rt_status st = {0};
  wgraph *wg = xcalloc(1, sizeof *wg);
  wg->g = rt_graph_new();
  pthread_mutex_init(&wg->run_mu, NULL);
  pthread_mutex_init(&wg->go_mu, NULL);
  pthread_cond_init(&wg->go_cv, NULL);
  pthread_cond_init(&wg->done_cv, NULL);
  int rc = rt_unpack_nodes(in, net_get(in, "graph") ? net_get(in, "graph") : net_in_header(in),
                           "RegisterGraph.graph", wg->g, &st);
  for (int i = 0; !rc && i < wg->g->n_nodes; i++) {
    const rt_node *n = wg->g->nodes[i];
    if (!n->assigned || !device_named(w, n->assigned))
      rc = rt_error(&st, RT_INVALID_ARGUMENT,
                    "RegisterGraph: node '%s' is placed on %s, which is not a device of %s",
                    n->name, n->assigned ? n->assigned : "no device", w->srv->task);
  }
  rt_partition_opts po = {.by_task = false, .incarnation = local_incarnation, .arg = w};
  if (!rc) rc = rt_partition_graph(wg->g, NULL, &po, &wg->parts, &wg->n_parts, &st);
  if (!rc) {
    wg->execs = xcalloc((size_t)wg->n_parts + 1, sizeof *wg->execs);
    wg->devs = xcalloc((size_t)wg->n_parts + 1, sizeof *wg->devs);
    for (int i = 0; !rc && i < wg->n_parts; i++) {
      wg->devs[i] = device_named(w, wg->parts[i].name);
      rc = rt_exec_new(wg->parts[i].g, wg->devs[i], &wg->execs[i], &st);
    }
    wg->targets = xcalloc((size_t)wg->n_parts + 1, sizeof *wg->targets);
    wg->n_targets = xcalloc((size_t)wg->n_parts + 1, sizeof *wg->n_targets);
    for (int i = 0; !rc && i < wg->n_parts; i++) {
      const rt_graph *pg = wg->parts[i].g;
      bool *consumed = xcalloc((size_t)pg->n_nodes + 1, sizeof *consumed);
      for (int j = 0; j < pg->n_nodes; j++)
        for (int k = 0; k < pg->nodes[j]->n_inputs; k++) consumed[pg->nodes[j]->edges[k].node] = true;
      wg->targets[i] = xcalloc((size_t)pg->n_nodes + 1, sizeof **wg->targets);
      for (int j = 0; j < pg->n_nodes; j++)
        if (!consumed[j]) wg->targets[i][wg->n_targets[i]++] = pg->nodes[j]->name;
      free(consumed);
    }
  }
  if (!rc && wg->n_parts > 1) rc = start_part_threads(wg, &st);
  /* stateful kernels (random generators) continue across the session's signatures */
  uint64_t session = 0;
  if (!rc && net_has(in, "session") && !net_get_uint(in, "session", &session, &st)) {
    wg->w = w;
    pthread_mutex_lock(&w->mu);
    bool isolate = false;
    if (net_has(in, "isolate")) net_get_bool(in, "isolate", &isolate, &st);
    wg->sess = sess_get(w, session, isolate);
    pthread_mutex_unlock(&w->mu);
    for (int i = 0; i < wg->n_parts; i++) {
      rt_exec_share_state(wg->execs[i], wg->sess->states);
      rt_exec_set_scope(wg->execs[i], wg->sess->scope);
    }
  }
  if (rc) {
    wgraph_free(wg);
    net_reply_error(req, rc, "%s", st.msg);
    return;
  }
  pthread_mutex_lock(&w->mu);
  wg->handle = rt_random_u64();
  wg->refs = 1;
  wg->next = w->graphs;
  w->graphs = wg;
  pthread_mutex_unlock(&w->mu);
  net_msg *rep = net_msg_new("RegisterGraphOk");
  net_msg_uint(rep, "handle", wg->handle);
  net_reply(req, rep);
}

static void *run_part(void *arg) {
  wrun *r = arg;
  wgraph *wg = r->wg;
  const rt_graph *pg = wg->parts[r->part].g;
  const rt_run_args *a = r->args;
  /* This part's share of the feeds and fetches. */
  int nf = 0, nx = 0;
  const char **fnames = xcalloc((size_t)a->n_feeds + 1, sizeof *fnames);
  rt_tensor **feeds = xcalloc((size_t)a->n_feeds + 1, sizeof *feeds);
  const char **xnames = xcalloc((size_t)a->n_fetches + 1, sizeof *xnames);
  int *xidx = xcalloc((size_t)a->n_fetches + 1, sizeof *xidx);
  char name[256];
  int idx;
  for (int i = 0; i < a->n_feeds; i++)
    if (rt_tensor_name_parse(a->feed_names[i], name, sizeof name, &idx) &&
        rt_graph_find(pg, name)) {
      fnames[nf] = a->feed_names[i];
      feeds[nf++] = a->feeds[i];
    }
  for (int i = 0; i < a->n_fetches; i++)
    if (rt_tensor_name_parse(a->fetch_names[i], name, sizeof name, &idx) &&
        rt_graph_find(pg, name)) {
      xidx[nx] = i;
      xnames[nx++] = a->fetch_names[i];
    }
  rt_tensor **out = xcalloc((size_t)nx + 1, sizeof *out);
  rt_run_args pa = {nf, fnames, feeds, nx, xnames, out, wg->n_targets[r->part], wg->targets[r->part]};
  r->rc = rt_exec_run(wg->execs[r->part], &r->step, &pa, &r->st);
  for (int i = 0; i < nx; i++) a->fetched[xidx[i]] = out[i];
  free(out);
  free(fnames);
  free(feeds);
  free(xnames);
  free(xidx);
  if (r->rc) {
    pthread_mutex_lock(&r->w->mu);
    if (r->rc != RT_CANCELLED || !r->ws->aborted) step_abort(r->w, r->ws, &r->st);
    pthread_mutex_unlock(&r->w->mu);
  }
  return NULL;
}

static void free_tensors(rt_tensor **t, int n) {
  for (int i = 0; i < n; i++) rt_tensor_unref(t[i]);
  free(t);
}

/* One step of registered graph wg: each of its fragments on its own thread (the first on
 * this one), under the graph's run_mu; the first real error in *st. Per-node traces go into
 * stats, each device's busy time into *busy (views). */
static int run_fragments(rt_worker *w, wgraph *wg, wstep *ws, uint64_t step, const rt_run_args *a,
                         bool trace, bool want_busy, rt_step_stats *stats, rt_busy **busy, int *n_busy,
                         rt_status *st) {
  int rc = RT_OK;
  pthread_mutex_lock(&wg->run_mu);
  wrun *runs = xcalloc((size_t)wg->n_parts + 1, sizeof *runs);
  pthread_mutex_lock(&w->mu);
  for (int i = 0; i < wg->n_parts; i++) {
    wrun *r = &runs[i];
    r->step.id = step;
    r->step.send = rdv_send;
    r->step.send_snapshot = rdv_send_snapshot;
    r->step.recv = rdv_recv;
    r->step.recv_any = rdv_recv_any;
    r->step.poll = step_poll;
    r->step.poll_between = net_wait_outer_here();
    r->w = w;
    r->ws = ws;
    r->wg = wg;
    r->part = i;
    r->args = a;
    pthread_cond_init(&r->cv, NULL);
    r->next = ws->runs;
    ws->runs = r;
    if (ws->aborted) atomic_store(&r->step.cancelled, true);
    if (trace) r->step.trace = rt_dev_stats_new(wg->parts[i].name);   /* views */
    r->step.timed = want_busy;
  }
  pthread_mutex_unlock(&w->mu);
  if (wg->n_parts > 1) {   /* the other parts on their threads */
    pthread_mutex_lock(&wg->go_mu);
    wg->go = runs;
    wg->n_done = 0;
    wg->gen++;
    pthread_cond_broadcast(&wg->go_cv);
    pthread_mutex_unlock(&wg->go_mu);
  }
  if (wg->n_parts) run_part(&runs[0]);
  if (wg->n_parts > 1) {
    pthread_mutex_lock(&wg->go_mu);
    while (wg->n_done < wg->n_parts - 1) pthread_cond_wait(&wg->done_cv, &wg->go_mu);
    pthread_mutex_unlock(&wg->go_mu);
  }
  pthread_mutex_lock(&w->mu);
  ws->runs = NULL;
  /* The first real error; cancellations it caused are not news. */
  for (int i = 0; i < wg->n_parts && !rc; i++)
    if (runs[i].rc && runs[i].rc != RT_CANCELLED) rc = runs[i].rc, *st = runs[i].st;
  for (int i = 0; i < wg->n_parts && !rc; i++)
    if (runs[i].rc) rc = runs[i].rc, *st = ws->aborted ? ws->abort : runs[i].st;
  if (ws->aborted && !rc) rc = ws->abort.code, *st = ws->abort;
  for (int i = 0; i < wg->n_parts; i++)   /* views: traces go into the reply */
    if (runs[i].step.trace) rt_step_stats_append(stats, runs[i].step.trace);
  if (want_busy) {
    rt_busy *b = *busy = xcalloc((size_t)wg->n_parts + 1, sizeof *b);
    for (int i = 0; i < wg->n_parts; i++, ++*n_busy) {
      snprintf(b[i].device, sizeof b[i].device, "%s", wg->parts[i].name);
      b[i].us = runs[i].step.busy_us;
      b[i].ops = atomic_load(&runs[i].step.ops_total);
    }
  }
  step_release(w, ws);
  pthread_mutex_unlock(&w->mu);
  pthread_mutex_unlock(&wg->run_mu);
  for (int i = 0; i < wg->n_parts; i++) pthread_cond_destroy(&runs[i].cv);
  free(runs);
  return rc;
}

static void handle_run(rt_worker *w, net_req *req) {
  const net_in *in = net_req_msg(req);
  rt_status st = {0};
  uint64_t handle = 0, step = 0;
  const msgpack_object_array *feeds_a = NULL, *fetch_a = NULL;
  int rc = net_get_uint(in, "handle", &handle, &st);
  if (!rc) rc = net_get_uint(in, "step", &step, &st);
  if (!rc) rc = net_get_array(in, "feeds", &feeds_a, &st);
  if (!rc) rc = net_get_array(in, "fetches", &fetch_a, &st);
  uint64_t inc = 0;
  if (!rc && net_has(in, "incarnation") && !net_get_uint(in, "incarnation", &inc, &st) && inc &&
      inc != w->srv->incarnation)
    rc = rt_error(&st, RT_ABORTED, "%s restarted (incarnation %016" PRIx64 ", the session knew %016" PRIx64
                  "): the state it held (variables) is gone; create a new session and restore or "
                  "initialize (MonitoredTrainingSession does this)", w->srv->task, w->srv->incarnation, inc);
  if (rc) {
    net_reply_error(req, rc, "%s", st.msg);
    return;
  }
  int nf = (int)feeds_a->size, nx = (int)fetch_a->size;
  char **fnames = xcalloc((size_t)nf + 1, sizeof *fnames);
  rt_tensor **feeds = xcalloc((size_t)nf + 1, sizeof *feeds);
  char **xnames = xcalloc((size_t)nx + 1, sizeof *xnames);
  rt_tensor **fetched = xcalloc((size_t)nx + 1, sizeof *fetched);
  for (int i = 0; !rc && i < nf; i++) {
    const msgpack_object *f = &feeds_a->ptr[i];
    const char *p;
    size_t len;
    char what[64];
    snprintf(what, sizeof what, "RunGraph.feeds[%d]", i);
    if (!(rc = net_obj_str(net_obj_key(f, "name") ? net_obj_key(f, "name") : f, what, &p, &len, &st)))
      fnames[i] = xstrndup(p, len);
    if (!rc)
      rc = rt_unpack_tensor_msg(in, net_obj_key(f, "tensor") ? net_obj_key(f, "tensor") : f,
                                what, &feeds[i], &st);
  }
  for (int i = 0; !rc && i < nx; i++) {
    const char *p;
    size_t len;
    if (!(rc = net_obj_str(&fetch_a->ptr[i], "RunGraph.fetches", &p, &len, &st)))
      xnames[i] = xstrndup(p, len);
  }
  /* views: RunOptions.FULL_TRACE asks for per-node records ("trace": true) */
  bool trace = false;
  if (!rc && net_has(in, "trace")) rc = net_get_bool(in, "trace", &trace, &st);
  /* views: the live view of a loop asks for each device's busy time ("busy": true) */
  bool want_busy = false;
  if (!rc && net_has(in, "busy")) rc = net_get_bool(in, "busy", &want_busy, &st);
  int n_busy = 0;
  rt_busy *busy = NULL;
  int64_t run_t0 = rt_trace_micros();
  rt_step_stats stats = {0};
  pthread_mutex_lock(&w->mu);
  wgraph *wg = rc ? NULL : graph_find(w, handle);
  if (!rc && !wg)
    rc = rt_error(&st, RT_ABORTED, "RunGraph: graph handle %016" PRIx64 " is not registered on %s "
                  "(the task may have restarted)", handle, w->srv->task);
  wstep *ws = rc ? NULL : step_get(w, step);
  if (ws) ws->users++, ws->ran = true;
  pthread_mutex_unlock(&w->mu);

  if (!rc) {
    rt_run_args a = {nf, (const char *const *)fnames, feeds, nx, (const char *const *)xnames,
                     fetched, 0, NULL};
    rc = run_fragments(w, wg, ws, step, &a, trace, want_busy, &stats, &busy, &n_busy, &st);
  }
  if (wg) graph_unref(w, wg);
  /* views: counters for GetProgress (%top) */
  pthread_mutex_lock(&w->mu);
  w->n_runs++;
  w->busy_us += rt_trace_micros() - run_t0;
  if (rc) snprintf(w->last_error, sizeof w->last_error, "%s", st.msg);
  pthread_mutex_unlock(&w->mu);
  if (rc) {
    net_reply_error(req, rc, "%s", st.msg);
  } else {
    net_msg *rep = net_msg_new("RunGraphOk");
    msgpack_packer *pk = net_msg_field(rep, "tensors");
    msgpack_pack_array(pk, (size_t)nx);
    for (int i = 0; i < nx; i++) rt_pack_tensor_msg(rep, pk, fetched[i]);
    if (trace) {   /* views */
      pk = net_msg_field(rep, "step_stats");
      msgpack_pack_array(pk, (size_t)stats.n);
      for (int i = 0; i < stats.n; i++) rt_pack_dev_stats(pk, stats.dev[i]);
    }
    if (want_busy) {   /* views: [{"device", "us", "ops"}] per device */
      pk = net_msg_field(rep, "busy");
      msgpack_pack_array(pk, (size_t)n_busy);
      for (int i = 0; i < n_busy; i++) rt_pack_busy(pk, &busy[i]);
    }
    net_reply(req, rep);
  }
  free(busy);
  rt_step_stats_clear(&stats);
  for (int i = 0; i < nf; i++) free(fnames[i]);
  for (int i = 0; i < nx; i++) free(xnames[i]);
  free(fnames);
  free(xnames);
  free_tensors(feeds, nf);
  free_tensors(fetched, nx);
}

/* PushTensor, on the server's I/O thread (it never blocks): the tensor goes into its
 * step's table, which it creates when the step's RunGraph has not come yet. A push that
 * cannot be read aborts its step here, so the step fails instead of waiting. */
static void handle_push(rt_worker *w, net_req *req) {
  const net_in *in = net_req_msg(req);
  rt_status st = {0};
  uint64_t step = 0;
  const char *key = "";
  size_t len = 0;
  rt_tensor *t = NULL;
  int rc = net_get_uint(in, "step", &step, &st);
  if (!rc) rc = net_get_str(in, "key", &key, &len, &st);
  if (!rc && len >= 1024) rc = rt_error(&st, RT_INVALID_ARGUMENT, "PushTensor: key of %zu bytes", len);
  bool dead = false;
  if (!rc && net_has(in, "dead")) rc = net_get_bool(in, "dead", &dead, &st);
  const msgpack_object *tv = rc || dead ? NULL : net_get(in, "tensor");
  if (dead) t = rt_tensor_ref(RT_DEAD);
  else if (!rc && !tv) rc = rt_error(&st, RT_INVALID_ARGUMENT, "PushTensor: missing field \"tensor\"");
  char k[1024];
  snprintf(k, sizeof k, "%.*s", (int)len, key);
  if (!rc && dead) {
    /* t is RT_DEAD */
  } else if (!rc && rt_tensor_msg_is_shm(tv)) {   /* its bytes wait in the sender's outbox */
    net_peer *from = sender_peer(w, k, &st);
    static _Atomic int delay_ms = -1;   /* tests: TFSH_TEST_SHM_DELAY_MS, the sender dies first */
    if (delay_ms < 0) delay_ms = getenv("TFSH_TEST_SHM_DELAY_MS") ? atoi(getenv("TFSH_TEST_SHM_DELAY_MS")) : 0;
    if (delay_ms > 0) nanosleep(&(struct timespec){delay_ms / 1000, delay_ms % 1000 * 1000000L}, NULL);
    rc = from ? rt_unpack_tensor_shm(tv, "PushTensor.tensor", shm_release, from, &t, &st) : st.code;
    if (rc == RT_UNAVAILABLE) {   /* the sender died after the push: it is the one to name */
      char task[160];
      key_task(k, 0, task, sizeof task);
      rt_status_prefix(&st, "%s: ", task);
    }
  } else if (!rc) {
    rc = rt_unpack_tensor_msg(in, tv, "PushTensor.tensor", &t, &st);
  }
  if (step) {
    pthread_mutex_lock(&w->mu);
    wstep *s = step_get(w, step);
    s->users++;
    if (rc) step_abort(w, s, &st);
    else if (!s->aborted) item_put(s, k, t), t = NULL;
    step_release(w, s);
    pthread_mutex_unlock(&w->mu);
  }
  rt_tensor_unref(t);
  if (rc) net_reply_error(req, rc, "%s: %s", w->srv->task, st.msg);
  else net_req_done(req);
}

/* ShmRelease {off}, on the I/O thread: a block of this process's outbox is free again. */
static void handle_shm_release(rt_worker *w, net_req *req) {
  (void)w;
  uint64_t off;
  rt_status st;
  if (!net_get_uint(net_req_msg(req), "off", &off, &st)) net_shm_release(off);
  net_req_done(req);
}

static void handle_abort(rt_worker *w, net_req *req) {
  const net_in *in = net_req_msg(req);
  rt_status st = {0}, why = {0};
  uint64_t step;
  int64_t code = RT_ABORTED;
  const char *msg = "step aborted";
  size_t len = strlen(msg);
  int rc = net_get_uint(in, "step", &step, &st);
  if (!rc && net_has(in, "code")) rc = net_get_int(in, "code", &code, &st);
  if (!rc && net_has(in, "msg")) rc = net_get_str(in, "msg", &msg, &len, &st);
  if (rc) {
    net_reply_error(req, rc, "%s", st.msg);
    return;
  }
  rt_error(&why, code > 0 && code < RT_CODE_COUNT ? (int)code : RT_ABORTED, "%.*s", (int)len, msg);
  pthread_mutex_lock(&w->mu);
  wstep *s = step_get(w, step);
  s->users++;
  step_abort(w, s, &why);
  step_release(w, s);
  pthread_mutex_unlock(&w->mu);
  net_reply(req, net_msg_new("AbortStepOk"));
}

static void handle_deregister(rt_worker *w, net_req *req) {
  const net_in *in = net_req_msg(req);
  rt_status st = {0};
  uint64_t handle;
  if (net_get_uint(in, "handle", &handle, &st)) {
    net_reply_error(req, st.code, "%s", st.msg);
    return;
  }
  wgraph *found = NULL;
  pthread_mutex_lock(&w->mu);
  for (wgraph **p = &w->graphs; *p; p = &(*p)->next)
    if ((*p)->handle == handle) {
      found = *p;
      *p = found->next;
      break;
    }
  pthread_mutex_unlock(&w->mu);
  if (found) graph_unref(w, found);   /* a step still running on it frees it when it ends */
  net_reply(req, net_msg_new("DeregisterGraphOk"));
}

static void handle_status(rt_worker *w, net_req *req) {
  net_msg *rep = net_msg_new("GetStatusOk");
  net_msg_str(rep, "task", w->srv->task);
  net_msg_uint(rep, "incarnation", w->srv->incarnation);
  rt_pack_devices(net_msg_field(rep, "devices"), w->devices, w->n_devices);
  if (w->gpu_note[0]) net_msg_str(rep, "gpu_note", w->gpu_note);
  const char *cpu = rt_cpu_summary();
  if (cpu) net_msg_str(rep, "cpu_note", cpu);
  rt_pack_cluster(net_msg_field(rep, "cluster"), w->srv->cluster);
  net_reply(req, rep);
}

/* views: the device memory of each GPU in use, one string for %top:
 * "GPU:0 1.2 GiB in use, peak 3.4 GiB of 130.0 GiB; GPU:1 ..." (absent without one). */
static void gpu_memory(rt_worker *w, net_msg *rep) {
  char buf[512];
  size_t off = 0;
  buf[0] = '\0';
  for (int i = 0; i < w->n_devices; i++) {
    rt_gpu_mem m;
    const rt_device *d = w->devices[i];
    if (d->type != RT_DEV_GPU || d->fake_gpu || !rt_gpu_memory_of(d->gpu_ordinal, &m) || off >= sizeof buf) continue;
    const char *name = strstr(d->name, "/device:") ? strstr(d->name, "/device:") + 8 : d->name;
    off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%s %.1f GiB in use, peak %.1f GiB of %.1f GiB",
                            off ? "; " : "", name, (double)m.in_use / (1 << 30), (double)m.peak / (1 << 30),
                            (double)m.limit / (1 << 30));
  }
  if (buf[0]) net_msg_str(rep, "gpu_memory", buf);
}

/* views: GetProgress {step?} -> the parts of that step (or of every step) running
 * here now, read from the executors' atomic counters, plus the worker's totals for %top. */
static void handle_progress(rt_worker *w, net_req *req) {
  const net_in *in = net_req_msg(req);
  rt_status st = {0};
  uint64_t want = 0;
  if (net_has(in, "step") && net_get_uint(in, "step", &want, &st)) {
    net_reply_error(req, st.code, "%s", st.msg);
    return;
  }
  net_msg *rep = net_msg_new("GetProgressOk");
  net_msg_str(rep, "task", w->srv->task);
  net_msg_uint(rep, "incarnation", w->srv->incarnation);
  long pages = 0, rss = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (f) {
    if (fscanf(f, "%ld %ld", &pages, &rss) != 2) rss = 0;
    fclose(f);
  }
  net_msg_int(rep, "rss_bytes", (int64_t)rss * 4096);
  gpu_memory(w, rep);
  pthread_mutex_lock(&w->mu);
  net_msg_uint(rep, "runs", w->n_runs);
  net_msg_int(rep, "busy_us", w->busy_us);
  net_msg_str(rep, "last_error", w->last_error);
  int n = 0;
  for (wstep *s = w->steps; s; s = s->next)
    if (!want || s->id == want)
      for (wrun *r = s->runs; r; r = r->next) n++;
  msgpack_packer *pk = net_msg_field(rep, "devices");
  msgpack_pack_array(pk, (size_t)n);
  for (wstep *s = w->steps; s; s = s->next)
    if (!want || s->id == want)
      for (wrun *r = s->runs; r; r = r->next) {
        const char *op = atomic_load(&r->step.current_op);
        msgpack_pack_map(pk, 7);
        rt_pack_kstr(pk, "device", r->wg->parts[r->part].name);
        rt_pack_kint(pk, "step", (int64_t)s->id);
        rt_pack_kint(pk, "done", atomic_load(&r->step.ops_done));
        rt_pack_kint(pk, "total", atomic_load(&r->step.ops_total));
        rt_pack_kstr(pk, "op", op ? op : "");
        rt_pack_kint(pk, "sent", atomic_load(&r->step.bytes_sent));
        rt_pack_kint(pk, "recv", atomic_load(&r->step.bytes_recv));
      }
  pthread_mutex_unlock(&w->mu);
  net_reply(req, rep);
}

/* ResetWorker {containers: [str] | nil}: drop those resource containers on every device. */
static void handle_reset(rt_worker *w, net_req *req) {
  const msgpack_object *c = net_get(net_req_msg(req), "containers");
  for (int d = 0; d < w->n_devices; d++) {
    if (!c || c->type != MSGPACK_OBJECT_ARRAY) {
      rt_device_clear_resources(w->devices[d], NULL);
      continue;
    }
    for (uint32_t i = 0; i < c->via.array.size; i++) {
      const msgpack_object *o = &c->via.array.ptr[i];
      if (o->type != MSGPACK_OBJECT_STR) continue;
      char name[256];
      snprintf(name, sizeof name, "%.*s", (int)(o->via.str.size < 255 ? o->via.str.size : 255), o->via.str.ptr);
      rt_device_clear_resources(w->devices[d], name);
    }
  }
  net_reply(req, net_msg_new("ResetWorkerOk"));
}

/* Looked up in this order (runtime/server.c): the frequent ones first. */
const rt_message rt_worker_messages[] = {
  {"RunGraph", .worker = handle_run, .summary = "run a registered fragment for one step"},
  {"PushTensor", .worker = handle_push, .io_thread = true,
   .summary = "a tensor for a step's rendezvous, sent as soon as it exists; no reply"},
  {"ShmRelease", .worker = handle_shm_release, .io_thread = true,
   .summary = "a block of the receiver's shared-memory outbox is free again; no reply"},
  {"RegisterGraph", .worker = handle_register, .summary = "a placed fragment of a session's graph, kept for its steps"},
  {"AbortStep", .worker = handle_abort, .summary = "fail a step here, and its waiting receives"},
  {"DeregisterGraph", .worker = handle_deregister, .summary = "drop a registered fragment"},
  {"GetStatus", .worker = handle_status, .summary = "this task: its name, incarnation, devices and cluster spec"},
  {"ResetWorker", .worker = handle_reset, .summary = "drop resource containers on this task's devices"},
  {"GetProgress", .worker = handle_progress, .summary = "views: the steps running here and this task's totals"},
  {0},
};
