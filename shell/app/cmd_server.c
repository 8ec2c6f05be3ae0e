/* `tfsh server`: run one task of a cluster in the foreground until SIGTERM or SIGINT. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "ops/ops.h"
#include "runtime/cluster.h"
#include "runtime/files.h"
#include "runtime/launch.h"
#include "runtime/op.h"
#include "runtime/server.h"
#include "runtime/tfmaster.h"
#include "shell/app/cmd.h"

static const char server_usage[] =
  "usage: tfsh server (--cluster SPEC | --ps_hosts H,.. --worker_hosts H,.. | TF_CONFIG) \\\n"
  "                   --job NAME --task N [--cpus N] [--bind HOST]\n"
  "                   [--intra-op-threads N] [--inter-op-threads N]   (ConfigProto's)\n"
  "                   [--cluster-key FILE] [--insecure] [--max-message-bytes N]\n"
  "                   [--grpc HOST:PORT]   (also serve TF's MasterService there, over TF's own\n"
  "                   gRPC: TensorFlow clients run on this cluster; loopback only unless --insecure)\n"
  "                   [--allow-write DIR:DIR...]   (where Save may write; default . and $TMPDIR)\n"
  "                   [--watch-stdin]   (stop when standard input closes: how %cluster up --hosts\n"
  "                   stops tasks it started over ssh; --cluster-key - reads the key from there first)\n"
  "       tfsh server --slurm [JOB=N ...] [--port-base P] [--gpus-per-node N] [--gpus-per-task N]\n"
  "                   [--tasks-per-node N] [options above]\n"
  "  SPEC: JSON {\"ps\": [\"host:port\"], \"worker\": [...]} or legacy ps|h:p;h:p,worker|h:p\n"
  "  --slurm: inside a Slurm allocation (srun -n 3 tfsh server --slurm ps=1 worker=2), the cluster,\n"
  "    this task's job and index, and its GPUs (CUDA_VISIBLE_DEVICES) come from Slurm's environment\n"
  "    as TF's SlurmClusterResolver derives them: nodes in name order, each with its tasks on\n"
  "    --port-base (8888), +1, ...; ranks (SLURM_PROCID) fill the jobs in name order. With no\n"
  "    JOB=N every task is a worker. Needs srun's default block distribution.\n"
  "  Without a cluster key the server also listens on a second port of its address, chosen by the\n"
  "    kernel, where its peers send their requests once asked (a direct lane: one thread wake-up a\n"
  "    message instead of ZeroMQ's three); a firewall that blocks it leaves them on ZeroMQ, and\n"
  "    TFSH_LANE=0 turns it off.\n";

static bool grpc_loopback(const char *addr) {
  return !strncmp(addr, "localhost:", 10) || !strncmp(addr, "127.", 4) || !strncmp(addr, "[::1]:", 6);
}

static int fail(const char *fmt, const char *a, const char *b) {
  fputs("tfsh server: ", stderr);
  fprintf(stderr, fmt, a, b);
  fputc('\n', stderr);
  return 1;
}

/* --cluster-key -: the key's lines from stdin up to an empty line, into a private file. */
static int stdin_key(char *path, size_t n) {
  const char *tmp = getenv("TMPDIR");
  snprintf(path, n, "%s/tfsh-key-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  int fd = mkstemp(path);   /* mode 0600 */
  if (fd < 0) {
    fprintf(stderr, "tfsh server: cannot write the cluster key to %s: %s\n", path, strerror(errno));
    path[0] = 0;
    return -1;
  }
  char line[4096];
  size_t total = 0;
  /* read byte by byte: what follows the key on stdin is --watch-stdin's */
  for (;;) {
    size_t len = 0;
    char ch;
    ssize_t got;
    while (len + 1 < sizeof line && (got = read(0, &ch, 1)) == 1 && ch != '\n') line[len++] = ch;
    if (!len) break;
    line[len++] = '\n';
    total += len;
    if (write(fd, line, len) != (ssize_t)len || total > 65536) break;
  }
  close(fd);
  if (!total) {
    fprintf(stderr, "tfsh server: --cluster-key -: no key on standard input\n");
    unlink(path);
    path[0] = 0;
    return -1;
  }
  return 0;
}

/* --watch-stdin: standard input closed (the ssh that started the task is gone): stop. */
static void *watch_stdin_main(void *arg) {
  char buf[256];
  while (read(0, buf, sizeof buf) > 0) {
  }
  kill(getpid(), SIGTERM);
  return NULL;
}

/* --slurm: the cluster and this task from Slurm's environment; GPUs narrowed to the task's.
 * A rank Slurm put elsewhere than the resolver's layout says (a cyclic distribution) is
 * refused with the fix, rather than binding the wrong host or port. */
static int slurm_resolve(const rt_slurm_opts *so, rt_cluster **c, char *job, size_t jn, int *task) {
  rt_slurm s;
  rt_status st = {0};
  if (rt_slurm_resolve(so, &s, &st)) {
    fprintf(stderr, "tfsh server --slurm: %s\n", st.msg);
    return -1;
  }
  const char *node = getenv("SLURMD_NODENAME"), *local = getenv("SLURM_LOCALID");
  if ((node && *node && strcmp(node, s.host)) || (local && *local && atoi(local) != s.port_offset)) {
    fprintf(stderr, "tfsh server --slurm: Slurm runs rank %d on %s as its local task %s, but the cluster spec "
            "(TF's SlurmClusterResolver layout) puts rank %d at %s:%d, local task %d: run srun with "
            "--distribution=block (its default)\n", s.rank, node && *node ? node : "?", local && *local ? local : "?",
            s.rank, s.host, s.port, s.port_offset);
    rt_slurm_clear(&s);
    return -1;
  }
  if (s.gpus_per_task > 0) setenv("CUDA_VISIBLE_DEVICES", s.gpus, 1);
  snprintf(job, jn, "%s", s.job);
  *task = s.index;
  const char *id = getenv("SLURM_JOB_ID");
  printf("tfsh: slurm job %s rank %d of %d on %s: /job:%s/task:%d%s%s; cluster", id ? id : "?", s.rank, s.ntasks,
         s.host, s.job, s.index, s.gpus[0] ? ", GPUs " : "", s.gpus);
  for (int i = 0; i < s.cluster->n; i++)
    printf(" %s/%d=%s", s.cluster->tasks[i].job, s.cluster->tasks[i].index, s.cluster->tasks[i].addr);
  printf("\n");
  fflush(stdout);
  *c = s.cluster;
  return 0;
}

/* The command line of tfsh server. */
typedef struct srv_args {
  const char *spec, *job, *task, *cpus, *bind, *ps, *workers, *max_bytes, *key, *allow, *grpc;
  const char *threads[2];   /* intra-op, inter-op */
  bool insecure, slurm, watch_stdin;
  rt_job_counts slurm_jobs;
  const char *slurm_num[4];   /* port base, GPUs per node, GPUs per task, tasks per node */
} srv_args;

/* Fill a from argv: -1 to go on, else the exit status (--help: 0, a bad argument: 2). */
static int parse_args(int argc, char **argv, srv_args *a) {
  const char *v;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      fputs(server_usage, stdout);
      fputs(rt_net_flags_help(), stdout);
      return 0;
    }
    if (!strcmp(argv[i], "--insecure")) {
      a->insecure = true;
      continue;
    }
    if (!strcmp(argv[i], "--watch-stdin")) {
      a->watch_stdin = true;
      continue;
    }
    if (!strcmp(argv[i], "--slurm")) {   /* then JOB=N words */
      a->slurm = true;
      char words[4096] = "";
      size_t off = 0;
      while (i + 1 < argc && argv[i + 1][0] != '-' && strchr(argv[i + 1], '=') && off + strlen(argv[i + 1]) + 2 < sizeof words)
        off += (size_t)snprintf(words + off, sizeof words - off, "%s%s", off ? " " : "", argv[++i]);
      rt_status cst = {0};
      if (words[0] && rt_job_counts_parse(words, &a->slurm_jobs, &cst) < 0) {
        fprintf(stderr, "tfsh server --slurm: %s\n", cst.msg);
        return 2;
      }
      continue;
    }
    if ((v = sh_cmd_opt(argc, argv, &i, "--cluster")) || (v = sh_cmd_opt(argc, argv, &i, "--cluster_spec"))) a->spec = v;
    else if ((v = sh_cmd_opt(argc, argv, &i, "--job")) || (v = sh_cmd_opt(argc, argv, &i, "--job_name"))) a->job = v;
    else if ((v = sh_cmd_opt(argc, argv, &i, "--task")) || (v = sh_cmd_opt(argc, argv, &i, "--task_index"))) a->task = v;
    else if ((v = sh_cmd_opt(argc, argv, &i, "--cpus"))) a->cpus = v;
    else if ((v = sh_cmd_opt(argc, argv, &i, "--bind"))) a->bind = v;
    else if ((v = sh_cmd_opt(argc, argv, &i, "--intra-op-threads"))) a->threads[0] = v;
    else if ((v = sh_cmd_opt(argc, argv, &i, "--inter-op-threads"))) a->threads[1] = v;
    else if ((v = sh_cmd_opt(argc, argv, &i, "--ps_hosts"))) a->ps = v;
    else if ((v = sh_cmd_opt(argc, argv, &i, "--worker_hosts"))) a->workers = v;
    else if ((v = sh_cmd_opt(argc, argv, &i, "--max-message-bytes"))) a->max_bytes = v;
    else if ((v = sh_cmd_opt(argc, argv, &i, "--cluster-key"))) a->key = v;
    else if ((v = sh_cmd_opt(argc, argv, &i, "--grpc"))) a->grpc = v;
    else if ((v = sh_cmd_opt(argc, argv, &i, "--allow-write"))) a->allow = v;
    else if ((v = sh_cmd_opt(argc, argv, &i, "--port-base"))) a->slurm_num[0] = v;
    else if ((v = sh_cmd_opt(argc, argv, &i, "--gpus-per-node"))) a->slurm_num[1] = v;
    else if ((v = sh_cmd_opt(argc, argv, &i, "--gpus-per-task"))) a->slurm_num[2] = v;
    else if ((v = sh_cmd_opt(argc, argv, &i, "--tasks-per-node"))) a->slurm_num[3] = v;
    else {
      fprintf(stderr, "tfsh server: unknown argument '%s'\n%s", argv[i], server_usage);
      return 2;
    }
  }
  return -1;
}

/* The cluster a names (--slurm, --cluster, --ps_hosts/--worker_hosts or TF_CONFIG) in *c,
 * with the job and task TF_CONFIG or Slurm give; -1 to go on, else the exit status. */
static int cluster_of(const srv_args *a, rt_cluster **c, char *cfg_job, size_t jn, int *cfg_task,
                      rt_status *st) {
  if (a->slurm) {
    rt_slurm_opts so = {.port_base = 8888, .gpus_per_node = -1, .gpus_per_task = -1, .tasks_per_node = -1};
    int *dst[4] = {&so.port_base, &so.gpus_per_node, &so.gpus_per_task, &so.tasks_per_node};
    static const char *const names[4] = {"--port-base", "--gpus-per-node", "--gpus-per-task", "--tasks-per-node"};
    for (int k = 0; k < 4; k++) {
      char *e = NULL;
      long n = a->slurm_num[k] ? strtol(a->slurm_num[k], &e, 10) : 0;
      if (a->slurm_num[k] && (*e || e == a->slurm_num[k] || n < (k ? 0 : 1) || n > 65000)) {
        fprintf(stderr, "tfsh server: %s must be a number, not '%s'\n", names[k], a->slurm_num[k]);
        return 2;
      }
      if (a->slurm_num[k]) *dst[k] = (int)n;
    }
    if (a->spec || a->ps || a->workers) return fail("%s%s", "--slurm derives the cluster from Slurm: give no --cluster or --ps_hosts", "");
    if (a->slurm_jobs.n) so.jobs = &a->slurm_jobs;
    if (slurm_resolve(&so, c, cfg_job, jn, cfg_task)) return 1;
  } else if (a->spec) {
    *c = rt_cluster_parse(a->spec, st);
  } else if (a->ps || a->workers) {
    *c = rt_cluster_new();
    if (a->ps) sh_cmd_add_hosts(*c, "ps", a->ps);
    if (a->workers) sh_cmd_add_hosts(*c, "worker", a->workers);
    if (rt_cluster_check(*c, st)) {
      rt_cluster_free(*c);
      *c = NULL;
    }
  } else if (getenv("TF_CONFIG")) {
    *c = rt_cluster_from_tf_config(getenv("TF_CONFIG"), cfg_job, jn, cfg_task, st);
  } else {
    fprintf(stderr, "tfsh server: no cluster: give --cluster, --ps_hosts/--worker_hosts, or set TF_CONFIG\n%s",
            server_usage);
    return 2;
  }
  if (!*c) return fail("%s%s", st->msg, "");
  return -1;
}

/* The task this process serves: job and index checked against cluster c; -1 to go on, else
 * the exit status (c freed). */
static int task_of(const srv_args *a, rt_cluster *c, const char *cfg_job, int cfg_task,
                   const char **job, long *index) {
  *job = a->job ? a->job : cfg_job[0] ? cfg_job : NULL;
  if (!*job) {
    rt_cluster_free(c);
    return fail("%s%s", "--job is required (which job of the cluster this process serves)", "");
  }
  char jobs[256];
  rt_cluster_jobs(c, jobs, sizeof jobs);
  int n = rt_cluster_num_tasks(c, *job);
  if (n == 0) {
    fprintf(stderr, "tfsh server: job '%s' is not in the cluster spec; its jobs are: %s (check --job)\n", *job, jobs);
    rt_cluster_free(c);
    return 1;
  }
  char *end = NULL;
  *index = a->task ? strtol(a->task, &end, 10) : cfg_task >= 0 ? cfg_task : 0;
  if (a->task && (*end || end == a->task)) {
    rt_cluster_free(c);
    return fail("--task must be a number, not '%s'%s", a->task, "");
  }
  if (!rt_cluster_find(c, *job, (int)*index)) {
    fprintf(stderr, "tfsh server: task index %ld is out of range for job '%s', which has %d task%s (0..%d) "
            "(check --task)\n", *index, *job, n, n == 1 ? "" : "s", n - 1);
    rt_cluster_free(c);
    return 1;
  }
  return -1;
}

int sh_server_main(int argc, char **argv) {
  srv_args a = {0};
  int rc = parse_args(argc, argv, &a);
  if (rc >= 0) return rc;
  int nthreads[2] = {0, 0};
  for (int k = 0; k < 2; k++) {
    char *end = NULL;
    long n = a.threads[k] ? strtol(a.threads[k], &end, 10) : 0;
    if (a.threads[k] && (*end || n < 1 || n > 4096)) {
      fprintf(stderr, "tfsh server: --%s-op-threads must be a number from 1 to 4096, got '%s'\n",
              k ? "inter" : "intra", a.threads[k]);
      return 2;
    }
    nthreads[k] = (int)n;
  }
  rt_status st = {0};
  char key_tmp[4200] = "";
  const char *key = a.key;
  if (key && !strcmp(key, "-")) {   /* the key from stdin (ssh), never on a command line */
    if (stdin_key(key_tmp, sizeof key_tmp)) return 2;
    key = key_tmp;
  }
  int crc = rt_net_configure(a.max_bytes, key, a.insecure, &st);
  if (crc) {
    if (key_tmp[0]) unlink(key_tmp);
    fprintf(stderr, "tfsh server: %s\n", st.msg);
    return 2;
  }
  rt_cluster *c = NULL;
  char cfg_job[64] = "";
  int cfg_task = -1;
  if ((rc = cluster_of(&a, &c, cfg_job, sizeof cfg_job, &cfg_task, &st)) >= 0) return rc;
  const char *job;
  long index;
  if ((rc = task_of(&a, c, cfg_job, cfg_task, &job, &index)) >= 0) return rc;
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
  const char *allow = a.allow;
  if (!allow) {
    const char *tmp = getenv("TMPDIR");
    snprintf(dflt, sizeof dflt, ".:%s", tmp && *tmp ? tmp : "/tmp");
    allow = dflt;
  }
  rt_files_allow(allow);
  rt_server_opts o = {.n_cpus = a.cpus ? atoi(a.cpus) : 1, .bind_host = a.bind,
                      .intra_op_threads = nthreads[0], .inter_op_threads = nthreads[1]};
  rt_server *s = rt_server_start(c, job, (int)index, &o, &st);
  rt_cluster_free(c);
  if (!s) return fail("%s%s", st.msg, "");
  int inter = rt_inter_threads();
  char cap[32] = "no cap";
  if (inter) snprintf(cap, sizeof cap, "%d", inter);
  printf("tfsh: kernels use %d intra-op thread%s; inter-op: %s\n", rt_intra_threads(),
         rt_intra_threads() == 1 ? "" : "s", cap);
  printf("tfsh: %s\n", op_cpu_summary());
  if (a.grpc) {   /* TF's gRPC has no authentication: off this machine only when asked */
    if (!a.insecure && !grpc_loopback(a.grpc)) {
      rt_server_free(s);
      return fail("--grpc %s: TF's gRPC has no authentication; serve it on a loopback address "
                  "(localhost:PORT) or add --insecure%s", a.grpc, "");
    }
    if (rt_tfmaster_start(a.grpc, rt_server_endpoint(s), &st)) {
      rt_server_free(s);
      return fail("%s%s", st.msg, "");
    }
    printf("tfsh: TF's MasterService (gRPC) on %s\n", a.grpc);
  }
  printf("tfsh: %s serving on %s\n", rt_server_task(s), rt_server_endpoint(s));
  fflush(stdout);
  pthread_t watcher;
  if (a.watch_stdin) pthread_create(&watcher, NULL, watch_stdin_main, NULL);
  int sig = 0;
  sigwait(&sigs, &sig);
  rt_server_free(s);
  if (key_tmp[0]) unlink(key_tmp);
  return 0;
}
