/* The language room's public header: what the rest of the shell (numpy, the tf module, the
 * REPL, the views) may use from shell/lang. The object model's API is value.h (included);
 * this adds the byte buffer, the REPL's entry points, sys.argv / sys.modules and class
 * lookup. shell/lang/interp.h is the room's internal header. */
#ifndef TFSH_SHELL_LANG_H
#define TFSH_SHELL_LANG_H

#include "shell/lang/value.h"

/* Growing byte buffer. */
typedef struct sh_buf { char *data; size_t len, cap; } sh_buf;
void sh_buf_put(sh_buf *b, const char *s, size_t n);
void sh_buf_puts(sh_buf *b, const char *s);
void sh_buf_putc(sh_buf *b, char c);
void sh_buf_printf(sh_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int sh_buf_put_obj(sh_buf *b, sh_obj *o, bool use_repr);
sh_obj *sh_buf_finish(sh_buf *b);     /* the contents as a str; resets b */
void sh_buf_free(sh_buf *b);

sh_obj *sh_class_lookup(sh_type *t, sh_obj *name);   /* along the bases; borrowed */
sh_obj *sh_modules_dict(void);        /* sys.modules */
/* Parse src; true when it failed only because the input ended early (REPL: read more). */
bool sh_source_incomplete(const char *src);
/* Run one REPL input: expression statements echo their repr. 0 / -1 (error pending). */
int sh_exec_interactive(const char *src);
void sh_sys_set_argv(int argc, char **argv);
/* Compile src once into a code object (new reference; NULL with SyntaxError raised) and
 * run it in globals as often as needed (%timeit): 0 / -1 with the exception pending. */
sh_obj *sh_compile(const char *src, const char *filename);
int sh_run_code(sh_obj *code, sh_obj *globals);

#endif
