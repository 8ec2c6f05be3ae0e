/* Small builders of graph nodes for the unit tests of the executors, the partitioner and
 * the step-resource ops (include after cmocka.h and runtime/graph.h). */
#ifndef TFSH_TEST_GRAPH_BUILD_H
#define TFSH_TEST_GRAPH_BUILD_H

/* A node with up to two data inputs (NULL: none). */
static inline rt_node *node(const char *name, const char *op, const char *in0, const char *in1) {
  rt_node *n = rt_node_new(name, op);
  if (in0) rt_node_add_input(n, in0);
  if (in1) rt_node_add_input(n, in1);
  return n;
}

/* An int32 scalar Const, with a control input ctl unless NULL. */
static inline rt_node *iconst(const char *name, int32_t v, const char *ctl) {
  rt_node *n = rt_node_new(name, "Const");
  rt_tensor *t = rt_tensor_scalar_i32(v);
  rt_node_set_tensor(n, "value", t);
  rt_node_set_type(n, "dtype", RT_INT32);
  rt_tensor_unref(t);
  if (ctl) rt_node_add_control(n, ctl);
  return n;
}

/* Add n to g; a refusal fails the test. */
static inline void graph_add(rt_graph *g, rt_node *n) {
  rt_status st = {0};
  if (rt_graph_add(g, n, &st)) fail_msg("%s", st.msg);
}

/* A Const holding t (taken). */
static inline void graph_const(rt_graph *g, const char *name, rt_tensor *t) {
  rt_node *n = rt_node_new(name, "Const");
  rt_node_set_tensor(n, "value", t);
  rt_node_set_type(n, "dtype", t->dtype);
  rt_tensor_unref(t);
  graph_add(g, n);
}

/* Node name of type `type` on inputs in[] (a "^x" is a control input); tattr set to dt. */
static inline void graph_op(rt_graph *g, const char *name, const char *type, int n_in, const char *const *in,
                      const char *tattr, rt_dtype dt) {
  rt_node *n = rt_node_new(name, type);
  for (int i = 0; i < n_in; i++) rt_node_add_input(n, in[i]);
  if (tattr) rt_node_set_type(n, tattr, dt);
  graph_add(g, n);
}

#endif
