/* Variables as TF1 builds them: a VariableV2 node "v" (state on its device), "v/Assign"
 * (the initializer) and "v/read" (an Identity colocated with it, what readers use) —
 * plus get_variable with variable scopes and reuse, initializers, and the
 * initialize / report ops. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shell/tf/tf.h"

typedef struct tf_var {
  sh_obj head;
  sh_obj *ref;        /* Tensor: VariableV2:0 */
  sh_obj *value;      /* Tensor: v/read:0 */
  sh_obj *init;       /* Operation: v/Assign */
  sh_obj *initial;    /* Tensor: the initial value */
  bool trainable;
  /* A resource variable (TF's ResourceVariable): ref is the VarHandleOp's handle, value
   * "v/Read/ReadVariableOp", init "v/Assign" (an AssignVariableOp); each use as a tensor
   * reads it afresh (a ReadVariableOp where it is used), as TF does. */
  bool resource;
  /* What assign / assign_add / assign_sub return with read_value (TF's _UnreadVariable):
   * op is the assignment (init here), and its value the read made after it (value). */
  bool unread;
} tf_var;

/* A Variable over its nodes (takes the references). */
static tf_var *var_new(sh_obj *ref, sh_obj *value, sh_obj *init, sh_obj *initial, bool trainable,
                       bool resource) {
  tf_var *v = sh_new(&tf_variable_type);
  v->ref = ref;
  v->value = value;
  v->init = init;
  v->initial = initial;
  v->trainable = trainable;
  v->resource = resource;
  return v;
}

bool tf_variable_check(sh_obj *o) { return Py_TYPE(o) == (PyTypeObject *)&tf_variable_type; }
sh_obj *tf_variable_ref(sh_obj *v) { return ((tf_var *)v)->ref; }
sh_obj *tf_variable_value(sh_obj *v) { return ((tf_var *)v)->value; }
sh_obj *tf_variable_initializer(sh_obj *v) { return ((tf_var *)v)->init; }
bool tf_variable_trainable(sh_obj *v) { return ((tf_var *)v)->trainable; }
bool tf_variable_is_resource(sh_obj *v) { return tf_variable_check(v) && ((tf_var *)v)->resource; }

static rt_node *handle_node(tf_var *v) { return tf_tensor_node((tf_tensor *)v->ref); }
static rt_dtype var_dtype(tf_var *v) {
  rt_node *n = handle_node(v);
  return v->resource ? rt_node_type(n, "dtype", RT_FLOAT) : n->out_types[0];
}
static rt_shape var_shape(tf_var *v) {
  rt_node *n = handle_node(v);
  const rt_attr_value *a = v->resource ? rt_node_attr(n, "shape") : NULL;
  if (v->resource) return a && a->kind == RT_ATTR_SHAPE ? a->shape : rt_shape_unknown();
  return n->out_shapes[0];
}

/* A ReadVariableOp of resource variable v named `name` in the current scope (a new Tensor). */
static sh_obj *read_op(sh_obj *self, const char *name, const char *after) {
  tf_var *v = (tf_var *)self;
  rt_node *n = tf_node_begin_c("ReadVariableOp", name);
  rt_node_set_type(n, "dtype", var_dtype(v));
  if (tf_node_input(n, v->ref, RT_INVALID) < 0) return NULL;
  if (after) rt_node_add_control(n, after);
  return tf_node_finish_tensor(n);
}

sh_obj *tf_variable_control(sh_obj *v) {
  return ((tf_var *)v)->unread ? ((tf_var *)v)->init : ((tf_var *)v)->ref;
}

sh_obj *tf_variable_read(sh_obj *v) {
  if (!tf_variable_is_resource(v) || ((tf_var *)v)->unread) return sh_incref(tf_variable_value(v));
  /* Inside a loop body or a branch: the variable's own read, made outside, enters as a value
   * (as a ref variable's v/read does), so gradients flow through the loop as for any value. */
  if (tf_graph_cf(tf_default_graph())->ctx != 0) return sh_incref(tf_variable_value(v));
  return read_op(v, "ReadVariableOp", NULL);
}

static void var_destroy(sh_obj *self) {
  tf_var *v = (tf_var *)self;
  sh_decref(v->ref);
  sh_decref(v->value);
  sh_decref(v->init);
  sh_decref(v->initial);
}

static sh_obj *var_repr(sh_obj *self) {
  tf_var *v = (tf_var *)self;
  rt_node *n = handle_node(v);
  char shape[256];
  rt_shape s = var_shape(v);
  rt_shape_str(&s, shape, sizeof shape);
  return sh_strf("<tf.Variable '%s:0' shape=%s dtype=%s%s>", n->name, shape,
                 rt_dtype_name(var_dtype(v)), v->resource ? "" : "_ref");
}

/* Assign-like ops on a variable: tf.assign(v, x), v.assign(x), ... */
static sh_obj *assign_op(const char *op, sh_obj *var, sh_obj *value, sh_obj *name, bool validate) {
  sh_obj *ref = tf_variable_check(var) ? tf_variable_ref(var) : var;
  if (Py_TYPE(ref) != (PyTypeObject *)&tf_tensor_type || !tf_tensor_node((tf_tensor *)ref)->out_refs[((tf_tensor *)ref)->index])
    return sh_raise(sh_TypeError, "%s needs a variable as its first argument, not %s", op, sh_type_name(var));
  rt_node *n = tf_node_begin(op, name);
  if (!name || name == SH_NONE) {
    rt_node_free(n);
    n = tf_node_begin_c(op, op);
  }
  if (tf_node_input(n, ref, RT_INVALID) < 0) return NULL;
  if (tf_node_input(n, value, tf_dtype_hint(ref)) < 0) return NULL;
  if (!strcmp(op, "Assign") && !validate) rt_node_set_bool(n, "validate_shape", false);
  return tf_node_finish_tensor(n);
}

/* On a resource variable: AssignVariableOp (or Add / Sub); with read_value, the value read
 * after it (a ReadVariableOp with the assignment as control input), else the op. */
sh_obj *tf_resource_assign(const char *op, sh_obj *self, sh_obj *value, sh_obj *name, bool read) {
  tf_var *v = (tf_var *)self;
  const char *rop = !strcmp(op, "Assign") ? "AssignVariableOp"
                    : !strcmp(op, "AssignAdd") ? "AssignAddVariableOp" : "AssignSubVariableOp";
  rt_node *n = name && name != SH_NONE ? tf_node_begin(rop, name) : tf_node_begin_c(rop, rop);
  rt_node_set_type(n, "dtype", var_dtype(v));
  if (tf_node_input(n, v->ref, RT_INVALID) < 0) return NULL;
  if (tf_node_input(n, value, var_dtype(v)) < 0) return NULL;
  sh_obj *o = tf_node_finish(n);
  if (!o || !read) return o;
  char after[512];
  snprintf(after, sizeof after, "%s", tf_op_node((tf_op *)o)->name);
  sh_obj *rd = read_op(self, "ReadVariableOp", after);
  if (!rd) {
    sh_decref(o);
    return NULL;
  }
  tf_var *u = var_new(sh_incref(v->ref), rd, o, NULL, false, true);
  u->unread = true;
  return (sh_obj *)u;
}

static sh_obj *m_assign_generic(const char *op, sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *value, *lock = NULL, *name = NULL, *read = NULL;
  if (sh_parse_args(op, argc, argv, kw, "value |use_locking name read_value", &value, &lock, &name, &read) < 0) return NULL;
  if (((tf_var *)self)->resource)
    return tf_resource_assign(op, self, value, name, !read || sh_truth(read) > 0);
  return assign_op(op, self, value, name, true);
}
static sh_obj *m_assign(sh_obj *s, int c, sh_obj **v, sh_obj *k) { return m_assign_generic("Assign", s, c, v, k); }
static sh_obj *m_assign_add(sh_obj *s, int c, sh_obj **v, sh_obj *k) { return m_assign_generic("AssignAdd", s, c, v, k); }
static sh_obj *m_assign_sub(sh_obj *s, int c, sh_obj **v, sh_obj *k) { return m_assign_generic("AssignSub", s, c, v, k); }

static sh_obj *m_value(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  if (((tf_var *)self)->resource && !((tf_var *)self)->unread) return read_op(self, "ReadVariableOp", NULL);
  return sh_incref(((tf_var *)self)->value);
}

/* read_value(): on a resource variable, "Read/ReadVariableOp" and an Identity of it, as TF. */
static sh_obj *m_read_value(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  if (!((tf_var *)self)->resource || ((tf_var *)self)->unread) return sh_incref(((tf_var *)self)->value);
  rt_node *n = tf_node_begin_c("ReadVariableOp", "Read/ReadVariableOp");
  rt_node_set_type(n, "dtype", var_dtype((tf_var *)self));
  if (tf_node_input(n, ((tf_var *)self)->ref, RT_INVALID) < 0) return NULL;
  sh_obj *r = tf_node_finish_tensor(n);
  if (!r) return NULL;
  rt_node *id = tf_node_begin_c("Identity", "Identity");
  if (tf_node_input(id, r, RT_INVALID) < 0) { sh_decref(r); return NULL; }
  sh_decref(r);
  return tf_node_finish_tensor(id);
}

/* sparse_read(indices, name=None): ResourceGather ("Gather"). */
static sh_obj *m_sparse_read(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *indices, *name = NULL;
  if (sh_parse_args("sparse_read", argc, argv, kw, "indices |name", &indices, &name) < 0) return NULL;
  tf_var *v = (tf_var *)self;
  if (!v->resource) return tf_getitem(v->value, indices);
  rt_node *n = tf_node_begin_c("ResourceGather", name && sh_is_str(name) ? sh_str_cstr(name) : "Gather");
  rt_node_set_type(n, "dtype", var_dtype(v));
  if (tf_node_input(n, v->ref, RT_INVALID) < 0) return NULL;
  if (tf_node_input(n, indices, RT_INT32) < 0) return NULL;
  rt_node_set_type(n, "Tindices", tf_dtype_hint(indices) == RT_INT64 ? RT_INT64 : RT_INT32);
  return tf_node_finish_tensor(n);
}

static sh_obj *m_eval(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *sess = NULL;
  if (sh_parse_args("eval", argc, argv, kw, "|session", &sess) < 0) return NULL;
  return tf_eval_in_session(((tf_var *)self)->value, NULL, sess);
}

static sh_obj *m_get_shape(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  rt_shape sh = var_shape((tf_var *)self);
  return tf_shape_new(&sh);
}

static sh_obj *m_load(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *value, *sess = NULL;
  if (sh_parse_args("load", argc, argv, kw, "value |session", &value, &sess) < 0) return NULL;
  sh_obj *feed = sh_dict_new();
  sh_dict_set(feed, ((tf_var *)self)->initial, value);
  sh_obj *r = tf_eval_in_session(((tf_var *)self)->init, feed, sess);
  sh_decref(feed);
  if (!r) return NULL;
  sh_decref(r);
  return sh_none();
}

static const sh_method var_methods[] = {
  {"assign", m_assign, "assign(value, use_locking=False, name=None)", "An op that sets the variable to value."},
  {"assign_add", m_assign_add, "assign_add(delta, use_locking=False, name=None)", "An op that adds delta to the variable."},
  {"assign_sub", m_assign_sub, "assign_sub(delta, use_locking=False, name=None)", "An op that subtracts delta from the variable."},
  {"value", m_value, "value()", "The tensor that reads the variable."},
  {"read_value", m_read_value, "read_value()", "The tensor that reads the variable."},
  {"sparse_read", m_sparse_read, "sparse_read(indices, name=None)", "Rows of the variable (ResourceGather)."},
  {"eval", m_eval, "eval(session=None)", "The variable's value, computed in a session."},
  {"get_shape", m_get_shape, "get_shape()", "The variable's shape."},
  {"load", m_load, "load(value, session=None)", "Set the variable's value from Python."},
  {NULL},
};

static sh_obj *var_getattr(sh_obj *self, const char *name) {
  tf_var *v = (tf_var *)self;
  tf_tensor *t = (tf_tensor *)v->ref;
  rt_node *n = tf_tensor_node(t);
  if (!strcmp(name, "name")) return sh_strf("%s:0", n->name);
  if (!strcmp(name, "op") && v->unread) return sh_incref(v->init);
  if (!strcmp(name, "op")) return tf_op_new(t->graph, t->id);
  if (!strcmp(name, "dtype") && v->resource) return sh_incref(tf_dtype_obj(var_dtype(v)));
  if (!strcmp(name, "dtype")) return sh_incref(tf_ref_dtype_obj(n->out_types[0]));   /* float32_ref */
  if (!strcmp(name, "shape")) {
    rt_shape sh = var_shape(v);
    return tf_shape_new(&sh);
  }
  if (!strcmp(name, "handle") && v->resource) return sh_incref(v->ref);
  if (!strcmp(name, "_is_resource")) return sh_bool(v->resource);
  if (!strcmp(name, "_graph_element")) return sh_incref(v->value);
  if (!strcmp(name, "initializer")) return sh_incref(v->init);
  if (!strcmp(name, "initial_value")) return sh_incref(v->initial);
  if (!strcmp(name, "graph")) return sh_incref((sh_obj *)t->graph);
  if (!strcmp(name, "device")) return sh_str(n->device);
  if (!strcmp(name, "trainable")) return sh_bool(v->trainable);
  if (!strcmp(name, "_variable") || !strcmp(name, "_ref")) return sh_incref(v->ref);
  return NULL;
}

/* Operators act on the value. */
/* The operand a variable stands for: its value (a fresh read of a resource variable). */
static sh_obj *operand(sh_obj *a) {
  return tf_variable_check(a) ? tf_variable_read(a) : sh_incref(a);
}
static sh_obj *var_binop(int op, sh_obj *a, sh_obj *b) {
  sh_obj *x = operand(a), *y = x ? operand(b) : NULL;
  sh_obj *r = y ? sh_binop(op, x, y) : NULL;
  sh_decref(x);
  sh_decref(y);
  return r;
}
static sh_obj *var_unop(int op, sh_obj *a) {
  sh_obj *x = operand(a), *r = x ? sh_unop(op, x) : NULL;
  sh_decref(x);
  return r;
}
static sh_obj *var_getitem(sh_obj *self, sh_obj *key) {
  sh_obj *x = operand(self), *r = x ? tf_getitem(x, key) : NULL;
  sh_decref(x);
  return r;
}
static sh_obj *var_compare(int op, sh_obj *a, sh_obj *b) {
  if (op == SH_EQ || op == SH_NE) return SH_NOTIMPL;
  sh_obj *x = operand(a), *y = x ? operand(b) : NULL;
  sh_obj *r = y ? sh_compare(op, x, y) : NULL;
  sh_decref(x);
  sh_decref(y);
  return r;
}

/* ---- creating variables --------------------------------------------------------------- */

static sh_obj *add_to(const char *key, sh_obj *v) {
  return sh_list_append(tf_graph_collection(tf_default_graph(), key, true), v) < 0 ? NULL : v;
}

static sh_obj *add_to_collections(tf_var *v, sh_obj *collections) {
  if (collections && collections != SH_NONE) {
    sh_obj *it2 = sh_iter(collections);
    for (sh_obj *k; it2 && (k = sh_next(it2));) {
      if (sh_is_str(k)) add_to(sh_str_cstr(k), (sh_obj *)v);
      sh_decref(k);
    }
    sh_decref(it2);
  } else {
    add_to("variables", (sh_obj *)v);
    if (v->trainable) add_to("trainable_variables", (sh_obj *)v);
  }
  return (sh_obj *)v;
}

/* A node named exactly `name` (a variable's own nodes) reading handle h. */
static sh_obj *handle_user(const char *name, const char *op, sh_obj *h, sh_obj *value, rt_dtype t,
                           bool tensor) {
  rt_node *n = rt_node_new(name, op);
  if (t != RT_INVALID) rt_node_set_type(n, "dtype", t);
  if (tf_node_input(n, h, RT_INVALID) < 0) return NULL;
  if (value && tf_node_input(n, value, RT_INVALID) < 0) return NULL;
  return tensor ? tf_node_finish_tensor(n) : tf_node_finish(n);
}

/* A resource variable as TF1's ResourceVariable builds it in scope "v/": VarHandleOp "v",
 * "v/IsInitialized/VarIsInitializedOp", "v/Assign" (AssignVariableOp) and
 * "v/Read/ReadVariableOp". */
static sh_obj *make_resource_variable(const char *scope, sh_obj *initial, bool trainable,
                                      bool validate, sh_obj *collections) {
  tf_tensor *it = (tf_tensor *)initial;
  rt_node *in = tf_tensor_node(it);
  char name[600], an[700];
  snprintf(name, sizeof name, "%.*s", (int)strlen(scope) - 1, scope);   /* "v/" -> "v" */
  rt_shape shape = validate ? in->out_shapes[it->index] : rt_shape_unknown();
  rt_dtype t = in->out_types[it->index];
  rt_node *n = rt_node_new(name, "VarHandleOp");
  rt_node_set_string(n, "shared_name", name);
  rt_node_set_string(n, "container", "");
  rt_node_set_shape(n, "shape", &shape);
  rt_node_set_type(n, "dtype", t);
  sh_obj *h = tf_node_finish_tensor(n);
  if (!h) return NULL;
  snprintf(an, sizeof an, "%sIsInitialized/VarIsInitializedOp", scope);
  sh_obj *flag = handle_user(an, "VarIsInitializedOp", h, NULL, RT_INVALID, true);
  snprintf(an, sizeof an, "%sAssign", scope);
  sh_obj *assign = flag ? handle_user(an, "AssignVariableOp", h, initial, t, false) : NULL;
  snprintf(an, sizeof an, "%sRead/ReadVariableOp", scope);
  sh_obj *value = assign ? handle_user(an, "ReadVariableOp", h, NULL, t, true) : NULL;
  sh_decref(flag);
  if (!value) {
    sh_decref(h);
    sh_decref(assign);
    return NULL;
  }
  return add_to_collections(var_new(h, value, assign, sh_incref(initial), trainable, true), collections);
}

/* Build v, v/Assign, v/read in scope `scope` ("v/"), from an initial value tensor. */
static sh_obj *make_variable(const char *scope, sh_obj *initial, bool trainable, bool validate,
                             sh_obj *collections) {
  tf_tensor *it = (tf_tensor *)initial;
  rt_node *in = tf_tensor_node(it);
  char name[600];
  snprintf(name, sizeof name, "%.*s", (int)strlen(scope) - 1, scope);   /* "v/" -> "v" */
  rt_node *n = rt_node_new(name, "VariableV2");
  rt_shape shape = in->out_shapes[it->index];
  if (!validate) shape = rt_shape_unknown();
  if (validate && !rt_shape_fully_known(&shape)) {
    rt_node_free(n);
    return sh_raise(sh_ValueError, "initial_value must have a shape specified: %s", name);
  }
  rt_node_set_shape(n, "shape", &shape);
  rt_node_set_type(n, "dtype", in->out_types[it->index]);
  sh_obj *ref = tf_node_finish_tensor(n);
  if (!ref) return NULL;
  char an[700];
  snprintf(an, sizeof an, "%sAssign", scope);
  rt_node *a = rt_node_new(an, "Assign");
  if (!validate) rt_node_set_bool(a, "validate_shape", false);
  if (tf_node_input(a, ref, RT_INVALID) < 0 || tf_node_input(a, initial, RT_INVALID) < 0) {
    sh_decref(ref);
    return NULL;
  }
  sh_obj *assign = tf_node_finish(a);
  if (!assign) { sh_decref(ref); return NULL; }
  snprintf(an, sizeof an, "%sread", scope);
  rt_node *r = rt_node_new(an, "Identity");
  char cls[700];
  snprintf(cls, sizeof cls, "loc:@%s", name);
  const char *cv[] = {cls};
  rt_node_set_strings(r, "_class", 1, cv);
  if (tf_node_input(r, ref, RT_INVALID) < 0) {
    sh_decref(ref);
    sh_decref(assign);
    return NULL;
  }
  sh_obj *value = tf_node_finish_tensor(r);
  if (!value) { sh_decref(ref); sh_decref(assign); return NULL; }
  /* v/read sits where v does, as TF1 makes it (inside colocate_with(v)) */
  rt_node_set_device(tf_tensor_node((tf_tensor *)value), tf_tensor_node((tf_tensor *)ref)->device);
  return add_to_collections(var_new(ref, value, assign, sh_incref(initial), trainable, false), collections);
}

sh_obj *tf_variable_over(sh_obj *ref, sh_obj *value, sh_obj *init, sh_obj *initial, bool trainable,
                         bool resource) {
  return (sh_obj *)var_new(sh_incref(ref), sh_incref(value), sh_incref(init), sh_incref(initial), trainable,
                          resource);
}

/* tf.enable_resource_variables(): variables made without use_resource are resource ones. */
static bool resource_default;
bool tf_resource_default(void) { return resource_default; }
void tf_set_resource_default(bool on) { resource_default = on; }

/* Enter a name scope (by its final string) while building. */
typedef struct scope_guard {
  sh_obj *ctx;
} scope_guard;

static int scope_enter(scope_guard *g, const char *scope) {
  sh_obj *args[] = {sh_str(scope)};
  sh_obj *ns = sh_getattr_opt(sh_import("tensorflow"), "name_scope");
  g->ctx = ns ? sh_call(ns, 1, args, NULL) : NULL;
  sh_decref(ns);
  sh_decref(args[0]);
  if (!g->ctx) return -1;
  sh_obj *r = sh_call_method(g->ctx, "__enter__", 0, NULL, NULL);
  if (!r) { sh_clear(&g->ctx); return -1; }
  sh_decref(r);
  return 0;
}

static void scope_exit(scope_guard *g) {
  if (!g->ctx) return;
  sh_obj *none3[3] = {SH_NONE, SH_NONE, SH_NONE};
  sh_decref(sh_call_method(g->ctx, "__exit__", 3, none3, NULL));
  sh_clear(&g->ctx);
}

static sh_obj *var_construct(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *initial = NULL, *trainable = NULL, *collections = NULL, *validate = NULL, *caching = NULL,
         *name = NULL, *var_def = NULL, *dtype = NULL, *expected = NULL, *import_scope = NULL,
         *constraint = NULL, *use_resource = NULL;
  if (sh_parse_args("Variable", argc, argv, kw,
                    "|initial_value trainable collections validate_shape caching_device name variable_def "
                    "dtype expected_shape import_scope constraint use_resource **",
                    &initial, &trainable, &collections, &validate, &caching, &name, &var_def, &dtype,
                    &expected, &import_scope, &constraint, &use_resource) < 0)
    return NULL;
  if (!initial || initial == SH_NONE) return sh_raise(sh_ValueError, "initial_value must be specified.");
  tf_graph *g = tf_default_graph();
  sh_obj *scope = tf_unique_scope(g, name && sh_is_str(name) ? sh_str_cstr(name) : "Variable");
  scope_guard sg = {0};
  if (scope_enter(&sg, sh_str_cstr(scope)) < 0) { sh_decref(scope); return NULL; }
  bool resource = use_resource && use_resource != SH_NONE ? sh_truth(use_resource) > 0
                                                         : tf_resource_default();
  scope_guard ig = {0};   /* a resource variable's initial value is in "v/Initializer/" */
  if (resource) {
    char isc[700];
    snprintf(isc, sizeof isc, "%sInitializer/", sh_str_cstr(scope));
    if (scope_enter(&ig, isc) < 0) { scope_exit(&sg); sh_decref(scope); return NULL; }
  }
  sh_obj *init = NULL;
  rt_dtype t = np_dtype_of(dtype);
  if (Py_TYPE(initial) != (PyTypeObject *)&tf_tensor_type && !tf_variable_check(initial) &&
      PyCallable_Check(initial) && !PyType_Check(initial)) {
    sh_obj *v = sh_call(initial, 0, NULL, NULL);
    init = v ? tf_convert(v, t) : NULL;
    sh_decref(v);
  } else if (Py_TYPE(initial) == (PyTypeObject *)&tf_tensor_type || tf_variable_check(initial)) {
    init = tf_convert(initial, t);
  } else {
    rt_tensor *x = np_to_tensor(initial, t, false);
    sh_obj *nm = sh_str("initial_value");
    init = x ? tf_make_const(x, nm) : NULL;
    sh_decref(nm);
    rt_tensor_unref(x);
  }
  scope_exit(&ig);
  sh_obj *v = init ? (resource ? make_resource_variable : make_variable)(
                         sh_str_cstr(scope), init, !trainable || sh_truth(trainable) > 0,
                         !validate || sh_truth(validate) > 0, collections)
                   : NULL;
  scope_exit(&sg);
  sh_decref(init);
  sh_decref(scope);
  return v;
}

sh_type tf_variable_type = {
  SH_TYPE_HEAD, .name = "Variable", .size = sizeof(tf_var),
  .help = "Variable(initial_value, trainable=True, name=None, dtype=None): state kept on a device across steps.",
  .methods = var_methods, .destroy = var_destroy, .repr = var_repr, .getattr = var_getattr,
  .construct = var_construct, .binop = var_binop, .unop = var_unop, .getitem = var_getitem,
  .compare = var_compare,
};

/* get_variable's builder: variable `scope` ("a/w/") from an initial value (a callable
 * returning one, run inside the scope's "Initializer/" scope, or a value). */
sh_obj *tf_make_variable_scoped(const char *scope, sh_obj *initial, bool trainable, sh_obj *collections,
                                bool resource) {
  scope_guard sg = {0};
  if (scope_enter(&sg, scope) < 0) return NULL;
  sh_obj *init = tf_is_tensorlike(initial) ? tf_convert(initial, RT_INVALID) : NULL;
  if (!init && !sh_err_occurred()) {
    rt_tensor *x = np_to_tensor(initial, RT_INVALID, false);
    sh_obj *nm = sh_str("initial_value");
    init = x ? tf_make_const(x, nm) : NULL;
    sh_decref(nm);
    rt_tensor_unref(x);
  }
  sh_obj *v = init ? (resource ? make_resource_variable : make_variable)(scope, init, trainable, true,
                                                                         collections)
                   : NULL;
  scope_exit(&sg);
  sh_decref(init);
  return v;
}
