/* Classes, instances and exceptions: user classes, method lookup along the bases,
 * properties, static/class methods, the exception hierarchy and its methods. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "shell/lang/interp.h"

/* ---- exceptions ------------------------------------------------------------------------- */
static _Thread_local sh_obj *pending;   /* the raised, not yet handled exception instance */

sh_type *sh_BaseException, *sh_Exception, *sh_SystemExit, *sh_KeyboardInterrupt,
    *sh_StopIteration, *sh_ArithmeticError, *sh_ZeroDivisionError, *sh_OverflowError,
    *sh_AssertionError, *sh_AttributeError, *sh_ImportError, *sh_ModuleNotFoundError,
    *sh_LookupError, *sh_IndexError, *sh_KeyError, *sh_NameError, *sh_UnboundLocalError,
    *sh_OSError, *sh_FileNotFoundError, *sh_RuntimeError, *sh_NotImplementedError,
    *sh_RecursionError, *sh_SyntaxError, *sh_TypeError, *sh_ValueError, *sh_EOFError,
    *sh_UnicodeError;

bool sh_err_occurred(void) { return pending != NULL; }
sh_obj *sh_err_get(void) { return pending; }
bool sh_err_matches(sh_type *t) { return pending && sh_isinstance(pending, t); }
sh_obj *sh_err_fetch(void) { sh_obj *e = pending; pending = NULL; return e; }
void sh_err_restore(sh_obj *exc) { sh_obj *old = pending; pending = exc; sh_decref(old); }
void sh_err_clear(void) { sh_clear(&pending); }

sh_obj *sh_exc_new(sh_type *t, sh_obj *args) {
  sh_inst *e = sh_new(t);
  e->args = args;
  e->tb = sh_list_new(0);
  return &e->head;
}

sh_obj *sh_raise(sh_type *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *msg = xvasprintf(fmt, ap);
  va_end(ap);
  sh_err_restore(sh_exc_new(t, sh_tuple_of(1, sh_str(msg))));
  free(msg);
  return NULL;
}

sh_obj *sh_raise_obj(sh_obj *exc) {
  if (sh_isinstance(exc, &sh_type_type)) {
    sh_type *t = (sh_type *)exc;
    if (!sh_is_subtype(t, sh_BaseException))
      return sh_raise(sh_TypeError, "exceptions must derive from BaseException");
    sh_obj *inst = sh_call(exc, 0, NULL, NULL);
    if (!inst) return NULL;
    sh_err_restore(inst);
    return NULL;
  }
  if (!sh_isinstance(exc, sh_BaseException))
    return sh_raise(sh_TypeError, "exceptions must derive from BaseException");
  sh_err_restore(sh_incref(exc));
  return NULL;
}

int sh_check_interrupt(void) {
  if (!sh_interrupted || !sh_is_main_thread()) return 0;   /* Ctrl-C is the main thread's */
  sh_interrupted = 0;
  sh_err_restore(sh_exc_new(sh_KeyboardInterrupt, sh_tuple_new(0)));
  return -1;
}

static sh_obj *exc_str(sh_obj *o) {
  sh_inst *e = (sh_inst *)o;
  if (!e->args || SH_TUPLE_N(e->args) == 0) return sh_str("");
  if (SH_TUPLE_N(e->args) == 1) {
    if (sh_isinstance(o, sh_KeyError)) return sh_repr(SH_TUPLE_ITEMS(e->args)[0]);
    return sh_to_str(SH_TUPLE_ITEMS(e->args)[0]);
  }
  return sh_repr(e->args);
}

static sh_obj *exc_repr(sh_obj *o) {
  sh_inst *e = (sh_inst *)o;
  sh_obj *r = e->args ? sh_repr(e->args) : sh_str("()");
  if (!r) return NULL;
  sh_obj *s;
  if (e->args && SH_TUPLE_N(e->args) == 1)  /* "('x',)" -> "('x')" */
    s = sh_strf("%s(%.*s)", sh_type_name(o), (int)sh_str_len(r) - 3, sh_str_cstr(r) + 1);
  else
    s = sh_strf("%s%s", sh_type_name(o), sh_str_cstr(r));
  sh_decref(r);
  return s;
}

char *sh_exc_message(sh_obj *exc) {
  sh_obj *s = sh_to_str(exc);
  char *out = NULL;
  if (!s) { sh_err_clear(); return xstrdup(sh_type_name(exc)); }
  if (sh_str_len(s)) { out = xasprintf("%s: %s", sh_type_name(exc), sh_str_cstr(s)); }
  else out = xstrdup(sh_type_name(exc));
  sh_decref(s);
  return out;
}

/* ---- classes and instances --------------------------------------------------------------- */
static sh_obj *lookup_class_attr(sh_type *t, sh_obj *name);

/* Find a dunder method defined by a class (Python or native table); borrowed. */
static sh_obj *find_dunder(sh_obj *o, const char *name) {
  if (!(o->type->flags & SH_TF_INSTANCE)) return NULL;
  sh_obj *n = sh_intern(name);
  sh_obj *f = lookup_class_attr(o->type, n);
  sh_decref(n);
  return f;
}

static sh_obj *call_dunder(sh_obj *o, sh_obj *f, int argc, sh_obj **argv) {
  sh_obj *args[4] = {o};
  for (int i = 0; i < argc; i++) args[i + 1] = argv[i];
  return sh_call(f, argc + 1, args, NULL);
}

static sh_obj *inst_repr(sh_obj *o) {
  sh_obj *f = find_dunder(o, "__repr__");
  if (f) return call_dunder(o, f, 0, NULL);
  if (sh_isinstance(o, sh_BaseException)) return exc_repr(o);
  sh_obj *m = ((sh_type *)o->type)->dict ? sh_dict_get_str(o->type->dict, "__module__") : NULL;
  return sh_strf("<%s.%s object at %p>", m && sh_is_str(m) ? sh_str_cstr(m) : "__main__",
                 sh_type_name(o), (void *)o);
}
static sh_obj *inst_str(sh_obj *o) {
  sh_obj *f = find_dunder(o, "__str__");
  if (f) return call_dunder(o, f, 0, NULL);
  if (sh_isinstance(o, sh_BaseException)) return exc_str(o);
  return inst_repr(o);
}
static void inst_destroy(sh_obj *o) {
  sh_inst *i = (sh_inst *)o;
  sh_decref(i->dict); sh_decref(i->args); sh_decref(i->tb);
}
static sh_obj *inst_call(sh_obj *o, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *f = find_dunder(o, "__call__");
  if (!f) return sh_raise(sh_TypeError, "'%s' object is not callable", sh_type_name(o));
  sh_obj *m = sh_method_new(f, o);
  sh_obj *r = sh_call(m, argc, argv, kw);
  sh_decref(m);
  return r;
}
static sh_obj *inst_binop(int op, sh_obj *a, sh_obj *b) {
  sh_obj *f;
  if ((f = find_dunder(a, sh_binop_dunder[op]))) {
    sh_obj *r = call_dunder(a, f, 1, &b);
    if (r != SH_NOTIMPL) return r;
    sh_decref(r);
  }
  if (a != b && (f = find_dunder(b, sh_binop_rdunder[op]))) return call_dunder(b, f, 1, &a);
  return sh_incref(SH_NOTIMPL);
}
static sh_obj *inst_unop(int op, sh_obj *a) {
  static const char *names[] = {"__neg__", "__pos__", "__invert__"};
  sh_obj *f = find_dunder(a, names[op]);
  return f ? call_dunder(a, f, 0, NULL) : sh_incref(SH_NOTIMPL);
}
static sh_obj *inst_compare(int op, sh_obj *a, sh_obj *b) {
  static const int swapped[] = {SH_GT, SH_GE, SH_EQ, SH_NE, SH_LT, SH_LE};
  sh_obj *f;
  if ((f = find_dunder(a, sh_cmp_dunder[op]))) {
    sh_obj *r = call_dunder(a, f, 1, &b);
    if (r != SH_NOTIMPL) return r;
    sh_decref(r);
  }
  if ((f = find_dunder(b, sh_cmp_dunder[swapped[op]]))) return call_dunder(b, f, 1, &a);
  if (op == SH_NE && (f = find_dunder(a, "__eq__"))) {
    sh_obj *r = call_dunder(a, f, 1, &b);
    if (!r || r == SH_NOTIMPL) return r;
    int t = sh_truth(r);
    sh_decref(r);
    return t < 0 ? NULL : sh_bool(!t);
  }
  return sh_incref(SH_NOTIMPL);
}
static sh_obj *inst_getitem(sh_obj *o, sh_obj *key) {
  sh_obj *f = find_dunder(o, "__getitem__");
  if (!f) return sh_raise(sh_TypeError, "'%s' object is not subscriptable", sh_type_name(o));
  return call_dunder(o, f, 1, &key);
}
static int inst_setitem(sh_obj *o, sh_obj *key, sh_obj *v) {
  sh_obj *args[2] = {key, v};
  sh_obj *f = find_dunder(o, v ? "__setitem__" : "__delitem__");
  if (!f) {
    sh_raise(sh_TypeError, "'%s' object does not support item %s", sh_type_name(o), v ? "assignment" : "deletion");
    return -1;
  }
  sh_obj *r = call_dunder(o, f, v ? 2 : 1, args);
  sh_decref(r);
  return r ? 0 : -1;
}
static int64_t inst_len(sh_obj *o) {
  sh_obj *f = find_dunder(o, "__len__");
  if (!f) { sh_raise(sh_TypeError, "object of type '%s' has no len()", sh_type_name(o)); return -1; }
  sh_obj *r = call_dunder(o, f, 0, NULL);
  if (!r) return -1;
  int64_t n = -1;
  sh_as_int(r, &n);
  sh_decref(r);
  return n;
}
static int inst_truth(sh_obj *o) {
  sh_obj *f = find_dunder(o, "__bool__");
  if (f) {
    sh_obj *r = call_dunder(o, f, 0, NULL);
    if (!r) return -1;
    int t = sh_truth(r);
    sh_decref(r);
    return t;
  }
  if (find_dunder(o, "__len__")) { int64_t n = inst_len(o); return n < 0 ? -1 : n != 0; }
  return 1;
}
static sh_obj *inst_iter(sh_obj *o) {
  sh_obj *f = find_dunder(o, "__iter__");
  if (f) return call_dunder(o, f, 0, NULL);
  if (find_dunder(o, "__getitem__")) return sh_getitem_iter_new(o);
  return sh_raise(sh_TypeError, "'%s' object is not iterable", sh_type_name(o));
}
static sh_obj *inst_next(sh_obj *o) {
  sh_obj *f = find_dunder(o, "__next__");
  if (!f) return sh_raise(sh_TypeError, "'%s' object is not an iterator", sh_type_name(o));
  sh_obj *r = call_dunder(o, f, 0, NULL);
  if (!r && sh_err_matches(sh_StopIteration)) sh_err_clear();
  return r;
}
static int inst_contains(sh_obj *o, sh_obj *item) {
  sh_obj *f = find_dunder(o, "__contains__");
  if (!f) {
    sh_obj *it = sh_iter(o), *x;
    if (!it) return -1;
    int found = 0;
    while (!found && (x = sh_next(it))) { found = sh_eq(x, item); sh_decref(x); }
    sh_decref(it);
    return sh_err_occurred() ? -1 : found;
  }
  sh_obj *r = call_dunder(o, f, 1, &item);
  if (!r) return -1;
  int t = sh_truth(r);
  sh_decref(r);
  return t;
}
static int inst_hash(sh_obj *o, int64_t *out) {
  sh_obj *f = find_dunder(o, "__hash__");
  if (!f) { *out = (int64_t)(intptr_t)o >> 4; return 0; }
  sh_obj *r = call_dunder(o, f, 0, NULL);
  if (!r) return -1;
  int rc = sh_as_int(r, out);
  sh_decref(r);
  return rc;
}
static sh_obj *inst_enter(sh_obj *o) {
  sh_obj *f = find_dunder(o, "__enter__");
  if (!f) return sh_raise(sh_TypeError, "'%s' object does not support the context manager protocol", sh_type_name(o));
  return call_dunder(o, f, 0, NULL);
}
static int inst_exit(sh_obj *o, sh_obj *exc) {
  sh_obj *f = find_dunder(o, "__exit__");
  if (!f) return 0;
  sh_obj *args[3] = {exc ? (sh_obj *)exc->type : SH_NONE, exc ? exc : SH_NONE, SH_NONE};
  sh_obj *r = call_dunder(o, f, 3, args);
  if (!r) return -1;
  int t = sh_truth(r);
  sh_decref(r);
  return t;
}

/* T(...) for classes whose instances are sh_inst. */
static sh_obj *inst_construct(sh_obj *cls, int argc, sh_obj **argv, sh_obj *kw) {
  sh_type *t = (sh_type *)cls;
  sh_inst *o = sh_new(t);
  if (sh_is_subtype(t, sh_BaseException)) {
    o->args = sh_tuple_new(argc);
    for (int i = 0; i < argc; i++) SH_TUPLE_ITEMS(o->args)[i] = sh_incref(argv[i]);
    o->tb = sh_list_new(0);
  }
  sh_obj *init = find_dunder(&o->head, "__init__");
  if (init) {
    sh_obj *self = &o->head;
    sh_obj *m = sh_method_new(init, self);
    sh_obj *r = sh_call(m, argc, argv, kw);
    sh_decref(m);
    if (!r) { sh_decref(self); return NULL; }
    if (r != SH_NONE) {
      sh_decref(r); sh_decref(self);
      return sh_raise(sh_TypeError, "__init__() should return None, not '%s'", sh_type_name(r));
    }
    sh_decref(r);
  } else if ((argc || kw) && !sh_is_subtype(t, sh_BaseException)) {
    sh_decref(&o->head);
    return sh_raise(sh_TypeError, "%s() takes no arguments", t->name);
  }
  return &o->head;
}

static sh_obj *exc_getattr(sh_obj *o, const char *name) {
  sh_inst *e = (sh_inst *)o;
  if (!strcmp(name, "args") && e->args) return sh_incref(e->args);
  if (!strcmp(name, "code") && sh_isinstance(o, sh_SystemExit) && e->args)
    return sh_incref(SH_TUPLE_N(e->args) ? SH_TUPLE_ITEMS(e->args)[0] : SH_NONE);
  return NULL;
}

static int exc_setattr(sh_obj *o, const char *name, sh_obj *v) {
  sh_inst *e = (sh_inst *)o;
  if (!strcmp(name, "args")) {
    sh_obj *t = sh_sequence_to_tuple(v);
    if (!t) return -1;
    sh_decref(e->args);
    e->args = t;
    return 0;
  }
  return 1;
}

static void type_fill_instance_hooks(sh_type *t) {
  t->size = sizeof(sh_inst);
  t->destroy = inst_destroy; t->repr = inst_repr; t->str = inst_str; t->call = inst_call;
  t->binop = inst_binop; t->unop = inst_unop; t->compare = inst_compare;
  t->getitem = inst_getitem; t->setitem = inst_setitem; t->len = inst_len;
  t->truth = inst_truth; t->iter = inst_iter; t->next = inst_next;
  t->contains = inst_contains; t->hash = inst_hash; t->enter = inst_enter;
  t->exit = inst_exit; t->construct = inst_construct;
  t->getattr = exc_getattr; t->setattr = exc_setattr;
}

sh_type *sh_heap_type_new(const char *name, sh_type *base, sh_obj *dict) {
  if (base && !(base->flags & SH_TF_INSTANCE) && base != &sh_object_type)
    return (sh_type *)sh_raise(sh_TypeError, "cannot subclass native type '%s'", base->name);
  sh_type *t = xcalloc(1, sizeof(sh_type));
  t->head.refcnt = 1;
  t->head.type = &sh_type_type;
  t->name = xstrdup(name);
  t->base = base == &sh_object_type ? NULL : base;
  if (t->base) SH_INCREF(t->base);
  t->dict = dict ? sh_incref(dict) : sh_dict_new();
  t->flags = SH_TF_HEAP | SH_TF_INSTANCE | SH_TF_READY;
  type_fill_instance_hooks(t);
  return t;
}

sh_type *sh_class_new(const char *name, sh_type *base, const sh_method *methods, const char *help) {
  sh_type *t = sh_heap_type_new(name, base, NULL);
  if (!t) return NULL;
  t->help = help;
  for (const sh_method *m = methods; m && m->name; m++) {
    sh_obj *f = sh_builtin_new(m->name, m->fn, NULL, m->sig, m->help);
    ((sh_builtin_obj *)f)->unbound = true;
    sh_dict_set_str(t->dict, m->name, f);
    sh_decref(f);
  }
  return t;
}

sh_type *sh_exc_class_new(const char *name, sh_type *base) {
  return sh_heap_type_new(name, base ? base : sh_Exception, NULL);
}

/* Class attribute lookup along the base chain; borrowed. Native types get their method
 * tables copied into a dict on first use. */
static void type_ready(sh_type *t) {
  if (t->flags & SH_TF_READY) return;
  t->flags |= SH_TF_READY;
  if (!t->dict) t->dict = sh_dict_new();
  for (const sh_method *m = t->methods; m && m->name; m++) {
    sh_obj *f = sh_builtin_new(m->name, m->fn, NULL, m->sig, m->help);
    ((sh_builtin_obj *)f)->unbound = true;
    sh_dict_set_str(t->dict, m->name, f);
    sh_decref(f);
  }
}

static sh_obj *lookup_class_attr(sh_type *t, sh_obj *name) {
  for (; t; t = t->base) {
    type_ready(t);
    sh_obj *v = sh_dict_get(t->dict, name);
    if (v) return v;
  }
  return NULL;
}

sh_obj *sh_class_lookup(sh_type *t, sh_obj *name) { return lookup_class_attr(t, name); }

sh_obj *sh_bind(sh_obj *v, sh_obj *o) {
  if (v->type == &sh_func_type) return sh_method_new(v, o);
  if (v->type == &sh_builtin_type && ((sh_builtin_obj *)v)->unbound) {
    sh_builtin_obj *b = (sh_builtin_obj *)v;
    return sh_builtin_new(b->name, b->fn, o, b->sig, b->help);
  }
  if (v->type == &sh_staticmethod_type) return sh_incref(((sh_cell_obj *)v)->v);
  if (v->type == &sh_classmethod_type) return sh_method_new(((sh_cell_obj *)v)->v, (sh_obj *)o->type);
  if (v->type == &sh_property_type) {
    sh_obj *get = ((sh_cell_obj *)v)->v;
    return sh_call(get, 1, &o, NULL);
  }
  return sh_incref(v);
}

static void type_destroy(sh_obj *o) {
  sh_type *t = (sh_type *)o;
  sh_decref(t->dict);
  if (t->flags & SH_TF_HEAP) { SH_DECREF(t->base); free((char *)t->name); }
}
static sh_obj *type_repr(sh_obj *o) {
  sh_type *t = (sh_type *)o;
  if (t->flags & SH_TF_HEAP && !sh_is_subtype(t, sh_BaseException)) {
    sh_obj *m = sh_dict_get_str(t->dict, "__module__");
    return sh_strf("<class '%s.%s'>", m && sh_is_str(m) ? sh_str_cstr(m) : "__main__", t->name);
  }
  return sh_strf("<class '%s'>", t->name);
}
static sh_obj *type_call(sh_obj *o, int argc, sh_obj **argv, sh_obj *kw) {
  sh_type *t = (sh_type *)o;
  for (sh_type *c = t; c; c = c->base)
    if (c->construct) return c->construct(o, argc, argv, kw);
  return sh_raise(sh_TypeError, "cannot create '%s' instances", t->name);
}
static sh_obj *type_getattr(sh_obj *o, const char *name) {
  sh_type *t = (sh_type *)o;
  if (!strcmp(name, "__name__")) {   /* a native type's name after its module: numpy.float32 */
    const char *dot = t->flags & SH_TF_HEAP ? NULL : strrchr(t->name, '.');
    return sh_str(dot ? dot + 1 : t->name);
  }
  if (!strcmp(name, "__doc__") && t->help) return sh_str(t->help);
  if (!strcmp(name, "__base__") || !strcmp(name, "__bases__")) {
    sh_obj *b = t->base ? (sh_obj *)t->base : (sh_obj *)&sh_object_type;
    return name[6] == 's' ? sh_tuple_of(1, sh_incref(b)) : sh_incref(b);
  }
  sh_obj *n = sh_intern(name);
  sh_obj *v = lookup_class_attr(t, n);
  sh_decref(n);
  if (v && v->type == &sh_staticmethod_type) v = ((sh_cell_obj *)v)->v;
  if (v && v->type == &sh_classmethod_type) return sh_method_new(((sh_cell_obj *)v)->v, o);
  if (!v && !strcmp(name, "__doc__")) return sh_none();
  return sh_incref(v);
}
static int type_setattr(sh_obj *o, const char *name, sh_obj *v) {
  sh_type *t = (sh_type *)o;
  if (!(t->flags & SH_TF_HEAP)) {
    sh_raise(sh_TypeError, "cannot set '%s' attribute of immutable type '%s'", name, t->name);
    return -1;
  }
  if (!v) {
    sh_obj *k = sh_str(name);
    int r = sh_dict_del(t->dict, k);
    sh_decref(k);
    return r > 0 ? 0 : -1;
  }
  return sh_dict_set_str(t->dict, name, v);
}
static int type_hash(sh_obj *o, int64_t *out) { *out = (int64_t)(intptr_t)o >> 4; return 0; }
sh_type sh_type_type = {SH_TYPE_HEAD, .name = "type", .destroy = type_destroy,
  .repr = type_repr, .call = type_call, .getattr = type_getattr, .setattr = type_setattr,
  .hash = type_hash};
static sh_obj *object_construct(sh_obj *cls, int argc, sh_obj **argv, sh_obj *kw) {
  return inst_construct((sh_obj *)cls, argc, argv, kw);
}
sh_type sh_object_type = {SH_TYPE_HEAD, .name = "object", .construct = object_construct};

/* ---- exceptions ------------------------------------------------------------------------- */
static sh_obj *exc_init(ARGS) {
  if (!self || !(self->type->flags & SH_TF_INSTANCE)) return sh_none();
  sh_inst *e = (sh_inst *)self;
  sh_obj *t = sh_tuple_new(argc);
  for (int i = 0; i < argc; i++) SH_TUPLE_ITEMS(t)[i] = sh_incref(argv[i]);
  sh_decref(e->args);
  e->args = t;
  return sh_none();
}
static sh_obj *exc_with_traceback(ARGS) { return sh_incref(self); }

/* BaseException.__init__ and with_traceback (builtins init). */
void sh_exc_add_methods(void) {
  sh_obj *f = sh_builtin_new("__init__", exc_init, NULL, "__init__(*args)", "Store args.");
  ((sh_builtin_obj *)f)->unbound = true;
  sh_dict_set_str(sh_BaseException->dict, "__init__", f);
  sh_decref(f);
  f = sh_builtin_new("with_traceback", exc_with_traceback, NULL, "with_traceback(tb)", "Returns self.");
  ((sh_builtin_obj *)f)->unbound = true;
  sh_dict_set_str(sh_BaseException->dict, "with_traceback", f);
  sh_decref(f);
}
