/* Shared memory between the processes of one host, for big payloads: loopback TCP costs
 * two kernel copies and tops out near 3 GB/s here, a copy into shared memory runs at memory
 * speed. Each process has one outbox: an anonymous memory file (memfd) of up to 1 GiB,
 * mapped once, whose blocks are recycled, so a tensor sent every step lands in pages
 * already touched. The sender copies the bytes into a block (a snapshot: the tensor may
 * change after) and names the block in the message ("shm": {"path", "off", "len"}); the
 * receiver maps the sender's outbox once (through /proc/PID/fd, same user only), wraps the
 * block as its tensor's buffer without copying, and tells the sender (ShmRelease) when the
 * tensor is freed, which frees the block. */
#ifndef TFSH_NET_SHM_H
#define TFSH_NET_SHM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/status.h"

/* Payloads at least this big go through shared memory to a peer on this host. */
#define NET_SHM_MIN (256u << 10)

/* Is endpoint on this host for certain (a loopback tcp address, ipc)? */
bool net_shm_reaches(const char *endpoint);

/* Copy n bytes into a block of this process's outbox. False (nothing done) when the
 * outbox cannot be made or is full: send the bytes another way. */
bool net_shm_put(const void *data, size_t n, char *path, size_t path_n, uint64_t *off);
/* The block at off is free again (ShmRelease). Unknown offsets are ignored. */
void net_shm_release(uint64_t off);

/* The bytes [off, off + len) of the outbox at path, mapped read-only (the mapping is kept
 * for later blocks). RT_INVALID_ARGUMENT naming the path for a bad path or range. */
int net_shm_map(const char *path, uint64_t off, uint64_t len, const void **out, rt_status *st);

#endif
