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
  X(void, gpr_free, (void *))

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
      c->resp = malloc(c->resp_len ? c->resp_len : 1);
      if (c->resp) memcpy(c->resp, GRPC_SLICE_START_PTR(s), c->resp_len);
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
  live *ls = calloc((size_t)n + 1, sizeof *ls);
  if (!ls) {
    snprintf(why, why_len, "out of memory");
    return -1;
  }
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
  net_grpc_channel *c = calloc(1, sizeof *c);
  if (c) c->ch = G.grpc_channel_create(target, cr, &args);
  G.grpc_channel_credentials_release(cr);
  if (!c || !c->ch) {
    free(c);
    snprintf(why, why_len, "gRPC could not make a channel to %s", target);
    return NULL;
  }
  return c;
}

void net_grpc_call_on(net_grpc_channel *ch, net_grpc_call *c, int64_t timeout_ms) {
  live *l = calloc(1, sizeof *l);   /* on the heap: if gRPC never ends the call, it keeps it */
  c->code = -1, c->resp = NULL, c->resp_len = 0, c->ms = 0;
  snprintf(c->details, sizeof c->details, "gRPC could not start the call");
  if (!l) return;
  if (timeout_ms <= 0) timeout_ms = 86400000;
  grpc_completion_queue *cq = G.grpc_completion_queue_create_for_pluck(NULL);
  gpr_timespec deadline = G.gpr_time_add(G.gpr_now(GPR_CLOCK_REALTIME),
                                         G.gpr_time_from_millis(timeout_ms, GPR_TIMESPAN));
  if (start(c, l, ch->ch, cq, NULL, NULL, deadline, l)) {
    /* The call ends by its deadline; the pluck waits a little past it for gRPC to say so. */
    gpr_timespec hard = G.gpr_time_add(deadline, G.gpr_time_from_millis(2000, GPR_TIMESPAN));
    grpc_event ev = G.grpc_completion_queue_pluck(cq, l, hard, NULL);
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
