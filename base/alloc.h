/* Out of memory, one policy for every layer:
 *  - small bookkeeping (a node, a name, a list of pointers, an interpreter object) cannot
 *    fail usefully: allocate it with xmalloc / xcalloc / xrealloc / xstrdup, which print
 *    "tfsh: out of memory (N bytes)" and abort() when the allocator fails;
 *  - a tensor-sized allocation (its size comes from a shape, a file or the wire) is
 *    checked, and its failure becomes a RESOURCE_EXHAUSTED status (or a MemoryError-like
 *    exception in the shell) that names the size, so one huge request never kills a task.
 * scripts/check_alloc.sh (ctest alloc_policy) fails on a raw malloc & co. anywhere else
 * that its allowlist does not give a reason for.
 * base/ sits below every layer: it includes only the C library, and every layer may
 * include it. */
#ifndef TFSH_BASE_ALLOC_H
#define TFSH_BASE_ALLOC_H

#include <stdarg.h>
#include <stddef.h>

/* Print "tfsh: out of memory (n bytes)" to stderr and abort(). */
_Noreturn void x_oom(size_t n);

void *xmalloc(size_t n);                 /* never NULL; n == 0 gives a unique pointer */
void *xcalloc(size_t count, size_t size);   /* zeroed; count * size overflow is fatal too */
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* A malloc'd formatted string (vasprintf), never NULL. */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *xvasprintf(const char *fmt, va_list ap);

#endif
