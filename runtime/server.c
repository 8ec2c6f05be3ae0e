#include "base/alloc.h"
#include "runtime/server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "net/net.h"
#include "runtime/op.h"
#include "runtime/server_int.h"

/* Ids: splitmix64 over a counter whose start comes from getrandom once per process (a
 * syscall per step id showed in profiles of tiny local steps). Distinct processes start
 * 64 random bits apart; one process never repeats an id within 2^64 draws. */
static atomic_ullong id_state;

static void id_seed(void) {
  uint64_t v = 0;
  if (getrandom(&v, sizeof v, 0) != sizeof v) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    v = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ (uint64_t)getpid() << 40;
  }
  atomic_store(&id_state, v);
}

uint64_t rt_random_u64(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, id_seed);
  uint64_t z = atomic_fetch_add(&id_state, 0x9e3779b97f4a7c15ull) + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return z ? z : 1;
}

static int64_t process_token;

static void token_init(void) { process_token = (int64_t)(rt_random_u64() >> 2) | 1; }

int64_t rt_process_token(void) {   /* runtime/op.h */
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, token_init);
  return process_token;
}

/* ---- the server --------------------------------------------------------------------- */

/* The messages a task answers, the worker's first (its step messages are the most
 * frequent); a linear scan of ~20 rows costs nothing beside a message's decoding. */
static const rt_message *const services[] = {rt_worker_messages, rt_master_messages};

static const rt_message *find_message(const char *type) {
  for (size_t i = 0; i < sizeof services / sizeof *services; i++)
    for (const rt_message *r = services[i]; r->name; r++)
      if (!strcmp(r->name, type)) return r;
  return NULL;
}

static void dispatch(void *user, net_req *req) {
  rt_server *s = user;
  const rt_message *r = find_message(net_in_type(net_req_msg(req)));
  if (r && r->worker) r->worker(s->worker, req);
  else if (r) r->master(s->master, req);
  else net_reply_error(req, RT_UNIMPLEMENTED, "%s: unknown message type '%s'", s->task,
                       net_in_type(net_req_msg(req)));
}

/* The host part of "host:port" (all of it when there is no port). */
static void host_of(const char *addr, char *buf, size_t n) {
  const char *colon = strrchr(addr, ':');
  size_t len = colon ? (size_t)(colon - addr) : strlen(addr);
  snprintf(buf, n, "%.*s", (int)len, addr);
  if (!strcmp(buf, "localhost") || !strncmp(buf, "127.", 4) || !strcmp(buf, "[::1]"))
    snprintf(buf, n, "127.0.0.1");   /* every loopback name is this host */
}

/* Tasks of c at the same host as addr (itself included). */
static int tasks_on_host(const rt_cluster *c, const char *addr) {
  char mine[256], h[256];
  host_of(addr, mine, sizeof mine);
  int n = 0;
  for (int i = 0; i < c->n; i++) {
    host_of(c->tasks[i].addr, h, sizeof h);
    n += !strcmp(h, mine);
  }
  return n > 0 ? n : 1;
}

rt_server *rt_server_start(const rt_cluster *c, const char *job, int index,
                           const rt_server_opts *o, rt_status *st) {
  const rt_task_addr *me = rt_cluster_find(c, job, index);
  if (!me) {
    rt_error(st, RT_INVALID_ARGUMENT, "task /job:%s/replica:0/task:%d is not in the cluster spec",
             job, index);
    return NULL;
  }
  rt_server *s = xcalloc(1, sizeof *s);
  s->cluster = rt_cluster_copy(c);
  snprintf(s->job, sizeof s->job, "%s", job);
  s->index = index;
  rt_task_name(job, index, s->task, sizeof s->task);
  s->incarnation = rt_random_u64();
  /* Threads: several tasks of one host share its cores unless told otherwise. */
  rt_threads_default(tasks_on_host(c, me->addr));
  if (o) rt_threads_set(o->intra_op_threads, o->inter_op_threads);
  pthread_mutex_init(&s->mu, NULL);
  pthread_cond_init(&s->cv, NULL);
  s->worker = rt_worker_new(s, o ? o->n_cpus : 1, o ? o->max_gpus : 0);
  s->master = rt_master_new(s);
  char ep[256];
  rt_endpoint(me->addr, ep, sizeof ep);
  /* Bind another host than the spec names only when asked (--bind 0.0.0.0). */
  if (o && o->bind_host && !strncmp(ep, "tcp://", 6)) {
    const char *colon = strrchr(ep, ':');
    char b[256];
    snprintf(b, sizeof b, "tcp://%s%s", o->bind_host, colon);
    snprintf(ep, sizeof ep, "%s", b);
  }
  /* ZeroMQ binds interfaces or addresses, not names: resolve "localhost" to 127.0.0.1 (so a
   * task named by a loopback name stays on loopback). */
  if (!strncmp(ep, "tcp://", 6)) {
    char host[200];
    const char *colon = strrchr(ep, ':');
    size_t hl = (size_t)(colon - (ep + 6));
    if (hl < sizeof host) {
      memcpy(host, ep + 6, hl);
      host[hl] = '\0';
      struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res = NULL;
      struct in_addr tmp;
      if (strcmp(host, "*") && !inet_pton(AF_INET, host, &tmp) && !getaddrinfo(host, NULL, &hints, &res)) {
        char ip[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, &((struct sockaddr_in *)res->ai_addr)->sin_addr, ip, sizeof ip);
        char b[256];
        snprintf(b, sizeof b, "tcp://%s%s", ip, colon);
        snprintf(ep, sizeof ep, "%s", b);
      }
      if (res) freeaddrinfo(res);
    }
  }
  /* port 0: any free port (create_local_server) */
  size_t len = strlen(ep);
  if (len > 2 && !strcmp(ep + len - 2, ":0")) snprintf(ep + len - 1, sizeof ep - len + 1, "*");
  const char *eps[] = {ep};
  s->net = net_server_new(eps, 1, dispatch, s, NULL, st);
  if (!s->net) {
    if (strstr(st->msg, "already in use")) {
      char msg[RT_MSG_MAX];
      snprintf(msg, sizeof msg, "%s (another process holds %s: stop it, or give this task another "
               "port in the cluster spec)", st->msg, strrchr(me->addr, ':') ? strrchr(me->addr, ':') + 1 : me->addr);
      snprintf(st->msg, sizeof st->msg, "%s", msg);
    }
    rt_status_prefix(st, "%s: ", s->task);
    rt_server_free(s);
    return NULL;
  }
  snprintf(s->endpoint, sizeof s->endpoint, "%s", net_server_endpoint(s->net, 0));
  /* Rows that never block are taken on the I/O thread, no hop to a handler. */
  for (size_t i = 0; i < sizeof services / sizeof *services; i++)
    for (const rt_message *r = services[i]; r->name; r++)
      if (r->io_thread) net_server_inline(s->net, r->name);
  /* Sessions and peers of this process that name the task as the spec does reach it
   * without a socket (TF1's LocalMaster). */
  char spec_ep[256];
  rt_endpoint(me->addr, spec_ep, sizeof spec_ep);
  len = strlen(spec_ep);
  const char *bound_port = strrchr(s->endpoint, ':');
  if (len > 2 && !strcmp(spec_ep + len - 2, ":0") && bound_port)   /* any port: the one bound */
    snprintf(spec_ep + len - 2, sizeof spec_ep - (len - 2), "%s", bound_port);
  if (strcmp(spec_ep, s->endpoint)) net_server_alias(s->net, spec_ep);
  return s;
}

rt_server *rt_server_start_local(int n_cpus, int max_gpus, rt_status *st) {
  static atomic_int counter;
  char addr[128];
  snprintf(addr, sizeof addr, "inproc://tfsh-local-%d-%d", (int)getpid(),
           atomic_fetch_add(&counter, 1));
  rt_cluster *c = rt_cluster_new();
  rt_cluster_add(c, "localhost", 0, addr);
  rt_server_opts o = {.n_cpus = n_cpus > 0 ? n_cpus : 1, .max_gpus = max_gpus};
  rt_server *s = rt_server_start(c, "localhost", 0, &o, st);
  rt_cluster_free(c);
  return s;
}

const char *rt_server_endpoint(const rt_server *s) { return s->endpoint; }
const char *rt_server_task(const rt_server *s) { return s->task; }

void rt_server_join(rt_server *s) {
  pthread_mutex_lock(&s->mu);
  while (!s->stopped) pthread_cond_wait(&s->cv, &s->mu);
  pthread_mutex_unlock(&s->mu);
}

bool rt_server_wait(rt_server *s, int ms) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_sec += ms / 1000;
  ts.tv_nsec += (long)(ms % 1000) * 1000000L;
  if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
  pthread_mutex_lock(&s->mu);
  while (!s->stopped && pthread_cond_timedwait(&s->cv, &s->mu, &ts) == 0) {}
  bool stopped = s->stopped;
  pthread_mutex_unlock(&s->mu);
  return stopped;
}

void rt_server_stop(rt_server *s) {
  pthread_mutex_lock(&s->mu);
  s->stopped = true;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
}

void rt_server_free(rt_server *s) {
  if (!s) return;
  rt_server_stop(s);
  if (s->net) net_server_stop(s->net);
  if (s->worker) rt_worker_shutdown(s->worker);
  if (s->net) net_server_free(s->net);
  rt_master_free(s->master);
  rt_worker_free(s->worker);
  rt_cluster_free(s->cluster);
  pthread_mutex_destroy(&s->mu);
  pthread_cond_destroy(&s->cv);
  free(s);
}

/* ---- the network's settings (net/net.h), for the shell ------------------------------ */

int rt_net_configure(const char *max_message_bytes, const char *key_file, bool insecure,
                     rt_status *st) {
  return net_configure(max_message_bytes, key_file, insecure, st);
}

const char *rt_net_flags_help(void) { return net_server_flags_help; }

int rt_net_keygen_main(int argc, char **argv) { return net_keygen_main(argc, argv); }
