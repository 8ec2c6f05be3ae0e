/* The dtype objects of numpy (np.float32: an np.dtype, callable as a scalar constructor) and
 * of tf (tf.float32: a tf.DType), made from one table: each row is a runtime dtype with its
 * numpy name and its tf name. Both kinds compare equal to each other, to "float32" and to
 * Python's float/int/bool/str where numpy does. */
#include <string.h>

#include "shell/np/np.h"

static sh_obj *dtype_compare(int op, sh_obj *a, sh_obj *b) {
  if (op != SH_EQ && op != SH_NE) return SH_NOTIMPL;
  rt_dtype x = np_dtype_of(a), y = np_dtype_of(b);
  /* as in TF 1.x, float32_ref is not float32 (its base_dtype is) */
  bool ra = a->type == &tf_dtype_type && ((sh_dtype *)a)->ref, rb = b->type == &tf_dtype_type && ((sh_dtype *)b)->ref;
  bool eq = x != RT_INVALID && x == y && ra == rb;
  return sh_bool(op == SH_EQ ? eq : !eq);
}

static int dtype_hash(sh_obj *self, int64_t *out) {
  *out = ((sh_dtype *)self)->t;
  return 0;
}

/* ---- numpy: np.dtype ----------------------------------------------------------------- */

static sh_obj *np_dtype_repr(sh_obj *self) {
  return sh_strf("dtype('%s')", ((sh_dtype *)self)->name);
}

static sh_obj *np_dtype_str(sh_obj *self) { return sh_str(((sh_dtype *)self)->name); }

static sh_obj *np_dtype_getattr(sh_obj *self, const char *name) {
  sh_dtype *d = (sh_dtype *)self;
  if (!strcmp(name, "name") || !strcmp(name, "__name__")) return sh_str(d->name);
  /* np.float32 is both the dtype and the scalar type here: dtype.type is itself */
  if (!strcmp(name, "type")) return sh_incref(self);
  if (!strcmp(name, "itemsize")) return sh_int((int64_t)rt_dtype_size(d->t));
  if (!strcmp(name, "kind"))
    return sh_str(rt_dtype_is_float(d->t) ? "f" : d->t == RT_UINT8 ? "u" : rt_dtype_is_int(d->t) ? "i"
                  : d->t == RT_BOOL ? "b" : d->t == RT_STRING ? "S" : "O");
  return NULL;
}

/* isinstance(x, np.float32): np.float32 stands for numpy's scalar type too. */
static sh_obj *np_dtype_instancecheck(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *x;
  if (sh_parse_args("__instancecheck__", argc, argv, kw, "instance", &x) < 0) return NULL;
  return sh_bool(np_is_scalar(x) && ((np_array *)x)->t->dtype == ((sh_dtype *)self)->t);
}

static sh_obj *np_dtype_subclasscheck(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *c;
  if (sh_parse_args("__subclasscheck__", argc, argv, kw, "subclass", &c) < 0) return NULL;
  sh_type *st = np_scalar_type_of(((sh_dtype *)self)->t);
  return sh_bool(st && c == (sh_obj *)st);
}

static const sh_method np_dtype_methods[] = {
  {"__instancecheck__", np_dtype_instancecheck, "__instancecheck__(instance)", "isinstance(x, np.float32)"},
  {"__subclasscheck__", np_dtype_subclasscheck, "__subclasscheck__(subclass)", "issubclass(type(x), np.float32)"},
  {NULL},
};

sh_type np_dtype_type = {
  SH_TYPE_HEAD, .name = "dtype", .size = sizeof(sh_dtype), .help = "A numpy scalar type.",
  .repr = np_dtype_repr, .str = np_dtype_str, .getattr = np_dtype_getattr, .methods = np_dtype_methods,
  .call = np_scalar_ctor, .compare = dtype_compare,
};

/* ---- tf: tf.DType -------------------------------------------------------------------- */

static sh_obj *tf_dtype_repr(sh_obj *self) { return sh_strf("tf.%s", ((sh_dtype *)self)->name); }
/* str(tf.float32) is TF1's "<dtype: 'float32'>" (print shows it); repr is tf.float32. */
static sh_obj *tf_dtype_str(sh_obj *self) { return sh_strf("<dtype: '%s'>", ((sh_dtype *)self)->name); }

static sh_obj *tf_dtype_getattr(sh_obj *self, const char *name) {
  sh_dtype *d = (sh_dtype *)self;
  if (!strcmp(name, "name")) return sh_str(d->name);
  if (!strcmp(name, "_enum") || !strcmp(name, "as_datatype_enum")) return sh_int(d->t);
  if (!strcmp(name, "base_dtype") || !strcmp(name, "real_dtype")) return sh_incref(tf_dtype_obj(d->t));
  if (!strcmp(name, "_is_ref_dtype")) return sh_bool(d->ref);
  if (!strcmp(name, "_as_ref")) return sh_incref(tf_ref_dtype_obj(d->t));
  if (!strcmp(name, "as_numpy_dtype")) return sh_incref(np_dtype_obj(d->t));
  if (!strcmp(name, "is_floating")) return sh_bool(rt_dtype_is_float(d->t));
  if (!strcmp(name, "is_integer")) return sh_bool(rt_dtype_is_int(d->t));
  if (!strcmp(name, "is_bool")) return sh_bool(d->t == RT_BOOL);
  if (!strcmp(name, "size")) return sh_int((int64_t)rt_dtype_size(d->t));
  if (!strcmp(name, "max") || !strcmp(name, "min")) {   /* the largest and smallest values */
    bool mx = name[1] == 'a';
    switch (d->t) {
    case RT_FLOAT: return sh_float(mx ? 3.4028234663852886e38 : -3.4028234663852886e38);
    case RT_DOUBLE: return sh_float(mx ? 1.7976931348623157e308 : -1.7976931348623157e308);
    case RT_INT32: return sh_int(mx ? INT32_MAX : INT32_MIN);
    case RT_INT64: return sh_int(mx ? INT64_MAX : INT64_MIN);
    case RT_UINT8: return sh_int(mx ? 255 : 0);
    case RT_BOOL: return sh_bool(mx);
    default: return sh_raise(sh_TypeError, "Cannot find %s value of %s.", mx ? "maximum" : "minimum", d->name);
    }
  }
  return NULL;
}

sh_type tf_dtype_type = {
  SH_TYPE_HEAD, .name = "DType", .size = sizeof(sh_dtype), .help = "A TensorFlow dtype.",
  .repr = tf_dtype_repr, .str = tf_dtype_str, .getattr = tf_dtype_getattr,
  .compare = dtype_compare, .hash = dtype_hash,
};

/* ---- the table ----------------------------------------------------------------------- */

#define ROW(t, np_name, tf_name) \
  {{SH_OBJ_HEAD(&np_dtype_type), t, np_name, false}, {SH_OBJ_HEAD(&tf_dtype_type), t, tf_name, false}, \
   {SH_OBJ_HEAD(&tf_dtype_type), t, tf_name "_ref", true}}
static struct { sh_dtype np, tf, ref; } dtypes[] = {
  ROW(RT_FLOAT, "float32", "float32"),
  ROW(RT_DOUBLE, "float64", "float64"),
  ROW(RT_INT32, "int32", "int32"),
  ROW(RT_INT64, "int64", "int64"),
  ROW(RT_UINT8, "uint8", "uint8"),
  ROW(RT_BOOL, "bool", "bool"),     /* np.bool_ too (np.c) */
  ROW(RT_STRING, "bytes_", "string"),
  ROW(RT_RESOURCE, "resource", "resource"),   /* tf.resource: handles (numpy has no such type) */
};
#undef ROW
enum { N_DTYPES = sizeof dtypes / sizeof *dtypes };

const sh_dtype *np_dtype_nth(int i) { return i >= 0 && i < N_DTYPES ? &dtypes[i].np : NULL; }
const sh_dtype *tf_dtype_nth(int i) { return i >= 0 && i < N_DTYPES ? &dtypes[i].tf : NULL; }

sh_obj *np_dtype_obj(rt_dtype t) {
  for (int i = 0; i < N_DTYPES; i++)
    if (dtypes[i].np.t == t) return (sh_obj *)&dtypes[i].np;
  return SH_NONE;
}

sh_obj *tf_dtype_obj(rt_dtype t) {
  for (int i = 0; i < N_DTYPES; i++)
    if (dtypes[i].tf.t == t) return (sh_obj *)&dtypes[i].tf;
  return SH_NONE;
}

sh_obj *tf_ref_dtype_obj(rt_dtype t) {
  for (int i = 0; i < N_DTYPES; i++)
    if (dtypes[i].ref.t == t) return (sh_obj *)&dtypes[i].ref;
  return SH_NONE;
}

rt_dtype np_dtype_of(sh_obj *o) {
  if (!o || o == SH_NONE) return RT_INVALID;
  if (o->type == &np_dtype_type || o->type == &tf_dtype_type || o->type == &np_sdtype_type) return ((sh_dtype *)o)->t;
  if (sh_is_str(o)) {
    rt_dtype t;
    return rt_dtype_from_name(sh_str_cstr(o), &t) ? t : RT_INVALID;
  }
  static const rt_dtype scalar_dtypes[NP_N_SCALAR_TYPES] = {RT_FLOAT, RT_DOUBLE, RT_INT32, RT_INT64, RT_BOOL,
                                                                RT_UINT8};
  for (int i = 0; i < NP_N_SCALAR_TYPES; i++)   /* type(x) of a numpy scalar: numpy.float32 */
    if (o == (sh_obj *)&np_scalar_type[i]) return scalar_dtypes[i];
  if (o == (sh_obj *)&sh_float_type) return RT_DOUBLE;
  if (o == (sh_obj *)&sh_int_type) return RT_INT64;
  if (o == (sh_obj *)&sh_bool_type) return RT_BOOL;
  if (o == (sh_obj *)&sh_str_type || o == (sh_obj *)&sh_bytes_type) return RT_STRING;
  return RT_INVALID;
}
