/* The runtime's messages on the wire (net/PROTOCOL.md, "Runtime messages"): the test
 * values of that page encoded and decoded, and hostile values refused with their words. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "net/wire.h"
#include "ops/ops.h"
#include "runtime/codec.h"
#include "runtime/trace.h"

/* Seal an outgoing message and parse it back as a receiver would (header only). */
static net_in *roundtrip(net_msg *m, rt_status *st) {
  const void *p;
  size_t len;
  net_msg_seal(m, 7, &p, &len);
  net_limits lim;
  net_limits_default(&lim);
  return net_in_parse(p, len, &lim, NULL, st);
}

static void test_node_encoding(void **state) {
  rt_status st = {0};
  rt_graph *g = rt_graph_new();
  rt_node *a = rt_node_new("a", "Const");
  rt_tensor *v = rt_tensor_scalar_f32(1.5f);
  rt_node_set_tensor(a, "value", v);
  rt_node_set_type(a, "dtype", RT_FLOAT);
  rt_tensor_unref(v);
  assert_int_equal(rt_graph_add(g, a, &st), RT_OK);
  rt_node *b = rt_node_new("b", "Const");
  v = rt_tensor_scalar_f32(2.5f);
  rt_node_set_tensor(b, "value", v);
  rt_node_set_type(b, "dtype", RT_FLOAT);
  rt_tensor_unref(v);
  assert_int_equal(rt_graph_add(g, b, &st), RT_OK);
  rt_node *c = rt_node_new("c", "Add");
  rt_node_add_input(c, "a");
  rt_node_add_input(c, "b");
  assert_int_equal(rt_graph_add(g, c, &st), RT_OK);

  net_msg *m = net_msg_new("CreateSession");
  rt_pack_nodes(NULL, net_msg_field(m, "graph"), g, 0);
  net_in *in = roundtrip(m, &st);
  assert_non_null(in);
  rt_graph *h = rt_graph_new();
  assert_int_equal(rt_unpack_nodes(NULL, net_get(in, "graph"), "graph", h, &st), RT_OK);
  assert_int_equal(h->n_nodes, 3);
  rt_node *hc = rt_graph_find(h, "c");
  assert_string_equal(hc->inputs[1], "b");
  assert_int_equal(rt_node_type(hc, "T", RT_INVALID), RT_FLOAT);   /* the test value's attr [5, 1] */
  assert_true(*(float *)rt_tensor_data(rt_node_attr(rt_graph_find(h, "b"), "value")->tensor) == 2.5f);
  net_in_free(in);
  net_msg_free(m);
  rt_graph_free(h);
  rt_graph_free(g);
}

static void test_tensor_frames(void **state) {
  rt_status st = {0};
  float two[2] = {1.0f, 2.0f};
  int64_t d = 2;
  rt_shape s = rt_shape_make(1, &d);
  rt_tensor *t = rt_tensor_new(RT_FLOAT, &s);
  memcpy(rt_tensor_data(t), two, sizeof two);
  net_msg *m = net_msg_new("RunStep");
  net_msg_uint(m, "session", 42);
  rt_pack_tensor_msg(m, net_msg_field(m, "tensor"), t);
  assert_int_equal(net_msg_nframes(m), 1);
  net_in *in = roundtrip(m, &st);
  assert_non_null(in);
  const msgpack_object *o = net_get(in, "tensor");
  uint64_t frame = 99;
  assert_int_equal(net_obj_uint(net_obj_key(o, "frame"), "frame", &frame, &st), RT_OK);
  assert_int_equal(frame, 0);
  int64_t dt;
  assert_int_equal(net_obj_int(net_obj_key(o, "dtype"), "dtype", &dt, &st), RT_OK);
  assert_int_equal(dt, 1);
  /* the frame itself is the raw little-endian floats: 00 00 80 3f 00 00 00 40 */
  static const unsigned char want[8] = {0, 0, 0x80, 0x3f, 0, 0, 0, 0x40};
  assert_memory_equal(rt_tensor_data(t), want, 8);
  /* no frames attached: decoding refuses the frame index */
  rt_tensor *x = NULL;
  assert_int_equal(rt_unpack_tensor_msg(in, o, "RunStep.feeds.tensor", &x, &st), RT_INVALID_ARGUMENT);
  assert_string_equal(st.msg, "RunStep.feeds.tensor.frame: frame 0 of a message with 0");
  net_in_free(in);
  net_msg_free(m);
  rt_tensor_unref(t);
}

static void test_hostile_values(void **state) {
  rt_status st = {0};
  /* unknown dtype */
  net_msg *m = net_msg_new("RunStep");
  msgpack_packer *pk = net_msg_field(m, "tensor");
  msgpack_pack_map(pk, 3);
  msgpack_pack_str(pk, 5);
  msgpack_pack_str_body(pk, "dtype", 5);
  msgpack_pack_int(pk, 99);
  msgpack_pack_str(pk, 5);
  msgpack_pack_str_body(pk, "shape", 5);
  msgpack_pack_array(pk, 1);
  msgpack_pack_int(pk, 2);
  msgpack_pack_str(pk, 4);
  msgpack_pack_str_body(pk, "data", 4);
  msgpack_pack_bin(pk, 8);
  msgpack_pack_bin_body(pk, "\0\0\0\0\0\0\0\0", 8);
  net_in *in = roundtrip(m, &st);
  rt_tensor *x = NULL;
  assert_int_equal(rt_unpack_tensor_inline(net_get(in, "tensor"), "t", &x, &st), RT_INVALID_ARGUMENT);
  assert_string_equal(st.msg, "t.dtype: unknown dtype 99");
  net_in_free(in);
  net_msg_free(m);

  /* data size that does not match the shape */
  m = net_msg_new("RunStep");
  pk = net_msg_field(m, "tensor");
  msgpack_pack_map(pk, 3);
  msgpack_pack_str(pk, 5);
  msgpack_pack_str_body(pk, "dtype", 5);
  msgpack_pack_int(pk, 1);
  msgpack_pack_str(pk, 5);
  msgpack_pack_str_body(pk, "shape", 5);
  msgpack_pack_array(pk, 1);
  msgpack_pack_int(pk, 3);
  msgpack_pack_str(pk, 4);
  msgpack_pack_str_body(pk, "data", 4);
  msgpack_pack_bin(pk, 8);
  msgpack_pack_bin_body(pk, "\0\0\0\0\0\0\0\0", 8);
  in = roundtrip(m, &st);
  assert_int_equal(rt_unpack_tensor_inline(net_get(in, "tensor"), "t", &x, &st), RT_INVALID_ARGUMENT);
  assert_string_equal(st.msg, "t.data: 8 bytes for a float32 tensor of 12 bytes");
  net_in_free(in);
  net_msg_free(m);

  /* a node naming an op that does not exist */
  m = net_msg_new("ExtendSession");
  pk = net_msg_field(m, "graph");
  msgpack_pack_array(pk, 1);
  msgpack_pack_map(pk, 5);
  const char *kv[] = {"name", "x", "op", "Nope", "device", ""};
  for (int i = 0; i < 6; i++) {
    msgpack_pack_str(pk, strlen(kv[i]));
    msgpack_pack_str_body(pk, kv[i], strlen(kv[i]));
  }
  msgpack_pack_str(pk, 5);
  msgpack_pack_str_body(pk, "input", 5);
  msgpack_pack_array(pk, 0);
  msgpack_pack_str(pk, 4);
  msgpack_pack_str_body(pk, "attr", 4);
  msgpack_pack_map(pk, 0);
  in = roundtrip(m, &st);
  rt_graph *g = rt_graph_new();
  assert_int_equal(rt_unpack_nodes(NULL, net_get(in, "graph"), "graph", g, &st), RT_NOT_FOUND);
  assert_string_equal(st.msg, "node 'x': Op type not registered 'Nope'");
  /* the wrong kind where a list of nodes belongs */
  assert_int_equal(rt_unpack_nodes(NULL, net_in_header(in), "graph", g, &st), RT_INVALID_ARGUMENT);
  assert_string_equal(st.msg, "graph is map, expected array");
  rt_graph_free(g);
  net_in_free(in);
  net_msg_free(m);
}

static int setup(void **state) {
  op_register_all();
  return 0;
}

/* Busy (PROTOCOL.md, Views): the test value round trips; bad entries name the field. */
static void test_busy(void **state) {
  rt_status st = {0};
  rt_busy b = {.device = "/job:worker/replica:0/task:0/device:CPU:0", .us = 412, .ops = 4};
  net_msg *m = net_msg_new("RunGraphOk");
  msgpack_packer *pk = net_msg_field(m, "busy");
  msgpack_pack_array(pk, 3);
  for (int i = 0; i < 3; i++) rt_pack_busy(pk, &b);
  net_in *in = roundtrip(m, &st);
  rt_busy out[2];
  int n = 0;
  assert_int_equal(rt_unpack_busy(net_get(in, "busy"), "RunGraph.busy", out, &n, 2, &st), RT_OK);
  assert_int_equal(n, 2);   /* at most max; the rest dropped */
  assert_string_equal(out[1].device, "/job:worker/replica:0/task:0/device:CPU:0");
  assert_int_equal(out[1].us, 412);
  assert_int_equal(out[1].ops, 4);
  net_in_free(in);
  net_msg_free(m);

  m = net_msg_new("RunGraphOk");
  pk = net_msg_field(m, "busy");
  msgpack_pack_array(pk, 2);
  rt_pack_busy(pk, &b);
  msgpack_pack_int(pk, 7);
  in = roundtrip(m, &st);
  n = 0;
  assert_int_equal(rt_unpack_busy(net_get(in, "busy"), "RunGraph.busy", out, &n, 2, &st), RT_INVALID_ARGUMENT);
  assert_string_equal(st.msg, "RunGraph.busy[1]: expected a map, got uint");
  net_in_free(in);
  net_msg_free(m);

  m = net_msg_new("RunGraphOk");
  pk = net_msg_field(m, "busy");
  msgpack_pack_array(pk, 1);
  msgpack_pack_map(pk, 1);
  msgpack_pack_str(pk, 2);
  msgpack_pack_str_body(pk, "us", 2);
  msgpack_pack_str(pk, 1);
  msgpack_pack_str_body(pk, "x", 1);
  in = roundtrip(m, &st);
  n = 0;
  assert_int_equal(rt_unpack_busy(net_get(in, "busy"), "RunGraph.busy", out, &n, 2, &st), RT_INVALID_ARGUMENT);
  assert_string_equal(st.msg, "RunGraph.busy.us is str, expected int");
  net_in_free(in);
  net_msg_free(m);
  (void)state;
}

/* A resource handle: four NUL-separated parts in one string element; it crosses the wire
 * as a string does, and anything but four parts is not a handle. */
static void test_resource_handle(void **state) {
  (void)state;
  rt_status st = {0};
  rt_shape two = rt_shape_make(1, (int64_t[]){2});
  rt_tensor *h = rt_tensor_new(RT_RESOURCE, &two);
  assert_non_null(h);
  assert_string_equal(rt_dtype_name(RT_RESOURCE), "resource");
  rt_handle in = {"/job:ps/replica:0/task:0/device:CPU:0", "", "w", "Var"}, out;
  assert_false(rt_handle_get(h, 0, &out));   /* never set */
  assert_int_equal(rt_handle_set(h, 0, &in), RT_OK);
  assert_int_equal(rt_handle_set(h, 1, &(rt_handle){"", "c", "q", NULL}), RT_OK);
  net_msg *m = net_msg_new("RunStep");
  rt_pack_tensor_inline(net_msg_field(m, "tensor"), h);
  net_in *nin = roundtrip(m, &st);
  rt_tensor *x = NULL;
  assert_int_equal(rt_unpack_tensor_inline(net_get(nin, "tensor"), "t", &x, &st), RT_OK);
  assert_int_equal(x->dtype, RT_RESOURCE);
  assert_true(rt_handle_get(x, 0, &out));
  assert_string_equal(out.device, in.device);
  assert_string_equal(out.container, "");
  assert_string_equal(out.name, "w");
  assert_string_equal(out.kind, "Var");
  assert_true(rt_handle_get(x, 1, &out));
  assert_string_equal(out.container, "c");
  assert_string_equal(out.kind, "");
  assert_false(rt_handle_get(x, 2, &out));   /* out of range */
  rt_tensor *c = rt_tensor_copy(x);
  assert_true(rt_handle_get(c, 0, &out));
  assert_string_equal(out.name, "w");
  rt_tensor_unref(c);
  net_in_free(nin);
  net_msg_free(m);
  rt_tensor_unref(x);
  /* three parts, five parts, and a string tensor are not handles */
  assert_int_equal(rt_tensor_set_str(h, 0, "a\0b\0c", 5), RT_OK);
  assert_false(rt_handle_get(h, 0, &out));
  assert_int_equal(rt_tensor_set_str(h, 0, "a\0b\0c\0d\0e", 9), RT_OK);
  assert_false(rt_handle_get(h, 0, &out));
  rt_tensor *s = rt_tensor_scalar_str("x");
  assert_false(rt_handle_get(s, 0, &out));
  rt_tensor_unref(s);
  rt_tensor_unref(h);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_node_encoding),
    cmocka_unit_test(test_tensor_frames),
    cmocka_unit_test(test_hostile_values),
    cmocka_unit_test(test_resource_handle),
    cmocka_unit_test(test_busy),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
