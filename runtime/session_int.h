/* Internal to runtime/: what the runtime's own calls (runtime/views.c) ask of a session. */
#ifndef TFSH_SESSION_INT_H
#define TFSH_SESSION_INT_H

#include "net/msg.h"
#include "runtime/session.h"

/* Send req (consumed) to the session's master with the session's handle and wait for its
 * reply, timeout_ms at most (*rep is the caller's, net_in_free). */
/* The session's TensorFlow master (tfsession.h), or NULL for a tfsh master. */
struct rt_tfs *rt_session_tf(const rt_session *s);

int rt_session_call(rt_session *s, net_msg *req, net_in **rep, int timeout_ms, rt_status *st);

#endif
