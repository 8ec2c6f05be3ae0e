/* Checkpoint files: TensorFlow's tensor bundles, read and written; tfsh's first layout,
 * read. See runtime/bundle.h and ops/CHECKPOINT.md. The protobufs (BundleHeaderProto,
 * BundleEntryProto) go through protobuf-c; the table around them is LevelDB's format as
 * TensorFlow's lib/io/table writes it (uncompressed blocks). */
#include "runtime/bundle.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/alloc.h"
#include "base/bytes.h"
#include "runtime/proto/bundle.pb-c.h"

/* ---- CRC32C, slicing by 8 -------------------------------------------------------------- */

static uint32_t crc_tab[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void) {
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    crc_tab[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; i++)
    for (int t = 1; t < 8; t++) crc_tab[t][i] = (crc_tab[t - 1][i] >> 8) ^ crc_tab[0][crc_tab[t - 1][i] & 0xff];
}

uint32_t rt_crc32c_extend(uint32_t crc, const void *data, size_t n) {
  pthread_once(&crc_once, crc_init);
  const unsigned char *p = data;
  uint32_t c = ~crc;
  while (n >= 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    w ^= c;
    c = crc_tab[7][w & 0xff] ^ crc_tab[6][(w >> 8) & 0xff] ^ crc_tab[5][(w >> 16) & 0xff] ^
        crc_tab[4][(w >> 24) & 0xff] ^ crc_tab[3][(w >> 32) & 0xff] ^ crc_tab[2][(w >> 40) & 0xff] ^
        crc_tab[1][(w >> 48) & 0xff] ^ crc_tab[0][w >> 56];
    p += 8;
    n -= 8;
  }
  while (n--) c = crc_tab[0][(c ^ *p++) & 0xff] ^ (c >> 8);
  return ~c;
}

static size_t varint_len(uint64_t v) {
  size_t k = 1;
  while (v >= 0x80) v >>= 7, k++;
  return k;
}

/* ---- tensors in a data file ------------------------------------------------------------- */

size_t rt_bundle_tensor_size(const rt_tensor *t) {
  int64_t n = rt_tensor_numel(t);
  if (n < 0 || (n == 0 && t->dtype != RT_STRING)) return 0;
  if (t->dtype != RT_STRING) return (size_t)n * rt_dtype_size(t->dtype);
  const rt_str *s = rt_tensor_data(t);
  size_t total = 4;
  for (int64_t i = 0; i < n; i++) {
    size_t len = s ? s[i].len : 0;
    total += varint_len(len) + len;
  }
  return total;
}

static unsigned char *put_le32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
  return p + 4;
}

void rt_bundle_tensor_write(const rt_tensor *t, unsigned char *dst, uint32_t *crc) {
  int64_t n = rt_tensor_numel(t);
  if (n < 0 || (n == 0 && t->dtype != RT_STRING)) {
    *crc = 0;
    return;
  }
  if (t->dtype != RT_STRING) {
    size_t nb = (size_t)n * rt_dtype_size(t->dtype);
    if (rt_tensor_data(t)) memcpy(dst, rt_tensor_data(t), nb);
    else memset(dst, 0, nb);
    *crc = rt_crc32c(dst, nb);
    return;
  }
  /* TF's WriteStringTensor: varint64 lengths; the CRC32C of the lengths, each taken as a
   * little-endian u32, masked, as 4 bytes; then the bytes. The tensor's CRC runs over the
   * lengths (as u32), the 4 bytes, then the strings. */
  const rt_str *s = rt_tensor_data(t);
  uint32_t c = 0;
  unsigned char *p = dst;
  for (int64_t i = 0; i < n; i++) {
    uint64_t len = s ? s[i].len : 0;
    while (len >= 0x80) *p++ = (unsigned char)((len & 0x7f) | 0x80), len >>= 7;
    *p++ = (unsigned char)len;
    unsigned char l4[4];
    put_le32(l4, (uint32_t)(s ? s[i].len : 0));
    c = rt_crc32c_extend(c, l4, 4);
  }
  unsigned char *mk = p;
  p = put_le32(p, rt_crc32c_mask(c));
  c = rt_crc32c_extend(c, mk, 4);
  for (int64_t i = 0; i < n; i++) {
    size_t len = s ? s[i].len : 0;
    if (len) memcpy(p, s[i].ptr, len);
    c = rt_crc32c_extend(c, p, len);
    p += len;
  }
  *crc = c;
}

/* Decode a string tensor's bytes into t (numel elements). false when malformed; *crc is the
 * CRC32C TF computes over them (TF's layout only). */
static bool strings_decode(const unsigned char *p, size_t n, rt_tensor *t, int64_t numel, bool legacy, uint32_t *crc) {
  size_t off = 0;
  if (legacy) {   /* tfsh 1: per element u64 length then the bytes */
    for (int64_t k = 0; k < numel; k++) {
      if (n - off < 8) return false;
      uint64_t len = 0;
      for (int i = 7; i >= 0; i--) len = len << 8 | p[off + (size_t)i];
      off += 8;
      if (len > n - off) return false;
      if (rt_tensor_set_str(t, k, (const char *)p + off, len)) return false;
      off += len;
    }
    return off == n;
  }
  if ((uint64_t)numel > n) return false;   /* each element takes at least one byte */
  uint64_t *lens = malloc((size_t)(numel ? numel : 1) * sizeof *lens);
  if (!lens) return false;
  uint32_t c = 0;
  bool ok = true;
  for (int64_t k = 0; k < numel && ok; k++) {
    uint64_t v = 0;
    int shift = 0;
    for (;;) {
      if (off >= n || shift > 63) { ok = false; break; }
      unsigned char b = p[off++];
      v |= (uint64_t)(b & 0x7f) << shift;
      shift += 7;
      if (!(b & 0x80)) break;
    }
    lens[k] = v;
    unsigned char l4[4];
    put_le32(l4, (uint32_t)v);
    c = rt_crc32c_extend(c, l4, 4);
  }
  if (ok && n - off < 4) ok = false;
  if (ok) c = rt_crc32c_extend(c, p + off, 4);
  off += 4;
  for (int64_t k = 0; k < numel && ok; k++) {
    if (lens[k] > n - off) { ok = false; break; }
    if (rt_tensor_set_str(t, k, (const char *)p + off, lens[k])) ok = false;
    c = rt_crc32c_extend(c, p + off, lens[k]);
    off += lens[k];
  }
  *crc = c;
  free(lens);
  return ok && off == n;
}

/* ---- protobuf <-> entries --------------------------------------------------------------- */

static void shape_to_proto(const rt_shape *s, Tensorflow__TensorShapeProto *sp, Tensorflow__TensorShapeProto__Dim *dims,
                           Tensorflow__TensorShapeProto__Dim **dimp) {
  tensorflow__tensor_shape_proto__init(sp);
  for (int d = 0; d < s->ndims; d++) {
    tensorflow__tensor_shape_proto__dim__init(&dims[d]);
    dims[d].size = s->dims[d];
    dimp[d] = &dims[d];
  }
  sp->n_dim = s->ndims > 0 ? (size_t)s->ndims : 0;
  sp->dim = dimp;
}

static bool shape_from_proto(const Tensorflow__TensorShapeProto *sp, rt_shape *s) {
  if (!sp) {
    *s = rt_shape_scalar();
    return true;
  }
  if (sp->unknown_rank || sp->n_dim > RT_MAX_DIMS) return false;
  s->ndims = (int)sp->n_dim;
  for (size_t d = 0; d < sp->n_dim; d++) {
    if (sp->dim[d]->size < 0) return false;
    s->dims[d] = sp->dim[d]->size;
  }
  return rt_shape_numel(s) >= 0;
}

/* ---- the table (LevelDB format) --------------------------------------------------------- */

#define TABLE_MAGIC 0xdb4775248b80fb57ull
#define FOOTER_LEN 48
#define BLOCK_SIZE 4096
#define RESTART_INTERVAL 16

typedef struct block_builder {
  bytes_buf b;
  uint32_t *restarts;
  int n_restarts, cap_restarts, counter, interval;
  char *last;
  size_t last_len;
} block_builder;

static void bb_init(block_builder *bb, int interval) {
  memset(bb, 0, sizeof *bb);
  bb->interval = interval;
}
static void bb_reset(block_builder *bb) {
  bb->b.n = 0;
  bb->n_restarts = 0;
  bb->counter = 0;
  bb->last_len = 0;
}
static void bb_add(block_builder *bb, const char *key, size_t klen, const void *val, size_t vlen) {
  size_t shared = 0;
  if (bb->counter < bb->interval && bb->n_restarts > 0) {
    while (shared < klen && shared < bb->last_len && bb->last[shared] == key[shared]) shared++;
  } else {
    if (bb->n_restarts == bb->cap_restarts) {
      bb->cap_restarts = bb->cap_restarts ? 2 * bb->cap_restarts : 16;
      bb->restarts = xrealloc(bb->restarts, (size_t)bb->cap_restarts * sizeof *bb->restarts);
    }
    bb->restarts[bb->n_restarts++] = (uint32_t)bb->b.n;
    bb->counter = 0;
  }
  bytes_varint(&bb->b, shared);
  bytes_varint(&bb->b, klen - shared);
  bytes_varint(&bb->b, vlen);
  bytes_put(&bb->b, key + shared, klen - shared);
  bytes_put(&bb->b, val, vlen);
  bb->last = xrealloc(bb->last, klen + 1);
  memcpy(bb->last, key, klen);
  bb->last_len = klen;
  bb->counter++;
}
/* Finish the block (restart array, count) and append it with its trailer to out; the
 * handle (offset, size) goes to h. */
static void bb_flush(block_builder *bb, bytes_buf *out, uint64_t h[2]) {
  if (bb->n_restarts == 0) {
    if (bb->n_restarts == bb->cap_restarts) {
      bb->cap_restarts = 16;
      bb->restarts = xrealloc(bb->restarts, 16 * sizeof *bb->restarts);
    }
    bb->restarts[bb->n_restarts++] = 0;
  }
  for (int i = 0; i < bb->n_restarts; i++) bytes_u32(&bb->b, bb->restarts[i]);
  bytes_u32(&bb->b, (uint32_t)bb->n_restarts);
  h[0] = out->n;
  h[1] = bb->b.n;
  bytes_put(out, bb->b.p, bb->b.n);
  unsigned char type = 0;   /* kNoCompression */
  bytes_put(out, &type, 1);
  uint32_t c = rt_crc32c_extend(rt_crc32c(bb->b.p, bb->b.n), &type, 1);
  bytes_u32(out, rt_crc32c_mask(c));
  if (bb->b.oom) out->oom = true;
  bb_reset(bb);
}
/* Flush a data block and add its index entry: its last key (>= every key in it, < every
 * key after it) and its handle. */
static void flush_data(block_builder *data, block_builder *index, bytes_buf *file) {
  char *last = xmalloc(data->last_len + 1);
  memcpy(last, data->last, data->last_len);
  size_t last_len = data->last_len;
  uint64_t h[2];
  bb_flush(data, file, h);
  bytes_buf hb = {0};
  bytes_varint(&hb, h[0]);
  bytes_varint(&hb, h[1]);
  bb_add(index, last, last_len, hb.p, hb.n);
  if (hb.oom) file->oom = true;
  free(hb.p);
  free(last);
}

static void bb_free(block_builder *bb) {
  free(bb->b.p);
  free(bb->restarts);
  free(bb->last);
}

static int key_cmp(const char *a, size_t an, const char *b, size_t bn) {
  int c = memcmp(a, b, an < bn ? an : bn);
  if (c) return c;
  return an < bn ? -1 : an > bn;
}
static int cmp_entry(const void *a, const void *b) {
  const rt_bundle_entry *x = a, *y = b;
  return key_cmp(x->name, x->name_len, y->name, y->name_len);
}

int rt_bundle_index_encode(rt_bundle_index *ix, unsigned char **out, size_t *n, rt_status *st) {
  for (int i = 0; i < ix->n; i++)
    if (!ix->e[i].name_len && ix->e[i].name) ix->e[i].name_len = strlen(ix->e[i].name);
  qsort(ix->e, (size_t)ix->n, sizeof *ix->e, cmp_entry);
  bytes_buf file = {0};
  block_builder data, index;
  bb_init(&data, RESTART_INTERVAL);
  bb_init(&index, 1);

  /* the header, under the empty key */
  Tensorflow__BundleHeaderProto hdr = TENSORFLOW__BUNDLE_HEADER_PROTO__INIT;
  Tensorflow__VersionDef ver = TENSORFLOW__VERSION_DEF__INIT;
  ver.producer = 1;   /* TF's kTensorBundleVersion */
  hdr.num_shards = (int32_t)ix->num_shards;
  hdr.version = &ver;
  size_t hn = tensorflow__bundle_header_proto__get_packed_size(&hdr);
  unsigned char *hp = xmalloc(hn ? hn : 1);
  tensorflow__bundle_header_proto__pack(&hdr, hp);
  bb_add(&data, "", 0, hp, hn);
  free(hp);

  unsigned char *vp = NULL;
  size_t vcap = 0;
  for (int i = 0; i < ix->n; i++) {
    const rt_bundle_entry *e = &ix->e[i];
    Tensorflow__BundleEntryProto ep = TENSORFLOW__BUNDLE_ENTRY_PROTO__INIT;
    Tensorflow__TensorShapeProto sp;
    Tensorflow__TensorShapeProto__Dim dims[RT_MAX_DIMS], *dimp[RT_MAX_DIMS];
    shape_to_proto(&e->shape, &sp, dims, dimp);
    ep.dtype = (Tensorflow__DataType)e->dtype;
    ep.shape = &sp;
    Tensorflow__TensorSliceProto *slp = NULL, **slpp = NULL;
    Tensorflow__TensorSliceProto__Extent *ext = NULL, **extp = NULL;
    if (e->n_slices) {   /* a partitioned tensor: dtype, full shape and the slices only, as TF */
      int nd = e->shape.ndims > 0 ? e->shape.ndims : 1;
      slp = xcalloc((size_t)e->n_slices, sizeof *slp);
      slpp = xcalloc((size_t)e->n_slices, sizeof *slpp);
      ext = xcalloc((size_t)e->n_slices * (size_t)nd, sizeof *ext);
      extp = xcalloc((size_t)e->n_slices * (size_t)nd, sizeof *extp);
      for (int s = 0; s < e->n_slices; s++) {
        tensorflow__tensor_slice_proto__init(&slp[s]);
        slp[s].n_extent = (size_t)e->slices[s].ndims;
        slp[s].extent = &extp[s * nd];
        for (int d = 0; d < e->slices[s].ndims; d++) {
          Tensorflow__TensorSliceProto__Extent *x = &ext[s * nd + d];
          tensorflow__tensor_slice_proto__extent__init(x);
          x->start = e->slices[s].start[d];
          if (e->slices[s].length[d] >= 0) {
            x->has_length_case = TENSORFLOW__TENSOR_SLICE_PROTO__EXTENT__HAS_LENGTH_LENGTH;
            x->length = e->slices[s].length[d];
          }
          extp[s * nd + d] = x;
        }
        slpp[s] = &slp[s];
      }
      ep.n_slices = (size_t)e->n_slices;
      ep.slices = slpp;
    } else {
      ep.shard_id = (int32_t)e->shard;
      ep.offset = (int64_t)e->offset;
      ep.size = (int64_t)e->size;
      ep.crc32c = rt_crc32c_mask(e->crc);
    }
    size_t vn = tensorflow__bundle_entry_proto__get_packed_size(&ep);
    if (vn > vcap) vp = xrealloc(vp, vcap = vn);
    tensorflow__bundle_entry_proto__pack(&ep, vp);
    bb_add(&data, e->name, e->name_len, vp, vn);
    free(slp), free(slpp), free(ext), free(extp);
    if (data.b.n >= BLOCK_SIZE && i + 1 < ix->n) flush_data(&data, &index, &file);
  }
  free(vp);
  flush_data(&data, &index, &file);
  uint64_t meta_h[2], index_h[2];
  block_builder meta;
  bb_init(&meta, RESTART_INTERVAL);
  bb_flush(&meta, &file, meta_h);   /* an empty metaindex block */
  bb_flush(&index, &file, index_h);
  bytes_buf footer = {0};
  bytes_varint(&footer, meta_h[0]);
  bytes_varint(&footer, meta_h[1]);
  bytes_varint(&footer, index_h[0]);
  bytes_varint(&footer, index_h[1]);
  unsigned char zeros[40] = {0};
  bytes_put(&footer, zeros, 40 - footer.n);
  bytes_u32(&footer, (uint32_t)TABLE_MAGIC);
  bytes_u32(&footer, (uint32_t)(TABLE_MAGIC >> 32));
  bytes_put(&file, footer.p, footer.n);
  bool oom = file.oom || footer.oom;
  free(footer.p);
  bb_free(&data);
  bb_free(&index);
  bb_free(&meta);
  if (oom) {
    free(file.p);
    return rt_error(st, RT_RESOURCE_EXHAUSTED, "out of memory encoding a checkpoint index");
  }
  *out = file.p;
  *n = file.n;
  return RT_OK;
}

/* ---- reading the table ------------------------------------------------------------------ */

typedef struct reader {
  const unsigned char *p;
  size_t n;
  const char *path;
  rt_status *st;
} reader;

static bool get_varint(const unsigned char *p, size_t n, size_t *off, uint64_t *v) {
  *v = 0;
  for (int s = 0; s < 64; s += 7) {
    if (*off >= n) return false;
    unsigned char b = p[(*off)++];
    *v |= (uint64_t)(b & 0x7f) << s;
    if (!(b & 0x80)) return true;
  }
  return false;
}
static uint32_t get_le32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int damaged(reader *r, size_t off, const char *what) {
  return rt_error(r->st, RT_DATA_LOSS, "%s is damaged at offset %zu: %s (truncated or corrupt checkpoint index)",
                  r->path, off, what);
}

/* Check a block handle and its trailer; body and len give its contents. */
static int block_at(reader *r, uint64_t off, uint64_t size, const unsigned char **body, size_t *len) {
  if (off > r->n || size > r->n - off || r->n - off - size < 5)
    return damaged(r, (size_t)off, "a block reaches past the end of the file");
  const unsigned char *b = r->p + off;
  if (b[size] != 0)
    return rt_error(r->st, RT_UNIMPLEMENTED, "%s: the block at offset %llu is compressed (type %d); tfsh reads "
                    "uncompressed checkpoint indexes only (as TensorFlow writes them)", r->path,
                    (unsigned long long)off, b[size]);
  uint32_t stored = rt_crc32c_unmask(get_le32(b + size + 1));
  uint32_t calc = rt_crc32c(b, (size_t)size + 1);
  if (stored != calc)
    return rt_error(r->st, RT_DATA_LOSS, "Checksum does not match in %s: block at offset %llu: stored 0x%08x vs. "
                    "calculated 0x%08x (truncated or corrupt index)", r->path, (unsigned long long)off, stored, calc);
  if (size < 4) return damaged(r, (size_t)off, "a block too short for its restart count");
  uint32_t nr = get_le32(b + size - 4);
  if (nr > (size - 4) / 4) return damaged(r, (size_t)off, "a block's restart count is larger than the block");
  *body = b;
  *len = (size_t)size - 4 - 4 * (size_t)nr;
  return RT_OK;
}

/* Walk a block's entries: fn(key, klen, val, vlen, file offset of the entry, arg). */
typedef int (*entry_fn)(reader *r, const char *k, size_t kn, const unsigned char *v, size_t vn, size_t at, void *arg);

static int block_walk(reader *r, const unsigned char *b, size_t len, entry_fn fn, void *arg) {
  size_t off = 0;
  char *key = NULL;
  size_t klen = 0;
  int rc = RT_OK;
  while (off < len && !rc) {
    size_t at = (size_t)(b - r->p) + off;
    uint64_t shared, ns, vn;
    if (!get_varint(b, len, &off, &shared) || !get_varint(b, len, &off, &ns) || !get_varint(b, len, &off, &vn)) {
      rc = damaged(r, at, "a malformed entry header");
      break;
    }
    if (shared > klen || ns > len - off || vn > len - off - ns) {
      rc = damaged(r, at, "an entry's lengths reach past its block");
      break;
    }
    char *nk = malloc((size_t)(shared + ns) + 1);
    if (!nk) {
      rc = rt_error(r->st, RT_RESOURCE_EXHAUSTED, "%s: out of memory", r->path);
      break;
    }
    if (shared) memcpy(nk, key, (size_t)shared);
    memcpy(nk + shared, b + off, (size_t)ns);
    nk[shared + ns] = '\0';
    free(key);
    key = nk;
    klen = (size_t)(shared + ns);
    off += (size_t)ns;
    rc = fn(r, key, klen, b + off, (size_t)vn, at, arg);
    off += (size_t)vn;
  }
  free(key);
  return rc;
}

static int add_entry(reader *r, const char *k, size_t kn, const unsigned char *v, size_t vn, size_t at, void *arg) {
  rt_bundle_index *ix = arg;
  if (kn == 0) {   /* the header */
    Tensorflow__BundleHeaderProto *h = tensorflow__bundle_header_proto__unpack(NULL, vn, v);
    if (!h) return damaged(r, at, "the BundleHeaderProto does not parse");
    int rc = RT_OK;
    if (h->num_shards < 1 || h->num_shards > 100000) rc = damaged(r, at, "num_shards is out of range");
    else if (h->endianness != TENSORFLOW__BUNDLE_HEADER_PROTO__ENDIANNESS__LITTLE)
      rc = rt_error(r->st, RT_UNIMPLEMENTED, "%s: a big-endian checkpoint; tfsh reads little-endian ones", r->path);
    else if (h->version && h->version->min_consumer > 1)
      rc = rt_error(r->st, RT_INVALID_ARGUMENT, "%s: checkpoint version %d needs a reader of version %d or later",
                    r->path, h->version->producer, h->version->min_consumer);
    else ix->num_shards = (uint32_t)h->num_shards;
    tensorflow__bundle_header_proto__free_unpacked(h, NULL);
    return rc;
  }
  Tensorflow__BundleEntryProto *ep = tensorflow__bundle_entry_proto__unpack(NULL, vn, v);
  if (!ep) return damaged(r, at, "a BundleEntryProto does not parse");
  int rc = RT_OK;
  rt_bundle_entry e = {0};
  if (ep->shard_id < 0 || ep->offset < 0 || ep->size < 0) rc = damaged(r, at, "an entry's shard, offset or size is negative");
  else if (!shape_from_proto(ep->shape, &e.shape)) rc = damaged(r, at, "an entry's shape is not a known shape of at most 8 dims");
  else if (ep->n_slices > 4096) rc = damaged(r, at, "too many slices");
  if (!rc && ep->n_slices) {
    e.slices = calloc(ep->n_slices, sizeof *e.slices);
    if (!e.slices) rc = rt_error(r->st, RT_RESOURCE_EXHAUSTED, "%s: out of memory", r->path);
    for (size_t s = 0; !rc && s < ep->n_slices; s++) {
      const Tensorflow__TensorSliceProto *sl = ep->slices[s];
      if ((int)sl->n_extent != e.shape.ndims) {
        rc = damaged(r, at, "a slice's rank differs from its tensor's");
        break;
      }
      e.slices[s].ndims = e.shape.ndims;
      for (size_t d = 0; d < sl->n_extent; d++) {
        const Tensorflow__TensorSliceProto__Extent *x = sl->extent[d];
        int64_t len = x->has_length_case == TENSORFLOW__TENSOR_SLICE_PROTO__EXTENT__HAS_LENGTH_LENGTH ? x->length : -1;
        int64_t full = e.shape.dims[d];
        if (x->start < 0 || x->start > full || (len >= 0 && len > full - x->start) || len < -1) {
          rc = damaged(r, at, "a slice reaches outside its tensor");
          break;
        }
        e.slices[s].start[d] = x->start;
        e.slices[s].length[d] = len;
      }
    }
    e.n_slices = (int)ep->n_slices;
  }
  if (!rc) {
    e.name = xmalloc(kn + 1);   /* a slice's key holds NULs */
    memcpy(e.name, k, kn);
    e.name[kn] = '\0';
    e.name_len = kn;
    e.dtype = (rt_dtype)ep->dtype;
    e.shard = (uint32_t)ep->shard_id;
    e.offset = (uint64_t)ep->offset;
    e.size = (uint64_t)ep->size;
    e.crc = rt_crc32c_unmask(ep->crc32c);
    if (ix->n % 64 == 0) ix->e = xrealloc(ix->e, ((size_t)ix->n + 64) * sizeof *ix->e);
    ix->e[ix->n++] = e;
  } else {
    free(e.slices);
  }
  tensorflow__bundle_entry_proto__free_unpacked(ep, NULL);
  return rc;
}

typedef struct walk_ix {
  rt_bundle_index *ix;
} walk_ix;

static int index_block_entry(reader *r, const char *k, size_t kn, const unsigned char *v, size_t vn, size_t at,
                             void *arg) {
  size_t off = 0;
  uint64_t bo, bs;
  if (!get_varint(v, vn, &off, &bo) || !get_varint(v, vn, &off, &bs)) return damaged(r, at, "a malformed block handle");
  const unsigned char *b = NULL;   /* set by block_at when it succeeds (gcc -O3 cannot tell) */
  size_t len = 0;
  int rc = block_at(r, bo, bs, &b, &len);
  if (rc) return rc;
  return block_walk(r, b, len, add_entry, arg);
}

static int parse_table(reader *r, rt_bundle_index *ix) {
  if (r->n < FOOTER_LEN) return damaged(r, 0, "shorter than a table footer");
  const unsigned char *f = r->p + r->n - FOOTER_LEN;
  uint64_t magic = (uint64_t)get_le32(f + 40) | (uint64_t)get_le32(f + 44) << 32;
  if (magic != TABLE_MAGIC)
    return rt_error(r->st, RT_DATA_LOSS, "%s is not a checkpoint index: no table magic at offset %zu (not a "
                    "TensorFlow V2 checkpoint, or truncated)", r->path, r->n - 8);
  size_t off = 0;
  uint64_t mo, ms, io, is;
  if (!get_varint(f, 40, &off, &mo) || !get_varint(f, 40, &off, &ms) || !get_varint(f, 40, &off, &io) ||
      !get_varint(f, 40, &off, &is))
    return damaged(r, r->n - FOOTER_LEN, "a malformed footer");
  const unsigned char *b = NULL;
  size_t len = 0;
  int rc = block_at(r, io, is, &b, &len);
  if (rc) return rc;
  ix->num_shards = 0;
  rc = block_walk(r, b, len, index_block_entry, ix);
  if (rc) return rc;
  if (ix->num_shards == 0) return damaged(r, 0, "no BundleHeaderProto (the empty key)");
  for (int i = 0; i < ix->n; i++) {
    if (ix->e[i].shard >= ix->num_shards) return damaged(r, 0, "an entry names a shard past num_shards");
    if (i && cmp_entry(&ix->e[i - 1], &ix->e[i]) >= 0) return damaged(r, 0, "keys out of order");
  }
  return RT_OK;
}

/* tfsh's first layout (ops/CHECKPOINT.md before TF's bundles). */
static int parse_tfsh1(reader *r, rt_bundle_index *ix) {
  const unsigned char *p = r->p;
  size_t n = r->n;
  if (n < 24) return damaged(r, n, "truncated: too short");
  uint32_t stored = get_le32(p + n - 4), computed = rt_crc32c(p, n - 4);
  if (stored != computed)
    return rt_error(r->st, RT_DATA_LOSS, "Checksum does not match in %s: stored 0x%08x vs. calculated 0x%08x "
                    "(truncated or corrupt index)", r->path, stored, computed);
  size_t end = n - 4, off = 8;
#define NEED(k) do { if (end - off < (k)) return damaged(r, off, "a malformed index entry"); } while (0)
  uint32_t version = get_le32(p + off), shards = get_le32(p + off + 4), cnt = get_le32(p + off + 8);
  off += 12;
  if (version != 1 || shards < 1 || cnt > n / 8) return damaged(r, 8, "unsupported version or bad header");
  ix->format = RT_BUNDLE_TFSH1;
  ix->num_shards = shards;
  ix->e = calloc(cnt ? cnt : 1, sizeof *ix->e);
  if (!ix->e) return rt_error(r->st, RT_RESOURCE_EXHAUSTED, "%s: out of memory for %u entries", r->path, cnt);
  for (uint32_t i = 0; i < cnt; i++) {
    NEED(4);
    uint32_t len = get_le32(p + off);
    off += 4;
    NEED(len);
    rt_bundle_entry *e = &ix->e[ix->n];
    e->name = xstrndup((const char *)p + off, len);
    e->name_len = strlen(e->name);
    ix->n++;
    off += len;
    NEED(8);
    e->dtype = (rt_dtype)get_le32(p + off);
    uint32_t nd = get_le32(p + off + 4);
    off += 8;
    if (nd > RT_MAX_DIMS) return damaged(r, off, "more than 8 dims");
    e->shape.ndims = (int)nd;
    NEED(8 * (size_t)nd + 4 + 16 + 4);
    for (uint32_t d = 0; d < nd; d++, off += 8)
      e->shape.dims[d] = (int64_t)((uint64_t)get_le32(p + off) | (uint64_t)get_le32(p + off + 4) << 32);
    e->shard = get_le32(p + off);
    e->offset = (uint64_t)get_le32(p + off + 4) | (uint64_t)get_le32(p + off + 8) << 32;
    e->size = (uint64_t)get_le32(p + off + 12) | (uint64_t)get_le32(p + off + 16) << 32;
    e->crc = get_le32(p + off + 20);
    off += 24;
    if (e->shard >= shards || rt_shape_numel(&e->shape) < 0) return damaged(r, off, "a malformed index entry");
  }
#undef NEED
  qsort(ix->e, (size_t)ix->n, sizeof *ix->e, cmp_entry);
  return RT_OK;
}

int rt_bundle_index_parse(const unsigned char *p, size_t n, const char *path, rt_bundle_index *ix, rt_status *st) {
  memset(ix, 0, sizeof *ix);
  reader r = {p, n, path, st};
  int rc = n >= 8 && !memcmp(p, "TFSHCKPT", 8) ? parse_tfsh1(&r, ix) : parse_table(&r, ix);
  if (rc) rt_bundle_index_free(ix);
  return rc;
}

int rt_bundle_index_read(const char *prefix, rt_bundle_index *ix, rt_status *st) {
  char path[4200];
  snprintf(path, sizeof path, "%s.index", prefix);
  memset(ix, 0, sizeof *ix);
  FILE *f = fopen(path, "rb");
  if (!f) {
    if (errno == ENOENT)
      return rt_error(st, RT_NOT_FOUND, "Unsuccessful TensorSliceReader constructor: Failed to find any "
                      "matching files for %s (no file %s)", prefix, path);
    return rt_error(st, RT_UNKNOWN, "%s: %s", path, strerror(errno));
  }
  bytes_buf b = {0};
  unsigned char chunk[65536];
  size_t k;
  while ((k = fread(chunk, 1, sizeof chunk, f)) > 0) bytes_put(&b, chunk, k);
  bool err = ferror(f);
  fclose(f);
  if (b.oom || err) {
    free(b.p);
    return rt_error(st, b.oom ? RT_RESOURCE_EXHAUSTED : RT_UNKNOWN, "%s: %s", path,
                    b.oom ? "out of memory" : "read error");
  }
  int rc = rt_bundle_index_parse(b.p ? b.p : (const unsigned char *)"", b.n, path, ix, st);
  free(b.p);
  return rc;
}

void rt_bundle_index_free(rt_bundle_index *ix) {
  for (int i = 0; i < ix->n; i++) {
    free(ix->e[i].name);
    free(ix->e[i].slices);
  }
  free(ix->e);
  ix->e = NULL;
  ix->n = 0;
}

static rt_bundle_entry *find_key(const rt_bundle_index *ix, const char *k, size_t kn) {
  rt_bundle_entry key = {.name = (char *)k, .name_len = kn};
  return ix->n ? bsearch(&key, ix->e, (size_t)ix->n, sizeof *ix->e, cmp_entry) : NULL;
}

rt_bundle_entry *rt_bundle_find(const rt_bundle_index *ix, const char *name) {
  return name[0] ? find_key(ix, name, strlen(name)) : NULL;
}

void rt_bundle_each(const rt_bundle_index *ix, void (*fn)(const rt_bundle_entry *, void *), void *arg) {
  for (int i = 0; i < ix->n; i++)
    if (ix->e[i].name_len && ix->e[i].name[0]) fn(&ix->e[i], arg);
}

void rt_bundle_data_name(char *b, size_t n, const char *prefix, int shard, int nshards) {
  snprintf(b, n, "%s.data-%05d-of-%05d", prefix, shard, nshards);
}

/* ---- reading tensors ---------------------------------------------------------------------- */

/* OrderedCode (TF's lib/strings/ordered_code), as EncodeTensorNameSlice uses it. */
static void oc_num(bytes_buf *b, uint64_t v) {
  unsigned char t[9];
  int len = 0;
  while (v) t[8 - len++] = (unsigned char)(v & 0xff), v >>= 8;
  unsigned char l = (unsigned char)len;
  bytes_put(b, &l, 1);
  bytes_put(b, t + 9 - len, (size_t)len);
}
static void oc_string(bytes_buf *b, const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == 0x00) bytes_put(b, "\x00\xff", 2);
    else if (c == 0xff) bytes_put(b, "\xff\x00", 2);
    else bytes_put(b, &c, 1);
  }
  bytes_put(b, "\x00\x01", 2);
}
static void oc_signed(bytes_buf *b, int64_t val) {
  static const unsigned char hdr[11][2] = {{0, 0}, {0x80, 0}, {0xc0, 0}, {0xe0, 0}, {0xf0, 0}, {0xf8, 0},
                                           {0xfc, 0}, {0xfe, 0}, {0xff, 0}, {0xff, 0x80}, {0xff, 0xc0}};
  uint64_t x = val < 0 ? ~(uint64_t)val : (uint64_t)val;
  if (x < 64) {
    unsigned char c = (unsigned char)(hdr[1][0] ^ (unsigned char)val);
    bytes_put(b, &c, 1);
    return;
  }
  unsigned char t[10];
  unsigned char sign = val < 0 ? 0xff : 0x00;
  t[0] = t[1] = sign;
  for (int i = 0; i < 8; i++) t[2 + i] = (unsigned char)((uint64_t)val >> (56 - 8 * i));
  int len = 2;   /* bytes needed: x < 2^(7*len - 1) */
  while (len < 10 && (len * 7 - 1 >= 64 ? false : x >= (1ull << (len * 7 - 1)))) len++;
  unsigned char *begin = t + 10 - len;
  begin[0] ^= hdr[len][0];
  begin[1] ^= hdr[len][1];
  bytes_put(b, begin, (size_t)len);
}

void rt_bundle_slice_key(const char *name, size_t n, const rt_bundle_slice *sl, bytes_buf *key) {
  oc_num(key, 0);
  oc_string(key, name, n);
  oc_num(key, (uint64_t)sl->ndims);
  for (int d = 0; d < sl->ndims; d++) {
    oc_signed(key, sl->start[d]);
    oc_signed(key, sl->length[d]);
  }
}

rt_shape rt_bundle_slice_shape(const rt_shape *full, const rt_bundle_slice *sl) {
  rt_shape ps = {.ndims = sl->ndims};
  for (int d = 0; d < sl->ndims; d++) ps.dims[d] = sl->length[d] < 0 ? full->dims[d] - sl->start[d] : sl->length[d];
  return ps;
}

/* TF's shape_and_slices: "" (the whole tensor), or "D0 D1 ... S0:S1:..." with each S
 * "start,length" or "-" (the whole dimension). */
int rt_bundle_parse_spec(const char *spec, rt_shape *full, rt_bundle_slice *sl, rt_status *st) {
  const char *p = spec;
  char *end;
  full->ndims = 0;
  memset(sl, 0, sizeof *sl);
  for (;;) {
    while (*p == ' ') p++;
    const char *sp = strchr(p, ' ');
    if (!sp) break;   /* the last word is the slice spec */
    if (full->ndims == RT_MAX_DIMS) return rt_error(st, RT_INVALID_ARGUMENT, "shape_and_slices '%s': more than 8 dims", spec);
    long long v = strtoll(p, &end, 10);
    if (end != sp || v < 0) return rt_error(st, RT_INVALID_ARGUMENT, "shape_and_slices '%s': a dimension is not a count", spec);
    full->dims[full->ndims++] = v;
    p = sp + 1;
  }
  sl->ndims = full->ndims;
  for (int d = 0; d < full->ndims; d++) {
    if (*p == '-') {
      sl->start[d] = 0, sl->length[d] = -1;
      p++;
    } else {
      long long a = strtoll(p, &end, 10);
      if (end == p || *end != ',') return rt_error(st, RT_INVALID_ARGUMENT, "shape_and_slices '%s': a slice is not start,length or -", spec);
      long long l = strtoll(end + 1, &end, 10);
      if (a < 0 || l < 0 || a > full->dims[d] || l > full->dims[d] - a)
        return rt_error(st, RT_INVALID_ARGUMENT, "shape_and_slices '%s': a slice reaches outside the tensor", spec);
      sl->start[d] = a, sl->length[d] = l;
      p = end;
    }
    if (d + 1 < full->ndims && *p++ != ':')
      return rt_error(st, RT_INVALID_ARGUMENT, "shape_and_slices '%s': slices are separated by ':'", spec);
  }
  if (*p) return rt_error(st, RT_INVALID_ARGUMENT, "shape_and_slices '%s': the slice does not match the shape's rank", spec);
  return RT_OK;
}

/* Copy between a slice (part, placed at `start`) and the full tensor: into the full one
 * (restoring a partitioned tensor) or out of it (taking a part). */
static void copy_slice(rt_tensor *full, rt_tensor *part, const int64_t *start, bool into_full) {
  const rt_shape *fs = &full->shape, *ps = &part->shape;
  int nd = fs->ndims;
  int64_t n = rt_tensor_numel(part);
  size_t es = rt_dtype_size(full->dtype);
  int64_t idx[RT_MAX_DIMS] = {0};
  for (int64_t k = 0; k < n; k++) {
    int64_t off = 0;
    for (int d = 0; d < nd; d++) off = off * fs->dims[d] + start[d] + idx[d];
    rt_tensor *to = into_full ? full : part, *from = into_full ? part : full;
    int64_t ti = into_full ? off : k, fi = into_full ? k : off;
    if (full->dtype == RT_STRING) {
      const rt_str *s = (const rt_str *)rt_tensor_data(from) + fi;
      rt_tensor_set_str(to, ti, s->ptr ? s->ptr : "", s->len);
    } else {
      memcpy((char *)rt_tensor_data(to) + (size_t)ti * es, (const char *)rt_tensor_data(from) + (size_t)fi * es, es);
    }
    for (int d = nd - 1; d >= 0; d--) {
      if (++idx[d] < ps->dims[d]) break;
      idx[d] = 0;
    }
  }
}

int rt_bundle_extract(const rt_tensor *full, const rt_bundle_slice *sl, rt_tensor **out, rt_status *st) {
  rt_shape ps = rt_bundle_slice_shape(&full->shape, sl);
  rt_tensor *part = rt_tensor_new(full->dtype, &ps);
  if (!part) return rt_error(st, RT_RESOURCE_EXHAUSTED, "out of memory taking a slice");
  copy_slice((rt_tensor *)full, part, sl->start, false);
  *out = part;
  return RT_OK;
}

static int read_bytes(const char *prefix, const rt_bundle_index *ix, const rt_bundle_entry *e, const char *what,
                      unsigned char **out, rt_status *st) {
  /* TF's string tensors are checked on their decoded lengths (strings_decode) */
  bool check = !(e->dtype == RT_STRING && ix->format == RT_BUNDLE_TF);
  char dpath[4200];
  rt_bundle_data_name(dpath, sizeof dpath, prefix, (int)e->shard, (int)ix->num_shards);
  FILE *f = fopen(dpath, "rb");
  if (!f)
    return rt_error(st, errno == ENOENT ? RT_NOT_FOUND : RT_UNKNOWN, "%s: %s (data file of checkpoint %s)", dpath,
                    strerror(errno), prefix);
  struct stat sb;
  fstat(fileno(f), &sb);
  long long fsize = (long long)sb.st_size;
  if (e->offset > (uint64_t)fsize || e->size > (uint64_t)fsize - e->offset) {
    fclose(f);
    return rt_error(st, RT_DATA_LOSS, "%s is truncated: tensor %s needs bytes [%llu, %llu) but the file has %lld",
                    dpath, what, (unsigned long long)e->offset, (unsigned long long)(e->offset + e->size), fsize);
  }
  unsigned char *b = malloc(e->size ? e->size : 1);
  if (!b) {
    fclose(f);
    return rt_error(st, RT_RESOURCE_EXHAUSTED, "out of memory reading %llu bytes of tensor %s",
                    (unsigned long long)e->size, what);
  }
  if (fseeko(f, (off_t)e->offset, SEEK_SET) || fread(b, 1, e->size, f) != e->size) {
    fclose(f);
    free(b);
    return rt_error(st, RT_DATA_LOSS, "%s: cannot read tensor %s at offset %llu", dpath, what,
                    (unsigned long long)e->offset);
  }
  fclose(f);
  uint32_t crc = check ? rt_crc32c(b, e->size) : e->crc;
  if (crc != e->crc) {
    free(b);
    return rt_error(st, RT_DATA_LOSS, "Checksum does not match: stored 0x%08x vs. calculated on the restored "
                    "bytes 0x%08x, for tensor %s in %s at offset %llu", e->crc, crc, what, dpath,
                    (unsigned long long)e->offset);
  }
  *out = b;
  return RT_OK;
}

static bool dtype_known(rt_dtype t) {
  return t == RT_FLOAT || t == RT_DOUBLE || t == RT_INT32 || t == RT_UINT8 || t == RT_INT64 || t == RT_BOOL ||
         t == RT_STRING;
}

/* One stored (unpartitioned) tensor of the given shape. */
static int read_plain(const char *prefix, const rt_bundle_index *ix, const rt_bundle_entry *e, const char *what,
                      const rt_shape *shape, rt_tensor **out, rt_status *st) {
  unsigned char *b = NULL;
  int rc = read_bytes(prefix, ix, e, what, &b, st);
  if (rc) return rc;
  int64_t numel = rt_shape_numel(shape);
  rt_tensor *t = rt_tensor_new(e->dtype, shape);
  char dpath[4200];
  rt_bundle_data_name(dpath, sizeof dpath, prefix, (int)e->shard, (int)ix->num_shards);
  if (!t) {
    rc = rt_error(st, RT_RESOURCE_EXHAUSTED, "out of memory restoring %s", what);
  } else if (e->dtype == RT_STRING) {
    uint32_t crc = e->crc;
    if (!strings_decode(b, e->size, t, numel, ix->format == RT_BUNDLE_TFSH1, &crc))
      rc = rt_error(st, RT_DATA_LOSS, "%s: malformed string tensor %s at offset %llu", dpath, what,
                    (unsigned long long)e->offset);
    else if (crc != e->crc)
      rc = rt_error(st, RT_DATA_LOSS, "Checksum does not match: stored 0x%08x vs. calculated on the restored "
                    "bytes 0x%08x, for tensor %s in %s at offset %llu", e->crc, crc, what, dpath,
                    (unsigned long long)e->offset);
  } else if ((uint64_t)numel * rt_dtype_size(e->dtype) != e->size) {
    rc = rt_error(st, RT_DATA_LOSS, "%s: tensor %s has %llu bytes at offset %llu, its shape needs %lld", dpath, what,
                  (unsigned long long)e->size, (unsigned long long)e->offset,
                  (long long)(numel * (int64_t)rt_dtype_size(e->dtype)));
  } else if (e->size) {
    memcpy(rt_tensor_data(t), b, e->size);
  }
  free(b);
  if (rc) {
    rt_tensor_unref(t);
    return rc;
  }
  *out = t;
  return RT_OK;
}

int rt_bundle_read(const char *prefix, const rt_bundle_index *ix, const rt_bundle_entry *e, rt_tensor **out,
                   rt_status *st) {
  if (!dtype_known(e->dtype))
    return rt_error(st, RT_UNIMPLEMENTED, "tensor %s in checkpoint %s has dtype %d (TF's DataType number), which "
                    "tfsh does not have", e->name, prefix, (int)e->dtype);
  if (!e->n_slices) return read_plain(prefix, ix, e, e->name, &e->shape, out, st);
  rt_tensor *full = rt_tensor_new(e->dtype, &e->shape);
  if (!full) return rt_error(st, RT_RESOURCE_EXHAUSTED, "out of memory restoring %s", e->name);
  for (int s = 0; s < e->n_slices; s++) {
    const rt_bundle_slice *sl = &e->slices[s];
    bytes_buf key = {0};
    rt_bundle_slice_key(e->name, e->name_len, sl, &key);
    rt_shape ps = rt_bundle_slice_shape(&e->shape, sl);
    const rt_bundle_entry *se = key.oom ? NULL : find_key(ix, (const char *)key.p, key.n);
    free(key.p);
    char what[512];
    snprintf(what, sizeof what, "%s (slice %d of %d)", e->name, s + 1, e->n_slices);
    if (!se) {
      rt_tensor_unref(full);
      return rt_error(st, RT_DATA_LOSS, "checkpoint %s: the entry of %s is missing", prefix, what);
    }
    if (se->dtype != e->dtype || !rt_shape_equal(&se->shape, &ps)) {
      rt_tensor_unref(full);
      return rt_error(st, RT_DATA_LOSS, "checkpoint %s: %s does not match its tensor's dtype or the slice's shape",
                      prefix, what);
    }
    rt_tensor *part = NULL;
    int rc = read_plain(prefix, ix, se, what, &ps, &part, st);
    if (rc) {
      rt_tensor_unref(full);
      return rc;
    }
    copy_slice(full, part, sl->start, true);
    rt_tensor_unref(part);
  }
  *out = full;
  return RT_OK;
}
