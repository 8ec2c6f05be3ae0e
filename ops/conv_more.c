/* The gradient of Conv2DBackpropInput (tf.nn.conv2d_transpose's op): for the filter, the
 * filter gradient of the convolution it transposes; for out_backprop, that convolution. */
#include <stdlib.h>

#include "ops/ops_int.h"

static void copy_conv_attrs(rt_node *n, const void *arg) {
  static const char *names[] = {"strides", "padding", "data_format", "dilations", "use_cudnn_on_gpu"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    const rt_attr_value *v = rt_node_attr(arg, names[i]);
    rt_attr_value copy;
    if (v && !rt_attr_value_copy(&copy, v)) rt_node_set_attr(n, names[i], &copy);
  }
}

int op_conv2d_backprop_input_grad(rt_grad_ctx *c) {
  const char *dy = c->dy[0], *filter = c->node->inputs[1], *out_backprop = c->node->inputs[2];
  if (!dy) return RT_OK;
  char *fs = op_g1(c, "Shape", filter);
  const char *in1[] = {dy, fs, out_backprop};
  c->dx[1] = fs ? op_grad_node(c, "Conv2DBackpropFilter", "Conv2DBackpropFilter", 3, in1, copy_conv_attrs, c->node) : NULL;
  const char *in2[] = {dy, filter};
  c->dx[2] = c->dx[1] ? op_grad_node(c, "Conv2D", "Conv2D", 2, in2, copy_conv_attrs, c->node) : NULL;
  free(fs);
  return c->st->code;
}
