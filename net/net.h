/* The network layer: ZeroMQ sockets carrying msgpack-framed messages (net/msg.h),
 * a request/reply server with a growing pool of handler threads (net/server.h) and a
 * client with blocking, ticking and fan-out calls (net/client.h). Wire spec:
 * net/PROTOCOL.md. */
#ifndef TFSH_NET_H
#define TFSH_NET_H

#include <stdbool.h>

#include "net/msg.h"

/* The process-wide ZeroMQ context, created on first use (thread-safe) and never
 * terminated: sockets close with LINGER 0, so nothing waits at exit. */
void *net_ctx(void);

typedef struct net_options {
  net_limits limits;    /* what a received message may contain */
  int heartbeat_ms;     /* ZMTP heartbeat interval; a peer silent for 3 intervals is
                           dead (connection dropped). 0: no heartbeats */
  int max_threads;      /* server: handler threads at most */
  const char *key_file; /* cluster key (net_keygen): every server a CURVE server, every
                           client a CURVE client with this keypair. NULL: the file named by
                           $TFSH_CLUSTER_KEY, if set; "": no key, whatever the environment */
  bool insecure;        /* server: may bind a non-loopback address without a key */
} net_options;

/* The process's defaults: built in (limits as net_limits_default, heartbeat 400 ms, 256
 * handler threads, no key file, not insecure), then $TFSH_MAX_MESSAGE_BYTES, then what
 * net_configure set. Servers and clients given NULL options use these. */
void net_options_default(net_options *o);

/* ---- configuration (tfsh server flags; the environment) ------------------------------
 *
 * Environment, read by net_options_default (so every server and client of a process
 * obeys it) and checked by net_server_new / net_client_new, which fail on a bad value:
 *   TFSH_MAX_MESSAGE_BYTES=N   max_frame and max_header (net_limits_set_message_bytes)
 *   TFSH_CLUSTER_KEY=FILE      the cluster key file
 *   TFSH_INSECURE=1            insecure (a script's tf.train.Server has no --insecure) */

/* "1048576", "64k", "64M", "64MiB", "4G": bytes. RT_INVALID_ARGUMENT naming the text. */
int net_parse_bytes(const char *s, uint64_t *out, rt_status *st);
/* One limit for a whole frame: max_frame = max_header = n. */
void net_limits_set_message_bytes(net_limits *l, uint64_t n);
/* Set the process's defaults from command-line values (each NULL/false: unchanged), on
 * top of the environment: max_message_bytes as net_parse_bytes reads it, key_file a
 * cluster key (checked now: unreadable, malformed or readable by others is an error),
 * insecure allows a non-loopback bind without a key. For `tfsh server`; call it before
 * starting the server. */
int net_configure(const char *max_message_bytes, const char *key_file, bool insecure,
                  rt_status *st);
/* The lines `tfsh server --help` shows for the flags net_configure takes. */
extern const char net_server_flags_help[];

/* ---- cluster keys (net/security.c) -------------------------------------------------- */

/* Write a new cluster key (a CURVE keypair, Z85) to path, mode 0600, refusing to
 * overwrite an existing file. */
int net_keygen(const char *path, rt_status *st);
/* `tfsh keygen FILE`: argv[0] is "keygen". Prints what it did; returns the exit code. */
int net_keygen_main(int argc, char **argv);

#endif
