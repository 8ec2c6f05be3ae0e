/* tf core: graphs, tensors, operations, and building nodes the way TF1's Python
 * does — name scopes, device scopes (strings, functions, None), control dependencies and
 * colocation — then handing each node to the runtime graph, which validates it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/counts.h"
#include "base/str.h"
#include "runtime/device.h"
#include "runtime/op.h"
#include "shell/tf/tf.h"

/* ---- graphs ---------------------------------------------------------------------- */

/* A device scope entry: a spec string, a device function, or None (clears). */
struct tf_graph {
  sh_obj head;
  rt_graph *g;
  counts *names;         /* name -> times used (TF's _names_in_use) */
  sh_obj *collections;   /* dict: key -> list */
  char scope[TF_SCOPE_MAX];   /* current name scope, "" or "a/b/" */
  sh_obj *devices;       /* list of str | callable | None, outermost first */
  sh_obj *controls;      /* list of lists of op names (None: clear outer) */
  sh_obj *colocate;      /* list of op names */
  sh_obj *overrides;     /* list of dicts (gradient_override_map): op type -> gradient's name */
  int64_t seed;          /* tf.set_random_seed; -1 unset */
  tf_cf_state cf;        /* control-flow contexts (tf.while_loop, tf.cond): cflow.c */
};

tf_cf_state *tf_graph_cf(tf_graph *g) { return &g->cf; }

static void graph_destroy(sh_obj *self) {
  tf_graph *g = (tf_graph *)self;
  rt_graph_free(g->g);
  counts_free(g->names);
  sh_decref(g->collections);
  sh_decref(g->devices);
  sh_decref(g->controls);
  sh_decref(g->colocate);
  sh_decref(g->overrides);
  sh_decref(g->cf.hook);
  free(g->cf.ctx_of);
}

static tf_graph *graph_new(void) {
  tf_graph *g = sh_new(&tf_graph_type);
  g->g = rt_graph_new();
  g->names = counts_new();
  g->collections = sh_dict_new();
  g->devices = sh_list_new(0);
  g->controls = sh_list_new(0);
  g->colocate = sh_list_new(0);
  g->overrides = sh_list_new(0);
  g->seed = -1;
  return g;
}

static sh_obj *graph_stack;   /* list: graphs made default by as_default(), innermost last */
static tf_graph *global_graph;

tf_graph *tf_default_graph(void) {
  if (graph_stack && SH_LIST_N(graph_stack) > 0)
    return (tf_graph *)SH_LIST_ITEMS(graph_stack)[SH_LIST_N(graph_stack) - 1];
  if (!global_graph) global_graph = graph_new();
  return global_graph;
}

rt_graph *tf_rt(tf_graph *g) { return g->g; }

sh_obj *tf_graph_collection(tf_graph *g, const char *key, bool create) {
  sh_obj *l = sh_dict_get_str(g->collections, key);
  if (!l && create) {
    l = sh_list_new(0);
    sh_dict_set_str(g->collections, key, l);
    sh_decref(l);
  }
  return l;
}

int64_t tf_graph_seed(tf_graph *g) { return g->seed; }
void tf_graph_set_seed(tf_graph *g, int64_t s) { g->seed = s; }

/* "base_k" into buf, as snprintf(buf, n, "%s_%lld", base, k) writes it (len: base's). */
static void suffixed(char *buf, size_t n, const char *base, size_t len, int64_t k) {
  str_put_int(buf, n, str_put(buf, n, str_put(buf, n, 0, base, len), "_", 1), k);
}

/* A unique name in g into buf (n bytes, cut to fit), as TF1's Graph.unique_name: "x",
 * "x_1", "x_2", ...; marks it used. */
static const char *unique_name(tf_graph *g, const char *want, char *buf, size_t n) {
  size_t len = strlen(want);
  int64_t k = counts_get(g->names, want);
  str_put(buf, n, 0, want, len);
  for (; k > 0; k++) {
    suffixed(buf, n, want, len, k);
    if (!counts_get(g->names, buf) && !rt_graph_find(g->g, buf)) break;
  }
  counts_set(g->names, want, k + 1);
  if (strcmp(buf, want)) counts_set(g->names, buf, 1);
  return buf;
}

/* ---- operations and tensors ------------------------------------------------------- */

rt_node *tf_op_node(const tf_op *op) { return op->graph->g->nodes[op->id]; }
rt_node *tf_tensor_node(const tf_tensor *t) { return t->graph->g->nodes[t->id]; }

sh_obj *tf_op_new(tf_graph *g, int id) {
  tf_op *o = sh_new(&tf_op_type);
  o->graph = (tf_graph *)sh_incref((sh_obj *)g);
  o->id = id;
  return (sh_obj *)o;
}

sh_obj *tf_tensor_new(tf_graph *g, int id, int index) {
  tf_tensor *t = sh_new(&tf_tensor_type);
  t->graph = (tf_graph *)sh_incref((sh_obj *)g);
  t->id = id;
  t->index = index;
  return (sh_obj *)t;
}

const char *tf_tensor_name(const tf_tensor *t, char *buf, size_t n) {
  str_put_int(buf, n, str_puts(buf, n, str_puts(buf, n, 0, tf_tensor_node(t)->name), ":"), t->index);
  return buf;
}

static void op_destroy(sh_obj *self) { sh_decref((sh_obj *)((tf_op *)self)->graph); }
static void tensor_destroy(sh_obj *self) { sh_decref((sh_obj *)((tf_tensor *)self)->graph); }

static sh_obj *op_repr(sh_obj *self) {
  rt_node *n = tf_op_node((tf_op *)self);
  return sh_strf("<tf.Operation '%s' type=%s>", n->name, n->op);
}

/* TensorShape as TF1 prints it. */
typedef struct tf_shape {
  sh_obj head;
  rt_shape s;
} tf_shape;

static sh_obj *shape_str(sh_obj *self) {
  char buf[256];
  rt_shape_str(&((tf_shape *)self)->s, buf, sizeof buf);
  return sh_str(buf);
}

static sh_obj *shape_repr(sh_obj *self) {
  rt_shape *s = &((tf_shape *)self)->s;
  if (s->ndims < 0) return sh_str("TensorShape(None)");
  char buf[512];
  size_t off = (size_t)snprintf(buf, sizeof buf, "TensorShape([");
  for (int i = 0; i < s->ndims; i++) {
    if (s->dims[i] < 0)
      off += (size_t)snprintf(buf + off, sizeof buf - off, "%sDimension(None)", i ? ", " : "");
    else
      off += (size_t)snprintf(buf + off, sizeof buf - off, "%sDimension(%lld)", i ? ", " : "",
                              (long long)s->dims[i]);
  }
  snprintf(buf + off, sizeof buf - off, "])");
  return sh_str(buf);
}

static sh_obj *dim_obj(int64_t d) { return d < 0 ? sh_none() : sh_int(d); }

/* An entry of the tensorflow module's dict that its Python part defines (Dimension,
 * _tensorshape_methods: array_more.py.inc); borrowed, NULL before it ran. */
static sh_obj *py_global(const char *name) {
  PyObject *m = PyImport_AddModule("tensorflow");
  return m ? PyDict_GetItemString(PyModule_GetDict(m), name) : NULL;
}

/* shape[i]: TF 1.x's Dimension (.value None where unknown); a bare int or None until
 * the Python part has defined it. */
static sh_obj *dimension_obj(int64_t d) {
  sh_obj *cls = py_global("Dimension"), *v = dim_obj(d);
  if (!cls) return v;
  sh_obj *r = sh_call(cls, 1, &v, NULL);
  sh_decref(v);
  return r;
}

static bool is_dimension(sh_obj *o) {
  sh_obj *cls = py_global("Dimension");
  return cls && PyType_Check(cls) && PyObject_TypeCheck(o, (PyTypeObject *)cls);
}

static sh_obj *shape_as_list(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  rt_shape *s = &((tf_shape *)self)->s;
  if (s->ndims < 0) return sh_raise(sh_ValueError, "as_list() is not defined on an unknown TensorShape.");
  sh_obj *l = sh_list_new(0);
  for (int i = 0; i < s->ndims; i++) sh_list_append_steal(l, dim_obj(s->dims[i]));
  return l;
}

static sh_obj *shape_num_elements(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  int64_t n = rt_shape_numel(&((tf_shape *)self)->s);
  return n < 0 ? sh_none() : sh_int(n);
}

static sh_obj *shape_is_fully_defined(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  return sh_bool(rt_shape_fully_known(&((tf_shape *)self)->s));
}

static const sh_method shape_methods[] = {
  {"as_list", shape_as_list, "as_list()", "Dimensions as a list (None where unknown)."},
  {"num_elements", shape_num_elements, "num_elements()", "Number of elements, or None."},
  {"is_fully_defined", shape_is_fully_defined, "is_fully_defined()", "Whether every dimension is known."},
  {NULL},
};

/* TF1's other TensorShape methods (merge_with, with_rank, ...), written in Python. */
static sh_obj *shape_py_method(sh_obj *self, const char *name) {
  sh_obj *ext = py_global("_tensorshape_methods");
  sh_obj *fn = ext && PyDict_Check(ext) ? PyDict_GetItemString(ext, name) : NULL;
  return fn ? PyMethod_New(fn, self) : NULL;
}

static sh_obj *shape_getattr(sh_obj *self, const char *name) {
  rt_shape *s = &((tf_shape *)self)->s;
  if (!strcmp(name, "ndims") || !strcmp(name, "rank")) return s->ndims < 0 ? sh_none() : sh_int(s->ndims);
  if (!strcmp(name, "dims")) {
    if (s->ndims < 0) return sh_none();
    sh_obj *l = sh_list_new(0);
    for (int i = 0; i < s->ndims; i++) {
      sh_obj *d = dimension_obj(s->dims[i]);
      if (!d) {
        sh_decref(l);
        return NULL;
      }
      sh_list_append_steal(l, d);
    }
    return l;
  }
  return name[0] == '_' && strcmp(name, "_eq") ? NULL : shape_py_method(self, name);
}

/* ==, != as TF's (same rank and sizes, unknown ones alike); + concatenates. */
static sh_obj *shape_compare(int op, sh_obj *a, sh_obj *b) {
  if ((op != Py_EQ && op != Py_NE) || Py_TYPE(a) != (PyTypeObject *)&tf_shape_type) return SH_NOTIMPL;
  sh_obj *eq = shape_py_method(a, "_eq");
  if (!eq) return SH_NOTIMPL;
  sh_obj *r = sh_call(eq, 1, &b, NULL);
  sh_decref(eq);
  if (!r || r == Py_NotImplemented || op == Py_EQ) return r;
  int t = PyObject_IsTrue(r);
  sh_decref(r);
  return t < 0 ? NULL : sh_bool(!t);
}

static sh_obj *shape_binop(int op, sh_obj *a, sh_obj *b) {
  if (op != SH_ADD) return SH_NOTIMPL;
  sh_obj *left = NULL;
  if (Py_TYPE(a) != (PyTypeObject *)&tf_shape_type) {   /* [1, 2] + shape: as TF's __radd__ */
    rt_shape s;
    if (Py_TYPE(b) != (PyTypeObject *)&tf_shape_type || tf_shape_from_obj(a, &s) < 0) {
      sh_err_clear();
      return SH_NOTIMPL;
    }
    if (!(a = left = tf_shape_new(&s))) return NULL;
  }
  sh_obj *cat = shape_py_method(a, "concatenate");
  sh_decref(left);
  if (!cat) return SH_NOTIMPL;
  sh_obj *r = sh_call(cat, 1, &b, NULL);
  sh_decref(cat);
  return r;
}

static int64_t shape_len(sh_obj *self) {
  rt_shape *s = &((tf_shape *)self)->s;
  if (s->ndims < 0) {
    sh_raise(sh_ValueError, "Cannot take the length of Shape with unknown rank.");
    return -1;
  }
  return s->ndims;
}

static sh_obj *shape_getitem(sh_obj *self, sh_obj *key) {
  rt_shape *s = &((tf_shape *)self)->s;
  int64_t i;
  if (PySlice_Check(key)) {   /* a TensorShape of those sizes (unknown rank stays unknown) */
    if (s->ndims < 0) return tf_shape_new(s);
    Py_ssize_t start, stop, step;
    if (PySlice_Unpack(key, &start, &stop, &step) < 0) return NULL;
    Py_ssize_t n = PySlice_AdjustIndices(s->ndims, &start, &stop, step);
    rt_shape out = {.ndims = (int)n};
    for (Py_ssize_t k = 0; k < n; k++) out.dims[k] = s->dims[start + k * step];
    return tf_shape_new(&out);
  }
  if (s->ndims < 0) return dimension_obj(-1);
  if (sh_as_int(key, &i) < 0) return NULL;
  if (i < 0) i += s->ndims;
  if (i < 0 || i >= s->ndims) return sh_raise(sh_IndexError, "list index out of range");
  return dimension_obj(s->dims[i]);
}

/* TensorShape(dims): dims a list (None for unknown ones), a TensorShape, or None */
static sh_obj *shape_construct(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *dims = SH_NONE;
  if (sh_parse_args("TensorShape", argc, argv, kw, "|dims", &dims) < 0) return NULL;
  rt_shape s;
  if (tf_shape_from_obj(dims, &s) < 0) return NULL;
  return tf_shape_new(&s);
}

sh_type tf_shape_type = {
  SH_TYPE_HEAD, .name = "TensorShape", .size = sizeof(tf_shape), .construct = shape_construct,
  .help = "The (possibly partial) shape of a Tensor.", .methods = shape_methods,
  .repr = shape_repr, .str = shape_str, .getattr = shape_getattr, .len = shape_len,
  .getitem = shape_getitem, .compare = shape_compare, .binop = shape_binop,
};

sh_obj *tf_shape_new(const rt_shape *s) {
  tf_shape *o = sh_new(&tf_shape_type);
  o->s = *s;
  return (sh_obj *)o;
}

/* ---- Operation ------------------------------------------------------------------- */



static sh_obj *op_run(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *feed = NULL, *sess = NULL;
  if (sh_parse_args("run", argc, argv, kw, "|feed_dict session", &feed, &sess) < 0) return NULL;
  sh_obj *r = tf_eval_in_session(self, feed, sess);
  return r;
}

static sh_obj *op_get_attr(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *name;
  if (sh_parse_args("get_attr", argc, argv, kw, "name", &name) < 0) return NULL;
  const char *s = sh_as_cstr(name);
  if (!s) return NULL;
  const rt_attr_value *v = rt_node_attr(tf_op_node((tf_op *)self), s);
  if (!v) return sh_raise(sh_ValueError, "Operation '%s' has no attr named '%s'.",
                          tf_op_node((tf_op *)self)->name, s);
  switch (v->kind) {
  case RT_ATTR_INT: return sh_int(v->i);
  case RT_ATTR_FLOAT: return sh_float(v->f);
  case RT_ATTR_BOOL: return sh_bool(v->b);
  case RT_ATTR_STRING: return sh_bytes(v->s, strlen(v->s));   /* bytes, as TF's */
  case RT_ATTR_TYPE: return sh_incref(tf_dtype_obj(v->type));
  case RT_ATTR_SHAPE: return tf_shape_new(&v->shape);
  case RT_ATTR_TENSOR: return np_wrap(rt_tensor_ref(v->tensor));
  case RT_ATTR_LIST_INT: {
    sh_obj *l = sh_list_new(0);
    for (int i = 0; i < v->list.n; i++) sh_list_append_steal(l, sh_int(((int64_t *)v->list.v)[i]));
    return l;
  }
  case RT_ATTR_LIST_STRING: {
    sh_obj *l = sh_list_new(0);
    for (int i = 0; i < v->list.n; i++) {
      const char *e = ((char **)v->list.v)[i];
      sh_list_append_steal(l, sh_bytes(e, strlen(e)));
    }
    return l;
  }
  default: return sh_none();
  }
}

static const sh_method op_methods[] = {
  {"run", op_run, "run(feed_dict=None, session=None)", "Run this operation in a session."},
  {"get_attr", op_get_attr, "get_attr(name)", "The value of one of the node's attrs."},
  {NULL},
};

static sh_obj *op_getattr(sh_obj *self, const char *name) {
  tf_op *o = (tf_op *)self;
  rt_node *n = tf_op_node(o);
  if (!strcmp(name, "name")) return sh_str(n->name);
  if (!strcmp(name, "type")) return sh_str(n->op);
  if (!strcmp(name, "device")) return sh_str(n->device);
  if (!strcmp(name, "graph")) return sh_incref((sh_obj *)o->graph);
  if (!strcmp(name, "outputs") || !strcmp(name, "values")) {
    sh_obj *l = sh_list_new(0);
    for (int i = 0; i < n->n_outputs; i++) sh_list_append_steal(l, tf_tensor_new(o->graph, o->id, i));
    return l;
  }
  if (!strcmp(name, "inputs")) {
    sh_obj *l = sh_list_new(0);
    for (int i = 0; i < n->n_data_inputs; i++)
      sh_list_append_steal(l, tf_tensor_new(o->graph, n->edges[i].node, n->edges[i].index));
    return l;
  }
  if (!strcmp(name, "control_inputs")) {
    sh_obj *l = sh_list_new(0);
    for (int i = n->n_data_inputs; i < n->n_inputs; i++)
      sh_list_append_steal(l, tf_op_new(o->graph, n->edges[i].node));
    return l;
  }
  if (!strcmp(name, "node_def")) return sh_incref(self);
  if (!strcmp(name, "op")) return sh_str(n->op);
  return NULL;
}

static int op_hash(sh_obj *self, int64_t *out) {
  tf_op *o = (tf_op *)self;
  *out = (int64_t)(((uintptr_t)o->graph >> 4) * 1000003u + (uint64_t)o->id * 7919u + 1);
  return 0;
}

static sh_obj *op_compare(int op, sh_obj *a, sh_obj *b) {
  if ((op != SH_EQ && op != SH_NE) || Py_TYPE(a) != Py_TYPE(b)) return SH_NOTIMPL;
  tf_op *x = (tf_op *)a, *y = (tf_op *)b;
  bool eq = x->graph == y->graph && x->id == y->id;
  return sh_bool(op == SH_EQ ? eq : !eq);
}

sh_type tf_op_type = {
  SH_TYPE_HEAD, .name = "Operation", .size = sizeof(tf_op),
  .help = "A node of the graph (tf.Operation).", .methods = op_methods,
  .destroy = op_destroy, .repr = op_repr, .getattr = op_getattr, .hash = op_hash,
  .compare = op_compare,
};

/* ---- Tensor ---------------------------------------------------------------------- */

static sh_obj *tensor_repr(sh_obj *self) {
  tf_tensor *t = (tf_tensor *)self;
  rt_node *n = tf_tensor_node(t);
  char shape[256], name[400];
  rt_shape_str(&n->out_shapes[t->index], shape, sizeof shape);
  return sh_strf("<tf.Tensor '%s' shape=%s dtype=%s>", tf_tensor_name(t, name, sizeof name),
                 shape, rt_dtype_name(n->out_types[t->index]));
}

static sh_obj *tensor_str(sh_obj *self) {
  tf_tensor *t = (tf_tensor *)self;
  rt_node *n = tf_tensor_node(t);
  char shape[256];
  rt_shape_str(&n->out_shapes[t->index], shape, sizeof shape);
  return sh_strf("Tensor(\"%s:%d\", shape=%s, dtype=%s)", n->name, t->index, shape,
                 rt_dtype_name(n->out_types[t->index]));
}

static sh_obj *tensor_eval(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *feed = NULL, *sess = NULL;
  if (sh_parse_args("eval", argc, argv, kw, "|feed_dict session", &feed, &sess) < 0) return NULL;
  return tf_eval_in_session(self, feed, sess);
}

static sh_obj *tensor_get_shape(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  tf_tensor *t = (tf_tensor *)self;
  return tf_shape_new(&tf_tensor_node(t)->out_shapes[t->index]);
}



static sh_obj *tensor_set_shape(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *shape;
  if (sh_parse_args("set_shape", argc, argv, kw, "shape", &shape) < 0) return NULL;
  tf_tensor *t = (tf_tensor *)self;
  rt_shape s, *cur = &tf_tensor_node(t)->out_shapes[t->index];
  if (tf_shape_from_obj(shape, &s) < 0) return NULL;
  if (!rt_shape_compatible(cur, &s)) {
    char a[128], b[128];
    return sh_raise(sh_ValueError, "Shapes %s and %s are not compatible",
                    rt_shape_str(cur, a, sizeof a), rt_shape_str(&s, b, sizeof b));
  }
  if (cur->ndims < 0) *cur = s;
  for (int i = 0; i < s.ndims && i < cur->ndims; i++)
    if (cur->dims[i] < 0) cur->dims[i] = s.dims[i];
  return sh_none();
}

static sh_obj *tensor_consumers(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  tf_tensor *t = (tf_tensor *)self;
  rt_graph *g = t->graph->g;
  sh_obj *l = sh_list_new(0);
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; k < g->nodes[i]->n_data_inputs; k++)
      if (g->nodes[i]->edges[k].node == t->id && g->nodes[i]->edges[k].index == t->index) {
        sh_list_append_steal(l, tf_op_new(t->graph, i));
        break;
      }
  return l;
}

static const sh_method tensor_methods[] = {
  {"eval", tensor_eval, "eval(feed_dict=None, session=None)", "The tensor's value, computed in a session (the default one if none given)."},
  {"get_shape", tensor_get_shape, "get_shape()", "The static shape (TensorShape)."},
  {"set_shape", tensor_set_shape, "set_shape(shape)", "Refine the static shape."},
  {"consumers", tensor_consumers, "consumers()", "Operations that use this tensor."},
  {NULL},
};

static sh_obj *tensor_getattr(sh_obj *self, const char *name) {
  tf_tensor *t = (tf_tensor *)self;
  rt_node *n = tf_tensor_node(t);
  char buf[400];
  if (!strcmp(name, "name")) return sh_str(tf_tensor_name(t, buf, sizeof buf));
  if (!strcmp(name, "op")) return tf_op_new(t->graph, t->id);
  if (!strcmp(name, "dtype")) {   /* a ref output (a variable's) has float32_ref, as in TF 1.x */
    const rt_op_sig *sig = rt_op_find(n->op);
    bool ref = sig && sig->n_out > 0 && sig->out[t->index < sig->n_out ? t->index : sig->n_out - 1].ref;
    return sh_incref(ref ? tf_ref_dtype_obj(n->out_types[t->index]) : tf_dtype_obj(n->out_types[t->index]));
  }
  if (!strcmp(name, "shape")) return tf_shape_new(&n->out_shapes[t->index]);
  if (!strcmp(name, "graph")) return sh_incref((sh_obj *)t->graph);
  if (!strcmp(name, "device")) return sh_str(n->device);
  if (!strcmp(name, "value_index")) return sh_int(t->index);
  return NULL;
}

static int tensor_hash(sh_obj *self, int64_t *out) {
  tf_tensor *t = (tf_tensor *)self;
  *out = (int64_t)(((uintptr_t)t->graph >> 4) * 1000003u + (uint64_t)t->id * 7919u + (uint64_t)t->index);
  return 0;
}

static int tensor_truth(sh_obj *self) {
  sh_raise(sh_TypeError, "Using a `tf.Tensor` as a Python `bool` is not allowed. Use `if t is "
           "not None:` instead of `if t:` to test if a tensor is defined, and use TensorFlow ops "
           "such as tf.cond to execute subgraphs conditioned on the value of a tensor.");
  return -1;
}

static sh_obj *tensor_iter(sh_obj *self) {
  return sh_raise(sh_TypeError, "Tensor objects are only iterable when eager execution is enabled. "
                  "To iterate over this tensor use tf.map_fn.");
}

/* Operators build ops, named as TF1 names them. */

static sh_obj *tensor_binop(int op, sh_obj *a, sh_obj *b) {
  static const struct { const char *op, *name; } ops[SH_BINOP_COUNT] = {
    [SH_ADD] = {"Add", "add"},           [SH_SUB] = {"Sub", "sub"},
    [SH_MUL] = {"Mul", "mul"},           [SH_TRUEDIV] = {"RealDiv", "truediv"},
    [SH_FLOORDIV] = {"FloorDiv", "floordiv"}, [SH_MOD] = {"FloorMod", "mod"},
    [SH_POW] = {"Pow", "pow"},           [SH_MATMUL] = {"MatMul", "MatMul"},
  };
  if (op < 0 || op >= SH_BINOP_COUNT || !ops[op].op) return SH_NOTIMPL;
  if (!tf_is_tensorlike(a) && !tf_is_tensorlike(b)) return SH_NOTIMPL;
  if (op == SH_TRUEDIV) {
    rt_dtype t = tf_dtype_hint(a) ? tf_dtype_hint(a) : tf_dtype_hint(b);
    if (rt_dtype_is_int(t)) {   /* TF1: int / int casts both to float64 first */
      sh_obj *ca = tf_convert(a, t), *cb = ca ? tf_convert(b, t) : NULL;
      if (!cb) { sh_decref(ca); return NULL; }
      sh_obj *fa = tf_unary_op("Cast", "Cast", ca), *fb = fa ? tf_unary_op("Cast", "Cast", cb) : NULL;
      sh_decref(ca);
      sh_decref(cb);
      sh_obj *r = fb ? tf_binary_op("RealDiv", "truediv", fa, fb) : NULL;
      sh_decref(fa);
      sh_decref(fb);
      return r;
    }
  }
  return tf_binary_op(ops[op].op, ops[op].name, a, b);
}

static sh_obj *tensor_unop(int op, sh_obj *a) {
  if (op == SH_NEG) return tf_unary_op("Neg", "Neg", a);
  if (op == SH_POS) return sh_incref(a);
  if (op == SH_INVERT) return tf_unary_op("LogicalNot", "LogicalNot", a);
  return SH_NOTIMPL;
}

static sh_obj *tensor_compare(int op, sh_obj *a, sh_obj *b) {
  static const char *const ops[SH_GE + 1] = {
    [SH_LT] = "Less", [SH_LE] = "LessEqual", [SH_GT] = "Greater", [SH_GE] = "GreaterEqual",
  };
  if (op == SH_EQ || op == SH_NE) {   /* TF1: identity */
    bool same = Py_TYPE(a) == Py_TYPE(b) && ((tf_tensor *)a)->graph == ((tf_tensor *)b)->graph &&
                ((tf_tensor *)a)->id == ((tf_tensor *)b)->id &&
                ((tf_tensor *)a)->index == ((tf_tensor *)b)->index;
    return sh_bool(op == SH_EQ ? same : !same);
  }
  return tf_binary_op(ops[op], ops[op], a, b);
}

static sh_obj *tensor_getitem(sh_obj *self, sh_obj *key) { return tf_getitem(self, key); }

sh_type tf_tensor_type = {
  SH_TYPE_HEAD, .name = "Tensor", .size = sizeof(tf_tensor),
  .help = "A symbolic output of an operation; its value is computed by Session.run.",
  .methods = tensor_methods, .destroy = tensor_destroy, .repr = tensor_repr, .str = tensor_str,
  .getattr = tensor_getattr, .hash = tensor_hash, .truth = tensor_truth, .iter = tensor_iter,
  .binop = tensor_binop, .unop = tensor_unop, .compare = tensor_compare,
  .getitem = tensor_getitem,
};

/* ---- errors ---------------------------------------------------------------------- */

static sh_type *error_classes[RT_CODE_COUNT];
static sh_type *op_error_class;

sh_obj *tf_errors_module(void) {
  sh_obj *m = sh_module_new("tensorflow.errors");
  op_error_class = sh_exc_class_new("OpError", sh_Exception);
  sh_module_add(m, "OpError", sh_incref((sh_obj *)op_error_class));
  for (int c = 1; c < RT_CODE_COUNT; c++) {
    error_classes[c] = sh_exc_class_new(rt_code_class(c), op_error_class);
    sh_obj *code = sh_int(c);   /* for errors a program constructs itself */
    sh_setattr((sh_obj *)error_classes[c], "error_code", code);
    sh_decref(code);
    sh_module_add(m, rt_code_class(c), sh_incref((sh_obj *)error_classes[c]));
    sh_module_add(m, rt_code_name(c), sh_int(c));
  }
  return m;
}

sh_obj *tf_raise_status(const rt_status *st) {
  if (st->code == RT_TYPE_ERROR) return sh_raise(sh_TypeError, "%s", st->msg);
  if (st->code == RT_LOOKUP_ERROR) return sh_raise(sh_LookupError, "%s", st->msg);
  if (st->code > 0 && st->code < RT_CODE_COUNT && error_classes[st->code]) {
    /* TF1's constructor, OpError(node_def, op, message) (the prelude's), and its
     * attributes: message, error_code (node_def/op: None here) */
    sh_obj *msg = PyUnicode_DecodeUTF8(st->msg, (Py_ssize_t)strlen(st->msg), "replace");
    sh_obj *args[3] = {SH_NONE, SH_NONE, msg};
    sh_obj *e = msg ? sh_call((sh_obj *)error_classes[st->code], 3, args, NULL) : NULL;
    sh_decref(msg);
    if (e) {
      /* attributes first: CPython's attribute lookup may clear an exception already raised */
      sh_obj *m = sh_str(st->msg), *c = sh_int(st->code);
      sh_setattr(e, "message", m);
      sh_setattr(e, "error_code", c);
      sh_setattr(e, "node_def", SH_NONE);
      sh_setattr(e, "op", SH_NONE);
      sh_decref(m);
      sh_decref(c);
      sh_err_clear();
      PyErr_SetObject((sh_obj *)error_classes[st->code], e);
      sh_decref(e);
    }
    return NULL;
  }
  return sh_raise(sh_RuntimeError, "%s", st->msg);
}

/* Graph construction errors are Python's ValueError / TypeError, as in TF1. */
static sh_obj *raise_build(const rt_status *st) {
  if (st->code == RT_TYPE_ERROR) return sh_raise(sh_TypeError, "%s", st->msg);
  if (st->code == RT_LOOKUP_ERROR) return sh_raise(sh_LookupError, "%s", st->msg);
  return sh_raise(sh_ValueError, "%s", st->msg);
}

/* ---- shapes from Python ------------------------------------------------------------- */

int tf_shape_from_obj(sh_obj *o, rt_shape *s) {
  if (!o || o == SH_NONE) {
    *s = rt_shape_unknown();
    return 0;
  }
  if (Py_TYPE(o) == (PyTypeObject *)&tf_shape_type) {
    *s = ((tf_shape *)o)->s;
    return 0;
  }
  if (sh_is_int(o)) {
    int64_t d = sh_int_value(o);
    *s = rt_shape_make(1, &d);
    return 0;
  }
  sh_obj *t = sh_sequence_to_tuple(o);
  if (!t) return -1;
  if (SH_TUPLE_N(t) > RT_MAX_DIMS) {
    sh_decref(t);
    sh_raise(sh_ValueError, "shapes have at most %d dimensions", RT_MAX_DIMS);
    return -1;
  }
  s->ndims = (int)SH_TUPLE_N(t);
  for (int i = 0; i < s->ndims; i++) {
    sh_obj *d = SH_TUPLE_ITEMS(t)[i], *dv = is_dimension(d) ? sh_getattr_opt(d, "value") : NULL;
    if (dv) {   /* a Dimension: its value */
      sh_decref(dv);
      d = dv;
    }
    if (d == SH_NONE) {
      s->dims[i] = -1;
    } else if (sh_as_int(d, &s->dims[i]) < 0) {
      sh_decref(t);
      return -1;
    } else if (s->dims[i] < -1) {
      sh_decref(t);
      sh_raise(sh_ValueError, "Dimension %lld must be >= 0", (long long)s->dims[i]);
      return -1;
    }
  }
  sh_decref(t);
  return 0;
}

/* ---- converting Python values -------------------------------------------------------- */

bool tf_is_tensorlike(sh_obj *x) {
  return Py_TYPE(x) == (PyTypeObject *)&tf_tensor_type || tf_variable_check(x);
}

rt_dtype tf_dtype_hint(sh_obj *x) {
  if (Py_TYPE(x) == (PyTypeObject *)&tf_tensor_type) {
    tf_tensor *t = (tf_tensor *)x;
    return tf_tensor_node(t)->out_types[t->index];
  }
  if (tf_variable_check(x)) return tf_dtype_hint(tf_variable_value(x));
  return RT_INVALID;
}

/* A float where an integer tensor is wanted: TF1's TypeError. */
static int check_lossless(sh_obj *x, rt_dtype want) {
  if (!rt_dtype_is_int(want) && want != RT_BOOL) return 0;
  if (sh_is_float(x)) {
    char buf[64];
    sh_format_double_repr(sh_float_value(x), buf, sizeof buf);
    sh_raise(sh_TypeError, "Expected %s, got %s of type 'float' instead.", rt_dtype_name(want), buf);
    return -1;
  }
  return 0;
}

sh_obj *tf_make_const(rt_tensor *value, sh_obj *name) {
  rt_node *n = tf_node_begin("Const", name);
  rt_node_set_tensor(n, "value", value);
  rt_node_set_type(n, "dtype", value->dtype);
  return tf_node_finish_tensor(n);
}

/* The dtype of the first tensor in a (nested) list, and whether there is one. */
static rt_dtype nested_dtype(sh_obj *x, int depth, bool *any) {
  if (tf_is_tensorlike(x)) {
    *any = true;
    return tf_dtype_hint(x);
  }
  if ((Py_TYPE(x) != (PyTypeObject *)&sh_list_type && Py_TYPE(x) != (PyTypeObject *)&sh_tuple_type) || depth > RT_MAX_DIMS) return RT_INVALID;
  int64_t n = Py_TYPE(x) == (PyTypeObject *)&sh_list_type ? SH_LIST_N(x) : SH_TUPLE_N(x);
  sh_obj **items = Py_TYPE(x) == (PyTypeObject *)&sh_list_type ? SH_LIST_ITEMS(x) : SH_TUPLE_ITEMS(x);
  rt_dtype t = RT_INVALID;
  for (int64_t i = 0; i < n; i++) {
    bool a = false;
    rt_dtype d = nested_dtype(items[i], depth + 1, &a);
    if (a && t == RT_INVALID) t = d;
    *any |= a;
  }
  return t;
}

sh_obj *tf_convert(sh_obj *x, rt_dtype hint) {
  if (Py_TYPE(x) == (PyTypeObject *)&tf_tensor_type) {
    rt_dtype t = tf_dtype_hint(x);
    if (hint != RT_INVALID && t != hint) {
      char name[400];
      return sh_raise(sh_ValueError, "Tensor conversion requested dtype %s for Tensor with dtype "
                      "%s: '%s'", rt_dtype_name(hint), rt_dtype_name(t),
                      tf_tensor_name((tf_tensor *)x, name, sizeof name));
    }
    return sh_incref(x);
  }
  if (tf_variable_check(x)) {
    sh_obj *r = tf_variable_read(x), *c = r ? tf_convert(r, hint) : NULL;
    sh_decref(r);
    return c;
  }
  if (Py_TYPE(x) == (PyTypeObject *)&tf_op_type)
    return sh_raise(sh_TypeError, "Can not convert a Operation into a Tensor.");
  if (sh_is_py_instance(x)) {   /* a Python class that is a tensor (PartitionedVariable) */
    sh_obj *conv = sh_getattr_opt(x, "_tfsh_as_tensor");
    if (conv) {
      sh_obj *t = sh_call(conv, 0, NULL, NULL);
      sh_decref(conv);
      if (!t) return NULL;
      sh_obj *r = tf_convert(t, hint);
      sh_decref(t);
      return r;
    }
  }
  if (check_lossless(x, hint) < 0) return NULL;
  /* A list holding tensors packs them (TF1's auto-packing). */
  if (Py_TYPE(x) == (PyTypeObject *)&sh_list_type || Py_TYPE(x) == (PyTypeObject *)&sh_tuple_type) {
    int64_t n = Py_TYPE(x) == (PyTypeObject *)&sh_list_type ? SH_LIST_N(x) : SH_TUPLE_N(x);
    sh_obj **items = Py_TYPE(x) == (PyTypeObject *)&sh_list_type ? SH_LIST_ITEMS(x) : SH_TUPLE_ITEMS(x);
    bool any = false;
    rt_dtype t = nested_dtype(x, 0, &any);
    if (hint != RT_INVALID) t = hint;
    if (any) {   /* nested lists pack inside out: [(a, b), (b, a)] is Pack(Pack(a, b), Pack(b, a)) */
      rt_node *node = tf_node_begin("Pack", NULL);
      for (int64_t i = 0; i < n; i++)
        if (tf_node_input(node, items[i], t) < 0) return NULL;
      rt_node_set_int(node, "axis", 0);
      return tf_node_finish_tensor(node);
    }
  }
  rt_tensor *t = np_to_tensor(x, hint, false);
  if (!t) return NULL;
  sh_obj *r = tf_make_const(t, NULL);
  rt_tensor_unref(t);
  return r;
}

/* ---- building nodes ---------------------------------------------------------------- */

rt_node *tf_node_begin(const char *op, sh_obj *name) {
  return tf_node_begin_c(op, name && name != SH_NONE && sh_is_str(name) ? sh_str_cstr(name) : NULL);
}

rt_node *tf_node_begin_c(const char *op, const char *name) {
  tf_graph *g = tf_default_graph();
  const char *base = name ? name : op;
  size_t len = strlen(base);
  if (len > 1 && base[len - 1] == '/') {
    /* "scope/" (a name scope's string) names the op exactly: TF1's convention for ops
     * that stand for their scope, such as an optimizer's train op. */
    char exact[700];
    str_put(exact, sizeof exact, 0, base, len - 1);
    counts_set(g->names, exact, 1);
    return rt_node_new(exact, op);
  }
  char want[700], buf[600];
  str_put(want, sizeof want, str_puts(want, sizeof want, 0, g->scope), base, len);
  return rt_node_new(unique_name(g, want, buf, sizeof buf), op);
}

static bool input_is_ref(const rt_node *n, int k) {
  const rt_op_sig *sig = rt_op_find(n->op);
  if (!sig || sig->n_in == 0) return false;
  int a = k < sig->n_in ? k : sig->n_in - 1;
  return sig->in[a].ref || sig->in[a].fixed == RT_RESOURCE;
}

int tf_node_input(rt_node *n, sh_obj *x, rt_dtype hint) {
  tf_graph *g = tf_default_graph();
  char name[400];
  sh_obj *t = NULL;
  if (tf_variable_check(x) && input_is_ref(n, n->n_inputs)) {
    t = sh_incref(tf_variable_ref(x));   /* a ref or resource input takes the variable itself */
  } else if (tf_variable_check(x)) {
    /* a resource variable is read for its consumer, in the consumer's scope (as TF names it:
     * "dense/MatMul/ReadVariableOp") */
    char saved[TF_SCOPE_MAX];
    snprintf(saved, sizeof saved, "%s", g->scope);
    snprintf(g->scope, sizeof g->scope, "%s/", n->name);
    t = tf_variable_read(x);
    snprintf(g->scope, sizeof g->scope, "%s", saved);
  }
  else if (Py_TYPE(x) == (PyTypeObject *)&tf_tensor_type)
    t = sh_incref(x);
  else
    t = tf_convert(x, hint);
  if (!t) {
    rt_node_free(n);
    return -1;
  }
  tf_tensor *tt = (tf_tensor *)t;
  if (tt->graph != g) {
    sh_raise(sh_ValueError, "Tensor(\"%s\") must be from the same graph as the operation '%s' "
             "being built.", tf_tensor_name(tt, name, sizeof name), n->name);
    sh_decref(t);
    rt_node_free(n);
    return -1;
  }
  if (g->cf.hook && !g->cf.busy && tf_cf_ctx_of(g, tt->id) != g->cf.ctx) {
    /* a value from outside the current loop or branch: it goes in through an Enter/Switch */
    /* a resource handle enters a loop or branch as a plain value (Enter / Switch of resource) */
    sh_obj *r = tf_cf_call(g, t, n->name, input_is_ref(n, n->n_inputs) &&
                           tf_tensor_node(tt)->out_types[tt->index] != RT_RESOURCE);
    sh_decref(t);
    if (!r || Py_TYPE(r) != (PyTypeObject *)&tf_tensor_type) {
      if (r) sh_raise(sh_TypeError, "control-flow context hook must return a Tensor");
      sh_decref(r);
      rt_node_free(n);
      return -1;
    }
    t = r;
    tt = (tf_tensor *)t;
  }
  rt_node_add_input(n, tf_tensor_name(tt, name, sizeof name));
  sh_decref(t);
  return 0;
}

/* Control dependencies in force: innermost first, stopping at a None (cleared) entry. */
static void add_controls(tf_graph *g, rt_node *n) {
  for (int64_t i = SH_LIST_N(g->controls) - 1; i >= 0; i--) {
    sh_obj *ops = SH_LIST_ITEMS(g->controls)[i];
    if (ops == SH_NONE) break;
    for (int64_t k = 0; k < SH_LIST_N(ops); k++) {
      const char *dep = sh_str_cstr(SH_LIST_ITEMS(ops)[k]);
      bool have = false;
      for (int j = 0; j < n->n_inputs && !have; j++) {
        char nm[400];
        int idx;
        have = rt_tensor_name_parse(n->inputs[j], nm, sizeof nm, &idx) && !strcmp(nm, dep);
      }
      if (!have && strcmp(dep, n->name)) rt_node_add_control(n, dep);
    }
  }
}

/* The control dependencies in force, given to nodes [first, n_nodes) that a graph pass
 * (gradients) added: as TF, each such node that has no data input from another of them. */
int tf_apply_controls_after(tf_graph *g, int first) {
  rt_graph *rg = g->g;
  for (int id = first; id < rg->n_nodes; id++) {
    rt_node *n = rg->nodes[id];
    bool inner = false;
    for (int j = 0; j < n->n_data_inputs && !inner; j++) inner = n->edges[j].node >= first;
    if (inner) continue;
    for (int64_t i = SH_LIST_N(g->controls) - 1; i >= 0; i--) {
      sh_obj *ops = SH_LIST_ITEMS(g->controls)[i];
      if (ops == SH_NONE) break;
      for (int64_t k = 0; k < SH_LIST_N(ops); k++) {
        rt_status st = {0};
        if (rt_graph_add_control(rg, n, sh_str_cstr(SH_LIST_ITEMS(ops)[k]), &st)) return tf_raise_status(&st), -1;
      }
    }
  }
  return 0;
}

sh_obj *tf_graph_devices(tf_graph *g) { return g->devices; }

/* An op that updates a ref variable in place (Assign, AssignAdd, ApplyAdam, ScatterUpdate,
 * CountUpTo, ...) given the variable itself as its first input: TF1 colocates it with the
 * variable (its _class and device), whatever the device scope says. The variable, or NULL. */
static const char *ref_colocation(tf_graph *g, const rt_node *n) {
  static const char *const updates[] = {"Assign", "Apply", "Scatter", "CountUpTo"};
  bool update = false;
  for (size_t i = 0; i < sizeof updates / sizeof *updates && !update; i++)
    update = !strncmp(n->op, updates[i], strlen(updates[i]));
  if (!update || n->n_inputs < 1 || n->inputs[0][0] == '^') return NULL;
  char name[400];
  snprintf(name, sizeof name, "%s", n->inputs[0]);
  char *colon = strchr(name, ':');
  if (colon && !strcmp(colon, ":0")) *colon = 0;
  const rt_node *v = strchr(name, ':') ? NULL : rt_graph_find(g->g, name);
  return v && (!strcmp(v->op, "VariableV2") || !strcmp(v->op, "Variable")) ? v->name : NULL;
}

const struct rt_grad_ctx *tf_loop_grad;

/* The gradient loop's copies of n's data inputs, and its pivot for a source. */
static int loop_grad_inputs(rt_node *n) {
  const rt_grad_ctx *c = tf_loop_grad;
  for (int i = 0; i < n->n_inputs; i++) {
    if (n->inputs[i][0] == '^') continue;
    const char *t = c->remap(c->remap_arg, n->inputs[i]);
    if (!t) {
      if (!c->st->code) rt_error(c->st, RT_INTERNAL, "%s: no copy of %s in the gradient loop", n->name, n->inputs[i]);
      return -1;
    }
    char *copy = xstrdup(t);
    free(n->inputs[i]);
    n->inputs[i] = copy;
  }
  if (n->n_inputs == 0 && c->pivot) rt_node_add_control(n, c->pivot);
  return 0;
}

sh_obj *tf_node_finish(rt_node *n) {
  tf_graph *g = tf_default_graph();
  if (tf_loop_grad && tf_loop_grad->remap && loop_grad_inputs(n) < 0) {
    rt_node_free(n);
    return raise_build(tf_loop_grad->st);
  }
  add_controls(g, n);
  const char *coloc = SH_LIST_N(g->colocate) ? sh_str_cstr(SH_LIST_ITEMS(g->colocate)[SH_LIST_N(g->colocate) - 1]) : NULL;
  char own[400] = "";   /* the variable an in-place update goes with */
  if (!coloc && (!n->device || !*n->device) && ref_colocation(g, n)) {
    snprintf(own, sizeof own, "%s", ref_colocation(g, n));
    char cls[420];
    snprintf(cls, sizeof cls, "loc:@%s", own);
    const char *v[] = {cls};
    rt_node_set_strings(n, "_class", 1, v);
  }
  if (coloc) {
    char cls[400];
    snprintf(cls, sizeof cls, "loc:@%s", coloc);
    const char *v[] = {cls};
    rt_node_set_strings(n, "_class", 1, v);
  }
  for (int64_t i = SH_LIST_N(g->overrides) - 1; i >= 0; i--) {   /* the innermost map first */
    sh_obj *to = sh_dict_get_str(SH_LIST_ITEMS(g->overrides)[i], n->op);
    if (to && sh_is_str(to)) {
      rt_node_set_string(n, "_gradient_op_type", sh_str_cstr(to));
      break;
    }
  }
  if (g->cf.hook && !g->cf.busy && n->n_inputs == 0) {
    /* a source inside a loop or branch runs once per iteration / when taken: its pivot */
    sh_obj *r = tf_cf_call(g, SH_NONE, n->name, false);
    if (!r) {
      rt_node_free(n);
      return NULL;
    }
    if (sh_is_str(r)) rt_node_add_control(n, sh_str_cstr(r));
    sh_decref(r);
  }
  rt_status st = {0};
  int id = g->g->n_nodes;
  if (rt_graph_add(g->g, n, &st)) return raise_build(&st);
  tf_cf_record(g, id);
  /* Colocated: the device of the op it goes with, not the device scope's (TF1 sets it so
   * at creation, and TF's placer refuses a colocation group with two jobs). */
  if (coloc || own[0]) {
    rt_node *other = rt_graph_find(g->g, coloc ? coloc : own);
    if (other && other != g->g->nodes[id]) rt_node_set_device(g->g->nodes[id], other->device);
  } else if (tf_apply_device_stack(g, id) < 0) {
    return NULL;
  }
  return tf_op_new(g, id);
}

sh_obj *tf_node_finish_tensor(rt_node *n) {
  sh_obj *op = tf_node_finish(n);
  if (!op) return NULL;
  tf_op *o = (tf_op *)op;
  sh_obj *t = tf_tensor_new(o->graph, o->id, 0);
  sh_decref(op);
  return t;
}

sh_obj *tf_binary_op(const char *op, const char *name, sh_obj *a, sh_obj *b) {
  rt_dtype hint = tf_dtype_hint(a);
  if (hint == RT_INVALID) hint = tf_dtype_hint(b);
  rt_node *n = tf_node_begin_c(op, name);
  if (tf_node_input(n, a, hint) < 0) return NULL;
  if (tf_node_input(n, b, hint) < 0) return NULL;
  return tf_node_finish_tensor(n);
}

sh_obj *tf_unary_op(const char *op, const char *name, sh_obj *x) {
  rt_node *n = tf_node_begin_c(op, name);
  if (tf_node_input(n, x, RT_INVALID) < 0) return NULL;
  if (!strcmp(op, "Cast")) rt_node_set_type(n, "DstT", RT_DOUBLE);
  return tf_node_finish_tensor(n);
}

char *tf_graph_scope(tf_graph *g) { return g->scope; }

sh_obj *tf_unique_scope(tf_graph *g, const char *name) {
  char want[600];
  snprintf(want, sizeof want, "%s%s", g->scope, name);
  char buf[600];
  return sh_strf("%s/", unique_name(g, want, buf, sizeof buf));
}

/* ---- context managers: name_scope, control_dependencies, colocate_with, as_default ---- */

enum { CTX_NAME_SCOPE, CTX_CONTROL, CTX_COLOCATE, CTX_AS_DEFAULT, CTX_DEVICE, CTX_GRAD_OVERRIDE };

typedef struct tf_ctx {
  sh_obj head;
  int kind;
  tf_graph *g;
  sh_obj *arg;         /* the new scope string / the list of control ops / ... */
  char saved[512];     /* name scope to restore */
} tf_ctx;

static void ctx_destroy(sh_obj *self) {
  tf_ctx *c = (tf_ctx *)self;
  sh_decref((sh_obj *)c->g);
  sh_decref(c->arg);
}

static sh_obj *list_pop(sh_obj *l) {
  if (SH_LIST_N(l) == 0) return NULL;
  int64_t n = SH_LIST_N(l);
  sh_obj *o = sh_incref(SH_LIST_ITEMS(l)[n - 1]);
  PyList_SetSlice(l, n - 1, n, NULL);
  return o;
}

static sh_obj *ctx_enter(sh_obj *self) {
  tf_ctx *c = (tf_ctx *)self;
  switch (c->kind) {
  case CTX_NAME_SCOPE:
    snprintf(c->saved, sizeof c->saved, "%s", c->g->scope);
    snprintf(c->g->scope, sizeof c->g->scope, "%s", sh_str_cstr(c->arg));
    return sh_incref(c->arg);
  case CTX_CONTROL: sh_list_append(c->g->controls, c->arg); return sh_none();
  case CTX_COLOCATE: sh_list_append(c->g->colocate, c->arg); return sh_none();
  case CTX_DEVICE: sh_list_append(c->g->devices, c->arg); return sh_none();
  case CTX_GRAD_OVERRIDE: sh_list_append(c->g->overrides, c->arg); return sh_none();
  case CTX_AS_DEFAULT:
    if (!graph_stack) graph_stack = sh_list_new(0);
    sh_list_append(graph_stack, (sh_obj *)c->g);
    return sh_incref((sh_obj *)c->g);
  }
  return sh_none();
}

static int ctx_exit(sh_obj *self, sh_obj *exc) {
  tf_ctx *c = (tf_ctx *)self;
  switch (c->kind) {
  case CTX_NAME_SCOPE: snprintf(c->g->scope, sizeof c->g->scope, "%s", c->saved); break;
  case CTX_CONTROL: sh_decref(list_pop(c->g->controls)); break;
  case CTX_COLOCATE: sh_decref(list_pop(c->g->colocate)); break;
  case CTX_DEVICE: sh_decref(list_pop(c->g->devices)); break;
  case CTX_GRAD_OVERRIDE: sh_decref(list_pop(c->g->overrides)); break;
  case CTX_AS_DEFAULT: sh_decref(list_pop(graph_stack)); break;
  }
  return 0;
}

static sh_type tf_ctx_type = {
  SH_TYPE_HEAD, .name = "_GeneratorContextManager", .size = sizeof(tf_ctx),
  .destroy = ctx_destroy, .enter = ctx_enter, .exit = ctx_exit,
};

sh_obj *tf_ctx_new(int kind, tf_graph *g, sh_obj *arg) {
  tf_ctx *c = sh_new(&tf_ctx_type);
  c->kind = kind;
  c->g = (tf_graph *)sh_incref((sh_obj *)g);
  c->arg = arg;   /* steals */
  return (sh_obj *)c;
}

sh_obj *tf_device_ctx(sh_obj *entry) {
  return tf_ctx_new(CTX_DEVICE, tf_default_graph(), sh_incref(entry));
}

/* tf.name_scope(name, default_name=None, values=None) */
static sh_obj *f_name_scope(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *name = NULL, *dflt = NULL, *values = NULL;
  if (sh_parse_args("name_scope", argc, argv, kw, "name |default_name values", &name, &dflt, &values) < 0)
    return NULL;
  tf_graph *g = tf_default_graph();
  if (!name || name == SH_NONE) name = dflt;
  char scope[600];
  if (!name || name == SH_NONE) {
    scope[0] = '\0';   /* name_scope(None) resets to the top */
  } else {
    const char *s = sh_as_cstr(name);
    if (!s) return NULL;
    size_t len = strlen(s);
    if (len && s[len - 1] == '/') {
      snprintf(scope, sizeof scope, "%s", s);
    } else {
      char want[600];
      snprintf(want, sizeof want, "%s%s", g->scope, s);
      char buf[600];
      snprintf(scope, sizeof scope, "%s/", unique_name(g, want, buf, sizeof buf));
    }
  }
  return tf_ctx_new(CTX_NAME_SCOPE, g, sh_str(scope));
}

/* Names of ops (Operations, Tensors' ops, Variables' ops) as a list of str. */
static sh_obj *op_names(sh_obj *items) {
  sh_obj *l = sh_list_new(0);
  sh_obj *it = sh_iter(items);
  if (!it) { sh_decref(l); return NULL; }
  for (sh_obj *x; (x = sh_next(it));) {
    sh_obj *t = tf_variable_check(x) ? tf_variable_control(x) : x;
    const char *name = NULL;
    if (Py_TYPE(t) == (PyTypeObject *)&tf_op_type) name = tf_op_node((tf_op *)t)->name;
    else if (Py_TYPE(t) == (PyTypeObject *)&tf_tensor_type) name = tf_tensor_node((tf_tensor *)t)->name;
    if (!name) {
      sh_decref(x);
      sh_decref(it);
      sh_decref(l);
      return sh_raise(sh_TypeError, "Can not convert a %s into a Tensor or Operation.", sh_type_name(x));
    }
    sh_list_append_steal(l, sh_str(name));
    sh_decref(x);
  }
  sh_decref(it);
  if (sh_err_occurred()) { sh_decref(l); return NULL; }
  return l;
}

static sh_obj *f_control_dependencies(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *inputs;
  if (sh_parse_args("control_dependencies", argc, argv, kw, "control_inputs", &inputs) < 0) return NULL;
  sh_obj *names = inputs == SH_NONE ? sh_none() : op_names(inputs);
  if (!names) return NULL;
  return tf_ctx_new(CTX_CONTROL, tf_default_graph(), names);
}

static sh_obj *f_colocate_with(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *op, *ignore = NULL;
  if (sh_parse_args("colocate_with", argc, argv, kw, "op |ignore_existing", &op, &ignore) < 0) return NULL;
  sh_obj *one = sh_list_new(0);
  sh_list_append(one, op);
  sh_obj *names = op_names(one);
  sh_decref(one);
  if (!names) return NULL;
  sh_obj *name = sh_incref(SH_LIST_ITEMS(names)[0]);
  sh_decref(names);
  return tf_ctx_new(CTX_COLOCATE, tf_default_graph(), name);
}

/* Graph.gradient_override_map({op_type: name}): ops of those types made inside take the
 * gradient registered (tf.RegisterGradient) under name: attr _gradient_op_type, as TF's. */
static sh_obj *graph_gradient_override_map(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *map;
  if (sh_parse_args("gradient_override_map", argc, argv, kw, "op_type_map", &map) < 0) return NULL;
  if (!sh_is_dict(map))
    return sh_raise(sh_TypeError, "gradient_override_map: op_type_map must be a dict, not %s",
                    sh_type_name(map));
  sh_obj *k, *v;
  for (int64_t p = 0; sh_dict_next(map, &p, &k, &v);)
    if (!sh_is_str(k) || !sh_is_str(v))
      return sh_raise(sh_TypeError, "gradient_override_map: op_type_map must map strings to strings");
  return tf_ctx_new(CTX_GRAD_OVERRIDE, (tf_graph *)self, PyDict_Copy(map));
}

/* ---- Graph ------------------------------------------------------------------------ */

static sh_obj *graph_as_default(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  return tf_ctx_new(CTX_AS_DEFAULT, (tf_graph *)self, NULL);
}

static sh_obj *graph_get_operations(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  tf_graph *g = (tf_graph *)self;
  sh_obj *l = sh_list_new(0);
  for (int i = 0; i < g->g->n_nodes; i++) sh_list_append_steal(l, tf_op_new(g, i));
  return l;
}

static sh_obj *graph_get_by_name(tf_graph *g, sh_obj *name, bool tensor) {
  const char *s = sh_as_cstr(name);
  if (!s) return NULL;
  char node[400];
  int idx;
  if (!rt_tensor_name_parse(s, node, sizeof node, &idx) || (tensor != (strchr(s, ':') != NULL)))
    return sh_raise(sh_ValueError, tensor ? "The name '%s' looks like an (invalid) Operation name, not a Tensor. Tensor names must be of the form \"<op_name>:<output_index>\"."
                                          : "The name '%s' looks like a Tensor name, but is not a valid one. Operation names cannot contain ':'.", s);
  rt_node *n = rt_graph_find(g->g, node);
  if (!n) return sh_raise(sh_KeyError, "The name '%s' refers to %s which does not exist in the graph.", s,
                          tensor ? "a Tensor" : "an Operation");
  if (tensor && idx >= n->n_outputs)
    return sh_raise(sh_KeyError, "The name '%s' refers to a Tensor which does not exist. The operation, '%s', exists but only has %d outputs.",
                    s, node, n->n_outputs);
  return tensor ? tf_tensor_new(g, n->id, idx) : tf_op_new(g, n->id);
}

static sh_obj *graph_get_tensor(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *name;
  if (sh_parse_args("get_tensor_by_name", argc, argv, kw, "name", &name) < 0) return NULL;
  return graph_get_by_name((tf_graph *)self, name, true);
}

static sh_obj *graph_get_op(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *name;
  if (sh_parse_args("get_operation_by_name", argc, argv, kw, "name", &name) < 0) return NULL;
  return graph_get_by_name((tf_graph *)self, name, false);
}

sh_obj *tf_collection_in_scope(sh_obj *l, sh_obj *scope) {
  PyObject *re = PyImport_ImportModule("re");
  PyObject *match = re ? PyObject_GetAttrString(re, "match") : NULL;
  Py_XDECREF(re);
  sh_obj *out = match ? sh_list_new(0) : NULL;
  for (Py_ssize_t i = 0; out && i < PyList_GET_SIZE(l); i++) {
    PyObject *item = PyList_GET_ITEM(l, i), *name = PyObject_GetAttrString(item, "name");
    if (!name) {
      PyErr_Clear();
      continue;
    }
    PyObject *m = PyObject_CallFunctionObjArgs(match, scope, name, NULL);
    Py_DECREF(name);
    if (!m || (m != Py_None && PyList_Append(out, item) < 0)) {
      Py_XDECREF(m);
      Py_CLEAR(out);
      break;
    }
    Py_DECREF(m);
  }
  Py_XDECREF(match);
  return out;
}

static sh_obj *graph_get_collection(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *key, *scope = NULL;
  if (sh_parse_args("get_collection", argc, argv, kw, "key |scope", &key, &scope) < 0) return NULL;
  const char *k = sh_as_cstr(key);
  if (!k) return NULL;
  sh_obj *l = tf_graph_collection((tf_graph *)self, k, false);
  sh_obj *all = l ? sh_sequence_to_list(l) : sh_list_new(0);
  if (!all || !scope || scope == SH_NONE) return all;
  sh_obj *some = tf_collection_in_scope(all, scope);
  sh_decref(all);
  return some;
}

/* The collection itself (made when absent): what the caller changes, the graph has. */
static sh_obj *graph_get_collection_ref(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *key;
  if (sh_parse_args("get_collection_ref", argc, argv, kw, "key", &key) < 0) return NULL;
  const char *k = sh_as_cstr(key);
  return k ? sh_incref(tf_graph_collection((tf_graph *)self, k, true)) : NULL;
}

static sh_obj *graph_add_to_collection(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *key, *value;
  if (sh_parse_args("add_to_collection", argc, argv, kw, "name value", &key, &value) < 0) return NULL;
  const char *k = sh_as_cstr(key);
  if (!k) return NULL;
  sh_list_append(tf_graph_collection((tf_graph *)self, k, true), value);
  return sh_none();
}

static sh_obj *graph_collection_keys(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  if (sh_parse_args("get_all_collection_keys", argc, argv, kw, "") < 0) return NULL;
  sh_obj *out = sh_list_new(0), *k, *v;
  for (int64_t i = 0; sh_dict_next(((tf_graph *)self)->collections, &i, &k, &v);) sh_list_append(out, k);
  return out;
}

static sh_obj *graph_finalize(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) { return sh_none(); }

static sh_obj *graph_name_scope(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  return f_name_scope(NULL, argc, argv, kw);
}

static sh_obj *graph_device(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *d;
  if (sh_parse_args("device", argc, argv, kw, "device_name_or_function", &d) < 0) return NULL;
  return tf_ctx_new(CTX_DEVICE, (tf_graph *)self, sh_incref(d));
}

static const sh_method graph_methods[] = {
  {"as_default", graph_as_default, "as_default()", "Make this the default graph inside a with block."},
  {"get_operations", graph_get_operations, "get_operations()", "Every operation, in creation order."},
  {"get_tensor_by_name", graph_get_tensor, "get_tensor_by_name(name)", "The tensor named 'op:index'."},
  {"get_operation_by_name", graph_get_op, "get_operation_by_name(name)", "The operation with this name."},
  {"get_collection", graph_get_collection, "get_collection(key, scope=None)", "A copy of a collection."},
  {"get_collection_ref", graph_get_collection_ref, "get_collection_ref(key)", "The collection itself, made when absent."},
  {"add_to_collection", graph_add_to_collection, "add_to_collection(name, value)", "Append to a collection."},
  {"get_all_collection_keys", graph_collection_keys, "get_all_collection_keys()", "The names of the graph's collections."},
  {"finalize", graph_finalize, "finalize()", "Accepted for compatibility; graphs stay growable."},
  {"name_scope", graph_name_scope, "name_scope(name)", "A name scope in this graph."},
  {"device", graph_device, "device(device_name_or_function)", "A device scope in this graph."},
  {"control_dependencies", f_control_dependencies, "control_dependencies(control_inputs)", "Control dependencies in this graph."},
  {"gradient_override_map", graph_gradient_override_map, "gradient_override_map(op_type_map)", "Ops of these types made inside take the gradients registered under the names given."},
  {NULL},
};

static sh_obj *graph_getattr(sh_obj *self, const char *name) {
  tf_graph *g = (tf_graph *)self;
  if (!strcmp(name, "version")) return sh_int(g->g->n_nodes);
  if (!strcmp(name, "seed")) return g->seed < 0 ? sh_none() : sh_int(g->seed);
  if (!strcmp(name, "finalized")) return sh_bool(false);
  return NULL;
}

static sh_obj *graph_construct(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  if (sh_parse_args("Graph", argc, argv, kw, "") < 0) return NULL;
  return (sh_obj *)graph_new();
}

static sh_obj *graph_repr(sh_obj *self) { return sh_strf("<tf.Graph object at %p>", (void *)self); }

sh_type tf_graph_type = {
  SH_TYPE_HEAD, .name = "Graph", .size = sizeof(tf_graph),
  .help = "A dataflow graph: operations and the tensors between them.", .methods = graph_methods,
  .destroy = graph_destroy, .getattr = graph_getattr, .construct = graph_construct,
  .repr = graph_repr,
};

static sh_obj *f_get_default_graph(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  if (sh_parse_args("get_default_graph", argc, argv, kw, "") < 0) return NULL;
  return sh_incref((sh_obj *)tf_default_graph());
}

static sh_obj *f_reset_default_graph(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  if (sh_parse_args("reset_default_graph", argc, argv, kw, "") < 0) return NULL;
  if (graph_stack && SH_LIST_N(graph_stack))
    return sh_raise(sh_AssertionError, "Do not use tf.reset_default_graph() to clear nested graphs. "
                    "If you need a cleared graph, exit the nesting and create a new graph.");
  sh_decref((sh_obj *)global_graph);
  global_graph = graph_new();
  return sh_none();
}

static sh_obj *f_set_random_seed(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *seed;
  if (sh_parse_args("set_random_seed", argc, argv, kw, "seed", &seed) < 0) return NULL;
  int64_t s = -1;
  if (seed != SH_NONE && sh_as_int(seed, &s) < 0) return NULL;
  tf_default_graph()->seed = s;
  return sh_none();
}

static sh_obj *f_get_collection(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  return graph_get_collection((sh_obj *)tf_default_graph(), argc, argv, kw);
}

static sh_obj *f_get_collection_ref(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  return graph_get_collection_ref((sh_obj *)tf_default_graph(), argc, argv, kw);
}

static sh_obj *f_add_to_collection(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  return graph_add_to_collection((sh_obj *)tf_default_graph(), argc, argv, kw);
}

static const sh_method core_funcs[] = {
  {"name_scope", f_name_scope, "name_scope(name, default_name=None, values=None)", "Prefix the names of ops created inside the block."},
  {"control_dependencies", f_control_dependencies, "control_dependencies(control_inputs)", "Ops created inside run after control_inputs."},
  {"colocate_with", f_colocate_with, "colocate_with(op, ignore_existing=False)", "Ops created inside go where op goes."},
  {"get_default_graph", f_get_default_graph, "get_default_graph()", "The graph new ops are added to."},
  {"reset_default_graph", f_reset_default_graph, "reset_default_graph()", "Start a new, empty default graph."},
  {"set_random_seed", f_set_random_seed, "set_random_seed(seed)", "The graph-level random seed."},
  {"get_collection", f_get_collection, "get_collection(key, scope=None)", "A copy of a collection of the default graph."},
  {"add_to_collection", f_add_to_collection, "add_to_collection(name, value)", "Append to a collection of the default graph."},
  {"get_collection_ref", f_get_collection_ref, "get_collection_ref(key)", "A collection of the default graph itself."},
  {NULL},
};

void tf_core_add(sh_obj *tf) {
  sh_module_add_funcs(tf, core_funcs);
  sh_module_add(tf, "Graph", sh_incref((sh_obj *)&tf_graph_type));
  sh_module_add(tf, "Tensor", sh_incref((sh_obj *)&tf_tensor_type));
  sh_module_add(tf, "Operation", sh_incref((sh_obj *)&tf_op_type));
  sh_module_add(tf, "TensorShape", sh_incref((sh_obj *)&tf_shape_type));
  sh_module_add(tf, "DType", sh_incref((sh_obj *)&tf_dtype_type));
  const sh_dtype *d;
  for (int i = 0; (d = tf_dtype_nth(i)); i++) sh_module_add(tf, d->name, sh_incref((sh_obj *)d));
  sh_module_add(tf, "float", sh_incref(tf_dtype_obj(RT_FLOAT)));
  sh_module_add(tf, "double", sh_incref(tf_dtype_obj(RT_DOUBLE)));
  sh_module_add(tf, "newaxis", sh_none());
  sh_obj *keys = sh_module_new("GraphKeys");
  static const char *const gk[][2] = {
    {"GLOBAL_VARIABLES", "variables"}, {"TRAINABLE_VARIABLES", "trainable_variables"},
    {"LOCAL_VARIABLES", "local_variables"}, {"MODEL_VARIABLES", "model_variables"},
    {"SUMMARIES", "summaries"}, {"GLOBAL_STEP", "global_step"}, {"TRAIN_OP", "train_op"},
    {"UPDATE_OPS", "update_ops"}, {"LOSSES", "losses"}, {"INIT_OP", "init_op"},
    {"LOCAL_INIT_OP", "local_init_op"}, {"READY_OP", "ready_op"}, {"SAVERS", "savers"},
    {"QUEUE_RUNNERS", "queue_runners"}, {"REGULARIZATION_LOSSES", "regularization_losses"},
    {"VARIABLES", "variables"}, {"SUMMARY_OP", "summary_op"}, {"METRIC_VARIABLES", "metric_variables"},
    {"TABLE_INITIALIZERS", "table_initializer"}, {"ASSET_FILEPATHS", "asset_filepaths"},
  };
  for (size_t i = 0; i < sizeof gk / sizeof *gk; i++) sh_module_add(keys, gk[i][0], sh_str(gk[i][1]));
  sh_module_add(tf, "GraphKeys", keys);
}
