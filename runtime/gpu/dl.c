/* Loading cuBLAS and cuDNN on first use (dl.h). */
#include "runtime/gpu/dl.h"

#if TFSH_HAVE_CUDA

#include <dlfcn.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define RT_DL_STR(x) #x
#define RT_DL_NAME(x) RT_DL_STR(x)   /* the symbol after cublas_v2.h's renames (cublasSgemm_v2) */

typedef struct lib_state {
  pthread_once_t once;
  void *handle;
  char why[300];
  bool ok;
} lib_state;

#ifndef TFSH_CUDA_LIBDIR
#define TFSH_CUDA_LIBDIR "/usr/local/cuda/lib64"
#endif
#ifndef TFSH_CUDNN_LIBDIR
#define TFSH_CUDNN_LIBDIR TFSH_CUDA_LIBDIR
#endif

/* dlopen the first of names that loads, on the system's paths and then in dir (where the
 * build found the library); the caller resolves every symbol. */
static void *open_any(const char *const *names, const char *dir, char *why, size_t n) {
  void *h = NULL;
  char first[200] = "", path[600];
  for (int pass = 0; pass < 2 && !h; pass++)
    for (int i = 0; names[i] && !h; i++) {
      snprintf(path, sizeof path, "%s%s%s", pass ? dir : "", pass ? "/" : "", names[i]);
      h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
      if (!h && !first[0]) snprintf(first, sizeof first, "%s", dlerror());
    }
  if (!h) snprintf(why, n, "cannot load %s: %s", names[0], first);
  return h;
}

static bool resolve(void *h, const char *name, void **slot, const char *lib, char *why, size_t n) {
  *slot = dlsym(h, name);
  if (!*slot) snprintf(why, n, "%s has no %s", lib, name);
  return *slot != NULL;
}

static lib_state blas_state = {.once = PTHREAD_ONCE_INIT};
static rt_cublas blas;

static void load_blas(void) {
  static const char *const names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so", NULL};
  void *h = open_any(names, TFSH_CUDA_LIBDIR, blas_state.why, sizeof blas_state.why);
  bool ok = h != NULL;
#define RESOLVE(fn) ok = ok && resolve(h, RT_DL_NAME(fn), (void **)&blas.fn, "cuBLAS", blas_state.why, sizeof blas_state.why);
  RT_CUBLAS_FNS(RESOLVE)
#undef RESOLVE
  blas_state.handle = h;
  blas_state.ok = ok;
}

const rt_cublas *rt_cublas_lib(char *why, size_t why_len) {
  pthread_once(&blas_state.once, load_blas);
  if (!blas_state.ok && why) snprintf(why, why_len, "%s", blas_state.why);
  return blas_state.ok ? &blas : NULL;
}

#if TFSH_HAVE_CUDNN
static lib_state dnn_state = {.once = PTHREAD_ONCE_INIT};
static rt_cudnn dnn;

static void load_dnn(void) {
  static const char *const names[] = {"libcudnn.so.9", "libcudnn.so", NULL};
  void *h = open_any(names, TFSH_CUDNN_LIBDIR, dnn_state.why, sizeof dnn_state.why);
  bool ok = h != NULL;
#define RESOLVE(fn) ok = ok && resolve(h, RT_DL_NAME(fn), (void **)&dnn.fn, "cuDNN", dnn_state.why, sizeof dnn_state.why);
  RT_CUDNN_FNS(RESOLVE)
#undef RESOLVE
  dnn_state.handle = h;
  dnn_state.ok = ok;
}

const rt_cudnn *rt_cudnn_lib(char *why, size_t why_len) {
  pthread_once(&dnn_state.once, load_dnn);
  if (!dnn_state.ok && why) snprintf(why, why_len, "%s", dnn_state.why);
  return dnn_state.ok ? &dnn : NULL;
}
#endif

#endif
