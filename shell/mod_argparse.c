/* The argparse module, written in the language itself (the subset is enough for it). */
#define _GNU_SOURCE
#include "shell/interp.h"

static const char argparse_src[] =
#include "shell/argparse.py.inc"
;

sh_obj *sh_mod_argparse_init(void) {
  sh_obj *m = sh_module_new("argparse");
  if (sh_exec_string(argparse_src, "<argparse>", ((sh_module_obj *)m)->dict) < 0) {
    sh_decref(m);
    return NULL;
  }
  return m;
}
