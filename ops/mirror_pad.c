/* tf.pad's REFLECT and SYMMETRIC modes, as TF 1.x builds them:
 *   MirrorPad(input, paddings; mode)       the input padded with its own mirror image
 *   MirrorPadGrad(input, paddings; mode)   the padded gradient folded back onto the input
 * Each is the other's gradient. REFLECT mirrors about the edge element (paddings below
 * the dimension's size), SYMMETRIC repeats it (paddings up to the size). CPU only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "ops/ops_int.h"

#define IN(i) (c->node->inputs[i])
#define DY (c->dy[0])

/* 1 for REFLECT, 0 for SYMMETRIC (TF's offset), -1 for anything else. */
static int mirror_offset(const rt_node *n) {
  const char *m = rt_node_string(n, "mode", "");
  return !strcmp(m, "REFLECT") ? 1 : !strcmp(m, "SYMMETRIC") ? 0 : -1;
}

/* The padded index o of a dimension of size n with `lo` before it, mapped to the input. */
static int64_t mirror_src(int64_t o, int64_t lo, int64_t n, int off) {
  int64_t i = o - lo;
  if (i < 0) return -i - 1 + off;
  if (i >= n) return 2 * n - 1 - off - i;
  return i;
}

/* Checks paddings against the input's shape `in` (the unpadded one), TF's messages. */
static int check_paddings(rt_kernel_ctx *c, const rt_shape *in, const rt_tensor *p, int off, int64_t *pv) {
  int nd = in->ndims;
  if (off < 0)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "mode must be either REFLECT or SYMMETRIC.");
  if (p->shape.ndims != 2 || p->shape.dims[0] != nd || p->shape.dims[1] != 2) {
    char a[160];
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "paddings must be a matrix with 2 columns: %s",
                           op_shape_tf(&p->shape, a, sizeof a));
  }
  for (int d = 0; d < nd; d++) {
    int64_t lo = rt_tensor_get_i64(p, 2 * d), hi = rt_tensor_get_i64(p, 2 * d + 1), n = in->dims[d];
    pv[2 * d] = lo, pv[2 * d + 1] = hi;
    if (lo < 0 || hi < 0)
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "paddings must be non-negative: %lld %lld", (long long)lo,
                             (long long)hi);
    if (off == 0 && (lo > n || hi > n))
      return rt_kernel_error(c, RT_INVALID_ARGUMENT,
                             "paddings must be no greater than the dimension size: %lld, %lld greater than %lld",
                             (long long)lo, (long long)hi, (long long)n);
    if (off == 1 && (lo >= n || hi >= n))
      return rt_kernel_error(c, RT_INVALID_ARGUMENT,
                             "paddings must be less than the dimension size: %lld, %lld not less than %lld",
                             (long long)lo, (long long)hi, (long long)n);
  }
  return RT_OK;
}

/* For each element of the padded shape `big` in order, the flat index of its source in
 * `small`: src[k]. */
static void mirror_map(const rt_shape *small, const rt_shape *big, const int64_t *pv, int off, int64_t *src) {
  int nd = small->ndims;
  int64_t idx[RT_MAX_DIMS] = {0}, total = rt_shape_numel(big);
  for (int64_t k = 0; k < total; k++) {
    int64_t f = 0;
    for (int d = 0; d < nd; d++) f = f * small->dims[d] + mirror_src(idx[d], pv[2 * d], small->dims[d], off);
    src[k] = f;
    for (int d = nd - 1; d >= 0 && ++idx[d] == big->dims[d]; d--) idx[d] = 0;
  }
}

static int mirror_pad_kernel(rt_kernel_ctx *c) {
  const rt_tensor *x = c->inputs[0];
  int off = mirror_offset(c->node);
  int64_t pv[2 * RT_MAX_DIMS];
  if (check_paddings(c, &x->shape, c->inputs[1], off, pv)) return c->st->code;
  if (rt_dtype_is_str(x->dtype))
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "MirrorPad of strings is not implemented in tfsh");
  rt_shape o = x->shape;
  for (int d = 0; d < o.ndims; d++) o.dims[d] += pv[2 * d] + pv[2 * d + 1];
  rt_tensor *y = rt_kernel_output(c, 0, x->dtype, &o);
  if (!y) return c->st->code;
  int64_t total = rt_shape_numel(&o);
  int64_t *src = xmalloc((size_t)(total ? total : 1) * sizeof *src);
  mirror_map(&x->shape, &o, pv, off, src);
  size_t es = rt_dtype_size(x->dtype);
  char *dst = rt_tensor_data(y);
  const char *from = rt_tensor_data(x);
  for (int64_t k = 0; k < total; k++) memcpy(dst + (size_t)k * es, from + (size_t)src[k] * es, es);
  free(src);
  return RT_OK;
}

#define FOLD(T)                                                        \
  do {                                                                 \
    T *o = rt_tensor_data(y);                                          \
    const T *g = rt_tensor_data(dy);                                   \
    for (int64_t k = 0; k < total; k++) o[src[k]] += g[k];             \
  } while (0)

static int mirror_pad_grad_kernel(rt_kernel_ctx *c) {
  const rt_tensor *dy = c->inputs[0], *p = c->inputs[1];
  int off = mirror_offset(c->node), nd = dy->shape.ndims;
  rt_shape in = dy->shape;
  if (p->shape.ndims == 2 && p->shape.dims[0] == nd && p->shape.dims[1] == 2)
    for (int d = 0; d < nd; d++) in.dims[d] -= rt_tensor_get_i64(p, 2 * d) + rt_tensor_get_i64(p, 2 * d + 1);
  for (int d = 0; d < nd; d++)
    if (in.dims[d] < 0)
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "paddings must be no greater than the dimension size: "
                             "%lld, %lld greater than %lld", (long long)rt_tensor_get_i64(p, 2 * d),
                             (long long)rt_tensor_get_i64(p, 2 * d + 1), (long long)dy->shape.dims[d]);
  int64_t pv[2 * RT_MAX_DIMS];
  if (check_paddings(c, &in, p, off, pv)) return c->st->code;
  rt_tensor *y = rt_kernel_output(c, 0, dy->dtype, &in);
  if (!y) return c->st->code;
  memset(rt_tensor_data(y), 0, rt_tensor_nbytes(y));
  int64_t total = rt_shape_numel(&dy->shape);
  int64_t *src = xmalloc((size_t)(total ? total : 1) * sizeof *src);
  mirror_map(&in, &dy->shape, pv, off, src);
  switch (dy->dtype) {
  case RT_FLOAT: FOLD(float); break;
  case RT_DOUBLE: FOLD(double); break;
  case RT_INT32: FOLD(int32_t); break;
  case RT_INT64: FOLD(int64_t); break;
  default:
    free(src);
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "MirrorPadGrad of %s is not implemented in tfsh",
                           op_tf_type(dy->dtype));
  }
  free(src);
  return RT_OK;
}

/* Output shape: input 0's grown (MirrorPad, sign 1) or shrunk (MirrorPadGrad, -1) by the
 * paddings when they are a known constant. */
static int mirror_shape(rt_shape_ctx *c, int sign) {
  const rt_shape *x = &c->in_shapes[0], *p = &c->in_shapes[1];
  int64_t pv[2 * RT_MAX_DIMS];
  int n;
  if (p->ndims >= 0 && p->ndims != 2) return op_rank_error(c, 2, p->ndims);
  if (x->ndims < 0 || !op_const_ints(c, 1, pv, 2 * RT_MAX_DIMS, &n) || n != 2 * x->ndims) {
    rt_shape u = {.ndims = x->ndims};
    for (int d = 0; d < u.ndims; d++) u.dims[d] = -1;
    c->out_shapes[0] = u;
    return RT_OK;
  }
  rt_shape o = *x;
  for (int d = 0; d < o.ndims; d++)
    if (o.dims[d] >= 0) o.dims[d] += sign * (pv[2 * d] + pv[2 * d + 1]);
  c->out_shapes[0] = o;
  return RT_OK;
}
static int mirror_pad_shape(rt_shape_ctx *c) { return mirror_shape(c, 1); }
static int mirror_pad_grad_shape(rt_shape_ctx *c) { return mirror_shape(c, -1); }

static void copy_mode(rt_node *n, const void *arg) {
  rt_node_set_string(n, "mode", rt_node_string(arg, "mode", ""));
}

/* Each op's gradient is the other op on dy with the same paddings and mode. */
static int mirror_grad(rt_grad_ctx *c, const char *op) {
  if (!DY) return RT_OK;
  const char *in[] = {DY, IN(1)};
  c->dx[0] = op_grad_node(c, op, op, 2, in, copy_mode, c->node);
  return c->st->code;
}
static int mirror_pad_grad(rt_grad_ctx *c) { return mirror_grad(c, "MirrorPadGrad"); }
static int mirror_pad_grad_grad(rt_grad_ctx *c) { return mirror_grad(c, "MirrorPad"); }

static const rt_op_def mirror_pad_ops[] = {
  {.name = "MirrorPad", .inputs = "input: T, paddings: Tpaddings", .outputs = "output: T",
   .attrs = "T: type, Tpaddings: {int32, int64} = int32, mode: string",
   .help = "Pads with the input's mirror image: mode REFLECT (about the edge) or SYMMETRIC (the edge repeated).",
   .shape = mirror_pad_shape, .kernel = {[RT_DEV_CPU] = mirror_pad_kernel}, .grad = mirror_pad_grad},
  {.name = "MirrorPadGrad", .inputs = "input: T, paddings: Tpaddings", .outputs = "output: T",
   .attrs = "T: type, Tpaddings: {int32, int64} = int32, mode: string",
   .help = "MirrorPad's gradient: the padded gradient summed back onto the input's positions.",
   .shape = mirror_pad_grad_shape, .kernel = {[RT_DEV_CPU] = mirror_pad_grad_kernel},
   .grad = mirror_pad_grad_grad},
};

void op_mirror_pad_register(void) { rt_op_register(mirror_pad_ops, OP_COUNT(mirror_pad_ops)); }
