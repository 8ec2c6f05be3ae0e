/* Winograd F(2x2, 5x5) and F(2x2, 3x3) (ops/cpu/winograd.c) against a double-precision
 * direct convolution: the forward correlation (with bias and relu), the input gradient as
 * the flipped filter's correlation, and the filter gradient, on SAME and VALID geometries
 * with odd output sides (tiles that hang over the edge), more channels than one register
 * tile holds, wide layers' smaller blocks, and a batch that is not a whole number of
 * blocks. Each output is within 24 float ulps of the largest value (the transforms'
 * rounding; more for long sums, see ULPS); the filter gradient has the same bits on one
 * thread as on three, and the AVX2 kernels the same bits as AVX-512's. Skipped (exit 77)
 * where the CPU has neither. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "ops/cpu/winograd.h"

/* |got - want| <= ULPS float epsilons of max |want| for sums of up to 800 terms (the
 * tutorial layer's 5 x 5 x 32), and sqrt(terms / 800) times that for longer ones, as a sum's
 * rounding grows: 9-13 measured at 800 (a direct float sum: 1-2), 19-31 at 6000, so 24
 * leaves room, and a wrong coefficient (errors of the order of the values) does not pass. */
enum { ULPS = 24 };

static float *filled(int64_t n, unsigned *seed, bool positive) {
  float *v = malloc(sizeof *v * (size_t)(n ? n : 1));
  for (int64_t i = 0; i < n; i++) {
    float r = (float)(rand_r(seed) % 2001 - 1000) / 1000.0f;
    v[i] = positive && r < 0 ? 0 : r;   /* a relu's output, as a CNN's second layer reads */
  }
  return v;
}

static double ref_at(const op_wino *g, const float *x, const float *w, int64_t b, int64_t oy,
                     int64_t ox, int64_t k) {
  double s = 0;
  for (int64_t ky = 0; ky < g->k; ky++)
    for (int64_t kx = 0; kx < g->k; kx++) {
      int64_t iy = oy + ky - g->pt, ix = ox + kx - g->pl;
      if (iy < 0 || iy >= g->ih || ix < 0 || ix >= g->iw) continue;
      for (int64_t c = 0; c < g->ic; c++)
        s += (double)x[((b * g->ih + iy) * g->iw + ix) * g->ic + c] *
             w[((ky * g->k + kx) * g->ic + c) * g->oc + k];
    }
  return s;
}

static void close_to(const float *got, const double *want, int64_t n, int64_t terms,
                     const char *what) {
  double m = 0, worst = 0;
  for (int64_t i = 0; i < n; i++) m = want[i] > m ? want[i] : -want[i] > m ? -want[i] : m;
  for (int64_t i = 0; i < n; i++) {
    double e = got[i] - want[i];
    e = e < 0 ? -e : e;
    worst = e > worst ? e : worst;
  }
  double tol = ULPS * 1.1920929e-7 * m * (terms > 800 ? sqrt((double)terms / 800) : 1);
  if (worst > tol) print_error("%s: error %g > %g (max %g)\n", what, worst, tol, m);
  assert_true(worst <= tol);
}

/* y = conv(x, w) + bias, relu; then the input gradient of dy (the flipped filter) and the
 * filter gradient, each against the reference; on AVX2 the same bits as on AVX-512. */
static void one_isa(int64_t K, int64_t n, int64_t h, int64_t wd, int64_t ic, int64_t oc,
                    bool same, float *out) {
  int64_t pad = same ? K / 2 : 0, oh = same ? h : h - K + 1, ow = same ? wd : wd - K + 1;
  op_wino g = {.k = K, .n = n, .ih = h, .iw = wd, .ic = ic, .oc = oc, .oh = oh, .ow = ow,
               .pt = pad, .pl = pad};
  unsigned seed = (unsigned)(n * 7 + h * 3 + ic + oc + K);
  int64_t nx = n * h * wd * ic, ny = n * oh * ow * oc, nw = K * K * ic * oc;
  float *x = filled(nx, &seed, true), *w = filled(nw, &seed, false), *dy = filled(ny, &seed, false);
  float *bias = filled(oc, &seed, false);
  float *y = malloc(sizeof *y * (size_t)ny), *dx = malloc(sizeof *dx * (size_t)nx);
  float *dw = malloc(sizeof *dw * (size_t)nw), *dw1 = malloc(sizeof *dw1 * (size_t)nw);
  double *want = malloc(sizeof *want * (size_t)(nx > ny ? (nx > nw ? nx : nw) : ny > nw ? ny : nw));
  assert_true(op_wino_ok(&g));
  void *sc = malloc(op_wino_fwd_scratch(&g, 3) + op_wino_filter_scratch(&g, 3));

  op_wino_fwd(&g, x, w, false, bias, true, y, sc, 3);
  for (int64_t b = 0, i = 0; b < n; b++)
    for (int64_t oy = 0; oy < oh; oy++)
      for (int64_t ox = 0; ox < ow; ox++)
        for (int64_t k = 0; k < oc; k++, i++) {
          double v = ref_at(&g, x, w, b, oy, ox, k) + bias[k];
          want[i] = v > 0 ? v : 0;
        }
  close_to(y, want, ny, K * K * ic, "forward");

  /* dx[b, iy, ix, c] = sum dy[b, iy - ky + pt, ix - kx + pl, k] w[ky, kx, c, k] */
  op_wino d = {.k = K, .n = n, .ih = oh, .iw = ow, .ic = oc, .oc = ic, .oh = h, .ow = wd,
               .pt = K - 1 - pad, .pl = K - 1 - pad};
  assert_true(op_wino_ok(&d));
  op_wino_fwd(&d, dy, w, true, NULL, false, dx, sc, 3);
  for (int64_t b = 0, i = 0; b < n; b++)
    for (int64_t iy = 0; iy < h; iy++)
      for (int64_t ix = 0; ix < wd; ix++)
        for (int64_t c = 0; c < ic; c++, i++) {
          double s = 0;
          for (int64_t ky = 0; ky < K; ky++)
            for (int64_t kx = 0; kx < K; kx++) {
              int64_t oy = iy - ky + pad, ox = ix - kx + pad;
              if (oy < 0 || oy >= oh || ox < 0 || ox >= ow) continue;
              for (int64_t k = 0; k < oc; k++)
                s += (double)dy[((b * oh + oy) * ow + ox) * oc + k] *
                     w[((ky * K + kx) * ic + c) * oc + k];
            }
          want[i] = s;
        }
  close_to(dx, want, nx, K * K * oc, "input gradient");

  op_wino_filter(&g, x, dy, dw, sc, 3);
  for (int64_t ky = 0, i = 0; ky < K; ky++)
    for (int64_t kx = 0; kx < K; kx++)
      for (int64_t c = 0; c < ic; c++)
        for (int64_t k = 0; k < oc; k++, i++) {
          double s = 0;
          for (int64_t b = 0; b < n; b++)
            for (int64_t oy = 0; oy < oh; oy++)
              for (int64_t ox = 0; ox < ow; ox++) {
                int64_t iy = oy + ky - pad, ix = ox + kx - pad;
                if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
                s += (double)x[((b * h + iy) * wd + ix) * ic + c] *
                     dy[((b * oh + oy) * ow + ox) * oc + k];
              }
          want[i] = s;
        }
  close_to(dw, want, nw, n * oh * ow, "filter gradient");
  op_wino_filter(&g, x, dy, dw1, sc, 1);
  assert_memory_equal(dw, dw1, sizeof *dw * (size_t)nw);
  memcpy(out, y, sizeof *y * (size_t)ny), memcpy(out + ny, dx, sizeof *dx * (size_t)nx);
  memcpy(out + ny + nx, dw, sizeof *dw * (size_t)nw);

  free(sc), free(x), free(w), free(dy), free(bias), free(y), free(dx), free(dw), free(dw1),
      free(want);
}

static void one(int64_t K, int64_t n, int64_t h, int64_t wd, int64_t ic, int64_t oc, bool same) {
  int64_t oh = same ? h : h - K + 1, ow = same ? wd : wd - K + 1;
  size_t all = (size_t)(n * oh * ow * oc + n * h * wd * ic + K * K * ic * oc);
  float *a = malloc(sizeof *a * all), *b = malloc(sizeof *b * all);
  bool both = op_wino_isa(2) == 2;   /* else AVX2 alone (no AVX-512 here, or valgrind's) */
  one_isa(K, n, h, wd, ic, oc, same, a);
  if (both) {
    assert_int_equal(op_wino_isa(1), 1);
    one_isa(K, n, h, wd, ic, oc, same, b);
    op_wino_isa(2);
    assert_memory_equal(a, b, sizeof *a * all);
  }
  free(a), free(b);
}

static void tutorial_layer(void **s) { (void)s, one(5, 23, 14, 14, 32, 64, true); }
static void odd_valid(void **s) { (void)s, one(5, 15, 13, 11, 16, 48, false); }
static void odd_same(void **s) { (void)s, one(5, 17, 9, 15, 80, 16, true); }
/* 3x3: the tf.layers CNN's second layer (VALID 12x12, 32 -> 64), SAME with odd sides */
static void layers_3x3(void **s) { (void)s, one(3, 24, 12, 12, 32, 64, false); }
static void odd_same_3x3(void **s) { (void)s, one(3, 29, 9, 7, 48, 32, true); }
/* Wide layers: smaller blocks (24 tiles for 5x5 over 256 channels, 30 for 3x3 over 512),
 * the last column group 48 wide */
static void wide_5x5(void **s) { (void)s, one(5, 8, 10, 10, 16, 240, true); }
static void wide_3x3(void **s) { (void)s, one(3, 15, 8, 8, 16, 496, true); }

/* Too small, too wide, channels not in 16s, or switched off: not taken. */
static void refused(void **s) {
  (void)s;
  op_wino g = {.k = 5, .n = 128, .ih = 14, .iw = 14, .ic = 32, .oc = 64, .oh = 14, .ow = 14,
               .pt = 2, .pl = 2};
  assert_true(op_wino_ok(&g));
  g.ic = 24;
  assert_false(op_wino_ok(&g));
  g.ic = 128, g.oc = 128;   /* blocks of 24 tiles */
  assert_true(op_wino_ok(&g));
  g.oc = 144;   /* past 256 channels in and out: blocks too small to pay */
  assert_false(op_wino_ok(&g));
  g.k = 3, g.pt = g.pl = 1, g.ic = 256, g.oc = 256;
  assert_true(op_wino_ok(&g));
  g.oc = 272;
  assert_false(op_wino_ok(&g));
  g.k = 5, g.pt = g.pl = 2, g.oc = 64;
  g.ic = 32, g.n = 1;
  assert_false(op_wino_ok(&g));
  g.n = 128, g.k = 7;
  assert_false(op_wino_ok(&g));
  g.k = 5;
  g.n = 128;
  op_wino_enable(false);
  assert_false(op_wino_ok(&g));
  op_wino_enable(true);
}

int main(void) {
  if (op_wino_isa(2) < 1) {
    printf("skip: neither AVX-512 nor AVX2 + FMA here, which the Winograd kernels need\n");
    return 77;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(tutorial_layer), cmocka_unit_test(odd_valid),
      cmocka_unit_test(odd_same),       cmocka_unit_test(layers_3x3),
      cmocka_unit_test(odd_same_3x3),   cmocka_unit_test(wide_5x5),
      cmocka_unit_test(wide_3x3),       cmocka_unit_test(refused)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
