/* tf.train.ClusterSpec and tf.train.Server: cluster specs checked when they are made
 * (duplicate addresses; any address string is taken, as TF's ClusterSpec does), servers
 * that check the addresses when they start and name the task and the fix when they cannot
 * (TF's error classes and words first: InvalidArgumentError for an address without a
 * port, UnknownError "Could not start gRPC server" for a port already taken), and that
 * keep serving until the process ends once started, as TF's do, even when the script drops
 * its Server object. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "runtime/cluster.h"
#include "runtime/gpu/gpu.h"
#include "runtime/server.h"
#include "shell/tf/tf.h"


typedef struct tf_cluster {
  sh_obj head;
  sh_obj *jobs;       /* dict: job -> dict {index: address} (insertion ordered) */
  sh_obj *sparse;     /* set of jobs given as {index: address} */
} tf_cluster;

sh_type tf_cluster_type;

static void cluster_destroy(sh_obj *self) {
  sh_decref(((tf_cluster *)self)->jobs);
  sh_decref(((tf_cluster *)self)->sparse);
}

static int add_job(tf_cluster *c, sh_obj *job, sh_obj *tasks) {
  const char *j = sh_as_cstr(job);
  if (!j) return -1;
  if (!rt_cluster_valid_job(j)) {
    sh_raise(sh_ValueError, "ClusterSpec: '%s' is not a valid job name (letters, digits and _)", j);
    return -1;
  }
  sh_obj *m = sh_dict_new();
  if (Py_TYPE(tasks) == (PyTypeObject *)&sh_dict_type) {
    sh_set_add(c->sparse, job);
    sh_obj *k, *v;
    for (int64_t pos = 0; sh_dict_next(tasks, &pos, &k, &v);) {
      if (!sh_is_int(k) || sh_int_value(k) < 0) {
        sh_decref(m);
        sh_raise(sh_TypeError, "ClusterSpec: task indices of job '%s' must be non-negative integers", j);
        return -1;
      }
      sh_dict_set(m, k, v);
    }
  } else {
    sh_obj *l = sh_is_str(tasks) ? NULL : sh_sequence_to_list(tasks);
    if (!l) {
      sh_decref(m);
      if (!sh_err_occurred())
        sh_raise(sh_TypeError, "ClusterSpec: job '%s' must map to a list of addresses or a dict {index: address}", j);
      return -1;
    }
    for (int64_t i = 0; i < SH_LIST_N(l); i++) {
      sh_obj *k = sh_int(i);
      sh_dict_set(m, k, SH_LIST_ITEMS(l)[i]);
      sh_decref(k);
    }
    sh_decref(l);
  }
  sh_obj *k, *v;
  for (int64_t pos = 0; sh_dict_next(m, &pos, &k, &v);) {
    if (!sh_is_str(v)) {   /* any string: TF checks addresses only when a Server starts */
      sh_obj *r = sh_repr(v);
      sh_raise(sh_TypeError, "ClusterSpec: /job:%s/task:%lld has address %s; expected a string \"host:port\"", j,
               (long long)sh_int_value(k), r ? sh_str_cstr(r) : "?");
      sh_decref(r);
      sh_decref(m);
      return -1;
    }
  }
  sh_dict_set(c->jobs, job, m);
  sh_decref(m);
  for (int64_t pos = 0; sh_dict_next(m, &pos, &k, &v);)
    tf_device_note_task(j, (int)sh_int_value(k));   /* for Tab completion of device strings */
  return 0;
}

/* Two tasks with one address: named both, with the address. */
static int check_duplicates(tf_cluster *c) {
  sh_obj *seen = sh_dict_new();   /* address -> "/job:x/task:i" */
  sh_obj *job, *tasks;
  int rc = 0;
  for (int64_t p = 0; !rc && sh_dict_next(c->jobs, &p, &job, &tasks);) {
    sh_obj *k, *v;
    for (int64_t q = 0; !rc && sh_dict_next(tasks, &q, &k, &v);) {
      char me[200];
      snprintf(me, sizeof me, "/job:%s/task:%lld", sh_str_cstr(job), (long long)sh_int_value(k));
      sh_obj *other = sh_dict_get(seen, v);
      if (other) {
        sh_raise(sh_ValueError, "ClusterSpec: %s and %s both have address %s; give each task its own host:port",
                 sh_str_cstr(other), me, sh_str_cstr(v));
        rc = -1;
      } else {
        sh_obj *s = sh_str(me);
        sh_dict_set(seen, v, s);
        sh_decref(s);
      }
    }
  }
  sh_decref(seen);
  return rc;
}

static sh_obj *cluster_from(sh_obj *spec) {
  if (Py_TYPE(spec) == (PyTypeObject *)&tf_cluster_type) return sh_incref(spec);
  tf_cluster *c = sh_new(&tf_cluster_type);
  c->jobs = sh_dict_new();
  c->sparse = sh_set_new();
  if (spec == SH_NONE) return (sh_obj *)c;
  if (Py_TYPE(spec) != (PyTypeObject *)&sh_dict_type) {
    sh_decref((sh_obj *)c);
    return sh_raise(sh_TypeError, "ClusterSpec needs a dict {job: [addresses]} or a ClusterSpec, not %s",
                    sh_type_name(spec));
  }
  sh_obj *k, *v;
  for (int64_t pos = 0; sh_dict_next(spec, &pos, &k, &v);)
    if (add_job(c, k, v) < 0) {
      sh_decref((sh_obj *)c);
      return NULL;
    }
  if (check_duplicates(c) < 0) {
    sh_decref((sh_obj *)c);
    return NULL;
  }
  return (sh_obj *)c;
}

static sh_obj *cluster_construct(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *spec;
  if (sh_parse_args("ClusterSpec", argc, argv, kw, "cluster", &spec) < 0) return NULL;
  if (Py_TYPE(spec) == (PyTypeObject *)&tf_cluster_type) {   /* a copy */
    sh_obj *d = sh_call_method(spec, "as_dict", 0, NULL, NULL);
    sh_obj *r = d ? cluster_from(d) : NULL;
    sh_decref(d);
    return r;
  }
  return cluster_from(spec);
}

static sh_obj *job_tasks_dict(tf_cluster *c, sh_obj *job) {
  sh_obj *t = sh_dict_get(c->jobs, job);
  if (!t) {
    sh_obj *r = sh_repr(job);
    sh_raise(sh_ValueError, "No such job in cluster: %s", r ? sh_str_cstr(r) : "?");
    sh_decref(r);
  }
  return t;
}

static sh_obj *m_as_dict(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  tf_cluster *c = (tf_cluster *)self;
  sh_obj *d = sh_dict_new(), *job, *tasks;
  for (int64_t p = 0; sh_dict_next(c->jobs, &p, &job, &tasks);) {
    if (sh_set_contains(c->sparse, job) > 0) {
      sh_dict_set(d, job, tasks);
      continue;
    }
    sh_obj *l = sh_list_new(0), *k, *v;
    for (int64_t q = 0; sh_dict_next(tasks, &q, &k, &v);) sh_list_append(l, v);
    sh_dict_set(d, job, l);
    sh_decref(l);
  }
  return d;
}

static sh_obj *m_num_tasks(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *job;
  if (sh_parse_args("num_tasks", argc, argv, kw, "job_name", &job) < 0) return NULL;
  sh_obj *t = job_tasks_dict((tf_cluster *)self, job);
  return t ? sh_int(sh_dict_len(t)) : NULL;
}

static sh_obj *m_task_indices(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *job;
  if (sh_parse_args("task_indices", argc, argv, kw, "job_name", &job) < 0) return NULL;
  sh_obj *t = job_tasks_dict((tf_cluster *)self, job);
  if (!t) return NULL;
  sh_obj *l = sh_list_new(0), *k, *v;
  for (int64_t q = 0; sh_dict_next(t, &q, &k, &v);) sh_list_append(l, k);
  sh_obj *r = sh_call_method(l, "sort", 0, NULL, NULL);
  sh_decref(r);
  return l;
}

static sh_obj *m_task_address(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *job, *idx;
  if (sh_parse_args("task_address", argc, argv, kw, "job_name task_index", &job, &idx) < 0) return NULL;
  sh_obj *t = job_tasks_dict((tf_cluster *)self, job);
  if (!t) return NULL;
  sh_obj *a = sh_dict_get(t, idx);
  if (!a) {
    sh_obj *r = sh_repr(idx);
    sh_raise(sh_ValueError, "No task with index %s in job %s", r ? sh_str_cstr(r) : "?", sh_str_cstr(job));
    sh_decref(r);
    return NULL;
  }
  return sh_incref(a);
}

static sh_obj *m_job_tasks(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *job;
  if (sh_parse_args("job_tasks", argc, argv, kw, "job_name", &job) < 0) return NULL;
  sh_obj *t = job_tasks_dict((tf_cluster *)self, job);
  if (!t) return NULL;
  int64_t max = -1;
  sh_obj *k, *v;
  for (int64_t q = 0; sh_dict_next(t, &q, &k, &v);)
    if (sh_int_value(k) > max) max = sh_int_value(k);
  sh_obj *l = sh_list_new(0);
  for (int64_t i = 0; i <= max; i++) {
    sh_obj *key = sh_int(i);
    sh_obj *a = sh_dict_get(t, key);
    sh_decref(key);
    sh_list_append(l, a ? a : SH_NONE);
  }
  return l;
}

static const sh_method cluster_methods[] = {
  {"as_dict", m_as_dict, "as_dict()", "{job: [addresses]} (or {job: {index: address}} for sparse jobs)."},
  {"num_tasks", m_num_tasks, "num_tasks(job_name)", "Number of tasks in a job."},
  {"task_indices", m_task_indices, "task_indices(job_name)", "Sorted task indices of a job."},
  {"task_address", m_task_address, "task_address(job_name, task_index)", "The address of one task."},
  {"job_tasks", m_job_tasks, "job_tasks(job_name)", "Addresses of a job's tasks, None for gaps."},
  {NULL},
};

static sh_obj *cluster_getattr(sh_obj *self, const char *name) {
  if (!strcmp(name, "jobs")) {
    sh_obj *l = sh_list_new(0), *k, *v;
    for (int64_t p = 0; sh_dict_next(((tf_cluster *)self)->jobs, &p, &k, &v);) sh_list_append(l, k);
    return l;
  }
  return NULL;
}

static sh_obj *cluster_repr(sh_obj *self) {
  sh_obj *d = m_as_dict(self, 0, NULL, NULL);
  sh_obj *r = d ? sh_repr(d) : NULL;
  sh_obj *out = r ? sh_strf("ClusterSpec(%s)", sh_str_cstr(r)) : NULL;
  sh_decref(d);
  sh_decref(r);
  return out;
}

static int cluster_truth(sh_obj *self) { return sh_dict_len(((tf_cluster *)self)->jobs) > 0; }

static sh_obj *cluster_compare(int op, sh_obj *a, sh_obj *b) {
  if ((op != SH_EQ && op != SH_NE) || Py_TYPE(a) != Py_TYPE(b)) return SH_NOTIMPL;
  sh_obj *da = m_as_dict(a, 0, NULL, NULL), *db = m_as_dict(b, 0, NULL, NULL);
  int eq = sh_eq(da, db);
  sh_decref(da);
  sh_decref(db);
  if (eq < 0) return NULL;
  return sh_bool(op == SH_EQ ? eq : !eq);
}

sh_type tf_cluster_type = {
  SH_TYPE_HEAD, .name = "ClusterSpec", .size = sizeof(tf_cluster),
  .help = "ClusterSpec({job: [\"host:port\", ...]}): the tasks of a cluster.", .methods = cluster_methods,
  .destroy = cluster_destroy, .construct = cluster_construct, .getattr = cluster_getattr,
  .repr = cluster_repr, .truth = cluster_truth, .compare = cluster_compare,
};

int tf_cluster_num_tasks(sh_obj *cluster, const char *job) {
  sh_obj *c = cluster_from(cluster);
  if (!c) return -1;
  sh_obj *j = sh_str(job);
  sh_obj *t = sh_dict_get(((tf_cluster *)c)->jobs, j);
  int n = t ? (int)sh_dict_len(t) : 0;
  sh_decref(j);
  sh_decref(c);
  return n;
}

/* ---- Server ------------------------------------------------------------------------ */

sh_type tf_server_type;

typedef struct tf_server {
  sh_obj head;
  rt_server *s;
  sh_obj *cluster;
  char job[64];
  int index;
  char target[300];
} tf_server;

/* Started servers whose Server objects are gone: they serve until the process ends, as
 * TF's do (a client of a task whose script dropped its Server would otherwise wait for its
 * master for ever). Kept here, so they stay reachable. */
static rt_server **orphans;
static int n_orphans;

static void server_destroy(sh_obj *self) {
  tf_server *s = (tf_server *)self;
  if (s->s && !rt_server_wait(s->s, 0)) {   /* serving: keep it (stop() frees it) */
    orphans = xrealloc(orphans, (size_t)(n_orphans + 1) * sizeof *orphans);
    orphans[n_orphans++] = s->s;
    s->s = NULL;
  }
  rt_server_free(s->s);
  sh_decref(s->cluster);
}

/* TF's check of the addresses when a server starts: its own address needs a port, every
 * other one must be host:port. TF's words first, then which task and what to write. */
static int check_addresses(tf_cluster *c, const char *job, int index) {
  sh_obj *jn, *tasks, *k, *v;
  for (int pass = 0; pass < 2; pass++)   /* this task's own address first, as TF */
    for (int64_t p = 0; sh_dict_next(c->jobs, &p, &jn, &tasks);)
      for (int64_t q = 0; sh_dict_next(tasks, &q, &k, &v);) {
        const char *a = sh_str_cstr(v);
        bool mine = !strcmp(sh_str_cstr(jn), job) && sh_int_value(k) == index;
        if (mine != !pass || rt_cluster_valid_address(a)) continue;
        rt_status st = {0};
        if (mine)
          rt_error(&st, RT_INVALID_ARGUMENT, "Could not parse port for local server from \"%s\". (tfsh: this "
                   "task, /job:%s/task:%d, has address '%s' in the cluster spec; expected \"host:port\")",
                   a, job, index, a);
        else
          rt_error(&st, RT_INVALID_ARGUMENT, "Could not interpret \"%s\" as a host-port pair. (tfsh: /job:%s/"
                   "task:%lld has address '%s' in the cluster spec; expected \"host:port\")", a, sh_str_cstr(jn),
                   (long long)sh_int_value(k), a);
        tf_raise_status(&st);
        return -1;
      }
  return 0;
}

/* The runtime's view of a ClusterSpec. */
static rt_cluster *to_rt(tf_cluster *c) {
  rt_cluster *r = rt_cluster_new();
  sh_obj *job, *tasks, *k, *v;
  for (int64_t p = 0; sh_dict_next(c->jobs, &p, &job, &tasks);)
    for (int64_t q = 0; sh_dict_next(tasks, &q, &k, &v);)
      rt_cluster_add(r, sh_str_cstr(job), (int)sh_int_value(k), sh_str_cstr(v));
  return r;
}

static void jobs_list(tf_cluster *c, char *buf, size_t n) {
  size_t off = 0;
  sh_obj *job, *tasks;
  buf[0] = '\0';
  for (int64_t p = 0; sh_dict_next(c->jobs, &p, &job, &tasks) && off < n;)
    off += (size_t)snprintf(buf + off, n - off, "%s%s", off ? ", " : "", sh_str_cstr(job));
}

static int server_start(tf_server *s, sh_obj *config) {
  if (check_addresses((tf_cluster *)s->cluster, s->job, s->index) < 0) return -1;
  rt_cluster *rc = to_rt((tf_cluster *)s->cluster);
  rt_server_opts o = {.n_cpus = 1};
  sh_obj *dc = config && config != SH_NONE ? sh_getattr_opt(config, "device_count") : NULL;
  if (dc && Py_TYPE(dc) == (PyTypeObject *)&sh_dict_type) {
    sh_obj *n = sh_dict_get_str(dc, "CPU");
    if (n && sh_is_int(n)) o.n_cpus = (int)sh_int_value(n);
    sh_obj *g = sh_dict_get_str(dc, "GPU");
    if (g && sh_is_int(g)) o.max_gpus = sh_int_value(g) > 0 ? (int)sh_int_value(g) : -1;
  }
  sh_decref(dc);
  /* gpu_options: the process's GPU allocator (first to ask wins, as in TF1) */
  sh_obj *go = config && config != SH_NONE ? sh_getattr_opt(config, "gpu_options") : NULL;
  if (go && go != SH_NONE) {
    sh_obj *grow = sh_getattr_opt(go, "allow_growth"), *frac = sh_getattr_opt(go, "per_process_gpu_memory_fraction");
    double f = 0;
    if (frac && sh_as_double(frac, &f) < 0) sh_err_clear();
    rt_gpu_set_memory_options(f, grow && sh_truth(grow) > 0);
    sh_decref(grow);
    sh_decref(frac);
  }
  sh_decref(go);
  static const char *const pools[] = {"intra_op_parallelism_threads", "inter_op_parallelism_threads"};
  for (int i = 0; i < 2 && config && config != SH_NONE; i++) {
    sh_obj *v = sh_getattr_opt(config, pools[i]);
    int64_t n = 0;
    if (v && sh_is_int(v)) n = sh_int_value(v);
    if (n > 0 && n < 4096) *(i ? &o.inter_op_threads : &o.intra_op_threads) = (int)n;
    sh_decref(v);
  }
  rt_status st = {0};
  s->s = rt_server_start(rc, s->job, s->index, &o, &st);
  rt_cluster_free(rc);
  if (!s->s) {
    if (strstr(st.msg, "cannot listen on")) {   /* TF: UnknownError, in gRPC's words */
      char msg[RT_MSG_MAX];
      snprintf(msg, sizeof msg, "Could not start gRPC server: %s", st.msg);
      rt_error(&st, RT_UNKNOWN, "%s", msg);
    }
    tf_raise_status(&st);
    return -1;
  }
  /* a port chosen by the system (create_local_server) is known only now */
  const char *ep = rt_server_endpoint(s->s);
  const char *port = strrchr(ep, ':'), *mine = strrchr(s->target, ':');
  if (port && mine && mine > s->target + 6 && !strcmp(mine, ":0")) {
    /* keep the spec's host name, as TF does (grpc://localhost:PORT) */
    char host[300];
    snprintf(host, sizeof host, "%.*s", (int)(mine - s->target), s->target);
    snprintf(s->target, sizeof s->target, "%s%s", host, port);
  }
  return 0;
}

static sh_obj *server_new(sh_obj *spec, sh_obj *job, sh_obj *index, sh_obj *config, bool start) {
  sh_obj *c = cluster_from(spec);
  if (!c) return NULL;
  tf_cluster *cl = (tf_cluster *)c;
  char jobs[512];
  jobs_list(cl, jobs, sizeof jobs);
  const char *j = NULL;
  if (!job || job == SH_NONE) {
    if (sh_dict_len(cl->jobs) != 1) {
      sh_decref(c);
      return sh_raise(sh_ValueError, "Server: job_name must be given when the cluster has several jobs (%s)", jobs);
    }
    sh_obj *k, *v;
    int64_t p = 0;
    sh_dict_next(cl->jobs, &p, &k, &v);
    j = sh_str_cstr(k);
  } else if (!(j = sh_as_cstr(job))) {
    sh_decref(c);
    return NULL;
  }
  sh_obj *jk = sh_str(j);
  sh_obj *tasks = sh_dict_get(cl->jobs, jk);
  sh_decref(jk);
  if (!tasks) {
    sh_decref(c);
    return sh_raise(sh_ValueError, "Job '%s' is not in the cluster spec; its jobs are: %s (check --job_name)", j, jobs);
  }
  int64_t idx = 0;
  if (index && index != SH_NONE && sh_as_int(index, &idx) < 0) {
    sh_decref(c);
    return NULL;
  }
  sh_obj *ik = sh_int(idx);
  sh_obj *addr = sh_dict_get(tasks, ik);
  sh_decref(ik);
  if (!addr) {
    int64_t n = sh_dict_len(tasks);
    sh_decref(c);
    return sh_raise(sh_ValueError, "Task index %lld is out of range for job '%s', which has %lld task%s (0..%lld) "
                    "(check --task_index)", (long long)idx, j, (long long)n, n == 1 ? "" : "s", (long long)n - 1);
  }
  tf_server *s = sh_new(&tf_server_type);
  s->cluster = c;
  snprintf(s->job, sizeof s->job, "%s", j);
  s->index = (int)idx;
  const char *a = sh_str_cstr(addr);
  snprintf(s->target, sizeof s->target, "%s%s", strstr(a, "://") ? "" : "grpc://", a);
  if (start && server_start(s, config) < 0) {
    sh_decref((sh_obj *)s);
    return NULL;
  }
  return (sh_obj *)s;
}

static sh_obj *server_construct(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *spec, *job = NULL, *index = NULL, *protocol = NULL, *config = NULL, *start = NULL;
  if (sh_parse_args("Server", argc, argv, kw, "server_or_cluster_def |job_name task_index protocol config start",
                    &spec, &job, &index, &protocol, &config, &start) < 0)
    return NULL;
  return server_new(spec, job, index, config, !start || sh_truth(start) > 0);
}

static sh_obj *m_start(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  tf_server *s = (tf_server *)self;
  if (!s->s && server_start(s, NULL) < 0) return NULL;
  return sh_none();
}

/* join(): until the server is stopped; Ctrl-C interrupts it. */
static sh_obj *m_join(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  tf_server *s = (tf_server *)self;
  if (!s->s) return sh_raise(sh_RuntimeError, "Server.join(): the server was not started");
  while (!rt_server_wait(s->s, 100))
    if (sh_check_interrupt() < 0) return NULL;
  return sh_none();
}

static sh_obj *m_stop(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  tf_server *s = (tf_server *)self;
  if (s->s) rt_server_stop(s->s);
  return sh_none();
}

static const sh_method server_methods[] = {
  {"start", m_start, "start()", "Start serving (done by the constructor unless start=False)."},
  {"join", m_join, "join()", "Block until the server stops (Ctrl-C returns to the prompt)."},
  {"stop", m_stop, "stop()", "Stop serving; join() returns."},
  {NULL},
};

static sh_obj *server_getattr(sh_obj *self, const char *name) {
  tf_server *s = (tf_server *)self;
  if (!strcmp(name, "target")) return sh_str(s->target);
  if (!strcmp(name, "server_def")) return sh_incref(s->cluster);
  if (!strcmp(name, "job_name")) return sh_str(s->job);
  if (!strcmp(name, "task_index")) return sh_int(s->index);
  return NULL;
}

static sh_obj *server_repr(sh_obj *self) {
  tf_server *s = (tf_server *)self;
  return sh_strf("<tf.train.Server /job:%s/task:%d at %s>", s->job, s->index, s->target);
}

sh_type tf_server_type = {
  SH_TYPE_HEAD, .name = "Server", .size = sizeof(tf_server),
  .help = "Server(cluster, job_name, task_index): this process's task of the cluster.",
  .methods = server_methods, .destroy = server_destroy, .construct = server_construct,
  .getattr = server_getattr, .repr = server_repr,
};

static sh_obj *f_create_local_server(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *config = NULL, *start = NULL;
  if (sh_parse_args("create_local_server", argc, argv, kw, "|config start", &config, &start) < 0) return NULL;
  sh_obj *spec = sh_dict_new(), *l = sh_list_new(0), *addr = sh_str("localhost:0"), *job = sh_str("local");
  sh_list_append(l, addr);
  sh_dict_set(spec, job, l);
  sh_obj *r = server_new(spec, job, NULL, config, !start || sh_truth(start) > 0);
  sh_decref(spec);
  sh_decref(l);
  sh_decref(addr);
  sh_decref(job);
  return r;
}

/* _gpu_devices(): [(name, (major, minor)), ...] of the GPUs this process's servers get
 * (for tf.test.is_gpu_available and gpu_device_name; shell/tf/testing.py.inc). */
static sh_obj *f_gpu_devices(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  const rt_gpu_info *g = NULL;
  const char *note = NULL;
  int n = rt_gpu_devices(&g, &note);
  sh_obj *l = sh_list_new(0);
  for (int i = 0; i < n; i++) {
    sh_obj *t = Py_BuildValue("(s(ii))", g[i].name, g[i].major, g[i].minor);
    if (!t) return sh_decref(l), NULL;
    sh_list_append(l, t);
    sh_decref(t);
  }
  return l;
}

static sh_obj *f_built_with_cuda(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
#if TFSH_HAVE_CUDA
  return sh_incref(Py_True);
#else
  return sh_incref(Py_False);
#endif
}

void tf_cluster_add(sh_obj *train) {
  sh_module_add(train, "_gpu_devices", sh_builtin_new("_gpu_devices", f_gpu_devices, NULL, "_gpu_devices()",
                                                      "[(name, (major, minor))] of this process's GPUs."));
  sh_module_add(train, "_built_with_cuda", sh_builtin_new("_built_with_cuda", f_built_with_cuda, NULL,
                                                          "_built_with_cuda()", "Whether tfsh has its CUDA kernels."));
  sh_module_add(train, "ClusterSpec", sh_incref((sh_obj *)&tf_cluster_type));
  sh_module_add(train, "Server", sh_incref((sh_obj *)&tf_server_type));
  /* a static method: static types have no dict of their own until given one */
  sh_obj *f = sh_builtin_new("create_local_server", f_create_local_server, NULL,
                             "create_local_server(config=None, start=True)",
                             "A one-task server on a free localhost port.");
  sh_type_add(&tf_server_type, "create_local_server", f);
  sh_decref(f);
}
