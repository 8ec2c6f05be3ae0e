/* GraphDefs in TensorFlow's binary format: runtime/graphdef.h. Messages from
 * runtime/proto/graph.proto through protobuf-c; this file only moves fields between them and
 * rt_node / rt_attr_value. */
#include "runtime/graphdef.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "runtime/metagraph.h"
#include "runtime/op.h"
#include "runtime/proto/graph.pb-c.h"

/* ---- encoding: protobuf-c structs built in a pool, freed together ------------------------ */

typedef struct pool {
  void **p;
  int n, cap;
} pool;

static void *palloc(pool *pl, size_t n) {
  if (pl->n == pl->cap) {
    pl->cap = pl->cap ? 2 * pl->cap : 256;
    pl->p = xrealloc(pl->p, (size_t)pl->cap * sizeof *pl->p);
  }
  return pl->p[pl->n++] = xcalloc(1, n ? n : 1);
}
static void *pool_alloc(void *pl, size_t n) { return palloc(pl, n); }
static void pool_keep(void *pl, void *p) { (void)pl, (void)p; }   /* freed with the pool */

static void pool_free(pool *pl) {
  for (int i = 0; i < pl->n; i++) free(pl->p[i]);
  free(pl->p);
}

static Tensorflow__TensorShapeProto *shape_pb(pool *pl, const rt_shape *s) {
  Tensorflow__TensorShapeProto *sp = palloc(pl, sizeof *sp);
  tensorflow__tensor_shape_proto__init(sp);
  if (s->ndims < 0) {
    sp->unknown_rank = 1;
    return sp;
  }
  sp->n_dim = (size_t)s->ndims;
  sp->dim = palloc(pl, sizeof *sp->dim * (size_t)s->ndims);
  for (int d = 0; d < s->ndims; d++) {
    sp->dim[d] = palloc(pl, sizeof *sp->dim[d]);
    tensorflow__tensor_shape_proto__dim__init(sp->dim[d]);
    sp->dim[d]->size = s->dims[d] < 0 ? -1 : s->dims[d];
  }
  return sp;
}

static Tensorflow__TensorProto *tensor_pb(pool *pl, const rt_tensor *t) {
  Tensorflow__TensorProto *tp = palloc(pl, sizeof *tp);
  tensorflow__tensor_proto__init(tp);
  tp->dtype = (Tensorflow__DataType)t->dtype;
  tp->tensor_shape = shape_pb(pl, &t->shape);
  int64_t n = rt_tensor_numel(t);
  if (n <= 0) return tp;
  if (t->dtype == RT_STRING) {
    const rt_str *s = rt_tensor_data(t);
    tp->n_string_val = (size_t)n;
    tp->string_val = palloc(pl, sizeof *tp->string_val * (size_t)n);
    for (int64_t i = 0; i < n; i++) {
      tp->string_val[i].len = s ? s[i].len : 0;
      tp->string_val[i].data = (uint8_t *)(s && s[i].ptr ? s[i].ptr : "");
    }
  } else if (rt_tensor_data(t)) {   /* TF writes tensor_content for more than one element */
    tp->tensor_content.len = (size_t)n * rt_dtype_size(t->dtype);
    tp->tensor_content.data = rt_tensor_data(t);
  }
  return tp;
}

static Tensorflow__AttrValue *attr_pb(pool *pl, const rt_attr_value *v) {
  Tensorflow__AttrValue *a = palloc(pl, sizeof *a);
  tensorflow__attr_value__init(a);
  Tensorflow__AttrValue__ListValue *l = NULL;
  if (v->kind >= RT_ATTR_LIST_INT) {
    l = palloc(pl, sizeof *l);
    tensorflow__attr_value__list_value__init(l);
    a->value_case = TENSORFLOW__ATTR_VALUE__VALUE_LIST;
    a->list = l;
  }
  size_t n = l ? (size_t)v->list.n : 0;
  switch (v->kind) {
  case RT_ATTR_INT: a->value_case = TENSORFLOW__ATTR_VALUE__VALUE_I, a->i = v->i; break;
  case RT_ATTR_FLOAT: a->value_case = TENSORFLOW__ATTR_VALUE__VALUE_F, a->f = (float)v->f; break;
  case RT_ATTR_BOOL: a->value_case = TENSORFLOW__ATTR_VALUE__VALUE_B, a->b = v->b; break;
  case RT_ATTR_STRING:
    a->value_case = TENSORFLOW__ATTR_VALUE__VALUE_S;
    a->s.data = (uint8_t *)(v->s ? v->s : "");
    a->s.len = v->s ? strlen(v->s) : 0;
    break;
  case RT_ATTR_TYPE: a->value_case = TENSORFLOW__ATTR_VALUE__VALUE_TYPE, a->type = (Tensorflow__DataType)v->type; break;
  case RT_ATTR_SHAPE: a->value_case = TENSORFLOW__ATTR_VALUE__VALUE_SHAPE, a->shape = shape_pb(pl, &v->shape); break;
  case RT_ATTR_TENSOR: a->value_case = TENSORFLOW__ATTR_VALUE__VALUE_TENSOR, a->tensor = tensor_pb(pl, v->tensor); break;
  case RT_ATTR_RAW: {   /* the TensorProto as it was read, its memory from the pool */
    ProtobufCAllocator al = {pool_alloc, pool_keep, pl};
    a->tensor = tensorflow__tensor_proto__unpack(&al, (size_t)v->list.n, v->list.v);
    if (a->tensor) a->value_case = TENSORFLOW__ATTR_VALUE__VALUE_TENSOR;
    break;
  }
  case RT_ATTR_LIST_INT:
    l->n_i = n, l->i = palloc(pl, sizeof *l->i * n);
    memcpy(l->i, v->list.v, sizeof *l->i * n);
    break;
  case RT_ATTR_LIST_FLOAT:
    l->n_f = n, l->f = palloc(pl, sizeof *l->f * n);
    for (size_t i = 0; i < n; i++) l->f[i] = (float)((double *)v->list.v)[i];
    break;
  case RT_ATTR_LIST_STRING:
    l->n_s = n, l->s = palloc(pl, sizeof *l->s * n);
    for (size_t i = 0; i < n; i++) {
      const char *s = ((char **)v->list.v)[i];
      l->s[i].data = (uint8_t *)(s ? s : "");
      l->s[i].len = s ? strlen(s) : 0;
    }
    break;
  case RT_ATTR_LIST_TYPE:
    l->n_type = n, l->type = palloc(pl, sizeof *l->type * n);
    for (size_t i = 0; i < n; i++) l->type[i] = (Tensorflow__DataType)((rt_dtype *)v->list.v)[i];
    break;
  case RT_ATTR_LIST_SHAPE:
    l->n_shape = n, l->shape = palloc(pl, sizeof *l->shape * n);
    for (size_t i = 0; i < n; i++) l->shape[i] = shape_pb(pl, &((rt_shape *)v->list.v)[i]);
    break;
  default: break;
  }
  return a;
}

static int cmp_attr(const void *a, const void *b) {
  return strcmp((*(Tensorflow__AttrEntry *const *)a)->key, (*(Tensorflow__AttrEntry *const *)b)->key);
}

/* add_shapes: attr _output_shapes, the static shape of each output of `of` (TF's
 * as_graph_def(add_shapes=True), which TensorBoard draws on the graph's edges; TF writes it
 * for nodes with outputs only). */
static Tensorflow__AttrEntry *output_shapes_pb(pool *pl, const rt_node *of) {
  Tensorflow__AttrEntry *e = palloc(pl, sizeof *e);
  tensorflow__attr_entry__init(e);
  e->key = "_output_shapes";
  rt_attr_value v = {.kind = RT_ATTR_LIST_SHAPE};
  v.list.n = of->n_outputs;
  v.list.v = of->out_shapes;
  e->value = attr_pb(pl, &v);
  return e;
}

static Tensorflow__NodeDef *node_pb(pool *pl, const rt_node *nd, rt_graphdef_devices devices, const rt_node *shapes_of) {
  Tensorflow__NodeDef *p = palloc(pl, sizeof *p);
  tensorflow__node_def__init(p);
  p->name = nd->name;
  p->op = nd->op;
  p->n_input = (size_t)nd->n_inputs;
  p->input = palloc(pl, sizeof *p->input * ((size_t)nd->n_inputs + 1));
  for (int k = 0; k < nd->n_inputs; k++) {   /* TF writes output 0 as the bare node name */
    size_t len = strlen(nd->inputs[k]);
    p->input[k] = nd->inputs[k];
    if (len > 2 && !strcmp(nd->inputs[k] + len - 2, ":0")) {
      p->input[k] = palloc(pl, len - 1);
      memcpy(p->input[k], nd->inputs[k], len - 2);
    }
  }
  const char *dev = devices == RT_GD_ASSIGNED && nd->assigned ? nd->assigned : nd->device;
  if (dev && devices != RT_GD_CLEARED) p->device = (char *)dev;
  p->attr = palloc(pl, sizeof *p->attr * ((size_t)nd->n_attrs + 1));
  for (int k = 0; k < nd->n_attrs; k++) {
    if (shapes_of && !strcmp(nd->attrs[k].name, "_output_shapes")) continue;   /* an imported node's, rewritten */
    Tensorflow__AttrEntry *e = palloc(pl, sizeof *e);
    tensorflow__attr_entry__init(e);
    e->key = nd->attrs[k].name;
    e->value = attr_pb(pl, &nd->attrs[k].value);
    p->attr[p->n_attr++] = e;
  }
  if (shapes_of && shapes_of->n_outputs > 0 && shapes_of->out_shapes) p->attr[p->n_attr++] = output_shapes_pb(pl, shapes_of);
  qsort(p->attr, p->n_attr, sizeof *p->attr, cmp_attr);   /* TF writes maps sorted by key */
  return p;
}

/* add_shapes for the TF ops standing for helper src (x[0..nx-1]): their shape functions'
 * answers, from a scratch graph where placeholders _in_K of src's inputs' dtypes and shapes
 * stand for its data inputs. A node the scratch graph refuses (and all after it) gets no
 * _output_shapes. The caller frees the graph. */
static rt_graph *helper_shapes(const rt_graph *g, const rt_node *src, rt_node *const *x, int nx) {
  rt_graph *sg = rt_graph_new();
  rt_status st = {0};
  char name[32];
  for (int i = 0; i < src->n_data_inputs && src->edges; i++) {
    const rt_node *in = g->nodes[src->edges[i].node];
    int idx = src->edges[i].index;
    snprintf(name, sizeof name, "_in_%d", i);
    rt_node *ph = rt_node_new(name, "Placeholder");
    rt_node_set_type(ph, "dtype", in->out_types[idx]);
    rt_node_set_shape(ph, "shape", &in->out_shapes[idx]);
    if (rt_graph_add(sg, ph, &st)) return sg;
  }
  for (int k = 0; k < nx; k++) {
    rt_node *c = rt_node_clone(x[k]);
    int kept = 0;
    for (int j = 0; j < c->n_inputs; j++) {
      char node[512];
      int idx;
      if (c->inputs[j][0] == '^' || !rt_tensor_name_parse(c->inputs[j], node, sizeof node, &idx)) {
        free(c->inputs[j]);   /* control inputs: no shapes to give */
        continue;
      }
      for (int i = 0; i < src->n_data_inputs && src->edges; i++) {
        const rt_edge *e = &src->edges[i];
        if (e->index == idx && !strcmp(g->nodes[e->node]->name, node)) {
          snprintf(name, sizeof name, "_in_%d", i);
          free(c->inputs[j]);
          c->inputs[j] = xstrdup(name);
          break;
        }
      }
      c->inputs[kept++] = c->inputs[j];
    }
    c->n_inputs = c->n_data_inputs = kept;
    if (rt_graph_add(sg, c, &st)) break;
  }
  return sg;
}

int rt_graphdef_encode(const rt_graph *g, rt_graphdef_devices devices, unsigned char **out, size_t *n, rt_status *st) {
  return rt_graphdef_encode_shapes(g, devices, false, out, n, st);
}

int rt_graphdef_encode_shapes(const rt_graph *g, rt_graphdef_devices devices, bool add_shapes, unsigned char **out,
                              size_t *n, rt_status *st) {
  pool pl = {0};
  Tensorflow__GraphDef gd;
  tensorflow__graph_def__init(&gd);
  Tensorflow__VersionDef ver;
  tensorflow__version_def__init(&ver);
  ver.producer = RT_GRAPHDEF_PRODUCER;
  gd.versions = &ver;
  size_t cap = (size_t)g->n_nodes + 1;
  gd.node = xcalloc(cap, sizeof *gd.node);
  rt_node **made = NULL;   /* TF's ops standing for tfsh's helpers, freed after packing */
  int n_made = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    rt_node **x = NULL;
    int nx = rt_graphdef_tf_ops(g, g->nodes[i], &x);
    if (gd.n_node + (size_t)nx + 1 > cap) gd.node = xrealloc(gd.node, (cap = 2 * cap + (size_t)nx) * sizeof *gd.node);
    if (!nx) {
      gd.node[gd.n_node++] = node_pb(&pl, g->nodes[i], devices, add_shapes ? g->nodes[i] : NULL);
      continue;
    }
    made = xrealloc(made, (size_t)(n_made + nx) * sizeof *made);
    rt_graph *sg = add_shapes ? helper_shapes(g, g->nodes[i], x, nx) : NULL;
    for (int k = 0; k < nx; k++) {
      made[n_made++] = x[k];
      /* the last one, under the helper's name, has the helper's outputs */
      const rt_node *of = !sg ? NULL : k == nx - 1 ? g->nodes[i] : rt_graph_find(sg, x[k]->name);
      gd.node[gd.n_node++] = node_pb(&pl, x[k], devices, of);
    }
    rt_graph_free(sg);
    free(x);
  }
  size_t len = tensorflow__graph_def__get_packed_size(&gd);
  unsigned char *b = malloc(len ? len : 1);
  if (b) tensorflow__graph_def__pack(&gd, b);
  pool_free(&pl);
  free(gd.node);
  for (int i = 0; i < n_made; i++) rt_node_free(made[i]);
  free(made);
  if (!b) return rt_error(st, RT_RESOURCE_EXHAUSTED, "out of memory for a GraphDef of %zu bytes", len);
  *out = b;
  *n = len;
  return RT_OK;
}

/* ---- decoding ------------------------------------------------------------------------------ */

static bool dtype_ok(int t) {
  return t == RT_FLOAT || t == RT_DOUBLE || t == RT_INT32 || t == RT_UINT8 || t == RT_INT64 || t == RT_BOOL ||
         t == RT_STRING;
}

static int shape_from(const Tensorflow__TensorShapeProto *sp, rt_shape *s, const char *where, rt_status *st) {
  if (!sp) {
    *s = rt_shape_scalar();
    return RT_OK;
  }
  if (sp->unknown_rank) {
    *s = rt_shape_unknown();
    return RT_OK;
  }
  if (sp->n_dim > RT_MAX_DIMS) return rt_error(st, RT_UNIMPLEMENTED, "%s: a shape of %zu dims (tfsh has at most %d)", where, sp->n_dim, RT_MAX_DIMS);
  s->ndims = (int)sp->n_dim;
  for (size_t d = 0; d < sp->n_dim; d++) s->dims[d] = sp->dim[d]->size < 0 ? -1 : sp->dim[d]->size;
  return RT_OK;
}

/* TF's tensor_content of a string tensor (its RunStep replies): n varint lengths, then the
 * strings' bytes one after the other. Nonzero when the bytes do not hold that. */
static int strings_from_content(rt_tensor *t, int64_t n, const uint8_t *p, size_t len) {
  size_t at = 0;
  uint64_t *lens = xcalloc((size_t)n + 1, sizeof *lens);
  for (int64_t i = 0; i < n; i++) {
    uint64_t v = 0;
    for (int shift = 0;; shift += 7) {
      if (at >= len || shift > 63) {
        free(lens);
        return -1;
      }
      uint8_t b = p[at++];
      v |= (uint64_t)(b & 0x7f) << shift;
      if (!(b & 0x80)) break;
    }
    lens[i] = v;
  }
  for (int64_t i = 0; i < n; i++) {
    if (lens[i] > len - at) {
      free(lens);
      return -1;
    }
    rt_tensor_set_str(t, i, (const char *)p + at, (size_t)lens[i]);
    at += lens[i];
  }
  free(lens);
  return at == len ? 0 : -1;
}

static int tensor_from(const Tensorflow__TensorProto *tp, rt_tensor **out, const char *where, rt_status *st) {
  if (!dtype_ok(tp->dtype))
    return rt_error(st, RT_UNIMPLEMENTED, "%s: a tensor of DataType %d, which tfsh does not have", where, (int)tp->dtype);
  rt_shape s;
  int rc = shape_from(tp->tensor_shape, &s, where, st);
  if (rc) return rc;
  int64_t n = rt_shape_numel(&s);
  if (n < 0 || n > ((int64_t)1 << 40)) return rt_error(st, RT_INVALID_ARGUMENT, "%s: a constant's shape is not fully known", where);
  rt_dtype dt = (rt_dtype)tp->dtype;
  size_t es = rt_dtype_size(dt);
  if (dt != RT_STRING && tp->tensor_content.len && tp->tensor_content.len != (size_t)n * es)
    return rt_error(st, RT_INVALID_ARGUMENT, "%s: tensor_content has %zu bytes, the shape needs %lld", where,
                    tp->tensor_content.len, (long long)((size_t)n * es));
  size_t have = 0;
  switch (dt) {
  case RT_FLOAT: have = tp->n_float_val; break;
  case RT_DOUBLE: have = tp->n_double_val; break;
  case RT_INT32: case RT_UINT8: have = tp->n_int_val; break;
  case RT_INT64: have = tp->n_int64_val; break;
  case RT_BOOL: have = tp->n_bool_val; break;
  case RT_STRING: have = tp->n_string_val; break;
  default: break;
  }
  if (have > (size_t)n) return rt_error(st, RT_INVALID_ARGUMENT, "%s: %zu values for a tensor of %lld elements", where, have, (long long)n);
  rt_tensor *t = rt_tensor_new(dt, &s);
  if (!t) return rt_error(st, RT_RESOURCE_EXHAUSTED, "%s: out of memory for a constant of %lld elements", where, (long long)n);
  if (dt != RT_STRING && tp->tensor_content.len) {
    memcpy(rt_tensor_data(t), tp->tensor_content.data, tp->tensor_content.len);
  } else if (dt == RT_STRING && tp->tensor_content.len && !have) {
    if (strings_from_content(t, n, tp->tensor_content.data, tp->tensor_content.len)) {
      rt_tensor_unref(t);
      return rt_error(st, RT_DATA_LOSS, "%s: a string tensor's tensor_content does not hold %lld strings",
                      where, (long long)n);
    }
  } else if (have) {   /* fewer values than elements: the last one repeats (TF's rule) */
    for (int64_t i = 0; i < n; i++) {
      size_t k = (size_t)i < have ? (size_t)i : have - 1;
      void *d = rt_tensor_data(t);
      switch (dt) {
      case RT_FLOAT: ((float *)d)[i] = tp->float_val[k]; break;
      case RT_DOUBLE: ((double *)d)[i] = tp->double_val[k]; break;
      case RT_INT32: ((int32_t *)d)[i] = tp->int_val[k]; break;
      case RT_UINT8: ((uint8_t *)d)[i] = (uint8_t)tp->int_val[k]; break;
      case RT_INT64: ((int64_t *)d)[i] = tp->int64_val[k]; break;
      case RT_BOOL: ((bool *)d)[i] = tp->bool_val[k]; break;
      case RT_STRING: rt_tensor_set_str(t, i, (const char *)tp->string_val[k].data, tp->string_val[k].len); break;
      default: break;
      }
    }
  }
  *out = t;
  return RT_OK;
}

static int attr_from(const Tensorflow__AttrValue *a, rt_attr_value *v, const char *where, rt_status *st) {
  memset(v, 0, sizeof *v);
  switch (a->value_case) {
  case TENSORFLOW__ATTR_VALUE__VALUE_I: v->kind = RT_ATTR_INT, v->i = a->i; return RT_OK;
  case TENSORFLOW__ATTR_VALUE__VALUE_F: v->kind = RT_ATTR_FLOAT, v->f = a->f; return RT_OK;
  case TENSORFLOW__ATTR_VALUE__VALUE_B: v->kind = RT_ATTR_BOOL, v->b = a->b; return RT_OK;
  case TENSORFLOW__ATTR_VALUE__VALUE_S: v->kind = RT_ATTR_STRING, v->s = xstrndup((const char *)a->s.data, a->s.len); return RT_OK;
  case TENSORFLOW__ATTR_VALUE__VALUE_TYPE: v->kind = RT_ATTR_TYPE, v->type = (rt_dtype)a->type; return RT_OK;
  case TENSORFLOW__ATTR_VALUE__VALUE_SHAPE: v->kind = RT_ATTR_SHAPE; return shape_from(a->shape, &v->shape, where, st);
  case TENSORFLOW__ATTR_VALUE__VALUE_TENSOR: {
    if (a->tensor && !dtype_ok(a->tensor->dtype) && a->tensor->dtype > 0) {   /* kept as bytes (RT_ATTR_RAW) */
      size_t len = tensorflow__tensor_proto__get_packed_size(a->tensor);
      v->kind = RT_ATTR_RAW, v->list.n = (int)len, v->list.v = xmalloc(len ? len : 1);
      tensorflow__tensor_proto__pack(a->tensor, v->list.v);
      return RT_OK;
    }
    int rc = tensor_from(a->tensor, &v->tensor, where, st);
    if (!rc) v->kind = RT_ATTR_TENSOR;
    return rc;
  }
  case TENSORFLOW__ATTR_VALUE__VALUE_LIST: {
    const Tensorflow__AttrValue__ListValue *l = a->list;
    if (l->n_s) {
      v->kind = RT_ATTR_LIST_STRING, v->list.n = (int)l->n_s;
      char **s = xcalloc(l->n_s, sizeof *s);
      for (size_t i = 0; i < l->n_s; i++) s[i] = xstrndup((const char *)l->s[i].data, l->s[i].len);
      v->list.v = s;
    } else if (l->n_f) {
      v->kind = RT_ATTR_LIST_FLOAT, v->list.n = (int)l->n_f;
      double *f = xcalloc(l->n_f, sizeof *f);
      for (size_t i = 0; i < l->n_f; i++) f[i] = l->f[i];
      v->list.v = f;
    } else if (l->n_type) {
      v->kind = RT_ATTR_LIST_TYPE, v->list.n = (int)l->n_type;
      rt_dtype *t = xcalloc(l->n_type, sizeof *t);
      for (size_t i = 0; i < l->n_type; i++) t[i] = (rt_dtype)l->type[i];
      v->list.v = t;
    } else if (l->n_shape) {
      v->kind = RT_ATTR_LIST_SHAPE, v->list.n = (int)l->n_shape;
      rt_shape *s = xcalloc(l->n_shape, sizeof *s);
      v->list.v = s;
      for (size_t i = 0; i < l->n_shape; i++) {
        int rc = shape_from(l->shape[i], &s[i], where, st);
        if (rc) {
          rt_attr_value_clear(v);
          return rc;
        }
      }
    } else if (l->n_tensor || l->n_func || l->n_b) {
      return rt_error(st, RT_UNIMPLEMENTED, "%s: a list of %s, which tfsh's attrs cannot hold", where,
                      l->n_tensor ? "tensors" : l->n_func ? "functions" : "bools");
    } else {   /* ints, or an empty list of any kind (the importer retypes it) */
      v->kind = RT_ATTR_LIST_INT, v->list.n = (int)l->n_i;
      int64_t *i = xcalloc(l->n_i ? l->n_i : 1, sizeof *i);
      if (l->n_i) memcpy(i, l->i, l->n_i * sizeof *i);
      v->list.v = i;
    }
    return RT_OK;
  }
  case TENSORFLOW__ATTR_VALUE__VALUE_FUNC:
    return rt_error(st, RT_UNIMPLEMENTED, "%s: a function attr (tfsh does not run TF functions)", where);
  case TENSORFLOW__ATTR_VALUE__VALUE_PLACEHOLDER:
    return rt_error(st, RT_UNIMPLEMENTED, "%s: a placeholder attr (only inside TF functions)", where);
  default:
    v->kind = RT_ATTR_NONE;
    return RT_OK;
  }
}

int rt_graphdef_decode(const unsigned char *p, size_t n, const char *what, rt_graphdef *gd, rt_status *st) {
  memset(gd, 0, sizeof *gd);
  Tensorflow__GraphDef *g = tensorflow__graph_def__unpack(NULL, n, p);
  if (!g) return rt_pb_error(st, p, n, RT_PB_GRAPH_DEF, what, "binary GraphDef");
  int rc = RT_OK;
  gd->producer = g->versions ? g->versions->producer : g->version;
  gd->nodes = xcalloc(g->n_node ? g->n_node : 1, sizeof *gd->nodes);
  for (size_t i = 0; i < g->n_node && !rc; i++) {
    const Tensorflow__NodeDef *nd = g->node[i];
    if (!nd->name[0] || !nd->op[0]) {
      rc = rt_error(st, RT_INVALID_ARGUMENT, "%s: node %zu has no %s", what, i, nd->name[0] ? "op" : "name");
      break;
    }
    rt_node *x = rt_node_new(nd->name, nd->op);
    for (size_t k = 0; k < nd->n_input; k++) rt_node_add_input(x, nd->input[k]);
    if (nd->device[0]) rt_node_set_device(x, nd->device);
    for (size_t k = 0; k < nd->n_attr && !rc; k++) {
      const Tensorflow__AttrEntry *e = nd->attr[k];
      if (!e->value) continue;
      char where[600];
      snprintf(where, sizeof where, "%s: node '%s' (op %s), attr '%s'", what, nd->name, nd->op, e->key);
      rt_attr_value v;
      rc = attr_from(e->value, &v, where, st);
      if (!rc && v.kind != RT_ATTR_NONE) rt_node_set_attr(x, e->key, &v);
    }
    gd->nodes[gd->n++] = x;
  }
  tensorflow__graph_def__free_unpacked(g, NULL);
  if (rc) rt_graphdef_free(gd);
  return rc;
}

void rt_graphdef_free(rt_graphdef *gd) {
  for (int i = 0; i < gd->n; i++) rt_node_free(gd->nodes[i]);
  free(gd->nodes);
  gd->nodes = NULL;
  gd->n = 0;
}

/* ---- adding a GraphDef's nodes to a graph ----------------------------------------------- */

typedef struct ni {   /* a node's name and index, sorted by name for lookups */
  const char *name;
  int i;
} ni;
static int ni_cmp(const void *a, const void *b) { return strcmp(((const ni *)a)->name, ((const ni *)b)->name); }

/* Nodes in an order where every input comes first (a GraphDef need not be sorted), but for
 * loops' back edges (NextIteration -> Merge). */
int *rt_graphdef_order(const rt_graphdef *gd, rt_status *st) {
  int n = gd->n, *order = xcalloc((size_t)n + 1, sizeof *order), *state = xcalloc((size_t)n + 1, sizeof *state);
  int *stack = xcalloc((size_t)n + 1, sizeof *stack), *pos = xcalloc((size_t)n + 1, sizeof *pos), k = 0;
  ni *idx = xcalloc((size_t)n + 1, sizeof *idx);
  for (int i = 0; i < n; i++) idx[i] = (ni){gd->nodes[i]->name, i};
  qsort(idx, (size_t)n, sizeof *idx, ni_cmp);
  int rc = RT_OK;
  for (int r = 0; r < n && !rc; r++) {
    if (state[r]) continue;
    int sp = 0;
    stack[sp++] = r, state[r] = 1, pos[r] = 0;
    while (sp && !rc) {
      int v = stack[sp - 1];
      const rt_node *x = gd->nodes[v];
      if (pos[v] < x->n_inputs) {
        char nm[512];
        int oi;
        const char *in = x->inputs[pos[v]++];
        if (!rt_tensor_name_parse(in, nm, sizeof nm, &oi)) continue;
        ni key = {nm, 0}, *f = bsearch(&key, idx, (size_t)n, sizeof *idx, ni_cmp);
        if (!f) continue;   /* an input_map'd or outside name: checked when added */
        const char *sop = gd->nodes[f->i]->op;
        if ((!strcmp(x->op, "Merge") || !strcmp(x->op, "RefMerge")) &&
            (!strcmp(sop, "NextIteration") || !strcmp(sop, "RefNextIteration")))
          continue;   /* a loop's back edge: the Merge may come first (rt_graph's forward inputs) */
        if (state[f->i] == 1) {
          rc = rt_error(st, RT_INVALID_ARGUMENT, "GraphDef has a cycle through node '%s' that is not a loop's", x->name);
          break;
        }
        if (!state[f->i]) stack[sp++] = f->i, state[f->i] = 1, pos[f->i] = 0;
      } else {
        state[v] = 2;
        order[k++] = v;
        sp--;
      }
    }
  }
  free(state), free(stack), free(pos), free(idx);
  if (rc) {
    free(order);
    return NULL;
  }
  return order;
}

/* TF's attrs that tfsh's op lacks are dropped (defaults and bookkeeping: use_locking,
 * _output_shapes, ...), empty lists take the signature's kind, and N is filled where tfsh's
 * signature counts a list TF's does not. */
void rt_graphdef_fit_attrs(rt_node *x, const rt_op_sig *sig) {
  for (int k = 0; k < x->n_attrs;) {
    rt_attr *a = &x->attrs[k];
    const rt_attr_sig *as = NULL;
    for (int j = 0; j < sig->n_attrs; j++)
      if (!strcmp(sig->attrs[j].name, a->name)) as = &sig->attrs[j];
    bool keep = as != NULL || !strcmp(a->name, "_class");
    if (as && a->value.kind != as->kind) {
      if (a->value.kind == RT_ATTR_LIST_INT && a->value.list.n == 0 && as->kind >= RT_ATTR_LIST_INT)
        a->value.kind = as->kind;   /* an empty list of another kind */
      else if (a->value.kind == RT_ATTR_FLOAT && as->kind == RT_ATTR_INT)
        keep = false;
      else   /* a tensor of a dtype tfsh lacks: kept, so that validation names the node */
        keep = a->value.kind == as->kind || (a->value.kind == RT_ATTR_RAW && as->kind == RT_ATTR_TENSOR);
    }
    if (keep) {
      k++;
      continue;
    }
    rt_attr_value_clear(&a->value);
    free(a->name);
    memmove(a, a + 1, (size_t)(x->n_attrs - k - 1) * sizeof *a);
    x->n_attrs--;
  }
  bool wants_n = false;
  for (int j = 0; j < sig->n_attrs; j++) wants_n |= !strcmp(sig->attrs[j].name, "N") && sig->attrs[j].kind == RT_ATTR_INT;
  /* TF sizes a type list by the list itself (RestoreV2's dtypes, a queue's component
   * types); tfsh's signatures by N */
  static const char *const lists[] = {"dtypes", "component_types", "Tcomponents"};
  for (size_t l = 0; wants_n && !rt_node_attr(x, "N") && l < sizeof lists / sizeof *lists; l++) {
    const rt_attr_value *dt = rt_node_attr(x, lists[l]);
    if (dt && dt->kind == RT_ATTR_LIST_TYPE) rt_node_set_int(x, "N", dt->list.n);
  }
}

/* Ops TF writes under a newer name for what a tfsh op does (TF 1.15's `+` is AddV2). */
const char *rt_graphdef_op(const char *op) {
  static const char *const alias[][2] = {{"AddV2", "Add"}};
  if (rt_op_find(op)) return op;
  for (size_t i = 0; i < sizeof alias / sizeof alias[0]; i++)
    if (!strcmp(op, alias[i][0]) && rt_op_find(alias[i][1])) return alias[i][1];
  return op;
}

/* ---- export_meta_graph(export_scope=...) ---------------------------------------------------- */

/* TF's rules (meta_graph.py): a name is exported when it starts with the scope as given
 * ("tower" takes "tower_1/x" too); "scope/" (the scope without its trailing '/', then any
 * slashes) is taken off where it is there. The result points into s. */
static const char *strip_scope(const char *s, const char *scope, size_t sl) {
  if (strncmp(s, scope, sl) || s[sl] != '/') return s;
  for (s += sl; *s == '/'; s++) {}
  return s;
}

int rt_graphdef_scope(const unsigned char *p, size_t n, const char *scope, unsigned char **out, size_t *out_n,
                      char ***unbound, int *n_unbound, rt_status *st) {
  Tensorflow__GraphDef *g = tensorflow__graph_def__unpack(NULL, n, p);
  if (!g) return rt_error(st, RT_INTERNAL, "export_scope: the graph's own GraphDef does not read back");
  size_t raw = strlen(scope), sl = raw;
  while (sl && scope[sl - 1] == '/') sl--;
  pool pl = {0};
  *unbound = NULL, *n_unbound = 0;
  Tensorflow__NodeDef **kept = xcalloc(g->n_node + 1, sizeof *kept), **all = g->node;
  size_t nk = 0, n_all = g->n_node;
  for (size_t i = 0; i < g->n_node; i++) {
    Tensorflow__NodeDef *src = g->node[i];
    if (strncmp(src->name, scope, raw)) continue;
    const char *name = strip_scope(src->name, scope, sl);
    Tensorflow__NodeDef *x = palloc(&pl, sizeof *x);   /* a shallow copy: its strings are g's or the pool's */
    *x = *src;
    x->name = (char *)name;
    x->input = palloc(&pl, (src->n_input + 1) * sizeof *x->input);
    for (size_t k = 0; k < src->n_input; k++) {
      const char *in = src->input[k];
      bool ctl = in[0] == '^';
      const char *u = strncmp(in + ctl, scope, raw) ? NULL : strip_scope(in + ctl, scope, sl);
      if (u && !ctl) {
        x->input[k] = (char *)u;
      } else if (u) {
        x->input[k] = palloc(&pl, strlen(u) + 2);
        sprintf(x->input[k], "^%s", u);
      } else {   /* from outside the scope: TF's "$unbound_inputs_" mark, listed for the collection */
        x->input[k] = palloc(&pl, strlen(in) + 18);
        sprintf(x->input[k], "%s$unbound_inputs_%s", ctl ? "^" : "", in + ctl);
        *unbound = xrealloc(*unbound, (size_t)(*n_unbound + 1) * sizeof **unbound);
        (*unbound)[(*n_unbound)++] = xstrdup(x->input[k]);
      }
    }
    x->attr = palloc(&pl, (src->n_attr + 1) * sizeof *x->attr);
    for (size_t k = 0; k < src->n_attr; k++) {
      x->attr[k] = src->attr[k];
      Tensorflow__AttrValue *v = src->attr[k]->value;
      if (strcmp(src->attr[k]->key, "_class") || !v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST) continue;
      Tensorflow__AttrEntry *e = palloc(&pl, sizeof *e);
      Tensorflow__AttrValue *nv = palloc(&pl, sizeof *nv);
      Tensorflow__AttrValue__ListValue *l = palloc(&pl, sizeof *l);
      *e = *src->attr[k], *nv = *v, *l = *v->list;
      e->value = nv, nv->list = l;
      l->s = palloc(&pl, (l->n_s + 1) * sizeof *l->s);
      for (size_t j = 0; j < l->n_s; j++) {   /* loc:@scope/x -> loc:@x */
        l->s[j] = v->list->s[j];
        const char *s = (const char *)l->s[j].data;
        if (l->s[j].len > 5 && !strncmp(s, "loc:@", 5)) {
          char *t = palloc(&pl, l->s[j].len + 1);
          memcpy(t, s, l->s[j].len);
          const char *rest = strip_scope(t + 5, scope, sl);
          memmove(t + 5, rest, strlen(rest) + 1);
          l->s[j].data = (uint8_t *)t, l->s[j].len = strlen(t);
        }
      }
      x->attr[k] = e;
    }
    kept[nk++] = x;
  }
  g->node = kept, g->n_node = nk;
  *out_n = tensorflow__graph_def__get_packed_size(g);
  *out = xmalloc(*out_n ? *out_n : 1);
  tensorflow__graph_def__pack(g, *out);
  g->node = all, g->n_node = n_all;
  free(kept);
  pool_free(&pl);
  tensorflow__graph_def__free_unpacked(g, NULL);
  return RT_OK;
}

/* ---- TensorProto alone (TF's gRPC messages: runtime/tfsession.c) ------------------- */

static int too_big(const char *what, const char *verb, size_t bytes, const char *advice, rt_status *st) {
  if (bytes <= RT_GRPC_MAX_MESSAGE) return RT_OK;
  return rt_error(st, RT_RESOURCE_EXHAUSTED, "%s %s %zu bytes, more than the %d one gRPC message carries "
                  "(TensorFlow's limit too): %s", what, verb, bytes, RT_GRPC_MAX_MESSAGE, advice);
}

int rt_grpc_message_fits(const char *what, rt_tensor *const *t, int n, size_t msg_bytes, const char *advice,
                         rt_status *st) {
  size_t bytes = msg_bytes;
  for (int i = 0; i < n && !msg_bytes; i++) bytes += t[i] ? rt_tensor_nbytes(t[i]) : 0;
  return too_big(what, msg_bytes ? "would be" : "hold", bytes, advice, st);
}

int rt_grpc_tensors_fit(const char *what, size_t bytes, const char *advice, rt_status *st) {
  return too_big(what, "hold", bytes, advice, st);
}

int rt_grpc_fetches_fit(const rt_graph *g, const char *const *names, int n, rt_status *st) {
  size_t bytes = 0;
  for (int i = 0; i < n; i++) {
    rt_node *node;
    int idx;
    rt_status ig = {0};
    if (rt_graph_output(g, names[i], &node, &idx, &ig)) continue;   /* the run says */
    bytes += rt_dtype_fixed_bytes(node->out_types[idx], rt_shape_numel(&node->out_shapes[idx]));
  }
  return too_big("RunStep's fetches", "hold", bytes, RT_GRPC_FETCH_ADVICE, st);
}

int rt_tensor_proto_encode(const rt_tensor *t, unsigned char **out, size_t *n, rt_status *st) {
  pool pl = {0};
  Tensorflow__TensorProto *tp = tensor_pb(&pl, t);
  *n = tensorflow__tensor_proto__get_packed_size(tp);
  *out = malloc(*n ? *n : 1);
  if (*out) tensorflow__tensor_proto__pack(tp, *out);
  pool_free(&pl);
  return *out ? RT_OK : rt_error(st, RT_RESOURCE_EXHAUSTED, "out of memory for a TensorProto of %zu bytes", *n);
}

int rt_tensor_proto_decode(const unsigned char *p, size_t n, const char *where, rt_tensor **out,
                           rt_status *st) {
  Tensorflow__TensorProto *tp = tensorflow__tensor_proto__unpack(NULL, n, p);
  if (!tp) return rt_error(st, RT_DATA_LOSS, "%s: %zu bytes that are not a TensorProto", where, n);
  int rc = tensor_from(tp, out, where, st);
  tensorflow__tensor_proto__free_unpacked(tp, NULL);
  return rc;
}
