/* Tensors: a dtype, a shape and a reference-counted buffer that knows its device.
 * Several tensors may share one buffer (Identity, Reshape, variables); the buffer is freed
 * when its last reference goes. */
#ifndef TFSH_TENSOR_H
#define TFSH_TENSOR_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/status.h"

/* Numbered as TensorFlow's DataType enum (types.proto), so dumps look familiar. */
typedef enum rt_dtype {
  RT_INVALID = 0,
  RT_FLOAT = 1,
  RT_DOUBLE = 2,
  RT_INT32 = 3,
  RT_UINT8 = 4,
  RT_INT16 = 5,
  RT_INT8 = 6,
  RT_STRING = 7,
  RT_COMPLEX64 = 8,   /* two float32: real, imaginary */
  RT_INT64 = 9,
  RT_BOOL = 10,
  RT_BFLOAT16 = 14,
  RT_UINT16 = 17,
  RT_HALF = 19,       /* float16 */
  RT_RESOURCE = 20,   /* a handle naming a resource (variable, queue, ...) on one device */
} rt_dtype;

typedef enum rt_device_type {
  RT_DEV_CPU = 0,
  RT_DEV_GPU = 1,
  RT_DEV_COUNT
} rt_device_type;

#define RT_MAX_DIMS 8

/* ndims < 0: unknown rank. dims[i] < 0: unknown dimension (shape inference only). */
typedef struct rt_shape {
  int ndims;
  int64_t dims[RT_MAX_DIMS];
} rt_shape;

/* One element of a string tensor: bytes with a length (may hold NULs), always
 * NUL-terminated for convenience. Owned by the buffer. */
typedef struct rt_str {
  size_t len;
  char *ptr;
} rt_str;

typedef struct rt_buffer {
  atomic_int refs;
  rt_device_type dev;
  bool strings;          /* elements are rt_str, each freed with the buffer */
  size_t nbytes;
  void *data;
  /* Who frees data: NULL = the tensor allocator; else called with (data, free_arg)
   * (zero-copy wrappers of received frames, device memory). */
  void (*free_fn)(void *data, void *free_arg);
  void *free_arg;
} rt_buffer;

struct rt_resource;

typedef struct rt_tensor {
  atomic_int refs;
  rt_dtype dtype;
  rt_shape shape;
  rt_buffer *buf;             /* NULL only for a reference to an uninitialized variable */
  struct rt_resource *ref;    /* a reference output (TF1 ref variables): the variable it
                                 views, so Assign can update it; NULL for plain values */
} rt_tensor;

/* dtypes */
const char *rt_dtype_name(rt_dtype t);        /* "float32", "int64", ... ; "invalid" */
size_t rt_dtype_size(rt_dtype t);             /* bytes per element; rt_str for strings */
bool rt_dtype_from_name(const char *name, rt_dtype *out); /* "float32"/"float", "int32", ... */
bool rt_dtype_is_float(rt_dtype t);
bool rt_dtype_is_int(rt_dtype t);
/* Elements are rt_str (strings, and resource handles, which are strings inside). */
static inline bool rt_dtype_is_str(rt_dtype t) { return t == RT_STRING || t == RT_RESOURCE; }
/* The bytes of n elements of a fixed-size type; 0 for strings (their size is their
 * contents') and for n < 0 (unknown). */
static inline size_t rt_dtype_fixed_bytes(rt_dtype t, int64_t n) {
  return n > 0 && !rt_dtype_is_str(t) ? (size_t)n * rt_dtype_size(t) : 0;
}

/* shapes */
rt_shape rt_shape_scalar(void);
rt_shape rt_shape_unknown(void);
rt_shape rt_shape_make(int ndims, const int64_t *dims);
int64_t rt_shape_numel(const rt_shape *s);            /* -1 if not fully known */
bool rt_shape_fully_known(const rt_shape *s);
bool rt_shape_equal(const rt_shape *a, const rt_shape *b);
/* Could a tensor of shape b be fed where a is expected (unknown dims match anything)? */
bool rt_shape_compatible(const rt_shape *a, const rt_shape *b);
/* "(2, 3)", "()" and "<unknown>" as TF1 prints them: "(?, 3)" for unknown dims. */
char *rt_shape_str(const rt_shape *s, char *buf, size_t n);

/* tensors */
rt_tensor *rt_tensor_new(rt_dtype t, const rt_shape *shape);   /* zeroed; NULL on OOM */
/* Not zeroed (kernels that write every element): saves the first-touch cost twice over. */
rt_tensor *rt_tensor_new_uninit(rt_dtype t, const rt_shape *shape);
/* A tensor viewing an existing buffer (takes a new reference to it). */
rt_tensor *rt_tensor_wrap(rt_dtype t, const rt_shape *shape, rt_buffer *buf);
rt_tensor *rt_tensor_ref(rt_tensor *t);
void rt_tensor_unref(rt_tensor *t);                   /* NULL is fine */
static inline void *rt_tensor_data(const rt_tensor *t) { return t->buf ? t->buf->data : NULL; }
static inline int64_t rt_tensor_numel(const rt_tensor *t) { return rt_shape_numel(&t->shape); }
size_t rt_tensor_nbytes(const rt_tensor *t);
rt_tensor *rt_tensor_copy(const rt_tensor *t);        /* deep copy (new buffer) */
/* Set element i of a string tensor (copies len bytes). */
int rt_tensor_set_str(rt_tensor *t, int64_t i, const char *s, size_t len);

rt_tensor *rt_tensor_scalar_f32(float v);
rt_tensor *rt_tensor_scalar_f64(double v);
rt_tensor *rt_tensor_scalar_i32(int32_t v);
rt_tensor *rt_tensor_scalar_i64(int64_t v);
rt_tensor *rt_tensor_scalar_bool(bool v);
rt_tensor *rt_tensor_scalar_str(const char *s);

/* Element i as a double / int64 (any numeric or bool dtype). */
double rt_tensor_get_f64(const rt_tensor *t, int64_t i);
int64_t rt_tensor_get_i64(const rt_tensor *t, int64_t i);

/* Resource handles (DT_RESOURCE). Element i names a resource: the device that holds it,
 * its container and name, and what kind it is ("Var", "FIFOQueue", ...). Inside, the four
 * parts are one string separated by NULs, so a handle travels as a string does. */
typedef struct rt_handle {
  const char *device, *container, *name, *kind;   /* point into the tensor (or a copy) */
} rt_handle;
int rt_handle_set(rt_tensor *t, int64_t i, const rt_handle *h);
/* The handle in element i; false if it is not a well-formed handle (e.g. never set). */
bool rt_handle_get(const rt_tensor *t, int64_t i, rt_handle *h);

/* buffers */
rt_buffer *rt_buffer_new(size_t nbytes, bool strings);
rt_buffer *rt_buffer_ref(rt_buffer *b);
void rt_buffer_unref(rt_buffer *b);

/* Printing exactly as numpy prints an array with str() (print(arr)) or repr().
 * Returns a malloc'd string. */
char *rt_tensor_format(const rt_tensor *t);
char *rt_tensor_repr(const rt_tensor *t);
/* The same with string elements shown as str when text (numpy's '<U' arrays; else bytes)
 * and, when dtype_text is not NULL, repr's dtype= written as it says ("'<U2'"). */
char *rt_tensor_format_as(const rt_tensor *t, bool text);
char *rt_tensor_repr_as(const rt_tensor *t, bool text, const char *dtype_text);

#endif
