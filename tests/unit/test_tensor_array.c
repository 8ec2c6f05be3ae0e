/* TensorArrays (ops/tensor_array.c) are per-step resources: the executor drops the step's
 * container when its run ends, after a success and after an error alike, so the device
 * holds no resource between steps and nothing leaks (run under valgrind by
 * scripts/valgrind-unit.sh). A write keeps the value without copying it, a read hands it
 * back. Expected values worked out by hand; messages are TF's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ops/ops.h"
#include "runtime/device.h"
#include "runtime/exec.h"
#include "runtime/graph.h"
#include "runtime/op.h"
#include "tests/unit/graph_build.h"

/* ta = TensorArray(3); w = ta.write(0, [1.5, -2]); r = w.read(0); w2 = w.write(0, v) */
static rt_graph *graph(void) {
  rt_graph *g = rt_graph_new();
  graph_const(g, "size", rt_tensor_scalar_i32(3));
  graph_const(g, "i0", rt_tensor_scalar_i32(0));
  rt_shape s2 = rt_shape_make(1, (int64_t[]){2});
  rt_tensor *v = rt_tensor_new(RT_FLOAT, &s2);
  ((float *)rt_tensor_data(v))[0] = 1.5f;
  ((float *)rt_tensor_data(v))[1] = -2.0f;
  graph_const(g, "v", v);
  graph_op(g, "ta", "TensorArrayV3", 1, (const char *[]){"size"}, "dtype", RT_FLOAT);
  graph_op(g, "w", "TensorArrayWriteV3", 4, (const char *[]){"ta", "i0", "v", "ta:1"}, "T", RT_FLOAT);
  graph_op(g, "r", "TensorArrayReadV3", 3, (const char *[]){"ta", "i0", "w"}, "dtype", RT_FLOAT);
  graph_op(g, "n", "TensorArraySizeV3", 2, (const char *[]){"ta", "w"}, NULL, RT_FLOAT);
  graph_op(g, "w2", "TensorArrayWriteV3", 4, (const char *[]){"ta", "i0", "v", "w"}, "T", RT_FLOAT);
  return g;
}

static int run(rt_exec *x, const char *fetch, rt_tensor **out, rt_status *st) {
  rt_step step = {.id = 42};
  const char *f[] = {fetch};
  rt_run_args ra = {.n_fetches = 1, .fetch_names = f, .fetched = out};
  return rt_exec_run(x, &step, &ra, st);
}

static void test_step_container(void **state) {
  rt_graph *g = graph();
  rt_status st = {0};
  rt_device *dev = rt_device_new("/job:localhost/replica:0/task:0/device:CPU:0", RT_DEV_CPU, 7);
  rt_exec *x = NULL;
  assert_int_equal(rt_exec_new(g, dev, &x, &st), RT_OK);
  for (int k = 0; k < 2; k++) {   /* a new array each step */
    rt_tensor *t = NULL;
    assert_int_equal(run(x, "r", &t, &st), RT_OK);
    assert_int_equal(t->shape.ndims, 1);
    assert_true(((float *)rt_tensor_data(t))[0] == 1.5f && ((float *)rt_tensor_data(t))[1] == -2.0f);
    rt_tensor_unref(t);
    assert_null(dev->resources);
  }
  rt_tensor *t = NULL;
  assert_int_equal(run(x, "n", &t, &st), RT_OK);
  assert_int_equal(*(int32_t *)rt_tensor_data(t), 3);
  rt_tensor_unref(t);
  assert_null(dev->resources);
  t = NULL;
  assert_int_equal(run(x, "w2", &t, &st), RT_INVALID_ARGUMENT);
  assert_non_null(strstr(st.msg, ": Could not write to TensorArray index 0 because it has already been written to."));
  assert_null(t);
  assert_null(dev->resources);   /* dropped after the error too */
  rt_exec_free(x);
  rt_device_free(dev);
  rt_graph_free(g);
}

/* Inputs the kernels refuse with TF's words (the shape functions let them through). */
static void test_bad_inputs(void **state) {
  rt_graph *g = graph();
  rt_shape s2 = rt_shape_make(1, (int64_t[]){2});
  graph_const(g, "iv", rt_tensor_new(RT_INT32, &s2));
  graph_op(g, "wv", "TensorArrayWriteV3", 4, (const char *[]){"ta", "iv", "v", "ta:1"}, "T", RT_FLOAT);
  rt_node *rd = rt_node_new("ri", "TensorArrayReadV3");
  rt_node_add_input(rd, "ta");
  rt_node_add_input(rd, "i0");
  rt_node_add_input(rd, "w");
  rt_node_set_type(rd, "dtype", RT_INT32);
  graph_add(g, rd);
  rt_status st = {0};
  rt_device *dev = rt_device_new("/job:localhost/replica:0/task:0/device:CPU:0", RT_DEV_CPU, 7);
  rt_exec *x = NULL;
  assert_int_equal(rt_exec_new(g, dev, &x, &st), RT_OK);
  rt_tensor *t = NULL;
  assert_int_equal(run(x, "wv", &t, &st), RT_INVALID_ARGUMENT);
  assert_non_null(strstr(st.msg, "TensorArray index must be scalar, but had shape: [2]"));
  st = (rt_status){0};
  assert_int_equal(run(x, "ri", &t, &st), RT_INVALID_ARGUMENT);
  assert_non_null(strstr(st.msg, "TensorArray dtype is float but Op requested dtype int32."));
  assert_null(dev->resources);
  rt_exec_free(x);
  rt_device_free(dev);
  rt_graph_free(g);
}

int main(void) {
  op_register_all();
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_step_container),
    cmocka_unit_test(test_bad_inputs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
