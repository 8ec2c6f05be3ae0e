/* Launching a cluster: a spec given as task counts ("ps=1 worker=2") rather than
 * addresses, free ports on this host, and Slurm's environment (runtime/slurm.c). */
#ifndef TFSH_LAUNCH_H
#define TFSH_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>

#include "base/status.h"
#include "runtime/cluster.h"

#define RT_MAX_JOBS 32

typedef struct rt_job_counts {
  int n;
  struct { char name[64]; int count; } jobs[RT_MAX_JOBS];
} rt_job_counts;

/* Task counts: "ps=1 worker=2", "ps=1,worker=2" or JSON {"ps": 1, "worker": 2}.
 * Returns 1 when text is a count spec (parsed into out), 0 when it is not one (an address
 * spec: JSON with lists, or job|h:p), -1 when it is a count spec with a mistake (st). */
int rt_job_counts_parse(const char *text, rt_job_counts *out, rt_status *st);
int rt_job_counts_total(const rt_job_counts *c);
/* "ps=1 worker=2" */
void rt_job_counts_format(const rt_job_counts *c, char *buf, size_t n);

/* A cluster of c's tasks on host, each on a port that is free on this machine now (the
 * ports are held together while they are picked, so no two tasks share one). */
rt_cluster *rt_cluster_on_free_ports(const rt_job_counts *c, const char *host, rt_status *st);

/* ---- Slurm (runtime/slurm.c) ------------------------------------------------------------ */

/* A Slurm hostlist: "n[1-2],m5,o[3-4,6,7-9]" -> n1 n2 m5 o3 o4 o6 o7 o8 o9, in order, no
 * deduplication; a range keeps its first number's zero padding ("[08-10]" -> 08 09 10).
 * A suffix or a second bracket after the first ("r[1-2]n[1-2]") are Slurm's too.
 * *hosts is an array of n strings; free it with rt_strv_free. */
int rt_slurm_hostlist(const char *list, char ***hosts, int *n, rt_status *st);
/* SLURM_TASKS_PER_NODE: "3(x2),2,1" -> 3 3 2 1. */
int rt_slurm_tasks_per_node(const char *s, int **counts, int *n, rt_status *st);
void rt_strv_free(char **v, int n);

typedef struct rt_slurm_opts {
  const rt_job_counts *jobs;   /* NULL: every Slurm task a "worker" */
  int port_base;               /* the first port on each node (TF's default 8888) */
  int gpus_per_node;           /* < 0: the number listed in CUDA_VISIBLE_DEVICES (0 if unset) */
  int gpus_per_task;           /* < 0: gpus_per_node / the most tasks on one node */
  int tasks_per_node;          /* < 0: from Slurm (or tpn_hosts when given) */
  int n_tpn;                   /* > 0: tasks per node given per host (TF's dict form) */
  const char *const *tpn_hosts;
  const int *tpn_counts;
  /* The environment: NULL is the process's own (getenv). */
  const char *(*env)(const char *name, void *arg);
  void *env_arg;
} rt_slurm_opts;

typedef struct rt_slurm {
  rt_cluster *cluster;         /* jobs in name order, each a slice of the ranks */
  int rank, ntasks;            /* SLURM_PROCID, and the tasks of the step */
  char job[64];                /* this process's task ("" when its rank has none) */
  int index;
  char host[256];              /* the node the spec puts this rank on, and its port */
  int port, port_offset;
  int gpus_per_node, gpus_per_task, max_tasks_per_node;
  char gpus[256];              /* CUDA_VISIBLE_DEVICES for this rank ("" without GPUs) */
} rt_slurm;

/* SlurmClusterResolver's resolution (TF's slurm_cluster_resolver.py): nodes sorted by
 * name, each with its tasks on port_base, port_base+1, ...; ranks fill the jobs in name
 * order; GPUs handed out gpus_per_task at a time on each node. Reads SLURM_PROCID,
 * SLURM_STEP_NUM_TASKS / SLURM_NTASKS, SLURM_STEP_NODELIST / SLURM_JOB_NODELIST /
 * SLURM_NODELIST, SLURM_STEP_TASKS_PER_NODE / SLURM_TASKS_PER_NODE, CUDA_VISIBLE_DEVICES.
 * Errors are TF's (RT_FAILED_PRECONDITION for a missing variable or a count that does
 * not add up, RT_INVALID_ARGUMENT for a malformed list). */
int rt_slurm_resolve(const rt_slurm_opts *o, rt_slurm *out, rt_status *st);
void rt_slurm_clear(rt_slurm *s);

#endif
