#include "runtime/files.h"

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static char *allowed;   /* colon-separated canonical directories, NULL: unrestricted */

void rt_files_allow(const char *dirs) {
  pthread_mutex_lock(&mu);
  free(allowed);
  allowed = NULL;
  if (dirs && *dirs) {
    size_t cap = strlen(dirs) * 2 + PATH_MAX + 2, off = 0;
    allowed = xcalloc(1, cap);
    char *copy = xstrdup(dirs), *save = NULL;
    for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
      char real[PATH_MAX];
      const char *use = realpath(d, real) ? real : d;
      size_t n = strlen(use);
      if (off + n + 2 >= cap) break;
      if (off) allowed[off++] = ':';
      memcpy(allowed + off, use, n);
      off += n;
    }
    free(copy);
  }
  pthread_mutex_unlock(&mu);
}

/* The canonical directory a new file at path would be in. */
static int parent_dir(const char *path, char *out) {
  char dir[PATH_MAX];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (!slash) snprintf(dir, sizeof dir, ".");
  else if (slash == dir) dir[1] = '\0';
  else *slash = '\0';
  return realpath(dir, out) ? 0 : -1;
}

int rt_files_check_write(const char *path, rt_status *st) {
  pthread_mutex_lock(&mu);
  if (!allowed) {
    pthread_mutex_unlock(&mu);
    return RT_OK;
  }
  char dir[PATH_MAX];
  bool ok = false;
  if (parent_dir(path, dir) == 0) {
    size_t dl = strlen(dir);
    for (const char *p = allowed; *p && !ok;) {
      const char *e = strchr(p, ':');
      size_t n = e ? (size_t)(e - p) : strlen(p);
      ok = dl >= n && !strncmp(dir, p, n) && (dir[n] == '\0' || dir[n] == '/' || (n == 1 && p[0] == '/'));
      p += n + (e ? 1 : 0);
    }
  }
  int rc = ok ? RT_OK
              : rt_error(st, RT_PERMISSION_DENIED,
                         "this task does not write %s: it writes only under %s (start it with "
                         "tfsh server --allow-write DIR to change that)", path, allowed);
  pthread_mutex_unlock(&mu);
  return rc;
}
