/* Building messages, and the reference-counted frames received messages hand out. */
#include "net/wire.h"
#include "base/alloc.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

void net_limits_default(net_limits *l) {
  l->max_header = 64u << 20;   /* a graph of 100k nodes fits */
  l->max_frames = 1024;
  l->max_frame = (size_t)4 << 30;
  l->max_count = 1u << 20;
  l->max_str = 1u << 20;
  l->max_depth = 16;
}

/* ---- frames ------------------------------------------------------------------------ */

net_frame *net_frame_new(void) {
  net_frame *f = xmalloc(sizeof *f);
  atomic_init(&f->refs, 1);
  zmq_msg_init(&f->zm);
  return f;
}

void *net_frame_data(const net_frame *f) { return zmq_msg_data((zmq_msg_t *)&f->zm); }
size_t net_frame_size(const net_frame *f) { return zmq_msg_size((zmq_msg_t *)&f->zm); }

bool net_frame_aligned(const net_frame *f, size_t align) {
  return (uintptr_t)net_frame_data(f) % align == 0;
}

net_frame *net_frame_ref(net_frame *f) {
  atomic_fetch_add_explicit(&f->refs, 1, memory_order_relaxed);
  return f;
}

void net_frame_unref(net_frame *f) {
  if (!f || atomic_fetch_sub_explicit(&f->refs, 1, memory_order_acq_rel) != 1) return;
  zmq_msg_close(&f->zm);
  free(f);
}

void net_frame_release(void *data, void *frame) { net_frame_unref(frame); }

/* ---- building ---------------------------------------------------------------------- */

static void put_str(msgpack_packer *pk, const char *s, size_t len) {
  msgpack_pack_str(pk, len);
  msgpack_pack_str_body(pk, s, len);
}

net_msg *net_msg_new(const char *type) {
  size_t tlen = strlen(type);
  assert(tlen > 0 && tlen <= NET_TYPE_MAX);
  net_msg *m = xcalloc(1, sizeof *m);
  memcpy(m->type, type, tlen + 1);
  msgpack_sbuffer_init(&m->sb);
  msgpack_packer_init(&m->pk, &m->sb, msgpack_sbuffer_write);
  static const char map32[5] = {(char)0xdf, 0, 0, 0, 0};  /* count patched by seal */
  msgpack_sbuffer_write(&m->sb, map32, sizeof map32);
  put_str(&m->pk, "v", 1);
  msgpack_pack_uint8(&m->pk, NET_VERSION);
  put_str(&m->pk, "t", 1);
  put_str(&m->pk, type, tlen);
  put_str(&m->pk, "id", 2);
  static const char u64[9] = {(char)0xcf};               /* value patched by seal */
  msgpack_sbuffer_write(&m->sb, u64, sizeof u64);
  m->id_at = m->sb.size - 8;
  m->nfields = 3;
  return m;
}

void net_msg_free(net_msg *m) {
  if (!m) return;
  for (size_t i = m->sent; i < m->nframes; i++)
    if (m->frames[i].free_fn) m->frames[i].free_fn(m->frames[i].data, m->frames[i].arg);
  free(m->frames);
  msgpack_sbuffer_destroy(&m->sb);
  free(m);
}

static void put_be(char *p, uint64_t v, int n) {
  for (int i = n - 1; i >= 0; i--, v >>= 8) p[i] = (char)(v & 0xff);
}

void net_msg_seal(net_msg *m, uint64_t id, const void **p, size_t *len) {
  put_be(m->sb.data + 1, m->nfields, 4);
  put_be(m->sb.data + m->id_at, id, 8);
  *p = m->sb.data;
  *len = m->sb.size;
}

msgpack_packer *net_msg_field(net_msg *m, const char *key) {
  put_str(&m->pk, key, strlen(key));
  m->nfields++;
  return &m->pk;
}

void net_msg_int(net_msg *m, const char *key, int64_t v) {
  msgpack_pack_int64(net_msg_field(m, key), v);
}

void net_msg_uint(net_msg *m, const char *key, uint64_t v) {
  msgpack_pack_uint64(net_msg_field(m, key), v);
}

void net_msg_float(net_msg *m, const char *key, double v) {
  msgpack_pack_double(net_msg_field(m, key), v);
}

void net_msg_bool(net_msg *m, const char *key, bool v) {
  msgpack_packer *pk = net_msg_field(m, key);
  if (v) msgpack_pack_true(pk);
  else msgpack_pack_false(pk);
}

void net_msg_nil(net_msg *m, const char *key) { msgpack_pack_nil(net_msg_field(m, key)); }

void net_msg_str(net_msg *m, const char *key, const char *s) {
  if (s) net_msg_strn(m, key, s, strlen(s));
  else net_msg_nil(m, key);
}

void net_msg_strn(net_msg *m, const char *key, const char *s, size_t len) {
  put_str(net_msg_field(m, key), s, len);
}

void net_msg_bin(net_msg *m, const char *key, const void *p, size_t len) {
  msgpack_packer *pk = net_msg_field(m, key);
  msgpack_pack_bin(pk, len);
  msgpack_pack_bin_body(pk, p, len);
}

void net_msg_frame(net_msg *m, void *data, size_t len, net_free_fn free_fn, void *arg) {
  if (m->nframes == m->cap) {
    m->cap = m->cap ? 2 * m->cap : 4;
    m->frames = xrealloc(m->frames, m->cap * sizeof *m->frames);
  }
  m->frames[m->nframes++] = (net_payload){data, len, free_fn, arg};
}

static void free_copy(void *data, void *arg) { free(data); }

void net_msg_frame_copy(net_msg *m, const void *data, size_t len) {
  void *p = xmalloc(len ? len : 1);
  if (len) memcpy(p, data, len);
  net_msg_frame(m, p, len, free_copy, NULL);
}

void net_msg_frame_fwd(net_msg *m, net_frame *f) {
  net_msg_frame(m, net_frame_data(f), net_frame_size(f), net_frame_release, net_frame_ref(f));
}

const char *net_msg_type(const net_msg *m) { return m->type; }
size_t net_msg_nframes(const net_msg *m) { return m->nframes; }
