/* Checkpoint and summary ops: SaveV2, RestoreV2, MergeV2Checkpoints, StringJoin,
 * ShardedFilename (what tf.train.Saver builds), and ScalarSummary, HistogramSummary,
 * ImageSummary, MergeSummary (tensorflow.Summary messages from runtime/proto/event.proto
 * through protobuf-c, serialized into string scalars, for tf.summary).
 *
 * Checkpoint format: TensorFlow's tensor bundle (V2), read and written by runtime/bundle.c
 * (ops/CHECKPOINT.md is the long form). A checkpoint PREFIX is
 *   PREFIX.index                 a LevelDB-style table of BundleEntryProto (protobuf-c)
 *   PREFIX.data-SSSSS-of-NNNNN   the tensors' bytes back to back, one file per shard
 * tfsh's first layout ("TFSHCKPT") still restores. Every file is written under a temporary
 * name (NAME.tempstate<pid>_<n>), fsync'd, then renamed; the index is renamed last and the
 * directory fsync'd, so a crash leaves either the previous files or the new ones and never a
 * half-written file under a final name. A checkpoint "exists" when PREFIX.index does.
 *
 * Sharded saves (Saver(sharded=True)): each device's SaveV2 writes its own checkpoint
 * TMP/part-0000k-of-0000n (a directory "PREFIX_temp_<uuid>"), then MergeV2Checkpoints renames
 * the parts' data files to PREFIX.data-0000k-of-0000n, writes one PREFIX.index naming the
 * shards, and removes the parts' index files and the temporary directory. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "base/alloc.h"
#include "ops/ops_int.h"
#include "runtime/bundle.h"
#include "base/bytes.h"
#include "runtime/files.h"
#include "runtime/device.h"
#include "runtime/proto/event.pb-c.h"

/* ---- files --------------------------------------------------------------------------- */

static atomic_uint tmp_counter;

/* Write `n` bytes to path atomically: temp name, fsync, rename. Returns 0 or errno. */
static int write_atomic(const char *path, const void *d, size_t n) {
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tempstate%ld_%u", path, (long)getpid(), atomic_fetch_add(&tmp_counter, 1));
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return errno;
  const unsigned char *p = d;
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      close(fd);
      unlink(tmp);
      return e;
    }
    p += w;
    n -= (size_t)w;
  }
  if (fsync(fd) < 0 || close(fd) < 0) {
    int e = errno;
    unlink(tmp);
    return e;
  }
  if (rename(tmp, path) < 0) {
    int e = errno;
    unlink(tmp);
    return e;
  }
  return 0;
}

static void fsync_dir_of(const char *path) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (slash == dir) slash[1] = '\0';
  else if (slash) *slash = '\0';
  else strcpy(dir, ".");
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    fsync(fd);
    close(fd);
  }
}

static bool parent_exists(const char *path) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (!slash) return true;
  if (slash == dir) return true;
  *slash = '\0';
  struct stat sb;
  return stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* The directory path is in, made when only it is missing (where this task may write:
 * runtime/files.h), as TF's BundleWriter does (CreateDir, one level: a sharded save's
 * PREFIX_temp_<id>/, or a new checkpoint directory). */
static int make_parent(rt_kernel_ctx *c, const char *path) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", path);
  char *last = strrchr(dir, '/');
  if (!last || last == dir) return RT_OK;
  *last = '\0';
  if (!parent_exists(dir)) return RT_OK;   /* two levels missing: the caller says so */
  if (rt_files_check_write(dir, c->st)) return rt_kernel_error(c, RT_PERMISSION_DENIED, "%s", c->st->msg);
  if (mkdir(dir, 0755) != 0 && errno != EEXIST)
    return rt_kernel_error(c, RT_NOT_FOUND, "Failed to create a directory: %s; %s", dir, strerror(errno));
  return RT_OK;
}

/* Test hook for the crash drills: TFSH_CKPT_CRASH=data|index kills the process (SIGKILL)
 * after that file of the next save is on disk under its temporary name... or its final one
 * ("data": after the data file is renamed, before the index is written). */
static void maybe_crash(const char *where) {
  const char *e = getenv("TFSH_CKPT_CRASH");
  if (e && !strcmp(e, where)) {
    fprintf(stderr, "tfsh: TFSH_CKPT_CRASH=%s: killing this process in the middle of a save\n", where);
    fflush(stderr);
    kill(getpid(), SIGKILL);
  }
}

/* A bundle error (runtime/bundle.c fills st) as this kernel's error. */
static int bundle_error(rt_kernel_ctx *c) {
  char msg[RT_MSG_MAX];
  snprintf(msg, sizeof msg, "%s", c->st->msg);
  return rt_kernel_error(c, c->st->code, "%s", msg);
}

static const char *str_at(const rt_tensor *t, int64_t i) {
  const rt_str *s = rt_tensor_data(t);
  return s && s[i].ptr ? s[i].ptr : "";
}

/* Write one checkpoint (one shard) of the given tensors, in TF's tensor-bundle format. */
/* The entry of a partitioned tensor `name` in ix (made on its first slice). */
static rt_bundle_entry *full_entry(rt_bundle_index *ix, const char *name, const rt_tensor *t, const rt_shape *full) {
  for (int j = 0; j < ix->n; j++)
    if (ix->e[j].n_slices && !strcmp(ix->e[j].name, name)) return &ix->e[j];
  rt_bundle_entry *e = &ix->e[ix->n++];
  memset(e, 0, sizeof *e);
  e->name = xstrdup(name);
  e->name_len = strlen(name);
  e->dtype = t->dtype;
  e->shape = *full;
  return e;
}

/* Write one checkpoint (one shard) of the given tensors, in TF's tensor-bundle format. A
 * tensor with a spec (TF's shape_and_slices, "" for a whole one) is a slice of a
 * partitioned one: stored under its slice key, listed in its full tensor's entry. */
static int write_checkpoint(rt_kernel_ctx *c, const char *prefix, int n, const char *const *names,
                            const char *const *specs, rt_tensor *const *tensors) {
  if (!parent_exists(prefix)) {
    int mk = make_parent(c, prefix);
    if (mk) return mk;
  }
  if (!parent_exists(prefix))
    return rt_kernel_error(c, RT_NOT_FOUND, "Parent directory of %s doesn't exist, can't save.", prefix);
  rt_bundle_index ix = {RT_BUNDLE_TF, 1, 0, xcalloc(2 * (size_t)n + 1, sizeof(rt_bundle_entry))};
  bool *owned = xcalloc(2 * (size_t)n + 1, sizeof *owned);   /* names this made (slice keys, full names) */
  bytes_buf data = {0};
  int rc = RT_OK;
  for (int i = 0; i < n && !rc; i++) {
    rt_tensor *t = tensors[i];
    if (!t->buf && rt_tensor_numel(t) != 0) {
      rc = rt_kernel_error(c, RT_FAILED_PRECONDITION, "Attempting to use uninitialized value %s", names[i]);
      break;
    }
    if (!names[i][0]) {
      rc = rt_kernel_error(c, RT_INVALID_ARGUMENT, "a tensor in a save has an empty name");
      break;
    }
    bool sliced = specs && specs[i][0];
    for (int j = 0; j < i; j++)
      if (!strcmp(names[j], names[i]) && (!sliced || !specs[j][0] || !strcmp(specs[j], specs[i]))) {
        rc = rt_kernel_error(c, RT_INVALID_ARGUMENT, "Duplicate tensor name '%s' in a save", names[i]);
        break;
      }
    if (rc) break;
    rt_bundle_entry *e = &ix.e[ix.n];
    e->name = (char *)names[i];
    e->name_len = strlen(names[i]);
    if (sliced) {
      rt_shape full;
      rt_bundle_slice sl;
      if (rt_bundle_parse_spec(specs[i], &full, &sl, c->st)) {
        rc = bundle_error(c);
        break;
      }
      rt_shape ps = rt_bundle_slice_shape(&full, &sl);
      if (!rt_shape_equal(&ps, &t->shape)) {
        char a[128], b[128];
        rc = rt_kernel_error(c, RT_INVALID_ARGUMENT, "tensor %s: shape %s does not match its slice %s (%s)", names[i],
                             op_shape_tf(&t->shape, a, sizeof a), specs[i], op_shape_tf(&ps, b, sizeof b));
        break;
      }
      bytes_buf key = {0};
      rt_bundle_slice_key(names[i], strlen(names[i]), &sl, &key);
      e->name = (char *)key.p;
      e->name_len = key.n;
      owned[ix.n] = true;
      ix.n++;
      rt_bundle_entry *fe = full_entry(&ix, names[i], t, &full);
      if (fe == &ix.e[ix.n - 1]) owned[ix.n - 1] = true;
      if (fe->dtype != t->dtype || !rt_shape_equal(&fe->shape, &full)) {
        rc = rt_kernel_error(c, RT_INVALID_ARGUMENT, "slices of %s differ in dtype or full shape", names[i]);
        break;
      }
      fe->slices = xrealloc(fe->slices, (size_t)(fe->n_slices + 1) * sizeof *fe->slices);
      fe->slices[fe->n_slices++] = sl;
    } else {
      ix.n++;
    }
    e->dtype = t->dtype;
    e->shape = t->shape;
    e->offset = data.n;
    if (t->ref) pthread_mutex_lock(&t->ref->mu);
    size_t sz = rt_bundle_tensor_size(t);
    bytes_reserve(&data, sz);
    if (!data.oom) {
      rt_bundle_tensor_write(t, data.p + data.n, &e->crc);
      data.n += sz;
    }
    if (t->ref) pthread_mutex_unlock(&t->ref->mu);
    e->size = sz;
  }
  if (!rc && data.oom) rc = rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory serializing a checkpoint");
  unsigned char *ib = NULL;
  size_t ibn = 0;
  if (!rc && rt_bundle_index_encode(&ix, &ib, &ibn, c->st)) rc = bundle_error(c);
  if (!rc) {
    char dpath[4200], ipath[4200];
    rt_bundle_data_name(dpath, sizeof dpath, prefix, 0, 1);
    snprintf(ipath, sizeof ipath, "%s.index", prefix);
    int err = 0;
    if (rt_files_check_write(dpath, c->st)) {   /* a server writes only where it allows */
      rc = rt_kernel_error(c, RT_PERMISSION_DENIED, "%s", c->st->msg);
      err = -1;
    } else {
      err = write_atomic(dpath, data.p ? (void *)data.p : (void *)"", data.n);
    }
    if (err < 0) {
    } else if (err) {
      rc = rt_kernel_error(c, RT_UNKNOWN, "Failed to write %s: %s", dpath, strerror(err));
    } else {
      maybe_crash("data");
      err = write_atomic(ipath, ib, ibn);
      if (err) rc = rt_kernel_error(c, RT_UNKNOWN, "Failed to write %s: %s", ipath, strerror(err));
      else fsync_dir_of(ipath);
    }
  }
  free(ib);
  free(data.p);
  for (int i = 0; i < ix.n; i++) {   /* other names are borrowed */
    if (owned[i]) free(ix.e[i].name);
    free(ix.e[i].slices);
  }
  free(owned);
  free(ix.e);
  return rc;
}

static int check_string_vec(rt_kernel_ctx *c, int i, const char *what, int64_t want) {
  rt_tensor *t = c->inputs[i];
  if (t->dtype != RT_STRING)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s must be a string tensor", what);
  if (want >= 0 && rt_tensor_numel(t) != want)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT,
                           "Expected %s to have %lld elements, got %lld", what, (long long)want,
                           (long long)rt_tensor_numel(t));
  return RT_OK;
}

static int save_kernel(rt_kernel_ctx *c) {
  int n = c->n_inputs - 3;
  if (n < 0)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "SaveV2 takes prefix, tensor_names and "
                           "shape_and_slices before the tensors, got %d inputs", c->n_inputs);
  if (check_string_vec(c, 0, "prefix", 1) || check_string_vec(c, 1, "tensor_names", n) ||
      check_string_vec(c, 2, "shape_and_slices", n))
    return c->st->code;
  const char **names = xcalloc((size_t)n + 1, sizeof *names), **specs = xcalloc((size_t)n + 1, sizeof *specs);
  for (int i = 0; i < n; i++) names[i] = str_at(c->inputs[1], i), specs[i] = str_at(c->inputs[2], i);
  int rc = write_checkpoint(c, str_at(c->inputs[0], 0), n, names, specs, c->inputs + 3);
  free(names);
  free(specs);
  return rc;
}

/* ---- restore ------------------------------------------------------------------------- */

static int restore_kernel(rt_kernel_ctx *c) {
  const rt_attr_value *dt = rt_node_attr(c->node, "dtypes");
  int n = c->n_outputs;
  if (check_string_vec(c, 0, "prefix", 1) || check_string_vec(c, 1, "tensor_names", n) ||
      check_string_vec(c, 2, "shape_and_slices", n))
    return c->st->code;
  const char *prefix = str_at(c->inputs[0], 0);
  rt_bundle_index ix;
  if (rt_bundle_index_read(prefix, &ix, c->st)) return bundle_error(c);
  int rc = RT_OK;
  for (int i = 0; i < n && !rc; i++) {
    const char *name = str_at(c->inputs[1], i);
    rt_bundle_entry *e = rt_bundle_find(&ix, name);
    if (!e) {
      rc = rt_kernel_error(c, RT_NOT_FOUND, "Key %s not found in checkpoint %s", name, prefix);
      break;
    }
    rt_dtype want = dt && dt->kind == RT_ATTR_LIST_TYPE && i < dt->list.n ? ((rt_dtype *)dt->list.v)[i] : e->dtype;
    if (want != e->dtype) {
      rc = rt_kernel_error(c, RT_INVALID_ARGUMENT,
                           "tensor_name = %s; expected dtype %s does not equal original dtype %s "
                           "(in checkpoint %s)", name, rt_dtype_name(want), rt_dtype_name(e->dtype), prefix);
      break;
    }
    rt_tensor *t = NULL;
    if (rt_bundle_read(prefix, &ix, e, &t, c->st)) {
      rc = bundle_error(c);
      break;
    }
    const char *spec = str_at(c->inputs[2], i);
    if (spec[0]) {   /* one slice of it (a partitioned variable's part) */
      rt_shape full;
      rt_bundle_slice sl;
      rt_tensor *part = NULL;
      if (rt_bundle_parse_spec(spec, &full, &sl, c->st) == 0 && !rt_shape_equal(&full, &t->shape)) {
        char a[128];
        rt_error(c->st, RT_INVALID_ARGUMENT, "tensor %s in checkpoint %s has shape %s, shape_and_slices '%s' "
                 "names another", name, prefix, op_shape_tf(&t->shape, a, sizeof a), spec);
      }
      if (c->st->code || rt_bundle_extract(t, &sl, &part, c->st)) {
        rt_tensor_unref(t);
        rc = bundle_error(c);
        break;
      }
      rt_tensor_unref(t);
      t = part;
    }
    rt_tensor_unref(c->outputs[i]);
    c->outputs[i] = t;
  }
  rt_bundle_index_free(&ix);
  return rc;
}

static int restore_shape(rt_shape_ctx *c) {
  const rt_attr_value *dt = rt_node_attr(c->node, "dtypes");
  if (!dt || dt->kind != RT_ATTR_LIST_TYPE || dt->list.n != c->n_outputs)
    return op_shape_error(c, 0, "RestoreV2 needs one dtype per output");
  for (int i = 0; i < c->n_outputs; i++) c->out_types[i] = ((rt_dtype *)dt->list.v)[i];
  return RT_OK;
}

static int save_shape(rt_shape_ctx *c) {
  const rt_attr_value *dt = rt_node_attr(c->node, "dtypes");
  int n = c->n_inputs - 3;
  if (!dt || dt->kind != RT_ATTR_LIST_TYPE || dt->list.n != n)
    return op_shape_error(c, 0, "SaveV2 needs one dtype per tensor");
  for (int i = 0; i < n; i++)
    if (((rt_dtype *)dt->list.v)[i] != c->in_types[3 + i])
      return op_shape_error(c, 0, "SaveV2: tensor %d has dtype %s, dtypes says %s", i,
                            op_tf_type(c->in_types[3 + i]), op_tf_type(((rt_dtype *)dt->list.v)[i]));
  return RT_OK;
}

/* ---- sharded saves: MergeV2Checkpoints, StringJoin, ShardedFilename -------------------- */

static int merge_kernel(rt_kernel_ctx *c) {
  if (check_string_vec(c, 0, "checkpoint_prefixes", -1) || check_string_vec(c, 1, "destination_prefix", 1))
    return c->st->code;
  if (c->inputs[0]->shape.ndims > 1)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "checkpoint_prefixes must be a scalar or a vector");
  int np = (int)rt_tensor_numel(c->inputs[0]);
  if (np < 1) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "checkpoint_prefixes is empty");
  if (rt_node_bool(c->node, "allow_missing_files", false))
    return rt_kernel_error(c, RT_UNIMPLEMENTED, "MergeV2Checkpoints: allow_missing_files=true is not supported by tfsh");
  const char *dest = str_at(c->inputs[1], 0);
#define PART(k) str_at(c->inputs[0], k)
  rt_bundle_index all = {RT_BUNDLE_TF, (uint32_t)np, 0, NULL};
  int cap = 0, rc = RT_OK;
  for (int k = 0; k < np && !rc; k++) {
    rt_bundle_index ix;
    const char *part = PART(k);
    if (rt_bundle_index_read(part, &ix, c->st)) {
      rc = bundle_error(c);
      break;
    }
    if (ix.format != RT_BUNDLE_TF || ix.num_shards != 1)
      rc = rt_kernel_error(c, RT_INVALID_ARGUMENT, "MergeV2Checkpoints: %s is not a one-shard tensor bundle", part);
    for (int i = 0; i < ix.n && !rc; i++) {
      bool merged = false;
      for (int j = 0; j < all.n && !rc && !merged; j++)
        if (all.e[j].name_len == ix.e[i].name_len && !memcmp(all.e[j].name, ix.e[i].name, ix.e[i].name_len)) {
          rt_bundle_entry *a = &all.e[j], *b = &ix.e[i];
          if (a->n_slices && b->n_slices && a->dtype == b->dtype && rt_shape_equal(&a->shape, &b->shape)) {
            /* one partitioned variable's slices, saved on several devices */
            a->slices = xrealloc(a->slices, (size_t)(a->n_slices + b->n_slices) * sizeof *a->slices);
            memcpy(a->slices + a->n_slices, b->slices, (size_t)b->n_slices * sizeof *b->slices);
            a->n_slices += b->n_slices;
            merged = true;
          } else {
            rc = rt_kernel_error(c, RT_INVALID_ARGUMENT, "Duplicate tensor name '%s' in shards of %s",
                                 ix.e[i].name, dest);
          }
        }
      if (rc) break;
      if (merged) continue;
      if (all.n == cap) {
        cap = cap ? 2 * cap : 16;
        all.e = xrealloc(all.e, (size_t)cap * sizeof *all.e);
      }
      all.e[all.n] = ix.e[i];
      all.e[all.n].shard = (uint32_t)k;
      ix.e[i].name = NULL;   /* moved */
      ix.e[i].slices = NULL;
      all.n++;
    }
    rt_bundle_index_free(&ix);
  }
  for (int k = 0; k < np && !rc; k++) {
    char from[4200], to[4200];
    rt_bundle_data_name(from, sizeof from, PART(k), 0, 1);
    rt_bundle_data_name(to, sizeof to, dest, k, np);
    if (rename(from, to) < 0)
      rc = rt_kernel_error(c, RT_UNKNOWN, "Failed to rename %s to %s: %s", from, to, strerror(errno));
  }
  if (!rc) {
    unsigned char *ib = NULL;
    size_t ibn = 0;
    if (rt_bundle_index_encode(&all, &ib, &ibn, c->st)) {
      rc = bundle_error(c);
    } else {
      char ipath[4200];
      snprintf(ipath, sizeof ipath, "%s.index", dest);
      maybe_crash("data");
      int err = write_atomic(ipath, ib, ibn);
      if (err) rc = rt_kernel_error(c, RT_UNKNOWN, "Failed to write %s: %s", ipath, strerror(err));
      else fsync_dir_of(ipath);
    }
    free(ib);
  }
  if (!rc && rt_node_bool(c->node, "delete_old_dirs", true)) {
    for (int k = 0; k < np; k++) {
      char p[4200];
      snprintf(p, sizeof p, "%s.index", PART(k));
      unlink(p);
      snprintf(p, sizeof p, "%s", PART(k));
      char *slash = strrchr(p, '/');
      if (slash) {
        *slash = '\0';
        rmdir(p);   /* only once empty */
      }
    }
  }
  rt_bundle_index_free(&all);
  return rc;
#undef PART
}

static int string_join_kernel(rt_kernel_ctx *c) {
  const char *sep = rt_node_string(c->node, "separator", "");
  bytes_buf b = {0};
  for (int i = 0; i < c->n_inputs; i++) {
    if (i) bytes_put(&b, sep, strlen(sep));
    if (rt_tensor_numel(c->inputs[i]) != 1)
      return free(b.p), rt_kernel_error(c, RT_UNIMPLEMENTED, "StringJoin: tfsh joins scalars only");
    const rt_str *s = rt_tensor_data(c->inputs[i]);
    bytes_put(&b, s->ptr ? s->ptr : "", s->len);
  }
  rt_shape sc = rt_shape_scalar();
  rt_tensor *o = rt_tensor_new(RT_STRING, &sc);
  if (!o) return free(b.p), rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  rt_tensor_set_str(o, 0, b.p ? (const char *)b.p : "", b.n);
  free(b.p);
  rt_tensor_unref(c->outputs[0]);
  c->outputs[0] = o;
  return RT_OK;
}

static int sharded_filename_kernel(rt_kernel_ctx *c) {
  char buf[4200];
  snprintf(buf, sizeof buf, "%s-%05lld-of-%05lld", str_at(c->inputs[0], 0),
           (long long)rt_tensor_get_i64(c->inputs[1], 0), (long long)rt_tensor_get_i64(c->inputs[2], 0));
  rt_shape sc = rt_shape_scalar();
  rt_tensor *o = rt_tensor_new(RT_STRING, &sc);
  if (!o) return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  rt_tensor_set_str(o, 0, buf, strlen(buf));
  rt_tensor_unref(c->outputs[0]);
  c->outputs[0] = o;
  return RT_OK;
}

static int scalar_out_shape(rt_shape_ctx *c) {
  c->out_shapes[0] = rt_shape_scalar();
  return RT_OK;
}

/* ---- summaries ------------------------------------------------------------------------ */

/* The kernel's output: the Summary holding values[0..n), serialized. */
static int summary_output(rt_kernel_ctx *c, Tensorflow__Summary__Value **values, size_t n) {
  Tensorflow__Summary sum = TENSORFLOW__SUMMARY__INIT;
  sum.n_value = n;
  sum.value = values;
  size_t len = tensorflow__summary__get_packed_size(&sum);
  unsigned char *buf = malloc(len ? len : 1);
  rt_shape sc = rt_shape_scalar();
  rt_tensor *o = buf ? rt_tensor_new(RT_STRING, &sc) : NULL;
  if (!o) {
    free(buf);
    return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  }
  tensorflow__summary__pack(&sum, buf);
  rt_tensor_set_str(o, 0, (const char *)buf, len);
  free(buf);
  rt_tensor_unref(c->outputs[0]);
  c->outputs[0] = o;
  return RT_OK;
}

static int scalar_summary_kernel(rt_kernel_ctx *c) {
  rt_tensor *tags = c->inputs[0], *vals = c->inputs[1];
  if (!rt_shape_equal(&tags->shape, &vals->shape)) {
    char a[128], b[128];
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "tags and values not the same shape: %s != %s",
                           op_shape_tf(&tags->shape, a, sizeof a), op_shape_tf(&vals->shape, b, sizeof b));
  }
  int64_t n = rt_tensor_numel(tags);
  Tensorflow__Summary__Value *v = xcalloc((size_t)n + 1, sizeof *v);
  Tensorflow__Summary__Value **pv = xcalloc((size_t)n + 1, sizeof *pv);
  char **tag = xcalloc((size_t)n + 1, sizeof *tag);
  for (int64_t i = 0; i < n; i++) {
    tensorflow__summary__value__init(&v[i]);
    tag[i] = xstrdup(str_at(tags, i));
    v[i].tag = tag[i];
    v[i].value_case = TENSORFLOW__SUMMARY__VALUE__VALUE_SIMPLE_VALUE;
    v[i].simple_value = (float)rt_tensor_get_f64(vals, i);
    pv[i] = &v[i];
  }
  int rc = summary_output(c, pv, (size_t)n);
  for (int64_t i = 0; i < n; i++) free(tag[i]);
  free(tag), free(pv), free(v);
  return rc;
}

/* ---- Print: TF1's tf.Print, to the stderr of the task that runs it ---- */

/* TF1's summary of a tensor: its first `summarize` values, space separated, in brackets,
 * "..." when there are more. */
static void print_summary(FILE *f, const rt_tensor *t, int64_t summarize) {
  int64_t n = rt_tensor_numel(t), k = summarize < 0 || summarize > n ? n : summarize;
  fputc('[', f);
  for (int64_t i = 0; i < k; i++) {
    if (i) fputc(' ', f);
    switch (t->dtype) {
    case RT_FLOAT: case RT_DOUBLE: fprintf(f, "%g", rt_tensor_get_f64(t, i)); break;
    case RT_BOOL: fputs(((const bool *)rt_tensor_data(t))[i] ? "1" : "0", f); break;
    case RT_STRING: fputs(str_at(t, i), f); break;
    default: fprintf(f, "%lld", (long long)rt_tensor_get_i64(t, i)); break;
    }
  }
  if (k < n) fputs("...", f);
  fputc(']', f);
}

static int print_kernel(rt_kernel_ctx *c) {
  const rt_attr_value *msg = rt_node_attr(c->node, "message"), *fn = rt_node_attr(c->node, "first_n"),
                      *sm = rt_node_attr(c->node, "summarize");
  int64_t first_n = fn ? fn->i : -1, summarize = sm ? sm->i : 3;
  bool show = true;
  if (first_n >= 0 && c->state) {   /* prints so far, per node (of the session when shared) */
    rt_kernel_state_lock(c);
    if (!*c->state) *c->state = xcalloc(1, sizeof(int64_t));
    int64_t *count = *c->state;
    if (count && (show = *count < first_n)) ++*count;
    rt_kernel_state_unlock(c);
    if (!count) return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  }
  if (show) {
    flockfile(stderr);
    fputs(msg && msg->s ? msg->s : "", stderr);
    for (int i = 1; i < c->n_inputs; i++) print_summary(stderr, c->inputs[i], summarize);
    fputc('\n', stderr);
    funlockfile(stderr);
    fflush(stderr);
  }
  rt_tensor_unref(c->outputs[0]);
  c->outputs[0] = rt_tensor_ref(c->inputs[0]);
  return RT_OK;
}

/* Assert: fails with "assertion failed: [d0] [d1] ..." (each data tensor's first summarize
 * values) when the condition is false, as TF's kernel words it. */
static int assert_kernel(rt_kernel_ctx *c) {
  const rt_tensor *cond = c->inputs[0];
  if (rt_tensor_numel(cond) != 1 || cond->dtype != RT_BOOL)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "In[0] expects a scalar boolean condition");
  if (((const bool *)rt_tensor_data(cond))[0]) return RT_OK;
  const rt_attr_value *sm = rt_node_attr(c->node, "summarize");
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  fputs("assertion failed: ", f);
  for (int i = 1; i < c->n_inputs; i++) {
    if (i > 1) fputc(' ', f);
    print_summary(f, c->inputs[i], sm ? sm->i : 3);
  }
  fclose(f);
  int rc = rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s", buf);
  free(buf);
  return rc;
}

/* The gradient passes through to input; data gets none. */
static int print_grad(rt_grad_ctx *c) {
  c->dx[0] = c->dy[0] ? xstrdup(c->dy[0]) : NULL;
  return RT_OK;
}

static int print_shape(rt_shape_ctx *c) {
  c->out_shapes[0] = c->in_shapes[0];
  return RT_OK;
}

/* ---- image summaries: PNG written here (zlib deflate, CRC-32 per chunk) ---- */

static void be32(bytes_buf *b, uint32_t v) {
  unsigned char c[4] = {v >> 24, (v >> 16) & 0xff, (v >> 8) & 0xff, v & 0xff};
  bytes_put(b, c, 4);
}

static void png_chunk(bytes_buf *b, const char *type, const void *d, size_t n) {
  be32(b, (uint32_t)n);
  size_t at = b->n;
  bytes_put(b, type, 4);
  bytes_put(b, d, n);
  if (!b->oom) be32(b, (uint32_t)crc32(0L, b->p + at, (uInt)(n + 4)));
}

/* An 8-bit PNG of h rows of w pixels with ch channels (1 gray, 2 gray+alpha, 3 RGB,
 * 4 RGBA); each row filtered with "None". */
static bool png_encode(bytes_buf *out, const unsigned char *px, int64_t h, int64_t w, int ch) {
  static const unsigned char color_type[5] = {0, 0, 4, 2, 6};
  size_t row = (size_t)(w * ch), raw_n = (size_t)h * (row + 1);
  unsigned char *raw = malloc(raw_n ? raw_n : 1);
  uLongf z_n = compressBound((uLong)raw_n);
  unsigned char *z = malloc(z_n);
  bool ok = raw && z;
  for (int64_t y = 0; ok && y < h; y++) {
    raw[y * (row + 1)] = 0;
    memcpy(raw + y * (row + 1) + 1, px + y * row, row);
  }
  ok = ok && compress2(z, &z_n, raw, (uLong)raw_n, 6) == Z_OK;
  if (ok) {
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    bytes_put(out, sig, 8);
    bytes_buf ihdr = {0};
    be32(&ihdr, (uint32_t)w);
    be32(&ihdr, (uint32_t)h);
    unsigned char rest[5] = {8, color_type[ch], 0, 0, 0};
    bytes_put(&ihdr, rest, 5);
    png_chunk(out, "IHDR", ihdr.p, ihdr.n);
    free(ihdr.p);
    png_chunk(out, "IDAT", z, z_n);
    png_chunk(out, "IEND", "", 0);
  }
  free(raw);
  free(z);
  return ok && !out->oom;
}

/* TF's rule for float images: all values >= 0 scale so that the largest is 255; with
 * negatives, scale by the largest magnitude into [1, 255] around 128; non-finite pixels
 * take the bad colour (red, opaque). */
static void image_to_u8(const rt_tensor *t, int64_t first, int64_t hw, int ch, unsigned char *px) {
  if (t->dtype != RT_FLOAT && t->dtype != RT_DOUBLE) {   /* integers: clamped to [0, 255] */
    for (int64_t i = 0; i < hw * ch; i++) {
      double v = rt_tensor_get_f64(t, first + i);
      px[i] = (unsigned char)(v < 0 ? 0 : v > 255 ? 255 : v);
    }
    return;
  }
  double mn = INFINITY, mx = -INFINITY;
  for (int64_t i = 0; i < hw * ch; i++) {
    double v = rt_tensor_get_f64(t, first + i);
    if (isfinite(v)) mn = v < mn ? v : mn, mx = v > mx ? v : mx;
  }
  if (mn > mx) mn = mx = 0;
  double scale, offset;
  if (mn < 0) {
    double m = fabs(mn) > fabs(mx) ? fabs(mn) : fabs(mx);
    scale = m < 1e-6 ? 0 : 127.0 / m, offset = 128;
  } else {
    scale = mx < 1e-6 ? 0 : 255.0 / mx, offset = 0;
  }
  static const unsigned char bad[4] = {255, 0, 0, 255};
  for (int64_t p = 0; p < hw; p++) {
    bool finite = true;
    for (int k = 0; k < ch; k++) finite = finite && isfinite(rt_tensor_get_f64(t, first + p * ch + k));
    for (int k = 0; k < ch; k++) {
      double v = rt_tensor_get_f64(t, first + p * ch + k) * scale + offset;
      px[p * ch + k] = finite ? (unsigned char)(v < 0 ? 0 : v > 255 ? 255 : v) : bad[k];
    }
  }
}

/* Summary.Value { tag = 1; image = 4 { height = 1; width = 2; colorspace = 3;
 * encoded_image_string = 4 } }, one per image, max_images at most. */
static int image_summary_kernel(rt_kernel_ctx *c) {
  rt_tensor *tag = c->inputs[0], *t = c->inputs[1];
  if (rt_tensor_numel(tag) != 1) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Tags must be a scalar");
  const rt_shape *s = &t->shape;
  if (s->ndims != 4 || (s->dims[3] != 1 && s->dims[3] != 2 && s->dims[3] != 3 && s->dims[3] != 4)) {
    char buf[128];
    return rt_kernel_error(c, RT_INVALID_ARGUMENT,
                           "Tensor must be 4-D with last dim 1, 3, or 4, not %s", op_shape_tf(s, buf, sizeof buf));
  }
  int64_t batch = s->dims[0], h = s->dims[1], w = s->dims[2];
  int ch = (int)s->dims[3];
  if (h < 1 || w < 1 || h > (1 << 20) || w > (1 << 20) || h * w > (1 << 28))
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "image of %lld x %lld pixels: each side must be 1..1048576",
                           (long long)h, (long long)w);
  const rt_attr_value *mi = rt_node_attr(c->node, "max_images");
  int64_t n = mi ? mi->i : 3;
  if (n > batch) n = batch;
  const char *tg = str_at(tag, 0);
  unsigned char *px = malloc((size_t)(h * w * ch));
  if (!px) return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  Tensorflow__Summary__Value *v = xcalloc((size_t)n + 1, sizeof *v), **pv = xcalloc((size_t)n + 1, sizeof *pv);
  Tensorflow__Summary__Image *img = xcalloc((size_t)n + 1, sizeof *img);
  bytes_buf *png = xcalloc((size_t)n + 1, sizeof *png);
  char (*names)[512] = xcalloc((size_t)n + 1, sizeof *names);
  int rc = RT_OK;
  for (int64_t i = 0; i < n && rc == RT_OK; i++) {
    image_to_u8(t, i * h * w * ch, h * w, ch, px);
    if (!png_encode(&png[i], px, h, w, ch)) rc = rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
    if (mi && mi->i > 1) snprintf(names[i], sizeof names[i], "%s/image/%lld", tg, (long long)i);
    else snprintf(names[i], sizeof names[i], "%s/image", tg);
    tensorflow__summary__image__init(&img[i]);
    img[i].height = (int32_t)h;
    img[i].width = (int32_t)w;
    img[i].colorspace = ch;
    img[i].encoded_image_string.data = png[i].p;
    img[i].encoded_image_string.len = png[i].n;
    tensorflow__summary__value__init(&v[i]);
    v[i].tag = names[i];
    v[i].value_case = TENSORFLOW__SUMMARY__VALUE__VALUE_IMAGE;
    v[i].image = &img[i];
    pv[i] = &v[i];
  }
  free(px);
  if (rc == RT_OK) rc = summary_output(c, pv, (size_t)n);
  for (int64_t i = 0; i < n; i++) free(png[i].p);
  free(png), free(names), free(img), free(pv), free(v);
  return rc;
}

/* TF's default histogram buckets (tensorflow/core/lib/histogram/histogram.cc): limits
 * ±1e-12 * 1.1^k up to 1e20, then DBL_MAX, mirrored around 0. */
static double *hist_limits;
static int hist_n;
static pthread_once_t hist_once = PTHREAD_ONCE_INIT;

static void hist_init(void) {
  double pos[1024];
  int np = 0;
  for (double v = 1.0e-12; v < 1.0e20; v *= 1.1) pos[np++] = v;
  pos[np++] = DBL_MAX;
  hist_n = 2 * np + 1;
  hist_limits = xmalloc((size_t)hist_n * sizeof *hist_limits);
  for (int i = 0; i < np; i++) hist_limits[i] = -pos[np - 1 - i];
  hist_limits[np] = 0.0;
  for (int i = 0; i < np; i++) hist_limits[np + 1 + i] = pos[i];
}

static int histogram_summary_kernel(rt_kernel_ctx *c) {
  pthread_once(&hist_once, hist_init);
  rt_tensor *tag = c->inputs[0], *vals = c->inputs[1];
  if (rt_tensor_numel(tag) != 1)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "tags must be scalar");
  const char *tg = str_at(tag, 0);
  int64_t n = rt_tensor_numel(vals);
  double *counts = xcalloc((size_t)hist_n, sizeof *counts);
  double mn = DBL_MAX, mx = -DBL_MAX, sum = 0, sumsq = 0;
  for (int64_t i = 0; i < n; i++) {
    double v = rt_tensor_get_f64(vals, i);
    if (!isfinite(v)) {
      free(counts);
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s in summary histogram for: %s",
                             isnan(v) ? "Nan" : "Infinity", tg);
    }
    /* bucket b holds limits[b-1] <= v < limits[b] (upper_bound) */
    int lo = 0, hi = hist_n - 1;
    while (lo < hi) {
      int mid = (lo + hi) / 2;
      if (hist_limits[mid] > v) hi = mid;
      else lo = mid + 1;
    }
    counts[lo] += 1;
    if (v < mn) mn = v;
    if (v > mx) mx = v;
    sum += v;
    sumsq += v * v;
  }
  Tensorflow__HistogramProto h = TENSORFLOW__HISTOGRAM_PROTO__INIT;
  h.min = n ? mn : 0.0;   /* TF: min/max of an empty histogram are +-DBL_MAX; keep 0 */
  h.max = n ? mx : 0.0;
  h.num = (double)n;
  h.sum = sum;
  h.sum_squares = sumsq;
  /* Histogram::EncodeToProto(preserve_zero_buckets=false): runs of empty buckets collapse */
  h.bucket_limit = xmalloc((size_t)hist_n * sizeof *h.bucket_limit);
  h.bucket = xmalloc((size_t)hist_n * sizeof *h.bucket);
  for (int i = 0; i < hist_n;) {
    double end = hist_limits[i], count = counts[i];
    i++;
    if (count <= 0.0)
      while (i < hist_n && counts[i] <= 0.0) {
        end = hist_limits[i];
        count = counts[i];
        i++;
      }
    h.bucket_limit[h.n_bucket_limit++] = end;
    h.bucket[h.n_bucket++] = count;
  }
  free(counts);
  Tensorflow__Summary__Value val = TENSORFLOW__SUMMARY__VALUE__INIT, *pv = &val;
  char *tag_copy = xstrdup(tg);
  val.tag = tag_copy;
  val.value_case = TENSORFLOW__SUMMARY__VALUE__VALUE_HISTO;
  val.histo = &h;
  int rc = summary_output(c, &pv, 1);
  free(tag_copy), free(h.bucket_limit), free(h.bucket);
  return rc;
}

/* MergeSummary: every input's Summary unpacked (protobuf-c), tags checked for duplicates,
 * the Values of all of them in one Summary. */
static int merge_summary_kernel(rt_kernel_ctx *c) {
  Tensorflow__Summary **parts = NULL;
  Tensorflow__Summary__Value **all = NULL;
  size_t n_parts = 0, n_all = 0;
  int rc = RT_OK;
  for (int i = 0; i < c->n_inputs && !rc; i++) {
    int64_t n = rt_tensor_numel(c->inputs[i]);
    const rt_str *s = rt_tensor_data(c->inputs[i]);
    for (int64_t k = 0; k < n && !rc; k++) {
      Tensorflow__Summary *sm =
          tensorflow__summary__unpack(NULL, s[k].len, (const uint8_t *)(s[k].ptr ? s[k].ptr : ""));
      if (!sm) {
        rc = rt_kernel_error(c, RT_INVALID_ARGUMENT, "Could not parse one of the summary inputs");
        break;
      }
      parts = xrealloc(parts, (n_parts + 1) * sizeof *parts);
      parts[n_parts++] = sm;
      for (size_t v = 0; v < sm->n_value && !rc; v++) {
        for (size_t j = 0; j < n_all; j++)
          if (!strcmp(all[j]->tag, sm->value[v]->tag)) {
            rc = rt_kernel_error(c, RT_INVALID_ARGUMENT, "Duplicate tag %s found in summary inputs", sm->value[v]->tag);
            break;
          }
        all = xrealloc(all, (n_all + 1) * sizeof *all);
        all[n_all++] = sm->value[v];
      }
    }
  }
  if (!rc) rc = summary_output(c, all, n_all);
  for (size_t i = 0; i < n_parts; i++) tensorflow__summary__free_unpacked(parts[i], NULL);
  free(parts);
  free(all);
  return rc;
}

static const rt_op_def io_ops[] = {
  {.name = "SaveV2",
   .inputs = "prefix: string, tensor_names: string, shape_and_slices: string, tensors: N * dtypes",
   .attrs = "N: int >= 0, dtypes: list(type)",
   .help = "Save tensors to the checkpoint PREFIX (PREFIX.index + PREFIX.data-00000-of-00001), "
           "atomically: temporary files, fsync, rename. Format: ops/CHECKPOINT.md.",
   .shape = save_shape, .kernel = {[RT_DEV_CPU] = save_kernel}, .flags = RT_OP_STATEFUL},
  {.name = "RestoreV2", .inputs = "prefix: string, tensor_names: string, shape_and_slices: string",
   .outputs = "tensors: N * dtypes", .attrs = "N: int >= 0, dtypes: list(type)",
   .help = "Read the named tensors of checkpoint PREFIX, checking each one's CRC32C.",
   .shape = restore_shape, .kernel = {[RT_DEV_CPU] = restore_kernel}, .flags = RT_OP_STATEFUL},
  {.name = "MergeV2Checkpoints", .inputs = "checkpoint_prefixes: string, destination_prefix: string",
   .attrs = "delete_old_dirs: bool = true, allow_missing_files: bool = false",
   .help = "Merge the per-device checkpoints of a sharded save into one PREFIX.index.",
   .kernel = {[RT_DEV_CPU] = merge_kernel}, .flags = RT_OP_STATEFUL},
  {.name = "StringJoin", .inputs = "inputs: N * string", .outputs = "output: string",
   .attrs = "N: int >= 1, separator: string = ''", .help = "Join scalar strings.",
   .shape = scalar_out_shape, .kernel = {[RT_DEV_CPU] = string_join_kernel}},
  {.name = "ShardedFilename", .inputs = "basename: string, shard: int32, num_shards: int32",
   .outputs = "filename: string", .help = "BASENAME-SSSSS-of-NNNNN.",
   .shape = scalar_out_shape, .kernel = {[RT_DEV_CPU] = sharded_filename_kernel}},
  {.name = "ScalarSummary", .inputs = "tags: string, values: T", .outputs = "summary: string",
   .attrs = "T: {float, double, int32, int64}",
   .help = "A serialized Summary protobuf with one simple_value per tag.",
   .shape = scalar_out_shape, .kernel = {[RT_DEV_CPU] = scalar_summary_kernel}, .flags = RT_OP_STATEFUL},
  {.name = "HistogramSummary", .inputs = "tag: string, values: T", .outputs = "summary: string",
   .attrs = "T: {float, double, int32, int64}",
   .help = "A serialized Summary protobuf holding a histogram of the values (TF's buckets).",
   .shape = scalar_out_shape, .kernel = {[RT_DEV_CPU] = histogram_summary_kernel}, .flags = RT_OP_STATEFUL},
  {.name = "Assert", .inputs = "condition: bool, data: N * T", .attrs = "N: int >= 0, T: list(type), summarize: int = 3",
   .help = "Fail (InvalidArgument, naming the first summarize values of each data tensor) unless condition holds.",
   .kernel = {[RT_DEV_CPU] = assert_kernel}, .flags = RT_OP_STATEFUL},
  {.name = "Print", .inputs = "input: T, data: N * U", .outputs = "output: T",
   .attrs = "T: type, N: int >= 0, U: list(type), message: string = '', first_n: int = -1, summarize: int = 3",
   .help = "input, unchanged; prints message and the first values of each data tensor to stderr where it runs.",
   .shape = print_shape, .kernel = {[RT_DEV_CPU] = print_kernel}, .grad = print_grad,
   .flags = RT_OP_STATEFUL},
  {.name = "ImageSummary", .inputs = "tag: string, tensor: T", .outputs = "summary: string",
   .attrs = "max_images: int >= 1 = 3, T: {float, double, int32, int64, uint8}",
   .help = "A serialized Summary protobuf with up to max_images PNG images from a [batch, h, w, c] tensor.",
   .shape = scalar_out_shape, .kernel = {[RT_DEV_CPU] = image_summary_kernel}, .flags = RT_OP_STATEFUL},
  {.name = "MergeSummary", .inputs = "inputs: N * string", .outputs = "summary: string",
   .attrs = "N: int >= 1", .help = "Merge serialized Summary protobufs (tags must be unique).",
   .shape = scalar_out_shape, .kernel = {[RT_DEV_CPU] = merge_summary_kernel}, .flags = RT_OP_STATEFUL},
};

void op_io_register(void) { rt_op_register(io_ops, OP_COUNT(io_ops)); }
