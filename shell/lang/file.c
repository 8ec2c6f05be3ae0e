/* The file type behind open(), sys.stdout and sys.stderr. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "shell/lang/interp.h"

/* ---- files ------------------------------------------------------------------------------ */
typedef struct { sh_obj head; FILE *fp; sh_obj *name; char mode[8]; bool owned; } file_obj;

static void file_destroy(sh_obj *o) {
  file_obj *f = (file_obj *)o;
  if (f->fp && f->owned) fclose(f->fp);
  sh_decref(f->name);
}
static sh_obj *file_repr(sh_obj *o) {
  file_obj *f = (file_obj *)o;
  return sh_strf("<_io.TextIOWrapper name=%s mode='%s'>", f->name ? sh_str_cstr(f->name) : "?", f->mode);
}
/* A file opened in binary mode ('rb', 'wb', ...) reads bytes and writes bytes, as Python's. */
static bool file_binary(const file_obj *f) { return strchr(f->mode, 'b') != NULL; }
static sh_obj *file_text(const file_obj *f, const char *p, size_t n) {
  return file_binary(f) ? sh_bytes(p, n) : sh_strn(p, n);
}
static int file_check(file_obj *f) {
  if (!f->fp) { sh_raise(sh_ValueError, "I/O operation on closed file."); return -1; }
  return 0;
}
static sh_obj *file_read(ARGS) {
  file_obj *f = (file_obj *)self;
  if (file_check(f) < 0) return NULL;
  int64_t n = -1;
  if (argc > 0 && argv[0] != SH_NONE && sh_as_int(argv[0], &n) < 0) return NULL;
  sh_buf b = {0};
  char buf[65536];
  size_t got;
  while ((n < 0 || (int64_t)b.len < n) &&
         (got = fread(buf, 1, n < 0 || n - (int64_t)b.len > (int64_t)sizeof buf ? sizeof buf : (size_t)(n - b.len), f->fp)) > 0)
    sh_buf_put(&b, buf, got);
  if (!file_binary(f)) return sh_buf_finish(&b);
  sh_obj *r = sh_bytes(b.data ? b.data : "", b.len);
  free(b.data);
  return r;
}
static sh_obj *file_readline(ARGS) {
  file_obj *f = (file_obj *)self;
  if (file_check(f) < 0) return NULL;
  char *line = NULL;
  size_t cap = 0;
  ssize_t n = getline(&line, &cap, f->fp);
  sh_obj *r = file_text(f, n > 0 ? line : "", n > 0 ? (size_t)n : 0);
  free(line);
  return r;
}
static sh_obj *file_next(sh_obj *o) {
  file_obj *f = (file_obj *)o;
  if (!f->fp) return sh_raise(sh_ValueError, "I/O operation on closed file.");
  sh_obj *line = file_readline(o, 0, NULL, NULL);
  if (line && (sh_is_bytes(line) ? sh_bytes_len(line) : sh_str_len(line)) == 0) { sh_decref(line); return NULL; }
  return line;
}
static sh_obj *file_readlines(ARGS) {
  sh_obj *l = sh_list_new(0), *x;
  while ((x = file_next(self))) sh_list_append_steal(l, x);
  if (sh_err_occurred()) { sh_decref(l); return NULL; }
  return l;
}
void (*sh_screen_hook)(bool idle);

static sh_obj *file_write(ARGS) {
  file_obj *f = (file_obj *)self;
  if (file_check(f) < 0) return NULL;
  NARGS("write", 1, 1);
  if (sh_is_bytes(argv[0]) && file_binary(f)) {   /* (a str is taken too, as its UTF-8) */
    fwrite(sh_bytes_data(argv[0]), 1, (size_t)sh_bytes_len(argv[0]), f->fp);
    return sh_int(sh_bytes_len(argv[0]));
  }
  if (!sh_is_str(argv[0]))
    return sh_raise(sh_TypeError, file_binary(f) ? "a bytes-like object is required, not '%s'" : "write() argument must be str, not %s",
                    sh_type_name(argv[0]));
  if (f->fp == stdout || f->fp == stderr) sh_screen_clear(false);
  fwrite(sh_str_cstr(argv[0]), 1, sh_str_len(argv[0]), f->fp);
  if (f->fp == stderr) fflush(stderr);
  return sh_int(((sh_str_obj *)argv[0])->nchars);
}
static sh_obj *file_writelines(ARGS) {
  NARGS("writelines", 1, 1);
  sh_obj *it = sh_iter(argv[0]), *x;
  if (!it) return NULL;
  while ((x = sh_next(it))) {
    sh_obj *r = file_write(self, 1, &x, NULL);
    sh_decref(x);
    if (!r) { sh_decref(it); return NULL; }
    sh_decref(r);
  }
  sh_decref(it);
  return sh_err_occurred() ? NULL : sh_none();
}
static sh_obj *file_flush(ARGS) { file_obj *f = (file_obj *)self; if (f->fp) fflush(f->fp); return sh_none(); }
static sh_obj *file_close(ARGS) {
  file_obj *f = (file_obj *)self;
  if (f->fp && f->owned) fclose(f->fp);
  f->fp = NULL;
  return sh_none();
}
static sh_obj *file_isatty(ARGS) { file_obj *f = (file_obj *)self; return sh_bool(f->fp && isatty(fileno(f->fp))); }
static sh_obj *file_fileno(ARGS) { file_obj *f = (file_obj *)self; return f->fp ? sh_int(fileno(f->fp)) : sh_raise(sh_ValueError, "I/O operation on closed file."); }
static sh_obj *file_enter(sh_obj *o) { return sh_incref(o); }
static int file_exit(sh_obj *o, sh_obj *exc) { sh_decref(file_close(o, 0, NULL, NULL)); return 0; }
static sh_obj *file_getattr(sh_obj *o, const char *name) {
  file_obj *f = (file_obj *)o;
  if (!strcmp(name, "name")) return sh_incref(f->name ? f->name : SH_NONE);
  if (!strcmp(name, "closed")) return sh_bool(!f->fp);
  if (!strcmp(name, "mode")) return sh_str(f->mode);
  return NULL;
}
static const sh_method file_methods[] = {
  {"read", file_read, "read(size=-1)", "Read up to size characters (all when negative)."},
  {"readline", file_readline, "readline()", "Read one line, with its newline."},
  {"readlines", file_readlines, "readlines()", "All remaining lines as a list."},
  {"write", file_write, "write(s)", "Write a string; returns its length."},
  {"writelines", file_writelines, "writelines(lines)", "Write each string of an iterable."},
  {"flush", file_flush, "flush()", "Flush the write buffer."},
  {"close", file_close, "close()", "Close the file."},
  {"isatty", file_isatty, "isatty()", "Whether the file is a terminal."},
  {"fileno", file_fileno, "fileno()", "The file descriptor."},
  {NULL}};
sh_type sh_file_type = {SH_TYPE_HEAD, .name = "TextIOWrapper", .size = sizeof(file_obj),
  .destroy = file_destroy, .repr = file_repr, .methods = file_methods, .iter = sh_self_iter,
  .next = file_next, .enter = file_enter, .exit = file_exit, .getattr = file_getattr};

sh_obj *sh_file_wrap(FILE *fp, const char *name, const char *mode, bool owned) {
  file_obj *f = sh_new(&sh_file_type);
  f->fp = fp;
  f->name = sh_str(name);
  snprintf(f->mode, sizeof f->mode, "%s", mode);
  f->owned = owned;
  return &f->head;
}

sh_obj *sh_builtin_open(ARGS) {
  sh_obj *path, *mode = NULL, *enc = NULL, *buffering = NULL, *errors = NULL, *newline = NULL;
  if (sh_parse_args("open", argc, argv, kw, "file |mode buffering encoding errors newline", &path, &mode, &buffering, &enc, &errors, &newline) < 0) return NULL;
  const char *p = sh_as_cstr(path), *m = mode ? sh_as_cstr(mode) : "r";
  if (!p || !m) return NULL;
  char cm[8];
  snprintf(cm, sizeof cm, "%s", m);
  for (char *c = cm; *c; c++) if (*c == 't') memmove(c, c + 1, strlen(c));
  FILE *fp = fopen(p, cm);
  if (!fp) {
    sh_type *t = errno == ENOENT ? sh_FileNotFoundError : sh_OSError;
    return sh_raise(t, "[Errno %d] %s: '%s'", errno, strerror(errno), p);
  }
  return sh_file_wrap(fp, p, m, true);
}

/* print()'s writer: a file object, or anything with a write method. */
int sh_file_write(sh_obj *file, const char *s, size_t n) {
  if (file->type == &sh_file_type) {
    file_obj *f = (file_obj *)file;
    if (file_check(f) < 0) return -1;
    if (f->fp == stdout || f->fp == stderr) sh_screen_clear(false);
    fwrite(s, 1, n, f->fp);
    return 0;
  }
  sh_obj *str = sh_strn(s, n);
  sh_obj *r = sh_call_method(file, "write", 1, &str, NULL);
  sh_decref(str);
  sh_decref(r);
  return r ? 0 : -1;
}
