/* net/: message encoding and validation, server and client over inproc and tcp, peers. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <netinet/in.h>
#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/client.h"
#include "net/lane.h"
#include "net/peer.h"
#include "net/server.h"
#include "net/wire.h"

#define CALL_MS 10000   /* every wait in these tests is bounded */

/* ---- encoding ---------------------------------------------------------------------- */

static net_in *seal_and_parse(net_msg *m, uint64_t id, const net_limits *lim, rt_status *st) {
  const void *p;
  size_t len;
  net_msg_seal(m, id, &p, &len);
  return net_in_parse(p, len, lim, NULL, st);
}

static void test_roundtrip(void **state) {
  net_msg *m = net_msg_new("RunStep");
  net_msg_int(m, "neg", -5);
  net_msg_int(m, "big", INT64_MIN);
  net_msg_uint(m, "step", UINT64_MAX);
  net_msg_float(m, "lr", 0.25);
  net_msg_bool(m, "yes", true);
  net_msg_nil(m, "none");
  net_msg_str(m, "name", "w/read:0");
  net_msg_bin(m, "blob", "\0\1\2", 3);
  msgpack_packer *pk = net_msg_field(m, "shape");
  msgpack_pack_array(pk, 2);
  msgpack_pack_int64(pk, 3);
  msgpack_pack_int64(pk, 4);
  pk = net_msg_field(m, "attrs");
  msgpack_pack_map(pk, 1);
  msgpack_pack_str_with_body(pk, "T", 1);
  msgpack_pack_int32(pk, 1);
  rt_status st;
  net_in *in = seal_and_parse(m, 42, NULL, &st);
  assert_non_null(in);
  net_msg_free(m);

  assert_string_equal(net_in_type(in), "RunStep");
  assert_int_equal(net_in_id(in), 42);
  int64_t i;
  uint64_t u;
  double f;
  bool b;
  const char *s;
  const void *bin;
  size_t len;
  const msgpack_object_array *a;
  const msgpack_object_map *mp;
  assert_int_equal(net_get_int(in, "neg", &i, &st), RT_OK);
  assert_int_equal(i, -5);
  assert_int_equal(net_get_int(in, "big", &i, &st), RT_OK);
  assert_true(i == INT64_MIN);
  assert_int_equal(net_get_uint(in, "step", &u, &st), RT_OK);
  assert_true(u == UINT64_MAX);
  assert_int_equal(net_get_float(in, "lr", &f, &st), RT_OK);
  assert_true(f == 0.25);
  assert_int_equal(net_get_bool(in, "yes", &b, &st), RT_OK);
  assert_true(b);
  assert_true(net_get(in, "none") && !net_has(in, "none") && !net_has(in, "absent"));
  assert_int_equal(net_get_str(in, "name", &s, &len, &st), RT_OK);
  assert_int_equal(len, 8);
  assert_memory_equal(s, "w/read:0", 8);
  assert_int_equal(net_get_bin(in, "blob", &bin, &len, &st), RT_OK);
  assert_int_equal(len, 3);
  assert_memory_equal(bin, "\0\1\2", 3);
  assert_int_equal(net_get_array(in, "shape", &a, &st), RT_OK);
  assert_int_equal(a->size, 2);
  assert_int_equal(net_obj_int(&a->ptr[1], "shape[1]", &i, &st), RT_OK);
  assert_int_equal(i, 4);
  assert_int_equal(net_get_map(in, "attrs", &mp, &st), RT_OK);
  assert_int_equal(mp->size, 1);
  const msgpack_object attrs = {.type = MSGPACK_OBJECT_MAP, .via.map = *mp};
  assert_int_equal(net_obj_int(net_obj_key(&attrs, "T"), "attrs.T", &i, &st), RT_OK);
  assert_int_equal(i, 1);
  assert_int_equal(net_get_float(in, "neg", &f, &st), RT_OK);   /* ints pass as floats */
  assert_true(f == -5.0);

  assert_int_equal(net_get_int(in, "name", &i, &st), RT_INVALID_ARGUMENT);
  assert_string_equal(st.msg, "RunStep: field \"name\" is str, expected int");
  assert_int_equal(net_get_uint(in, "neg", &u, &st), RT_INVALID_ARGUMENT);
  assert_string_equal(st.msg, "RunStep: field \"neg\" is int, expected uint");
  assert_int_equal(net_get_int(in, "step", &i, &st), RT_INVALID_ARGUMENT);
  assert_string_equal(st.msg, "RunStep: field \"step\" is 18446744073709551615, out of range for int64");
  assert_int_equal(net_get_str(in, "session", &s, &len, &st), RT_INVALID_ARGUMENT);
  assert_string_equal(st.msg, "RunStep: missing field \"session\"");
  assert_int_equal(net_get_array(in, "attrs", &a, &st), RT_INVALID_ARGUMENT);
  assert_string_equal(st.msg, "RunStep: field \"attrs\" is map, expected array");
  net_in_free(in);
}

/* The test value of every common field in net/PROTOCOL.md, byte for byte. */
static void test_protocol_example(void **state) {
  static const uint8_t doc[] = {
    0xdf, 0x00, 0x00, 0x00, 0x03,   /* map32, 3 entries */
    0xa1, 'v', 0x01,                /* "v": 1 */
    0xa1, 't', 0xa4, 'P', 'i', 'n', 'g',
    0xa2, 'i', 'd', 0xcf, 0, 0, 0, 0, 0, 0, 0, 0x07,
  };
  net_msg *m = net_msg_new("Ping");
  const void *p;
  size_t len;
  net_msg_seal(m, 7, &p, &len);
  assert_int_equal(len, sizeof doc);
  assert_memory_equal(p, doc, sizeof doc);
  net_msg_free(m);
  /* the error reply example: {"v":1,"t":"error","id":7,"code":5,"msg":"no session 9"} */
  m = net_wire_error(RT_NOT_FOUND, "no session 9");
  rt_status st;
  net_in *in = seal_and_parse(m, 7, NULL, &st);
  net_msg_free(m);
  int64_t code;
  const char *s;
  assert_string_equal(net_in_type(in), "error");
  assert_int_equal(net_get_int(in, "code", &code, &st), RT_OK);
  assert_int_equal(code, 5);
  assert_int_equal(net_get_str(in, "msg", &s, &len, &st), RT_OK);
  assert_int_equal(len, 12);
  net_in_free(in);
}

typedef struct bad_case {
  const char *name;
  const char *bytes;
  size_t len;
  int code;
  const char *msg;
} bad_case;

#define B(s) s, sizeof(s) - 1
/* prefix of a good header: {"v":1,"t":"Ping","id":7, ... with 4 entries */
#define HEAD4 "\x84\xa1v\x01\xa1t\xa4Ping\xa2id\x07"

static void test_malformed(void **state) {
  static const bad_case cases[] = {
    {"empty", B(""), RT_INVALID_ARGUMENT, "malformed header: empty header frame"},
    {"not a map", B("\x93\x01\x02\x03"), RT_INVALID_ARGUMENT,
     "malformed header: expected a map, got array"},
    {"garbage", B("hello"), RT_INVALID_ARGUMENT, "malformed header: expected a map, got uint"},
    {"truncated", B("\x83\xa1v\x01\xa1t\xa4Pi"), RT_INVALID_ARGUMENT,
     "malformed header: field \"t\": str of 4 bytes at offset 6 runs past the end of the 9-byte frame"},
    {"truncated length", B("\x81\xa1x\xda\x00"), RT_INVALID_ARGUMENT,
     "malformed header: field \"x\": str at offset 3 runs past the end of the 5-byte frame"},
    {"truncated map", B("\x83\xa1v\x01"), RT_INVALID_ARGUMENT,
     "malformed header: map at offset 0 claims 3 entries but only 3 bytes are left"},
    {"missing v", B("\x82\xa1t\xa4Ping\xa2id\x07"), RT_INVALID_ARGUMENT,
     "malformed header: missing field \"v\""},
    {"missing t", B("\x82\xa1v\x01\xa2id\x07"), RT_INVALID_ARGUMENT,
     "malformed header: missing field \"t\""},
    {"missing id", B("\x82\xa1v\x01\xa1t\xa4Ping"), RT_INVALID_ARGUMENT,
     "malformed header: missing field \"id\""},
    {"v is str", B("\x83\xa1v\xa1" "1\xa1t\xa4Ping\xa2id\x07"), RT_INVALID_ARGUMENT,
     "malformed header: field \"v\" is str, expected uint"},
    {"t is int", B("\x83\xa1v\x01\xa1t\x05\xa2id\x07"), RT_INVALID_ARGUMENT,
     "malformed header: field \"t\" is uint, expected str"},
    {"id negative", B("\x83\xa1v\x01\xa1t\xa4Ping\xa2id\xff"), RT_INVALID_ARGUMENT,
     "malformed header: field \"id\" is int, expected uint"},
    {"t empty", B("\x83\xa1v\x01\xa1t\xa0\xa2id\x07"), RT_INVALID_ARGUMENT,
     "malformed header: field \"t\" must be 1 to 31 printable characters"},
    {"version 2", B("\x83\xa1v\x02\xa1t\xa4Ping\xa2id\x07"), RT_UNIMPLEMENTED,
     "unsupported protocol version 2 (this tfsh speaks version 1)"},
    {"key not str", B("\x81\x01\x02"), RT_INVALID_ARGUMENT,
     "malformed header: key at offset 1 is uint, expected str"},
    {"huge array", B(HEAD4 "\xa1x\xdd\xff\xff\xff\xff\x01"), RT_INVALID_ARGUMENT,
     "malformed header: field \"x\": array at offset 17 claims 4294967295 elements but only 1 bytes are left"},
    {"huge map", B(HEAD4 "\xa1x\xdf\x7f\xff\xff\xff"), RT_INVALID_ARGUMENT,
     "malformed header: field \"x\": map at offset 17 claims 2147483647 entries but only 0 bytes are left"},
    {"long str", B(HEAD4 "\xa1x\xdb\x00\x01\x00\x00" "abc"), RT_INVALID_ARGUMENT,
     "malformed header: field \"x\": str of 65536 bytes at offset 17 runs past the end of the 25-byte frame"},
    {"bin over limit", B(HEAD4 "\xa1x\xc4\x11" "0123456789abcdefg"), RT_RESOURCE_EXHAUSTED,
     "message over limits: field \"x\": bin of 17 bytes exceeds max_str 16"},
    {"count over limit", B(HEAD4 "\xa1x\xdc\x00\x11" "0123456789abcdefg"), RT_RESOURCE_EXHAUSTED,
     "message over limits: field \"x\": array of 17 elements exceeds max_count 16"},
    {"too deep", B(HEAD4 "\xa1x\x91\x91\x91\x91\x91\x91\x91\x91\xc0"), RT_RESOURCE_EXHAUSTED,
     "message over limits: field \"x\": array at offset 20 nests deeper than max_depth 4"},
    {"ext", B(HEAD4 "\xa1x\xd4\x01\x02"), RT_INVALID_ARGUMENT,
     "malformed header: field \"x\": unsupported msgpack type 0xd4 (ext) at offset 17"},
    {"trailing", B("\x83\xa1v\x01\xa1t\xa4Ping\xa2id\x07\xc0\xc0"), RT_INVALID_ARGUMENT,
     "malformed header: 2 trailing bytes after the map"},
  };
  net_limits lim;
  net_limits_default(&lim);
  lim.max_str = 16;
  lim.max_count = 16;
  lim.max_depth = 4;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const bad_case *c = &cases[i];
    rt_status st = {0};
    net_in *in = net_in_parse(c->bytes, c->len, &lim, NULL, &st);
    if (in || st.code != c->code || strcmp(st.msg, c->msg) != 0)
      fail_msg("case \"%s\": got code %d \"%s\"", c->name, st.code, st.msg);
  }
  /* over max_header, and the id survives a version error for the error reply */
  rt_status st;
  uint64_t id;
  lim.max_header = 8;
  assert_null(net_in_parse("\x80\x80\x80\x80\x80\x80\x80\x80\x80", 9, &lim, NULL, &st));
  assert_string_equal(st.msg, "message over limits: header of 9 bytes exceeds max_header 8");
  assert_null(net_in_parse(B("\x83\xa1v\x09\xa1t\xa4Ping\xa2id\x07"), NULL, &id, &st));
  assert_int_equal(id, 7);
}

/* ---- a server for the tests -------------------------------------------------------- */

typedef struct fixture {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool blocked, released;   /* "Block" handler started; "Release" arrived */
  net_req *parked;          /* a "Park" request left unanswered */
  void *frame_seen;         /* where the first payload frame arrived */
  int handled;
} fixture;

static fixture fx = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static void fx_reset(void) {
  pthread_mutex_lock(&fx.mu);
  fx.blocked = fx.released = false;
  fx.parked = NULL;
  fx.frame_seen = NULL;
  fx.handled = 0;
  pthread_mutex_unlock(&fx.mu);
}

static void wait_for(bool *flag) {
  pthread_mutex_lock(&fx.mu);
  while (!*flag) pthread_cond_wait(&fx.cv, &fx.mu);
  pthread_mutex_unlock(&fx.mu);
}

/* The request a "Park" handler left unanswered (waits for it to arrive). */
static net_req *take_parked(void) {
  pthread_mutex_lock(&fx.mu);
  while (!fx.parked) pthread_cond_wait(&fx.cv, &fx.mu);
  net_req *r = fx.parked;
  fx.parked = NULL;
  pthread_mutex_unlock(&fx.mu);
  return r;
}

static void set_flag(bool *flag) {
  pthread_mutex_lock(&fx.mu);
  *flag = true;
  pthread_cond_broadcast(&fx.cv);
  pthread_mutex_unlock(&fx.mu);
}

/* Echo: "x" back, every frame forwarded without a copy. Block: wait for Release.
 * Park: keep the request unanswered. Fail: an error reply. */
static void handle(void *user, net_req *req) {
  const net_in *in = net_req_msg(req);
  const char *t = net_in_type(in);
  pthread_mutex_lock(&fx.mu);
  fx.handled++;
  if (net_in_nframes(in) && !fx.frame_seen) fx.frame_seen = net_frame_data(net_in_frame(in, 0));
  pthread_mutex_unlock(&fx.mu);
  if (strcmp(t, "Fail") == 0) {
    net_reply_error(req, RT_NOT_FOUND, "no session \"%s\"", "s1");
    return;
  }
  if (strcmp(t, "Park") == 0) {
    pthread_mutex_lock(&fx.mu);
    fx.parked = req;
    pthread_cond_broadcast(&fx.cv);
    pthread_mutex_unlock(&fx.mu);
    return;
  }
  bool block = strcmp(t, "Block") == 0;
  if (block) {
    set_flag(&fx.blocked);
    wait_for(&fx.released);
  }
  if (strcmp(t, "Release") == 0) set_flag(&fx.released);
  net_msg *out = net_msg_new("Echo");
  int64_t x = -1;
  rt_status st;
  net_get_int(in, "x", &x, &st);
  net_msg_int(out, "x", x);
  for (size_t i = 0; i < net_in_nframes(in); i++) net_msg_frame_fwd(out, net_in_frame(in, i));
  int rc = net_reply(req, out);   /* req, in and t are gone now */
  if (block) {   /* tell the shutdown test what became of the reply */
    pthread_mutex_lock(&fx.mu);
    fx.handled = 1000 + rc;
    pthread_cond_broadcast(&fx.cv);
    pthread_mutex_unlock(&fx.mu);
  }
}

static net_server *start(const char *ep, const net_options *o) {
  rt_status st;
  fx_reset();
  net_server *s = net_server_new(&ep, 1, handle, NULL, o, &st);
  if (!s) fail_msg("%s", st.msg);
  return s;
}

static net_client *connect_to(const net_server *s) {
  rt_status st;
  net_client *c = net_client_new(net_server_endpoint(s, 0), NULL, &st);
  if (!c) fail_msg("%s", st.msg);
  return c;
}

static int64_t echo(net_client *c, int64_t x) {
  net_msg *m = net_msg_new("Echo");
  net_msg_int(m, "x", x);
  net_in *r;
  rt_status st;
  if (net_call(c, m, &r, CALL_MS, &st)) fail_msg("%s", st.msg);
  int64_t got = -1;
  assert_string_equal(net_in_type(r), "Echo");
  assert_int_equal(net_get_int(r, "x", &got, &st), RT_OK);
  net_in_free(r);
  return got;
}

/* ---- request and reply ------------------------------------------------------------- */

static void request_reply(const char *ep) {
  net_server *s = start(ep, NULL);
  net_client *c = connect_to(s);
  assert_int_equal(echo(c, 5), 5);
  assert_int_equal(echo(c, -7), -7);

  net_in *r;
  rt_status st;
  assert_int_equal(net_call(c, net_msg_new("Fail"), &r, CALL_MS, &st), RT_NOT_FOUND);
  assert_string_equal(st.msg, "no session \"s1\"");
  assert_null(r);
  assert_int_equal(echo(c, 9), 9);
  net_client_free(c);
  net_server_free(s);
}

static void test_inproc(void **state) { request_reply("inproc://test-net"); }

static void test_tcp(void **state) {
  net_server *s = start("tcp://127.0.0.1:*", NULL);
  assert_true(strncmp(net_server_endpoint(s, 0), "tcp://127.0.0.1:", 16) == 0);
  assert_true(atoi(net_server_endpoint(s, 0) + 16) > 0);
  net_server_free(s);
  request_reply("tcp://127.0.0.1:*");
}

static void test_address_in_use(void **state) {
  net_server *s = start("tcp://127.0.0.1:*", NULL);
  const char *ep = net_server_endpoint(s, 0);
  rt_status st;
  assert_null(net_server_new(&ep, 1, handle, NULL, NULL, &st));
  assert_int_equal(st.code, RT_UNAVAILABLE);
  char want[128];
  snprintf(want, sizeof want, "cannot listen on %s: address already in use", ep);
  assert_string_equal(st.msg, want);
  net_server_free(s);
}

/* 64 MiB out and back: the frame reaches the handler at the sender's own address
 * (inproc passes it by pointer) and comes back intact; the sender's free_fn runs once. */
static int freed;
static void count_free(void *data, void *arg) { freed++; }

static void big_payload(const char *ep, bool same_address) {
  size_t n = (size_t)64 << 20;
  uint8_t *buf = malloc(n);
  memset(buf, 0x5a, n);
  for (size_t i = 0; i < n; i += 4096) buf[i] = (uint8_t)(i >> 12);
  buf[n - 1] = 0xab;
  /* Heartbeats off: a ZMTP peer counts as dead when no whole frame arrives within the
   * timeout, and under valgrind one 64 MiB frame takes longer (PROTOCOL.md, "Limits"). */
  net_options o;
  net_options_default(&o);
  o.heartbeat_ms = 0;
  net_server *s = start(ep, &o);
  rt_status cst;
  net_client *c = net_client_new(net_server_endpoint(s, 0), &o, &cst);
  net_msg *m = net_msg_new("Echo");
  net_msg_frame(m, buf, n, count_free, NULL);
  net_msg_frame_copy(m, "tail", 4);
  net_in *r;
  rt_status st;
  freed = 0;
  if (net_call(c, m, &r, CALL_MS, &st)) fail_msg("%s", st.msg);
  assert_int_equal(net_in_nframes(r), 2);
  net_frame *f = net_frame_ref(net_in_frame(r, 0));
  net_in_free(r);   /* the frame outlives its message */
  assert_int_equal(net_frame_size(f), n);
  const uint8_t *got = net_frame_data(f);
  if (same_address) assert_ptr_equal(fx.frame_seen, buf);
  for (size_t i = 0; i < n; i += 4096) assert_int_equal(got[i], (uint8_t)(i >> 12));
  assert_int_equal(got[n - 1], 0xab);
  net_frame_release((void *)got, f);
  net_client_free(c);
  net_server_free(s);
  assert_int_equal(freed, 1);
  free(buf);
}

static void test_big_payload(void **state) {
  big_payload("inproc://test-big", true);
  big_payload("tcp://127.0.0.1:*", false);
}

typedef struct worker_arg {
  const net_server *s;
  int base, n, ok;
} worker_arg;

static void *many_worker(void *p) {
  worker_arg *a = p;
  net_client *c = net_client_new(net_server_endpoint(a->s, 0), NULL, NULL);
  for (int i = 0; i < a->n; i++) a->ok += echo(c, a->base + i) == a->base + i;
  net_client_free(c);
  return NULL;
}

static void test_many_clients(void **state) {
  net_server *s = start("tcp://127.0.0.1:*", NULL);
  pthread_t t[4];
  worker_arg a[4];
  for (int i = 0; i < 4; i++) {
    a[i] = (worker_arg){.s = s, .base = i * 1000, .n = 250};
    pthread_create(&t[i], NULL, many_worker, &a[i]);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(t[i], NULL);
    assert_int_equal(a[i].ok, 250);
  }
  assert_int_equal(fx.handled, 1000);
  net_server_free(s);
}

/* A handler blocks until another request to the same server has been handled. */
typedef struct call_arg {
  const char *ep;
  const char *type;
  int timeout_ms;
  int rc;
  rt_status st;
  int64_t ms;
} call_arg;

static void *call_thread(void *p) {
  call_arg *a = p;
  net_client *c = net_client_new(a->ep, NULL, &a->st);
  net_in *r = NULL;
  int64_t t0 = net_now_ms();
  a->rc = net_call(c, net_msg_new(a->type), &r, a->timeout_ms, &a->st);
  a->ms = net_now_ms() - t0;
  net_in_free(r);
  net_client_free(c);
  return NULL;
}

static void test_blocking_handler(void **state) {
  net_server *s = start("inproc://test-block", NULL);
  call_arg a = {.ep = net_server_endpoint(s, 0), .type = "Block", .timeout_ms = CALL_MS};
  pthread_t t;
  pthread_create(&t, NULL, call_thread, &a);
  wait_for(&fx.blocked);
  net_client *c = connect_to(s);
  net_in *r;
  rt_status st;
  assert_int_equal(net_call(c, net_msg_new("Release"), &r, CALL_MS, &st), RT_OK);
  net_in_free(r);
  pthread_join(t, NULL);
  assert_int_equal(a.rc, RT_OK);
  net_client_free(c);
  net_server_free(s);
}

/* ---- hostile input ----------------------------------------------------------------- */

static void raw_expect(void *d, const void *bytes, size_t len, int code, const char *msg) {
  assert_int_equal(zmq_send(d, bytes, len, 0), (int)len);
  net_in *r = NULL;
  rt_status st;
  zmq_pollitem_t it = {d, 0, ZMQ_POLLIN, 0};
  assert_int_equal(zmq_poll(&it, 1, CALL_MS), 1);
  assert_int_equal(net_wire_recv(d, &(net_limits){1 << 20, 8, 1 << 20, 1 << 20, 1 << 20, 16},
                                 NULL, NULL, &r, NULL, &st), RT_OK);
  assert_string_equal(net_in_type(r), "error");
  int64_t c;
  const char *s;
  size_t n;
  assert_int_equal(net_get_int(r, "code", &c, &st), RT_OK);
  assert_int_equal(net_get_str(r, "msg", &s, &n, &st), RT_OK);
  assert_int_equal(c, code);
  assert_int_equal(n, strlen(msg));
  assert_memory_equal(s, msg, n);
  net_in_free(r);
}

static void test_hostile(void **state) {
  net_options o;
  net_options_default(&o);
  o.limits.max_frames = 2;
  net_server *s = start("tcp://127.0.0.1:*", &o);
  void *d = zmq_socket(net_ctx(), ZMQ_DEALER);
  int zero = 0;
  zmq_setsockopt(d, ZMQ_LINGER, &zero, sizeof zero);
  assert_int_equal(zmq_connect(d, net_server_endpoint(s, 0)), 0);
  raw_expect(d, B("hello"), RT_INVALID_ARGUMENT, "malformed header: expected a map, got uint");
  raw_expect(d, "", 0, RT_INVALID_ARGUMENT, "malformed header: empty header frame");
  raw_expect(d, B(HEAD4 "\xa1x\xdd\xff\xff\xff\xff"), RT_INVALID_ARGUMENT,
             "malformed header: field \"x\": array at offset 17 claims 4294967295 elements but "
             "only 0 bytes are left");
  raw_expect(d, B("\x83\xa1v\x02\xa1t\xa4Ping\xa2id\x07"), RT_UNIMPLEMENTED,
             "unsupported protocol version 2 (this tfsh speaks version 1)");
  /* too many frames */
  zmq_send(d, B("\x83\xa1v\x01\xa1t\xa4Ping\xa2id\x07"), ZMQ_SNDMORE);
  zmq_send(d, "a", 1, ZMQ_SNDMORE);
  zmq_send(d, "b", 1, ZMQ_SNDMORE);
  raw_expect(d, "c", 1, RT_RESOURCE_EXHAUSTED,
             "message over limits: more than 2 payload frames (max_frames)");
  zmq_close(d);
  net_client *c = connect_to(s);   /* and it keeps serving */
  assert_int_equal(echo(c, 3), 3);
  assert_int_equal(fx.handled, 1);
  net_client_free(c);
  net_server_free(s);
}

/* Configurable limits: a frame over max_frame (up to twice it) gets an error reply naming
 * the limit; a bigger one is dropped with the connection by ZeroMQ before it is
 * allocated; either way the server keeps serving. */
static void test_message_limits(void **state) {
  rt_status st;
  uint64_t n = 0;
  assert_int_equal(net_parse_bytes("64k", &n, &st), RT_OK);
  assert_true(n == 65536);
  assert_int_equal(net_parse_bytes("2MiB", &n, &st), RT_OK);
  assert_true(n == 2 << 20);
  assert_int_equal(net_parse_bytes("4G", &n, &st), RT_OK);
  assert_true(n == 4ull << 30);
  assert_int_equal(net_parse_bytes("1000", &n, &st), RT_OK);
  assert_true(n == 1000);
  assert_int_equal(net_parse_bytes("lots", &n, &st), RT_INVALID_ARGUMENT);
  assert_string_equal(st.msg, "'lots' is not a byte count (expected e.g. 1048576, 64k, 64M, 4G; "
                      "at least 1)");
  assert_int_equal(net_parse_bytes("0", &n, &st), RT_INVALID_ARGUMENT);
  assert_int_equal(net_parse_bytes("12Q", &n, &st), RT_INVALID_ARGUMENT);

  /* the environment sets the defaults; a bad value fails the first socket */
  setenv("TFSH_MAX_MESSAGE_BYTES", "64k", 1);
  net_options o;
  net_options_default(&o);
  assert_true(o.limits.max_frame == 65536 && o.limits.max_header == 65536);
  setenv("TFSH_MAX_MESSAGE_BYTES", "64 apples", 1);
  assert_null(net_client_new("tcp://127.0.0.1:1", NULL, &st));
  assert_string_equal(st.msg, "TFSH_MAX_MESSAGE_BYTES: '64 apples' is not a byte count "
                      "(expected e.g. 1048576, 64k, 64M, 4G; at least 1)");
  unsetenv("TFSH_MAX_MESSAGE_BYTES");

  net_options_default(&o);
  net_limits_set_message_bytes(&o.limits, 65536);
  net_server *s = start("tcp://127.0.0.1:*", &o);
  net_client *c = connect_to(s);
  static char big[200000];
  net_msg *m = net_msg_new("Echo");
  net_msg_frame(m, big, 100000, NULL, NULL);
  net_in *r = NULL;
  assert_int_equal(net_call(c, m, &r, CALL_MS, &st), RT_RESOURCE_EXHAUSTED);
  assert_string_equal(st.msg, "message over limits: payload frame 0 of 100000 bytes exceeds "
                      "max_frame 65536");
  assert_int_equal(echo(c, 1), 1);
  m = net_msg_new("Echo");
  net_msg_bin(m, "blob", big, 70000);
  assert_int_equal(net_call(c, m, &r, CALL_MS, &st), RT_RESOURCE_EXHAUSTED);
  assert_string_equal(st.msg, "message over limits: header of 70037 bytes exceeds max_header 65536");
  assert_int_equal(echo(c, 2), 2);
  m = net_msg_new("Echo");   /* over twice the limit: ZeroMQ hangs up */
  net_msg_frame(m, big, sizeof big, NULL, NULL);
  assert_int_equal(net_call(c, m, &r, CALL_MS, &st), RT_UNAVAILABLE);
  assert_non_null(strstr(st.msg, "lost"));
  assert_int_equal(echo(c, 3), 3);   /* it reconnects */
  assert_int_equal(fx.handled, 3);
  net_client_free(c);
  net_server_free(s);
}

/* ---- time limits, cancellation, fan-out, shutdown ---------------------------------- */

static int ticks;
static int tick_cancel(void *arg, int64_t elapsed) { return ++ticks == 3; }

static void test_timeout(void **state) {
  net_server *s = start("inproc://test-timeout", NULL);
  net_client *c = connect_to(s);
  net_in *r;
  rt_status st;
  assert_int_equal(net_call(c, net_msg_new("Park"), &r, 50, &st), RT_DEADLINE_EXCEEDED);
  assert_string_equal(st.msg, "no reply from inproc://test-timeout within 50 ms");
  net_reply(take_parked(), net_msg_new("Late"));   /* late: discarded by the next call */

  net_wait w = {.timeout_ms = CALL_MS, .tick_ms = 10, .tick = tick_cancel};
  ticks = 0;
  int64_t t0 = net_now_ms();
  assert_int_equal(net_call_wait(c, net_msg_new("Park"), &r, &w, &st), RT_CANCELLED);
  assert_string_equal(st.msg, "cancelled while waiting for inproc://test-timeout");
  assert_int_equal(ticks, 3);
  assert_true(net_now_ms() - t0 < 1000);
  net_reply(take_parked(), net_msg_new("Late"));
  assert_int_equal(echo(c, 11), 11);
  net_client_free(c);
  net_server_free(s);
}

static void test_fan_out(void **state) {
  net_server *s[3];
  net_client *c[3];
  fx_reset();
  for (int i = 0; i < 3; i++) {
    const char *ep = "tcp://127.0.0.1:*";
    rt_status st;
    s[i] = net_server_new(&ep, 1, handle, NULL, NULL, &st);
    c[i] = connect_to(s[i]);
  }
  rt_status st;
  uint64_t id[3];
  net_send(c[0], net_msg_new("Park"), &id[0], &st);
  net_send(c[1], net_msg_new("Fail"), &id[1], &st);
  net_msg *m = net_msg_new("Echo");
  net_msg_int(m, "x", 4);
  net_send(c[2], m, &id[2], &st);
  int seen = 0, ready;
  net_wait w = {.timeout_ms = CALL_MS};
  while (seen != 6) {
    assert_int_equal(net_poll(c, 3, &w, &ready, &st), RT_OK);
    net_in *r;
    uint64_t got;
    int rc = net_recv(c[ready], &r, &got, &st);
    if (ready == 1) {
      assert_int_equal(rc, RT_NOT_FOUND);
      assert_int_equal(got, id[1]);
      seen |= 2;
    } else if (r) {
      assert_int_equal(ready, 2);
      assert_int_equal(got, id[2]);
      net_in_free(r);
      seen |= 4;
    }
  }
  w.timeout_ms = 20;
  assert_int_equal(net_poll(c, 3, &w, &ready, &st), RT_DEADLINE_EXCEEDED);
  char want[128];
  snprintf(want, sizeof want, "no reply from %s within 20 ms", net_client_endpoint(c[0]));
  assert_string_equal(st.msg, want);
  net_reply(take_parked(), net_msg_new("Late"));
  for (int i = 0; i < 3; i++) {
    net_client_free(c[i]);
    net_server_free(s[i]);
  }
}

/* Stop a server while a handler holds a request: the client learns at once that the
 * connection is gone, the handler's late reply is dropped, free returns. */
static void test_shutdown_in_flight(void **state) {
  net_server *s = start("tcp://127.0.0.1:*", NULL);
  call_arg a = {.ep = net_server_endpoint(s, 0), .type = "Block", .timeout_ms = CALL_MS};
  pthread_t t;
  pthread_create(&t, NULL, call_thread, &a);
  wait_for(&fx.blocked);
  net_server_stop(s);
  pthread_join(t, NULL);
  assert_int_equal(a.rc, RT_UNAVAILABLE);
  char want[160];
  snprintf(want, sizeof want, "connection to %s lost (the peer closed it or stopped answering)",
           a.ep);
  assert_string_equal(a.st.msg, want);
  assert_true(a.ms < CALL_MS / 2);
  set_flag(&fx.released);
  net_server_free(s);
  assert_int_equal(fx.handled, 1000 + RT_CANCELLED);
}

/* A fresh client (a new thread's) to a server this process talked to and that has since
 * gone: no monitor event ever comes, yet the call fails as lost within about a second
 * instead of waiting out its timeout (a master's new handler thread to a killed ps). While
 * other tests run, the freed port can be taken by another process or the client can meet
 * itself on it (loopback self-connect), which fails the call sooner, and with another
 * message: so what is asserted is the bound. */
static void test_fresh_client_to_gone_server(void **state) {
  net_server *s = start("tcp://127.0.0.1:*", NULL);
  char ep[128];
  snprintf(ep, sizeof ep, "%s", net_server_endpoint(s, 0));
  net_client *c = connect_to(s);
  assert_int_equal(echo(c, 3), 3);   /* the endpoint is known good now */
  net_client_free(c);
  net_server_free(s);
  rt_status st;
  c = net_client_new(ep, NULL, &st);
  assert_non_null(c);
  net_in *r;
  int64_t t0 = net_now_ms();
  int rc = net_call(c, net_msg_new("Echo"), &r, CALL_MS, &st);
  int64_t ms = net_now_ms() - t0;
  if (rc == RT_OK || ms >= 3000) print_error("rc %d after %lld ms: %s\n", rc, (long long)ms, st.msg);
  assert_true(rc != RT_OK && rc != RT_DEADLINE_EXCEEDED && ms < 3000);
  if (rc == RT_OK) net_in_free(r);
  net_client_free(c);
}

/* ---- peers (one shared connection per endpoint) ------------------------------------- */

/* A server bound on every interface (no DNS in these tests), and the peer that reaches it
 * through 127.0.0.1: another name than it bound, so not aliased: over the socket. */
static net_server *start_any(void) {
  net_options o;
  net_options_default(&o);
  o.insecure = true;
  return start("tcp://0.0.0.0:*", &o);
}

static net_peer *peer_by_socket(const net_server *s, char *ep, size_t n) {
  snprintf(ep, n, "tcp://127.0.0.1:%s", strrchr(net_server_endpoint(s, 0), ':') + 1);
  rt_status st;
  net_peer *p = net_peer_get(ep, &st);
  if (!p) fail_msg("%s", st.msg);
  return p;
}

static int64_t peer_echo(net_peer *p, int64_t x) {
  net_msg *m = net_msg_new("Echo");
  net_msg_int(m, "x", x);
  net_in *r;
  rt_status st;
  if (net_peer_call(p, m, &r, &(net_wait){.timeout_ms = CALL_MS}, &st)) fail_msg("%s", st.msg);
  int64_t got = -1;
  assert_int_equal(net_get_int(r, "x", &got, &st), RT_OK);
  net_in_free(r);
  return got;
}

typedef struct echo_arg {
  net_peer *p;
  int base, bad;
} echo_arg;

static void *echo_many(void *arg) {
  echo_arg *a = arg;
  for (int i = 0; i < 200; i++) a->bad += peer_echo(a->p, a->base + i) != a->base + i;
  return NULL;
}

/* Four threads share one peer: every reply reaches the call that asked for it. */
static void test_peer_multiplexed(void **state) {
  net_server *s = start_any();
  char ep[128];
  net_peer *p = peer_by_socket(s, ep, sizeof ep);
  assert_ptr_equal(p, peer_by_socket(s, ep, sizeof ep));   /* one per endpoint */
  assert_false(net_peer_local(p));
  assert_int_equal(peer_echo(p, 5), 5);
  assert_true(net_peer_connected(p));
  net_in *r;
  rt_status st;
  assert_int_equal(net_peer_call(p, net_msg_new("Fail"), &r, NULL, &st), RT_NOT_FOUND);
  assert_string_equal(st.msg, "no session \"s1\"");
  pthread_t t[4];
  echo_arg a[4];
  for (int i = 0; i < 4; i++) {
    a[i] = (echo_arg){p, 1000 * (i + 1), 0};
    pthread_create(&t[i], NULL, echo_many, &a[i]);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(t[i], NULL);
    assert_int_equal(a[i].bad, 0);
  }
  net_server_free(s);
}

/* Replies to one queue in arrival order, by tag; a timeout names the oldest request owed;
 * a tick that says stop cancels; a queue freed with requests owed discards their replies. */
static void test_peer_queue(void **state) {
  net_server *s[2];
  net_peer *p[2];
  char ep[2][128];
  fx_reset();
  net_options o;
  net_options_default(&o);
  o.insecure = true;
  for (int i = 0; i < 2; i++) {
    const char *any = "tcp://0.0.0.0:*";
    rt_status st;
    s[i] = net_server_new(&any, 1, handle, NULL, &o, &st);
    p[i] = peer_by_socket(s[i], ep[i], sizeof ep[i]);
  }
  rt_status st;
  net_cq *q = net_cq_new();
  net_msg *m = net_msg_new("Echo");
  net_msg_int(m, "x", 4);
  assert_int_equal(net_peer_send(p[0], net_msg_new("Park"), q, 10, NULL, &st), RT_OK);
  assert_int_equal(net_peer_send(p[1], net_msg_new("Fail"), q, 11, NULL, &st), RT_OK);
  assert_int_equal(net_peer_send(p[1], m, q, 12, NULL, &st), RT_OK);
  int owed = net_cq_owed(q);   /* the Park is owed until answered; the others may be in */
  assert_true(owed >= 1 && owed <= 3);
  uint64_t tag;
  net_in *r;
  net_wait w = {.timeout_ms = CALL_MS};
  assert_int_equal(net_cq_wait(q, &w, &(uint64_t){12}, &tag, &r, &st), RT_OK);   /* by tag */
  assert_int_equal(tag, 12);
  net_in_free(r);
  assert_int_equal(net_cq_wait(q, &w, NULL, &tag, &r, &st), RT_NOT_FOUND);
  assert_int_equal(tag, 11);
  assert_null(r);
  w.timeout_ms = 20;
  assert_int_equal(net_cq_wait(q, &w, NULL, &tag, &r, &st), RT_DEADLINE_EXCEEDED);
  assert_int_equal(tag, NET_CQ_NONE);
  char want[160];
  snprintf(want, sizeof want, "no reply from %s within 20 ms", ep[0]);
  assert_string_equal(st.msg, want);
  w = (net_wait){.timeout_ms = CALL_MS, .tick_ms = 10, .tick = tick_cancel};
  ticks = 0;
  assert_int_equal(net_cq_wait(q, &w, NULL, &tag, &r, &st), RT_CANCELLED);
  snprintf(want, sizeof want, "cancelled while waiting for %s", ep[0]);
  assert_string_equal(st.msg, want);
  assert_int_equal(ticks, 3);
  net_cq_free(q);   /* the Park is still owed */
  net_reply(take_parked(), net_msg_new("Late"));
  assert_int_equal(peer_echo(p[0], 8), 8);   /* the late reply went nowhere */
  for (int i = 0; i < 2; i++) net_server_free(s[i]);
}

/* A peer whose server dies mid-call fails the call as lost, at once. */
static void test_peer_lost(void **state) {
  net_server *s = start_any();
  char ep[128];
  net_peer *p = peer_by_socket(s, ep, sizeof ep);
  assert_int_equal(peer_echo(p, 1), 1);
  net_cq *q = net_cq_new();
  rt_status st;
  assert_int_equal(net_peer_send(p, net_msg_new("Block"), q, 1, NULL, &st), RT_OK);
  wait_for(&fx.blocked);
  int64_t t0 = net_now_ms();
  net_server_stop(s);
  uint64_t tag;
  net_in *r;
  assert_int_equal(net_cq_wait(q, &(net_wait){.timeout_ms = CALL_MS}, NULL, &tag, &r, &st), RT_UNAVAILABLE);
  assert_int_equal(tag, 1);
  char want[160];
  snprintf(want, sizeof want, "connection to %s lost (the peer closed it or stopped answering)", ep);
  assert_string_equal(st.msg, want);
  assert_true(net_now_ms() - t0 < 2000);
  set_flag(&fx.released);
  net_server_free(s);
  net_cq_free(q);
}

/* A server of this process is reached without a socket: payload frames arrive as the
 * sender's own bytes; a request queued when the server stops fails as the socket would. */
static void test_peer_in_process(void **state) {
  net_server *s = start("tcp://127.0.0.1:*", NULL);
  net_server_alias(s, "tcp://test-peer-local:1");
  rt_status st;
  net_peer *p = net_peer_get("tcp://test-peer-local:1", &st);
  assert_true(net_peer_local(p));
  assert_true(net_peer_connected(p));
  assert_int_equal(peer_echo(p, 6), 6);
  static char payload[64 << 10];
  net_msg *m = net_msg_new("Echo");
  net_msg_frame(m, payload, sizeof payload, NULL, NULL);
  net_in *r;
  assert_int_equal(net_peer_call(p, m, &r, NULL, &st), RT_OK);
  assert_ptr_equal(fx.frame_seen, payload);                        /* no copy going */
  assert_ptr_equal(net_frame_data(net_in_frame(r, 0)), payload);   /* nor coming back */
  net_in_free(r);
  assert_int_equal(net_peer_call(p, net_msg_new("Fail"), &r, NULL, &st), RT_NOT_FOUND);
  assert_string_equal(st.msg, "no session \"s1\"");
  net_server_free(s);
  assert_false(net_peer_local(p));
}


/* ---- direct lanes (net/lane.h) ----------------------------------------------------- */

static void free_frame(void *data, void *arg) { free(data); }

/* An Echo with frames of the given sizes, each byte i of frame f (i * 7 + f) & 0xff, over
 * p: the reply's frames must hold the same bytes. */
static void lane_echo_frames(net_peer *p, const size_t *sizes, int n) {
  net_msg *m = net_msg_new("Echo");
  net_msg_int(m, "x", n);
  for (int f = 0; f < n; f++) {
    uint8_t *b = malloc(sizes[f] ? sizes[f] : 1);
    for (size_t i = 0; i < sizes[f]; i++) b[i] = (uint8_t)((i * 7 + (size_t)f) & 0xff);
    net_msg_frame(m, b, sizes[f], free_frame, NULL);
  }
  net_in *r;
  rt_status st;
  if (net_peer_call(p, m, &r, &(net_wait){.timeout_ms = CALL_MS}, &st)) fail_msg("%s", st.msg);
  assert_int_equal(net_in_nframes(r), n);
  for (int f = 0; f < n; f++) {
    const uint8_t *b = net_frame_data(net_in_frame(r, (size_t)f));
    assert_int_equal(net_frame_size(net_in_frame(r, (size_t)f)), sizes[f]);
    size_t bad = 0;
    for (size_t i = 0; i < sizes[f]; i++) bad += b[i] != (uint8_t)((i * 7 + (size_t)f) & 0xff);
    assert_int_equal(bad, 0);
    if (sizes[f] >= 64) assert_true(net_frame_aligned(net_in_frame(r, (size_t)f), 64));
  }
  net_in_free(r);
}

static void *echo_32m(void *arg) {
  lane_echo_frames(arg, (const size_t[]){32u << 20}, 1);
  return NULL;
}

/* A peer's requests move to the direct lane once its "Lane" has been answered (after its
 * second call at the latest); payloads of every size cross it whole, both ways at once. */
static void test_lane(void **state) {
  net_server *s = start_any();
  char ep[128];
  net_peer *p = peer_by_socket(s, ep, sizeof ep);
  assert_int_equal(peer_echo(p, 1), 1);
  assert_int_equal(peer_echo(p, 2), 2);
  assert_true(net_peer_on_lane(p));
  assert_int_equal(peer_echo(p, 3), 3);
  lane_echo_frames(p, (const size_t[]){0, 100, 1, 8u << 20, 65536}, 5);
  net_in *r;
  rt_status st;
  assert_int_equal(net_peer_call(p, net_msg_new("Fail"), &r, NULL, &st), RT_NOT_FOUND);
  assert_string_equal(st.msg, "no session \"s1\"");
  pthread_t t[2];   /* two big echoes in flight together: neither end may wait on the other */
  for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, echo_32m, p);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  assert_true(net_peer_on_lane(p));
  net_server_free(s);
}

/* A lane refuses what is over the server's limits as ZeroMQ does, keeps serving, and also
 * takes what ZeroMQ would have hung up on. */
static void test_lane_limits(void **state) {
  net_options o;
  net_options_default(&o);
  o.insecure = true;
  net_limits_set_message_bytes(&o.limits, 65536);
  net_server *s = start("tcp://0.0.0.0:*", &o);
  char ep[128];
  net_peer *p = peer_by_socket(s, ep, sizeof ep);
  assert_int_equal(peer_echo(p, 1), 1);
  assert_int_equal(peer_echo(p, 2), 2);
  assert_true(net_peer_on_lane(p));
  static char big[200000];
  net_in *r = NULL;
  rt_status st;
  net_wait w = {.timeout_ms = CALL_MS};
  net_msg *m = net_msg_new("Echo");
  net_msg_frame(m, big, 100000, NULL, NULL);
  assert_int_equal(net_peer_call(p, m, &r, &w, &st), RT_RESOURCE_EXHAUSTED);
  assert_string_equal(st.msg, "message over limits: payload frame 0 of 100000 bytes exceeds "
                      "max_frame 65536");
  assert_int_equal(peer_echo(p, 3), 3);
  m = net_msg_new("Echo");
  net_msg_bin(m, "blob", big, 70000);
  assert_int_equal(net_peer_call(p, m, &r, &w, &st), RT_RESOURCE_EXHAUSTED);
  assert_string_equal(st.msg, "message over limits: header of 70037 bytes exceeds max_header 65536");
  m = net_msg_new("Echo");
  net_msg_frame(m, big, sizeof big, NULL, NULL);
  assert_int_equal(net_peer_call(p, m, &r, &w, &st), RT_RESOURCE_EXHAUSTED);
  assert_int_equal(peer_echo(p, 4), 4);
  assert_true(net_peer_on_lane(p));
  assert_int_equal(fx.handled, 4);
  net_server_free(s);
}

/* A raw connection to port of 127.0.0.1 (-1 on failure). */
static int raw_connect(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                          .sin_addr.s_addr = htonl(0x7f000001)};
  if (connect(fd, (struct sockaddr *)&a, sizeof a)) {
    close(fd);
    return -1;
  }
  return fd;
}

/* Read n bytes or to the end within CALL_MS: the bytes read. */
static size_t raw_read(int fd, void *buf, size_t n) {
  size_t got = 0;
  while (got < n) {
    struct pollfd pf = {.fd = fd, .events = POLLIN};
    if (poll(&pf, 1, CALL_MS) <= 0) fail_msg("no answer within %d ms", CALL_MS);
    ssize_t r = read(fd, (char *)buf + got, n - got);
    if (r <= 0) break;
    got += (size_t)r;
  }
  return got;
}

/* What a lane's server does with strangers: a hello with another token or none is hung
 * up on without an ack; a lane that switched is served, and hung up on at its first byte
 * that is not a message. The server serves on throughout. With TFSH_LANE=0 a server offers
 * no lane, and a peer asks for none. */
static void test_lane_hostile(void **state) {
  net_server *s = start_any();
  rt_status st;
  net_client *c = connect_to(s);
  net_in *r;
  assert_int_equal(net_call(c, net_msg_new("Lane"), &r, CALL_MS, &st), RT_OK);
  uint64_t port = 0;
  const void *tok;
  size_t len;
  assert_int_equal(net_get_uint(r, "port", &port, &st), RT_OK);
  assert_int_equal(net_get_bin(r, "token", &tok, &len, &st), RT_OK);
  assert_int_equal(len, NET_LANE_TOKEN);
  uint8_t token[NET_LANE_TOKEN], hello[NET_LANE_HELLO], ack[8];
  memcpy(token, tok, sizeof token);
  net_in_free(r);

  int fd = raw_connect((int)port);   /* garbage */
  assert_true(fd >= 0);
  memset(hello, 'x', sizeof hello);
  assert_int_equal(write(fd, hello, sizeof hello), sizeof hello);
  assert_int_equal(raw_read(fd, ack, sizeof ack), 0);
  close(fd);
  fd = raw_connect((int)port);   /* another server's token */
  memcpy(hello, NET_LANE_MAGIC, 8);
  memset(hello + 8, 0, 2 * NET_LANE_TOKEN);
  assert_int_equal(write(fd, hello, sizeof hello), sizeof hello);
  assert_int_equal(raw_read(fd, ack, sizeof ack), 0);
  close(fd);

  fd = raw_connect((int)port);   /* the right token, then a switch, a message, garbage */
  memcpy(hello + 8, token, NET_LANE_TOKEN);
  memset(hello + 8 + NET_LANE_TOKEN, 0x5a, NET_LANE_TOKEN);
  assert_int_equal(write(fd, hello, sizeof hello), sizeof hello);
  assert_int_equal(raw_read(fd, ack, sizeof ack), 8);
  assert_memory_equal(ack, NET_LANE_MAGIC, 8);
  net_msg *sw = net_msg_new("LaneSwitch");
  net_msg_bin(sw, "nonce", hello + 8 + NET_LANE_TOKEN, NET_LANE_TOKEN);
  assert_int_equal(net_send_oneway(c, sw, &st), RT_OK);
  net_msg *m = net_msg_new("Echo");
  net_msg_int(m, "x", 77);
  assert_int_equal(net_lane_send(fd, m, 5, NULL, NULL, CALL_MS), 0);
  uint8_t reply[256];
  size_t got = raw_read(fd, reply, 16);
  assert_int_equal(got, 16);
  assert_memory_equal(reply, "TFL1", 4);
  assert_int_equal(write(fd, "GARBAGE!GARBAGE!", 16), 16);
  raw_read(fd, reply, sizeof reply);   /* the rest of the reply, then the end */
  assert_int_equal(raw_read(fd, reply, 1), 0);
  close(fd);
  assert_int_equal(echo(c, 6), 6);
  net_client_free(c);
  net_server_free(s);

  setenv("TFSH_LANE", "0", 1);
  s = start_any();
  c = connect_to(s);
  assert_int_equal(net_call(c, net_msg_new("Lane"), &r, CALL_MS, &st), RT_UNIMPLEMENTED);
  assert_string_equal(st.msg, "no direct lane here");
  net_client_free(c);
  unsetenv("TFSH_LANE");
  char ep[128];
  net_peer *p = peer_by_socket(s, ep, sizeof ep);   /* asks, hears no, stays on ZeroMQ */
  for (int i = 0; i < 3; i++) assert_int_equal(peer_echo(p, i), i);
  assert_false(net_peer_on_lane(p));
  net_server_free(s);
}


/* ---- the lane's reader, fed a byte at a time and by random cuts ----------------------- */

typedef struct lane_got_log {
  int n, refused;
  int64_t x[64];
  size_t frame_bytes[64];
  char err[RT_MSG_MAX];
} lane_got_log;

static void lane_got_record(void *arg, net_in *in, uint64_t id, const rt_status *st) {
  lane_got_log *l = arg;
  if (!in) {
    l->refused++;
    snprintf(l->err, sizeof l->err, "%s", st->msg);
    return;
  }
  rt_status e;
  int64_t x = -1;
  net_get_int(in, "x", &x, &e);
  size_t bytes = 0;
  for (size_t i = 0; i < net_in_nframes(in); i++) bytes += net_frame_size(net_in_frame(in, i));
  if (l->n < 64) l->x[l->n] = x, l->frame_bytes[l->n] = bytes;
  l->n++;
  net_in_free(in);
}

typedef struct wire_buf {
  int fd;
  uint8_t *p;
  size_t n, cap;
} wire_buf;

static void *collect(void *arg) {   /* fd's bytes until its end */
  wire_buf *w = arg;
  for (;;) {
    if (w->n == w->cap) w->p = realloc(w->p, w->cap = w->cap ? 2 * w->cap : 65536);
    ssize_t r = read(w->fd, w->p + w->n, w->cap - w->n);
    if (r <= 0) return NULL;
    w->n += (size_t)r;
  }
}

/* Messages written whole, read back through a socketpair in pieces of random sizes (one
 * byte, a few, more than the staging buffer): every message arrives, whole, in order,
 * and a message over the limits in their midst is refused without losing its neighbours;
 * bytes that are no message end the lane. */
static void test_lane_reader(void **state) {
  int sv[2];
  assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  static uint8_t big[300000];
  for (size_t i = 0; i < sizeof big; i++) big[i] = (uint8_t)(i * 13);
  wire_buf w = {.fd = sv[1]};
  pthread_t t;
  pthread_create(&t, NULL, collect, &w);
  for (int k = 0; k < 10; k++) {
    net_msg *m = net_msg_new("Echo");
    net_msg_int(m, "x", k);
    if (k % 3 == 1) net_msg_frame(m, big, (size_t)k * 1000, NULL, NULL);
    if (k == 4) net_msg_frame(m, big, sizeof big, NULL, NULL);   /* over max_frame below */
    if (k == 7) net_msg_frame(m, big, 0, NULL, NULL);
    assert_int_equal(net_lane_send(sv[0], m, (uint64_t)k + 1, NULL, NULL, CALL_MS), 0);
  }
  shutdown(sv[0], SHUT_WR);
  pthread_join(t, NULL);
  close(sv[0]);
  close(sv[1]);

  assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
  net_limits lim;
  net_limits_default(&lim);
  lim.max_frame = 100000;
  net_lane_rx rx;
  net_lane_rx_init(&rx);
  lane_got_log log = {0};
  unsigned seed = 7;
  for (size_t off = 0; off < w.n;) {
    seed = seed * 1103515245u + 12345u;
    unsigned r = seed >> 16;
    size_t piece = r % 5 == 0 ? 1 : r % 3 == 0 ? 70000 : r % 97 + 1;
    if (piece > w.n - off) piece = w.n - off;
    ssize_t put = write(sv[0], w.p + off, piece);
    assert_true(put > 0);
    off += (size_t)put;
    assert_true(net_lane_read(sv[1], &rx, &lim, 0, lane_got_record, &log) == 0);
  }
  assert_int_equal(log.n, 9);
  assert_int_equal(log.refused, 1);
  assert_string_equal(log.err, "message over limits: payload frame 1 of 300000 bytes exceeds "
                      "max_frame 100000");
  int64_t want[9] = {0, 1, 2, 3, 5, 6, 7, 8, 9};
  for (int i = 0; i < 9; i++) {
    assert_int_equal(log.x[i], want[i]);
    assert_int_equal(log.frame_bytes[i], want[i] % 3 == 1 ? (size_t)want[i] * 1000 : 0);
  }
  assert_int_equal(write(sv[0], "NOT A MESSAGE!!!", 16), 16);
  assert_int_equal(net_lane_read(sv[1], &rx, &lim, 0, lane_got_record, &log), -EPROTO);
  net_lane_rx_free(&rx);
  free(w.p);
  close(sv[0]);
  close(sv[1]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_roundtrip),
    cmocka_unit_test(test_protocol_example),
    cmocka_unit_test(test_malformed),
    cmocka_unit_test(test_inproc),
    cmocka_unit_test(test_tcp),
    cmocka_unit_test(test_address_in_use),
    cmocka_unit_test(test_big_payload),
    cmocka_unit_test(test_many_clients),
    cmocka_unit_test(test_blocking_handler),
    cmocka_unit_test(test_hostile),
    cmocka_unit_test(test_message_limits),
    cmocka_unit_test(test_timeout),
    cmocka_unit_test(test_fan_out),
    cmocka_unit_test(test_shutdown_in_flight),
    cmocka_unit_test(test_fresh_client_to_gone_server),
    cmocka_unit_test(test_peer_multiplexed),
    cmocka_unit_test(test_peer_queue),
    cmocka_unit_test(test_peer_lost),
    cmocka_unit_test(test_peer_in_process),
    cmocka_unit_test(test_lane),
    cmocka_unit_test(test_lane_limits),
    cmocka_unit_test(test_lane_hostile),
    cmocka_unit_test(test_lane_reader),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
