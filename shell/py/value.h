/* The object model the tf module is written against, over CPython. Every value is a
 * PyObject (sh_obj is PyObject), and these names are thin wrappers over CPython's C API;
 * they keep the tf module's C readable in one vocabulary and let it state the few
 * conventions CPython leaves open (what a native type's hooks mean, how a native function
 * takes its arguments). New code may call CPython directly: they are the same objects.
 *
 * Conventions (CPython's):
 *  - A function returning sh_obj * returns a NEW reference, NULL with an exception set.
 *  - Arguments are BORROWED unless the comment says the function "steals" them.
 *  - Functions returning int: 0 (or a count) on success, -1 with an exception set.
 *  - Call them with the GIL held: sh_gil_release() / sh_gil_acquire() around anything that
 *    blocks.
 *
 * A native function is an sh_cfunc: (self, argc, argv, kw), argv the positional
 * arguments (borrowed), kw a dict of the keyword arguments or NULL. Tables of sh_method
 * rows become functions of a module (sh_module_add_funcs) or methods of a type.
 *
 * A native type is a static sh_type: a PyTypeObject followed by hooks, every one
 * optional, that sh_type_ready() turns into the type's slots:
 *
 *   sh_type my_tensor_type = {
 *     SH_TYPE_HEAD, .name = "Tensor", .size = sizeof(my_tensor),
 *     .destroy = tensor_destroy, .repr = tensor_repr, .getattr = tensor_getattr,
 *     .binop = tensor_binop, .getitem = tensor_getitem, .methods = tensor_methods,
 *   };
 *   my_tensor *t = sh_new(&my_tensor_type);   // refcount 1, fields after the head zeroed
 *
 * Binary operators: `a OP b` calls a's type's binop(op, a, b), then b's with the SAME
 * argument order (CPython's number protocol), so one hook serves `t * 2` and `2 * t`.
 * SH_NOTIMPL declines. Instances of native types have a __dict__, and Python classes may
 * subclass them. */
#ifndef TFSH_SHELL_PY_VALUE_H
#define TFSH_SHELL_PY_VALUE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef PyObject sh_obj;
typedef struct sh_type sh_type;

/* A static sh_type not readied yet has no type of its own: ready it when it is first
 * handed to Python (sh_incref, sh_module_add). */
int sh_type_ready_obj(sh_obj *o);
static inline sh_obj *sh_incref(sh_obj *o) {
  if (o && !Py_TYPE(o)) sh_type_ready_obj(o);
  Py_XINCREF(o);
  return o;
}
static inline void sh_decref(sh_obj *o) { Py_XDECREF(o); }
static inline void sh_clear(sh_obj **p) { Py_CLEAR(*p); }
#define SH_INCREF(o) sh_incref((sh_obj *)(o))
#define SH_DECREF(o) sh_decref((sh_obj *)(o))
#define SH_TYPE(o) ((sh_type *)Py_TYPE(o))

/* ---- operators (the order of CPython's Py_LT..Py_GE for comparisons) ---------------- */
enum sh_binop {
  SH_ADD, SH_SUB, SH_MUL, SH_TRUEDIV, SH_FLOORDIV, SH_MOD, SH_POW, SH_MATMUL,
  SH_LSHIFT, SH_RSHIFT, SH_BITAND, SH_BITOR, SH_BITXOR, SH_BINOP_COUNT
};
enum sh_unop { SH_NEG, SH_POS, SH_INVERT, SH_UNOP_COUNT };
enum sh_cmpop { SH_LT = Py_LT, SH_LE = Py_LE, SH_EQ = Py_EQ, SH_NE = Py_NE, SH_GT = Py_GT, SH_GE = Py_GE };
extern const char *const sh_binop_symbol[SH_BINOP_COUNT];   /* "+", "-", ... */

/* ---- native functions --------------------------------------------------------------- */
typedef sh_obj *(*sh_cfunc)(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw);
/* sig is the signature `name?` shows ("matmul(a, b, transpose_a=False, ...)"), help one
 * line; both become the function's __doc__. Tables end with a {NULL} row. */
typedef struct sh_method {
  const char *name;
  sh_cfunc fn;
  const char *sig;
  const char *help;
} sh_method;

/* ---- types -------------------------------------------------------------------------- */
struct sh_type {
  PyTypeObject pt;             /* what CPython sees; filled by sh_type_ready */
  const char *name;            /* "Tensor" */
  sh_type *base;               /* NULL means object */
  size_t size;                 /* instance size; the struct starts with sh_obj head */
  const char *help;
  const sh_method *methods;
  const char *const *attr_names;   /* names the getattr hook serves, for dir() */

  void (*destroy)(sh_obj *self);                    /* release what self owns; not self */
  sh_obj *(*repr)(sh_obj *self);
  sh_obj *(*str)(sh_obj *self);
  /* Before methods and the instance dict; NULL WITHOUT an exception: not mine. */
  sh_obj *(*getattr)(sh_obj *self, const char *name);
  /* 0 done, -1 exception, 1 not handled here (falls back to the instance dict). */
  int (*setattr)(sh_obj *self, const char *name, sh_obj *value);
  sh_cfunc call;
  sh_cfunc construct;                               /* T(...): self is the type */
  sh_obj *(*binop)(int op, sh_obj *a, sh_obj *b);
  sh_obj *(*unop)(int op, sh_obj *a);
  sh_obj *(*compare)(int op, sh_obj *a, sh_obj *b); /* SH_NOTIMPL to decline */
  sh_obj *(*getitem)(sh_obj *self, sh_obj *key);
  int (*setitem)(sh_obj *self, sh_obj *key, sh_obj *value);   /* value NULL: del */
  sh_obj *(*iter)(sh_obj *self);
  sh_obj *(*next)(sh_obj *self);                    /* NULL, no exception: exhausted */
  int64_t (*len)(sh_obj *self);
  int (*truth)(sh_obj *self);
  int (*contains)(sh_obj *self, sh_obj *item);
  int (*hash)(sh_obj *self, int64_t *out);          /* default: identity */
  sh_obj *(*enter)(sh_obj *self);
  /* exc: the exception instance or NULL. 1 swallows it, 0 lets it go, -1 raises. */
  int (*exit)(sh_obj *self, sh_obj *exc);
  sh_obj *dict;                /* the type's __dict__ once ready (borrowed) */
  unsigned flags;
};
#define SH_TYPE_HEAD .pt = {PyVarObject_HEAD_INIT(NULL, 0)}
/* Make t usable (idempotent): its PyTypeObject, slots and methods. 0 / -1. */
int sh_type_ready(sh_type *t);
void *sh_new(sh_type *t);
/* Add a class attribute (a static method) to a native type; borrows value. 0 / -1. */
int sh_type_add(sh_type *t, const char *name, sh_obj *value);
static inline bool sh_isinstance(sh_obj *o, const sh_type *t) {
  return PyObject_TypeCheck(o, (PyTypeObject *)&t->pt);
}
static inline bool sh_is_type(sh_obj *o, const sh_type *t) { return Py_TYPE(o) == &t->pt; }
static inline const char *sh_type_name(sh_obj *o) { return _PyType_Name(Py_TYPE(o)); }
/* A class made in Python (a `class` statement), not a native type. */
static inline bool sh_is_py_instance(sh_obj *o) { return PyType_HasFeature(Py_TYPE(o), Py_TPFLAGS_HEAPTYPE); }

/* ---- singletons, numbers, strings --------------------------------------------------- */
/* The singletons may be returned without an incref: each mention takes a reference
 * (never given back, so they never reach zero; CPython 3.12 makes them immortal). */
static inline sh_obj *sh_immortal(sh_obj *o) { Py_INCREF(o); return o; }
#define SH_NONE sh_immortal(Py_None)
#define SH_ELLIPSIS sh_immortal(Py_Ellipsis)
#define SH_NOTIMPL sh_immortal(Py_NotImplemented)
#define sh_true sh_immortal(Py_True)
#define sh_false sh_immortal(Py_False)
static inline sh_obj *sh_none(void) { Py_RETURN_NONE; }
static inline sh_obj *sh_bool(bool b) { return PyBool_FromLong(b); }
static inline sh_obj *sh_int(int64_t v) { return PyLong_FromLongLong(v); }
static inline sh_obj *sh_float(double v) { return PyFloat_FromDouble(v); }
static inline sh_obj *sh_str(const char *s) { return PyUnicode_FromString(s); }
/* Text from bytes: UTF-8, and bytes that are not kept as surrogates (no error). */
static inline sh_obj *sh_strn(const char *s, size_t n) { return PyUnicode_DecodeUTF8(s, (Py_ssize_t)n, "surrogateescape"); }
sh_obj *sh_strf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline sh_obj *sh_intern(const char *s) { return PyUnicode_InternFromString(s); }
static inline sh_obj *sh_bytes(const char *s, size_t n) { return PyBytes_FromStringAndSize(s, (Py_ssize_t)n); }
static inline bool sh_is_bytes(sh_obj *o) { return PyBytes_Check(o); }
static inline char *sh_bytes_data(sh_obj *o) { return PyBytes_AS_STRING(o); }
static inline int64_t sh_bytes_len(sh_obj *o) { return PyBytes_GET_SIZE(o); }
/* An int (bool included) or a numpy integer: anything with __index__. */
static inline bool sh_is_int(sh_obj *o) { return PyLong_Check(o) || (!PyFloat_Check(o) && PyIndex_Check(o)); }
static inline bool sh_is_float(sh_obj *o) { return PyFloat_Check(o); }
static inline bool sh_is_str(sh_obj *o) { return PyUnicode_Check(o); }
int64_t sh_int_value(sh_obj *o);               /* of an sh_is_int object */
static inline double sh_float_value(sh_obj *o) { return PyFloat_AS_DOUBLE(o); }
/* UTF-8 of a str (cached in the object); "" if it cannot be encoded. */
const char *sh_str_cstr(sh_obj *o);
static inline int64_t sh_str_len(sh_obj *o) { Py_ssize_t n = 0; PyUnicode_AsUTF8AndSize(o, &n); return n; }

int sh_as_int(sh_obj *o, int64_t *out);        /* int, bool, numpy int: TypeError else */
int sh_as_double(sh_obj *o, double *out);      /* anything with __float__ */
const char *sh_as_cstr(sh_obj *o);             /* str; borrowed; NULL + TypeError */
static inline int sh_as_bool(sh_obj *o) { return PyObject_IsTrue(o); }
/* o as a Python int or float (new ref): itself, or what its __float__ / __int__ give
 * (numpy scalars); NULL, no exception, when it is not a number. */
sh_obj *sh_as_number(sh_obj *o);

/* ---- containers --------------------------------------------------------------------- */
#define sh_list_type PyList_Type
#define sh_tuple_type PyTuple_Type
#define sh_dict_type PyDict_Type
#define SH_LIST_N(o) PyList_GET_SIZE(o)
#define SH_LIST_ITEMS(o) (((PyListObject *)(o))->ob_item)
#define SH_TUPLE_N(o) PyTuple_GET_SIZE(o)
#define SH_TUPLE_ITEMS(o) (((PyTupleObject *)(o))->ob_item)
static inline bool sh_is_list(sh_obj *o) { return PyList_Check(o); }
static inline bool sh_is_tuple(sh_obj *o) { return PyTuple_Check(o); }
static inline bool sh_is_dict(sh_obj *o) { return PyDict_Check(o); }

sh_obj *sh_list_new(int64_t n);                 /* n Nones; fill with sh_list_set_steal */
static inline int sh_list_append(sh_obj *l, sh_obj *item) { return PyList_Append(l, item); }
int sh_list_append_steal(sh_obj *l, sh_obj *item);   /* item NULL: -1 (error pending) */
static inline void sh_list_set_steal(sh_obj *l, int64_t i, sh_obj *item) { PyList_SetItem(l, i, item); }
static inline sh_obj *sh_tuple_new(int64_t n) { return PyTuple_New(n); }   /* fill every item */
sh_obj *sh_tuple_of(int n, ...);                /* steals each item */
static inline sh_obj *sh_sequence_to_tuple(sh_obj *s) { return PySequence_Tuple(s); }
static inline sh_obj *sh_sequence_to_list(sh_obj *s) { return PySequence_List(s); }

static inline sh_obj *sh_dict_new(void) { return PyDict_New(); }
static inline int sh_dict_set(sh_obj *d, sh_obj *k, sh_obj *v) { return PyDict_SetItem(d, k, v); }
static inline int sh_dict_set_str(sh_obj *d, const char *k, sh_obj *v) { return PyDict_SetItemString(d, k, v); }
/* BORROWED, or NULL when absent (or with an error set). */
static inline sh_obj *sh_dict_get(sh_obj *d, sh_obj *k) { return PyDict_GetItemWithError(d, k); }
sh_obj *sh_dict_get_str(sh_obj *d, const char *key);
int sh_dict_del(sh_obj *d, sh_obj *key);        /* 1 deleted, 0 absent, -1 error */
static inline int64_t sh_dict_len(sh_obj *d) { return PyDict_Size(d); }
/* for (int64_t i = 0; sh_dict_next(d, &i, &k, &v);): k, v borrowed. */
static inline bool sh_dict_next(sh_obj *d, int64_t *pos, sh_obj **k, sh_obj **v) {
  Py_ssize_t p = (Py_ssize_t)*pos;
  int r = PyDict_Next(d, &p, k, v);
  *pos = p;
  return r;
}
static inline sh_obj *sh_set_new(void) { return PySet_New(NULL); }
static inline int sh_set_add(sh_obj *s, sh_obj *item) { return PySet_Add(s, item); }
static inline int sh_set_contains(sh_obj *s, sh_obj *item) { return PySet_Contains(s, item); }

#define sh_slice_type PySlice_Type
typedef PySliceObject sh_slice_obj;
static inline sh_obj *sh_slice_new(sh_obj *a, sh_obj *b, sh_obj *c) { return PySlice_New(a, b, c); }
int sh_slice_indices(sh_obj *slice, int64_t len, int64_t *start, int64_t *stop, int64_t *step,
                     int64_t *count);

/* ---- generic operations ------------------------------------------------------------- */
static inline sh_obj *sh_repr(sh_obj *o) { return PyObject_Repr(o); }
static inline sh_obj *sh_to_str(sh_obj *o) { return PyObject_Str(o); }
static inline sh_obj *sh_getattr(sh_obj *o, const char *n) { return PyObject_GetAttrString(o, n); }
sh_obj *sh_getattr_opt(sh_obj *o, const char *name);   /* NULL, no error, if missing */
static inline int sh_setattr(sh_obj *o, const char *n, sh_obj *v) { return PyObject_SetAttrString(o, n, v); }
static inline sh_obj *sh_call(sh_obj *f, int argc, sh_obj **argv, sh_obj *kw) {
  return PyObject_VectorcallDict(f, argv, (size_t)argc, kw);
}
sh_obj *sh_call_method(sh_obj *o, const char *name, int argc, sh_obj **argv, sh_obj *kw);
sh_obj *sh_binop(int op, sh_obj *a, sh_obj *b);
sh_obj *sh_unop(int op, sh_obj *a);
static inline sh_obj *sh_compare(int op, sh_obj *a, sh_obj *b) { return PyObject_RichCompare(a, b, op); }
static inline int sh_eq(sh_obj *a, sh_obj *b) { return PyObject_RichCompareBool(a, b, Py_EQ); }
static inline int sh_truth(sh_obj *o) { return PyObject_IsTrue(o); }
static inline sh_obj *sh_getitem(sh_obj *o, sh_obj *k) { return PyObject_GetItem(o, k); }
static inline int sh_setitem(sh_obj *o, sh_obj *k, sh_obj *v) { return v ? PyObject_SetItem(o, k, v) : PyObject_DelItem(o, k); }
static inline sh_obj *sh_iter(sh_obj *o) { return PyObject_GetIter(o); }
static inline sh_obj *sh_next(sh_obj *it) { return PyIter_Next(it); }   /* NULL, no error: done */
static inline int64_t sh_len(sh_obj *o) { return PyObject_Size(o); }
static inline int sh_contains(sh_obj *c, sh_obj *item) { return PySequence_Contains(c, item); }
/* Python's float repr (shortest round trip) into buf (>= 32 bytes). */
void sh_format_double_repr(double v, char *buf, size_t size);

/* ---- arguments ---------------------------------------------------------------------- */
/* Parse arguments by name: spec lists the parameters separated by spaces; "|" starts the
 * optional ones, "*" makes the following ones keyword-only, a final "**" accepts and
 * ignores unknown keywords:
 *     sh_parse_args("matmul", argc, argv, kw, "a b |transpose_a name", &a, &b, &ta, &name)
 * Each following argument is an sh_obj ** that receives a BORROWED reference; optional
 * ones not passed keep their value. TypeError as Python words it on a mismatch. */
int sh_parse_args(const char *fname, int argc, sh_obj **argv, sh_obj *kw, const char *spec, ...);

/* ---- exceptions --------------------------------------------------------------------- */
#define sh_BaseException ((sh_type *)PyExc_BaseException)
#define sh_Exception ((sh_type *)PyExc_Exception)
#define sh_SystemExit ((sh_type *)PyExc_SystemExit)
#define sh_KeyboardInterrupt ((sh_type *)PyExc_KeyboardInterrupt)
#define sh_StopIteration ((sh_type *)PyExc_StopIteration)
#define sh_OverflowError ((sh_type *)PyExc_OverflowError)
#define sh_ZeroDivisionError ((sh_type *)PyExc_ZeroDivisionError)
#define sh_AssertionError ((sh_type *)PyExc_AssertionError)
#define sh_AttributeError ((sh_type *)PyExc_AttributeError)
#define sh_ImportError ((sh_type *)PyExc_ImportError)
#define sh_LookupError ((sh_type *)PyExc_LookupError)
#define sh_IndexError ((sh_type *)PyExc_IndexError)
#define sh_KeyError ((sh_type *)PyExc_KeyError)
#define sh_NameError ((sh_type *)PyExc_NameError)
#define sh_OSError ((sh_type *)PyExc_OSError)
#define sh_FileNotFoundError ((sh_type *)PyExc_FileNotFoundError)
#define sh_RuntimeError ((sh_type *)PyExc_RuntimeError)
#define sh_NotImplementedError ((sh_type *)PyExc_NotImplementedError)
#define sh_TypeError ((sh_type *)PyExc_TypeError)
#define sh_ValueError ((sh_type *)PyExc_ValueError)
#define sh_EOFError ((sh_type *)PyExc_EOFError)

/* Raise t with a printf-style message; returns NULL. */
sh_obj *sh_raise(sh_type *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A new exception class named name (qualname module.name when dotted), base an
 * exception class. The caller owns the reference. */
sh_type *sh_exc_class_new(const char *name, sh_type *base);
static inline bool sh_err_occurred(void) { return PyErr_Occurred() != NULL; }
sh_obj *sh_err_get(void);                       /* borrowed pending exception, or NULL */
static inline bool sh_err_matches(sh_type *t) { return PyErr_ExceptionMatches((PyObject *)t); }
sh_obj *sh_err_fetch(void);                     /* take the pending exception (new ref) */
void sh_err_restore(sh_obj *exc);               /* make exc pending again (steals) */
static inline void sh_err_clear(void) { PyErr_Clear(); }
/* "ValueError: message" of an exception instance, malloc'd. */
char *sh_exc_message(sh_obj *exc);

/* ---- interrupts, threads ------------------------------------------------------------ */
/* Set by tfsh's SIGINT handler (which also makes CPython raise KeyboardInterrupt): long
 * native calls poll it; sh_check_interrupt() raises KeyboardInterrupt when it is set. */
extern volatile sig_atomic_t sh_interrupted;
int sh_check_interrupt(void);
/* The flag a blocking call on this thread watches: sh_interrupted on the main thread, NULL
 * on every other (Python delivers KeyboardInterrupt to the main thread alone, so Ctrl-C
 * cancels the main thread's step and never a QueueRunner's or a user thread's). */
const volatile int *sh_interrupt_flag(void);
/* Let go of the GIL around a blocking call, and take it back; from a thread Python does
 * not know (a runtime thread calling back into Python), sh_gil_acquire() first and
 * sh_gil_release() after. Pairs nest. */
void sh_gil_release(void);
void sh_gil_acquire(void);

/* ---- functions, classes, modules ---------------------------------------------------- */
/* A native function object calling fn with self (held; may be NULL). */
sh_obj *sh_builtin_new(const char *name, sh_cfunc fn, sh_obj *self, const char *sig,
                       const char *help);
/* A Python class (subclassable by `class` statements, e.g. SessionRunHook) whose methods
 * are the table's, receiving the instance as self. The caller owns the reference. */
sh_type *sh_class_new(const char *name, sh_type *base, const sh_method *methods, const char *help);
static inline sh_obj *sh_class_dict(sh_type *t) { return ((PyTypeObject *)t)->tp_dict; }
/* Attribute name of type t found along its bases (borrowed), or NULL. */
sh_obj *sh_class_lookup(sh_type *t, sh_obj *name);

static inline sh_obj *sh_module_new(const char *name) { return PyModule_New(name); }
static inline sh_obj *sh_module_dict(sh_obj *m) { return PyModule_Check(m) ? PyModule_GetDict(m) : PyObject_GenericGetDict(m, NULL); }
int sh_module_add(sh_obj *mod, const char *name, sh_obj *value);  /* STEALS value */
int sh_module_add_func(sh_obj *mod, const char *name, sh_cfunc fn, const char *sig, const char *help);
int sh_module_add_funcs(sh_obj *mod, const sh_method *table);
static inline int sh_module_add_sub(sh_obj *mod, const char *name, sh_obj *sub) { return sh_module_add(mod, name, sub); }
/* A built-in module importable by its dotted name; init runs on the first import. A
 * dotted name without a registration of its own is its parent's attribute
 * (tensorflow.compat.v1 once tensorflow is registered). */
typedef sh_obj *(*sh_module_init)(void);
void sh_register_module(const char *dotted_name, sh_module_init init);
sh_obj *sh_import(const char *dotted_name);
void sh_modules_init_extra(void);               /* defined by the shell (app/init.c) */

/* Signature and help of any object (`name?`), malloc'd; o's attribute names (new list). */
char *sh_describe(sh_obj *o);
static inline sh_obj *sh_dir(sh_obj *o) { return PyObject_Dir(o); }

/* ---- the interpreter ---------------------------------------------------------------- */
void sh_init(int argc, char **argv);            /* argv: sys.argv */
void sh_fini(void);
/* fn runs first in sh_fini, before Python goes (the last registered first; at most 8). */
void sh_at_fini(void (*fn)(void));
sh_obj *sh_main_globals(void);                  /* __main__'s dict (borrowed) */
sh_obj *sh_builtins_dict(void);                 /* borrowed */
/* Run source text in globals (NULL: __main__); filename names it in tracebacks. */
int sh_exec_string(const char *src, const char *filename, sh_obj *globals);
/* Run frozen code: n bytes of `code` are a magic number and a marshalled code object
 * (scripts/freeze_py.py's NAME_frozen[], compiled from src with this filename at build
 * time). Where they are not this libpython's bytecode (or not for this filename), it
 * compiles src instead, as sh_exec_string would. */
int sh_exec_frozen(const unsigned char *code, size_t n, const char *src, const char *filename, sh_obj *globals);
int sh_exec_file(const char *path, sh_obj *globals);
sh_obj *sh_eval_string(const char *src, const char *filename, sh_obj *globals);
/* Print the pending exception as Python does and clear it; the exit status a script
 * should end with (1, or SystemExit's code). */
int sh_report_error(void);

/* Output written while the REPL is idle goes above the edit line. */
void sh_print_async(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Called before Python writes to stdout/stderr (idle false) and when the program goes idle
 * (idle true): the live views clear the lines they keep at the bottom of the terminal. */
extern void (*sh_screen_hook)(bool idle);
static inline void sh_screen_clear(bool idle) {
  if (sh_screen_hook) sh_screen_hook(idle);
}

#endif
