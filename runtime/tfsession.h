/* A tf.Session whose master is a real TensorFlow server: with TFSH_PEER=tf, a target
 * "grpc://host:port" is TF's MasterService over TF's own gRPC, not a tfsh server. The
 * graph is built in tfsh and sent as TF's GraphDef; rt_session (session.h) hands its calls
 * here. Views come from what TF's RunStep returns in RunMetadata (RunOptions asks for it):
 * step_stats (FULL_TRACE) and partition_graphs, from which the placement views are made.
 * A step waits with the live view's tick and stops at Ctrl-C (its call cancelled, TF's
 * master cancels the step). Not yet: live per-device progress during a step, partial runs. */
#ifndef TFSH_RUNTIME_TFSESSION_H
#define TFSH_RUNTIME_TFSESSION_H

#include <stdbool.h>

#include "runtime/session.h"

typedef struct rt_tfs rt_tfs;
bool rt_tfs_wanted(const char *target);   /* TFSH_PEER=tf and a grpc:// target */
rt_tfs *rt_tfs_new(const char *target, rt_graph *g, const rt_session_config *cfg, rt_status *st);
int rt_tfs_extend(rt_tfs *t, rt_status *st);
/* v: RunOptions and where RunMetadata goes (NULL: none); its note_placement keeps the
 * partition graphs of a step whose fetches and targets are new to the session. */
int rt_tfs_run(rt_tfs *t, const rt_session_run *r, const rt_session_views *v, rt_status *st);
struct rt_placement;
/* The placement of the most recent step kept (note_placement) whose fetches and targets
 * include every node named (n 0: the most recent of all), as TF's master partitioned it:
 * each node of the session's graph in a partition, each partition, each _Send between two
 * devices. FAILED_PRECONDITION when no such step has run. *out is the caller's. */
int rt_tfs_placement(rt_tfs *t, int n, const char *const *names, struct rt_placement *out, rt_status *st);
void rt_tfs_close(rt_tfs *t);
void rt_tfs_free(rt_tfs *t);

#endif
