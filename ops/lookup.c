/* Lookup tables (tf.lookup / tf.contrib.lookup): a hash map from keys to values kept in a
 * resource of its device, as TF's HashTableV2 / MutableHashTableV2.
 *   HashTableV2, MutableHashTableV2    make (once) the table and output its handle
 *   InitializeTableV2, LookupTableImportV2   fill a HashTable from two vectors (once: again
 *                                      with the same data is a no-op, as TF's)
 *   InitializeTableFromTextFileV2      fill it from a text file's lines (whole line, line
 *                                      number, or a delimited column as key and value)
 *   LookupTableFindV2                  values of keys, default_value for the missing
 *   LookupTableSizeV2, LookupTableInsertV2
 *   StringToHashBucketFast             FarmHash's Fingerprint64 of a string, mod buckets (the
 *                                      out-of-vocabulary ids of index_table_from_file)
 * Keys are strings, int32 or int64; values strings, int32, int64, float or double. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "ops/ops_int.h"
#include "runtime/device.h"

/* ---- the table ------------------------------------------------------------------------ */

typedef struct entry {
  char *key;               /* the key's bytes (a number's 8 bytes, little-endian int64) */
  size_t klen;
  char *sval;              /* string values */
  size_t slen;
  double num;              /* number values, exact for every int32 and float; */
  int64_t inum;            /* int64 values */
  uint64_t hash;
  int64_t next;            /* chain, -1 ends */
} entry;

typedef struct table {
  bool mutable_, initialized;
  rt_dtype kt, vt;
  entry *e;
  int64_t n, cap;
  int64_t *heads;          /* nheads chains */
  int64_t nheads;
} table;

static void table_clear(table *t) {
  for (int64_t i = 0; i < t->n; i++) free(t->e[i].key), free(t->e[i].sval);
  free(t->e);
  free(t->heads);
  t->e = NULL, t->heads = NULL;
  t->n = t->cap = t->nheads = 0;
}

static void table_free(void *p) {
  if (!p) return;
  table_clear(p);
  free(p);
}

static uint64_t fnv(const char *p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * 0x100000001b3ULL;
  return h;
}

static int64_t find(const table *t, const char *k, size_t kl, uint64_t h) {
  if (!t->nheads) return -1;
  for (int64_t i = t->heads[h % (uint64_t)t->nheads]; i >= 0; i = t->e[i].next)
    if (t->e[i].hash == h && t->e[i].klen == kl && !memcmp(t->e[i].key, k, kl)) return i;
  return -1;
}

static void rehash(table *t) {
  t->nheads = t->nheads ? 2 * t->nheads : 64;
  t->heads = xrealloc(t->heads, (size_t)t->nheads * sizeof *t->heads);
  for (int64_t i = 0; i < t->nheads; i++) t->heads[i] = -1;
  for (int64_t i = 0; i < t->n; i++) {
    int64_t b = (int64_t)(t->e[i].hash % (uint64_t)t->nheads);
    t->e[i].next = t->heads[b];
    t->heads[b] = i;
  }
}

/* The key of element i of tensor k as bytes (numbers: their int64 value). */
static const char *key_bytes(const rt_tensor *k, int64_t i, size_t *len, int64_t *tmp) {
  if (k->dtype == RT_STRING) {
    const rt_str *s = (const rt_str *)rt_tensor_data(k) + i;
    *len = s->len;
    return s->ptr ? s->ptr : "";
  }
  *tmp = k->dtype == RT_INT64 ? ((const int64_t *)rt_tensor_data(k))[i] : ((const int32_t *)rt_tensor_data(k))[i];
  *len = sizeof *tmp;
  return (const char *)tmp;
}

/* Value element i of tensor v into an entry's value fields (sval malloc'd). */
static void value_get(const rt_tensor *v, int64_t i, entry *e) {
  const void *d = rt_tensor_data(v);
  switch (v->dtype) {
  case RT_STRING: {
    const rt_str *s = (const rt_str *)d + i;
    e->sval = xstrndup(s->ptr ? s->ptr : "", s->len);
    e->slen = s->len;
    break;
  }
  case RT_INT64: e->inum = ((const int64_t *)d)[i]; break;
  case RT_INT32: e->inum = ((const int32_t *)d)[i]; break;
  case RT_FLOAT: e->num = ((const float *)d)[i]; break;
  default: e->num = ((const double *)d)[i]; break;
  }
}

static bool value_same(const entry *a, const entry *b, rt_dtype t) {
  if (t == RT_STRING) return a->slen == b->slen && !memcmp(a->sval, b->sval, a->slen);
  if (t == RT_INT64 || t == RT_INT32) return a->inum == b->inum;
  return a->num == b->num;
}

static void value_put(rt_tensor *o, int64_t i, const entry *e) {
  void *d = rt_tensor_data(o);
  switch (o->dtype) {
  case RT_STRING: rt_tensor_set_str(o, i, e->sval, e->slen); break;
  case RT_INT64: ((int64_t *)d)[i] = e->inum; break;
  case RT_INT32: ((int32_t *)d)[i] = (int32_t)e->inum; break;
  case RT_FLOAT: ((float *)d)[i] = (float)e->num; break;
  default: ((double *)d)[i] = e->num; break;
  }
}

static char *value_str(const entry *e, rt_dtype t, char *buf, size_t n) {
  if (t == RT_STRING) snprintf(buf, n, "%.*s", (int)e->slen, e->sval);
  else if (t == RT_INT64 || t == RT_INT32) snprintf(buf, n, "%lld", (long long)e->inum);
  else snprintf(buf, n, "%g", e->num);
  return buf;
}

/* Put key -> value (e's value fields, taken). A HashTable's key met again with another
 * value is TF's error; a MutableHashTable's is replaced. */
static int put(rt_kernel_ctx *c, table *t, const char *k, size_t kl, entry *v) {
  uint64_t h = fnv(k, kl);
  int64_t at = find(t, k, kl, h);
  if (at >= 0) {
    entry *e = &t->e[at];
    if (t->mutable_) {
      free(e->sval);
      e->sval = v->sval, e->slen = v->slen, e->num = v->num, e->inum = v->inum;
      return RT_OK;
    }
    int rc = RT_OK;
    if (!value_same(e, v, t->vt)) {
      char a[128], b[128], key[128];
      if (t->kt == RT_STRING) snprintf(key, sizeof key, "%.*s", (int)kl, k);
      else snprintf(key, sizeof key, "%lld", (long long)*(const int64_t *)(const void *)k);
      rc = rt_kernel_error(c, RT_FAILED_PRECONDITION, "HashTable has different value for same key. Key %s has %s and trying to add value %s",
                           key, value_str(e, t->vt, a, sizeof a), value_str(v, t->vt, b, sizeof b));
    }
    free(v->sval);
    return rc;
  }
  if (t->n == t->cap) {
    t->cap = t->cap ? 2 * t->cap : 64;
    t->e = xrealloc(t->e, (size_t)t->cap * sizeof *t->e);
  }
  entry *e = &t->e[t->n++];
  *e = *v;
  e->key = xmalloc(kl + 1);
  memcpy(e->key, k, kl);
  e->key[kl] = 0;
  e->klen = kl;
  e->hash = h;
  if (t->n > t->nheads) rehash(t);
  else {
    int64_t b = (int64_t)(h % (uint64_t)t->nheads);
    e->next = t->heads[b];
    t->heads[b] = t->n - 1;
  }
  return RT_OK;
}

/* ---- making the table and its handle ---------------------------------------------------- */

static int table_create(rt_kernel_ctx *c, bool mutable_) {
  const char *shared = rt_node_string(c->node, "shared_name", "");
  bool by_node = rt_node_bool(c->node, "use_node_name_sharing", false);
  const char *name = shared[0] ? shared : c->node->name;
  (void)by_node;   /* a table is shared by its node's name either way: one per node */
  rt_resource *r = rt_device_resource_in(c->device, c->scope, rt_node_string(c->node, "container", ""), name, true);
  if (!r) return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  rt_dtype kt = rt_node_type(c->node, "key_dtype", RT_STRING), vt = rt_node_type(c->node, "value_dtype", RT_INT64);
  int rc = RT_OK;
  pthread_mutex_lock(&r->mu);
  if (!r->state) {
    table *t = xcalloc(1, sizeof *t);
    t->mutable_ = mutable_, t->kt = kt, t->vt = vt;
    r->state = t;
    r->state_free = table_free;
  } else {
    table *t = r->state;
    if (t->kt != kt || t->vt != vt || t->mutable_ != mutable_)
      rc = rt_kernel_error(c, RT_INVALID_ARGUMENT, "resource %s exists, but is not a table of %s to %s", name,
                           rt_dtype_name(kt), rt_dtype_name(vt));
  }
  pthread_mutex_unlock(&r->mu);
  if (rc) return rc;
  rt_shape sc = rt_shape_scalar();
  rt_tensor *h = rt_kernel_output(c, 0, RT_RESOURCE, &sc);
  if (!h) return c->st->code;
  rt_handle hd = {c->device->name, r->container, r->name, mutable_ ? "MutableHashTable" : "HashTable"};
  if (rt_handle_set(h, 0, &hd)) return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  return RT_OK;
}

static int hash_table_kernel(rt_kernel_ctx *c) { return table_create(c, false); }
static int mutable_table_kernel(rt_kernel_ctx *c) { return table_create(c, true); }

/* The table of input 0, its mutex held; NULL (unlocked, error set) when it is not one. */
static rt_resource *table_of(rt_kernel_ctx *c) {
  const char *name = "";
  rt_resource *r = op_resource_of(c, 0, false, &name);
  if (!r) {
    if (!c->st->code) rt_kernel_error(c, RT_NOT_FOUND, "Resource localhost/%s does not exist.", name);
    return NULL;
  }
  pthread_mutex_lock(&r->mu);
  if (!r->state || r->state_free != table_free) {
    pthread_mutex_unlock(&r->mu);
    rt_kernel_error(c, RT_INVALID_ARGUMENT, "input 0 of %s is not a lookup table", c->node->op);
    return NULL;
  }
  return r;
}

static int check_types(rt_kernel_ctx *c, const table *t, rt_dtype k, rt_dtype v) {
  if (k != t->kt || (v != RT_INVALID && v != t->vt))
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Conflicting key/value dtypes %s->%s with %s-%s",
                           op_tf_type(k), op_tf_type(v == RT_INVALID ? t->vt : v), op_tf_type(t->kt), op_tf_type(t->vt));
  return RT_OK;
}

/* ---- filling it -------------------------------------------------------------------------- */

/* Insert keys/values (same length) into t. A HashTable is filled once: filled again with the
 * same pairs nothing changes; other pairs are TF's error. */
static int insert_all(rt_kernel_ctx *c, table *t, const rt_tensor *k, const rt_tensor *v, bool init) {
  char a[128], b[128];
  if (!rt_shape_equal(&k->shape, &v->shape))
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Expected shape %s for value, got %s", op_shape_tf(&k->shape, a, sizeof a),
                           op_shape_tf(&v->shape, b, sizeof b));
  int64_t n = rt_tensor_numel(k);
  if (init && t->initialized) {   /* the same data again is fine */
    bool same = t->n == n;
    for (int64_t i = 0; i < n && same; i++) {
      size_t kl;
      int64_t tmp;
      const char *kb = key_bytes(k, i, &kl, &tmp);
      int64_t at = find(t, kb, kl, fnv(kb, kl));
      entry e = {0};
      value_get(v, i, &e);
      same = at >= 0 && value_same(&t->e[at], &e, t->vt);
      free(e.sval);
    }
    return same ? RT_OK : rt_kernel_error(c, RT_FAILED_PRECONDITION, "Table was already initialized with different data.");
  }
  for (int64_t i = 0; i < n; i++) {
    size_t kl;
    int64_t tmp;
    const char *kb = key_bytes(k, i, &kl, &tmp);
    entry e = {0};
    value_get(v, i, &e);
    int rc = put(c, t, kb, kl, &e);
    if (rc) {
      if (init) table_clear(t);
      return rc;
    }
  }
  if (init) t->initialized = true;
  return RT_OK;
}

static int init_kernel(rt_kernel_ctx *c) {
  rt_resource *r = table_of(c);
  if (!r) return c->st->code;
  table *t = r->state;
  int rc = check_types(c, t, c->inputs[1]->dtype, c->inputs[2]->dtype);
  if (!rc) rc = insert_all(c, t, c->inputs[1], c->inputs[2], !t->mutable_);
  pthread_mutex_unlock(&r->mu);
  return rc;
}

static int insert_kernel(rt_kernel_ctx *c) {
  rt_resource *r = table_of(c);
  if (!r) return c->st->code;
  table *t = r->state;
  int rc = check_types(c, t, c->inputs[1]->dtype, c->inputs[2]->dtype);
  if (!rc && !t->mutable_) rc = rt_kernel_error(c, RT_UNIMPLEMENTED, "a HashTable is filled by its initializer; insert needs a MutableHashTable");
  if (!rc) rc = insert_all(c, t, c->inputs[1], c->inputs[2], false);
  pthread_mutex_unlock(&r->mu);
  return rc;
}

/* One column of a text line: the whole line (-2), its number (-1) or a delimited field. */
static int line_field(rt_kernel_ctx *c, const char *file, int64_t lineno, const char *line, size_t len, int64_t index,
                      const char *delim, rt_dtype t, entry *out, char **kbuf, size_t *klen, int64_t *knum, bool key) {
  const char *f = line;
  size_t fl = len;
  if (index == -1) {
    if (t != RT_INT64 && t != RT_INT32)
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Line number index needs an int64 column, not %s", op_tf_type(t));
    if (key) *knum = lineno, *kbuf = (char *)knum, *klen = sizeof *knum;
    else out->inum = lineno;
    return RT_OK;
  }
  if (index >= 0) {
    size_t dl = strlen(delim);
    int64_t col = 0;
    const char *p = line, *end = line + len;
    for (;;) {
      const char *hit = NULL;
      for (const char *q = p; dl && q + dl <= end && !hit; q++)
        if (!memcmp(q, delim, dl)) hit = q;
      if (col == index) {
        f = p, fl = (size_t)((hit ? hit : end) - p);
        break;
      }
      if (!hit)
        return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Invalid number of columns in %s line %lld (%.*s) : expected %lld got %lld",
                               file, (long long)lineno, (int)len, line, (long long)index + 1, (long long)col + 1);
      p = hit + dl, col++;
    }
  }
  if (t == RT_STRING) {
    if (key) *kbuf = (char *)f, *klen = fl;
    else out->sval = xstrndup(f, fl), out->slen = fl;
    return RT_OK;
  }
  char num[128], *end = NULL;
  if (fl >= sizeof num) fl = sizeof num - 1;
  memcpy(num, f, fl);
  num[fl] = 0;
  errno = 0;
  double d = 0;
  long long i = 0;
  if (t == RT_FLOAT || t == RT_DOUBLE) d = strtod(num, &end);
  else i = strtoll(num, &end, 10);
  if (!fl || *end || errno)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Field %s in line %lld is not a valid %s.", num, (long long)lineno, op_tf_type(t));
  if (key) *knum = i, *kbuf = (char *)knum, *klen = sizeof *knum;
  else if (t == RT_FLOAT || t == RT_DOUBLE) out->num = d;
  else out->inum = i;
  return RT_OK;
}

static int init_from_file_kernel(rt_kernel_ctx *c) {
  const rt_tensor *fn = c->inputs[1];
  if (fn->dtype != RT_STRING || rt_tensor_numel(fn) != 1)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "filename should be a single string");
  const rt_str *fs = rt_tensor_data(fn);
  char *file = xstrndup(fs->ptr ? fs->ptr : "", fs->len);
  int64_t ki = rt_node_int(c->node, "key_index", -2), vi = rt_node_int(c->node, "value_index", -1);
  int64_t vocab = rt_node_int(c->node, "vocab_size", -1), offset = rt_node_int(c->node, "offset", 0);
  const char *delim = rt_node_string(c->node, "delimiter", "\t");
  rt_resource *r = table_of(c);
  if (!r) return free(file), c->st->code;
  table *t = r->state;
  int rc = RT_OK;
  FILE *f = fopen(file, "rb");
  if (!f) rc = rt_kernel_error(c, RT_NOT_FOUND, "%s; %s", file, strerror(errno));
  table fresh = {.kt = t->kt, .vt = t->vt};
  char *line = NULL;
  size_t cap = 0;
  int64_t lineno = 0;
  ssize_t got;
  while (!rc && (vocab < 0 || lineno < vocab) && (got = getline(&line, &cap, f)) >= 0) {
    size_t len = (size_t)got;
    if (len && line[len - 1] == '\n') len--;
    char *kb = NULL;
    size_t kl = 0;
    int64_t knum = 0;
    entry e = {0};
    rc = line_field(c, file, lineno, line, len, ki, delim, t->kt, NULL, &kb, &kl, &knum, true);
    if (!rc) rc = line_field(c, file, lineno, line, len, vi, delim, t->vt, &e, NULL, NULL, NULL, false);
    if (!rc && vi == -1) e.inum += offset;
    if (!rc) rc = put(c, &fresh, kb, kl, &e);
    else free(e.sval);
    lineno++;
  }
  if (!rc && vocab > 0 && lineno < vocab)
    rc = rt_kernel_error(c, RT_INVALID_ARGUMENT, "Invalid vocab_size in %s: expected %lld but got %lld", file, (long long)vocab,
                         (long long)lineno);
  free(line);
  if (f) fclose(f);
  if (!rc && t->initialized) {   /* again: fine when the file gave the same table */
    bool same = fresh.n == t->n;
    for (int64_t i = 0; i < fresh.n && same; i++) {
      int64_t at = find(t, fresh.e[i].key, fresh.e[i].klen, fresh.e[i].hash);
      same = at >= 0 && value_same(&t->e[at], &fresh.e[i], t->vt);
    }
    if (!same) rc = rt_kernel_error(c, RT_FAILED_PRECONDITION, "Table was already initialized with different data.");
    table_clear(&fresh);
  } else if (!rc) {
    fresh.mutable_ = t->mutable_;
    fresh.initialized = true;
    table_clear(t);
    *t = fresh;
  } else {
    table_clear(&fresh);
  }
  pthread_mutex_unlock(&r->mu);
  free(file);
  return rc;
}

/* ---- reading it ------------------------------------------------------------------------ */

static int find_kernel(rt_kernel_ctx *c) {
  const rt_tensor *k = c->inputs[1], *d = c->inputs[2];
  rt_resource *r = table_of(c);
  if (!r) return c->st->code;
  table *t = r->state;
  int rc = check_types(c, t, k->dtype, d->dtype);
  if (!rc && !t->mutable_ && !t->initialized) rc = rt_kernel_error(c, RT_FAILED_PRECONDITION, "Table not initialized.");
  char a[128];
  if (!rc && rt_tensor_numel(d) != 1)
    rc = rt_kernel_error(c, RT_INVALID_ARGUMENT, "Expected shape [] or [1] for default value, got %s", op_shape_tf(&d->shape, a, sizeof a));
  rt_tensor *o = rc ? NULL : rt_kernel_output(c, 0, t->vt, &k->shape);
  if (!rc && !o) rc = c->st->code;
  entry dflt = {0};
  if (!rc) value_get(d, 0, &dflt);
  for (int64_t i = 0, n = rc ? 0 : rt_tensor_numel(k); i < n; i++) {
    size_t kl;
    int64_t tmp;
    const char *kb = key_bytes(k, i, &kl, &tmp);
    int64_t at = find(t, kb, kl, fnv(kb, kl));
    value_put(o, i, at >= 0 ? &t->e[at] : &dflt);
  }
  free(dflt.sval);
  pthread_mutex_unlock(&r->mu);
  return rc;
}

static int size_kernel(rt_kernel_ctx *c) {
  rt_resource *r = table_of(c);
  if (!r) return c->st->code;
  int64_t n = ((table *)r->state)->n;
  pthread_mutex_unlock(&r->mu);
  rt_shape sc = rt_shape_scalar();
  rt_tensor *o = rt_kernel_output(c, 0, RT_INT64, &sc);
  if (!o) return c->st->code;
  *(int64_t *)rt_tensor_data(o) = n;
  return RT_OK;
}

/* ---- FarmHash's Fingerprint64 (farmhashna's Hash64), for StringToHashBucketFast --------- */

static const uint64_t K0 = 0xc3a5c85c97cb3127ULL, K1 = 0xb492b66fbe98f273ULL, K2 = 0x9ae16a3b2f90404fULL;

static uint64_t f64(const char *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;   /* little-endian hosts (x86-64, aarch64), as the fingerprint is defined */
}
static uint64_t f32(const char *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}
static uint64_t ror(uint64_t v, int s) { return s ? (v >> s) | (v << (64 - s)) : v; }
static uint64_t smix(uint64_t v) { return v ^ (v >> 47); }

static uint64_t len16(uint64_t u, uint64_t v, uint64_t mul) {
  uint64_t a = (u ^ v) * mul;
  a ^= a >> 47;
  uint64_t b = (v ^ a) * mul;
  b ^= b >> 47;
  return b * mul;
}

static uint64_t len0to16(const char *s, size_t n) {
  if (n >= 8) {
    uint64_t mul = K2 + n * 2, a = f64(s) + K2, b = f64(s + n - 8);
    uint64_t c = ror(b, 37) * mul + a, d = (ror(a, 25) + b) * mul;
    return len16(c, d, mul);
  }
  if (n >= 4) {
    uint64_t mul = K2 + n * 2;
    return len16(n + (f32(s) << 3), f32(s + n - 4), mul);
  }
  if (n > 0) {
    uint64_t a = (unsigned char)s[0], b = (unsigned char)s[n >> 1], c = (unsigned char)s[n - 1];
    uint32_t y = (uint32_t)(a + (b << 8)), z = (uint32_t)(n + (c << 2));
    return smix(y * K2 ^ z * K0) * K2;
  }
  return K2;
}

static uint64_t len17to32(const char *s, size_t n) {
  uint64_t mul = K2 + n * 2, a = f64(s) * K1, b = f64(s + 8), c = f64(s + n - 8) * mul, d = f64(s + n - 16) * K2;
  return len16(ror(a + b, 43) + ror(c, 30) + d, a + ror(b + K2, 18) + c, mul);
}

static uint64_t len33to64(const char *s, size_t n) {
  uint64_t mul = K2 + n * 2, a = f64(s) * K2, b = f64(s + 8), c = f64(s + n - 8) * mul, d = f64(s + n - 16) * K2;
  uint64_t y = ror(a + b, 43) + ror(c, 30) + d, z = len16(y, a + ror(b + K2, 18) + c, mul);
  uint64_t e = f64(s + 16) * mul, f = f64(s + 24), g = (y + f64(s + n - 32)) * mul, h = (z + f64(s + n - 24)) * mul;
  return len16(ror(e + f, 43) + ror(g, 30) + h, e + ror(f + a, 18) + g, mul);
}

typedef struct pair64 {
  uint64_t a, b;
} pair64;

static pair64 weak32(const char *s, uint64_t a, uint64_t b) {
  uint64_t w = f64(s), x = f64(s + 8), y = f64(s + 16), z = f64(s + 24);
  a += w;
  b = ror(b + a + z, 21);
  uint64_t c = a;
  a += x;
  a += y;
  b += ror(a, 44);
  return (pair64){a + z, b + c};
}

static uint64_t fingerprint64(const char *s, size_t n) {
  if (n <= 16) return len0to16(s, n);
  if (n <= 32) return len17to32(s, n);
  if (n <= 64) return len33to64(s, n);
  uint64_t x = 81, y = 81 * K1 + 113, z = smix(y * K2 + 113) * K2;
  pair64 v = {0, 0}, w = {0, 0};
  x = x * K2 + f64(s);
  const char *end = s + ((n - 1) / 64) * 64, *last = end + ((n - 1) & 63) - 63;
  do {
    x = ror(x + y + v.a + f64(s + 8), 37) * K1;
    y = ror(y + v.b + f64(s + 48), 42) * K1;
    x ^= w.b;
    y += v.a + f64(s + 40);
    z = ror(z + w.a, 33) * K1;
    v = weak32(s, v.b * K1, x + w.a);
    w = weak32(s + 32, z + w.b, y + f64(s + 16));
    uint64_t t = z;
    z = x, x = t;
    s += 64;
  } while (s != end);
  uint64_t mul = K1 + ((z & 0xff) << 1);
  s = last;
  w.a += (n - 1) & 63;
  v.a += w.a;
  w.a += v.a;
  x = ror(x + y + v.a + f64(s + 8), 37) * mul;
  y = ror(y + v.b + f64(s + 48), 42) * mul;
  x ^= w.b * 9;
  y += v.a * 9 + f64(s + 40);
  z = ror(z + w.a, 33) * mul;
  v = weak32(s, v.b * mul, x + w.a);
  w = weak32(s + 32, z + w.b, y + f64(s + 16));
  uint64_t t = z;
  z = x, x = t;
  return len16(len16(v.a, w.a, mul) + smix(y) * K0 + z, len16(v.b, w.b, mul) + x, mul);
}

static int hash_bucket_fast_kernel(rt_kernel_ctx *c) {
  const rt_tensor *in = c->inputs[0];
  int64_t nb = rt_node_int(c->node, "num_buckets", 1);
  if (nb < 1) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "num_buckets must be at least 1, not %lld", (long long)nb);
  rt_tensor *o = rt_kernel_output(c, 0, RT_INT64, &in->shape);
  if (!o) return c->st->code;
  const rt_str *s = rt_tensor_data(in);
  int64_t *d = rt_tensor_data(o);
  for (int64_t i = 0, n = rt_tensor_numel(in); i < n; i++)
    d[i] = (int64_t)(fingerprint64(s[i].ptr ? s[i].ptr : "", s[i].len) % (uint64_t)nb);
  return RT_OK;
}

/* ---- the table ---------------------------------------------------------------------------- */

static int handle_shape(rt_shape_ctx *c) {
  c->out_shapes[0] = rt_shape_scalar();
  return RT_OK;
}

static int find_shape(rt_shape_ctx *c) {
  c->out_types[0] = c->in_types[2];
  c->out_shapes[0] = c->in_shapes[1];
  return RT_OK;
}

static int hash_bucket_shape(rt_shape_ctx *c) {
  c->out_shapes[0] = c->in_shapes[0];
  return RT_OK;
}

#define TABLE_ATTRS \
  "container: string = '', shared_name: string = '', use_node_name_sharing: bool = false, key_dtype: type, value_dtype: type"

static const rt_op_def lookup_ops[] = {
  {.name = "HashTableV2", .outputs = "table_handle: resource", .attrs = TABLE_ATTRS,
   .help = "A hash table of its device, filled once by an initializer; outputs its handle.", .shape = handle_shape,
   .kernel = {[RT_DEV_CPU] = hash_table_kernel}, .grad = op_no_grad, .flags = RT_OP_STATEFUL | RT_OP_SOURCE},
  {.name = "MutableHashTableV2", .outputs = "table_handle: resource", .attrs = TABLE_ATTRS,
   .help = "A hash table of its device that LookupTableInsertV2 updates; outputs its handle.", .shape = handle_shape,
   .kernel = {[RT_DEV_CPU] = mutable_table_kernel}, .grad = op_no_grad, .flags = RT_OP_STATEFUL | RT_OP_SOURCE},
  {.name = "InitializeTableV2", .inputs = "table_handle: resource, keys: Tkey, values: Tval",
   .attrs = "Tkey: type, Tval: type", .help = "Fill a hash table with keys -> values (once).",
   .kernel = {[RT_DEV_CPU] = init_kernel}, .grad = op_no_grad, .flags = RT_OP_STATEFUL},
  {.name = "LookupTableImportV2", .inputs = "table_handle: resource, keys: Tin, values: Tout",
   .attrs = "Tin: type, Tout: type", .help = "Fill a hash table with keys -> values (TF 2's initializer).",
   .kernel = {[RT_DEV_CPU] = init_kernel}, .grad = op_no_grad, .flags = RT_OP_STATEFUL},
  {.name = "InitializeTableFromTextFileV2", .inputs = "table_handle: resource, filename: string",
   .attrs = "key_index: int >= -2, value_index: int >= -2, vocab_size: int >= -1 = -1, delimiter: string = '\t', "
            "offset: int = 0",
   .help = "Fill a hash table from a text file: per line, the whole line (-2), its number (-1) or a column.",
   .kernel = {[RT_DEV_CPU] = init_from_file_kernel}, .grad = op_no_grad, .flags = RT_OP_STATEFUL},
  {.name = "LookupTableFindV2", .inputs = "table_handle: resource, keys: Tin, default_value: Tout", .outputs = "values: Tout",
   .attrs = "Tin: type, Tout: type", .help = "The values of keys; default_value where a key is missing.",
   .shape = find_shape, .kernel = {[RT_DEV_CPU] = find_kernel}, .grad = op_no_grad, .flags = RT_OP_STATEFUL},
  {.name = "LookupTableInsertV2", .inputs = "table_handle: resource, keys: Tin, values: Tout",
   .attrs = "Tin: type, Tout: type", .help = "Put keys -> values into a MutableHashTable.",
   .kernel = {[RT_DEV_CPU] = insert_kernel}, .grad = op_no_grad, .flags = RT_OP_STATEFUL},
  {.name = "LookupTableSizeV2", .inputs = "table_handle: resource", .outputs = "size: int64",
   .help = "The number of entries of a table.", .shape = handle_shape, .kernel = {[RT_DEV_CPU] = size_kernel},
   .grad = op_no_grad, .flags = RT_OP_STATEFUL},
  {.name = "StringToHashBucketFast", .inputs = "input: string", .outputs = "output: int64", .attrs = "num_buckets: int >= 1",
   .help = "FarmHash Fingerprint64 of each string, modulo num_buckets (TF's fast string hash).",
   .shape = hash_bucket_shape, .kernel = {[RT_DEV_CPU] = hash_bucket_fast_kernel}, .grad = op_no_grad},
};

void op_lookup_register(void) { rt_op_register(lookup_ops, OP_COUNT(lookup_ops)); }
