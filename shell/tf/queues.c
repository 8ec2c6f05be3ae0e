/* The input pipelines of TF1: queues (FIFOQueue, RandomShuffleQueue, PaddingFIFOQueue),
 * QueueRunner, Coordinator, start_queue_runners, tf.train.batch / shuffle_batch and the
 * input producers, written in Python (queues.py.inc) over the ops of ops/queue.c.
 * This file gives that Python a node builder for ops whose attrs are lists of types or
 * shapes, which the op rows of ops.c do not set. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "runtime/bundle.h"
#include "runtime/op.h"
#include "shell/tf/tf.h"

/* Lists of types, shapes or strings for tf_set_attr (ops.c), by the attr's kind. */
int tf_set_list_attr(rt_node *n, const rt_attr_sig *a, sh_obj *v, const char *op) {
  switch (a->kind) {
  case RT_ATTR_LIST_INT: case RT_ATTR_LIST_TYPE: case RT_ATTR_LIST_SHAPE: case RT_ATTR_LIST_STRING: {
    sh_obj *t = sh_sequence_to_tuple(v);
    if (!t) return -1;
    int cnt = (int)SH_TUPLE_N(t);
    if (a->kind == RT_ATTR_LIST_STRING) {
      const char **sv = xcalloc((size_t)cnt + 1, sizeof *sv);
      for (int i = 0; i < cnt; i++) {
        sh_obj *x = SH_TUPLE_ITEMS(t)[i];
        sv[i] = sh_is_bytes(x) ? sh_bytes_data(x) : sh_as_cstr(x);
        if (!sv[i]) { free(sv); sh_decref(t); return -1; }
      }
      rt_node_set_strings(n, a->name, cnt, sv);
      free(sv);
      sh_decref(t);
      return 0;
    }
    size_t es = a->kind == RT_ATTR_LIST_INT ? sizeof(int64_t) : a->kind == RT_ATTR_LIST_TYPE ? sizeof(rt_dtype) : sizeof(rt_shape);
    void *vals = xcalloc((size_t)cnt + 1, es);
    for (int i = 0; i < cnt; i++) {
      sh_obj *x = SH_TUPLE_ITEMS(t)[i];
      int bad = 0;
      if (a->kind == RT_ATTR_LIST_INT) bad = sh_as_int(x, (int64_t *)vals + i) < 0;
      else if (a->kind == RT_ATTR_LIST_SHAPE) bad = tf_shape_from_obj(x, (rt_shape *)vals + i) < 0;
      else if ((((rt_dtype *)vals)[i] = np_dtype_of(x)) == RT_INVALID) {
        sh_raise(sh_TypeError, "%s: attr %s must hold dtypes, not %s", op, a->name, sh_type_name(x));
        bad = 1;
      }
      if (bad) {
        free(vals);
        sh_decref(t);
        return -1;
      }
    }
    sh_decref(t);
    rt_attr_value av = {.kind = a->kind};
    av.list.n = cnt;
    av.list.v = vals;
    rt_node_set_attr(n, a->name, &av);   /* takes vals */
    return 0;
  }
  default:
    sh_raise(sh_TypeError, "%s: cannot set attr %s from Python", op, a->name);
    return -1;
  }
}

/* _qnode(op, inputs, attrs=None, name=None): the Operation (internal) */
static sh_obj *f_qnode(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *op, *inputs, *attrs = NULL, *name = NULL;
  if (sh_parse_args("_qnode", argc, argv, kw, "op inputs |attrs name", &op, &inputs, &attrs, &name) < 0) return NULL;
  const char *ops = sh_as_cstr(op);
  if (!ops) return NULL;
  const rt_op_sig *sig = rt_op_find(ops);
  if (!sig) return sh_raise(sh_NotImplementedError, "op %s is not available in this build", ops);
  rt_node *n = tf_node_begin(ops, name && name != SH_NONE ? name : NULL);
  sh_obj *k, *v;
  for (int64_t p = 0; attrs && attrs != SH_NONE && sh_dict_next(attrs, &p, &k, &v);) {
    const char *an = sh_as_cstr(k);
    const rt_attr_sig *a = NULL;
    for (int i = 0; an && i < sig->n_attrs && !a; i++)
      if (!strcmp(sig->attrs[i].name, an)) a = &sig->attrs[i];
    if (!a) {
      rt_node_free(n);
      return an ? sh_raise(sh_TypeError, "%s has no attr %s", ops, an) : NULL;
    }
    if (v != SH_NONE && tf_set_attr(n, a, v, ops) < 0) {
      rt_node_free(n);
      return NULL;
    }
  }
  sh_obj *tup = sh_sequence_to_tuple(inputs);
  if (!tup) {
    rt_node_free(n);
    return NULL;
  }
  const rt_attr_value *lt = rt_node_attr(n, "Tcomponents");
  for (int64_t i = 0; i < SH_TUPLE_N(tup); i++) {
    rt_dtype hint = RT_INVALID;
    if (i >= 1 && lt && lt->kind == RT_ATTR_LIST_TYPE && i - 1 < lt->list.n) hint = ((rt_dtype *)lt->list.v)[i - 1];
    if (i == 1 && !strncmp(ops, "QueueDequeue", 12)) hint = RT_INT32;
    if (tf_node_input(n, SH_TUPLE_ITEMS(tup)[i], hint) < 0) {
      sh_decref(tup);
      return NULL;
    }
  }
  sh_decref(tup);
  return tf_node_finish(n);
}

/* ---- TFRecord files ---------------------------------------------------------------------- */

static void put_le(unsigned char *p, uint64_t v, int n) {
  for (int i = 0; i < n; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* _tfrecord_append(path, records, truncate): write records (bytes) framed as TF does */
static sh_obj *f_tfrecord_append(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *path, *recs, *trunc;
  if (sh_parse_args("_tfrecord_append", argc, argv, kw, "path records truncate", &path, &recs, &trunc) < 0) return NULL;
  const char *p = sh_as_cstr(path);
  if (!p) return NULL;
  sh_obj *l = sh_sequence_to_list(recs);
  if (!l) return NULL;
  FILE *f = fopen(p, sh_truth(trunc) > 0 ? "wb" : "ab");
  if (!f) {
    sh_decref(l);
    return sh_raise(sh_OSError, "%s: %s", p, strerror(errno));
  }
  for (int64_t i = 0; i < SH_LIST_N(l); i++) {
    sh_obj *r = SH_LIST_ITEMS(l)[i];
    if (!sh_is_bytes(r)) {
      fclose(f);
      sh_decref(l);
      return sh_raise(sh_TypeError, "a TFRecord is bytes, not %s", sh_type_name(r));
    }
    unsigned char hdr[12], foot[4];
    uint64_t n = (uint64_t)sh_bytes_len(r);
    put_le(hdr, n, 8);
    put_le(hdr + 8, rt_crc32c_mask(rt_crc32c(hdr, 8)), 4);
    put_le(foot, rt_crc32c_mask(rt_crc32c(sh_bytes_data(r), (size_t)n)), 4);
    fwrite(hdr, 1, 12, f);
    fwrite(sh_bytes_data(r), 1, (size_t)n, f);
    fwrite(foot, 1, 4, f);
  }
  sh_decref(l);
  if (fclose(f) != 0) return sh_raise(sh_OSError, "%s: %s", p, strerror(errno));
  return sh_none();
}

static uint64_t get_le(const unsigned char *p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

/* _tfrecord_read(path): the records as a list of bytes, checksums checked */
static sh_obj *f_tfrecord_read(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *path;
  if (sh_parse_args("_tfrecord_read", argc, argv, kw, "path", &path) < 0) return NULL;
  const char *p = sh_as_cstr(path);
  if (!p) return NULL;
  FILE *f = fopen(p, "rb");
  if (!f) return sh_raise(sh_FileNotFoundError, "%s; %s", p, strerror(errno));
  sh_obj *out = sh_list_new(0);
  int64_t at = 0;
  for (;;) {
    unsigned char hdr[12], foot[4];
    size_t got = fread(hdr, 1, 12, f);
    if (got == 0) break;
    uint64_t n = got == 12 ? get_le(hdr, 8) : 0;
    if (got < 12 || rt_crc32c_mask(rt_crc32c(hdr, 8)) != (uint32_t)get_le(hdr + 8, 4) || n > ((uint64_t)1 << 40)) {
      fclose(f);
      sh_decref(out);
      return sh_raise(sh_OSError, "%s: corrupted record at %lld", p, (long long)at);
    }
    sh_obj *b = sh_bytes(NULL, (size_t)n);
    char *bs = b ? sh_bytes_data(b) : NULL;
    if (!b || fread(bs, 1, (size_t)n, f) != n || fread(foot, 1, 4, f) != 4 ||
        rt_crc32c_mask(rt_crc32c(bs, (size_t)n)) != (uint32_t)get_le(foot, 4)) {
      fclose(f);
      SH_DECREF(b);
      sh_decref(out);
      return sh_raise(sh_OSError, "%s: corrupted record at %lld", p, (long long)at);
    }
    sh_list_append_steal(out, b);
    at += 16 + (int64_t)n;
  }
  fclose(f);
  return out;
}

/* ---- tf.train.Example, written by hand (the wire format of example.proto) -------------- */

static void put_varint(sh_buf *b, uint64_t v) {
  while (v >= 128) {
    sh_buf_putc(b, (char)((v & 127) | 128));
    v >>= 7;
  }
  sh_buf_putc(b, (char)v);
}

static void put_len(sh_buf *b, int field, const char *p, size_t n) {
  put_varint(b, (uint64_t)field << 3 | 2);
  put_varint(b, n);
  sh_buf_put(b, p, n);
}

/* _example_encode([(name, kind 'b'|'f'|'i', values), ...]) -> bytes (internal) */
static sh_obj *f_example_encode(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *feats;
  if (sh_parse_args("_example_encode", argc, argv, kw, "features", &feats) < 0) return NULL;
  sh_obj *l = sh_sequence_to_list(feats);
  if (!l) return NULL;
  sh_buf all = {0};
  for (int64_t i = 0; i < SH_LIST_N(l); i++) {
    sh_obj *t = SH_LIST_ITEMS(l)[i];
    if (Py_TYPE(t) != (PyTypeObject *)&sh_tuple_type || SH_TUPLE_N(t) != 3) {
      sh_buf_free(&all);
      sh_decref(l);
      return sh_raise(sh_TypeError, "_example_encode: (name, kind, values) tuples");
    }
    const char *name = sh_as_cstr(SH_TUPLE_ITEMS(t)[0]), *kind = sh_as_cstr(SH_TUPLE_ITEMS(t)[1]);
    sh_obj *vals = name && kind ? sh_sequence_to_list(SH_TUPLE_ITEMS(t)[2]) : NULL;
    if (!vals) {
      sh_buf_free(&all);
      sh_decref(l);
      return NULL;
    }
    sh_buf list = {0}, packed = {0};
    for (int64_t k = 0; k < SH_LIST_N(vals); k++) {
      sh_obj *v = SH_LIST_ITEMS(vals)[k];
      int bad = 0;
      if (*kind == 'b') {
        if (sh_is_bytes(v)) put_len(&list, 1, sh_bytes_data(v), (size_t)sh_bytes_len(v));
        else if (sh_is_str(v)) put_len(&list, 1, sh_str_cstr(v), (size_t)sh_str_len(v));
        else bad = 1;
      } else if (*kind == 'f') {
        double d;
        if (sh_as_double(v, &d) < 0) bad = 1;
        float x = (float)d;
        sh_buf_put(&packed, (const char *)&x, 4);
      } else {
        int64_t x;
        if (sh_as_int(v, &x) < 0) bad = 1;
        put_varint(&packed, (uint64_t)x);
      }
      if (bad) {
        sh_buf_free(&list);
        sh_buf_free(&packed);
        sh_buf_free(&all);
        sh_decref(vals);
        sh_decref(l);
        if (!sh_err_occurred()) sh_raise(sh_TypeError, "%s has type %s, but expected one of: bytes", "value", sh_type_name(v));
        return NULL;
      }
    }
    sh_decref(vals);
    if (*kind != 'b' && packed.len) put_len(&list, 1, packed.data, packed.len);
    sh_buf feature = {0}, entry = {0};
    put_len(&feature, *kind == 'b' ? 1 : *kind == 'f' ? 2 : 3, list.data ? list.data : "", list.len);
    put_len(&entry, 1, name, strlen(name));
    put_len(&entry, 2, feature.data ? feature.data : "", feature.len);
    put_len(&all, 1, entry.data, entry.len);
    sh_buf_free(&list);
    sh_buf_free(&packed);
    sh_buf_free(&feature);
    sh_buf_free(&entry);
  }
  sh_decref(l);
  sh_buf ex = {0};
  if (all.len) put_len(&ex, 1, all.data, all.len);
  else sh_buf_put(&ex, "\x0a\x00", 2);   /* features present, empty */
  sh_obj *r = sh_bytes(ex.data ? ex.data : "", ex.len);
  sh_buf_free(&all);
  sh_buf_free(&ex);
  return r;
}

static const sh_method queue_funcs[] = {
  {"_example_encode", f_example_encode, "_example_encode(features)", "Serialize a tf.train.Example (internal)."},
  {"_tfrecord_append", f_tfrecord_append, "_tfrecord_append(path, records, truncate)", "Write TFRecord records (internal)."},
  {"_tfrecord_read", f_tfrecord_read, "_tfrecord_read(path)", "Read a TFRecord file's records (internal)."},
  {"_qnode", f_qnode, "_qnode(op, inputs, attrs=None, name=None)", "Build a queue, reader or parsing op (internal)."},
  {NULL},
};

static const char queues_src[] =
#include "shell/tf/queues.py.inc"
    ;
#include "shell/tf/queues.frozen.h"   /* queues_frozen[]: generated, CMakeLists.txt */

static const char strings_src[] =
#include "shell/tf/strings.py.inc"
    ;
#include "shell/tf/strings.frozen.h"   /* strings_frozen[]: generated, CMakeLists.txt */

static const char lookup_src[] =
#include "shell/tf/lookup.py.inc"
    ;
#include "shell/tf/lookup.frozen.h"   /* lookup_frozen[]: generated, CMakeLists.txt */

static const char image_src[] =
#include "shell/tf/image.py.inc"
    ;
#include "shell/tf/image.frozen.h"   /* image_frozen[]: generated, CMakeLists.txt */

static const char array_more_src[] =
#include "shell/tf/array_more.py.inc"
    ;
#include "shell/tf/array_more.frozen.h"   /* array_more_frozen[]: generated, CMakeLists.txt */

static const char space_src[] =
#include "shell/tf/space.py.inc"
    ;
#include "shell/tf/space.frozen.h"   /* space_frozen[]: generated, CMakeLists.txt */

static const char conv_more_src[] =
#include "shell/tf/conv_more.py.inc"
    ;
#include "shell/tf/conv_more.frozen.h"   /* conv_more_frozen[]: generated, CMakeLists.txt */

static const char pool_more_src[] =
#include "shell/tf/pool_more.py.inc"
    ;
#include "shell/tf/pool_more.frozen.h"   /* pool_more_frozen[]: generated, CMakeLists.txt */

static const char slim_src[] =
#include "shell/tf/slim.py.inc"
    ;
#include "shell/tf/slim.frozen.h"   /* slim_frozen[]: generated, CMakeLists.txt */

static const char conv3d_src[] =
#include "shell/tf/conv3d.py.inc"
    ;
#include "shell/tf/conv3d.frozen.h"   /* conv3d_frozen[]: generated, CMakeLists.txt */

static const char ctc_src[] =
#include "shell/tf/ctc.py.inc"
    ;
#include "shell/tf/ctc.frozen.h"   /* ctc_frozen[]: generated, CMakeLists.txt */

static const char contrib_more_src[] =
#include "shell/tf/contrib_more.py.inc"
    ;
#include "shell/tf/contrib_more.frozen.h"   /* contrib_more_frozen[]: generated, CMakeLists.txt */

static const char feature_column_src[] =
#include "shell/tf/feature_column.py.inc"
    ;
#include "shell/tf/feature_column.frozen.h"   /* feature_column_frozen[]: generated, CMakeLists.txt */

int tf_queues_add(sh_obj *tf) {
  sh_module_add_funcs(tf, queue_funcs);
  sh_obj *d = sh_module_dict(tf);
  if (sh_exec_frozen(queues_frozen, sizeof queues_frozen, queues_src, "<tensorflow.queues>", d) < 0) return -1;
  if (sh_exec_frozen(strings_frozen, sizeof strings_frozen, strings_src, "<tensorflow.strings>", d) < 0) return -1;
  if (sh_exec_frozen(lookup_frozen, sizeof lookup_frozen, lookup_src, "<tensorflow.lookup>", d) < 0) return -1;
  if (sh_exec_frozen(image_frozen, sizeof image_frozen, image_src, "<tensorflow.image>", d) < 0) return -1;
  if (sh_exec_frozen(array_more_frozen, sizeof array_more_frozen, array_more_src, "<tensorflow.array_more>", d) < 0)
    return -1;
  if (sh_exec_frozen(space_frozen, sizeof space_frozen, space_src, "<tensorflow.space>", d) < 0) return -1;
  if (sh_exec_frozen(conv_more_frozen, sizeof conv_more_frozen, conv_more_src, "<tensorflow.conv_more>", d) < 0)
    return -1;
  if (sh_exec_frozen(pool_more_frozen, sizeof pool_more_frozen, pool_more_src, "<tensorflow.pool_more>", d) < 0)
    return -1;
  if (sh_exec_frozen(slim_frozen, sizeof slim_frozen, slim_src, "<tensorflow.slim>", d) < 0) return -1;
  if (sh_exec_frozen(conv3d_frozen, sizeof conv3d_frozen, conv3d_src, "<tensorflow.conv3d>", d) < 0) return -1;
  if (sh_exec_frozen(ctc_frozen, sizeof ctc_frozen, ctc_src, "<tensorflow.ctc>", d) < 0) return -1;
  if (sh_exec_frozen(contrib_more_frozen, sizeof contrib_more_frozen, contrib_more_src, "<tensorflow.contrib_more>",
                     d) < 0)
    return -1;
  return sh_exec_frozen(feature_column_frozen, sizeof feature_column_frozen, feature_column_src,
                        "<tensorflow.feature_column>", d);
}
