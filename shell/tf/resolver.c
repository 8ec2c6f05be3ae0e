/* tf.distribute.cluster_resolver.SlurmClusterResolver's engine: _slurm_resolve, the
 * runtime's resolution (runtime/slurm.c, the same code `tfsh server --slurm` runs) over
 * the script's os.environ. The class itself is in prelude.py.inc. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "runtime/launch.h"
#include "shell/tf/tf.h"

static const char *dict_env(const char *name, void *arg) {
  sh_obj *v = sh_dict_get_str((sh_obj *)arg, name);
  return v && sh_is_str(v) ? sh_str_cstr(v) : NULL;
}

static int opt_int(sh_obj *o, const char *what, int dflt, int *out) {
  if (!o || o == SH_NONE) { *out = dflt; return 0; }
  if (!sh_is_int(o) || sh_int_value(o) < 0 || sh_int_value(o) > 1000000) {
    sh_raise(sh_ValueError, "SlurmClusterResolver: %s must be a non-negative integer", what);
    return -1;
  }
  *out = (int)sh_int_value(o);
  return 0;
}

/* _slurm_resolve(environ, jobs=None, port_base=8888, gpus_per_node=None, gpus_per_task=None,
 *                tasks_per_node=None, set_gpus=False) -> {cluster, task_type, task_id, gpus, ...} */
static sh_obj *f_slurm_resolve(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *env, *jobs = NULL, *port_base = NULL, *gpn = NULL, *gpt = NULL, *tpn = NULL, *set_gpus = NULL;
  if (sh_parse_args("_slurm_resolve", argc, argv, kw, "environ |jobs port_base gpus_per_node gpus_per_task "
                    "tasks_per_node set_gpus", &env, &jobs, &port_base, &gpn, &gpt, &tpn, &set_gpus) < 0)
    return NULL;
  if (Py_TYPE(env) != (PyTypeObject *)&sh_dict_type) return sh_raise(sh_TypeError, "_slurm_resolve: environ must be a dict");
  rt_slurm_opts o = {.env = dict_env, .env_arg = env, .tasks_per_node = -1};
  rt_job_counts counts = {0};
  if (jobs && jobs != SH_NONE) {
    if (Py_TYPE(jobs) != (PyTypeObject *)&sh_dict_type)
      return sh_raise(sh_TypeError, "SlurmClusterResolver: jobs must be a dict {job name: number of tasks}");
    sh_obj *k, *v;
    for (int64_t pos = 0; sh_dict_next(jobs, &pos, &k, &v);) {
      if (!sh_is_str(k) || !rt_cluster_valid_job(sh_str_cstr(k)) || strlen(sh_str_cstr(k)) >= 64)
        return sh_raise(sh_ValueError, "SlurmClusterResolver: jobs: job names are letters, digits and _");
      if (counts.n == RT_MAX_JOBS) return sh_raise(sh_ValueError, "SlurmClusterResolver: more than %d jobs", RT_MAX_JOBS);
      if (opt_int(v, "the number of tasks of a job", 0, &counts.jobs[counts.n].count)) return NULL;
      snprintf(counts.jobs[counts.n].name, sizeof counts.jobs[counts.n].name, "%s", sh_str_cstr(k));
      counts.n++;
    }
    o.jobs = &counts;
  }
  if (opt_int(port_base, "port_base", 8888, &o.port_base) || opt_int(gpn, "gpus_per_node", -1, &o.gpus_per_node) ||
      opt_int(gpt, "gpus_per_task", -1, &o.gpus_per_task))
    return NULL;
  const char **hosts = NULL;
  int *tcounts = NULL;
  if (tpn && Py_TYPE(tpn) == (PyTypeObject *)&sh_dict_type) {   /* {host: tasks} */
    int64_t n = 0;
    sh_obj *k, *v;
    for (int64_t pos = 0; sh_dict_next(tpn, &pos, &k, &v);) n++;
    hosts = xcalloc((size_t)n + 1, sizeof *hosts);
    tcounts = xcalloc((size_t)n + 1, sizeof *tcounts);
    int i = 0;
    for (int64_t pos = 0; sh_dict_next(tpn, &pos, &k, &v); i++) {
      if (!sh_is_str(k) || opt_int(v, "tasks_per_node's counts", 0, &tcounts[i])) {
        if (!sh_is_str(k)) sh_raise(sh_TypeError, "SlurmClusterResolver: tasks_per_node's keys are host names");
        free(hosts);
        free(tcounts);
        return NULL;
      }
      hosts[i] = sh_str_cstr(k);
    }
    o.n_tpn = (int)n;
    o.tpn_hosts = hosts;
    o.tpn_counts = tcounts;
    if (!n) {
      free(hosts);
      free(tcounts);
      return sh_raise(sh_ValueError, "SlurmClusterResolver: tasks_per_node is an empty dict");
    }
  } else if (opt_int(tpn, "tasks_per_node", -1, &o.tasks_per_node)) {
    return NULL;
  }
  rt_slurm s;
  rt_status st = {0};
  int rc = rt_slurm_resolve(&o, &s, &st);
  free(hosts);
  free(tcounts);
  if (rc) return sh_raise(rc == RT_INVALID_ARGUMENT ? sh_ValueError : sh_RuntimeError, "%s", st.msg);
  if (set_gpus && sh_truth(set_gpus) > 0) setenv("CUDA_VISIBLE_DEVICES", s.gpus, 1);
  sh_obj *d = sh_dict_new(), *cl = sh_dict_new(), *v;
  for (int i = 0; i < s.cluster->n; i++) {
    sh_obj *l = sh_dict_get_str(cl, s.cluster->tasks[i].job);
    if (!l) {
      sh_dict_set_str(cl, s.cluster->tasks[i].job, l = sh_list_new(0));
      sh_decref(l);
    }
    sh_list_append_steal(l, sh_str(s.cluster->tasks[i].addr));
  }
  sh_dict_set_str(d, "cluster", cl); sh_decref(cl);
  sh_dict_set_str(d, "task_type", v = s.job[0] ? sh_str(s.job) : sh_none()); sh_decref(v);
  sh_dict_set_str(d, "task_id", v = s.job[0] ? sh_int(s.index) : sh_none()); sh_decref(v);
  sh_dict_set_str(d, "gpus", v = sh_str(s.gpus)); sh_decref(v);
  sh_dict_set_str(d, "gpus_per_task", v = sh_int(s.gpus_per_task)); sh_decref(v);
  sh_dict_set_str(d, "gpus_per_node", v = sh_int(s.gpus_per_node)); sh_decref(v);
  sh_dict_set_str(d, "rank", v = sh_int(s.rank)); sh_decref(v);
  rt_slurm_clear(&s);
  return d;
}

void tf_resolver_add(sh_obj *tf) {
  sh_module_add_func(tf, "_slurm_resolve", f_slurm_resolve,
                     "_slurm_resolve(environ, jobs=None, port_base=8888, gpus_per_node=None, gpus_per_task=None, "
                     "tasks_per_node=None, set_gpus=False)",
                     "Slurm's environment resolved as TF's SlurmClusterResolver does (internal).");
}
