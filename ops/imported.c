/* Ops that only graphs written by TensorFlow use (a TF-written training graph's gradient and
 * saver nodes, imported from a GraphDef or a MetaGraph): PlaceholderWithDefault, GatherV2,
 * Where (tf.boolean_mask's, as in report_uninitialized_variables), StaticRegexFullMatch (a
 * sharded Saver's) and BroadcastGradientArgs. tfsh's own builders write Identity, Gather and _SumToShapeOf. */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "ops/ops_int.h"

#define IDX "{int32, int64}"

static int placeholder_with_default_shape(rt_shape_ctx *c) {
  const rt_attr_value *v = rt_node_attr(c->node, "shape");
  c->out_shapes[0] = v && v->kind == RT_ATTR_SHAPE && v->shape.ndims >= 0 ? v->shape : c->in_shapes[0];
  return RT_OK;
}

/* TF's gradient of PlaceholderWithDefault: dy passes to the default, as through Identity. */
static int placeholder_with_default_grad(rt_grad_ctx *c) {
  if (c->dy[0]) c->dx[0] = xstrdup(c->dy[0]);
  return RT_OK;
}

/* params.shape[:axis] + indices.shape + params.shape[axis + 1:] */
static int gather_v2_shape(rt_shape_ctx *c) {
  const rt_shape *p = &c->in_shapes[0], *ix = &c->in_shapes[1];
  int64_t axis = 0;
  int k;
  if (rt_node_int(c->node, "batch_dims", 0) != 0) return op_shape_error(c, 0, "batch_dims other than 0 is not supported by tfsh");
  if (!op_const_ints(c, 2, &axis, 1, &k) || p->ndims < 0 || ix->ndims < 0) return RT_OK;
  if (axis < -p->ndims || axis >= p->ndims || p->ndims == 0)
    return op_shape_error(c, 4, "Shape must be at least rank %lld but is rank %d", (long long)(axis < 0 ? -axis : axis + 1), p->ndims);
  if (axis < 0) axis += p->ndims;
  if (p->ndims - 1 + ix->ndims > RT_MAX_DIMS) return op_shape_error(c, 0, "Too many dimensions");
  rt_shape o = {.ndims = 0};
  for (int d = 0; d < axis; d++) o.dims[o.ndims++] = p->dims[d];
  for (int d = 0; d < ix->ndims; d++) o.dims[o.ndims++] = ix->dims[d];
  for (int d = (int)axis + 1; d < p->ndims; d++) o.dims[o.ndims++] = p->dims[d];
  c->out_shapes[0] = o;
  return RT_OK;
}

static int where_shape(rt_shape_ctx *c) {
  c->out_shapes[0] = rt_shape_make(2, (int64_t[]){-1, c->in_shapes[0].ndims < 0 ? -1 : c->in_shapes[0].ndims});
  return RT_OK;
}

static int same_shape(rt_shape_ctx *c) {
  c->out_shapes[0] = c->in_shapes[0];
  return RT_OK;
}

static int bga_shape(rt_shape_ctx *c) {
  c->out_shapes[0] = c->out_shapes[1] = rt_shape_make(1, (int64_t[]){-1});
  return RT_OK;
}

static const rt_op_def imported_ops[] = {
  {.name = "PlaceholderWithDefault", .inputs = "input: dtype", .outputs = "output: dtype",
   .attrs = "dtype: type, shape: shape = ?",
   .help = "Its input unless a value is fed for it (tf.placeholder_with_default; a TF-written saver's filename).",
   .shape = placeholder_with_default_shape, .kernel = {[RT_DEV_CPU] = op_cpu_identity},
   .grad = placeholder_with_default_grad},
  {.name = "GatherV2", .inputs = "params: Tparams, indices: Tindices, axis: Taxis", .outputs = "output: Tparams",
   .attrs = "batch_dims: int = 0, Tparams: type, Tindices: " IDX ", Taxis: " IDX,
   .help = "Slices of params along axis picked by indices (TF's tf.gather).",
   .shape = gather_v2_shape, .kernel = {[RT_DEV_CPU] = op_cpu_gather_v2}, .grad = op_no_grad},
  {.name = "Where", .inputs = "input: T", .outputs = "index: int64", .attrs = "T: {bool} = bool",
   .help = "The coordinates of the true elements of input, one row each ([n, rank]).",
   .shape = where_shape, .kernel = {[RT_DEV_CPU] = op_cpu_where}, .grad = op_no_grad},
  {.name = "StaticRegexFullMatch", .inputs = "input: string", .outputs = "output: bool", .attrs = "pattern: string",
   .help = "Whether each string matches pattern whole (a TF sharded Saver's s3:// test).",
   .shape = same_shape, .kernel = {[RT_DEV_CPU] = op_cpu_static_regex_full_match}, .grad = op_no_grad},
  {.name = "BroadcastGradientArgs", .inputs = "s0: T, s1: T", .outputs = "r0: T, r1: T",
   .attrs = "T: " IDX " = int32",
   .help = "The axes to sum a broadcast gradient over for each of two shapes.",
   .shape = bga_shape, .kernel = {[RT_DEV_CPU] = op_cpu_broadcast_gradient_args}, .grad = op_no_grad},
};

void op_imported_register(void) { rt_op_register(imported_ops, OP_COUNT(imported_ops)); }
