/* Internal to runtime/: a task's own descriptions on the wire, packed (and read) in one
 * place so that the master, the worker and the views' client calls share them without
 * calling each other: its devices (GetStatus, ListDevices) and its cluster digest
 * (GetStatus, the same-spec check). net/PROTOCOL.md gives the layout. */
#ifndef TFSH_WIRE_FMT_H
#define TFSH_WIRE_FMT_H

#include <msgpack.h>

#include "runtime/cluster.h"
#include "runtime/device.h"

/* [{"name": str, "desc"?: str, "type": "CPU"|"GPU", "incarnation": uint}]; desc: a GPU's
 * name and memory ("NVIDIA H200, 139.8 GiB") */
void rt_pack_devices(msgpack_packer *pk, rt_device *const *devs, int n);
/* The cluster as sorted "/job:J/task:I=address" strings. */
void rt_pack_cluster(msgpack_packer *pk, const rt_cluster *c);
/* The same strings, sorted: c->n of them, each and the array the caller's (free). */
char **rt_cluster_lines(const rt_cluster *c);

#endif
