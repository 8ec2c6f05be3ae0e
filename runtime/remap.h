/* The remapper: what tfsh does of TF's grappler remapper, on a partition graph before it
 * is registered (runtime/master.c). Relu(BiasAdd(Conv2D(x, w), b)) and
 * BiasAdd(Conv2D(x, w), b), NHWC, float or double, all on one CPU, become one _FusedConv2D
 * node (an Add of a vector of the channels counts as the BiasAdd, as grappler's
 * bias-semantic Add: the tutorials' `conv + bias`), and ReluGrad(MaxPoolGrad(a, p, g), a)
 * (a CNN's backward pass through pool and relu) one _FusedMaxPoolGrad; in a training
 * step, where that gradient is the only other reader of a fused Relu under a 2x2 pool, the
 * pool becomes _FusedConv2DWithArgmax (with a byte of workspace a pooled value) and the
 * gradient _FusedMaxPoolGradWithArgmax on that workspace: the Relu's output is never made;
 * and where nothing needs that layer's input gradient (a first layer), its filter and bias
 * gradients read the workspace too (_FusedConv2DBackpropFilterWithArgmax), so the pool's
 * gradient at the layer's size is not made either.
 * The fused node keeps the last node's name (so its consumers, the step stats and the
 * timeline name it as TF's does); only where nothing else reads the folded nodes' outputs:
 * no other consumer (but a _SumToShapeOf reading only the shape, which then reads the fused
 * node's), not fed, fetched nor a target. The kernels do the same operations, so the
 * outputs keep their bits; the passes over memory between them go. */
#ifndef TFSH_REMAP_H
#define TFSH_REMAP_H

#include "runtime/graph.h"

/* keep: the run's feeds, fetches and targets ("x", "x:0", "^x"), whose nodes stay. *g is
 * replaced (the old graph freed) when something was fused; left alone otherwise. */
int rt_remap_graph(rt_graph **g, const char *const *keep, int n_keep, rt_status *st);

/* The kernels' answer to whether a first layer's filter gradient (a kh x kw x ic -> oc
 * window) runs from its pool's workspace at speed here: the last pass fuses only then.
 * The CPU kernels register it (ops/conv.c); unset, that pass does nothing. */
void rt_remap_set_filter_argmax(bool (*fast)(int64_t kh, int64_t kw, int64_t ic, int64_t oc));

#endif
