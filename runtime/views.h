/* What the shell's views ask the runtime, as typed calls with plain C results
 * the shell formats: where a graph goes (placement, per-device partitions, the Send/Recv
 * edges between them) and how the tasks of a cluster are (status, load). The wire
 * messages behind them (Placement, GetStatus, GetProgress) stay inside the runtime.
 * Live progress of a step (rt_session_progress) and traces (rt_session_views.step_stats)
 * are the session's: runtime/session.h. */
#ifndef TFSH_RUNTIME_VIEWS_H
#define TFSH_RUNTIME_VIEWS_H

#include <stdbool.h>
#include <stdint.h>

#include "base/status.h"
#include "runtime/partition.h"
#include "runtime/placer.h"
#include "runtime/session.h"
#include "runtime/tensor.h"

/* ---- placement ---------------------------------------------------------------------- */

typedef struct rt_placed_node {
  char *name, *op;
  char *requested;            /* the device the graph asks for; "" when none */
  char *assigned;             /* the full device name it runs on */
  char *reason;               /* why ("colocated with w", "default", ...) */
} rt_placed_node;

/* A tensor that crosses devices: one per _Send. */
typedef struct rt_placed_edge {
  char *tensor;               /* "w/read:0"; a control edge's "x/_ctl" */
  char *send;                 /* the _Send node in the sending device's graph */
  char *from, *to;            /* devices */
  bool control;               /* a control edge (no data) */
  rt_dtype dtype;
  rt_shape shape;             /* the static shape; ndims -1 when unknown */
} rt_placed_edge;

typedef struct rt_placement {
  int n_nodes;
  rt_placed_node *nodes;      /* the nodes the fetches need, in graph order */
  int n_parts;
  rt_partition *parts;        /* per device: name (the device), graph (with _Send/_Recv) */
  int n_edges;
  rt_placed_edge *edges;
} rt_placement;

/* Place what fetches (tensor names) and targets (op names) need, fed tensors cut off —
 * everything when none are given — on the session's master, as its next step would be,
 * without running or registering anything. The nodes added to the graph since the last
 * run are sent first. *out is the caller's (rt_placement_clear). */
int rt_session_placement(rt_session *s, int n_feeds, const char *const *feeds, int n_fetches,
                         const char *const *fetches, int n_targets, const char *const *targets,
                         rt_placement *out, rt_status *st);
void rt_placement_clear(rt_placement *p);

/* The placement itself, as the master computes it for rt_session_placement, and as `tfsh
 * inspect` does for a graph read from a file with no cluster running: places g's nodes on
 * devices (full names), splits the needed ones (needed: per node; NULL: all) per device
 * with their _Send/_Recv pairs, and lists each crossing edge with its dtype and static
 * shape. incarnation (may be NULL) gives the devices' incarnations for the rendezvous keys. */
int rt_placement_compute(rt_graph *g, const bool *needed, const char *const *devices, int n_devices,
                         const rt_place_opts *po, uint64_t (*incarnation)(void *arg, const char *device),
                         void *arg, rt_placement *out, rt_status *st);

/* ---- the tasks of a cluster --------------------------------------------------------- */

typedef struct rt_task_status {
  char task[160];             /* "/job:J/replica:0/task:I" */
  char addr[256];             /* as the cluster spec gives it (a lone server: its endpoint) */
  bool self;                  /* the task of the server asked (at endpoint) */
  bool connected;             /* it answered in time (GetStatus or GetProgress) */
  int64_t answered_us;        /* when it last did: CLOCK_MONOTONIC, microseconds */
  uint64_t incarnation;       /* when connected */
  bool has_devices;           /* its GetStatus answered: */
  int n_devices;
  char (*devices)[200];       /* full device names */
  char (*descs)[128];         /* per device: a GPU's name and memory, else "" */
  char cpu_note[400];         /* its CPU, instruction set, kernel set and threads */
  char gpu_note[300];         /* why it has no GPU (a build with CUDA), else "" */
  bool has_load;              /* its GetProgress answered: */
  uint64_t runs;              /* steps (RunGraph calls) it has answered */
  int64_t busy_us;            /* wall time spent in them */
  int64_t rss_bytes;          /* resident memory */
  char gpu_memory[512];       /* its GPUs' memory in use and peak, "" without one */
  char last_error[256];       /* "" when none */
} rt_task_status;

typedef struct rt_cluster_status {
  int n;
  rt_task_status *tasks;      /* in the order of the cluster's (sorted) digest */
} rt_cluster_status;

/* The tasks of the cluster of the server at endpoint (asked first, 2 × timeout_ms at
 * most), then every task's status and load, asked all at once and waited for timeout_ms
 * at most: a task that has not answered by then is not connected. An error only when the
 * server at endpoint does not answer. *out is the caller's (rt_cluster_status_clear). */
int rt_cluster_status_get(const char *endpoint, int timeout_ms, rt_cluster_status *out,
                          rt_status *st);
void rt_cluster_status_clear(rt_cluster_status *cs);

#endif
