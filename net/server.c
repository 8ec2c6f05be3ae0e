/* The server. The ROUTER socket is used under sock_mu only: the I/O thread reads requests
 * there (sleeping in poll(2) on the socket's ZMQ_FD, edge-triggered, and an eventfd),
 * answers the malformed ones itself and queues the rest for handler threads; a handler
 * sends its reply itself, at once, without a hop to the I/O thread (replies made on the
 * I/O thread, by handlers it runs inline, are queued and sent after the batch). A send
 * that may have taken the edge the I/O thread waits for wakes it. The rest of what is
 * shared sits under mu. */
#include "net/server.h"
#include "base/alloc.h"
#include "net/wire.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define IO_BATCH 64   /* requests read before the I/O thread looks at replies again */

struct net_req {
  net_server *srv;
  net_req *next;
  net_in *in;
  net_msg *reply;
  bool local;                   /* from this process (net_server_local): no socket */
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
  pthread_t io;

  pthread_mutex_t mu;
  pthread_cond_t work_cv;       /* handler threads wait for requests */
  pthread_cond_t done_cv;       /* free waits for outstanding to reach 0 */
  req_queue work;               /* requests waiting for a handler thread */
  req_queue out;                /* replies waiting for the I/O thread */
  int nwork;                    /* requests in work */
  int idle;                     /* handler threads waiting on work_cv */
  int outstanding;              /* requests handed to handlers, not yet answered */
  int nthreads;
  pthread_t *threads;
  bool stopping;
  char inline_types[NET_SERVER_MAX_INLINE][NET_TYPE_MAX + 1];   /* handled on the I/O thread (never block) */
  atomic_int n_inline;          /* inline_types filled: published after the slot is written
                                   (the I/O thread may already be reading requests) */
};

/* Servers by the endpoints clients of this process name them with (net_server_local). */
typedef struct alias {
  struct alias *next;
  char *endpoint;
  net_server *s;
} alias;
static pthread_mutex_t aliases_mu = PTHREAD_MUTEX_INITIALIZER;
static alias *aliases;

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

static void req_free(net_req *r) {
  net_msg_free(r->reply);
  net_in_free(r->in);
  free(r);
}

static void wake_io(net_server *s) {
  uint64_t one = 1;
  ssize_t n = write(s->efd, &one, sizeof one);
  (void)n;   /* EAGAIN: the counter is already nonzero, the I/O thread will wake */
}

/* ---- handler threads --------------------------------------------------------------- */

static void *handler_main(void *arg) {
  net_server *s = arg;
  pthread_mutex_lock(&s->mu);
  for (;;) {
    while (!s->work.head && !s->stopping) {
      s->idle++;
      pthread_cond_wait(&s->work_cv, &s->mu);
      s->idle--;
    }
    if (s->stopping) break;
    net_req *r = pop(&s->work);
    s->nwork--;
    s->outstanding++;
    pthread_mutex_unlock(&s->mu);
    s->handler(s->user, r);
    pthread_mutex_lock(&s->mu);
  }
  pthread_mutex_unlock(&s->mu);
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

static void *io_main(void *arg) {
  net_server *s = arg;
  struct pollfd fds[2] = {{.fd = s->router_fd, .events = POLLIN}, {.fd = s->efd, .events = POLLIN}};
  bool more = true;   /* the edge may have come before we polled: look first */
  for (;;) {
    if (!more && poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[1].revents & POLLIN) {
      uint64_t n;
      ssize_t got = read(s->efd, &n, sizeof n);
      (void)got;
    }
    pthread_mutex_lock(&s->mu);
    bool stop = s->stopping;
    pthread_mutex_unlock(&s->mu);
    if (stop) break;
    pthread_mutex_lock(&s->sock_mu);
    req_queue later = {0};
    read_requests(s, &later);
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
    more = readable(s);
    pthread_mutex_unlock(&s->sock_mu);
    for (net_req *r = later.head, *next; r; r = next) {
      next = r->next;
      dispatch(s, r);
    }
  }
  pthread_mutex_lock(&s->sock_mu);
  zmq_close(s->router);
  s->router = NULL;
  pthread_mutex_unlock(&s->sock_mu);
  return NULL;
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
  if (s->efd >= 0) close(s->efd);
  for (int i = 0; i < s->nendpoints; i++) free(s->endpoints[i]);
  free(s->endpoints);
  free(s->threads);
  pthread_cond_destroy(&s->done_cv);
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
  pthread_mutex_init(&s->mu, NULL);
  pthread_mutex_init(&s->sock_mu, NULL);
  pthread_cond_init(&s->work_cv, NULL);
  pthread_cond_init(&s->done_cv, NULL);
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
  pthread_join(s->io, NULL);
  pthread_mutex_lock(&s->mu);
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
  r->reply = reply;
  pthread_mutex_lock(&s->mu);
  int rc = RT_OK;
  bool here = false;
  if (s->stopping) {
    req_free(r);
    r = NULL;
    rc = RT_CANCELLED;
  } else if (pthread_equal(pthread_self(), s->io)) {
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
