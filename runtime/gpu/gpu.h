/* GPU devices seen from C: enumeration, memory, streams and host<->device copies.
 *
 * The CUDA code lives behind this header (runtime/gpu/gpu.c calls the CUDA runtime's C API;
 * the .cu files of ops/cuda/ hold the kernels); nothing here exposes a CUDA type. A build without the
 * CUDA toolkit has the same interface with no devices. A build with it runs CPU-only when
 * the driver or the devices are missing: rt_gpu_devices says why, once, and nothing fails.
 *
 * UNVERIFIED: this code compiles against CUDA 13 but has not yet run on a GPU.
 *
 * Tests of placement on machines without a GPU: TFSH_FAKE_GPUS=N makes N fake devices
 * ("Fake GPU (placement only)", no memory): placement treats them as GPUs (ops with a GPU
 * row go there, partitions and _Send/_Recv edges form as with a real one) but their
 * executors run the CPU kernels on host memory; rt_gpu_open refuses them. */
#ifndef TFSH_GPU_H
#define TFSH_GPU_H

#include <stdbool.h>
#include <stdint.h>

#include "base/status.h"
#include "runtime/tensor.h"

typedef struct rt_gpu_info {
  int ordinal;            /* CUDA's device number (after CUDA_VISIBLE_DEVICES) */
  char name[96];          /* "NVIDIA H200" */
  uint64_t total_bytes;
  int major, minor;       /* compute capability */
  bool fake;
} rt_gpu_info;

/* The process's GPUs, found once (thread-safe). *note is "" when some exist, else one line
 * saying why there are none ("no GPU: CUDA driver not found (...); running CPU-only"), or
 * "" too in a build without CUDA (nothing to say). */
int rt_gpu_devices(const rt_gpu_info **out, const char **note);

/* CUDA_VISIBLE_DEVICES as CUDA reads it: the visible ordinals among `physical` devices, in
 * order (a list stops at the first invalid entry; "" or "-1" hides all; unset shows all).
 * Returns how many, at most max. The runtime applies it to fake devices; CUDA applies it
 * to real ones before tfsh sees them. */
int rt_gpu_visible(const char *env, int physical, int *ordinals, int max);

/* gpu_options of the first session or server that sets them (later ones are ignored, as
 * TF1's process-wide GPU allocator): fraction in (0, 1], 0 = TF1's default (nearly all
 * free memory); allow_growth: reserve as needed instead of at once. */
void rt_gpu_set_memory_options(double fraction, bool allow_growth);

/* Per device (ordinal): its stream, BLAS handle and allocator, made on first use. */
typedef struct rt_gpu rt_gpu;
int rt_gpu_open(int ordinal, rt_gpu **out, rt_status *st);
const char *rt_gpu_label(const rt_gpu *g);      /* "GPU:0 (NVIDIA H200)" for messages */
void *rt_gpu_stream(rt_gpu *g);                 /* cudaStream_t */
void *rt_gpu_blas(rt_gpu *g);                   /* cublasHandle_t on the stream; NULL: */
const char *rt_gpu_blas_why(rt_gpu *g);         /* why cuBLAS could not be loaded */
/* One cuBLAS call at a time per device (executors of several sessions may share it). */
void rt_gpu_blas_lock(rt_gpu *g);
void rt_gpu_blas_unlock(rt_gpu *g);

/* A tensor in device memory (uninitialized), from the caching allocator. */
rt_tensor *rt_gpu_tensor(rt_gpu *g, rt_dtype t, const rt_shape *shape, rt_status *st);
/* Copies: enqueued on the device's stream; to_host waits on an event for its copy (the
 * bytes pass through pinned memory). A tensor already where it is asked for is returned
 * with a new reference. Strings never go to a GPU. */
int rt_gpu_to_host(rt_gpu *g, rt_tensor *t, rt_tensor **out, rt_status *st);
int rt_gpu_to_device(rt_gpu *g, rt_tensor *t, rt_tensor **out, rt_status *st);
/* Waits on an event recorded after everything enqueued so far; reports a failed kernel. */
int rt_gpu_sync(rt_gpu *g, rt_status *st);
/* Checks the last launch on g (cudaGetLastError) and names the op on failure. */
int rt_gpu_check_launch(rt_gpu *g, const char *what, rt_status *st);

/* ---- the executor's hooks (runtime/exec.c), for any device ----------------------------
 * On a CPU device they only take a new reference. On a GPU device: a tensor leaving the
 * device (a _Send, a fetch) is copied to host memory through the pinned staging buffers;
 * a tensor arriving (a _Recv, a feed) is copied to the device unless it is an int32/int64
 * or string tensor (shapes and indices stay on the host, as TF1's HostMemory); at the end
 * of a step the executor waits on an event for its stream, which reports a failed kernel. */
struct rt_device;
int rt_device_to_host(struct rt_device *d, rt_tensor *t, rt_tensor **out, rt_status *st);
int rt_device_accept(struct rt_device *d, rt_tensor *t, rt_tensor **out, rt_status *st);
int rt_device_step_end(struct rt_device *d, rt_status *st);

typedef struct rt_gpu_mem {
  uint64_t in_use, peak, reserved, limit;
} rt_gpu_mem;
void rt_gpu_memory(rt_gpu *g, rt_gpu_mem *m);
/* The same for a device by ordinal, only if it has been opened (the views never open one):
 * false when not. */
bool rt_gpu_memory_of(int ordinal, rt_gpu_mem *m);

#endif
