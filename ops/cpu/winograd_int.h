/* What ops/cpu/winograd.c and its two kernel files share: the blocking, the tiles, the
 * jobs the pool runs. */
#ifndef TFSH_OPS_CPU_WINOGRAD_INT_H
#define TFSH_OPS_CPU_WINOGRAD_INT_H

#include "ops/cpu/winograd.h"
#include "runtime/pool.h"

/* Positions of a tile: (k + 1)^2. */
static inline int64_t wino_pos(int64_t k) { return (k + 1) * (k + 1); }

/* Tiles a block for a k x k filter: 36 of 6x6 for 5x5, 72 of 4x4 for 3x3 (V and M then 500
 * and 440 KB for 32 -> 64 channels), fewer for wide layers, so that V and M stay within
 * 1 MB (a Zen 5's L2), a multiple of 6, at least 12. A function of the layer alone, never
 * of the machine: the filter gradient's grouping, and so its bits, follow the blocks. */
static inline int64_t wino_tb(const op_wino *g) {
  int64_t full = g->k == 5 ? 36 : 72;
  int64_t fit = (1 << 20) / (wino_pos(g->k) * (g->ic + g->oc) * 4) / 6 * 6;
  return fit >= full ? full : fit < 12 ? 12 : fit;
}

/* The filter gradient's partial sums: 8 (4 a thread on 2 cores), fewer where 8 would pass
 * 32 MB of scratch, at least 2. */
static inline int64_t wino_sums(const op_wino *g) {
  int64_t s = (32 << 20) / (wino_pos(g->k) * g->ic * g->oc * 4);
  return s > 8 ? 8 : s < 2 ? 2 : s;
}

static inline int64_t wino_tiles(const op_wino *g) {
  return g->n * ((g->oh + 1) / 2) * ((g->ow + 1) / 2);
}

/* Floats of a thread's scratch: a block's V and M (or D). */
static inline size_t wino_thread(const op_wino *g) {
  return (size_t)(wino_pos(g->k) * wino_tb(g) * (g->ic + g->oc));
}

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
  int64_t nt, tb;  /* tiles; tiles a block */
} fwd_job;

typedef struct filter_job {
  const op_wino *g;
  const float *x, *dy;
  float *part, *sc;   /* part: the sums, positions x ic x oc each; sc as fwd_job's */
  int64_t nt, tb, blocks, sums;
} filter_job;

/* The entry points of each filter size and width (winograd.h's op_wino_fwd and
 * op_wino_filter pick one). */
#define WINO_ENTRIES(k, isa)                                                                   \
  void op_wino_fwd##k##_##isa(const op_wino *g, const float *x, const float *w, bool flip,     \
                              const float *bias, bool relu, float *y, void *scratch,          \
                              int threads);                                                   \
  void op_wino_filter##k##_##isa(const op_wino *g, const float *x, const float *dy, float *dw, \
                                 void *scratch, int threads);
WINO_ENTRIES(5, avx512)
WINO_ENTRIES(3, avx512)
WINO_ENTRIES(5, avx2)
WINO_ENTRIES(3, avx2)

#endif
