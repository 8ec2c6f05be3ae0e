/* The object model's core: allocation, singletons, cells, native functions, bound methods
 * and modules, the generic operations (attribute access, calls, operators, comparison,
 * iteration), argument parsing and init. Each type family has its own file with its core
 * and its methods: num.c, str.c, list.c, dict.c, class.c (and exceptions), file.c;
 * functions and frames live in eval.c, formatting in format.c. */
#define _GNU_SOURCE
#include "base/alloc.h"
#include "shell/lang/value.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "shell/lang/interp.h"

const char *const sh_binop_symbol[SH_BINOP_COUNT] = {
  "+", "-", "*", "/", "//", "%", "** or pow()", "@", "<<", ">>", "&", "|", "^"};
const char *const sh_cmpop_symbol[SH_CMPOP_COUNT] = {"<", "<=", "==", "!=", ">", ">="};
const char *const sh_binop_dunder[SH_BINOP_COUNT] = {
  "__add__", "__sub__", "__mul__", "__truediv__", "__floordiv__", "__mod__", "__pow__",
  "__matmul__", "__lshift__", "__rshift__", "__and__", "__or__", "__xor__"};
const char *const sh_binop_rdunder[SH_BINOP_COUNT] = {
  "__radd__", "__rsub__", "__rmul__", "__rtruediv__", "__rfloordiv__", "__rmod__",
  "__rpow__", "__rmatmul__", "__rlshift__", "__rrshift__", "__rand__", "__ror__", "__rxor__"};
const char *const sh_cmp_dunder[SH_CMPOP_COUNT] = {
  "__lt__", "__le__", "__eq__", "__ne__", "__gt__", "__ge__"};

/* ---- allocation ------------------------------------------------------------------------ */

/* Ints and floats are allocated and freed constantly: keep a free list of each. */
sh_obj *sh_int_free[SH_FREELIST_MAX], *sh_float_free[SH_FREELIST_MAX];
int sh_n_int_free, sh_n_float_free;

void *sh_new(sh_type *t) {
  sh_obj *o = xcalloc(1, t->size ? t->size : sizeof(sh_obj));
  o->refcnt = 1;
  o->type = t;
  if (t->flags & SH_TF_HEAP) SH_INCREF(t);
  return o;
}

void sh_dealloc(sh_obj *o) {
  sh_type *t = o->type;
  if (t == &sh_int_type && sh_n_int_free < SH_FREELIST_MAX) { sh_int_free[sh_n_int_free++] = o; return; }
  if (t == &sh_float_type && sh_n_float_free < SH_FREELIST_MAX) { sh_float_free[sh_n_float_free++] = o; return; }
  /* A pending exception must survive destructors that run Python code. */
  for (sh_type *d = t; d; d = d->base)
    if (d->destroy) { d->destroy(o); break; }
  free(o);
  if (t->flags & SH_TF_HEAP) SH_DECREF(t);
}

bool sh_is_subtype(const sh_type *t, const sh_type *base) {
  if (base == &sh_object_type) return true;
  for (; t; t = t->base)
    if (t == base) return true;
  return false;
}

sh_obj *sh_self_iter(sh_obj *o) { return sh_incref(o); }

/* ---- singletons ------------------------------------------------------------------------ */
static sh_obj *none_repr(sh_obj *o) { return sh_str("None"); }
static sh_obj *ellipsis_repr(sh_obj *o) { return sh_str("Ellipsis"); }
static sh_obj *notimpl_repr(sh_obj *o) { return sh_str("NotImplemented"); }
static int none_truth(sh_obj *o) { return 0; }
sh_type sh_none_type = {SH_TYPE_HEAD, .name = "NoneType", .repr = none_repr, .truth = none_truth};
sh_type sh_ellipsis_type = {SH_TYPE_HEAD, .name = "ellipsis", .repr = ellipsis_repr};
sh_type sh_notimpl_type = {SH_TYPE_HEAD, .name = "NotImplementedType", .repr = notimpl_repr};
sh_obj sh_none_obj = SH_OBJ_HEAD(&sh_none_type);
sh_obj sh_ellipsis_obj = SH_OBJ_HEAD(&sh_ellipsis_type);
sh_obj sh_notimpl_obj = SH_OBJ_HEAD(&sh_notimpl_type);
static sh_int_obj true_obj = {SH_OBJ_HEAD(&sh_bool_type), 1};
static sh_int_obj false_obj = {SH_OBJ_HEAD(&sh_bool_type), 0};
sh_obj *sh_true = &true_obj.head, *sh_false = &false_obj.head;
sh_obj *sh_none(void) { return sh_incref(SH_NONE); }
sh_obj *sh_bool(bool b) { return sh_incref(b ? sh_true : sh_false); }

/* ---- cells, builtins, bound methods, modules -------------------------------------------- */
static void cell_destroy(sh_obj *o) { sh_decref(((sh_cell_obj *)o)->v); }
sh_type sh_cell_type = {SH_TYPE_HEAD, .name = "cell", .size = sizeof(sh_cell_obj), .destroy = cell_destroy};

static void builtin_destroy(sh_obj *o) { sh_decref(((sh_builtin_obj *)o)->self); }
static sh_obj *builtin_call(sh_obj *o, int argc, sh_obj **argv, sh_obj *kw) {
  sh_builtin_obj *b = (sh_builtin_obj *)o;
  return b->fn(b->self, argc, argv, kw);
}
static sh_obj *builtin_repr(sh_obj *o) {
  sh_builtin_obj *b = (sh_builtin_obj *)o;
  if (b->self && b->self->type != &sh_module_type)
    return sh_strf("<built-in method %s of %s object>", b->name, sh_type_name(b->self));
  return sh_strf("<built-in function %s>", b->name);
}
static sh_obj *builtin_getattr(sh_obj *o, const char *name) {
  if (!strcmp(name, "__name__")) return sh_str(((sh_builtin_obj *)o)->name);
  if (!strcmp(name, "__doc__")) {
    const char *h = ((sh_builtin_obj *)o)->help;
    return h ? sh_str(h) : sh_none();
  }
  return NULL;
}
sh_type sh_builtin_type = {SH_TYPE_HEAD, .name = "builtin_function_or_method",
  .size = sizeof(sh_builtin_obj), .destroy = builtin_destroy, .call = builtin_call,
  .repr = builtin_repr, .getattr = builtin_getattr};

sh_obj *sh_builtin_new(const char *name, sh_cfunc fn, sh_obj *self, const char *sig,
                       const char *help) {
  sh_builtin_obj *b = sh_new(&sh_builtin_type);
  b->name = name; b->fn = fn; b->self = sh_incref(self); b->sig = sig; b->help = help;
  return &b->head;
}

static void method_destroy(sh_obj *o) {
  sh_method_obj *m = (sh_method_obj *)o;
  sh_decref(m->self); sh_decref(m->func);
}
static sh_obj *method_call(sh_obj *o, int argc, sh_obj **argv, sh_obj *kw) {
  sh_method_obj *m = (sh_method_obj *)o;
  sh_obj *small[8], **args = argc + 1 <= 8 ? small : xmalloc((argc + 1) * sizeof *args);
  args[0] = m->self;
  if (argc) memcpy(args + 1, argv, argc * sizeof *argv);
  sh_obj *r = sh_call(m->func, argc + 1, args, kw);
  if (args != small) free(args);
  return r;
}
static sh_obj *method_repr(sh_obj *o) {
  sh_method_obj *m = (sh_method_obj *)o;
  sh_obj *n = sh_getattr_opt(m->func, "__name__");
  sh_obj *r = sh_strf("<bound method %s of %s object>", n && sh_is_str(n) ? sh_str_cstr(n) : "?",
                      sh_type_name(m->self));
  sh_decref(n);
  return r;
}
static sh_obj *method_getattr(sh_obj *o, const char *name) {
  sh_method_obj *m = (sh_method_obj *)o;
  if (!strcmp(name, "__self__")) return sh_incref(m->self);
  if (!strcmp(name, "__func__")) return sh_incref(m->func);
  return sh_getattr_opt(m->func, name);
}
sh_type sh_method_type = {SH_TYPE_HEAD, .name = "method", .size = sizeof(sh_method_obj),
  .destroy = method_destroy, .call = method_call, .repr = method_repr, .getattr = method_getattr};

sh_obj *sh_method_new(sh_obj *func, sh_obj *self) {
  sh_method_obj *m = sh_new(&sh_method_type);
  m->func = sh_incref(func);
  m->self = sh_incref(self);
  return &m->head;
}

static void module_destroy(sh_obj *o) {
  sh_module_obj *m = (sh_module_obj *)o;
  sh_decref(m->dict); sh_decref(m->name);
}
static sh_obj *module_repr(sh_obj *o) {
  return sh_strf("<module '%s'>", sh_str_cstr(((sh_module_obj *)o)->name));
}
sh_type sh_module_type = {SH_TYPE_HEAD, .name = "module", .size = sizeof(sh_module_obj),
  .destroy = module_destroy, .repr = module_repr};

sh_obj *sh_module_new(const char *name) {
  sh_module_obj *m = sh_new(&sh_module_type);
  m->dict = sh_dict_new();
  m->name = sh_str(name);
  sh_dict_set_str(m->dict, "__name__", m->name);
  return &m->head;
}
int sh_module_add(sh_obj *mod, const char *name, sh_obj *value) {
  if (!value) return -1;
  int r = sh_dict_set_str(((sh_module_obj *)mod)->dict, name, value);
  sh_decref(value);
  return r;
}
int sh_module_add_func(sh_obj *mod, const char *name, sh_cfunc fn, const char *sig,
                       const char *help) {
  return sh_module_add(mod, name, sh_builtin_new(name, fn, NULL, sig, help));
}
int sh_module_add_funcs(sh_obj *mod, const sh_method *t) {
  for (; t->name; t++) sh_module_add_func(mod, t->name, t->fn, t->sig, t->help);
  return 0;
}
int sh_module_add_sub(sh_obj *mod, const char *name, sh_obj *sub) {
  return sh_module_add(mod, name, sub);
}

/* ---- generic operations ----------------------------------------------------------------- */
/* Guard against infinite recursion in repr of self-containing containers. */
static _Thread_local sh_obj *repr_stack[64];
static _Thread_local int repr_depth;
bool sh_repr_enter(sh_obj *o) {
  for (int i = 0; i < repr_depth && i < 64; i++) if (repr_stack[i] == o) return true;
  if (repr_depth < 64) repr_stack[repr_depth] = o;
  repr_depth++;
  return false;
}
void sh_repr_leave(sh_obj *o) { repr_depth--; }

sh_obj *sh_repr(sh_obj *o) {
  if (repr_depth > 10000) return sh_raise(sh_RecursionError, "maximum recursion depth exceeded while getting the repr of an object");
  for (sh_type *t = o->type; t; t = t->base)
    if (t->repr) {
      sh_obj *r = t->repr(o);
      if (r && !sh_is_str(r)) {
        sh_decref(r);
        return sh_raise(sh_TypeError, "__repr__ returned non-string (type %s)", sh_type_name(r));
      }
      return r;
    }
  return sh_strf("<%s object at %p>", sh_type_name(o), (void *)o);
}

sh_obj *sh_to_str(sh_obj *o) {
  if (sh_is_str(o)) return sh_incref(o);
  for (sh_type *t = o->type; t; t = t->base) {
    if (t->str) {
      sh_obj *r = t->str(o);
      if (r && !sh_is_str(r)) {
        sh_decref(r);
        return sh_raise(sh_TypeError, "__str__ returned non-string (type %s)", sh_type_name(r));
      }
      return r;
    }
    if (t->repr) break;
  }
  return sh_repr(o);
}

int sh_fprint(FILE *f, sh_obj *o, bool use_repr) {
  sh_obj *s = use_repr ? sh_repr(o) : sh_to_str(o);
  if (!s) return -1;
  fwrite(sh_str_cstr(s), 1, sh_str_len(s), f);
  sh_decref(s);
  return 0;
}

static sh_obj *instance_dict(sh_obj *o) {
  return (o->type->flags & SH_TF_INSTANCE) ? ((sh_inst *)o)->dict : NULL;
}

/* The evaluator's attribute lookup, by interned name. */
sh_obj *sh_getattr_s(sh_obj *o, sh_obj *name, bool raise) {
  const char *cname = sh_str_cstr(name);
  sh_type *t = o->type;
  for (sh_type *c = t; c; c = c->base)
    if (c->getattr) {
      sh_obj *v = c->getattr(o, cname);
      if (v || sh_err_occurred()) return v;
      break;
    }
  sh_obj *d = instance_dict(o);
  if (d) { sh_obj *v = sh_dict_get(d, name); if (v) return sh_incref(v); }
  if (t == &sh_module_type) {
    sh_obj *v = sh_dict_get(((sh_module_obj *)o)->dict, name);
    if (v) return sh_incref(v);
    /* PEP 562: a module's own __getattr__(name) answers names its dict lacks */
    sh_obj *hook = strncmp(cname, "__", 2) ? sh_dict_get_str(((sh_module_obj *)o)->dict, "__getattr__") : NULL;
    if (hook) {
      sh_obj *r = sh_call(hook, 1, &name, NULL);
      if (r || !raise || !sh_err_matches(sh_AttributeError)) {
        if (!r && !raise && sh_err_matches(sh_AttributeError)) sh_err_clear();
        return r;
      }
      sh_err_clear();
    }
  } else if (t != &sh_type_type) {
    sh_obj *v = sh_class_lookup(t, name);
    if (v) return sh_bind(v, o);
  }
  if (!strcmp(cname, "__class__")) return sh_incref((sh_obj *)t);
  if (!strcmp(cname, "__dict__")) {
    if (d) return sh_incref(d);
    if (t == &sh_module_type) return sh_incref(((sh_module_obj *)o)->dict);
  }
  if (!raise) return NULL;
  if (t == &sh_module_type)
    return sh_raise(sh_AttributeError, "module '%s' has no attribute '%s'",
                    sh_str_cstr(((sh_module_obj *)o)->name), cname);
  if (t == &sh_type_type)
    return sh_raise(sh_AttributeError, "type object '%s' has no attribute '%s'",
                    ((sh_type *)o)->name, cname);
  return sh_raise(sh_AttributeError, "'%s' object has no attribute '%s'", t->name, cname);
}

sh_obj *sh_getattr(sh_obj *o, const char *name) {
  sh_obj *n = sh_intern(name);
  sh_obj *r = sh_getattr_s(o, n, true);
  sh_decref(n);
  return r;
}
sh_obj *sh_getattr_opt(sh_obj *o, const char *name) {
  sh_obj *n = sh_intern(name);
  sh_obj *r = sh_getattr_s(o, n, false);
  sh_decref(n);
  return r;
}

int sh_setattr_s(sh_obj *o, sh_obj *name, sh_obj *v) {
  const char *cname = sh_str_cstr(name);
  for (sh_type *c = o->type; c; c = c->base)
    if (c->setattr) {
      int r = c->setattr(o, cname, v);
      if (r <= 0) return r;
      break;
    }
  if (o->type->flags & SH_TF_INSTANCE) {
    sh_inst *i = (sh_inst *)o;
    if (!i->dict) i->dict = sh_dict_new();
    if (v) return sh_dict_set(i->dict, name, v);
    int r = sh_dict_del(i->dict, name);
    if (r > 0) return 0;
    if (r == 0) sh_raise(sh_AttributeError, "'%s' object has no attribute '%s'", sh_type_name(o), cname);
    return -1;
  }
  if (o->type == &sh_module_type) {
    sh_obj *d = ((sh_module_obj *)o)->dict;
    if (v) return sh_dict_set(d, name, v);
    return sh_dict_del(d, name) > 0 ? 0 : -1;
  }
  if (o->type == &sh_func_type) return sh_func_setattr(o, name, v);
  sh_raise(sh_AttributeError, "'%s' object has no attribute '%s'", sh_type_name(o), cname);
  return -1;
}

int sh_setattr(sh_obj *o, const char *name, sh_obj *value) {
  sh_obj *n = sh_intern(name);
  int r = sh_setattr_s(o, n, value);
  sh_decref(n);
  return r;
}
int sh_delattr(sh_obj *o, const char *name) { return sh_setattr(o, name, NULL); }

sh_obj *sh_call(sh_obj *f, int argc, sh_obj **argv, sh_obj *kw) {
  if (sh_interrupted && sh_check_interrupt() < 0) return NULL;
  if (f->type == &sh_func_type) return sh_func_call(f, argc, argv, kw);
  if (f->type == &sh_builtin_type) {
    sh_builtin_obj *b = (sh_builtin_obj *)f;
    if (b->unbound && !b->self) {   /* Class.method(obj, ...) */
      if (argc < 1) return sh_raise(sh_TypeError, "%s() needs an argument", b->name);
      return b->fn(argv[0], argc - 1, argv + 1, kw);
    }
    return b->fn(b->self, argc, argv, kw);
  }
  for (sh_type *t = f->type; t; t = t->base)
    if (t->call) return t->call(f, argc, argv, kw);
  return sh_raise(sh_TypeError, "'%s' object is not callable", sh_type_name(f));
}

sh_obj *sh_call_method(sh_obj *o, const char *name, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *m = sh_getattr(o, name);
  if (!m) return NULL;
  sh_obj *r = sh_call(m, argc, argv, kw);
  sh_decref(m);
  return r;
}

static sh_obj *try_binop(sh_type *t, int op, sh_obj *a, sh_obj *b) {
  for (; t; t = t->base)
    if (t->binop) return t->binop(op, a, b);
  return sh_incref(SH_NOTIMPL);
}

sh_obj *sh_binop(int op, sh_obj *a, sh_obj *b) {
  sh_obj *r = try_binop(a->type, op, a, b);
  if (r != SH_NOTIMPL) return r;
  sh_decref(r);
  if (b->type != a->type) {
    r = try_binop(b->type, op, a, b);
    if (r != SH_NOTIMPL) return r;
    sh_decref(r);
  }
  return sh_raise(sh_TypeError, "unsupported operand type(s) for %s: '%s' and '%s'",
                  sh_binop_symbol[op], sh_type_name(a), sh_type_name(b));
}

sh_obj *sh_unop(int op, sh_obj *a) {
  static const char *sym[] = {"unary -", "unary +", "unary ~"};
  for (sh_type *t = a->type; t; t = t->base)
    if (t->unop) {
      sh_obj *r = t->unop(op, a);
      if (r != SH_NOTIMPL) return r;
      sh_decref(r);
      break;
    }
  return sh_raise(sh_TypeError, "bad operand type for %s: '%s'", sym[op], sh_type_name(a));
}

static sh_obj *try_compare(sh_type *t, int op, sh_obj *a, sh_obj *b) {
  for (; t; t = t->base)
    if (t->compare) return t->compare(op, a, b);
  return sh_incref(SH_NOTIMPL);
}

sh_obj *sh_compare(int op, sh_obj *a, sh_obj *b) {
  static const int swapped[] = {SH_GT, SH_GE, SH_EQ, SH_NE, SH_LT, SH_LE};
  sh_obj *r = try_compare(a->type, op, a, b);
  if (r != SH_NOTIMPL) return r;
  sh_decref(r);
  if (b->type != a->type) {
    r = try_compare(b->type, swapped[op], b, a);
    if (r != SH_NOTIMPL) return r;
    sh_decref(r);
  }
  if (op == SH_EQ) return sh_bool(a == b);
  if (op == SH_NE) return sh_bool(a != b);
  return sh_raise(sh_TypeError, "'%s' not supported between instances of '%s' and '%s'",
                  sh_cmpop_symbol[op], sh_type_name(a), sh_type_name(b));
}

int sh_compare_bool(int op, sh_obj *a, sh_obj *b) {
  sh_obj *r = sh_compare(op, a, b);
  if (!r) return -1;
  int t = r == sh_true ? 1 : r == sh_false ? 0 : sh_truth(r);
  sh_decref(r);
  return t;
}

int sh_eq(sh_obj *a, sh_obj *b) {
  if (a == b) return 1;
  if (sh_is_int(a) && sh_is_int(b)) return sh_int_value(a) == sh_int_value(b);
  if (sh_is_str(a) && sh_is_str(b))
    return sh_str_len(a) == sh_str_len(b) && !memcmp(sh_str_cstr(a), sh_str_cstr(b), sh_str_len(a));
  return sh_compare_bool(SH_EQ, a, b);
}

int sh_truth(sh_obj *o) {
  if (o == sh_true) return 1;
  if (o == sh_false || o == SH_NONE) return 0;
  for (sh_type *t = o->type; t; t = t->base) {
    if (t->truth) return t->truth(o);
    if (t->len) { int64_t n = t->len(o); return n < 0 ? -1 : n != 0; }
  }
  return 1;
}
int sh_as_bool(sh_obj *o) { return sh_truth(o); }

int sh_hash(sh_obj *o, int64_t *out) {
  if (sh_is_str(o)) { *out = sh_str_hash_value((sh_str_obj *)o); return 0; }
  for (sh_type *t = o->type; t; t = t->base)
    if (t->hash) return t->hash(o, out);
  *out = (int64_t)(intptr_t)o >> 4;
  return 0;
}

/* A built-in sequence indexed by an object with __index__ (a numpy int fetched by
 * sess.run): the int it stands for (new ref), else NULL without an exception. */
static sh_obj *index_key(sh_obj *o, sh_obj *key) {
  if (sh_is_int(key) || key->type == &sh_slice_type || sh_is_str(key)) return NULL;
  if (o->type != &sh_list_type && o->type != &sh_tuple_type && o->type != &sh_str_type && o->type != &sh_range_type)
    return NULL;
  sh_obj *f = sh_getattr_opt(key, "__index__"), *r = f ? sh_call(f, 0, NULL, NULL) : NULL;
  sh_decref(f);
  if (r && sh_is_int(r)) return r;
  sh_decref(r);
  sh_err_clear();
  return NULL;
}

sh_obj *sh_getitem(sh_obj *o, sh_obj *key) {
  sh_obj *ik = index_key(o, key);
  if (ik) {
    sh_obj *r = sh_getitem(o, ik);
    sh_decref(ik);
    return r;
  }
  for (sh_type *t = o->type; t; t = t->base)
    if (t->getitem) return t->getitem(o, key);
  if (o->type == &sh_type_type)   /* list[int] style annotations: return the class */
    return sh_incref(o);
  return sh_raise(sh_TypeError, "'%s' object is not subscriptable", sh_type_name(o));
}

int sh_setitem(sh_obj *o, sh_obj *key, sh_obj *value) {
  sh_obj *ik = index_key(o, key);
  if (ik) {
    int r = sh_setitem(o, ik, value);
    sh_decref(ik);
    return r;
  }
  for (sh_type *t = o->type; t; t = t->base)
    if (t->setitem) return t->setitem(o, key, value);
  sh_raise(sh_TypeError, value ? "'%s' object does not support item assignment"
                               : "'%s' object doesn't support item deletion", sh_type_name(o));
  return -1;
}

/* Iterating a type that has getitem but no iter hook: o[0], o[1], ... until IndexError. */
typedef struct { sh_obj head; sh_obj *seq; int64_t i; } getitem_iter;
static void getitem_iter_destroy(sh_obj *o) { sh_decref(((getitem_iter *)o)->seq); }
static sh_obj *getitem_iter_next(sh_obj *o) {
  getitem_iter *it = (getitem_iter *)o;
  if (!it->seq) return NULL;
  sh_obj *k = sh_int(it->i++);
  sh_obj *v = sh_getitem(it->seq, k);
  sh_decref(k);
  if (!v && (sh_err_matches(sh_IndexError) || sh_err_matches(sh_StopIteration))) {
    sh_err_clear();
    sh_clear(&it->seq);
  }
  return v;
}
static sh_type getitem_iter_type = {SH_TYPE_HEAD, .name = "iterator", .size = sizeof(getitem_iter),
  .destroy = getitem_iter_destroy, .iter = sh_self_iter, .next = getitem_iter_next};

sh_obj *sh_getitem_iter_new(sh_obj *o) {
  getitem_iter *it = sh_new(&getitem_iter_type);
  it->seq = sh_incref(o);
  return &it->head;
}

sh_obj *sh_iter(sh_obj *o) {
  for (sh_type *t = o->type; t; t = t->base)
    if (t->iter) return t->iter(o);
  for (sh_type *t = o->type; t; t = t->base)
    if (t->getitem && !(t->flags & SH_TF_INSTANCE)) return sh_getitem_iter_new(o);
  return sh_raise(sh_TypeError, "'%s' object is not iterable", sh_type_name(o));
}

sh_obj *sh_next(sh_obj *it) {
  for (sh_type *t = it->type; t; t = t->base)
    if (t->next) return t->next(it);
  return sh_raise(sh_TypeError, "'%s' object is not an iterator", sh_type_name(it));
}

int64_t sh_len(sh_obj *o) {
  for (sh_type *t = o->type; t; t = t->base)
    if (t->len) return t->len(o);
  sh_raise(sh_TypeError, "object of type '%s' has no len()", sh_type_name(o));
  return -1;
}

int sh_contains(sh_obj *c, sh_obj *item) {
  for (sh_type *t = c->type; t; t = t->base)
    if (t->contains) return t->contains(c, item);
  sh_obj *it = sh_iter(c), *x;
  if (!it) {
    sh_err_clear();
    sh_raise(sh_TypeError, "argument of type '%s' is not iterable", sh_type_name(c));
    return -1;
  }
  int found = 0;
  while (!found && (x = sh_next(it))) { found = sh_eq(x, item); sh_decref(x); }
  sh_decref(it);
  return sh_err_occurred() ? -1 : found;
}

sh_obj *sh_as_number(sh_obj *o) {
  if (sh_is_int(o) || sh_is_float(o)) return sh_incref(o);
  if (sh_is_str(o)) return NULL;
  sh_obj *f = sh_getattr_opt(o, "__float__");
  if (!f) {
    sh_err_clear();
    return NULL;
  }
  sh_obj *r = sh_call(f, 0, NULL, NULL);
  sh_decref(f);
  if (r && (sh_is_float(r) || sh_is_int(r))) return r;
  sh_decref(r);
  sh_err_clear();
  return NULL;
}

int sh_as_int(sh_obj *o, int64_t *out) {
  if (sh_is_int(o)) { *out = sh_int_value(o); return 0; }
  sh_obj *idx = sh_getattr_opt(o, "__index__");
  if (idx) {
    sh_obj *r = sh_call(idx, 0, NULL, NULL);
    sh_decref(idx);
    if (r && sh_is_int(r)) { *out = sh_int_value(r); sh_decref(r); return 0; }
    sh_decref(r);
  }
  sh_err_clear();
  sh_raise(sh_TypeError, "'%s' object cannot be interpreted as an integer", sh_type_name(o));
  return -1;
}

int sh_as_double(sh_obj *o, double *out) {
  if (sh_is_int(o)) { *out = (double)sh_int_value(o); return 0; }
  if (sh_is_float(o)) { *out = sh_float_value(o); return 0; }
  sh_obj *n = sh_as_number(o);   /* numpy scalars and other objects with __float__ */
  if (n) {
    *out = sh_is_int(n) ? (double)sh_int_value(n) : sh_float_value(n);
    sh_decref(n);
    return 0;
  }
  sh_raise(sh_TypeError, "must be real number, not %s", sh_type_name(o));
  return -1;
}

const char *sh_as_cstr(sh_obj *o) {
  if (sh_is_str(o)) return sh_str_cstr(o);
  sh_raise(sh_TypeError, "expected str, got %s", sh_type_name(o));
  return NULL;
}

/* ---- argument parsing ------------------------------------------------------------------- */
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
      int i = 0;
      while (i < n && strcmp(names[i], sh_str_cstr(k))) i++;
      if (i == n) {
        if (any_kw) continue;
        sh_raise(sh_TypeError, "%s() got an unexpected keyword argument '%s'", fname, sh_str_cstr(k));
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

/* ---- init ------------------------------------------------------------------------------- */
static sh_type *exc(const char *name, sh_type *base) {
  sh_type *t = sh_heap_type_new(name, base ? base : &sh_object_type, NULL);
  return t;
}

void sh_value_init(void) {
  sh_num_init();
  sh_str_init();
  sh_BaseException = exc("BaseException", NULL);
  sh_Exception = exc("Exception", sh_BaseException);
  sh_SystemExit = exc("SystemExit", sh_BaseException);
  sh_KeyboardInterrupt = exc("KeyboardInterrupt", sh_BaseException);
  sh_StopIteration = exc("StopIteration", sh_Exception);
  sh_ArithmeticError = exc("ArithmeticError", sh_Exception);
  sh_ZeroDivisionError = exc("ZeroDivisionError", sh_ArithmeticError);
  sh_OverflowError = exc("OverflowError", sh_ArithmeticError);
  sh_AssertionError = exc("AssertionError", sh_Exception);
  sh_AttributeError = exc("AttributeError", sh_Exception);
  sh_ImportError = exc("ImportError", sh_Exception);
  sh_ModuleNotFoundError = exc("ModuleNotFoundError", sh_ImportError);
  sh_LookupError = exc("LookupError", sh_Exception);
  sh_IndexError = exc("IndexError", sh_LookupError);
  sh_KeyError = exc("KeyError", sh_LookupError);
  sh_NameError = exc("NameError", sh_Exception);
  sh_UnboundLocalError = exc("UnboundLocalError", sh_NameError);
  sh_OSError = exc("OSError", sh_Exception);
  sh_FileNotFoundError = exc("FileNotFoundError", sh_OSError);
  sh_RuntimeError = exc("RuntimeError", sh_Exception);
  sh_NotImplementedError = exc("NotImplementedError", sh_RuntimeError);
  sh_RecursionError = exc("RecursionError", sh_RuntimeError);
  sh_SyntaxError = exc("SyntaxError", sh_Exception);
  sh_TypeError = exc("TypeError", sh_Exception);
  sh_ValueError = exc("ValueError", sh_Exception);
  sh_EOFError = exc("EOFError", sh_Exception);
  sh_UnicodeError = exc("UnicodeError", sh_ValueError);
}

void sh_value_fini(void) {
  sh_err_clear();
  sh_type **all[] = {&sh_UnicodeError, &sh_EOFError, &sh_ValueError, &sh_TypeError,
    &sh_SyntaxError, &sh_RecursionError, &sh_NotImplementedError, &sh_RuntimeError,
    &sh_FileNotFoundError, &sh_OSError, &sh_UnboundLocalError, &sh_NameError, &sh_KeyError,
    &sh_IndexError, &sh_LookupError, &sh_ModuleNotFoundError, &sh_ImportError,
    &sh_AttributeError, &sh_AssertionError, &sh_OverflowError, &sh_ZeroDivisionError,
    &sh_ArithmeticError, &sh_StopIteration, &sh_KeyboardInterrupt, &sh_SystemExit,
    &sh_Exception, &sh_BaseException};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
    sh_type *t = *all[i];
    *all[i] = NULL;
    sh_dict_clear(t->dict);
    SH_DECREF(t);
  }
  sh_type *statics[] = {&sh_str_type, &sh_list_type, &sh_tuple_type, &sh_dict_type,
    &sh_set_type, &sh_int_type, &sh_float_type, &sh_bool_type, &sh_file_type,
    &sh_range_type, &sh_none_type, &sh_object_type};
  for (size_t i = 0; i < sizeof statics / sizeof *statics; i++) sh_clear(&statics[i]->dict);
  sh_str_fini();
  while (sh_n_int_free) free(sh_int_free[--sh_n_int_free]);
  while (sh_n_float_free) free(sh_float_free[--sh_n_float_free]);
}
