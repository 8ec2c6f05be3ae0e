#include "runtime/trace.h"
#include "base/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "net/msg.h"

int64_t rt_trace_micros(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

uint32_t rt_trace_thread_id(void) { return (uint32_t)syscall(SYS_gettid); }

rt_dev_stats *rt_dev_stats_new(const char *device) {
  rt_dev_stats *d = xcalloc(1, sizeof *d);
  d->device = xstrdup(device ? device : "");
  return d;
}

void rt_dev_stats_free(rt_dev_stats *d) {
  if (!d) return;
  for (int i = 0; i < d->n; i++) {
    free(d->nodes[i].node_name);
    free(d->nodes[i].timeline_label);
    free(d->nodes[i].outputs);
  }
  free(d->nodes);
  free(d->device);
  free(d);
}

rt_node_stats *rt_dev_stats_add(rt_dev_stats *d) {
  if (d->n == d->cap) {
    d->cap = d->cap ? 2 * d->cap : 32;
    d->nodes = xrealloc(d->nodes, (size_t)d->cap * sizeof *d->nodes);
  }
  rt_node_stats *n = &d->nodes[d->n++];
  memset(n, 0, sizeof *n);
  return n;
}

void rt_step_stats_clear(rt_step_stats *s) {
  for (int i = 0; i < s->n; i++) rt_dev_stats_free(s->dev[i]);
  free(s->dev);
  memset(s, 0, sizeof *s);
}

void rt_step_stats_append(rt_step_stats *s, rt_dev_stats *d) {
  if (s->n == s->cap) {
    s->cap = s->cap ? 2 * s->cap : 4;
    s->dev = xrealloc(s->dev, (size_t)s->cap * sizeof *s->dev);
  }
  s->dev[s->n++] = d;
}

static void pack_str(msgpack_packer *pk, const char *s) {
  size_t n = strlen(s ? s : "");
  msgpack_pack_str(pk, n);
  msgpack_pack_str_body(pk, s ? s : "", n);
}

void rt_pack_kstr(msgpack_packer *pk, const char *key, const char *val) {
  pack_str(pk, key);
  pack_str(pk, val);
}

void rt_pack_kint(msgpack_packer *pk, const char *key, int64_t val) {
  pack_str(pk, key);
  msgpack_pack_int64(pk, val);
}

void rt_obj_str(const msgpack_object *o, const char *key, char *buf, size_t n) {
  const msgpack_object *v = o ? net_obj_key(o, key) : NULL;
  buf[0] = '\0';
  if (v && v->type == MSGPACK_OBJECT_STR)
    snprintf(buf, n, "%.*s", (int)(v->via.str.size < n ? v->via.str.size : n - 1), v->via.str.ptr);
}

int64_t rt_obj_int(const msgpack_object *o, const char *key) {
  const msgpack_object *v = o ? net_obj_key(o, key) : NULL;
  if (!v) return 0;
  if (v->type == MSGPACK_OBJECT_POSITIVE_INTEGER) return (int64_t)v->via.u64;
  if (v->type == MSGPACK_OBJECT_NEGATIVE_INTEGER) return v->via.i64;
  if (v->type == MSGPACK_OBJECT_BOOLEAN) return v->via.boolean;
  return 0;
}

void rt_pack_dev_stats(msgpack_packer *pk, const rt_dev_stats *d) {
  msgpack_pack_map(pk, 2);
  rt_pack_kstr(pk, "device", d->device);
  pack_str(pk, "node_stats");
  msgpack_pack_array(pk, (size_t)d->n);
  for (int i = 0; i < d->n; i++) {
    const rt_node_stats *n = &d->nodes[i];
    msgpack_pack_map(pk, 8);
    rt_pack_kstr(pk, "node_name", n->node_name);
    rt_pack_kstr(pk, "timeline_label", n->timeline_label);
    rt_pack_kint(pk, "all_start_micros", n->all_start_micros);
    rt_pack_kint(pk, "op_start_rel_micros", n->op_start_rel_micros);
    rt_pack_kint(pk, "op_end_rel_micros", n->op_end_rel_micros);
    rt_pack_kint(pk, "all_end_rel_micros", n->all_end_rel_micros);
    rt_pack_kint(pk, "thread_id", n->thread_id);
    pack_str(pk, "output");
    msgpack_pack_array(pk, (size_t)n->n_outputs);
    for (int k = 0; k < n->n_outputs; k++) {
      const rt_output_stats *o = &n->outputs[k];
      msgpack_pack_map(pk, 4);
      rt_pack_kint(pk, "dtype", o->dtype);
      pack_str(pk, "shape");
      if (o->shape.ndims < 0) {
        msgpack_pack_nil(pk);
      } else {
        msgpack_pack_array(pk, (size_t)o->shape.ndims);
        for (int j = 0; j < o->shape.ndims; j++) msgpack_pack_int64(pk, o->shape.dims[j]);
      }
      rt_pack_kint(pk, "bytes", o->bytes);
      rt_pack_kint(pk, "alloc", o->alloc);
    }
  }
}

static int get_str(const msgpack_object *o, const char *key, const char *what, char **out,
                   rt_status *st) {
  const msgpack_object *v = net_obj_key(o, key);
  const char *p = "";
  size_t len = 0;
  if (v) {
    char w[160];
    snprintf(w, sizeof w, "%s.%s", what, key);
    if (net_obj_str(v, w, &p, &len, st)) return st->code;
  }
  *out = xstrndup(p, len);
  return RT_OK;
}

static int get_int(const msgpack_object *o, const char *key, const char *what, int64_t *out,
                   rt_status *st) {
  const msgpack_object *v = net_obj_key(o, key);
  *out = 0;
  if (!v) return RT_OK;
  char w[160];
  snprintf(w, sizeof w, "%s.%s", what, key);
  return net_obj_int(v, w, out, st);
}

int rt_unpack_dev_stats(const msgpack_object *o, const char *what, rt_dev_stats **out,
                        rt_status *st) {
  *out = NULL;
  if (o->type != MSGPACK_OBJECT_MAP)
    return rt_error(st, RT_INVALID_ARGUMENT, "%s: expected a map, got %s", what, net_obj_kind(o));
  rt_dev_stats *d = rt_dev_stats_new(NULL);
  free(d->device);
  d->device = NULL;
  int rc = get_str(o, "device", what, &d->device, st);
  const msgpack_object *ns = net_obj_key(o, "node_stats");
  const msgpack_object_array *a = NULL;
  if (!rc && ns) rc = net_obj_array(ns, what, &a, st);
  for (uint32_t i = 0; !rc && a && i < a->size; i++) {
    const msgpack_object *e = &a->ptr[i];
    if (e->type != MSGPACK_OBJECT_MAP) {
      rc = rt_error(st, RT_INVALID_ARGUMENT, "%s.node_stats[%u]: expected a map", what, i);
      break;
    }
    rt_node_stats *n = rt_dev_stats_add(d);
    int64_t tid = 0;
    rc = get_str(e, "node_name", what, &n->node_name, st);
    if (!rc) rc = get_str(e, "timeline_label", what, &n->timeline_label, st);
    if (!rc) rc = get_int(e, "all_start_micros", what, &n->all_start_micros, st);
    if (!rc) rc = get_int(e, "op_start_rel_micros", what, &n->op_start_rel_micros, st);
    if (!rc) rc = get_int(e, "op_end_rel_micros", what, &n->op_end_rel_micros, st);
    if (!rc) rc = get_int(e, "all_end_rel_micros", what, &n->all_end_rel_micros, st);
    if (!rc) rc = get_int(e, "thread_id", what, &tid, st);
    n->thread_id = (uint32_t)tid;
    const msgpack_object *outs = net_obj_key(e, "output");
    const msgpack_object_array *oa = NULL;
    if (!rc && outs) rc = net_obj_array(outs, what, &oa, st);
    if (!rc && oa && oa->size) {
      n->outputs = xcalloc(oa->size, sizeof *n->outputs);
      for (uint32_t k = 0; !rc && k < oa->size; k++) {
        const msgpack_object *oo = &oa->ptr[k];
        rt_output_stats *os = &n->outputs[n->n_outputs++];
        int64_t dt = 0;
        if (oo->type != MSGPACK_OBJECT_MAP) {
          rc = rt_error(st, RT_INVALID_ARGUMENT, "%s.output: expected a map", what);
          break;
        }
        rc = get_int(oo, "dtype", what, &dt, st);
        os->dtype = (rt_dtype)dt;
        if (!rc) rc = get_int(oo, "bytes", what, &os->bytes, st);
        int64_t alloc = 0;
        if (!rc) rc = get_int(oo, "alloc", what, &alloc, st);
        os->alloc = alloc != 0;
        const msgpack_object *sh = net_obj_key(oo, "shape");
        os->shape.ndims = -1;
        if (!rc && sh && sh->type == MSGPACK_OBJECT_ARRAY) {
          if (sh->via.array.size > RT_MAX_DIMS) {
            rc = rt_error(st, RT_INVALID_ARGUMENT, "%s.output.shape: too many dimensions", what);
            break;
          }
          os->shape.ndims = (int)sh->via.array.size;
          for (uint32_t j = 0; !rc && j < sh->via.array.size; j++)
            rc = net_obj_int(&sh->via.array.ptr[j], what, &os->shape.dims[j], st);
        }
      }
    }
  }
  if (rc) {
    rt_dev_stats_free(d);
    return rc;
  }
  *out = d;
  return RT_OK;
}

int rt_unpack_step_stats(const msgpack_object *o, const char *what, rt_step_stats *s,
                         rt_status *st) {
  const msgpack_object_array *a = NULL;
  int rc = net_obj_array(o, what, &a, st);
  for (uint32_t i = 0; !rc && i < a->size; i++) {
    rt_dev_stats *d = NULL;
    if (!(rc = rt_unpack_dev_stats(&a->ptr[i], what, &d, st))) rt_step_stats_append(s, d);
  }
  return rc;
}

/* ---- busy time per device (the live view's loops) ------------------------------------ */

void rt_pack_busy(msgpack_packer *pk, const rt_busy *b) {
  msgpack_pack_map(pk, 3);
  rt_pack_kstr(pk, "device", b->device);
  rt_pack_kint(pk, "us", b->us);
  rt_pack_kint(pk, "ops", b->ops);
}

int rt_unpack_busy(const msgpack_object *o, const char *what, rt_busy *b, int *n, int max,
                   rt_status *st) {
  const msgpack_object_array *a = NULL;
  int rc = net_obj_array(o, what, &a, st);
  for (uint32_t i = 0; !rc && i < a->size; i++) {
    const msgpack_object *e = &a->ptr[i];
    if (e->type != MSGPACK_OBJECT_MAP)
      return rt_error(st, RT_INVALID_ARGUMENT, "%s[%u]: expected a map, got %s", what, i,
                      net_obj_kind(e));
    char *dev = NULL;
    int64_t us = 0, ops = 0;
    rc = get_str(e, "device", what, &dev, st);
    if (!rc) rc = get_int(e, "us", what, &us, st);
    if (!rc) rc = get_int(e, "ops", what, &ops, st);
    if (!rc && *n < max) {
      rt_busy *x = &b[(*n)++];
      snprintf(x->device, sizeof x->device, "%s", dev);
      x->us = us;
      x->ops = (int)ops;
    }
    free(dev);
  }
  return rc;
}
