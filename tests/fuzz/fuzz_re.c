/* libFuzzer target: the re module's engine (shell/lang/mod_re.c) on any bytes. The input is
 * a flags byte, then a pattern up to the first NUL, then a subject; both are used as str
 * (when valid UTF-8, as the interpreter's strs are) and as bytes. Invalid patterns must
 * give error results, valid ones must scan (spans, findall, sub), match, search and
 * fullmatch without crashing, and a small step budget keeps pathological patterns quick. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "shell/lang/value.h"

static sh_obj *re_mod, *f_compile, *f_scan, *f_exec;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  char *sargv[] = {"fuzz"};
  sh_init(1, sargv);
  re_mod = sh_import("re");
  if (!re_mod) return 1;
  f_compile = sh_getattr(re_mod, "_compile_native");
  f_scan = sh_getattr(re_mod, "_scan");
  f_exec = sh_getattr(re_mod, "_exec");
  sh_obj *sb = sh_getattr(re_mod, "_set_step_budget");
  sh_obj *n = sh_int(200000);
  sh_decref(sh_call(sb, 1, &n, NULL));
  sh_decref(n);
  sh_decref(sb);
  return 0;
}

static int valid_utf8(const uint8_t *s, size_t n) {
  for (size_t i = 0; i < n;) {
    uint8_t c = s[i];
    size_t extra = c < 0x80 ? 0 : (c >= 0xC2 && c < 0xE0) ? 1 : (c & 0xF0) == 0xE0 ? 2 : (c >= 0xF0 && c < 0xF5) ? 3 : 9;
    if (extra == 9 || i + extra >= n + (extra == 0)) return 0;
    for (size_t k = 1; k <= extra; k++)
      if ((s[i + k] & 0xC0) != 0x80) return 0;
    i += extra + 1;
  }
  return 1;
}

static sh_obj *call(sh_obj *f, int argc, sh_obj **argv) {
  sh_obj *r = sh_call(f, argc, argv, NULL);
  if (!r) sh_err_clear();
  return r;
}

static void one(sh_obj *pat, sh_obj *subj, int64_t flags) {
  sh_obj *fl = sh_int(flags), *zero = sh_int(0), *onei = sh_int(1);
  sh_obj *cargs[2] = {pat, fl};
  sh_obj *r = call(f_compile, 2, cargs);
  sh_obj *prog = r ? sh_getitem(r, zero) : NULL;
  if (prog && prog != SH_NONE) {
    sh_obj *sargs[4] = {prog, subj, zero, SH_NONE};
    sh_decref(call(f_scan, 4, sargs));
    /* findall's and sub's passes, the template: a literal, the match, group 1 */
    sh_obj *lit = sh_is_bytes(subj) ? sh_bytes("<", 1) : sh_str("<"), *tpl = sh_list_new(0);
    sh_list_append(tpl, lit);
    sh_list_append(tpl, zero);
    sh_list_append(tpl, onei);
    sh_obj *two = sh_int(2);
    sh_obj *fargs[6] = {prog, subj, zero, SH_NONE, zero, onei};
    sh_decref(call(f_scan, 6, fargs));
    sh_obj *targs[7] = {prog, subj, zero, SH_NONE, zero, two, tpl};
    sh_decref(call(f_scan, 7, targs));
    sh_decref(two);
    sh_decref(tpl);
    sh_decref(lit);
    for (int mode = 0; mode < 3; mode++) {
      sh_obj *md = sh_int(mode);
      sh_obj *eargs[5] = {prog, subj, onei, SH_NONE, md};
      sh_decref(call(f_exec, 5, eargs));
      sh_decref(md);
    }
  }
  if (!prog) sh_err_clear();
  sh_decref(prog);
  sh_decref(r);
  sh_decref(fl);
  sh_decref(zero);
  sh_decref(onei);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1 || size > 4096 || !re_mod) return 0;
  int64_t flags = data[0] & (2 | 8 | 16 | 64 | 256);
  const uint8_t *p = data + 1;
  size_t n = size - 1;
  const uint8_t *nul = memchr(p, 0, n);
  size_t pn = nul ? (size_t)(nul - p) : n;
  const uint8_t *s = nul ? nul + 1 : p + n;
  size_t sn = nul ? n - pn - 1 : 0;
  sh_obj *bp = sh_bytes((const char *)p, pn), *bs = sh_bytes((const char *)s, sn);
  one(bp, bs, flags);
  sh_decref(bp);
  sh_decref(bs);
  if (valid_utf8(p, pn) && valid_utf8(s, sn) && !memchr(s, 0, sn)) {
    sh_obj *sp = sh_strn((const char *)p, pn), *ss = sh_strn((const char *)s, sn);
    one(sp, ss, flags);
    sh_decref(sp);
    sh_decref(ss);
  }
  return 0;
}
