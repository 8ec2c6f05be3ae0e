/* Op tests, part 2: array, more math, nn and training ops. Kernels against hand-computed
 * values, shape errors word for word, and every gradient through rt_gradients (the real
 * tf.gradients driver) against central finite differences. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/unit/ops_test.h"
#include "ops/ops.h"
#include "ops/ops_int.h"
#include "runtime/device.h"
#include "runtime/exec.h"
#include "runtime/gradients.h"
#include "runtime/graph.h"
#include "runtime/op.h"

/* ---- helpers ---------------------------------------------------------------------- */

#define I32(nd, dims, ...) T(RT_INT32, nd, dims, V(__VA_ARGS__))
#define F32(nd, dims, ...) T(RT_FLOAT, nd, dims, V(__VA_ARGS__))

static rt_status st;   /* the last RUN's status */

static void expect(rt_tensor *t, rt_dtype dt, int nd, const int64_t *dims, const double *v,
                   double tol) {
  if (!t) print_error("%s\n", st.msg);
  assert_non_null(t);
  assert_int_equal(t->dtype, dt);
  bool same = t->shape.ndims == nd;
  for (int i = 0; same && i < nd; i++) same = t->shape.dims[i] == dims[i];
  if (!same) {
    char a[160], b[160];
    rt_shape want = rt_shape_make(nd, dims);
    print_error("shape %s, want %s\n", op_shape_tf(&t->shape, a, sizeof a),
                op_shape_tf(&want, b, sizeof b));
  }
  assert_true(same);
  for (int64_t i = 0; i < rt_tensor_numel(t); i++) {
    double g = rt_tensor_get_f64(t, i);
    if (fabs(g - v[i]) > tol) print_error("element %lld: got %.9g want %.9g\n", (long long)i, g, v[i]);
    assert_true(fabs(g - v[i]) <= tol);
  }
  rt_tensor_unref(t);
}

/* A graph of constants and one node "f" (inputs named in order); returns f's output `out`
 * run through the executor, or NULL with st set. */



/* Run op on constant inputs (a NULL-terminated list); output `out` of it. */
static rt_tensor *op_out(const char *op, attrs_fn attrs, int out, rt_status *st, ...) {
  rt_graph *g = rt_graph_new();
  rt_node *n = rt_node_new("f", op);
  va_list ap;
  va_start(ap, st);
  char name[16];
  rt_tensor *t;
  for (int i = 0; (t = va_arg(ap, rt_tensor *)); i++) {
    snprintf(name, sizeof name, "c%d", i);
    add_const(g, name, t);
    rt_node_add_input(n, name);
  }
  va_end(ap);
  if (attrs) attrs(n);
  rt_tensor *r = NULL;
  if (!rt_graph_add(g, n, st)) {
    char f[16];
    snprintf(f, sizeof f, "f:%d", out);
    r = eval(g, f, 0, NULL, NULL, st);
  }
  rt_graph_free(g);
  return r;
}
#define RUN(op, attrs, ...) op_out(op, attrs, 0, &st, __VA_ARGS__, NULL)


/* ---- gradients: L = sum(w * f(x, y)) by rt_gradients against central differences ---- */

typedef struct gcase {
  const char *op;
  int nx, ny;                 /* ranks; ny < 0: no y */
  const int64_t *dx, *dy;
  const double *xv, *yv;
  attrs_fn attrs;
  rt_tensor *extra[3];        /* constant inputs after x (and y) */
  bool y_const;               /* y is an input but not differentiated (labels, indices) */
  rt_dtype ytype;
  int end;                    /* lets CG() name one field, so the rest default to 0 */
} gcase;
#define CG(...) check_grad(&(gcase){__VA_ARGS__, .end = 0})


static double loss(rt_graph *g, int nf, const char *const *feeds, rt_tensor *const *fv,
                   const double *w) {
  rt_status st = {0};
  rt_tensor *f = eval(g, "f", nf, feeds, fv, &st);
  check_ok(&st);
  double l = 0;
  for (int64_t j = 0; j < rt_tensor_numel(f); j++) l += w[j] * rt_tensor_get_f64(f, j);
  rt_tensor_unref(f);
  return l;
}

static void check_grad(const gcase *k) {
  rt_graph *g = rt_graph_new();
  rt_status st = {0};
  rt_dtype yt = k->ytype ? k->ytype : RT_DOUBLE;
  add_placeholder(g, "x", RT_DOUBLE, k->nx, k->dx);
  if (k->ny >= 0) add_placeholder(g, "y", yt, k->ny, k->dy);
  rt_node *n = rt_node_new("f", k->op);
  rt_node_add_input(n, "x");
  if (k->ny >= 0) rt_node_add_input(n, "y");
  for (int i = 0; i < 3 && k->extra[i]; i++) {
    char name[16];
    snprintf(name, sizeof name, "e%d", i);
    add_const(g, name, k->extra[i]);
    rt_node_add_input(n, name);
  }
  if (k->attrs) k->attrs(n);
  if (rt_graph_add(g, n, &st)) print_error("%s: %s\n", k->op, st.msg);
  check_ok(&st);
  rt_tensor *xt = T(RT_DOUBLE, k->nx, k->dx, k->xv);
  rt_tensor *yt_ = k->ny >= 0 ? T(yt, k->ny, k->dy, k->yv) : NULL;
  const char *feeds[] = {"x", "y"};
  rt_tensor *fv[] = {xt, yt_};
  int nf = k->ny >= 0 ? 2 : 1;
  rt_tensor *fx = eval(g, "f", nf, feeds, fv, &st);
  check_ok(&st);
  int64_t nfx = rt_tensor_numel(fx);
  double *w = malloc(sizeof *w * (size_t)(nfx ? nfx : 1));
  for (int64_t i = 0; i < nfx; i++) w[i] = 0.3 + 0.17 * (double)i;
  add_const(g, "w", T(RT_DOUBLE, fx->shape.ndims, fx->shape.dims, w));
  const char *ys[] = {"f"}, *gys[] = {"w"}, *xs[] = {"x", "y"};
  int nxs = k->ny >= 0 && !k->y_const ? 2 : 1;
  char *dxn[2] = {0};
  if (rt_gradients(g, 1, ys, gys, nxs, xs, "gradients/", dxn, &st))
    print_error("%s grad: %s\n", k->op, st.msg);
  check_ok(&st);
  for (int v = 0; v < nxs; v++) {
    if (!dxn[v]) print_error("%s: no gradient for %s\n", k->op, xs[v]);
    assert_non_null(dxn[v]);
    rt_tensor *an = eval(g, dxn[v], nf, feeds, fv, &st);
    check_ok(&st);
    rt_tensor *p = v ? yt_ : xt;
    double *pv = rt_tensor_data(p);
    assert_int_equal(rt_tensor_numel(an), rt_tensor_numel(p));
    for (int64_t i = 0; i < rt_tensor_numel(p); i++) {
      double keep = pv[i], h = 1e-6 * (fabs(keep) > 1 ? fabs(keep) : 1);
      pv[i] = keep + h;
      double lp = loss(g, nf, feeds, fv, w);
      pv[i] = keep - h;
      double lm = loss(g, nf, feeds, fv, w);
      pv[i] = keep;
      double num = (lp - lm) / (2 * h), got = rt_tensor_get_f64(an, i);
      if (fabs(num - got) > 1e-5 * (1 + fabs(num)))
        print_error("%s d%s[%lld]: analytic %.9g numeric %.9g\n", k->op, xs[v], (long long)i,
                    got, num);
      assert_true(fabs(num - got) <= 1e-5 * (1 + fabs(num)));
    }
    rt_tensor_unref(an);
    free(dxn[v]);
  }
  free(w);
  rt_tensor_unref(fx);
  rt_tensor_unref(xt);
  rt_tensor_unref(yt_);
  rt_graph_free(g);
}

static const double X6[] = {0.5, -1.5, 2.0, 0.7, 1.1, -3.0};
static const double Y6[] = {2.0, 0.3, 1.7, 0.9, 2.2, 0.6};

/* ---- array ------------------------------------------------------------------------- */

static void set_masks(rt_node *n) {   /* x[1:, ::-1] on a [2,3] tensor, then x[..., 0] */
  rt_node_set_int(n, "begin_mask", 2);
  rt_node_set_int(n, "end_mask", 3);
}
static void set_shrink1(rt_node *n) { rt_node_set_int(n, "shrink_axis_mask", 2); }
static void set_newaxis(rt_node *n) {
  rt_node_set_int(n, "new_axis_mask", 1);
  rt_node_set_int(n, "ellipsis_mask", 2);
  rt_node_set_int(n, "shrink_axis_mask", 4);
}
static void set_axis1(rt_node *n) { rt_node_set_int(n, "axis", 1); }
static void set_num2_axis1(rt_node *n) {
  rt_node_set_int(n, "num", 2);
  rt_node_set_int(n, "axis", 1);
}
static void set_split3(rt_node *n) { rt_node_set_int(n, "num_split", 3); }
static void set_squeeze1(rt_node *n) { rt_node_set_ints(n, "squeeze_dims", 1, D(1)); }
static void set_axis0(rt_node *n) { rt_node_set_int(n, "axis", 0); }

static void test_array_values(void **s) {
#define X23 F32(2, D(2, 3), 1, 2, 3, 4, 5, 6)
  expect(RUN("Reshape", NULL, X23, I32(1, D(2), 3, -1)), RT_FLOAT, 2, D(3, 2), V(1, 2, 3, 4, 5, 6), 0);
  expect(RUN("Shape", NULL, X23), RT_INT32, 1, D(2), V(2, 3), 0);
  expect(RUN("Size", NULL, X23), RT_INT32, 0, NULL, V(6), 0);
  expect(RUN("Rank", NULL, X23), RT_INT32, 0, NULL, V(2), 0);
  expect(RUN("Fill", NULL, I32(1, D(2), 2, 2), F32(0, NULL, 7)), RT_FLOAT, 2, D(2, 2), V(7, 7, 7, 7), 0);
  expect(RUN("OnesLike", NULL, I32(1, D(2), 5, 6)), RT_INT32, 1, D(2), V(1, 1), 0);
  expect(RUN("ZerosLike", NULL, X23), RT_FLOAT, 2, D(2, 3), V(0, 0, 0, 0, 0, 0), 0);
  expect(RUN("Transpose", NULL, X23, I32(1, D(2), 1, 0)), RT_FLOAT, 2, D(3, 2), V(1, 4, 2, 5, 3, 6), 0);
  expect(RUN("InvertPermutation", NULL, I32(1, D(3), 2, 0, 1)), RT_INT32, 1, D(3), V(1, 2, 0), 0);
  expect(RUN("ExpandDims", NULL, X23, I32(0, NULL, -1)), RT_FLOAT, 3, D(2, 3, 1), V(1, 2, 3, 4, 5, 6), 0);
  expect(RUN("Squeeze", NULL, F32(3, D(1, 2, 1), 1, 2)), RT_FLOAT, 1, D(2), V(1, 2), 0);
  expect(RUN("ConcatV2", NULL, X23, F32(2, D(2, 1), 7, 8), I32(0, NULL, 1)), RT_FLOAT, 2, D(2, 4),
         V(1, 2, 3, 7, 4, 5, 6, 8), 0);
  expect(op_out("Split", set_split3, 2, &st, I32(0, NULL, 1), X23, NULL), RT_FLOAT, 2, D(2, 1),
         V(3, 6), 0);
  expect(RUN("Pack", set_axis1, F32(1, D(2), 1, 2), F32(1, D(2), 3, 4)), RT_FLOAT, 2, D(2, 2),
         V(1, 3, 2, 4), 0);
  expect(op_out("Unpack", set_num2_axis1, 1, &st, F32(2, D(2, 2), 1, 2, 3, 4), NULL), RT_FLOAT, 1,
         D(2), V(2, 4), 0);
  expect(RUN("Slice", NULL, X23, I32(1, D(2), 0, 1), I32(1, D(2), -1, 2)), RT_FLOAT, 2, D(2, 2),
         V(2, 3, 5, 6), 0);
  /* x[1:, ::-1] */
  expect(RUN("StridedSlice", set_masks, X23, I32(1, D(2), 1, 0), I32(1, D(2), 0, 0),
             I32(1, D(2), 1, -1)), RT_FLOAT, 2, D(1, 3), V(6, 5, 4), 0);
  /* x[:, 1] */
  expect(RUN("StridedSlice", set_shrink1, X23, I32(1, D(2), 0, 1), I32(1, D(2), 2, 2),
             I32(1, D(2), 1, 1)), RT_FLOAT, 1, D(2), V(2, 5), 0);
  /* x[None, ..., -1] */
  expect(RUN("StridedSlice", set_newaxis, X23, I32(1, D(3), 0, 0, -1), I32(1, D(3), 0, 0, 0),
             I32(1, D(3), 1, 1, 1)), RT_FLOAT, 2, D(1, 2), V(3, 6), 0);
  expect(RUN("Tile", NULL, F32(2, D(1, 2), 1, 2), I32(1, D(2), 2, 2)), RT_FLOAT, 2, D(2, 4),
         V(1, 2, 1, 2, 1, 2, 1, 2), 0);
  expect(RUN("Pad", NULL, F32(1, D(2), 1, 2), I32(2, D(1, 2), 1, 2)), RT_FLOAT, 1, D(5),
         V(0, 1, 2, 0, 0), 0);
  expect(RUN("Gather", NULL, X23, I32(1, D(3), 1, 0, 1)), RT_FLOAT, 2, D(3, 3),
         V(4, 5, 6, 1, 2, 3, 4, 5, 6), 0);
  expect(RUN("UnsortedSegmentSum", NULL, F32(1, D(3), 1, 2, 3), I32(1, D(3), 1, 0, 1),
             I32(0, NULL, 3)), RT_FLOAT, 1, D(3), V(2, 4, 0), 0);
  expect(RUN("OneHot", NULL, I32(1, D(3), 0, 2, 5), I32(0, NULL, 3), F32(0, NULL, 1),
             F32(0, NULL, 0)), RT_FLOAT, 2, D(3, 3), V(1, 0, 0, 0, 0, 1, 0, 0, 0), 0);
  expect(RUN("OneHot", set_axis0, I32(1, D(2), 1, 0), I32(0, NULL, 2), F32(0, NULL, 5),
             F32(0, NULL, -1)), RT_FLOAT, 2, D(2, 2), V(-1, 5, 5, -1), 0);
  expect(RUN("Range", NULL, I32(0, NULL, 1), I32(0, NULL, 8), I32(0, NULL, 3)), RT_INT32, 1, D(3),
         V(1, 4, 7), 0);
  expect(RUN("Range", NULL, F32(0, NULL, 0), F32(0, NULL, 1), F32(0, NULL, 0.25)), RT_FLOAT, 1,
         D(4), V(0, 0.25, 0.5, 0.75), 0);
  expect(RUN("ConcatOffset", NULL, I32(0, NULL, 1), I32(1, D(2), 2, 3), I32(1, D(2), 2, 5)),
         RT_INT32, 1, D(2), V(0, 0), 0);
  expect(op_out("ConcatOffset", NULL, 1, &st, I32(0, NULL, 1), I32(1, D(2), 2, 3),
                I32(1, D(2), 2, 5), NULL), RT_INT32, 1, D(2), V(0, 3), 0);
  /* run-time errors */
  assert_null(RUN("Gather", NULL, X23, I32(1, D(2), 0, 2)));
  assert_non_null(strstr(st.msg, "indices[1] = 2 is not in [0, 2)"));
  assert_null(RUN("Range", NULL, I32(0, NULL, 5), I32(0, NULL, 1), I32(0, NULL, 1)));
  assert_non_null(strstr(st.msg, "Requires start <= limit when delta > 0: 5/1"));
#undef X23
}

static void test_array_shape_errors(void **s) {
#define X23 F32(2, D(2, 3), 1, 2, 3, 4, 5, 6)
  assert_null(RUN("Reshape", NULL, X23, I32(1, D(1), 4)));
  assert_string_equal(st.msg, "Cannot reshape a tensor with 6 elements to shape [4] (4 elements) "
                              "for 'f' (op: 'Reshape') with input shapes: [2,3], [1] and with "
                              "input tensors computed as partial shapes: input[1] = [4].");
  assert_null(RUN("ConcatV2", NULL, X23, F32(1, D(3), 1, 2, 3), I32(0, NULL, 0)));
  assert_string_equal(st.msg, "Shape must be rank 2 but is rank 1 for 'f' (op: 'ConcatV2') with "
                              "input shapes: [2,3], [3], [].");
  assert_null(RUN("ConcatV2", NULL, X23, F32(2, D(1, 2), 1, 2), I32(0, NULL, 0)));
  assert_string_equal(st.msg, "Dimension 1 in both shapes must be equal, but are 3 and 2. Shapes "
                              "are [2,3] and [1,2]. for 'f' (op: 'ConcatV2') with input shapes: "
                              "[2,3], [1,2], [].");
  assert_null(RUN("StridedSlice", set_shrink1, X23, I32(1, D(2), 0, 5), I32(1, D(2), 2, 6),
                  I32(1, D(2), 1, 1)));
  assert_string_equal(st.msg, "slice index 5 of dimension 1 out of bounds. for 'f' (op: "
                              "'StridedSlice') with input shapes: [2,3], [2], [2], [2] and with "
                              "computed input tensors: input[1] = <0 5>, input[2] = <2 6>, "
                              "input[3] = <1 1>.");
  assert_null(RUN("Squeeze", set_squeeze1, X23));
  assert_string_equal(st.msg, "Can not squeeze dim[1], expected a dimension of 1, got 3 for 'f' "
                              "(op: 'Squeeze') with input shapes: [2,3].");
  assert_null(op_out("Split", set_split3, 0, &st, I32(0, NULL, 0), X23, NULL));
  assert_string_equal(st.msg, "Dimension size must be evenly divisible by 3 but is 2 for 'f' "
                              "(op: 'Split') with input shapes: [], [2,3].");
  assert_null(RUN("Transpose", NULL, X23, I32(1, D(3), 0, 1, 2)));
  assert_string_equal(st.msg, "Dimension must be 2 but is 3 for 'f' (op: 'Transpose') with input "
                              "shapes: [2,3], [3].");
#undef X23
}

static void test_array_grads(void **s) {
  const int64_t *d23 = D(2, 3);
  CG("Reshape", 2, -1, d23, NULL, X6, NULL, NULL, {I32(1, D(2), 3, 2)});
  CG("Transpose", 2, -1, d23, NULL, X6, NULL, NULL, {I32(1, D(2), 1, 0)});
  CG("ExpandDims", 2, -1, d23, NULL, X6, NULL, NULL, {I32(0, NULL, 1)});
  CG("Squeeze", 3, -1, D(2, 1, 3), NULL, X6, NULL, NULL, {NULL});
  CG("ConcatV2", 2, 2, d23, D(2, 3), X6, Y6, NULL, {I32(0, NULL, 0)});
  CG("ConcatV2", 2, 2, d23, D(2, 3), X6, Y6, NULL, {I32(0, NULL, -1)});
  CG("Pack", 2, 2, d23, D(2, 3), X6, Y6, set_axis1, {NULL});
  CG("Slice", 2, -1, d23, NULL, X6, NULL, NULL,
                      {I32(1, D(2), 1, 1), I32(1, D(2), 1, -1)});
  CG("StridedSlice", 2, -1, d23, NULL, X6, NULL, set_masks,
                      {I32(1, D(2), 1, 0), I32(1, D(2), 0, 0), I32(1, D(2), 1, -1)});
  CG("StridedSlice", 2, -1, d23, NULL, X6, NULL, set_shrink1,
                      {I32(1, D(2), 0, 1), I32(1, D(2), 2, 2), I32(1, D(2), 1, 1)});
  CG("Pad", 2, -1, d23, NULL, X6, NULL, NULL, {I32(2, D(2, 2), 1, 0, 0, 2)});
  CG("Tile", 2, -1, d23, NULL, X6, NULL, NULL, {I32(1, D(2), 2, 3)});
  CG("Gather", 2, 1, d23, D(3), X6, V(1, 0, 1), NULL, {NULL}, true, RT_INT32);
}

static void test_split_unpack_grads(void **s) {
  /* f = Split(...):0 and Unpack(...):0: the other outputs get zeros */
  rt_graph *g = rt_graph_new();
  rt_status st = {0};
  add_placeholder(g, "x", RT_DOUBLE, 2, D(2, 3));
  add_const(g, "ax", I32(0, NULL, 1));
  rt_node *n = rt_node_new("sp", "Split");
  rt_node_add_input(n, "ax");
  rt_node_add_input(n, "x");
  set_split3(n);
  assert_int_equal(rt_graph_add(g, n, &st), 0);
  n = rt_node_new("up", "Unpack");
  rt_node_add_input(n, "x");
  rt_node_set_int(n, "num", 2);
  assert_int_equal(rt_graph_add(g, n, &st), 0);
  const char *ys[] = {"sp:1", "up:1"}, *xs[] = {"x"};
  char *dx = NULL;
  assert_int_equal(rt_gradients(g, 2, ys, NULL, 1, xs, "gradients/", &dx, &st), 0);
  rt_tensor *xt = T(RT_DOUBLE, 2, D(2, 3), X6);
  const char *feeds[] = {"x"};
  rt_tensor *r = eval(g, dx, 1, feeds, &xt, &st);
  check_ok(&st);
  expect(r, RT_DOUBLE, 2, D(2, 3), V(0, 1, 0, 1, 2, 1), 0);
  free(dx);
  rt_tensor_unref(xt);
  rt_graph_free(g);
}

/* ---- math and nn ------------------------------------------------------------------- */

static void test_math_values(void **s) {
  expect(RUN("FloorDiv", NULL, I32(1, D(4), 7, -7, 7, -7), I32(1, D(4), 2, 2, -2, -2)), RT_INT32, 1,
         D(4), V(3, -4, -4, 3), 0);
  expect(RUN("FloorMod", NULL, I32(1, D(4), 7, -7, 7, -7), I32(1, D(4), 2, 2, -2, -2)), RT_INT32, 1,
         D(4), V(1, 1, -1, -1), 0);
  expect(RUN("FloorMod", NULL, F32(1, D(2), 5.5, -5.5), F32(0, NULL, 2)), RT_FLOAT, 1, D(2),
         V(1.5, 0.5), 0);
  expect(RUN("Abs", NULL, I32(1, D(2), -3, 4)), RT_INT32, 1, D(2), V(3, 4), 0);
  expect(RUN("Sign", NULL, F32(1, D(3), -3, 0, 4)), RT_FLOAT, 1, D(3), V(-1, 0, 1), 0);
  expect(RUN("Rsqrt", NULL, F32(1, D(2), 4, 0.25)), RT_FLOAT, 1, D(2), V(0.5, 2), 1e-7);
  expect(RUN("Relu6", NULL, F32(1, D(3), -1, 3, 9)), RT_FLOAT, 1, D(3), V(0, 3, 6), 0);
  expect(RUN("Elu", NULL, T(RT_DOUBLE, 1, D(2), V(-1, 2))), RT_DOUBLE, 1, D(2), V(exp(-1.0) - 1, 2), 1e-15);
  expect(RUN("Softplus", NULL, T(RT_DOUBLE, 1, D(2), V(0, 100))), RT_DOUBLE, 1, D(2), V(log(2.0), 100), 1e-12);
  expect(RUN("NotEqual", NULL, I32(1, D(2), 1, 2), I32(0, NULL, 2)), RT_BOOL, 1, D(2), V(1, 0), 0);
  expect(RUN("Less", NULL, F32(1, D(3), 1, 2, 3), F32(0, NULL, 2)), RT_BOOL, 1, D(3), V(1, 0, 0), 0);
  expect(RUN("LessEqual", NULL, F32(1, D(3), 1, 2, 3), F32(0, NULL, 2)), RT_BOOL, 1, D(3), V(1, 1, 0), 0);
  expect(RUN("GreaterEqual", NULL, F32(1, D(3), 1, 2, 3), F32(0, NULL, 2)), RT_BOOL, 1, D(3),
         V(0, 1, 1), 0);
  expect(RUN("LogicalAnd", NULL, T(RT_BOOL, 1, D(2), V(1, 0)), T(RT_BOOL, 0, NULL, V(1))), RT_BOOL, 1,
         D(2), V(1, 0), 0);
  expect(RUN("LogicalOr", NULL, T(RT_BOOL, 1, D(2), V(1, 0)), T(RT_BOOL, 1, D(2), V(0, 0))), RT_BOOL,
         1, D(2), V(1, 0), 0);
  expect(RUN("LogicalNot", NULL, T(RT_BOOL, 1, D(2), V(1, 0))), RT_BOOL, 1, D(2), V(0, 1), 0);
  expect(RUN("Equal", NULL, T(RT_BOOL, 1, D(2), V(1, 0)), T(RT_BOOL, 0, NULL, V(1))), RT_BOOL, 1,
         D(2), V(1, 0), 0);
#define X23 F32(2, D(2, 3), 1, 5, 3, 4, 2, 6)
  expect(RUN("Min", NULL, X23, I32(1, D(1), 1)), RT_FLOAT, 1, D(2), V(1, 2), 0);
  expect(RUN("Prod", NULL, X23, I32(1, D(1), 0)), RT_FLOAT, 1, D(3), V(4, 10, 18), 0);
  expect(RUN("ArgMin", NULL, X23, I32(0, NULL, 1)), RT_INT64, 1, D(2), V(0, 1), 0);
  expect(RUN("BiasAdd", NULL, X23, F32(1, D(3), 10, 20, 30)), RT_FLOAT, 2, D(2, 3),
         V(11, 25, 33, 14, 22, 36), 0);
  expect(RUN("BiasAddGrad", NULL, X23), RT_FLOAT, 1, D(3), V(5, 7, 9), 0);
  expect(RUN("L2Loss", NULL, F32(1, D(2), 3, 4)), RT_FLOAT, 0, NULL, V(12.5), 0);
  /* [[1,5,3],[4,2,6]] @ [[1],[2],[3]] per batch of 1 */
  expect(RUN("BatchMatMul", NULL, F32(3, D(1, 2, 3), 1, 5, 3, 4, 2, 6), F32(3, D(1, 3, 1), 1, 2, 3)),
         RT_FLOAT, 3, D(1, 2, 1), V(20, 26), 0);
#undef X23
  double e1 = exp(1.0), e2 = exp(2.0), z = 1 + e1 + e2;
  expect(RUN("Softmax", NULL, T(RT_DOUBLE, 2, D(1, 3), V(0, 1, 2))), RT_DOUBLE, 2, D(1, 3),
         V(1 / z, e1 / z, e2 / z), 1e-15);
  expect(RUN("LogSoftmax", NULL, T(RT_DOUBLE, 2, D(1, 3), V(0, 1, 2))), RT_DOUBLE, 2, D(1, 3),
         V(-log(z), 1 - log(z), 2 - log(z)), 1e-14);
  expect(RUN("SoftmaxCrossEntropyWithLogits", NULL, T(RT_DOUBLE, 2, D(1, 3), V(0, 1, 2)),
             T(RT_DOUBLE, 2, D(1, 3), V(0, 0.5, 0.5))), RT_DOUBLE, 1, D(1),
         V(-0.5 * (1 - log(z)) - 0.5 * (2 - log(z))), 1e-14);
  expect(op_out("SparseSoftmaxCrossEntropyWithLogits", NULL, 1, &st,
                T(RT_DOUBLE, 2, D(1, 3), V(0, 1, 2)), I32(1, D(1), 2), NULL),
         RT_DOUBLE, 2, D(1, 3), V(1 / z, e1 / z, e2 / z - 1), 1e-15);
  assert_null(RUN("SparseSoftmaxCrossEntropyWithLogits", NULL, F32(2, D(2, 3), 0, 1, 2, 3, 4, 5),
                  I32(1, D(2), 1, 5)));
  assert_true(!strncmp(st.msg, "Received a label value of 5 which is outside the valid range of "
                               "[0, 3).  Label values: 1 5", 87));
}

static void set_message(rt_node *n) { rt_node_set_string(n, "message", "loss check"); }

/* BiasAddGrad over more rows than one partial sum (1024) and more channels than one block
 * (64): small integers, so every order of the additions gives the same exact sums. */
static void test_bias_grad_parts(void **s) {
  (void)s;
  enum { ROWS = 2500, CH = 70 };
  for (int t = 0; t < 2; t++) {
    rt_dtype dt = t ? RT_INT32 : RT_FLOAT;
    rt_tensor *x = rt_tensor_new(dt, &(rt_shape){2, {ROWS, CH}});
    double want[CH] = {0};
    for (int64_t i = 0; i < ROWS * CH; i++) {
      int v = (int)(i % 7) - 3 + (int)(i % CH);
      if (t) ((int32_t *)rt_tensor_data(x))[i] = v;
      else ((float *)rt_tensor_data(x))[i] = (float)v;
      want[i % CH] += v;
    }
    expect(RUN("BiasAddGrad", NULL, x), dt, 1, D(CH), want, 0);
  }
}

static void test_check_numerics(void **s) {
  expect(RUN("CheckNumerics", set_message, F32(1, D(2), 1, 2)), RT_FLOAT, 1, D(2), V(1, 2), 0);
  assert_null(RUN("CheckNumerics", set_message, F32(1, D(2), 1, NAN)));
  assert_string_equal(st.msg, "loss check : Tensor had NaN values\n\t [[node f (op: CheckNumerics)]]");
  assert_null(RUN("CheckNumerics", set_message, F32(1, D(3), INFINITY, NAN, 0)));
  assert_string_equal(st.msg, "loss check : Tensor had NaN and Inf values\n\t [[node f (op: "
                              "CheckNumerics)]]");
}

static void test_math_nn_grads(void **s) {
  const int64_t *d23 = D(2, 3);
  static const char *unary[] = {"Abs", "Softplus", "Relu6", "Elu", "Softmax", "LogSoftmax",
                                "L2Loss"};
  for (size_t i = 0; i < sizeof unary / sizeof *unary; i++)
    CG(unary[i], 2, -1, d23, NULL, X6, NULL, NULL, {NULL});
  const double pos[] = {0.5, 1.5, 2.0, 0.7, 1.1, 3.0};
  CG("Rsqrt", 2, -1, d23, NULL, pos, NULL, NULL, {NULL});
  CG("Min", 2, -1, d23, NULL, X6, NULL, NULL, {I32(1, D(1), 1)});
  CG("Prod", 2, -1, d23, NULL, X6, NULL, NULL, {I32(1, D(1), 0)});
  CG("FloorMod", 2, 2, d23, d23, pos, V(2.0, 0.4, 1.7, 0.9, 2.2, 0.65), NULL, {NULL});
  CG("BiasAdd", 2, 1, d23, D(3), X6, V(0.1, 0.2, 0.3), NULL, {NULL});
  CG("BatchMatMul", 3, 3, D(1, 2, 3), D(1, 3, 2), X6, Y6, NULL, {NULL});
  CG("SoftmaxCrossEntropyWithLogits", 2, 2, d23, d23, X6,
                      V(0.2, 0.3, 0.5, 1, 0, 0), NULL, {NULL});
  CG("SparseSoftmaxCrossEntropyWithLogits", 2, 1, d23, D(2), X6, V(2, 0), NULL,
                      {NULL}, true, RT_INT64);
  CG("CheckNumerics", 2, -1, d23, NULL, X6, NULL, set_message, {NULL});
}

static void set_adj(rt_node *n) {
  rt_node_set_bool(n, "adj_x", true);
  rt_node_set_bool(n, "adj_y", true);
}

static void test_batch_matmul_adj(void **s) {
  CG("BatchMatMul", 3, 3, D(2, 3, 1), D(2, 1, 3), X6, Y6, set_adj, {NULL});
}

/* ---- training ops ------------------------------------------------------------------ */

/* Variables "v" (and slots "a", "b") initialised from consts, then one Apply step. */
static rt_tensor *train_step(const char *op, int n_slots, const double *sv, int n_scalars,
                             const double *scal, attrs_fn attrs, int steps) {
  rt_graph *g = rt_graph_new();
  rt_status st = {0};
  static const char *vars[] = {"v", "a", "b"};
  rt_node *apply = rt_node_new("apply", op);
  for (int k = 0; k <= n_slots; k++) {
    rt_node *n = rt_node_new(vars[k], "VariableV2");
    rt_node_set_type(n, "dtype", RT_DOUBLE);
    rt_shape sh = rt_shape_make(1, D(2));
    rt_node_set_shape(n, "shape", &sh);
    assert_int_equal(rt_graph_add(g, n, &st), 0);
    char cn[16], an[16];
    snprintf(cn, sizeof cn, "%s_init", vars[k]);
    snprintf(an, sizeof an, "%s_assign", vars[k]);
    add_const(g, cn, T(RT_DOUBLE, 1, D(2), k ? V(sv[2 * k - 2], sv[2 * k - 1]) : V(1, 2)));
    n = rt_node_new(an, "Assign");
    rt_node_add_input(n, vars[k]);
    rt_node_add_input(n, cn);
    assert_int_equal(rt_graph_add(g, n, &st), 0);
    rt_node_add_input(apply, vars[k]);
  }
  for (int k = 0; k < n_scalars; k++) {
    char cn[16];
    snprintf(cn, sizeof cn, "s%d", k);
    add_const(g, cn, T(RT_DOUBLE, 0, NULL, &scal[k]));
    rt_node_add_input(apply, cn);
  }
  add_const(g, "grad", T(RT_DOUBLE, 1, D(2), V(0.5, -1)));
  /* TF1's input orders: ApplyMomentum's momentum comes after grad */
  if (!strcmp(op, "ApplyMomentum")) {
    free(apply->inputs[3]);
    apply->inputs[3] = strdup("grad");
    rt_node_add_input(apply, "s1");
  } else {
    rt_node_add_input(apply, "grad");
  }
  if (attrs) attrs(apply);
  if (rt_graph_add(g, apply, &st)) print_error("%s\n", st.msg);
  check_ok(&st);
  rt_device *dev = rt_device_new("/job:localhost/replica:0/task:0/device:CPU:0", RT_DEV_CPU, 1);
  rt_exec *ex = NULL;
  assert_int_equal(rt_exec_new(g, dev, &ex, &st), 0);
  rt_step step = {0};
  const char *inits[] = {"v_assign", "a_assign", "b_assign"};
  rt_run_args a = {.n_targets = n_slots + 1, .targets = inits};
  assert_int_equal(rt_exec_run(ex, &step, &a, &st), 0);
  rt_tensor *out = NULL, *r = NULL;
  const char *fetch = "apply";
  for (int i = 0; i < steps; i++) {
    rt_tensor_unref(out);
    out = NULL;
    rt_run_args b = {.n_fetches = 1, .fetch_names = &fetch, .fetched = &out};
    if (rt_exec_run(ex, &step, &b, &st)) print_error("%s\n", st.msg);
    check_ok(&st);
  }
  r = rt_tensor_copy(out);
  rt_tensor_unref(out);
  rt_exec_free(ex);
  rt_device_free(dev);
  rt_graph_free(g);
  return r;
}

static void set_nesterov(rt_node *n) { rt_node_set_bool(n, "use_nesterov", true); }

static void test_train_ops(void **s) {
  /* v = [1, 2], grad = [0.5, -1] */
  expect(train_step("ApplyGradientDescent", 0, NULL, 1, V(0.1), NULL, 2), RT_DOUBLE, 1, D(2),
         V(0.9, 2.2), 1e-15);
  /* accum0 = [1, 1], lr 0.1, momentum 0.9: accum = [1.4, -0.1], v -= 0.1 * accum */
  expect(train_step("ApplyMomentum", 1, V(1, 1), 2, V(0.1, 0.9), NULL, 1), RT_DOUBLE, 1, D(2),
         V(1 - 0.14, 2 + 0.01), 1e-15);
  /* Nesterov: v -= grad * lr + accum * momentum * lr */
  expect(train_step("ApplyMomentum", 1, V(1, 1), 2, V(0.1, 0.9), set_nesterov, 1), RT_DOUBLE, 1,
         D(2), V(1 - 0.05 - 1.4 * 0.09, 2 + 0.1 + 0.1 * 0.09), 1e-15);
  /* accum0 = [0.75, 0]: accum = [1, 1]; v -= 0.1 * g / 1 */
  expect(train_step("ApplyAdagrad", 1, V(0.75, 0), 1, V(0.1), NULL, 1), RT_DOUBLE, 1, D(2),
         V(0.95, 2.1), 1e-15);
  /* ms0 = [0, 0], mom0 = [0, 0], lr 0.1, rho 0.9, momentum 0, eps 0:
   * ms = 0.1 g^2, mom = 0.1 * g / sqrt(0.1 g^2) = 0.1 sign(g) / sqrt(0.1) */
  double m = 0.1 / sqrt(0.1);
  expect(train_step("ApplyRMSProp", 2, V(0, 0, 0, 0), 4, V(0.1, 0.9, 0, 0), NULL, 1), RT_DOUBLE,
         1, D(2), V(1 - m, 2 + m), 1e-12);
  if (rt_op_find("ApplyAdam")) {
    /* m0 = v0 = 0, b1p = 0.9, b2p = 0.999, lr 0.001, b1 0.9, b2 0.999, eps 0:
     * m = 0.1 g, v = 0.001 g^2, lr_t = 0.001 sqrt(0.001) / 0.1, step = lr_t * m / sqrt(v) */
    double lr_t = 0.001 * sqrt(1 - 0.999) / (1 - 0.9), st_ = lr_t * 0.1 / sqrt(0.001);
    expect(train_step("ApplyAdam", 2, V(0, 0, 0, 0), 6, V(0.9, 0.999, 0.001, 0.9, 0.999, 0), NULL,
                      1), RT_DOUBLE, 1, D(2), V(1 - st_, 2 + st_), 1e-12);
  }
}

static int setup(void **s) {
  op_register_all();
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_array_values),     cmocka_unit_test(test_array_shape_errors),
    cmocka_unit_test(test_array_grads),      cmocka_unit_test(test_split_unpack_grads),
    cmocka_unit_test(test_math_values),      cmocka_unit_test(test_check_numerics),
    cmocka_unit_test(test_bias_grad_parts),
    cmocka_unit_test(test_math_nn_grads),    cmocka_unit_test(test_batch_matmul_adj),
    cmocka_unit_test(test_train_ops),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
