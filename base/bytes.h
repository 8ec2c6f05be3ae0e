/* A growable byte buffer for what is being built to write to a file (a checkpoint's
 * index and data, an event record). Its size follows the data, so running out of memory
 * is remembered (oom) for the caller to report as RESOURCE_EXHAUSTED, not fatal
 * (base/alloc.h's policy). Zero-initialise one; free(b.p) when done. */
#ifndef TFSH_BASE_BYTES_H
#define TFSH_BASE_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct bytes_buf {
  unsigned char *p;
  size_t n, cap;
  bool oom;          /* a growth failed: what follows was dropped */
} bytes_buf;

void bytes_put(bytes_buf *b, const void *d, size_t n);
void bytes_reserve(bytes_buf *b, size_t n);   /* room for n more without growing */
void bytes_u8(bytes_buf *b, unsigned v);
void bytes_u32(bytes_buf *b, uint32_t v);    /* little-endian */
void bytes_u64(bytes_buf *b, uint64_t v);
void bytes_varint(bytes_buf *b, uint64_t v); /* protobuf's and LevelDB's base-128 */

#endif
