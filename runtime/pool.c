/* The intra-op pool (runtime/pool.h).
 *
 * One job slot. Its claim word packs (threads, ntiles, next tile): a thread takes tile
 * `next` by one compare-and-swap on the whole word, so a claim is valid for exactly the job
 * that is current at that instant, whatever the thread saw before (a pool thread that slept
 * through a job, or woke late, cannot take a tile of the wrong job or one past its end).
 * A claimed tile keeps the job alive: the caller returns only when `done` reaches ntiles,
 * and only then may the next job overwrite fn and arg. Everything shared is a C11 atomic,
 * so TSan sees every hand-off; the futexes only put waiting threads to sleep. */
#define _GNU_SOURCE
#include "runtime/pool.h"

#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { THREAD_BITS = 8, COUNT_BITS = 28, MAX_THREADS = (1 << THREAD_BITS) - 1 };
#define MAX_TILES ((INT64_C(1) << COUNT_BITS) - 1)
/* Spins between looks (about 20-60 us in all) before a thread sleeps: back-to-back
 * kernels of one step find the pool awake, an idle process costs nothing. */
enum { SPINS = 2048 };
/* Work left (at the caller's pace) that is worth a futex wake of sleeping pool threads. */
enum { WAKE_NS = 50000 };

static struct {
  pthread_mutex_t grow;        /* starting pool threads */
  _Atomic int started;         /* pool threads running: who = 1..started */
  _Atomic int busy;            /* a job holds the slot */
  _Atomic uint64_t claim;      /* threads | ntiles | next */
  _Atomic uint32_t done;       /* tiles finished (futex: the caller waits on it) */
  _Atomic int caller_sleeps;
  _Atomic uint32_t seq;        /* bumped per job (futex: idle pool threads wait on it) */
  _Atomic int sleepers;
  rt_tile_fn fn;               /* written only while no tile of the last job is left */
  void *arg;
} P = {.grow = PTHREAD_MUTEX_INITIALIZER};

static inline uint64_t pack(uint64_t threads, uint64_t ntiles, uint64_t next) {
  return threads << (2 * COUNT_BITS) | ntiles << COUNT_BITS | next;
}
#define CLAIM_THREADS(c) ((int)((c) >> (2 * COUNT_BITS)))
#define CLAIM_NTILES(c) ((int64_t)((c) >> COUNT_BITS & MAX_TILES))
#define CLAIM_NEXT(c) ((int64_t)((c)&MAX_TILES))

static inline void relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

static void futex_wait(_Atomic uint32_t *w, uint32_t val) {
  syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}
static void futex_wake(_Atomic uint32_t *w) {
  syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Takes and runs tiles of the current job while there are any this thread may take. The
 * caller (who 0) wakes sleeping pool threads only once the tiles left look worth it: in
 * these VMs a futex wake costs the waker 15-170 us (the woken vCPU's IPI, or the woken
 * thread preempting it), where a kernel of 32K floats takes 5-10 us in all. So a job of
 * tiny tiles runs on the caller and whichever threads are still spinning; one whose
 * unclaimed tiles would take the caller more than WAKE_NS at the pace of its first ones
 * wakes the others. */
static void work(int who) {
  uint64_t c = atomic_load_explicit(&P.claim, memory_order_acquire);
  int64_t t0 = who == 0 && atomic_load(&P.sleepers) ? now_ns() : 0, ran = 0;
  for (;;) {
    if (who >= CLAIM_THREADS(c) || CLAIM_NEXT(c) >= CLAIM_NTILES(c)) return;
    if (!atomic_compare_exchange_weak_explicit(&P.claim, &c, c + 1, memory_order_acquire,
                                               memory_order_acquire))
      continue;
    int64_t ntiles = CLAIM_NTILES(c);
    P.fn(P.arg, CLAIM_NEXT(c), who);
    if (atomic_fetch_add_explicit(&P.done, 1, memory_order_acq_rel) + 1 == (uint32_t)ntiles &&
        atomic_load(&P.caller_sleeps))
      futex_wake(&P.done);
    c = atomic_load_explicit(&P.claim, memory_order_acquire);
    if (t0 && CLAIM_NEXT(c) < ntiles) {
      int64_t left = ntiles - CLAIM_NEXT(c), spent = now_ns() - t0;
      if (spent / ++ran * left > WAKE_NS) {
        if (atomic_load(&P.sleepers)) futex_wake(&P.seq);
        t0 = 0;
      }
    }
  }
}

static void *pool_main(void *p) {
  int who = (int)(intptr_t)p;
  uint32_t seen = atomic_load(&P.seq);
  for (;;) {
    uint32_t s;
    for (int spins = 0; (s = atomic_load_explicit(&P.seq, memory_order_acquire)) == seen;) {
      if (++spins < SPINS) {
        relax();
        continue;
      }
      atomic_fetch_add(&P.sleepers, 1);
      futex_wait(&P.seq, seen);
      atomic_fetch_sub(&P.sleepers, 1);
      spins = 0;
    }
    seen = s;
    work(who);
  }
  return NULL;
}

static void grow_to(int n) {   /* pool threads 1..n; fewer if the system refuses */
  if (atomic_load(&P.started) >= n) return;
  pthread_mutex_lock(&P.grow);
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);   /* signals stay with the process's own threads */
  pthread_attr_t at;
  pthread_attr_init(&at);
  pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
  for (int who = atomic_load(&P.started) + 1; who <= n; who++) {
    pthread_t t;
    if (pthread_create(&t, &at, pool_main, (void *)(intptr_t)who)) break;
    pthread_setname_np(t, "tfsh-pool");
    atomic_store(&P.started, who);
  }
  pthread_attr_destroy(&at);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  pthread_mutex_unlock(&P.grow);
}

static void after_fork(void) {   /* the child has none of the parent's pool threads */
  pthread_mutex_init(&P.grow, NULL);
  atomic_store(&P.started, 0);
  atomic_store(&P.busy, 0);
  atomic_store(&P.sleepers, 0);
  atomic_store(&P.caller_sleeps, 0);
  atomic_store(&P.claim, 0);
}
static void at_fork_once(void) { pthread_atfork(NULL, NULL, after_fork); }

static void parallel_tiles(int64_t ntiles, int threads, rt_tile_fn fn, void *arg, bool wake_now) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  if (ntiles <= 0) return;
  if (threads > ntiles) threads = (int)ntiles;
  if (threads > MAX_THREADS) threads = MAX_THREADS;
  if (threads > 1 && ntiles <= MAX_TILES) {
    pthread_once(&once, at_fork_once);
    grow_to(threads - 1);
    threads = atomic_load(&P.started) + 1 < threads ? atomic_load(&P.started) + 1 : threads;
  }
  if (threads <= 1 || ntiles > MAX_TILES || atomic_exchange(&P.busy, 1)) {
    for (int64_t t = 0; t < ntiles; t++) fn(arg, t, 0);   /* alone, or the pool is busy */
    return;
  }
  P.fn = fn, P.arg = arg;
  atomic_store_explicit(&P.done, 0, memory_order_relaxed);
  atomic_store_explicit(&P.claim, pack((uint64_t)threads, (uint64_t)ntiles, 0),
                        memory_order_release);
  atomic_fetch_add(&P.seq, 1);   /* spinning threads join now; work(0) wakes sleepers */
  if (wake_now && atomic_load(&P.sleepers)) futex_wake(&P.seq);
  work(0);
  uint32_t d;
  for (int spins = 0; (d = atomic_load_explicit(&P.done, memory_order_acquire)) != ntiles;) {
    if (++spins < SPINS) {   /* another thread is finishing a tile it claimed */
      relax();
      continue;
    }
    atomic_store(&P.caller_sleeps, 1);
    if (atomic_load(&P.done) == d) futex_wait(&P.done, d);
    atomic_store(&P.caller_sleeps, 0);
  }
  atomic_store_explicit(&P.busy, 0, memory_order_release);
}

void rt_parallel_tiles(int64_t ntiles, int threads, rt_tile_fn fn, void *arg) {
  parallel_tiles(ntiles, threads, fn, arg, false);
}

void rt_parallel_tiles_heavy(int64_t ntiles, int threads, rt_tile_fn fn, void *arg) {
  parallel_tiles(ntiles, threads, fn, arg, true);
}

typedef struct {
  int64_t n, per;
  rt_range_fn fn;
  void *arg;
} range_job;

static void range_tile(void *arg, int64_t t, int who) {
  const range_job *r = arg;
  int64_t lo = t * r->per;
  r->fn(r->arg, lo, r->n - lo < r->per ? r->n : lo + r->per, who);
}

void rt_parallel_range(int64_t n, int64_t min_per_tile, int threads, rt_range_fn fn, void *arg) {
  if (n <= 0) return;
  if (min_per_tile < 1) min_per_tile = 1;
  if (threads <= 1 || n < 2 * min_per_tile) {
    fn(arg, 0, n, 0);
    return;
  }
  int64_t want = (int64_t)threads * RT_RANGE_PER_THREAD, per = (n + want - 1) / want;
  range_job r = {.n = n, .per = (per + min_per_tile - 1) / min_per_tile * min_per_tile,
                 .fn = fn, .arg = arg};
  rt_parallel_tiles((n + r.per - 1) / r.per, threads, range_tile, &r);
}
