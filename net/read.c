/* Reading messages: a header is scanned byte by byte (every length and count checked
 * against the bytes left and the limits) before msgpack_unpack sees it, so nothing from
 * the wire sizes an allocation; then typed getters check each field. */
#include "net/wire.h"
#include "base/alloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- scanning ---------------------------------------------------------------------- */

typedef struct scan {
  const uint8_t *start, *p, *end;
  const net_limits *lim;
  const uint8_t *key;   /* the top-level field being scanned, for messages */
  size_t keylen;
  size_t last_len;      /* length of the last str or bin scanned */
  rt_status *st;
} scan;

static int bad(scan *s, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(scan *s, int code, const char *fmt, ...) {
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  const char *pre = code == RT_RESOURCE_EXHAUSTED ? "message over limits" : "malformed header";
  if (s->key)
    return rt_error(s->st, code, "%s: field \"%.*s\": %s", pre, (int)s->keylen,
                    (const char *)s->key, what);
  return rt_error(s->st, code, "%s: %s", pre, what);
}

static const char *byte_kind(uint8_t b) {
  if (b <= 0x7f || (b >= 0xcc && b <= 0xcf)) return "uint";
  if (b >= 0xe0 || (b >= 0xd0 && b <= 0xd3)) return "int";
  if (b <= 0x8f || b == 0xde || b == 0xdf) return "map";
  if (b <= 0x9f || b == 0xdc || b == 0xdd) return "array";
  if (b <= 0xbf || (b >= 0xd9 && b <= 0xdb)) return "str";
  switch (b) {
  case 0xc0: return "nil";
  case 0xc2: case 0xc3: return "bool";
  case 0xc4: case 0xc5: case 0xc6: return "bin";
  case 0xca: case 0xcb: return "float";
  case 0xc1: return "the never-used byte 0xc1";
  default: return "ext";
  }
}

static size_t offset(const scan *s, const uint8_t *p) { return (size_t)(p - s->start); }
static size_t total(const scan *s) { return offset(s, s->end); }

/* Read an n-byte big-endian number (the length or count of the item at `at`). */
static int take(scan *s, int n, const uint8_t *at, uint64_t *v) {
  if (s->end - s->p < n)
    return bad(s, RT_INVALID_ARGUMENT, "%s at offset %zu runs past the end of the %zu-byte frame",
               byte_kind(*at), offset(s, at), total(s));
  *v = 0;
  for (int i = 0; i < n; i++) *v = *v << 8 | *s->p++;
  return 0;
}

static int skip(scan *s, const uint8_t *at, uint64_t len, const char *unit) {
  if ((uint64_t)(s->end - s->p) < len)
    return bad(s, RT_INVALID_ARGUMENT,
               "%s of %llu %s at offset %zu runs past the end of the %zu-byte frame",
               byte_kind(*at), (unsigned long long)len, unit, offset(s, at), total(s));
  s->p += len;
  return 0;
}

static int scan_bytes(scan *s, const uint8_t *at, uint64_t len) {
  int rc = skip(s, at, len, "bytes");
  if (rc) return rc;
  if (len > s->lim->max_str)
    return bad(s, RT_RESOURCE_EXHAUSTED, "%s of %llu bytes exceeds max_str %u", byte_kind(*at),
               (unsigned long long)len, s->lim->max_str);
  s->last_len = (size_t)len;
  return 0;
}

static int scan_value(scan *s, int depth);

/* n items of at least `per` bytes each (maps: a key and a value per entry). */
static int scan_items(scan *s, const uint8_t *at, uint64_t n, int per, int depth) {
  const char *kind = per == 2 ? "map" : "array";
  uint64_t left = (uint64_t)(s->end - s->p);
  if (n > left / per)
    return bad(s, RT_INVALID_ARGUMENT, "%s at offset %zu claims %llu %s but only %llu bytes are left",
               kind, offset(s, at), (unsigned long long)n, per == 2 ? "entries" : "elements",
               (unsigned long long)left);
  if (n > s->lim->max_count)
    return bad(s, RT_RESOURCE_EXHAUSTED, "%s of %llu %s exceeds max_count %u", kind,
               (unsigned long long)n, per == 2 ? "entries" : "elements", s->lim->max_count);
  if (depth >= s->lim->max_depth)
    return bad(s, RT_RESOURCE_EXHAUSTED, "%s at offset %zu nests deeper than max_depth %d", kind,
               offset(s, at), s->lim->max_depth);
  for (uint64_t i = 0; i < n * per; i++) {
    int rc = scan_value(s, depth + 1);
    if (rc) return rc;
  }
  return 0;
}

static int scan_value(scan *s, int depth) {
  if (s->p >= s->end)
    return bad(s, RT_INVALID_ARGUMENT, "value at offset %zu runs past the end of the %zu-byte frame",
               offset(s, s->p), total(s));
  const uint8_t *at = s->p++;
  uint8_t b = *at;
  uint64_t n = 0;   /* set by take(); gcc -O3 cannot see that */
  int rc;
  if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3) return 0;
  if (b <= 0x8f) return scan_items(s, at, b & 0x0f, 2, depth);
  if (b <= 0x9f) return scan_items(s, at, b & 0x0f, 1, depth);
  if (b <= 0xbf) return scan_bytes(s, at, b & 0x1f);
  switch (b) {
  case 0xc4: case 0xc5: case 0xc6:   /* bin 8/16/32 */
    return (rc = take(s, 1 << (b - 0xc4), at, &n)) ? rc : scan_bytes(s, at, n);
  case 0xd9: case 0xda: case 0xdb:   /* str 8/16/32 */
    return (rc = take(s, 1 << (b - 0xd9), at, &n)) ? rc : scan_bytes(s, at, n);
  case 0xca: return skip(s, at, 4, "bytes");
  case 0xcb: return skip(s, at, 8, "bytes");
  case 0xcc: case 0xcd: case 0xce: case 0xcf: return skip(s, at, 1u << (b - 0xcc), "bytes");
  case 0xd0: case 0xd1: case 0xd2: case 0xd3: return skip(s, at, 1u << (b - 0xd0), "bytes");
  case 0xdc: case 0xdd:              /* array 16/32 */
    return (rc = take(s, b == 0xdc ? 2 : 4, at, &n)) ? rc : scan_items(s, at, n, 1, depth);
  case 0xde: case 0xdf:              /* map 16/32 */
    return (rc = take(s, b == 0xde ? 2 : 4, at, &n)) ? rc : scan_items(s, at, n, 2, depth);
  default:
    return bad(s, RT_INVALID_ARGUMENT, "unsupported msgpack type 0x%02x (%s) at offset %zu", b,
               byte_kind(b), offset(s, at));
  }
}

/* header -> map of (str key, value) pairs, nothing after it */
static int scan_header(scan *s) {
  size_t len = total(s);
  if (len == 0) return bad(s, RT_INVALID_ARGUMENT, "empty header frame");
  if (len > s->lim->max_header)
    return bad(s, RT_RESOURCE_EXHAUSTED, "header of %zu bytes exceeds max_header %zu", len,
               s->lim->max_header);
  const uint8_t *at = s->p++;
  uint64_t n = 0;   /* set by take(); gcc -O3 cannot see that */
  int rc;
  if ((*at & 0xf0) == 0x80) n = *at & 0x0f;
  else if (*at == 0xde || *at == 0xdf) {
    if ((rc = take(s, *at == 0xde ? 2 : 4, at, &n))) return rc;
  } else
    return bad(s, RT_INVALID_ARGUMENT, "expected a map, got %s", byte_kind(*at));
  uint64_t left = (uint64_t)(s->end - s->p);
  if (n > left / 2)
    return bad(s, RT_INVALID_ARGUMENT, "map at offset 0 claims %llu entries but only %llu bytes are left",
               (unsigned long long)n, (unsigned long long)left);
  if (n > s->lim->max_count)
    return bad(s, RT_RESOURCE_EXHAUSTED, "map of %llu entries exceeds max_count %u",
               (unsigned long long)n, s->lim->max_count);
  for (uint64_t i = 0; i < n; i++) {
    const uint8_t *k = s->p;
    if (k < s->end && strcmp(byte_kind(*k), "str") != 0)
      return bad(s, RT_INVALID_ARGUMENT, "key at offset %zu is %s, expected str", offset(s, k),
                 byte_kind(*k));
    if ((rc = scan_value(s, 1))) return rc;
    s->key = s->p - s->last_len;
    s->keylen = s->last_len;
    if ((rc = scan_value(s, 1))) return rc;
    s->key = NULL;
  }
  if (s->p != s->end)
    return bad(s, RT_INVALID_ARGUMENT, "%zu trailing bytes after the map", (size_t)(s->end - s->p));
  return 0;
}

/* ---- parsing ----------------------------------------------------------------------- */

net_in *net_in_alloc(void) {
  net_in *m = xcalloc(1, sizeof *m);
  zmq_msg_init(&m->head);
  msgpack_zone_init(&m->zone, 1024);
  return m;
}

void net_in_free(net_in *m) {
  if (!m) return;
  for (size_t i = 0; i < m->nframes; i++) net_frame_unref(m->frames[i]);
  free(m->frames);
  msgpack_zone_destroy(&m->zone);
  zmq_msg_close(&m->head);
  free(m->copy);
  free(m);
}

int net_in_parse_at(net_in *m, const void *header, size_t len, const net_limits *lim,
                    uint64_t *id_out, rt_status *st) {
  net_limits def;
  if (!lim) net_limits_default(&def), lim = &def;
  if (id_out) *id_out = 0;
  scan s = {.start = header, .p = header, .end = (const uint8_t *)header + len, .lim = lim, .st = st};
  int rc = scan_header(&s);
  if (rc) return rc;
  size_t off = 0;
  if (msgpack_unpack(header, len, &off, &m->zone, &m->root) != MSGPACK_UNPACK_SUCCESS)
    return rt_error(st, RT_INTERNAL, "malformed header: msgpack_unpack refused a scanned header");

  const msgpack_object *o;
  if (!(o = net_obj_key(&m->root, "id")))
    return rt_error(st, RT_INVALID_ARGUMENT, "malformed header: missing field \"id\"");
  if ((rc = net_obj_uint(o, "malformed header: field \"id\"", &m->id, st))) return rc;
  if (id_out) *id_out = m->id;

  uint64_t v = 0;
  if (!(o = net_obj_key(&m->root, "v")))
    return rt_error(st, RT_INVALID_ARGUMENT, "malformed header: missing field \"v\"");
  if ((rc = net_obj_uint(o, "malformed header: field \"v\"", &v, st))) return rc;
  if (v != NET_VERSION)
    return rt_error(st, RT_UNIMPLEMENTED,
                    "unsupported protocol version %llu (this tfsh speaks version %d)",
                    (unsigned long long)v, NET_VERSION);

  const char *t = NULL;
  size_t tlen = 0;
  if (!(o = net_obj_key(&m->root, "t")))
    return rt_error(st, RT_INVALID_ARGUMENT, "malformed header: missing field \"t\"");
  if ((rc = net_obj_str(o, "malformed header: field \"t\"", &t, &tlen, st))) return rc;
  bool ok = tlen >= 1 && tlen <= NET_TYPE_MAX;
  for (size_t i = 0; ok && i < tlen; i++) ok = t[i] > ' ' && t[i] < 0x7f;
  if (!ok)
    return rt_error(st, RT_INVALID_ARGUMENT,
                    "malformed header: field \"t\" must be 1 to %d printable characters",
                    NET_TYPE_MAX);
  memcpy(m->type, t, tlen);
  m->type[tlen] = '\0';
  return RT_OK;
}

net_in *net_in_parse(const void *header, size_t len, const net_limits *lim, uint64_t *id_out,
                     rt_status *st) {
  net_in *m = net_in_alloc();
  m->copy = xmalloc(len ? len : 1);
  if (len) memcpy(m->copy, header, len);
  if (net_in_parse_at(m, m->copy, len, lim, id_out, st)) {
    net_in_free(m);
    return NULL;
  }
  return m;
}

const char *net_in_type(const net_in *m) { return m->type; }
uint64_t net_in_id(const net_in *m) { return m->id; }
const msgpack_object *net_in_header(const net_in *m) { return &m->root; }
size_t net_in_nframes(const net_in *m) { return m->nframes; }
net_frame *net_in_frame(const net_in *m, size_t i) { return i < m->nframes ? m->frames[i] : NULL; }

/* ---- typed getters ----------------------------------------------------------------- */

const msgpack_object *net_obj_key(const msgpack_object *o, const char *key) {
  if (!o || o->type != MSGPACK_OBJECT_MAP) return NULL;
  size_t klen = strlen(key);
  for (uint32_t i = 0; i < o->via.map.size; i++) {
    const msgpack_object *k = &o->via.map.ptr[i].key;
    if (k->type == MSGPACK_OBJECT_STR && k->via.str.size == klen &&
        memcmp(k->via.str.ptr, key, klen) == 0)
      return &o->via.map.ptr[i].val;
  }
  return NULL;
}

const char *net_obj_kind(const msgpack_object *o) {
  switch (o->type) {
  case MSGPACK_OBJECT_NIL: return "nil";
  case MSGPACK_OBJECT_BOOLEAN: return "bool";
  case MSGPACK_OBJECT_POSITIVE_INTEGER: return "uint";
  case MSGPACK_OBJECT_NEGATIVE_INTEGER: return "int";
  case MSGPACK_OBJECT_FLOAT32: case MSGPACK_OBJECT_FLOAT64: return "float";
  case MSGPACK_OBJECT_STR: return "str";
  case MSGPACK_OBJECT_BIN: return "bin";
  case MSGPACK_OBJECT_ARRAY: return "array";
  case MSGPACK_OBJECT_MAP: return "map";
  default: return "ext";
  }
}

static int wrong(const msgpack_object *o, const char *what, const char *want, rt_status *st) {
  return rt_error(st, RT_INVALID_ARGUMENT, "%s is %s, expected %s", what, net_obj_kind(o), want);
}

int net_obj_int(const msgpack_object *o, const char *what, int64_t *out, rt_status *st) {
  if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER) return *out = o->via.i64, RT_OK;
  if (o->type != MSGPACK_OBJECT_POSITIVE_INTEGER) return wrong(o, what, "int", st);
  if (o->via.u64 > INT64_MAX)
    return rt_error(st, RT_INVALID_ARGUMENT, "%s is %llu, out of range for int64", what,
                    (unsigned long long)o->via.u64);
  return *out = (int64_t)o->via.u64, RT_OK;
}

int net_obj_uint(const msgpack_object *o, const char *what, uint64_t *out, rt_status *st) {
  if (o->type != MSGPACK_OBJECT_POSITIVE_INTEGER) return wrong(o, what, "uint", st);
  return *out = o->via.u64, RT_OK;
}

/* Integers are accepted where a float is expected (a client may send 1 for 1.0). */
int net_obj_float(const msgpack_object *o, const char *what, double *out, rt_status *st) {
  switch (o->type) {
  case MSGPACK_OBJECT_FLOAT32: case MSGPACK_OBJECT_FLOAT64: return *out = o->via.f64, RT_OK;
  case MSGPACK_OBJECT_POSITIVE_INTEGER: return *out = (double)o->via.u64, RT_OK;
  case MSGPACK_OBJECT_NEGATIVE_INTEGER: return *out = (double)o->via.i64, RT_OK;
  default: return wrong(o, what, "float", st);
  }
}

int net_obj_bool(const msgpack_object *o, const char *what, bool *out, rt_status *st) {
  if (o->type != MSGPACK_OBJECT_BOOLEAN) return wrong(o, what, "bool", st);
  return *out = o->via.boolean, RT_OK;
}

int net_obj_str(const msgpack_object *o, const char *what, const char **p, size_t *len,
                rt_status *st) {
  if (o->type != MSGPACK_OBJECT_STR) return wrong(o, what, "str", st);
  *p = o->via.str.ptr;
  *len = o->via.str.size;
  return RT_OK;
}

int net_obj_bin(const msgpack_object *o, const char *what, const void **p, size_t *len,
                rt_status *st) {
  if (o->type != MSGPACK_OBJECT_BIN) return wrong(o, what, "bin", st);
  *p = o->via.bin.ptr;
  *len = o->via.bin.size;
  return RT_OK;
}

int net_obj_array(const msgpack_object *o, const char *what, const msgpack_object_array **out,
                  rt_status *st) {
  if (o->type != MSGPACK_OBJECT_ARRAY) return wrong(o, what, "array", st);
  return *out = &o->via.array, RT_OK;
}

int net_obj_map(const msgpack_object *o, const char *what, const msgpack_object_map **out,
                rt_status *st) {
  if (o->type != MSGPACK_OBJECT_MAP) return wrong(o, what, "map", st);
  return *out = &o->via.map, RT_OK;
}

bool net_has(const net_in *m, const char *key) {
  const msgpack_object *o = net_obj_key(&m->root, key);
  return o && o->type != MSGPACK_OBJECT_NIL;
}

const msgpack_object *net_get(const net_in *m, const char *key) {
  return net_obj_key(&m->root, key);
}

/* Look key up and name it "TYPE: field \"key\"" for the typed check. */
static const msgpack_object *field(const net_in *m, const char *key, char *what, size_t n,
                                   rt_status *st) {
  const msgpack_object *o = net_obj_key(&m->root, key);
  if (!o) rt_error(st, RT_INVALID_ARGUMENT, "%s: missing field \"%s\"", m->type, key);
  else snprintf(what, n, "%s: field \"%s\"", m->type, key);
  return o;
}

#define GETTER(name, ...)                                                          \
  {                                                                                \
    char what[128];                                                                \
    const msgpack_object *o = field(m, key, what, sizeof what, st);                \
    return o ? net_obj_##name(o, what, __VA_ARGS__, st) : RT_INVALID_ARGUMENT;     \
  }

int net_get_int(const net_in *m, const char *key, int64_t *out, rt_status *st) GETTER(int, out)
int net_get_uint(const net_in *m, const char *key, uint64_t *out, rt_status *st) GETTER(uint, out)
int net_get_float(const net_in *m, const char *key, double *out, rt_status *st) GETTER(float, out)
int net_get_bool(const net_in *m, const char *key, bool *out, rt_status *st) GETTER(bool, out)
int net_get_str(const net_in *m, const char *key, const char **p, size_t *len, rt_status *st)
  GETTER(str, p, len)
int net_get_bin(const net_in *m, const char *key, const void **p, size_t *len, rt_status *st)
  GETTER(bin, p, len)
int net_get_array(const net_in *m, const char *key, const msgpack_object_array **out,
                  rt_status *st) GETTER(array, out)
int net_get_map(const net_in *m, const char *key, const msgpack_object_map **out,
                rt_status *st) GETTER(map, out)
