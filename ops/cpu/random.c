/* Random kernels on Philox4x32-10, laid out as TF's: the generator (key from seed, counter
 * from seed2) lives in the node's state slot; each run takes the generator as it stands
 * and moves it on by numel * 256 blocks (TF's ReserveRandomOutputs), so runs never share
 * blocks. Inside a run, output group g (4 floats or 2 doubles) comes from block counter + g,
 * so groups may be computed in any order, on any thread, with the same result.
 * Conversions are TF's: 23 (float) or 52 (double) random mantissa bits in [1, 2) minus 1;
 * Box-Muller with u1 clamped to 1e-7. TruncatedNormal's group g draws from its own run of
 * blocks, 256 samples reserved per output as TF's (256 blocks per group of 4 floats, 128
 * per group of 2 doubles), and keeps samples within 2. */
#define _GNU_SOURCE   /* sincos, sincosf */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "base/alloc.h"
#include "ops/cpu/cpuarch.h"
#include "ops/ops_int.h"
#include "runtime/pool.h"

enum { RESERVE = 256, PAR_MIN_GROUPS = 1 << 12 };

/* ---- Philox4x32-10 ------------------------------------------------------------------ */

void op_philox_seed(op_philox *p, int64_t seed, int64_t seed2) {
  uint64_t s = (uint64_t)seed, s2 = (uint64_t)seed2;
  if (!seed && !seed2) {
    uint64_t r[2] = {0, 0};
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) {   /* never on Linux >= 3.17 */
      r[0] = (uint64_t)(uintptr_t)p ^ 0x9E3779B97F4A7C15ull;
      r[1] = (uint64_t)rand();
    }
    s = r[0], s2 = r[1];
  }
  p->key[0] = (uint32_t)s, p->key[1] = (uint32_t)(s >> 32);
  p->ctr[0] = p->ctr[1] = 0;
  p->ctr[2] = (uint32_t)s2, p->ctr[3] = (uint32_t)(s2 >> 32);
}

/* 128-bit counter += n */
static void ctr_add(uint32_t c[4], uint64_t n) {
  uint64_t lo = ((uint64_t)c[1] << 32 | c[0]) + n;
  bool carry = lo < n;
  c[0] = (uint32_t)lo, c[1] = (uint32_t)(lo >> 32);
  if (carry && ++c[2] == 0) ++c[3];
}

void op_philox_skip(op_philox *p, uint64_t n) { ctr_add(p->ctr, n); }

void op_philox_block(const op_philox *p, uint64_t skip, uint32_t out[4]) {
  uint32_t c[4] = {p->ctr[0], p->ctr[1], p->ctr[2], p->ctr[3]}, k0 = p->key[0], k1 = p->key[1];
  ctr_add(c, skip);
  for (int r = 0; r < 10; r++) {
    uint64_t p0 = (uint64_t)0xD2511F53u * c[0], p1 = (uint64_t)0xCD9E8D57u * c[2];
    uint32_t n0 = (uint32_t)(p1 >> 32) ^ c[1] ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c[3] ^ k1;
    c[0] = n0, c[1] = (uint32_t)p1, c[2] = n2, c[3] = (uint32_t)p0;
    k0 += 0x9E3779B9u, k1 += 0xBB67AE85u;
  }
  memcpy(out, c, sizeof c);
}

/* Blocks skip .. skip + n - 1 (n at most PHILOX_LANES) into out[4 * i ..]: the rounds of
 * PHILOX_LANES blocks side by side, lane by lane the same operations as op_philox_block, so
 * that the vectorizer runs them in 32-bit lanes (its chain of ten dependent rounds, one
 * block at a time, kept RandomUniform at ~60 cycles a block). */
enum { PHILOX_LANES = 16 };
OP_CLONES static void philox_blocks(const op_philox *p, uint64_t skip, int n, uint32_t *out) {
  uint32_t c0[PHILOX_LANES], c1[PHILOX_LANES], c2[PHILOX_LANES], c3[PHILOX_LANES];
  for (int l = 0; l < PHILOX_LANES; l++) {
    uint32_t c[4] = {p->ctr[0], p->ctr[1], p->ctr[2], p->ctr[3]};
    ctr_add(c, skip + (uint64_t)(l < n ? l : 0));
    c0[l] = c[0], c1[l] = c[1], c2[l] = c[2], c3[l] = c[3];
  }
  uint32_t k0 = p->key[0], k1 = p->key[1];
  for (int r = 0; r < 10; r++) {
#pragma omp simd
    for (int l = 0; l < PHILOX_LANES; l++) {
      uint64_t p0 = (uint64_t)0xD2511F53u * c0[l], p1 = (uint64_t)0xCD9E8D57u * c2[l];
      uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1[l] ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3[l] ^ k1;
      c0[l] = n0, c1[l] = (uint32_t)p1, c2[l] = n2, c3[l] = (uint32_t)p0;
    }
    k0 += 0x9E3779B9u, k1 += 0xBB67AE85u;
  }
  for (int l = 0; l < n; l++)
    out[4 * l] = c0[l], out[4 * l + 1] = c1[l], out[4 * l + 2] = c2[l], out[4 * l + 3] = c3[l];
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
/* The high and low words of a * b for 16 lanes of 32 bits: vpmuludq on the even lanes and
 * on the odd ones shifted down, the halves blended back into place. */
__attribute__((target("avx512f"))) static inline void mul_hi_lo(__m512i a, __m512i b,
                                                                __m512i *hi, __m512i *lo) {
  __m512i even = _mm512_mul_epu32(a, b), odd = _mm512_mul_epu32(_mm512_srli_epi64(a, 32), b);
  *lo = _mm512_mask_blend_epi32(0xAAAA, even, _mm512_slli_epi64(odd, 32));
  *hi = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(even, 32), odd);
}

/* philox_blocks for 16 whole blocks on AVX-512, the counters' words in four registers. */
__attribute__((target("avx512f"))) static void philox16(const op_philox *p, uint64_t skip,
                                                        uint32_t *out) {
  uint32_t w[4][16];
  for (int l = 0; l < 16; l++) {
    uint32_t c[4] = {p->ctr[0], p->ctr[1], p->ctr[2], p->ctr[3]};
    ctr_add(c, skip + (uint64_t)l);
    for (int i = 0; i < 4; i++) w[i][l] = c[i];
  }
  __m512i c0 = _mm512_loadu_si512(w[0]), c1 = _mm512_loadu_si512(w[1]);
  __m512i c2 = _mm512_loadu_si512(w[2]), c3 = _mm512_loadu_si512(w[3]);
  const __m512i m0 = _mm512_set1_epi32((int)0xD2511F53u), m1 = _mm512_set1_epi32((int)0xCD9E8D57u);
  uint32_t k0 = p->key[0], k1 = p->key[1];
  for (int r = 0; r < 10; r++) {
    __m512i h0, l0, h1, l1;
    mul_hi_lo(c0, m0, &h0, &l0);
    mul_hi_lo(c2, m1, &h1, &l1);
    c0 = _mm512_xor_si512(_mm512_xor_si512(h1, c1), _mm512_set1_epi32((int)k0));
    c2 = _mm512_xor_si512(_mm512_xor_si512(h0, c3), _mm512_set1_epi32((int)k1));
    c1 = l1, c3 = l0;
    k0 += 0x9E3779B9u, k1 += 0xBB67AE85u;
  }
  /* lanes to blocks: out[4l + i] = word i of lane l */
  __m512i t0 = _mm512_unpacklo_epi32(c0, c1), t1 = _mm512_unpackhi_epi32(c0, c1);
  __m512i t2 = _mm512_unpacklo_epi32(c2, c3), t3 = _mm512_unpackhi_epi32(c2, c3);
  __m512i b0 = _mm512_unpacklo_epi64(t0, t2), b1 = _mm512_unpackhi_epi64(t0, t2);
  __m512i b2 = _mm512_unpacklo_epi64(t1, t3), b3 = _mm512_unpackhi_epi64(t1, t3);
  /* b0 holds blocks 0, 4, 8, 12 (a 128-bit part each), b1 1, 5, 9, 13, ... */
  uint32_t v[4][16];
  _mm512_storeu_si512(v[0], b0), _mm512_storeu_si512(v[1], b1);
  _mm512_storeu_si512(v[2], b2), _mm512_storeu_si512(v[3], b3);
  for (int q = 0; q < 4; q++)      /* 128-bit part q of b_j: lane 4q + j */
    for (int j = 0; j < 4; j++) memcpy(out + 4 * (4 * q + j), &v[j][4 * q], 16);
}
#endif

void op_philox_blocks(const op_philox *p, uint64_t skip, int64_t n, uint32_t *out) {
#if defined(__x86_64__) && defined(__GNUC__)
  static _Atomic int wide = -1;
  if (wide < 0) wide = op_cpu_avx512();
  int64_t i = 0;
  if (wide)
    for (; i + 16 <= n; i += 16) philox16(p, skip + (uint64_t)i, out + 4 * i);
  for (; i < n; i += PHILOX_LANES)
#else
  for (int64_t i = 0; i < n; i += PHILOX_LANES)
#endif
    philox_blocks(p, skip + (uint64_t)i, n - i < PHILOX_LANES ? (int)(n - i) : PHILOX_LANES,
                  out + 4 * i);
}

/* The generator for this run: the node's (seeded on first use), moved on by `blocks`
 * afterwards. Without a state slot (a kernel called directly) every run starts afresh. */
static int generator(rt_kernel_ctx *c, uint64_t blocks, op_philox *g) {
  int64_t seed = rt_node_int(c->node, "seed", 0), seed2 = rt_node_int(c->node, "seed2", 0);
  if (!c->state) {
    op_philox_seed(g, seed, seed2);
    return RT_OK;
  }
  rt_kernel_state_lock(c);   /* two signatures may draw from this node at once */
  if (!*c->state) op_philox_seed(*c->state = xmalloc(sizeof(op_philox)), seed, seed2);
  op_philox *s = *c->state;
  if (s) {
    *g = *s;
    op_philox_skip(s, blocks);
  }
  rt_kernel_state_unlock(c);
  return s ? RT_OK : rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
}

/* ---- conversions (TF's Uint32ToFloat, Uint64ToDouble, BoxMuller) -------------------- */

static inline float u32_float(uint32_t x) {
  uint32_t v = 127u << 23 | (x & 0x7fffffu);
  float f;
  memcpy(&f, &v, sizeof f);
  return f - 1.0f;
}

static inline double u64_double(uint32_t hi, uint32_t lo) {
  uint64_t v = (uint64_t)1023 << 52 | (uint64_t)(hi & 0xfffffu) << 32 | lo;
  double d;
  memcpy(&d, &v, sizeof d);
  return d - 1.0;
}

static inline void box_muller_f(uint32_t x0, uint32_t x1, float *f0, float *f1) {
  float u1 = u32_float(x0);
  if (u1 < 1e-7f) u1 = 1e-7f;
  float v1 = 2.0f * (float)M_PI * u32_float(x1), u2 = sqrtf(-2.0f * logf(u1));
  sincosf(v1, f0, f1);
  *f0 *= u2, *f1 *= u2;
}

static inline void box_muller_d(const uint32_t x[4], double *d0, double *d1) {
  double u1 = u64_double(x[0], x[1]);
  if (u1 < 1e-7) u1 = 1e-7;
  double v1 = 2 * M_PI * u64_double(x[2], x[3]), u2 = sqrt(-2 * log(u1));
  sincos(v1, d0, d1);
  *d0 *= u2, *d1 *= u2;
}

/* ---- the float ops ------------------------------------------------------------------ */

/* The output shape from a shape vector (int32 or int64). */
static int shape_arg(rt_kernel_ctx *c, const rt_tensor *t, rt_shape *s) {
  char buf[160];
  if (t->shape.ndims != 1 || (t->dtype != RT_INT32 && t->dtype != RT_INT64))
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "shape must be a vector of {int32,int64}, got "
                           "shape %s", op_shape_tf(&t->shape, buf, sizeof buf));
  if (t->shape.dims[0] > RT_MAX_DIMS)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "shape has %lld dimensions, more than %d",
                           (long long)t->shape.dims[0], RT_MAX_DIMS);
  s->ndims = (int)t->shape.dims[0];
  for (int d = 0; d < s->ndims; d++)
    if ((s->dims[d] = rt_tensor_get_i64(t, d)) < 0)
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Dimension %lld must be >= 0",
                             (long long)s->dims[d]);
  return RT_OK;
}

typedef enum { NORMAL, TRUNCATED, UNIFORM } dist;

/* Group g of a truncated normal: its first k samples within 2, from its own blocks. */
static void truncated_group(const op_philox *p, uint64_t g, bool f32, void *out, int64_t k) {
  uint64_t b = g * (f32 ? 4 : 2) * RESERVE / 4;   /* TF's kGeneratorSkipPerOutputGroup */
  int64_t got = 0;
  while (got < k) {
    uint32_t x[4];
    op_philox_block(p, b++, x);
    if (f32) {
      float z[4];
      box_muller_f(x[0], x[1], &z[0], &z[1]);
      box_muller_f(x[2], x[3], &z[2], &z[3]);
      for (int i = 0; i < 4 && got < k; i++)
        if (fabsf(z[i]) < 2.0f) ((float *)out)[got++] = z[i];
    } else {
      double z[2];
      box_muller_d(x, &z[0], &z[1]);
      for (int i = 0; i < 2 && got < k; i++)
        if (fabs(z[i]) < 2.0) ((double *)out)[got++] = z[i];
    }
  }
}

/* Groups [lo, hi) of a run's output on the pool: group g from block counter + g, whichever
 * tile or thread computes it. */
typedef struct groups_job {
  const op_philox *p;
  void *y;
  int64_t n;
  dist d;
  bool narrow;        /* float32 / int32: 4 a group; else 2 */
  uint64_t lo, range;   /* RandomUniformInt's */
} groups_job;

static void float_groups(void *arg, int64_t g0, int64_t g1, int who) {
  const groups_job *j = arg;
  bool f32 = j->narrow;
  int per = f32 ? 4 : 2;
  size_t es = f32 ? sizeof(float) : sizeof(double);
  if (j->d == UNIFORM && f32) {   /* the blocks PHILOX_LANES at a time */
    for (int64_t g = g0; g < g1; g += PHILOX_LANES) {
      int64_t m = g1 - g < PHILOX_LANES ? g1 - g : PHILOX_LANES;
      uint32_t x[4 * PHILOX_LANES];
      float v[4 * PHILOX_LANES];
      op_philox_blocks(j->p, (uint64_t)g, m, x);
      for (int64_t i = 0; i < 4 * m; i++) v[i] = u32_float(x[i]);
      int64_t k = j->n - g * per < 4 * m ? j->n - g * per : 4 * m;
      memcpy((float *)j->y + g * per, v, (size_t)k * sizeof(float));
    }
    return;
  }
  for (int64_t g = g0; g < g1; g++) {
    int64_t k = j->n - g * per < per ? j->n - g * per : per;
    union { float f[4]; double d[2]; } v;
    if (j->d == TRUNCATED) {
      truncated_group(j->p, (uint64_t)g, f32, &v, k);
    } else {
      uint32_t x[4];
      op_philox_block(j->p, (uint64_t)g, x);
      if (j->d == NORMAL && f32) {
        box_muller_f(x[0], x[1], &v.f[0], &v.f[1]);
        box_muller_f(x[2], x[3], &v.f[2], &v.f[3]);
      } else if (j->d == NORMAL) {
        box_muller_d(x, &v.d[0], &v.d[1]);
      } else if (f32) {
        for (int i = 0; i < 4; i++) v.f[i] = u32_float(x[i]);
      } else {
        v.d[0] = u64_double(x[0], x[1]), v.d[1] = u64_double(x[2], x[3]);
      }
    }
    memcpy((char *)j->y + (size_t)(g * per) * es, &v, (size_t)k * es);
  }
}

static void int_groups(void *arg, int64_t g0, int64_t g1, int who) {
  const groups_job *j = arg;
  int per = j->narrow ? 4 : 2;
  for (int64_t g = g0; g < g1; g++) {
    uint32_t x[4];
    op_philox_block(j->p, (uint64_t)g, x);
    for (int i = 0; i < per && g * per + i < j->n; i++) {
      int64_t at = g * per + i;
      if (j->narrow)
        ((int32_t *)j->y)[at] = (int32_t)((uint32_t)j->lo + x[i] % (uint32_t)j->range);
      else
        ((int64_t *)j->y)[at] =
            (int64_t)(j->lo + ((uint64_t)x[2 * i] | (uint64_t)x[2 * i + 1] << 32) % j->range);
    }
  }
}

static void run_groups(rt_range_fn fn, groups_job *j) {
  int64_t groups = (j->n + (j->narrow ? 3 : 1)) / (j->narrow ? 4 : 2);
  rt_parallel_range(groups, 1, groups >= PAR_MIN_GROUPS ? rt_intra_threads() : 1, fn, j);
}

static int random_float(rt_kernel_ctx *c, dist d) {
  rt_dtype t = rt_node_type(c->node, "dtype", RT_FLOAT);
  rt_shape s;
  if (t != RT_FLOAT && t != RT_DOUBLE)
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "no CPU kernel for %s", rt_dtype_name(t));
  if (shape_arg(c, c->inputs[0], &s)) return c->st->code;
  rt_tensor *out = rt_kernel_output(c, 0, t, &s);
  if (!out) return c->st->code;
  int64_t n = rt_tensor_numel(out);
  op_philox p;
  if (generator(c, (uint64_t)n * RESERVE, &p)) return c->st->code;
  run_groups(float_groups, &(groups_job){.p = &p, .y = rt_tensor_data(out), .n = n, .d = d,
                                         .narrow = t == RT_FLOAT});
  return RT_OK;
}

int op_cpu_random_normal(rt_kernel_ctx *c) { return random_float(c, NORMAL); }
int op_cpu_truncated_normal(rt_kernel_ctx *c) { return random_float(c, TRUNCATED); }
int op_cpu_random_uniform(rt_kernel_ctx *c) { return random_float(c, UNIFORM); }

/* ---- RandomUniformInt --------------------------------------------------------------- */

int op_cpu_random_uniform_int(rt_kernel_ctx *c) {
  const rt_tensor *lo_t = c->inputs[1], *hi_t = c->inputs[2];
  char buf[160];
  rt_shape s;
  if (shape_arg(c, c->inputs[0], &s)) return c->st->code;
  if (lo_t->shape.ndims != 0)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "minval must be 0-D, got shape %s",
                           op_shape_tf(&lo_t->shape, buf, sizeof buf));
  if (hi_t->shape.ndims != 0)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "maxval must be 0-D, got shape %s",
                           op_shape_tf(&hi_t->shape, buf, sizeof buf));
  int64_t lo = rt_tensor_get_i64(lo_t, 0), hi = rt_tensor_get_i64(hi_t, 0);
  int64_t n = rt_shape_numel(&s);
  if (n > 0 && lo >= hi)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Need minval < maxval: %lld >= %lld",
                           (long long)lo, (long long)hi);
  rt_tensor *out = rt_kernel_output(c, 0, lo_t->dtype, &s);
  if (!out) return c->st->code;
  op_philox p;
  if (generator(c, (uint64_t)n * RESERVE, &p)) return c->st->code;
  run_groups(int_groups, &(groups_job){.p = &p, .y = rt_tensor_data(out), .n = n,
                                       .narrow = lo_t->dtype == RT_INT32, .lo = (uint64_t)lo,
                                       .range = (uint64_t)hi - (uint64_t)lo});
  return RT_OK;
}

/* ---- RandomShuffle ------------------------------------------------------------------ */

/* 32-bit samples one at a time from successive blocks. */
typedef struct stream {
  const op_philox *p;
  uint64_t block;
  uint32_t buf[4];
  int used;
} stream;

static uint32_t next32(stream *s) {
  if (s->used == 4) {
    op_philox_block(s->p, s->block++, s->buf);
    s->used = 0;
  }
  return s->buf[s->used++];
}

int op_cpu_random_shuffle(rt_kernel_ctx *c) {
  const rt_tensor *x = c->inputs[0];
  int64_t n = x->shape.ndims > 0 ? x->shape.dims[0] : 0;
  if (n <= 1) {
    rt_tensor_unref(c->outputs[0]);
    c->outputs[0] = rt_tensor_ref(c->inputs[0]);
    return RT_OK;
  }
  op_philox p;
  if (generator(c, (uint64_t)n * RESERVE, &p)) return c->st->code;
  int64_t *perm = malloc(sizeof *perm * (size_t)n);
  if (!perm) return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  for (int64_t i = 0; i < n; i++) perm[i] = i;
  stream s = {.p = &p, .used = 4};
  for (int64_t i = n - 1; i > 0; i--) {   /* Fisher-Yates, as TF's */
    uint64_t m = (uint64_t)i + 1, r = m <= UINT32_MAX ? next32(&s) % m
                                                       : (next32(&s) | (uint64_t)next32(&s) << 32) % m;
    int64_t j = (int64_t)r, t = perm[i];
    perm[i] = perm[j], perm[j] = t;
  }
  rt_tensor *out = rt_kernel_output(c, 0, x->dtype, &x->shape);
  if (!out) {
    free(perm);
    return c->st->code;
  }
  int64_t row = rt_tensor_numel(x) / n;
  if (x->dtype == RT_STRING) {
    const rt_str *src = rt_tensor_data(x);
    for (int64_t i = 0; i < n; i++)
      for (int64_t k = 0; k < row; k++) {
        const rt_str *e = &src[perm[i] * row + k];
        if (rt_tensor_set_str(out, i * row + k, e->ptr, e->len)) {
          free(perm);
          return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
        }
      }
  } else {
    size_t rb = (size_t)row * rt_dtype_size(x->dtype);
    const char *src = rt_tensor_data(x);
    char *dst = rt_tensor_data(out);
    for (int64_t i = 0; i < n; i++) memcpy(dst + (size_t)i * rb, src + (size_t)perm[i] * rb, rb);
  }
  free(perm);
  return RT_OK;
}

/* ---- candidate samplers (LogUniform/UniformCandidateSampler, ComputeAccidentalHits) -- */

/* TF's SimplePhilox draws: a double from two 32-bit words (the first gives the high 20
 * mantissa bits), a 64-bit integer low word first. */
static double next_double(stream *s) {
  uint64_t hi = next32(s) & 0xfffffu, lo = next32(s), bits = 1023ull << 52 | hi << 32 | lo;
  double d;
  memcpy(&d, &bits, sizeof d);
  return d - 1.0;
}

typedef struct sampler {
  bool log_uniform;
  int64_t range;
  double log_range;   /* log(range + 1) */
} sampler;

static int64_t sample(const sampler *sp, stream *s) {
  if (!sp->log_uniform) {
    uint64_t lo = next32(s), hi = next32(s);
    return (int64_t)((lo | hi << 32) % (uint64_t)sp->range);
  }
  return ((int64_t)exp(next_double(s) * sp->log_range) - 1) % sp->range;
}

/* In float, as TF's samplers answer. */
static float probability(const sampler *sp, int64_t v) {
  return (float)(sp->log_uniform ? log((v + 2.0) / (v + 1.0)) / sp->log_range
                                 : 1.0 / (double)sp->range);
}

/* The expected count of a class among `batch` candidates drawn in `tries` tries (float). */
static float expected_count(float p, int64_t batch, int64_t tries) {
  return tries == batch ? p * (float)batch : -expm1f((float)tries * log1pf(-p));
}

static int candidate_sampler(rt_kernel_ctx *c, bool log_uniform) {
  const rt_tensor *t = c->inputs[0];
  int64_t num_true = rt_node_int(c->node, "num_true", 1), k = rt_node_int(c->node, "num_sampled", 1);
  int64_t range = rt_node_int(c->node, "range_max", 1);
  bool unique = rt_node_bool(c->node, "unique", false);
  if (t->shape.ndims != 2 || t->shape.dims[1] != num_true)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "true_classes must be a matrix of shape "
                           "[batch_size, num_true=%lld]", (long long)num_true);
  if (unique && k > range)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Sampler's range is too small: range_max %lld"
                           " < num_sampled %lld with unique=True", (long long)range, (long long)k);
  rt_shape ks = rt_shape_make(1, &k);
  rt_tensor *cand = rt_kernel_output(c, 0, RT_INT64, &ks);
  rt_tensor *true_ec = cand ? rt_kernel_output(c, 1, RT_FLOAT, &t->shape) : NULL;
  rt_tensor *samp_ec = true_ec ? rt_kernel_output(c, 2, RT_FLOAT, &ks) : NULL;
  if (!samp_ec) return c->st->code;
  op_philox p;
  if (generator(c, (uint64_t)k * 512, &p)) return c->st->code;   /* TF reserves 2048 words each */
  sampler sp = {log_uniform, range, log1p((double)range)};
  stream s = {.p = &p, .used = 4};
  int64_t *out = rt_tensor_data(cand), tries = 0;
  size_t cap = 16;   /* unique: rejection until k distinct (k <= range), an open-addressed set */
  while (unique && cap < 2 * (size_t)k) cap *= 2;
  int64_t *seen = unique ? xmalloc(cap * sizeof *seen) : NULL;
  for (size_t i = 0; unique && i < cap; i++) seen[i] = -1;
  for (int64_t i = 0; i < k; tries++) {
    int64_t v = sample(&sp, &s);
    if (unique) {
      size_t h = (size_t)((uint64_t)v * 0x9E3779B97F4A7C15ull >> 32) & (cap - 1);
      while (seen[h] >= 0 && seen[h] != v) h = (h + 1) & (cap - 1);
      if (seen[h] == v) continue;
      seen[h] = v;
    }
    out[i++] = v;
  }
  free(seen);
  float *se = rt_tensor_data(samp_ec), *te = rt_tensor_data(true_ec);
  const int64_t *tc = rt_tensor_data(t);
  for (int64_t i = 0; i < k; i++) se[i] = expected_count(probability(&sp, out[i]), k, tries);
  for (int64_t i = 0, n = rt_tensor_numel(t); i < n; i++)
    te[i] = expected_count(probability(&sp, tc[i]), k, tries);
  return RT_OK;
}

int op_cpu_log_uniform_sampler(rt_kernel_ctx *c) { return candidate_sampler(c, true); }
int op_cpu_uniform_sampler(rt_kernel_ctx *c) { return candidate_sampler(c, false); }

/* For each true class that is also a sampled candidate: (row, the candidate's position,
 * -FLT_MAX); a candidate drawn twice answers with its last position, as TF's map. */
int op_cpu_accidental_hits(rt_kernel_ctx *c) {
  const rt_tensor *t = c->inputs[0], *sc = c->inputs[1];
  if (t->shape.ndims != 2 || sc->shape.ndims != 1)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT,
                           "true_classes must be a matrix and sampled_candidates a vector");
  int64_t rows = t->shape.dims[0], nt = t->shape.dims[1], k = sc->shape.dims[0], hits = 0;
  const int64_t *tc = rt_tensor_data(t), *cand = rt_tensor_data(sc);
  for (int pass = 0; pass < 2; pass++) {   /* count, then fill */
    int32_t *idx = NULL;
    int64_t *ids = NULL;
    float *w = NULL;
    if (pass) {
      rt_shape hs = rt_shape_make(1, &hits);
      rt_tensor *a = rt_kernel_output(c, 0, RT_INT32, &hs);
      rt_tensor *b = a ? rt_kernel_output(c, 1, RT_INT64, &hs) : NULL;
      rt_tensor *d = b ? rt_kernel_output(c, 2, RT_FLOAT, &hs) : NULL;
      if (!d) return c->st->code;
      idx = rt_tensor_data(a), ids = rt_tensor_data(b), w = rt_tensor_data(d);
    }
    int64_t h = 0;
    for (int64_t i = 0; i < rows; i++)
      for (int64_t j = 0; j < nt; j++) {
        int64_t pos = -1;
        for (int64_t q = 0; q < k; q++)
          if (cand[q] == tc[i * nt + j]) pos = q;
        if (pos < 0) continue;
        if (pass) idx[h] = (int32_t)i, ids[h] = pos, w[h] = -3.40282346638528859812e+38f;
        h++;
      }
    hits = h;
  }
  return RT_OK;
}
