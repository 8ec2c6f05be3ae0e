/* cpuid facts and the BLIS kernel set they get (cpuarch.h). */
#include "ops/cpu/cpuarch.h"
#include "ops/cpu/gemm.h"
#include "ops/cpu/winograd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/cpu/blas.h"
#include "ops/ops.h"
#include "ops/ops_int.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

static unsigned long long xcr0(void) {
  unsigned lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (unsigned long long)hi << 32 | lo;
}

void op_cpu_facts_query(op_cpu_facts *f) {
  memset(f, 0, sizeof *f);
  unsigned a, b, c, d;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return;
  unsigned max_leaf = a;
  memcpy(f->vendor, &b, 4);
  memcpy(f->vendor + 4, &d, 4);
  memcpy(f->vendor + 8, &c, 4);
  if (__get_cpuid(0x80000000, &a, &b, &c, &d) && a >= 0x80000004) {
    unsigned r[12];
    for (unsigned i = 0; i < 3; i++)
      __get_cpuid(0x80000002 + i, &r[4 * i], &r[4 * i + 1], &r[4 * i + 2], &r[4 * i + 3]);
    memcpy(f->brand, r, 48);
    char *s = f->brand;   /* trim the padding Intel puts on either side */
    while (*s == ' ') s++;
    memmove(f->brand, s, strlen(s) + 1);
    for (size_t n = strlen(f->brand); n && f->brand[n - 1] == ' ';) f->brand[--n] = '\0';
  }
  if (!__get_cpuid(1, &a, &b, &c, &d)) return;
  f->family = (a >> 8) & 0xf;
  f->model = (a >> 4) & 0xf;
  if (f->family == 0xf) f->family += (a >> 20) & 0xff;
  if (f->family == 0x6 || f->family >= 0xf) f->model |= ((a >> 16) & 0xf) << 4;
  bool osxsave = c >> 27 & 1;
  unsigned long long x = osxsave ? xcr0() : 0;
  bool ymm = (x & 0x6) == 0x6, zmm = ymm && (x & 0xe0) == 0xe0, tiles = (x & 0x60000) == 0x60000;
  f->avx = ymm && (c >> 28 & 1);
  f->fma = f->avx && (c >> 12 & 1);
  if (max_leaf < 7) return;
  __cpuid_count(7, 0, a, b, c, d);
  f->avx2 = f->avx && (b >> 5 & 1);
  f->avx512f = zmm && (b >> 16 & 1);
  f->avx512dq = zmm && (b >> 17 & 1);
  f->avx512cd = zmm && (b >> 28 & 1);
  f->avx512bw = zmm && (b >> 30 & 1);
  f->avx512vl = zmm && (b >> 31 & 1);
  f->amx = tiles && (d >> 24 & 1);
}
#else
void op_cpu_facts_query(op_cpu_facts *f) { memset(f, 0, sizeof *f); }
#endif

static bool avx512(const op_cpu_facts *f) {
  return f->avx512f && f->avx512dq && f->avx512cd && f->avx512bw && f->avx512vl;
}

int op_cpu_blis_arch(const op_cpu_facts *f) {
  if (avx512(f)) return BLIS_ARCH_SKX;
  if (f->avx2 && f->fma) {
    if (!strcmp(f->vendor, "AuthenticAMD")) {
      if (f->family == 0x17) return f->model < 0x30 ? BLIS_ARCH_ZEN : BLIS_ARCH_ZEN2;
      if (f->family >= 0x19) return BLIS_ARCH_ZEN3;
    }
    if (!strcmp(f->vendor, "HygonGenuine")) return BLIS_ARCH_ZEN;
    return BLIS_ARCH_HASWELL;
  }
  if (f->avx) return BLIS_ARCH_SANDYBRIDGE;
  return BLIS_ARCH_GENERIC;
}

const char *op_cpu_isa(const op_cpu_facts *f) {
  if (avx512(f)) return f->amx ? "AVX-512 (F/DQ/CD/BW/VL) + AMX" : "AVX-512 (F/DQ/CD/BW/VL)";
  if (f->avx2 && f->fma) return "AVX2 + FMA";
  if (f->avx) return "AVX";
  return "SSE";
}

/* ---- start-up and the one-line account ------------------------------------------- */

static op_cpu_facts facts;
static char arch_why[64];

void op_cpu_blas_init(void) {
  static bool done;   /* first from main (before numpy can start BLIS), then op_register_all */
  if (done) return;
  done = true;
  op_cpu_facts_query(&facts);
  const char *user = getenv("BLIS_ARCH_TYPE");
  if (user && *user) {
    snprintf(arch_why, sizeof arch_why, "BLIS_ARCH_TYPE=%s set by the user", user);
  } else {
    char id[16];
    snprintf(id, sizeof id, "%d", op_cpu_blis_arch(&facts));
    setenv("BLIS_ARCH_TYPE", id, 0);   /* BLIS reads it once, when it initialises */
    snprintf(arch_why, sizeof arch_why, "from the instruction set");
  }
  /* BLIS itself is loaded and initialised by its first call (blis_dl.c), not here: a
   * process that multiplies nothing never maps it. Linked (sanitizer builds), it is
   * initialised here, before anything queries it. */
#if TFSH_BLIS_LINKED
  bli_init();
#endif
}

bool op_cpu_avx512(void) {
  op_cpu_blas_init();
  return avx512(&facts);
}

const char *op_cpu_summary(void) {
  static _Thread_local char line[768];
  char why[320];
  int threads = rt_intra_threads_why(why, sizeof why);
  snprintf(line, sizeof line,
           "CPU %s (%s family 0x%x model 0x%x), %s, BLIS kernels %s (%s)%s%s, %d intra-op "
           "thread%s (%s)",
           *facts.brand ? facts.brand : "?", *facts.vendor ? facts.vendor : "?", facts.family,
           facts.model, op_cpu_isa(&facts), bli_arch_string(bli_arch_query_id()), arch_why,
           op_gemm_summary(), op_wino_summary(), threads, threads == 1 ? "" : "s", why);
  return line;
}
