/* The executor's control-flow frames (runtime/exec_cf.c) on graphs built by hand: a loop's
 * Merge named before its NextIteration (the graph's forward inputs), a while loop of many
 * iterations, parallel_iterations of 1, a dead fetch, a value that skips an Enter, and a
 * Merge whose back edge never comes. Expected values worked out by hand. */
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

/* i = 0; while i < limit: i += 1  (parallel_iterations par) */
static rt_graph *counting_loop(int32_t limit, int par) {
  rt_graph *g = rt_graph_new();
  graph_add(g, iconst("zero", 0, NULL));
  rt_node *e = node("while/Enter", "Enter", "zero", NULL);
  rt_node_set_string(e, "frame_name", "while/while_context");
  rt_node_set_int(e, "parallel_iterations", par);
  graph_add(g, e);
  graph_add(g, node("while/Merge", "Merge", "while/Enter", "while/NextIteration"));   /* back edge */
  graph_add(g, iconst("while/limit", limit, "while/Merge"));
  graph_add(g, node("while/Less", "Less", "while/Merge", "while/limit"));
  graph_add(g, node("while/LoopCond", "LoopCond", "while/Less", NULL));
  graph_add(g, node("while/Switch", "Switch", "while/Merge", "while/LoopCond"));
  graph_add(g, node("while/Identity", "Identity", "while/Switch:1", NULL));
  graph_add(g, iconst("while/one", 1, "while/Identity"));
  graph_add(g, node("while/Add", "Add", "while/Identity", "while/one"));
  graph_add(g, node("while/NextIteration", "NextIteration", "while/Add", NULL));
  graph_add(g, node("while/Exit", "Exit", "while/Switch", NULL));
  return g;
}

static int run1(rt_graph *g, const char *fetch, int32_t *out, rt_status *st) {
  rt_device *dev = rt_device_new("/job:localhost/replica:0/task:0/device:CPU:0", RT_DEV_CPU, 7);
  rt_exec *x = NULL;
  int rc = rt_exec_new(g, dev, &x, st);
  if (!rc) {
    rt_step step = {0};
    const char *f[] = {fetch};
    rt_tensor *t[1] = {NULL};
    rt_run_args ra = {.n_fetches = 1, .fetch_names = f, .fetched = t};
    rc = rt_exec_run(x, &step, &ra, st);
    if (!rc) *out = *(int32_t *)rt_tensor_data(t[0]);
    rt_tensor_unref(t[0]);
  }
  rt_exec_free(x);
  rt_device_free(dev);
  return rc;
}

static void test_loop(void **state) {
  rt_status st = {0};
  int32_t v = -1;
  rt_graph *g = counting_loop(10000, 10);
  assert_int_equal(rt_graph_check_complete(g, &st), RT_OK);
  assert_int_equal(run1(g, "while/Exit", &v, &st), RT_OK);
  assert_int_equal(v, 10000);
  rt_graph_free(g);
  g = counting_loop(7, 1);
  assert_int_equal(run1(g, "while/Exit:0", &v, &st), RT_OK);
  assert_int_equal(v, 7);
  rt_graph_free(g);
  g = counting_loop(0, 3);   /* the body never runs */
  assert_int_equal(run1(g, "while/Exit", &v, &st), RT_OK);
  assert_int_equal(v, 0);
  rt_graph_free(g);
}

static void test_dead_fetch(void **state) {
  rt_graph *g = rt_graph_new();
  rt_status st = {0};
  graph_add(g, iconst("x", 5, NULL));
  rt_node *p = rt_node_new("p", "Const");
  rt_tensor *f = rt_tensor_scalar_bool(false);
  rt_node_set_tensor(p, "value", f);
  rt_node_set_type(p, "dtype", RT_BOOL);
  rt_tensor_unref(f);
  graph_add(g, p);
  graph_add(g, node("sw", "Switch", "x", "p"));
  int32_t v = -1;
  assert_int_equal(run1(g, "sw:0", &v, &st), RT_OK);
  assert_int_equal(v, 5);
  assert_int_equal(run1(g, "sw:1", &v, &st), RT_INVALID_ARGUMENT);
  assert_string_equal(st.msg, "Retval[0] does not have value");
  rt_graph_free(g);
}

static void test_bad_frames(void **state) {
  rt_status st = {0};
  int32_t v;
  /* a value of the root used inside the loop without an Enter */
  rt_graph *g = counting_loop(3, 10);
  graph_add(g, node("while/bad", "Add", "while/Identity", "zero"));
  assert_int_equal(run1(g, "while/bad", &v, &st), RT_INVALID_ARGUMENT);
  assert_string_equal(st.msg, "node 'while/bad' is in frame '(root)' but its input 'while/Identity' is in "
                      "frame 'while/while_context' (a value goes into a loop only through an Enter)");
  rt_graph_free(g);
  /* a Merge whose back edge never comes */
  g = rt_graph_new();
  graph_add(g, iconst("zero", 0, NULL));
  rt_node *e = node("Enter", "Enter", "zero", NULL);
  rt_node_set_string(e, "frame_name", "f");
  graph_add(g, e);
  graph_add(g, node("Merge", "Merge", "Enter", "NextIteration"));
  assert_int_equal(rt_graph_check_complete(g, &st), RT_INVALID_ARGUMENT);
  assert_string_equal(st.msg, "node 'Merge': unknown input node 'NextIteration'");
  assert_int_equal(run1(g, "Merge", &v, &st), RT_INVALID_ARGUMENT);
  /* a back edge of another type */
  rt_node *fl = rt_node_new("NextIteration", "Const");
  rt_tensor *t = rt_tensor_scalar_f32(1);
  rt_node_set_tensor(fl, "value", t);
  rt_node_set_type(fl, "dtype", RT_FLOAT);
  rt_tensor_unref(t);
  assert_int_equal(rt_graph_add(g, fl, &st), RT_INVALID_ARGUMENT);
  assert_string_equal(st.msg, "node 'Merge': input 'NextIteration' is not a int32 output");
  rt_graph_free(g);
}

int main(void) {
  op_register_all();
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_loop),
    cmocka_unit_test(test_dead_fetch),
    cmocka_unit_test(test_bad_frames),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
