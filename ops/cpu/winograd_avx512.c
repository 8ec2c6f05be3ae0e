/* ops/cpu/winograd_kern.h on AVX-512, for both filter sizes: 16 floats a vector, register
 * tiles of 6 x 64. */
#include "ops/cpu/winograd_int.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define VEC __m512
#define WV 16
#define NVMAX 4
#define TGT __attribute__((target("avx512f")))
#define VLOAD _mm512_loadu_ps
#define VSTORE _mm512_storeu_ps
#define VZERO _mm512_setzero_ps()
#define VSET _mm512_set1_ps
#define VADD _mm512_add_ps
#define VSUB _mm512_sub_ps
#define VMUL _mm512_mul_ps
#define VFMA _mm512_fmadd_ps
#define VMAX _mm512_max_ps
#define ISA_SFX _avx512
#define WR 5
#include "ops/cpu/winograd_kern.h"
#undef WR
#define WR 3
#include "ops/cpu/winograd_kern.h"

#else
#define STUBS(k)                                                                               \
  void op_wino_fwd##k##_avx512(const op_wino *g, const float *x, const float *w, bool flip,    \
                           const float *bias, bool relu, float *y, void *scratch, int threads) { \
    (void)g, (void)x, (void)w, (void)flip, (void)bias, (void)relu, (void)y, (void)scratch;     \
    (void)threads;                                                                             \
  }                                                                                            \
  void op_wino_filter##k##_avx512(const op_wino *g, const float *x, const float *dy, float *dw,   \
                              void *scratch, int threads) {                                    \
    (void)g, (void)x, (void)dy, (void)dw, (void)scratch, (void)threads;                        \
  }
STUBS(5)
STUBS(3)
#endif
