/* The CPU as cpuid describes it, and the BLIS kernel set it gets.
 *
 * Debian's BLIS 0.9.0 chooses its kernels from a table of CPU models it knew in 2022: on
 * AMD Zen 5 it falls back to its generic kernels (~6x slower), on newer Intel Xeons with
 * AVX-512 to its AVX2 (haswell) ones. tfsh decides from the instruction set instead, on
 * every vendor, and hands the choice to BLIS through BLIS_ARCH_TYPE before BLIS's first
 * call; a user's own BLIS_ARCH_TYPE always wins. */
#ifndef TFSH_OPS_CPU_CPUARCH_H
#define TFSH_OPS_CPU_CPUARCH_H

#include <stdbool.h>
#include <stddef.h>

typedef struct op_cpu_facts {
  char vendor[13];          /* "GenuineIntel", "AuthenticAMD", "HygonGenuine", ... */
  char brand[49];           /* "AMD EPYC 9B45", "" where cpuid has none */
  unsigned family, model;   /* display family and model (extended fields folded in) */
  bool avx, avx2, fma;      /* usable: the OS saves the registers (XCR0) */
  bool avx512f, avx512dq, avx512cd, avx512bw, avx512vl;
  bool amx;                 /* AMX-TILE (no BLIS 0.9.0 kernel uses it; reported only) */
} op_cpu_facts;

/* This CPU's facts (cpuid, and the OS's support for the register state). */
void op_cpu_facts_query(op_cpu_facts *f);

/* The BLIS 0.9.0 arch id (arch_t: BLIS_ARCH_SKX = 0, ...) for a CPU, from its facts alone:
 *   AVX-512 F/DQ/CD/BW/VL, any vendor          -> skx
 *   AVX2 + FMA: AMD family 0x17 model < 0x30   -> zen, 0x17 later models -> zen2,
 *               AMD family 0x19 and up          -> zen3, Hygon -> zen, others -> haswell
 *   AVX (no AVX2/FMA)                          -> sandybridge
 *   otherwise                                  -> generic
 * Pure: no cpuid, no environment. */
int op_cpu_blis_arch(const op_cpu_facts *f);

/* "AVX-512 (F/DQ/CD/BW/VL) + AMX", "AVX2 + FMA", "AVX", "SSE": the widest set in use. */
const char *op_cpu_isa(const op_cpu_facts *f);

/* This CPU has AVX-512 F/DQ/CD/BW/VL (the skx set): kernels of its own, such as the
 * first layers' filter gradient (ops/cpu/conv.c), pick their AVX-512 paths from this. */
bool op_cpu_avx512(void);

#endif
