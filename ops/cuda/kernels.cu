// The CUDA kernels behind ops/cuda/kernels.h. Grid-stride loops throughout; every launcher
// returns cudaGetLastError() after its launch (0 when it was enqueued). UNVERIFIED: this
// file compiles against CUDA 13 (sm_90) but has not yet run on a GPU.
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "ops/cuda/kernels.h"

namespace {

const int kThreads = 256;

int blocks_for(int64_t n) {
  int64_t b = (n + kThreads - 1) / kThreads;
  if (b < 1) b = 1;
  return b > 65535 * 16 ? 65535 * 16 : (int)b;
}

#define GRID_LOOP(i, n) \
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (int64_t)blockDim.x * gridDim.x)

__device__ double read_scalar(const tg_scalar &s) {
  if (!s.dev) return s.v;
  switch (s.dtype) {
  case 1: return *(const float *)s.dev;
  case 2: return *(const double *)s.dev;
  case 3: return *(const int32_t *)s.dev;
  case 9: return (double)*(const int64_t *)s.dev;
  case 10: return *(const bool *)s.dev ? 1.0 : 0.0;
  default: return 0.0;
  }
}

__device__ float binary_op(int op, float a, float b) {
  switch (op) {
  case TG_ADD: return a + b;
  case TG_SUB: return a - b;
  case TG_MUL: return a * b;
  case TG_DIV: return a / b;
  case TG_MAXIMUM: return a > b || a != a ? a : b;
  case TG_MINIMUM: return a < b || a != a ? a : b;
  case TG_POW: return powf(a, b);
  case TG_SQDIFF: return (a - b) * (a - b);
  case TG_RELU_GRAD: return b > 0 ? a : 0.0f;                  // (gradients, features)
  case TG_SIGMOID_GRAD: return b * a * (1 - a);                // (y, dy)
  case TG_TANH_GRAD: return b * (1 - a * a);                   // (y, dy)
  case TG_RSQRT_GRAD: return -0.5f * b * a * a * a;            // (y, dy)
  case TG_ELU_GRAD: return b > 0 ? a : a * (b + 1);            // (gradients, outputs)
  case TG_SOFTPLUS_GRAD: return a / (1 + expf(-b));            // (gradients, features)
  case TG_EQUAL: return a == b;
  case TG_NOT_EQUAL: return a != b;
  case TG_GREATER: return a > b;
  case TG_GREATER_EQUAL: return a >= b;
  case TG_LESS: return a < b;
  case TG_LESS_EQUAL: return a <= b;
  default: return 0.0f;
  }
}

__global__ void binary_flat(int op, const float *a, const float *b, void *y, int64_t n) {
  bool cmp = op >= TG_EQUAL;
  GRID_LOOP(i, n) {
    float r = binary_op(op, a[i], b[i]);
    if (cmp) ((bool *)y)[i] = r != 0.0f;
    else ((float *)y)[i] = r;
  }
}

__global__ void binary_bcast(int op, const float *a, const float *b, void *y, int64_t n, tg_bcast bc) {
  bool cmp = op >= TG_EQUAL;
  GRID_LOOP(i, n) {
    int64_t rest = i, ia = 0, ib = 0;
    for (int d = bc.nd - 1; d >= 0; d--) {
      int64_t digit = rest % bc.dims[d];
      rest /= bc.dims[d];
      ia += digit * bc.sa[d];
      ib += digit * bc.sb[d];
    }
    float r = binary_op(op, a[ia], b[ib]);
    if (cmp) ((bool *)y)[i] = r != 0.0f;
    else ((float *)y)[i] = r;
  }
}

__device__ float unary_op(int op, float a) {
  switch (op) {
  case TG_NEG: return -a;
  case TG_SQUARE: return a * a;
  case TG_SQRT: return sqrtf(a);
  case TG_EXP: return expf(a);
  case TG_LOG: return logf(a);
  case TG_ABS: return fabsf(a);
  case TG_RSQRT: return rsqrtf(a);
  case TG_SIGN: return (float)((a > 0) - (a < 0));
  case TG_FLOOR: return floorf(a);
  case TG_CEIL: return ceilf(a);
  case TG_LOG1P: return log1pf(a);
  case TG_RELU: return a > 0 ? a : 0.0f;
  case TG_SIGMOID: return 1.0f / (1.0f + expf(-a));
  case TG_TANH: return tanhf(a);
  case TG_ELU: return a > 0 ? a : expm1f(a);
  case TG_SOFTPLUS: return a > 0 ? a + log1pf(expf(-a)) : log1pf(expf(a));
  default: return 0.0f;
  }
}

__global__ void unary_flat(int op, const float *x, float *y, int64_t n) {
  GRID_LOOP(i, n) y[i] = unary_op(op, x[i]);
}

// One block per output element (grid-stride over outputs); threads share the reduced
// elements and meet in shared memory. Sums accumulate in double, as the CPU kernels do.
__global__ void reduce_kernel(int kind, const float *x, float *y, tg_reduce r) {
  __shared__ double part[kThreads];
  for (int64_t j = blockIdx.x; j < r.n_out; j += gridDim.x) {
    int64_t rest = j, base = 0;
    for (int d = r.nk - 1; d >= 0; d--) {
      base += (rest % r.kdims[d]) * r.kstr[d];
      rest /= r.kdims[d];
    }
    bool extreme = kind == TG_R_MAX || kind == TG_R_MIN;
    double acc = kind == TG_R_PROD ? 1.0 : 0.0;
    bool seen = false;
    for (int64_t k = threadIdx.x; k < r.count; k += blockDim.x) {
      int64_t rk = k, off = base;
      for (int d = r.nr - 1; d >= 0; d--) {
        off += (rk % r.rdims[d]) * r.rstr[d];
        rk /= r.rdims[d];
      }
      double v = x[off];
      if (kind == TG_R_HALF_SUMSQ) acc += v * v;
      else if (kind == TG_R_PROD) acc *= v;
      else if (!extreme) acc += v;
      else if (!seen || v != v || (kind == TG_R_MAX ? v > acc : v < acc)) acc = acc != acc ? acc : v;
      seen = true;
    }
    part[threadIdx.x] = acc;
    // A thread that saw nothing must not win a max/min: it copies thread 0's slot later.
    __shared__ bool has[kThreads];
    has[threadIdx.x] = seen;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
      if (threadIdx.x < s) {
        double a = part[threadIdx.x], b = part[threadIdx.x + s];
        bool ha = has[threadIdx.x], hb = has[threadIdx.x + s];
        double out;
        if (kind == TG_R_PROD) out = a * b;
        else if (!extreme) out = a + b;
        else if (!ha) out = b;
        else if (!hb) out = a;
        else if (a != a || b != b) out = a != a ? a : b;
        else out = kind == TG_R_MAX ? (a > b ? a : b) : (a < b ? a : b);
        part[threadIdx.x] = out;
        has[threadIdx.x] = ha || hb;
      }
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      double v = part[0];
      if (kind == TG_R_MEAN && r.count) v /= (double)r.count;
      if (kind == TG_R_HALF_SUMSQ) v /= 2;
      y[j] = (float)v;
    }
    __syncthreads();
  }
}

__global__ void spread_kernel(const float *x, float *y, int64_t n, tg_bcast bc, float scale) {
  GRID_LOOP(i, n) {
    int64_t rest = i, ix = 0;
    for (int d = bc.nd - 1; d >= 0; d--) {
      ix += (rest % bc.dims[d]) * bc.sa[d];
      rest /= bc.dims[d];
    }
    y[i] = x[ix] * scale;
  }
}

// Block-wide max or sum of v (all threads get the answer).
__device__ float block_reduce(float v, bool is_max, float *scratch) {
  scratch[threadIdx.x] = v;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) {
      float a = scratch[threadIdx.x], b = scratch[threadIdx.x + s];
      scratch[threadIdx.x] = is_max ? (a > b ? a : b) : a + b;
    }
    __syncthreads();
  }
  float r = scratch[0];
  __syncthreads();
  return r;
}

// One block per row: y = softmax or log-softmax; with labels, loss and backprop.
__global__ void softmax_rows(const float *x, float *y, int64_t rows, int64_t n, int log_out,
                             const float *p, const void *labels, int labels64, float *loss) {
  __shared__ float scratch[kThreads];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float *xr = x + r * n;
    float *yr = y + r * n;
    float mx = -INFINITY;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) mx = xr[i] > mx ? xr[i] : mx;
    mx = block_reduce(mx, true, scratch);
    float sum = 0;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) sum += expf(xr[i] - mx);
    sum = block_reduce(sum, false, scratch);
    float lse = logf(sum);
    if (loss) {
      int64_t cls = -1;
      if (!p) cls = labels64 ? ((const int64_t *)labels)[r] : ((const int32_t *)labels)[r];
      bool bad = !p && (cls < 0 || cls >= n);
      float l = 0;
      for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
        float lp = xr[i] - mx - lse, pi = p ? p[r * n + i] : (float)(i == cls);
        if (pi != 0) l -= pi * lp;
        yr[i] = bad ? NAN : expf(lp) - pi;
      }
      l = block_reduce(l, false, scratch);
      if (threadIdx.x == 0) loss[r] = bad ? NAN : l;
    } else {
      for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
        yr[i] = log_out ? xr[i] - mx - lse : expf(xr[i] - mx) / sum;
    }
  }
}

__global__ void bias_add_kernel(const float *x, const float *b, float *y, int64_t n, int64_t ch, int64_t inner) {
  GRID_LOOP(i, n) y[i] = x[i] + b[(i / inner) % ch];
}

template <typename S, typename D>
__global__ void cast_kernel(const S *x, D *y, int64_t n) {
  GRID_LOOP(i, n) y[i] = (D)x[i];
}

template <typename S>
__global__ void cast_to_bool(const S *x, bool *y, int64_t n) {
  GRID_LOOP(i, n) y[i] = x[i] != (S)0;
}

template <typename D>
__global__ void fill_kernel(D *y, int64_t n, tg_scalar v) {
  D value = (D)read_scalar(v);
  GRID_LOOP(i, n) y[i] = value;
}

__global__ void fill_bool(bool *y, int64_t n, tg_scalar v) {
  bool value = read_scalar(v) != 0.0;
  GRID_LOOP(i, n) y[i] = value;
}

struct apply_args {
  tg_scalar s[6];
};

__global__ void apply_kernel(int kind, float *v, float *a, float *b, const float *g, int64_t n,
                             apply_args s, int flag) {
  double s0 = read_scalar(s.s[0]), s1 = read_scalar(s.s[1]), s2 = read_scalar(s.s[2]);
  double s3 = read_scalar(s.s[3]), s4 = read_scalar(s.s[4]), s5 = read_scalar(s.s[5]);
  switch (kind) {
  case TG_GD: {
    float lr = (float)s0;
    GRID_LOOP(i, n) v[i] -= lr * g[i];
    break;
  }
  case TG_MOMENTUM: {   // lr, momentum; flag: use_nesterov
    float lr = (float)s0, mu = (float)s1, mulr = (float)(s1 * s0);
    GRID_LOOP(i, n) {
      a[i] = a[i] * mu + g[i];
      v[i] -= flag ? g[i] * lr + a[i] * mulr : lr * a[i];
    }
    break;
  }
  case TG_ADAGRAD: {    // lr; flag: update_slots
    float lr = (float)s0;
    GRID_LOOP(i, n) {
      if (flag) a[i] += g[i] * g[i];
      v[i] -= lr * g[i] / sqrtf(a[i]);
    }
    break;
  }
  case TG_ADAM: {       // beta1_power, beta2_power, lr, beta1, beta2, epsilon; flag: use_nesterov
    float lr_t = (float)(s2 * sqrt(1 - s1) / (1 - s0)), b1 = (float)s3, eps = (float)s5;
    float one_b1 = (float)(1 - s3), one_b2 = (float)(1 - s4);
    GRID_LOOP(i, n) {
      a[i] += (g[i] - a[i]) * one_b1;
      b[i] += (g[i] * g[i] - b[i]) * one_b2;
      float m = flag ? a[i] * b1 + one_b1 * g[i] : a[i];
      v[i] -= lr_t * m / (sqrtf(b[i]) + eps);
    }
    break;
  }
  case TG_RMSPROP: {    // lr, rho, momentum, epsilon
    float lr = (float)s0, rho = (float)s1, mu = (float)s2, eps = (float)s3;
    GRID_LOOP(i, n) {
      a[i] = a[i] * rho + g[i] * g[i] * (1 - rho);
      b[i] = b[i] * mu + lr * g[i] / sqrtf(a[i] + eps);
      v[i] -= b[i];
    }
    break;
  }
  default:
    break;
  }
}

struct perm4 {
  int64_t ydims[4];
  int64_t xstride[4];   // x's stride of y's axis k
};

__global__ void permute4_kernel(const float *x, float *y, int64_t n, perm4 p) {
  GRID_LOOP(i, n) {
    int64_t rest = i, ix = 0;
    for (int d = 3; d >= 0; d--) {
      ix += (rest % p.ydims[d]) * p.xstride[d];
      rest /= p.ydims[d];
    }
    y[i] = x[ix];
  }
}

template <typename S>
int cast_from(cudaStream_t st, const S *x, void *y, int dst, int64_t n) {
  int g = blocks_for(n);
  switch (dst) {
  case 1: cast_kernel<S, float><<<g, kThreads, 0, st>>>(x, (float *)y, n); break;
  case 2: cast_kernel<S, double><<<g, kThreads, 0, st>>>(x, (double *)y, n); break;
  case 3: cast_kernel<S, int32_t><<<g, kThreads, 0, st>>>(x, (int32_t *)y, n); break;
  case 9: cast_kernel<S, int64_t><<<g, kThreads, 0, st>>>(x, (int64_t *)y, n); break;
  case 10: cast_to_bool<S><<<g, kThreads, 0, st>>>(x, (bool *)y, n); break;
  default: return (int)cudaErrorInvalidValue;
  }
  return (int)cudaGetLastError();
}

}  // namespace

extern "C" {

int tg_binary_f32(void *stream, int op, const float *a, const float *b, void *y, int64_t n, const tg_bcast *bc) {
  if (n == 0) return 0;
  cudaStream_t st = (cudaStream_t)stream;
  if (bc) binary_bcast<<<blocks_for(n), kThreads, 0, st>>>(op, a, b, y, n, *bc);
  else binary_flat<<<blocks_for(n), kThreads, 0, st>>>(op, a, b, y, n);
  return (int)cudaGetLastError();
}

int tg_unary_f32(void *stream, int op, const float *x, float *y, int64_t n) {
  if (n == 0) return 0;
  unary_flat<<<blocks_for(n), kThreads, 0, (cudaStream_t)stream>>>(op, x, y, n);
  return (int)cudaGetLastError();
}

int tg_reduce_f32(void *stream, int kind, const float *x, float *y, const tg_reduce *r) {
  if (r->n_out == 0) return 0;
  int64_t g = r->n_out < 65535 * 16 ? r->n_out : 65535 * 16;
  reduce_kernel<<<(unsigned)g, kThreads, 0, (cudaStream_t)stream>>>(kind, x, y, *r);
  return (int)cudaGetLastError();
}

int tg_spread_f32(void *stream, const float *x, float *y, int64_t n, const tg_bcast *bc, float scale) {
  if (n == 0) return 0;
  spread_kernel<<<blocks_for(n), kThreads, 0, (cudaStream_t)stream>>>(x, y, n, *bc, scale);
  return (int)cudaGetLastError();
}

int tg_softmax_f32(void *stream, const float *x, float *y, int64_t rows, int64_t n, int log_out) {
  if (rows == 0 || n == 0) return 0;
  int64_t g = rows < 65535 * 16 ? rows : 65535 * 16;
  softmax_rows<<<(unsigned)g, kThreads, 0, (cudaStream_t)stream>>>(x, y, rows, n, log_out, NULL, NULL, 0, NULL);
  return (int)cudaGetLastError();
}

int tg_xent_f32(void *stream, const float *x, const float *p, const void *labels, int labels64, float *loss,
                float *backprop, int64_t rows, int64_t n) {
  if (rows == 0) return 0;
  int64_t g = rows < 65535 * 16 ? rows : 65535 * 16;
  softmax_rows<<<(unsigned)g, kThreads, 0, (cudaStream_t)stream>>>(x, backprop, rows, n, 0, p, labels, labels64, loss);
  return (int)cudaGetLastError();
}

int tg_bias_add_f32(void *stream, const float *x, const float *b, float *y, int64_t n, int64_t ch, int64_t inner) {
  if (n == 0) return 0;
  bias_add_kernel<<<blocks_for(n), kThreads, 0, (cudaStream_t)stream>>>(x, b, y, n, ch, inner);
  return (int)cudaGetLastError();
}

int tg_cast(void *stream, const void *x, int src, void *y, int dst, int64_t n) {
  if (n == 0) return 0;
  cudaStream_t st = (cudaStream_t)stream;
  switch (src) {
  case 1: return cast_from(st, (const float *)x, y, dst, n);
  case 2: return cast_from(st, (const double *)x, y, dst, n);
  case 3: return cast_from(st, (const int32_t *)x, y, dst, n);
  case 9: return cast_from(st, (const int64_t *)x, y, dst, n);
  case 10: return cast_from(st, (const bool *)x, y, dst, n);
  default: return (int)cudaErrorInvalidValue;
  }
}

int tg_fill(void *stream, void *y, int dtype, int64_t n, tg_scalar v) {
  if (n == 0) return 0;
  cudaStream_t st = (cudaStream_t)stream;
  int g = blocks_for(n);
  switch (dtype) {
  case 1: fill_kernel<float><<<g, kThreads, 0, st>>>((float *)y, n, v); break;
  case 2: fill_kernel<double><<<g, kThreads, 0, st>>>((double *)y, n, v); break;
  case 3: fill_kernel<int32_t><<<g, kThreads, 0, st>>>((int32_t *)y, n, v); break;
  case 9: fill_kernel<int64_t><<<g, kThreads, 0, st>>>((int64_t *)y, n, v); break;
  case 10: fill_bool<<<g, kThreads, 0, st>>>((bool *)y, n, v); break;
  default: return (int)cudaErrorInvalidValue;
  }
  return (int)cudaGetLastError();
}

int tg_apply_f32(void *stream, int kind, float *v, float *a, float *b, const float *g, int64_t n,
                 const tg_scalar *s, int flag) {
  if (n == 0) return 0;
  apply_args args;
  for (int i = 0; i < 6; i++) args.s[i] = s[i];
  apply_kernel<<<blocks_for(n), kThreads, 0, (cudaStream_t)stream>>>(kind, v, a, b, g, n, args, flag);
  return (int)cudaGetLastError();
}

int tg_permute4_f32(void *stream, const float *x, const int64_t *dims, const int *perm, float *y) {
  int64_t xs[4], n = 1;
  xs[3] = 1;
  for (int d = 2; d >= 0; d--) xs[d] = xs[d + 1] * dims[d + 1];
  perm4 p;
  for (int k = 0; k < 4; k++) {
    p.ydims[k] = dims[perm[k]] > 0 ? dims[perm[k]] : 1;
    p.xstride[k] = xs[perm[k]];
    n *= dims[perm[k]];
  }
  if (n == 0) return 0;
  permute4_kernel<<<blocks_for(n), kThreads, 0, (cudaStream_t)stream>>>(x, y, n, p);
  return (int)cudaGetLastError();
}

}  // extern "C"
