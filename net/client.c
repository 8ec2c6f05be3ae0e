/* The client. A DEALER socket (no empty delimiter frame: replies are matched by id, not
 * by envelope), plus, for tcp and ipc, a monitor socket that reports connects and
 * disconnects, so a peer that dies mid-call (closed socket, or missed heartbeats) fails
 * the call at once instead of at its deadline. */
#include "net/client.h"
#include "base/alloc.h"
#include "net/wire.h"

#include <errno.h>
#include <stdatomic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct net_client {
  void *sock;
  net_link link;         /* the connection's health, from the socket's monitor */
  char *endpoint;
  net_options opt;
  uint64_t next_id;
  uint64_t *pending;     /* ids sent and not yet answered */
  size_t npending, cap;
};

net_client *net_client_new(const char *endpoint, const net_options *opts, rt_status *st) {
  net_client *c = xcalloc(1, sizeof *c);
  c->endpoint = xstrdup(endpoint);
  if (opts) c->opt = *opts;
  else net_options_default(&c->opt);
  int ivl = 10, ivl_max = 250;
  net_key key;
  if (net_key_for(&c->opt, &key, st)) {
    net_client_free(c);
    return NULL;
  }
  c->link.curve = key.on;
  c->sock = zmq_socket(net_ctx(), ZMQ_DEALER);
  /* ZMQ_IMMEDIATE stays 0: a request to a task that has not started yet waits in the
   * pipe and goes out when it comes up (the caller's tick reports the wait). Reconnects
   * start at 10 ms (not 100) and back off to 250 ms. */
  if (!c->sock || net_wire_setup(c->sock, &c->opt) ||
      zmq_setsockopt(c->sock, ZMQ_RECONNECT_IVL, &ivl, sizeof ivl) ||
      zmq_setsockopt(c->sock, ZMQ_RECONNECT_IVL_MAX, &ivl_max, sizeof ivl_max) ||
      (key.on && (errno = net_curve_client(c->sock, &key)))) {
    rt_error(st, RT_INTERNAL, "cannot create a client socket: %s", zmq_strerror(errno));
    net_client_free(c);
    return NULL;
  }
  if (net_link_open(&c->link, c->sock, c->endpoint, st)) {
    net_client_free(c);
    return NULL;
  }
  if (zmq_connect(c->sock, endpoint)) {
    rt_error(st, RT_INVALID_ARGUMENT, "cannot connect to %s: %s", endpoint, zmq_strerror(errno));
    net_client_free(c);
    return NULL;
  }
  return c;
}

void net_client_free(net_client *c) {
  if (!c) return;
  if (c->sock) net_link_close(&c->link, c->sock);
  if (c->sock) zmq_close(c->sock);
  free(c->pending);
  free(c->endpoint);
  free(c);
}

const char *net_client_endpoint(const net_client *c) { return c->endpoint; }
bool net_client_connected(const net_client *c) { return c->link.connected; }

/* ---- pending ids ------------------------------------------------------------------- */

static void pending_add(net_client *c, uint64_t id) {
  if (c->npending == c->cap) {
    c->cap = c->cap ? 2 * c->cap : 8;
    c->pending = xrealloc(c->pending, c->cap * sizeof *c->pending);
  }
  c->pending[c->npending++] = id;
}

static bool pending_del(net_client *c, uint64_t id) {
  for (size_t i = 0; i < c->npending; i++)
    if (c->pending[i] == id) {
      memmove(c->pending + i, c->pending + i + 1, (c->npending - i - 1) * sizeof *c->pending);
      c->npending--;
      return true;
    }
  return false;
}

/* ---- sending and receiving --------------------------------------------------------- */

int net_send(net_client *c, net_msg *req, uint64_t *id, rt_status *st) {
  /* Events from before this request (a peer that died and came back) concern requests
   * already answered or abandoned: take them now, so they cannot fail this one. */
  if (c->npending == 0) {
    net_link_events(&c->link, false);
    c->link.lost = false;
    c->link.wait_down = 0;
  }
  uint64_t n = ++c->next_id;   /* never 0: id 0 marks "the server could not read it" */
  int e = net_wire_send(c->sock, NULL, 0, req, n);
  if (e)
    return rt_error(st, RT_UNAVAILABLE, "cannot send to %s: %s", c->endpoint,
                    e == EAGAIN ? "send queue full" : zmq_strerror(e));
  pending_add(c, n);
  if (id) *id = n;
  return RT_OK;
}

int net_send_oneway(net_client *c, net_msg *req, rt_status *st) {
  uint64_t n = ++c->next_id;
  int e = net_wire_send(c->sock, NULL, 0, req, n);
  if (e)
    return rt_error(st, RT_UNAVAILABLE, "cannot send to %s: %s", c->endpoint,
                    e == EAGAIN ? "send queue full" : zmq_strerror(e));
  return RT_OK;   /* not pending: its reply is discarded as unknown when it comes */
}

int net_recv(net_client *c, net_in **reply, uint64_t *id, rt_status *st) {
  *reply = NULL;
  if (id) *id = 0;
  for (;;) {
    net_in *in;
    uint64_t rid;
    int rc = net_wire_recv(c->sock, &c->opt.limits, NULL, NULL, &in, &rid, st);
    if (rc == NET_AGAIN) {
      if (c->link.refused && c->npending) {
        c->link.lost = false;
        c->npending = 0;
        return rt_error(st, RT_UNAUTHENTICATED,
                        "the server at %s refused the connection: cluster key mismatch or "
                        "missing (TFSH_CLUSTER_KEY)", c->endpoint);
      }
      if (!c->link.lost) return RT_OK;
      c->link.lost = false;
      c->npending = 0;
      return rt_error(st, RT_UNAVAILABLE,
                      "connection to %s lost (the peer closed it or stopped answering)",
                      c->endpoint);
    }
    if (rid == 0 && c->npending) rid = c->pending[0];  /* an error about an unreadable id */
    if (!pending_del(c, rid)) {                       /* abandoned or unknown: discard */
      net_in_free(in);
      continue;
    }
    if (id) *id = rid;
    if (rc) {
      rt_status_prefix(st, "reply from %s: ", c->endpoint);
      return rc;
    }
    int code = net_wire_error_status(in, st);
    if (code) {
      net_in_free(in);
      return code;
    }
    *reply = in;
    return RT_OK;
  }
}

/* Is a reply (or a lost connection) waiting on c? */
static bool has_news(net_client *c) {
  int events = 0;
  size_t sz = sizeof events;
  net_link_events(&c->link, c->npending > 0);
  if (c->npending) net_link_check(&c->link);
  zmq_getsockopt(c->sock, ZMQ_EVENTS, &events, &sz);
  return (events & ZMQ_POLLIN) || c->link.lost || (c->link.refused && c->npending);
}

static int poll_from(net_client *const *cs, int n, const net_wait *w, int64_t start,
                     int *ready, rt_status *st) {
  net_wait forever = {.timeout_ms = -1};
  if (!w) w = &forever;
  zmq_pollitem_t items[2 * n];
  int k = 0;
  for (int i = 0; i < n; i++) {
    items[k++] = (zmq_pollitem_t){cs[i]->sock, 0, ZMQ_POLLIN, 0};
    if (cs[i]->link.mon) items[k++] = (zmq_pollitem_t){cs[i]->link.mon, 0, ZMQ_POLLIN, 0};
  }
  int64_t next_tick = w->tick && w->tick_ms > 0 ? start + w->tick_ms : -1;
  for (;;) {
    for (int i = 0; i < n; i++)
      if (has_news(cs[i])) return *ready = i, RT_OK;
    int64_t now = net_now_ms();
    if (next_tick >= 0 && now >= next_tick) {
      if (w->tick(w->arg, now - start))
        return rt_error(st, RT_CANCELLED, "cancelled while waiting for %s", cs[0]->endpoint);
      next_tick += w->tick_ms;
      if (next_tick <= now) next_tick = now + w->tick_ms;
    }
    if (w->timeout_ms >= 0 && now >= start + w->timeout_ms) {
      const net_client *late = cs[0];
      int waiting = 0;
      for (int i = n - 1; i >= 0; i--)
        if (cs[i]->npending) late = cs[i], waiting++;
      if (waiting > 1)
        return rt_error(st, RT_DEADLINE_EXCEEDED, "no reply from %s (and %d more) within %d ms",
                        late->endpoint, waiting - 1, w->timeout_ms);
      return rt_error(st, RT_DEADLINE_EXCEEDED, "no reply from %s within %d ms", late->endpoint,
                      w->timeout_ms);
    }
    int64_t wait = -1;
    if (w->timeout_ms >= 0) wait = start + w->timeout_ms - now;
    /* Not connected with requests pending: look again every 250 ms, so has_news() can call
     * a peer that went away lost (a fresh client to a dead peer sees no event at all). */
    for (int i = 0; i < n; i++)
      if (cs[i]->npending && (cs[i]->link.down_since || !cs[i]->link.connected) && (wait < 0 || wait > 250))
        wait = 250;
    if (next_tick >= 0 && (wait < 0 || next_tick - now < wait)) wait = next_tick - now;
    if (zmq_poll(items, k, (long)wait) < 0 && errno != EINTR)
      return rt_error(st, RT_INTERNAL, "waiting for %s: %s", cs[0]->endpoint, zmq_strerror(errno));
  }
}

int net_poll(net_client *const *cs, int n, const net_wait *w, int *ready, rt_status *st) {
  return poll_from(cs, n, w, net_now_ms(), ready, st);
}

int net_call_wait(net_client *c, net_msg *req, net_in **reply, const net_wait *w,
                  rt_status *st) {
  *reply = NULL;
  int64_t start = net_now_ms();
  uint64_t id;
  int rc = net_send(c, req, &id, st);
  if (rc) return rc;
  for (;;) {
    int ready;
    if ((rc = poll_from(&c, 1, w, start, &ready, st))) {
      pending_del(c, id);   /* abandoned: its reply, if it comes, is discarded */
      return rc;
    }
    uint64_t got;
    rc = net_recv(c, reply, &got, st);
    if (got == id || (rc && got == 0)) return rc;
    net_in_free(*reply);    /* a reply to an earlier net_send: not ours to keep */
    *reply = NULL;
  }
}

int net_call(net_client *c, net_msg *req, net_in **reply, int timeout_ms, rt_status *st) {
  net_wait w = {.timeout_ms = timeout_ms};
  return net_call_wait(c, req, reply, &w, st);
}
