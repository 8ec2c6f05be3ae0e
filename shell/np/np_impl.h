/* What np.c and dtype.c share inside the numpy room (no numpy headers here either). */
#ifndef TFSH_SHELL_NP_IMPL_H
#define TFSH_SHELL_NP_IMPL_H

#include "shell/np/np.h"

/* numpy's type number (NPY_FLOAT, ...) for t; -1 when numpy has no such type (bfloat16).
 * Strings and resources are NPY_OBJECT (object arrays of bytes, as TF fetches them). */
int np_typenum(rt_dtype t);
/* The runtime dtype of a numpy dtype object (PyArray_Descr *): by kind and size, any byte
 * order; 'U', 'S' and 'O' are RT_STRING. RT_INVALID if none. */
rt_dtype np_dtype_of_descr(PyObject *descr);
bool np_is_float(rt_dtype t);   /* float32, float64, float16, bfloat16 */
bool np_is_int(rt_dtype t);     /* int8 ... int64, uint8, uint16 */
/* dtype.c's part of np_init: tf.DType ready, numpy's dtype objects cached. */
int np_dtype_init(void);

#endif
