/* A client: one DEALER socket connected to one server, used by one thread at a time.
 * net_call sends a request and waits for its reply; net_send / net_poll / net_recv let one
 * thread keep requests in flight to several servers and react to the first answer. */
#ifndef TFSH_NET_CLIENT_H
#define TFSH_NET_CLIENT_H

#include "net/net.h"

typedef struct net_client net_client;

/* Connect (the server need not be up yet: the request is delivered once it is).
 * opts NULL: net_options_default. */
net_client *net_client_new(const char *endpoint, const net_options *opts, rt_status *st);
void net_client_free(net_client *c);
const char *net_client_endpoint(const net_client *c);
/* Has a connection been made (tcp and ipc; inproc reports true)? For "still waiting for
 * task N: not connected" versus "connected, no answer yet". */
bool net_client_connected(const net_client *c);

/* How long to wait. tick, if set, is called every tick_ms with the time waited so far;
 * returning nonzero cancels the wait (RT_CANCELLED). */
typedef struct net_wait {
  int timeout_ms;                              /* < 0: no limit */
  int tick_ms;
  int (*tick)(void *arg, int64_t elapsed_ms);
  void *arg;
} net_wait;

/* Send req (consumed) and wait for the reply with its id. An "error" reply becomes the
 * status (its code and message, unchanged). RT_DEADLINE_EXCEEDED "no reply from
 * ENDPOINT within N ms"; RT_UNAVAILABLE "connection to ENDPOINT lost ..." when the peer
 * closes or stops answering heartbeats mid-call. *reply is the caller's to free. */
int net_call(net_client *c, net_msg *req, net_in **reply, int timeout_ms, rt_status *st);
int net_call_wait(net_client *c, net_msg *req, net_in **reply, const net_wait *w,
                  rt_status *st);

/* Send a request whose reply nobody will wait for (fire and forget: DeregisterGraph,
 * AbortStep). It is not pending, so a dead peer does not fail later calls. */
int net_send_oneway(net_client *c, net_msg *req, rt_status *st);
/* Send without waiting; *id (if not NULL) identifies the reply. */
int net_send(net_client *c, net_msg *req, uint64_t *id, rt_status *st);
/* Wait until one of cs has a reply (or lost its connection) and set *ready to its index.
 * Same timeout and cancellation as net_call_wait (w NULL: wait forever). */
int net_poll(net_client *const *cs, int n, const net_wait *w, int *ready, rt_status *st);
/* Take one reply without waiting: RT_OK with *reply NULL when none is there. *id is the
 * request it answers, also when an "error" reply or a lost connection is returned as a
 * status (a lost connection fails every request in flight: *id 0). Replies to requests
 * abandoned by a timed-out net_call are discarded. */
int net_recv(net_client *c, net_in **reply, uint64_t *id, rt_status *st);

#endif
