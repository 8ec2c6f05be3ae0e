/* GEMM over the process's intra-op pool (runtime/pool.h): C is cut into a grid of tiles,
 * each one single-threaded BLIS call, handed out dynamically.
 *
 * BLIS's own threads split the loops statically and meet at spinning barriers: on a
 * 2-CPU machine with a second process running (ctest -j2, a neighbour's job), two of them
 * ran the MLP and Keras tests 10x slower than one thread. Tiles keep BLIS's kernels and
 * its per-element summation order (BLIS splits only m and n, never k, for any thread
 * count), so results are bitwise those of one BLIS thread.
 *
 * Grid: up to TILES_PER_THREAD tiles a thread, so a thread that runs slowly (its core is
 * shared) costs at most one tile; no tile under MIN_EDGE rows or columns, so BLIS's
 * packing of each tile's A and B panels stays a small part of its work. */
#include "ops/cpu/gemm.h"
#include "ops/cpu/blas.h"
#include "runtime/pool.h"

enum { TILES_PER_THREAD = 4, MIN_EDGE = 64, ALIGN = 16 };

typedef struct {
  bool f32;
  int64_t m, n, k, rsa, csa, rsb, csb, rsc;
  int64_t gm, gn, per;              /* grid; per = gm * gn tiles a matrix */
  int64_t sa, sb, sc;               /* batch strides, in elements */
  const char *a, *b;
  char *c;
  double beta;
} job;

static int64_t edge(int64_t len, int64_t parts, int64_t i) {   /* start of part i */
  if (i >= parts) return len;
  int64_t e = (len * i / parts + ALIGN / 2) / ALIGN * ALIGN;
  return e < len ? e : len;
}

static void one(bool f32, int64_t m, int64_t n, int64_t k, const void *a, int64_t rsa,
                int64_t csa, const void *b, int64_t rsb, int64_t csb, double beta, void *c,
                int64_t rsc) {
  rntm_t rntm = BLIS_RNTM_INITIALIZER;
  bli_rntm_set_num_threads(1, &rntm);
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

static void tile(void *arg, int64_t t, int who) {
  (void)who;
  const job *j = arg;
  int64_t mat = t / j->per, i = t % j->per / j->gn, g = t % j->gn;
  int64_t r0 = edge(j->m, j->gm, i), r1 = edge(j->m, j->gm, i + 1);
  int64_t c0 = edge(j->n, j->gn, g), c1 = edge(j->n, j->gn, g + 1);
  if (r1 <= r0 || c1 <= c0) return;
  size_t es = j->f32 ? sizeof(float) : sizeof(double);
  const char *a = j->a + (size_t)(mat * j->sa + r0 * j->rsa) * es;
  const char *b = j->b + (size_t)(mat * j->sb + c0 * j->csb) * es;
  char *c = j->c + (size_t)(mat * j->sc + r0 * j->rsc + c0) * es;
  one(j->f32, r1 - r0, c1 - c0, j->k, a, j->rsa, j->csa, b, j->rsb, j->csb, j->beta, c, j->rsc);
}

void op_gemm_grid(int64_t m, int64_t n, int64_t batch, int threads, int64_t *gm, int64_t *gn) {
  *gm = *gn = 1;
  int64_t want = (int64_t)threads * TILES_PER_THREAD;
  while (batch * *gm * *gn < want) {
    bool m_ok = m / (*gm + 1) >= MIN_EDGE, n_ok = n / (*gn + 1) >= MIN_EDGE;
    if (m_ok && (!n_ok || m / *gm >= n / *gn)) ++*gm;
    else if (n_ok) ++*gn;
    else break;
  }
}

void op_gemm_batch(bool f32, int64_t batch, int64_t m, int64_t n, int64_t k, const void *a,
                   int64_t rsa, int64_t csa, int64_t sa, const void *b, int64_t rsb,
                   int64_t csb, int64_t sb, double beta, void *c, int64_t rsc, int64_t sc,
                   int threads) {
  if (batch <= 0 || m <= 0 || n <= 0) return;
  job j = {.f32 = f32, .m = m, .n = n, .k = k, .rsa = rsa, .csa = csa, .rsb = rsb, .csb = csb,
           .rsc = rsc, .sa = sa, .sb = sb, .sc = sc, .a = a, .b = b, .c = c, .beta = beta};
  if (threads <= 1) {
    j.gm = j.gn = j.per = 1;
  } else {
    op_gemm_grid(m, n, batch, threads, &j.gm, &j.gn);
    j.per = j.gm * j.gn;
  }
  rt_parallel_tiles(batch * j.per, threads, tile, &j);
}

void op_gemm(bool f32, int64_t m, int64_t n, int64_t k, const void *a, int64_t rsa, int64_t csa,
             const void *b, int64_t rsb, int64_t csb, double beta, void *c, int64_t rsc,
             int threads) {
  op_gemm_batch(f32, 1, m, n, k, a, rsa, csa, 0, b, rsb, csb, 0, beta, c, rsc, 0, threads);
}
