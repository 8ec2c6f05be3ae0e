#include "runtime/wire_fmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "runtime/trace.h"   /* rt_pack_kstr */

void rt_pack_devices(msgpack_packer *pk, rt_device *const *devs, int n) {
  msgpack_pack_array(pk, (size_t)n);
  for (int i = 0; i < n; i++) {
    bool desc = devs[i]->desc[0];
    msgpack_pack_map(pk, desc ? 4 : 3);
    rt_pack_kstr(pk, "name", devs[i]->name);
    if (desc) rt_pack_kstr(pk, "desc", devs[i]->desc);
    rt_pack_kstr(pk, "type", devs[i]->type == RT_DEV_GPU ? "GPU" : "CPU");
    msgpack_pack_str(pk, 11);
    msgpack_pack_str_body(pk, "incarnation", 11);
    msgpack_pack_uint64(pk, devs[i]->incarnation);
  }
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

char **rt_cluster_lines(const rt_cluster *c) {
  char **v = xcalloc((size_t)c->n + 1, sizeof *v);
  for (int i = 0; i < c->n; i++) {
    char buf[600];
    snprintf(buf, sizeof buf, "/job:%s/task:%d=%s", c->tasks[i].job, c->tasks[i].index, c->tasks[i].addr);
    v[i] = xstrdup(buf);
  }
  qsort(v, (size_t)c->n, sizeof *v, cmp_str);
  return v;
}

void rt_pack_cluster(msgpack_packer *pk, const rt_cluster *c) {
  char **v = rt_cluster_lines(c);
  msgpack_pack_array(pk, (size_t)c->n);
  for (int i = 0; i < c->n; i++) {
    msgpack_pack_str(pk, strlen(v[i]));
    msgpack_pack_str_body(pk, v[i], strlen(v[i]));
    free(v[i]);
  }
  free(v);
}
