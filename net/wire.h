/* Internal to net/: moving messages through ZeroMQ sockets. Not for other layers. */
#ifndef TFSH_NET_WIRE_H
#define TFSH_NET_WIRE_H

#include <stdatomic.h>

#include <zmq.h>

#include "net/net.h"

/* An outgoing message: the header being packed, and payloads not yet handed to ZeroMQ.
 * The header starts with a map32 whose count, and an "id" uint64 whose value, are
 * patched in when it is sent (net_msg_seal), so fields can be added one by one. */
typedef struct net_payload {
  void *data;
  size_t len;
  net_free_fn free_fn;
  void *arg;
} net_payload;

struct net_msg {
  msgpack_sbuffer sb;
  msgpack_packer pk;
  uint32_t nfields;
  size_t id_at;              /* offset of the id's 8 bytes in sb */
  char type[NET_TYPE_MAX + 1];
  net_payload *frames;
  size_t nframes, cap, sent; /* frames[0, sent) belong to ZeroMQ */
};

struct net_frame {
  atomic_int refs;
  zmq_msg_t zm;
};

struct net_in {
  zmq_msg_t head;            /* the header frame, when received from a socket */
  void *copy;                /* else the header bytes (net_in_parse) */
  msgpack_zone zone;
  msgpack_object root;
  uint64_t id;
  char type[NET_TYPE_MAX + 1];
  net_frame **frames;
  size_t nframes;
};

/* Write count and id into the header; return its bytes. */
void net_msg_seal(net_msg *m, uint64_t id, const void **p, size_t *len);
/* Allocate an empty net_in and parse a header into it (bytes must outlive it). */
net_in *net_in_alloc(void);
int net_in_parse_at(net_in *m, const void *header, size_t len, const net_limits *lim,
                    uint64_t *id_out, rt_status *st);
net_frame *net_frame_new(void);

#define NET_ROUTING_MAX 255  /* ZeroMQ routing ids are at most 255 bytes */

/* Send m (consumed, even on error) with request id; routing (len > 0) goes first as the
 * ROUTER's addressing frame. Returns 0 or an errno. */
int net_wire_send(void *sock, const void *routing, size_t rlen, net_msg *m, uint64_t id);

/* Receive one whole message without blocking. routing (if not NULL, ROUTER sockets)
 * gets the addressing frame. Returns RT_OK with *out set, NET_AGAIN when nothing could
 * be received (errno says why: EAGAIN, ETERM, ...), or a parse error (the rest of the
 * message drained, *id_out the request id if it could be read, st filled). */
#define NET_AGAIN (-1)
int net_wire_recv(void *sock, const net_limits *lim, uint8_t *routing, size_t *rlen,
                  net_in **out, uint64_t *id_out, rt_status *st);

/* A message handed over inside this process, without a socket: m (consumed) becomes a
 * received message with request id, its header parsed against lim (NULL: no limits
 * beyond msgpack's own), its payloads passed by reference. */
int net_wire_local(net_msg *m, uint64_t id, const net_limits *lim, net_in **out, rt_status *st);

/* In-process calls (server.c, for peer.c). done is called once, from whichever thread
 * answers, with the reply (the callee's to free) or a status; NULL: nobody waits. */
typedef void (*net_local_fn)(void *arg, uint64_t id, net_in *reply, const rt_status *st);
/* If a server of this process answers to endpoint, hand it req (consumed) with id and
 * return true: run_here runs the handler on this thread, else one of its handler
 * threads does. False (req untouched) when none does. */
bool net_server_local(const char *endpoint, net_msg *req, uint64_t id, bool run_here,
                      net_local_fn done, void *arg);
bool net_server_is_local(const char *endpoint);

/* ---- a connection's health (client.c, peer.c) --------------------------------------- */

/* What a socket's monitor has said about its one connection. */
typedef struct net_link {
  void *mon;                 /* PAIR connected to the socket's monitor; NULL for inproc */
  const char *endpoint;
  bool connected, ever_connected;
  bool curve;                /* this end holds a cluster key */
  bool refused;              /* the last handshake failed: key mismatch or missing */
  bool handshaken;           /* a handshake succeeded once */
  bool lost;                 /* disconnected while requests were pending */
  int64_t down_since;        /* when the connection dropped (net_now_ms), 0 while up */
  int64_t wait_down;         /* since when requests wait on a dropped connection */
} net_link;

/* Monitor sock (connection, handshake events) for l; inproc needs none (always up). */
int net_link_open(net_link *l, void *sock, const char *endpoint, rt_status *st);
void net_link_close(net_link *l, void *sock);
/* Take the monitor's events; pending: requests are in flight (a drop loses them). */
void net_link_events(net_link *l, bool pending);
/* With requests pending: has the peer been gone long enough to call them lost? A peer
 * that went away and is not back within a second of going is, and so is a server this process
 * talked to before (a fresh socket to a dead peer sees no event at all). */
void net_link_check(net_link *l);

/* If m is an "error" reply, its code (a valid one, else RT_UNKNOWN) and message into st;
 * 0 when m is no error. */
int net_wire_error_status(const net_in *m, rt_status *st);

/* An "error" reply: {"code": code, "msg": msg}. */
net_msg *net_wire_error(int code, const char *msg);

/* Set socket options common to both ends (LINGER 0, heartbeats, MAXMSGSIZE). */
int net_wire_setup(void *sock, const net_options *o);

int64_t net_now_ms(void);

/* ---- security.c ---------------------------------------------------------------------- */

/* A loaded cluster key: Z85 text, 40 characters each. */
typedef struct net_key {
  bool on;
  char pub[41], sec[41];
  char path[256];
} net_key;

/* The key o asks for (o->key_file, else $TFSH_CLUSTER_KEY): k->on false when none. Also
 * checks $TFSH_MAX_MESSAGE_BYTES, so a bad value fails the first server or client. */
int net_key_for(const net_options *o, net_key *k, rt_status *st);
/* CURVE server with k (and the process's ZAP handler admitting only clients holding the
 * same keypair); CURVE client with k. Return 0 or an errno. */
int net_curve_server(void *sock, const net_key *k);
int net_curve_client(void *sock, const net_key *k);
/* Is a tcp:// endpoint to bind on a loopback address (127.x, ::1, localhost, lo)?
 * ipc:// and inproc:// count as local. */
bool net_endpoint_local(const char *endpoint);

#endif
