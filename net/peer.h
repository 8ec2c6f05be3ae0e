/* Peers: one connection per peer endpoint for the whole process, opened on first use and
 * kept, shared by every thread. Requests to a peer are multiplexed over it: each carries
 * an id, and its reply is routed to the completion queue (net_cq) of whoever waits for it.
 * One reader thread serves every peer: it receives replies, routes them, and watches each
 * connection (ZeroMQ monitor events, heartbeats), so a peer that dies fails the requests
 * in flight to it instead of leaving them waiting.
 *
 *   net_peer *p = net_peer_get("tcp://10.0.0.2:2222", &st);
 *   net_in *rep;
 *   net_peer_call(p, net_msg_new("GetStatus"), &rep, &(net_wait){.timeout_ms = 2000}, &st);
 *
 * A fan-out sends several requests on one queue and takes the replies as they come:
 *
 *   net_cq *q = net_cq_new();
 *   for (i...) net_peer_send(peer[i], req[i], q, i, &st);      // tag i
 *   while (n--) net_cq_wait(q, &w, NULL, &tag, &rep, &st);       // any tag, in arrival order
 *   net_cq_free(q);                                              // abandons what is left
 *
 * A peer whose endpoint is served by a net_server of this process (net_server_alias) is
 * reached without a socket: the request goes to that server's handlers as it is (its
 * payload frames by reference), and a blocking call runs the handler on the caller's
 * thread (TF1's LocalMaster). Errors are the same as over a socket. */
#ifndef TFSH_NET_PEER_H
#define TFSH_NET_PEER_H

#include "net/client.h"   /* net_wait */

typedef struct net_peer net_peer;
typedef struct net_cq net_cq;

/* The peer for endpoint (created, connected in the background, on first use; lives as
 * long as the process). Uses the process's default options (net_options_default). */
net_peer *net_peer_get(const char *endpoint, rt_status *st);
const char *net_peer_endpoint(const net_peer *p);
/* Has a connection been made (always true for an in-process peer)? */
bool net_peer_connected(net_peer *p);
/* Is p served by a net_server of this process (no socket)? */
bool net_peer_local(net_peer *p);
/* Do requests to p go on its direct lane now (net/lane.h), not through ZeroMQ? */
bool net_peer_on_lane(net_peer *p);

net_cq *net_cq_new(void);
/* Free q; replies still owed to it are discarded when they come. */
void net_cq_free(net_cq *q);

/* Send req (consumed) to p; its reply, or the error that ends it (an "error" reply, a lost
 * connection, a refused handshake), is delivered to q with tag. *id (if not NULL) is the
 * request's id, for net_cq_forget. */
int net_peer_send(net_peer *p, net_msg *req, net_cq *q, uint64_t tag, uint64_t *id,
                  rt_status *st);
/* Send req and expect no reply (AbortStep, DeregisterGraph, pushed tensors): a reply, if
 * one comes, is discarded. */
int net_peer_send_oneway(net_peer *p, net_msg *req, rt_status *st);

/* Hold back this thread's one-way requests to peers already connected (pushed tensors
 * of a fragment run here), to send them together with what follows: the next request
 * this thread sends to such a peer takes its held ones along, in one write on a lane;
 * net_peer_flush sends what is left, in order, and returns the first send's error. */
void net_peer_hold(void);
int net_peer_flush(rt_status *st);

/* Wait for one delivery to q: *tag says which request, *reply is the caller's (NULL when
 * the status is an error). want (if not NULL) waits for that tag only, leaving others
 * queued. Timeout: RT_DEADLINE_EXCEEDED "no reply from ENDPOINT within N ms" (naming
 * the peer of the oldest request still owed); w->tick returning nonzero: RT_CANCELLED.
 * A wait inside a handler that a blocking in-process call runs on this thread also
 * calls the caller's tick (so Ctrl-C and the live view reach it). The return value is
 * the delivery's status; the wait's own failures (timeout, cancel) set *tag to
 * NET_CQ_NONE. */
#define NET_CQ_NONE UINT64_MAX
int net_cq_wait(net_cq *q, const net_wait *w, const uint64_t *want, uint64_t *tag,
                net_in **reply, rt_status *st);
/* Stop waiting for a request (its reply will be discarded). */
void net_cq_forget(net_cq *q, net_peer *p, uint64_t id);
/* Requests sent on q and not yet delivered or forgotten. */
int net_cq_owed(net_cq *q);

/* Inside a handler that a blocking in-process call runs on this thread (and inside
 * those it runs in turn): call those calls' ticks. Nonzero: one of them wants out (Ctrl-C,
 * a master whose other parts failed). 0 elsewhere. For a handler's long waits. */
int net_wait_outer(void);
/* Is this thread running a handler for a blocking in-process call that has a tick? */
bool net_wait_outer_here(void);
/* Has q a delivery that is an error (without taking it)? */
bool net_cq_has_error(net_cq *q);

/* Send and wait for the reply (w NULL: forever). */
int net_peer_call(net_peer *p, net_msg *req, net_in **reply, const net_wait *w, rt_status *st);

#endif
