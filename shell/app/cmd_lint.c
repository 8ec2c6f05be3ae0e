/* `tfsh lint`: everything about a cluster spec (or TF_CONFIG) that can be checked before
 * launch, one line per problem with its fix: syntax, job names, host:port addresses, two
 * tasks on one address (also through different names for one host), hosts that do not
 * resolve, local ports another process already holds, and a TF_CONFIG task that is not in
 * its cluster. Exit 0 ("ok: N tasks in M jobs"), 1 (problems) or 2 (usage). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/alloc.h"
#include "runtime/cluster.h"
#include "shell/app/cmd.h"

static const char lint_usage[] =
  "usage: tfsh lint SPEC | FILE | --tf-config [JSON] | --ps_hosts H:P,.. --worker_hosts H:P,..\n"
  "  SPEC: JSON {\"ps\": [\"host:port\"], \"worker\": [...]} or legacy ps|h:p;h:p,worker|h:p\n"
  "  --tf-config: the TF_CONFIG given (or $TF_CONFIG): {\"cluster\": {...}, \"task\": {\"type\": .., \"index\": ..}}\n"
  "Checks: syntax, job names, host:port addresses, two tasks on one address, hosts that do not\n"
  "resolve, local ports already in use, a TF_CONFIG task that is not in its cluster.\n"
  "Prints one line per problem with its fix and exits 1; otherwise \"ok: N tasks in M jobs\".\n";

static int problems;

static void problem(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void problem(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("tfsh lint: ", stdout);
  vprintf(fmt, ap);
  fputc('\n', stdout);
  va_end(ap);
  problems++;
}

/* ---- a lenient parse: the tasks as written, before any check (rt_cluster_parse_each) ---- */

/* A problem of the parse, after the name of what was parsed (ctx). */
static void parse_problem(void *ctx, const char *msg) { problem("%s: %s", (const char *)ctx, msg); }

static rt_cluster *raw_spec(const char *text, const char *what) {
  return rt_cluster_parse_each(text, parse_problem, (void *)what);
}

/* ---- checks ------------------------------------------------------------------------------ */

typedef struct resolved {
  bool ok, tcp;
  struct sockaddr_storage sa;
  socklen_t len;
  char host[256], ip[64];
  int port;
} resolved;

/* Split "host:port" ("[v6]:port" too); false when it is not that form. */
static bool split_addr(const char *addr, char *host, size_t hn, int *port) {
  const char *a = addr;
  if (!strncmp(a, "tcp://", 6)) a += 6;
  else if (!strncmp(a, "grpc://", 7)) a += 7;
  else if (!strncmp(a, "tfs://", 6)) a += 6;
  else if (strstr(a, "://")) return false;
  const char *colon = strrchr(a, ':');
  if (!colon || colon == a) return false;
  size_t n = (size_t)(colon - a);
  if (a[0] == '[' && n >= 2 && a[n - 1] == ']') snprintf(host, hn, "%.*s", (int)(n - 2), a + 1);
  else snprintf(host, hn, "%.*s", (int)n, a);
  *port = atoi(colon + 1);
  return true;
}

static void check_resolve(const rt_task_addr *t, resolved *r) {
  char name[160];
  snprintf(name, sizeof name, "/job:%s/task:%d", t->job, t->index);
  if (!split_addr(t->addr, r->host, sizeof r->host, &r->port)) return;   /* inproc:// etc. */
  r->tcp = true;
  if (r->port == 0) {
    problem("%s: address %s has port 0; give a fixed port (the other tasks must know it)", name, t->addr);
    return;
  }
  if (!strcmp(r->host, "*")) {
    problem("%s: address %s: '*' is not a host others can connect to; give this machine's name or address",
            name, t->addr);
    return;
  }
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL, *pick = NULL;
  int e = getaddrinfo(r->host, NULL, &hints, &res);
  if (e) {
    problem("%s: host '%s' does not resolve (%s); fix the name, add it to /etc/hosts, or give an IP address",
            name, r->host, gai_strerror(e));
    return;
  }
  for (struct addrinfo *p = res; p && !pick; p = p->ai_next)
    if (p->ai_family == AF_INET) pick = p;
  if (!pick) pick = res;
  memcpy(&r->sa, pick->ai_addr, pick->ai_addrlen);
  r->len = pick->ai_addrlen;
  if (r->sa.ss_family == AF_INET) {
    ((struct sockaddr_in *)&r->sa)->sin_port = htons((uint16_t)r->port);
    inet_ntop(AF_INET, &((struct sockaddr_in *)&r->sa)->sin_addr, r->ip, sizeof r->ip);
  } else {
    ((struct sockaddr_in6 *)&r->sa)->sin6_port = htons((uint16_t)r->port);
    inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&r->sa)->sin6_addr, r->ip, sizeof r->ip);
  }
  freeaddrinfo(res);
  r->ok = true;
}

/* Bind as the server would (ZeroMQ sets SO_REUSEADDR): in use → a problem; an address
 * that is not this machine's → nothing to check here. */
static void check_port(const rt_task_addr *t, const resolved *r) {
  char name[160];
  snprintf(name, sizeof name, "/job:%s/task:%d", t->job, t->index);
  int fd = socket(r->sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(fd, (const struct sockaddr *)&r->sa, r->len) < 0) {
    int e = errno;
    if (e == EADDRINUSE)
      problem("%s: port %d on %s (%s) is already in use on this machine; stop the process that holds it, "
              "or give this task another port", name, r->port, r->host, r->ip);
    else if (e == EACCES)
      problem("%s: port %d on %s needs privileges to bind; give this task a port above 1023", name, r->port,
              r->host);
  } else if (listen(fd, 1) < 0 && errno == EADDRINUSE) {
    problem("%s: port %d on %s (%s) is already in use on this machine; stop the process that holds it, "
            "or give this task another port", name, r->port, r->host, r->ip);
  }
  close(fd);
}

static bool same_endpoint(const resolved *a, const resolved *b) {
  if (!a->ok || !b->ok || a->port != b->port || a->sa.ss_family != b->sa.ss_family) return false;
  return !strcmp(a->ip, b->ip);
}

static int lint_cluster(rt_cluster *c) {
  rt_status st = {0};
  /* names and addresses, one task at a time (the runtime's own words) */
  bool *bad = xcalloc((size_t)c->n + 1, sizeof *bad);
  for (int i = 0; i < c->n; i++) {
    rt_cluster *one = rt_cluster_new();
    rt_cluster_add(one, c->tasks[i].job, c->tasks[i].index, c->tasks[i].addr);
    if (rt_cluster_check(one, &st)) {
      bool seen = false;   /* a bad job name: once per job */
      for (int k = 0; k < i && strstr(st.msg, "job name"); k++) seen |= !strcmp(c->tasks[k].job, c->tasks[i].job);
      if (!seen) problem("%s", st.msg);
      bad[i] = true;
    }
    rt_cluster_free(one);
  }
  /* two tasks, one address (as written) */
  bool *dup = xcalloc((size_t)c->n + 1, sizeof *dup);
  for (int i = 0; i < c->n; i++)
    for (int k = 0; k < i; k++)
      if (!strcmp(c->tasks[k].addr, c->tasks[i].addr)) {
        rt_cluster *two = rt_cluster_new();
        rt_cluster_add(two, c->tasks[k].job, c->tasks[k].index, c->tasks[k].addr);
        rt_cluster_add(two, c->tasks[i].job, c->tasks[i].index, c->tasks[i].addr);
        if (rt_cluster_check(two, &st) && strstr(st.msg, "both have")) problem("%s", st.msg);
        rt_cluster_free(two);
        dup[i] = true;
        break;
      }
  /* hosts, then one address through two names, then local ports */
  resolved *r = xcalloc((size_t)c->n + 1, sizeof *r);
  for (int i = 0; i < c->n; i++)
    if (!bad[i] && !dup[i]) check_resolve(&c->tasks[i], &r[i]);
  for (int i = 0; i < c->n; i++)
    for (int k = 0; k < i; k++)
      if (!dup[i] && same_endpoint(&r[k], &r[i])) {
        char a[160], b[160];
        snprintf(a, sizeof a, "/job:%s/task:%d", c->tasks[k].job, c->tasks[k].index);
        snprintf(b, sizeof b, "/job:%s/task:%d", c->tasks[i].job, c->tasks[i].index);
        problem("%s (%s) and %s (%s) are the same address %s:%d; give each task its own host:port", a,
                c->tasks[k].addr, b, c->tasks[i].addr, r[i].ip, r[i].port);
        dup[i] = true;
        break;
      }
  for (int i = 0; i < c->n; i++)
    if (r[i].ok && !dup[i]) check_port(&c->tasks[i], &r[i]);
  free(r);
  free(dup);
  free(bad);
  return problems;
}

static int jobs_count(const rt_cluster *c) {
  int m = 0;
  for (int i = 0; i < c->n; i++) {
    bool seen = false;
    for (int k = 0; k < i; k++) seen |= !strcmp(c->tasks[k].job, c->tasks[i].job);
    m += !seen;
  }
  return m;
}

static int finish(rt_cluster *c) {
  int rc = 0;
  if (c && !problems && c->n == 0) problem("cluster spec: no tasks; give at least one job with one task");
  if (problems) rc = 1;
  else {
    int m = jobs_count(c);
    printf("ok: %d task%s in %d job%s\n", c->n, c->n == 1 ? "" : "s", m, m == 1 ? "" : "s");
  }
  rt_cluster_free(c);
  fflush(stdout);
  return rc;
}

static int lint_tf_config(const char *text) {
  json_error_t err;
  json_t *j = json_loads(text, 0, &err);
  if (!j) {
    problem("TF_CONFIG: invalid JSON at line %d column %d: %s", err.line, err.column, err.text);
    return finish(NULL);
  }
  json_t *cl = json_object_get(j, "cluster");
  rt_cluster *c = rt_cluster_new();
  if (!json_is_object(j)) problem("TF_CONFIG: expected an object {\"cluster\": {...}, \"task\": {...}}");
  else if (!cl) problem("TF_CONFIG: no \"cluster\" object; add \"cluster\": {\"worker\": [\"host:port\"], ...}");
  else if (!json_is_object(cl)) parse_problem("TF_CONFIG: cluster", "expected an object {job: [\"host:port\", ...]}");
  else {
    char *text = json_dumps(cl, 0);
    rt_cluster *parsed = text ? raw_spec(text, "TF_CONFIG: cluster") : NULL;
    free(text);
    if (parsed) {
      rt_cluster_free(c);
      c = parsed;
    }
  }
  int before = problems;
  if (cl) lint_cluster(c);
  (void)before;
  json_t *task = json_is_object(j) ? json_object_get(j, "task") : NULL;
  if (task) {
    json_t *type = json_object_get(task, "type"), *idx = json_object_get(task, "index");
    if (!json_is_string(type) || (idx && !json_is_integer(idx))) {
      problem("TF_CONFIG: \"task\" needs \"type\" (a string) and \"index\" (an integer), e.g. "
              "{\"type\": \"worker\", \"index\": 0}");
    } else if (cl) {
      const char *job = json_string_value(type);
      long index = idx ? (long)json_integer_value(idx) : 0;
      int n = rt_cluster_num_tasks(c, job);
      char jobs[256];
      rt_cluster_jobs(c, jobs, sizeof jobs);
      if (n == 0 && strcmp(job, "evaluator"))
        problem("TF_CONFIG: task type '%s' is not a job of the cluster; its jobs are: %s (fix \"task\": {\"type\": ...})",
                job, jobs);
      else if (n > 0 && !rt_cluster_find(c, job, (int)index))
        problem("TF_CONFIG: task index %ld is out of range for job '%s', which has %d task%s (0..%d) "
                "(fix \"task\": {\"index\": ...})", index, job, n, n == 1 ? "" : "s", n - 1);
    }
  }
  json_decref(j);
  return finish(c);
}

int sh_lint_main(int argc, char **argv) {
  sh_spec_args a = {0};
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      fputs(lint_usage, stdout);
      return 0;
    }
    if (sh_cmd_spec_opt(argc, argv, &i, &a)) {
    } else if (argv[i][0] == '-' && argv[i][1]) {
      fprintf(stderr, "tfsh lint: unknown argument '%s'\n%s", argv[i], lint_usage);
      return 2;
    } else if (!a.spec) {
      a.spec = argv[i];
    } else {
      fprintf(stderr, "tfsh lint: give one spec (got '%s' and '%s')\n%s", a.spec, argv[i], lint_usage);
      return 2;
    }
  }
  const char *spec = a.spec, *ps = a.ps, *workers = a.workers, *tf_config_text = a.tf_config_text;
  bool tf_config = a.tf_config;
  if (tf_config) {
    if (!tf_config_text) tf_config_text = getenv("TF_CONFIG");
    if (!tf_config_text || !*tf_config_text) {
      fprintf(stderr, "tfsh lint: --tf-config: TF_CONFIG is not set (or give the JSON after --tf-config)\n");
      return 2;
    }
    return lint_tf_config(tf_config_text);
  }
  if (ps || workers) {
    rt_cluster *c = rt_cluster_new();
    const char *jobs[2][2] = {{"ps", ps}, {"worker", workers}};
    for (int k = 0; k < 2; k++)
      if (jobs[k][1]) sh_cmd_add_hosts(c, jobs[k][0], jobs[k][1]);
    lint_cluster(c);
    return finish(c);
  }
  if (!spec) {
    fprintf(stderr, "tfsh lint: nothing to check\n%s", lint_usage);
    return 2;
  }
  char *text = NULL;
  const char *s = spec;
  while (isspace((unsigned char)*s)) s++;
  if (*s != '{' && !strchr(s, '|') && access(s, R_OK) == 0) {
    FILE *f = fopen(s, "r");
    if (!f || !(text = sh_cmd_read_all(f))) {
      fprintf(stderr, "tfsh lint: cannot read %s\n", s);
      if (f) fclose(f);
      return 2;
    }
    fclose(f);
    /* a file may hold a TF_CONFIG too */
    json_t *j = json_loads(text, 0, NULL);
    bool is_tf_config = j && json_is_object(j) && json_object_get(j, "cluster");
    json_decref(j);
    if (is_tf_config) {
      int rc = lint_tf_config(text);
      free(text);
      return rc;
    }
    s = text;
  }
  rt_cluster *c = raw_spec(s, "cluster spec");
  free(text);
  if (c) lint_cluster(c);
  return finish(c);
}
