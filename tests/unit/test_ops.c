/* Op tests: each CPU kernel against hand-computed values (called directly through
 * rt_kernel_ctx), shape-function errors word for word, and each gradient against central
 * finite differences (the gradient nodes run through the executor). */
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
#include "runtime/graph.h"
#include "runtime/op.h"

/* ---- helpers ---------------------------------------------------------------------- */


/* Run op's CPU kernel on a bare node (not in a graph); attrs come from `n` if given. */
static int run_kernel(rt_node *n, int nin, rt_tensor **in, int nout, rt_tensor **out,
                      rt_status *st) {
  const rt_op_sig *sig = rt_op_find(n->op);
  assert_non_null(sig);
  rt_kernel_ctx c = {.node = n, .n_inputs = nin, .inputs = in, .n_outputs = nout,
                     .outputs = out, .st = st};
  return sig->def->kernel[RT_DEV_CPU](&c);
}

/* One-output kernel on inputs; takes ownership of the inputs and node. */
static rt_tensor *run(rt_node *n, int nin, rt_tensor **in, rt_status *st) {
  rt_tensor *out[2] = {0};
  int rc = run_kernel(n, nin, in, 1, out, st);
  for (int i = 0; i < nin; i++) rt_tensor_unref(in[i]);
  rt_node_free(n);
  if (rc) {
    rt_tensor_unref(out[0]);
    return NULL;
  }
  return out[0];
}

static rt_tensor *run2(const char *op, rt_tensor *a, rt_tensor *b) {
  rt_status st = {0};
  rt_tensor *in[] = {a, b};
  rt_tensor *r = run(rt_node_new("n", op), b ? 2 : 1, in, &st);
  if (!r) print_error("%s: %s\n", op, st.msg);
  assert_non_null(r);
  return r;
}

static void expect(rt_tensor *t, rt_dtype dt, int nd, const int64_t *dims, const double *v,
                   double tol) {
  assert_int_equal(t->dtype, dt);
  assert_int_equal(t->shape.ndims, nd);
  for (int i = 0; i < nd; i++) assert_int_equal(t->shape.dims[i], dims[i]);
  for (int64_t i = 0; i < rt_tensor_numel(t); i++) {
    double g = rt_tensor_get_f64(t, i);
    if (fabs(g - v[i]) > tol) print_error("element %lld: got %.9g want %.9g\n", (long long)i, g, v[i]);
    assert_true(fabs(g - v[i]) <= tol);
  }
  rt_tensor_unref(t);
}

/* ---- kernels ---------------------------------------------------------------------- */

static void test_add_broadcast(void **s) {
  expect(run2("Add", T(RT_FLOAT, 2, D(2, 3), V(1, 2, 3, 4, 5, 6)), T(RT_FLOAT, 1, D(3), V(10, 20, 30))),
         RT_FLOAT, 2, D(2, 3), V(11, 22, 33, 14, 25, 36), 0);
  expect(run2("Add", T(RT_DOUBLE, 0, NULL, V(1)), T(RT_DOUBLE, 2, D(1, 2), V(5, 6))),
         RT_DOUBLE, 2, D(1, 2), V(6, 7), 0);
  expect(run2("Add", T(RT_INT32, 2, D(2, 1), V(1, 2)), T(RT_INT32, 2, D(1, 3), V(10, 20, 30))),
         RT_INT32, 2, D(2, 3), V(11, 21, 31, 12, 22, 32), 0);
  expect(run2("Sub", T(RT_INT64, 1, D(2), V(5, 7)), T(RT_INT64, 0, NULL, V(1))), RT_INT64, 1,
         D(2), V(4, 6), 0);
  expect(run2("Mul", T(RT_FLOAT, 3, D(2, 1, 2), V(1, 2, 3, 4)), T(RT_FLOAT, 2, D(2, 1), V(10, 100))),
         RT_FLOAT, 3, D(2, 2, 2), V(10, 20, 100, 200, 30, 40, 300, 400), 0);
  /* big enough to take the threaded path */
  int64_t n = 1 << 18;
  rt_shape sh = rt_shape_make(1, &n);
  rt_tensor *a = rt_tensor_new(RT_FLOAT, &sh), *b = rt_tensor_new(RT_FLOAT, &sh);
  for (int64_t i = 0; i < n; i++)
    ((float *)rt_tensor_data(a))[i] = (float)i, ((float *)rt_tensor_data(b))[i] = 1;
  rt_tensor *r = run2("Add", a, b);
  for (int64_t i = 0; i < n; i += 997) assert_true(((float *)rt_tensor_data(r))[i] == (float)(i + 1));
  rt_tensor_unref(r);
}

static void test_binary_math(void **s) {
  expect(run2("RealDiv", T(RT_FLOAT, 1, D(3), V(1, 3, -4)), T(RT_FLOAT, 1, D(3), V(2, 4, 8))),
         RT_FLOAT, 1, D(3), V(0.5, 0.75, -0.5), 0);
  expect(run2("Div", T(RT_INT32, 1, D(2), V(7, -7)), T(RT_INT32, 0, NULL, V(2))), RT_INT32, 1,
         D(2), V(3, -3), 0);
  expect(run2("Maximum", T(RT_DOUBLE, 1, D(3), V(1, 5, -2)), T(RT_DOUBLE, 0, NULL, V(0))),
         RT_DOUBLE, 1, D(3), V(1, 5, 0), 0);
  expect(run2("Minimum", T(RT_DOUBLE, 1, D(3), V(1, 5, -2)), T(RT_DOUBLE, 0, NULL, V(0))),
         RT_DOUBLE, 1, D(3), V(0, 0, -2), 0);
  expect(run2("Pow", T(RT_FLOAT, 1, D(3), V(2, 3, 4)), T(RT_FLOAT, 0, NULL, V(2))), RT_FLOAT, 1,
         D(3), V(4, 9, 16), 0);
  expect(run2("Pow", T(RT_INT64, 1, D(2), V(2, 3)), T(RT_INT64, 1, D(2), V(10, 3))), RT_INT64, 1,
         D(2), V(1024, 27), 0);
  expect(run2("Equal", T(RT_INT32, 1, D(3), V(1, 2, 3)), T(RT_INT32, 1, D(3), V(1, 0, 3))),
         RT_BOOL, 1, D(3), V(1, 0, 1), 0);
  expect(run2("Greater", T(RT_FLOAT, 1, D(3), V(1, 2, 3)), T(RT_FLOAT, 0, NULL, V(2))),
         RT_BOOL, 1, D(3), V(0, 0, 1), 0);
}

static void test_unary(void **s) {
  expect(run2("Neg", T(RT_INT32, 1, D(2), V(1, -2)), NULL), RT_INT32, 1, D(2), V(-1, 2), 0);
  expect(run2("Square", T(RT_FLOAT, 1, D(2), V(3, -2)), NULL), RT_FLOAT, 1, D(2), V(9, 4), 0);
  expect(run2("Sqrt", T(RT_DOUBLE, 1, D(2), V(9, 2)), NULL), RT_DOUBLE, 1, D(2), V(3, M_SQRT2), 1e-15);
  expect(run2("Exp", T(RT_DOUBLE, 1, D(2), V(0, 1)), NULL), RT_DOUBLE, 1, D(2), V(1, M_E), 1e-15);
  expect(run2("Log", T(RT_FLOAT, 1, D(2), V(1, M_E)), NULL), RT_FLOAT, 1, D(2), V(0, 1), 1e-6);
  expect(run2("Relu", T(RT_FLOAT, 1, D(3), V(-1, 0, 2)), NULL), RT_FLOAT, 1, D(3), V(0, 0, 2), 0);
  expect(run2("Sigmoid", T(RT_DOUBLE, 1, D(2), V(0, 2)), NULL), RT_DOUBLE, 1, D(2),
         V(0.5, 1 / (1 + exp(-2.0))), 1e-15);
  expect(run2("Tanh", T(RT_DOUBLE, 1, D(2), V(0, 1)), NULL), RT_DOUBLE, 1, D(2), V(0, tanh(1.0)), 1e-15);
  rt_status st = {0};
  rt_node *n = rt_node_new("c", "Cast");
  rt_node_set_type(n, "DstT", RT_INT32);
  rt_tensor *in[] = {T(RT_FLOAT, 1, D(3), V(1.7, -1.7, 3))};
  expect(run(n, 1, in, &st), RT_INT32, 1, D(3), V(1, -1, 3), 0);
  n = rt_node_new("c", "Cast");
  rt_node_set_type(n, "DstT", RT_FLOAT);
  in[0] = T(RT_BOOL, 1, D(2), V(1, 0));
  expect(run(n, 1, in, &st), RT_FLOAT, 1, D(2), V(1, 0), 0);
  rt_tensor *three[] = {T(RT_FLOAT, 1, D(2), V(1, 2)), T(RT_FLOAT, 1, D(2), V(10, 20)),
                        T(RT_FLOAT, 1, D(2), V(100, 200))};
  expect(run(rt_node_new("s", "AddN"), 3, three, &st), RT_FLOAT, 1, D(2), V(111, 222), 0);
}

static void test_matmul(void **s) {
  expect(run2("MatMul", T(RT_FLOAT, 2, D(2, 2), V(1, 2, 3, 4)), T(RT_FLOAT, 2, D(2, 2), V(1, 2, 3, 4))),
         RT_FLOAT, 2, D(2, 2), V(7, 10, 15, 22), 0);
  /* a = [[1,2,3],[4,5,6]], b = [[1,2],[3,4],[5,6]]: a@b = [[22,28],[49,64]] */
  static const rt_dtype types[] = {RT_FLOAT, RT_DOUBLE, RT_INT32, RT_INT64};
  for (int k = 0; k < 4; k++)
    for (int ta = 0; ta < 2; ta++)
      for (int tb = 0; tb < 2; tb++) {
        rt_tensor *a = ta ? T(types[k], 2, D(3, 2), V(1, 4, 2, 5, 3, 6))
                          : T(types[k], 2, D(2, 3), V(1, 2, 3, 4, 5, 6));
        rt_tensor *b = tb ? T(types[k], 2, D(2, 3), V(1, 3, 5, 2, 4, 6))
                          : T(types[k], 2, D(3, 2), V(1, 2, 3, 4, 5, 6));
        rt_node *n = rt_node_new("MatMul", "MatMul");
        rt_node_set_bool(n, "transpose_a", ta);
        rt_node_set_bool(n, "transpose_b", tb);
        rt_status st = {0};
        rt_tensor *in[] = {a, b};
        expect(run(n, 2, in, &st), types[k], 2, D(2, 2), V(22, 28, 49, 64), 0);
      }
  rt_status st = {0};
  rt_tensor *in[] = {T(RT_FLOAT, 2, D(2, 3), V(1, 2, 3, 4, 5, 6)), T(RT_FLOAT, 2, D(2, 2), V(1, 2, 3, 4))};
  assert_null(run(rt_node_new("MatMul", "MatMul"), 2, in, &st));
  assert_int_equal(st.code, RT_INVALID_ARGUMENT);
  assert_true(!strncmp(st.msg, "Matrix size-incompatible: In[0]: [2,3], In[1]: [2,2]", 52));
}

static void test_reductions(void **s) {
  rt_status st = {0};
  /* x = [[1, 5, 3], [4, 2, 6]] */
#define X T(RT_FLOAT, 2, D(2, 3), V(1, 5, 3, 4, 2, 6))
  rt_tensor *in[2];
  in[0] = X, in[1] = T(RT_INT32, 1, D(1), V(1));
  expect(run(rt_node_new("s", "Sum"), 2, in, &st), RT_FLOAT, 1, D(2), V(9, 12), 0);
  in[0] = X, in[1] = T(RT_INT32, 1, D(1), V(0));
  rt_node *n = rt_node_new("s", "Sum");
  rt_node_set_bool(n, "keep_dims", true);
  expect(run(n, 2, in, &st), RT_FLOAT, 2, D(1, 3), V(5, 7, 9), 0);
  in[0] = X, in[1] = T(RT_INT32, 1, D(2), V(0, -1));
  expect(run(rt_node_new("m", "Mean"), 2, in, &st), RT_FLOAT, 0, NULL, V(3.5), 0);
  in[0] = X, in[1] = T(RT_INT64, 0, NULL, V(-1));
  expect(run(rt_node_new("m", "Max"), 2, in, &st), RT_FLOAT, 1, D(2), V(5, 6), 0);
  in[0] = X, in[1] = T(RT_INT32, 0, NULL, V(1));
  expect(run(rt_node_new("a", "ArgMax"), 2, in, &st), RT_INT64, 1, D(2), V(1, 2), 0);
  in[0] = X, in[1] = T(RT_INT32, 0, NULL, V(0));
  expect(run(rt_node_new("a", "ArgMax"), 2, in, &st), RT_INT64, 1, D(3), V(1, 0, 1), 0);
  in[0] = X, in[1] = T(RT_INT32, 1, D(1), V(2));
  assert_null(run(rt_node_new("s", "Sum"), 2, in, &st));
  assert_true(!strncmp(st.msg, "Invalid reduction dimension (2 for input with 2 dimension(s)", 60));
#undef X
}

static void test_runtime_errors(void **s) {
  rt_status st = {0};
  rt_tensor *in[] = {T(RT_FLOAT, 2, D(2, 3), V(1, 2, 3, 4, 5, 6)), T(RT_FLOAT, 1, D(4), V(1, 2, 3, 4))};
  assert_null(run(rt_node_new("add", "Add"), 2, in, &st));
  assert_int_equal(st.code, RT_INVALID_ARGUMENT);
  const char *want = "Incompatible shapes: [2,3] vs. [4]";
  assert_true(!strncmp(st.msg, want, strlen(want)));
  assert_non_null(strstr(st.msg, "add"));

  rt_node *p = rt_node_new("x", "Placeholder");
  rt_node_set_type(p, "dtype", RT_FLOAT);
  rt_node_set_shape(p, "shape", &(rt_shape){2, {-1, 3}});
  assert_null(run(p, 0, NULL, &st));
  want = "You must feed a value for placeholder tensor 'x' with dtype float and shape [?,3]";
  assert_true(!strncmp(st.msg, want, strlen(want)));

  rt_tensor *d[] = {T(RT_INT32, 1, D(2), V(1, 2)), T(RT_INT32, 1, D(2), V(1, 0))};
  assert_null(run(rt_node_new("div", "Div"), 2, d, &st));
  assert_true(!strncmp(st.msg, "Integer division by zero", 24));
}

/* ---- graphs: shape functions and gradients ---------------------------------------- */



static int add_node(rt_graph *g, const char *name, const char *op, const char *a, const char *b,
                    rt_status *st) {
  rt_node *n = rt_node_new(name, op);
  rt_node_add_input(n, a);
  if (b) rt_node_add_input(n, b);
  return rt_graph_add(g, n, st);
}

static void test_shape_errors(void **s) {
  rt_graph *g = rt_graph_new();
  add_placeholder(g, "a", RT_FLOAT, 2, D(2, 3));
  add_placeholder(g, "b", RT_FLOAT, 1, D(4));
  add_placeholder(g, "c", RT_FLOAT, 2, D(2, 2));
  add_placeholder(g, "v", RT_FLOAT, 1, D(3));
  rt_status st = {0};
  assert_int_equal(add_node(g, "add", "Add", "a", "b", &st), RT_INVALID_ARGUMENT);
  assert_string_equal(st.msg, "Dimensions must be equal, but are 3 and 4 for 'add' (op: 'Add') "
                              "with input shapes: [2,3], [4].");
  assert_int_equal(add_node(g, "MatMul", "MatMul", "a", "c", &st), RT_INVALID_ARGUMENT);
  assert_string_equal(st.msg, "Dimensions must be equal, but are 3 and 2 for 'MatMul' (op: "
                              "'MatMul') with input shapes: [2,3], [2,2].");
  assert_int_equal(add_node(g, "mv", "MatMul", "v", "c", &st), RT_INVALID_ARGUMENT);
  assert_string_equal(st.msg, "Shape must be rank 2 but is rank 1 for 'mv' (op: 'MatMul') with "
                              "input shapes: [3], [2,2].");
  /* and the shapes that do infer */
  assert_int_equal(add_node(g, "ok", "Add", "a", "v", &st), 0);
  rt_node *ok = rt_graph_find(g, "ok");
  assert_int_equal(ok->out_shapes[0].ndims, 2);
  assert_int_equal(ok->out_shapes[0].dims[1], 3);
  add_const(g, "ax", T(RT_INT32, 1, D(1), V(1)));
  rt_node *n = rt_node_new("sum", "Sum");
  rt_node_add_input(n, "a");
  rt_node_add_input(n, "ax");
  rt_node_set_bool(n, "keep_dims", true);
  assert_int_equal(rt_graph_add(g, n, &st), 0);
  n = rt_graph_find(g, "sum");
  assert_int_equal(n->out_shapes[0].ndims, 2);
  assert_int_equal(n->out_shapes[0].dims[0], 2);
  assert_int_equal(n->out_shapes[0].dims[1], 1);
  rt_graph_free(g);
}

/* Run `fetch` in g with x (and y) fed. */
/* Run `fetch` in g with x (and y) fed; the run must succeed. */
static rt_tensor *eval_xy(rt_graph *g, const char *fetch, rt_tensor *x, rt_tensor *y) {
  const char *feeds[] = {"x", "y"};
  rt_tensor *fv[] = {x, y};
  rt_status st = {0};
  rt_tensor *r = eval(g, fetch, y ? 2 : 1, feeds, fv, &st);
  check_ok(&st);
  return r;
}

/* Check d/dinput of L = sum(w * op(x, y)) for inputs x (and y) of the given shapes,
 * analytically (the op's gradient builder with dy = w) against central differences. */
static void check_grad(const char *op, int nx, const int64_t *dx, int ny, const int64_t *dy,
                       const double *xv, const double *yv, const char *attr) {
  rt_graph *g = rt_graph_new();
  rt_status st = {0};
  add_placeholder(g, "x", RT_DOUBLE, nx, dx);
  if (yv) add_placeholder(g, "y", RT_DOUBLE, ny, dy);
  rt_node *n = rt_node_new("f", op);
  rt_node_add_input(n, "x");
  if (yv) rt_node_add_input(n, "y");
  if (attr) rt_node_set_bool(n, attr, true);
  if (!strcmp(op, "Sum") || !strcmp(op, "Mean") || !strcmp(op, "Max")) {
    add_const(g, "axes", T(RT_INT32, 1, D(1), V(1)));
    rt_node_add_input(n, "axes");
  }
  if (rt_graph_add(g, n, &st)) print_error("%s\n", st.msg);
  assert_int_equal(st.code, 0);
  rt_node *f = rt_graph_find(g, "f");
  rt_tensor *xt = T(RT_DOUBLE, nx, dx, xv), *yt = yv ? T(RT_DOUBLE, ny, dy, yv) : NULL;
  rt_tensor *fx = eval_xy(g, "f", xt, yt);
  int64_t nf = rt_tensor_numel(fx);
  double *w = malloc(sizeof *w * (size_t)nf);
  for (int64_t i = 0; i < nf; i++) w[i] = 0.3 + 0.17 * (double)i;
  add_const(g, "w", T(RT_DOUBLE, fx->shape.ndims, fx->shape.dims, w));
  const char *dyn[] = {"w"};
  char *dxn[2] = {0};
  rt_grad_ctx gc = {.g = g, .node = f, .dy = dyn, .dx = dxn, .scope = "gradients/f_grad/", .st = &st};
  if (f->def->grad(&gc)) print_error("grad: %s\n", st.msg);
  assert_int_equal(st.code, 0);
  for (int k = 0; k < (yv ? 2 : 1); k++) {
    assert_non_null(dxn[k]);
    rt_tensor *an = eval_xy(g, dxn[k], xt, yt);
    rt_tensor *p = k ? yt : xt;
    double *pv = rt_tensor_data(p);
    assert_int_equal(rt_tensor_numel(an), rt_tensor_numel(p));
    for (int64_t i = 0; i < rt_tensor_numel(p); i++) {
      double keep = pv[i], h = 1e-6 * (fabs(keep) > 1 ? fabs(keep) : 1), lp = 0, lm = 0;
      pv[i] = keep + h;
      rt_tensor *a = eval_xy(g, "f", xt, yt);
      pv[i] = keep - h;
      rt_tensor *b = eval_xy(g, "f", xt, yt);
      pv[i] = keep;
      for (int64_t j = 0; j < nf; j++)
        lp += w[j] * rt_tensor_get_f64(a, j), lm += w[j] * rt_tensor_get_f64(b, j);
      double num = (lp - lm) / (2 * h), got = rt_tensor_get_f64(an, i);
      if (fabs(num - got) > 1e-5 * (1 + fabs(num)))
        print_error("%s d%s[%lld]: analytic %.9g numeric %.9g\n", op, k ? "y" : "x",
                    (long long)i, got, num);
      assert_true(fabs(num - got) <= 1e-5 * (1 + fabs(num)));
      rt_tensor_unref(a);
      rt_tensor_unref(b);
    }
    rt_tensor_unref(an);
    free(dxn[k]);
  }
  free(w);
  rt_tensor_unref(fx);
  rt_tensor_unref(xt);
  rt_tensor_unref(yt);
  rt_graph_free(g);
}

static void test_gradients(void **s) {
  const double x6[] = {0.5, 1.5, 2.0, 0.7, 1.1, 3.0}, y3[] = {1.2, 0.4, 2.5};
  const double y6[] = {2.0, 0.3, 1.7, 0.9, 2.2, 0.6};
  static const char *binary[] = {"Add", "Sub", "Mul", "RealDiv", "Maximum", "Minimum", "Pow"};
  for (size_t i = 0; i < sizeof binary / sizeof *binary; i++) {
    check_grad(binary[i], 2, D(2, 3), 1, D(3), x6, y3, NULL);     /* y broadcast */
    check_grad(binary[i], 2, D(2, 3), 2, D(2, 3), x6, y6, NULL);  /* same shape */
  }
  static const char *unary[] = {"Neg", "Square", "Sqrt", "Exp", "Log", "Relu", "Sigmoid", "Tanh",
                                "Identity", "Sum", "Mean", "Max"};
  for (size_t i = 0; i < sizeof unary / sizeof *unary; i++)
    check_grad(unary[i], 2, D(2, 3), 0, NULL, x6, NULL, NULL);
  const double a6[] = {0.5, -1.5, 2.0, 0.7, 1.1, -3.0}, b6[] = {1, 2, -1, 0.5, 3, 0.25};
  check_grad("MatMul", 2, D(2, 3), 2, D(3, 2), a6, b6, NULL);
  check_grad("MatMul", 2, D(3, 2), 2, D(3, 2), a6, b6, "transpose_a");
  check_grad("MatMul", 2, D(2, 3), 2, D(2, 3), a6, b6, "transpose_b");
}

static int setup(void **s) {
  op_register_all();
  return 0;
}

/* Forwarding (rt_kernel_output_from): an input the executor lets go (ctx.forward) becomes the
 * output when dtype and shape match, and the values are the same as into a fresh output. */
static rt_tensor *run_fwd(const char *op, int nin, rt_tensor **in, uint64_t forward,
                          uint64_t *forwarded) {
  rt_node *n = rt_node_new("n", op);
  const rt_op_sig *sig = rt_op_find(op);
  assert_non_null(sig);
  rt_status st = {0};
  rt_tensor *out[1] = {0};
  rt_kernel_ctx c = {.node = n, .n_inputs = nin, .inputs = in, .n_outputs = 1, .outputs = out,
                     .st = &st, .forward = forward};
  assert_int_equal(sig->def->kernel[RT_DEV_CPU](&c), 0);
  *forwarded = c.forwarded;
  rt_node_free(n);
  return out[0];
}

static void test_forward_inputs(void **s) {
  (void)s;
  uint64_t fw;
  rt_tensor *x = T(RT_FLOAT, 1, D(3), V(0.5, -1, 2));
  rt_tensor *y = run_fwd("Tanh", 1, &x, 1, &fw);
  assert_ptr_equal(y, x);
  assert_int_equal(fw, 1);
  expect(y, RT_FLOAT, 1, D(3), V(tanh(0.5), tanh(-1), tanh(2)), 1e-6);
  y = run_fwd("Tanh", 1, &x, 0, &fw);   /* not allowed: a new output, x as it was */
  assert_ptr_not_equal(y, x);
  assert_int_equal(fw, 0);
  expect(x, RT_FLOAT, 1, D(3), V(tanh(0.5), tanh(-1), tanh(2)), 1e-6);
  rt_tensor_unref(y);

  /* Mul: over y when only y may go; a broadcast scalar is never the output */
  rt_tensor *in[3] = {T(RT_FLOAT, 1, D(3), V(1, 2, 3)), T(RT_FLOAT, 1, D(3), V(4, 5, 6))};
  y = run_fwd("Mul", 2, in, 2, &fw);
  assert_ptr_equal(y, in[1]);
  assert_int_equal(fw, 2);
  expect(y, RT_FLOAT, 1, D(3), V(4, 10, 18), 0);
  rt_tensor_unref(in[1]);
  in[1] = T(RT_FLOAT, 0, NULL, V(2));
  y = run_fwd("Mul", 2, in, 2, &fw);
  assert_int_equal(fw, 0);
  expect(y, RT_FLOAT, 1, D(3), V(2, 4, 6), 0);
  rt_tensor_unref(in[1]);

  /* AddN over input 0 or 1 only: a later input is still to be read */
  in[1] = T(RT_FLOAT, 1, D(3), V(10, 20, 30));
  in[2] = T(RT_FLOAT, 1, D(3), V(100, 200, 300));
  y = run_fwd("AddN", 3, in, 4, &fw);
  assert_int_equal(fw, 0);
  expect(y, RT_FLOAT, 1, D(3), V(111, 222, 333), 0);
  y = run_fwd("AddN", 3, in, 6, &fw);
  assert_ptr_equal(y, in[1]);
  expect(y, RT_FLOAT, 1, D(3), V(111, 222, 333), 0);
  for (int i = 0; i < 3; i++) rt_tensor_unref(in[i]);

  /* Select by rows over e: only t's rows are copied in */
  in[0] = T(RT_BOOL, 1, D(3), V(1, 0, 1));
  in[1] = T(RT_FLOAT, 2, D(3, 2), V(1, 2, 3, 4, 5, 6));
  in[2] = T(RT_FLOAT, 2, D(3, 2), V(-1, -2, -3, -4, -5, -6));
  y = run_fwd("Select", 3, in, 4, &fw);
  assert_ptr_equal(y, in[2]);
  expect(y, RT_FLOAT, 2, D(3, 2), V(1, 2, -3, -4, 5, 6), 0);
  for (int i = 0; i < 3; i++) rt_tensor_unref(in[i]);
  /* both may go: the one that leaves fewer rows to copy */
  for (int most_t = 0; most_t < 2; most_t++) {
    in[0] = most_t ? T(RT_BOOL, 1, D(3), V(1, 1, 0)) : T(RT_BOOL, 1, D(3), V(0, 0, 1));
    in[1] = T(RT_FLOAT, 2, D(3, 2), V(1, 2, 3, 4, 5, 6));
    in[2] = T(RT_FLOAT, 2, D(3, 2), V(-1, -2, -3, -4, -5, -6));
    y = run_fwd("Select", 3, in, 6, &fw);
    assert_ptr_equal(y, in[most_t ? 1 : 2]);
    if (most_t) expect(y, RT_FLOAT, 2, D(3, 2), V(1, 2, 3, 4, -5, -6), 0);
    else expect(y, RT_FLOAT, 2, D(3, 2), V(-1, -2, -3, -4, 5, 6), 0);
    for (int i = 0; i < 3; i++) rt_tensor_unref(in[i]);
  }

  /* _SumToShapeOf to its own shape: x itself, or a copy that keeps -0 */
  in[0] = T(RT_FLOAT, 2, D(1, 2), V(-0.0, 3));
  in[1] = T(RT_FLOAT, 2, D(1, 2), V(0, 0));
  y = run_fwd("_SumToShapeOf", 2, in, 0, &fw);
  assert_ptr_not_equal(y, in[0]);
  assert_true(signbit(((float *)rt_tensor_data(y))[0]));
  expect(y, RT_FLOAT, 2, D(1, 2), V(0, 3), 0);
  y = run_fwd("_SumToShapeOf", 2, in, 1, &fw);
  assert_ptr_equal(y, in[0]);
  rt_tensor_unref(y);
  for (int i = 0; i < 2; i++) rt_tensor_unref(in[i]);
}

/* _ReduceGrad (float): dy spread back over like's shape, leading axes (whole rows of dy)
 * and a middle axis (the general walk) alike. */
static void test_reduce_grad_float(void **s) {
  (void)s;
  rt_status st = {0};
  rt_tensor *in[3] = {T(RT_FLOAT, 1, D(2), V(1, 2)), T(RT_FLOAT, 2, D(3, 2), V(0, 0, 0, 0, 0, 0)),
                      T(RT_INT32, 1, D(1), V(0))};
  rt_node *n = rt_node_new("g", "_ReduceGrad");
  rt_node_set_bool(n, "mean", true);
  expect(run(n, 3, in, &st), RT_FLOAT, 2, D(3, 2), V(1 / 3.0, 2 / 3.0, 1 / 3.0, 2 / 3.0, 1 / 3.0, 2 / 3.0), 1e-7);
  in[0] = T(RT_FLOAT, 0, NULL, V(6));
  in[1] = T(RT_FLOAT, 2, D(2, 2), V(0, 0, 0, 0));
  in[2] = T(RT_INT32, 1, D(2), V(0, 1));
  expect(run(rt_node_new("g", "_ReduceGrad"), 3, in, &st), RT_FLOAT, 2, D(2, 2), V(6, 6, 6, 6), 0);
  in[0] = T(RT_FLOAT, 2, D(2, 1), V(1, 2));
  in[1] = T(RT_FLOAT, 3, D(2, 3, 1), V(0, 0, 0, 0, 0, 0));
  in[2] = T(RT_INT32, 1, D(1), V(1));
  expect(run(rt_node_new("g", "_ReduceGrad"), 3, in, &st), RT_FLOAT, 3, D(2, 3, 1), V(1, 1, 1, 2, 2, 2), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_add_broadcast), cmocka_unit_test(test_binary_math),
    cmocka_unit_test(test_unary),         cmocka_unit_test(test_matmul),
    cmocka_unit_test(test_reductions),    cmocka_unit_test(test_runtime_errors),
    cmocka_unit_test(test_shape_errors),  cmocka_unit_test(test_gradients),
    cmocka_unit_test(test_forward_inputs), cmocka_unit_test(test_reduce_grad_float),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
