/* The lexer: source text to tokens, Python's rules (INDENT/DEDENT from spaces or tabs,
 * implicit continuation inside brackets, backslash continuation, every string form). */
#ifndef TFSH_SHELL_LEX_H
#define TFSH_SHELL_LEX_H

#include "shell/lang/lang.h"

enum sh_tok {
  T_EOF, T_NEWLINE, T_INDENT, T_DEDENT, T_NAME, T_NUMBER, T_STRING, T_FSTRING,
  /* keywords */
  T_AND, T_AS, T_ASSERT, T_BREAK, T_CLASS, T_CONTINUE, T_DEF, T_DEL, T_ELIF, T_ELSE,
  T_EXCEPT, T_FALSE, T_FINALLY, T_FOR, T_FROM, T_GLOBAL, T_IF, T_IMPORT, T_IN, T_IS,
  T_LAMBDA, T_NONE, T_NONLOCAL, T_NOT, T_OR, T_PASS, T_RAISE, T_RETURN, T_TRUE, T_TRY,
  T_WHILE, T_WITH, T_YIELD, T_ASYNC, T_AWAIT,
  /* operators and delimiters */
  T_LPAREN, T_RPAREN, T_LBRACKET, T_RBRACKET, T_LBRACE, T_RBRACE, T_COMMA, T_COLON,
  T_DOT, T_SEMI, T_ASSIGN, T_ARROW, T_ELLIPSIS, T_WALRUS,
  T_PLUS, T_MINUS, T_STAR, T_SLASH, T_DSLASH, T_PERCENT, T_DSTAR, T_AT, T_LSHIFT,
  T_RSHIFT, T_AMP, T_PIPE, T_CARET, T_TILDE,
  T_EQ, T_NE, T_LT, T_LE, T_GT, T_GE,
  T_PLUSEQ, T_MINUSEQ, T_STAREQ, T_SLASHEQ, T_DSLASHEQ, T_PERCENTEQ, T_DSTAREQ, T_ATEQ,
  T_LSHIFTEQ, T_RSHIFTEQ, T_AMPEQ, T_PIPEEQ, T_CARETEQ,
  T_COUNT
};

typedef struct sh_token {
  int kind;
  int line, col;        /* 1-based */
  int len;              /* bytes of source text */
  const char *start;
  /* T_NAME: interned str; T_NUMBER: int/float; T_STRING: the decoded str;
   * T_FSTRING: the raw text between the quotes (the parser splits it). */
  sh_obj *val;
  bool raw;             /* T_FSTRING: r-prefix */
} sh_token;

typedef struct sh_syntax_error {
  int line, col;
  char msg[256];
  bool incomplete;      /* the input ended inside a bracket, string or block */
} sh_syntax_error;

typedef struct sh_tokens {
  sh_token *v;
  int n, cap;
} sh_tokens;

/* Tokenize src (NUL-terminated). On error fills err and returns -1 (tokens so far are
 * kept in out; free them with sh_tokens_free in both cases). line0/col0 offset the
 * positions (f-string expressions are lexed from inside their string). */
int sh_lex(const char *src, sh_tokens *out, sh_syntax_error *err, int line0, int col0);
void sh_tokens_free(sh_tokens *t);
const char *sh_tok_name(int kind);   /* "'('", "NAME", "end of input", ... */
/* Append the string literal body s[0..n) to b with its backslash escapes decoded (the
 * parser's f-string pieces use it too). */
void sh_unescape(sh_buf *b, const char *s, size_t n);

#endif
