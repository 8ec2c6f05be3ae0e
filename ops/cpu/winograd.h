/* Winograd F(2x2, 5x5) and F(2x2, 3x3): float 5x5 and 3x3 convolutions at stride 1 with 9
 * and 4 multiplications an output where the direct and im2col kernels do 25 and 9.
 *
 * Why: the tf.nn CNN of TF's tutorial (5x5 SAME, 32 -> 64 channels on 14x14) spends 60 %
 * of its training step in that layer's three directions, and oneDNN's direct kernels (and
 * TF's) already run them at the FP32 peak of the cores; only less work is faster. Each 2x2
 * block of outputs comes from a 6x6 (4x4) block of input: V = Bt d B (36 or 16 values a
 * channel), U = G g Gt (the filter, once a call), 36 (16) products V x U summed over the
 * input channels (small GEMMs), then Y = At M A. That is exact arithmetic rearranged, but
 * not a mere reordering of the direct sum: the transforms' constants round too. For 5x5,
 * with the points 0, 1, -1, 2, -1/2 (half the error of 0, +-1, +-2), the worst error
 * measured is 9-13 float ulps of the output's largest value, the rms 1.5 (a direct float
 * sum: 1-2 and 0.2); cuDNN's Winograd kernels, which TF runs on GPUs by default, are of
 * the same order. For 3x3 (points 0, 1, -1; constants 1 and 1/2) it is 2-3 ulps. The filter
 * gradient uses the same transforms the other way round: dU = sum over blocks of
 * (A dY At) * V, dg = Gt dU G. TFSH_WINOGRAD=0 keeps the direct kernels.
 *
 * AVX-512 or AVX2 + FMA (a vector carries 16 or 8 channels: the same operations in the
 * same order, so the same bits on both); channels in multiples of 16. */
#ifndef TFSH_OPS_CPU_WINOGRAD_H
#define TFSH_OPS_CPU_WINOGRAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One k x k stride-1 correlation (k 5 or 3) y[n, oh, ow, oc] = sum x[n, oy + ky - pt,
 * ox + kx - pl, ic] w[ky, kx, ic, oc], x [n, ih, iw, ic] (zero outside). */
typedef struct op_wino {
  int64_t k, n, ih, iw, ic, oc, oh, ow, pt, pl;
} op_wino;

/* Whether g can run here (AVX-512 or AVX2, enabled, k 5 or 3, channels in 16s and at most
 * 256 (5x5) or 512 (3x3) in and out, big enough to pay). */
bool op_wino_ok(const op_wino *g);

/* Bytes of scratch for `threads` threads (64-byte aligned by the caller). */
size_t op_wino_fwd_scratch(const op_wino *g, int threads);
size_t op_wino_filter_scratch(const op_wino *g, int threads);

/* y = the correlation of g, then + bias (NULL: none) and max(0, .) when relu. flip: w is
 * the filter of the opposite direction, [5, 5, oc, ic], turned half a circle (the input
 * gradient of a forward convolution whose output is this x). */
void op_wino_fwd(const op_wino *g, const float *x, const float *w, bool flip, const float *bias,
                 bool relu, float *y, void *scratch, int threads);

/* dw[5, 5, ic, oc] = the filter gradient of g's correlation for output gradient dy. The sum
 * is grouped by the tiling, not by thread: the same bits on any thread count. */
void op_wino_filter(const op_wino *g, const float *x, const float *dy, float *dw, void *scratch,
                    int threads);

/* ", Winograd for 3x3 and 5x5 convolutions (AVX-512)" where they run, else "": for
 * op_cpu_summary's line. */
const char *op_wino_summary(void);

/* The widest kernels used: 2 AVX-512, 1 AVX2 (tests run both); returns the level that
 * runs, at most what the CPU has. */
int op_wino_isa(int level);

/* Off: op_wino_ok answers false (benchmarks and tests set the paths side by side); on by
 * default, off when TFSH_WINOGRAD=0. */
void op_wino_enable(bool on);

#endif
