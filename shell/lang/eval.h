/* The evaluator: walks the syntax tree. Frames live on the C stack; locals are slots. */
#ifndef TFSH_SHELL_EVAL_H
#define TFSH_SHELL_EVAL_H

#include "shell/lang/parse.h"

typedef struct sh_func {
  sh_obj head;
  sh_funcdef *code;
  sh_chunk *chunk;        /* keeps code alive */
  sh_obj *globals;
  sh_obj *defaults;       /* tuple for the last code->defaults.n positional parameters */
  sh_obj **kwdefaults;    /* code->nkwonly values, NULL where required */
  sh_obj *closure;        /* tuple of cells, or NULL */
  sh_obj *dict;           /* function attributes, or NULL */
  sh_obj *klass;          /* the class whose body defined it (zero-argument super()) */
} sh_func;

typedef struct sh_frame {
  struct sh_frame *back;
  sh_funcdef *code;
  sh_obj **slots;
  sh_obj *closure;
  sh_obj *globals;
  sh_obj *classns;        /* class bodies: the namespace being built */
  sh_func *func;
  sh_chunk *chunk;        /* the parsed unit the code belongs to (functions made here keep it) */
  sh_obj *retval;
  sh_obj *handling;       /* the exception an except block is handling (bare raise) */
  int line;
} sh_frame;

/* Run a chunk's top level in globals. 0 / -1 with an exception pending. */
int sh_run_chunk(sh_chunk *c, sh_obj *globals);
sh_frame *sh_current_frame(void);

#endif
