/* Slurm's environment: hostlists, tasks per node, and TF's SlurmClusterResolver
 * assignment of ranks to jobs, ports and GPUs (tensorflow/python/distribute/
 * cluster_resolver/slurm_cluster_resolver.py; tests/unit/test_launch.c checks it against
 * outputs real TF produced). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "runtime/launch.h"

typedef struct strv {
  char **v;
  int n, cap;
} strv;

static void strv_push(strv *s, const char *str, size_t len) {
  if (s->n == s->cap) {
    s->cap = s->cap ? 2 * s->cap : 16;
    s->v = xrealloc(s->v, (size_t)s->cap * sizeof *s->v);
  }
  s->v[s->n++] = xstrndup(str, len);
}

void rt_strv_free(char **v, int n) {
  for (int i = 0; i < n; i++) free(v[i]);
  free(v);
}

#define MAX_HOSTS 100000

/* Expand one part ("prefix[1-3,5]suffix[..]...") after prefix 'done', appending to out. */
static int expand_part(const char *part, size_t len, char *done, size_t dlen, strv *out, const char *whole,
                       rt_status *st) {
  const char *open = memchr(part, '[', len);
  if (!open) {
    if (memchr(part, ']', len))
      return rt_error(st, RT_INVALID_ARGUMENT, "Invalid hostlist format \"%s\": ']' without '['", whole);
    if (dlen + len == 0)
      return rt_error(st, RT_INVALID_ARGUMENT, "Invalid hostlist format \"%s\": an empty host name", whole);
    if (out->n >= MAX_HOSTS)
      return rt_error(st, RT_INVALID_ARGUMENT, "Invalid hostlist format \"%s\": more than %d hosts", whole, MAX_HOSTS);
    char host[512];
    if (dlen + len >= sizeof host)
      return rt_error(st, RT_INVALID_ARGUMENT, "Invalid hostlist format \"%s\": a host name is too long", whole);
    memcpy(host, done, dlen);
    memcpy(host + dlen, part, len);
    strv_push(out, host, dlen + len);
    return RT_OK;
  }
  const char *close = memchr(open, ']', len - (size_t)(open - part));
  if (!close || close == open + 1)
    return rt_error(st, RT_INVALID_ARGUMENT, "Invalid hostlist format \"%s\": %s", whole,
                    close ? "an empty range '[]'" : "'[' without ']'");
  size_t plen = (size_t)(open - part);
  if (memchr(part, ']', plen))
    return rt_error(st, RT_INVALID_ARGUMENT, "Invalid hostlist format \"%s\": ']' without '['", whole);
  char prefix[512];
  if (dlen + plen >= sizeof prefix)
    return rt_error(st, RT_INVALID_ARGUMENT, "Invalid hostlist format \"%s\": a host name is too long", whole);
  memcpy(prefix, done, dlen);
  memcpy(prefix + dlen, part, plen);
  const char *rest = close + 1;
  size_t rlen = len - (size_t)(rest - part);
  /* the ranges: a,b-c,... */
  const char *p = open + 1;
  while (p < close) {
    const char *e = memchr(p, ',', (size_t)(close - p));
    if (!e) e = close;
    const char *dash = memchr(p, '-', (size_t)(e - p));
    const char *lo_s = p, *lo_e = dash ? dash : e, *hi_s = dash ? dash + 1 : p, *hi_e = e;
    bool ok = lo_e > lo_s && hi_e > hi_s && lo_e - lo_s < 10 && hi_e - hi_s < 10;
    for (const char *q = lo_s; ok && q < lo_e; q++) ok = isdigit((unsigned char)*q);
    for (const char *q = hi_s; ok && q < hi_e; q++) ok = isdigit((unsigned char)*q);
    if (!ok)
      return rt_error(st, RT_INVALID_ARGUMENT, "Invalid hostlist format \"%s\": '%.*s' is not a number or a range N-M",
                      whole, (int)(e - p), p);
    long lo = strtol(lo_s, NULL, 10), hi = strtol(hi_s, NULL, 10);
    int width = (int)(lo_e - lo_s);
    if (hi < lo)
      return rt_error(st, RT_INVALID_ARGUMENT, "Invalid hostlist format \"%s\": the range %.*s runs backwards", whole,
                      (int)(e - p), p);
    if (hi - lo >= MAX_HOSTS)
      return rt_error(st, RT_INVALID_ARGUMENT, "Invalid hostlist format \"%s\": more than %d hosts", whole, MAX_HOSTS);
    for (long i = lo; i <= hi; i++) {
      char name[600];
      int nl = snprintf(name, sizeof name, "%.*s%0*ld", (int)(dlen + plen), prefix, width, i);
      int rc = expand_part(rest, rlen, name, (size_t)nl, out, whole, st);
      if (rc) return rc;
    }
    p = e + 1;
  }
  return RT_OK;
}

int rt_slurm_hostlist(const char *list, char ***hosts, int *n, rt_status *st) {
  strv out = {0};
  *hosts = NULL;
  *n = 0;
  const char *p = list;
  int rc = RT_OK;
  while (*p && !rc) {
    const char *s = p;
    int depth = 0;
    while (*p && (depth || *p != ',')) {
      if (*p == '[') {
        if (depth) { rc = rt_error(st, RT_INVALID_ARGUMENT, "Invalid hostlist format \"%s\": '[' inside '[...]'", list); break; }
        depth = 1;
      } else if (*p == ']') {
        depth = 0;
      }
      p++;
    }
    if (rc) break;
    if (p == s) rc = rt_error(st, RT_INVALID_ARGUMENT, "Invalid hostlist format \"%s\": an empty host name", list);
    else rc = expand_part(s, (size_t)(p - s), "", 0, &out, list, st);
    if (*p == ',') {
      p++;
      if (!*p && !rc) rc = rt_error(st, RT_INVALID_ARGUMENT, "Invalid hostlist format \"%s\": an empty host name", list);
    }
  }
  if (!rc && !out.n) rc = rt_error(st, RT_INVALID_ARGUMENT, "Invalid hostlist format \"%s\": no hosts", list);
  if (rc) {
    rt_strv_free(out.v, out.n);
    return rc;
  }
  *hosts = out.v;
  *n = out.n;
  return RT_OK;
}

int rt_slurm_tasks_per_node(const char *s, int **counts, int *n, rt_status *st) {
  int cap = 16, k = 0;
  int *v = xmalloc((size_t)cap * sizeof *v);
  const char *p = s;
  for (;;) {
    char *end;
    errno = 0;
    long c = isdigit((unsigned char)*p) ? strtol(p, &end, 10) : -1;
    long rep = 1;
    if (c >= 0 && !errno && !strncmp(end, "(x", 2) && isdigit((unsigned char)end[2])) {
      rep = strtol(end + 2, &end, 10);
      if (*end != ')') c = -1;
      else end++;
    }
    if (c < 0 || errno || (*end && *end != ',') || rep < 1 || rep > MAX_HOSTS || c > 100000 || k + rep > MAX_HOSTS) {
      free(v);
      return rt_error(st, RT_INVALID_ARGUMENT, "Invalid tasks-per-node list format \"%s\": expected N or N(xR), "
                      "comma-separated (as in 2(x3),1)", s);
    }
    while (k + rep > cap) {
      cap *= 2;
      v = xrealloc(v, (size_t)cap * sizeof *v);
    }
    for (long i = 0; i < rep; i++) v[k++] = (int)c;
    if (!*end) break;
    p = end + 1;
  }
  *counts = v;
  *n = k;
  return RT_OK;
}

/* ---- the resolver ------------------------------------------------------------------------ */

static const char *env_get(const rt_slurm_opts *o, const char *name) {
  return o->env ? o->env(name, o->env_arg) : getenv(name);
}

/* The first of names that is set; the error names the first (TF's message). */
static const char *slurm_var(const rt_slurm_opts *o, const char *const *names, rt_status *st) {
  for (int i = 0; names[i]; i++) {
    const char *v = env_get(o, names[i]);
    if (v) return v;
  }
  rt_error(st, RT_FAILED_PRECONDITION, "%s not found in environment. Not running inside a SLURM step?", names[0]);
  return NULL;
}

static int parse_int_var(const char *name, const char *v, int *out, rt_status *st) {
  char *end;
  errno = 0;
  long x = strtol(v, &end, 10);
  if (end == v || *end || errno || x < 0 || x > 10000000)
    return rt_error(st, RT_INVALID_ARGUMENT, "%s is '%s', not a number", name, v);
  *out = (int)x;
  return RT_OK;
}

typedef struct node { const char *host; int tasks; } node;

static int node_cmp(const void *a, const void *b) {
  return strcmp(((const node *)a)->host, ((const node *)b)->host);
}

static int job_cmp(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Add host (a dict: a repeated host takes the later count, as TF's dict does). */
static void node_set(node *nodes, int *nn, const char *host, int tasks) {
  for (int i = 0; i < *nn; i++)
    if (!strcmp(nodes[i].host, host)) { nodes[i].tasks = tasks; return; }
  nodes[(*nn)++] = (node){host, tasks};
}

static const char *const NODELIST[] = {"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST", NULL};

int rt_slurm_resolve(const rt_slurm_opts *o, rt_slurm *out, rt_status *st) {
  memset(out, 0, sizeof *out);
  out->index = -1;
  static const char *const PROCID[] = {"SLURM_PROCID", NULL};
  static const char *const NTASKS[] = {"SLURM_STEP_NUM_TASKS", "SLURM_NTASKS", NULL};
  static const char *const TPN[] = {"SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE", NULL};
  const char *v = slurm_var(o, PROCID, st);
  if (!v || parse_int_var("SLURM_PROCID", v, &out->rank, st)) return st->code;
  rt_job_counts jobs = {0};
  if (o->jobs) {
    jobs = *o->jobs;
  } else {
    if (!(v = slurm_var(o, NTASKS, st))) return st->code;
    int nt = 0;
    if (parse_int_var(NTASKS[0], v, &nt, st)) return st->code;
    jobs.n = 1;
    snprintf(jobs.jobs[0].name, sizeof jobs.jobs[0].name, "worker");
    jobs.jobs[0].count = nt;
  }
  /* nodes and their task counts */
  char **hosts = NULL;
  int nhosts = 0, *tpn = NULL, ntpn = 0, rc = RT_OK;
  node *nodes = NULL;
  int nn = 0;
  if (o->n_tpn > 0) {
    nodes = xcalloc((size_t)o->n_tpn, sizeof *nodes);
    for (int i = 0; i < o->n_tpn; i++) node_set(nodes, &nn, o->tpn_hosts[i], o->tpn_counts[i]);
  } else {
    if (!(v = slurm_var(o, NODELIST, st)) || rt_slurm_hostlist(v, &hosts, &nhosts, st)) return st->code;
    nodes = xcalloc((size_t)nhosts, sizeof *nodes);
    if (o->tasks_per_node >= 0) {
      for (int i = 0; i < nhosts; i++) node_set(nodes, &nn, hosts[i], o->tasks_per_node);
    } else {
      if (!(v = slurm_var(o, TPN, st)) || rt_slurm_tasks_per_node(v, &tpn, &ntpn, st)) {
        rc = st->code;
        goto out;
      }
      for (int i = 0; i < nhosts && i < ntpn; i++) node_set(nodes, &nn, hosts[i], tpn[i]);   /* zip */
    }
  }
  int max_tpn = 0, num_tasks = 0;
  for (int i = 0; i < nn; i++) {
    if (nodes[i].tasks > max_tpn) max_tpn = nodes[i].tasks;
    num_tasks += nodes[i].tasks;
  }
  if (!nn) {
    rc = rt_error(st, RT_INVALID_ARGUMENT, "no nodes: the node list and the tasks per node are empty");
    goto out;
  }
  int gpn = o->gpus_per_node, gpt = o->gpus_per_task;
  const char *cvd = env_get(o, "CUDA_VISIBLE_DEVICES");
  char **visible = NULL;
  int nvisible = 0;
  if (cvd && *cvd) {   /* "2,3": the GPUs Slurm gave this job; the ids handed out index them */
    strv s = {0};
    for (const char *p = cvd;;) {
      size_t l = strcspn(p, ",");
      strv_push(&s, p, l);
      if (!p[l]) break;
      p += l + 1;
    }
    visible = s.v;
    nvisible = s.n;
  }
  if (gpn < 0) gpn = nvisible;
  if (gpt < 0) gpt = max_tpn ? gpn / max_tpn : 0;
  out->gpus_per_node = gpn;
  out->max_tasks_per_node = max_tpn;
  out->gpus_per_task = gpt;
  out->ntasks = num_tasks;
  if (max_tpn * gpt > gpn) {
    rc = rt_error(st, RT_FAILED_PRECONDITION, "Requested more GPUs per node than available.");
    goto gpus;
  }
  if (rt_job_counts_total(&jobs) != num_tasks) {
    rc = rt_error(st, RT_FAILED_PRECONDITION, "Requested %d tasks but only %d were assigned.", rt_job_counts_total(&jobs),
                  num_tasks);
    goto gpus;
  }
  if (out->rank >= num_tasks) {
    rc = rt_error(st, RT_FAILED_PRECONDITION, "SLURM_PROCID is %d but the step has %d tasks", out->rank, num_tasks);
    goto gpus;
  }
  /* task_list: nodes sorted by name, port_base + k for the k-th task on a node */
  qsort(nodes, (size_t)nn, sizeof *nodes, node_cmp);
  char (*addr)[300] = xcalloc((size_t)num_tasks, sizeof *addr);
  int r = 0;
  for (int i = 0; i < nn; i++)
    for (int k = 0; k < nodes[i].tasks; k++, r++) {
      snprintf(addr[r], sizeof addr[r], "%s:%d", nodes[i].host, o->port_base + k);
      if (r != out->rank) continue;
      snprintf(out->host, sizeof out->host, "%s", nodes[i].host);
      out->port = o->port_base + k;
      out->port_offset = k;
      size_t off = 0;
      for (int g = k * gpt; g < (k + 1) * gpt && off < sizeof out->gpus; g++) {
        const char *id = g < nvisible ? visible[g] : NULL;
        char num[16];
        if (!id) snprintf(num, sizeof num, "%d", g), id = num;
        off += (size_t)snprintf(out->gpus + off, sizeof out->gpus - off, "%s%s", off ? "," : "", id);
      }
    }
  /* jobs in name order, each the next slice of the ranks */
  const char *names[RT_MAX_JOBS];
  for (int j = 0; j < jobs.n; j++) names[j] = jobs.jobs[j].name;
  qsort(names, (size_t)jobs.n, sizeof *names, job_cmp);
  out->cluster = rt_cluster_new();
  int start = 0;
  for (int j = 0; j < jobs.n; j++) {
    int count = 0;
    for (int q = 0; q < jobs.n; q++)
      if (!strcmp(jobs.jobs[q].name, names[j])) count = jobs.jobs[q].count;
    for (int i = 0; i < count; i++) rt_cluster_add(out->cluster, names[j], i, addr[start + i]);
    if (out->rank >= start && out->rank < start + count) {
      snprintf(out->job, sizeof out->job, "%s", names[j]);
      out->index = out->rank - start;
    }
    start += count;
  }
  free(addr);
gpus:
  rt_strv_free(visible, nvisible);
out:
  free(nodes);
  free(tpn);
  rt_strv_free(hosts, nhosts);
  return rc;
}

void rt_slurm_clear(rt_slurm *s) {
  rt_cluster_free(s->cluster);
  s->cluster = NULL;
}
