/* Peers and completion queues. Every peer's DEALER socket is touched only under the
 * peer's mutex: senders send under it, and whoever services it receives under it. The
 * reader thread sleeps in poll(2) on the ZMQ_FDs of the peers that have requests in
 * flight (edge-triggered: it drains until ZMQ_EVENTS has no POLLIN) and on an eventfd; a
 * sender whose zmq_send may have taken an edge the reader was waiting for (ZMQ_EVENTS
 * shows POLLIN after the send) wakes it.
 *
 * A thread waiting on a queue services the sockets of the peers it waits for itself
 * (net_cq_wait: it owns them while it polls), so a reply reaches the thread that wants it
 * without a hop through the reader: one wake-up less per call. Every request in flight
 * is therefore serviced by one of: its peer's owner, the reader (which leaves owned peers
 * alone), or the next wait on its own queue (a request just sent wakes nobody: its
 * sender waits for it, or looks with net_cq_has_error). An owner leaving a peer on which
 * other queues' requests are in flight hands it to the reader. Deliveries to a queue
 * whose waiter polls reach it through the queue's eventfd.
 *
 * Direct lanes (net/lane.h): the first request to a peer goes over ZeroMQ with a "Lane"
 * request behind it; when its answer comes, whoever services the peer connects the lane,
 * says LaneSwitch over ZeroMQ, and from then on the peer's requests go on the lane, read
 * and written under the peer's mutex like the socket. A lane that ends fails the requests
 * sent on it, and the next request asks again. */
#define _GNU_SOURCE   /* POLLRDHUP */
#include "net/peer.h"
#include "base/alloc.h"
#include "net/lane.h"
#include "net/wire.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

typedef struct pend {
  uint64_t id, tag;
  net_cq *q;
  bool lane;                 /* sent on the direct lane */
} pend;

#define LANE_CONNECT_MS 500       /* to connect a lane and hear its ack */
#define LANE_SEND_TIMEOUT_MS 60000   /* a lane whose server takes nothing for this long is dead */
enum { LANE_NONE, LANE_ASKED, LANE_UP, LANE_OFF };

struct net_peer {
  net_peer *next;
  char *endpoint;
  net_options opt;
  pthread_mutex_t mu;
  void *sock;                /* created on the first request that leaves the process */
  net_link link;             /* its connection's health */
  int fd, mon_fd;            /* the socket's and its monitor's ZMQ_FDs */
  pend *pending;
  size_t npending, cap;
  bool was_local;            /* once served in this process */
  net_cq *owner;             /* the queue whose waiter services this socket now (or NULL) */
  int lane;                  /* LANE_*: the direct lane's state */
  int lane_fd;               /* its connection while LANE_UP, else -1 */
  uint64_t lane_ask;         /* the "Lane" request's id while LANE_ASKED */
  net_lane_rx lane_rx;
};

typedef struct delivery {
  struct delivery *next;
  uint64_t tag;
  net_in *in;
  rt_status st;
} delivery;

typedef struct owed {
  net_peer *p;
  uint64_t id;
} owed;

struct net_cq {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  delivery *head, *tail;
  owed *ow;                  /* requests sent on this queue and not yet delivered */
  size_t now, owcap;
  int efd;                   /* wakes a waiter polling the peers it owns (-1: none yet) */
  bool polling;              /* its waiter is in poll(2): deliveries write efd (mu) */
};

static pthread_mutex_t peers_mu = PTHREAD_MUTEX_INITIALIZER;
static net_peer *peers;
static int wake_fd = -1;
static atomic_ullong next_id;

static void *reader_main(void *arg);

static void efd_wake(int fd) {
  uint64_t one = 1;
  ssize_t n = write(fd, &one, sizeof one);
  (void)n;   /* EAGAIN: already nonzero, the poller will wake */
}

static void wake_reader(void) { efd_wake(wake_fd); }

/* ---- completion queues --------------------------------------------------------------- */

static void cq_init(net_cq *q) {
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_mutex_init(&q->mu, NULL);
  pthread_cond_init(&q->cv, &ca);
  pthread_condattr_destroy(&ca);
  q->efd = -1;
}

net_cq *net_cq_new(void) {
  net_cq *q = xcalloc(1, sizeof *q);
  cq_init(q);
  return q;
}

static void owed_add(net_cq *q, net_peer *p, uint64_t id) {
  if (q->now == q->owcap) {
    q->owcap = q->owcap ? 2 * q->owcap : 8;
    q->ow = xrealloc(q->ow, q->owcap * sizeof *q->ow);
  }
  q->ow[q->now++] = (owed){p, id};
}

static void owed_del(net_cq *q, uint64_t id) {
  for (size_t i = 0; i < q->now; i++)
    if (q->ow[i].id == id) {
      memmove(q->ow + i, q->ow + i + 1, (q->now - i - 1) * sizeof *q->ow);
      q->now--;
      return;
    }
}

static bool pend_del(net_peer *p, uint64_t id, pend *out) {
  for (size_t i = 0; i < p->npending; i++)
    if (p->pending[i].id == id) {
      if (out) *out = p->pending[i];
      p->pending[i] = p->pending[--p->npending];
      return true;
    }
  return false;
}

/* Hand a reply (or an error) to the queue waiting for it (p->mu held). An "error" reply
 * becomes the status it carries. */
static void deliver(const pend *pd, net_in *in, const rt_status *st) {
  delivery *d = xcalloc(1, sizeof *d);
  d->tag = pd->tag;
  if (st && st->code) {
    d->st = *st;
    net_in_free(in);
  } else if (net_wire_error_status(in, &d->st)) {
    net_in_free(in);
  } else {
    d->in = in;
  }
  net_cq *q = pd->q;
  pthread_mutex_lock(&q->mu);
  owed_del(q, pd->id);
  if (q->tail) q->tail->next = d;
  else q->head = d;
  q->tail = d;
  pthread_cond_broadcast(&q->cv);
  if (q->polling) efd_wake(q->efd);
  pthread_mutex_unlock(&q->mu);
}

void net_cq_forget(net_cq *q, net_peer *p, uint64_t id) {
  pthread_mutex_lock(&p->mu);
  pend_del(p, id, NULL);
  pthread_mutex_unlock(&p->mu);
  pthread_mutex_lock(&q->mu);
  owed_del(q, id);
  pthread_mutex_unlock(&q->mu);
}

static void service(net_peer *p);

bool net_cq_has_error(net_cq *q) {
  /* the replies of q's requests may wait unread on a socket nobody polls (a request just
   * sent is its waiter's to read): take them first */
  net_peer *ps[8];
  int n = 0;
  pthread_mutex_lock(&q->mu);
  for (size_t i = 0; i < q->now && n < 8; i++) {
    bool seen = false;
    for (int j = 0; j < n && !seen; j++) seen = ps[j] == q->ow[i].p;
    if (!seen) ps[n++] = q->ow[i].p;
  }
  pthread_mutex_unlock(&q->mu);
  for (int j = 0; j < n; j++) {
    pthread_mutex_lock(&ps[j]->mu);
    if (!ps[j]->owner) service(ps[j]);
    pthread_mutex_unlock(&ps[j]->mu);
  }
  pthread_mutex_lock(&q->mu);
  bool err = false;
  for (delivery *d = q->head; d && !err; d = d->next) err = d->st.code != RT_OK;
  pthread_mutex_unlock(&q->mu);
  return err;
}

int net_cq_owed(net_cq *q) {
  pthread_mutex_lock(&q->mu);
  int n = (int)q->now;
  pthread_mutex_unlock(&q->mu);
  return n;
}

static void cq_clear(net_cq *q) {
  for (;;) {   /* forget what is owed (a delivery may race in meanwhile: drained below) */
    pthread_mutex_lock(&q->mu);
    if (!q->now) {
      pthread_mutex_unlock(&q->mu);
      break;
    }
    owed o = q->ow[0];
    pthread_mutex_unlock(&q->mu);
    net_cq_forget(q, o.p, o.id);
  }
  for (delivery *d = q->head, *n; d; d = n) {
    n = d->next;
    net_in_free(d->in);
    free(d);
  }
  q->head = q->tail = NULL;
}

void net_cq_free(net_cq *q) {
  if (!q) return;
  cq_clear(q);
  if (q->efd >= 0) close(q->efd);
  free(q->ow);
  pthread_cond_destroy(&q->cv);
  pthread_mutex_destroy(&q->mu);
  free(q);
}

/* The blocking calls whose handlers run inline on this thread, innermost first: a wait
 * inside such a handler calls their ticks too (Ctrl-C, the live view, a master watching
 * its other parts). */
typedef struct outer {
  const net_wait *w;
  int64_t start;
  struct outer *prev;
} outer;
static __thread outer *outer_top;

static int outer_ticks(int64_t now) {
  for (outer *o = outer_top; o; o = o->prev)
    if (o->w->tick(o->w->arg, now - o->start)) return 1;
  return 0;
}

int net_wait_outer(void) { return outer_top ? outer_ticks(net_now_ms()) : 0; }
bool net_wait_outer_here(void) { return outer_top != NULL; }

static int call_ticks(const net_wait *w, int64_t start, int64_t now) {
  if (w && w->tick && w->tick(w->arg, now - start)) return 1;
  return outer_ticks(now);
}

/* ---- waiting on the peers' sockets directly ------------------------------------------ */

#define OWN_MAX 16   /* peers one wait services itself; the reader serves the rest */

/* Take the peers q waits for that nobody else services (a peer served in this process
 * has no socket: its replies come as calls). mine[i]: taken here, to give back (a wait
 * nested in a tick of an outer wait on the same queue polls the outer one's peers too,
 * and leaves them to it). q->mu held on entry, released on return. */
static int own_peers(net_cq *q, net_peer **own, bool *mine) {
  net_peer *cand[OWN_MAX];
  int n = 0, k = 0;
  for (size_t i = 0; i < q->now && n < OWN_MAX; i++) {
    bool seen = false;
    for (int j = 0; j < n && !seen; j++) seen = cand[j] == q->ow[i].p;
    if (!seen) cand[n++] = q->ow[i].p;
  }
  if (n && q->efd < 0) q->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  bool can = q->efd >= 0;
  pthread_mutex_unlock(&q->mu);
  for (int j = 0; j < n && can; j++) {
    net_peer *p = cand[j];
    pthread_mutex_lock(&p->mu);
    if (p->sock && (!p->owner || p->owner == q)) {
      mine[k] = !p->owner;
      p->owner = q;
      own[k++] = p;
    }
    pthread_mutex_unlock(&p->mu);
  }
  return k;
}

/* Give the owned peers back; one with other queues' requests in flight goes to the reader. */
static void release_peers(net_cq *q, net_peer **own, const bool *mine, int n) {
  bool wake = false;
  for (int j = 0; j < n; j++) {
    net_peer *p = own[j];
    if (!mine[j]) continue;
    pthread_mutex_lock(&p->mu);
    p->owner = NULL;
    for (size_t i = 0; i < p->npending && !wake; i++) wake = p->pending[i].q != q;
    pthread_mutex_unlock(&p->mu);
  }
  if (wake) wake_reader();
}

/* One look at the owned peers, then (when nothing came) one poll(2) on their sockets and
 * q's eventfd for at most timeout_ms (< 0: no limit), then another look. */
static void poll_owned(net_cq *q, net_peer **own, int n, int timeout_ms) {
  struct pollfd fds[1 + 3 * OWN_MAX];
  int nf = 0;
  pthread_mutex_lock(&q->mu);
  q->polling = true;
  pthread_mutex_unlock(&q->mu);
  fds[nf++] = (struct pollfd){.fd = q->efd, .events = POLLIN};
  for (int j = 0; j < n; j++) {
    net_peer *p = own[j];
    pthread_mutex_lock(&p->mu);
    service(p);   /* the edge may have come before this poll: drain first */
    if (p->fd >= 0) fds[nf++] = (struct pollfd){.fd = p->fd, .events = POLLIN};
    if (p->mon_fd >= 0) fds[nf++] = (struct pollfd){.fd = p->mon_fd, .events = POLLIN};
    if (p->lane == LANE_UP) fds[nf++] = (struct pollfd){.fd = p->lane_fd, .events = POLLIN};
    /* not connected with a request in flight: look again every 250 ms (the reader's rule) */
    if (p->npending && !p->link.connected && (timeout_ms < 0 || timeout_ms > 250)) timeout_ms = 250;
    pthread_mutex_unlock(&p->mu);
  }
  pthread_mutex_lock(&q->mu);
  bool have = q->head != NULL;
  pthread_mutex_unlock(&q->mu);
  if (!have) {
    if (poll(fds, (nfds_t)nf, timeout_ms) > 0 && (fds[0].revents & POLLIN)) {
      uint64_t v;
      ssize_t got = read(q->efd, &v, sizeof v);
      (void)got;
    }
    for (int j = 0; j < n; j++) {
      pthread_mutex_lock(&own[j]->mu);
      service(own[j]);
      pthread_mutex_unlock(&own[j]->mu);
    }
  }
  pthread_mutex_lock(&q->mu);
  q->polling = false;
  pthread_mutex_unlock(&q->mu);
}

int net_cq_wait(net_cq *q, const net_wait *w, const uint64_t *want, uint64_t *tag,
                net_in **reply, rt_status *st) {
  *reply = NULL;
  *tag = NET_CQ_NONE;
  int64_t start = net_now_ms();
  int timeout = w ? w->timeout_ms : -1;
  int tick_ms = w && w->tick && w->tick_ms > 0 ? w->tick_ms : 0;
  if (outer_top && (!tick_ms || tick_ms > 50)) tick_ms = 50;
  int64_t next_tick = tick_ms ? start + tick_ms : -1;
  net_peer *own[OWN_MAX];
  bool mine[OWN_MAX];
  int n_own = 0, rc = RT_OK;
  pthread_mutex_lock(&q->mu);
  for (;;) {
    delivery **pp = &q->head, *prev = NULL;
    while (*pp && want && (*pp)->tag != *want) prev = *pp, pp = &(*pp)->next;
    if (*pp) {
      delivery *d = *pp;
      *pp = d->next;
      if (q->tail == d) q->tail = prev;
      pthread_mutex_unlock(&q->mu);
      *tag = d->tag;
      *reply = d->in;
      rc = d->st.code;
      if (rc) *st = d->st;
      free(d);
      break;
    }
    int64_t now = net_now_ms();
    if (next_tick >= 0 && now >= next_tick) {
      pthread_mutex_unlock(&q->mu);
      int stop = call_ticks(w, start, now);
      pthread_mutex_lock(&q->mu);
      if (stop) {
        const char *ep = q->now ? q->ow[0].p->endpoint : "a reply";
        pthread_mutex_unlock(&q->mu);
        rc = rt_error(st, RT_CANCELLED, "cancelled while waiting for %s", ep);
        break;
      }
      next_tick += tick_ms;
      if (next_tick <= now) next_tick = now + tick_ms;
      continue;   /* a delivery may have come while ticking */
    }
    if (timeout >= 0 && now >= start + timeout) {
      if (q->now > 1)
        rc = rt_error(st, RT_DEADLINE_EXCEEDED, "no reply from %s (and %zu more) within %d ms",
                      q->ow[0].p->endpoint, q->now - 1, timeout);
      else
        rc = rt_error(st, RT_DEADLINE_EXCEEDED, "no reply from %s within %d ms",
                      q->now ? q->ow[0].p->endpoint : "the peer", timeout);
      pthread_mutex_unlock(&q->mu);
      break;
    }
    int64_t until = -1;
    if (timeout >= 0) until = start + timeout;
    if (next_tick >= 0 && (until < 0 || next_tick < until)) until = next_tick;
    if (!n_own && q->now) {   /* service what we wait for ourselves, where nobody else does */
      n_own = own_peers(q, own, mine);
      pthread_mutex_lock(&q->mu);
      if (q->head) continue;
    }
    if (n_own) {
      pthread_mutex_unlock(&q->mu);
      poll_owned(q, own, n_own, until < 0 ? -1 : (int)(until - now));
      pthread_mutex_lock(&q->mu);
    } else if (until < 0) {
      pthread_cond_wait(&q->cv, &q->mu);
    } else {
      struct timespec ts;
      clock_gettime(CLOCK_MONOTONIC, &ts);
      int64_t ns = ts.tv_nsec + (until - now) * 1000000;
      ts.tv_sec += ns / 1000000000;
      ts.tv_nsec = ns % 1000000000;
      pthread_cond_timedwait(&q->cv, &q->mu, &ts);
    }
  }
  release_peers(q, own, mine, n_own);
  return rc;
}

/* ---- peers --------------------------------------------------------------------------- */

static void reader_start(void) {
  wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  pthread_t th;
  pthread_attr_t at;
  pthread_attr_init(&at);
  pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
  if (wake_fd < 0 || pthread_create(&th, &at, reader_main, NULL)) abort();
  pthread_attr_destroy(&at);
}

net_peer *net_peer_get(const char *endpoint, rt_status *st) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, reader_start);
  pthread_mutex_lock(&peers_mu);
  net_peer *p = peers;
  while (p && strcmp(p->endpoint, endpoint)) p = p->next;
  if (!p) {
    net_options opt;
    net_options_default(&opt);
    net_key key;
    if (net_key_for(&opt, &key, st)) {   /* a bad key or limit fails here, not later */
      pthread_mutex_unlock(&peers_mu);
      return NULL;
    }
    p = xcalloc(1, sizeof *p);
    p->endpoint = xstrdup(endpoint);
    p->opt = opt;
    p->link.curve = key.on;
    p->fd = p->mon_fd = p->lane_fd = -1;
    pthread_mutex_init(&p->mu, NULL);
    p->next = peers;
    peers = p;
  }
  pthread_mutex_unlock(&peers_mu);
  return p;
}

const char *net_peer_endpoint(const net_peer *p) { return p->endpoint; }

bool net_peer_local(net_peer *p) { return net_server_is_local(p->endpoint); }

bool net_peer_on_lane(net_peer *p) {
  pthread_mutex_lock(&p->mu);
  bool on = p->lane == LANE_UP;
  pthread_mutex_unlock(&p->mu);
  return on;
}

bool net_peer_connected(net_peer *p) {
  if (net_server_is_local(p->endpoint)) return true;
  pthread_mutex_lock(&p->mu);
  bool c = p->link.connected;
  pthread_mutex_unlock(&p->mu);
  return c;
}

/* The socket and its monitor (p->mu held). */
static int open_socket(net_peer *p, rt_status *st) {
  int ivl = 10, ivl_max = 250;
  net_key key;
  if (net_key_for(&p->opt, &key, st)) return st->code;
  p->sock = zmq_socket(net_ctx(), ZMQ_DEALER);
  /* ZMQ_IMMEDIATE stays 0: a request to a task that has not started yet waits in the pipe
   * and goes out when it comes up. Reconnects start at 10 ms, back off to 250 ms. */
  if (!p->sock || net_wire_setup(p->sock, &p->opt) ||
      zmq_setsockopt(p->sock, ZMQ_RECONNECT_IVL, &ivl, sizeof ivl) ||
      zmq_setsockopt(p->sock, ZMQ_RECONNECT_IVL_MAX, &ivl_max, sizeof ivl_max) ||
      (key.on && (errno = net_curve_client(p->sock, &key))))
    goto fail;
  if (net_link_open(&p->link, p->sock, p->endpoint, st)) goto close;
  size_t sz = sizeof p->mon_fd;
  if (p->link.mon) zmq_getsockopt(p->link.mon, ZMQ_FD, &p->mon_fd, &sz);
  if (zmq_connect(p->sock, p->endpoint)) {
    int e = errno;
    rt_error(st, RT_INVALID_ARGUMENT, "cannot connect to %s: %s", p->endpoint, zmq_strerror(e));
    goto close;
  }
  sz = sizeof p->fd;
  zmq_getsockopt(p->sock, ZMQ_FD, &p->fd, &sz);
  /* a peer that was served in this process has gone away: it is not "not started yet" */
  if (p->was_local) p->link.ever_connected = true;
  wake_reader();   /* poll the new descriptors */
  return RT_OK;
fail:
  rt_error(st, RT_INTERNAL, "cannot create a socket for %s: %s", p->endpoint, zmq_strerror(errno));
close:
  if (p->sock) net_link_close(&p->link, p->sock);
  if (p->sock) zmq_close(p->sock);
  p->sock = NULL;
  p->fd = p->mon_fd = -1;
  return st->code;
}

/* Fail the requests in flight to p (p->mu held): every one, or those sent on its lane. */
static void fail_pending(net_peer *p, bool lane_only, int code, const char *fmt) {
  rt_status st = {0};
  rt_error(&st, code, fmt, p->endpoint);
  for (size_t i = p->npending; i-- > 0;) {
    if (lane_only && !p->pending[i].lane) continue;
    pend pd = p->pending[i];
    p->pending[i] = p->pending[--p->npending];
    deliver(&pd, NULL, &st);
  }
}

static const char lost_fmt[] = "connection to %s lost (the peer closed it or stopped answering)";

/* End p's lane (p->mu held): the requests sent on it fail; the next request asks again. */
static void lane_close(net_peer *p) {
  if (p->lane == LANE_UP) {
    close(p->lane_fd);
    net_lane_rx_free(&p->lane_rx);
    p->lane_fd = -1;
    fail_pending(p, true, RT_UNAVAILABLE, lost_fmt);
  }
  if (p->lane != LANE_OFF) p->lane = LANE_NONE;
}

static void fail_all(net_peer *p, int code, const char *fmt) {
  fail_pending(p, false, code, fmt);
  lane_close(p);
}

/* A reply read from the lane (net_lane_got; p->mu held). */
static void lane_reply(void *arg, net_in *in, uint64_t id, const rt_status *st) {
  net_peer *p = arg;
  pend pd;
  if (!id && p->npending) id = p->pending[0].id;   /* an error about an unreadable id */
  if (!pend_del(p, id, &pd)) {
    net_in_free(in);
    return;
  }
  rt_status e = {0};
  if (st) {
    e = *st;
    rt_status_prefix(&e, "reply from %s: ", p->endpoint);
  }
  deliver(&pd, in, st ? &e : NULL);
}

/* Take what the lane has (p->mu held). False: it ended (not closed here: a send may be
 * writing it). */
static bool lane_take(void *arg) {
  net_peer *p = arg;
  return net_lane_read(p->lane_fd, &p->lane_rx, &p->opt.limits, 0, lane_reply, p) >= 0;
}

/* While a send waits for room on the lane (p->mu held): take the lane's replies, and the
 * ZeroMQ socket's word on the peer (heartbeats): false when the peer is gone. */
static bool lane_send_tick(void *arg) {
  net_peer *p = arg;
  if (!lane_take(p)) return false;
  net_link_events(&p->link, true);
  net_link_check(&p->link);
  return !p->link.lost && !p->link.refused;
}

/* Ask for a lane, behind a request just sent over ZeroMQ (p->mu held). */
static void lane_ask(net_peer *p) {
  if (p->link.curve || strncmp(p->endpoint, "tcp://", 6) || !net_lane_enabled()) {
    p->lane = LANE_OFF;
    return;
  }
  uint64_t id = atomic_fetch_add(&next_id, 1) + 1;
  if (net_wire_send(p->sock, NULL, 0, net_msg_new("Lane"), id)) return;
  p->lane_ask = id;
  p->lane = LANE_ASKED;
}

/* The answer to "Lane" (p->mu held): connect, switch, or give up on lanes to p. */
static void lane_answer(net_peer *p, net_in *in) {
  rt_status st;
  uint64_t port = 0;
  const void *token = NULL;
  size_t len = 0;
  p->lane = LANE_OFF;
  p->lane_ask = 0;
  if (!in || net_wire_error_status(in, &st) || net_get_uint(in, "port", &port, &st) ||
      net_get_bin(in, "token", &token, &len, &st) || len != NET_LANE_TOKEN || !port ||
      port > 65535)
    goto done;
  uint8_t nonce[NET_LANE_TOKEN];
  net_lane_random(nonce, sizeof nonce);
  int fd = net_lane_connect(p->endpoint, (int)port, token, nonce, LANE_CONNECT_MS);
  if (fd < 0) goto done;
  net_msg *sw = net_msg_new("LaneSwitch");
  net_msg_bin(sw, "nonce", nonce, sizeof nonce);
  if (net_wire_send(p->sock, NULL, 0, sw, atomic_fetch_add(&next_id, 1) + 1)) {
    close(fd);
    goto done;
  }
  p->lane_fd = fd;
  net_lane_rx_init(&p->lane_rx);
  p->lane = LANE_UP;
done:
  net_in_free(in);
}

/* Take the replies waiting on p's socket and judge its connection (p->mu held). */
static void service(net_peer *p) {
  if (!p->sock) return;
  net_link_events(&p->link, p->npending > 0);
  for (;;) {
    int events = 0;
    size_t sz = sizeof events;
    if (zmq_getsockopt(p->sock, ZMQ_EVENTS, &events, &sz) || !(events & ZMQ_POLLIN)) break;
    net_in *in = NULL;
    uint64_t rid = 0;
    rt_status st = {0};
    int rc = net_wire_recv(p->sock, &p->opt.limits, NULL, NULL, &in, &rid, &st);
    if (rc == NET_AGAIN) break;
    if (rid && rid == p->lane_ask) {
      lane_answer(p, rc ? NULL : in);
      if (rc) net_in_free(in);
      continue;
    }
    if (rid == 0 && p->npending) rid = p->pending[0].id;   /* an error about an unreadable id */
    pend pd;
    if (!pend_del(p, rid, &pd)) {   /* one-way, abandoned or unknown: discard */
      net_in_free(in);
      continue;
    }
    if (rc) rt_status_prefix(&st, "reply from %s: ", p->endpoint);
    deliver(&pd, in, &st);
  }
  if (p->lane == LANE_UP && !lane_take(p)) lane_close(p);
  if (!p->npending) {
    p->link.lost = false;
    p->link.wait_down = 0;
    return;
  }
  net_link_check(&p->link);
  if (p->link.refused) {
    fail_all(p, RT_UNAUTHENTICATED, "the server at %s refused the connection: cluster key "
                                    "mismatch or missing (TFSH_CLUSTER_KEY)");
  } else if (p->link.lost) {
    p->link.lost = false;
    p->link.wait_down = 0;
    fail_all(p, RT_UNAVAILABLE, "connection to %s lost (the peer closed it or stopped answering)");
  }
}

static void *reader_main(void *arg) {
  (void)arg;
  struct pollfd *fds = NULL;
  net_peer **who = NULL;
  size_t cap = 0;
  for (;;) {
    size_t n = 1;
    bool waiting_down = false;
    pthread_mutex_lock(&peers_mu);
    for (net_peer *p = peers; p; p = p->next) n += 3;
    if (n > cap) {
      cap = 2 * n;
      fds = xrealloc(fds, cap * sizeof *fds);
      who = xrealloc(who, cap * sizeof *who);
    }
    n = 0;
    fds[n] = (struct pollfd){.fd = wake_fd, .events = POLLIN};
    who[n++] = NULL;
    for (net_peer *p = peers; p; p = p->next) {   /* those with requests nobody else services */
      pthread_mutex_lock(&p->mu);
      if (p->npending && !p->owner) {
        if (p->fd >= 0) fds[n] = (struct pollfd){.fd = p->fd, .events = POLLIN}, who[n++] = p;
        if (p->mon_fd >= 0) fds[n] = (struct pollfd){.fd = p->mon_fd, .events = POLLIN}, who[n++] = p;
        if (p->lane == LANE_UP)
          fds[n] = (struct pollfd){.fd = p->lane_fd, .events = POLLIN}, who[n++] = p;
        if (!p->link.connected) waiting_down = true;
      }
      pthread_mutex_unlock(&p->mu);
    }
    pthread_mutex_unlock(&peers_mu);
    /* Not connected with requests pending: look again every 250 ms, so a peer that went
     * away is called lost (a fresh socket to a dead peer sees no event at all). */
    if (poll(fds, n, waiting_down ? 250 : -1) < 0 && errno != EINTR) abort();
    if (fds[0].revents & POLLIN) {
      uint64_t v;
      ssize_t got = read(wake_fd, &v, sizeof v);
      (void)got;
    }
    /* Every peer, not only those whose descriptor fired: the edge may have been taken by a
     * sender's zmq_send, and the down-timer needs checking. */
    pthread_mutex_lock(&peers_mu);
    net_peer *list = peers;
    pthread_mutex_unlock(&peers_mu);
    for (net_peer *p = list; p; p = p->next) {   /* peers are never freed or unlinked */
      pthread_mutex_lock(&p->mu);
      if (!p->owner) service(p);
      pthread_mutex_unlock(&p->mu);
    }
  }
  return NULL;
}

/* ---- sending ------------------------------------------------------------------------- */

static void pend_add(net_peer *p, uint64_t id, net_cq *q, uint64_t tag) {
  if (p->npending == p->cap) {
    p->cap = p->cap ? 2 * p->cap : 8;
    p->pending = xrealloc(p->pending, p->cap * sizeof *p->pending);
  }
  p->pending[p->npending++] = (pend){id, tag, q, false};
}

/* A reply from a server of this process (net_server_local's callback). */
static void local_done(void *arg, uint64_t id, net_in *reply, const rt_status *st) {
  net_peer *p = arg;
  pthread_mutex_lock(&p->mu);
  pend pd;
  if (pend_del(p, id, &pd)) deliver(&pd, reply, st);
  else net_in_free(reply);
  pthread_mutex_unlock(&p->mu);
}

/* One-way requests this thread holds back (net_peer_hold), in the order sent. */
typedef struct held {
  struct held *next;
  net_peer *p;
  net_msg *m;
} held;
static __thread struct {
  bool on;
  held *head, *tail;
} hold;

/* Take this thread's held messages for p out of the list, in order: *n of them. */
static net_msg **held_take(net_peer *p, size_t *n) {
  net_msg **ms = NULL;
  size_t cap = 0;
  *n = 0;
  held *prev = NULL;
  for (held *h = hold.head, *next; h; h = next) {
    next = h->next;
    if (h->p != p) {
      prev = h;
      continue;
    }
    if (*n == cap) ms = xrealloc(ms, (cap = cap ? 2 * cap : 4) * sizeof *ms);
    ms[(*n)++] = h->m;
    if (prev) prev->next = next;
    else hold.head = next;
    if (hold.tail == h) hold.tail = prev;
    free(h);
  }
  return ms;
}

/* Send ms[0, n) in order on p's lane, else its socket (p->mu held, the socket open); the
 * last has id, the others (one-way) new ids. All consumed. */
static int sock_send(net_peer *p, net_msg **ms, size_t n, uint64_t id, net_cq *q, rt_status *st) {
  uint64_t ids_here[8], *ids = n <= 8 ? ids_here : xmalloc(n * sizeof *ids);
  for (size_t i = 0; i + 1 < n; i++) ids[i] = atomic_fetch_add(&next_id, 1) + 1;
  ids[n - 1] = id;
  int rc = RT_OK;
  /* a lane its server has closed (it stopped, or restarted) is seen here, not on the
   * request: the request goes over ZeroMQ, as it would have without lanes */
  struct pollfd pf = {.fd = p->lane_fd, .events = POLLIN | POLLRDHUP};
  if (p->lane == LANE_UP && poll(&pf, 1, 0) > 0 && !lane_take(p)) lane_close(p);
  if (p->lane == LANE_UP) {
    int e = net_lane_sendv(p->lane_fd, ms, ids, n, lane_send_tick, p, LANE_SEND_TIMEOUT_MS);
    if (e) {
      if (p->link.lost) rc = rt_error(st, RT_UNAVAILABLE, lost_fmt, p->endpoint);
      else rc = rt_error(st, RT_UNAVAILABLE, "cannot send to %s: %s", p->endpoint, strerror(e));
      lane_close(p);
    } else {
      for (size_t i = p->npending; q && i-- > 0;)
        if (p->pending[i].id == id) {
          p->pending[i].lane = true;
          break;
        }
    }
  } else {
    for (size_t i = 0; i < n; i++) {
      int e = rc ? 0 : net_wire_send(p->sock, NULL, 0, ms[i], ids[i]);
      if (rc) net_msg_free(ms[i]);
      else if (e)
        rc = rt_error(st, RT_UNAVAILABLE, "cannot send to %s: %s", p->endpoint,
                      e == EAGAIN ? "send queue full" : zmq_strerror(e));
    }
    if (!rc) {
      if (p->lane == LANE_NONE) lane_ask(p);
      int events = 0;
      size_t sz = sizeof events;
      /* zmq_send may have taken the edge of a reply the reader (or the peer's owner)
       * waits for: hand it over; and a request waiting on a dropped connection needs the
       * reader's down-timer (an owner keeps its own) */
      bool edge = !zmq_getsockopt(p->sock, ZMQ_EVENTS, &events, &sz) && (events & ZMQ_POLLIN);
      if (p->owner && edge) efd_wake(p->owner->efd);
      else if (edge || (q && !p->link.connected && !p->owner)) wake_reader();
    }
  }
  if (ids != ids_here) free(ids);
  return rc;
}

/* Send req with a new id, its reply routed to q (NULL: none expected), after what this
 * thread holds for p (net_peer_hold). run_here: an in-process server runs the handler on
 * this thread. */
static int send_req(net_peer *p, net_msg *req, net_cq *q, uint64_t tag, bool run_here,
                    uint64_t *id_out, rt_status *st) {
  uint64_t id = atomic_fetch_add(&next_id, 1) + 1;   /* never 0 */
  if (id_out) *id_out = id;
  if (tag == NET_CQ_NONE) tag = id;
  pthread_mutex_lock(&p->mu);
  if (q) {
    pthread_mutex_lock(&q->mu);
    owed_add(q, p, id);
    pthread_mutex_unlock(&q->mu);
    pend_add(p, id, q, tag);
  }
  pthread_mutex_unlock(&p->mu);
  /* In-process first: the server may live here (its handler then owns req). */
  int local = net_server_local(p->endpoint, req, id, run_here, q ? local_done : NULL, p);
  pthread_mutex_lock(&p->mu);
  if (local) {
    p->was_local = true;
    pthread_mutex_unlock(&p->mu);
    return RT_OK;
  }
  size_t n = 0;
  net_msg *one[1], **along = hold.head ? held_take(p, &n) : NULL, **ms = one;
  if (n) {
    ms = xrealloc(along, (n + 1) * sizeof *ms);
    along = NULL;
  }
  ms[n++] = req;
  int rc = RT_OK;
  if (!p->sock && (rc = open_socket(p, st))) {
    for (size_t i = 0; i < n; i++) net_msg_free(ms[i]);
  } else {
    if (!p->npending || (q && p->npending == 1)) {
      /* Events from before this request (a peer that died and came back) concern requests
       * already answered: take them now, so they cannot fail this one. */
      net_link_events(&p->link, false);
      p->link.lost = false;
      p->link.wait_down = 0;
    }
    rc = sock_send(p, ms, n, id, q, st);
  }
  if (ms != one) free(ms);
  if (rc && q) pend_del(p, id, NULL);
  pthread_mutex_unlock(&p->mu);
  if (rc && q) {
    pthread_mutex_lock(&q->mu);
    owed_del(q, id);
    pthread_mutex_unlock(&q->mu);
  }
  return rc;
}

int net_peer_send(net_peer *p, net_msg *req, net_cq *q, uint64_t tag, uint64_t *id,
                  rt_status *st) {
  return send_req(p, req, q, tag, false, id, st);
}

void net_peer_hold(void) { hold.on = true; }

int net_peer_flush(rt_status *st) {
  int rc = RT_OK;
  hold.on = false;
  while (hold.head) {   /* each peer's last held message takes the others along */
    net_peer *p = hold.head->p;
    held *last = NULL, *before = NULL;
    for (held *h = hold.head, *prev = NULL; h; prev = h, h = h->next)
      if (h->p == p) last = h, before = prev;
    if (before) before->next = last->next;
    else hold.head = last->next;
    if (hold.tail == last) hold.tail = before;
    net_msg *m = last->m;
    free(last);
    rt_status e;
    int r = send_req(p, m, NULL, 0, false, NULL, &e);
    if (r && !rc) rc = r, *st = e;
  }
  return rc;
}

int net_peer_send_oneway(net_peer *p, net_msg *req, rt_status *st) {
  pthread_mutex_lock(&p->mu);
  bool keep = hold.on && p->sock;   /* a socket to open may fail: that error is the sender's */
  pthread_mutex_unlock(&p->mu);
  if (keep) {
    held *h = xcalloc(1, sizeof *h);
    *h = (held){NULL, p, req};
    if (hold.tail) hold.tail->next = h;
    else hold.head = h;
    hold.tail = h;
    return RT_OK;
  }
  return send_req(p, req, NULL, 0, false, NULL, st);
}

/* Each thread's queue for its blocking calls (freed when the thread exits). */
static pthread_key_t call_q_key;
static pthread_once_t call_q_once = PTHREAD_ONCE_INIT;
static void call_q_free(void *q) { net_cq_free(q); }
static void call_q_init(void) { pthread_key_create(&call_q_key, call_q_free); }

int net_peer_call(net_peer *p, net_msg *req, net_in **reply, const net_wait *w, rt_status *st) {
  *reply = NULL;
  pthread_once(&call_q_once, call_q_init);
  net_cq *q = pthread_getspecific(call_q_key);
  if (!q) pthread_setspecific(call_q_key, q = net_cq_new());
  uint64_t id, tag;
  /* A handler run here for an in-process server sees this wait's tick (Ctrl-C, views). */
  outer me = {w, net_now_ms(), outer_top};
  if (w && w->tick) outer_top = &me;
  int rc = send_req(p, req, q, NET_CQ_NONE, true, &id, st);
  outer_top = me.prev;
  if (rc) return rc;
  rc = net_cq_wait(q, w, &id, &tag, reply, st);
  if (tag == NET_CQ_NONE) net_cq_forget(q, p, id);   /* timed out or cancelled */
  return rc;
}
