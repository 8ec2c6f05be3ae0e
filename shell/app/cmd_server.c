/* `tfsh server`: run one task of a cluster in the foreground until SIGTERM or SIGINT. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "ops/ops.h"
#include "runtime/cluster.h"
#include "runtime/files.h"
#include "runtime/op.h"
#include "runtime/server.h"
#include "shell/app/cmd.h"

static const char server_usage[] =
  "usage: tfsh server (--cluster SPEC | --ps_hosts H,.. --worker_hosts H,.. | TF_CONFIG) \\\n"
  "                   --job NAME --task N [--cpus N] [--bind HOST]\n"
  "                   [--intra-op-threads N] [--inter-op-threads N]   (ConfigProto's)\n"
  "                   [--cluster-key FILE] [--insecure] [--max-message-bytes N]\n"
  "                   [--allow-write DIR:DIR...]   (where Save may write; default . and $TMPDIR)\n"
  "  SPEC: JSON {\"ps\": [\"host:port\"], \"worker\": [...]} or legacy ps|h:p;h:p,worker|h:p\n";

static int fail(const char *fmt, const char *a, const char *b) {
  fputs("tfsh server: ", stderr);
  fprintf(stderr, fmt, a, b);
  fputc('\n', stderr);
  return 1;
}

int sh_server_main(int argc, char **argv) {
  const char *spec = NULL, *job = NULL, *task = NULL, *cpus = NULL, *bind = NULL, *ps = NULL,
             *workers = NULL, *max_bytes = NULL, *key = NULL, *allow = NULL, *v;
  const char *threads[2] = {NULL, NULL};   /* intra-op, inter-op */
  bool insecure = false;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      fputs(server_usage, stdout);
      fputs(rt_net_flags_help(), stdout);
      return 0;
    }
    if (!strcmp(argv[i], "--insecure")) {
      insecure = true;
      continue;
    }
    if ((v = sh_cmd_opt(argc, argv, &i, "--cluster")) || (v = sh_cmd_opt(argc, argv, &i, "--cluster_spec"))) spec = v;
    else if ((v = sh_cmd_opt(argc, argv, &i, "--job")) || (v = sh_cmd_opt(argc, argv, &i, "--job_name"))) job = v;
    else if ((v = sh_cmd_opt(argc, argv, &i, "--task")) || (v = sh_cmd_opt(argc, argv, &i, "--task_index"))) task = v;
    else if ((v = sh_cmd_opt(argc, argv, &i, "--cpus"))) cpus = v;
    else if ((v = sh_cmd_opt(argc, argv, &i, "--bind"))) bind = v;
    else if ((v = sh_cmd_opt(argc, argv, &i, "--intra-op-threads"))) threads[0] = v;
    else if ((v = sh_cmd_opt(argc, argv, &i, "--inter-op-threads"))) threads[1] = v;
    else if ((v = sh_cmd_opt(argc, argv, &i, "--ps_hosts"))) ps = v;
    else if ((v = sh_cmd_opt(argc, argv, &i, "--worker_hosts"))) workers = v;
    else if ((v = sh_cmd_opt(argc, argv, &i, "--max-message-bytes"))) max_bytes = v;
    else if ((v = sh_cmd_opt(argc, argv, &i, "--cluster-key"))) key = v;
    else if ((v = sh_cmd_opt(argc, argv, &i, "--allow-write"))) allow = v;
    else {
      fprintf(stderr, "tfsh server: unknown argument '%s'\n%s", argv[i], server_usage);
      return 2;
    }
  }
  int nthreads[2] = {0, 0};
  for (int k = 0; k < 2; k++) {
    char *end = NULL;
    long n = threads[k] ? strtol(threads[k], &end, 10) : 0;
    if (threads[k] && (*end || n < 1 || n > 4096)) {
      fprintf(stderr, "tfsh server: --%s-op-threads must be a number from 1 to 4096, got '%s'\n",
              k ? "inter" : "intra", threads[k]);
      return 2;
    }
    nthreads[k] = (int)n;
  }
  rt_status st = {0};
  if (rt_net_configure(max_bytes, key, insecure, &st)) {
    fprintf(stderr, "tfsh server: %s\n", st.msg);
    return 2;
  }
  rt_cluster *c = NULL;
  char cfg_job[64] = "";
  int cfg_task = -1;
  if (spec) {
    c = rt_cluster_parse(spec, &st);
  } else if (ps || workers) {
    c = rt_cluster_new();
    if (ps) sh_cmd_add_hosts(c, "ps", ps);
    if (workers) sh_cmd_add_hosts(c, "worker", workers);
    if (rt_cluster_check(c, &st)) {
      rt_cluster_free(c);
      c = NULL;
    }
  } else if (getenv("TF_CONFIG")) {
    c = rt_cluster_from_tf_config(getenv("TF_CONFIG"), cfg_job, sizeof cfg_job, &cfg_task, &st);
  } else {
    fprintf(stderr, "tfsh server: no cluster: give --cluster, --ps_hosts/--worker_hosts, or set TF_CONFIG\n%s",
            server_usage);
    return 2;
  }
  if (!c) return fail("%s%s", st.msg, "");
  if (!job) job = cfg_job[0] ? cfg_job : NULL;
  if (!job) {
    rt_cluster_free(c);
    return fail("%s%s", "--job is required (which job of the cluster this process serves)", "");
  }
  char jobs[256];
  rt_cluster_jobs(c, jobs, sizeof jobs);
  int n = rt_cluster_num_tasks(c, job);
  if (n == 0) {
    fprintf(stderr, "tfsh server: job '%s' is not in the cluster spec; its jobs are: %s (check --job)\n", job, jobs);
    rt_cluster_free(c);
    return 1;
  }
  char *end = NULL;
  long index = task ? strtol(task, &end, 10) : cfg_task >= 0 ? cfg_task : 0;
  if (task && (*end || end == task)) {
    rt_cluster_free(c);
    return fail("--task must be a number, not '%s'%s", task, "");
  }
  if (!rt_cluster_find(c, job, (int)index)) {
    fprintf(stderr, "tfsh server: task index %ld is out of range for job '%s', which has %d task%s (0..%d) "
            "(check --task)\n", index, job, n, n == 1 ? "" : "s", n - 1);
    rt_cluster_free(c);
    return 1;
  }
  /* SIGTERM / SIGINT end the server: wait for them with sigwait, blocked in every thread. */
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGINT);
  pthread_sigmask(SIG_BLOCK, &sigs, NULL);
  op_register_all();
  /* Ops that write files (Save) write under the working directory and $TMPDIR only,
   * unless --allow-write says otherwise ("" lifts the restriction). */
  char dflt[8192];
  if (!allow) {
    const char *tmp = getenv("TMPDIR");
    snprintf(dflt, sizeof dflt, ".:%s", tmp && *tmp ? tmp : "/tmp");
    allow = dflt;
  }
  rt_files_allow(allow);
  rt_server_opts o = {.n_cpus = cpus ? atoi(cpus) : 1, .bind_host = bind,
                      .intra_op_threads = nthreads[0], .inter_op_threads = nthreads[1]};
  rt_server *s = rt_server_start(c, job, (int)index, &o, &st);
  rt_cluster_free(c);
  if (!s) return fail("%s%s", st.msg, "");
  int inter = rt_inter_threads();
  char cap[32] = "no cap";
  if (inter) snprintf(cap, sizeof cap, "%d", inter);
  printf("tfsh: kernels use %d intra-op thread%s; inter-op: %s\n", rt_intra_threads(),
         rt_intra_threads() == 1 ? "" : "s", cap);
  printf("tfsh: %s serving on %s\n", rt_server_task(s), rt_server_endpoint(s));
  fflush(stdout);
  int sig = 0;
  sigwait(&sigs, &sig);
  rt_server_free(s);
  return 0;
}
