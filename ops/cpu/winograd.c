/* Winograd F(2x2, 5x5) and F(2x2, 3x3) convolutions (ops/cpu/winograd.h says why and how).
 *
 * Work goes in blocks of output tiles (2x2 outputs each, in (image, tile row, tile column)
 * order; wino_tb a block): a block's transformed input V [P][TB][ic] and products
 * M [P][TB][oc] (P = 36 or 16 positions) stay in the core's L2, so nothing of the
 * transforms' blown-up sizes ever reaches memory. The transformed filter U [P][ic][oc] is
 * made once a call and shared. The kernels themselves are ops/cpu/winograd_kern.h, built
 * for each filter size on AVX-512 and on AVX2 + FMA (winograd_avx512.c, winograd_avx2.c);
 * this file picks one. */
#include "ops/cpu/winograd.h"
#include "ops/cpu/cpuarch.h"
#include "ops/cpu/winograd_int.h"

#include <stdlib.h>
#include <string.h>

enum { WIDE5 = 256, WIDE3 = 512 };   /* the most channels in and out: see op_wino_ok */

static _Atomic int wino_on = -1;   /* -1: TFSH_WINOGRAD not read yet */
void op_wino_enable(bool on) { wino_on = on; }

static bool enabled(void) {
  if (wino_on < 0) {
    const char *e = getenv("TFSH_WINOGRAD");
    wino_on = !(e && !strcmp(e, "0"));
  }
  return wino_on;
}

/* 2: AVX-512, 1: AVX2 and FMA, 0: neither (x86 only). */
static int cpu_isa(void) {
#if defined(__x86_64__) && defined(__GNUC__)
  static _Atomic int level = -1;
  if (level < 0) {
    __builtin_cpu_init();
    level = op_cpu_avx512() ? 2 : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }
  return level;
#else
  return 0;
#endif
}

static _Atomic int isa_cap = 2;
int op_wino_isa(int level) {
  isa_cap = level;
  return cpu_isa() < level ? cpu_isa() : level;
}

static int isa(void) { return cpu_isa() < isa_cap ? cpu_isa() : isa_cap; }

/* Below 8 blocks the filter transforms and the pool's start cost more than they save; past
 * WIDE channels in and out the blocks get too small to pay. */
bool op_wino_ok(const op_wino *g) {
  return enabled() && (g->k == 5 || g->k == 3) && g->ic >= 16 && g->oc >= 16 &&
         g->ic % 16 == 0 && g->oc % 16 == 0 && g->ic + g->oc <= (g->k == 5 ? WIDE5 : WIDE3) &&
         wino_tiles(g) >= 8 * wino_tb(g) && isa();
}

const char *op_wino_summary(void) {
  if (!enabled() || !isa()) return "";
  return isa() == 2 ? ", Winograd for 3x3 and 5x5 convolutions (AVX-512)"
                    : ", Winograd for 3x3 and 5x5 convolutions (AVX2)";
}

size_t op_wino_fwd_scratch(const op_wino *g, int threads) {
  return sizeof(float) * ((size_t)(wino_pos(g->k) + g->k * g->k) * (size_t)(g->ic * g->oc) +
                          (size_t)threads * wino_thread(g));
}

size_t op_wino_filter_scratch(const op_wino *g, int threads) {
  return sizeof(float) * ((size_t)(wino_sums(g) * wino_pos(g->k)) * (size_t)(g->ic * g->oc) +
                          (size_t)threads * wino_thread(g));
}

void op_wino_fwd(const op_wino *g, const float *x, const float *w, bool flip, const float *bias,
                 bool relu, float *y, void *scratch, int threads) {
  bool five = g->k == 5;
  __typeof__(op_wino_fwd) *f = isa() == 2 ? (five ? op_wino_fwd5_avx512 : op_wino_fwd3_avx512)
                               : isa() == 1 ? (five ? op_wino_fwd5_avx2 : op_wino_fwd3_avx2)
                                            : NULL;
  if (f) f(g, x, w, flip, bias, relu, y, scratch, threads);
}

void op_wino_filter(const op_wino *g, const float *x, const float *dy, float *dw, void *scratch,
                    int threads) {
  bool five = g->k == 5;
  __typeof__(op_wino_filter) *f =
      isa() == 2   ? (five ? op_wino_filter5_avx512 : op_wino_filter3_avx512)
      : isa() == 1 ? (five ? op_wino_filter5_avx2 : op_wino_filter3_avx2)
                   : NULL;
  if (f) f(g, x, dy, dw, scratch, threads);
}
