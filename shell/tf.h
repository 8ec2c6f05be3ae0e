/* The tensorflow and numpy bindings: Python objects over the runtime's graphs, tensors and
 * sessions. Internal to the shell (tf_*.c, np.c). */
#ifndef TFSH_SHELL_TF_H
#define TFSH_SHELL_TF_H

#include "runtime/graph.h"
#include "runtime/session.h"
#include "runtime/tensor.h"
#include "shell/value.h"

/* ---- numpy ------------------------------------------------------------------------ */

/* numpy.ndarray over a runtime tensor (0-d arrays stand in for numpy scalars). */
typedef struct np_array {
  sh_obj head;
  rt_tensor *t;
} np_array;

extern sh_type np_array_type;
extern sh_type np_dtype_type;
sh_obj *np_wrap(rt_tensor *t);                 /* steals t */
/* What sess.run returns for a tensor: an ndarray, or a scalar as numpy gives it (a Python
 * scalar, except a float32 0-d array, which prints as numpy's float32). Steals t. */
sh_obj *np_result(rt_tensor *t);
static inline bool np_check(const sh_obj *o) { return o->type == &np_array_type; }
/* A Python value (scalar, nested lists, ndarray) as a tensor. want: RT_INVALID to infer
 * (float32 for floats, int32 for ints, as TF1 converts Python values; ndarrays keep their
 * dtype, float64 included), else convert to that dtype. NULL with an exception. */
rt_tensor *np_to_tensor(sh_obj *v, rt_dtype want, bool numpy_defaults);
/* A dtype from tf.float32, np.float32, "float32", float, int... RT_INVALID if none. */
rt_dtype np_dtype_of(sh_obj *o);
sh_obj *np_dtype_obj(rt_dtype t);              /* borrowed */
sh_obj *np_module_init(void);
sh_obj *np_random_module(void);                /* numpy.random (np_random.c) */

/* ---- graphs, tensors, operations ---------------------------------------------------- */

typedef struct tf_graph tf_graph;

typedef struct tf_op {
  sh_obj head;
  tf_graph *graph;     /* holds a reference */
  int id;              /* node index */
} tf_op;

typedef struct tf_tensor {
  sh_obj head;
  tf_graph *graph;
  int id;
  int index;
} tf_tensor;

extern sh_type tf_graph_type, tf_op_type, tf_tensor_type, tf_dtype_type, tf_variable_type,
    tf_shape_type;
sh_obj *tf_shape_new(const rt_shape *s);
sh_obj *tf_graph_collection(tf_graph *g, const char *key, bool create);   /* borrowed */
int64_t tf_graph_seed(tf_graph *g);
void tf_graph_set_seed(tf_graph *g, int64_t s);
/* Build a binary / unary op from Python operands (operators, tf.add, ...). */
sh_obj *tf_binary_op(const char *op, const char *name, sh_obj *a, sh_obj *b);
sh_obj *tf_unary_op(const char *op, const char *name, sh_obj *x);
sh_obj *tf_getitem(sh_obj *t, sh_obj *key);
sh_obj *tf_errors_module(void);
/* The current name scope + name, made unique, with a trailing '/': "gradients_1/". */
sh_obj *tf_unique_scope(tf_graph *g, const char *name);
/* Apply the device scopes in force to node id (after it was added). */
int tf_apply_device_stack(tf_graph *g, int id);
sh_obj *tf_gradients_impl(sh_obj *ys, sh_obj *xs, sh_obj *grad_ys, const char *scope_name);
sh_obj *tf_ctx_new(int kind, tf_graph *g, sh_obj *arg);
sh_obj *tf_device_ctx(sh_obj *entry);
sh_obj *tf_graph_devices(tf_graph *g);
/* Parse a shape from None, a list/tuple of ints or None, or a TensorShape. */
int tf_shape_from_obj(sh_obj *o, rt_shape *s);
/* The Variable object's tensors (tf_variable.c): its ref output and its read snapshot. */
bool tf_variable_check(sh_obj *o);
sh_obj *tf_variable_ref(sh_obj *v);            /* borrowed Tensor */
sh_obj *tf_variable_value(sh_obj *v);          /* borrowed Tensor */

tf_graph *tf_default_graph(void);              /* borrowed */
rt_graph *tf_rt(tf_graph *g);
rt_node *tf_op_node(const tf_op *op);
rt_node *tf_tensor_node(const tf_tensor *t);
sh_obj *tf_tensor_new(tf_graph *g, int id, int index);
sh_obj *tf_op_new(tf_graph *g, int id);
/* "name:0" of a tensor, into buf. */
const char *tf_tensor_name(const tf_tensor *t, char *buf, size_t n);
sh_obj *tf_dtype_obj(rt_dtype t);              /* borrowed: tf.float32, ... */

/* Building a node: begin, set attrs and inputs, finish. finish applies the current name
 * scope (already in the name), control dependencies, colocation and device scopes, then
 * validates (ValueError / TypeError naming the node) and returns the Operation. */
rt_node *tf_node_begin(const char *op, sh_obj *name);   /* name: str or NULL/None */
rt_node *tf_node_begin_c(const char *op, const char *name);   /* name NULL: the op type */
/* A Const node holding value (a new reference is taken). */
sh_obj *tf_make_const(rt_tensor *value, sh_obj *name);
/* Convert x (Tensor, Variable, Python value, ndarray) and add it as the next data input.
 * hint: dtype for Python values (RT_INVALID: infer). On failure n is freed and -1 returned
 * with the exception raised; tf_node_finish likewise frees n on failure. */
int tf_node_input(rt_node *n, sh_obj *x, rt_dtype hint);
sh_obj *tf_node_finish(rt_node *n);            /* the tf.Operation, or NULL */
/* finish and return output 0 as a Tensor. */
sh_obj *tf_node_finish_tensor(rt_node *n);
/* Python value or Tensor → a Tensor in the default graph (Const when needed). */
sh_obj *tf_convert(sh_obj *x, rt_dtype hint);
/* The dtype x would have as a tensor (Tensor's dtype; RT_INVALID for Python values). */
rt_dtype tf_dtype_hint(sh_obj *x);
bool tf_is_tensorlike(sh_obj *x);

/* The exception class for a runtime status (tf.errors.*, ValueError, TypeError). */
sh_obj *tf_raise_status(const rt_status *st);

/* tf.Session and friends (tf_session.c). */
sh_obj *tf_session_type_obj(void);
extern sh_type tf_session_type;
sh_obj *tf_default_session(void);              /* borrowed or NULL */
/* t.eval() / op.run(): run fetch in `session` or the default session. */
sh_obj *tf_eval_in_session(sh_obj *fetch, sh_obj *feed_dict, sh_obj *session);

/* Module construction pieces. */
void tf_core_add(sh_obj *tf);                  /* Graph, dtypes, ... (tf_core.c) */
void tf_session_add(sh_obj *tf);               /* Session, ConfigProto, ... */
void tf_ops_add(sh_obj *tf);                   /* op functions (tf_ops.c) */

#endif
