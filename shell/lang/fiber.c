/* Stack switching for generators. A generator runs on a stack of its own and every
 * next()/yield is a switch; glibc's swapcontext makes an rt_sigprocmask system call per
 * switch, which made a lazy generator expression ~6x slower than a list comprehension. So
 * on x86-64 and aarch64 a switch is a few instructions of our own: push the callee-saved
 * registers on the running stack, store its stack pointer, load the other one's, pop.
 * The signal mask and the floating-point control registers (MXCSR, x87 control word,
 * FPCR) are per-thread state that a generator shares with whoever resumes it, like a
 * called function does, and tfsh never changes them, so they are not switched (reading
 * MXCSR alone cost more than the rest of the switch).
 *
 * Shadow stacks (x86 CET, arm64 GCS): with one on, the `ret` into another stack faults,
 * since the hardware's copy of the return addresses was not switched with it. Whether the
 * process has one is not ours to decide: a toolchain that builds with -fcf-protection marks
 * every object (top-level asm included) as shadow-stack compatible, and glibc turns the
 * shadow stack on at start-up when the whole program is marked and its tunables allow. So
 * rather than rely on how the binary was built, the first switch asks the kernel
 * (arch_prctl ARCH_SHSTK_STATUS, prctl PR_GET_SHADOW_STACK_STATUS) and, when a shadow stack
 * is on, uses glibc's makecontext/swapcontext, which allocate and switch shadow stacks.
 * Other architectures use ucontext too; so does TFSH_FIBER=ucontext (to test that path).
 *
 * Under AddressSanitizer each switch is announced as a fiber switch
 * (__sanitizer_start_switch_fiber / __sanitizer_finish_switch_fiber); its swapcontext
 * interceptor warns on every process and cannot follow the stacks, so the ucontext path
 * there is getcontext/setcontext. */
#define _GNU_SOURCE
#include "shell/lang/fiber.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define FIBER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FIBER_ASAN 1
#endif
#endif
#ifdef FIBER_ASAN
#include <sanitizer/common_interface_defs.h>
#endif
#if __has_include(<valgrind/valgrind.h>)   /* tell valgrind about the extra stacks */
#include <valgrind/valgrind.h>
#define STACK_REGISTER(p, n) VALGRIND_STACK_REGISTER((p), (char *)(p) + (n))
#define STACK_DEREGISTER(id) VALGRIND_STACK_DEREGISTER(id)
#else
#define STACK_REGISTER(p, n) 0u
#define STACK_DEREGISTER(id) ((void)(id))
#endif

/* ---- stacks ------------------------------------------------------------------------------ */
/* Up to CACHED freed stacks wait for the next generators (any thread's: a generator may
 * end in another thread than it began), with the pages they touched: a mmap, the first
 * page faults and a munmap cost tens of microseconds, ten times a small generator's run.
 * Not under ASan, whose records of the old frames would linger on a reused stack. */
enum { CACHED = 8 };
static struct { void *stack; unsigned id; } cache[CACHED];
static int ncached;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

void *sh_fiber_stack_new(unsigned *id) {
  pthread_mutex_lock(&cache_lock);
  if (ncached) {
    ncached--;
    void *s = cache[ncached].stack;
    *id = cache[ncached].id;
    pthread_mutex_unlock(&cache_lock);
    return s;
  }
  pthread_mutex_unlock(&cache_lock);
  void *s = mmap(NULL, SH_FIBER_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (s == MAP_FAILED) return NULL;
  *id = STACK_REGISTER(s, SH_FIBER_STACK);
  return s;
}

void sh_fiber_stack_free(void *stack, unsigned id) {
#ifndef FIBER_ASAN
  pthread_mutex_lock(&cache_lock);
  if (ncached < CACHED) {
    cache[ncached].stack = stack;
    cache[ncached].id = id;
    ncached++;
    pthread_mutex_unlock(&cache_lock);
    return;
  }
  pthread_mutex_unlock(&cache_lock);
#endif
  STACK_DEREGISTER(id);
  munmap(stack, SH_FIBER_STACK);
}

#if defined(__x86_64__) && defined(__linux__)
#define FIBER_ASM 1
/* fiber_swap(save, sp): push rbp rbx r12-r15, *save = rsp,
 * rsp = sp, pop the same from there, ret. fiber_boot is where a new context's first
 * switch returns to: entry (rbx) called with arg (r12) on an aligned stack. */
__asm__(
    ".text\n"
    ".p2align 4\n"
    ".type fiber_swap, @function\n"
    "fiber_swap:\n"
    "  pushq %rbp\n"
    "  pushq %rbx\n"
    "  pushq %r12\n"
    "  pushq %r13\n"
    "  pushq %r14\n"
    "  pushq %r15\n"
    "  movq %rsp, (%rdi)\n"
    "  movq %rsi, %rsp\n"
    "  popq %r15\n"
    "  popq %r14\n"
    "  popq %r13\n"
    "  popq %r12\n"
    "  popq %rbx\n"
    "  popq %rbp\n"
    "  ret\n"
    ".size fiber_swap, .-fiber_swap\n"
    ".p2align 4\n"
    ".type fiber_boot, @function\n"
    "fiber_boot:\n"
    "  .cfi_startproc\n"
    "  .cfi_undefined rip\n"   /* debuggers and unwinders stop here */
    "  movq %r12, %rdi\n"
    "  callq *%rbx\n"
    "  ud2\n"
    "  .cfi_endproc\n"
    ".size fiber_boot, .-fiber_boot\n");
enum { SAVED_WORDS = 7 };   /* r15 r14 r13 r12 rbx rbp, return address */

static void *asm_frame(void *stack, size_t size, void (*entry)(void *), void *arg) {
  extern char fiber_boot[];
  uintptr_t top = ((uintptr_t)stack + size) & ~(uintptr_t)15;
  uint64_t *w = (uint64_t *)top - SAVED_WORDS;
  w[0] = w[1] = w[2] = 0;            /* r15 r14 r13 */
  w[3] = (uint64_t)(uintptr_t)arg;   /* r12 */
  w[4] = (uint64_t)(uintptr_t)entry; /* rbx */
  w[5] = 0;                          /* rbp: the end of the frame-pointer chain */
  w[6] = (uint64_t)(uintptr_t)fiber_boot;   /* its ret leaves rsp = top: aligned for the call */
  return w;
}

static int shadow_stack_on(void) {
  unsigned long long features = 0;
  /* ARCH_SHSTK_STATUS (0x5005) and ARCH_SHSTK_SHSTK (bit 0), Linux 6.6; older kernels
   * answer EINVAL, and then there is no shadow stack. */
  if (syscall(SYS_arch_prctl, 0x5005, &features) != 0) return 0;
  return (features & 1) != 0;
}
#elif defined(__aarch64__) && defined(__linux__)
#define FIBER_ASM 1
/* fiber_swap(save, sp): store x19-x30 and d8-d15 below sp, *save = sp, sp = sp
 * given, load the same, ret (to the loaded x30). fiber_boot: entry (x19) called with arg
 * (x20). */
__asm__(
    ".text\n"
    ".p2align 4\n"
    ".type fiber_swap, %function\n"
    "fiber_swap:\n"
    "  sub sp, sp, #160\n"
    "  stp x19, x20, [sp, #0]\n"
    "  stp x21, x22, [sp, #16]\n"
    "  stp x23, x24, [sp, #32]\n"
    "  stp x25, x26, [sp, #48]\n"
    "  stp x27, x28, [sp, #64]\n"
    "  stp x29, x30, [sp, #80]\n"
    "  stp d8, d9, [sp, #96]\n"
    "  stp d10, d11, [sp, #112]\n"
    "  stp d12, d13, [sp, #128]\n"
    "  stp d14, d15, [sp, #144]\n"
    "  mov x9, sp\n"
    "  str x9, [x0]\n"
    "  mov sp, x1\n"
    "  ldp x19, x20, [sp, #0]\n"
    "  ldp x21, x22, [sp, #16]\n"
    "  ldp x23, x24, [sp, #32]\n"
    "  ldp x25, x26, [sp, #48]\n"
    "  ldp x27, x28, [sp, #64]\n"
    "  ldp x29, x30, [sp, #80]\n"
    "  ldp d8, d9, [sp, #96]\n"
    "  ldp d10, d11, [sp, #112]\n"
    "  ldp d12, d13, [sp, #128]\n"
    "  ldp d14, d15, [sp, #144]\n"
    "  add sp, sp, #160\n"
    "  ret\n"
    ".size fiber_swap, .-fiber_swap\n"
    ".p2align 4\n"
    ".type fiber_boot, %function\n"
    "fiber_boot:\n"
    "  .cfi_startproc\n"
    "  .cfi_undefined x30\n"
    "  mov x0, x20\n"
    "  blr x19\n"
    "  brk #0\n"
    "  .cfi_endproc\n"
    ".size fiber_boot, .-fiber_boot\n");
enum { SAVED_WORDS = 20 };   /* 160 bytes */

static void *asm_frame(void *stack, size_t size, void (*entry)(void *), void *arg) {
  extern char fiber_boot[];
  uintptr_t top = ((uintptr_t)stack + size) & ~(uintptr_t)15;
  uint64_t *w = (uint64_t *)top - SAVED_WORDS;
  memset(w, 0, SAVED_WORDS * sizeof *w);
  w[0] = (uint64_t)(uintptr_t)entry;   /* x19 */
  w[1] = (uint64_t)(uintptr_t)arg;     /* x20 */
  w[10] = 0;                           /* x29: the end of the frame-pointer chain */
  w[11] = (uint64_t)(uintptr_t)fiber_boot;   /* x30 */
  return w;
}

static int shadow_stack_on(void) {
  unsigned long status = 0;
  /* PR_GET_SHADOW_STACK_STATUS (74) and PR_SHADOW_STACK_ENABLE (bit 0), Linux 6.13 (GCS);
   * older kernels answer EINVAL. */
  if (prctl(74, &status, 0, 0, 0) != 0) return 0;
  return (status & 1) != 0;
}
#endif

#ifdef FIBER_ASM
void fiber_swap(void **save, void *sp);
__asm__(".hidden fiber_swap\n.hidden fiber_boot\n");

enum { MODE_UNKNOWN, MODE_ASM, MODE_UCONTEXT };
static atomic_int mode;   /* decided once per process: shadow stacks are per process */

static int fiber_mode(void) {
  int m = atomic_load_explicit(&mode, memory_order_relaxed);
  if (m != MODE_UNKNOWN) return m;
  const char *e = getenv("TFSH_FIBER");
  m = (e && !strcmp(e, "ucontext")) || shadow_stack_on() ? MODE_UCONTEXT : MODE_ASM;
  atomic_store_explicit(&mode, m, memory_order_relaxed);
  return m;
}
#endif

const char *sh_fiber_kind(void) {
#ifdef FIBER_ASM
  return fiber_mode() == MODE_ASM ? "asm" : "ucontext";
#else
  return "ucontext";
#endif
}

/* makecontext's entry takes ints, so the first switch into a ucontext fiber leaves its
 * entry and argument here, for the same thread's uc_boot to pick up. */
static _Thread_local struct { void (*entry)(void *); void *arg; } uc_start;
static void uc_boot(void) {
  uc_start.entry(uc_start.arg);
  abort();
}

void sh_fiber_make(sh_fiber *f, void *stack, size_t size, void (*entry)(void *), void *arg) {
  f->sp = NULL;
  f->entry = NULL;
#ifdef FIBER_ASM
  if (fiber_mode() == MODE_ASM) {
    f->sp = asm_frame(stack, size, entry, arg);
    return;
  }
#endif
  getcontext(&f->uc);
  f->uc.uc_stack.ss_sp = stack;
  f->uc.uc_stack.ss_size = size;
  f->uc.uc_link = NULL;
  makecontext(&f->uc, uc_boot, 0);
  f->entry = entry;
  f->arg = arg;
}

static inline void raw_switch(sh_fiber *from, sh_fiber *to) {
#ifdef FIBER_ASM
  if (to->sp) {   /* made (or last left) by the hand-written switch */
    fiber_swap(&from->sp, to->sp);
    return;
  }
#endif
  if (to->entry) {
    uc_start.entry = to->entry;
    uc_start.arg = to->arg;
    to->entry = NULL;
  }
  from->sp = NULL;      /* from: a ucontext one from now on */
  from->entry = NULL;
#ifdef FIBER_ASAN
  volatile bool back = false;
  getcontext(&from->uc);
  if (!back) {
    back = true;
    setcontext(&to->uc);
  }
#else
  swapcontext(&from->uc, &to->uc);
#endif
}

void sh_fiber_switch(sh_fiber *from, sh_fiber *to, const void *stack, size_t size, bool ending,
                     const void **came_stack, size_t *came_size) {
#ifdef FIBER_ASAN
  void *fake = NULL;
  __sanitizer_start_switch_fiber(ending ? NULL : &fake, stack, size);
  raw_switch(from, to);
  __sanitizer_finish_switch_fiber(fake, came_stack, came_size);
#else
  (void)stack, (void)size, (void)ending, (void)came_stack, (void)came_size;
  raw_switch(from, to);
#endif
}

void sh_fiber_started(const void **came_stack, size_t *came_size) {
#ifdef FIBER_ASAN
  __sanitizer_finish_switch_fiber(NULL, came_stack, came_size);
#else
  (void)came_stack, (void)came_size;
#endif
}
