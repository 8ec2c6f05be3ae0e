/* Internal to runtime/: the messages of tfsh's own protocol that a task's server answers,
 * one row each. server.c dispatches by these rows and tells the net server which of them
 * run on its I/O thread; net/PROTOCOL.md ("Message index") and the comments atop master.c
 * and worker.c list the same messages, and tests/unit/test_doc_tables.c fails when they
 * do not agree. */
#ifndef TFSH_MESSAGES_H
#define TFSH_MESSAGES_H

#include <stdbool.h>

#include "net/server.h"

typedef struct rt_master rt_master;
typedef struct rt_worker rt_worker;

/* Two typed handlers rather than one taking the whole server: a handler sees only its own
 * service (the two never call each other). Exactly one is set: master in
 * rt_master_messages, worker in rt_worker_messages. */
typedef struct rt_message {
  const char *name;                             /* the header's "t" */
  void (*master)(rt_master *m, net_req *req);
  void (*worker)(rt_worker *w, net_req *req);
  bool io_thread;         /* run on the server's I/O thread, not a handler thread: it never blocks */
  const char *summary;    /* one line, as net/PROTOCOL.md's index gives it */
} rt_message;

/* Each ends with a row whose name is NULL. */
extern const rt_message rt_master_messages[];   /* master.c */
extern const rt_message rt_worker_messages[];   /* worker.c */

#endif
