/* Math ops: elementwise arithmetic with broadcasting, unary functions, comparisons, Cast,
 * AddN, MatMul and the reductions. One row per op; gradients are built as graph ops. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "ops/ops_int.h"

#define NUM "{float, double, int32, int64}"
#define FLT "{float, double}"
#define EQ "{float, double, int32, int64, bool, uint8}"
#define NUM8 "{float, double, int32, int64, uint8}"   /* ops with uint8 kernels too */
#define NUM16 "{float, double, int32, int64, uint8, int16, int8, uint16}"   /* and small ints */

/* ---- shape functions ---------------------------------------------------------------- */

static int matmul_shape(rt_shape_ctx *c) {
  const rt_shape *a = &c->in_shapes[0], *b = &c->in_shapes[1];
  if (a->ndims >= 0 && a->ndims != 2) return op_rank_error(c, 2, a->ndims);
  if (b->ndims >= 0 && b->ndims != 2) return op_rank_error(c, 2, b->ndims);
  bool ta = rt_node_bool(c->node, "transpose_a", false);
  bool tb = rt_node_bool(c->node, "transpose_b", false);
  int64_t m = a->ndims == 2 ? a->dims[ta] : -1, ka = a->ndims == 2 ? a->dims[!ta] : -1;
  int64_t kb = b->ndims == 2 ? b->dims[tb] : -1, n = b->ndims == 2 ? b->dims[!tb] : -1;
  if (ka >= 0 && kb >= 0 && ka != kb) return op_dims_error(c, ka, kb);
  c->out_shapes[0] = rt_shape_make(2, (int64_t[]){m, n});
  return RT_OK;
}

static int batch_matmul_shape(rt_shape_ctx *c) {
  const rt_shape *a = &c->in_shapes[0], *b = &c->in_shapes[1];
  if (a->ndims >= 0 && a->ndims < 2)
    return op_shape_error(c, 0, "Shape must be at least rank 2 but is rank %d", a->ndims);
  if (b->ndims >= 0 && b->ndims < 2)
    return op_shape_error(c, 0, "Shape must be at least rank 2 but is rank %d", b->ndims);
  if (a->ndims < 0 || b->ndims < 0) return RT_OK;
  if (a->ndims != b->ndims) return op_rank_error(c, a->ndims, b->ndims);
  bool ax = rt_node_bool(c->node, "adj_x", false), ay = rt_node_bool(c->node, "adj_y", false);
  int r = a->ndims;
  rt_shape o = *a;
  for (int d = 0; d < r - 2; d++) {
    if (a->dims[d] >= 0 && b->dims[d] >= 0 && a->dims[d] != b->dims[d])
      return op_dims_error(c, a->dims[d], b->dims[d]);
    if (o.dims[d] < 0) o.dims[d] = b->dims[d];
  }
  int64_t ka = a->dims[r - 2 + !ax], kb = b->dims[r - 2 + ay];
  if (ka >= 0 && kb >= 0 && ka != kb) return op_dims_error(c, ka, kb);
  o.dims[r - 2] = a->dims[r - 2 + ax];
  o.dims[r - 1] = b->dims[r - 2 + !ay];
  c->out_shapes[0] = o;
  return RT_OK;
}

static int addn_shape(rt_shape_ctx *c) {
  rt_shape s = c->in_shapes[0];
  for (int i = 1; i < c->n_inputs; i++) {
    const rt_shape *t = &c->in_shapes[i];
    if (s.ndims < 0) s = *t;
    if (t->ndims < 0) continue;
    if (t->ndims != s.ndims) return op_rank_error(c, s.ndims, t->ndims);
    for (int d = 0; d < s.ndims; d++) {
      if (s.dims[d] < 0) s.dims[d] = t->dims[d];
      else if (t->dims[d] >= 0 && t->dims[d] != s.dims[d])
        return op_dims_error(c, s.dims[d], t->dims[d]);
    }
  }
  c->out_shapes[0] = s;
  return RT_OK;
}

/* Reductions: the input's shape without (or with size-1) reduced axes, when the axes are
 * a constant. */
static int reduce_shape(rt_shape_ctx *c) {
  const rt_shape *in = &c->in_shapes[0];
  bool keep = rt_node_bool(c->node, "keep_dims", false);
  int64_t axes[RT_MAX_DIMS];
  int n;
  if (in->ndims < 0) return RT_OK;
  if (!op_const_ints(c, 1, axes, RT_MAX_DIMS, &n)) {
    if (keep) {
      c->out_shapes[0] = *in;
      for (int d = 0; d < in->ndims; d++) c->out_shapes[0].dims[d] = -1;
    }
    return RT_OK;
  }
  bool red[RT_MAX_DIMS] = {0};
  for (int i = 0; i < n; i++) {
    int64_t a = axes[i] < 0 ? axes[i] + in->ndims : axes[i];
    if (a < 0 || a >= in->ndims)
      return rt_error(c->st, RT_INVALID_ARGUMENT,
                      "Invalid reduction dimension %lld for input with %d dimensions. for '%s' "
                      "(op: '%s')", (long long)axes[i], in->ndims, c->node->name, c->node->op);
    red[a] = true;
  }
  rt_shape o = {.ndims = 0};
  for (int d = 0; d < in->ndims; d++)
    if (!red[d]) o.dims[o.ndims++] = in->dims[d];
    else if (keep) o.dims[o.ndims++] = 1;
  c->out_shapes[0] = o;
  return RT_OK;
}

static int argmax_shape(rt_shape_ctx *c) {
  const rt_shape *in = &c->in_shapes[0];
  int64_t ax;
  int n;
  if (in->ndims < 0 || !op_const_ints(c, 1, &ax, 1, &n) || n != 1) return RT_OK;
  if (ax < 0) ax += in->ndims;
  if (ax < 0 || ax >= in->ndims)
    return rt_error(c->st, RT_INVALID_ARGUMENT,
                    "Expected dimension in the range [%d, %d), but got %lld for '%s' (op: '%s')",
                    -in->ndims, in->ndims, (long long)ax, c->node->name, c->node->op);
  rt_shape o = {.ndims = 0};
  for (int d = 0; d < in->ndims; d++)
    if (d != ax) o.dims[o.ndims++] = in->dims[d];
  c->out_shapes[0] = o;
  return RT_OK;
}

static int like_second_shape(rt_shape_ctx *c) {   /* _SumToShapeOf, _ReduceGrad */
  c->out_shapes[0] = c->in_shapes[1];
  return RT_OK;
}

/* ---- gradients -------------------------------------------------------------------- */

#define IN(i) (c->node->inputs[i])
#define DY (c->dy[0])

static void set_mean(rt_node *n, const void *arg) {
  rt_node_set_bool(n, "mean", *(const bool *)arg);
}

/* dy broadcast back over the reduced axes of the forward node's input */
static char *reduce_back(rt_grad_ctx *c, const char *dy, bool mean) {
  const char *in[] = {dy, IN(0), IN(1)};
  return dy ? op_grad_node(c, "_ReduceGrad", "_ReduceGrad", 3, in, set_mean, &mean) : NULL;
}

/* _ReduceGrad(dy, like, axes) broadcasts dy: its gradient for dy is the reduction it
 * undoes (Sum, or Mean where it divided), shaped as dy (kept dims or not). */
static int reduce_grad_grad(rt_grad_ctx *c) {
  if (!DY) return RT_OK;
  bool mean = rt_node_bool(c->node, "mean", false);
  const char *in[] = {DY, IN(2)};
  char *r = op_grad_node(c, mean ? "Mean" : "Sum", mean ? "Mean" : "Sum", 2, in, NULL, NULL);
  char *shape = r ? op_g1(c, "Shape", IN(0)) : NULL;
  c->dx[0] = shape ? op_g2(c, "Reshape", r, shape) : NULL;
  free(r), free(shape);
  return c->st->code;
}

/* _SumToShapeOf(x, like) sums broadcast axes away: its gradient is dy broadcast back. */
static int sum_to_grad(rt_grad_ctx *c) {
  if (!DY) return RT_OK;
  char *shape = op_g1(c, "Shape", IN(0));
  c->dx[0] = shape ? op_g2(c, "BroadcastTo", DY, shape) : NULL;
  free(shape);
  return c->st->code;
}

static int add_grad(rt_grad_ctx *c) {
  c->dx[0] = op_gsum_to(c, DY, IN(0));
  c->dx[1] = op_gsum_to(c, DY, IN(1));
  return c->st->code;
}

static int sub_grad(rt_grad_ctx *c) {
  c->dx[0] = op_gsum_to(c, DY, IN(0));
  char *n = op_g1(c, "Neg", DY);
  c->dx[1] = op_gsum_to(c, n, IN(1));
  free(n);
  return c->st->code;
}

static int mul_grad(rt_grad_ctx *c) {
  char *a = op_g2(c, "Mul", DY, IN(1)), *b = op_g2(c, "Mul", IN(0), DY);
  c->dx[0] = op_gsum_to(c, a, IN(0));
  c->dx[1] = op_gsum_to(c, b, IN(1));
  free(a);
  free(b);
  return c->st->code;
}

/* d(x/y) = dy/y, -dy*x/y^2 */
static int div_grad(rt_grad_ctx *c) {
  char *a = op_g2(c, "RealDiv", DY, IN(1));
  char *q = op_g2(c, "RealDiv", IN(0), IN(1)), *q2 = op_g2(c, "RealDiv", q, IN(1));
  char *nq = op_g1(c, "Neg", q2), *b = op_g2(c, "Mul", DY, nq);
  c->dx[0] = op_gsum_to(c, a, IN(0));
  c->dx[1] = op_gsum_to(c, b, IN(1));
  free(a), free(q), free(q2), free(nq), free(b);
  return c->st->code;
}

/* As TF's: d = dy div_no_nan y, and dy * ((-x div_no_nan y) div_no_nan y) (0 where y is). */
static int div_no_nan_grad(rt_grad_ctx *c) {
  char *a = op_g2(c, "DivNoNan", DY, IN(1));
  char *nx = op_g1(c, "Neg", IN(0)), *q = op_g2(c, "DivNoNan", nx, IN(1)), *q2 = op_g2(c, "DivNoNan", q, IN(1));
  char *b = op_g2(c, "Mul", DY, q2);
  c->dx[0] = op_gsum_to(c, a, IN(0));
  c->dx[1] = op_gsum_to(c, b, IN(1));
  free(a), free(nx), free(q), free(q2), free(b);
  return c->st->code;
}

typedef struct { rt_dtype t; } cast_arg;
static void set_cast(rt_node *n, const void *arg) {
  rt_node_set_type(n, "DstT", ((const cast_arg *)arg)->t);
}

static char *cast_to(rt_grad_ctx *c, const char *x, rt_dtype t) {
  cast_arg a = {t};
  return x ? op_grad_node(c, "Cast", "Cast", 1, &x, set_cast, &a) : NULL;
}

/* Maximum / Minimum: the gradient goes to the input that won; ties go to x, as in TF. */
static int minmax_grad(rt_grad_ctx *c) {
  bool is_max = !strcmp(c->node->op, "Maximum");
  char *ywin = is_max ? op_g2(c, "Greater", IN(1), IN(0)) : op_g2(c, "Greater", IN(0), IN(1));
  char *mask = cast_to(c, ywin, op_gin_type(c, 0));
  char *gy = op_g2(c, "Mul", DY, mask), *gx = op_g2(c, "Sub", DY, gy);
  c->dx[0] = op_gsum_to(c, gx, IN(0));
  c->dx[1] = op_gsum_to(c, gy, IN(1));
  free(ywin), free(mask), free(gy), free(gx);
  return c->st->code;
}

/* d(x^y) = dy*y*x^(y-1), dy*x^y*log(x) */
static int pow_grad(rt_grad_ctx *c) {
  rt_dtype t = op_gin_type(c, 0);
  char *one = op_gconst(c, t, 1), *ym1 = op_g2(c, "Sub", IN(1), one);
  char *p = op_g2(c, "Pow", IN(0), ym1), *yp = op_g2(c, "Mul", IN(1), p);
  char *a = op_g2(c, "Mul", DY, yp);
  char *lg = op_g1(c, "Log", IN(0)), *zl = op_g2(c, "Mul", c->node->name, lg);
  char *b = op_g2(c, "Mul", DY, zl);
  c->dx[0] = op_gsum_to(c, a, IN(0));
  c->dx[1] = op_gsum_to(c, b, IN(1));
  free(one), free(ym1), free(p), free(yp), free(a), free(lg), free(zl), free(b);
  return c->st->code;
}

static int neg_grad(rt_grad_ctx *c) {
  c->dx[0] = op_g1(c, "Neg", DY);
  return c->st->code;
}

static int square_grad(rt_grad_ctx *c) {
  char *two = op_gconst(c, op_gin_type(c, 0), 2), *tx = op_g2(c, "Mul", two, IN(0));
  c->dx[0] = op_g2(c, "Mul", DY, tx);
  free(two), free(tx);
  return c->st->code;
}

static int sqrt_grad(rt_grad_ctx *c) {   /* dy * 0.5 / y */
  char *h = op_gconst(c, op_gin_type(c, 0), 0.5), *a = op_g2(c, "Mul", DY, h);
  c->dx[0] = op_g2(c, "RealDiv", a, c->node->name);
  free(h), free(a);
  return c->st->code;
}

static int exp_grad(rt_grad_ctx *c) {
  c->dx[0] = op_g2(c, "Mul", DY, c->node->name);
  return c->st->code;
}

static int log_grad(rt_grad_ctx *c) {
  c->dx[0] = op_g2(c, "RealDiv", DY, IN(0));
  return c->st->code;
}

static int cast_grad(rt_grad_ctx *c) {
  rt_dtype src = rt_node_type(c->node, "SrcT", RT_INVALID);
  rt_dtype dst = rt_node_type(c->node, "DstT", RT_INVALID);
  if (rt_dtype_is_float(src) && rt_dtype_is_float(dst)) c->dx[0] = cast_to(c, DY, src);
  return c->st->code;
}

static int addn_grad(rt_grad_ctx *c) {
  for (int i = 0; i < c->node->n_data_inputs && DY; i++) c->dx[i] = xstrdup(DY);
  return c->st->code;
}

typedef struct { bool ta, tb, batch; } mm_arg;
static void set_mm(rt_node *n, const void *arg) {
  const mm_arg *a = arg;
  rt_node_set_bool(n, a->batch ? "adj_x" : "transpose_a", a->ta);
  rt_node_set_bool(n, a->batch ? "adj_y" : "transpose_b", a->tb);
}

static char *mm(rt_grad_ctx *c, const char *x, const char *y, bool ta, bool tb) {
  const char *in[] = {x, y};
  mm_arg a = {ta, tb, strcmp(c->node->op, "MatMul") != 0};
  return op_grad_node(c, c->node->op, c->node->op, 2, in, set_mm, &a);
}

/* MatMul and BatchMatMul alike. */
static int matmul_grad(rt_grad_ctx *c) {
  bool batch = strcmp(c->node->op, "MatMul") != 0;
  bool ta = rt_node_bool(c->node, batch ? "adj_x" : "transpose_a", false);
  bool tb = rt_node_bool(c->node, batch ? "adj_y" : "transpose_b", false);
  if (!DY) return RT_OK;
  const char *a = IN(0), *b = IN(1);
  if (!ta && !tb) c->dx[0] = mm(c, DY, b, false, true), c->dx[1] = mm(c, a, DY, true, false);
  else if (!ta) c->dx[0] = mm(c, DY, b, false, false), c->dx[1] = mm(c, DY, a, true, false);
  else if (!tb) c->dx[0] = mm(c, b, DY, false, true), c->dx[1] = mm(c, a, DY, false, false);
  else c->dx[0] = mm(c, b, DY, true, true), c->dx[1] = mm(c, DY, a, true, true);
  return c->st->code;
}

static int sum_grad(rt_grad_ctx *c) {
  c->dx[0] = DY ? reduce_back(c, DY, !strcmp(c->node->op, "Mean")) : NULL;
  return c->st->code;
}

/* Max: dy goes to the elements equal to the max, shared among ties (as TF does). */
static int max_grad(rt_grad_ctx *c) {
  if (!DY) return RT_OK;
  rt_dtype t = op_gin_type(c, 0);
  const char *ax = IN(1);
  char *yb = reduce_back(c, c->node->name, false), *eq = op_g2(c, "Equal", IN(0), yb);
  char *ind = cast_to(c, eq, t);
  const char *sin[] = {ind, ax};
  char *cnt = op_grad_node(c, "Sum", "Sum", 2, sin, NULL, NULL);
  char *cb = reduce_back(c, cnt, false), *share = op_g2(c, "RealDiv", ind, cb);
  char *db = reduce_back(c, DY, false);
  c->dx[0] = op_g2(c, "Mul", share, db);
  free(yb), free(eq), free(ind), free(cnt), free(cb), free(share), free(db);
  return c->st->code;
}

static int abs_grad(rt_grad_ctx *c) {
  char *sg = op_g1(c, "Sign", IN(0));
  c->dx[0] = op_g2(c, "Mul", DY, sg);
  free(sg);
  return c->st->code;
}

/* d/dx log(1 + x) = 1 / (1 + x) */
static int log1p_grad(rt_grad_ctx *c) {
  char *one = op_gconst(c, op_gin_type(c, 0), 1), *d = op_g2(c, "Add", one, IN(0));
  c->dx[0] = op_g2(c, "RealDiv", DY, d);
  free(one), free(d);
  return c->st->code;
}

static int sin_grad(rt_grad_ctx *c) {   /* dy * cos(x) */
  char *cx = op_g1(c, "Cos", IN(0));
  c->dx[0] = op_g2(c, "Mul", DY, cx);
  free(cx);
  return c->st->code;
}

static int cos_grad(rt_grad_ctx *c) {   /* -dy * sin(x) */
  char *sx = op_g1(c, "Sin", IN(0)), *n = op_g1(c, "Neg", sx);
  c->dx[0] = op_g2(c, "Mul", DY, n);
  free(sx), free(n);
  return c->st->code;
}

/* dy * f(x): the derivatives below that are one op of x */
static int grad_times(rt_grad_ctx *c, const char *op) {
  char *d = op_g1(c, op, IN(0));
  c->dx[0] = d ? op_g2(c, "Mul", DY, d) : NULL;
  free(d);
  return c->st->code;
}
static int sinh_grad(rt_grad_ctx *c) { return grad_times(c, "Cosh"); }
static int cosh_grad(rt_grad_ctx *c) { return grad_times(c, "Sinh"); }
static int expm1_grad(rt_grad_ctx *c) { return grad_times(c, "Exp"); }

static int tan_grad(rt_grad_ctx *c) {   /* dy / cos(x)^2 */
  char *cx = op_g1(c, "Cos", IN(0)), *one = op_gconst(c, op_gin_type(c, 0), 1);   /* as TF: dy * square(1 / cos x) */
  char *sec = cx && one ? op_g2(c, "RealDiv", one, cx) : NULL, *s2 = sec ? op_g1(c, "Square", sec) : NULL;
  c->dx[0] = s2 ? op_g2(c, "Mul", DY, s2) : NULL;
  free(cx), free(one), free(sec), free(s2);
  return c->st->code;
}

/* dy * sign / sqrt(1 - x^2): asin (+1) and acos (-1) */
static int arc_grad(rt_grad_ctx *c, bool neg) {
  char *x2 = op_g1(c, "Square", IN(0)), *one = op_gconst(c, op_gin_type(c, 0), 1);
  char *d = x2 && one ? op_g2(c, "Sub", one, x2) : NULL, *r = d ? op_g1(c, "Rsqrt", d) : NULL;
  char *m = r ? op_g2(c, "Mul", DY, r) : NULL;
  c->dx[0] = m && neg ? op_g1(c, "Neg", m) : m;
  if (neg) free(m);
  free(x2), free(one), free(d), free(r);
  return c->st->code;
}
static int asin_grad(rt_grad_ctx *c) { return arc_grad(c, false); }
static int acos_grad(rt_grad_ctx *c) { return arc_grad(c, true); }

static int atan_grad(rt_grad_ctx *c) {   /* dy / (1 + x^2) */
  char *x2 = op_g1(c, "Square", IN(0)), *one = op_gconst(c, op_gin_type(c, 0), 1);
  char *d = x2 && one ? op_g2(c, "Add", one, x2) : NULL;
  c->dx[0] = d ? op_g2(c, "RealDiv", DY, d) : NULL;
  free(x2), free(one), free(d);
  return c->st->code;
}

/* erf: dy * 2/sqrt(pi) * exp(-x^2); erfc: the negative */
static int erf_like_grad(rt_grad_ctx *c, double k) {
  char *x2 = op_g1(c, "Square", IN(0)), *n = x2 ? op_g1(c, "Neg", x2) : NULL, *e = n ? op_g1(c, "Exp", n) : NULL;
  char *kk = op_gconst(c, op_gin_type(c, 0), k), *m = e && kk ? op_g2(c, "Mul", DY, kk) : NULL;   /* (dy * k) * e, TF's order */
  c->dx[0] = m ? op_g2(c, "Mul", m, e) : NULL;
  free(x2), free(n), free(e), free(kk), free(m);
  return c->st->code;
}
static int erf_grad(rt_grad_ctx *c) { return erf_like_grad(c, 1.1283791670955126); }
static int erfc_grad(rt_grad_ctx *c) { return erf_like_grad(c, -1.1283791670955126); }

/* atan2(y, x): dy * x / (x^2 + y^2) for y, -dy * y / (x^2 + y^2) for x */
static int atan2_grad(rt_grad_ctx *c) {
  char *y2 = op_g1(c, "Square", IN(0)), *x2 = op_g1(c, "Square", IN(1)), *d = y2 && x2 ? op_g2(c, "Add", x2, y2) : NULL;
  char *r = d ? op_g2(c, "RealDiv", DY, d) : NULL;
  char *gy = r ? op_g2(c, "Mul", r, IN(1)) : NULL, *t = r ? op_g2(c, "Mul", r, IN(0)) : NULL, *gx = t ? op_g1(c, "Neg", t) : NULL;
  c->dx[0] = gy ? op_gsum_to(c, gy, IN(0)) : NULL;
  c->dx[1] = gx ? op_gsum_to(c, gx, IN(1)) : NULL;
  free(y2), free(x2), free(d), free(r), free(gy), free(t), free(gx);
  return c->st->code;
}

/* 1/x: -dy * y^2, y the op's output */
static int reciprocal_grad(rt_grad_ctx *c) {
  char *y2 = op_g1(c, "Square", c->node->name), *n = y2 ? op_g1(c, "Neg", y2) : NULL;
  c->dx[0] = n ? op_g2(c, "Mul", DY, n) : NULL;
  free(y2), free(n);
  return c->st->code;
}

static int rsqrt_grad(rt_grad_ctx *c) {
  c->dx[0] = op_g2(c, "RsqrtGrad", c->node->name, DY);
  return c->st->code;
}

/* RsqrtGrad(y, d) = d * -y^3 / 2: TF's _RsqrtGradGrad, -1.5 * g * d * y^2 and RsqrtGrad(y, g). */
static int rsqrt_grad_grad(rt_grad_ctx *c) {
  if (!DY) return RT_OK;
  char *k = op_gconst(c, op_gin_type(c, 0), -1.5), *a = op_g2(c, "Mul", k, DY), *b = op_g2(c, "Mul", a, IN(1));
  char *sq = op_g1(c, "Square", IN(0));
  c->dx[0] = op_g2(c, "Mul", b, sq);
  c->dx[1] = op_g2(c, "RsqrtGrad", IN(0), DY);
  free(k), free(a), free(b), free(sq);
  return c->st->code;
}

/* x mod y = x - floor(x / y) * y */
static int floor_mod_grad(rt_grad_ctx *c) {
  char *q = op_g2(c, "FloorDiv", IN(0), IN(1)), *n = op_g1(c, "Neg", DY);
  char *b = op_g2(c, "Mul", n, q);
  c->dx[0] = op_gsum_to(c, DY, IN(0));
  c->dx[1] = op_gsum_to(c, b, IN(1));
  free(q), free(n), free(b);
  return c->st->code;
}

/* Prod: dy * prod / x (inputs with zeros give NaN; TF1 handles them with cumprod). */
static int prod_grad(rt_grad_ctx *c) {
  if (!DY) return RT_OK;
  char *db = reduce_back(c, DY, false), *yb = reduce_back(c, c->node->name, false);
  char *q = op_g2(c, "RealDiv", yb, IN(0));
  c->dx[0] = op_g2(c, "Mul", db, q);
  free(db), free(yb), free(q);
  return c->st->code;
}

/* ---- the table -------------------------------------------------------------------- */

#define BINARY(nm, types, k, g, h)                                                      \
  {.name = nm, .inputs = "x: T, y: T", .outputs = "z: T", .attrs = "T: " types,         \
   .help = h, .shape = op_shape_broadcast, .kernel = {[RT_DEV_CPU] = k}, .grad = g}
#define COMPARE(nm, types, k, h)                                                        \
  {.name = nm, .inputs = "x: T, y: T", .outputs = "z: bool", .attrs = "T: " types,      \
   .help = h, .shape = op_shape_broadcast, .kernel = {[RT_DEV_CPU] = k}, .grad = op_no_grad}
#define LOGICAL(nm, k, h)                                                               \
  {.name = nm, .inputs = "x: bool, y: bool", .outputs = "z: bool", .help = h,           \
   .shape = op_shape_broadcast, .kernel = {[RT_DEV_CPU] = k}, .grad = op_no_grad}
#define ARG(nm, k, h)                                                                   \
  {.name = nm, .inputs = "input: T, dimension: Tidx", .outputs = "output: output_type", \
   .attrs = "T: " NUM8 ", Tidx: {int32, int64} = int32, output_type: {int32, int64} = int64", \
   .help = h, .shape = argmax_shape, .kernel = {[RT_DEV_CPU] = k}, .grad = op_no_grad}
#define UNARY(nm, types, k, g, h)                                                       \
  {.name = nm, .inputs = "x: T", .outputs = "y: T", .attrs = "T: " types, .help = h,    \
   .shape = op_shape_unchanged, .kernel = {[RT_DEV_CPU] = k}, .grad = g}
#define REDUCE(nm, k, g, h)                                                             \
  {.name = nm, .inputs = "input: T, reduction_indices: Tidx", .outputs = "output: T",   \
   .attrs = "keep_dims: bool = false, T: " NUM8 ", Tidx: {int32, int64} = int32",       \
   .help = h, .shape = reduce_shape, .kernel = {[RT_DEV_CPU] = k}, .grad = g}

static const rt_op_def math_ops[] = {
  BINARY("Add", NUM16, op_cpu_add, add_grad, "x + y elementwise, with numpy broadcasting."),
  BINARY("Sub", NUM16, op_cpu_sub, sub_grad, "x - y elementwise, with numpy broadcasting."),
  BINARY("Mul", NUM16, op_cpu_mul, mul_grad, "x * y elementwise, with numpy broadcasting."),
  BINARY("RealDiv", NUM, op_cpu_div, div_grad, "x / y elementwise (true division for floats)."),
  BINARY("Div", NUM, op_cpu_div, div_grad, "x / y elementwise; integers truncate (TF1's tf.div)."),
  BINARY("DivNoNan", FLT, op_cpu_div_no_nan, div_no_nan_grad, "x / y elementwise, 0 where y is 0."),
  BINARY("Maximum", NUM16, op_cpu_maximum, minmax_grad, "max(x, y) elementwise, broadcasting."),
  BINARY("Minimum", NUM16, op_cpu_minimum, minmax_grad, "min(x, y) elementwise, broadcasting."),
  BINARY("Pow", NUM, op_cpu_pow, pow_grad, "x ** y elementwise, with numpy broadcasting."),
  BINARY("FloorDiv", NUM, op_cpu_floor_div, op_no_grad, "x // y elementwise (rounds down)."),
  BINARY("FloorMod", NUM, op_cpu_floor_mod, floor_mod_grad,
         "x % y elementwise; the result takes y's sign (Python's %)."),
  COMPARE("Equal", EQ, op_cpu_equal, "x == y elementwise, as bool."),
  COMPARE("NotEqual", EQ, op_cpu_not_equal, "x != y elementwise, as bool."),
  COMPARE("Greater", NUM8, op_cpu_greater, "x > y elementwise, as bool."),
  COMPARE("GreaterEqual", NUM8, op_cpu_greater_equal, "x >= y elementwise, as bool."),
  COMPARE("Less", NUM8, op_cpu_less, "x < y elementwise, as bool."),
  COMPARE("LessEqual", NUM8, op_cpu_less_equal, "x <= y elementwise, as bool."),
  LOGICAL("LogicalAnd", op_cpu_logical_and, "x and y elementwise, with broadcasting."),
  LOGICAL("LogicalOr", op_cpu_logical_or, "x or y elementwise, with broadcasting."),
  {.name = "LogicalNot", .inputs = "x: bool", .outputs = "y: bool", .help = "not x elementwise.",
   .shape = op_shape_unchanged, .kernel = {[RT_DEV_CPU] = op_cpu_logical_not},
   .grad = op_no_grad},
  UNARY("Neg", NUM, op_cpu_neg, neg_grad, "-x elementwise."),
  UNARY("Square", NUM, op_cpu_square, square_grad, "x * x elementwise."),
  UNARY("Sqrt", FLT, op_cpu_sqrt, sqrt_grad, "Square root elementwise."),
  UNARY("Floor", FLT, op_cpu_floor, op_no_grad, "Largest integer not above x, elementwise."),
  UNARY("Sin", FLT, op_cpu_sin, sin_grad, "Sine elementwise."),
  UNARY("Cos", FLT, op_cpu_cos, cos_grad, "Cosine elementwise."),
  UNARY("Tan", FLT, op_cpu_tan, tan_grad, "Tangent elementwise."),
  UNARY("Asin", FLT, op_cpu_asin, asin_grad, "Arcsine elementwise."),
  UNARY("Acos", FLT, op_cpu_acos, acos_grad, "Arccosine elementwise."),
  UNARY("Atan", FLT, op_cpu_atan, atan_grad, "Arctangent elementwise."),
  UNARY("Sinh", FLT, op_cpu_sinh, sinh_grad, "Hyperbolic sine elementwise."),
  UNARY("Cosh", FLT, op_cpu_cosh, cosh_grad, "Hyperbolic cosine elementwise."),
  UNARY("Expm1", FLT, op_cpu_expm1, expm1_grad, "exp(x) - 1 elementwise, exact for small x."),
  UNARY("Erf", FLT, op_cpu_erf, erf_grad, "The error function elementwise."),
  UNARY("Erfc", FLT, op_cpu_erfc, erfc_grad, "1 - erf(x) elementwise."),
  BINARY("Atan2", FLT, op_cpu_atan2, atan2_grad, "The angle of the point (x, y) in (-pi, pi], elementwise (inputs y, x)."),
  UNARY("Round", FLT, op_cpu_round, op_no_grad, "The nearest integer to x, halves to even, elementwise."),
  UNARY("Ceil", FLT, op_cpu_ceil, op_no_grad, "Smallest integer not below x, elementwise."),
  UNARY("Log1p", FLT, op_cpu_log1p, log1p_grad, "log(1 + x) elementwise, exact for small x."),
  UNARY("Exp", FLT, op_cpu_exp, exp_grad, "e ** x elementwise."),
  UNARY("Log", FLT, op_cpu_log, log_grad, "Natural logarithm elementwise."),
  UNARY("Abs", NUM, op_cpu_abs, abs_grad, "|x| elementwise."),
  UNARY("Sign", NUM, op_cpu_sign, op_no_grad, "-1, 0 or 1 by the sign of x, elementwise."),
  UNARY("Rsqrt", FLT, op_cpu_rsqrt, rsqrt_grad, "1 / sqrt(x) elementwise."),
  UNARY("Reciprocal", FLT, op_cpu_reciprocal, reciprocal_grad, "1 / x elementwise (TF's gradient of Log uses it)."),
  {.name = "RsqrtGrad", .inputs = "y: T, dy: T", .outputs = "z: T", .attrs = "T: " FLT,
   .help = "Rsqrt's gradient from its output: -0.5 * dy * y^3.", .shape = op_shape_unchanged,
   .kernel = {[RT_DEV_CPU] = op_cpu_rsqrt_grad}, .grad = rsqrt_grad_grad},
  {.name = "Cast", .inputs = "x: SrcT", .outputs = "y: DstT",
   .attrs = "SrcT: type, DstT: type, Truncate: bool = false",
   .help = "Converts x to DstT (floats to integers truncate toward zero).",
   .shape = op_shape_unchanged, .kernel = {[RT_DEV_CPU] = op_cpu_cast}, .grad = cast_grad},
  {.name = "AddN", .inputs = "inputs: N * T", .outputs = "sum: T",
   .attrs = "N: int >= 1, T: " NUM8, .help = "Sums a list of tensors of the same shape.",
   .shape = addn_shape, .kernel = {[RT_DEV_CPU] = op_cpu_addn}, .grad = addn_grad},
  {.name = "MatMul", .inputs = "a: T, b: T", .outputs = "product: T",
   .attrs = "transpose_a: bool = false, transpose_b: bool = false, T: " NUM,
   .help = "Matrix product a @ b of two rank-2 tensors (BLIS for floats).",
   .shape = matmul_shape, .kernel = {[RT_DEV_CPU] = op_cpu_matmul}, .grad = matmul_grad},
  {.name = "BatchMatMul", .inputs = "x: T, y: T", .outputs = "output: T",
   .attrs = "T: " NUM ", adj_x: bool = false, adj_y: bool = false",
   .help = "Matrix products over the leading (batch) dims; adj_x/adj_y transpose.",
   .shape = batch_matmul_shape, .kernel = {[RT_DEV_CPU] = op_cpu_batch_matmul},
   .grad = matmul_grad},
  REDUCE("Sum", op_cpu_sum, sum_grad, "Sum over the given axes (all when empty)."),
  REDUCE("Mean", op_cpu_mean, sum_grad, "Mean over the given axes (all when empty)."),
  REDUCE("Max", op_cpu_max, max_grad, "Maximum over the given axes (all when empty)."),
  REDUCE("Min", op_cpu_min, max_grad, "Minimum over the given axes (all when empty)."),
  REDUCE("Prod", op_cpu_prod, prod_grad, "Product over the given axes (all when empty)."),
  ARG("ArgMax", op_cpu_argmax, "Index of the largest value along an axis (the first on ties)."),
  ARG("ArgMin", op_cpu_argmin, "Index of the smallest value along an axis (the first on ties)."),
  {.name = "_SumToShapeOf", .inputs = "x: T, like: U", .outputs = "y: T",
   .attrs = "T: type, U: type", .help = "Sums x over broadcast axes down to the shape of like.",
   .shape = like_second_shape, .kernel = {[RT_DEV_CPU] = op_cpu_sum_to}, .grad = sum_to_grad,
   .flags = RT_OP_INTERNAL},
  {.name = "_ReduceGrad", .inputs = "dy: T, like: U, reduction_indices: Tidx",
   .outputs = "y: T", .attrs = "T: type, U: type, Tidx: {int32, int64} = int32, "
                               "mean: bool = false",
   .help = "Broadcasts a reduction's gradient back over its reduced axes (/count for Mean).",
   .shape = like_second_shape, .kernel = {[RT_DEV_CPU] = op_cpu_reduce_grad},
   .grad = reduce_grad_grad, .flags = RT_OP_INTERNAL},
};

void op_math_register(void) { rt_op_register(math_ops, OP_COUNT(math_ops)); }
