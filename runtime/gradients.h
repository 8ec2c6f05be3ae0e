/* tf.gradients: symbolic differentiation built as graph ops, so gradients are placed and
 * partitioned like any other op. Walks back from ys to xs in reverse topological order,
 * summing the gradients that reach each tensor (AddN) and asking each op's gradient
 * builder (rt_op_def.grad) for the gradients of its inputs. */
#ifndef TFSH_GRADIENTS_H
#define TFSH_GRADIENTS_H

#include "runtime/graph.h"
#include "runtime/op.h"

/* ys, xs: tensor names; grad_ys: per y, a tensor name or NULL (ones). scope: name prefix
 * for new nodes ("gradients/"). dx: per x, a malloc'd tensor name, or NULL when x does not
 * affect ys (TF returns None). New nodes are appended to g: the caller may set their
 * devices afterwards (ids from the old g->n_nodes on). */
int rt_gradients(rt_graph *g, int n_ys, const char *const *ys, const char *const *grad_ys,
                 int n_xs, const char *const *xs, const char *scope, char **dx, rt_status *st);
/* The same, with TF's gate_gradients: the gradients of each op's inputs, when more than
 * one, pass through a tf.tuple in SCOPE OP_grad/tuple/ (group_deps, control_dependency). */
int rt_gradients_gated(rt_graph *g, int n_ys, const char *const *ys, const char *const *grad_ys, int n_xs,
                       const char *const *xs, const char *scope, bool gate_gradients, char **dx, rt_status *st);

/* A gradient the embedding language gives (tf.RegisterGradient, gradient_override_map):
 * asked first for each node; sets *handled and fills ctx->dx as an op's builder does, or
 * leaves *handled false for the op's own. NULL: none (the default). */
typedef int (*rt_grad_hook)(rt_grad_ctx *ctx, bool *handled);
void rt_gradients_set_hook(rt_grad_hook hook);

#endif
