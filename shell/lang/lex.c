/* The lexer. Produces the whole token array at once; the parser walks it. */
#define _GNU_SOURCE
#include "base/alloc.h"
#include "shell/lang/lex.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shell/lang/interp.h"

static const char *const keywords[] = {
  "and", "as", "assert", "break", "class", "continue", "def", "del", "elif", "else",
  "except", "False", "finally", "for", "from", "global", "if", "import", "in", "is",
  "lambda", "None", "nonlocal", "not", "or", "pass", "raise", "return", "True", "try",
  "while", "with", "yield", "async", "await"};

/* Operators, longest first so the first match is the longest. */
static const struct { const char *s; int kind; } ops[] = {
  {"**=", T_DSTAREQ}, {"//=", T_DSLASHEQ}, {">>=", T_RSHIFTEQ}, {"<<=", T_LSHIFTEQ},
  {"...", T_ELLIPSIS}, {"**", T_DSTAR}, {"//", T_DSLASH}, {"->", T_ARROW}, {":=", T_WALRUS},
  {"==", T_EQ}, {"!=", T_NE}, {"<=", T_LE}, {">=", T_GE}, {"<<", T_LSHIFT},
  {">>", T_RSHIFT}, {"+=", T_PLUSEQ}, {"-=", T_MINUSEQ}, {"*=", T_STAREQ},
  {"/=", T_SLASHEQ}, {"%=", T_PERCENTEQ}, {"@=", T_ATEQ}, {"&=", T_AMPEQ},
  {"|=", T_PIPEEQ}, {"^=", T_CARETEQ}, {"(", T_LPAREN}, {")", T_RPAREN},
  {"[", T_LBRACKET}, {"]", T_RBRACKET}, {"{", T_LBRACE}, {"}", T_RBRACE}, {",", T_COMMA},
  {":", T_COLON}, {".", T_DOT}, {";", T_SEMI}, {"=", T_ASSIGN}, {"+", T_PLUS},
  {"-", T_MINUS}, {"*", T_STAR}, {"/", T_SLASH}, {"%", T_PERCENT}, {"@", T_AT},
  {"&", T_AMP}, {"|", T_PIPE}, {"^", T_CARET}, {"~", T_TILDE}, {"<", T_LT}, {">", T_GT},
};

const char *sh_tok_name(int kind) {
  switch (kind) {
  case T_EOF: return "end of input";
  case T_NEWLINE: return "newline";
  case T_INDENT: return "indent";
  case T_DEDENT: return "dedent";
  case T_NAME: return "name";
  case T_NUMBER: return "number";
  case T_STRING: case T_FSTRING: return "string";
  }
  if (kind >= T_AND && kind <= T_AWAIT) return keywords[kind - T_AND];
  for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
    if (ops[i].kind == kind) return ops[i].s;
  return "?";
}

typedef struct lexer {
  const char *src, *p, *line_start;
  int line, col0;
  int depth;                /* open brackets */
  struct { char c; int line, col; } open[200];   /* where each open bracket is */
  int indents[100], nindent;
  int alt_indents[100];     /* the same with tabs counted as one column: must agree */
  sh_tokens *out;
  sh_syntax_error *err;
} lexer;

static int col_of(lexer *L, const char *p) {
  return (int)(p - L->line_start) + 1 + (L->line == 1 ? L->col0 : 0);
}

static int lex_error(lexer *L, const char *p, bool incomplete, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int lex_error(lexer *L, const char *p, bool incomplete, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(L->err->msg, sizeof L->err->msg, fmt, ap);
  va_end(ap);
  L->err->line = L->line;
  L->err->col = col_of(L, p);
  L->err->incomplete = incomplete;
  return -1;
}

static sh_token *emit(lexer *L, int kind, const char *start, int len) {
  sh_tokens *t = L->out;
  if (t->n == t->cap) {
    t->cap = t->cap ? t->cap * 2 : 256;
    t->v = xrealloc(t->v, t->cap * sizeof *t->v);
  }
  sh_token *tk = &t->v[t->n++];
  *tk = (sh_token){.kind = kind, .line = L->line, .col = col_of(L, start), .len = len, .start = start};
  return tk;
}

void sh_tokens_free(sh_tokens *t) {
  for (int i = 0; i < t->n; i++) sh_decref(t->v[i].val);
  free(t->v);
  *t = (sh_tokens){0};
}

static void newline(lexer *L, const char *p) {   /* p: just past the '\n' */
  L->line++;
  L->line_start = p;
}

/* Append the UTF-8 encoding of code point c. */
static void put_utf8(sh_buf *b, unsigned c) {
  char s[4];
  int n;
  if (c < 0x80) { s[0] = c; n = 1; }
  else if (c < 0x800) { s[0] = 0xC0 | c >> 6; s[1] = 0x80 | (c & 63); n = 2; }
  else if (c < 0x10000) { s[0] = 0xE0 | c >> 12; s[1] = 0x80 | (c >> 6 & 63); s[2] = 0x80 | (c & 63); n = 3; }
  else { s[0] = 0xF0 | c >> 18; s[1] = 0x80 | (c >> 12 & 63); s[2] = 0x80 | (c >> 6 & 63); s[3] = 0x80 | (c & 63); n = 4; }
  sh_buf_put(b, s, n);
}

/* Decode backslash escapes of s[0..n) into b. */
void sh_unescape(sh_buf *b, const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (s[i] != '\\' || i + 1 >= n) { sh_buf_putc(b, s[i]); continue; }
    char c = s[++i];
    switch (c) {
    case '\n': break;
    case 'n': sh_buf_putc(b, '\n'); break;
    case 't': sh_buf_putc(b, '\t'); break;
    case 'r': sh_buf_putc(b, '\r'); break;
    case 'a': sh_buf_putc(b, '\a'); break;
    case 'b': sh_buf_putc(b, '\b'); break;
    case 'f': sh_buf_putc(b, '\f'); break;
    case 'v': sh_buf_putc(b, '\v'); break;
    case '\\': case '\'': case '"': sh_buf_putc(b, c); break;
    case 'x': case 'u': case 'U': {
      int want = c == 'x' ? 2 : c == 'u' ? 4 : 8, k = 0;
      unsigned v = 0;
      while (k < want && i + 1 < n && isxdigit((unsigned char)s[i + 1])) {
        char h = s[++i];
        v = v * 16 + (isdigit((unsigned char)h) ? h - '0' : (tolower(h) - 'a' + 10));
        k++;
      }
      put_utf8(b, v);
      break;
    }
    default:
      if (c >= '0' && c <= '7') {
        unsigned v = c - '0';
        for (int k = 0; k < 2 && i + 1 < n && s[i + 1] >= '0' && s[i + 1] <= '7'; k++)
          v = v * 8 + (s[++i] - '0');
        put_utf8(b, v);
      } else {
        sh_buf_putc(b, '\\');
        sh_buf_putc(b, c);
      }
    }
  }
}

/* A string literal starting at p (after its prefix). */
static int lex_string(lexer *L, const char *start, const char *p, bool raw, bool fmt, bool bytes) {
  char q = *p;
  bool triple = p[1] == q && p[2] == q;
  int qlen = triple ? 3 : 1;
  const char *body = p + qlen, *s = body;
  int line0 = L->line;
  const char *ls0 = L->line_start;
  for (;;) {
    if (!*s) {
      L->line = line0; L->line_start = ls0;
      return lex_error(L, start, triple, triple ? "unterminated triple-quoted string literal"
                                                : "unterminated string literal");
    }
    if (*s == '\\' && s[1]) {
      if (s[1] == '\n') newline(L, s + 2);
      s += 2;
      continue;
    }
    if (*s == '\n') {
      if (!triple) {
        L->line = line0; L->line_start = ls0;
        return lex_error(L, start, false, "unterminated string literal");
      }
      newline(L, s + 1);
    }
    if (*s == q && (!triple || (s[1] == q && s[2] == q))) break;
    s++;
  }
  /* emit with the position of the start */
  int line_now = L->line;
  const char *ls_now = L->line_start;
  L->line = line0; L->line_start = ls0;
  sh_token *tk = emit(L, fmt ? T_FSTRING : T_STRING, start, (int)(s + qlen - start));
  L->line = line_now; L->line_start = ls_now;
  if (bytes) {
    tk->val = sh_bytes_literal(body, s - body, raw);
    if (!tk->val) return lex_error(L, start, false, "bytes can only contain ASCII literal characters");
  } else if (fmt) {
    tk->val = sh_strn(body, s - body);
    tk->raw = raw;
  } else if (raw) {
    tk->val = sh_strn(body, s - body);
  } else {
    sh_buf b = {0};
    sh_unescape(&b, body, s - body);
    tk->val = sh_buf_finish(&b);
  }
  L->p = s + qlen;
  return 0;
}

static int lex_number(lexer *L, const char *p) {
  const char *s = p;
  char buf[128];
  int n = 0;
  bool is_float = false;
  int base = 10;
  if (s[0] == '0' && strchr("xXoObB", s[1]) && s[1]) {
    base = tolower(s[1]) == 'x' ? 16 : tolower(s[1]) == 'o' ? 8 : 2;
    s += 2;
    while (isalnum((unsigned char)*s) || *s == '_') { if (*s != '_' && n < 120) buf[n++] = *s; s++; }
  } else {
    while (isdigit((unsigned char)*s) || *s == '_') { if (*s != '_' && n < 120) buf[n++] = *s; s++; }
    if (*s == '.' && !(s[1] == '.' && s[2] == '.')) {
      is_float = true;
      buf[n++] = *s++;
      while (isdigit((unsigned char)*s) || *s == '_') { if (*s != '_' && n < 120) buf[n++] = *s; s++; }
    }
    if ((*s == 'e' || *s == 'E') && (isdigit((unsigned char)s[1]) ||
        ((s[1] == '+' || s[1] == '-') && isdigit((unsigned char)s[2])))) {
      is_float = true;
      buf[n++] = *s++;
      if (*s == '+' || *s == '-') buf[n++] = *s++;
      while (isdigit((unsigned char)*s) || *s == '_') { if (*s != '_' && n < 120) buf[n++] = *s; s++; }
    }
  }
  buf[n] = 0;
  if (*s == 'j' || *s == 'J') return lex_error(L, p, false, "complex numbers are not supported");
  if (isalpha((unsigned char)*s) || *s == '_')
    return lex_error(L, p, false, "invalid decimal literal");
  sh_token *tk = emit(L, T_NUMBER, p, (int)(s - p));
  if (is_float) tk->val = sh_float(strtod(buf, NULL));
  else {
    errno = 0;
    char *end;
    unsigned long long v = strtoull(buf, &end, base);
    if (*end || n == 0) { L->out->n--; return lex_error(L, p, false, "invalid literal"); }
    if (errno == ERANGE || v > (unsigned long long)INT64_MAX) {
      L->out->n--;
      return lex_error(L, p, false, "integer literal too large (tfsh ints are 64-bit)");
    }
    if (base == 10 && n > 1 && buf[0] == '0' && strspn(buf, "0") != (size_t)n) {
      L->out->n--;
      return lex_error(L, p, false, "leading zeros in decimal integer literals are not permitted");
    }
    tk->val = sh_int((int64_t)v);
  }
  L->p = s;
  return 0;
}

/* Handle indentation at the start of a logical line. Returns -1 on error, 1 if the line is
 * blank (skip it), 0 otherwise. */
static int lex_indent(lexer *L) {
  const char *p = L->p;
  int col = 0, alt = 0;
  for (;; p++) {
    if (*p == ' ') { col++; alt++; }
    else if (*p == '\t') { col = (col / 8 + 1) * 8; alt++; }
    else if (*p == '\f') col = alt = 0;
    else break;
  }
  L->p = p;
  if (*p == '#' || *p == '\n' || *p == '\r' || !*p) return 1;
  if (*p == '\\' && p[1] == '\n') return 0;
  int top = L->indents[L->nindent - 1], alt_top = L->alt_indents[L->nindent - 1];
  const char *tab_error = "inconsistent use of tabs and spaces in indentation";
  if (col > top) {
    if (alt <= alt_top) return lex_error(L, p, false, "%s", tab_error);
    if (L->nindent == 100) return lex_error(L, p, false, "too many levels of indentation");
    L->alt_indents[L->nindent] = alt;
    L->indents[L->nindent++] = col;
    emit(L, T_INDENT, p, 0);
  } else {
    while (col < L->indents[L->nindent - 1]) {
      L->nindent--;
      emit(L, T_DEDENT, p, 0);
    }
    if (col != L->indents[L->nindent - 1])
      return lex_error(L, p, false, "unindent does not match any outer indentation level");
    if (alt != L->alt_indents[L->nindent - 1]) return lex_error(L, p, false, "%s", tab_error);
  }
  return 0;
}

int sh_lex(const char *src, sh_tokens *out, sh_syntax_error *err, int line0, int col0) {
  lexer L = {.src = src, .p = src, .line_start = src, .line = line0 ? line0 : 1,
             .col0 = col0, .nindent = 1, .out = out, .err = err};
  bool at_line_start = line0 == 0;
  if (!strncmp(L.p, "#!", 2)) while (*L.p && *L.p != '\n') L.p++;
  for (;;) {
    if (at_line_start && L.depth == 0) {
      int r = lex_indent(&L);
      if (r < 0) return -1;
      if (r == 1) {   /* blank or comment-only line */
        while (*L.p && *L.p != '\n') L.p++;
        if (!*L.p) break;
        newline(&L, ++L.p);
        continue;
      }
      at_line_start = false;
    }
    const char *p = L.p;
    char c = *p;
    if (!c) break;
    if (c == ' ' || c == '\t' || c == '\f' || c == '\r') { L.p++; continue; }
    if (c == '#') { while (*L.p && *L.p != '\n') L.p++; continue; }
    if (c == '\\') {
      const char *q = p + 1;
      while (*q == ' ' || *q == '\t' || *q == '\r') q++;
      if (*q == '\n') { newline(&L, q + 1); L.p = q + 1; continue; }
      if (!*q) return lex_error(&L, p, true, "unexpected end of input after line continuation");
      return lex_error(&L, p, false, "unexpected character after line continuation character");
    }
    if (c == '\n') {
      if (L.depth == 0 && out->n && out->v[out->n - 1].kind != T_NEWLINE)
        emit(&L, T_NEWLINE, p, 1);
      newline(&L, p + 1);
      L.p = p + 1;
      at_line_start = L.depth == 0;
      continue;
    }
    if (isalpha((unsigned char)c) || c == '_' || (unsigned char)c >= 0x80) {
      const char *s = p;
      while (isalnum((unsigned char)*s) || *s == '_' || (unsigned char)*s >= 0x80) s++;
      int n = (int)(s - p);
      /* string prefixes */
      if ((*s == '\'' || *s == '"') && n <= 2) {
        bool raw = false, fmt = false, bytes = false, ok = true;
        for (int i = 0; i < n; i++) {
          char k = tolower(p[i]);
          if (k == 'r') raw = true;
          else if (k == 'f') fmt = true;
          else if (k == 'b') bytes = true;
          else if (k != 'u') ok = false;
        }
        if (ok && !(bytes && fmt)) {
          if (lex_string(&L, p, s, raw, fmt, bytes) < 0) return -1;
          continue;
        }
      }
      int kind = T_NAME;
      for (int i = 0; i < (int)(sizeof keywords / sizeof *keywords); i++)
        if ((int)strlen(keywords[i]) == n && !strncmp(keywords[i], p, n)) { kind = T_AND + i; break; }
      sh_token *tk = emit(&L, kind, p, n);
      if (kind == T_NAME) {
        char name[256];
        if (n > 255) return lex_error(&L, p, false, "name too long");
        memcpy(name, p, n);
        name[n] = 0;
        tk->val = sh_intern(name);
      }
      L.p = s;
      continue;
    }
    if (isdigit((unsigned char)c) || (c == '.' && isdigit((unsigned char)p[1]))) {
      if (lex_number(&L, p) < 0) return -1;
      continue;
    }
    if (c == '\'' || c == '"') {
      if (lex_string(&L, p, p, false, false, false) < 0) return -1;
      continue;
    }
    size_t i = 0;
    for (; i < sizeof ops / sizeof *ops; i++)
      if (!strncmp(p, ops[i].s, strlen(ops[i].s))) break;
    if (i == sizeof ops / sizeof *ops) {
      if (c == '!') return lex_error(&L, p, false, "invalid syntax");
      if (c == '?') return lex_error(&L, p, false, "invalid syntax ('name?' shows help only at the prompt)");
      return lex_error(&L, p, false, "invalid character '%c' (U+%04X)", c, (unsigned char)c);
    }
    int kind = ops[i].kind;
    if (kind == T_LPAREN || kind == T_LBRACKET || kind == T_LBRACE) {
      if (L.depth == 200) return lex_error(&L, p, false, "too many nested parentheses");
      L.open[L.depth].c = c;
      L.open[L.depth].line = L.line;
      L.open[L.depth].col = col_of(&L, p);
      L.depth++;
    }
    if (kind == T_RPAREN || kind == T_RBRACKET || kind == T_RBRACE) {
      if (L.depth == 0) return lex_error(&L, p, false, "unmatched '%c'", c);
      char want = L.open[L.depth - 1].c == '(' ? ')' : L.open[L.depth - 1].c == '[' ? ']' : '}';
      if (c != want)
        return lex_error(&L, p, false, "closing parenthesis '%c' does not match opening parenthesis '%c'",
                         c, L.open[L.depth - 1].c);
      L.depth--;
    }
    emit(&L, kind, p, (int)strlen(ops[i].s));
    L.p = p + strlen(ops[i].s);
  }
  if (L.depth > 0) {
    lex_error(&L, L.p, true, "'%c' was never closed", L.open[L.depth - 1].c);
    err->line = L.open[L.depth - 1].line;
    err->col = L.open[L.depth - 1].col;
    return -1;
  }
  if (out->n && out->v[out->n - 1].kind != T_NEWLINE) emit(&L, T_NEWLINE, L.p, 0);
  while (L.nindent > 1) { L.nindent--; emit(&L, T_DEDENT, L.p, 0); }
  emit(&L, T_EOF, L.p, 0);
  return 0;
}
