/* tf.DType (tf.float32, tf.float32_ref, ...) and the dtype table: each row is a runtime
 * dtype with its numpy type and its tf name. tf dtypes compare equal to each other, to
 * numpy dtypes and types, and to names, as TF1's DType.__eq__ (as_dtype(other)) does. */
#define PY_SSIZE_T_CLEAN
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL tfsh_ARRAY_API
#define NO_IMPORT_ARRAY
#include "shell/np/np_impl.h"

#include <numpy/arrayobject.h>
#include <numpy/arrayscalars.h>
#include <string.h>

/* ---- the table ------------------------------------------------------------------------ */

#define ROW(t, npy, name) \
  {t, npy, {PyObject_HEAD_INIT(&tf_dtype_type) t, name, false}, {PyObject_HEAD_INIT(&tf_dtype_type) t, name "_ref", true}}
static struct row {
  rt_dtype t;
  int npy;                /* numpy's type number; -1: none */
  sh_dtype tf, ref;
} rows[] = {
  ROW(RT_FLOAT, NPY_FLOAT, "float32"),     ROW(RT_DOUBLE, NPY_DOUBLE, "float64"),
  ROW(RT_INT32, NPY_INT32, "int32"),       ROW(RT_INT64, NPY_INT64, "int64"),
  ROW(RT_UINT8, NPY_UINT8, "uint8"),       ROW(RT_BOOL, NPY_BOOL, "bool"),
  ROW(RT_STRING, NPY_OBJECT, "string"),    ROW(RT_RESOURCE, NPY_OBJECT, "resource"),
  ROW(RT_INT16, NPY_INT16, "int16"),       ROW(RT_INT8, NPY_INT8, "int8"),
  ROW(RT_UINT16, NPY_UINT16, "uint16"),    ROW(RT_HALF, NPY_HALF, "float16"),
  ROW(RT_BFLOAT16, -1, "bfloat16"),        ROW(RT_COMPLEX64, NPY_CFLOAT, "complex64"),
};
#undef ROW
enum { N_ROWS = sizeof rows / sizeof *rows };
static PyObject *descrs[N_ROWS];   /* numpy's dtype per row (NULL: none), from np_dtype_init */

static const struct row *row_of(rt_dtype t) {
  for (int i = 0; i < N_ROWS; i++)
    if (rows[i].t == t) return &rows[i];
  return NULL;
}

int np_typenum(rt_dtype t) {
  const struct row *r = row_of(t);
  return r ? r->npy : -1;
}

const sh_dtype *tf_dtype_nth(int i) { return i >= 0 && i < N_ROWS ? &rows[i].tf : NULL; }

PyObject *tf_dtype_obj(rt_dtype t) {
  const struct row *r = row_of(t);
  return r ? (PyObject *)&r->tf : Py_None;
}

PyObject *tf_ref_dtype_obj(rt_dtype t) {
  const struct row *r = row_of(t);
  return r ? (PyObject *)&r->ref : Py_None;
}

PyObject *np_dtype_obj(rt_dtype t) {
  const struct row *r = row_of(t);
  return r && descrs[r - rows] ? descrs[r - rows] : Py_None;
}

/* ---- what names a dtype ------------------------------------------------------------------ */

rt_dtype np_dtype_of_descr(PyObject *o) {
  PyArray_Descr *d = (PyArray_Descr *)o;
  int n = d->elsize;
  switch (d->kind) {
  case 'f': return n == 2 ? RT_HALF : n == 4 ? RT_FLOAT : n == 8 ? RT_DOUBLE : RT_INVALID;
  case 'i': return n == 1 ? RT_INT8 : n == 2 ? RT_INT16 : n == 4 ? RT_INT32 : n == 8 ? RT_INT64 : RT_INVALID;
  case 'u': return n == 1 ? RT_UINT8 : n == 2 ? RT_UINT16 : RT_INVALID;
  case 'b': return RT_BOOL;
  case 'c': return n == 8 ? RT_COMPLEX64 : RT_INVALID;
  case 'U': case 'S': case 'O': return RT_STRING;
  default: return RT_INVALID;
  }
}

static rt_dtype of_name(PyObject *o) {
  static const struct { const char *name; rt_dtype t; } aliases[] = {
    {"float", RT_FLOAT}, {"double", RT_DOUBLE}, {"half", RT_HALF}, {"int", RT_INT64},
    {"str", RT_STRING}, {"bytes", RT_STRING}, {"bool_", RT_BOOL},
  };
  const char *s = PyUnicode_AsUTF8(o);
  if (!s) return PyErr_Clear(), RT_INVALID;
  for (int i = 0; i < N_ROWS; i++)
    if (!strcmp(rows[i].tf.name, s)) return rows[i].t;
  for (size_t i = 0; i < sizeof aliases / sizeof *aliases; i++)
    if (!strcmp(aliases[i].name, s)) return aliases[i].t;
  PyArray_Descr *d = NULL;   /* numpy's own spellings: "f4", "<i8", "U5", "S", "O" */
  if (!PyArray_DescrConverter(o, &d)) return PyErr_Clear(), RT_INVALID;
  rt_dtype t = np_dtype_of_descr((PyObject *)d);
  Py_DECREF(d);
  return t;
}

rt_dtype np_dtype_of(PyObject *o) {
  if (!o || o == Py_None) return RT_INVALID;
  if (PyObject_TypeCheck(o, &tf_dtype_type)) return ((sh_dtype *)o)->t;
  if (PyArray_DescrCheck(o)) return np_dtype_of_descr(o);
  if (PyUnicode_Check(o)) return of_name(o);
  if (!PyType_Check(o)) return RT_INVALID;
  if (o == (PyObject *)&PyFloat_Type) return RT_DOUBLE;
  if (o == (PyObject *)&PyBool_Type) return RT_BOOL;
  if (o == (PyObject *)&PyLong_Type) return RT_INT64;
  if (o == (PyObject *)&PyUnicode_Type || o == (PyObject *)&PyBytes_Type || o == (PyObject *)&PyBaseObject_Type)
    return RT_STRING;
  if (!PyType_IsSubtype((PyTypeObject *)o, &PyGenericArrType_Type)) return RT_INVALID;
  PyArray_Descr *d = PyArray_DescrFromTypeObject(o);   /* np.float32, np.bool_, np.str_ */
  if (!d) return PyErr_Clear(), RT_INVALID;
  rt_dtype t = np_dtype_of_descr((PyObject *)d);
  Py_DECREF(d);
  return t;
}

/* ---- tf.DType ----------------------------------------------------------------------------- */

bool np_is_float(rt_dtype t) { return t == RT_FLOAT || t == RT_DOUBLE || t == RT_HALF || t == RT_BFLOAT16; }
static bool is_unsigned(rt_dtype t) { return t == RT_UINT8 || t == RT_UINT16; }
bool np_is_int(rt_dtype t) {
  return t == RT_INT8 || t == RT_INT16 || t == RT_INT32 || t == RT_INT64 || is_unsigned(t);
}
#define is_float np_is_float
#define is_int np_is_int

#define SELF ((sh_dtype *)self)
static PyObject *incref(PyObject *o) { return Py_INCREF(o), o; }

static PyObject *dt_repr(PyObject *self) { return PyUnicode_FromFormat("tf.%s", SELF->name); }
/* str(tf.float32) is TF1's "<dtype: 'float32'>" (print shows it); repr is tf.float32. */
static PyObject *dt_str(PyObject *self) { return PyUnicode_FromFormat("<dtype: '%s'>", SELF->name); }
/* as TF: the DataType number; a ref type's is 100 more (DT_FLOAT_REF = 101) */
static Py_hash_t dt_hash(PyObject *self) { return (Py_hash_t)SELF->t + (SELF->ref ? 100 : 0); }

static PyObject *dt_compare(PyObject *self, PyObject *other, int op) {
  if (op != Py_EQ && op != Py_NE) Py_RETURN_NOTIMPLEMENTED;
  rt_dtype y = np_dtype_of(other);
  /* as in TF 1.x, float32_ref is not float32 (its base_dtype is). other is read as a DType
   * only once it named one (at -O3 gcc otherwise follows np_dtype_of's None into the read) */
  bool eq = y != RT_INVALID && y == SELF->t &&
            (PyObject_TypeCheck(other, &tf_dtype_type) && ((sh_dtype *)other)->ref) == SELF->ref;
  return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

/* DType(enum): the dtype of a DataType number, as TF's constructor. */
static PyObject *dt_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  int e;
  static char *kwlist[] = {"type_enum", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kw, "i:DType", kwlist, &e)) return NULL;
  const struct row *r = e != RT_INVALID ? row_of((rt_dtype)e) : NULL;
  if (!r) return PyErr_Format(PyExc_TypeError, "types_pb2.DataType %d is not a DType tfsh supports", e);
  return incref((PyObject *)&r->tf);
}

static PyObject *g_name(PyObject *self, void *c) { return PyUnicode_FromString(SELF->name); }
static PyObject *g_enum(PyObject *self, void *c) { return PyLong_FromLong(SELF->t); }
static PyObject *g_base(PyObject *self, void *c) { return incref(tf_dtype_obj(SELF->t)); }
static PyObject *g_real(PyObject *self, void *c) {
  return incref(tf_dtype_obj(SELF->t == RT_COMPLEX64 ? RT_FLOAT : SELF->t));
}
static PyObject *g_is_ref(PyObject *self, void *c) { return PyBool_FromLong(SELF->ref); }
static PyObject *g_as_ref(PyObject *self, void *c) { return incref(tf_ref_dtype_obj(SELF->t)); }
static PyObject *g_floating(PyObject *self, void *c) { return PyBool_FromLong(is_float(SELF->t)); }
static PyObject *g_integer(PyObject *self, void *c) { return PyBool_FromLong(is_int(SELF->t)); }
static PyObject *g_unsigned(PyObject *self, void *c) { return PyBool_FromLong(is_unsigned(SELF->t)); }
static PyObject *g_bool(PyObject *self, void *c) { return PyBool_FromLong(SELF->t == RT_BOOL); }
static PyObject *g_complex(PyObject *self, void *c) { return PyBool_FromLong(SELF->t == RT_COMPLEX64); }
static PyObject *g_quantized(PyObject *self, void *c) { Py_RETURN_FALSE; }
static PyObject *g_np_compat(PyObject *self, void *c) {
  return PyBool_FromLong(SELF->t != RT_RESOURCE && SELF->t != RT_BFLOAT16);
}

/* as_numpy_dtype: the numpy scalar type (np.float32); object for strings, as TF gives. */
static PyObject *g_numpy(PyObject *self, void *c) {
  if (rt_dtype_is_str(SELF->t)) return incref((PyObject *)&PyBaseObject_Type);
  PyObject *d = np_dtype_obj(SELF->t);
  return incref(d == Py_None ? d : (PyObject *)((PyArray_Descr *)d)->typeobj);
}

static PyObject *g_size(PyObject *self, void *c) {   /* TF: numpy's itemsize; 1 for resources */
  PyObject *d = np_dtype_obj(SELF->t);
  if (SELF->t == RT_RESOURCE) return PyLong_FromLong(1);
  return PyLong_FromLong(d == Py_None ? (long)rt_dtype_size(SELF->t) : ((PyArray_Descr *)d)->elsize);
}

/* min and max as TF finds them: np.finfo / np.iinfo of the numpy type; bools False, True. */
static PyObject *limit(PyObject *self, const char *which) {
  rt_dtype t = SELF->t;
  if (t == RT_BOOL) return PyBool_FromLong(which[1] == 'a');
  if (!(is_float(t) || is_int(t)) || t == RT_BFLOAT16)
    return PyErr_Format(PyExc_TypeError, "Cannot find %s value of %s.", which[1] == 'a' ? "maximum" : "minimum", SELF->name);
  PyObject *info = PyObject_CallMethod(np_module_numpy(), is_float(t) ? "finfo" : "iinfo", "O",
                                       ((PyArray_Descr *)np_dtype_obj(t))->typeobj);
  if (!info) return NULL;
  PyObject *r = PyObject_GetAttrString(info, which);
  Py_DECREF(info);
  return r;
}
static PyObject *g_min(PyObject *self, void *c) { return limit(self, "min"); }
static PyObject *g_max(PyObject *self, void *c) { return limit(self, "max"); }
static PyObject *g_limits(PyObject *self, void *c) {
  PyObject *lo = limit(self, "min"), *hi = lo ? limit(self, "max") : NULL;
  PyObject *r = hi ? PyTuple_Pack(2, lo, hi) : NULL;
  Py_XDECREF(lo);
  Py_XDECREF(hi);
  return r;
}

/* is_compatible_with(other): TF's rule, other's type or its base type is self's. */
static PyObject *m_compatible(PyObject *self, PyObject *other) {
  rt_dtype y = np_dtype_of(other);
  if (y == RT_INVALID) return PyErr_Format(PyExc_TypeError, "Cannot convert %R to a dtype.", other);
  bool oref = PyObject_TypeCheck(other, &tf_dtype_type) && ((sh_dtype *)other)->ref;
  return PyBool_FromLong(y == SELF->t && (!SELF->ref || oref));
}

static PyGetSetDef dt_getset[] = {
  {"name", g_name, NULL, NULL, NULL},
  {"as_datatype_enum", g_enum, NULL, NULL, NULL},
  {"_type_enum", g_enum, NULL, NULL, NULL},
  {"_enum", g_enum, NULL, NULL, NULL},
  {"base_dtype", g_base, NULL, NULL, NULL},
  {"real_dtype", g_real, NULL, NULL, NULL},
  {"_is_ref_dtype", g_is_ref, NULL, NULL, NULL},
  {"_as_ref", g_as_ref, NULL, NULL, NULL},
  {"as_numpy_dtype", g_numpy, NULL, NULL, NULL},
  {"is_floating", g_floating, NULL, NULL, NULL},
  {"is_integer", g_integer, NULL, NULL, NULL},
  {"is_unsigned", g_unsigned, NULL, NULL, NULL},
  {"is_bool", g_bool, NULL, NULL, NULL},
  {"is_complex", g_complex, NULL, NULL, NULL},
  {"is_quantized", g_quantized, NULL, NULL, NULL},
  {"is_numpy_compatible", g_np_compat, NULL, NULL, NULL},
  {"size", g_size, NULL, NULL, NULL},
  {"min", g_min, NULL, NULL, NULL},
  {"max", g_max, NULL, NULL, NULL},
  {"limits", g_limits, NULL, NULL, NULL},
  {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef dt_methods[] = {
  {"is_compatible_with", m_compatible, METH_O, "Whether a value of dtype other may be used where self is expected."},
  {NULL, NULL, 0, NULL},
};

PyTypeObject tf_dtype_type = {
  PyVarObject_HEAD_INIT(NULL, 0)
  .tp_name = "tensorflow.python.framework.dtypes.DType",
  .tp_basicsize = sizeof(sh_dtype),
  .tp_flags = Py_TPFLAGS_DEFAULT,
  .tp_doc = "A TensorFlow dtype: tf.float32, tf.int64, tf.string, ...",
  .tp_repr = dt_repr,
  .tp_str = dt_str,
  .tp_hash = dt_hash,
  .tp_richcompare = dt_compare,
  .tp_getset = dt_getset,
  .tp_methods = dt_methods,
  .tp_new = dt_new,
};

int np_dtype_init(void) {
  if (PyType_Ready(&tf_dtype_type) < 0) return -1;
  for (int i = 0; i < N_ROWS; i++)
    if (rows[i].npy >= 0 && !descrs[i] && !(descrs[i] = (PyObject *)PyArray_DescrFromType(rows[i].npy))) return -1;
  return 0;
}
