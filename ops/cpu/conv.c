/* Conv2D and pooling kernels, NHWC, float and double.
 *
 * Conv2D is im2col + GEMM: the output pixels are the rows of a matrix whose columns are
 * one receptive field (kh, kw, in-channels, in that order, so the filter [kh, kw, in, out]
 * is already the [cols, out] right-hand side) and one BLIS gemm per chunk of rows writes
 * straight into the NHWC output. Chunks keep the column buffer near the cache
 * (CHUNK_BYTES); the buffer lives in the node's state slot so later steps reuse it instead
 * of touching fresh memory. A 1x1 stride-1 convolution needs no im2col at all.
 * The backprops are the same matrices the other way round: filter = sum over chunks of
 * col^T @ dy; input = col2im(dy @ filter^T), or for stride 1 (no scatter) Conv2D of dy
 * with the filter turned half a circle. Float convolutions of at most 32 columns (first
 * layers) skip im2col where the CPU has AVX2 and FMA: see conv_direct.
 *
 * Pools loop directly, a tile per run of output rows, channels innermost (vector
 * loops); MaxPoolGrad routes each gradient to the first maximum of its window in
 * orig_input (TF's CPU rule), AvgPool divides by the window's count of real (unpadded)
 * elements, as TF does. */
#include "ops/cpu/gemm.h"
#include "ops/cpu/cpuarch.h"
#include "ops/cpu/onednn.h"
#include "ops/cpu/winograd.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ops/ops_int.h"
#include "runtime/pool.h"

enum { CHUNK_BYTES = 2 << 20, PAR_MIN = 1 << 14 };
/* oneDNN's input gradient over fewer input channels than this (a first layer's) is slower
 * than col2im here: 12.7 GFLOP/s a thread for 5x5 over one channel. */
enum { DNNL_MIN_DATA_IC = 8 };

/* ---- shared: geometry, attrs, scratch, gemm ---------------------------------------- */

typedef struct geom {
  int64_t n, ih, iw, ic;      /* input */
  int64_t kh, kw, oc;         /* window; output channels */
  int64_t sh, sw, oh, ow, pt, pl;
} geom;

static int need_float(rt_kernel_ctx *c, rt_dtype t) {
  if (t == RT_FLOAT || t == RT_DOUBLE) return RT_OK;
  return rt_kernel_error(c, RT_UNIMPLEMENTED, "no CPU kernel for %s", rt_dtype_name(t));
}

/* strides and padding into g (input dims and window already set): output size and pads. */
static int window(rt_kernel_ctx *c, geom *g) {
  int ns;
  const int64_t *s = op_list_ints(c->node, "strides", &ns);
  const char *pad = rt_node_string(c->node, "padding", "");
  bool same = !strcmp(pad, "SAME");
  if (ns != 4)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Sliding window strides field must specify 4 "
                           "dimensions");
  if (!same && strcmp(pad, "VALID"))
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Value for attr 'padding' of \"%s\" is not in "
                           "the list of allowed values: \"SAME\", \"VALID\"", pad);
  g->sh = s[1], g->sw = s[2];
  if (g->sh < 1 || g->sw < 1)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Stride must be > 0, but got %lld",
                           (long long)(g->sh < 1 ? g->sh : g->sw));
  if (!op_window_dim(g->ih, g->kh, g->sh, same, &g->oh, &g->pt))
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Computed output size would be negative: %lld "
                           "[input_size: %lld, effective_filter_size: %lld, stride: %lld]",
                           (long long)((g->ih - g->kh + g->sh) / g->sh),
                           (long long)g->ih, (long long)g->kh, (long long)g->sh);
  if (!op_window_dim(g->iw, g->kw, g->sw, same, &g->ow, &g->pl))
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Computed output size would be negative: %lld "
                           "[input_size: %lld, effective_filter_size: %lld, stride: %lld]",
                           (long long)((g->iw - g->kw + g->sw) / g->sw),
                           (long long)g->iw, (long long)g->kw, (long long)g->sw);
  return RT_OK;
}

/* Conv2D's attrs as TF1's CPU kernels check them. `who` names the op in NHWC errors. */
static int conv_attrs(rt_kernel_ctx *c, const char *nhwc_msg) {
  int ns, nd;
  const int64_t *s = op_list_ints(c->node, "strides", &ns);
  const int64_t *d = op_list_ints(c->node, "dilations", &nd);
  if (strcmp(rt_node_string(c->node, "data_format", "NHWC"), "NHWC"))
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, nhwc_msg,
                           rt_node_string(c->node, "data_format", ""));
  if (ns != 4)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Sliding window strides field must specify 4 "
                           "dimensions");
  if (s[0] != 1 || s[3] != 1)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Current implementation does not yet support "
                           "strides in the batch and depth dimensions.");
  if (nd && nd != 4)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Sliding window dilations field must specify 4 "
                           "dimensions");
  if (nd && (d[0] != 1 || d[3] != 1))
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Current implementation does not yet support "
                           "dilations in the batch and depth dimensions.");
  if (nd && (d[1] != 1 || d[2] != 1))
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Current libxsmm and customized CPU "
                           "implementations do not yet support dilation rates larger than 1.");
  return RT_OK;
}

/* A column buffer of at least `bytes`: the node's state when the executor gives one (kept
 * for the next step), else *tmp (the caller frees it). 64-byte aligned. */
typedef struct scratch {
  size_t cap;
  char pad[56];
} scratch;

static size_t align64(size_t n) { return (n + 63) / 64 * 64; }

static void *scratch_get(rt_kernel_ctx *c, size_t bytes, void **tmp) {
  size_t want = align64(sizeof(scratch) + bytes);
  if (c->state) {
    scratch *s = *c->state;
    if (!s || s->cap < bytes) {
      free(s);
      s = *c->state = aligned_alloc(64, want);
      if (!s) return NULL;
      s->cap = bytes;
    }
    return s + 1;
  }
  scratch *s = *tmp = aligned_alloc(64, want);
  return s ? (void *)(s + 1) : NULL;
}

static int n_threads(void) { return rt_intra_threads(); }

/* C[m,n] = A[m,k] B[k,n] + beta C, operands given by (row, column) strides; C row-major.
 * threads 0: the pool's threads when the product is big enough, else one. */
static void gemm(bool f32, int64_t m, int64_t n, int64_t k, const void *a, int64_t rsa,
                 int64_t csa, const void *b, int64_t rsb, int64_t csb, double beta, void *cc,
                 int threads) {
  if (!threads) threads = (double)m * n * k >= 48.0 * 48 * 48 ? n_threads() : 1;
  op_gemm(f32, m, n, k, a, rsa, csa, b, rsb, csb, beta, cc, n, threads);
}

/* Rows per chunk: whole images when one image's columns fit, and at least `min_imgs`
 * whole images (col2im runs one image a thread) unless that passes MAX_CHUNK_BYTES. */
enum { MAX_CHUNK_BYTES = 32 << 20 };
static int64_t chunk_rows(const geom *g, int64_t cols, size_t es, int64_t min_imgs) {
  int64_t per_img = g->oh * g->ow, r = (int64_t)(CHUNK_BYTES / ((size_t)cols * es));
  size_t img_bytes = (size_t)(per_img * cols) * es;
  if (r < 1) r = 1;
  if (r < min_imgs * per_img && img_bytes * (size_t)min_imgs <= MAX_CHUNK_BYTES) r = min_imgs * per_img;
  if (r >= per_img) r = r / per_img * per_img;
  int64_t rows = g->n * per_img;
  return r < rows ? r : rows;
}

/* How the im2col products split: R rows a chunk; with nt > 1 the chunks are the pool's
 * tiles, each im2col and a one-thread gemm in the running thread's own column buffer (no
 * barrier between them), else one chunk at a time with every thread in both. Splitting
 * pays from about 4M multiply-adds. */
typedef struct plan {
  int64_t R, chunks;
  int nt;
} plan;

static plan plan_chunks(const geom *g, int64_t cols, size_t es) {
  int64_t rows = g->n * g->oh * g->ow;
  plan p = {.R = chunk_rows(g, cols, es, 1), .nt = 1};
  int T = n_threads();
  if (T > 1 && (double)rows * (double)cols * (double)g->oc >= (double)(1 << 22)) {
    int64_t per = (rows + T - 1) / T;
    if (p.R > per) p.R = per;
    p.nt = T;
  }
  p.chunks = (rows + p.R - 1) / p.R;
  if (p.nt > p.chunks) p.nt = (int)p.chunks;
  return p;
}

/* memcpy / memset for the short runs of im2col (a window row of few channels, e.g. 20 bytes
 * for a 5-wide window over one channel): fixed-size pieces the compiler inlines, instead
 * of a library call per run. n is a multiple of 4. */
static inline void copy_run(char *d, const char *s, size_t n) {
  if (n > 256) {
    memcpy(d, s, n);
    return;
  }
  for (; n >= 32; n -= 32, d += 32, s += 32) memcpy(d, s, 32);
  if (n >= 16) memcpy(d, s, 16), n -= 16, d += 16, s += 16;
  if (n >= 8) memcpy(d, s, 8), n -= 8, d += 8, s += 8;
  if (n >= 4) memcpy(d, s, 4);
}

static inline void zero_run(char *d, size_t n) {
  if (n > 256) {
    memset(d, 0, n);
    return;
  }
  for (; n >= 32; n -= 32, d += 32) memset(d, 0, 32);
  if (n >= 16) memset(d, 0, 16), n -= 16, d += 16;
  if (n >= 8) memset(d, 0, 8), n -= 8, d += 8;
  if (n >= 4) memset(d, 0, 4);
}

/* Column rows [r0, r0 + nr) of the input x (NHWC) into col, one receptive field a row.
 * Each tile takes a contiguous run of rows and steps its output pixel along it. */
typedef struct im2col_job {
  const geom *g;
  const char *x;
  char *col;
  int64_t r0;
  size_t es;
} im2col_job;

static void im2col_rows(void *arg, int64_t ra, int64_t rb, int who) {
  const im2col_job *j = arg;
  const geom *g = j->g;
  size_t es = j->es, px = (size_t)g->ic * es, wrow = (size_t)g->kw * px;
  int64_t cols = g->kh * g->kw * g->ic, per_img = g->oh * g->ow, row = j->r0 + ra;
  int64_t b = row / per_img, oy = row % per_img / g->ow, ox = row % per_img % g->ow;
  char *dst = j->col + (size_t)(ra * cols) * es;
  for (int64_t r = ra; r < rb; r++) {
    int64_t y0 = oy * g->sh - g->pt, x0 = ox * g->sw - g->pl;
    int64_t jlo = x0 < 0 ? -x0 : 0, jhi = g->iw - x0 < g->kw ? g->iw - x0 : g->kw;
    const char *img = j->x + (size_t)(b * g->ih * g->iw * g->ic) * es;
    for (int64_t i = 0; i < g->kh; i++, dst += wrow) {
      int64_t yy = y0 + i;
      if (yy < 0 || yy >= g->ih || jhi <= jlo) {
        zero_run(dst, wrow);
        continue;
      }
      const char *src = img + (size_t)((yy * g->iw + x0 + jlo) * g->ic) * es;
      zero_run(dst, (size_t)jlo * px);
      copy_run(dst + (size_t)jlo * px, src, (size_t)(jhi - jlo) * px);
      zero_run(dst + (size_t)jhi * px, (size_t)(g->kw - jhi) * px);
    }
    if (++ox == g->ow) {
      ox = 0;
      if (++oy == g->oh) oy = 0, b++;
    }
  }
}

static void im2col(const geom *g, const char *x, char *col, int64_t r0, int64_t nr, size_t es) {
  im2col_job j = {.g = g, .x = x, .col = col, .r0 = r0, .es = es};
  int threads = nr * g->kh * g->kw * g->ic >= PAR_MIN ? n_threads() : 1;
  rt_parallel_range(nr, 1, threads, im2col_rows, &j);
}

/* dx += the column rows [r0, r0 + nr) scattered back (col2im); dx zeroed by the caller.
 * Rows of different images never overlap, so whole-image chunks go one image a tile. */
typedef struct col2im_job {
  const geom *g;
  const void *col;
  void *dx;
  int64_t r0, nr, nimg;   /* nimg 0: the rows are not whole images, one tile */
} col2im_job;

#define COL2IM(T)                                                                        \
  static void col2im_tile_##T(void *arg, int64_t lo, int64_t hi, int who) {             \
    const col2im_job *j = arg;                                                          \
    const geom *g = j->g;                                                               \
    const T *col = j->col;                                                              \
    T *dx = j->dx;                                                                      \
    int64_t cols = g->kh * g->kw * g->ic, per_img = g->oh * g->ow;                      \
    for (int64_t t = lo; t < hi; t++)                                                   \
      for (int64_t r = j->nimg ? t * per_img : 0; r < (j->nimg ? (t + 1) * per_img : j->nr); r++) { \
        int64_t row = j->r0 + r, b = row / per_img, p = row % per_img;                  \
        int64_t y0 = p / g->ow * g->sh - g->pt, x0 = p % g->ow * g->sw - g->pl;         \
        const T *src = col + r * cols;                                                  \
        for (int64_t i = 0; i < g->kh; i++) {                                           \
          int64_t yy = y0 + i;                                                          \
          for (int64_t j = 0; j < g->kw; j++, src += g->ic) {                           \
            int64_t xx = x0 + j;                                                        \
            if (yy < 0 || yy >= g->ih || xx < 0 || xx >= g->iw) continue;               \
            T *d = dx + ((b * g->ih + yy) * g->iw + xx) * g->ic;                        \
            for (int64_t k = 0; k < g->ic; k++) d[k] += src[k];                         \
          }                                                                             \
        }                                                                               \
      }                                                                                 \
  }
COL2IM(float)
COL2IM(double)

static void col2im(const geom *g, bool f32, const void *col, void *dx, int64_t r0, int64_t nr) {
  int64_t per_img = g->oh * g->ow, nimg = nr % per_img == 0 && r0 % per_img == 0 ? nr / per_img : 0;
  col2im_job j = {.g = g, .col = col, .dx = dx, .r0 = r0, .nr = nr, .nimg = nimg};
  int threads = nimg > 1 && nr * g->kh * g->kw * g->ic >= PAR_MIN ? n_threads() : 1;
  rt_parallel_range(nimg ? nimg : 1, 1, threads, f32 ? col2im_tile_float : col2im_tile_double, &j);
}

/* ---- _FusedConv2D's epilogue ------------------------------------------------------
 * Conv2D + BiasAdd (+ Relu) as TF's grappler remapper fuses them (runtime/remap.c): the
 * bias added and the relu taken on each chunk of output rows right after its gemm, while
 * it is in cache, instead of two more passes over the whole output. The same operations
 * as the BiasAdd and Relu kernels (y + b, then y > 0 ? y : 0), so the same bits. */
typedef struct epilogue {
  const void *bias;   /* [oc], NULL: none */
  bool relu;
} epilogue;

OP_CLONES static void epilogue_rows(const epilogue *e, bool f32, void *y, int64_t rows,
                                   int64_t oc) {
  if (!e || (!e->bias && !e->relu)) return;
  if (f32) {
    float *v = y;
    const float *b = e->bias;
    for (int64_t r = 0; r < rows; r++, v += oc) {
      if (b) _Pragma("omp simd") for (int64_t k = 0; k < oc; k++) v[k] = v[k] + b[k];
      if (e->relu) _Pragma("omp simd") for (int64_t k = 0; k < oc; k++) v[k] = v[k] > 0 ? v[k] : 0;
    }
  } else {
    double *v = y;
    const double *b = e->bias;
    for (int64_t r = 0; r < rows; r++, v += oc) {
      if (b) _Pragma("omp simd") for (int64_t k = 0; k < oc; k++) v[k] = v[k] + b[k];
      if (e->relu) _Pragma("omp simd") for (int64_t k = 0; k < oc; k++) v[k] = v[k] > 0 ? v[k] : 0;
    }
  }
}

typedef struct epilogue_job {
  const epilogue *e;
  bool f32;
  char *y;
  int64_t oc;
} epilogue_job;

static void epilogue_tile(void *arg, int64_t lo, int64_t hi, int who) {
  const epilogue_job *j = arg;
  size_t es = j->f32 ? sizeof(float) : sizeof(double);
  epilogue_rows(j->e, j->f32, j->y + (size_t)(lo * j->oc) * es, hi - lo, j->oc);
}

/* The epilogue over rows [0, rows) of y on the pool, for outputs written by one gemm. */
static void epilogue_all(const epilogue *e, bool f32, void *y, int64_t rows, int64_t oc) {
  if (!e || (!e->bias && !e->relu)) return;
  epilogue_job j = {.e = e, .f32 = f32, .y = y, .oc = oc};
  rt_parallel_range(rows, 1, rows * oc >= PAR_MIN ? n_threads() : 1, epilogue_tile, &j);
}

/* A 2x2 MaxPool window's C channels, its rows at p0 and p2: the first pixel, then each that
 * is greater (MaxPool's order, so a NaN wins only first). pool_rows and the pool-fused
 * first-layer kernel. */
#define MAX_2X2(T)                                                                        \
  static inline __attribute__((always_inline)) void max_2x2_##T(const T *p0, const T *p2, \
                                                                int64_t C, T *o) {       \
    _Pragma("omp simd") for (int64_t k = 0; k < C; k++) {                               \
      T m = p0[k], v1 = p0[C + k], v2 = p2[k], v3 = p2[C + k];                          \
      m = v1 > m ? v1 : m;                                                              \
      m = v2 > m ? v2 : m;                                                              \
      o[k] = v3 > m ? v3 : m;                                                           \
    }                                                                                   \
  }
MAX_2X2(float)
MAX_2X2(double)

/* max_2x2_float's maxima, and in ws, a byte a channel, which pixel first holds each (0..3,
 * by MaxPoolGrad's compares) plus 4 where it is above 0 (ReluGrad's test): what
 * MaxPoolGrad -> ReluGrad on the window reads of the Relu's output (_FusedConv2DWithArgmax's
 * workspace); ws_grad is that gradient from it. On AVX-512 and AVX2 in registers (GCC
 * leaves the byte loops scalar, with branches), the same compares. */
static int pool_level(void);   /* 2: AVX-512, 1: AVX2, 0: plain C (op_cpu_pool_simd) */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
/* A 2x2 window's first maximum of 16 (8) channels, pixels at a, b, c, d in MaxPool's order:
 * s1..s3 say where pixels 1..3 beat those before them (ordered compares: a NaN never wins).
 * The AVX-512 one loads the lanes of mask t only. */
static inline __attribute__((always_inline, target("avx512f"))) __m512
max4_512(__mmask16 t, const float *a, const float *b, const float *c, const float *d,
         __mmask16 *s1, __mmask16 *s2, __mmask16 *s3) {
  __m512 v0 = _mm512_maskz_loadu_ps(t, a), v1 = _mm512_maskz_loadu_ps(t, b);
  __m512 v2 = _mm512_maskz_loadu_ps(t, c), v3 = _mm512_maskz_loadu_ps(t, d);
  *s1 = _mm512_cmp_ps_mask(v1, v0, _CMP_GT_OQ);
  __m512 m = _mm512_mask_blend_ps(*s1, v0, v1);
  *s2 = _mm512_cmp_ps_mask(v2, m, _CMP_GT_OQ);
  m = _mm512_mask_blend_ps(*s2, m, v2);
  *s3 = _mm512_cmp_ps_mask(v3, m, _CMP_GT_OQ);
  return _mm512_mask_blend_ps(*s3, m, v3);
}

static inline __attribute__((always_inline, target("avx2"))) __m256
max4_256(const float *a, const float *b, const float *c, const float *d, __m256 *s1, __m256 *s2,
         __m256 *s3) {
  __m256 v0 = _mm256_loadu_ps(a), v1 = _mm256_loadu_ps(b);
  __m256 v2 = _mm256_loadu_ps(c), v3 = _mm256_loadu_ps(d);
  *s1 = _mm256_cmp_ps(v1, v0, _CMP_GT_OQ);
  __m256 m = _mm256_blendv_ps(v0, v1, *s1);
  *s2 = _mm256_cmp_ps(v2, m, _CMP_GT_OQ);
  m = _mm256_blendv_ps(m, v2, *s2);
  *s3 = _mm256_cmp_ps(v3, m, _CMP_GT_OQ);
  return _mm256_blendv_ps(m, v3, *s3);
}

#define WS512_TARGET __attribute__((target("avx512f,avx512bw,avx512vl")))
WS512_TARGET static void max_2x2_ws_512(const float *p0, const float *p2, int64_t C, float *o,
                                        uint8_t *ws) {
  const __m512 zero = _mm512_setzero_ps();
  const __m512i one = _mm512_set1_epi32(1), two = _mm512_set1_epi32(2);
  const __m512i three = _mm512_set1_epi32(3), four = _mm512_set1_epi32(4);
  for (int64_t k = 0; k < C; k += 16) {
    __mmask16 t = C - k >= 16 ? 0xffff : (__mmask16)((1u << (C - k)) - 1), s1, s2, s3;
    __m512 m = max4_512(t, p0 + k, p0 + C + k, p2 + k, p2 + C + k, &s1, &s2, &s3);
    _mm512_mask_storeu_ps(o + k, t, m);
    __m512i i = _mm512_maskz_mov_epi32(s1, one);
    i = _mm512_mask_mov_epi32(i, s2, two);
    i = _mm512_mask_mov_epi32(i, s3, three);
    i = _mm512_mask_or_epi32(i, _mm512_cmp_ps_mask(m, zero, _CMP_GT_OQ), i, four);
    _mm_mask_storeu_epi8(ws + k, t, _mm512_cvtepi32_epi8(i));
  }
}

WS512_TARGET static void ws_grad_512(const uint8_t *w, const float *d, float *q, int64_t row,
                                     int64_t C) {
  const __m512 zero = _mm512_setzero_ps();
  const __m512i z = _mm512_setzero_si512(), one = _mm512_set1_epi32(1);
  const __m512i two = _mm512_set1_epi32(2), three = _mm512_set1_epi32(3);
  const __m512i four = _mm512_set1_epi32(4);
  for (int64_t k = 0; k < C; k += 16) {
    __mmask16 t = C - k >= 16 ? 0xffff : (__mmask16)((1u << (C - k)) - 1);
    __m512i a = _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(t, w + k));
    __m512 g = _mm512_maskz_mov_ps(_mm512_test_epi32_mask(a, four),
                                   _mm512_add_ps(zero, _mm512_maskz_loadu_ps(t, d + k)));
    __m512i i = _mm512_and_si512(a, three);
    _mm512_mask_storeu_ps(q + k, t, _mm512_maskz_mov_ps(_mm512_cmpeq_epi32_mask(i, z), g));
    _mm512_mask_storeu_ps(q + C + k, t, _mm512_maskz_mov_ps(_mm512_cmpeq_epi32_mask(i, one), g));
    _mm512_mask_storeu_ps(q + row + k, t, _mm512_maskz_mov_ps(_mm512_cmpeq_epi32_mask(i, two), g));
    _mm512_mask_storeu_ps(q + row + C + k, t,
                          _mm512_maskz_mov_ps(_mm512_cmpeq_epi32_mask(i, three), g));
  }
}

/* Whole vectors of 8 channels only. */
__attribute__((target("avx2"))) static void max_2x2_ws_256(const float *p0, const float *p2,
                                                            int64_t C, float *o, uint8_t *ws) {
  const __m256 zero = _mm256_setzero_ps();
  const __m256i one = _mm256_set1_epi32(1), two = _mm256_set1_epi32(2);
  const __m256i three = _mm256_set1_epi32(3), four = _mm256_set1_epi32(4);
  for (int64_t k = 0; k < C; k += 8) {
    __m256 s1, s2, s3, m = max4_256(p0 + k, p0 + C + k, p2 + k, p2 + C + k, &s1, &s2, &s3);
    _mm256_storeu_ps(o + k, m);
    __m256i i = _mm256_and_si256(_mm256_castps_si256(s1), one);
    i = _mm256_blendv_epi8(i, two, _mm256_castps_si256(s2));
    i = _mm256_blendv_epi8(i, three, _mm256_castps_si256(s3));
    i = _mm256_or_si256(i, _mm256_and_si256(_mm256_castps_si256(_mm256_cmp_ps(m, zero, _CMP_GT_OQ)), four));
    __m256i h = _mm256_packus_epi32(i, i);   /* each lane's 4 values, to 16 then 8 bits */
    h = _mm256_packus_epi16(h, h);
    int32_t lo = _mm_cvtsi128_si32(_mm256_castsi256_si128(h));
    int32_t hi = _mm_cvtsi128_si32(_mm256_extracti128_si256(h, 1));
    memcpy(ws + k, &lo, 4), memcpy(ws + k + 4, &hi, 4);
  }
}

__attribute__((target("avx2"))) static void ws_grad_256(const uint8_t *w, const float *d,
                                                        float *q, int64_t row, int64_t C) {
  const __m256 zero = _mm256_setzero_ps();
  const __m256i z = _mm256_setzero_si256(), one = _mm256_set1_epi32(1);
  const __m256i two = _mm256_set1_epi32(2), three = _mm256_set1_epi32(3);
  const __m256i four = _mm256_set1_epi32(4);
  for (int64_t k = 0; k < C; k += 8) {
    __m256i a = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(w + k)));
    __m256 pos = _mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_and_si256(a, four), four));
    __m256 g = _mm256_and_ps(pos, _mm256_add_ps(zero, _mm256_loadu_ps(d + k)));
    __m256i i = _mm256_and_si256(a, three);
#define WS_AT(v) _mm256_and_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(i, v)), g)
    _mm256_storeu_ps(q + k, WS_AT(z));
    _mm256_storeu_ps(q + C + k, WS_AT(one));
    _mm256_storeu_ps(q + row + k, WS_AT(two));
    _mm256_storeu_ps(q + row + C + k, WS_AT(three));
#undef WS_AT
  }
}
#endif

static inline void max_2x2_ws(const float *p0, const float *p2, int64_t C, float *o,
                              uint8_t *ws) {
#if defined(__x86_64__) && defined(__GNUC__)
  int isa = pool_level();
  if (isa == 2) return max_2x2_ws_512(p0, p2, C, o, ws);
  if (isa == 1 && C % 8 == 0) return max_2x2_ws_256(p0, p2, C, o, ws);
#endif
  for (int64_t k = 0; k < C; k++) {
    float v0 = p0[k], v1 = p0[C + k], v2 = p2[k], v3 = p2[C + k];
    int s1 = v1 > v0;
    float m = s1 ? v1 : v0;
    int s2 = v2 > m;
    m = s2 ? v2 : m;
    int s3 = v3 > m;
    m = s3 ? v3 : m;
    o[k] = m;
    ws[k] = (uint8_t)((s3 ? 3 : s2 ? 2 : s1) | (m > 0 ? 4 : 0));
  }
}

/* One window's gradient: 0 + dy at the pixel ws names where its bit 4 is set; 0 elsewhere
 * (pool_2x2_512's bits). The window's pixels at q, q + C, q + row, q + row + C. */
static inline void ws_grad(const uint8_t *w, const float *d, float *q, int64_t row, int64_t C) {
#if defined(__x86_64__) && defined(__GNUC__)
  int isa = pool_level();
  if (isa == 2) return ws_grad_512(w, d, q, row, C);
  if (isa == 1 && C % 8 == 0) return ws_grad_256(w, d, q, row, C);
#endif
  for (int64_t k = 0; k < C; k++) {
    int a = w[k], i = a & 3;
    float gv = a & 4 ? 0.0f + d[k] : 0.0f;
    q[k] = i == 0 ? gv : 0.0f, q[C + k] = i == 1 ? gv : 0.0f;
    q[row + k] = i == 2 ? gv : 0.0f, q[row + C + k] = i == 3 ? gv : 0.0f;
  }
}

/* ---- direct float Conv2D for short columns (first layers: one to a few channels) ------
 * With cols = kh*kw*ic of at most DIRECT_MAX_COLS, im2col writes far more than the gemm
 * computes (25 floats a row for a 5x5 window over one channel). Where the CPU has AVX2
 * and FMA and oc is 8, 16, 32 or 64, each output pixel's channels sit in 8-float
 * registers and take one fused multiply-add per column, in column order from zero, with
 * a zero for padding: the same operations as BLIS's microkernel does on the im2col
 * matrix (k is far below its KC block), so the result is bit for bit the gemm's. */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
enum { DIRECT_MAX_COLS = 32 };
#define DIRECT_TARGET __attribute__((target("avx2,fma")))

/* acc[q][v] += xs[q] * the filter row wp, for np pixels and nv registers of channels. */
static inline __attribute__((always_inline)) DIRECT_TARGET void
direct_tap(__m256 acc[2][8], const float *xs, const float *wp, const int nv, const int np) {
  __m256 xv[2];
#pragma GCC unroll 2
  for (int q = 0; q < np; q++) xv[q] = _mm256_set1_ps(xs[q]);
#pragma GCC unroll 8
  for (int v = 0; v < nv; v++) {
    __m256 wv = _mm256_loadu_ps(wp + 8 * v);
#pragma GCC unroll 2
    for (int q = 0; q < np; q++) acc[q][v] = _mm256_fmadd_ps(xv[q], wv, acc[q][v]);
  }
}

/* np output pixels from (oy, ox) of image img, nv registers of channels each. */
static inline __attribute__((always_inline)) DIRECT_TARGET void
direct_pixels(const geom *g, const float *img, const float *w, const epilogue *e, float *out,
              int64_t oy, int64_t ox, const int nv, const int np) {
  __m256 acc[2][8];
#pragma GCC unroll 2
  for (int q = 0; q < np; q++)
#pragma GCC unroll 8
    for (int v = 0; v < nv; v++) acc[q][v] = _mm256_setzero_ps();
  int64_t y0 = oy * g->sh - g->pt, x0 = ox * g->sw - g->pl, run = g->kw * g->ic;
  int64_t step = g->sw * g->ic;
  const float *wp = w;
  if (y0 >= 0 && y0 + g->kh <= g->ih && x0 >= 0 && x0 + (np - 1) * g->sw + g->kw <= g->iw) {
    /* inside the image: each window row is run contiguous floats, as is the filter's */
    for (int64_t i = 0; i < g->kh; i++) {
      const float *xr = img + ((y0 + i) * g->iw + x0) * g->ic;
      for (int64_t t = 0; t < run; t++, wp += g->oc) {
        float xs[2];
#pragma GCC unroll 2
        for (int q = 0; q < np; q++) xs[q] = xr[q * step + t];
        direct_tap(acc, xs, wp, nv, np);
      }
    }
  } else {   /* at an edge: padding taps multiply zeros, as im2col's zeros do */
    for (int64_t i = 0; i < g->kh; i++) {
      int64_t yy = y0 + i;
      for (int64_t j = 0; j < g->kw; j++)
        for (int64_t ch = 0; ch < g->ic; ch++, wp += g->oc) {
          float xs[2];
#pragma GCC unroll 2
          for (int q = 0; q < np; q++) {
            int64_t xx = x0 + q * g->sw + j;
            bool in = yy >= 0 && yy < g->ih && xx >= 0 && xx < g->iw;
            xs[q] = in ? img[(yy * g->iw + xx) * g->ic + ch] : 0.0f;
          }
          direct_tap(acc, xs, wp, nv, np);
        }
    }
  }
  const float *bias = e->bias;   /* _FusedConv2D: BiasAdd's and Relu's own operations */
#pragma GCC unroll 2
  for (int q = 0; q < np; q++)
#pragma GCC unroll 8
    for (int v = 0; v < nv; v++) {
      __m256 o = acc[q][v];
      if (bias) o = _mm256_add_ps(o, _mm256_loadu_ps(bias + 8 * v));
      if (e->relu) o = _mm256_max_ps(o, _mm256_setzero_ps());   /* NaN and -0 give +0, as a > 0 ? a : 0 */
      _mm256_storeu_ps(out + q * g->oc + 8 * v, o);
    }
}

/* One (image, output row): pixels two at a time (one at a time for 64 channels). */
static inline __attribute__((always_inline)) DIRECT_TARGET void
direct_row(const geom *g, const float *x, const float *w, const epilogue *e, float *y, int64_t by,
           const int nv) {
  int64_t b = by / g->oh, oy = by % g->oh, ox = 0;
  const float *img = x + b * g->ih * g->iw * g->ic;
  float *out = y + by * g->ow * g->oc;
  if (nv <= 4)
    for (; ox + 2 <= g->ow; ox += 2) direct_pixels(g, img, w, e, out + ox * g->oc, oy, ox, nv, 2);
  for (; ox < g->ow; ox++) direct_pixels(g, img, w, e, out + ox * g->oc, oy, ox, nv, 1);
}

typedef struct direct_job {
  const geom *g;
  const float *x, *w;
  const epilogue *e;
  float *y;
  float *pad;   /* AVX-512's padded images, one a thread (NULL: no padding) */
  int64_t pad_floats;
  float *rows2;   /* MaxPool fused: two output rows a thread, y the pooled output */
  uint8_t *ws;    /* and its argmax workspace (max_2x2_ws), or NULL */
} direct_job;

static DIRECT_TARGET void direct_rows(void *arg, int64_t lo, int64_t hi, int who) {
  const direct_job *j = arg;
  int64_t nv = j->g->oc / 8;
  for (int64_t by = lo; by < hi; by++) {
    if (nv == 1) direct_row(j->g, j->x, j->w, j->e, j->y, by, 1);
    else if (nv == 2) direct_row(j->g, j->x, j->w, j->e, j->y, by, 2);
    else if (nv == 4) direct_row(j->g, j->x, j->w, j->e, j->y, by, 4);
    else direct_row(j->g, j->x, j->w, j->e, j->y, by, 8);
  }
}

/* The same kernel on AVX-512 for 16, 32 or 64 channels: 16-float registers, more pixels at
 * once (8 for 16 or 32 channels, 4 for 64: 8 to 16 accumulators, each filter row loaded
 * once for them all), the same fused multiply-adds in the same order, so the same bits as
 * the AVX2 kernel. On a Zen 5 the CNN's first layer ([128,28,28,1] x [5,5,1,32]) took
 * 0.73 ms on oneDNN (brgconv, 16 images a call) and 1.44 ms on the AVX2 kernel. */
#define DIRECT512_TARGET __attribute__((target("avx512f")))

static inline __attribute__((always_inline)) DIRECT512_TARGET void
d512_pixels(const geom *g, const float *img, const float *w, const epilogue *e, float *out,
            int64_t oy, int64_t ox, const int nv, const int np) {
  __m512 acc[16][4];
#pragma GCC unroll 16
  for (int q = 0; q < np; q++)
#pragma GCC unroll 4
    for (int v = 0; v < nv; v++) acc[q][v] = _mm512_setzero_ps();
  int64_t y0 = oy * g->sh - g->pt, x0 = ox * g->sw - g->pl, run = g->kw * g->ic;
  int64_t step = g->sw * g->ic;
  const float *wp = w;
  for (int64_t i = 0; i < g->kh; i++) {   /* inside the image (d512_source pads it) */
    const float *xr = img + ((y0 + i) * g->iw + x0) * g->ic;
    for (int64_t t = 0; t < run; t++, wp += g->oc) {
      __m512 wv[4];
#pragma GCC unroll 4
      for (int v = 0; v < nv; v++) wv[v] = _mm512_loadu_ps(wp + 16 * v);
#pragma GCC unroll 16
      for (int q = 0; q < np; q++) {
        __m512 xv = _mm512_set1_ps(xr[q * step + t]);
#pragma GCC unroll 4
        for (int v = 0; v < nv; v++) acc[q][v] = _mm512_fmadd_ps(xv, wv[v], acc[q][v]);
      }
    }
  }
  const float *bias = e->bias;
#pragma GCC unroll 16
  for (int q = 0; q < np; q++)
#pragma GCC unroll 4
    for (int v = 0; v < nv; v++) {
      __m512 o = acc[q][v];
      if (bias) o = _mm512_add_ps(o, _mm512_loadu_ps(bias + 16 * v));
      if (e->relu) o = _mm512_max_ps(o, _mm512_setzero_ps());
      _mm512_storeu_ps(out + q * g->oc + 16 * v, o);
    }
}

/* One output row oy of the image at img: np pixels at a time, then the rest by halves. */
static inline __attribute__((always_inline)) DIRECT512_TARGET void
d512_row(const geom *g, const float *img, const float *w, const epilogue *e, float *out,
         int64_t oy, const int nv, const int np) {
  int64_t ox = 0;
  for (; ox + np <= g->ow; ox += np) d512_pixels(g, img, w, e, out + ox * g->oc, oy, ox, nv, np);
  if (np >= 8 && ox + 4 <= g->ow) d512_pixels(g, img, w, e, out + ox * g->oc, oy, ox, nv, 4), ox += 4;
  if (np >= 4 && ox + 2 <= g->ow) d512_pixels(g, img, w, e, out + ox * g->oc, oy, ox, nv, 2), ox += 2;
  for (; ox < g->ow; ox++) d512_pixels(g, img, w, e, out + ox * g->oc, oy, ox, nv, 1);
}

static DIRECT512_TARGET void d512_img_rows(const geom *g, const float *img, const float *w,
                                           const epilogue *e, float *out, int64_t oy0,
                                           int64_t oy1) {
  int64_t nv = g->oc / 16;
  for (int64_t oy = oy0; oy < oy1; oy++, out += g->ow * g->oc) {
    if (nv == 1) d512_row(g, img, w, e, out, oy, 1, 8);
    else if (nv == 2) d512_row(g, img, w, e, out, oy, 2, 8);
    else d512_row(g, img, w, e, out, oy, 4, 4);
  }
}

/* The image (b) that output rows [oy, oy1) of the job read, with its geometry: where there
 * is padding, its rows they read copied into the thread's zero-padded image first (the
 * window's whole reach), so that every window lies inside it; the padding taps still
 * multiply zeros, as the AVX2 kernel's edge path does. */
static const float *d512_source(const direct_job *j, int64_t b, int64_t oy, int64_t oy1, int who,
                                geom *pg) {
  const geom *g = j->g;
  const float *img = j->x + b * g->ih * g->iw * g->ic;
  *pg = *g;
  if (!j->pad) return img;   /* no padding */
  int64_t ph = (g->oh - 1) * g->sh + g->kh, pw = (g->ow - 1) * g->sw + g->kw;
  pg->ih = ph, pg->iw = pw, pg->pt = pg->pl = 0;
  float *buf = j->pad + who * j->pad_floats;
  int64_t r1 = (oy1 - 1) * g->sh + g->kh, left = g->pl * g->ic;
  int64_t mid = (g->iw < pw - g->pl ? g->iw : pw - g->pl) * g->ic;
  for (int64_t r = oy * g->sh; r < r1; r++) {
    int64_t yy = r - g->pt;
    float *d = buf + r * pw * g->ic;
    if (yy < 0 || yy >= g->ih) {
      memset(d, 0, sizeof(float) * (size_t)(pw * g->ic));
      continue;
    }
    memset(d, 0, sizeof(float) * (size_t)left);
    memcpy(d + left, img + yy * g->iw * g->ic, sizeof(float) * (size_t)mid);
    memset(d + left + mid, 0, sizeof(float) * (size_t)(pw * g->ic - left - mid));
  }
  return buf;
}

/* Rows [lo, hi) of (image, output row). */
static void d512_rows(void *arg, int64_t lo, int64_t hi, int who) {
  const direct_job *j = arg;
  const geom *g = j->g;
  for (int64_t by = lo; by < hi;) {
    int64_t b = by / g->oh, oy = by % g->oh, end = (b + 1) * g->oh < hi ? (b + 1) * g->oh : hi;
    geom pg;
    const float *img = d512_source(j, b, oy, oy + end - by, who, &pg);
    d512_img_rows(&pg, img, j->w, j->e, j->y + by * g->ow * g->oc, oy, oy + end - by);
    by = end;
  }
}

/* With a 2x2 MaxPool at stride 2 after it (even output rows and columns): pooled rows
 * [lo, hi) of (image, row), each from two output rows made in the thread's rows2, the
 * pool's own operations (pool_rows: the first pixel, then each that is greater). */
static DIRECT512_TARGET void d512_pool_rows(void *arg, int64_t lo, int64_t hi, int who) {
  const direct_job *j = arg;
  const geom *g = j->g;
  int64_t ph = g->oh / 2, pw = g->ow / 2, C = g->oc, row = g->ow * C;
  float *two = j->rows2 + who * 2 * row;
  for (int64_t by = lo; by < hi; by++) {
    int64_t b = by / ph, py = by % ph;
    geom pg;
    const float *img = d512_source(j, b, 2 * py, 2 * py + 2, who, &pg);
    d512_img_rows(&pg, img, j->w, j->e, two, 2 * py, 2 * py + 2);
    float *o = j->y + by * pw * C;
    if (j->ws) {
      uint8_t *w = j->ws + by * pw * C;
      for (int64_t px = 0; px < pw; px++, o += C, w += C)
        max_2x2_ws(two + 2 * px * C, two + 2 * px * C + row, C, o, w);
      continue;
    }
    for (int64_t px = 0; px < pw; px++, o += C) {
      max_2x2_float(two + 2 * px * C, two + 2 * px * C + row, C, o);
    }
  }
}

/* 0: the AVX2 kernel, 1: AVX-512's where the CPU and the channels allow (tests set both). */
static _Atomic int direct_isa = 1;
void op_cpu_direct_conv_avx512(bool on) { direct_isa = on; }

static bool direct512_ok(const geom *g) {
  return direct_isa && (g->oc == 16 || g->oc == 32 || g->oc == 64) && op_cpu_avx512();
}

/* pooled: y is a 2x2 MaxPool's output (AVX-512 only, even oh and ow; false: not done),
 * ws its argmax workspace or NULL. */
static bool conv_direct(rt_kernel_ctx *c, const geom *g, const float *x, const float *w,
                        const epilogue *e, float *y, bool pooled, uint8_t *ws) {
  int64_t rows = g->n * g->oh;
  int threads = rows * g->ow * g->oc * g->kh * g->kw * g->ic >= (1 << 20) ? n_threads() : 1;
  direct_job j = {.g = g, .x = x, .w = w, .e = e, .y = y, .ws = ws};
  bool wide = direct512_ok(g);
  if (pooled && (!wide || g->oh % 2 || g->ow % 2)) return false;
  int64_t ph = (g->oh - 1) * g->sh + g->kh, pw = (g->ow - 1) * g->sw + g->kw;
  bool pad = wide && (g->pt || g->pl || ph > g->ih || pw > g->iw);
  j.pad_floats = pad ? (ph * pw * g->ic + 15) / 16 * 16 : 0;
  int64_t two = pooled ? 2 * g->ow * g->oc : 0;
  void *tmp = NULL;
  float *sc = pad || pooled ? scratch_get(c, sizeof(float) * (size_t)((j.pad_floats + two) * threads), &tmp)
                            : NULL;
  if (pooled && !sc) return false;
  if (pad && !sc) wide = false;   /* no room for padded images: the AVX2 kernel's edge path */
  j.pad = pad ? sc : NULL, j.rows2 = pooled ? sc + j.pad_floats * threads : NULL;
  if (pooled) rt_parallel_range(g->n * (g->oh / 2), 1, threads, d512_pool_rows, &j);
  else rt_parallel_range(rows, 1, threads, wide ? d512_rows : direct_rows, &j);
  free(tmp);
  return true;
}

static bool direct_ok(const geom *g, bool f32) {
  static _Atomic int cpu = -1;
  if (cpu < 0) {
    __builtin_cpu_init();
    cpu = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }
  int64_t cols = g->kh * g->kw * g->ic;
  int64_t nv = g->oc / 8;
  return cpu && f32 && cols <= DIRECT_MAX_COLS && g->oc % 8 == 0 &&
         (nv == 1 || nv == 2 || nv == 4 || nv == 8);
}

#else
void op_cpu_direct_conv_avx512(bool on) { (void)on; }
static bool direct512_ok(const geom *g) { (void)g; return false; }
static bool direct_ok(const geom *g, bool f32) { (void)g, (void)f32; return false; }
static bool conv_direct(rt_kernel_ctx *c, const geom *g, const float *x, const float *w,
                        const epilogue *e, float *y, bool pooled, uint8_t *ws) {
  (void)c, (void)g, (void)x, (void)w, (void)e, (void)y, (void)pooled, (void)ws;
  return false;
}
#endif

/* ---- direct float filter gradient for short columns (AVX-512) ----------------------
 * dw[t, o] = sum over output pixels p of x(p, t) dy[p, o], t a tap of the window. With
 * cols <= DIRECT_MAX_COLS the im2col + gemm path writes 25 floats a pixel to multiply a
 * 25 x 32 product along k = every pixel, which BLIS blocks poorly (1.9 ms for the CNN's
 * first layer, TF 0.9). Here each tap's accumulators for 16, 32 or 64 output channels
 * sit in zmm registers (FILT_ACC of 32), a group of taps at a time, and each pixel adds
 * its x broadcast times its dy row; padding taps add nothing. The sums run in another
 * order than the gemm's (a chain per tile of image rows, then the tiles' partials in
 * tile order, so the bits do not depend on the thread count). */
#if defined(__x86_64__) && defined(__GNUC__)
#define FILT_TARGET __attribute__((target("avx512f,avx512bw,avx512vl")))
enum { FILT_ACC = 26 };

typedef struct filt_job {
  const geom *g;
  const float *x, *dy;
  float *dw, *part;       /* tile 0 sums into dw, tile t > 0 into part + (t - 1) * cols * oc */
  int64_t tiles;
  const uint8_t *ws;      /* non-NULL: dy is 2x2 pools' gradient, each pixel's row from the */
  const float *dyp;       /* workspace and the pooled gradient (filt_ws_row) */
} filt_job;

/* dy's row at pixel (oy, ox) of image b from a 2x2 pool's workspace and gradient dyp: dyp
 * where the pixel's byte is its window's position plus 4, 0 elsewhere. ws_grad writes
 * 0 + dyp (so +0 for -0), which no sum here can tell: the accumulators start at +0 and
 * never hold -0 (x + -0 is x, +0 + -0 is +0), so the bits are those of the dy it writes.
 * Two vectors of registers are all it takes beside the accumulators. */
static inline __attribute__((always_inline)) FILT_TARGET void
filt_ws_row(const filt_job *j, int64_t b, int64_t oy, int64_t ox, __m512 *dv, const int nv) {
  const geom *g = j->g;
  int64_t at = ((b * (g->oh / 2) + oy / 2) * (g->ow / 2) + ox / 2) * g->oc;
  const __m128i code = _mm_set1_epi8((char)(4 | (oy & 1) << 1 | (ox & 1)));
#pragma GCC unroll 4
  for (int v = 0; v < nv; v++) {
    __m128i w = _mm_loadu_si128((const __m128i *)(j->ws + at + 16 * v));
    __mmask16 k = _mm_cmpeq_epi8_mask(w, code);
    __m512 d = _mm512_loadu_ps(j->dyp + at + 16 * v);
    __asm__("" : "+v"(d));   /* a plain load and a masked move: no masked load */
    dv[v] = _mm512_maskz_mov_ps(k, d);
  }
}

static inline __attribute__((always_inline)) FILT_TARGET void
filt_tile_nv(const filt_job *j, int64_t lo, int64_t hi, float *dw, const int nv, const bool ws) {
  const geom *g = j->g;
  const int G = FILT_ACC / nv;
  int64_t cols = g->kh * g->kw * g->ic, run = g->kw * g->ic, ic = g->ic;
  for (int64_t t0 = 0; t0 < cols; t0 += G) {
    int64_t off[FILT_ACC], ty[FILT_ACC], tx[FILT_ACC], tc[FILT_ACC];
    for (int q = 0; q < G; q++) {   /* taps past cols read tap 0 into unused accumulators */
      int64_t t = t0 + q < cols ? t0 + q : 0;
      ty[q] = t / run, tx[q] = t % run / ic, tc[q] = t % ic;
      off[q] = (ty[q] * g->iw + tx[q]) * ic + tc[q];
    }
    __m512 acc[FILT_ACC];
#pragma GCC unroll 26
    for (int q = 0; q < G * nv; q++) acc[q] = _mm512_setzero_ps();
    for (int64_t by = lo; by < hi; by++) {
      int64_t b = by / g->oh, oy = by % g->oh, y0 = oy * g->sh - g->pt;
      const float *img = j->x + b * g->ih * g->iw * ic, *d = ws ? NULL : j->dy + by * g->ow * g->oc;
      for (int64_t ox = 0; ox < g->ow; ox++, d += ws ? 0 : g->oc) {
        int64_t x0 = ox * g->sw - g->pl;
        __m512 dv[4];
        if (ws) filt_ws_row(j, b, oy, ox, dv, nv);
        else
#pragma GCC unroll 4
          for (int v = 0; v < nv; v++) dv[v] = _mm512_loadu_ps(d + 16 * v);
        if (y0 >= 0 && y0 + g->kh <= g->ih && x0 >= 0 && x0 + g->kw <= g->iw) {
          const float *base = img + (y0 * g->iw + x0) * ic;
#pragma GCC unroll 26
          for (int q = 0; q < G; q++) {
            __m512 xv = _mm512_set1_ps(base[off[q]]);
#pragma GCC unroll 4
            for (int v = 0; v < nv; v++) acc[q * nv + v] = _mm512_fmadd_ps(xv, dv[v], acc[q * nv + v]);
          }
        } else {   /* at an edge: taps outside the image add nothing */
#pragma GCC unroll 26
          for (int q = 0; q < G; q++) {
            int64_t yy = y0 + ty[q], xx = x0 + tx[q];
            if (yy < 0 || yy >= g->ih || xx < 0 || xx >= g->iw) continue;
            __m512 xv = _mm512_set1_ps(img[(yy * g->iw + xx) * ic + tc[q]]);
#pragma GCC unroll 4
            for (int v = 0; v < nv; v++) acc[q * nv + v] = _mm512_fmadd_ps(xv, dv[v], acc[q * nv + v]);
          }
        }
      }
    }
    for (int q = 0; q < G && t0 + q < cols; q++)
      for (int v = 0; v < nv; v++) _mm512_storeu_ps(dw + (t0 + q) * g->oc + 16 * v, acc[q * nv + v]);
  }
}

static FILT_TARGET void filt_tile(void *arg, int64_t t, int who) {
  const filt_job *j = arg;
  const geom *g = j->g;
  int64_t lo, hi, cols = g->kh * g->kw * g->ic;
  rt_tile_range(g->n * g->oh, j->tiles, t, &lo, &hi);
  float *dw = t ? j->part + (t - 1) * cols * g->oc : j->dw;
  if (j->ws) {
    if (g->oc == 16) filt_tile_nv(j, lo, hi, dw, 1, true);
    else if (g->oc == 32) filt_tile_nv(j, lo, hi, dw, 2, true);
    else filt_tile_nv(j, lo, hi, dw, 4, true);
  } else {
    if (g->oc == 16) filt_tile_nv(j, lo, hi, dw, 1, false);
    else if (g->oc == 32) filt_tile_nv(j, lo, hi, dw, 2, false);
    else filt_tile_nv(j, lo, hi, dw, 4, false);
  }
}

static bool filt_direct_ok(const geom *g, bool f32) {
  int64_t cols = g->kh * g->kw * g->ic;
  return f32 && cols <= DIRECT_MAX_COLS && (g->oc == 16 || g->oc == 32 || g->oc == 64) &&
         op_cpu_avx512();
}

/* Tiles of at least 8 image rows, at most RT_SUM_TILES; part: room for tiles - 1 partials. */
static int64_t filt_tiles(const geom *g) { return rt_sum_tiles(g->n * g->oh, 8); }

/* dy, or with ws: the 2x2 pools' gradient from ws and dyp (filt_ws_row). */
static void filt_direct(const geom *g, const float *x, const float *dy, const uint8_t *ws,
                        const float *dyp, float *dw, float *part) {
  filt_job j = {.g = g, .x = x, .dy = dy, .dw = dw, .part = part, .tiles = filt_tiles(g),
                .ws = ws, .dyp = dyp};
  int64_t nw = g->kh * g->kw * g->ic * g->oc;
  int threads = g->n * g->oh * g->ow * nw >= (1 << 20) ? n_threads() : 1;
  rt_parallel_tiles_heavy(j.tiles, threads, filt_tile, &j);
  for (int64_t t = 1; t < j.tiles; t++) {
    const float *p = part + (t - 1) * nw;
    _Pragma("omp simd") for (int64_t i = 0; i < nw; i++) dw[i] += p[i];
  }
}
#else
static bool filt_direct_ok(const geom *g, bool f32) { (void)g, (void)f32; return false; }
static int64_t filt_tiles(const geom *g) { (void)g; return 1; }
static void filt_direct(const geom *g, const float *x, const float *dy, const uint8_t *ws,
                        const float *dyp, float *dw, float *part) {
  (void)g, (void)x, (void)dy, (void)ws, (void)dyp, (void)dw, (void)part;
}
#endif

/* One chunk's im2col and gemm a tile; the running thread's column buffer (`who`). */
typedef struct fwd_job {
  const geom *g;
  const plan *p;
  bool f32;
  size_t es;
  const char *x, *w;
  const epilogue *e;
  char *y, *col;
} fwd_job;

static void fwd_chunk(void *arg, int64_t ch, int who) {
  const fwd_job *j = arg;
  const geom *g = j->g;
  int64_t rows = g->n * g->oh * g->ow, cols = g->kh * g->kw * g->ic, R = j->p->R;
  int64_t r0 = ch * R, nr = rows - r0 < R ? rows - r0 : R;
  char *cb = j->col + (size_t)(who * R * cols) * j->es;
  im2col(g, j->x, cb, r0, nr, j->es);
  char *y = j->y + (size_t)(r0 * g->oc) * j->es;
  gemm(j->f32, nr, g->oc, cols, cb, cols, 1, j->w, g->oc, 1, 0, y, j->p->nt > 1 ? 1 : 0);
  if (j->p->nt > 1) epilogue_rows(j->e, j->f32, y, nr, g->oc);
  else epilogue_all(j->e, j->f32, y, nr, g->oc);
}

/* y[rows, oc] = im2col(x) @ w[cols, oc] on plan p, then e (NULL: none); col holds p.nt
 * buffers of R * cols. */
static void conv_fwd(const geom *g, const plan *p, bool f32, size_t es, const char *x,
                     const char *w, const epilogue *e, char *y, char *col) {
  fwd_job j = {.g = g, .p = p, .f32 = f32, .es = es, .x = x, .w = w, .e = e, .y = y, .col = col};
  rt_parallel_tiles_heavy(p->chunks, p->nt, fwd_chunk, &j);
}

/* ---- oneDNN tiles (ops/cpu/onednn.h) ---------------------------------------------- *
 * Float convolutions run as oneDNN calls of one thread each, over tiles of b images
 * (about RT_RANGE_PER_THREAD a thread) that the pool hands out; the last tile takes the
 * rest. The filter gradient sums in tile order (tile 0 into dw, the others beside it, then
 * dw += 1, 2, ...), so its bits follow the tiling, never which thread ran what. */
typedef struct dnnl_job {
  int kind;
  const geom *g;
  int64_t b, tiles;
  const op_dnnl_prim *p[2];   /* tiles of b images; the last tile */
  const epilogue *e;
  float *x, *w, *y;           /* w: the filter in the kernel's layout */
  float *part;                /* BWD_WEIGHTS: tiles 1.., fw floats each */
  size_t fw;
  char *scratch;              /* sb bytes a thread */
  size_t sb;
  _Atomic bool failed;
} dnnl_job;

static void dnnl_tile(void *arg, int64_t t, int who) {
  dnnl_job *j = arg;
  const geom *g = j->g;
  int64_t i0 = t * j->b, xs = g->ih * g->iw * g->ic, ys = g->oh * g->ow * g->oc;
  float *x = j->x + i0 * xs, *y = j->y + i0 * ys, *w = j->w;
  if (j->kind == OP_DNNL_BWD_WEIGHTS && t) w = j->part + (size_t)(t - 1) * j->fw;
  if (!op_dnnl_run(j->p[t == j->tiles - 1], x, w, y, j->scratch + (size_t)who * j->sb))
    j->failed = true;
  else if (j->kind == OP_DNNL_FWD)
    epilogue_rows(j->e, true, y, (g->n - i0 < j->b ? g->n - i0 : j->b) * g->oh * g->ow, g->oc);
}

static op_dnnl_prim *dnnl_prim(int kind, const geom *g, int64_t n) {
  op_dnnl_conv d = {.n = n, .ih = g->ih, .iw = g->iw, .ic = g->ic, .kh = g->kh, .kw = g->kw,
                    .oc = g->oc, .sh = g->sh, .sw = g->sw, .oh = g->oh, .ow = g->ow,
                    .pt = g->pt, .pl = g->pl};
  return op_dnnl_prepare(kind, &d);
}

/* The convolution of `kind` through oneDNN on whole tensors (x, w in TF's HWIO, y as
 * op_dnnl_run names them); false: not done (no fast oneDNN kernel, an error), and the
 * caller's own kernels then write the whole output. */
static bool conv_dnnl(rt_kernel_ctx *c, int kind, const geom *g, float *x, float *w, float *y,
                      const epilogue *e) {
  int T = n_threads();
  int64_t per = (int64_t)T * RT_RANGE_PER_THREAD, b = (g->n + per - 1) / per;
  dnnl_job j = {.kind = kind, .g = g, .b = b, .tiles = (g->n + b - 1) / b, .e = e, .x = x,
                .y = y};
  j.p[0] = dnnl_prim(kind, g, b);
  j.p[1] = g->n % b ? dnnl_prim(kind, g, g->n % b) : j.p[0];
  if (!j.p[0] || !j.p[1] || !op_dnnl_same_filter(j.p[0], j.p[1])) return false;
  size_t s0 = op_dnnl_scratch(j.p[0]), s1 = op_dnnl_scratch(j.p[1]);
  size_t own = op_dnnl_filter_bytes(j.p[0]);   /* 0: the kernel reads HWIO as it is */
  size_t fb = own ? own : (size_t)(g->kh * g->kw * g->ic * g->oc) * sizeof(float);
  j.sb = align64(s0 > s1 ? s0 : s1);
  size_t partb = kind == OP_DNNL_BWD_WEIGHTS ? (size_t)(j.tiles - 1) * align64(fb) : 0;
  void *tmp = NULL;
  char *sc = scratch_get(c, (size_t)T * j.sb + align64(own) + partb, &tmp);
  if (!sc) return false;
  j.scratch = sc, j.w = own ? (float *)(sc + (size_t)T * j.sb) : w;
  j.part = (float *)(sc + (size_t)T * j.sb + align64(own));
  j.fw = align64(fb) / sizeof(float);
  if (kind != OP_DNNL_BWD_WEIGHTS && !op_dnnl_filter(j.p[0], w, j.w)) j.failed = true;
  if (!j.failed) rt_parallel_tiles_heavy(j.tiles, T, dnnl_tile, &j);
  if (!j.failed && kind == OP_DNNL_BWD_WEIGHTS) {
    size_t nf = fb / sizeof(float);
    for (int64_t t = 1; t < j.tiles; t++)
      for (size_t i = 0; i < nf; i++) j.w[i] += j.part[(size_t)(t - 1) * j.fw + i];
    if (!op_dnnl_filter(j.p[0], w, j.w)) j.failed = true;
  }
  free(tmp);
  return !j.failed;
}

/* ---- Winograd (ops/cpu/winograd.h) ----------------------------------------------- *
 * The 5x5 and 3x3 stride-1 float convolutions with channels in 16s, in the direction kind
 * (as conv_dnnl's, x w y as op_dnnl_run names them); false: not taken here. The input
 * gradient is the forward correlation of dy with the filter turned half a circle. */
static bool conv_wino(rt_kernel_ctx *c, int kind, const geom *g, float *x, float *w, float *y,
                      const epilogue *e) {
  int64_t k = g->kh;
  if ((k != 5 && k != 3) || g->kw != k || g->sh != 1 || g->sw != 1) return false;
  op_wino f = {.k = k, .n = g->n, .ih = g->ih, .iw = g->iw, .ic = g->ic, .oc = g->oc,
               .oh = g->oh, .ow = g->ow, .pt = g->pt, .pl = g->pl};
  if (kind == OP_DNNL_BWD_DATA)
    f = (op_wino){.k = k, .n = g->n, .ih = g->oh, .iw = g->ow, .ic = g->oc, .oc = g->ic,
                  .oh = g->ih, .ow = g->iw, .pt = k - 1 - g->pt, .pl = k - 1 - g->pl};
  if (!op_wino_ok(&f)) return false;
  int T = n_threads();
  void *tmp = NULL;
  size_t bytes = kind == OP_DNNL_BWD_WEIGHTS ? op_wino_filter_scratch(&f, T)
                                              : op_wino_fwd_scratch(&f, T);
  void *sc = scratch_get(c, bytes, &tmp);
  if (!sc) return false;
  if (kind == OP_DNNL_FWD)
    op_wino_fwd(&f, x, w, false, e ? e->bias : NULL, e && e->relu, y, sc, T);
  else if (kind == OP_DNNL_BWD_DATA)
    op_wino_fwd(&f, y, w, true, NULL, false, x, sc, T);
  else
    op_wino_filter(&f, x, y, w, sc, T);
  free(tmp);
  return true;
}

/* ---- Conv2D and its backprops ----------------------------------------------------- */

/* The filter gradient in partial sums, a tile each: sum s adds col^T @ dy of chunks s,
 * s + sums, ... in turn (the first with beta 0) in the running thread's column buffer, then
 * dw = sum 0 + sum 1 + ... in order. The grouping follows the plan (so the thread count, as
 * before), never which thread ran what: dw has the same bits from run to run, which a sum
 * per thread, fed by whichever thread came by, would not. One thread: one sum of every
 * chunk, as before; more: RT_RANGE_PER_THREAD sums a thread for the balance when a core is
 * busy, within FILTER_SUMS_BYTES of partials (but one a thread at least). */
enum { FILTER_SUMS_BYTES = 16 << 20 };
typedef struct filter_job {
  const geom *g;
  const plan *p;
  bool f32;
  size_t es;
  int64_t sums;
  const char *x, *dy;
  char *dw, *col, *acc;   /* acc: sums 1.. (sum 0 is dw) */
} filter_job;

static int64_t filter_sums(const plan *p, size_t accb) {
  int64_t s = p->nt > 1 ? (int64_t)p->nt * RT_RANGE_PER_THREAD : 1;
  int64_t fit = (int64_t)(FILTER_SUMS_BYTES / accb);
  if (s > fit) s = fit > p->nt ? fit : p->nt;
  return s < p->chunks ? s : p->chunks;
}

static void filter_sum(void *arg, int64_t s, int who) {
  const filter_job *j = arg;
  const geom *g = j->g;
  int64_t rows = g->n * g->oh * g->ow, cols = g->kh * g->kw * g->ic, R = j->p->R;
  char *cb = j->col + (size_t)(who * R * cols) * j->es;
  char *acc = s ? j->acc + (size_t)((s - 1) * cols * g->oc) * j->es : j->dw;
  for (int64_t ch = s; ch < j->p->chunks; ch += j->sums) {
    int64_t r0 = ch * R, nr = rows - r0 < R ? rows - r0 : R;
    im2col(g, j->x, cb, r0, nr, j->es);
    gemm(j->f32, cols, g->oc, nr, cb, 1, cols, j->dy + (size_t)(r0 * g->oc) * j->es, g->oc, 1,
         ch == s ? 0 : 1, acc, j->p->nt > 1 ? 1 : 0);
  }
}

/* _FusedConv2D's fused_ops and bias (input 2) into *e: BiasAdd, or BiasAdd then Relu. */
/* _FusedConv2D's fused_ops: [BiasAdd], [BiasAdd, Relu], or [BiasAdd, Relu, MaxPool] (the
 * remapper's, for a 2x2 MaxPool at stride 2 whose padding is pool_padding) into *e, *pool. */
static int fused_ops(rt_kernel_ctx *c, int64_t oc, epilogue *e, bool *pool) {
  const rt_attr_value *v = rt_node_attr(c->node, "fused_ops");
  int n = v && v->kind == RT_ATTR_LIST_STRING ? v->list.n : 0;
  char *const *ops = n ? v->list.v : NULL;
  if (!n) return rt_kernel_error(c, RT_UNIMPLEMENTED, "Fused Conv2D must have at least one fused op.");
  if (strcmp(ops[0], "BiasAdd") || n > 3 || (n >= 2 && strcmp(ops[1], "Relu")) ||
      (n == 3 && strcmp(ops[2], "MaxPool")))
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "Unsupported fusion: [%s%s%s%s%s]", ops[0],
                           n > 1 ? ", " : "", n > 1 ? ops[1] : "", n > 2 ? ", " : "",
                           n > 2 ? ops[2] : "");
  if (rt_node_int(c->node, "num_args", 0) != 1)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Fused Conv2D must have one extra argument: "
                           "bias.");
  const rt_tensor *b = c->inputs[2];
  if (b->shape.ndims != 1 || b->shape.dims[0] != oc)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Must provide as many biases as the last "
                           "dimension of the input tensor: [%lld] vs. %lld",
                           (long long)(b->shape.ndims == 1 ? b->shape.dims[0] : -1), (long long)oc);
  *e = (epilogue){.bias = rt_tensor_data(b), .relu = n >= 2};
  *pool = n == 3;
  return RT_OK;
}

/* The convolution of g into y (rows x oc), its epilogue on each chunk of output rows. */
static int conv_into(rt_kernel_ctx *c, const geom *g, const epilogue *e, rt_dtype t,
                     const char *xv, const char *fv, char *y) {
  int64_t rows = g->n * g->oh * g->ow, cols = g->kh * g->kw * g->ic;
  size_t es = rt_dtype_size(t);
  bool f32 = t == RT_FLOAT;
  if (rows == 0 || g->oc == 0) return RT_OK;
  if (cols == 0) {
    memset(y, 0, (size_t)(rows * g->oc) * es);
    epilogue_all(e, f32, y, rows, g->oc);
    return RT_OK;
  }
  if (g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1) {   /* the input is the matrix */
    gemm(f32, rows, g->oc, cols, xv, cols, 1, fv, g->oc, 1, 0, y, 0);
    epilogue_all(e, f32, y, rows, g->oc);
    return RT_OK;
  }
  /* first layers: the AVX-512 direct kernel beats oneDNN's (d512_pixels), AVX2's does not */
  bool direct = direct_ok(g, f32);
  if (f32 && conv_wino(c, OP_DNNL_FWD, g, (float *)xv, (float *)fv, (float *)y, e)) return RT_OK;
  if (!(direct && direct512_ok(g)) && f32 &&
      conv_dnnl(c, OP_DNNL_FWD, g, (float *)xv, (float *)fv, (float *)y, e))
    return RT_OK;
  if (direct) {
    conv_direct(c, g, (const float *)xv, (const float *)fv, e, (float *)y, false, NULL);
    return RT_OK;
  }
  plan p = plan_chunks(g, cols, es);
  void *tmp = NULL;
  char *col = scratch_get(c, (size_t)(p.nt * p.R * cols) * es, &tmp);
  if (!col) return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  conv_fwd(g, &p, f32, es, xv, fv, e, y, col);
  free(tmp);
  return RT_OK;
}

static void pool(const geom *g, bool f32, const void *x, void *y, bool avg);

/* The 2x2 pool of g (its input the convolution's output) with its argmax workspace: tiles
 * of (image, pooled row). */
typedef struct ws_job {
  const geom *g;
  const float *x;
  float *y;
  uint8_t *ws;
} ws_job;

static void pool_ws_rows(void *arg, int64_t lo, int64_t hi, int who) {
  (void)who;
  const ws_job *j = arg;
  const geom *g = j->g;
  int64_t C = g->ic, row = g->iw * C;
  for (int64_t by = lo; by < hi; by++) {
    const float *r = j->x + 2 * by * row;   /* rows 2 py, 2 py + 1 of image b: 2 by of all */
    for (int64_t px = 0; px < g->ow; px++)
      max_2x2_ws(r + 2 * px * C, r + row + 2 * px * C, C, j->y + (by * g->ow + px) * C,
                 j->ws + (by * g->ow + px) * C);
  }
}

/* Conv2D, and _FusedConv2D with fused (its epilogue on each chunk of output rows; with a
 * MaxPool, on AVX-512's first-layer kernel two output rows at a time, pooled while in
 * cache, else the whole output in scratch, then pooled). argmax: _FusedConv2DWithArgmax,
 * output 1 the pool's workspace (max_2x2_ws), output rows and columns even. */
static int conv2d_run(rt_kernel_ctx *c, bool fused, bool argmax) {
  const rt_tensor *x = c->inputs[0], *f = c->inputs[1];
  char sa[160];
  epilogue e = {0};
  bool pooled = false;
  if (need_float(c, x->dtype)) return c->st->code;
  if (conv_attrs(c, "The Conv2D op currently only supports the NHWC tensor format on the CPU. "
                    "The op was given the format: %s"))
    return c->st->code;
  if (x->shape.ndims != 4)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "input must be 4-dimensional%s",
                           op_shape_tf(&x->shape, sa, sizeof sa));
  if (f->shape.ndims != 4)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "filter must be 4-dimensional: %s",
                           op_shape_tf(&f->shape, sa, sizeof sa));
  const int64_t *xd = x->shape.dims, *fd = f->shape.dims;
  if (xd[3] != fd[2])
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "input and filter must have the same depth: "
                           "%lld vs %lld", (long long)xd[3], (long long)fd[2]);
  geom g = {.n = xd[0], .ih = xd[1], .iw = xd[2], .ic = xd[3], .kh = fd[0], .kw = fd[1],
            .oc = fd[3]};
  if (window(c, &g)) return c->st->code;
  if (fused && fused_ops(c, g.oc, &e, &pooled)) return c->st->code;
  if (argmax && !pooled)
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "_FusedConv2DWithArgmax: fused_ops must be "
                           "[BiasAdd, Relu, MaxPool]");
  if (argmax && (g.oh % 2 || g.ow % 2))
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "_FusedConv2DWithArgmax: the convolution's "
                           "output is %lldx%lld; its 2x2 pool needs even sides",
                           (long long)g.oh, (long long)g.ow);
  geom pg = {.n = g.n, .ih = g.oh, .iw = g.ow, .ic = g.oc, .kh = 2, .kw = 2, .sh = 2, .sw = 2};
  if (pooled) {
    bool same = !strcmp(rt_node_string(c->node, "pool_padding", "VALID"), "SAME");
    if (!op_window_dim(pg.ih, 2, 2, same, &pg.oh, &pg.pt) ||
        !op_window_dim(pg.iw, 2, 2, same, &pg.ow, &pg.pl))
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Computed output size would be negative");
  }
  rt_shape os = pooled ? rt_shape_make(4, (int64_t[]){g.n, pg.oh, pg.ow, g.oc})
                     : rt_shape_make(4, (int64_t[]){g.n, g.oh, g.ow, g.oc});
  rt_tensor *out = rt_kernel_output(c, 0, x->dtype, &os);
  rt_tensor *wso = out && argmax ? rt_kernel_output(c, 1, RT_UINT8, &os) : NULL;
  if (!out || (argmax && !wso)) return c->st->code;
  uint8_t *ws = wso ? rt_tensor_data(wso) : NULL;
  bool f32 = x->dtype == RT_FLOAT;
  const char *xv = rt_tensor_data(x), *fv = rt_tensor_data(f);
  if (!pooled) return conv_into(c, &g, &e, x->dtype, xv, fv, rt_tensor_data(out));
  if (rt_tensor_numel(out) == 0) return RT_OK;
  if (f32 && direct_ok(&g, f32) && !pg.pt && !pg.pl && pg.oh * 2 == g.oh && pg.ow * 2 == g.ow &&
      conv_direct(c, &g, (const float *)xv, (const float *)fv, &e, rt_tensor_data(out), true, ws))
    return RT_OK;
  size_t bytes = (size_t)(g.n * g.oh * g.ow * g.oc) * rt_dtype_size(x->dtype);
  char *y = malloc(bytes ? bytes : 1);   /* the whole output, then the pool */
  if (!y) return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  int rc = conv_into(c, &g, &e, x->dtype, xv, fv, y);
  if (!rc && ws) {
    int64_t rows = pg.n * pg.oh;
    rt_parallel_range(rows, 1, rows * pg.ow * pg.ic * 4 >= PAR_MIN ? n_threads() : 1,
                      pool_ws_rows, &(ws_job){.g = &pg, .x = (const float *)y,
                                              .y = rt_tensor_data(out), .ws = ws});
  } else if (!rc) {
    pool(&pg, f32, y, rt_tensor_data(out), false);
  }
  free(y);
  return rc;
}

int op_cpu_conv2d(rt_kernel_ctx *c) { return conv2d_run(c, false, false); }
int op_cpu_fused_conv2d(rt_kernel_ctx *c) { return conv2d_run(c, true, false); }
int op_cpu_fused_conv2d_argmax(rt_kernel_ctx *c) { return conv2d_run(c, true, true); }

/* The backprops' shared checks (ConvBackpropComputeDimensions): in and filter shapes are
 * given as vectors (from input_sizes / filter_sizes) or tensors. */
static int backprop_geom(rt_kernel_ctx *c, const char *label, const int64_t *xd,
                         const int64_t *fd, const rt_shape *dys, geom *g) {
  char sa[160];
  if (dys->ndims != 4)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s: out_backprop must be 4-dimensional", label);
  if (xd[3] != fd[2])
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s: input and filter must have the same depth",
                           label);
  *g = (geom){.n = xd[0], .ih = xd[1], .iw = xd[2], .ic = xd[3], .kh = fd[0], .kw = fd[1],
              .oc = fd[3]};
  if (window(c, g)) return c->st->code;
  const int64_t *dd = dys->dims;
  if (dd[0] != g->n)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s: input and out_backprop must have the same "
                           "batch size", label);
  for (int d = 1; d <= 2; d++) {
    int64_t want = d == 1 ? g->oh : g->ow;
    if (dd[d] != want)
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s: Size of out_backprop doesn't match "
                             "computed: actual = %lld, computed = %lld spatial_dim: %d input: %lld "
                             "filter: %lld output: %lld stride: %lld dilation: 1", label,
                             (long long)dd[d], (long long)want, d, (long long)xd[d],
                             (long long)fd[d - 1], (long long)dd[d],
                             (long long)(d == 1 ? g->sh : g->sw));
  }
  if (dd[3] != g->oc)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s: filter and out_backprop must have the same "
                           "out_depth (out_backprop %s)", label, op_shape_tf(dys, sa, sizeof sa));
  return RT_OK;
}

/* A 4-vector of sizes (input_sizes, filter_sizes): `what` names the vector, `shaped` the
 * tensor it describes, as TF's messages do. */
static int sizes_vec(rt_kernel_ctx *c, const char *label, const char *what, const char *shaped,
                     const rt_tensor *t, int64_t *v) {
  if (t->shape.ndims != 1)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s: %s input must be 1-dim, not %d", label,
                           what, t->shape.ndims);
  if (t->shape.dims[0] != 4)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s: %s must be 4-dimensional", label, shaped);
  for (int d = 0; d < 4; d++)
    if ((v[d] = rt_tensor_get_i64(t, d)) < 0)
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Dimension %lld must be >= 0", (long long)v[d]);
  return RT_OK;
}

int op_cpu_conv2d_backprop_input(rt_kernel_ctx *c) {
  static const char *label = "Conv2DBackpropInput";
  const rt_tensor *f = c->inputs[1], *dy = c->inputs[2];
  int64_t xd[4];
  geom g;
  if (need_float(c, f->dtype)) return c->st->code;
  if (conv_attrs(c, "Conv2DCustomBackpropInputOp only supports NHWC.%.0s")) return c->st->code;
  const rt_tensor *sz = c->inputs[0];
  if (sz->shape.ndims == 1 && sz->shape.dims[0] == 2 && f->shape.ndims == 4 && dy->shape.ndims == 4) {
    /* TF 2's spatial sizes alone: batch from out_backprop, depth from the filter */
    xd[0] = dy->shape.dims[0], xd[1] = rt_tensor_get_i64(sz, 0), xd[2] = rt_tensor_get_i64(sz, 1);
    xd[3] = f->shape.dims[2];
    if (xd[1] < 0 || xd[2] < 0)
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Dimension %lld must be >= 0",
                             (long long)(xd[1] < 0 ? xd[1] : xd[2]));
  } else if (sizes_vec(c, label, "input_sizes", "input", sz, xd)) {
    return c->st->code;
  }
  if (f->shape.ndims != 4)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s: filter must be 4-dimensional", label);
  if (backprop_geom(c, label, xd, f->shape.dims, &dy->shape, &g)) return c->st->code;
  rt_shape xs = rt_shape_make(4, xd);
  rt_tensor *out = rt_kernel_output(c, 0, f->dtype, &xs);
  if (!out) return c->st->code;
  int64_t rows = g.n * g.oh * g.ow, cols = g.kh * g.kw * g.ic;
  char *dx = rt_tensor_data(out);
  if (rows == 0 || cols == 0 || g.oc == 0) {
    memset(dx, 0, rt_tensor_nbytes(out));
    return RT_OK;
  }
  size_t es = rt_dtype_size(f->dtype);
  bool f32 = f->dtype == RT_FLOAT;
  const char *fv = rt_tensor_data(f), *dv = rt_tensor_data(dy);
  if (g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1) {   /* dx = dy @ filter^T */
    gemm(f32, rows, cols, g.oc, dv, g.oc, 1, fv, 1, g.oc, 0, dx, 0);
    return RT_OK;
  }
  if (f32 && conv_wino(c, OP_DNNL_BWD_DATA, &g, (float *)dx, (float *)fv, (float *)dv, NULL))
    return RT_OK;
  if (f32 && g.ic >= DNNL_MIN_DATA_IC &&
      conv_dnnl(c, OP_DNNL_BWD_DATA, &g, (float *)dx, (float *)fv, (float *)dv, NULL))
    return RT_OK;
  void *tmp = NULL;
  size_t fbytes = (size_t)(cols * g.oc) * es;
  if (g.sh == 1 && g.sw == 1 && g.oc < 2 * g.ic) {
    /* Stride 1: dx is Conv2D of dy (padded by k - 1 - pad) with the filter turned half a
     * circle and its channels swapped, G[kh-1-i, kw-1-j, o, c] = F[i, j, c, o]: im2col of
     * dy and one gemm per chunk, no scatter. Its gemm is [in pixels, kh*kw*oc] x
     * [kh*kw*oc, ic]: with oc >= 2 ic (a CNN's deeper layers: 32 -> 64) it is narrow, its
     * im2col of dy large (42 MB for the tf.layers CNN's second layer) and, for VALID, it
     * multiplies the padding too; col2im below then took 8.3 ms of one thread's time
     * against 11.3 (that layer) and 40 against 46 (the tutorial's SAME 5x5 32 -> 64),
     * where with oc 16 or 32 against ic 64 this one took 7.6-9.5 ms against 10.9-13.5. */
    geom d = {.n = g.n, .ih = g.oh, .iw = g.ow, .ic = g.oc, .kh = g.kh, .kw = g.kw, .oc = g.ic,
              .sh = 1, .sw = 1, .oh = g.ih, .ow = g.iw, .pt = g.kh - 1 - g.pt,
              .pl = g.kw - 1 - g.pl};
    int64_t dcols = d.kh * d.kw * d.ic;
    plan p = plan_chunks(&d, dcols, es);
    char *col = scratch_get(c, (size_t)(p.nt * p.R * dcols) * es + fbytes, &tmp);
    if (!col) return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
    char *gv = col + (size_t)(p.nt * p.R * dcols) * es;
    for (int64_t i = 0; i < g.kh; i++)
      for (int64_t j = 0; j < g.kw; j++)
        for (int64_t ch = 0; ch < g.ic; ch++)
          for (int64_t o = 0; o < g.oc; o++)
            memcpy(gv + (size_t)((((g.kh - 1 - i) * g.kw + g.kw - 1 - j) * g.oc + o) * g.ic + ch) * es,
                   fv + (size_t)(((i * g.kw + j) * g.ic + ch) * g.oc + o) * es, es);
    conv_fwd(&d, &p, f32, es, dv, gv, NULL, dx, col);
    free(tmp);
    return RT_OK;
  }
  /* Strided, or oc >= 2 ic: dcol = dy @ filter^T (the filter transposed once, BLIS packs
   * that faster), scattered back by col2im. */
  memset(dx, 0, rt_tensor_nbytes(out));
  int64_t R = chunk_rows(&g, cols, es, n_threads());
  char *col = scratch_get(c, (size_t)(R * cols) * es + fbytes, &tmp);
  if (!col) return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  char *ft = col + (size_t)(R * cols) * es;
  for (int64_t i = 0; i < cols; i++)
    for (int64_t o = 0; o < g.oc; o++)
      memcpy(ft + (size_t)(o * cols + i) * es, fv + (size_t)(i * g.oc + o) * es, es);
  for (int64_t r0 = 0; r0 < rows; r0 += R) {
    int64_t nr = rows - r0 < R ? rows - r0 : R;
    gemm(f32, nr, cols, g.oc, dv + (size_t)(r0 * g.oc) * es, g.oc, 1, ft, cols, 1, 0, col, 0);
    col2im(&g, f32, col, dx, r0, nr);
  }
  free(tmp);
  return RT_OK;
}

/* dw = Conv2D's filter gradient of x and dy (geometry g) into dw, dw_bytes long. */
static int filter_grad(rt_kernel_ctx *c, const geom *g, rt_dtype t, const char *xv, const char *dv,
                       char *dw, size_t dw_bytes) {
  int64_t rows = g->n * g->oh * g->ow, cols = g->kh * g->kw * g->ic;
  if (rows == 0 || cols == 0 || g->oc == 0) {
    memset(dw, 0, dw_bytes);
    return RT_OK;
  }
  size_t es = rt_dtype_size(t);
  bool f32 = t == RT_FLOAT;
  if (g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1) {   /* dw = x^T @ dy */
    gemm(f32, cols, g->oc, rows, xv, 1, cols, dv, g->oc, 1, 0, dw, 0);
    return RT_OK;
  }
  if (f32 && (conv_wino(c, OP_DNNL_BWD_WEIGHTS, g, (float *)xv, (float *)dw, (float *)dv, NULL) ||
              conv_dnnl(c, OP_DNNL_BWD_WEIGHTS, g, (float *)xv, (float *)dw, (float *)dv, NULL)))
    return RT_OK;
  if (filt_direct_ok(g, f32)) {
    void *tmp = NULL;
    float *part = scratch_get(c, (size_t)((filt_tiles(g) - 1) * cols * g->oc) * es, &tmp);
    if (!part) return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
    filt_direct(g, (const float *)xv, (const float *)dv, NULL, NULL, (float *)dw, part);
    free(tmp);
    return RT_OK;
  }
  plan p = plan_chunks(g, cols, es);
  size_t colb = (size_t)(p.R * cols) * es, accb = (size_t)(cols * g->oc) * es;
  int64_t sums = filter_sums(&p, accb);
  void *tmp = NULL;
  char *col = scratch_get(c, (size_t)p.nt * colb + (size_t)(sums - 1) * accb, &tmp);
  if (!col) return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  filter_job j = {.g = g, .p = &p, .f32 = f32, .es = es, .sums = sums, .x = xv, .dy = dv,
                  .dw = dw, .col = col, .acc = col + (size_t)p.nt * colb};
  rt_parallel_tiles_heavy(sums, p.nt, filter_sum, &j);
  int64_t nw = cols * g->oc;
  for (int64_t s = 1; s < sums; s++) {
    const char *acc = j.acc + (size_t)(s - 1) * accb;
    if (f32)
      for (int64_t i = 0; i < nw; i++) ((float *)dw)[i] += ((const float *)acc)[i];
    else
      for (int64_t i = 0; i < nw; i++) ((double *)dw)[i] += ((const double *)acc)[i];
  }
  free(tmp);
  return RT_OK;
}

int op_cpu_conv2d_backprop_filter(rt_kernel_ctx *c) {
  static const char *label = "Conv2DBackpropFilter";
  const rt_tensor *x = c->inputs[0], *dy = c->inputs[2];
  int64_t fd[4];
  geom g;
  if (need_float(c, x->dtype)) return c->st->code;
  if (conv_attrs(c, "Conv2DCustomBackpropFilterOp only supports NHWC.%.0s")) return c->st->code;
  if (sizes_vec(c, label, "filter_sizes", "filter", c->inputs[1], fd)) return c->st->code;
  if (x->shape.ndims != 4)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s: input must be 4-dimensional", label);
  if (backprop_geom(c, label, x->shape.dims, fd, &dy->shape, &g)) return c->st->code;
  rt_shape fs = rt_shape_make(4, fd);
  rt_tensor *out = rt_kernel_output(c, 0, x->dtype, &fs);
  if (!out) return c->st->code;
  return filter_grad(c, &g, x->dtype, rt_tensor_data(x), rt_tensor_data(dy), rt_tensor_data(out),
                     rt_tensor_nbytes(out));
}

/* ---- pools ------------------------------------------------------------------------- */

/* ksize and strides (batch and depth must be 1), NHWC, a 4-D input of shape xd. */
static int pool_geom(rt_kernel_ctx *c, const char *op, const int64_t *xd, int nd, geom *g) {
  int nk, ns;
  const int64_t *k = op_list_ints(c->node, "ksize", &nk), *s = op_list_ints(c->node, "strides", &ns);
  if (strcmp(rt_node_string(c->node, "data_format", "NHWC"), "NHWC"))
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Default %s only supports NHWC on device type "
                           "CPU", op);
  if (nk != 4)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Sliding window ksize field must specify 4 "
                           "dimensions");
  if (ns != 4)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Sliding window stride field must specify 4 "
                           "dimensions");
  if (k[0] != 1 || s[0] != 1)
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "Pooling is not yet supported on the batch "
                           "dimension.");
  if (k[3] != 1 || s[3] != 1)
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "Pooling is not yet supported on the depth "
                           "dimension.");
  if (nd != 4)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "tensor_in must be 4-dimensional");
  *g = (geom){.n = xd[0], .ih = xd[1], .iw = xd[2], .ic = xd[3], .kh = k[1], .kw = k[2],
              .oc = xd[3]};
  if (g->kh < 1 || g->kw < 1)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Sliding window ksize for dimension %d was "
                           "zero.", g->kh < 1 ? 1 : 2);
  return window(c, g);
}

/* The window of output pixel (y, x) clipped to the input: rows [*y0, *y1), cols [*x0, *x1). */
static inline void clip(const geom *g, int64_t y, int64_t x, int64_t *y0, int64_t *y1,
                        int64_t *x0, int64_t *x1) {
  *y0 = y * g->sh - g->pt, *x0 = x * g->sw - g->pl;
  *y1 = *y0 + g->kh < g->ih ? *y0 + g->kh : g->ih;
  *x1 = *x0 + g->kw < g->iw ? *x0 + g->kw : g->iw;
  if (*y0 < 0) *y0 = 0;
  if (*x0 < 0) *x0 = 0;
}

/* MaxPoolGrad's 2x2 windows in float on AVX-512 or AVX2 (GCC's vectorizer leaves the
 * generic loop below scalar on AVX2 with relu); the same operations, in registers:
 * ordered compares (a NaN never wins), the first maximum, 0 + dy (so -0 gives +0). */
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx512f"))) static void
pool_2x2_512(const float *p, int64_t row, int64_t C, const float *d, float *q, bool relu) {
  const __m512 zero = _mm512_setzero_ps();
  for (int64_t k = 0; k < C; k += 16) {
    __mmask16 t = C - k >= 16 ? 0xffff : (__mmask16)((1u << (C - k)) - 1), s1, s2, s3;
    __m512 m = max4_512(t, p + k, p + C + k, p + row + k, p + row + C + k, &s1, &s2, &s3);
    __m512 g = _mm512_add_ps(zero, _mm512_maskz_loadu_ps(t, d + k));
    if (relu) g = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(m, zero, _CMP_GT_OQ), g);
    _mm512_mask_storeu_ps(q + k, t, _mm512_maskz_mov_ps((__mmask16)~(s1 | s2 | s3), g));
    _mm512_mask_storeu_ps(q + C + k, t, _mm512_maskz_mov_ps(s1 & (__mmask16)~(s2 | s3), g));
    _mm512_mask_storeu_ps(q + row + k, t, _mm512_maskz_mov_ps(s2 & (__mmask16)~s3, g));
    _mm512_mask_storeu_ps(q + row + C + k, t, _mm512_maskz_mov_ps(s3, g));
  }
}

__attribute__((target("avx2"))) static void
pool_2x2_256(const float *p, int64_t row, int64_t C, const float *d, float *q, bool relu) {
  const __m256 zero = _mm256_setzero_ps();
  for (int64_t k = 0; k < C; k += 8) {
    __m256 s1, s2, s3, m = max4_256(p + k, p + C + k, p + row + k, p + row + C + k, &s1, &s2, &s3);
    __m256 g = _mm256_add_ps(zero, _mm256_loadu_ps(d + k));
    if (relu) g = _mm256_and_ps(_mm256_cmp_ps(m, zero, _CMP_GT_OQ), g);
    __m256 s23 = _mm256_or_ps(s2, s3);
    _mm256_storeu_ps(q + k, _mm256_andnot_ps(_mm256_or_ps(s1, s23), g));
    _mm256_storeu_ps(q + C + k, _mm256_and_ps(_mm256_andnot_ps(s23, s1), g));
    _mm256_storeu_ps(q + row + k, _mm256_and_ps(_mm256_andnot_ps(s3, s2), g));
    _mm256_storeu_ps(q + row + C + k, _mm256_and_ps(s3, g));
  }
}

/* 2: AVX-512, 1: AVX2, 0: neither; pool_isa: the one used (op_cpu_pool_simd). */
static int pool_best(void) {
  static _Atomic int best = -1;
  if (best < 0) {
    __builtin_cpu_init();
    best = op_cpu_avx512() ? 2 : __builtin_cpu_supports("avx2") ? 1 : 0;
  }
  return best;
}
static _Atomic int pool_isa = -1;

int op_cpu_pool_simd(int level) {
  int best = pool_best();
  pool_isa = level >= 0 && level < best ? level : best;
  return pool_isa;
}

static int pool_level(void) {
  int isa = pool_isa;
  if (isa < 0) pool_isa = isa = pool_best();
  return isa;
}

/* true: done on the CPU's SIMD (AVX2 takes whole vectors of 8 channels only). */
static bool pool_grad_2x2_f32(const float *p, int64_t row, int64_t C, const float *d, float *q,
                              bool relu) {
  int isa = pool_level();
  if (isa == 2) pool_2x2_512(p, row, C, d, q, relu);
  else if (isa == 1 && C % 8 == 0) pool_2x2_256(p, row, C, d, q, relu);
  else return false;
  return true;
}
#else
static int pool_level(void) { return 0; }
int op_cpu_pool_simd(int level) { (void)level; return 0; }
static bool pool_grad_2x2_f32(const float *p, int64_t row, int64_t C, const float *d, float *q,
                              bool relu) {
  (void)p, (void)row, (void)C, (void)d, (void)q, (void)relu;
  return false;
}
#endif
static bool pool_grad_2x2_none(const double *p, int64_t row, int64_t C, const double *d,
                               double *q, bool relu) {
  (void)p, (void)row, (void)C, (void)d, (void)q, (void)relu;
  return false;
}
#define POOL_2X2_FAST_float pool_grad_2x2_f32
#define POOL_2X2_FAST_double pool_grad_2x2_none

typedef struct pool_job {
  const geom *g;
  const void *x, *dy;   /* dy: the gradients' */
  void *y;
  bool avg, relu;   /* relu: _FusedMaxPoolGrad, only maxima above 0 get their gradient */
} pool_job;

/* Forward, max or average, tiles of (image, output row); channels innermost. */
#define POOL(T, I)                                                                        \
  OP_CLONES static void pool_rows_##T(void *arg, int64_t lo, int64_t hi, int who) {     \
    const pool_job *jb = arg;                                                           \
    const geom *g = jb->g;                                                              \
    const T *x = jb->x;                                                                 \
    T *y = jb->y;                                                                       \
    bool avg = jb->avg;                                                                 \
    int64_t C = g->ic;                                                                  \
    for (int64_t by = lo; by < hi; by++) {                                              \
      int64_t b = by / g->oh, oy = by % g->oh;                                          \
      for (int64_t ox = 0; ox < g->ow; ox++) {                                          \
        int64_t y0, y1, x0, x1;                                                         \
        clip(g, oy, ox, &y0, &y1, &x0, &x1);                                            \
        T *o = y + ((b * g->oh + oy) * g->ow + ox) * C;                                 \
        if (avg) {                                                                      \
          memset(o, 0, sizeof(T) * (size_t)C);                                          \
          for (int64_t i = y0; i < y1; i++)                                             \
            for (int64_t j = x0; j < x1; j++) {                                         \
              const T *p = x + ((b * g->ih + i) * g->iw + j) * C;                       \
              _Pragma("omp simd") for (int64_t k = 0; k < C; k++) o[k] += p[k];         \
            }                                                                           \
          T cnt = (T)((y1 - y0) * (x1 - x0));                                           \
          _Pragma("omp simd") for (int64_t k = 0; k < C; k++) o[k] /= cnt;              \
          continue;                                                                     \
        }                                                                               \
        const T *p0 = x + ((b * g->ih + y0) * g->iw + x0) * C;                          \
        if (y1 - y0 == 2 && x1 - x0 == 2) { /* 2x2: four pixels, one pass */            \
          max_2x2_##T(p0, p0 + g->iw * C, C, o);                                        \
          continue;                                                                     \
        }                                                                               \
        memcpy(o, p0, sizeof(T) * (size_t)C);                                           \
        for (int64_t i = y0; i < y1; i++)                                               \
          for (int64_t j = x0; j < x1; j++) {                                           \
            const T *p = x + ((b * g->ih + i) * g->iw + j) * C;                         \
            _Pragma("omp simd") for (int64_t k = 0; k < C; k++) o[k] = p[k] > o[k] ? p[k] : o[k]; \
          }                                                                             \
      }                                                                                 \
    }                                                                                   \
  }                                                                                     \
  /* Each of channels [k0, k0 + kn)'s maximum over the window rows [y0, y1), columns      \
   * [x0, x1) of image xb into bv, the first pixel holding it into bi: a vector           \
   * compare-and-select (masks, no branch). */                                          \
  static inline __attribute__((always_inline)) void                                     \
  pool_argmax_##T(const geom *g, const T *xb, int64_t y0, int64_t y1, int64_t x0,       \
                  int64_t x1, int64_t k0, int64_t kn, T *bv, I *bi) {                   \
    int64_t C = g->ic;                                                                  \
    I first = (I)(y0 * g->iw + x0);                                                     \
    _Pragma("omp simd") for (int64_t k = 0; k < kn; k++) {                              \
      bv[k] = xb[first * C + k0 + k];                                                   \
      bi[k] = first;                                                                    \
    }                                                                                   \
    for (int64_t i = y0; i < y1; i++)                                                   \
      for (int64_t j = x0; j < x1; j++) {                                               \
        I at = (I)(i * g->iw + j);                                                      \
        const T *p = xb + at * C + k0;                                                  \
        _Pragma("omp simd") for (int64_t k = 0; k < kn; k++) {                          \
          I m = -(I)(p[k] > bv[k]);                                                     \
          bv[k] = p[k] > bv[k] ? p[k] : bv[k];                                          \
          bi[k] = (bi[k] & ~m) | (at & m);                                              \
        }                                                                               \
      }                                                                                 \
  }                                                                                     \
  /* One 2x2 window of C channels (every CNN's pool), its four pixels at p, p + C, p +    \
   * row, p + row + C: the first maximum by three compare-and-selects in the order        \
   * pool_argmax_##T scans (s_i: pixel i beats those before it), then each pixel written  \
   * once, as below. Float has SIMD versions (pool_grad_2x2_f32). */                      \
  static inline __attribute__((always_inline)) void                                     \
  pool_2x2_body_##T(const T *p, int64_t row, int64_t C, const T *d, T *q, const bool relu) { \
    _Pragma("omp simd") for (int64_t k = 0; k < C; k++) {                               \
      T v0 = p[k], v1 = p[C + k], v2 = p[row + k], v3 = p[row + C + k], dk = d[k];      \
      int s1 = v1 > v0;                                                                 \
      T m = s1 ? v1 : v0;                                                               \
      int s2 = v2 > m;                                                                  \
      m = s2 ? v2 : m;                                                                  \
      int s3 = v3 > m;                                                                  \
      m = s3 ? v3 : m;                                                                  \
      T gv = (T)0 + (!relu || m > 0 ? dk : (T)0);                                       \
      int w = s3 ? 3 : s2 ? 2 : s1;                                                     \
      q[k] = w == 0 ? gv : (T)0, q[C + k] = w == 1 ? gv : (T)0;                         \
      q[row + k] = w == 2 ? gv : (T)0, q[row + C + k] = w == 3 ? gv : (T)0;             \
    }                                                                                   \
  }                                                                                     \
  static inline __attribute__((always_inline)) void                                     \
  pool_grad_2x2_##T(const T *p, int64_t row, int64_t C, const T *d, T *q, bool relu) {  \
    if (POOL_2X2_FAST_##T(p, row, C, d, q, relu)) return;                               \
    if (relu) pool_2x2_body_##T(p, row, C, d, q, true);                                 \
    else pool_2x2_body_##T(p, row, C, d, q, false);                                     \
  }                                                                                     \
  /* MaxPoolGrad of one image whose windows tile it (stride = window): each pixel of a   \
   * window is written once, its gradient where it is the first maximum (0 + dy, the     \
   * bits of the scatter below) and 0 elsewhere; no zeroing first, no scatter. */        \
  static inline __attribute__((always_inline)) void                                     \
  pool_grad_tiled_##T(const geom *g, const T *xb, const T *dyb, T *dxb, bool relu) {    \
    int64_t C = g->ic;                                                                  \
    for (int64_t oy = 0; oy < g->oh; oy++)                                              \
      for (int64_t ox = 0; ox < g->ow; ox++) {                                          \
        int64_t y0, y1, x0, x1;                                                         \
        clip(g, oy, ox, &y0, &y1, &x0, &x1);                                            \
        const T *d = dyb + (oy * g->ow + ox) * C;                                       \
        if (y1 - y0 == 2 && x1 - x0 == 2) {                                             \
          pool_grad_2x2_##T(xb + (y0 * g->iw + x0) * C, g->iw * C, C, d,                \
                            dxb + (y0 * g->iw + x0) * C, relu);                         \
          continue;                                                                     \
        }                                                                               \
        for (int64_t k0 = 0; k0 < C; k0 += 64) {                                        \
          int64_t kn = C - k0 < 64 ? C - k0 : 64;                                       \
          I bi[64];                                                                     \
          T bv[64], gv[64];                                                             \
          pool_argmax_##T(g, xb, y0, y1, x0, x1, k0, kn, bv, bi);                       \
          _Pragma("omp simd") for (int64_t k = 0; k < kn; k++)                          \
            gv[k] = (T)0 + (!relu || bv[k] > 0 ? d[k0 + k] : 0);                        \
          for (int64_t i = y0; i < y1; i++)                                             \
            for (int64_t j = x0; j < x1; j++) {                                         \
              I at = (I)(i * g->iw + j);                                                \
              T *q = dxb + at * C + k0;                                                 \
              _Pragma("omp simd") for (int64_t k = 0; k < kn; k++)                      \
                q[k] = bi[k] == at ? gv[k] : 0;                                         \
            }                                                                           \
        }                                                                               \
      }                                                                                 \
  }                                                                                     \
  /* dx from dy: max routes to the first maximum, avg spreads evenly. Tiles of images    \
   * (windows of different images never overlap), each zeroing its images' part of dx    \
   * first. The max keeps each channel's best value and its pixel's index in the image,  \
   * so the scan over the window is a vector compare-and-select. */                     \
  OP_CLONES static void pool_grad_imgs_##T(void *arg, int64_t lo, int64_t hi, int who) { \
    const pool_job *jb = arg;                                                           \
    const geom *g = jb->g;                                                              \
    const T *x = jb->x, *dy = jb->dy;                                                   \
    T *dx = jb->y;                                                                      \
    bool avg = jb->avg, relu = jb->relu;                                                \
    int64_t C = g->ic, img = g->ih * g->iw * C;                                         \
    bool tiled = !avg && g->sh == g->kh && g->sw == g->kw; /* windows never overlap */   \
    bool covered = g->oh * g->kh - g->pt >= g->ih && g->ow * g->kw - g->pl >= g->iw;    \
    for (int64_t b = lo; b < hi; b++) {                                                 \
      T *dxb = dx + b * img;                                                            \
      const T *xb = avg ? NULL : x + b * img;                                           \
      if (!tiled || !covered) memset(dxb, 0, sizeof(T) * (size_t)img);                  \
      if (tiled) {                                                                      \
        pool_grad_tiled_##T(g, xb, dy + b * g->oh * g->ow * C, dxb, relu);              \
        continue;                                                                       \
      }                                                                                 \
      for (int64_t oy = 0; oy < g->oh; oy++)                                            \
        for (int64_t ox = 0; ox < g->ow; ox++) {                                        \
          int64_t y0, y1, x0, x1;                                                       \
          clip(g, oy, ox, &y0, &y1, &x0, &x1);                                          \
          const T *d = dy + ((b * g->oh + oy) * g->ow + ox) * C;                        \
          if (avg) {                                                                    \
            T cnt = (T)((y1 - y0) * (x1 - x0));                                         \
            for (int64_t i = y0; i < y1; i++)                                           \
              for (int64_t j = x0; j < x1; j++) {                                       \
                T *p = dxb + (i * g->iw + j) * C;                                       \
                _Pragma("omp simd") for (int64_t k = 0; k < C; k++) p[k] += d[k] / cnt; \
              }                                                                         \
            continue;                                                                   \
          }                                                                             \
          for (int64_t k0 = 0; k0 < C; k0 += 64) { /* 64 channels at a time */          \
            int64_t kn = C - k0 < 64 ? C - k0 : 64;                                     \
            I bi[64];                                                                   \
            T bv[64];                                                                   \
            pool_argmax_##T(g, xb, y0, y1, x0, x1, k0, kn, bv, bi);                     \
            for (int64_t k = 0; k < kn; k++) /* relu: a select, not a branch (1 in 2) */ \
              dxb[bi[k] * C + k0 + k] += !relu || bv[k] > 0 ? d[k0 + k] : 0;            \
          }                                                                             \
        }                                                                               \
    }                                                                                   \
  }
POOL(float, int32_t)   /* I: a pixel's index in its image, as wide as T for the selects */
POOL(double, int64_t)

/* MaxPoolGradGrad: each window's value of gr (shaped as the pool's input x) at the first
 * maximum of x, the pixel MaxPoolGrad routes the window's gradient to. */
#define POOL_GRAD_GRAD(T, I)                                                              \
  static void pool_grad_grad_##T(const geom *g, const T *x, const T *gr, T *out) {       \
    int64_t C = g->ic, img = g->ih * g->iw * C;                                          \
    for (int64_t b = 0; b < g->n; b++)                                                   \
      for (int64_t oy = 0; oy < g->oh; oy++)                                             \
        for (int64_t ox = 0; ox < g->ow; ox++) {                                         \
          int64_t y0, y1, x0, x1;                                                        \
          clip(g, oy, ox, &y0, &y1, &x0, &x1);                                           \
          T *o = out + ((b * g->oh + oy) * g->ow + ox) * C;                              \
          for (int64_t k0 = 0; k0 < C; k0 += 64) {                                       \
            int64_t kn = C - k0 < 64 ? C - k0 : 64;                                      \
            I bi[64];                                                                    \
            T bv[64];                                                                    \
            pool_argmax_##T(g, x + b * img, y0, y1, x0, x1, k0, kn, bv, bi);             \
            for (int64_t k = 0; k < kn; k++) o[k0 + k] = gr[b * img + bi[k] * C + k0 + k]; \
          }                                                                              \
        }                                                                                \
  }
POOL_GRAD_GRAD(float, int32_t)
POOL_GRAD_GRAD(double, int64_t)

static void pool(const geom *g, bool f32, const void *x, void *y, bool avg) {
  int64_t work = g->n * g->oh * g->ow * g->ic * g->kh * g->kw;
  rt_parallel_range(g->n * g->oh, 1, work >= PAR_MIN ? n_threads() : 1,
                    f32 ? pool_rows_float : pool_rows_double,
                    &(pool_job){.g = g, .x = x, .y = y, .avg = avg});
}

static void pool_grad(const geom *g, bool f32, const void *x, const void *dy, void *dx, bool avg,
                      bool relu) {
  int64_t work = g->n * (g->ih * g->iw * g->ic + g->oh * g->ow * g->ic * g->kh * g->kw);
  rt_parallel_range(g->n, 1, g->n > 1 && work >= PAR_MIN ? n_threads() : 1,
                    f32 ? pool_grad_imgs_float : pool_grad_imgs_double,
                    &(pool_job){.g = g, .x = x, .dy = dy, .y = dx, .avg = avg, .relu = relu});
}

static int pool_run(rt_kernel_ctx *c, bool avg) {
  const rt_tensor *x = c->inputs[0];
  geom g;
  if (need_float(c, x->dtype)) return c->st->code;
  if (pool_geom(c, avg ? "AvgPoolingOp" : "MaxPoolingOp", x->shape.dims, x->shape.ndims, &g))
    return c->st->code;
  rt_shape os = rt_shape_make(4, (int64_t[]){g.n, g.oh, g.ow, g.ic});
  rt_tensor *out = rt_kernel_output(c, 0, x->dtype, &os);
  if (!out) return c->st->code;
  pool(&g, x->dtype == RT_FLOAT, rt_tensor_data(x), rt_tensor_data(out), avg);
  return RT_OK;
}

int op_cpu_max_pool(rt_kernel_ctx *c) { return pool_run(c, false); }
int op_cpu_avg_pool(rt_kernel_ctx *c) { return pool_run(c, true); }

/* relu: _FusedMaxPoolGrad (MaxPoolGrad then ReluGrad on orig_input, which the remapper
 * folds): a window's gradient goes to its first maximum only when that is above 0, which is
 * what ReluGrad would have kept of it. */
static int pool_grad_run(rt_kernel_ctx *c, bool avg, bool relu) {
  const rt_tensor *dy = c->inputs[avg ? 1 : 2], *x = avg ? NULL : c->inputs[0];
  int64_t xd[4];
  char sa[160], sb[160];
  geom g;
  if (need_float(c, dy->dtype)) return c->st->code;
  if (avg) {
    const rt_tensor *s = c->inputs[0];
    if (s->shape.ndims != 1 || s->shape.dims[0] != 4)
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "orig_input_shape must be 1-dimensional and "
                             "4 elements");
    for (int d = 0; d < 4; d++) xd[d] = rt_tensor_get_i64(s, d);
  } else {
    if (x->shape.ndims != 4)
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "tensor_in must be 4-dimensional");
    memcpy(xd, x->shape.dims, sizeof xd);
  }
  if (pool_geom(c, avg ? "AvgPoolingOp" : "MaxPoolingOp", xd, 4, &g)) return c->st->code;
  if (dy->shape.ndims != 4)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "out_backprop must be 4-dimensional");
  rt_shape want = rt_shape_make(4, (int64_t[]){g.n, g.oh, g.ow, g.ic});
  if (!rt_shape_equal(&want, &dy->shape) ||
      (!avg && !rt_shape_equal(&want, &c->inputs[1]->shape)))
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Expected grad shape to be %s, but got %s",
                           op_shape_tf(&want, sa, sizeof sa),
                           op_shape_tf(&dy->shape, sb, sizeof sb));
  rt_shape xs = rt_shape_make(4, xd);
  rt_tensor *out = rt_kernel_output(c, 0, dy->dtype, &xs);
  if (!out) return c->st->code;
  if (g.ih * g.iw > INT32_MAX)
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "%s: images of more than 2^31 pixels",
                           avg ? "AvgPoolGrad" : "MaxPoolGrad");
  if (g.oh * g.ow * g.n * g.ic == 0) {
    memset(rt_tensor_data(out), 0, rt_tensor_nbytes(out));
    return RT_OK;
  }
  const void *xv = x ? rt_tensor_data(x) : NULL;
  pool_grad(&g, dy->dtype == RT_FLOAT, xv, rt_tensor_data(dy), rt_tensor_data(out), avg, relu);
  return RT_OK;
}

int op_cpu_max_pool_grad(rt_kernel_ctx *c) { return pool_grad_run(c, false, false); }

int op_cpu_max_pool_grad_grad(rt_kernel_ctx *c) {
  const rt_tensor *x = c->inputs[0], *y = c->inputs[1], *gr = c->inputs[2];
  char sa[160], sb[160];
  geom g;
  if (need_float(c, x->dtype)) return c->st->code;
  if (x->shape.ndims != 4)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "tensor_in must be 4-dimensional");
  if (pool_geom(c, "MaxPoolingOp", x->shape.dims, 4, &g)) return c->st->code;
  rt_shape want = rt_shape_make(4, (int64_t[]){g.n, g.oh, g.ow, g.ic});
  if (!rt_shape_equal(&want, &y->shape))
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Expected orig_output shape to be %s, but got %s",
                           op_shape_tf(&want, sa, sizeof sa), op_shape_tf(&y->shape, sb, sizeof sb));
  if (!rt_shape_equal(&x->shape, &gr->shape) || gr->dtype != x->dtype)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Expected grad shape to be %s, but got %s",
                           op_shape_tf(&x->shape, sa, sizeof sa), op_shape_tf(&gr->shape, sb, sizeof sb));
  if (g.ih * g.iw > INT32_MAX)
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "MaxPoolGradGrad: images of more than 2^31 pixels");
  rt_tensor *out = rt_kernel_output(c, 0, x->dtype, &want);
  if (!out) return c->st->code;
  if (x->dtype == RT_FLOAT)
    pool_grad_grad_float(&g, rt_tensor_data(x), rt_tensor_data(gr), rt_tensor_data(out));
  else
    pool_grad_grad_double(&g, rt_tensor_data(x), rt_tensor_data(gr), rt_tensor_data(out));
  return RT_OK;
}
int op_cpu_avg_pool_grad(rt_kernel_ctx *c) { return pool_grad_run(c, true, false); }

/* _FusedMaxPoolGradWithArgmax: dx [n, 2 ph, 2 pw, C] from the workspace and dy [n, ph, pw,
 * C]: each window's gradient, 0 + dy, at its first maximum where that is above 0, 0 at its
 * other pixels (_FusedMaxPoolGrad's bits), tiles of (image, pooled row). */
typedef struct ws_grad_job {
  int64_t pw, C;
  const uint8_t *ws;
  const float *dy;
  float *dx;
} ws_grad_job;

static void pool_grad_ws_rows(void *arg, int64_t lo, int64_t hi, int who) {
  (void)who;
  const ws_grad_job *j = arg;
  int64_t C = j->C, row = 2 * j->pw * C;
  for (int64_t by = lo; by < hi; by++) {
    const uint8_t *w = j->ws + by * j->pw * C;
    const float *d = j->dy + by * j->pw * C;
    float *q = j->dx + 2 * by * row;
    for (int64_t px = 0; px < j->pw; px++, w += C, d += C, q += 2 * C) ws_grad(w, d, q, row, C);
  }
}

int op_cpu_fused_max_pool_grad_argmax(rt_kernel_ctx *c) {
  const rt_tensor *ws = c->inputs[0], *dy = c->inputs[1];
  char sa[160], sb[160];
  const rt_attr_value *v = rt_node_attr(c->node, "fused_ops");
  if (!v || v->kind != RT_ATTR_LIST_STRING || v->list.n != 1 ||
      strcmp(((char *const *)v->list.v)[0], "ReluGrad"))
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "_FusedMaxPoolGradWithArgmax: fused_ops must be "
                           "[ReluGrad]");
  if (dy->dtype != RT_FLOAT || ws->dtype != RT_UINT8)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "_FusedMaxPoolGradWithArgmax: argmax must be "
                           "uint8 and grad float, not %s and %s", rt_dtype_name(ws->dtype),
                           rt_dtype_name(dy->dtype));
  if (dy->shape.ndims != 4 || !rt_shape_equal(&ws->shape, &dy->shape))
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Expected grad shape to be %s, but got %s",
                           op_shape_tf(&ws->shape, sa, sizeof sa),
                           op_shape_tf(&dy->shape, sb, sizeof sb));
  const int64_t *d = dy->shape.dims;
  rt_shape xs = rt_shape_make(4, (int64_t[]){d[0], 2 * d[1], 2 * d[2], d[3]});
  rt_tensor *out = rt_kernel_output(c, 0, RT_FLOAT, &xs);
  if (!out) return c->st->code;
  int64_t rows = d[0] * d[1];
  ws_grad_job j = {.pw = d[2], .C = d[3], .ws = rt_tensor_data(ws), .dy = rt_tensor_data(dy),
                   .dx = rt_tensor_data(out)};
  rt_parallel_range(rows, 1, rows * d[2] * d[3] * 4 >= PAR_MIN ? n_threads() : 1,
                    pool_grad_ws_rows, &j);
  return RT_OK;
}

int op_cpu_fused_max_pool_grad(rt_kernel_ctx *c) {
  const rt_attr_value *v = rt_node_attr(c->node, "fused_ops");
  if (!v || v->kind != RT_ATTR_LIST_STRING || v->list.n != 1 ||
      strcmp(((char *const *)v->list.v)[0], "ReluGrad"))
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "_FusedMaxPoolGrad: fused_ops must be [ReluGrad]");
  return pool_grad_run(c, false, true);
}

/* _FusedConv2DBackpropFilterWithArgmax: a first layer's filter and bias gradients, dy the
 * gradient of its 2x2 pool (workspace argmax, pooled gradient grad) never written out.
 * The bias as the node it replaces sums dy (bias_sum): in runs of 1024 pixels in order
 * (tiles of the pool), each run from 0 in the accumulator (double for _SumToShapeOf, float
 * for BiasAddGrad), the runs' sums then in order. Each pixel's row from the workspace
 * (filt_ws_row's rule); the zeros between add nothing (x + 0 is x, and no sum is -0), so
 * the bits are those node's on the dy written out. */
enum { BIAS_RUN = 1024 };   /* reduce.c's SUM_ROWS and nn.c's BG_ROWS */
typedef struct ws_bias_job {
  const geom *g;
  const uint8_t *ws;
  const float *dyp;
  void *part;       /* a run's C sums, double or float */
  bool dbl, simd;   /* double sums; AVX-512 (ws_bias_run_nv) */
} ws_bias_job;

/* A pixel (image b, row y, column x) walked in order: its row in the pooled gradient and
 * its byte (code) there; divisions only where a run starts. */
typedef struct px_walk {
  int64_t b, y, x;
} px_walk;

static inline px_walk px_from(const geom *g, int64_t r) {
  int64_t hw = g->oh * g->ow;
  return (px_walk){.b = r / hw, .y = r % hw / g->ow, .x = r % g->ow};
}

static inline int64_t px_at(const geom *g, px_walk *p, int *code) {
  *code = 4 | (int)(p->y & 1) << 1 | (int)(p->x & 1);
  int64_t at = ((p->b * (g->oh / 2) + p->y / 2) * (g->ow / 2) + p->x / 2) * g->oc;
  if (++p->x == g->ow) {
    p->x = 0;
    if (++p->y == g->oh) p->y = 0, p->b++;
  }
  return at;
}

#if defined(__x86_64__) && defined(__GNUC__)
static inline __attribute__((always_inline)) FILT_TARGET void
ws_bias_run_nv(const ws_bias_job *j, int64_t r0, int64_t r1, void *out, const int nv,
               const bool dbl) {
  __m512d ad[8];
  __m512 af[4];
#pragma GCC unroll 8
  for (int v = 0; v < 2 * nv; v++) ad[v] = _mm512_setzero_pd();
#pragma GCC unroll 4
  for (int v = 0; v < nv; v++) af[v] = _mm512_setzero_ps();
  px_walk px = px_from(j->g, r0);
  for (int64_t r = r0; r < r1; r++) {
    int code;
    int64_t at = px_at(j->g, &px, &code);
    const __m128i cv = _mm_set1_epi8((char)code);
#pragma GCC unroll 4
    for (int v = 0; v < nv; v++) {
      __m128i w = _mm_loadu_si128((const __m128i *)(j->ws + at + 16 * v));
      __mmask16 k = _mm_cmpeq_epi8_mask(w, cv);
      __m512 d = _mm512_maskz_mov_ps(k, _mm512_loadu_ps(j->dyp + at + 16 * v));
      if (dbl) {
        ad[2 * v] = _mm512_add_pd(ad[2 * v], _mm512_cvtps_pd(_mm512_castps512_ps256(d)));
        ad[2 * v + 1] = _mm512_add_pd(
            ad[2 * v + 1],
            _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(d), 1))));
      } else {
        af[v] = _mm512_add_ps(af[v], d);
      }
    }
  }
#pragma GCC unroll 4
  for (int v = 0; v < nv; v++)
    if (dbl) {
      _mm512_storeu_pd((double *)out + 16 * v, ad[2 * v]);
      _mm512_storeu_pd((double *)out + 16 * v + 8, ad[2 * v + 1]);
    } else {
      _mm512_storeu_ps((float *)out + 16 * v, af[v]);
    }
}

static FILT_TARGET bool ws_bias_run_512(const ws_bias_job *j, int64_t r0, int64_t r1, void *out) {
  int64_t C = j->g->oc;
  if (C != 16 && C != 32 && C != 64) return false;
  if (j->dbl) {
    if (C == 16) ws_bias_run_nv(j, r0, r1, out, 1, true);
    else if (C == 32) ws_bias_run_nv(j, r0, r1, out, 2, true);
    else ws_bias_run_nv(j, r0, r1, out, 4, true);
  } else {
    if (C == 16) ws_bias_run_nv(j, r0, r1, out, 1, false);
    else if (C == 32) ws_bias_run_nv(j, r0, r1, out, 2, false);
    else ws_bias_run_nv(j, r0, r1, out, 4, false);
  }
  return true;
}
#endif

static void ws_bias_runs(void *arg, int64_t lo, int64_t hi, int who) {
  (void)who;
  const ws_bias_job *j = arg;
  const geom *g = j->g;
  int64_t C = g->oc, rows = g->n * g->oh * g->ow;
  for (int64_t p = lo; p < hi; p++) {
    int64_t r0 = p * BIAS_RUN, r1 = r0 + BIAS_RUN < rows ? r0 + BIAS_RUN : rows;
    double *pd = (double *)j->part + p * C;
    float *pf = (float *)j->part + p * C;
#if defined(__x86_64__) && defined(__GNUC__)
    if (j->simd && ws_bias_run_512(j, r0, r1, j->dbl ? (void *)pd : (void *)pf)) continue;
#endif
    for (int64_t k = 0; k < C; k++) j->dbl ? (void)(pd[k] = 0) : (void)(pf[k] = 0);
    px_walk px = px_from(g, r0);
    for (int64_t r = r0; r < r1; r++) {
      int code;
      int64_t at = px_at(g, &px, &code);
      for (int64_t k = 0; k < C; k++) {
        float d = j->ws[at + k] == code ? j->dyp[at + k] : 0.0f;
        if (j->dbl) pd[k] += (double)d;
        else pf[k] += d;
      }
    }
  }
}

/* bias[k]: the runs' sums in order, as _SumToShapeOf (double) or BiasAddGrad (float). */
static void ws_bias(const geom *g, const uint8_t *ws, const float *dyp, bool dbl, bool simd,
                    void *part, float *bias) {
  int64_t rows = g->n * g->oh * g->ow, runs = (rows + BIAS_RUN - 1) / BIAS_RUN, C = g->oc;
  ws_bias_job j = {.g = g, .ws = ws, .dyp = dyp, .part = part, .dbl = dbl, .simd = simd};
  rt_parallel_range(runs, 1, runs > 1 && rows * C >= PAR_MIN ? n_threads() : 1, ws_bias_runs, &j);
  for (int64_t k = 0; k < C; k++) {
    if (dbl) {
      double s = 0;
      for (int64_t p = 0; p < runs; p++) s += ((double *)part)[p * C + k];
      bias[k] = (float)s;
    } else {
      float s = 0;
      for (int64_t p = 0; p < runs; p++) s += ((float *)part)[p * C + k];
      bias[k] = s;
    }
  }
}

bool op_cpu_filter_argmax_fast(int64_t kh, int64_t kw, int64_t ic, int64_t oc) {
  geom g = {.kh = kh, .kw = kw, .ic = ic, .oc = oc};
  return filt_direct_ok(&g, true);
}

int op_cpu_fused_conv2d_backprop_filter_argmax(rt_kernel_ctx *c) {
  static const char *label = "_FusedConv2DBackpropFilterWithArgmax";
  const rt_tensor *x = c->inputs[0], *ws = c->inputs[1], *dy = c->inputs[2];
  char sa[160], sb[160];
  int nf;
  const int64_t *fd = op_list_ints(c->node, "filter_shape", &nf);
  geom g;
  if (x->dtype != RT_FLOAT || dy->dtype != RT_FLOAT || ws->dtype != RT_UINT8)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s: input and grad must be float and argmax "
                           "uint8, not %s, %s and %s", label, rt_dtype_name(x->dtype),
                           rt_dtype_name(dy->dtype), rt_dtype_name(ws->dtype));
  if (conv_attrs(c, "Conv2DCustomBackpropFilterOp only supports NHWC.%.0s")) return c->st->code;
  if (!fd || nf != 4 || fd[0] < 0 || fd[1] < 0 || fd[2] < 0 || fd[3] < 0)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s: filter_shape must be 4 sizes >= 0", label);
  if (x->shape.ndims != 4)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s: input must be 4-dimensional", label);
  if (dy->shape.ndims != 4 || !rt_shape_equal(&ws->shape, &dy->shape))
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Expected grad shape to be %s, but got %s",
                           op_shape_tf(&ws->shape, sa, sizeof sa),
                           op_shape_tf(&dy->shape, sb, sizeof sb));
  const int64_t *d = dy->shape.dims;
  rt_shape dys = rt_shape_make(4, (int64_t[]){d[0], 2 * d[1], 2 * d[2], d[3]});
  if (backprop_geom(c, label, x->shape.dims, fd, &dys, &g)) return c->st->code;
  rt_shape fs = rt_shape_make(4, fd), bs = rt_shape_make(1, (int64_t[]){g.oc});
  rt_tensor *dw = rt_kernel_output(c, 0, RT_FLOAT, &fs);
  rt_tensor *db = dw ? rt_kernel_output(c, 1, RT_FLOAT, &bs) : NULL;
  if (!db) return c->st->code;
  int64_t cols = g.kh * g.kw * g.ic, pix = d[1] * d[2];
  bool dbl = strcmp(rt_node_string(c->node, "bias_sum", "_SumToShapeOf"), "BiasAddGrad");
  bool fast = g.n * g.oh * g.ow > 0 && cols > 0 && filt_direct_ok(&g, true);
  size_t partb = fast ? align64((size_t)((filt_tiles(&g) - 1) * cols * g.oc) * sizeof(float)) : 0;
  size_t biasb = (size_t)(((g.n * g.oh * g.ow + BIAS_RUN - 1) / BIAS_RUN) * g.oc) * sizeof(double);
  void *tmp = NULL;
  char *sc = fast ? scratch_get(c, partb + biasb, &tmp) : (tmp = malloc(biasb ? biasb : 1));
  if (!sc) return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  ws_bias(&g, rt_tensor_data(ws), rt_tensor_data(dy), dbl, fast, sc + partb, rt_tensor_data(db));
  int rc = RT_OK;
  if (fast) {
    filt_direct(&g, rt_tensor_data(x), NULL, rt_tensor_data(ws), rt_tensor_data(dy),
                rt_tensor_data(dw), (float *)sc);
  } else {   /* dy written out, then Conv2DBackpropFilter's kernels */
    float *dx = malloc((size_t)(g.n * g.oh * g.ow * g.oc) * sizeof(float) + 1);
    if (!dx) {
      free(tmp);
      return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
    }
    ws_grad_job j = {.pw = d[2], .C = d[3], .ws = rt_tensor_data(ws), .dy = rt_tensor_data(dy),
                     .dx = dx};
    rt_parallel_range(d[0] * d[1], 1, d[0] * pix * d[3] * 4 >= PAR_MIN ? n_threads() : 1,
                      pool_grad_ws_rows, &j);
    rc = filter_grad(c, &g, RT_FLOAT, rt_tensor_data(x), (const char *)dx, rt_tensor_data(dw),
                     rt_tensor_nbytes(dw));
    free(dx);
  }
  free(tmp);
  return rc;
}
