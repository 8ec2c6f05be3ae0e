/* Unary gRPC calls to TensorFlow's own servers (TF1's MasterService and WorkerService), on
 * Debian's gRPC C core.
 *
 * libgrpc is loaded on first use (dlopen "libgrpc.so.29"), not linked: it brings abseil,
 * OpenSSL, c-ares and re2 (about 70 libraries), which every other tfsh process would pay
 * for at start-up; without it only these calls fail, with the package to install. Calls
 * carry raw protobuf bytes; the runtime encodes and decodes them (runtime/tfsession.c,
 * runtime/tfmaster.c, runtime/probe.c). */
#ifndef TFSH_NET_GRPC_H
#define TFSH_NET_GRPC_H

#include <stddef.h>
#include <stdint.h>

/* gRPC's status codes (grpc/status.h), for callers that do not include gRPC. */
enum {
  NET_GRPC_OK = 0,
  NET_GRPC_CANCELLED = 1,
  NET_GRPC_UNKNOWN = 2,
  NET_GRPC_DEADLINE_EXCEEDED = 4,
  NET_GRPC_UNIMPLEMENTED = 12,
  NET_GRPC_INTERNAL = 13,
  NET_GRPC_UNAVAILABLE = 14,
  NET_GRPC_RESOURCE_EXHAUSTED = 8,
};

typedef struct net_grpc_call {
  const char *target;           /* "host:port" */
  const char *method;           /* "/tensorflow.WorkerService/GetStatus" */
  const uint8_t *req;
  size_t req_len;
  /* results */
  int code;                     /* a gRPC status code; -1: the call could not start */
  char details[300];            /* the server's or gRPC's message */
  uint8_t *resp;                /* malloc'd reply (NULL unless code is 0) */
  size_t resp_len;
  double ms;                    /* how long the call took */
} net_grpc_call;

/* Runs n calls at once, each bounded by timeout_ms, and returns when all have ended
 * (never later than timeout_ms plus a little). 0, or -1 with why when gRPC cannot be
 * loaded (then no call ran). Replies over max_reply bytes fail with RESOURCE_EXHAUSTED. */
int net_grpc_run(net_grpc_call *calls, int n, int timeout_ms, size_t max_reply, char *why,
                 size_t why_len);
void net_grpc_call_clear(net_grpc_call *c);   /* frees resp */

/* A channel kept open for many calls (a session's steps share one connection). Thread-safe:
 * calls of several threads may run on one channel at once. */
typedef struct net_grpc_channel net_grpc_channel;
net_grpc_channel *net_grpc_open(const char *target, size_t max_reply, char *why, size_t why_len);
/* One call on ch, bounded by timeout_ms (<= 0: a day). Returns when it has ended; the
 * results are in c as for net_grpc_run. */
void net_grpc_call_on(net_grpc_channel *ch, net_grpc_call *c, int64_t timeout_ms);
/* The same, calling tick about every NET_GRPC_TICK_MS while the call runs (a live view, a
 * Ctrl-C check); a nonzero return cancels the call, which then ends CANCELLED. */
enum { NET_GRPC_TICK_MS = 50 };
void net_grpc_call_ticking(net_grpc_channel *ch, net_grpc_call *c, int64_t timeout_ms,
                           int (*tick)(void *arg, int64_t elapsed_ms), void *arg);
void net_grpc_close(net_grpc_channel *ch);   /* NULL: nothing */

/* Serving: TF's clients call this process (runtime/tfmaster.c). fn answers one call:
 * 0 with *rep (malloc'd, freed here) or a gRPC status code with err; it runs on one of
 * `threads` serving threads, several at once. The server runs until the process ends. */
enum { NET_GRPC_MAX_SERVE_THREADS = 16 };
typedef int (*net_grpc_handler)(void *arg, const char *method, const uint8_t *req, size_t n,
                                uint8_t **rep, size_t *rep_n, char *err, size_t err_len);
typedef struct net_grpc_server net_grpc_server;
net_grpc_server *net_grpc_serve(const char *addr, int threads, net_grpc_handler fn, void *arg,
                                char *why, size_t why_len);

#endif
