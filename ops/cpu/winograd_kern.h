/* The Winograd kernels of ops/cpu/winograd.c for one vector width and one filter size:
 * included by winograd_avx512.c and winograd_avx2.c, once with WR 5 (F(2x2, 5x5), 6x6
 * tiles) and once with WR 3 (F(2x2, 3x3), 4x4 tiles), after they define
 *   VEC, WV (floats a vector), NVMAX (vectors of a product's register tile row), TGT (the
 *   target attribute), VLOAD VSTORE VZERO VSET VADD VSUB VMUL VFMA VMAX (the intrinsics),
 *   ISA_SFX (the entry points' suffix: op_wino_fwd5_avx512 and so on).
 * The register tile is 6 rows of NVMAX vectors: 24 accumulators of 16 floats on AVX-512,
 * 12 of 8 on AVX2 (16 registers). Names of one filter size end in WR (SET). */
#include "ops/cpu/winograd_int.h"

#ifndef WINO_KERN_SHARED   /* the first inclusion: what both sizes share */
#define WINO_KERN_SHARED
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define INL static inline __attribute__((always_inline)) TGT
#define K(s) VSET(s)
#define ADD VADD
#define SUB VSUB
#define FMA(a, s, c) VFMA(a, K(s), c)   /* a s + c */
#define SET(x) CAT(x, WR)
#define ENTRY(x) CAT(SET(x), ISA_SFX)
#define WN (WR + 1)       /* tile side */
#define WP (WN * WN)      /* positions of a tile */
#define WT (WR * WR)      /* filter taps */

/* c[r][WV j..] (+)= sum over i < depth of a[r * ars + i * ais] b[i * bs + WV j], r < R,
 * j < NV; beta 0 overwrites c. The one product of both directions. */
INL void tile_mk(const int R, const int NV, int64_t depth, const float *a, int64_t ars,
                 int64_t ais, const float *b, int64_t bs, float *c, int64_t cs, bool beta) {
  VEC acc[6][NVMAX];
  for (int r = 0; r < R; r++)
    for (int j = 0; j < NV; j++)
      acc[r][j] = beta ? VLOAD(c + r * cs + WV * j) : VZERO;
  for (int64_t i = 0; i < depth; i++) {
    VEC bv[NVMAX];
    for (int j = 0; j < NV; j++) bv[j] = VLOAD(b + i * bs + WV * j);
    for (int r = 0; r < R; r++) {
      VEC av = VSET(a[r * ars + i * ais]);
      for (int j = 0; j < NV; j++) acc[r][j] = VFMA(av, bv[j], acc[r][j]);
    }
  }
  for (int r = 0; r < R; r++)
    for (int j = 0; j < NV; j++) VSTORE(c + r * cs + WV * j, acc[r][j]);
}

#define MK(R, NV) tile_mk(R, NV, depth, a, ars, ais, b, bs, c, cs, beta)
#if NVMAX == 4
#define MK_NV(R) (nv == 4 ? MK(R, 4) : nv == 3 ? MK(R, 3) : nv == 2 ? MK(R, 2) : MK(R, 1))
#else
#define MK_NV(R) (nv == 2 ? MK(R, 2) : MK(R, 1))
#endif

/* C[rows, cols] (+)= A B as tile_mk's strides say, cols a multiple of WV. */
static TGT void product(int64_t rows, int64_t cols, int64_t depth, const float *A, int64_t ars,
                        int64_t ais, const float *B, int64_t bs, float *C, int64_t cs, bool beta) {
  for (int64_t k0 = 0; k0 < cols; k0 += NVMAX * WV) {
    int nv = cols - k0 >= NVMAX * WV ? NVMAX : (int)(cols - k0) / WV;
    for (int64_t r0 = 0; r0 < rows; r0 += 6) {
      const float *a = A + r0 * ars, *b = B + k0;
      float *c = C + r0 * cs + k0;
      switch (rows - r0 >= 6 ? 6 : rows - r0) {
        case 6: MK_NV(6); break;
        case 5: MK_NV(5); break;
        case 4: MK_NV(4); break;
        case 3: MK_NV(3); break;
        case 2: MK_NV(2); break;
        default: MK_NV(1); break;
      }
    }
  }
}

#endif

#if WR == 5
/* o[0..5] (stride os) = Bt d[0..5] (stride ds), Bt for the points 0, 1, -1, 2, -1/2. */
INL void SET(bt)(const VEC *d, int ds, VEC *o, int os) {
  VEC d0 = d[0], d1 = d[ds], d2 = d[2 * ds], d3 = d[3 * ds], d4 = d[4 * ds], d5 = d[5 * ds];
  o[0] = FMA(SUB(d1, d3), 1.5f, FMA(d2, -2.f, ADD(d0, d4)));
  o[os] = FMA(d2, -2.5f, FMA(d3, -0.5f, SUB(d4, d1)));
  o[2 * os] = FMA(d2, 0.5f, FMA(d3, -2.5f, ADD(d4, d1)));
  o[3 * os] = FMA(SUB(d3, d1), 0.5f, SUB(d4, d2));
  o[4 * os] = FMA(SUB(d1, d3), 2.f, SUB(d4, d2));
  o[5 * os] = FMA(SUB(d2, d4), 1.5f, FMA(d3, -2.f, ADD(d5, d1)));
}

/* o[0..1] = At m[0..5] (stride ms). */
INL void SET(at)(const VEC *m, int ms, VEC *o) {
  VEC m1 = m[ms], m2 = m[2 * ms], m3 = m[3 * ms], m4 = m[4 * ms];
  o[0] = ADD(ADD(m[0], m1), ADD(ADD(m2, m3), m4));
  o[1] = ADD(FMA(m4, -0.5f, FMA(m3, 2.f, SUB(m1, m2))), m[5 * ms]);
}

/* o[0..5] (stride os) = A y[0..1]: the output gradient's transform. */
INL void SET(ay)(VEC y0, VEC y1, VEC *o, int os) {
  o[0] = y0, o[os] = ADD(y0, y1), o[2 * os] = SUB(y0, y1);
  o[3 * os] = FMA(y1, 2.f, y0), o[4 * os] = FMA(y1, -0.5f, y0), o[5 * os] = y1;
}

/* o[0..5] (stride os) = G g[0..4] (stride gs). */
INL void SET(gf)(const VEC *g, int gs, VEC *o, int os) {
  VEC g0 = g[0], g1 = g[gs], g2 = g[2 * gs], g3 = g[3 * gs], g4 = g[4 * gs];
  VEC e = ADD(ADD(g0, g2), g4), od = ADD(g1, g3);
  o[0] = g0;
  o[os] = VMUL(ADD(e, od), K(-1.f / 3));
  o[2 * os] = VMUL(SUB(e, od), K(1.f / 3));
  o[3 * os] = VMUL(FMA(g4, 16.f, FMA(g3, 8.f, FMA(g2, 4.f, FMA(g1, 2.f, g0)))), K(1.f / 15));
  o[4 * os] = VMUL(FMA(g0, -16.f, FMA(g1, 8.f, FMA(g2, -4.f, FMA(g3, 2.f, VSUB(VZERO, g4))))),
                   K(1.f / 15));
  o[5 * os] = g4;
}

/* o[0..4] (stride os) = Gt v[0..5] (stride vs). */
INL void SET(gt)(const VEC *v, int vs, VEC *o, int os) {
  VEC v1 = v[vs], v2 = v[2 * vs], v3 = v[3 * vs], v4 = v[4 * vs];
  VEC s = VMUL(ADD(v1, v2), K(-1.f / 3)), d = VMUL(SUB(v2, v1), K(1.f / 3));
  const VEC f = K(1.f / 15);
  o[0] = ADD(ADD(v[0], d), VMUL(FMA(v4, -16.f, v3), f));
  o[os] = ADD(s, VMUL(FMA(v4, 8.f, VMUL(v3, K(2.f))), f));
  o[2 * os] = ADD(d, VMUL(VMUL(SUB(v3, v4), K(4.f)), f));
  o[3 * os] = ADD(s, VMUL(FMA(v3, 8.f, VMUL(v4, K(2.f))), f));
  o[4 * os] = ADD(ADD(d, VMUL(FMA(v3, 16.f, VSUB(VZERO, v4)), f)), v[5 * vs]);
}

#elif WR == 3
/* The points 0, 1, -1: o[0..3] (stride os) = Bt d[0..3] (stride ds). */
INL void SET(bt)(const VEC *d, int ds, VEC *o, int os) {
  VEC d1 = d[ds], d2 = d[2 * ds];
  o[0] = SUB(d[0], d2), o[os] = ADD(d1, d2), o[2 * os] = SUB(d2, d1);
  o[3 * os] = SUB(d[3 * ds], d1);
}

/* o[0..1] = At m[0..3] (stride ms). */
INL void SET(at)(const VEC *m, int ms, VEC *o) {
  VEC m1 = m[ms], m2 = m[2 * ms];
  o[0] = ADD(ADD(m[0], m1), m2), o[1] = ADD(SUB(m1, m2), m[3 * ms]);
}

/* o[0..3] (stride os) = A y[0..1]. */
INL void SET(ay)(VEC y0, VEC y1, VEC *o, int os) {
  o[0] = y0, o[os] = ADD(y0, y1), o[2 * os] = SUB(y0, y1), o[3 * os] = y1;
}

/* o[0..3] (stride os) = G g[0..2] (stride gs). */
INL void SET(gf)(const VEC *g, int gs, VEC *o, int os) {
  VEC g0 = g[0], g1 = g[gs], g2 = g[2 * gs], e = ADD(g0, g2);
  o[0] = g0, o[os] = VMUL(ADD(e, g1), K(0.5f)), o[2 * os] = VMUL(SUB(e, g1), K(0.5f));
  o[3 * os] = g2;
}

/* o[0..2] (stride os) = Gt v[0..3] (stride vs). */
INL void SET(gt)(const VEC *v, int vs, VEC *o, int os) {
  VEC s = VMUL(ADD(v[vs], v[2 * vs]), K(0.5f));
  o[0] = ADD(v[0], s), o[os] = VMUL(SUB(v[vs], v[2 * vs]), K(0.5f)), o[2 * os] = ADD(s, v[3 * vs]);
}
#else
#error "winograd_kern.h: WR must be 5 or 3"
#endif

/* V[p][tl][c] for the tiles [t0, t0 + nt) of x [n, ih, iw, ic] (zero outside). */
static TGT void SET(input_tf)(const op_wino *g, const float *x, int64_t t0, int64_t nt,
                              int64_t tb, float *V) {
  int64_t C = g->ic;
  for (int64_t tl = 0; tl < nt; tl++) {
    where w = tile_at(g, t0 + tl);
    int64_t iy0 = w.oy - g->pt, ix0 = w.ox - g->pl;
    bool inside = iy0 >= 0 && ix0 >= 0 && iy0 + WN <= g->ih && ix0 + WN <= g->iw;
    const float *img = x + w.b * g->ih * g->iw * C;
    for (int64_t c0 = 0; c0 < C; c0 += WV) {
      VEC d[WP], t[WP];
      for (int i = 0; i < WN; i++) {
        int64_t iy = iy0 + i;
        for (int j = 0; j < WN; j++) {
          int64_t ix = ix0 + j;
          bool in = inside || (iy >= 0 && iy < g->ih && ix >= 0 && ix < g->iw);
          d[i * WN + j] = in ? VLOAD(img + (iy * g->iw + ix) * C + c0) : VZERO;
        }
      }
      for (int j = 0; j < WN; j++) SET(bt)(d + j, WN, t + j, WN);
      for (int i = 0; i < WN; i++) SET(bt)(t + WN * i, 1, d + WN * i, 1);
      for (int p = 0; p < WP; p++) VSTORE(V + (p * tb + tl) * C + c0, d[p]);
    }
  }
}

/* U[p][c][k] = G g Gt of w [WR, WR, ic, oc] (flip: of w [WR, WR, oc, ic] turned half a
 * circle, first copied into T as [WR, WR, ic, oc]). */
static TGT void SET(filter_tf)(const op_wino *g, const float *w, bool flip, float *T, float *U) {
  int64_t C = g->ic, Kc = g->oc;
  if (flip) {
    for (int64_t y = 0; y < WT; y++)
      for (int64_t c = 0; c < C; c++)
        for (int64_t k = 0; k < Kc; k++)
          T[(y * C + c) * Kc + k] = w[((WT - 1 - y) * Kc + k) * C + c];
    w = T;
  }
  for (int64_t c = 0; c < C; c++)
    for (int64_t k0 = 0; k0 < Kc; k0 += WV) {
      VEC q[WT], t[WN * WR], u[WP];
      for (int y = 0; y < WT; y++) q[y] = VLOAD(w + (y * C + c) * Kc + k0);
      for (int kx = 0; kx < WR; kx++) SET(gf)(q + kx, WR, t + kx, WR);   /* t[WN][WR] = G q */
      for (int i = 0; i < WN; i++) SET(gf)(t + WR * i, 1, u + WN * i, 1);   /* u = t Gt */
      for (int p = 0; p < WP; p++) VSTORE(U + (p * C + c) * Kc + k0, u[p]);
    }
}

static TGT void SET(fwd_block)(void *arg, int64_t blk, int who) {
  const fwd_job *j = arg;
  const op_wino *g = j->g;
  int64_t C = g->ic, Kc = g->oc, tb = j->tb, t0 = blk * tb, nt = j->nt - t0 < tb ? j->nt - t0 : tb;
  float *V = j->sc + (size_t)who * wino_thread(g), *M = V + WP * tb * C;
  SET(input_tf)(g, j->x, t0, nt, tb, V);
  for (int p = 0; p < WP; p++)
    product(nt, Kc, C, V + p * tb * C, C, 1, j->U + p * C * Kc, Kc, M + p * tb * Kc, Kc, false);
  for (int64_t tl = 0; tl < nt; tl++) {
    where w = tile_at(g, t0 + tl);
    float *out = j->y + ((w.b * g->oh + w.oy) * g->ow + w.ox) * Kc;
    bool h2 = w.oy + 1 < g->oh, w2 = w.ox + 1 < g->ow;
    for (int64_t k0 = 0; k0 < Kc; k0 += WV) {
      VEC m[WP], a[2 * WN], o[2];
      for (int p = 0; p < WP; p++) m[p] = VLOAD(M + (p * tb + tl) * Kc + k0);
      for (int jj = 0; jj < WN; jj++) {   /* a[r][jj] = At m over rows */
        VEC t[2];
        SET(at)(m + jj, WN, t);
        a[jj] = t[0], a[WN + jj] = t[1];
      }
      VEC bias = j->bias ? VLOAD(j->bias + k0) : VZERO;
      for (int r = 0; r < 2; r++) {
        if (r && !h2) break;
        SET(at)(a + WN * r, 1, o);
        for (int s = 0; s < 2; s++) {
          if (s && !w2) break;
          VEC v = j->bias ? ADD(o[s], bias) : o[s];
          if (j->relu) v = VMAX(v, VZERO);
          VSTORE(out + (r * g->ow + s) * Kc + k0, v);
        }
      }
    }
  }
}

void ENTRY(op_wino_fwd)(const op_wino *g, const float *x, const float *w, bool flip,
                        const float *bias, bool relu, float *y, void *scratch, int threads) {
  float *U = scratch, *T = U + WP * g->ic * g->oc;
  SET(filter_tf)(g, w, flip, T, U);
  int64_t nt = wino_tiles(g);
  int64_t tb = wino_tb(g);
  fwd_job j = {.g = g, .x = x, .U = U, .bias = bias, .relu = relu, .y = y,
               .sc = T + WT * g->ic * g->oc, .nt = nt, .tb = tb};
  rt_parallel_tiles_heavy((nt + tb - 1) / tb, threads, SET(fwd_block), &j);
}

/* D[p][tl][k] = A dy At for the tiles [t0, t0 + nt) of dy [n, oh, ow, oc]. */
static TGT void SET(grad_tf)(const op_wino *g, const float *dy, int64_t t0, int64_t nt,
                             int64_t tb, float *D) {
  int64_t Kc = g->oc;
  for (int64_t tl = 0; tl < nt; tl++) {
    where w = tile_at(g, t0 + tl);
    const float *q = dy + ((w.b * g->oh + w.oy) * g->ow + w.ox) * Kc;
    bool h2 = w.oy + 1 < g->oh, w2 = w.ox + 1 < g->ow;
    for (int64_t k0 = 0; k0 < Kc; k0 += WV) {
      VEC z = VZERO, e[2 * WN], d[WP];
      VEC y00 = VLOAD(q + k0), y01 = w2 ? VLOAD(q + Kc + k0) : z;
      VEC y10 = h2 ? VLOAD(q + g->ow * Kc + k0) : z;
      VEC y11 = h2 && w2 ? VLOAD(q + (g->ow + 1) * Kc + k0) : z;
      SET(ay)(y00, y10, e, 2), SET(ay)(y01, y11, e + 1, 2);   /* e[WN][2] = A y */
      for (int i = 0; i < WN; i++) SET(ay)(e[2 * i], e[2 * i + 1], d + WN * i, 1);
      for (int p = 0; p < WP; p++) VSTORE(D + (p * tb + tl) * Kc + k0, d[p]);
    }
  }
}

/* Sum s of dU: blocks s, s + sums, ... in turn. */
static TGT void SET(filter_sum)(void *arg, int64_t s, int who) {
  const filter_job *j = arg;
  const op_wino *g = j->g;
  int64_t C = g->ic, Kc = g->oc;
  int64_t tb = j->tb;
  float *V = j->sc + (size_t)who * wino_thread(g), *D = V + WP * tb * C;
  float *dU = j->part + s * WP * C * Kc;
  for (int64_t blk = s; blk < j->blocks; blk += j->sums) {
    int64_t t0 = blk * tb, nt = j->nt - t0 < tb ? j->nt - t0 : tb;
    SET(input_tf)(g, j->x, t0, nt, tb, V);
    SET(grad_tf)(g, j->dy, t0, nt, tb, D);
    for (int p = 0; p < WP; p++)
      product(C, Kc, nt, V + p * tb * C, 1, C, D + p * tb * Kc, Kc, dU + p * C * Kc, Kc,
              blk != s);
  }
}

TGT void ENTRY(op_wino_filter)(const op_wino *g, const float *x, const float *dy, float *dw,
                               void *scratch, int threads) {
  int64_t C = g->ic, Kc = g->oc, nt = wino_tiles(g), tb = wino_tb(g), S = wino_sums(g);
  int64_t blocks = (nt + tb - 1) / tb;
  filter_job j = {.g = g, .x = x, .dy = dy, .part = scratch,
                  .sc = (float *)scratch + S * WP * C * Kc, .nt = nt, .tb = tb,
                  .blocks = blocks, .sums = blocks < S ? blocks : S};
  rt_parallel_tiles_heavy(j.sums, threads, SET(filter_sum), &j);
  int64_t n = WP * C * Kc;
  for (int64_t s = 1; s < j.sums; s++)   /* in order: the bits follow the tiling only */
    for (int64_t i = 0; i < n; i += WV)
      VSTORE(j.part + i, ADD(VLOAD(j.part + i), VLOAD(j.part + s * n + i)));
  for (int64_t c = 0; c < C; c++)
    for (int64_t k0 = 0; k0 < Kc; k0 += WV) {
      VEC u[WP], t[WR * WN], q[WT];
      for (int p = 0; p < WP; p++) u[p] = VLOAD(j.part + (p * C + c) * Kc + k0);
      for (int jj = 0; jj < WN; jj++) SET(gt)(u + jj, WN, t + jj, WN);   /* t[WR][WN] = Gt u */
      for (int i = 0; i < WR; i++) SET(gt)(t + WN * i, 1, q + WR * i, 1);   /* q = t G */
      for (int y = 0; y < WT; y++) VSTORE(dw + (y * C + c) * Kc + k0, q[y]);
    }
}
