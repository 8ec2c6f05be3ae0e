/* The outbox (a memfd of OUTBOX bytes, blocks handed out first fit from a free list kept
 * in offset order and coalesced on release) and the peers' outboxes mapped here. */
#define _GNU_SOURCE
#include "net/shm.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"

#define OUTBOX (1ull << 30)   /* virtual: pages cost memory once touched */
#define ALIGN 4096u
#define MEMFD_NAME "tfsh-outbox"

typedef struct span {
  uint64_t off, len;
} span;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static char *base;             /* this process's outbox, mapped read-write */
static char path_here[64];
static bool failed;            /* the outbox could not be made: never try again */
static span *holes;            /* free, in offset order */
static size_t n_holes, cap_holes;
static span *used;             /* handed out, not yet released */
static size_t n_used, cap_used;

bool net_shm_reaches(const char *ep) {
  if (!strncmp(ep, "ipc://", 6)) return true;
  if (strncmp(ep, "tcp://", 6)) return false;
  ep += 6;
  return !strncmp(ep, "127.", 4) || !strncmp(ep, "localhost:", 10) || !strncmp(ep, "[::1]:", 6);
}

static bool outbox_open(void) {   /* mu held */
  if (base || failed) return base != NULL;
  int fd = memfd_create(MEMFD_NAME, MFD_CLOEXEC);
  void *p = MAP_FAILED;
  if (fd >= 0 && ftruncate(fd, (off_t)OUTBOX) == 0)
    p = mmap(NULL, OUTBOX, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    if (fd >= 0) close(fd);
    failed = true;
    return false;
  }
  base = p;   /* fd stays open for the process's life: peers open it through /proc */
  snprintf(path_here, sizeof path_here, "/proc/%d/fd/%d", (int)getpid(), fd);
  holes = xmalloc(sizeof *holes);
  holes[0] = (span){0, OUTBOX};
  n_holes = cap_holes = 1;
  return true;
}

static void push_span(span **v, size_t *n, size_t *cap, size_t at, span s) {
  if (*n == *cap) {
    *cap = *cap ? 2 * *cap : 8;
    *v = xrealloc(*v, *cap * sizeof **v);
  }
  memmove(*v + at + 1, *v + at, (*n - at) * sizeof **v);
  (*v)[at] = s;
  (*n)++;
}

bool net_shm_put(const void *data, size_t n, char *path, size_t path_n, uint64_t *off) {
  uint64_t len = (n + ALIGN - 1) / ALIGN * ALIGN;
  pthread_mutex_lock(&mu);
  size_t i = 0;
  if (outbox_open())
    while (i < n_holes && holes[i].len < len) i++;
  if (!base || i == n_holes) {
    pthread_mutex_unlock(&mu);
    return false;
  }
  *off = holes[i].off;
  holes[i].off += len;
  holes[i].len -= len;
  if (!holes[i].len) memmove(holes + i, holes + i + 1, (--n_holes - i) * sizeof *holes);
  push_span(&used, &n_used, &cap_used, n_used, (span){*off, len});
  snprintf(path, path_n, "%s", path_here);
  pthread_mutex_unlock(&mu);
  memcpy(base + *off, data, n);   /* the block is ours alone until released */
  return true;
}

void net_shm_release(uint64_t off) {
  pthread_mutex_lock(&mu);
  size_t u = 0;
  while (u < n_used && used[u].off != off) u++;
  if (u < n_used) {
    span s = used[u];
    used[u] = used[--n_used];
    size_t i = 0;
    while (i < n_holes && holes[i].off < s.off) i++;
    push_span(&holes, &n_holes, &cap_holes, i, s);
    if (i + 1 < n_holes && holes[i].off + holes[i].len == holes[i + 1].off) {   /* coalesce */
      holes[i].len += holes[i + 1].len;
      memmove(holes + i + 1, holes + i + 2, (n_holes - i - 2) * sizeof *holes);
      n_holes--;
    }
    if (i > 0 && holes[i - 1].off + holes[i - 1].len == holes[i].off) {
      holes[i - 1].len += holes[i].len;
      memmove(holes + i, holes + i + 1, (n_holes - i - 1) * sizeof *holes);
      n_holes--;
    }
  }
  pthread_mutex_unlock(&mu);
}

/* ---- peers' outboxes ------------------------------------------------------------------- */

typedef struct mapped {
  struct mapped *next;
  char path[64];
  const char *base;
  uint64_t size;
  dev_t dev;                 /* which file: a restarted peer may reuse pid and fd */
  ino_t ino;
} mapped;

static mapped *maps;

int net_shm_map(const char *path, uint64_t off, uint64_t len, const void **out, rt_status *st) {
  int pid, fd, end = 0;
  if (sscanf(path, "/proc/%d/fd/%d%n", &pid, &fd, &end) != 2 || path[end] || strlen(path) >= 64)
    return rt_error(st, RT_INVALID_ARGUMENT, "shared memory: '%.80s' is not an outbox path", path);
  struct stat now;
  if (stat(path, &now))
    return rt_error(st, RT_UNAVAILABLE, "shared memory: the outbox %s is gone (its process ended)", path);
  pthread_mutex_lock(&mu);
  mapped *m = maps;
  while (m && (strcmp(m->path, path) || m->dev != now.st_dev || m->ino != now.st_ino)) m = m->next;
  if (!m) {
    /* Only a tfsh outbox: the path names a process's descriptor, which must be a memfd of
     * ours, not any file that process has open. */
    char link[128] = "";
    ssize_t k = readlink(path, link, sizeof link - 1);
    if (k > 0) link[k] = '\0';
    int f = strncmp(link, "/memfd:" MEMFD_NAME " ", strlen("/memfd:" MEMFD_NAME " ")) ? -1
                                                                                   : open(path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    void *p = MAP_FAILED;
    if (f >= 0 && fstat(f, &sb) == 0 && sb.st_size > 0)
      p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_SHARED, f, 0);
    if (f >= 0) close(f);
    if (p == MAP_FAILED) {
      pthread_mutex_unlock(&mu);
      /* (what the descriptor is, when it is no outbox, is not the sender's business) */
      return rt_error(st, RT_UNAVAILABLE, "shared memory: cannot map the outbox %s (%s)", path,
                      !link[0] ? "gone" : f < 0 ? "not a tfsh outbox" : "cannot map it");
    }
    m = xcalloc(1, sizeof *m);
    snprintf(m->path, sizeof m->path, "%s", path);
    m->base = p;
    m->size = (uint64_t)sb.st_size;
    m->dev = sb.st_dev;
    m->ino = sb.st_ino;
    m->next = maps;
    maps = m;
  }
  pthread_mutex_unlock(&mu);
  if (off > m->size || len > m->size - off)
    return rt_error(st, RT_INVALID_ARGUMENT, "shared memory: block [%llu, +%llu) outside the outbox %s",
                    (unsigned long long)off, (unsigned long long)len, path);
  *out = m->base + off;
  return RT_OK;
}
