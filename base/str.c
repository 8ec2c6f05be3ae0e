/* Truncating appends (str.h). */
#include "base/str.h"

#include <string.h>

size_t str_put(char *buf, size_t n, size_t off, const char *s, size_t len) {
  if (off < n) {
    size_t room = n - off - 1, k = len < room ? len : room;
    memcpy(buf + off, s, k);
    buf[off + k] = '\0';
  }
  return off + len;
}

size_t str_puts(char *buf, size_t n, size_t off, const char *s) {
  return str_put(buf, n, off, s, strlen(s));
}

size_t str_put_int(char *buf, size_t n, size_t off, long long v) {
  char d[24];
  int k = sizeof d;
  unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
  do d[--k] = (char)('0' + u % 10);
  while ((u /= 10) > 0);
  if (v < 0) d[--k] = '-';
  return str_put(buf, n, off, d + k, sizeof d - (size_t)k);
}

uint32_t str_hash(const char *s, size_t *len) {
  uint64_t h = 1469598103934665603ull;
  const char *p = s;
  for (; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
  if (len) *len = (size_t)(p - s);
  return (uint32_t)(h ^ (h >> 32));
}
