/* Best-fit bins over chunks (alloc.h). Blocks of one chunk form an address-ordered list;
 * free blocks also sit in the bin of their size class (log2 of the size in 256-byte
 * units); live blocks are found by address in a small hash table. */
#include "runtime/gpu/alloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define GRAIN 256u
#define N_BINS 40
#define N_HASH 4096
#define FIRST_GROWTH (1u << 20)

typedef struct block {
  char *ptr;
  size_t size;
  bool free;
  struct block *prev, *next;          /* neighbours in the chunk, by address */
  struct block *bin_prev, *bin_next;  /* free blocks of one bin */
  struct block *hash_next;            /* live blocks by address */
  int chunk;
} block;

typedef struct chunk {
  void *base;
  size_t size;
} chunk;

struct rt_dev_alloc {
  pthread_mutex_t mu;
  rt_chunk_source src;
  uint64_t limit;
  bool grow;
  chunk *chunks;
  int n_chunks;
  size_t last_chunk;
  block *bins[N_BINS];
  block *live[N_HASH];
  rt_dev_alloc_stats st;
};

static int bin_of(size_t size) {
  size_t units = size / GRAIN;
  int b = 0;
  while (units > 1 && b < N_BINS - 1) {
    units >>= 1;
    b++;
  }
  return b;
}

static size_t hash_of(const void *p) { return ((uintptr_t)p / GRAIN * 2654435761u) % N_HASH; }

static void bin_insert(rt_dev_alloc *a, block *b) {
  int k = bin_of(b->size);
  b->free = true;
  b->bin_prev = NULL;
  b->bin_next = a->bins[k];
  if (a->bins[k]) a->bins[k]->bin_prev = b;
  a->bins[k] = b;
}

static void bin_remove(rt_dev_alloc *a, block *b) {
  if (b->bin_prev) b->bin_prev->bin_next = b->bin_next;
  else a->bins[bin_of(b->size)] = b->bin_next;
  if (b->bin_next) b->bin_next->bin_prev = b->bin_prev;
  b->free = false;
  b->bin_prev = b->bin_next = NULL;
}

rt_dev_alloc *rt_dev_alloc_new(uint64_t limit, bool grow, const rt_chunk_source *src) {
  rt_dev_alloc *a = calloc(1, sizeof *a);
  if (!a) return NULL;
  pthread_mutex_init(&a->mu, NULL);
  a->src = *src;
  a->limit = limit / GRAIN * GRAIN;
  a->grow = grow;
  a->st.limit = a->limit;
  return a;
}

void rt_dev_alloc_free(rt_dev_alloc *a) {
  if (!a) return;
  for (int k = 0; k < N_BINS; k++)
    for (block *b = a->bins[k], *nx; b; b = nx) {
      nx = b->bin_next;
      free(b);
    }
  for (int h = 0; h < N_HASH; h++)
    for (block *b = a->live[h], *nx; b; b = nx) {
      nx = b->hash_next;
      free(b);
    }
  for (int i = 0; i < a->n_chunks; i++) a->src.put(a->src.arg, a->chunks[i].base);
  free(a->chunks);
  pthread_mutex_destroy(&a->mu);
  free(a);
}

/* A new chunk able to hold `need` bytes, its whole space one free block. */
static bool add_chunk(rt_dev_alloc *a, size_t need) {
  uint64_t room = a->limit - a->st.reserved;
  size_t size;
  if (!a->grow) {
    size = (size_t)room;                 /* everything, once */
  } else {
    size = a->last_chunk ? a->last_chunk * 2 : FIRST_GROWTH;
    if (size < need) size = need;
    if (size > room) size = (size_t)room;
  }
  if (size < need || size == 0) return false;
  void *base = a->src.get(a->src.arg, size);
  block *b = calloc(1, sizeof *b);
  chunk *cs = realloc(a->chunks, (size_t)(a->n_chunks + 1) * sizeof *cs);
  if (!base || !b || !cs) {
    if (base) a->src.put(a->src.arg, base);
    free(b);
    if (cs) a->chunks = cs;
    return false;
  }
  a->chunks = cs;
  a->chunks[a->n_chunks] = (chunk){base, size};
  b->ptr = base;
  b->size = size;
  b->chunk = a->n_chunks++;
  bin_insert(a, b);
  a->last_chunk = size;
  a->st.reserved += size;
  a->st.n_chunks = a->n_chunks;
  return true;
}

static block *best_fit(rt_dev_alloc *a, size_t n) {
  for (int k = bin_of(n); k < N_BINS; k++) {
    block *best = NULL;
    for (block *b = a->bins[k]; b; b = b->bin_next)
      if (b->size >= n && (!best || b->size < best->size || (b->size == best->size && b->ptr < best->ptr)))
        best = b;
    if (best) return best;
  }
  return NULL;
}

void *rt_dev_alloc_get(rt_dev_alloc *a, size_t n) {
  n = n ? (n + GRAIN - 1) / GRAIN * GRAIN : GRAIN;
  pthread_mutex_lock(&a->mu);
  block *b = best_fit(a, n);
  if (!b && add_chunk(a, n)) b = best_fit(a, n);
  if (!b) {
    pthread_mutex_unlock(&a->mu);
    return NULL;
  }
  bin_remove(a, b);
  if (b->size - n >= GRAIN) {              /* split: the rest stays free */
    block *rest = calloc(1, sizeof *rest);
    if (rest) {
      rest->ptr = b->ptr + n;
      rest->size = b->size - n;
      rest->chunk = b->chunk;
      rest->prev = b;
      rest->next = b->next;
      if (b->next) b->next->prev = rest;
      b->next = rest;
      b->size = n;
      bin_insert(a, rest);
    }
  }
  size_t h = hash_of(b->ptr);
  b->hash_next = a->live[h];
  a->live[h] = b;
  a->st.in_use += b->size;
  if (a->st.in_use > a->st.peak) a->st.peak = a->st.in_use;
  a->st.n_allocs++;
  pthread_mutex_unlock(&a->mu);
  return b->ptr;
}

/* b (free, out of its bin) absorbs its free successor. */
static void absorb_next(rt_dev_alloc *a, block *b) {
  block *nx = b->next;
  bin_remove(a, nx);
  b->size += nx->size;
  b->next = nx->next;
  if (nx->next) nx->next->prev = b;
  free(nx);
}

void rt_dev_alloc_put(rt_dev_alloc *a, void *p) {
  if (!p) return;
  pthread_mutex_lock(&a->mu);
  block **pp = &a->live[hash_of(p)];
  while (*pp && (*pp)->ptr != (char *)p) pp = &(*pp)->hash_next;
  block *b = *pp;
  if (!b) {                                /* not ours: a programmer error, ignored */
    pthread_mutex_unlock(&a->mu);
    return;
  }
  *pp = b->hash_next;
  b->hash_next = NULL;
  a->st.in_use -= b->size;
  if (b->next && b->next->free) absorb_next(a, b);
  if (b->prev && b->prev->free) {
    block *pr = b->prev;
    bin_remove(a, pr);
    b->free = true;                        /* absorb_next takes b out of a bin: put it in one */
    bin_insert(a, b);
    absorb_next(a, pr);
    bin_insert(a, pr);
  } else {
    bin_insert(a, b);
  }
  pthread_mutex_unlock(&a->mu);
}

void rt_dev_alloc_stats_get(rt_dev_alloc *a, rt_dev_alloc_stats *s) {
  pthread_mutex_lock(&a->mu);
  *s = a->st;
  pthread_mutex_unlock(&a->mu);
}
