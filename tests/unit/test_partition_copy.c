/* The master's fragments borrow the placed graph's nodes (rt_partition_opts.borrow,
 * rt_graph_add_borrowed): each fragment reads node for node as the deep copies do; a node
 * whose input became a _Recv keeps g's outputs, so what reads it is borrowed too; and a
 * borrowed node keeps g's node alive after g is freed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ops/ops.h"
#include "runtime/graph.h"
#include "runtime/op.h"
#include "runtime/partition.h"
#include "tests/unit/graph_build.h"

#define WK "/job:worker/replica:0/task:0/device:CPU:0"
#define PS "/job:ps/replica:0/task:0/device:CPU:0"

static void placed(rt_graph *g, rt_node *n, const char *dev) {
  n->assigned = strdup(dev);
  graph_add(g, n);
}

/* a, h = a + a (worker) -> b = h + h -> c = b + b -> d = c + c (ps) -> e = d + a (worker):
 * the ps fragment's ids are not g's (no node there is g's own) */
static rt_graph *chain(void) {
  rt_graph *g = rt_graph_new();
  rt_node *a = iconst("a", 3, NULL);
  placed(g, a, WK);
  placed(g, node("h", "Add", "a", "a"), WK);
  placed(g, node("b", "Add", "h", "h"), PS);
  placed(g, node("c", "Add", "b", "b"), PS);
  placed(g, node("d", "Add", "c", "c"), PS);
  placed(g, node("e", "Add", "d", "a"), WK);
  return g;
}

static void same_node(const rt_node *x, const rt_node *y) {
  assert_string_equal(x->name, y->name);
  assert_string_equal(x->op, y->op);
  assert_string_equal(x->assigned, y->assigned);
  assert_int_equal(x->n_inputs, y->n_inputs);
  for (int k = 0; k < x->n_inputs; k++) {
    assert_string_equal(x->inputs[k], y->inputs[k]);
    assert_int_equal(x->edges[k].node, y->edges[k].node);
    assert_int_equal(x->edges[k].index, y->edges[k].index);
  }
  assert_int_equal(x->n_attrs, y->n_attrs);
  assert_int_equal(x->n_outputs, y->n_outputs);
  for (int k = 0; k < x->n_outputs; k++) {
    assert_int_equal(x->out_types[k], y->out_types[k]);
    assert_true(rt_shape_equal(&x->out_shapes[k], &y->out_shapes[k]));
  }
}

static void test_borrowed_reads_as_copied(void **state) {
  (void)state;
  rt_status st = {0};
  rt_graph *g = chain();
  rt_partition *deep, *lent;
  int nd, nl;
  rt_partition_opts o = {.by_task = true};
  assert_int_equal(rt_partition_graph(g, NULL, &o, &deep, &nd, &st), RT_OK);
  o.borrow = true;
  assert_int_equal(rt_partition_graph(g, NULL, &o, &lent, &nl, &st), RT_OK);
  assert_int_equal(nd, 2);
  assert_int_equal(nl, 2);
  for (int p = 0; p < 2; p++) {
    assert_string_equal(deep[p].name, lent[p].name);
    assert_int_equal(deep[p].g->n_nodes, lent[p].g->n_nodes);
    for (int i = 0; i < deep[p].g->n_nodes; i++) same_node(deep[p].g->nodes[i], lent[p].g->nodes[i]);
  }
  int ps = rt_partition_of(lent, nl, "c");
  const rt_node *b = rt_graph_find(lent[ps].g, "b"), *c = rt_graph_find(lent[ps].g, "c"),
                *d = rt_graph_find(lent[ps].g, "d");
  assert_string_equal(b->inputs[0], "h/_recv_0");   /* rewritten: a node of its own */
  assert_null(b->base);
  assert_int_equal(b->out_shapes[0].ndims, 0);      /* g's scalar, not the _Recv's unknown */
  assert_ptr_equal(c->base, rt_graph_find(g, "c")); /* read through: borrowed */
  assert_ptr_equal(d->base, rt_graph_find(g, "d"));
  assert_ptr_equal(c->name, rt_graph_find(g, "c")->name);
  assert_int_equal(c->edges[0].node, b->id);        /* its own edges, in the fragment's ids */
  rt_graph_free(g);                                  /* the borrowed nodes keep theirs */
  assert_string_equal(c->name, "c");
  assert_string_equal(d->inputs[1], "c");
  rt_partitions_free(deep, nd);
  rt_partitions_free(lent, nl);
}

int main(void) {
  op_register_all();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_borrowed_reads_as_copied),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
