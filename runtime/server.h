/* A tfsh server: one task of a cluster, hosting a master service (sessions: placement,
 * partitioning, steps) and a worker service (devices, registered fragments, rendezvous),
 * both behind one ZeroMQ endpoint. tf.Session() with no target starts a local one on
 * inproc://, so local and distributed runs take the same path. */
#ifndef TFSH_SERVER_H
#define TFSH_SERVER_H

#include <stdbool.h>

#include "runtime/cluster.h"
#include "base/status.h"

typedef struct rt_server rt_server;

typedef struct rt_server_opts {
  int n_cpus;              /* CPU devices in this worker (ConfigProto device_count CPU) */
  const char *bind_host;   /* NULL: the host the cluster spec names for this task */
  int intra_op_threads;    /* ConfigProto's; 0: the process's policy (runtime/op.h) */
  int inter_op_threads;
  int max_gpus;            /* ConfigProto device_count GPU: 0 = every visible GPU, -1 = none,
                              n = the first n */
} rt_server_opts;

/* Start the server for task (job, index) of cluster. The task's address must be in the
 * cluster. Errors name the task and the address (port in use, unknown job, ...). */
rt_server *rt_server_start(const rt_cluster *c, const char *job, int index,
                           const rt_server_opts *o, rt_status *st);
/* A one-task cluster {"localhost": [inproc://tfsh-local-N]} in this process, with n_cpus
 * CPU devices (at least 1) and the GPUs max_gpus allows (rt_server_opts). */
rt_server *rt_server_start_local(int n_cpus, int max_gpus, rt_status *st);
/* The ZeroMQ endpoint clients connect to (tcp://host:port or inproc://...). */
const char *rt_server_endpoint(const rt_server *s);
/* "/job:J/replica:0/task:I" */
const char *rt_server_task(const rt_server *s);
/* Block until rt_server_stop is called (from another thread or a signal handler's
 * thread) — tf.train.Server.join(). */
void rt_server_join(rt_server *s);
/* Wait up to ms for the server to be stopped; true once it is. */
bool rt_server_wait(rt_server *s, int ms);
void rt_server_stop(rt_server *s);
void rt_server_free(rt_server *s);

/* The network's settings, for programs that start servers (tfsh server, tfsh keygen)
 * without reaching into net/ (net/net.h has the details): */
/* net_configure: the process's message size limit, cluster key file, and whether a server
 * may bind a non-loopback address without a key (each NULL/false: as the environment
 * says). Call it before starting a server. */
int rt_net_configure(const char *max_message_bytes, const char *key_file, bool insecure,
                     rt_status *st);
/* The help lines for the flags rt_net_configure takes. */
const char *rt_net_flags_help(void);
/* `tfsh keygen FILE` (argv[0] "keygen"): write a new cluster key; the exit code. */
int rt_net_keygen_main(int argc, char **argv);

#endif
