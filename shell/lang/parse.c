/* The parser: recursive descent over the token array, one function per grammar rule (the
 * rule is the comment above it), then the resolver. Errors longjmp back to sh_parse. */
#define _GNU_SOURCE
#include "base/alloc.h"
#include "shell/lang/parse.h"

#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "shell/lang/interp.h"


/* ---- the chunk: an arena and the objects the tree owns -------------------------------- */
struct arena_block { struct arena_block *next; size_t used, size; char data[]; };

static void *arena_alloc(sh_chunk *c, size_t n) {
  n = (n + 15) & ~(size_t)15;
  struct arena_block *b = c->blocks;
  if (!b || b->used + n > b->size) {
    size_t size = n > 32768 ? n : 32768;
    b = xmalloc(sizeof *b + size);
    b->next = c->blocks; b->used = 0; b->size = size;
    c->blocks = b;
  }
  void *p = b->data + b->used;
  b->used += n;
  memset(p, 0, n);
  return p;
}

static sh_obj *chunk_own(sh_chunk *c, sh_obj *o) {   /* steals o */
  if (!o) return NULL;
  if (c->nobjs == c->capobjs) {
    c->capobjs = c->capobjs ? c->capobjs * 2 : 64;
    c->objs = xrealloc(c->objs, c->capobjs * sizeof *c->objs);
  }
  c->objs[c->nobjs++] = o;
  return o;
}

static void chunk_destroy(sh_obj *o) {
  sh_chunk *c = (sh_chunk *)o;
  for (int i = 0; i < c->nobjs; i++) sh_decref(c->objs[i]);
  free(c->objs);
  for (struct arena_block *b = c->blocks, *n; b; b = n) { n = b->next; free(b); }
  free(c->file);
  free(c->src);
}
static sh_type chunk_type = {SH_TYPE_HEAD, .name = "code", .size = sizeof(sh_chunk),
  .destroy = chunk_destroy};

const char *sh_chunk_line(const char *src, int n, char *buf, size_t size) {
  if (!src) return NULL;
  const char *p = src;
  for (int i = 1; i < n && p; i++) { p = strchr(p, '\n'); if (p) p++; }
  if (!p || !*p) return NULL;
  size_t len = strcspn(p, "\n");
  if (len >= size) len = size - 1;
  memcpy(buf, p, len);
  buf[len] = 0;
  return buf;
}

/* ---- parser state ---------------------------------------------------------------------- */
typedef struct parser {
  sh_token *t;
  int pos;
  sh_chunk *c;
  sh_syntax_error *err;
  jmp_buf jb;
  bool interactive;
  int fdepth;            /* nesting of def/lambda (return is only legal inside) */
  int loopdepth;
  int depth;             /* expression nesting, bounded so the C stack is safe */
  sh_funcdef *fn;        /* the def being parsed (yield makes it a generator) */
} parser;

#define MAX_NESTING 400

/* A growing node list, allocated in the arena. */
typedef struct { sh_node **v; int n, cap; } vec;
static void vpush(parser *P, vec *v, sh_node *x) {
  if (v->n == v->cap) {
    int cap = v->cap ? v->cap * 2 : 4;
    sh_node **nv = arena_alloc(P->c, cap * sizeof *nv);
    if (v->n) memcpy(nv, v->v, v->n * sizeof *nv);
    v->v = nv; v->cap = cap;
  }
  v->v[v->n++] = x;
}
static sh_nodelist vlist(vec v) { return (sh_nodelist){v.v, v.n}; }

static sh_token *cur(parser *P) { return &P->t[P->pos]; }
static int peek(parser *P) { return P->t[P->pos].kind; }
static int peek2(parser *P) { return P->t[P->pos].kind == T_EOF ? T_EOF : P->t[P->pos + 1].kind; }
static sh_token *advance(parser *P) { sh_token *t = cur(P); if (t->kind != T_EOF) P->pos++; return t; }
static bool accept(parser *P, int kind) { if (peek(P) == kind) { advance(P); return true; } return false; }

static void error_at(parser *P, sh_token *t, const char *fmt, ...) __attribute__((format(printf, 3, 4), noreturn));
static void error_at(parser *P, sh_token *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(P->err->msg, sizeof P->err->msg, fmt, ap);
  va_end(ap);
  P->err->line = t->line;
  P->err->col = t->col;
  P->err->incomplete = t->kind == T_EOF;
  longjmp(P->jb, 1);
}

static void syntax_error(parser *P) __attribute__((noreturn));
static void syntax_error(parser *P) {
  sh_token *t = cur(P);
  if (t->kind == T_INDENT) error_at(P, t, "unexpected indent");
  if (t->kind == T_EOF) error_at(P, t, "unexpected end of input");
  error_at(P, t, "invalid syntax");
}

static sh_token *expect(parser *P, int kind) {
  if (peek(P) != kind) {
    if (peek(P) == T_EOF || peek(P) == T_NEWLINE || peek(P) == T_INDENT || kind == T_COLON ||
        kind == T_RPAREN || kind == T_RBRACKET || kind == T_RBRACE)
      error_at(P, cur(P), "expected '%s'", sh_tok_name(kind));
    syntax_error(P);
  }
  return advance(P);
}

static sh_node *node(parser *P, int kind, sh_token *at) {
  sh_node *n = arena_alloc(P->c, sizeof *n);
  n->kind = kind;
  n->line = at->line;
  n->col = at->col;
  return n;
}

static sh_obj *own(parser *P, sh_obj *o) { return chunk_own(P->c, o); }
static sh_obj *own_ref(parser *P, sh_obj *o) { return chunk_own(P->c, sh_incref(o)); }

static sh_node *name_node(parser *P, sh_token *at, sh_obj *name) {
  sh_node *n = node(P, E_NAME, at);
  n->val = own_ref(P, name);
  return n;
}

static sh_funcdef *funcdef_new(parser *P, sh_obj *name, int line) {
  sh_funcdef *f = arena_alloc(P->c, sizeof *f);
  f->name = own_ref(P, name);
  f->line = line;
  f->file = P->c->file;
  f->src = P->c->src;
  f->vararg = f->kwarg = -1;
  return f;
}

static sh_node *test(parser *P);
static sh_node *expr(parser *P);
static sh_node *or_test(parser *P);
static sh_node *star_or_test(parser *P);
static sh_nodelist suite(parser *P, const char *what, int line);
static sh_node *statement(parser *P, vec *out);

/* ---- expressions ------------------------------------------------------------------------ */

/* fstring -> { literal | '{' testlist ['='] ['!' NAME] [':' fstring] '}' } */
static void fstring_parts(parser *P, sh_token *tk, const char *s, size_t n, bool raw, vec *parts) {
  sh_buf lit = {0};
  size_t i = 0;
  while (i < n) {
    char ch = s[i];
    if ((ch == '{' || ch == '}') && i + 1 < n && s[i + 1] == ch) {
      sh_buf_putc(&lit, ch);
      i += 2;
      continue;
    }
    if (ch == '}') { sh_buf_free(&lit); error_at(P, tk, "f-string: single '}' is not allowed"); }
    if (ch != '{') {
      size_t j = i;
      while (j < n && s[j] != '{' && s[j] != '}') j++;
      if (raw) sh_buf_put(&lit, s + i, j - i); else sh_unescape(&lit, s + i, j - i);
      i = j;
      continue;
    }
    /* a replacement field: find the end of the expression */
    size_t j = ++i;
    int depth = 0;
    char q = 0;
    for (; j < n; j++) {
      char d = s[j];
      if (q) { if (d == q) q = 0; continue; }
      if (d == '\'' || d == '"') q = d;
      else if (d == '(' || d == '[' || d == '{') depth++;
      else if ((d == ')' || d == ']' || d == '}') && depth) depth--;
      else if (depth == 0 && (d == '}' || d == ':' || (d == '!' && s[j + 1] != '='))) break;
    }
    if (j >= n) { sh_buf_free(&lit); error_at(P, tk, "f-string: expecting '}'"); }
    size_t e_end = j;
    volatile bool debug = false;
    while (e_end > i && (s[e_end - 1] == ' ')) e_end--;
    if (e_end > i && s[e_end - 1] == '=' && !strchr("=!<>", e_end > i + 1 ? s[e_end - 2] : ' ')) {
      debug = true;
      sh_buf_put(&lit, s + i, j - i);
      e_end--;
    }
    if (lit.len) {
      sh_node *c = node(P, E_CONST, tk);
      c->val = own(P, sh_buf_finish(&lit));
      vpush(P, parts, c);
    }
    char *etext = xstrndup(s + i, e_end - i);
    sh_tokens toks = {0};
    sh_syntax_error sub = {0};
    sh_node *volatile value = NULL;
    if (strspn(etext, " \t") == strlen(etext)) {
      free(etext);
      error_at(P, tk, "f-string: empty expression not allowed");
    }
    if (sh_lex(etext, &toks, &sub, tk->line, tk->col) == 0) {
      /* parse the expression with a nested parser sharing this chunk */
      parser Q = {.t = toks.v, .c = P->c, .err = &sub};
      if (!setjmp(Q.jb)) {
        value = star_or_test(&Q);
        if (peek(&Q) == T_COMMA) {
          sh_node *t = node(&Q, E_TUPLE, cur(&Q));
          vec v = {0};
          vpush(&Q, &v, value);
          while (accept(&Q, T_COMMA) && peek(&Q) != T_NEWLINE) vpush(&Q, &v, star_or_test(&Q));
          t->list = vlist(v);
          value = t;
        }
        if (peek(&Q) != T_NEWLINE) syntax_error(&Q);
      }
      for (int k = 0; k < toks.n; k++) if (toks.v[k].val) own_ref(P, toks.v[k].val);
    }
    sh_tokens_free(&toks);
    free(etext);
    if (!value) { *P->err = sub; P->err->incomplete = false; longjmp(P->jb, 1); }
    sh_node *f = node(P, E_FORMAT, tk);
    f->a = value;
    f->op = debug ? 'r' : 0;
    i = j;
    if (s[i] == '!') {
      if (i + 1 >= n || !strchr("rsa", s[i + 1])) error_at(P, tk, "f-string: invalid conversion character");
      f->op = s[i + 1];
      i += 2;
    }
    if (i < n && s[i] == ':') {
      size_t k = ++i;
      int d = 0;
      for (; k < n; k++) {
        if (s[k] == '{') d++;
        else if (s[k] == '}') { if (d == 0) break; d--; }
      }
      vec spec = {0};
      fstring_parts(P, tk, s + i, k - i, raw, &spec);
      f->b = node(P, E_FSTRING, tk);
      f->b->list = vlist(spec);
      if (debug && f->op == 'r' && s[j] != '!') f->op = 0;
      i = k;
    }
    if (i >= n || s[i] != '}') error_at(P, tk, "f-string: expecting '}'");
    i++;
    vpush(P, parts, f);
  }
  if (lit.len) {
    sh_node *c = node(P, E_CONST, tk);
    c->val = own(P, sh_buf_finish(&lit));
    vpush(P, parts, c);
  }
  sh_buf_free(&lit);
}

/* strings -> (STRING | FSTRING) { STRING | FSTRING } */
static sh_node *strings(parser *P) {
  sh_token *first = cur(P);
  bool any_f = false;
  for (int i = P->pos; P->t[i].kind == T_STRING || P->t[i].kind == T_FSTRING; i++)
    any_f |= P->t[i].kind == T_FSTRING;
  for (int i = P->pos + 1; P->t[i].kind == T_STRING || P->t[i].kind == T_FSTRING; i++)
    if (P->t[i].kind == T_FSTRING || P->t[i - 1].kind == T_FSTRING ? sh_is_bytes(P->t[i].val) || sh_is_bytes(P->t[i - 1].val)
                                                                   : sh_is_bytes(P->t[i].val) != sh_is_bytes(P->t[i - 1].val))
      error_at(P, &P->t[i], "cannot mix bytes and nonbytes literals");   /* before anything is held */
  if (!any_f) {
    sh_obj *s = sh_incref(advance(P)->val);
    while (peek(P) == T_STRING) {
      sh_token *t = advance(P);
      sh_obj *n = sh_is_bytes(s) ? sh_binop(SH_ADD, s, t->val) : sh_str_concat(s, t->val);
      sh_decref(s);
      s = n;
    }
    sh_node *c = node(P, E_CONST, first);
    c->val = own(P, s);
    return c;
  }
  vec parts = {0};
  while (peek(P) == T_STRING || peek(P) == T_FSTRING) {
    sh_token *t = advance(P);
    if (t->kind == T_STRING) {
      sh_node *c = node(P, E_CONST, t);
      c->val = own_ref(P, t->val);
      vpush(P, &parts, c);
    } else {
      fstring_parts(P, t, sh_str_cstr(t->val), sh_str_len(t->val), t->raw, &parts);
    }
  }
  sh_node *f = node(P, E_FSTRING, first);
  f->list = vlist(parts);
  return f;
}

/* comp_for -> 'for' exprlist 'in' or_test { 'if' or_test } [comp_for] */
static sh_nodelist comp_clauses(parser *P) {
  vec clauses = {0};
  while (peek(P) == T_FOR) {
    sh_token *t = advance(P);
    sh_node *c = node(P, E_COMPFOR, t);
    vec targets = {0};
    bool comma = false;
    do {
      if (peek(P) == T_IN) break;
      vpush(P, &targets, expr(P));
    } while ((comma = accept(P, T_COMMA)) && peek(P) != T_IN);
    if (targets.n == 0) syntax_error(P);
    if (targets.n == 1 && !comma) c->a = targets.v[0];
    else { c->a = node(P, E_TUPLE, t); c->a->list = vlist(targets); }
    expect(P, T_IN);
    c->b = or_test(P);
    vec ifs = {0};
    while (accept(P, T_IF)) vpush(P, &ifs, or_test(P));
    c->list = vlist(ifs);
    vpush(P, &clauses, c);
  }
  return vlist(clauses);
}

static sh_node *genexp(parser *P, sh_token *at, sh_node *elt, sh_nodelist clauses);

static sh_node *comprehension(parser *P, int kind, sh_token *at, sh_node *elt, sh_node *val) {
  sh_node *n = node(P, kind, at);
  n->a = elt;
  n->b = val;
  n->list = comp_clauses(P);
  if (kind == E_GENEXP) return genexp(P, at, elt, n->list);
  return n;
}

static sh_nodelist one(parser *P, sh_node *x) {
  vec v = {0};
  vpush(P, &v, x);
  return vlist(v);
}

/* A generator expression is lazy, as Python's: (elt for a in A if c for b in B) becomes
 *     (lambda .0: <for a in .0: if c: for b in B: yield elt>)(iter(A))
 * a generator function of its own scope, its first iterable taken at once. */
static sh_node *genexp(parser *P, sh_token *at, sh_node *elt, sh_nodelist clauses) {
  sh_obj *name = sh_intern("<genexpr>"), *arg = sh_intern(".0"), *it = sh_intern("iter");
  sh_funcdef *fn = funcdef_new(P, name, at->line);
  fn->params = arena_alloc(P->c, 2 * sizeof(sh_obj *));
  fn->params[0] = own_ref(P, arg);
  fn->nparams = 1;
  fn->is_generator = true;
  sh_node *y = node(P, E_YIELD, at);
  y->a = elt;
  sh_node *body = node(P, S_EXPR, at);
  body->a = y;
  for (int i = clauses.n - 1; i >= 0; i--) {
    sh_node *c = clauses.v[i];
    for (int k = c->list.n - 1; k >= 0; k--) {
      sh_node *f = node(P, S_IF, at);
      f->a = c->list.v[k];
      f->list = one(P, body);
      body = f;
    }
    sh_node *f = node(P, S_FOR, at);
    f->a = c->a;
    f->b = i == 0 ? name_node(P, at, arg) : c->b;
    f->list = one(P, body);
    body = f;
  }
  fn->body = one(P, body);
  sh_node *lam = node(P, E_LAMBDA, at);
  lam->fn = fn;
  sh_node *first = node(P, E_CALL, at);
  first->a = name_node(P, at, it);
  first->list = one(P, clauses.v[0]->b);
  sh_node *call = node(P, E_CALL, at);
  call->a = lam;
  call->list = one(P, first);
  sh_decref(name);
  sh_decref(arg);
  sh_decref(it);
  return call;
}

static sh_node *testlist_star(parser *P);

/* yield_expr -> 'yield' ['from' test | testlist_star] */
static sh_node *yield_expr(parser *P) {
  sh_token *t = advance(P);
  if (!P->fn || P->fn->is_class || P->fn->is_module) error_at(P, t, "'yield' outside function");
  P->fn->is_generator = true;
  if (accept(P, T_FROM)) {
    sh_node *n = node(P, E_YIELDFROM, t);
    n->a = test(P);
    return n;
  }
  sh_node *n = node(P, E_YIELD, t);
  int k = peek(P);
  if (k != T_NEWLINE && k != T_RPAREN && k != T_SEMI && k != T_EOF && k != T_RBRACKET)
    n->a = testlist_star(P);
  return n;
}

/* atom -> '(' [testlist_comp] ')' | '[' [testlist_comp] ']' | '{' [dictorsetmaker] '}'
 *       | NAME | NUMBER | strings | '...' | 'None' | 'True' | 'False' */
static sh_node *atom(parser *P) {
  sh_token *t = cur(P);
  sh_node *n;
  switch (t->kind) {
  case T_NAME:
    advance(P);
    n = node(P, E_NAME, t);
    n->val = own_ref(P, t->val);
    return n;
  case T_NUMBER:
    advance(P);
    n = node(P, E_CONST, t);
    n->val = own_ref(P, t->val);
    return n;
  case T_STRING: case T_FSTRING:
    return strings(P);
  case T_NONE: case T_TRUE: case T_FALSE: case T_ELLIPSIS:
    advance(P);
    n = node(P, E_CONST, t);
    n->val = own_ref(P, t->kind == T_NONE ? SH_NONE : t->kind == T_TRUE ? sh_true
                        : t->kind == T_FALSE ? sh_false : SH_ELLIPSIS);
    return n;
  case T_LPAREN: {
    advance(P);
    if (accept(P, T_RPAREN)) { n = node(P, E_TUPLE, t); return n; }
    if (peek(P) == T_YIELD) {
      sh_node *y = yield_expr(P);
      expect(P, T_RPAREN);
      return y;
    }
    sh_node *first = star_or_test(P);
    if (peek(P) == T_FOR) {
      n = comprehension(P, E_GENEXP, t, first, NULL);
      expect(P, T_RPAREN);
      return n;
    }
    if (accept(P, T_RPAREN)) {
      if (first->kind == E_STARRED) error_at(P, t, "cannot use starred expression here");
      return first;
    }
    vec elts = {0};
    vpush(P, &elts, first);
    while (accept(P, T_COMMA) && peek(P) != T_RPAREN) vpush(P, &elts, star_or_test(P));
    expect(P, T_RPAREN);
    n = node(P, E_TUPLE, t);
    n->list = vlist(elts);
    return n;
  }
  case T_LBRACKET: {
    advance(P);
    n = node(P, E_LIST, t);
    if (accept(P, T_RBRACKET)) return n;
    sh_node *first = star_or_test(P);
    if (peek(P) == T_FOR) {
      n = comprehension(P, E_LISTCOMP, t, first, NULL);
      expect(P, T_RBRACKET);
      return n;
    }
    vec elts = {0};
    vpush(P, &elts, first);
    while (accept(P, T_COMMA) && peek(P) != T_RBRACKET) vpush(P, &elts, star_or_test(P));
    expect(P, T_RBRACKET);
    n->list = vlist(elts);
    return n;
  }
  case T_LBRACE: {
    advance(P);
    if (accept(P, T_RBRACE)) return node(P, E_DICT, t);
    vec keys = {0}, vals = {0};
    sh_node *k = NULL;
    if (accept(P, T_DSTAR)) k = NULL;
    else k = star_or_test(P);
    if (k && peek(P) != T_COLON) {   /* a set */
      if (peek(P) == T_FOR) {
        n = comprehension(P, E_SETCOMP, t, k, NULL);
        expect(P, T_RBRACE);
        return n;
      }
      vpush(P, &keys, k);
      while (accept(P, T_COMMA) && peek(P) != T_RBRACE) vpush(P, &keys, star_or_test(P));
      expect(P, T_RBRACE);
      n = node(P, E_SET, t);
      n->list = vlist(keys);
      return n;
    }
    sh_node *v;
    if (k) { expect(P, T_COLON); v = test(P); } else v = expr(P);
    if (k && peek(P) == T_FOR) {
      n = comprehension(P, E_DICTCOMP, t, k, v);
      expect(P, T_RBRACE);
      return n;
    }
    vpush(P, &keys, k);
    vpush(P, &vals, v);
    while (accept(P, T_COMMA) && peek(P) != T_RBRACE) {
      if (accept(P, T_DSTAR)) { vpush(P, &keys, NULL); vpush(P, &vals, expr(P)); continue; }
      vpush(P, &keys, test(P));
      expect(P, T_COLON);
      vpush(P, &vals, test(P));
    }
    expect(P, T_RBRACE);
    n = node(P, E_DICT, t);
    n->list = vlist(keys);
    n->list2 = vlist(vals);
    return n;
  }
  default:
    syntax_error(P);
  }
}

/* arglist -> argument { ',' argument } [','];
 * argument -> test [comp_for] | NAME '=' test | '*' test | '**' test */
static void arglist(parser *P, sh_node *call) {
  vec args = {0}, kws = {0};
  while (peek(P) != T_RPAREN) {
    sh_token *t = cur(P);
    if (accept(P, T_STAR)) {
      sh_node *s = node(P, E_STARRED, t);
      s->a = test(P);
      vpush(P, &args, s);
    } else if (accept(P, T_DSTAR)) {
      sh_node *k = node(P, E_KEYWORD, t);
      k->a = test(P);
      vpush(P, &kws, k);
    } else if (peek(P) == T_NAME && peek2(P) == T_ASSIGN) {
      advance(P); advance(P);
      sh_node *k = node(P, E_KEYWORD, t);
      k->val = own_ref(P, t->val);
      k->a = test(P);
      vpush(P, &kws, k);
    } else {
      sh_node *a = test(P);
      if (peek(P) == T_FOR) a = comprehension(P, E_GENEXP, t, a, NULL);
      if (kws.n) error_at(P, t, "positional argument follows keyword argument");
      vpush(P, &args, a);
    }
    if (!accept(P, T_COMMA)) break;
  }
  expect(P, T_RPAREN);
  call->list = vlist(args);
  call->list2 = vlist(kws);
}

/* subscript -> test | [test] ':' [test] [':' [test]] */
static sh_node *subscript(parser *P) {
  sh_token *t = cur(P);
  sh_node *lo = NULL;
  if (peek(P) != T_COLON) {
    lo = star_or_test(P);
    if (peek(P) != T_COLON) return lo;
  }
  sh_node *s = node(P, E_SLICE, t);
  s->a = lo;
  expect(P, T_COLON);
  if (peek(P) != T_COLON && peek(P) != T_RBRACKET && peek(P) != T_COMMA) s->b = test(P);
  if (accept(P, T_COLON) && peek(P) != T_RBRACKET && peek(P) != T_COMMA) s->c = test(P);
  return s;
}

/* atom_expr -> atom { '(' [arglist] ')' | '[' subscriptlist ']' | '.' NAME } */
static sh_node *atom_expr(parser *P) {
  sh_node *e = atom(P);
  for (;;) {
    sh_token *t = cur(P);
    if (accept(P, T_LPAREN)) {
      sh_node *c = node(P, E_CALL, t);
      c->a = e;
      arglist(P, c);
      e = c;
    } else if (accept(P, T_LBRACKET)) {
      sh_node *s = node(P, E_SUBSCRIPT, t);
      s->a = e;
      sh_node *first = subscript(P);
      if (peek(P) == T_COMMA) {
        vec idx = {0};
        vpush(P, &idx, first);
        while (accept(P, T_COMMA) && peek(P) != T_RBRACKET) vpush(P, &idx, subscript(P));
        first = node(P, E_TUPLE, t);
        first->list = vlist(idx);
      }
      expect(P, T_RBRACKET);
      s->b = first;
      e = s;
    } else if (accept(P, T_DOT)) {
      sh_token *name = expect(P, T_NAME);
      sh_node *a = node(P, E_ATTR, name);
      a->a = e;
      a->val = own_ref(P, name->val);
      e = a;
    } else {
      return e;
    }
  }
}

/* power -> atom_expr ['**' factor] */
static sh_node *factor(parser *P);
static sh_node *power(parser *P) {
  sh_node *e = atom_expr(P);
  sh_token *t = cur(P);
  if (accept(P, T_DSTAR)) {
    sh_node *b = node(P, E_BINOP, t);
    b->op = SH_POW;
    b->a = e;
    b->b = factor(P);
    return b;
  }
  return e;
}

/* factor -> ('+' | '-' | '~') factor | power */
static sh_node *factor_(parser *P);
static sh_node *factor(parser *P) {
  if (++P->depth > MAX_NESTING) error_at(P, cur(P), "expression nested too deeply");
  sh_node *n = factor_(P);
  P->depth--;
  return n;
}
static sh_node *factor_(parser *P) {
  sh_token *t = cur(P);
  int op = t->kind == T_MINUS ? SH_NEG : t->kind == T_PLUS ? SH_POS : t->kind == T_TILDE ? SH_INVERT : -1;
  if (op < 0) return power(P);
  advance(P);
  sh_node *operand = factor(P);
  if (op == SH_NEG && operand->kind == E_CONST && operand->val->type != &sh_bool_type &&
      (sh_is_int(operand->val) || sh_is_float(operand->val))) {   /* fold -1 */
    sh_obj *v = sh_unop(SH_NEG, operand->val);
    if (v) { operand->val = own(P, v); operand->line = t->line; operand->col = t->col; return operand; }
    sh_err_clear();
  }
  sh_node *u = node(P, E_UNOP, t);
  u->op = op;
  u->a = operand;
  return u;
}

/* expr -> factor { binop factor }, by priority: | ^ & (<< >>) (+ -) (* / // % @) */
static int binop_of(int tok, int *prio) {
  switch (tok) {
  case T_PIPE: *prio = 1; return SH_BITOR;
  case T_CARET: *prio = 2; return SH_BITXOR;
  case T_AMP: *prio = 3; return SH_BITAND;
  case T_LSHIFT: *prio = 4; return SH_LSHIFT;
  case T_RSHIFT: *prio = 4; return SH_RSHIFT;
  case T_PLUS: *prio = 5; return SH_ADD;
  case T_MINUS: *prio = 5; return SH_SUB;
  case T_STAR: *prio = 6; return SH_MUL;
  case T_SLASH: *prio = 6; return SH_TRUEDIV;
  case T_DSLASH: *prio = 6; return SH_FLOORDIV;
  case T_PERCENT: *prio = 6; return SH_MOD;
  case T_AT: *prio = 6; return SH_MATMUL;
  }
  return -1;
}

static sh_node *binary(parser *P, int limit) {
  sh_node *left = factor(P);
  for (;;) {
    int prio, op = binop_of(peek(P), &prio);
    if (op < 0 || prio <= limit) return left;
    sh_token *t = advance(P);
    sh_node *b = node(P, E_BINOP, t);
    b->op = op;
    b->a = left;
    b->b = binary(P, prio);
    left = b;
  }
}

static sh_node *expr(parser *P) { return binary(P, 0); }

/* comparison -> expr { comp_op expr };
 * comp_op -> '<' | '>' | '==' | '>=' | '<=' | '!=' | 'in' | 'not' 'in' | 'is' | 'is' 'not' */
static int comp_op(parser *P) {
  switch (peek(P)) {
  case T_LT: advance(P); return SH_LT;
  case T_LE: advance(P); return SH_LE;
  case T_EQ: advance(P); return SH_EQ;
  case T_NE: advance(P); return SH_NE;
  case T_GT: advance(P); return SH_GT;
  case T_GE: advance(P); return SH_GE;
  case T_IN: advance(P); return CMP_IN;
  case T_NOT:
    if (peek2(P) != T_IN) return -1;
    advance(P); advance(P);
    return CMP_NOT_IN;
  case T_IS:
    advance(P);
    return accept(P, T_NOT) ? CMP_IS_NOT : CMP_IS;
  }
  return -1;
}

static sh_node *comparison(parser *P) {
  sh_token *t = cur(P);
  sh_node *first = expr(P);
  int op = comp_op(P);
  if (op < 0) return first;
  sh_node *c = node(P, E_COMPARE, t);
  c->a = first;
  vec rest = {0};
  int ops[64], n = 0;
  do {
    if (n == 64) error_at(P, t, "too many chained comparisons");
    ops[n++] = op;
    vpush(P, &rest, expr(P));
  } while ((op = comp_op(P)) >= 0);
  c->list = vlist(rest);
  c->ops = arena_alloc(P->c, n * sizeof(int));
  memcpy(c->ops, ops, n * sizeof(int));
  return c;
}

/* not_test -> 'not' not_test | comparison */
static sh_node *not_test(parser *P) {
  sh_token *t = cur(P);
  if (accept(P, T_NOT)) {
    sh_node *n = node(P, E_NOT, t);
    n->a = not_test(P);
    return n;
  }
  return comparison(P);
}

/* and_test -> not_test { 'and' not_test } */
static sh_node *and_test(parser *P) {
  sh_node *e = not_test(P);
  while (peek(P) == T_AND) {
    sh_node *n = node(P, E_AND, advance(P));
    n->a = e;
    n->b = not_test(P);
    e = n;
  }
  return e;
}

/* or_test -> and_test { 'or' and_test } */
static sh_node *or_test(parser *P) {
  sh_node *e = and_test(P);
  while (peek(P) == T_OR) {
    sh_node *n = node(P, E_OR, advance(P));
    n->a = e;
    n->b = and_test(P);
    e = n;
  }
  return e;
}

/* parameters -> param { ',' param } [','];
 * param -> NAME [':' test] ['=' test] | '*' [NAME] | '**' NAME | '/'
 * (annotations are parsed and dropped; in a lambda there are none) */
static void parameters(parser *P, sh_funcdef *f, int end, bool lambda) {
  sh_obj *names[256];
  sh_node *defs[256], *kwdefs[256];
  int n = 0, ndef = 0, nkw = 0;
  bool star = false;
  sh_obj *vararg = NULL, *kwarg = NULL;
  while (peek(P) != end) {
    sh_token *t = cur(P);
    if (n >= 250) error_at(P, t, "too many parameters");
    if (accept(P, T_SLASH)) { if (!accept(P, T_COMMA)) break; continue; }
    if (accept(P, T_DSTAR)) {
      kwarg = expect(P, T_NAME)->val;
      if (!lambda && accept(P, T_COLON)) test(P);
      accept(P, T_COMMA);
      break;
    }
    if (accept(P, T_STAR)) {
      if (star) error_at(P, t, "* argument may appear only once");
      star = true;
      if (peek(P) == T_NAME) {
        vararg = advance(P)->val;
        if (!lambda && accept(P, T_COLON)) test(P);
      }
      if (!accept(P, T_COMMA)) break;
      continue;
    }
    sh_token *name = expect(P, T_NAME);
    for (int i = 0; i < n; i++)
      if (names[i] == name->val) error_at(P, name, "duplicate argument '%s' in function definition", sh_str_cstr(name->val));
    if (!lambda && accept(P, T_COLON)) test(P);
    sh_node *d = NULL;
    if (accept(P, T_ASSIGN)) d = test(P);
    names[n++] = name->val;
    if (star) kwdefs[nkw++] = d;
    else if (d) defs[ndef++] = d;
    else if (ndef) error_at(P, name, "non-default argument follows default argument");
    if (!accept(P, T_COMMA)) break;
  }
  int total = n + (vararg != NULL) + (kwarg != NULL);
  f->params = arena_alloc(P->c, (total + 1) * sizeof(sh_obj *));
  for (int i = 0; i < n; i++) f->params[i] = own_ref(P, names[i]);
  f->nkwonly = nkw;
  f->nparams = n - nkw;
  int k = n;
  if (vararg) { f->vararg = k; f->params[k++] = own_ref(P, vararg); }
  if (kwarg) { f->kwarg = k; f->params[k++] = own_ref(P, kwarg); }
  f->defaults.v = arena_alloc(P->c, (ndef + 1) * sizeof(sh_node *));
  memcpy(f->defaults.v, defs, ndef * sizeof(sh_node *));
  f->defaults.n = ndef;
  f->kwdefaults = arena_alloc(P->c, (nkw + 1) * sizeof(sh_node *));
  memcpy(f->kwdefaults, kwdefs, nkw * sizeof(sh_node *));
}

/* lambdef -> 'lambda' [parameters] ':' test */
static sh_node *lambdef(parser *P) {
  sh_token *t = advance(P);
  sh_node *n = node(P, E_LAMBDA, t);
  sh_obj *name = sh_intern("<lambda>");
  n->fn = funcdef_new(P, name, t->line);
  sh_decref(name);
  parameters(P, n->fn, T_COLON, true);
  expect(P, T_COLON);
  P->fdepth++;
  sh_funcdef *outer = P->fn;
  P->fn = NULL;   /* no yield in a lambda */
  sh_node *body = test(P);
  P->fn = outer;
  P->fdepth--;
  sh_node *ret = node(P, S_RETURN, t);
  ret->a = body;
  n->fn->body.v = arena_alloc(P->c, sizeof(sh_node *));
  n->fn->body.v[0] = ret;
  n->fn->body.n = 1;
  return n;
}

/* test -> or_test ['if' or_test 'else' test] | lambdef */
static sh_node *test_(parser *P);
static sh_node *test(parser *P) {
  if (++P->depth > MAX_NESTING) error_at(P, cur(P), "expression nested too deeply");
  sh_node *n = test_(P);
  P->depth--;
  return n;
}
static sh_node *test_(parser *P) {
  if (peek(P) == T_LAMBDA) return lambdef(P);
  sh_node *e = or_test(P);
  if (peek(P) == T_IF) {
    sh_node *n = node(P, E_IFEXP, advance(P));
    n->b = e;
    n->a = or_test(P);
    if (peek(P) != T_ELSE) error_at(P, cur(P), "expected 'else' after 'if' expression");
    advance(P);
    n->c = test(P);
    return n;
  }
  return e;
}

/* star_or_test -> '*' expr | test */
static sh_node *star_or_test(parser *P) {
  sh_token *t = cur(P);
  if (accept(P, T_STAR)) {
    sh_node *s = node(P, E_STARRED, t);
    s->a = expr(P);
    return s;
  }
  return test(P);
}

/* testlist_star -> star_or_test { ',' star_or_test } [','] (a tuple when there is a comma) */
static sh_node *testlist_star(parser *P) {
  sh_token *t = cur(P);
  sh_node *first = star_or_test(P);
  if (peek(P) != T_COMMA) {
    if (first->kind == E_STARRED) error_at(P, t, "can't use starred expression here");
    return first;
  }
  vec elts = {0};
  vpush(P, &elts, first);
  while (accept(P, T_COMMA)) {
    int k = peek(P);
    if (k == T_NEWLINE || k == T_ASSIGN || k == T_SEMI || k == T_RPAREN || k == T_COLON ||
        (k >= T_PLUSEQ && k <= T_CARETEQ) || k == T_EOF)
      break;
    vpush(P, &elts, star_or_test(P));
  }
  sh_node *tup = node(P, E_TUPLE, t);
  tup->list = vlist(elts);
  return tup;
}

/* ---- assignment targets ---------------------------------------------------------------- */
static const char *expr_what(sh_node *e) {
  switch (e->kind) {
  case E_CALL: return "function call";
  case E_CONST: return e->val == SH_NONE ? "None" : e->val == sh_true ? "True" : e->val == sh_false ? "False" : "literal";
  case E_COMPARE: return "comparison";
  case E_BINOP: case E_UNOP: return "expression";
  case E_LAMBDA: return "lambda";
  case E_IFEXP: return "conditional expression";
  case E_AND: case E_OR: case E_NOT: return "expression";
  case E_DICT: return "dict literal";
  case E_SET: return "set display";
  case E_LISTCOMP: return "list comprehension";
  case E_FSTRING: return "f-string expression";
  default: return "expression";
  }
}

static void check_target(parser *P, sh_node *e, bool del) {
  switch (e->kind) {
  case E_NAME: case E_ATTR: case E_SUBSCRIPT: return;
  case E_TUPLE: case E_LIST: {
    int stars = 0;
    for (int i = 0; i < e->list.n; i++) {
      sh_node *x = e->list.v[i];
      if (x->kind == E_STARRED && !del) { stars++; check_target(P, x->a, del); }
      else check_target(P, x, del);
    }
    if (stars > 1) error_at(P, &(sh_token){.line = e->line, .col = e->col, .kind = T_NAME},
                            "multiple starred expressions in assignment");
    return;
  }
  default: {
    sh_token at = {.line = e->line, .col = e->col, .kind = T_NAME};
    if (del) error_at(P, &at, "cannot delete %s", expr_what(e));
    if (e->kind == E_CALL || e->kind == E_CONST || e->kind == E_COMPARE)
      error_at(P, &at, "cannot assign to %s here. Maybe you meant '==' instead of '='?", expr_what(e));
    error_at(P, &at, "cannot assign to %s", expr_what(e));
  }
  }
}

/* ---- statements ------------------------------------------------------------------------- */

/* dotted_name -> NAME { '.' NAME } */
static sh_obj *dotted_name(parser *P) {
  sh_buf b = {0};
  sh_buf_puts(&b, sh_str_cstr(expect(P, T_NAME)->val));
  while (peek(P) == T_DOT) {
    advance(P);
    sh_buf_putc(&b, '.');
    sh_token *t = cur(P);
    if (t->kind != T_NAME) { sh_buf_free(&b); syntax_error(P); }
    advance(P);
    sh_buf_puts(&b, sh_str_cstr(t->val));
  }
  sh_obj *s = sh_buf_finish(&b);
  sh_obj *i = sh_intern(sh_str_cstr(s));
  sh_decref(s);
  return own(P, i);
}

/* import_name -> 'import' dotted_name ['as' NAME] { ',' dotted_name ['as' NAME] }
 * import_from -> 'from' dotted_name 'import' ('*' | '(' names ')' | names);
 * names -> NAME ['as' NAME] { ',' NAME ['as' NAME] } [','] */
static sh_node *import_stmt(parser *P) {
  sh_token *t = advance(P);
  vec aliases = {0};
  if (t->kind == T_IMPORT) {
    sh_node *n = node(P, S_IMPORT, t);
    do {
      sh_node *a = node(P, S_ALIAS, cur(P));
      a->val = dotted_name(P);
      if (accept(P, T_AS)) a->val2 = own_ref(P, expect(P, T_NAME)->val);
      if (a->val2) a->a = name_node(P, t, a->val2);
      else {
        const char *d = sh_str_cstr(a->val);
        sh_obj *first = sh_strn(d, strcspn(d, "."));
        sh_obj *iname = sh_intern(sh_str_cstr(first));
        a->a = name_node(P, t, iname);
        sh_decref(first);
        sh_decref(iname);
      }
      vpush(P, &aliases, a);
    } while (accept(P, T_COMMA));
    n->list = vlist(aliases);
    return n;
  }
  sh_node *n = node(P, S_FROMIMPORT, t);
  if (peek(P) == T_DOT || peek(P) == T_ELLIPSIS) error_at(P, cur(P), "relative imports are not supported by tfsh");
  n->val = dotted_name(P);
  expect(P, T_IMPORT);
  if (peek(P) == T_STAR) {
    sh_node *a = node(P, S_ALIAS, advance(P));
    a->val = own(P, sh_intern("*"));
    vpush(P, &aliases, a);
  } else {
    bool paren = accept(P, T_LPAREN);
    do {
      if (paren && peek(P) == T_RPAREN) break;
      sh_node *a = node(P, S_ALIAS, cur(P));
      a->val = own_ref(P, expect(P, T_NAME)->val);
      if (accept(P, T_AS)) a->val2 = own_ref(P, expect(P, T_NAME)->val);
      a->a = name_node(P, t, a->val2 ? a->val2 : a->val);
      vpush(P, &aliases, a);
    } while (accept(P, T_COMMA));
    if (paren) expect(P, T_RPAREN);
  }
  n->list = vlist(aliases);
  return n;
}

static int augop_of(int tok) {
  static const int map[][2] = {
    {T_PLUSEQ, SH_ADD}, {T_MINUSEQ, SH_SUB}, {T_STAREQ, SH_MUL}, {T_SLASHEQ, SH_TRUEDIV},
    {T_DSLASHEQ, SH_FLOORDIV}, {T_PERCENTEQ, SH_MOD}, {T_DSTAREQ, SH_POW}, {T_ATEQ, SH_MATMUL},
    {T_LSHIFTEQ, SH_LSHIFT}, {T_RSHIFTEQ, SH_RSHIFT}, {T_AMPEQ, SH_BITAND},
    {T_PIPEEQ, SH_BITOR}, {T_CARETEQ, SH_BITXOR}};
  for (size_t i = 0; i < sizeof map / sizeof *map; i++)
    if (map[i][0] == tok) return map[i][1];
  return -1;
}

/* small_stmt -> 'pass' | 'break' | 'continue' | 'return' [testlist_star]
 *   | 'raise' [test ['from' test]] | 'global' NAME {',' NAME} | 'nonlocal' NAME {',' NAME}
 *   | 'del' exprlist | 'assert' test [',' test] | import_stmt | expr_stmt;
 * expr_stmt -> testlist_star ( { '=' testlist_star } | augop testlist_star | ':' test ['=' test] ) */
static sh_node *small_stmt(parser *P) {
  sh_token *t = cur(P);
  sh_node *n;
  switch (t->kind) {
  case T_PASS: advance(P); return node(P, S_PASS, t);
  case T_BREAK:
    advance(P);
    if (!P->loopdepth) error_at(P, t, "'break' outside loop");
    return node(P, S_BREAK, t);
  case T_CONTINUE:
    advance(P);
    if (!P->loopdepth) error_at(P, t, "'continue' not properly in loop");
    return node(P, S_CONTINUE, t);
  case T_RETURN:
    advance(P);
    if (!P->fdepth) error_at(P, t, "'return' outside function");
    n = node(P, S_RETURN, t);
    if (peek(P) != T_NEWLINE && peek(P) != T_SEMI) n->a = testlist_star(P);
    return n;
  case T_RAISE:
    advance(P);
    n = node(P, S_RAISE, t);
    if (peek(P) != T_NEWLINE && peek(P) != T_SEMI) {
      n->a = test(P);
      if (accept(P, T_FROM)) n->b = test(P);
    }
    return n;
  case T_GLOBAL: case T_NONLOCAL: {
    advance(P);
    n = node(P, t->kind == T_GLOBAL ? S_GLOBAL : S_NONLOCAL, t);
    sh_obj *names[64];
    int k = 0;
    do {
      if (k == 64) syntax_error(P);
      names[k++] = expect(P, T_NAME)->val;
    } while (accept(P, T_COMMA));
    n->names = arena_alloc(P->c, k * sizeof(sh_obj *));
    for (int i = 0; i < k; i++) n->names[i] = own_ref(P, names[i]);
    n->nnames = k;
    return n;
  }
  case T_DEL: {
    advance(P);
    n = node(P, S_DEL, t);
    vec targets = {0};
    do {
      sh_node *e = expr(P);
      check_target(P, e, true);
      vpush(P, &targets, e);
    } while (accept(P, T_COMMA) && peek(P) != T_NEWLINE);
    n->list = vlist(targets);
    return n;
  }
  case T_ASSERT:
    advance(P);
    n = node(P, S_ASSERT, t);
    n->a = test(P);
    if (accept(P, T_COMMA)) n->b = test(P);
    return n;
  case T_IMPORT: case T_FROM:
    return import_stmt(P);
  }
  sh_node *e = peek(P) == T_YIELD ? yield_expr(P) : testlist_star(P);
  int aug = augop_of(peek(P));
  if (aug >= 0) {
    sh_token *op = advance(P);
    if (e->kind != E_NAME && e->kind != E_ATTR && e->kind != E_SUBSCRIPT)
      error_at(P, &(sh_token){.line = e->line, .col = e->col, .kind = T_NAME},
               "'%s' is an illegal expression for augmented assignment", expr_what(e));
    n = node(P, S_AUGASSIGN, op);
    n->op = aug;
    n->a = e;
    n->b = testlist_star(P);
    return n;
  }
  if (peek(P) == T_COLON) {   /* annotated assignment: x: int = 3 */
    advance(P);
    check_target(P, e, false);
    test(P);
    n = node(P, S_ANNASSIGN, t);
    n->a = e;
    if (accept(P, T_ASSIGN)) n->b = testlist_star(P);
    return n;
  }
  if (peek(P) == T_ASSIGN) {
    vec targets = {0};
    sh_node *value = e;
    while (accept(P, T_ASSIGN)) {
      check_target(P, value, false);
      vpush(P, &targets, value);
      value = peek(P) == T_YIELD ? yield_expr(P) : testlist_star(P);
    }
    n = node(P, S_ASSIGN, t);
    n->list = vlist(targets);
    n->a = value;
    return n;
  }
  n = node(P, S_EXPR, t);
  n->a = e;
  return n;
}

/* simple_stmt -> small_stmt { ';' small_stmt } [';'] NEWLINE */
static void simple_stmt(parser *P, vec *out) {
  for (;;) {
    vpush(P, out, small_stmt(P));
    if (!accept(P, T_SEMI)) break;
    if (peek(P) == T_NEWLINE) break;
  }
  if (peek(P) != T_NEWLINE) {
    sh_token *t = cur(P);
    if (t->kind == T_NAME || t->kind == T_NUMBER || t->kind == T_STRING)
      error_at(P, t, "invalid syntax");
    syntax_error(P);
  }
  advance(P);
}

/* suite -> simple_stmt | NEWLINE INDENT stmt { stmt } DEDENT */
static sh_nodelist suite(parser *P, const char *what, int line) {
  vec body = {0};
  if (!accept(P, T_NEWLINE)) {
    simple_stmt(P, &body);
    return vlist(body);
  }
  if (peek(P) != T_INDENT)
    error_at(P, cur(P), "expected an indented block after %s on line %d", what, line);
  advance(P);
  while (!accept(P, T_DEDENT)) {
    if (peek(P) == T_EOF) break;
    statement(P, &body);
  }
  return vlist(body);
}

/* if_stmt -> 'if' test ':' suite { 'elif' test ':' suite } ['else' ':' suite] */
static sh_node *if_stmt(parser *P) {
  sh_token *t = advance(P);
  sh_node *n = node(P, S_IF, t);
  n->a = test(P);
  expect(P, T_COLON);
  n->list = suite(P, t->kind == T_IF ? "'if' statement" : "'elif' statement", t->line);
  if (peek(P) == T_ELIF) {
    sh_node *elif = if_stmt(P);
    n->list2.v = arena_alloc(P->c, sizeof(sh_node *));
    n->list2.v[0] = elif;
    n->list2.n = 1;
  } else if (peek(P) == T_ELSE) {
    sh_token *e = advance(P);
    expect(P, T_COLON);
    n->list2 = suite(P, "'else' statement", e->line);
  }
  return n;
}

static sh_nodelist loop_body(parser *P, const char *what, int line) {
  P->loopdepth++;
  sh_nodelist body = suite(P, what, line);
  P->loopdepth--;
  return body;
}

static void else_suite(parser *P, sh_node *n) {
  if (peek(P) == T_ELSE) {
    sh_token *e = advance(P);
    expect(P, T_COLON);
    n->list2 = suite(P, "'else' statement", e->line);
  }
}

/* while_stmt -> 'while' test ':' suite ['else' ':' suite] */
static sh_node *while_stmt(parser *P) {
  sh_token *t = advance(P);
  sh_node *n = node(P, S_WHILE, t);
  n->a = test(P);
  expect(P, T_COLON);
  n->list = loop_body(P, "'while' statement", t->line);
  else_suite(P, n);
  return n;
}

/* for_stmt -> 'for' exprlist 'in' testlist_star ':' suite ['else' ':' suite];
 * exprlist -> (expr | '*' expr) { ',' (expr | '*' expr) } [','] */
static sh_node *for_stmt(parser *P) {
  sh_token *t = advance(P);
  sh_node *n = node(P, S_FOR, t);
  vec targets = {0};
  bool comma = false;
  do {
    if (peek(P) == T_IN) break;
    sh_token *s = cur(P);
    if (accept(P, T_STAR)) { sh_node *st = node(P, E_STARRED, s); st->a = expr(P); vpush(P, &targets, st); }
    else vpush(P, &targets, expr(P));
  } while ((comma = accept(P, T_COMMA)));
  if (targets.n == 0) syntax_error(P);
  if (targets.n == 1 && !comma) n->a = targets.v[0];
  else { n->a = node(P, E_TUPLE, t); n->a->list = vlist(targets); }
  check_target(P, n->a, false);
  expect(P, T_IN);
  n->b = testlist_star(P);
  expect(P, T_COLON);
  n->list = loop_body(P, "'for' statement", t->line);
  else_suite(P, n);
  return n;
}

/* try_stmt -> 'try' ':' suite ( except_clause ':' suite { except_clause ':' suite }
 *             ['else' ':' suite] ['finally' ':' suite] | 'finally' ':' suite );
 * except_clause -> 'except' [test ['as' NAME]] */
static sh_node *try_stmt(parser *P) {
  sh_token *t = advance(P);
  sh_node *n = node(P, S_TRY, t);
  expect(P, T_COLON);
  n->list = suite(P, "'try' statement", t->line);
  vec handlers = {0};
  while (peek(P) == T_EXCEPT) {
    sh_token *e = advance(P);
    sh_node *h = node(P, S_HANDLER, e);
    if (peek(P) != T_COLON) {
      h->a = test(P);
      if (peek(P) == T_COMMA) {   /* except (A, B) written without parentheses */
        vec types = {0};
        vpush(P, &types, h->a);
        while (accept(P, T_COMMA)) vpush(P, &types, test(P));
        h->a = node(P, E_TUPLE, e);
        h->a->list = vlist(types);
      }
      if (accept(P, T_AS)) {
        sh_token *nm = expect(P, T_NAME);
        h->val = own_ref(P, nm->val);
        h->b = name_node(P, nm, nm->val);
      }
    }
    expect(P, T_COLON);
    h->list = suite(P, "'except' statement", e->line);
    vpush(P, &handlers, h);
  }
  n->list2 = vlist(handlers);
  if (handlers.n && peek(P) == T_ELSE) {
    sh_token *e = advance(P);
    expect(P, T_COLON);
    n->list3 = suite(P, "'else' statement", e->line);
  }
  if (peek(P) == T_FINALLY) {
    sh_token *f = advance(P);
    expect(P, T_COLON);
    n->list4 = suite(P, "'finally' statement", f->line);
  } else if (!handlers.n) {
    error_at(P, cur(P), "expected 'except' or 'finally' block");
  }
  return n;
}

/* with_stmt -> 'with' with_item { ',' with_item } ':' suite; with_item -> test ['as' expr] */
static sh_node *with_stmt(parser *P) {
  sh_token *t = advance(P);
  sh_node *n = node(P, S_WITH, t);
  vec items = {0};
  do {
    sh_node *w = node(P, S_WITHITEM, cur(P));
    w->a = test(P);
    if (accept(P, T_AS)) { w->b = expr(P); check_target(P, w->b, false); }
    vpush(P, &items, w);
  } while (accept(P, T_COMMA));
  expect(P, T_COLON);
  n->list = vlist(items);
  n->list2 = suite(P, "'with' statement", t->line);
  return n;
}

static sh_obj *docstring(sh_nodelist body) {
  if (body.n && body.v[0]->kind == S_EXPR && body.v[0]->a->kind == E_CONST &&
      sh_is_str(body.v[0]->a->val))
    return body.v[0]->a->val;
  return NULL;
}

/* funcdef -> 'def' NAME '(' [parameters] ')' ['->' test] ':' suite */
static sh_node *funcdef(parser *P, sh_nodelist decorators) {
  sh_token *t = advance(P);
  sh_token *name = expect(P, T_NAME);
  sh_node *n = node(P, S_DEF, t);
  n->fn = funcdef_new(P, name->val, t->line);
  n->a = name_node(P, name, name->val);
  n->list = decorators;
  expect(P, T_LPAREN);
  parameters(P, n->fn, T_RPAREN, false);
  expect(P, T_RPAREN);
  if (accept(P, T_ARROW)) test(P);
  expect(P, T_COLON);
  int loops = P->loopdepth;
  sh_funcdef *outer = P->fn;
  P->loopdepth = 0;
  P->fdepth++;
  P->fn = n->fn;
  n->fn->body = suite(P, "function definition", t->line);
  P->fn = outer;
  P->fdepth--;
  P->loopdepth = loops;
  n->fn->doc = docstring(n->fn->body);
  return n;
}

/* classdef -> 'class' NAME ['(' [arglist] ')'] ':' suite */
static sh_node *classdef(parser *P, sh_nodelist decorators) {
  sh_token *t = advance(P);
  sh_token *name = expect(P, T_NAME);
  sh_node *n = node(P, S_CLASS, t);
  n->val = own_ref(P, name->val);
  n->a = name_node(P, name, name->val);
  n->list3 = decorators;
  if (accept(P, T_LPAREN)) {
    sh_node call = {0};
    arglist(P, &call);
    n->list = call.list;
  }
  expect(P, T_COLON);
  int loops = P->loopdepth, fdepth = P->fdepth;
  P->loopdepth = 0;
  P->fdepth = 0;
  n->fn = funcdef_new(P, name->val, t->line);
  n->fn->is_class = true;
  sh_funcdef *outer = P->fn;
  P->fn = n->fn;
  n->list2 = suite(P, "class definition", t->line);
  P->fn = outer;
  n->fn->body = n->list2;
  n->fn->doc = docstring(n->list2);
  P->loopdepth = loops;
  P->fdepth = fdepth;
  return n;
}

/* decorated -> '@' test NEWLINE { '@' test NEWLINE } (funcdef | classdef) */
static sh_node *decorated(parser *P) {
  vec decs = {0};
  while (accept(P, T_AT)) {
    vpush(P, &decs, test(P));
    expect(P, T_NEWLINE);
  }
  if (peek(P) == T_DEF) return funcdef(P, vlist(decs));
  if (peek(P) == T_CLASS) return classdef(P, vlist(decs));
  syntax_error(P);
}

/* stmt -> if_stmt | while_stmt | for_stmt | try_stmt | with_stmt | funcdef | classdef
 *       | decorated | simple_stmt */
static sh_node *statement(parser *P, vec *out) {
  sh_node *n;
  switch (peek(P)) {
  case T_IF: n = if_stmt(P); break;
  case T_WHILE: n = while_stmt(P); break;
  case T_FOR: n = for_stmt(P); break;
  case T_TRY: n = try_stmt(P); break;
  case T_WITH: n = with_stmt(P); break;
  case T_DEF: n = funcdef(P, (sh_nodelist){0}); break;
  case T_CLASS: n = classdef(P, (sh_nodelist){0}); break;
  case T_AT: n = decorated(P); break;
  case T_INDENT: error_at(P, cur(P), "unexpected indent");
  case T_ASYNC: case T_AWAIT: error_at(P, cur(P), "'%s' is not supported by tfsh", sh_tok_name(peek(P)));
  default: simple_stmt(P, out); return NULL;
  }
  vpush(P, out, n);
  return n;
}

/* ---- the resolver ------------------------------------------------------------------------ */
/* Decides for every E_NAME whether it is a global, a local slot, a cell or a free variable.
 * Comprehension variables get fresh slots in the enclosing frame, so they neither leak nor
 * need a frame of their own. */
typedef struct scope {
  struct scope *parent;
  sh_funcdef *fn;
  int kind;               /* 0 function, 1 module, 2 class */
  sh_obj *locals;         /* name -> slot (functions), name -> None (class-bound names) */
  sh_obj *globals;        /* names declared global */
  sh_obj *nonlocals;
  sh_obj *comp[64];       /* active comprehension bindings: dicts name -> slot */
  int ncomp;
  vec names;              /* E_NAME nodes resolved SC_LOCAL here (fixed up to SC_CELL) */
  sh_obj *cells;          /* slots captured by inner functions: slot -> None */
  parser *P;
} scope;

static int new_slot(scope *S, sh_obj *name) {
  sh_funcdef *f = S->fn;
  int k = f->nslots++;
  sh_obj **names = arena_alloc(S->P->c, f->nslots * sizeof *names);
  if (k) memcpy(names, f->slotnames, k * sizeof *names);
  names[k] = name;
  f->slotnames = names;
  return k;
}

static void bind_name(scope *S, sh_obj *name) {
  if (S->kind == 1) return;
  if (sh_dict_get(S->globals, name) || sh_dict_get(S->nonlocals, name)) return;
  if (sh_dict_get(S->locals, name)) return;
  sh_obj *v = S->kind == 0 ? sh_int(new_slot(S, name)) : sh_none();
  sh_dict_set(S->locals, name, v);
  sh_decref(v);
}

static void collect_target(scope *S, sh_node *e) {
  if (!e) return;
  if (e->kind == E_NAME) bind_name(S, e->val);
  else if (e->kind == E_TUPLE || e->kind == E_LIST)
    for (int i = 0; i < e->list.n; i++) collect_target(S, e->list.v[i]);
  else if (e->kind == E_STARRED) collect_target(S, e->a);
}

static void collect_block(scope *S, sh_nodelist b);

/* Names bound by statements (not descending into nested scopes). */
static void collect_stmt(scope *S, sh_node *s) {
  switch (s->kind) {
  case S_ASSIGN:
    for (int i = 0; i < s->list.n; i++) collect_target(S, s->list.v[i]);
    break;
  case S_AUGASSIGN: case S_ANNASSIGN: collect_target(S, s->a); break;
  case S_FOR:
    collect_target(S, s->a);
    collect_block(S, s->list); collect_block(S, s->list2);
    break;
  case S_IF: case S_WHILE:
    collect_block(S, s->list); collect_block(S, s->list2);
    break;
  case S_TRY:
    collect_block(S, s->list); collect_block(S, s->list3); collect_block(S, s->list4);
    for (int i = 0; i < s->list2.n; i++) {
      sh_node *h = s->list2.v[i];
      collect_target(S, h->b);
      collect_block(S, h->list);
    }
    break;
  case S_WITH:
    for (int i = 0; i < s->list.n; i++) collect_target(S, s->list.v[i]->b);
    collect_block(S, s->list2);
    break;
  case S_DEF: case S_CLASS: collect_target(S, s->a); break;
  case S_DEL:
    for (int i = 0; i < s->list.n; i++) collect_target(S, s->list.v[i]);
    break;
  case S_IMPORT: case S_FROMIMPORT:
    for (int i = 0; i < s->list.n; i++) collect_target(S, s->list.v[i]->a);
    break;
  case S_GLOBAL:
    for (int i = 0; i < s->nnames; i++) sh_dict_set(S->globals, s->names[i], SH_NONE);
    break;
  case S_NONLOCAL:
    for (int i = 0; i < s->nnames; i++) sh_dict_set(S->nonlocals, s->names[i], SH_NONE);
    break;
  }
}

static void collect_block(scope *S, sh_nodelist b) {
  for (int i = 0; i < b.n; i++) collect_stmt(S, b.v[i]);
}

/* Global declarations come first so that later bindings know them. */
static void collect_globals(scope *S, sh_nodelist b) {
  for (int i = 0; i < b.n; i++) {
    sh_node *s = b.v[i];
    if (s->kind == S_GLOBAL || s->kind == S_NONLOCAL) collect_stmt(S, s);
    else if (s->kind == S_IF || s->kind == S_WHILE || s->kind == S_FOR) {
      collect_globals(S, s->list); collect_globals(S, s->list2);
    } else if (s->kind == S_TRY) {
      collect_globals(S, s->list); collect_globals(S, s->list3); collect_globals(S, s->list4);
      for (int k = 0; k < s->list2.n; k++) collect_globals(S, s->list2.v[k]->list);
    } else if (s->kind == S_WITH) collect_globals(S, s->list2);
  }
}

/* Slot of name in S's own bindings (comprehensions first), or -1. */
static int own_slot(scope *S, sh_obj *name) {
  for (int i = S->ncomp - 1; i >= 0; i--) {
    sh_obj *v = sh_dict_get(S->comp[i], name);
    if (v) return (int)sh_int_value(v);
  }
  if (S->kind != 0 || sh_dict_get(S->globals, name) || sh_dict_get(S->nonlocals, name)) return -1;
  sh_obj *v = sh_dict_get(S->locals, name);
  return v ? (int)sh_int_value(v) : -1;
}

static int add_free(scope *S, sh_obj *name, scope *owner, int owner_slot) {
  sh_funcdef *f = S->fn;
  for (int i = 0; i < f->nfree; i++)
    if (f->freenames[i] == name) return i;
  /* through every scope between, class bodies too: a method's closure is made in the
   * class body's frame, so the class body passes the variable on */
  scope *parent = S->parent;
  struct sh_freevar fv;
  if (parent == owner) fv = (struct sh_freevar){true, owner_slot};
  else fv = (struct sh_freevar){false, add_free(parent, name, owner, owner_slot)};
  int k = f->nfree++;
  sh_obj **names = arena_alloc(S->P->c, f->nfree * sizeof *names);
  struct sh_freevar *fvs = arena_alloc(S->P->c, f->nfree * sizeof *fvs);
  if (k) { memcpy(names, f->freenames, k * sizeof *names); memcpy(fvs, f->freevars, k * sizeof *fvs); }
  names[k] = name;
  fvs[k] = fv;
  f->freenames = names;
  f->freevars = fvs;
  return k;
}

static void mark_cell(scope *S, int slot) {
  sh_obj *k = sh_int(slot);
  sh_dict_set(S->cells, k, SH_NONE);
  sh_decref(k);
}

static void resolve_name(scope *S, sh_node *e) {
  sh_obj *name = e->val;
  int slot = own_slot(S, name);
  if (slot >= 0) {
    e->scope = SC_LOCAL;
    e->slot = slot;
    vpush(S->P, &S->names, e);
    return;
  }
  if (sh_dict_get(S->globals, name) || S->kind == 1) { e->scope = SC_GLOBAL; return; }
  if (S->kind == 2 && sh_dict_get(S->locals, name)) { e->scope = SC_CLASS; return; }
  /* a variable of an enclosing function? */
  for (scope *E = S->parent; E; E = E->parent) {
    if (E->kind == 2) continue;
    int s = own_slot(E, name);
    if (s >= 0) {
      mark_cell(E, s);
      e->scope = SC_FREE;
      e->slot = add_free(S, name, E, s);
      return;
    }
    if (E->kind == 1) break;
  }
  e->scope = S->kind == 2 ? SC_CLASS : SC_GLOBAL;
}

static void resolve_expr(scope *S, sh_node *e);
static void resolve_block(scope *S, sh_nodelist b);
static void resolve_scope(parser *P, scope *parent, sh_funcdef *f, int kind);

static void resolve_list(scope *S, sh_nodelist l) {
  for (int i = 0; i < l.n; i++) if (l.v[i]) resolve_expr(S, l.v[i]);
}

static void comp_targets(scope *S, sh_obj *d, sh_node *t) {
  if (t->kind == E_NAME) {
    if (!sh_dict_get(d, t->val)) {
      sh_obj *v = sh_int(new_slot(S, t->val));
      sh_dict_set(d, t->val, v);
      sh_decref(v);
    }
  } else if (t->kind == E_TUPLE || t->kind == E_LIST) {
    for (int i = 0; i < t->list.n; i++) comp_targets(S, d, t->list.v[i]);
  } else if (t->kind == E_STARRED) comp_targets(S, d, t->a);
}

static void resolve_comprehension(scope *S, sh_node *e) {
  int pushed = 0;
  for (int i = 0; i < e->list.n; i++) {
    sh_node *c = e->list.v[i];
    resolve_expr(S, c->b);                     /* iterable: outside this clause's names */
    if (S->ncomp == 64) error_at(S->P, &(sh_token){.line = e->line, .col = e->col}, "comprehension nested too deeply");
    sh_obj *d = sh_dict_new();
    comp_targets(S, d, c->a);
    S->comp[S->ncomp++] = d;
    pushed++;
    resolve_expr(S, c->a);
    resolve_list(S, c->list);
  }
  resolve_expr(S, e->a);
  if (e->b) resolve_expr(S, e->b);
  while (pushed--) sh_decref(S->comp[--S->ncomp]);
}

static void resolve_expr(scope *S, sh_node *e) {
  if (!e) return;
  switch (e->kind) {
  case E_CONST: return;
  case E_NAME: resolve_name(S, e); return;
  case E_LAMBDA:
    resolve_list(S, e->fn->defaults);
    for (int i = 0; i < e->fn->nkwonly; i++) resolve_expr(S, e->fn->kwdefaults[i]);
    resolve_scope(S->P, S, e->fn, 0);
    return;
  case E_LISTCOMP: case E_SETCOMP: case E_GENEXP: case E_DICTCOMP:
    resolve_comprehension(S, e);
    return;
  case E_COMPARE:
    resolve_expr(S, e->a);
    resolve_list(S, e->list);
    return;
  default:
    resolve_expr(S, e->a);
    resolve_expr(S, e->b);
    resolve_expr(S, e->c);
    resolve_list(S, e->list);
    resolve_list(S, e->list2);
  }
}

static void resolve_stmt(scope *S, sh_node *s) {
  switch (s->kind) {
  case S_DEF:
    resolve_expr(S, s->a);
    resolve_list(S, s->list);
    resolve_list(S, s->fn->defaults);
    for (int i = 0; i < s->fn->nkwonly; i++) resolve_expr(S, s->fn->kwdefaults[i]);
    resolve_scope(S->P, S, s->fn, 0);
    return;
  case S_CLASS:
    resolve_expr(S, s->a);
    resolve_list(S, s->list);
    resolve_list(S, s->list3);
    resolve_scope(S->P, S, s->fn, 2);
    return;
  case S_IMPORT: case S_FROMIMPORT:
    for (int i = 0; i < s->list.n; i++) resolve_expr(S, s->list.v[i]->a);
    return;
  case S_GLOBAL: case S_NONLOCAL:
    return;
  case S_HANDLER:
    resolve_expr(S, s->a);
    resolve_expr(S, s->b);
    resolve_block(S, s->list);
    return;
  case S_WITHITEM:
    resolve_expr(S, s->a);
    resolve_expr(S, s->b);
    return;
  default:
    resolve_expr(S, s->a);
    resolve_expr(S, s->b);
    resolve_expr(S, s->c);
    if (s->kind == S_ASSIGN || s->kind == S_DEL) resolve_list(S, s->list);
    else resolve_block(S, s->list);
    resolve_block(S, s->list2);
    resolve_block(S, s->list3);
    resolve_block(S, s->list4);
  }
}

static void resolve_block(scope *S, sh_nodelist b) {
  for (int i = 0; i < b.n; i++) if (b.v[i]) resolve_stmt(S, b.v[i]);
}

static void resolve_scope(parser *P, scope *parent, sh_funcdef *f, int kind) {
  scope S = {.parent = parent, .fn = f, .kind = kind, .P = P};
  S.locals = sh_dict_new();
  S.globals = sh_dict_new();
  S.nonlocals = sh_dict_new();
  S.cells = sh_dict_new();
  f->parent = parent ? parent->fn : NULL;
  int total = f->nparams + f->nkwonly + (f->vararg >= 0) + (f->kwarg >= 0);
  for (int i = 0; i < total; i++) {   /* parameters take slots 0..total-1 in order */
    sh_obj *v = sh_int(new_slot(&S, f->params[i]));
    sh_dict_set(S.locals, f->params[i], v);
    sh_decref(v);
  }
  collect_globals(&S, f->body);
  collect_block(&S, f->body);
  resolve_block(&S, f->body);
  f->is_cell = arena_alloc(P->c, (f->nslots + 1) * sizeof(bool));
  sh_obj *k;
  for (int64_t i = 0; sh_dict_next(S.cells, &i, &k, NULL);) f->is_cell[sh_int_value(k)] = true;
  for (int i = 0; i < S.names.n; i++) {
    sh_node *e = S.names.v[i];
    if (f->is_cell[e->slot]) e->scope = SC_CELL;
  }
  sh_decref(S.locals);
  sh_decref(S.globals);
  sh_decref(S.nonlocals);
  sh_decref(S.cells);
}

/* ---- entry points ------------------------------------------------------------------------ */
static sh_chunk *chunk_new(const char *src, const char *file) {
  sh_chunk *c = sh_new(&chunk_type);
  c->file = xstrdup(file);
  c->src = xstrdup(src);
  return c;
}

/* At the prompt, expression statements echo their value, also inside loops and ifs (as
 * python's 'single' mode does), but not inside def and class bodies. */
static void mark_echo(sh_nodelist b) {
  for (int i = 0; i < b.n; i++) {
    sh_node *s = b.v[i];
    if (s->kind == S_EXPR) s->op = 1;
    else if (s->kind == S_HANDLER) mark_echo(s->list);
    else if (s->kind != S_DEF && s->kind != S_CLASS) {
      mark_echo(s->list); mark_echo(s->list2); mark_echo(s->list3); mark_echo(s->list4);
    }
  }
}

/* file_input -> { NEWLINE | stmt } EOF */
sh_chunk *sh_parse(const char *src, const char *file, bool interactive, sh_syntax_error *err) {
  sh_chunk *volatile c = chunk_new(src, file);
  sh_tokens toks = {0};
  *err = (sh_syntax_error){0};
  if (sh_lex(c->src, &toks, err, 0, 0) < 0) {
    sh_tokens_free(&toks);
    SH_DECREF(c);
    return NULL;
  }
  parser P = {.t = toks.v, .c = c, .err = err, .interactive = interactive};
  sh_obj *modname = sh_intern("<module>");
  c->module = funcdef_new(&P, modname, 1);
  sh_decref(modname);
  c->module->is_module = true;
  if (setjmp(P.jb)) {
    sh_tokens_free(&toks);
    SH_DECREF(c);
    return NULL;
  }
  vec body = {0};
  while (peek(&P) != T_EOF) {
    if (accept(&P, T_NEWLINE)) continue;
    if (peek(&P) == T_DEDENT) { advance(&P); continue; }
    statement(&P, &body);
  }
  if (interactive) mark_echo(vlist(body));
  c->module->body = vlist(body);
  c->module->doc = docstring(c->module->body);
  resolve_scope(&P, NULL, c->module, 1);
  c->module->parent = NULL;
  sh_tokens_free(&toks);
  return c;
}

sh_chunk *sh_parse_expr(const char *src, const char *file, sh_syntax_error *err, sh_node **out) {
  sh_chunk *volatile c = chunk_new(src, file);
  sh_tokens toks = {0};
  *err = (sh_syntax_error){0};
  if (sh_lex(c->src, &toks, err, 0, 0) < 0) {
    sh_tokens_free(&toks);
    SH_DECREF(c);
    return NULL;
  }
  parser P = {.t = toks.v, .c = c, .err = err};
  sh_obj *modname = sh_intern("<module>");
  c->module = funcdef_new(&P, modname, 1);
  sh_decref(modname);
  c->module->is_module = true;
  if (setjmp(P.jb)) {
    sh_tokens_free(&toks);
    SH_DECREF(c);
    return NULL;
  }
  while (accept(&P, T_NEWLINE)) {}
  sh_node *e = testlist_star(&P);
  while (accept(&P, T_NEWLINE)) {}
  if (peek(&P) != T_EOF) syntax_error(&P);
  sh_node *ret = node(&P, S_EXPR, P.t);
  ret->a = e;
  c->module->body.v = arena_alloc(c, sizeof(sh_node *));
  c->module->body.v[0] = ret;
  c->module->body.n = 1;
  resolve_scope(&P, NULL, c->module, 1);
  c->module->parent = NULL;
  sh_tokens_free(&toks);
  *out = e;
  return c;
}
