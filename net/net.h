/* The network layer: ZeroMQ sockets carrying msgpack-framed messages (net/msg.h),
 * a request/reply server with a growing pool of handler threads (net/server.h) and a
 * client with blocking, ticking and fan-out calls (net/client.h). Wire spec:
 * net/PROTOCOL.md. */
#ifndef TFSH_NET_H
#define TFSH_NET_H

#include "net/msg.h"

/* The process-wide ZeroMQ context, created on first use (thread-safe) and never
 * terminated: sockets close with LINGER 0, so nothing waits at exit. */
void *net_ctx(void);

typedef struct net_options {
  net_limits limits;    /* what a received message may contain */
  int heartbeat_ms;     /* ZMTP heartbeat interval; a peer silent for 3 intervals is
                           dead (connection dropped). 0: no heartbeats */
  int max_threads;      /* server: handler threads at most */
} net_options;

/* net_limits_default, heartbeat 500 ms, 256 handler threads. */
void net_options_default(net_options *o);

#endif
