/* The shared context, socket options, and whole messages through a socket. */
#include "net/wire.h"
#include "base/alloc.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void *ctx;
static pthread_once_t ctx_once = PTHREAD_ONCE_INIT;

static void ctx_init(void) {
  ctx = zmq_ctx_new();
  if (!ctx) abort();
}

void *net_ctx(void) {
  pthread_once(&ctx_once, ctx_init);
  return ctx;
}

int64_t net_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int net_wire_setup(void *sock, const net_options *o) {
  int zero = 0;
  /* ZeroMQ drops the connection on a frame over ZMQ_MAXMSGSIZE, before allocating it;
   * up to twice the limit the frame is received and refused with an error reply that
   * says which limit (net_wire_recv), so the sender learns why. */
  uint64_t lim = o->limits.max_frame > o->limits.max_header ? o->limits.max_frame
                                                             : o->limits.max_header;
  int64_t max = lim > (uint64_t)INT64_MAX / 2 ? -1 : (int64_t)(2 * lim);
  if (zmq_setsockopt(sock, ZMQ_LINGER, &zero, sizeof zero) ||
      zmq_setsockopt(sock, ZMQ_MAXMSGSIZE, &max, sizeof max))
    return errno;
  if (o->heartbeat_ms > 0) {
    int timeout = 3 * o->heartbeat_ms;
    if (zmq_setsockopt(sock, ZMQ_HEARTBEAT_IVL, &o->heartbeat_ms, sizeof(int)) ||
        zmq_setsockopt(sock, ZMQ_HEARTBEAT_TIMEOUT, &timeout, sizeof timeout) ||
        zmq_setsockopt(sock, ZMQ_HEARTBEAT_TTL, &timeout, sizeof timeout))
      return errno;
  }
  return 0;
}

int net_wire_send(void *sock, const void *routing, size_t rlen, net_msg *m, uint64_t id) {
  const void *head;
  size_t hlen;
  int err = 0;
  net_msg_seal(m, id, &head, &hlen);
  if (rlen && zmq_send(sock, routing, rlen, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0) goto fail;
  if (zmq_send(sock, head, hlen, (m->nframes ? ZMQ_SNDMORE : 0) | ZMQ_DONTWAIT) < 0) goto fail;
  while (m->sent < m->nframes) {
    net_payload *f = &m->frames[m->sent++];   /* from here on ZeroMQ frees it */
    int more = m->sent < m->nframes ? ZMQ_SNDMORE : 0;
    zmq_msg_t zm;
    if (f->len == 0) {
      zmq_msg_init(&zm);
      if (f->free_fn) f->free_fn(f->data, f->arg);
    } else if (zmq_msg_init_data(&zm, f->data, f->len, f->free_fn, f->arg)) {
      if (f->free_fn) f->free_fn(f->data, f->arg);
      goto fail;
    }
    if (zmq_msg_send(&zm, sock, more | ZMQ_DONTWAIT) < 0) {
      err = errno;
      zmq_msg_close(&zm);
      break;
    }
  }
  net_msg_free(m);
  return err;
fail:
  err = errno;
  net_msg_free(m);
  return err;
}

static void drain(void *sock) {
  int more = 1;
  size_t sz = sizeof more;
  while (zmq_getsockopt(sock, ZMQ_RCVMORE, &more, &sz) == 0 && more) {
    zmq_msg_t zm;
    zmq_msg_init(&zm);
    zmq_msg_recv(&zm, sock, 0);
    zmq_msg_close(&zm);
  }
}

int net_wire_recv(void *sock, const net_limits *lim, uint8_t *routing, size_t *rlen,
                  net_in **out, uint64_t *id_out, rt_status *st) {
  *out = NULL;
  if (id_out) *id_out = 0;
  if (routing) {
    zmq_msg_t r;
    zmq_msg_init(&r);
    if (zmq_msg_recv(&r, sock, ZMQ_DONTWAIT) < 0) {
      zmq_msg_close(&r);
      return NET_AGAIN;
    }
    *rlen = zmq_msg_size(&r) <= NET_ROUTING_MAX ? zmq_msg_size(&r) : NET_ROUTING_MAX;
    memcpy(routing, zmq_msg_data(&r), *rlen);
    int more = zmq_msg_more(&r);
    zmq_msg_close(&r);
    if (!more) return rt_error(st, RT_INVALID_ARGUMENT, "malformed header: no header frame");
  }
  net_in *m = net_in_alloc();
  if (zmq_msg_recv(&m->head, sock, routing ? 0 : ZMQ_DONTWAIT) < 0) {
    int e = errno;
    net_in_free(m);
    errno = e;
    return NET_AGAIN;
  }
  int more = zmq_msg_more(&m->head);
  int rc = net_in_parse_at(m, zmq_msg_data(&m->head), zmq_msg_size(&m->head), lim, id_out, st);
  size_t cap = 0;
  while (more && !rc) {
    if (m->nframes == lim->max_frames) {
      rc = rt_error(st, RT_RESOURCE_EXHAUSTED,
                    "message over limits: more than %zu payload frames (max_frames)",
                    lim->max_frames);
      break;
    }
    net_frame *f = net_frame_new();
    if (zmq_msg_recv(&f->zm, sock, 0) < 0) {
      net_frame_unref(f);
      rc = rt_error(st, RT_UNAVAILABLE, "message cut short: %s", zmq_strerror(errno));
      break;
    }
    more = zmq_msg_more(&f->zm);
    if (net_frame_size(f) > lim->max_frame) {
      rc = rt_error(st, RT_RESOURCE_EXHAUSTED,
                    "message over limits: payload frame %zu of %zu bytes exceeds max_frame %zu",
                    m->nframes, net_frame_size(f), lim->max_frame);
      net_frame_unref(f);
      break;
    }
    if (m->nframes == cap) {
      cap = cap ? 2 * cap : 4;
      m->frames = xrealloc(m->frames, cap * sizeof *m->frames);
    }
    m->frames[m->nframes++] = f;
  }
  if (rc) {
    drain(sock);
    net_in_free(m);
    return rc;
  }
  *out = m;
  return RT_OK;
}

int net_wire_local(net_msg *m, uint64_t id, const net_limits *lim, net_in **out, rt_status *st) {
  const void *head;
  size_t hlen;
  net_msg_seal(m, id, &head, &hlen);
  net_limits open;
  if (!lim) {
    net_limits_default(&open);
    open.max_header = open.max_frame = SIZE_MAX;
    open.max_frames = SIZE_MAX;
    open.max_count = open.max_str = UINT32_MAX;
    lim = &open;
  }
  net_in *in = net_in_alloc();
  in->copy = m->sb.data;   /* the header's bytes change hands, not copied */
  m->sb.data = NULL;
  m->sb.size = m->sb.alloc = 0;
  int rc = net_in_parse_at(in, in->copy, hlen, lim, NULL, st);
  size_t n = m->nframes - m->sent;
  if (!rc && n > lim->max_frames)
    rc = rt_error(st, RT_RESOURCE_EXHAUSTED, "message over limits: more than %zu payload frames "
                  "(max_frames)", lim->max_frames);
  if (!rc && n) in->frames = xcalloc(n, sizeof *in->frames);
  while (!rc && m->sent < m->nframes) {
    net_payload *f = &m->frames[m->sent++];   /* from here on the frame frees it */
    net_frame *fr = net_frame_new();
    if (f->len && zmq_msg_init_data(&fr->zm, f->data, f->len, f->free_fn, f->arg)) abort();
    if (!f->len && f->free_fn) f->free_fn(f->data, f->arg);
    in->frames[in->nframes++] = fr;
  }
  net_msg_free(m);
  if (rc) {
    net_in_free(in);
    return rc;
  }
  *out = in;
  return RT_OK;
}

int net_wire_error_status(const net_in *m, rt_status *st) {
  if (strcmp(net_in_type(m), "error")) return 0;
  int64_t code = RT_UNKNOWN;
  const char *msg = "";
  size_t len = 0;
  rt_status ignore;
  net_get_int(m, "code", &code, &ignore);
  net_get_str(m, "msg", &msg, &len, &ignore);
  if (code <= 0 || code >= RT_CODE_COUNT) code = RT_UNKNOWN;
  return rt_error(st, (int)code, "%.*s", (int)len, msg);
}

net_msg *net_wire_error(int code, const char *msg) {
  net_msg *m = net_msg_new("error");
  net_msg_int(m, "code", code);
  net_msg_str(m, "msg", msg);
  return m;
}

/* ---- a connection's health ------------------------------------------------------------ */

/* Endpoints some socket of this process completed a handshake with. A key-less socket
 * hung up on without detail by one of these has met a peer dying or restarting, not a
 * refusal. */
static pthread_mutex_t good_mu = PTHREAD_MUTEX_INITIALIZER;
static char *good[256];
static int n_good;

static bool known_good(const char *ep) {
  pthread_mutex_lock(&good_mu);
  bool found = false;
  for (int i = 0; i < n_good && !found; i++) found = !strcmp(good[i], ep);
  pthread_mutex_unlock(&good_mu);
  return found;
}

static void remember_good(const char *ep) {
  if (known_good(ep)) return;
  pthread_mutex_lock(&good_mu);
  if (n_good < 256) good[n_good++] = xstrdup(ep);
  pthread_mutex_unlock(&good_mu);
}

static atomic_ulong monitor_seq;

int net_link_open(net_link *l, void *sock, const char *endpoint, rt_status *st) {
  l->endpoint = endpoint;
  if (!strncmp(endpoint, "inproc://", 9)) {
    l->connected = true;
    return RT_OK;
  }
  char addr[64];
  snprintf(addr, sizeof addr, "inproc://net-monitor-%lu", atomic_fetch_add(&monitor_seq, 1));
  int events = ZMQ_EVENT_CONNECTED | ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_HANDSHAKE_SUCCEEDED |
               ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
               ZMQ_EVENT_HANDSHAKE_FAILED_AUTH;
  int zero = 0;
  if (zmq_socket_monitor(sock, addr, events) || !(l->mon = zmq_socket(net_ctx(), ZMQ_PAIR)) ||
      zmq_setsockopt(l->mon, ZMQ_LINGER, &zero, sizeof zero) || zmq_connect(l->mon, addr))
    return rt_error(st, RT_INTERNAL, "cannot monitor a socket: %s", zmq_strerror(errno));
  return RT_OK;
}

void net_link_close(net_link *l, void *sock) {
  if (!l->mon) return;
  zmq_socket_monitor(sock, NULL, 0);
  zmq_close(l->mon);
  l->mon = NULL;
}

/* Monitor events: [u16 event, u32 value] then the endpoint. */
void net_link_events(net_link *l, bool pending) {
  if (!l->mon) return;
  for (;;) {
    zmq_msg_t ev, ep;
    zmq_msg_init(&ev);
    if (zmq_msg_recv(&ev, l->mon, ZMQ_DONTWAIT) < 0) {
      zmq_msg_close(&ev);
      return;
    }
    uint16_t event = 0;
    uint32_t value = 0;
    if (zmq_msg_size(&ev) >= 2) memcpy(&event, zmq_msg_data(&ev), 2);
    if (zmq_msg_size(&ev) >= 6) memcpy(&value, (char *)zmq_msg_data(&ev) + 2, 4);
    bool more = zmq_msg_more(&ev);
    zmq_msg_close(&ev);
    if (more) {
      zmq_msg_init(&ep);
      zmq_msg_recv(&ep, l->mon, 0);
      zmq_msg_close(&ep);
    }
    if (event == ZMQ_EVENT_CONNECTED) {
      l->connected = l->ever_connected = true;
      l->down_since = l->wait_down = 0;
    }
    if (event == ZMQ_EVENT_DISCONNECTED) {
      l->connected = false;
      l->down_since = net_now_ms();
      if (pending) l->lost = true;
    }
    /* A CURVE server refuses a client without the key (mechanism mismatch: PROTOCOL, or
     * NO_DETAIL when the server hangs up before the client has read its greeting), with
     * another key (it cannot read the HELLO and hangs up: NO_DETAIL), or one its ZAP
     * handler turns away (AUTH). A key-less client that once completed a handshake with
     * this server and then sees NO_DETAIL has more likely met a peer dying mid-greeting. */
    if (event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH ||
        (event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL &&
         (l->curve || value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH)) ||
        (event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL &&
         (l->curve || (!l->handshaken && !known_good(l->endpoint)))))
      l->refused = true;
    if (event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) {
      l->refused = false, l->handshaken = true;
      remember_good(l->endpoint);
    }
  }
}

void net_link_check(net_link *l) {
  if (l->connected || !(l->ever_connected || (l->mon && known_good(l->endpoint)))) return;
  int64_t now = net_now_ms();
  if (!l->wait_down) l->wait_down = now;
  /* The second of grace counts from the drop when we saw one: a request made after the peer
   * has been gone a second fails at once (the steps queued behind a failed one each waited
   * a second more). */
  int64_t since = l->down_since && l->down_since < l->wait_down ? l->down_since : l->wait_down;
  if (now - since > 1000) l->lost = true;
}
