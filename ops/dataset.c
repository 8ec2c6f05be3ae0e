/* tf.data's iterators, host side: the element pipeline (Dataset.from_tensor_slices, map,
 * batch, shuffle, ...) runs in the interpreter of the process that built the graph
 * (shell/tf/dataset.c sets the hooks below); these ops hand its elements to the graph.
 *
 *   _HostIteratorGetNext   the iterator's next element (OutOfRange "End of sequence" when
 *                          it is exhausted)
 *   _HostIteratorInit      start (again) from the first element: the initializer; its
 *                          inputs are the tensors the dataset captured (placeholders)
 *
 * They run where the interpreter is: the client's own process (a local session, or a
 * device of an in-process server). They are RT_OP_CLIENT ops: the master places them on its
 * own task when the client is its process (whatever device the script asked for; the
 * elements go to their consumers by Send/Recv), and refuses the graph otherwise. A kernel
 * that finds itself in another process (an imported graph) refuses too, rather than serve
 * the elements of some other iterator. */
#include <string.h>

#include "ops/ops.h"
#include "ops/ops_int.h"

op_host_iterator_fn op_host_iterator_next, op_host_iterator_init;

void op_set_host_iterator(op_host_iterator_fn next, op_host_iterator_fn init) {
  op_host_iterator_next = next;
  op_host_iterator_init = init;
}

static bool here(rt_kernel_ctx *c, op_host_iterator_fn fn) {
  return fn && rt_node_int(c->node, "owner", 0) == rt_process_token();
}

static int get_next_kernel(rt_kernel_ctx *c) {
  if (!here(c, op_host_iterator_next))
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "a tf.data iterator runs only in the process that built it");
  int rc = op_host_iterator_next(rt_node_int(c->node, "id", 0), c->n_outputs, c->outputs, c->st);
  if (rc && c->st->code == RT_OUT_OF_RANGE) return rt_kernel_error(c, RT_OUT_OF_RANGE, "End of sequence");
  if (rc) return rt_kernel_error(c, c->st->code, "%s", c->st->msg);
  const rt_attr_value *t = rt_node_attr(c->node, "output_types");
  for (int i = 0; i < c->n_outputs; i++)
    if (!c->outputs[i] || (t && t->kind == RT_ATTR_LIST_TYPE && i < t->list.n && c->outputs[i]->dtype != ((rt_dtype *)t->list.v)[i]))
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "the dataset's component %d has not the type its iterator declares", i);
  return RT_OK;
}

static int init_kernel(rt_kernel_ctx *c) {
  if (!here(c, op_host_iterator_init))
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "a tf.data iterator runs only in the process that built it");
  /* the inputs: the values of the tensors the dataset captured (placeholders fed to this run) */
  int rc = op_host_iterator_init(rt_node_int(c->node, "id", 0), c->n_inputs, c->inputs, c->st);
  return rc ? rt_kernel_error(c, c->st->code, "%s", c->st->msg) : RT_OK;
}

static int get_next_shape(rt_shape_ctx *c) {
  const rt_attr_value *t = rt_node_attr(c->node, "output_types"), *s = rt_node_attr(c->node, "output_shapes");
  if (!t || t->kind != RT_ATTR_LIST_TYPE || t->list.n != c->n_outputs)
    return op_shape_error(c, 0, "an iterator needs one output type per component");
  for (int i = 0; i < c->n_outputs; i++) {
    c->out_types[i] = ((rt_dtype *)t->list.v)[i];
    if (s && s->kind == RT_ATTR_LIST_SHAPE && s->list.n == c->n_outputs) c->out_shapes[i] = ((rt_shape *)s->list.v)[i];
  }
  return RT_OK;
}

/* ---- tf.py_func: a Python function of the building interpreter as an op ---------------- */

op_host_pyfunc_fn op_host_pyfunc;

void op_set_host_pyfunc(op_host_pyfunc_fn fn) { op_host_pyfunc = fn; }

static int pyfunc_kernel(rt_kernel_ctx *c) {
  if (!op_host_pyfunc || rt_node_int(c->node, "owner", 0) != rt_process_token())
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "a tf.py_func runs only in the process whose interpreter built it");
  const rt_attr_value *t = rt_node_attr(c->node, "Tout");
  const rt_dtype *types = t && t->kind == RT_ATTR_LIST_TYPE ? t->list.v : NULL;
  int rc = op_host_pyfunc(rt_node_int(c->node, "id", 0), c->node->name, c->n_inputs, c->inputs, c->n_outputs, types,
                          c->outputs, c->st);
  return rc ? rt_kernel_error(c, c->st->code, "%s", c->st->msg) : RT_OK;
}

static int pyfunc_shape(rt_shape_ctx *c) {
  const rt_attr_value *t = rt_node_attr(c->node, "Tout");
  for (int i = 0; t && t->kind == RT_ATTR_LIST_TYPE && i < c->n_outputs && i < t->list.n; i++)
    c->out_types[i] = ((rt_dtype *)t->list.v)[i];
  return RT_OK;
}

#define PYFUNC(NAME, FLAGS)                                                                           \
  {.name = NAME, .inputs = "input: Nin * Tin", .outputs = "output: Nout * Tout",                      \
   .attrs = "id: int, owner: int = 0, Nin: int >= 0 = 0, Tin: list(type) = [], Nout: int >= 0 = 0, "  \
            "Tout: list(type) = []",                                                                  \
   .help = "A Python function of the interpreter that built the graph, called on numpy arrays.",       \
   .shape = pyfunc_shape, .kernel = {[RT_DEV_CPU] = pyfunc_kernel}, .grad = op_no_grad, .flags = FLAGS}

static const rt_op_def dataset_ops[] = {
  PYFUNC("PyFunc", RT_OP_STATEFUL | RT_OP_CLIENT),
  PYFUNC("PyFuncStateless", RT_OP_CLIENT),
  {.name = "_HostIteratorGetNext", .outputs = "components: N * output_types",
   .attrs = "id: int, owner: int = 0, N: int >= 1, output_types: list(type), output_shapes: list(shape) = []",
   .help = "The next element of a tf.data iterator (its pipeline runs in the interpreter).",
   .shape = get_next_shape, .kernel = {[RT_DEV_CPU] = get_next_kernel}, .flags = RT_OP_STATEFUL | RT_OP_SOURCE | RT_OP_CLIENT},
  {.name = "_HostIteratorInit", .inputs = "components: N * dtypes",
   .attrs = "id: int, owner: int = 0, N: int >= 0 = 0, dtypes: list(type) = []",
   .help = "Start a tf.data iterator from its first element; components: the values of the tensors its "
           "dataset captured (from_tensor_slices of placeholders).", .kernel = {[RT_DEV_CPU] = init_kernel},
   .flags = RT_OP_STATEFUL | RT_OP_SOURCE | RT_OP_CLIENT},
};

void op_dataset_register(void) { rt_op_register(dataset_ops, OP_COUNT(dataset_ops)); }
