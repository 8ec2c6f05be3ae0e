/* MetaGraphs seen from the tf module: the bytes of a MetaGraphDef and of a VariableDef both
 * ways (runtime/metagraph.c), and a Variable object over nodes an imported graph already
 * has. export_meta_graph / import_meta_graph and the Saver's .meta file are written in the
 * language: metagraph.py.inc. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "runtime/metagraph.h"
#include "shell/py/lang.h"
#include "shell/tf/tf.h"

static void set_steal(sh_obj *d, const char *k, sh_obj *v) {
  sh_dict_set_str(d, k, v);
  sh_decref(v);
}

static sh_obj *kind_name(rt_mg_kind k) {
  return sh_str(k == RT_MG_NODES ? "node_list" : k == RT_MG_BYTES ? "bytes_list" : k == RT_MG_INT64 ? "int64_list" : "float_list");
}

/* _metagraph_parse(data, what) -> {"graph_def": bytes|None, "saver_def": dict|None,
 * "collections": [(key, kind, [values])], "meta_graph_version", "tensorflow_version",
 * "tags", "stripped_default_attrs"} */
static sh_obj *f_metagraph_parse(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *data, *wo = NULL;
  if (sh_parse_args("_metagraph_parse", argc, argv, kw, "data |what", &data, &wo) < 0) return NULL;
  const char *p, *what = wo && wo != SH_NONE ? sh_as_cstr(wo) : "MetaGraphDef";
  size_t n;
  if (!what || !tf_bytes_arg(data, &p, &n)) return NULL;
  rt_metagraph mg;
  rt_status st = {0};
  if (rt_metagraph_decode((const unsigned char *)p, n, what, &mg, &st)) return tf_raise_status(&st);
  sh_obj *d = sh_dict_new();
  set_steal(d, "graph_def", mg.graph_def ? sh_bytes((const char *)mg.graph_def, mg.graph_def_len) : sh_none());
  if (mg.has_saver) {
    sh_obj *s = sh_dict_new();
    set_steal(s, "filename_tensor_name", sh_str(mg.filename_tensor_name));
    set_steal(s, "save_tensor_name", sh_str(mg.save_tensor_name));
    set_steal(s, "restore_op_name", sh_str(mg.restore_op_name));
    set_steal(s, "max_to_keep", sh_int(mg.max_to_keep));
    set_steal(s, "sharded", sh_bool(mg.sharded));
    set_steal(s, "keep_checkpoint_every_n_hours", sh_float(mg.keep_hours));
    set_steal(s, "version", sh_int(mg.version));
    set_steal(d, "saver_def", s);
  } else {
    set_steal(d, "saver_def", sh_none());
  }
  sh_obj *cl = sh_list_new(0);
  for (int i = 0; i < mg.n_coll; i++) {
    const rt_mg_collection *c = &mg.coll[i];
    sh_obj *vals = sh_list_new(0);
    for (int j = 0; j < c->n; j++)
      sh_list_append_steal(vals, c->kind == RT_MG_INT64 ? sh_int(c->i[j])
                                 : c->kind == RT_MG_FLOAT ? sh_float(c->f[j])
                                 : c->kind == RT_MG_BYTES ? sh_bytes(c->v[j], c->len[j])
                                                          : sh_strn(c->v[j], c->len[j]));
    sh_obj *t = sh_tuple_new(3);
    SH_TUPLE_ITEMS(t)[0] = sh_str(c->key);
    SH_TUPLE_ITEMS(t)[1] = kind_name(c->kind);
    SH_TUPLE_ITEMS(t)[2] = vals;
    sh_list_append_steal(cl, t);
  }
  set_steal(d, "collections", cl);
  set_steal(d, "meta_graph_version", sh_str(mg.meta_graph_version));
  set_steal(d, "tensorflow_version", sh_str(mg.tensorflow_version));
  sh_obj *tags = sh_list_new(0);
  for (int i = 0; i < mg.n_tags; i++) sh_list_append_steal(tags, sh_str(mg.tags[i]));
  set_steal(d, "tags", tags);
  set_steal(d, "stripped_default_attrs", sh_bool(mg.stripped_default_attrs));
  rt_metagraph_clear(&mg);
  return d;
}

/* A str item of a dict (borrowed), or "" */
static const char *dstr(sh_obj *d, const char *k) {
  sh_obj *v = d ? sh_dict_get_str(d, k) : NULL;
  return v && sh_is_str(v) ? sh_str_cstr(v) : "";
}
static int64_t dint(sh_obj *d, const char *k) {
  sh_obj *v = d ? sh_dict_get_str(d, k) : NULL;
  int64_t i = 0;
  if (v && sh_is_int(v)) sh_as_int(v, &i);
  return i;
}

/* _metagraph_bytes(graph_def, saver_def, collections, info) -> bytes. saver_def: a dict as
 * _metagraph_parse gives, or None; collections: [(key, kind, [values])]; info: a dict with
 * meta_graph_version, tensorflow_version, tags, stripped_default_attrs. */
static sh_obj *f_metagraph_bytes(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *gd, *sd, *colls, *info;
  if (sh_parse_args("_metagraph_bytes", argc, argv, kw, "graph_def saver_def collections info", &gd, &sd, &colls, &info) < 0)
    return NULL;
  rt_metagraph mg = {0};
  const char *gp = NULL;
  size_t gn = 0;
  if (gd != SH_NONE && !tf_bytes_arg(gd, &gp, &gn)) return NULL;
  mg.graph_def = (unsigned char *)gp;
  mg.graph_def_len = gn;
  if (sd != SH_NONE) {
    mg.has_saver = true;
    mg.filename_tensor_name = (char *)dstr(sd, "filename_tensor_name");
    mg.save_tensor_name = (char *)dstr(sd, "save_tensor_name");
    mg.restore_op_name = (char *)dstr(sd, "restore_op_name");
    mg.max_to_keep = (int)dint(sd, "max_to_keep");
    mg.sharded = dint(sd, "sharded") != 0;
    sh_obj *h = sh_dict_get_str(sd, "keep_checkpoint_every_n_hours");
    if (h) sh_as_double(h, &mg.keep_hours);
    mg.version = (int)dint(sd, "version");
  }
  mg.meta_graph_version = (char *)dstr(info, "meta_graph_version");
  mg.tensorflow_version = (char *)dstr(info, "tensorflow_version");
  mg.stripped_default_attrs = dint(info, "stripped_default_attrs") != 0;
  sh_obj *tags = sh_dict_get_str(info, "tags");
  sh_obj *tl = tags && tags != SH_NONE ? sh_sequence_to_list(tags) : sh_list_new(0);
  sh_obj *cl = tl ? sh_sequence_to_list(colls) : NULL;
  if (!cl) {
    sh_decref(tl);
    return NULL;
  }
  mg.tags = xcalloc((size_t)SH_LIST_N(tl) + 1, sizeof *mg.tags);
  for (int64_t i = 0; i < SH_LIST_N(tl); i++)
    if (sh_is_str(SH_LIST_ITEMS(tl)[i])) mg.tags[mg.n_tags++] = (char *)sh_str_cstr(SH_LIST_ITEMS(tl)[i]);
  mg.coll = xcalloc((size_t)SH_LIST_N(cl) + 1, sizeof *mg.coll);
  sh_obj *keep = sh_list_new(0);   /* the value lists, alive until packed */
  sh_obj *r = NULL;
  for (int64_t i = 0; i < SH_LIST_N(cl); i++) {
    sh_obj *t = SH_LIST_ITEMS(cl)[i];
    sh_obj *tt = sh_sequence_to_list(t);
    if (!tt) goto done;
    sh_list_append_steal(keep, tt);
    if (SH_LIST_N(tt) != 3 || !sh_is_str(SH_LIST_ITEMS(tt)[0]) || !sh_is_str(SH_LIST_ITEMS(tt)[1])) {
      sh_raise(sh_TypeError, "a collection is (key, kind, values)");
      goto done;
    }
    sh_obj *vals = sh_sequence_to_list(SH_LIST_ITEMS(tt)[2]);
    if (!vals) goto done;
    sh_list_append_steal(keep, vals);
    rt_mg_collection *c = &mg.coll[mg.n_coll++];
    const char *kind = sh_str_cstr(SH_LIST_ITEMS(tt)[1]);
    c->key = (char *)sh_str_cstr(SH_LIST_ITEMS(tt)[0]);
    c->kind = !strcmp(kind, "node_list") ? RT_MG_NODES : !strcmp(kind, "bytes_list") ? RT_MG_BYTES
              : !strcmp(kind, "int64_list") ? RT_MG_INT64 : RT_MG_FLOAT;
    size_t k = (size_t)SH_LIST_N(vals);
    c->n = (int)k;
    c->v = xcalloc(k + 1, sizeof *c->v), c->len = xcalloc(k + 1, sizeof *c->len);
    c->i = xcalloc(k + 1, sizeof *c->i), c->f = xcalloc(k + 1, sizeof *c->f);
    for (size_t j = 0; j < k; j++) {
      sh_obj *v = SH_LIST_ITEMS(vals)[j];
      if (c->kind == RT_MG_INT64 ? sh_as_int(v, &c->i[j]) < 0
          : c->kind == RT_MG_FLOAT ? sh_as_double(v, &c->f[j]) < 0
                                   : !tf_bytes_arg(v, (const char **)&c->v[j], &c->len[j]))
        goto done;
    }
  }
  unsigned char *out = NULL;
  size_t on = 0;
  rt_status st = {0};
  if (rt_metagraph_encode(&mg, &out, &on, &st)) {
    tf_raise_status(&st);
    goto done;
  }
  r = sh_bytes((const char *)out, on);
  free(out);
done:
  for (int i = 0; i < mg.n_coll; i++) free(mg.coll[i].v), free(mg.coll[i].len), free(mg.coll[i].i), free(mg.coll[i].f);
  free(mg.coll);
  free(mg.tags);
  sh_decref(keep);
  sh_decref(cl);
  sh_decref(tl);
  return r;
}

/* _variable_def_parse(data, what) -> {"variable_name", "initial_value_name",
 * "initializer_name", "snapshot_name", "is_resource", "trainable"} */
static sh_obj *f_variable_def_parse(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *data, *wo = NULL;
  if (sh_parse_args("_variable_def_parse", argc, argv, kw, "data |what", &data, &wo) < 0) return NULL;
  const char *p, *what = wo && wo != SH_NONE ? sh_as_cstr(wo) : "VariableDef";
  size_t n;
  if (!what || !tf_bytes_arg(data, &p, &n)) return NULL;
  rt_variable_def v;
  rt_status st = {0};
  if (rt_variable_def_decode((const unsigned char *)p, n, what, &v, &st)) return tf_raise_status(&st);
  sh_obj *d = sh_dict_new();
  set_steal(d, "variable_name", sh_str(v.variable_name));
  set_steal(d, "initial_value_name", sh_str(v.initial_value_name));
  set_steal(d, "initializer_name", sh_str(v.initializer_name));
  set_steal(d, "snapshot_name", sh_str(v.snapshot_name));
  set_steal(d, "is_resource", sh_bool(v.is_resource));
  set_steal(d, "trainable", sh_bool(v.trainable));
  rt_variable_def_clear(&v);
  return d;
}

/* _variable_def_bytes(dict) -> bytes */
static sh_obj *f_variable_def_bytes(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *d;
  if (sh_parse_args("_variable_def_bytes", argc, argv, kw, "d", &d) < 0) return NULL;
  rt_variable_def v = {(char *)dstr(d, "variable_name"), (char *)dstr(d, "initial_value_name"),
                       (char *)dstr(d, "initializer_name"), (char *)dstr(d, "snapshot_name"),
                       dint(d, "is_resource") != 0, dint(d, "trainable") != 0};
  unsigned char *out;
  size_t n;
  rt_status st = {0};
  if (rt_variable_def_encode(&v, &out, &n, &st)) return tf_raise_status(&st);
  sh_obj *r = sh_bytes((const char *)out, n);
  free(out);
  return r;
}

/* _variable_over(ref, value, initializer, initial_value, trainable) -> Variable */
static sh_obj *f_variable_over(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *ref, *value, *init, *initial, *tr, *res = NULL;
  if (sh_parse_args("_variable_over", argc, argv, kw, "ref value initializer initial_value trainable |is_resource", &ref,
                    &value, &init, &initial, &tr, &res) < 0)
    return NULL;
  if (Py_TYPE(ref) != (PyTypeObject *)&tf_tensor_type || Py_TYPE(value) != (PyTypeObject *)&tf_tensor_type)
    return sh_raise(sh_TypeError, "_variable_over: ref and value must be tensors");
  return tf_variable_over(ref, value, init, initial, sh_truth(tr) > 0, res && sh_truth(res) > 0);
}

static const sh_method metagraph_funcs[] = {
  {"_metagraph_parse", f_metagraph_parse, "_metagraph_parse(data, what='MetaGraphDef')", "A binary MetaGraphDef's parts (internal)."},
  {"_metagraph_bytes", f_metagraph_bytes, "_metagraph_bytes(graph_def, saver_def, collections, info)", "A binary MetaGraphDef (internal)."},
  {"_variable_def_parse", f_variable_def_parse, "_variable_def_parse(data, what='VariableDef')", "A VariableDef's fields (internal)."},
  {"_variable_def_bytes", f_variable_def_bytes, "_variable_def_bytes(fields)", "A binary VariableDef (internal)."},
  {"_variable_over", f_variable_over, "_variable_over(ref, value, initializer, initial_value, trainable, is_resource=False)", "A Variable over existing nodes (internal)."},
  {NULL},
};

static const char metagraph_src[] =
#include "shell/tf/metagraph.py.inc"
    ;
#include "shell/tf/metagraph.frozen.h"   /* metagraph_frozen[]: generated, CMakeLists.txt */

int tf_metagraph_add(sh_obj *tf) {
  sh_module_add_funcs(tf, metagraph_funcs);
  return sh_exec_frozen(metagraph_frozen, sizeof metagraph_frozen, metagraph_src, "<tensorflow.metagraph>", sh_module_dict(tf));
}
