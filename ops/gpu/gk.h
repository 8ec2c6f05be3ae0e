/* The context of one GPU kernel (ops/gpu/gpu_ops.c), shared by the GPU op files: the
 * device, its stream, device copies of host inputs held until the end. CUDA builds only.
 * UNVERIFIED on a GPU. */
#ifndef TFSH_GPU_GK_H
#define TFSH_GPU_GK_H

#include <stdbool.h>

#include "ops/cuda/kernels.h"
#include "runtime/gpu/gpu.h"
#include "runtime/op.h"

typedef struct gk {
  rt_kernel_ctx *c;
  rt_gpu *g;
  void *stream;
  rt_tensor *held[16];   /* device copies of host inputs (and scratch), dropped at the end */
  int n_held;
} gk;

int gk_begin(gk *k, rt_kernel_ctx *c);
int gk_end(gk *k, int rc);                 /* returns rc */
void *gin(gk *k, int i);                   /* input i in device memory (NULL: error set) */
rt_tensor *hin(gk *k, int i);              /* input i in host memory (NULL: error set) */
tg_scalar scalar_of(const rt_tensor *t);   /* a scalar the kernel reads itself */
void *gout(gk *k, int i, rt_dtype t, const rt_shape *s);   /* output i in device memory */
int launched(gk *k, int err, const char *what);            /* a launch's status as an error */
int need_f32(gk *k, rt_dtype t);
/* The op's CPU kernel on host copies of its inputs (all, or all but input 0 when keep0),
 * its outputs uploaded when upload: the fallback for what the GPU path does not cover. */
int cpu_kernel(rt_kernel_ctx *c, bool keep0, bool upload);

#endif
