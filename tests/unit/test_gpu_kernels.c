/* Every GPU kernel against the CPU kernel on the same inputs, through the executor (so the
 * device hooks run too: uploads at feeds, downloads at fetches, the step's event). The
 * tolerance is stated per op: exact for data movement, comparisons, casts and the random
 * ops (the same Philox numbers); relative 1e-5 for elementwise float math (CUDA's
 * transcendentals differ from glibc's in the last bits); 1e-4 for products and reductions
 * (summation order), convolutions included. Gradient kernels are also checked against central finite differences
 * of the forward op on the GPU.
 *
 * Needs a GPU: exits 77 (skipped) on a machine without one, or in a build without CUDA.
 * UNVERIFIED: written without a GPU to run it on. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ops_test.h"
#include "runtime/gpu/gpu.h"

static rt_device *cpu_dev, *gpu_dev;
static bool self_check;

/* Deterministic inputs in [lo, hi). */
static rt_tensor *R(int nd, const int64_t *dims, double lo, double hi, unsigned seed) {
  rt_shape s = rt_shape_make(nd, dims);
  rt_tensor *x = rt_tensor_new(RT_FLOAT, &s);
  float *d = rt_tensor_data(x);
  uint64_t z = 0x9e3779b97f4a7c15ull * (seed + 1);
  for (int64_t i = 0; i < rt_tensor_numel(x); i++) {
    z = z * 6364136223846793005ull + 1442695040888963407ull;
    d[i] = (float)(lo + (hi - lo) * (double)(z >> 11) / 9007199254740992.0);
  }
  return x;
}

static rt_tensor *run_on(rt_device *dev, rt_graph *g, const char *fetch, rt_status *st) {
  rt_exec *ex = NULL;
  rt_tensor *out = NULL;
  if (!rt_exec_new(g, dev, &ex, st)) {
    rt_run_args a = {.n_fetches = 1, .fetch_names = &fetch, .fetched = &out};
    rt_step step = {0};
    if (rt_exec_run(ex, &step, &a, st)) out = NULL;
  }
  rt_exec_free(ex);
  return out;
}

/* The GPU's answer equals the CPU's within atol + rtol * |cpu|, element by element. */
static void compare(rt_graph *g, const char *fetch, double rtol, double atol) {
  rt_status st = {0};
  rt_tensor *c = run_on(cpu_dev, g, fetch, &st);
  if (!c) print_error("%s on CPU: %s\n", fetch, st.msg);
  assert_non_null(c);
  rt_tensor *d = run_on(gpu_dev, g, fetch, &st);
  if (!d) print_error("%s on GPU: %s\n", fetch, st.msg);
  assert_non_null(d);
  assert_int_equal(c->dtype, d->dtype);
  assert_true(rt_shape_equal(&c->shape, &d->shape));
  assert_true(!d->buf || d->buf->dev == RT_DEV_CPU);   /* fetched to the host */
  if (self_check) assert_true(c->buf != d->buf);
  for (int64_t i = 0; i < rt_tensor_numel(c); i++) {
    double a = rt_tensor_get_f64(c, i), b = rt_tensor_get_f64(d, i);
    bool ok = (isnan(a) && isnan(b)) || fabs(a - b) <= atol + rtol * fabs(a);
    if (!ok) print_error("%s: element %lld: CPU %.9g, GPU %.9g\n", fetch, (long long)i, a, b);
    assert_true(ok);
  }
  rt_tensor_unref(c);
  rt_tensor_unref(d);
}

static rt_node *node(rt_graph *g, const char *name, const char *op, int n, const char *const *in) {
  rt_node *x = rt_node_new(name, op);
  for (int i = 0; i < n; i++) rt_node_add_input(x, in[i]);
  return x;
}

static void add(rt_graph *g, rt_node *n) {
  rt_status st = {0};
  rt_graph_add(g, n, &st);
  check_ok(&st);
}

/* name = op(inputs) with T=float; attrs set by the caller before add. */
static rt_node *op2(rt_graph *g, const char *name, const char *op, const char *a, const char *b) {
  const char *in[] = {a, b};
  rt_node *n = node(g, name, op, b ? 2 : 1, in);
  rt_node_set_type(n, "T", RT_FLOAT);
  return n;
}

/* ---- elementwise -------------------------------------------------------------------- */

static void test_binary(void **state) {
  static const char *ops[] = {"Add", "Sub", "Mul", "RealDiv", "Maximum", "Minimum", "Pow",
                              "ReluGrad", "SigmoidGrad", "TanhGrad", "RsqrtGrad", "EluGrad", "SoftplusGrad",
                              "Equal", "NotEqual", "Greater", "GreaterEqual", "Less", "LessEqual"};
  /* same shapes, then broadcasting both ways: (2,3,1) with (4), (1,4) with (3,1) */
  static const struct { int na, nb; int64_t a[3], b[3]; } shapes[] = {
    {2, 2, {3, 4}, {3, 4}}, {3, 1, {2, 3, 1}, {4}}, {2, 2, {1, 4}, {3, 1}}, {0, 2, {0}, {5, 2}}};
  for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
    for (size_t k = 0; k < sizeof ops / sizeof *ops; k++) {
      rt_graph *g = rt_graph_new();
      bool pos = !strcmp(ops[k], "Pow") || !strcmp(ops[k], "RsqrtGrad");
      add_const(g, "a", R(shapes[s].na, shapes[s].a, pos ? 0.5 : -2, 2, 1));
      add_const(g, "b", R(shapes[s].nb, shapes[s].b, pos ? 0.5 : -2, 2, 2));
      add(g, op2(g, "y", ops[k], "a", "b"));
      compare(g, "y", 1e-5, 1e-6);
      rt_graph_free(g);
    }
}

static void test_unary(void **state) {
  static const char *ops[] = {"Neg", "Square", "Sqrt", "Exp", "Log", "Abs", "Rsqrt", "Sign", "Floor", "Ceil",
                              "Log1p", "Relu", "Sigmoid", "Tanh", "Elu", "Softplus"};
  for (size_t k = 0; k < sizeof ops / sizeof *ops; k++) {
    bool pos = !strcmp(ops[k], "Sqrt") || !strcmp(ops[k], "Log") || !strcmp(ops[k], "Rsqrt") ||
               !strcmp(ops[k], "Log1p");
    rt_graph *g = rt_graph_new();
    add_const(g, "x", R(2, D(7, 33), pos ? 0.01 : -5, 5, 3));
    add(g, op2(g, "y", ops[k], "x", NULL));
    compare(g, "y", 1e-5, 1e-6);
    rt_graph_free(g);
  }
}

/* d/dx of the forward op on the GPU by central differences against the grad kernel. */
static void test_grads_fd(void **state) {
  static const struct { const char *fwd, *grad; bool by_output; } ops[] = {
    {"Sigmoid", "SigmoidGrad", true}, {"Tanh", "TanhGrad", true}, {"Softplus", "SoftplusGrad", false},
    {"Elu", "EluGrad", false}, {"Relu", "ReluGrad", false}};
  const double h = 1e-2;
  for (size_t k = 0; k < sizeof ops / sizeof *ops; k++) {
    rt_graph *g = rt_graph_new();
    rt_tensor *x = R(1, D(64), -3, 3, 4);
    float *xd = rt_tensor_data(x);
    for (int i = 0; i < 64; i++)   /* away from Relu's and Elu's kink */
      if (fabsf(xd[i]) < 0.05f) xd[i] = 0.5f;
    rt_tensor *xp = rt_tensor_copy(x), *xm = rt_tensor_copy(x), *one = rt_tensor_copy(x);
    for (int i = 0; i < 64; i++) {
      ((float *)rt_tensor_data(xp))[i] += (float)h;
      ((float *)rt_tensor_data(xm))[i] -= (float)h;
      ((float *)rt_tensor_data(one))[i] = 1;
    }
    add_const(g, "x", x);
    add_const(g, "xp", xp);
    add_const(g, "xm", xm);
    add_const(g, "dy", one);
    add(g, op2(g, "y", ops[k].fwd, "x", NULL));
    add(g, op2(g, "yp", ops[k].fwd, "xp", NULL));
    add(g, op2(g, "ym", ops[k].fwd, "xm", NULL));
    /* (y, dy) for the by-output grads; (dy, x) or (dy, y) for the others */
    if (ops[k].by_output) add(g, op2(g, "dx", ops[k].grad, "y", "dy"));
    else add(g, op2(g, "dx", ops[k].grad, "dy", !strcmp(ops[k].fwd, "Elu") ? "y" : "x"));
    rt_status st = {0};
    rt_tensor *dx = run_on(gpu_dev, g, "dx", &st), *yp = run_on(gpu_dev, g, "yp", &st),
              *ym = run_on(gpu_dev, g, "ym", &st);
    if (st.code) print_error("%s: %s\n", ops[k].grad, st.msg);
    assert_int_equal(st.code, 0);
    for (int i = 0; i < 64; i++) {
      double fd = (rt_tensor_get_f64(yp, i) - rt_tensor_get_f64(ym, i)) / (2 * h);
      double got = rt_tensor_get_f64(dx, i);
      if (fabs(fd - got) > 2e-3) print_error("%s at %d: finite differences %.6g, kernel %.6g\n", ops[k].grad, i, fd, got);
      assert_true(fabs(fd - got) <= 2e-3);
    }
    rt_tensor_unref(dx), rt_tensor_unref(yp), rt_tensor_unref(ym);
    compare(g, "dx", 1e-5, 1e-6);
    rt_graph_free(g);
  }
}

static void test_addn_cast_fill(void **state) {
  rt_graph *g = rt_graph_new();
  add_const(g, "a", R(2, D(5, 6), -1, 1, 5));
  add_const(g, "b", R(2, D(5, 6), -1, 1, 6));
  add_const(g, "c", R(2, D(5, 6), -1, 1, 7));
  const char *in[] = {"a", "b", "c"};
  rt_node *n = node(g, "sum3", "AddN", 3, in);
  rt_node_set_type(n, "T", RT_FLOAT);
  rt_node_set_int(n, "N", 3);
  add(g, n);
  compare(g, "sum3", 1e-6, 1e-6);
  /* casts both ways, exact */
  static const rt_dtype to[] = {RT_INT32, RT_INT64, RT_DOUBLE, RT_BOOL};
  for (size_t k = 0; k < sizeof to / sizeof *to; k++) {
    char name[32], back[32];
    snprintf(name, sizeof name, "cast%zu", k);
    snprintf(back, sizeof back, "back%zu", k);
    n = node(g, name, "Cast", 1, (const char *[]){"a"});
    rt_node_set_type(n, "SrcT", RT_FLOAT);
    rt_node_set_type(n, "DstT", to[k]);
    add(g, n);
    compare(g, name, 0, 0);
    n = node(g, back, "Cast", 1, (const char *[]){name});
    rt_node_set_type(n, "SrcT", to[k]);
    rt_node_set_type(n, "DstT", RT_FLOAT);
    add(g, n);
    compare(g, back, 0, 0);
  }
  add_const(g, "dims", T(RT_INT32, 1, D(3), V(2, 3, 4)));
  add_const(g, "v", T(RT_FLOAT, 0, NULL, V(2.5)));
  n = node(g, "fill", "Fill", 2, (const char *[]){"dims", "v"});
  rt_node_set_type(n, "T", RT_FLOAT);
  rt_node_set_type(n, "index_type", RT_INT32);
  add(g, n);
  compare(g, "fill", 0, 0);
  add(g, op2(g, "zeros", "ZerosLike", "a", NULL));
  add(g, op2(g, "ones", "OnesLike", "a", NULL));
  compare(g, "zeros", 0, 0);
  compare(g, "ones", 0, 0);
  rt_graph_free(g);
}

/* ---- products ------------------------------------------------------------------------- */

static void test_matmul(void **state) {
  for (int t = 0; t < 4; t++) {
    bool ta = t & 1, tb = t & 2;
    rt_graph *g = rt_graph_new();
    int64_t m = 67, k = 129, n = 35;
    add_const(g, "a", R(2, ta ? D(k, m) : D(m, k), -1, 1, 8));
    add_const(g, "b", R(2, tb ? D(n, k) : D(k, n), -1, 1, 9));
    rt_node *x = op2(g, "y", "MatMul", "a", "b");
    rt_node_set_bool(x, "transpose_a", ta);
    rt_node_set_bool(x, "transpose_b", tb);
    add(g, x);
    compare(g, "y", 1e-4, 1e-5);
    rt_graph_free(g);

    g = rt_graph_new();
    add_const(g, "a", R(3, ta ? D(3, 9, 5) : D(3, 5, 9), -1, 1, 10));
    add_const(g, "b", R(3, tb ? D(3, 7, 9) : D(3, 9, 7), -1, 1, 11));
    x = op2(g, "y", "BatchMatMul", "a", "b");
    rt_node_set_bool(x, "adj_x", ta);
    rt_node_set_bool(x, "adj_y", tb);
    add(g, x);
    compare(g, "y", 1e-4, 1e-5);
    rt_graph_free(g);
  }
}

/* ---- reductions --------------------------------------------------------------------- */

static void test_reduce(void **state) {
  static const char *ops[] = {"Sum", "Mean", "Max", "Min", "Prod"};
  static const struct { int n; double axes[3]; } axes[] = {{0, {0}}, {1, {0}}, {1, {-1}}, {2, {0, 2}}, {3, {0, 1, 2}}};
  for (size_t k = 0; k < sizeof ops / sizeof *ops; k++)
    for (size_t a = 0; a < sizeof axes / sizeof *axes; a++)
      for (int keep = 0; keep < 2; keep++) {
        rt_graph *g = rt_graph_new();
        bool prod = !strcmp(ops[k], "Prod");
        add_const(g, "x", R(3, D(4, 300, 3), prod ? 0.9 : -1, prod ? 1.1 : 1, 12));
        add_const(g, "ax", T(RT_INT32, 1, D(axes[a].n), axes[a].axes));
        rt_node *n = op2(g, "y", ops[k], "x", "ax");
        rt_node_set_type(n, "Tidx", RT_INT32);
        rt_node_set_bool(n, "keep_dims", keep);
        add(g, n);
        compare(g, "y", 1e-4, 1e-5);
        rt_graph_free(g);
      }
  rt_graph *g = rt_graph_new();
  add_const(g, "x", R(2, D(17, 40), -1, 1, 13));
  add(g, op2(g, "l2", "L2Loss", "x", NULL));
  compare(g, "l2", 1e-5, 1e-6);
  /* _SumToShapeOf: (17, 40) down to (1, 40) and to (40); _ReduceGrad back up */
  add_const(g, "like1", R(2, D(1, 40), 0, 1, 14));
  add_const(g, "like2", R(1, D(40), 0, 1, 15));
  add(g, op2(g, "s1", "_SumToShapeOf", "x", "like1"));
  add(g, op2(g, "s2", "_SumToShapeOf", "x", "like2"));
  compare(g, "s1", 1e-5, 1e-6);
  compare(g, "s2", 1e-5, 1e-6);
  add_const(g, "ax", T(RT_INT32, 1, D(1), V(0)));
  rt_node *n = node(g, "rg", "_ReduceGrad", 3, (const char *[]){"like2", "x", "ax"});
  rt_node_set_type(n, "T", RT_FLOAT);
  rt_node_set_bool(n, "mean", true);
  add(g, n);
  compare(g, "rg", 1e-6, 1e-7);
  rt_graph_free(g);
}

/* ---- nn ----------------------------------------------------------------------------- */

static void test_nn(void **state) {
  rt_graph *g = rt_graph_new();
  add_const(g, "x", R(4, D(2, 3, 5, 6), -2, 2, 16));
  add_const(g, "b6", R(1, D(6), -1, 1, 17));
  add_const(g, "b3", R(1, D(3), -1, 1, 18));
  add(g, op2(g, "nhwc", "BiasAdd", "x", "b6"));
  rt_node *n = op2(g, "nchw", "BiasAdd", "x", "b3");
  rt_node_set_string(n, "data_format", "NCHW");
  add(g, n);
  add(g, op2(g, "gnhwc", "BiasAddGrad", "x", NULL));
  n = op2(g, "gnchw", "BiasAddGrad", "x", NULL);
  rt_node_set_string(n, "data_format", "NCHW");
  add(g, n);
  compare(g, "nhwc", 0, 0);
  compare(g, "nchw", 0, 0);
  compare(g, "gnhwc", 1e-5, 1e-5);
  compare(g, "gnchw", 1e-5, 1e-5);

  add_const(g, "logits", R(2, D(33, 10), -4, 4, 19));
  add_const(g, "p", R(2, D(33, 10), 0, 0.2, 20));
  double lab[33];
  for (int i = 0; i < 33; i++) lab[i] = (i * 7) % 10;
  add_const(g, "l32", T(RT_INT32, 1, D(33), lab));
  add_const(g, "l64", T(RT_INT64, 1, D(33), lab));
  add(g, op2(g, "sm", "Softmax", "logits", NULL));
  add(g, op2(g, "lsm", "LogSoftmax", "logits", NULL));
  compare(g, "sm", 1e-5, 1e-7);
  compare(g, "lsm", 1e-5, 1e-6);
  add(g, op2(g, "xent", "SoftmaxCrossEntropyWithLogits", "logits", "p"));
  compare(g, "xent:0", 1e-5, 1e-6);
  compare(g, "xent:1", 1e-5, 1e-6);
  for (int w = 0; w < 2; w++) {
    const char *name = w ? "sx64" : "sx32";
    n = op2(g, name, "SparseSoftmaxCrossEntropyWithLogits", "logits", w ? "l64" : "l32");
    rt_node_set_type(n, "Tlabels", w ? RT_INT64 : RT_INT32);
    add(g, n);
    char f[32];
    snprintf(f, sizeof f, "%s:0", name);
    compare(g, f, 1e-5, 1e-6);
    snprintf(f, sizeof f, "%s:1", name);
    compare(g, f, 1e-5, 1e-6);
  }
  rt_graph_free(g);
}

/* ---- convolutions and pooling (cuDNN; asymmetric SAME runs the CPU kernel on host copies) -- */

static void window_attrs(rt_node *n, const char *list, int64_t kh, int64_t kw, int64_t s, const char *pad) {
  if (list) rt_node_set_ints(n, list, 4, (const int64_t[]){1, kh, kw, 1});
  rt_node_set_ints(n, "strides", 4, (const int64_t[]){1, s, s, 1});
  rt_node_set_string(n, "padding", pad);
  rt_node_set_type(n, "T", RT_FLOAT);
}

static void test_conv(void **state) {
  /* input size, filter size, stride, padding: symmetric SAME, VALID, asymmetric SAME, 1x1 */
  static const struct { int64_t in, k, s; const char *pad; } cases[] = {
    {9, 3, 1, "SAME"}, {9, 3, 2, "VALID"}, {8, 3, 2, "SAME"}, {7, 1, 1, "VALID"}, {9, 5, 2, "SAME"}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    int64_t in = cases[i].in, k = cases[i].k, s = cases[i].s, o, pad;
    op_window_dim(in, k, s, !strcmp(cases[i].pad, "SAME"), &o, &pad);
    rt_graph *g = rt_graph_new();
    add_const(g, "x", R(4, D(2, in, in, 3), -1, 1, 30));
    add_const(g, "f", R(4, D(k, k, 3, 4), -1, 1, 31));
    add_const(g, "dy", R(4, D(2, o, o, 4), -1, 1, 32));
    double xsz[] = {2, (double)in, (double)in, 3}, fsz[] = {(double)k, (double)k, 3, 4};
    add_const(g, "xsz", T(RT_INT32, 1, D(4), xsz));
    add_const(g, "fsz", T(RT_INT32, 1, D(4), fsz));
    rt_node *n = node(g, "y", "Conv2D", 2, (const char *[]){"x", "f"});
    window_attrs(n, NULL, k, k, s, cases[i].pad);
    add(g, n);
    n = node(g, "dx", "Conv2DBackpropInput", 3, (const char *[]){"xsz", "f", "dy"});
    window_attrs(n, NULL, k, k, s, cases[i].pad);
    add(g, n);
    n = node(g, "df", "Conv2DBackpropFilter", 3, (const char *[]){"x", "fsz", "dy"});
    window_attrs(n, NULL, k, k, s, cases[i].pad);
    add(g, n);
    compare(g, "y", 1e-4, 1e-4);
    compare(g, "dx", 1e-4, 1e-4);
    compare(g, "df", 1e-4, 1e-4);
    rt_graph_free(g);
  }
}

static void test_pool(void **state) {
  static const struct { int64_t in, k, s; const char *pad; } cases[] = {
    {8, 2, 2, "VALID"}, {9, 3, 1, "SAME"}, {9, 3, 2, "SAME"}, {8, 3, 2, "SAME"}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    int64_t in = cases[i].in, k = cases[i].k, s = cases[i].s, o, pad;
    op_window_dim(in, k, s, !strcmp(cases[i].pad, "SAME"), &o, &pad);
    rt_graph *g = rt_graph_new();
    add_const(g, "x", R(4, D(2, in, in, 3), -1, 1, 33));
    add_const(g, "dy", R(4, D(2, o, o, 3), -1, 1, 34));
    double xsz[] = {2, (double)in, (double)in, 3};
    add_const(g, "xsz", T(RT_INT32, 1, D(4), xsz));
    rt_node *n = node(g, "mp", "MaxPool", 1, (const char *[]){"x"});
    window_attrs(n, "ksize", k, k, s, cases[i].pad);
    add(g, n);
    n = node(g, "ap", "AvgPool", 1, (const char *[]){"x"});
    window_attrs(n, "ksize", k, k, s, cases[i].pad);
    add(g, n);
    n = node(g, "mpg", "MaxPoolGrad", 3, (const char *[]){"x", "mp", "dy"});
    window_attrs(n, "ksize", k, k, s, cases[i].pad);
    add(g, n);
    n = node(g, "apg", "AvgPoolGrad", 2, (const char *[]){"xsz", "dy"});
    window_attrs(n, "ksize", k, k, s, cases[i].pad);
    add(g, n);
    compare(g, "mp", 0, 0);
    compare(g, "ap", 1e-5, 1e-6);
    compare(g, "mpg", 1e-5, 1e-6);   /* overlapping windows: summation order */
    compare(g, "apg", 1e-5, 1e-6);
    rt_graph_free(g);
  }
}

/* ---- random ops: the same seeds give the same numbers ----------------------------------- */

static void test_random(void **state) {
  static const char *ops[] = {"RandomStandardNormal", "TruncatedNormal", "RandomUniform"};
  for (size_t k = 0; k < sizeof ops / sizeof *ops; k++) {
    rt_graph *g = rt_graph_new();
    add_const(g, "shape", T(RT_INT32, 1, D(2), V(31, 7)));
    rt_node *n = node(g, "r", ops[k], 1, (const char *[]){"shape"});
    rt_node_set_type(n, "T", RT_INT32);
    rt_node_set_type(n, "dtype", RT_FLOAT);
    rt_node_set_int(n, "seed", 87654321);
    rt_node_set_int(n, "seed2", 42);
    add(g, n);
    compare(g, "r", 0, 0);
    rt_graph_free(g);
  }
}

/* ---- variables and the optimizers (state in device memory) ------------------------------ */

/* name = VariableV2 assigned from init; its Assign's output is the reference to use. */
static void variable(rt_graph *g, const char *name, rt_tensor *init) {
  char vname[64], iname[64], aname[64];
  snprintf(vname, sizeof vname, "%s_var", name);
  snprintf(iname, sizeof iname, "%s_init", name);
  snprintf(aname, sizeof aname, "%s", name);
  rt_shape s = init->shape;
  add_const(g, iname, init);
  rt_node *v = rt_node_new(vname, "VariableV2");
  rt_node_set_type(v, "dtype", RT_FLOAT);
  rt_node_set_shape(v, "shape", &s);
  add(g, v);
  rt_node *a = op2(g, aname, "Assign", vname, iname);
  add(g, a);
}

static void test_apply(void **state) {
  static const struct { const char *op; int slots, scalars; bool nesterov; } ops[] = {
    {"ApplyGradientDescent", 0, 1, false}, {"ApplyMomentum", 1, 2, true}, {"ApplyAdagrad", 1, 1, false},
    {"ApplyAdam", 2, 6, true}, {"ApplyRMSProp", 2, 4, false}};
  static const double scal[] = {0.1, 0.9, 0.01, 0.9, 0.999, 1e-7};
  for (size_t k = 0; k < sizeof ops / sizeof *ops; k++)
    for (int nesterov = 0; nesterov < 1 + ops[k].nesterov; nesterov++) {
      rt_graph *g = rt_graph_new();
      variable(g, "v", R(2, D(9, 13), -1, 1, 21));
      variable(g, "s1", R(2, D(9, 13), 0.1, 1, 22));
      variable(g, "s2", R(2, D(9, 13), 0.1, 1, 23));
      add_const(g, "grad", R(2, D(9, 13), -1, 1, 24));
      const char *in[12];
      int n = 0;
      char sn[6][8];
      in[n++] = "v";
      if (ops[k].slots > 0) in[n++] = "s1";
      if (ops[k].slots > 1) in[n++] = "s2";
      for (int i = 0; i < ops[k].scalars; i++) {
        snprintf(sn[i], sizeof sn[i], "h%d", i);
        add_const(g, sn[i], T(RT_FLOAT, 0, NULL, &scal[i]));
      }
      if (!strcmp(ops[k].op, "ApplyMomentum")) {   /* var, accum, lr, grad, momentum */
        in[n++] = "h0", in[n++] = "grad", in[n++] = "h1";
      } else {
        for (int i = 0; i < ops[k].scalars; i++) in[n++] = sn[i];
        in[n++] = "grad";
      }
      rt_node *x = node(g, "upd", ops[k].op, n, in);
      rt_node_set_type(x, "T", RT_FLOAT);
      if (nesterov) rt_node_set_bool(x, "use_nesterov", true);
      add(g, x);
      compare(g, "upd", 1e-5, 1e-6);
      rt_graph_free(g);
    }
  rt_graph *g = rt_graph_new();
  variable(g, "w", R(1, D(100), -1, 1, 25));
  add_const(g, "d", R(1, D(100), -1, 1, 26));
  add_const(g, "one", T(RT_FLOAT, 0, NULL, V(1.5)));
  add(g, op2(g, "aa", "AssignAdd", "w", "d"));
  add(g, op2(g, "as", "AssignSub", "aa", "one"));
  compare(g, "as", 1e-6, 1e-6);
  rt_graph_free(g);
}

static int setup(void **state) {
  op_register_all();
  const rt_gpu_info *gpus;
  const char *note;
  int n = rt_gpu_devices(&gpus, &note);
  cpu_dev = rt_device_new("/job:localhost/replica:0/task:0/device:CPU:0", RT_DEV_CPU, 1);
  gpu_dev = rt_device_new("/job:localhost/replica:0/task:0/device:GPU:0", RT_DEV_GPU, 1);
  gpu_dev->gpu_ordinal = n > 0 ? gpus[0].ordinal : 0;
  gpu_dev->fake_gpu = self_check;
  return 0;
}

static int teardown(void **state) {
  rt_device_free(cpu_dev);
  rt_device_free(gpu_dev);
  return 0;
}

int main(void) {
  const rt_gpu_info *gpus = NULL;
  const char *note = "";
  /* TFSH_GPU_TEST_SELF=1: the "GPU" is a fake one running the CPU kernels, which checks
   * the test itself (its graphs and attrs) on a machine without a GPU. */
  self_check = getenv("TFSH_GPU_TEST_SELF") && !strcmp(getenv("TFSH_GPU_TEST_SELF"), "1");
  if (!self_check && (!TFSH_HAVE_CUDA || rt_gpu_devices(&gpus, &note) == 0 || gpus[0].fake)) {
    printf("%s: GPU kernel tests skipped\n", TFSH_HAVE_CUDA ? note : "no GPU: built without CUDA");
    return 77;
  }
  if (!self_check) printf("GPU:0 is %s\n", gpus[0].name);
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_binary), cmocka_unit_test(test_unary), cmocka_unit_test(test_grads_fd),
    cmocka_unit_test(test_addn_cast_fill), cmocka_unit_test(test_matmul), cmocka_unit_test(test_reduce),
    cmocka_unit_test(test_nn), cmocka_unit_test(test_conv), cmocka_unit_test(test_pool),
    cmocka_unit_test(test_random), cmocka_unit_test(test_apply),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
