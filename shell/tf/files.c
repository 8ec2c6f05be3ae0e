/* TensorFlow's own files, seen from the tf module: checkpoints (tf.train.NewCheckpointReader,
 * list_variables, load_variable) through runtime/bundle.c; GraphDefs in TF's binary format
 * (as_graph_def().SerializeToString(), write_graph(as_text=False), GraphDef.ParseFromString,
 * tf.import_graph_def) through runtime/graphdef.c. The Python side is files.py.inc. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "runtime/bundle.h"
#include "runtime/graphdef.h"
#include "runtime/op.h"
#include "shell/py/lang.h"
#include "shell/tf/tf.h"

/* ---- checkpoints ------------------------------------------------------------------------- */

typedef struct list_ctx {
  sh_obj *list;
} list_ctx;

static sh_obj *shape_list(const rt_shape *s) {
  sh_obj *l = sh_list_new(0);
  for (int d = 0; d < s->ndims; d++) sh_list_append_steal(l, sh_int(s->dims[d]));
  return l;
}

static void add_one(const rt_bundle_entry *e, void *arg) {
  list_ctx *c = arg;
  sh_obj *t = sh_tuple_new(3);
  SH_TUPLE_ITEMS(t)[0] = sh_strn(e->name, e->name_len);
  const char *dn = rt_dtype_name(e->dtype);
  SH_TUPLE_ITEMS(t)[1] = strcmp(dn, "invalid") ? sh_str(dn) : sh_int(e->dtype);
  SH_TUPLE_ITEMS(t)[2] = shape_list(&e->shape);
  sh_list_append_steal(c->list, t);
}

/* _ckpt_entries(prefix) -> [(name, dtype name, [dims])], sorted by name. */
static sh_obj *f_ckpt_entries(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *po;
  if (sh_parse_args("_ckpt_entries", argc, argv, kw, "prefix", &po) < 0) return NULL;
  const char *prefix = sh_as_cstr(po);
  if (!prefix) return NULL;
  rt_bundle_index ix;
  rt_status st = {0};
  if (rt_bundle_index_read(prefix, &ix, &st)) return tf_raise_status(&st);
  list_ctx c = {sh_list_new(0)};
  rt_bundle_each(&ix, add_one, &c);
  rt_bundle_index_free(&ix);
  return c.list;
}

/* _ckpt_tensor(prefix, name) -> ndarray */
static sh_obj *f_ckpt_tensor(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *po, *no;
  if (sh_parse_args("_ckpt_tensor", argc, argv, kw, "prefix name", &po, &no) < 0) return NULL;
  const char *prefix = sh_as_cstr(po), *name = prefix ? sh_as_cstr(no) : NULL;
  if (!name) return NULL;
  rt_bundle_index ix;
  rt_status st = {0};
  if (rt_bundle_index_read(prefix, &ix, &st)) return tf_raise_status(&st);
  rt_bundle_entry *e = rt_bundle_find(&ix, name);
  rt_tensor *t = NULL;
  if (!e) rt_error(&st, RT_NOT_FOUND, "Key %s not found in checkpoint", name);
  else rt_bundle_read(prefix, &ix, e, &t, &st);
  rt_bundle_index_free(&ix);
  if (!t) return tf_raise_status(&st);
  return np_wrap(t);
}


/* ---- GraphDefs ------------------------------------------------------------------------------ */

static tf_graph *graph_arg(sh_obj *g) {
  if (!g || g == SH_NONE) return tf_default_graph();
  if (Py_TYPE(g) != (PyTypeObject *)&tf_graph_type) {
    sh_raise(sh_TypeError, "expected a tf.Graph, got %s", sh_type_name(g));
    return NULL;
  }
  return (tf_graph *)g;
}

/* _graphdef_bytes(graph=None, clear_devices=False, add_shapes=False) -> TF's binary GraphDef of
 * the graph (add_shapes: with each node's _output_shapes) */
static sh_obj *f_graphdef_bytes(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *go = NULL, *cd = NULL, *as = NULL;
  if (sh_parse_args("_graphdef_bytes", argc, argv, kw, "|graph clear_devices add_shapes", &go, &cd, &as) < 0) return NULL;
  tf_graph *g = graph_arg(go);
  if (!g) return NULL;
  unsigned char *b = NULL;
  size_t n = 0;
  rt_status st = {0};
  if (rt_graphdef_encode_shapes(tf_rt(g), cd && sh_truth(cd) > 0 ? RT_GD_CLEARED : RT_GD_REQUESTED,
                                as && sh_truth(as) > 0, &b, &n, &st))
    return tf_raise_status(&st);
  sh_obj *r = sh_bytes((const char *)b, n);
  free(b);
  return r;
}

/* _graphdef_scoped(data, scope) -> (the GraphDef's nodes under scope/, renamed, [unbound inputs]) */
static sh_obj *f_graphdef_scoped(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *data, *scope;
  if (sh_parse_args("_graphdef_scoped", argc, argv, kw, "data scope", &data, &scope) < 0) return NULL;
  const char *p, *sc = sh_as_cstr(scope);
  size_t n;
  if (!sc || !tf_bytes_arg(data, &p, &n)) return NULL;
  unsigned char *out = NULL;
  size_t on = 0;
  char **ub = NULL;
  int nub = 0;
  rt_status st = {0};
  if (rt_graphdef_scope((const unsigned char *)p, n, sc, &out, &on, &ub, &nub, &st)) return tf_raise_status(&st);
  sh_obj *l = sh_list_new(0);
  for (int i = 0; i < nub; i++) {
    sh_list_append_steal(l, sh_str(ub[i]));
    free(ub[i]);
  }
  free(ub);
  sh_obj *r = sh_tuple_of(2, sh_bytes((const char *)out, on), l);
  free(out);
  return r;
}

/* _graphdef_unexportable(graph=None) -> (node name, op, why) of the first node TensorFlow
 * could not load (tfsh's own ops with no TF form), or None */
static sh_obj *f_graphdef_unexportable(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *go = NULL;
  if (sh_parse_args("_graphdef_unexportable", argc, argv, kw, "|graph", &go) < 0) return NULL;
  tf_graph *g = graph_arg(go);
  if (!g) return NULL;
  const char *why = NULL;
  const rt_node *n = rt_graphdef_tf_unexportable(tf_rt(g), &why);
  if (!n) return sh_incref(SH_NONE);
  return sh_tuple_of(3, sh_str(n->name), sh_str(n->op), sh_str(why));
}

bool tf_bytes_arg(sh_obj *o, const char **p, size_t *n) {
  if (o && tf_bytes_of(o, p, n)) return true;
  sh_raise(sh_TypeError, "expected bytes, got %s", o ? sh_type_name(o) : "nothing");
  return false;
}

static sh_obj *attr_py(const rt_attr_value *v) {
  sh_obj *val = NULL;
  switch (v->kind) {
  case RT_ATTR_INT: val = sh_int(v->i); break;
  case RT_ATTR_FLOAT: val = sh_float(v->f); break;
  case RT_ATTR_BOOL: val = sh_bool(v->b); break;
  case RT_ATTR_STRING: val = sh_str(v->s ? v->s : ""); break;
  case RT_ATTR_TYPE: val = sh_int(v->type); break;
  case RT_ATTR_RAW: val = sh_bytes((const char *)v->list.v, (size_t)v->list.n); break;   /* the TensorProto's bytes */
  case RT_ATTR_SHAPE: val = v->shape.ndims < 0 ? sh_none() : shape_list(&v->shape); break;
  case RT_ATTR_TENSOR: {
    const rt_tensor *t = v->tensor;
    sh_obj *vals = sh_list_new(0);
    int64_t n = rt_tensor_numel(t);
    for (int64_t i = 0; i < n; i++) {
      if (t->dtype == RT_STRING) {
        const rt_str *s = (const rt_str *)rt_tensor_data(t) + i;
        sh_list_append_steal(vals, sh_strn(s->ptr ? s->ptr : "", s->len));
      } else if (t->dtype == RT_FLOAT || t->dtype == RT_DOUBLE) {
        sh_list_append_steal(vals, sh_float(rt_tensor_get_f64(t, i)));
      } else {
        sh_list_append_steal(vals, sh_int(rt_tensor_get_i64(t, i)));
      }
    }
    val = sh_tuple_new(3);
    SH_TUPLE_ITEMS(val)[0] = sh_int(t->dtype);
    SH_TUPLE_ITEMS(val)[1] = shape_list(&t->shape);
    SH_TUPLE_ITEMS(val)[2] = vals;
    break;
  }
  default: {
    val = sh_list_new(0);
    for (int i = 0; i < v->list.n; i++) {
      sh_obj *x = NULL;
      switch (v->kind) {
      case RT_ATTR_LIST_INT: x = sh_int(((int64_t *)v->list.v)[i]); break;
      case RT_ATTR_LIST_FLOAT: x = sh_float(((double *)v->list.v)[i]); break;
      case RT_ATTR_LIST_STRING: x = sh_str(((char **)v->list.v)[i]); break;
      case RT_ATTR_LIST_TYPE: x = sh_int(((rt_dtype *)v->list.v)[i]); break;
      case RT_ATTR_LIST_SHAPE: {   /* None: unknown rank, as a lone shape attr */
        const rt_shape *sh = &((rt_shape *)v->list.v)[i];
        x = sh->ndims < 0 ? sh_none() : shape_list(sh);
        break;
      }
      default: x = sh_none(); break;
      }
      sh_list_append_steal(val, x);
    }
  }
  }
  sh_obj *t = sh_tuple_new(2);
  SH_TUPLE_ITEMS(t)[0] = sh_str(rt_attr_kind_name(v->kind));
  SH_TUPLE_ITEMS(t)[1] = val;
  return t;
}

/* _graphdef_nodes(data, what) -> [{"name", "op", "input", "device", "attr": {k: (kind, value)}}] */
static sh_obj *f_graphdef_nodes(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *data, *wo = NULL;
  if (sh_parse_args("_graphdef_nodes", argc, argv, kw, "data |what", &data, &wo) < 0) return NULL;
  const char *p, *what = wo && wo != SH_NONE ? sh_as_cstr(wo) : "GraphDef";
  size_t n;
  if (!what || !tf_bytes_arg(data, &p, &n)) return NULL;
  rt_graphdef gd;
  rt_status st = {0};
  if (rt_graphdef_decode((const unsigned char *)p, n, what, &gd, &st)) return tf_raise_status(&st);
  sh_obj *out = sh_list_new(0);
  for (int i = 0; i < gd.n; i++) {
    const rt_node *x = gd.nodes[i];
    sh_obj *d = sh_dict_new();
    sh_obj *v = sh_str(x->name);
    sh_dict_set_str(d, "name", v), sh_decref(v);
    v = sh_str(x->op), sh_dict_set_str(d, "op", v), sh_decref(v);
    v = sh_str(x->device ? x->device : ""), sh_dict_set_str(d, "device", v), sh_decref(v);
    sh_obj *ins = sh_list_new(0);
    for (int k = 0; k < x->n_inputs; k++) sh_list_append_steal(ins, sh_str(x->inputs[k]));
    sh_dict_set_str(d, "input", ins), sh_decref(ins);
    sh_obj *attrs = sh_dict_new();
    for (int k = 0; k < x->n_attrs; k++) {
      sh_obj *a = attr_py(&x->attrs[k].value);
      sh_dict_set_str(attrs, x->attrs[k].name, a);
      sh_decref(a);
    }
    sh_dict_set_str(d, "attr", attrs), sh_decref(attrs);
    sh_list_append_steal(out, d);
  }
  rt_graphdef_free(&gd);
  return out;
}

static char *prefixed(const char *prefix, const char *name) {
  size_t n = strlen(prefix) + strlen(name) + 2;
  char *s = xmalloc(n);
  snprintf(s, n, "%s%s%s", prefix, prefix[0] ? "/" : "", name);
  return s;
}

/* _import_graph_def(data, prefix, input_map, return_elements, what) -> [Operation|Tensor] */
static sh_obj *f_import_graph_def(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *data, *po, *im = NULL, *re = NULL, *wo = NULL, *cdo = NULL;
  if (sh_parse_args("_import_graph_def", argc, argv, kw, "data prefix |input_map return_elements what clear_devices", &data,
                    &po, &im, &re, &wo, &cdo) < 0)
    return NULL;
  bool clear_devices = cdo && sh_truth(cdo) > 0;
  const char *p, *prefix = sh_as_cstr(po), *what = wo && wo != SH_NONE ? sh_as_cstr(wo) : "GraphDef";
  size_t n;
  if (!prefix || !what || !tf_bytes_arg(data, &p, &n)) return NULL;
  rt_graphdef gd;
  rt_status st = {0};
  if (rt_graphdef_decode((const unsigned char *)p, n, what, &gd, &st)) return tf_raise_status(&st);
  /* every op must exist here: name them all at once */
  sh_buf missing = {0};
  int n_missing = 0;
  for (int i = 0; i < gd.n; i++)
    if (!rt_op_find(rt_graphdef_op(gd.nodes[i]->op))) {
      if (n_missing++ < 8) sh_buf_printf(&missing, "%s'%s' (node '%s')", n_missing > 1 ? ", " : "", gd.nodes[i]->op, gd.nodes[i]->name);
    }
  if (n_missing) {
    sh_obj *m = sh_buf_finish(&missing);
    rt_graphdef_free(&gd);
    sh_obj *r = sh_raise(sh_ValueError, "import_graph_def: %d node%s of %s use%s ops tfsh does not have: %s%s", n_missing,
                         n_missing > 1 ? "s" : "", what, n_missing > 1 ? "" : "s", sh_str_cstr(m), n_missing > 8 ? ", ..." : "");
    sh_decref(m);
    return r;
  }
  int *order = rt_graphdef_order(&gd, &st);
  if (!order) {
    rt_graphdef_free(&gd);
    return tf_raise_status(&st);
  }
  tf_graph *g = tf_default_graph();
  sh_obj *result = NULL;
  int i;
  for (i = 0; i < gd.n; i++) {
    rt_node *src = gd.nodes[order[i]];
    char *full = prefixed(prefix, src->name);
    char exact[1100];
    snprintf(exact, sizeof exact, "%s/", full);
    free(full);
    rt_node *x = tf_node_begin_c(rt_graphdef_op(src->op), exact);
    for (int k = 0; k < src->n_inputs; k++) {
      const char *in = src->inputs[k];
      bool ctl = in[0] == '^';
      char key[600];
      snprintf(key, sizeof key, "%s%s", ctl ? in + 1 : in, ctl || strchr(in, ':') ? "" : ":0");
      sh_obj *mapped = im && im != SH_NONE && !ctl ? sh_dict_get_str(im, key) : NULL;
      if (!mapped && im && im != SH_NONE && !ctl && !strchr(in, ':')) mapped = sh_dict_get_str(im, in);
      if (mapped) {
        if (tf_node_input(x, mapped, RT_INVALID) < 0) goto fail;
        continue;
      }
      char *pin = prefixed(prefix, ctl ? in + 1 : in);
      if (ctl) rt_node_add_control(x, pin);
      else rt_node_add_input(x, pin);
      free(pin);
    }
    if (src->device && src->device[0] && !clear_devices) rt_node_set_device(x, src->device);
    for (int k = 0; k < src->n_attrs; k++) {
      rt_attr_value v;
      rt_attr_value_copy(&v, &src->attrs[k].value);
      if (!strcmp(src->attrs[k].name, "_class") && v.kind == RT_ATTR_LIST_STRING && prefix[0])
        for (int j = 0; j < v.list.n; j++) {
          char **s = (char **)v.list.v + j;
          if (!strncmp(*s, "loc:@", 5)) {
            char *np = prefixed(prefix, *s + 5), buf[1200];
            snprintf(buf, sizeof buf, "loc:@%s", np);
            free(np);
            free(*s);
            *s = xstrdup(buf);
          }
        }
      rt_node_set_attr(x, src->attrs[k].name, &v);
    }
    rt_graphdef_fit_attrs(x, rt_op_find(x->op));
    sh_obj *op = tf_node_finish(x);
    if (!op) goto fail;
    if (src->device && src->device[0] && !clear_devices)   /* the GraphDef's device wins over device scopes */
      rt_node_set_device(tf_rt(g)->nodes[((tf_op *)op)->id], src->device);
    sh_decref(op);
  }
  result = sh_list_new(0);
  if (re && re != SH_NONE) {
    sh_obj *it = sh_iter(re);
    if (!it) goto fail;
    for (sh_obj *e; (e = sh_next(it));) {
      const char *es = sh_as_cstr(e);
      char *full = es ? prefixed(prefix, es) : NULL;
      sh_decref(e);
      if (!full) {
        sh_decref(it);
        goto fail;
      }
      char nm[1100];
      int oi = 0;
      bool tensor = strchr(full, ':') != NULL;
      rt_tensor_name_parse(full, nm, sizeof nm, &oi);
      rt_node *node = rt_graph_find(tf_rt(g), nm);
      if (!node || (tensor && (oi < 0 || oi >= node->n_outputs))) {
        sh_raise(sh_ValueError, "Requested return_element %s not found in graph_def.", es);
        free(full);
        sh_decref(it);
        goto fail;
      }
      free(full);
      sh_list_append_steal(result, tensor ? tf_tensor_new(g, node->id, oi) : tf_op_new(g, node->id));
    }
    sh_decref(it);
  }
  free(order);
  rt_graphdef_free(&gd);
  return result;
fail:
  sh_decref(result);
  free(order);
  rt_graphdef_free(&gd);
  return NULL;
}

static const sh_method files_funcs[] = {
  {"_graphdef_scoped", f_graphdef_scoped, "_graphdef_scoped(data, scope)", "A GraphDef's nodes under a scope, renamed (internal)."},
  {"_graphdef_unexportable", f_graphdef_unexportable, "_graphdef_unexportable(graph=None)", "The first node TF could not load, or None (internal)."},
  {"_graphdef_bytes", f_graphdef_bytes, "_graphdef_bytes(graph=None, clear_devices=False, add_shapes=False)", "A graph as TF's binary GraphDef (internal)."},
  {"_graphdef_nodes", f_graphdef_nodes, "_graphdef_nodes(data, what='GraphDef')", "The nodes of a binary GraphDef (internal)."},
  {"_import_graph_def", f_import_graph_def, "_import_graph_def(data, prefix, input_map=None, return_elements=None, what='GraphDef', clear_devices=False)", "Add a binary GraphDef's nodes to the default graph (internal)."},
  {"_ckpt_entries", f_ckpt_entries, "_ckpt_entries(prefix)", "The tensors of a checkpoint: (name, dtype, shape) (internal)."},
  {"_ckpt_tensor", f_ckpt_tensor, "_ckpt_tensor(prefix, name)", "One tensor of a checkpoint (internal)."},
  {NULL},
};

static const char files_src[] =
#include "shell/tf/files.py.inc"
    ;
#include "shell/tf/files.frozen.h"   /* files_frozen[]: generated, CMakeLists.txt */

/* _tensor_shape(dims) -> a TensorShape of a list of ints (None: unknown rank) */
static sh_obj *f_tensor_shape(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *dims;
  if (sh_parse_args("_tensor_shape", argc, argv, kw, "dims", &dims) < 0) return NULL;
  rt_shape s = {.ndims = -1};
  if (dims != SH_NONE) {
    sh_obj *t = sh_sequence_to_tuple(dims);
    if (!t) return NULL;
    if (SH_TUPLE_N(t) > RT_MAX_DIMS) {
      sh_decref(t);
      return sh_raise(sh_ValueError, "a shape of more than %d dims", RT_MAX_DIMS);
    }
    s.ndims = (int)SH_TUPLE_N(t);
    for (int i = 0; i < s.ndims; i++) {
      sh_obj *d = SH_TUPLE_ITEMS(t)[i];
      int64_t v = -1;
      if (d != SH_NONE && sh_as_int(d, &v) < 0) {
        sh_decref(t);
        return NULL;
      }
      s.dims[i] = v;
    }
    sh_decref(t);
  }
  return tf_shape_new(&s);
}

static const sh_method partitioned_funcs[] = {
  {"_tensor_shape", f_tensor_shape, "_tensor_shape(dims)", "A TensorShape of a list of dims (internal)."},
  {NULL},
};

static const char partitioned_src[] =
#include "shell/tf/partitioned.py.inc"
    ;
#include "shell/tf/partitioned.frozen.h"   /* partitioned_frozen[]: generated, CMakeLists.txt */

int tf_files_add(sh_obj *tf) {
  sh_module_add_funcs(tf, files_funcs);
  sh_obj *dict = sh_module_dict(tf);
  if (sh_exec_frozen(files_frozen, sizeof files_frozen, files_src, "<tensorflow.files>", dict) < 0) return -1;
  sh_module_add_funcs(tf, partitioned_funcs);
  return sh_exec_frozen(partitioned_frozen, sizeof partitioned_frozen, partitioned_src, "<tensorflow.partitioned>", dict);
}
