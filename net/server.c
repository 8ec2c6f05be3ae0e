/* The server. The ROUTER socket is used under sock_mu only: the I/O thread reads requests
 * there (sleeping in poll(2) on the socket's ZMQ_FD, edge-triggered, and an eventfd),
 * answers the malformed ones itself and queues the rest for handler threads; a handler
 * sends its reply itself, at once, without a hop to the I/O thread (replies made on the
 * I/O thread, by handlers it runs inline, are queued and sent after the batch). A send
 * that may have taken the edge the I/O thread waits for wakes it. The rest of what is
 * shared sits under mu.
 *
 * Leader and followers: the thread that serves the sockets (the leader; "the I/O thread"
 * below) is whichever holds the lead. When it reads a request for a handler it hands the
 * lead to an idle thread and runs that request itself, so a request starts without a
 * wake-up on its path; the rest of a batch goes to the queue as before. A thread that
 * cannot hand on (all busy, none more allowed) keeps leading.
 *
 * Direct lanes (net/lane.h): the I/O thread also accepts lane connections, reads their
 * hellos, and reads the requests of each lane whose peer has switched to it. A lane's
 * requests are read only after its LaneSwitch has come through the ROUTER, so a peer's
 * requests are read in the order it sent them, whichever way each went. A lane belongs to
 * the I/O thread (its list, its reading) and to each request read from it (a reference):
 * the I/O thread closes it when it ends, and the last reference frees it. Its writes are
 * under its own wmu, from whichever thread replies. */
#define _GNU_SOURCE   /* accept4, POLLRDHUP */
#include "net/server.h"
#include "base/alloc.h"
#include "net/lane.h"
#include "net/wire.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#define IO_BATCH 64   /* requests read before the I/O thread looks at replies again */
#define LANE_SEND_TIMEOUT_MS 60000   /* a lane whose peer takes nothing for this long is dead */

/* A direct lane's connection, as the server sees it. */
typedef struct lane_conn {
  struct lane_conn *next;       /* the I/O thread's list */
  int fd;
  enum { LC_HELLO, LC_WAIT, LC_OPEN } state;   /* hello to read; LaneSwitch to come; open */
  uint8_t hello[NET_LANE_HELLO];
  size_t hello_got;
  net_lane_rx rx;
  atomic_int refs;              /* the list's, and each request's read from it */
  atomic_bool dead;             /* closed by the I/O thread: replies are dropped */
  pthread_mutex_t wmu;          /* writes */
} lane_conn;

struct net_req {
  net_server *srv;
  net_req *next;
  net_in *in;
  net_msg *reply;
  bool local;                   /* from this process (net_server_local): no socket */
  lane_conn *conn;              /* read from this direct lane (a reference), else NULL */
  net_local_fn done;            /* local: who waits for the reply (NULL: nobody) */
  void *done_arg;
  size_t rlen;
  uint8_t routing[NET_ROUTING_MAX];
};

typedef struct req_queue {
  net_req *head, *tail;
} req_queue;

struct net_server {
  void *router;
  pthread_mutex_t sock_mu;      /* the router socket */
  int router_fd;                /* its ZMQ_FD */
  int efd;                      /* wakes the I/O thread: replies queued, or stop */
  net_options opt;
  net_handler handler;
  void *user;
  int nendpoints;
  char **endpoints;
  pthread_t io;                 /* the first leader */

  pthread_mutex_t mu;
  pthread_cond_t work_cv;       /* handler threads wait for requests */
  pthread_cond_t done_cv;       /* free waits for outstanding to reach 0 */
  pthread_cond_t lead_cv;       /* stop waits for leading to reach 0 */
  req_queue work;               /* requests waiting for a handler thread */
  req_queue out;                /* replies waiting for the I/O thread */
  int nwork;                    /* requests in work, and the lead when it is wanted */
  int idle;                     /* handler threads waiting on work_cv */
  int outstanding;              /* requests handed to handlers, not yet answered */
  int nthreads;
  pthread_t *threads;
  bool stopping;
  bool lead_wanted;             /* the lead is handed on: the next thread free takes it */
  int leading;                  /* threads in lead(): 0 or 1 */
  char inline_types[NET_SERVER_MAX_INLINE][NET_TYPE_MAX + 1];   /* handled on the I/O thread (never block) */
  atomic_int n_inline;          /* inline_types filled: published after the slot is written
                                   (the I/O thread may already be reading requests) */
  int lane_fd;                  /* the direct lanes' listening socket (-1: none offered) */
  int lane_port;
  uint8_t lane_token[NET_LANE_TOKEN];
  lane_conn *lanes;             /* the I/O thread's */
  /* the leader's, kept from one leader to the next */
  struct pollfd *io_fds;
  lane_conn **io_who;
  size_t io_cap;
  bool io_more, lane_more;      /* the ROUTER's edge may have come; a lane has bytes staged */
  int64_t accept_pause;         /* the listener not before this time (net_now_ms), if nonzero */
};

/* Servers by the endpoints clients of this process name them with (net_server_local). */
typedef struct alias {
  struct alias *next;
  char *endpoint;
  net_server *s;
} alias;
static pthread_mutex_t aliases_mu = PTHREAD_MUTEX_INITIALIZER;
static alias *aliases;

/* The server whose batch this thread is reading, under its sock_mu (a handler it runs
 * inline queues its reply for after the batch). */
static __thread net_server *io_batch;

static void push(req_queue *q, net_req *r) {
  r->next = NULL;
  if (q->tail) q->tail->next = r;
  else q->head = r;
  q->tail = r;
}

static net_req *pop(req_queue *q) {
  net_req *r = q->head;
  if (r && !(q->head = r->next)) q->tail = NULL;
  return r;
}

static void lane_unref(lane_conn *c) {
  if (!c || atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) != 1) return;
  close(c->fd);
  net_lane_rx_free(&c->rx);
  pthread_mutex_destroy(&c->wmu);
  free(c);
}

static void req_free(net_req *r) {
  net_msg_free(r->reply);
  net_in_free(r->in);
  lane_unref(r->conn);
  free(r);
}

/* Send m (consumed) on lane c: a reply, or an error about a request read from it. */
static void lane_send(lane_conn *c, net_msg *m, uint64_t id) {
  pthread_mutex_lock(&c->wmu);
  if (atomic_load(&c->dead) ||
      net_lane_send(c->fd, m, id, NULL, NULL, LANE_SEND_TIMEOUT_MS)) {
    if (!atomic_load(&c->dead)) shutdown(c->fd, SHUT_RDWR);   /* the I/O thread ends it */
  }
  pthread_mutex_unlock(&c->wmu);
}

static void wake_io(net_server *s) {
  uint64_t one = 1;
  ssize_t n = write(s->efd, &one, sizeof one);
  (void)n;   /* EAGAIN: the counter is already nonzero, the I/O thread will wake */
}

/* ---- handler threads --------------------------------------------------------------- */

static bool lead(net_server *s, net_req **mine);

/* A server thread: it leads when it holds the lead (serving the sockets, as the I/O
 * thread), else runs the requests queued for handlers, and takes the lead first when it is
 * handed on. A leader that reads a request for a handler hands the lead on and runs the
 * request itself: the reply goes out without waiting for another thread to wake. */
static void serve(net_server *s, bool leader) {
  for (;;) {
    if (leader) {
      net_req *mine = NULL;
      if (!lead(s, &mine)) return;
      s->handler(s->user, mine);
      leader = false;
    }
    pthread_mutex_lock(&s->mu);
    while (!s->work.head && !s->lead_wanted && !s->stopping) {
      s->idle++;
      pthread_cond_wait(&s->work_cv, &s->mu);
      s->idle--;
    }
    if (s->stopping) {
      pthread_mutex_unlock(&s->mu);
      return;
    }
    if (s->lead_wanted) {
      s->lead_wanted = false;
      s->nwork--;
      pthread_mutex_unlock(&s->mu);
      leader = true;
      continue;
    }
    net_req *r = pop(&s->work);
    s->nwork--;
    s->outstanding++;
    pthread_mutex_unlock(&s->mu);
    s->handler(s->user, r);
  }
}

static void *handler_main(void *arg) {
  serve(arg, false);
  return NULL;
}

static void *io_main(void *arg) {
  serve(arg, true);
  return NULL;
}

/* Queue r for a handler; start a thread when more requests wait than threads idle
 * (a thread signalled but not yet running still counts as idle, its request as
 * waiting, so a burst starts as many threads as it needs). */
static void dispatch(net_server *s, net_req *r) {
  pthread_mutex_lock(&s->mu);
  push(&s->work, r);
  s->nwork++;
  if (s->nwork > s->idle && s->nthreads < s->opt.max_threads &&
      pthread_create(&s->threads[s->nthreads], NULL, handler_main, s) == 0)
    s->nthreads++;
  pthread_cond_signal(&s->work_cv);
  pthread_mutex_unlock(&s->mu);
}

/* ---- the I/O thread ---------------------------------------------------------------- */

static bool handled_inline(net_server *s, const char *type) {
  int n = atomic_load_explicit(&s->n_inline, memory_order_acquire);
  for (int i = 0; i < n; i++)
    if (!strcmp(s->inline_types[i], type)) return true;
  return false;
}

void net_server_inline(net_server *s, const char *type) {   /* one thread: the server's maker */
  int i = atomic_load_explicit(&s->n_inline, memory_order_relaxed);
  if (i < NET_SERVER_MAX_INLINE) {
    snprintf(s->inline_types[i], sizeof s->inline_types[i], "%s", type);
    atomic_store_explicit(&s->n_inline, i + 1, memory_order_release);
    return;
  }
}

/* "Lane" (which lane, if any) and "LaneSwitch" (requests come on that lane from now on):
 * the net layer's own, answered here (sock_mu held). False for every other type. */
static bool lane_message(net_server *s, net_req *r) {
  const char *t = net_in_type(r->in);
  if (!strcmp(t, "Lane")) {
    net_msg *m;
    if (s->lane_fd >= 0) {
      m = net_msg_new("Lane");
      net_msg_uint(m, "port", (uint64_t)s->lane_port);
      net_msg_bin(m, "token", s->lane_token, sizeof s->lane_token);
    } else {
      m = net_wire_error(RT_UNIMPLEMENTED, "no direct lane here");
    }
    net_wire_send(s->router, r->routing, r->rlen, m, net_in_id(r->in));
  } else if (!strcmp(t, "LaneSwitch")) {
    const void *nonce;
    size_t len;
    rt_status st;
    if (!net_get_bin(r->in, "nonce", &nonce, &len, &st) && len == NET_LANE_TOKEN)
      for (lane_conn *c = s->lanes; c; c = c->next)
        if (c->state == LC_WAIT && !memcmp(c->hello + 8 + NET_LANE_TOKEN, nonce, len))
          c->state = LC_OPEN;
  } else {
    return false;
  }
  req_free(r);
  return true;
}

/* Read a batch of requests (sock_mu held); those for handler threads go on *later, to be
 * dispatched once sock_mu is released (a handler woken at once may want to reply). */
static void read_requests(net_server *s, req_queue *later) {
  for (int i = 0; i < IO_BATCH; i++) {
    net_req *r = xcalloc(1, sizeof *r);
    r->srv = s;
    rt_status st;
    uint64_t id;
    int rc = net_wire_recv(s->router, &s->opt.limits, r->routing, &r->rlen, &r->in, &id, &st);
    if (rc == NET_AGAIN) {
      free(r);
      return;
    }
    if (rc) {   /* refused before the handler: answer here, keep serving */
      net_wire_send(s->router, r->routing, r->rlen, net_wire_error(rc, st.msg), id);
      free(r);
      continue;
    }
    if (lane_message(s, r)) continue;
    if (handled_inline(s, net_in_type(r->in))) {
      pthread_mutex_lock(&s->mu);
      s->outstanding++;
      pthread_mutex_unlock(&s->mu);
      s->handler(s->user, r);
      continue;
    }
    push(later, r);
  }
}

/* Is there more to read (sock_mu held)? */
static bool readable(net_server *s) {
  int events = 0;
  size_t sz = sizeof events;
  return !zmq_getsockopt(s->router, ZMQ_EVENTS, &events, &sz) && (events & ZMQ_POLLIN);
}

/* ---- direct lanes (the I/O thread's) --------------------------------------------------- */

#define LANE_ACCEPT_PAUSE_MS 100   /* out of descriptors: look at the listener again after */

/* Take the connections waiting on the listener. False when accept(2) fails for want of
 * descriptors (the listener stays readable: stop polling it for a while). */
static bool lane_accept(net_server *s) {
  for (;;) {
    int fd = accept4(s->lane_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return errno != EMFILE && errno != ENFILE && errno != ENOBUFS && errno != ENOMEM;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    lane_conn *c = xcalloc(1, sizeof *c);
    c->fd = fd;
    c->state = LC_HELLO;
    atomic_init(&c->refs, 1);
    atomic_init(&c->dead, false);
    pthread_mutex_init(&c->wmu, NULL);
    net_lane_rx_init(&c->rx);
    c->next = s->lanes;
    s->lanes = c;
  }
}

/* Read a lane's hello; on the whole of it, check the token and ack. False: close it. */
static bool lane_hello(net_server *s, lane_conn *c) {
  ssize_t r = read(c->fd, c->hello + c->hello_got, sizeof c->hello - c->hello_got);
  if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) return false;
  if (r > 0) c->hello_got += (size_t)r;
  if (c->hello_got < sizeof c->hello) return true;
  if (memcmp(c->hello, NET_LANE_MAGIC, 8) || memcmp(c->hello + 8, s->lane_token, NET_LANE_TOKEN))
    return false;   /* not a tfsh peer, or one that asked another server */
  if (send(c->fd, NET_LANE_MAGIC, 8, MSG_NOSIGNAL) != 8) return false;
  c->state = LC_WAIT;
  return true;
}

static void lane_end(net_server *s, lane_conn *c) {
  for (lane_conn **pp = &s->lanes; *pp; pp = &(*pp)->next)
    if (*pp == c) {
      *pp = c->next;
      break;
    }
  shutdown(c->fd, SHUT_RDWR);   /* a reply being written fails at once */
  pthread_mutex_lock(&c->wmu);
  atomic_store(&c->dead, true);
  pthread_mutex_unlock(&c->wmu);
  lane_unref(c);
}

typedef struct lane_read {
  net_server *s;
  lane_conn *c;
  req_queue *later;
} lane_read;

/* A request read from a lane (net_lane_got): as read_requests does with the ROUTER's. */
static void lane_got(void *arg, net_in *in, uint64_t id, const rt_status *st) {
  lane_read *x = arg;
  if (!in) {   /* refused before the handler: answer here, keep serving */
    lane_send(x->c, net_wire_error(st->code, st->msg), id);
    return;
  }
  net_req *r = xcalloc(1, sizeof *r);
  r->srv = x->s;
  r->in = in;
  r->conn = x->c;
  atomic_fetch_add(&x->c->refs, 1);
  if (handled_inline(x->s, net_in_type(in))) {
    pthread_mutex_lock(&x->s->mu);
    x->s->outstanding++;
    pthread_mutex_unlock(&x->s->mu);
    x->s->handler(x->s->user, r);
    return;
  }
  push(x->later, r);
}

/* Serve the lanes whose descriptors fired (fds[i] for who[i]); *more: one stopped at its
 * batch with bytes staged. */
static void lanes_serve(net_server *s, struct pollfd *fds, lane_conn **who, size_t n,
                        req_queue *later, bool *more) {
  *more = false;
  for (size_t i = 0; i < n; i++) {
    lane_conn *c = who[i];
    if (!c || (!fds[i].revents && !(c->state == LC_OPEN && c->rx.pos < c->rx.end))) continue;
    bool keep = true;
    if (c->state == LC_HELLO) {
      keep = lane_hello(s, c);
    } else if (c->state == LC_WAIT) {
      keep = false;   /* it hung up before switching */
    } else {
      lane_read x = {s, c, later};
      int r = net_lane_read(c->fd, &c->rx, &s->opt.limits, IO_BATCH, lane_got, &x);
      if (r < 0) keep = false;
      if (r == 1) *more = true;
    }
    if (!keep) lane_end(s, c);
  }
}

/* Hand the lead on, to run mine here (s->mu held): an idle thread takes it, else a new
 * one. False when neither can (every thread busy, the most of them running): then this
 * thread keeps leading, and mine goes to the queue. */
static bool hand_lead_on(net_server *s) {
  if (s->stopping) return false;
  if (s->idle <= s->nwork) {
    if (s->nthreads >= s->opt.max_threads ||
        pthread_create(&s->threads[s->nthreads], NULL, handler_main, s))
      return false;
    s->nthreads++;
  }
  s->lead_wanted = true;
  s->nwork++;
  pthread_cond_signal(&s->work_cv);
  return true;
}

/* Serve the sockets: read requests, run those that never block, queue the others for
 * handler threads. Returns false when the server stops; true with *mine, a request this
 * thread is to run now that it has handed the lead on. */
static bool lead(net_server *s, net_req **mine) {
  pthread_mutex_lock(&s->mu);
  if (s->stopping) {
    pthread_mutex_unlock(&s->mu);
    return false;
  }
  s->leading++;
  pthread_mutex_unlock(&s->mu);
  for (;;) {
    size_t n = 3;
    for (lane_conn *c = s->lanes; c; c = c->next) n++;
    if (n > s->io_cap) {
      s->io_cap = 2 * n;
      s->io_fds = xrealloc(s->io_fds, s->io_cap * sizeof *s->io_fds);
      s->io_who = xrealloc(s->io_who, s->io_cap * sizeof *s->io_who);
    }
    struct pollfd *fds = s->io_fds;
    lane_conn **who = s->io_who;
    n = 0;
    fds[n] = (struct pollfd){.fd = s->router_fd, .events = POLLIN}, who[n++] = NULL;
    fds[n] = (struct pollfd){.fd = s->efd, .events = POLLIN}, who[n++] = NULL;
    size_t listen_at = SIZE_MAX;
    if (s->accept_pause && net_now_ms() >= s->accept_pause) s->accept_pause = 0;
    if (s->lane_fd >= 0 && !s->accept_pause) {
      listen_at = n;
      fds[n] = (struct pollfd){.fd = s->lane_fd, .events = POLLIN}, who[n++] = NULL;
    }
    for (lane_conn *c = s->lanes; c; c = c->next)
      fds[n] = (struct pollfd){.fd = c->fd, .events = c->state == LC_WAIT ? POLLRDHUP : POLLIN},
      who[n++] = c;
    int timeout = s->io_more || s->lane_more ? 0 : s->accept_pause ? LANE_ACCEPT_PAUSE_MS : -1;
    if (poll(fds, (nfds_t)n, timeout) < 0 && errno != EINTR) break;
    if (fds[1].revents & POLLIN) {
      uint64_t v;
      ssize_t got = read(s->efd, &v, sizeof v);
      (void)got;
    }
    pthread_mutex_lock(&s->mu);
    bool stop = s->stopping;
    pthread_mutex_unlock(&s->mu);
    if (stop) break;
    pthread_mutex_lock(&s->sock_mu);
    req_queue later = {0};
    io_batch = s;
    read_requests(s, &later);
    io_batch = NULL;
    pthread_mutex_lock(&s->mu);
    req_queue out = s->out;   /* replies of the handlers run here */
    s->out = (req_queue){0};
    pthread_mutex_unlock(&s->mu);
    for (net_req *r = out.head, *next; r; r = next) {
      next = r->next;
      /* EHOSTUNREACH: the client went away; nobody is left to tell. */
      net_wire_send(s->router, r->routing, r->rlen, r->reply, net_in_id(r->in));
      r->reply = NULL;
      req_free(r);
    }
    s->io_more = readable(s);
    pthread_mutex_unlock(&s->sock_mu);
    if (listen_at != SIZE_MAX && (fds[listen_at].revents & POLLIN) && !lane_accept(s))
      s->accept_pause = net_now_ms() + LANE_ACCEPT_PAUSE_MS;
    lanes_serve(s, fds, who, n, &later, &s->lane_more);
    net_req *first = pop(&later);
    for (net_req *r; (r = pop(&later));) dispatch(s, r);
    if (!first) continue;
    pthread_mutex_lock(&s->mu);
    if (hand_lead_on(s)) {
      s->outstanding++;
      s->io_more = true;   /* the next leader looks before it polls */
      s->leading--;
      pthread_mutex_unlock(&s->mu);
      *mine = first;
      return true;
    }
    pthread_mutex_unlock(&s->mu);
    dispatch(s, first);
  }
  pthread_mutex_lock(&s->mu);
  s->leading--;
  pthread_cond_broadcast(&s->lead_cv);
  pthread_mutex_unlock(&s->mu);
  return false;
}

/* ---- life cycle -------------------------------------------------------------------- */

static int bind_error(const char *ep, rt_status *st) {
  int e = errno;
  if (e == EADDRINUSE)
    return rt_error(st, RT_UNAVAILABLE, "cannot listen on %s: address already in use", ep);
  if (e == EADDRNOTAVAIL)
    return rt_error(st, RT_UNAVAILABLE, "cannot listen on %s: address not available", ep);
  return rt_error(st, RT_INVALID_ARGUMENT, "cannot listen on %s: %s", ep, zmq_strerror(e));
}

static void server_release(net_server *s) {
  if (s->router) zmq_close(s->router);
  if (s->lane_fd >= 0) close(s->lane_fd);
  if (s->efd >= 0) close(s->efd);
  for (int i = 0; i < s->nendpoints; i++) free(s->endpoints[i]);
  free(s->endpoints);
  free(s->threads);
  pthread_cond_destroy(&s->done_cv);
  pthread_cond_destroy(&s->lead_cv);
  free(s->io_fds);
  free(s->io_who);
  pthread_cond_destroy(&s->work_cv);
  pthread_mutex_destroy(&s->sock_mu);
  pthread_mutex_destroy(&s->mu);
  free(s);
}

net_server *net_server_new(const char *const *endpoints, int n, net_handler handler,
                           void *user, const net_options *opts, rt_status *st) {
  net_server *s = xcalloc(1, sizeof *s);
  if (opts) s->opt = *opts;
  else net_options_default(&s->opt);
  if (s->opt.max_threads < 1) s->opt.max_threads = 1;
  s->handler = handler;
  s->user = user;
  s->efd = -1;
  s->lane_fd = -1;
  pthread_mutex_init(&s->mu, NULL);
  pthread_mutex_init(&s->sock_mu, NULL);
  pthread_cond_init(&s->work_cv, NULL);
  pthread_cond_init(&s->done_cv, NULL);
  pthread_cond_init(&s->lead_cv, NULL);
  s->threads = xcalloc((size_t)s->opt.max_threads, sizeof *s->threads);
  s->endpoints = xcalloc((size_t)(n > 0 ? n : 1), sizeof *s->endpoints);

  net_key key;
  if (net_key_for(&s->opt, &key, st)) {
    server_release(s);
    return NULL;
  }
  for (int i = 0; i < n; i++)
    if (!key.on && !s->opt.insecure && !net_endpoint_local(endpoints[i])) {
      rt_error(st, RT_FAILED_PRECONDITION,
               "refusing to listen on %s without a cluster key: anyone who can reach it could "
               "run code as this user. Make a key with `tfsh keygen FILE` and give it to every "
               "task (TFSH_CLUSTER_KEY=FILE or --cluster-key FILE), or pass --insecure (a "
               "script's tf.train.Server: TFSH_INSECURE=1) to serve without one", endpoints[i]);
      server_release(s);
      return NULL;
    }

  int one = 1, zero = 0;
  s->router = zmq_socket(net_ctx(), ZMQ_ROUTER);
  if (!s->router || net_wire_setup(s->router, &s->opt) ||
      zmq_setsockopt(s->router, ZMQ_ROUTER_MANDATORY, &one, sizeof one) ||
      /* replies are bounded by the requests a client sent: never block or drop them */
      zmq_setsockopt(s->router, ZMQ_SNDHWM, &zero, sizeof zero) ||
      (key.on && (errno = net_curve_server(s->router, &key)))) {
    rt_error(st, RT_INTERNAL, "cannot create a server socket: %s", zmq_strerror(errno));
    server_release(s);
    return NULL;
  }
  for (int i = 0; i < n; i++) {
    char buf[512];
    size_t len = sizeof buf;
    if (zmq_bind(s->router, endpoints[i]) || zmq_getsockopt(s->router, ZMQ_LAST_ENDPOINT, buf, &len)) {
      bind_error(endpoints[i], st);
      server_release(s);
      return NULL;
    }
    s->endpoints[s->nendpoints++] = xstrdup(buf);
  }
  /* A direct lane beside the first tcp endpoint, where there is no key (net/lane.h); a
   * lane that cannot be made leaves the peers on ZeroMQ. */
  for (int i = 0; i < s->nendpoints && s->lane_fd < 0 && !key.on && net_lane_enabled(); i++)
    if (!strncmp(s->endpoints[i], "tcp://", 6) &&
        (s->lane_fd = net_lane_listen(s->endpoints[i], &s->lane_port)) >= 0)
      net_lane_random(s->lane_token, sizeof s->lane_token);
  s->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  size_t fdsz = sizeof s->router_fd;
  if (zmq_getsockopt(s->router, ZMQ_FD, &s->router_fd, &fdsz)) s->router_fd = -1;
  if (s->efd < 0 || s->router_fd < 0 || pthread_create(&s->io, NULL, io_main, s)) {
    rt_error(st, RT_INTERNAL, "cannot start the server's I/O thread: %s", strerror(errno));
    server_release(s);
    return NULL;
  }
  for (int i = 0; i < s->nendpoints; i++) net_server_alias(s, s->endpoints[i]);
  return s;
}

const char *net_server_endpoint(const net_server *s, int i) {
  return i >= 0 && i < s->nendpoints ? s->endpoints[i] : NULL;
}

static void aliases_drop(net_server *s) {
  pthread_mutex_lock(&aliases_mu);
  for (alias **p = &aliases; *p;) {
    alias *a = *p;
    if (a->s == s) {
      *p = a->next;
      free(a->endpoint);
      free(a);
    } else {
      p = &a->next;
    }
  }
  pthread_mutex_unlock(&aliases_mu);
}

void net_server_alias(net_server *s, const char *endpoint) {
  alias *a = xcalloc(1, sizeof *a);
  a->endpoint = xstrdup(endpoint);
  a->s = s;
  pthread_mutex_lock(&aliases_mu);
  a->next = aliases;
  aliases = a;
  pthread_mutex_unlock(&aliases_mu);
}

static net_server *alias_find(const char *endpoint) {
  for (alias *a = aliases; a; a = a->next)
    if (!strcmp(a->endpoint, endpoint)) return a->s;
  return NULL;
}

bool net_server_is_local(const char *endpoint) {
  pthread_mutex_lock(&aliases_mu);
  bool found = alias_find(endpoint) != NULL;
  pthread_mutex_unlock(&aliases_mu);
  return found;
}

bool net_server_local(const char *endpoint, net_msg *req, uint64_t id, bool run_here,
                      net_local_fn done, void *arg) {
  pthread_mutex_lock(&aliases_mu);
  net_server *s = alias_find(endpoint);
  if (!s) {
    pthread_mutex_unlock(&aliases_mu);
    return false;
  }
  rt_status st = {0};
  net_req *r = xcalloc(1, sizeof *r);
  r->srv = s;
  r->local = true;
  r->done = done;
  r->done_arg = arg;
  if (net_wire_local(req, id, &s->opt.limits, &r->in, &st)) {
    pthread_mutex_unlock(&aliases_mu);
    free(r);
    if (done) done(arg, id, NULL, &st);
    return true;
  }
  if (!run_here) {
    dispatch(s, r);   /* the server cannot stop meanwhile: stopping drops the alias first */
    pthread_mutex_unlock(&aliases_mu);
    return true;
  }
  pthread_mutex_lock(&s->mu);
  s->outstanding++;   /* net_server_free waits for this answer */
  pthread_mutex_unlock(&s->mu);
  pthread_mutex_unlock(&aliases_mu);
  s->handler(s->user, r);
  return true;
}

void net_server_stop(net_server *s) {
  aliases_drop(s);
  pthread_mutex_lock(&s->mu);
  bool first = !s->stopping;
  s->stopping = true;
  pthread_cond_broadcast(&s->work_cv);
  pthread_mutex_unlock(&s->mu);
  if (!first) return;
  wake_io(s);
  pthread_mutex_lock(&s->mu);
  while (s->leading) pthread_cond_wait(&s->lead_cv, &s->mu);
  pthread_mutex_unlock(&s->mu);
  /* no thread leads now, nor will: the sockets are this thread's to close */
  while (s->lanes) lane_end(s, s->lanes);
  pthread_mutex_lock(&s->sock_mu);
  zmq_close(s->router);
  s->router = NULL;
  pthread_mutex_unlock(&s->sock_mu);
  pthread_mutex_lock(&s->mu);
  s->lead_wanted = false;
  for (net_req *r; (r = pop(&s->work));) {
    if (r->done) {   /* an in-process caller waits: tell it, as a socket would */
      rt_status st = {0};
      rt_error(&st, RT_UNAVAILABLE, "connection to %s lost (the server stopped)",
               s->nendpoints ? s->endpoints[0] : "an in-process server");
      r->done(r->done_arg, net_in_id(r->in), NULL, &st);
    }
    req_free(r);
  }
  s->nwork = 0;
  pthread_mutex_unlock(&s->mu);
}

void net_server_free(net_server *s) {
  if (!s) return;
  net_server_stop(s);
  pthread_mutex_lock(&s->mu);
  while (s->outstanding > 0) pthread_cond_wait(&s->done_cv, &s->mu);
  pthread_mutex_unlock(&s->mu);
  pthread_join(s->io, NULL);
  for (int i = 0; i < s->nthreads; i++) pthread_join(s->threads[i], NULL);
  server_release(s);
}

/* ---- replies ----------------------------------------------------------------------- */

const net_in *net_req_msg(const net_req *r) { return r->in; }

static void local_answer(net_req *r, net_msg *reply) {
  net_server *s = r->srv;
  uint64_t id = net_in_id(r->in);
  net_local_fn done = r->done;
  void *arg = r->done_arg;
  net_in_free(r->in);
  free(r);
  pthread_mutex_lock(&s->mu);
  if (--s->outstanding == 0) pthread_cond_broadcast(&s->done_cv);
  pthread_mutex_unlock(&s->mu);
  if (!done) {
    net_msg_free(reply);
    return;
  }
  rt_status st = {0};
  net_in *in = NULL;
  if (!reply) reply = net_msg_new("Ok");
  if (net_wire_local(reply, id, NULL, &in, &st)) done(arg, id, NULL, &st);
  else done(arg, id, in, NULL);
}

void net_req_done(net_req *r) {
  if (r->local) {
    local_answer(r, NULL);
    return;
  }
  net_server *s = r->srv;
  pthread_mutex_lock(&s->mu);
  if (--s->outstanding == 0) pthread_cond_broadcast(&s->done_cv);
  pthread_mutex_unlock(&s->mu);
  req_free(r);
}

int net_reply(net_req *r, net_msg *reply) {
  if (r->local) {   /* answered in-process, even while stopping: the caller is here */
    local_answer(r, reply);
    return RT_OK;
  }
  net_server *s = r->srv;
  if (r->conn) {   /* on its lane, from this thread, whichever it is */
    pthread_mutex_lock(&s->mu);
    bool stopping = s->stopping;
    if (--s->outstanding == 0) pthread_cond_broadcast(&s->done_cv);
    pthread_mutex_unlock(&s->mu);
    if (stopping) net_msg_free(reply);
    else lane_send(r->conn, reply, net_in_id(r->in));
    req_free(r);
    return stopping ? RT_CANCELLED : RT_OK;
  }
  r->reply = reply;
  pthread_mutex_lock(&s->mu);
  int rc = RT_OK;
  bool here = false;
  if (s->stopping) {
    req_free(r);
    r = NULL;
    rc = RT_CANCELLED;
  } else if (io_batch == s) {
    push(&s->out, r);   /* the I/O thread holds sock_mu: it sends after its batch */
    r = NULL;
  } else {
    here = true;
  }
  if (--s->outstanding == 0) pthread_cond_broadcast(&s->done_cv);
  pthread_mutex_unlock(&s->mu);
  if (here) {   /* send it now, from this thread */
    pthread_mutex_lock(&s->sock_mu);
    if (s->router) {
      /* EHOSTUNREACH: the client went away; nobody is left to tell. */
      net_wire_send(s->router, r->routing, r->rlen, r->reply, net_in_id(r->in));
      r->reply = NULL;
      if (readable(s)) wake_io(s);   /* the send may have taken the I/O thread's edge */
    } else {
      rc = RT_CANCELLED;
    }
    pthread_mutex_unlock(&s->sock_mu);
    req_free(r);
  }
  return rc;
}

int net_reply_error(net_req *r, int code, const char *fmt, ...) {
  char msg[RT_MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return net_reply(r, net_wire_error(code, msg));
}
