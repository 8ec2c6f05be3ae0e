#include "runtime/cluster.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"

rt_cluster *rt_cluster_new(void) { return xcalloc(1, sizeof(rt_cluster)); }

void rt_cluster_free(rt_cluster *c) {
  if (!c) return;
  for (int i = 0; i < c->n; i++) {
    free(c->tasks[i].job);
    free(c->tasks[i].addr);
  }
  free(c->tasks);
  free(c);
}

rt_cluster *rt_cluster_copy(const rt_cluster *c) {
  rt_cluster *d = rt_cluster_new();
  for (int i = 0; d && i < c->n; i++)
    rt_cluster_add(d, c->tasks[i].job, c->tasks[i].index, c->tasks[i].addr);
  return d;
}

void rt_cluster_add(rt_cluster *c, const char *job, int index, const char *addr) {
  for (int i = 0; i < c->n; i++)
    if (!strcmp(c->tasks[i].job, job) && c->tasks[i].index == index) {
      free(c->tasks[i].addr);
      c->tasks[i].addr = xstrdup(addr);
      return;
    }
  c->tasks = xrealloc(c->tasks, (size_t)(c->n + 1) * sizeof *c->tasks);
  c->tasks[c->n++] = (rt_task_addr){xstrdup(job), index, xstrdup(addr)};
}

const rt_task_addr *rt_cluster_find(const rt_cluster *c, const char *job, int index) {
  for (int i = 0; i < c->n; i++)
    if (!strcmp(c->tasks[i].job, job) && c->tasks[i].index == index) return &c->tasks[i];
  return NULL;
}

void rt_endpoint(const char *addr, char *buf, size_t n) {
  static const char *const strip[] = {"grpc://", "tfs://", "tcp://"};
  for (size_t i = 0; i < sizeof strip / sizeof *strip; i++)
    if (!strncmp(addr, strip[i], strlen(strip[i]))) {
      snprintf(buf, n, "tcp://%s", addr + strlen(strip[i]));
      return;
    }
  if (strstr(addr, "://"))
    snprintf(buf, n, "%s", addr);
  else
    snprintf(buf, n, "tcp://%s", addr);
}

void rt_task_name(const char *job, int index, char *buf, size_t n) {
  snprintf(buf, n, "/job:%s/replica:0/task:%d", job, index);
}

/* ---- parsing and checking ----------------------------------------------------------- */

#include <ctype.h>
#include <jansson.h>

bool rt_cluster_valid_job(const char *s) {
  if (!*s || !(isalpha((unsigned char)*s) || *s == '_')) return false;
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && *s != '_') return false;
  return true;
}

bool rt_cluster_valid_address(const char *s) {
  if (strstr(s, "://")) return true;
  const char *colon = strrchr(s, ':');
  if (!colon || colon == s || !colon[1]) return false;
  for (const char *p = colon + 1; *p; p++)
    if (!isdigit((unsigned char)*p)) return false;
  return atoi(colon + 1) <= 65535;
}

int rt_cluster_check(const rt_cluster *c, rt_status *st) {
  for (int i = 0; i < c->n; i++) {
    const rt_task_addr *t = &c->tasks[i];
    if (!rt_cluster_valid_job(t->job))
      return rt_error(st, RT_INVALID_ARGUMENT,
                      "cluster spec: '%s' is not a valid job name (letters, digits and _)", t->job);
    if (!rt_cluster_valid_address(t->addr))
      return rt_error(st, RT_INVALID_ARGUMENT,
                      "cluster spec: /job:%s/task:%d has address '%s'; expected \"host:port\"",
                      t->job, t->index, t->addr);
    for (int k = 0; k < i; k++)
      if (!strcmp(c->tasks[k].addr, t->addr))
        return rt_error(st, RT_INVALID_ARGUMENT,
                        "cluster spec: /job:%s/task:%d and /job:%s/task:%d both have address %s; "
                        "give each task its own host:port",
                        c->tasks[k].job, c->tasks[k].index, t->job, t->index, t->addr);
  }
  return RT_OK;
}

int rt_cluster_num_tasks(const rt_cluster *c, const char *job) {
  int n = 0;
  for (int i = 0; i < c->n; i++) n += !strcmp(c->tasks[i].job, job);
  return n;
}

void rt_cluster_jobs(const rt_cluster *c, char *buf, size_t n) {
  size_t off = 0;
  buf[0] = '\0';
  for (int i = 0; i < c->n && off < n; i++) {
    bool seen = false;
    for (int k = 0; k < i; k++) seen |= !strcmp(c->tasks[k].job, c->tasks[i].job);
    if (!seen) off += (size_t)snprintf(buf + off, n - off, "%s%s", off ? ", " : "", c->tasks[i].job);
  }
}

/* The tasks of a JSON cluster object; each malformed entry goes to problem() and is
 * skipped. -1 when obj is not an object. */
static int json_cluster(rt_cluster *c, json_t *obj, rt_cluster_problem_fn problem, void *ctx) {
  const char *job;
  json_t *tasks;
  char msg[600];
  if (!json_is_object(obj)) {
    problem(ctx, "expected an object {job: [\"host:port\", ...]}");
    return -1;
  }
  json_object_foreach(obj, job, tasks) {
    if (json_is_array(tasks)) {
      size_t i;
      json_t *a;
      json_array_foreach(tasks, i, a) {
        if (!json_is_string(a)) {
          snprintf(msg, sizeof msg, "/job:%s/task:%zu: the address must be a string \"host:port\"", job, i);
          problem(ctx, msg);
          continue;
        }
        rt_cluster_add(c, job, (int)i, json_string_value(a));
      }
    } else if (json_is_object(tasks)) {
      const char *key;
      json_t *a;
      json_object_foreach(tasks, key, a) {
        char *end;
        long idx = strtol(key, &end, 10);
        if (*end || end == key || idx < 0 || idx > 1000000) {
          snprintf(msg, sizeof msg, "job %s: task index '%s' is not a number; write {\"0\": \"host:port\"}", job, key);
          problem(ctx, msg);
          continue;
        }
        if (!json_is_string(a)) {
          snprintf(msg, sizeof msg, "/job:%s/task:%ld: the address must be a string \"host:port\"", job, idx);
          problem(ctx, msg);
          continue;
        }
        rt_cluster_add(c, job, (int)idx, json_string_value(a));
      }
    } else {
      snprintf(msg, sizeof msg,
               "job %s must map to a list of addresses [\"host:port\", ...] or {\"index\": \"host:port\"}", job);
      problem(ctx, msg);
    }
  }
  return 0;
}

/* s without the white space around it (in place). */
static char *trim(char *s) {
  while (isspace((unsigned char)*s)) s++;
  size_t n = strlen(s);
  while (n && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
  return s;
}

rt_cluster *rt_cluster_parse_each(const char *text, rt_cluster_problem_fn problem, void *ctx) {
  rt_cluster *c = rt_cluster_new();
  char msg[600];
  while (isspace((unsigned char)*text)) text++;
  if (*text == '{') {
    json_error_t err;
    json_t *j = json_loads(text, 0, &err);
    int rc = -1;
    if (!j) {
      snprintf(msg, sizeof msg, "invalid JSON at line %d column %d: %s", err.line, err.column, err.text);
      problem(ctx, msg);
    } else {
      rc = json_cluster(c, j, problem, ctx);
    }
    json_decref(j);
    if (rc) {
      rt_cluster_free(c);
      return NULL;
    }
    return c;
  }
  /* legacy: job|h:p;h:p,job|h:p */
  char *copy = xstrdup(text), *save1 = NULL;
  for (char *part = strtok_r(copy, ",", &save1); part; part = strtok_r(NULL, ",", &save1)) {
    part = trim(part);
    char *bar = strchr(part, '|');
    if (!bar) {
      snprintf(msg, sizeof msg, "'%.500s' should be job|host:port;host:port (or give JSON)", part);
      problem(ctx, msg);
      continue;
    }
    *bar = '\0';
    char *job = trim(part), *save2 = NULL;
    int idx = 0;
    for (char *a = strtok_r(bar + 1, ";", &save2); a; a = strtok_r(NULL, ";", &save2))
      rt_cluster_add(c, job, idx++, trim(a));
  }
  free(copy);
  return c;
}

/* The first problem, as a status: "PREFIX: message". */
typedef struct first_problem {
  const char *prefix;
  rt_status *st;
  int rc;
} first_problem;

static void keep_first(void *ctx, const char *msg) {
  first_problem *f = ctx;
  if (!f->rc) f->rc = rt_error(f->st, RT_INVALID_ARGUMENT, "%s: %s", f->prefix, msg);
}

rt_cluster *rt_cluster_parse(const char *text, rt_status *st) {
  first_problem f = {"cluster spec", st, RT_OK};
  rt_cluster *c = rt_cluster_parse_each(text, keep_first, &f);
  int rc = f.rc;
  if (!rc && c->n == 0) rc = rt_error(st, RT_INVALID_ARGUMENT, "cluster spec: no tasks");
  if (!rc) rc = rt_cluster_check(c, st);
  if (rc) {
    rt_cluster_free(c);
    return NULL;
  }
  return c;
}

rt_cluster *rt_cluster_from_tf_config(const char *text, char *job, size_t job_len, int *index,
                                      rt_status *st) {
  json_error_t err;
  json_t *j = json_loads(text, 0, &err);
  if (job) job[0] = '\0';
  if (index) *index = -1;
  if (!j) {
    rt_error(st, RT_INVALID_ARGUMENT, "TF_CONFIG: invalid JSON at line %d column %d: %s", err.line,
             err.column, err.text);
    return NULL;
  }
  rt_cluster *c = rt_cluster_new();
  json_t *cl = json_object_get(j, "cluster");
  first_problem f = {"TF_CONFIG: cluster", st, RT_OK};
  if (cl) json_cluster(c, cl, keep_first, &f);
  int rc = cl ? f.rc : rt_error(st, RT_INVALID_ARGUMENT, "TF_CONFIG: no \"cluster\" object");
  if (!rc) rc = rt_cluster_check(c, st);
  json_t *task = json_object_get(j, "task");
  if (!rc && task) {
    json_t *type = json_object_get(task, "type"), *idx = json_object_get(task, "index");
    if (!json_is_string(type) || (idx && !json_is_integer(idx)))
      rc = rt_error(st, RT_INVALID_ARGUMENT, "TF_CONFIG: \"task\" needs \"type\" (a string) and \"index\" (an integer)");
    else {
      if (job) snprintf(job, job_len, "%s", json_string_value(type));
      if (index) *index = idx ? (int)json_integer_value(idx) : 0;
    }
  }
  json_decref(j);
  if (rc) {
    rt_cluster_free(c);
    return NULL;
  }
  return c;
}
