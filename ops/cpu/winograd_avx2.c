/* ops/cpu/winograd_kern.h on AVX2 + FMA, for both filter sizes: 8 floats a vector, register
 * tiles of 6 x 16. */
#include "ops/cpu/winograd_int.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define VEC __m256
#define WV 8
#define NVMAX 2
#define TGT __attribute__((target("avx2,fma")))
#define VLOAD _mm256_loadu_ps
#define VSTORE _mm256_storeu_ps
#define VZERO _mm256_setzero_ps()
#define VSET _mm256_set1_ps
#define VADD _mm256_add_ps
#define VSUB _mm256_sub_ps
#define VMUL _mm256_mul_ps
#define VFMA _mm256_fmadd_ps
#define VMAX _mm256_max_ps
#define ISA_SFX _avx2
#define WR 5
#include "ops/cpu/winograd_kern.h"
#undef WR
#define WR 3
#include "ops/cpu/winograd_kern.h"

#else
#define STUBS(k)                                                                               \
  void op_wino_fwd##k##_avx2(const op_wino *g, const float *x, const float *w, bool flip,    \
                           const float *bias, bool relu, float *y, void *scratch, int threads) { \
    (void)g, (void)x, (void)w, (void)flip, (void)bias, (void)relu, (void)y, (void)scratch;     \
    (void)threads;                                                                             \
  }                                                                                            \
  void op_wino_filter##k##_avx2(const op_wino *g, const float *x, const float *dy, float *dw,   \
                              void *scratch, int threads) {                                    \
    (void)g, (void)x, (void)dy, (void)dw, (void)scratch, (void)threads;                        \
  }
STUBS(5)
STUBS(3)
#endif
