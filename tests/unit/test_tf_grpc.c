/* TF's gRPC messages as tfsh encodes them (runtime/proto/worker.proto) against the bytes
 * real TensorFlow 2.21 servers sent (tests/data/tf_grpc, recorded by
 * scripts/tf_oracle/record_grpc.py): each GetStatusResponse decodes to the device TF
 * reported and re-encodes byte for byte; the request is empty on the wire. And the check
 * that refuses, before a step runs, fetches whose static sizes exceed one gRPC message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ops/ops.h"
#include "runtime/graph.h"
#include "runtime/graphdef.h"
#include "runtime/proto/worker.pb-c.h"

static size_t read_hex(const char *name, uint8_t *buf, size_t cap) {
  const char *src = getenv("TFSH_SRC");
  char path[1024];
  snprintf(path, sizeof path, "%s/tests/data/tf_grpc/%s", src ? src : ".", name);
  FILE *f = fopen(path, "r");
  if (!f) fail_msg("cannot open %s (set TFSH_SRC to the source tree)", path);
  size_t n = 0;
  unsigned v;
  while (n < cap && fscanf(f, "%2x", &v) == 1) buf[n++] = (uint8_t)v;
  fclose(f);
  return n;
}

static void check_status(const char *file, const char *device) {
  uint8_t tf[512], ours[512];
  size_t n = read_hex(file, tf, sizeof tf);
  assert_true(n > 20);
  Tensorflow__GetStatusResponse *m = tensorflow__get_status_response__unpack(NULL, n, tf);
  assert_non_null(m);
  assert_int_equal(m->n_device_attributes, 1);
  const Tensorflow__DeviceAttributes *d = m->device_attributes[0];
  assert_string_equal(d->name, device);
  assert_string_equal(d->device_type, "CPU");
  assert_int_equal(d->memory_limit, 268435456);   /* TF's 256 MiB placeholder for the CPU */
  assert_non_null(d->locality);                    /* present and empty: 2a 00 */
  assert_int_equal(d->xla_global_id, -1);
  assert_true(d->incarnation != 0);
  assert_int_equal(tensorflow__get_status_response__get_packed_size(m), n);
  assert_int_equal(tensorflow__get_status_response__pack(m, ours), n);
  assert_memory_equal(ours, tf, n);
  tensorflow__get_status_response__free_unpacked(m, NULL);
}

static void test_get_status_replies(void **state) {
  (void)state;
  check_status("get_status_ps_0.hex", "/job:ps/replica:0/task:0/device:CPU:0");
  check_status("get_status_worker_0.hex", "/job:worker/replica:0/task:0/device:CPU:0");
  check_status("get_status_worker_1.hex", "/job:worker/replica:0/task:1/device:CPU:0");
}

static void test_get_status_request(void **state) {
  (void)state;
  Tensorflow__GetStatusRequest r = TENSORFLOW__GET_STATUS_REQUEST__INIT;
  assert_int_equal(tensorflow__get_status_request__get_packed_size(&r), 0);
}

static void test_not_a_reply(void **state) {
  (void)state;
  static const uint8_t junk[] = {0x0a, 0xff, 0xff};   /* what fake_tf_worker.py's garbage mode sends */
  assert_null(tensorflow__get_status_response__unpack(NULL, sizeof junk, junk));
}

static void placeholder(rt_graph *g, const char *name, rt_dtype t, int64_t n) {
  rt_node *p = rt_node_new(name, "Placeholder");
  rt_node_set_type(p, "dtype", t);
  rt_shape sh = rt_shape_make(1, &n);
  rt_node_set_shape(p, "shape", &sh);
  rt_status st = {0};
  if (rt_graph_add(g, p, &st)) fail_msg("%s", st.msg);
}

static void test_fetches_fit(void **state) {
  (void)state;
  rt_graph *g = rt_graph_new();
  placeholder(g, "big", RT_FLOAT, (int64_t)1 << 29);        /* 2 GiB: one byte over */
  placeholder(g, "half", RT_FLOAT, (int64_t)1 << 28);
  placeholder(g, "open", RT_FLOAT, -1);                     /* size unknown: counts 0 */
  placeholder(g, "text", RT_STRING, (int64_t)1 << 30);      /* strings: unknown too */
  rt_status st = {0};
  const char *ok[] = {"half:0", "open:0", "text:0", "nowhere:0", "bad name:x"};
  assert_int_equal(rt_grpc_fetches_fit(g, ok, 5, &st), RT_OK);
  const char *two[] = {"half:0", "half:0"};
  assert_int_equal(rt_grpc_fetches_fit(g, two, 2, &st), RT_RESOURCE_EXHAUSTED);
  assert_string_equal(st.msg, "RunStep's fetches hold 2147483648 bytes, more than the 2147483647 one gRPC "
                              "message carries (TensorFlow's limit too): fetch less at a time (a slice, or "
                              "over several steps)");
  const char *big[] = {"big:0"};
  st = (rt_status){0};
  assert_int_equal(rt_grpc_fetches_fit(g, big, 1, &st), RT_RESOURCE_EXHAUSTED);
  rt_graph_free(g);
}

int main(void) {
  op_register_all();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fetches_fit),
      cmocka_unit_test(test_get_status_replies),
      cmocka_unit_test(test_get_status_request),
      cmocka_unit_test(test_not_a_reply),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
