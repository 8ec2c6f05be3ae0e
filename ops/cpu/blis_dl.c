/* BLIS, loaded on its first call (base/dl.h), as net/zmq_dl.c loads ZeroMQ: the BLIS
 * functions ops/ calls, defined here under their own names as trampolines. The
 * kernel set is chosen before that first call (cpuarch.c sets BLIS_ARCH_TYPE, which BLIS
 * reads when it initialises), so loading late changes nothing but the start-up time. */
#include <blis.h>

#if !TFSH_BLIS_LINKED   /* sanitizer builds link BLIS (CMakeLists.txt) */

#include <pthread.h>

#include "base/dl.h"

#ifndef TFSH_BLIS_SONAME
#define TFSH_BLIS_SONAME "libblis.so.4"
#endif

#define GEMM_PARAMS(t)                                                                    \
  (trans_t ta, trans_t tb, dim_t m, dim_t n, dim_t k, t *alpha, t *a, inc_t rsa, inc_t csa, \
   t *b, inc_t rsb, inc_t csb, t *beta, t *c, inc_t rsc, inc_t csc, cntx_t *cx, rntm_t *rt)
#define GEMM_ARGS (ta, tb, m, n, k, alpha, a, rsa, csa, b, rsb, csb, beta, c, rsc, csc, cx, rt)

/* X(return type, name, parameters, arguments); V(...) for those that return nothing */
#define BLIS_FNS(X, V)                                                                      \
  V(void, bli_init, (void), ())                                                             \
  V(void, bli_sgemm_ex, GEMM_PARAMS(float), GEMM_ARGS)                                      \
  V(void, bli_dgemm_ex, GEMM_PARAMS(double), GEMM_ARGS)                                     \
  X(cntx_t *, bli_gks_query_cntx, (void), ())                                               \
  X(arch_t, bli_arch_query_id, (void), ())                                                  \
  X(char *, bli_arch_string, (arch_t id), (id))                                             \
  /* called only from blis.h's own static helpers, which an unoptimised build keeps */     \
  V(void, bli_abort, (void), ())                                                            \
  V(void, bli_obj_scalar_detach, (obj_t * a, obj_t *alpha), (a, alpha))                     \
  X(bool, bli_obj_imag_is_zero, (obj_t * a), (a))                                           \
  X(int, bli_pthread_mutex_lock, (bli_pthread_mutex_t * mu), (mu))                          \
  X(int, bli_pthread_mutex_unlock, (bli_pthread_mutex_t * mu), (mu))                        \
  X(pba_t *, bli_pba_query, (void), ())                                                     \
  X(void *, bli_thrcomm_bcast, (dim_t id, void *p, thrcomm_t *c), (id, p, c))               \
  V(void, bli_thrcomm_barrier, (dim_t id, thrcomm_t * c), (id, c))                          \
  V(void, bli_thread_range_sub,                                                             \
    (thrinfo_t * t, dim_t n, dim_t bf, bool low, dim_t *start, dim_t *end),                 \
    (t, n, bf, low, start, end))

#define SLOT(ret, name, params, args) static ret(*p_##name) params;
BLIS_FNS(SLOT, SLOT)
#undef SLOT

static void load(void) {
#define NAME(ret, name, params, args) #name,
#define ADDR(ret, name, params, args) (void *)&p_##name,
  static const char *const names[] = {BLIS_FNS(NAME, NAME)};
  void *const slots[] = {BLIS_FNS(ADDR, ADDR)};
#undef NAME
#undef ADDR
  dl_require(TFSH_BLIS_SONAME, "libblis4-openmp", names, slots, sizeof names / sizeof *names);
  p_bli_init();   /* bli_gks_query_cntx and bli_arch_query_id expect it done */
}

static pthread_once_t once = PTHREAD_ONCE_INIT;

#define TRAMPOLINE(ret, name, params, args) \
  ret name params {                         \
    pthread_once(&once, load);              \
    return p_##name args;                   \
  }
#define TRAMPOLINE_VOID(ret, name, params, args) \
  ret name params {                              \
    pthread_once(&once, load);                   \
    p_##name args;                               \
  }
BLIS_FNS(TRAMPOLINE, TRAMPOLINE_VOID)
#undef TRAMPOLINE
#undef TRAMPOLINE_VOID

#endif
