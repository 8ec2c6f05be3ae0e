/* sh_exec_frozen (shell/py/interp.c): frozen code runs without its source; where the bytes
 * are not this libpython's code (another magic number, truncated, or compiled under
 * another filename) the source is compiled instead, so the module still loads. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "shell/py/value.h"

/* The frozen form of `src` as scripts/freeze_py.py makes it, built here by the interpreter. */
static unsigned char *freeze(const char *src, const char *filename, size_t *n) {
  sh_obj *g = PyDict_New();
  PyObject *s = PyUnicode_FromString(src), *f = PyUnicode_FromString(filename);
  PyDict_SetItemString(g, "src", s);
  PyDict_SetItemString(g, "fn", f);
  Py_DECREF(s);
  Py_DECREF(f);
  PyObject *r = PyRun_String("import importlib.util, marshal\n"
                             "blob = importlib.util.MAGIC_NUMBER + marshal.dumps(compile(src, fn, 'exec'))\n",
                             Py_file_input, g, g);
  assert_non_null(r);
  Py_DECREF(r);
  PyObject *b = PyDict_GetItemString(g, "blob");
  *n = (size_t)PyBytes_Size(b);
  unsigned char *out = malloc(*n);
  memcpy(out, PyBytes_AsString(b), *n);
  Py_DECREF(g);
  return out;
}

/* Which of the two ran: the frozen code sets x = 1, the source x = 2. */
static long run(const unsigned char *code, size_t n) {
  sh_obj *g = PyDict_New();
  assert_int_equal(sh_exec_frozen(code, n, "x = 2\n", "<frozen test>", g), 0);
  long x = PyLong_AsLong(PyDict_GetItemString(g, "x"));
  Py_DECREF(g);
  return x;
}

static void test_frozen_runs(void **state) {
  size_t n;
  unsigned char *code = freeze("x = 1\n", "<frozen test>", &n);
  assert_int_equal(run(code, n), 1);
  free(code);
}

static void test_falls_back(void **state) {
  size_t n;
  unsigned char *code = freeze("x = 1\n", "<frozen test>", &n);
  assert_int_equal(run(NULL, 0), 2);        /* nothing frozen */
  assert_int_equal(run(code, n - 3), 2);    /* truncated */
  code[0] ^= 1;                             /* another Python's bytecode */
  assert_int_equal(run(code, n), 2);
  free(code);
  code = freeze("x = 1\n", "<another name>", &n);   /* the build's table disagrees */
  assert_int_equal(run(code, n), 2);
  free(code);
}

static void test_errors_name_the_file(void **state) {
  size_t n;
  unsigned char *code = freeze("\n\n1 / 0\n", "<frozen test>", &n);
  sh_obj *g = PyDict_New();
  assert_int_equal(sh_exec_frozen(code, n, "", "<frozen test>", g), -1);
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  assert_true(PyErr_GivenExceptionMatches(type, PyExc_ZeroDivisionError));
  PyCodeObject *co = PyFrame_GetCode(((PyTracebackObject *)tb)->tb_frame);
  assert_string_equal(PyUnicode_AsUTF8(co->co_filename), "<frozen test>");
  assert_int_equal(((PyTracebackObject *)tb)->tb_lineno, 3);
  Py_DECREF(co);
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(tb);
  Py_DECREF(g);
  free(code);
}

int main(void) {
  Py_Initialize();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_frozen_runs),
      cmocka_unit_test(test_falls_back),
      cmocka_unit_test(test_errors_name_the_file),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  Py_FinalizeEx();
  return rc;
}
