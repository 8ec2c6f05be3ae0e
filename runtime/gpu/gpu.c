/* GPU devices (gpu.h): enumeration and fake devices everywhere; streams, the caching
 * allocator and copies where the CUDA toolkit was found. UNVERIFIED on a GPU. */
#include "runtime/gpu/gpu.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "runtime/device.h"
#include "runtime/gpu/alloc.h"
#include "runtime/op.h"   /* rt_intra_threads */
#include "runtime/pool.h"

#if TFSH_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "runtime/gpu/dl.h"
#endif

#define MAX_GPUS 16

static rt_gpu_info gpus[MAX_GPUS];
static int n_gpus;
static char gpu_note[300];

int rt_gpu_visible(const char *env, int physical, int *ordinals, int max) {
  int n = 0;
  if (!env) {
    for (int i = 0; i < physical && n < max; i++) ordinals[n++] = i;
    return n;
  }
  const char *p = env;
  while (*p && n < max) {
    char *end;
    long v = strtol(p, &end, 10);
    if (end == p || v < 0 || v >= physical) break;   /* CUDA stops at the first bad entry */
    bool dup = false;
    for (int i = 0; i < n; i++) dup |= ordinals[i] == (int)v;
    if (dup) break;
    ordinals[n++] = (int)v;
    while (*end == ' ') end++;
    if (*end != ',') break;
    p = end + 1;
  }
  return n;
}

static void find_fake(int count) {
  int ord[MAX_GPUS];
  int n = rt_gpu_visible(getenv("CUDA_VISIBLE_DEVICES"), count, ord, MAX_GPUS);
  for (int i = 0; i < n; i++) {
    rt_gpu_info *g = &gpus[n_gpus++];
    g->ordinal = ord[i];
    snprintf(g->name, sizeof g->name, "Fake GPU (placement only)");
    g->fake = true;
  }
  if (!n_gpus)
    snprintf(gpu_note, sizeof gpu_note, "no GPU: CUDA_VISIBLE_DEVICES hides the %d fake GPUs; running CPU-only", count);
}

#if TFSH_HAVE_CUDA
static void find_real(void) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count <= 0) {
    const char *env = getenv("CUDA_VISIBLE_DEVICES");
    if (e == cudaErrorInsufficientDriver)
      snprintf(gpu_note, sizeof gpu_note, "no GPU: no usable CUDA driver (cudaGetDeviceCount: %s); running CPU-only",
               cudaGetErrorString(e));
    else if (e == cudaSuccess || e == cudaErrorNoDevice)
      snprintf(gpu_note, sizeof gpu_note, "no GPU: %s; running CPU-only",
               env ? "CUDA_VISIBLE_DEVICES hides every device" : "no CUDA device found");
    else
      snprintf(gpu_note, sizeof gpu_note, "no GPU: cudaGetDeviceCount failed: %s (%s); running CPU-only",
               cudaGetErrorString(e), cudaGetErrorName(e));
    cudaGetLastError();   /* clear the sticky-free error so later calls start clean */
    return;
  }
  for (int i = 0; i < count && n_gpus < MAX_GPUS; i++) {
    struct cudaDeviceProp p;
    if ((e = cudaGetDeviceProperties(&p, i)) != cudaSuccess) {
      fprintf(stderr, "tfsh: GPU:%d skipped: cudaGetDeviceProperties failed: %s\n", i, cudaGetErrorString(e));
      continue;
    }
    rt_gpu_info *g = &gpus[n_gpus++];
    g->ordinal = i;
    snprintf(g->name, sizeof g->name, "%s", p.name);
    g->total_bytes = p.totalGlobalMem;
    g->major = p.major;
    g->minor = p.minor;
  }
  if (!n_gpus) snprintf(gpu_note, sizeof gpu_note, "no GPU: no CUDA device could be queried; running CPU-only");
}
#endif

static void find_gpus(void) {
  const char *fake = getenv("TFSH_FAKE_GPUS");
  if (fake && *fake) {
    int n = atoi(fake);
    find_fake(n < 0 ? 0 : n > MAX_GPUS ? MAX_GPUS : n);
    return;
  }
#if TFSH_HAVE_CUDA
  find_real();
#endif
}

int rt_gpu_devices(const rt_gpu_info **out, const char **note) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, find_gpus);
  if (out) *out = gpus;
  if (note) *note = gpu_note;
  return n_gpus;
}

/* ---- memory options ----------------------------------------------------------------- */

static pthread_mutex_t opt_mu = PTHREAD_MUTEX_INITIALIZER;
static bool opt_set;
static double opt_fraction;
static bool opt_growth;

void rt_gpu_set_memory_options(double fraction, bool allow_growth) {
  if (fraction <= 0 && !allow_growth) return;   /* nothing asked: defaults stay open */
  pthread_mutex_lock(&opt_mu);
  if (!opt_set) {
    opt_set = true;
    opt_fraction = fraction > 1 ? 1 : fraction;
    opt_growth = allow_growth;
  }
  pthread_mutex_unlock(&opt_mu);
}

/* ---- devices at work ---------------------------------------------------------------- */

#if !TFSH_HAVE_CUDA

struct rt_gpu {
  int unused;
};

int rt_gpu_open(int ordinal, rt_gpu **out, rt_status *st) {
  *out = NULL;
  return rt_error(st, RT_UNIMPLEMENTED, "GPU:%d: this tfsh was built without CUDA", ordinal);
}
const char *rt_gpu_label(const rt_gpu *g) { return "GPU"; }
void *rt_gpu_stream(rt_gpu *g) { return NULL; }
void *rt_gpu_blas(rt_gpu *g) { return NULL; }
const char *rt_gpu_blas_why(rt_gpu *g) { return "this tfsh was built without CUDA"; }
void rt_gpu_blas_lock(rt_gpu *g) {}
void rt_gpu_blas_unlock(rt_gpu *g) {}
rt_tensor *rt_gpu_tensor(rt_gpu *g, rt_dtype t, const rt_shape *shape, rt_status *st) {
  rt_error(st, RT_UNIMPLEMENTED, "this tfsh was built without CUDA");
  return NULL;
}
int rt_gpu_to_host(rt_gpu *g, rt_tensor *t, rt_tensor **out, rt_status *st) {
  *out = NULL;
  return rt_error(st, RT_UNIMPLEMENTED, "this tfsh was built without CUDA");
}
int rt_gpu_to_device(rt_gpu *g, rt_tensor *t, rt_tensor **out, rt_status *st) {
  *out = NULL;
  return rt_error(st, RT_UNIMPLEMENTED, "this tfsh was built without CUDA");
}
int rt_gpu_sync(rt_gpu *g, rt_status *st) { return RT_OK; }
int rt_gpu_check_launch(rt_gpu *g, const char *what, rt_status *st) { return RT_OK; }
void rt_gpu_memory(rt_gpu *g, rt_gpu_mem *m) { memset(m, 0, sizeof *m); }
bool rt_gpu_memory_of(int ordinal, rt_gpu_mem *m) { return false; }

#else

#define STAGE_BYTES ((size_t)8 << 20)   /* two pinned halves: one fills while one copies */

struct rt_gpu {
  int ordinal;
  char label[128];
  cudaStream_t stream;
  cublasHandle_t blas;          /* NULL when cuBLAS could not be loaded: blas_why says why */
  char blas_why[300];
  rt_dev_alloc *alloc;
  pthread_mutex_t copy_mu;      /* the staging buffers */
  pthread_mutex_t blas_mu;      /* the cuBLAS handle */
  void *stage[2];
  cudaEvent_t stage_done[2], done;
};

static rt_gpu *opened[MAX_GPUS];
static pthread_mutex_t open_mu = PTHREAD_MUTEX_INITIALIZER;

static int cuda_error(rt_status *st, const char *label, const char *what, cudaError_t e) {
  return rt_error(st, e == cudaErrorMemoryAllocation ? RT_RESOURCE_EXHAUSTED : RT_INTERNAL,
                  "%s: %s failed: %s (%s)", label, what, cudaGetErrorString(e), cudaGetErrorName(e));
}

#define CU(g, what, call)                                                        \
  do {                                                                           \
    cudaError_t e_ = (call);                                                     \
    if (e_ != cudaSuccess) return cuda_error(st, (g)->label, what, e_);          \
  } while (0)

static void *chunk_get(void *arg, size_t n) {
  rt_gpu *g = arg;
  void *p = NULL;
  cudaSetDevice(g->ordinal);
  if (cudaMalloc(&p, n) != cudaSuccess) {
    cudaGetLastError();
    return NULL;
  }
  return p;
}

static void chunk_put(void *arg, void *p) {
  rt_gpu *g = arg;
  cudaSetDevice(g->ordinal);
  cudaFree(p);
}

static int gpu_init(rt_gpu *g, const rt_gpu_info *info, rt_status *st) {
  snprintf(g->label, sizeof g->label, "GPU:%d (%s)", info->ordinal, info->name);
  g->ordinal = info->ordinal;
  pthread_mutex_init(&g->copy_mu, NULL);
  pthread_mutex_init(&g->blas_mu, NULL);
  CU(g, "cudaSetDevice", cudaSetDevice(g->ordinal));
  CU(g, "cudaStreamCreateWithFlags", cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
  for (int i = 0; i < 2; i++) {
    CU(g, "cudaHostAlloc (pinned staging)", cudaHostAlloc(&g->stage[i], STAGE_BYTES, cudaHostAllocDefault));
    CU(g, "cudaEventCreateWithFlags", cudaEventCreateWithFlags(&g->stage_done[i], cudaEventDisableTiming));
  }
  CU(g, "cudaEventCreateWithFlags", cudaEventCreateWithFlags(&g->done, cudaEventDisableTiming));
  /* cuBLAS is loaded now (dl.h); without it products fail with the reason, nothing else */
  const rt_cublas *B = rt_cublas_lib(g->blas_why, sizeof g->blas_why);
  if (B) {
    cublasStatus_t bs = B->cublasCreate(&g->blas);
    if (bs == CUBLAS_STATUS_SUCCESS) bs = B->cublasSetStream(g->blas, g->stream);
    if (bs != CUBLAS_STATUS_SUCCESS)
      return rt_error(st, RT_INTERNAL, "%s: cuBLAS set-up failed: %s", g->label, B->cublasGetStatusString(bs));
  }
  size_t free_b = 0, total_b = 0;
  CU(g, "cudaMemGetInfo", cudaMemGetInfo(&free_b, &total_b));
  pthread_mutex_lock(&opt_mu);
  double fraction = opt_fraction;
  bool growth = opt_growth;
  opt_set = true;               /* the first device opened fixes the options */
  pthread_mutex_unlock(&opt_mu);
  /* TF1: per_process_gpu_memory_fraction of the total; by default nearly all free memory. */
  uint64_t limit = fraction > 0 ? (uint64_t)((double)total_b * fraction) : (uint64_t)((double)free_b * 0.95);
  rt_chunk_source src = {.get = chunk_get, .put = chunk_put, .arg = g};
  if (!(g->alloc = rt_dev_alloc_new(limit, growth, &src)))
    return rt_error(st, RT_RESOURCE_EXHAUSTED, "%s: out of host memory for the allocator", g->label);
  return RT_OK;
}

int rt_gpu_open(int ordinal, rt_gpu **out, rt_status *st) {
  const rt_gpu_info *info = NULL;
  int n = rt_gpu_devices(&info, NULL);
  *out = NULL;
  for (int i = 0; i < n; i++) {
    if (info[i].ordinal != ordinal) continue;
    if (info[i].fake)
      return rt_error(st, RT_UNIMPLEMENTED,
                      "GPU:%d is a placement-only device (TFSH_FAKE_GPUS): it runs no kernels", i);
    pthread_mutex_lock(&open_mu);
    int rc = RT_OK;
    if (!opened[i]) {
      rt_gpu *g = xcalloc(1, sizeof *g);
      if ((rc = gpu_init(g, &info[i], st))) free(g);   /* a half-made device leaks its CUDA objects: rare */
      else opened[i] = g;
    }
    *out = opened[i];
    pthread_mutex_unlock(&open_mu);
    return rc;
  }
  return rt_error(st, RT_NOT_FOUND, "GPU ordinal %d is not a visible device", ordinal);
}

const char *rt_gpu_label(const rt_gpu *g) { return g->label; }
void *rt_gpu_stream(rt_gpu *g) { return g->stream; }
void *rt_gpu_blas(rt_gpu *g) { return g->blas; }
const char *rt_gpu_blas_why(rt_gpu *g) { return g->blas_why; }
void rt_gpu_blas_lock(rt_gpu *g) { pthread_mutex_lock(&g->blas_mu); }
void rt_gpu_blas_unlock(rt_gpu *g) { pthread_mutex_unlock(&g->blas_mu); }

static void device_free(void *data, void *arg) { rt_dev_alloc_put(((rt_gpu *)arg)->alloc, data); }

rt_tensor *rt_gpu_tensor(rt_gpu *g, rt_dtype t, const rt_shape *shape, rt_status *st) {
  int64_t n = rt_shape_numel(shape);
  if (t == RT_STRING || n < 0 || !rt_dtype_size(t)) {
    rt_error(st, RT_INVALID_ARGUMENT, "%s: cannot hold a %s tensor", g->label, rt_dtype_name(t));
    return NULL;
  }
  size_t nbytes = (size_t)n * rt_dtype_size(t);
  rt_buffer *b = xcalloc(1, sizeof *b);
  void *p = rt_dev_alloc_get(g->alloc, nbytes);
  if (!p) {
    rt_gpu_mem m;
    rt_gpu_memory(g, &m);
    free(b);
    rt_error(st, RT_RESOURCE_EXHAUSTED,
             "OOM when allocating tensor of %zu bytes on %s: %llu bytes in use of a %llu-byte limit",
             nbytes, g->label, (unsigned long long)m.in_use, (unsigned long long)m.limit);
    return NULL;
  }
  atomic_init(&b->refs, 1);
  b->dev = RT_DEV_GPU;
  b->nbytes = nbytes;
  b->data = p;
  b->free_fn = device_free;
  b->free_arg = g;
  rt_tensor *x = rt_tensor_wrap(t, shape, b);
  rt_buffer_unref(b);
  if (!x) rt_error(st, RT_RESOURCE_EXHAUSTED, "out of memory");
  return x;
}

/* memcpy on the intra-op pool for large pieces: one thread's memcpy would cap the staged
 * copy far below the bus. */
typedef struct copy_job {
  char *dst;
  const char *src;
  size_t len;
} copy_job;

enum { COPY_PIECE = 1 << 20 };
static void copy_pieces(void *arg, int64_t lo, int64_t hi, int who) {
  const copy_job *j = arg;
  size_t off = (size_t)lo * COPY_PIECE, end = (size_t)hi * COPY_PIECE;
  memcpy(j->dst + off, j->src + off, (end < j->len ? end : j->len) - off);
}

static void host_copy(void *dst, const void *src, size_t len) {
  int64_t n = (int64_t)((len + COPY_PIECE - 1) / COPY_PIECE);
  rt_parallel_range(n, 1, n > 1 ? rt_intra_threads() : 1, copy_pieces,
                    &(copy_job){.dst = dst, .src = src, .len = len});
}

/* Copy nbytes between host memory and the device through the two pinned halves: a half is
 * refilled only after the event of its last copy; to the host, the next piece's DMA runs
 * while this one is copied out. */
static int staged_copy(rt_gpu *g, void *dst, const void *src, size_t nbytes, bool to_device, rt_status *st) {
  size_t n = (nbytes + STAGE_BYTES - 1) / STAGE_BYTES;
#define LEN(k) (nbytes - (k) * STAGE_BYTES < STAGE_BYTES ? nbytes - (k) * STAGE_BYTES : STAGE_BYTES)
  if (to_device) {
    for (size_t k = 0; k < n; k++) {
      int h = (int)(k & 1);
      size_t off = k * STAGE_BYTES;
      CU(g, "cudaEventSynchronize", cudaEventSynchronize(g->stage_done[h]));
      host_copy(g->stage[h], (const char *)src + off, LEN(k));
      CU(g, "cudaMemcpyAsync (host to device)",
         cudaMemcpyAsync((char *)dst + off, g->stage[h], LEN(k), cudaMemcpyHostToDevice, g->stream));
      CU(g, "cudaEventRecord", cudaEventRecord(g->stage_done[h], g->stream));
    }
    /* The caller's host buffer may go once we return: wait for the last halves. */
    for (int h = 0; h < 2; h++) CU(g, "cudaEventSynchronize", cudaEventSynchronize(g->stage_done[h]));
    return RT_OK;
  }
  if (n > 0) {
    CU(g, "cudaMemcpyAsync (device to host)", cudaMemcpyAsync(g->stage[0], src, LEN(0), cudaMemcpyDeviceToHost, g->stream));
    CU(g, "cudaEventRecord", cudaEventRecord(g->stage_done[0], g->stream));
  }
  for (size_t k = 0; k < n; k++) {
    int h = (int)(k & 1);
    if (k + 1 < n) {
      CU(g, "cudaMemcpyAsync (device to host)",
         cudaMemcpyAsync(g->stage[!h], (const char *)src + (k + 1) * STAGE_BYTES, LEN(k + 1), cudaMemcpyDeviceToHost,
                         g->stream));
      CU(g, "cudaEventRecord", cudaEventRecord(g->stage_done[!h], g->stream));
    }
    CU(g, "a kernel or the copy to the host (seen at cudaEventSynchronize)", cudaEventSynchronize(g->stage_done[h]));
    host_copy((char *)dst + k * STAGE_BYTES, g->stage[h], LEN(k));
  }
#undef LEN
  return RT_OK;
}

int rt_gpu_to_host(rt_gpu *g, rt_tensor *t, rt_tensor **out, rt_status *st) {
  *out = NULL;
  if (!t->buf || t->buf->dev != RT_DEV_GPU) {
    *out = rt_tensor_ref(t);
    return RT_OK;
  }
  rt_tensor *h = rt_tensor_new_uninit(t->dtype, &t->shape);
  if (!h) return rt_error(st, RT_RESOURCE_EXHAUSTED, "out of memory copying a tensor from %s", g->label);
  pthread_mutex_lock(&g->copy_mu);
  int rc = cudaSetDevice(g->ordinal) != cudaSuccess
               ? rt_error(st, RT_INTERNAL, "%s: cudaSetDevice failed", g->label)
               : staged_copy(g, rt_tensor_data(h), rt_tensor_data(t), rt_tensor_nbytes(t), false, st);
  pthread_mutex_unlock(&g->copy_mu);
  if (rc) rt_tensor_unref(h);
  else *out = h;
  return rc;
}

int rt_gpu_to_device(rt_gpu *g, rt_tensor *t, rt_tensor **out, rt_status *st) {
  *out = NULL;
  if (t->buf && t->buf->dev == RT_DEV_GPU) {
    *out = rt_tensor_ref(t);
    return RT_OK;
  }
  if (t->dtype == RT_STRING)
    return rt_error(st, RT_INVALID_ARGUMENT, "%s: string tensors stay in host memory", g->label);
  if (cudaSetDevice(g->ordinal) != cudaSuccess) return rt_error(st, RT_INTERNAL, "%s: cudaSetDevice failed", g->label);
  rt_tensor *d = rt_gpu_tensor(g, t->dtype, &t->shape, st);
  if (!d) return st->code;
  pthread_mutex_lock(&g->copy_mu);
  int rc = t->buf ? staged_copy(g, rt_tensor_data(d), rt_tensor_data(t), rt_tensor_nbytes(t), true, st) : RT_OK;
  pthread_mutex_unlock(&g->copy_mu);
  if (rc) rt_tensor_unref(d);
  else *out = d;
  return rc;
}

int rt_gpu_sync(rt_gpu *g, rt_status *st) {
  CU(g, "cudaSetDevice", cudaSetDevice(g->ordinal));
  CU(g, "cudaEventRecord", cudaEventRecord(g->done, g->stream));
  CU(g, "a kernel on the stream (seen at cudaEventSynchronize)", cudaEventSynchronize(g->done));
  return RT_OK;
}

int rt_gpu_check_launch(rt_gpu *g, const char *what, rt_status *st) {
  CU(g, what, cudaGetLastError());
  return RT_OK;
}

void rt_gpu_memory(rt_gpu *g, rt_gpu_mem *m) {
  rt_dev_alloc_stats s;
  rt_dev_alloc_stats_get(g->alloc, &s);
  m->in_use = s.in_use;
  m->peak = s.peak;
  m->reserved = s.reserved;
  m->limit = s.limit;
}

bool rt_gpu_memory_of(int ordinal, rt_gpu_mem *m) {
  rt_gpu *g = NULL;
  pthread_mutex_lock(&open_mu);
  for (int i = 0; i < MAX_GPUS; i++)
    if (opened[i] && opened[i]->ordinal == ordinal) g = opened[i];
  pthread_mutex_unlock(&open_mu);
  if (g) rt_gpu_memory(g, m);
  return g != NULL;
}

#endif

/* ---- the executor's hooks --------------------------------------------------------------- */

static bool on_device(const rt_tensor *t) { return t->buf && t->buf->dev == RT_DEV_GPU; }

static int device_gpu(rt_device *d, rt_gpu **g, rt_status *st) {
  int rc = rt_gpu_open(d->gpu_ordinal, g, st);
  if (rc) rt_status_prefix(st, "%s: ", d->name);
  return rc;
}

int rt_device_to_host(rt_device *d, rt_tensor *t, rt_tensor **out, rt_status *st) {
  rt_gpu *g;
  if (!on_device(t)) {
    *out = rt_tensor_ref(t);
    return RT_OK;
  }
  int rc = device_gpu(d, &g, st);
  return rc ? rc : rt_gpu_to_host(g, t, out, st);
}

int rt_device_accept(rt_device *d, rt_tensor *t, rt_tensor **out, rt_status *st) {
  rt_gpu *g;
  if (d->type != RT_DEV_GPU || d->fake_gpu || on_device(t) || !t->buf ||
      (t->dtype != RT_FLOAT && t->dtype != RT_DOUBLE && t->dtype != RT_BOOL)) {
    *out = rt_tensor_ref(t);
    return RT_OK;
  }
  int rc = device_gpu(d, &g, st);
  return rc ? rc : rt_gpu_to_device(g, t, out, st);
}

int rt_device_step_end(rt_device *d, rt_status *st) {
  rt_gpu *g;
  if (d->type != RT_DEV_GPU || d->fake_gpu) return RT_OK;
  int rc = device_gpu(d, &g, st);
  return rc ? rc : rt_gpu_sync(g, st);
}
