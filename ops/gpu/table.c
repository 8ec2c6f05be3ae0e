/* Which ops have a GPU kernel: one row per op, the GPU's column of the op registry
 * (runtime/op.h, rt_op_add_kernel). The rows are the same in every build, so placement
 * decides alike with or without CUDA (tests use TFSH_FAKE_GPUS); a build without the
 * toolkit registers them without functions, and running one there fails with "No kernel".
 *
 * Kinds of rows: a CUDA kernel (ops/gpu/gpu_ops.c over ops/cuda/kernels.cu); "same", the
 * CPU kernel, for ops that never read their data input's bytes (Identity, Reshape, Shape,
 * VariableV2); "host_then_upload", the CPU kernel then one copy to the device, for the
 * random ops (the same Philox streams give the same numbers as on a CPU).
 * UNVERIFIED on a GPU. */
#include <stddef.h>

#include "ops/gpu/gpu_ops.h"
#include "ops/ops_int.h"

#if TFSH_HAVE_CUDA
#define GK(name) op_gpu_##name
#else
#define GK(name) NULL
#endif

#define F32 "T=float"

typedef struct gpu_row {
  const char *op;
  rt_kernel_fn fn;
  const char *types;   /* rt_op_add_kernel's: the dtypes the kernel takes */
} gpu_row;

static const gpu_row rows[] = {
  /* sources, pass-through and variables */
  {"Const", GK(const), "dtype=float|double|bool|int32|int64"},
  {"Placeholder", GK(same), "dtype=float|double|bool|int32|int64"},
  {"Identity", GK(same), ""},
  {"StopGradient", GK(same), ""},
  {"NoOp", GK(same), ""},
  {"Reshape", GK(same), ""},
  {"ExpandDims", GK(same), ""},
  {"Squeeze", GK(same), ""},
  {"Shape", GK(same), ""},
  {"Size", GK(same), ""},
  {"Rank", GK(same), ""},
  {"VariableV2", GK(same), "dtype=float|double|bool|int32|int64"},
  {"IsVariableInitialized", GK(same), ""},
  {"Assign", GK(assign), "T=float|double|bool|int32|int64"},
  {"AssignAdd", GK(assign_add), F32},
  {"AssignSub", GK(assign_sub), F32},
  /* elementwise, with numpy broadcasting */
  {"Add", GK(add), F32},
  {"Sub", GK(sub), F32},
  {"Mul", GK(mul), F32},
  {"RealDiv", GK(div), F32},
  {"Div", GK(div), F32},
  {"Maximum", GK(maximum), F32},
  {"Minimum", GK(minimum), F32},
  {"Pow", GK(pow), F32},
  {"Equal", GK(equal), F32},
  {"NotEqual", GK(not_equal), F32},
  {"Greater", GK(greater), F32},
  {"GreaterEqual", GK(greater_equal), F32},
  {"Less", GK(less), F32},
  {"LessEqual", GK(less_equal), F32},
  {"Neg", GK(neg), F32},
  {"Square", GK(square), F32},
  {"Sqrt", GK(sqrt), F32},
  {"Exp", GK(exp), F32},
  {"Log", GK(log), F32},
  {"Abs", GK(abs), F32},
  {"Rsqrt", GK(rsqrt), F32},
  {"Sign", GK(sign), F32},
  {"Floor", GK(floor), F32},
  {"Ceil", GK(ceil), F32},
  {"Log1p", GK(log1p), F32},
  {"AddN", GK(addn), F32},
  {"Cast", GK(cast), "SrcT=float|double|bool|int32|int64;DstT=float|double|bool|int32|int64"},
  /* activations and their gradients */
  {"Relu", GK(relu), F32},
  {"Sigmoid", GK(sigmoid), F32},
  {"Tanh", GK(tanh), F32},
  {"Elu", GK(elu), F32},
  {"Softplus", GK(softplus), F32},
  {"ReluGrad", GK(relu_grad), F32},
  {"SigmoidGrad", GK(sigmoid_grad), F32},
  {"TanhGrad", GK(tanh_grad), F32},
  {"RsqrtGrad", GK(rsqrt_grad), F32},
  {"EluGrad", GK(elu_grad), F32},
  {"SoftplusGrad", GK(softplus_grad), F32},
  /* products (cuBLAS) */
  {"MatMul", GK(matmul), F32},
  {"BatchMatMul", GK(batch_matmul), F32},
  /* reductions and the gradient helpers that undo them */
  {"Sum", GK(sum), F32},
  {"Mean", GK(mean), F32},
  {"Max", GK(max), F32},
  {"Min", GK(min), F32},
  {"Prod", GK(prod), F32},
  {"L2Loss", GK(l2_loss), F32},
  {"_SumToShapeOf", GK(sum_to), F32},
  {"_ReduceGrad", GK(reduce_grad), F32},
  /* nn */
  {"BiasAdd", GK(bias_add), F32},
  {"BiasAddGrad", GK(bias_add_grad), F32},
  {"Softmax", GK(softmax), F32},
  {"LogSoftmax", GK(log_softmax), F32},
  {"SoftmaxCrossEntropyWithLogits", GK(xent), F32},
  {"SparseSoftmaxCrossEntropyWithLogits", GK(sparse_xent), F32 ";Tlabels=int32|int64"},
  /* fills */
  {"Fill", GK(fill), "T=float|double|bool|int32|int64"},
  {"ZerosLike", GK(zeros_like), "T=float|double|bool|int32|int64"},
  {"OnesLike", GK(ones_like), "T=float|double|bool|int32|int64"},
  /* random numbers: the CPU's Philox streams, uploaded */
  {"RandomStandardNormal", GK(host_then_upload), "dtype=float|double"},
  {"TruncatedNormal", GK(host_then_upload), "dtype=float|double"},
  {"RandomUniform", GK(host_then_upload), "dtype=float|double"},
  /* convolutions and pooling (cuDNN; NHWC; other cases run the CPU kernel on host copies) */
  {"Conv2D", GK(conv2d), F32},
  {"Conv2DBackpropInput", GK(conv2d_backprop_input), F32},
  {"Conv2DBackpropFilter", GK(conv2d_backprop_filter), F32},
  {"MaxPool", GK(max_pool), F32},
  {"MaxPoolGrad", GK(max_pool_grad), F32},
  {"AvgPool", GK(avg_pool), F32},
  {"AvgPoolGrad", GK(avg_pool_grad), F32},
  /* the optimizers */
  {"ApplyGradientDescent", GK(apply_gd), F32},
  {"ApplyMomentum", GK(apply_momentum), F32},
  {"ApplyAdagrad", GK(apply_adagrad), F32},
  {"ApplyAdam", GK(apply_adam), F32},
  {"ApplyRMSProp", GK(apply_rmsprop), F32},
};

void op_gpu_register(void) {
  for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
    if (rt_op_find(rows[i].op)) rt_op_add_kernel(rows[i].op, RT_DEV_GPU, rows[i].fn, rows[i].types);
}
