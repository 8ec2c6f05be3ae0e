/* Data helpers for the training prelude (shell/tf/train.py.inc): reading MNIST-style IDX
 * files (gzipped or not) into ndarrays, one-hot encoding, seeded permutations and row
 * gathers for DataSet.next_batch, and host-side random arrays for initializers. The
 * DataSet logic itself is in the prelude; the heavy lifting is here.
 *
 * Registered by tf_data_add(tf) as private functions of the tensorflow module (_idx_read,
 * _data_perm, _host_random, _op_registered), plus
 * the module chain tensorflow.examples.tutorials.mnist.input_data, which the prelude fills
 * with read_data_sets and DataSet. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "runtime/op.h"
#include "shell/tf/tf.h"


/* ---- a small seeded generator: splitmix64 to seed, xoshiro256** to draw ------------- */

typedef struct rng { uint64_t s[4]; } rng;

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static void rng_seed(rng *r, uint64_t seed) {
  for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t rng_next(rng *r) {
  uint64_t *s = r->s;
  uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

/* uniform in [0, 1) with 53 bits */
static double rng_uniform(rng *r) { return (double)(rng_next(r) >> 11) * 0x1.0p-53; }

/* uniform integer in [0, n) without modulo bias */
static uint64_t rng_below(rng *r, uint64_t n) {
  uint64_t lim = UINT64_MAX - UINT64_MAX % n;
  uint64_t x;
  do x = rng_next(r); while (x >= lim);
  return x % n;
}

static double rng_normal(rng *r) {
  double u1, u2;
  do u1 = rng_uniform(r); while (u1 <= 0.0);
  u2 = rng_uniform(r);
  return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

static uint64_t seed_from(sh_obj *seed, bool *ok) {
  *ok = true;
  if (!seed || seed == SH_NONE) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000007ULL ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)(uintptr_t)&ts << 16);
  }
  int64_t v;
  if (sh_as_int(seed, &v) < 0) { *ok = false; return 0; }
  return (uint64_t)v;
}

/* ---- IDX files -------------------------------------------------------------------- */

/* Read exactly n bytes; returns the count read (short on EOF or error). */
static int64_t gz_read_all(gzFile f, void *buf, int64_t n) {
  int64_t got = 0;
  unsigned char *p = buf;
  while (got < n) {
    unsigned chunk = (unsigned)((n - got) > (1 << 30) ? (1 << 30) : (n - got));
    int r = gzread(f, p + got, chunk);
    if (r <= 0) break;
    got += r;
  }
  return got;
}

static uint32_t be32(const unsigned char *b) {
  return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

/* _idx_read(path, kind, reshape=True, scale=True) where kind is "images" or "labels".
 * images: float32 [n, rows*cols] (reshape) or [n, rows, cols, 1], scaled to [0, 1] when
 * scale (else uint8 0..255). labels: int64 [n]. Errors name the file and what was wrong. */
static sh_obj *f_idx_read(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *path_o, *kind_o, *reshape_o = NULL, *scale_o = NULL;
  if (sh_parse_args("_idx_read", argc, argv, kw, "path kind |reshape scale", &path_o, &kind_o, &reshape_o,
                    &scale_o) < 0)
    return NULL;
  const char *path = sh_as_cstr(path_o), *kind = sh_as_cstr(kind_o);
  if (!path || !kind) return NULL;
  bool images = !strcmp(kind, "images");
  bool reshape = !reshape_o || sh_truth(reshape_o) > 0;
  bool scale = !scale_o || sh_truth(scale_o) > 0;
  FILE *probe = fopen(path, "rb");
  if (!probe) {
    int e = errno;
    if (e == ENOENT)
      return sh_raise(sh_FileNotFoundError,
                      "[Errno 2] No such file or directory: '%s' (tfsh never downloads: put the MNIST IDX "
                      "files there, e.g. Debian's dataset-fashion-mnist installs Fashion-MNIST under "
                      "/usr/share/datasets/fashion-mnist)", path);
    return sh_raise(sh_OSError, "[Errno %d] %s: '%s'", e, strerror(e), path);
  }
  fclose(probe);
  gzFile f = gzopen(path, "rb");
  if (!f) return sh_raise(sh_OSError, "cannot open '%s': %s", path, strerror(errno ? errno : EIO));
  gzbuffer(f, 1 << 18);
  unsigned char hdr[16];
  int64_t want_hdr = images ? 16 : 8;
  int64_t got = gz_read_all(f, hdr, want_hdr);
  sh_obj *result = NULL;
  int gzerr = 0;
  const char *zmsg = NULL;
  if (got < want_hdr) {
    zmsg = gzerror(f, &gzerr);
    if (gzerr != Z_OK && gzerr != Z_BUF_ERROR)
      sh_raise(sh_ValueError, "corrupt gzip data in MNIST %s file %s: %s", kind, path, zmsg);
    else
      sh_raise(sh_ValueError, "truncated MNIST %s file %s: %lld bytes of header, expected %lld", kind, path,
               (long long)got, (long long)want_hdr);
    goto out;
  }
  uint32_t magic = be32(hdr);
  if (magic != (images ? 2051u : 2049u)) {
    sh_raise(sh_ValueError, "Invalid magic number %u in MNIST %s file: %s", magic, images ? "image" : "label",
             path);
    goto out;
  }
  int64_t n = be32(hdr + 4);
  int64_t rows = images ? be32(hdr + 8) : 1, cols = images ? be32(hdr + 12) : 1;
  if (n <= 0 || rows <= 0 || cols <= 0 || rows > 4096 || cols > 4096 || n > (1LL << 31)) {
    sh_raise(sh_ValueError, "implausible dimensions in MNIST %s file %s: %lld x %lld x %lld", kind, path,
             (long long)n, (long long)rows, (long long)cols);
    goto out;
  }
  int64_t per = rows * cols, total = n * per;
  unsigned char *raw = malloc((size_t)total);
  if (!raw) { sh_raise(sh_ValueError, "out of memory reading %s", path); goto out; }
  got = gz_read_all(f, raw, total);
  if (got < total) {
    zmsg = gzerror(f, &gzerr);
    if (gzerr != Z_OK && gzerr != Z_BUF_ERROR)
      sh_raise(sh_ValueError, "corrupt gzip data in MNIST %s file %s: %s", kind, path, zmsg);
    else
      sh_raise(sh_ValueError, "truncated MNIST %s file %s: %lld of %lld data bytes (%lld %s)", kind, path,
               (long long)got, (long long)total, (long long)n, kind);
    free(raw);
    goto out;
  }
  /* trailing garbage or a bad CRC shows up on the next read */
  unsigned char extra;
  if (gzread(f, &extra, 1) < 0) {
    zmsg = gzerror(f, &gzerr);
    sh_raise(sh_ValueError, "corrupt gzip data in MNIST %s file %s: %s", kind, path, zmsg);
    free(raw);
    goto out;
  }
  rt_tensor *t;
  if (images) {
    int64_t d4[4] = {n, rows, cols, 1}, d2[2] = {n, per};
    rt_shape s = reshape ? rt_shape_make(2, d2) : rt_shape_make(4, d4);
    t = rt_tensor_new_uninit(scale ? RT_FLOAT : RT_UINT8, &s);   /* unscaled: read_data_sets(dtype=uint8) */
    if (t && !scale) {
      memcpy(rt_tensor_data(t), raw, (size_t)total);
    } else if (t) {
      float *o = rt_tensor_data(t);
      for (int64_t i = 0; i < total; i++) o[i] = (float)raw[i] * (1.0f / 255.0f);
    }
  } else {
    rt_shape s = rt_shape_make(1, &n);
    t = rt_tensor_new_uninit(RT_INT64, &s);
    if (t) {
      int64_t *o = rt_tensor_data(t);
      for (int64_t i = 0; i < n; i++) o[i] = raw[i];
    }
  }
  free(raw);
  result = np_wrap(t);
out:
  gzclose(f);
  return result;
}

/* _data_perm(n, seed) -> int64 [n]: a permutation of range(n) (Fisher-Yates). */
static sh_obj *f_perm(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *n_o, *seed = NULL;
  if (sh_parse_args("_data_perm", argc, argv, kw, "n |seed", &n_o, &seed) < 0) return NULL;
  int64_t n;
  bool ok;
  if (sh_as_int(n_o, &n) < 0) return NULL;
  if (n < 0) return sh_raise(sh_ValueError, "_data_perm: negative size %lld", (long long)n);
  uint64_t s = seed_from(seed, &ok);
  if (!ok) return NULL;
  rng r;
  rng_seed(&r, s);
  rt_shape sh = rt_shape_make(1, &n);
  rt_tensor *t = rt_tensor_new_uninit(RT_INT64, &sh);
  if (!t) return sh_raise(sh_ValueError, "out of memory");
  int64_t *p = rt_tensor_data(t);
  for (int64_t i = 0; i < n; i++) p[i] = i;
  for (int64_t i = n - 1; i > 0; i--) {
    int64_t j = (int64_t)rng_below(&r, (uint64_t)i + 1);
    int64_t tmp = p[i];
    p[i] = p[j];
    p[j] = tmp;
  }
  return np_wrap(t);
}

/* _host_random(kind, shape, a, b, dtype, seed): "normal" (mean a, stddev b), "truncated"
 * (normal redrawn beyond two stddevs), "uniform" ([a, b)). For initializers while the
 * runtime has no random ops registered: the values become a Const. */
static sh_obj *f_host_random(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *kind_o, *shape_o, *a_o, *b_o, *dtype_o = NULL, *seed = NULL;
  if (sh_parse_args("_host_random", argc, argv, kw, "kind shape a b |dtype seed", &kind_o, &shape_o, &a_o, &b_o,
                    &dtype_o, &seed) < 0)
    return NULL;
  const char *kind = sh_as_cstr(kind_o);
  double a, b;
  if (!kind || sh_as_double(a_o, &a) < 0 || sh_as_double(b_o, &b) < 0) return NULL;
  rt_shape s;
  if (tf_shape_from_obj(shape_o, &s) < 0) return NULL;
  if (!rt_shape_fully_known(&s)) return sh_raise(sh_ValueError, "_host_random: the shape must be fully known");
  rt_dtype t = np_dtype_of(dtype_o);
  if (t == RT_INVALID) t = RT_FLOAT;
  if (t != RT_FLOAT && t != RT_DOUBLE)
    return sh_raise(sh_TypeError, "random initializers need a float dtype, not %s", rt_dtype_name(t));
  bool ok;
  uint64_t sd = seed_from(seed, &ok);
  if (!ok) return NULL;
  rng r;
  rng_seed(&r, sd);
  rt_tensor *x = rt_tensor_new_uninit(t, &s);
  if (!x) return sh_raise(sh_ValueError, "out of memory");
  int64_t n = rt_tensor_numel(x);
  int k = !strcmp(kind, "normal") ? 0 : !strcmp(kind, "truncated") ? 1 : !strcmp(kind, "uniform") ? 2 : -1;
  if (k < 0) {
    rt_tensor_unref(x);
    return sh_raise(sh_ValueError, "_host_random: unknown kind '%s'", kind);
  }
  for (int64_t i = 0; i < n; i++) {
    double v;
    if (k == 2) {
      v = a + (b - a) * rng_uniform(&r);
    } else {
      double z;
      do z = rng_normal(&r); while (k == 1 && fabs(z) > 2.0);
      v = a + b * z;
    }
    if (t == RT_FLOAT) ((float *)rt_tensor_data(x))[i] = (float)v;
    else ((double *)rt_tensor_data(x))[i] = v;
  }
  return np_wrap(x);
}

/* _op_registered(name) -> bool */
static sh_obj *f_op_registered(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *name;
  if (sh_parse_args("_op_registered", argc, argv, kw, "name", &name) < 0) return NULL;
  const char *s = sh_as_cstr(name);
  if (!s) return NULL;
  return sh_bool(rt_op_find(s) != NULL);
}

/* _graph_seed() -> the default graph's tf.set_random_seed value, or None; _graph_size() ->
 * its node count (TF1 uses it as the op seed when only the graph seed is set). */
static sh_obj *f_graph_seed(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  if (sh_parse_args("_graph_seed", argc, argv, kw, "") < 0) return NULL;
  int64_t s = tf_graph_seed(tf_default_graph());
  return s < 0 ? sh_none() : sh_int(s);
}
static sh_obj *f_graph_size(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  if (sh_parse_args("_graph_size", argc, argv, kw, "") < 0) return NULL;
  return sh_int(tf_rt(tf_default_graph())->n_nodes);
}

/* _ctx_enter(mgr) / _ctx_exit(mgr): enter and leave a native context manager (name_scope,
 * colocate_with, ...) from a prelude class's __enter__ / __exit__. */
static sh_obj *f_ctx_enter(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *m;
  if (sh_parse_args("_ctx_enter", argc, argv, kw, "mgr", &m) < 0) return NULL;
  return sh_call_method(m, "__enter__", 0, NULL, NULL);
}
static sh_obj *f_ctx_exit(sh_obj *self, int argc, sh_obj **argv, sh_obj *kw) {
  sh_obj *m;
  if (sh_parse_args("_ctx_exit", argc, argv, kw, "mgr", &m) < 0) return NULL;
  sh_obj *none3[3] = {SH_NONE, SH_NONE, SH_NONE};
  sh_obj *r = sh_call_method(m, "__exit__", 3, none3, NULL);
  if (!r) return NULL;
  sh_decref(r);
  return sh_none();
}

static const sh_method data_funcs[] = {
  {"_ctx_enter", f_ctx_enter, "_ctx_enter(mgr)", "Enter a context manager (internal)."},
  {"_ctx_exit", f_ctx_exit, "_ctx_exit(mgr)", "Leave a context manager (internal)."},
  {"_graph_seed", f_graph_seed, "_graph_seed()", "The graph-level seed or None (internal)."},
  {"_graph_size", f_graph_size, "_graph_size()", "Nodes in the default graph (internal)."},
  {"_idx_read", f_idx_read, "_idx_read(path, kind, reshape=True, scale=True)", "Read an IDX images/labels file (gzip or plain) into an ndarray (internal)."},
  {"_data_perm", f_perm, "_data_perm(n, seed=None)", "A seeded permutation of range(n) as int64 (internal)."},
  {"_host_random", f_host_random, "_host_random(kind, shape, a, b, dtype=float32, seed=None)", "Seeded random array (internal)."},
  {"_op_registered", f_op_registered, "_op_registered(name)", "Whether an op type is registered (internal)."},
  {NULL},
};

void tf_data_add(sh_obj *tf) {
  sh_module_add_funcs(tf, data_funcs);
  /* tensorflow.examples.tutorials.mnist.input_data: filled in by the prelude */
  sh_obj *examples = sh_module_new("tensorflow.examples");
  sh_obj *tutorials = sh_module_new("tensorflow.examples.tutorials");
  sh_obj *mnist = sh_module_new("tensorflow.examples.tutorials.mnist");
  sh_obj *input_data = sh_module_new("tensorflow.examples.tutorials.mnist.input_data");
  sh_module_add_sub(mnist, "input_data", input_data);
  sh_module_add_sub(tutorials, "mnist", mnist);
  sh_module_add_sub(examples, "tutorials", tutorials);
  sh_module_add_sub(tf, "examples", examples);
  /* namespaces the prelude fills: tf.losses, tf.layers, tf.initializers,
   * tf.contrib.layers */
  static const char *const subs[][2] = {
    {"losses", "tensorflow.losses"}, {"layers", "tensorflow.layers"},
    {"initializers", "tensorflow.initializers"},
  };
  for (size_t i = 0; i < sizeof subs / sizeof *subs; i++) {
    sh_obj *have = sh_getattr_opt(tf, subs[i][0]);
    if (have) { sh_decref(have); continue; }
    sh_module_add_sub(tf, subs[i][0], sh_module_new(subs[i][1]));
  }
  sh_obj *contrib = sh_getattr_opt(tf, "contrib");
  if (contrib) {
    static const char *const mods[] = {"layers", "slim"};
    for (size_t i = 0; i < sizeof mods / sizeof *mods; i++) {
      sh_obj *have = sh_getattr_opt(contrib, mods[i]);
      char full[64];
      snprintf(full, sizeof full, "tensorflow.contrib.%s", mods[i]);
      if (have) sh_decref(have);
      else sh_module_add_sub(contrib, mods[i], sh_module_new(full));
    }
    /* tensorflow.contrib.learn.python.learn.datasets.mnist (read_data_sets: the prelude),
     * which TF's convert_to_records.py imports */
    static const char *const chain[] = {"learn", "python", "learn", "datasets", "mnist"};
    sh_obj *at = contrib;
    char full[128] = "tensorflow.contrib";
    for (size_t i = 0; i < sizeof chain / sizeof *chain; i++) {
      snprintf(full + strlen(full), sizeof full - strlen(full), ".%s", chain[i]);
      sh_obj *sub = sh_module_new(full);
      sh_module_add_sub(at, chain[i], sub);
      at = sub;
    }
    sh_decref(contrib);
  }
}
