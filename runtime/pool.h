/* The process's intra-op pool: one kernel's work cut into tiles, handed out one at a time
 * to the calling thread and whichever pool threads are free.
 *
 * Why not BLIS's or OpenMP's own threads: both split the work statically and meet at
 * barriers, so a thread that is not running (another process holds its core, or the
 * process is pinned to fewer CPUs than it has threads) stalls every other one; on these
 * 2-CPU machines two BLIS threads then ran 10-40x slower than one. Here the caller never
 * waits for a thread that has not started: it takes the tiles nobody has claimed and waits
 * only for tiles another thread is running. So N threads are never much slower than one
 * (at worst by the last tile), and as fast as N when the cores are free.
 *
 * Pool threads spin briefly between jobs, then sleep on a futex; the caller wakes sleepers
 * only when the tiles left are worth the wake (pool.c: WAKE_NS). One job runs at a time;
 * a kernel that finds the pool busy (another executor thread's kernel has it) runs its
 * tiles alone, which is the right share when the inter-op threads already fill the cores. */
#ifndef TFSH_RUNTIME_POOL_H
#define TFSH_RUNTIME_POOL_H

#include <stdint.h>

/* fn(arg, tile, who) for every tile in [0, ntiles), on at most `threads` threads (the
 * caller is one; threads <= 1 runs everything here). `who` in [0, threads) names the
 * thread running the call (0: the caller), for per-thread scratch; calls with the same
 * `who` never overlap. Returns when every call has returned. */
typedef void (*rt_tile_fn)(void *arg, int64_t tile, int who);
void rt_parallel_tiles(int64_t ntiles, int threads, rt_tile_fn fn, void *arg);
/* The same for tiles each worth a futex wake (a GEMM tile, a convolution chunk: about one
 * per thread): sleeping pool threads are woken at once, not once the caller has timed its
 * first tiles, which on a grid of one tile a thread ran half the job on the caller. */
void rt_parallel_tiles_heavy(int64_t ntiles, int threads, rt_tile_fn fn, void *arg);

/* The tiles [0, n) cut into `parts` near-equal runs (part p is [lo, hi)), for loops that
 * want a few big tiles. */
static inline void rt_tile_range(int64_t n, int64_t parts, int64_t p, int64_t *lo, int64_t *hi) {
  *lo = n * p / parts, *hi = n * (p + 1) / parts;
}

/* fn(arg, lo, hi, who) over [0, n) in tiles, for a kernel's loop: about RT_RANGE_PER_THREAD
 * tiles a thread, so a thread whose core another process shares holds the caller up by a
 * quarter of its share at most (with a core busy, a static half split made the CNN step
 * 1.43x slower on two threads than on one); tiles start at multiples of min_per_tile
 * (blocks a kernel keeps whole stay whole) and all but the last have at least that many
 * items. One call [0, n) here when threads <= 1 or n < 2 * min_per_tile. The cut depends
 * on the thread count: sums whose grouping must not, see rt_sum_tiles. */
enum { RT_RANGE_PER_THREAD = 4 };
typedef void (*rt_range_fn)(void *arg, int64_t lo, int64_t hi, int who);
void rt_parallel_range(int64_t n, int64_t min_per_tile, int threads, rt_range_fn fn, void *arg);

/* Tiles for a sum whose result must not depend on the thread count: a partial per tile,
 * added in tile order afterwards, gives the same bits on 1 thread as on 64. n / min_per_tile
 * tiles of rt_tile_range, 1 to RT_SUM_TILES (64 partials are few to add, and enough tiles
 * for the balance on 16 threads). */
enum { RT_SUM_TILES = 64 };
static inline int64_t rt_sum_tiles(int64_t n, int64_t min_per_tile) {
  int64_t t = min_per_tile > 0 ? n / min_per_tile : n;
  return t < 1 ? 1 : t > RT_SUM_TILES ? RT_SUM_TILES : t;
}

#endif
