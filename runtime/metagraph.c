/* MetaGraphDefs and VariableDefs in TF's binary format, and the wire-format walk that says
 * where a damaged message breaks: runtime/metagraph.h. Messages from
 * runtime/proto/meta_graph.proto through protobuf-c. */
#include "runtime/metagraph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "runtime/proto/meta_graph.pb-c.h"

/* ---- where a message breaks -------------------------------------------------------------- */

enum { M_NONE, M_GRAPH = RT_PB_GRAPH_DEF, M_META = RT_PB_META_GRAPH_DEF, M_VARDEF = RT_PB_VARIABLE_DEF,
       M_NODE, M_ATTR_ENTRY, M_ATTR, M_LIST, M_VERSION, M_SHAPE, M_DIM, M_TENSOR, M_INFO, M_SAVER,
       M_COLL_ENTRY, M_COLL, M_COLL_LIST };
enum { W_VARINT = 0, W_I64 = 1, W_LEN = 2, W_I32 = 5, W_ANY = -1 };

typedef struct field_rule {
  unsigned char msg, field;
  signed char wire;
  unsigned char child;
} field_rule;

static const field_rule rules[] = {
  {M_GRAPH, 1, W_LEN, M_NODE}, {M_GRAPH, 2, W_LEN, 0}, {M_GRAPH, 3, W_VARINT, 0}, {M_GRAPH, 4, W_LEN, M_VERSION},
  {M_NODE, 1, W_LEN, 0}, {M_NODE, 2, W_LEN, 0}, {M_NODE, 3, W_LEN, 0}, {M_NODE, 4, W_LEN, 0}, {M_NODE, 5, W_LEN, M_ATTR_ENTRY},
  {M_ATTR_ENTRY, 1, W_LEN, 0}, {M_ATTR_ENTRY, 2, W_LEN, M_ATTR},
  {M_ATTR, 1, W_LEN, M_LIST}, {M_ATTR, 2, W_LEN, 0}, {M_ATTR, 3, W_VARINT, 0}, {M_ATTR, 4, W_I32, 0},
  {M_ATTR, 5, W_VARINT, 0}, {M_ATTR, 6, W_VARINT, 0}, {M_ATTR, 7, W_LEN, M_SHAPE}, {M_ATTR, 8, W_LEN, M_TENSOR},
  {M_ATTR, 9, W_LEN, 0}, {M_ATTR, 10, W_LEN, 0},
  {M_LIST, 2, W_LEN, 0}, {M_LIST, 7, W_LEN, M_SHAPE}, {M_LIST, 8, W_LEN, M_TENSOR}, {M_LIST, 9, W_LEN, 0},
  {M_VERSION, 1, W_VARINT, 0}, {M_VERSION, 2, W_VARINT, 0},
  {M_SHAPE, 2, W_LEN, M_DIM}, {M_SHAPE, 3, W_VARINT, 0}, {M_DIM, 1, W_VARINT, 0}, {M_DIM, 2, W_LEN, 0},
  {M_TENSOR, 1, W_VARINT, 0}, {M_TENSOR, 2, W_LEN, M_SHAPE}, {M_TENSOR, 4, W_LEN, 0}, {M_TENSOR, 8, W_LEN, 0},
  {M_META, 1, W_LEN, M_INFO}, {M_META, 2, W_LEN, M_GRAPH}, {M_META, 3, W_LEN, M_SAVER}, {M_META, 4, W_LEN, M_COLL_ENTRY},
  {M_INFO, 1, W_LEN, 0}, {M_INFO, 2, W_LEN, 0}, {M_INFO, 4, W_LEN, 0}, {M_INFO, 5, W_LEN, 0}, {M_INFO, 6, W_LEN, 0},
  {M_INFO, 7, W_VARINT, 0},
  {M_SAVER, 1, W_LEN, 0}, {M_SAVER, 2, W_LEN, 0}, {M_SAVER, 3, W_LEN, 0}, {M_SAVER, 4, W_VARINT, 0},
  {M_SAVER, 5, W_VARINT, 0}, {M_SAVER, 6, W_I32, 0}, {M_SAVER, 7, W_VARINT, 0},
  {M_COLL_ENTRY, 1, W_LEN, 0}, {M_COLL_ENTRY, 2, W_LEN, M_COLL},
  {M_COLL, 1, W_LEN, M_COLL_LIST}, {M_COLL, 2, W_LEN, M_COLL_LIST}, {M_COLL, 3, W_LEN, M_COLL_LIST}, {M_COLL, 4, W_LEN, M_COLL_LIST},
  {M_VARDEF, 1, W_LEN, 0}, {M_VARDEF, 2, W_LEN, 0}, {M_VARDEF, 3, W_LEN, 0}, {M_VARDEF, 5, W_VARINT, 0},
  {M_VARDEF, 6, W_LEN, 0}, {M_VARDEF, 7, W_VARINT, 0},
};

static const field_rule *rule_of(int msg, uint64_t field) {
  for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
    if (rules[i].msg == msg && rules[i].field == field) return &rules[i];
  return NULL;
}

static bool varint(const unsigned char *p, size_t n, size_t *at, uint64_t *v) {
  *v = 0;
  for (int s = 0; s < 70 && *at < n; s += 7) {
    unsigned char b = p[(*at)++];
    *v |= (uint64_t)(b & 0x7f) << (s < 64 ? s : 63);
    if (!(b & 0x80)) return true;
  }
  return false;
}

static bool walk(const unsigned char *p, size_t n, size_t base, int msg, int depth, size_t *off, const char **why) {
  size_t at = 0;
  while (at < n) {
    size_t start = at;
    uint64_t key, v;
    if (!varint(p, n, &at, &key)) return *off = base + start, *why = "a field's key runs past the end", true;
    int wire = (int)(key & 7);
    uint64_t field = key >> 3;
    if (field == 0 || field > 536870911u) return *off = base + start, *why = "a field numbered 0", true;
    const field_rule *r = rule_of(msg, field);
    if (r && r->wire != W_ANY && r->wire != wire && !(msg == M_COLL_LIST))
      return *off = base + start, *why = "a field of the wrong wire type", true;
    switch (wire) {
    case W_VARINT:
      if (!varint(p, n, &at, &v)) return *off = base + start, *why = "a number runs past the end", true;
      break;
    case W_I64:
    case W_I32: {
      size_t k = wire == W_I64 ? 8 : 4;
      if (n - at < k) return *off = base + start, *why = "a fixed-size value runs past the end", true;
      at += k;
      break;
    }
    case W_LEN:
      if (!varint(p, n, &at, &v)) return *off = base + start, *why = "a length runs past the end", true;
      if (v > n - at) return *off = base + start, *why = "a length past the end", true;
      if (r && r->child && depth < 64 && walk(p + at, (size_t)v, base + at, r->child, depth + 1, off, why)) return true;
      at += (size_t)v;
      break;
    default:
      return *off = base + start, *why = "an unknown wire type", true;
    }
  }
  return false;
}

bool rt_pb_check(const unsigned char *p, size_t n, rt_pb_msg m, size_t *off, const char **why) {
  return walk(p, n, 0, (int)m, 0, off, why);
}

int rt_pb_error(rt_status *st, const unsigned char *p, size_t n, rt_pb_msg m, const char *what, const char *kind) {
  size_t off = 0;
  const char *why = "";
  if (rt_pb_check(p, n, m, &off, &why))
    return rt_error(st, RT_DATA_LOSS, "%s: not a %s (damaged at offset %zu: %s)", what, kind, off, why);
  return rt_error(st, RT_DATA_LOSS, "%s: not a %s (its %zu bytes are well-formed protobuf, not this message: at offset 0)",
                  what, kind, n);
}

/* ---- MetaGraphDef -------------------------------------------------------------------------- */

static char *dup_bytes(const void *p, size_t n) {
  char *s = xmalloc(n + 1);
  if (n) memcpy(s, p, n);
  s[n] = '\0';
  return s;
}

int rt_metagraph_decode(const unsigned char *p, size_t n, const char *what, rt_metagraph *mg, rt_status *st) {
  memset(mg, 0, sizeof *mg);
  Tensorflow__MetaGraphDef *m = tensorflow__meta_graph_def__unpack(NULL, n, p);
  if (!m) return rt_pb_error(st, p, n, RT_PB_META_GRAPH_DEF, what, "MetaGraphDef");
  if (m->graph_def) {
    mg->graph_def_len = tensorflow__graph_def__get_packed_size(m->graph_def);
    mg->graph_def = xmalloc(mg->graph_def_len + 1);
    tensorflow__graph_def__pack(m->graph_def, mg->graph_def);
  }
  if (m->saver_def) {
    const Tensorflow__SaverDef *s = m->saver_def;
    mg->has_saver = true;
    mg->filename_tensor_name = xstrdup(s->filename_tensor_name);
    mg->save_tensor_name = xstrdup(s->save_tensor_name);
    mg->restore_op_name = xstrdup(s->restore_op_name);
    mg->max_to_keep = s->max_to_keep;
    mg->sharded = s->sharded;
    mg->keep_hours = s->keep_checkpoint_every_n_hours;
    mg->version = (int)s->version;
  }
  const Tensorflow__MetaGraphDef__MetaInfoDef *mi = m->meta_info_def;
  mg->meta_graph_version = xstrdup(mi ? mi->meta_graph_version : "");
  mg->tensorflow_version = xstrdup(mi ? mi->tensorflow_version : "");
  mg->stripped_default_attrs = mi && mi->stripped_default_attrs;
  if (mi && mi->n_tags) {
    mg->tags = xcalloc(mi->n_tags, sizeof *mg->tags);
    for (size_t i = 0; i < mi->n_tags; i++) mg->tags[mg->n_tags++] = xstrdup(mi->tags[i]);
  }
  mg->coll = xcalloc(m->n_collection_def + 1, sizeof *mg->coll);
  for (size_t i = 0; i < m->n_collection_def; i++) {
    const Tensorflow__CollectionEntry *e = m->collection_def[i];
    const Tensorflow__CollectionDef *cd = e->value;
    if (!cd) continue;
    rt_mg_collection *c = &mg->coll[mg->n_coll];
    size_t k = 0;
    switch (cd->kind_case) {
    case TENSORFLOW__COLLECTION_DEF__KIND_NODE_LIST:
      c->kind = RT_MG_NODES, k = cd->node_list->n_value;
      c->v = xcalloc(k + 1, sizeof *c->v), c->len = xcalloc(k + 1, sizeof *c->len);
      for (size_t j = 0; j < k; j++) c->v[j] = xstrdup(cd->node_list->value[j]), c->len[j] = strlen(c->v[j]);
      break;
    case TENSORFLOW__COLLECTION_DEF__KIND_BYTES_LIST:
      c->kind = RT_MG_BYTES, k = cd->bytes_list->n_value;
      c->v = xcalloc(k + 1, sizeof *c->v), c->len = xcalloc(k + 1, sizeof *c->len);
      for (size_t j = 0; j < k; j++)
        c->v[j] = dup_bytes(cd->bytes_list->value[j].data, cd->bytes_list->value[j].len), c->len[j] = cd->bytes_list->value[j].len;
      break;
    case TENSORFLOW__COLLECTION_DEF__KIND_INT64_LIST:
      c->kind = RT_MG_INT64, k = cd->int64_list->n_value;
      c->i = xcalloc(k + 1, sizeof *c->i);
      if (k) memcpy(c->i, cd->int64_list->value, k * sizeof *c->i);
      break;
    case TENSORFLOW__COLLECTION_DEF__KIND_FLOAT_LIST:
      c->kind = RT_MG_FLOAT, k = cd->float_list->n_value;
      c->f = xcalloc(k + 1, sizeof *c->f);
      for (size_t j = 0; j < k; j++) c->f[j] = cd->float_list->value[j];
      break;
    default: continue;   /* an empty CollectionDef */
    }
    c->key = xstrdup(e->key);
    c->n = (int)k;
    mg->n_coll++;
  }
  tensorflow__meta_graph_def__free_unpacked(m, NULL);
  return RT_OK;
}

/* The MetaGraphDef without its graph, then the GraphDef as field 2 (fields may come in
 * any order): the graph's bytes are not unpacked and packed again. */
int rt_metagraph_encode(const rt_metagraph *mg, unsigned char **out, size_t *n, rt_status *st) {
  Tensorflow__MetaGraphDef m;
  tensorflow__meta_graph_def__init(&m);
  Tensorflow__MetaGraphDef__MetaInfoDef mi;
  tensorflow__meta_graph_def__meta_info_def__init(&mi);
  mi.meta_graph_version = mg->meta_graph_version ? mg->meta_graph_version : "";
  mi.tensorflow_version = mg->tensorflow_version ? mg->tensorflow_version : "";
  mi.n_tags = (size_t)mg->n_tags;
  mi.tags = mg->tags;
  mi.stripped_default_attrs = mg->stripped_default_attrs;
  m.meta_info_def = &mi;
  Tensorflow__SaverDef sd;
  tensorflow__saver_def__init(&sd);
  if (mg->has_saver) {
    sd.filename_tensor_name = mg->filename_tensor_name ? mg->filename_tensor_name : "";
    sd.save_tensor_name = mg->save_tensor_name ? mg->save_tensor_name : "";
    sd.restore_op_name = mg->restore_op_name ? mg->restore_op_name : "";
    sd.max_to_keep = mg->max_to_keep;
    sd.sharded = mg->sharded;
    sd.keep_checkpoint_every_n_hours = (float)mg->keep_hours;
    sd.version = (Tensorflow__SaverDef__CheckpointFormatVersion)mg->version;
    m.saver_def = &sd;
  }
  size_t nc = (size_t)mg->n_coll;
  Tensorflow__CollectionEntry *ents = xcalloc(nc + 1, sizeof *ents), **eps = xcalloc(nc + 1, sizeof *eps);
  Tensorflow__CollectionDef *cds = xcalloc(nc + 1, sizeof *cds);
  Tensorflow__CollectionDef__NodeList *nls = xcalloc(nc + 1, sizeof *nls);
  Tensorflow__CollectionDef__BytesList *bls = xcalloc(nc + 1, sizeof *bls);
  Tensorflow__CollectionDef__Int64List *ils = xcalloc(nc + 1, sizeof *ils);
  Tensorflow__CollectionDef__FloatList *fls = xcalloc(nc + 1, sizeof *fls);
  ProtobufCBinaryData **bins = xcalloc(nc + 1, sizeof *bins);
  float **floats = xcalloc(nc + 1, sizeof *floats);
  for (size_t i = 0; i < nc; i++) {
    const rt_mg_collection *c = &mg->coll[i];
    tensorflow__collection_entry__init(&ents[i]);
    tensorflow__collection_def__init(&cds[i]);
    ents[i].key = c->key;
    ents[i].value = &cds[i];
    eps[i] = &ents[i];
    size_t k = (size_t)c->n;
    switch (c->kind) {
    case RT_MG_NODES:
      tensorflow__collection_def__node_list__init(&nls[i]);
      nls[i].n_value = k, nls[i].value = c->v;
      cds[i].kind_case = TENSORFLOW__COLLECTION_DEF__KIND_NODE_LIST, cds[i].node_list = &nls[i];
      break;
    case RT_MG_BYTES:
      tensorflow__collection_def__bytes_list__init(&bls[i]);
      bins[i] = xcalloc(k + 1, sizeof **bins);
      for (size_t j = 0; j < k; j++) bins[i][j].data = (uint8_t *)c->v[j], bins[i][j].len = c->len[j];
      bls[i].n_value = k, bls[i].value = bins[i];
      cds[i].kind_case = TENSORFLOW__COLLECTION_DEF__KIND_BYTES_LIST, cds[i].bytes_list = &bls[i];
      break;
    case RT_MG_INT64:
      tensorflow__collection_def__int64_list__init(&ils[i]);
      ils[i].n_value = k, ils[i].value = c->i;
      cds[i].kind_case = TENSORFLOW__COLLECTION_DEF__KIND_INT64_LIST, cds[i].int64_list = &ils[i];
      break;
    case RT_MG_FLOAT:
      tensorflow__collection_def__float_list__init(&fls[i]);
      floats[i] = xcalloc(k + 1, sizeof **floats);
      for (size_t j = 0; j < k; j++) floats[i][j] = (float)c->f[j];
      fls[i].n_value = k, fls[i].value = floats[i];
      cds[i].kind_case = TENSORFLOW__COLLECTION_DEF__KIND_FLOAT_LIST, cds[i].float_list = &fls[i];
      break;
    }
  }
  m.n_collection_def = nc;
  m.collection_def = eps;
  size_t head = tensorflow__meta_graph_def__get_packed_size(&m), g = mg->graph_def ? mg->graph_def_len : 0;
  size_t total = head + (mg->graph_def ? 1 + 10 + g : 0);
  unsigned char *b = malloc(total + 1);
  int rc = RT_OK;
  if (!b) {
    rc = rt_error(st, RT_RESOURCE_EXHAUSTED, "out of memory for a MetaGraphDef of %zu bytes", total);
  } else {
    size_t at = tensorflow__meta_graph_def__pack(&m, b);
    if (mg->graph_def) {
      b[at++] = (2 << 3) | 2;
      for (uint64_t v = g;; v >>= 7) {
        b[at++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        if (v <= 0x7f) break;
      }
      memcpy(b + at, mg->graph_def, g);
      at += g;
    }
    *out = b;
    *n = at;
  }
  for (size_t i = 0; i < nc; i++) free(bins[i]), free(floats[i]);
  free(ents), free(eps), free(cds), free(nls), free(bls), free(ils), free(fls), free(bins), free(floats);
  return rc;
}

void rt_metagraph_clear(rt_metagraph *mg) {
  free(mg->graph_def);
  free(mg->filename_tensor_name), free(mg->save_tensor_name), free(mg->restore_op_name);
  free(mg->meta_graph_version), free(mg->tensorflow_version);
  for (int i = 0; i < mg->n_tags; i++) free(mg->tags[i]);
  free(mg->tags);
  for (int i = 0; i < mg->n_coll; i++) {
    rt_mg_collection *c = &mg->coll[i];
    free(c->key);
    if (c->v)
      for (int j = 0; j < c->n; j++) free(c->v[j]);
    free(c->v), free(c->len), free(c->i), free(c->f);
  }
  free(mg->coll);
  memset(mg, 0, sizeof *mg);
}

/* ---- VariableDef ------------------------------------------------------------------------- */

int rt_variable_def_decode(const unsigned char *p, size_t n, const char *what, rt_variable_def *v, rt_status *st) {
  memset(v, 0, sizeof *v);
  Tensorflow__VariableDef *d = tensorflow__variable_def__unpack(NULL, n, p);
  if (!d) return rt_pb_error(st, p, n, RT_PB_VARIABLE_DEF, what, "VariableDef");
  v->variable_name = xstrdup(d->variable_name);
  v->initial_value_name = xstrdup(d->initial_value_name);
  v->initializer_name = xstrdup(d->initializer_name);
  v->snapshot_name = xstrdup(d->snapshot_name);
  v->is_resource = d->is_resource;
  v->trainable = d->trainable;
  tensorflow__variable_def__free_unpacked(d, NULL);
  return RT_OK;
}

int rt_variable_def_encode(const rt_variable_def *v, unsigned char **out, size_t *n, rt_status *st) {
  Tensorflow__VariableDef d;
  tensorflow__variable_def__init(&d);
  d.variable_name = v->variable_name ? v->variable_name : "";
  d.initial_value_name = v->initial_value_name ? v->initial_value_name : "";
  d.initializer_name = v->initializer_name ? v->initializer_name : "";
  d.snapshot_name = v->snapshot_name ? v->snapshot_name : "";
  d.is_resource = v->is_resource;
  d.trainable = v->trainable;
  size_t len = tensorflow__variable_def__get_packed_size(&d);
  unsigned char *b = xmalloc(len + 1);
  tensorflow__variable_def__pack(&d, b);
  *out = b;
  *n = len;
  return RT_OK;
}

void rt_variable_def_clear(rt_variable_def *v) {
  free(v->variable_name), free(v->initial_value_name), free(v->initializer_name), free(v->snapshot_name);
  memset(v, 0, sizeof *v);
}
