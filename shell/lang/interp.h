/* Internal declarations shared by the language room's files (shell/lang: the object model,
 * builtins, evaluator, formatting, the stdlib modules). Included only from shell/lang
 * (scripts/check_layers.sh checks it); the rest of the shell uses shell/lang/lang.h. */
#ifndef TFSH_SHELL_INTERP_H
#define TFSH_SHELL_INTERP_H

#include "shell/lang/lang.h"

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
