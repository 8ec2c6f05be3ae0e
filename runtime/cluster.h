/* A cluster: jobs of tasks, each task a server address (TF1's ClusterSpec, resolved). */
#ifndef TFSH_CLUSTER_H
#define TFSH_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>

#include "runtime/status.h"

typedef struct rt_task_addr {
  char *job;
  int index;
  char *addr;      /* "host:port", or a ZeroMQ endpoint ("inproc://...", "tcp://...") */
} rt_task_addr;

typedef struct rt_cluster {
  int n;
  rt_task_addr *tasks;
} rt_cluster;

rt_cluster *rt_cluster_new(void);
void rt_cluster_free(rt_cluster *c);
rt_cluster *rt_cluster_copy(const rt_cluster *c);
/* Add a task; a duplicate (job, index) replaces the address. */
void rt_cluster_add(rt_cluster *c, const char *job, int index, const char *addr);
const rt_task_addr *rt_cluster_find(const rt_cluster *c, const char *job, int index);
/* ZeroMQ endpoint for an address: "host:port" → "tcp://host:port"; URLs pass through,
 * "grpc://" and "tfs://" are stripped to tcp. */
void rt_endpoint(const char *addr, char *buf, size_t n);
/* "/job:J/replica:0/task:I" */
void rt_task_name(const char *job, int index, char *buf, size_t n);

#endif
