/* Array kernels. Most of them move elements without looking at them, so they work on bytes
 * (any fixed-size dtype): copy_nd copies an n-d block between two strided layouts, a row
 * at a time, and Transpose, Slice, StridedSlice, Pad, Tile, Concat, Split, Pack and Unpack
 * are each one or a few calls of it. Reshape, ExpandDims and Squeeze share their input's
 * buffer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/ops_int.h"

enum { MAXD = 2 * RT_MAX_DIMS };

/* dst[sum idx*ds] = src[sum idx*ss] over dims (strides in elements of es bytes). */
static void copy_nd(char *dst, const int64_t *ds, const char *src, const int64_t *ss,
                    const int64_t *dims, int nd, size_t es) {
  int64_t total = 1;
  for (int d = 0; d < nd; d++) total *= dims[d];
  if (total == 0) return;
  if (nd == 0) {
    memcpy(dst, src, es);
    return;
  }
  int64_t row = dims[nd - 1], rows = total / row, dr = ds[nd - 1], sr = ss[nd - 1];
  int64_t idx[MAXD] = {0}, od = 0, os = 0;
  for (int64_t r = 0; r < rows; r++) {
    char *dp = dst + od * (int64_t)es;
    const char *sp = src + os * (int64_t)es;
    if (dr == 1 && sr == 1) memcpy(dp, sp, (size_t)row * es);
    else if (es == 4)
      for (int64_t i = 0; i < row; i++) ((uint32_t *)dp)[i * dr] = ((const uint32_t *)sp)[i * sr];
    else if (es == 8)
      for (int64_t i = 0; i < row; i++) ((uint64_t *)dp)[i * dr] = ((const uint64_t *)sp)[i * sr];
    else
      for (int64_t i = 0; i < row; i++) memcpy(dp + i * dr * (int64_t)es, sp + i * sr * (int64_t)es, es);
    for (int d = nd - 2; d >= 0; d--) {
      od += ds[d], os += ss[d];
      if (++idx[d] < dims[d]) break;
      od -= ds[d] * dims[d], os -= ss[d] * dims[d];
      idx[d] = 0;
    }
  }
}

/* Row-major strides of dims. */
static void strides_of(const int64_t *dims, int nd, int64_t *st) {
  int64_t s = 1;
  for (int d = nd - 1; d >= 0; d--) st[d] = s, s *= dims[d];
}

/* n copies of the es-byte element v. */
static void fill_bytes(void *dst, const void *v, size_t es, int64_t n) {
  size_t z = 0;
  while (z < es && !((const char *)v)[z]) z++;
  if (z == es) {   /* zeros (ZerosLike, the gradients' fills): libc's widest stores */
    memset(dst, 0, (size_t)n * es);
  } else if (es == 4) {
    uint32_t x;
    memcpy(&x, v, 4);
    for (int64_t i = 0; i < n; i++) ((uint32_t *)dst)[i] = x;
  } else if (es == 8) {
    uint64_t x;
    memcpy(&x, v, 8);
    for (int64_t i = 0; i < n; i++) ((uint64_t *)dst)[i] = x;
  } else {
    for (int64_t i = 0; i < n; i++) memcpy((char *)dst + i * (int64_t)es, v, es);
  }
}

/* Kernels that copy bytes cannot copy strings (their elements own memory). */
static int bytes_only(rt_kernel_ctx *c, rt_dtype t) {
  if (t == RT_STRING)
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "%s of string tensors is not supported on CPU",
                           c->node->op);
  return RT_OK;
}

/* An int vector input as int64 values; false (with the error set) if not a short vector. */
static bool int_vector(rt_kernel_ctx *c, int i, int64_t *v, int max, int *n, const char *what) {
  const rt_tensor *t = c->inputs[i];
  int64_t k = rt_tensor_numel(t);
  if (t->shape.ndims > 1 || k > max) {
    char s[160];
    rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s must be a vector, got shape %s", what,
                    op_shape_tf(&t->shape, s, sizeof s));
    return false;
  }
  for (int64_t j = 0; j < k; j++) v[j] = rt_tensor_get_i64(t, j);
  *n = (int)k;
  return true;
}

/* An output viewing input 0's buffer with a new shape. */
static int view_output(rt_kernel_ctx *c, const rt_shape *s) {
  rt_tensor *x = c->inputs[0];
  rt_tensor *y = rt_tensor_wrap(x->dtype, s, x->buf);
  if (!y) return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  rt_tensor_unref(c->outputs[0]);
  c->outputs[0] = y;
  return RT_OK;
}

/* ---- shapes ------------------------------------------------------------------------- */

int op_cpu_reshape(rt_kernel_ctx *c) {
  int64_t v[RT_MAX_DIMS], in = rt_tensor_numel(c->inputs[0]), known = 1;
  int n, unk = -1;
  if (!int_vector(c, 1, v, RT_MAX_DIMS, &n, "shape")) return c->st->code;
  for (int d = 0; d < n; d++) {
    if (v[d] == -1 && unk < 0) unk = d;
    else if (v[d] < 0)
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Only one input size may be -1, not both "
                                                     "%d and %d", unk, d);
    else known *= v[d];
  }
  if (unk >= 0 && known > 0 && in % known == 0) v[unk] = in / known;
  if ((unk < 0 && known != in) || (unk >= 0 && (known == 0 || in % known)))
    return rt_kernel_error(c, RT_INVALID_ARGUMENT,
                           "Input to reshape is a tensor with %lld values, but the requested "
                           "shape %s %lld", (long long)in,
                           unk >= 0 ? "requires a multiple of" : "has", (long long)known);
  rt_shape s = rt_shape_make(n, v);
  return view_output(c, &s);
}

int op_cpu_expand_dims(rt_kernel_ctx *c) {
  const rt_shape *x = &c->inputs[0]->shape;
  int64_t dim = rt_tensor_get_i64(c->inputs[1], 0);
  if (rt_tensor_numel(c->inputs[1]) != 1 || dim < -1 - x->ndims || dim > x->ndims ||
      x->ndims >= RT_MAX_DIMS)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT,
                           "Tried to expand dim index %lld for tensor with %d dimensions.",
                           (long long)dim, x->ndims);
  if (dim < 0) dim += x->ndims + 1;
  rt_shape o = {.ndims = x->ndims + 1};
  for (int d = 0, k = 0; d < o.ndims; d++) o.dims[d] = d == dim ? 1 : x->dims[k++];
  return view_output(c, &o);
}

int op_cpu_squeeze(rt_kernel_ctx *c) {
  const rt_shape *x = &c->inputs[0]->shape;
  const rt_attr_value *a = rt_node_attr(c->node, "squeeze_dims");
  int na = a && a->kind == RT_ATTR_LIST_INT ? a->list.n : 0;
  bool sq[RT_MAX_DIMS] = {0};
  for (int i = 0; i < na; i++) {
    int64_t d = ((const int64_t *)a->list.v)[i];
    d = d < 0 ? d + x->ndims : d;
    if (d < 0 || d >= x->ndims || x->dims[d] != 1)
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Can not squeeze dim[%lld], expected a "
                             "dimension of 1, got %lld", (long long)d,
                             (long long)(d >= 0 && d < x->ndims ? x->dims[d] : -1));
    sq[d] = true;
  }
  rt_shape o = {.ndims = 0};
  for (int d = 0; d < x->ndims; d++)
    if (!(na ? sq[d] : x->dims[d] == 1)) o.dims[o.ndims++] = x->dims[d];
  return view_output(c, &o);
}

/* An int32 or int64 output of n values. */
static int int_output(rt_kernel_ctx *c, int i, rt_dtype t, const rt_shape *s, const int64_t *v) {
  rt_tensor *y = rt_kernel_output(c, i, t, s);
  if (!y) return c->st->code;
  for (int64_t j = 0; j < rt_shape_numel(s); j++)
    if (t == RT_INT32) ((int32_t *)rt_tensor_data(y))[j] = (int32_t)v[j];
    else ((int64_t *)rt_tensor_data(y))[j] = v[j];
  return RT_OK;
}

int op_cpu_shape(rt_kernel_ctx *c) {
  const rt_shape *x = &c->inputs[0]->shape;
  rt_shape s = rt_shape_make(1, (int64_t[]){x->ndims});
  return int_output(c, 0, rt_node_type(c->node, "out_type", RT_INT32), &s, x->dims);
}

int op_cpu_size(rt_kernel_ctx *c) {
  rt_shape s = rt_shape_scalar();
  int64_t n = rt_tensor_numel(c->inputs[0]);
  return int_output(c, 0, rt_node_type(c->node, "out_type", RT_INT32), &s, &n);
}

int op_cpu_rank(rt_kernel_ctx *c) {
  rt_shape s = rt_shape_scalar();
  int64_t r = c->inputs[0]->shape.ndims;
  return int_output(c, 0, RT_INT32, &s, &r);
}

/* ---- filling ------------------------------------------------------------------------ */

int op_cpu_fill(rt_kernel_ctx *c) {
  const rt_tensor *v = c->inputs[1];
  int64_t dims[RT_MAX_DIMS];
  int n;
  if (!int_vector(c, 0, dims, RT_MAX_DIMS, &n, "dims")) return c->st->code;
  if (rt_tensor_numel(v) != 1 || v->shape.ndims != 0) {
    char s[160];
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "value must be a scalar, got shape %s",
                           op_shape_tf(&v->shape, s, sizeof s));
  }
  for (int d = 0; d < n; d++)
    if (dims[d] < 0)
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Dimension %lld must be >= 0",
                             (long long)dims[d]);
  if (bytes_only(c, v->dtype)) return c->st->code;
  rt_shape s = rt_shape_make(n, dims);
  rt_tensor *y = rt_kernel_output(c, 0, v->dtype, &s);
  if (!y) return c->st->code;
  fill_bytes(rt_tensor_data(y), rt_tensor_data(v), rt_dtype_size(v->dtype), rt_shape_numel(&s));
  return RT_OK;
}

static int fill_like(rt_kernel_ctx *c, bool one) {
  const rt_tensor *x = c->inputs[0];
  if (bytes_only(c, x->dtype)) return c->st->code;
  rt_tensor *y = rt_kernel_output(c, 0, x->dtype, &x->shape);
  if (!y) return c->st->code;
  union { float f; double d; int32_t i; int64_t l; bool b; } v = {0};
  if (one) {
    switch (x->dtype) {
    case RT_FLOAT: v.f = 1; break;
    case RT_DOUBLE: v.d = 1; break;
    case RT_INT32: v.i = 1; break;
    case RT_INT64: v.l = 1; break;
    default: v.b = true; break;
    }
  }
  fill_bytes(rt_tensor_data(y), &v, rt_dtype_size(x->dtype), rt_tensor_numel(x));
  return RT_OK;
}

int op_cpu_zeros_like(rt_kernel_ctx *c) { return fill_like(c, false); }

/* Select(condition, t, e): t where condition, else e. condition has t's shape, or is a
 * scalar, or a vector over t's first dimension (whole rows chosen), as TF1's Select. */
int op_cpu_select(rt_kernel_ctx *c) {
  const rt_tensor *cond = c->inputs[0], *t = c->inputs[1], *e = c->inputs[2];
  if (!rt_shape_equal(&t->shape, &e->shape))
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "'then' and 'else' must have the same size.  but "
                           "received: %lld vs. %lld", (long long)rt_tensor_numel(t), (long long)rt_tensor_numel(e));
  int64_t n = rt_tensor_numel(t), nc = rt_tensor_numel(cond), block;
  if (rt_shape_equal(&cond->shape, &t->shape))
    block = 1;
  else if (cond->shape.ndims == 0)
    block = n;
  else if (cond->shape.ndims == 1 && t->shape.ndims >= 1 && cond->shape.dims[0] == t->shape.dims[0])
    block = t->shape.dims[0] ? n / t->shape.dims[0] : 0;
  else
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "condition must be a scalar, a vector over the first "
                           "dimension of 'then', or the shape of 'then'; got %lld elements for %lld",
                           (long long)nc, (long long)n);
  /* over t or e, whichever leaves fewer blocks to copy (static_rnn's sequence_length
   * Selects keep half their rows either way) */
  const bool *cv = rt_tensor_data(cond);
  int64_t taken = 0;
  for (int64_t k = 0; block && k < n / block; k++) taken += cv[k];
  uint64_t over = 2 * taken >= (block ? n / block : 0) ? 2 : 4;
  rt_tensor *y = rt_kernel_output_from(c, 0, c->forward & over ? over : 6, t->dtype, &t->shape);
  if (!y) return c->st->code;
  if (t->dtype == RT_STRING) {   /* element by element: each string owns its bytes */
    for (int64_t i = 0; block && i < n; i++) {
      const rt_str *x = (const rt_str *)rt_tensor_data(cv[i / block] ? t : e) + i;
      if (rt_tensor_set_str(y, i, x->ptr, x->len)) return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
    }
    return RT_OK;
  }
  size_t es = rt_dtype_size(t->dtype);
  const char *tv = rt_tensor_data(t), *ev = rt_tensor_data(e);
  char *yv = rt_tensor_data(y);
  for (int64_t k = 0; block && k < n / block; k++)
    if ((cv[k] ? tv : ev) != yv)   /* a block of the forwarded input stays where it is */
      memcpy(yv + k * block * es, (cv[k] ? tv : ev) + k * block * es, (size_t)block * es);
  return RT_OK;
}
int op_cpu_ones_like(rt_kernel_ctx *c) { return fill_like(c, true); }

/* SelectV2: numpy broadcasting of condition, t and e (the shape function checked them).
 * Each input is walked with stride 0 along the dimensions it broadcasts. */
int op_cpu_select_v2(rt_kernel_ctx *c) {
  const rt_tensor *in[3] = {c->inputs[0], c->inputs[1], c->inputs[2]};
  rt_shape s = {.ndims = 0};
  for (int k = 0; k < 3; k++)
    if (in[k]->shape.ndims > s.ndims) s.ndims = in[k]->shape.ndims;
  int64_t stride[3][RT_MAX_DIMS];
  for (int d = 0; d < s.ndims; d++) s.dims[d] = 1;
  for (int k = 0; k < 3; k++) {
    int off = s.ndims - in[k]->shape.ndims;
    for (int d = 0; d < in[k]->shape.ndims; d++) {
      int64_t v = in[k]->shape.dims[d];
      if (v != 1 && s.dims[off + d] != 1 && s.dims[off + d] != v)
        return rt_kernel_error(c, RT_INVALID_ARGUMENT, "condition, then and else do not broadcast");
      if (v != 1) s.dims[off + d] = v;
    }
  }
  for (int k = 0; k < 3; k++) {
    int off = s.ndims - in[k]->shape.ndims;
    int64_t acc = 1;
    for (int d = s.ndims - 1; d >= 0; d--) {
      int64_t v = d >= off ? in[k]->shape.dims[d - off] : 1;
      stride[k][d] = v == 1 ? 0 : acc;
      acc *= v;
    }
  }
  if (in[1]->dtype == RT_STRING)
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "SelectV2 of strings is not in tfsh");
  rt_tensor *y = rt_kernel_output(c, 0, in[1]->dtype, &s);
  if (!y) return c->st->code;
  int64_t n = rt_tensor_numel(y), idx[RT_MAX_DIMS] = {0}, at[3] = {0, 0, 0};
  size_t es = rt_dtype_size(in[1]->dtype);
  const bool *cv = rt_tensor_data(in[0]);
  const char *tv = rt_tensor_data(in[1]), *ev = rt_tensor_data(in[2]);
  char *yv = rt_tensor_data(y);
  for (int64_t i = 0; i < n; i++) {
    memcpy(yv + (size_t)i * es, cv[at[0]] ? tv + (size_t)at[1] * es : ev + (size_t)at[2] * es, es);
    for (int d = s.ndims - 1; d >= 0; d--) {   /* the next index, odometer style */
      for (int k = 0; k < 3; k++) at[k] += stride[k][d];
      if (++idx[d] < s.dims[d]) break;
      for (int k = 0; k < 3; k++) at[k] -= stride[k][d] * s.dims[d];
      idx[d] = 0;
    }
  }
  return RT_OK;
}

/* ---- permuting ---------------------------------------------------------------------- */

int op_cpu_transpose(rt_kernel_ctx *c) {
  const rt_tensor *x = c->inputs[0];
  int nd = x->shape.ndims, n;
  int64_t perm[RT_MAX_DIMS], xs[RT_MAX_DIMS], ss[RT_MAX_DIMS], ds[RT_MAX_DIMS];
  if (!int_vector(c, 1, perm, RT_MAX_DIMS, &n, "perm")) return c->st->code;
  if (n != nd)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "transpose expects a vector of size %d. But "
                           "input(1) is a vector of size %d", nd, n);
  bool seen[RT_MAX_DIMS] = {0};
  rt_shape o = {.ndims = nd};
  strides_of(x->shape.dims, nd, xs);
  for (int d = 0; d < nd; d++) {
    if (perm[d] < 0 || perm[d] >= nd)
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%lld is out of range [0 .. %d)",
                             (long long)perm[d], nd);
    if (seen[perm[d]])
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%lld is missing from {...}.",
                             (long long)perm[d]);
    seen[perm[d]] = true;
    o.dims[d] = x->shape.dims[perm[d]];
    ss[d] = xs[perm[d]];
  }
  if (bytes_only(c, x->dtype)) return c->st->code;
  rt_tensor *y = rt_kernel_output(c, 0, x->dtype, &o);
  if (!y) return c->st->code;
  strides_of(o.dims, nd, ds);
  copy_nd(rt_tensor_data(y), ds, rt_tensor_data(x), ss, o.dims, nd, rt_dtype_size(x->dtype));
  return RT_OK;
}

int op_cpu_invert_permutation(rt_kernel_ctx *c) {
  const rt_tensor *x = c->inputs[0];
  int64_t n = rt_tensor_numel(x);
  if (x->shape.ndims != 1)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "invert_permutation expects a 1D vector.");
  int64_t *v = calloc((size_t)n + 1, sizeof *v);
  bool *seen = calloc((size_t)n + 1, sizeof *seen);
  int rc = !v || !seen ? rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory") : RT_OK;
  for (int64_t i = 0; i < n && !rc; i++) {
    int64_t p = rt_tensor_get_i64(x, i);
    if (p < 0 || p >= n)
      rc = rt_kernel_error(c, RT_INVALID_ARGUMENT, "%lld is not between 0 and %lld",
                           (long long)p, (long long)n);
    else if (seen[p])
      rc = rt_kernel_error(c, RT_INVALID_ARGUMENT, "%lld is duplicated in the input.", (long long)p);
    else
      seen[p] = true, v[p] = i;
  }
  if (!rc) rc = int_output(c, 0, x->dtype, &x->shape, v);
  free(v);
  free(seen);
  return rc;
}

/* ---- joining and splitting ---------------------------------------------------------- */

/* outer x (n * inner) blocks: the layout of one input in a join along an axis. */
typedef struct { int64_t outer, inner; } blocks;

static blocks blocks_at(const rt_shape *s, int axis) {
  blocks b = {1, 1};
  for (int d = 0; d < s->ndims; d++)
    if (d < axis) b.outer *= s->dims[d];
    else if (d > axis) b.inner *= s->dims[d];
  return b;
}

/* Copy part k of a join: `len` rows of the axis starting at `off`, out of `total`. */
static void join_part(char *whole, const char *part, blocks b, int64_t off, int64_t len,
                      int64_t total, size_t es, bool to_whole) {
  int64_t dims[2] = {b.outer, len * b.inner}, ws[2] = {total * b.inner, 1}, ps[2] = {len * b.inner, 1};
  char *w = whole + off * b.inner * (int64_t)es;
  if (to_whole) copy_nd(w, ws, part, ps, dims, 2, es);
  else copy_nd((char *)part, ps, w, ws, dims, 2, es);
}

static int axis_arg(rt_kernel_ctx *c, int64_t axis, int nd, int64_t *out) {
  if (axis < -nd || axis >= nd)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Expected axis in the range [%d, %d), but "
                           "got %lld", -nd, nd, (long long)axis);
  *out = axis < 0 ? axis + nd : axis;
  return RT_OK;
}

int op_cpu_concat(rt_kernel_ctx *c) {
  int n = c->n_inputs - 1;
  const rt_tensor *x0 = c->inputs[0];
  int64_t ax = 0;
  if (axis_arg(c, rt_tensor_get_i64(c->inputs[n], 0), x0->shape.ndims, &ax)) return c->st->code;
  rt_shape o = x0->shape;
  o.dims[ax] = 0;
  for (int i = 0; i < n; i++) {
    const rt_shape *s = &c->inputs[i]->shape;
    bool ok = s->ndims == o.ndims && c->inputs[i]->dtype == x0->dtype;
    for (int d = 0; ok && d < s->ndims; d++) ok = d == ax || s->dims[d] == o.dims[d];
    if (!ok) {
      char a[160], b[160];
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "ConcatOp : Dimensions of inputs should "
                             "match: shape[0] = %s vs. shape[%d] = %s",
                             op_shape_tf(&x0->shape, a, sizeof a), i, op_shape_tf(s, b, sizeof b));
    }
    o.dims[ax] += s->dims[ax];
  }
  if (bytes_only(c, x0->dtype)) return c->st->code;
  rt_tensor *y = rt_kernel_output(c, 0, x0->dtype, &o);
  if (!y) return c->st->code;
  size_t es = rt_dtype_size(x0->dtype);
  blocks b = blocks_at(&o, (int)ax);
  for (int i = 0, off = 0; i < n; off += (int)c->inputs[i]->shape.dims[ax], i++)
    join_part(rt_tensor_data(y), rt_tensor_data(c->inputs[i]), b, off,
              c->inputs[i]->shape.dims[ax], o.dims[ax], es, true);
  return RT_OK;
}

int op_cpu_concat_offset(rt_kernel_ctx *c) {
  int n = c->n_inputs - 1;
  const rt_tensor *s0 = c->inputs[1];
  int64_t nd = rt_tensor_numel(s0), ax = 0, off = 0;
  if (axis_arg(c, rt_tensor_get_i64(c->inputs[0], 0), (int)nd, &ax)) return c->st->code;
  for (int i = 0; i < n; i++) {
    int64_t v[RT_MAX_DIMS] = {0};
    if (rt_tensor_numel(c->inputs[i + 1]) != nd || nd > RT_MAX_DIMS)
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "input %d should contain %lld elements, "
                             "but got %lld", i + 1, (long long)nd,
                             (long long)rt_tensor_numel(c->inputs[i + 1]));
    v[ax] = off;
    off += rt_tensor_get_i64(c->inputs[i + 1], ax);
    rt_shape s = rt_shape_make(1, &nd);
    if (int_output(c, i, RT_INT32, &s, v)) return c->st->code;
  }
  return RT_OK;
}

int op_cpu_split(rt_kernel_ctx *c) {
  const rt_tensor *x = c->inputs[1];
  int n = c->n_outputs;
  int64_t ax = 0;
  if (axis_arg(c, rt_tensor_get_i64(c->inputs[0], 0), x->shape.ndims, &ax)) return c->st->code;
  if (x->shape.dims[ax] % n)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Number of ways to split should evenly divide "
                           "the split dimension, but got split_dim %lld (size = %lld) and "
                           "num_split %d", (long long)ax, (long long)x->shape.dims[ax], n);
  if (bytes_only(c, x->dtype)) return c->st->code;
  rt_shape o = x->shape;
  o.dims[ax] /= n;
  blocks b = blocks_at(&x->shape, (int)ax);
  for (int i = 0; i < n; i++) {
    rt_tensor *y = rt_kernel_output(c, i, x->dtype, &o);
    if (!y) return c->st->code;
    join_part(rt_tensor_data(x), rt_tensor_data(y), b, i * o.dims[ax], o.dims[ax],
              x->shape.dims[ax], rt_dtype_size(x->dtype), false);
  }
  return RT_OK;
}

int op_cpu_pack(rt_kernel_ctx *c) {
  const rt_tensor *x0 = c->inputs[0];
  int n = c->n_inputs;
  int64_t ax = 0;
  if (axis_arg(c, rt_node_int(c->node, "axis", 0), x0->shape.ndims + 1, &ax)) return c->st->code;
  for (int i = 1; i < n; i++)
    if (!rt_shape_equal(&c->inputs[i]->shape, &x0->shape)) {
      char a[160], b[160];
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Shapes of all inputs must match: "
                             "values[0].shape = %s != values[%d].shape = %s",
                             op_shape_tf(&x0->shape, a, sizeof a), i,
                             op_shape_tf(&c->inputs[i]->shape, b, sizeof b));
    }
  if (x0->shape.ndims >= RT_MAX_DIMS)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Too many dimensions");
  rt_shape o = {.ndims = x0->shape.ndims + 1};
  for (int d = 0, k = 0; d < o.ndims; d++) o.dims[d] = d == ax ? n : x0->shape.dims[k++];
  rt_tensor *y = rt_kernel_output(c, 0, x0->dtype, &o);
  if (!y) return c->st->code;
  blocks b = blocks_at(&o, (int)ax);
  if (x0->dtype == RT_STRING) {   /* element by element: each string owns its bytes */
    for (int i = 0; i < n; i++) {
      const rt_str *in = rt_tensor_data(c->inputs[i]);
      for (int64_t q = 0; q < b.outer; q++)
        for (int64_t j = 0; j < b.inner; j++) {
          const rt_str *e = &in[q * b.inner + j];
          if (rt_tensor_set_str(y, (q * n + i) * b.inner + j, e->ptr, e->len))
            return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
        }
    }
    return RT_OK;
  }
  for (int i = 0; i < n; i++)
    join_part(rt_tensor_data(y), rt_tensor_data(c->inputs[i]), b, i, 1, n,
              rt_dtype_size(x0->dtype), true);
  return RT_OK;
}

int op_cpu_unpack(rt_kernel_ctx *c) {
  const rt_tensor *x = c->inputs[0];
  int n = c->n_outputs;
  int64_t ax = 0;
  if (axis_arg(c, rt_node_int(c->node, "axis", 0), x->shape.ndims, &ax)) return c->st->code;
  if (x->shape.dims[ax] != n)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Input shape axis %lld must equal %d, got "
                           "shape dimension %lld", (long long)ax, n, (long long)x->shape.dims[ax]);
  if (bytes_only(c, x->dtype)) return c->st->code;
  rt_shape o = {.ndims = 0};
  for (int d = 0; d < x->shape.ndims; d++)
    if (d != ax) o.dims[o.ndims++] = x->shape.dims[d];
  blocks b = blocks_at(&x->shape, (int)ax);
  for (int i = 0; i < n; i++) {
    rt_tensor *y = rt_kernel_output(c, i, x->dtype, &o);
    if (!y) return c->st->code;
    join_part(rt_tensor_data(x), rt_tensor_data(y), b, i, 1, n, rt_dtype_size(x->dtype), false);
  }
  return RT_OK;
}

/* ---- slicing ------------------------------------------------------------------------ */

/* Copy the block spec describes between a tensor of shape `whole` and a dense part. */
static void slice_copy(char *whole, const rt_shape *ws, char *part, const op_slice_spec *sp,
                       size_t es, bool to_whole) {
  int64_t st[RT_MAX_DIMS], wst[RT_MAX_DIMS], pst[RT_MAX_DIMS], off = 0;
  strides_of(ws->dims, ws->ndims, st);
  strides_of(sp->size, sp->nd, pst);
  for (int d = 0; d < sp->nd; d++) {
    wst[d] = st[d] * sp->stride[d];
    off += st[d] * sp->begin[d];
  }
  if (rt_shape_numel(ws) == 0) return;
  char *w = whole + off * (int64_t)es;
  if (to_whole) copy_nd(w, wst, part, pst, sp->size, sp->nd, es);
  else copy_nd(part, pst, w, wst, sp->size, sp->nd, es);
}

int op_cpu_slice(rt_kernel_ctx *c) {
  const rt_tensor *x = c->inputs[0];
  int nd = x->shape.ndims, nb, ns;
  op_slice_spec sp = {.nd = nd};
  if (!int_vector(c, 1, sp.begin, RT_MAX_DIMS, &nb, "begin") ||
      !int_vector(c, 2, sp.size, RT_MAX_DIMS, &ns, "size"))
    return c->st->code;
  if (nb != nd || ns != nd)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Expected begin and size arguments to be 1-D "
                           "tensors of size %d, but got shapes [%d] and [%d] instead.", nd, nb, ns);
  for (int d = 0; d < nd; d++) {
    int64_t dim = x->shape.dims[d];
    if (sp.size[d] == -1) sp.size[d] = dim - sp.begin[d];
    if (sp.begin[d] < 0 || sp.begin[d] > dim)
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Expected begin[%d] in [0, %lld], but got "
                             "%lld", d, (long long)dim, (long long)sp.begin[d]);
    if (sp.size[d] < 0 || sp.begin[d] + sp.size[d] > dim)
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Expected size[%d] in [0, %lld], but got "
                             "%lld", d, (long long)(dim - sp.begin[d]), (long long)sp.size[d]);
    sp.stride[d] = 1;
  }
  if (bytes_only(c, x->dtype)) return c->st->code;
  sp.out = rt_shape_make(nd, sp.size);
  rt_tensor *y = rt_kernel_output(c, 0, x->dtype, &sp.out);
  if (!y) return c->st->code;
  slice_copy(rt_tensor_data(x), &x->shape, rt_tensor_data(y), &sp, rt_dtype_size(x->dtype), false);
  return RT_OK;
}

/* begin, end, strides from inputs first..first+2, made dense against shape s. */
static int strided_args(rt_kernel_ctx *c, int first, const rt_shape *s, op_slice_spec *sp) {
  int64_t v[3][MAXD];
  int n[3];
  static const char *what[] = {"begin", "end", "strides"};
  for (int k = 0; k < 3; k++)
    if (!int_vector(c, first + k, v[k], MAXD, &n[k], what[k])) return c->st->code;
  if (n[0] != n[1] || n[0] != n[2])
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Expected begin, end, and strides to be 1D "
                           "equal size tensors, but got shapes [%d], [%d], and [%d] instead.",
                           n[0], n[1], n[2]);
  rt_status st = {0};
  if (op_strided_spec(s, n[0], v[0], v[1], v[2], c->node, sp, &st))
    return rt_kernel_error(c, st.code, "%s", st.msg);
  return RT_OK;
}

int op_cpu_strided_slice(rt_kernel_ctx *c) {
  const rt_tensor *x = c->inputs[0];
  op_slice_spec sp;
  if (strided_args(c, 1, &x->shape, &sp) || bytes_only(c, x->dtype)) return c->st->code;
  rt_tensor *y = rt_kernel_output(c, 0, x->dtype, &sp.out);
  if (!y) return c->st->code;
  slice_copy(rt_tensor_data(x), &x->shape, rt_tensor_data(y), &sp, rt_dtype_size(x->dtype), false);
  return RT_OK;
}

int op_cpu_strided_slice_grad(rt_kernel_ctx *c) {
  const rt_tensor *dy = c->inputs[4];
  int64_t dims[RT_MAX_DIMS];
  int n;
  op_slice_spec sp;
  if (!int_vector(c, 0, dims, RT_MAX_DIMS, &n, "shape")) return c->st->code;
  rt_shape s = rt_shape_make(n, dims);
  if (strided_args(c, 1, &s, &sp) || bytes_only(c, dy->dtype)) return c->st->code;
  if (rt_shape_numel(&sp.out) != rt_tensor_numel(dy)) {
    char a[160], b[160];
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "shape of dy was %s instead of %s",
                           op_shape_tf(&dy->shape, a, sizeof a), op_shape_tf(&sp.out, b, sizeof b));
  }
  rt_tensor *y = rt_kernel_output(c, 0, dy->dtype, &s);
  if (!y) return c->st->code;
  memset(rt_tensor_data(y), 0, rt_tensor_nbytes(y));
  slice_copy(rt_tensor_data(y), &s, rt_tensor_data(dy), &sp, rt_dtype_size(dy->dtype), true);
  return RT_OK;
}

int op_cpu_pad(rt_kernel_ctx *c) {
  const rt_tensor *x = c->inputs[0], *p = c->inputs[1];
  int nd = x->shape.ndims;
  if (p->shape.ndims != 2 || p->shape.dims[0] != nd || p->shape.dims[1] != 2) {
    char a[160], b[160];
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "The first dimension of paddings must be the "
                           "rank of inputs%s %s", op_shape_tf(&p->shape, a, sizeof a),
                           op_shape_tf(&x->shape, b, sizeof b));
  }
  op_slice_spec sp = {.nd = nd};
  rt_shape o = x->shape;
  for (int d = 0; d < nd; d++) {
    int64_t lo = rt_tensor_get_i64(p, 2 * d), hi = rt_tensor_get_i64(p, 2 * d + 1);
    if (lo < 0 || hi < 0)
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Paddings must be non-negative: %lld %lld",
                             (long long)lo, (long long)hi);
    o.dims[d] += lo + hi;
    sp.begin[d] = lo, sp.size[d] = x->shape.dims[d], sp.stride[d] = 1;
  }
  if (bytes_only(c, x->dtype)) return c->st->code;
  rt_tensor *y = rt_kernel_output(c, 0, x->dtype, &o);
  if (!y) return c->st->code;
  memset(rt_tensor_data(y), 0, rt_tensor_nbytes(y));
  slice_copy(rt_tensor_data(y), &o, rt_tensor_data(x), &sp, rt_dtype_size(x->dtype), true);
  return RT_OK;
}

int op_cpu_tile(rt_kernel_ctx *c) {
  const rt_tensor *x = c->inputs[0];
  int nd = x->shape.ndims, n;
  int64_t m[RT_MAX_DIMS];
  if (!int_vector(c, 1, m, RT_MAX_DIMS, &n, "multiples")) return c->st->code;
  if (n != nd)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Expected multiples argument to be a vector "
                           "of length %d but got length %d", nd, n);
  rt_shape o = x->shape;
  for (int d = 0; d < nd; d++) {
    if (m[d] < 0)
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Expected multiples[%d] >= 0, but got %lld",
                             d, (long long)m[d]);
    o.dims[d] *= m[d];
  }
  if (bytes_only(c, x->dtype)) return c->st->code;
  rt_tensor *y = rt_kernel_output(c, 0, x->dtype, &o);
  if (!y) return c->st->code;
  /* The output as [m0, d0, m1, d1, ...]: the input repeats over the m axes. */
  int64_t dims[MAXD], ds[MAXD], ss[MAXD], ys[RT_MAX_DIMS], xs[RT_MAX_DIMS];
  strides_of(o.dims, nd, ys);
  strides_of(x->shape.dims, nd, xs);
  for (int d = 0; d < nd; d++) {
    dims[2 * d] = m[d], dims[2 * d + 1] = x->shape.dims[d];
    ds[2 * d] = x->shape.dims[d] * ys[d], ds[2 * d + 1] = ys[d];
    ss[2 * d] = 0, ss[2 * d + 1] = xs[d];
  }
  copy_nd(rt_tensor_data(y), ds, rt_tensor_data(x), ss, dims, 2 * nd, rt_dtype_size(x->dtype));
  return RT_OK;
}

/* ---- indexing ----------------------------------------------------------------------- */

/* "indices[1,0]": a flat index in a shape, as TF1's messages show it. */
static char *index_str(const rt_shape *s, int64_t i, char *buf, size_t n) {
  int64_t st[RT_MAX_DIMS];
  size_t off = 0;
  strides_of(s->dims, s->ndims, st);
  buf[0] = '\0';
  for (int d = 0; d < s->ndims && off < n; d++) {
    off += (size_t)snprintf(buf + off, n - off, "%s%lld", d ? "," : "", (long long)(i / st[d]));
    i %= st[d];
  }
  return buf;
}

int op_cpu_gather(rt_kernel_ctx *c) {
  const rt_tensor *p = c->inputs[0], *ix = c->inputs[1];
  if (p->shape.ndims < 1)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "params must be at least 1 dimensional");
  if (ix->shape.ndims + p->shape.ndims - 1 > RT_MAX_DIMS)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Too many dimensions");
  if (bytes_only(c, p->dtype)) return c->st->code;
  rt_shape o = ix->shape;
  for (int d = 1; d < p->shape.ndims; d++) o.dims[o.ndims++] = p->shape.dims[d];
  int64_t rows = p->shape.dims[0], n = rt_tensor_numel(ix);
  size_t row = (size_t)(rows ? rt_tensor_numel(p) / rows : 0) * rt_dtype_size(p->dtype);
  for (int64_t i = 0; i < n; i++) {
    int64_t k = rt_tensor_get_i64(ix, i);
    if (k < 0 || k >= rows) {
      char s[64];
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "indices[%s] = %lld is not in [0, %lld)",
                             index_str(&ix->shape, i, s, sizeof s), (long long)k, (long long)rows);
    }
  }
  rt_tensor *y = rt_kernel_output(c, 0, p->dtype, &o);
  if (!y) return c->st->code;
  char *yd = rt_tensor_data(y);
  const char *pd = rt_tensor_data(p);
  for (int64_t i = 0; i < n; i++)
    memcpy(yd + (size_t)i * row, pd + (size_t)rt_tensor_get_i64(ix, i) * row, row);
  return RT_OK;
}

#define SEGMENT_SUM(T)                                                                  \
  static void segment_sum_##T(T *y, const T *x, const rt_tensor *ids, int64_t inner) { \
    for (int64_t i = 0; i < rt_tensor_numel(ids); i++) {                                \
      int64_t k = rt_tensor_get_i64(ids, i);                                            \
      if (k < 0) continue;                                                              \
      for (int64_t j = 0; j < inner; j++) y[k * inner + j] += x[i * inner + j];         \
    }                                                                                   \
  }
SEGMENT_SUM(float)
SEGMENT_SUM(double)
SEGMENT_SUM(int32_t)
SEGMENT_SUM(int64_t)

int op_cpu_unsorted_segment_sum(rt_kernel_ctx *c) {
  const rt_tensor *x = c->inputs[0], *ids = c->inputs[1];
  int64_t n = rt_tensor_get_i64(c->inputs[2], 0), k = ids->shape.ndims;
  bool prefix = k <= x->shape.ndims;
  for (int d = 0; prefix && d < k; d++) prefix = ids->shape.dims[d] == x->shape.dims[d];
  if (!prefix) {
    char a[160], b[160];
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "data.shape = %s does not start with "
                           "segment_ids.shape = %s", op_shape_tf(&x->shape, a, sizeof a),
                           op_shape_tf(&ids->shape, b, sizeof b));
  }
  for (int64_t i = 0; i < rt_tensor_numel(ids); i++) {
    int64_t s = rt_tensor_get_i64(ids, i);
    if (s >= n) {
      char buf[64];
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "segment_ids[%s] = %lld is out of range "
                             "[0, %lld)", index_str(&ids->shape, i, buf, sizeof buf),
                             (long long)s, (long long)n);
    }
  }
  rt_shape o = {.ndims = 1 + x->shape.ndims - (int)k};
  o.dims[0] = n;
  int64_t inner = 1;
  for (int d = (int)k; d < x->shape.ndims; d++)
    o.dims[1 + d - k] = x->shape.dims[d], inner *= x->shape.dims[d];
  rt_tensor *y = rt_kernel_output(c, 0, x->dtype, &o);
  if (!y) return c->st->code;
  memset(rt_tensor_data(y), 0, rt_tensor_nbytes(y));
  switch (x->dtype) {
  case RT_FLOAT: segment_sum_float(rt_tensor_data(y), rt_tensor_data(x), ids, inner); break;
  case RT_DOUBLE: segment_sum_double(rt_tensor_data(y), rt_tensor_data(x), ids, inner); break;
  case RT_INT32: segment_sum_int32_t(rt_tensor_data(y), rt_tensor_data(x), ids, inner); break;
  case RT_INT64: segment_sum_int64_t(rt_tensor_data(y), rt_tensor_data(x), ids, inner); break;
  default:
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "no CPU kernel for %s", rt_dtype_name(x->dtype));
  }
  return RT_OK;
}

/* BroadcastTo: the input repeated along the dimensions where it has 1 (or none: it is
 * aligned to the right), numpy's rules. */
int op_cpu_broadcast_to(rt_kernel_ctx *c) {
  const rt_tensor *x = c->inputs[0], *sh = c->inputs[1];
  if (bytes_only(c, x->dtype)) return c->st->code;
  int64_t nd = rt_tensor_numel(sh), off;
  if (nd > RT_MAX_DIMS || nd < x->shape.ndims)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT,
                           "Rank of input (%d) must be no greater than rank of output shape (%lld).",
                           x->shape.ndims, (long long)nd);
  rt_shape o = {.ndims = (int)nd};
  int64_t in_stride[RT_MAX_DIMS] = {0}, stride = 1;
  off = nd - x->shape.ndims;
  for (int64_t d = nd - 1; d >= 0; d--) {
    o.dims[d] = rt_tensor_get_i64(sh, d);
    int64_t xd = d >= off ? x->shape.dims[d - off] : 1;
    if (xd != 1 && xd != o.dims[d]) {
      char a[160], b[160];
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Incompatible shapes: %s vs. %s",
                             op_shape_tf(&x->shape, a, sizeof a), op_shape_tf(&o, b, sizeof b));
    }
    in_stride[d] = xd == 1 ? 0 : stride;
    stride *= xd;
  }
  rt_tensor *y = rt_kernel_output(c, 0, x->dtype, &o);
  if (!y) return c->st->code;
  size_t es = rt_dtype_size(x->dtype);
  const char *src = rt_tensor_data(x);
  char *dst = rt_tensor_data(y);
  int64_t n = rt_tensor_numel(y), idx[RT_MAX_DIMS] = {0};
  for (int64_t i = 0; i < n; i++) {
    int64_t at = 0;
    for (int64_t d = 0; d < nd; d++) at += idx[d] * in_stride[d];
    memcpy(dst + (size_t)i * es, src + (size_t)at * es, es);
    for (int64_t d = nd - 1; d >= 0 && ++idx[d] == o.dims[d]; d--) idx[d] = 0;
  }
  return RT_OK;
}

/* DynamicStitch: merged[indices[m][i]] = data[m][i] (rows of the later inputs win, rows no
 * index names are zeros); inputs are the N indices, then the N data. */
int op_cpu_dynamic_stitch(rt_kernel_ctx *c) {
  int n = c->n_inputs / 2;
  const rt_tensor *d0 = c->inputs[n];
  if (bytes_only(c, d0->dtype)) return c->st->code;
  int k0 = c->inputs[0]->shape.ndims;
  int64_t rows = 0, inner = 1;
  for (int d = k0; d < d0->shape.ndims; d++) inner *= d0->shape.dims[d];
  for (int m = 0; m < n; m++) {
    const rt_tensor *ix = c->inputs[m], *x = c->inputs[n + m];
    bool ok = x->shape.ndims == ix->shape.ndims + d0->shape.ndims - k0 && x->dtype == d0->dtype;
    for (int d = 0; ok && d < ix->shape.ndims; d++) ok = x->shape.dims[d] == ix->shape.dims[d];
    for (int d = k0; ok && d < d0->shape.ndims; d++) ok = x->shape.dims[ix->shape.ndims + d - k0] == d0->shape.dims[d];
    if (!ok) {
      char a[160], b[160];
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "data[%d].shape = %s does not start with indices[%d].shape = "
                             "%s, or its rest differs from data[0]'s", m, op_shape_tf(&x->shape, a, sizeof a), m,
                             op_shape_tf(&ix->shape, b, sizeof b));
    }
    for (int64_t i = 0; i < rt_tensor_numel(ix); i++) {
      int64_t v = rt_tensor_get_i64(ix, i);
      if (v < 0) {
        char buf[64];
        return rt_kernel_error(c, RT_INVALID_ARGUMENT, "indices[%d][%s] = %lld is negative", m,
                               index_str(&ix->shape, i, buf, sizeof buf), (long long)v);
      }
      if (v + 1 > rows) rows = v + 1;
    }
  }
  rt_shape o = {.ndims = 1 + d0->shape.ndims - k0};
  o.dims[0] = rows;
  for (int d = k0; d < d0->shape.ndims; d++) o.dims[1 + d - k0] = d0->shape.dims[d];
  rt_tensor *y = rt_kernel_output(c, 0, d0->dtype, &o);
  if (!y) return c->st->code;
  size_t row = (size_t)inner * rt_dtype_size(d0->dtype);
  char *out = rt_tensor_data(y);
  memset(out, 0, rt_tensor_nbytes(y));
  for (int m = 0; m < n; m++) {
    const rt_tensor *ix = c->inputs[m];
    const char *x = rt_tensor_data(c->inputs[n + m]);
    for (int64_t i = 0; i < rt_tensor_numel(ix); i++)
      memcpy(out + (size_t)rt_tensor_get_i64(ix, i) * row, x + (size_t)i * row, row);
  }
  return RT_OK;
}

int op_cpu_one_hot(rt_kernel_ctx *c) {
  const rt_tensor *ix = c->inputs[0], *on = c->inputs[2], *off = c->inputs[3];
  int64_t depth = rt_tensor_get_i64(c->inputs[1], 0), axis = rt_node_int(c->node, "axis", -1);
  if (depth < 0)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "depth must be non-negative, got: %lld",
                           (long long)depth);
  if (rt_tensor_numel(on) != 1 || rt_tensor_numel(off) != 1)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "on_value and off_value must be scalars");
  int nd = ix->shape.ndims;
  if (axis < -1 || axis > nd || nd >= RT_MAX_DIMS)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Expected axis to be -1 or between [0, %d). "
                           " But received: %lld", nd + 1, (long long)axis);
  if (bytes_only(c, on->dtype)) return c->st->code;
  int64_t ax = axis < 0 ? nd : axis;
  rt_shape o = {.ndims = nd + 1};
  for (int d = 0, j = 0; d < o.ndims; d++) o.dims[d] = d == ax ? depth : ix->shape.dims[j++];
  rt_tensor *y = rt_kernel_output(c, 0, on->dtype, &o);
  if (!y) return c->st->code;
  size_t es = rt_dtype_size(on->dtype);
  char *yd = rt_tensor_data(y);
  fill_bytes(yd, rt_tensor_data(off), es, rt_tensor_numel(y));
  /* indices split as outer (dims before ax) x inner (dims from ax on) */
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < nd; d++) *(d < ax ? &outer : &inner) *= ix->shape.dims[d];
  for (int64_t a = 0; a < outer; a++)
    for (int64_t i = 0; i < inner; i++) {
      int64_t k = rt_tensor_get_i64(ix, a * inner + i);
      if (k >= 0 && k < depth) memcpy(yd + (size_t)((a * depth + k) * inner + i) * es,
                                      rt_tensor_data(on), es);
    }
  return RT_OK;
}

/* ---- Range -------------------------------------------------------------------------- */

int op_cpu_range(rt_kernel_ctx *c) {
  rt_dtype t = c->inputs[0]->dtype;
  for (int i = 0; i < 3; i++)
    if (rt_tensor_numel(c->inputs[i]) != 1 || c->inputs[i]->shape.ndims != 0) {
      static const char *what[] = {"start", "limit", "delta"};
      char s[160];
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s must be a scalar, not shape %s",
                             what[i], op_shape_tf(&c->inputs[i]->shape, s, sizeof s));
    }
  double s = rt_tensor_get_f64(c->inputs[0], 0), l = rt_tensor_get_f64(c->inputs[1], 0);
  double d = rt_tensor_get_f64(c->inputs[2], 0);
  bool ints = rt_dtype_is_int(t);
  if (d == 0) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Requires delta != 0: 0");
  if ((d > 0 && s > l) || (d < 0 && s < l)) {
    const char *w = d > 0 ? "Requires start <= limit when delta > 0: "
                          : "Requires start >= limit when delta < 0: ";
    if (ints)
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s%lld/%lld", w,
                             (long long)rt_tensor_get_i64(c->inputs[0], 0),
                             (long long)rt_tensor_get_i64(c->inputs[1], 0));
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s%g/%g", w, s, l);
  }
  int64_t n;
  if (ints) {
    int64_t si = rt_tensor_get_i64(c->inputs[0], 0), li = rt_tensor_get_i64(c->inputs[1], 0);
    int64_t di = rt_tensor_get_i64(c->inputs[2], 0);
    int64_t len = li > si ? li - si : si - li, ad = di < 0 ? -di : di;
    n = (len + ad - 1) / ad;
  } else {
    double q = (l - s) / d;
    n = (int64_t)q;
    if ((double)n < q) n++;
  }
  rt_shape o = rt_shape_make(1, &n);
  rt_tensor *y = rt_kernel_output(c, 0, t, &o);
  if (!y) return c->st->code;
  void *yd = rt_tensor_data(y);
  int64_t si = rt_tensor_get_i64(c->inputs[0], 0), di = rt_tensor_get_i64(c->inputs[2], 0);
  for (int64_t i = 0; i < n; i++)
    switch (t) {
    case RT_FLOAT: ((float *)yd)[i] = (float)(s + (double)i * d); break;
    case RT_DOUBLE: ((double *)yd)[i] = s + (double)i * d; break;
    case RT_INT32: ((int32_t *)yd)[i] = (int32_t)(si + i * di); break;
    default: ((int64_t *)yd)[i] = si + i * di; break;
    }
  return RT_OK;
}
