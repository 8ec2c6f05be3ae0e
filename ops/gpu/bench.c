/* The GPU benchmarks' baselines (scripts/bench/gpu.sh), in this process on GPU:0: raw
 * cuBLAS sgemm, raw cudaMemcpyAsync from pinned memory, and the runtime's own staged copy
 * (rt_gpu_to_device), each the best of reps after a warm-up. UNVERIFIED on a GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ops/ops.h"
#include "runtime/gpu/gpu.h"

#if TFSH_HAVE_CUDA
#include "runtime/gpu/dl.h"
#include <cuda_runtime_api.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#define TRY(call, what)                                                                   \
  do {                                                                                    \
    cudaError_t e_ = (call);                                                              \
    if (e_ != cudaSuccess) {                                                              \
      snprintf(why, why_len, "%s failed: %s", what, cudaGetErrorString(e_));              \
      goto out;                                                                           \
    }                                                                                     \
  } while (0)

static double sgemm(rt_gpu *g, int n, int reps, char *why, size_t why_len) {
  double best = -1;
  float *a = NULL, *b = NULL, *c = NULL;
  size_t bytes = (size_t)n * (size_t)n * sizeof(float);
  cudaStream_t st = rt_gpu_stream(g);
  cublasHandle_t h = rt_gpu_blas(g);
  const rt_cublas *B = rt_cublas_lib(NULL, 0);
  if (!h || !B) {
    snprintf(why, why_len, "no cuBLAS: %s", rt_gpu_blas_why(g));
    return -1;
  }
  cudaEvent_t e0 = NULL, e1 = NULL;
  TRY(cudaMalloc((void **)&a, bytes), "cudaMalloc");
  TRY(cudaMalloc((void **)&b, bytes), "cudaMalloc");
  TRY(cudaMalloc((void **)&c, bytes), "cudaMalloc");
  TRY(cudaMemsetAsync(a, 0, bytes, st), "cudaMemsetAsync");
  TRY(cudaMemsetAsync(b, 0, bytes, st), "cudaMemsetAsync");
  TRY(cudaEventCreate(&e0), "cudaEventCreate");
  TRY(cudaEventCreate(&e1), "cudaEventCreate");
  const float one = 1, zero = 0;
  for (int r = -1; r < reps; r++) {   /* r = -1: warm-up */
    double t = now_s();
    rt_gpu_blas_lock(g);
    cublasStatus_t s = B->cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, b, n, a, n, &zero, c, n);
    rt_gpu_blas_unlock(g);
    if (s != CUBLAS_STATUS_SUCCESS) {
      snprintf(why, why_len, "cublasSgemm failed: %s", B->cublasGetStatusString(s));
      best = -1;
      goto out;
    }
    TRY(cudaEventRecord(e1, st), "cudaEventRecord");
    TRY(cudaEventSynchronize(e1), "cudaEventSynchronize");
    t = now_s() - t;
    if (r >= 0 && (best < 0 || t < best)) best = t;
  }
out:
  if (e0) cudaEventDestroy(e0);
  if (e1) cudaEventDestroy(e1);
  cudaFree(a), cudaFree(b), cudaFree(c);
  return best;
}

static double h2d_raw(rt_gpu *g, size_t bytes, int reps, char *why, size_t why_len) {
  double best = -1;
  void *host = NULL, *dev = NULL;
  cudaStream_t st = rt_gpu_stream(g);
  cudaEvent_t e = NULL;
  TRY(cudaHostAlloc(&host, bytes, cudaHostAllocDefault), "cudaHostAlloc");
  TRY(cudaMalloc(&dev, bytes), "cudaMalloc");
  TRY(cudaEventCreate(&e), "cudaEventCreate");
  memset(host, 1, bytes);
  for (int r = -1; r < reps; r++) {
    double t = now_s();
    TRY(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, st), "cudaMemcpyAsync");
    TRY(cudaEventRecord(e, st), "cudaEventRecord");
    TRY(cudaEventSynchronize(e), "cudaEventSynchronize");
    t = now_s() - t;
    if (r >= 0 && (best < 0 || t < best)) best = t;
  }
out:
  if (e) cudaEventDestroy(e);
  cudaFreeHost(host);
  cudaFree(dev);
  return best;
}

static double h2d_runtime(rt_gpu *g, size_t bytes, int reps, char *why, size_t why_len) {
  int64_t n = (int64_t)(bytes / sizeof(float));
  rt_shape s = rt_shape_make(1, &n);
  rt_tensor *h = rt_tensor_new(RT_FLOAT, &s);
  if (!h) {
    snprintf(why, why_len, "out of host memory");
    return -1;
  }
  double best = -1;
  rt_status st = {0};
  for (int r = -1; r < reps; r++) {
    rt_tensor *d = NULL;
    double t = now_s();
    if (rt_gpu_to_device(g, h, &d, &st)) {
      snprintf(why, why_len, "%s", st.msg);
      best = -1;
      break;
    }
    t = now_s() - t;
    rt_tensor_unref(d);
    if (r >= 0 && (best < 0 || t < best)) best = t;
  }
  rt_tensor_unref(h);
  return best;
}

double op_bench_gpu(const char *what, int64_t n, int reps, char *why, size_t why_len) {
  const rt_gpu_info *info;
  const char *note;
  if (rt_gpu_devices(&info, &note) == 0 || info[0].fake) {
    snprintf(why, why_len, "%s", note[0] ? note : "no GPU (fake devices only)");
    return -1;
  }
  rt_gpu *g;
  rt_status st = {0};
  if (rt_gpu_open(info[0].ordinal, &g, &st)) {
    snprintf(why, why_len, "%s", st.msg);
    return -1;
  }
  if (cudaSetDevice(info[0].ordinal) != cudaSuccess) {
    snprintf(why, why_len, "cudaSetDevice failed");
    return -1;
  }
  if (!strcmp(what, "sgemm")) return sgemm(g, (int)n, reps, why, why_len);
  if (!strcmp(what, "h2d_raw")) return h2d_raw(g, (size_t)n, reps, why, why_len);
  if (!strcmp(what, "h2d_runtime")) return h2d_runtime(g, (size_t)n, reps, why, why_len);
  snprintf(why, why_len, "unknown benchmark '%s' (sgemm, h2d_raw, h2d_runtime)", what);
  return -1;
}

#else

double op_bench_gpu(const char *what, int64_t n, int reps, char *why, size_t why_len) {
  snprintf(why, why_len, "no GPU: this tfsh was built without CUDA");
  return -1;
}

#endif
