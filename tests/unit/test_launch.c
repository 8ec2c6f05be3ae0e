/* Launching clusters: task-count specs, free ports, Slurm's hostlists and tasks-per-node
 * lists, and SlurmClusterResolver's assignment. The expected hostlists are what real TF's
 * slurm_cluster_resolver.expand_hostlist / expand_tasks_per_node returned for the same
 * input (TF 2.21); tests/integration/slurm/resolver.py checks the whole resolver against
 * TF's output. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/launch.h"

/* hosts joined by spaces, or "error: msg" */
static const char *hostlist(const char *in) {
  static char buf[4096];
  char **h;
  int n;
  rt_status st = {0};
  if (rt_slurm_hostlist(in, &h, &n, &st)) {
    snprintf(buf, sizeof buf, "error: %s", st.msg);
    return buf;
  }
  size_t off = 0;
  buf[0] = 0;
  for (int i = 0; i < n; i++) off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%s", i ? " " : "", h[i]);
  rt_strv_free(h, n);
  return buf;
}

static void test_hostlist_tf(void **state) {
  (void)state;
  /* TF: ['n1', 'n2', 'm5', 'o3', 'o4', 'o6', 'o7', 'o8', 'o9'] (its docstring's example) */
  assert_string_equal(hostlist("n[1-2],m5,o[3-4,6,7-9]"), "n1 n2 m5 o3 o4 o6 o7 o8 o9");
  assert_string_equal(hostlist("node[01-03,07]"), "node01 node02 node03 node07");
  assert_string_equal(hostlist("gpu[08-10],login"), "gpu08 gpu09 gpu10 login");
  assert_string_equal(hostlist("a,b,a"), "a b a");             /* order kept, no dedup */
  assert_string_equal(hostlist("x[1-010]"), "x1 x2 x3 x4 x5 x6 x7 x8 x9 x10");  /* the first number's width */
  assert_string_equal(hostlist("localhost"), "localhost");
}

static void test_hostlist_slurm(void **state) {
  (void)state;
  /* Slurm writes these too; TF's regular expression rejects them */
  assert_string_equal(hostlist("r[1-2]n[1-2]"), "r1n1 r1n2 r2n1 r2n2");
  assert_string_equal(hostlist("gpu[1-2]-ib"), "gpu1-ib gpu2-ib");
}

static void test_hostlist_errors(void **state) {
  (void)state;
  assert_string_equal(hostlist("n[1-2"), "error: Invalid hostlist format \"n[1-2\": '[' without ']'");
  assert_string_equal(hostlist("n[a-b]"), "error: Invalid hostlist format \"n[a-b]\": 'a-b' is not a number or a range N-M");
  assert_string_equal(hostlist("n[3-1]"), "error: Invalid hostlist format \"n[3-1]\": the range 3-1 runs backwards");
  assert_string_equal(hostlist("a,,b"), "error: Invalid hostlist format \"a,,b\": an empty host name");
  assert_string_equal(hostlist(""), "error: Invalid hostlist format \"\": no hosts");
  assert_string_equal(hostlist("n[1-2]]"), "error: Invalid hostlist format \"n[1-2]]\": ']' without '['");
  assert_string_equal(hostlist("n[1-[2]]"), "error: Invalid hostlist format \"n[1-[2]]\": '[' inside '[...]'");
  assert_string_equal(hostlist("n[0-9999999]"), "error: Invalid hostlist format \"n[0-9999999]\": more than 100000 hosts");
}

static const char *tpn(const char *in) {
  static char buf[1024];
  int *c, n;
  rt_status st = {0};
  if (rt_slurm_tasks_per_node(in, &c, &n, &st)) {
    snprintf(buf, sizeof buf, "error: %s", st.msg);
    return buf;
  }
  size_t off = 0;
  buf[0] = 0;
  for (int i = 0; i < n; i++) off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%d", i ? " " : "", c[i]);
  free(c);
  return buf;
}

static void test_tasks_per_node(void **state) {
  (void)state;
  assert_string_equal(tpn("2(x3),1"), "2 2 2 1");       /* TF: [2, 2, 2, 1] */
  assert_string_equal(tpn("3(x2),2,1"), "3 3 2 1");     /* TF: [3, 3, 2, 1] */
  assert_string_equal(tpn("4"), "4");
  assert_string_equal(tpn("2(x"), "error: Invalid tasks-per-node list format \"2(x\": expected N or N(xR), "
                                  "comma-separated (as in 2(x3),1)");
  assert_string_equal(tpn("2,"), "error: Invalid tasks-per-node list format \"2,\": expected N or N(xR), "
                                 "comma-separated (as in 2(x3),1)");
}

/* ---- the resolver over a fake environment ---- */

static const char *const *fake_env;
static const char *fake_get(const char *name, void *arg) {
  (void)arg;
  for (int i = 0; fake_env[i]; i += 2)
    if (!strcmp(fake_env[i], name)) return fake_env[i + 1];
  return NULL;
}

static void test_resolve(void **state) {
  (void)state;
  /* the job-level variables, as salloc/sbatch set them, when no step ones are set */
  static const char *const env[] = {"SLURM_PROCID", "2", "SLURM_NTASKS", "3", "SLURM_JOB_NODELIST", "node[01-02]",
                                    "SLURM_TASKS_PER_NODE", "2,1", "CUDA_VISIBLE_DEVICES", "4,5", NULL};
  fake_env = env;
  rt_job_counts jobs;
  rt_status st = {0};
  assert_int_equal(rt_job_counts_parse("ps=1 worker=2", &jobs, &st), 1);
  rt_slurm_opts o = {.jobs = &jobs, .port_base = 8888, .gpus_per_node = -1, .gpus_per_task = -1,
                     .tasks_per_node = -1, .env = fake_get};
  rt_slurm s;
  assert_int_equal(rt_slurm_resolve(&o, &s, &st), 0);
  assert_string_equal(s.job, "worker");
  assert_int_equal(s.index, 1);
  assert_string_equal(s.host, "node02");
  assert_int_equal(s.port, 8888);
  assert_string_equal(s.gpus, "4");     /* the first GPU of the visible list, not GPU 0 */
  assert_int_equal(s.cluster->n, 3);
  assert_string_equal(rt_cluster_find(s.cluster, "ps", 0)->addr, "node01:8888");
  assert_string_equal(rt_cluster_find(s.cluster, "worker", 0)->addr, "node01:8889");
  rt_slurm_clear(&s);
  /* the step's variables win over the job's */
  static const char *const env2[] = {"SLURM_PROCID", "0", "SLURM_STEP_NUM_TASKS", "1", "SLURM_NTASKS", "3",
                                     "SLURM_STEP_NODELIST", "solo", "SLURM_JOB_NODELIST", "node[01-02]",
                                     "SLURM_STEP_TASKS_PER_NODE", "1", "SLURM_TASKS_PER_NODE", "2,1", NULL};
  fake_env = env2;
  o.jobs = NULL;
  assert_int_equal(rt_slurm_resolve(&o, &s, &st), 0);
  assert_string_equal(s.job, "worker");
  assert_string_equal(s.cluster->tasks[0].addr, "solo:8888");
  assert_string_equal(s.gpus, "");
  rt_slurm_clear(&s);
  static const char *const env3[] = {"SLURM_PROCID", "x", NULL};
  fake_env = env3;
  assert_int_equal(rt_slurm_resolve(&o, &s, &st), RT_INVALID_ARGUMENT);
  assert_string_equal(st.msg, "SLURM_PROCID is 'x', not a number");
}

/* ---- task counts ---- */

static const char *counts(const char *in) {
  static char buf[512];
  rt_job_counts c;
  rt_status st = {0};
  int rc = rt_job_counts_parse(in, &c, &st);
  if (rc < 0) snprintf(buf, sizeof buf, "error: %s", st.msg);
  else if (rc == 0) snprintf(buf, sizeof buf, "not counts");
  else rt_job_counts_format(&c, buf, sizeof buf);
  return buf;
}

static void test_counts(void **state) {
  (void)state;
  assert_string_equal(counts("ps=1 worker=2"), "ps=1 worker=2");
  assert_string_equal(counts(" ps=1,worker=2 "), "ps=1 worker=2");
  assert_string_equal(counts("{\"ps\": 1, \"worker\": 2}"), "ps=1 worker=2");
  assert_string_equal(counts("{\"ps\": [\"localhost:2222\"]}"), "not counts");
  assert_string_equal(counts("ps|localhost:2222"), "not counts");
  assert_string_equal(counts("{\"ps\": 1, \"worker\": [\"h:1\"]}"),
                      "error: cluster spec: give every job a count ({\"ps\": 1, \"worker\": 2}) or every job its "
                      "addresses ({\"ps\": [\"host:port\"], ...}), not both");
  assert_string_equal(counts("ps=one"), "error: cluster spec: ps=one: the count must be a number (as in ps=1 worker=2)");
  assert_string_equal(counts("ps=1 worker"), "error: cluster spec: 'worker' should be JOB=COUNT (as in ps=1 worker=2)");
  assert_string_equal(counts("ps=0"), "error: cluster spec: job ps: 0 tasks; give a count from 1 to 4096");
  assert_string_equal(counts("ps=1 ps=2"), "error: cluster spec: job ps is given twice");
  assert_string_equal(counts("9ps=1"), "error: cluster spec: '9ps' is not a valid job name (letters, digits and _)");
}

static void test_free_ports(void **state) {
  (void)state;
  rt_job_counts c;
  rt_status st = {0};
  assert_int_equal(rt_job_counts_parse("ps=2 worker=3", &c, &st), 1);
  rt_cluster *cl = rt_cluster_on_free_ports(&c, "localhost", &st);
  assert_non_null(cl);
  assert_int_equal(cl->n, 5);
  assert_int_equal(rt_cluster_check(cl, &st), 0);   /* every address distinct and well formed */
  assert_string_equal(cl->tasks[4].job, "worker");
  assert_int_equal(cl->tasks[4].index, 2);
  assert_int_equal(strncmp(cl->tasks[0].addr, "localhost:", 10), 0);
  rt_cluster_free(cl);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_hostlist_tf),    cmocka_unit_test(test_hostlist_slurm),
    cmocka_unit_test(test_hostlist_errors), cmocka_unit_test(test_tasks_per_node),
    cmocka_unit_test(test_resolve),        cmocka_unit_test(test_counts),
    cmocka_unit_test(test_free_ports),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
