/* What ops/cpu/winograd.c and its two kernel files share: the blocking, the tiles, the
 * jobs the pool runs. */
#ifndef TFSH_OPS_CPU_WINOGRAD_INT_H
#define TFSH_OPS_CPU_WINOGRAD_INT_H

#include "ops/cpu/winograd.h"
#include "runtime/pool.h"

enum { TB = 36, SUMS = 8 };   /* tiles a block; the filter gradient's partial sums */

static inline int64_t wino_tiles(const op_wino *g) {
  return g->n * ((g->oh + 1) / 2) * ((g->ow + 1) / 2);
}

/* Floats of a thread's scratch: a block's V and M (or D). */
static inline size_t wino_thread(const op_wino *g) { return (size_t)(36 * TB * (g->ic + g->oc)); }

/* The tile at index t: its image, its first output row and column. */
typedef struct where {
  int64_t b, oy, ox;
} where;

static inline where tile_at(const op_wino *g, int64_t t) {
  int64_t tw = (g->ow + 1) / 2, th = (g->oh + 1) / 2, per = th * tw;
  int64_t r = t % per;
  return (where){t / per, 2 * (r / tw), 2 * (r % tw)};
}

typedef struct fwd_job {
  const op_wino *g;
  const float *x, *U, *bias;
  bool relu;
  float *y, *sc;   /* sc: wino_thread(g) floats a thread */
  int64_t nt;
} fwd_job;

typedef struct filter_job {
  const op_wino *g;
  const float *x, *dy;
  float *part, *sc;   /* part: SUMS sums of 36 ic oc; sc as fwd_job's */
  int64_t nt, blocks, sums;
} filter_job;

/* The entry points of each width (winograd.h's op_wino_fwd and op_wino_filter pick one). */
void op_wino_fwd_avx512(const op_wino *g, const float *x, const float *w, bool flip,
                        const float *bias, bool relu, float *y, void *scratch, int threads);
void op_wino_filter_avx512(const op_wino *g, const float *x, const float *dy, float *dw,
                           void *scratch, int threads);
void op_wino_fwd_avx2(const op_wino *g, const float *x, const float *w, bool flip,
                      const float *bias, bool relu, float *y, void *scratch, int threads);
void op_wino_filter_avx2(const op_wino *g, const float *x, const float *dy, float *dw,
                         void *scratch, int threads);

#endif
