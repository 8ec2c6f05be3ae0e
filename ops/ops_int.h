/* ops/ internals: what the op tables (ops/NAME.c) and the CPU kernels (ops/cpu/NAME.c) share.
 * Nothing outside ops/ includes this. */
#ifndef TFSH_OPS_INT_H
#define TFSH_OPS_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/graph.h"
#include "runtime/op.h"
#include "runtime/tensor.h"

#define OP_COUNT(a) ((int)(sizeof(a) / sizeof *(a)))

/* Each module registers its table. */
void op_const_register(void);
void op_math_register(void);
void op_nn_register(void);
void op_fused_bn_register(void);   /* ops/fused_bn.c: FusedBatchNorm{,V2,V3} and gradients */
void op_linalg_register(void);     /* ops/linalg.c: Qr, DiagPart */
void op_strings_register(void);    /* ops/strings.c: StringJoin, Substr, StringSplit, SparseToDense, ... */
void op_lookup_register(void);     /* ops/lookup.c: HashTableV2 and the lookup-table ops */
void op_image_register(void);      /* ops/image.c: ReverseV2, resizing, LRN, ReadFile, PNG */
void op_mirror_pad_register(void);   /* ops/mirror_pad.c: MirrorPad, MirrorPadGrad */
void op_space_register(void);      /* ops/space.c: SpaceToBatch(ND), BatchToSpace(ND), SpaceToDepth, DepthToSpace */
void op_depthwise_register(void);    /* ops/depthwise.c: DepthwiseConv2dNative and its backprops */
void op_ctc_register(void);          /* ops/ctc.c: CTCLoss, CTCGreedyDecoder, CTCBeamSearchDecoder, EditDistance */
void op_conv3d_register(void);       /* ops/conv3d.c: Conv3D, its backprops, MaxPool3D, AvgPool3D, gradients */
void op_pool_more_register(void);    /* ops/pool_more.c: MaxPoolWithArgmax, ExtractImagePatches, gradients */
void op_scan_register(void);       /* ops/scan.c: Cumsum, Cumprod, GatherNd, ScatterNd, Unique */
int op_unsorted_segment_sum_grad(rt_grad_ctx *c);   /* ops/scan.c */
void op_array_register(void);
void op_conv_register(void);
void op_random_register(void);
void op_train_register(void);
void op_state_register(void);   /* ops/state.c */
struct rt_resource;
/* ops/state.c: output 0 becomes a reference viewing variable r's value (no buffer while
 * uninitialized, then of dtype). */
int op_output_ref(rt_kernel_ctx *c, struct rt_resource *r, rt_dtype dtype);
/* ops/state.c: variable r (its mu held) takes v's value (in place when shape and dtype
 * stay); false when out of memory. */
bool op_store_value(struct rt_resource *r, const rt_tensor *v);
/* ops/resource_var.c: resource variables (VarHandleOp, ReadVariableOp, ...). */
void op_resource_var_register(void);
/* The resource the handle in input i names, on this kernel's device (created if create);
 * NULL when absent, or with the error set when the handle is bad or of another device.
 * *name (if given) gets the handle's resource name. */
struct rt_resource *op_resource_of(rt_kernel_ctx *c, int i, bool create, const char **name);
void op_sync_register(void);    /* ops/sync.c */
void op_queue_register(void);   /* ops/queue.c: TF1 queues */
void op_stack_register(void);          /* ops/stack.c: StackV2 and its family, ControlTrigger */
void op_tensor_array_register(void);   /* ops/tensor_array.c: TensorArrayV3 and its family */
void op_reader_register(void);
void op_dataset_register(void); /* ops/dataset.c: tf.data iterators */  /* ops/reader.c: readers, DecodeCSV, CountUpTo */
/* The next file name of the queue `handle` refers to (ops/queue.c, for the readers):
 * waits while it is empty, OutOfRange once closed and empty. *out is malloc'd. */
/* Wait on r->cv (r->mu held) for up to 50 ms (ops/queue.c): false once the step is
 * cancelled (its flag, or its poll). The blocking kernels' loop. */
struct rt_resource;
bool op_wait_a_bit(rt_kernel_ctx *c, struct rt_resource *r);
int op_queue_take_string(rt_kernel_ctx *c, rt_tensor *handle, char **out);
void op_io_register(void);      /* ops/io.c: checkpoints and summaries */
void op_imported_register(void);   /* ops/imported.c: ops of TF-written graphs */
int op_cpu_gather_v2(rt_kernel_ctx *c);
int op_cpu_where(rt_kernel_ctx *c);
int op_cpu_select_v2(rt_kernel_ctx *c);
int op_cpu_static_regex_full_match(rt_kernel_ctx *c);
int op_cpu_broadcast_gradient_args(rt_kernel_ctx *c);
void op_gpu_register(void);     /* ops/gpu/table.c: the GPU kernels' rows (after the others) */
void op_control_register(void); /* ops/control.c: Switch, Merge, Enter, Exit, ... */

/* ---- shapes (ops/shape.c) --------------------------------------------------------- */

/* "[2,3]", "[?,3]", "[]", "<unknown>" as TF's errors print shapes. */
char *op_shape_tf(const rt_shape *s, char *buf, size_t n);
/* numpy broadcasting of a and b (unknown dims allowed). Fails as TF1's shape functions do:
 * "Dimensions must be equal, but are 3 and 4 for 'add' (op: 'Add') with input shapes:
 * [2,3], [4]." */
int op_broadcast_shape(const rt_shape *a, const rt_shape *b, rt_shape *out, const rt_node *n,
                       rt_status *st);
/* Shape functions shared by many ops. */
int op_shape_unchanged(rt_shape_ctx *c);    /* output 0 = input 0 */
int op_shape_broadcast(rt_shape_ctx *c);    /* output 0 = broadcast(input 0, input 1) */
/* Read a Const input's values as int64 (axes, shapes); false when not a known constant. */
bool op_const_ints(const rt_shape_ctx *c, int i, int64_t *out, int max, int *n);
/* A list(int) attr's values and count (NULL and 0 when absent or of another kind). */
const int64_t *op_list_ints(const rt_node *n, const char *name, int *count);
/* Input i as a shape, as TF's MakeShapeFromShapeTensor: its values when constant, the
 * (partly known) shape of x when it is Shape(x), a Pack's constants and Shape(x)[k]s (-1
 * elsewhere), else false. */
bool op_shape_input(const rt_shape_ctx *c, int i, rt_shape *out);
/* TF's "Dimensions must be equal" error for a shape function. */
int op_dims_error(rt_shape_ctx *c, int64_t a, int64_t b);
/* TF's name for a dtype in messages: "float", "double", "int32", ... */
const char *op_tf_type(rt_dtype t);
/* A shape-function error as TF1 words it: the message, then " for 'name' (op: 'Op') with
 * input shapes: [2,3], [1]." and, when `tensors` (a bit per input) names Const inputs,
 * " and with computed input tensors: input[1] = <4 -1>." */
int op_shape_error(rt_shape_ctx *c, unsigned tensors, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "Shape must be rank 2 but is rank 1 for ..." */
int op_rank_error(rt_shape_ctx *c, int want, int got);

/* StridedSlice's spec made dense (TF's ValidateStridedSliceOp): per input dim, the first
 * index, the step and the count; and the output shape (new axes in, shrunk axes out).
 * Unknown input dims give unknown counts. Errors are TF1's words without a suffix. */
typedef struct op_slice_spec {
  int nd;                              /* input rank */
  int64_t begin[RT_MAX_DIMS], stride[RT_MAX_DIMS], size[RT_MAX_DIMS];
  rt_shape out;
} op_slice_spec;
int op_strided_spec(const rt_shape *in, int n, const int64_t *begin, const int64_t *end,
                    const int64_t *strides, const rt_node *node, op_slice_spec *sp,
                    rt_status *st);

/* ---- gradient building (ops/grad.c) ----------------------------------------------- */

/* Add node `op` named scope+base (made unique) with the given data inputs; returns the
 * name of its output 0 as a malloc'd string, or NULL with g->st set. Attributes are set by
 * the optional callback before the node is added. */
typedef void (*op_attr_fn)(rt_node *n, const void *arg);
char *op_grad_node(rt_grad_ctx *c, const char *op, const char *base, int n_in,
                   const char *const *in, op_attr_fn attrs, const void *arg);
/* Shorthands for one- and two-input nodes. */
char *op_g1(rt_grad_ctx *c, const char *op, const char *x);
char *op_g2(rt_grad_ctx *c, const char *op, const char *x, const char *y);
/* A scalar constant of the forward node's input dtype. */
char *op_gconst(rt_grad_ctx *c, rt_dtype t, double v);
/* Sum `dy` down to the shape of tensor `like` (undoes broadcasting). */
char *op_gsum_to(rt_grad_ctx *c, const char *dy, const char *like);
/* dtype of the forward node's data input i. */
rt_dtype op_gin_type(const rt_grad_ctx *c, int i);
/* Shape and dtype of any tensor of the graph ("x", "x:1"). */
rt_shape op_gshape(const rt_grad_ctx *c, const char *tensor);
rt_dtype op_gtype(const rt_grad_ctx *c, const char *tensor);
/* An int32 vector constant. */
char *op_gints(rt_grad_ctx *c, int n, const int64_t *v);
/* The shape of tensor x as an int32 vector: a constant when fully known, else Shape(x). */
char *op_gshape_vec(rt_grad_ctx *c, const char *x);
/* The attrs of `from` named in the NULL-ended list `names` copied onto n (those it has). */
void op_copy_attrs(rt_node *n, const rt_node *from, const char *const *names);
/* A convolution's three ops, each linear in its two tensors and each one's gradient made
 * of the other two, as TF's: fwd(x, f), bin(sizes of x, f, dy), bfil(x, sizes of f, dy),
 * with attrs copied from the node by `attrs`. op_conv_grads builds the gradient of the
 * node c has, which is `which` of them (0 fwd, 1 bin, 2 bfil). */
typedef struct op_conv_ops {
  const char *fwd, *bin, *bfil;
  op_attr_fn attrs;
} op_conv_ops;
int op_conv_grads(rt_grad_ctx *c, const op_conv_ops *ops, int which);

/* out[k] = parts[0][k] + parts[1][k] + ... in tile order: per-tile partial sums (rt_sum_tiles)
 * added so that the bits do not follow the threads. float when f32, else double. */
void op_add_partials(bool f32, const void *parts, int64_t tiles, int64_t len, void *out);
/* For ops TF1 declares not differentiable: no gradient flows to any input. */
int op_no_grad(rt_grad_ctx *c);

/* ---- CPU kernels (ops/cpu/) ------------------------------------------------------- */


int op_cpu_const(rt_kernel_ctx *c);
int op_cpu_placeholder(rt_kernel_ctx *c);
int op_cpu_identity(rt_kernel_ctx *c);
int op_cpu_noop(rt_kernel_ctx *c);

/* elementwise (ops/cpu/elementwise.c) */
int op_cpu_add(rt_kernel_ctx *c);
int op_cpu_select(rt_kernel_ctx *c);
int op_cpu_sub(rt_kernel_ctx *c);
int op_cpu_mul(rt_kernel_ctx *c);
int op_cpu_div(rt_kernel_ctx *c);
int op_cpu_maximum(rt_kernel_ctx *c);
int op_cpu_minimum(rt_kernel_ctx *c);
int op_cpu_pow(rt_kernel_ctx *c);
int op_cpu_equal(rt_kernel_ctx *c);
int op_cpu_greater(rt_kernel_ctx *c);
int op_cpu_relu_grad(rt_kernel_ctx *c);
int op_cpu_sigmoid_grad(rt_kernel_ctx *c);
int op_cpu_tanh_grad(rt_kernel_ctx *c);
int op_cpu_neg(rt_kernel_ctx *c);
int op_cpu_square(rt_kernel_ctx *c);
int op_cpu_sqrt(rt_kernel_ctx *c);
int op_cpu_floor(rt_kernel_ctx *c);
int op_cpu_round(rt_kernel_ctx *c);
int op_cpu_sin(rt_kernel_ctx *c);
int op_cpu_cos(rt_kernel_ctx *c);
int op_cpu_tan(rt_kernel_ctx *c);
int op_cpu_asin(rt_kernel_ctx *c);
int op_cpu_acos(rt_kernel_ctx *c);
int op_cpu_atan(rt_kernel_ctx *c);
int op_cpu_sinh(rt_kernel_ctx *c);
int op_cpu_cosh(rt_kernel_ctx *c);
int op_cpu_expm1(rt_kernel_ctx *c);
int op_cpu_erf(rt_kernel_ctx *c);
int op_cpu_erfc(rt_kernel_ctx *c);
int op_cpu_atan2(rt_kernel_ctx *c);
int op_cpu_div_no_nan(rt_kernel_ctx *c);
int op_cpu_ceil(rt_kernel_ctx *c);
int op_cpu_log1p(rt_kernel_ctx *c);
int op_cpu_exp(rt_kernel_ctx *c);
int op_cpu_log(rt_kernel_ctx *c);
int op_cpu_relu(rt_kernel_ctx *c);
int op_cpu_sigmoid(rt_kernel_ctx *c);
int op_cpu_tanh(rt_kernel_ctx *c);
int op_cpu_cast(rt_kernel_ctx *c);
int op_cpu_addn(rt_kernel_ctx *c);
int op_cpu_not_equal(rt_kernel_ctx *c);
int op_cpu_less(rt_kernel_ctx *c);
int op_cpu_less_equal(rt_kernel_ctx *c);
int op_cpu_greater_equal(rt_kernel_ctx *c);
int op_cpu_logical_and(rt_kernel_ctx *c);
int op_cpu_logical_or(rt_kernel_ctx *c);
int op_cpu_logical_not(rt_kernel_ctx *c);
int op_cpu_floor_div(rt_kernel_ctx *c);
int op_cpu_floor_mod(rt_kernel_ctx *c);
int op_cpu_relu6_grad(rt_kernel_ctx *c);
int op_cpu_elu_grad(rt_kernel_ctx *c);
int op_cpu_softplus_grad(rt_kernel_ctx *c);
int op_cpu_rsqrt_grad(rt_kernel_ctx *c);
int op_cpu_abs(rt_kernel_ctx *c);
int op_cpu_rsqrt(rt_kernel_ctx *c);
int op_cpu_reciprocal(rt_kernel_ctx *c);
int op_cpu_sign(rt_kernel_ctx *c);
int op_cpu_relu6(rt_kernel_ctx *c);
int op_cpu_elu(rt_kernel_ctx *c);
int op_cpu_softplus(rt_kernel_ctx *c);

/* ops/cpu/matmul.c */
/* MatMul's operands checked (TF1's words) and its sizes: (m x k) times (k x n). */
int op_matmul_dims(rt_kernel_ctx *c, bool ta, bool tb, int64_t *m, int64_t *k, int64_t *n);
int op_cpu_matmul(rt_kernel_ctx *c);
int op_cpu_batch_matmul(rt_kernel_ctx *c);

/* ops/cpu/nn.c */
int op_cpu_bias_add(rt_kernel_ctx *c);
int op_cpu_bias_add_grad(rt_kernel_ctx *c);
int op_cpu_softmax(rt_kernel_ctx *c);
int op_cpu_log_softmax(rt_kernel_ctx *c);
/* The cross-entropies' logits and labels checked (TF1's words). */
int op_xent_shapes(rt_kernel_ctx *c, bool sparse);
int op_cpu_xent(rt_kernel_ctx *c);
int op_cpu_sparse_xent(rt_kernel_ctx *c);
int op_cpu_l2_loss(rt_kernel_ctx *c);
int op_cpu_check_numerics(rt_kernel_ctx *c);

/* reductions and their gradient helpers (ops/cpu/reduce.c) */
int op_cpu_sum(rt_kernel_ctx *c);
int op_cpu_mean(rt_kernel_ctx *c);
int op_cpu_max(rt_kernel_ctx *c);
int op_cpu_argmax(rt_kernel_ctx *c);
int op_cpu_min(rt_kernel_ctx *c);
int op_cpu_prod(rt_kernel_ctx *c);
int op_cpu_argmin(rt_kernel_ctx *c);
int op_cpu_sum_to(rt_kernel_ctx *c);
int op_cpu_reduce_grad(rt_kernel_ctx *c);

/* array (ops/cpu/array.c) */
int op_cpu_reshape(rt_kernel_ctx *c);
int op_cpu_expand_dims(rt_kernel_ctx *c);
int op_cpu_squeeze(rt_kernel_ctx *c);
int op_cpu_shape(rt_kernel_ctx *c);
int op_cpu_size(rt_kernel_ctx *c);
int op_cpu_rank(rt_kernel_ctx *c);
int op_cpu_fill(rt_kernel_ctx *c);
int op_cpu_zeros_like(rt_kernel_ctx *c);
int op_cpu_ones_like(rt_kernel_ctx *c);
int op_cpu_transpose(rt_kernel_ctx *c);
int op_cpu_invert_permutation(rt_kernel_ctx *c);
int op_cpu_concat(rt_kernel_ctx *c);
int op_cpu_concat_offset(rt_kernel_ctx *c);
int op_cpu_split(rt_kernel_ctx *c);
int op_cpu_pack(rt_kernel_ctx *c);
int op_cpu_unpack(rt_kernel_ctx *c);
int op_cpu_slice(rt_kernel_ctx *c);
int op_cpu_strided_slice(rt_kernel_ctx *c);
int op_cpu_strided_slice_grad(rt_kernel_ctx *c);
int op_cpu_pad(rt_kernel_ctx *c);
int op_cpu_tile(rt_kernel_ctx *c);
int op_cpu_gather(rt_kernel_ctx *c);
int op_cpu_unsorted_segment_sum(rt_kernel_ctx *c);
int op_cpu_one_hot(rt_kernel_ctx *c);
int op_cpu_dynamic_stitch(rt_kernel_ctx *c);
int op_cpu_broadcast_to(rt_kernel_ctx *c);
int op_cpu_range(rt_kernel_ctx *c);

/* ---- convolution and pooling (ops/conv.c, ops/cpu/conv.c) ------------------------- */

/* One spatial dimension of a window op, as TF's GetWindowedOutputSize: VALID gives
 * ceil((in - k + 1) / s) and no padding, SAME ceil(in / s) with the padding needed split
 * so the smaller half is before. False when VALID and k > in (no output). */
bool op_window_dim(int64_t in, int64_t k, int64_t s, bool same, int64_t *out, int64_t *pad_before);

int op_cpu_conv2d(rt_kernel_ctx *c);
int op_cpu_fused_conv2d(rt_kernel_ctx *c);
int op_cpu_fused_conv2d_argmax(rt_kernel_ctx *c);
int op_cpu_conv2d_backprop_input(rt_kernel_ctx *c);
int op_cpu_conv2d_backprop_filter(rt_kernel_ctx *c);
int op_cpu_max_pool(rt_kernel_ctx *c);
int op_cpu_fused_max_pool_grad(rt_kernel_ctx *c);
int op_cpu_fused_max_pool_grad_argmax(rt_kernel_ctx *c);
int op_cpu_fused_conv2d_backprop_filter_argmax(rt_kernel_ctx *c);
/* The direct filter gradient runs a kh x kw x ic -> oc first layer here (remap's question). */
bool op_cpu_filter_argmax_fast(int64_t kh, int64_t kw, int64_t ic, int64_t oc);
int op_cpu_max_pool_grad(rt_kernel_ctx *c);
int op_cpu_max_pool_grad_grad(rt_kernel_ctx *c);
int op_cpu_avg_pool(rt_kernel_ctx *c);
int op_cpu_avg_pool_grad(rt_kernel_ctx *c);
/* The SIMD MaxPoolGrad's 2x2 windows use in float, for tests: 2 AVX-512, 1 AVX2, 0 plain C,
 * -1 the CPU's best; never more than the CPU has. Returns the level now in use. */
int op_cpu_pool_simd(int level);
/* Off: first layers' direct Conv2D on its AVX2 kernel even where AVX-512 is there (tests). */
void op_cpu_direct_conv_avx512(bool on);

/* ---- random (ops/random.c, ops/cpu/random.c) -------------------------------------- */

/* Philox4x32-10 (Salmon et al. 2011, as TF's PhiloxRandom): a 64-bit key and a 128-bit
 * counter; each block gives four 32-bit values. */
typedef struct op_philox {
  uint32_t key[2];
  uint32_t ctr[4];
} op_philox;
/* TF's seeding: key = seed, counter high half = seed2; both 0 means fresh seeds from
 * getrandom(). */
void op_philox_seed(op_philox *p, int64_t seed, int64_t seed2);
/* The block at counter + skip (p is unchanged). */
void op_philox_block(const op_philox *p, uint64_t skip, uint32_t out[4]);
/* Blocks skip .. skip + n - 1, four words each, into out: op_philox_block's, lanes at once. */
void op_philox_blocks(const op_philox *p, uint64_t skip, int64_t n, uint32_t *out);
void op_philox_skip(op_philox *p, uint64_t n);

int op_cpu_random_normal(rt_kernel_ctx *c);
int op_cpu_truncated_normal(rt_kernel_ctx *c);
int op_cpu_random_uniform(rt_kernel_ctx *c);
int op_cpu_random_uniform_int(rt_kernel_ctx *c);
int op_cpu_random_shuffle(rt_kernel_ctx *c);
int op_cpu_log_uniform_sampler(rt_kernel_ctx *c);
int op_cpu_uniform_sampler(rt_kernel_ctx *c);
int op_cpu_accidental_hits(rt_kernel_ctx *c);

/* Loops the baseline x86-64 build vectorizes 4 floats wide only: compiled again for
 * AVX-512 F and AVX2 and picked by the CPU's features when the binary loads (ifunc;
 * "arch=" clones would test the CPU model, which newer CPUs fail). Neither clone has FMA,
 * so no multiply-add is fused and the bits stay the baseline's. Not under
 * ThreadSanitizer: the resolver would run, instrumented, before TSan's runtime is up (a
 * crash at load). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__SANITIZE_THREAD__)
#define OP_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define OP_CLONES
#endif

#endif
