/* The object model of tfsh's Python subset: reference-counted values, types with C hooks,
 * modules, exceptions, and the helpers native code (the tf and numpy bindings) needs.
 *
 * Conventions (CPython's, so they read familiar):
 *  - Every value is an sh_obj *. A function returning sh_obj * returns a NEW reference;
 *    the caller sh_decref()s it. NULL means "an exception was raised" (see sh_raise); the
 *    exception is pending in the interpreter until something handles it.
 *  - Arguments are BORROWED unless the function's comment says it "steals" them.
 *  - Functions returning int: 0 (or a count) on success, -1 with an exception pending.
 *  - The interpreter is single-threaded: call these only from the interpreter's thread.
 *  - Reference cycles (a list that contains itself, a closure stored in a global it
 *    captures) are not collected; they leak until exit. Everything else is freed.
 *  - int is a signed 64-bit integer: overflow raises OverflowError instead of growing.
 *
 * How to write a native module (see shell/lang/mod_math.c for a small complete one):
 *
 *   static sh_obj *my_add(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
 *     sh_obj *a, *b = NULL;                           // b optional: preset default
 *     if (sh_parse_args("add", argc, argv, kw, "a |b", &a, &b) < 0) return NULL;
 *     ...
 *   }
 *   static const sh_method my_funcs[] = {
 *     {"add", my_add, "add(a, b=None)", "Adds two things."},
 *     {NULL}
 *   };
 *   static sh_obj *my_init(void) {
 *     sh_obj *m = sh_module_new("mymod");
 *     sh_module_add_funcs(m, my_funcs);
 *     sh_module_add(m, "pi", sh_float(3.14159));      // steals the float
 *     return m;
 *   }
 *   void sh_modules_init_extra(void) { sh_register_module("mymod", my_init); }
 *
 * A native class is a static sh_type with hooks (every hook is optional):
 *
 *   sh_type my_tensor_type = {
 *     SH_TYPE_HEAD, .name = "Tensor", .size = sizeof(my_tensor),
 *     .destroy = tensor_destroy, .repr = tensor_repr, .getattr = tensor_getattr,
 *     .binop = tensor_binop, .unop = tensor_unop, .getitem = tensor_getitem,
 *     .methods = tensor_methods,
 *   };
 *   my_tensor *t = sh_new(&my_tensor_type);          // refcount 1, fields zeroed
 *
 * Binary operators: `a OP b` calls a's type's binop(op, a, b); if that is missing or returns
 * SH_NOTIMPL, b's type's binop(op, a, b) is tried with the SAME argument order — so one
 * hook serves `t * 2` and `2 * t` by looking at which operand is its own type. `a OP= b`
 * uses the same hook. None, True, False, SH_NOTIMPL and static types are immortal: return
 * them with or without sh_incref, it makes no difference.
 *
 * Errors: `return sh_raise(sh_ValueError, "bad shape %d", n);` raises and returns NULL.
 * Own exception classes: `static sh_type *InvalidArgumentError;` made once with
 * sh_exc_class_new("InvalidArgumentError", sh_Exception) and added to a module; scripts
 * catch them with `except tf.errors.InvalidArgumentError as e`.
 *
 * Classes that scripts subclass (SessionRunHook): sh_class_new(name, base, methods, help)
 * makes a class whose instances carry a __dict__; `class MyHook(tf.train.SessionRunHook)`
 * then overrides its methods, and native code calls them back with sh_call_method().
 *
 * Long native calls poll sh_check_interrupt() so that Ctrl-C cancels them.
 *
 * Linking: tfsh_core is a static archive, and a linker never pulls an archive member in to
 * replace a weak definition, so a strong sh_modules_init_extra only takes effect when its
 * object file is linked for certain (whole-archive link, or the file listed in the
 * executable's sources).
 */
#ifndef TFSH_SHELL_VALUE_H
#define TFSH_SHELL_VALUE_H

#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct sh_obj sh_obj;
typedef struct sh_type sh_type;

struct sh_obj {
  intptr_t refcnt;
  sh_type *type;
};

/* Static objects start with this refcount and are never freed. */
#define SH_IMMORTAL ((intptr_t)1 << 60)
#define SH_OBJ_HEAD(typ) {SH_IMMORTAL, (typ)}

void sh_dealloc(sh_obj *o);
static inline sh_obj *sh_incref(sh_obj *o) { if (o) o->refcnt++; return o; }
static inline void sh_decref(sh_obj *o) { if (o && --o->refcnt == 0) sh_dealloc(o); }
/* Decref *p and set it to NULL (czmq's destroy(&p) habit). */
static inline void sh_clear(sh_obj **p) { sh_obj *o = *p; *p = NULL; sh_decref(o); }
#define SH_INCREF(o) sh_incref((sh_obj *)(o))
#define SH_DECREF(o) sh_decref((sh_obj *)(o))

/* ---- operators ---------------------------------------------------------------------- */
enum sh_binop {
  SH_ADD, SH_SUB, SH_MUL, SH_TRUEDIV, SH_FLOORDIV, SH_MOD, SH_POW, SH_MATMUL,
  SH_LSHIFT, SH_RSHIFT, SH_BITAND, SH_BITOR, SH_BITXOR, SH_BINOP_COUNT
};
enum sh_unop { SH_NEG, SH_POS, SH_INVERT, SH_UNOP_COUNT };
enum sh_cmpop { SH_LT, SH_LE, SH_EQ, SH_NE, SH_GT, SH_GE, SH_CMPOP_COUNT };
extern const char *const sh_binop_symbol[SH_BINOP_COUNT];   /* "+", "-", ... */
extern const char *const sh_cmpop_symbol[SH_CMPOP_COUNT];   /* "<", ... */

/* ---- native functions --------------------------------------------------------------- */
/* A native function or method. self: the bound object (methods), the module (module
 * functions) or NULL. argv[0..argc): positional arguments (borrowed). kw: a dict of
 * keyword arguments, or NULL when there are none. */
typedef sh_obj *(*sh_cfunc)(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw);

/* A row of a function or method table; tables end with a {NULL} row.
 * sig is shown by `name?` and completion ("matmul(a, b, transpose_a=False, ...)"),
 * help is one line. */
typedef struct sh_method {
  const char *name;
  sh_cfunc fn;
  const char *sig;
  const char *help;
} sh_method;

/* ---- types -------------------------------------------------------------------------- */
struct sh_type {
  sh_obj head;                 /* types are objects: type(x) returns one */
  const char *name;            /* "Tensor" (type(x).__name__) */
  sh_type *base;               /* NULL means object */
  size_t size;                 /* instance size for sh_new(); must start with sh_obj */
  const char *help;            /* one line, for `Tensor?` */
  const sh_method *methods;    /* bound to the instance on attribute access */
  /* Names the getattr hook serves (NULL-terminated), so dir() and Tab completion know
   * them: {"shape", "dtype", "name", NULL}. */
  const char *const *attr_names;

  /* Hooks. All optional. Those returning sh_obj * return a new reference or NULL with an
   * exception raised, unless noted. */
  void (*destroy)(sh_obj *self);                    /* release what self owns; not self */
  sh_obj *(*repr)(sh_obj *self);                    /* must return a str */
  sh_obj *(*str)(sh_obj *self);                     /* default: repr */
  /* Attribute lookup before methods and the instance dict. Return NULL WITHOUT raising
   * when the name is not yours, so lookup continues. */
  sh_obj *(*getattr)(sh_obj *self, const char *name);
  /* 0: done, -1: exception, 1: not handled here (falls back to the instance dict). */
  int (*setattr)(sh_obj *self, const char *name, sh_obj *value);
  sh_cfunc call;                                    /* obj(...); self is the object */
  /* T(...) for a native class: self is the type. Default for classes made by `class` and
   * sh_class_new: make an sh_inst and run __init__. */
  sh_cfunc construct;
  sh_obj *(*binop)(int op, sh_obj *a, sh_obj *b);   /* see the header comment */
  sh_obj *(*unop)(int op, sh_obj *a);               /* -x, +x, ~x */
  sh_obj *(*compare)(int op, sh_obj *a, sh_obj *b); /* SH_NOTIMPL to decline; default is
                                                       identity for == and != */
  /* x[key]. key is an int, a slice, None, SH_ELLIPSIS, or a tuple of those for x[a, b:c]. */
  sh_obj *(*getitem)(sh_obj *self, sh_obj *key);
  int (*setitem)(sh_obj *self, sh_obj *key, sh_obj *value);   /* value NULL: del x[key] */
  sh_obj *(*iter)(sh_obj *self);                    /* returns an iterator; without it, a
                                                       type with getitem iterates x[0], x[1],
                                                       ... until IndexError */
  sh_obj *(*next)(sh_obj *self);                    /* NULL, no exception: exhausted */
  int64_t (*len)(sh_obj *self);                     /* -1 with an exception */
  int (*truth)(sh_obj *self);                       /* 1/0, -1 exception; default: len or true */
  int (*contains)(sh_obj *self, sh_obj *item);      /* 1/0/-1 */
  /* Hash for dict keys; the default is identity (and equality is identity). */
  int (*hash)(sh_obj *self, int64_t *out);          /* 0 / -1 */
  sh_obj *(*enter)(sh_obj *self);                   /* `with x as y`: y = enter(x) */
  /* Leaving the with block. exc: the pending exception instance or NULL. Return 1 to
   * swallow the exception, 0 to let it continue, -1 with a new exception raised. */
  int (*exit)(sh_obj *self, sh_obj *exc);

  /* Set by the interpreter; leave zero in static definitions. */
  sh_obj *dict;                /* class attributes (classes made by `class` or sh_class_new) */
  unsigned flags;
};
#define SH_TYPE_HEAD .head = SH_OBJ_HEAD(&sh_type_type)
enum {
  SH_TF_HEAP = 1,          /* made at run time: `class` statement or sh_class_new */
  SH_TF_INSTANCE = 2,      /* instances are sh_inst (have a __dict__, can be subclassed) */
  SH_TF_READY = 4,
};

/* Allocate an instance of t (t->size bytes, zeroed, refcount 1). */
void *sh_new(sh_type *t);
bool sh_is_subtype(const sh_type *t, const sh_type *base);
static inline bool sh_isinstance(const sh_obj *o, const sh_type *t) {
  return o->type == t || sh_is_subtype(o->type, t);
}
static inline const char *sh_type_name(const sh_obj *o) { return o->type->name; }

/* Built-in types. */
extern sh_type sh_type_type, sh_object_type, sh_none_type, sh_bool_type, sh_int_type,
    sh_float_type, sh_str_type, sh_list_type, sh_tuple_type, sh_dict_type, sh_set_type,
    sh_range_type, sh_slice_type, sh_ellipsis_type, sh_builtin_type, sh_func_type,
    sh_method_type, sh_module_type, sh_cell_type, sh_notimpl_type, sh_file_type,
    sh_dictview_type, sh_iter_type, sh_bytes_type;

/* ---- singletons (borrowed; incref before returning them) ---------------------------- */
extern sh_obj sh_none_obj, sh_ellipsis_obj, sh_notimpl_obj;
#define SH_NONE (&sh_none_obj)
#define SH_ELLIPSIS (&sh_ellipsis_obj)
#define SH_NOTIMPL (&sh_notimpl_obj)
sh_obj *sh_none(void);                 /* new reference to None */
sh_obj *sh_bool(bool b);               /* new reference to True/False */
extern sh_obj *sh_true, *sh_false;     /* borrowed */

/* ---- int, float, str ---------------------------------------------------------------- */
typedef struct sh_int { sh_obj head; int64_t v; } sh_int_obj;
typedef struct sh_float { sh_obj head; double v; } sh_float_obj;
typedef struct sh_str {
  sh_obj head;
  int64_t len;        /* bytes (UTF-8) */
  int64_t nchars;     /* code points */
  int64_t hash;       /* -1 until computed */
  bool interned;
  char s[];           /* NUL-terminated */
} sh_str_obj;

/* bytes: immutable bytes (may hold NULs); s is NUL-terminated for convenience. */
typedef struct sh_bytes { sh_obj head; int64_t len, hash; char s[]; } sh_bytes_obj;
sh_obj *sh_bytes(const char *s, size_t n);     /* s NULL: n bytes left to fill */
static inline bool sh_is_bytes(const sh_obj *o) { return o->type == &sh_bytes_type; }
static inline const char *sh_bytes_data(const sh_obj *o) { return ((const sh_bytes_obj *)o)->s; }
static inline int64_t sh_bytes_len(const sh_obj *o) { return ((const sh_bytes_obj *)o)->len; }

sh_obj *sh_int(int64_t v);
sh_obj *sh_float(double v);
sh_obj *sh_str(const char *s);
sh_obj *sh_strn(const char *s, size_t n);
sh_obj *sh_strf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
sh_obj *sh_intern(const char *s);      /* a new reference to the one interned str for s */
static inline bool sh_is_int(const sh_obj *o) { return o->type == &sh_int_type || o->type == &sh_bool_type; }
static inline bool sh_is_float(const sh_obj *o) { return o->type == &sh_float_type; }
static inline bool sh_is_str(const sh_obj *o) { return o->type == &sh_str_type; }
static inline int64_t sh_int_value(const sh_obj *o) { return ((const sh_int_obj *)o)->v; }
static inline double sh_float_value(const sh_obj *o) { return ((const sh_float_obj *)o)->v; }
static inline const char *sh_str_cstr(const sh_obj *o) { return ((const sh_str_obj *)o)->s; }
static inline int64_t sh_str_len(const sh_obj *o) { return ((const sh_str_obj *)o)->len; }

/* Conversions for native code: raise TypeError naming `what` ("argument 'n'") on mismatch. */
int sh_as_int(sh_obj *o, int64_t *out);        /* int or bool */
int sh_as_double(sh_obj *o, double *out);      /* int, bool or float */
const char *sh_as_cstr(sh_obj *o);             /* str; borrowed; NULL + TypeError */
int sh_as_bool(sh_obj *o);                     /* truth value: 1/0, -1 */
/* o as a Python int or float (new ref): itself, or what its __float__ returns (numpy
 * scalars); NULL, no exception, when it is not a number. */
sh_obj *sh_as_number(sh_obj *o);

/* ---- containers --------------------------------------------------------------------- */
typedef struct sh_list { sh_obj head; int64_t n, cap; sh_obj **items; } sh_list_obj;
typedef struct sh_tuple { sh_obj head; int64_t n; sh_obj *items[]; } sh_tuple_obj;
#define SH_LIST_N(o) (((sh_list_obj *)(o))->n)
#define SH_LIST_ITEMS(o) (((sh_list_obj *)(o))->items)
#define SH_TUPLE_N(o) (((sh_tuple_obj *)(o))->n)
#define SH_TUPLE_ITEMS(o) (((sh_tuple_obj *)(o))->items)

sh_obj *sh_list_new(int64_t n);                 /* n None items; fill with sh_list_set_steal */
int sh_list_append(sh_obj *list, sh_obj *item); /* borrows item */
int sh_list_append_steal(sh_obj *list, sh_obj *item);
void sh_list_set_steal(sh_obj *list, int64_t i, sh_obj *item);
sh_obj *sh_tuple_new(int64_t n);                /* items NULL: fill every one with SH_TUPLE_ITEMS */
sh_obj *sh_tuple_of(int n, ...);                /* steals each item */
sh_obj *sh_sequence_to_tuple(sh_obj *seq);      /* any iterable -> new tuple */
sh_obj *sh_sequence_to_list(sh_obj *seq);       /* any iterable -> new list */

sh_obj *sh_dict_new(void);
int sh_dict_set(sh_obj *d, sh_obj *key, sh_obj *value);       /* borrows both */
int sh_dict_set_str(sh_obj *d, const char *key, sh_obj *value); /* borrows value */
sh_obj *sh_dict_get(sh_obj *d, sh_obj *key);    /* BORROWED; NULL if absent (or -> error) */
sh_obj *sh_dict_get_str(sh_obj *d, const char *key);  /* BORROWED or NULL */
int sh_dict_del(sh_obj *d, sh_obj *key);        /* 1 deleted, 0 absent, -1 error */
int64_t sh_dict_len(sh_obj *d);
/* Iterate: for (int64_t i = 0; sh_dict_next(d, &i, &k, &v);) — k, v borrowed. */
bool sh_dict_next(sh_obj *d, int64_t *pos, sh_obj **key, sh_obj **value);
sh_obj *sh_set_new(void);
int sh_set_add(sh_obj *s, sh_obj *item);
int sh_set_contains(sh_obj *s, sh_obj *item);   /* 1/0/-1 */

/* slice(start, stop, step): members may be None. */
typedef struct sh_slice { sh_obj head; sh_obj *start, *stop, *step; } sh_slice_obj;
sh_obj *sh_slice_new(sh_obj *start, sh_obj *stop, sh_obj *step);  /* borrows; NULL = None */
/* Clamp a slice against a sequence of length len, as Python does. Returns the item count. */
int sh_slice_indices(sh_obj *slice, int64_t len, int64_t *start, int64_t *stop,
                     int64_t *step, int64_t *count);

/* ---- generic operations ------------------------------------------------------------- */
sh_obj *sh_repr(sh_obj *o);                     /* str(...) result objects */
sh_obj *sh_to_str(sh_obj *o);
sh_obj *sh_getattr(sh_obj *o, const char *name);   /* AttributeError if missing */
sh_obj *sh_getattr_opt(sh_obj *o, const char *name); /* NULL, no error, if missing */
int sh_setattr(sh_obj *o, const char *name, sh_obj *value);
int sh_delattr(sh_obj *o, const char *name);
sh_obj *sh_call(sh_obj *f, int argc, sh_obj **argv, sh_obj *kw);
sh_obj *sh_call_method(sh_obj *o, const char *name, int argc, sh_obj **argv, sh_obj *kw);
sh_obj *sh_binop(int op, sh_obj *a, sh_obj *b);
sh_obj *sh_unop(int op, sh_obj *a);
sh_obj *sh_compare(int op, sh_obj *a, sh_obj *b);
int sh_compare_bool(int op, sh_obj *a, sh_obj *b); /* 1/0/-1 */
int sh_eq(sh_obj *a, sh_obj *b);                /* 1/0/-1 */
int sh_truth(sh_obj *o);                        /* 1/0/-1 */
int sh_hash(sh_obj *o, int64_t *out);
sh_obj *sh_getitem(sh_obj *o, sh_obj *key);
int sh_setitem(sh_obj *o, sh_obj *key, sh_obj *value);  /* value NULL deletes */
sh_obj *sh_iter(sh_obj *o);
sh_obj *sh_next(sh_obj *it);                    /* NULL, no exception: exhausted */
int64_t sh_len(sh_obj *o);
int sh_contains(sh_obj *container, sh_obj *item);
/* Write str(o) (or repr) to a C stream; used by print and the REPL. */
int sh_fprint(FILE *f, sh_obj *o, bool use_repr);

/* Python's float repr (shortest round-trip), into buf of at least 32 bytes. */
void sh_format_double_repr(double v, char *buf, size_t size);

/* ---- argument parsing --------------------------------------------------------------- */
/* Parse positional and keyword arguments by name, like PyArg_ParseTupleAndKeywords but
 * with objects only. spec lists the parameter names separated by spaces; a "|" starts the
 * optional ones, a "*" makes the following ones keyword-only:
 *     sh_parse_args("matmul", argc, argv, kw, "a b |transpose_a transpose_b name",
 *                   &a, &b, &ta, &tb, &name)
 * Each following argument is an sh_obj ** that receives a BORROWED reference; optional
 * ones the caller did not pass keep their previous value (preset them to a default or
 * NULL). Raises TypeError like Python for missing, repeated or unknown arguments. A spec
 * ending in "**" accepts (and ignores) unknown keywords. */
int sh_parse_args(const char *fname, int argc, sh_obj **argv, sh_obj *kw, const char *spec, ...);

/* ---- exceptions --------------------------------------------------------------------- */
/* Instances of classes made by `class` or sh_class_new, and all exceptions. */
typedef struct sh_inst {
  sh_obj head;
  sh_obj *dict;       /* __dict__ */
  sh_obj *args;       /* exceptions: the args tuple */
  sh_obj *tb;         /* exceptions: list of (file, line, func, text) tuples, innermost first */
  const void *tb_frame; /* the frame that added the last entry */
} sh_inst;

extern sh_type *sh_BaseException, *sh_Exception, *sh_SystemExit, *sh_KeyboardInterrupt,
    *sh_StopIteration, *sh_ArithmeticError, *sh_ZeroDivisionError, *sh_OverflowError,
    *sh_AssertionError, *sh_AttributeError, *sh_ImportError, *sh_ModuleNotFoundError,
    *sh_LookupError, *sh_IndexError, *sh_KeyError, *sh_NameError, *sh_UnboundLocalError,
    *sh_OSError, *sh_FileNotFoundError, *sh_RuntimeError, *sh_NotImplementedError,
    *sh_RecursionError, *sh_SyntaxError, *sh_TypeError, *sh_ValueError, *sh_EOFError,
    *sh_UnicodeError;

/* Raise an exception of class t with a printf-style message. Always returns NULL, so
 * `return sh_raise(sh_ValueError, "bad %d", n);` works in functions returning sh_obj *. */
sh_obj *sh_raise(sh_type *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
sh_obj *sh_raise_obj(sh_obj *exc);              /* raise an instance or a class; borrows */
/* A new exception class, e.g. sh_exc_class_new("InvalidArgumentError", base), where base
 * is sh_Exception or another exception class. The returned class is owned by the caller
 * (keep it in a static and add it to a module with sh_module_add(m, name, SH_INCREF(t))). */
sh_type *sh_exc_class_new(const char *name, sh_type *base);
bool sh_err_occurred(void);
sh_obj *sh_err_get(void);                       /* borrowed pending exception, or NULL */
bool sh_err_matches(sh_type *t);                /* pending exception is an instance of t */
sh_obj *sh_err_fetch(void);                     /* take the pending exception (new ref) */
void sh_err_restore(sh_obj *exc);               /* make exc pending again (steals) */
void sh_err_clear(void);
/* "ValueError: message" of an exception instance, into a malloc'd string. */
char *sh_exc_message(sh_obj *exc);
/* Print a traceback and "Name: message" to f, as Python does for an uncaught error. */
void sh_exc_print(FILE *f, sh_obj *exc);

/* ---- interrupts (Ctrl-C) ------------------------------------------------------------ */
/* Set by the SIGINT handler. Long native calls (sess.run) should poll sh_check_interrupt
 * and return NULL when it fails; the evaluator polls it in loops and calls. */
extern volatile sig_atomic_t sh_interrupted;
int sh_check_interrupt(void);                  /* -1 and KeyboardInterrupt raised if set */

/* ---- threads (shell/lang/thread.c) ------------------------------------------------- */
/* One lock, the GIL, is held by the thread that interprets; native code lets go of it
 * around anything that blocks (sess.run, sleeps, waits), touching no object meanwhile:
 *     sh_gil_release(); rc = blocking_call(...); sh_gil_acquire();
 * Both are no-ops until a script starts its first thread. */
void sh_gil_release(void);
void sh_gil_acquire(void);
void sh_gil_yield(void);                        /* let a waiting thread run (the evaluator) */
extern volatile int sh_gil_drop_request;        /* a thread waits for the GIL */
bool sh_is_main_thread(void);

/* ---- functions, classes, modules ---------------------------------------------------- */
/* A native function object; self is held (may be NULL). */
sh_obj *sh_builtin_new(const char *name, sh_cfunc fn, sh_obj *self, const char *sig,
                       const char *help);
/* A class whose instances are sh_inst (have a __dict__ and can be subclassed by user
 * `class` statements, e.g. SessionRunHook). Methods in the table receive the instance as
 * self. base: NULL for object. The caller owns the returned reference. */
sh_type *sh_class_new(const char *name, sh_type *base, const sh_method *methods,
                      const char *help);

typedef struct sh_module { sh_obj head; sh_obj *dict; sh_obj *name; } sh_module_obj;
sh_obj *sh_module_new(const char *name);
int sh_module_add(sh_obj *mod, const char *name, sh_obj *value);  /* STEALS value */
int sh_module_add_func(sh_obj *mod, const char *name, sh_cfunc fn, const char *sig,
                       const char *help);
int sh_module_add_funcs(sh_obj *mod, const sh_method *table);
/* Make sub an attribute of mod (mod.name); steals sub. */
int sh_module_add_sub(sh_obj *mod, const char *name, sh_obj *sub);

/* Register a built-in importable module by dotted name. init runs on first import and
 * returns a new module (or any object), or NULL with an exception. `import a.b.c` first
 * imports a and a.b; a dotted name without its own registration is found as an
 * attribute of its parent (so registering "tensorflow" makes tensorflow.compat.v1
 * importable if the tensorflow module has attribute compat with attribute v1). */
typedef sh_obj *(*sh_module_init)(void);
void sh_register_module(const char *dotted_name, sh_module_init init);
sh_obj *sh_import(const char *dotted_name);     /* the module object for that exact name */

/* Defined weak (a no-op) in shell/lang/builtins.c; another file may define it strongly to
 * register more modules (tensorflow, numpy). Called once, before any script runs. */
void sh_modules_init_extra(void);

/* ---- help text (`name?`, completion) ----------------------------------------------- */
/* Signature and one-line help of any object, into a malloc'd string. */
char *sh_describe(sh_obj *o);
/* Names of o's attributes (module dict, methods, instance dict), as a new list of str. */
sh_obj *sh_dir(sh_obj *o);

/* ---- the interpreter ---------------------------------------------------------------- */
void sh_init(int argc, char **argv);            /* argv: sys.argv */
void sh_fini(void);
/* Run fn first thing in sh_fini, before __main__'s and the modules' values are released
 * (the last registered runs first; at most 8): the tf module stops its runner threads and
 * closes the sessions a script left open while the servers they talk to still exist. */
void sh_at_fini(void (*fn)(void));
sh_obj *sh_main_globals(void);                  /* __main__'s dict (borrowed) */
sh_obj *sh_builtins_dict(void);                 /* borrowed */
/* Run source text in a globals dict (NULL: __main__). filename names it in errors.
 * Returns 0, or -1 with the exception pending (syntax errors raise SyntaxError). */
int sh_exec_string(const char *src, const char *filename, sh_obj *globals);
int sh_exec_file(const char *path, sh_obj *globals);
/* Evaluate one expression; NULL with an exception pending on error. */
sh_obj *sh_eval_string(const char *src, const char *filename, sh_obj *globals);
/* Print the pending exception as Python does (traceback, or file:line:col for a syntax
 * error) to stderr and clear it. Returns the exit status a script should end with
 * (1, or SystemExit's code). */
int sh_report_error(void);

/* Output written while the REPL is idle goes above the edit line: native code that
 * prints asynchronously (live views) calls this instead of printf. */
void sh_print_async(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Lines a view keeps at the bottom of the terminal (the live view of a loop) must go
 * before anything else is written there. When set, this is called before the interpreter
 * writes to stdout or stderr (idle = false: clear them) and when the program goes idle —
 * the REPL's prompt, an error report, the end of a script (idle = true: also fold what
 * they showed into a summary line). */
extern void (*sh_screen_hook)(bool idle);
static inline void sh_screen_clear(bool idle) {
  if (sh_screen_hook) sh_screen_hook(idle);
}

/* sys.stdout / sys.stderr objects (borrowed), for native code that writes to them. */
sh_obj *sh_sys_stdout(void);
sh_obj *sh_sys_stderr(void);

/* Internal: used by the evaluator and builtins. */
sh_obj *sh_str_concat(sh_obj *a, sh_obj *b);
sh_obj *sh_format_spec(sh_obj *v, const char *spec);       /* format(v, spec) */
sh_obj *sh_percent_format(sh_obj *fmt, sh_obj *args);      /* fmt % args */
void sh_value_init(void);
void sh_value_fini(void);

#endif
