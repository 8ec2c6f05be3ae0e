/* A tf.Session whose master is a real TensorFlow server: with TFSH_PEER=tf, a target
 * "grpc://host:port" is TF's MasterService over TF's own gRPC, not a tfsh server. The
 * graph is built in tfsh and sent as TF's GraphDef; rt_session (session.h) hands its calls
 * here. Not yet: views (RunMetadata), Ctrl-C during a step, partial runs. */
#ifndef TFSH_RUNTIME_TFSESSION_H
#define TFSH_RUNTIME_TFSESSION_H

#include <stdbool.h>

#include "runtime/session.h"

typedef struct rt_tfs rt_tfs;
bool rt_tfs_wanted(const char *target);   /* TFSH_PEER=tf and a grpc:// target */
rt_tfs *rt_tfs_new(const char *target, rt_graph *g, const rt_session_config *cfg, rt_status *st);
int rt_tfs_extend(rt_tfs *t, rt_status *st);
int rt_tfs_run(rt_tfs *t, const rt_session_run *r, rt_status *st);
void rt_tfs_close(rt_tfs *t);
void rt_tfs_free(rt_tfs *t);

#endif
