/* `tfsh probe` (probe.h). */
#define _GNU_SOURCE
#include "runtime/probe.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "net/grpc.h"
#include "runtime/proto/worker.pb-c.h"

/* How long a connected peer gets to greet first: ZeroMQ and SSH speak at once, gRPC
 * servers wait for the client. */
enum { PEEK_MS = 150, MAX_REPLY = 1 << 20 };

typedef struct tcp {
  int fd;
  bool connected, done;
  double t_conn;
  unsigned char greet[16];
  int greet_len;
} tcp;

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

const char *rt_probe_state_name(rt_probe_state s) {
  static const char *const names[] = {"answers", "other task", "no host", "refused", "unreachable",
                                      "timed out", "not gRPC", "not TF", "silent", "bad reply",
                                      "no gRPC"};
  return (unsigned)s < sizeof names / sizeof *names ? names[s] : "?";
}

/* "grpc://h:p" or "h:p" → host, port; false when there is no port. */
static bool split_addr(const char *addr, char *host, size_t hn, char *port, size_t pn) {
  const char *a = strstr(addr, "://") ? strstr(addr, "://") + 3 : addr;
  const char *colon = strrchr(a, ':');
  if (!colon || colon == a || !colon[1]) return false;
  size_t len = (size_t)(colon - a);
  if (a[0] == '[' && len >= 2 && a[len - 1] == ']') a++, len -= 2;   /* [::1]:p */
  snprintf(host, hn, "%.*s", (int)len, a);
  snprintf(port, pn, "%s", colon + 1);
  return true;
}

static void tcp_start(rt_probe_row *r, tcp *t, const char *addr) {
  char host[256], port[32];
  t->fd = -1, t->done = true;
  if (!split_addr(addr, host, sizeof host, port, sizeof port)) {
    r->state = RT_PROBE_NO_HOST;
    snprintf(r->detail, sizeof r->detail, "'%s' is not host:port", addr);
    return;
  }
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai = NULL;
  int e = getaddrinfo(host, port, &hints, &ai);
  if (e || !ai) {
    r->state = RT_PROBE_NO_HOST;
    snprintf(r->detail, sizeof r->detail, "host '%s' does not resolve (%s)", host, gai_strerror(e));
    return;
  }
  t->fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (t->fd >= 0 && connect(t->fd, ai->ai_addr, ai->ai_addrlen) && errno != EINPROGRESS) {
    r->state = errno == ECONNREFUSED ? RT_PROBE_REFUSED : RT_PROBE_UNREACHABLE;
    snprintf(r->detail, sizeof r->detail, "%s", errno == ECONNREFUSED ? "nothing listens on the port" : strerror(errno));
    close(t->fd);
    t->fd = -1;
  } else if (t->fd >= 0) {
    t->done = false;
  }
  freeaddrinfo(ai);
}

/* Connects every task at once, then gives each connected peer PEEK_MS to greet. */
static void tcp_all(rt_probe_row *rows, tcp *ts, int n, double t0, double deadline) {
  struct pollfd *p = xcalloc((size_t)n + 1, sizeof *p);
  for (;;) {
    double now = now_ms(), wake = deadline;
    int live = 0;
    for (int i = 0; i < n; i++) {
      tcp *t = &ts[i];
      p[i].fd = t->done ? -1 : t->fd;
      p[i].events = t->connected ? POLLIN : POLLOUT;
      p[i].revents = 0;
      if (t->done) continue;
      if (t->connected && now >= t->t_conn + PEEK_MS) {
        t->done = true;
        p[i].fd = -1;
        continue;
      }
      live++;
      if (t->connected && t->t_conn + PEEK_MS < wake) wake = t->t_conn + PEEK_MS;
    }
    if (!live) break;
    if (now >= deadline) {
      for (int i = 0; i < n; i++)
        if (!ts[i].done && !ts[i].connected) {
          rows[i].state = RT_PROBE_TIMEOUT;
          snprintf(rows[i].detail, sizeof rows[i].detail, "no TCP answer");
          rows[i].ms = now - t0;
          ts[i].done = true;
        }
      break;
    }
    poll(p, (nfds_t)n, (int)(wake - now) + 1);
    now = now_ms();
    for (int i = 0; i < n; i++) {
      tcp *t = &ts[i];
      if (t->done || !p[i].revents) continue;
      if (!t->connected) {
        int err = 0;
        socklen_t len = sizeof err;
        getsockopt(t->fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err) {
          rows[i].state = err == ECONNREFUSED ? RT_PROBE_REFUSED : RT_PROBE_UNREACHABLE;
          snprintf(rows[i].detail, sizeof rows[i].detail, "%s",
                   err == ECONNREFUSED ? "nothing listens on the port" : strerror(err));
          rows[i].ms = now - t0;
          t->done = true;
        } else {
          t->connected = true, t->t_conn = now;
        }
      } else {
        ssize_t k = recv(t->fd, t->greet, sizeof t->greet, MSG_DONTWAIT);
        t->greet_len = k > 0 ? (int)k : 0;
        t->done = true;
      }
    }
  }
  for (int i = 0; i < n; i++)
    if (ts[i].fd >= 0) close(ts[i].fd);
  free(p);
}

/* What the peer's first bytes say it is when that is surely not gRPC, or NULL. (gRPC
 * servers send HTTP/2's SETTINGS frame at once: length, type 4, flags, stream 0.) */
static const char *not_grpc(const tcp *t) {
  if (t->greet_len >= 10 && t->greet[0] == 0xff && t->greet[9] == 0x7f)
    return "a ZeroMQ peer: a tfsh server (attach with tfsh's own protocol), not a TF one";
  if (t->greet_len >= 4 && !memcmp(t->greet, "SSH-", 4)) return "an SSH server";
  if (t->greet_len >= 4 && !memcmp(t->greet, "HTTP", 4)) return "an HTTP/1 server";
  return NULL;
}

/* "/job:w/replica:0/task:1/device:CPU:0" → task part "/job:w/replica:0/task:1", short
 * device "CPU:0". */
static void split_device(const char *name, char *task, size_t tn, char *dev, size_t dn) {
  const char *d = strstr(name, "/device:");
  snprintf(task, tn, "%.*s", d ? (int)(d - name) : (int)strlen(name), name);
  snprintf(dev, dn, "%s", d ? d + 8 : name);
}

static void read_status(rt_probe_row *r, const net_grpc_call *c) {
  Tensorflow__GetStatusResponse *m = tensorflow__get_status_response__unpack(NULL, c->resp_len, c->resp);
  if (!m) {
    r->state = RT_PROBE_BAD_REPLY;
    snprintf(r->detail, sizeof r->detail, "GetStatus answered with %zu bytes that are not a "
             "GetStatusResponse", c->resp_len);
    return;
  }
  r->state = RT_PROBE_ANSWERS;
  size_t used = 0;
  for (size_t i = 0; i < m->n_device_attributes; i++) {
    const Tensorflow__DeviceAttributes *d = m->device_attributes[i];
    char task[160], dev[120];
    split_device(d->name ? d->name : "", task, sizeof task, dev, sizeof dev);
    if (strcmp(task, r->task) && r->state == RT_PROBE_ANSWERS) {
      r->state = RT_PROBE_OTHER_TASK;
      snprintf(r->seen_as, sizeof r->seen_as, "%s", task);
    }
    if (used < sizeof r->devices)
      used += (size_t)snprintf(r->devices + used, sizeof r->devices - used, "%s%s", i ? ", " : "", dev);
  }
  if (!m->n_device_attributes) snprintf(r->detail, sizeof r->detail, "answers, with no devices");
  tensorflow__get_status_response__free_unpacked(m, NULL);
}

int rt_probe(const rt_cluster *c, int timeout_ms, rt_probe_row **out) {
  int n = c->n;
  rt_probe_row *rows = xcalloc((size_t)n + 1, sizeof *rows);
  tcp *ts = xcalloc((size_t)n + 1, sizeof *ts);
  net_grpc_call *calls = xcalloc((size_t)n + 1, sizeof *calls);
  int *which = xcalloc((size_t)n + 1, sizeof *which);
  double t0 = now_ms(), deadline = t0 + timeout_ms;
  for (int i = 0; i < n; i++) {
    rt_task_name(c->tasks[i].job, c->tasks[i].index, rows[i].task, sizeof rows[i].task);
    snprintf(rows[i].addr, sizeof rows[i].addr, "%s", c->tasks[i].addr);
    tcp_start(&rows[i], &ts[i], c->tasks[i].addr);
    rows[i].ms = now_ms() - t0;
  }
  tcp_all(rows, ts, n, t0, deadline);
  int nc = 0;
  static const uint8_t empty[1];
  for (int i = 0; i < n; i++) {
    if (!ts[i].connected) continue;   /* its state and time are set */
    const char *g = not_grpc(&ts[i]);
    if (g) {   /* not worth a gRPC call: it is something else */
      rows[i].state = RT_PROBE_NOT_GRPC;
      snprintf(rows[i].detail, sizeof rows[i].detail, "%s", g);
      rows[i].ms = ts[i].t_conn - t0;
      continue;
    }
    which[nc] = i;
    calls[nc++] = (net_grpc_call){.target = strstr(c->tasks[i].addr, "://")
                                                ? strstr(c->tasks[i].addr, "://") + 3
                                                : c->tasks[i].addr,
                                  .method = "/tensorflow.WorkerService/GetStatus",
                                  .req = empty, .req_len = 0};
  }
  if (nc) {
    int left = (int)(deadline - now_ms());
    char why[300];
    if (net_grpc_run(calls, nc, left > 200 ? left : 200, MAX_REPLY, why, sizeof why)) {
      for (int k = 0; k < nc; k++) {
        rows[which[k]].state = RT_PROBE_NO_GRPC;
        snprintf(rows[which[k]].detail, sizeof rows[which[k]].detail, "%s", why);
      }
    } else {
      for (int k = 0; k < nc; k++) {
        rt_probe_row *r = &rows[which[k]];
        net_grpc_call *call = &calls[k];
        r->ms = ts[which[k]].t_conn - t0 + call->ms;
        if (call->code == NET_GRPC_OK) read_status(r, call);
        else if (call->code == NET_GRPC_UNIMPLEMENTED) {
          r->state = RT_PROBE_NO_METHOD;
          snprintf(r->detail, sizeof r->detail, "a gRPC server without TensorFlow's "
                   "WorkerService.GetStatus (%s)", call->details);
        } else if (call->code == NET_GRPC_DEADLINE_EXCEEDED) {
          r->state = RT_PROBE_SILENT;
          snprintf(r->detail, sizeof r->detail, "accepts connections but GetStatus had no answer");
        } else {
          r->state = RT_PROBE_NOT_GRPC;
          snprintf(r->detail, sizeof r->detail, "accepts connections but does not speak gRPC "
                   "(%s)", call->details);
        }
        net_grpc_call_clear(call);
      }
    }
  }
  free(ts), free(calls), free(which);
  *out = rows;
  return 0;
}

/* "job_name='worker', task_index=1" from "/job:worker/replica:0/task:1". */
static void task_args(const char *task, char *buf, size_t n) {
  int idx = -1;
  const char *j = strstr(task, "/job:"), *t = strstr(task, "/task:");
  const char *end = j ? strchr(j + 5, '/') : NULL;
  if (t) idx = atoi(t + 6);
  snprintf(buf, n, "job_name='%.*s', task_index=%d", j && end ? (int)(end - j - 5) : 0,
           j ? j + 5 : "", idx);
}

static void fix(const rt_probe_row *r, char *buf, size_t n) {
  char args[200];
  task_args(r->task, args, sizeof args);
  switch (r->state) {
  case RT_PROBE_REFUSED:
    snprintf(buf, n, "the task never started or has died: start it, "
             "tf.train.Server(cluster, %s)", args);
    break;
  case RT_PROBE_TIMEOUT:
  case RT_PROBE_UNREACHABLE:
    snprintf(buf, n, "the host does not answer: check the address in the spec, that the "
             "machine is up, and its firewall");
    break;
  case RT_PROBE_NO_HOST:
    snprintf(buf, n, "fix the host name in the spec");
    break;
  case RT_PROBE_OTHER_TASK:
    snprintf(buf, n, "that server was given another task_index or spec: restart it with %s, "
             "or fix the spec", args);
    break;
  case RT_PROBE_SILENT:
    snprintf(buf, n, "a server that accepts but does not answer: a stuck or overloaded task, "
             "or another program on the port");
    break;
  case RT_PROBE_NO_GRPC:
    snprintf(buf, n, "install libgrpc29 to probe TF servers");
    break;
  default:
    snprintf(buf, n, "another program holds the port: fix this task's address in the spec, or "
             "stop what holds it");
  }
}

int rt_probe_print(FILE *f, const rt_probe_row *rows, int n) {
  int tw = 4, aw = 7, bad = 0;
  for (int i = 0; i < n; i++) {
    if ((int)strlen(rows[i].task) > tw) tw = (int)strlen(rows[i].task);
    if ((int)strlen(rows[i].addr) > aw) aw = (int)strlen(rows[i].addr);
  }
  fprintf(f, "%-*s  %-*s  %-10s %8s  %s\n", tw, "task", aw, "address", "state", "ms", "devices / what answered");
  for (int i = 0; i < n; i++) {
    const rt_probe_row *r = &rows[i];
    const char *what = r->state == RT_PROBE_ANSWERS ? r->devices : r->detail;
    char seen[240] = "";
    if (r->state == RT_PROBE_OTHER_TASK)
      snprintf(seen, sizeof seen, "as %s: %s", r->seen_as, r->devices), what = seen;
    fprintf(f, "%-*s  %-*s  %-10s %8.1f  %s\n", tw, r->task, aw, r->addr,
            rt_probe_state_name(r->state), r->ms, what);
    bad += r->state != RT_PROBE_ANSWERS;
  }
  if (!bad) {
    if (n == 1) fprintf(f, "verdict: the task answers as itself; CreateSession would find it\n");
    else fprintf(f, "verdict: all %d tasks answer as themselves; CreateSession would find every one\n", n);
    return 0;
  }
  char waits[600] = "";
  size_t used = 0;
  for (int i = 0; i < n; i++)
    if (rows[i].state != RT_PROBE_ANSWERS && rows[i].state != RT_PROBE_OTHER_TASK &&
        used < sizeof waits)
      used += (size_t)snprintf(waits + used, sizeof waits - used, "%s%s", used ? ", " : "",
                               rows[i].task);
  if (waits[0])
    fprintf(f, "verdict: CreateSession would wait for ever for %s\n", waits);
  int others = 0;
  for (int i = 0; i < n; i++) others += rows[i].state == RT_PROBE_OTHER_TASK;
  if (others)
    fprintf(f, "verdict: %d address%s of the spec answer%s as another task: the cluster's "
            "processes were not all given this spec\n", others, others == 1 ? "" : "es",
            others == 1 ? "s" : "");
  for (int i = 0; i < n; i++) {
    const rt_probe_row *r = &rows[i];
    if (r->state == RT_PROBE_ANSWERS) continue;
    char how[400];
    fix(r, how, sizeof how);
    if (r->state == RT_PROBE_OTHER_TASK)
      fprintf(f, "  %s (%s): answers as %s; %s\n", r->task, r->addr, r->seen_as, how);
    else
      fprintf(f, "  %s (%s): %s%s%s; %s\n", r->task, r->addr, rt_probe_state_name(r->state),
              r->detail[0] ? ", " : "", r->detail, how);
  }
  return 1;
}
