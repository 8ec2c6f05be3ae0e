/* The os and os.path modules. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"
#include "shell/lang/interp.h"


extern char **environ;

static sh_obj *os_error(const char *path) {
  sh_type *t = errno == ENOENT ? sh_FileNotFoundError : sh_OSError;
  if (path) return sh_raise(t, "[Errno %d] %s: '%s'", errno, strerror(errno), path);
  return sh_raise(t, "[Errno %d] %s", errno, strerror(errno));
}

static const char *path_arg(const char *fn, int argc, sh_obj **argv, int i) {
  if (argc <= i) { sh_raise(sh_TypeError, "%s() missing required argument 'path'", fn); return NULL; }
  return sh_as_cstr(argv[i]);
}

static sh_obj *p_join(ARGS) {
  if (argc < 1) return sh_raise(sh_TypeError, "join() missing required argument 'a'");
  sh_buf b = {0};
  for (int i = 0; i < argc; i++) {
    const char *s = sh_as_cstr(argv[i]);
    if (!s) { sh_buf_free(&b); return NULL; }
    if (s[0] == '/') b.len = 0;
    else if (b.len && b.data[b.len - 1] != '/') sh_buf_putc(&b, '/');
    sh_buf_puts(&b, s);
  }
  return sh_buf_finish(&b);
}
static sh_obj *p_exists(ARGS) { const char *p = path_arg("exists", argc, argv, 0); struct stat st; return p ? sh_bool(stat(p, &st) == 0) : NULL; }
static sh_obj *p_isdir(ARGS) { const char *p = path_arg("isdir", argc, argv, 0); struct stat st; return p ? sh_bool(stat(p, &st) == 0 && S_ISDIR(st.st_mode)) : NULL; }
static sh_obj *p_islink(ARGS) { const char *p = path_arg("islink", argc, argv, 0); struct stat st; return p ? sh_bool(lstat(p, &st) == 0 && S_ISLNK(st.st_mode)) : NULL; }
static sh_obj *p_isfile(ARGS) { const char *p = path_arg("isfile", argc, argv, 0); struct stat st; return p ? sh_bool(stat(p, &st) == 0 && S_ISREG(st.st_mode)) : NULL; }
static sh_obj *p_isabs(ARGS) { const char *p = path_arg("isabs", argc, argv, 0); return p ? sh_bool(p[0] == '/') : NULL; }
static sh_obj *p_basename(ARGS) {
  const char *p = path_arg("basename", argc, argv, 0);
  if (!p) return NULL;
  const char *s = strrchr(p, '/');
  return sh_str(s ? s + 1 : p);
}
static sh_obj *p_dirname(ARGS) {
  const char *p = path_arg("dirname", argc, argv, 0);
  if (!p) return NULL;
  const char *s = strrchr(p, '/');
  if (!s) return sh_str("");
  size_t n = s - p;
  while (n > 0 && p[n - 1] == '/') n--;
  return sh_strn(p, n ? n : 1);
}
static sh_obj *p_split(ARGS) {
  sh_obj *d = p_dirname(self, argc, argv, kw);
  if (!d) return NULL;
  return sh_tuple_of(2, d, p_basename(self, argc, argv, kw));
}
static sh_obj *p_splitext(ARGS) {
  const char *p = path_arg("splitext", argc, argv, 0);
  if (!p) return NULL;
  const char *slash = strrchr(p, '/'), *base = slash ? slash + 1 : p, *dot = strrchr(base, '.');
  while (base < dot && *base == '.') base++;
  if (!dot || dot <= base) return sh_tuple_of(2, sh_str(p), sh_str(""));
  return sh_tuple_of(2, sh_strn(p, dot - p), sh_str(dot));
}
static sh_obj *p_abspath(ARGS) {
  const char *p = path_arg("abspath", argc, argv, 0);
  if (!p) return NULL;
  char cwd[PATH_MAX];
  sh_buf b = {0};
  if (p[0] != '/' && getcwd(cwd, sizeof cwd)) { sh_buf_puts(&b, cwd); sh_buf_putc(&b, '/'); }
  sh_buf_puts(&b, p);
  /* normalize . and .. */
  char *parts[512];
  int n = 0;
  for (char *t = strtok(b.data, "/"); t && n < 512; t = strtok(NULL, "/")) {
    if (!strcmp(t, ".")) continue;
    if (!strcmp(t, "..")) { if (n) n--; continue; }
    parts[n++] = t;
  }
  sh_buf o = {0};
  for (int i = 0; i < n; i++) { sh_buf_putc(&o, '/'); sh_buf_puts(&o, parts[i]); }
  if (!n) sh_buf_putc(&o, '/');
  sh_buf_free(&b);
  return sh_buf_finish(&o);
}
static sh_obj *p_expanduser(ARGS) {
  const char *p = path_arg("expanduser", argc, argv, 0);
  if (!p) return NULL;
  const char *home = getenv("HOME");
  if (p[0] == '~' && (p[1] == '/' || !p[1]) && home) return sh_strf("%s%s", home, p + 1);
  return sh_str(p);
}
static sh_obj *p_getsize(ARGS) {
  const char *p = path_arg("getsize", argc, argv, 0);
  struct stat st;
  if (!p) return NULL;
  if (stat(p, &st) < 0) return os_error(p);
  return sh_int(st.st_size);
}

static const sh_method path_funcs[] = {
  {"join", p_join, "join(a, *p)", "Join path components."},
  {"exists", p_exists, "exists(path)", "Whether path exists."},
  {"isdir", p_isdir, "isdir(path)", "Whether path is a directory."},
  {"isfile", p_isfile, "isfile(path)", "Whether path is a regular file."},
  {"islink", p_islink, "islink(path)", "Whether path is a symbolic link."},
  {"isabs", p_isabs, "isabs(path)", "Whether path is absolute."},
  {"basename", p_basename, "basename(path)", "The final component."},
  {"dirname", p_dirname, "dirname(path)", "Everything but the final component."},
  {"split", p_split, "split(path)", "(dirname, basename)."},
  {"splitext", p_splitext, "splitext(path)", "(root, extension)."},
  {"abspath", p_abspath, "abspath(path)", "Absolute, normalized path."},
  {"expanduser", p_expanduser, "expanduser(path)", "Replace a leading ~ by $HOME."},
  {"getsize", p_getsize, "getsize(path)", "Size in bytes."},
  {NULL}};

static sh_obj *os_getenv(ARGS) {
  if (argc < 1 || argc > 2) return sh_raise(sh_TypeError, "getenv() takes 1 or 2 arguments");
  const char *k = sh_as_cstr(argv[0]);
  if (!k) return NULL;
  const char *v = getenv(k);
  return v ? sh_str(v) : sh_incref(argc > 1 ? argv[1] : SH_NONE);
}
static sh_obj *os_makedirs(ARGS) {
  sh_obj *path, *mode = NULL, *exist_ok = NULL;
  if (sh_parse_args("makedirs", argc, argv, kw, "name |mode exist_ok", &path, &mode, &exist_ok) < 0) return NULL;
  const char *p = sh_as_cstr(path);
  if (!p) return NULL;
  struct stat st;
  if (stat(p, &st) == 0) {
    if (exist_ok && sh_truth(exist_ok) > 0 && S_ISDIR(st.st_mode)) return sh_none();
    errno = EEXIST;
    return sh_raise(sh_OSError, "[Errno 17] File exists: '%s'", p);
  }
  char *buf = xstrdup(p);
  for (char *s = buf + 1; *s; s++)
    if (*s == '/') { *s = 0; mkdir(buf, 0777); *s = '/'; }
  int rc = mkdir(buf, 0777);
  free(buf);
  if (rc < 0 && errno != EEXIST) return os_error(p);
  return sh_none();
}
static sh_obj *os_mkdir(ARGS) {
  const char *p = path_arg("mkdir", argc, argv, 0);
  if (!p) return NULL;
  if (mkdir(p, 0777) < 0) return errno == EEXIST ? sh_raise(sh_OSError, "[Errno 17] File exists: '%s'", p) : os_error(p);
  return sh_none();
}
static sh_obj *os_listdir(ARGS) {
  const char *p = argc ? sh_as_cstr(argv[0]) : ".";
  if (!p) return NULL;
  DIR *d = opendir(p);
  if (!d) return os_error(p);
  sh_obj *l = sh_list_new(0);
  struct dirent *e;
  while ((e = readdir(d)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) sh_list_append_steal(l, sh_str(e->d_name));
  closedir(d);
  return l;
}
static sh_obj *os_remove(ARGS) {
  const char *p = path_arg("remove", argc, argv, 0);
  if (!p) return NULL;
  if (unlink(p) < 0) return os_error(p);
  return sh_none();
}
static sh_obj *os_rmdir(ARGS) {
  const char *p = path_arg("rmdir", argc, argv, 0);
  if (!p) return NULL;
  if (rmdir(p) < 0) return os_error(p);
  return sh_none();
}
static sh_obj *os_rename(ARGS) {
  if (argc != 2) return sh_raise(sh_TypeError, "rename() takes 2 arguments");
  const char *a = sh_as_cstr(argv[0]), *b = sh_as_cstr(argv[1]);
  if (!a || !b) return NULL;
  if (rename(a, b) < 0) return os_error(a);
  return sh_none();
}
static sh_obj *os_getpid(ARGS) { return sh_int(getpid()); }
static sh_obj *os_getcwd(ARGS) {
  char cwd[PATH_MAX];
  if (!getcwd(cwd, sizeof cwd)) return os_error(NULL);
  return sh_str(cwd);
}
static sh_obj *os_chdir(ARGS) {
  const char *p = path_arg("chdir", argc, argv, 0);
  if (!p) return NULL;
  if (chdir(p) < 0) return os_error(p);
  return sh_none();
}
static sh_obj *os_cpu_count(ARGS) { return sh_int(sysconf(_SC_NPROCESSORS_ONLN)); }

static const sh_method os_funcs[] = {
  {"getenv", os_getenv, "getenv(key, default=None)", "An environment variable."},
  {"makedirs", os_makedirs, "makedirs(name, mode=0o777, exist_ok=False)", "Create a directory and its parents."},
  {"mkdir", os_mkdir, "mkdir(path)", "Create a directory."},
  {"listdir", os_listdir, "listdir(path='.')", "Names in a directory."},
  {"remove", os_remove, "remove(path)", "Delete a file."},
  {"unlink", os_remove, "unlink(path)", "Delete a file."},
  {"rmdir", os_rmdir, "rmdir(path)", "Delete an empty directory."},
  {"rename", os_rename, "rename(src, dst)", "Rename a file."},
  {"getpid", os_getpid, "getpid()", "This process's id."},
  {"getcwd", os_getcwd, "getcwd()", "The current directory."},
  {"chdir", os_chdir, "chdir(path)", "Change the current directory."},
  {"cpu_count", os_cpu_count, "cpu_count()", "Number of online CPUs."},
  {NULL}};

sh_obj *sh_mod_os_path_init(void) {
  sh_obj *m = sh_module_new("os.path");
  sh_module_add_funcs(m, path_funcs);
  sh_module_add(m, "sep", sh_str("/"));
  return m;
}

sh_obj *sh_mod_os_init(void) {
  sh_obj *m = sh_module_new("os");
  sh_module_add_funcs(m, os_funcs);
  sh_obj *env = sh_dict_new();
  for (char **e = environ; *e; e++) {
    const char *eq = strchr(*e, '=');
    if (!eq) continue;
    sh_obj *k = sh_strn(*e, eq - *e), *v = sh_str(eq + 1);
    sh_dict_set(env, k, v);
    sh_decref(k);
    sh_decref(v);
  }
  sh_module_add(m, "environ", env);
  sh_module_add(m, "sep", sh_str("/"));
  sh_module_add(m, "linesep", sh_str("\n"));
  sh_module_add(m, "name", sh_str("posix"));
  sh_obj *path = sh_dict_get_str(sh_modules_dict(), "os.path");
  path = path ? sh_incref(path) : sh_mod_os_path_init();
  sh_dict_set_str(sh_modules_dict(), "os.path", path);
  sh_module_add(m, "path", path);
  return m;
}

/* ---- glob and tempfile ----------------------------------------------------------------- */

static sh_obj *glob_glob(ARGS) {
  sh_obj *pat, *rec = NULL;
  if (sh_parse_args("glob", argc, argv, kw, "pathname |recursive", &pat, &rec) < 0) return NULL;
  const char *p = sh_as_cstr(pat);
  if (!p) return NULL;
  glob_t g;
  sh_obj *out = sh_list_new(0);
  int rc = glob(p, 0, NULL, &g);   /* sorted, as ls shows them */
  if (rc == 0)
    for (size_t i = 0; i < g.gl_pathc; i++) sh_list_append_steal(out, sh_str(g.gl_pathv[i]));
  if (rc != GLOB_NOSPACE) globfree(&g);
  if (rc == GLOB_NOSPACE) { sh_decref(out); return sh_raise(sh_OSError, "glob: out of memory"); }
  return out;
}

static const sh_method glob_funcs[] = {
  {"glob", glob_glob, "glob(pathname)", "The paths matching a shell pattern (* ? [...]), sorted."},
  {NULL}};

sh_obj *sh_mod_glob_init(void) {
  sh_obj *m = sh_module_new("glob");
  sh_module_add_funcs(m, glob_funcs);
  return m;
}

static const char *temp_dir(void) {
  const char *d = getenv("TMPDIR");
  return d && *d ? d : "/tmp";
}

static sh_obj *tf_gettempdir(ARGS) { return sh_str(temp_dir()); }

/* A new directory (mode 0700) named dir/prefix + 8 random characters + suffix. */
static sh_obj *tf_mkdtemp(ARGS) {
  sh_obj *suffix = NULL, *prefix = NULL, *dir = NULL;
  if (sh_parse_args("mkdtemp", argc, argv, kw, "|suffix prefix dir", &suffix, &prefix, &dir) < 0) return NULL;
  const char *sf = suffix && suffix != SH_NONE ? sh_as_cstr(suffix) : "";
  const char *pf = prefix && prefix != SH_NONE ? sh_as_cstr(prefix) : "tmp";
  const char *d = dir && dir != SH_NONE ? sh_as_cstr(dir) : temp_dir();
  if (!sf || !pf || !d) return NULL;
  static const char chars[] = "abcdefghijklmnopqrstuvwxyz0123456789_";
  FILE *ur = fopen("/dev/urandom", "rb");
  for (int tries = 0; tries < 100; tries++) {
    unsigned char r[8] = {0};
    if (!ur || fread(r, 1, sizeof r, ur) != sizeof r)
      for (int i = 0; i < 8; i++) r[i] = (unsigned char)(rand() ^ (getpid() >> i) ^ tries);
    char name[8 + 1];
    for (int i = 0; i < 8; i++) name[i] = chars[r[i] % (sizeof chars - 1)];
    name[8] = '\0';
    sh_obj *path = sh_strf("%s/%s%s%s", d, pf, name, sf);
    if (mkdir(sh_str_cstr(path), 0700) == 0) {
      if (ur) fclose(ur);
      return path;
    }
    int e = errno;
    if (e != EEXIST) {
      if (ur) fclose(ur);
      errno = e;
      sh_decref(path);
      return os_error(d);
    }
    sh_decref(path);
  }
  if (ur) fclose(ur);
  return sh_raise(sh_OSError, "[Errno 17] No usable temporary directory name found in %s", d);
}

static const sh_method tempfile_funcs[] = {
  {"mkdtemp", tf_mkdtemp, "mkdtemp(suffix='', prefix='tmp', dir=None)", "Create a new private directory; its path."},
  {"gettempdir", tf_gettempdir, "gettempdir()", "The directory for temporary files ($TMPDIR or /tmp)."},
  {NULL}};

sh_obj *sh_mod_tempfile_init(void) {
  sh_obj *m = sh_module_new("tempfile");
  sh_module_add_funcs(m, tempfile_funcs);
  return m;
}
