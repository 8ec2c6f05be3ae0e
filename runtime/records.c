/* TFRecord framing: runtime/records.h. */
#include "runtime/records.h"

#include <string.h>

#include "runtime/bundle.h"

static void le32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static uint32_t rd32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int rt_record_write(FILE *f, const void *data, size_t n) {
  unsigned char hdr[12], tail[4];
  uint64_t len = n;
  for (int i = 0; i < 8; i++) hdr[i] = (unsigned char)(len >> (8 * i));
  le32(hdr + 8, rt_crc32c_mask(rt_crc32c(hdr, 8)));
  le32(tail, rt_crc32c_mask(rt_crc32c(data, n)));
  if (fwrite(hdr, 1, 12, f) != 12 || (n && fwrite(data, 1, n, f) != n) || fwrite(tail, 1, 4, f) != 4) return -1;
  return 0;
}

int rt_record_next(const unsigned char *buf, size_t n, size_t *off, const char *what, const unsigned char **data,
                   size_t *len, rt_status *st) {
  size_t at = *off;
  if (at >= n) return 0;
  if (n - at < 12) {
    rt_error(st, RT_DATA_LOSS, "%s: truncated record at offset %zu: %zu bytes of a 12-byte header", what, at,
                    n - at);
    return -1;
  }
  if (rt_crc32c_mask(rt_crc32c(buf + at, 8)) != rd32(buf + at + 8)) {
    rt_error(st, RT_DATA_LOSS, "%s: corrupted record at offset %zu: the length's checksum does not match", what,
                    at);
    return -1;
  }
  uint64_t l = 0;
  for (int i = 7; i >= 0; i--) l = l << 8 | buf[at + i];
  if (l > n - at - 12 || n - at - 12 - l < 4) {
    rt_error(st, RT_DATA_LOSS, "%s: truncated record at offset %zu: %llu bytes of data announced, %zu left", what,
                    at, (unsigned long long)l, n - at - 12);
    return -1;
  }
  const unsigned char *d = buf + at + 12;
  if (rt_crc32c_mask(rt_crc32c(d, (size_t)l)) != rd32(d + l)) {
    rt_error(st, RT_DATA_LOSS, "%s: corrupted record at offset %zu: the data's checksum does not match", what,
                    at);
    return -1;
  }
  *data = d;
  *len = (size_t)l;
  *off = at + 12 + (size_t)l + 4;
  return 1;
}
