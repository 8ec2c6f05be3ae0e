/* numpy arrays <-> runtime tensors. Python values become tensors as TF1's
 * make_tensor_proto converts them (or as np.asarray does, for feeds); tensors become
 * ndarrays viewing their buffer. Strings are object arrays of bytes, as TF fetches them. */
#define PY_SSIZE_T_CLEAN
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL tfsh_ARRAY_API
#include "shell/np/np_impl.h"

#include <numpy/arrayobject.h>
#include <numpy/arrayscalars.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"

static PyObject *numpy_mod;

int np_init(void) {
  if (numpy_mod) return 0;
  if (_import_array() < 0) return -1;
  PyObject *m = PyImport_ImportModule("numpy");
  if (!m) return -1;
  if (np_dtype_init() < 0) return Py_DECREF(m), -1;
  numpy_mod = m;
  return 0;
}

PyObject *np_module_numpy(void) { return numpy_mod; }

bool np_check(PyObject *o) { return PyArray_Check(o) || PyArray_IsScalar(o, Generic); }

int64_t np_array_numel(PyObject *o) { return PyArray_Check(o) ? (int64_t)PyArray_SIZE((PyArrayObject *)o) : -1; }

/* ---- helpers ------------------------------------------------------------------------------ */

static int shape_of(PyArrayObject *a, rt_shape *s) {
  int nd = PyArray_NDIM(a);
  if (nd > RT_MAX_DIMS) {
    PyErr_Format(PyExc_ValueError, "tfsh tensors have at most %d dimensions; this array has %d", RT_MAX_DIMS, nd);
    return -1;
  }
  s->ndims = nd;
  for (int i = 0; i < nd; i++) s->dims[i] = PyArray_DIM(a, i);
  return 0;
}

static rt_tensor *new_tensor(rt_dtype t, const rt_shape *s) {
  rt_tensor *x = rt_tensor_new_uninit(t, s);
  if (!x) PyErr_NoMemory();
  return x;
}

/* An ndarray over x's data with no base: the caller keeps x alive while it lives. */
static PyObject *view_of(rt_tensor *x, int npy) {
  npy_intp dims[RT_MAX_DIMS];
  for (int i = 0; i < x->shape.ndims; i++) dims[i] = x->shape.dims[i];
  PyArray_Descr *d = PyArray_DescrFromType(npy);
  if (!d) return NULL;
  return PyArray_NewFromDescr(&PyArray_Type, d, x->shape.ndims, dims, NULL, rt_tensor_data(x), NPY_ARRAY_CARRAY, NULL);
}

static PyArray_Descr *descr_new(int npy) { return PyArray_DescrFromType(npy); }   /* a new reference */

static void no_dtype(rt_dtype t) {
  PyErr_Format(PyExc_TypeError, "tfsh cannot convert values to %s (DataType %d)", rt_dtype_name(t), (int)t);
}

static float bf16_to_f32(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static uint16_t f32_to_bf16(float f) {   /* round to nearest even, as TF does */
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7fffffff) > 0x7f800000) return (uint16_t)((u >> 16) | 0x40);   /* NaN stays NaN */
  u += 0x7fff + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
}

/* ---- to tensors: numbers -------------------------------------------------------------------- */

/* Whether nobody can ever write a's memory: a read-only array owning its data, or a chain of
 * read-only views down to one (or to a bytes object). */
static bool immutable(PyArrayObject *a) {
  for (;;) {
    if (PyArray_ISWRITEABLE(a)) return false;
    PyObject *base = PyArray_BASE(a);
    if (!base) return PyArray_CHKFLAGS(a, NPY_ARRAY_OWNDATA);
    if (PyBytes_Check(base)) return true;
    if (!PyArray_Check(base)) return false;
    a = (PyArrayObject *)base;
  }
}

/* A wrapped array's buffer holds a reference to it; the last tensor may go on a runtime
 * thread, without the GIL. */
static void drop_array(void *data, void *arg) {
  if (!Py_IsInitialized()) return;   /* at exit, after the interpreter: leave it */
  PyGILState_STATE g = PyGILState_Ensure();
  Py_DECREF((PyObject *)arg);
  PyGILState_Release(g);
}

static rt_tensor *wrap_array(PyArrayObject *a, rt_dtype t, const rt_shape *s) {
  rt_buffer *b = xcalloc(1, sizeof *b);
  atomic_init(&b->refs, 1);
  b->dev = RT_DEV_CPU;
  b->nbytes = (size_t)PyArray_NBYTES(a);
  b->data = PyArray_DATA(a);
  b->free_fn = drop_array;
  b->free_arg = a;
  Py_INCREF(a);
  rt_tensor *x = rt_tensor_wrap(t, s, b);
  rt_buffer_unref(b);
  if (!x) PyErr_NoMemory();
  return x;
}

static rt_tensor *to_bf16(PyArrayObject *a, const rt_shape *s) {
  PyArrayObject *f = (PyArrayObject *)PyArray_FromAny((PyObject *)a, descr_new(NPY_FLOAT), 0, 0,
                                                      NPY_ARRAY_CARRAY_RO | NPY_ARRAY_FORCECAST, NULL);
  if (!f) return NULL;
  rt_tensor *x = new_tensor(RT_BFLOAT16, s);
  if (x) {
    const float *p = PyArray_DATA(f);
    uint16_t *q = rt_tensor_data(x);
    for (npy_intp i = 0; i < PyArray_SIZE(f); i++) q[i] = f32_to_bf16(p[i]);
  }
  Py_DECREF(f);
  return x;
}

/* a's values as a tensor of numeric dtype t: a's own memory when it is immutable, C-ordered
 * and of that dtype; else copied (and cast, as numpy's astype does). */
static rt_tensor *to_numeric(PyArrayObject *a, rt_dtype t) {
  rt_shape s;
  if (shape_of(a, &s) < 0) return NULL;
  if (t == RT_BFLOAT16) return to_bf16(a, &s);
  int npy = np_typenum(t);
  PyArray_Descr *d = (PyArray_Descr *)np_dtype_obj(t);
  if (npy < 0 || (PyObject *)d == Py_None)
    return no_dtype(t), NULL;
  if (PyArray_EquivTypes(PyArray_DESCR(a), d) && PyArray_IS_C_CONTIGUOUS(a) && PyArray_ISALIGNED(a) && immutable(a))
    return wrap_array(a, t, &s);
  rt_tensor *x = new_tensor(t, &s);
  if (!x) return NULL;
  PyObject *view = view_of(x, npy);
  if (!view || PyArray_CopyInto((PyArrayObject *)view, a) < 0) {
    Py_XDECREF(view);
    rt_tensor_unref(x);
    return NULL;
  }
  Py_DECREF(view);
  return x;
}

static bool fits_int32(PyArrayObject *a) {   /* a: a C-contiguous int64 array */
  const int64_t *p = PyArray_DATA(a);
  for (npy_intp i = 0; i < PyArray_SIZE(a); i++)
    if (p[i] < INT32_MIN || p[i] > INT32_MAX) return false;
  return true;
}

/* ---- to tensors: TF's checks of Python values ----------------------------------------------- */

/* TF's words for a ragged nested list, when v's dense dimensions (following first elements,
 * as TF's _GetDenseDimensions) are not the shape numpy finds. Returns whether it raised. */
static bool dense_error(PyObject *v) {
  if (!PyList_Check(v) && !PyTuple_Check(v)) return false;
  PyObject *want = PyList_New(0), *got = NULL, *o = v;
  PyArrayObject *a = NULL;
  bool raised = false;
  if (!want) goto done;
  while (PyList_Check(o) || PyTuple_Check(o)) {
    Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
    PyObject *len = PyLong_FromSsize_t(n);
    if (!len || PyList_Append(want, len) < 0) {
      Py_XDECREF(len);
      goto done;
    }
    Py_DECREF(len);
    if (!n) break;
    o = PySequence_Fast_GET_ITEM(o, 0);
  }
  a = (PyArrayObject *)PyArray_FromAny(v, descr_new(NPY_OBJECT), 0, 0, 0, NULL);
  if (!a || !(got = PyList_New(PyArray_NDIM(a)))) goto done;
  for (int i = 0; i < PyArray_NDIM(a); i++) {
    PyObject *d = PyLong_FromSsize_t(PyArray_DIM(a, i));
    if (!d) goto done;
    PyList_SET_ITEM(got, i, d);
  }
  if (PyObject_RichCompareBool(want, got, Py_NE) == 1) {
    PyErr_Format(PyExc_ValueError, "Argument must be a dense tensor: %S - got shape %R, but wanted %R.", v, got, want);
    raised = true;
  }
done:
  if (!raised) PyErr_Clear();
  Py_XDECREF(want);
  Py_XDECREF(got);
  Py_XDECREF(a);
  return raised;
}

/* After a failed conversion of v: TF's ragged-list words in place of numpy's ValueError. */
static void tf_words_for_ragged(PyObject *v) {
  if (!PyErr_ExceptionMatches(PyExc_ValueError)) return;
  PyObject *t, *e, *tb;
  PyErr_Fetch(&t, &e, &tb);
  if (dense_error(v)) {
    Py_XDECREF(t);
    Py_XDECREF(e);
    Py_XDECREF(tb);
  } else {
    PyErr_Restore(t, e, tb);
  }
}

/* TF1's _AssertCompatible: every leaf of nested lists fits dtype t. 1 yes, 0 with *bad the
 * first leaf that does not, -1 on error. ndarrays inside lists are left to numpy's cast. */
static int compatible(PyObject *v, rt_dtype t, PyObject **bad) {
  if (PyList_Check(v) || PyTuple_Check(v)) {
    if (Py_EnterRecursiveCall(" while converting a nested list")) return -1;
    int r = 1;
    for (Py_ssize_t i = 0; r == 1 && i < PySequence_Fast_GET_SIZE(v); i++)
      r = compatible(PySequence_Fast_GET_ITEM(v, i), t, bad);
    Py_LeaveRecursiveCall();
    return r;
  }
  /* an object with __index__ is an int (TF 1.x's Dimension of a known size) */
  bool integral = PyLong_Check(v) || PyArray_IsScalar(v, Integer) || (!PyFloat_Check(v) && PyIndex_Check(v));
  bool real = integral || PyFloat_Check(v) || PyArray_IsScalar(v, Floating);
  bool ok = PyArray_Check(v) || (np_is_int(t) ? integral
                                 : np_is_float(t) ? real
                                 : t == RT_COMPLEX64 ? real || PyComplex_Check(v) || PyArray_IsScalar(v, ComplexFloating)
                                 : t == RT_BOOL ? PyBool_Check(v) || PyArray_IsScalar(v, Bool)
                                 : t == RT_STRING ? PyBytes_Check(v) || PyUnicode_Check(v)
                                 : true);
  if (!ok) *bad = v;
  return ok;
}

/* ---- to tensors: strings -------------------------------------------------------------------- */

static bool too_big(PyObject *n) {   /* an int no numpy integer type holds */
  int over;
  return PyLong_AsLongLongAndOverflow(n, &over), over != 0;
}

enum { W_EXPECTED, W_TF_FAILED, W_INFERRED };   /* the words for an element that is no string */

/* src's elements (a Python value or an array: as numpy's object array holds them) as a
 * string tensor of dtype t: bytes copied, str as UTF-8. orig: the value the user gave. */
static rt_tensor *to_strings(PyObject *src, PyObject *orig, rt_dtype t, int words) {
  PyArrayObject *a = (PyArrayObject *)PyArray_FromAny(src, descr_new(NPY_OBJECT), 0, 0,
                                                      NPY_ARRAY_CARRAY_RO | NPY_ARRAY_FORCECAST, NULL);
  rt_shape s;
  if (!a) return NULL;
  rt_tensor *x = shape_of(a, &s) < 0 ? NULL : new_tensor(t, &s);
  PyObject **p = x ? PyArray_DATA(a) : NULL;
  for (npy_intp i = 0; x && i < PyArray_SIZE(a); i++) {
    PyObject *e = p[i] ? p[i] : Py_None;
    const char *c;
    Py_ssize_t n;
    /* a 0-d array as an element (np.asarray(b'x', dtype=object) inside a batch): its item */
    if (PyArray_Check(e) && PyArray_NDIM((PyArrayObject *)e) == 0 && PyArray_TYPE((PyArrayObject *)e) == NPY_OBJECT) {
      PyObject *item = *(PyObject **)PyArray_DATA((PyArrayObject *)e);
      if (item) e = item;
    }
    if (PyBytes_Check(e)) {
      c = PyBytes_AS_STRING(e);
      n = PyBytes_GET_SIZE(e);
    } else if (PyUnicode_Check(e)) {
      c = PyUnicode_AsUTF8AndSize(e, &n);
    } else {
      c = NULL;
      if (PyList_Check(e) || PyTuple_Check(e)) {
        if (!dense_error(orig)) PyErr_SetString(PyExc_ValueError, "setting an array element with a sequence.");
      } else if (words == W_TF_FAILED) {
        PyErr_Format(PyExc_TypeError, "Failed to convert object of type %R to Tensor. Contents: %S. Consider "
                     "casting elements to a supported type.", (PyObject *)Py_TYPE(orig), orig);
      } else if (words == W_INFERRED && PyLong_Check(e) && too_big(e)) {
        PyErr_SetString(PyExc_OverflowError, "Python int too large to convert to C long");
      } else {
        PyErr_Format(PyExc_TypeError, "Expected binary or unicode string, got %R", e);
      }
    }
    if (!c || rt_tensor_set_str(x, i, c, (size_t)n) != RT_OK) {
      if (c) PyErr_NoMemory();
      rt_tensor_unref(x);
      x = NULL;
    }
  }
  Py_DECREF(a);
  return x;
}

/* ---- to tensors ---------------------------------------------------------------------------- */

/* ndarrays, numpy scalars, objects with __array__: their dtype, or cast to want. */
static rt_tensor *from_array(PyObject *v, rt_dtype want) {
  PyArrayObject *a = (PyArrayObject *)PyArray_FromAny(v, NULL, 0, 0, 0, NULL);
  if (!a) return NULL;
  rt_dtype t = want != RT_INVALID ? want : np_dtype_of_descr((PyObject *)PyArray_DESCR(a));
  rt_tensor *x = NULL;
  if (t == RT_INVALID)
    PyErr_Format(PyExc_TypeError, "Cannot convert an array of dtype %S to a tensor: tfsh has no such dtype",
                 (PyObject *)PyArray_DESCR(a));
  else
    x = rt_dtype_is_str(t) ? to_strings((PyObject *)a, v, t, W_EXPECTED) : to_numeric(a, t);
  Py_DECREF(a);
  return x;
}

static bool array_like(PyObject *v) {
  return np_check(v) || PyObject_HasAttrString(v, "__array__") || PyObject_HasAttrString(v, "__array_interface__") ||
         PyObject_HasAttrString(v, "__array_struct__");
}

/* Python values: numpy finds the shape and kind; TF1 (tf) prefers float32 and int32. */
static rt_tensor *from_value(PyObject *v, rt_dtype want, bool tf) {
  if (rt_dtype_is_str(want)) return to_strings(v, v, want, tf ? W_TF_FAILED : W_EXPECTED);
  PyArray_Descr *d = NULL;
  if (want != RT_INVALID) {
    int npy = want == RT_BFLOAT16 ? NPY_FLOAT : np_typenum(want);
    if (npy < 0) return no_dtype(want), NULL;
    if (!(d = descr_new(npy))) return NULL;
  }
  PyArrayObject *a = (PyArrayObject *)PyArray_FromAny(v, d, 0, 0, NPY_ARRAY_CARRAY | (d ? NPY_ARRAY_FORCECAST : 0), NULL);
  if (!a) {
    if (tf) tf_words_for_ragged(v);
    return NULL;
  }
  rt_dtype t = want;
  rt_tensor *x = NULL;
  char kind = PyArray_DESCR(a)->kind;
  if (t == RT_INVALID && kind == 'O' && tf) {   /* ints and Dimensions ([-1, shape[1], 2]): int32 */
    PyObject *ignore = NULL;
    int ints = compatible(v, RT_INT64, &ignore);
    if (ints < 0) PyErr_Clear();
    if (ints == 1) {
      Py_DECREF(a);
      return from_value(v, RT_INT32, tf);
    }
  }
  if (t == RT_INVALID && (kind == 'U' || kind == 'S' || kind == 'O')) {
    /* tf: the elements themselves, as TF's _FlattenToStrings; numpy: numpy's strings */
    x = tf || kind == 'O' ? to_strings(v, v, RT_STRING, tf ? W_TF_FAILED : W_INFERRED)
                          : to_strings((PyObject *)a, v, RT_STRING, W_EXPECTED);
  } else {
    if (t == RT_INVALID) {
      t = np_dtype_of_descr((PyObject *)PyArray_DESCR(a));
      if (tf && t == RT_DOUBLE) t = RT_FLOAT;
      else if (tf && t == RT_INT64 && fits_int32(a)) t = RT_INT32;
    }
    if (t == RT_INVALID)
      PyErr_Format(PyExc_TypeError, "Cannot convert %R to a tensor: tfsh has no dtype for numpy's %S", v,
                   (PyObject *)PyArray_DESCR(a));
    else
      x = to_numeric(a, t);
  }
  Py_DECREF(a);
  return x;
}

rt_tensor *np_to_tensor(PyObject *v, rt_dtype want, bool numpy_defaults) {
  if (!v) return PyErr_SetString(PyExc_SystemError, "np_to_tensor: no value"), NULL;
  if (array_like(v)) return from_array(v, want);
  if (!numpy_defaults) {
    PyObject *bad = NULL;
    int ok = 1;
    if (v == Py_None) return PyErr_SetString(PyExc_ValueError, "None values not supported."), NULL;
    if (want != RT_INVALID && (ok = compatible(v, want, &bad)) == 0) {
      PyObject *tn = PyType_GetName(Py_TYPE(bad));
      if (tn) PyErr_Format(PyExc_TypeError, "Expected %s, got %R of type '%U' instead.", rt_dtype_name(want), bad, tn);
      Py_XDECREF(tn);
    }
    if (ok != 1) return NULL;
  }
  return from_value(v, want, !numpy_defaults);
}

rt_tensor *np_tensor_of(PyObject *o) {
  if (!np_check(o))
    return PyErr_Format(PyExc_TypeError, "expected a numpy array or scalar, got %s", Py_TYPE(o)->tp_name), NULL;
  return from_array(o, RT_INVALID);
}

/* ---- from tensors ------------------------------------------------------------------------- */

static void drop_tensor(PyObject *cap) { rt_tensor_unref(PyCapsule_GetPointer(cap, "tfsh.tensor")); }

/* Whether an array viewing t could write memory someone else reads: another reference to
 * t or its buffer (a variable's value, a cached tensor), a variable reference, or a
 * read-only numpy array's memory wrapped by np_to_tensor. */
static bool shared(rt_tensor *t) {
  return atomic_load(&t->refs) > 1 || atomic_load(&t->buf->refs) > 1 || t->ref || t->buf->free_fn == drop_array;
}

static PyObject *new_array(rt_tensor *t, int npy) {
  npy_intp dims[RT_MAX_DIMS];
  for (int i = 0; i < t->shape.ndims; i++) dims[i] = t->shape.dims[i];
  return PyArray_SimpleNew(t->shape.ndims, dims, npy);
}

static PyObject *wrap_strings(rt_tensor *t) {   /* steals t */
  PyObject *a = new_array(t, NPY_OBJECT);
  const rt_str *s = rt_tensor_data(t);
  for (int64_t i = 0; a && i < rt_tensor_numel(t); i++) {
    PyObject *b = PyBytes_FromStringAndSize(s[i].ptr ? s[i].ptr : "", (Py_ssize_t)s[i].len);
    if (!b) Py_CLEAR(a);
    else Py_XSETREF(((PyObject **)PyArray_DATA((PyArrayObject *)a))[i], b);
  }
  rt_tensor_unref(t);
  return a;
}

static PyObject *wrap_bf16(rt_tensor *t) {   /* steals t: numpy has no bfloat16; float32 */
  PyObject *a = new_array(t, NPY_FLOAT);
  if (a) {
    const uint16_t *p = rt_tensor_data(t);
    float *q = PyArray_DATA((PyArrayObject *)a);
    for (int64_t i = 0; i < rt_tensor_numel(t); i++) q[i] = bf16_to_f32(p[i]);
  }
  rt_tensor_unref(t);
  return a;
}

/* t's errors as np_wrap and np_result raise them; steals t when it returns -1. */
static int check_tensor(rt_tensor *t) {
  if (!t) {
    if (!PyErr_Occurred()) PyErr_NoMemory();
    return -1;
  }
  const char *why = !t->buf ? "the tensor has no value (an uninitialized variable?)"
                    : t->buf->dev != RT_DEV_CPU ? "the tensor is in device memory, not the host's"
                    : !rt_dtype_is_str(t->dtype) && t->dtype != RT_BFLOAT16 && np_typenum(t->dtype) < 0
                        ? "numpy has no dtype for it" : NULL;
  if (!why) return 0;
  PyErr_Format(PyExc_ValueError, "Cannot make a numpy array of a %s tensor: %s", rt_dtype_name(t->dtype), why);
  rt_tensor_unref(t);
  return -1;
}

PyObject *np_wrap(rt_tensor *t) {
  if (check_tensor(t) < 0) return NULL;
  if (rt_dtype_is_str(t->dtype)) return wrap_strings(t);
  if (t->dtype == RT_BFLOAT16) return wrap_bf16(t);
  if (shared(t)) {
    rt_tensor *c = rt_tensor_copy(t);
    rt_tensor_unref(t);
    if (!(t = c)) return PyErr_NoMemory();
  }
  PyObject *cap = PyCapsule_New(t, "tfsh.tensor", drop_tensor);
  if (!cap) return rt_tensor_unref(t), NULL;
  PyObject *a = view_of(t, np_typenum(t->dtype));
  if (!a) return Py_DECREF(cap), NULL;
  if (PyArray_SetBaseObject((PyArrayObject *)a, cap) < 0) return Py_DECREF(a), NULL;   /* cap stolen */
  return a;
}

PyObject *np_result(rt_tensor *t) {
  if (check_tensor(t) < 0) return NULL;
  if (t->shape.ndims != 0) return np_wrap(t);
  PyObject *r;
  if (rt_dtype_is_str(t->dtype)) {
    const rt_str *s = rt_tensor_data(t);
    r = PyBytes_FromStringAndSize(s->ptr ? s->ptr : "", (Py_ssize_t)s->len);
  } else if (t->dtype == RT_BFLOAT16) {
    float f = bf16_to_f32(*(const uint16_t *)rt_tensor_data(t));
    r = PyArray_Scalar(&f, (PyArray_Descr *)np_dtype_obj(RT_FLOAT), NULL);
  } else {
    r = PyArray_Scalar(rt_tensor_data(t), (PyArray_Descr *)np_dtype_obj(t->dtype), NULL);
  }
  rt_tensor_unref(t);
  return r;
}
