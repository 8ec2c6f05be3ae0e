/* A tfsh server that also speaks TF's MasterService over TF's own gRPC (`tfsh server
 * --grpc HOST:PORT`), so a real TensorFlow client — tf.compat.v1.Session("grpc://HOST:PORT")
 * in Python with TF installed — runs an unmodified TF1 program on a tfsh cluster.
 * CreateSession, ExtendSession, RunStep, CloseSession, ListDevices, Reset and the
 * callables (MakeCallable, RunCallable, ReleaseCallable); partial runs (PartialRunSetup)
 * answer UNIMPLEMENTED. */
#ifndef TFSH_RUNTIME_TFMASTER_H
#define TFSH_RUNTIME_TFMASTER_H

#include "base/status.h"

/* Serve TF's MasterService on addr; its sessions run on the tfsh master at endpoint (this
 * server's own). */
int rt_tfmaster_start(const char *addr, const char *endpoint, rt_status *st);

#endif
