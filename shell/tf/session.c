/* tf.Session: fetch structures and feed_dicts turned into one RunStep through the
 * runtime's session (local: an in-process server over inproc://; remote: a task's server). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "runtime/device.h"
#include "runtime/graphdef.h"
#include "runtime/views.h"
#include "shell/tf/tf.h"

typedef struct tf_session {
  sh_obj head;
  rt_session *s;
  tf_graph *graph;
  sh_obj *target;
  sh_obj *config;
  int running;   /* runs in flight on any thread */
} tf_session;

static sh_obj *session_stack;   /* default sessions, innermost last */
/* Sessions alive (borrowed; unlisted when destroyed), closed at the end of the program
 * before the servers they talk to go (a session closed after its in-process server waited
 * a second for the master that had gone). */
static sh_obj **live;
static int n_live, cap_live;
static const tf_run_observer *observer;   /* the views (shell/app), or NULL */

void tf_set_run_observer(const tf_run_observer *o) { observer = o; }
const tf_run_observer *tf_get_run_observer(void) { return observer; }


sh_obj *tf_default_session(void) {
  if (!session_stack || SH_LIST_N(session_stack) == 0) return NULL;
  return SH_LIST_ITEMS(session_stack)[SH_LIST_N(session_stack) - 1];
}

/* Closing a session stops the runners started on it first (their steps are cancelled), as
 * TF's close cancels the session's pending ops; other threads' runs in flight (queue
 * runners) are cancelled by the close and return before the session is freed. */
static void session_close(tf_session *s) {
  if (!s->s) return;
  tf_runners_stop((sh_obj *)s);
  rt_session *rs = s->s;
  s->s = NULL;
  if (s->running > 0) {
    sh_gil_release();
    rt_session_close(rs);
    sh_gil_acquire();
    while (s->running > 0) {
      sh_gil_release();
      nanosleep(&(struct timespec){0, 1000000}, NULL);
      sh_gil_acquire();
    }
  }
  rt_session_free(rs);
}

/* sh_at_fini: every runner stopped and every session closed while the servers exist. */
static void close_all_at_exit(void) {
  tf_runners_stop(NULL);
  for (int i = 0; i < n_live; i++) session_close((tf_session *)live[i]);
}

static void session_destroy(sh_obj *self) {
  tf_session *s = (tf_session *)self;
  for (int i = 0; i < n_live; i++)
    if (live[i] == self) live[i] = live[--n_live];
  if (observer && observer->session_gone) observer->session_gone(self);
  session_close(s);
  sh_decref((sh_obj *)s->graph);
  sh_decref(s->target);
  sh_decref(s->config);
}

/* ---- fetches ---------------------------------------------------------------------- */

typedef struct plan {
  int n_fetch, n_target, cap_f, cap_t;
  char **fetch;
  char **target;
} plan;

static void plan_free(plan *p) {
  for (int i = 0; i < p->n_fetch; i++) free(p->fetch[i]);
  for (int i = 0; i < p->n_target; i++) free(p->target[i]);
  free(p->fetch);
  free(p->target);
}

static void push(char ***v, int *n, int *cap, const char *s) {
  if (*n == *cap) {
    *cap = *cap ? 2 * *cap : 8;
    *v = xrealloc(*v, (size_t)*cap * sizeof **v);
  }
  (*v)[(*n)++] = xstrdup(s);
}

static sh_obj *fetch_type_error(sh_obj *f) {
  return sh_raise(sh_TypeError, "Fetch argument %s has invalid type <class '%s'>, must be a string "
                  "or Tensor. (Can not convert a %s into a Tensor or Operation.)",
                  f == SH_NONE ? "None" : "of this kind", sh_type_name(f), sh_type_name(f));
}

/* An object made of tensors that fetches as a value of its own (tf.SparseTensor ->
 * SparseTensorValue): it has _tf_fetches() and _tf_rebuild(values). */
static bool is_composite(sh_obj *f) {
  if (Py_TYPE(f) == (PyTypeObject *)&sh_list_type || Py_TYPE(f) == (PyTypeObject *)&sh_tuple_type || Py_TYPE(f) == (PyTypeObject *)&sh_dict_type || sh_is_str(f)) return false;
  sh_obj *m = sh_getattr_opt(f, "_tf_fetches");
  if (!m) return false;
  sh_decref(m);
  return true;
}

/* A namedtuple (LSTMStateTuple, a decoder's outputs): fetched as a tuple, rebuilt as its
 * own type (TF's nest). */
static bool is_namedtuple(sh_obj *f) {
  if (!PyTuple_Check(f) || Py_TYPE(f) == (PyTypeObject *)&sh_tuple_type) return false;
  sh_obj *fields = sh_getattr_opt(f, "_fields");
  if (!fields) return false;
  sh_decref(fields);
  return true;
}

/* Collect the leaves of a fetch structure. */
static int collect(tf_session *s, sh_obj *f, plan *p) {
  if (tf_variable_check(f)) f = tf_variable_value(f);
  if (Py_TYPE(f) == (PyTypeObject *)&tf_tensor_type) {
    tf_tensor *t = (tf_tensor *)f;
    char name[400];
    if (t->graph != s->graph) {
      sh_raise(sh_ValueError, "Tensor %s is not an element of this graph.", tf_tensor_name(t, name, sizeof name));
      return -1;
    }
    push(&p->fetch, &p->n_fetch, &p->cap_f, tf_tensor_name(t, name, sizeof name));
    return 0;
  }
  if (Py_TYPE(f) == (PyTypeObject *)&tf_op_type) {
    tf_op *o = (tf_op *)f;
    if (o->graph != s->graph) {
      sh_raise(sh_ValueError, "Operation %s is not an element of this graph.", tf_op_node(o)->name);
      return -1;
    }
    push(&p->target, &p->n_target, &p->cap_t, tf_op_node(o)->name);
    return 0;
  }
  if (sh_is_str(f)) {
    const char *name = sh_str_cstr(f);
    rt_status st = {0};
    rt_node *n;
    int idx;
    if (strchr(name, ':')) {
      if (rt_graph_output(tf_rt(s->graph), name, &n, &idx, &st)) {
        sh_raise(sh_ValueError, "Fetch argument '%s' cannot be interpreted as a Tensor. (%s)", name, st.msg);
        return -1;
      }
      push(&p->fetch, &p->n_fetch, &p->cap_f, name);
    } else {
      if (!rt_graph_find(tf_rt(s->graph), name)) {
        sh_raise(sh_ValueError, "Fetch argument '%s' cannot be interpreted as a Tensor. (The name "
                 "'%s' refers to an Operation not in the graph.)", name, name);
        return -1;
      }
      push(&p->target, &p->n_target, &p->cap_t, name);
    }
    return 0;
  }
  if (Py_TYPE(f) == (PyTypeObject *)&sh_list_type || Py_TYPE(f) == (PyTypeObject *)&sh_tuple_type) {
    int64_t n = Py_TYPE(f) == (PyTypeObject *)&sh_list_type ? SH_LIST_N(f) : SH_TUPLE_N(f);
    for (int64_t i = 0; i < n; i++)
      if (collect(s, Py_TYPE(f) == (PyTypeObject *)&sh_list_type ? SH_LIST_ITEMS(f)[i] : SH_TUPLE_ITEMS(f)[i], p) < 0)
        return -1;
    return 0;
  }
  if (is_namedtuple(f)) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(f); i++)
      if (collect(s, PyTuple_GET_ITEM(f, i), p) < 0) return -1;
    return 0;
  }
  if (PyDict_Check(f)) {   /* a dict, or an OrderedDict */
    sh_obj *k, *v;
    for (int64_t pos = 0; sh_dict_next(f, &pos, &k, &v);)
      if (collect(s, v, p) < 0) return -1;
    return 0;
  }
  if (is_composite(f)) {   /* a SparseTensor: its parts */
    sh_obj *parts = sh_call_method(f, "_tf_fetches", 0, NULL, NULL);
    int rc = parts ? collect(s, parts, p) : -1;
    sh_decref(parts);
    return rc;
  }
  fetch_type_error(f);
  return -1;
}

/* Rebuild the structure with results. */
static sh_obj *rebuild(sh_obj *f, rt_tensor **out, int *k) {
  if (tf_variable_check(f)) f = tf_variable_value(f);
  if (Py_TYPE(f) == (PyTypeObject *)&tf_tensor_type || (sh_is_str(f) && strchr(sh_str_cstr(f), ':'))) {
    rt_tensor *t = out[*k];   /* handed over: the array views its buffer when nothing else holds it */
    out[(*k)++] = NULL;
    return np_result(t);
  }
  if (Py_TYPE(f) == (PyTypeObject *)&tf_op_type || sh_is_str(f)) return sh_none();
  if (is_composite(f)) {   /* parts fetched, then the value made of them */
    sh_obj *parts = sh_call_method(f, "_tf_fetches", 0, NULL, NULL);
    sh_obj *vals = parts ? rebuild(parts, out, k) : NULL;
    sh_obj *r = vals ? sh_call_method(f, "_tf_rebuild", 1, &vals, NULL) : NULL;
    sh_decref(parts);
    sh_decref(vals);
    return r;
  }
  if (Py_TYPE(f) == (PyTypeObject *)&sh_list_type || Py_TYPE(f) == (PyTypeObject *)&sh_tuple_type) {
    bool list = Py_TYPE(f) == (PyTypeObject *)&sh_list_type;
    int64_t n = list ? SH_LIST_N(f) : SH_TUPLE_N(f);
    sh_obj *r = list ? sh_list_new(0) : sh_tuple_new(n);
    for (int64_t i = 0; i < n; i++) {
      sh_obj *e = rebuild(list ? SH_LIST_ITEMS(f)[i] : SH_TUPLE_ITEMS(f)[i], out, k);
      if (!e) { sh_decref(r); return NULL; }
      if (list) sh_list_append_steal(r, e);
      else SH_TUPLE_ITEMS(r)[i] = e;
    }
    return r;
  }
  if (is_namedtuple(f)) {
    Py_ssize_t n = PyTuple_GET_SIZE(f);
    sh_obj *items = sh_tuple_new(n);
    for (Py_ssize_t i = 0; i < n; i++) {
      sh_obj *e = rebuild(PyTuple_GET_ITEM(f, i), out, k);
      if (!e) { sh_decref(items); return NULL; }
      SH_TUPLE_ITEMS(items)[i] = e;
    }
    sh_obj *make = sh_getattr_opt((sh_obj *)Py_TYPE(f), "_make");
    sh_obj *r = make ? sh_call(make, 1, &items, NULL) : NULL;
    if (!make) sh_raise(sh_TypeError, "fetch: %s has _fields but no _make", sh_type_name(f));
    sh_decref(make);
    sh_decref(items);
    return r;
  }
  sh_obj *r = sh_dict_new(), *key, *v;
  for (int64_t pos = 0; sh_dict_next(f, &pos, &key, &v);) {
    sh_obj *e = rebuild(v, out, k);
    if (!e) { sh_decref(r); return NULL; }
    sh_dict_set(r, key, e);
    sh_decref(e);
  }
  if (Py_TYPE(f) != (PyTypeObject *)&sh_dict_type) {   /* an OrderedDict stays one, a defaultdict too */
    sh_obj *factory = sh_getattr_opt(f, "default_factory");
    sh_obj *typed = sh_call((sh_obj *)Py_TYPE(f), 1, factory ? &factory : &r, NULL);
    sh_obj *up = typed && factory ? sh_call_method(typed, "update", 1, &r, NULL) : NULL;
    if (factory && !up) Py_CLEAR(typed);
    sh_decref(up);
    sh_decref(factory);
    sh_decref(r);
    return typed;
  }
  return r;
}

/* ---- feeds ------------------------------------------------------------------------ */

typedef struct feeds {
  int n;
  char **names;
  rt_tensor **values;
} feeds;

static void feeds_free(feeds *f) {
  for (int i = 0; i < f->n; i++) {
    free(f->names[i]);
    rt_tensor_unref(f->values[i]);
  }
  free(f->names);
  free(f->values);
}

static int build_flat_feeds(tf_session *s, sh_obj *fd, feeds *f) {
  int64_t n = sh_dict_len(fd);
  f->names = xcalloc((size_t)n + 1, sizeof *f->names);
  f->values = xcalloc((size_t)n + 1, sizeof *f->values);
  sh_obj *k, *v;
  bool on_tf = rt_session_on_tf(s->s);
  size_t early = 0;
  for (int64_t pos = 0; sh_dict_next(fd, &pos, &k, &v);) {
    sh_obj *key = tf_variable_check(k) ? tf_variable_value(k) : k;
    char name[400];
    rt_node *node = NULL;
    int idx = 0;
    if (Py_TYPE(key) == (PyTypeObject *)&tf_tensor_type) {
      tf_tensor *t = (tf_tensor *)key;
      if (t->graph != s->graph) {
        sh_raise(sh_ValueError, "Cannot interpret feed_dict key as Tensor: Tensor %s is not an element of this graph.",
                 tf_tensor_name(t, name, sizeof name));
        return -1;
      }
      tf_tensor_name(t, name, sizeof name);
      node = tf_tensor_node(t);
      idx = t->index;
    } else if (sh_is_str(key)) {
      rt_status st = {0};
      snprintf(name, sizeof name, "%s", sh_str_cstr(key));
      if (rt_graph_output(tf_rt(s->graph), name, &node, &idx, &st)) {
        sh_raise(sh_TypeError, "Cannot interpret feed_dict key as Tensor: %s", st.msg);
        return -1;
      }
    } else {
      sh_raise(sh_TypeError, "Cannot interpret feed_dict key as Tensor: Can not convert a %s into a Tensor.",
               sh_type_name(key));
      return -1;
    }
    /* a session on TF's master refuses feeds over a gRPC message before copying them */
    if (on_tf) {
      rt_status st = {0};
      early += rt_dtype_fixed_bytes(node->out_types[idx], np_array_numel(v));
      if (rt_grpc_tensors_fit("RunStep's feeds", early, RT_GRPC_FEED_ADVICE, &st)) return tf_raise_status(&st), -1;
    }
    rt_tensor *val = np_to_tensor(v, node->out_types[idx], true);
    if (!val) return -1;
    const rt_shape *want = &node->out_shapes[idx];
    if (!rt_shape_compatible(want, &val->shape)) {
      char a[128], b[128];
      sh_raise(sh_ValueError, "Cannot feed value of shape %s for Tensor '%s', which has shape '%s'",
               rt_shape_str(&val->shape, a, sizeof a), name, rt_shape_str(want, b, sizeof b));
      rt_tensor_unref(val);
      return -1;
    }
    f->names[f->n] = xstrdup(name);
    f->values[f->n++] = val;
  }
  return 0;
}

/* A key that is not a Tensor and not a structure: a SparseTensor (fed its three parts). */
static bool composite_key(sh_obj *k) {
  return Py_TYPE(k) != (PyTypeObject *)&tf_tensor_type && !PyTuple_Check(k) && !PyList_Check(k) &&
         is_composite(k);
}

/* A feed whose key is a tuple or list of tensors (an RNN's LSTMStateTuple state, nested), or
 * a SparseTensor (a SparseTensorValue or an (indices, values, dense_shape) tuple for its
 * parts): its leaves paired with the value's, into out (TF's nest.flatten_up_to). */
static int flatten_feed(sh_obj *k, sh_obj *v, sh_obj *out) {
  if (composite_key(k)) {
    sh_obj *parts = sh_call_method(k, "_tf_fetches", 0, NULL, NULL);
    int rc = parts ? flatten_feed(parts, v, out) : -1;
    sh_decref(parts);
    return rc;
  }
  if (!PyTuple_Check(k) && !PyList_Check(k)) return PyDict_SetItem(out, k, v);
  Py_ssize_t n = PySequence_Size(k), m = PySequence_Check(v) && !PyUnicode_Check(v) ? PySequence_Size(v) : -1;
  if (m < 0) PyErr_Clear();
  if (m != n) {
    sh_raise(sh_ValueError, "feed_dict: the value fed for a structure of %zd tensors is %s, not a sequence of %zd",
             n, sh_type_name(v), n);
    return -1;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    sh_obj *ki = PySequence_GetItem(k, i), *vi = ki ? PySequence_GetItem(v, i) : NULL;
    int rc = vi ? flatten_feed(ki, vi, out) : -1;
    Py_XDECREF(ki);
    Py_XDECREF(vi);
    if (rc < 0) return -1;
  }
  return 0;
}

static int build_feeds(tf_session *s, sh_obj *given, feeds *f) {
  if (!given || given == SH_NONE) return 0;
  if (Py_TYPE(given) != (PyTypeObject *)&sh_dict_type) {
    sh_raise(sh_TypeError, "feed_dict must be a dict, not %s", sh_type_name(given));
    return -1;
  }
  bool structured = false;
  sh_obj *gk, *gv;
  for (int64_t pos = 0; !structured && sh_dict_next(given, &pos, &gk, &gv);)
    structured = PyTuple_Check(gk) || PyList_Check(gk) || composite_key(gk);
  if (!structured) return build_flat_feeds(s, given, f);   /* the usual step: no copy */
  sh_obj *fd = sh_dict_new();   /* structured keys flattened */
  for (int64_t pos = 0; sh_dict_next(given, &pos, &gk, &gv);)
    if (flatten_feed(gk, gv, fd) < 0) {
      sh_decref(fd);
      return -1;
    }
  int rc = build_flat_feeds(s, fd, f);
  sh_decref(fd);
  return rc;
}

/* A session on TF's master refuses fetches whose static shapes already say they cannot
 * come back in one gRPC message, before the step runs (TF's master would compute them, then
 * fail): 0, or -1 with ResourceExhaustedError raised. */
static int fetches_fit(tf_session *s, const plan *p) {
  rt_status st = {0};
  if (rt_session_on_tf(s->s) &&
      rt_grpc_fetches_fit(tf_rt(s->graph), (const char *const *)p->fetch, p->n_fetch, &st))
    return tf_raise_status(&st), -1;
  return 0;
}

/* ---- run -------------------------------------------------------------------------- */

static sh_obj *cfg_get(sh_obj *cfg, const char *name);

static sh_obj *session_run(tf_session *s, sh_obj *fetches, sh_obj *feed_dict, sh_obj *options,
                           sh_obj *meta) {
  if (!s->s) return sh_raise(sh_RuntimeError, "Attempted to use a closed Session.");
  plan p = {0};
  feeds f = {0};
  sh_obj *result = NULL;
  if (collect(s, fetches, &p) < 0 || fetches_fit(s, &p) < 0 || build_feeds(s, feed_dict, &f) < 0) goto out;
  rt_tensor **out = xcalloc((size_t)p.n_fetch + 1, sizeof *out);
  rt_session_run r = {
    .n_feeds = f.n, .feed_names = (const char *const *)f.names, .feeds = f.values,
    .n_fetches = p.n_fetch, .fetch_names = (const char *const *)p.fetch, .fetched = out,
    .n_targets = p.n_target, .targets = (const char *const *)p.target,
    .interrupt = sh_interrupt_flag(),
  };
  sh_obj *to = cfg_get(options, "timeout_in_ms");   /* RunOptions.timeout_in_ms */
  if (to) sh_as_int(to, &r.timeout_ms), sh_decref(to);
  rt_status st = {0};
  rt_session_views v = {0};
  void *seen = observer && observer->before_run ? observer->before_run((sh_obj *)s, s->s, options, &v) : NULL;
  r.graph_sent = true;
  /* Converting feeds and the observer may have run Python code, which lets other threads
   * run: one of them may have closed the session meanwhile. From here to running++ no
   * Python code runs, so a close waits for this run. */
  if (!s->s) {
    if (observer && observer->after_run) observer->after_run(seen, RT_CANCELLED, &v, meta);
    sh_raise(sh_RuntimeError, "Attempted to use a closed Session.");
    free(out);
    goto out;
  }
  int rc = rt_session_extend(s->s, r.interrupt, &st);   /* under the GIL: the graph may grow */
  if (!rc) {
    rt_session *rs = s->s;
    s->running++;   /* close() waits for the runs of other threads */
    sh_gil_release();
    rc = rt_session_run_step_views(rs, &r, &v, &st);
    sh_gil_acquire();
    s->running--;
  }
  if (observer && observer->after_run) observer->after_run(seen, rc, &v, meta);
  if (rc) {
    if (st.code == RT_CANCELLED && r.interrupt && sh_interrupted)
      sh_check_interrupt();
    else
      tf_raise_status(&st);
  } else {
    int k = 0;
    result = rebuild(fetches, out, &k);
  }
  for (int i = 0; i < p.n_fetch; i++) rt_tensor_unref(out[i]);
  free(out);
out:
  plan_free(&p);
  feeds_free(&f);
  return result;
}

static sh_obj *m_run(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *fetches, *feed = NULL, *options = NULL, *meta = NULL;
  if (sh_parse_args("run", argc, argv, kw, "fetches |feed_dict options run_metadata", &fetches, &feed,
                    &options, &meta) < 0)
    return NULL;
  return session_run((tf_session *)self, fetches, feed, options, meta);
}

sh_obj *tf_eval_in_session(sh_obj *fetch, sh_obj *feed_dict, sh_obj *session) {
  if (!session || session == SH_NONE) session = tf_default_session();
  if (!session)
    return sh_raise(sh_ValueError, "Cannot evaluate tensor using `eval()`: No default session is "
                    "registered. Use `with sess.as_default()` or pass an explicit session to "
                    "`eval(session=sess)`");
  if (Py_TYPE(session) != (PyTypeObject *)&tf_session_type) return sh_raise(sh_TypeError, "session must be a tf.Session");
  return session_run((tf_session *)session, fetch, feed_dict, NULL, NULL);
}

static sh_obj *m_close(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  session_close((tf_session *)self);
  return sh_none();
}

/* as_default(): a context that makes this the default session. */
typedef struct sess_ctx {
  sh_obj head;
  sh_obj *sess;
  bool close_on_exit;
} sess_ctx;

static void sctx_destroy(sh_obj *self) { sh_decref(((sess_ctx *)self)->sess); }
static sh_obj *sctx_enter(sh_obj *self) {
  if (!session_stack) session_stack = sh_list_new(0);
  sh_list_append(session_stack, ((sess_ctx *)self)->sess);
  return sh_incref(((sess_ctx *)self)->sess);
}
static int sctx_exit(sh_obj *self, sh_obj *exc) {
  if (session_stack && SH_LIST_N(session_stack)) PyList_SetSlice(session_stack, SH_LIST_N(session_stack) - 1, SH_LIST_N(session_stack), NULL);
  if (((sess_ctx *)self)->close_on_exit) session_close((tf_session *)((sess_ctx *)self)->sess);
  return 0;
}
static sh_type sess_ctx_type = {SH_TYPE_HEAD, .name = "_DefaultSessionContext", .size = sizeof(sess_ctx),
                                .destroy = sctx_destroy, .enter = sctx_enter, .exit = sctx_exit};

static sh_obj *m_as_default(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sess_ctx *c = sh_new(&sess_ctx_type);
  c->sess = sh_incref(self);
  return (sh_obj *)c;
}

/* `with tf.Session() as sess:` makes it the default and closes it at the end. */
static sh_obj *session_enter(sh_obj *self) { return sctx_enter((sh_obj *)&(sess_ctx){.sess = self}); }
static int session_exit(sh_obj *self, sh_obj *exc) {
  if (session_stack && SH_LIST_N(session_stack)) PyList_SetSlice(session_stack, SH_LIST_N(session_stack) - 1, SH_LIST_N(session_stack), NULL);
  session_close((tf_session *)self);
  return 0;
}

static const sh_method session_methods[] = {
  {"run", m_run, "run(fetches, feed_dict=None, options=None, run_metadata=None)",
   "Run the graph to compute fetches (tensors, ops, or nested lists/tuples/dicts of them)."},
  {"close", m_close, "close()", "Release the session's resources on the master."},
  {"as_default", m_as_default, "as_default()", "A context in which this is the default session."},
  {NULL},
};

/* Methods written in Python (session_helpers.py.inc: _session_NAME), bound to self. */
static sh_obj *python_method(sh_obj *self, const char *name) {
  static const char *const names[] = {"list_devices", "make_callable", "partial_run_setup", "partial_run", NULL};
  for (int i = 0; names[i]; i++)
    if (!strcmp(name, names[i])) {
      char fn[64];
      snprintf(fn, sizeof fn, "_session_%s", name);
      sh_obj *tf = sh_import("tensorflow"), *f = tf ? sh_getattr(tf, fn) : NULL;
      sh_obj *m = f ? PyMethod_New(f, self) : NULL;
      sh_decref(f);
      sh_decref(tf);
      return m;
    }
  return NULL;
}

static sh_obj *session_getattr(sh_obj *self, const char *name) {
  tf_session *s = (tf_session *)self;
  sh_obj *m = python_method(self, name);
  if (m || PyErr_Occurred()) return m;
  if (!strcmp(name, "graph")) return sh_incref((sh_obj *)s->graph);
  if (!strcmp(name, "sess_str")) return sh_incref(s->target);
  if (!strcmp(name, "graph_def")) {   /* views: a GraphDef (shell/views.py.inc) */
    sh_obj *tf = sh_import("tensorflow"), *f = tf ? sh_getattr(tf, "_views_as_graph_def") : NULL;
    sh_obj *r = f ? sh_call(f, 1, (sh_obj *[]){(sh_obj *)s->graph}, NULL) : NULL;
    sh_decref(f);
    sh_decref(tf);
    return r;
  }
  return NULL;
}

/* views: the runtime session and graph of a tf.Session (NULL when closed). */
rt_session *tf_session_rt(sh_obj *sess, tf_graph **g) {
  if (!sess || !sh_isinstance(sess, &tf_session_type)) return NULL;
  tf_session *s = (tf_session *)sess;
  if (g) *g = s->graph;
  return s->s;
}

/* A config attribute (ConfigProto instance attributes), or NULL. */
static sh_obj *cfg_get(sh_obj *cfg, const char *name) {
  if (!cfg || cfg == SH_NONE) return NULL;
  sh_obj *v = sh_getattr_opt(cfg, name);
  if (v == SH_NONE) { sh_decref(v); return NULL; }
  return v;
}

static sh_obj *target_string(sh_obj *target) {
  if (!target || target == SH_NONE) return sh_str("");
  if (sh_is_str(target)) return sh_incref(target);
  sh_obj *t = sh_getattr_opt(target, "target");   /* a tf.train.Server */
  if (t && sh_is_str(t)) return t;
  sh_decref(t);
  return sh_raise(sh_TypeError, "target must be a string, not %s", sh_type_name(target));
}

static sh_obj *session_new(sh_obj *target, sh_obj *graph, sh_obj *config, bool interactive) {
  tf_session *s = sh_new(&tf_session_type);
  s->target = target_string(target);
  if (!s->target) { sh_decref((sh_obj *)s); return NULL; }
  if (graph && graph != SH_NONE && Py_TYPE(graph) != (PyTypeObject *)&tf_graph_type) {
    sh_decref((sh_obj *)s);
    return sh_raise(sh_TypeError, "graph must be a tf.Graph, but got %s", sh_type_name(graph));
  }
  s->graph = (tf_graph *)sh_incref(graph && graph != SH_NONE ? graph : (sh_obj *)tf_default_graph());
  s->config = sh_incref(config ? config : SH_NONE);
  rt_session_config cfg = {0};
  sh_obj *v;
  if ((v = cfg_get(config, "allow_soft_placement"))) { cfg.allow_soft_placement = sh_truth(v) > 0; sh_decref(v); }
  if ((v = cfg_get(config, "log_device_placement"))) { cfg.log_device_placement = sh_truth(v) > 0; sh_decref(v); }
  if ((v = cfg_get(config, "isolate_session_state"))) { cfg.isolate_session_state = sh_truth(v) > 0; sh_decref(v); }
  if ((v = cfg_get(config, "operation_timeout_in_ms"))) {
    int64_t ms = 0;
    sh_as_int(v, &ms);
    cfg.operation_timeout_ms = ms;
    sh_decref(v);
  }
  if ((v = cfg_get(config, "intra_op_parallelism_threads"))) {
    int64_t n = 0;
    sh_as_int(v, &n);
    cfg.intra_op_threads = n > 0 && n < 4096 ? (int)n : 0;
    sh_decref(v);
  }
  if ((v = cfg_get(config, "inter_op_parallelism_threads"))) {
    int64_t n = 0;
    sh_as_int(v, &n);
    cfg.inter_op_threads = n > 0 && n < 4096 ? (int)n : 0;
    sh_decref(v);
  }
  const char *filters[64];
  sh_obj *fl = cfg_get(config, "device_filters");
  sh_obj *ftuple = fl ? sh_sequence_to_tuple(fl) : NULL;
  for (int64_t i = 0; ftuple && i < SH_TUPLE_N(ftuple) && i < 64; i++)
    if (sh_is_str(SH_TUPLE_ITEMS(ftuple)[i])) filters[cfg.n_device_filters++] = sh_str_cstr(SH_TUPLE_ITEMS(ftuple)[i]);
  cfg.device_filters = filters;
  sh_obj *dc = cfg_get(config, "device_count");
  if (dc && Py_TYPE(dc) == (PyTypeObject *)&sh_dict_type) {
    sh_obj *n = sh_dict_get_str(dc, "CPU");
    if (n && sh_is_int(n)) cfg.n_cpus = (int)sh_int_value(n);
    sh_obj *g = sh_dict_get_str(dc, "GPU");
    if (g && sh_is_int(g)) cfg.max_gpus = sh_int_value(g) > 0 ? (int)sh_int_value(g) : -1;
  }
  sh_obj *go = cfg_get(config, "gpu_options");
  if (go) {
    sh_obj *v;
    if ((v = cfg_get(go, "allow_growth"))) { cfg.gpu_allow_growth = sh_truth(v) > 0; sh_decref(v); }
    if ((v = cfg_get(go, "per_process_gpu_memory_fraction"))) {
      double f = 0;
      if (sh_as_double(v, &f) == 0 && f > 0) cfg.gpu_memory_fraction = f;
      sh_decref(v);
    }
    sh_decref(go);
  }
  cfg.interrupt = sh_interrupt_flag();
  sh_err_clear();
  rt_status st = {0};
  s->s = rt_session_new(sh_str_cstr(s->target), tf_rt(s->graph), &cfg, &st);
  sh_decref(fl);
  sh_decref(ftuple);
  sh_decref(dc);
  if (!s->s) {
    sh_decref((sh_obj *)s);
    return tf_raise_status(&st);
  }
  if (n_live == cap_live) {
    cap_live = cap_live ? 2 * cap_live : 8;
    live = xrealloc(live, (size_t)cap_live * sizeof *live);
  }
  live[n_live++] = (sh_obj *)s;
  if (interactive) {
    if (!session_stack) session_stack = sh_list_new(0);
    sh_list_append(session_stack, (sh_obj *)s);
  }
  return (sh_obj *)s;
}

static sh_obj *session_construct(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *target = NULL, *graph = NULL, *config = NULL;
  if (sh_parse_args("Session", argc, argv, kw, "|target graph config", &target, &graph, &config) < 0) return NULL;
  return session_new(target, graph, config, false);
}

static sh_obj *interactive_construct(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *target = NULL, *graph = NULL, *config = NULL;
  if (sh_parse_args("InteractiveSession", argc, argv, kw, "|target graph config", &target, &graph, &config) < 0)
    return NULL;
  return session_new(target, graph, config, true);
}

static sh_obj *session_repr(sh_obj *self) {
  return sh_strf("<tensorflow.python.client.session.Session object at %p>", (void *)self);
}

sh_type tf_session_type = {
  SH_TYPE_HEAD, .name = "Session", .size = sizeof(tf_session),
  .help = "Session(target='', graph=None, config=None): runs graphs on a master ('' runs in this process).",
  .methods = session_methods, .destroy = session_destroy, .getattr = session_getattr,
  .construct = session_construct, .enter = session_enter, .exit = session_exit, .repr = session_repr,
};

static sh_type tf_isession_type = {
  SH_TYPE_HEAD, .name = "InteractiveSession", .base = &tf_session_type, .size = sizeof(tf_session),
  .help = "A Session that makes itself the default (for shells).", .methods = session_methods,
  .destroy = session_destroy, .getattr = session_getattr, .construct = interactive_construct,
  .enter = session_enter, .exit = session_exit, .repr = session_repr,
};

/* ---- ConfigProto and friends: plain records of keyword arguments ------------------ */

static sh_obj *record_init(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  if (argc > 1) return sh_raise(sh_TypeError, "takes keyword arguments only");
  sh_obj *k, *v;
  for (int64_t pos = 0; kw && sh_dict_next(kw, &pos, &k, &v);)
    if (sh_setattr(self, sh_str_cstr(k), v) < 0) return NULL;
  return sh_none();
}

static const sh_method record_methods[] = {
  {"__init__", record_init, "(**fields)", "Set the given fields."},
  {NULL},
};

static sh_obj *record_class(sh_obj *tf, const char *name, const char *help, const char *const *fields,
                            sh_obj *const *defaults) {
  sh_type *t = sh_class_new(name, NULL, record_methods, help);
  for (int i = 0; fields && fields[i]; i++) sh_setattr((sh_obj *)t, fields[i], defaults[i]);
  sh_module_add(tf, name, (sh_obj *)t);
  return (sh_obj *)t;
}

/* _session_devices(sess): [(name, type, memory_limit_bytes, incarnation)] of every device of
 * the session's cluster, the master's task first (Session.list_devices). */
static sh_obj *f_session_devices(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *sess;
  if (sh_parse_args("_session_devices", argc, argv, kw, "sess", &sess) < 0) return NULL;
  rt_session *rs = tf_session_rt(sess, NULL);
  if (!rs) return sh_raise(sh_RuntimeError, "Attempted to use a closed Session.");
  rt_cluster_status cs;
  rt_status st = {0};
  if (rt_session_on_tf(rs)) {
    rt_error(&st, RT_UNIMPLEMENTED, "tfsh's client has no Session.list_devices on a TF master (TFSH_PEER=tf)");
    return tf_raise_status(&st);
  }
  if (rt_cluster_status_get(rt_session_endpoint(rs), 2000, &cs, &st)) return tf_raise_status(&st);
  sh_obj *l = sh_list_new(0);
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < cs.n; i++) {
      const rt_task_status *t = &cs.tasks[i];
      if (t->self != (pass == 0)) continue;
      for (int k = 0; t->has_devices && k < t->n_devices; k++) {
        rt_devname d;
        rt_status ignored = {0};
        bool gpu = !rt_devname_parse(t->devices[k], &d, &ignored) && !strcmp(d.type, "GPU");
        sh_obj *e = Py_BuildValue("(ssLL)", t->devices[k], gpu ? "GPU" : "CPU", gpu ? 0LL : 268435456LL,
                                  (long long)t->incarnation);
        if (e) sh_list_append(l, e);
        sh_decref(e);
      }
    }
  rt_cluster_status_clear(&cs);
  return l;
}

/* tf.Session.reset(target, containers=None, config=None) */
static sh_obj *f_session_reset(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *target, *containers = NULL, *config = NULL;
  if (sh_parse_args("reset", argc, argv, kw, "target |containers config", &target, &containers, &config) < 0)
    return NULL;
  sh_obj *t = target_string(target);
  if (!t) return NULL;
  const char *names[64];
  int n = 0;
  sh_obj *tup = containers && containers != SH_NONE ? sh_sequence_to_tuple(containers) : NULL;
  for (int64_t i = 0; tup && i < SH_TUPLE_N(tup) && n < 64; i++)
    if (sh_is_str(SH_TUPLE_ITEMS(tup)[i])) names[n++] = sh_str_cstr(SH_TUPLE_ITEMS(tup)[i]);
  rt_status st = {0};
  int rc = rt_session_reset(sh_str_cstr(t), n, names, 0, NULL, &st);   /* TF's client sends no filters */
  sh_decref(tup);
  sh_decref(t);
  if (rc) return tf_raise_status(&st);
  return sh_none();
}

void tf_session_add(sh_obj *tf) {
  static bool hooked;
  if (!hooked) sh_at_fini(close_all_at_exit);
  hooked = true;
  sh_obj *rf = sh_builtin_new("reset", f_session_reset, NULL, "reset(target, containers=None, config=None)",
                              "Clear the resource containers (variables) of target's cluster and close its sessions.");
  sh_type_add(&tf_session_type, "reset", rf);
  sh_decref(rf);
  sh_module_add(tf, "_session_devices", sh_builtin_new("_session_devices", f_session_devices, NULL, "_session_devices(sess)",
                                                       "[(name, type, memory_limit_bytes, incarnation)] of a session's cluster."));
  sh_module_add(tf, "Session", sh_incref((sh_obj *)&tf_session_type));
  sh_module_add(tf, "InteractiveSession", sh_incref((sh_obj *)&tf_isession_type));
  static const char *const cfg_fields[] = {"allow_soft_placement", "log_device_placement",
                                           "operation_timeout_in_ms", "device_filters",
                                           "device_count", "gpu_options", "isolate_session_state", NULL};
  sh_obj *cfg_defaults[] = {sh_false, sh_false, SH_NONE, SH_NONE, SH_NONE, SH_NONE, sh_false};
  record_class(tf, "ConfigProto", "Session configuration (placement, timeouts, devices).", cfg_fields, cfg_defaults);
  record_class(tf, "GPUOptions", "GPU options: allow_growth and per_process_gpu_memory_fraction size the GPU allocator.", NULL, NULL);
  static const char *const ro_fields[] = {"trace_level", "output_partition_graphs", "timeout_in_ms", NULL};
  sh_obj *zero = sh_int(0);
  sh_obj *ro_defaults[] = {zero, sh_false, zero};
  sh_obj *ro = record_class(tf, "RunOptions", "Options for one Session.run.", ro_fields, ro_defaults);
  sh_setattr(ro, "NO_TRACE", zero);
  sh_obj *one = sh_int(1), *two = sh_int(2), *three = sh_int(3);
  sh_setattr(ro, "SOFTWARE_TRACE", one);
  sh_setattr(ro, "HARDWARE_TRACE", two);
  sh_setattr(ro, "FULL_TRACE", three);
  sh_decref(zero);
  sh_decref(one);
  sh_decref(two);
  sh_decref(three);
  record_class(tf, "RunMetadata", "What a traced Session.run reports.", NULL, NULL);
}
