/* Protocol-buffer messages as Python objects, for any message in runtime/proto/
 * (runtime/pbmsg.h finds them by name): what tf.train.summary_iterator yields (Event with
 * .wall_time, .step, .summary.value[i].tag ...), tf.Event / tf.Summary built by hand,
 * RunMetadata serialized for an event file, and google.protobuf.text_format (Merge, Parse,
 * MessageToString) on them and on tf.GraphDef. The Python side is pbobj.py.inc.
 *
 * A message object keeps the fields that are set in a dict; an unset field reads as its
 * default (0, "", [], or an empty message of its type), as in protobuf's Python API.
 * Encoding walks the descriptor and takes each field from a message object, a dict, or
 * any object's attributes (the views' StepStats records), so records written in the
 * language serialize without a converter of their own. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "runtime/pbmsg.h"
#include "runtime/records.h"
#include "shell/py/lang.h"
#include "shell/tf/tf.h"

typedef struct pb_obj {
  sh_obj head;
  const ProtobufCMessageDescriptor *d;
  sh_obj *vals;   /* field name -> value, the fields that are set */
} pb_obj;

static sh_type pb_type;

static sh_obj *pb_new_obj(const ProtobufCMessageDescriptor *d) {
  pb_obj *o = sh_new(&pb_type);
  o->d = d;
  o->vals = sh_dict_new();
  return (sh_obj *)o;
}

static const ProtobufCMessageDescriptor *desc_arg(sh_obj *o) {
  const char *name = sh_as_cstr(o);
  if (!name) return NULL;
  const ProtobufCMessageDescriptor *d = rt_pb_find(name);
  if (!d) sh_raise(sh_ValueError, "no message type named %s", name);
  return d;
}

/* ---- protobuf-c message -> objects ----------------------------------------------------- */

static sh_obj *from_msg(const ProtobufCMessage *m);

static sh_obj *scalar_obj(const ProtobufCFieldDescriptor *f, const void *v) {
  switch (f->type) {
  case PROTOBUF_C_TYPE_INT32: case PROTOBUF_C_TYPE_SINT32: case PROTOBUF_C_TYPE_SFIXED32:
  case PROTOBUF_C_TYPE_ENUM:
    return sh_int(*(const int32_t *)v);
  case PROTOBUF_C_TYPE_UINT32: case PROTOBUF_C_TYPE_FIXED32: return sh_int(*(const uint32_t *)v);
  case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64: case PROTOBUF_C_TYPE_SFIXED64:
    return sh_int(*(const int64_t *)v);
  case PROTOBUF_C_TYPE_UINT64: case PROTOBUF_C_TYPE_FIXED64: return sh_int((int64_t)*(const uint64_t *)v);
  case PROTOBUF_C_TYPE_FLOAT: return sh_float(*(const float *)v);
  case PROTOBUF_C_TYPE_DOUBLE: return sh_float(*(const double *)v);
  case PROTOBUF_C_TYPE_BOOL: return sh_bool(*(const protobuf_c_boolean *)v);
  case PROTOBUF_C_TYPE_STRING: {
    const char *s = *(char *const *)v;
    return sh_str(s ? s : "");
  }
  case PROTOBUF_C_TYPE_BYTES: {
    const ProtobufCBinaryData *b = v;
    return sh_bytes(b->data ? (const char *)b->data : "", b->len);
  }
  case PROTOBUF_C_TYPE_MESSAGE: return from_msg(*(ProtobufCMessage *const *)v);
  }
  return sh_none();
}

static sh_obj *from_msg(const ProtobufCMessage *m) {
  pb_obj *o = (pb_obj *)pb_new_obj(m->descriptor);
  const char *base = (const char *)m;
  for (unsigned i = 0; i < m->descriptor->n_fields; i++) {
    const ProtobufCFieldDescriptor *f = &m->descriptor->fields[i];
    sh_obj *v;
    if (f->label == PROTOBUF_C_LABEL_REPEATED) {
      size_t n = *(const size_t *)(base + f->quantifier_offset);
      if (!n) continue;
      const char *arr = *(char *const *)(base + f->offset);
      v = sh_list_new(0);
      for (size_t k = 0; k < n; k++) sh_list_append_steal(v, scalar_obj(f, arr + k * rt_pb_elem_size(f->type)));
    } else if (rt_pb_present(m, f)) {
      v = scalar_obj(f, base + f->offset);
    } else {
      continue;
    }
    sh_dict_set_str(o->vals, f->name, v);
    sh_decref(v);
  }
  return (sh_obj *)o;
}

/* Unpack bytes as d into a message object; what names the bytes in the error. */
static sh_obj *decode(const ProtobufCMessageDescriptor *d, const void *p, size_t n, const char *what) {
  ProtobufCMessage *m = protobuf_c_message_unpack(d, NULL, n, p);
  if (!m) {
    rt_status st = {0};
    rt_error(&st, RT_DATA_LOSS, "%s: not a valid %s (%zu bytes)", what, d->name, n);
    return tf_raise_status(&st);
  }
  sh_obj *r = from_msg(m);
  protobuf_c_message_free_unpacked(m, NULL);
  return r;
}

/* ---- objects -> protobuf-c message ------------------------------------------------------- */

static ProtobufCMessage *to_msg(const ProtobufCMessageDescriptor *d, sh_obj *o, int depth);

/* Bytes of a str, a bytes object, or a one-element numpy string array. */
bool tf_bytes_of(sh_obj *o, const char **p, size_t *n) {
  if (sh_is_str(o)) {
    *p = sh_str_cstr(o);
    *n = (size_t)sh_str_len(o);
    return true;
  }
  if (sh_is_bytes(o)) {
    *p = sh_bytes_data(o);
    *n = (size_t)sh_bytes_len(o);
    return true;
  }
  if (np_check(o)) {   /* a 1-element array of bytes: its element, held until the next call */
    static sh_obj *last;
    sh_obj *size = sh_getattr_opt(o, "size");
    bool one = size && sh_is_int(size) && sh_int_value(size) == 1;
    sh_decref(size);
    sh_obj *e = one ? sh_call_method(o, "item", 0, NULL, NULL) : NULL;
    if (!e) PyErr_Clear();
    if (e && sh_is_bytes(e)) {
      sh_decref(last);
      last = e;
      *p = sh_bytes_data(e);
      *n = (size_t)sh_bytes_len(e);
      return true;
    }
    sh_decref(e);
  }
  return false;
}

static int put_value(ProtobufCMessage *m, const ProtobufCFieldDescriptor *f, sh_obj *v, int depth) {
  if (f->type == PROTOBUF_C_TYPE_STRING || f->type == PROTOBUF_C_TYPE_BYTES) {
    const char *p;
    size_t n;
    if (!tf_bytes_of(v, &p, &n)) {
      sh_raise(sh_TypeError, "%s.%s: expected bytes or str, got %s", m->descriptor->name, f->name, sh_type_name(v));
      return -1;
    }
    rt_pb_set_bytes(m, f, p, n);
    return 0;
  }
  if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
    ProtobufCMessage *sub = to_msg(f->descriptor, v, depth + 1);
    if (!sub) return -1;
    ProtobufCMessage **slot = rt_pb_slot(m, f);
    if (*slot) protobuf_c_message_free_unpacked(*slot, NULL);
    *slot = sub;
    return 0;
  }
  union {
    int32_t i32;
    uint32_t u32;
    int64_t i64;
    float f;
    double d;
    protobuf_c_boolean b;
  } val = {0};
  if (f->type == PROTOBUF_C_TYPE_ENUM) {
    sh_obj *e = sh_getattr_opt(v, "as_datatype_enum");   /* a tf.DType */
    int64_t iv = 0;
    if (e) {
      int rc = sh_as_int(e, &iv);
      sh_decref(e);
      if (rc < 0) return -1;
    } else if (sh_is_str(v)) {
      const ProtobufCEnumValue *ev = protobuf_c_enum_descriptor_get_value_by_name(f->descriptor, sh_str_cstr(v));
      if (!ev) {
        sh_raise(sh_ValueError, "%s.%s: no enum value named %s", m->descriptor->name, f->name, sh_str_cstr(v));
        return -1;
      }
      iv = ev->value;
    } else if (sh_as_int(v, &iv) < 0) {
      return -1;
    }
    val.i32 = (int32_t)iv;
  } else if (f->type == PROTOBUF_C_TYPE_BOOL) {
    int t = sh_truth(v);
    if (t < 0) return -1;
    val.b = t;
  } else if (f->type == PROTOBUF_C_TYPE_FLOAT || f->type == PROTOBUF_C_TYPE_DOUBLE) {
    sh_obj *num = sh_as_number(v);
    double dv;
    int rc = num ? sh_as_double(num, &dv) : -1;
    sh_decref(num);
    if (rc < 0) {
      if (!sh_err_occurred())
        sh_raise(sh_TypeError, "%s.%s: expected a number, got %s", m->descriptor->name, f->name, sh_type_name(v));
      return -1;
    }
    if (f->type == PROTOBUF_C_TYPE_FLOAT) val.f = (float)dv;
    else val.d = dv;
  } else {
    sh_obj *num = sh_as_number(v);
    int64_t iv;
    int rc = num ? sh_as_int(num, &iv) : -1;
    sh_decref(num);
    if (rc < 0) {
      if (!sh_err_occurred())
        sh_raise(sh_TypeError, "%s.%s: expected an int, got %s", m->descriptor->name, f->name, sh_type_name(v));
      return -1;
    }
    if (rt_pb_elem_size(f->type) == 4) val.i32 = (int32_t)iv;
    else val.i64 = iv;
  }
  memcpy(rt_pb_slot(m, f), &val, rt_pb_elem_size(f->type));
  return 0;
}

/* A field's value from a message object, a dict, or an attribute (NULL: not there). */
static sh_obj *field_of(sh_obj *o, const char *name) {
  if (Py_TYPE(o) == (PyTypeObject *)&pb_type) {
    sh_obj *v = sh_dict_get_str(((pb_obj *)o)->vals, name);
    return v ? sh_incref(v) : NULL;
  }
  if (Py_TYPE(o) == (PyTypeObject *)&sh_dict_type) {
    sh_obj *v = sh_dict_get_str(o, name);
    return v ? sh_incref(v) : NULL;
  }
  return sh_getattr_opt(o, name);
}

static ProtobufCMessage *to_msg(const ProtobufCMessageDescriptor *d, sh_obj *o, int depth) {
  if (depth > 100) {
    sh_raise(sh_ValueError, "%s: messages nested more than 100 deep", d->name);
    return NULL;
  }
  const char *bp;
  size_t bn;
  if (tf_bytes_of(o, &bp, &bn)) {   /* already serialized */
    ProtobufCMessage *m = protobuf_c_message_unpack(d, NULL, bn, (const uint8_t *)bp);
    if (!m) sh_raise(sh_ValueError, "not a valid %s (%zu bytes)", d->name, bn);
    return m;
  }
  if (depth > 0 && Py_TYPE(o) != (PyTypeObject *)&pb_type && Py_TYPE(o) != (PyTypeObject *)&sh_dict_type) {
    /* a message of another kind (tf.GraphDef) inside this one: its own bytes (not at the
     * top, where a SerializeToString written with _pb_encode would call itself) */
    sh_obj *ser = sh_getattr_opt(o, "SerializeToString");
    if (ser) {
      sh_obj *b = sh_call(ser, 0, NULL, NULL);
      sh_decref(ser);
      if (!b) return NULL;
      const char *p;
      size_t n;
      ProtobufCMessage *m = tf_bytes_of(b, &p, &n) ? protobuf_c_message_unpack(d, NULL, n, (const uint8_t *)p) : NULL;
      sh_decref(b);
      if (!m) sh_raise(sh_ValueError, "%s: SerializeToString gave no valid %s", sh_type_name(o), d->name);
      return m;
    }
  }
  ProtobufCMessage *m = rt_pb_new(d);
  for (unsigned i = 0; i < d->n_fields; i++) {
    const ProtobufCFieldDescriptor *f = &d->fields[i];
    sh_obj *v = field_of(o, f->name);
    if (!v) continue;
    int rc = 0;
    if (v == SH_NONE) {
    } else if (f->label == PROTOBUF_C_LABEL_REPEATED) {
      sh_obj *it = sh_iter(v);
      if (!it) rc = -1;
      for (sh_obj *x; !rc && (x = sh_next(it));) {
        rc = put_value(m, f, x, depth);
        sh_decref(x);
      }
      if (!rc && sh_err_occurred()) rc = -1;
      sh_decref(it);
    } else {
      rc = put_value(m, f, v, depth);
    }
    sh_decref(v);
    if (rc) {
      protobuf_c_message_free_unpacked(m, NULL);
      return NULL;
    }
  }
  return m;
}

/* A message in protobuf's binary format: bytes, as protobuf's Python gives. */
static sh_obj *packed(ProtobufCMessage *m) {
  size_t n = protobuf_c_message_get_packed_size(m);
  unsigned char *buf = xmalloc(n ? n : 1);
  protobuf_c_message_pack(m, buf);
  sh_obj *r = sh_bytes((const char *)buf, n);
  free(buf);
  return r;
}

/* ---- the message type ----------------------------------------------------------------- */

static void pb_destroy(sh_obj *self) { sh_decref(((pb_obj *)self)->vals); }

static sh_obj *default_of(const ProtobufCFieldDescriptor *f) {
  if (f->label == PROTOBUF_C_LABEL_REPEATED) return sh_list_new(0);
  switch (f->type) {
  case PROTOBUF_C_TYPE_FLOAT: case PROTOBUF_C_TYPE_DOUBLE: return sh_float(0.0);
  case PROTOBUF_C_TYPE_BOOL: return sh_bool(false);
  case PROTOBUF_C_TYPE_STRING: return sh_str("");
  case PROTOBUF_C_TYPE_BYTES: return sh_bytes("", 0);
  case PROTOBUF_C_TYPE_MESSAGE: return pb_new_obj(f->descriptor);
  default: return sh_int(0);
  }
}

static sh_obj *pb_getattr(sh_obj *self, const char *name) {
  pb_obj *o = (pb_obj *)self;
  const ProtobufCFieldDescriptor *f = rt_pb_field(o->d, name);
  if (!f) return NULL;
  sh_obj *v = sh_dict_get_str(o->vals, name);
  if (v) return sh_incref(v);
  v = default_of(f);
  /* a repeated field or a message read once stays: value.append(...) / x.y.z = 1 reach it */
  if (f->label == PROTOBUF_C_LABEL_REPEATED || f->type == PROTOBUF_C_TYPE_MESSAGE) sh_dict_set_str(o->vals, name, v);
  return v;
}

static int pb_setattr(sh_obj *self, const char *name, sh_obj *value) {
  pb_obj *o = (pb_obj *)self;
  const ProtobufCFieldDescriptor *f = rt_pb_field(o->d, name);
  if (!f) {
    sh_raise(sh_AttributeError, "%s has no field named %s", o->d->name, name);
    return -1;
  }
  if (f->label == PROTOBUF_C_LABEL_REPEATED) {
    sh_obj *l = sh_sequence_to_list(value);
    if (!l) return -1;
    sh_dict_set_str(o->vals, name, l);
    sh_decref(l);
    return 0;
  }
  if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)   /* the other members of its oneof go */
    for (unsigned i = 0; i < o->d->n_fields; i++) {
      const ProtobufCFieldDescriptor *g = &o->d->fields[i];
      if (g != f && (g->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) && g->quantifier_offset == f->quantifier_offset) {
        sh_obj *k = sh_str(g->name);
        sh_dict_del(o->vals, k);
        sh_decref(k);
      }
    }
  return sh_dict_set_str(o->vals, name, value);
}

/* m in protobuf's text format, as a str; m is freed. */
static sh_obj *text_of(ProtobufCMessage *m) {
  bytes_buf b = {0};
  rt_pb_text_print(m, 0, &b);
  protobuf_c_message_free_unpacked(m, NULL);
  sh_obj *r = sh_strn(b.p ? (const char *)b.p : "", b.n);
  free(b.p);
  return r;
}

static sh_obj *pb_text(sh_obj *self) {
  ProtobufCMessage *m = to_msg(((pb_obj *)self)->d, self, 0);
  return m ? text_of(m) : NULL;
}

static sh_obj *m_serialize(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  if (sh_parse_args("SerializeToString", argc, argv, kw, "|deterministic", &(sh_obj *){NULL}) < 0) return NULL;
  ProtobufCMessage *m = to_msg(((pb_obj *)self)->d, self, 0);
  if (!m) return NULL;
  sh_obj *r = packed(m);
  protobuf_c_message_free_unpacked(m, NULL);
  return r;
}

static sh_obj *merge_bytes(pb_obj *o, sh_obj *data, bool clear) {
  const char *p;
  size_t n;
  if (!tf_bytes_of(data, &p, &n)) return sh_raise(sh_TypeError, "expected bytes, got %s", sh_type_name(data));
  sh_obj *fresh = decode(o->d, p, n, o->d->name);
  if (!fresh) return NULL;
  if (clear) {
    sh_decref(o->vals);
    o->vals = sh_dict_new();
  }
  sh_obj *k, *v;
  for (int64_t pos = 0; sh_dict_next(((pb_obj *)fresh)->vals, &pos, &k, &v);) {
    sh_obj *old = sh_dict_get(o->vals, k);
    if (old && Py_TYPE(old) == (PyTypeObject *)&sh_list_type && Py_TYPE(v) == (PyTypeObject *)&sh_list_type) {
      for (int64_t i = 0; i < SH_LIST_N(v); i++) sh_list_append(old, SH_LIST_ITEMS(v)[i]);
    } else {
      sh_dict_set(o->vals, k, v);
    }
  }
  sh_decref(fresh);
  return sh_int((int64_t)n);
}

static sh_obj *m_parse(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *data;
  if (sh_parse_args("ParseFromString", argc, argv, kw, "data", &data) < 0) return NULL;
  return merge_bytes((pb_obj *)self, data, true);
}

static sh_obj *m_merge(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *data;
  if (sh_parse_args("MergeFromString", argc, argv, kw, "data", &data) < 0) return NULL;
  return merge_bytes((pb_obj *)self, data, false);
}

static sh_obj *m_hasfield(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *name;
  if (sh_parse_args("HasField", argc, argv, kw, "field_name", &name) < 0) return NULL;
  const char *s = sh_as_cstr(name);
  if (!s) return NULL;
  pb_obj *o = (pb_obj *)self;
  const ProtobufCFieldDescriptor *f = rt_pb_field(o->d, s);
  if (!f || f->label == PROTOBUF_C_LABEL_REPEATED)
    return sh_raise(sh_ValueError, "Protocol message %s has no singular \"%s\" field.", o->d->short_name, s);
  sh_obj *v = sh_dict_get_str(o->vals, s);
  if (v && f->type == PROTOBUF_C_TYPE_MESSAGE && Py_TYPE(v) == (PyTypeObject *)&pb_type && !sh_dict_len(((pb_obj *)v)->vals))
    return sh_bool(false);   /* only read, never set */
  return sh_bool(v != NULL);
}

/* WhichOneof(name): the set member of the message's oneof (tfsh's messages have one each). */
static sh_obj *m_whichoneof(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *name;
  if (sh_parse_args("WhichOneof", argc, argv, kw, "oneof_group", &name) < 0) return NULL;
  pb_obj *o = (pb_obj *)self;
  for (unsigned i = 0; i < o->d->n_fields; i++) {
    const ProtobufCFieldDescriptor *f = &o->d->fields[i];
    sh_obj *v = (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) ? sh_dict_get_str(o->vals, f->name) : NULL;
    if (v && !(f->type == PROTOBUF_C_TYPE_MESSAGE && Py_TYPE(v) == (PyTypeObject *)&pb_type && !sh_dict_len(((pb_obj *)v)->vals)))
      return sh_str(f->name);
  }
  return sh_none();
}

static sh_obj *m_listfields(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  pb_obj *o = (pb_obj *)self;
  sh_obj *out = sh_list_new(0);
  for (unsigned i = 0; i < o->d->n_fields; i++) {
    sh_obj *v = sh_dict_get_str(o->vals, o->d->fields[i].name);
    if (v) sh_list_append_steal(out, sh_tuple_of(2, sh_str(o->d->fields[i].name), sh_incref(v)));
  }
  return out;
}

static sh_obj *m_clear(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  pb_obj *o = (pb_obj *)self;
  sh_decref(o->vals);
  o->vals = sh_dict_new();
  return sh_none();
}

static sh_obj *m_copyfrom(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *other;
  if (sh_parse_args("CopyFrom", argc, argv, kw, "other", &other) < 0) return NULL;
  ProtobufCMessage *m = to_msg(((pb_obj *)self)->d, other, 0);
  if (!m) return NULL;
  sh_obj *fresh = from_msg(m);
  protobuf_c_message_free_unpacked(m, NULL);
  sh_decref(((pb_obj *)self)->vals);
  ((pb_obj *)self)->vals = sh_incref(((pb_obj *)fresh)->vals);
  sh_decref(fresh);
  return sh_none();
}

static sh_obj *pb_repr(sh_obj *self) { return pb_text(self); }

static sh_obj *pb_compare(int op, sh_obj *a, sh_obj *b) {
  if ((op != SH_EQ && op != SH_NE) || Py_TYPE(a) != (PyTypeObject *)&pb_type || Py_TYPE(b) != (PyTypeObject *)&pb_type) return sh_incref(SH_NOTIMPL);
  sh_obj *x = m_serialize(a, 0, NULL, NULL), *y = x ? m_serialize(b, 0, NULL, NULL) : NULL;
  if (!y) {
    sh_decref(x);
    return NULL;
  }
  bool same = ((pb_obj *)a)->d == ((pb_obj *)b)->d && sh_str_len(x) == sh_str_len(y) &&
              !memcmp(sh_str_cstr(x), sh_str_cstr(y), (size_t)sh_str_len(x));
  sh_decref(x);
  sh_decref(y);
  return sh_bool(op == SH_EQ ? same : !same);
}

static const sh_method pb_methods[] = {
  {"SerializeToString", m_serialize, "SerializeToString()", "The message in protobuf's binary format."},
  {"ParseFromString", m_parse, "ParseFromString(data)", "Replace the fields with those of a binary message."},
  {"MergeFromString", m_merge, "MergeFromString(data)", "Merge a binary message's fields into this one."},
  {"HasField", m_hasfield, "HasField(field_name)", "Whether a singular field is set."},
  {"WhichOneof", m_whichoneof, "WhichOneof(oneof_group)", "The name of the oneof member that is set, or None."},
  {"ListFields", m_listfields, "ListFields()", "[(name, value)] of the fields that are set."},
  {"Clear", m_clear, "Clear()", "Unset every field."},
  {"CopyFrom", m_copyfrom, "CopyFrom(other)", "Replace the fields with a copy of other's."},
  {NULL},
};

static sh_type pb_type = {SH_TYPE_HEAD, .name = "Message", .size = sizeof(pb_obj),
                          .help = "A protocol-buffer message (fields as attributes).", .methods = pb_methods,
                          .destroy = pb_destroy, .repr = pb_repr, .getattr = pb_getattr, .setattr = pb_setattr,
                          .compare = pb_compare};

/* ---- module functions -------------------------------------------------------------------- */

/* _pb_new(type, **fields) -> a message object */
static sh_obj *f_pb_new(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  if (argc != 1) return sh_raise(sh_TypeError, "_pb_new(type, **fields)");
  const ProtobufCMessageDescriptor *d = desc_arg(argv[0]);
  if (!d) return NULL;
  sh_obj *o = pb_new_obj(d), *k, *v;
  for (int64_t pos = 0; kw && sh_dict_next(kw, &pos, &k, &v);) {
    if (v == SH_NONE) continue;
    if (pb_setattr(o, sh_str_cstr(k), v) < 0) {
      sh_decref(o);
      return NULL;
    }
  }
  return o;
}

/* The arguments (type, data, what=None) of the functions below: the type's descriptor,
 * the data's bytes, what (NULL when not given). 0, or -1 with an exception. */
static int typed_bytes_args(const char *fname, int argc, sh_obj **argv, sh_obj *kw, const ProtobufCMessageDescriptor **d,
                            const char **p, size_t *n, const char **what) {
  sh_obj *t, *data, *w = NULL;
  if (sh_parse_args(fname, argc, argv, kw, "type data |what", &t, &data, &w) < 0 || !(*d = desc_arg(t))) return -1;
  if (!tf_bytes_of(data, p, n)) {
    sh_raise(sh_TypeError, "%s: expected bytes or str, got %s", fname, sh_type_name(data));
    return -1;
  }
  *what = w && w != SH_NONE ? sh_as_cstr(w) : NULL;
  return w && w != SH_NONE && !*what ? -1 : 0;
}

/* _pb_decode(type, data, what=None) -> a message object */
static sh_obj *f_pb_decode(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  const ProtobufCMessageDescriptor *d;
  const char *p, *w;
  size_t n;
  if (typed_bytes_args("_pb_decode", argc, argv, kw, &d, &p, &n, &w) < 0) return NULL;
  return decode(d, p, n, w ? w : d->name);
}

/* _pb_encode(type, obj) -> bytes: obj a message object, a dict, or any object's attributes */
static sh_obj *f_pb_encode(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *t, *obj;
  if (sh_parse_args("_pb_encode", argc, argv, kw, "type obj", &t, &obj) < 0) return NULL;
  const ProtobufCMessageDescriptor *d = desc_arg(t);
  if (!d) return NULL;
  ProtobufCMessage *m = to_msg(d, obj, 0);
  if (!m) return NULL;
  sh_obj *r = packed(m);
  protobuf_c_message_free_unpacked(m, NULL);
  return r;
}

/* _pb_text_parse(type, text, what=None) -> the binary message (errors: LINE:COL). */
static sh_obj *f_pb_text_parse(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  const ProtobufCMessageDescriptor *d;
  const char *p, *w;
  size_t n;
  if (typed_bytes_args("_pb_text_parse", argc, argv, kw, &d, &p, &n, &w) < 0) return NULL;
  rt_status st = {0};
  ProtobufCMessage *m;
  if (rt_pb_text_parse(d, p, n, w, &m, &st)) return tf_raise_status(&st);
  sh_obj *r = packed(m);
  protobuf_c_message_free_unpacked(m, NULL);
  return r;
}

/* _pb_looks_text(data) -> whether data looks like text format rather than binary */
static sh_obj *f_pb_looks_text(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *data;
  const char *p;
  size_t n;
  if (sh_parse_args("_pb_looks_text", argc, argv, kw, "data", &data) < 0) return NULL;
  if (!tf_bytes_arg(data, &p, &n)) return NULL;
  return sh_bool(rt_pb_looks_text(p, n));
}

/* _pb_text_format(type, data) -> a binary message in text format */
static sh_obj *f_pb_text_format(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  const ProtobufCMessageDescriptor *d;
  const char *p, *w;
  size_t n;
  if (typed_bytes_args("_pb_text_format", argc, argv, kw, &d, &p, &n, &w) < 0) return NULL;
  ProtobufCMessage *m = protobuf_c_message_unpack(d, NULL, n, (const uint8_t *)p);
  if (!m) return sh_raise(sh_ValueError, "%s: not a valid %s (%zu bytes)", w ? w : "text_format", d->name, n);
  return text_of(m);
}

/* _records_read(path) -> ([(offset, bytes)], error message or None): the records of a
 * TFRecord file up to the first damaged one, and what was wrong with it. */
static sh_obj *f_records_read(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *po;
  if (sh_parse_args("_records_read", argc, argv, kw, "path", &po) < 0) return NULL;
  const char *path = sh_as_cstr(po);
  if (!path) return NULL;
  FILE *f = fopen(path, "rb");
  if (!f) {
    rt_status st = {0};
    rt_error(&st, errno == ENOENT ? RT_NOT_FOUND : RT_UNKNOWN, "%s: %s", path, strerror(errno));
    return tf_raise_status(&st);
  }
  unsigned char *buf = NULL;
  size_t n = 0, cap = 0;
  for (;;) {
    if (n == cap) buf = xrealloc(buf, cap = cap ? 2 * cap : 65536);
    size_t got = fread(buf + n, 1, cap - n, f);
    if (!got) break;
    n += got;
  }
  fclose(f);
  sh_obj *recs = sh_list_new(0), *err = NULL;
  size_t off = 0;
  for (;;) {
    const unsigned char *d;
    size_t len;
    size_t at = off;
    rt_status st = {0};
    int rc = rt_record_next(buf, n, &off, path, &d, &len, &st);
    if (rc == 0) break;
    if (rc < 0) {
      err = sh_str(st.msg);
      break;
    }
    sh_list_append_steal(recs, sh_tuple_of(2, sh_int((int64_t)at), sh_bytes((const char *)d, len)));
  }
  free(buf);
  return sh_tuple_of(2, recs, err ? err : sh_none());
}

static const sh_method pbobj_funcs[] = {
  {"_pb_new", f_pb_new, "_pb_new(type, **fields)", "A protocol-buffer message of a type by name (internal)."},
  {"_pb_decode", f_pb_decode, "_pb_decode(type, data, what=None)", "Parse a binary message (internal)."},
  {"_pb_encode", f_pb_encode, "_pb_encode(type, obj)", "Serialize a message, dict or record (internal)."},
  {"_pb_text_parse", f_pb_text_parse, "_pb_text_parse(type, text, what=None)", "Text format to binary (internal)."},
  {"_pb_looks_text", f_pb_looks_text, "_pb_looks_text(data)", "Text format rather than binary? (internal)"},
  {"_pb_text_format", f_pb_text_format, "_pb_text_format(type, data)", "Binary to text format (internal)."},
  {"_records_read", f_records_read, "_records_read(path)", "The records of a TFRecord file (internal)."},
  {NULL},
};

static const char pbobj_src[] =
#include "shell/tf/pbobj.py.inc"
    ;
#include "shell/tf/pbobj.frozen.h"   /* pbobj_frozen[]: generated, CMakeLists.txt */

int tf_pbobj_add(sh_obj *tf) {
  sh_module_add_funcs(tf, pbobj_funcs);
  return sh_exec_frozen(pbobj_frozen, sizeof pbobj_frozen, pbobj_src, "<tensorflow.pbobj>", sh_module_dict(tf));
}

/* google.protobuf.text_format: built in the tensorflow module (_text_format_module). */
static sh_obj *text_format_init(void) {
  sh_obj *tf = sh_import("tensorflow");
  if (!tf) return NULL;
  sh_obj *m = sh_getattr(tf, "_text_format_module");
  sh_decref(tf);
  return m;
}
static sh_obj *google_init(void) { return sh_module_new("google"); }
static sh_obj *google_protobuf_init(void) { return sh_module_new("google.protobuf"); }

void tf_pbobj_register_modules(void) {
  sh_register_module("google", google_init);
  sh_register_module("google.protobuf", google_protobuf_init);
  sh_register_module("google.protobuf.text_format", text_format_init);
}
