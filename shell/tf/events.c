/* C helpers for shell/tf/saver.py.inc (tf.train.Saver, tf.summary): nodes whose attrs the
 * generic _make_node cannot set (SaveV2 / RestoreV2 take a list(type)), TensorBoard event
 * files, and atomic small-file writes for the `checkpoint` state file.
 *
 * Event file: events.out.tfevents.<unix seconds>.<hostname><suffix>, TFRecord framing
 * (runtime/records.h) around tensorflow.Event messages that saver.py.inc builds and
 * serializes through protobuf-c (shell/tf/pbobj.c); the first is the file_version
 * record ("brain.Event:2"). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "runtime/graph.h"
#include "runtime/records.h"
#include "shell/py/lang.h"
#include "shell/tf/tf.h"

/* ---- event files ------------------------------------------------------------------------ */

#define MAX_WRITERS 64
static FILE *writers[MAX_WRITERS];

static FILE *writer_at(sh_obj *h, int64_t *idx) {
  if (sh_as_int(h, idx) < 0) return NULL;
  if (*idx < 0 || *idx >= MAX_WRITERS || !writers[*idx]) {
    sh_raise(sh_ValueError, "event writer %lld is closed", (long long)*idx);
    return NULL;
  }
  return writers[*idx];
}

/* _events_open(logdir, suffix='') -> (handle, path); saver.py.inc writes the file_version record. */
static sh_obj *f_events_open(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *dir, *suffix = NULL;
  if (sh_parse_args("_events_open", argc, argv, kw, "logdir |filename_suffix", &dir, &suffix) < 0) return NULL;
  const char *d = sh_as_cstr(dir);
  if (!d) return NULL;
  const char *suf = suffix && suffix != SH_NONE ? sh_as_cstr(suffix) : "";
  if (!suf) return NULL;
  int slot = -1;
  for (int i = 0; i < MAX_WRITERS && slot < 0; i++)
    if (!writers[i]) slot = i;
  if (slot < 0) return sh_raise(sh_RuntimeError, "too many open FileWriters (%d)", MAX_WRITERS);
  char host[256] = "localhost";
  gethostname(host, sizeof host - 1);
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  char path[4096];
  /* TF names the file by the time in seconds; two writers in one second get distinct names */
  for (int k = 0;; k++) {
    snprintf(path, sizeof path, "%s/events.out.tfevents.%lld.%s%s", d, (long long)ts.tv_sec, host, suf);
    if (k) snprintf(path + strlen(path), sizeof path - strlen(path), ".%d", k);
    struct stat sb;
    if (stat(path, &sb) < 0) break;
  }
  FILE *f = fopen(path, "wb");
  if (!f) return sh_raise(sh_OSError, "%s: %s", path, strerror(errno));
  writers[slot] = f;
  sh_obj *t = sh_tuple_new(2);
  SH_TUPLE_ITEMS(t)[0] = sh_int(slot);
  SH_TUPLE_ITEMS(t)[1] = sh_str(path);
  return t;
}

/* _events_write(handle, event): append one record, event a serialized tensorflow.Event */
static sh_obj *f_events_write(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *h, *ev;
  if (sh_parse_args("_events_write", argc, argv, kw, "handle event", &h, &ev) < 0) return NULL;
  int64_t idx;
  FILE *f = writer_at(h, &idx);
  if (!f) return NULL;
  const char *p;
  size_t n;
  if (!tf_bytes_of(ev, &p, &n)) return sh_raise(sh_TypeError, "_events_write needs a serialized Event");
  if (rt_record_write(f, p, n) < 0) return sh_raise(sh_OSError, "writing an event: %s", strerror(errno));
  return sh_none();
}

static sh_obj *f_events_flush(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *h;
  if (sh_parse_args("_events_flush", argc, argv, kw, "handle", &h) < 0) return NULL;
  int64_t idx;
  FILE *f = writer_at(h, &idx);
  if (!f) return NULL;
  if (fflush(f) != 0) return sh_raise(sh_OSError, "flushing an event file: %s", strerror(errno));
  return sh_none();
}

static sh_obj *f_events_close(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *h;
  if (sh_parse_args("_events_close", argc, argv, kw, "handle", &h) < 0) return NULL;
  int64_t idx;
  if (sh_as_int(h, &idx) < 0) return NULL;
  if (idx >= 0 && idx < MAX_WRITERS && writers[idx]) {
    fclose(writers[idx]);
    writers[idx] = NULL;
  }
  return sh_none();
}

/* _write_atomic(path, text): temp file, fsync, rename, fsync the directory. */
static sh_obj *f_write_atomic(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *po, *to;
  if (sh_parse_args("_write_atomic", argc, argv, kw, "path text", &po, &to) < 0) return NULL;
  const char *path = sh_as_cstr(po), *text;
  size_t n;
  if (!path) return NULL;
  if (!tf_bytes_of(to, &text, &n)) return sh_raise(sh_TypeError, "_write_atomic needs a str");
  static unsigned counter;
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp%ld_%u", path, (long)getpid(), counter++);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return sh_raise(sh_OSError, "%s: %s", tmp, strerror(errno));
  size_t off = 0;
  while (off < n) {
    ssize_t w = write(fd, text + off, n - off);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) {
      int e = errno;
      close(fd);
      unlink(tmp);
      return sh_raise(sh_OSError, "%s: %s", tmp, strerror(e));
    }
    off += (size_t)w;
  }
  if (fsync(fd) < 0 || close(fd) < 0 || rename(tmp, path) < 0) {
    int e = errno;
    unlink(tmp);
    return sh_raise(sh_OSError, "%s: %s", path, strerror(e));
  }
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (slash && slash != dir) *slash = '\0';
  else if (!slash) strcpy(dir, ".");
  int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    fsync(dfd);
    close(dfd);
  }
  return sh_none();
}

/* _io_node(op, inputs, dtypes, name=None, string_inputs=3, attrs=None, list_attr="dtypes"):
 * SaveV2 / RestoreV2 / Print with their list(type) attr named list_attr, the first
 * string_inputs inputs strings, and more str or int attrs. */
static sh_obj *f_io_node(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *op, *inputs, *dtypes, *name = NULL, *nstr = NULL, *attrs = NULL, *lattr = NULL;
  if (sh_parse_args("_io_node", argc, argv, kw, "op inputs dtypes |name string_inputs attrs list_attr", &op, &inputs,
                    &dtypes, &name, &nstr, &attrs, &lattr) < 0)
    return NULL;
  const char *list_attr = lattr && lattr != SH_NONE ? sh_as_cstr(lattr) : "dtypes";
  if (!list_attr) return NULL;
  int64_t string_inputs = 3;
  if (nstr && nstr != SH_NONE && sh_as_int(nstr, &string_inputs) < 0) return NULL;
  const char *ops = sh_as_cstr(op);
  if (!ops) return NULL;
  sh_obj *dl = sh_sequence_to_tuple(dtypes);
  if (!dl) return NULL;
  int nd = (int)SH_TUPLE_N(dl);
  rt_dtype *types = xcalloc((size_t)nd + 1, sizeof *types);
  for (int i = 0; i < nd; i++) {
    types[i] = np_dtype_of(SH_TUPLE_ITEMS(dl)[i]);
    if (types[i] == RT_INVALID) {
      free(types);
      sh_decref(dl);
      return sh_raise(sh_TypeError, "_io_node: not a dtype: %s", sh_type_name(SH_TUPLE_ITEMS(dl)[i]));
    }
  }
  sh_decref(dl);
  rt_node *n = tf_node_begin(ops, name);
  rt_attr_value v = {.kind = RT_ATTR_LIST_TYPE};
  v.list.n = nd;
  v.list.v = types;
  rt_node_set_attr(n, list_attr, &v);   /* takes ownership of types */
  rt_node_set_int(n, "N", nd);
  sh_obj *k, *val;   /* more attrs: str or int values */
  for (int64_t p = 0; attrs && attrs != SH_NONE && sh_dict_next(attrs, &p, &k, &val);) {
    if (sh_is_str(val)) rt_node_set_string(n, sh_str_cstr(k), sh_str_cstr(val));
    else if (sh_is_int(val)) rt_node_set_int(n, sh_str_cstr(k), sh_int_value(val));
  }
  sh_obj *tup = sh_sequence_to_tuple(inputs);
  if (!tup) {
    rt_node_free(n);
    return NULL;
  }
  for (int64_t i = 0; i < SH_TUPLE_N(tup); i++) {
    sh_obj *x = SH_TUPLE_ITEMS(tup)[i];
    if (tf_node_input(n, x, i < string_inputs ? RT_STRING : RT_INVALID) < 0) {
      sh_decref(tup);
      return NULL;
    }
  }
  sh_decref(tup);
  return tf_node_finish(n);
}

static sh_obj *f_hostname(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  char host[256] = "localhost";
  gethostname(host, sizeof host - 1);
  return sh_str(host);
}

static const sh_method events_funcs[] = {
  {"_events_open", f_events_open, "_events_open(logdir, filename_suffix='')", "Create an event file; (handle, path) (internal)."},
  {"_events_write", f_events_write, "_events_write(handle, event)", "Append one serialized Event record (internal)."},
  {"_events_flush", f_events_flush, "_events_flush(handle)", "Flush an event file (internal)."},
  {"_events_close", f_events_close, "_events_close(handle)", "Close an event file (internal)."},
  {"_write_atomic", f_write_atomic, "_write_atomic(path, text)", "Replace a file atomically (internal)."},
  {"_io_node", f_io_node, "_io_node(op, inputs, dtypes, name=None, string_inputs=3, attrs=None, list_attr='dtypes')", "Build SaveV2 / RestoreV2 / Print (internal)."},
  {"_hostname", f_hostname, "_hostname()", "This host's name (internal)."},
  {NULL},
};

void tf_events_add(sh_obj *tf) {
  sh_module_add_funcs(tf, events_funcs);
  sh_module_add_sub(tf, "summary", sh_module_new("tensorflow.summary"));
}
