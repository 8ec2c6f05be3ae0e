/* libFuzzer target: the language's lexer, parser and resolver (sh_parse), on any bytes,
 * as a file and as REPL input, and sh_parse_expr. Nothing is executed. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shell/lang/parse.h"
#include "shell/lang/value.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  char *sargv[] = {"fuzz"};
  sh_init(1, sargv);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 1 << 16) return 0;
  char *src = malloc(size + 1);
  if (!src) return 0;
  memcpy(src, data, size);
  src[size] = '\0';   /* an embedded NUL ends the source, as it would for a C string */
  sh_syntax_error err;
  sh_chunk *c = sh_parse(src, "<fuzz>", size && (data[0] & 1), &err);
  if (c) SH_DECREF(c);
  sh_node *e = NULL;
  c = sh_parse_expr(src, "<fuzz>", &err, &e);
  if (c) SH_DECREF(c);
  free(src);
  return 0;
}
