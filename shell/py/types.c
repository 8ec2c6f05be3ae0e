/* Native types and functions over CPython: an sh_type's hooks become its PyTypeObject's
 * slots, an sh_cfunc becomes a callable (and a method, bound on attribute access), and
 * sh_parse_args reads arguments by name. */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "shell/py/value.h"

/* ---- which native type an object's type derives from ---------------------------------- */
enum { MAX_NATIVE = 96 };
static sh_type *natives[MAX_NATIVE];
static int n_natives;

static sh_type *native_of(PyTypeObject *t) {
  for (; t; t = t->tp_base)
    for (int i = n_natives - 1; i >= 0; i--)
      if (&natives[i]->pt == t) return natives[i];
  return NULL;
}
#define NATIVE(o) native_of(Py_TYPE(o))

/* ---- native functions ------------------------------------------------------------------ */
typedef struct builtin {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  sh_cfunc fn;
  PyObject *self;
  const char *name, *sig, *help;
  bool binds;       /* a method of a type: binds to the instance it is read from */
} builtin;

static PyTypeObject builtin_type;

/* Keyword arguments of a vectorcall as the dict an sh_cfunc takes. */
static PyObject *kw_dict(PyObject *const *args, size_t nargs, PyObject *kwnames) {
  PyObject *kw = PyDict_New();
  if (!kw) return NULL;
  Py_ssize_t nk = PyTuple_GET_SIZE(kwnames);
  for (Py_ssize_t i = 0; i < nk; i++)
    if (PyDict_SetItem(kw, PyTuple_GET_ITEM(kwnames, i), args[nargs + (size_t)i]) < 0) {
      Py_DECREF(kw);
      return NULL;
    }
  return kw;
}

static PyObject *call_cfunc(sh_cfunc fn, PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
  size_t n = PyVectorcall_NARGS(nargsf);
  PyObject *kw = NULL;
  if (kwnames && PyTuple_GET_SIZE(kwnames) && !(kw = kw_dict(args, n, kwnames))) return NULL;
  PyObject *r = fn(self, (int)n, (PyObject **)args, kw);
  Py_XDECREF(kw);
  if (!r && !PyErr_Occurred()) PyErr_SetString(PyExc_SystemError, "native function returned NULL without an error");
  return r;
}

static PyObject *builtin_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
  builtin *b = (builtin *)callable;
  if (b->binds && !b->self) {   /* Class.method(obj, ...) */
    size_t n = PyVectorcall_NARGS(nargsf);
    if (n < 1) return PyErr_Format(PyExc_TypeError, "%s() needs an argument", b->name);
    return call_cfunc(b->fn, args[0], args + 1, n - 1, kwnames);
  }
  return call_cfunc(b->fn, b->self, args, nargsf, kwnames);
}

static PyObject *builtin_make(const char *name, sh_cfunc fn, PyObject *self, const char *sig,
                              const char *help, bool binds) {
  builtin *b = PyObject_New(builtin, &builtin_type);
  if (!b) return NULL;
  b->vectorcall = builtin_vectorcall;
  b->fn = fn;
  b->self = Py_XNewRef(self);
  b->name = name;
  b->sig = sig;
  b->help = help;
  b->binds = binds;
  return (PyObject *)b;
}

sh_obj *sh_builtin_new(const char *name, sh_cfunc fn, sh_obj *self, const char *sig, const char *help) {
  return builtin_make(name, fn, self, sig, help, false);
}

static void builtin_dealloc(PyObject *o) {
  Py_XDECREF(((builtin *)o)->self);
  PyObject_Free(o);
}

static PyObject *builtin_get(PyObject *o, PyObject *obj, PyObject *type) {
  builtin *b = (builtin *)o;
  if (!obj || !b->binds || b->self) return Py_NewRef(o);
  return builtin_make(b->name, b->fn, obj, b->sig, b->help, true);
}

static PyObject *builtin_repr(PyObject *o) {
  builtin *b = (builtin *)o;
  if (b->self && b->binds) return PyUnicode_FromFormat("<built-in method %s of %s object>", b->name, Py_TYPE(b->self)->tp_name);
  return PyUnicode_FromFormat("<built-in function %s>", b->name);
}

static PyObject *builtin_name(PyObject *o, void *c) { return PyUnicode_FromString(((builtin *)o)->name); }
static PyObject *builtin_doc(PyObject *o, void *c) {
  builtin *b = (builtin *)o;
  if (!b->sig && !b->help) Py_RETURN_NONE;
  return PyUnicode_FromFormat("%s%s%s", b->sig ? b->sig : "", b->sig && b->help ? "\n\n" : "", b->help ? b->help : "");
}
static PyObject *builtin_self(PyObject *o, void *c) {
  PyObject *s = ((builtin *)o)->self;
  return Py_NewRef(s ? s : Py_None);
}
static PyGetSetDef builtin_getset[] = {
  {"__name__", builtin_name, NULL, NULL, NULL},
  {"__qualname__", builtin_name, NULL, NULL, NULL},
  {"__doc__", builtin_doc, NULL, NULL, NULL},
  {"__self__", builtin_self, NULL, NULL, NULL},
  {NULL},
};

static PyTypeObject builtin_type = {
  PyVarObject_HEAD_INIT(NULL, 0)
  .tp_name = "builtin_function_or_method",
  .tp_basicsize = sizeof(builtin),
  .tp_dealloc = builtin_dealloc,
  .tp_vectorcall_offset = offsetof(builtin, vectorcall),
  .tp_call = PyVectorcall_Call,
  .tp_repr = builtin_repr,
  .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
  .tp_descr_get = builtin_get,
  .tp_getset = builtin_getset,
};

static int add_methods(PyObject *dict, const sh_method *m) {
  for (; m && m->name; m++) {
    PyObject *f = builtin_make(m->name, m->fn, NULL, m->sig, m->help, true);
    if (!f || PyDict_SetItemString(dict, m->name, f) < 0) { Py_XDECREF(f); return -1; }
    Py_DECREF(f);
  }
  return 0;
}

/* ---- slots that call the hooks ---------------------------------------------------------- */
static void t_dealloc(PyObject *o) {
  sh_type *t = NATIVE(o);
  if (t && t->destroy) t->destroy(o);
  PyObject **d = _PyObject_GetDictPtr(o);
  if (d) Py_CLEAR(*d);
  Py_TYPE(o)->tp_free(o);
}
static PyObject *t_repr(PyObject *o) { return NATIVE(o)->repr(o); }
static PyObject *t_str(PyObject *o) { return NATIVE(o)->str(o); }

static PyObject *t_getattro(PyObject *o, PyObject *name) {
  sh_type *t = NATIVE(o);
  if (t->getattr) {
    const char *n = PyUnicode_AsUTF8(name);
    if (!n) return NULL;
    PyObject *r = t->getattr(o, n);
    if (r || PyErr_Occurred()) return r;
  }
  return PyObject_GenericGetAttr(o, name);
}
static int t_setattro(PyObject *o, PyObject *name, PyObject *v) {
  const char *n = PyUnicode_AsUTF8(name);
  if (!n) return -1;
  int r = NATIVE(o)->setattr(o, n, v);
  return r == 1 ? PyObject_GenericSetAttr(o, name, v) : r;
}
static PyObject *t_call(PyObject *o, PyObject *args, PyObject *kw) {
  return NATIVE(o)->call(o, (int)PyTuple_GET_SIZE(args), &PyTuple_GET_ITEM(args, 0), kw && PyDict_GET_SIZE(kw) ? kw : NULL);
}
static PyObject *t_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  return native_of(type)->construct((PyObject *)type, (int)PyTuple_GET_SIZE(args), &PyTuple_GET_ITEM(args, 0),
                                    kw && PyDict_GET_SIZE(kw) ? kw : NULL);
}

static PyObject *binop(int op, PyObject *a, PyObject *b) {
  sh_type *ta = NATIVE(a), *tb = NATIVE(b);
  if (ta && ta->binop) {
    PyObject *r = ta->binop(op, a, b);
    if (r != Py_NotImplemented) return r;
    Py_DECREF(r);
  }
  if (tb && tb->binop && (!ta || tb->binop != ta->binop)) return tb->binop(op, a, b);
  Py_RETURN_NOTIMPLEMENTED;
}
#define BINOP(slot, op) static PyObject *slot(PyObject *a, PyObject *b) { return binop(op, a, b); }
BINOP(nb_add, SH_ADD) BINOP(nb_sub, SH_SUB) BINOP(nb_mul, SH_MUL) BINOP(nb_truediv, SH_TRUEDIV)
BINOP(nb_floordiv, SH_FLOORDIV) BINOP(nb_mod, SH_MOD) BINOP(nb_matmul, SH_MATMUL)
BINOP(nb_lshift, SH_LSHIFT) BINOP(nb_rshift, SH_RSHIFT) BINOP(nb_and, SH_BITAND)
BINOP(nb_or, SH_BITOR) BINOP(nb_xor, SH_BITXOR)
static PyObject *nb_pow(PyObject *a, PyObject *b, PyObject *m) { return binop(SH_POW, a, b); }
static PyObject *nb_neg(PyObject *a) { return NATIVE(a)->unop(SH_NEG, a); }
static PyObject *nb_pos(PyObject *a) { return NATIVE(a)->unop(SH_POS, a); }
static PyObject *nb_inv(PyObject *a) { return NATIVE(a)->unop(SH_INVERT, a); }
static int nb_bool(PyObject *a) { return NATIVE(a)->truth(a); }

static PyObject *t_richcompare(PyObject *a, PyObject *b, int op) {
  sh_type *t = NATIVE(a);
  if (t && t->compare) return t->compare(op, a, b);
  Py_RETURN_NOTIMPLEMENTED;
}
static Py_hash_t t_hash(PyObject *o) {
  sh_type *t = NATIVE(o);
  if (t->hash) {
    int64_t h;
    if (t->hash(o, &h) < 0) return -1;
    return h == -1 ? -2 : (Py_hash_t)h;
  }
  return _Py_HashPointer(o);
}
static PyObject *mp_subscript(PyObject *o, PyObject *k) { return NATIVE(o)->getitem(o, k); }
static int mp_ass(PyObject *o, PyObject *k, PyObject *v) {
  sh_type *t = NATIVE(o);
  if (!t->setitem) { PyErr_Format(PyExc_TypeError, "'%s' object does not support item assignment", Py_TYPE(o)->tp_name); return -1; }
  return t->setitem(o, k, v);
}
static PyObject *sq_item(PyObject *o, Py_ssize_t i) {
  PyObject *k = PyLong_FromSsize_t(i);
  if (!k) return NULL;
  PyObject *r = NATIVE(o)->getitem(o, k);
  Py_DECREF(k);
  return r;
}
static Py_ssize_t t_len(PyObject *o) { return (Py_ssize_t)NATIVE(o)->len(o); }
static int sq_contains(PyObject *o, PyObject *v) { return NATIVE(o)->contains(o, v); }
static PyObject *t_iter(PyObject *o) { return NATIVE(o)->iter(o); }
static PyObject *t_next(PyObject *o) { return NATIVE(o)->next(o); }

static PyObject *m_enter(PyObject *self, int argc, PyObject **argv, PyObject *kw) { return NATIVE(self)->enter(self); }
static PyObject *m_exit(PyObject *self, int argc, PyObject **argv, PyObject *kw) {
  PyObject *exc = argc >= 2 && argv[1] != Py_None ? argv[1] : NULL;
  int r = NATIVE(self)->exit(self, exc);
  if (r < 0) return NULL;
  return PyBool_FromLong(r);
}

/* ---- readying a type ---------------------------------------------------------------------- */
#define INHERIT(f) if (!t->f) t->f = b->f
int sh_type_ready(sh_type *t) {
  if (t->dict) return 0;
  PyTypeObject *p = &t->pt;
  if (t->base) {
    if (sh_type_ready(t->base) < 0) return -1;
    sh_type *b = t->base;
    p->tp_base = &b->pt;
    INHERIT(destroy); INHERIT(repr); INHERIT(str); INHERIT(getattr); INHERIT(setattr); INHERIT(call);
    INHERIT(construct); INHERIT(binop); INHERIT(unop); INHERIT(compare); INHERIT(getitem);
    INHERIT(setitem); INHERIT(iter); INHERIT(next); INHERIT(len); INHERIT(truth);
    INHERIT(contains); INHERIT(hash); INHERIT(enter); INHERIT(exit);
    if (!t->size) t->size = b->size;
  }
  if (t->size < sizeof(PyObject)) t->size = sizeof(PyObject);
  size_t size = (t->size + sizeof(void *) - 1) / sizeof(void *) * sizeof(void *);
  p->tp_name = t->name;
  p->tp_basicsize = (Py_ssize_t)(size + sizeof(PyObject *));
  p->tp_dictoffset = (Py_ssize_t)size;
  p->tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE;
  p->tp_doc = t->help;
  p->tp_dealloc = t_dealloc;
  p->tp_getattro = t_getattro;
  p->tp_hash = t_hash;
  p->tp_richcompare = t_richcompare;
  if (t->repr) p->tp_repr = t_repr;
  if (t->str) p->tp_str = t_str;
  if (t->setattr) p->tp_setattro = t_setattro;
  if (t->call) p->tp_call = t_call;
  if (t->construct) p->tp_new = t_new;
  if (t->iter) p->tp_iter = t_iter;
  if (t->next) { p->tp_iternext = t_next; if (!t->iter) p->tp_iter = PyObject_SelfIter; }
  if (t->binop || t->unop || t->truth) {
    PyNumberMethods *nm = xcalloc(1, sizeof *nm);
    if (t->binop) {
      nm->nb_add = nb_add; nm->nb_subtract = nb_sub; nm->nb_multiply = nb_mul;
      nm->nb_true_divide = nb_truediv; nm->nb_floor_divide = nb_floordiv; nm->nb_remainder = nb_mod;
      nm->nb_power = nb_pow; nm->nb_matrix_multiply = nb_matmul; nm->nb_lshift = nb_lshift;
      nm->nb_rshift = nb_rshift; nm->nb_and = nb_and; nm->nb_or = nb_or; nm->nb_xor = nb_xor;
    }
    if (t->unop) { nm->nb_negative = nb_neg; nm->nb_positive = nb_pos; nm->nb_invert = nb_inv; }
    if (t->truth) nm->nb_bool = nb_bool;
    p->tp_as_number = nm;
  }
  if (t->getitem || t->setitem || t->len) {
    PyMappingMethods *mm = xcalloc(1, sizeof *mm);
    if (t->getitem) mm->mp_subscript = mp_subscript;
    if (t->setitem) mm->mp_ass_subscript = mp_ass;
    if (t->len) mm->mp_length = t_len;
    p->tp_as_mapping = mm;
  }
  if (t->getitem || t->contains || t->len) {
    PySequenceMethods *sm = xcalloc(1, sizeof *sm);
    if (t->getitem && !t->iter) sm->sq_item = sq_item;   /* iterates x[0], x[1], ... */
    if (t->contains) sm->sq_contains = sq_contains;
    if (t->len) sm->sq_length = t_len;
    p->tp_as_sequence = sm;
  }
  if (n_natives == MAX_NATIVE) { PyErr_SetString(PyExc_SystemError, "too many native types"); return -1; }
  natives[n_natives++] = t;
  if (PyType_Ready(p) < 0) { n_natives--; return -1; }
  if (add_methods(p->tp_dict, t->methods) < 0) return -1;
  static const sh_method ctx[] = {{"__enter__", m_enter, NULL, NULL}, {NULL}},
                         ctx_exit[] = {{"__exit__", m_exit, NULL, NULL}, {NULL}};
  if (t->enter && add_methods(p->tp_dict, ctx) < 0) return -1;
  if (t->exit && add_methods(p->tp_dict, ctx_exit) < 0) return -1;
  PyType_Modified(p);
  t->dict = p->tp_dict;
  return 0;
}

int sh_type_add(sh_type *t, const char *name, sh_obj *value) {
  if (sh_type_ready(t) < 0 || PyDict_SetItemString(t->pt.tp_dict, name, value) < 0) return -1;
  PyType_Modified(&t->pt);
  return 0;
}

void *sh_new(sh_type *t) {
  if (sh_type_ready(t) < 0) return NULL;
  return t->pt.tp_alloc(&t->pt, 0);
}

sh_type *sh_class_new(const char *name, sh_type *base, const sh_method *methods, const char *help) {
  PyObject *dict = PyDict_New();
  if (!dict) return NULL;
  if (add_methods(dict, methods) < 0 || (help && PyDict_SetItemString(dict, "__doc__", PyUnicode_FromString(help)) < 0)) {
    Py_DECREF(dict);
    return NULL;
  }
  PyObject *b = base ? (PyObject *)base : (PyObject *)&PyBaseObject_Type;
  PyObject *t = PyObject_CallFunction((PyObject *)&PyType_Type, "s(O)N", name, b, dict);
  return (sh_type *)t;
}

sh_obj *sh_class_lookup(sh_type *t, sh_obj *name) {
  PyObject *mro = t->pt.tp_mro;
  if (!mro) return NULL;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(mro); i++) {
    PyObject *d = ((PyTypeObject *)PyTuple_GET_ITEM(mro, i))->tp_dict;
    PyObject *v = d ? PyDict_GetItemWithError(d, name) : NULL;
    if (v) return v;
  }
  return NULL;
}

sh_type *sh_exc_class_new(const char *name, sh_type *base) {
  char full[256];
  snprintf(full, sizeof full, "%s%s", strchr(name, '.') ? "" : "builtins.", name);
  return (sh_type *)PyErr_NewException(full, (PyObject *)base, NULL);
}

/* ---- modules -------------------------------------------------------------------------------- */
int sh_type_ready_obj(sh_obj *o) { return sh_type_ready((sh_type *)o); }

int sh_module_add(sh_obj *mod, const char *name, sh_obj *value) {
  if (!value) return -1;
  if (!Py_TYPE(value) && sh_type_ready((sh_type *)value) < 0) return -1;
  int r = PyObject_SetAttrString(mod, name, value);
  Py_DECREF(value);
  return r;
}

int sh_module_add_func(sh_obj *mod, const char *name, sh_cfunc fn, const char *sig, const char *help) {
  return sh_module_add(mod, name, builtin_make(name, fn, mod, sig, help, false));
}

int sh_module_add_funcs(sh_obj *mod, const sh_method *m) {
  for (; m->name; m++)
    if (sh_module_add_func(mod, m->name, m->fn, m->sig, m->help) < 0) return -1;
  return 0;
}

int sh_builtin_ready(void) { return PyType_Ready(&builtin_type); }

/* ---- arguments -------------------------------------------------------------------------------- */
int sh_parse_args(const char *fname, int argc, sh_obj **argv, sh_obj *kw, const char *spec, ...) {
  char names[32][48];
  int n = 0, nreq = -1, kwonly = -1;
  bool any_kw = false;
  for (const char *p = spec; *p;) {
    while (*p == ' ') p++;
    if (!*p) break;
    if (p[0] == '*' && p[1] == '*') { any_kw = true; p += 2; continue; }
    if (*p == '|') { nreq = n; p++; continue; }
    if (*p == '*') { kwonly = n; if (nreq < 0) nreq = n; p++; continue; }
    int k = 0;
    while (*p && *p != ' ' && *p != '|' && k < 47) names[n][k++] = *p++;
    names[n][k] = 0;
    if (++n == 32) break;
  }
  if (nreq < 0) nreq = n;
  int npos = kwonly < 0 ? n : kwonly;
  va_list ap;
  va_start(ap, spec);
  sh_obj **outs[32];
  for (int i = 0; i < n; i++) outs[i] = va_arg(ap, sh_obj **);
  va_end(ap);
  if (argc > npos) {
    sh_raise(sh_TypeError, "%s() takes %s%d positional argument%s but %d %s given", fname,
             nreq < npos ? "at most " : "", npos, npos == 1 ? "" : "s", argc, argc == 1 ? "was" : "were");
    return -1;
  }
  bool got[32] = {0};
  for (int i = 0; i < argc; i++) { *outs[i] = argv[i]; got[i] = true; }
  if (kw) {
    sh_obj *k, *v;
    for (int64_t pos = 0; sh_dict_next(kw, &pos, &k, &v);) {
      const char *ks = sh_str_cstr(k);
      int i = 0;
      while (i < n && strcmp(names[i], ks)) i++;
      if (i == n) {
        if (any_kw) continue;
        sh_raise(sh_TypeError, "%s() got an unexpected keyword argument '%s'", fname, ks);
        return -1;
      }
      if (got[i]) {
        sh_raise(sh_TypeError, "%s() got multiple values for argument '%s'", fname, names[i]);
        return -1;
      }
      *outs[i] = v;
      got[i] = true;
    }
  }
  for (int i = 0; i < nreq; i++)
    if (!got[i]) {
      sh_raise(sh_TypeError, "%s() missing required argument '%s' (pos %d)", fname, names[i], i + 1);
      return -1;
    }
  return 0;
}
