/* The syntax tree. One node struct for every kind; the table below says which fields each
 * kind uses. Nodes live in an arena (sh_chunk) that the functions defined in it keep alive. */
#ifndef TFSH_SHELL_AST_H
#define TFSH_SHELL_AST_H

#include "shell/lang/value.h"

enum sh_node_kind {
  /* expressions                      fields used */
  E_CONST,        /* val: the constant (also None, True, False, Ellipsis) */
  E_NAME,         /* val: interned name; scope, slot: where it lives (resolved) */
  E_FSTRING,      /* list: parts (E_CONST str or E_FORMAT) */
  E_FORMAT,       /* a: value; op: conversion 'r', 's', 'a' or 0; b: spec (E_FSTRING) or NULL */
  E_TUPLE, E_LIST, E_SET, /* list: elements (may be E_STARRED) */
  E_DICT,         /* list: keys (NULL for **x), list2: values */
  E_ATTR,         /* a: object; val: interned attribute name */
  E_SUBSCRIPT,    /* a: object; b: index (E_SLICE, E_TUPLE of indexes, ...) */
  E_SLICE,        /* a, b, c: start, stop, step (each may be NULL) */
  E_CALL,         /* a: callee; list: positional args (E_STARRED for *x);
                     list2: E_KEYWORD (val: name, or NULL for **x; a: value) */
  E_KEYWORD,
  E_BINOP,        /* op: enum sh_binop; a, b */
  E_UNOP,         /* op: enum sh_unop; a */
  E_NOT,          /* a */
  E_AND, E_OR,    /* a, b */
  E_COMPARE,      /* a: first operand; list: the others; ops: CMP_* per comparison */
  E_IFEXP,        /* a: condition; b: value if true; c: value if false */
  E_LAMBDA,       /* fn */
  E_LISTCOMP, E_SETCOMP, E_GENEXP, /* a: element; list: E_COMPFOR clauses */
  E_DICTCOMP,     /* a: key; b: value; list: E_COMPFOR clauses */
  E_COMPFOR,      /* a: target; b: iterable; list: if-conditions */
  E_STARRED,      /* a */
  E_YIELD,        /* a: value or NULL */
  E_YIELDFROM,    /* a: iterable */
  /* statements */
  S_EXPR,         /* a; op: 1 when the REPL should echo the value */
  S_ASSIGN,       /* list: targets (a = b = value); a: value */
  S_AUGASSIGN,    /* op: enum sh_binop; a: target; b: value */
  S_ANNASSIGN,    /* a: target; b: value or NULL (annotation is dropped) */
  S_IF,           /* a: condition; list: body; list2: else body (an elif is an S_IF there) */
  S_WHILE,        /* a: condition; list: body; list2: else body */
  S_FOR,          /* a: target; b: iterable; list: body; list2: else body */
  S_BREAK, S_CONTINUE, S_PASS,
  S_RETURN,       /* a: value or NULL */
  S_DEF,          /* fn; list: decorators */
  S_CLASS,        /* val: name; list: bases; list2: body; fn: the body's scope; list3: decorators */
  S_TRY,          /* list: body; list2: S_HANDLER; list3: else body; list4: finally body */
  S_HANDLER,      /* a: exception class expression or NULL; val: `as` name or NULL; list: body */
  S_RAISE,        /* a: exception or NULL (re-raise); b: `from` cause or NULL */
  S_ASSERT,       /* a: condition; b: message or NULL */
  S_DEL,          /* list: targets */
  S_GLOBAL, S_NONLOCAL, /* names: interned names, nnames */
  S_IMPORT,       /* list: S_ALIAS */
  S_FROMIMPORT,   /* val: module name; list: S_ALIAS (val "*" for import *) */
  S_ALIAS,        /* val: dotted name; val2: `as` name or NULL */
  S_WITH,         /* list: S_WITHITEM; list2: body */
  S_WITHITEM,     /* a: context expression; b: target or NULL */
  SH_NODE_KIND_COUNT
};

/* Where a name lives, decided by the resolver (eval.c). */
enum sh_scope { SC_GLOBAL, SC_LOCAL, SC_CELL, SC_FREE, SC_CLASS };

typedef struct sh_node sh_node;
typedef struct sh_funcdef sh_funcdef;

typedef struct sh_nodelist { sh_node **v; int n; } sh_nodelist;

struct sh_node {
  uint16_t kind;
  int16_t op;
  int line, col;
  sh_node *a, *b, *c;
  sh_nodelist list, list2, list3, list4;
  sh_obj *val, *val2;     /* owned by the chunk */
  int *ops;               /* E_COMPARE */
  sh_obj **names;         /* S_GLOBAL, S_NONLOCAL */
  int nnames;
  sh_funcdef *fn;         /* S_DEF, E_LAMBDA, S_CLASS, comprehensions (resolver scope) */
  uint8_t scope;          /* E_NAME */
  int slot;               /* E_NAME: local slot or free-variable index */
};

/* Comparison operators of E_COMPARE beyond enum sh_cmpop. */
enum { CMP_IN = SH_CMPOP_COUNT, CMP_NOT_IN, CMP_IS, CMP_IS_NOT };

/* A function body, lambda, class body or module: a scope with its own slots. */
struct sh_funcdef {
  sh_obj *name;           /* interned: "f", "<lambda>", "<module>", class name */
  int line;
  const char *file;       /* the chunk's file name */
  const char *src;        /* the chunk's source text (traceback lines) */
  sh_nodelist body;       /* statements (a lambda: one S_RETURN) */
  /* parameters, in slot order: positional, keyword-only, *args, **kwargs */
  sh_obj **params;
  int nparams;            /* positional (including those with defaults) */
  int nkwonly;
  int vararg, kwarg;      /* slot of *args / **kwargs, or -1 */
  sh_nodelist defaults;   /* for the last defaults.n positional parameters */
  sh_node **kwdefaults;   /* nkwonly entries, NULL when required */
  sh_obj *doc;            /* docstring or NULL */
  bool is_class, is_module;
  bool is_generator;      /* contains yield: calling it makes a generator */
  int8_t flat;            /* a generator's shape (eval.c): 0 not looked at yet, -1 runs on a
                           * stack of its own, n > 0: n nested for/if levels and a yield */
  /* filled by the resolver */
  int nslots;
  sh_obj **slotnames;     /* nslots names (for errors and %who) */
  bool *is_cell;          /* slot holds a cell (captured by an inner function) */
  int nfree;
  sh_obj **freenames;
  struct sh_freevar { bool from_local; int index; } *freevars; /* where the creator finds each */
  sh_obj **globals_decl;  /* names declared global */
  int nglobals_decl;
  sh_funcdef *parent;
};

#endif
