/* The CPUs this process may use (cpus.h). */
#define _GNU_SOURCE
#include "runtime/cpus.h"

#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int rt_cpu_max_parse(const char *text, long *quota_us, long *period_us) {
  char q[32];
  long p = 100000;
  int n = sscanf(text, "%31s %ld", q, &p);
  if (n < 1) return -1;
  char *end;
  long v = strtol(q, &end, 10);
  if (!strcmp(q, "max")) v = -1;
  else if (*end) return -1;
  *quota_us = v;
  *period_us = p > 0 ? p : 100000;
  return 0;
}

static int read_text(const char *path, char *buf, size_t len) {
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  size_t n = fread(buf, 1, len - 1, f);
  fclose(f);
  buf[n] = '\0';
  return n ? 0 : -1;
}

/* Keep the tighter of two limits (quota/period as a CPU count). */
static void tighter(rt_cpu_limits *l, long q, long p) {
  if (q <= 0 || p <= 0) return;
  if (l->quota_us <= 0 || (double)q / (double)p < (double)l->quota_us / (double)l->period_us)
    l->quota_us = q, l->period_us = p;
}

/* Walk dir (a cgroup directory under its mount) up to mnt, reading each level's limit. */
static void walk(rt_cpu_limits *l, const char *mnt, const char *cg, bool v2) {
  char dir[1024], path[1100], text[128];
  snprintf(dir, sizeof dir, "%s%s", mnt, strcmp(cg, "/") ? cg : "");
  for (;;) {
    long q, p;
    if (v2) {
      snprintf(path, sizeof path, "%s/cpu.max", dir);
      if (!read_text(path, text, sizeof text) && !rt_cpu_max_parse(text, &q, &p)) tighter(l, q, p);
    } else {
      snprintf(path, sizeof path, "%s/cpu.cfs_quota_us", dir);
      char pt[64];
      if (!read_text(path, text, sizeof text)) {
        snprintf(path, sizeof path, "%s/cpu.cfs_period_us", dir);
        if (!read_text(path, pt, sizeof pt)) {
          q = atol(text), p = atol(pt);
          tighter(l, q, p);
        }
      }
    }
    if (strlen(dir) <= strlen(mnt)) break;
    char *slash = strrchr(dir + strlen(mnt), '/');
    if (!slash) break;
    *slash = '\0';
  }
}

static void cgroup_quota(rt_cpu_limits *l) {
  FILE *f = fopen("/proc/self/cgroup", "r");
  if (!f) return;
  char line[1024];
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = '\0';
    char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c2) continue;
    *c1 = *c2 = '\0';
    const char *ctrl = c1 + 1, *cg = c2 + 1;
    if (!strcmp(line, "0") && !*ctrl) {
      walk(l, "/sys/fs/cgroup", cg, true);
      continue;
    }
    char list[256];   /* v1: "cpu,cpuacct" (or "cpuacct,cpu") names the cpu controller */
    snprintf(list, sizeof list, ",%s,", ctrl);
    if (!strstr(list, ",cpu,")) continue;
    char mnt[300];
    snprintf(mnt, sizeof mnt, "/sys/fs/cgroup/%s", ctrl);
    if (access(mnt, F_OK)) snprintf(mnt, sizeof mnt, "/sys/fs/cgroup/cpu");
    walk(l, mnt, cg, false);
  }
  fclose(f);
}

static int env_int(const char *name) {
  const char *e = getenv(name);
  if (!e || !*e) return 0;
  long v = atol(e);   /* SLURM_CPUS_ON_NODE may be "4" or, in heterogeneous jobs, "4(x2)" */
  return v > 0 && v < 1 << 20 ? (int)v : 0;
}

void rt_cpu_limits_query(rt_cpu_limits *l) {
  memset(l, 0, sizeof *l);
  long on = sysconf(_SC_NPROCESSORS_ONLN);
  l->online = on > 0 ? (int)on : 1;
  cpu_set_t set;
  if (!sched_getaffinity(0, sizeof set, &set)) l->affinity = CPU_COUNT(&set);
  cgroup_quota(l);
  l->slurm_per_task = env_int("SLURM_CPUS_PER_TASK");
  l->slurm_on_node = env_int("SLURM_CPUS_ON_NODE");
}

int rt_cpus_for_task(const rt_cpu_limits *l, int tasks, char *why, size_t why_len) {
  char buf[256];
  size_t off = 0;
#define SAY(...) (off += (size_t)snprintf(buf + off, off < sizeof buf ? sizeof buf - off : 0, __VA_ARGS__))
  int online = l->online > 0 ? l->online : 1;
  int n = l->affinity > 0 ? l->affinity : online;
  bool own = l->affinity > 0 && l->affinity < online;
  if (l->affinity > 0) SAY("affinity %d of %d CPUs", l->affinity, online);
  else SAY("%d CPUs online", online);
  if (l->quota_us > 0 && l->period_us > 0) {
    long q = (l->quota_us + l->period_us - 1) / l->period_us;
    SAY(", cgroup quota %.3g CPUs", (double)l->quota_us / (double)l->period_us);
    if (q < n) n = (int)(q > 0 ? q : 1);
  }
  if (l->slurm_per_task > 0) {
    SAY(", SLURM_CPUS_PER_TASK %d", l->slurm_per_task);
    if (l->slurm_per_task < n) n = l->slurm_per_task;
    own = true;
  } else if (l->slurm_on_node > 0) {
    SAY(", SLURM_CPUS_ON_NODE %d", l->slurm_on_node);
    if (l->slurm_on_node < n) n = l->slurm_on_node;
  }
  if (tasks > 1 && !own) {
    SAY(", shared by %d tasks on this host", tasks);
    n /= tasks;
  }
#undef SAY
  if (n < 1) n = 1;
  if (why && why_len) snprintf(why, why_len, "%s", buf);
  return n;
}
