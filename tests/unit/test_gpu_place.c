/* Placement with GPUs, on any machine: the device list is given to the placer directly
 * (no GPU needed), the kernel rows are ops/gpu/table.c's (the same in every build). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "ops_test.h"
#include "runtime/placer.h"

#define W0 "/job:worker/replica:0/task:0"
#define PS "/job:ps/replica:0/task:0"

static const char *const devs[] = {W0 "/device:CPU:0", W0 "/device:GPU:0", W0 "/device:GPU:1",
                                   PS "/device:CPU:0"};

static int setup(void **state) {
  op_register_all();
  return 0;
}

static void add_node(rt_graph *g, const char *name, const char *op, const char *in0, const char *in1,
                     rt_dtype t, const char *device) {
  rt_node *n = rt_node_new(name, op);
  if (in0) rt_node_add_input(n, in0);
  if (in1) rt_node_add_input(n, in1);
  rt_node_set_type(n, "T", t);
  if (device) rt_node_set_device(n, device);
  rt_status st = {0};
  rt_graph_add(g, n, &st);
  check_ok(&st);
}

static const char *placed(rt_graph *g, const char *name) { return rt_graph_find(g, name)->assigned; }
static const char *reason(rt_graph *g, const char *name) { return rt_graph_find(g, name)->reason; }

static int place(rt_graph *g, bool soft, int n_devs, rt_status *st) {
  rt_place_opts o = {.soft = soft, .default_device = devs[0]};
  memset(st, 0, sizeof *st);
  return rt_place(g, devs, n_devs, &o, st);
}

/* One row per op says which devices have kernels. */
static void test_kernel_table(void **state) {
  char buf[32];
  assert_string_equal(rt_op_kernel_types(rt_op_find("MatMul")->def, buf, sizeof buf), "CPU GPU");
  assert_string_equal(rt_op_kernel_types(rt_op_find("ApplyAdam")->def, buf, sizeof buf), "CPU GPU");
  assert_string_equal(rt_op_kernel_types(rt_op_find("ArgMax")->def, buf, sizeof buf), "CPU");
  assert_string_equal(rt_op_kernel_types(rt_op_find("StringJoin")->def, buf, sizeof buf), "CPU");
  assert_string_equal(rt_op_kernel_dtypes(rt_op_find("Add")->def, RT_DEV_GPU), "T=float");
  assert_string_equal(rt_op_kernel_dtypes(rt_op_find("Add")->def, RT_DEV_CPU), "");
  /* a build with CUDA has the functions; one without only the rows */
  assert_true((rt_op_kernel(rt_op_find("MatMul")->def, RT_DEV_GPU) != NULL) == TFSH_HAVE_CUDA);
  assert_null(rt_op_kernel(rt_op_find("ArgMax")->def, RT_DEV_GPU));
}

static void test_default_gpu(void **state) {
  rt_graph *g = rt_graph_new();
  add_const(g, "a", T(RT_FLOAT, 1, D(2), V(1, 2)));
  add_const(g, "i", T(RT_INT32, 0, D(0), V(0)));
  add_const(g, "i2", T(RT_INT32, 1, D(2), V(1, 2)));
  add_node(g, "f", "Add", "a", "a", RT_FLOAT, NULL);      /* float Add: GPU:0 */
  add_node(g, "n", "Add", "i2", "i2", RT_INT32, NULL);      /* int32 Add: no GPU kernel */
  add_node(g, "m", "ArgMax", "a", "i", RT_FLOAT, NULL);   /* no GPU kernel at all */
  add_node(g, "g1", "Relu", "a", NULL, RT_FLOAT, "/device:GPU:1");
  add_node(g, "c", "Relu", "a", NULL, RT_FLOAT, "/cpu:0");
  rt_status st;
  assert_int_equal(place(g, false, 4, &st), RT_OK);
  assert_string_equal(placed(g, "a"), W0 "/device:GPU:0");
  assert_string_equal(placed(g, "f"), W0 "/device:GPU:0");
  assert_string_equal(reason(g, "f"), "default");
  assert_string_equal(placed(g, "n"), W0 "/device:CPU:0");
  assert_string_equal(placed(g, "m"), W0 "/device:CPU:0");
  assert_string_equal(placed(g, "g1"), W0 "/device:GPU:1");
  assert_string_equal(reason(g, "g1"), "explicit /device:GPU:1");
  assert_string_equal(placed(g, "c"), W0 "/device:CPU:0");
  rt_graph_free(g);

  /* No GPU in the list: everything on the CPU, as before. */
  g = rt_graph_new();
  add_const(g, "a", T(RT_FLOAT, 1, D(2), V(1, 2)));
  add_const(g, "i", T(RT_INT32, 0, D(0), V(0)));
  add_node(g, "f", "Add", "a", "a", RT_FLOAT, NULL);
  rt_place_opts o = {.default_device = devs[0]};
  const char *cpus[] = {devs[0], devs[3]};
  assert_int_equal(rt_place(g, cpus, 2, &o, &st), RT_OK);
  assert_string_equal(placed(g, "f"), W0 "/device:CPU:0");
  rt_graph_free(g);
}

/* A task named without a device type: its GPU when the op has a kernel there; nothing
 * asked for: the default task only, even if another task has a GPU. */
static void test_tasks(void **state) {
  const char *list[] = {W0 "/device:CPU:0", PS "/device:CPU:0", PS "/device:GPU:0"};
  rt_graph *g = rt_graph_new();
  add_const(g, "a", T(RT_FLOAT, 1, D(2), V(1, 2)));
  add_const(g, "i", T(RT_INT32, 0, D(0), V(0)));
  add_node(g, "p", "Relu", "a", NULL, RT_FLOAT, "/job:ps/task:0");
  add_node(g, "q", "ArgMax", "a", "i", RT_FLOAT, "/job:ps/task:0");
  rt_place_opts o = {.default_device = list[0]};
  rt_status st = {0};
  assert_int_equal(rt_place(g, list, 3, &o, &st), RT_OK);
  assert_string_equal(placed(g, "a"), W0 "/device:CPU:0");
  assert_string_equal(placed(g, "p"), PS "/device:GPU:0");
  assert_string_equal(placed(g, "q"), PS "/device:CPU:0");
  rt_graph_free(g);
}

/* A colocation group goes to a GPU only if every member has a GPU kernel. */
static void test_group(void **state) {
  rt_graph *g = rt_graph_new();
  add_const(g, "a", T(RT_FLOAT, 1, D(2), V(1, 2)));
  add_const(g, "i", T(RT_INT32, 0, D(0), V(0)));
  add_node(g, "x", "Relu", "a", NULL, RT_FLOAT, NULL);
  add_node(g, "y", "ArgMax", "a", "i", RT_FLOAT, NULL);
  const char *loc[] = {"loc:@x"};
  rt_node_set_strings(rt_graph_find(g, "y"), "_class", 1, loc);
  rt_status st;
  assert_int_equal(place(g, false, 4, &st), RT_OK);
  assert_string_equal(placed(g, "x"), W0 "/device:CPU:0");
  assert_string_equal(placed(g, "y"), W0 "/device:CPU:0");
  assert_string_equal(reason(g, "y"), "colocated with x");
  rt_graph_free(g);
}

/* An explicit GPU request the op cannot honour: TF1's error naming the node, or the
 * soft placement fallback with the reason %placement shows. */
static void test_no_kernel(void **state) {
  rt_graph *g = rt_graph_new();
  add_const(g, "a", T(RT_FLOAT, 1, D(2), V(1, 2)));
  add_const(g, "i", T(RT_INT32, 0, D(0), V(0)));
  add_node(g, "m", "ArgMax", "a", "i", RT_FLOAT, "/gpu:0");
  rt_status st;
  assert_int_equal(place(g, false, 4, &st), RT_INVALID_ARGUMENT);
  assert_string_equal(st.msg, "Cannot assign a device for operation 'm': Could not satisfy explicit "
                              "device specification '/device:GPU:0' because no supported kernel for "
                              "GPU devices is available.");
  assert_int_equal(place(g, true, 4, &st), RT_OK);
  assert_string_equal(placed(g, "m"), W0 "/device:CPU:0");
  assert_string_equal(reason(g, "m"),
                      "soft placement fallback from /device:GPU:0: no GPU kernel for ArgMax (m)");
  rt_graph_free(g);

  /* the member without a kernel is not the one that asked */
  g = rt_graph_new();
  add_const(g, "a", T(RT_FLOAT, 1, D(2), V(1, 2)));
  add_const(g, "i", T(RT_INT32, 0, D(0), V(0)));
  add_node(g, "x", "Relu", "a", NULL, RT_FLOAT, "/device:GPU:0");
  add_node(g, "y", "ArgMax", "a", "i", RT_FLOAT, NULL);
  const char *loc[] = {"loc:@x"};
  rt_node_set_strings(rt_graph_find(g, "y"), "_class", 1, loc);
  assert_int_equal(place(g, false, 4, &st), RT_INVALID_ARGUMENT);
  assert_string_equal(st.msg, "Cannot assign a device for operation 'x': Could not satisfy explicit "
                              "device specification '/device:GPU:0' because no supported kernel for "
                              "GPU devices is available for 'y' (op: ArgMax), colocated with it.");
  rt_graph_free(g);
}

/* An explicit GPU request with no GPU at all: the devices that exist, or soft fallback. */
static void test_no_device(void **state) {
  rt_graph *g = rt_graph_new();
  add_const(g, "a", T(RT_FLOAT, 1, D(2), V(1, 2)));
  add_const(g, "i", T(RT_INT32, 0, D(0), V(0)));
  add_node(g, "r", "Relu", "a", NULL, RT_FLOAT, "/gpu:0");
  const char *cpus[] = {devs[0]};
  rt_place_opts o = {.default_device = devs[0]};
  rt_status st = {0};
  assert_int_equal(rt_place(g, cpus, 1, &o, &st), RT_INVALID_ARGUMENT);
  assert_string_equal(st.msg, "Cannot assign a device for operation 'r': Operation was explicitly "
                              "assigned to /device:GPU:0 but available devices are [ " W0
                              "/device:CPU:0 ]. Make sure the device specification refers to a valid "
                              "device.");
  o.soft = true;
  memset(&st, 0, sizeof st);
  assert_int_equal(rt_place(g, cpus, 1, &o, &st), RT_OK);
  assert_string_equal(placed(g, "r"), W0 "/device:CPU:0");
  assert_string_equal(reason(g, "r"), "soft placement fallback from /device:GPU:0");
  rt_graph_free(g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_kernel_table), cmocka_unit_test(test_default_gpu), cmocka_unit_test(test_tasks),
    cmocka_unit_test(test_group), cmocka_unit_test(test_no_kernel), cmocka_unit_test(test_no_device),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
