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

/* load_NAME and the getter for one library: its names, where the build found it, its
 * function list (dl.h). */
#define LIBRARY(NAME, TYPE, FNS, DIR, ...)                                                           \
  static lib_state NAME##_state = {.once = PTHREAD_ONCE_INIT};                                       \
  static TYPE NAME;                                                                                  \
  static void load_##NAME(void) {                                                                    \
    static const char *const names[] = {__VA_ARGS__, NULL};                                         \
    void *h = open_any(names, DIR, NAME##_state.why, sizeof NAME##_state.why);                       \
    bool ok = h != NULL;                                                                             \
    FNS(RESOLVE_##NAME)                                                                              \
    NAME##_state.handle = h;                                                                         \
    NAME##_state.ok = ok;                                                                            \
  }                                                                                                  \
  const TYPE *TYPE##_lib(char *why, size_t why_len) {                                                \
    pthread_once(&NAME##_state.once, load_##NAME);                                                   \
    if (!NAME##_state.ok && why) snprintf(why, why_len, "%s", NAME##_state.why);                     \
    return NAME##_state.ok ? &NAME : NULL;                                                           \
  }

#define RESOLVE_blas(fn) ok = ok && resolve(h, RT_DL_NAME(fn), (void **)&blas.fn, "cuBLAS", blas_state.why, sizeof blas_state.why);
LIBRARY(blas, rt_cublas, RT_CUBLAS_FNS, TFSH_CUDA_LIBDIR, "libcublas.so.13", "libcublas.so.12", "libcublas.so")

#if TFSH_HAVE_CUDNN
#define RESOLVE_dnn(fn) ok = ok && resolve(h, RT_DL_NAME(fn), (void **)&dnn.fn, "cuDNN", dnn_state.why, sizeof dnn_state.why);
LIBRARY(dnn, rt_cudnn, RT_CUDNN_FNS, TFSH_CUDNN_LIBDIR, "libcudnn.so.9", "libcudnn.so")
#endif

#endif
