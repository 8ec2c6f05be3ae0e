/* The partitioner: splits a placed graph into one fragment per partition (per task in the
 * master, per device in a worker). Each data edge that crosses partitions becomes a
 * _Send / _Recv pair sharing a rendezvous key; one _Recv per destination partition per
 * tensor; a control edge that crosses becomes a _Send of a dummy value whose _Recv the
 * destination waits on. Only nodes marked needed are kept. */
#ifndef TFSH_PARTITION_H
#define TFSH_PARTITION_H

#include <stdint.h>

#include "runtime/graph.h"

typedef struct rt_partition {
  char *name;        /* the partition key: a task ("/job:w/replica:0/task:1") or a device */
  rt_graph *g;
} rt_partition;

/* How a device maps to a partition key, and a device's incarnation (for keys). */
typedef struct rt_partition_opts {
  bool by_task;                                   /* else by device */
  /* fragments borrow g's nodes (rt_graph_add_borrowed): only when they are read and freed
   * before g changes (the master's, packed at once under the session's lock) */
  bool borrow;
  uint64_t (*incarnation)(void *arg, const char *device);
  void *arg;
} rt_partition_opts;

/* needed: per node of g (NULL = all). Every kept node must have `assigned`. */
int rt_partition_graph(const rt_graph *g, const bool *needed, const rt_partition_opts *o,
                       rt_partition **parts, int *n_parts, rt_status *st);
void rt_partitions_free(rt_partition *parts, int n);
/* Index of the partition that holds node `name`, or -1. */
int rt_partition_of(const rt_partition *parts, int n, const char *name);

/* Nodes needed to compute fetches and run targets, stopping at fed tensors. */
int rt_graph_needed(const rt_graph *g, int n_feeds, const char *const *feeds, int n_fetches,
                    const char *const *fetches, int n_targets, const char *const *targets,
                    bool *needed, rt_status *st);

#endif
