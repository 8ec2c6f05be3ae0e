/* The one place that owns the embedded interpreter: its start and end, the GIL, Ctrl-C,
 * errors, running source, the importable built-in modules, and the small object helpers
 * of value.h that are more than one CPython call. */
#define _GNU_SOURCE
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "shell/py/lang.h"
#include <marshal.h>   /* not in Python.h: sh_exec_frozen unmarshals */

void (*sh_screen_hook)(bool idle);
const char *const sh_binop_symbol[SH_BINOP_COUNT] = {"+", "-", "*", "/", "//", "%", "**", "@",
                                                     "<<", ">>", "&", "|", "^"};

/* ---- objects ------------------------------------------------------------------------------ */
/* A printf-style message as a str (bytes that are not UTF-8 replaced). */
static PyObject *vstrf(const char *fmt, va_list ap) {
  char *s = NULL;
  int n = vasprintf(&s, fmt, ap);
  if (n < 0) return PyErr_NoMemory();
  PyObject *r = PyUnicode_DecodeUTF8(s, n, "replace");
  free(s);
  return r;
}

sh_obj *sh_strf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  PyObject *r = vstrf(fmt, ap);
  va_end(ap);
  return r;
}

const char *sh_str_cstr(sh_obj *o) {
  const char *s = PyUnicode_AsUTF8(o);
  if (!s) { PyErr_Clear(); return ""; }
  return s;
}

int64_t sh_int_value(sh_obj *o) {
  long long v = PyLong_Check(o) ? PyLong_AsLongLong(o) : 0;
  if (!PyLong_Check(o)) {
    PyObject *i = PyNumber_Index(o);
    v = i ? PyLong_AsLongLong(i) : -1;
    Py_XDECREF(i);
  }
  if (v == -1 && PyErr_Occurred()) PyErr_Clear();
  return v;
}

int sh_as_int(sh_obj *o, int64_t *out) {
  if (PyFloat_Check(o) || !PyIndex_Check(o)) {
    PyErr_Format(PyExc_TypeError, "an integer is required (got type %s)", Py_TYPE(o)->tp_name);
    return -1;
  }
  PyObject *i = PyNumber_Index(o);
  if (!i) return -1;
  long long v = PyLong_AsLongLong(i);
  Py_DECREF(i);
  if (v == -1 && PyErr_Occurred()) return -1;
  *out = v;
  return 0;
}

int sh_as_double(sh_obj *o, double *out) {
  double v = PyFloat_AsDouble(o);
  if (v == -1.0 && PyErr_Occurred()) return -1;
  *out = v;
  return 0;
}

const char *sh_as_cstr(sh_obj *o) {
  if (!PyUnicode_Check(o)) {
    PyErr_Format(PyExc_TypeError, "expected str, got %s", Py_TYPE(o)->tp_name);
    return NULL;
  }
  return PyUnicode_AsUTF8(o);
}

sh_obj *sh_as_number(sh_obj *o) {
  if (PyLong_CheckExact(o) || PyFloat_CheckExact(o)) return Py_NewRef(o);
  if (PyBool_Check(o)) return PyLong_FromLong(o == Py_True);
  if (PyLong_Check(o)) return PyNumber_Long(o);
  if (PyFloat_Check(o)) return PyFloat_FromDouble(PyFloat_AS_DOUBLE(o));
  PyObject *r = NULL;
  if (PyIndex_Check(o)) r = PyNumber_Index(o);
  else if (Py_TYPE(o)->tp_as_number && Py_TYPE(o)->tp_as_number->nb_float) r = PyNumber_Float(o);
  if (!r) PyErr_Clear();
  return r;
}

sh_obj *sh_list_new(int64_t n) {
  PyObject *l = PyList_New(n);
  for (int64_t i = 0; l && i < n; i++) PyList_SET_ITEM(l, i, Py_NewRef(Py_None));
  return l;
}

int sh_list_append_steal(sh_obj *l, sh_obj *item) {
  if (!item) return -1;
  int r = PyList_Append(l, item);
  Py_DECREF(item);
  return r;
}

sh_obj *sh_tuple_of(int n, ...) {
  va_list ap;
  va_start(ap, n);
  PyObject *t = PyTuple_New(n);
  bool bad = !t;
  for (int i = 0; i < n; i++) {
    PyObject *x = va_arg(ap, PyObject *);
    if (!x) bad = true;
    if (t) PyTuple_SET_ITEM(t, i, x ? x : Py_NewRef(Py_None));
    else Py_XDECREF(x);
  }
  va_end(ap);
  if (bad) {
    Py_XDECREF(t);
    if (!PyErr_Occurred()) PyErr_NoMemory();
    return NULL;
  }
  return t;
}

sh_obj *sh_dict_get_str(sh_obj *d, const char *key) {
  PyObject *k = PyUnicode_FromString(key);
  if (!k) return NULL;
  PyObject *v = PyDict_GetItemWithError(d, k);
  Py_DECREF(k);
  return v;
}

int sh_dict_del(sh_obj *d, sh_obj *key) {
  PyObject *v = PyDict_GetItemWithError(d, key);
  if (!v) return PyErr_Occurred() ? -1 : 0;
  return PyDict_DelItem(d, key) < 0 ? -1 : 1;
}

int sh_slice_indices(sh_obj *slice, int64_t len, int64_t *start, int64_t *stop, int64_t *step, int64_t *count) {
  Py_ssize_t a, b, c;
  if (PySlice_Unpack(slice, &a, &b, &c) < 0) return -1;
  *count = PySlice_AdjustIndices(len, &a, &b, c);
  *start = a, *stop = b, *step = c;
  return (int)*count;
}

sh_obj *sh_getattr_opt(sh_obj *o, const char *name) {
  PyObject *r = PyObject_GetAttrString(o, name);
  if (!r) PyErr_Clear();
  return r;
}

sh_obj *sh_call_method(sh_obj *o, const char *name, int argc, sh_obj **argv, sh_obj *kw) {
  PyObject *f = PyObject_GetAttrString(o, name);
  if (!f) return NULL;
  PyObject *r = PyObject_VectorcallDict(f, argv, (size_t)argc, kw);
  Py_DECREF(f);
  return r;
}

sh_obj *sh_binop(int op, sh_obj *a, sh_obj *b) {
  switch (op) {
  case SH_ADD: return PyNumber_Add(a, b);
  case SH_SUB: return PyNumber_Subtract(a, b);
  case SH_MUL: return PyNumber_Multiply(a, b);
  case SH_TRUEDIV: return PyNumber_TrueDivide(a, b);
  case SH_FLOORDIV: return PyNumber_FloorDivide(a, b);
  case SH_MOD: return PyNumber_Remainder(a, b);
  case SH_POW: return PyNumber_Power(a, b, Py_None);
  case SH_MATMUL: return PyNumber_MatrixMultiply(a, b);
  case SH_LSHIFT: return PyNumber_Lshift(a, b);
  case SH_RSHIFT: return PyNumber_Rshift(a, b);
  case SH_BITAND: return PyNumber_And(a, b);
  case SH_BITOR: return PyNumber_Or(a, b);
  default: return PyNumber_Xor(a, b);
  }
}

sh_obj *sh_unop(int op, sh_obj *a) {
  return op == SH_NEG ? PyNumber_Negative(a) : op == SH_POS ? PyNumber_Positive(a) : PyNumber_Invert(a);
}

void sh_format_double_repr(double v, char *buf, size_t size) {
  char *s = PyOS_double_to_string(v, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
  snprintf(buf, size, "%s", s ? s : "nan");
  PyMem_Free(s);
}

/* ---- errors -------------------------------------------------------------------------------- */
sh_obj *sh_raise(sh_type *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  PyObject *msg = vstrf(fmt, ap);
  va_end(ap);
  if (msg) {
    PyErr_SetObject((PyObject *)t, msg);
    Py_DECREF(msg);
  }
  return NULL;
}

sh_obj *sh_err_fetch(void) {
  PyObject *t, *v, *tb;
  PyErr_Fetch(&t, &v, &tb);
  if (!t) return NULL;
  PyErr_NormalizeException(&t, &v, &tb);
  if (tb && v) PyException_SetTraceback(v, tb);
  Py_XDECREF(t);
  Py_XDECREF(tb);
  return v;
}

sh_obj *sh_err_get(void) {
  PyObject *v = sh_err_fetch();
  if (!v) return NULL;
  sh_err_restore(Py_NewRef(v));
  Py_DECREF(v);   /* the thread state holds it now */
  return v;
}

void sh_err_restore(sh_obj *exc) {
  if (!exc) return;
  PyErr_Restore(Py_NewRef((PyObject *)Py_TYPE(exc)), exc, PyException_GetTraceback(exc));
}

char *sh_exc_message(sh_obj *exc) {
  PyObject *s = PyObject_Str(exc);
  const char *m = s ? PyUnicode_AsUTF8(s) : NULL;
  if (!m) PyErr_Clear();
  char *r = NULL;
  if (m && *m) r = xasprintf("%s: %s", _PyType_Name(Py_TYPE(exc)), m);
  else r = xstrdup(_PyType_Name(Py_TYPE(exc)));
  Py_XDECREF(s);
  return r;
}

/* ---- Ctrl-C and the GIL -------------------------------------------------------------------- */
static pthread_t main_thread;   /* sh_init's: where CPython runs signal handlers */

const volatile int *sh_interrupt_flag(void) {
  return pthread_equal(pthread_self(), main_thread) ? (const volatile int *)&sh_interrupted : NULL;
}

int sh_check_interrupt(void) {
  if (!sh_interrupted) return 0;
  sh_interrupted = 0;
  if (PyErr_CheckSignals() < 0) return -1;
  PyErr_SetNone(PyExc_KeyboardInterrupt);
  return -1;
}

/* Per thread: the state a release saved, and how many acquires found the GIL already
 * held (their releases do nothing). A runtime thread's first acquire makes it a thread
 * state (PyGILState_Ensure) that its releases then keep in `saved` for the next time:
 * calls alternate, so the GIL is held exactly between an acquire and its release. */
static _Thread_local PyThreadState *saved;
static _Thread_local int held_already;

void sh_gil_release(void) {
  if (held_already > 0) held_already--;
  else saved = PyEval_SaveThread();
}

void sh_gil_acquire(void) {
  if (saved) {
    PyThreadState *s = saved;
    saved = NULL;
    PyEval_RestoreThread(s);
  } else if (PyGILState_Check()) {
    held_already++;
  } else {
    PyGILState_Ensure();
  }
}

/* ---- built-in modules ------------------------------------------------------------------------ */
typedef struct { const char *name; sh_module_init init; } reg_module;
static reg_module *registered;
static int n_registered;

void sh_register_module(const char *dotted_name, sh_module_init init) {
  registered = xrealloc(registered, (size_t)(n_registered + 1) * sizeof *registered);
  registered[n_registered++] = (reg_module){dotted_name, init};
}

static sh_module_init find_registered(const char *name) {
  for (int i = 0; i < n_registered; i++)
    if (!strcmp(registered[i].name, name)) return registered[i].init;
  return NULL;
}

/* _tfsh_modules._find(name): is it ours (registered, or an attribute of a loaded parent
 * of ours)? _load(name): the module object. The finder on sys.meta_path (boot_src)
 * calls them. */
static bool ours(const char *name) {
  if (find_registered(name)) return true;
  const char *dot = strrchr(name, '.');
  if (!dot) return false;
  char parent[256];
  snprintf(parent, sizeof parent, "%.*s", (int)(dot - name), name);
  if (!ours(parent)) return false;
  PyObject *p = PyImport_ImportModule(parent);
  if (!p) { PyErr_Clear(); return false; }
  PyObject *a = PyObject_GetAttrString(p, dot + 1);
  Py_DECREF(p);
  if (!a) { PyErr_Clear(); return false; }
  Py_DECREF(a);
  return true;
}

static PyObject *m_find(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  const char *n = argc == 1 ? sh_as_cstr(argv[0]) : NULL;
  if (!n) return NULL;
  return PyBool_FromLong(ours(n));
}

/* A module of ours is a package (its submodules are ours too): give it a __path__. */
static PyObject *as_package(PyObject *m) {
  if (m && PyModule_Check(m) && !PyObject_HasAttrString(m, "__path__")) {
    PyObject *l = PyList_New(0);
    if (!l || PyObject_SetAttrString(m, "__path__", l) < 0) PyErr_Clear();
    Py_XDECREF(l);
  }
  return m;
}

static PyObject *m_load(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  const char *n = argc == 1 ? sh_as_cstr(argv[0]) : NULL;
  if (!n) return NULL;
  sh_module_init init = find_registered(n);
  if (init) return as_package(init());
  const char *dot = strrchr(n, '.');
  char parent[256];
  snprintf(parent, sizeof parent, "%.*s", dot ? (int)(dot - n) : 0, n);
  PyObject *p = PyImport_ImportModule(parent);
  if (!p) return NULL;
  PyObject *a = PyObject_GetAttrString(p, dot + 1);
  Py_DECREF(p);
  return as_package(a);
}

static PyObject *m_screen(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_screen_clear(false);
  Py_RETURN_NONE;
}

/* While the views keep lines at the bottom of a terminal, Python's writes to stdout and
 * stderr clear them first (the views redraw them below). */
static const char screen_src[] =
    "import sys\n"
    "class _ScreenWriter:\n"
    "    def __init__(self, f):\n"
    "        self._f = f\n"
    "    def write(self, s):\n"
    "        _tfsh_modules._screen()\n"
    "        return self._f.write(s)\n"
    "    def __getattr__(self, name):\n"
    "        return getattr(self._f, name)\n"
    "sys.stdout = _ScreenWriter(sys.stdout)\n"
    "sys.stderr = _ScreenWriter(sys.stderr)\n";

static const char boot_src[] =
    "import sys, importlib.machinery as _m\n"
    "class _TfshFinder:\n"
    "    @classmethod\n"
    "    def find_spec(cls, name, path=None, target=None):\n"
    "        return _m.ModuleSpec(name, cls) if _tfsh_modules._find(name) else None\n"
    "    @staticmethod\n"
    "    def create_module(spec):\n"
    "        return _tfsh_modules._load(spec.name)\n"
    "    @staticmethod\n"
    "    def exec_module(module):\n"
    "        pass\n"
    "sys.meta_path.insert(0, _TfshFinder)\n";

sh_obj *sh_import(const char *dotted_name) { return PyImport_ImportModule(dotted_name); }
sh_obj *sh_modules_dict(void) { return PySys_GetObject("modules"); }

/* ---- source ---------------------------------------------------------------------------------- */
sh_obj *sh_main_globals(void) { return PyModule_GetDict(PyImport_AddModule("__main__")); }
sh_obj *sh_builtins_dict(void) { return PyEval_GetBuiltins(); }

static int run_code(PyObject *code, PyObject *globals) {
  if (!code) return -1;
  if (!PyDict_GetItemString(globals, "__builtins__") && PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins()) < 0) {
    Py_DECREF(code);
    return -1;
  }
  PyObject *r = PyEval_EvalCode(code, globals, globals);
  Py_DECREF(code);
  if (!r) return -1;
  Py_DECREF(r);
  return 0;
}

int sh_exec_string(const char *src, const char *filename, sh_obj *globals) {
  return run_code(Py_CompileString(src, filename, Py_file_input), globals ? globals : sh_main_globals());
}

/* The frozen code, where it is this libpython's bytecode and names itself as the caller
 * does; NULL (no exception) where it must be compiled from the source instead. */
static PyObject *frozen_code(const unsigned char *code, size_t n, const char *filename) {
  if (!code || n <= 4) return NULL;
  unsigned long magic = code[0] | code[1] << 8 | (unsigned long)code[2] << 16 | (unsigned long)code[3] << 24;
  if (magic != (unsigned long)PyImport_GetMagicNumber()) return NULL;   /* another libpython */
  PyObject *co = PyMarshal_ReadObjectFromString((const char *)code + 4, (Py_ssize_t)(n - 4));
  if (!co || !PyCode_Check(co)) {
    PyErr_Clear();
    Py_XDECREF(co);
    return NULL;
  }
  PyObject *name = ((PyCodeObject *)co)->co_filename;
  if (!PyUnicode_Check(name) || PyUnicode_CompareWithASCIIString(name, filename) != 0) {
    /* the build's table (CMakeLists.txt, TFSH_FROZEN_PY) disagrees with the call site */
    fprintf(stderr, "tfsh: the frozen code for %s was compiled as %s: compiling its source\n", filename,
            PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : "?");
    PyErr_Clear();
    Py_DECREF(co);
    return NULL;
  }
  return co;
}

int sh_exec_frozen(const unsigned char *code, size_t n, const char *src, const char *filename, sh_obj *globals) {
  PyObject *co = frozen_code(code, n, filename);
  if (!co) co = Py_CompileString(src, filename, Py_file_input);
  return run_code(co, globals ? globals : sh_main_globals());
}

sh_obj *sh_eval_string(const char *src, const char *filename, sh_obj *globals) {
  PyObject *g = globals ? globals : sh_main_globals();
  PyObject *code = Py_CompileString(src, filename, Py_eval_input);
  if (!code) return NULL;
  if (!PyDict_GetItemString(g, "__builtins__")) PyDict_SetItemString(g, "__builtins__", PyEval_GetBuiltins());
  PyObject *r = PyEval_EvalCode(code, g, g);
  Py_DECREF(code);
  return r;
}

sh_obj *sh_compile(const char *src, const char *filename) { return Py_CompileString(src, filename, Py_file_input); }

int sh_run_code(sh_obj *code, sh_obj *globals) { return run_code(Py_NewRef(code), globals); }

int sh_exec_interactive(const char *src) {
  return run_code(Py_CompileString(src, "<stdin>", Py_single_input), sh_main_globals());
}

bool sh_source_incomplete(const char *src) {
  static PyObject *compile_command;
  if (!compile_command) {
    PyObject *m = PyImport_ImportModule("codeop");
    compile_command = m ? PyObject_GetAttrString(m, "compile_command") : NULL;
    Py_XDECREF(m);
    if (!compile_command) { PyErr_Clear(); return false; }
  }
  PyObject *r = PyObject_CallFunction(compile_command, "sss", src, "<stdin>", "single");
  if (!r) { PyErr_Clear(); return false; }   /* a real syntax error: run it, and report it */
  bool incomplete = r == Py_None;
  Py_DECREF(r);
  return incomplete;
}

int sh_exec_file(const char *path, sh_obj *globals) {
  FILE *f = fopen(path, "rb");
  if (!f) { PyErr_SetFromErrnoWithFilename(PyExc_OSError, path); return -1; }
  sh_buf b = {0};
  char chunk[65536];
  for (size_t n; (n = fread(chunk, 1, sizeof chunk, f)) > 0;) sh_buf_put(&b, chunk, n);
  fclose(f);
  /* __file__ and tracebacks name the script by its absolute path, as python3 does */
  char cwd[PATH_MAX], *abs = NULL;
  if (path[0] != '/' && getcwd(cwd, sizeof cwd)) abs = xasprintf("%s/%s", cwd, path[0] == '.' && path[1] == '/' ? path + 2 : path);
  PyObject *g = globals ? globals : sh_main_globals();
  PyObject *file = PyUnicode_DecodeFSDefault(abs ? abs : path);
  if (file) PyDict_SetItemString(g, "__file__", file);
  Py_XDECREF(file);
  int rc = sh_exec_string(b.data ? b.data : "", abs ? abs : path, g);
  free(abs);
  sh_buf_free(&b);
  return rc;
}

int sh_report_error(void) {
  sh_screen_clear(true);
  if (PyErr_ExceptionMatches(PyExc_SystemExit)) {
    PyObject *v = sh_err_fetch();
    PyObject *code = v ? PyObject_GetAttrString(v, "code") : NULL;
    int rc = 0;
    if (code && code != Py_None) {
      if (PyLong_Check(code)) rc = (int)PyLong_AsLong(code);
      else {
        PyObject_Print(code, stderr, Py_PRINT_RAW);
        fputc('\n', stderr);
        rc = 1;
      }
    }
    PyErr_Clear();
    Py_XDECREF(code);
    Py_XDECREF(v);
    return rc;
  }
  PyErr_Print();
  fflush(stderr);
  return 1;
}

void sh_sys_set_argv(int argc, char **argv) {
  PyObject *l = PyList_New(argc);
  for (int i = 0; l && i < argc; i++) PyList_SET_ITEM(l, i, PyUnicode_DecodeFSDefault(argv[i]));
  if (l) PySys_SetObject("argv", l);
  Py_XDECREF(l);
}

/* ---- help ------------------------------------------------------------------------------------ */
char *sh_describe(sh_obj *o) {
  PyObject *doc = PyObject_GetAttrString(o, "__doc__");
  if (!doc) PyErr_Clear();
  const char *d = doc && PyUnicode_Check(doc) ? PyUnicode_AsUTF8(doc) : NULL;
  PyObject *r = PyObject_Repr(o);
  const char *rs = r ? PyUnicode_AsUTF8(r) : "?";
  if (!r) PyErr_Clear();
  char *s = d ? xasprintf("%s\n%s", rs, d) : xstrdup(rs);
  Py_XDECREF(r);
  Py_XDECREF(doc);
  return s;
}

/* ---- buffers --------------------------------------------------------------------------------- */
void sh_buf_put(sh_buf *b, const char *s, size_t n) {
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 64;
    while (cap < b->len + n + 1) cap *= 2;
    b->data = xrealloc(b->data, cap);
    b->cap = cap;
  }
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = 0;
}
void sh_buf_puts(sh_buf *b, const char *s) { sh_buf_put(b, s, strlen(s)); }
void sh_buf_putc(sh_buf *b, char c) { sh_buf_put(b, &c, 1); }
void sh_buf_printf(sh_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = NULL;
  int n = vasprintf(&s, fmt, ap);
  va_end(ap);
  if (n > 0) sh_buf_put(b, s, (size_t)n);
  free(s);
}
int sh_buf_put_obj(sh_buf *b, sh_obj *o, bool use_repr) {
  PyObject *s = use_repr ? PyObject_Repr(o) : PyObject_Str(o);
  if (!s) return -1;
  Py_ssize_t n;
  const char *u = PyUnicode_AsUTF8AndSize(s, &n);
  if (u) sh_buf_put(b, u, (size_t)n);
  Py_DECREF(s);
  return u ? 0 : -1;
}
sh_obj *sh_buf_finish(sh_buf *b) {
  PyObject *s = PyUnicode_DecodeUTF8(b->data ? b->data : "", (Py_ssize_t)b->len, "replace");
  free(b->data);
  *b = (sh_buf){0};
  return s;
}
void sh_buf_free(sh_buf *b) { free(b->data); *b = (sh_buf){0}; }

/* ---- start and end ----------------------------------------------------------------------------- */
static void (*fini_fns[8])(void);
static int n_fini;
void sh_at_fini(void (*fn)(void)) {
  if (n_fini < 8) fini_fns[n_fini++] = fn;
}

int sh_builtin_ready(void);

void sh_init(int argc, char **argv) {
  main_thread = pthread_self();
  PyConfig c;
  PyConfig_InitPythonConfig(&c);
  c.parse_argv = 0;
  c.install_signal_handlers = 1;
  /* print() reaches the terminal or pipe at once, in order with what the runtime and the
   * views write through C's stdio (line-buffered below): a killed run keeps its output. */
  c.buffered_stdio = 0;
  PyConfig_SetBytesArgv(&c, argc, argv);
  /* sys.executable is tfsh: a script that starts [sys.executable, "-c", ...] starts tfsh */
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = '\0';
    PyConfig_SetBytesString(&c, &c.executable, exe);
  }
  PyStatus st = Py_InitializeFromConfig(&c);
  PyConfig_Clear(&c);
  if (PyStatus_Exception(st)) Py_ExitStatusException(st);
  setvbuf(stdout, NULL, _IOLBF, 0);
  /* sys.path[0]: the script's directory, '' for -c, stdin and the shell (as python3). */
  PyObject *path = PySys_GetObject("path");
  char dir[PATH_MAX] = "";
  if (argc > 0 && argv[0][0] && strcmp(argv[0], "-") && strcmp(argv[0], "-c") && realpath(argv[0], dir)) dirname(dir);
  PyObject *d = PyUnicode_DecodeFSDefault(dir);
  if (path && d) PyList_Insert(path, 0, d);
  Py_XDECREF(d);
  if (sh_builtin_ready() < 0) { PyErr_Print(); return; }
  PyObject *m = PyModule_New("_tfsh_modules");
  static const sh_method fns[] = {{"_find", m_find, NULL, NULL}, {"_load", m_load, NULL, NULL},
                                  {"_screen", m_screen, NULL, NULL}, {NULL}};
  sh_module_add_funcs(m, fns);
  PyDict_SetItemString(PySys_GetObject("modules"), "_tfsh_modules", m);
  PyObject *g = PyDict_New();
  PyDict_SetItemString(g, "_tfsh_modules", m);
  Py_DECREF(m);
  if (sh_exec_string(boot_src, "<tfsh boot>", g) < 0) PyErr_Print();
  sh_modules_init_extra();
  if ((isatty(STDOUT_FILENO) || isatty(STDERR_FILENO)) && sh_exec_string(screen_src, "<tfsh screen>", g) < 0) PyErr_Print();
  Py_DECREF(g);
}

void sh_fini(void) {
  if (!Py_IsInitialized()) return;
  while (n_fini > 0) fini_fns[--n_fini]();
  fflush(stdout);
  Py_FinalizeEx();
}
