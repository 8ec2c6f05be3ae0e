/* What the op tests (test_ops*.c) share: tensors from literal values, graphs of constants
 * and placeholders, one executor run, status checks. Include after <cmocka.h>. */
#ifndef TFSH_TESTS_OPS_TEST_H
#define TFSH_TESTS_OPS_TEST_H

#include <stdbool.h>
#include <stdint.h>

#include "ops/ops.h"
#include "ops/ops_int.h"
#include "runtime/device.h"
#include "runtime/exec.h"
#include "runtime/graph.h"
#include "runtime/op.h"

#define D(...) ((const int64_t[]){__VA_ARGS__})
#define V(...) ((const double[]){__VA_ARGS__})

typedef void (*attrs_fn)(rt_node *n);   /* sets the attrs of the op under test */

/* A tensor of dtype t and shape dims from the values v (converted). */
static inline rt_tensor *T(rt_dtype t, int nd, const int64_t *dims, const double *v) {
  rt_shape s = rt_shape_make(nd, dims);
  rt_tensor *x = rt_tensor_new(t, &s);
  void *d = rt_tensor_data(x);
  for (int64_t i = 0; i < rt_tensor_numel(x); i++) switch (t) {
    case RT_FLOAT: ((float *)d)[i] = (float)v[i]; break;
    case RT_DOUBLE: ((double *)d)[i] = v[i]; break;
    case RT_INT32: ((int32_t *)d)[i] = (int32_t)v[i]; break;
    case RT_INT64: ((int64_t *)d)[i] = (int64_t)v[i]; break;
    case RT_BOOL: ((bool *)d)[i] = v[i] != 0; break;
    default: break;
    }
  return x;
}

static inline void check_ok(const rt_status *st) {
  if (st->code) print_error("%s\n", st->msg);
  assert_int_equal(st->code, 0);
}

/* Adds a Const holding t (takes t). */
static inline void add_const(rt_graph *g, const char *name, rt_tensor *t) {
  rt_node *n = rt_node_new(name, "Const");
  rt_node_set_tensor(n, "value", t);
  rt_node_set_type(n, "dtype", t->dtype);
  rt_tensor_unref(t);
  rt_status st = {0};
  rt_graph_add(g, n, &st);
  check_ok(&st);
}

/* Adds a Placeholder of dtype t; nd < 0: of unknown shape. */
static inline void add_placeholder(rt_graph *g, const char *name, rt_dtype t, int nd, const int64_t *d) {
  rt_node *n = rt_node_new(name, "Placeholder");
  rt_node_set_type(n, "dtype", t);
  if (nd >= 0) {
    rt_shape s = rt_shape_make(nd, d);
    rt_node_set_shape(n, "shape", &s);
  }
  rt_status st = {0};
  rt_graph_add(g, n, &st);
  check_ok(&st);
}

/* One executor run of `fetch` with feeds; a deep copy of the result or NULL with st. */
static inline rt_tensor *eval(rt_graph *g, const char *fetch, int nf, const char *const *feeds,
                              rt_tensor *const *fv, rt_status *st) {
  rt_device *dev = rt_device_new("/job:localhost/replica:0/task:0/device:CPU:0", RT_DEV_CPU, 1);
  rt_exec *ex = NULL;
  rt_tensor *out = NULL, *copy = NULL;
  if (!rt_exec_new(g, dev, &ex, st)) {
    rt_run_args a = {.n_feeds = nf, .feed_names = feeds, .feeds = fv, .n_fetches = 1,
                     .fetch_names = &fetch, .fetched = &out};
    rt_step step = {0};
    if (!rt_exec_run(ex, &step, &a, st)) copy = rt_tensor_copy(out);
  }
  rt_tensor_unref(out);
  rt_exec_free(ex);
  rt_device_free(dev);
  return copy;
}

#endif
