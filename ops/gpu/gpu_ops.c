/* GPU kernels: the C side of each op on a GPU. Checks shapes and dtypes as the CPU kernels
 * do (same words), brings inputs to the device when they arrive in host memory, allocates
 * outputs from the device's caching allocator and enqueues the CUDA kernels of
 * ops/cuda/kernels.cu (or cuBLAS) on the device's stream: nothing here waits for the GPU.
 * int32/int64 tensors that describe shapes and axes stay in host memory, as TF1 keeps
 * them (HostMemory); Const of those dtypes stays on the host too.
 *
 * UNVERIFIED: compiled against CUDA 13; not yet run on a GPU. */
#include "ops/gpu/gpu_ops.h"

#if TFSH_HAVE_CUDA

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/cuda/kernels.h"
#include "ops/gpu/gk.h"
#include "ops/ops_int.h"
#include "runtime/device.h"
#include "runtime/gpu/dl.h"
#include "runtime/gpu/gpu.h"

/* ---- the context of one GPU kernel -------------------------------------------------- */

int gk_begin(gk *k, rt_kernel_ctx *c) {
  memset(k, 0, sizeof *k);
  k->c = c;
  if (!c->device || c->device->type != RT_DEV_GPU)
    return rt_kernel_error(c, RT_INTERNAL, "a GPU kernel ran on a device that is not a GPU");
  int rc = rt_gpu_open(c->device->gpu_ordinal, &k->g, c->st);
  if (rc) return rt_kernel_error(c, rc, "%s", c->st->msg);
  if (cudaSetDevice(c->device->gpu_ordinal) != cudaSuccess)
    return rt_kernel_error(c, RT_INTERNAL, "%s: cudaSetDevice failed", rt_gpu_label(k->g));
  k->stream = rt_gpu_stream(k->g);
  return RT_OK;
}

int gk_end(gk *k, int rc) {
  for (int i = 0; i < k->n_held; i++) rt_tensor_unref(k->held[i]);
  k->n_held = 0;
  return rc;
}

/* Input i in device memory (uploaded when it came in host memory). */
void *gin(gk *k, int i) {
  rt_tensor *t = k->c->inputs[i];
  if (t->buf && t->buf->dev == RT_DEV_GPU) return rt_tensor_data(t);
  if (k->n_held == 16) {
    rt_kernel_error(k->c, RT_INTERNAL, "too many host inputs");
    return NULL;
  }
  rt_tensor *d;
  if (rt_gpu_to_device(k->g, t, &d, k->c->st)) {
    rt_kernel_error(k->c, k->c->st->code, "input %d: %s", i, k->c->st->msg);
    return NULL;
  }
  k->held[k->n_held++] = d;
  return rt_tensor_data(d);
}

/* Input i in host memory (small ones: shapes, axes), waiting for its copy if needed. */
rt_tensor *hin(gk *k, int i) {
  rt_tensor *t = k->c->inputs[i];
  if (!t->buf || t->buf->dev != RT_DEV_GPU) return t;
  rt_tensor *h;
  if (k->n_held == 16 || rt_gpu_to_host(k->g, t, &h, k->c->st)) {
    rt_kernel_error(k->c, RT_INTERNAL, "input %d: cannot bring it to the host: %s", i, k->c->st->msg);
    return NULL;
  }
  k->held[k->n_held++] = h;
  return h;
}

/* A scalar operand read by the kernel itself (no copy, no wait). */
tg_scalar scalar_of(const rt_tensor *t) {
  tg_scalar s = {.dtype = t->dtype};
  if (t->buf && t->buf->dev == RT_DEV_GPU) s.dev = rt_tensor_data(t);
  else s.v = rt_tensor_get_f64(t, 0);
  return s;
}

void *gout(gk *k, int i, rt_dtype t, const rt_shape *s) {
  rt_tensor *y = rt_gpu_tensor(k->g, t, s, k->c->st);
  if (!y) {
    rt_kernel_error(k->c, k->c->st->code, "%s", k->c->st->msg);
    return NULL;
  }
  rt_tensor_unref(k->c->outputs[i]);
  k->c->outputs[i] = y;
  return rt_tensor_data(y);
}

int launched(gk *k, int err, const char *what) {
  if (err == 0) return RT_OK;
  cudaError_t e = (cudaError_t)err;
  return rt_kernel_error(k->c, RT_INTERNAL, "%s: %s launch failed: %s (%s)", rt_gpu_label(k->g), what,
                         cudaGetErrorString(e), cudaGetErrorName(e));
}

int need_f32(gk *k, rt_dtype t) {
  if (t == RT_FLOAT) return RT_OK;
  return rt_kernel_error(k->c, RT_UNIMPLEMENTED, "no GPU kernel for %s (GPU kernels take float32)",
                         rt_dtype_name(t));
}

/* ---- sources and pass-through ------------------------------------------------------- */

static void unref_state(void *p) { rt_tensor_unref(p); }

/* Const: float/double/bool values are uploaded once per node and kept in a device
 * resource (holding the host value too, so the key's pointer stays unique). */
int op_gpu_const(rt_kernel_ctx *c) {
  const rt_attr_value *v = rt_node_attr(c->node, "value");
  if (!v || v->kind != RT_ATTR_TENSOR) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Const has no tensor value");
  rt_dtype t = v->tensor->dtype;
  if (t == RT_INT32 || t == RT_INT64 || t == RT_STRING) return op_cpu_const(c);
  gk k;
  int rc = gk_begin(&k, c);
  if (rc) return rc;
  char key[96];
  snprintf(key, sizeof key, "%p", (void *)v->tensor);
  rt_resource *r = rt_device_resource(c->device, "_tfsh_gpu_const", key, true);
  if (!r) return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  pthread_mutex_lock(&r->mu);
  if (!r->value) {
    rt_tensor *d;
    rc = rt_gpu_to_device(k.g, v->tensor, &d, c->st);
    if (!rc) {
      r->value = d;
      r->state = rt_tensor_ref(v->tensor);
      r->state_free = unref_state;
    }
  }
  rt_tensor *out = rc ? NULL : rt_tensor_ref(r->value);
  pthread_mutex_unlock(&r->mu);
  if (rc) return rt_kernel_error(c, rc, "%s", c->st->msg);
  rt_tensor_unref(c->outputs[0]);
  c->outputs[0] = out;
  return RT_OK;
}

/* The op's CPU kernel on this GPU's context: its inputs in host memory (all of them, or
 * all but input 0 when keep0: kernels that never read input 0's bytes), and when upload,
 * its outputs copied to the device afterwards. */
int cpu_kernel(rt_kernel_ctx *c, bool keep0, bool upload) {
  rt_kernel_fn cpu = c->node->def ? c->node->def->kernel[RT_DEV_CPU] : NULL;
  if (!cpu) return rt_kernel_error(c, RT_INTERNAL, "no CPU kernel to share");
  if (c->n_inputs > 16) return rt_kernel_error(c, RT_INTERNAL, "too many inputs");
  gk k;
  int rc = gk_begin(&k, c);
  if (rc) return rc;
  rt_tensor *ins[16];
  for (int i = 0; i < c->n_inputs; i++)
    if (!(ins[i] = i == 0 && keep0 ? c->inputs[0] : hin(&k, i))) return gk_end(&k, c->st->code);
  rt_kernel_ctx h = *c;
  h.inputs = ins;
  h.reuse = NULL;
  if ((rc = cpu(&h)) || !upload) return gk_end(&k, rc);
  for (int i = 0; i < c->n_outputs; i++) {
    rt_tensor *d;
    if (rt_gpu_to_device(k.g, c->outputs[i], &d, c->st))
      return gk_end(&k, rt_kernel_error(c, c->st->code, "%s", c->st->msg));
    rt_tensor_unref(c->outputs[i]);
    c->outputs[i] = d;
  }
  return gk_end(&k, RT_OK);
}

/* Identity, Reshape, Shape, VariableV2, ...: the CPU kernel, data left where it is. */
int op_gpu_same(rt_kernel_ctx *c) { return cpu_kernel(c, true, false); }
/* Random ops: the CPU kernel (same Philox stream, same numbers) then one upload. */
int op_gpu_host_then_upload(rt_kernel_ctx *c) { return cpu_kernel(c, false, true); }

/* ---- elementwise -------------------------------------------------------------------- */

/* numpy broadcasting of a and b into bc (dims and each input's strides); false if they
 * do not broadcast. */
static bool broadcast(const rt_shape *a, const rt_shape *b, rt_shape *out, tg_bcast *bc) {
  int nd = a->ndims > b->ndims ? a->ndims : b->ndims;
  if (nd > TG_MAX_DIMS) return false;
  memset(bc, 0, sizeof *bc);
  bc->nd = nd;
  out->ndims = nd;
  int64_t sa = 1, sb = 1;
  for (int d = nd - 1; d >= 0; d--) {
    int da = d - (nd - a->ndims), db = d - (nd - b->ndims);
    int64_t xa = da >= 0 ? a->dims[da] : 1, xb = db >= 0 ? b->dims[db] : 1;
    if (xa != xb && xa != 1 && xb != 1) return false;
    int64_t x = xa == 1 ? xb : xa;
    out->dims[d] = x;
    bc->dims[d] = x > 0 ? x : 1;
    bc->sa[d] = xa == 1 ? 0 : sa;
    bc->sb[d] = xb == 1 ? 0 : sb;
    sa *= xa;
    sb *= xb;
  }
  return true;
}

static int binary(rt_kernel_ctx *c, int op) {
  gk k;
  int rc = gk_begin(&k, c);
  if (rc) return rc;
  const rt_tensor *a = c->inputs[0], *b = c->inputs[1];
  if ((rc = need_f32(&k, a->dtype)) || (rc = need_f32(&k, b->dtype))) return rc;
  rt_shape o;
  tg_bcast bc;
  if (!broadcast(&a->shape, &b->shape, &o, &bc)) {
    char sa[160], sb[160];
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Incompatible shapes: %s vs. %s",
                           op_shape_tf(&a->shape, sa, sizeof sa), op_shape_tf(&b->shape, sb, sizeof sb));
  }
  const float *ad = gin(&k, 0), *bd = ad ? gin(&k, 1) : NULL;
  void *y = bd ? gout(&k, 0, op >= TG_EQUAL ? RT_BOOL : RT_FLOAT, &o) : NULL;
  if (!y) return gk_end(&k, c->st->code);
  bool flat = rt_shape_equal(&a->shape, &b->shape);
  return gk_end(&k, launched(&k, tg_binary_f32(k.stream, op, ad, bd, y, rt_shape_numel(&o), flat ? NULL : &bc),
                             c->node->op));
}

static int unary(rt_kernel_ctx *c, int op) {
  gk k;
  int rc = gk_begin(&k, c);
  if (rc) return rc;
  const rt_tensor *x = c->inputs[0];
  if ((rc = need_f32(&k, x->dtype))) return rc;
  const float *xd = gin(&k, 0);
  float *y = xd ? gout(&k, 0, RT_FLOAT, &x->shape) : NULL;
  if (!y) return gk_end(&k, c->st->code);
  return gk_end(&k, launched(&k, tg_unary_f32(k.stream, op, xd, y, rt_tensor_numel(x)), c->node->op));
}

#define BINARY(name, code) \
  int op_gpu_##name(rt_kernel_ctx *c) { return binary(c, code); }
#define UNARY(name, code) \
  int op_gpu_##name(rt_kernel_ctx *c) { return unary(c, code); }
BINARY(add, TG_ADD)
BINARY(sub, TG_SUB)
BINARY(mul, TG_MUL)
BINARY(div, TG_DIV)
BINARY(maximum, TG_MAXIMUM)
BINARY(minimum, TG_MINIMUM)
BINARY(pow, TG_POW)
BINARY(relu_grad, TG_RELU_GRAD)
BINARY(sigmoid_grad, TG_SIGMOID_GRAD)
BINARY(tanh_grad, TG_TANH_GRAD)
BINARY(rsqrt_grad, TG_RSQRT_GRAD)
BINARY(elu_grad, TG_ELU_GRAD)
BINARY(softplus_grad, TG_SOFTPLUS_GRAD)
BINARY(equal, TG_EQUAL)
BINARY(not_equal, TG_NOT_EQUAL)
BINARY(greater, TG_GREATER)
BINARY(greater_equal, TG_GREATER_EQUAL)
BINARY(less, TG_LESS)
BINARY(less_equal, TG_LESS_EQUAL)
UNARY(neg, TG_NEG)
UNARY(square, TG_SQUARE)
UNARY(sqrt, TG_SQRT)
UNARY(exp, TG_EXP)
UNARY(log, TG_LOG)
UNARY(abs, TG_ABS)
UNARY(rsqrt, TG_RSQRT)
UNARY(sign, TG_SIGN)
UNARY(floor, TG_FLOOR)
UNARY(ceil, TG_CEIL)
UNARY(log1p, TG_LOG1P)
UNARY(relu, TG_RELU)
UNARY(sigmoid, TG_SIGMOID)
UNARY(tanh, TG_TANH)
UNARY(elu, TG_ELU)
UNARY(softplus, TG_SOFTPLUS)

int op_gpu_addn(rt_kernel_ctx *c) {
  gk k;
  int rc = gk_begin(&k, c);
  if (rc) return rc;
  const rt_tensor *x0 = c->inputs[0];
  if ((rc = need_f32(&k, x0->dtype))) return rc;
  for (int i = 1; i < c->n_inputs; i++)
    if (!rt_shape_equal(&c->inputs[i]->shape, &x0->shape)) {
      char a[160], b[160];
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Inputs to operation AddN must have the same size and shape.  "
                             "Input 0: %s != input %d: %s", op_shape_tf(&x0->shape, a, sizeof a), i,
                             op_shape_tf(&c->inputs[i]->shape, b, sizeof b));
    }
  int64_t n = rt_tensor_numel(x0);
  float *y = gout(&k, 0, RT_FLOAT, &x0->shape);
  const float *first = y ? gin(&k, 0) : NULL;
  if (!first) return gk_end(&k, c->st->code);
  if (c->n_inputs == 1) {
    cudaError_t e = cudaMemcpyAsync(y, first, (size_t)n * sizeof(float), cudaMemcpyDeviceToDevice, k.stream);
    return gk_end(&k, launched(&k, (int)e, "AddN copy"));
  }
  for (int i = 1; i < c->n_inputs && !rc; i++) {
    const float *xi = gin(&k, i);
    if (!xi) return gk_end(&k, c->st->code);
    rc = launched(&k, tg_binary_f32(k.stream, TG_ADD, i == 1 ? first : y, xi, y, n, NULL), "AddN");
  }
  return gk_end(&k, rc);
}

/* ---- MatMul and BatchMatMul: cuBLAS, row-major through the column-major transpose ------ */

static int blas_error(gk *k, cublasStatus_t s, const char *what) {
  return rt_kernel_error(k->c, RT_INTERNAL, "%s: %s failed: %s", rt_gpu_label(k->g), what,
                         rt_cublas_lib(NULL, 0)->cublasGetStatusString(s));
}

/* C (m x n, row-major) = op(A) op(B) for `batch` consecutive products: cuBLAS computes
 * C^T = op(B)^T op(A)^T in column-major terms, which is the same memory. */
static int gemm(gk *k, bool ta, bool tb, int64_t m, int64_t n, int64_t kk, const float *a, const float *b,
                float *y, int64_t batch) {
  if (m > 0x7fffffff || n > 0x7fffffff || kk > 0x7fffffff || batch > 0x7fffffff)
    return rt_kernel_error(k->c, RT_INVALID_ARGUMENT, "matrix too large for cuBLAS (a dimension is over 2^31-1)");
  if (m == 0 || n == 0) return RT_OK;
  if (kk == 0) {
    cudaError_t e = cudaMemsetAsync(y, 0, (size_t)(m * n * batch) * sizeof(float), k->stream);
    return launched(k, (int)e, "cudaMemsetAsync");
  }
  const float one = 1, zero = 0;
  cublasHandle_t h = rt_gpu_blas(k->g);
  const rt_cublas *B = rt_cublas_lib(NULL, 0);
  if (!h || !B)
    return rt_kernel_error(k->c, RT_UNAVAILABLE, "%s: no cuBLAS: %s", rt_gpu_label(k->g), rt_gpu_blas_why(k->g));
  cublasOperation_t opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  int lda = (int)(ta ? m : kk), ldb = (int)(tb ? kk : n);
  rt_gpu_blas_lock(k->g);
  cublasStatus_t s =
      batch == 1 ? B->cublasSgemm(h, opb, opa, (int)n, (int)m, (int)kk, &one, b, ldb, a, lda, &zero, y, (int)n)
                 : B->cublasSgemmStridedBatched(h, opb, opa, (int)n, (int)m, (int)kk, &one, b, ldb, kk * n, a, lda,
                                             m * kk, &zero, y, (int)n, m * n, (int)batch);
  rt_gpu_blas_unlock(k->g);
  return s == CUBLAS_STATUS_SUCCESS ? RT_OK : blas_error(k, s, batch == 1 ? "cublasSgemm" : "cublasSgemmStridedBatched");
}

int op_gpu_matmul(rt_kernel_ctx *c) {
  gk k;
  int rc = gk_begin(&k, c);
  if (rc) return rc;
  bool ta = rt_node_bool(c->node, "transpose_a", false), tb = rt_node_bool(c->node, "transpose_b", false);
  int64_t m, kk, n;
  if ((rc = need_f32(&k, c->inputs[0]->dtype)) || (rc = op_matmul_dims(c, ta, tb, &m, &kk, &n))) return rc;
  rt_shape s = rt_shape_make(2, (int64_t[]){m, n});
  const float *ad = gin(&k, 0), *bd = ad ? gin(&k, 1) : NULL;
  float *y = bd ? gout(&k, 0, RT_FLOAT, &s) : NULL;
  if (!y) return gk_end(&k, c->st->code);
  return gk_end(&k, gemm(&k, ta, tb, m, n, kk, ad, bd, y, 1));
}

int op_gpu_batch_matmul(rt_kernel_ctx *c) {
  gk k;
  int rc = gk_begin(&k, c);
  if (rc) return rc;
  const rt_tensor *a = c->inputs[0], *b = c->inputs[1];
  if ((rc = need_f32(&k, a->dtype))) return rc;
  bool ta = rt_node_bool(c->node, "adj_x", false), tb = rt_node_bool(c->node, "adj_y", false);
  int r = a->shape.ndims;
  bool ok = r >= 2 && b->shape.ndims == r;
  for (int d = 0; ok && d < r - 2; d++) ok = a->shape.dims[d] == b->shape.dims[d];
  int64_t m = ok ? a->shape.dims[r - 2 + ta] : 0, kk = ok ? a->shape.dims[r - 1 - ta] : 0;
  int64_t kb = ok ? b->shape.dims[r - 2 + tb] : 0, n = ok ? b->shape.dims[r - 1 - tb] : 0;
  if (!ok || kk != kb) {
    char sa[160], sb[160];
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "In[0] and In[1] must have compatible batch "
                           "dimensions and inner sizes: %s vs. %s",
                           op_shape_tf(&a->shape, sa, sizeof sa), op_shape_tf(&b->shape, sb, sizeof sb));
  }
  rt_shape s = a->shape;
  s.dims[r - 2] = m, s.dims[r - 1] = n;
  int64_t batch = 1;
  for (int d = 0; d < r - 2; d++) batch *= a->shape.dims[d];
  const float *ad = gin(&k, 0), *bd = ad ? gin(&k, 1) : NULL;
  float *y = bd ? gout(&k, 0, RT_FLOAT, &s) : NULL;
  if (!y) return gk_end(&k, c->st->code);
  if (batch == 0) return gk_end(&k, RT_OK);
  return gk_end(&k, gemm(&k, ta, tb, m, n, kk, ad, bd, y, batch));
}

/* ---- reductions ---------------------------------------------------------------------- */

/* The reduction of shape s over mask red, as kept/reduced dims with s's strides. */
static void plan_reduce(const rt_shape *s, const bool *red, tg_reduce *r) {
  memset(r, 0, sizeof *r);
  int64_t stride = 1, st[RT_MAX_DIMS];
  for (int d = s->ndims - 1; d >= 0; d--) {
    st[d] = stride;
    stride *= s->dims[d];
  }
  r->n_out = r->count = 1;
  for (int d = 0; d < s->ndims; d++) {
    if (red[d]) {
      r->rdims[r->nr] = s->dims[d];
      r->rstr[r->nr++] = st[d];
      r->count *= s->dims[d];
    } else {
      r->kdims[r->nk] = s->dims[d];
      r->kstr[r->nk++] = st[d];
      r->n_out *= s->dims[d];
    }
  }
  /* A zero-size dim: nothing to read (each output is the empty reduction). */
  for (int d = 0; d < r->nk; d++)
    if (r->kdims[d] == 0) r->kdims[d] = 1;
  for (int d = 0; d < r->nr; d++)
    if (r->rdims[d] == 0) r->rdims[d] = 1;
}

static int read_axes(gk *k, int i, int ndims, bool *red) {
  const rt_tensor *axes = hin(k, i);
  if (!axes) return k->c->st->code;
  memset(red, 0, RT_MAX_DIMS * sizeof *red);
  for (int64_t j = 0; j < rt_tensor_numel(axes); j++) {
    int64_t a = rt_tensor_get_i64(axes, j);
    if (a < -ndims || a >= ndims)
      return rt_kernel_error(k->c, RT_INVALID_ARGUMENT,
                             "Invalid reduction dimension (%lld for input with %d dimension(s)", (long long)a, ndims);
    red[a < 0 ? a + ndims : a] = true;
  }
  return RT_OK;
}

static int run_reduce(gk *k, int kind, int in, const bool *red, const rt_shape *out_shape) {
  const rt_tensor *x = k->c->inputs[in];
  tg_reduce r;
  plan_reduce(&x->shape, red, &r);
  if ((kind == TG_R_MAX || kind == TG_R_MIN) && r.count == 0 && rt_shape_numel(out_shape) > 0)
    return rt_kernel_error(k->c, RT_INVALID_ARGUMENT, "Reduction over an empty axis");
  const float *xd = gin(k, in);
  float *y = xd ? gout(k, 0, RT_FLOAT, out_shape) : NULL;
  if (!y) return k->c->st->code;
  if (rt_tensor_numel(x) == 0) r.count = 0;
  return launched(k, tg_reduce_f32(k->stream, kind, xd, y, &r), k->c->node->op);
}

static int reduce(rt_kernel_ctx *c, int kind) {
  gk k;
  int rc = gk_begin(&k, c);
  if (rc) return rc;
  const rt_tensor *x = c->inputs[0];
  if ((rc = need_f32(&k, x->dtype))) return rc;
  bool red[RT_MAX_DIMS];
  if ((rc = read_axes(&k, 1, x->shape.ndims, red))) return gk_end(&k, rc);
  bool keep = rt_node_bool(c->node, "keep_dims", false);
  rt_shape o = {.ndims = 0};
  for (int d = 0; d < x->shape.ndims; d++)
    if (!red[d]) o.dims[o.ndims++] = x->shape.dims[d];
    else if (keep) o.dims[o.ndims++] = 1;
  return gk_end(&k, run_reduce(&k, kind, 0, red, &o));
}

int op_gpu_sum(rt_kernel_ctx *c) { return reduce(c, TG_R_SUM); }
int op_gpu_mean(rt_kernel_ctx *c) { return reduce(c, TG_R_MEAN); }
int op_gpu_max(rt_kernel_ctx *c) { return reduce(c, TG_R_MAX); }
int op_gpu_min(rt_kernel_ctx *c) { return reduce(c, TG_R_MIN); }
int op_gpu_prod(rt_kernel_ctx *c) { return reduce(c, TG_R_PROD); }

int op_gpu_l2_loss(rt_kernel_ctx *c) {
  gk k;
  int rc = gk_begin(&k, c);
  if (rc) return rc;
  if ((rc = need_f32(&k, c->inputs[0]->dtype))) return rc;
  bool red[RT_MAX_DIMS];
  for (int d = 0; d < RT_MAX_DIMS; d++) red[d] = true;
  rt_shape s = rt_shape_scalar();
  return gk_end(&k, run_reduce(&k, TG_R_HALF_SUMSQ, 0, red, &s));
}

/* _SumToShapeOf: x (a broadcast result) summed down to input 1's shape. */
int op_gpu_sum_to(rt_kernel_ctx *c) {
  gk k;
  int rc = gk_begin(&k, c);
  if (rc) return rc;
  const rt_tensor *x = c->inputs[0];
  const rt_shape *ls = &c->inputs[1]->shape;
  if ((rc = need_f32(&k, x->dtype))) return rc;
  int lead = x->shape.ndims - ls->ndims;
  if (lead < 0)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "cannot sum rank %d down to rank %d", x->shape.ndims, ls->ndims);
  bool red[RT_MAX_DIMS] = {0};
  for (int d = 0; d < x->shape.ndims; d++) red[d] = d < lead || (ls->dims[d - lead] == 1 && x->shape.dims[d] != 1);
  return gk_end(&k, run_reduce(&k, TG_R_SUM, 0, red, ls));
}

/* _ReduceGrad: dy spread over input 1's shape (scaled by 1/count for a mean). */
int op_gpu_reduce_grad(rt_kernel_ctx *c) {
  gk k;
  int rc = gk_begin(&k, c);
  if (rc) return rc;
  const rt_tensor *dy = c->inputs[0];
  const rt_shape *ls = &c->inputs[1]->shape;
  if ((rc = need_f32(&k, dy->dtype))) return rc;
  bool red[RT_MAX_DIMS];
  if ((rc = read_axes(&k, 2, ls->ndims, red))) return gk_end(&k, rc);
  int64_t count = 1;
  for (int d = 0; d < ls->ndims; d++)
    if (red[d]) count *= ls->dims[d];
  double scale = rt_node_bool(c->node, "mean", false) && count ? 1.0 / (double)count : 1.0;
  tg_bcast bc = {.nd = ls->ndims};
  int64_t stride = 1;
  for (int d = ls->ndims - 1; d >= 0; d--) {
    bc.dims[d] = ls->dims[d] > 0 ? ls->dims[d] : 1;
    bc.sa[d] = red[d] ? 0 : stride;
    if (!red[d]) stride *= ls->dims[d];
  }
  const float *s = gin(&k, 0);
  float *y = s ? gout(&k, 0, RT_FLOAT, ls) : NULL;
  if (!y) return gk_end(&k, c->st->code);
  return gk_end(&k, launched(&k, tg_spread_f32(k.stream, s, y, rt_shape_numel(ls), &bc, (float)scale), "_ReduceGrad"));
}

/* ---- BiasAdd, softmax, cross-entropy -------------------------------------------------- */

static void bias_layout(const rt_kernel_ctx *c, const rt_shape *s, int64_t *outer, int64_t *ch, int64_t *inner) {
  int cd = !strcmp(rt_node_string(c->node, "data_format", "NHWC"), "NCHW") ? 1 : s->ndims - 1;
  *outer = *inner = 1;
  *ch = s->dims[cd];
  for (int d = 0; d < s->ndims; d++)
    if (d < cd) *outer *= s->dims[d];
    else if (d > cd) *inner *= s->dims[d];
}

int op_gpu_bias_add(rt_kernel_ctx *c) {
  gk k;
  int rc = gk_begin(&k, c);
  if (rc) return rc;
  const rt_tensor *x = c->inputs[0], *b = c->inputs[1];
  if ((rc = need_f32(&k, x->dtype))) return rc;
  if (x->shape.ndims < 2) {
    char sx[160];
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Input tensor must be at least 2D: %s",
                           op_shape_tf(&x->shape, sx, sizeof sx));
  }
  int64_t outer, ch, inner;
  bias_layout(c, &x->shape, &outer, &ch, &inner);
  if (b->shape.ndims != 1 || b->shape.dims[0] != ch) {
    char sx[160], sb[160];
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Must provide as many biases as the last dimension of the input "
                           "tensor: %s vs. %s", op_shape_tf(&b->shape, sb, sizeof sb), op_shape_tf(&x->shape, sx, sizeof sx));
  }
  const float *xd = gin(&k, 0), *bd = xd ? gin(&k, 1) : NULL;
  float *y = bd ? gout(&k, 0, RT_FLOAT, &x->shape) : NULL;
  if (!y) return gk_end(&k, c->st->code);
  return gk_end(&k, launched(&k, tg_bias_add_f32(k.stream, xd, bd, y, rt_tensor_numel(x), ch, inner), "BiasAdd"));
}

int op_gpu_bias_add_grad(rt_kernel_ctx *c) {
  gk k;
  int rc = gk_begin(&k, c);
  if (rc) return rc;
  const rt_tensor *dy = c->inputs[0];
  if ((rc = need_f32(&k, dy->dtype))) return rc;
  if (dy->shape.ndims < 2) {
    char s[160];
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Input tensor must be at least 2D: %s",
                           op_shape_tf(&dy->shape, s, sizeof s));
  }
  int64_t outer, ch, inner;
  bias_layout(c, &dy->shape, &outer, &ch, &inner);
  /* dy viewed as [outer, ch, inner], summed over outer and inner */
  tg_reduce r = {.nk = 1, .nr = 2, .n_out = ch, .count = outer * inner};
  r.kdims[0] = ch > 0 ? ch : 1, r.kstr[0] = inner;
  r.rdims[0] = outer > 0 ? outer : 1, r.rstr[0] = ch * inner;
  r.rdims[1] = inner > 0 ? inner : 1, r.rstr[1] = 1;
  rt_shape s = rt_shape_make(1, &ch);
  const float *x = gin(&k, 0);
  float *y = x ? gout(&k, 0, RT_FLOAT, &s) : NULL;
  if (!y) return gk_end(&k, c->st->code);
  return gk_end(&k, launched(&k, tg_reduce_f32(k.stream, TG_R_SUM, x, y, &r), "BiasAddGrad"));
}

static int softmax(rt_kernel_ctx *c, bool log_out) {
  gk k;
  int rc = gk_begin(&k, c);
  if (rc) return rc;
  const rt_tensor *x = c->inputs[0];
  if ((rc = need_f32(&k, x->dtype))) return rc;
  if (x->shape.ndims < 1) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "logits must have >= 1 dimension, got []");
  int64_t n = x->shape.dims[x->shape.ndims - 1], rows = n ? rt_tensor_numel(x) / n : 0;
  const float *xd = gin(&k, 0);
  float *y = xd ? gout(&k, 0, RT_FLOAT, &x->shape) : NULL;
  if (!y) return gk_end(&k, c->st->code);
  return gk_end(&k, launched(&k, tg_softmax_f32(k.stream, xd, y, rows, n, log_out), c->node->op));
}

int op_gpu_softmax(rt_kernel_ctx *c) { return softmax(c, false); }
int op_gpu_log_softmax(rt_kernel_ctx *c) { return softmax(c, true); }

static int xent(rt_kernel_ctx *c, bool sparse) {
  gk k;
  int rc = gk_begin(&k, c);
  if (rc) return rc;
  const rt_tensor *f = c->inputs[0], *l = c->inputs[1];
  if ((rc = need_f32(&k, f->dtype)) || (rc = op_xent_shapes(c, sparse))) return rc;
  if (sparse && l->dtype != RT_INT32 && l->dtype != RT_INT64)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "labels must be int32 or int64, not %s", rt_dtype_name(l->dtype));
  if (!sparse && (rc = need_f32(&k, l->dtype))) return rc;
  int64_t rows = f->shape.dims[0], n = f->shape.dims[1];
  rt_shape ls = rt_shape_make(1, &rows);
  const float *fd = gin(&k, 0);
  const void *ld = fd ? gin(&k, 1) : NULL;
  float *loss = ld ? gout(&k, 0, RT_FLOAT, &ls) : NULL;
  float *bp = loss ? gout(&k, 1, RT_FLOAT, &f->shape) : NULL;
  if (!bp) return gk_end(&k, c->st->code);
  return gk_end(&k, launched(&k, tg_xent_f32(k.stream, fd, sparse ? NULL : ld, sparse ? ld : NULL,
                                            l->dtype == RT_INT64, loss, bp, rows, n), c->node->op));
}

int op_gpu_xent(rt_kernel_ctx *c) { return xent(c, false); }
int op_gpu_sparse_xent(rt_kernel_ctx *c) { return xent(c, true); }

/* ---- Cast, Fill, ZerosLike, OnesLike --------------------------------------------------- */

static bool gpu_dtype(rt_dtype t) {
  return t == RT_FLOAT || t == RT_DOUBLE || t == RT_INT32 || t == RT_INT64 || t == RT_BOOL;
}

int op_gpu_cast(rt_kernel_ctx *c) {
  gk k;
  int rc = gk_begin(&k, c);
  if (rc) return rc;
  const rt_tensor *x = c->inputs[0];
  rt_dtype dst = rt_node_type(c->node, "DstT", RT_FLOAT);
  if (!gpu_dtype(x->dtype) || !gpu_dtype(dst))
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "Cast %s to %s is not supported on GPU", rt_dtype_name(x->dtype),
                           rt_dtype_name(dst));
  const void *xd = gin(&k, 0);
  void *y = xd ? gout(&k, 0, dst, &x->shape) : NULL;
  if (!y) return gk_end(&k, c->st->code);
  return gk_end(&k, launched(&k, tg_cast(k.stream, xd, (int)x->dtype, y, (int)dst, rt_tensor_numel(x)), "Cast"));
}

int op_gpu_fill(rt_kernel_ctx *c) {
  gk k;
  int rc = gk_begin(&k, c);
  if (rc) return rc;
  const rt_tensor *dims = hin(&k, 0), *v = c->inputs[1];
  if (!dims) return gk_end(&k, c->st->code);
  char s[160];
  if (dims->shape.ndims > 1 || rt_tensor_numel(dims) > RT_MAX_DIMS)
    return gk_end(&k, rt_kernel_error(c, RT_INVALID_ARGUMENT, "dims must be a vector, got shape %s",
                                      op_shape_tf(&dims->shape, s, sizeof s)));
  if (rt_tensor_numel(v) != 1 || v->shape.ndims != 0)
    return gk_end(&k, rt_kernel_error(c, RT_INVALID_ARGUMENT, "value must be a scalar, got shape %s",
                                      op_shape_tf(&v->shape, s, sizeof s)));
  if (!gpu_dtype(v->dtype))
    return gk_end(&k, rt_kernel_error(c, RT_UNIMPLEMENTED, "Fill of %s is not supported on GPU", rt_dtype_name(v->dtype)));
  rt_shape o = {.ndims = (int)rt_tensor_numel(dims)};
  for (int d = 0; d < o.ndims; d++) {
    o.dims[d] = rt_tensor_get_i64(dims, d);
    if (o.dims[d] < 0)
      return gk_end(&k, rt_kernel_error(c, RT_INVALID_ARGUMENT, "Dimension %lld must be >= 0", (long long)o.dims[d]));
  }
  void *y = gout(&k, 0, v->dtype, &o);
  if (!y) return gk_end(&k, c->st->code);
  return gk_end(&k, launched(&k, tg_fill(k.stream, y, (int)v->dtype, rt_shape_numel(&o), scalar_of(v)), "Fill"));
}

static int fill_like(rt_kernel_ctx *c, double value) {
  gk k;
  int rc = gk_begin(&k, c);
  if (rc) return rc;
  const rt_tensor *x = c->inputs[0];
  if (!gpu_dtype(x->dtype))
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "%s of %s is not supported on GPU", c->node->op, rt_dtype_name(x->dtype));
  void *y = gout(&k, 0, x->dtype, &x->shape);
  if (!y) return gk_end(&k, c->st->code);
  tg_scalar v = {.v = value};
  return gk_end(&k, launched(&k, tg_fill(k.stream, y, (int)x->dtype, rt_tensor_numel(x), v), c->node->op));
}

int op_gpu_zeros_like(rt_kernel_ctx *c) { return fill_like(c, 0); }
int op_gpu_ones_like(rt_kernel_ctx *c) { return fill_like(c, 1); }

/* ---- variables: state in device memory ------------------------------------------------ */

int op_gpu_assign(rt_kernel_ctx *c) {
  gk k;
  int rc = gk_begin(&k, c);
  if (rc) return rc;
  rt_resource *r = c->inputs[0]->ref;
  rt_tensor *v = c->inputs[1];
  if (!r) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Assign needs a variable as input 0");
  if (!gpu_dtype(v->dtype))
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "Assign of %s is not supported on GPU", rt_dtype_name(v->dtype));
  bool validate = rt_node_bool(c->node, "validate_shape", true);
  const void *src = gin(&k, 1);
  if (!src) return gk_end(&k, c->st->code);
  pthread_mutex_lock(&r->mu);
  if (r->value && validate && !rt_shape_equal(&r->value->shape, &v->shape)) {
    char a[128], b[128];
    rc = rt_kernel_error(c, RT_INVALID_ARGUMENT, "Assign requires shapes of both tensors to match. lhs shape= %s "
                         "rhs shape= %s", op_shape_tf(&r->value->shape, a, sizeof a), op_shape_tf(&v->shape, b, sizeof b));
  } else {
    rt_tensor *dst = r->value;
    bool in_place = dst && dst->buf && dst->buf->dev == RT_DEV_GPU && rt_shape_equal(&dst->shape, &v->shape) &&
                    dst->dtype == v->dtype;
    if (!in_place && !(dst = rt_gpu_tensor(k.g, v->dtype, &v->shape, c->st)))
      rc = rt_kernel_error(c, c->st->code, "%s", c->st->msg);
    if (!rc && rt_tensor_nbytes(v))
      rc = launched(&k, (int)cudaMemcpyAsync(rt_tensor_data(dst), src, rt_tensor_nbytes(v), cudaMemcpyDeviceToDevice,
                                             k.stream), "Assign copy");
    if (!in_place && dst) {
      if (rc) {
        rt_tensor_unref(dst);
      } else {
        rt_tensor_unref(r->value);
        r->value = dst;
      }
    }
  }
  pthread_mutex_unlock(&r->mu);
  return gk_end(&k, rc ? rc : op_output_ref(c, r, v->dtype));
}

static int assign_update(rt_kernel_ctx *c, int op) {
  gk k;
  int rc = gk_begin(&k, c);
  if (rc) return rc;
  rt_resource *r = c->inputs[0]->ref;
  rt_tensor *v = c->inputs[1];
  if (!r) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s needs a variable as input 0", c->node->op);
  const float *vd = gin(&k, 1);
  if (!vd) return gk_end(&k, c->st->code);
  pthread_mutex_lock(&r->mu);
  rt_tensor *x = r->value;
  int64_t n = x ? rt_tensor_numel(x) : 0;
  bool scalar = rt_tensor_numel(v) == 1 && n != 1;
  if (!x || !x->buf) {
    rc = rt_kernel_error(c, RT_FAILED_PRECONDITION, "Attempting to use uninitialized value %s", c->node->inputs[0]);
  } else if (x->dtype != RT_FLOAT || v->dtype != RT_FLOAT || x->buf->dev != RT_DEV_GPU) {
    rc = rt_kernel_error(c, RT_UNIMPLEMENTED, "%s on GPU takes a float32 variable in device memory", c->node->op);
  } else if (!scalar && !rt_shape_equal(&x->shape, &v->shape)) {
    char a[128], b[128];
    rc = rt_kernel_error(c, RT_INVALID_ARGUMENT, "Must have the same shape: %s vs %s",
                         op_shape_tf(&x->shape, a, sizeof a), op_shape_tf(&v->shape, b, sizeof b));
  } else {
    tg_bcast bc = {.nd = 1, .dims = {n > 0 ? n : 1}, .sa = {1}, .sb = {0}};
    float *xd = rt_tensor_data(x);
    rc = launched(&k, tg_binary_f32(k.stream, op, xd, vd, xd, n, scalar ? &bc : NULL), c->node->op);
  }
  pthread_mutex_unlock(&r->mu);
  return gk_end(&k, rc ? rc : op_output_ref(c, r, v->dtype));
}

int op_gpu_assign_add(rt_kernel_ctx *c) { return assign_update(c, TG_ADD); }
int op_gpu_assign_sub(rt_kernel_ctx *c) { return assign_update(c, TG_SUB); }

/* ---- the optimizers' Apply* ops --------------------------------------------------------- */

/* inputs: n_refs references (var, slots), then the scalars and the gradient in `order`
 * (indices into the op's inputs: scalars first, gradient last). */
static int apply(rt_kernel_ctx *c, int kind, int n_refs, int n_scalars, const int *order, int flag) {
  gk k;
  int rc = gk_begin(&k, c);
  if (rc) return rc;
  static const char *names[] = {"var", "accum", "v"};
  rt_resource *r = c->inputs[0]->ref;
  if (!r) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s needs a variable as input 0", c->node->op);
  const rt_tensor *grad = c->inputs[order[n_scalars]];
  if ((rc = need_f32(&k, grad->dtype))) return rc;
  tg_scalar s[6];
  memset(s, 0, sizeof s);
  char sa[160], sb[160];
  for (int i = 0; i < n_scalars; i++) {
    const rt_tensor *t = c->inputs[order[i]];
    if (rt_tensor_numel(t) != 1 || t->shape.ndims != 0)
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "hyper-parameter %d is not a scalar: %s", i,
                             op_shape_tf(&t->shape, sa, sizeof sa));
    s[i] = scalar_of(t);
  }
  const float *g = gin(&k, order[n_scalars]);
  if (!g) return gk_end(&k, c->st->code);
  float *p[3] = {NULL, NULL, NULL};
  pthread_mutex_lock(&r->mu);
  for (int i = 0; i < n_refs && !rc; i++) {
    rt_resource *ri = c->inputs[i]->ref;
    rt_tensor *t = ri ? ri->value : NULL;
    if (!t || !t->buf)
      rc = rt_kernel_error(c, RT_FAILED_PRECONDITION, "Attempting to use uninitialized value %s", c->node->inputs[i]);
    else if (t->dtype != grad->dtype || !rt_shape_equal(&t->shape, &grad->shape))
      rc = rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s and grad do not have the same shape%s %s", names[i ? 1 : 0],
                           op_shape_tf(&t->shape, sa, sizeof sa), op_shape_tf(&grad->shape, sb, sizeof sb));
    else if (t->buf->dev != RT_DEV_GPU)
      rc = rt_kernel_error(c, RT_INTERNAL, "%s of %s is not in device memory", names[i ? 1 : 0], c->node->name);
    else
      p[i] = rt_tensor_data(t);
  }
  if (!rc) rc = launched(&k, tg_apply_f32(k.stream, kind, p[0], p[1], p[2], g, rt_tensor_numel(grad), s, flag), c->node->op);
  pthread_mutex_unlock(&r->mu);
  return gk_end(&k, rc ? rc : op_output_ref(c, r, grad->dtype));
}

int op_gpu_apply_gd(rt_kernel_ctx *c) { return apply(c, TG_GD, 1, 1, (const int[]){1, 2}, 0); }
int op_gpu_apply_momentum(rt_kernel_ctx *c) {   /* var, accum, lr, grad, momentum */
  return apply(c, TG_MOMENTUM, 2, 2, (const int[]){2, 4, 3}, rt_node_bool(c->node, "use_nesterov", false));
}
int op_gpu_apply_adagrad(rt_kernel_ctx *c) {    /* var, accum, lr, grad */
  return apply(c, TG_ADAGRAD, 2, 1, (const int[]){2, 3}, rt_node_bool(c->node, "update_slots", true));
}
int op_gpu_apply_adam(rt_kernel_ctx *c) {       /* var, m, v, b1p, b2p, lr, b1, b2, eps, grad */
  return apply(c, TG_ADAM, 3, 6, (const int[]){3, 4, 5, 6, 7, 8, 9}, rt_node_bool(c->node, "use_nesterov", false));
}
int op_gpu_apply_rmsprop(rt_kernel_ctx *c) {    /* var, ms, mom, lr, rho, momentum, eps, grad */
  return apply(c, TG_RMSPROP, 3, 4, (const int[]){3, 4, 5, 6, 7}, 0);
}

#endif
