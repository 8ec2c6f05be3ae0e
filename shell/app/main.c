/* The program entry: argument parsing and dispatch, nothing else. */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "ops/ops.h"          /* BLIS set up before numpy can start it */
#include "runtime/server.h"   /* tfsh keygen */
#include "shell/app/cmd.h"
#include "shell/py/lang.h"
#include "shell/app/repl.h"

static const char usage_line[] = "usage: tfsh [-h] [--version] [-u] [-c CODE | FILE | - | server ... | up SPEC | keygen FILE | inspect FILE | probe SPEC] [ARGS...]\n";

/* tfsh up SPEC: a local cluster in the foreground, as %cluster up SPEC does in the shell;
 * its tasks end with it (Ctrl-C, SIGTERM). */
static const char up_code[] =
    "import sys, time, tfsh\n"
    "if len(sys.argv) < 2:\n"
    "    raise SystemExit('usage: tfsh up SPEC   (e.g. tfsh up ps=1 worker=2)')\n"
    "tfsh.cluster_up(' '.join(sys.argv[1:]))\n"
    "print('tfsh up: the cluster runs until Ctrl-C', flush=True)\n"
    "try:\n"
    "    while True:\n"
    "        time.sleep(3600)\n"
    "except KeyboardInterrupt:\n"
    "    print('tfsh up: stopping the cluster', flush=True)\n";

static void print_help(void) {
  printf("%s\n"
         "tfsh: TensorFlow 1.x's distributed runtime as an interactive shell.\n"
         "The language is Python itself (CPython 3.11 embedded): numpy, the standard library\n"
         "and matplotlib are the real ones; import tensorflow is tfsh's own module.\n\n"
         "  (no argument)   interactive shell when stdin is a terminal;\n"
         "                  otherwise read and run a script from stdin\n"
         "  FILE [ARGS]     run FILE (.tfs or .py); sys.argv = [FILE, ARGS...]\n"
         "  -               run the script read from stdin\n"
         "  -c CODE [ARGS]  run CODE; sys.argv = ['-c', ARGS...]\n"
         "  server ...      run one task of a cluster (tfsh server --help); in a Slurm\n"
         "                  allocation: srun tfsh server --slurm ps=1 worker=2\n"
         "  up SPEC         start a local cluster and keep it up until Ctrl-C, printing its\n"
         "                  ClusterSpec: tfsh up ps=1 worker=2 (every SPEC form of %%cluster up)\n"
         "  keygen FILE     write a cluster key (CURVE); give it to every task and client\n"
         "                  with TFSH_CLUSTER_KEY=FILE or tfsh server --cluster-key FILE\n"
         "                  (TFSH_INSECURE=1: a script's tf.train.Server may listen on a\n"
         "                  real host without one, as tfsh server --insecure)\n"
         "  lint SPEC       check a cluster spec or TF_CONFIG before launch (tfsh lint --help)\n"
         "  inspect FILE [--cluster SPEC]\n"
         "                  a GraphDef (.pb) or MetaGraph (.meta) without TensorFlow: its devices,\n"
         "                  its placement and partitions on SPEC, what would fail (tfsh inspect --help)\n"
         "  probe SPEC      ask every task of a running TensorFlow cluster over TF's gRPC: who\n"
         "                  answers, its devices, which task CreateSession would wait for\n"
         "                  and why (tfsh probe --help)\n"
         "  -u              unbuffered stdout and stderr, as python -u (accepted for legacy\n"
         "                  command lines: tfsh's output is always unbuffered, so a killed\n"
         "                  run keeps what it printed; PYTHONUNBUFFERED is the same)\n"
         "  -h, --help      show this help\n"
         "  --version       print the version\n\n"
         "In the shell: %%help lists the magics, name? describes name, Ctrl-D exits.\n",
         usage_line);
}

static int usage_error(const char *fmt, const char *arg) {
  fputs("tfsh: ", stderr);
  fprintf(stderr, fmt, arg);
  fputc('\n', stderr);
  fputs(usage_line, stderr);
  return 2;
}

static int finish(int status) {
  sh_screen_clear(true);
  fflush(stdout);
  fflush(stderr);
  sh_fini();
  return status;
}

int main(int argc, char **argv) {
  /* Tensor buffers of many MiB come and go every step; glibc would mmap and unmap each,
   * and fresh pages cost ~14 us per 4 KiB to touch on these machines. Keep them in the
   * heap for reuse instead. */
  mallopt(M_MMAP_THRESHOLD, 512 << 20);
  /* One arena: a thread's own arena holds at most 64 MiB, so big tensors received on
   * ZeroMQ's I/O thread would be fresh mmaps every step whatever the threshold. */
  mallopt(M_ARENA_MAX, 1);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  /* -u (python's unbuffered flag, before the rest): nothing to do, stdio is unbuffered
   * already (shell/py/interp.c); dropped so that the rest reads as without it. */
  while (argc > 1 && !strcmp(argv[1], "-u")) {
    argv[1] = argv[0];
    argv++;
    argc--;
  }
  if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) { print_help(); return 0; }
  if (argc > 1 && (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V"))) {
    printf("tfsh %s\n", TFSH_VERSION);
    return 0;
  }
  /* ---- subcommands dispatch here, before the interpreter starts ---- */
  if (argc > 1 && !strcmp(argv[1], "server")) return sh_server_main(argc - 1, argv + 1);
  if (argc > 1 && !strcmp(argv[1], "keygen")) return rt_net_keygen_main(argc - 1, argv + 1);
  if (argc > 1 && !strcmp(argv[1], "lint")) return sh_lint_main(argc - 1, argv + 1);
  if (argc > 1 && !strcmp(argv[1], "inspect")) return sh_inspect_main(argc - 1, argv + 1);
  if (argc > 1 && !strcmp(argv[1], "probe")) return sh_probe_main(argc - 1, argv + 1);

  op_cpu_blas_init();
  if (argc > 1 && !strcmp(argv[1], "-c")) {
    if (argc < 3) return usage_error("%s", "argument -c: expected one argument");
    char *code = argv[2];
    argv[2] = "-c";          /* sys.argv = ['-c', ARGS...] */
    sh_init(argc - 2, argv + 2);
    sh_install_sigint();
    int rc = sh_exec_string(code, "<string>", NULL);
    return finish(rc < 0 ? sh_report_error() : 0);
  }
  if (argc > 1 && !strcmp(argv[1], "up")) {   /* sys.argv = ['up', SPEC...] */
    sh_init(argc - 1, argv + 1);
    sh_install_sigint();
    int rc = sh_exec_string(up_code, "<tfsh up>", NULL);
    return finish(rc < 0 ? sh_report_error() : 0);
  }
  if (argc > 1 && argv[1][0] == '-' && argv[1][1]) return usage_error("unknown option %s", argv[1]);

  if (argc > 1 && strcmp(argv[1], "-")) {   /* a script file */
    if (access(argv[1], R_OK) != 0) {
      fprintf(stderr, "tfsh: can't open file '%s': [Errno 2] No such file or directory\n", argv[1]);
      return 2;
    }
    sh_init(argc - 1, argv + 1);
    sh_install_sigint();
    int rc = sh_exec_file(argv[1], NULL);
    return finish(rc < 0 ? sh_report_error() : 0);
  }

  if (argc == 1 && isatty(STDIN_FILENO)) {   /* the interactive shell */
    char *sargv[] = {""};
    sh_init(1, sargv);
    return finish(sh_repl_run());
  }

  /* a script on stdin, like `python3 < script.py` */
  char *sargv_stdin[] = {argc > 1 ? "-" : ""};
  sh_init(argc > 1 ? argc - 1 : 1, argc > 1 ? argv + 1 : sargv_stdin);
  sh_install_sigint();
  char *src = sh_cmd_read_all(stdin);
  int rc = sh_exec_string(src, "<stdin>", NULL);
  free(src);
  return finish(rc < 0 ? sh_report_error() : 0);
}
