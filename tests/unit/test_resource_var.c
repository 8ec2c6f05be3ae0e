/* Resource variables: the kernels called directly on two devices (a handle names its
 * device; a kernel on another device refuses it, naming both), the words of a read before
 * initialization, scatter / gather / destroy, a ResourceApply update; and the placer's rule
 * (an op that takes a handle goes where the handle was made, its own request ignored). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "ops_test.h"
#include "runtime/placer.h"

#define PS "/job:ps/replica:0/task:0/device:CPU:0"
#define W0 "/job:worker/replica:0/task:0/device:CPU:0"

static rt_device *ps, *w0;

static int setup(void **state) {
  op_register_all();
  ps = rt_device_new(PS, RT_DEV_CPU, 1);
  w0 = rt_device_new(W0, RT_DEV_CPU, 2);
  return 0;
}

static int teardown(void **state) {
  rt_device_free(ps);
  rt_device_free(w0);
  return 0;
}

/* Run op (attrs dtype float, Tindices int32) on dev; out[0] gets output 0 if any. */
static int kernel(rt_device *dev, const char *op, int nin, rt_tensor **in, rt_tensor **out,
                  rt_status *st) {
  rt_node *n = rt_node_new("n", op);
  rt_node_set_type(n, "dtype", RT_FLOAT);
  rt_node_set_type(n, "T", RT_FLOAT);
  rt_node_set_type(n, "Tindices", RT_INT32);
  rt_node_set_string(n, "shared_name", "v");
  for (int i = 0; i < nin; i++) rt_node_add_input(n, i ? "x" : "v");
  memset(st, 0, sizeof *st);
  rt_tensor *outs[2] = {0};
  rt_kernel_ctx c = {.node = n, .n_inputs = nin, .inputs = in, .n_outputs = 1, .outputs = outs,
                     .device = dev, .st = st};
  int rc = rt_op_find(op)->def->kernel[RT_DEV_CPU](&c);
  rt_node_free(n);
  if (out) *out = outs[0];
  else rt_tensor_unref(outs[0]);
  return rc;
}

static rt_tensor *handle_on(rt_device *dev) {
  rt_status st;
  rt_tensor *h = NULL;
  assert_int_equal(kernel(dev, "VarHandleOp", 0, NULL, &h, &st), RT_OK);
  assert_int_equal(h->dtype, RT_RESOURCE);
  return h;
}

static void expect_values(rt_tensor *t, int n, const double *v) {
  assert_non_null(t);
  assert_int_equal(rt_tensor_numel(t), n);
  for (int i = 0; i < n; i++) assert_true(rt_tensor_get_f64(t, i) == v[i]);
  rt_tensor_unref(t);
}

static void test_handle_names_its_device(void **state) {
  rt_tensor *h = handle_on(ps);
  rt_handle hd;
  assert_true(rt_handle_get(h, 0, &hd));
  assert_string_equal(hd.device, PS);
  assert_string_equal(hd.container, "");
  assert_string_equal(hd.name, "v");
  assert_string_equal(hd.kind, "Var");
  rt_tensor_unref(h);
}

static void test_read_assign_update(void **state) {
  rt_status st;
  rt_tensor *h = handle_on(ps), *out = NULL;
  rt_tensor *in[3] = {h};
  assert_int_equal(kernel(ps, "VarIsInitializedOp", 1, in, &out, &st), RT_OK);
  expect_values(out, 1, V(0));
  assert_int_equal(kernel(ps, "ReadVariableOp", 1, in, NULL, &st), RT_FAILED_PRECONDITION);
  assert_non_null(strstr(st.msg, "Could not find variable v. This could mean that the variable has been "
                                  "deleted. In TF1, it can also mean the variable is uninitialized. Debug "
                                  "info: container=localhost, status error message=Container localhost "
                                  "does not exist. (Could not find resource: localhost/v)"));
  in[1] = T(RT_FLOAT, 2, D(2, 2), V(1, 2, 3, 4));
  assert_int_equal(kernel(ps, "AssignVariableOp", 2, in, NULL, &st), RT_OK);
  rt_tensor_unref(in[1]);
  in[1] = T(RT_FLOAT, 2, D(2, 2), V(10, 10, 10, 10));
  assert_int_equal(kernel(ps, "AssignAddVariableOp", 2, in, NULL, &st), RT_OK);
  rt_tensor_unref(in[1]);
  in[1] = T(RT_INT32, 1, D(1), V(1));
  in[2] = T(RT_FLOAT, 2, D(1, 2), V(100, 200));
  assert_int_equal(kernel(ps, "ResourceScatterAdd", 3, in, NULL, &st), RT_OK);
  rt_tensor_unref(in[2]);
  rt_tensor_unref(in[1]);
  in[1] = T(RT_INT32, 1, D(3), V(1, 0, 1));
  assert_int_equal(kernel(ps, "ResourceGather", 2, in, &out, &st), RT_OK);
  expect_values(out, 6, V(113, 214, 11, 12, 113, 214));
  rt_tensor_unref(in[1]);
  in[1] = T(RT_FLOAT, 0, NULL, V(0.5));
  in[2] = T(RT_FLOAT, 2, D(2, 2), V(2, 4, 6, 8));
  assert_int_equal(kernel(ps, "ResourceApplyGradientDescent", 3, in, NULL, &st), RT_OK);
  rt_tensor_unref(in[1]);
  rt_tensor_unref(in[2]);
  assert_int_equal(kernel(ps, "ReadVariableOp", 1, in, &out, &st), RT_OK);
  expect_values(out, 4, V(10, 10, 110, 210));
  assert_int_equal(kernel(ps, "DestroyResourceOp", 1, in, NULL, &st), RT_OK);
  in[1] = T(RT_FLOAT, 0, NULL, V(1));
  assert_int_equal(kernel(ps, "AssignSubVariableOp", 2, in, NULL, &st), RT_NOT_FOUND);
  rt_tensor_unref(in[1]);
  assert_non_null(strstr(st.msg, "Container localhost does not exist. (Could not find resource: localhost/v)"));
  rt_tensor_unref(h);
}

/* ResourceSparseApplyAdagrad updates the rows indices name, in var and its accumulator. */
static void test_sparse_apply(void **state) {
  rt_status st;
  rt_tensor *h = handle_on(ps);   /* "v" */
  rt_node *n = rt_node_new("acc", "VarHandleOp");
  rt_node_set_type(n, "dtype", RT_FLOAT);
  rt_tensor *acc = NULL, *outs[1] = {0};
  rt_kernel_ctx c = {.node = n, .n_inputs = 0, .n_outputs = 1, .outputs = outs, .device = ps, .st = &st};
  memset(&st, 0, sizeof st);
  assert_int_equal(rt_op_find("VarHandleOp")->def->kernel[RT_DEV_CPU](&c), RT_OK);
  rt_node_free(n);
  acc = outs[0];
  rt_tensor *in[5] = {h, T(RT_FLOAT, 2, D(2, 2), V(1, 2, 3, 4))};
  assert_int_equal(kernel(ps, "AssignVariableOp", 2, in, NULL, &st), RT_OK);
  rt_tensor_unref(in[1]);
  in[0] = acc;
  in[1] = T(RT_FLOAT, 2, D(2, 2), V(1, 1, 1, 1));
  assert_int_equal(kernel(ps, "AssignVariableOp", 2, in, NULL, &st), RT_OK);
  rt_tensor_unref(in[1]);
  in[0] = h;
  in[1] = acc;
  in[2] = T(RT_FLOAT, 0, NULL, V(0.5));
  in[3] = T(RT_FLOAT, 2, D(1, 2), V(3, 4));
  in[4] = T(RT_INT32, 1, D(1), V(1));
  assert_int_equal(kernel(ps, "ResourceSparseApplyAdagrad", 5, in, NULL, &st), RT_OK);
  rt_tensor_unref(in[4]);
  in[4] = T(RT_INT32, 1, D(1), V(2));
  assert_int_equal(kernel(ps, "ResourceSparseApplyAdagrad", 5, in, NULL, &st), RT_INVALID_ARGUMENT);
  assert_non_null(strstr(st.msg, "Index 2 at offset 0 in indices is out of range"));
  for (int i = 2; i < 5; i++) rt_tensor_unref(in[i]);
  rt_tensor *out = NULL;
  assert_int_equal(kernel(ps, "ReadVariableOp", 1, &h, &out, &st), RT_OK);
  const double want[] = {1, 2, 3 - 0.5 * 3 / sqrt(10), 4 - 0.5 * 4 / sqrt(17)};
  for (int i = 0; i < 4; i++) assert_true(fabs(rt_tensor_get_f64(out, i) - want[i]) < 1e-6);
  rt_tensor_unref(out);
  assert_int_equal(kernel(ps, "ReadVariableOp", 1, &acc, &out, &st), RT_OK);
  expect_values(out, 4, V(1, 1, 10, 17));
  rt_tensor_unref(h);
  rt_tensor_unref(acc);
}

/* A kernel on the worker given the ps's handle refuses it, naming both devices and the fix. */
static void test_other_device(void **state) {
  rt_status st;
  rt_tensor *h = handle_on(ps);
  rt_tensor *in[1] = {h};
  assert_int_equal(kernel(w0, "ReadVariableOp", 1, in, NULL, &st), RT_INVALID_ARGUMENT);
  assert_non_null(strstr(st.msg, "ReadVariableOp runs on " W0 " but its resource 'v' lives on " PS
                                  ": an op that uses a resource must run on the resource's device; "
                                  "colocate it with the op that made the handle (tf.colocate_with) or "
                                  "drop its explicit device"));
  rt_tensor_unref(h);
}

static void add(rt_graph *g, const char *name, const char *op, const char *in0, const char *device) {
  rt_node *n = rt_node_new(name, op);
  if (in0) rt_node_add_input(n, in0);
  if (strcmp(op, "Const")) rt_node_set_type(n, "dtype", RT_FLOAT);
  if (!strcmp(op, "VarHandleOp")) rt_node_set_shape(n, "shape", &(rt_shape){.ndims = 0});
  if (!strcmp(op, "Const")) {
    rt_tensor *t = T(RT_FLOAT, 0, NULL, V(1));
    rt_node_set_tensor(n, "value", t);
    rt_node_set_type(n, "dtype", RT_FLOAT);
    rt_tensor_unref(t);
  }
  if (device) rt_node_set_device(n, device);
  rt_status st = {0};
  rt_graph_add(g, n, &st);
  check_ok(&st);
}

/* Reads and updates go where the handle was made: with no request, with one for another
 * task (ignored, as TF does), and through an Identity of the handle. */
static void test_placer_colocates(void **state) {
  static const char *const devs[] = {W0, PS};
  rt_graph *g = rt_graph_new();
  add(g, "v", "VarHandleOp", NULL, "/job:ps/task:0");
  add(g, "read", "ReadVariableOp", "v", NULL);
  add(g, "pinned", "ReadVariableOp", "v", "/job:worker/task:0");
  rt_node *id = rt_node_new("h", "Identity");
  rt_node_add_input(id, "v");
  rt_node_set_type(id, "T", RT_RESOURCE);
  rt_status st = {0};
  rt_graph_add(g, id, &st);
  check_ok(&st);
  add(g, "read2", "ReadVariableOp", "h", NULL);
  add(g, "other", "Const", NULL, NULL);
  rt_place_opts o = {.soft = false, .default_device = W0};
  assert_int_equal(rt_place(g, devs, 2, &o, &st), RT_OK);
  static const char *const names[] = {"read", "pinned", "h", "read2"};
  for (int i = 0; i < 4; i++) {
    assert_string_equal(rt_graph_find(g, names[i])->assigned, PS);
    assert_string_equal(rt_graph_find(g, names[i])->reason, "colocated with v");
  }
  assert_string_equal(rt_graph_find(g, "other")->assigned, W0);
  rt_graph_free(g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_handle_names_its_device),
    cmocka_unit_test(test_read_assign_update),
    cmocka_unit_test(test_sparse_apply),
    cmocka_unit_test(test_other_device),
    cmocka_unit_test(test_placer_colocates),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
