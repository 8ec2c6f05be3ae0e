/* The placer: gives every node a full device name, and says why.
 *
 * Nodes that must share a device (a reference input such as a variable and the ops that
 * update it, a resource input (DT_RESOURCE handle) and the op that made the handle, or an explicit colocation "_class": ["loc:@x"]) form a group (union-find);
 * the group's requested specs are merged, matched against the devices that exist, and
 * one device is chosen for all. An unconstrained node goes to the default device (the
 * client's task). With soft placement an impossible request falls back (first dropping the
 * device type, then to the default); without it, the error names the node, the request
 * and the devices that exist. */
#ifndef TFSH_PLACER_H
#define TFSH_PLACER_H

#include "runtime/graph.h"

typedef struct rt_place_opts {
  bool soft;                      /* ConfigProto.allow_soft_placement */
  const char *default_device;     /* full name, e.g. /job:localhost/replica:0/task:0/device:CPU:0 */
} rt_place_opts;

/* Place nodes that have no assigned device yet (placement is stable across runs).
 * devices: full names of every device in the cluster. */
int rt_place(rt_graph *g, const char *const *devices, int n_devices, const rt_place_opts *o,
             rt_status *st);

#endif
