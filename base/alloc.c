/* base/alloc.h: allocation of bookkeeping, fatal on failure. */
#define _GNU_SOURCE
#include "base/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Noreturn void x_oom(size_t n) {
  fprintf(stderr, "tfsh: out of memory (%zu bytes)\n", n);
  abort();
}

void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) x_oom(n);
  return p;
}

void *xcalloc(size_t count, size_t size) {
  if (size && count > (size_t)-1 / size) x_oom((size_t)-1);
  void *p = calloc(count ? count : 1, size ? size : 1);
  if (!p) x_oom(count * size);
  return p;
}

void *xrealloc(void *p, size_t n) {
  void *q = realloc(p, n ? n : 1);
  if (!q) x_oom(n);
  return q;
}

char *xstrdup(const char *s) {
  char *p = strdup(s);
  if (!p) x_oom(strlen(s) + 1);
  return p;
}

char *xstrndup(const char *s, size_t n) {
  char *p = strndup(s ? s : "", s ? n : 0);   /* (NULL, 0): an empty bytes field */
  if (!p) x_oom(n + 1);
  return p;
}

char *xvasprintf(const char *fmt, va_list ap) {
  char *p = NULL;
  if (vasprintf(&p, fmt, ap) < 0) x_oom(0);
  return p;
}

char *xasprintf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *p = xvasprintf(fmt, ap);
  va_end(ap);
  return p;
}
