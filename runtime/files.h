/* Where ops that write files (SaveV2, MergeV2Checkpoints) may write on this process: a
 * server started with --allow-write DIR[:DIR...] writes only under those directories, so a
 * client cannot make a task overwrite arbitrary files. Unrestricted by default (a local
 * session writes where its user asks); `tfsh server` restricts to its working directory
 * and $TMPDIR (or /tmp) unless told otherwise. */
#ifndef TFSH_FILES_H
#define TFSH_FILES_H

#include "base/status.h"

/* dirs: colon-separated directories; NULL or "" lifts the restriction. */
void rt_files_allow(const char *dirs);
/* RT_OK when path may be written here; else RT_PERMISSION_DENIED naming the path, the
 * allowed directories and the flag that changes them. */
int rt_files_check_write(const char *path, rt_status *st);

#endif
