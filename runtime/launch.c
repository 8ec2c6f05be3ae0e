/* Cluster specs given as task counts, and free ports for them on this host. */
#include "runtime/launch.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/alloc.h"

#define MAX_TASKS 4096

static int add_count(rt_job_counts *out, const char *name, size_t len, long count, rt_status *st) {
  char job[64];
  if (len >= sizeof job) return rt_error(st, RT_INVALID_ARGUMENT, "cluster spec: job name '%.*s' is too long", (int)len, name);
  snprintf(job, sizeof job, "%.*s", (int)len, name);
  if (!rt_cluster_valid_job(job))
    return rt_error(st, RT_INVALID_ARGUMENT, "cluster spec: '%s' is not a valid job name (letters, digits and _)", job);
  if (count < 1 || count > MAX_TASKS)
    return rt_error(st, RT_INVALID_ARGUMENT, "cluster spec: job %s: %ld tasks; give a count from 1 to %d", job, count,
                    MAX_TASKS);
  for (int i = 0; i < out->n; i++)
    if (!strcmp(out->jobs[i].name, job))
      return rt_error(st, RT_INVALID_ARGUMENT, "cluster spec: job %s is given twice", job);
  if (out->n == RT_MAX_JOBS) return rt_error(st, RT_INVALID_ARGUMENT, "cluster spec: more than %d jobs", RT_MAX_JOBS);
  snprintf(out->jobs[out->n].name, sizeof out->jobs[out->n].name, "%s", job);
  out->jobs[out->n++].count = (int)count;
  if (rt_job_counts_total(out) > MAX_TASKS)
    return rt_error(st, RT_INVALID_ARGUMENT, "cluster spec: more than %d tasks", MAX_TASKS);
  return RT_OK;
}

static int counts_from_json(const char *text, rt_job_counts *out, rt_status *st) {
  json_error_t err;
  json_t *j = json_loads(text, 0, &err);
  if (!j || !json_is_object(j)) {
    json_decref(j);
    return 0;   /* not ours: rt_cluster_parse explains what is wrong with it */
  }
  int ints = 0, others = 0;
  const char *key;
  json_t *v;
  json_object_foreach(j, key, v) {
    if (json_is_integer(v)) ints++;
    else others++;
  }
  int rc = 0;
  if (ints && others) {
    rc = -1;
    rt_error(st, RT_INVALID_ARGUMENT,
             "cluster spec: give every job a count ({\"ps\": 1, \"worker\": 2}) or every job its addresses "
             "({\"ps\": [\"host:port\"], ...}), not both");
  } else if (ints) {
    rc = 1;
    json_object_foreach(j, key, v) {
      if (add_count(out, key, strlen(key), (long)json_integer_value(v), st)) {
        rc = -1;
        break;
      }
    }
  }
  json_decref(j);
  return rc;
}

int rt_job_counts_parse(const char *text, rt_job_counts *out, rt_status *st) {
  memset(out, 0, sizeof *out);
  while (isspace((unsigned char)*text)) text++;
  if (*text == '{') return counts_from_json(text, out, st);
  if (!strchr(text, '=') || strchr(text, '|')) return 0;
  const char *p = text;
  while (*p) {
    while (*p == ',' || isspace((unsigned char)*p)) p++;
    if (!*p) break;
    const char *name = p;
    while (*p && *p != '=' && *p != ',' && !isspace((unsigned char)*p)) p++;
    size_t len = (size_t)(p - name);
    if (*p != '=')
      return rt_error(st, RT_INVALID_ARGUMENT, "cluster spec: '%.*s' should be JOB=COUNT (as in ps=1 worker=2)",
                      (int)len, name), -1;
    p++;
    char *end;
    errno = 0;
    long count = strtol(p, &end, 10);
    if (end == p || errno || (*end && *end != ',' && !isspace((unsigned char)*end))) {
      size_t bad = strcspn(p, ", \t\n");
      return rt_error(st, RT_INVALID_ARGUMENT, "cluster spec: %.*s=%.*s: the count must be a number (as in ps=1 worker=2)",
                      (int)len, name, (int)bad, p), -1;
    }
    if (add_count(out, name, len, count, st)) return -1;
    p = end;
  }
  if (!out->n) return rt_error(st, RT_INVALID_ARGUMENT, "cluster spec: no tasks"), -1;
  return 1;
}

int rt_job_counts_total(const rt_job_counts *c) {
  int n = 0;
  for (int i = 0; i < c->n; i++) n += c->jobs[i].count;
  return n;
}

void rt_job_counts_format(const rt_job_counts *c, char *buf, size_t n) {
  size_t off = 0;
  buf[0] = 0;
  for (int i = 0; i < c->n && off < n; i++)
    off += (size_t)snprintf(buf + off, n - off, "%s%s=%d", i ? " " : "", c->jobs[i].name, c->jobs[i].count);
}

rt_cluster *rt_cluster_on_free_ports(const rt_job_counts *c, const char *host, rt_status *st) {
  int total = rt_job_counts_total(c);
  int *fds = xcalloc((size_t)total + 1, sizeof *fds);
  rt_cluster *cl = rt_cluster_new();
  int k = 0, rc = RT_OK;
  for (int j = 0; j < c->n && !rc; j++)
    for (int i = 0; i < c->jobs[j].count && !rc; i++, k++) {
      struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
      socklen_t len = sizeof a;
      fds[k] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fds[k] < 0 || bind(fds[k], (struct sockaddr *)&a, sizeof a) ||
          getsockname(fds[k], (struct sockaddr *)&a, &len)) {
        rc = rt_error(st, RT_UNAVAILABLE, "cannot find a free port for /job:%s/task:%d: %s", c->jobs[j].name, i,
                      strerror(errno));
        k++;
        break;
      }
      char addr[300];
      snprintf(addr, sizeof addr, "%s:%d", host, ntohs(a.sin_port));
      rt_cluster_add(cl, c->jobs[j].name, i, addr);
    }
  for (int i = 0; i < k; i++)
    if (fds[i] >= 0) close(fds[i]);
  free(fds);
  if (rc) {
    rt_cluster_free(cl);
    return NULL;
  }
  return cl;
}
