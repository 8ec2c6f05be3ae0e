/* The tensorflow module: Python objects over the runtime's graphs, tensors and sessions.
 * The tf room's header (the .c files of shell/tf); the shell proper (shell/app) uses it too. */
#ifndef TFSH_SHELL_TF_H
#define TFSH_SHELL_TF_H

#include "runtime/graph.h"
#include "runtime/session.h"
#include "runtime/tensor.h"
#include "shell/py/lang.h"
#include "shell/np/np.h"

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

extern sh_type tf_graph_type, tf_op_type, tf_tensor_type, tf_variable_type,
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
/* The graph's current name scope ("" or "a/b/"), a buffer of TF_SCOPE_MAX bytes. */
#define TF_SCOPE_MAX 512
char *tf_graph_scope(tf_graph *g);
/* Apply the device scopes in force to node id (after it was added). */
int tf_apply_device_stack(tf_graph *g, int id);
/* tf.control_dependencies in force, applied to nodes [first, ...) a graph pass added. */
int tf_apply_controls_after(tf_graph *g, int first);
sh_obj *tf_gradients_impl(sh_obj *ys, sh_obj *xs, sh_obj *grad_ys, const char *scope_name, bool gate);
sh_obj *tf_ctx_new(int kind, tf_graph *g, sh_obj *arg);
sh_obj *tf_device_ctx(sh_obj *entry);
sh_obj *tf_graph_devices(tf_graph *g);
/* Parse a shape from None, a list/tuple of ints or None, or a TensorShape. */
int tf_shape_from_obj(sh_obj *o, rt_shape *s);
/* The Variable object's tensors (variable.c): its ref output and its read snapshot. */
bool tf_variable_check(sh_obj *o);
sh_obj *tf_variable_ref(sh_obj *v);            /* borrowed Tensor */
sh_obj *tf_variable_value(sh_obj *v);          /* borrowed Tensor */
/* Resource variables (variable.c): is it one; a new read of its value (a fresh
 * ReadVariableOp for a resource variable, the value tensor for a ref one); the default
 * that tf.enable_resource_variables() sets; Assign / AssignAdd / AssignSub on one. */
bool tf_variable_is_resource(sh_obj *v);
sh_obj *tf_variable_read(sh_obj *v);
/* What a control dependency on v means: the assignment for an assign's result (TF's
 * _UnreadVariable), else the variable's own node (borrowed). */
sh_obj *tf_variable_control(sh_obj *v);
bool tf_resource_default(void);
void tf_set_resource_default(bool on);
sh_obj *tf_resource_assign(const char *op, sh_obj *var, sh_obj *value, sh_obj *name, bool read);

/* tf.keras in graph mode (keras.c, keras.py.inc); 0 or -1 with an exception. */
int tf_keras_add(sh_obj *tf);

/* Bind TF 1.x's API names (api.c): every alias of what tfsh has, stubs for the rest. */
void tf_api_add(sh_obj *tf);

tf_graph *tf_default_graph(void);              /* borrowed */
/* Control-flow contexts (cflow.c): while a tf.while_loop body or a tf.cond branch is built,
 * ctx names it, and hook(tensor, consumer_name, is_ref) turns a tensor from outside into
 * one inside (an Enter, a Switch); hook(None, name, False) gives the pivot a new source
 * node waits on. ctx_of[id]: the context each op was made in. */
typedef struct tf_cf_state {
  sh_obj *hook;
  int ctx, busy, cap;
  int *ctx_of;
} tf_cf_state;
tf_cf_state *tf_graph_cf(tf_graph *g);
int tf_cf_ctx_of(tf_graph *g, int id);
sh_obj *tf_cf_call(tf_graph *g, sh_obj *t, const char *consumer, bool is_ref);
void tf_cf_record(tf_graph *g, int id);
rt_graph *tf_rt(tf_graph *g);
rt_node *tf_op_node(const tf_op *op);
rt_node *tf_tensor_node(const tf_tensor *t);
sh_obj *tf_tensor_new(tf_graph *g, int id, int index);
sh_obj *tf_op_new(tf_graph *g, int id);
/* "name:0" of a tensor, into buf. */
const char *tf_tensor_name(const tf_tensor *t, char *buf, size_t n);

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
/* Set while a Python gradient runs inside a tf.while_loop's gradient loop (ops.c): each
 * node tf_node_finish adds then reads forward values through its remap, as op_grad_node's do. */
extern const struct rt_grad_ctx *tf_loop_grad;
/* The items of list l whose name re.match(scope) matches, as TF's get_collection(key,
 * scope) keeps them (items without a name are left out): a new list, or NULL raised. */
sh_obj *tf_collection_in_scope(sh_obj *l, sh_obj *scope);
/* finish and return output 0 as a Tensor. */
sh_obj *tf_node_finish_tensor(rt_node *n);
/* Python value or Tensor → a Tensor in the default graph (Const when needed). */
sh_obj *tf_convert(sh_obj *x, rt_dtype hint);
/* The dtype x would have as a tensor (Tensor's dtype; RT_INVALID for Python values). */
rt_dtype tf_dtype_hint(sh_obj *x);
bool tf_is_tensorlike(sh_obj *x);

/* The exception class for a runtime status (tf.errors.*, ValueError, TypeError). */
sh_obj *tf_raise_status(const rt_status *st);

/* tf.Session and friends (session.c). */
sh_obj *tf_session_type_obj(void);
extern sh_type tf_session_type;
sh_obj *tf_default_session(void);              /* borrowed or NULL */
/* t.eval() / op.run(): run fetch in `session` or the default session. */
sh_obj *tf_eval_in_session(sh_obj *fetch, sh_obj *feed_dict, sh_obj *session);

/* The runtime session behind a tf.Session, and its graph (session.c). */
rt_session *tf_session_rt(sh_obj *sess, tf_graph **g);

/* An observer of Session.run: the shell's views (shell/app/views.c) set one at start-up
 * and so see every run without being on its path; with none, a run is the step alone.
 * Every callback may be NULL. */
typedef struct tf_run_observer {
  /* Before a run of sess (a tf.Session; s its runtime session) with RunOptions options
   * (NULL or None when not given): fill v, the run's options for the runtime (trace level,
   * partition graphs, busy times, and the tick called about every 50 ms while the step
   * runs). Returns what after_run gets back. */
  void *(*before_run)(sh_obj *sess, rt_session *s, sh_obj *options, rt_session_views *v);
  /* After it: rc the step's result (RT_OK or the error's code), v as the runtime filled
   * it, meta the RunMetadata to fill (NULL or None when not given). Must not raise. */
  void (*after_run)(void *run, int rc, const rt_session_views *v, sh_obj *meta);
  /* sess is going away. */
  void (*session_gone)(sh_obj *sess);
  /* The tensorflow module tf has just been built: what the observer adds to it. */
  void (*module_built)(sh_obj *tf);
} tf_run_observer;
void tf_set_run_observer(const tf_run_observer *o);   /* NULL: none */
const tf_run_observer *tf_get_run_observer(void);

/* Devices (device.c) and clusters (cluster.c). */
sh_obj *tf_device(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw);   /* tf.device */
sh_obj *tf_replica_device_setter(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw);
sh_obj *tf_greedy_new(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw);
/* A job's task seen in a ClusterSpec or a server of this process (device completion). */
void tf_device_note_task(const char *job, int task);
int tf_cluster_num_tasks(sh_obj *cluster, const char *job);
/* Tab completion of device strings inside tf.device("..."): an sh_completer_fn, which the
 * shell proper registers (shell/app/init.c). */
sh_obj *tf_device_complete(const char *line, size_t cursor, size_t *word_start);

/* Variables (variable.c). */
sh_obj *tf_variable_initializer(sh_obj *v);
bool tf_variable_trainable(sh_obj *v);
/* A variable built under a variable scope (get_variable in the prelude). */
sh_obj *tf_make_variable_scoped(const char *scope, sh_obj *initial, bool trainable,
                                sh_obj *collections, bool resource);

/* tf.train.QueueRunner's loop: op run on its own thread and session (runner.c). */
sh_obj *tf_start_runner(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw);
/* Stop the runners started on session (which is closing), or every runner (NULL): their
 * steps in flight are cancelled and their sessions closed. */
void tf_runners_stop(const sh_obj *session);

/* Module construction pieces. */
void tf_core_add(sh_obj *tf);                  /* Graph, dtypes, ... (core.c) */
void tf_cflow_add(sh_obj *tf);                 /* control-flow contexts (cflow.c) */
void tf_session_add(sh_obj *tf);               /* Session, ConfigProto, ... (session.c) */
void tf_ops_add(sh_obj *tf);                   /* op functions (ops.c) */
void tf_cluster_add(sh_obj *train);            /* ClusterSpec, Server (cluster.c) */
void tf_resolver_add(sh_obj *tf);              /* SlurmClusterResolver's engine (resolver.c) */
void tf_data_add(sh_obj *tf);                  /* datasets and input_data (data.c) */
void tf_events_add(sh_obj *tf);                /* summaries, event files (events.c) */
/* Attr a of node n from a Python value (ops.c); lists of types, shapes, strings (queues.c). */
struct rt_attr_sig;
int tf_set_attr(rt_node *n, const struct rt_attr_sig *a, sh_obj *v, const char *fname);
int tf_set_list_attr(rt_node *n, const struct rt_attr_sig *a, sh_obj *v, const char *fname);
int tf_queues_add(sh_obj *tf);
int tf_dataset_add(sh_obj *tf);                /* tf.data (dataset.c) */                 /* input pipelines (queues.c) */
int tf_files_add(sh_obj *tf);                  /* TF's files: checkpoints, GraphDefs (files.c) */
/* bytes (a str) as pointer and length, else a TypeError (files.c) */
bool tf_bytes_arg(sh_obj *o, const char **p, size_t *n);
int tf_metagraph_add(sh_obj *tf);              /* MetaGraphs (metagraph.c), after tf_files_add */
/* A Variable over nodes a graph already has (an imported MetaGraph's VariableDef). */
sh_obj *tf_variable_over(sh_obj *ref, sh_obj *value, sh_obj *init, sh_obj *initial, bool trainable,
                         bool resource);
int tf_pbobj_add(sh_obj *tf);                  /* protobuf messages, summary_iterator (pbobj.c) */
bool tf_bytes_of(sh_obj *o, const char **p, size_t *n);   /* a str or a 1-element string array (pbobj.c) */
void tf_pbobj_register_modules(void);           /* google.protobuf.text_format */
/* Register the importable numpy and tensorflow modules (module.c). */
void tf_register_modules(void);

#endif
