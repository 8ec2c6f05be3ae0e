/* Device scopes: tf.device(spec | function | None), applied to each new op innermost
 * first, each filling only what inner scopes left unset (TF1's merge rule); and
 * tf.train.replica_device_setter, the device function of between-graph replication. */
#include <stdio.h>
#include <string.h>

#include "runtime/device.h"
#include "shell/tf/tf.h"


/* ---- replica_device_setter ---------------------------------------------------------- */

typedef struct tf_rds {
  sh_obj head;
  int ps_tasks;
  char ps_device[160];
  char worker_device[160];
  bool merge_devices;
  sh_obj *ps_ops;        /* list of op type names */
  sh_obj *strategy;      /* callable(op) -> task, or NULL: round robin */
  bool greedy;           /* byte-size greedy load balancing */
  int64_t next;          /* round robin */
  int64_t loads[256];    /* greedy: bytes per ps task */
} tf_rds;

static void rds_destroy(sh_obj *self) {
  tf_rds *r = (tf_rds *)self;
  sh_decref(r->ps_ops);
  sh_decref(r->strategy);
}

static sh_obj *rds_repr(sh_obj *self) {
  tf_rds *r = (tf_rds *)self;
  return sh_strf("<replica_device_setter ps_tasks=%d ps_device='%s' worker_device='%s'>",
                 r->ps_tasks, r->ps_device, r->worker_device);
}

static bool is_ps_op(tf_rds *r, const char *type) {
  for (int64_t i = 0; i < SH_LIST_N(r->ps_ops); i++)
    if (!strcmp(sh_str_cstr(SH_LIST_ITEMS(r->ps_ops)[i]), type)) return true;
  return false;
}

static int64_t var_bytes(const rt_node *n) {
  const rt_attr_value *s = rt_node_attr(n, "shape");
  int64_t e = s && s->kind == RT_ATTR_SHAPE ? rt_shape_numel(&s->shape) : 0;
  if (e < 0) e = 0;
  return e * (int64_t)rt_dtype_size(rt_node_type(n, "dtype", RT_FLOAT));
}

/* Choose a device for node id; cur holds what inner scopes already decided. */
static int rds_apply(tf_rds *r, tf_graph *g, int id, rt_devname *cur, char *reason, size_t rn) {
  rt_node *n = tf_rt(g)->nodes[id];
  if (!r->merge_devices && (cur->job[0] || cur->task >= 0 || cur->type[0])) return 0;
  if (r->ps_tasks > 0 && is_ps_op(r, n->op)) {
    rt_devname ps;
    rt_devname_parse(r->ps_device, &ps, NULL);
    if (ps.job[0] && (!cur->job[0] || !strcmp(cur->job, ps.job))) {
      int64_t task;
      if (r->strategy) {
        sh_obj *op = tf_op_new(g, id);
        sh_obj *v = sh_call(r->strategy, 1, &op, NULL);
        sh_decref(op);
        if (!v || sh_as_int(v, &task) < 0) {
          sh_decref(v);
          return -1;
        }
        sh_decref(v);
      } else if (r->greedy) {
        task = 0;
        for (int i = 1; i < r->ps_tasks && i < 256; i++)
          if (r->loads[i] < r->loads[task]) task = i;
        r->loads[task] += var_bytes(n);
      } else {
        task = r->next++ % r->ps_tasks;
      }
      ps.task = (int)task;
      snprintf(reason, rn, "replica_device_setter: ps task %lld%s", (long long)task,
               r->greedy ? " (greedy by bytes)" : r->strategy ? " (ps_strategy)" : " (round robin)");
    }
    rt_devname_fill(cur, &ps);
    return 0;
  }
  rt_devname w;
  rt_devname_parse(r->worker_device, &w, NULL);
  rt_devname_fill(cur, &w);
  return 0;
}

sh_type tf_rds_type = {
  SH_TYPE_HEAD, .name = "_ReplicaDeviceChooser", .size = sizeof(tf_rds),
  .help = "The device function made by tf.train.replica_device_setter.",
  .destroy = rds_destroy, .repr = rds_repr,
};

/* A greedy strategy object: tf.contrib.training.GreedyLoadBalancingStrategy(num_tasks, load_fn). */
typedef struct tf_greedy {
  sh_obj head;
  int num_tasks;
} tf_greedy;

sh_type tf_greedy_type = {
  SH_TYPE_HEAD, .name = "GreedyLoadBalancingStrategy", .size = sizeof(tf_greedy),
  .help = "Places each variable on the ps task with the fewest bytes so far.",
};

sh_obj *tf_greedy_new(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *n, *load_fn = NULL;
  if (sh_parse_args("GreedyLoadBalancingStrategy", argc, argv, kw, "num_tasks |load_fn", &n, &load_fn) < 0)
    return NULL;
  int64_t k;
  if (sh_as_int(n, &k) < 0) return NULL;
  tf_greedy *g = sh_new(&tf_greedy_type);
  g->num_tasks = (int)k;
  return (sh_obj *)g;
}

/* Number of tasks of a job in a ClusterSpec-like object (dict or ClusterSpec). */

sh_obj *tf_replica_device_setter(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *ps_tasks = NULL, *ps_device = NULL, *worker_device = NULL, *merge = NULL,
         *cluster = NULL, *ps_ops = NULL, *strategy = NULL;
  if (sh_parse_args("replica_device_setter", argc, argv, kw,
                    "|ps_tasks ps_device worker_device merge_devices cluster ps_ops ps_strategy",
                    &ps_tasks, &ps_device, &worker_device, &merge, &cluster, &ps_ops, &strategy) < 0)
    return NULL;
  tf_rds *r = sh_new(&tf_rds_type);
  int64_t n = 0;
  if (cluster && cluster != SH_NONE) {
    n = tf_cluster_num_tasks(cluster, "ps");
    if (n < 0) { sh_decref((sh_obj *)r); return NULL; }
  } else if (ps_tasks && ps_tasks != SH_NONE && sh_as_int(ps_tasks, &n) < 0) {
    sh_decref((sh_obj *)r);
    return NULL;
  }
  if (n == 0 && cluster && cluster != SH_NONE) {   /* TF1: no ps job, no setter */
    sh_decref((sh_obj *)r);
    return sh_none();
  }
  r->ps_tasks = (int)n;
  snprintf(r->ps_device, sizeof r->ps_device, "%s",
           ps_device && ps_device != SH_NONE && sh_is_str(ps_device) ? sh_str_cstr(ps_device) : "/job:ps");
  snprintf(r->worker_device, sizeof r->worker_device, "%s",
           worker_device && worker_device != SH_NONE && sh_is_str(worker_device) ? sh_str_cstr(worker_device)
           : "/job:worker");
  r->merge_devices = !merge || sh_truth(merge) != 0;
  if (ps_ops && ps_ops != SH_NONE) {
    r->ps_ops = sh_sequence_to_list(ps_ops);
  } else {
    r->ps_ops = sh_list_new(0);
    static const char *const dflt[] = {"Variable", "VariableV2", "AutoReloadVariable",
                                       "MutableHashTable", "MutableHashTableV2",
                                       "MutableHashTableOfTensors", "MutableDenseHashTable",
                                       "VarHandleOp"};
    for (size_t i = 0; i < sizeof dflt / sizeof *dflt; i++) sh_list_append_steal(r->ps_ops, sh_str(dflt[i]));
  }
  if (strategy && strategy != SH_NONE) {
    if (Py_TYPE(strategy) == (PyTypeObject *)&tf_greedy_type)
      r->greedy = true;
    else
      r->strategy = sh_incref(strategy);
  }
  return (sh_obj *)r;
}

/* ---- applying the scopes ------------------------------------------------------------ */

int tf_apply_device_stack(tf_graph *g, int id) {
  sh_obj *stack = tf_graph_devices(g);
  rt_node *n = tf_rt(g)->nodes[id];
  rt_devname cur;
  rt_status st = {0};
  char reason[256] = "";
  bool from_fn = false;   /* chosen by a device function, not an explicit string */
  rt_devname_clear(&cur);
  for (int64_t i = SH_LIST_N(stack) - 1; i >= 0; i--) {
    sh_obj *e = SH_LIST_ITEMS(stack)[i];
    if (e == SH_NONE) break;
    if (sh_is_str(e)) {
      rt_devname spec;
      if (rt_devname_parse(sh_str_cstr(e), &spec, &st)) {
        sh_raise(sh_ValueError, "%s", st.msg);
        return -1;
      }
      rt_devname_fill(&cur, &spec);
    } else if (Py_TYPE(e) == (PyTypeObject *)&tf_rds_type) {
      if (rds_apply((tf_rds *)e, g, id, &cur, reason, sizeof reason) < 0) return -1;
      from_fn = true;
    } else {
      from_fn = true;
      char buf[200];
      rt_node_set_device(tf_rt(g)->nodes[id], rt_devname_str(&cur, buf, sizeof buf));
      sh_obj *op = tf_op_new(g, id);
      sh_obj *r = sh_call(e, 1, &op, NULL);
      sh_decref(op);
      if (!r) return -1;
      rt_devname_clear(&cur);
      if (r != SH_NONE) {
        const char *s = sh_as_cstr(r);
        if (!s || rt_devname_parse(s, &cur, &st)) {
          if (s) sh_raise(sh_ValueError, "%s", st.msg);
          sh_decref(r);
          return -1;
        }
      }
      sh_decref(r);
    }
  }
  n = tf_rt(g)->nodes[id];
  char buf[200];
  rt_node_set_device(n, rt_devname_str(&cur, buf, sizeof buf));
  if (reason[0]) rt_node_set_string(n, "_device_reason", reason);
  /* A device a function chose yields to colocation (an update op follows its variable to
   * the ps even though replica_device_setter sent "everything else" to the worker). */
  if (from_fn && !reason[0]) rt_node_set_bool(n, "_device_soft", true);
  return 0;
}

/* tf.device(device_name_or_function) */
sh_obj *tf_device(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *d;
  if (sh_parse_args("device", argc, argv, kw, "device_name_or_function", &d) < 0) return NULL;
  if (sh_is_str(d)) {   /* check it now, so a bad spec is reported at the with line */
    rt_devname dn;
    rt_status st = {0};
    if (rt_devname_parse(sh_str_cstr(d), &dn, &st)) return sh_raise(sh_ValueError, "%s", st.msg);
  }
  return tf_device_ctx(d);
}

/* ---- Tab completion of device strings inside tf.device("...") -------------------------- */

/* Jobs seen in ClusterSpecs and servers made in this process (cluster.c adds them). */
static struct {
  char name[64];
  int n;                /* task indices known, the first 32 */
  int task[32];
} known_jobs[16];
static int n_known_jobs;

void tf_device_note_task(const char *job, int task) {
  int i = 0;
  while (i < n_known_jobs && strcmp(known_jobs[i].name, job)) i++;
  if (i == n_known_jobs) {
    if (n_known_jobs == 16) return;
    snprintf(known_jobs[n_known_jobs++].name, sizeof known_jobs[0].name, "%s", job);
    known_jobs[i].n = 0;
  }
  for (int k = 0; k < known_jobs[i].n; k++)
    if (known_jobs[i].task[k] == task) return;
  if (known_jobs[i].n < 32) known_jobs[i].task[known_jobs[i].n++] = task;
}

sh_obj *tf_device_complete(const char *line, size_t cursor, size_t *word_start) {
  /* the cursor must be inside the string argument of a device( call */
  size_t i = cursor;
  while (i > 0 && line[i - 1] != '"' && line[i - 1] != '\'' && line[i - 1] != '(') i--;
  if (i == 0 || (line[i - 1] != '"' && line[i - 1] != '\'')) return NULL;
  size_t q = i - 1;
  if (q < 7 || strncmp(line + q - 7, "device(", 7)) return NULL;
  *word_start = i;
  const char *typed = line + i;
  size_t tl = cursor - i;
  sh_obj *out = sh_list_new(0);
  char cand[200];
  static const char *const fixed[] = {"/cpu:0", "/device:CPU:0", "/gpu:0", "/device:GPU:0",
                                      "/job:localhost/replica:0/task:0/device:CPU:0"};
  for (size_t k = 0; k < sizeof fixed / sizeof *fixed; k++)
    if (!strncmp(fixed[k], typed, tl)) sh_list_append_steal(out, sh_str(fixed[k]));
  for (int j = 0; j < n_known_jobs; j++) {   /* every task of the clusters defined so far */
    snprintf(cand, sizeof cand, "/job:%s", known_jobs[j].name);
    if (!strncmp(cand, typed, tl)) sh_list_append_steal(out, sh_str(cand));
    for (int k = 0; k < known_jobs[j].n; k++) {
      const char *forms[] = {"/job:%s/task:%d", "/job:%s/task:%d/device:CPU:0",
                             "/job:%s/replica:0/task:%d/device:CPU:0"};
      for (int f = 0; f < 3; f++) {
        snprintf(cand, sizeof cand, forms[f], known_jobs[j].name, known_jobs[j].task[k]);
        if (!strncmp(cand, typed, tl)) sh_list_append_steal(out, sh_str(cand));
      }
    }
  }
  return out;
}
