/* Subcommands of the tfsh binary (dispatched from main before the interpreter starts). */
#ifndef TFSH_SHELL_CMD_H
#define TFSH_SHELL_CMD_H

#include <stdbool.h>
#include <stdio.h>

#include "runtime/cluster.h"

/* ---- the subcommands, one row each (commands.c) ------------------------------------- */
/* man/tfsh.1's SYNOPSIS names the same (tests/unit/test_doc_tables.c checks). */
typedef struct sh_subcommand {
  const char *name;                     /* argv[1]: "keygen" */
  int (*main)(int argc, char **argv);   /* argv[0] is name; the exit status */
  const char *usage;                    /* its --help entry: "keygen FILE" */
  const char *help;                     /* what it does, lines of --help's second column */
} sh_subcommand;
extern const sh_subcommand sh_subcommands[];   /* ends with a row whose name is NULL */
const sh_subcommand *sh_cmd_find(const char *name);   /* NULL: not a subcommand */
void sh_cmd_help(void);                               /* tfsh --help, on stdout */
/* "tfsh: " fmt (with arg) and the usage line on stderr; 2, the exit status. */
int sh_cmd_usage_error(const char *fmt, const char *arg);
/* The interpreter's end: the live views cleared, output flushed; status. */
int sh_cmd_finish(int status);

/* ---- what the subcommands share (cmd.c) ---------------------------------------------- */
/* argv[*i] as "--name=value" or "--name value" (then *i moves past the value): the value,
 * or NULL when argv[*i] is not that option. */
const char *sh_cmd_opt(int argc, char **argv, int *i, const char *name);
/* "h:p,h:p" (--ps_hosts, --worker_hosts) as tasks 0, 1, ... of job. */
void sh_cmd_add_hosts(rt_cluster *c, const char *job, const char *hosts);
/* The ways a subcommand is given a cluster (lint, probe). */
typedef struct sh_spec_args {
  const char *spec;             /* --cluster / --cluster_spec (or the caller's SPEC) */
  const char *ps, *workers;     /* --ps_hosts, --worker_hosts */
  bool tf_config;               /* --tf-config [JSON] / --tf-config=JSON */
  const char *tf_config_text;   /* NULL: $TF_CONFIG */
} sh_spec_args;
/* argv[*i] when it is one of those options: recorded in a (*i past its value), true. */
bool sh_cmd_spec_opt(int argc, char **argv, int *i, sh_spec_args *a);
/* All of a stream, NUL-terminated, malloc'd (stdin, a spec file). */
char *sh_cmd_read_all(FILE *f);

/* tfsh server ...: one task of a cluster, until SIGTERM/SIGINT. argv[0] is "server". */
int sh_server_main(int argc, char **argv);

/* tfsh lint SPEC | --tf-config [JSON] | --ps_hosts .. --worker_hosts ..: check a cluster spec
 * before launch (cmd_lint.c). argv[0] is "lint". Exit 0 ok, 1 problems, 2 usage. */
int sh_lint_main(int argc, char **argv);

/* tfsh probe SPEC [--timeout MS]: every task of a TensorFlow cluster over TF's gRPC, and
 * which one CreateSession would wait for (cmd_probe.c). argv[0] is "probe". Exit 0 every
 * task answers as itself, 1 not, 2 usage. sh_probe_init registers %probe. */
int sh_probe_main(int argc, char **argv);
void sh_probe_init(void);
/* A cluster from a spec's text (JSON, TF_CONFIG JSON, legacy) or from a file holding one. */
rt_cluster *sh_cmd_load_spec(const char *spec, rt_status *st);

/* tfsh inspect FILE [--cluster SPEC]: a GraphDef's or MetaGraph's devices, placement,
 * partitions and what would fail (inspect.c). argv[0] is "inspect". Exit 0 nothing would
 * fail, 1 something would, 2 FILE or SPEC unreadable. sh_inspect prints the same for the
 * %inspect magic (registered by sh_inspect_init): 0, 1, or -1 with st set. */
int sh_inspect_main(int argc, char **argv);
int sh_inspect(const char *path, const char *spec, rt_status *st);
void sh_inspect_init(void);

/* Local clusters from the shell: %cluster/%down/%kill/%restart/%logs magics and the tfsh
 * module (cluster.c). Called once from sh_modules_init_extra (shell/app/init.c). */
void sh_cluster_init(void);

#endif
