/* base/dl.h: a library resolved on first use, and its errors word for word (the one a
 * user sees when a package is missing exits 127 as the dynamic loader's does). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/dl.h"

static void test_open(void **state) {
  (void)state;
  double (*cosine)(double) = NULL, (*square_root)(double) = NULL;
  static const char *const names[] = {"cos", "sqrt"};
  void *const slots[] = {(void *)&cosine, (void *)&square_root};
  char why[200] = "";
  assert_true(dl_open("libm.so.6", names, slots, 2, why, sizeof why));
  assert_string_equal(why, "");
  assert_true(cosine(0.0) == 1.0 && square_root(16.0) == 4.0);
  assert_true(dl_is_loaded("libm.so.6"));

  static const char *const missing[] = {"cos", "no_such_function"};
  assert_false(dl_open("libm.so.6", missing, slots, 2, why, sizeof why));
  assert_string_equal(why, "libm.so.6 has no no_such_function");
  assert_false(dl_open("libtfsh-none.so.9", names, slots, 2, why, sizeof why));
  assert_string_equal(why, "cannot load libtfsh-none.so.9: libtfsh-none.so.9: cannot open "
                           "shared object file: No such file or directory");
  assert_false(dl_is_loaded("libtfsh-none.so.9"));
}

static void test_require_exits(void **state) {
  (void)state;
  int fd[2];
  assert_int_equal(pipe(fd), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    dup2(fd[1], STDERR_FILENO);
    static const char *const names[] = {"f"};
    void (*f)(void);
    void *const slots[] = {(void *)&f};
    dl_require("libtfsh-none.so.9", "libtfsh-none9", names, slots, 1);
    _exit(0);   /* not reached */
  }
  close(fd[1]);
  char got[400] = "";
  ssize_t n = read(fd[0], got, sizeof got - 1);
  close(fd[0]);
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(n > 0);
  assert_string_equal(got, "tfsh: cannot load libtfsh-none.so.9: libtfsh-none.so.9: cannot open "
                           "shared object file: No such file or directory (Debian's "
                           "libtfsh-none9 package; scripts/setup.sh installs it)\n");
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 127);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_open),
      cmocka_unit_test(test_require_exits),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
