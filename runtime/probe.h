/* `tfsh probe`: ask every task of a TensorFlow cluster whether it is up, over TF's own gRPC
 * (WorkerService.GetStatus, the call TF's master makes before CreateSession), and say
 * which task a stuck CreateSession waits for and why.
 *
 * Each task in three steps, all tasks at once, the whole bounded by the timeout: resolve
 * its host; connect over TCP (refused, timed out, unreachable say so at once) and note
 * what the peer sends first (ZeroMQ's greeting is a tfsh server, "SSH-" an SSH daemon);
 * then GetStatus, whose devices name the task the server believes it is. */
#ifndef TFSH_RUNTIME_PROBE_H
#define TFSH_RUNTIME_PROBE_H

#include <stdio.h>

#include "runtime/cluster.h"

typedef enum rt_probe_state {
  RT_PROBE_ANSWERS,      /* GetStatus answered as this task */
  RT_PROBE_OTHER_TASK,   /* a TF server that is another task (other index, job or spec) */
  RT_PROBE_NO_HOST,      /* the host name does not resolve */
  RT_PROBE_REFUSED,      /* nothing listens */
  RT_PROBE_UNREACHABLE,  /* no route to the host or network */
  RT_PROBE_TIMEOUT,      /* no TCP answer in time */
  RT_PROBE_NOT_GRPC,     /* accepts connections, does not speak gRPC */
  RT_PROBE_NO_METHOD,    /* gRPC, but no TF WorkerService */
  RT_PROBE_SILENT,       /* connected, GetStatus had no answer in time */
  RT_PROBE_BAD_REPLY,    /* an answer that is not a GetStatusResponse */
  RT_PROBE_NO_GRPC,      /* this machine cannot load gRPC */
} rt_probe_state;

typedef struct rt_probe_row {
  char task[160];        /* "/job:worker/replica:0/task:1" */
  char addr[256];        /* as the spec gives it */
  rt_probe_state state;
  char devices[400];     /* "CPU:0, GPU:0" (answering tasks) */
  char seen_as[160];     /* the task its devices name (OTHER_TASK) */
  char detail[400];      /* what was seen, one clause */
  double ms;             /* until the task's answer (or failure) */
} rt_probe_row;

/* Probes every task of c; *rows (malloc'd, c->n of them) in the cluster's order. */
int rt_probe(const rt_cluster *c, int timeout_ms, rt_probe_row **rows);
/* One line per task, then the verdict. Returns 0 when every task answers as itself, else 1. */
int rt_probe_print(FILE *f, const rt_probe_row *rows, int n);
const char *rt_probe_state_name(rt_probe_state s);

#endif
