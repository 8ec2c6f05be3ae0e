/* A small numpy over runtime tensors (np.c, random.c), and the dtype objects of numpy and
 * tf (dtype.c). The numpy room's header; the tf module builds on it. */
#ifndef TFSH_SHELL_NP_H
#define TFSH_SHELL_NP_H

#include "runtime/tensor.h"
#include "shell/lang/lang.h"

/* ---- dtypes (dtype.c) ------------------------------------------------------------- */
/* np.float32 (an np.dtype) and tf.float32 (a tf.DType) are both this struct, made from one
 * table of the dtypes tfsh knows: numpy's name and tf's name per row. tf.DType lives here,
 * below the tf module, because numpy and tf dtypes convert into each other. */
typedef struct sh_dtype {
  sh_obj head;
  rt_dtype t;
  const char *name;
  bool ref;          /* tf.float32_ref: a reference variable's dtype (tf dtypes only) */
} sh_dtype;
extern sh_type np_dtype_type, tf_dtype_type;
/* A dtype from tf.float32, np.float32, "float32", float, int... RT_INVALID if none. */
rt_dtype np_dtype_of(sh_obj *o);
sh_obj *np_dtype_obj(rt_dtype t);              /* borrowed; None if numpy has none */
sh_obj *tf_dtype_obj(rt_dtype t);              /* borrowed: tf.float32, ...; None if none */
sh_obj *tf_ref_dtype_obj(rt_dtype t);          /* borrowed: float32_ref, ...; None if none */
/* The i-th tf dtype of the table (tf module construction), NULL past the end. */
const sh_dtype *tf_dtype_nth(int i);
const sh_dtype *np_dtype_nth(int i);
/* np.float32(x) and friends: a numpy scalar of the dtype self (np.c). */
sh_obj *np_scalar_ctor(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw);

/* ---- numpy ------------------------------------------------------------------------ */

/* numpy.ndarray over a runtime tensor. A numpy scalar (numpy.float32, numpy.int64, ...:
 * what sess.run returns for a 0-d tensor, a[i, j], a.sum()) is the same struct holding a
 * 0-d tensor, with a type of its own per dtype (np_scalar_type). */
typedef struct np_array {
  sh_obj head;
  rt_tensor *t;
  /* string arrays (RT_STRING): what numpy would hold. NP_STR_OBJECT: an object array of
   * bytes, as TF's fetches are (the default); NP_STR_BYTES: dtype '|S<width>';
   * NP_STR_TEXT: dtype '<U<width>', elements str (kept as UTF-8); NP_STR_OBJTEXT: an
   * object array of str (np.array(['a'], dtype=object)). */
  uint8_t skind;
  int32_t swidth;
} np_array;
enum { NP_STR_OBJECT, NP_STR_BYTES, NP_STR_TEXT, NP_STR_OBJTEXT };
static inline bool np_str_is_text(int kind) { return kind == NP_STR_TEXT || kind == NP_STR_OBJTEXT; }
static inline bool np_str_is_object(int kind) { return kind == NP_STR_OBJECT || kind == NP_STR_OBJTEXT; }

enum { NP_N_SCALAR_TYPES = 6 };   /* float32, float64, int32, int64, bool_, uint8 */
extern sh_type np_array_type, np_scalar_type[NP_N_SCALAR_TYPES];
sh_obj *np_wrap(rt_tensor *t);                 /* steals t */
/* What sess.run returns for a tensor: an ndarray, or for a 0-d tensor a numpy scalar (a
 * Python str for strings). Steals t. */
sh_obj *np_result(rt_tensor *t);
static inline bool np_is_scalar(const sh_obj *o) {
  return (uintptr_t)o->type - (uintptr_t)np_scalar_type < sizeof np_scalar_type;
}
/* An ndarray or a numpy scalar: both are np_array. */
static inline bool np_check(const sh_obj *o) { return o->type == &np_array_type || np_is_scalar(o); }
/* The numpy scalar type of dtype t (np.float32's instances), NULL if none. */
sh_type *np_scalar_type_of(rt_dtype t);
/* A Python value (scalar, nested lists, ndarray) as a tensor. want: RT_INVALID to infer
 * (float32 for floats, int32 for ints, as TF1 converts Python values; ndarrays keep their
 * dtype, float64 included), else convert to that dtype. NULL with an exception. */
rt_tensor *np_to_tensor(sh_obj *v, rt_dtype want, bool numpy_defaults);
sh_obj *np_module_init(void);

/* ---- string arrays (np_str.c) -------------------------------------------------------- */
/* t (RT_STRING) as an array of kind, width (0: its longest element's, at least 1). Steals t. */
sh_obj *np_wrap_str(rt_tensor *t, int kind, int32_t width);
/* Whether dt names a string dtype (str, bytes, np.str_, np.bytes_, object, 'U5', '<U5',
 * 'S', '|S2', a string array's dtype): 1 with *kind and *width (0: unsized), else 0. */
int np_str_kind_arg(sh_obj *dt, int *kind, int32_t *width);
sh_obj *np_str_dtype(int kind, int32_t width);   /* new reference: dtype('<U2'), dtype('O') */
int32_t np_str_width(const rt_tensor *t, int kind);
extern sh_type np_sdtype_type;
/* a.astype(kind): to or from a string kind (src or kind a string one). */
sh_obj *np_str_astype(np_array *src, rt_dtype to, int kind, int32_t width);
/* a <op> b where a or b is a string array; SH_NOTIMPL when the other is not strings. */
sh_obj *np_str_compare(int op, sh_obj *a, sh_obj *b);
/* The element i of t as numpy gives it: str for NP_STR_TEXT, else bytes (strings). */
sh_obj *np_element(const rt_tensor *t, int64_t i, int kind);
sh_obj *np_scalar_or_array(sh_obj *r);   /* 0-d -> numpy scalar or str/bytes; steals r */
/* numpy's broadcasting of x and y: the result's shape (-1 and a ValueError if none), and
 * for its k-th element the elements of x and y it comes from. */
int np_broadcast_shape(const rt_tensor *x, const rt_tensor *y, rt_shape *s);
void np_broadcast_index(const rt_shape *s, const rt_tensor *x, const rt_tensor *y, int64_t k, int64_t *ix, int64_t *iy);
sh_obj *np_random_module(void);                /* numpy.random (np_random.c) */

#endif
