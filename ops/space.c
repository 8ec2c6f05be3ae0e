/* TF 1.x's block rearrangements, the pieces of its dilated convolutions:
 *   SpaceToBatchND(input, block_shape, paddings)  spatial blocks of the padded input moved into the batch
 *   BatchToSpaceND(input, block_shape, crops)     the inverse, then cropped
 *   SpaceToBatch / BatchToSpace(...; block_size)  the same over the 2 spatial dims of an NHWC input
 *   SpaceToDepth / DepthToSpace(input; block_size) blocks of H and W moved into the channels and back
 * Each pair is the other's gradient. The kernels move elements (any type, strings copied),
 * a contiguous run of the innermost dims at a time. CPU only, NHWC only (as TF's CPU kernels). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ops/ops_int.h"

#define IN(i) (c->node->inputs[i])
#define DY (c->dy[0])

static bool mul_ok(int64_t a, int64_t b, int64_t *r) { return !__builtin_mul_overflow(a, b, r); }
static bool add_ok(int64_t a, int64_t b, int64_t *r) { return !__builtin_add_overflow(a, b, r); }

/* n elements from src (from element so) to dst (from element d0): bytes, or strings copied. */
static int copy_run(rt_tensor *dst, int64_t d0, const rt_tensor *src, int64_t so, int64_t n) {
  if (!rt_dtype_is_str(src->dtype)) {
    size_t es = rt_dtype_size(src->dtype);
    memcpy((char *)rt_tensor_data(dst) + (size_t)d0 * es, (const char *)rt_tensor_data(src) + (size_t)so * es,
           (size_t)n * es);
    return RT_OK;
  }
  const rt_str *s = (const rt_str *)rt_tensor_data(src) + so;
  for (int64_t k = 0; k < n; k++)
    if (rt_tensor_set_str(dst, d0 + k, s[k].ptr, s[k].len)) return RT_RESOURCE_EXHAUSTED;
  return RT_OK;
}

/* The move shared by the batch ops. `space` is [B, S_1..S_m, R...], `batch` is
 * [B*prod(b), Q_1..Q_m, R...] with Q_k*b_k = S_k + lo_k + hi_k. Batch element
 * [i*B + n, q, r] (i the flat block offset, i_k its digits) is space element
 * [n, q_k*b_k + i_k - lo_k, r], or padding when that falls outside S. to_batch copies
 * space into batch (pre-zeroed), else batch into space. */
static int block_move(rt_tensor *space, rt_tensor *batch, int m, const int64_t *b, const int64_t *lo,
                      bool to_batch) {
  const rt_shape *ss = &space->shape, *bsh = &batch->shape;
  int64_t run = 1, nspace = 1, B = ss->dims[0], nb = bsh->dims[0];
  for (int d = 1 + m; d < ss->ndims; d++) run *= ss->dims[d];
  for (int k = 0; k < m; k++) nspace *= bsh->dims[1 + k];
  if (!run || !nspace || !B) return RT_OK;
  for (int64_t ob = 0; ob < nb; ob++) {
    int64_t n = ob % B, i = ob / B, off[RT_MAX_DIMS], q[RT_MAX_DIMS] = {0};
    for (int k = m - 1; k >= 0; k--) off[k] = i % b[k] - lo[k], i /= b[k];
    for (int64_t j = 0; j < nspace; j++) {
      int64_t f = n;
      bool inside = true;
      for (int k = 0; k < m && inside; k++) {
        int64_t s = q[k] * b[k] + off[k];
        inside = s >= 0 && s < ss->dims[1 + k];
        f = f * ss->dims[1 + k] + s;
      }
      if (inside) {
        int64_t bo = (ob * nspace + j) * run, so = f * run;
        int rc = to_batch ? copy_run(batch, bo, space, so, run) : copy_run(space, so, batch, bo, run);
        if (rc) return rc;
      }
      for (int k = m - 1; k >= 0 && ++q[k] == bsh->dims[1 + k]; k--) q[k] = 0;
    }
  }
  return RT_OK;
}

/* Reads block_shape (m values) and the [m, 2] pads/crops tensor `p` named `what`; checks the
 * ranks as TF's kernels word it. */
static int read_blocks(rt_kernel_ctx *c, const rt_tensor *x, const rt_tensor *bt, const rt_tensor *p,
                       const char *what, int *m, int64_t *b, int64_t *pv) {
  char a[160];
  if (bt->shape.ndims != 1)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "block_shape must be one-dimensional, got shape %s",
                           op_shape_tf(&bt->shape, a, sizeof a));
  int64_t mm = bt->shape.dims[0];
  if (x->shape.ndims < 1 + mm)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "input rank should be >= %lld instead of %d",
                           (long long)(1 + mm), x->shape.ndims);
  if (p->shape.ndims != 2 || p->shape.dims[0] != mm || p->shape.dims[1] != 2)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s should have shape [%lld, 2] instead of %s", what,
                           (long long)mm, op_shape_tf(&p->shape, a, sizeof a));
  *m = (int)mm;
  for (int k = 0; k < *m; k++) {
    b[k] = rt_tensor_get_i64(bt, k);
    pv[2 * k] = rt_tensor_get_i64(p, 2 * k), pv[2 * k + 1] = rt_tensor_get_i64(p, 2 * k + 1);
  }
  return RT_OK;
}

/* SpaceToBatch(ND) on m block dims b with paddings pv. */
static int s2b_run(rt_kernel_ctx *c, const rt_tensor *x, int m, const int64_t *b, const int64_t *pv) {
  for (int k = 0; k < m; k++)
    if (b[k] < 1)
      return rt_kernel_error(c, RT_INVALID_ARGUMENT,
                             "All values in block_shape must be positive, got value, %lld at index %d.",
                             (long long)b[k], k);
  for (int k = 0; k < 2 * m; k++)
    if (pv[k] < 0) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Paddings must be non-negative");
  rt_shape o = x->shape;
  int64_t lo[RT_MAX_DIMS], total = x->shape.dims[0];
  for (int k = 0; k < m; k++) {
    int64_t padded;
    if (!add_ok(x->shape.dims[1 + k], pv[2 * k], &padded) || !add_ok(padded, pv[2 * k + 1], &padded))
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "padded_shape[%d] is too large", k);
    if (padded % b[k])
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "padded_shape[%d]=%lld is not divisible by block_shape[%d]=%lld",
                             k, (long long)padded, k, (long long)b[k]);
    o.dims[1 + k] = padded / b[k];
    lo[k] = pv[2 * k];
    if (!mul_ok(o.dims[0], b[k], &o.dims[0]) || !mul_ok(total, padded, &total))
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "SpaceToBatch's output would have more than 2^63 elements");
  }
  int64_t bytes;
  for (int d = 1 + m; d < o.ndims; d++)
    if (!mul_ok(total, o.dims[d], &total))
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "SpaceToBatch's output would have more than 2^63 elements");
  /* Huge paddings: refuse what could never fit in memory (nor wrap the byte count) rather than
   * let an overcommitted allocation be touched. */
  long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
  if (!mul_ok(total, (int64_t)rt_dtype_size(x->dtype), &bytes) || (pages > 0 && psz > 0 && bytes / psz > pages)) {
    char a[160];
    return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "OOM when allocating tensor with shape%s and type %s",
                           op_shape_tf(&o, a, sizeof a), op_tf_type(x->dtype));
  }
  rt_tensor *y = rt_kernel_output(c, 0, x->dtype, &o);
  if (!y) return c->st->code;
  if (!rt_dtype_is_str(y->dtype)) memset(rt_tensor_data(y), 0, rt_tensor_nbytes(y));   /* the padding */
  if (block_move((rt_tensor *)x, y, m, b, lo, true))
    return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory copying strings");
  return RT_OK;
}

/* BatchToSpace(ND) on m block dims b with crops cv. */
static int b2s_run(rt_kernel_ctx *c, const rt_tensor *x, int m, const int64_t *b, const int64_t *cv) {
  int64_t prod = 1;
  for (int k = 0; k < m; k++)
    if (!mul_ok(prod, b[k], &prod))
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Product of block sizes overflows int64");
  if (prod <= 0)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Product of block sizes must be positive, got %lld", (long long)prod);
  for (int k = 0; k < 2 * m; k++)
    if (cv[k] < 0) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Crops must be non-negative");
  int64_t B = x->shape.dims[0];
  if (B % prod)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT,
                           "Input batch dimension (%lld) is not divisible by product of block sizes (%lld)",
                           (long long)B, (long long)prod);
  rt_shape o = x->shape;
  o.dims[0] = B / prod;
  int64_t lo[RT_MAX_DIMS];
  for (int k = 0; k < m; k++) {
    int64_t full;
    if (!mul_ok(x->shape.dims[1 + k], b[k], &full))
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "cropped_shape[%d] is too large", k);
    if (__builtin_sub_overflow(full, cv[2 * k], &o.dims[1 + k]) ||
        __builtin_sub_overflow(o.dims[1 + k], cv[2 * k + 1], &o.dims[1 + k]))
      o.dims[1 + k] = INT64_MIN;
    if (o.dims[1 + k] < 0)
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "cropped_shape[%d]=%lld must be non-negative", k,
                             (long long)o.dims[1 + k]);
    lo[k] = cv[2 * k];
  }
  for (int k = 0; k < m; k++)   /* an even count of negative sizes: only an empty input gets here */
    if (b[k] < 1 && rt_tensor_numel(x) > 0)
      return rt_kernel_error(c, RT_INVALID_ARGUMENT,
                             "All values in block_shape must be positive, got value, %lld at index %d.",
                             (long long)b[k], k);
  rt_tensor *y = rt_kernel_output(c, 0, x->dtype, &o);
  if (!y) return c->st->code;
  if (rt_tensor_numel(y) && block_move(y, (rt_tensor *)x, m, b, lo, false))
    return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory copying strings");
  return RT_OK;
}

static int space_to_batch_nd_kernel(rt_kernel_ctx *c) {
  int m;
  int64_t b[RT_MAX_DIMS], pv[2 * RT_MAX_DIMS];
  if (read_blocks(c, c->inputs[0], c->inputs[1], c->inputs[2], "paddings", &m, b, pv)) return c->st->code;
  return s2b_run(c, c->inputs[0], m, b, pv);
}

static int batch_to_space_nd_kernel(rt_kernel_ctx *c) {
  int m;
  int64_t b[RT_MAX_DIMS], cv[2 * RT_MAX_DIMS];
  if (read_blocks(c, c->inputs[0], c->inputs[1], c->inputs[2], "crops", &m, b, cv)) return c->st->code;
  return b2s_run(c, c->inputs[0], m, b, cv);
}

/* SpaceToBatch / BatchToSpace: NHWC input, block_size on H and W. */
static int v1_blocks(rt_kernel_ctx *c, const char *what, int64_t *b, int64_t *pv) {
  const rt_tensor *x = c->inputs[0], *p = c->inputs[1];
  char a[160];
  if (x->shape.ndims != 4)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "input rank should be 4 instead of %d", x->shape.ndims);
  if (p->shape.ndims != 2 || p->shape.dims[0] != 2 || p->shape.dims[1] != 2)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s should have shape [2, 2] instead of %s", what,
                           op_shape_tf(&p->shape, a, sizeof a));
  b[0] = b[1] = rt_node_int(c->node, "block_size", 0);
  for (int k = 0; k < 4; k++) pv[k] = rt_tensor_get_i64(p, k);
  return RT_OK;
}
static int space_to_batch_kernel(rt_kernel_ctx *c) {
  int64_t b[2], pv[4];
  if (v1_blocks(c, "paddings", b, pv)) return c->st->code;
  return s2b_run(c, c->inputs[0], 2, b, pv);
}
static int batch_to_space_kernel(rt_kernel_ctx *c) {
  int64_t b[2], cv[4];
  if (v1_blocks(c, "crops", b, cv)) return c->st->code;
  return b2s_run(c, c->inputs[0], 2, b, cv);
}

/* ---- SpaceToDepth / DepthToSpace ------------------------------------------------ */

static bool is_nhwc(const rt_node *n) { return !strcmp(rt_node_string(n, "data_format", "NHWC"), "NHWC"); }

/* TF's CPU kernels exist for NHWC only; its words for the others. */
static int no_kernel(rt_kernel_ctx *c) {
  char t[32];
  const char *s = op_tf_type(c->inputs[0]->dtype);
  size_t k = 0;
  for (; s[k] && k < sizeof t - 1; k++) t[k] = (char)(s[k] >= 'a' && s[k] <= 'z' ? s[k] - 32 : s[k]);
  t[k] = '\0';
  return rt_kernel_error(c, RT_INVALID_ARGUMENT,
                         "No OpKernel was registered to support Op '%s' used by {{node %s}} with these attrs: "
                         "[block_size=%lld, T=DT_%s, data_format=\"%s\"]",
                         c->node->op, c->node->name, (long long)rt_node_int(c->node, "block_size", 0), t,
                         rt_node_string(c->node, "data_format", "NHWC"));
}

/* space [N, H, W, C] <-> depth [N, H/bs, W/bs, C*bs*bs]: depth[n, i, j, (di*bs + dj)*C + ch]
 * is space[n, i*bs + di, j*bs + dj, ch]; for each (n, i, di, j) a run of bs*C elements. */
static int depth_move(rt_tensor *space, rt_tensor *depth, int64_t bs, bool to_depth) {
  const int64_t *s = space->shape.dims, *d = depth->shape.dims;
  int64_t run = bs * s[3];
  for (int64_t n = 0; n < s[0]; n++)
    for (int64_t i = 0; i < d[1]; i++)
      for (int64_t di = 0; di < bs; di++)
        for (int64_t j = 0; j < d[2]; j++) {
          int64_t so = ((n * s[1] + i * bs + di) * s[2] + j * bs) * s[3];
          int64_t dof = ((n * d[1] + i) * d[2] + j) * d[3] + di * run;
          int rc = to_depth ? copy_run(depth, dof, space, so, run) : copy_run(space, so, depth, dof, run);
          if (rc) return rc;
        }
  return RT_OK;
}

static int space_to_depth_kernel(rt_kernel_ctx *c) {
  const rt_tensor *x = c->inputs[0];
  int64_t bs = rt_node_int(c->node, "block_size", 0), bb;
  if (!is_nhwc(c->node)) return no_kernel(c);
  if (x->shape.ndims != 4)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Input rank should be 4 instead of %d", x->shape.ndims);
  const int64_t *s = x->shape.dims;
  if (bs < 2 || s[1] % bs || s[2] % bs)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Image width %lld and height %lld should be divisible by block_size: %lld",
                           (long long)s[2], (long long)s[1], (long long)bs);
  rt_shape o = x->shape;
  if (!mul_ok(bs, bs, &bb) || !mul_ok(s[3], bb, &o.dims[3]))
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "block_size %lld is too large", (long long)bs);
  o.dims[1] = s[1] / bs, o.dims[2] = s[2] / bs;
  rt_tensor *y = rt_kernel_output(c, 0, x->dtype, &o);
  if (!y) return c->st->code;
  if (depth_move((rt_tensor *)x, y, bs, true))
    return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory copying strings");
  return RT_OK;
}

static int depth_to_space_kernel(rt_kernel_ctx *c) {
  const rt_tensor *x = c->inputs[0];
  int64_t bs = rt_node_int(c->node, "block_size", 0), bb;
  if (!is_nhwc(c->node)) return no_kernel(c);
  if (x->shape.ndims != 4)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Input rank should be: 4 instead of: %d", x->shape.ndims);
  const int64_t *s = x->shape.dims;
  if (bs < 2 || !mul_ok(bs, bs, &bb) || s[3] % bb)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Input depth dimension %lld should be divisible by: %lld",
                           (long long)s[3], (long long)(bs < 2 || !mul_ok(bs, bs, &bb) ? bs : bb));
  rt_shape o = x->shape;
  if (!mul_ok(s[1], bs, &o.dims[1]) || !mul_ok(s[2], bs, &o.dims[2]))
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "block_size %lld is too large", (long long)bs);
  o.dims[3] = s[3] / bb;
  rt_tensor *y = rt_kernel_output(c, 0, x->dtype, &o);
  if (!y) return c->st->code;
  if (depth_move(y, (rt_tensor *)x, bs, false))
    return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory copying strings");
  return RT_OK;
}

/* ---- shapes ------------------------------------------------------------------------ */

static void unknown_dims(rt_shape *s, int from, int to) {
  for (int d = from; d < to; d++) s->dims[d] = -1;
}

/* block_shape's rank and size must be known (TF's shape functions insist); the [m, 2]
 * paddings/crops must agree. *m gets the block count. */
static int batch_shape_common(rt_shape_ctx *c, int *m) {
  const rt_shape *bt = &c->in_shapes[1], *p = &c->in_shapes[2], *x = &c->in_shapes[0];
  char a[80], b[80];
  if (bt->ndims != 1) return op_shape_error(c, 0, "block_shape must have rank 1.");
  if (bt->dims[0] < 0) return op_shape_error(c, 0, "block_shape must have known size.");
  if (bt->dims[0] >= RT_MAX_DIMS)
    return op_shape_error(c, 0, "Shape must be at least rank %lld but is rank %d", (long long)(bt->dims[0] + 1),
                          x->ndims);
  *m = (int)bt->dims[0];
  if (p->ndims >= 0 && p->ndims != 2)
    return op_shape_error(c, 0, "Shapes must be equal rank, but are %d and 2", p->ndims);
  if (p->ndims == 2 && ((p->dims[0] >= 0 && p->dims[0] != *m) || (p->dims[1] >= 0 && p->dims[1] != 2))) {
    int d = p->dims[0] >= 0 && p->dims[0] != *m ? 0 : 1;
    rt_shape want = {.ndims = 2, .dims = {*m, 2}};
    return op_shape_error(c, 0, "Dimension %d in both shapes must be equal, but are %lld and %lld. Shapes are %s and %s.",
                          d, (long long)p->dims[d], (long long)want.dims[d], op_shape_tf(p, a, sizeof a),
                          op_shape_tf(&want, b, sizeof b));
  }
  if (x->ndims >= 0 && x->ndims < 1 + *m)
    return op_shape_error(c, 0, "Shape must be at least rank %d but is rank %d", 1 + *m, x->ndims);
  return RT_OK;
}

static int space_to_batch_nd_shape(rt_shape_ctx *c) {
  int m, n;
  if (batch_shape_common(c, &m)) return c->st->code;
  const rt_shape *x = &c->in_shapes[0];
  if (x->ndims < 0) return RT_OK;
  rt_shape o = *x;
  int64_t b[RT_MAX_DIMS], pv[2 * RT_MAX_DIMS];
  bool kb = op_const_ints(c, 1, b, RT_MAX_DIMS, &n) && n == m;
  bool kp = op_const_ints(c, 2, pv, 2 * RT_MAX_DIMS, &n) && n == 2 * m;
  unknown_dims(&o, 1, 1 + m);
  if (!kb) {
    o.dims[0] = -1;
    c->out_shapes[0] = o;
    return RT_OK;
  }
  for (int k = 0; k < m; k++)
    if (b[k] < 1) return op_shape_error(c, 6, "block_shape must be positive");
  for (int k = 0; k < m && o.dims[0] >= 0; k++)
    if (!mul_ok(o.dims[0], b[k], &o.dims[0])) o.dims[0] = -1;
  if (kp) {
    for (int k = 0; k < 2 * m; k++)
      if (pv[k] < 0) return op_shape_error(c, 6, "paddings cannot be negative");
    for (int k = 0; k < m; k++) {
      int64_t s = x->dims[1 + k];
      if (s < 0 || !add_ok(s, pv[2 * k], &s) || !add_ok(s, pv[2 * k + 1], &s)) continue;
      if (s % b[k])
        return op_shape_error(c, 6, "Dimension size must be evenly divisible by %lld but is %lld", (long long)b[k],
                              (long long)s);
      o.dims[1 + k] = s / b[k];
    }
  }
  c->out_shapes[0] = o;
  return RT_OK;
}

static int batch_to_space_nd_shape(rt_shape_ctx *c) {
  int m, n;
  if (batch_shape_common(c, &m)) return c->st->code;
  const rt_shape *x = &c->in_shapes[0];
  if (x->ndims < 0) return RT_OK;
  rt_shape o = *x;
  int64_t b[RT_MAX_DIMS], cv[2 * RT_MAX_DIMS];
  bool kb = op_const_ints(c, 1, b, RT_MAX_DIMS, &n) && n == m;
  bool kc = op_const_ints(c, 2, cv, 2 * RT_MAX_DIMS, &n) && n == 2 * m;
  unknown_dims(&o, 1, 1 + m);
  if (!kb) {
    o.dims[0] = -1;
    c->out_shapes[0] = o;
    return RT_OK;
  }
  for (int k = 0; k < m; k++)
    if (b[k] < 1) return op_shape_error(c, 6, "block_shape must be positive");
  for (int k = 0; k < m && o.dims[0] >= 0; k++) {   /* TF divides by each block size in turn */
    if (o.dims[0] % b[k])
      return op_shape_error(c, 6, "Dimension size must be evenly divisible by %lld but is %lld", (long long)b[k],
                            (long long)o.dims[0]);
    o.dims[0] /= b[k];
  }
  if (kc) {
    for (int k = 0; k < 2 * m; k++)
      if (cv[k] < 0) return op_shape_error(c, 6, "crops cannot be negative");
    for (int k = 0; k < m; k++) {
      int64_t s;
      if (x->dims[1 + k] < 0 || !mul_ok(x->dims[1 + k], b[k], &s)) continue;
      for (int e = 0; e < 2; e++) {
        if (s < cv[2 * k + e])
          return op_shape_error(c, 6, "Negative dimension size caused by subtracting %lld from %lld",
                                (long long)cv[2 * k + e], (long long)s);
        s -= cv[2 * k + e];
      }
      o.dims[1 + k] = s;
    }
  }
  c->out_shapes[0] = o;
  return RT_OK;
}

/* SpaceToBatch / BatchToSpace: rank 4, [2, 2] paddings; dims as the ND ops' with b = block_size. */
static int v1_shape(rt_shape_ctx *c, bool to_batch) {
  const rt_shape *x = &c->in_shapes[0], *p = &c->in_shapes[1];
  int64_t bs = rt_node_int(c->node, "block_size", 0), pv[4], bb;
  int n;
  if (x->ndims >= 0 && x->ndims != 4) return op_rank_error(c, 4, x->ndims);
  if (p->ndims >= 0 && p->ndims != 2) return op_rank_error(c, 2, p->ndims);
  if (x->ndims < 0) {
    c->out_shapes[0] = (rt_shape){.ndims = 4, .dims = {-1, -1, -1, -1}};
    return RT_OK;
  }
  rt_shape o = *x;
  unknown_dims(&o, 1, 3);
  bool kp = op_const_ints(c, 1, pv, 4, &n) && n == 4;
  if (!mul_ok(bs, bs, &bb)) return op_shape_error(c, 0, "block_size %lld is too large", (long long)bs);
  if (o.dims[0] >= 0) {
    if (to_batch) {
      if (!mul_ok(o.dims[0], bb, &o.dims[0])) o.dims[0] = -1;
    } else {
      if (o.dims[0] % bb)
        return op_shape_error(c, 0, "Dimension size must be evenly divisible by %lld but is %lld", (long long)bb,
                              (long long)o.dims[0]);
      o.dims[0] /= bb;
    }
  }
  if (kp)
    for (int k = 0; k < 2; k++) {
      int64_t s = x->dims[1 + k];
      if (pv[2 * k] < 0 || pv[2 * k + 1] < 0)
        return op_shape_error(c, 2, to_batch ? "paddings cannot be negative" : "crops cannot be negative");
      if (s < 0) continue;
      if (to_batch) {
        if (!add_ok(s, pv[2 * k], &s) || !add_ok(s, pv[2 * k + 1], &s)) continue;
        if (s % bs)
          return op_shape_error(c, 2, "Dimension size must be evenly divisible by %lld but is %lld", (long long)bs,
                                (long long)s);
        o.dims[1 + k] = s / bs;
      } else {
        if (!mul_ok(s, bs, &s)) continue;
        if (s < pv[2 * k] + pv[2 * k + 1])
          return op_shape_error(c, 2, "Negative dimension size caused by subtracting %lld from %lld",
                                (long long)(pv[2 * k] + pv[2 * k + 1]), (long long)s);
        o.dims[1 + k] = s - pv[2 * k] - pv[2 * k + 1];
      }
    }
  c->out_shapes[0] = o;
  return RT_OK;
}
static int space_to_batch_shape(rt_shape_ctx *c) { return v1_shape(c, true); }
static int batch_to_space_shape(rt_shape_ctx *c) { return v1_shape(c, false); }

/* SpaceToDepth (to_depth) / DepthToSpace: rank 4; H, W (NHWC) or dims 2, 3 (NCHW) scaled. */
static int depth_shape(rt_shape_ctx *c, bool to_depth) {
  const rt_shape *x = &c->in_shapes[0];
  int64_t bs = rt_node_int(c->node, "block_size", 0), bb;
  bool nhwc = is_nhwc(c->node);
  int h = nhwc ? 1 : 2, w = h + 1, ch = nhwc ? 3 : 1;
  if (x->ndims >= 0 && x->ndims != 4) return op_rank_error(c, 4, x->ndims);
  if (!mul_ok(bs, bs, &bb)) return op_shape_error(c, 0, "block_size %lld is too large", (long long)bs);
  if (x->ndims < 0) {
    c->out_shapes[0] = (rt_shape){.ndims = 4, .dims = {-1, -1, -1, -1}};
    return RT_OK;
  }
  rt_shape o = *x;
  if (to_depth) {
    for (int d = h; d <= w; d++)
      if (o.dims[d] >= 0) {
        if (o.dims[d] % bs)
          return op_shape_error(c, 0, "Dimension size must be evenly divisible by %lld but is %lld", (long long)bs,
                                (long long)o.dims[d]);
        o.dims[d] /= bs;
      }
    if (o.dims[ch] >= 0 && !mul_ok(o.dims[ch], bb, &o.dims[ch])) o.dims[ch] = -1;
  } else {
    for (int d = h; d <= w; d++)
      if (o.dims[d] >= 0 && !mul_ok(o.dims[d], bs, &o.dims[d])) o.dims[d] = -1;
    if (o.dims[ch] >= 0) {
      if (o.dims[ch] % bb)
        return op_shape_error(c, 0, "Dimension size must be evenly divisible by %lld but is %lld", (long long)bb,
                              (long long)o.dims[ch]);
      o.dims[ch] /= bb;
    }
  }
  c->out_shapes[0] = o;
  return RT_OK;
}
static int space_to_depth_shape(rt_shape_ctx *c) { return depth_shape(c, true); }
static int depth_to_space_shape(rt_shape_ctx *c) { return depth_shape(c, false); }

/* ---- gradients: each op of a pair is the other's, with the same block and pads/crops ---- */

static void copy_block_attrs(rt_node *n, const void *arg) {
  const rt_node *f = arg;
  rt_node_set_int(n, "block_size", rt_node_int(f, "block_size", 0));
  if (!strcmp(f->op, "SpaceToDepth") || !strcmp(f->op, "DepthToSpace"))
    rt_node_set_string(n, "data_format", rt_node_string(f, "data_format", "NHWC"));
}

static int nd_grad(rt_grad_ctx *c, const char *op) {
  if (!DY) return RT_OK;
  const char *in[] = {DY, IN(1), IN(2)};
  c->dx[0] = op_grad_node(c, op, op, 3, in, NULL, NULL);
  return c->st->code;
}
static int space_to_batch_nd_grad(rt_grad_ctx *c) { return nd_grad(c, "BatchToSpaceND"); }
static int batch_to_space_nd_grad(rt_grad_ctx *c) { return nd_grad(c, "SpaceToBatchND"); }

static int attr_grad(rt_grad_ctx *c, const char *op, int n_in) {
  if (!DY) return RT_OK;
  const char *in[] = {DY, n_in > 1 ? IN(1) : NULL};
  c->dx[0] = op_grad_node(c, op, op, n_in, in, copy_block_attrs, c->node);
  return c->st->code;
}
static int space_to_batch_grad(rt_grad_ctx *c) { return attr_grad(c, "BatchToSpace", 2); }
static int batch_to_space_grad(rt_grad_ctx *c) { return attr_grad(c, "SpaceToBatch", 2); }
static int space_to_depth_grad(rt_grad_ctx *c) { return attr_grad(c, "DepthToSpace", 1); }
static int depth_to_space_grad(rt_grad_ctx *c) { return attr_grad(c, "SpaceToDepth", 1); }

#define IDX "{int32, int64}"

static const rt_op_def space_ops[] = {
  {.name = "SpaceToBatchND", .inputs = "input: T, block_shape: Tblock_shape, paddings: Tpaddings",
   .outputs = "output: T", .attrs = "T: type, Tblock_shape: " IDX " = int32, Tpaddings: " IDX " = int32",
   .help = "Zero-pads the spatial dims, then moves each block_shape block's positions into the batch.",
   .shape = space_to_batch_nd_shape, .kernel = {[RT_DEV_CPU] = space_to_batch_nd_kernel},
   .grad = space_to_batch_nd_grad},
  {.name = "BatchToSpaceND", .inputs = "input: T, block_shape: Tblock_shape, crops: Tcrops",
   .outputs = "output: T", .attrs = "T: type, Tblock_shape: " IDX " = int32, Tcrops: " IDX " = int32",
   .help = "SpaceToBatchND's inverse: batch blocks back into the spatial dims, then cropped.",
   .shape = batch_to_space_nd_shape, .kernel = {[RT_DEV_CPU] = batch_to_space_nd_kernel},
   .grad = batch_to_space_nd_grad},
  {.name = "SpaceToBatch", .inputs = "input: T, paddings: Tpaddings", .outputs = "output: T",
   .attrs = "T: type, Tpaddings: " IDX " = int32, block_size: int >= 2",
   .help = "SpaceToBatchND of an NHWC input with block [block_size, block_size].",
   .shape = space_to_batch_shape, .kernel = {[RT_DEV_CPU] = space_to_batch_kernel}, .grad = space_to_batch_grad},
  {.name = "BatchToSpace", .inputs = "input: T, crops: Tidx", .outputs = "output: T",
   .attrs = "T: type, block_size: int >= 2, Tidx: " IDX " = int32",
   .help = "BatchToSpaceND of an NHWC input with block [block_size, block_size].",
   .shape = batch_to_space_shape, .kernel = {[RT_DEV_CPU] = batch_to_space_kernel}, .grad = batch_to_space_grad},
  {.name = "SpaceToDepth", .inputs = "input: T", .outputs = "output: T",
   .attrs = "T: type, block_size: int >= 2, data_format: string = 'NHWC'",
   .help = "Moves each block_size x block_size block of H and W into the channels.",
   .shape = space_to_depth_shape, .kernel = {[RT_DEV_CPU] = space_to_depth_kernel}, .grad = space_to_depth_grad},
  {.name = "DepthToSpace", .inputs = "input: T", .outputs = "output: T",
   .attrs = "T: type, block_size: int >= 2, data_format: string = 'NHWC'",
   .help = "SpaceToDepth's inverse: channels spread into block_size x block_size blocks of H and W.",
   .shape = depth_to_space_shape, .kernel = {[RT_DEV_CPU] = depth_to_space_kernel}, .grad = depth_to_space_grad},
};

void op_space_register(void) { rt_op_register(space_ops, OP_COUNT(space_ops)); }
