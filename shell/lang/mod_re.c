/* _re: the regular expression engine under the re module (shell/lang/re.py.inc).
 *
 * A pattern is parsed (CPython 3's syntax and error messages) into a tree, compiled to a
 * small program, and run by a backtracking machine whose choice points live on an explicit
 * heap stack, so a long subject never deepens the C stack. Subjects are decoded to code
 * points (bytes: one code point per byte) and every position given to or returned from here
 * counts code points. A step budget per match turns catastrophic backtracking into re.error.
 *
 * Primitives for the language layer:
 *   _compile_native(pattern, flags) -> (prog, groups, groupindex, flags) or (None, msg, pos)
 *   _exec(prog, string, pos, endpos, mode, must_advance) -> None or [s0, e0, ..., lastindex]
 *       mode 0 match, 1 search, 2 fullmatch
 *   _scan(prog, string, pos, endpos, limit) -> list of such lists (findall, sub, split)
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "shell/lang/interp.h"
#include "shell/lang/re_case.h"

enum {
  F_TEMPLATE = 1, F_I = 2, F_LOCALE = 4, F_M = 8, F_S = 16, F_U = 32, F_X = 64, F_A = 256,
};
#define MAXPROG 200000   /* instructions: bounds what {m,n} may expand to */
#define MAXDEPTH 200     /* nested groups: bounds the parser's and compiler's recursion */
#define STEP_BUDGET 100000000   /* machine steps per match (at least 100 per subject character) */
static int64_t step_budget = STEP_BUDGET;
#define REPEAT_INF (-1)

/* ---- pattern tree --------------------------------------------------------------------- */
enum {
  N_EMPTY, N_CHAR, N_ANY, N_CLASS, N_SEQ, N_ALT, N_GROUP, N_REPEAT, N_BACKREF, N_AT, N_LOOK,
  N_ATOMIC, N_COND,
};
enum { AT_BEG, AT_BEG_LINE, AT_END, AT_END_DOLLAR, AT_END_LINE, AT_WORDB, AT_NWORDB, AT_BEG_STR };
typedef struct {
  int kind, flags;
  int a, b;          /* CHAR: -; GROUP: index (0 none); REPEAT: min, max; LOOK: neg, behind;
                        AT: which; CLASS: class index; BACKREF: group */
  int greedy, possessive;
  uint32_t c;
  int child, last, next;   /* first child, last child, next sibling (-1 none) */
} node;

/* A character class: ranges and categories, negated or not. */
enum { CAT_DIGIT = 1, CAT_NDIGIT = 2, CAT_WORD = 4, CAT_NWORD = 8, CAT_SPACE = 16, CAT_NSPACE = 32 };
typedef struct {
  uint32_t *r;    /* pairs lo, hi */
  int nr, cap;
  int cats, neg, flags;
} cclass;

enum {
  I_CHAR, I_ANY, I_CLASS, I_SPLIT, I_JMP, I_SAVE, I_MARK, I_LOOPCHK, I_AT, I_BACKREF, I_LOOK,
  I_ATOMIC, I_SUCCEED, I_MATCH, I_COND,
};
typedef struct {
  int op, x, y, flags;
  uint32_t c;
} inst;

typedef struct {
  inst *code;
  int n, cap;
  cclass *cls;
  int ncls, clscap;
  int ngroups, nmarks, nregs;   /* regs: 2*(ngroups+1) caps, marks, lastindex */
  int flags;
  int bytes;
  uint32_t first;               /* a literal every match starts with, or 0xFFFFFFFF */
  char *repr;                   /* the pattern's repr, for messages */
} prog;

typedef struct {
  const uint32_t *p;
  int n, i;
  int flags, depth;
  node *nodes;
  int nn, ncap;
  prog *pr;
  int ngroups;
  char *gopen;                  /* per group: still open */
  int *gnode;                   /* per group: its node */
  int lookbehind_first;         /* inside a look-behind: its first group number, else 0 */
  int gcap;
  sh_obj *groupindex;
  const char *err;
  char errbuf[200];
  int errpos, errat;            /* where the message points; how far parsing had got */
  int global_ok;
  int condref, condpos;         /* the highest group a (?(n)...) names, and where */
} parser;

static int newnode(parser *ps, int kind) {
  if (ps->nn == ps->ncap) {
    int nc = ps->ncap ? ps->ncap * 2 : 64;
    node *nn = realloc(ps->nodes, sizeof(node) * (size_t)nc);
    if (!nn) abort();
    ps->nodes = nn;
    ps->ncap = nc;
  }
  node *x = &ps->nodes[ps->nn];
  memset(x, 0, sizeof *x);
  x->kind = kind;
  x->flags = ps->flags;
  x->child = x->last = x->next = -1;
  x->greedy = 1;
  return ps->nn++;
}
static void addchild(parser *ps, int parent, int child) {
  node *p = &ps->nodes[parent];
  if (p->last < 0) p->child = child;
  else ps->nodes[p->last].next = child;
  ps->nodes[parent].last = child;
}

static int perr(parser *ps, int pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int perr(parser *ps, int pos, const char *fmt, ...) {
  if (ps->err) return -1;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(ps->errbuf, sizeof ps->errbuf, fmt, ap);
  va_end(ap);
  ps->err = ps->errbuf;
  ps->errpos = pos;
  ps->errat = ps->i;
  return -1;
}

/* ---- characters ----------------------------------------------------------------------- */
/* Column 1 (lower case: back references compare it) or 2 (the representative of c's
 * case-insensitive class, sre's lower case plus its extra equivalences such as the long s
 * with s: literals and sets) of c's row; ascii: only A-Z fold. */
static uint32_t case_of(uint32_t c, int ascii, int col) {
  if (c < 128) return c >= 'A' && c <= 'Z' ? c + 32 : c;
  if (ascii) return c;
  size_t lo = 0, hi = sizeof re_case_fold / sizeof re_case_fold[0];
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (re_case_fold[mid][0] < c) lo = mid + 1;
    else hi = mid;
  }
  return lo < sizeof re_case_fold / sizeof re_case_fold[0] && re_case_fold[lo][0] == c ? re_case_fold[lo][col] : c;
}
static uint32_t fold1(uint32_t c, int ascii) { return case_of(c, ascii, 2); }
static uint32_t lower_of(uint32_t c, int ascii) { return case_of(c, ascii, 1); }
static int in_ranges(const uint32_t (*r)[2], size_t n, uint32_t c) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (r[mid][1] < c) lo = mid + 1;
    else hi = mid;
  }
  return lo < n && r[lo][0] <= c;
}
#define IN_TABLE(t, c) in_ranges(t, sizeof t / sizeof t[0], c)
static int is_digit_u(uint32_t c, int ascii) {
  if (c < 128 || ascii) return c >= '0' && c <= '9';
  return IN_TABLE(re_digit, c);
}
static int is_word(uint32_t c, int ascii) {
  if (c < 128 || ascii)
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  return IN_TABLE(re_word, c);
}
static int is_space(uint32_t c, int ascii) {
  if (c < 128 || ascii) return c == ' ' || (c >= 9 && c <= 13) || (ascii ? 0 : (c >= 0x1C && c <= 0x1F));
  return IN_TABLE(re_space, c);
}
static int ascii_mode(const prog *pr, int flags) { return pr->bytes || (flags & F_A); }

static int class_match(const prog *pr, const cclass *k, uint32_t c) {
  int ascii = ascii_mode(pr, k->flags);
  int icase = k->flags & F_I;
  int hit = 0;
  uint32_t lc = icase ? fold1(c, ascii) : c;
  for (int i = 0; i < k->nr && !hit; i++) {
    uint32_t lo = k->r[2 * i], hi = k->r[2 * i + 1];
    if (c >= lo && c <= hi) hit = 1;
    else if (icase) {   /* some character of c's class in the range? */
      if (lc >= lo && lc <= hi) hit = 1;
      else if (hi - lo < 1024) {
        for (uint32_t x = lo; x <= hi && !hit; x++)
          if (fold1(x, ascii) == lc) hit = 1;
      } else if (lc < 128) {
        if (lc >= 'a' && lc <= 'z' && lc - 32 >= lo && lc - 32 <= hi) hit = 1;
      }
      if (!hit && !ascii && hi - lo >= 1024)
        for (size_t t = 0; t < sizeof re_case_fold / sizeof re_case_fold[0] && !hit; t++)
          if (re_case_fold[t][2] == lc && re_case_fold[t][0] >= lo && re_case_fold[t][0] <= hi) hit = 1;
    }
  }
  if (!hit && k->cats) {
    if (((k->cats & CAT_DIGIT) && is_digit_u(c, ascii)) || ((k->cats & CAT_NDIGIT) && !is_digit_u(c, ascii)) ||
        ((k->cats & CAT_WORD) && is_word(c, ascii)) || ((k->cats & CAT_NWORD) && !is_word(c, ascii)) ||
        ((k->cats & CAT_SPACE) && is_space(c, ascii)) || ((k->cats & CAT_NSPACE) && !is_space(c, ascii)))
      hit = 1;
  }
  return hit != k->neg;
}

static int newclass(prog *pr, int flags) {
  if (pr->ncls == pr->clscap) {
    int nc = pr->clscap ? pr->clscap * 2 : 8;
    cclass *k = realloc(pr->cls, sizeof(cclass) * (size_t)nc);
    if (!k) abort();
    pr->cls = k;
    pr->clscap = nc;
  }
  cclass *k = &pr->cls[pr->ncls];
  memset(k, 0, sizeof *k);
  k->flags = flags;
  return pr->ncls++;
}
static void class_add(cclass *k, uint32_t lo, uint32_t hi) {
  if (k->nr == k->cap) {
    k->cap = k->cap ? k->cap * 2 : 8;
    uint32_t *r = realloc(k->r, sizeof(uint32_t) * 2 * (size_t)k->cap);
    if (!r) abort();
    k->r = r;
  }
  k->r[2 * k->nr] = lo;
  k->r[2 * k->nr + 1] = hi;
  k->nr++;
}

/* ---- parser --------------------------------------------------------------------------- */
static int at_end(parser *ps) { return ps->i >= ps->n; }
static uint32_t peek(parser *ps) { return ps->i < ps->n ? ps->p[ps->i] : 0; }
static int is_ascii_letter(uint32_t c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static int hexval(uint32_t c) {
  if (c >= '0' && c <= '9') return (int)c - '0';
  if (c >= 'a' && c <= 'f') return (int)c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return (int)c - 'A' + 10;
  return -1;
}
static void skip_verbose(parser *ps) {
  if (!(ps->flags & F_X)) return;
  for (;;) {
    while (!at_end(ps) && is_space(peek(ps), 1)) ps->i++;
    if (!at_end(ps) && peek(ps) == '#') {
      while (!at_end(ps) && peek(ps) != '\n') ps->i++;
      continue;
    }
    break;
  }
}

/* The text of p[from, to) as UTF-8, for messages. */
static void text_of(parser *ps, int from, int to, char *buf, size_t size) {
  size_t o = 0;
  for (int k = from; k < to && o + 5 < size; k++) {
    uint32_t c = ps->p[k];
    if (c < 0x80) buf[o++] = (char)c;
    else if (c < 0x800) { buf[o++] = (char)(0xC0 | (c >> 6)); buf[o++] = (char)(0x80 | (c & 63)); }
    else if (c < 0x10000) { buf[o++] = (char)(0xE0 | (c >> 12)); buf[o++] = (char)(0x80 | ((c >> 6) & 63)); buf[o++] = (char)(0x80 | (c & 63)); }
    else { buf[o++] = (char)(0xF0 | (c >> 18)); buf[o++] = (char)(0x80 | ((c >> 12) & 63)); buf[o++] = (char)(0x80 | ((c >> 6) & 63)); buf[o++] = (char)(0x80 | (c & 63)); }
  }
  buf[o] = 0;
}

/* An escape after '\' at ps->i (the backslash at start). in_class: inside [...].
 * Returns 0 and *c for a literal, 1 with *cat for a category, 2 with *at for an anchor,
 * 3 with *grp for a back reference, -1 on error. */
static int parse_escape(parser *ps, int in_class, uint32_t *c, int *cat, int *at, int *grp) {
  int start = ps->i;
  ps->i++;   /* the backslash */
  if (at_end(ps)) return perr(ps, start, "bad escape (end of pattern)");
  uint32_t e = ps->p[ps->i++];
  char tmp[16];
  switch (e) {
    case 'n': *c = '\n'; return 0;
    case 't': *c = '\t'; return 0;
    case 'r': *c = '\r'; return 0;
    case 'f': *c = '\f'; return 0;
    case 'v': *c = '\v'; return 0;
    case 'a': *c = 7; return 0;
    case '\\': *c = '\\'; return 0;
    case 'd': *cat = CAT_DIGIT; return 1;
    case 'D': *cat = CAT_NDIGIT; return 1;
    case 'w': *cat = CAT_WORD; return 1;
    case 'W': *cat = CAT_NWORD; return 1;
    case 's': *cat = CAT_SPACE; return 1;
    case 'S': *cat = CAT_NSPACE; return 1;
    case 'x': case 'u': case 'U': {
      int want = e == 'x' ? 2 : e == 'u' ? 4 : 8;
      if (ps->pr->bytes && e != 'x') break;
      uint32_t v = 0;
      int k = 0;
      while (k < want && !at_end(ps) && hexval(peek(ps)) >= 0) { v = v * 16 + (uint32_t)hexval(peek(ps)); ps->i++; k++; }
      if (k < want) {
        char t[32];
        text_of(ps, start, ps->i, t, sizeof t);
        return perr(ps, start, "incomplete escape %s", t);
      }
      if (v > 0x10FFFF) {
        char t[32];
        text_of(ps, start, ps->i, t, sizeof t);
        return perr(ps, start, "bad escape %s", t);
      }
      *c = v;
      return 0;
    }
    case '0': {
      uint32_t v = 0;
      int k = 0;
      while (k < 2 && !at_end(ps) && peek(ps) >= '0' && peek(ps) <= '7') { v = v * 8 + (peek(ps) - '0'); ps->i++; k++; }
      *c = v;
      return 0;
    }
    default: break;
  }
  if (e >= '1' && e <= '9') {
    if (in_class) {
      if (e >= '8') { snprintf(tmp, sizeof tmp, "\\%c", (char)e); return perr(ps, start, "bad escape %s", tmp); }
      uint32_t v = e - '0';
      int k = 0;
      while (k < 2 && !at_end(ps) && peek(ps) >= '0' && peek(ps) <= '7') { v = v * 8 + (peek(ps) - '0'); ps->i++; k++; }
      if (v > 0377) {
        char t[32];
        text_of(ps, start, ps->i, t, sizeof t);
        return perr(ps, start, "octal escape value %s outside of range 0-0o377", t);
      }
      *c = v;
      return 0;
    }
    /* three octal digits: a character; otherwise a group number of one or two digits */
    if (e <= '7' && ps->i + 1 < ps->n && ps->p[ps->i] >= '0' && ps->p[ps->i] <= '7' &&
        ps->p[ps->i + 1] >= '0' && ps->p[ps->i + 1] <= '7') {
      uint32_t v = (e - '0') * 64 + (ps->p[ps->i] - '0') * 8 + (ps->p[ps->i + 1] - '0');
      ps->i += 2;
      if (v > 0377) {
        char t[32];
        text_of(ps, start, ps->i, t, sizeof t);
        return perr(ps, start, "octal escape value %s outside of range 0-0o377", t);
      }
      *c = v;
      return 0;
    }
    int g = (int)(e - '0');
    if (!at_end(ps) && peek(ps) >= '0' && peek(ps) <= '9') { g = g * 10 + (int)(peek(ps) - '0'); ps->i++; }
    if (g > ps->ngroups) return perr(ps, start + 1, "invalid group reference %d", g);
    if (ps->gopen[g]) return perr(ps, start, "cannot refer to an open group");
    if (ps->lookbehind_first && g >= ps->lookbehind_first)
      return perr(ps, ps->i, "cannot refer to group defined in the same lookbehind subpattern");
    *grp = g;
    return 3;
  }
  if (!in_class) {
    switch (e) {
      case 'A': *at = AT_BEG_STR; return 2;
      case 'Z': *at = AT_END; return 2;
      case 'b': *at = AT_WORDB; return 2;
      case 'B': *at = AT_NWORDB; return 2;
      default: break;
    }
  } else if (e == 'b') {
    *c = 8;
    return 0;
  }
  if (e < 128 && (is_ascii_letter(e) || (e >= '0' && e <= '9'))) {
    snprintf(tmp, sizeof tmp, "\\%c", (char)e);
    return perr(ps, start, "bad escape %s", tmp);
  }
  *c = e;
  return 0;
}

static int parse_class(parser *ps) {
  int start = ps->i;
  ps->i++;   /* [ */
  int ki = newclass(ps->pr, ps->flags);
  if (!at_end(ps) && peek(ps) == '^') { ps->pr->cls[ki].neg = 1; ps->i++; }
  int first = 1;
  for (;;) {
    if (at_end(ps)) return perr(ps, start, "unterminated character set");
    uint32_t c = peek(ps);
    if (c == ']' && !first) { ps->i++; break; }
    first = 0;
    int item_start = ps->i;
    uint32_t lo;
    if (c == '\\') {
      int cat = 0, at = 0, grp = 0;
      int r = parse_escape(ps, 1, &lo, &cat, &at, &grp);
      if (r < 0) return -1;
      if (r == 1) {
        ps->pr->cls[ki].cats |= cat;
        if (!at_end(ps) && peek(ps) == '-' && ps->i + 1 < ps->n && ps->p[ps->i + 1] != ']') {
          char t[32];
          int to = ps->i + 2 + (ps->p[ps->i + 1] == '\\' && ps->i + 2 < ps->n);
          text_of(ps, item_start, to, t, sizeof t);
          return perr(ps, item_start, "bad character range %s", t);
        }
        continue;
      }
    } else {
      lo = c;
      ps->i++;
    }
    if (!at_end(ps) && peek(ps) == '-' && ps->i + 1 < ps->n && ps->p[ps->i + 1] != ']') {
      ps->i++;
      uint32_t hi;
      if (peek(ps) == '\\') {
        int cat = 0, at = 0, grp = 0;
        int r = parse_escape(ps, 1, &hi, &cat, &at, &grp);
        if (r < 0) return -1;
        if (r == 1) {
          char t[64];
          text_of(ps, item_start, ps->i, t, sizeof t);
          return perr(ps, item_start, "bad character range %s", t);
        }
      } else {
        hi = peek(ps);
        ps->i++;
      }
      if (hi < lo) {
        char t[64];
        text_of(ps, item_start, ps->i, t, sizeof t);
        return perr(ps, item_start, "bad character range %s", t);
      }
      class_add(&ps->pr->cls[ki], lo, hi);
    } else {
      if (!at_end(ps) && peek(ps) == '-' && ps->i + 1 >= ps->n) {
        ps->i++;
        return perr(ps, start, "unterminated character set");
      }
      class_add(&ps->pr->cls[ki], lo, lo);
    }
  }
  int nd = newnode(ps, N_CLASS);
  ps->nodes[nd].a = ki;
  return nd;
}

static int parse_alt(parser *ps);
static int parse_seq(parser *ps);

static int parse_name(parser *ps, uint32_t term, char *name, size_t size, int *num) {
  int start = ps->i;
  while (!at_end(ps) && peek(ps) != term) ps->i++;
  if (at_end(ps)) {
    if (start == ps->i) return perr(ps, start, "missing group name");
    return perr(ps, start, term == '>' ? "missing >, unterminated name" : "missing ), unterminated name");
  }
  if (start == ps->i) return perr(ps, start, "missing group name");
  text_of(ps, start, ps->i, name, size);
  int ok = 1;
  for (int k = start; k < ps->i; k++) {
    uint32_t c = ps->p[k];
    int alpha = is_ascii_letter(c) || c == '_' || c >= 0x80;
    if (!(alpha || (k > start && c >= '0' && c <= '9'))) ok = 0;
  }
  ps->i++;   /* terminator */
  if (num) {
    int digits = 1;
    long v = 0;
    for (int k = start; k < ps->i - 1; k++) {
      if (ps->p[k] < '0' || ps->p[k] > '9') digits = 0;
      else if (v < 1000000) v = v * 10 + (ps->p[k] - '0');
    }
    *num = digits ? (int)v : -1;
    if (digits) return start;
  }
  if (!ok) return perr(ps, start, "bad character in group name '%s'", name);
  return start;
}

static int flag_of(uint32_t c) {
  switch (c) {
    case 'i': return F_I;
    case 'L': return F_LOCALE;
    case 'm': return F_M;
    case 's': return F_S;
    case 'x': return F_X;
    case 'a': return F_A;
    case 'u': return F_U;
    default: return 0;
  }
}

/* After "(?" at a flag letter or '-': inline flags. Returns 1 for global flags "(?i)",
 * 0 for a scoped group "(?i:...)" with on and off set, -1 on error. */
static int parse_flags(parser *ps, int paren, int global_ok, int *on, int *off) {
  *on = *off = 0;
  while (!at_end(ps) && flag_of(peek(ps))) {
    int f = flag_of(peek(ps));
    ps->i++;
    if (f == F_LOCALE && !ps->pr->bytes) return perr(ps, ps->i, "bad inline flags: cannot use 'L' flag with a str pattern");
    if (f == F_U && ps->pr->bytes) return perr(ps, ps->i, "bad inline flags: cannot use 'u' flag with a bytes pattern");
    *on |= f;
    int t = *on & (F_A | F_U | F_LOCALE);
    if (t & (t - 1)) return perr(ps, ps->i, "bad inline flags: flags 'a', 'u' and 'L' are incompatible");
  }
  if (at_end(ps)) return perr(ps, ps->i, "missing -, : or )");
  if (peek(ps) == ')') {
    ps->i++;
    if (!global_ok) return perr(ps, paren, "global flags not at the start of the expression");
    return 1;
  }
  if (peek(ps) == '-') {
    ps->i++;
    if (at_end(ps)) return perr(ps, ps->i, "missing flag");
    if (!flag_of(peek(ps))) {
      char t[16];
      text_of(ps, ps->i, ps->i + 1, t, sizeof t);
      if (is_ascii_letter(peek(ps))) return perr(ps, ps->i, "unknown flag");
      return perr(ps, ps->i, "missing flag");
    }
    while (!at_end(ps) && flag_of(peek(ps))) {
      int f = flag_of(peek(ps));
      ps->i++;
      if (f & (F_A | F_U | F_LOCALE)) return perr(ps, ps->i, "bad inline flags: cannot turn off flags 'a', 'u' and 'L'");
      *off |= f;
    }
    if (*on & *off) return perr(ps, ps->i, "bad inline flags: flag turned on and off");
    if (at_end(ps)) return perr(ps, ps->i, "missing :");
    if (peek(ps) != ':') {
      if (is_ascii_letter(peek(ps))) return perr(ps, ps->i, "unknown flag");
      return perr(ps, ps->i, "missing :");
    }
    ps->i++;
    return 0;
  }
  if (peek(ps) == ':') { ps->i++; return 0; }
  if (is_ascii_letter(peek(ps))) return perr(ps, ps->i, "unknown flag");
  return perr(ps, ps->i, "missing -, : or )");
}

static int group_body(parser *ps, int paren, int nd) {
  if (++ps->depth > MAXDEPTH) return perr(ps, paren, "too many nested parentheses (more than %d)", MAXDEPTH);
  int saved = ps->flags;
  int body = parse_alt(ps);
  ps->flags = saved;
  ps->depth--;
  if (body < 0) return -1;
  if (at_end(ps) || peek(ps) != ')') return perr(ps, paren, "missing ), unterminated subpattern");
  ps->i++;
  addchild(ps, nd, body);
  return nd;
}

static int open_group(parser *ps) {
  ps->ngroups++;
  if (ps->ngroups >= ps->gcap) {
    ps->gcap = ps->gcap * 2 + 8;
    char *g = realloc(ps->gopen, (size_t)ps->gcap);
    int *gn = realloc(ps->gnode, sizeof(int) * (size_t)ps->gcap);
    if (!g || !gn) abort();
    ps->gopen = g;
    ps->gnode = gn;
  }
  ps->gopen[ps->ngroups] = 1;
  ps->gnode[ps->ngroups] = -1;
  return ps->ngroups;
}

static int parse_group(parser *ps) {
  int paren = ps->i;
  int global_ok = ps->global_ok;
  ps->global_ok = 0;
  ps->i++;
  if (!at_end(ps) && peek(ps) == '?') {
    ps->i++;
    if (at_end(ps)) return perr(ps, ps->i, "unexpected end of pattern");
    uint32_t c = ps->p[ps->i++];
    if (c == ':') return group_body(ps, paren, newnode(ps, N_GROUP));
    if (c == '>') return group_body(ps, paren, newnode(ps, N_ATOMIC));
    if (c == '=' || c == '!') {
      int nd = newnode(ps, N_LOOK);
      ps->nodes[nd].a = c == '!';
      return group_body(ps, paren, nd);
    }
    if (c == '#') {
      while (!at_end(ps) && peek(ps) != ')') ps->i++;
      if (at_end(ps)) return perr(ps, paren, "missing ), unterminated comment");
      ps->i++;
      return newnode(ps, N_EMPTY);
    }
    if (c == '<') {
      if (at_end(ps)) return perr(ps, ps->i, "unexpected end of pattern");
      uint32_t d = ps->p[ps->i++];
      if (d == '=' || d == '!') {
        int nd = newnode(ps, N_LOOK);
        ps->nodes[nd].a = d == '!';
        ps->nodes[nd].b = 1;
        int outer = ps->lookbehind_first;
        if (!outer) ps->lookbehind_first = ps->ngroups + 1;
        int r = group_body(ps, paren, nd);
        ps->lookbehind_first = outer;
        return r;
      }
      char t[16];
      text_of(ps, ps->i - 1, ps->i, t, sizeof t);
      return perr(ps, paren + 1, "unknown extension ?<%s", t);
    }
    if (c == 'P') {
      if (at_end(ps)) return perr(ps, ps->i, "unexpected end of pattern");
      uint32_t d = ps->p[ps->i++];
      char name[128];
      if (d == '<') {
        int ns = parse_name(ps, '>', name, sizeof name, NULL);
        if (ns < 0) return -1;
        sh_obj *old = sh_dict_get_str(ps->groupindex, name);
        int g = open_group(ps);
        if (old) return perr(ps, ns, "redefinition of group name '%s' as group %d; was group %d", name, g, (int)sh_int_value(old));
        sh_obj *gi = sh_int(g);
        sh_dict_set_str(ps->groupindex, name, gi);
        sh_decref(gi);
        int nd = newnode(ps, N_GROUP);
        ps->nodes[nd].a = g;
        ps->gnode[g] = nd;
        if (group_body(ps, paren, nd) < 0) return -1;
        ps->gopen[g] = 0;
        return nd;
      }
      if (d == '=') {
        int ns = parse_name(ps, ')', name, sizeof name, NULL);
        if (ns < 0) return -1;
        sh_obj *gi = sh_dict_get_str(ps->groupindex, name);
        if (!gi) return perr(ps, ns, "unknown group name '%s'", name);
        int g = (int)sh_int_value(gi);
        if (ps->gopen[g]) return perr(ps, ns, "cannot refer to an open group");
        if (ps->lookbehind_first && g >= ps->lookbehind_first)
          return perr(ps, ps->i, "cannot refer to group defined in the same lookbehind subpattern");
        int nd = newnode(ps, N_BACKREF);
        ps->nodes[nd].a = g;
        return nd;
      }
      char t[16];
      text_of(ps, ps->i - 1, ps->i, t, sizeof t);
      return perr(ps, ps->i - 3, "unknown extension ?P%s", t);
    }
    if (c == '(') {
      char name[128];
      int num;
      int ns = parse_name(ps, ')', name, sizeof name, &num);
      if (ns < 0) return -1;
      int g;
      if (num < 0) {
        sh_obj *gi = sh_dict_get_str(ps->groupindex, name);
        if (!gi) return perr(ps, ns, "unknown group name '%s'", name);
        g = (int)sh_int_value(gi);
      } else {
        if (num == 0) return perr(ps, ns, "bad group number");
        g = num;
        if (g > ps->condref) { ps->condref = g; ps->condpos = ns; }
      }
      int nd = newnode(ps, N_COND);
      ps->nodes[nd].a = g;
      if (++ps->depth > MAXDEPTH) return perr(ps, paren, "too many nested parentheses (more than %d)", MAXDEPTH);
      int saved = ps->flags;
      int yes = parse_seq(ps);
      if (yes < 0) return -1;
      addchild(ps, nd, yes);
      if (!at_end(ps) && peek(ps) == '|') {
        ps->i++;
        int no = parse_seq(ps);
        if (no < 0) return -1;
        addchild(ps, nd, no);
        if (!at_end(ps) && peek(ps) == '|') return perr(ps, ps->i, "conditional backref with more than two branches");
      }
      ps->flags = saved;
      ps->depth--;
      if (at_end(ps) || peek(ps) != ')') return perr(ps, paren, "missing ), unterminated subpattern");
      ps->i++;
      return nd;
    }
    if (flag_of(c) || c == '-') {
      ps->i--;
      int on, off;
      int r = parse_flags(ps, paren, global_ok, &on, &off);
      if (r < 0) return -1;
      if (r == 1) {
        ps->global_ok = global_ok;
        ps->flags |= on;
        return newnode(ps, N_EMPTY);
      }
      int saved = ps->flags;
      ps->flags = (ps->flags | on) & ~off;
      int nd = newnode(ps, N_GROUP);
      r = group_body(ps, paren, nd);
      ps->flags = saved;
      return r;
    }
    char t[16];
    if (c == '\\' && !at_end(ps)) ps->i++;
    text_of(ps, paren + 2, ps->i, t, sizeof t);
    return perr(ps, paren + 1, "unknown extension ?%s", t);
  }
  int g = open_group(ps);
  int nd = newnode(ps, N_GROUP);
  ps->nodes[nd].a = g;
  ps->gnode[g] = nd;
  if (group_body(ps, paren, nd) < 0) return -1;
  ps->gopen[g] = 0;
  return nd;
}

/* '{' at ps->i: a repeat {m}, {m,}, {,n}, {m,n}? Returns 1 with min/max, 0 when it is a
 * literal brace (position unchanged), -1 on error. */
static int parse_brace(parser *ps, int *mn, int *mx) {
  int save = ps->i;
  ps->i++;
  int lo = -1, hi = -1;
  int here = ps->i;
  long v = 0;
  int digits = 0;
  while (!at_end(ps) && peek(ps) >= '0' && peek(ps) <= '9') { if (v < 100000000) v = v * 10 + (peek(ps) - '0'); ps->i++; digits++; }
  if (digits) lo = (int)(v > 100000000 ? 100000000 : v);
  if (!at_end(ps) && peek(ps) == ',') {
    ps->i++;
    v = 0;
    digits = 0;
    while (!at_end(ps) && peek(ps) >= '0' && peek(ps) <= '9') { if (v < 100000000) v = v * 10 + (peek(ps) - '0'); ps->i++; digits++; }
    if (digits) hi = (int)(v > 100000000 ? 100000000 : v);
    else hi = REPEAT_INF;
  } else {
    if (lo < 0) { ps->i = save; return 0; }
    hi = lo;
  }
  if (at_end(ps) || peek(ps) != '}') { ps->i = save; return 0; }
  ps->i++;
  if (lo < 0) lo = 0;
  if (hi != REPEAT_INF && hi < lo) return perr(ps, here, "min repeat greater than max repeat");
  *mn = lo;
  *mx = hi;
  return 1;
}

static int parse_seq(parser *ps) {
  int seq = newnode(ps, N_SEQ);
  int last = -1;   /* the item a quantifier applies to */
  for (;;) {
    skip_verbose(ps);
    if (at_end(ps)) break;
    uint32_t c = peek(ps);
    if (c == '|' || c == ')') break;
    int start = ps->i;
    int mn = -2, mx = 0;
    if (c == '*') { mn = 0; mx = REPEAT_INF; ps->i++; }
    else if (c == '+') { mn = 1; mx = REPEAT_INF; ps->i++; }
    else if (c == '?') { mn = 0; mx = 1; ps->i++; }
    else if (c == '{') {
      int r = parse_brace(ps, &mn, &mx);
      if (r < 0) return -1;
      if (r == 0) mn = -2;
    }
    if (mn != -2) {
      if (last < 0 || ps->nodes[last].kind == N_AT || ps->nodes[last].kind == N_EMPTY)
        return perr(ps, start, "nothing to repeat");
      if (ps->nodes[last].kind == N_REPEAT) return perr(ps, start, "multiple repeat");
      int rp = newnode(ps, N_REPEAT);
      ps->nodes[rp].a = mn;
      ps->nodes[rp].b = mx;
      if (!at_end(ps) && peek(ps) == '?') { ps->nodes[rp].greedy = 0; ps->i++; }
      else if (!at_end(ps) && peek(ps) == '+') { ps->nodes[rp].possessive = 1; ps->i++; }
      /* replace last by the repeat */
      node *sq = &ps->nodes[seq];
      int prev = -1;
      for (int k = sq->child; k != last; k = ps->nodes[k].next) prev = k;
      ps->nodes[last].next = -1;
      ps->nodes[rp].child = ps->nodes[rp].last = last;
      if (prev < 0) ps->nodes[seq].child = rp;
      else ps->nodes[prev].next = rp;
      ps->nodes[seq].last = rp;
      last = rp;
      continue;
    }
    int item;
    if (c == '(') {
      item = parse_group(ps);
      if (item < 0) return -1;
      if (ps->nodes[item].kind == N_EMPTY) continue;
    } else if (c == '[') {
      item = parse_class(ps);
      if (item < 0) return -1;
    } else if (c == '.') {
      ps->i++;
      item = newnode(ps, N_ANY);
    } else if (c == '^') {
      ps->i++;
      item = newnode(ps, N_AT);
      ps->nodes[item].a = (ps->flags & F_M) ? AT_BEG_LINE : AT_BEG;
    } else if (c == '$') {
      ps->i++;
      item = newnode(ps, N_AT);
      ps->nodes[item].a = (ps->flags & F_M) ? AT_END_LINE : AT_END_DOLLAR;
    } else if (c == '\\') {
      uint32_t lit = 0;
      int cat = 0, at = 0, grp = 0;
      int r = parse_escape(ps, 0, &lit, &cat, &at, &grp);
      if (r < 0) return -1;
      if (r == 0) {
        item = newnode(ps, N_CHAR);
        ps->nodes[item].c = lit;
      } else if (r == 1) {
        int ki = newclass(ps->pr, ps->flags);
        ps->pr->cls[ki].cats = cat;
        item = newnode(ps, N_CLASS);
        ps->nodes[item].a = ki;
      } else if (r == 2) {
        item = newnode(ps, N_AT);
        ps->nodes[item].a = at;
      } else {
        item = newnode(ps, N_BACKREF);
        ps->nodes[item].a = grp;
      }
    } else {
      ps->i++;
      item = newnode(ps, N_CHAR);
      ps->nodes[item].c = c;
    }
    ps->global_ok = 0;
    addchild(ps, seq, item);
    last = item;
  }
  return seq;
}

static int parse_alt(parser *ps) {
  int first = parse_seq(ps);
  if (first < 0) return -1;
  if (at_end(ps) || peek(ps) != '|') return first;
  int alt = newnode(ps, N_ALT);
  addchild(ps, alt, first);
  while (!at_end(ps) && peek(ps) == '|') {
    ps->i++;
    ps->global_ok = 0;
    int s = parse_seq(ps);
    if (s < 0) return -1;
    addchild(ps, alt, s);
  }
  return alt;
}

/* ---- compiler ------------------------------------------------------------------------- */
static int emit(parser *ps, int op, int x, int y, int flags, uint32_t c) {
  prog *pr = ps->pr;
  if (pr->n >= MAXPROG) return perr(ps, 0, "pattern too large for tfsh's re (repeat counts too big)");
  if (pr->n == pr->cap) {
    pr->cap = pr->cap ? pr->cap * 2 : 64;
    inst *k = realloc(pr->code, sizeof(inst) * (size_t)pr->cap);
    if (!k) abort();
    pr->code = k;
  }
  pr->code[pr->n] = (inst){op, x, y, flags, c};
  return pr->n++;
}

static int nullable(parser *ps, int nd) {
  node *x = &ps->nodes[nd];
  switch (x->kind) {
    case N_CHAR: case N_ANY: case N_CLASS: return 0;
    case N_SEQ: case N_GROUP: case N_ATOMIC:
      for (int k = x->child; k >= 0; k = ps->nodes[k].next) if (!nullable(ps, k)) return 0;
      return 1;
    case N_ALT:
      for (int k = x->child; k >= 0; k = ps->nodes[k].next) if (nullable(ps, k)) return 1;
      return 0;
    case N_REPEAT: return x->a == 0 || nullable(ps, x->child);
    case N_COND: return nullable(ps, x->child) || x->child == x->last || nullable(ps, x->last);
    default: return 1;
  }
}

/* Fixed width of a subpattern, or -1. */
static int width(parser *ps, int nd) {
  node *x = &ps->nodes[nd];
  switch (x->kind) {
    case N_CHAR: case N_ANY: case N_CLASS: return 1;
    case N_SEQ: case N_GROUP: case N_ATOMIC: {
      long w = 0;
      for (int k = x->child; k >= 0; k = ps->nodes[k].next) {
        int cw = width(ps, k);
        if (cw < 0) return -1;
        w += cw;
        if (w > MAXPROG) return -1;
      }
      return (int)w;
    }
    case N_ALT: {
      int w = -2;
      for (int k = x->child; k >= 0; k = ps->nodes[k].next) {
        int cw = width(ps, k);
        if (cw < 0 || (w != -2 && cw != w)) return -1;
        w = cw;
      }
      return w < 0 ? 0 : w;
    }
    case N_REPEAT: {
      if (x->a != x->b) return -1;
      int cw = width(ps, x->child);
      if (cw < 0 || (long)cw * x->a > MAXPROG) return -1;
      return cw * x->a;
    }
    case N_BACKREF: {   /* the referenced group's width, computed once (node.b caches it) */
      int g = ps->gnode[x->a];
      if (g < 0) return -1;
      if (!ps->nodes[g].b) ps->nodes[g].b = width(ps, g) + 2;
      return ps->nodes[g].b - 2;
    }
    case N_COND: {
      int a = width(ps, x->child), b = x->child == x->last ? 0 : width(ps, x->last);
      return a == b ? a : -1;
    }
    default: return 0;
  }
}

static int compile_node(parser *ps, int nd);

/* x{min,max}: min copies, then optional iterations. When x can match empty, a mark register
 * holds where the last iteration started and an optional iteration is tried only when the
 * position moved since (CPython's rule, which also ends (a*)* loops). */
static int compile_repeat(parser *ps, int nd) {
  node x = ps->nodes[nd];
  int body = x.child;
  if (x.possessive) {
    int at = emit(ps, I_ATOMIC, 0, 0, 0, 0);
    if (at < 0) return -1;
    ps->nodes[nd].possessive = 0;
    int r = compile_repeat(ps, nd);
    ps->nodes[nd].possessive = 1;
    if (r < 0 || emit(ps, I_SUCCEED, 0, 0, 0, 0) < 0) return -1;
    ps->pr->code[at].x = ps->pr->n;
    return 0;
  }
  int null = nullable(ps, body);
  int mk = -1;
  if (null) {
    mk = 2 * (ps->pr->ngroups + 1) + ps->pr->nmarks++;
    if (emit(ps, I_MARK, mk, 1, 0, 0) < 0) return -1;   /* y=1: reset to -1 */
  }
  for (int k = 0; k < x.a; k++) {
    if (null && emit(ps, I_MARK, mk, 0, 0, 0) < 0) return -1;
    if (compile_node(ps, body) < 0) return -1;
  }
  int opt = x.b == REPEAT_INF ? 1 : x.b - x.a;
  int *fix = malloc(sizeof(int) * (size_t)(2 * opt + 1));
  if (!fix) abort();
  int nfix = 0, rc = 0;
  int L = -1;
  for (int k = 0; k < opt && rc == 0; k++) {
    if (null) {
      int c = emit(ps, I_LOOPCHK, 0, 0, mk, 0);
      if (c < 0) { rc = -1; break; }
      ps->pr->code[c].x = c + 1;
      fix[nfix++] = c;
      if (L < 0) L = c;
    }
    int sp = emit(ps, I_SPLIT, 0, 0, 0, 0);
    if (sp < 0) { rc = -1; break; }
    if (L < 0) L = sp;
    ps->pr->code[sp].x = sp + 1;
    fix[nfix++] = sp;
    if (null && emit(ps, I_MARK, mk, 0, 0, 0) < 0) { rc = -1; break; }
    if (compile_node(ps, body) < 0) { rc = -1; break; }
  }
  if (rc == 0 && x.b == REPEAT_INF && emit(ps, I_JMP, L, 0, 0, 0) < 0) rc = -1;
  if (rc == 0) {
    int out = ps->pr->n;
    for (int k = 0; k < nfix; k++) {
      inst *s = &ps->pr->code[fix[k]];
      if (s->op == I_LOOPCHK) s->y = out;
      else if (x.greedy) s->y = out;
      else { s->y = s->x; s->x = out; }
    }
  }
  free(fix);
  return rc;
}

static int compile_node(parser *ps, int nd) {
  node x = ps->nodes[nd];
  switch (x.kind) {
    case N_EMPTY: return 0;
    case N_CHAR:
      return emit(ps, I_CHAR, 0, 0, x.flags, (x.flags & F_I) ? fold1(x.c, ps->pr->bytes || (x.flags & F_A)) : x.c) < 0 ? -1 : 0;
    case N_ANY: return emit(ps, I_ANY, 0, 0, x.flags, 0) < 0 ? -1 : 0;
    case N_CLASS: return emit(ps, I_CLASS, x.a, 0, x.flags, 0) < 0 ? -1 : 0;
    case N_AT: return emit(ps, I_AT, x.a, 0, x.flags, 0) < 0 ? -1 : 0;
    case N_BACKREF: return emit(ps, I_BACKREF, x.a, 0, x.flags, 0) < 0 ? -1 : 0;
    case N_SEQ:
      for (int k = x.child; k >= 0; k = ps->nodes[k].next)
        if (compile_node(ps, k) < 0) return -1;
      return 0;
    case N_GROUP:
      if (x.a && emit(ps, I_SAVE, 2 * x.a, 0, 0, 0) < 0) return -1;
      if (compile_node(ps, x.child) < 0) return -1;
      if (x.a && emit(ps, I_SAVE, 2 * x.a + 1, 0, 0, 0) < 0) return -1;
      return 0;
    case N_ALT: {
      int nj = 0;
      int cnt = 0;
      for (int k = x.child; k >= 0; k = ps->nodes[k].next) cnt++;
      int *js = malloc(sizeof(int) * (size_t)cnt);
      if (!js) abort();
      int rc = 0;
      for (int k = x.child; k >= 0; k = ps->nodes[k].next) {
        int sp = -1;
        if (ps->nodes[k].next >= 0) { sp = emit(ps, I_SPLIT, 0, 0, 0, 0); if (sp < 0) { rc = -1; break; } ps->pr->code[sp].x = sp + 1; }
        if (compile_node(ps, k) < 0) { rc = -1; break; }
        if (ps->nodes[k].next >= 0) {
          int j = emit(ps, I_JMP, 0, 0, 0, 0);
          if (j < 0) { rc = -1; break; }
          js[nj++] = j;
          ps->pr->code[sp].y = ps->pr->n;
        }
      }
      if (rc == 0) for (int k = 0; k < nj; k++) ps->pr->code[js[k]].x = ps->pr->n;
      free(js);
      return rc;
    }
    case N_REPEAT: return compile_repeat(ps, nd);
    case N_LOOK: {
      int w = 0;
      if (x.b) {
        w = width(ps, x.child);
        if (w < 0) return perr(ps, -1, "look-behind requires fixed-width pattern");
      }
      int l = emit(ps, I_LOOK, 0, w, x.a | (x.b ? 2 : 0), 0);
      if (l < 0 || compile_node(ps, x.child) < 0 || emit(ps, I_SUCCEED, 0, 0, 0, 0) < 0) return -1;
      ps->pr->code[l].x = ps->pr->n;
      return 0;
    }
    case N_COND: {
      int c = emit(ps, I_COND, 0, x.a, 0, 0);
      if (c < 0 || compile_node(ps, x.child) < 0) return -1;
      int j = emit(ps, I_JMP, 0, 0, 0, 0);
      if (j < 0) return -1;
      ps->pr->code[c].x = ps->pr->n;
      if (x.last != x.child && compile_node(ps, x.last) < 0) return -1;
      ps->pr->code[j].x = ps->pr->n;
      return 0;
    }
    case N_ATOMIC: {
      int l = emit(ps, I_ATOMIC, 0, 0, 0, 0);
      if (l < 0 || compile_node(ps, x.child) < 0 || emit(ps, I_SUCCEED, 0, 0, 0, 0) < 0) return -1;
      ps->pr->code[l].x = ps->pr->n;
      return 0;
    }
  }
  return 0;
}

/* ---- the machine ---------------------------------------------------------------------- */
typedef struct { int pc, slot; int64_t val; } bt;
typedef struct {
  const prog *pr;
  const uint32_t *s;
  int64_t n;          /* endpos */
  int full, must_advance;
  int64_t search_start;
  bt *stack;
  int64_t sp, cap;
  int64_t steps, budget;
  int over;
  const char *pattern_repr;
} vm;

static void push(vm *m, int pc, int slot, int64_t val) {
  if (m->sp == m->cap) {
    m->cap = m->cap ? m->cap * 2 : 256;
    bt *k = realloc(m->stack, sizeof(bt) * (size_t)m->cap);
    if (!k) abort();
    m->stack = k;
  }
  m->stack[m->sp++] = (bt){pc, slot, val};
}
static void setreg(vm *m, int64_t *regs, int slot, int64_t v) {
  push(m, -1, slot, regs[slot]);
  regs[slot] = v;
}

static int word_at(vm *m, int64_t i, int flags) {
  return i >= 0 && i < m->n && is_word(m->s[i], ascii_mode(m->pr, flags));
}
static int at_ok(vm *m, int which, int flags, int64_t pos) {
  switch (which) {
    case AT_BEG: case AT_BEG_STR: return pos == 0;
    case AT_BEG_LINE: return pos == 0 || m->s[pos - 1] == '\n';
    case AT_END: return pos == m->n;
    case AT_END_DOLLAR: return pos == m->n || (pos == m->n - 1 && m->s[pos] == '\n');
    case AT_END_LINE: return pos == m->n || m->s[pos] == '\n';
    case AT_WORDB: return word_at(m, pos - 1, flags) != word_at(m, pos, flags);
    case AT_NWORDB: return m->n > 0 && word_at(m, pos - 1, flags) == word_at(m, pos, flags);
  }
  return 0;
}

/* Run from pc at pos. 1: reached SUCCEED/MATCH (*endp set, regs hold the captures),
 * 0: no match, -1: out of steps. The stack above its entry height is its own. */
static int run(vm *m, int pc, int64_t pos, int64_t *regs, int64_t *endp) {
  int64_t base = m->sp;
  const inst *code = m->pr->code;
  int nregs = m->pr->nregs;
  for (;;) {
    if (++m->steps > m->budget) { m->over = 1; m->sp = base; return -1; }
    const inst *k = &code[pc];
    int ok = 1;
    switch (k->op) {
      case I_CHAR:
        if (pos < m->n) {
          uint32_t c = m->s[pos];
          if (k->flags & F_I) c = fold1(c, ascii_mode(m->pr, k->flags));
          if (c == k->c) { pos++; pc++; break; }
        }
        ok = 0;
        break;
      case I_ANY:
        if (pos < m->n && ((k->flags & F_S) || m->s[pos] != '\n')) { pos++; pc++; }
        else ok = 0;
        break;
      case I_CLASS:
        if (pos < m->n && class_match(m->pr, &m->pr->cls[k->x], m->s[pos])) { pos++; pc++; }
        else ok = 0;
        break;
      case I_SPLIT:
        push(m, k->y, 0, pos);
        pc = k->x;
        break;
      case I_JMP: pc = k->x; break;
      case I_SAVE:
        setreg(m, regs, k->x, pos);
        if ((k->x & 1) && k->x > 1) setreg(m, regs, nregs - 1, k->x / 2);
        pc++;
        break;
      case I_MARK: setreg(m, regs, k->x, k->y ? -1 : pos); pc++; break;
      case I_LOOPCHK: pc = pos == regs[k->flags] ? k->y : k->x; break;
      case I_AT:
        if (at_ok(m, k->x, k->flags, pos)) pc++;
        else ok = 0;
        break;
      case I_BACKREF: {
        int64_t s0 = regs[2 * k->x], e0 = regs[2 * k->x + 1];
        if (s0 < 0 || e0 < 0 || pos + (e0 - s0) > m->n) { ok = 0; break; }
        int ascii = ascii_mode(m->pr, k->flags);
        for (int64_t t = 0; t < e0 - s0 && ok; t++) {
          uint32_t a = m->s[s0 + t], b = m->s[pos + t];
          if (a != b && (!(k->flags & F_I) || lower_of(a, ascii) != lower_of(b, ascii))) ok = 0;
        }
        if (ok) { pos += e0 - s0; pc++; }
        break;
      }
      case I_LOOK: case I_ATOMIC: {
        int neg = k->op == I_LOOK && (k->flags & 1);
        int64_t at = pos;
        int r = 0;
        int64_t *copy = malloc(sizeof(int64_t) * (size_t)nregs);
        if (!copy) abort();
        memcpy(copy, regs, sizeof(int64_t) * (size_t)nregs);
        int64_t end = pos;
        if (k->op == I_LOOK && (k->flags & 2)) at = pos - k->y;
        if (at >= 0) r = run(m, pc + 1, at, copy, &end);   /* a fixed-width look-behind ends at pos */
        if (r < 0) { free(copy); m->sp = base; return -1; }
        if (r == 1 && !neg) {
          for (int t = 0; t < nregs; t++)
            if (copy[t] != regs[t]) setreg(m, regs, t, copy[t]);
          if (k->op == I_ATOMIC) pos = end;
        }
        free(copy);
        if (r == (neg ? 0 : 1)) pc = k->x;
        else ok = 0;
        break;
      }
      case I_COND:
        pc = regs[2 * k->y] >= 0 && regs[2 * k->y + 1] >= 0 ? pc + 1 : k->x;
        break;
      case I_SUCCEED:
        *endp = pos;
        m->sp = base;
        return 1;
      case I_MATCH:
        if ((m->full && pos != m->n) || (m->must_advance && regs[0] == m->search_start && pos == regs[0])) { ok = 0; break; }
        *endp = pos;
        m->sp = base;
        return 1;
    }
    if (ok) continue;
    /* backtrack */
    for (;;) {
      if (m->sp == base) return 0;
      bt e = m->stack[--m->sp];
      if (e.pc < 0) { regs[e.slot] = e.val; continue; }
      pc = e.pc;
      pos = e.val;
      break;
    }
  }
}

/* ---- objects -------------------------------------------------------------------------- */
typedef struct { sh_obj head; prog *pr; } prog_obj;

static void prog_free(prog *pr) {
  if (!pr) return;
  for (int k = 0; k < pr->ncls; k++) free(pr->cls[k].r);
  free(pr->cls);
  free(pr->code);
  free(pr->repr);
  free(pr);
}
static void prog_destroy(sh_obj *o) { prog_free(((prog_obj *)o)->pr); }
static sh_type prog_type = {SH_TYPE_HEAD, .name = "_re_program", .size = sizeof(prog_obj), .destroy = prog_destroy};

/* str or bytes -> code points (malloc'd), count in *n. */
static uint32_t *decode(sh_obj *o, int64_t *n, int *is_bytes) {
  if (sh_is_bytes(o)) {
    int64_t len = sh_bytes_len(o);
    uint32_t *u = malloc(sizeof(uint32_t) * (size_t)(len + 1));
    if (!u) abort();
    const unsigned char *b = (const unsigned char *)sh_bytes_data(o);
    for (int64_t k = 0; k < len; k++) u[k] = b[k];
    *n = len;
    *is_bytes = 1;
    return u;
  }
  if (!sh_is_str(o)) {
    sh_raise(sh_TypeError, "expected string or bytes-like object, got '%s'", sh_type_name(o));
    return NULL;
  }
  const sh_str_obj *s = (const sh_str_obj *)o;
  uint32_t *u = malloc(sizeof(uint32_t) * (size_t)(s->nchars + 1));
  if (!u) abort();
  const unsigned char *b = (const unsigned char *)s->s;
  int64_t k = 0;
  for (int64_t i = 0; i < s->len && k < s->nchars;) {
    uint32_t c = b[i];
    int extra = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : 0;
    if (extra) c &= (0x3F >> extra);
    i++;
    for (int t = 0; t < extra && i < s->len; t++) c = (c << 6) | (b[i++] & 0x3F);
    u[k++] = c;
  }
  *n = k;
  *is_bytes = 0;
  return u;
}

static sh_obj *re_compile(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  (void)self;
  sh_obj *pat, *fl;
  if (sh_parse_args("_compile", argc, argv, kw, "pattern flags", &pat, &fl) < 0) return NULL;
  int64_t flags;
  if (sh_as_int(fl, &flags) < 0) return NULL;
  int64_t n;
  int isb;
  uint32_t *u = decode(pat, &n, &isb);
  if (!u) return NULL;
  if (n > 1 << 24) { free(u); return sh_raise(sh_ValueError, "pattern too long"); }
  parser ps;
  memset(&ps, 0, sizeof ps);
  ps.p = u;
  ps.n = (int)n;
  ps.flags = (int)flags;
  ps.global_ok = 1;
  ps.groupindex = sh_dict_new();
  ps.gcap = 16;
  ps.gopen = calloc(16, 1);
  ps.gnode = calloc(16, sizeof(int));
  prog *pr = calloc(1, sizeof *pr);
  if (!pr || !ps.gopen || !ps.gnode) abort();
  pr->bytes = isb;
  ps.pr = pr;
  /* A lone backslash at the end: CPython's tokenizer reads one token ahead, so that error
   * wins over any found once the parser got to the token before it. */
  int lone = -1;
  for (int k = 0; k < ps.n; k += ps.p[k] == '\\' ? 2 : 1)
    if (ps.p[k] == '\\' && k == ps.n - 1) lone = k;
  if (lone >= 0) ps.n = lone;
  int root = parse_alt(&ps);
  if (root >= 0 && !at_end(&ps)) {
    if (peek(&ps) == ')') perr(&ps, ps.i, "unbalanced parenthesis");
    else perr(&ps, ps.i, "internal error");
  }
  if (!ps.err) {
    /* flags from a global (?x) group apply to everything: reparse with them when new */
    if ((ps.flags & ~(int)flags) != 0) {
      int nf = ps.flags;
      free(ps.nodes);
      ps.nodes = NULL; ps.nn = ps.ncap = 0;
      for (int k = 0; k < pr->ncls; k++) free(pr->cls[k].r);
      pr->ncls = 0;
      sh_decref(ps.groupindex);
      ps.groupindex = sh_dict_new();
      ps.ngroups = 0;
      ps.i = 0;
      ps.flags = nf;
      ps.global_ok = 1;
      root = parse_alt(&ps);
    }
  }
  if (!ps.err && ps.condref > ps.ngroups) perr(&ps, ps.condpos, "invalid group reference %d", ps.condref);
  if (lone >= 0 && (!ps.err || ps.errat >= lone)) {
    ps.err = NULL;
    ps.i = lone;
    perr(&ps, lone, "bad escape (end of pattern)");
  }
  if (!ps.err && isb && (ps.flags & F_U)) perr(&ps, 0, "cannot use UNICODE flag with a bytes pattern");
  if (!ps.err && (ps.flags & F_A) && (ps.flags & F_U)) perr(&ps, 0, "ASCII and UNICODE flags are incompatible");
  if (!ps.err) {
    pr->ngroups = ps.ngroups;
    pr->flags = ps.flags;
    if (emit(&ps, I_SAVE, 0, 0, 0, 0) >= 0 && compile_node(&ps, root) >= 0 && emit(&ps, I_SAVE, 1, 0, 0, 0) >= 0)
      emit(&ps, I_MATCH, 0, 0, 0, 0);
  }
  free(ps.nodes);
  free(ps.gopen);
  free(ps.gnode);
  free(u);
  if (ps.err) {
    prog_free(pr);
    sh_decref(ps.groupindex);
    return sh_tuple_of(3, sh_none(), sh_str(ps.err), ps.errpos < 0 ? sh_none() : sh_int(ps.errpos));
  }
  pr->nregs = 2 * (pr->ngroups + 1) + pr->nmarks + 1;
  pr->first = 0xFFFFFFFF;
  if (pr->n > 1 && pr->code[1].op == I_CHAR && !(pr->code[1].flags & F_I)) pr->first = pr->code[1].c;
  int outflags = ps.flags;
  if (!isb && !(outflags & F_A)) outflags |= F_U;
  pr->flags = outflags;
  sh_obj *r = sh_repr(pat);
  if (!r) { prog_free(pr); sh_decref(ps.groupindex); return NULL; }
  const char *rs = sh_str_cstr(r);
  pr->repr = sh_str_len(r) > 80 ? strndup(rs, 77) : strdup(rs);
  if (!pr->repr) abort();
  if (sh_str_len(r) > 80) {
    char *t = realloc(pr->repr, 81);
    if (!t) abort();
    strcat(t, "...");
    pr->repr = t;
  }
  sh_decref(r);
  prog_obj *po = sh_new(&prog_type);
  po->pr = pr;
  return sh_tuple_of(4, (sh_obj *)po, sh_int(pr->ngroups), ps.groupindex, sh_int(outflags));
}

static sh_obj *result_list(const prog *pr, const int64_t *regs) {
  int ng = pr->ngroups;
  sh_obj *l = sh_list_new(0);
  for (int k = 0; k < 2 * (ng + 1); k++) {
    int64_t a = regs[k];
    /* a group counts only when both ends are set */
    if (regs[k & ~1] < 0 || regs[k | 1] < 0) a = -1;
    sh_list_append_steal(l, sh_int(a));
  }
  int64_t li = regs[pr->nregs - 1];
  sh_list_append_steal(l, li > 0 ? sh_int(li) : sh_none());
  return l;
}

typedef struct {
  prog *pr;
  uint32_t *u;
  int64_t n;
  int64_t pos, endpos;
  int owned;     /* u is this call's own (else it is the cache's) */
} subject;

/* The last long subject and its code points: a tokenizer calling pattern.match(s, pos) along
 * a long s decodes it once, not once per call (strs and bytes are immutable). */
static sh_obj *cache_obj;
static uint32_t *cache_u;
static int64_t cache_n;
static int cache_isb;

static void subject_free(subject *sj) {
  if (sj->owned) free(sj->u);
  sj->u = NULL;
}

static int get_subject(sh_obj *po, sh_obj *str, sh_obj *pos, sh_obj *endpos, subject *sj) {
  if (po->type != &prog_type) { sh_raise(sh_TypeError, "not a compiled pattern"); return -1; }
  sj->pr = ((prog_obj *)po)->pr;
  int isb;
  if (str == cache_obj) {
    sj->u = cache_u;
    sj->n = cache_n;
    isb = cache_isb;
    sj->owned = 0;
  } else {
    sj->u = decode(str, &sj->n, &isb);
    if (!sj->u) return -1;
    sj->owned = 1;
    if (sj->n >= 1024) {
      sh_decref(cache_obj);
      free(cache_u);
      cache_obj = sh_incref(str);
      cache_u = sj->u;
      cache_n = sj->n;
      cache_isb = isb;
      sj->owned = 0;
    }
  }
  if (isb != sj->pr->bytes) {
    subject_free(sj);
    sh_raise(sh_TypeError, isb ? "cannot use a string pattern on a bytes-like object" : "cannot use a bytes pattern on a string-like object");
    return -1;
  }
  int64_t p = 0, e = sj->n;
  if (pos != SH_NONE && sh_as_int(pos, &p) < 0) { subject_free(sj); return -1; }
  if (endpos != SH_NONE && sh_as_int(endpos, &e) < 0) { subject_free(sj); return -1; }
  if (p < 0) p = 0;
  if (p > sj->n) p = sj->n;
  if (e < 0) e = 0;
  if (e > sj->n) e = sj->n;
  sj->pos = p;
  sj->endpos = e;
  return 0;
}

static sh_obj *re_error;   /* re.error, once the module's source has run */

/* The step budget is spent: re.error (the message says why and what to do). */
static void raise_budget(vm *m) {
  sh_obj *msg = sh_strf("the pattern needs too many backtracking steps on this string (more than %lld); "
                        "%s backtracks catastrophically (nested or overlapping repeats such as (a+)+): rewrite it",
                        (long long)m->budget, m->pattern_repr);
  if (!re_error) { sh_raise(sh_RuntimeError, "%s", sh_str_cstr(msg)); sh_decref(msg); return; }
  sh_obj *e = sh_call(re_error, 1, &msg, NULL);
  sh_decref(msg);
  if (e) {
    sh_raise_obj(e);
    sh_decref(e);
  }
}

/* One match attempt (mode 0 at pos, 1 search, 2 full) into regs; 1/0/-1 (raised). */
static int exec1(vm *m, subject *sj, int64_t *regs, int64_t pos, int mode, int must_advance) {
  m->full = mode == 2;
  m->must_advance = must_advance;
  m->search_start = pos;
  const prog *pr = sj->pr;
  for (int64_t st = pos; st <= m->n; st++) {
    if (mode == 1 && pr->first != 0xFFFFFFFF) {
      while (st < m->n && m->s[st] != pr->first) st++;
      if (st >= m->n) return 0;
    }
    for (int k = 0; k < pr->nregs; k++) regs[k] = -1;
    int64_t end;
    int r = run(m, 0, st, regs, &end);
    if (r < 0) {
      raise_budget(m);
      return -1;
    }
    if (r == 1) return 1;
    if (mode != 1) return 0;
    if (sh_check_interrupt() < 0) return -1;
  }
  return 0;
}

static void vm_init(vm *m, subject *sj) {
  memset(m, 0, sizeof *m);
  m->pr = sj->pr;
  m->s = sj->u;
  m->n = sj->endpos;
  m->budget = step_budget > 100 * sj->n ? step_budget : 100 * sj->n;   /* per match */
  m->pattern_repr = sj->pr->repr;
}

static sh_obj *re_exec(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  (void)self;
  sh_obj *po, *str, *pos = SH_NONE, *endpos = SH_NONE, *mode = NULL, *adv = NULL;
  if (sh_parse_args("_exec", argc, argv, kw, "prog string pos endpos mode |must_advance", &po, &str, &pos, &endpos, &mode, &adv) < 0) return NULL;
  int64_t md, ma = 0;
  if (sh_as_int(mode, &md) < 0 || (adv && sh_as_int(adv, &ma) < 0)) return NULL;
  subject sj;
  if (get_subject(po, str, pos, endpos, &sj) < 0) return NULL;
  vm m;
  vm_init(&m, &sj);
  int64_t *regs = malloc(sizeof(int64_t) * (size_t)sj.pr->nregs);
  if (!regs) abort();
  sh_obj *res = NULL;
  int r = sj.pos > sj.endpos ? 0 : exec1(&m, &sj, regs, sj.pos, (int)md, (int)ma);
  if (r == 1) res = result_list(sj.pr, regs);
  else if (r == 0) res = sh_none();
  free(regs);
  free(m.stack);
  subject_free(&sj);
  return res;
}

/* All non-overlapping matches from pos (finditer's rule: after an empty match the next one
 * may start there but must not be empty). limit 0: no limit. */
/* The bytes of the subject between code points a and b (str or bytes). */
typedef struct {
  const char *data;     /* the str's UTF-8 or the bytes */
  int64_t *off;         /* code point -> byte offset, for a str that is not ASCII */
  int isb;
} text;

static void text_init(text *t, sh_obj *str, const subject *sj) {
  t->isb = sh_is_bytes(str);
  t->data = t->isb ? sh_bytes_data(str) : sh_str_cstr(str);
  t->off = NULL;
  if (!t->isb && ((sh_str_obj *)str)->len != sj->n) {
    t->off = malloc(sizeof(int64_t) * (size_t)(sj->n + 1));
    if (!t->off) abort();
    const unsigned char *b = (const unsigned char *)t->data;
    int64_t len = ((sh_str_obj *)str)->len, k = 0;
    for (int64_t i = 0; i < len && k < sj->n; i++)
      if ((b[i] & 0xC0) != 0x80) t->off[k++] = i;
    while (k <= sj->n) t->off[k++] = len;
  }
}
static int64_t text_at(const text *t, int64_t cp) { return t->off ? t->off[cp] : cp; }
static sh_obj *text_slice(const text *t, int64_t a, int64_t b) {
  int64_t x = text_at(t, a), y = text_at(t, b);
  return t->isb ? sh_bytes(t->data + x, (size_t)(y - x)) : sh_strn(t->data + x, (size_t)(y - x));
}

typedef struct { char *p; size_t n, cap; } buf;
static void buf_add(buf *b, const char *s, size_t n) {
  if (b->n + n + 1 > b->cap) {
    b->cap = (b->n + n + 1) * 2;
    char *q = realloc(b->p, b->cap);
    if (!q) abort();
    b->p = q;
  }
  memcpy(b->p + b->n, s, n);
  b->n += n;
}

/* One findall item: the whole match, group 1, or the tuple of the groups ('' unmatched). */
static sh_obj *findall_item(const prog *pr, const text *t, const int64_t *regs) {
  int ng = pr->ngroups;
  if (ng == 0) return text_slice(t, regs[0], regs[1]);
  if (ng == 1) return regs[2] >= 0 && regs[3] >= 0 ? text_slice(t, regs[2], regs[3]) : text_slice(t, 0, 0);
  sh_obj *tu = sh_tuple_new(ng);
  for (int g = 1; g <= ng; g++) {
    int64_t a = regs[2 * g], b = regs[2 * g + 1];
    ((sh_tuple_obj *)tu)->items[g - 1] = a >= 0 && b >= 0 ? text_slice(t, a, b) : text_slice(t, 0, 0);
  }
  return tu;
}

/* All non-overlapping matches from pos (finditer's rule: after an empty match the next one
 * may start there but must not be empty); limit 0: no limit. what 0: a list of span lists;
 * 1: findall's list; 2: (the string with each match replaced by tpl, count), tpl a list of
 * literals (str or bytes like the subject) and group numbers. */
static sh_obj *re_scan(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  (void)self;
  sh_obj *po, *str, *pos = SH_NONE, *endpos = SH_NONE, *lim = NULL, *whato = NULL, *tpl = NULL;
  if (sh_parse_args("_scan", argc, argv, kw, "prog string pos endpos |limit what tpl", &po, &str, &pos, &endpos, &lim, &whato, &tpl) < 0) return NULL;
  int64_t limit = 0, what = 0;
  if ((lim && sh_as_int(lim, &limit) < 0) || (whato && sh_as_int(whato, &what) < 0)) return NULL;
  if (what == 2 && (!tpl || tpl->type != &sh_list_type)) return sh_raise(sh_TypeError, "_scan: the template must be a list");
  subject sj;
  if (get_subject(po, str, pos, endpos, &sj) < 0) return NULL;
  text t;
  if (what) text_init(&t, str, &sj);
  vm m;
  vm_init(&m, &sj);
  int64_t *regs = malloc(sizeof(int64_t) * (size_t)sj.pr->nregs);
  if (!regs) abort();
  sh_obj *out = sh_list_new(0);
  buf b = {0};
  int64_t p = sj.pos, last = 0;
  int adv = 0, failed = 0;
  int64_t count = 0;
  while (p <= sj.endpos && (limit <= 0 || count < limit)) {
    int r = exec1(&m, &sj, regs, p, 1, adv);
    if (r < 0) { failed = 1; break; }
    if (r == 0) break;
    if (what == 0) sh_list_append_steal(out, result_list(sj.pr, regs));
    else if (what == 1) sh_list_append_steal(out, findall_item(sj.pr, &t, regs));
    else {
      buf_add(&b, t.data + text_at(&t, last), (size_t)(text_at(&t, regs[0]) - text_at(&t, last)));
      for (int64_t k = 0; k < SH_LIST_N(tpl); k++) {
        sh_obj *part = SH_LIST_ITEMS(tpl)[k];
        if (sh_is_int(part)) {
          int64_t g = sh_int_value(part);
          if (g < 0 || g > sj.pr->ngroups) continue;
          int64_t x = regs[2 * g], y = regs[2 * g + 1];
          if (x >= 0 && y >= 0) buf_add(&b, t.data + text_at(&t, x), (size_t)(text_at(&t, y) - text_at(&t, x)));
        } else if (sh_is_str(part)) {
          buf_add(&b, sh_str_cstr(part), (size_t)sh_str_len(part));
        } else if (sh_is_bytes(part)) {
          buf_add(&b, sh_bytes_data(part), (size_t)sh_bytes_len(part));
        }
      }
      last = regs[1];
    }
    count++;
    adv = regs[1] == regs[0];
    m.steps = 0;
    p = regs[1];
  }
  if (failed) sh_clear(&out);
  else if (what == 2) {
    int64_t end = t.isb ? sh_bytes_len(str) : sh_str_len(str);
    buf_add(&b, t.data + text_at(&t, last), (size_t)(end - text_at(&t, last)));
    sh_decref(out);
    sh_obj *res = t.isb ? sh_bytes(b.p, b.n) : sh_strn(b.p, b.n);
    out = sh_tuple_of(2, res, sh_int(count));
  }
  free(b.p);
  if (what) free(t.off);
  free(regs);
  free(m.stack);
  subject_free(&sj);
  return out;
}

/* The step budget (tests and the fuzz target lower it); returns the previous one. */
static sh_obj *re_set_budget(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  (void)self;
  sh_obj *nb;
  if (sh_parse_args("_set_step_budget", argc, argv, kw, "steps", &nb) < 0) return NULL;
  int64_t v;
  if (sh_as_int(nb, &v) < 0) return NULL;
  if (v < 1) return sh_raise(sh_ValueError, "the step budget must be positive");
  int64_t old = step_budget;
  step_budget = v;
  return sh_int(old);
}

static const char re_src[] =
#include "shell/lang/re.py.inc"
;

static const sh_method re_funcs[] = {
    {"_compile_native", re_compile, "_compile_native(pattern, flags)", "Parses and compiles a pattern (re's engine)."},
    {"_exec", re_exec, "_exec(prog, string, pos, endpos, mode, must_advance=0)", "One match, search or fullmatch."},
    {"_set_step_budget", re_set_budget, "_set_step_budget(steps)", "Sets the matching step budget; returns the old one."},
    {"_scan", re_scan, "_scan(prog, string, pos, endpos, limit=0)", "All non-overlapping matches."},
    {NULL},
};

sh_obj *sh_mod_re_init(void) {
  sh_obj *m = sh_module_new("re");
  sh_module_add_funcs(m, re_funcs);
  if (sh_exec_string(re_src, "<re>", ((sh_module_obj *)m)->dict) < 0) {
    sh_decref(m);
    return NULL;
  }
  sh_obj *err = sh_dict_get_str(((sh_module_obj *)m)->dict, "error");
  if (err && !re_error) re_error = sh_incref(err);
  return m;
}
