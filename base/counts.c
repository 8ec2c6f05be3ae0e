/* A count per string (counts.h). */
#include "base/counts.h"
#include "base/alloc.h"
#include "base/str.h"

#include <stdlib.h>
#include <string.h>

typedef struct slot {
  const char *s;   /* NULL: empty */
  uint32_t hash;
  int64_t count;
} slot;

typedef struct block {   /* a pool block: strings packed one after another */
  struct block *next;
  size_t used, cap;
  char text[];
} block;

struct counts {
  slot *slots;
  size_t cap, n;   /* cap a power of two, n <= cap / 2 */
  block *pool;
};

enum { BLOCK_BYTES = 64 << 10, FIRST_SLOTS = 64 };

counts *counts_new(void) {
  counts *c = xcalloc(1, sizeof *c);
  c->cap = FIRST_SLOTS;
  c->slots = xcalloc(c->cap, sizeof *c->slots);
  return c;
}

void counts_free(counts *c) {
  if (!c) return;
  for (block *b = c->pool, *next; b; b = next) next = b->next, free(b);
  free(c->slots);
  free(c);
}

static slot *find(const counts *c, const char *s, uint32_t hash) {
  size_t mask = c->cap - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask)
    if (!c->slots[i].s || (c->slots[i].hash == hash && !strcmp(c->slots[i].s, s))) return &c->slots[i];
}

int64_t counts_get(const counts *c, const char *s) {
  const slot *e = find(c, s, str_hash(s, NULL));
  return e->s ? e->count : 0;
}

static const char *keep(counts *c, const char *s, size_t len) {
  block *b = c->pool;
  if (!b || b->cap - b->used <= len) {
    size_t cap = len + 1 > BLOCK_BYTES ? len + 1 : BLOCK_BYTES;
    b = xmalloc(sizeof *b + cap);
    b->used = 0, b->cap = cap, b->next = c->pool;
    c->pool = b;
  }
  char *p = b->text + b->used;
  memcpy(p, s, len + 1);
  b->used += len + 1;
  return p;
}

static void grow(counts *c) {
  slot *old = c->slots;
  size_t old_cap = c->cap;
  c->cap *= 2;
  c->slots = xcalloc(c->cap, sizeof *c->slots);
  for (size_t i = 0; i < old_cap; i++)
    if (old[i].s) {
      size_t k = old[i].hash & (c->cap - 1);
      while (c->slots[k].s) k = (k + 1) & (c->cap - 1);
      c->slots[k] = old[i];
    }
  free(old);
}

void counts_set(counts *c, const char *s, int64_t count) {
  size_t len;
  uint32_t hash = str_hash(s, &len);
  slot *e = find(c, s, hash);
  if (!e->s) {
    if (2 * (c->n + 1) > c->cap) {
      grow(c);
      e = find(c, s, hash);
    }
    *e = (slot){keep(c, s, len), hash, 0};
    c->n++;
  }
  e->count = count;
}

int64_t counts_size(const counts *c) { return (int64_t)c->n; }
