/* The numpy room: a bridge between real numpy arrays (embedded CPython's numpy) and
 * runtime tensors (np.c), and the dtype objects of tf, tf.DType (dtype.c), made from one
 * table of the dtypes tfsh knows. Every function needs the GIL and np_init() first. */
#ifndef TFSH_SHELL_NP_H
#define TFSH_SHELL_NP_H

#include <Python.h>
#include <stdbool.h>

#include "runtime/tensor.h"

/* Import numpy's C API (once; later calls return 0). 0, or -1 with an exception set. */
int np_init(void);
PyObject *np_module_numpy(void);               /* borrowed: the numpy module */

/* ---- arrays (np.c) ------------------------------------------------------------------ */

/* A Python value (int/float/bool/str/bytes, nested lists/tuples, an ndarray or numpy
 * scalar, anything numpy can convert) as a NEW tensor; NULL with an exception.
 * want == RT_INVALID infers: ndarrays, numpy scalars and objects with __array__ keep
 * their dtype; Python values take TF1's (numpy_defaults false: float32, int32 or int64
 * when a value does not fit, bool, string) or numpy's own (float64, int64).
 * want given: converted to it (TF1's TypeError for Python values that do not fit it,
 * unless numpy_defaults, which casts as np.asarray(v, dtype) does). A read-only
 * C-contiguous ndarray of the right dtype is wrapped without copying; others are copied. */
rt_tensor *np_to_tensor(PyObject *v, rt_dtype want, bool numpy_defaults);
/* A writeable ndarray over t's values; steals t. Views t's buffer without copying when t
 * holds the only reference to it (else copies, so an array never aliases a variable).
 * String and resource tensors give object arrays of bytes. NULL (t NULL: MemoryError). */
PyObject *np_wrap(rt_tensor *t);
/* What sess.run returns: an ndarray, or for a 0-d tensor a numpy scalar (np.float32,
 * np.int32, np.bool_, ...) or, for strings, bytes. Steals t. */
PyObject *np_result(rt_tensor *t);
bool np_check(PyObject *o);                    /* an ndarray or a numpy scalar */
int64_t np_array_numel(PyObject *o);           /* an ndarray's elements; -1: not an ndarray */
/* A NEW tensor holding o's values (an ndarray or numpy scalar); NULL + TypeError else. */
rt_tensor *np_tensor_of(PyObject *o);

/* ---- dtypes (dtype.c) --------------------------------------------------------------- */

/* tf.float32 and friends: static objects, never freed. */
typedef struct sh_dtype {
  PyObject_HEAD
  rt_dtype t;
  const char *name;  /* tf's name: "float32", "string", "float32_ref" */
  bool ref;          /* tf.float32_ref: a reference variable's dtype */
} sh_dtype;
extern PyTypeObject tf_dtype_type;
/* The dtype o names: a tf.DType, a numpy dtype, a numpy scalar type (np.float32), a
 * name ("float32", "float" (float32), "double", "half", "int" (int64), "string", "f4",
 * "<U5", ...), or float/int/bool/str/bytes/object as numpy maps them. RT_INVALID (and no
 * exception) if none. */
rt_dtype np_dtype_of(PyObject *o);
PyObject *np_dtype_obj(rt_dtype t);            /* borrowed numpy dtype; Py_None if none */
PyObject *tf_dtype_obj(rt_dtype t);            /* borrowed: tf.float32, ...; Py_None if none */
PyObject *tf_ref_dtype_obj(rt_dtype t);        /* borrowed: tf.float32_ref; Py_None if none */
/* The i-th tf dtype of the table (the tf module adds each by name), NULL past the end. */
const sh_dtype *tf_dtype_nth(int i);

#endif
