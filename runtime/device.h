/* Device names and devices.
 *
 * A full name is /job:J/replica:R/task:T/device:TYPE:N. Specs may be partial ("/job:ps",
 * "/task:1", "/cpu:0", "/device:GPU:*", "CPU:0"); legacy "/cpu:0" and "/gpu:1" mean
 * device:CPU:0 and device:GPU:1. Unset fields are wildcards when matching. */
#ifndef TFSH_DEVICE_H
#define TFSH_DEVICE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/status.h"
#include "runtime/tensor.h"

typedef struct rt_devname {
  char job[64];     /* "" = unset */
  int replica;      /* -1 = unset */
  int task;         /* -1 = unset */
  char type[16];    /* "CPU", "GPU"; "" = unset */
  int id;           /* -1 = unset or "*" */
} rt_devname;

void rt_devname_clear(rt_devname *d);
/* Parse a full or partial spec. "" parses to all-unset. */
int rt_devname_parse(const char *s, rt_devname *d, rt_status *st);
/* Canonical text: only the set fields, in order; "" when nothing is set.
 * "/job:ps/task:1/device:CPU:0" */
char *rt_devname_str(const rt_devname *d, char *buf, size_t n);
/* Fields set in `over` replace those in `base` (nested tf.device: inner wins). */
void rt_devname_merge(rt_devname *base, const rt_devname *over);
/* Fill fields unset in `d` from `dflt` (a spec completed by a default device). */
void rt_devname_fill(rt_devname *d, const rt_devname *dflt);
/* Does the full name `d` satisfy the (partial) spec `spec`? */
bool rt_devname_matches(const rt_devname *spec, const rt_devname *d);
bool rt_devname_is_full(const rt_devname *d);
/* "/job:J/replica:R/task:T" part only. */
char *rt_devname_task_str(const rt_devname *d, char *buf, size_t n);

/* ---- devices ----------------------------------------------------------------------- */

struct rt_resource;

/* A device that runs kernels: one per CPU/GPU in a worker. Resources (variables, queues)
 * live here, so they outlive steps and sessions. */
typedef struct rt_device {
  char name[160];            /* full name */
  rt_devname dn;
  rt_device_type type;
  uint64_t incarnation;      /* random, new each time the process starts */
  pthread_mutex_t res_mu;
  struct rt_resource *resources;   /* linked list by (container, name) */
  /* GPUs (runtime/gpu/gpu.h): CUDA's ordinal, a description for the views ("NVIDIA H200,
   * 139.8 GiB"; "" for a CPU) and the stream/allocator context, opened on first use. */
  int gpu_ordinal;
  char desc[128];
  struct rt_gpu *gpu;
  bool fake_gpu;             /* TFSH_FAKE_GPUS: placed on as a GPU, runs the CPU kernels */
} rt_device;

rt_device *rt_device_new(const char *full_name, rt_device_type type, uint64_t incarnation);
void rt_device_free(rt_device *d);

/* Named resources (variables first): a tensor slot shared by every step on this device.
 * rt_device_resource returns the slot, creating it when create is true (NULL if absent).
 * The slot's mutex guards updates; `value` is NULL until initialized. */
typedef struct rt_resource {
  struct rt_resource *next;
  char *container;
  char *name;
  pthread_mutex_t mu;
  rt_tensor *value;
  /* Resources other than variables (gradient accumulators, token queues) keep their own
   * state here, freed with state_free; cv wakes kernels waiting on it (under mu). */
  void *state;
  void (*state_free)(void *state);
  pthread_cond_t cv;
} rt_resource;

rt_resource *rt_device_resource(rt_device *d, const char *container, const char *name,
                                bool create);
/* Drop every resource in `container` ("" = the default container; NULL = all). */
void rt_device_clear_resources(rt_device *d, const char *container);
/* Resources of an isolated session (ConfigProto.isolate_session_state): with a scope, the
 * container is "<scope>/<container>", so each such session has its own variables, queues
 * and readers on every device (TF: its own resource managers); a NULL or "" scope is the
 * shared table, as rt_device_resource. rt_device_clear_scope drops a scope's resources. */
rt_resource *rt_device_resource_in(rt_device *d, const char *scope, const char *container,
                                   const char *name, bool create);
void rt_device_clear_scope(rt_device *d, const char *scope);

#endif
