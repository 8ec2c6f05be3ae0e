/* Runtime core: device names, the graph and its validation, the executor, placement,
 * partitioning, and a local session through the real master/worker path. The ops here
 * are the test's own (T*), so these tests do not depend on ops/. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/peer.h"
#include "runtime/cluster.h"
#include "runtime/device.h"
#include "runtime/exec.h"
#include "runtime/graph.h"
#include "runtime/op.h"
#include "runtime/partition.h"
#include "runtime/placer.h"
#include "runtime/server.h"
#include "runtime/session.h"

/* ---- test ops: TConst (value attr), TAdd (a+b float), TFeed (must be fed) ---------- */

static int tconst_kernel(rt_kernel_ctx *c) {
  const rt_attr_value *v = rt_node_attr(c->node, "value");
  c->outputs[0] = rt_tensor_ref(v->tensor);
  return RT_OK;
}

static int tadd_kernel(rt_kernel_ctx *c) {
  rt_tensor *a = c->inputs[0], *b = c->inputs[1];
  if (!rt_shape_equal(&a->shape, &b->shape))
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "shapes differ");
  rt_tensor *o = rt_kernel_output(c, 0, RT_FLOAT, &a->shape);
  if (!o) return c->st->code;
  float *x = rt_tensor_data(a), *y = rt_tensor_data(b), *z = rt_tensor_data(o);
  for (int64_t i = 0; i < rt_tensor_numel(a); i++) z[i] = x[i] + y[i];
  return RT_OK;
}

static int tconst_shape(rt_shape_ctx *c) {
  c->out_shapes[0] = rt_node_attr(c->node, "value")->tensor->shape;
  return RT_OK;
}

static int tadd_shape(rt_shape_ctx *c) {
  if (!rt_shape_compatible(&c->in_shapes[0], &c->in_shapes[1]))
    return rt_error(c->st, RT_INVALID_ARGUMENT, "TAdd '%s': shapes differ", c->node->name);
  c->out_shapes[0] = c->in_shapes[0];
  return RT_OK;
}

static const rt_op_def test_ops[] = {
  {.name = "TConst", .outputs = "output: dtype", .attrs = "value: tensor, dtype: type",
   .help = "test constant", .shape = tconst_shape, .kernel = {[RT_DEV_CPU] = tconst_kernel},
   .flags = RT_OP_SOURCE},
  {.name = "TAdd", .inputs = "x: T, y: T", .outputs = "z: T",
   .attrs = "T: {float, double}, scale: float = 1.5", .help = "test add", .shape = tadd_shape,
   .kernel = {[RT_DEV_CPU] = tadd_kernel}},
  {.name = "Placeholder", .outputs = "output: dtype", .attrs = "dtype: type, shape: shape = ?",
   .help = "test placeholder", .flags = RT_OP_SOURCE},
  {.name = "TList", .inputs = "values: N * T", .outputs = "sum: T",
   .attrs = "N: int >= 1, T: type", .help = "test list", .kernel = {[RT_DEV_CPU] = tadd_kernel}},
};

static rt_tensor *vec(int n, const float *v) {
  int64_t d = n;
  rt_shape s = rt_shape_make(1, &d);
  rt_tensor *t = rt_tensor_new(RT_FLOAT, &s);
  memcpy(rt_tensor_data(t), v, (size_t)n * sizeof(float));
  return t;
}

static int add_const(rt_graph *g, const char *name, int n, const float *v, rt_status *st) {
  rt_node *c = rt_node_new(name, "TConst");
  rt_tensor *t = vec(n, v);
  rt_node_set_tensor(c, "value", t);
  rt_node_set_type(c, "dtype", RT_FLOAT);
  rt_tensor_unref(t);
  return rt_graph_add(g, c, st);
}

static int add_add(rt_graph *g, const char *name, const char *a, const char *b, rt_status *st) {
  rt_node *n = rt_node_new(name, "TAdd");
  rt_node_add_input(n, a);
  rt_node_add_input(n, b);
  return rt_graph_add(g, n, st);
}

static int setup(void **state) {
  rt_op_init_internal();
  rt_op_register(test_ops, sizeof test_ops / sizeof *test_ops);
  return 0;
}

/* ---- device names ----------------------------------------------------------------- */

static void devname_str(const char *in, const char *want) {
  rt_devname d;
  char buf[200];
  assert_int_equal(rt_devname_parse(in, &d, NULL), RT_OK);
  assert_string_equal(rt_devname_str(&d, buf, sizeof buf), want);
}

static void test_devname_parse(void **state) {
  devname_str("/job:ps/replica:0/task:1/device:CPU:0", "/job:ps/replica:0/task:1/device:CPU:0");
  devname_str("/cpu:0", "/device:CPU:0");
  devname_str("/gpu:1", "/device:GPU:1");
  devname_str("/job:worker", "/job:worker");
  devname_str("/task:3", "/task:3");
  devname_str("/device:GPU:*", "/device:GPU:*");
  devname_str("CPU:0", "/device:CPU:0");
  devname_str("", "");
  rt_devname d;
  rt_status st = {0};
  assert_int_equal(rt_devname_parse("/job:ps/foo:bar", &d, &st), RT_INVALID_ARGUMENT);
  assert_string_equal(st.msg, "Malformed device specification '/job:ps/foo:bar': expected "
                      "/job:NAME/replica:N/task:N/device:TYPE:N (any part may be omitted)");
  assert_int_equal(rt_devname_parse("/task:x", &d, &st), RT_INVALID_ARGUMENT);
}

static void test_devname_merge_match(void **state) {
  /* Nested tf.device("/job:ps") -> "/task:1" -> "/cpu:0" gives /job:ps/task:1/device:CPU:0 */
  rt_devname a, b, c;
  char buf[200];
  rt_devname_parse("/job:ps", &a, NULL);
  rt_devname_parse("/task:1", &b, NULL);
  rt_devname_parse("/cpu:0", &c, NULL);
  rt_devname_merge(&a, &b);
  rt_devname_merge(&a, &c);
  assert_string_equal(rt_devname_str(&a, buf, sizeof buf), "/job:ps/task:1/device:CPU:0");
  rt_devname full;
  rt_devname_parse("/job:ps/replica:0/task:1/device:CPU:0", &full, NULL);
  assert_true(rt_devname_matches(&a, &full));
  assert_true(rt_devname_is_full(&full));
  assert_false(rt_devname_is_full(&a));
  rt_devname_parse("/job:ps/task:0", &b, NULL);
  assert_false(rt_devname_matches(&b, &full));
  assert_string_equal(rt_devname_task_str(&full, buf, sizeof buf), "/job:ps/replica:0/task:1");
}

/* ---- graphs --------------------------------------------------------------------------- */

static void test_graph_validation(void **state) {
  rt_graph *g = rt_graph_new();
  rt_status st = {0};
  float one[2] = {1, 2};
  assert_int_equal(add_const(g, "a", 2, one, &st), RT_OK);
  assert_int_equal(add_const(g, "a", 2, one, &st), RT_INVALID_ARGUMENT);
  assert_string_equal(st.msg, "Duplicate node name in graph: 'a'");
  assert_int_equal(rt_graph_add(g, rt_node_new("x", "Nope"), &st), RT_NOT_FOUND);
  assert_string_equal(st.msg, "node 'x': Op type not registered 'Nope'");
  assert_int_equal(add_add(g, "s", "a", "zz", &st), RT_INVALID_ARGUMENT);
  assert_string_equal(st.msg, "node 's': unknown input node 'zz'");
  assert_int_equal(add_add(g, "s", "a", "a:3", &st), RT_INVALID_ARGUMENT);
  assert_string_equal(st.msg, "node 's': input 'a:3' names output 3 of 'a', which has 1 output");
  /* type mismatch: TF1's words */
  rt_node *c = rt_node_new("i", "TConst");
  rt_tensor *it = rt_tensor_scalar_i32(3);
  rt_node_set_tensor(c, "value", it);
  rt_node_set_type(c, "dtype", RT_INT32);
  rt_tensor_unref(it);
  assert_int_equal(rt_graph_add(g, c, &st), RT_OK);
  assert_int_equal(add_add(g, "s", "a", "i", &st), RT_TYPE_ERROR);
  assert_string_equal(st.msg, "Input 'y' of 'TAdd' Op has type int32 that does not match type "
                      "float32 of argument 'x'.");
  assert_int_equal(add_add(g, "s2", "i", "i", &st), RT_TYPE_ERROR);
  assert_string_equal(st.msg, "Value passed to parameter 'T' of node 's2' (op TAdd) has DataType "
                      "int32 not in list of allowed values: float32, float64");
  rt_node *n = rt_node_new("s3", "TAdd");
  rt_node_add_input(n, "a");
  rt_node_add_input(n, "a");
  rt_node_set_int(n, "bogus", 1);
  assert_int_equal(rt_graph_add(g, n, &st), RT_INVALID_ARGUMENT);
  assert_string_equal(st.msg, "node 's3': op TAdd has no attr 'bogus' (its attrs: T, scale)");
  n = rt_node_new("s4", "TAdd");
  rt_node_add_input(n, "a");
  assert_int_equal(rt_graph_add(g, n, &st), RT_INVALID_ARGUMENT);
  assert_string_equal(st.msg, "node 's4': op TAdd takes 2 inputs, got 1");
  /* a good one: defaults filled, type attr bound, shape inferred */
  assert_int_equal(add_add(g, "sum", "a", "a:0", &st), RT_OK);
  rt_node *s = rt_graph_find(g, "sum");
  assert_non_null(s);
  assert_true(rt_node_float(s, "scale", 0) == 1.5);
  assert_int_equal(rt_node_type(s, "T", RT_INVALID), RT_FLOAT);
  assert_int_equal(s->out_shapes[0].ndims, 1);
  assert_int_equal(s->out_shapes[0].dims[0], 2);
  /* variadic: N inferred */
  n = rt_node_new("l", "TList");
  rt_node_add_input(n, "a");
  rt_node_add_input(n, "sum");
  assert_int_equal(rt_graph_add(g, n, &st), RT_OK);
  assert_int_equal(rt_node_int(rt_graph_find(g, "l"), "N", 0), 2);
  char name[64];
  rt_graph_unique_name(g, "sum", name, sizeof name);
  assert_string_equal(name, "sum_1");
  rt_graph_free(g);
}

/* ---- executor ------------------------------------------------------------------------- */

static void test_exec(void **state) {
  rt_graph *g = rt_graph_new();
  rt_status st = {0};
  float a[3] = {1, 2, 3}, b[3] = {10, 20, 30};
  assert_int_equal(add_const(g, "a", 3, a, &st), RT_OK);
  assert_int_equal(add_const(g, "b", 3, b, &st), RT_OK);
  assert_int_equal(add_add(g, "c", "a", "b", &st), RT_OK);
  assert_int_equal(add_add(g, "d", "c", "c", &st), RT_OK);
  rt_node *p = rt_node_new("p", "Placeholder");
  rt_node_set_type(p, "dtype", RT_FLOAT);
  assert_int_equal(rt_graph_add(g, p, &st), RT_OK);
  assert_int_equal(add_add(g, "e", "p", "a", &st), RT_OK);
  rt_device *dev = rt_device_new("/job:localhost/replica:0/task:0/device:CPU:0", RT_DEV_CPU, 7);
  rt_exec *x;
  assert_int_equal(rt_exec_new(g, dev, &x, &st), RT_OK);
  for (int round = 0; round < 3; round++) {   /* buffers are recycled between rounds */
    rt_step step = {0};
    const char *fetch[] = {"d:0", "c"};
    rt_tensor *out[2];
    rt_run_args ra = {.n_fetches = 2, .fetch_names = fetch, .fetched = out};
    assert_int_equal(rt_exec_run(x, &step, &ra, &st), RT_OK);
    float *d = rt_tensor_data(out[0]), *c = rt_tensor_data(out[1]);
    assert_true(d[0] == 22 && d[1] == 44 && d[2] == 66);
    assert_true(c[0] == 11 && c[2] == 33);
    assert_int_equal(atomic_load(&step.ops_done), 4);
    rt_tensor_unref(out[0]);
    rt_tensor_unref(out[1]);
  }
  /* a missing feed names the placeholder */
  rt_step step = {0};
  const char *fetch[] = {"e"};
  rt_tensor *out[1];
  rt_run_args ra = {.n_fetches = 1, .fetch_names = fetch, .fetched = out};
  assert_int_equal(rt_exec_run(x, &step, &ra, &st), RT_INVALID_ARGUMENT);
  assert_string_equal(st.msg, "You must feed a value for placeholder tensor 'p' with dtype "
                      "float32 and shape <unknown>");
  /* fed */
  float f[3] = {5, 5, 5};
  rt_tensor *ft = vec(3, f);
  const char *fn[] = {"p"};
  rt_run_args rb = {1, fn, &ft, 1, fetch, out, 0, NULL};
  assert_int_equal(rt_exec_run(x, &step, &rb, &st), RT_OK);
  assert_true(((float *)rt_tensor_data(out[0]))[2] == 8);
  rt_tensor_unref(out[0]);
  rt_tensor_unref(ft);
  /* unknown fetch */
  const char *bad[] = {"nope:0"};
  rt_run_args rc = {.n_fetches = 1, .fetch_names = bad, .fetched = out};
  assert_int_equal(rt_exec_run(x, &step, &rc, &st), RT_NOT_FOUND);
  assert_string_equal(st.msg, "The name 'nope:0' refers to a Tensor which does not exist. The "
                      "operation, 'nope', does not exist in the graph.");
  rt_exec_free(x);
  rt_device_free(dev);
  rt_graph_free(g);
}

/* ---- placement and partitioning ------------------------------------------------------- */

static void test_place_partition(void **state) {
  rt_graph *g = rt_graph_new();
  rt_status st = {0};
  float a[2] = {1, 2};
  assert_int_equal(add_const(g, "a", 2, a, &st), RT_OK);
  rt_node_set_device(g->nodes[0], "/job:ps/task:0");
  assert_int_equal(add_const(g, "b", 2, a, &st), RT_OK);
  assert_int_equal(add_add(g, "c", "a", "b", &st), RT_OK);
  rt_node_set_device(rt_graph_find(g, "c"), "/job:worker/task:1/cpu:0");
  assert_int_equal(add_add(g, "d", "a", "c", &st), RT_OK);
  const char *devs[] = {"/job:ps/replica:0/task:0/device:CPU:0",
                        "/job:worker/replica:0/task:0/device:CPU:0",
                        "/job:worker/replica:0/task:1/device:CPU:0"};
  rt_place_opts po = {.soft = false, .default_device = devs[1]};
  assert_int_equal(rt_place(g, devs, 3, &po, &st), RT_OK);
  assert_string_equal(rt_graph_find(g, "a")->assigned, devs[0]);
  assert_string_equal(rt_graph_find(g, "a")->reason, "explicit /job:ps/task:0");
  assert_string_equal(rt_graph_find(g, "b")->assigned, devs[1]);
  assert_string_equal(rt_graph_find(g, "b")->reason, "default");
  assert_string_equal(rt_graph_find(g, "c")->assigned, devs[2]);

  rt_partition *parts;
  int np;
  rt_partition_opts pto = {.by_task = true};
  assert_int_equal(rt_partition_graph(g, NULL, &pto, &parts, &np, &st), RT_OK);
  assert_int_equal(np, 3);
  /* a (ps) feeds c (worker 1) and d (worker 0): one send per destination */
  int ps = rt_partition_of(parts, np, "a");
  assert_string_equal(parts[ps].name, "/job:ps/replica:0/task:0");
  int sends = 0;
  for (int i = 0; i < parts[ps].g->n_nodes; i++) sends += !strcmp(parts[ps].g->nodes[i]->op, "_Send");
  assert_int_equal(sends, 2);
  int w0 = rt_partition_of(parts, np, "d");
  rt_node *d = rt_graph_find(parts[w0].g, "d");
  assert_string_equal(d->inputs[0], "a/_recv_0");
  assert_int_equal(d->n_inputs, 2);
  rt_partitions_free(parts, np);

  /* impossible placement names the node, the request and the devices */
  assert_int_equal(add_const(g, "e", 2, a, &st), RT_OK);
  rt_node_set_device(rt_graph_find(g, "e"), "/job:ps/task:3");
  assert_int_equal(rt_place(g, devs, 3, &po, &st), RT_INVALID_ARGUMENT);
  assert_string_equal(st.msg, "Cannot assign a device for operation 'e': Operation was explicitly "
                      "assigned to /job:ps/task:3 but available devices are [ "
                      "/job:ps/replica:0/task:0/device:CPU:0, "
                      "/job:worker/replica:0/task:0/device:CPU:0, "
                      "/job:worker/replica:0/task:1/device:CPU:0 ]. Make sure the device "
                      "specification refers to a valid device.");
  po.soft = true;
  assert_int_equal(rt_place(g, devs, 3, &po, &st), RT_OK);
  assert_string_equal(rt_graph_find(g, "e")->assigned, devs[1]);
  assert_string_equal(rt_graph_find(g, "e")->reason, "soft placement fallback from /job:ps/task:3");
  rt_graph_free(g);
}

/* ---- one execution path: a local session over inproc ----------------------------------- */

static void test_local_session(void **state) {
  rt_graph *g = rt_graph_new();
  rt_status st = {0};
  float a[2] = {1, 2}, b[2] = {3, 4};
  assert_int_equal(add_const(g, "a", 2, a, &st), RT_OK);
  assert_int_equal(add_const(g, "b", 2, b, &st), RT_OK);
  assert_int_equal(add_add(g, "c", "a", "b", &st), RT_OK);
  rt_session *s = rt_session_new("", g, NULL, &st);
  assert_non_null(s);
  const char *fetch[] = {"c"};
  rt_tensor *out[1];
  rt_session_run r = {.n_fetches = 1, .fetch_names = fetch, .fetched = out};
  assert_int_equal(rt_session_run_step(s, &r, &st), RT_OK);
  float *c = rt_tensor_data(out[0]);
  assert_true(c[0] == 4 && c[1] == 6);
  rt_tensor_unref(out[0]);
  /* the graph grows between runs; a placeholder is fed */
  rt_node *p = rt_node_new("p", "Placeholder");
  rt_node_set_type(p, "dtype", RT_FLOAT);
  assert_int_equal(rt_graph_add(g, p, &st), RT_OK);
  assert_int_equal(add_add(g, "e", "p", "c", &st), RT_OK);
  rt_tensor *fv = vec(2, b);
  const char *fn[] = {"p"}, *fe[] = {"e", "p:0"};
  rt_tensor *o2[2];
  rt_session_run r2 = {.n_feeds = 1, .feed_names = fn, .feeds = &fv, .n_fetches = 2, .fetch_names = fe, .fetched = o2};
  assert_int_equal(rt_session_run_step(s, &r2, &st), RT_OK);
  assert_true(((float *)rt_tensor_data(o2[0]))[1] == 10);
  assert_true(((float *)rt_tensor_data(o2[1]))[0] == 3);
  rt_tensor_unref(o2[0]);
  rt_tensor_unref(o2[1]);
  /* errors come back with the kernel's words */
  rt_session_run r3 = {.n_fetches = 1, .fetch_names = (const char *[]){"e"}, .fetched = o2};
  assert_int_equal(rt_session_run_step(s, &r3, &st), RT_INVALID_ARGUMENT);
  assert_string_equal(st.msg, "You must feed a value for placeholder tensor 'p' with dtype "
                      "float32 and shape <unknown>");
  rt_session_run r4 = {.n_fetches = 1, .fetch_names = (const char *[]){"zz"}, .fetched = o2};
  assert_int_equal(rt_session_run_step(s, &r4, &st), RT_NOT_FOUND);
  /* a wrong feed dtype */
  rt_tensor *iv = rt_tensor_scalar_i32(1);
  rt_session_run r5 = {.n_feeds = 1, .feed_names = fn, .feeds = &iv, .n_fetches = 1, .fetch_names = (const char *[]){"e"}, .fetched = o2};
  assert_int_equal(rt_session_run_step(s, &r5, &st), RT_INVALID_ARGUMENT);
  assert_string_equal(st.msg, "Cannot feed value of dtype int32 for Tensor 'p:0', which has dtype float32");
  rt_tensor_unref(iv);
  rt_tensor_unref(fv);
  rt_session_free(s);
  rt_graph_free(g);
}

/* Two tasks in one process (inproc): a's value crosses from ps to worker via
 * _Send/_Recv and RecvTensor; the worker has two CPU devices, so its fragment is split again. */
static void test_two_tasks(void **state) {
  rt_status st = {0};
  rt_cluster *c = rt_cluster_new();
  rt_cluster_add(c, "ps", 0, "inproc://t2-ps0");
  rt_cluster_add(c, "worker", 0, "inproc://t2-w0");
  rt_server_opts two = {.n_cpus = 2};
  rt_server *ps = rt_server_start(c, "ps", 0, NULL, &st);
  assert_non_null(ps);
  rt_server *w = rt_server_start(c, "worker", 0, &two, &st);
  assert_non_null(w);
  rt_graph *g = rt_graph_new();
  float a[2] = {1, 2}, b[2] = {3, 4};
  assert_int_equal(add_const(g, "a", 2, a, &st), RT_OK);
  rt_node_set_device(g->nodes[0], "/job:ps/task:0");
  assert_int_equal(add_const(g, "b", 2, b, &st), RT_OK);
  rt_node_set_device(g->nodes[1], "/job:worker/task:0/device:CPU:1");
  assert_int_equal(add_add(g, "c", "a", "b", &st), RT_OK);
  rt_node_set_device(g->nodes[2], "/job:worker/task:0/device:CPU:0");
  assert_int_equal(add_add(g, "d", "c", "a", &st), RT_OK);
  rt_node_set_device(g->nodes[3], "/job:ps/task:0");
  rt_session *s = rt_session_new(rt_server_endpoint(w), g, NULL, &st);
  assert_non_null(s);
  for (int round = 0; round < 3; round++) {
    const char *fetch[] = {"d", "c"};
    rt_tensor *out[2];
    rt_session_run r = {.n_fetches = 2, .fetch_names = fetch, .fetched = out};
    assert_int_equal(rt_session_run_step(s, &r, &st), RT_OK);
    float *d = rt_tensor_data(out[0]);
    assert_true(d[0] == 5 && d[1] == 8);
    rt_tensor_unref(out[0]);
    rt_tensor_unref(out[1]);
  }
  /* an error on one task aborts the step, named by its task */
  rt_node *p = rt_node_new("p", "Placeholder");
  rt_node_set_type(p, "dtype", RT_FLOAT);
  rt_node_set_device(p, "/job:ps/task:0");
  assert_int_equal(rt_graph_add(g, p, &st), RT_OK);
  assert_int_equal(add_add(g, "e", "p", "c", &st), RT_OK);
  rt_node_set_device(rt_graph_find(g, "e"), "/job:worker/task:0");
  rt_tensor *o[1];
  rt_session_run r2 = {.n_fetches = 1, .fetch_names = (const char *[]){"e"}, .fetched = o};
  assert_int_equal(rt_session_run_step(s, &r2, &st), RT_INVALID_ARGUMENT);
  assert_string_equal(st.msg, "/job:ps/replica:0/task:0: You must feed a value for placeholder "
                      "tensor 'p' with dtype float32 and shape <unknown>");
  rt_session_free(s);
  rt_graph_free(g);
  rt_server_free(w);
  rt_server_free(ps);
  rt_cluster_free(c);
}

/* ---- cluster specs: one lenient parse, problems passed on and skipped ----------------- */

typedef struct problems {
  int n;
  char msg[4][200];
} problems;

static void note_problem(void *ctx, const char *msg) {
  problems *p = ctx;
  if (p->n < 4) snprintf(p->msg[p->n], sizeof p->msg[0], "%s", msg);
  p->n++;
}

static void test_cluster_parse_each(void **state) {
  (void)state;
  problems p = {0};
  rt_cluster *c = rt_cluster_parse_each("{\"ps\": [1, \"h:1\"], \"w\": {\"x\": \"h:2\", \"3\": \"h:3\"}, \"q\": 7}",
                                        note_problem, &p);
  assert_non_null(c);
  assert_int_equal(p.n, 3);
  assert_string_equal(p.msg[0], "/job:ps/task:0: the address must be a string \"host:port\"");
  assert_string_equal(p.msg[1], "job w: task index 'x' is not a number; write {\"0\": \"host:port\"}");
  assert_int_equal(c->n, 2);   /* /job:ps/task:1 and /job:w/task:3 */
  assert_string_equal(rt_cluster_find(c, "w", 3)->addr, "h:3");
  rt_cluster_free(c);

  p.n = 0;   /* legacy: white space around names and addresses goes; a part without | is skipped */
  c = rt_cluster_parse_each(" ps| h:1 ;h:2 , nobar, worker |h:3\n", note_problem, &p);
  assert_int_equal(p.n, 1);
  assert_string_equal(p.msg[0], "'nobar' should be job|host:port;host:port (or give JSON)");
  assert_int_equal(c->n, 3);
  assert_string_equal(rt_cluster_find(c, "ps", 1)->addr, "h:2");
  assert_string_equal(rt_cluster_find(c, "worker", 0)->addr, "h:3");
  rt_cluster_free(c);

  p.n = 0;   /* no names or addresses checked: that is rt_cluster_check's */
  c = rt_cluster_parse_each("{\"wo-rker\": [\"nohost\", \"nohost\"]}", note_problem, &p);
  assert_int_equal(p.n, 0);
  assert_int_equal(c->n, 2);
  rt_cluster_free(c);

  p.n = 0;   /* NULL only when the JSON does not parse or is not an object */
  assert_null(rt_cluster_parse_each("{\"ps\": [", note_problem, &p));
  assert_int_equal(p.n, 1);
  assert_non_null(strstr(p.msg[0], "invalid JSON at line 1"));

  rt_status st = {0};   /* rt_cluster_parse: the first problem, then the checks */
  assert_null(rt_cluster_parse("{\"ps\": [1, 2]}", &st));
  assert_string_equal(st.msg, "cluster spec: /job:ps/task:0: the address must be a string \"host:port\"");
  assert_null(rt_cluster_parse("{\"ps\": [\"h:1\", \"h:1\"]}", &st));
  assert_non_null(strstr(st.msg, "both have address h:1"));
  c = rt_cluster_parse("ps|h:1, worker|h:2", &st);
  assert_non_null(c);
  rt_cluster_free(c);
}

/* A server on "any port" is reached in-process under the name its target gives clients
 * (the spec's host with the port bound), not only under the address it bound. */
static void test_in_process_names(void **state) {
  rt_status st = {0};
  rt_cluster *c = rt_cluster_new();
  rt_cluster_add(c, "localhost", 0, "localhost:0");
  rt_server *s = rt_server_start(c, "localhost", 0, NULL, &st);
  assert_non_null(s);
  const char *bound = rt_server_endpoint(s);   /* tcp://127.0.0.1:PORT */
  char by_name[128];
  snprintf(by_name, sizeof by_name, "tcp://localhost%s", strrchr(bound, ':'));
  assert_true(net_peer_local(net_peer_get(bound, &st)));
  assert_true(net_peer_local(net_peer_get(by_name, &st)));
  rt_server_free(s);
  assert_false(net_peer_local(net_peer_get(by_name, &st)));
  rt_cluster_free(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_devname_parse),  cmocka_unit_test(test_devname_merge_match),
    cmocka_unit_test(test_graph_validation), cmocka_unit_test(test_exec),
    cmocka_unit_test(test_place_partition), cmocka_unit_test(test_local_session),
    cmocka_unit_test(test_two_tasks), cmocka_unit_test(test_cluster_parse_each),
    cmocka_unit_test(test_in_process_names),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
