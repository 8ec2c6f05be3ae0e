/* GEMM over the process's intra-op pool (runtime/pool.h): C is cut into a grid of tiles,
 * each one single-threaded BLIS call (oneDNN's sgemm for the big float products on
 * AVX-512: dnnl_path), handed out dynamically.
 *
 * BLIS's own threads split the loops statically and meet at spinning barriers: on a
 * 2-CPU machine with a second process running (ctest -j2, a neighbour's job), two of them
 * ran the MLP and Keras tests 10x slower than one thread. Tiles keep BLIS's kernels and
 * its per-element summation order (BLIS splits only m and n, never k, for any thread
 * count, and its small-matrix path is taken or not for the whole product, with tiles
 * from the shape alone: sup_path, sup_grid), so results are bitwise those of one thread.
 *
 * Grid: a tile packs its own A rows and B columns, so every cut of m packs all of B once
 * more and every cut of n all of A, and smaller tiles reuse each packed panel less. On a
 * Zen 4 (one BLIS thread, thread CPU time, scripts/bench/gemm_grid.c) each extra cut of m
 * cost about PACK_ROWS / m of the product: 2048^3 as 2x1 tiles 2 %, 2x2 5 %, 4x2 8 %, 3x3
 * 5 %, 8x1 15 %;
 * 256^3 as 2x1 5 %, 2x2 11 %, 4x2 28 %. So the grid is one tile a thread, in the cheapest
 * shape, and 2 or 4 a thread (a thread that runs slowly because its core is shared then
 * costs less than its whole share) only where that costs under EXTRA_BUDGET more; the
 * tiles are a multiple of the threads (9 equal tiles on 2 threads left one idle for the
 * last ninth). Tile edges fall on the kernel's register block, so no tile but the last
 * computes a partial micro-panel. */
#include "ops/cpu/gemm.h"
#include "ops/cpu/blas.h"
#include "ops/cpu/onednn.h"
#include "runtime/cpus.h"
#include "runtime/pool.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum { TILES_PER_THREAD = 4, MIN_EDGE = 64 };
#define PACK_ROWS 48.0
#define EXTRA_BUDGET 0.02

typedef struct {
  bool f32, sup;                    /* sup: BLIS's small-matrix path for every tile (sup_path) */
  bool dnnl;                        /* oneDNN's sgemm for every tile (dnnl_path) */
  int64_t m, n, k, rsa, csa, rsb, csb, rsc;
  int64_t gm, gn, per;              /* grid; per = gm * gn tiles a matrix */
  int64_t am, an;                   /* tile edges are multiples of these (rows, columns) */
  int64_t sa, sb, sc;               /* batch strides, in elements */
  const char *a, *b;
  char *c;
  double beta;
} job;

static int64_t edge(int64_t len, int64_t parts, int64_t i, int64_t al) {   /* part i's start */
  if (i >= parts) return len;
  int64_t e = (len * i / parts + al / 2) / al * al;
  return e < len ? e : len;
}

/* BLIS's KC for float where its kernel is skx's, whose sums op_small_sgemm repeats bit for
 * bit (each element by fused multiply-adds in k order over one KC block); 0 elsewhere.
 * The haswell kernel's bits differ (tests/unit/test_gemm_small.c found them), and
 * sandybridge and generic multiply, then add. */
static int64_t small_kc;
static pthread_once_t small_once = PTHREAD_ONCE_INIT;
static void small_init(void) {
  if (bli_arch_query_id() == BLIS_ARCH_SKX)
    small_kc = bli_cntx_get_blksz_def_dt(BLIS_FLOAT, BLIS_KC, (cntx_t *)bli_gks_query_cntx());
}

/* BLIS's small-matrix ("sup") path: the AVX2 kernel sets (haswell, zen*) send a product
 * there when any of m, n, k is under a threshold (zen3: m < 512, n < 200 or k < 240). Its
 * sums differ from the packed path's in the last bits, and from one another's when the
 * product is cut (its blocking follows the shape it is given), so it is decided once, for
 * the whole product, and a product that takes it is cut by its shape alone (sup_grid):
 * the bits never depend on the threads. It takes it only below SUP_MAX_MACS, and not where the rows of B or C, unpacked, lie a multiple of
 * 2 KiB apart and alias in the L1 cache, unless C has at most SUP_ROWS rows. One thread of
 * a Zen 3 (GFLOP/s, packed / sup): [32,64]x[64,1024] 38 / 26, [80,48]x[48,1024] 56 / 28,
 * [128,784]x[784,1024] 56 / 23, but [4,512]x[512,1024] 12 / 21; B's rows 1 KiB apart,
 * [128,65]x[65,256] 62 / 66; [128,1024]x[1024,10] 21 / 32. */
#define SUP_MAX_MACS (4.0 * 1024 * 1024)
enum { SUP_ROWS = 8, SUP_ALIAS_BYTES = 2048 };
static bool sup_path(bool f32, int64_t m, int64_t n, int64_t k, int64_t rsb, int64_t csb,
                     int64_t rsc) {
  num_t dt = f32 ? BLIS_FLOAT : BLIS_DOUBLE;
  cntx_t *cx = (cntx_t *)bli_gks_query_cntx();
  bool rows = bli_cntx_l3_nat_ukr_prefers_rows_dt(dt, BLIS_GEMM_UKR, cx);   /* C is row-major */
  if ((double)m * (double)n * (double)k >= SUP_MAX_MACS ||
      !bli_cntx_l3_sup_thresh_is_met(dt, rows ? m : n, rows ? n : m, k, cx))
    return false;
  int64_t es = f32 ? 4 : 8, sb = rsb == 1 ? csb : rsb;
  return m <= SUP_ROWS || (sb * es % SUP_ALIAS_BYTES && rsc * es % SUP_ALIAS_BYTES);
}

static void one(bool f32, bool sup, int64_t m, int64_t n, int64_t k, const void *a,
                int64_t rsa, int64_t csa, const void *b, int64_t rsb, int64_t csb, double beta,
                void *c, int64_t rsc) {
  pthread_once(&small_once, small_init);
  if (f32 && small_kc && op_small_sgemm(m, n, k, a, rsa, csa, b, rsb, csb, beta, c, rsc, small_kc))
    return;
  rntm_t rntm = BLIS_RNTM_INITIALIZER;
  bli_rntm_set_num_threads(1, &rntm);
  if (!sup) bli_rntm_disable_l3_sup(&rntm);
  if (f32) {
    float one = 1, bt = (float)beta;
    bli_sgemm_ex(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, m, n, k, &one, (float *)a, rsa, csa,
                 (float *)b, rsb, csb, &bt, c, rsc, 1, NULL, &rntm);
  } else {
    double one = 1, bt = beta;
    bli_dgemm_ex(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, m, n, k, &one, (double *)a, rsa, csa,
                 (double *)b, rsb, csb, &bt, c, rsc, 1, NULL, &rntm);
  }
}

/* oneDNN's sgemm instead of BLIS for a whole float product (every tile, so that the bits
 * never depend on the grid) where the kernel set is AVX-512's and the product has at least
 * DNNL_MIN_MACS multiply-adds (below, op_small_sgemm and BLIS). TFSH_GEMM=blis (or
 * TFSH_DNNL=0, or op_gemm_use_dnnl(false)) keeps BLIS. */
#define DNNL_MIN_MACS (8.0 * 1024 * 1024)
static _Atomic int use_dnnl = -1;   /* -1: not yet decided */
/* Its grid is the one for the CPUs the process may use, whatever threads a call gets
 * (ConfigProto, the product's size): oneDNN picks its kernel (packed or not) and its k
 * blocks from each call's sizes, so tiles of other sizes give other bits (64-row tiles of
 * [128,3136]x[3136,1024]; [128,784]x[1024,784]^T on an 8-thread grid), and a product's
 * bits then follow the host, as its kernel set does, never a session's threads. Tiles of
 * 256x256 from the shape alone, tried first, ran 1024^3-4096^3 10-15 % slower on two
 * threads (their panels read again from memory). */
static int dnnl_threads = 1;
static pthread_once_t dnnl_once = PTHREAD_ONCE_INIT;
static void dnnl_init(void) {
  rt_cpu_limits l;
  char why[160];
  rt_cpu_limits_query(&l);
  dnnl_threads = rt_cpus_for_task(&l, 1, why, sizeof why);
  if (dnnl_threads < 1) dnnl_threads = 1;
  const char *env = getenv("TFSH_GEMM"), *dnnl = getenv("TFSH_DNNL");
  if (use_dnnl < 0)
    use_dnnl = bli_arch_query_id() == BLIS_ARCH_SKX && !(env && !strcmp(env, "blis")) &&
               !(dnnl && !strcmp(dnnl, "0"));
}
void op_gemm_use_dnnl(bool on) {
  pthread_once(&dnnl_once, dnnl_init);
  use_dnnl = on;
}
const char *op_gemm_summary(void) {
  pthread_once(&dnnl_once, dnnl_init);
  return use_dnnl ? ", oneDNN's sgemm for float products from 8M multiply-adds" : "";
}
static bool dnnl_path(bool f32, int64_t m, int64_t n, int64_t k, int64_t rsa, int64_t csa,
                      int64_t rsb, int64_t csb, int64_t rsc) {
  pthread_once(&dnnl_once, dnnl_init);
  return f32 && use_dnnl && (double)m * (double)n * (double)k >= DNNL_MIN_MACS &&
         op_dnnl_gemm_can(m, n, k, rsa, csa, rsb, csb, rsc);
}

static void tile(void *arg, int64_t t, int who) {
  (void)who;
  const job *j = arg;
  int64_t mat = t / j->per, i = t % j->per / j->gn, g = t % j->gn;
  int64_t r0 = edge(j->m, j->gm, i, j->am), r1 = edge(j->m, j->gm, i + 1, j->am);
  int64_t c0 = edge(j->n, j->gn, g, j->an), c1 = edge(j->n, j->gn, g + 1, j->an);
  if (r1 <= r0 || c1 <= c0) return;
  size_t es = j->f32 ? sizeof(float) : sizeof(double);
  const char *a = j->a + (size_t)(mat * j->sa + r0 * j->rsa) * es;
  const char *b = j->b + (size_t)(mat * j->sb + c0 * j->csb) * es;
  char *c = j->c + (size_t)(mat * j->sc + r0 * j->rsc + c0) * es;
  if (j->dnnl && op_dnnl_sgemm(r1 - r0, c1 - c0, j->k, (const float *)a, j->rsa, j->csa,
                               (const float *)b, j->rsb, j->csb, (float)j->beta, (float *)c, j->rsc))
    return;
  one(j->f32, j->sup, r1 - r0, c1 - c0, j->k, a, j->rsa, j->csa, b, j->rsb, j->csb, j->beta, c,
      j->rsc);
}

/* The packing a gm x gn grid adds to one tile, as a share of the product (see the top). */
static double extra(int64_t m, int64_t n, int64_t gm, int64_t gn) {
  return PACK_ROWS * ((double)(gm - 1) / (double)m + (double)(gn - 1) / (double)n);
}

/* The cheapest grid of exactly `per` tiles with no edge under MIN_EDGE; false if none. On a
 * tie, cols_first cuts the columns, else the rows (see op_gemm_grid). */
static bool shape(int64_t m, int64_t n, int64_t per, bool cols_first, int64_t *gm, int64_t *gn) {
  bool found = false;
  for (int64_t i = 0; i < per; i++) {
    int64_t r = cols_first ? i + 1 : per - i, c = per / r;
    if (r * c != per || (r > 1 && m / r < MIN_EDGE) || (c > 1 && n / c < MIN_EDGE)) continue;
    if (!found || extra(m, n, r, c) < extra(m, n, *gm, *gn)) *gm = r, *gn = c, found = true;
  }
  return found;
}

void op_gemm_grid(int64_t m, int64_t n, int64_t batch, int threads, bool cols_first, int64_t *gm,
                  int64_t *gn) {
  *gm = *gn = 1;
  if (threads <= 1) return;
  double base = -1;
  for (int64_t each = 1; each <= TILES_PER_THREAD; each *= 2) {
    int64_t per = (threads * each + batch - 1) / batch, r, c;
    while (per < threads && batch * per % threads) per++;   /* all threads busy to the end */
    if (base < 0) {   /* one tile a thread, or as near as MIN_EDGE allows */
      while (per > 1 && !shape(m, n, per, cols_first, gm, gn)) per--;
      base = extra(m, n, *gm, *gn);
    } else if (shape(m, n, per, cols_first, &r, &c) && extra(m, n, r, c) <= base + EXTRA_BUDGET) {
      *gm = r, *gn = c;
    } else {
      break;
    }
    if (per == 1) break;
  }
}

/* A sup product's tiles, from its shape alone, so that its bits never depend on the
 * threads (a cut changes them: haswell's sup kernels pick their loop and edge blocks from
 * each call's sizes, and 35 of 1684 shapes cut into halves differed from one call on a
 * Zen 3): one tile a SUP_TILE_MACS, along the columns in runs of SUP_EDGE where there are
 * two such runs, else along the rows. On one thread the tiles run one after the other at
 * the same speed ([128,65]x[65,256] on a Zen 3: 51 us one call, 25 us a half), so two
 * threads take an LSTM step's products in half the time. At 384K multiply-adds the
 * 100-step LSTMs' [32,96]x[96,256] products (786K) are cut too: on one Zen 3 thread two
 * halves run at 81 GFLOP/s against 57 for one call, 148 on two threads back to back. */
#define SUP_TILE_MACS (384.0 * 1024)
enum { SUP_EDGE = 64 };
static void sup_grid(int64_t m, int64_t n, int64_t k, job *j) {
  j->gm = j->gn = 1;
  int64_t want = (int64_t)((double)m * (double)n * (double)k / SUP_TILE_MACS);
  if (want < 2) return;
  if (n >= 2 * SUP_EDGE) j->gn = want < n / SUP_EDGE ? want : n / SUP_EDGE;
  else if (m >= 2 * SUP_EDGE) j->gm = want < m / SUP_EDGE ? want : m / SUP_EDGE;
}

/* Does the kernel set's micro-kernel prefer rows (zen*, haswell; skx prefers columns)? Its
 * big packed panel (B's KC x NC) then runs along our columns, so a tie cuts those: each
 * tile packs half of B instead of all of it. Zen 3, two threads, interleaved runs of
 * scripts/bench/gemm_grid.c (GFLOP/s, rows cut / columns cut): 256^3 144-157 / 160-169 in
 * five runs of six (raw BLIS's own two threads 165-170), 1024^3 and 2048^3 level within 2 %. */
static bool kernel_prefers_rows(bool f32) {
  return bli_cntx_l3_nat_ukr_prefers_rows_dt(f32 ? BLIS_FLOAT : BLIS_DOUBLE, BLIS_GEMM_UKR,
                                             (cntx_t *)bli_gks_query_cntx());
}

/* op_gemm_batch on a gm x gn grid a matrix (gm 0: op_gemm_grid's). */
static void gemm(bool f32, int64_t batch, int64_t m, int64_t n, int64_t k, const void *a,
                 int64_t rsa, int64_t csa, int64_t sa, const void *b, int64_t rsb, int64_t csb,
                 int64_t sb, double beta, void *c, int64_t rsc, int64_t sc, int threads,
                 int64_t gm, int64_t gn) {
  if (batch <= 0 || m <= 0 || n <= 0) return;
  job j = {.f32 = f32, .m = m, .n = n, .k = k, .rsa = rsa, .csa = csa, .rsb = rsb, .csb = csb,
           .rsc = rsc, .sa = sa, .sb = sb, .sc = sc, .a = a, .b = b, .c = c, .beta = beta,
           .gm = gm, .gn = gn, .sup = sup_path(f32, m, n, k, rsb, csb, rsc)};
  j.dnnl = !j.sup && dnnl_path(f32, m, n, k, rsa, csa, rsb, csb, rsc);
  if (j.sup) sup_grid(m, n, k, &j);
  else if (j.dnnl && gm <= 0) op_gemm_grid(m, n, batch, dnnl_threads, kernel_prefers_rows(f32), &j.gm, &j.gn);
  else if (gm <= 0) op_gemm_grid(m, n, batch, threads, kernel_prefers_rows(f32), &j.gm, &j.gn);
  j.per = j.gm * j.gn;
  /* The micro-kernel's register block: a column-preferring kernel (skx) gets row-major C
   * transposed, so its MR runs along our n. */
  j.am = j.an = 1;
  if (j.sup) {
    j.am = j.an = SUP_EDGE;
  } else if (j.dnnl) {   /* its AVX-512 kernel's block: 48 of C's columns by 8 rows */
    j.am = 8, j.an = 48;
  } else if (j.per > 1) {
    num_t dt = f32 ? BLIS_FLOAT : BLIS_DOUBLE;
    cntx_t *cx = (cntx_t *)bli_gks_query_cntx();
    int64_t mr = bli_cntx_get_blksz_def_dt(dt, BLIS_MR, cx);
    int64_t nr = bli_cntx_get_blksz_def_dt(dt, BLIS_NR, cx);
    bool rows = bli_cntx_l3_nat_ukr_prefers_rows_dt(dt, BLIS_GEMM_UKR, cx);
    j.am = rows ? mr : nr, j.an = rows ? nr : mr;
  }
  rt_parallel_tiles_heavy(batch * j.per, threads, tile, &j);
}

void op_gemm_batch(bool f32, int64_t batch, int64_t m, int64_t n, int64_t k, const void *a,
                   int64_t rsa, int64_t csa, int64_t sa, const void *b, int64_t rsb,
                   int64_t csb, int64_t sb, double beta, void *c, int64_t rsc, int64_t sc,
                   int threads) {
  gemm(f32, batch, m, n, k, a, rsa, csa, sa, b, rsb, csb, sb, beta, c, rsc, sc, threads, 0, 0);
}

void op_gemm(bool f32, int64_t m, int64_t n, int64_t k, const void *a, int64_t rsa, int64_t csa,
             const void *b, int64_t rsb, int64_t csb, double beta, void *c, int64_t rsc,
             int threads) {
  gemm(f32, 1, m, n, k, a, rsa, csa, 0, b, rsb, csb, 0, beta, c, rsc, 0, threads, 0, 0);
}

void op_gemm_on_grid(bool f32, int64_t m, int64_t n, int64_t k, const void *a, int64_t rsa,
                     int64_t csa, const void *b, int64_t rsb, int64_t csb, double beta, void *c,
                     int64_t rsc, int threads, int64_t gm, int64_t gn) {
  gemm(f32, 1, m, n, k, a, rsa, csa, 0, b, rsb, csb, 0, beta, c, rsc, 0, threads, gm, gn);
}
