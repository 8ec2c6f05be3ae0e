/* Conv2D, its two backprops and pooling on a GPU through cuDNN (NHWC, float32). The cases
 * cuDNN's symmetric padding cannot express (TF's SAME with an odd total padding, as a
 * stride-2 3x3 convolution of an even input has) and every invalid attr run the CPU kernel
 * on host copies instead, so results and error messages are the CPU's. Filters are TF's
 * [height, width, in, out]: transposed to cuDNN's [out, height, width, in] and back.
 * Convolutions use FP32 arithmetic (CUDNN_FMA_MATH, no TF32), so they agree with the CPU.
 *
 * UNVERIFIED: compiled against cuDNN 9's legacy API; not yet run on a GPU. */
#include "ops/gpu/gpu_ops.h"

#if TFSH_HAVE_CUDA

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "ops/gpu/gk.h"
#include "ops/ops_int.h"
#include "runtime/device.h"

#if TFSH_HAVE_CUDNN
#include "runtime/gpu/dl.h"

/* cuDNN, loaded on first use (runtime/gpu/dl.h); geometry() says no without it. */
static const rt_cudnn *lib(void) { return rt_cudnn_lib(NULL, 0); }

/* ---- geometry: the cases cuDNN takes --------------------------------------------------- */

typedef struct conv_geom {
  int64_t n, ih, iw, ic, kh, kw, oc, sh, sw, oh, ow, ph, pw;
} conv_geom;

static const int64_t *ints(const rt_node *n, const char *name, int *count) {
  const rt_attr_value *v = rt_node_attr(n, name);
  *count = v && v->kind == RT_ATTR_LIST_INT ? v->list.n : 0;
  return *count ? v->list.v : NULL;
}

/* NHWC input x (n, ih, iw, ic) and a kh x kw window with strides from `strides`: true with
 * g filled when cuDNN can do it (valid attrs, symmetric padding). */
static bool geometry(const rt_node *node, const rt_shape *x, int64_t kh, int64_t kw, const char *strides,
                     conv_geom *g) {
  int ns, nd;
  const int64_t *s = ints(node, strides, &ns), *d = ints(node, "dilations", &nd);
  const char *pad = rt_node_string(node, "padding", "");
  bool same = !strcmp(pad, "SAME");
  if (!lib()) return false;   /* no cuDNN here: the CPU kernel */
  if (x->ndims != 4 || ns != 4 || s[0] != 1 || s[3] != 1 || s[1] < 1 || s[2] < 1 || (!same && strcmp(pad, "VALID")) ||
      strcmp(rt_node_string(node, "data_format", "NHWC"), "NHWC") || kh < 1 || kw < 1)
    return false;
  for (int i = 0; i < nd; i++)
    if (d[i] != 1) return false;
  memset(g, 0, sizeof *g);
  g->n = x->dims[0], g->ih = x->dims[1], g->iw = x->dims[2], g->ic = x->dims[3];
  g->kh = kh, g->kw = kw, g->sh = s[1], g->sw = s[2];
  int64_t pt, pl;
  if (!op_window_dim(g->ih, kh, g->sh, same, &g->oh, &pt) || !op_window_dim(g->iw, kw, g->sw, same, &g->ow, &pl))
    return false;
  int64_t th = same ? (g->oh - 1) * g->sh + kh - g->ih : 0, tw = same ? (g->ow - 1) * g->sw + kw - g->iw : 0;
  if (th < 0) th = 0;
  if (tw < 0) tw = 0;
  if (th - pt != pt || tw - pl != pl) return false;   /* asymmetric: the CPU kernel */
  g->ph = pt, g->pw = pl;
  for (const int64_t *v = &g->n; v <= &g->pw; v++)
    if (*v > 0x7fffffff) return false;
  return g->n > 0 && g->oh > 0 && g->ow > 0 && g->ic > 0;
}

/* ---- one cuDNN handle per device ----------------------------------------------------------- */

typedef struct dnn {
  cudnnHandle_t h;
  pthread_mutex_t mu;
} dnn;

static dnn dnns[16];
static pthread_mutex_t dnn_mu = PTHREAD_MUTEX_INITIALIZER;

static int dnn_error(gk *k, cudnnStatus_t s, const char *what) {
  return rt_kernel_error(k->c, RT_INTERNAL, "%s: %s failed: %s", rt_gpu_label(k->g), what, lib()->cudnnGetErrorString(s));
}

static dnn *dnn_get(gk *k) {
  int i = k->c->device->gpu_ordinal;
  if (i < 0 || i >= 16) {
    rt_kernel_error(k->c, RT_INTERNAL, "GPU ordinal %d out of range for cuDNN", i);
    return NULL;
  }
  pthread_mutex_lock(&dnn_mu);
  cudnnStatus_t s = CUDNN_STATUS_SUCCESS;
  if (!dnns[i].h) {
    if ((s = lib()->cudnnCreate(&dnns[i].h)) == CUDNN_STATUS_SUCCESS) {
      pthread_mutex_init(&dnns[i].mu, NULL);
      s = lib()->cudnnSetStream(dnns[i].h, k->stream);
    }
    if (s != CUDNN_STATUS_SUCCESS) dnns[i].h = NULL;
  }
  pthread_mutex_unlock(&dnn_mu);
  if (s != CUDNN_STATUS_SUCCESS) {
    dnn_error(k, s, "cudnnCreate");
    return NULL;
  }
  return &dnns[i];
}

/* Scratch device memory held until the kernel ends. */
static void *scratch(gk *k, size_t bytes) {
  int64_t n = (int64_t)(bytes / sizeof(float)) + 1;
  rt_shape s = rt_shape_make(1, &n);
  if (k->n_held == 16) {
    rt_kernel_error(k->c, RT_INTERNAL, "too many scratch buffers");
    return NULL;
  }
  rt_tensor *t = rt_gpu_tensor(k->g, RT_FLOAT, &s, k->c->st);
  if (!t) {
    rt_kernel_error(k->c, k->c->st->code, "%s", k->c->st->msg);
    return NULL;
  }
  k->held[k->n_held++] = t;
  return rt_tensor_data(t);
}

/* ---- convolutions ------------------------------------------------------------------------ */

enum { FWD, BWD_DATA, BWD_FILTER };
#define WORKSPACE_MAX ((size_t)1 << 30)

#define DNN(call, what)                                                  \
  do {                                                                   \
    cudnnStatus_t s_ = (call);                                           \
    if (s_ != CUDNN_STATUS_SUCCESS) {                                    \
      rc = dnn_error(k, s_, what);                                       \
      goto out;                                                          \
    }                                                                    \
  } while (0)

/* x: NHWC input, w: the filter in cuDNN's OHWI, y: NHWC output; which says what is computed
 * from what (y from x and w; x from y and w; w from x and y). */
static int conv(gk *k, int which, const conv_geom *g, float *x, float *w, float *y) {
  dnn *d = dnn_get(k);
  if (!d) return k->c->st->code;
  int rc = RT_OK;
  cudnnTensorDescriptor_t xd = NULL, yd = NULL;
  cudnnFilterDescriptor_t wd = NULL;
  cudnnConvolutionDescriptor_t cd = NULL;
  pthread_mutex_lock(&d->mu);
  DNN(lib()->cudnnCreateTensorDescriptor(&xd), "cudnnCreateTensorDescriptor");
  DNN(lib()->cudnnCreateTensorDescriptor(&yd), "cudnnCreateTensorDescriptor");
  DNN(lib()->cudnnCreateFilterDescriptor(&wd), "cudnnCreateFilterDescriptor");
  DNN(lib()->cudnnCreateConvolutionDescriptor(&cd), "cudnnCreateConvolutionDescriptor");
  DNN(lib()->cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, (int)g->n, (int)g->ic, (int)g->ih, (int)g->iw),
      "cudnnSetTensor4dDescriptor (input)");
  DNN(lib()->cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, (int)g->n, (int)g->oc, (int)g->oh, (int)g->ow),
      "cudnnSetTensor4dDescriptor (output)");
  DNN(lib()->cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC, (int)g->oc, (int)g->ic, (int)g->kh, (int)g->kw),
      "cudnnSetFilter4dDescriptor");
  DNN(lib()->cudnnSetConvolution2dDescriptor(cd, (int)g->ph, (int)g->pw, (int)g->sh, (int)g->sw, 1, 1, CUDNN_CROSS_CORRELATION,
                                      CUDNN_DATA_FLOAT),
      "cudnnSetConvolution2dDescriptor");
  DNN(lib()->cudnnSetConvolutionMathType(cd, CUDNN_FMA_MATH), "cudnnSetConvolutionMathType");
  int on, oc, oh, ow;
  DNN(lib()->cudnnGetConvolution2dForwardOutputDim(cd, xd, wd, &on, &oc, &oh, &ow), "cudnnGetConvolution2dForwardOutputDim");
  if (on != g->n || oc != g->oc || oh != g->oh || ow != g->ow) {
    rc = rt_kernel_error(k->c, RT_INTERNAL, "cuDNN's output shape [%d,%d,%d,%d] is not TF's [%lld,%lld,%lld,%lld]",
                         on, oh, ow, oc, (long long)g->n, (long long)g->oh, (long long)g->ow, (long long)g->oc);
    goto out;
  }
  const float one = 1, zero = 0;
  int got = 0, a = 0;
  size_t ws = 0;
  void *wsp = NULL;
/* The first algorithm cuDNN ranks that works within WORKSPACE_MAX, its workspace in wsp. */
#define CHOOSE(perf, what)                                                                         \
  for (a = 0; a < got && (perf[a].status != CUDNN_STATUS_SUCCESS || perf[a].memory > WORKSPACE_MAX); a++) \
    ;                                                                                              \
  if (a == got) {                                                                                  \
    rc = rt_kernel_error(k->c, RT_INTERNAL, "%s: cuDNN has no %s algorithm for this convolution",  \
                         rt_gpu_label(k->g), what);                                                \
    goto out;                                                                                      \
  }                                                                                                \
  ws = perf[a].memory;                                                                             \
  if (ws && !(wsp = scratch(k, ws))) {                                                             \
    rc = k->c->st->code;                                                                           \
    goto out;                                                                                      \
  }
  if (which == FWD) {
    cudnnConvolutionFwdAlgoPerf_t perf[8];
    DNN(lib()->cudnnGetConvolutionForwardAlgorithm_v7(d->h, xd, wd, cd, yd, 8, &got, perf), "cudnnGetConvolutionForwardAlgorithm_v7");
    CHOOSE(perf, "forward")
    DNN(lib()->cudnnConvolutionForward(d->h, &one, xd, x, wd, w, cd, perf[a].algo, wsp, ws, &zero, yd, y), "cudnnConvolutionForward");
  } else if (which == BWD_DATA) {
    cudnnConvolutionBwdDataAlgoPerf_t perf[8];
    DNN(lib()->cudnnGetConvolutionBackwardDataAlgorithm_v7(d->h, wd, yd, cd, xd, 8, &got, perf),
        "cudnnGetConvolutionBackwardDataAlgorithm_v7");
    CHOOSE(perf, "backward-data")
    DNN(lib()->cudnnConvolutionBackwardData(d->h, &one, wd, w, yd, y, cd, perf[a].algo, wsp, ws, &zero, xd, x),
        "cudnnConvolutionBackwardData");
  } else {
    cudnnConvolutionBwdFilterAlgoPerf_t perf[8];
    DNN(lib()->cudnnGetConvolutionBackwardFilterAlgorithm_v7(d->h, xd, yd, cd, wd, 8, &got, perf),
        "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
    CHOOSE(perf, "backward-filter")
    DNN(lib()->cudnnConvolutionBackwardFilter(d->h, &one, xd, x, yd, y, cd, perf[a].algo, wsp, ws, &zero, wd, w),
        "cudnnConvolutionBackwardFilter");
  }
#undef CHOOSE
out:
  pthread_mutex_unlock(&d->mu);
  if (cd) lib()->cudnnDestroyConvolutionDescriptor(cd);
  if (wd) lib()->cudnnDestroyFilterDescriptor(wd);
  if (yd) lib()->cudnnDestroyTensorDescriptor(yd);
  if (xd) lib()->cudnnDestroyTensorDescriptor(xd);
  return rc;
}

/* Is dy (a gradient of the output) of the output's shape, with ch channels? */
static bool dy_fits(const rt_shape *dy, const conv_geom *g, int64_t ch) {
  return dy->ndims == 4 && dy->dims[0] == g->n && dy->dims[1] == g->oh && dy->dims[2] == g->ow && dy->dims[3] == ch;
}

/* TF's filter [kh, kw, ic, oc] <-> cuDNN's [oc, kh, kw, ic]. */
static const int HWIO_TO_OHWI[4] = {3, 0, 1, 2}, OHWI_TO_HWIO[4] = {1, 2, 3, 0};

static float *filter_ohwi(gk *k, const float *hwio, const conv_geom *g) {
  float *w = scratch(k, (size_t)(g->kh * g->kw * g->ic * g->oc) * sizeof(float));
  if (!w) return NULL;
  int64_t dims[4] = {g->kh, g->kw, g->ic, g->oc};
  if (launched(k, tg_permute4_f32(k->stream, hwio, dims, HWIO_TO_OHWI, w), "filter transpose")) return NULL;
  return w;
}

/* A 1-D int32 input of 4 values (input_sizes, filter_sizes) from the host. */
static bool sizes4(gk *k, int i, int64_t *v) {
  const rt_tensor *t = hin(k, i);
  if (!t || rt_tensor_numel(t) != 4) return false;
  for (int j = 0; j < 4; j++) v[j] = rt_tensor_get_i64(t, j);
  return true;
}

int op_gpu_conv2d(rt_kernel_ctx *c) {
  const rt_shape *xs = &c->inputs[0]->shape, *fs = &c->inputs[1]->shape;
  conv_geom g;
  if (c->inputs[0]->dtype != RT_FLOAT || fs->ndims != 4 || !geometry(c->node, xs, fs->dims[0], fs->dims[1], "strides", &g) ||
      fs->dims[2] != g.ic)
    return cpu_kernel(c, false, true);
  g.oc = fs->dims[3];
  gk k;
  int rc = gk_begin(&k, c);
  if (rc) return rc;
  rt_shape ys = rt_shape_make(4, (int64_t[]){g.n, g.oh, g.ow, g.oc});
  float *x = gin(&k, 0), *f = x ? gin(&k, 1) : NULL, *w = f ? filter_ohwi(&k, f, &g) : NULL;
  float *y = w ? gout(&k, 0, RT_FLOAT, &ys) : NULL;
  if (!y) return gk_end(&k, c->st->code);
  if (g.oc == 0) return gk_end(&k, RT_OK);
  return gk_end(&k, conv(&k, FWD, &g, x, w, y));
}

int op_gpu_conv2d_backprop_input(rt_kernel_ctx *c) {
  gk k;
  int rc = gk_begin(&k, c);
  if (rc) return rc;
  int64_t in[4];
  const rt_shape *fs = &c->inputs[1]->shape, *dys = &c->inputs[2]->shape;
  rt_shape xs;
  conv_geom g;
  bool ok = sizes4(&k, 0, in) && c->inputs[2]->dtype == RT_FLOAT && fs->ndims == 4;
  if (ok) {
    xs = rt_shape_make(4, in);
    ok = geometry(c->node, &xs, fs->dims[0], fs->dims[1], "strides", &g) && fs->dims[2] == g.ic &&
         dy_fits(dys, &g, fs->dims[3]);
  }
  if (!ok) return gk_end(&k, cpu_kernel(c, false, true));
  g.oc = fs->dims[3];
  float *f = gin(&k, 1), *dy = f ? gin(&k, 2) : NULL, *w = dy ? filter_ohwi(&k, f, &g) : NULL;
  float *dx = w ? gout(&k, 0, RT_FLOAT, &xs) : NULL;
  if (!dx) return gk_end(&k, c->st->code);
  if (g.oc == 0) return gk_end(&k, launched(&k, (int)cudaMemsetAsync(dx, 0, rt_tensor_nbytes(c->outputs[0]), k.stream),
                                            "cudaMemsetAsync"));
  return gk_end(&k, conv(&k, BWD_DATA, &g, dx, w, dy));
}

int op_gpu_conv2d_backprop_filter(rt_kernel_ctx *c) {
  gk k;
  int rc = gk_begin(&k, c);
  if (rc) return rc;
  int64_t fsz[4];
  const rt_shape *xs = &c->inputs[0]->shape, *dys = &c->inputs[2]->shape;
  conv_geom g;
  bool ok = sizes4(&k, 1, fsz) && c->inputs[0]->dtype == RT_FLOAT &&
            geometry(c->node, xs, fsz[0], fsz[1], "strides", &g) && fsz[2] == g.ic && dy_fits(dys, &g, fsz[3]);
  if (!ok) return gk_end(&k, cpu_kernel(c, false, true));
  g.oc = fsz[3];
  rt_shape fs = rt_shape_make(4, fsz);
  float *x = gin(&k, 0), *dy = x ? gin(&k, 2) : NULL;
  float *w = dy ? scratch(&k, (size_t)(g.kh * g.kw * g.ic * g.oc) * sizeof(float)) : NULL;
  float *dw = w ? gout(&k, 0, RT_FLOAT, &fs) : NULL;
  if (!dw) return gk_end(&k, c->st->code);
  if (g.oc == 0) return gk_end(&k, RT_OK);
  if ((rc = conv(&k, BWD_FILTER, &g, x, w, dy))) return gk_end(&k, rc);
  int64_t dims[4] = {g.oc, g.kh, g.kw, g.ic};
  return gk_end(&k, launched(&k, tg_permute4_f32(k.stream, w, dims, OHWI_TO_HWIO, dw), "filter transpose"));
}

/* ---- pooling ------------------------------------------------------------------------------ */

/* fwd: y = pool(x); else dx from (y, dy, x). Geometry from ksize/strides on x's shape. */
static int pool(gk *k, bool max, bool fwd, const conv_geom *g, const float *x, const float *y, const float *dy,
                float *out) {
  dnn *d = dnn_get(k);
  if (!d) return k->c->st->code;
  int rc = RT_OK;
  cudnnTensorDescriptor_t xd = NULL, yd = NULL;
  cudnnPoolingDescriptor_t pd = NULL;
  pthread_mutex_lock(&d->mu);
  DNN(lib()->cudnnCreateTensorDescriptor(&xd), "cudnnCreateTensorDescriptor");
  DNN(lib()->cudnnCreateTensorDescriptor(&yd), "cudnnCreateTensorDescriptor");
  DNN(lib()->cudnnCreatePoolingDescriptor(&pd), "cudnnCreatePoolingDescriptor");
  DNN(lib()->cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, (int)g->n, (int)g->ic, (int)g->ih, (int)g->iw),
      "cudnnSetTensor4dDescriptor (input)");
  DNN(lib()->cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, (int)g->n, (int)g->ic, (int)g->oh, (int)g->ow),
      "cudnnSetTensor4dDescriptor (output)");
  DNN(lib()->cudnnSetPooling2dDescriptor(pd, max ? CUDNN_POOLING_MAX : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING,
                                  CUDNN_PROPAGATE_NAN, (int)g->kh, (int)g->kw, (int)g->ph, (int)g->pw, (int)g->sh,
                                  (int)g->sw),
      "cudnnSetPooling2dDescriptor");
  const float one = 1, zero = 0;
  if (fwd)
    DNN(lib()->cudnnPoolingForward(d->h, pd, &one, xd, x, &zero, yd, out), "cudnnPoolingForward");
  else   /* average pooling reads neither x nor y: dy and out stand in for them */
    DNN(lib()->cudnnPoolingBackward(d->h, pd, &one, yd, y ? y : dy, yd, dy, xd, x ? x : out, &zero, xd, out),
        "cudnnPoolingBackward");
out:
  pthread_mutex_unlock(&d->mu);
  if (pd) lib()->cudnnDestroyPoolingDescriptor(pd);
  if (yd) lib()->cudnnDestroyTensorDescriptor(yd);
  if (xd) lib()->cudnnDestroyTensorDescriptor(xd);
  return rc;
}

static bool pool_geometry(const rt_node *node, const rt_shape *x, conv_geom *g) {
  int nk;
  const int64_t *ks = ints(node, "ksize", &nk);
  if (nk != 4 || ks[0] != 1 || ks[3] != 1 || !geometry(node, x, ks[1], ks[2], "strides", g)) return false;
  return g->ph < g->kh && g->pw < g->kw;   /* cuDNN wants the padding inside the window */
}

int op_gpu_max_pool(rt_kernel_ctx *c) {
  conv_geom g;
  if (c->inputs[0]->dtype != RT_FLOAT || !pool_geometry(c->node, &c->inputs[0]->shape, &g)) return cpu_kernel(c, false, true);
  gk k;
  int rc = gk_begin(&k, c);
  if (rc) return rc;
  rt_shape ys = rt_shape_make(4, (int64_t[]){g.n, g.oh, g.ow, g.ic});
  float *x = gin(&k, 0), *y = x ? gout(&k, 0, RT_FLOAT, &ys) : NULL;
  if (!y) return gk_end(&k, c->st->code);
  return gk_end(&k, pool(&k, true, true, &g, x, NULL, NULL, y));
}

int op_gpu_avg_pool(rt_kernel_ctx *c) {
  conv_geom g;
  if (c->inputs[0]->dtype != RT_FLOAT || !pool_geometry(c->node, &c->inputs[0]->shape, &g)) return cpu_kernel(c, false, true);
  gk k;
  int rc = gk_begin(&k, c);
  if (rc) return rc;
  rt_shape ys = rt_shape_make(4, (int64_t[]){g.n, g.oh, g.ow, g.ic});
  float *x = gin(&k, 0), *y = x ? gout(&k, 0, RT_FLOAT, &ys) : NULL;
  if (!y) return gk_end(&k, c->st->code);
  return gk_end(&k, pool(&k, false, true, &g, x, NULL, NULL, y));
}

int op_gpu_max_pool_grad(rt_kernel_ctx *c) {   /* orig_input, orig_output, grad */
  conv_geom g;
  const rt_shape *xs = &c->inputs[0]->shape;
  if (c->inputs[0]->dtype != RT_FLOAT || !pool_geometry(c->node, xs, &g) || !dy_fits(&c->inputs[1]->shape, &g, g.ic) ||
      !dy_fits(&c->inputs[2]->shape, &g, g.ic))
    return cpu_kernel(c, false, true);
  gk k;
  int rc = gk_begin(&k, c);
  if (rc) return rc;
  float *x = gin(&k, 0), *y = x ? gin(&k, 1) : NULL, *dy = y ? gin(&k, 2) : NULL;
  float *dx = dy ? gout(&k, 0, RT_FLOAT, xs) : NULL;
  if (!dx) return gk_end(&k, c->st->code);
  return gk_end(&k, pool(&k, true, false, &g, x, y, dy, dx));
}

int op_gpu_avg_pool_grad(rt_kernel_ctx *c) {   /* orig_input_shape, grad */
  gk k;
  int rc = gk_begin(&k, c);
  if (rc) return rc;
  int64_t in[4];
  conv_geom g;
  rt_shape xs;
  bool ok = sizes4(&k, 0, in) && c->inputs[1]->dtype == RT_FLOAT;
  if (ok) {
    xs = rt_shape_make(4, in);
    ok = pool_geometry(c->node, &xs, &g) && dy_fits(&c->inputs[1]->shape, &g, g.ic);
  }
  if (!ok) return gk_end(&k, cpu_kernel(c, false, true));
  float *dy = gin(&k, 1), *dx = dy ? gout(&k, 0, RT_FLOAT, &xs) : NULL;
  if (!dx) return gk_end(&k, c->st->code);
  return gk_end(&k, pool(&k, false, false, &g, NULL, NULL, dy, dx));
}

#else   /* CUDA without cuDNN: the CPU kernels on host copies */

int op_gpu_conv2d(rt_kernel_ctx *c) { return cpu_kernel(c, false, true); }
int op_gpu_conv2d_backprop_input(rt_kernel_ctx *c) { return cpu_kernel(c, false, true); }
int op_gpu_conv2d_backprop_filter(rt_kernel_ctx *c) { return cpu_kernel(c, false, true); }
int op_gpu_max_pool(rt_kernel_ctx *c) { return cpu_kernel(c, false, true); }
int op_gpu_avg_pool(rt_kernel_ctx *c) { return cpu_kernel(c, false, true); }
int op_gpu_max_pool_grad(rt_kernel_ctx *c) { return cpu_kernel(c, false, true); }
int op_gpu_avg_pool_grad(rt_kernel_ctx *c) { return cpu_kernel(c, false, true); }

#endif
#endif
