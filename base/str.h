/* snprintf's truncating appends without its format parser, for the paths that name
 * every node of a graph (a 100k-node graph called snprintf a million times). Each writes
 * what fits of its piece at buf + off, keeps buf NUL-terminated within n, and returns
 * off + the piece's full length, as chained snprintf calls would. */
#ifndef TFSH_BASE_STR_H
#define TFSH_BASE_STR_H

#include <stddef.h>
#include <stdint.h>

size_t str_put(char *buf, size_t n, size_t off, const char *s, size_t len);
size_t str_puts(char *buf, size_t n, size_t off, const char *s);   /* a C string */
size_t str_put_int(char *buf, size_t n, size_t off, long long v);   /* in decimal */
/* FNV-1a of s, folded to 32 bits (name tables' hash); *len gets strlen(s) unless NULL. */
uint32_t str_hash(const char *s, size_t *len);

#endif
