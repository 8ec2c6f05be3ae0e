/* The tensorflow module: the C pieces of shell/tf/ (core.c, ops.c, session.c, variable.c,
 * device.c, ...) and the Python frozen beside them: prelude.py.inc (flags, app.run, logging),
 * train.py.inc (optimizers, training helpers), control_flow.py.inc, rnn.py.inc, saver.py.inc
 * and the rest included below. numpy is Debian's (np_init: its C API). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "ops/ops.h"
#include "runtime/op.h"
#include "shell/py/lang.h"
#include "shell/tf/tf.h"


static const char prelude_src[] =
#include "shell/tf/prelude.py.inc"
;
#include "shell/tf/prelude.frozen.h"   /* prelude_frozen[]: generated, CMakeLists.txt */
static const char train_src[] =
#include "shell/tf/train.py.inc"
;
#include "shell/tf/train.frozen.h"   /* train_frozen[]: generated, CMakeLists.txt */
static const char control_flow_src[] =
#include "shell/tf/control_flow.py.inc"
;
#include "shell/tf/control_flow.frozen.h"   /* control_flow_frozen[]: generated, CMakeLists.txt */
static const char rnn_src[] =
#include "shell/tf/rnn.py.inc"
;
#include "shell/tf/rnn.frozen.h"   /* rnn_frozen[]: generated, CMakeLists.txt */
static const char saver_src[] =
#include "shell/tf/saver.py.inc"
;
#include "shell/tf/saver.frozen.h"   /* saver_frozen[]: generated, CMakeLists.txt */
static const char session_helpers_src[] =
#include "shell/tf/session_helpers.py.inc"
;
#include "shell/tf/session_helpers.frozen.h"   /* session_helpers_frozen[]: generated, CMakeLists.txt */
static const char testing_src[] =
#include "shell/tf/testing.py.inc"
;
#include "shell/tf/testing.frozen.h"   /* testing_frozen[]: generated, CMakeLists.txt */
static const char python_paths_src[] =
#include "shell/tf/python_paths.py.inc"
;
#include "shell/tf/python_paths.frozen.h"   /* python_paths_frozen[]: generated, CMakeLists.txt */
static const char mnist_tutorial_src[] =
#include "shell/tf/mnist_tutorial.py.inc"
;
#include "shell/tf/mnist_tutorial.frozen.h"   /* mnist_tutorial_frozen[]: generated, CMakeLists.txt */

/* ---- variables: collections and initializers ----------------------------------------- */

static sh_obj *collection(const char *key, sh_obj *scope) {
  sh_obj *l = tf_graph_collection(tf_default_graph(), key, false);
  sh_obj *all = l ? sh_sequence_to_list(l) : sh_list_new(0);
  if (!all || !scope || scope == SH_NONE) return all;
  sh_obj *some = tf_collection_in_scope(all, scope);
  sh_decref(all);
  return some;
}

static sh_obj *f_global_variables(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *scope = NULL;
  if (sh_parse_args("global_variables", argc, argv, kw, "|scope", &scope) < 0) return NULL;
  return collection("variables", scope);
}
static sh_obj *f_trainable_variables(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *scope = NULL;
  if (sh_parse_args("trainable_variables", argc, argv, kw, "|scope", &scope) < 0) return NULL;
  return collection("trainable_variables", scope);
}
static sh_obj *f_local_variables(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *scope = NULL;
  if (sh_parse_args("local_variables", argc, argv, kw, "|scope", &scope) < 0) return NULL;
  return collection("local_variables", scope);
}

static sh_obj *init_group(sh_obj *vars, const char *name) {
  rt_node *n = tf_node_begin_c("NoOp", name);
  sh_obj *it = sh_iter(vars);
  if (!it) { rt_node_free(n); return NULL; }
  for (sh_obj *v; (v = sh_next(it));) {
    if (!tf_variable_check(v)) {
      sh_decref(v);
      sh_decref(it);
      rt_node_free(n);
      return sh_raise(sh_TypeError, "expected a list of Variables, got %s", sh_type_name(v));
    }
    rt_node_add_control(n, tf_op_node((tf_op *)tf_variable_initializer(v))->name);
    sh_decref(v);
  }
  sh_decref(it);
  return tf_node_finish(n);
}

static sh_obj *f_variables_initializer(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *vars, *name = NULL;
  if (sh_parse_args("variables_initializer", argc, argv, kw, "var_list |name", &vars, &name) < 0) return NULL;
  return init_group(vars, name && sh_is_str(name) ? sh_str_cstr(name) : "init");
}

static sh_obj *f_global_variables_initializer(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  if (sh_parse_args("global_variables_initializer", argc, argv, kw, "") < 0) return NULL;
  sh_obj *vars = collection("variables", NULL);
  sh_obj *r = init_group(vars, "init");
  sh_decref(vars);
  return r;
}

static sh_obj *f_local_variables_initializer(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  if (sh_parse_args("local_variables_initializer", argc, argv, kw, "") < 0) return NULL;
  sh_obj *vars = collection("local_variables", NULL);
  sh_obj *r = init_group(vars, "init_1");
  sh_decref(vars);
  return r;
}

static sh_obj *f_is_variable_initialized(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *v, *name = NULL;
  if (sh_parse_args("is_variable_initialized", argc, argv, kw, "variable |name", &v, &name) < 0) return NULL;
  if (!tf_variable_check(v)) return sh_raise(sh_TypeError, "is_variable_initialized needs a Variable");
  rt_node *n = tf_node_begin(tf_variable_is_resource(v) ? "VarIsInitializedOp" : "IsVariableInitialized", name);
  if (tf_node_input(n, tf_variable_ref(v), RT_INVALID) < 0) return NULL;
  return tf_node_finish_tensor(n);
}

/* report_uninitialized_variables: names of the variables not initialized yet. */
static sh_obj *f_report_uninitialized(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *vars = NULL, *name = NULL;
  if (sh_parse_args("report_uninitialized_variables", argc, argv, kw, "|var_list name", &vars, &name) < 0) return NULL;
  sh_obj *list = vars && vars != SH_NONE ? sh_sequence_to_list(vars) : collection("variables", NULL);
  if (!list) return NULL;
  rt_node *n = tf_node_begin_c("_ReportUninitialized", name && sh_is_str(name) ? sh_str_cstr(name) : "report_uninitialized_variables");
  int64_t cnt = SH_LIST_N(list);
  const char **names = xcalloc((size_t)cnt + 1, sizeof *names);
  for (int64_t i = 0; i < cnt; i++) {
    sh_obj *v = SH_LIST_ITEMS(list)[i];
    if (!tf_variable_check(v)) {
      free(names);
      sh_decref(list);
      rt_node_free(n);
      return sh_raise(sh_TypeError, "expected a list of Variables");
    }
    names[i] = tf_tensor_node((tf_tensor *)tf_variable_ref(v))->name;
    /* one IsVariableInitialized per variable, on the variable's device (its ref input) */
    const char *fop = tf_variable_is_resource(v) ? "VarIsInitializedOp" : "IsVariableInitialized";
    rt_node *flag = tf_node_begin_c(fop, fop);
    sh_obj *f = tf_node_input(flag, tf_variable_ref(v), RT_INVALID) < 0 ? NULL : tf_node_finish_tensor(flag);
    if (!f || tf_node_input(n, f, RT_BOOL) < 0) {
      sh_decref(f);
      free(names);
      sh_decref(list);
      if (f) return NULL;
      rt_node_free(n);
      return NULL;
    }
    sh_decref(f);
  }
  rt_node_set_strings(n, "var_names", (int)cnt, names);
  free(names);
  sh_decref(list);
  return tf_node_finish_tensor(n);
}

static sh_obj *assign_fn(const char *op, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *ref, *value, *validate = NULL, *lock = NULL, *name = NULL;
  if (sh_parse_args(op, argc, argv, kw, "ref value |validate_shape use_locking name", &ref, &value, &validate,
                    &lock, &name) < 0)
    return NULL;
  if (tf_variable_is_resource(ref)) return tf_resource_assign(op, ref, value, name, true);
  sh_obj *r = tf_variable_check(ref) ? tf_variable_ref(ref) : ref;
  rt_node *n = tf_node_begin(op, name);
  if (tf_node_input(n, r, RT_INVALID) < 0) return NULL;
  if (tf_node_input(n, value, tf_dtype_hint(r)) < 0) return NULL;
  if (validate && validate != SH_NONE && !sh_truth(validate) && !strcmp(op, "Assign"))
    rt_node_set_bool(n, "validate_shape", false);
  return tf_node_finish_tensor(n);
}
static sh_obj *f_assign(sh_obj *s, int c, sh_obj **v, sh_obj *k) { return assign_fn("Assign", c, v, k); }
static sh_obj *f_assign_add(sh_obj *s, int c, sh_obj **v, sh_obj *k) { return assign_fn("AssignAdd", c, v, k); }
static sh_obj *f_assign_sub(sh_obj *s, int c, sh_obj **v, sh_obj *k) { return assign_fn("AssignSub", c, v, k); }

/* Whether attr `key` of op is a shape (a list then gives its dims, None unknown). */
static bool attr_is_shape(const char *op, const char *key) {
  const rt_op_sig *sig = rt_op_find(op);
  for (int i = 0; sig && i < sig->n_attrs; i++)
    if (!strcmp(sig->attrs[i].name, key)) return sig->attrs[i].kind == RT_ATTR_SHAPE;
  return false;
}

static int set_shape_attr(rt_node *n, const char *key, sh_obj *v) {
  sh_obj *tup = sh_sequence_to_tuple(v);
  if (!tup) return -1;
  rt_shape s = {.ndims = (int)SH_TUPLE_N(tup)};
  int rc = 0;
  if (s.ndims > RT_MAX_DIMS) {
    sh_raise(sh_ValueError, "a shape has at most %d dimensions", RT_MAX_DIMS);
    rc = -1;
  }
  for (int i = 0; !rc && i < s.ndims; i++) {
    sh_obj *d = SH_TUPLE_ITEMS(tup)[i];
    if (d == SH_NONE) s.dims[i] = -1;
    else if (sh_as_int(d, &s.dims[i]) < 0) rc = -1;
  }
  sh_decref(tup);
  if (!rc) rt_node_set_shape(n, key, &s);
  return rc;
}

/* _make_node(op, name, inputs, attrs, device=None) for the prelude: inputs is a list of
 * tensors / values; attrs a dict of Python values, set as the op's signature says. Returns
 * the Operation. */
static sh_obj *f_make_node(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *op, *name = NULL, *inputs = NULL, *attrs = NULL, *controls = NULL;
  if (sh_parse_args("_make_node", argc, argv, kw, "op |name inputs attrs control_inputs", &op, &name, &inputs,
                    &attrs, &controls) < 0)
    return NULL;
  const char *ops = sh_as_cstr(op);
  if (!ops) return NULL;
  rt_node *n = tf_node_begin(ops, name);
  if (attrs && attrs != SH_NONE) {
    sh_obj *k, *v;
    for (int64_t pos = 0; sh_dict_next(attrs, &pos, &k, &v);) {
      const char *key = sh_str_cstr(k);
      rt_dtype t;
      if (Py_TYPE(v) == &tf_dtype_type || (!PyType_Check(v) && !np_check(v) && PyObject_HasAttrString(v, "kind") && PyObject_HasAttrString(v, "char"))) {
        t = np_dtype_of(v);
        rt_node_set_type(n, key, t);
      } else if (PyBool_Check(v)) {
        rt_node_set_bool(n, key, v == sh_true);
      } else if (sh_is_int(v)) {
        rt_node_set_int(n, key, sh_int_value(v));
      } else if (sh_is_float(v)) {
        rt_node_set_float(n, key, sh_float_value(v));
      } else if (sh_is_str(v)) {
        rt_node_set_string(n, key, sh_str_cstr(v));
      } else if ((Py_TYPE(v) == (PyTypeObject *)&sh_list_type || Py_TYPE(v) == (PyTypeObject *)&sh_tuple_type) && attr_is_shape(ops, key)) {
        if (set_shape_attr(n, key, v) < 0) { rt_node_free(n); return NULL; }
      } else if (Py_TYPE(v) == (PyTypeObject *)&sh_list_type || Py_TYPE(v) == (PyTypeObject *)&sh_tuple_type) {
        sh_obj *tup = sh_sequence_to_tuple(v);
        int64_t cnt = SH_TUPLE_N(tup);
        bool strs = cnt > 0 && sh_is_str(SH_TUPLE_ITEMS(tup)[0]);
        if (strs) {
          const char **sv = xcalloc((size_t)cnt + 1, sizeof *sv);
          for (int64_t i = 0; i < cnt; i++) sv[i] = sh_is_str(SH_TUPLE_ITEMS(tup)[i]) ? sh_str_cstr(SH_TUPLE_ITEMS(tup)[i]) : "";
          rt_node_set_strings(n, key, (int)cnt, sv);
          free(sv);
        } else {
          int64_t iv[64];
          for (int64_t i = 0; i < cnt && i < 64; i++) sh_as_int(SH_TUPLE_ITEMS(tup)[i], &iv[i]);
          rt_node_set_ints(n, key, (int)(cnt < 64 ? cnt : 64), iv);
        }
        sh_decref(tup);
      } else if (np_check(v)) {
        rt_tensor *t = np_tensor_of(v);
        if (!t) { rt_node_free(n); return NULL; }
        rt_node_set_tensor(n, key, t);
        rt_tensor_unref(t);
      }
    }
  }
  if (inputs && inputs != SH_NONE) {
    sh_obj *tup = sh_sequence_to_tuple(inputs);
    if (!tup) { rt_node_free(n); return NULL; }
    rt_dtype hint = RT_INVALID;
    for (int64_t i = 0; i < SH_TUPLE_N(tup) && hint == RT_INVALID; i++) hint = tf_dtype_hint(SH_TUPLE_ITEMS(tup)[i]);
    for (int64_t i = 0; i < SH_TUPLE_N(tup); i++)
      if (tf_node_input(n, SH_TUPLE_ITEMS(tup)[i], hint) < 0) { sh_decref(tup); return NULL; }
    sh_decref(tup);
  }
  if (controls && controls != SH_NONE) {
    sh_obj *it = sh_iter(controls);
    for (sh_obj *c; it && (c = sh_next(it));) {
      sh_obj *o = tf_variable_check(c) ? tf_variable_ref(c) : c;
      if (Py_TYPE(o) == (PyTypeObject *)&tf_op_type) rt_node_add_control(n, tf_op_node((tf_op *)o)->name);
      else if (Py_TYPE(o) == (PyTypeObject *)&tf_tensor_type) rt_node_add_control(n, tf_tensor_node((tf_tensor *)o)->name);
      sh_decref(c);
    }
    sh_decref(it);
  }
  return tf_node_finish(n);
}

static sh_obj *f_make_variable(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw);
static sh_obj *f_enable_resource(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw);
static sh_obj *f_disable_resource(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw);
static sh_obj *f_resource_enabled(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw);

/* _bench_sgemm(n, reps=3, threads=0): raw BLIS sgemm in this process, best seconds — the
 * baseline benchmark scripts compare sess.run against (threads 0: every core). */
static sh_obj *f_bench_sgemm(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *n, *reps = NULL, *threads = NULL;
  if (sh_parse_args("_bench_sgemm", argc, argv, kw, "n |reps threads", &n, &reps, &threads) < 0) return NULL;
  int64_t nn, r = 3, t = 0;
  if (sh_as_int(n, &nn) < 0 || (reps && sh_as_int(reps, &r) < 0) || (threads && sh_as_int(threads, &t) < 0))
    return NULL;
  if (t <= 0) t = rt_intra_threads();
  double s = op_bench_sgemm((int)nn, (int)r, (int)t);
  if (s < 0) return sh_raise(sh_ValueError, "out of memory");
  return sh_float(s);
}

/* _bench_gpu(what, n, reps=3): a GPU baseline in this process, best seconds
 * (op_bench_gpu); RuntimeError("no GPU: ...") where there is none. */
static sh_obj *f_bench_gpu(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *what, *n, *reps = NULL;
  if (sh_parse_args("_bench_gpu", argc, argv, kw, "what n |reps", &what, &n, &reps) < 0) return NULL;
  int64_t nn, r = 3;
  if (!sh_is_str(what)) return sh_raise(sh_TypeError, "_bench_gpu: what must be a string");
  if (sh_as_int(n, &nn) < 0 || (reps && sh_as_int(reps, &r) < 0)) return NULL;
  char why[300] = "";
  double s = op_bench_gpu(sh_str_cstr(what), nn, (int)r, why, sizeof why);
  if (s < 0) return sh_raise(sh_RuntimeError, "%s", why);
  return sh_float(s);
}

/* The script's main(), for tf.app.run() without main=. */
static sh_obj *f_main_function(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *m = sh_dict_get_str(sh_main_globals(), "main");
  if (!m) return sh_raise(sh_AttributeError, "tf.app.run() needs main=... or a function main in the script");
  return sh_incref(m);
}

/* _main_globals(): the main program's namespace, where tf.test.main finds its TestCases (internal) */
static sh_obj *f_main_globals(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  (void)self;
  if (sh_parse_args("_main_globals", argc, argv, kw, "") < 0) return NULL;
  return sh_incref(sh_main_globals());
}

static const sh_method module_funcs[] = {
  {"_main_globals", f_main_globals, "_main_globals()", "The main program's namespace (internal)."},
  {"device", tf_device, "device(device_name_or_function)", "Ops created inside go to this device (a spec, a function, or None to clear)."},
  {"global_variables", f_global_variables, "global_variables(scope=None)", "Variables in the GLOBAL_VARIABLES collection."},
  {"all_variables", f_global_variables, "all_variables()", "Deprecated name of global_variables."},
  {"trainable_variables", f_trainable_variables, "trainable_variables(scope=None)", "Variables that optimizers train."},
  {"local_variables", f_local_variables, "local_variables(scope=None)", "Variables in the LOCAL_VARIABLES collection."},
  {"variables_initializer", f_variables_initializer, "variables_initializer(var_list, name='init')", "An op that initializes these variables."},
  {"global_variables_initializer", f_global_variables_initializer, "global_variables_initializer()", "An op that initializes every global variable."},
  {"initialize_all_variables", f_global_variables_initializer, "initialize_all_variables()", "Deprecated name of global_variables_initializer."},
  {"local_variables_initializer", f_local_variables_initializer, "local_variables_initializer()", "An op that initializes the local variables."},
  {"is_variable_initialized", f_is_variable_initialized, "is_variable_initialized(variable)", "A bool tensor: has it been initialized?"},
  {"report_uninitialized_variables", f_report_uninitialized, "report_uninitialized_variables(var_list=None)", "Names of variables not initialized yet."},
  {"assign", f_assign, "assign(ref, value, validate_shape=None, use_locking=None, name=None)", "ref = value."},
  {"assign_add", f_assign_add, "assign_add(ref, value, use_locking=None, name=None)", "ref += value."},
  {"assign_sub", f_assign_sub, "assign_sub(ref, value, use_locking=None, name=None)", "ref -= value."},
  {"_make_node", f_make_node, "_make_node(op, name=None, inputs=None, attrs=None, control_inputs=None)", "Build any registered op (internal)."},
  {"_bench_sgemm", f_bench_sgemm, "_bench_sgemm(n, reps=3, threads=0)", "Raw BLIS sgemm seconds (benchmark baseline)."},
  {"_bench_gpu", f_bench_gpu, "_bench_gpu(what, n, reps=3)", "GPU baseline seconds: sgemm, h2d_raw, h2d_runtime."},
  {"_start_runner", tf_start_runner, "_start_runner(session, op)", "Run op in a loop on its own thread and session (internal)."},
  {"_main_function", f_main_function, "_main_function()", "The script's main (internal)."},
  {"_make_variable", f_make_variable, "_make_variable(scope, initial, trainable, collections, use_resource=None)", "Build a variable under a scope (internal)."},
  {"enable_resource_variables", f_enable_resource, "enable_resource_variables()", "Variables made from now on are resource variables."},
  {"disable_resource_variables", f_disable_resource, "disable_resource_variables()", "Variables made from now on are ref variables (TF1's default)."},
  {"resource_variables_enabled", f_resource_enabled, "resource_variables_enabled()", "Whether new variables are resource variables."},
  {NULL},
};

static const sh_method train_funcs[] = {
  {"replica_device_setter", tf_replica_device_setter,
   "replica_device_setter(ps_tasks=0, ps_device='/job:ps', worker_device='/job:worker', merge_devices=True, cluster=None, ps_ops=None, ps_strategy=None)",
   "A device function: variables round-robin over ps tasks, everything else on the worker."},
  {NULL},
};

static sh_obj *f_make_variable(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *scope, *initial, *trainable = NULL, *collections = NULL, *use_resource = NULL;
  if (sh_parse_args("_make_variable", argc, argv, kw, "scope initial |trainable collections use_resource", &scope,
                    &initial, &trainable, &collections, &use_resource) < 0)
    return NULL;
  const char *s = sh_as_cstr(scope);
  if (!s) return NULL;
  bool resource = use_resource && use_resource != SH_NONE ? sh_truth(use_resource) > 0 : tf_resource_default();
  return tf_make_variable_scoped(s, initial, !trainable || sh_truth(trainable) > 0, collections, resource);
}

/* tf.enable_resource_variables() / disable_resource_variables() / resource_variables_enabled() */
static sh_obj *f_enable_resource(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  if (sh_parse_args("enable_resource_variables", argc, argv, kw, "") < 0) return NULL;
  tf_set_resource_default(true);
  return sh_none();
}
static sh_obj *f_disable_resource(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  if (sh_parse_args("disable_resource_variables", argc, argv, kw, "") < 0) return NULL;
  tf_set_resource_default(false);
  return sh_none();
}
static sh_obj *f_resource_enabled(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  if (sh_parse_args("resource_variables_enabled", argc, argv, kw, "") < 0) return NULL;
  return sh_bool(tf_resource_default());
}

/* tensorflow.python.framework.ops and the other paths legacy code imports (python_paths.py.inc). */
static int python_paths_add(sh_obj *tf) {
  sh_obj *g = sh_dict_new();
  int rc = g && sh_dict_set_str(g, "_tf", tf) == 0 ? sh_exec_frozen(python_paths_frozen, sizeof python_paths_frozen, python_paths_src, "<tensorflow.python>", g) : -1;
  sh_decref(g);
  return rc;
}

static sh_obj *tf_init(void) {
  op_register_all();
  if (np_init() < 0) return NULL;    /* numpy's C API; the prelude uses numpy too */
  sh_obj *tf = sh_module_new("tensorflow");
  sh_module_add(tf, "__version__", sh_str("1.15.5"));
  sh_module_add(tf, "VERSION", sh_str("1.15.5"));
  sh_module_add(tf, "errors", tf_errors_module());
  sh_obj *train = sh_module_new("tensorflow.train");
  sh_module_add_funcs(train, train_funcs);
  tf_cluster_add(train);
  sh_module_add_sub(tf, "train", train);
  sh_obj *contrib = sh_module_new("tensorflow.contrib");
  sh_obj *ctrain = sh_module_new("tensorflow.contrib.training");
  sh_module_add_func(ctrain, "GreedyLoadBalancingStrategy", tf_greedy_new, "GreedyLoadBalancingStrategy(num_tasks, load_fn=None)",
                     "A ps_strategy: each variable to the ps task with the fewest bytes so far.");
  sh_module_add_sub(contrib, "training", ctrain);
  sh_module_add_sub(tf, "contrib", contrib);
  tf_core_add(tf);
  tf_cflow_add(tf);
  tf_session_add(tf);
  tf_ops_add(tf);
  sh_module_add_funcs(tf, module_funcs);
  sh_module_add(tf, "Variable", sh_incref((sh_obj *)&tf_variable_type));
  /* tf.compat.v1 is tf itself: legacy code imports either */
  sh_obj *compat = sh_module_new("tensorflow.compat");
  sh_module_add(compat, "v1", sh_incref(tf));
  sh_module_add_sub(tf, "compat", compat);
  tf_data_add(tf);
  tf_events_add(tf);
  tf_resolver_add(tf);
  sh_obj *dict = sh_module_dict(tf);
  if (sh_exec_frozen(prelude_frozen, sizeof prelude_frozen, prelude_src, "<tensorflow>", dict) < 0 ||
      sh_exec_frozen(train_frozen, sizeof train_frozen, train_src, "<tensorflow.train>", dict) < 0 ||
      sh_exec_frozen(control_flow_frozen, sizeof control_flow_frozen, control_flow_src, "<tensorflow.control_flow>", dict) < 0 ||
      sh_exec_frozen(rnn_frozen, sizeof rnn_frozen, rnn_src, "<tensorflow.rnn>", dict) < 0 ||
      sh_exec_frozen(saver_frozen, sizeof saver_frozen, saver_src, "<tensorflow.saver>", dict) < 0 ||
      sh_exec_frozen(session_helpers_frozen, sizeof session_helpers_frozen, session_helpers_src, "<tensorflow.session_helpers>", dict) < 0 ||
      sh_exec_frozen(testing_frozen, sizeof testing_frozen, testing_src, "<tensorflow.test>", dict) < 0 ||
      tf_keras_add(tf) < 0) {
    sh_decref(tf);
    return NULL;
  }
  /* the run observer's additions (the views: RunMetadata records, GraphDef, timeline) */
  const tf_run_observer *o = tf_get_run_observer();
  if (o && o->module_built) o->module_built(tf);
  if (python_paths_add(tf) < 0) {   /* tensorflow.python.* (after the views' client.timeline) */
    sh_decref(tf);
    return NULL;
  }
  if (tf_files_add(tf) < 0 || tf_metagraph_add(tf) < 0 || tf_pbobj_add(tf) < 0 || tf_queues_add(tf) < 0 ||
      tf_dataset_add(tf) < 0) {   /* TF's files, queues, datasets (after the views) */
    sh_decref(tf);
    return NULL;
  }
  tf_api_add(tf);     /* every name TF 1.x gives (last: it binds what the rest defined) */
  return tf;
}


/* tensorflow.examples.tutorials.mnist.mnist: the fully_connected_feed tutorial's model
 * module, imported on first use (it imports tensorflow itself). */
static sh_obj *mnist_tutorial_init(void) {
  sh_obj *m = sh_module_new("tensorflow.examples.tutorials.mnist.mnist");
  if (sh_exec_frozen(mnist_tutorial_frozen, sizeof mnist_tutorial_frozen, mnist_tutorial_src, "<tensorflow.examples.tutorials.mnist.mnist>", sh_module_dict(m)) < 0) {
    sh_decref(m);
    return NULL;
  }
  return m;
}

void tf_register_modules(void) {
  sh_register_module("tensorflow", tf_init);
  tf_pbobj_register_modules();   /* google.protobuf.text_format */
  sh_register_module("tensorflow.examples.tutorials.mnist.mnist", mnist_tutorial_init);
}
