/* Shape helpers shared by the op tables: broadcasting and TF1's words for shape errors. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ops/ops_int.h"

const char *op_tf_type(rt_dtype t) {
  switch (t) {
  case RT_FLOAT: return "float";
  case RT_DOUBLE: return "double";
  default: return rt_dtype_name(t);
  }
}

char *op_shape_tf(const rt_shape *s, char *buf, size_t n) {
  if (s->ndims < 0) {
    snprintf(buf, n, "<unknown>");
    return buf;
  }
  size_t off = (size_t)snprintf(buf, n, "[");
  for (int i = 0; i < s->ndims && off < n; i++) {
    const char *sep = i ? "," : "";
    if (s->dims[i] < 0)
      off += (size_t)snprintf(buf + off, n - off, "%s?", sep);
    else
      off += (size_t)snprintf(buf + off, n - off, "%s%lld", sep, (long long)s->dims[i]);
  }
  if (off < n) snprintf(buf + off, n - off, "]");
  return buf;
}

/* " with input shapes: [2,3], [4]." */
static void input_shapes(const rt_shape_ctx *c, char *buf, size_t n) {
  size_t off = (size_t)snprintf(buf, n, " with input shapes: ");
  for (int i = 0; i < c->n_inputs && off < n; i++) {
    char s[160];
    off += (size_t)snprintf(buf + off, n - off, "%s%s", i ? ", " : "",
                            op_shape_tf(&c->in_shapes[i], s, sizeof s));
  }
  if (off < n) snprintf(buf + off, n - off, ".");
}

int op_dims_error(rt_shape_ctx *c, int64_t a, int64_t b) {
  char shapes[512];
  input_shapes(c, shapes, sizeof shapes);
  return rt_error(c->st, RT_INVALID_ARGUMENT,
                  "Dimensions must be equal, but are %lld and %lld for '%s' (op: '%s')%s",
                  (long long)a, (long long)b, c->node->name, c->node->op, shapes);
}

int op_broadcast_shape(const rt_shape *a, const rt_shape *b, rt_shape *out, const rt_node *n,
                       rt_status *st) {
  if (a->ndims < 0 || b->ndims < 0) {
    *out = rt_shape_unknown();
    return RT_OK;
  }
  int nd = a->ndims > b->ndims ? a->ndims : b->ndims;
  out->ndims = nd;
  for (int i = 0; i < nd; i++) {
    int ia = i - (nd - a->ndims), ib = i - (nd - b->ndims);
    int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
    if (da == 1) out->dims[i] = db;
    else if (db == 1) out->dims[i] = da;
    else if (da < 0) out->dims[i] = db;   /* unknown vs known: must be the known one */
    else if (db < 0) out->dims[i] = da;
    else if (da == db) out->dims[i] = da;
    else {
      if (!n) return RT_INVALID_ARGUMENT;
      char sa[160], sb[160];
      return rt_error(st, RT_INVALID_ARGUMENT,
                      "Dimensions must be equal, but are %lld and %lld for '%s' (op: '%s') "
                      "with input shapes: %s, %s.",
                      (long long)da, (long long)db, n->name, n->op, op_shape_tf(a, sa, sizeof sa),
                      op_shape_tf(b, sb, sizeof sb));
    }
  }
  return RT_OK;
}

int op_shape_unchanged(rt_shape_ctx *c) {
  c->out_shapes[0] = c->in_shapes[0];
  return RT_OK;
}

int op_shape_broadcast(rt_shape_ctx *c) {
  return op_broadcast_shape(&c->in_shapes[0], &c->in_shapes[1], &c->out_shapes[0], c->node,
                            c->st);
}

bool op_const_ints(const rt_shape_ctx *c, int i, int64_t *out, int max, int *n) {
  const rt_tensor *t = i < c->n_inputs ? c->in_values[i] : NULL;
  if (!t || !rt_dtype_is_int(t->dtype)) return false;
  int64_t k = rt_tensor_numel(t);
  if (k > max) return false;
  for (int64_t j = 0; j < k; j++) out[j] = rt_tensor_get_i64(t, j);
  *n = (int)k;
  return true;
}

const int64_t *op_list_ints(const rt_node *n, const char *name, int *count) {
  const rt_attr_value *v = rt_node_attr(n, name);
  *count = v && v->kind == RT_ATTR_LIST_INT ? v->list.n : 0;
  return *count ? v->list.v : NULL;
}

/* A Const node's one int value, if it is one. */
static bool const_scalar(const rt_node *n, int64_t *v) {
  const rt_attr_value *a = strcmp(n->op, "Const") ? NULL : rt_node_attr(n, "value");
  if (!a || a->kind != RT_ATTR_TENSOR || !rt_dtype_is_int(a->tensor->dtype) || rt_tensor_numel(a->tensor) != 1)
    return false;
  *v = rt_tensor_get_i64(a->tensor, 0);
  return true;
}

/* One element of a shape vector built by Pack: a constant, Shape(x)[k] (x's dim k, as far as
 * known), else -1. */
static int64_t pack_dim(const rt_graph *g, const rt_node *n) {
  int64_t v, end, step;
  if (const_scalar(n, &v)) return v < 0 ? -1 : v;
  if (strcmp(n->op, "StridedSlice") || n->n_data_inputs != 4 || rt_node_int(n, "shrink_axis_mask", 0) != 1 ||
      rt_node_int(n, "begin_mask", 0) || rt_node_int(n, "ellipsis_mask", 0) || rt_node_int(n, "new_axis_mask", 0))
    return -1;
  const rt_node *sh = g->nodes[n->edges[0].node];
  const rt_attr_value *bv = rt_node_attr(g->nodes[n->edges[1].node], "value");
  if (strcmp(sh->op, "Shape") || !bv || bv->kind != RT_ATTR_TENSOR || rt_tensor_numel(bv->tensor) != 1 ||
      !const_scalar(g->nodes[n->edges[3].node], &step) || step != 1)
    return -1;
  (void)end;
  const rt_shape *xs = &g->nodes[sh->edges[0].node]->out_shapes[sh->edges[0].index];
  int64_t k = rt_tensor_get_i64(bv->tensor, 0);
  if (xs->ndims < 0) return -1;
  if (k < 0) k += xs->ndims;
  return k >= 0 && k < xs->ndims ? xs->dims[k] : -1;
}

bool op_shape_input(const rt_shape_ctx *c, int i, rt_shape *out) {
  int64_t v[RT_MAX_DIMS];
  int n;
  if (op_const_ints(c, i, v, RT_MAX_DIMS, &n)) {
    *out = rt_shape_make(n, v);
    return true;
  }
  if (!c->g || i >= c->n_inputs) return false;
  const rt_node *src = c->g->nodes[c->node->edges[i].node];
  if (!strcmp(src->op, "Pack") && src->n_data_inputs <= RT_MAX_DIMS && rt_node_int(src, "axis", 0) == 0) {
    out->ndims = src->n_data_inputs;   /* [tf.shape(x)[0], -1, 4]: (?, ?, 4), as TF's */
    for (int d = 0; d < src->n_data_inputs; d++) out->dims[d] = pack_dim(c->g, c->g->nodes[src->edges[d].node]);
    return true;
  }
  if (strcmp(src->op, "Shape") || src->n_data_inputs != 1) return false;
  const rt_node *x = c->g->nodes[src->edges[0].node];
  *out = x->out_shapes[src->edges[0].index];
  return out->ndims >= 0;
}

/* "<4 -1>": a Const input's values as TF1's shape errors show them. */
static size_t tensor_summary(const rt_tensor *t, char *buf, size_t n) {
  size_t off = (size_t)snprintf(buf, n, "<");
  int64_t k = rt_tensor_numel(t);
  for (int64_t j = 0; j < k && j < 10 && off < n; j++) {
    const char *sep = j ? " " : "";
    if (rt_dtype_is_float(t->dtype))
      off += (size_t)snprintf(buf + off, n - off, "%s%g", sep, rt_tensor_get_f64(t, j));
    else
      off += (size_t)snprintf(buf + off, n - off, "%s%lld", sep, (long long)rt_tensor_get_i64(t, j));
  }
  if (k > 10 && off < n) off += (size_t)snprintf(buf + off, n - off, "...");
  if (off < n) off += (size_t)snprintf(buf + off, n - off, ">");
  return off;
}

int op_shape_error(rt_shape_ctx *c, unsigned tensors, const char *fmt, ...) {
  char msg[512], shapes[512], vals[400] = "";
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  input_shapes(c, shapes, sizeof shapes);
  size_t off = 0;
  for (int i = 0; i < c->n_inputs && i < 32 && off < sizeof vals; i++) {
    if (!(tensors >> i & 1) || !c->in_values[i]) continue;
    off += (size_t)snprintf(vals + off, sizeof vals - off, "%sinput[%d] = ",
                            off ? ", " : " and with computed input tensors: ", i);
    if (off < sizeof vals) off += tensor_summary(c->in_values[i], vals + off, sizeof vals - off);
  }
  if (off) {   /* the sentence's full stop moves after the tensors */
    shapes[strlen(shapes) - 1] = '\0';
    snprintf(vals + off, sizeof vals - off, ".");
  }
  return rt_error(c->st, RT_INVALID_ARGUMENT, "%s for '%s' (op: '%s')%s%s", msg, c->node->name,
                  c->node->op, shapes, vals);
}

int op_rank_error(rt_shape_ctx *c, int want, int got) {
  return op_shape_error(c, 0, "Shape must be rank %d but is rank %d", want, got);
}
