/* Helpers for gradient builders: gradients are ordinary graph nodes, added under the
 * builder's scope ("gradients/MatMul_grad/") so they are placed and partitioned like any
 * other op. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "ops/ops_int.h"

char *op_grad_node(rt_grad_ctx *c, const char *op, const char *base, int n_in,
                   const char *const *in, op_attr_fn attrs, const void *arg) {
  char want[256], name[300];
  snprintf(want, sizeof want, "%s%s", c->scope ? c->scope : "", base);
  rt_graph_unique_name(c->g, want, name, sizeof name);
  rt_node *n = rt_node_new(name, op);
  for (int i = 0; i < n_in; i++) {
    const char *t = c->remap ? c->remap(c->remap_arg, in[i]) : in[i];
    if (!t) {
      rt_node_free(n);
      return NULL;
    }
    rt_node_add_input(n, t);
  }
  if (n_in == 0 && c->pivot) rt_node_add_control(n, c->pivot);
  if (c->node->device && *c->node->device) rt_node_set_device(n, c->node->device);
  if (attrs) attrs(n, arg);
  if (rt_graph_add(c->g, n, c->st)) return NULL;
  return xstrdup(name);
}

char *op_g1(rt_grad_ctx *c, const char *op, const char *x) {
  return x ? op_grad_node(c, op, op, 1, &x, NULL, NULL) : NULL;
}

char *op_g2(rt_grad_ctx *c, const char *op, const char *x, const char *y) {
  const char *in[] = {x, y};
  return x && y ? op_grad_node(c, op, op, 2, in, NULL, NULL) : NULL;
}

typedef struct { rt_dtype t; double v; } scalar_arg;

static void set_scalar(rt_node *n, const void *arg) {
  const scalar_arg *a = arg;
  rt_tensor *t = NULL;
  switch (a->t) {
  case RT_FLOAT: t = rt_tensor_scalar_f32((float)a->v); break;
  case RT_DOUBLE: t = rt_tensor_scalar_f64(a->v); break;
  case RT_INT32: t = rt_tensor_scalar_i32((int32_t)a->v); break;
  default: t = rt_tensor_scalar_i64((int64_t)a->v); break;
  }
  rt_node_set_tensor(n, "value", t);
  rt_node_set_type(n, "dtype", a->t);
  rt_tensor_unref(t);
}

char *op_gconst(rt_grad_ctx *c, rt_dtype t, double v) {
  scalar_arg a = {t, v};
  return op_grad_node(c, "Const", "Const", 0, NULL, set_scalar, &a);
}

char *op_gsum_to(rt_grad_ctx *c, const char *dy, const char *like) {
  /* Skip the reduction when both shapes are known to be equal. */
  rt_node *src;
  int idx;
  rt_status ignore = {0};
  if (dy && !rt_graph_output(c->g, like, &src, &idx, &ignore)) {
    rt_shape ls = src->out_shapes[idx];
    if (!rt_graph_output(c->g, dy, &src, &idx, &ignore) && rt_shape_fully_known(&ls) &&
        rt_shape_equal(&ls, &src->out_shapes[idx]))
      return xstrdup(dy);
  }
  return op_g2(c, "_SumToShapeOf", dy, like);
}

rt_dtype op_gin_type(const rt_grad_ctx *c, int i) {
  const rt_node *src = c->g->nodes[c->node->edges[i].node];
  return src->out_types[c->node->edges[i].index];
}

rt_shape op_gshape(const rt_grad_ctx *c, const char *tensor) {
  rt_node *src;
  int idx;
  rt_status ignore = {0};
  if (rt_graph_output(c->g, tensor, &src, &idx, &ignore)) return rt_shape_unknown();
  return src->out_shapes[idx];
}

rt_dtype op_gtype(const rt_grad_ctx *c, const char *tensor) {
  rt_node *src;
  int idx;
  rt_status ignore = {0};
  if (rt_graph_output(c->g, tensor, &src, &idx, &ignore)) return RT_INVALID;
  return src->out_types[idx];
}

typedef struct { int n; const int64_t *v; } ints_arg;

static void set_ints(rt_node *n, const void *arg) {
  const ints_arg *a = arg;
  rt_shape s = rt_shape_make(1, (int64_t[]){a->n});
  rt_tensor *t = rt_tensor_new(RT_INT32, &s);
  for (int i = 0; t && i < a->n; i++) ((int32_t *)rt_tensor_data(t))[i] = (int32_t)a->v[i];
  rt_node_set_tensor(n, "value", t);
  rt_node_set_type(n, "dtype", RT_INT32);
  rt_tensor_unref(t);
}

char *op_gints(rt_grad_ctx *c, int n, const int64_t *v) {
  ints_arg a = {n, v};
  return op_grad_node(c, "Const", "Const", 0, NULL, set_ints, &a);
}

int op_no_grad(rt_grad_ctx *c) { return RT_OK; }

char *op_gshape_vec(rt_grad_ctx *c, const char *x) {
  rt_shape s = op_gshape(c, x);
  if (rt_shape_fully_known(&s)) return op_gints(c, s.ndims, s.dims);
  return op_g1(c, "Shape", x);
}

void op_copy_attrs(rt_node *n, const rt_node *from, const char *const *names) {
  for (; *names; names++) {
    const rt_attr_value *v = rt_node_attr(from, *names);
    rt_attr_value copy;
    if (v && !rt_attr_value_copy(&copy, v)) rt_node_set_attr(n, *names, &copy);
  }
}

static char *conv_node(rt_grad_ctx *c, const char *op, op_attr_fn attrs, int n, const char *a, const char *b,
                       const char *d) {
  const char *in[] = {a, b, d};
  return a && b && (n == 2 || d) ? op_grad_node(c, op, op, n, in, attrs, c->node) : NULL;
}

int op_conv_grads(rt_grad_ctx *c, const op_conv_ops *ops, int which) {
  const char *dy = c->dy[0], *const *in = (const char *const *)c->node->inputs;
  if (!dy) return RT_OK;
  char *s = op_gshape_vec(c, which == 1 ? in[1] : in[0]);   /* the sizes the other op needs */
  if (which == 0) {          /* fwd(x, f): x's and f's gradients */
    c->dx[0] = conv_node(c, ops->bin, ops->attrs, 3, s, in[1], dy);
    char *fs = c->dx[0] ? op_gshape_vec(c, in[1]) : NULL;
    c->dx[1] = conv_node(c, ops->bfil, ops->attrs, 3, in[0], fs, dy);
    free(fs);
  } else if (which == 1) {   /* bin(sizes, f, d): linear in f and d */
    c->dx[1] = conv_node(c, ops->bfil, ops->attrs, 3, dy, s, in[2]);
    c->dx[2] = c->dx[1] ? conv_node(c, ops->fwd, ops->attrs, 2, dy, in[1], NULL) : NULL;
  } else {                   /* bfil(x, sizes, d): linear in x and d */
    c->dx[0] = conv_node(c, ops->bin, ops->attrs, 3, s, dy, in[2]);
    c->dx[2] = c->dx[0] ? conv_node(c, ops->fwd, ops->attrs, 2, in[0], dy, NULL) : NULL;
  }
  free(s);
  return c->st->code;
}
