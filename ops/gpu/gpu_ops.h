/* The GPU kernels of ops/gpu/gpu_ops.c and conv_ops.c, named for ops/gpu/table.c (built with CUDA only).
 * UNVERIFIED on a GPU. */
#ifndef TFSH_GPU_OPS_H
#define TFSH_GPU_OPS_H

#include "runtime/op.h"

#define GPU_KERNELS(X)                                                                      \
  X(const) X(same) X(host_then_upload)                                                      \
  X(add) X(sub) X(mul) X(div) X(maximum) X(minimum) X(pow)                                  \
  X(relu_grad) X(sigmoid_grad) X(tanh_grad) X(rsqrt_grad) X(elu_grad) X(softplus_grad)      \
  X(equal) X(not_equal) X(greater) X(greater_equal) X(less) X(less_equal)                   \
  X(neg) X(square) X(sqrt) X(exp) X(log) X(abs) X(rsqrt) X(sign) X(floor) X(ceil) X(log1p)  \
  X(relu) X(sigmoid) X(tanh) X(elu) X(softplus)                                             \
  X(addn) X(matmul) X(batch_matmul)                                                         \
  X(sum) X(mean) X(max) X(min) X(prod) X(l2_loss) X(sum_to) X(reduce_grad)                  \
  X(bias_add) X(bias_add_grad) X(softmax) X(log_softmax) X(xent) X(sparse_xent)             \
  X(cast) X(fill) X(zeros_like) X(ones_like)                                                \
  X(assign) X(assign_add) X(assign_sub)                                                     \
  X(apply_gd) X(apply_momentum) X(apply_adagrad) X(apply_adam) X(apply_rmsprop)              \
  X(conv2d) X(conv2d_backprop_input) X(conv2d_backprop_filter)                              \
  X(max_pool) X(avg_pool) X(max_pool_grad) X(avg_pool_grad)

#define GPU_DECLARE(name) int op_gpu_##name(rt_kernel_ctx *c);
GPU_KERNELS(GPU_DECLARE)
#undef GPU_DECLARE

#endif
