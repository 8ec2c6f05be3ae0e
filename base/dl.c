/* base/dl.h: loading a library on its first call. */
#define _GNU_SOURCE
#include "base/dl.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

bool dl_open(const char *soname, const char *const *names, void *const *slots, size_t n,
             char *why, size_t why_len) {
  void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    snprintf(why, why_len, "cannot load %s: %s", soname, dlerror());
    return false;
  }
  for (size_t i = 0; i < n; i++) {
    void *f = dlsym(h, names[i]);
    if (!f) {
      snprintf(why, why_len, "%s has no %s", soname, names[i]);
      return false;
    }
    *(void **)slots[i] = f;   /* POSIX: a function pointer round-trips through void * */
  }
  return true;   /* the handle stays open for the life of the process */
}

void dl_require(const char *soname, const char *package, const char *const *names,
                void *const *slots, size_t n) {
  char why[400];
  if (dl_open(soname, names, slots, n, why, sizeof why)) return;
  fprintf(stderr, "tfsh: %s (Debian's %s package; scripts/setup.sh installs it)\n", why,
          package);
  exit(127);
}

bool dl_is_loaded(const char *soname) {
  void *h = dlopen(soname, RTLD_NOW | RTLD_NOLOAD);
  if (h) dlclose(h);   /* drops only the reference NOLOAD took */
  return h != NULL;
}
