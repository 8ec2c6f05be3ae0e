/* The re module's engine: Python's regular-expression syntax compiled to a small program
 * and run by a backtracking matcher with an explicit stack (no C recursion but one level
 * per lookahead), on UTF-8 with code-point semantics. The Python-facing API (Pattern,
 * Match, sub, split, ...) is re.py.inc over two primitives:
 *   _compile(pattern, flags) -> program (.groups, .groupindex); re.error on bad syntax
 *   _exec(program, string, pos, endpos, mode, forbid) -> None or [start0, end0, start1, ...]
 *     in code points (-1 for groups that did not take part); mode 0 search, 1 match at pos,
 *     2 fullmatch; a match that is empty at `forbid` is refused (the iteration rule of
 *     CPython 3.7+).
 * A step budget bounds catastrophic backtracking: past it the call raises re.error instead
 * of hanging. */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "shell/lang/interp.h"

enum { F_I = 2, F_L = 4, F_M = 8, F_S = 16, F_U = 32, F_X = 64, F_A = 256 };

enum { O_CHAR, O_ANY, O_CLASS, O_SPLIT, O_JMP, O_SAVE, O_MARK, O_CHK, O_BOL, O_EOL, O_SBEG, O_SEND, O_WB, O_NWB,
       O_BREF, O_LOOK, O_LOOKB, O_MATCH };

typedef struct inst {
  uint8_t op;
  bool flag;      /* CHAR/BREF: ignore case; ANY: dot matches newline; BOL/EOL: multiline; LOOK: negative */
  int32_t x, y;
} inst;

typedef struct cls {
  uint64_t ascii[2];
  uint32_t (*r)[2];        /* ranges of code points >= 128 */
  int nr;
  bool neg, uword, uspace; /* non-ASCII letters (\w) / spaces (\s) match */
} cls;

typedef struct prog {
  sh_obj head;
  inst *code;
  int n, cap;
  cls *cls;
  int ncls;
  int ngroups, nloops;
  int first;               /* the byte every match starts with, or -1 (a search skips to it) */
  sh_obj *groupindex;      /* dict name -> number */
} prog;

/* ---- the parser ---------------------------------------------------------------------- */

enum { N_EMPTY, N_CHAR, N_ANY, N_CLASS, N_CAT, N_ALT, N_REP, N_GROUP, N_ASSERT, N_BREF, N_LOOK };

typedef struct node {
  int kind;
  int32_t v;               /* CHAR: cp; CLASS: index; GROUP: number (-1: none); ASSERT: op; BREF: group */
  int min, max;            /* REP: max -1 unbounded */
  bool greedy, neg;
  struct node **kid;
  int nkid;
} node;

typedef struct parser {
  const char *s;
  size_t n, i;
  int flags;
  prog *p;
  char err[200];
  size_t errpos;
  node **all;              /* every node, freed together */
  int nall, capall;
  int depth;
} parser;

static node *mk(parser *ps, int kind) {
  node *d = xcalloc(1, sizeof *d);
  d->kind = kind;
  if (ps->nall == ps->capall) ps->all = xrealloc(ps->all, (size_t)(ps->capall = ps->capall ? 2 * ps->capall : 32) * sizeof *ps->all);
  ps->all[ps->nall++] = d;
  return d;
}

static void add_kid(node *d, node *k) {
  d->kid = xrealloc(d->kid, (size_t)(d->nkid + 1) * sizeof *d->kid);
  d->kid[d->nkid++] = k;
}

static bool fail(parser *ps, size_t pos, const char *msg) {
  if (!ps->err[0]) {
    snprintf(ps->err, sizeof ps->err, "%s", msg);
    ps->errpos = pos;
  }
  return false;
}

/* The code point at byte i (advancing i); malformed bytes are themselves. */
static int32_t utf8_at(const char *s, size_t n, size_t *i) {
  unsigned char c = (unsigned char)s[*i];
  int len = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
  if (*i + (size_t)len > n) len = 1;
  int32_t cp = len == 1 ? c : len == 2 ? c & 31 : len == 3 ? c & 15 : c & 7;
  for (int k = 1; k < len; k++) cp = cp << 6 | ((unsigned char)s[*i + (size_t)k] & 63);
  *i += (size_t)len;
  return cp;
}

/* Character positions in the pattern for messages (CPython counts characters). */
static size_t char_pos(const char *s, size_t byte) {
  size_t k = 0;
  for (size_t i = 0; i < byte; i++) k += ((unsigned char)s[i] & 0xC0) != 0x80;
  return k;
}

static bool is_word_ascii(int32_t c) { return c < 128 && (isalnum(c) || c == '_'); }
static bool is_uspace(int32_t c) {
  return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
         c == 0x202F || c == 0x205F || c == 0x3000;
}
static bool is_word(int32_t c, bool ascii) {
  if (c < 128) return is_word_ascii(c);
  return !ascii && !is_uspace(c) && !(c >= 0x2000 && c <= 0x206F) && !(c >= 0x3000 && c <= 0x303F) && c != 0xA0 &&
         !(c >= 0x80 && c <= 0xBF);
}

static void cls_set(cls *c, int32_t a, int32_t b) {
  for (int32_t x = a; x <= b && x < 128; x++) c->ascii[x >> 6] |= 1ULL << (x & 63);
  if (b >= 128) {
    if (a < 128) a = 128;
    c->r = xrealloc(c->r, (size_t)(c->nr + 1) * sizeof *c->r);
    c->r[c->nr][0] = (uint32_t)a, c->r[c->nr][1] = (uint32_t)b;
    c->nr++;
  }
}

/* \d \w \s (and negations) into a class; neg: the complement within ASCII plus the rest. */
static void cls_escape(cls *c, char e, bool ascii) {
  cls t = {0};
  if (e == 'd' || e == 'D') cls_set(&t, '0', '9');
  if (e == 'w' || e == 'W') {
    cls_set(&t, '0', '9'), cls_set(&t, 'A', 'Z'), cls_set(&t, 'a', 'z'), cls_set(&t, '_', '_');
    t.uword = !ascii;
  }
  if (e == 's' || e == 'S') {
    cls_set(&t, ' ', ' '), cls_set(&t, '\t', '\r');
    cls_set(&t, 0x1C, 0x1F);
    t.uspace = !ascii;
  }
  if (islower((unsigned char)e)) {
    c->ascii[0] |= t.ascii[0], c->ascii[1] |= t.ascii[1];
    c->uword |= t.uword, c->uspace |= t.uspace;
  } else {   /* negated: ASCII complement, and every code point >= 128 not in the positive set */
    c->ascii[0] |= ~t.ascii[0], c->ascii[1] |= ~t.ascii[1];
    if (e == 'D') cls_set(c, 128, 0x10FFFF);
    else if (e == 'W') {
      if (ascii) cls_set(c, 128, 0x10FFFF);
      else c->uspace = true;   /* approximately: the non-word code points */
    } else if (e == 'S') {
      cls_set(c, 128, 0x9F), cls_set(c, 0xA1, 0x167F), cls_set(c, 0x1681, 0x1FFF), cls_set(c, 0x200B, 0x2027);
      cls_set(c, 0x202A, 0x202E), cls_set(c, 0x2030, 0x205E), cls_set(c, 0x2060, 0x2FFF), cls_set(c, 0x3001, 0x10FFFF);
    }
  }
  free(t.r);
}

static bool cls_match(const cls *c, int32_t cp, bool icase) {
  bool in;
  if (cp < 128) {
    in = c->ascii[cp >> 6] >> (cp & 63) & 1;
    if (!in && icase && isalpha(cp)) {
      int32_t o = islower(cp) ? toupper(cp) : tolower(cp);
      in = c->ascii[o >> 6] >> (o & 63) & 1;
    }
  } else {
    in = (c->uword && is_word(cp, false)) || (c->uspace && is_uspace(cp));
    for (int i = 0; i < c->nr && !in; i++) in = (uint32_t)cp >= c->r[i][0] && (uint32_t)cp <= c->r[i][1];
  }
  return in != c->neg;
}

static int new_cls(parser *ps) {
  prog *p = ps->p;
  p->cls = xrealloc(p->cls, (size_t)(p->ncls + 1) * sizeof *p->cls);
  memset(&p->cls[p->ncls], 0, sizeof *p->cls);
  return p->ncls++;
}

static bool at_end(parser *ps) { return ps->i >= ps->n; }
static char peekc(parser *ps) { return at_end(ps) ? 0 : ps->s[ps->i]; }

static void skip_verbose(parser *ps) {
  if (!(ps->flags & F_X)) return;
  for (;;) {
    while (!at_end(ps) && isspace((unsigned char)peekc(ps))) ps->i++;
    if (peekc(ps) != '#') return;
    while (!at_end(ps) && peekc(ps) != '\n') ps->i++;
  }
}

static int hexval(char c) { return isdigit((unsigned char)c) ? c - '0' : isxdigit((unsigned char)c) ? (tolower(c) - 'a' + 10) : -1; }

/* An escape's code point (\n, \x41, \u00e9, \., ...) or -1 when it is a class/assertion
 * escape the caller handles; -2 after an error. */
static int32_t escape_cp(parser *ps, size_t at, bool in_class) {
  char e = peekc(ps);
  ps->i++;
  switch (e) {
  case 'n': return '\n';
  case 't': return '\t';
  case 'r': return '\r';
  case 'f': return '\f';
  case 'v': return '\v';
  case 'a': return '\a';
  case 'b': if (in_class) return '\b'; return -1;
  case '0': {
    int v = 0;
    for (int k = 0; k < 2 && peekc(ps) >= '0' && peekc(ps) <= '7'; k++) v = v * 8 + (ps->s[ps->i++] - '0');
    return v;
  }
  case 'x': case 'u': case 'U': {
    int len = e == 'x' ? 2 : e == 'u' ? 4 : 8;
    int32_t v = 0;
    for (int k = 0; k < len; k++) {
      int h = at_end(ps) ? -1 : hexval(ps->s[ps->i]);
      if (h < 0) {
        char m[64];
        snprintf(m, sizeof m, "incomplete escape \\%c%.*s", e, (int)(ps->i - at - 2), ps->s + at + 2);
        fail(ps, at, m);
        return -2;
      }
      v = v * 16 + h;
      ps->i++;
    }
    return v;
  }
  default:
    if (isalnum((unsigned char)e)) {
      if (strchr("dDwWsS", e) || (!in_class && strchr("bBAZ", e)) || (!in_class && isdigit((unsigned char)e))) return -1;
      char m[64];
      snprintf(m, sizeof m, "bad escape \\%c", e);
      fail(ps, at, m);
      return -2;
    }
    {
      size_t j = ps->i - 1;
      return utf8_at(ps->s, ps->n, &j);
    }
  }
}

static node *parse_alt(parser *ps);

static node *parse_class(parser *ps) {
  size_t start = ps->i - 1;
  int ci = new_cls(ps);
  cls *c = &ps->p->cls[ci];
  bool ascii = ps->flags & F_A;
  if (peekc(ps) == '^') ps->p->cls[ci].neg = true, ps->i++;
  bool first = true;
  for (;;) {
    if (at_end(ps)) return fail(ps, start, "unterminated character set"), NULL;
    if (peekc(ps) == ']' && !first) {
      ps->i++;
      break;
    }
    first = false;
    int32_t lo;
    size_t at = ps->i;
    if (peekc(ps) == '\\') {
      ps->i++;
      if (at_end(ps)) return fail(ps, at, "bad escape (end of pattern)"), NULL;
      char e = peekc(ps);
      lo = escape_cp(ps, at, true);
      c = &ps->p->cls[ci];
      if (lo == -2) return NULL;
      if (lo == -1) {
        cls_escape(c, e, ascii);
        continue;
      }
    } else {
      lo = utf8_at(ps->s, ps->n, &ps->i);
    }
    int32_t hi = lo;
    if (peekc(ps) == '-' && ps->i + 1 < ps->n && ps->s[ps->i + 1] != ']') {
      size_t dash = ps->i;
      ps->i++;
      size_t at2 = ps->i;
      if (peekc(ps) == '\\') {
        ps->i++;
        if (at_end(ps)) return fail(ps, at2, "bad escape (end of pattern)"), NULL;
        char e = peekc(ps);
        hi = escape_cp(ps, at2, true);
        if (hi == -2) return NULL;
        if (hi == -1) {
          char m[64];
          snprintf(m, sizeof m, "bad character range %.*s\\%c", (int)(dash - at), ps->s + at, e);
          return fail(ps, at, m), NULL;
        }
      } else {
        hi = utf8_at(ps->s, ps->n, &ps->i);
      }
      if (hi < lo) {
        char m[96];
        snprintf(m, sizeof m, "bad character range %.*s", (int)(ps->i - at), ps->s + at);
        return fail(ps, at, m), NULL;
      }
    }
    cls_set(&ps->p->cls[ci], lo, hi);
    if (ps->flags & F_I)
      for (int32_t x = lo; x <= hi && x < 128; x++)
        if (isalpha(x)) cls_set(&ps->p->cls[ci], islower(x) ? toupper(x) : tolower(x), islower(x) ? toupper(x) : tolower(x));
  }
  node *d = mk(ps, N_CLASS);
  d->v = ci;
  return d;
}

static bool parse_int(parser *ps, int *out) {
  if (!isdigit((unsigned char)peekc(ps))) return false;
  long v = 0;
  while (isdigit((unsigned char)peekc(ps))) {
    v = v * 10 + (ps->s[ps->i++] - '0');
    if (v > 100000) v = 100000;
  }
  *out = (int)v;
  return true;
}

static node *parse_atom(parser *ps) {
  size_t at = ps->i;
  char c = peekc(ps);
  if (c == '(') {
    ps->i++;
    int group = -1;
    node *look = NULL;
    if (peekc(ps) == '?') {
      ps->i++;
      char k = peekc(ps);
      if (k == ':') {
        ps->i++;
      } else if (k == '=' || k == '!') {
        ps->i++;
        look = mk(ps, N_LOOK);
        look->neg = k == '!';
      } else if (k == '<' && ps->i + 1 < ps->n && (ps->s[ps->i + 1] == '=' || ps->s[ps->i + 1] == '!')) {
        look = mk(ps, N_LOOK);
        look->neg = ps->s[ps->i + 1] == '!';
        look->v = 1;   /* behind */
        ps->i += 2;
      } else if (k == 'P' && ps->i + 1 < ps->n && ps->s[ps->i + 1] == '<') {
        ps->i += 2;
        size_t b = ps->i;
        while (!at_end(ps) && peekc(ps) != '>') ps->i++;
        if (at_end(ps)) return fail(ps, b, "missing >, unterminated name"), NULL;
        if (ps->i == b) return fail(ps, b, "missing group name"), NULL;
        for (size_t j = b; j < ps->i; j++)
          if (!(isalnum((unsigned char)ps->s[j]) || ps->s[j] == '_' || (unsigned char)ps->s[j] >= 0x80) ||
              (j == b && isdigit((unsigned char)ps->s[j]))) {
            char m[160];
            snprintf(m, sizeof m, "bad character in group name '%.*s'", (int)(ps->i - b), ps->s + b);
            return fail(ps, b, m), NULL;
          }
        group = ++ps->p->ngroups;
        sh_obj *gi = sh_int(group);
        char *name = xstrndup(ps->s + b, ps->i - b);
        sh_obj *old = sh_dict_get_str(ps->p->groupindex, name);
        if (old) {
          char m[160];
          snprintf(m, sizeof m, "redefinition of group name '%s' as group %d; was group %lld", name, group,
                   (long long)sh_int_value(old));
          free(name);
          sh_decref(gi);
          return fail(ps, b, m), NULL;
        }
        sh_dict_set_str(ps->p->groupindex, name, gi);
        free(name);
        sh_decref(gi);
        ps->i++;
      } else if (k == 'P' && ps->i + 1 < ps->n && ps->s[ps->i + 1] == '=') {
        ps->i += 2;
        size_t b = ps->i;
        while (!at_end(ps) && peekc(ps) != ')') ps->i++;
        if (at_end(ps)) return fail(ps, b, "missing ), unterminated name"), NULL;
        char *name = xstrndup(ps->s + b, ps->i - b);
        sh_obj *g = sh_dict_get_str(ps->p->groupindex, name);
        if (!g) {
          char m[160];
          snprintf(m, sizeof m, "unknown group name '%s'", name);
          free(name);
          return fail(ps, b, m), NULL;
        }
        free(name);
        ps->i++;
        node *d = mk(ps, N_BREF);
        d->v = (int32_t)sh_int_value(g);
        return d;
      } else if (k == '#') {
        while (!at_end(ps) && peekc(ps) != ')') ps->i++;
        if (at_end(ps)) return fail(ps, at, "missing ), unterminated comment"), NULL;
        ps->i++;
        return mk(ps, N_EMPTY);
      } else if (strchr("aiLmsux", k) && k) {
        while (!at_end(ps) && strchr("aiLmsux", peekc(ps))) {
          char f = ps->s[ps->i++];
          ps->flags |= f == 'i' ? F_I : f == 'm' ? F_M : f == 's' ? F_S : f == 'x' ? F_X : f == 'a' ? F_A : 0;
        }
        if (peekc(ps) != ')') return fail(ps, at, "missing -, : or )"), NULL;
        if (at != 0) return fail(ps, at, "global flags not at the start of the expression"), NULL;
        ps->i++;
        return mk(ps, N_EMPTY);
      } else {
        char m[64];
        snprintf(m, sizeof m, "unknown extension ?%c", k ? k : ' ');
        return fail(ps, at + 1, m), NULL;
      }
    } else {
      group = ++ps->p->ngroups;
    }
    if (++ps->depth > 200) return fail(ps, at, "too many nested groups"), NULL;
    node *inner = parse_alt(ps);
    ps->depth--;
    if (!inner) return NULL;
    if (peekc(ps) != ')') return fail(ps, at, "missing ), unterminated subpattern"), NULL;
    ps->i++;
    if (look) {
      add_kid(look, inner);
      return look;
    }
    node *g = mk(ps, N_GROUP);
    g->v = group;
    add_kid(g, inner);
    return g;
  }
  if (c == '[') {
    ps->i++;
    return parse_class(ps);
  }
  if (c == '.') {
    ps->i++;
    return mk(ps, N_ANY);
  }
  if (c == '^' || c == '$') {
    ps->i++;
    node *d = mk(ps, N_ASSERT);
    d->v = c == '^' ? O_BOL : O_EOL;
    return d;
  }
  if (c == '\\') {
    ps->i++;
    if (at_end(ps)) return fail(ps, at, "bad escape (end of pattern)"), NULL;
    char e = peekc(ps);
    if (isdigit((unsigned char)e) && e != '0') {
      int g = 0;
      while (isdigit((unsigned char)peekc(ps)) && g < 100) g = g * 10 + (ps->s[ps->i++] - '0');
      if (g > ps->p->ngroups) {
        char m[64];
        snprintf(m, sizeof m, "invalid group reference %d", g);
        return fail(ps, at + 1, m), NULL;
      }
      node *d = mk(ps, N_BREF);
      d->v = g;
      return d;
    }
    int32_t cp = escape_cp(ps, at, false);
    if (cp == -2) return NULL;
    if (cp == -1) {
      if (strchr("bBAZ", e)) {
        node *d = mk(ps, N_ASSERT);
        d->v = e == 'b' ? O_WB : e == 'B' ? O_NWB : e == 'A' ? O_SBEG : O_SEND;
        return d;
      }
      int ci = new_cls(ps);
      cls_escape(&ps->p->cls[ci], e, ps->flags & F_A);
      node *d = mk(ps, N_CLASS);
      d->v = ci;
      return d;
    }
    node *d = mk(ps, N_CHAR);
    d->v = cp;
    return d;
  }
  node *d = mk(ps, N_CHAR);
  d->v = utf8_at(ps->s, ps->n, &ps->i);
  return d;
}

static node *parse_cat(parser *ps) {
  node *cat = mk(ps, N_CAT);
  for (;;) {
    skip_verbose(ps);
    if (at_end(ps) || peekc(ps) == '|' || peekc(ps) == ')') return cat;
    size_t at = ps->i;
    char c = peekc(ps);
    if (c == '*' || c == '+' || c == '?') return fail(ps, at, "nothing to repeat"), NULL;
    if (c == '{') {   /* a brace that is a quantifier with nothing before it */
      size_t j = ps->i + 1;
      while (j < ps->n && (isdigit((unsigned char)ps->s[j]) || ps->s[j] == ',')) j++;
      if (j < ps->n && ps->s[j] == '}' && j > ps->i + 1) return fail(ps, at, "nothing to repeat"), NULL;
    }
    node *a = parse_atom(ps);
    if (!a) return NULL;
    for (;;) {
      skip_verbose(ps);
      size_t qat = ps->i;
      c = peekc(ps);
      int mn, mx;
      if (c == '*') mn = 0, mx = -1, ps->i++;
      else if (c == '+') mn = 1, mx = -1, ps->i++;
      else if (c == '?') mn = 0, mx = 1, ps->i++;
      else if (c == '{') {
        size_t save = ps->i;
        ps->i++;
        bool has_min = parse_int(ps, &mn);
        if (!has_min) mn = 0;
        if (peekc(ps) == ',') {
          ps->i++;
          if (!parse_int(ps, &mx)) mx = -1;
        } else if (has_min) {
          mx = mn;
        } else {
          ps->i = save;
          break;
        }
        if (peekc(ps) != '}') {
          ps->i = save;
          break;
        }
        ps->i++;
        if (mx >= 0 && mx < mn) return fail(ps, save + 1, "min repeat greater than max repeat"), NULL;
        if (mn > 65535 || mx > 65535) return fail(ps, save + 1, "the repetition number is too large"), NULL;
      } else {
        break;
      }
      if (a->kind == N_ASSERT || a->kind == N_EMPTY || a->kind == N_LOOK) return fail(ps, qat, "nothing to repeat"), NULL;
      if (a->kind == N_REP) return fail(ps, qat, "multiple repeat"), NULL;
      node *r = mk(ps, N_REP);
      r->min = mn, r->max = mx, r->greedy = true;
      if (peekc(ps) == '?') r->greedy = false, ps->i++;
      add_kid(r, a);
      a = r;
    }
    add_kid(cat, a);
  }
}

static node *parse_alt(parser *ps) {
  node *first = parse_cat(ps);
  if (!first || peekc(ps) != '|') return first;
  node *alt = mk(ps, N_ALT);
  add_kid(alt, first);
  while (peekc(ps) == '|') {
    ps->i++;
    node *k = parse_cat(ps);
    if (!k) return NULL;
    add_kid(alt, k);
  }
  return alt;
}

/* ---- code generation ---------------------------------------------------------------- */

static int emit(prog *p, int op, bool flag, int32_t x, int32_t y) {
  if (p->n == p->cap) p->code = xrealloc(p->code, (size_t)(p->cap = p->cap ? 2 * p->cap : 64) * sizeof *p->code);
  p->code[p->n] = (inst){(uint8_t)op, flag, x, y};
  return p->n++;
}

/* The width in characters every match of d has, or -1 when it varies (look-behinds need one). */
static int fixed_width(const node *d) {
  switch (d->kind) {
  case N_CHAR: case N_ANY: case N_CLASS: return 1;
  case N_EMPTY: case N_ASSERT: case N_LOOK: return 0;
  case N_GROUP: return fixed_width(d->kid[0]);
  case N_REP: {
    int w = fixed_width(d->kid[0]);
    return w < 0 || d->min != d->max ? (w == 0 ? 0 : -1) : w * d->min;
  }
  case N_CAT: case N_ALT: {
    int sum = 0, first = -2;
    for (int i = 0; i < d->nkid; i++) {
      int w = fixed_width(d->kid[i]);
      if (w < 0) return -1;
      if (d->kind == N_CAT) sum += w;
      else if (first == -2) first = w;
      else if (w != first) return -1;
    }
    return d->kind == N_CAT ? sum : first < 0 ? 0 : first;
  }
  default: return -1;
  }
}

static bool gen(parser *ps, const node *d) {
  prog *p = ps->p;
  if (p->n > 200000) return fail(ps, 0, "the pattern is too large");
  bool icase = ps->flags & F_I;
  switch (d->kind) {
  case N_EMPTY: return true;
  case N_CHAR: emit(p, O_CHAR, icase, d->v, 0); return true;
  case N_ANY: emit(p, O_ANY, ps->flags & F_S, 0, 0); return true;
  case N_CLASS: emit(p, O_CLASS, icase, d->v, 0); return true;
  case N_ASSERT: {
    bool ml = ps->flags & F_M;
    emit(p, d->v, ml, 0, 0);
    return true;
  }
  case N_BREF: emit(p, O_BREF, icase, d->v, 0); return true;
  case N_CAT:
    for (int i = 0; i < d->nkid; i++)
      if (!gen(ps, d->kid[i])) return false;
    return true;
  case N_ALT: {
    int *jumps = xmalloc((size_t)d->nkid * sizeof *jumps);
    for (int i = 0; i < d->nkid; i++) {
      int split = i + 1 < d->nkid ? emit(p, O_SPLIT, false, 0, 0) : -1;
      if (split >= 0) p->code[split].x = p->n;
      if (!gen(ps, d->kid[i])) return free(jumps), false;
      jumps[i] = i + 1 < d->nkid ? emit(p, O_JMP, false, 0, 0) : -1;
      if (split >= 0) p->code[split].y = p->n;
    }
    for (int i = 0; i < d->nkid; i++)
      if (jumps[i] >= 0) p->code[jumps[i]].x = p->n;
    free(jumps);
    return true;
  }
  case N_GROUP:
    if (d->v >= 0) emit(p, O_SAVE, false, 2 * d->v, 0);
    if (!gen(ps, d->kid[0])) return false;
    if (d->v >= 0) emit(p, O_SAVE, false, 2 * d->v + 1, 0);
    return true;
  case N_LOOK: {
    int w = d->v ? fixed_width(d->kid[0]) : 0;
    if (w < 0) return fail(ps, SIZE_MAX, "look-behind requires fixed-width pattern");   /* CPython gives no position */
    int look = emit(p, d->v ? O_LOOKB : O_LOOK, d->neg, 0, w);
    if (!gen(ps, d->kid[0])) return false;
    emit(p, O_MATCH, true, d->v, 0);
    p->code[look].x = p->n;
    return true;
  }
  case N_REP: {
    for (int i = 0; i < d->min; i++)
      if (!gen(ps, d->kid[0])) return false;
    if (d->max < 0) {   /* L0: split L1, L3; L1: mark; x; chk; jmp L0; L3: */
      int reg = p->nloops++;
      int split = emit(p, O_SPLIT, false, 0, 0);
      int body = p->n;
      emit(p, O_MARK, false, reg, 0);
      if (!gen(ps, d->kid[0])) return false;
      int chk = emit(p, O_CHK, false, reg, 0);
      emit(p, O_JMP, false, split, 0);
      p->code[chk].y = p->n;
      p->code[split].x = d->greedy ? body : p->n;
      p->code[split].y = d->greedy ? p->n : body;
      return true;
    }
    int extra = d->max - d->min, *splits = xmalloc((size_t)(extra > 0 ? extra : 1) * sizeof *splits);
    for (int i = 0; i < extra; i++) {
      splits[i] = emit(p, O_SPLIT, false, 0, 0);
      p->code[splits[i]].x = p->n;
      if (!gen(ps, d->kid[0])) return free(splits), false;
    }
    for (int i = 0; i < extra; i++) {
      int body = p->code[splits[i]].x;
      p->code[splits[i]].x = d->greedy ? body : p->n;
      p->code[splits[i]].y = d->greedy ? p->n : body;
    }
    free(splits);
    return true;
  }
  }
  return fail(ps, 0, "internal error: unknown node");
}

/* ---- the program object ---------------------------------------------------------------- */

static void prog_destroy(sh_obj *o) {
  prog *p = (prog *)o;
  for (int i = 0; i < p->ncls; i++) free(p->cls[i].r);
  free(p->cls);
  free(p->code);
  sh_decref(p->groupindex);
}

static sh_obj *prog_getattr(sh_obj *o, const char *name) {
  prog *p = (prog *)o;
  if (!strcmp(name, "groups")) return sh_int(p->ngroups);
  if (!strcmp(name, "groupindex")) return sh_incref(p->groupindex);
  return NULL;
}

static sh_type prog_type = {SH_TYPE_HEAD, .name = "_re_program", .size = sizeof(prog),
  .help = "A compiled regular expression (internal to re).", .destroy = prog_destroy, .getattr = prog_getattr};

static sh_type *re_error;   /* re.error: made in re.py.inc, handed to _set_error */

static sh_obj *raise_error(const char *msg, sh_obj *pattern, int64_t pos) {
  if (!re_error) return sh_raise(sh_ValueError, "%s", msg);
  sh_obj *args[3] = {sh_str(msg), sh_incref(pattern), pos >= 0 ? sh_int(pos) : sh_none()};
  sh_obj *e = sh_call((sh_obj *)re_error, 3, args, NULL);
  for (int i = 0; i < 3; i++) sh_decref(args[i]);
  if (!e) return NULL;
  sh_err_restore(e);
  return NULL;
}

static sh_obj *f_compile(ARGS) {
  sh_obj *pat, *fl;
  if (sh_parse_args("_compile", argc, argv, kw, "pattern flags", &pat, &fl) < 0) return NULL;
  if (!sh_is_str(pat)) return sh_raise(sh_TypeError, "re: the pattern must be a str (bytes patterns are not supported in tfsh)");
  int64_t flags;
  if (sh_as_int(fl, &flags) < 0) return NULL;
  prog *p = sh_new(&prog_type);
  p->groupindex = sh_dict_new();
  parser ps = {.s = sh_str_cstr(pat), .n = (size_t)sh_str_len(pat), .flags = (int)flags, .p = p};
  node *root = parse_alt(&ps);
  if (root && !at_end(&ps)) {
    if (peekc(&ps) == ')') fail(&ps, ps.i, "unbalanced parenthesis");
    else fail(&ps, ps.i, "unexpected character");
    root = NULL;
  }
  if (root) {
    emit(p, O_SAVE, false, 0, 0);
    if (gen(&ps, root)) {
      emit(p, O_SAVE, false, 1, 0);
      emit(p, O_MATCH, false, 0, 0);
    }
  }
  p->first = -1;   /* a leading literal (after SAVE 0): searches jump from one of its first byte to the next */
  if (!ps.err[0] && p->n > 1 && p->code[1].op == O_CHAR && !p->code[1].flag) {
    int32_t cp = p->code[1].x;
    p->first = cp < 0x80 ? cp : cp < 0x800 ? 0xC0 | (cp >> 6) : cp < 0x10000 ? 0xE0 | (cp >> 12) : 0xF0 | (cp >> 18);
  }
  for (int i = 0; i < ps.nall; i++) free(ps.all[i]->kid), free(ps.all[i]);
  free(ps.all);
  if (ps.err[0]) {
    sh_decref((sh_obj *)p);
    return raise_error(ps.err, pat, ps.errpos == SIZE_MAX ? -1 : (int64_t)char_pos(ps.s, ps.errpos));
  }
  return (sh_obj *)p;
}

/* ---- the matcher ------------------------------------------------------------------------ */

typedef struct frame {
  int32_t pc;        /* a choice point's pc, or -1 for an undo record */
  int32_t slot;      /* undo: caps index (>= 0) or -1 - loop register */
  int64_t v;         /* choice: the byte position; undo: the old value */
} frame;

typedef struct matcher {
  const prog *p;
  const char *s;
  int64_t n, end;    /* string length, and where matching stops (endpos) */
  int64_t *caps, *regs;
  int64_t forbid;    /* byte position at which an empty match is refused; -1 none */
  int64_t start;
  bool fullmatch;
  int64_t steps;
  int64_t lb_target;  /* where the look-behind being tried must end */
  frame *st;
  int64_t nst, capst;
  bool budget_out;
} matcher;

static void push(matcher *m, int32_t pc, int32_t slot, int64_t v) {
  if (m->nst == m->capst) m->st = xrealloc(m->st, (size_t)(m->capst = m->capst ? 2 * m->capst : 256) * sizeof *m->st);
  m->st[m->nst++] = (frame){pc, slot, v};
}

static int32_t cp_at(const matcher *m, int64_t sp, int64_t *next) {
  size_t i = (size_t)sp;
  int32_t cp = utf8_at(m->s, (size_t)m->end, &i);
  *next = (int64_t)i;
  return cp;
}

static int32_t cp_before(const matcher *m, int64_t sp) {
  int64_t b = sp - 1;
  while (b > 0 && ((unsigned char)m->s[b] & 0xC0) == 0x80) b--;
  size_t i = (size_t)b;
  return utf8_at(m->s, (size_t)m->n, &i);
}

static int64_t chars_between(const char *s, int64_t a, int64_t b);

/* Whether [from, to) holds exactly k characters (false near the start of the string). */
static bool chars_back_ok(const char *s, int64_t from, int64_t to, int32_t k) { return chars_between(s, from, to) == k; }

static int32_t fold(int32_t c) { return c < 128 ? tolower(c) : c; }

enum { BUDGET = 100000000 };

/* Run from pc at sp; true on a match (caps filled). Lookaheads recurse once per level. */
static bool run(matcher *m, int32_t pc, int64_t sp, bool sub) {
  int64_t base = m->nst;
  for (;;) {
    if (++m->steps > BUDGET) {
      m->budget_out = true;
      m->nst = base;
      return false;
    }
    const inst *in = &m->p->code[pc];
    bool ok = true;
    int64_t nx;
    switch (in->op) {
    case O_CHAR:
      if (sp >= m->end) ok = false;
      else {
        int32_t c = cp_at(m, sp, &nx);
        ok = c == in->x || (in->flag && fold(c) == fold(in->x));
        if (ok) sp = nx, pc++;
      }
      break;
    case O_ANY:
      if (sp >= m->end || (!in->flag && m->s[sp] == '\n')) ok = false;
      else cp_at(m, sp, &nx), sp = nx, pc++;
      break;
    case O_CLASS:
      if (sp >= m->end) ok = false;
      else {
        int32_t c = cp_at(m, sp, &nx);
        ok = cls_match(&m->p->cls[in->x], c, in->flag);
        if (ok) sp = nx, pc++;
      }
      break;
    case O_SPLIT: push(m, in->y, 0, sp); pc = in->x; break;
    case O_JMP: pc = in->x; break;
    case O_SAVE: push(m, -1, in->x, m->caps[in->x]); m->caps[in->x] = sp; pc++; break;
    case O_MARK: push(m, -1, -1 - in->x, m->regs[in->x]); m->regs[in->x] = sp; pc++; break;
    case O_CHK: pc = m->regs[in->x] != sp ? pc + 1 : in->y; break;   /* an empty pass ends the loop, as CPython */
    case O_BOL: ok = sp == 0 || (in->flag && m->s[sp - 1] == '\n'); pc++; break;
    case O_EOL:
      ok = sp == m->end || (m->s[sp] == '\n' && (in->flag || sp + 1 == m->end));
      pc++;
      break;
    case O_SBEG: ok = sp == 0; pc++; break;
    case O_SEND: ok = sp == m->end; pc++; break;
    case O_WB: case O_NWB: {
      bool a = sp > 0 && is_word(cp_before(m, sp), false), b = sp < m->end && is_word(cp_at(m, sp, &nx), false);
      ok = (a != b) == (in->op == O_WB);
      pc++;
      break;
    }
    case O_BREF: {
      int64_t a = m->caps[2 * in->x], b = m->caps[2 * in->x + 1];
      if (a < 0 || b < 0) ok = false;
      else {
        int64_t len = b - a;
        ok = sp + len <= m->end;
        for (int64_t k = 0; ok && k < len; k++)
          ok = m->s[a + k] == m->s[sp + k] || (in->flag && tolower((unsigned char)m->s[a + k]) == tolower((unsigned char)m->s[sp + k]));
        if (ok) sp += len;
      }
      pc++;
      break;
    }
    case O_LOOK: case O_LOOKB: {
      int64_t save_nst = m->nst, from = sp, save_target = m->lb_target;
      bool got;
      if (in->op == O_LOOKB) {   /* step back y characters; the sub-match must end here */
        for (int32_t k = 0; k < in->y && from > 0; k++) {
          from--;
          while (from > 0 && ((unsigned char)m->s[from] & 0xC0) == 0x80) from--;
        }
        m->lb_target = sp;
        got = chars_back_ok(m->s, from, sp, in->y) && run(m, pc + 1, from, true);
        m->lb_target = save_target;
      } else {
        got = run(m, pc + 1, sp, true);
      }
      if (m->budget_out) {
        m->nst = base;
        return false;
      }
      if (in->flag && got) {   /* a negative lookahead that matched: undo what it set */
        while (m->nst > save_nst) {
          frame f = m->st[--m->nst];
          if (f.pc < 0) {
            if (f.slot >= 0) m->caps[f.slot] = f.v;
            else m->regs[-1 - f.slot] = f.v;
          }
        }
      }
      if (got && !in->flag) {   /* a positive lookahead is atomic: keep its undo records, drop its choices */
        int64_t k = save_nst;
        for (int64_t j = save_nst; j < m->nst; j++)
          if (m->st[j].pc < 0) m->st[k++] = m->st[j];
        m->nst = k;
      }
      ok = got != in->flag;
      pc = in->x;
      break;
    }
    case O_MATCH:
      if (in->flag && in->x && sp != m->lb_target) {   /* a look-behind that does not end where it began */
        ok = false;
        break;
      }
      if (sub || in->flag) return true;
      ok = !(m->fullmatch && sp != m->end) && !(sp == m->start && sp == m->forbid);
      if (ok) return true;
      break;
    }
    if (ok) continue;
    /* backtrack: undo records until a choice point */
    for (;;) {
      if (m->nst == base) return false;
      frame f = m->st[--m->nst];
      if (f.pc >= 0) {
        pc = f.pc, sp = f.v;
        break;
      }
      if (f.slot >= 0) m->caps[f.slot] = f.v;
      else m->regs[-1 - f.slot] = f.v;
    }
  }
}

/* Byte offset of code point k of s (ASCII strings: k itself). */
static int64_t byte_of(const char *s, int64_t n, bool ascii, int64_t k) {
  if (ascii) return k < n ? k : n;
  int64_t i = 0;
  while (i < n && k > 0) {
    i++;
    while (i < n && ((unsigned char)s[i] & 0xC0) == 0x80) i++;
    k--;
  }
  return i;
}

static int64_t chars_between(const char *s, int64_t a, int64_t b) {
  int64_t k = 0;
  for (int64_t i = a; i < b; i++) k += ((unsigned char)s[i] & 0xC0) != 0x80;
  return k;
}

/* Find a match starting at byte bpos (search mode: or at any later character) before
 * m->end; m->caps in bytes. 1 found, 0 none, -1 with re.error (budget) or an interrupt. */
static int find(matcher *m, int64_t bpos, int mode) {
  const prog *p = m->p;
  int ncap = 2 * (p->ngroups + 1);
  m->fullmatch = mode == 2;
  int64_t tries = 0;
  for (int64_t sp = bpos;;) {
    if (mode == 0 && p->first >= 0) {   /* skip to the next place the leading literal can start */
      const char *hit = sp < m->end ? memchr(m->s + sp, p->first, (size_t)(m->end - sp)) : NULL;
      if (!hit) return 0;
      sp = hit - m->s;
    }
    for (int i = 0; i < ncap; i++) m->caps[i] = -1;
    for (int i = 0; i < p->nloops; i++) m->regs[i] = -1;
    m->start = sp;
    m->nst = 0;
    if (run(m, 0, sp, false)) return 1;
    if (m->budget_out) {
      raise_error("the pattern needs too many backtracking steps on this string (more than 100000000); "
                  "simplify it (nested repeats such as (a+)+ backtrack exponentially)", SH_NONE, -1);
      return -1;
    }
    if (mode != 0 || sp >= m->end) return 0;
    sp++;
    while (sp < m->end && ((unsigned char)m->s[sp] & 0xC0) == 0x80) sp++;
    if ((++tries & 4095) == 0 && sh_check_interrupt() < 0) return -1;
  }
}

static void matcher_init(matcher *m, const prog *p, const char *s, int64_t n, int64_t bend) {
  *m = (matcher){.p = p, .s = s, .n = n, .end = bend, .forbid = -1};
  m->caps = xmalloc((size_t)(2 * (p->ngroups + 1)) * sizeof *m->caps);
  m->regs = xmalloc((size_t)(p->nloops + 1) * sizeof *m->regs);
}

static void matcher_free(matcher *m) {
  free(m->st);
  free(m->regs);
  free(m->caps);
}

static bool check_args(sh_obj *po, sh_obj *str) {
  if (po->type != &prog_type) return sh_raise(sh_TypeError, "re: not a compiled pattern"), false;
  if (!sh_is_str(str)) return sh_raise(sh_TypeError, "expected string or bytes-like object, got '%s'", sh_type_name(str)), false;
  return true;
}

static sh_obj *f_exec(ARGS) {
  sh_obj *po, *str, *poso, *endo, *modeo, *forbido;
  if (sh_parse_args("_exec", argc, argv, kw, "program string pos endpos mode forbid", &po, &str, &poso, &endo, &modeo,
                    &forbido) < 0 || !check_args(po, str))
    return NULL;
  int64_t pos, endpos, mode, forbid;
  if (sh_as_int(poso, &pos) < 0 || sh_as_int(endo, &endpos) < 0 || sh_as_int(modeo, &mode) < 0 || sh_as_int(forbido, &forbid) < 0)
    return NULL;
  const prog *p = (const prog *)po;
  const char *s = sh_str_cstr(str);
  int64_t n = sh_str_len(str), nch = ((sh_str_obj *)str)->nchars;
  bool ascii = n == nch;
  if (endpos > nch) endpos = nch;
  if (pos < 0) pos = 0;
  if (pos > endpos) return sh_none();
  int64_t bpos = byte_of(s, n, ascii, pos), bend = byte_of(s, n, ascii, endpos);
  matcher m;
  matcher_init(&m, p, s, n, bend);
  m.forbid = forbid >= 0 ? byte_of(s, n, ascii, forbid) : -1;
  int got = find(&m, bpos, (int)mode);
  sh_obj *r = got < 0 ? NULL : got == 0 ? sh_none() : sh_list_new(0);
  for (int i = 0; got > 0 && i < 2 * (p->ngroups + 1); i++) {
    int64_t v = m.caps[i];
    sh_list_append_steal(r, sh_int(v < 0 ? -1 : ascii ? v : pos + chars_between(s, bpos, v)));
  }
  matcher_free(&m);
  return r;
}

static sh_obj *group_str(const matcher *m, int g, sh_obj *missing) {
  int64_t a = m->caps[2 * g], b = m->caps[2 * g + 1];
  if (a < 0 || b < 0) return sh_incref(missing);
  return sh_strn(m->s + a, (size_t)(b - a));
}

/* _all(program, string, what, arg, count): every match of the string, in CPython 3.7+'s
 * order (an empty match right after another match is refused), done here rather than by
 * Match objects: what 0 findall; 1 sub with a template arg (a list of str and group
 * numbers), count 0 for all, returns (string, n); 2 split with maxsplit count. */
static sh_obj *f_all(ARGS) {
  sh_obj *po, *str, *whato, *arg, *counto;
  if (sh_parse_args("_all", argc, argv, kw, "program string what arg count", &po, &str, &whato, &arg, &counto) < 0 ||
      !check_args(po, str))
    return NULL;
  int64_t what, count;
  if (sh_as_int(whato, &what) < 0 || sh_as_int(counto, &count) < 0) return NULL;
  if (what == 1 && arg->type != &sh_list_type) return sh_raise(sh_TypeError, "_all: the template must be a list");
  const prog *p = (const prog *)po;
  const char *s = sh_str_cstr(str);
  int64_t n = sh_str_len(str);
  matcher m;
  matcher_init(&m, p, s, n, n);
  sh_obj *out = sh_list_new(0), *empty = sh_str("");
  sh_buf b = {0};
  int64_t pos = 0, last = 0, k = 0;
  int rc = 0;
  while (pos <= n && (count <= 0 || what == 0 || k < count)) {
    rc = find(&m, pos, 0);
    if (rc <= 0) break;
    int64_t a = m.caps[0], e = m.caps[1];
    if (what == 0) {
      if (p->ngroups == 0) sh_list_append_steal(out, sh_strn(s + a, (size_t)(e - a)));
      else if (p->ngroups == 1) sh_list_append_steal(out, group_str(&m, 1, empty));
      else {
        sh_obj *t = sh_tuple_new(p->ngroups);
        for (int g = 1; g <= p->ngroups; g++) SH_TUPLE_ITEMS(t)[g - 1] = group_str(&m, g, empty);
        sh_list_append_steal(out, t);
      }
    } else if (what == 1) {
      sh_buf_put(&b, s + last, (size_t)(a - last));
      for (int64_t i = 0; i < SH_LIST_N(arg); i++) {
        sh_obj *piece = SH_LIST_ITEMS(arg)[i];
        if (sh_is_str(piece)) sh_buf_put(&b, sh_str_cstr(piece), (size_t)sh_str_len(piece));
        else {
          int64_t g = sh_is_int(piece) ? sh_int_value(piece) : -1;
          if (g >= 0 && g <= p->ngroups && m.caps[2 * g] >= 0) sh_buf_put(&b, s + m.caps[2 * g], (size_t)(m.caps[2 * g + 1] - m.caps[2 * g]));
        }
      }
    } else {
      sh_list_append_steal(out, sh_strn(s + last, (size_t)(a - last)));
      for (int g = 1; g <= p->ngroups; g++) sh_list_append_steal(out, group_str(&m, g, SH_NONE));
    }
    last = e;
    k++;
    m.forbid = a == e ? e : -1;
    pos = e;
  }
  matcher_free(&m);
  sh_decref(empty);
  if (rc < 0) {
    sh_buf_free(&b);
    sh_decref(out);
    return NULL;
  }
  if (what == 1) {
    sh_buf_put(&b, s + last, (size_t)(n - last));
    sh_decref(out);
    sh_obj *res = sh_strn(b.data ? b.data : "", b.len);
    sh_buf_free(&b);
    sh_obj *t = sh_tuple_new(2);
    SH_TUPLE_ITEMS(t)[0] = res;
    SH_TUPLE_ITEMS(t)[1] = sh_int(k);
    return t;
  }
  if (what == 2) sh_list_append_steal(out, sh_strn(s + last, (size_t)(n - last)));
  sh_buf_free(&b);
  return out;
}

static sh_obj *f_set_error(ARGS) {
  if (argc != 1 || argv[0]->type != &sh_type_type) return sh_raise(sh_TypeError, "_set_error(cls)");
  re_error = (sh_type *)sh_incref(argv[0]);
  return sh_none();
}

static const sh_method re_funcs[] = {
  {"_compile", f_compile, "_compile(pattern, flags)", "Compile a pattern (internal)."},
  {"_exec", f_exec, "_exec(program, string, pos, endpos, mode, forbid)", "Run a compiled pattern (internal)."},
  {"_all", f_all, "_all(program, string, what, arg, count)", "findall / sub / split in one pass (internal)."},
  {"_set_error", f_set_error, "_set_error(cls)", "The class of re.error (internal)."},
  {NULL},
};

static const char re_src[] =
#include "shell/lang/re.py.inc"
    ;

sh_obj *sh_mod_re_init(void) {
  sh_obj *m = sh_module_new("re");
  sh_module_add_funcs(m, re_funcs);
  if (sh_exec_string(re_src, "<re>", ((sh_module_obj *)m)->dict) < 0) {
    sh_decref(m);
    return NULL;
  }
  return m;
}
