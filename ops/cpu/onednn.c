/* Float convolutions through oneDNN, loaded with dlopen on first use: see onednn.h.
 *
 * Primitives are created once for each direction and geometry (the batch of a tile
 * included) and kept for the process in a small table, as oneDNN's JIT makes creation cost
 * milliseconds. They run with user-managed scratch, so that two threads may run one
 * primitive at once, each on its own memory objects and scratch. */
#include "ops/cpu/onednn.h"

#if defined(__has_include)
#if __has_include(<oneapi/dnnl/dnnl.h>)
#define TFSH_HAVE_DNNL 1
#endif
#endif

#ifndef TFSH_HAVE_DNNL

op_dnnl_prim *op_dnnl_prepare(int kind, const op_dnnl_conv *g) { (void)kind, (void)g; return NULL; }
size_t op_dnnl_scratch(const op_dnnl_prim *p) { (void)p; return 0; }
size_t op_dnnl_filter_bytes(const op_dnnl_prim *p) { (void)p; return 0; }
bool op_dnnl_same_filter(const op_dnnl_prim *p, const op_dnnl_prim *q) { (void)p, (void)q; return false; }
bool op_dnnl_filter(const op_dnnl_prim *p, float *hwio, void *own) {
  (void)p, (void)hwio, (void)own;
  return false;
}
bool op_dnnl_run(const op_dnnl_prim *p, float *x, float *w, float *y, void *scratch) {
  (void)p, (void)x, (void)w, (void)y, (void)scratch;
  return false;
}
void op_dnnl_enable(bool on) { (void)on; }
const char *op_dnnl_version(void) { return NULL; }
bool op_dnnl_gemm_can(int64_t m, int64_t n, int64_t k, int64_t rsa, int64_t csa, int64_t rsb,
                      int64_t csb, int64_t rsc) {
  (void)m, (void)n, (void)k, (void)rsa, (void)csa, (void)rsb, (void)csb, (void)rsc;
  return false;
}
bool op_dnnl_sgemm(int64_t m, int64_t n, int64_t k, const float *a, int64_t rsa, int64_t csa,
                   const float *b, int64_t rsb, int64_t csb, float beta, float *c, int64_t rsc) {
  (void)m, (void)n, (void)k, (void)a, (void)rsa, (void)csa, (void)b, (void)rsb, (void)csb;
  (void)beta, (void)c, (void)rsc;
  return false;
}
bool op_dnnl_sgemm_threads(int threads, int64_t m, int64_t n, int64_t k, const float *a,
                           const float *b, float *c) {
  (void)threads, (void)m, (void)n, (void)k, (void)a, (void)b, (void)c;
  return false;
}

#else

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <oneapi/dnnl/dnnl.h>

/* The entry points used, resolved from libdnnl.so.2 (and omp_set_num_threads from the
 * OpenMP runtime it brings). */
#define DNNL_FUNCS(X)                                                                       \
  X(dnnl_engine_create) X(dnnl_memory_desc_init_by_tag) X(dnnl_convolution_forward_desc_init) \
  X(dnnl_convolution_backward_data_desc_init) X(dnnl_convolution_backward_weights_desc_init) \
  X(dnnl_primitive_attr_create) X(dnnl_primitive_attr_set_scratchpad_mode)                  \
  X(dnnl_primitive_attr_destroy) X(dnnl_primitive_desc_create)                               \
  X(dnnl_primitive_desc_destroy) X(dnnl_primitive_desc_query)                                \
  X(dnnl_primitive_desc_query_md) X(dnnl_memory_desc_get_size) X(dnnl_memory_desc_equal)     \
  X(dnnl_reorder_primitive_desc_create) X(dnnl_primitive_create) X(dnnl_primitive_execute)   \
  X(dnnl_stream_create) X(dnnl_stream_destroy) X(dnnl_stream_wait) X(dnnl_memory_create)     \
  X(dnnl_memory_destroy) X(dnnl_version) X(dnnl_sgemm)

static struct {
#define X(f) __typeof__(f) *f;
  DNNL_FUNCS(X)
#undef X
  void (*omp_set_num_threads)(int);
  dnnl_engine_t eng;
  char version[32];
} D;

static bool loaded;
static _Atomic bool off;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void load(void) {
  const char *env = getenv("TFSH_DNNL");
  if (env && !strcmp(env, "0")) return;
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
  /* Not in sanitizer builds: the OpenMP runtime under oneDNN is not instrumented (TSan reads
   * its barriers as races) and LeakSanitizer's exit scan crashes on its threads. */
  return;
#endif
  void *h = dlopen("libdnnl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (!h) return;
#define X(f) if (!(D.f = (__typeof__(f) *)dlsym(h, #f))) return;
  DNNL_FUNCS(X)
#undef X
  D.omp_set_num_threads = (void (*)(int))dlsym(h, "omp_set_num_threads");
  if (!D.omp_set_num_threads || D.dnnl_engine_create(&D.eng, dnnl_cpu, 0) != dnnl_success) return;
  const dnnl_version_t *v = D.dnnl_version();
  snprintf(D.version, sizeof D.version, "oneDNN %d.%d.%d", v->major, v->minor, v->patch);
  loaded = true;
}

static bool ready(void) {
  pthread_once(&load_once, load);
  return loaded;
}

void op_dnnl_enable(bool on) { off = !on; }
const char *op_dnnl_version(void) { return ready() ? D.version : NULL; }

struct op_dnnl_prim {
  int kind;
  op_dnnl_conv g;
  dnnl_primitive_t prim;          /* NULL: oneDNN has no fast kernel for it */
  dnnl_memory_desc_t x, w, y;     /* w: the kernel's own layout of the filter */
  dnnl_memory_desc_t hwio, sd;    /* TF's filter layout; the scratch */
  dnnl_primitive_t reorder;       /* hwio <-> w (in for FWD and BWD_DATA, out for
                                     BWD_WEIGHTS); NULL: w is hwio */
  size_t scratch;
};

enum { CACHE = 64 };
static op_dnnl_prim cache[CACHE];
static int cached;
static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;

/* The reorder between TF's filter layout and the kernel's into p->reorder (none when they
 * are the same). */
static bool create_reorder(op_dnnl_prim *p) {
  if (D.dnnl_memory_desc_equal(&p->w, &p->hwio)) return true;
  bool in = p->kind != OP_DNNL_BWD_WEIGHTS;
  dnnl_primitive_desc_t rpd;
  if (D.dnnl_reorder_primitive_desc_create(&rpd, in ? &p->hwio : &p->w, D.eng,
                                           in ? &p->w : &p->hwio, D.eng, NULL))
    return false;
  bool ok = !D.dnnl_primitive_create(&p->reorder, rpd);
  D.dnnl_primitive_desc_destroy(rpd);
  return ok;
}

/* The descs of p's convolution: x, y, hwio, and fd / bd (the forward one, and the
 * backward one for the other kinds) with the filter's layout left to oneDNN (with TF's
 * hwio forced on them, oneDNN 2.6 falls back to im2col + GEMM). */
static bool descs(op_dnnl_prim *p, dnnl_convolution_desc_t *fd, dnnl_convolution_desc_t *bd) {
  const op_dnnl_conv *g = &p->g;
  dnnl_dims_t xd = {g->n, g->ic, g->ih, g->iw}, wd = {g->oc, g->ic, g->kh, g->kw};
  dnnl_dims_t yd = {g->n, g->oc, g->oh, g->ow}, st = {g->sh, g->sw}, pl = {g->pt, g->pl};
  dnnl_dims_t pr = {(g->oh - 1) * g->sh + g->kh - g->ih - g->pt,
                    (g->ow - 1) * g->sw + g->kw - g->iw - g->pl};
  if (pr[0] < 0 || pr[1] < 0) return false;   /* VALID with rows left over: own kernels */
  dnnl_memory_desc_t any;
  if (D.dnnl_memory_desc_init_by_tag(&p->x, 4, xd, dnnl_f32, dnnl_nhwc) ||
      D.dnnl_memory_desc_init_by_tag(&p->hwio, 4, wd, dnnl_f32, dnnl_hwio) ||
      D.dnnl_memory_desc_init_by_tag(&any, 4, wd, dnnl_f32, dnnl_format_tag_any) ||
      D.dnnl_memory_desc_init_by_tag(&p->y, 4, yd, dnnl_f32, dnnl_nhwc))
    return false;
  if (D.dnnl_convolution_forward_desc_init(fd, dnnl_forward_training, dnnl_convolution_direct,
                                           &p->x, &any, NULL, &p->y, st, pl, pr))
    return false;
  if (p->kind == OP_DNNL_BWD_DATA)
    return !D.dnnl_convolution_backward_data_desc_init(bd, dnnl_convolution_direct, &p->x, &any,
                                                       &p->y, st, pl, pr);
  if (p->kind == OP_DNNL_BWD_WEIGHTS)
    return !D.dnnl_convolution_backward_weights_desc_init(bd, dnnl_convolution_direct, &p->x,
                                                          &any, NULL, &p->y, st, pl, pr);
  return true;
}

/* The primitive for p's kind and geometry into p; false leaves p->prim NULL. */
static bool create(op_dnnl_prim *p) {
  dnnl_convolution_desc_t fd, bd;
  dnnl_primitive_attr_t attr;
  if (!descs(p, &fd, &bd) || D.dnnl_primitive_attr_create(&attr)) return false;
  dnnl_primitive_desc_t hint = NULL, pd = NULL;
  bool ok = !D.dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
  ok = ok && !D.dnnl_primitive_desc_create(&hint, &fd, attr, D.eng, NULL);
  if (ok && p->kind != OP_DNNL_FWD) ok = !D.dnnl_primitive_desc_create(&pd, &bd, attr, D.eng, hint);
  else if (ok) pd = hint, hint = NULL;
  const char *impl = NULL;
  ok = ok && !D.dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
  /* Reference and GEMM-based implementations are no faster than the own kernels. */
  ok = ok && impl && strncmp(impl, "ref", 3) && !strstr(impl, "gemm");
  if (ok) {
    int wq = p->kind == OP_DNNL_BWD_WEIGHTS ? dnnl_query_diff_weights_md : dnnl_query_weights_md;
    p->w = *D.dnnl_primitive_desc_query_md(pd, wq, 0);
    p->sd = *D.dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    p->scratch = D.dnnl_memory_desc_get_size(&p->sd);
    ok = create_reorder(p) && !D.dnnl_primitive_create(&p->prim, pd);
    if (!ok) p->prim = NULL;
  }
  if (pd) D.dnnl_primitive_desc_destroy(pd);
  if (hint) D.dnnl_primitive_desc_destroy(hint);
  D.dnnl_primitive_attr_destroy(attr);
  return ok;
}

op_dnnl_prim *op_dnnl_prepare(int kind, const op_dnnl_conv *g) {
  if (off || !ready()) return NULL;
  op_dnnl_prim *p = NULL;
  pthread_mutex_lock(&cache_mu);
  for (int i = 0; i < cached && !p; i++)
    if (cache[i].kind == kind && !memcmp(&cache[i].g, g, sizeof *g)) p = &cache[i];
  if (!p && cached < CACHE) {   /* a full table: the rest run on the own kernels */
    p = &cache[cached++];
    *p = (op_dnnl_prim){.kind = kind, .g = *g};
    D.omp_set_num_threads(1);   /* kernels are chosen and blocked for the threads a call gets */
    create(p);
  }
  pthread_mutex_unlock(&cache_mu);
  return p && p->prim ? p : NULL;
}

size_t op_dnnl_scratch(const op_dnnl_prim *p) { return p->scratch; }

size_t op_dnnl_filter_bytes(const op_dnnl_prim *p) {
  return p->reorder ? D.dnnl_memory_desc_get_size(&p->w) : 0;
}

bool op_dnnl_same_filter(const op_dnnl_prim *p, const op_dnnl_prim *q) {
  return D.dnnl_memory_desc_equal(&p->w, &q->w);
}

/* One run of prim on the calling thread, over n memory objects: mem[i] as md[i], arg[i]. */
static bool execute(dnnl_primitive_t prim, int n, const int *arg,
                    const dnnl_memory_desc_t *const *md, void *const *mem) {
  dnnl_stream_t s;
  dnnl_memory_t m[4] = {0};
  dnnl_exec_arg_t a[4];
  if (D.dnnl_stream_create(&s, D.eng, dnnl_stream_default_flags)) return false;
  D.omp_set_num_threads(1);   /* this thread's own: the pool runs the tiles side by side */
  bool ok = true;
  for (int i = 0; i < n && ok; i++) {
    ok = !D.dnnl_memory_create(&m[i], md[i], D.eng, mem[i]);
    a[i] = (dnnl_exec_arg_t){arg[i], m[i]};
  }
  ok = ok && !D.dnnl_primitive_execute(prim, s, n, a) && !D.dnnl_stream_wait(s);
  for (int i = 0; i < n; i++)
    if (m[i]) D.dnnl_memory_destroy(m[i]);
  D.dnnl_stream_destroy(s);
  return ok;
}

bool op_dnnl_filter(const op_dnnl_prim *p, float *hwio, void *own) {
  if (!p->reorder) return true;
  bool in = p->kind != OP_DNNL_BWD_WEIGHTS;
  return execute(p->reorder, 2, (const int[]){DNNL_ARG_FROM, DNNL_ARG_TO},
                 (const dnnl_memory_desc_t *const[]){in ? &p->hwio : &p->w, in ? &p->w : &p->hwio},
                 (void *const[]){in ? (void *)hwio : own, in ? own : (void *)hwio});
}

bool op_dnnl_run(const op_dnnl_prim *p, float *x, float *w, float *y, void *scratch) {
  bool f = p->kind == OP_DNNL_FWD, d = p->kind == OP_DNNL_BWD_DATA;
  const int arg[4] = {d ? DNNL_ARG_DIFF_SRC : DNNL_ARG_SRC,
                      p->kind == OP_DNNL_BWD_WEIGHTS ? DNNL_ARG_DIFF_WEIGHTS : DNNL_ARG_WEIGHTS,
                      f ? DNNL_ARG_DST : DNNL_ARG_DIFF_DST, DNNL_ARG_SCRATCHPAD};
  return execute(p->prim, p->scratch ? 4 : 3, arg,
                 (const dnnl_memory_desc_t *const[]){&p->x, &p->w, &p->y, &p->sd},
                 (void *const[]){x, w, y, scratch});
}

/* ---- GEMM ------------------------------------------------------------------------- */

/* An operand of `rows` x `cols` at (row, column) strides (rs, cs) as dnnl_sgemm takes it,
 * row-major: 'N' with leading dimension ld, or 'T' (stored transposed); false: neither
 * stride is 1 (BLIS takes any strides). A single row or column takes either. */
static bool as_blas(int64_t rows, int64_t cols, int64_t rs, int64_t cs, char *t, int64_t *ld) {
  if (cs == 1 && (rs >= cols || rows == 1)) {
    *t = 'N', *ld = rows == 1 ? cols : rs;
    return true;
  }
  if (rs == 1 && (cs >= rows || cols == 1)) {
    *t = 'T', *ld = cols == 1 ? rows : cs;
    return true;
  }
  return false;
}

bool op_dnnl_gemm_can(int64_t m, int64_t n, int64_t k, int64_t rsa, int64_t csa, int64_t rsb,
                      int64_t csb, int64_t rsc) {
  char t;
  int64_t ld;
  return !off && ready() && m > 0 && n > 0 && k > 0 && rsc >= n &&
         as_blas(m, k, rsa, csa, &t, &ld) && as_blas(k, n, rsb, csb, &t, &ld);
}

bool op_dnnl_sgemm(int64_t m, int64_t n, int64_t k, const float *a, int64_t rsa, int64_t csa,
                   const float *b, int64_t rsb, int64_t csb, float beta, float *c, int64_t rsc) {
  char ta, tb;
  int64_t lda, ldb;
  if (!as_blas(m, k, rsa, csa, &ta, &lda) || !as_blas(k, n, rsb, csb, &tb, &ldb)) return false;
  D.omp_set_num_threads(1);   /* one tile a thread: the pool runs them side by side */
  return D.dnnl_sgemm(ta, tb, m, n, k, 1.0f, a, lda, b, ldb, beta, c, rsc) == dnnl_success;
}

bool op_dnnl_sgemm_threads(int threads, int64_t m, int64_t n, int64_t k, const float *a,
                           const float *b, float *c) {
  if (off || !ready()) return false;
  D.omp_set_num_threads(threads);
  bool ok = D.dnnl_sgemm('N', 'N', m, n, k, 1.0f, a, k, b, n, 0.0f, c, n) == dnnl_success;
  D.omp_set_num_threads(1);
  return ok;
}

#endif

