/* TensorFlow's own files, seen from the tf module: checkpoints (tf.train.NewCheckpointReader,
 * list_variables, load_variable) through runtime/bundle.c; GraphDefs in TF's binary format
 * (as_graph_def().SerializeToString(), write_graph(as_text=False), GraphDef.ParseFromString,
 * tf.import_graph_def) through runtime/graphdef.c. The Python side is files.py.inc. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "runtime/bundle.h"
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

static const sh_method files_funcs[] = {
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
