/* Stack switching for generators (shell/lang/fiber.c): a context is a stack and the
 * registers saved when it was switched away from. Own header of shell/lang. */
#ifndef SHELL_LANG_FIBER_H
#define SHELL_LANG_FIBER_H

#include <stdbool.h>
#include <stddef.h>
#include <ucontext.h>

typedef struct sh_fiber {
  void *sp;        /* hand-written switch: the saved stack pointer (registers are below it) */
  ucontext_t uc;   /* fallback: glibc's contexts */
  void (*entry)(void *);   /* fallback: what the first switch into it starts */
  void *arg;
} sh_fiber;

/* A stack for a fiber: SH_FIBER_STACK bytes (like the main thread's; pages are touched
 * lazily), told to valgrind (*id: its registration). NULL if none could be mapped. Freed
 * stacks are kept for the next few fibers, so a short-lived generator costs no mmap. */
#define SH_FIBER_STACK ((size_t)8 << 20)
void *sh_fiber_stack_new(unsigned *id);
void sh_fiber_stack_free(void *stack, unsigned id);

/* Prepare f to run entry(arg) on (stack, size) when first switched to. entry must never
 * return: it ends with an sh_fiber_switch(..., ending = true). */
void sh_fiber_make(sh_fiber *f, void *stack, size_t size, void (*entry)(void *), void *arg);

/* A fiber that is only ever switched from before it is switched to (the caller's side)
 * needs no sh_fiber_make, but must start zeroed.
 * Save the running context in from and run to, whose stack is (stack, size); back here
 * when something switches to from. ending: the stack left is done with (ASan forgets it);
 * came_stack/came_size (may be NULL): where ASan says the switch back came from. */
void sh_fiber_switch(sh_fiber *from, sh_fiber *to, const void *stack, size_t size, bool ending,
                     const void **came_stack, size_t *came_size);

/* The first thing entry does on its new stack (ASan: the switch into it is complete);
 * stores where it came from like sh_fiber_switch's came_stack/came_size. */
void sh_fiber_started(const void **came_stack, size_t *came_size);

/* Whether the hand-written switch is in use (else ucontext: unsupported architecture,
 * or a shadow stack is on); "asm" or "ucontext" for diagnostics. */
const char *sh_fiber_kind(void);

#endif
