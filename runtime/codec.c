#include "runtime/codec.h"
#include "base/alloc.h"

#include "net/shm.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void pack_str(msgpack_packer *pk, const char *s) {
  size_t n = strlen(s);
  msgpack_pack_str(pk, n);
  msgpack_pack_str_body(pk, s, n);
}

static void pack_shape(msgpack_packer *pk, const rt_shape *s) {
  if (s->ndims < 0) {
    msgpack_pack_nil(pk);
    return;
  }
  msgpack_pack_array(pk, (size_t)s->ndims);
  for (int i = 0; i < s->ndims; i++) msgpack_pack_int64(pk, s->dims[i]);
}

static void pack_strings(msgpack_packer *pk, const rt_tensor *t) {
  const rt_str *s = rt_tensor_data(t);
  int64_t n = rt_tensor_numel(t);
  msgpack_pack_array(pk, (size_t)n);
  for (int64_t i = 0; i < n; i++) {
    msgpack_pack_bin(pk, s[i].len);
    msgpack_pack_bin_body(pk, s[i].ptr ? s[i].ptr : "", s[i].len);
  }
}

/* A tensor's description: {"dtype", "shape", key: ...}, the caller packs key's value. */
static void pack_meta(msgpack_packer *pk, const rt_tensor *t, const char *key) {
  msgpack_pack_map(pk, 3);
  pack_str(pk, "dtype");
  msgpack_pack_int(pk, t->dtype);
  pack_str(pk, "shape");
  pack_shape(pk, &t->shape);
  pack_str(pk, key);
}

void rt_pack_tensor_inline(msgpack_packer *pk, const rt_tensor *t) {
  pack_meta(pk, t, "data");
  if (rt_dtype_is_str(t->dtype)) {
    pack_strings(pk, t);
  } else {
    size_t n = rt_tensor_nbytes(t);
    msgpack_pack_bin(pk, n);
    msgpack_pack_bin_body(pk, rt_tensor_data(t), n);
  }
}

static void pack_attr(net_msg *m, msgpack_packer *pk, const rt_attr_value *v) {
  msgpack_pack_array(pk, 2);
  msgpack_pack_int(pk, v->kind);
  switch (v->kind) {
  case RT_ATTR_INT: msgpack_pack_int64(pk, v->i); break;
  case RT_ATTR_FLOAT: msgpack_pack_double(pk, v->f); break;
  case RT_ATTR_BOOL: v->b ? msgpack_pack_true(pk) : msgpack_pack_false(pk); break;
  case RT_ATTR_STRING: pack_str(pk, v->s); break;
  case RT_ATTR_RAW:
    msgpack_pack_str(pk, (size_t)v->list.n);
    msgpack_pack_str_body(pk, v->list.v, (size_t)v->list.n);
    break;
  case RT_ATTR_TYPE: msgpack_pack_int(pk, v->type); break;
  case RT_ATTR_SHAPE: pack_shape(pk, &v->shape); break;
  case RT_ATTR_TENSOR:
    if (m && !rt_dtype_is_str(v->tensor->dtype) && rt_tensor_nbytes(v->tensor) > 4096)
      rt_pack_tensor_msg(m, pk, v->tensor);   /* a big constant: its own frame */
    else
      rt_pack_tensor_inline(pk, v->tensor);
    break;
  case RT_ATTR_LIST_INT: case RT_ATTR_LIST_FLOAT: case RT_ATTR_LIST_STRING:
  case RT_ATTR_LIST_TYPE: case RT_ATTR_LIST_SHAPE:
    msgpack_pack_array(pk, (size_t)v->list.n);
    for (int i = 0; i < v->list.n; i++) {
      if (v->kind == RT_ATTR_LIST_INT) msgpack_pack_int64(pk, ((int64_t *)v->list.v)[i]);
      if (v->kind == RT_ATTR_LIST_FLOAT) msgpack_pack_double(pk, ((double *)v->list.v)[i]);
      if (v->kind == RT_ATTR_LIST_STRING) pack_str(pk, ((char **)v->list.v)[i]);
      if (v->kind == RT_ATTR_LIST_TYPE) msgpack_pack_int(pk, ((rt_dtype *)v->list.v)[i]);
      if (v->kind == RT_ATTR_LIST_SHAPE) pack_shape(pk, &((rt_shape *)v->list.v)[i]);
    }
    break;
  default: msgpack_pack_nil(pk); break;
  }
}

void rt_pack_node(net_msg *m, msgpack_packer *pk, const rt_node *n) {
  msgpack_pack_map(pk, n->assigned ? 6 : 5);
  pack_str(pk, "name");
  pack_str(pk, n->name);
  pack_str(pk, "op");
  pack_str(pk, n->op);
  pack_str(pk, "input");
  msgpack_pack_array(pk, (size_t)n->n_inputs);
  for (int i = 0; i < n->n_inputs; i++) pack_str(pk, n->inputs[i]);
  pack_str(pk, "device");
  pack_str(pk, n->device);
  if (n->assigned) {
    pack_str(pk, "assigned");
    pack_str(pk, n->assigned);
  }
  pack_str(pk, "attr");
  msgpack_pack_map(pk, (size_t)n->n_attrs);
  for (int i = 0; i < n->n_attrs; i++) {
    pack_str(pk, n->attrs[i].name);
    pack_attr(m, pk, &n->attrs[i].value);
  }
}

void rt_pack_nodes(net_msg *m, msgpack_packer *pk, const rt_graph *g, int from) {
  if (from < 0 || from > g->n_nodes) from = g->n_nodes;
  msgpack_pack_array(pk, (size_t)(g->n_nodes - from));
  for (int i = from; i < g->n_nodes; i++) rt_pack_node(m, pk, g->nodes[i]);
}

/* ---- decoding ----------------------------------------------------------------------- */

/* A map's field, or a nil object when absent, so the typed getters report it. */
static const msgpack_object *field(const msgpack_object *o, const char *key) {
  static const msgpack_object nil = {.type = MSGPACK_OBJECT_NIL};
  const msgpack_object *v = net_obj_key(o, key);
  return v ? v : &nil;
}

/* Decoding runs quiet first: the names of fields in errors ("graph[7].name", "node 'x'
 * attr 'T'") are not formatted, which is most of the cost of a big graph. On a failure the
 * same decoding runs again, loud (it is deterministic), so the error names the field as it
 * always did. sub() is what + suffix when loud, anything when quiet. */
static const char *sub(char *w, size_t n, bool quiet, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static const char *sub(char *w, size_t n, bool quiet, const char *fmt, ...) {
  if (quiet) return "";
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(w, n, fmt, ap);
  va_end(ap);
  return w;
}

/* A NUL-terminated copy of a msgpack str field, bounded. */
static int get_cstr(const msgpack_object *o, const char *what, char *buf, size_t n,
                    rt_status *st) {
  const char *p;
  size_t len;
  int rc = net_obj_str(o, what, &p, &len, st);
  if (rc) return rc;
  if (len >= n || memchr(p, '\0', len))
    return rt_error(st, RT_INVALID_ARGUMENT, "%s: string too long or holds NUL", what);
  memcpy(buf, p, len);
  buf[len] = '\0';
  return RT_OK;
}

static int unpack_shape(const msgpack_object *o, const char *what, rt_shape *s, rt_status *st) {
  if (!o || o->type == MSGPACK_OBJECT_NIL) {
    *s = rt_shape_unknown();
    return RT_OK;
  }
  const msgpack_object_array *a;
  int rc = net_obj_array(o, what, &a, st);
  if (rc) return rc;
  if (a->size > RT_MAX_DIMS)
    return rt_error(st, RT_INVALID_ARGUMENT, "%s: %u dimensions, at most %d", what, a->size,
                    RT_MAX_DIMS);
  s->ndims = (int)a->size;
  for (uint32_t i = 0; i < a->size; i++) {
    int64_t d;
    if ((rc = net_obj_int(&a->ptr[i], what, &d, st))) return rc;
    if (d < -1 || d > ((int64_t)1 << 40))
      return rt_error(st, RT_INVALID_ARGUMENT, "%s: dimension %lld out of range", what,
                      (long long)d);
    s->dims[i] = d;
  }
  return RT_OK;
}

static int unpack_dtype(const msgpack_object *o, const char *what, rt_dtype *t, rt_status *st) {
  int64_t v;
  int rc = net_obj_int(o, what, &v, st);
  if (rc) return rc;
  if (v > 100 || rt_dtype_size((rt_dtype)v) == 0)
    return rt_error(st, RT_INVALID_ARGUMENT, "%s: unknown dtype %lld", what, (long long)v);
  *t = (rt_dtype)v;
  return RT_OK;
}

/* dtype + full shape, and the byte count they need (overflow-checked). */
static int unpack_meta(const msgpack_object *o, const char *what, rt_dtype *t, rt_shape *s,
                       size_t *nbytes, bool quiet, rt_status *st) {
  char w[160];
  const msgpack_object_map *m;
  int rc = net_obj_map(o, what, &m, st);
  if (rc) return rc;
  if ((rc = unpack_dtype(field(o, "dtype"), sub(w, sizeof w, quiet, "%s.dtype", what), t, st)))
    return rc;
  const char *ws = sub(w, sizeof w, quiet, "%s.shape", what);
  if ((rc = unpack_shape(net_obj_key(o, "shape"), ws, s, st))) return rc;
  if (s->ndims < 0) return rt_error(st, RT_INVALID_ARGUMENT, "%s: tensor without a shape", ws);
  unsigned __int128 n = rt_dtype_size(*t);
  for (int i = 0; i < s->ndims; i++) {
    if (s->dims[i] < 0)
      return rt_error(st, RT_INVALID_ARGUMENT, "%s: unknown dimension in a tensor", ws);
    n *= (uint64_t)s->dims[i];
    if (n > ((unsigned __int128)1 << 48))
      return rt_error(st, RT_INVALID_ARGUMENT, "%s: tensor too large", ws);
  }
  *nbytes = (size_t)n;
  return RT_OK;
}

static int unpack_strings(const msgpack_object *o, const char *what, rt_tensor *t,
                          rt_status *st) {
  const msgpack_object_array *a;
  int rc = net_obj_array(o, what, &a, st);
  if (rc) return rc;
  if ((int64_t)a->size != rt_tensor_numel(t))
    return rt_error(st, RT_INVALID_ARGUMENT, "%s: %u strings for %lld elements", what, a->size,
                    (long long)rt_tensor_numel(t));
  for (uint32_t i = 0; i < a->size; i++) {
    const void *p;
    size_t len;
    if ((rc = net_obj_bin(&a->ptr[i], what, &p, &len, st))) return rc;
    if (rt_tensor_set_str(t, i, p, len)) return rt_error(st, RT_RESOURCE_EXHAUSTED, "out of memory");
  }
  return RT_OK;
}

static int tensor_inline(const msgpack_object *o, const char *what, rt_tensor **out, bool quiet,
                         rt_status *st) {
  rt_dtype t;
  rt_shape s;
  size_t nbytes;
  char w[160];
  int rc = unpack_meta(o, what, &t, &s, &nbytes, quiet, st);
  if (rc) return rc;
  const char *wd = sub(w, sizeof w, quiet, "%s.data", what);
  const msgpack_object *d = field(o, "data");
  rt_tensor *x = NULL;
  if (rt_dtype_is_str(t)) {
    /* one entry per element, checked before anything is allocated for them */
    if (d->type != MSGPACK_OBJECT_ARRAY || (int64_t)d->via.array.size != rt_shape_numel(&s))
      return rt_error(st, RT_INVALID_ARGUMENT, "%s: %lld strings expected", wd, (long long)rt_shape_numel(&s));
    x = rt_tensor_new(t, &s);
    if (!x) return rt_error(st, RT_RESOURCE_EXHAUSTED, "%s: out of memory", what);
    rc = unpack_strings(d, wd, x, st);
  } else {
    const void *p;
    size_t len;
    if (!(rc = net_obj_bin(d, wd, &p, &len, st))) {
      if (len != nbytes)
        rc = rt_error(st, RT_INVALID_ARGUMENT, "%s: %zu bytes for a %s tensor of %zu bytes", wd,
                      len, rt_dtype_name(t), nbytes);
      else if (!(x = rt_tensor_new_uninit(t, &s)))
        rc = rt_error(st, RT_RESOURCE_EXHAUSTED, "%s: out of memory", what);
      else
        memcpy(rt_tensor_data(x), p, len);
    }
  }
  if (rc) {
    rt_tensor_unref(x);
    return rc;
  }
  *out = x;
  return RT_OK;
}

int rt_unpack_tensor_inline(const msgpack_object *o, const char *what, rt_tensor **out,
                            rt_status *st) {
  return tensor_inline(o, what, out, false, st);
}

static void release_buffer(void *data, void *arg) {
  (void)data;
  rt_buffer_unref(arg);
}

void rt_pack_feed(net_msg *m, msgpack_packer *pk, const char *name, const rt_tensor *t) {
  size_t len = strlen(name);
  msgpack_pack_map(pk, 2);
  msgpack_pack_str(pk, 4);
  msgpack_pack_str_body(pk, "name", 4);
  msgpack_pack_str(pk, len);
  msgpack_pack_str_body(pk, name, len);
  msgpack_pack_str(pk, 6);
  msgpack_pack_str_body(pk, "tensor", 6);
  rt_pack_tensor_msg(m, pk, t);
}

void rt_pack_tensor_msg(net_msg *m, msgpack_packer *pk, const rt_tensor *t) {
  if (rt_dtype_is_str(t->dtype)) {
    rt_pack_tensor_inline(pk, t);
    return;
  }
  pack_meta(pk, t, "frame");
  msgpack_pack_uint64(pk, net_msg_nframes(m));
  size_t n = rt_tensor_nbytes(t);
  if (n < 4096) {
    net_msg_frame_copy(m, rt_tensor_data(t), n);   /* small: a copy is cheaper than a ref */
  } else {
    rt_buffer *b = rt_buffer_ref(t->buf);
    net_msg_frame(m, b->data, n, release_buffer, b);
  }
}

static int tensor_msg(const net_in *m, const msgpack_object *o, const char *what,
                      rt_tensor **out, bool quiet, rt_status *st) {
  if (!net_obj_key(o, "frame")) return tensor_inline(o, what, out, quiet, st);
  rt_dtype t;
  rt_shape s;
  size_t nbytes;
  char w[160];
  int rc = unpack_meta(o, what, &t, &s, &nbytes, quiet, st);
  if (rc) return rc;
  if (rt_dtype_is_str(t))
    return rt_error(st, RT_INVALID_ARGUMENT, "%s: string tensors travel inline", what);
  uint64_t fi;
  const char *wf = sub(w, sizeof w, quiet, "%s.frame", what);
  if ((rc = net_obj_uint(field(o, "frame"), wf, &fi, st))) return rc;
  if (fi >= net_in_nframes(m))
    return rt_error(st, RT_INVALID_ARGUMENT, "%s: frame %llu of a message with %zu", wf,
                    (unsigned long long)fi, net_in_nframes(m));
  net_frame *f = net_in_frame(m, fi);
  if (net_frame_size(f) != nbytes)
    return rt_error(st, RT_INVALID_ARGUMENT, "%s: frame of %zu bytes for a %s tensor of %zu bytes",
                    wf, net_frame_size(f), rt_dtype_name(t), nbytes);
  rt_tensor *x;
  /* A big frame becomes the tensor's buffer, no copy. ZeroMQ's are 8-byte aligned (its
   * header sits before the bytes), which every dtype and every kernel here is content
   * with (x86 vector loads need none); the allocation is the receiver's malloc, which this
   * process's heap recycles from step to step. */
  if (nbytes >= 4096 && net_frame_aligned(f, 8)) {
    rt_buffer *b = xcalloc(1, sizeof *b);
    atomic_init(&b->refs, 1);
    b->dev = RT_DEV_CPU;
    b->nbytes = nbytes;
    b->data = net_frame_data(f);
    b->free_fn = net_frame_release;
    b->free_arg = net_frame_ref(f);
    x = rt_tensor_wrap(t, &s, b);
    rt_buffer_unref(b);
  } else {
    x = rt_tensor_new_uninit(t, &s);
    if (x) memcpy(rt_tensor_data(x), net_frame_data(f), nbytes);
  }
  if (!x) return rt_error(st, RT_RESOURCE_EXHAUSTED, "%s: out of memory", what);
  *out = x;
  return RT_OK;
}

int rt_unpack_tensor_msg(const net_in *m, const msgpack_object *o, const char *what,
                         rt_tensor **out, rt_status *st) {
  return tensor_msg(m, o, what, out, false, st);
}

/* ---- tensors through shared memory -------------------------------------------------- */

void rt_pack_tensor_shm(msgpack_packer *pk, const rt_tensor *t, const char *path, uint64_t off) {
  pack_meta(pk, t, "shm");
  msgpack_pack_map(pk, 2);
  pack_str(pk, "path");
  pack_str(pk, path);
  pack_str(pk, "off");
  msgpack_pack_uint64(pk, off);
}

bool rt_tensor_msg_is_shm(const msgpack_object *o) { return net_obj_key(o, "shm") != NULL; }

typedef struct shm_hold {
  void (*release)(void *arg, uint64_t off);
  void *arg;
  uint64_t off;
} shm_hold;

static void shm_unhold(void *data, void *arg) {
  (void)data;
  shm_hold *h = arg;
  h->release(h->arg, h->off);
  free(h);
}

int rt_unpack_tensor_shm(const msgpack_object *o, const char *what,
                         void (*release)(void *arg, uint64_t off), void *arg, rt_tensor **out,
                         rt_status *st) {
  rt_dtype t;
  rt_shape s;
  size_t nbytes;
  int rc = unpack_meta(o, what, &t, &s, &nbytes, false, st);
  const msgpack_object *shm = net_obj_key(o, "shm");
  const char *p = NULL;
  size_t plen = 0;
  uint64_t off = 0;
  char path[80];
  if (!rc && rt_dtype_is_str(t))
    rc = rt_error(st, RT_INVALID_ARGUMENT, "%s: string tensors travel inline", what);
  if (!rc) rc = net_obj_str(net_obj_key(shm, "path"), "shm.path", &p, &plen, st);
  if (!rc) rc = net_obj_uint(net_obj_key(shm, "off"), "shm.off", &off, st);
  snprintf(path, sizeof path, "%.*s", (int)(plen < 79 ? plen : 79), p ? p : "");
  const void *data = NULL;
  if (!rc) rc = net_shm_map(path, off, nbytes, &data, st);
  if (rc) {
    rt_status_prefix(st, "%s: ", what);
    return rc;
  }
  rt_buffer *b = xcalloc(1, sizeof *b);
  shm_hold *h = xmalloc(sizeof *h);
  *h = (shm_hold){release, arg, off};
  atomic_init(&b->refs, 1);
  b->dev = RT_DEV_CPU;
  b->nbytes = nbytes;
  b->data = (void *)data;   /* read-only pages: kernels never write their inputs */
  b->free_fn = shm_unhold;
  b->free_arg = h;
  rt_tensor *x = rt_tensor_wrap(t, &s, b);
  rt_buffer_unref(b);
  if (!x) return rt_error(st, RT_RESOURCE_EXHAUSTED, "%s: out of memory", what);
  *out = x;
  return RT_OK;
}

static int unpack_attr(const net_in *m, const msgpack_object *o, const char *what,
                       rt_attr_value *v, bool quiet, rt_status *st) {
  const msgpack_object_array *a;
  int64_t kind;
  int rc = net_obj_array(o, what, &a, st);
  if (rc) return rc;
  if (a->size != 2) return rt_error(st, RT_INVALID_ARGUMENT, "%s: expected [kind, value]", what);
  if ((rc = net_obj_int(&a->ptr[0], what, &kind, st))) return rc;
  const msgpack_object *x = &a->ptr[1];
  memset(v, 0, sizeof *v);
  v->kind = (rt_attr_kind)kind;
  switch (kind) {
  case RT_ATTR_INT: return net_obj_int(x, what, &v->i, st);
  case RT_ATTR_FLOAT: return net_obj_float(x, what, &v->f, st);
  case RT_ATTR_BOOL: return net_obj_bool(x, what, &v->b, st);
  case RT_ATTR_STRING: {
    const char *p;
    size_t len;
    if ((rc = net_obj_str(x, what, &p, &len, st))) return rc;
    v->s = xstrndup(p, len);
    return RT_OK;
  }
  case RT_ATTR_RAW: {
    const char *p;
    size_t len;
    if ((rc = net_obj_str(x, what, &p, &len, st))) return rc;
    if (len > INT32_MAX) return rt_error(st, RT_INVALID_ARGUMENT, "%s: a raw tensor attr of %zu bytes", what, len);
    v->list.v = malloc(len ? len : 1);
    if (!v->list.v) return rt_error(st, RT_RESOURCE_EXHAUSTED, "out of memory");
    if (len) memcpy(v->list.v, p, len);
    v->list.n = (int)len;
    return RT_OK;
  }
  case RT_ATTR_TYPE: return unpack_dtype(x, what, &v->type, st);
  case RT_ATTR_SHAPE: return unpack_shape(x, what, &v->shape, st);
  case RT_ATTR_TENSOR:
    if (net_obj_key(x, "frame") && !m)
      return rt_error(st, RT_INVALID_ARGUMENT, "%s: a tensor in a frame where no frames are", what);
    return m ? tensor_msg(m, x, what, &v->tensor, quiet, st)
             : tensor_inline(x, what, &v->tensor, quiet, st);
  case RT_ATTR_LIST_INT: case RT_ATTR_LIST_FLOAT: case RT_ATTR_LIST_STRING:
  case RT_ATTR_LIST_TYPE: case RT_ATTR_LIST_SHAPE: {
    const msgpack_object_array *l;
    if ((rc = net_obj_array(x, what, &l, st))) return rc;
    size_t es = kind == RT_ATTR_LIST_SHAPE ? sizeof(rt_shape) : sizeof(int64_t);
    v->list.v = calloc(l->size + 1, es);
    if (!v->list.v) return rt_error(st, RT_RESOURCE_EXHAUSTED, "out of memory");
    for (uint32_t i = 0; i < l->size && !rc; i++) {
      const msgpack_object *e = &l->ptr[i];
      if (kind == RT_ATTR_LIST_INT) rc = net_obj_int(e, what, &((int64_t *)v->list.v)[i], st);
      if (kind == RT_ATTR_LIST_FLOAT) rc = net_obj_float(e, what, &((double *)v->list.v)[i], st);
      if (kind == RT_ATTR_LIST_TYPE) rc = unpack_dtype(e, what, &((rt_dtype *)v->list.v)[i], st);
      if (kind == RT_ATTR_LIST_SHAPE) rc = unpack_shape(e, what, &((rt_shape *)v->list.v)[i], st);
      if (kind == RT_ATTR_LIST_STRING) {
        const char *p;
        size_t len;
        if (!(rc = net_obj_str(e, what, &p, &len, st)))
          ((char **)v->list.v)[i] = xstrndup(p, len);
      }
      if (!rc) v->list.n = (int)i + 1;
    }
    return rc;
  }
  default:
    v->kind = RT_ATTR_NONE;
    return rt_error(st, RT_INVALID_ARGUMENT, "%s: unknown attr kind %lld", what, (long long)kind);
  }
}

/* A copy of a msgpack str, bounded as get_cstr bounds it: NULL when it is not one. */
static char *dup_cstr(const msgpack_object *o, size_t n) {
  if (o->type != MSGPACK_OBJECT_STR) return NULL;
  size_t len = o->via.str.size;
  if (len >= n || memchr(o->via.str.ptr, '\0', len)) return NULL;
  char *p = xmalloc(len + 1);
  memcpy(p, o->via.str.ptr, len);
  p[len] = '\0';
  return p;
}

/* Node i of the array `what`; quiet: see sub(). */
static int unpack_node(const net_in *m, const msgpack_object *o, const char *what, uint32_t idx,
                       bool quiet, rt_node **out, rt_status *st) {
  char name[256], op[128], dev[256], w[512], wn[160];
  const msgpack_object_map *map;
  const char *wi = sub(wn, sizeof wn, quiet, "%s[%u]", what, idx);
  int rc = net_obj_map(o, wi, &map, st);
  if (!rc) rc = get_cstr(field(o, "name"), sub(w, sizeof w, quiet, "%s.name", wi), name, sizeof name, st);
  if (!rc) rc = get_cstr(field(o, "op"), sub(w, sizeof w, quiet, "%s.op", wi), op, sizeof op, st);
  if (!rc) rc = get_cstr(field(o, "device"), sub(w, sizeof w, quiet, "%s.device", wi), dev, sizeof dev, st);
  if (rc) return rc;
  rt_node *n = rt_node_new(name, op);
  rt_node_set_device(n, dev);
  const msgpack_object *assigned = net_obj_key(o, "assigned");
  if (assigned && assigned->type != MSGPACK_OBJECT_NIL &&
      !(n->assigned = dup_cstr(assigned, sizeof dev)))
    rc = get_cstr(assigned, sub(w, sizeof w, quiet, "%s.assigned", wi), dev, sizeof dev, st);
  const msgpack_object_array *in;
  const char *wl = sub(w, sizeof w, quiet, "node '%s' input", name);
  if (!rc) rc = net_obj_array(field(o, "input"), wl, &in, st);
  if (!rc && in->size) {
    n->inputs = xcalloc(in->size, sizeof *n->inputs);
  }
  for (uint32_t i = 0; !rc && i < in->size; i++) {
    char buf[512];
    if (!(n->inputs[i] = dup_cstr(&in->ptr[i], sizeof buf)))
      rc = get_cstr(&in->ptr[i], wl, buf, sizeof buf, st);
    else
      n->n_inputs++;
  }
  const msgpack_object_map *attrs;
  const char *wa = sub(w, sizeof w, quiet, "node '%s' attr", name);
  if (!rc) rc = net_obj_map(field(o, "attr"), wa, &attrs, st);
  for (uint32_t i = 0; !rc && i < attrs->size; i++) {
    char key[128];
    rt_attr_value v;
    if ((rc = get_cstr(&attrs->ptr[i].key, wa, key, sizeof key, st))) break;
    const char *wk = sub(w, sizeof w, quiet, "node '%s' attr '%s'", name, key);
    if ((rc = unpack_attr(m, &attrs->ptr[i].val, wk, &v, quiet, st))) {
      rt_attr_value_clear(&v);
      break;
    }
    rt_node_set_attr(n, key, &v);
  }
  if (rc) {
    rt_node_free(n);
    return rc;
  }
  *out = n;
  return RT_OK;
}

int rt_unpack_nodes(const net_in *m, const msgpack_object *o, const char *what, rt_graph *g,
                    rt_status *st) {
  const msgpack_object_array *a;
  int rc = net_obj_array(o, what, &a, st);
  if (!rc) rt_graph_reserve(g, g->n_nodes + (int)(a->size < (1u << 24) ? a->size : 0));
  for (uint32_t i = 0; !rc && i < a->size; i++) {
    rt_node *n;
    if (!(rc = unpack_node(m, &a->ptr[i], what, i, true, &n, st)) ||
        !(rc = unpack_node(m, &a->ptr[i], what, i, false, &n, st)))   /* name the field */
      rc = rt_graph_add(g, n, st);   /* validates; frees n on failure */
  }
  return rc;
}
