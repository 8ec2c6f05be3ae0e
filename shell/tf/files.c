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
#include "shell/lang/lang.h"
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
  if (g->type != &tf_graph_type) {
    sh_raise(sh_TypeError, "expected a tf.Graph, got %s", sh_type_name(g));
    return NULL;
  }
  return (tf_graph *)g;
}

/* _graphdef_bytes(graph=None) -> TF's binary GraphDef of the graph */
static sh_obj *f_graphdef_bytes(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *go = NULL;
  if (sh_parse_args("_graphdef_bytes", argc, argv, kw, "|graph", &go) < 0) return NULL;
  tf_graph *g = graph_arg(go);
  if (!g) return NULL;
  unsigned char *b = NULL;
  size_t n = 0;
  rt_status st = {0};
  if (rt_graphdef_encode(tf_rt(g), false, &b, &n, &st)) return tf_raise_status(&st);
  sh_obj *r = sh_strn((const char *)b, n);
  free(b);
  return r;
}

static bool bytes_arg(sh_obj *o, const char **p, size_t *n) {
  if (o && sh_is_str(o)) {
    *p = ((sh_str_obj *)o)->s;
    *n = (size_t)((sh_str_obj *)o)->len;
    return true;
  }
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
      case RT_ATTR_LIST_SHAPE: x = shape_list(&((rt_shape *)v->list.v)[i]); break;
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
  if (!what || !bytes_arg(data, &p, &n)) return NULL;
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

typedef struct ni {   /* a node's name and index, sorted by name for lookups */
  const char *name;
  int i;
} ni;
static int ni_cmp(const void *a, const void *b) { return strcmp(((const ni *)a)->name, ((const ni *)b)->name); }

/* Nodes in an order where every input comes first (a GraphDef need not be sorted), but for
 * loops' back edges (NextIteration -> Merge). */
static int *topo_order(const rt_graphdef *gd, rt_status *st) {
  int n = gd->n, *order = xcalloc((size_t)n + 1, sizeof *order), *state = xcalloc((size_t)n + 1, sizeof *state);
  int *stack = xcalloc((size_t)n + 1, sizeof *stack), *pos = xcalloc((size_t)n + 1, sizeof *pos), k = 0;
  ni *idx = xcalloc((size_t)n + 1, sizeof *idx);
  for (int i = 0; i < n; i++) idx[i] = (ni){gd->nodes[i]->name, i};
  qsort(idx, (size_t)n, sizeof *idx, ni_cmp);
  int rc = RT_OK;
  for (int r = 0; r < n && !rc; r++) {
    if (state[r]) continue;
    int sp = 0;
    stack[sp++] = r, state[r] = 1, pos[r] = 0;
    while (sp && !rc) {
      int v = stack[sp - 1];
      const rt_node *x = gd->nodes[v];
      if (pos[v] < x->n_inputs) {
        char nm[512];
        int oi;
        const char *in = x->inputs[pos[v]++];
        if (!rt_tensor_name_parse(in, nm, sizeof nm, &oi)) continue;
        ni key = {nm, 0}, *f = bsearch(&key, idx, (size_t)n, sizeof *idx, ni_cmp);
        if (!f) continue;   /* an input_map'd or outside name: checked when added */
        const char *sop = gd->nodes[f->i]->op;
        if ((!strcmp(x->op, "Merge") || !strcmp(x->op, "RefMerge")) &&
            (!strcmp(sop, "NextIteration") || !strcmp(sop, "RefNextIteration")))
          continue;   /* a loop's back edge: the Merge may come first (rt_graph's forward inputs) */
        if (state[f->i] == 1) {
          rc = rt_error(st, RT_INVALID_ARGUMENT, "GraphDef has a cycle through node '%s' that is not a loop's", x->name);
          break;
        }
        if (!state[f->i]) stack[sp++] = f->i, state[f->i] = 1, pos[f->i] = 0;
      } else {
        state[v] = 2;
        order[k++] = v;
        sp--;
      }
    }
  }
  free(state), free(stack), free(pos), free(idx);
  if (rc) {
    free(order);
    return NULL;
  }
  return order;
}

/* TF's attrs that tfsh's op lacks are dropped (defaults and bookkeeping: use_locking,
 * _output_shapes, ...), empty lists take the signature's kind, and N is filled where tfsh's
 * signature counts a list TF's does not. */
static void fit_attrs(rt_node *x, const rt_op_sig *sig) {
  for (int k = 0; k < x->n_attrs;) {
    rt_attr *a = &x->attrs[k];
    const rt_attr_sig *as = NULL;
    for (int j = 0; j < sig->n_attrs; j++)
      if (!strcmp(sig->attrs[j].name, a->name)) as = &sig->attrs[j];
    bool keep = as != NULL || !strcmp(a->name, "_class");
    if (as && a->value.kind != as->kind) {
      if (a->value.kind == RT_ATTR_LIST_INT && a->value.list.n == 0 && as->kind >= RT_ATTR_LIST_INT)
        a->value.kind = as->kind;   /* an empty list of another kind */
      else if (a->value.kind == RT_ATTR_FLOAT && as->kind == RT_ATTR_INT)
        keep = false;
      else
        keep = a->value.kind == as->kind;
    }
    if (keep) {
      k++;
      continue;
    }
    rt_attr_value_clear(&a->value);
    free(a->name);
    memmove(a, a + 1, (size_t)(x->n_attrs - k - 1) * sizeof *a);
    x->n_attrs--;
  }
  bool wants_n = false;
  for (int j = 0; j < sig->n_attrs; j++) wants_n |= !strcmp(sig->attrs[j].name, "N") && sig->attrs[j].kind == RT_ATTR_INT;
  if (wants_n && !rt_node_attr(x, "N")) {
    const rt_attr_value *dt = rt_node_attr(x, "dtypes");
    if (dt && dt->kind == RT_ATTR_LIST_TYPE) rt_node_set_int(x, "N", dt->list.n);
  }
}

static char *prefixed(const char *prefix, const char *name) {
  size_t n = strlen(prefix) + strlen(name) + 2;
  char *s = xmalloc(n);
  snprintf(s, n, "%s%s%s", prefix, prefix[0] ? "/" : "", name);
  return s;
}

/* Ops TF writes under a newer name for what a tfsh op does (TF 1.15's `+` is AddV2). */
static const char *op_alias(const char *op) {
  static const char *const alias[][2] = {{"AddV2", "Add"}};
  if (rt_op_find(op)) return op;
  for (size_t i = 0; i < sizeof alias / sizeof alias[0]; i++)
    if (!strcmp(op, alias[i][0]) && rt_op_find(alias[i][1])) return alias[i][1];
  return op;
}

/* _import_graph_def(data, prefix, input_map, return_elements, what) -> [Operation|Tensor] */
static sh_obj *f_import_graph_def(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *data, *po, *im = NULL, *re = NULL, *wo = NULL;
  if (sh_parse_args("_import_graph_def", argc, argv, kw, "data prefix |input_map return_elements what", &data, &po, &im,
                    &re, &wo) < 0)
    return NULL;
  const char *p, *prefix = sh_as_cstr(po), *what = wo && wo != SH_NONE ? sh_as_cstr(wo) : "GraphDef";
  size_t n;
  if (!prefix || !what || !bytes_arg(data, &p, &n)) return NULL;
  rt_graphdef gd;
  rt_status st = {0};
  if (rt_graphdef_decode((const unsigned char *)p, n, what, &gd, &st)) return tf_raise_status(&st);
  /* every op must exist here: name them all at once */
  sh_buf missing = {0};
  int n_missing = 0;
  for (int i = 0; i < gd.n; i++)
    if (!rt_op_find(op_alias(gd.nodes[i]->op))) {
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
  int *order = topo_order(&gd, &st);
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
    rt_node *x = tf_node_begin_c(op_alias(src->op), exact);
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
    if (src->device && src->device[0]) rt_node_set_device(x, src->device);
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
    fit_attrs(x, rt_op_find(x->op));
    sh_obj *op = tf_node_finish(x);
    if (!op) goto fail;
    if (src->device && src->device[0])   /* the GraphDef's device wins over device scopes */
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
  {"_graphdef_bytes", f_graphdef_bytes, "_graphdef_bytes(graph=None)", "A graph as TF's binary GraphDef (internal)."},
  {"_graphdef_nodes", f_graphdef_nodes, "_graphdef_nodes(data, what='GraphDef')", "The nodes of a binary GraphDef (internal)."},
  {"_import_graph_def", f_import_graph_def, "_import_graph_def(data, prefix, input_map=None, return_elements=None, what='GraphDef')", "Add a binary GraphDef's nodes to the default graph (internal)."},
  {"_ckpt_entries", f_ckpt_entries, "_ckpt_entries(prefix)", "The tensors of a checkpoint: (name, dtype, shape) (internal)."},
  {"_ckpt_tensor", f_ckpt_tensor, "_ckpt_tensor(prefix, name)", "One tensor of a checkpoint (internal)."},
  {NULL},
};

static const char files_src[] =
#include "shell/tf/files.py.inc"
    ;

int tf_files_add(sh_obj *tf) {
  sh_module_add_funcs(tf, files_funcs);
  return sh_exec_string(files_src, "<tensorflow.files>", ((sh_module_obj *)tf)->dict);
}
