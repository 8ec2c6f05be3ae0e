/* The subcommands of the tfsh binary, one row each (cmd.h): main dispatches by these
 * rows and tfsh --help prints their lines from them. */
#define _GNU_SOURCE
#include "shell/app/cmd.h"

#include <stdio.h>
#include <string.h>

#include "ops/ops.h"          /* BLIS set up before numpy can start it */
#include "runtime/server.h"   /* tfsh keygen */
#include "shell/app/repl.h"
#include "shell/py/lang.h"

static const char usage_line[] = "usage: tfsh [-h] [--version] [-u] [-c CODE | FILE | - | server ... | up SPEC | keygen FILE | lint SPEC | inspect FILE | probe SPEC] [ARGS...]\n";

int sh_cmd_usage_error(const char *fmt, const char *arg) {
  fputs("tfsh: ", stderr);
  fprintf(stderr, fmt, arg);
  fputc('\n', stderr);
  fputs(usage_line, stderr);
  return 2;
}

int sh_cmd_finish(int status) {
  sh_screen_clear(true);
  fflush(stdout);
  fflush(stderr);
  sh_fini();
  return status;
}

/* tfsh -c CODE [ARGS]: sys.argv = ['-c', ARGS...] */
static int run_code(int argc, char **argv) {
  op_cpu_blas_init();
  if (argc < 2) return sh_cmd_usage_error("%s", "argument -c: expected one argument");
  char *code = argv[1];
  argv[1] = "-c";
  sh_init(argc - 1, argv + 1);
  sh_install_sigint();
  int rc = sh_exec_string(code, "<string>", NULL);
  return sh_cmd_finish(rc < 0 ? sh_report_error() : 0);
}

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

static int run_up(int argc, char **argv) {   /* sys.argv = ['up', SPEC...] */
  op_cpu_blas_init();
  sh_init(argc, argv);
  sh_install_sigint();
  int rc = sh_exec_string(up_code, "<tfsh up>", NULL);
  return sh_cmd_finish(rc < 0 ? sh_report_error() : 0);
}

/* In the order --help lists them. */
const sh_subcommand sh_subcommands[] = {
  {"-c", run_code, "-c CODE [ARGS]", "run CODE; sys.argv = ['-c', ARGS...]"},
  {"server", sh_server_main, "server ...",
   "run one task of a cluster (tfsh server --help); in a Slurm\n"
   "allocation: srun tfsh server --slurm ps=1 worker=2"},
  {"up", run_up, "up SPEC",
   "start a local cluster and keep it up until Ctrl-C, printing its\n"
   "ClusterSpec: tfsh up ps=1 worker=2 (every SPEC form of %cluster up)"},
  {"keygen", rt_net_keygen_main, "keygen FILE",
   "write a cluster key (CURVE); give it to every task and client\n"
   "with TFSH_CLUSTER_KEY=FILE or tfsh server --cluster-key FILE\n"
   "(TFSH_INSECURE=1: a script's tf.train.Server may listen on a\n"
   "real host without one, as tfsh server --insecure)"},
  {"lint", sh_lint_main, "lint SPEC", "check a cluster spec or TF_CONFIG before launch (tfsh lint --help)"},
  {"inspect", sh_inspect_main, "inspect FILE [--cluster SPEC]",
   "a GraphDef (.pb) or MetaGraph (.meta) without TensorFlow: its devices,\n"
   "its placement and partitions on SPEC, what would fail (tfsh inspect --help)"},
  {"probe", sh_probe_main, "probe SPEC",
   "ask every task of a running TensorFlow cluster over TF's gRPC: who\n"
   "answers, its devices, which task CreateSession would wait for\n"
   "and why (tfsh probe --help)"},
  {0},
};

const sh_subcommand *sh_cmd_find(const char *name) {
  for (const sh_subcommand *c = sh_subcommands; c->name; c++)
    if (!strcmp(c->name, name)) return c;
  return NULL;
}

/* "  USAGE           HELP": HELP's lines at column 18, under a USAGE too long to share
 * its first line. */
static void help_entry(const char *usage, const char *help) {
  int col = printf("  %s", usage);
  if (col > 17) putchar('\n'), col = 0;
  for (const char *p = help; *p; col = 0) {
    size_t n = strcspn(p, "\n");
    printf("%*s%.*s\n", 18 - col, "", (int)n, p);
    p += n + (p[n] == '\n');
  }
}

void sh_cmd_help(void) {
  printf("%s\n"
         "tfsh: TensorFlow 1.x's distributed runtime as an interactive shell.\n"
         "The language is Python itself (CPython 3.11 embedded): numpy, the standard library\n"
         "and matplotlib are the real ones; import tensorflow is tfsh's own module.\n\n"
         "  (no argument)   interactive shell when stdin is a terminal;\n"
         "                  otherwise read and run a script from stdin\n"
         "  FILE [ARGS]     run FILE (.tfs or .py); sys.argv = [FILE, ARGS...]\n"
         "  -               run the script read from stdin\n",
         usage_line);
  for (const sh_subcommand *c = sh_subcommands; c->name; c++) help_entry(c->usage, c->help);
  printf("  -u              unbuffered stdout and stderr, as python -u (accepted for legacy\n"
         "                  command lines: tfsh's output is always unbuffered, so a killed\n"
         "                  run keeps what it printed; PYTHONUNBUFFERED is the same)\n"
         "  -h, --help      show this help\n"
         "  --version       print the version\n\n"
         "In the shell: %%help lists the magics, name? describes name, Ctrl-D exits.\n");
}
