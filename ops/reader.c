/* Readers of TF1's input pipelines and what goes with them:
 *
 *   TextLineReaderV2 / TFRecordReaderV2   a reader: a resource that remembers the file it
 *                                         is reading and where (handle: Ref(string))
 *   ReaderReadV2(reader, queue)           the next (key, value); a new file name is taken
 *                                         from the queue when the file ends (waiting as a
 *                                         dequeue does; OutOfRange once it is closed)
 *   DecodeCSV(records, defaults...)       the fields of CSV lines, typed by the defaults
 *   CountUpTo(ref, limit)                 the epoch counter of limit_epochs
 *
 * TFRecord framing: uint64 length, uint32 masked CRC32C of the length, the data, uint32
 * masked CRC32C of the data (little-endian); a bad checksum is DataLoss naming the file
 * and the offset. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "ops/ops_int.h"
#include "runtime/bundle.h"
#include "runtime/device.h"

enum { R_TEXT, R_TFRECORD, R_FIXED };

typedef struct reader {
  int kind;
  int64_t skip;        /* header lines of each text file */
  char *file;          /* NULL: none open */
  FILE *f;
  int64_t line;        /* lines read of the file (text) */
  int64_t offset;      /* byte offset of the next record (TFRecord, fixed-length) */
  int64_t header, record, footer, end;   /* fixed-length records: sizes; end: where records stop */
} reader;

static void reader_free(void *p) {
  reader *r = p;
  if (!r) return;
  if (r->f) fclose(r->f);
  free(r->file);
  free(r);
}

static int reader_create(rt_kernel_ctx *c, int kind) {
  const char *shared = rt_node_string(c->node, "shared_name", "");
  rt_resource *r = rt_device_resource_in(c->device, c->scope, rt_node_string(c->node, "container", ""),
                                      shared[0] ? shared : c->node->name, true);
  if (!r) return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  pthread_mutex_lock(&r->mu);
  if (!r->state) {
    reader *rd = xcalloc(1, sizeof *rd);
    rd->kind = kind;
    rd->skip = rt_node_int(c->node, "skip_header_lines", 0);
    rd->header = rt_node_int(c->node, "header_bytes", 0);
    rd->record = rt_node_int(c->node, "record_bytes", 0);
    rd->footer = rt_node_int(c->node, "footer_bytes", 0);
    r->state = rd;
    r->state_free = reader_free;
  }
  pthread_mutex_unlock(&r->mu);
  rt_shape sc = rt_shape_scalar();
  rt_tensor *h = rt_tensor_new(RT_STRING, &sc);
  if (!h) return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  rt_tensor_set_str(h, 0, c->node->name, strlen(c->node->name));
  h->ref = r;
  rt_tensor_unref(c->outputs[0]);
  c->outputs[0] = h;
  return RT_OK;
}
static int text_reader_kernel(rt_kernel_ctx *c) { return reader_create(c, R_TEXT); }
static int tfrecord_reader_kernel(rt_kernel_ctx *c) { return reader_create(c, R_TFRECORD); }
static int fixed_reader_kernel(rt_kernel_ctx *c) {
  if (rt_node_int(c->node, "record_bytes", 0) <= 0)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "record_bytes must be > 0, not %lld", (long long)rt_node_int(c->node, "record_bytes", 0));
  if (rt_node_int(c->node, "hop_bytes", 0) != 0)
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "FixedLengthRecordReader: hop_bytes is not implemented in tfsh");
  if (rt_node_int(c->node, "header_bytes", 0) < 0 || rt_node_int(c->node, "footer_bytes", 0) < 0)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "header_bytes and footer_bytes must be >= 0");
  return reader_create(c, R_FIXED);
}

static uint64_t le64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  return v;
}
static uint32_t le32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* One record of the open file: 1 read, 0 at its end, -1 error (raised on c). */
static int next_record(rt_kernel_ctx *c, reader *rd, char **data, size_t *len, char *key, size_t keyn) {
  if (rd->kind == R_TEXT) {
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, rd->f)) >= 0) {
      rd->line++;
      if (rd->line <= rd->skip) continue;
      if (n > 0 && line[n - 1] == '\n') n--;
      *data = line;
      *len = (size_t)n;
      snprintf(key, keyn, "%s:%lld", rd->file, (long long)rd->line);
      return 1;
    }
    free(line);
    return 0;
  }
  if (rd->kind == R_FIXED) {   /* records of record_bytes between header and footer; key file:index */
    if (rd->offset + rd->record > rd->end) return 0;
    char *buf = xmalloc((size_t)rd->record + 1);
    if (fread(buf, 1, (size_t)rd->record, rd->f) != (size_t)rd->record) {
      free(buf);
      rt_kernel_error(c, RT_DATA_LOSS, "truncated record at %lld in %s", (long long)rd->offset, rd->file);
      return -1;
    }
    snprintf(key, keyn, "%s:%lld", rd->file, (long long)rd->line++);
    rd->offset += rd->record;
    *data = buf;
    *len = (size_t)rd->record;
    return 1;
  }
  unsigned char hdr[12];
  size_t got = fread(hdr, 1, sizeof hdr, rd->f);
  if (got == 0) return 0;
  int64_t at = rd->offset;
  if (got < sizeof hdr) {
    rt_kernel_error(c, RT_DATA_LOSS, "truncated record at %lld in %s", (long long)at, rd->file);
    return -1;
  }
  if (rt_crc32c_mask(rt_crc32c(hdr, 8)) != le32(hdr + 8)) {
    rt_kernel_error(c, RT_DATA_LOSS, "corrupted record at %lld in %s (length checksum)", (long long)at, rd->file);
    return -1;
  }
  uint64_t n = le64(hdr);
  if (n > ((uint64_t)1 << 40)) {
    rt_kernel_error(c, RT_DATA_LOSS, "corrupted record at %lld in %s (length %llu)", (long long)at, rd->file,
                    (unsigned long long)n);
    return -1;
  }
  char *buf = xmalloc((size_t)n + 1);
  unsigned char foot[4];
  if (fread(buf, 1, (size_t)n, rd->f) != n || fread(foot, 1, 4, rd->f) != 4) {
    free(buf);
    rt_kernel_error(c, RT_DATA_LOSS, "truncated record at %lld in %s", (long long)at, rd->file);
    return -1;
  }
  if (rt_crc32c_mask(rt_crc32c(buf, (size_t)n)) != le32(foot)) {
    free(buf);
    rt_kernel_error(c, RT_DATA_LOSS, "corrupted record at %lld in %s (data checksum)", (long long)at, rd->file);
    return -1;
  }
  rd->offset += 16 + (int64_t)n;
  *data = buf;
  *len = (size_t)n;
  snprintf(key, keyn, "%s:%lld", rd->file, (long long)at);
  return 1;
}

static int read_kernel(rt_kernel_ctx *c) {
  rt_resource *r = c->inputs[0]->ref;
  if (!r || !r->state) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "input 0 is not a reader handle");
  pthread_mutex_lock(&r->mu);   /* one read at a time per reader */
  reader *rd = r->state;
  int rc = RT_OK;
  char *data = NULL, key[4200];
  size_t len = 0;
  for (;;) {
    if (!rd->f) {
      char *name = NULL;
      if ((rc = op_queue_take_string(c, c->inputs[1], &name))) break;
      free(rd->file);
      rd->file = name;
      rd->line = rd->offset = 0;
      if (!(rd->f = fopen(name, "rb"))) {
        rc = rt_kernel_error(c, RT_NOT_FOUND, "%s; %s", name, strerror(errno));
        break;
      }
      if (rd->kind == R_FIXED) {   /* records end footer_bytes before the end of the file */
        fseeko(rd->f, 0, SEEK_END);
        rd->end = (int64_t)ftello(rd->f) - rd->footer;
        fseeko(rd->f, (off_t)rd->header, SEEK_SET);
        rd->offset = rd->header;
      }
    }
    int k = next_record(c, rd, &data, &len, key, sizeof key);
    if (k < 0) { rc = c->st->code; break; }
    if (k > 0) break;
    fclose(rd->f);
    rd->f = NULL;
  }
  pthread_mutex_unlock(&r->mu);
  if (rc) return rc;
  rt_shape sc = rt_shape_scalar();
  rt_tensor *ko = rt_kernel_output(c, 0, RT_STRING, &sc), *vo = rt_kernel_output(c, 1, RT_STRING, &sc);
  if (!ko || !vo) { free(data); return c->st->code; }
  rt_tensor_set_str(ko, 0, key, strlen(key));
  rt_tensor_set_str(vo, 0, data, len);
  free(data);
  return RT_OK;
}

/* ---- DecodeCSV ---------------------------------------------------------------------- */

/* Split s[0..n) into fields (malloc'd array of malloc'd strings). -1: a quote error. */
static int csv_fields(const char *s, size_t n, char delim, bool quotes, char ***out, int *nf) {
  int cap = 8, k = 0;
  char **f = xcalloc((size_t)cap, sizeof *f);
  size_t i = 0;
  for (;;) {
    char *b = xmalloc(n + 1);
    size_t bl = 0;
    if (quotes && i < n && s[i] == '"') {
      i++;
      for (;;) {
        if (i >= n) { free(b); goto bad; }
        if (s[i] == '"') {
          if (i + 1 < n && s[i + 1] == '"') { b[bl++] = '"'; i += 2; continue; }
          i++;
          break;
        }
        b[bl++] = s[i++];
      }
      if (i < n && s[i] != delim) { free(b); goto bad; }
    } else {
      while (i < n && s[i] != delim) b[bl++] = s[i++];
    }
    b[bl] = 0;
    if (k == cap) f = xrealloc(f, (size_t)(cap *= 2) * sizeof *f);
    f[k++] = b;
    if (i >= n) break;
    i++;   /* the delimiter */
  }
  *out = f;
  *nf = k;
  return 0;
bad:
  for (int j = 0; j < k; j++) free(f[j]);
  free(f);
  return -1;
}

static int decode_csv_kernel(rt_kernel_ctx *c) {
  rt_tensor *rec = c->inputs[0];
  int nout = c->n_outputs;
  const char *delim = rt_node_string(c->node, "field_delim", ",");
  const char *na = rt_node_string(c->node, "na_value", "");
  bool quotes = rt_node_bool(c->node, "use_quote_delim", true);
  const rt_attr_value *sel = rt_node_attr(c->node, "select_cols");
  int nsel = sel && sel->kind == RT_ATTR_LIST_INT ? sel->list.n : 0;
  if (rec->dtype != RT_STRING) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "records must be strings");
  rt_tensor **outs = xcalloc((size_t)nout + 1, sizeof *outs);
  for (int k = 0; k < nout; k++) {
    rt_tensor *d = c->inputs[1 + k];
    if (rt_tensor_numel(d) > 1) {
      free(outs);
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Shape of a default must be a length-0 or length-1 vector, or a scalar.");
    }
    if (!(outs[k] = rt_kernel_output(c, k, d->dtype, &rec->shape))) {
      free(outs);
      return c->st->code;
    }
  }
  int rc = RT_OK;
  int64_t nr = rt_tensor_numel(rec);
  const rt_str *rs = rt_tensor_data(rec);
  for (int64_t i = 0; i < nr && !rc; i++) {
    char **f = NULL;
    int nf = 0;
    if (csv_fields(rs[i].ptr ? rs[i].ptr : "", rs[i].len, delim[0] ? delim[0] : ',', quotes, &f, &nf) < 0) {
      rc = rt_kernel_error(c, RT_INVALID_ARGUMENT, "Quoted field has to end with quote followed by delim or end in record %lld",
                           (long long)i);
      break;
    }
    int want = nsel ? nsel : nout;
    if (!nsel && nf != nout)
      rc = rt_kernel_error(c, RT_INVALID_ARGUMENT, "Expect %d fields but have %d in record %lld", want, nf, (long long)i);
    for (int k = 0; k < nout && !rc; k++) {
      int col = nsel ? (int)((int64_t *)sel->list.v)[k] : k;
      if (col >= nf) {
        rc = rt_kernel_error(c, RT_INVALID_ARGUMENT, "Expect %d fields but have %d in record %lld", want, nf, (long long)i);
        break;
      }
      const char *v = f[col];
      rt_tensor *d = c->inputs[1 + k], *o = outs[k];
      bool empty = !*v || (*na && !strcmp(v, na));
      if (empty && rt_tensor_numel(d) == 0) {
        rc = rt_kernel_error(c, RT_INVALID_ARGUMENT, "Field %d is required but missing in record %lld!", k, (long long)i);
        break;
      }
      char *end = NULL;
      switch (o->dtype) {
      case RT_STRING: {
        if (empty) {
          const rt_str *ds = rt_tensor_data(d);
          rt_tensor_set_str(o, i, ds->ptr ? ds->ptr : "", ds->len);
        } else {
          rt_tensor_set_str(o, i, v, strlen(v));
        }
        break;
      }
      case RT_FLOAT: case RT_DOUBLE: {
        double x = empty ? rt_tensor_get_f64(d, 0) : strtod(v, &end);
        if (!empty && (end == v || *end)) {
          rc = rt_kernel_error(c, RT_INVALID_ARGUMENT, "Field %d in record %lld is not a valid %s: %s", k, (long long)i,
                               o->dtype == RT_FLOAT ? "float" : "double", v);
          break;
        }
        if (o->dtype == RT_FLOAT) ((float *)rt_tensor_data(o))[i] = (float)x;
        else ((double *)rt_tensor_data(o))[i] = x;
        break;
      }
      case RT_INT32: case RT_INT64: {
        errno = 0;
        long long x = empty ? rt_tensor_get_i64(d, 0) : strtoll(v, &end, 10);
        if (!empty && (end == v || *end || errno || (o->dtype == RT_INT32 && (x < INT32_MIN || x > INT32_MAX)))) {
          rc = rt_kernel_error(c, RT_INVALID_ARGUMENT, "Field %d in record %lld is not a valid %s: %s", k, (long long)i,
                               o->dtype == RT_INT32 ? "int32" : "int64", v);
          break;
        }
        if (o->dtype == RT_INT32) ((int32_t *)rt_tensor_data(o))[i] = (int32_t)x;
        else ((int64_t *)rt_tensor_data(o))[i] = x;
        break;
      }
      default:
        rc = rt_kernel_error(c, RT_INVALID_ARGUMENT, "DecodeCSV: unsupported type %s", op_tf_type(o->dtype));
      }
    }
    for (int j = 0; j < nf; j++) free(f[j]);
    free(f);
  }
  free(outs);
  return rc;
}

static int decode_csv_shape(rt_shape_ctx *c) {
  const rt_attr_value *t = rt_node_attr(c->node, "OUT_TYPE");
  if (!t || t->kind != RT_ATTR_LIST_TYPE || t->list.n != c->n_outputs)
    return op_shape_error(c, 0, "DecodeCSV needs one OUT_TYPE per output");
  for (int i = 0; i < c->n_outputs; i++) {
    c->out_types[i] = ((rt_dtype *)t->list.v)[i];
    c->out_shapes[i] = c->in_shapes[0];
  }
  return RT_OK;
}

/* ---- CountUpTo ---------------------------------------------------------------------- */

static int count_up_to_kernel(rt_kernel_ctx *c) {
  rt_resource *r = c->inputs[0]->ref;
  if (!r) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "CountUpTo needs a variable as input 0");
  int64_t limit = rt_node_int(c->node, "limit", 0);
  pthread_mutex_lock(&r->mu);
  if (!r->value) {
    pthread_mutex_unlock(&r->mu);
    return rt_kernel_error(c, RT_FAILED_PRECONDITION, "Attempting to use uninitialized value %s", c->node->inputs[0]);
  }
  int64_t v = rt_tensor_get_i64(r->value, 0);
  int rc = RT_OK;
  if (v >= limit) {
    rc = rt_kernel_error(c, RT_OUT_OF_RANGE, "Reached limit of %lld", (long long)limit);
  } else {
    if (r->value->dtype == RT_INT32) ((int32_t *)rt_tensor_data(r->value))[0] = (int32_t)(v + 1);
    else ((int64_t *)rt_tensor_data(r->value))[0] = v + 1;
  }
  rt_dtype dt = r->value->dtype;
  pthread_mutex_unlock(&r->mu);
  if (rc) return rc;
  rt_shape sc = rt_shape_scalar();
  rt_tensor *o = rt_kernel_output(c, 0, dt, &sc);
  if (!o) return c->st->code;
  if (dt == RT_INT32) *(int32_t *)rt_tensor_data(o) = (int32_t)v;
  else *(int64_t *)rt_tensor_data(o) = v;
  return RT_OK;
}

static int scalar_shape(rt_shape_ctx *c) {
  for (int i = 0; i < c->n_outputs; i++) c->out_shapes[i] = rt_shape_scalar();
  return RT_OK;
}

static const rt_op_def reader_ops[] = {
  {.name = "TextLineReaderV2", .outputs = "reader_handle: Ref(string)",
   .attrs = "skip_header_lines: int = 0, container: string = '', shared_name: string = ''",
   .help = "A reader of text files' lines.", .shape = scalar_shape, .kernel = {[RT_DEV_CPU] = text_reader_kernel},
   .flags = RT_OP_STATEFUL | RT_OP_SOURCE},
  {.name = "FixedLengthRecordReaderV2", .outputs = "reader_handle: Ref(string)",
   .attrs = "header_bytes: int = 0, record_bytes: int, footer_bytes: int = 0, hop_bytes: int = 0, container: string = '', "
            "shared_name: string = '', encoding: string = ''",
   .help = "A reader of files of fixed-length records (after a header, before a footer).", .shape = scalar_shape,
   .kernel = {[RT_DEV_CPU] = fixed_reader_kernel}, .flags = RT_OP_STATEFUL | RT_OP_SOURCE},
  {.name = "TFRecordReaderV2", .outputs = "reader_handle: Ref(string)",
   .attrs = "container: string = '', shared_name: string = '', compression_type: string = ''",
   .help = "A reader of TFRecord files' records.", .shape = scalar_shape,
   .kernel = {[RT_DEV_CPU] = tfrecord_reader_kernel}, .flags = RT_OP_STATEFUL | RT_OP_SOURCE},
  {.name = "ReaderReadV2", .inputs = "reader_handle: Ref(string), queue_handle: resource",
   .outputs = "key: string, value: string",
   .help = "The next record (key, value); the next file name comes from the queue.", .shape = scalar_shape,
   .kernel = {[RT_DEV_CPU] = read_kernel}, .flags = RT_OP_STATEFUL},
  {.name = "DecodeCSV", .inputs = "records: string, record_defaults: N * OUT_TYPE", .outputs = "output: N * OUT_TYPE",
   .attrs = "N: int >= 1, OUT_TYPE: list(type), field_delim: string, use_quote_delim: bool = true, "
            "na_value: string = '', select_cols: list(int) = []",
   .help = "Fields of CSV records, typed (and defaulted) by record_defaults.", .shape = decode_csv_shape,
   .kernel = {[RT_DEV_CPU] = decode_csv_kernel}},
  {.name = "CountUpTo", .inputs = "ref: Ref(T)", .outputs = "output: T", .attrs = "limit: int, T: {int32, int64}",
   .help = "Increment a variable until it reaches limit (then OutOfRange); outputs the old value.",
   .shape = scalar_shape, .kernel = {[RT_DEV_CPU] = count_up_to_kernel}, .flags = RT_OP_STATEFUL},
};

void op_example_register(void);
void op_reader_register(void) {
  rt_op_register(reader_ops, OP_COUNT(reader_ops));
  op_example_register();
}

/* ---- ParseExample: tf.train.Example protos, read by hand ---------------------------
 * Example { Features features = 1 }  Features { map<string, Feature> feature = 1 }
 * Feature { oneof { BytesList bytes_list = 1; FloatList float_list = 2; Int64List int64_list = 3 } }
 * each list { repeated value = 1 } (floats and ints packed or not). */

typedef struct pb { const unsigned char *p, *end; } pb;

static bool pb_varint(pb *b, uint64_t *v) {
  *v = 0;
  for (int s = 0; s < 64 && b->p < b->end; s += 7) {
    unsigned char c = *b->p++;
    *v |= (uint64_t)(c & 127) << s;
    if (!(c & 128)) return true;
  }
  return false;
}

/* Next field: its number, wire type, and (type 2) its bytes; false at the end or on junk. */
static bool pb_field(pb *b, int *num, int *wt, pb *sub, uint64_t *val) {
  uint64_t key;
  if (b->p >= b->end || !pb_varint(b, &key)) return false;
  *num = (int)(key >> 3);
  *wt = (int)(key & 7);
  if (*wt == 0) return pb_varint(b, val);
  if (*wt == 1) { if (b->end - b->p < 8) return false; memcpy(val, b->p, 8); b->p += 8; return true; }
  if (*wt == 5) { if (b->end - b->p < 4) return false; uint32_t x; memcpy(&x, b->p, 4); *val = x; b->p += 4; return true; }
  if (*wt != 2) return false;
  uint64_t n;
  if (!pb_varint(b, &n) || n > (uint64_t)(b->end - b->p)) return false;
  sub->p = b->p;
  sub->end = b->p + n;
  b->p += n;
  return true;
}

/* The Feature of `key` in a serialized Example: 1 found (*f set), 0 absent, -1 junk. */
static int find_feature(const char *data, size_t len, const char *key, pb *f) {
  pb ex = {(const unsigned char *)data, (const unsigned char *)data + len}, feats, ent, sub;
  int num, wt, found = 0;
  uint64_t v;
  while (ex.p < ex.end) {
    if (!pb_field(&ex, &num, &wt, &feats, &v)) return -1;
    if (num != 1 || wt != 2) continue;
    while (feats.p < feats.end) {
      if (!pb_field(&feats, &num, &wt, &ent, &v)) return -1;
      if (num != 1 || wt != 2) continue;
      pb name = {0}, val = {0};
      bool have_val = false;
      while (ent.p < ent.end) {
        if (!pb_field(&ent, &num, &wt, &sub, &v)) return -1;
        if (num == 1 && wt == 2) name = sub;
        if (num == 2 && wt == 2) val = sub, have_val = true;
      }
      if (name.p && (size_t)(name.end - name.p) == strlen(key) && !memcmp(name.p, key, strlen(key))) {
        *f = have_val ? val : (pb){NULL, NULL};
        found = 1;   /* the last one wins, as protobuf's map parsing does */
      }
    }
  }
  return found;
}

/* The values of a Feature of dtype t, appended through add (count returned, -1 on a kind
 * mismatch or junk). */
typedef void (*pb_add)(void *arg, rt_dtype t, const void *v, size_t n);
static int64_t feature_values(pb f, rt_dtype t, pb_add add, void *arg) {
  int want = t == RT_STRING ? 1 : t == RT_FLOAT ? 2 : 3, num, wt;
  pb list, sub;
  uint64_t v;
  int64_t count = 0;
  while (f.p && f.p < f.end) {
    if (!pb_field(&f, &num, &wt, &list, &v)) return -1;
    if (wt != 2) continue;
    if (num != want) return -1;
    while (list.p < list.end) {
      if (!pb_field(&list, &num, &wt, &sub, &v)) return -1;
      if (num != 1) continue;
      if (t == RT_STRING && wt == 2) { if (add) add(arg, t, sub.p, (size_t)(sub.end - sub.p)); count++; }
      else if (t == RT_FLOAT && wt == 5) { float x; uint32_t u = (uint32_t)v; memcpy(&x, &u, 4); if (add) add(arg, t, &x, 0); count++; }
      else if (t == RT_FLOAT && wt == 2) {
        for (; sub.end - sub.p >= 4; sub.p += 4, count++) { float x; memcpy(&x, sub.p, 4); if (add) add(arg, t, &x, 0); }
      } else if (t != RT_FLOAT && t != RT_STRING && wt == 0) { int64_t x = (int64_t)v; if (add) add(arg, t, &x, 0); count++; }
      else if (t != RT_FLOAT && t != RT_STRING && wt == 2) {
        while (sub.p < sub.end) { uint64_t u; if (!pb_varint(&sub, &u)) return -1; int64_t x = (int64_t)u; if (add) add(arg, t, &x, 0); count++; }
      } else return -1;
    }
  }
  return count;
}

typedef struct filler { rt_tensor *t; int64_t at; } filler;
static void fill_one(void *arg, rt_dtype t, const void *v, size_t n) {
  filler *f = arg;
  if (t == RT_STRING) rt_tensor_set_str(f->t, f->at, v, n);
  else if (t == RT_FLOAT) ((float *)rt_tensor_data(f->t))[f->at] = *(const float *)v;
  else ((int64_t *)rt_tensor_data(f->t))[f->at] = *(const int64_t *)v;
  f->at++;
}

static const char *kind_of(rt_dtype t) { return t == RT_STRING ? "string" : t == RT_FLOAT ? "float" : "int64"; }

/* _ParseExampleDense(serialized, defaults...): per key, [batch...] + shape values */
static int parse_dense_kernel(rt_kernel_ctx *c) {
  rt_tensor *ser = c->inputs[0];
  const rt_attr_value *keys = rt_node_attr(c->node, "dense_keys"), *shapes = rt_node_attr(c->node, "dense_shapes");
  int n = c->n_outputs;
  if (!keys || keys->kind != RT_ATTR_LIST_STRING || keys->list.n != n || !shapes || shapes->kind != RT_ATTR_LIST_SHAPE || shapes->list.n != n)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "dense_keys and dense_shapes must name every output");
  int64_t nrec = rt_tensor_numel(ser);
  const rt_str *rs = rt_tensor_data(ser);
  for (int k = 0; k < n; k++) {
    const char *key = ((char **)keys->list.v)[k];
    rt_shape fs = ((rt_shape *)shapes->list.v)[k], os = ser->shape;
    rt_tensor *def = c->inputs[1 + k];
    rt_dtype t = def->dtype;
    for (int d = 0; d < fs.ndims; d++) os.dims[os.ndims++] = fs.dims[d];
    rt_tensor *o = rt_kernel_output(c, k, t, &os);
    if (!o) return c->st->code;
    int64_t per = rt_shape_numel(&fs);
    for (int64_t i = 0; i < nrec; i++) {
      pb f;
      int found = find_feature(rs[i].ptr ? rs[i].ptr : "", rs[i].len, key, &f);
      if (found < 0) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Could not parse example input, value: '%.*s'", (int)(rs[i].len > 40 ? 40 : rs[i].len), rs[i].ptr ? rs[i].ptr : "");
      filler fl = {o, i * per};
      if (!found) {
        if (rt_tensor_numel(def) != per)
          return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Feature: %s (data type: %s) is required but could not be found.", key, kind_of(t));
        for (int64_t j = 0; j < per; j++) {
          if (t == RT_STRING) { const rt_str *ds = (const rt_str *)rt_tensor_data(def) + j; fill_one(&fl, t, ds->ptr ? ds->ptr : "", ds->len); }
          else if (t == RT_FLOAT) { float x = (float)rt_tensor_get_f64(def, j); fill_one(&fl, t, &x, 0); }
          else { int64_t x = rt_tensor_get_i64(def, j); fill_one(&fl, t, &x, 0); }
        }
        continue;
      }
      int64_t cnt = feature_values(f, t, NULL, NULL);
      if (cnt < 0)
        return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Name: <unknown>, Feature: %s.  Data types don't match. Expected type: %s", key, kind_of(t));
      if (cnt != per)   /* TF's fast parser's words */
        return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Key: %s.  Can't parse serialized Example: Some %s_list slice was not parsed.",
                               key, t == RT_STRING ? "bytes" : kind_of(t));
      feature_values(f, t, fill_one, &fl);
    }
  }
  return RT_OK;
}

static int parse_dense_shape(rt_shape_ctx *c) {
  const rt_attr_value *t = rt_node_attr(c->node, "Tdense"), *s = rt_node_attr(c->node, "dense_shapes");
  if (!t || t->kind != RT_ATTR_LIST_TYPE || t->list.n != c->n_outputs)
    return op_shape_error(c, 0, "_ParseExampleDense needs one Tdense per output");
  for (int i = 0; i < c->n_outputs; i++) {
    c->out_types[i] = ((rt_dtype *)t->list.v)[i];
    if (s && s->kind == RT_ATTR_LIST_SHAPE && s->list.n == c->n_outputs && c->in_shapes[0].ndims >= 0) {
      rt_shape o = c->in_shapes[0], fs = ((rt_shape *)s->list.v)[i];
      for (int d = 0; d < fs.ndims && o.ndims < RT_MAX_DIMS; d++) o.dims[o.ndims++] = fs.dims[d];
      c->out_shapes[i] = o;
    }
  }
  return RT_OK;
}

/* _ParseExampleSparse(serialized): a VarLenFeature as (indices, values, dense_shape) */
typedef struct collect { rt_dtype t; int64_t n, cap; char *v; rt_str *s; } collect;
static void collect_one(void *arg, rt_dtype t, const void *v, size_t n) {
  collect *c = arg;
  if (c->n == c->cap) {
    c->cap = c->cap ? 2 * c->cap : 16;
    c->v = xrealloc(c->v, (size_t)c->cap * 8);
    c->s = xrealloc(c->s, (size_t)c->cap * sizeof *c->s);
  }
  if (t == RT_STRING) c->s[c->n] = (rt_str){n, xstrndup(v, n)};
  else if (t == RT_FLOAT) memcpy(c->v + 8 * c->n, v, 4);
  else memcpy(c->v + 8 * c->n, v, 8);
  c->n++;
}

static int parse_sparse_kernel(rt_kernel_ctx *c) {
  rt_tensor *ser = c->inputs[0];
  const char *key = rt_node_string(c->node, "key", "");
  rt_dtype t = rt_node_type(c->node, "dtype", RT_FLOAT);
  int64_t nrec = rt_tensor_numel(ser), maxlen = 0;
  bool batched = ser->shape.ndims > 0;
  const rt_str *rs = rt_tensor_data(ser);
  collect col = {.t = t};
  int64_t *rows = xcalloc((size_t)nrec + 1, sizeof *rows);
  int rc = RT_OK;
  for (int64_t i = 0; i < nrec && !rc; i++) {
    pb f;
    int found = find_feature(rs[i].ptr ? rs[i].ptr : "", rs[i].len, key, &f);
    int64_t before = col.n;
    if (found < 0 || (found && feature_values(f, t, collect_one, &col) < 0))
      rc = rt_kernel_error(c, RT_INVALID_ARGUMENT, "Name: <unknown>, Feature: %s.  Data types don't match. Expected type: %s", key, kind_of(t));
    rows[i] = col.n - before;
    if (rows[i] > maxlen) maxlen = rows[i];
  }
  rt_shape is = {.ndims = 2, .dims = {col.n, batched ? 2 : 1}}, vs = {.ndims = 1, .dims = {col.n}}, ss = {.ndims = 1, .dims = {batched ? 2 : 1}};
  rt_tensor *io = rc ? NULL : rt_kernel_output(c, 0, RT_INT64, &is);
  rt_tensor *vo = io ? rt_kernel_output(c, 1, t, &vs) : NULL;
  rt_tensor *so = vo ? rt_kernel_output(c, 2, RT_INT64, &ss) : NULL;
  if (!rc && !so) rc = c->st->code;
  if (!rc) {
    int64_t *ix = rt_tensor_data(io), k = 0;
    for (int64_t i = 0; i < nrec; i++)
      for (int64_t j = 0; j < rows[i]; j++, k++) {
        if (batched) ix[2 * k] = i, ix[2 * k + 1] = j;
        else ix[k] = j;
      }
    for (int64_t j = 0; j < col.n; j++) {
      if (t == RT_STRING) rt_tensor_set_str(vo, j, col.s[j].ptr, col.s[j].len);
      else if (t == RT_FLOAT) memcpy((float *)rt_tensor_data(vo) + j, col.v + 8 * j, 4);
      else memcpy((int64_t *)rt_tensor_data(vo) + j, col.v + 8 * j, 8);
    }
    int64_t *sd = rt_tensor_data(so);
    if (batched) sd[0] = nrec, sd[1] = maxlen;
    else sd[0] = maxlen;
  }
  if (t == RT_STRING) for (int64_t j = 0; j < col.n; j++) free(col.s[j].ptr);
  free(col.v);
  free(col.s);
  free(rows);
  return rc;
}

static int parse_sparse_shape(rt_shape_ctx *c) {
  c->out_types[1] = rt_node_type(c->node, "dtype", RT_FLOAT);
  return RT_OK;
}

/* DecodeRaw(bytes): each string's bytes as out_type values, [bytes.shape..., n]; every
 * string must have the same length, a multiple of out_type's size (TF's messages). */
static int decode_raw_kernel(rt_kernel_ctx *c) {
  const rt_tensor *in = c->inputs[0];
  rt_dtype t = rt_node_type(c->node, "out_type", RT_UINT8);
  size_t w = rt_dtype_size(t);
  if (rt_dtype_is_str(t) || !w)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "DecodeRaw: out_type %s is not a number type", rt_dtype_name(t));
  bool swap = !rt_node_bool(c->node, "little_endian", true) && w > 1;
  int64_t n = rt_tensor_numel(in);
  const rt_str *s = rt_tensor_data(in);
  size_t len = n > 0 ? s[0].len : 0;
  for (int64_t i = 1; i < n; i++)
    if (s[i].len != len)
      return rt_kernel_error(c, RT_INVALID_ARGUMENT,
                             "DecodeRaw requires input strings to all be the same size, "
                             "but element %lld has size %zu != %zu", (long long)i, len, s[i].len);
  if (len % w)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT,
                           "Input to DecodeRaw has length %zu that is not a multiple of %zu, the size of %s", len, w,
                           rt_dtype_name(t));
  rt_shape os = in->shape;
  if (os.ndims >= RT_MAX_DIMS)
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "DecodeRaw: input of rank %d (tfsh has at most %d dims)", os.ndims,
                           RT_MAX_DIMS);
  os.dims[os.ndims++] = (int64_t)(len / w);
  rt_tensor *o = rt_kernel_output(c, 0, t, &os);
  if (!o) return c->st->code;
  unsigned char *d = rt_tensor_data(o);
  for (int64_t i = 0; i < n; i++, d += len) {
    if (len) memcpy(d, s[i].ptr, len);
    for (size_t k = 0; swap && k < len; k += w)
      for (size_t a = k, b = k + w - 1; a < b; a++, b--) {
        unsigned char x = d[a];
        d[a] = d[b], d[b] = x;
      }
  }
  return RT_OK;
}

static int decode_raw_shape(rt_shape_ctx *c) {
  c->out_types[0] = rt_node_type(c->node, "out_type", RT_UINT8);
  rt_shape s = c->in_shapes[0];
  if (s.ndims >= 0 && s.ndims < RT_MAX_DIMS) s.dims[s.ndims++] = -1;
  else s = rt_shape_unknown();
  c->out_shapes[0] = s;
  return RT_OK;
}

static const rt_op_def example_ops[] = {
  {.name = "DecodeRaw", .inputs = "bytes: string", .outputs = "output: out_type",
   .attrs = "out_type: {float, double, int32, uint8, int64, bool}, little_endian: bool = true",
   .help = "Each string's bytes reinterpreted as a vector of out_type (all strings the same length).",
   .shape = decode_raw_shape, .kernel = {[RT_DEV_CPU] = decode_raw_kernel}},
  {.name = "_ParseExampleDense", .inputs = "serialized: string, dense_defaults: N * Tdense",
   .outputs = "dense_values: N * Tdense",
   .attrs = "N: int >= 1, Tdense: list(type), dense_keys: list(string), dense_shapes: list(shape)",
   .help = "FixedLenFeatures of serialized tf.train.Example protos (a scalar or a batch).",
   .shape = parse_dense_shape, .kernel = {[RT_DEV_CPU] = parse_dense_kernel}},
  {.name = "_ParseExampleSparse", .inputs = "serialized: string",
   .outputs = "indices: int64, values: dtype, dense_shape: int64", .attrs = "key: string, dtype: type",
   .help = "A VarLenFeature of serialized tf.train.Example protos, as a sparse tensor's parts.",
   .shape = parse_sparse_shape, .kernel = {[RT_DEV_CPU] = parse_sparse_kernel}},
};

void op_example_register(void) { rt_op_register(example_ops, OP_COUNT(example_ops)); }
