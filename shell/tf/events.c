/* C helpers for shell/tf/saver.py.inc (tf.train.Saver, tf.summary): nodes whose attrs the
 * generic _make_node cannot set (SaveV2 / RestoreV2 take a list(type)), TensorBoard event
 * files (TFRecord framing around hand-encoded tensorflow.Event protobufs), a GraphDef for
 * FileWriter.add_graph, and atomic small-file writes for the `checkpoint` state file.
 *
 * Event file: events.out.tfevents.<unix seconds>.<hostname><suffix>. Each record is
 *   u64 length | u32 masked_crc32c(length) | data | u32 masked_crc32c(data)
 * (little-endian; masked(c) = ((c >> 15) | (c << 17)) + 0xa282ead8), data an Event:
 *   wall_time 1 double, step 2 int64, file_version 3 string ("brain.Event:2", first record),
 *   graph_def 4 bytes, summary 5 Summary, session_log 7 SessionLog { status 1 enum }. */
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
#include "shell/lang/lang.h"
#include "shell/tf/tf.h"

/* ---- CRC32C (a copy of ops/io.c's: shell/ does not include ops/ internals) ------------ */

static uint32_t crc_table[256];

static uint32_t crc32c(const void *data, size_t n) {
  if (!crc_table[1])
    for (uint32_t i = 0; i < 256; i++) {
      uint32_t c = i;
      for (int k = 0; k < 8; k++) c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
      crc_table[i] = c;
    }
  const unsigned char *p = data;
  uint32_t c = 0xffffffffu;
  while (n--) c = crc_table[(c ^ *p++) & 0xff] ^ (c >> 8);
  return ~c;
}

static uint32_t masked_crc(const void *data, size_t n) {
  uint32_t c = crc32c(data, n);
  return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

/* ---- protobuf writing ------------------------------------------------------------------ */

typedef struct pbuf {
  unsigned char *p;
  size_t n, cap;
} pbuf;

static void pb_put(pbuf *b, const void *d, size_t n) {
  if (b->n + n > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + n) cap *= 2;
    b->p = xrealloc(b->p, cap);
    b->cap = cap;
  }
  memcpy(b->p + b->n, d, n);
  b->n += n;
}
static void pb_varint(pbuf *b, uint64_t v) {
  unsigned char c[10];
  int k = 0;
  while (v >= 0x80) c[k++] = (unsigned char)((v & 0x7f) | 0x80), v >>= 7;
  c[k++] = (unsigned char)v;
  pb_put(b, c, (size_t)k);
}
static void pb_le(pbuf *b, uint64_t v, int bytes) {
  unsigned char c[8];
  for (int i = 0; i < bytes; i++) c[i] = (unsigned char)(v >> (8 * i));
  pb_put(b, c, (size_t)bytes);
}
static void pb_bytes(pbuf *b, int field, const void *d, size_t n) {
  pb_varint(b, (uint64_t)field << 3 | 2);
  pb_varint(b, n);
  pb_put(b, d, n);
}
static void pb_str(pbuf *b, int field, const char *s) { pb_bytes(b, field, s, strlen(s)); }
static void pb_double(pbuf *b, int field, double v) {
  uint64_t u;
  memcpy(&u, &v, 8);
  pb_varint(b, (uint64_t)field << 3 | 1);
  pb_le(b, u, 8);
}
static void pb_float(pbuf *b, int field, float v) {
  uint32_t u;
  memcpy(&u, &v, 4);
  pb_varint(b, (uint64_t)field << 3 | 5);
  pb_le(b, u, 4);
}
static void pb_int(pbuf *b, int field, int64_t v) {
  pb_varint(b, (uint64_t)field << 3);
  pb_varint(b, (uint64_t)v);
}

/* ---- event files ------------------------------------------------------------------------ */

#define MAX_WRITERS 64
static FILE *writers[MAX_WRITERS];

static int write_record(FILE *f, const pbuf *data) {
  unsigned char hdr[12];
  uint64_t len = data->n;
  for (int i = 0; i < 8; i++) hdr[i] = (unsigned char)(len >> (8 * i));
  uint32_t lc = masked_crc(hdr, 8);
  for (int i = 0; i < 4; i++) hdr[8 + i] = (unsigned char)(lc >> (8 * i));
  uint32_t dc = masked_crc(data->p, data->n);
  unsigned char tail[4];
  for (int i = 0; i < 4; i++) tail[i] = (unsigned char)(dc >> (8 * i));
  if (fwrite(hdr, 1, 12, f) != 12 || fwrite(data->p, 1, data->n, f) != data->n || fwrite(tail, 1, 4, f) != 4)
    return -1;
  return 0;
}

static FILE *writer_at(sh_obj *h, int64_t *idx) {
  if (sh_as_int(h, idx) < 0) return NULL;
  if (*idx < 0 || *idx >= MAX_WRITERS || !writers[*idx]) {
    sh_raise(sh_ValueError, "event writer %lld is closed", (long long)*idx);
    return NULL;
  }
  return writers[*idx];
}

/* _events_open(logdir, suffix='') -> (handle, path); writes the file_version record. */
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
  double now = (double)ts.tv_sec + ts.tv_nsec / 1e9;
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
  pbuf ev = {0};
  pb_double(&ev, 1, now);
  pb_str(&ev, 3, "brain.Event:2");
  int rc = write_record(f, &ev);
  free(ev.p);
  if (rc < 0 || fflush(f) != 0) {
    fclose(f);
    return sh_raise(sh_OSError, "%s: %s", path, strerror(errno));
  }
  writers[slot] = f;
  sh_obj *t = sh_tuple_new(2);
  SH_TUPLE_ITEMS(t)[0] = sh_int(slot);
  SH_TUPLE_ITEMS(t)[1] = sh_str(path);
  return t;
}

static bool bytes_of(sh_obj *o, const char **p, size_t *n) {
  if (!o || o == SH_NONE) return false;
  if (sh_is_str(o)) {
    *p = ((sh_str_obj *)o)->s;
    *n = (size_t)((sh_str_obj *)o)->len;
    return true;
  }
  if (sh_is_bytes(o)) {
    *p = sh_bytes_data(o);
    *n = (size_t)sh_bytes_len(o);
    return true;
  }
  if (np_check(o) && ((np_array *)o)->t->dtype == RT_STRING && rt_tensor_numel(((np_array *)o)->t) == 1) {
    const rt_str *s = rt_tensor_data(((np_array *)o)->t);
    *p = s->ptr ? s->ptr : "";
    *n = s->len;
    return true;
  }
  return false;
}

/* _events_write(handle, wall_time, step, summary=None, graph_def=None, session_log=None) */
static sh_obj *f_events_write(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *h, *wall, *step, *summary = NULL, *graph = NULL, *slog = NULL;
  if (sh_parse_args("_events_write", argc, argv, kw, "handle wall_time step |summary graph_def session_log", &h,
                    &wall, &step, &summary, &graph, &slog) < 0)
    return NULL;
  int64_t idx, st = 0;
  FILE *f = writer_at(h, &idx);
  if (!f) return NULL;
  double w;
  if (sh_as_double(wall, &w) < 0) return NULL;
  if (step != SH_NONE && sh_as_int(step, &st) < 0) return NULL;
  pbuf ev = {0};
  pb_double(&ev, 1, w);
  if (st) pb_int(&ev, 2, st);   /* proto3: a zero step is not written */
  const char *p;
  size_t n;
  if (bytes_of(graph, &p, &n)) pb_bytes(&ev, 4, p, n);
  if (bytes_of(summary, &p, &n)) pb_bytes(&ev, 5, p, n);
  if (slog && slog != SH_NONE) {
    int64_t status;
    if (sh_as_int(slog, &status) < 0) {
      free(ev.p);
      return NULL;
    }
    pbuf sl = {0};
    if (status) pb_int(&sl, 1, status);
    pb_bytes(&ev, 7, sl.p ? (void *)sl.p : (void *)"", sl.n);
    free(sl.p);
  }
  int rc = write_record(f, &ev);
  free(ev.p);
  if (rc < 0) return sh_raise(sh_OSError, "writing an event: %s", strerror(errno));
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

/* _summary_encode([(tag, simple_value), ...]) -> serialized Summary (for tf.Summary). */
static sh_obj *f_summary_encode(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *items;
  if (sh_parse_args("_summary_encode", argc, argv, kw, "values", &items) < 0) return NULL;
  sh_obj *it = sh_iter(items);
  if (!it) return NULL;
  pbuf out = {0};
  for (sh_obj *x; (x = sh_next(it));) {
    sh_obj *tup = sh_sequence_to_tuple(x);
    sh_decref(x);
    double v;
    const char *tag;
    if (!tup || SH_TUPLE_N(tup) != 2 || !(tag = sh_as_cstr(SH_TUPLE_ITEMS(tup)[0])) ||
        sh_as_double(SH_TUPLE_ITEMS(tup)[1], &v) < 0) {
      sh_decref(tup);
      sh_decref(it);
      free(out.p);
      return sh_raise(sh_TypeError, "_summary_encode needs (tag, simple_value) pairs");
    }
    pbuf val = {0};
    pb_str(&val, 1, tag);
    pb_float(&val, 2, (float)v);
    pb_bytes(&out, 1, val.p, val.n);
    free(val.p);
    sh_decref(tup);
  }
  sh_decref(it);
  sh_obj *r = sh_strn(out.p ? (const char *)out.p : "", out.n);
  free(out.p);
  return r;
}

/* _graph_def() -> a serialized GraphDef of the default graph: NodeDef name 1, op 2,
 * input 3, device 4; versions { producer } 4. Attrs are left out (TensorBoard draws the
 * structure and devices without them). */
static sh_obj *f_graph_def(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  if (sh_parse_args("_graph_def", argc, argv, kw, "") < 0) return NULL;
  rt_graph *g = tf_rt(tf_default_graph());
  pbuf out = {0};
  for (int i = 0; i < g->n_nodes; i++) {
    const rt_node *n = g->nodes[i];
    pbuf nd = {0};
    pb_str(&nd, 1, n->name);
    pb_str(&nd, 2, n->op);
    for (int k = 0; k < n->n_inputs; k++) pb_str(&nd, 3, n->inputs[k]);
    const char *dev = n->assigned ? n->assigned : n->device;
    if (dev && dev[0]) pb_str(&nd, 4, dev);
    pb_bytes(&out, 1, nd.p, nd.n);
    free(nd.p);
  }
  pbuf ver = {0};
  pb_int(&ver, 1, 134);   /* TF 1.15's GraphDef producer version */
  pb_bytes(&out, 4, ver.p, ver.n);
  free(ver.p);
  sh_obj *r = sh_strn((const char *)out.p, out.n);
  free(out.p);
  return r;
}

/* _write_atomic(path, text): temp file, fsync, rename, fsync the directory. */
static sh_obj *f_write_atomic(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *po, *to;
  if (sh_parse_args("_write_atomic", argc, argv, kw, "path text", &po, &to) < 0) return NULL;
  const char *path = sh_as_cstr(po), *text;
  size_t n;
  if (!path) return NULL;
  if (!bytes_of(to, &text, &n)) return sh_raise(sh_TypeError, "_write_atomic needs a str");
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
  {"_events_write", f_events_write, "_events_write(handle, wall_time, step, summary=None, graph_def=None, session_log=None)", "Append one Event record (internal)."},
  {"_events_flush", f_events_flush, "_events_flush(handle)", "Flush an event file (internal)."},
  {"_events_close", f_events_close, "_events_close(handle)", "Close an event file (internal)."},
  {"_summary_encode", f_summary_encode, "_summary_encode(values)", "Serialize a Summary of (tag, simple_value) pairs (internal)."},
  {"_graph_def", f_graph_def, "_graph_def()", "The default graph as a serialized GraphDef (internal)."},
  {"_write_atomic", f_write_atomic, "_write_atomic(path, text)", "Replace a file atomically (internal)."},
  {"_io_node", f_io_node, "_io_node(op, inputs, dtypes, name=None, string_inputs=3, attrs=None, list_attr='dtypes')", "Build SaveV2 / RestoreV2 / Print (internal)."},
  {"_hostname", f_hostname, "_hostname()", "This host's name (internal)."},
  {NULL},
};

void tf_events_add(sh_obj *tf) {
  sh_module_add_funcs(tf, events_funcs);
  sh_module_add_sub(tf, "summary", sh_module_new("tensorflow.summary"));
}
