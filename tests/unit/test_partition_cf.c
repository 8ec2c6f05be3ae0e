/* A loop split over two tasks (runtime/partition.c, TF1's AddControlFlow): the partition
 * without the LoopCond gets a control loop of its frame, the LoopCond's value crosses every
 * iteration, and both parts run to the end in two executors that meet in an in-memory
 * rendezvous (keys naming frame and iteration, the last iteration's dead values sent as
 * markers). Expected values worked out by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>

#include "ops/ops.h"
#include "runtime/device.h"
#include "runtime/exec.h"
#include "runtime/graph.h"
#include "runtime/op.h"
#include "runtime/partition.h"
#include "runtime/step.h"
#include "tests/unit/graph_build.h"

#define WK "/job:worker/replica:0/task:0/device:CPU:0"
#define PS "/job:ps/replica:0/task:0/device:CPU:0"

static void add(rt_graph *g, rt_node *n, const char *dev) {
  rt_status st = {0};
  n->assigned = strdup(dev);
  if (rt_graph_add(g, n, &st)) fail_msg("%s", st.msg);
}

/* i = 0; while i < limit: i += one, where the Add (and its constant) run on ps */
static rt_graph *split_loop(int32_t limit, int par) {
  rt_graph *g = rt_graph_new();
  add(g, iconst("zero", 0, NULL), WK);
  rt_node *e = node("while/Enter", "Enter", "zero", NULL);
  rt_node_set_string(e, "frame_name", "while/while_context");
  rt_node_set_int(e, "parallel_iterations", par);
  add(g, e, WK);
  add(g, node("while/Merge", "Merge", "while/Enter", "while/NextIteration"), WK);
  add(g, iconst("while/limit", limit, "while/Merge"), WK);
  add(g, node("while/Less", "Less", "while/Merge", "while/limit"), WK);
  add(g, node("while/LoopCond", "LoopCond", "while/Less", NULL), WK);
  add(g, node("while/Switch", "Switch", "while/Merge", "while/LoopCond"), WK);
  add(g, node("while/Identity", "Identity", "while/Switch:1", NULL), WK);
  add(g, iconst("while/one", 1, "while/Identity"), PS);
  add(g, node("while/Add", "Add", "while/Identity", "while/one"), PS);
  add(g, node("while/NextIteration", "NextIteration", "while/Add", NULL), WK);
  add(g, node("while/Exit", "Exit", "while/Switch", NULL), WK);
  return g;
}

static void test_control_loop_nodes(void **state) {
  rt_status st = {0};
  rt_graph *g = split_loop(5, 4);
  rt_partition *parts;
  int np;
  rt_partition_opts o = {.by_task = true};
  assert_int_equal(rt_partition_graph(g, NULL, &o, &parts, &np, &st), RT_OK);
  assert_int_equal(np, 2);
  int ps = rt_partition_of(parts, np, "while/Add"), wk = rt_partition_of(parts, np, "while/LoopCond");
  assert_string_equal(parts[ps].name, "/job:ps/replica:0/task:0");
  assert_int_equal(ps, 1);   /* partitions in the order of their first node */
  rt_graph *p = parts[ps].g;
  rt_node *e = rt_graph_find(p, "while/while_context/_cloop_1/enter");
  assert_non_null(e);
  assert_string_equal(e->op, "Enter");
  assert_string_equal(rt_node_string(e, "frame_name", ""), "while/while_context");
  assert_int_equal(rt_node_int(e, "parallel_iterations", 0), 4);
  assert_string_equal(e->inputs[0], "while/while_context/_cloop_1/start");
  rt_node *m = rt_graph_find(p, "while/while_context/_cloop_1/merge");
  assert_string_equal(m->inputs[1], "while/while_context/_cloop_1/next");
  rt_node *sw = rt_graph_find(p, "while/while_context/_cloop_1/switch");
  assert_string_equal(sw->inputs[1], "while/while_context/_cloop_1/cond");
  assert_string_equal(rt_graph_find(p, "while/while_context/_cloop_1/cond")->inputs[0], "while/LoopCond/_recv_0");
  assert_string_equal(rt_graph_find(p, "while/while_context/_cloop_1/pivot")->inputs[0],
                      "while/while_context/_cloop_1/switch:1");
  /* every _Recv of the frame waits on the control loop's Merge: once per iteration */
  rt_node *r = rt_graph_find(p, "while/Identity/_recv_0");
  assert_int_equal(r->n_inputs, 1);
  assert_string_equal(r->inputs[0], "^while/while_context/_cloop_1/merge");
  assert_true(rt_node_bool(r, "_maybe_dead", false));
  assert_string_equal(rt_graph_find(parts[wk].g, "while/LoopCond/_send_1")->op, "_Send");
  /* the worker gets one too, for the Add's value coming back */
  assert_non_null(rt_graph_find(parts[wk].g, "while/while_context/_cloop_0/merge"));
  assert_null(rt_graph_find(parts[wk].g, "while/while_context/_cloop_0/cond"));   /* its own LoopCond */
  rt_partitions_free(parts, np);
  rt_graph_free(g);
}

/* ---- both parts run: an in-memory rendezvous -------------------------------------------- */

typedef struct slot {
  char key[512];
  rt_tensor *t;
} slot;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static slot table[4096];
static int n_table, sends, dead_sends;

static int r_send(rt_step *s, const char *key, rt_tensor *t, rt_status *st) {
  (void)s;
  pthread_mutex_lock(&mu);
  int rc = RT_OK;
  if (n_table == 4096) rc = rt_error(st, RT_INTERNAL, "table full");
  else {
    snprintf(table[n_table].key, sizeof table[n_table].key, "%s", key);
    table[n_table++].t = rt_tensor_ref(t);
    sends++;
    dead_sends += t == RT_DEAD;
  }
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
  return rc;
}

static bool take(const char *key, rt_tensor **t) {   /* mu held */
  for (int i = 0; i < n_table; i++)
    if (!strcmp(table[i].key, key)) {
      *t = table[i].t;
      table[i] = table[--n_table];
      return true;
    }
  return false;
}

static int r_recv(rt_step *s, const char *key, bool block, rt_tensor **t, rt_status *st) {
  (void)s, (void)st;
  pthread_mutex_lock(&mu);
  bool ok;
  while (!(ok = take(key, t)) && block) pthread_cond_wait(&cv, &mu);
  pthread_mutex_unlock(&mu);
  return ok ? RT_OK : RT_UNAVAILABLE;
}

static int r_recv_any(rt_step *s, const char *const *keys, int n, int *which, rt_tensor **t,
                      rt_status *st) {
  (void)s, (void)st;
  pthread_mutex_lock(&mu);
  for (*which = -1; *which < 0; ) {
    for (int k = 0; k < n && *which < 0; k++)
      if (take(keys[k], t)) *which = k;
    if (*which < 0) pthread_cond_wait(&cv, &mu);
  }
  pthread_mutex_unlock(&mu);
  return RT_OK;
}

typedef struct part_run {
  rt_exec *x;
  const rt_graph *g;
  const char *fetch;
  int32_t value;
  int rc;
  rt_status st;
} part_run;

static void *run_part(void *arg) {
  part_run *r = arg;
  rt_step step = {.send = r_send, .recv = r_recv, .recv_any = r_recv_any};
  const char *targets[64];
  int nt = 0;
  bool used[512] = {0};
  for (int i = 0; i < r->g->n_nodes; i++)
    for (int k = 0; k < r->g->nodes[i]->n_inputs; k++) used[r->g->nodes[i]->edges[k].node] = true;
  for (int i = 0; i < r->g->n_nodes && nt < 64; i++)
    if (!used[i]) targets[nt++] = r->g->nodes[i]->name;
  rt_tensor *out[1] = {NULL};
  const char *f[] = {r->fetch};
  rt_run_args ra = {.n_fetches = r->fetch ? 1 : 0, .fetch_names = f, .fetched = out,
                    .n_targets = nt, .targets = targets};
  r->rc = rt_exec_run(r->x, &step, &ra, &r->st);
  if (!r->rc && r->fetch) r->value = *(int32_t *)rt_tensor_data(out[0]);
  rt_tensor_unref(out[0]);
  return NULL;
}

static void run_split(int32_t limit, int par) {
  rt_status st = {0};
  rt_graph *g = split_loop(limit, par);
  rt_partition *parts;
  int np;
  rt_partition_opts o = {.by_task = true};
  assert_int_equal(rt_partition_graph(g, NULL, &o, &parts, &np, &st), RT_OK);
  rt_device *dev[2];
  part_run pr[2] = {{0}};
  pthread_t th[2];
  sends = dead_sends = 0;
  for (int i = 0; i < 2; i++) {
    dev[i] = rt_device_new(strstr(parts[i].name, "ps") ? PS : WK, RT_DEV_CPU, 7);
    pr[i].g = parts[i].g;
    pr[i].fetch = rt_graph_find(parts[i].g, "while/Exit") ? "while/Exit" : NULL;
    if (rt_exec_new(parts[i].g, dev[i], &pr[i].x, &st)) fail_msg("%s", st.msg);
  }
  for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, run_part, &pr[i]);
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < 2; i++) {
    if (pr[i].rc) fail_msg("%s", pr[i].st.msg);
    if (pr[i].fetch) assert_int_equal(pr[i].value, limit);
    rt_exec_free(pr[i].x);
    rt_device_free(dev[i]);
  }
  /* per iteration (limit + 1 of them): LoopCond, Identity, the Identity's control and the
   * Add's value; the last iteration's three body values go dead */
  assert_int_equal(sends, 4 * (limit + 1));
  assert_int_equal(dead_sends, 3);
  assert_int_equal(n_table, 0);
  assert_int_equal(atomic_load(&rt_dead_value.refs), 1 << 30);   /* taken as often as sent */
  rt_partitions_free(parts, np);
  rt_graph_free(g);
}

static void test_split_runs(void **state) {
  run_split(5, 1);
  run_split(300, 10);
  run_split(0, 3);   /* the body never runs: only dead values cross */
}

int main(void) {
  op_register_all();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_control_loop_nodes),
      cmocka_unit_test(test_split_runs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
