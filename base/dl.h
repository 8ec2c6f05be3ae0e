/* Shared libraries the binary needs only on some paths, loaded on their first call.
 * A library linked the usual way is mapped and relocated at every start, used or not;
 * ZeroMQ (with the C++ runtime and Kerberos it brings) and BLIS cost `tfsh -c pass`
 * about 3.5 ms of its ~23 that way. A layer that wants this lists the functions it calls
 * (net/zmq_dl.c, ops/cpu/blis_dl.c): each is defined there under the library's own name
 * as a trampoline that loads the library once and jumps through a resolved pointer, so
 * the code that calls them does not change. */
#ifndef TFSH_BASE_DL_H
#define TFSH_BASE_DL_H

#include <stdbool.h>
#include <stddef.h>

/* Opens soname and resolves names[i] into *slots[i] (each the address of a function
 * pointer), for i < n. On failure fills why ("cannot load libx.so.1: <dlerror>", or
 * "libx.so.1 has no f") and returns false; nothing is left half-resolved that matters,
 * as the caller does not use the slots then. */
bool dl_open(const char *soname, const char *const *names, void *const *slots, size_t n,
             char *why, size_t why_len);

/* dl_open, or the dynamic loader's own behaviour for a missing library: one line on
 * stderr naming the library and the Debian package that ships it, and exit status 127. */
void dl_require(const char *soname, const char *package, const char *const *names,
                void *const *slots, size_t n);

/* Is soname mapped into this process (loaded by anyone)? For tests and `%env`. */
bool dl_is_loaded(const char *soname);

#endif
