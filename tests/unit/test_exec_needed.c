/* The executor marks what a step needs once per signature (runtime/exec.c): a step that
 * asks the same feeds, fetches and targets as the one before skips the walk, and one that
 * asks anything else walks again. Each step below changes one of the three, and each result
 * is worked out by hand: a stale set would run a fed node, or leave a fetched one unrun.
 * Also: a value an Identity passed on is written over by its next consumer. */
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

/* a = 1, b = 2, c = a + b, d = a * b */
static rt_graph *graph(void) {
  rt_graph *g = rt_graph_new();
  graph_add(g, iconst("a", 1, NULL));
  graph_add(g, iconst("b", 2, NULL));
  graph_op(g, "c", "Add", 2, (const char *[]){"a", "b"}, "T", RT_INT32);
  graph_op(g, "d", "Mul", 2, (const char *[]){"a", "b"}, "T", RT_INT32);
  return g;
}

/* fetch (with a fed as a_val unless a_val < 0): its int32 value, or -1000 - the error code */
static int32_t run(rt_exec *x, const char *fetch, int32_t a_val) {
  rt_step step = {.id = 7};
  rt_status st = {0};
  rt_tensor *out = NULL, *fa = a_val >= 0 ? rt_tensor_scalar_i32(a_val) : NULL;
  rt_run_args ra = {.n_feeds = fa ? 1 : 0, .feed_names = (const char *[]){"a:0"}, .feeds = &fa,
                    .n_fetches = 1, .fetch_names = (const char *[]){fetch}, .fetched = &out};
  int rc = rt_exec_run(x, &step, &ra, &st);
  int32_t v = rc ? -1000 - rc : *(const int32_t *)rt_tensor_data(out);
  rt_tensor_unref(out);
  rt_tensor_unref(fa);
  return v;
}

static void test_needed_per_signature(void **state) {
  (void)state;
  rt_graph *g = graph();
  rt_status st = {0};
  rt_device *dev = rt_device_new("/job:localhost/replica:0/task:0/device:CPU:0", RT_DEV_CPU, 7);
  rt_exec *x = NULL;
  assert_int_equal(rt_exec_new(g, dev, &x, &st), RT_OK);
  assert_int_equal(run(x, "c:0", -1), 3);
  assert_int_equal(run(x, "c:0", -1), 3);    /* the same signature: the set kept */
  assert_int_equal(run(x, "d:0", -1), 2);    /* another fetch: d runs */
  assert_int_equal(run(x, "c:0", 5), 7);     /* a fed: the Const a does not run */
  assert_int_equal(run(x, "c:0", 6), 8);     /* the same names, another value */
  assert_int_equal(run(x, "c:0", -1), 3);    /* no feed: a runs again */
  assert_int_equal(run(x, "e:0", -1), -1000 - RT_NOT_FOUND);   /* an error keeps nothing */
  assert_int_equal(run(x, "e:0", -1), -1000 - RT_NOT_FOUND);
  assert_int_equal(run(x, "d:0", 4), 8);
  rt_exec_free(x);
  rt_device_free(dev);
  rt_graph_free(g);
}

/* An Identity passes its input on as the same tensor; once the producer's slot lets go, the
 * next consumer may write over it (runtime/exec.c: release_inputs keeps a value for the
 * next step only if no one else holds it). TAddr: an Identity that also outputs its
 * input's data address. */
static int taddr_kernel(rt_kernel_ctx *c) {
  rt_tensor_unref(c->outputs[0]);
  c->outputs[0] = rt_tensor_ref(c->inputs[0]);
  rt_shape sc = rt_shape_make(0, NULL);
  rt_tensor *p = rt_kernel_output(c, 1, RT_INT64, &sc);
  if (!p) return c->st->code;
  *(int64_t *)rt_tensor_data(p) = (int64_t)(intptr_t)rt_tensor_data(c->inputs[0]);
  return RT_OK;
}

static const rt_op_def taddr_op[] = {
  {.name = "TAddr", .inputs = "input: T", .outputs = "output: T, addr: int64", .attrs = "T: type",
   .kernel = {[RT_DEV_CPU] = taddr_kernel}},
};

static void test_forward_after_identity(void **state) {
  (void)state;
  rt_op_register(taddr_op, 1);
  rt_graph *g = rt_graph_new();
  rt_shape s1024 = rt_shape_make(1, (int64_t[]){1024});
  rt_tensor *xv = rt_tensor_new(RT_FLOAT, &s1024);
  for (int i = 0; i < 1024; i++) ((float *)rt_tensor_data(xv))[i] = (float)i;
  graph_const(g, "x", xv);
  graph_const(g, "two", rt_tensor_scalar_f32(2));
  graph_op(g, "m1", "Mul", 2, (const char *[]){"x", "two"}, "T", RT_FLOAT);
  graph_op(g, "i1", "TAddr", 1, (const char *[]){"m1"}, "T", RT_FLOAT);
  graph_op(g, "m2", "Mul", 2, (const char *[]){"i1", "two"}, "T", RT_FLOAT);
  graph_op(g, "i2", "TAddr", 1, (const char *[]){"m2"}, "T", RT_FLOAT);
  graph_op(g, "m3", "Mul", 2, (const char *[]){"i2", "two"}, "T", RT_FLOAT);
  rt_status st = {0};
  rt_device *dev = rt_device_new("/job:localhost/replica:0/task:0/device:CPU:0", RT_DEV_CPU, 7);
  rt_exec *x = NULL;
  assert_int_equal(rt_exec_new(g, dev, &x, &st), RT_OK);
  for (int run = 0; run < 2; run++) {   /* the second step: with last step's values kept */
    rt_step step = {.id = 8 + run};
    rt_tensor *out[3] = {0};
    rt_run_args ra = {.n_fetches = 3, .fetch_names = (const char *[]){"i1:1", "i2:1", "m3:0"},
                      .fetched = out};
    assert_int_equal(rt_exec_run(x, &step, &ra, &st), RT_OK);
    int64_t a1 = *(const int64_t *)rt_tensor_data(out[0]);
    assert_true(a1 == *(const int64_t *)rt_tensor_data(out[1]));   /* m2 wrote over m1 */
    assert_true(a1 == (int64_t)(intptr_t)rt_tensor_data(out[2]));   /* and m3 over m2 */
    const float *y = rt_tensor_data(out[2]);
    assert_true(y[0] == 0.0f && y[1] == 8.0f && y[1023] == 8184.0f);
    for (int i = 0; i < 3; i++) rt_tensor_unref(out[i]);
  }
  rt_exec_free(x);
  rt_device_free(dev);
  rt_graph_free(g);
}

int main(void) {
  op_register_all();
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_needed_per_signature),
    cmocka_unit_test(test_forward_after_identity),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
