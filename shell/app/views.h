/* Views: what the cluster does, seen from the shell — RunMetadata and timelines,
 * the live view of a running step, and the magics %live, %trace, %placement, %partitions,
 * %dot, %tasks, %top (views.c).
 *
 * The views observe runs: they set the tf room's run observer (shell/tf/tf.h), which sees
 * each Session.run before and after its step and adds the RunMetadata records to the
 * tensorflow module when it is built. Nothing on the run path calls into them. */
#ifndef TFSH_SHELL_VIEWS_H
#define TFSH_SHELL_VIEWS_H

#include "runtime/views.h"

/* Set the run observer and register the magics (before any script runs). */
void tf_views_init(void);

/* The tables of %placement (node, op, requested and assigned device, reason) and
 * %partitions (each task's and device's fragment with its Send/Recv edges and their
 * bytes), on stdout; `tfsh inspect` prints a file's with them. */
void sh_print_placement(const rt_placement *p);
void sh_print_partitions(const rt_placement *p);

#endif
