/* Internal to runtime/: the parts of a server that master.c and worker.c share. The two
 * never call each other: server.c dispatches to both by their tables of messages
 * (runtime/messages.h), and what both put on the wire (devices, the cluster digest) is
 * runtime/wire_fmt.h's. */
#ifndef TFSH_SERVER_INT_H
#define TFSH_SERVER_INT_H

#include <pthread.h>
#include <stdint.h>

#include "net/peer.h"
#include "net/server.h"
#include "runtime/cluster.h"
#include "runtime/device.h"
#include "runtime/messages.h"
#include "runtime/server.h"

struct rt_server {
  rt_cluster *cluster;
  char job[64];
  int index;
  char task[128];            /* /job:J/replica:0/task:I */
  char endpoint[256];        /* as bound */
  uint64_t incarnation;
  net_server *net;
  rt_master *master;
  rt_worker *worker;
  rt_device *const *devices;   /* the worker's (set by rt_worker_new), for ListDevices */
  int n_devices;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool stopped;
};

/* worker.c */
rt_worker *rt_worker_new(rt_server *s, int n_cpus, int max_gpus);
void rt_worker_free(rt_worker *w);
/* Abort every step and fail new ones, so blocked handlers return (before the net server
 * is freed, which waits for them). */
void rt_worker_shutdown(rt_worker *w);

/* master.c */
rt_master *rt_master_new(rt_server *s);
void rt_master_free(rt_master *m);

/* Random 64-bit ids (step ids, incarnations, handles). */
uint64_t rt_random_u64(void);

#endif
