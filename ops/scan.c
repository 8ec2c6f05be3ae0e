/* Scans and index ops of TF1 models:
 *   Cumsum, Cumprod (x, axis; exclusive, reverse)    with gradients
 *   GatherNd(params, indices), ScatterNd(indices, updates, shape)   each the other's gradient
 *   Unique(x) -> y, idx                               first occurrences, in order
 * and the gradient of UnsortedSegmentSum (a Gather of dy). CPU only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "ops/ops_int.h"

#define IN(i) (c->node->inputs[i])
#define DY (c->dy[0])

static int64_t int_at(const rt_tensor *t, int64_t i) {
  return t->dtype == RT_INT64 ? ((const int64_t *)rt_tensor_data(t))[i] : ((const int32_t *)rt_tensor_data(t))[i];
}

static double num_at(const rt_tensor *t, int64_t i) {
  const void *d = rt_tensor_data(t);
  switch (t->dtype) {
  case RT_FLOAT: return ((const float *)d)[i];
  case RT_DOUBLE: return ((const double *)d)[i];
  case RT_INT32: return ((const int32_t *)d)[i];
  default: return (double)((const int64_t *)d)[i];
  }
}

/* ---- Cumsum, Cumprod ------------------------------------------------------------------- */

#define SCAN_LOOP(T)                                                                          \
  do {                                                                                        \
    const T *x = rt_tensor_data(in);                                                          \
    T *y = rt_tensor_data(o);                                                                 \
    for (int64_t a = 0; a < outer; a++)                                                       \
      for (int64_t b = 0; b < inner; b++) {                                                   \
        T acc = prod ? (T)1 : (T)0;                                                           \
        for (int64_t k = 0; k < len; k++) {                                                   \
          int64_t j = rev ? len - 1 - k : k, at = (a * len + j) * inner + b;                  \
          if (excl) y[at] = acc;                                                              \
          acc = prod ? (T)(acc * x[at]) : (T)(acc + x[at]);                                   \
          if (!excl) y[at] = acc;                                                             \
        }                                                                                     \
      }                                                                                       \
  } while (0)

static int scan_kernel(rt_kernel_ctx *c, bool prod) {
  const rt_tensor *in = c->inputs[0], *ax = c->inputs[1];
  int nd = in->shape.ndims;
  if (rt_tensor_numel(ax) != 1) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "ScanOp: axis must be a scalar, not a tensor");
  int64_t axis = int_at(ax, 0);
  if (axis < -nd || axis >= nd || nd == 0)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "ScanOp: Expected scan axis in the range [%d, %d), but got %lld", -nd, nd,
                           (long long)axis);
  if (axis < 0) axis += nd;
  bool excl = rt_node_bool(c->node, "exclusive", false), rev = rt_node_bool(c->node, "reverse", false);
  rt_tensor *o = rt_kernel_output(c, 0, in->dtype, &in->shape);
  if (!o) return c->st->code;
  int64_t outer = 1, inner = 1, len = in->shape.dims[axis];
  for (int d = 0; d < axis; d++) outer *= in->shape.dims[d];
  for (int d = (int)axis + 1; d < nd; d++) inner *= in->shape.dims[d];
  switch (in->dtype) {
  case RT_FLOAT: SCAN_LOOP(float); break;
  case RT_DOUBLE: SCAN_LOOP(double); break;
  case RT_INT32: SCAN_LOOP(int32_t); break;
  case RT_INT64: SCAN_LOOP(int64_t); break;
  default: return rt_kernel_error(c, RT_INVALID_ARGUMENT, "ScanOp: unsupported type %s", op_tf_type(in->dtype));
  }
  return RT_OK;
}

static int cumsum_kernel(rt_kernel_ctx *c) { return scan_kernel(c, false); }
static int cumprod_kernel(rt_kernel_ctx *c) { return scan_kernel(c, true); }

typedef struct scan_flags {
  bool exclusive, reverse;
} scan_flags;

static void set_scan(rt_node *n, const void *arg) {
  const scan_flags *f = arg;
  rt_node_set_bool(n, "exclusive", f->exclusive);
  rt_node_set_bool(n, "reverse", f->reverse);
}

/* d cumsum = cumsum of dy the other way (the same exclusivity). */
static int cumsum_grad(rt_grad_ctx *c) {
  if (!DY) return RT_OK;
  scan_flags f = {rt_node_bool(c->node, "exclusive", false), !rt_node_bool(c->node, "reverse", false)};
  const char *in[] = {DY, IN(1)};
  c->dx[0] = op_grad_node(c, "Cumsum", "Cumsum", 2, in, set_scan, &f);
  return c->st->code;
}

/* d cumprod (x without zeros, as TF's): cumsum(dy * y) the other way, / x. */
static int cumprod_grad(rt_grad_ctx *c) {
  if (!DY) return RT_OK;
  scan_flags f = {rt_node_bool(c->node, "exclusive", false), !rt_node_bool(c->node, "reverse", false)};
  char *p = op_g2(c, "Mul", DY, c->node->name);
  const char *in[] = {p, IN(1)};
  char *s = p ? op_grad_node(c, "Cumsum", "Cumsum", 2, in, set_scan, &f) : NULL;
  c->dx[0] = s ? op_g2(c, "RealDiv", s, IN(0)) : NULL;
  free(p), free(s);
  return c->st->code;
}

/* ---- GatherNd, ScatterNd ----------------------------------------------------------------- */

/* The offset (in slices of `slice` elements) of index row i of ix (k columns) into dims;
 * -1 when out of range, its text in buf. */
static int64_t nd_offset(const rt_tensor *ix, int64_t i, int k, const rt_shape *s, char *buf, size_t n) {
  int64_t off = 0;
  bool ok = true;
  for (int d = 0; d < k; d++) {
    int64_t v = int_at(ix, i * k + d);
    ok = ok && v >= 0 && v < s->dims[d];
    off = off * s->dims[d] + v;
  }
  if (ok) return off;
  size_t w = (size_t)snprintf(buf, n, "[");
  for (int d = 0; d < k && w < n; d++) w += (size_t)snprintf(buf + w, n - w, "%s%lld", d ? ", " : "", (long long)int_at(ix, i * k + d));
  if (w < n) snprintf(buf + w, n - w, "]");
  return -1;
}

static void index_pos(const rt_shape *s, int nd, int64_t i, char *buf, size_t n) {
  int64_t coord[RT_MAX_DIMS];
  for (int d = nd - 1; d >= 0; d--) coord[d] = i % s->dims[d], i /= s->dims[d];
  size_t w = 0;
  for (int d = 0; d < nd && w < n; d++) w += (size_t)snprintf(buf + w, n - w, "%s%lld", d ? "," : "", (long long)coord[d]);
  if (!nd) snprintf(buf, n, "0");
}

static int gather_nd_kernel(rt_kernel_ctx *c) {
  const rt_tensor *p = c->inputs[0], *ix = c->inputs[1];
  char a[128], b[128], pos[128];
  if (ix->shape.ndims < 1) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "indices must be at least a vector");
  int k = (int)ix->shape.dims[ix->shape.ndims - 1];
  if (k > p->shape.ndims)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "index innermost dimension length must be <= params rank; saw: %d vs. %d", k,
                           p->shape.ndims);
  rt_shape os = {.ndims = 0};
  for (int d = 0; d < ix->shape.ndims - 1; d++) os.dims[os.ndims++] = ix->shape.dims[d];
  if (os.ndims + p->shape.ndims - k > RT_MAX_DIMS) return rt_kernel_error(c, RT_UNIMPLEMENTED, "GatherNd: output rank too large");
  int64_t slice = 1;
  for (int d = k; d < p->shape.ndims; d++) os.dims[os.ndims++] = p->shape.dims[d], slice *= p->shape.dims[d];
  rt_tensor *o = rt_kernel_output(c, 0, p->dtype, &os);
  if (!o) return c->st->code;
  int64_t n = k ? rt_tensor_numel(ix) / k : rt_tensor_numel(ix);
  size_t w = rt_dtype_size(p->dtype);
  bool str = rt_dtype_is_str(p->dtype);
  for (int64_t i = 0; i < n; i++) {
    int64_t off = nd_offset(ix, i, k, &p->shape, a, sizeof a);
    if (off < 0) {
      index_pos(&ix->shape, ix->shape.ndims - 1, i, pos, sizeof pos);
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "indices[%s] = %s does not index into param shape %s, node name: %s", pos,
                             a, op_shape_tf(&p->shape, b, sizeof b), c->node->name);
    }
    if (str) {
      for (int64_t j = 0; j < slice; j++) {
        const rt_str *s = (const rt_str *)rt_tensor_data(p) + off * slice + j;
        if (rt_tensor_set_str(o, i * slice + j, s->ptr ? s->ptr : "", s->len) < 0)
          return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
      }
    } else if (slice) {
      memcpy((char *)rt_tensor_data(o) + (size_t)(i * slice) * w, (const char *)rt_tensor_data(p) + (size_t)(off * slice) * w,
             (size_t)slice * w);
    }
  }
  return RT_OK;
}

#define SCATTER_ADD(T)                                                                     \
  do {                                                                                     \
    T *y = rt_tensor_data(o);                                                              \
    const T *u = rt_tensor_data(up);                                                       \
    for (int64_t j = 0; j < slice; j++) y[off * slice + j] += u[i * slice + j];            \
  } while (0)

static int scatter_nd_kernel(rt_kernel_ctx *c) {
  const rt_tensor *ix = c->inputs[0], *up = c->inputs[1], *sh = c->inputs[2];
  char a[128], b[128], pos[128];
  if (sh->shape.ndims != 1 || rt_tensor_numel(sh) > RT_MAX_DIMS)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "shape must be a vector of at most %d dims", RT_MAX_DIMS);
  rt_shape os = {.ndims = (int)rt_tensor_numel(sh)};
  for (int d = 0; d < os.ndims; d++) {
    os.dims[d] = int_at(sh, d);
    if (os.dims[d] < 0) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "shape has a negative dimension");
  }
  if (ix->shape.ndims < 1) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "indices must be at least a vector");
  int k = (int)ix->shape.dims[ix->shape.ndims - 1];
  if (k > os.ndims) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "index innermost dimension length must be <= output rank");
  int64_t slice = 1, n = k ? rt_tensor_numel(ix) / k : 0;
  for (int d = k; d < os.ndims; d++) slice *= os.dims[d];
  if (rt_tensor_numel(up) != n * slice)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "The outer %d dimensions of indices.shape=%s must match the outer %d dimensions "
                           "of updates.shape=%s", ix->shape.ndims - 1, op_shape_tf(&ix->shape, a, sizeof a),
                           ix->shape.ndims - 1, op_shape_tf(&up->shape, b, sizeof b));
  rt_tensor *o = rt_kernel_output(c, 0, up->dtype, &os);
  if (!o) return c->st->code;
  memset(rt_tensor_data(o), 0, rt_tensor_nbytes(o));
  for (int64_t i = 0; i < n; i++) {
    int64_t off = nd_offset(ix, i, k, &os, a, sizeof a);
    if (off < 0) {
      index_pos(&ix->shape, ix->shape.ndims - 1, i, pos, sizeof pos);
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "indices[%s] = %s does not index into shape %s", pos, a,
                             op_shape_tf(&os, b, sizeof b));
    }
    switch (up->dtype) {
    case RT_FLOAT: SCATTER_ADD(float); break;
    case RT_DOUBLE: SCATTER_ADD(double); break;
    case RT_INT32: SCATTER_ADD(int32_t); break;
    case RT_INT64: SCATTER_ADD(int64_t); break;
    default: return rt_kernel_error(c, RT_INVALID_ARGUMENT, "ScatterNd: unsupported type %s", op_tf_type(up->dtype));
    }
  }
  return RT_OK;
}

static int gather_nd_grad(rt_grad_ctx *c) {
  if (!DY) return RT_OK;
  char *s = op_g1(c, "Shape", IN(0));
  const char *in[] = {IN(1), DY, s};
  c->dx[0] = s ? op_grad_node(c, "ScatterNd", "ScatterNd", 3, in, NULL, NULL) : NULL;
  free(s);
  return c->st->code;
}

static int scatter_nd_grad(rt_grad_ctx *c) {
  if (!DY) return RT_OK;
  c->dx[1] = op_g2(c, "GatherNd", DY, IN(0));
  return c->st->code;
}

/* UnsortedSegmentSum's gradient: each data row gets its segment's dy row. */
int op_unsorted_segment_sum_grad(rt_grad_ctx *c) {
  if (!DY) return RT_OK;
  c->dx[0] = op_g2(c, "Gather", DY, IN(1));
  return c->st->code;
}

/* ---- Unique ------------------------------------------------------------------------------ */

static int unique_kernel(rt_kernel_ctx *c) {
  const rt_tensor *x = c->inputs[0];
  if (x->shape.ndims != 1) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "unique expects a 1D vector.");
  int64_t n = x->shape.dims[0];
  rt_dtype it = rt_node_type(c->node, "out_idx", RT_INT32);
  int64_t *first = xmalloc((size_t)(n + 1) * sizeof *first), nu = 0;   /* positions of the unique values */
  int64_t *idx = xmalloc((size_t)(n + 1) * sizeof *idx);
  /* open addressing over the values' bytes */
  int64_t cap = 16;
  while (cap < 2 * n) cap *= 2;
  int64_t *slot = xmalloc((size_t)cap * sizeof *slot);
  for (int64_t i = 0; i < cap; i++) slot[i] = -1;
  bool str = rt_dtype_is_str(x->dtype);
  size_t w = rt_dtype_size(x->dtype);
  for (int64_t i = 0; i < n; i++) {
    const char *p;
    size_t len;
    if (str) {
      const rt_str *s = (const rt_str *)rt_tensor_data(x) + i;
      p = s->ptr ? s->ptr : "", len = s->len;
    } else {
      p = (const char *)rt_tensor_data(x) + (size_t)i * w, len = w;
    }
    uint64_t h = 1469598103934665603ULL;
    for (size_t k = 0; k < len; k++) h = (h ^ (unsigned char)p[k]) * 1099511628211ULL;
    if (!str && (x->dtype == RT_FLOAT || x->dtype == RT_DOUBLE) && num_at(x, i) == 0) h = 0;   /* -0.0 == 0.0 */
    int64_t at = (int64_t)(h & (uint64_t)(cap - 1));
    for (;; at = (at + 1) & (cap - 1)) {
      if (slot[at] < 0) {
        slot[at] = nu;
        first[nu] = i;
        idx[i] = nu++;
        break;
      }
      int64_t f = first[slot[at]];
      bool same;
      if (str) {
        const rt_str *s = (const rt_str *)rt_tensor_data(x) + f;
        same = s->len == len && !memcmp(s->ptr ? s->ptr : "", p, len);
      } else if (x->dtype == RT_FLOAT || x->dtype == RT_DOUBLE) {
        same = num_at(x, f) == num_at(x, i);
      } else {
        same = !memcmp((const char *)rt_tensor_data(x) + (size_t)f * w, p, w);
      }
      if (same) {
        idx[i] = slot[at];
        break;
      }
    }
  }
  free(slot);
  rt_shape ys = {.ndims = 1, .dims = {nu}};
  rt_tensor *y = rt_kernel_output(c, 0, x->dtype, &ys);
  rt_tensor *io = y ? rt_kernel_output(c, 1, it, &x->shape) : NULL;
  int rc = io ? RT_OK : c->st->code;
  for (int64_t j = 0; !rc && j < nu; j++) {
    if (str) {
      const rt_str *s = (const rt_str *)rt_tensor_data(x) + first[j];
      if (rt_tensor_set_str(y, j, s->ptr ? s->ptr : "", s->len) < 0) rc = rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
    } else {
      memcpy((char *)rt_tensor_data(y) + (size_t)j * w, (const char *)rt_tensor_data(x) + (size_t)first[j] * w, w);
    }
  }
  for (int64_t i = 0; !rc && i < n; i++) {
    if (it == RT_INT64) ((int64_t *)rt_tensor_data(io))[i] = idx[i];
    else ((int32_t *)rt_tensor_data(io))[i] = (int32_t)idx[i];
  }
  free(first);
  free(idx);
  return rc;
}

/* ---- shapes and the table ------------------------------------------------------------------ */

static int same_shape(rt_shape_ctx *c) {
  c->out_shapes[0] = c->in_shapes[0];
  return RT_OK;
}

static int gather_nd_shape(rt_shape_ctx *c) {
  const rt_shape *p = &c->in_shapes[0], *ix = &c->in_shapes[1];
  if (p->ndims < 0 || ix->ndims < 1 || ix->dims[ix->ndims - 1] < 0) return RT_OK;
  int k = (int)ix->dims[ix->ndims - 1];
  if (k > p->ndims) {
    char a[128], b[128];
    return op_shape_error(c, 0, "indices.shape[-1] must be <= params.rank, but saw indices shape: %s and params shape: %s",
                          op_shape_tf(ix, a, sizeof a), op_shape_tf(p, b, sizeof b));
  }
  rt_shape o = {.ndims = 0};
  for (int d = 0; d < ix->ndims - 1; d++) o.dims[o.ndims++] = ix->dims[d];
  for (int d = k; d < p->ndims && o.ndims < RT_MAX_DIMS; d++) o.dims[o.ndims++] = p->dims[d];
  c->out_shapes[0] = o;
  return RT_OK;
}

static int scatter_nd_shape(rt_shape_ctx *c) {
  int64_t d[RT_MAX_DIMS];
  int n;
  if (op_const_ints(c, 2, d, RT_MAX_DIMS, &n)) c->out_shapes[0] = rt_shape_make(n, d);
  return RT_OK;
}

static int unique_shape(rt_shape_ctx *c) {
  c->out_shapes[0] = (rt_shape){.ndims = 1, .dims = {-1}};
  c->out_shapes[1] = c->in_shapes[0];
  return RT_OK;
}

#define SCAN_ATTRS "exclusive: bool = false, reverse: bool = false, T: {float, double, int32, int64}, Tidx: {int32, int64} = int32"
#define IDXT "Tindices: {int32, int64}"

static const rt_op_def scan_ops[] = {
  {.name = "Cumsum", .inputs = "x: T, axis: Tidx", .outputs = "out: T", .attrs = SCAN_ATTRS,
   .help = "Running sums along axis (exclusive: each sum without its own element; reverse: from the end).",
   .shape = same_shape, .kernel = {[RT_DEV_CPU] = cumsum_kernel}, .grad = cumsum_grad},
  {.name = "Cumprod", .inputs = "x: T, axis: Tidx", .outputs = "out: T", .attrs = SCAN_ATTRS,
   .help = "Running products along axis.", .shape = same_shape, .kernel = {[RT_DEV_CPU] = cumprod_kernel},
   .grad = cumprod_grad},
  {.name = "GatherNd", .inputs = "params: Tparams, indices: Tindices", .outputs = "output: Tparams",
   .attrs = "Tparams: type, " IDXT, .help = "Slices of params at the index rows of indices (the last axis indexes).",
   .shape = gather_nd_shape, .kernel = {[RT_DEV_CPU] = gather_nd_kernel}, .grad = gather_nd_grad},
  {.name = "ScatterNd", .inputs = "indices: Tindices, updates: T, shape: Tindices", .outputs = "output: T",
   .attrs = "T: {float, double, int32, int64}, " IDXT,
   .help = "Zeros of shape with updates added at the index rows of indices (duplicates sum).",
   .shape = scatter_nd_shape, .kernel = {[RT_DEV_CPU] = scatter_nd_kernel}, .grad = scatter_nd_grad},
  {.name = "Unique", .inputs = "x: T", .outputs = "y: T, idx: out_idx", .attrs = "T: type, out_idx: {int32, int64} = int32",
   .help = "The distinct values of a vector in first-seen order, and each element's index among them.",
   .shape = unique_shape, .kernel = {[RT_DEV_CPU] = unique_kernel}, .grad = op_no_grad},
};

void op_scan_register(void) { rt_op_register(scan_ops, OP_COUNT(scan_ops)); }
