/* hostile_client ENDPOINT [MAX_MESSAGE_BYTES]: send a real tfsh server hostile
 * messages — truncated headers, wrong types, huge counts and lengths, unknown versions
 * and message types, unknown sessions, graph handles and steps, oversized frames — each
 * on a fresh connection, check the answer (an error reply with the expected code and
 * words, or for the cases marked so, none), and after each check that the server still
 * answers a valid GetStatus. Prints "ok   CASE: what came back" or "FAIL CASE: ..." and
 * a summary; exits 1 if anything failed. Used by tests/integration/test_hostile.sh.
 * MAX_MESSAGE_BYTES: the server's limit (TFSH_MAX_MESSAGE_BYTES), for the size cases.
 * hostile_client keygen FILE: net_keygen_main, for tests that need a cluster key before
 * `tfsh keygen` exists. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net/client.h"
#include "net/wire.h"

#define REPLY_MS 5000    /* an error reply must come within this */
#define SILENT_MS 500    /* how long a "no reply" case is watched */

static const char *endpoint;
static net_client *good;
static int passed, failed;

enum { ANY_ERROR = -1, NO_REPLY = -2, DROPPED = -3, ANY_REPLY = -4 };

typedef struct outcome {
  int kind;          /* 0 error, 1 reply, 2 nothing, 3 connection dropped */
  int code;
  char msg[RT_MSG_MAX];
  char type[NET_TYPE_MAX + 1];
} outcome;

static void *open_raw(void) {
  void *d = zmq_socket(net_ctx(), ZMQ_DEALER);
  int zero = 0, ivl = 10;
  zmq_setsockopt(d, ZMQ_LINGER, &zero, sizeof zero);
  zmq_setsockopt(d, ZMQ_RECONNECT_IVL, &ivl, sizeof ivl);
  if (zmq_connect(d, endpoint)) {
    fprintf(stderr, "hostile_client: cannot connect to %s: %s\n", endpoint, zmq_strerror(errno));
    exit(2);
  }
  return d;
}

/* Wait for one reply on d (a monitor would tell a drop from silence: a dropped
 * connection shows as silence here, and the caller asks for DROPPED or NO_REPLY alike). */
static outcome wait_reply(void *d, int ms) {
  outcome o = {.kind = 2};
  zmq_pollitem_t it = {d, 0, ZMQ_POLLIN, 0};
  if (zmq_poll(&it, 1, ms) != 1) return o;
  net_limits lim;
  net_limits_default(&lim);
  net_in *r = NULL;
  rt_status st;
  if (net_wire_recv(d, &lim, NULL, NULL, &r, NULL, &st)) {
    o.kind = 0;
    o.code = -1;
    snprintf(o.msg, sizeof o.msg, "unreadable reply: %s", st.msg);
    return o;
  }
  snprintf(o.type, sizeof o.type, "%s", net_in_type(r));
  if (!strcmp(o.type, "error")) {
    int64_t c = 0;
    const char *m = "";
    size_t n = 0;
    net_get_int(r, "code", &c, &st);
    net_get_str(r, "msg", &m, &n, &st);
    o.kind = 0;
    o.code = (int)c;
    snprintf(o.msg, sizeof o.msg, "%.*s", (int)n, m);
  } else {
    o.kind = 1;
  }
  net_in_free(r);
  return o;
}

static bool still_serving(char *why, size_t n) {
  net_in *r = NULL;
  rt_status st;
  if (net_call(good, net_msg_new("GetStatus"), &r, REPLY_MS, &st)) {
    snprintf(why, n, "GetStatus failed: %s", st.msg);
    return false;
  }
  bool ok = !strcmp(net_in_type(r), "GetStatusOk");
  if (!ok) snprintf(why, n, "GetStatus answered %s", net_in_type(r));
  net_in_free(r);
  return ok;
}

/* Judge an outcome against what the case wants, then check the server still serves. */
static void judge(const char *name, outcome o, int want, const char *words) {
  char got[RT_MSG_MAX + 64];
  if (o.kind == 0) snprintf(got, sizeof got, "error %d: %s", o.code, o.msg);
  else if (o.kind == 1) snprintf(got, sizeof got, "reply %s", o.type);
  else snprintf(got, sizeof got, "no reply within %d ms", want == NO_REPLY || want == DROPPED ? SILENT_MS : REPLY_MS);
  bool ok;
  if (want == NO_REPLY || want == DROPPED) ok = o.kind == 2;
  else if (want == ANY_REPLY) ok = o.kind == 0 || o.kind == 1;
  else if (want == ANY_ERROR) ok = o.kind == 0 && o.code > 0;
  else ok = o.kind == 0 && o.code == want;
  if (ok && words && o.kind == 0 && !strstr(o.msg, words)) ok = false;
  char why[RT_MSG_MAX + 64] = "";
  bool serving = still_serving(why, sizeof why);
  if (ok && serving) {
    passed++;
    printf("ok   %s: %s\n", name, got);
  } else {
    failed++;
    printf("FAIL %s: %s", name, got);
    if (!ok && want >= 0) printf(" (wanted error %d%s%s)", want, words ? " with " : "", words ? words : "");
    if (!ok && want == ANY_ERROR) printf(" (wanted an error reply%s%s)", words ? " with " : "", words ? words : "");
    if (!serving) printf("; server no longer serving: %s", why);
    printf("\n");
  }
  fflush(stdout);
}

/* ---- sending ------------------------------------------------------------------------ */

static void raw_case(const char *name, const void *bytes, size_t len, int want, const char *words) {
  void *d = open_raw();
  zmq_send(d, bytes, len, 0);
  judge(name, wait_reply(d, want == NO_REPLY || want == DROPPED ? SILENT_MS : REPLY_MS), want, words);
  zmq_close(d);
}

static void msg_case(const char *name, net_msg *m, int want, const char *words) {
  void *d = open_raw();
  net_wire_send(d, NULL, 0, m, 7);
  judge(name, wait_reply(d, want == NO_REPLY || want == DROPPED ? SILENT_MS : REPLY_MS), want, words);
  zmq_close(d);
}

#define B(s) s, sizeof(s) - 1

static uint64_t rnd(void) { return ((uint64_t)rand() << 33) ^ ((uint64_t)rand() << 11) ^ (uint64_t)rand(); }

/* A node's "input": [], "device": "", and the key "attr" (the caller packs its map). */
static void pack_node_rest(msgpack_packer *pk) {
  msgpack_pack_str_with_body(pk, "input", 5);
  msgpack_pack_array(pk, 0);
  msgpack_pack_str_with_body(pk, "device", 6);
  msgpack_pack_str_with_body(pk, "", 0);
  msgpack_pack_str_with_body(pk, "attr", 4);
}

/* A tensor {"dtype", "shape", "frame"} in a feed list. */
static void pack_feed(msgpack_packer *pk, const char *name, int dtype, int64_t dim, int64_t frame) {
  msgpack_pack_map(pk, 2);
  msgpack_pack_str_with_body(pk, "name", 4);
  msgpack_pack_str_with_body(pk, name, strlen(name));
  msgpack_pack_str_with_body(pk, "tensor", 6);
  msgpack_pack_map(pk, 3);
  msgpack_pack_str_with_body(pk, "dtype", 5);
  msgpack_pack_int64(pk, dtype);
  msgpack_pack_str_with_body(pk, "shape", 5);
  msgpack_pack_array(pk, 1);
  msgpack_pack_int64(pk, dim);
  msgpack_pack_str_with_body(pk, "frame", 5);
  msgpack_pack_int64(pk, frame);
}

/* A PushTensor of a float32 tensor of n elements (a scalar for 0) for a key of task 0,
 * its bytes in payload frame 0 ("frame") or in a shared-memory outbox at path ("shm"). */
static net_msg *push_msg(uint64_t step, uint64_t n, const char *where, const char *path) {
  net_msg *m = net_msg_new("PushTensor");
  net_msg_uint(m, "step", step);
  net_msg_str(m, "key", "/job:worker/replica:0/task:0/device:CPU:0;0000000000000001;"
                        "/job:worker/replica:0/task:0/device:CPU:0;x:0;0:0");
  msgpack_packer *pk = net_msg_field(m, "tensor");
  msgpack_pack_map(pk, 3);
  msgpack_pack_str_with_body(pk, "dtype", 5);
  msgpack_pack_int(pk, 1);   /* float32 */
  msgpack_pack_str_with_body(pk, "shape", 5);
  msgpack_pack_array(pk, n ? 1 : 0);
  if (n) msgpack_pack_uint64(pk, n);
  msgpack_pack_str_with_body(pk, where, strlen(where));
  if (!path) {
    msgpack_pack_uint64(pk, 0);
    return m;
  }
  msgpack_pack_map(pk, 2);
  msgpack_pack_str_with_body(pk, "path", 4);
  msgpack_pack_str_with_body(pk, path, strlen(path));
  msgpack_pack_str_with_body(pk, "off", 3);
  msgpack_pack_uint64(pk, 0);
  return m;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: hostile_client ENDPOINT [MAX_MESSAGE_BYTES]\n");
    return 2;
  }
  if (!strcmp(argv[1], "keygen")) return net_keygen_main(argc - 1, argv + 1);
  endpoint = argv[1];
  uint64_t max_bytes = 0;
  rt_status st;
  if (argc > 2 && net_parse_bytes(argv[2], &max_bytes, &st)) {
    fprintf(stderr, "hostile_client: %s\n", st.msg);
    return 2;
  }
  srand(12345);
  if (!(good = net_client_new(endpoint, NULL, &st))) {
    fprintf(stderr, "hostile_client: %s\n", st.msg);
    return 2;
  }
  char why[RT_MSG_MAX + 64];
  if (!still_serving(why, sizeof why)) {
    fprintf(stderr, "hostile_client: the server does not answer before any hostile message: %s\n", why);
    return 2;
  }

  /* ---- headers ---- */
  raw_case("empty header frame", "", 0, RT_INVALID_ARGUMENT, "empty header frame");
  raw_case("not msgpack", B("GET / HTTP/1.1\r\n\r\n"), RT_INVALID_ARGUMENT, "malformed header");
  raw_case("not a map", B("\x93\x01\x02\x03"), RT_INVALID_ARGUMENT, "expected a map, got array");
  raw_case("truncated header", B("\x83\xa1v\x01\xa1t\xa9GetSt"), RT_INVALID_ARGUMENT,
           "runs past the end");
  raw_case("key not a str", B("\x81\x01\x02"), RT_INVALID_ARGUMENT, "key at offset 1 is uint, expected str");
  raw_case("missing v", B("\x82\xa1t\xa9GetStatus\xa2id\x07"), RT_INVALID_ARGUMENT, "missing field \"v\"");
  raw_case("v of the wrong type", B("\x83\xa1v\xa1\x31\xa1t\xa9GetStatus\xa2id\x07"), RT_INVALID_ARGUMENT,
           "field \"v\" is str, expected uint");
  raw_case("unknown version", B("\x83\xa1v\x63\xa1t\xa9GetStatus\xa2id\x07"), RT_UNIMPLEMENTED,
           "unsupported protocol version 99 (this tfsh speaks version 1)");
  raw_case("id negative", B("\x83\xa1v\x01\xa1t\xa9GetStatus\xa2id\xff"), RT_INVALID_ARGUMENT,
           "field \"id\" is int, expected uint");
  raw_case("t not printable", B("\x83\xa1v\x01\xa1t\xa3\x01\x02\x03\xa2id\x07"), RT_INVALID_ARGUMENT,
           "must be 1 to 31 printable characters");
  raw_case("array claiming 2^32-1 elements", B("\x84\xa1v\x01\xa1t\xa9GetStatus\xa2id\x07\xa1x\xdd\xff\xff\xff\xff"),
           RT_INVALID_ARGUMENT, "claims 4294967295 elements but only 0 bytes are left");
  raw_case("map claiming 2^32-1 entries", B("\xdf\xff\xff\xff\xff\xa1v\x01"), RT_INVALID_ARGUMENT,
           "claims 4294967295 entries");
  raw_case("str claiming 4 GiB", B("\x84\xa1v\x01\xa1t\xa9GetStatus\xa2id\x07\xa1x\xdb\xff\xff\xff\xff"),
           RT_INVALID_ARGUMENT, "str of 4294967295 bytes at offset 22 runs past the end");
  raw_case("msgpack ext type", B("\x84\xa1v\x01\xa1t\xa9GetStatus\xa2id\x07\xa1x\xd4\x01\x01"),
           RT_INVALID_ARGUMENT, "unsupported msgpack type 0xd4 (ext)");
  {
    char deep[200];
    int n = snprintf(deep, sizeof deep, "\x84\xa1v\x01\xa1t\xa9GetStatus\xa2id\x07\xa1x");
    for (int i = 0; i < 100; i++) deep[n++] = (char)0x91;
    deep[n++] = 0;
    raw_case("arrays nested 100 deep", deep, (size_t)n, RT_RESOURCE_EXHAUSTED, "nests deeper than max_depth 16");
  }
  {
    void *d = open_raw();   /* 1025 payload frames: over max_frames */
    zmq_send(d, B("\x83\xa1v\x01\xa1t\xa9GetStatus\xa2id\x07"), ZMQ_SNDMORE);
    for (int i = 0; i < 1025; i++) zmq_send(d, "x", 1, i < 1024 ? ZMQ_SNDMORE : 0);
    judge("1025 payload frames", wait_reply(d, REPLY_MS), RT_RESOURCE_EXHAUSTED,
          "more than 1024 payload frames (max_frames)");
    zmq_close(d);
  }

  /* ---- message types and fields ---- */
  msg_case("unknown message type", net_msg_new("FormatDisk"), RT_UNIMPLEMENTED,
           "unknown message type 'FormatDisk'");
  msg_case("a reply type sent as a request", net_msg_new("error"), RT_UNIMPLEMENTED, "unknown message type");
  {
    net_msg *m = net_msg_new("RunStep");
    net_msg_str(m, "session", "abc");
    msg_case("RunStep: session of the wrong type", m, RT_INVALID_ARGUMENT, "\"session\" is str, expected uint");
  }
  msg_case("RunStep: no fields", net_msg_new("RunStep"), ANY_ERROR, NULL);
  {
    net_msg *m = net_msg_new("RunStep");
    net_msg_uint(m, "session", rnd());
    msgpack_pack_array(net_msg_field(m, "feeds"), 0);
    msgpack_packer *pk = net_msg_field(m, "fetches");
    msgpack_pack_array(pk, 1);
    msgpack_pack_str_with_body(pk, "y:0", 3);
    msgpack_pack_array(net_msg_field(m, "targets"), 0);
    msg_case("RunStep: unknown session", m, ANY_ERROR, "not found");
  }
  {
    net_msg *m = net_msg_new("ExtendSession");
    net_msg_uint(m, "session", rnd());
    msgpack_pack_array(net_msg_field(m, "graph"), 0);
    msg_case("ExtendSession: unknown session", m, ANY_ERROR, "not found");
  }
  {
    net_msg *m = net_msg_new("CloseSession");
    net_msg_uint(m, "session", rnd());
    msg_case("CloseSession: unknown session (closing is idempotent)", m, ANY_REPLY, NULL);
  }
  {
    net_msg *m = net_msg_new("RunGraph");
    net_msg_uint(m, "handle", rnd());
    net_msg_uint(m, "step", rnd());
    msgpack_pack_array(net_msg_field(m, "feeds"), 0);
    msgpack_pack_array(net_msg_field(m, "fetches"), 0);
    msg_case("RunGraph: unknown graph handle", m, RT_ABORTED, "is not registered");
  }
  {
    net_msg *m = net_msg_new("DeregisterGraph");
    net_msg_uint(m, "handle", rnd());
    msg_case("DeregisterGraph: unknown graph handle", m, ANY_REPLY, NULL);
  }
  {
    net_msg *m = net_msg_new("CreateSession");
    msgpack_packer *pk = net_msg_field(m, "graph");
    msgpack_pack_array(pk, 1);
    msgpack_pack_map(pk, 5);
    msgpack_pack_str_with_body(pk, "name", 4);
    msgpack_pack_str_with_body(pk, "x", 1);
    msgpack_pack_str_with_body(pk, "op", 2);
    msgpack_pack_str_with_body(pk, "FormatDisk", 10);
    pack_node_rest(pk);
    msgpack_pack_map(pk, 0);
    msg_case("CreateSession: a node with an unknown op", m, ANY_ERROR, "FormatDisk");
  }
  {
    net_msg *m = net_msg_new("CreateSession");
    msgpack_packer *pk = net_msg_field(m, "graph");
    msgpack_pack_array(pk, 1);
    msgpack_pack_str_with_body(pk, "node", 4);
    msg_case("CreateSession: a graph of strings", m, RT_INVALID_ARGUMENT, NULL);
  }
  {
    net_msg *m = net_msg_new("RegisterGraph");
    net_msg_uint(m, "session", rnd());
    msgpack_packer *pk = net_msg_field(m, "graph");
    msgpack_pack_array(pk, 1);
    msgpack_pack_map(pk, 5);
    msgpack_pack_str_with_body(pk, "name", 4);
    msgpack_pack_str_with_body(pk, "c", 1);
    msgpack_pack_str_with_body(pk, "op", 2);
    msgpack_pack_str_with_body(pk, "Const", 5);
    pack_node_rest(pk);
    msgpack_pack_map(pk, 1);
    msgpack_pack_str_with_body(pk, "value", 5);
    msgpack_pack_array(pk, 2);
    msgpack_pack_int64(pk, 7);
    msgpack_pack_map(pk, 3);   /* a tensor claiming 2^40 elements, 4 data bytes */
    msgpack_pack_str_with_body(pk, "dtype", 5);
    msgpack_pack_int64(pk, 1);
    msgpack_pack_str_with_body(pk, "shape", 5);
    msgpack_pack_array(pk, 2);
    msgpack_pack_int64(pk, 1 << 20);
    msgpack_pack_int64(pk, 1 << 20);
    msgpack_pack_str_with_body(pk, "data", 4);
    msgpack_pack_bin_with_body(pk, "\0\0\0\0", 4);
    msg_case("RegisterGraph: a tensor attr claiming 2^40 elements", m, ANY_ERROR, NULL);
  }
  {
    net_msg *m = net_msg_new("RunStep");
    net_msg_uint(m, "session", rnd());
    msgpack_packer *pk = net_msg_field(m, "feeds");
    msgpack_pack_array(pk, 1);
    pack_feed(pk, "x:0", 1, 2, 5);   /* frame 5 of a message with none */
    msgpack_pack_array(net_msg_field(m, "fetches"), 0);
    msgpack_pack_array(net_msg_field(m, "targets"), 0);
    msg_case("RunStep: unknown session, a feed naming a frame that is not there", m, ANY_ERROR, NULL);
  }
  {
    net_msg *m = net_msg_new("RunGraph");
    net_msg_uint(m, "handle", rnd());
    net_msg_uint(m, "step", rnd());
    msgpack_packer *pk = net_msg_field(m, "feeds");
    msgpack_pack_array(pk, 1);
    pack_feed(pk, "x:0", 1, 1000000, 0);   /* 4 MB claimed, 8 bytes sent */
    msgpack_pack_array(net_msg_field(m, "fetches"), 0);
    net_msg_frame(m, "\0\0\x80?\0\0\0@", 8, NULL, NULL);
    msg_case("RunGraph: a feed whose frame is smaller than its shape", m, ANY_ERROR, NULL);
  }
  {
    uint64_t step = rnd();
    net_msg *m = net_msg_new("AbortStep");
    net_msg_uint(m, "step", step);
    net_msg_int(m, "code", 424242);
    net_msg_str(m, "msg", "bogus");
    msg_case("AbortStep: unknown step, bogus code", m, ANY_REPLY, NULL);
  }
  {
    /* PushTensor for a step nobody runs: the worker keeps the tensor for a while (a
     * step's tensor may legitimately arrive before its RunGraph) and answers nothing; a
     * push it cannot read is answered with an error (and aborts its step there). */
    static float one = 1.0f;
    net_msg *m = push_msg(rnd(), 0, "frame", NULL);
    net_msg_frame(m, &one, sizeof one, NULL, NULL);
    msg_case("PushTensor: a step not run here (kept, no reply)", m, NO_REPLY, NULL);
    m = net_msg_new("PushTensor");
    net_msg_uint(m, "step", rnd());
    net_msg_str(m, "key", "k");
    msg_case("PushTensor: no tensor", m, RT_INVALID_ARGUMENT, "missing field \"tensor\"");
    m = push_msg(rnd(), 1000, "frame", NULL);
    net_msg_frame(m, &one, sizeof one, NULL, NULL);
    msg_case("PushTensor: a frame smaller than its shape", m, ANY_ERROR, NULL);
    /* Shared memory: only a tfsh outbox (a memfd) of a process may be named. */
    char mine[64];   /* a descriptor that exists, of a process of ours, but no outbox */
    snprintf(mine, sizeof mine, "/proc/%d/fd/2", (int)getpid());
    const char *const paths[][2] = {
      {"/etc/passwd", "is not an outbox path"},
      {"/proc/self/fd/0", "is not an outbox path"},
      {mine, "cannot map the outbox"},
      {"/proc/1/fd/99999", "is gone"},
    };
    for (int i = 0; i < 4; i++) {
      char name[96];
      snprintf(name, sizeof name, "PushTensor: shared memory at %s", paths[i][0]);
      msg_case(name, push_msg(rnd(), 4, "shm", paths[i][0]), ANY_ERROR, paths[i][1]);
    }
  }

  /* ---- sizes (the server's limit given as MAX_MESSAGE_BYTES) ---- */
  if (max_bytes) {
    size_t over = (size_t)max_bytes + max_bytes / 2;
    char *big = calloc(1, 3 * (size_t)max_bytes);
    net_msg *m = net_msg_new("GetStatus");
    net_msg_frame(m, big, over, NULL, NULL);
    char words[128];
    snprintf(words, sizeof words, "payload frame 0 of %zu bytes exceeds max_frame %" PRIu64, over, max_bytes);
    msg_case("a payload frame over the limit", m, RT_RESOURCE_EXHAUSTED, words);
    m = net_msg_new("GetStatus");
    net_msg_bin(m, "pad", big, over);
    snprintf(words, sizeof words, "exceeds max_header %" PRIu64, max_bytes);
    msg_case("a header over the limit", m, RT_RESOURCE_EXHAUSTED, words);
    m = net_msg_new("GetStatus");   /* over twice the limit: ZeroMQ drops the connection */
    net_msg_frame(m, big, 3 * (size_t)max_bytes, NULL, NULL);
    msg_case("a payload frame over twice the limit (connection dropped)", m, DROPPED, NULL);
    free(big);
  }

  net_client_free(good);
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
