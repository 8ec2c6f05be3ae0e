/* A request/reply server: one ROUTER socket bound to every endpoint (and, without a
 * cluster key, a direct lane's port beside it: net/lane.h), served by one thread at a time
 * (the I/O thread, or leader), and a pool of handler threads that grows on demand
 * (handlers may block for a long time: a RunStep handler waits on RunGraph calls, possibly
 * to this same server). The leader runs the first request of what it reads itself, after
 * handing the lead to an idle thread: a handler may run on any of the server's threads.
 *
 *   static void handle(void *user, net_req *req) {
 *     const net_in *in = net_req_msg(req);
 *     net_msg *out = net_msg_new("Pong");
 *     net_reply(req, out);                      // from any thread, exactly once
 *   }
 *   net_server *s = net_server_new((const char *[]){"tcp://127.0.0.1:*"}, 1, handle,
 *                                  NULL, NULL, &st);
 *
 * A request whose header fails validation never reaches the handler: the I/O thread
 * answers it with an "error" message and keeps serving. */
#ifndef TFSH_NET_SERVER_H
#define TFSH_NET_SERVER_H

#include "net/net.h"

typedef struct net_server net_server;
typedef struct net_req net_req;

/* Runs on a handler thread; owns req until it passes it to net_reply*. */
typedef void (*net_handler)(void *user, net_req *req);

/* Bind every endpoint (tcp://host:port, tcp://host:* for any port, ipc://path,
 * inproc://name). opts NULL: net_options_default. Errors: RT_UNAVAILABLE
 * "cannot listen on tcp://127.0.0.1:2222: address already in use" (or not available),
 * RT_INVALID_ARGUMENT for a malformed endpoint. */
net_server *net_server_new(const char *const *endpoints, int n, net_handler handler,
                           void *user, const net_options *opts, rt_status *st);
/* The i-th endpoint as bound (the port chosen for tcp://host:*). */
const char *net_server_endpoint(const net_server *s, int i);
/* Stop serving: close the socket (LINGER 0), drop requests not yet handed to a handler,
 * wake idle threads. Returns at once; replies sent after it are discarded. */
void net_server_stop(net_server *s);
/* Stop, wait until every request handed to a handler has been answered (a handler
 * blocked on something must be cancelled by the owner first), join the threads, free. */
void net_server_free(net_server *s);

/* Also answer, inside this process, to endpoint: a name by which clients of this process
 * reach this server (the cluster spec's tcp://localhost:2222 for one bound on
 * tcp://127.0.0.1:2222). Their requests (net/peer.h) skip the socket. */
void net_server_alias(net_server *s, const char *endpoint);
/* Handle requests of this type on the I/O thread, not a handler thread: for handlers
 * that never block (a pushed tensor dropped into a table). At most NET_SERVER_MAX_INLINE
 * types: later ones go to handler threads. */
#define NET_SERVER_MAX_INLINE 4
void net_server_inline(net_server *s, const char *type);

const net_in *net_req_msg(const net_req *r);
/* Free r without answering (one-way requests). */
void net_req_done(net_req *r);
/* Answer and free r; reply takes the request's id. Thread-safe. RT_CANCELLED when the
 * server has stopped (the reply is dropped). */
int net_reply(net_req *r, net_msg *reply);
/* Answer with an "error" message {"code": code, "msg": ...}. */
int net_reply_error(net_req *r, int code, const char *fmt, ...)
  __attribute__((format(printf, 3, 4)));

#endif
