/* A step: one run of a graph fragment on one device. It carries the step id, the
 * cancellation flag, the rendezvous hooks that _Send/_Recv use, and progress counters that
 * the live views read (written by the executor, read by anyone; all atomic). */
#ifndef TFSH_STEP_H
#define TFSH_STEP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "base/status.h"
#include "runtime/tensor.h"

typedef struct rt_step rt_step;

/* A dead value (the untaken output of a Switch, a loop's last iteration) crossing a
 * rendezvous: a _Send of a dead value sends this, and the _Recv that gets it yields a dead
 * value (TF's is_dead). It holds no bytes and is never freed (exec_cf.c defines it). */
extern rt_tensor rt_dead_value;
#define RT_DEAD (&rt_dead_value)

struct rt_step {
  uint64_t id;
  atomic_bool cancelled;
  /* Rendezvous. send hands a tensor over under `key` (takes a new reference; RT_DEAD for
   * a dead value, which recv then returns).
   * recv with block=false returns RT_OK and *t, or RT_UNAVAILABLE when not there yet;
   * with block=true it waits until it arrives or the step is cancelled. */
  int (*send)(rt_step *s, const char *key, rt_tensor *t, rt_status *st);
  int (*recv)(rt_step *s, const char *key, bool block, rt_tensor **t, rt_status *st);
  /* Optional: send a tensor whose buffer others may change later (a variable's), when the
   * rendezvous copies its bytes at once anyway; RT_UNAVAILABLE when it would not (the
   * executor then sends a private copy through send). */
  int (*send_snapshot)(rt_step *s, const char *key, const rt_tensor *t, rt_status *st);
  /* Wait until any of keys[0, n) has arrived: *which is its index and *t the tensor. A
   * fragment waiting on several _Recvs takes whichever comes first (waiting on one in
   * particular can deadlock when partitions feed each other back and forth). NULL: the
   * executor falls back to a blocking recv of the oldest. */
  int (*recv_any)(rt_step *s, const char *const *keys, int n, int *which, rt_tensor **t,
                  rt_status *st);
  void *user;
  /* Optional: a kernel that blocks (a queue's dequeue, ops/queue.c) calls this about every
   * 50 ms besides looking at `cancelled`; nonzero: the step is being cancelled (a step run
   * on the thread of an in-process call learns it only this way). */
  int (*poll)(rt_step *s);
  /* Run on the thread of an in-process call (a master running its own task's fragment):
   * the executor also calls poll between nodes, about every 50 ms, since no other thread
   * can tell this run that the call wants out. */
  bool poll_between;
  /* progress */
  atomic_int ops_done;
  atomic_int ops_total;
  _Atomic(const char *) current_op;    /* name of the node running now, or NULL */
  atomic_llong bytes_sent, bytes_recv;
  /* views: when not NULL the executor appends one record per node it runs
   * (RunOptions.FULL_TRACE); owned by whoever set it. */
  struct rt_dev_stats *trace;
  /* views: when `timed`, the executor adds the time its kernels run (not the time spent
   * waiting for a _Recv) to busy_us: the busy share of the live view's loops. */
  bool timed;
  int64_t busy_us;
  /* Per-step resources (TensorArrays): a kernel that made one in its device's container
   * rt_step_container names sets this; the executor drops that container when its run ends,
   * whether it succeeded, failed or was cancelled. */
  atomic_bool has_step_resources;
};

/* The container of the step's own resources on each device ("_step_<id>_<address>": the
 * address tells apart two steps that share an id). */
static inline void rt_step_container(const rt_step *s, char *buf, size_t n) {
  snprintf(buf, n, "_step_%llu_%p", s ? (unsigned long long)s->id : 0ULL, (const void *)s);
}

#endif
