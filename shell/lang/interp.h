/* Internal declarations shared by the language room's files (shell/lang: the object model,
 * builtins, evaluator, formatting, the stdlib modules). Included only from shell/lang
 * (scripts/check_layers.sh checks it); the rest of the shell uses shell/lang/lang.h. */
#ifndef TFSH_SHELL_INTERP_H
#define TFSH_SHELL_INTERP_H

#include "shell/lang/lang.h"

/* Native functions and methods: the parameter list, and the checks most of them make. */
#define ARGS sh_obj *self, int argc, sh_obj **argv, sh_obj *kw
#define NOKW(name) do { if (kw && sh_dict_len(kw)) return sh_raise(sh_TypeError, "%s() takes no keyword arguments", name); } while (0)
#define NARGS(name, lo, hi) do { \
    if (argc < (lo) || argc > (hi)) { \
      if ((lo) == (hi)) return sh_raise(sh_TypeError, "%s() takes exactly %d argument%s (%d given)", name, lo, (lo) == 1 ? "" : "s", argc); \
      if (argc < (lo)) return sh_raise(sh_TypeError, "%s expected at least %d argument%s, got %d", name, lo, (lo) == 1 ? "" : "s", argc); \
      return sh_raise(sh_TypeError, "%s expected at most %d argument%s, got %d", name, hi, (hi) == 1 ? "" : "s", argc); \
    } } while (0)


typedef struct sh_range { sh_obj head; int64_t start, stop, step; } sh_range_obj;
typedef struct sh_cell { sh_obj head; sh_obj *v; } sh_cell_obj;
typedef struct sh_builtin {
  sh_obj head;
  sh_cfunc fn;
  sh_obj *self;
  const char *name, *sig, *help;
  bool unbound;       /* a method in a class dict: binds to the instance on lookup */
} sh_builtin_obj;
typedef struct sh_method_obj { sh_obj head; sh_obj *func, *self; } sh_method_obj;

extern const sh_method sh_str_methods[], sh_list_methods[], sh_tuple_methods[],
    sh_dict_methods[], sh_set_methods[];
extern sh_type sh_staticmethod_type, sh_classmethod_type, sh_property_type;

sh_obj *sh_str_repr_cstr(const char *s, size_t n);
bool sh_repr_enter(sh_obj *o);        /* true: o is already being printed (a cycle) */
void sh_repr_leave(sh_obj *o);
sh_obj *sh_dict_iter(sh_obj *d, int kind);       /* 0 keys, 1 values, 2 items */
sh_obj *sh_dictview_new(sh_obj *d, int kind);
void sh_dict_clear(sh_obj *d);
void sh_list_insert(sh_obj *list, int64_t i, sh_obj *item);
sh_obj *sh_exc_new(sh_type *t, sh_obj *args);    /* steals args */
sh_type *sh_heap_type_new(const char *name, sh_type *base, sh_obj *dict);
sh_obj *sh_getattr_s(sh_obj *o, sh_obj *name, bool raise);
int sh_setattr_s(sh_obj *o, sh_obj *name, sh_obj *v);
sh_obj *sh_method_new(sh_obj *func, sh_obj *self);
sh_obj *sh_bind(sh_obj *attr, sh_obj *self);          /* functions become bound methods */

/* Shared by the object model's files (value.c and the type families). */
extern const char *const sh_binop_dunder[SH_BINOP_COUNT], *const sh_binop_rdunder[SH_BINOP_COUNT],
    *const sh_cmp_dunder[SH_CMPOP_COUNT];             /* "__add__", "__radd__", "__lt__" */
sh_obj *sh_self_iter(sh_obj *o);                     /* an iterator's iter(): itself */
sh_obj *sh_getitem_iter_new(sh_obj *o);              /* iteration through __getitem__ */
int sh_unhashable(sh_obj *o, int64_t *out);           /* TypeError: unhashable type */
int64_t sh_str_hash_value(sh_str_obj *s);
int sh_dict_update(sh_obj *d, int argc, sh_obj **argv, sh_obj *kw);   /* dict.update */
sh_obj *sh_dict_construct(ARGS);                      /* dict(...) */
sh_obj *sh_set_construct(ARGS);                       /* set(...) */
sh_obj *sh_builtin_open(ARGS);                        /* open(...) (file.c) */
/* print()'s writer: a file object, or anything with a write method (file.c). */
int sh_file_write(sh_obj *file, const char *s, size_t n);
void sh_exc_add_methods(void);
bool sh_cmp_result(int op, int c);                    /* op applied to a -1/0/1 comparison */
sh_str_obj *sh_str_alloc(size_t n);                   /* a str of n bytes to fill */
/* key as an index into a sequence of n items (negative from the end): 0, or -1 with
 * IndexError/TypeError naming what. */
int sh_norm_index(sh_obj *key, int64_t n, int64_t *out, const char *what);
sh_obj *sh_seqiter_new(sh_obj *seq);                  /* iterator over str/list/tuple */
int sh_list_sort(sh_obj *list, sh_obj *key, bool reverse);   /* stable, in place */
sh_obj *sh_seq_repeat(sh_obj *seq, int64_t n);        /* str/list/tuple * n */
sh_obj *sh_str_encode(sh_obj *self, sh_obj *enc, sh_obj *err);   /* str.encode (bytes.c) */
sh_obj *sh_bytes_literal(const char *s, size_t n, bool raw);     /* b'...' (bytes.c) */
/* Ints and floats are allocated and freed constantly: the allocator (value.c) keeps a free
 * list of each, which sh_int and sh_float (num.c) draw from. */
#define SH_FREELIST_MAX 256
extern sh_obj *sh_int_free[SH_FREELIST_MAX], *sh_float_free[SH_FREELIST_MAX];
extern int sh_n_int_free, sh_n_float_free;
void sh_num_init(void);                               /* the small-int cache */
void sh_str_init(void);                               /* the interned strs, "" */
void sh_str_fini(void);                        /* BaseException.__init__, ... */

/* The evaluator's poll in loops and calls: another thread waits for the GIL (thread.c),
 * or Ctrl-C. True: KeyboardInterrupt raised. */
#define SH_EVAL_BREAK() \
  ((sh_gil_drop_request && (sh_gil_yield(), false)) || (sh_interrupted && sh_check_interrupt() < 0))
sh_obj *sh_mod_thread_init(void);                     /* _thread (thread.c) */
sh_obj *sh_mod_threading_init(void);                  /* threading, queue (mod_pylib.c) */
sh_obj *sh_mod_queue_init(void);
sh_obj *sh_mod_collections_init(void);
sh_obj *sh_mod_multiprocessing_init(void);
sh_obj *sh_mod_datetime_init(void);
sh_obj *sh_mod_re_init(void);
sh_obj *sh_mod_tarfile_init(void);
sh_obj *sh_mod_urllib_init(void);

/* eval.c */
sh_obj *sh_func_call(sh_obj *f, int argc, sh_obj **argv, sh_obj *kw);
int sh_func_setattr(sh_obj *f, sh_obj *name, sh_obj *v);
char *sh_func_signature(sh_obj *f);   /* "f(a, b=1, *args)", malloc'd */
sh_obj *sh_sys_module(void);
void sh_builtins_init(sh_obj *builtins);
int sh_eval_depth(void);

/* Built-in modules (mod_*.c), registered by sh_init. */
sh_obj *sh_mod_sys_init(void);
sh_obj *sh_mod_os_init(void);
sh_obj *sh_mod_os_path_init(void);
sh_obj *sh_mod_time_init(void);
sh_obj *sh_mod_socket_init(void);
sh_obj *sh_mod_math_init(void);
sh_obj *sh_mod_random_init(void);
sh_obj *sh_mod_json_init(void);
sh_obj *sh_mod_argparse_init(void);
sh_obj *sh_mod_glob_init(void);
sh_obj *sh_mod_tempfile_init(void);
sh_obj *sh_mod_shutil_init(void);
sh_obj *sh_mod_six_init(void);
sh_obj *sh_mod_six_moves_init(void);
/* A file object over a C stream (sys.stdout, open()); owned: fclose it when collected. */
sh_obj *sh_file_wrap(FILE *fp, const char *name, const char *mode, bool owned);

#endif
