/* Stacks (ops/stack.c), as TF's while-loop gradient uses them: per-step resources that the
 * executor drops when the run ends, after a success and after an error alike; a push keeps
 * its value and passes it on, pops come back last first. Expected values worked out by hand;
 * messages are TF's. */
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

/* s = Stack(max 2); push 1.5 then 2.5; pop twice (ordered by control edges); and the ways
 * of getting it wrong: a third push, a pop of an empty stack, a push after close, an int. */
static rt_graph *graph(void) {
  rt_graph *g = rt_graph_new();
  graph_const(g, "max", rt_tensor_scalar_i32(2));
  graph_const(g, "a", rt_tensor_scalar_f32(1.5f));
  graph_const(g, "b", rt_tensor_scalar_f32(2.5f));
  graph_const(g, "i", rt_tensor_scalar_i32(3));
  graph_op(g, "s", "StackV2", 1, (const char *[]){"max"}, "elem_type", RT_FLOAT);
  graph_op(g, "p1", "StackPushV2", 2, (const char *[]){"s", "a"}, "T", RT_FLOAT);
  graph_op(g, "p2", "StackPushV2", 3, (const char *[]){"s", "b", "^p1"}, "T", RT_FLOAT);
  graph_op(g, "q1", "StackPopV2", 2, (const char *[]){"s", "^p2"}, "elem_type", RT_FLOAT);
  graph_op(g, "q2", "StackPopV2", 2, (const char *[]){"s", "^q1"}, "elem_type", RT_FLOAT);
  graph_op(g, "p3", "StackPushV2", 3, (const char *[]){"s", "a", "^p2"}, "T", RT_FLOAT);
  graph_op(g, "empty", "StackPopV2", 1, (const char *[]){"s"}, "elem_type", RT_FLOAT);
  graph_op(g, "close", "StackCloseV2", 1, (const char *[]){"s"}, NULL, RT_FLOAT);
  graph_op(g, "late", "StackPushV2", 3, (const char *[]){"s", "a", "^close"}, "T", RT_FLOAT);
  graph_op(g, "int", "StackPushV2", 2, (const char *[]){"s", "i"}, "T", RT_INT32);
  graph_op(g, "trig", "ControlTrigger", 1, (const char *[]){"^q2"}, NULL, RT_FLOAT);
  return g;
}

static int run(rt_exec *x, int n, const char **fetch, const char *target, rt_tensor **out, rt_status *st) {
  rt_step step = {.id = 42};
  rt_run_args ra = {.n_fetches = n, .fetch_names = fetch, .fetched = out, .n_targets = target ? 1 : 0,
                    .targets = target ? (const char *[]){target} : NULL};
  return rt_exec_run(x, &step, &ra, st);
}

static void expect_error(rt_exec *x, rt_device *dev, const char *fetch, const char *msg) {
  rt_status st = {0};
  rt_tensor *t = NULL;
  assert_int_equal(run(x, 1, (const char *[]){fetch}, NULL, &t, &st), RT_INVALID_ARGUMENT);
  if (!strstr(st.msg, msg)) fail_msg("%s: got \"%s\", want \"%s\"", fetch, st.msg, msg);
  assert_null(t);
  assert_null(dev->resources);   /* dropped after the error too */
}

static void test_push_pop(void **state) {
  (void)state;
  rt_graph *g = graph();
  rt_status st = {0};
  rt_device *dev = rt_device_new("/job:localhost/replica:0/task:0/device:CPU:0", RT_DEV_CPU, 7);
  rt_exec *x = NULL;
  assert_int_equal(rt_exec_new(g, dev, &x, &st), RT_OK);
  for (int k = 0; k < 2; k++) {   /* a new stack each step */
    rt_tensor *t[3] = {0};
    assert_int_equal(run(x, 3, (const char *[]){"q1", "q2", "p2"}, "trig", t, &st), RT_OK);
    assert_true(*(float *)rt_tensor_data(t[0]) == 2.5f);
    assert_true(*(float *)rt_tensor_data(t[1]) == 1.5f);
    assert_true(*(float *)rt_tensor_data(t[2]) == 2.5f);   /* the push passes its value on */
    for (int i = 0; i < 3; i++) rt_tensor_unref(t[i]);
    assert_null(dev->resources);
  }
  expect_error(x, dev, "p3", "Stack[s_2] overflowed its max_size (2)");   /* steps 0 and 1 made s_0, s_1 */
  expect_error(x, dev, "empty", "Stack[s_3] is empty when calling Pop().");
  expect_error(x, dev, "late", "Stack[s_4] has already been closed.");
  expect_error(x, dev, "int", "Stack[s_5] holds float, not int32");
  rt_exec_free(x);
  rt_device_free(dev);
  rt_graph_free(g);
}

int main(void) {
  op_register_all();
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_push_pop),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
