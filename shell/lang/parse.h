/* The parser (tokens to syntax tree) and the resolver (which decides where each name
 * lives: global, local slot, closure cell). */
#ifndef TFSH_SHELL_PARSE_H
#define TFSH_SHELL_PARSE_H

#include "shell/lang/ast.h"
#include "shell/lang/lex.h"

/* A parsed unit of source (a file, a REPL input, an exec string): owns its nodes, the
 * objects they hold, a copy of the source (for tracebacks) and its file name. Functions
 * defined in it hold a reference. */
typedef struct sh_chunk {
  sh_obj head;
  char *file;
  char *src;
  sh_funcdef *module;     /* the top-level scope */
  struct arena_block *blocks;
  sh_obj **objs;          /* objects owned by the tree */
  int nobjs, capobjs;
} sh_chunk;

/* Parse and resolve src. interactive: expression statements echo their value (REPL).
 * On a syntax error returns NULL and fills err. */
sh_chunk *sh_parse(const char *src, const char *file, bool interactive, sh_syntax_error *err);
/* Parse a single expression (eval). */
sh_chunk *sh_parse_expr(const char *src, const char *file, sh_syntax_error *err, sh_node **out);
/* The text of line n (1-based) of a chunk's source, into buf. */
const char *sh_chunk_line(const char *src, int n, char *buf, size_t size);

#endif
