/* The CPUs this process may actually use: its affinity mask (taskset, Slurm's task binding,
 * numactl, a container's cpuset), a cgroup CPU quota (Docker --cpus, Kubernetes limits) and
 * Slurm's allocation; the default intra-op thread count comes from them (runtime/op.c),
 * never from the host's core count alone: BLIS's static split over OpenMP threads runs
 * 2.4x slower than one thread when two threads share one CPU. */
#ifndef TFSH_RUNTIME_CPUS_H
#define TFSH_RUNTIME_CPUS_H

#include <stddef.h>

typedef struct rt_cpu_limits {
  int online;                 /* CPUs online on the host (sysconf) */
  int affinity;               /* CPUs in sched_getaffinity's mask; 0: unknown */
  long quota_us, period_us;   /* cgroup CPU bandwidth; quota_us <= 0: none */
  int slurm_per_task;         /* SLURM_CPUS_PER_TASK; 0: unset */
  int slurm_on_node;          /* SLURM_CPUS_ON_NODE; 0: unset */
} rt_cpu_limits;

/* This process's limits: /proc/self/cgroup and the cgroup v2 cpu.max (walking up to the
 * root) or v1 cpu.cfs_quota_us / cpu.cfs_period_us, the affinity mask, the environment. */
void rt_cpu_limits_query(rt_cpu_limits *l);

/* The threads one of `tasks` tasks of this host gets from l (pure):
 *   n = the affinity count (else online), at most ceil(quota / period), at most
 *   SLURM_CPUS_PER_TASK, else at most SLURM_CPUS_ON_NODE;
 *   then divided among the tasks unless n is already this task's own: a mask narrower than
 *   the host (a binder such as taskset, numactl or Slurm's --cpu-bind sets one per task)
 *   or SLURM_CPUS_PER_TASK. At least 1. why (if not NULL) gets a short account such as
 *   "affinity 2 of 2 CPUs, cgroup quota 1.5 CPUs, 2 tasks on this host". */
int rt_cpus_for_task(const rt_cpu_limits *l, int tasks, char *why, size_t why_len);

/* cgroup v2 cpu.max text ("max 100000", "150000 100000") or v1 numbers: quota (<= 0:
 * none) and period in microseconds. Returns 0, or -1 when the text says nothing. */
int rt_cpu_max_parse(const char *text, long *quota_us, long *period_us);

#endif
