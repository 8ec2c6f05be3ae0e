/* Checkpoint files: TensorFlow's tensor bundles (checkpoint V2), read and written, and
 * tfsh's earlier layout ("TFSHCKPT", version 1), read. ops/CHECKPOINT.md is the long form.
 *
 *   PREFIX.index                  a LevelDB-style table (blocks of prefix-compressed keys,
 *                                 masked CRC32C per block, a 48-byte footer): under the empty
 *                                 key a BundleHeaderProto, under each tensor's name a
 *                                 BundleEntryProto (runtime/proto/bundle.proto, protobuf-c)
 *   PREFIX.data-SSSSS-of-NNNNN    the tensors' bytes: numbers little-endian row-major;
 *                                 strings as varint64 lengths, a masked CRC32C of the lengths
 *                                 (as u32), then the bytes
 *
 * A partitioned variable's entry lists its slices; each slice is an entry of its own under a
 * key made by TF's EncodeTensorNameSlice (OrderedCode), and rt_bundle_read assembles them.
 * Every reader checks every length and offset against the file and fails with DATA_LOSS
 * naming the file and the offset, never trusting a count from the file. */
#ifndef TFSH_BUNDLE_H
#define TFSH_BUNDLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/bytes.h"
#include "base/status.h"
#include "runtime/tensor.h"

typedef enum rt_bundle_format {
  RT_BUNDLE_TF = 0,      /* TensorFlow's tensor bundle (what tfsh writes) */
  RT_BUNDLE_TFSH1 = 1,   /* tfsh's first layout: read only */
} rt_bundle_format;

typedef struct rt_bundle_slice {
  int ndims;
  int64_t start[RT_MAX_DIMS], length[RT_MAX_DIMS];   /* length -1: the whole dimension */
} rt_bundle_slice;

typedef struct rt_bundle_entry {
  char *name;            /* the key (a slice's key is binary, OrderedCode) */
  size_t name_len;
  rt_dtype dtype;        /* TF's DataType number; may be one tfsh has no kernels for */
  rt_shape shape;
  uint32_t shard;
  uint64_t offset, size;
  uint32_t crc;          /* CRC32C of the stored bytes, unmasked */
  int n_slices;          /* > 0: a partitioned tensor stored as these slices */
  rt_bundle_slice *slices;
} rt_bundle_entry;

typedef struct rt_bundle_index {
  rt_bundle_format format;
  uint32_t num_shards;
  int n;                 /* entries, sorted by key (bytewise) */
  rt_bundle_entry *e;
} rt_bundle_index;

/* CRC32C (Castagnoli), and TF's masking of stored CRCs. */
uint32_t rt_crc32c_extend(uint32_t crc, const void *data, size_t n);
static inline uint32_t rt_crc32c(const void *data, size_t n) { return rt_crc32c_extend(0, data, n); }
static inline uint32_t rt_crc32c_mask(uint32_t c) { return ((c >> 15) | (c << 17)) + 0xa282ead8u; }
static inline uint32_t rt_crc32c_unmask(uint32_t m) {
  uint32_t r = m - 0xa282ead8u;
  return (r >> 17) | (r << 15);
}

/* Bytes a tensor takes in a data file, and writing them (dst must hold that many); *crc is
 * the CRC32C of what was written. A NULL buffer (uninitialized) writes zeros. */
size_t rt_bundle_tensor_size(const rt_tensor *t);
void rt_bundle_tensor_write(const rt_tensor *t, unsigned char *dst, uint32_t *crc);

/* Read PREFIX.index (either format). Errors: NOT_FOUND with TF's words when it does not
 * exist; DATA_LOSS naming the file and the offset when it is damaged. */
int rt_bundle_index_read(const char *prefix, rt_bundle_index *ix, rt_status *st);
/* Parse an index held in memory; `path` names it in errors (the fuzz target's entry). */
int rt_bundle_index_parse(const unsigned char *p, size_t n, const char *path, rt_bundle_index *ix,
                          rt_status *st);
/* Encode ix (its entries in any order; this sorts them) as TF's .index table. *out is
 * malloc'd. RESOURCE_EXHAUSTED when memory runs out. */
int rt_bundle_index_encode(rt_bundle_index *ix, unsigned char **out, size_t *n, rt_status *st);
void rt_bundle_index_free(rt_bundle_index *ix);
/* The entry named `name` (a tensor, not a slice key), or NULL. */
rt_bundle_entry *rt_bundle_find(const rt_bundle_index *ix, const char *name);
/* Read one tensor (assembling a partitioned one from its slices), checking its CRC. */
int rt_bundle_read(const char *prefix, const rt_bundle_index *ix, const rt_bundle_entry *e,
                   rt_tensor **out, rt_status *st);
/* "PREFIX.data-0000k-of-0000n" */
void rt_bundle_data_name(char *buf, size_t n, const char *prefix, int shard, int nshards);
/* Partitioned tensors (TF's slices). The key of a slice's entry (EncodeTensorNameSlice),
 * a slice's shape, TF's shape_and_slices spec ("4 2 0,2:-"; "" is no slice: full->ndims
 * stays 0 only for a scalar spec), and one slice of a whole tensor. */
void rt_bundle_slice_key(const char *name, size_t n, const rt_bundle_slice *sl, bytes_buf *key);
rt_shape rt_bundle_slice_shape(const rt_shape *full, const rt_bundle_slice *sl);
int rt_bundle_parse_spec(const char *spec, rt_shape *full, rt_bundle_slice *sl, rt_status *st);
int rt_bundle_extract(const rt_tensor *full, const rt_bundle_slice *sl, rt_tensor **out, rt_status *st);

/* Entries that are tensors (not slices), for listing: calls fn(entry, arg) in name order. */
void rt_bundle_each(const rt_bundle_index *ix, void (*fn)(const rt_bundle_entry *, void *), void *arg);

#endif
