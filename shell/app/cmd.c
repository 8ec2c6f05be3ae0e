/* What the subcommands (tfsh server, tfsh lint, a script on stdin) share: their option
 * parser, --ps_hosts/--worker_hosts lists, reading a whole stream. */
#define _GNU_SOURCE
#include "shell/app/cmd.h"

#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"

const char *sh_cmd_opt(int argc, char **argv, int *i, const char *name) {
  size_t n = strlen(name);
  if (strncmp(argv[*i], name, n)) return NULL;
  if (argv[*i][n] == '=') return argv[*i] + n + 1;
  if (argv[*i][n] == '\0' && *i + 1 < argc) return argv[++*i];
  return NULL;
}

void sh_cmd_add_hosts(rt_cluster *c, const char *job, const char *hosts) {
  char *copy = xstrdup(hosts), *save = NULL;
  int i = 0;
  for (char *h = strtok_r(copy, ",", &save); h; h = strtok_r(NULL, ",", &save)) rt_cluster_add(c, job, i++, h);
  free(copy);
}

char *sh_cmd_read_all(FILE *f) {
  size_t n = 0, cap = 65536;
  char *buf = xmalloc(cap);
  size_t got;
  while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
    n += got;
    if (cap - n < 2) buf = xrealloc(buf, cap *= 2);
  }
  buf[n] = 0;
  return buf;
}

bool sh_cmd_spec_opt(int argc, char **argv, int *i, sh_spec_args *a) {
  const char *v;
  if (!strcmp(argv[*i], "--tf-config") || !strcmp(argv[*i], "--tf_config")) {
    a->tf_config = true;
    if (*i + 1 < argc && argv[*i + 1][0] == '{') a->tf_config_text = argv[++*i];
  } else if (!strncmp(argv[*i], "--tf-config=", 12) || !strncmp(argv[*i], "--tf_config=", 12)) {
    a->tf_config = true;
    a->tf_config_text = argv[*i] + 12;
  } else if ((v = sh_cmd_opt(argc, argv, i, "--cluster")) || (v = sh_cmd_opt(argc, argv, i, "--cluster_spec"))) {
    a->spec = v;
  } else if ((v = sh_cmd_opt(argc, argv, i, "--ps_hosts"))) {
    a->ps = v;
  } else if ((v = sh_cmd_opt(argc, argv, i, "--worker_hosts"))) {
    a->workers = v;
  } else {
    return false;
  }
  return true;
}
