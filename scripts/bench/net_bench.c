/* net_bench: the net layer against raw ZeroMQ, measured in the same run.
 *   latency:    a tiny request through net_call vs a raw REQ/REP round trip
 *   throughput: a 64 MiB payload frame (zero-copy, the buffer reused) through net_call
 *               vs raw REQ/REP carrying the same buffer; both answered by a tiny reply
 * on tcp loopback and inproc; and on tcp loopback the net layer with a cluster key (CURVE:
 * encrypted and authenticated) against without, in the same run. Build (after building tfsh_core in build-net/):
 *   cc -O2 -std=gnu17 -I. scripts/bench/net_bench.c build-net/libtfsh_core.a \
 *      -lzmq -lmsgpackc -lpthread -o build-net/net_bench      (base/status.c inside)
 * or, without the library:  cc -O2 -std=gnu17 -I. scripts/bench/net_bench.c net/[a-z]*.c \
 *      base/status.c base/alloc.c -lzmq -lmsgpackc -lpthread -o net_bench
 * Usage: net_bench [round_trips (20000)] [transfers (20)] */
#include <pthread.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <zmq.h>

#include "net/client.h"
#include "net/server.h"

#define BIG ((size_t)64 << 20)

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* raw REP: answer every request with one byte, until a "q" */
static void *rep_main(void *sock) {
  for (bool quit = false; !quit;) {
    zmq_msg_t m;
    zmq_msg_init(&m);
    if (zmq_msg_recv(&m, sock, 0) < 0) break;
    quit = zmq_msg_size(&m) == 1 && *(char *)zmq_msg_data(&m) == 'q';
    zmq_msg_close(&m);
    if (zmq_send(sock, "k", 1, 0) < 0) break;
  }
  zmq_close(sock);
  return NULL;
}

static void raw(const char *bind, int n, int k, double *rtt_us, double *mbps) {
  void *rep = zmq_socket(net_ctx(), ZMQ_REP), *req = zmq_socket(net_ctx(), ZMQ_REQ);
  int zero = 0;
  zmq_setsockopt(rep, ZMQ_LINGER, &zero, sizeof zero);
  zmq_setsockopt(req, ZMQ_LINGER, &zero, sizeof zero);
  char ep[256];
  size_t len = sizeof ep;
  zmq_bind(rep, bind);
  zmq_getsockopt(rep, ZMQ_LAST_ENDPOINT, ep, &len);
  zmq_connect(req, ep);
  pthread_t t;
  pthread_create(&t, NULL, rep_main, rep);
  char b[8];
  for (int i = 0; i < 100; i++) zmq_send(req, "p", 1, 0), zmq_recv(req, b, sizeof b, 0);
  double t0 = now_s();
  for (int i = 0; i < n; i++) zmq_send(req, "p", 1, 0), zmq_recv(req, b, sizeof b, 0);
  *rtt_us = (now_s() - t0) / n * 1e6;
  static char *big;
  if (!big) big = malloc(BIG), memset(big, 1, BIG);
  t0 = now_s();
  for (int i = 0; i < k; i++) {
    zmq_msg_t m;
    zmq_msg_init_data(&m, big, BIG, NULL, NULL);
    zmq_msg_send(&m, req, 0);
    zmq_recv(req, b, sizeof b, 0);
  }
  *mbps = (double)BIG * k / (now_s() - t0) / 1e6;
  zmq_send(req, "q", 1, 0);
  zmq_recv(req, b, sizeof b, 0);
  pthread_join(t, NULL);
  zmq_close(req);
}

static void pong(void *user, net_req *req) { net_reply(req, net_msg_new("Pong")); }

/* key: a cluster key file, "" for none */
static void net(const char *bind, const char *key, int n, int k, double *rtt_us, double *mbps) {
  rt_status st;
  net_options o;
  net_options_default(&o);
  o.key_file = key;
  net_server *s = net_server_new(&bind, 1, pong, NULL, &o, &st);
  net_client *c = s ? net_client_new(net_server_endpoint(s, 0), &o, &st) : NULL;
  if (!c) {
    fprintf(stderr, "net_bench: %s\n", st.msg);
    exit(1);
  }
  net_in *r;
  for (int i = 0; i < 100; i++) net_call(c, net_msg_new("Ping"), &r, 5000, &st), net_in_free(r);
  double t0 = now_s();
  for (int i = 0; i < n; i++) {
    if (net_call(c, net_msg_new("Ping"), &r, 5000, &st)) fprintf(stderr, "%s\n", st.msg), exit(1);
    net_in_free(r);
  }
  *rtt_us = (now_s() - t0) / n * 1e6;
  static char *big;
  if (!big) big = malloc(BIG), memset(big, 1, BIG);
  t0 = now_s();
  for (int i = 0; i < k; i++) {
    net_msg *m = net_msg_new("Put");
    net_msg_frame(m, big, BIG, NULL, NULL);
    if (net_call(c, m, &r, 60000, &st)) fprintf(stderr, "%s\n", st.msg), exit(1);
    net_in_free(r);
  }
  *mbps = (double)BIG * k / (now_s() - t0) / 1e6;
  net_client_free(c);
  net_server_free(s);
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 20000, k = argc > 2 ? atoi(argv[2]) : 20;
  const char *eps[][2] = {{"tcp://127.0.0.1:*", "tcp://127.0.0.1:*"},
                          {"inproc://bench-raw", "inproc://bench-net"}};
  const char *names[] = {"tcp loopback", "inproc"};
  for (int i = 0; i < 2; i++) {
    double rr, rm, nr, nm;
    raw(eps[i][0], n, k, &rr, &rm);
    net(eps[i][1], "", n, k, &nr, &nm);
    printf("%-12s  round trip: raw %6.1f us  net %6.1f us  (net/raw %.2fx)\n", names[i], rr, nr,
           nr / rr);
    printf("%-12s  64 MiB:     raw %6.0f MB/s net %6.0f MB/s (net/raw %.0f%%)\n", names[i], rm,
           nm, 100 * nm / rm);
  }
  char key[64];
  snprintf(key, sizeof key, "/tmp/net_bench-%d.key", (int)getpid());
  rt_status st;
  if (net_keygen(key, &st)) {
    fprintf(stderr, "net_bench: %s\n", st.msg);
    return 1;
  }
  double pr, pm, cr, cm;
  net("tcp://127.0.0.1:*", "", n / 4, k, &pr, &pm);
  net("tcp://127.0.0.1:*", key, n / 4, k, &cr, &cm);
  unlink(key);
  printf("tcp CURVE     round trip: plain %6.1f us  CURVE %6.1f us  (CURVE/plain %.2fx)\n", pr, cr,
         cr / pr);
  printf("tcp CURVE     64 MiB:     plain %6.0f MB/s CURVE %6.0f MB/s (CURVE/plain %.0f%%)\n", pm,
         cm, 100 * cm / pm);
  return 0;
}
