/* Op tests, part 3: Conv2D and its backprops, pools, random ops, ApplyAdam's registration.
 * Convolutions and pools against naive loops on small random inputs (pools exactly, conv
 * to 1e-5 of the terms' magnitude), every gradient through rt_gradients against central
 * differences, shape errors word for word, random ops for reproducibility and moments. */
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
#include "ops/cpu/cpuarch.h"
#include "ops/ops_int.h"
#include "ops/cpu/onednn.h"
#include "runtime/device.h"
#include "runtime/exec.h"
#include "runtime/gradients.h"
#include "runtime/graph.h"
#include "runtime/op.h"
#include "runtime/remap.h"

/* ---- helpers ---------------------------------------------------------------------- */


static uint64_t lcg = 12345;
static double rnd(void) {   /* in [-1, 1) */
  lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(lcg >> 11) / (double)(1ull << 53) * 2 - 1;
}

static rt_tensor *rand_tensor(rt_dtype t, int nd, const int64_t *dims) {
  rt_shape s = rt_shape_make(nd, dims);
  rt_tensor *x = rt_tensor_new(t, &s);
  for (int64_t i = 0; i < rt_tensor_numel(x); i++) {
    double v = rnd();
    if (t == RT_FLOAT) ((float *)rt_tensor_data(x))[i] = (float)v;
    else ((double *)rt_tensor_data(x))[i] = v;
  }
  return x;
}

static rt_tensor *ints(int n, const int64_t *v) {
  rt_shape s = rt_shape_make(1, (int64_t[]){n});
  rt_tensor *x = rt_tensor_new(RT_INT32, &s);
  for (int i = 0; i < n; i++) ((int32_t *)rt_tensor_data(x))[i] = (int32_t)v[i];
  return x;
}


/* Adds a Const (takes t). */


/* The window attrs of the op under test. */
typedef struct cfg {
  int64_t sh, sw, kh, kw;   /* strides; pool window */
  const char *padding;
} cfg;
static cfg cur;

static void set_window(rt_node *n) {
  rt_node_set_ints(n, "strides", 4, D(1, cur.sh, cur.sw, 1));
  rt_node_set_string(n, "padding", cur.padding);
  if (strstr(n->op, "Pool"))   /* MaxPool, AvgPool, their gradients, _FusedMaxPoolGrad */
    rt_node_set_ints(n, "ksize", 4, D(1, cur.kh, cur.kw, 1));
}


/* One executor run of `fetch` with feeds; a deep copy of the result or NULL with st. */

/* op on constant inputs (takes them); NULL with st set on error. */
static rt_tensor *run_op(const char *op, attrs_fn attrs, rt_status *st, int n,
                         rt_tensor **in) {
  rt_graph *g = rt_graph_new();
  rt_node *f = rt_node_new("f", op);
  for (int i = 0; i < n; i++) {
    char name[16];
    snprintf(name, sizeof name, "c%d", i);
    add_const(g, name, in[i]);
    rt_node_add_input(f, name);
  }
  if (attrs) attrs(f);
  rt_tensor *r = NULL;
  *st = (rt_status){0};
  if (!rt_graph_add(g, f, st)) r = eval(g, "f", 0, NULL, NULL, st);
  rt_graph_free(g);
  return r;
}

/* The shape rt_graph_add infers for op on placeholders of the given shapes, or NULL and
 * the error in st. */
static rt_status st;
static char shape_buf[160];
static const char *infer(const char *op, int n, const int64_t *const *dims, const rt_tensor *sizes) {
  rt_graph *g = rt_graph_new();
  rt_node *f = rt_node_new("f", op);
  for (int i = 0; i < n; i++) {
    char name[16];
    snprintf(name, sizeof name, "p%d", i);
    if (!dims[i]) add_const(g, name, rt_tensor_copy(sizes));
    else add_placeholder(g, name, RT_FLOAT, 4, dims[i]);
    rt_node_add_input(f, name);
  }
  set_window(f);
  st = (rt_status){0};
  const char *r = NULL;
  if (!rt_graph_add(g, f, &st)) r = op_shape_tf(&f->out_shapes[0], shape_buf, sizeof shape_buf);
  rt_graph_free(g);
  return r;
}

/* ---- naive references ---------------------------------------------------------------- */

typedef struct dims {
  int64_t n, h, w, c, kh, kw, k, oh, ow, pt, pl;
} dims;

static dims geometry(const int64_t *x, int64_t kh, int64_t kw, int64_t k) {
  dims d = {.n = x[0], .h = x[1], .w = x[2], .c = x[3], .kh = kh, .kw = kw, .k = k};
  bool same = !strcmp(cur.padding, "SAME");
  assert_true(op_window_dim(d.h, kh, cur.sh, same, &d.oh, &d.pt));
  assert_true(op_window_dim(d.w, kw, cur.sw, same, &d.ow, &d.pl));
  return d;
}

#define AT4(a, i, j, k, l, d1, d2, d3) (a)[(((i) * (d1) + (j)) * (d2) + (k)) * (d3) + (l)]

/* y, and the sum of |terms| per output (the scale errors are measured against). */
static void ref_conv(const dims *d, const double *x, const double *f, double *y, double *mag) {
  for (int64_t b = 0; b < d->n; b++)
    for (int64_t oy = 0; oy < d->oh; oy++)
      for (int64_t ox = 0; ox < d->ow; ox++)
        for (int64_t o = 0; o < d->k; o++) {
          double s = 0, m = 0;
          for (int64_t i = 0; i < d->kh; i++)
            for (int64_t j = 0; j < d->kw; j++) {
              int64_t yy = oy * cur.sh - d->pt + i, xx = ox * cur.sw - d->pl + j;
              if (yy < 0 || yy >= d->h || xx < 0 || xx >= d->w) continue;
              for (int64_t ch = 0; ch < d->c; ch++) {
                double t = AT4(x, b, yy, xx, ch, d->h, d->w, d->c) * AT4(f, i, j, ch, o, d->kw, d->c, d->k);
                s += t, m += fabs(t);
              }
            }
          AT4(y, b, oy, ox, o, d->oh, d->ow, d->k) = s;
          AT4(mag, b, oy, ox, o, d->oh, d->ow, d->k) = m;
        }
}

/* dx and dw of sum(y * dy). */
static void ref_conv_back(const dims *d, const double *x, const double *f, const double *dy,
                          double *dx, double *dw, double *mx, double *mw) {
  memset(dx, 0, sizeof *dx * (size_t)(d->n * d->h * d->w * d->c));
  memset(dw, 0, sizeof *dw * (size_t)(d->kh * d->kw * d->c * d->k));
  memset(mx, 0, sizeof *mx * (size_t)(d->n * d->h * d->w * d->c));
  memset(mw, 0, sizeof *mw * (size_t)(d->kh * d->kw * d->c * d->k));
  for (int64_t b = 0; b < d->n; b++)
    for (int64_t oy = 0; oy < d->oh; oy++)
      for (int64_t ox = 0; ox < d->ow; ox++)
        for (int64_t i = 0; i < d->kh; i++)
          for (int64_t j = 0; j < d->kw; j++) {
            int64_t yy = oy * cur.sh - d->pt + i, xx = ox * cur.sw - d->pl + j;
            if (yy < 0 || yy >= d->h || xx < 0 || xx >= d->w) continue;
            for (int64_t ch = 0; ch < d->c; ch++)
              for (int64_t o = 0; o < d->k; o++) {
                double g = AT4(dy, b, oy, ox, o, d->oh, d->ow, d->k);
                double tx = g * AT4(f, i, j, ch, o, d->kw, d->c, d->k);
                double tw = g * AT4(x, b, yy, xx, ch, d->h, d->w, d->c);
                AT4(dx, b, yy, xx, ch, d->h, d->w, d->c) += tx;
                AT4(mx, b, yy, xx, ch, d->h, d->w, d->c) += fabs(tx);
                AT4(dw, i, j, ch, o, d->kw, d->c, d->k) += tw;
                AT4(mw, i, j, ch, o, d->kw, d->c, d->k) += fabs(tw);
              }
          }
}

static double *values(const rt_tensor *t) {
  int64_t n = rt_tensor_numel(t);
  double *v = malloc(sizeof *v * (size_t)(n ? n : 1));
  for (int64_t i = 0; i < n; i++) v[i] = rt_tensor_get_f64(t, i);
  return v;
}

static void expect_close(const char *what, const rt_tensor *got, const double *want,
                         const double *mag, int64_t n) {
  assert_non_null(got);
  assert_int_equal(rt_tensor_numel(got), n);
  for (int64_t i = 0; i < n; i++) {
    double g = rt_tensor_get_f64(got, i), tol = 1e-5 * (mag[i] > 1e-3 ? mag[i] : 1e-3);
    if (fabs(g - want[i]) > tol)
      print_error("%s[%lld]: got %.9g want %.9g\n", what, (long long)i, g, want[i]);
    assert_true(fabs(g - want[i]) <= tol);
  }
}

/* Conv2D and both backprops on random data against the naive loops. */
static void conv_case(rt_dtype t, const int64_t *xs, int64_t kh, int64_t kw, int64_t k,
                      int64_t sh, int64_t sw, const char *pad) {
  cur = (cfg){.sh = sh, .sw = sw, .padding = pad};
  dims d = geometry(xs, kh, kw, k);
  const int64_t *fs = D(kh, kw, xs[3], k), *ys = D(d.n, d.oh, d.ow, k);
  rt_tensor *x = rand_tensor(t, 4, xs), *f = rand_tensor(t, 4, fs), *dy = rand_tensor(t, 4, ys);
  double *xv = values(x), *fv = values(f), *dv = values(dy);
  int64_t ny = d.n * d.oh * d.ow * k, nx = rt_tensor_numel(x), nf = rt_tensor_numel(f);
  double *y = malloc(sizeof *y * (size_t)ny), *my = malloc(sizeof *my * (size_t)ny);
  double *dx = malloc(sizeof *dx * (size_t)nx), *mx = malloc(sizeof *mx * (size_t)nx);
  double *dw = malloc(sizeof *dw * (size_t)nf), *mw = malloc(sizeof *mw * (size_t)nf);
  ref_conv(&d, xv, fv, y, my);
  ref_conv_back(&d, xv, fv, dv, dx, dw, mx, mw);
  rt_tensor *r = run_op("Conv2D", set_window, &st, 2, (rt_tensor *[]){rt_tensor_ref(x), rt_tensor_ref(f)});
  check_ok(&st);
  assert_int_equal(r->dtype, t);
  assert_true(rt_shape_equal(&r->shape, &(rt_shape){4, {d.n, d.oh, d.ow, k}}));
  expect_close("Conv2D", r, y, my, ny);
  rt_tensor_unref(r);
  r = run_op("Conv2DBackpropInput", set_window, &st, 3,
             (rt_tensor *[]){ints(4, xs), rt_tensor_ref(f), rt_tensor_ref(dy)});
  check_ok(&st);
  expect_close("Conv2DBackpropInput", r, dx, mx, nx);
  rt_tensor_unref(r);
  r = run_op("Conv2DBackpropFilter", set_window, &st, 3,
             (rt_tensor *[]){rt_tensor_ref(x), ints(4, fs), rt_tensor_ref(dy)});
  check_ok(&st);
  expect_close("Conv2DBackpropFilter", r, dw, mw, nf);
  rt_tensor_unref(r);
  rt_tensor_unref(x), rt_tensor_unref(f), rt_tensor_unref(dy);
  free(xv), free(fv), free(dv), free(y), free(my), free(dx), free(mx), free(dw), free(mw);
}

/* Pools exactly: forward, and both gradients (first maximum; sum / count). */
static void pool_case(rt_dtype t, const int64_t *xs, int64_t kh, int64_t kw, int64_t sh,
                      int64_t sw, const char *pad) {
  cur = (cfg){.sh = sh, .sw = sw, .kh = kh, .kw = kw, .padding = pad};
  dims d = geometry(xs, kh, kw, xs[3]);
  rt_tensor *x = rand_tensor(t, 4, xs), *dy = rand_tensor(t, 4, D(d.n, d.oh, d.ow, d.c));
  int64_t ny = d.n * d.oh * d.ow * d.c, nx = rt_tensor_numel(x);
  double *mx = calloc((size_t)ny, sizeof *mx), *av = calloc((size_t)ny, sizeof *av);
  double *gm = calloc((size_t)nx, sizeof *gm), *ga = calloc((size_t)nx, sizeof *ga);
  bool f32 = t == RT_FLOAT;
#define X(i) (f32 ? (double)((float *)rt_tensor_data(x))[i] : ((double *)rt_tensor_data(x))[i])
#define G(i) (f32 ? (double)((float *)rt_tensor_data(dy))[i] : ((double *)rt_tensor_data(dy))[i])
  for (int64_t b = 0; b < d.n; b++)
    for (int64_t oy = 0; oy < d.oh; oy++)
      for (int64_t ox = 0; ox < d.ow; ox++)
        for (int64_t ch = 0; ch < d.c; ch++) {
          int64_t o = ((b * d.oh + oy) * d.ow + ox) * d.c + ch, best = -1, cnt = 0;
          double sum = 0;   /* summed in the kernel's order and precision */
          float sumf = 0;
          for (int64_t i = 0; i < kh; i++)
            for (int64_t j = 0; j < kw; j++) {
              int64_t yy = oy * sh - d.pt + i, xx = ox * sw - d.pl + j;
              if (yy < 0 || yy >= d.h || xx < 0 || xx >= d.w) continue;
              int64_t at = ((b * d.h + yy) * d.w + xx) * d.c + ch;
              if (best < 0 || X(at) > X(best)) best = at;
              sum += X(at), sumf += (float)X(at), cnt++;
            }
          mx[o] = X(best);
          av[o] = f32 ? (double)(sumf / (float)cnt) : sum / (double)cnt;
          gm[best] = f32 ? (double)((float)gm[best] + (float)G(o)) : gm[best] + G(o);
        }
  /* AvgPoolGrad's reference: each window's share added in window order */
  for (int64_t b = 0; b < d.n; b++)
    for (int64_t oy = 0; oy < d.oh; oy++)
      for (int64_t ox = 0; ox < d.ow; ox++) {
        int64_t cnt = 0;
        for (int64_t i = 0; i < kh; i++)
          for (int64_t j = 0; j < kw; j++) {
            int64_t yy = oy * sh - d.pt + i, xx = ox * sw - d.pl + j;
            cnt += yy >= 0 && yy < d.h && xx >= 0 && xx < d.w;
          }
        for (int64_t i = 0; i < kh; i++)
          for (int64_t j = 0; j < kw; j++) {
            int64_t yy = oy * sh - d.pt + i, xx = ox * sw - d.pl + j;
            if (yy < 0 || yy >= d.h || xx < 0 || xx >= d.w) continue;
            for (int64_t ch = 0; ch < d.c; ch++) {
              int64_t at = ((b * d.h + yy) * d.w + xx) * d.c + ch;
              double g = G(((b * d.oh + oy) * d.ow + ox) * d.c + ch);
              ga[at] = f32 ? (double)((float)ga[at] + (float)g / (float)cnt) : ga[at] + g / (double)cnt;
            }
          }
      }
#undef X
#undef G
  rt_tensor *mp = run_op("MaxPool", set_window, &st, 1, (rt_tensor *[]){rt_tensor_ref(x)});
  check_ok(&st);
  rt_tensor *ap = run_op("AvgPool", set_window, &st, 1, (rt_tensor *[]){rt_tensor_ref(x)});
  check_ok(&st);
  rt_tensor *mg = run_op("MaxPoolGrad", set_window, &st, 3,
                         (rt_tensor *[]){rt_tensor_ref(x), rt_tensor_ref(mp), rt_tensor_ref(dy)});
  check_ok(&st);
  rt_tensor *ag = run_op("AvgPoolGrad", set_window, &st, 2, (rt_tensor *[]){ints(4, xs), rt_tensor_ref(dy)});
  check_ok(&st);
  for (int64_t i = 0; i < ny; i++) {
    assert_true(rt_tensor_get_f64(mp, i) == mx[i]);
    if (rt_tensor_get_f64(ap, i) != av[i])
      print_error("AvgPool[%lld]: %.17g vs %.17g\n", (long long)i, rt_tensor_get_f64(ap, i), av[i]);
    assert_true(rt_tensor_get_f64(ap, i) == av[i]);
  }
  for (int64_t i = 0; i < nx; i++) {
    assert_true(rt_tensor_get_f64(mg, i) == gm[i]);
    if (rt_tensor_get_f64(ag, i) != ga[i])
      print_error("AvgPoolGrad[%lld]: %.17g vs %.17g\n", (long long)i, rt_tensor_get_f64(ag, i), ga[i]);
    assert_true(rt_tensor_get_f64(ag, i) == ga[i]);
  }
  rt_tensor_unref(mp), rt_tensor_unref(ap), rt_tensor_unref(mg), rt_tensor_unref(ag);
  rt_tensor_unref(x), rt_tensor_unref(dy);
  free(mx), free(av), free(gm), free(ga);
}

/* ---- conv and pools ------------------------------------------------------------------ */

static void test_window_dim(void **s) {
  int64_t o, p;
  assert_true(op_window_dim(7, 3, 2, true, &o, &p));   /* SAME: ceil(7/2), pad 2 -> 1 before */
  assert_int_equal(o, 4);
  assert_int_equal(p, 1);
  assert_true(op_window_dim(8, 3, 2, true, &o, &p));   /* pad 1 -> 0 before */
  assert_int_equal(o, 4);
  assert_int_equal(p, 0);
  assert_true(op_window_dim(7, 3, 2, false, &o, &p));  /* VALID: ceil(5/2) */
  assert_int_equal(o, 3);
  assert_int_equal(p, 0);
  assert_true(op_window_dim(5, 1, 3, true, &o, &p));   /* stride > window */
  assert_int_equal(o, 2);
  assert_int_equal(p, 0);
  assert_false(op_window_dim(2, 3, 1, false, &o, &p));
}

static void test_conv_shapes(void **s) {
  cur = (cfg){.sh = 2, .sw = 1, .kh = 2, .kw = 3, .padding = "SAME"};
  const int64_t *x = D(2, 7, 5, 3), *f = D(3, 3, 3, 8);
  assert_string_equal(infer("Conv2D", 2, (const int64_t *[]){x, f}, NULL), "[2,4,5,8]");
  assert_string_equal(infer("MaxPool", 1, (const int64_t *[]){x}, NULL), "[2,4,5,3]");
  cur.padding = "VALID";
  assert_string_equal(infer("Conv2D", 2, (const int64_t *[]){x, f}, NULL), "[2,3,3,8]");
  assert_string_equal(infer("AvgPool", 1, (const int64_t *[]){x}, NULL), "[2,3,3,3]");
  rt_tensor *sz = ints(4, x);
  assert_string_equal(infer("Conv2DBackpropInput", 3, (const int64_t *[]){NULL, f, D(2, 3, 3, 8)}, sz),
                      "[2,7,5,3]");
  assert_string_equal(infer("AvgPoolGrad", 2, (const int64_t *[]){NULL, D(2, 3, 3, 3)}, sz), "[2,7,5,3]");
  rt_tensor_unref(sz);
  /* TF1's words */
  assert_null(infer("Conv2D", 2, (const int64_t *[]){D(1, 2, 2, 3), f}, NULL));
  assert_string_equal(st.msg, "Negative dimension size caused by subtracting 3 from 2 for 'f' (op: "
                              "'Conv2D') with input shapes: [1,2,2,3], [3,3,3,8].");
  assert_null(infer("MaxPool", 1, (const int64_t *[]){D(1, 1, 1, 64)}, NULL));
  assert_string_equal(st.msg, "Negative dimension size caused by subtracting 2 from 1 for 'f' (op: "
                              "'MaxPool') with input shapes: [1,1,1,64].");
  assert_null(infer("Conv2D", 2, (const int64_t *[]){x, D(3, 3, 4, 8)}, NULL));
  assert_string_equal(st.msg, "Dimensions must be equal, but are 3 and 4 for 'f' (op: 'Conv2D') "
                              "with input shapes: [2,7,5,3], [3,3,4,8].");
  rt_graph *g = rt_graph_new();
  add_placeholder(g, "x", RT_FLOAT, 3, D(7, 5, 3));
  add_placeholder(g, "w", RT_FLOAT, 4, f);
  rt_node *n = rt_node_new("f", "Conv2D");
  rt_node_add_input(n, "x");
  rt_node_add_input(n, "w");
  set_window(n);
  st = (rt_status){0};
  assert_int_not_equal(rt_graph_add(g, n, &st), 0);
  assert_string_equal(st.msg, "Shape must be rank 4 but is rank 3 for 'f' (op: 'Conv2D') with "
                              "input shapes: [7,5,3], [3,3,3,8].");
  n = rt_node_new("f", "Conv2D");
  rt_node_add_input(n, "w");
  rt_node_add_input(n, "w");
  rt_node_set_ints(n, "strides", 3, D(1, 1, 1));
  rt_node_set_string(n, "padding", "SAME");
  st = (rt_status){0};
  assert_int_not_equal(rt_graph_add(g, n, &st), 0);
  assert_string_equal(st.msg, "Conv2D requires the stride attribute to contain 4 values, but got: "
                              "3 for 'f' (op: 'Conv2D') with input shapes: [3,3,3,8], [3,3,3,8].");
  n = rt_node_new("f", "MaxPool");
  rt_node_add_input(n, "w");
  rt_node_set_ints(n, "strides", 4, D(1, 1, 1, 1));
  rt_node_set_ints(n, "ksize", 2, D(1, 1));
  rt_node_set_string(n, "padding", "SAME");
  st = (rt_status){0};
  assert_int_not_equal(rt_graph_add(g, n, &st), 0);
  assert_string_equal(st.msg, "MaxPool requires the ksize attribute to contain 4 values, but got: "
                              "2 for 'f' (op: 'MaxPool') with input shapes: [3,3,3,8].");
  rt_graph_free(g);
}

static void set_nchw(rt_node *n) {
  set_window(n);
  rt_node_set_string(n, "data_format", "NCHW");
}
static void set_dilated(rt_node *n) {
  set_window(n);
  rt_node_set_ints(n, "dilations", 4, D(1, 2, 2, 1));
}
static void set_batch_stride(rt_node *n) {
  set_window(n);
  rt_node_set_ints(n, "strides", 4, D(2, 1, 1, 1));
}

static void test_conv_kernel_errors(void **s) {
  cur = (cfg){.sh = 1, .sw = 1, .kh = 2, .kw = 2, .padding = "SAME"};
  const int64_t *x = D(1, 4, 4, 2), *f = D(2, 2, 2, 3);
  assert_null(run_op("Conv2D", set_nchw, &st, 2,
                     (rt_tensor *[]){rand_tensor(RT_FLOAT, 4, D(1, 2, 4, 4)), rand_tensor(RT_FLOAT, 4, f)}));
  assert_string_equal(st.msg, "The Conv2D op currently only supports the NHWC tensor format on the "
                              "CPU. The op was given the format: NCHW\n\t [[node f (op: Conv2D)]]");
  assert_null(run_op("Conv2D", set_dilated, &st, 2,
                     (rt_tensor *[]){rand_tensor(RT_FLOAT, 4, x), rand_tensor(RT_FLOAT, 4, f)}));
  assert_string_equal(st.msg, "Current libxsmm and customized CPU implementations do not yet "
                              "support dilation rates larger than 1.\n\t [[node f (op: Conv2D)]]");
  assert_null(run_op("Conv2D", set_batch_stride, &st, 2,
                     (rt_tensor *[]){rand_tensor(RT_FLOAT, 4, x), rand_tensor(RT_FLOAT, 4, f)}));
  assert_string_equal(st.msg, "Current implementation does not yet support strides in the batch "
                              "and depth dimensions.\n\t [[node f (op: Conv2D)]]");
  assert_null(run_op("MaxPool", set_batch_stride, &st, 1, (rt_tensor *[]){rand_tensor(RT_FLOAT, 4, x)}));
  assert_string_equal(st.msg, "Pooling is not yet supported on the batch dimension.\n\t [[node f "
                              "(op: MaxPool)]]");
  assert_null(run_op("Conv2DBackpropInput", set_window, &st, 3,
                     (rt_tensor *[]){ints(4, D(1, 5, 4, 2)), rand_tensor(RT_FLOAT, 4, f),
                                     rand_tensor(RT_FLOAT, 4, D(1, 4, 4, 3))}));
  assert_string_equal(st.msg, "Conv2DBackpropInput: Size of out_backprop doesn't match computed: "
                              "actual = 4, computed = 5 spatial_dim: 1 input: 5 filter: 2 output: 4 "
                              "stride: 1 dilation: 1\n\t [[node f (op: Conv2DBackpropInput)]]");
}

/* Every case on the own kernels, and again on oneDNN's where it loads (ops/cpu/onednn.h);
 * the last four are for oneDNN's tiles: two sizes of tile, a first layer (whose input
 * gradient stays on the own kernels), a VALID row left over (all on the own kernels). */
static void conv_values(void) {
  /* SAME and VALID, strides 1 and 2, square and not, 1x1, both dtypes */
  conv_case(RT_DOUBLE, D(2, 5, 6, 3), 3, 3, 4, 1, 1, "SAME");
  conv_case(RT_FLOAT, D(2, 5, 6, 3), 3, 3, 4, 1, 1, "SAME");
  conv_case(RT_FLOAT, D(1, 7, 6, 2), 3, 2, 5, 2, 2, "SAME");
  conv_case(RT_FLOAT, D(1, 8, 8, 2), 2, 2, 3, 2, 2, "SAME");
  conv_case(RT_FLOAT, D(2, 7, 6, 3), 3, 2, 4, 2, 1, "VALID");
  conv_case(RT_DOUBLE, D(1, 6, 6, 2), 4, 4, 3, 3, 3, "VALID");
  conv_case(RT_FLOAT, D(2, 4, 5, 6), 1, 1, 7, 1, 1, "SAME");    /* no im2col */
  conv_case(RT_FLOAT, D(1, 5, 5, 4), 1, 1, 3, 2, 2, "VALID");   /* 1x1 strided */
  conv_case(RT_FLOAT, D(1, 3, 3, 2), 5, 5, 2, 1, 1, "SAME");    /* window larger than input */
  /* chunks: several whole images, then parts of one image */
  conv_case(RT_FLOAT, D(4, 12, 12, 48), 5, 5, 4, 1, 1, "SAME");
  conv_case(RT_FLOAT, D(1, 24, 24, 48), 5, 5, 4, 1, 1, "SAME");
  conv_case(RT_DOUBLE, D(2, 6, 5, 3), 3, 2, 2, 1, 1, "VALID");  /* stride-1 backprop, unpadded */
  conv_case(RT_FLOAT, D(4, 12, 12, 48), 5, 5, 4, 2, 2, "SAME");  /* strided: col2im by image */
  conv_case(RT_FLOAT, D(1, 52, 52, 256), 5, 5, 1, 2, 2, "SAME"); /* strided, parts of an image */
  conv_case(RT_FLOAT, D(4, 12, 12, 8), 3, 3, 16, 1, 1, "VALID");  /* stride 1, oc >= 2 ic: col2im */
  conv_case(RT_DOUBLE, D(2, 7, 7, 3), 5, 5, 6, 1, 1, "SAME");
  conv_case(RT_FLOAT, D(17, 9, 9, 16), 3, 3, 32, 1, 1, "SAME");   /* tiles of 3 and 2 images */
  conv_case(RT_FLOAT, D(9, 11, 10, 16), 3, 3, 16, 2, 2, "SAME");
  conv_case(RT_FLOAT, D(5, 12, 12, 1), 5, 5, 32, 1, 1, "SAME");   /* a first layer */
  conv_case(RT_FLOAT, D(3, 11, 11, 8), 4, 4, 16, 2, 2, "VALID");  /* a row left over */
}

static void test_conv_values(void **s) {
  (void)s;
  op_dnnl_enable(false);
  conv_values();
  op_dnnl_enable(true);
  if (op_dnnl_version()) conv_values();
}

static void test_pool_values(void **s) {
  pool_case(RT_FLOAT, D(2, 5, 6, 3), 2, 2, 2, 2, "VALID");
  pool_case(RT_FLOAT, D(2, 5, 6, 3), 2, 2, 2, 2, "SAME");
  pool_case(RT_FLOAT, D(2, 8, 6, 40), 2, 2, 2, 2, "VALID");   /* 2x2 windows: vectors, a tail */
  pool_case(RT_DOUBLE, D(1, 7, 7, 17), 2, 2, 2, 2, "SAME");
  pool_case(RT_DOUBLE, D(1, 7, 5, 2), 3, 3, 2, 1, "SAME");
  pool_case(RT_DOUBLE, D(1, 7, 5, 2), 3, 2, 1, 2, "VALID");
  pool_case(RT_FLOAT, D(3, 9, 9, 4), 3, 3, 2, 2, "SAME");
  pool_case(RT_FLOAT, D(1, 4, 4, 1), 1, 1, 3, 3, "SAME");   /* stride > window */
  /* ties: MaxPoolGrad routes to the first maximum in window order, as TF's CPU kernel */
  cur = (cfg){.sh = 2, .sw = 2, .kh = 2, .kw = 2, .padding = "VALID"};
  rt_shape xs = rt_shape_make(4, D(1, 2, 2, 1)), ys = rt_shape_make(4, D(1, 1, 1, 1));
  rt_tensor *x = rt_tensor_new(RT_FLOAT, &xs), *y = rt_tensor_new(RT_FLOAT, &ys);
  rt_tensor *dy = rt_tensor_new(RT_FLOAT, &ys);
  float *xv = rt_tensor_data(x);
  xv[0] = 1, xv[1] = 3, xv[2] = 3, xv[3] = 2;
  *(float *)rt_tensor_data(y) = 3;
  *(float *)rt_tensor_data(dy) = 5;
  rt_tensor *g = run_op("MaxPoolGrad", set_window, &st, 3, (rt_tensor *[]){x, y, dy});
  check_ok(&st);
  const float *gv = rt_tensor_data(g);
  assert_true(gv[0] == 0 && gv[1] == 5 && gv[2] == 0 && gv[3] == 0);
  rt_tensor_unref(g);
}

/* The filter gradient of short columns and 16/32/64 channels (the AVX-512 kernel where the
 * CPU has it) against the im2col + gemm path it replaces, which the same product with one
 * channel more still takes (its first oc channels are the same sums), against the naive
 * sums, and against central differences of sum(conv(x, w) * dy) in double. */
static void filter_direct_case(const int64_t *xs, int64_t kh, int64_t kw, int64_t k, int64_t sh,
                               int64_t sw, const char *pad) {
  cur = (cfg){.sh = sh, .sw = sw, .padding = pad};
  st = (rt_status){0};
  dims d = geometry(xs, kh, kw, k), d1 = geometry(xs, kh, kw, k + 1);
  rt_tensor *x = rand_tensor(RT_FLOAT, 4, xs), *dy1 = rand_tensor(RT_FLOAT, 4, D(d.n, d.oh, d.ow, k + 1));
  rt_shape ys = rt_shape_make(4, D(d.n, d.oh, d.ow, k));
  rt_tensor *dy = rt_tensor_new(RT_FLOAT, &ys);
  int64_t px = d.n * d.oh * d.ow, nf = kh * kw * xs[3] * k;
  for (int64_t p = 0; p < px; p++)
    memcpy((float *)rt_tensor_data(dy) + p * k, (float *)rt_tensor_data(dy1) + p * (k + 1),
           sizeof(float) * (size_t)k);
  rt_tensor *got = run_op("Conv2DBackpropFilter", set_window, &st, 3,
                          (rt_tensor *[]){rt_tensor_ref(x), ints(4, D(kh, kw, xs[3], k)), rt_tensor_ref(dy)});
  check_ok(&st);
  rt_tensor *old = run_op("Conv2DBackpropFilter", set_window, &st, 3,
                          (rt_tensor *[]){rt_tensor_ref(x), ints(4, D(kh, kw, xs[3], k + 1)), dy1});
  check_ok(&st);
  double *xv = values(x), *dv = values(dy), *fv = calloc((size_t)nf, sizeof *fv);
  double *dx = malloc(sizeof *dx * (size_t)rt_tensor_numel(x)), *mx = malloc(sizeof *mx * (size_t)rt_tensor_numel(x));
  double *dw = malloc(sizeof *dw * (size_t)nf), *mw = malloc(sizeof *mw * (size_t)nf);
  ref_conv_back(&d, xv, fv, dv, dx, dw, mx, mw);
  expect_close("Conv2DBackpropFilter", got, dw, mw, nf);
  double *ov = malloc(sizeof *ov * (size_t)nf);
  for (int64_t t = 0; t < nf / k; t++)
    for (int64_t o = 0; o < k; o++) ov[t * k + o] = rt_tensor_get_f64(old, t * (k + 1) + o);
  expect_close("Conv2DBackpropFilter against im2col + gemm", got, ov, mw, nf);
  /* central differences: the loss is linear in w, so only rounding separates them */
  double *y = malloc(sizeof *y * (size_t)(px * k)), *my = malloc(sizeof *my * (size_t)(px * k));
  for (int64_t i = 0; i < nf; i += px > 2000 ? 101 : 7) {
    double h = 1e-2, l[2];
    for (int side = 0; side < 2; side++) {
      fv[i] = side ? -h : h;
      ref_conv(&d, xv, fv, y, my);
      l[side] = 0;
      for (int64_t p = 0; p < px * k; p++) l[side] += y[p] * dv[p];
    }
    fv[i] = 0;
    double fd = (l[0] - l[1]) / (2 * h), g = rt_tensor_get_f64(got, i);
    if (fabs(fd - g) > 1e-5 * (mw[i] > 1 ? mw[i] : 1)) print_error("dw[%lld]: %.9g vs %.9g\n", (long long)i, g, fd);
    assert_true(fabs(fd - g) <= 1e-5 * (mw[i] > 1 ? mw[i] : 1));
  }
  (void)d1;
  rt_tensor_unref(got), rt_tensor_unref(old), rt_tensor_unref(x), rt_tensor_unref(dy);
  free(xv), free(dv), free(fv), free(dx), free(mx), free(dw), free(mw), free(ov), free(y), free(my);
}

static void test_filter_direct(void **s) {
  op_dnnl_enable(false);   /* the own direct kernel */
  filter_direct_case(D(2, 12, 12, 1), 5, 5, 32, 1, 1, "VALID");   /* the CNN's first layer */
  filter_direct_case(D(2, 9, 9, 1), 5, 5, 32, 1, 1, "SAME");      /* edges */
  filter_direct_case(D(2, 8, 8, 3), 3, 3, 16, 2, 2, "SAME");      /* strided, 3 channels */
  filter_direct_case(D(1, 7, 7, 2), 3, 3, 64, 1, 1, "VALID");
  filter_direct_case(D(16, 28, 28, 1), 5, 5, 32, 1, 1, "SAME");   /* threads, 64 tiles */
  op_dnnl_enable(true);
}

/* _FusedConv2D against Conv2D -> BiasAdd (-> Relu) run as three nodes: the same bits, on
 * the direct kernel (first layers), im2col chunks split among threads or not, and 1x1. */
static bool fused_relu, fused_pool;
static void set_fused(rt_node *n) {
  static const char *const ops[] = {"BiasAdd", "Relu", "MaxPool"};
  set_window(n);
  rt_node_set_int(n, "num_args", 1);
  rt_node_set_strings(n, "fused_ops", fused_pool ? 3 : fused_relu ? 2 : 1, ops);
}

static void fused_case(rt_dtype t, const int64_t *xs, int64_t kh, int64_t kw, int64_t k,
                       int64_t sh, int64_t sw, const char *pad, bool relu) {
  cur = (cfg){.sh = sh, .sw = sw, .padding = pad};
  fused_relu = relu;
  st = (rt_status){0};
  rt_tensor *x = rand_tensor(t, 4, xs), *f = rand_tensor(t, 4, D(kh, kw, xs[3], k));
  rt_tensor *b = rand_tensor(t, 1, D(k));
  rt_graph *g = rt_graph_new();
  add_const(g, "x", rt_tensor_ref(x));
  add_const(g, "w", rt_tensor_ref(f));
  add_const(g, "b", rt_tensor_ref(b));
  const char *chain[][3] = {{"conv", "Conv2D", "x"}, {"bias", "BiasAdd", "conv"}, {"relu", "Relu", "bias"}};
  for (int i = 0; i < (relu ? 3 : 2); i++) {
    rt_node *n = rt_node_new(chain[i][0], chain[i][1]);
    rt_node_add_input(n, chain[i][2]);
    if (i == 0) rt_node_add_input(n, "w"), set_window(n);
    if (i == 1) rt_node_add_input(n, "b");
    rt_graph_add(g, n, &st);
    check_ok(&st);
  }
  rt_tensor *want = eval(g, relu ? "relu" : "bias", 0, NULL, NULL, &st);
  check_ok(&st);
  rt_graph_free(g);
  rt_tensor *got = run_op("_FusedConv2D", set_fused, &st, 3, (rt_tensor *[]){x, f, b});
  check_ok(&st);
  assert_true(rt_shape_equal(&got->shape, &want->shape));
  assert_memory_equal(rt_tensor_data(got), rt_tensor_data(want), rt_tensor_nbytes(want));
  rt_tensor_unref(got), rt_tensor_unref(want);
}

static void fused_cases(void) {
  fused_case(RT_FLOAT, D(4, 28, 28, 1), 5, 5, 32, 1, 1, "VALID", true);   /* direct, 2 pixels */
  fused_case(RT_FLOAT, D(2, 9, 9, 1), 5, 5, 64, 1, 1, "SAME", true);      /* direct, edges */
  fused_case(RT_FLOAT, D(2, 9, 9, 1), 3, 3, 8, 2, 2, "SAME", false);
  fused_case(RT_FLOAT, D(8, 12, 12, 32), 3, 3, 64, 1, 1, "VALID", true);  /* chunks a thread */
  fused_case(RT_FLOAT, D(2, 5, 6, 3), 3, 3, 4, 1, 1, "SAME", true);       /* one small gemm */
  fused_case(RT_DOUBLE, D(2, 7, 6, 3), 3, 2, 5, 2, 1, "VALID", true);
  fused_case(RT_DOUBLE, D(2, 7, 6, 3), 3, 2, 5, 2, 1, "VALID", false);
  fused_case(RT_FLOAT, D(2, 4, 5, 6), 1, 1, 7, 1, 1, "SAME", true);       /* 1x1: no im2col */
}

/* The first layers' direct Conv2D on AVX-512 against its AVX2 kernel: the same fused
 * multiply-adds in the same order, so the same bits, with groups of 8, 4, 2 and 1 pixels
 * (rows of 28, 13, 11), padding (a padded copy of each image), strides, 1-3 channels in,
 * 16/32/64 out, bias and relu. */
static void direct512_case(const int64_t *xs, int64_t kh, int64_t k, int64_t stride,
                           const char *pad, bool relu) {
  cur = (cfg){.sh = stride, .sw = stride, .padding = pad};
  fused_relu = relu;
  rt_tensor *x = rand_tensor(RT_FLOAT, 4, xs), *f = rand_tensor(RT_FLOAT, 4, D(kh, kh, xs[3], k));
  rt_tensor *b = rand_tensor(RT_FLOAT, 1, D(k)), *got[2];
  for (int isa = 0; isa < 2; isa++) {
    op_cpu_direct_conv_avx512(isa);
    got[isa] = run_op("_FusedConv2D", set_fused, &st, 3,
                      (rt_tensor *[]){rt_tensor_ref(x), rt_tensor_ref(f), rt_tensor_ref(b)});
    check_ok(&st);
  }
  op_cpu_direct_conv_avx512(true);
  assert_true(rt_shape_equal(&got[0]->shape, &got[1]->shape));
  assert_memory_equal(rt_tensor_data(got[1]), rt_tensor_data(got[0]), rt_tensor_nbytes(got[0]));
  rt_tensor_unref(got[0]), rt_tensor_unref(got[1]);
  rt_tensor_unref(x), rt_tensor_unref(f), rt_tensor_unref(b);
}

static void test_direct_conv_avx512(void **s) {
  if (!op_cpu_avx512()) {
    print_message("no AVX-512: its direct kernel is not run here\n");
    return;
  }
  op_dnnl_enable(false);   /* the AVX2 kernel's other side is im2col + GEMM, not oneDNN */
  direct512_case(D(3, 28, 28, 1), 5, 32, 1, "SAME", true);    /* the tutorial CNN's first */
  direct512_case(D(2, 28, 28, 1), 5, 32, 1, "VALID", true);   /* the tf.layers CNN's */
  direct512_case(D(2, 13, 13, 2), 3, 64, 1, "SAME", false);   /* 4 pixels, then 2 and 1 */
  direct512_case(D(2, 11, 11, 3), 3, 16, 2, "SAME", true);    /* strided */
  direct512_case(D(1, 12, 10, 1), 5, 16, 2, "VALID", false);
  op_dnnl_enable(true);
}

static void test_fused_conv(void **s) {
  op_dnnl_enable(false);
  fused_cases();
  op_dnnl_enable(true);
  if (op_dnnl_version()) fused_cases();
  /* what the kernel refuses */
  cur = (cfg){.sh = 1, .sw = 1, .padding = "VALID"};
  fused_relu = true;
  assert_null(run_op("_FusedConv2D", set_fused, &st, 3,
                     (rt_tensor *[]){rand_tensor(RT_FLOAT, 4, D(1, 3, 3, 1)),
                                     rand_tensor(RT_FLOAT, 4, D(2, 2, 1, 4)),
                                     rand_tensor(RT_FLOAT, 1, D(3))}));
  assert_string_equal(st.msg, "Must provide as many biases as the last dimension of the input "
                              "tensor: [3] vs. 4\n\t [[node f (op: _FusedConv2D)]]");
}

/* _FusedMaxPoolGrad against MaxPoolGrad -> ReluGrad on a Relu's output (zeros, ties of
 * zeros, positives): the same bits. */
static void fused_pool_case(rt_dtype t, const int64_t *xs, int64_t k, int64_t stride, const char *pad) {
  cur = (cfg){.sh = stride, .sw = stride, .kh = k, .kw = k, .padding = pad};
  st = (rt_status){0};
  dims d = geometry(xs, k, k, xs[3]);
  rt_graph *g = rt_graph_new();
  add_const(g, "x", rand_tensor(t, 4, xs));
  add_const(g, "dy", rand_tensor(t, 4, D(d.n, d.oh, d.ow, d.c)));
  const char *nodes[][5] = {{"a", "Relu", "x"}, {"p", "MaxPool", "a"},
                            {"mg", "MaxPoolGrad", "a", "p", "dy"}, {"rg", "ReluGrad", "mg", "a"},
                            {"f", "_FusedMaxPoolGrad", "a", "p", "dy"}};
  for (int i = 0; i < 5; i++) {
    rt_node *n = rt_node_new(nodes[i][0], nodes[i][1]);
    for (int k = 2; k < 5 && nodes[i][k]; k++) rt_node_add_input(n, nodes[i][k]);
    if (i == 1 || i == 2 || i == 4) set_window(n);
    if (i == 4) rt_node_set_strings(n, "fused_ops", 1, (const char *const[]){"ReluGrad"});
    rt_graph_add(g, n, &st);
    check_ok(&st);
  }
  rt_tensor *want = eval(g, "rg", 0, NULL, NULL, &st), *got = eval(g, "f", 0, NULL, NULL, &st);
  check_ok(&st);
  assert_true(rt_shape_equal(&got->shape, &want->shape));
  assert_memory_equal(rt_tensor_data(got), rt_tensor_data(want), rt_tensor_nbytes(want));
  rt_tensor_unref(got), rt_tensor_unref(want);
  rt_graph_free(g);
}

static void set_filter_argmax(rt_node *n) {
  set_window(n);
  rt_node_set_ints(n, "filter_shape", 4, D(3, 3, 1, 16));
}

static void set_fused_pool(rt_node *n) {
  set_window(n);
  rt_node_set_strings(n, "fused_ops", 1, (const char *const[]){"ReluGrad"});
}

/* One 2x2 window, C channels (vector lanes and a tail), channel c's cases by c % 8: its
 * maximum at pixel 0..3, all four tied (the first wins), a NaN first (it wins: no compare
 * beats it) or third (never chosen), a maximum under 0 (fused: no gradient); dy -0 on odd
 * channels (0 + dy: +0). MaxPoolGrad and _FusedMaxPoolGrad, bit for bit. */
static void pool_grad_2x2_case(int64_t C) {
  cur = (cfg){.sh = 2, .sw = 2, .kh = 2, .kw = 2, .padding = "VALID"};
  for (int fused = 0; fused < 2; fused++) {
    rt_shape xs = rt_shape_make(4, D(1, 2, 2, C)), ys = rt_shape_make(4, D(1, 1, 1, C));
    rt_tensor *x = rt_tensor_new(RT_FLOAT, &xs), *y = rt_tensor_new(RT_FLOAT, &ys);
    rt_tensor *dy = rt_tensor_new(RT_FLOAT, &ys);
    float *xv = rt_tensor_data(x), *yv = rt_tensor_data(y), *dv = rt_tensor_data(dy);
    float want[4 * 64];
    for (int64_t c = 0; c < C; c++) {
      int kind = (int)(c % 8), win = kind < 4 ? kind : 0;
      for (int i = 0; i < 4; i++) xv[i * C + c] = kind == 7 ? -(float)(i + 1) : (float)(i + 1);
      if (kind < 4) xv[kind * C + c] = 10;
      if (kind == 4) for (int i = 0; i < 4; i++) xv[i * C + c] = 2;
      if (kind == 5) xv[c] = NAN;
      if (kind == 6) xv[2 * C + c] = NAN, xv[c] = 7;
      yv[c] = xv[win * C + c];
      dv[c] = c % 2 ? -0.0f : (float)(c + 1);
      bool pass = !fused || yv[c] > 0;
      for (int i = 0; i < 4; i++) want[i * C + c] = i == win && pass ? 0.0f + dv[c] : 0.0f;
    }
    rt_tensor *g = run_op(fused ? "_FusedMaxPoolGrad" : "MaxPoolGrad",
                          fused ? set_fused_pool : set_window, &st, 3, (rt_tensor *[]){x, y, dy});
    check_ok(&st);
    assert_memory_equal(rt_tensor_data(g), want, sizeof(float) * 4 * (size_t)C);
    rt_tensor_unref(g);
  }
}

static void test_fused_pool_grad(void **s) {
  for (int isa = 2; isa >= 0; isa--) {   /* AVX-512, AVX2, plain C: those the CPU has */
    if (op_cpu_pool_simd(isa) != isa) continue;
    pool_grad_2x2_case(19);   /* a vector and a tail on AVX-512; not a whole AVX2 vector */
    pool_grad_2x2_case(24);   /* AVX2 vectors; AVX-512's tail */
    pool_grad_2x2_case(64);
  }
  op_cpu_pool_simd(-1);
  fused_pool_case(RT_FLOAT, D(4, 24, 24, 32), 2, 2, "VALID");   /* the CNN's first pool */
  fused_pool_case(RT_FLOAT, D(2, 7, 7, 70), 2, 2, "SAME");      /* channels past 64 */
  fused_pool_case(RT_DOUBLE, D(2, 7, 5, 3), 3, 1, "SAME");      /* overlapping windows */
  fused_pool_case(RT_FLOAT, D(1, 9, 9, 4), 3, 2, "VALID");
}

/* The remapper folds Conv2D -> BiasAdd -> Relu into one node named as the Relu, only where
 * nothing else reads the folded outputs, and the graph computes the same bits. */
static rt_node *cpu_node(rt_graph *g, const char *name, const char *op, const char *a,
                         const char *b) {
  rt_node *n = rt_node_new(name, op);
  rt_node_add_input(n, a);
  if (b) rt_node_add_input(n, b);
  if (!strcmp(op, "MaxPoolGrad")) rt_node_add_input(n, "r2");   /* a gradient the shape of p */
  if (!strcmp(op, "Conv2D") || strstr(op, "MaxPool") || strstr(op, "Conv2DBackprop")) set_window(n);
  n->assigned = strdup("/job:localhost/replica:0/task:0/device:CPU:0");
  rt_graph_add(g, n, &st);
  check_ok(&st);
  return n;
}

static rt_graph *remap_graph(void) {
  cur = (cfg){.sh = 1, .sw = 1, .kh = 1, .kw = 1, .padding = "SAME"};
  st = (rt_status){0};
  rt_graph *g = rt_graph_new();
  lcg = 99;
  add_const(g, "x", rand_tensor(RT_FLOAT, 4, D(2, 6, 6, 3)));
  add_const(g, "w", rand_tensor(RT_FLOAT, 4, D(3, 3, 3, 8)));
  add_const(g, "b", rand_tensor(RT_FLOAT, 1, D(8)));
  for (int i = 0; i < 3; i++) g->nodes[i]->assigned = strdup("/job:localhost/replica:0/task:0/device:CPU:0");
  cpu_node(g, "c1", "Conv2D", "x", "w");   /* c1 -> a1 -> r1: one node r1 */
  cpu_node(g, "a1", "BiasAdd", "c1", "b");
  cpu_node(g, "r1", "Relu", "a1", NULL);
  cpu_node(g, "c2", "Conv2D", "x", "w");   /* a2 read twice: c2 -> a2 fuse, r2 stays */
  cpu_node(g, "a2", "BiasAdd", "c2", "b");
  cpu_node(g, "r2", "Relu", "a2", NULL);
  cpu_node(g, "c3", "Conv2D", "x", "w");   /* c3 fetched: nothing fuses */
  cpu_node(g, "a3", "BiasAdd", "c3", "b");
  cpu_node(g, "p", "MaxPool", "r1", NULL);   /* MaxPoolGrad -> ReluGrad on r1: one node rg */
  cpu_node(g, "mg", "MaxPoolGrad", "r1", "p");
  cpu_node(g, "rg", "ReluGrad", "mg", "r1");
  cpu_node(g, "c4", "Conv2D", "x", "w");   /* conv + b, its shape read by the add's gradient */
  cpu_node(g, "a4", "Add", "c4", "b");
  cpu_node(g, "r4", "Relu", "a4", NULL);
  cpu_node(g, "s4", "_SumToShapeOf", "r2", "c4");
  rt_node *sum = rt_node_new("sum", "AddN");
  const char *const terms[] = {"r1", "r2", "a2", "a3", "rg", "r4", "s4"};
  for (int i = 0; i < 7; i++) rt_node_add_input(sum, terms[i]);
  rt_node_set_int(sum, "N", 7);
  sum->assigned = strdup("/job:localhost/replica:0/task:0/device:CPU:0");
  rt_graph_add(g, sum, &st);
  check_ok(&st);
  return g;
}

static void test_remap(void **s) {
  rt_graph *g = remap_graph();
  const char *const keep[] = {"sum:0", "c3:0"};
  rt_tensor *want = eval(g, "sum", 0, NULL, NULL, &st);
  check_ok(&st);
  assert_int_equal(rt_remap_graph(&g, keep, 2, &st), RT_OK);
  const char *ops[][2] = {{"r1", "_FusedConv2D"}, {"a2", "_FusedConv2D"}, {"r2", "Relu"},
                          {"c3", "Conv2D"}, {"a3", "BiasAdd"}, {"rg", "_FusedMaxPoolGrad"},
                          {"r4", "_FusedConv2D"}};
  for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
    assert_string_equal(rt_graph_find(g, ops[i][0])->op, ops[i][1]);
  assert_null(rt_graph_find(g, "c1"));
  assert_null(rt_graph_find(g, "a1"));
  assert_null(rt_graph_find(g, "c2"));
  assert_null(rt_graph_find(g, "mg"));
  assert_null(rt_graph_find(g, "c4"));
  assert_string_equal(rt_graph_find(g, "s4")->inputs[1], "r4");
  assert_int_equal(rt_node_attr(rt_graph_find(g, "r1"), "fused_ops")->list.n, 2);
  assert_int_equal(rt_node_attr(rt_graph_find(g, "a2"), "fused_ops")->list.n, 1);
  rt_tensor *got = eval(g, "sum", 0, NULL, NULL, &st);
  check_ok(&st);
  assert_memory_equal(rt_tensor_data(got), rt_tensor_data(want), rt_tensor_nbytes(want));
  rt_tensor_unref(got), rt_tensor_unref(want);
  rt_graph_free(g);
}

/* g's fetches have want's shapes and bits (takes want). */
static void same_as(rt_graph *g, const char *const *fetch, int n, rt_tensor **want) {
  for (int i = 0; i < n; i++) {
    rt_tensor *got = eval(g, fetch[i], 0, NULL, NULL, &st);
    check_ok(&st);
    assert_true(rt_shape_equal(&got->shape, &want[i]->shape));
    assert_memory_equal(rt_tensor_data(got), rt_tensor_data(want[i]), rt_tensor_nbytes(want[i]));
    rt_tensor_unref(got), rt_tensor_unref(want[i]);
  }
}

/* Conv2D -> BiasAdd -> Relu -> MaxPool (2x2, stride 2) into one _FusedConv2D named as
 * the pool, where nothing else reads the Relu: the same bits as the four nodes, on the
 * first layers' kernel (even output, pooled two rows at a time where AVX-512 runs it) and
 * on the other path (odd output, SAME: the whole output, then the pool). */
static void conv_pool_chain(rt_graph *g, const char *tag, const char *x, const char *w,
                            const char *pad, int pool_k) {
  char c[16], a[16], r[16], p[16];
  snprintf(c, sizeof c, "c%s", tag), snprintf(a, sizeof a, "a%s", tag);
  snprintf(r, sizeof r, "r%s", tag), snprintf(p, sizeof p, "p%s", tag);
  cur = (cfg){.sh = 1, .sw = 1, .kh = 1, .kw = 1, .padding = pad};
  cpu_node(g, c, "Conv2D", x, w);
  cpu_node(g, a, "BiasAdd", c, "b16");
  cpu_node(g, r, "Relu", a, NULL);
  cur = (cfg){.sh = 2, .sw = 2, .kh = pool_k, .kw = pool_k, .padding = pad};
  cpu_node(g, p, "MaxPool", r, NULL);
}

static void test_remap_conv_pool(void **s) {
  st = (rt_status){0};
  rt_graph *g = rt_graph_new();
  lcg = 7;
  add_const(g, "x1", rand_tensor(RT_FLOAT, 4, D(3, 12, 12, 1)));
  add_const(g, "x3", rand_tensor(RT_FLOAT, 4, D(2, 9, 9, 3)));
  add_const(g, "w1", rand_tensor(RT_FLOAT, 4, D(3, 3, 1, 16)));
  add_const(g, "w3", rand_tensor(RT_FLOAT, 4, D(3, 3, 3, 16)));
  add_const(g, "b16", rand_tensor(RT_FLOAT, 1, D(16)));
  for (int i = 0; i < 5; i++) g->nodes[i]->assigned = strdup("/job:localhost/replica:0/task:0/device:CPU:0");
  conv_pool_chain(g, "5", "x1", "w1", "VALID", 2);   /* 10x10 -> 5x5: the first-layer path */
  conv_pool_chain(g, "6", "x1", "w1", "SAME", 2);    /* 12x12 -> 6x6, padded images */
  conv_pool_chain(g, "7", "x3", "w3", "SAME", 2);    /* 9x9 -> 5x5: clipped windows */
  conv_pool_chain(g, "8", "x3", "w3", "VALID", 3);   /* a 3x3 pool: not fused */
  conv_pool_chain(g, "9", "x1", "w1", "VALID", 2);   /* r9 read by the sum too: not fused */
  rt_node *sum = rt_node_new("sum", "AddN");
  const char *const terms[] = {"p5", "p9"};
  for (int i = 0; i < 2; i++) rt_node_add_input(sum, terms[i]);
  rt_node_set_int(sum, "N", 2);
  sum->assigned = strdup("/job:localhost/replica:0/task:0/device:CPU:0");
  rt_graph_add(g, sum, &st);
  rt_node *id9 = rt_node_new("id9", "Identity");
  rt_node_add_input(id9, "r9");
  id9->assigned = strdup("/job:localhost/replica:0/task:0/device:CPU:0");
  rt_graph_add(g, id9, &st);
  check_ok(&st);
  const char *fetch[] = {"p5", "p6", "p7", "p8", "sum", "id9"}, *const keep[] = {"sum:0", "id9:0"};
  enum { F = sizeof fetch / sizeof *fetch };
  rt_tensor *want[F];
  for (int i = 0; i < F; i++) {
    want[i] = eval(g, fetch[i], 0, NULL, NULL, &st);
    check_ok(&st);
  }
  assert_int_equal(rt_remap_graph(&g, keep, 2, &st), RT_OK);
  const char *ops[][2] = {{"p5", "_FusedConv2D"}, {"p6", "_FusedConv2D"}, {"p7", "_FusedConv2D"},
                          {"p8", "MaxPool"}, {"r8", "_FusedConv2D"}, {"p9", "MaxPool"}};
  for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
    assert_string_equal(rt_graph_find(g, ops[i][0])->op, ops[i][1]);
  assert_null(rt_graph_find(g, "r5"));
  assert_int_equal(rt_node_attr(rt_graph_find(g, "p6"), "fused_ops")->list.n, 3);
  assert_string_equal(rt_node_string(rt_graph_find(g, "p7"), "pool_padding", ""), "SAME");
  same_as(g, fetch, F, want);
  rt_graph_free(g);
}

/* A training step's conv -> bias -> relu -> 2x2 pool and its gradient: the remapper makes
 * the pool _FusedConv2DWithArgmax and the gradient _FusedMaxPoolGradWithArgmax from its
 * workspace (the Relu gone, the add's shape reader an Identity), with the same bits as
 * the graph before, on the first-layer kernel (ic 1) and the other path (ic 8), channels
 * in whole vectors and with tails, on each ISA the CPU has; not where the Relu has another
 * reader or the conv's output has an odd side. */
static void node_in(rt_graph *g, const char *name, const char *op, const char *const *in) {
  rt_node *n = rt_node_new(name, op);
  for (int i = 0; in[i]; i++) rt_node_add_input(n, in[i]);
  if (!strcmp(op, "Conv2D") || strstr(op, "MaxPool") || strstr(op, "Conv2DBackprop")) set_window(n);
  n->assigned = strdup("/job:localhost/replica:0/task:0/device:CPU:0");
  rt_graph_add(g, n, &st);
  check_ok(&st);
}

static bool bias_grad;   /* train_pool_chain's bias gradient: BiasAddGrad, not _SumToShapeOf */

static void train_pool_chain(rt_graph *g, const char *t, int64_t h, int64_t ic, int64_t oc) {
  char x[8], w[8], b[8], dy[8], c[8], a[8], r[8], p[8], mg[8], rg[8], s[8], sb[8];
  snprintf(x, 8, "x%s", t), snprintf(w, 8, "w%s", t), snprintf(b, 8, "b%s", t);
  snprintf(dy, 8, "dy%s", t), snprintf(c, 8, "c%s", t), snprintf(a, 8, "a%s", t);
  snprintf(r, 8, "r%s", t), snprintf(p, 8, "p%s", t), snprintf(mg, 8, "mg%s", t);
  snprintf(rg, 8, "rg%s", t), snprintf(s, 8, "s%s", t), snprintf(sb, 8, "sb%s", t);
  rt_tensor *xt = rand_tensor(RT_FLOAT, 4, D(2, h, h, ic));
  ((float *)rt_tensor_data(xt))[5 * ic] = NAN;
  add_const(g, x, xt);
  add_const(g, w, rand_tensor(RT_FLOAT, 4, D(3, 3, ic, oc)));
  add_const(g, b, rand_tensor(RT_FLOAT, 1, D(oc)));
  rt_tensor *dyt = rand_tensor(RT_FLOAT, 4, D(2, (h + 1) / 2, (h + 1) / 2, oc));
  ((float *)rt_tensor_data(dyt))[1] = -0.0f;
  add_const(g, dy, dyt);
  for (int i = 1; i <= 4; i++)
    g->nodes[g->n_nodes - i]->assigned = strdup("/job:localhost/replica:0/task:0/device:CPU:0");
  cur = (cfg){.sh = 1, .sw = 1, .kh = 1, .kw = 1, .padding = "SAME"};
  node_in(g, c, "Conv2D", (const char *[]){x, w, NULL});
  node_in(g, a, "Add", (const char *[]){c, b, NULL});
  node_in(g, r, "Relu", (const char *[]){a, NULL});
  cur = (cfg){.sh = 2, .sw = 2, .kh = 2, .kw = 2, .padding = "SAME"};
  node_in(g, p, "MaxPool", (const char *[]){r, NULL});
  node_in(g, mg, "MaxPoolGrad", (const char *[]){r, p, dy, NULL});
  node_in(g, rg, "ReluGrad", (const char *[]){mg, r, NULL});
  node_in(g, s, "_SumToShapeOf", (const char *[]){rg, c, NULL});
  if (bias_grad) node_in(g, sb, "BiasAddGrad", (const char *[]){rg, NULL});
  else node_in(g, sb, "_SumToShapeOf", (const char *[]){rg, b, NULL});
}

static void test_remap_pool_argmax(void **s) {
  const char *fetch[] = {"p1", "s1", "sb1", "p8", "s8", "sb8", "p20", "s20", "p24", "s24",
                         "s9", "rg9", "p7", "s7", "idr7"};
  enum { F = sizeof fetch / sizeof *fetch };
  for (int isa = 2; isa >= 0; isa--) {
    if (op_cpu_pool_simd(isa) != isa) continue;
    st = (rt_status){0};
    rt_graph *g = rt_graph_new();
    lcg = 11;
    train_pool_chain(g, "1", 12, 1, 16);    /* the first-layer kernel */
    train_pool_chain(g, "8", 10, 8, 16);    /* the whole output, then the pool */
    train_pool_chain(g, "20", 8, 1, 20);    /* channels: AVX-512's tail, not AVX2's vectors */
    train_pool_chain(g, "24", 8, 8, 24);    /* AVX2's vectors, AVX-512's tail */
    train_pool_chain(g, "9", 9, 1, 16);     /* 9x9: odd, not fused */
    train_pool_chain(g, "7", 8, 1, 16);     /* r7 read by an Identity too: not fused */
    node_in(g, "idr7", "Identity", (const char *[]){"r7", NULL});
    rt_tensor *want[F];
    for (int i = 0; i < F; i++) {
      want[i] = eval(g, fetch[i], 0, NULL, NULL, &st);
      check_ok(&st);
    }
    assert_int_equal(rt_remap_graph(&g, fetch, F, &st), RT_OK);   /* the fetches stay */
    const char *ops[][2] = {{"p1", "_FusedConv2DWithArgmax"}, {"rg1", "_FusedMaxPoolGradWithArgmax"},
                            {"s1", "Identity"}, {"p8", "_FusedConv2DWithArgmax"},
                            {"rg24", "_FusedMaxPoolGradWithArgmax"}, {"p9", "MaxPool"},
                            {"rg9", "_FusedMaxPoolGrad"}, {"p7", "MaxPool"}, {"r7", "_FusedConv2D"}};
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
      assert_string_equal(rt_graph_find(g, ops[i][0])->op, ops[i][1]);
    assert_null(rt_graph_find(g, "r1"));
    assert_null(rt_graph_find(g, "r20"));
    assert_string_equal(rt_graph_find(g, "rg8")->inputs[0], "p8:1");
    same_as(g, fetch, F, want);
    rt_graph_free(g);
  }
  op_cpu_pool_simd(-1);
}

/* The first layer's filter and bias gradients: after fuse_pool_argmax, a
 * Conv2DBackpropFilter reading the relu gradient (through tf.tuple's control_dependency
 * Identity, with its group NoOp, as tf.gradients makes it) and a bias _SumToShapeOf are one
 * _FusedConv2DBackpropFilterWithArgmax where the direct filter kernel runs (AVX-512,
 * oc 16/32/64, at most 32 taps): its filter gradient has the bits of that kernel on the
 * relu gradient written out, its bias those of the double sums. Not where the layer's input
 * gradient reads the same value. The kernel's own other path (oc 20) gives the unfused
 * graph's bits too. */
static void add_sizes(rt_graph *g, const char *name, const int64_t *d) {
  rt_shape s4 = rt_shape_make(1, D(4));
  rt_tensor *t = rt_tensor_new(RT_INT32, &s4);
  for (int i = 0; i < 4; i++) ((int32_t *)rt_tensor_data(t))[i] = (int32_t)d[i];
  add_const(g, name, t);
  g->nodes[g->n_nodes - 1]->assigned = strdup("/job:localhost/replica:0/task:0/device:CPU:0");
}

static void filter_chain(rt_graph *g, const char *t, int64_t h, int64_t ic, int64_t oc, bool tuple,
                         bool input_grad) {
  char fs[16], is[16], fb[16], ib[16], ctl[16], grp[16], s[8], sb[8], w[8], ctl_in[20];
  train_pool_chain(g, t, h, ic, oc);
  snprintf(fs, 16, "fs%s", t), snprintf(is, 16, "is%s", t), snprintf(fb, 16, "fb%s", t);
  snprintf(ib, 16, "ib%s", t), snprintf(ctl, 16, "ctl%s", t), snprintf(grp, 16, "grp%s", t);
  snprintf(s, 8, "s%s", t), snprintf(sb, 8, "sb%s", t), snprintf(w, 8, "w%s", t);
  add_sizes(g, fs, D(3, 3, ic, oc));
  add_sizes(g, is, D(2, h, h, ic));
  const char *src = s;
  if (tuple) {   /* tf.tuple: group = NoOp(^s, ^sb), control_dependency = Identity(s, ^group) */
    char cs[12], csb[12];
    snprintf(cs, 12, "^%s", s), snprintf(csb, 12, "^%s", sb), snprintf(ctl_in, 20, "^%s", grp);
    node_in(g, grp, "NoOp", (const char *[]){cs, csb, NULL});
    node_in(g, ctl, "Identity", (const char *[]){s, ctl_in, NULL});
    src = ctl;
  }
  cur = (cfg){.sh = 1, .sw = 1, .kh = 1, .kw = 1, .padding = "SAME"};
  char x[8];
  snprintf(x, 8, "x%s", t);
  node_in(g, fb, "Conv2DBackpropFilter", (const char *[]){x, fs, src, NULL});
  if (input_grad) node_in(g, ib, "Conv2DBackpropInput", (const char *[]){is, w, src, NULL});
}

static void test_remap_filter_argmax(void **s) {
  const char *fetch[] = {"fb1", "sb1", "fb2", "sb2", "fb3", "sb3", "fb4", "ib4", "fb5", "sb5",
                         "fb6", "sb6"};
  enum { F = sizeof fetch / sizeof *fetch };
  bool direct = op_cpu_filter_argmax_fast(3, 3, 1, 16);
  for (int isa = 2; isa >= 0; isa--) {
    if (op_cpu_pool_simd(isa) != isa) continue;
    st = (rt_status){0};
    rt_graph *g = rt_graph_new();
    lcg = 13;
    filter_chain(g, "1", 12, 1, 16, false, false);   /* the first layer: fused */
    filter_chain(g, "2", 12, 1, 32, true, false);    /* through tf.tuple's Identity: fused */
    filter_chain(g, "3", 24, 2, 64, false, false);   /* 1152 pixels: two runs of sums */
    filter_chain(g, "4", 12, 1, 16, false, true);    /* the input gradient reads it too: not */
    filter_chain(g, "5", 12, 1, 20, false, false);   /* 20 channels: no direct kernel, not */
    bias_grad = true;                               /* tf.layers' BiasAdd: BiasAddGrad */
    filter_chain(g, "6", 24, 1, 32, true, false);
    bias_grad = false;
    rt_tensor *want[F];
    op_dnnl_enable(false);   /* the unfused filter gradients on the direct kernel */
    for (int i = 0; i < F; i++) {
      want[i] = eval(g, fetch[i], 0, NULL, NULL, &st);
      check_ok(&st);
    }
    assert_int_equal(rt_remap_graph(&g, fetch, F, &st), RT_OK);
    const char *fused = direct ? "_FusedConv2DBackpropFilterWithArgmax" : "Conv2DBackpropFilter";
    const char *ops[][2] = {{"fb1", fused}, {"fb2", fused}, {"fb3", fused}, {"fb6", fused},
                            {"fb4", "Conv2DBackpropFilter"}, {"fb5", "Conv2DBackpropFilter"},
                            {"rg4", "_FusedMaxPoolGradWithArgmax"}};
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
      assert_string_equal(rt_graph_find(g, ops[i][0])->op, ops[i][1]);
    if (direct) {
      assert_string_equal(rt_graph_find(g, "sb1")->op, "Identity");
      assert_string_equal(rt_graph_find(g, "sb1")->inputs[0], "fb1:1");
      assert_null(rt_graph_find(g, "rg1"));
      assert_null(rt_graph_find(g, "ctl2"));
      assert_string_equal(rt_graph_find(g, "grp2")->op, "NoOp");
      assert_string_equal(rt_node_string(rt_graph_find(g, "fb6"), "bias_sum", ""), "BiasAddGrad");
    }
    rt_tensor *want5[2] = {rt_tensor_copy(want[8]), rt_tensor_copy(want[9])};
    same_as(g, fetch, F, want);
    /* the kernel's other path, by hand on chain 5's workspace */
    rt_node *n = rt_node_new("fused5", "_FusedConv2DBackpropFilterWithArgmax");
    const char *in5[] = {"x5", "p5:1", "dy5"};
    for (int i = 0; i < 3; i++) rt_node_add_input(n, in5[i]);
    set_window(n);
    rt_node_set_ints(n, "filter_shape", 4, D(3, 3, 1, 20));
    n->assigned = strdup("/job:localhost/replica:0/task:0/device:CPU:0");
    rt_graph_add(g, n, &st);
    check_ok(&st);
    node_in(g, "fused5b", "Identity", (const char *[]){"fused5:1", NULL});
    same_as(g, (const char *[]){"fused5", "fused5b"}, 2, want5);
    op_dnnl_enable(true);
    rt_graph_free(g);
  }
  op_cpu_pool_simd(-1);
}

/* What the workspace kernels refuse, word for word. */
static void test_pool_argmax_errors(void **s) {
  cur = (cfg){.sh = 2, .sw = 2, .kh = 2, .kw = 2, .padding = "VALID"};
  rt_shape ws4 = rt_shape_make(4, D(1, 2, 2, 3));
  assert_null(run_op("_FusedMaxPoolGradWithArgmax", set_fused_pool, &st, 2,
                     (rt_tensor *[]){rt_tensor_new(RT_UINT8, &ws4),
                                     rand_tensor(RT_FLOAT, 4, D(1, 2, 3, 3))}));
  assert_string_equal(st.msg, "Expected grad shape to be [1,2,2,3], but got [1,2,3,3]\n\t "
                              "[[node f (op: _FusedMaxPoolGradWithArgmax)]]");
  cur = (cfg){.sh = 1, .sw = 1, .padding = "VALID"};
  fused_relu = true;
  fused_pool = true;
  assert_null(run_op("_FusedConv2DWithArgmax", set_fused, &st, 3,
                     (rt_tensor *[]){rand_tensor(RT_FLOAT, 4, D(1, 4, 5, 1)),
                                     rand_tensor(RT_FLOAT, 4, D(2, 2, 1, 4)),
                                     rand_tensor(RT_FLOAT, 1, D(4))}));
  assert_string_equal(st.msg, "_FusedConv2DWithArgmax: the convolution's output is 3x4; its 2x2 "
                              "pool needs even sides\n\t [[node f (op: _FusedConv2DWithArgmax)]]");
  fused_pool = false;
  cur = (cfg){.sh = 1, .sw = 1, .padding = "SAME"};
  rt_shape ws16 = rt_shape_make(4, D(1, 2, 2, 16));
  assert_null(run_op("_FusedConv2DBackpropFilterWithArgmax", set_filter_argmax, &st, 3,
                     (rt_tensor *[]){rand_tensor(RT_FLOAT, 4, D(1, 4, 4, 1)),
                                     rt_tensor_new(RT_UINT8, &ws16),
                                     rand_tensor(RT_FLOAT, 4, D(1, 2, 3, 16))}));
  assert_string_equal(st.msg, "Expected grad shape to be [1,2,2,16], but got [1,2,3,16]\n\t "
                              "[[node f (op: _FusedConv2DBackpropFilterWithArgmax)]]");
  assert_null(run_op("_FusedConv2DBackpropFilterWithArgmax", set_filter_argmax, &st, 3,
                     (rt_tensor *[]){rand_tensor(RT_FLOAT, 4, D(1, 6, 6, 1)),
                                     rt_tensor_new(RT_UINT8, &ws16),
                                     rand_tensor(RT_FLOAT, 4, D(1, 2, 2, 16))}));
  assert_string_equal(st.msg, "_FusedConv2DBackpropFilterWithArgmax: Size of out_backprop doesn't "
                              "match computed: actual = 4, computed = 6 spatial_dim: 1 input: 6 "
                              "filter: 3 output: 4 stride: 1 dilation: 1\n\t "
                              "[[node f (op: _FusedConv2DBackpropFilterWithArgmax)]]");
}

/* The state slot keeps the column buffer: a second run in one executor gives the same. */
static void test_conv_reuse(void **s) {
  cur = (cfg){.sh = 1, .sw = 1, .padding = "SAME"};
  rt_graph *g = rt_graph_new();
  add_const(g, "x", rand_tensor(RT_FLOAT, 4, D(2, 6, 6, 3)));
  add_const(g, "w", rand_tensor(RT_FLOAT, 4, D(3, 3, 3, 4)));
  rt_node *n = rt_node_new("f", "Conv2D");
  rt_node_add_input(n, "x");
  rt_node_add_input(n, "w");
  set_window(n);
  rt_status st = {0};
  rt_graph_add(g, n, &st);
  check_ok(&st);
  rt_device *dev = rt_device_new("/job:localhost/replica:0/task:0/device:CPU:0", RT_DEV_CPU, 1);
  rt_exec *ex = NULL;
  assert_int_equal(rt_exec_new(g, dev, &ex, &st), 0);
  rt_tensor *r[2] = {0};
  const char *fetch = "f";
  for (int i = 0; i < 2; i++) {
    rt_tensor *out = NULL;
    rt_run_args a = {.n_fetches = 1, .fetch_names = &fetch, .fetched = &out};
    rt_step step = {0};
    assert_int_equal(rt_exec_run(ex, &step, &a, &st), 0);
    r[i] = rt_tensor_copy(out);
    rt_tensor_unref(out);
  }
  assert_memory_equal(rt_tensor_data(r[0]), rt_tensor_data(r[1]), rt_tensor_nbytes(r[0]));
  rt_tensor_unref(r[0]), rt_tensor_unref(r[1]);
  rt_exec_free(ex);
  rt_device_free(dev);
  rt_graph_free(g);
}

/* ---- gradients: L = sum(w * f(x[, y])) by rt_gradients against central differences ---- */

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

static void check_grad(const char *op, const int64_t *xs, const int64_t *ys) {
  rt_graph *g = rt_graph_new();
  rt_status st = {0};
  int nf = ys ? 2 : 1;
  add_placeholder(g, "x", RT_DOUBLE, 4, xs);
  if (ys) add_placeholder(g, "y", RT_DOUBLE, 4, ys);
  rt_node *n = rt_node_new("f", op);
  rt_node_add_input(n, "x");
  if (ys) rt_node_add_input(n, "y");
  set_window(n);
  rt_graph_add(g, n, &st);
  check_ok(&st);
  rt_tensor *fv[2] = {rand_tensor(RT_DOUBLE, 4, xs), ys ? rand_tensor(RT_DOUBLE, 4, ys) : NULL};
  const char *feeds[] = {"x", "y"};
  rt_tensor *fx = eval(g, "f", nf, feeds, fv, &st);
  check_ok(&st);
  int64_t nfx = rt_tensor_numel(fx);
  double *w = malloc(sizeof *w * (size_t)nfx);
  for (int64_t i = 0; i < nfx; i++) w[i] = 0.3 + 0.17 * (double)(i % 11);
  rt_tensor *wt = rt_tensor_new(RT_DOUBLE, &fx->shape);
  memcpy(rt_tensor_data(wt), w, sizeof *w * (size_t)nfx);
  add_const(g, "w", wt);
  const char *yn[] = {"f"}, *gys[] = {"w"};
  char *dxn[2] = {0};
  if (rt_gradients(g, 1, yn, gys, nf, feeds, "gradients/", dxn, &st))
    print_error("%s grad: %s\n", op, st.msg);
  check_ok(&st);
  for (int v = 0; v < nf; v++) {
    assert_non_null(dxn[v]);
    rt_tensor *an = eval(g, dxn[v], nf, feeds, fv, &st);
    check_ok(&st);
    double *pv = rt_tensor_data(fv[v]);
    assert_int_equal(rt_tensor_numel(an), rt_tensor_numel(fv[v]));
    for (int64_t i = 0; i < rt_tensor_numel(fv[v]); i++) {
      double keep = pv[i], h = 1e-6;
      pv[i] = keep + h;
      double lp = loss(g, nf, feeds, fv, w);
      pv[i] = keep - h;
      double lm = loss(g, nf, feeds, fv, w);
      pv[i] = keep;
      double num = (lp - lm) / (2 * h), got = rt_tensor_get_f64(an, i);
      if (fabs(num - got) > 1e-6 * (1 + fabs(num)))
        print_error("%s d%s[%lld]: analytic %.9g numeric %.9g\n", op, feeds[v], (long long)i, got, num);
      assert_true(fabs(num - got) <= 1e-6 * (1 + fabs(num)));
    }
    rt_tensor_unref(an);
    free(dxn[v]);
  }
  free(w);
  rt_tensor_unref(fx), rt_tensor_unref(fv[0]), rt_tensor_unref(fv[1]);
  rt_graph_free(g);
}

static void test_conv_pool_grads(void **s) {
  cur = (cfg){.sh = 2, .sw = 1, .kh = 2, .kw = 3, .padding = "SAME"};
  check_grad("Conv2D", D(2, 5, 4, 2), D(3, 2, 2, 3));
  check_grad("MaxPool", D(1, 5, 4, 2), NULL);
  check_grad("AvgPool", D(1, 5, 4, 2), NULL);
  cur = (cfg){.sh = 1, .sw = 2, .kh = 3, .kw = 2, .padding = "VALID"};
  check_grad("Conv2D", D(1, 5, 6, 2), D(2, 3, 2, 2));
  check_grad("MaxPool", D(2, 5, 6, 1), NULL);
  check_grad("AvgPool", D(2, 5, 6, 1), NULL);
  cur = (cfg){.sh = 1, .sw = 1, .padding = "SAME"};
  check_grad("Conv2D", D(1, 5, 6, 2), D(3, 2, 2, 4));   /* stride 1, oc >= 2 ic: col2im */
}

/* ---- random ------------------------------------------------------------------------ */

static void test_philox(void **s) {
  /* Random123's known answers for philox4x32-10 */
  op_philox p = {{0, 0}, {0, 0, 0, 0}};
  uint32_t out[4];
  op_philox_block(&p, 0, out);
  assert_int_equal(out[0], 0x6627e8d5u);
  assert_int_equal(out[1], 0xe169c58du);
  assert_int_equal(out[2], 0xbc57ac4cu);
  assert_int_equal(out[3], 0x9b00dbd8u);
  p = (op_philox){{0xa4093822u, 0x299f31d0u}, {0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}};
  op_philox_block(&p, 0, out);
  assert_int_equal(out[0], 0xd16cfe09u);
  assert_int_equal(out[1], 0x94fdccebu);
  assert_int_equal(out[2], 0x5001e420u);
  assert_int_equal(out[3], 0x24126ea1u);
  /* skipping carries across the 128-bit counter */
  p = (op_philox){{1, 2}, {0xffffffffu, 0xffffffffu, 0, 0}};
  op_philox q = {{1, 2}, {0, 0, 1, 0}};
  uint32_t a[4], b[4];
  op_philox_block(&p, 1, a);
  op_philox_block(&q, 0, b);
  assert_memory_equal(a, b, sizeof a);
  /* many blocks at once (16 lanes on AVX-512, then the rest), one by one's words, also
   * where the counter carries inside a batch */
  op_philox r = {{0x12345678u, 0x9abcdef0u}, {0xfffffff0u, 0xffffffffu, 0xffffffffu, 7}};
  for (int64_t n = 0; n <= 40; n++) {
    uint32_t many[4 * 40 + 4], one[4];
    many[4 * n] = 0xdeadbeefu;   /* nothing written past n blocks */
    op_philox_blocks(&r, 3, n, many);
    for (int64_t i = 0; i < n; i++) {
      op_philox_block(&r, 3 + (uint64_t)i, one);
      assert_memory_equal(many + 4 * i, one, sizeof one);
    }
    assert_int_equal(many[4 * n], 0xdeadbeefu);
  }
}

typedef struct rnd_graph {
  rt_graph *g;
  rt_device *dev;
} rnd_graph;

static void set_seeds(rt_node *n, int64_t seed, int64_t seed2) {
  rt_node_set_int(n, "seed", seed);
  rt_node_set_int(n, "seed2", seed2);
}

/* A graph with node "r" = op(shape) (dtype t; RandomUniformInt gets minval, maxval). */
static rt_graph *random_graph(const char *op, rt_dtype t, int nd, const int64_t *shape,
                              int64_t seed, int64_t seed2) {
  rt_graph *g = rt_graph_new();
  add_const(g, "shape", ints(nd, shape));
  rt_node *n = rt_node_new("r", op);
  rt_node_add_input(n, "shape");
  if (!strcmp(op, "RandomUniformInt")) {
    add_const(g, "lo", t == RT_INT32 ? rt_tensor_scalar_i32(-3) : rt_tensor_scalar_i64(-3));
    add_const(g, "hi", t == RT_INT32 ? rt_tensor_scalar_i32(7) : rt_tensor_scalar_i64(7));
    rt_node_add_input(n, "lo");
    rt_node_add_input(n, "hi");
  } else {
    rt_node_set_type(n, "dtype", t);
  }
  set_seeds(n, seed, seed2);
  rt_status st = {0};
  rt_graph_add(g, n, &st);
  check_ok(&st);
  return g;
}

/* Runs node "r" of g `runs` times in one executor; copies of the results. */
static void run_n(rt_graph *g, int runs, rt_tensor **out) {
  rt_device *dev = rt_device_new("/job:localhost/replica:0/task:0/device:CPU:0", RT_DEV_CPU, 1);
  rt_exec *ex = NULL;
  rt_status st = {0};
  assert_int_equal(rt_exec_new(g, dev, &ex, &st), 0);
  const char *fetch = "r";
  for (int i = 0; i < runs; i++) {
    rt_tensor *o = NULL;
    rt_run_args a = {.n_fetches = 1, .fetch_names = &fetch, .fetched = &o};
    rt_step step = {0};
    if (rt_exec_run(ex, &step, &a, &st)) print_error("%s\n", st.msg);
    check_ok(&st);
    out[i] = rt_tensor_copy(o);
    rt_tensor_unref(o);
  }
  rt_exec_free(ex);
  rt_device_free(dev);
}

static bool same_values(const rt_tensor *a, const rt_tensor *b) {
  return rt_tensor_nbytes(a) == rt_tensor_nbytes(b) &&
         !memcmp(rt_tensor_data(a), rt_tensor_data(b), rt_tensor_nbytes(a));
}

static void test_random_reproducible(void **s) {
  static const char *ops[] = {"RandomStandardNormal", "TruncatedNormal", "RandomUniform",
                              "RandomUniformInt"};
  static const rt_dtype types[] = {RT_FLOAT, RT_DOUBLE};
  for (int o = 0; o < 4; o++)
    for (int k = 0; k < 2; k++) {
      rt_dtype t = o == 3 ? (k ? RT_INT64 : RT_INT32) : types[k];
      rt_graph *g = random_graph(ops[o], t, 2, D(3, 7), 42, 7);
      rt_tensor *a[2], *b[2], *c[1];
      run_n(g, 2, a);   /* a session */
      run_n(g, 2, b);   /* a fresh one restarts the sequence */
      assert_int_equal(a[0]->dtype, t);
      assert_true(rt_shape_equal(&a[0]->shape, &(rt_shape){2, {3, 7}}));
      assert_true(same_values(a[0], b[0]));
      assert_true(same_values(a[1], b[1]));
      assert_false(same_values(a[0], a[1]));
      rt_graph_free(g);
      g = random_graph(ops[o], t, 2, D(3, 7), 42, 8);   /* another op seed */
      run_n(g, 1, c);
      assert_false(same_values(a[0], c[0]));
      rt_tensor_unref(c[0]);
      rt_graph_free(g);
      g = random_graph(ops[o], t, 2, D(3, 7), 0, 0);    /* no seeds: differs per session */
      run_n(g, 1, c);
      assert_false(same_values(a[0], c[0]));
      rt_tensor_unref(c[0]);
      rt_graph_free(g);
      for (int i = 0; i < 2; i++) rt_tensor_unref(a[i]), rt_tensor_unref(b[i]);
    }
}

static void moments(const rt_tensor *t, double *mean, double *sd, double *lo, double *hi) {
  int64_t n = rt_tensor_numel(t);
  double s = 0, s2 = 0;
  *lo = INFINITY, *hi = -INFINITY;
  for (int64_t i = 0; i < n; i++) {
    double v = rt_tensor_get_f64(t, i);
    s += v, s2 += v * v;
    *lo = v < *lo ? v : *lo, *hi = v > *hi ? v : *hi;
  }
  *mean = s / (double)n;
  *sd = sqrt(s2 / (double)n - *mean * *mean);
}

static void test_random_distributions(void **s) {
  rt_tensor *r[1];
  double mean, sd, lo, hi;
  for (int k = 0; k < 2; k++) {
    rt_dtype t = k ? RT_DOUBLE : RT_FLOAT;
    rt_graph *g = random_graph("RandomStandardNormal", t, 1, D(10001), 1, 2);   /* odd count */
    run_n(g, 1, r);
    moments(r[0], &mean, &sd, &lo, &hi);
    assert_true(fabs(mean) < 0.04 && fabs(sd - 1) < 0.03);
    assert_true(lo < -3 && hi > 3);
    rt_tensor_unref(r[0]);
    rt_graph_free(g);
    /* truncated: within 2; sd of N(0,1) truncated to +-2 is 0.8796 */
    g = random_graph("TruncatedNormal", t, 1, D(10000), 3, 4);
    run_n(g, 1, r);
    moments(r[0], &mean, &sd, &lo, &hi);
    assert_true(lo > -2 && hi < 2);
    assert_true(fabs(mean) < 0.04 && fabs(sd - 0.8796) < 0.03);
    rt_tensor_unref(r[0]);
    rt_graph_free(g);
    g = random_graph("RandomUniform", t, 1, D(10000), 5, 6);
    run_n(g, 1, r);
    moments(r[0], &mean, &sd, &lo, &hi);
    assert_true(lo >= 0 && hi < 1 && fabs(mean - 0.5) < 0.02 && fabs(sd - sqrt(1 / 12.0)) < 0.02);
    rt_tensor_unref(r[0]);
    rt_graph_free(g);
    g = random_graph("RandomUniformInt", k ? RT_INT64 : RT_INT32, 1, D(10000), 5, 6);
    run_n(g, 1, r);
    moments(r[0], &mean, &sd, &lo, &hi);
    assert_true(lo == -3 && hi == 6 && fabs(mean - 1.5) < 0.1);
    rt_tensor_unref(r[0]);
    rt_graph_free(g);
  }
}

static void test_random_shuffle(void **s) {
  rt_graph *g = rt_graph_new();
  rt_shape sh = rt_shape_make(2, D(50, 2));
  rt_tensor *v = rt_tensor_new(RT_INT32, &sh);
  for (int i = 0; i < 100; i++) ((int32_t *)rt_tensor_data(v))[i] = i;
  add_const(g, "v", v);
  rt_node *n = rt_node_new("r", "RandomShuffle");
  rt_node_add_input(n, "v");
  set_seeds(n, 9, 10);
  rt_status st = {0};
  rt_graph_add(g, n, &st);
  check_ok(&st);
  rt_tensor *a[2], *b[2];
  run_n(g, 2, a);
  run_n(g, 2, b);
  assert_true(same_values(a[0], b[0]) && same_values(a[1], b[1]));
  assert_false(same_values(a[0], a[1]));
  for (int k = 0; k < 2; k++) {   /* rows kept whole, each exactly once */
    bool seen[50] = {0};
    const int32_t *d = rt_tensor_data(a[k]);
    for (int i = 0; i < 50; i++) {
      assert_int_equal(d[2 * i] % 2, 0);
      assert_int_equal(d[2 * i + 1], d[2 * i] + 1);
      assert_false(seen[d[2 * i] / 2]);
      seen[d[2 * i] / 2] = true;
    }
  }
  for (int i = 0; i < 2; i++) rt_tensor_unref(a[i]), rt_tensor_unref(b[i]);
  rt_graph_free(g);
  /* strings are copied element by element */
  static const char *words[] = {"a", "bb", "ccc", "dddd", "eeeee"};
  rt_shape ws = rt_shape_make(1, D(5));
  rt_tensor *w = rt_tensor_new(RT_STRING, &ws);
  for (int i = 0; i < 5; i++) rt_tensor_set_str(w, i, words[i], strlen(words[i]));
  rt_tensor *r = run_op("RandomShuffle", NULL, &st, 1, &w);
  check_ok(&st);
  int seen = 0;
  for (int i = 0; i < 5; i++) {
    const rt_str *e = (const rt_str *)rt_tensor_data(r) + i;
    assert_int_equal(e->len, strlen(e->ptr));
    seen |= 1 << (e->len - 1);
  }
  assert_int_equal(seen, 31);
  rt_tensor_unref(r);
}

static void test_random_errors(void **s) {
  rt_tensor *in[3] = {ints(1, D(3)), rt_tensor_scalar_i32(5), rt_tensor_scalar_i32(5)};
  assert_null(run_op("RandomUniformInt", NULL, &st, 3, in));
  assert_string_equal(st.msg, "Need minval < maxval: 5 >= 5\n\t [[node f (op: RandomUniformInt)]]");
  rt_graph *g = rt_graph_new();
  add_const(g, "shape", ints(2, D(2, -2)));
  rt_node *n = rt_node_new("r", "RandomUniform");
  rt_node_add_input(n, "shape");
  rt_node_set_type(n, "dtype", RT_FLOAT);
  st = (rt_status){0};
  assert_int_not_equal(rt_graph_add(g, n, &st), 0);
  assert_string_equal(st.msg, "Invalid value in tensor used for shape: -2 for 'r' (op: "
                              "'RandomUniform') with input shapes: [2] and with computed input "
                              "tensors: input[0] = <2 -2>.");
  rt_graph_free(g);
  /* a kernel called directly (no state slot) starts from the seeds every time */
  g = random_graph("RandomUniform", RT_FLOAT, 1, D(5), 1, 1);
  rt_node *r = NULL;
  for (int i = 0; i < g->n_nodes; i++)
    if (!strcmp(g->nodes[i]->name, "r")) r = g->nodes[i];
  rt_tensor *shape = ints(1, D(5)), *outs[2] = {0};
  for (int i = 0; i < 2; i++) {
    rt_status ks = {0};
    rt_kernel_ctx c = {.node = r, .n_inputs = 1, .inputs = &shape, .n_outputs = 1,
                       .outputs = &outs[i], .st = &ks};
    assert_int_equal(op_cpu_random_uniform(&c), 0);
  }
  assert_true(same_values(outs[0], outs[1]));
  rt_tensor_unref(outs[0]), rt_tensor_unref(outs[1]), rt_tensor_unref(shape);
  rt_graph_free(g);
}

static void test_adam_registered(void **s) {
  const rt_op_sig *sig = rt_op_find("ApplyAdam");
  assert_non_null(sig);
  assert_int_equal(sig->n_in, 10);
}

static int setup(void **s) {
  op_register_all();
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_window_dim),          cmocka_unit_test(test_conv_shapes),
    cmocka_unit_test(test_conv_kernel_errors),  cmocka_unit_test(test_conv_values),
    cmocka_unit_test(test_pool_values),         cmocka_unit_test(test_conv_reuse),
    cmocka_unit_test(test_conv_pool_grads),     cmocka_unit_test(test_philox),
    cmocka_unit_test(test_random_reproducible), cmocka_unit_test(test_random_distributions),
    cmocka_unit_test(test_random_shuffle),      cmocka_unit_test(test_random_errors),
    cmocka_unit_test(test_adam_registered),     cmocka_unit_test(test_fused_conv),
    cmocka_unit_test(test_fused_pool_grad),     cmocka_unit_test(test_remap),
    cmocka_unit_test(test_remap_conv_pool),
    cmocka_unit_test(test_remap_pool_argmax),
    cmocka_unit_test(test_pool_argmax_errors),
    cmocka_unit_test(test_remap_filter_argmax),
    cmocka_unit_test(test_filter_direct),      cmocka_unit_test(test_direct_conv_avx512),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
