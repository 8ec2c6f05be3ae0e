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

enum { R_TEXT, R_TFRECORD };

typedef struct reader {
  int kind;
  int64_t skip;        /* header lines of each text file */
  char *file;          /* NULL: none open */
  FILE *f;
  int64_t line;        /* lines read of the file (text) */
  int64_t offset;      /* byte offset of the next record (TFRecord) */
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
  rt_resource *r = rt_device_resource(c->device, rt_node_string(c->node, "container", ""),
                                      shared[0] ? shared : c->node->name, true);
  if (!r) return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  pthread_mutex_lock(&r->mu);
  if (!r->state) {
    reader *rd = xcalloc(1, sizeof *rd);
    rd->kind = kind;
    rd->skip = rt_node_int(c->node, "skip_header_lines", 0);
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
  {.name = "TFRecordReaderV2", .outputs = "reader_handle: Ref(string)",
   .attrs = "container: string = '', shared_name: string = '', compression_type: string = ''",
   .help = "A reader of TFRecord files' records.", .shape = scalar_shape,
   .kernel = {[RT_DEV_CPU] = tfrecord_reader_kernel}, .flags = RT_OP_STATEFUL | RT_OP_SOURCE},
  {.name = "ReaderReadV2", .inputs = "reader_handle: Ref(string), queue_handle: Ref(string)",
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

void op_reader_register(void) { rt_op_register(reader_ops, OP_COUNT(reader_ops)); }
