/* Views (issue 7): what the cluster does, seen from the shell — RunMetadata and timelines,
 * the live view of a running step, and the magics %live, %trace, %placement, %partitions,
 * %dot, %tasks, %top (views.c).
 *
 * The tf room calls tf_views_run on every Session.run and tf_views_add when it builds the
 * module: today the run path goes through the views. That is the one call from shell/tf up
 * into shell/app, and it goes away when the views observe runs instead (issue 12). */
#ifndef TFSH_SHELL_VIEWS_H
#define TFSH_SHELL_VIEWS_H

#include "shell/tf/tf.h"

/* Run one step of s (graph g) with RunOptions options and RunMetadata meta (either may be
 * None): the live view while it runs, step stats and partition graphs into meta. 0, or -1
 * with st filled. */
int tf_views_run(rt_session *s, tf_graph *g, const rt_session_run *r, sh_obj *options, sh_obj *meta,
                 rt_status *st);
/* The session the magics look at when there is no default session: the last one used. */
void tf_views_note_session(sh_obj *sess);
void tf_views_forget_session(sh_obj *sess);
/* RunMetadata records, GraphDef, timeline into the tf module (after the saver's prelude). */
void tf_views_add(sh_obj *tf);
void tf_views_register_magics(void);

#endif
