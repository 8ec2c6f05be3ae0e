/* gradients.c and gradients_loop.c (tf.while_loop's gradient loop) share these. */
#ifndef TFSH_GRADIENTS_INT_H
#define TFSH_GRADIENTS_INT_H

#include "runtime/graph.h"
#include "runtime/op.h"

/* Gradient tensor names collected for one output of one node (malloc'd, owned). */
typedef struct rt_grad_list {
  int n, cap;
  char **v;
} rt_grad_list;

void rt_grad_list_add(rt_grad_list *l, char *name);   /* takes name */
void rt_grad_list_free(rt_grad_list *l);

/* A gradient the loop gives back: for output `index` of node `node` (outside the loop). */
typedef struct rt_grad_out {
  int node, index;
  char *grad;
} rt_grad_out;

/* The embedding language's gradient for ctx->node (rt_gradients_set_hook), if it has one:
 * sets *handled. RT_OK and *handled false where no hook is set. */
int rt_grad_call_hook(rt_grad_ctx *ctx, bool *handled);

/* The frame of Exit node x: its Switch's Merge's Enter's frame_name ("" if not a loop's). */
const char *rt_grad_exit_frame(const rt_graph *g, const rt_node *x);

/* The gradient loop of the tf.while_loop whose frame is `frame` (nodes below n0 are the
 * forward graph): exit_dy[e] is the gradient reaching Exit node exit_ids[e] (or NULL).
 * *outs: the gradients of the values that went into the loop (its Enters' inputs). */
int rt_grad_while(rt_graph *g, int n0, const char *frame, const char *const *exit_dy,
                  const int *exit_ids, int n_exits, const char *scope, rt_grad_out **outs,
                  int *n_outs, rt_status *st);

#endif
