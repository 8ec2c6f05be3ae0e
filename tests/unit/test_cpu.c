/* The CPU decisions: BLIS's kernel set from cpuid facts (ops/cpu/cpuarch.h) over a table of
 * real CPUs, the intra-op thread count from the CPUs a task may use (runtime/cpus.h) over
 * a table of limits, cgroup cpu.max parsing, and this host's own one-line account. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ops/cpu/blas.h"
#include "ops/cpu/cpuarch.h"
#include "ops/cpu/winograd.h"
#include "ops/ops.h"
#include "runtime/cpus.h"

/* BLIS 0.9.0's arch_t values, spelled out: BLIS_ARCH_TYPE is this integer. */
enum { SKX = 0, HASWELL = 3, SANDYBRIDGE = 4, ZEN3 = 6, ZEN2 = 7, ZEN = 8, GENERIC = 25 };

#define AVX512 .avx512f = 1, .avx512dq = 1, .avx512cd = 1, .avx512bw = 1, .avx512vl = 1
#define AVX2 .avx = 1, .avx2 = 1, .fma = 1

static void test_blis_enum(void **state) {
  (void)state;
  assert_int_equal(BLIS_ARCH_SKX, SKX);
  assert_int_equal(BLIS_ARCH_HASWELL, HASWELL);
  assert_int_equal(BLIS_ARCH_SANDYBRIDGE, SANDYBRIDGE);
  assert_int_equal(BLIS_ARCH_ZEN3, ZEN3);
  assert_int_equal(BLIS_ARCH_ZEN2, ZEN2);
  assert_int_equal(BLIS_ARCH_ZEN, ZEN);
  assert_int_equal(BLIS_ARCH_GENERIC, GENERIC);
}

static void test_kernel_set(void **state) {
  (void)state;
  static const struct {
    const char *name;
    op_cpu_facts f;
    int want;
  } cpus[] = {
      {"Zen 3 (EPYC 7763)", {.vendor = "AuthenticAMD", .family = 0x19, .model = 0x01, AVX2}, ZEN3},
      {"Zen 4 (EPYC 9654)", {.vendor = "AuthenticAMD", .family = 0x19, .model = 0x11, AVX2, AVX512}, SKX},
      {"Zen 5 (EPYC 9B45)", {.vendor = "AuthenticAMD", .family = 0x1a, .model = 0x02, AVX2, AVX512}, SKX},
      {"Zen 5, AVX-512 hidden by the hypervisor",
       {.vendor = "AuthenticAMD", .family = 0x1a, .model = 0x02, AVX2}, ZEN3},
      {"Zen 2 (EPYC 7742)", {.vendor = "AuthenticAMD", .family = 0x17, .model = 0x31, AVX2}, ZEN2},
      {"Zen (EPYC 7601)", {.vendor = "AuthenticAMD", .family = 0x17, .model = 0x01, AVX2}, ZEN},
      {"Hygon Dhyana", {.vendor = "HygonGenuine", .family = 0x18, .model = 0x00, AVX2}, ZEN},
      {"Skylake-X (Xeon Gold 6148)", {.vendor = "GenuineIntel", .family = 6, .model = 0x55, AVX2, AVX512}, SKX},
      {"Ice Lake (Xeon 8375C)", {.vendor = "GenuineIntel", .family = 6, .model = 0x6a, AVX2, AVX512}, SKX},
      {"Sapphire Rapids (Xeon 8480+)",
       {.vendor = "GenuineIntel", .family = 6, .model = 0x8f, AVX2, AVX512, .amx = 1}, SKX},
      {"Intel family 6 model 167, AVX-512 + AMX",
       {.vendor = "GenuineIntel", .family = 6, .model = 167, AVX2, AVX512, .amx = 1}, SKX},
      {"Haswell (Xeon E5-2699 v3)", {.vendor = "GenuineIntel", .family = 6, .model = 0x3f, AVX2}, HASWELL},
      {"Knights Landing (AVX-512 F/CD only)",
       {.vendor = "GenuineIntel", .family = 6, .model = 0x57, AVX2, .avx512f = 1, .avx512cd = 1}, HASWELL},
      {"Sandy Bridge (Xeon E5-2670)", {.vendor = "GenuineIntel", .family = 6, .model = 0x2d, .avx = 1},
       SANDYBRIDGE},
      {"AVX-512 on an unknown vendor", {.vendor = "CentaurHauls", .family = 7, .model = 0x3b, AVX2, AVX512},
       SKX},
      {"no AVX (Core 2)", {.vendor = "GenuineIntel", .family = 6, .model = 0x17}, GENERIC},
      {"no AVX (an AMD Opteron)", {.vendor = "AuthenticAMD", .family = 0x10, .model = 0x02}, GENERIC},
  };
  for (size_t i = 0; i < sizeof cpus / sizeof *cpus; i++) {
    int got = op_cpu_blis_arch(&cpus[i].f);
    if (got != cpus[i].want) fail_msg("%s: arch %d, want %d", cpus[i].name, got, cpus[i].want);
  }
  op_cpu_facts f = {.vendor = "GenuineIntel", AVX2, AVX512, .amx = 1};
  assert_string_equal(op_cpu_isa(&f), "AVX-512 (F/DQ/CD/BW/VL) + AMX");
  f.amx = 0;
  assert_string_equal(op_cpu_isa(&f), "AVX-512 (F/DQ/CD/BW/VL)");
  f.avx512bw = 0;
  assert_string_equal(op_cpu_isa(&f), "AVX2 + FMA");
  f = (op_cpu_facts){.avx = 1};
  assert_string_equal(op_cpu_isa(&f), "AVX");
  f.avx = 0;
  assert_string_equal(op_cpu_isa(&f), "SSE");
}

static void test_threads(void **state) {
  (void)state;
  static const struct {
    const char *name;
    rt_cpu_limits l;
    int tasks, want;
  } cases[] = {
      {"2 CPUs, alone", {.online = 2, .affinity = 2}, 1, 2},
      {"taskset -c 0", {.online = 2, .affinity = 1}, 1, 1},
      {"taskset -c 0, 2 tasks on the host", {.online = 2, .affinity = 1}, 2, 1},
      {"2 CPUs, 2 tasks", {.online = 2, .affinity = 2}, 2, 1},
      {"2 CPUs, 3 tasks: at least 1", {.online = 2, .affinity = 2}, 3, 1},
      {"64 CPUs, 3 tasks", {.online = 64, .affinity = 64}, 3, 21},
      {"affinity unknown", {.online = 8}, 1, 8},
      {"docker --cpus=1.5 on 16", {.online = 16, .affinity = 16, .quota_us = 150000, .period_us = 100000}, 1, 2},
      {"--cpus=0.5", {.online = 16, .affinity = 16, .quota_us = 50000, .period_us = 100000}, 1, 1},
      {"quota 4 CPUs, 2 tasks", {.online = 16, .affinity = 16, .quota_us = 400000, .period_us = 100000}, 2, 2},
      {"quota above the mask", {.online = 16, .affinity = 4, .quota_us = 800000, .period_us = 100000}, 1, 4},
      {"quota max", {.online = 16, .affinity = 16, .quota_us = -1, .period_us = 100000}, 1, 16},
      {"quota, 50 ms period", {.online = 16, .affinity = 16, .quota_us = 125000, .period_us = 50000}, 1, 3},
      {"bound to 4 of 16 (the binder's per-task set), 2 tasks", {.online = 16, .affinity = 4}, 2, 4},
      {"SLURM_CPUS_PER_TASK 8, 4 tasks", {.online = 64, .affinity = 64, .slurm_per_task = 8}, 4, 8},
      {"SLURM_CPUS_ON_NODE 16, 4 tasks", {.online = 64, .affinity = 64, .slurm_on_node = 16}, 4, 4},
      {"SLURM both: per task wins", {.online = 64, .affinity = 64, .slurm_per_task = 4, .slurm_on_node = 16},
       4, 4},
      {"SLURM_CPUS_PER_TASK above the mask", {.online = 64, .affinity = 2, .slurm_per_task = 8}, 1, 2},
      {"SLURM_CPUS_ON_NODE 16, quota 3", {.online = 64, .affinity = 64, .quota_us = 300000,
                                          .period_us = 100000, .slurm_on_node = 16}, 1, 3},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    int got = rt_cpus_for_task(&cases[i].l, cases[i].tasks, NULL, 0);
    if (got != cases[i].want) fail_msg("%s: %d threads, want %d", cases[i].name, got, cases[i].want);
  }
  char why[256];
  rt_cpu_limits l = {.online = 16, .affinity = 16, .quota_us = 150000, .period_us = 100000};
  assert_int_equal(rt_cpus_for_task(&l, 2, why, sizeof why), 1);
  assert_string_equal(why, "affinity 16 of 16 CPUs, cgroup quota 1.5 CPUs, shared by 2 tasks on this host");
  l = (rt_cpu_limits){.online = 2, .affinity = 1};
  assert_int_equal(rt_cpus_for_task(&l, 1, why, 4), 1);   /* a short buffer is cut, never overrun */
  assert_string_equal(why, "aff");
}

static void test_cpu_max(void **state) {
  (void)state;
  long q = 0, p = 0;
  assert_int_equal(rt_cpu_max_parse("max 100000\n", &q, &p), 0);
  assert_true(q < 0 && p == 100000);
  assert_int_equal(rt_cpu_max_parse("150000 100000\n", &q, &p), 0);
  assert_true(q == 150000 && p == 100000);
  assert_int_equal(rt_cpu_max_parse("-1\n", &q, &p), 0);   /* v1's cfs_quota_us alone */
  assert_true(q == -1);
  assert_int_equal(rt_cpu_max_parse("", &q, &p), -1);
  assert_int_equal(rt_cpu_max_parse("lots 100000", &q, &p), -1);
}

static void test_this_host(void **state) {
  (void)state;
  int user = getenv("BLIS_ARCH_TYPE") != NULL;
  op_register_all();
  const char *line = op_cpu_summary();
  print_message("%s\n", line);
  assert_non_null(strstr(line, "BLIS kernels "));
  assert_non_null(strstr(line, "intra-op thread"));
  /* the big float products on oneDNN where BLIS runs its AVX-512 set, unless TFSH_GEMM=blis */
  const char *gemm = getenv("TFSH_GEMM"), *off = getenv("TFSH_DNNL");
  bool dnnl = bli_arch_query_id() == BLIS_ARCH_SKX && !(gemm && !strcmp(gemm, "blis")) &&
              !(off && !strcmp(off, "0"));
  assert_int_equal(strstr(line, "), oneDNN's sgemm for float products from 8M multiply-adds, ") != NULL,
                   dnnl);
  const char *wino = getenv("TFSH_WINOGRAD");
  int level = op_wino_isa(2);   /* what this CPU runs: 2 AVX-512, 1 AVX2 + FMA, 0 neither */
  const char *w = wino && !strcmp(wino, "0") ? NULL
                  : level == 2 ? ", Winograd for 3x3 and 5x5 convolutions (AVX-512), "
                  : level == 1 ? ", Winograd for 3x3 and 5x5 convolutions (AVX2), " : NULL;
  if (w) assert_non_null(strstr(line, w));
  else assert_null(strstr(line, "Winograd"));
  op_cpu_facts f;
  op_cpu_facts_query(&f);
  if (!user) {   /* BLIS runs the set the table chose */
    assert_int_equal(bli_arch_query_id(), op_cpu_blis_arch(&f));
    assert_non_null(strstr(line, "(from the instruction set)"));
  }
  rt_cpu_limits l;
  rt_cpu_limits_query(&l);
  assert_true(l.online >= 1 && l.affinity >= 1 && l.affinity <= 4096);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_blis_enum), cmocka_unit_test(test_kernel_set),
      cmocka_unit_test(test_threads),   cmocka_unit_test(test_cpu_max),
      cmocka_unit_test(test_this_host),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
