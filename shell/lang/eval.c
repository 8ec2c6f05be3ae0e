/* The evaluator: statements return a status (ok, error, break, continue, return),
 * expressions a new reference or NULL with an exception pending. Also: user functions,
 * classes, imports, running files and strings, and printing errors. */
#define _GNU_SOURCE
#include "base/alloc.h"
#include "shell/lang/eval.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shell/lang/fiber.h"
#include "shell/lang/interp.h"

enum { ST_OK, ST_ERR, ST_BREAK, ST_CONTINUE, ST_RETURN };

#define MAX_DEPTH 900

/* per thread (shell/lang/thread.c: each thread interprets with its own frames) */
static _Thread_local sh_frame *cur_frame;
static _Thread_local int depth;
static sh_obj *builtins, *main_globals, *modules;
static sh_obj *registry;   /* dotted name -> init function (as an int holding the pointer) */

sh_frame *sh_current_frame(void) { return cur_frame; }
int sh_eval_depth(void) { return depth; }
sh_obj *sh_builtins_dict(void) { return builtins; }
sh_obj *sh_main_globals(void) { return main_globals; }
sh_obj *sh_modules_dict(void) { return modules; }

static sh_obj *eval(sh_frame *f, sh_node *e);
static int exec_block(sh_frame *f, sh_nodelist b);
static int assign(sh_frame *f, sh_node *t, sh_obj *v);

/* ---- functions ------------------------------------------------------------------------- */
static void func_destroy(sh_obj *o) {
  sh_func *fn = (sh_func *)o;
  if (fn->kwdefaults) {
    for (int i = 0; i < fn->code->nkwonly; i++) sh_decref(fn->kwdefaults[i]);
    free(fn->kwdefaults);
  }
  SH_DECREF(fn->chunk);   /* fn->code dies with it */
  sh_decref(fn->globals);
  sh_decref(fn->defaults);
  sh_decref(fn->closure);
  sh_decref(fn->dict);
  sh_decref(fn->klass);
}

static sh_obj *func_repr(sh_obj *o) {
  return sh_strf("<function %s at %p>", sh_str_cstr(((sh_func *)o)->code->name), (void *)o);
}

static sh_obj *func_getattr(sh_obj *o, const char *name) {
  sh_func *fn = (sh_func *)o;
  if (!strcmp(name, "__name__") || !strcmp(name, "__qualname__")) return sh_incref(fn->code->name);
  if (!strcmp(name, "__doc__")) return sh_incref(fn->code->doc ? fn->code->doc : SH_NONE);
  if (!strcmp(name, "__module__")) {
    sh_obj *m = sh_dict_get_str(fn->globals, "__name__");
    return sh_incref(m ? m : SH_NONE);
  }
  if (fn->dict) {
    sh_obj *v = sh_dict_get_str(fn->dict, name);
    if (v) return sh_incref(v);
  }
  return NULL;
}

int sh_func_setattr(sh_obj *o, sh_obj *name, sh_obj *v) {
  sh_func *fn = (sh_func *)o;
  if (!fn->dict) fn->dict = sh_dict_new();
  if (v) return sh_dict_set(fn->dict, name, v);
  return sh_dict_del(fn->dict, name) > 0 ? 0 : -1;
}

sh_type sh_func_type = {SH_TYPE_HEAD, .name = "function", .size = sizeof(sh_func),
  .destroy = func_destroy, .repr = func_repr, .getattr = func_getattr,
  .call = sh_func_call};

char *sh_func_signature(sh_obj *o) {
  sh_func *fn = (sh_func *)o;
  sh_funcdef *c = fn->code;
  sh_buf b = {0};
  sh_buf_printf(&b, "%s(", sh_str_cstr(c->name));
  int ndef0 = c->nparams - c->defaults.n;
  for (int i = 0; i < c->nparams; i++) {
    if (i) sh_buf_puts(&b, ", ");
    sh_buf_puts(&b, sh_str_cstr(c->params[i]));
    if (i >= ndef0 && fn->defaults) {
      sh_buf_putc(&b, '=');
      sh_buf_put_obj(&b, SH_TUPLE_ITEMS(fn->defaults)[i - ndef0], true);
    }
  }
  bool any = c->nparams > 0;
  if (c->vararg >= 0) { sh_buf_printf(&b, "%s*%s", any ? ", " : "", sh_str_cstr(c->params[c->vararg])); any = true; }
  else if (c->nkwonly) { sh_buf_printf(&b, "%s*", any ? ", " : ""); any = true; }
  for (int i = 0; i < c->nkwonly; i++) {
    sh_buf_printf(&b, ", %s", sh_str_cstr(c->params[c->nparams + i]));
    if (fn->kwdefaults[i]) { sh_buf_putc(&b, '='); sh_buf_put_obj(&b, fn->kwdefaults[i], true); }
  }
  if (c->kwarg >= 0) sh_buf_printf(&b, "%s**%s", any ? ", " : "", sh_str_cstr(c->params[c->kwarg]));
  sh_buf_putc(&b, ')');
  sh_err_clear();
  char *s = xstrdup(b.data);
  sh_buf_free(&b);
  return s;
}

static sh_obj *make_closure(sh_frame *f, sh_funcdef *code) {
  if (!code->nfree) return NULL;
  sh_obj *t = sh_tuple_new(code->nfree);
  for (int i = 0; i < code->nfree; i++) {
    struct sh_freevar fv = code->freevars[i];
    sh_obj *cell = fv.from_local ? f->slots[fv.index] : SH_TUPLE_ITEMS(f->closure)[fv.index];
    SH_TUPLE_ITEMS(t)[i] = sh_incref(cell);
  }
  return t;
}

static sh_obj *make_function(sh_frame *f, sh_funcdef *code) {
  sh_obj *defaults = NULL, **kwdefaults = NULL;
  if (code->defaults.n) {
    defaults = sh_tuple_new(code->defaults.n);
    for (int i = 0; i < code->defaults.n; i++) {
      sh_obj *v = eval(f, code->defaults.v[i]);
      if (!v) { sh_decref(defaults); return NULL; }
      SH_TUPLE_ITEMS(defaults)[i] = v;
    }
  }
  if (code->nkwonly) {
    kwdefaults = xcalloc(code->nkwonly, sizeof *kwdefaults);
    for (int i = 0; i < code->nkwonly; i++) {
      if (!code->kwdefaults[i]) continue;
      kwdefaults[i] = eval(f, code->kwdefaults[i]);
      if (!kwdefaults[i]) {
        for (int k = 0; k < i; k++) sh_decref(kwdefaults[k]);
        free(kwdefaults);
        sh_decref(defaults);
        return NULL;
      }
    }
  }
  sh_func *fn = sh_new(&sh_func_type);
  fn->code = code;
  fn->chunk = (sh_chunk *)SH_INCREF(f->chunk);
  fn->globals = sh_incref(f->globals);
  fn->defaults = defaults;
  fn->kwdefaults = kwdefaults;
  fn->closure = make_closure(f, code);
  return &fn->head;
}

static int add_traceback(sh_frame *f) {
  sh_obj *exc = sh_err_get();
  if (!exc || !(exc->type->flags & SH_TF_INSTANCE)) return 0;
  sh_inst *e = (sh_inst *)exc;
  if (!e->tb) e->tb = sh_list_new(0);
  if (e->tb_frame == f) return 0;
  e->tb_frame = f;
  char buf[512];
  const char *text = sh_chunk_line(f->code->src, f->line, buf, sizeof buf);
  if (text) while (*text == ' ' || *text == '\t') text++;
  sh_obj *name = f->code->is_module ? sh_str("<module>") : sh_incref(f->code->name);
  sh_list_append_steal(e->tb, sh_tuple_of(4, sh_str(f->code->file), sh_int(f->line), name,
                                          text ? sh_str(text) : sh_none()));
  return 0;
}

static int plural_missing(sh_func *fn, const char *kind, sh_obj **names, int n) {
  sh_buf b = {0};
  for (int i = 0; i < n; i++) {
    if (i) sh_buf_puts(&b, n == 2 ? " and " : i == n - 1 ? ", and " : ", ");
    sh_buf_printf(&b, "'%s'", sh_str_cstr(names[i]));
  }
  sh_raise(sh_TypeError, "%s() missing %d required %s argument%s: %s", sh_str_cstr(fn->code->name),
           n, kind, n == 1 ? "" : "s", b.data);
  sh_buf_free(&b);
  return -1;
}

/* Bind arguments to parameter slots. */
static int bind_args(sh_func *fn, sh_obj **slots, int argc, sh_obj **argv, sh_obj *kw) {
  sh_funcdef *c = fn->code;
  const char *name = sh_str_cstr(c->name);
  int np = c->nparams, nk = c->nkwonly;
  if (argc > np && c->vararg < 0) {
    int ndef = c->defaults.n;
    if (ndef)
      sh_raise(sh_TypeError, "%s() takes from %d to %d positional arguments but %d %s given",
               name, np - ndef, np, argc, argc == 1 ? "was" : "were");
    else
      sh_raise(sh_TypeError, "%s() takes %d positional argument%s but %d %s given", name, np,
               np == 1 ? "" : "s", argc, argc == 1 ? "was" : "were");
    return -1;
  }
  int n = argc < np ? argc : np;
  for (int i = 0; i < n; i++) slots[i] = sh_incref(argv[i]);
  if (c->vararg >= 0) {
    int extra = argc > np ? argc - np : 0;
    sh_obj *t = sh_tuple_new(extra);
    for (int i = 0; i < extra; i++) SH_TUPLE_ITEMS(t)[i] = sh_incref(argv[np + i]);
    slots[c->vararg] = t;
  }
  sh_obj *kwd = c->kwarg >= 0 ? sh_dict_new() : NULL;
  if (kwd) slots[c->kwarg] = kwd;
  if (kw) {
    sh_obj *k, *v;
    for (int64_t pos = 0; sh_dict_next(kw, &pos, &k, &v);) {
      int i = 0;
      for (; i < np + nk; i++)
        if (c->params[i] == k || !strcmp(sh_str_cstr(c->params[i]), sh_str_cstr(k))) break;
      if (i < np + nk) {
        if (slots[i]) {
          sh_raise(sh_TypeError, "%s() got multiple values for argument '%s'", name, sh_str_cstr(k));
          return -1;
        }
        slots[i] = sh_incref(v);
      } else if (kwd) {
        sh_dict_set(kwd, k, v);
      } else {
        sh_raise(sh_TypeError, "%s() got an unexpected keyword argument '%s'", name, sh_str_cstr(k));
        return -1;
      }
    }
  }
  int ndef0 = np - c->defaults.n;
  sh_obj *missing[64];
  int nmiss = 0;
  for (int i = 0; i < np; i++) {
    if (slots[i]) continue;
    if (i >= ndef0) slots[i] = sh_incref(SH_TUPLE_ITEMS(fn->defaults)[i - ndef0]);
    else if (nmiss < 64) missing[nmiss++] = c->params[i];
  }
  if (nmiss) return plural_missing(fn, "positional", missing, nmiss);
  for (int i = 0; i < nk; i++) {
    if (slots[np + i]) continue;
    if (fn->kwdefaults[i]) slots[np + i] = sh_incref(fn->kwdefaults[i]);
    else if (nmiss < 64) missing[nmiss++] = c->params[np + i];
  }
  if (nmiss) return plural_missing(fn, "keyword-only", missing, nmiss);
  return 0;
}

static sh_obj *gen_new(sh_func *fn, sh_obj **slots);

static sh_obj *cell_new(sh_obj *v) {   /* steals v */
  sh_cell_obj *c = sh_new(&sh_cell_type);
  c->v = v;
  return &c->head;
}

sh_obj *sh_func_call(sh_obj *o, int argc, sh_obj **argv, sh_obj *kw) {
  sh_func *fn = (sh_func *)o;
  sh_funcdef *c = fn->code;
  if (depth >= MAX_DEPTH) return sh_raise(sh_RecursionError, "maximum recursion depth exceeded");
  if (sh_gil_drop_request) sh_gil_yield();
  sh_obj *small[16];
  sh_obj **slots = c->nslots <= 16 && !c->is_generator ? small : xmalloc((c->nslots + 1) * sizeof *slots);
  memset(slots, 0, c->nslots * sizeof *slots);
  sh_obj *result = NULL;
  if (c->is_generator) {
    if (bind_args(fn, slots, argc, argv, kw) < 0) {
      for (int i = 0; i < c->nslots; i++) sh_decref(slots[i]);
      free(slots);
      return NULL;
    }
    for (int i = 0; i < c->nslots; i++)
      if (c->is_cell[i]) slots[i] = cell_new(slots[i]);
    return gen_new(fn, slots);
  }
  if (bind_args(fn, slots, argc, argv, kw) == 0) {
    for (int i = 0; i < c->nslots; i++)
      if (c->is_cell[i]) slots[i] = cell_new(slots[i]);
    sh_frame f = {.back = cur_frame, .code = c, .slots = slots, .closure = fn->closure,
                  .globals = fn->globals, .func = fn, .chunk = fn->chunk, .line = c->line};
    cur_frame = &f;
    depth++;
    int st = exec_block(&f, c->body);
    depth--;
    cur_frame = f.back;
    if (st == ST_ERR) add_traceback(&f);
    else result = f.retval ? f.retval : sh_none();
  }
  for (int i = 0; i < c->nslots; i++) sh_decref(slots[i]);
  if (slots != small) free(slots);
  return result;
}

/* ---- generators ------------------------------------------------------------------------ */
/* A generator runs its function body on a stack of its own (shell/lang/fiber.c); `yield` switches
 * back to whoever called next(). Closing an unfinished generator resumes it with
 * GeneratorExit so that its finally blocks run and its frame's references are released.
 * A flat generator needs no stack: its body is nested `for`s and `if`s (no else) around
 * one `yield expr` statement, as every generator expression's is, so next() keeps the
 * loops' iterators and steps them itself, like a comprehension that stops at each value. */
enum { GEN_FLAT_MAX = 8 };
typedef struct sh_gen {
  sh_obj head;
  sh_func *fn;
  sh_obj **slots;
  sh_frame frame;
  struct gen_fibers { sh_fiber ctx, caller; } *fib;   /* with the stack: flat ones have none */
  void *stack;
  unsigned stack_id;      /* sh_fiber_stack_new's */
  sh_obj *yielded;        /* value passed out by yield */
  bool started, running, done, closing;
  sh_frame *caller_frame;
  int caller_depth;
  struct sh_gen *outer;   /* the generator that was running when this one was resumed */
  int nflat;              /* > 0: flat, of nflat levels (fn->code->body's nesting) */
  int at;                 /* flat: the innermost `for` level whose iterator is live, or -1 */
  sh_node *flat[GEN_FLAT_MAX];
  sh_obj *its[GEN_FLAT_MAX];   /* flat: each `for` level's iterator while it runs */
  const void *caller_stack;   /* ASan: the stack that resumed it, and its size */
  size_t caller_size;
} sh_gen;

static _Thread_local sh_gen *cur_gen;
static sh_type *GeneratorExit;

static void gen_body(void *arg) {
  sh_gen *g = arg;
  sh_fiber_started(&g->caller_stack, &g->caller_size);
  int st = exec_block(&g->frame, g->fn->code->body);
  if (st == ST_ERR) add_traceback(&g->frame);
  g->done = true;
  g->yielded = NULL;
  sh_fiber_switch(&g->fib->ctx, &g->fib->caller, g->caller_stack, g->caller_size, true, NULL, NULL);
}

/* Switch into g until it yields or finishes. Returns the yielded value, or NULL: finished
 * (exception pending if it raised). */
static sh_obj *gen_resume(sh_gen *g) {
  if (g->running) return sh_raise(sh_ValueError, "generator already executing");
  if (!g->started) {
    g->stack = sh_fiber_stack_new(&g->stack_id);
    if (!g->stack) { g->done = true; return sh_raise(sh_RuntimeError, "cannot allocate a generator stack"); }
    g->fib = xcalloc(1, sizeof *g->fib);   /* fib->caller: zeroed, as sh_fiber_switch wants */
    sh_fiber_make(&g->fib->ctx, g->stack, SH_FIBER_STACK, gen_body, g);
    g->started = true;
  }
  g->caller_frame = cur_frame;
  g->caller_depth = depth;
  g->frame.back = cur_frame;
  g->outer = cur_gen;
  cur_frame = &g->frame;
  depth++;
  cur_gen = g;
  g->running = true;
  sh_fiber_switch(&g->fib->caller, &g->fib->ctx, g->stack, SH_FIBER_STACK, false, NULL, NULL);
  g->running = false;
  cur_gen = g->outer;
  cur_frame = g->caller_frame;
  depth = g->caller_depth;
  sh_obj *v = g->yielded;
  g->yielded = NULL;
  return v;
}

static sh_obj *eval_yield(sh_frame *f, sh_obj *v) {   /* steals v */
  sh_gen *g = cur_gen;
  if (!g || &g->frame != f) { sh_decref(v); return sh_raise(sh_RuntimeError, "yield outside a running generator"); }
  g->yielded = v;
  sh_fiber_switch(&g->fib->ctx, &g->fib->caller, g->caller_stack, g->caller_size, false, &g->caller_stack, &g->caller_size);
  if (g->closing) {
    sh_err_restore(sh_exc_new(GeneratorExit, sh_tuple_new(0)));
    return NULL;
  }
  return sh_none();
}

/* ---- flat generators ---- */
static bool has_yield(const sh_node *n);
static bool list_has_yield(sh_nodelist l) {
  for (int i = 0; i < l.n; i++)
    if (has_yield(l.v[i])) return true;
  return false;
}
/* Whether an expression holds a yield of this scope (inner functions' bodies are theirs). */
static bool has_yield(const sh_node *n) {
  if (!n) return false;
  if (n->kind == E_YIELD || n->kind == E_YIELDFROM) return true;
  return has_yield(n->a) || has_yield(n->b) || has_yield(n->c) || list_has_yield(n->list) ||
         list_has_yield(n->list2) || list_has_yield(n->list3) || list_has_yield(n->list4);
}

/* The levels of a flat body into out (GEN_FLAT_MAX at most): its count, or -1. known: it
 * was found flat before (its expressions need no second look for yields). */
static int flat_shape(sh_funcdef *c, sh_node **out, bool known) {
  sh_nodelist b = c->body;
  for (int n = 0; n < GEN_FLAT_MAX; n++) {
    if (b.n != 1) return -1;
    sh_node *s = b.v[0];
    out[n] = s;
    if (s->kind == S_FOR && !s->list2.n && (known || (!has_yield(s->a) && !has_yield(s->b)))) b = s->list;
    else if (s->kind == S_IF && !s->list2.n && (known || !has_yield(s->a))) b = s->list;
    else if (s->kind == S_EXPR && !s->op && s->a->kind == E_YIELD && (known || !has_yield(s->a->a))) return n + 1;
    else return -1;
  }
  return -1;
}

static int prev_for(const sh_gen *g, int k) {
  while (--k >= 0 && g->flat[k]->kind != S_FOR) {}
  return k;
}

static void flat_release(sh_gen *g) {
  for (int k = 0; k < g->nflat; k++) sh_clear(&g->its[k]);
  g->at = -1;
  g->done = true;
}

/* next() of a flat generator: the value of its yield, or NULL (finished; an exception
 * pending if it raised). Steps the innermost live loop, or on the first call enters them. */
static sh_obj *flat_next(sh_gen *g) {
  if (g->running) return sh_raise(sh_ValueError, "generator already executing");
  if (depth >= MAX_DEPTH) return sh_raise(sh_RecursionError, "maximum recursion depth exceeded");
  sh_frame *f = &g->frame;
  f->back = cur_frame;
  cur_frame = f;
  depth++;
  g->running = true;
  sh_obj *result = NULL;
  int k = 0;
  bool step = false;   /* level k is a `for` to take the next value of */
  if (g->started) {
    k = g->at;
    step = true;
  }
  g->started = true;
  while (k >= 0) {
    sh_node *s = g->flat[k];
    if (step) {
      sh_obj *x = sh_next(g->its[k]);
      if (!x) {
        if (sh_err_occurred()) goto error;
        sh_clear(&g->its[k]);
        k = g->at = prev_for(g, k);
        continue;
      }
      if (SH_EVAL_BREAK()) { sh_decref(x); goto error; }
      int rc = assign(f, s->a, x);
      sh_decref(x);
      if (rc < 0) goto error;
      step = false;
      k++;
      continue;
    }
    f->line = s->line;
    if (s->kind == S_FOR) {
      sh_obj *seq = eval(f, s->b);
      if (!seq) goto error;
      g->its[k] = sh_iter(seq);
      sh_decref(seq);
      if (!g->its[k]) goto error;
      g->at = k;
      step = true;
    } else if (s->kind == S_IF) {
      sh_obj *v = eval(f, s->a);
      if (!v) goto error;
      int t = sh_truth(v);
      sh_decref(v);
      if (t < 0) goto error;
      if (t) k++;
      else k = g->at, step = true;
    } else {
      result = s->a->a ? eval(f, s->a->a) : sh_none();
      if (!result) goto error;
      if (g->at < 0) g->done = true;   /* no loop: its one value */
      goto out;
    }
  }
  flat_release(g);   /* every loop ran out */
  goto out;
error:
  add_traceback(f);
  flat_release(g);
out:
  g->running = false;
  cur_frame = f->back;
  depth--;
  return result;
}

static sh_obj *gen_next(sh_obj *o) {
  sh_gen *g = (sh_gen *)o;
  if (g->done) return NULL;
  sh_incref(o);   /* the body may drop the last other reference to its generator */
  sh_obj *v = g->nflat ? flat_next(g) : gen_resume(g);
  sh_decref(o);
  if (!v && sh_err_matches(sh_StopIteration)) {
    sh_err_clear();
    return sh_raise(sh_RuntimeError, "generator raised StopIteration");
  }
  return v;
}

static void gen_close(sh_gen *g) {
  if (!g->started || g->done) return;
  if (g->nflat) {
    flat_release(g);
    return;
  }
  sh_obj *pending = sh_err_fetch();
  g->closing = true;
  sh_obj *v = gen_resume(g);
  if (v) { sh_decref(v); g->done = true; }   /* yielded while closing: abandon it */
  sh_err_clear();
  if (pending) sh_err_restore(pending);
}

static void gen_destroy(sh_obj *o) {
  sh_gen *g = (sh_gen *)o;
  o->refcnt = 1;   /* alive while its finally blocks run */
  gen_close(g);
  o->refcnt = 0;
  for (int i = 0; i < g->fn->code->nslots; i++) sh_decref(g->slots[i]);
  free(g->slots);
  sh_decref(g->frame.retval);
  if (g->stack) sh_fiber_stack_free(g->stack, g->stack_id);
  free(g->fib);
  SH_DECREF(g->fn);
}

static sh_obj *gen_self_iter(sh_obj *o) { return sh_incref(o); }
static sh_obj *gen_repr(sh_obj *o) {
  return sh_strf("<generator object %s at %p>", sh_str_cstr(((sh_gen *)o)->fn->code->name), (void *)o);
}
static sh_obj *gen_close_m(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  gen_close((sh_gen *)self);
  return sh_none();
}
static const sh_method gen_methods[] = {
  {"close", gen_close_m, "close()", "Finish the generator (its finally blocks run)."},
  {NULL}};
static sh_type gen_type = {SH_TYPE_HEAD, .name = "generator", .size = sizeof(sh_gen),
  .destroy = gen_destroy, .repr = gen_repr, .iter = gen_self_iter, .next = gen_next,
  .methods = gen_methods};

static sh_obj *gen_new(sh_func *fn, sh_obj **slots) {   /* takes slots */
  sh_gen *g = sh_new(&gen_type);
  sh_funcdef *c = fn->code;
  if (c->flat >= 0) {
    int n = flat_shape(c, g->flat, c->flat > 0);
    if (!c->flat) c->flat = (int8_t)n;
    g->nflat = n > 0 ? n : 0;
    g->at = -1;
  }
  g->fn = (sh_func *)SH_INCREF(fn);
  g->slots = slots;
  g->frame = (sh_frame){.code = fn->code, .slots = slots, .closure = fn->closure,
                        .globals = fn->globals, .func = fn, .chunk = fn->chunk, .line = fn->code->line};
  return &g->head;
}

/* ---- super() ---------------------------------------------------------------------------- */
typedef struct { sh_obj head; sh_type *klass; sh_obj *self; } super_obj;
static sh_obj *noop_init(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) { return sh_none(); }
static void super_destroy(sh_obj *o) { SH_DECREF(((super_obj *)o)->klass); sh_decref(((super_obj *)o)->self); }
static sh_obj *super_getattr(sh_obj *o, const char *name) {
  super_obj *s = (super_obj *)o;
  sh_obj *n = sh_intern(name);
  sh_obj *v = s->klass->base ? sh_class_lookup(s->klass->base, n) : NULL;
  sh_decref(n);
  if (!v && !strcmp(name, "__init__")) return sh_builtin_new("__init__", noop_init, NULL, NULL, NULL);
  if (!v) return sh_raise(sh_AttributeError, "'super' object has no attribute '%s'", name);
  return sh_bind(v, s->self);
}
static sh_type super_type = {SH_TYPE_HEAD, .name = "super", .size = sizeof(super_obj),
  .destroy = super_destroy, .getattr = super_getattr};

static sh_obj *bi_super(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_type *klass = NULL;
  sh_obj *obj = NULL;
  if (argc == 2) {
    if (!sh_isinstance(argv[0], &sh_type_type)) return sh_raise(sh_TypeError, "super() argument 1 must be a type");
    klass = (sh_type *)argv[0];
    obj = argv[1];
  } else {
    sh_frame *f = cur_frame;
    if (!f || !f->func || !f->func->klass || f->code->nparams < 1)
      return sh_raise(sh_RuntimeError, "super(): no arguments");
    klass = (sh_type *)f->func->klass;
    obj = f->slots[0];
    if (obj && f->code->is_cell[0]) obj = ((sh_cell_obj *)obj)->v;
    if (!obj) return sh_raise(sh_RuntimeError, "super(): arg[0] deleted");
  }
  super_obj *s = sh_new(&super_type);
  s->klass = (sh_type *)SH_INCREF(klass);
  s->self = sh_incref(obj);
  return &s->head;
}

/* ---- names ------------------------------------------------------------------------------ */
static sh_obj *load_global(sh_frame *f, sh_obj *name) {
  sh_obj *v = sh_dict_get(f->globals, name);
  if (!v) v = sh_dict_get(builtins, name);
  if (v) return sh_incref(v);
  return sh_raise(sh_NameError, "name '%s' is not defined", sh_str_cstr(name));
}

static sh_obj *load_name(sh_frame *f, sh_node *e) {
  sh_obj *v;
  switch (e->scope) {
  case SC_LOCAL:
    v = f->slots[e->slot];
    if (v) return sh_incref(v);
    break;
  case SC_CELL:
    v = ((sh_cell_obj *)f->slots[e->slot])->v;
    if (v) return sh_incref(v);
    break;
  case SC_FREE:
    v = ((sh_cell_obj *)SH_TUPLE_ITEMS(f->closure)[e->slot])->v;
    if (v) return sh_incref(v);
    return sh_raise(sh_NameError, "cannot access free variable '%s' where it is not associated with a value in enclosing scope", sh_str_cstr(e->val));
  case SC_CLASS:
    if (f->classns && (v = sh_dict_get(f->classns, e->val))) return sh_incref(v);
    return load_global(f, e->val);
  default:
    return load_global(f, e->val);
  }
  return sh_raise(sh_UnboundLocalError, "cannot access local variable '%s' where it is not associated with a value", sh_str_cstr(e->val));
}

static int store_name(sh_frame *f, sh_node *e, sh_obj *v) {   /* borrows v */
  sh_obj *old, **p;
  switch (e->scope) {
  case SC_LOCAL: p = &f->slots[e->slot]; break;
  case SC_CELL: p = &((sh_cell_obj *)f->slots[e->slot])->v; break;
  case SC_FREE: p = &((sh_cell_obj *)SH_TUPLE_ITEMS(f->closure)[e->slot])->v; break;
  case SC_CLASS: return sh_dict_set(f->classns, e->val, v);
  default: return sh_dict_set(f->globals, e->val, v);
  }
  old = *p;
  *p = sh_incref(v);
  sh_decref(old);
  return 0;
}

static int del_name(sh_frame *f, sh_node *e) {
  sh_obj **p = NULL;
  switch (e->scope) {
  case SC_LOCAL: p = &f->slots[e->slot]; break;
  case SC_CELL: p = &((sh_cell_obj *)f->slots[e->slot])->v; break;
  case SC_FREE: p = &((sh_cell_obj *)SH_TUPLE_ITEMS(f->closure)[e->slot])->v; break;
  default: {
    sh_obj *d = e->scope == SC_CLASS ? f->classns : f->globals;
    int r = sh_dict_del(d, e->val);
    if (r > 0) return 0;
    if (r == 0) sh_raise(sh_NameError, "name '%s' is not defined", sh_str_cstr(e->val));
    return -1;
  }
  }
  if (!*p) {
    sh_raise(sh_UnboundLocalError, "cannot access local variable '%s' where it is not associated with a value", sh_str_cstr(e->val));
    return -1;
  }
  sh_clear(p);
  return 0;
}

/* ---- expressions ------------------------------------------------------------------------ */
/* Evaluate a list of elements, expanding *x, into a new list. */
static sh_obj *eval_elements(sh_frame *f, sh_nodelist l) {
  sh_obj *out = sh_list_new(0);
  for (int i = 0; i < l.n; i++) {
    sh_node *x = l.v[i];
    if (x->kind == E_STARRED) {
      sh_obj *seq = eval(f, x->a);
      if (!seq) goto fail;
      sh_obj *it = sh_iter(seq), *v;
      sh_decref(seq);
      if (!it) goto fail;
      while ((v = sh_next(it))) sh_list_append_steal(out, v);
      sh_decref(it);
      if (sh_err_occurred()) goto fail;
    } else {
      sh_obj *v = eval(f, x);
      if (!v) goto fail;
      sh_list_append_steal(out, v);
    }
  }
  return out;
fail:
  sh_decref(out);
  return NULL;
}

/* obj.name(...) without making a bound method: returns the plain function or unbound
 * builtin found on the class (borrowed), or NULL when the usual lookup must be used. */
static sh_obj *method_fast(sh_obj *obj, sh_obj *name) {
  for (sh_type *t = obj->type; t; t = t->base)
    if (t->getattr) {
      if (!(t->flags & SH_TF_INSTANCE)) return NULL;   /* a native hook may serve the name */
      break;
    }
  if (obj->type == &sh_module_type || obj->type == &sh_type_type || obj->type == &super_type)
    return NULL;
  if ((obj->type->flags & SH_TF_INSTANCE) && ((sh_inst *)obj)->dict &&
      sh_dict_get(((sh_inst *)obj)->dict, name))
    return NULL;
  if ((obj->type->flags & SH_TF_INSTANCE) && sh_isinstance(obj, sh_BaseException) &&
      !strcmp(sh_str_cstr(name), "args"))
    return NULL;
  sh_obj *v = sh_class_lookup(obj->type, name);
  if (!v) return NULL;
  if (v->type == &sh_func_type) return v;
  if (v->type == &sh_builtin_type && ((sh_builtin_obj *)v)->unbound) return v;
  return NULL;
}

static sh_obj *eval_call(sh_frame *f, sh_node *e) {
  sh_obj *callee, *self = NULL;
  if (e->a->kind == E_ATTR) {
    sh_obj *obj = eval(f, e->a->a);
    if (!obj) return NULL;
    sh_obj *m = method_fast(obj, e->a->val);
    if (m) { callee = sh_incref(m); self = obj; }
    else {
      callee = sh_getattr_s(obj, e->a->val, true);
      sh_decref(obj);
    }
  } else {
    callee = eval(f, e->a);
  }
  if (!callee) return NULL;
  sh_obj *small[9], **args = small + 1, *arglist = NULL, *kw = NULL, *r = NULL;
  int argc = 0;
  bool simple = e->list.n <= 8;
  for (int i = 0; simple && i < e->list.n; i++) simple = e->list.v[i]->kind != E_STARRED;
  if (simple) {
    for (; argc < e->list.n; argc++)
      if (!(args[argc] = eval(f, e->list.v[argc]))) goto done;
  } else {
    if (!(arglist = eval_elements(f, e->list))) goto done;
    if (self) {   /* room for self in front */
      sh_list_insert(arglist, 0, self);
      args = SH_LIST_ITEMS(arglist) + 1;
    } else args = SH_LIST_ITEMS(arglist);
  }
  if (e->list2.n) {
    kw = sh_dict_new();
    for (int i = 0; i < e->list2.n; i++) {
      sh_node *k = e->list2.v[i];
      sh_obj *v = eval(f, k->a);
      if (!v) goto done;
      if (k->val) {
        sh_dict_set(kw, k->val, v);
        sh_decref(v);
        continue;
      }
      if (!sh_isinstance(v, &sh_dict_type)) {
        sh_raise(sh_TypeError, "argument after ** must be a mapping, not %s", sh_type_name(v));
        sh_decref(v);
        goto done;
      }
      sh_obj *kk, *vv;
      for (int64_t pos = 0; sh_dict_next(v, &pos, &kk, &vv);) {
        if (!sh_is_str(kk)) { sh_raise(sh_TypeError, "keywords must be strings"); sh_decref(v); goto done; }
        if (sh_dict_get(kw, kk)) {
          sh_raise(sh_TypeError, "got multiple values for keyword argument '%s'", sh_str_cstr(kk));
          sh_decref(v);
          goto done;
        }
        sh_dict_set(kw, kk, vv);
      }
      sh_decref(v);
    }
  }
  f->line = e->line;
  int n = arglist ? (int)SH_LIST_N(arglist) - (self != NULL) : argc;
  if (!self) r = sh_call(callee, n, args, kw);
  else if (callee->type == &sh_builtin_type) {
    if (SH_EVAL_BREAK()) goto done;
    r = ((sh_builtin_obj *)callee)->fn(self, n, args, kw);
  } else {
    args[-1] = self;   /* small[0] or the slot inserted in arglist */
    r = sh_call(callee, n + 1, args - 1, kw);
  }
done:
  sh_decref(callee);
  sh_decref(self);
  if (!arglist) for (int i = 0; i < argc; i++) sh_decref(args[i]);
  sh_decref(arglist);
  sh_decref(kw);
  return r;
}

static sh_obj *eval_compare(sh_frame *f, sh_node *e) {
  sh_obj *left = eval(f, e->a);
  if (!left) return NULL;
  sh_obj *result = NULL;
  for (int i = 0; i < e->list.n; i++) {
    sh_obj *right = eval(f, e->list.v[i]);
    if (!right) { sh_decref(left); sh_decref(result); return NULL; }
    sh_decref(result);
    int op = e->ops[i], t;
    switch (op) {
    case CMP_IS: result = sh_bool(left == right); break;
    case CMP_IS_NOT: result = sh_bool(left != right); break;
    case CMP_IN: case CMP_NOT_IN:
      t = sh_contains(right, left);
      result = t < 0 ? NULL : sh_bool(op == CMP_IN ? t : !t);
      break;
    default: result = sh_compare(op, left, right);
    }
    sh_decref(left);
    left = right;
    if (!result) break;
    if (i + 1 < e->list.n) {
      t = sh_truth(result);
      if (t < 0) { sh_clear(&result); break; }
      if (!t) break;
    }
  }
  sh_decref(left);
  return result;
}

/* One level of a comprehension: clause i, then the element. kind: list/set/dict. */
static int comp_loop(sh_frame *f, sh_node *e, int i, sh_obj *out) {
  if (i == e->list.n) {
    sh_obj *v = eval(f, e->a);
    if (!v) return -1;
    int r = 0;
    if (e->kind == E_DICTCOMP) {
      sh_obj *val = eval(f, e->b);
      if (!val) { sh_decref(v); return -1; }
      r = sh_dict_set(out, v, val);
      sh_decref(val);
    } else if (e->kind == E_SETCOMP) r = sh_set_add(out, v);
    else r = sh_list_append(out, v);
    sh_decref(v);
    return r;
  }
  sh_node *c = e->list.v[i];
  sh_obj *seq = eval(f, c->b);
  if (!seq) return -1;
  sh_obj *it = sh_iter(seq), *x;
  sh_decref(seq);
  if (!it) return -1;
  int r = 0;
  while ((x = sh_next(it))) {
    if (SH_EVAL_BREAK()) { sh_decref(x); r = -1; break; }
    r = assign(f, c->a, x);
    sh_decref(x);
    if (r < 0) break;
    bool keep = true;
    for (int k = 0; k < c->list.n && keep; k++) {
      sh_obj *cond = eval(f, c->list.v[k]);
      if (!cond) { r = -1; break; }
      int t = sh_truth(cond);
      sh_decref(cond);
      if (t < 0) { r = -1; break; }
      keep = t;
    }
    if (r < 0) break;
    if (keep && comp_loop(f, e, i + 1, out) < 0) { r = -1; break; }
  }
  sh_decref(it);
  if (r == 0 && sh_err_occurred()) r = -1;
  return r;
}

static sh_obj *eval_fstring(sh_frame *f, sh_node *e) {
  sh_buf b = {0};
  for (int i = 0; i < e->list.n; i++) {
    sh_node *p = e->list.v[i];
    if (p->kind == E_CONST) { sh_buf_put(&b, sh_str_cstr(p->val), sh_str_len(p->val)); continue; }
    sh_obj *v = eval(f, p->a);
    if (!v) goto fail;
    if (p->op) {
      sh_obj *c = p->op == 's' ? sh_to_str(v) : sh_repr(v);
      sh_decref(v);
      if (!(v = c)) goto fail;
    }
    sh_obj *spec = p->b ? eval_fstring(f, p->b) : NULL;
    if (p->b && !spec) { sh_decref(v); goto fail; }
    sh_obj *s = sh_format_spec(v, spec ? sh_str_cstr(spec) : "");
    sh_decref(spec);
    sh_decref(v);
    if (!s) goto fail;
    sh_buf_put(&b, sh_str_cstr(s), sh_str_len(s));
    sh_decref(s);
  }
  return sh_buf_finish(&b);
fail:
  sh_buf_free(&b);
  return NULL;
}

static sh_obj *eval_subscript_key(sh_frame *f, sh_node *k) {
  if (k->kind == E_SLICE) {
    sh_obj *a = NULL, *b = NULL, *c = NULL;
    if ((k->a && !(a = eval(f, k->a))) || (k->b && !(b = eval(f, k->b))) || (k->c && !(c = eval(f, k->c)))) {
      sh_decref(a); sh_decref(b);
      return NULL;
    }
    sh_obj *s = sh_slice_new(a, b, c);
    sh_decref(a); sh_decref(b); sh_decref(c);
    return s;
  }
  if (k->kind == E_TUPLE) {
    sh_obj *t = sh_tuple_new(k->list.n);
    for (int i = 0; i < k->list.n; i++) {
      sh_obj *v = eval_subscript_key(f, k->list.v[i]);
      if (!v) { for (int j = i; j < k->list.n; j++) SH_TUPLE_ITEMS(t)[j] = sh_none(); sh_decref(t); return NULL; }
      SH_TUPLE_ITEMS(t)[i] = v;
    }
    return t;
  }
  return eval(f, k);
}

static sh_obj *eval(sh_frame *f, sh_node *e) {
  sh_obj *a, *b, *r;
  switch (e->kind) {
  case E_CONST: return sh_incref(e->val);
  case E_NAME: return load_name(f, e);
  case E_ATTR:
    if (!(a = eval(f, e->a))) return NULL;
    r = sh_getattr_s(a, e->val, true);
    sh_decref(a);
    return r;
  case E_CALL: return eval_call(f, e);
  case E_BINOP:
    if (!(a = eval(f, e->a))) return NULL;
    if (!(b = eval(f, e->b))) { sh_decref(a); return NULL; }
    if (sh_is_int(a) && sh_is_int(b) && a->type == &sh_int_type && b->type == &sh_int_type) {
      int64_t x = sh_int_value(a), y = sh_int_value(b), z;
      if (e->op == SH_ADD && !__builtin_add_overflow(x, y, &z)) { r = sh_int(z); goto done2; }
      if (e->op == SH_SUB && !__builtin_sub_overflow(x, y, &z)) { r = sh_int(z); goto done2; }
    }
    r = sh_binop(e->op, a, b);
  done2:
    sh_decref(a);
    sh_decref(b);
    return r;
  case E_UNOP:
    if (!(a = eval(f, e->a))) return NULL;
    r = sh_unop(e->op, a);
    sh_decref(a);
    return r;
  case E_NOT: {
    if (!(a = eval(f, e->a))) return NULL;
    int t = sh_truth(a);
    sh_decref(a);
    return t < 0 ? NULL : sh_bool(!t);
  }
  case E_AND: case E_OR: {
    if (!(a = eval(f, e->a))) return NULL;
    int t = sh_truth(a);
    if (t < 0) { sh_decref(a); return NULL; }
    if ((e->kind == E_AND) != (t != 0)) return a;
    sh_decref(a);
    return eval(f, e->b);
  }
  case E_COMPARE: return eval_compare(f, e);
  case E_IFEXP: {
    if (!(a = eval(f, e->a))) return NULL;
    int t = sh_truth(a);
    sh_decref(a);
    if (t < 0) return NULL;
    return eval(f, t ? e->b : e->c);
  }
  case E_SUBSCRIPT: {
    if (!(a = eval(f, e->a))) return NULL;
    if (!(b = eval_subscript_key(f, e->b))) { sh_decref(a); return NULL; }
    if (a->type == &sh_list_type && sh_is_int(b)) {   /* fast path */
      int64_t i = sh_int_value(b), n = SH_LIST_N(a);
      if (i < 0) i += n;
      if (i >= 0 && i < n) { r = sh_incref(SH_LIST_ITEMS(a)[i]); goto done2; }
    }
    r = sh_getitem(a, b);
    goto done2;
  }
  case E_SLICE: return eval_subscript_key(f, e);
  case E_TUPLE: {
    if (!(a = eval_elements(f, e->list))) return NULL;
    r = sh_sequence_to_tuple(a);
    sh_decref(a);
    return r;
  }
  case E_LIST: return eval_elements(f, e->list);
  case E_SET: {
    if (!(a = eval_elements(f, e->list))) return NULL;
    r = sh_set_new();
    for (int64_t i = 0; i < SH_LIST_N(a); i++)
      if (sh_set_add(r, SH_LIST_ITEMS(a)[i]) < 0) { sh_clear(&r); break; }
    sh_decref(a);
    return r;
  }
  case E_DICT: {
    r = sh_dict_new();
    for (int i = 0; i < e->list.n; i++) {
      sh_obj *v = eval(f, e->list2.v[i]);
      if (!v) { sh_decref(r); return NULL; }
      if (!e->list.v[i]) {   /* **mapping */
        if (!sh_isinstance(v, &sh_dict_type)) {
          sh_raise(sh_TypeError, "'%s' object is not a mapping", sh_type_name(v));
          sh_decref(v); sh_decref(r);
          return NULL;
        }
        sh_obj *kk, *vv;
        for (int64_t p = 0; sh_dict_next(v, &p, &kk, &vv);) sh_dict_set(r, kk, vv);
        sh_decref(v);
        continue;
      }
      sh_obj *k = eval(f, e->list.v[i]);
      int rc = k ? sh_dict_set(r, k, v) : -1;
      sh_decref(k);
      sh_decref(v);
      if (rc < 0) { sh_decref(r); return NULL; }
    }
    return r;
  }
  case E_LISTCOMP: case E_GENEXP: case E_SETCOMP: case E_DICTCOMP:
    r = e->kind == E_DICTCOMP ? sh_dict_new() : e->kind == E_SETCOMP ? sh_set_new() : sh_list_new(0);
    if (comp_loop(f, e, 0, r) < 0) sh_clear(&r);
    if (r && e->kind == E_GENEXP) {   /* computed at once (not lazily), but an iterator */
      sh_obj *it = sh_iter(r);
      sh_decref(r);
      r = it;
    }
    return r;
  case E_FSTRING: return eval_fstring(f, e);
  case E_LAMBDA: return make_function(f, e->fn);
  case E_STARRED:
    return sh_raise(sh_SyntaxError, "can't use starred expression here");
  case E_YIELD:
    if (e->a) { if (!(a = eval(f, e->a))) return NULL; }
    else a = sh_none();
    return eval_yield(f, a);
  case E_YIELDFROM: {
    if (!(a = eval(f, e->a))) return NULL;
    sh_obj *it = sh_iter(a), *x;
    sh_decref(a);
    if (!it) return NULL;
    while ((x = sh_next(it))) {
      sh_obj *r = eval_yield(f, x);
      if (!r) { sh_decref(it); return NULL; }
      sh_decref(r);
    }
    sh_decref(it);
    return sh_err_occurred() ? NULL : sh_none();
  }
  }
  return sh_raise(sh_RuntimeError, "tfsh: cannot evaluate node kind %d", e->kind);
}

/* ---- assignment ------------------------------------------------------------------------- */
static int assign_seq(sh_frame *f, sh_node *t, sh_obj *v) {
  sh_obj *items = NULL;
  sh_obj **iv;
  int64_t n;
  if (v->type == &sh_tuple_type) { iv = SH_TUPLE_ITEMS(v); n = SH_TUPLE_N(v); }
  else if (v->type == &sh_list_type) { items = sh_sequence_to_list(v); iv = SH_LIST_ITEMS(items); n = SH_LIST_N(items); }
  else {
    if (!(items = sh_sequence_to_list(v))) {
      if (sh_err_matches(sh_TypeError)) {
        sh_err_clear();
        sh_raise(sh_TypeError, "cannot unpack non-iterable %s object", sh_type_name(v));
      }
      return -1;
    }
    iv = SH_LIST_ITEMS(items);
    n = SH_LIST_N(items);
  }
  int nt = t->list.n, star = -1, rc = 0;
  for (int i = 0; i < nt; i++) if (t->list.v[i]->kind == E_STARRED) star = i;
  if (star < 0 && n != nt) {
    if (n > nt) sh_raise(sh_ValueError, "too many values to unpack (expected %d)", nt);
    else sh_raise(sh_ValueError, "not enough values to unpack (expected %d, got %lld)", nt, (long long)n);
    rc = -1;
  } else if (star >= 0 && n < nt - 1) {
    sh_raise(sh_ValueError, "not enough values to unpack (expected at least %d, got %lld)", nt - 1, (long long)n);
    rc = -1;
  } else {
    int64_t k = 0;
    for (int i = 0; i < nt && rc == 0; i++) {
      sh_node *x = t->list.v[i];
      if (i == star) {
        int64_t take = n - (nt - 1);
        sh_obj *rest = sh_list_new(0);
        for (int64_t j = 0; j < take; j++) sh_list_append(rest, iv[k++]);
        rc = assign(f, x->a, rest);
        sh_decref(rest);
      } else {
        rc = assign(f, x, iv[k++]);
      }
    }
  }
  sh_decref(items);
  return rc;
}

static int assign(sh_frame *f, sh_node *t, sh_obj *v) {
  switch (t->kind) {
  case E_NAME: return store_name(f, t, v);
  case E_TUPLE: case E_LIST: return assign_seq(f, t, v);
  case E_ATTR: {
    sh_obj *o = eval(f, t->a);
    if (!o) return -1;
    int r = sh_setattr_s(o, t->val, v);
    sh_decref(o);
    return r;
  }
  case E_SUBSCRIPT: {
    sh_obj *o = eval(f, t->a);
    if (!o) return -1;
    sh_obj *k = eval_subscript_key(f, t->b);
    if (!k) { sh_decref(o); return -1; }
    int r = sh_setitem(o, k, v);
    sh_decref(o);
    sh_decref(k);
    return r;
  }
  }
  sh_raise(sh_SyntaxError, "cannot assign to expression");
  return -1;
}

static int del_target(sh_frame *f, sh_node *t) {
  switch (t->kind) {
  case E_NAME: return del_name(f, t);
  case E_TUPLE: case E_LIST:
    for (int i = 0; i < t->list.n; i++) if (del_target(f, t->list.v[i]) < 0) return -1;
    return 0;
  case E_ATTR: {
    sh_obj *o = eval(f, t->a);
    if (!o) return -1;
    int r = sh_setattr_s(o, t->val, NULL);
    sh_decref(o);
    return r;
  }
  case E_SUBSCRIPT: {
    sh_obj *o = eval(f, t->a);
    if (!o) return -1;
    sh_obj *k = eval_subscript_key(f, t->b);
    int r = k ? sh_setitem(o, k, NULL) : -1;
    sh_decref(o);
    sh_decref(k);
    return r;
  }
  }
  sh_raise(sh_SyntaxError, "cannot delete expression");
  return -1;
}

static sh_obj *inplace(int op, sh_obj *a, sh_obj *b) {
  if (op == SH_ADD && a->type == &sh_list_type) {   /* list += iterable extends in place */
    sh_obj *items = sh_sequence_to_list(b);
    if (!items) return NULL;
    for (int64_t i = 0; i < SH_LIST_N(items); i++) sh_list_append(a, SH_LIST_ITEMS(items)[i]);
    sh_decref(items);
    return sh_incref(a);
  }
  if (sh_isinstance(a, &sh_object_type) && (a->type->flags & SH_TF_INSTANCE)) {
    static const char *names[SH_BINOP_COUNT] = {"__iadd__", "__isub__", "__imul__", "__itruediv__",
      "__ifloordiv__", "__imod__", "__ipow__", "__imatmul__", "__ilshift__", "__irshift__",
      "__iand__", "__ior__", "__ixor__"};
    sh_obj *n = sh_intern(names[op]);
    sh_obj *m = sh_class_lookup(a->type, n);
    sh_decref(n);
    if (m) {
      sh_obj *args[2] = {a, b};
      return sh_call(m, 2, args, NULL);
    }
  }
  return sh_binop(op, a, b);
}

static int exec_augassign(sh_frame *f, sh_node *s) {
  sh_node *t = s->a;
  sh_obj *obj = NULL, *key = NULL, *old = NULL, *val = NULL, *res = NULL;
  int rc = -1;
  if (t->kind == E_NAME) old = load_name(f, t);
  else {
    if (!(obj = eval(f, t->a))) return -1;
    if (t->kind == E_ATTR) old = sh_getattr_s(obj, t->val, true);
    else if ((key = eval_subscript_key(f, t->b))) old = sh_getitem(obj, key);
  }
  if (!old || !(val = eval(f, s->b))) goto done;
  if (!(res = inplace(s->op, old, val))) goto done;
  if (t->kind == E_NAME) rc = store_name(f, t, res);
  else if (t->kind == E_ATTR) rc = sh_setattr_s(obj, t->val, res);
  else rc = sh_setitem(obj, key, res);
done:
  sh_decref(obj); sh_decref(key); sh_decref(old); sh_decref(val); sh_decref(res);
  return rc;
}

/* ---- statements ------------------------------------------------------------------------- */
static int exec_stmt(sh_frame *f, sh_node *s);

static int exec_block(sh_frame *f, sh_nodelist b) {
  for (int i = 0; i < b.n; i++) {
    int st = exec_stmt(f, b.v[i]);
    if (st != ST_OK) return st;
  }
  return ST_OK;
}

static int exec_for(sh_frame *f, sh_node *s) {
  sh_obj *seq = eval(f, s->b);
  if (!seq) return ST_ERR;
  int st = ST_OK;
  if (seq->type == &sh_range_type) {   /* no iterator object for range() */
    sh_range_obj *r = (sh_range_obj *)seq;
    for (int64_t i = r->start; r->step > 0 ? i < r->stop : i > r->stop; i += r->step) {
      if (SH_EVAL_BREAK()) { st = ST_ERR; break; }
      sh_obj *v = sh_int(i);
      int rc = assign(f, s->a, v);
      sh_decref(v);
      if (rc < 0) { st = ST_ERR; break; }
      st = exec_block(f, s->list);
      if (st == ST_CONTINUE) st = ST_OK;
      if (st != ST_OK) break;
    }
  } else {
    sh_obj *it = sh_iter(seq), *v;
    if (!it) { sh_decref(seq); return ST_ERR; }
    while ((v = sh_next(it))) {
      if (SH_EVAL_BREAK()) { sh_decref(v); st = ST_ERR; break; }
      int rc = assign(f, s->a, v);
      sh_decref(v);
      if (rc < 0) { st = ST_ERR; break; }
      st = exec_block(f, s->list);
      if (st == ST_CONTINUE) st = ST_OK;
      if (st != ST_OK) break;
    }
    sh_decref(it);
    if (st == ST_OK && sh_err_occurred()) st = ST_ERR;
  }
  sh_decref(seq);
  if (st == ST_BREAK) return ST_OK;
  if (st == ST_OK) return exec_block(f, s->list2);
  return st;
}

static int exec_while(sh_frame *f, sh_node *s) {
  for (;;) {
    if (SH_EVAL_BREAK()) return ST_ERR;
    sh_obj *c = eval(f, s->a);
    if (!c) return ST_ERR;
    int t = sh_truth(c);
    sh_decref(c);
    if (t < 0) return ST_ERR;
    if (!t) return exec_block(f, s->list2);
    int st = exec_block(f, s->list);
    if (st == ST_BREAK) return ST_OK;
    if (st == ST_CONTINUE) continue;
    if (st != ST_OK) return st;
  }
}

static int exc_matches(sh_obj *exc, sh_obj *spec) {
  if (sh_isinstance(spec, &sh_type_type)) return sh_isinstance(exc, (sh_type *)spec);
  if (spec->type == &sh_tuple_type) {
    for (int64_t i = 0; i < SH_TUPLE_N(spec); i++) {
      int m = exc_matches(exc, SH_TUPLE_ITEMS(spec)[i]);
      if (m) return m;
    }
    return 0;
  }
  sh_raise(sh_TypeError, "catching classes that do not inherit from BaseException is not allowed");
  return -1;
}

static int exec_try(sh_frame *f, sh_node *s) {
  int st = exec_block(f, s->list);
  if (st == ST_ERR && s->list2.n) {
    add_traceback(f);
    sh_obj *exc = sh_err_fetch();
    bool handled = false;
    for (int i = 0; i < s->list2.n && !handled; i++) {
      sh_node *h = s->list2.v[i];
      if (h->a) {
        sh_obj *spec = eval(f, h->a);
        int m = spec ? exc_matches(exc, spec) : -1;
        sh_decref(spec);
        if (m < 0) { sh_decref(exc); exc = NULL; st = ST_ERR; handled = true; break; }
        if (!m) continue;
      }
      handled = true;
      f->line = h->line;
      if (h->b && store_name(f, h->b, exc) < 0) { st = ST_ERR; break; }
      sh_obj *outer = f->handling;
      f->handling = exc;
      st = exec_block(f, h->list);
      f->handling = outer;
      if (h->b && st != ST_ERR) {   /* `except E as e` unbinds e afterwards */
        sh_obj *pending = sh_err_fetch();
        if (del_name(f, h->b) < 0) sh_err_clear();   /* already gone: fine */
        if (pending) sh_err_restore(pending);
      }
    }
    if (!handled) sh_err_restore(exc);
    else sh_decref(exc);
  } else if (st == ST_OK) {
    st = exec_block(f, s->list3);
  }
  if (s->list4.n) {
    sh_obj *pending = sh_err_fetch(), *ret = f->retval;
    f->retval = NULL;
    int st2 = exec_block(f, s->list4);
    if (st2 != ST_OK) {   /* the finally block's own exit wins */
      sh_decref(pending);
      sh_decref(ret);
      return st2;
    }
    f->retval = ret;
    if (pending) sh_err_restore(pending);
  }
  return st;
}

static int with_exit(sh_obj *mgr, sh_obj *exc) {
  for (sh_type *t = mgr->type; t; t = t->base)
    if (t->exit) return t->exit(mgr, exc);
  return 0;
}

static int exec_with_items(sh_frame *f, sh_node *s, int i) {
  if (i == s->list.n) return exec_block(f, s->list2);
  sh_node *item = s->list.v[i];
  sh_obj *mgr = eval(f, item->a);
  if (!mgr) return ST_ERR;
  sh_obj *val = NULL;
  sh_type *t = mgr->type;
  while (t && !t->enter) t = t->base;
  if (!t) {
    sh_raise(sh_TypeError, "'%s' object does not support the context manager protocol", sh_type_name(mgr));
    sh_decref(mgr);
    return ST_ERR;
  }
  if (!(val = t->enter(mgr))) { sh_decref(mgr); return ST_ERR; }
  int st = ST_OK;
  if (item->b && assign(f, item->b, val) < 0) st = ST_ERR;
  sh_decref(val);
  if (st == ST_OK) st = exec_with_items(f, s, i + 1);
  if (st == ST_ERR) {
    add_traceback(f);
    sh_obj *exc = sh_err_fetch();
    int r = with_exit(mgr, exc);
    if (r > 0) { sh_decref(exc); st = ST_OK; }
    else if (r == 0) sh_err_restore(exc);
    else sh_decref(exc);
  } else {
    sh_obj *ret = f->retval;
    f->retval = NULL;
    if (with_exit(mgr, NULL) < 0) { sh_decref(ret); st = ST_ERR; }
    else f->retval = ret;
  }
  sh_decref(mgr);
  return st;
}

static int exec_raise(sh_frame *f, sh_node *s) {
  if (!s->a) {
    for (sh_frame *g = f; g; g = g->back)
      if (g->handling) { sh_err_restore(sh_incref(g->handling)); return ST_ERR; }
    sh_raise(sh_RuntimeError, "No active exception to reraise");
    return ST_ERR;
  }
  sh_obj *e = eval(f, s->a);
  if (!e) return ST_ERR;
  if (s->b) {
    sh_obj *cause = eval(f, s->b);
    if (!cause) { sh_decref(e); return ST_ERR; }
    sh_decref(cause);
  }
  sh_raise_obj(e);
  sh_decref(e);
  return ST_ERR;
}

static int exec_class(sh_frame *f, sh_node *s) {
  sh_type *base = &sh_object_type;
  if (s->list.n) {
    sh_obj *b = eval(f, s->list.v[0]);
    if (!b) return ST_ERR;
    if (!sh_isinstance(b, &sh_type_type)) {
      sh_raise(sh_TypeError, "class base must be a class, not '%s'", sh_type_name(b));
      sh_decref(b);
      return ST_ERR;
    }
    base = (sh_type *)b;
    sh_decref(b);
  }
  sh_obj *ns = sh_dict_new();
  sh_obj *modname = sh_dict_get_str(f->globals, "__name__");
  if (modname) sh_dict_set_str(ns, "__module__", modname);
  if (s->fn->doc) sh_dict_set_str(ns, "__doc__", s->fn->doc);
  sh_funcdef *code = s->fn;
  sh_obj *small[16], **slots = code->nslots <= 16 ? small : xmalloc(code->nslots * sizeof *slots);
  memset(slots, 0, code->nslots * sizeof *slots);
  for (int i = 0; i < code->nslots; i++) if (code->is_cell[i]) slots[i] = cell_new(NULL);
  sh_frame cf = {.back = f, .code = code, .slots = slots, .closure = make_closure(f, code),
                 .globals = f->globals, .classns = ns, .func = f->func, .chunk = f->chunk,
                 .line = s->line};
  cur_frame = &cf;
  int st = exec_block(&cf, code->body);
  cur_frame = f;
  if (st == ST_ERR) add_traceback(&cf);
  for (int i = 0; i < code->nslots; i++) sh_decref(slots[i]);
  if (slots != small) free(slots);
  sh_decref(cf.closure);
  if (st == ST_ERR) { sh_decref(ns); return ST_ERR; }
  sh_type *t = sh_heap_type_new(sh_str_cstr(s->val), base, ns);
  if (!t) { sh_decref(ns); return ST_ERR; }
  sh_obj *k, *v;
  for (int64_t p = 0; sh_dict_next(ns, &p, &k, &v);) {
    sh_obj *fn = v;
    if (v->type == &sh_staticmethod_type || v->type == &sh_property_type || v->type == &sh_classmethod_type)
      fn = ((sh_cell_obj *)v)->v;
    if (fn && fn->type == &sh_func_type && !((sh_func *)fn)->klass)
      ((sh_func *)fn)->klass = SH_INCREF(t);   /* a cycle: classes live until exit */
  }
  sh_decref(ns);
  sh_obj *cls = (sh_obj *)t;
  for (int i = s->list3.n - 1; i >= 0; i--) {
    sh_obj *d = eval(f, s->list3.v[i]);
    sh_obj *r = d ? sh_call(d, 1, &cls, NULL) : NULL;
    sh_decref(d);
    sh_decref(cls);
    if (!(cls = r)) return ST_ERR;
  }
  int rc = store_name(f, s->a, cls);
  sh_decref(cls);
  return rc < 0 ? ST_ERR : ST_OK;
}

/* ---- imports ---------------------------------------------------------------------------- */
typedef struct { sh_obj head; sh_module_init init; } initfn;
static sh_type initfn_type = {SH_TYPE_HEAD, .name = "module_init", .size = sizeof(initfn)};

void sh_register_module(const char *dotted, sh_module_init init) {
  if (!registry) registry = sh_dict_new();
  initfn *i = sh_new(&initfn_type);
  i->init = init;
  sh_dict_set_str(registry, dotted, &i->head);
  sh_decref(&i->head);
}

static sh_obj *import_file(const char *name) {
  sh_obj *path = sh_sys_module() ? sh_getattr_opt(sh_sys_module(), "path") : NULL;
  if (!path || path->type != &sh_list_type) { sh_decref(path); return NULL; }
  static const char *exts[] = {".tfs", ".py"};
  char file[4096];
  bool found = false;
  for (int64_t i = 0; i < SH_LIST_N(path) && !found; i++) {
    sh_obj *d = SH_LIST_ITEMS(path)[i];
    if (!sh_is_str(d)) continue;
    for (int k = 0; k < 2 && !found; k++) {
      snprintf(file, sizeof file, "%s%s%s%s", sh_str_cstr(d), sh_str_len(d) ? "/" : "", name, exts[k]);
      struct stat st;
      found = stat(file, &st) == 0 && S_ISREG(st.st_mode);
    }
  }
  sh_decref(path);
  if (!found) return NULL;
  sh_obj *m = sh_module_new(name);
  sh_obj *g = ((sh_module_obj *)m)->dict;
  sh_obj *fs = sh_str(file);
  sh_dict_set_str(g, "__file__", fs);
  sh_decref(fs);
  sh_dict_set_str(modules, name, m);   /* before running: circular imports see it */
  if (sh_exec_file(file, g) < 0) {
    sh_obj *k = sh_str(name);
    sh_dict_del(modules, k);
    sh_decref(k);
    sh_decref(m);
    return (sh_obj *)1;   /* error pending */
  }
  return m;
}

sh_obj *sh_import(const char *dotted) {
  sh_obj *m = sh_dict_get_str(modules, dotted);
  if (m) return sh_incref(m);
  char name[512];
  snprintf(name, sizeof name, "%s", dotted);
  char *dot = strrchr(name, '.');
  sh_obj *parent = NULL;
  if (dot) {
    *dot = 0;
    if (!(parent = sh_import(name))) return NULL;
    *dot = '.';
  }
  sh_obj *init = registry ? sh_dict_get_str(registry, dotted) : NULL;
  if (init) {
    m = ((initfn *)init)->init();
    if (!m) { sh_decref(parent); return NULL; }
  } else if (parent) {
    m = sh_getattr_opt(parent, dot + 1);
    if (sh_err_occurred()) { sh_decref(parent); return NULL; }
  } else {
    m = import_file(dotted);
    if (m == (sh_obj *)1) return NULL;
  }
  if (!m) {
    sh_decref(parent);
    return sh_raise(sh_ModuleNotFoundError, "No module named '%s'", dotted);
  }
  sh_dict_set_str(modules, dotted, m);
  if (parent) {
    sh_obj *have = sh_getattr_opt(parent, dot + 1);
    if (!have) { sh_err_clear(); sh_setattr(parent, dot + 1, m); sh_err_clear(); }
    sh_decref(have);
    sh_decref(parent);
  }
  return m;
}

static int exec_import(sh_frame *f, sh_node *s) {
  for (int i = 0; i < s->list.n; i++) {
    sh_node *a = s->list.v[i];
    const char *dotted = sh_str_cstr(a->val);
    sh_obj *m = sh_import(dotted);
    if (!m) return ST_ERR;
    if (!a->val2 && strchr(dotted, '.')) {   /* `import a.b.c` binds a */
      sh_decref(m);
      char first[256];
      snprintf(first, sizeof first, "%.*s", (int)strcspn(dotted, "."), dotted);
      m = sh_import(first);
      if (!m) return ST_ERR;
    }
    int rc = store_name(f, a->a, m);
    sh_decref(m);
    if (rc < 0) return ST_ERR;
  }
  return ST_OK;
}

static int exec_fromimport(sh_frame *f, sh_node *s) {
  const char *modname = sh_str_cstr(s->val);
  if (!strcmp(modname, "__future__")) return ST_OK;
  sh_obj *m = sh_import(modname);
  if (!m) return ST_ERR;
  for (int i = 0; i < s->list.n; i++) {
    sh_node *a = s->list.v[i];
    const char *name = sh_str_cstr(a->val);
    if (!strcmp(name, "*")) {
      sh_obj *d = m->type == &sh_module_type ? ((sh_module_obj *)m)->dict : NULL;
      sh_obj *k, *v;
      for (int64_t p = 0; d && sh_dict_next(d, &p, &k, &v);)
        if (sh_str_cstr(k)[0] != '_') sh_dict_set(f->classns ? f->classns : f->globals, k, v);
      continue;
    }
    sh_obj *v = sh_getattr_opt(m, name);
    if (!v && !sh_err_occurred()) {
      char full[512];
      snprintf(full, sizeof full, "%s.%s", modname, name);
      v = sh_import(full);
      if (!v && sh_err_matches(sh_ModuleNotFoundError)) {
        sh_err_clear();
        sh_raise(sh_ImportError, "cannot import name '%s' from '%s'", name, modname);
      }
    }
    if (!v) { sh_decref(m); return ST_ERR; }
    int rc = store_name(f, a->a, v);
    sh_decref(v);
    if (rc < 0) { sh_decref(m); return ST_ERR; }
  }
  sh_decref(m);
  return ST_OK;
}

static int echo_value(sh_obj *v) {
  if (v == SH_NONE) return 0;
  sh_dict_set_str(builtins, "_", v);
  sh_obj *r = sh_repr(v);
  if (!r) return -1;
  sh_obj *out = sh_sys_stdout();
  if (out) {
    sh_obj *s = sh_strf("%s\n", sh_str_cstr(r));
    sh_obj *res = sh_call_method(out, "write", 1, &s, NULL);
    sh_decref(s);
    sh_decref(res);
  }
  sh_decref(r);
  return sh_err_occurred() ? -1 : 0;
}

static int exec_stmt(sh_frame *f, sh_node *s) {
  f->line = s->line;
  sh_obj *v;
  switch (s->kind) {
  case S_EXPR:
    if (!(v = eval(f, s->a))) return ST_ERR;
    if (s->op && echo_value(v) < 0) { sh_decref(v); return ST_ERR; }
    sh_decref(v);
    return ST_OK;
  case S_ASSIGN: {
    if (!(v = eval(f, s->a))) return ST_ERR;
    int rc = 0;
    for (int i = 0; i < s->list.n && rc == 0; i++) rc = assign(f, s->list.v[i], v);
    sh_decref(v);
    return rc < 0 ? ST_ERR : ST_OK;
  }
  case S_AUGASSIGN: return exec_augassign(f, s) < 0 ? ST_ERR : ST_OK;
  case S_ANNASSIGN: {
    if (!s->b) return ST_OK;
    if (!(v = eval(f, s->b))) return ST_ERR;
    int rc = assign(f, s->a, v);
    sh_decref(v);
    return rc < 0 ? ST_ERR : ST_OK;
  }
  case S_IF: {
    if (!(v = eval(f, s->a))) return ST_ERR;
    int t = sh_truth(v);
    sh_decref(v);
    if (t < 0) return ST_ERR;
    return exec_block(f, t ? s->list : s->list2);
  }
  case S_WHILE: return exec_while(f, s);
  case S_FOR: return exec_for(f, s);
  case S_BREAK: return ST_BREAK;
  case S_CONTINUE: return ST_CONTINUE;
  case S_PASS: case S_GLOBAL: case S_NONLOCAL: return ST_OK;
  case S_RETURN:
    if (s->a) { if (!(v = eval(f, s->a))) return ST_ERR; }
    else v = sh_none();
    sh_decref(f->retval);
    f->retval = v;
    return ST_RETURN;
  case S_DEF: {
    sh_obj *fn = make_function(f, s->fn);
    if (!fn) return ST_ERR;
    for (int i = s->list.n - 1; i >= 0; i--) {
      sh_obj *d = eval(f, s->list.v[i]);
      sh_obj *r = d ? sh_call(d, 1, &fn, NULL) : NULL;
      sh_decref(d);
      sh_decref(fn);
      if (!(fn = r)) return ST_ERR;
    }
    int rc = store_name(f, s->a, fn);
    sh_decref(fn);
    return rc < 0 ? ST_ERR : ST_OK;
  }
  case S_CLASS: return exec_class(f, s);
  case S_TRY: return exec_try(f, s);
  case S_RAISE: return exec_raise(f, s);
  case S_ASSERT: {
    if (!(v = eval(f, s->a))) return ST_ERR;
    int t = sh_truth(v);
    sh_decref(v);
    if (t < 0) return ST_ERR;
    if (t) return ST_OK;
    sh_obj *args;
    if (s->b) {
      sh_obj *msg = eval(f, s->b);
      if (!msg) return ST_ERR;
      args = sh_tuple_of(1, msg);
    } else args = sh_tuple_new(0);
    sh_err_restore(sh_exc_new(sh_AssertionError, args));
    return ST_ERR;
  }
  case S_DEL:
    for (int i = 0; i < s->list.n; i++) if (del_target(f, s->list.v[i]) < 0) return ST_ERR;
    return ST_OK;
  case S_IMPORT: return exec_import(f, s);
  case S_FROMIMPORT: return exec_fromimport(f, s);
  case S_WITH: return exec_with_items(f, s, 0);
  }
  sh_raise(sh_RuntimeError, "tfsh: cannot execute node kind %d", s->kind);
  return ST_ERR;
}

/* ---- running code ----------------------------------------------------------------------- */
int sh_run_chunk(sh_chunk *c, sh_obj *globals) {
  sh_funcdef *code = c->module;
  sh_obj *small[16], **slots = code->nslots <= 16 ? small : xmalloc(code->nslots * sizeof *slots);
  memset(slots, 0, code->nslots * sizeof *slots);
  for (int i = 0; i < code->nslots; i++) if (code->is_cell[i]) slots[i] = cell_new(NULL);
  sh_frame f = {.back = cur_frame, .code = code, .slots = slots, .globals = globals,
                .chunk = c, .line = 1};
  cur_frame = &f;
  int st = exec_block(&f, code->body);
  cur_frame = f.back;
  if (st == ST_ERR) add_traceback(&f);
  sh_decref(f.retval);
  for (int i = 0; i < code->nslots; i++) sh_decref(slots[i]);
  if (slots != small) free(slots);
  return st == ST_ERR ? -1 : 0;
}

static void raise_syntax(const sh_syntax_error *err, const char *file, const char *src) {
  sh_obj *exc = sh_exc_new(sh_SyntaxError, sh_tuple_of(1, sh_str(err->msg)));
  char buf[1024];
  const char *text = sh_chunk_line(src, err->line, buf, sizeof buf);
  sh_obj *v;
  sh_setattr(exc, "filename", v = sh_str(file)); sh_decref(v);
  sh_setattr(exc, "lineno", v = sh_int(err->line)); sh_decref(v);
  sh_setattr(exc, "offset", v = sh_int(err->col)); sh_decref(v);
  sh_setattr(exc, "text", v = text ? sh_str(text) : sh_none()); sh_decref(v);
  sh_setattr(exc, "msg", v = sh_str(err->msg)); sh_decref(v);
  sh_err_restore(exc);
}

static int exec_source(const char *src, const char *filename, sh_obj *globals, bool interactive) {
  sh_syntax_error err;
  sh_chunk *c = sh_parse(src, filename, interactive, &err);
  if (!c) { raise_syntax(&err, filename, src); return -1; }
  int rc = sh_run_chunk(c, globals ? globals : main_globals);
  SH_DECREF(c);
  return rc;
}

int sh_exec_string(const char *src, const char *filename, sh_obj *globals) {
  return exec_source(src, filename, globals, false);
}

int sh_exec_interactive(const char *src) { return exec_source(src, "<stdin>", NULL, true); }

/* The code object is the parsed chunk itself (an sh_obj). The error is raised plain, as
 * %timeit always reported it (no file or caret). */
sh_obj *sh_compile(const char *src, const char *filename) {
  sh_syntax_error err;
  sh_chunk *c = sh_parse(src, filename, false, &err);
  if (!c) return sh_raise(sh_SyntaxError, "%s", err.msg);
  return (sh_obj *)c;
}

int sh_run_code(sh_obj *code, sh_obj *globals) {
  return sh_run_chunk((sh_chunk *)code, globals ? globals : main_globals);
}

bool sh_source_incomplete(const char *src) {
  sh_syntax_error err;
  sh_chunk *c = sh_parse(src, "<stdin>", true, &err);
  if (c) { SH_DECREF(c); return false; }
  return err.incomplete;
}

sh_obj *sh_eval_string(const char *src, const char *filename, sh_obj *globals) {
  sh_syntax_error err;
  sh_node *e;
  sh_chunk *c = sh_parse_expr(src, filename, &err, &e);
  if (!c) { raise_syntax(&err, filename, src); return NULL; }
  sh_funcdef *code = c->module;
  sh_obj *small[16], **slots = code->nslots <= 16 ? small : xmalloc(code->nslots * sizeof *slots);
  memset(slots, 0, code->nslots * sizeof *slots);
  for (int i = 0; i < code->nslots; i++) if (code->is_cell[i]) slots[i] = cell_new(NULL);
  if (!globals) globals = cur_frame ? cur_frame->globals : main_globals;
  sh_frame f = {.back = cur_frame, .code = code, .slots = slots, .globals = globals,
                .chunk = c, .line = 1};
  cur_frame = &f;
  sh_obj *r = eval(&f, e);
  cur_frame = f.back;
  for (int i = 0; i < code->nslots; i++) sh_decref(slots[i]);
  if (slots != small) free(slots);
  SH_DECREF(c);
  return r;
}

int sh_exec_file(const char *path, sh_obj *globals) {
  if (!globals || globals == main_globals) {
    sh_obj *file = sh_str(path);
    sh_dict_set_str(main_globals, "__file__", file);
    sh_decref(file);
  }
  FILE *fp = fopen(path, "rb");
  if (!fp) {
    sh_raise(sh_FileNotFoundError, "[Errno 2] No such file or directory: '%s'", path);
    return -1;
  }
  sh_buf b = {0};
  char chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, fp)) > 0) sh_buf_put(&b, chunk, n);
  fclose(fp);
  int rc = sh_exec_string(b.data ? b.data : "", path, globals);
  sh_buf_free(&b);
  return rc;
}

/* ---- error reporting -------------------------------------------------------------------- */
void sh_exc_print(FILE *out, sh_obj *exc) {
  fflush(stdout);
  if (sh_isinstance(exc, sh_SyntaxError)) {
    sh_obj *file = sh_getattr_opt(exc, "filename"), *line = sh_getattr_opt(exc, "lineno"),
           *col = sh_getattr_opt(exc, "offset"), *text = sh_getattr_opt(exc, "text"),
           *msg = sh_getattr_opt(exc, "msg");
    sh_err_clear();
    if (file && line && col && msg && sh_is_str(file) && sh_is_int(line) && sh_is_int(col)) {
      fprintf(out, "%s:%lld:%lld: error: %s\n", sh_str_cstr(file), (long long)sh_int_value(line),
              (long long)sh_int_value(col), sh_is_str(msg) ? sh_str_cstr(msg) : "invalid syntax");
      if (text && sh_is_str(text)) {
        const char *t = sh_str_cstr(text);
        fprintf(out, "    %s\n    ", t);
        for (int64_t i = 1; i < sh_int_value(col) && t[i - 1]; i++) fputc(t[i - 1] == '\t' ? '\t' : ' ', out);
        fputs("^\n", out);
      }
      sh_decref(file); sh_decref(line); sh_decref(col); sh_decref(text); sh_decref(msg);
      return;
    }
    sh_decref(file); sh_decref(line); sh_decref(col); sh_decref(text); sh_decref(msg);
  }
  sh_inst *e = (exc->type->flags & SH_TF_INSTANCE) ? (sh_inst *)exc : NULL;
  if (e && e->tb && SH_LIST_N(e->tb)) {
    fputs("Traceback (most recent call last):\n", out);
    for (int64_t i = SH_LIST_N(e->tb) - 1; i >= 0; i--) {
      sh_obj *t = SH_LIST_ITEMS(e->tb)[i];
      sh_obj **it = SH_TUPLE_ITEMS(t);
      fprintf(out, "  File \"%s\", line %lld, in %s\n", sh_str_cstr(it[0]),
              (long long)sh_int_value(it[1]), sh_str_cstr(it[2]));
      if (it[3] != SH_NONE) fprintf(out, "    %s\n", sh_str_cstr(it[3]));
    }
  }
  char *msg = sh_exc_message(exc);
  fprintf(out, "%s\n", msg);
  free(msg);
  fflush(out);
}

int sh_report_error(void) {
  sh_obj *exc = sh_err_fetch();
  if (!exc) return 0;
  sh_screen_clear(true);
  int status = 1;
  if (sh_isinstance(exc, sh_SystemExit)) {
    sh_obj *args = ((sh_inst *)exc)->args;
    sh_obj *code = args && SH_TUPLE_N(args) ? SH_TUPLE_ITEMS(args)[0] : SH_NONE;
    if (code == SH_NONE) status = 0;
    else if (sh_is_int(code)) status = (int)sh_int_value(code);
    else { fflush(stdout); sh_fprint(stderr, code, false); fputc('\n', stderr); sh_err_clear(); }
  } else {
    sh_exc_print(stderr, exc);
    if (sh_isinstance(exc, sh_KeyboardInterrupt)) status = 130;
  }
  sh_decref(exc);
  return status;
}

/* ---- set-up ------------------------------------------------------------------------------ */
static sh_obj *staticmethod_new(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  if (argc != 1) return sh_raise(sh_TypeError, "staticmethod expected 1 argument");
  sh_cell_obj *c = sh_new(&sh_staticmethod_type);
  c->v = sh_incref(argv[0]);
  return &c->head;
}
static sh_obj *property_new(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  if (argc != 1) return sh_raise(sh_TypeError, "property expected 1 argument (the getter)");
  sh_cell_obj *c = sh_new(&sh_property_type);
  c->v = sh_incref(argv[0]);
  return &c->head;
}
static sh_obj *classmethod_new(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  if (argc != 1) return sh_raise(sh_TypeError, "classmethod expected 1 argument");
  sh_cell_obj *c = sh_new(&sh_classmethod_type);
  c->v = sh_incref(argv[0]);
  return &c->head;
}
static void cellish_destroy(sh_obj *o) { sh_decref(((sh_cell_obj *)o)->v); }
sh_type sh_staticmethod_type = {SH_TYPE_HEAD, .name = "staticmethod", .size = sizeof(sh_cell_obj),
  .destroy = cellish_destroy, .construct = staticmethod_new};
sh_type sh_classmethod_type = {SH_TYPE_HEAD, .name = "classmethod", .size = sizeof(sh_cell_obj),
  .destroy = cellish_destroy, .construct = classmethod_new};
sh_type sh_property_type = {SH_TYPE_HEAD, .name = "property", .size = sizeof(sh_cell_obj),
  .destroy = cellish_destroy, .construct = property_new};

static void register_builtin_modules(void) {
  sh_register_module("sys", sh_mod_sys_init);
  sh_register_module("os", sh_mod_os_init);
  sh_register_module("os.path", sh_mod_os_path_init);
  sh_register_module("time", sh_mod_time_init);
  sh_register_module("socket", sh_mod_socket_init);
  sh_register_module("math", sh_mod_math_init);
  sh_register_module("random", sh_mod_random_init);
  sh_register_module("json", sh_mod_json_init);
  sh_register_module("argparse", sh_mod_argparse_init);
  sh_register_module("glob", sh_mod_glob_init);
  sh_register_module("tempfile", sh_mod_tempfile_init);
  sh_register_module("shutil", sh_mod_shutil_init);
  sh_register_module("six", sh_mod_six_init);
  sh_register_module("six.moves", sh_mod_six_moves_init);
  sh_register_module("_thread", sh_mod_thread_init);
  sh_register_module("threading", sh_mod_threading_init);
  sh_register_module("queue", sh_mod_queue_init);
  sh_register_module("collections", sh_mod_collections_init);
  sh_register_module("multiprocessing", sh_mod_multiprocessing_init);
  sh_register_module("datetime", sh_mod_datetime_init);
  sh_register_module("re", sh_mod_re_init);
  sh_register_module("tarfile", sh_mod_tarfile_init);
  sh_register_module("urllib", sh_mod_urllib_init);
}

void sh_init(int argc, char **argv) {
  sh_value_init();
  builtins = sh_dict_new();
  modules = sh_dict_new();
  main_globals = sh_dict_new();
  sh_obj *mainname = sh_str("__main__");
  sh_dict_set_str(main_globals, "__name__", mainname);
  sh_decref(mainname);
  sh_builtins_init(builtins);
  sh_obj *b;
  sh_dict_set_str(builtins, "super", b = sh_builtin_new("super", bi_super, NULL, "super()", "The parent class's view of self.")); sh_decref(b);
  sh_dict_set_str(builtins, "staticmethod", (sh_obj *)&sh_staticmethod_type);
  sh_dict_set_str(builtins, "property", (sh_obj *)&sh_property_type);
  sh_dict_set_str(builtins, "classmethod", (sh_obj *)&sh_classmethod_type);
  GeneratorExit = sh_exc_class_new("GeneratorExit", sh_BaseException);
  sh_dict_set_str(builtins, "GeneratorExit", (sh_obj *)GeneratorExit);
  SH_DECREF(GeneratorExit);   /* builtins holds it */
  register_builtin_modules();
  sh_sys_set_argv(argc, argv);
  sh_decref(sh_import("sys"));   /* print needs sys.stdout */
  sh_modules_init_extra();
}

/* At exit, break the reference cycles that normal programs make (a module's functions
 * hold its globals; a class's methods hold the class) by emptying the namespaces. */
static void clear_namespace_cycles(sh_obj *globals) {
  sh_obj *k, *v;
  for (int64_t p = 0; sh_dict_next(globals, &p, &k, &v);)
    if (sh_isinstance(v, &sh_type_type) && (((sh_type *)v)->flags & SH_TF_HEAP) && ((sh_type *)v)->dict)
      sh_dict_clear(((sh_type *)v)->dict);
}

static void (*fini_hooks[8])(void);
static int n_fini_hooks;

void sh_at_fini(void (*fn)(void)) {
  if (n_fini_hooks < (int)(sizeof fini_hooks / sizeof *fini_hooks)) fini_hooks[n_fini_hooks++] = fn;
}

void sh_fini(void) {
  while (n_fini_hooks > 0) fini_hooks[--n_fini_hooks]();
  sh_err_clear();
  /* Python waits for the threads that are not daemons before it shuts down; daemons stay
   * blocked on the GIL, which this thread keeps from now on. */
  sh_obj *threading = sh_dict_get_str(modules, "threading");
  if (threading) {
    sh_obj *r = sh_call_method(threading, "_shutdown", 0, NULL, NULL);
    if (!r) sh_report_error();
    sh_decref(r);
  }
  sh_obj *k, *v;
  clear_namespace_cycles(main_globals);
  for (int64_t p = 0; sh_dict_next(modules, &p, &k, &v);)
    if (v->type == &sh_module_type) clear_namespace_cycles(((sh_module_obj *)v)->dict);
  sh_dict_clear(main_globals);
  for (int64_t p = 0; sh_dict_next(modules, &p, &k, &v);)
    if (v->type == &sh_module_type) sh_dict_clear(((sh_module_obj *)v)->dict);
  sh_clear(&main_globals);
  sh_clear(&modules);
  sh_clear(&registry);
  sh_clear(&builtins);
  sh_value_fini();
}
