/* The build the suite runs in (scripts/build.sh: RelWithDebInfo) keeps assert() on: the
 * runtime's invariants (runtime/exec.c's pending counts, exec_cf.c's frames and iterations,
 * partition.c's _Send/_Recv pairs) are checked wherever the tests run. CMakeLists.txt drops
 * CMake's -DNDEBUG from RelWithDebInfo; Release, which the benchmarks use, keeps it. This
 * binary gets the same flags as tfsh_core, so it fails when that changes. */
#include <assert.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef TFSH_BUILD_TYPE
#define TFSH_BUILD_TYPE ""
#endif

int main(int argc, char **argv) {
  (void)argv;
  if (!strcmp(TFSH_BUILD_TYPE, "Release") || !strcmp(TFSH_BUILD_TYPE, "MinSizeRel")) {
    printf("skip: a %s build has assert() off by design\n", TFSH_BUILD_TYPE);
    return 77;
  }
#ifdef NDEBUG
  fprintf(stderr, "FAIL: NDEBUG is set in this %s build: assert() is off\n", TFSH_BUILD_TYPE);
  return 1;
#endif
  pid_t pid = fork();
  if (pid < 0) return perror("fork"), 1;
  if (pid == 0) {   /* a false assertion must abort */
    freopen("/dev/null", "w", stderr);
    assert(argc < 0);
    _exit(0);
  }
  int ws;
  if (waitpid(pid, &ws, 0) != pid) return perror("waitpid"), 1;
  if (!WIFSIGNALED(ws) || WTERMSIG(ws) != SIGABRT) {
    fprintf(stderr, "FAIL: a false assert() did not abort (wait status %d)\n", ws);
    return 1;
  }
  printf("ok   assert() is on and aborts\n");
  return 0;
}
