/* The sys module: argv, exit, stdout/stderr/stdin, path, modules, version. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shell/lang/interp.h"

static sh_obj *sys_mod, *argv_list;

sh_obj *sh_sys_module(void) { return sys_mod; }

/* The current sys.stdout / sys.stderr (a script may replace them). */
static sh_obj *sys_stream(const char *name) {
  return sys_mod ? sh_dict_get_str(((sh_module_obj *)sys_mod)->dict, name) : NULL;
}
sh_obj *sh_sys_stdout(void) { return sys_stream("stdout"); }
sh_obj *sh_sys_stderr(void) { return sys_stream("stderr"); }

static sh_obj *sys_exit(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  if (argc > 1) return sh_raise(sh_TypeError, "exit expected at most 1 argument, got %d", argc);
  sh_obj *args = sh_tuple_new(argc);
  if (argc) SH_TUPLE_ITEMS(args)[0] = sh_incref(argv[0]);
  sh_err_restore(sh_exc_new(sh_SystemExit, args));
  return NULL;
}

static sh_obj *sys_getrecursionlimit(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) { return sh_int(900); }
static sh_obj *sys_setrecursionlimit(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) { return sh_none(); }

static const sh_method sys_funcs[] = {
  {"exit", sys_exit, "exit(status=None)", "Exit by raising SystemExit."},
  {"getrecursionlimit", sys_getrecursionlimit, "getrecursionlimit()", "The maximum call depth."},
  {"setrecursionlimit", sys_setrecursionlimit, "setrecursionlimit(n)", "Accepted and ignored (tfsh's limit is fixed)."},
  {NULL}};

void sh_sys_set_argv(int argc, char **argv) {
  sh_decref(argv_list);
  argv_list = sh_list_new(0);
  for (int i = 0; i < argc; i++) sh_list_append_steal(argv_list, sh_str(argv[i]));
  if (sys_mod) sh_module_add(sys_mod, "argv", sh_incref(argv_list));
}

sh_obj *sh_mod_sys_init(void) {
  sys_mod = sh_module_new("sys");
  sh_module_add_funcs(sys_mod, sys_funcs);
  sh_module_add(sys_mod, "argv", sh_incref(argv_list ? argv_list : (argv_list = sh_list_new(0))));
  sh_module_add(sys_mod, "stdout", sh_file_wrap(stdout, "<stdout>", "w", false));
  sh_module_add(sys_mod, "stderr", sh_file_wrap(stderr, "<stderr>", "w", false));
  sh_module_add(sys_mod, "stdin", sh_file_wrap(stdin, "<stdin>", "r", false));
  sh_module_add(sys_mod, "__stdout__", sh_file_wrap(stdout, "<stdout>", "w", false));
  sh_module_add(sys_mod, "__stderr__", sh_file_wrap(stderr, "<stderr>", "w", false));
  sh_obj *path = sh_list_new(0);
  sh_obj *a0 = SH_LIST_N(argv_list) ? SH_LIST_ITEMS(argv_list)[0] : NULL;
  if (a0 && sh_str_len(a0) && strcmp(sh_str_cstr(a0), "-c")) {
    const char *s = sh_str_cstr(a0), *slash = strrchr(s, '/');
    sh_list_append_steal(path, slash ? sh_strn(s, slash - s) : sh_str("."));
  } else sh_list_append_steal(path, sh_str(""));
  sh_module_add(sys_mod, "path", path);
  sh_module_add(sys_mod, "version", sh_str("3.11.0 (tfsh " TFSH_VERSION ")"));
  sh_module_add(sys_mod, "version_info", sh_tuple_of(3, sh_int(3), sh_int(11), sh_int(0)));
  sh_module_add(sys_mod, "platform", sh_str("linux"));
  sh_module_add(sys_mod, "maxsize", sh_int(INT64_MAX));
  sh_module_add(sys_mod, "executable", sh_str("tfsh"));
  sh_module_add(sys_mod, "modules", sh_incref(sh_modules_dict()));
  sh_module_add(sys_mod, "__doc__", sh_str("System-specific parameters and functions."));
  return sh_incref(sys_mod);
}
