/* base/str.h's appends against what snprintf writes and returns, truncation included,
 * rt_devname_str (written with them) word for word, and base/counts.h's table. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/counts.h"
#include "base/str.h"
#include "runtime/device.h"

static void test_against_snprintf(void **state) {
  (void)state;
  static const long long ints[] = {0, 7, -7, 10, 123456789, LLONG_MAX, LLONG_MIN};
  for (size_t n = 0; n <= 24; n++)
    for (size_t i = 0; i < sizeof ints / sizeof *ints; i++) {
      char got[32], want[32];
      memset(got, 'x', sizeof got), memset(want, 'x', sizeof want);
      size_t off = str_put_int(got, n, str_puts(got, n, 0, "ab/"), ints[i]);
      off = str_put(got, n, off, "xyz!", 3);
      int w = snprintf(want, n, "ab/%lld%.3s", ints[i], "xyz!");
      assert_int_equal(off, (size_t)w);
      assert_memory_equal(got, want, sizeof got);   /* nothing written past n */
    }
}

static void test_devname(void **state) {
  (void)state;
  rt_devname d;
  rt_devname_clear(&d);
  char buf[96], small[12];
  assert_string_equal(rt_devname_str(&d, buf, sizeof buf), "");
  snprintf(d.job, sizeof d.job, "worker");
  d.replica = 0, d.task = 12, d.id = -1;
  snprintf(d.type, sizeof d.type, "GPU");
  assert_string_equal(rt_devname_str(&d, buf, sizeof buf), "/job:worker/replica:0/task:12/device:GPU:*");
  d.id = 3;
  assert_string_equal(rt_devname_str(&d, buf, sizeof buf), "/job:worker/replica:0/task:12/device:GPU:3");
  assert_string_equal(rt_devname_str(&d, small, sizeof small), "/job:worker");
  assert_string_equal(rt_devname_task_str(&d, buf, sizeof buf), "/job:worker/replica:0/task:12");
}

static void test_counts(void **state) {
  (void)state;
  counts *c = counts_new();
  assert_int_equal(counts_get(c, "x"), 0);
  counts_set(c, "x", 1);
  counts_set(c, "", 7);   /* the empty string is a key like any other */
  char name[32], big[70000];
  for (int i = 1; i <= 5000; i++) {   /* grows the slots many times and the pool past a block */
    str_put_int(name, sizeof name, str_puts(name, sizeof name, 0, "x_"), i);
    counts_set(c, name, i);
  }
  memset(big, 'b', sizeof big - 1), big[sizeof big - 1] = '\0';   /* longer than a block */
  counts_set(c, big, 3);
  counts_set(c, "x", 2);   /* a second set overwrites */
  assert_int_equal(counts_size(c), 5003);
  assert_int_equal(counts_get(c, "x"), 2);
  assert_int_equal(counts_get(c, ""), 7);
  assert_int_equal(counts_get(c, "x_1"), 1);
  assert_int_equal(counts_get(c, "x_5000"), 5000);
  assert_int_equal(counts_get(c, "x_5001"), 0);
  assert_int_equal(counts_get(c, big), 3);
  big[10] = 'c';
  assert_int_equal(counts_get(c, big), 0);
  counts_free(c);
  counts_free(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_against_snprintf),
      cmocka_unit_test(test_devname),
      cmocka_unit_test(test_counts),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
