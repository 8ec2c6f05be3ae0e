/* The device allocator's bookkeeping: best-fit bins over a few large chunks.
 *
 * Chunks come from a backing source (cudaMalloc for a GPU, malloc in the unit tests); a
 * tensor's buffer is a block carved from a chunk, and a freed block goes back to its bin,
 * merged with free neighbours, for the next tensor: one cudaMalloc per chunk, never one per
 * tensor. Two policies, as TF1's gpu_options:
 *   - grow = false: the whole limit is reserved by the first allocation (one chunk);
 *   - grow = true (allow_growth): chunks are added as needed, each at least twice the last
 *     (1 MiB first), never past the limit.
 * An allocation that does not fit under the limit fails (NULL); the caller reports it. */
#ifndef TFSH_GPU_ALLOC_H
#define TFSH_GPU_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct rt_dev_alloc rt_dev_alloc;

typedef struct rt_chunk_source {
  void *(*get)(void *arg, size_t nbytes);   /* NULL when the device has no memory left */
  void (*put)(void *arg, void *p);
  void *arg;
} rt_chunk_source;

typedef struct rt_dev_alloc_stats {
  uint64_t in_use;      /* bytes in live blocks (rounded to 256) */
  uint64_t peak;        /* the most in_use has been */
  uint64_t reserved;    /* bytes in chunks */
  uint64_t limit;
  int n_chunks;
  int64_t n_allocs;     /* blocks handed out so far */
} rt_dev_alloc_stats;

rt_dev_alloc *rt_dev_alloc_new(uint64_t limit, bool grow, const rt_chunk_source *src);
/* Frees every chunk (live blocks included). */
void rt_dev_alloc_free(rt_dev_alloc *a);
/* 256-byte aligned within its chunk; n = 0 gets a 256-byte block. NULL: over the limit, or
 * the source failed. */
void *rt_dev_alloc_get(rt_dev_alloc *a, size_t n);
void rt_dev_alloc_put(rt_dev_alloc *a, void *p);
void rt_dev_alloc_stats_get(rt_dev_alloc *a, rt_dev_alloc_stats *s);

#endif
