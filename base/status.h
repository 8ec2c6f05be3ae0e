/* Status codes and messages, shared by every layer.
 * Codes are TensorFlow's (error_codes.proto), so the shell can raise the exception class a
 * TF1 user expects (tf.errors.InvalidArgumentError, ...). A function that can fail takes an
 * rt_status *, fills it on failure and returns the code; 0 is success. */
#ifndef TFSH_STATUS_H
#define TFSH_STATUS_H

enum {
  RT_OK = 0,
  RT_CANCELLED = 1,
  RT_UNKNOWN = 2,
  RT_INVALID_ARGUMENT = 3,
  RT_DEADLINE_EXCEEDED = 4,
  RT_NOT_FOUND = 5,
  RT_ALREADY_EXISTS = 6,
  RT_PERMISSION_DENIED = 7,
  RT_RESOURCE_EXHAUSTED = 8,
  RT_FAILED_PRECONDITION = 9,
  RT_ABORTED = 10,
  RT_OUT_OF_RANGE = 11,
  RT_UNIMPLEMENTED = 12,
  RT_INTERNAL = 13,
  RT_UNAVAILABLE = 14,
  RT_DATA_LOSS = 15,
  RT_UNAUTHENTICATED = 16,
  RT_CODE_COUNT,
  /* Not TF's: a wrong dtype found while building a graph, raised as Python's TypeError
   * (TF1's op_def_library raises TypeError there, ValueError for shapes). */
  RT_TYPE_ERROR = 64,
  /* Not TF's: no gradient for an op (TF1 raises LookupError). */
  RT_LOOKUP_ERROR = 65,
};

#define RT_MSG_MAX 1024

typedef struct rt_status {
  int code;
  char msg[RT_MSG_MAX];
} rt_status;

/* Fill st (if not NULL) and return code. */
int rt_error(rt_status *st, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Prepend "prefix" to an existing message (e.g. the task an error came from). */
void rt_status_prefix(rt_status *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void rt_status_clear(rt_status *st);
/* "InvalidArgumentError", ... (TF's Python class names); "OK" for 0. */
const char *rt_code_class(int code);
/* "INVALID_ARGUMENT", ... */
const char *rt_code_name(int code);

#endif
