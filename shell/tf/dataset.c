/* tf.data for TF1 graphs: the Dataset pipeline (dataset.py.inc) runs in the interpreter,
 * on numpy arrays; an iterator's get_next is an op (_HostIteratorGetNext, ops/dataset.c)
 * whose kernel calls back here, takes the GIL, and asks the Python iterator for its next
 * element. So get_next works in any session of this process, in a training loop until
 * OutOfRangeError, as TF's does. */
#include <stdio.h>
#include <stdlib.h>

#include <string.h>

#include "ops/ops.h"
#include "runtime/op.h"
#include "shell/tf/tf.h"

static sh_obj *iterators;   /* id -> the Python iterator object */
static int64_t last_id;

static sh_obj *lookup(int64_t id) {
  sh_obj *k = sh_int(id);
  sh_obj *it = iterators ? sh_dict_get(iterators, k) : NULL;
  sh_decref(k);
  return it;
}

/* The pending exception as a status (then cleared). */
static int exc_status(rt_status *st) {
  if (sh_err_matches(sh_StopIteration)) {
    sh_err_clear();
    return rt_error(st, RT_OUT_OF_RANGE, "End of sequence");
  }
  sh_obj *e = sh_err_fetch();
  char *m = sh_exc_message(e);
  sh_decref(e);
  int rc = rt_error(st, RT_INVALID_ARGUMENT, "in the tf.data pipeline: %s", m ? m : "error");
  free(m);
  return rc;
}

static int hook_next(int64_t id, int n, rt_tensor **out, rt_status *st) {
  sh_gil_acquire();
  int rc = RT_OK;
  sh_obj *it = lookup(id), *r = NULL;
  if (!it || !(r = sh_call_method(it, "_next_flat", 0, NULL, NULL)) || r == SH_NONE) {
    if (it && !r) rc = exc_status(st);
    else rc = rt_error(st, RT_FAILED_PRECONDITION, "GetNext() failed because the iterator has not been initialized. "
                  "Ensure that you have run the initializer operation for this iterator before getting the next element.");
  } else if (Py_TYPE(r) != (PyTypeObject *)&sh_tuple_type || SH_TUPLE_N(r) != n) {
    rc = rt_error(st, RT_INTERNAL, "tf.data: an element of the wrong structure");
  } else {
    for (int i = 0; i < n && !rc; i++) {
      rt_tensor *t = np_to_tensor(SH_TUPLE_ITEMS(r)[i], RT_INVALID, true);
      if (!t) {
        rc = exc_status(st);
        break;
      }
      rt_tensor_unref(out[i]);
      out[i] = t;
    }
  }
  sh_decref(r);
  sh_gil_release();
  return rc;
}

/* in: the values of the tensors the iterator's dataset captured, passed on to _restart */
static int hook_init(int64_t id, int n, rt_tensor **in, rt_status *st) {
  sh_gil_acquire();
  int rc = RT_OK;
  sh_obj *it = lookup(id), *r = NULL, *vals = sh_tuple_new(n);
  for (int i = 0; i < n; i++) {
    sh_obj *v = np_wrap(rt_tensor_ref(in[i]));
    if (!v && !rc) rc = exc_status(st);
    SH_TUPLE_ITEMS(vals)[i] = v ? v : sh_incref(SH_NONE);
  }
  if (!rc && !it) rc = rt_error(st, RT_NOT_FOUND, "no tf.data iterator %lld", (long long)id);
  else if (!rc && !(r = sh_call_method(it, "_restart", 1, &vals, NULL))) rc = exc_status(st);
  sh_decref(vals);
  sh_decref(r);
  sh_gil_release();
  return rc;
}

/* ---- tf.py_func ------------------------------------------------------------------------ */

static sh_obj *pyfuncs;     /* id -> the Python callable */
static int64_t last_pyfunc;

/* TF's word for a dtype in messages ("float", "double", "int32", ...). */
static const char *tf_type_word(rt_dtype t) {
  return t == RT_FLOAT ? "float" : t == RT_DOUBLE ? "double" : rt_dtype_name(t);
}

/* The function's results as the op's outputs: each converted to its declared type; an
 * ndarray of another dtype is TF's error (a Python number converts). */
static int hook_pyfunc(int64_t id, const char *node, int n_in, rt_tensor **in, int n_out, const rt_dtype *types,
                       rt_tensor **out, rt_status *st) {
  sh_gil_acquire();
  int rc = RT_OK;
  sh_obj *k = sh_int(id), *fn = pyfuncs ? sh_dict_get(pyfuncs, k) : NULL, *args = sh_tuple_new(n_in), *r = NULL;
  sh_decref(k);
  for (int i = 0; i < n_in; i++) {
    sh_obj *v = np_wrap(rt_tensor_ref(in[i]));
    if (!v && !rc) rc = exc_status(st);
    SH_TUPLE_ITEMS(args)[i] = v ? v : sh_incref(SH_NONE);
  }
  if (!rc && !fn) rc = rt_error(st, RT_NOT_FOUND, "no tf.py_func function %lld in this process", (long long)id);
  if (!rc && !(r = sh_call(fn, n_in, SH_TUPLE_ITEMS(args), NULL))) {   /* TF's codes for Python's errors */
    int code = sh_err_matches(sh_ValueError) || sh_err_matches(sh_TypeError) ? RT_INVALID_ARGUMENT
               : sh_err_matches(sh_StopIteration) || sh_err_matches(sh_IndexError) ? RT_OUT_OF_RANGE
               : sh_err_matches(sh_NotImplementedError) ? RT_UNIMPLEMENTED : RT_UNKNOWN;
    sh_obj *e = sh_err_fetch();
    char *m = sh_exc_message(e);
    rc = rt_error(st, code, "%s", m ? m : "error in a tf.py_func");
    sh_decref(e);
    free(m);
  }
  sh_obj *list = NULL;
  if (!rc) {
    bool seq = Py_TYPE(r) == (PyTypeObject *)&sh_list_type || Py_TYPE(r) == (PyTypeObject *)&sh_tuple_type;
    list = seq ? sh_sequence_to_tuple(r) : NULL;
    int64_t got = list ? SH_TUPLE_N(list) : (r == SH_NONE ? 0 : 1);
    if (got != n_out)
      rc = rt_error(st, RT_INVALID_ARGUMENT, "pyfunc_%lld returns %lld values, but expects to see %d values.", (long long)id,
                    (long long)got, n_out);
  }
  for (int i = 0; !rc && i < n_out; i++) {
    sh_obj *v = list ? SH_TUPLE_ITEMS(list)[i] : r;
    rt_dtype want = types ? types[i] : RT_INVALID;
    rt_dtype vt = RT_INVALID;
    if (np_check(v) && !strcmp(Py_TYPE(v)->tp_name, "numpy.ndarray")) {   /* scalars are cast */
      sh_obj *dt = sh_getattr_opt(v, "dtype");
      vt = dt ? np_dtype_of(dt) : RT_INVALID;
      sh_decref(dt);
    }
    if (vt != RT_INVALID && want != RT_INVALID && vt != want) {
      rc = rt_error(st, RT_INVALID_ARGUMENT, "%d-th value returned by pyfunc_%lld is %s, but expects %s", i, (long long)id,
                    tf_type_word(vt), tf_type_word(want));
      break;
    }
    rt_tensor *t = np_to_tensor(v, want, true);
    if (!t) {
      rc = exc_status(st);
      break;
    }
    rt_tensor_unref(out[i]);
    out[i] = t;
  }
  (void)node;
  sh_decref(list);
  sh_decref(r);
  sh_decref(args);
  sh_gil_release();
  return rc;
}

/* _pyfunc_register(fn) -> id (internal) */
static sh_obj *f_pyfunc_register(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *fn;
  if (sh_parse_args("_pyfunc_register", argc, argv, kw, "fn", &fn) < 0) return NULL;
  if (!pyfuncs) pyfuncs = sh_dict_new();
  sh_obj *k = sh_int(last_pyfunc++);   /* pyfunc_0, pyfunc_1, ... as TF numbers them */
  sh_dict_set(pyfuncs, k, fn);
  return k;
}

/* _hostiter_register(iterator) -> id (internal) */
static sh_obj *f_register(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *it;
  if (sh_parse_args("_hostiter_register", argc, argv, kw, "iterator", &it) < 0) return NULL;
  if (!iterators) iterators = sh_dict_new();
  sh_obj *k = sh_int(++last_id);
  sh_dict_set(iterators, k, it);
  return k;
}

static sh_obj *f_owner(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  (void)self, (void)argc, (void)argv, (void)kw;
  return sh_int(rt_process_token());
}

static const sh_method dataset_funcs[] = {
  {"_hostiter_owner", f_owner, "_hostiter_owner()", "This process's token, the owner of its iterators' ops (internal)."},
  {"_pyfunc_register", f_pyfunc_register, "_pyfunc_register(fn)", "Make a Python function callable from PyFunc ops (internal)."},
  {"_hostiter_register", f_register, "_hostiter_register(iterator)", "Make a Python iterator reachable from get_next ops (internal)."},
  {NULL},
};

static const char dataset_src[] =
#include "shell/tf/dataset.py.inc"
    ;
#include "shell/tf/dataset.frozen.h"   /* dataset_frozen[]: generated, CMakeLists.txt */

int tf_dataset_add(sh_obj *tf) {
  op_set_host_iterator(hook_next, hook_init);
  op_set_host_pyfunc(hook_pyfunc);
  sh_module_add_funcs(tf, dataset_funcs);
  return sh_exec_frozen(dataset_frozen, sizeof dataset_frozen, dataset_src, "<tensorflow.data>", sh_module_dict(tf));
}
