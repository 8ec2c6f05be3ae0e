/* The CUDA kernels of ops/cuda/kernels.cu behind a plain C interface (no CUDA types): the
 * GPU ops of ops/gpu/ call these with device pointers and the device's stream (a
 * cudaStream_t passed as void *). Each launcher only enqueues; it returns the launch's
 * status (0 = cudaSuccess), which the caller turns into an error naming the node.
 * Shapes come pre-digested (strides, counts) so the kernels stay small. float32 compute;
 * Cast and Fill also take the other dtypes (numbered as rt_dtype). UNVERIFIED on a GPU. */
#ifndef TFSH_CUDA_KERNELS_H
#define TFSH_CUDA_KERNELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TG_MAX_DIMS 8

/* Output dims and, per input, its element strides over them (0 along a broadcast dim). */
typedef struct tg_bcast {
  int nd;
  int64_t dims[TG_MAX_DIMS];
  int64_t sa[TG_MAX_DIMS], sb[TG_MAX_DIMS];
} tg_bcast;

/* A scalar operand that may live in device memory (dev != NULL, of dtype `dtype`) or be
 * known on the host (v): kernels read it themselves, so nobody waits for a copy. */
typedef struct tg_scalar {
  const void *dev;
  int dtype;
  double v;
} tg_scalar;

enum {
  TG_ADD, TG_SUB, TG_MUL, TG_DIV, TG_MAXIMUM, TG_MINIMUM, TG_POW, TG_SQDIFF,
  TG_RELU_GRAD, TG_SIGMOID_GRAD, TG_TANH_GRAD, TG_RSQRT_GRAD, TG_ELU_GRAD, TG_SOFTPLUS_GRAD,
  TG_EQUAL, TG_NOT_EQUAL, TG_GREATER, TG_GREATER_EQUAL, TG_LESS, TG_LESS_EQUAL,   /* -> bool */
  TG_N_BINARY
};
enum {
  TG_NEG, TG_SQUARE, TG_SQRT, TG_EXP, TG_LOG, TG_ABS, TG_RSQRT, TG_SIGN, TG_FLOOR, TG_CEIL,
  TG_LOG1P, TG_RELU, TG_SIGMOID, TG_TANH, TG_ELU, TG_SOFTPLUS, TG_N_UNARY
};
enum { TG_R_SUM, TG_R_MEAN, TG_R_MAX, TG_R_MIN, TG_R_PROD, TG_R_HALF_SUMSQ };
enum { TG_GD, TG_MOMENTUM, TG_ADAGRAD, TG_ADAM, TG_RMSPROP };

/* y = a op b; bc NULL: a, b and y all have n elements. Comparisons write bool bytes. */
int tg_binary_f32(void *stream, int op, const float *a, const float *b, void *y, int64_t n,
                  const tg_bcast *bc);
int tg_unary_f32(void *stream, int op, const float *x, float *y, int64_t n);

/* A reduction seen as kept dims (the output, in order) and reduced dims, each with the
 * input's strides: out[j] = reduce over k of in[off(j) + off(k)]. */
typedef struct tg_reduce {
  int nk, nr;
  int64_t kdims[TG_MAX_DIMS], kstr[TG_MAX_DIMS];
  int64_t rdims[TG_MAX_DIMS], rstr[TG_MAX_DIMS];
  int64_t n_out, count;
} tg_reduce;
int tg_reduce_f32(void *stream, int kind, const float *x, float *y, const tg_reduce *r);

/* y[i] = x[small(i)] * scale over bc's dims (bc->sa: x's strides): _ReduceGrad, tiling. */
int tg_spread_f32(void *stream, const float *x, float *y, int64_t n, const tg_bcast *bc, float scale);

/* Row-wise softmax / log-softmax of rows x n. */
int tg_softmax_f32(void *stream, const float *x, float *y, int64_t rows, int64_t n, int log_out);
/* Softmax cross-entropy: dense labels p (rows x n) or sparse labels (int32 or int64 by
 * labels64); loss[rows], backprop[rows x n]. A sparse label out of [0, n) gives NaN loss
 * and backprop for its row (TF's GPU kernel does the same). */
int tg_xent_f32(void *stream, const float *x, const float *p, const void *labels, int labels64,
                float *loss, float *backprop, int64_t rows, int64_t n);

/* y[i] = x[i] + b[(i / inner) % ch] */
int tg_bias_add_f32(void *stream, const float *x, const float *b, float *y, int64_t n, int64_t ch,
                    int64_t inner);

/* dtypes as rt_dtype: 1 float, 2 double, 3 int32, 9 int64, 10 bool. */
int tg_cast(void *stream, const void *x, int src, void *y, int dst, int64_t n);
int tg_fill(void *stream, void *y, int dtype, int64_t n, tg_scalar v);

/* The optimizers' updates, in place: v (var), a and b (slots), g (grad); s: the op's
 * scalars in its input order (lr first; Adam: beta1_power, beta2_power, lr, beta1, beta2,
 * epsilon; Momentum: lr, momentum; RMSProp: lr, rho, momentum, epsilon). */
int tg_apply_f32(void *stream, int kind, float *v, float *a, float *b, const float *g, int64_t n,
                 const tg_scalar *s, int flag);

/* y = x with its 4 axes permuted: y's axis k is x's axis perm[k] (filter layouts). */
int tg_permute4_f32(void *stream, const float *x, const int64_t *dims, const int *perm, float *y);

#ifdef __cplusplus
}
#endif

#endif
