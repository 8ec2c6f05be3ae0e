/* Unary gRPC calls on the gRPC C core, loaded on first use (grpc.h). */
#define _GNU_SOURCE
#include "net/grpc.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include "base/alloc.h"
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>

/* Every gRPC function used, resolved from libgrpc (and, through it, libgpr). */
#define GRPC_FNS(X)                                                                            \
  X(void, grpc_init, (void))                                                                   \
  X(grpc_channel_credentials *, grpc_insecure_credentials_create, (void))                      \
  X(void, grpc_channel_credentials_release, (grpc_channel_credentials *))                      \
  X(grpc_channel *, grpc_channel_create,                                                       \
    (const char *, grpc_channel_credentials *, const grpc_channel_args *))                     \
  X(void, grpc_channel_destroy, (grpc_channel *))                                              \
  X(grpc_completion_queue *, grpc_completion_queue_create_for_next, (void *))                  \
  X(grpc_completion_queue *, grpc_completion_queue_create_for_pluck, (void *))                 \
  X(grpc_event, grpc_completion_queue_pluck, (grpc_completion_queue *, void *, gpr_timespec, void *)) \
  X(grpc_event, grpc_completion_queue_next, (grpc_completion_queue *, gpr_timespec, void *))   \
  X(void, grpc_completion_queue_shutdown, (grpc_completion_queue *))                           \
  X(void, grpc_completion_queue_destroy, (grpc_completion_queue *))                            \
  X(grpc_call *, grpc_channel_create_call,                                                     \
    (grpc_channel *, grpc_call *, uint32_t, grpc_completion_queue *, grpc_slice,               \
     const grpc_slice *, gpr_timespec, void *))                                                \
  X(grpc_call_error, grpc_call_start_batch, (grpc_call *, const grpc_op *, size_t, void *, void *)) \
  X(grpc_call_error, grpc_call_cancel, (grpc_call *, void *))                                  \
  X(void, grpc_call_unref, (grpc_call *))                                                      \
  X(grpc_byte_buffer *, grpc_raw_byte_buffer_create, (grpc_slice *, size_t))                   \
  X(void, grpc_byte_buffer_destroy, (grpc_byte_buffer *))                                      \
  X(int, grpc_byte_buffer_reader_init, (grpc_byte_buffer_reader *, grpc_byte_buffer *))        \
  X(grpc_slice, grpc_byte_buffer_reader_readall, (grpc_byte_buffer_reader *))                  \
  X(void, grpc_byte_buffer_reader_destroy, (grpc_byte_buffer_reader *))                        \
  X(grpc_slice, grpc_slice_from_copied_buffer, (const char *, size_t))                         \
  X(void, grpc_slice_unref, (grpc_slice))                                                      \
  X(void, grpc_metadata_array_init, (grpc_metadata_array *))                                   \
  X(void, grpc_metadata_array_destroy, (grpc_metadata_array *))                                \
  X(gpr_timespec, gpr_now, (gpr_clock_type))                                                   \
  X(gpr_timespec, gpr_time_add, (gpr_timespec, gpr_timespec))                                  \
  X(gpr_timespec, gpr_time_from_millis, (int64_t, gpr_clock_type))                             \
  X(void, gpr_free, (void *))                                                                  \
  X(grpc_server *, grpc_server_create, (const grpc_channel_args *, void *))                    \
  X(void, grpc_server_register_completion_queue, (grpc_server *, grpc_completion_queue *, void *)) \
  X(grpc_server_credentials *, grpc_insecure_server_credentials_create, (void))                \
  X(void, grpc_server_credentials_release, (grpc_server_credentials *))                        \
  X(int, grpc_server_add_http2_port, (grpc_server *, const char *, grpc_server_credentials *)) \
  X(void, grpc_server_start, (grpc_server *))                                                  \
  X(grpc_call_error, grpc_server_request_call,                                                 \
    (grpc_server *, grpc_call **, grpc_call_details *, grpc_metadata_array *,                  \
     grpc_completion_queue *, grpc_completion_queue *, void *))                                \
  X(void, grpc_call_details_init, (grpc_call_details *))                                       \
  X(void, grpc_call_details_destroy, (grpc_call_details *))

static struct {
#define FIELD(ret, name, args) ret(*name) args;
  GRPC_FNS(FIELD)
#undef FIELD
  bool ok;
  char why[300];
} G;

static void load(void) {
  static const char *const names[] = {"libgrpc.so.29", "libgrpc.so"};
  void *h = NULL;
  for (size_t i = 0; i < sizeof names / sizeof *names && !h; i++) h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    snprintf(G.why, sizeof G.why, "cannot load gRPC (%s); install Debian's libgrpc29", dlerror());
    return;
  }
#define RESOLVE(ret, name, args)                                                   \
  if (!(*(void **)&G.name = dlsym(h, #name))) {                                    \
    snprintf(G.why, sizeof G.why, "gRPC's library lacks %s (not gRPC 1.51's C core?)", #name); \
    return;                                                                        \
  }
  GRPC_FNS(RESOLVE)
#undef RESOLVE
  /* gRPC logs failed connections itself; tfsh reports them, once, in its own words. */
  setenv("GRPC_VERBOSITY", "NONE", 0);
  G.grpc_init();
  G.ok = true;
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

typedef struct live {   /* one call in flight */
  grpc_channel *ch;
  grpc_call *call;
  grpc_byte_buffer *sent, *got;
  grpc_metadata_array md_init, md_trail;
  grpc_status_code status;
  grpc_slice details;
  const char *error_string;
  double t0;
  bool open;
} live;

static void finish(net_grpc_call *c, live *l) {
  c->ms = now_ms() - l->t0;
  c->code = (int)l->status;
  size_t n = GRPC_SLICE_LENGTH(l->details);
  if (n >= sizeof c->details) n = sizeof c->details - 1;
  memcpy(c->details, GRPC_SLICE_START_PTR(l->details), n);
  c->details[n] = 0;
  if (!n && l->error_string) snprintf(c->details, sizeof c->details, "%s", l->error_string);
  if (c->code == 0 && l->got) {
    grpc_byte_buffer_reader r;
    if (G.grpc_byte_buffer_reader_init(&r, l->got)) {
      grpc_slice s = G.grpc_byte_buffer_reader_readall(&r);
      c->resp_len = GRPC_SLICE_LENGTH(s);
      c->resp = malloc(c->resp_len ? c->resp_len : 1);   /* the reply's size: checked */
      if (c->resp) memcpy(c->resp, GRPC_SLICE_START_PTR(s), c->resp_len);
      else {
        c->code = NET_GRPC_RESOURCE_EXHAUSTED;
        snprintf(c->details, sizeof c->details, "out of memory for a reply of %zu bytes", c->resp_len);
        c->resp_len = 0;
      }
      G.grpc_slice_unref(s);
      G.grpc_byte_buffer_reader_destroy(&r);
    }
  } else if (c->code == 0) {
    c->code = NET_GRPC_INTERNAL;
    snprintf(c->details, sizeof c->details, "the server ended the call without a reply");
  }
}

static void release(live *l) {
  if (l->got) G.grpc_byte_buffer_destroy(l->got);
  if (l->sent) G.grpc_byte_buffer_destroy(l->sent);
  G.grpc_metadata_array_destroy(&l->md_init);
  G.grpc_metadata_array_destroy(&l->md_trail);
  G.grpc_slice_unref(l->details);
  if (l->error_string) G.gpr_free((void *)l->error_string);
  if (l->call) G.grpc_call_unref(l->call);
  if (l->ch) G.grpc_channel_destroy(l->ch);
}

/* Starts c on channel ch (shared: not l's to destroy) or, when ch is NULL, on a channel of
 * its own (l->ch). */
static bool start(net_grpc_call *c, live *l, grpc_channel *ch, grpc_completion_queue *cq,
                  grpc_channel_credentials *cr, const grpc_channel_args *args,
                  gpr_timespec deadline, void *tag) {
  G.grpc_metadata_array_init(&l->md_init);
  G.grpc_metadata_array_init(&l->md_trail);
  l->details = G.grpc_slice_from_copied_buffer("", 0);
  l->t0 = now_ms();
  if (!ch) ch = l->ch = G.grpc_channel_create(c->target, cr, args);
  grpc_slice method = G.grpc_slice_from_copied_buffer(c->method, strlen(c->method));
  l->call = ch ? G.grpc_channel_create_call(ch, NULL, GRPC_PROPAGATE_DEFAULTS, cq, method, NULL,
                                            deadline, NULL)
               : NULL;
  G.grpc_slice_unref(method);
  if (!l->call) return false;
  grpc_slice body = G.grpc_slice_from_copied_buffer((const char *)c->req, c->req_len);
  l->sent = G.grpc_raw_byte_buffer_create(&body, 1);
  G.grpc_slice_unref(body);
  grpc_op ops[6];
  memset(ops, 0, sizeof ops);
  ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
  ops[1].op = GRPC_OP_SEND_MESSAGE;
  ops[1].data.send_message.send_message = l->sent;
  ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
  ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
  ops[3].data.recv_initial_metadata.recv_initial_metadata = &l->md_init;
  ops[4].op = GRPC_OP_RECV_MESSAGE;
  ops[4].data.recv_message.recv_message = &l->got;
  ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
  ops[5].data.recv_status_on_client.trailing_metadata = &l->md_trail;
  ops[5].data.recv_status_on_client.status = &l->status;
  ops[5].data.recv_status_on_client.status_details = &l->details;
  ops[5].data.recv_status_on_client.error_string = &l->error_string;
  return G.grpc_call_start_batch(l->call, ops, 6, tag, NULL) == GRPC_CALL_OK;
}

void net_grpc_call_clear(net_grpc_call *c) {
  free(c->resp);
  c->resp = NULL, c->resp_len = 0;
}

static bool loaded(char *why, size_t why_len) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, load);
  if (!G.ok) snprintf(why, why_len, "%s", G.why);
  return G.ok;
}

int net_grpc_run(net_grpc_call *calls, int n, int timeout_ms, size_t max_reply, char *why,
                 size_t why_len) {
  if (!loaded(why, why_len)) return -1;
  live *ls = xcalloc((size_t)n + 1, sizeof *ls);
  grpc_arg a[2] = {
      {.type = GRPC_ARG_INTEGER, .key = GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH,
       .value.integer = max_reply > 0x7fffffff ? 0x7fffffff : (int)max_reply},
      {.type = GRPC_ARG_INTEGER, .key = GRPC_ARG_ENABLE_RETRIES, .value.integer = 0},
  };
  grpc_channel_args args = {.num_args = 2, .args = a};
  grpc_channel_credentials *cr = G.grpc_insecure_credentials_create();
  grpc_completion_queue *cq = G.grpc_completion_queue_create_for_next(NULL);
  gpr_timespec deadline = G.gpr_time_add(G.gpr_now(GPR_CLOCK_REALTIME),
                                         G.gpr_time_from_millis(timeout_ms, GPR_TIMESPAN));
  int open = 0;
  for (int i = 0; i < n; i++) {
    calls[i].code = -1, calls[i].resp = NULL, calls[i].resp_len = 0, calls[i].ms = 0;
    snprintf(calls[i].details, sizeof calls[i].details, "gRPC could not start the call");
    if (start(&calls[i], &ls[i], NULL, cq, cr, &args, deadline, &ls[i])) ls[i].open = true, open++;
  }
  /* The calls end at their deadline at the latest; past it plus a grace, cancel. */
  gpr_timespec hard = G.gpr_time_add(deadline, G.gpr_time_from_millis(500, GPR_TIMESPAN));
  bool cancelled = false;
  while (open > 0) {
    grpc_event ev = G.grpc_completion_queue_next(cq, hard, NULL);
    if (ev.type == GRPC_OP_COMPLETE) {
      live *l = ev.tag;
      int i = (int)(l - ls);
      if (i >= 0 && i < n && l->open) {
        l->open = false, open--;
        finish(&calls[i], l);
      }
    } else if (ev.type == GRPC_QUEUE_TIMEOUT && !cancelled) {
      for (int i = 0; i < n; i++)
        if (ls[i].open) G.grpc_call_cancel(ls[i].call, NULL);
      cancelled = true;
      hard = G.gpr_time_add(G.gpr_now(GPR_CLOCK_REALTIME), G.gpr_time_from_millis(2000, GPR_TIMESPAN));
    } else {
      break;   /* shut down, or cancelled calls that never completed: leave them */
    }
  }
  for (int i = 0; i < n; i++)
    if (!ls[i].open) release(&ls[i]);
  G.grpc_channel_credentials_release(cr);
  if (open) return 0;   /* gRPC still owns calls it never ended: leave it their memory */
  G.grpc_completion_queue_shutdown(cq);
  while (G.grpc_completion_queue_next(cq, G.gpr_now(GPR_CLOCK_REALTIME), NULL).type != GRPC_QUEUE_SHUTDOWN) {
  }
  G.grpc_completion_queue_destroy(cq);
  free(ls);
  return 0;
}

struct net_grpc_channel {
  grpc_channel *ch;
};

net_grpc_channel *net_grpc_open(const char *target, size_t max_reply, char *why, size_t why_len) {
  if (!loaded(why, why_len)) return NULL;
  grpc_arg a[2] = {
      {.type = GRPC_ARG_INTEGER, .key = GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH,
       .value.integer = max_reply > 0x7fffffff ? 0x7fffffff : (int)max_reply},
      {.type = GRPC_ARG_INTEGER, .key = GRPC_ARG_MAX_SEND_MESSAGE_LENGTH, .value.integer = -1},
  };
  grpc_channel_args args = {.num_args = 2, .args = a};
  grpc_channel_credentials *cr = G.grpc_insecure_credentials_create();
  net_grpc_channel *c = xcalloc(1, sizeof *c);
  c->ch = G.grpc_channel_create(target, cr, &args);
  G.grpc_channel_credentials_release(cr);
  if (!c->ch) {
    free(c);
    snprintf(why, why_len, "gRPC could not make a channel to %s", target);
    return NULL;
  }
  return c;
}

void net_grpc_call_on(net_grpc_channel *ch, net_grpc_call *c, int64_t timeout_ms) {
  net_grpc_call_ticking(ch, c, timeout_ms, NULL, NULL);
}

void net_grpc_call_ticking(net_grpc_channel *ch, net_grpc_call *c, int64_t timeout_ms,
                           int (*tick)(void *arg, int64_t elapsed_ms), void *arg) {
  live *l = xcalloc(1, sizeof *l);   /* on the heap: if gRPC never ends the call, it keeps it */
  c->code = -1, c->resp = NULL, c->resp_len = 0, c->ms = 0;
  snprintf(c->details, sizeof c->details, "gRPC could not start the call");
  if (timeout_ms <= 0) timeout_ms = 86400000;
  grpc_completion_queue *cq = G.grpc_completion_queue_create_for_pluck(NULL);
  gpr_timespec deadline = G.gpr_time_add(G.gpr_now(GPR_CLOCK_REALTIME),
                                         G.gpr_time_from_millis(timeout_ms, GPR_TIMESPAN));
  if (start(c, l, ch->ch, cq, NULL, NULL, deadline, l)) {
    /* The call ends by its deadline; the pluck waits a little past it for gRPC to say so,
     * NET_GRPC_TICK_MS at a time when there is a tick (which may cancel the call). */
    double hard_ms = l->t0 + (double)timeout_ms + 2000;
    grpc_event ev;
    for (;;) {
      double wait = hard_ms - now_ms();
      if (tick && wait > NET_GRPC_TICK_MS) wait = NET_GRPC_TICK_MS;
      ev = G.grpc_completion_queue_pluck(cq, l, G.gpr_time_add(G.gpr_now(GPR_CLOCK_REALTIME),
                                                               G.gpr_time_from_millis(wait > 0 ? (int64_t)wait : 0, GPR_TIMESPAN)), NULL);
      if (ev.type != GRPC_QUEUE_TIMEOUT || now_ms() >= hard_ms) break;
      if (tick && tick(arg, (int64_t)(now_ms() - l->t0))) {
        G.grpc_call_cancel(l->call, NULL);   /* gRPC ends it CANCELLED */
        tick = NULL;
        hard_ms = now_ms();
      }
    }
    if (ev.type != GRPC_OP_COMPLETE) {
      G.grpc_call_cancel(l->call, NULL);
      ev = G.grpc_completion_queue_pluck(cq, l, G.gpr_time_add(G.gpr_now(GPR_CLOCK_REALTIME),
                                                                 G.gpr_time_from_millis(5000, GPR_TIMESPAN)), NULL);
    }
    if (ev.type != GRPC_OP_COMPLETE) return;   /* gRPC still owns l: leave it (never seen) */
    finish(c, l);
  }
  release(l);
  free(l);
  G.grpc_completion_queue_shutdown(cq);
  while (G.grpc_completion_queue_pluck(cq, NULL, G.gpr_now(GPR_CLOCK_REALTIME), NULL).type != GRPC_QUEUE_SHUTDOWN) {
  }
  G.grpc_completion_queue_destroy(cq);
}

void net_grpc_close(net_grpc_channel *ch) {
  if (!ch) return;
  G.grpc_channel_destroy(ch->ch);
  free(ch);
}

/* ---- serving ------------------------------------------------------------------------ */

struct net_grpc_server {
  grpc_server *srv;
  net_grpc_handler fn;
  void *arg;
  int n;
  pthread_t th[NET_GRPC_MAX_SERVE_THREADS];
  grpc_completion_queue *cq[NET_GRPC_MAX_SERVE_THREADS];
};

typedef struct serve_arg {
  net_grpc_server *s;
  int i;
} serve_arg;

/* Waits for the batch tagged `tag` on cq (a thread's own queue: nothing else is pending). */
static bool wait_batch(grpc_completion_queue *cq, void *tag) {
  for (;;) {
    grpc_event ev = G.grpc_completion_queue_next(cq, G.gpr_time_add(G.gpr_now(GPR_CLOCK_REALTIME),
                                                                    G.gpr_time_from_millis(3600000, GPR_TIMESPAN)), NULL);
    if (ev.type == GRPC_QUEUE_SHUTDOWN) return false;
    if (ev.type == GRPC_OP_COMPLETE && ev.tag == tag) return ev.success;
  }
}

/* One call: read the request, ask the handler, send its reply or its error. */
static void serve_one(net_grpc_server *s, grpc_completion_queue *cq, grpc_call *call,
                      const grpc_call_details *d) {
  char method[200];
  size_t mn = GRPC_SLICE_LENGTH(d->method) < sizeof method - 1 ? GRPC_SLICE_LENGTH(d->method) : sizeof method - 1;
  memcpy(method, GRPC_SLICE_START_PTR(d->method), mn);
  method[mn] = 0;
  grpc_byte_buffer *in = NULL;
  grpc_op ops[3];
  memset(ops, 0, sizeof ops);
  ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
  ops[1].op = GRPC_OP_RECV_MESSAGE;
  ops[1].data.recv_message.recv_message = &in;
  int tag_read, tag_done;
  if (G.grpc_call_start_batch(call, ops, 2, &tag_read, NULL) != GRPC_CALL_OK || !wait_batch(cq, &tag_read)) {
    if (in) G.grpc_byte_buffer_destroy(in);
    return;
  }
  grpc_slice req = G.grpc_slice_from_copied_buffer("", 0);
  if (in) {
    grpc_byte_buffer_reader r;
    if (G.grpc_byte_buffer_reader_init(&r, in)) {
      G.grpc_slice_unref(req);
      req = G.grpc_byte_buffer_reader_readall(&r);
      G.grpc_byte_buffer_reader_destroy(&r);
    }
    G.grpc_byte_buffer_destroy(in);
  }
  uint8_t *rep = NULL;
  size_t rep_n = 0;
  char err[1024] = "";
  int code = s->fn(s->arg, method, GRPC_SLICE_START_PTR(req), GRPC_SLICE_LENGTH(req), &rep, &rep_n, err, sizeof err);
  G.grpc_slice_unref(req);
  grpc_slice body = G.grpc_slice_from_copied_buffer((const char *)rep, rep ? rep_n : 0);
  grpc_byte_buffer *out = code == 0 ? G.grpc_raw_byte_buffer_create(&body, 1) : NULL;
  G.grpc_slice_unref(body);
  free(rep);
  grpc_slice details = G.grpc_slice_from_copied_buffer(err, strlen(err));
  int cancelled = 0, n = 0;
  memset(ops, 0, sizeof ops);
  if (out) {
    ops[n].op = GRPC_OP_SEND_MESSAGE;
    ops[n++].data.send_message.send_message = out;
  }
  ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
  ops[n].data.send_status_from_server.status = (grpc_status_code)code;
  ops[n++].data.send_status_from_server.status_details = code ? &details : NULL;
  ops[n].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
  ops[n++].data.recv_close_on_server.cancelled = &cancelled;
  if (G.grpc_call_start_batch(call, ops, (size_t)n, &tag_done, NULL) == GRPC_CALL_OK) wait_batch(cq, &tag_done);
  G.grpc_slice_unref(details);
  if (out) G.grpc_byte_buffer_destroy(out);
}

static void *serve_main(void *p) {
  serve_arg a = *(serve_arg *)p;
  free(p);
  grpc_completion_queue *cq = a.s->cq[a.i];
  for (;;) {
    grpc_call *call = NULL;
    grpc_call_details d;
    grpc_metadata_array md;
    G.grpc_call_details_init(&d);
    G.grpc_metadata_array_init(&md);
    int tag;
    if (G.grpc_server_request_call(a.s->srv, &call, &d, &md, cq, cq, &tag) != GRPC_CALL_OK) break;
    bool ok = wait_batch(cq, &tag);
    if (ok && call) serve_one(a.s, cq, call, &d);
    if (call) G.grpc_call_unref(call);
    G.grpc_call_details_destroy(&d);
    G.grpc_metadata_array_destroy(&md);
    if (!ok) break;
  }
  return NULL;
}

net_grpc_server *net_grpc_serve(const char *addr, int threads, net_grpc_handler fn, void *arg,
                                char *why, size_t why_len) {
  if (!loaded(why, why_len)) return NULL;
  if (threads < 1) threads = 1;
  if (threads > NET_GRPC_MAX_SERVE_THREADS) threads = NET_GRPC_MAX_SERVE_THREADS;
  net_grpc_server *s = xcalloc(1, sizeof *s);
  grpc_arg a[2] = {
      {.type = GRPC_ARG_INTEGER, .key = GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH, .value.integer = -1},
      {.type = GRPC_ARG_INTEGER, .key = GRPC_ARG_MAX_SEND_MESSAGE_LENGTH, .value.integer = -1},
  };
  grpc_channel_args args = {.num_args = 2, .args = a};
  s->fn = fn, s->arg = arg, s->n = threads;
  s->srv = G.grpc_server_create(&args, NULL);
  for (int i = 0; i < threads; i++) {
    s->cq[i] = G.grpc_completion_queue_create_for_next(NULL);
    G.grpc_server_register_completion_queue(s->srv, s->cq[i], NULL);
  }
  grpc_server_credentials *cr = G.grpc_insecure_server_credentials_create();
  int port = G.grpc_server_add_http2_port(s->srv, addr, cr);
  G.grpc_server_credentials_release(cr);
  if (!port) {
    snprintf(why, why_len, "gRPC cannot listen on %s (a bad address, or the port is in use)", addr);
    return NULL;   /* the half-made server is left: the process is about to say so and exit */
  }
  G.grpc_server_start(s->srv);
  for (int i = 0; i < threads; i++) {
    serve_arg *sa = xmalloc(sizeof *sa);
    *sa = (serve_arg){s, i};
    if (pthread_create(&s->th[i], NULL, serve_main, sa)) free(sa);
    else pthread_detach(s->th[i]);
  }
  return s;
}
