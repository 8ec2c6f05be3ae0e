/* net/: CURVE cluster keys over tcp loopback, in one process. With the key a call works;
 * without it, or with another key, the server refuses the handshake, the handler never
 * runs, and the client's call fails at once naming the cause (not at its deadline); a
 * non-loopback bind needs a key or `insecure`. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "net/client.h"
#include "net/peer.h"
#include "net/server.h"
#include "net/wire.h"

#define CALL_MS 10000     /* the deadline a refused call must not wait for */
#define REFUSED_MS 3000   /* "quickly": well under the deadline */

static char dir[64];
static char key_a[128], key_b[128];
static atomic_int handled;

static void handle(void *user, net_req *req) {
  atomic_fetch_add(&handled, 1);
  net_msg *out = net_msg_new("Pong");
  net_msg_int(out, "x", 42);
  net_reply(req, out);
}

static int setup(void **state) {
  unsetenv("TFSH_CLUSTER_KEY");
  unsetenv("TFSH_MAX_MESSAGE_BYTES");
  snprintf(dir, sizeof dir, "/tmp/tfsh-curve-XXXXXX");
  if (!mkdtemp(dir)) return -1;
  snprintf(key_a, sizeof key_a, "%s/a.key", dir);
  snprintf(key_b, sizeof key_b, "%s/b.key", dir);
  rt_status st;
  if (net_keygen(key_a, &st) || net_keygen(key_b, &st)) {
    fprintf(stderr, "%s\n", st.msg);
    return -1;
  }
  return 0;
}

static int teardown(void **state) {
  char p[160];
  const char *names[] = {"a.key", "b.key", "c.key", "open.key", "bad.key"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    snprintf(p, sizeof p, "%s/%s", dir, names[i]);
    unlink(p);
  }
  rmdir(dir);
  return 0;
}

static net_options with_key(const char *key) {
  net_options o;
  net_options_default(&o);
  o.key_file = key;
  return o;
}

static net_server *serve(const char *ep, const char *key) {
  net_options o = with_key(key);
  rt_status st;
  net_server *s = net_server_new(&ep, 1, handle, NULL, &o, &st);
  if (!s) fail_msg("%s", st.msg);
  return s;
}

/* One Ping from a client holding key ("" none); returns the status, the time in *ms. */
static int ping(const net_server *s, const char *key, int64_t *ms, rt_status *st) {
  net_options o = with_key(key);
  net_client *c = net_client_new(net_server_endpoint(s, 0), &o, st);
  assert_non_null(c);
  net_in *r = NULL;
  int64_t t0 = net_now_ms();
  int rc = net_call(c, net_msg_new("Ping"), &r, CALL_MS, st);
  *ms = net_now_ms() - t0;
  if (!rc) {
    int64_t x = 0;
    assert_string_equal(net_in_type(r), "Pong");
    assert_int_equal(net_get_int(r, "x", &x, st), RT_OK);
    assert_int_equal(x, 42);
  }
  net_in_free(r);
  net_client_free(c);
  return rc;
}

static void expect_refused(const net_server *s, const char *key) {
  rt_status st;
  int64_t ms;
  int before = atomic_load(&handled);
  assert_int_equal(ping(s, key, &ms, &st), RT_UNAUTHENTICATED);
  char want[256];
  snprintf(want, sizeof want, "the server at %s refused the connection: cluster key mismatch "
           "or missing (TFSH_CLUSTER_KEY)", net_server_endpoint(s, 0));
  assert_string_equal(st.msg, want);
  assert_true(ms < REFUSED_MS);
  assert_int_equal(atomic_load(&handled), before);   /* nothing ran */
}

static void test_with_key(void **state) {
  net_server *s = serve("tcp://127.0.0.1:*", key_a);
  rt_status st;
  int64_t ms;
  assert_int_equal(ping(s, key_a, &ms, &st), RT_OK);
  assert_int_equal(ping(s, key_a, &ms, &st), RT_OK);
  net_server_free(s);
}

/* With a key there is no direct lane (its traffic would not be encrypted): the server
 * offers none, and a peer holding the key stays on ZeroMQ. */
static void test_key_from_env(void **state) {
  setenv("TFSH_CLUSTER_KEY", key_a, 1);
  net_server *s = serve("tcp://127.0.0.1:*", NULL);
  rt_status st;
  int64_t ms;
  assert_int_equal(ping(s, NULL, &ms, &st), RT_OK);
  net_client *c = net_client_new(net_server_endpoint(s, 0), NULL, &st);
  net_in *r = NULL;
  assert_int_equal(net_call(c, net_msg_new("Lane"), &r, CALL_MS, &st), RT_UNIMPLEMENTED);
  assert_string_equal(st.msg, "no direct lane here");
  net_client_free(c);
  char ep[128];   /* another name than the server's own: reached over the socket */
  snprintf(ep, sizeof ep, "tcp://localhost:%s", strrchr(net_server_endpoint(s, 0), ':') + 1);
  net_peer *p = net_peer_get(ep, &st);
  assert_non_null(p);
  assert_false(net_peer_local(p));
  for (int i = 0; i < 3; i++) {
    assert_int_equal(net_peer_call(p, net_msg_new("Ping"), &r, &(net_wait){.timeout_ms = CALL_MS},
                                   &st), RT_OK);
    net_in_free(r);
  }
  assert_false(net_peer_on_lane(p));
  expect_refused(s, "");    /* "" overrides the environment: no key */
  unsetenv("TFSH_CLUSTER_KEY");
  expect_refused(s, NULL);
  net_server_free(s);
}

static void test_without_key_refused(void **state) {
  net_server *s = serve("tcp://127.0.0.1:*", key_a);
  expect_refused(s, "");
  net_server_free(s);
}

static void test_wrong_key_refused(void **state) {
  net_server *s = serve("tcp://127.0.0.1:*", key_a);
  expect_refused(s, key_b);
  rt_status st;
  int64_t ms;
  assert_int_equal(ping(s, key_a, &ms, &st), RT_OK);   /* still serving its members */
  net_server_free(s);
}

static void test_key_to_plain_server_refused(void **state) {
  net_server *s = serve("tcp://127.0.0.1:*", "");
  expect_refused(s, key_a);
  net_server_free(s);
}

/* Knowing only the public key: a client with the server's public key as its server key
 * but its own keypair is turned away by the ZAP handler. */
static void test_public_key_alone_refused(void **state) {
  net_server *s = serve("tcp://127.0.0.1:*", key_a);
  int before = atomic_load(&handled);
  net_key a, b;
  rt_status st;
  net_options oa = with_key(key_a), ob = with_key(key_b);
  assert_int_equal(net_key_for(&oa, &a, &st), RT_OK);
  assert_int_equal(net_key_for(&ob, &b, &st), RT_OK);
  void *d = zmq_socket(net_ctx(), ZMQ_DEALER);
  int zero = 0, ivl = 10;
  zmq_setsockopt(d, ZMQ_LINGER, &zero, sizeof zero);
  zmq_setsockopt(d, ZMQ_RECONNECT_IVL, &ivl, sizeof ivl);
  zmq_setsockopt(d, ZMQ_CURVE_SERVERKEY, a.pub, 40);
  zmq_setsockopt(d, ZMQ_CURVE_PUBLICKEY, b.pub, 40);
  zmq_setsockopt(d, ZMQ_CURVE_SECRETKEY, b.sec, 40);
  assert_int_equal(zmq_socket_monitor(d, "inproc://curve-test-mon", ZMQ_EVENT_HANDSHAKE_FAILED_AUTH |
                                                                 ZMQ_EVENT_HANDSHAKE_SUCCEEDED), 0);
  void *mon = zmq_socket(net_ctx(), ZMQ_PAIR);
  zmq_setsockopt(mon, ZMQ_LINGER, &zero, sizeof zero);
  assert_int_equal(zmq_connect(mon, "inproc://curve-test-mon"), 0);
  assert_int_equal(zmq_connect(d, net_server_endpoint(s, 0)), 0);
  int timeout = REFUSED_MS;
  zmq_setsockopt(mon, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
  uint8_t ev[6];
  assert_true(zmq_recv(mon, ev, sizeof ev, 0) >= 2);
  uint16_t event;
  memcpy(&event, ev, 2);
  assert_int_equal(event, ZMQ_EVENT_HANDSHAKE_FAILED_AUTH);
  zmq_socket_monitor(d, NULL, 0);
  zmq_close(mon);
  zmq_close(d);
  assert_int_equal(atomic_load(&handled), before);
  net_server_free(s);
}

static void test_non_loopback_bind(void **state) {
  const char *ep = "tcp://0.0.0.0:*";
  net_options o = with_key("");
  rt_status st;
  assert_null(net_server_new(&ep, 1, handle, NULL, &o, &st));
  assert_int_equal(st.code, RT_FAILED_PRECONDITION);
  assert_string_equal(st.msg,
                      "refusing to listen on tcp://0.0.0.0:* without a cluster key: anyone who "
                      "can reach it could run code as this user. Make a key with `tfsh keygen "
                      "FILE` and give it to every task (TFSH_CLUSTER_KEY=FILE or --cluster-key "
                      "FILE), or pass --insecure (a script's tf.train.Server: TFSH_INSECURE=1) to serve without one");
  const char *any = "tcp://*:*";
  assert_null(net_server_new(&any, 1, handle, NULL, &o, &st));
  o.insecure = true;
  net_server *s = net_server_new(&ep, 1, handle, NULL, &o, &st);
  assert_non_null(s);
  net_server_free(s);
  s = serve(ep, key_a);   /* with a key: fine */
  net_server_free(s);
  s = serve("tcp://127.0.0.1:*", "");   /* loopback: fine without */
  net_server_free(s);
  assert_true(net_endpoint_local("ipc:///tmp/x") && net_endpoint_local("tcp://localhost:1") &&
              net_endpoint_local("tcp://[::1]:1") && !net_endpoint_local("tcp://10.0.0.1:1") &&
              !net_endpoint_local("tcp://eth0:1"));
}

static void test_key_files(void **state) {
  struct stat sb;
  assert_int_equal(stat(key_a, &sb), 0);
  assert_int_equal(sb.st_mode & 0777, 0600);
  rt_status st;
  assert_int_equal(net_keygen(key_a, &st), RT_ALREADY_EXISTS);   /* never overwrites */
  net_key k;
  char p[160];
  snprintf(p, sizeof p, "%s/open.key", dir);
  assert_int_equal(net_keygen(p, &st), RT_OK);
  chmod(p, 0644);
  net_options o = with_key(p);
  assert_int_equal(net_key_for(&o, &k, &st), RT_PERMISSION_DENIED);
  assert_non_null(strstr(st.msg, "is readable by others (mode 0644): chmod 600"));
  snprintf(p, sizeof p, "%s/bad.key", dir);
  FILE *f = fopen(p, "w");
  fputs("public-key = nope\n", f);
  fclose(f);
  chmod(p, 0600);
  o.key_file = p;
  assert_int_equal(net_key_for(&o, &k, &st), RT_INVALID_ARGUMENT);
  assert_non_null(strstr(st.msg, "is not a tfsh cluster key"));
  o.key_file = "/nonexistent/k";
  assert_int_equal(net_key_for(&o, &k, &st), RT_FAILED_PRECONDITION);
  assert_string_equal(st.msg, "cannot read the cluster key /nonexistent/k: No such file or directory");
  /* a bad key refuses the server and the client, with the reason */
  setenv("TFSH_CLUSTER_KEY", "/nonexistent/k", 1);
  assert_null(net_client_new("tcp://127.0.0.1:1", NULL, &st));
  assert_string_equal(st.msg, "cannot read the cluster key /nonexistent/k (TFSH_CLUSTER_KEY): "
                      "No such file or directory");
  unsetenv("TFSH_CLUSTER_KEY");
}

/* `tfsh server` flags through net_configure: they become the process's defaults, so
 * servers and clients given NULL options (the runtime's) use them. Runs last: it changes
 * the defaults for the rest of the process. */
static void test_configure(void **state) {
  rt_status st;
  assert_int_equal(net_configure("12 parsecs", NULL, false, &st), RT_INVALID_ARGUMENT);
  assert_string_equal(st.msg, "--max-message-bytes: '12 parsecs' is not a byte count (expected "
                      "e.g. 1048576, 64k, 64M, 4G; at least 1)");
  assert_int_equal(net_configure(NULL, "/nonexistent/k", false, &st), RT_FAILED_PRECONDITION);
  assert_int_equal(net_configure("64M", key_a, true, &st), RT_OK);
  net_options o;
  net_options_default(&o);
  assert_true(o.limits.max_frame == 64u << 20 && o.limits.max_header == 64u << 20);
  assert_string_equal(o.key_file, key_a);
  assert_true(o.insecure);
  const char *ep = "tcp://127.0.0.1:*";
  net_server *s = net_server_new(&ep, 1, handle, NULL, NULL, &st);
  assert_non_null(s);
  net_client *c = net_client_new(net_server_endpoint(s, 0), NULL, &st);   /* both take */
  assert_non_null(c);                                                     /* the key */
  net_in *r = NULL;
  assert_int_equal(net_call(c, net_msg_new("Ping"), &r, CALL_MS, &st), RT_OK);
  net_in_free(r);
  net_client_free(c);
  expect_refused(s, "");
  net_server_free(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_with_key),
    cmocka_unit_test(test_key_from_env),
    cmocka_unit_test(test_without_key_refused),
    cmocka_unit_test(test_wrong_key_refused),
    cmocka_unit_test(test_key_to_plain_server_refused),
    cmocka_unit_test(test_public_key_alone_refused),
    cmocka_unit_test(test_non_loopback_bind),
    cmocka_unit_test(test_key_files),
    cmocka_unit_test(test_configure),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
