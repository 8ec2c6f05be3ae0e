#include "runtime/cluster.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

rt_cluster *rt_cluster_new(void) { return calloc(1, sizeof(rt_cluster)); }

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
      c->tasks[i].addr = strdup(addr);
      return;
    }
  c->tasks = realloc(c->tasks, (size_t)(c->n + 1) * sizeof *c->tasks);
  if (!c->tasks) abort();
  c->tasks[c->n++] = (rt_task_addr){strdup(job), index, strdup(addr)};
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
