/* TF 1.x's API names (api_v1.py.inc, generated from real TensorFlow's tf.compat.v1 by
 * scripts/tf_oracle/api_names.py): after the rest of the module is built, every name TF
 * gives an object tfsh has is bound to it (tf.random.truncated_normal is
 * tf.truncated_normal), every namespace exists (tf.linalg, tf.keras.layers, ...), and a
 * name tfsh lacks is a stub that fails, when called or used, with "... is not implemented
 * in tfsh" (a NotImplementedError, not an AttributeError that reads like a typo). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "shell/tf/tf.h"

static const char api_src[] =
#include "shell/tf/api_v1.py.inc"
;

/* ---- the stub for functions and other objects ---------------------------------------- */

typedef struct {
  sh_obj head;
  char *path;     /* "tf.image.resize_bicubic" */
} tf_unimpl;

static void unimpl_destroy(sh_obj *o) { free(((tf_unimpl *)o)->path); }

static sh_obj *unimpl_raise(const char *path) {
  return sh_raise(sh_NotImplementedError, "%s is not implemented in tfsh", path);
}

static sh_obj *unimpl_call(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  return unimpl_raise(((tf_unimpl *)self)->path);
}

static sh_obj *unimpl_repr(sh_obj *self) {
  char buf[512];
  snprintf(buf, sizeof buf, "<%s: not implemented in tfsh>", ((tf_unimpl *)self)->path);
  return sh_str(buf);
}

static sh_obj *unimpl_getattr(sh_obj *self, const char *name) {
  const char *path = ((tf_unimpl *)self)->path;
  if (!strcmp(name, "__name__")) {
    const char *dot = strrchr(path, '.');
    return sh_str(dot ? dot + 1 : path);
  }
  if (!strcmp(name, "__doc__")) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s is not implemented in tfsh.", path);
    return sh_str(buf);
  }
  if (!strncmp(name, "__", 2)) return NULL;
  char buf[512];
  snprintf(buf, sizeof buf, "%s.%s", path, name);
  return unimpl_raise(buf);
}

static sh_type tf_unimpl_type = {SH_TYPE_HEAD, .name = "NotImplementedInTfsh", .size = sizeof(tf_unimpl),
  .help = "A TensorFlow 1.x name tfsh does not implement yet.", .destroy = unimpl_destroy,
  .repr = unimpl_repr, .getattr = unimpl_getattr, .call = unimpl_call};

/* Classes are classes (isinstance(x, tf.SparseTensor) is False, a subclass can be
 * written); making an instance fails. */
static sh_obj *unimpl_class_init(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *p = sh_getattr_opt(self, "_tfsh_unimplemented");
  if (!p) return sh_raise(sh_NotImplementedError, "not implemented in tfsh");
  sh_obj *r = unimpl_raise(sh_is_str(p) ? sh_str_cstr(p) : "this class");
  sh_decref(p);
  return r;
}
static const sh_method unimpl_class_methods[] = {
  {"__init__", unimpl_class_init, "__init__(*args, **kwargs)", "Not implemented in tfsh."},
  {NULL},
};

static sh_obj *stub_new(char kind, const char *path) {
  char full[512];
  snprintf(full, sizeof full, "tf.%s", path);
  if (kind == 'c') {
    const char *dot = strrchr(path, '.');
    sh_type *t = sh_class_new(dot ? dot + 1 : path, NULL, unimpl_class_methods,
                              "A TensorFlow 1.x class tfsh does not implement yet.");
    if (!t) return NULL;
    sh_obj *s = sh_str(full);
    sh_setattr((sh_obj *)t, "_tfsh_unimplemented", s);
    sh_decref(s);
    return (sh_obj *)t;
  }
  tf_unimpl *u = sh_new(&tf_unimpl_type);
  u->path = xstrdup(full);
  return (sh_obj *)u;
}

/* ---- walking paths ------------------------------------------------------------------- */

/* The object at tf.PATH (first len bytes of path), or NULL without an exception. */
static sh_obj *lookup(sh_obj *tf, const char *path, size_t len) {
  sh_obj *cur = sh_incref(tf);
  const char *p = path, *end = path + len;
  while (cur && p < end) {
    const char *dot = memchr(p, '.', (size_t)(end - p));
    size_t n = dot ? (size_t)(dot - p) : (size_t)(end - p);
    char name[128];
    if (n >= sizeof name) { sh_decref(cur); return NULL; }
    memcpy(name, p, n);
    name[n] = 0;
    sh_obj *next = Py_TYPE(cur) == (PyTypeObject *)&tf_unimpl_type ? NULL : sh_getattr_opt(cur, name);
    if (!next && sh_err_occurred()) sh_err_clear();
    sh_decref(cur);
    cur = next;
    p = dot ? dot + 1 : end;
  }
  return cur;
}

/* Stubs for top-level names that are also builtins (print, round, ...): not in the tf
 * module's dict, which the preludes use as their globals, but answered by its __getattr__. */
static sh_obj *shadow;

static sh_obj *tf_module_getattr(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *v = argc == 1 && sh_is_str(argv[0]) && shadow ? sh_dict_get(shadow, argv[0]) : NULL;
  if (v) return sh_incref(v);
  return sh_raise(sh_AttributeError, "module 'tensorflow' has no attribute '%s'",
                  argc == 1 && sh_is_str(argv[0]) ? sh_str_cstr(argv[0]) : "?");
}

/* Bind tf.PATH = value (the parent must exist); steals nothing. */
static void bind(sh_obj *tf, const char *path, sh_obj *value) {
  const char *dot = strrchr(path, '.');
  if (!dot && sh_dict_get_str(sh_builtins_dict(), path)) {
    if (!shadow) shadow = sh_dict_new();
    sh_dict_set_str(shadow, path, value);
    return;
  }
  sh_obj *parent = dot ? lookup(tf, path, (size_t)(dot - path)) : sh_incref(tf);
  if (!parent) return;
  if (Py_TYPE(parent) != (PyTypeObject *)&tf_unimpl_type && sh_setattr(parent, dot ? dot + 1 : path, value) < 0) sh_err_clear();
  sh_decref(parent);
}

static void ensure_module(sh_obj *tf, const char *path) {
  sh_obj *have = lookup(tf, path, strlen(path));
  if (have) { sh_decref(have); return; }
  char full[512];
  snprintf(full, sizeof full, "tensorflow.%s", path);
  sh_obj *m = sh_module_new(full);
  bind(tf, path, m);
  sh_decref(m);
}

/* A plain constant as the table writes it: an int, a quoted str, or None. */
static sh_obj *parse_value(const char *s) {
  if (!strcmp(s, "None")) return sh_none();
  if (s[0] == '\'' || s[0] == '"') {
    size_t n = strlen(s);
    char *t = xstrdup(s + 1);
    if (n >= 2) t[n - 2] = 0;
    sh_obj *r = sh_str(t);
    free(t);
    return r;
  }
  char *end;
  long long v = strtoll(s, &end, 10);
  if (*end) return NULL;
  return sh_int(v);
}

void tf_api_add(sh_obj *tf) {
  sh_module_add_func(tf, "__getattr__", tf_module_getattr, "__getattr__(name)",
                     "TF 1.x names tfsh lacks that are also builtins (internal).");
  const char *p = api_src;
  char line[4096];
  char *paths[256];
  while (*p) {
    const char *nl = strchr(p, '\n');
    size_t n = nl ? (size_t)(nl - p) : strlen(p);
    if (n >= sizeof line) n = sizeof line - 1;
    memcpy(line, p, n);
    line[n] = 0;
    p = nl ? nl + 1 : p + n;
    if (!line[0]) continue;
    if (line[0] == '@') {
      ensure_module(tf, line + 1);
      continue;
    }
    if (line[0] == '=') {
      char *name = line + 2, *sp = strchr(name, ' ');
      if (!sp) continue;
      *sp = 0;
      sh_obj *have = lookup(tf, name, strlen(name));
      if (have) { sh_decref(have); continue; }
      sh_obj *v = parse_value(sp + 1);
      if (v) { bind(tf, name, v); sh_decref(v); }
      continue;
    }
    char kind = line[0];
    int cnt = 0;
    for (char *tok = strtok(line + 1, " "); tok && cnt < 256; tok = strtok(NULL, " ")) paths[cnt++] = tok;
    if (!cnt) continue;
    sh_obj *found[256] = {0};
    sh_obj *value = NULL;
    for (int i = 0; i < cnt; i++) {
      found[i] = lookup(tf, paths[i], strlen(paths[i]));
      if (found[i] && !value) value = sh_incref(found[i]);
    }
    if (!value) value = stub_new(kind, paths[0]);
    for (int i = 0; i < cnt; i++) {
      if (!found[i] && value) bind(tf, paths[i], value);
      sh_decref(found[i]);
    }
    sh_decref(value);
  }
}
