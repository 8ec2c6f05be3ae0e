/* Array ops: shapes and reshaping, slicing, joining and splitting, gathering, filling.
 * One row per op; gradients are graph ops, built as TF1's array_grad.py builds them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "ops/ops_int.h"

#define IDX "{int32, int64}"

/* ---- StridedSlice's spec (shared with the kernels) ---------------------------------- */

enum { NEW_AXIS = -1, SHRINK_AXIS = -2 };

int op_strided_spec(const rt_shape *in, int n, const int64_t *begin, const int64_t *end,
                    const int64_t *strides, const rt_node *node, op_slice_spec *sp,
                    rt_status *st) {
  unsigned bm = (unsigned)rt_node_int(node, "begin_mask", 0);
  unsigned em = (unsigned)rt_node_int(node, "end_mask", 0);
  unsigned ell = (unsigned)rt_node_int(node, "ellipsis_mask", 0);
  unsigned nam = (unsigned)rt_node_int(node, "new_axis_mask", 0);
  unsigned sam = (unsigned)rt_node_int(node, "shrink_axis_mask", 0);
  int r = in->ndims, ns = n;
  if (ell & (ell - 1))
    return rt_error(st, RT_INVALID_ARGUMENT, "Multiple ellipses in slice spec not allowed");
  if (!ell) ell = 1u << ns++;   /* an implicit ellipsis at the end */
  int ell_pos = __builtin_ctz(ell), new_after = 0;
  for (int i = ell_pos + 1; i < n; i++) new_after += (int)(nam >> i & 1);
  /* dense spec, one entry per input dim */
  int64_t db[RT_MAX_DIMS], de[RT_MAX_DIMS], ds[RT_MAX_DIMS];
  bool dbm[RT_MAX_DIMS], dem[RT_MAX_DIMS], dshrink[RT_MAX_DIMS];
  int gather[2 * RT_MAX_DIMS + 2], ng = 0, full = 0;
  for (int i = 0; i < ns; i++) {
    if (ell >> i & 1) {
      int next = r - (ns - i) + 1 + new_after;
      if (next > r) next = r;
      for (; full < next; full++) {
        db[full] = de[full] = 0, ds[full] = 1;
        dbm[full] = dem[full] = true, dshrink[full] = false;
        gather[ng++] = full;
      }
    } else if (nam >> i & 1) {
      if (ng < 2 * RT_MAX_DIMS) gather[ng++] = NEW_AXIS;
    } else {
      if (full >= r)
        return rt_error(st, RT_INVALID_ARGUMENT,
                        "Index out of range using input dim %d; input has only %d dims", full, r);
      db[full] = begin[i], de[full] = end[i], ds[full] = strides[i];
      dbm[full] = bm >> i & 1, dem[full] = em >> i & 1, dshrink[full] = sam >> i & 1;
      gather[ng++] = dshrink[full] ? SHRINK_AXIS : full;
      full++;
    }
  }
  sp->nd = r;
  for (int d = 0; d < r; d++) {
    int64_t dim = in->dims[d], s = ds[d];
    if (s == 0) return rt_error(st, RT_INVALID_ARGUMENT, "strides[%d] must be non-zero", d);
    sp->stride[d] = s;
    if (dshrink[d]) {
      int64_t x = db[d] < 0 && dim >= 0 ? db[d] + dim : db[d];
      if (dim >= 0 && (x < 0 || x >= dim))
        return rt_error(st, RT_INVALID_ARGUMENT, "slice index %lld of dimension %d out of bounds.",
                        (long long)db[d], d);
      sp->begin[d] = x, sp->size[d] = 1, sp->stride[d] = 1;
      continue;
    }
    if (dim < 0) {
      sp->begin[d] = 0, sp->size[d] = -1;
      continue;
    }
    int64_t be[2];
    for (int k = 0; k < 2; k++) {
      int64_t x = k ? de[d] : db[d];
      if (k ? dem[d] : dbm[d]) {
        be[k] = s > 0 ? (k ? dim : 0) : (k ? -1 : dim - 1);
      } else {
        x = x < 0 ? x + dim : x;
        int64_t lo = s > 0 ? 0 : -1, hi = s > 0 ? dim : dim - 1;
        be[k] = x < lo ? lo : x > hi ? hi : x;
      }
    }
    int64_t len = be[1] - be[0];
    sp->begin[d] = be[0];
    sp->size[d] = len == 0 || (len < 0) != (s < 0) ? 0 : len / s + (len % s != 0);
  }
  sp->out.ndims = 0;
  for (int i = 0; i < ng && sp->out.ndims < RT_MAX_DIMS; i++)
    if (gather[i] == NEW_AXIS) sp->out.dims[sp->out.ndims++] = 1;
    else if (gather[i] >= 0) sp->out.dims[sp->out.ndims++] = sp->size[gather[i]];
  return RT_OK;
}

/* ---- shape functions ---------------------------------------------------------------- */

#define IN_SHAPE(i) (&c->in_shapes[i])

static int64_t numel_or(const rt_shape *s) { return s->ndims < 0 ? -1 : rt_shape_numel(s); }

/* A rank-r shape of unknown dims; unknown rank when r < 0. */
static rt_shape unknown_dims(int64_t r) {
  rt_shape s = rt_shape_unknown();
  if (r < 0 || r > RT_MAX_DIMS) return s;
  s.ndims = (int)r;
  for (int d = 0; d < s.ndims; d++) s.dims[d] = -1;
  return s;
}

/* Output 0 from a shape-valued input i: exact when constant, else its rank when known. */
static int shape_from_input(rt_shape_ctx *c, int i) {
  int64_t v[RT_MAX_DIMS];
  int n;
  if (op_const_ints(c, i, v, RT_MAX_DIMS, &n)) {
    for (int d = 0; d < n; d++)
      if (v[d] < 0) return op_shape_error(c, 1u << i, "Dimension %d must be >= 0", d);
    c->out_shapes[0] = rt_shape_make(n, v);
  } else {
    c->out_shapes[0] = unknown_dims(IN_SHAPE(i)->ndims == 1 ? IN_SHAPE(i)->dims[0] : -1);
  }
  return RT_OK;
}

/* Reshape to a shape vector known in part: its known sizes, and the one unknown one when
 * the input's element count and the rest are known. */
static int reshape_partial(rt_shape_ctx *c, rt_shape o) {
  int64_t in = numel_or(IN_SHAPE(0)), known = 1;
  int unk = -1, n_unk = 0;
  for (int d = 0; d < o.ndims; d++) {
    if (o.dims[d] >= 0) known *= o.dims[d];
    else unk = d, n_unk++;
  }
  if (n_unk == 1 && in >= 0 && known > 0 && in % known == 0) o.dims[unk] = in / known;
  c->out_shapes[0] = o;
  return RT_OK;
}

static int reshape_shape(rt_shape_ctx *c) {
  int64_t v[RT_MAX_DIMS];
  int n;
  rt_shape part;
  if (!op_const_ints(c, 1, v, RT_MAX_DIMS, &n))
    return op_shape_input(c, 1, &part) ? reshape_partial(c, part) : shape_from_input(c, 1);
  int64_t known = 1, in = numel_or(IN_SHAPE(0));
  int unk = -1;
  rt_shape o = rt_shape_make(n, v);
  for (int d = 0; d < n; d++) {
    if (v[d] >= 0) {
      known *= v[d];
    } else if (v[d] == -1 && unk < 0) {
      unk = d;
    } else if (v[d] == -1) {
      return op_shape_error(c, 0, "Cannot infer the missing input size for an empty tensor "
                                  "unless all specified input sizes are non-zero");
    } else {
      return op_shape_error(c, 2, "Size %d must be non-negative, not %lld", d, (long long)v[d]);
    }
  }
  if (in >= 0 && unk >= 0 && known > 0) {
    if (in % known == 0) o.dims[unk] = in / known;
  }
  /* input dims partly known, the target fully: the known part must divide it (TF's check) */
  int64_t known_in = 1;
  const rt_shape *is = IN_SHAPE(0);
  for (int d = 0; in < 0 && is->ndims >= 0 && d < is->ndims; d++) known_in *= is->dims[d] >= 0 ? is->dims[d] : 1;
  bool indivisible = in < 0 && is->ndims >= 0 && unk < 0 && known_in > 0 && known % known_in;
  if (indivisible || (in >= 0 && ((unk < 0 && in != known) || (unk >= 0 && known > 0 && in % known)))) {
    char a[160], b[160];
    int rc = indivisible
                 ? op_shape_error(c, 0, "Dimension size must be evenly divisible by %lld but is %lld",
                                  (long long)known_in, (long long)known)
                 : op_shape_error(c, 0, "Cannot reshape a tensor with %lld elements to shape %s (%lld "
                                        "elements)", (long long)in, op_shape_tf(&o, a, sizeof a),
                                  (long long)known);
    size_t len = strlen(c->st->msg);
    if (len) c->st->msg[len - 1] = '\0';
    snprintf(c->st->msg + len - 1, sizeof c->st->msg - (len - 1),
             " and with input tensors computed as partial shapes: input[1] = %s.",
             op_shape_tf(&o, b, sizeof b));
    return rc;
  }
  c->out_shapes[0] = o;
  return RT_OK;
}

static int shape_shape(rt_shape_ctx *c) {
  int r = IN_SHAPE(0)->ndims;
  c->out_shapes[0] = rt_shape_make(1, (int64_t[]){r});
  return RT_OK;
}

static int scalar_shape(rt_shape_ctx *c) {
  c->out_shapes[0] = rt_shape_scalar();
  return RT_OK;
}

static int fill_shape(rt_shape_ctx *c) {
  if (IN_SHAPE(1)->ndims > 0) return op_rank_error(c, 0, IN_SHAPE(1)->ndims);
  return shape_from_input(c, 0);
}

static int transpose_shape(rt_shape_ctx *c) {
  const rt_shape *x = IN_SHAPE(0), *p = IN_SHAPE(1);
  int64_t perm[RT_MAX_DIMS];
  int n;
  if (x->ndims >= 0 && p->ndims == 1 && p->dims[0] >= 0 && p->dims[0] != x->ndims)
    return op_shape_error(c, 0, "Dimension must be %d but is %lld", x->ndims, (long long)p->dims[0]);
  if (x->ndims < 0 || !op_const_ints(c, 1, perm, RT_MAX_DIMS, &n)) {
    c->out_shapes[0] = unknown_dims(x->ndims >= 0 ? x->ndims : p->ndims == 1 ? p->dims[0] : -1);
    return RT_OK;
  }
  bool seen[RT_MAX_DIMS] = {0};
  rt_shape o = {.ndims = n};
  for (int d = 0; d < n; d++) {
    if (perm[d] < 0 || perm[d] >= n)
      return op_shape_error(c, 2, "perm dim %lld is out of range of input rank %d",
                            (long long)perm[d], n);
    if (seen[perm[d]])
      return op_shape_error(c, 2, "%lld is duplicated in perm", (long long)perm[d]);
    seen[perm[d]] = true;
    o.dims[d] = x->dims[perm[d]];
  }
  c->out_shapes[0] = o;
  return RT_OK;
}

static int expand_dims_shape(rt_shape_ctx *c) {
  const rt_shape *x = IN_SHAPE(0);
  int64_t dim;
  int n;
  if (x->ndims < 0 || !op_const_ints(c, 1, &dim, 1, &n) || n != 1) {
    c->out_shapes[0] = unknown_dims(x->ndims >= 0 ? x->ndims + 1 : -1);
    return RT_OK;
  }
  if (dim < -1 - x->ndims || dim > x->ndims)
    return op_shape_error(c, 2, "Tried to expand dim index %lld for tensor with %d dimensions.",
                          (long long)dim, x->ndims);
  if (x->ndims >= RT_MAX_DIMS) return op_shape_error(c, 0, "Too many dimensions");
  if (dim < 0) dim += x->ndims + 1;
  rt_shape o = {.ndims = x->ndims + 1};
  for (int d = 0, k = 0; d < o.ndims; d++) o.dims[d] = d == dim ? 1 : x->dims[k++];
  c->out_shapes[0] = o;
  return RT_OK;
}

/* Squeeze's kept dims (shared by the shape function and the kernel through the node). */
static int squeeze_dims(const rt_shape *x, const rt_node *node, rt_shape *o, char *err,
                        size_t n) {
  const rt_attr_value *a = rt_node_attr(node, "squeeze_dims");
  int na = a && a->kind == RT_ATTR_LIST_INT ? a->list.n : 0;
  const int64_t *ax = na ? a->list.v : NULL;
  bool sq[RT_MAX_DIMS] = {0};
  for (int i = 0; i < na; i++) {
    int64_t d = ax[i] < 0 ? ax[i] + x->ndims : ax[i];
    if (d < 0 || d >= x->ndims) {
      snprintf(err, n, "Tried to squeeze dim index %lld for tensor with %d dimensions.",
               (long long)ax[i], x->ndims);
      return RT_INVALID_ARGUMENT;
    }
    if (x->dims[d] >= 0 && x->dims[d] != 1) {
      snprintf(err, n, "Can not squeeze dim[%lld], expected a dimension of 1, got %lld",
               (long long)d, (long long)x->dims[d]);
      return RT_INVALID_ARGUMENT;
    }
    sq[d] = true;
  }
  o->ndims = 0;
  for (int d = 0; d < x->ndims; d++) {
    if (!na && x->dims[d] < 0) {   /* may or may not be 1 */
      *o = rt_shape_unknown();
      return RT_OK;
    }
    if (!(na ? sq[d] : x->dims[d] == 1)) o->dims[o->ndims++] = x->dims[d];
  }
  return RT_OK;
}

static int squeeze_shape(rt_shape_ctx *c) {
  char err[256];
  if (IN_SHAPE(0)->ndims < 0) return RT_OK;
  if (squeeze_dims(IN_SHAPE(0), c->node, &c->out_shapes[0], err, sizeof err))
    return op_shape_error(c, 0, "%s", err);
  return RT_OK;
}

/* Join n shapes along axis (stack: a new axis). */
static int join_shapes(rt_shape_ctx *c, int first, int n, int64_t axis, bool stack) {
  rt_shape s = rt_shape_unknown();
  int64_t total = 0;
  for (int i = first; i < first + n; i++) {
    const rt_shape *t = IN_SHAPE(i);
    if (t->ndims < 0) {
      total = -1;
      continue;
    }
    if (s.ndims < 0) {
      s = *t;
    } else if (t->ndims != s.ndims) {
      if (stack)
        return op_shape_error(c, 0, "Shapes must be equal rank, but are %d and %d\n\tFrom "
                                    "merging shape %d with other shapes", s.ndims, t->ndims, first);
      return op_rank_error(c, s.ndims, t->ndims);
    }
    int r = t->ndims;
    int64_t ax = axis < 0 ? axis + r + stack : axis;
    if (ax < 0 || ax >= r + stack)
      return op_shape_error(c, 0, "%s %lld is not in the range [%d, %d)",
                            stack ? "axis" : "ConcatOp : Expected concatenating dimensions in "
                                             "the range [" , (long long)axis, -r - stack, r + stack);
    for (int d = 0; d < r; d++) {
      if (!stack && d == ax) continue;
      if (s.dims[d] < 0) s.dims[d] = t->dims[d];
      else if (t->dims[d] >= 0 && t->dims[d] != s.dims[d]) {
        char a[160], b[160];
        return op_shape_error(c, 0, "Dimension %d in both shapes must be equal, but are %lld and "
                                    "%lld. Shapes are %s and %s.%s", d, (long long)s.dims[d],
                              (long long)t->dims[d], op_shape_tf(&s, a, sizeof a),
                              op_shape_tf(t, b, sizeof b),
                              stack ? "\n\tFrom merging shape 0 with other shapes" : "");
      }
    }
    if (!stack && total >= 0) total = t->dims[ax] < 0 ? -1 : total + t->dims[ax];
  }
  if (s.ndims < 0) return RT_OK;
  int64_t ax = axis < 0 ? axis + s.ndims + stack : axis;
  if (stack) {
    if (s.ndims >= RT_MAX_DIMS) return op_shape_error(c, 0, "Too many dimensions");
    memmove(s.dims + ax + 1, s.dims + ax, sizeof *s.dims * (size_t)(s.ndims - ax));
    s.ndims++;
    s.dims[ax] = n;
  } else {
    s.dims[ax] = total;
  }
  c->out_shapes[0] = s;
  return RT_OK;
}

static int concat_shape(rt_shape_ctx *c) {
  int n = c->n_inputs - 1;
  int64_t axis;
  int k;
  if (!op_const_ints(c, n, &axis, 1, &k) || k != 1) {
    int64_t r = -1;
    for (int i = 0; i < n; i++)
      if (IN_SHAPE(i)->ndims >= 0) r = IN_SHAPE(i)->ndims;
    c->out_shapes[0] = unknown_dims(r);
    return RT_OK;
  }
  return join_shapes(c, 0, n, axis, false);
}

static int pack_shape(rt_shape_ctx *c) {
  return join_shapes(c, 0, c->n_inputs, rt_node_int(c->node, "axis", 0), true);
}

static int split_shape(rt_shape_ctx *c) {
  const rt_shape *x = IN_SHAPE(1);
  int64_t axis, n = rt_node_int(c->node, "num_split", 1);
  int k;
  rt_shape o = x->ndims >= 0 ? unknown_dims(x->ndims) : rt_shape_unknown();
  if (x->ndims >= 0 && op_const_ints(c, 0, &axis, 1, &k) && k == 1) {
    if (axis < -x->ndims || axis >= x->ndims)
      return op_shape_error(c, 1, "Shape must be at least rank %lld but is rank %d",
                            (long long)(axis < 0 ? -axis : axis + 1), x->ndims);
    if (axis < 0) axis += x->ndims;
    o = *x;
    if (x->dims[axis] >= 0 && x->dims[axis] % n)
      return op_shape_error(c, 0, "Dimension size must be evenly divisible by %lld but is %lld",
                            (long long)n, (long long)x->dims[axis]);
    if (x->dims[axis] >= 0) o.dims[axis] /= n;
  }
  for (int i = 0; i < c->n_outputs; i++) c->out_shapes[i] = o;
  return RT_OK;
}

static int unpack_shape(rt_shape_ctx *c) {
  const rt_shape *x = IN_SHAPE(0);
  int64_t axis = rt_node_int(c->node, "axis", 0), num = rt_node_int(c->node, "num", 0);
  if (x->ndims < 0) return RT_OK;
  if (axis < -x->ndims || axis >= x->ndims)
    return op_shape_error(c, 0, "Invalid axis: %lld; must be in [%d, %d)", (long long)axis,
                          -x->ndims, x->ndims);
  if (axis < 0) axis += x->ndims;
  if (x->dims[axis] >= 0 && x->dims[axis] != num)
    return op_shape_error(c, 0, "Dimension must be %lld but is %lld", (long long)num,
                          (long long)x->dims[axis]);
  rt_shape o = {.ndims = 0};
  for (int d = 0; d < x->ndims; d++)
    if (d != axis) o.dims[o.ndims++] = x->dims[d];
  for (int i = 0; i < c->n_outputs; i++) c->out_shapes[i] = o;
  return RT_OK;
}

static int slice_shape(rt_shape_ctx *c) {
  const rt_shape *x = IN_SHAPE(0);
  int64_t b[RT_MAX_DIMS], s[RT_MAX_DIMS];
  int nb, nsz;
  bool kb = op_const_ints(c, 1, b, RT_MAX_DIMS, &nb), ks = op_const_ints(c, 2, s, RT_MAX_DIMS, &nsz);
  if (x->ndims < 0 || !kb || !ks) {
    int64_t r = x->ndims >= 0 ? x->ndims : IN_SHAPE(1)->ndims == 1 ? IN_SHAPE(1)->dims[0] : -1;
    c->out_shapes[0] = unknown_dims(r);
    return RT_OK;
  }
  if (nb != x->ndims || nsz != x->ndims)
    return op_shape_error(c, 0, "Expected begin and size arguments to be 1-D tensors of size %d, "
                                "but got shapes [%d] and [%d] instead.", x->ndims, nb, nsz);
  rt_shape o = {.ndims = x->ndims};
  for (int d = 0; d < x->ndims; d++) {
    int64_t dim = x->dims[d];
    if (dim >= 0 && (b[d] < 0 || b[d] > dim))
      return op_shape_error(c, 6, "Expected begin[%d] in [0, %lld], but got %lld", d,
                            (long long)dim, (long long)b[d]);
    if (dim >= 0 && (s[d] < -1 || (s[d] >= 0 && b[d] + s[d] > dim)))
      return op_shape_error(c, 6, "Expected size[%d] in [0, %lld], but got %lld", d,
                            (long long)(dim - b[d]), (long long)s[d]);
    o.dims[d] = s[d] == -1 ? (dim >= 0 ? dim - b[d] : -1) : s[d];
  }
  c->out_shapes[0] = o;
  return RT_OK;
}

/* begin and end not known (tensor[0:n] with n a tensor) but strides known: the rank and the
 * dimensions the masks alone decide, as TF's shape function gives them. Three probes with
 * different bounds; a dimension all three agree on does not depend on the bounds. */
static int strided_slice_partial(rt_shape_ctx *c, const rt_shape *x, const int64_t *s, int n) {
  static const int64_t probe[3][2] = {{0, 1}, {0, 2}, {1, 1}};
  int64_t b[2 * RT_MAX_DIMS], e[2 * RT_MAX_DIMS];
  rt_shape out[3];
  for (int k = 0; k < 3; k++) {
    for (int i = 0; i < n; i++) b[i] = probe[k][0], e[i] = probe[k][1];
    op_slice_spec sp;
    rt_status st = {0};
    if (op_strided_spec(x, n, b, e, s, c->node, &sp, &st)) return RT_OK;   /* left unknown */
    out[k] = sp.out;
  }
  for (int d = 0; d < out[0].ndims; d++)
    if (out[0].dims[d] != out[1].dims[d] || out[0].dims[d] != out[2].dims[d]) out[0].dims[d] = -1;
  c->out_shapes[0] = out[0];
  return RT_OK;
}

static int strided_slice_shape(rt_shape_ctx *c) {
  const rt_shape *x = IN_SHAPE(0);
  int64_t b[2 * RT_MAX_DIMS], e[2 * RT_MAX_DIMS], s[2 * RT_MAX_DIMS];
  int nb, ne, nsd;
  if (x->ndims < 0 || !op_const_ints(c, 3, s, 2 * RT_MAX_DIMS, &nsd)) return RT_OK;
  if (!op_const_ints(c, 1, b, 2 * RT_MAX_DIMS, &nb) || !op_const_ints(c, 2, e, 2 * RT_MAX_DIMS, &ne))
    return strided_slice_partial(c, x, s, nsd);
  if (nb != ne || nb != nsd)
    return op_shape_error(c, 0, "Expected begin, end, and strides to be 1D equal size tensors, "
                                "but got shapes [%d], [%d], and [%d] instead.", nb, ne, nsd);
  op_slice_spec sp;
  rt_status st = {0};
  if (op_strided_spec(x, nb, b, e, s, c->node, &sp, &st))
    return op_shape_error(c, 0xe, "%s", st.msg);
  c->out_shapes[0] = sp.out;
  return RT_OK;
}

static int strided_slice_grad_shape(rt_shape_ctx *c) { return shape_from_input(c, 0); }

static int gather_shape(rt_shape_ctx *c) {
  const rt_shape *p = IN_SHAPE(0), *ix = IN_SHAPE(1);
  if (p->ndims == 0) return op_shape_error(c, 0, "Shape must be at least rank 1 but is rank 0");
  if (p->ndims < 0 || ix->ndims < 0) return RT_OK;
  if (p->ndims - 1 + ix->ndims > RT_MAX_DIMS) return op_shape_error(c, 0, "Too many dimensions");
  rt_shape o = *ix;
  for (int d = 1; d < p->ndims; d++) o.dims[o.ndims++] = p->dims[d];
  c->out_shapes[0] = o;
  return RT_OK;
}

static int one_hot_shape(rt_shape_ctx *c) {
  const rt_shape *ix = IN_SHAPE(0);
  int64_t axis = rt_node_int(c->node, "axis", -1), depth = -1;
  int k;
  if (axis < -1) return op_shape_error(c, 0, "axis must be >= -1");
  if (op_const_ints(c, 1, &depth, 1, &k) && depth < 0)
    return op_shape_error(c, 2, "depth must be non-negative, got: %lld", (long long)depth);
  if (ix->ndims < 0) return RT_OK;
  if (ix->ndims >= RT_MAX_DIMS) return op_shape_error(c, 0, "Too many dimensions");
  if (axis > ix->ndims) return op_shape_error(c, 0, "axis must be >= -1 and <= %d", ix->ndims);
  int64_t ax = axis < 0 ? ix->ndims : axis;
  rt_shape o = {.ndims = ix->ndims + 1};
  for (int d = 0, j = 0; d < o.ndims; d++) o.dims[d] = d == ax ? depth : ix->dims[j++];
  c->out_shapes[0] = o;
  return RT_OK;
}

static int tile_shape(rt_shape_ctx *c) {
  const rt_shape *x = IN_SHAPE(0), *m = IN_SHAPE(1);
  int64_t mult[RT_MAX_DIMS];
  int n;
  if (x->ndims >= 0 && m->ndims == 1 && m->dims[0] >= 0 && m->dims[0] != x->ndims)
    return op_shape_error(c, 0, "Dimension must be %d but is %lld", x->ndims, (long long)m->dims[0]);
  if (x->ndims < 0 || !op_const_ints(c, 1, mult, RT_MAX_DIMS, &n)) {
    c->out_shapes[0] = unknown_dims(x->ndims);
    return RT_OK;
  }
  rt_shape o = *x;
  for (int d = 0; d < o.ndims; d++) o.dims[d] = x->dims[d] < 0 ? -1 : x->dims[d] * mult[d];
  c->out_shapes[0] = o;
  return RT_OK;
}

static int pad_shape(rt_shape_ctx *c) {
  const rt_shape *x = IN_SHAPE(0), *p = IN_SHAPE(1);
  int64_t pv[2 * RT_MAX_DIMS];
  int n;
  if (p->ndims >= 0 && p->ndims != 2) return op_rank_error(c, 2, p->ndims);
  if (p->ndims == 2 && p->dims[1] >= 0 && p->dims[1] != 2)
    return op_shape_error(c, 0, "Dimension must be 2 but is %lld", (long long)p->dims[1]);
  if (x->ndims >= 0 && p->ndims == 2 && p->dims[0] >= 0 && p->dims[0] != x->ndims)
    return op_shape_error(c, 0, "Dimension must be %d but is %lld", x->ndims, (long long)p->dims[0]);
  if (x->ndims < 0 || !op_const_ints(c, 1, pv, 2 * RT_MAX_DIMS, &n)) {
    c->out_shapes[0] = unknown_dims(x->ndims);
    return RT_OK;
  }
  rt_shape o = *x;
  for (int d = 0; d < o.ndims; d++) {
    if (pv[2 * d] < 0 || pv[2 * d + 1] < 0)
      return op_shape_error(c, 2, "Paddings must be non-negative: %lld %lld",
                            (long long)pv[2 * d], (long long)pv[2 * d + 1]);
    if (o.dims[d] >= 0) o.dims[d] += pv[2 * d] + pv[2 * d + 1];
  }
  c->out_shapes[0] = o;
  return RT_OK;
}

static int range_shape(rt_shape_ctx *c) {
  for (int i = 0; i < 3; i++)
    if (IN_SHAPE(i)->ndims > 0) return op_rank_error(c, 0, IN_SHAPE(i)->ndims);
  c->out_shapes[0] = unknown_dims(1);
  if (!c->in_values[0] || !c->in_values[1] || !c->in_values[2]) return RT_OK;
  double s = rt_tensor_get_f64(c->in_values[0], 0), l = rt_tensor_get_f64(c->in_values[1], 0);
  double d = rt_tensor_get_f64(c->in_values[2], 0);
  char sl[64];
  if (rt_dtype_is_int(c->in_types[0]))
    snprintf(sl, sizeof sl, "%lld/%lld", (long long)rt_tensor_get_i64(c->in_values[0], 0),
             (long long)rt_tensor_get_i64(c->in_values[1], 0));
  else
    snprintf(sl, sizeof sl, "%g/%g", s, l);
  if (d == 0) return op_shape_error(c, 7, "Requires delta != 0: 0");
  if (d > 0 && s > l) return op_shape_error(c, 7, "Requires start <= limit when delta > 0: %s", sl);
  if (d < 0 && s < l) return op_shape_error(c, 7, "Requires start >= limit when delta < 0: %s", sl);
  int64_t n;
  if (rt_dtype_is_int(c->in_types[0])) {
    int64_t si = rt_tensor_get_i64(c->in_values[0], 0), li = rt_tensor_get_i64(c->in_values[1], 0);
    int64_t di = rt_tensor_get_i64(c->in_values[2], 0), len = li > si ? li - si : si - li;
    int64_t ad = di < 0 ? -di : di;
    n = (len + ad - 1) / ad;
  } else {
    double q = (l - s) / d;
    n = (int64_t)(q < 0 ? -q : q);
    if ((double)n < (q < 0 ? -q : q)) n++;
  }
  c->out_shapes[0].dims[0] = n;
  return RT_OK;
}

static int concat_offset_shape(rt_shape_ctx *c) {
  for (int i = 0; i < c->n_outputs; i++) c->out_shapes[i] = c->in_shapes[i + 1];
  return RT_OK;
}

static int segment_sum_shape(rt_shape_ctx *c) {
  const rt_shape *x = IN_SHAPE(0), *ids = IN_SHAPE(1);
  int64_t n;
  int k;
  if (x->ndims < 0 || ids->ndims < 0) return RT_OK;
  if (ids->ndims > x->ndims) return op_rank_error(c, x->ndims, ids->ndims);
  rt_shape o = {.ndims = 1 + x->ndims - ids->ndims};
  o.dims[0] = op_const_ints(c, 2, &n, 1, &k) && k == 1 ? n : -1;
  for (int d = ids->ndims; d < x->ndims; d++) o.dims[1 + d - ids->ndims] = x->dims[d];
  c->out_shapes[0] = o;
  return RT_OK;
}

static int broadcast_to_shape(rt_shape_ctx *c) {   /* the shape asked for, when it is a constant */
  int64_t d[RT_MAX_DIMS];
  int n;
  if (!op_const_ints(c, 1, d, RT_MAX_DIMS, &n)) return RT_OK;
  rt_shape o = {.ndims = n};
  for (int i = 0; i < n; i++) o.dims[i] = d[i];
  c->out_shapes[0] = o;
  return RT_OK;
}

/* [rows] + data[0]'s shape past indices[0]'s; rows known when every indices is a constant. */
static int dynamic_stitch_shape(rt_shape_ctx *c) {
  int n = c->n_inputs / 2;
  const rt_shape *ix = IN_SHAPE(0), *x = IN_SHAPE(n);
  if (ix->ndims < 0 || x->ndims < 0 || x->ndims < ix->ndims) return RT_OK;
  rt_shape o = {.ndims = 1 + x->ndims - ix->ndims};
  o.dims[0] = 0;
  for (int m = 0; m < n && o.dims[0] >= 0; m++) {
    int64_t v[256];
    int k;
    if (!op_const_ints(c, m, v, 256, &k)) o.dims[0] = -1;
    for (int i = 0; i < k && o.dims[0] >= 0; i++)
      if (v[i] + 1 > o.dims[0]) o.dims[0] = v[i] + 1;
  }
  for (int d = ix->ndims; d < x->ndims; d++) o.dims[1 + d - ix->ndims] = x->dims[d];
  c->out_shapes[0] = o;
  return RT_OK;
}

/* ---- gradients -------------------------------------------------------------------- */

#define IN(i) (c->node->inputs[i])
#define DY (c->dy[0])

static void set_out_type(rt_node *n, const void *arg) {
  rt_node_set_type(n, "out_type", *(const rt_dtype *)arg);
}

/* Shape(x) as an int vector of type t. */
static char *gshape_of(rt_grad_ctx *c, const char *x, rt_dtype t) {
  return op_grad_node(c, "Shape", "Shape", 1, &x, set_out_type, &t);
}

static char *greshape(rt_grad_ctx *c, const char *x, const char *shape) {
  return op_g2(c, "Reshape", x, shape);
}

/* Gradient of anything that only changes the shape: reshape dy back. */
static int reshape_grad(rt_grad_ctx *c) {
  if (!DY) return RT_OK;
  char *s = gshape_of(c, IN(0), RT_INT32);
  c->dx[0] = greshape(c, DY, s);
  free(s);
  return c->st->code;
}

static int fill_grad(rt_grad_ctx *c) {
  if (!DY) return RT_OK;
  char *m1 = op_gints(c, 1, (int64_t[]){-1}), *z = op_gints(c, 1, (int64_t[]){0});
  char *flat = greshape(c, DY, m1);
  c->dx[1] = op_g2(c, "Sum", flat, z);
  free(m1), free(z), free(flat);
  return c->st->code;
}

static int transpose_grad(rt_grad_ctx *c) {
  if (!DY) return RT_OK;
  char *inv = op_g1(c, "InvertPermutation", IN(1));
  c->dx[0] = op_g2(c, "Transpose", DY, inv);
  free(inv);
  return c->st->code;
}

/* dy for output i, or zeros like that output when none flows. */
static char *dy_or_zeros(rt_grad_ctx *c, int i) {
  if (c->dy[i]) return xstrdup(c->dy[i]);
  char out[300];
  snprintf(out, sizeof out, "%s:%d", c->node->name, i);
  return op_g1(c, "ZerosLike", out);
}

static char *joined(rt_grad_ctx *c, const char *op, int n, const char *axis, op_attr_fn f,
                    const void *arg) {
  char **in = xcalloc((size_t)n + 1, sizeof *in);
  char *r = NULL;
  int k = 0;
  for (; k < n && (in[k] = dy_or_zeros(c, k)); k++) {}
  if (k == n) {
    if (axis) in[n] = xstrdup(axis);
    r = op_grad_node(c, op, op, n + (axis != NULL), (const char *const *)in, f, arg);
  }
  for (int i = 0; i <= n; i++) free(in[i]);
  free(in);
  return r;
}

static int split_grad(rt_grad_ctx *c) {
  c->dx[1] = joined(c, "ConcatV2", c->node->n_outputs, IN(0), NULL, NULL);
  return c->st->code;
}

typedef struct { int64_t axis, num; } axis_arg;
static void set_axis_num(rt_node *n, const void *arg) {
  const axis_arg *a = arg;
  rt_node_set_int(n, "axis", a->axis);
  if (a->num >= 0) rt_node_set_int(n, "num", a->num);
}

static int unpack_grad(rt_grad_ctx *c) {
  axis_arg a = {rt_node_int(c->node, "axis", 0), -1};
  c->dx[0] = joined(c, "Pack", c->node->n_outputs, NULL, set_axis_num, &a);
  return c->st->code;
}

static int pack_grad(rt_grad_ctx *c) {
  if (!DY) return RT_OK;
  int n = c->node->n_data_inputs;
  axis_arg a = {rt_node_int(c->node, "axis", 0), n};
  char *u = op_grad_node(c, "Unpack", "Unpack", 1, &DY, set_axis_num, &a);
  for (int i = 0; u && i < n; i++) {
    char buf[300];
    snprintf(buf, sizeof buf, "%s:%d", u, i);
    c->dx[i] = xstrdup(buf);
  }
  free(u);
  return c->st->code;
}

static void set_dst_int32(rt_node *n, const void *arg) { rt_node_set_type(n, "DstT", RT_INT32); }

/* ConcatV2: slice dy at each input's offset (ConcatOffset), as TF1 does. */
static int concat_grad(rt_grad_ctx *c) {
  if (!DY) return RT_OK;
  int n = c->node->n_data_inputs - 1;
  const char *axis = IN(n);
  char *ax32 = op_gin_type(c, n) == RT_INT32
                  ? xstrdup(axis) : op_grad_node(c, "Cast", "Cast", 1, &axis, set_dst_int32, NULL);
  char **in = xcalloc((size_t)n + 1, sizeof *in);
  in[0] = ax32;
  for (int i = 0; i < n && !c->st->code; i++) in[i + 1] = gshape_of(c, IN(i), RT_INT32);
  char *off = c->st->code ? NULL : op_grad_node(c, "ConcatOffset", "ConcatOffset", n + 1,
                                                (const char *const *)in, NULL, NULL);
  for (int i = 0; off && i < n; i++) {
    char o[300];
    snprintf(o, sizeof o, "%s:%d", off, i);
    const char *sin[] = {DY, o, in[i + 1]};
    c->dx[i] = op_grad_node(c, "Slice", "Slice", 3, sin, NULL, NULL);
  }
  for (int i = 0; i <= n; i++) free(in[i]);
  free(in);
  free(off);
  return c->st->code;
}

/* Slice: pad dy back to the input's shape (TF1's _SliceGrad). */
static int slice_grad(rt_grad_ctx *c) {
  if (!DY) return RT_OK;
  rt_dtype t = op_gin_type(c, 1);
  char *sx = gshape_of(c, IN(0), t), *sy = gshape_of(c, c->node->name, t);
  char *d = op_g2(c, "Sub", sx, sy), *after = op_g2(c, "Sub", d, IN(1));
  char *col = op_gints(c, 2, (int64_t[]){-1, 1});
  char *b2 = greshape(c, IN(1), col), *a2 = greshape(c, after, col);
  char *one = op_gconst(c, RT_INT32, 1);
  const char *cin[] = {b2, a2, one};
  char *pads = b2 && a2 && one ? op_grad_node(c, "ConcatV2", "ConcatV2", 3, cin, NULL, NULL) : NULL;
  c->dx[0] = op_g2(c, "Pad", DY, pads);
  free(sx), free(sy), free(d), free(after), free(col), free(b2), free(a2), free(one), free(pads);
  return c->st->code;
}

static void copy_masks(rt_node *n, const void *arg) {
  const rt_node *f = arg;
  static const char *masks[] = {"begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask",
                                "shrink_axis_mask"};
  for (int i = 0; i < 5; i++) rt_node_set_int(n, masks[i], rt_node_int(f, masks[i], 0));
}

static int strided_slice_grad(rt_grad_ctx *c) {
  if (!DY) return RT_OK;
  char *s = gshape_of(c, IN(0), op_gin_type(c, 1));
  const char *in[] = {s, IN(1), IN(2), IN(3), DY};
  c->dx[0] = s ? op_grad_node(c, "StridedSliceGrad", "StridedSliceGrad", 5, in, copy_masks,
                              c->node) : NULL;
  free(s);
  return c->st->code;
}

/* StridedSliceGrad places dy in zeros: its gradient for dy is the slice again. */
static int strided_slice_grad_grad(rt_grad_ctx *c) {
  if (!DY) return RT_OK;
  const char *in[] = {DY, IN(1), IN(2), IN(3)};
  c->dx[4] = op_grad_node(c, "StridedSlice", "StridedSlice", 4, in, copy_masks, c->node);
  return c->st->code;
}

static int pad_grad(rt_grad_ctx *c) {
  if (!DY) return RT_OK;
  char *b0 = op_gints(c, 2, (int64_t[]){0, 0}), *sz = op_gints(c, 2, (int64_t[]){-1, 1});
  const char *sin[] = {IN(1), b0, sz};
  char *first = b0 && sz ? op_grad_node(c, "Slice", "Slice", 3, sin, NULL, NULL) : NULL;
  char *m1 = op_gints(c, 1, (int64_t[]){-1}), *begin = greshape(c, first, m1);
  char *shape = gshape_of(c, IN(0), op_gin_type(c, 1));
  const char *in[] = {DY, begin, shape};
  c->dx[0] = begin && shape ? op_grad_node(c, "Slice", "Slice", 3, in, NULL, NULL) : NULL;
  free(b0), free(sz), free(first), free(m1), free(begin), free(shape);
  return c->st->code;
}

/* Tile: reshape dy to [m0, d0, m1, d1, ...] and sum the multiples' axes (TF1's _TileGrad). */
static int tile_grad(rt_grad_ctx *c) {
  if (!DY) return RT_OK;
  rt_dtype t = op_gin_type(c, 1);
  char *sx = gshape_of(c, IN(0), t);
  const char *pin[] = {IN(1), sx};
  char *pk = sx ? op_grad_node(c, "Pack", "Pack", 2, pin, NULL, NULL) : NULL;
  char *perm = op_gints(c, 2, (int64_t[]){1, 0}), *tr = op_g2(c, "Transpose", pk, perm);
  char *m1 = op_gints(c, 1, (int64_t[]){-1}), *split = greshape(c, tr, m1);
  char *sz = op_g1(c, "Size", split), *zero = op_gconst(c, RT_INT32, 0);
  char *two = op_gconst(c, RT_INT32, 2);
  const char *rin[] = {zero, sz, two};
  char *axes = sz && zero && two ? op_grad_node(c, "Range", "Range", 3, rin, NULL, NULL) : NULL;
  char *r = greshape(c, DY, split);
  c->dx[0] = op_g2(c, "Sum", r, axes);
  free(sx), free(pk), free(perm), free(tr), free(m1), free(split), free(sz), free(zero);
  free(two), free(axes), free(r);
  return c->st->code;
}

static void set_shrink(rt_node *n, const void *arg) { rt_node_set_int(n, "shrink_axis_mask", 1); }

/* Gather: dy's rows summed into the gathered rows (UnsortedSegmentSum), dense. */
static int gather_grad(rt_grad_ctx *c) {
  if (!DY) return RT_OK;
  char *sp = gshape_of(c, IN(0), op_gin_type(c, 1));
  char *b = op_gints(c, 1, (int64_t[]){0}), *e = op_gints(c, 1, (int64_t[]){1});
  const char *sin[] = {sp, b, e, e};
  char *rows = sp && b && e ? op_grad_node(c, "StridedSlice", "StridedSlice", 4, sin,
                                           set_shrink, NULL) : NULL;
  const char *in[] = {DY, IN(1), rows};
  c->dx[0] = rows ? op_grad_node(c, "UnsortedSegmentSum", "UnsortedSegmentSum", 3, in, NULL,
                                 NULL) : NULL;
  free(sp), free(b), free(e), free(rows);
  return c->st->code;
}

/* ---- Select ------------------------------------------------------------------------ */

static int select_shape(rt_shape_ctx *c) {
  const rt_shape *cs = &c->in_shapes[0], *t = &c->in_shapes[1], *e = &c->in_shapes[2];
  rt_shape out;
  if (op_broadcast_shape(t, e, &out, c->node, c->st)) return c->st->code;
  if (t->ndims >= 0 && e->ndims >= 0 && t->ndims != e->ndims)
    return op_shape_error(c, 6, "'then' and 'else' must have the same rank");
  if (cs->ndims > 1 && t->ndims >= 0 && cs->ndims != t->ndims)
    return op_shape_error(c, 3, "condition of rank %d for 'then' of rank %d: give a scalar, a "
                          "vector over the first dimension, or the same shape", cs->ndims, t->ndims);
  /* as TF: 'then' and 'else' merged, a dimension one of them does not know taken from the other */
  c->out_shapes[0] = t->ndims >= 0 ? *t : *e;
  if (t->ndims >= 0 && e->ndims == t->ndims)
    for (int i = 0; i < t->ndims; i++)
      if (c->out_shapes[0].dims[i] < 0) c->out_shapes[0].dims[i] = e->dims[i];
  return RT_OK;
}

/* d/dt = dy where the condition holds, else 0; d/de the other way round. */
static int select_grad(rt_grad_ctx *c) {
  char *zeros = op_g1(c, "ZerosLike", DY);
  const char *a[3] = {IN(0), DY, zeros}, *b[3] = {IN(0), zeros, DY};
  c->dx[1] = op_grad_node(c, "Select", "Select", 3, a, NULL, NULL);
  c->dx[2] = op_grad_node(c, "Select", "Select", 3, b, NULL, NULL);
  free(zeros);
  return c->st->code;
}

/* SelectV2 broadcasts all three: the output is their numpy broadcast. */
static int select_v2_shape(rt_shape_ctx *c) {
  rt_shape te;
  if (op_broadcast_shape(&c->in_shapes[1], &c->in_shapes[2], &te, c->node, c->st)) return c->st->code;
  return op_broadcast_shape(&c->in_shapes[0], &te, &c->out_shapes[0], c->node, c->st);
}

/* As Select's, each side summed back to its own shape (it may have been broadcast). */
static int select_v2_grad(rt_grad_ctx *c) {
  char *zeros = op_g1(c, "ZerosLike", DY);
  const char *a[3] = {IN(0), DY, zeros}, *b[3] = {IN(0), zeros, DY};
  char *gt = op_grad_node(c, "SelectV2", "SelectV2", 3, a, NULL, NULL);
  char *ge = op_grad_node(c, "SelectV2", "SelectV2", 3, b, NULL, NULL);
  c->dx[1] = gt ? op_gsum_to(c, gt, IN(1)) : NULL;
  c->dx[2] = ge ? op_gsum_to(c, ge, IN(2)) : NULL;
  free(zeros), free(gt), free(ge);
  return c->st->code;
}

/* ---- the table -------------------------------------------------------------------- */

#define K(f) .kernel = {[RT_DEV_CPU] = f}

static const rt_op_def array_ops[] = {
  {.name = "Reshape", .inputs = "tensor: T, shape: Tshape", .outputs = "output: T",
   .attrs = "T: type, Tshape: " IDX " = int32",
   .help = "The same values in a new shape (one dim may be -1); no copy.",
   .shape = reshape_shape, K(op_cpu_reshape), .grad = reshape_grad},
  {.name = "Shape", .inputs = "input: T", .outputs = "output: out_type",
   .attrs = "T: type, out_type: " IDX " = int32", .help = "The shape of a tensor, as a vector.",
   .shape = shape_shape, K(op_cpu_shape), .grad = op_no_grad},
  {.name = "Size", .inputs = "input: T", .outputs = "output: out_type",
   .attrs = "T: type, out_type: " IDX " = int32", .help = "The number of elements of a tensor.",
   .shape = scalar_shape, K(op_cpu_size), .grad = op_no_grad},
  {.name = "Rank", .inputs = "input: T", .outputs = "output: int32", .attrs = "T: type",
   .help = "The number of dimensions of a tensor.", .shape = scalar_shape, K(op_cpu_rank),
   .grad = op_no_grad},
  {.name = "Fill", .inputs = "dims: index_type, value: T", .outputs = "output: T",
   .attrs = "T: type, index_type: " IDX " = int32",
   .help = "A tensor of shape dims filled with the scalar value.", .shape = fill_shape,
   K(op_cpu_fill), .grad = fill_grad},
  {.name = "Select", .inputs = "condition: bool, t: T, e: T", .outputs = "output: T", .attrs = "T: type",
   .help = "t where condition holds, else e (condition: t's shape, a scalar, or over t's first dim).",
   .shape = select_shape, K(op_cpu_select), .grad = select_grad},
  {.name = "SelectV2", .inputs = "condition: bool, t: T, e: T", .outputs = "output: T", .attrs = "T: type",
   .help = "t where condition holds, else e, the three broadcast as numpy does (TF 2's select).",
   .shape = select_v2_shape, K(op_cpu_select_v2), .grad = select_v2_grad},
  {.name = "ZerosLike", .inputs = "x: T", .outputs = "y: T", .attrs = "T: type",
   .help = "Zeros with the shape and dtype of x.", .shape = op_shape_unchanged,
   K(op_cpu_zeros_like), .grad = op_no_grad},
  {.name = "OnesLike", .inputs = "x: T", .outputs = "y: T", .attrs = "T: type",
   .help = "Ones with the shape and dtype of x.", .shape = op_shape_unchanged,
   K(op_cpu_ones_like), .grad = op_no_grad},
  {.name = "Transpose", .inputs = "x: T, perm: Tperm", .outputs = "y: T",
   .attrs = "T: type, Tperm: " IDX " = int32",
   .help = "Permutes the dimensions: y.shape[i] = x.shape[perm[i]].", .shape = transpose_shape,
   K(op_cpu_transpose), .grad = transpose_grad},
  {.name = "InvertPermutation", .inputs = "x: T", .outputs = "y: T", .attrs = "T: " IDX " = int32",
   .help = "The inverse permutation: y[x[i]] = i.", .shape = op_shape_unchanged,
   K(op_cpu_invert_permutation), .grad = op_no_grad},
  {.name = "ExpandDims", .inputs = "input: T, dim: Tdim", .outputs = "output: T",
   .attrs = "T: type, Tdim: " IDX " = int32",
   .help = "Inserts a dimension of size 1 at index dim; no copy.", .shape = expand_dims_shape,
   K(op_cpu_expand_dims), .grad = reshape_grad},
  {.name = "Squeeze", .inputs = "input: T", .outputs = "output: T",
   .attrs = "T: type, squeeze_dims: list(int) = []",
   .help = "Removes dimensions of size 1 (those in squeeze_dims, or all); no copy.",
   .shape = squeeze_shape, K(op_cpu_squeeze), .grad = reshape_grad},
  {.name = "ConcatV2", .inputs = "values: N * T, axis: Tidx", .outputs = "output: T",
   .attrs = "N: int >= 2, T: type, Tidx: " IDX " = int32",
   .help = "Joins tensors along an existing axis.", .shape = concat_shape, K(op_cpu_concat),
   .grad = concat_grad},
  {.name = "ConcatOffset", .inputs = "concat_dim: int32, shape: N * int32",
   .outputs = "offset: N * int32", .attrs = "N: int >= 2",
   .help = "Where each input of a concatenation starts in its output (for gradients).",
   .shape = concat_offset_shape, K(op_cpu_concat_offset)},
  {.name = "Split", .inputs = "split_dim: int32, value: T", .outputs = "output: num_split * T",
   .attrs = "num_split: int >= 1, T: type",
   .help = "Splits a tensor into num_split equal parts along split_dim.", .shape = split_shape,
   K(op_cpu_split), .grad = split_grad},
  {.name = "Pack", .inputs = "values: N * T", .outputs = "output: T",
   .attrs = "N: int >= 1, T: type, axis: int = 0",
   .help = "Stacks tensors of one shape along a new axis (tf.stack).", .shape = pack_shape,
   K(op_cpu_pack), .grad = pack_grad},
  {.name = "Unpack", .inputs = "value: T", .outputs = "output: num * T",
   .attrs = "num: int >= 0, T: type, axis: int = 0",
   .help = "Unstacks a tensor along an axis into num tensors (tf.unstack).",
   .shape = unpack_shape, K(op_cpu_unpack), .grad = unpack_grad},
  {.name = "Slice", .inputs = "input: T, begin: Index, size: Index", .outputs = "output: T",
   .attrs = "T: type, Index: " IDX,
   .help = "The block of size `size` (-1: to the end) starting at `begin`.",
   .shape = slice_shape, K(op_cpu_slice), .grad = slice_grad},
  {.name = "StridedSlice", .inputs = "input: T, begin: Index, end: Index, strides: Index",
   .outputs = "output: T",
   .attrs = "T: type, Index: " IDX ", begin_mask: int = 0, end_mask: int = 0, "
            "ellipsis_mask: int = 0, new_axis_mask: int = 0, shrink_axis_mask: int = 0",
   .help = "Python's x[b:e:s, ...] with numpy's rules (what tensor[...] builds).",
   .shape = strided_slice_shape, K(op_cpu_strided_slice), .grad = strided_slice_grad},
  {.name = "StridedSliceGrad",
   .inputs = "shape: Index, begin: Index, end: Index, strides: Index, dy: T",
   .outputs = "output: T",
   .attrs = "T: type, Index: " IDX ", begin_mask: int = 0, end_mask: int = 0, "
            "ellipsis_mask: int = 0, new_axis_mask: int = 0, shrink_axis_mask: int = 0",
   .help = "StridedSlice's gradient: dy placed in zeros of the input's shape.",
   .shape = strided_slice_grad_shape, K(op_cpu_strided_slice_grad), .grad = strided_slice_grad_grad},
  {.name = "Gather", .inputs = "params: Tparams, indices: Tindices", .outputs = "output: Tparams",
   .attrs = "validate_indices: bool = true, Tparams: type, Tindices: " IDX,
   .help = "Rows of params picked by indices: output[i, ...] = params[indices[i], ...].",
   .shape = gather_shape, K(op_cpu_gather), .grad = gather_grad},
  {.name = "UnsortedSegmentSum",
   .inputs = "data: T, segment_ids: Tindices, num_segments: Tnumsegments", .outputs = "output: T",
   .attrs = "T: {float, double, int32, int64}, Tindices: " IDX ", Tnumsegments: " IDX " = int32",
   .help = "Sums the rows of data that share a segment id; ids out of range are an error.",
   .shape = segment_sum_shape, K(op_cpu_unsorted_segment_sum), .grad = op_unsorted_segment_sum_grad},
  {.name = "BroadcastTo", .inputs = "input: T, shape: Tidx", .outputs = "output: T",
   .attrs = "T: type, Tidx: " IDX " = int32",
   .help = "The input broadcast to shape (numpy's rules).", .shape = broadcast_to_shape,
   K(op_cpu_broadcast_to)},
  {.name = "DynamicStitch", .inputs = "indices: N * int32, data: N * T", .outputs = "merged: T",
   .attrs = "N: int >= 1, T: type",
   .help = "Interleaves data by indices: merged[indices[m][i], ...] = data[m][i, ...].",
   .shape = dynamic_stitch_shape, K(op_cpu_dynamic_stitch)},
  {.name = "OneHot", .inputs = "indices: TI, depth: int32, on_value: T, off_value: T",
   .outputs = "output: T", .attrs = "axis: int = -1, T: type, TI: {uint8, int32, int64} = int64",
   .help = "One-hot vectors: on_value where the index matches, off_value elsewhere.",
   .shape = one_hot_shape, K(op_cpu_one_hot), .grad = op_no_grad},
  {.name = "Tile", .inputs = "input: T, multiples: Tmultiples", .outputs = "output: T",
   .attrs = "T: type, Tmultiples: " IDX " = int32",
   .help = "Repeats the input multiples[i] times along dimension i.", .shape = tile_shape,
   K(op_cpu_tile), .grad = tile_grad},
  {.name = "Pad", .inputs = "input: T, paddings: Tpaddings", .outputs = "output: T",
   .attrs = "T: type, Tpaddings: " IDX " = int32",
   .help = "Pads with zeros: paddings[i] = [before, after] for dimension i.",
   .shape = pad_shape, K(op_cpu_pad), .grad = pad_grad},
  {.name = "Range", .inputs = "start: Tidx, limit: Tidx, delta: Tidx", .outputs = "output: Tidx",
   .attrs = "Tidx: {float, double, int32, int64} = int32",
   .help = "The sequence start, start + delta, ... up to (not including) limit.",
   .shape = range_shape, K(op_cpu_range), .grad = op_no_grad},
};

void op_array_register(void) { rt_op_register(array_ops, OP_COUNT(array_ops)); }
