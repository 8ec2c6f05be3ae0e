/* The shared context, socket options, and whole messages through a socket. */
#include "net/wire.h"

#include <errno.h>
#include <pthread.h>
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
      m->frames = realloc(m->frames, cap * sizeof *m->frames);
      if (!m->frames) abort();
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

net_msg *net_wire_error(int code, const char *msg) {
  net_msg *m = net_msg_new("error");
  net_msg_int(m, "code", code);
  net_msg_str(m, "msg", msg);
  return m;
}
