/* `tfsh probe SPEC` and %probe: is every task of a TensorFlow cluster up, and if not, which
 * one would CreateSession wait for (runtime/probe.h). */
#include <ctype.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "runtime/probe.h"
#include "shell/app/cmd.h"
#include "shell/app/repl.h"

enum { DEFAULT_TIMEOUT_MS = 1500 };

static const char probe_usage[] =
    "usage: tfsh probe SPEC [--timeout MS]\n"
    "       tfsh probe --tf-config [JSON] | --ps_hosts H:P,.. --worker_hosts H:P,..\n"
    "Asks every task of a TensorFlow cluster over TF's gRPC (WorkerService.GetStatus) and\n"
    "prints one row per task, then which task CreateSession would wait for and why.\n"
    "SPEC: JSON {\"ps\": [\"h:p\"], ...}, a TF_CONFIG JSON, the legacy ps|h:p,worker|h:p, or a\n"
    "file holding one. --timeout: the whole probe's bound (default 1500 ms).\n"
    "Exit 0 when every task answers as itself, 1 otherwise, 2 on a bad spec or argument.\n";

/* A spec's text (JSON, TF_CONFIG JSON, legacy) or a file holding one. */
rt_cluster *sh_cmd_load_spec(const char *spec, rt_status *st) {
  const char *s = spec;
  while (isspace((unsigned char)*s)) s++;
  char *text = NULL;
  if (*s != '{' && !strchr(s, '|')) {
    FILE *f = fopen(s, "r");
    if (!f) {
      rt_error(st, RT_INVALID_ARGUMENT, "'%s' is neither a cluster spec nor a readable file", s);
      return NULL;
    }
    text = sh_cmd_read_all(f);
    fclose(f);
    if (!text) {
      rt_error(st, RT_INVALID_ARGUMENT, "cannot read %s", s);
      return NULL;
    }
    s = text;
    while (isspace((unsigned char)*s)) s++;
  }
  json_t *j = *s == '{' ? json_loads(s, 0, NULL) : NULL;
  bool tf_config = j && json_is_object(j) && json_object_get(j, "cluster");
  json_decref(j);
  rt_cluster *c = tf_config ? rt_cluster_from_tf_config(s, NULL, 0, NULL, st) : rt_cluster_parse(s, st);
  free(text);
  return c;
}

static int probe_run(rt_cluster *c, int timeout_ms) {
  rt_probe_row *rows = NULL;
  if (rt_probe(c, timeout_ms, &rows)) {
    fprintf(stderr, "tfsh probe: out of memory\n");
    return 2;
  }
  int rc = rt_probe_print(stdout, rows, c->n);
  fflush(stdout);
  free(rows);
  return rc;
}

static bool parse_timeout(const char *v, int *ms) {
  char *end;
  long t = strtol(v, &end, 10);
  if (*v && !*end && t >= 1 && t <= 600000) {
    *ms = (int)t;
    return true;
  }
  fprintf(stderr, "tfsh probe: --timeout wants milliseconds from 1 to 600000, not '%s'\n", v);
  return false;
}

int sh_probe_main(int argc, char **argv) {
  sh_spec_args a = {0};
  const char *v;
  int timeout_ms = DEFAULT_TIMEOUT_MS;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      fputs(probe_usage, stdout);
      return 0;
    }
    if (sh_cmd_spec_opt(argc, argv, &i, &a)) {
    } else if ((v = sh_cmd_opt(argc, argv, &i, "--timeout"))) {
      if (!parse_timeout(v, &timeout_ms)) return 2;
    } else if (argv[i][0] == '-' && argv[i][1]) {
      fprintf(stderr, "tfsh probe: unknown argument '%s'\n%s", argv[i], probe_usage);
      return 2;
    } else if (!a.spec) {
      a.spec = argv[i];
    } else {
      fprintf(stderr, "tfsh probe: give one spec (got '%s' and '%s')\n%s", a.spec, argv[i], probe_usage);
      return 2;
    }
  }
  const char *spec = a.spec, *ps = a.ps, *workers = a.workers, *tf_config_text = a.tf_config_text;
  bool tf_config = a.tf_config;
  rt_status st = {0};
  rt_cluster *c = NULL;
  if (tf_config) {
    if (!tf_config_text) tf_config_text = getenv("TF_CONFIG");
    if (!tf_config_text || !*tf_config_text) {
      fprintf(stderr, "tfsh probe: --tf-config: TF_CONFIG is not set (or give the JSON after --tf-config)\n");
      return 2;
    }
    c = rt_cluster_from_tf_config(tf_config_text, NULL, 0, NULL, &st);
  } else if (ps || workers) {
    c = rt_cluster_new();
    if (ps) sh_cmd_add_hosts(c, "ps", ps);
    if (workers) sh_cmd_add_hosts(c, "worker", workers);
    if (rt_cluster_check(c, &st)) rt_cluster_free(c), c = NULL;
  } else if (spec) {
    c = sh_cmd_load_spec(spec, &st);
  } else {
    fprintf(stderr, "tfsh probe: which cluster? give a spec\n%s", probe_usage);
    return 2;
  }
  if (!c) {
    fprintf(stderr, "tfsh probe: %s\n", st.msg);
    return 2;
  }
  int rc = probe_run(c, timeout_ms);
  rt_cluster_free(c);
  return rc;
}

/* %probe SPEC [--timeout MS]: the spec is the rest of the line. */
static int magic_probe(const char *args) {
  char *line = xstrdup(args ? args : "");
  int timeout_ms = DEFAULT_TIMEOUT_MS;
  char *t = strstr(line, "--timeout");
  if (t) {
    char *v = t + 9;
    v += strspn(v, " \t=");
    char *end = v + strcspn(v, " \t");
    char saved = *end;
    *end = 0;
    bool ok = parse_timeout(v, &timeout_ms);
    *end = saved;
    memmove(t, end, strlen(end) + 1);
    if (!ok) {
      free(line);
      return 0;
    }
  }
  const char *spec = line;
  while (isspace((unsigned char)*spec)) spec++;
  if (!*spec) {
    spec = getenv("TF_CONFIG");
    if (!spec || !*spec) {
      fputs("%probe SPEC [--timeout MS]: give the cluster (or set TF_CONFIG)\n", stdout);
      free(line);
      return 0;
    }
  }
  rt_status st = {0};
  rt_cluster *c = sh_cmd_load_spec(spec, &st);
  if (!c) fprintf(stderr, "%%probe: %s\n", st.msg);
  else probe_run(c, timeout_ms), rt_cluster_free(c);
  free(line);
  return 0;
}

void sh_probe_init(void) {
  sh_magic_register("probe", magic_probe, "%probe SPEC [--timeout MS]: ask every task of a TensorFlow cluster over gRPC; who would CreateSession wait for");
}
