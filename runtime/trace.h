/* Step traces (RunOptions.FULL_TRACE): per-node timing and output sizes, TF1's
 * NodeExecStats / DeviceStepStats / StepStats, recorded by the executor when a step
 * carries an rt_dev_stats (rt_step.trace), returned by RunGraph in "step_stats" and merged
 * by the master into RunStep's reply. Also the wire form of live progress (GetProgress).
 * net/PROTOCOL.md ("Views") specifies the encodings. */
#ifndef TFSH_TRACE_H
#define TFSH_TRACE_H

#include <msgpack.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/status.h"
#include "runtime/tensor.h"

typedef struct rt_output_stats {
  rt_dtype dtype;
  rt_shape shape;
  int64_t bytes;
  bool alloc;   /* the node allocated it (no input, variable or constant shares its buffer) */
} rt_output_stats;

typedef struct rt_node_stats {
  char *node_name;
  char *timeline_label;              /* "name = Op(input, ...)" as TF1 writes it */
  int64_t all_start_micros;          /* wall clock, microseconds since the epoch */
  int64_t op_start_rel_micros, op_end_rel_micros, all_end_rel_micros;
  uint32_t thread_id;
  int n_outputs;
  rt_output_stats *outputs;
} rt_node_stats;

typedef struct rt_dev_stats {
  char *device;
  int n, cap;
  rt_node_stats *nodes;
} rt_dev_stats;

typedef struct rt_step_stats {
  int n, cap;
  rt_dev_stats **dev;
} rt_step_stats;

int64_t rt_trace_micros(void);        /* CLOCK_REALTIME in microseconds */
uint32_t rt_trace_thread_id(void);    /* the kernel's thread id */

rt_dev_stats *rt_dev_stats_new(const char *device);
void rt_dev_stats_free(rt_dev_stats *d);
/* A new zeroed record (owned by d). */
rt_node_stats *rt_dev_stats_add(rt_dev_stats *d);

void rt_step_stats_clear(rt_step_stats *s);
/* Takes ownership of d. */
void rt_step_stats_append(rt_step_stats *s, rt_dev_stats *d);

/* {"device": str, "node_stats": [{"node_name", "timeline_label", "all_start_micros",
 *   "op_start_rel_micros", "op_end_rel_micros", "all_end_rel_micros", "thread_id",
 *   "output": [{"dtype", "shape", "bytes", "alloc"}]}]} */
void rt_pack_dev_stats(msgpack_packer *pk, const rt_dev_stats *d);
/* Decode one (validating kinds); *out is the caller's. */
int rt_unpack_dev_stats(const msgpack_object *o, const char *what, rt_dev_stats **out,
                        rt_status *st);
/* Decode an array of them, appending to s. */
int rt_unpack_step_stats(const msgpack_object *o, const char *what, rt_step_stats *s,
                         rt_status *st);

/* Each device's busy time in one step, for the live view of a loop: the time its kernels
 * ran, not counting waits for a _Recv. Wire form {"device": str, "us": int, "ops": int}. */
enum { RT_MAX_BUSY = 64 };   /* devices a step reports */
typedef struct rt_busy {
  char device[200];
  int64_t us;
  int ops;
} rt_busy;
void rt_pack_busy(msgpack_packer *pk, const rt_busy *b);
/* Decode an array of them into b[*n ...], at most max in all (the rest are dropped). */
int rt_unpack_busy(const msgpack_object *o, const char *what, rt_busy *b, int *n, int max,
                   rt_status *st);

/* msgpack helpers shared by the views' messages */
void rt_pack_kstr(msgpack_packer *pk, const char *key, const char *val);
void rt_pack_kint(msgpack_packer *pk, const char *key, int64_t val);
/* Lenient readers of a map's field (a reply's best-effort parts): key's str into buf (cut
 * to fit; "" when absent or not a str), key's int or bool (0 when absent or neither). */
void rt_obj_str(const msgpack_object *o, const char *key, char *buf, size_t n);
int64_t rt_obj_int(const msgpack_object *o, const char *key);

#endif
