#include "base/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const code_names[RT_CODE_COUNT] = {
  "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
  "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
  "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
  "UNAUTHENTICATED",
};

static const char *const code_classes[RT_CODE_COUNT] = {
  "OK", "CancelledError", "UnknownError", "InvalidArgumentError", "DeadlineExceededError",
  "NotFoundError", "AlreadyExistsError", "PermissionDeniedError", "ResourceExhaustedError",
  "FailedPreconditionError", "AbortedError", "OutOfRangeError", "UnimplementedError",
  "InternalError", "UnavailableError", "DataLossError", "UnauthenticatedError",
};

int rt_error(rt_status *st, int code, const char *fmt, ...) {
  if (st) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->msg, sizeof st->msg, fmt, ap);
    va_end(ap);
    st->code = code;
  }
  return code;
}

void rt_status_prefix(rt_status *st, const char *fmt, ...) {
  if (!st) return;
  char pre[RT_MSG_MAX], old[RT_MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(pre, sizeof pre, fmt, ap);
  va_end(ap);
  memcpy(old, st->msg, sizeof old);
  snprintf(st->msg, sizeof st->msg, "%s%s", pre, old);
}

void rt_status_clear(rt_status *st) {
  if (!st) return;
  st->code = RT_OK;
  st->msg[0] = '\0';
}

const char *rt_code_class(int code) {
  if (code == RT_TYPE_ERROR) return "TypeError";
  if (code == RT_LOOKUP_ERROR) return "LookupError";
  return code >= 0 && code < RT_CODE_COUNT ? code_classes[code] : "UnknownError";
}

const char *rt_code_name(int code) {
  if (code == RT_TYPE_ERROR) return "TYPE_ERROR";
  if (code == RT_LOOKUP_ERROR) return "LOOKUP_ERROR";
  return code >= 0 && code < RT_CODE_COUNT ? code_names[code] : "UNKNOWN";
}
