/* Source and pass-through kernels: Const, Placeholder, Identity, NoOp; the in-order sum of
 * per-tile partials the filter gradients share. */
#include <string.h>

#include "ops/ops_int.h"

/* The value attr is immutable once the node is in the graph: hand out references. */
int op_cpu_const(rt_kernel_ctx *c) {
  const rt_attr_value *v = rt_node_attr(c->node, "value");
  if (!v || v->kind != RT_ATTR_TENSOR)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Const has no tensor value");
  rt_tensor_unref(c->outputs[0]);
  c->outputs[0] = rt_tensor_ref(v->tensor);
  return RT_OK;
}

/* Fed placeholders never run: reaching the kernel means the feed is missing. */
int op_cpu_placeholder(rt_kernel_ctx *c) {
  rt_dtype t = rt_node_type(c->node, "dtype", RT_FLOAT);
  const rt_attr_value *s = rt_node_attr(c->node, "shape");
  if (!s || s->kind != RT_ATTR_SHAPE || s->shape.ndims < 0)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT,
                           "You must feed a value for placeholder tensor '%s' with dtype %s",
                           c->node->name, op_tf_type(t));
  char buf[160];
  return rt_kernel_error(c, RT_INVALID_ARGUMENT,
                         "You must feed a value for placeholder tensor '%s' with dtype %s and "
                         "shape %s",
                         c->node->name, op_tf_type(t), op_shape_tf(&s->shape, buf, sizeof buf));
}

int op_cpu_identity(rt_kernel_ctx *c) {
  rt_tensor_unref(c->outputs[0]);
  c->outputs[0] = rt_tensor_ref(c->inputs[0]);
  return RT_OK;
}

int op_cpu_noop(rt_kernel_ctx *c) { return RT_OK; }

#define ADD_PARTIALS(T)                                                                      \
  static void add_partials_##T(const T *p, int64_t tiles, int64_t len, T *out) {             \
    memcpy(out, p, (size_t)len * sizeof(T));                                                 \
    for (int64_t t = 1; t < tiles; t++) {                                                    \
      const T *restrict q = p + t * len;                                                     \
      _Pragma("omp simd") for (int64_t k = 0; k < len; k++) out[k] += q[k];                  \
    }                                                                                        \
  }
ADD_PARTIALS(float)
ADD_PARTIALS(double)

void op_add_partials(bool f32, const void *parts, int64_t tiles, int64_t len, void *out) {
  if (f32) add_partials_float(parts, tiles, len, out);
  else add_partials_double(parts, tiles, len, out);
}
