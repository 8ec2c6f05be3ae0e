/* The language room's public header: CPython embedded (value.h), plus the byte buffer and
 * the entry points the REPL and the script runner use. */
#ifndef TFSH_SHELL_PY_LANG_H
#define TFSH_SHELL_PY_LANG_H

#include "shell/py/value.h"

/* Growing byte buffer. */
typedef struct sh_buf { char *data; size_t len, cap; } sh_buf;
void sh_buf_put(sh_buf *b, const char *s, size_t n);
void sh_buf_puts(sh_buf *b, const char *s);
void sh_buf_putc(sh_buf *b, char c);
void sh_buf_printf(sh_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int sh_buf_put_obj(sh_buf *b, sh_obj *o, bool use_repr);
sh_obj *sh_buf_finish(sh_buf *b);     /* the contents as a str; resets b */
void sh_buf_free(sh_buf *b);

sh_obj *sh_modules_dict(void);        /* sys.modules (borrowed) */
/* True when src failed to compile only because the input ended early (CPython's codeop
 * decides, as its own REPL does): the REPL reads another line. */
bool sh_source_incomplete(const char *src);
/* Run one REPL input ("single" mode: expression statements echo their repr). 0 / -1. */
int sh_exec_interactive(const char *src);
void sh_sys_set_argv(int argc, char **argv);
/* Compile src once (new code object; NULL with SyntaxError) and run it as often as needed. */
sh_obj *sh_compile(const char *src, const char *filename);
int sh_run_code(sh_obj *code, sh_obj *globals);

#endif
