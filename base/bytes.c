#include "base/bytes.h"

#include <stdlib.h>
#include <string.h>

void bytes_reserve(bytes_buf *b, size_t n) {
  if (b->oom || b->n + n <= b->cap) return;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->n + n) cap *= 2;
  unsigned char *np = realloc(b->p, cap);
  if (!np) b->oom = true;
  else b->p = np, b->cap = cap;
}

void bytes_put(bytes_buf *b, const void *d, size_t n) {
  if (!n) return;
  bytes_reserve(b, n);
  if (b->oom) return;
  memcpy(b->p + b->n, d, n);
  b->n += n;
}

void bytes_u8(bytes_buf *b, unsigned v) {
  unsigned char c = (unsigned char)v;
  bytes_put(b, &c, 1);
}

void bytes_u32(bytes_buf *b, uint32_t v) {
  unsigned char c[4] = {v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, v >> 24};
  bytes_put(b, c, 4);
}

void bytes_u64(bytes_buf *b, uint64_t v) {
  bytes_u32(b, (uint32_t)v);
  bytes_u32(b, (uint32_t)(v >> 32));
}

void bytes_varint(bytes_buf *b, uint64_t v) {
  unsigned char c[10];
  int k = 0;
  while (v >= 0x80) c[k++] = (unsigned char)((v & 0x7f) | 0x80), v >>= 7;
  c[k++] = (unsigned char)v;
  bytes_put(b, c, (size_t)k);
}
