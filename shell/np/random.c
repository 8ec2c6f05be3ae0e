/* numpy.random: the legacy RandomState (MT19937) that TF1-era scripts seed and draw feeds
 * from, drawing exactly the numbers numpy draws for the same seed: MT19937 seeded as
 * numpy seeds it from an int, doubles from two 32-bit draws (53 bits), the polar
 * Box-Muller Gaussian with its cached second value, and bounded integers by masked
 * rejection. np.random.* functions use one module-wide RandomState. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "shell/np/np.h"

#define ARGS sh_obj *self, int argc, sh_obj **argv, sh_obj *kw
enum { MT_N = 624, MT_M = 397 };

typedef struct rstate {
  sh_obj head;
  uint32_t key[MT_N];
  int pos;
  bool has_gauss;
  double gauss;
} rstate;

static void mt_seed(rstate *r, uint32_t s) {
  for (int i = 0; i < MT_N; i++) {
    r->key[i] = s;
    s = 1812433253u * (s ^ (s >> 30)) + (uint32_t)i + 1;
  }
  r->pos = MT_N;
  r->has_gauss = false;
  r->gauss = 0;
}

static void mt_twist(rstate *r) {
  for (int i = 0; i < MT_N; i++) {
    uint32_t y = (r->key[i] & 0x80000000u) | (r->key[(i + 1) % MT_N] & 0x7fffffffu);
    r->key[i] = r->key[(i + MT_M) % MT_N] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
  }
  r->pos = 0;
}

static uint32_t next32(rstate *r) {
  if (r->pos == MT_N) mt_twist(r);
  uint32_t y = r->key[r->pos++];
  y ^= y >> 11;
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  return y ^ (y >> 18);
}

static uint64_t next64(rstate *r) {
  uint64_t hi = next32(r);
  return hi << 32 | next32(r);
}

static double next_double(rstate *r) {
  int32_t a = (int32_t)(next32(r) >> 5), b = (int32_t)(next32(r) >> 6);
  return (a * 67108864.0 + b) / 9007199254740992.0;
}

static double gauss(rstate *r) {
  if (r->has_gauss) {
    r->has_gauss = false;
    return r->gauss;
  }
  double x1, x2, r2;
  do {
    x1 = 2.0 * next_double(r) - 1.0;
    x2 = 2.0 * next_double(r) - 1.0;
    r2 = x1 * x1 + x2 * x2;
  } while (r2 >= 1.0 || r2 == 0.0);
  double f = sqrt(-2.0 * log(r2) / r2);
  r->gauss = f * x1;
  r->has_gauss = true;
  return f * x2;
}

/* A value in [0, max] by masked rejection (32-bit draws while max fits in them). */
static uint64_t interval(rstate *r, uint64_t max) {
  if (max == 0) return 0;
  uint64_t mask = max, v;
  for (int s = 1; s < 64; s <<= 1) mask |= mask >> s;
  if (max <= 0xffffffffu) {
    while ((v = (next32(r) & mask)) > max) {}
  } else {
    while ((v = (next64(r) & mask)) > max) {}
  }
  return v;
}

/* ---- arguments ------------------------------------------------------------------------ */

/* size: None (*scalar = true), an int, or a tuple/list of ints. */
static int size_arg(sh_obj *size, rt_shape *s, bool *scalar) {
  *scalar = !size || size == SH_NONE;
  s->ndims = 0;
  if (*scalar) return 0;
  if (sh_is_int(size)) {
    int64_t n = sh_int_value(size);
    if (n < 0) { sh_raise(sh_ValueError, "negative dimensions are not allowed"); return -1; }
    *s = rt_shape_make(1, &n);
    return 0;
  }
  sh_obj *l = sh_sequence_to_list(size);
  if (!l) return -1;
  int64_t nd = SH_LIST_N(l), dims[RT_MAX_DIMS];
  if (nd > RT_MAX_DIMS) { sh_decref(l); sh_raise(sh_ValueError, "at most %d dimensions", RT_MAX_DIMS); return -1; }
  for (int64_t i = 0; i < nd; i++) {
    int64_t d;
    if (sh_as_int(SH_LIST_ITEMS(l)[i], &d) < 0 || d < 0) {
      sh_decref(l);
      if (!sh_err_occurred()) sh_raise(sh_ValueError, "negative dimensions are not allowed");
      return -1;
    }
    dims[i] = d;
  }
  sh_decref(l);
  *s = rt_shape_make((int)nd, dims);
  return 0;
}

/* rand(d0, d1, ...) / randn(...): the dimensions as positional ints. */
static int dims_args(const char *fn, int argc, sh_obj **argv, sh_obj *kw, rt_shape *s, bool *scalar) {
  if (kw && sh_dict_len(kw)) { sh_raise(sh_TypeError, "%s() takes no keyword arguments", fn); return -1; }
  *scalar = argc == 0;
  int64_t dims[RT_MAX_DIMS];
  if (argc > RT_MAX_DIMS) { sh_raise(sh_ValueError, "at most %d dimensions", RT_MAX_DIMS); return -1; }
  for (int i = 0; i < argc; i++)
    if (sh_as_int(argv[i], &dims[i]) < 0) return -1;
    else if (dims[i] < 0) { sh_raise(sh_ValueError, "negative dimensions are not allowed"); return -1; }
  *s = rt_shape_make(argc, dims);
  return 0;
}

typedef double (*draw_fn)(rstate *r, double a, double b);
static double draw_uniform(rstate *r, double lo, double span) { return lo + span * next_double(r); }
static double draw_normal(rstate *r, double loc, double scale) { return loc + scale * gauss(r); }

static sh_obj *doubles(rstate *r, const rt_shape *s, bool scalar, draw_fn f, double a, double b) {
  if (scalar) return sh_float(f(r, a, b));
  rt_tensor *t = rt_tensor_new(RT_DOUBLE, s);
  if (!t) return sh_raise(sh_ValueError, "cannot allocate %lld doubles", (long long)rt_shape_numel(s));
  double *v = rt_tensor_data(t);
  for (int64_t i = 0; i < rt_shape_numel(s); i++) v[i] = f(r, a, b);
  return np_wrap(t);
}

static rstate *global_state(void);
static rstate *st_of(sh_obj *self);

/* ---- methods (RandomState and the module share them) ---------------------------------- */

static sh_obj *m_seed(ARGS) {
  sh_obj *seed = NULL;
  if (sh_parse_args("seed", argc, argv, kw, "|seed", &seed) < 0) return NULL;
  rstate *r = st_of(self);
  if (!seed || seed == SH_NONE) {
    uint32_t s = (uint32_t)time(NULL) ^ (uint32_t)getpid() * 2654435761u ^ (uint32_t)clock();
    FILE *f = fopen("/dev/urandom", "rb");
    if (f) {
      if (fread(&s, sizeof s, 1, f) != 1) s ^= 0x5bd1e995u;
      fclose(f);
    }
    mt_seed(r, s);
    return sh_none();
  }
  int64_t v;
  if (sh_as_int(seed, &v) < 0) return NULL;
  if (v < 0 || v > 0xffffffffLL) return sh_raise(sh_ValueError, "Seed must be between 0 and 2**32 - 1");
  mt_seed(r, (uint32_t)v);
  return sh_none();
}

static sh_obj *m_rand(ARGS) {
  rt_shape s;
  bool scalar;
  if (dims_args("rand", argc, argv, kw, &s, &scalar) < 0) return NULL;
  return doubles(st_of(self), &s, scalar, draw_uniform, 0, 1);
}

static sh_obj *m_randn(ARGS) {
  rt_shape s;
  bool scalar;
  if (dims_args("randn", argc, argv, kw, &s, &scalar) < 0) return NULL;
  return doubles(st_of(self), &s, scalar, draw_normal, 0, 1);
}

static sh_obj *m_random_sample(ARGS) {
  sh_obj *size = NULL;
  if (sh_parse_args("random_sample", argc, argv, kw, "|size", &size) < 0) return NULL;
  rt_shape s;
  bool scalar;
  if (size_arg(size, &s, &scalar) < 0) return NULL;
  return doubles(st_of(self), &s, scalar, draw_uniform, 0, 1);
}

static sh_obj *two_params(const char *fn, draw_fn f, bool span, double da, double db, ARGS) {
  sh_obj *a = NULL, *b = NULL, *size = NULL;
  const char *spec = span ? "|low high size" : "|loc scale size";
  if (sh_parse_args(fn, argc, argv, kw, spec, &a, &b, &size) < 0) return NULL;
  double x = da, y = db;
  if ((a && a != SH_NONE && sh_as_double(a, &x) < 0) || (b && b != SH_NONE && sh_as_double(b, &y) < 0))
    return NULL;
  if (!span && y < 0) return sh_raise(sh_ValueError, "scale < 0");
  rt_shape s;
  bool scalar;
  if (size_arg(size, &s, &scalar) < 0) return NULL;
  return doubles(st_of(self), &s, scalar, f, x, span ? y - x : y);
}

static sh_obj *m_uniform(ARGS) { return two_params("uniform", draw_uniform, true, 0, 1, self, argc, argv, kw); }
static sh_obj *m_normal(ARGS) { return two_params("normal", draw_normal, false, 0, 1, self, argc, argv, kw); }

static sh_obj *m_randint(ARGS) {
  sh_obj *lo = NULL, *hi = NULL, *size = NULL, *dt = NULL;
  if (sh_parse_args("randint", argc, argv, kw, "low |high size dtype", &lo, &hi, &size, &dt) < 0) return NULL;
  int64_t low, high;
  if (sh_as_int(lo, &low) < 0) return NULL;
  if (!hi || hi == SH_NONE) high = low, low = 0;
  else if (sh_as_int(hi, &high) < 0) return NULL;
  if (low >= high) return sh_raise(sh_ValueError, "low >= high");
  rt_dtype t = dt && dt != SH_NONE ? np_dtype_of(dt) : RT_INT64;
  if (t != RT_INT64 && t != RT_INT32) return sh_raise(sh_TypeError, "randint: dtype must be int32 or int64");
  rt_shape s;
  bool scalar;
  if (size_arg(size, &s, &scalar) < 0) return NULL;
  rstate *r = st_of(self);
  uint64_t rng = (uint64_t)high - (uint64_t)low - 1;
  if (scalar) return sh_int(low + (int64_t)interval(r, rng));
  rt_tensor *x = rt_tensor_new(t, &s);
  for (int64_t i = 0; i < rt_shape_numel(&s); i++) {
    int64_t v = low + (int64_t)interval(r, rng);
    if (t == RT_INT64) ((int64_t *)rt_tensor_data(x))[i] = v;
    else ((int32_t *)rt_tensor_data(x))[i] = (int32_t)v;
  }
  return np_wrap(x);
}

/* Fisher-Yates over the first axis, from the end, as numpy's legacy shuffle. */
static void shuffle_rows(rstate *r, char *p, int64_t n, size_t row) {
  char tmp[256], *buf = row > sizeof tmp ? xmalloc(row) : tmp;
  for (int64_t i = n - 1; i >= 1; i--) {
    int64_t j = (int64_t)interval(r, (uint64_t)i);
    memcpy(buf, p + i * row, row);
    memcpy(p + i * row, p + j * row, row);
    memcpy(p + j * row, buf, row);
  }
  if (buf != tmp) free(buf);
}

static sh_obj *m_shuffle(ARGS) {
  sh_obj *x;
  if (sh_parse_args("shuffle", argc, argv, kw, "x", &x) < 0) return NULL;
  rstate *r = st_of(self);
  if (np_check(x)) {
    rt_tensor *t = ((np_array *)x)->t;
    if (t->shape.ndims == 0) return sh_raise(sh_TypeError, "object of type 'numpy.ndarray' has no len()");
    if (t->dtype == RT_STRING) return sh_raise(sh_TypeError, "shuffle: string arrays are not supported");
    int64_t n = t->shape.dims[0];
    size_t row = n ? (size_t)(rt_tensor_numel(t) / n) * rt_dtype_size(t->dtype) : 0;
    shuffle_rows(r, rt_tensor_data(t), n, row);
    return sh_none();
  }
  if (x->type != &sh_list_type) return sh_raise(sh_TypeError, "shuffle: expected a list or an ndarray");
  shuffle_rows(r, (char *)SH_LIST_ITEMS(x), SH_LIST_N(x), sizeof(sh_obj *));
  return sh_none();
}

static sh_obj *m_permutation(ARGS) {
  sh_obj *x;
  if (sh_parse_args("permutation", argc, argv, kw, "x", &x) < 0) return NULL;
  rt_tensor *t;
  if (sh_is_int(x)) {
    int64_t n = sh_int_value(x);
    if (n < 0) return sh_raise(sh_ValueError, "negative dimensions are not allowed");
    rt_shape s = rt_shape_make(1, &n);
    t = rt_tensor_new(RT_INT64, &s);
    for (int64_t i = 0; i < n; i++) ((int64_t *)rt_tensor_data(t))[i] = i;
  } else {
    rt_tensor *src = np_check(x) ? rt_tensor_ref(((np_array *)x)->t) : np_to_tensor(x, RT_INVALID, true);
    if (!src) return NULL;
    if (src->shape.ndims == 0 || src->dtype == RT_STRING) {
      bool scalar = src->shape.ndims == 0;
      rt_tensor_unref(src);
      return scalar ? sh_raise(sh_IndexError, "x must be an integer or at least 1-dimensional")
                    : sh_raise(sh_TypeError, "permutation: string arrays are not supported");
    }
    t = rt_tensor_new(src->dtype, &src->shape);
    memcpy(rt_tensor_data(t), rt_tensor_data(src), (size_t)rt_tensor_numel(src) * rt_dtype_size(src->dtype));
    rt_tensor_unref(src);
  }
  int64_t n = t->shape.dims[0];
  size_t row = n ? (size_t)(rt_tensor_numel(t) / n) * rt_dtype_size(t->dtype) : 0;
  shuffle_rows(st_of(self), rt_tensor_data(t), n, row);
  return np_wrap(t);
}

/* choice(a, size=None, replace=True, p=None): a is an int (arange(a)) or a 1-D array. */
static sh_obj *m_choice(ARGS) {
  sh_obj *a, *size = NULL, *replace = NULL, *p = NULL;
  if (sh_parse_args("choice", argc, argv, kw, "a |size replace p", &a, &size, &replace, &p) < 0) return NULL;
  rstate *r = st_of(self);
  rt_tensor *pop = NULL;
  int64_t n;
  if (sh_is_int(a)) {
    n = sh_int_value(a);
  } else {
    pop = np_check(a) ? rt_tensor_ref(((np_array *)a)->t) : np_to_tensor(a, RT_INVALID, true);
    if (!pop) return NULL;
    if (pop->shape.ndims != 1 || pop->dtype == RT_STRING) {
      rt_tensor_unref(pop);
      return sh_raise(sh_ValueError, "a must be 1-dimensional");
    }
    n = pop->shape.dims[0];
  }
  if (n <= 0) {
    rt_tensor_unref(pop);
    return sh_raise(sh_ValueError, "a must be greater than 0 unless no samples are taken");
  }
  rt_shape s;
  bool scalar;
  if (size_arg(size, &s, &scalar) < 0) { rt_tensor_unref(pop); return NULL; }
  int64_t k = scalar ? 1 : rt_shape_numel(&s);
  int64_t *idx = malloc((size_t)(k ? k : 1) * sizeof *idx);   /* sized by the caller: checked */
  if (!idx) {
    rt_tensor_unref(pop);
    return sh_raise(sh_ValueError, "choice: out of memory for %lld samples", (long long)k);
  }
  bool repl = !replace || sh_truth(replace) > 0;
  int rc = 0;
  if (p && p != SH_NONE) {   /* cumulative weights, then a uniform draw each, searched */
    rt_tensor *pt = np_to_tensor(p, RT_DOUBLE, true);
    if (!pt || rt_tensor_numel(pt) != n || !repl) {
      if (pt) sh_raise(sh_ValueError, !repl ? "choice: replace=False with p is not supported"
                                            : "a and p must have same size");
      rc = -1;
    } else {
      double *cdf = xmalloc((size_t)n * sizeof *cdf), acc = 0;
      for (int64_t i = 0; i < n; i++) cdf[i] = acc += ((double *)rt_tensor_data(pt))[i];
      for (int64_t i = 0; i < n; i++) cdf[i] /= acc;
      for (int64_t j = 0; j < k; j++) {
        double u = next_double(r);
        int64_t lo = 0, hi = n;
        while (lo < hi) {
          int64_t mid = (lo + hi) / 2;
          if (cdf[mid] <= u) lo = mid + 1;
          else hi = mid;
        }
        idx[j] = lo < n ? lo : n - 1;
      }
      free(cdf);
    }
    rt_tensor_unref(pt);
  } else if (repl) {
    for (int64_t j = 0; j < k; j++) idx[j] = (int64_t)interval(r, (uint64_t)n - 1);
  } else if (k > n) {
    sh_raise(sh_ValueError, "Cannot take a larger sample than population when 'replace=False'");
    rc = -1;
  } else {   /* the first k of a permutation */
    int64_t *perm = xmalloc((size_t)n * sizeof *perm);
    for (int64_t i = 0; i < n; i++) perm[i] = i;
    shuffle_rows(r, (char *)perm, n, sizeof *perm);
    memcpy(idx, perm, (size_t)k * sizeof *idx);
    free(perm);
  }
  sh_obj *out = NULL;
  if (rc == 0) {
    rt_dtype dt = pop ? pop->dtype : RT_INT64;
    size_t es = rt_dtype_size(dt);
    rt_tensor *o = rt_tensor_new(dt, scalar ? &(rt_shape){0} : &s);
    for (int64_t j = 0; j < k; j++) {
      if (pop) memcpy((char *)rt_tensor_data(o) + j * es, (char *)rt_tensor_data(pop) + idx[j] * es, es);
      else ((int64_t *)rt_tensor_data(o))[j] = idx[j];
    }
    out = scalar ? np_result(o) : np_wrap(o);
  }
  free(idx);
  rt_tensor_unref(pop);
  return out;
}

static const sh_method rs_methods[] = {
  {"seed", m_seed, "seed(seed=None)", "Reseed (an int in [0, 2**32)); None: from the OS."},
  {"rand", m_rand, "rand(d0, d1, ...)", "Uniform [0, 1) values of the given shape."},
  {"randn", m_randn, "randn(d0, d1, ...)", "Standard normal values of the given shape."},
  {"random_sample", m_random_sample, "random_sample(size=None)", "Uniform [0, 1) values."},
  {"random", m_random_sample, "random(size=None)", "Uniform [0, 1) values."},
  {"uniform", m_uniform, "uniform(low=0.0, high=1.0, size=None)", "Uniform [low, high) values."},
  {"normal", m_normal, "normal(loc=0.0, scale=1.0, size=None)", "Normal values."},
  {"randint", m_randint, "randint(low, high=None, size=None, dtype=int64)", "Integers in [low, high)."},
  {"shuffle", m_shuffle, "shuffle(x)", "Shuffle a list or an array along its first axis, in place."},
  {"permutation", m_permutation, "permutation(x)", "A shuffled copy of x, or of arange(x)."},
  {"choice", m_choice, "choice(a, size=None, replace=True, p=None)", "Random samples from a."},
  {NULL}};

static sh_obj *rs_construct(ARGS);
static sh_obj *rs_repr(sh_obj *self) { return sh_strf("RandomState(MT19937) at %p", (void *)self); }

static sh_type rs_type = {SH_TYPE_HEAD, .name = "RandomState", .size = sizeof(rstate),
  .help = "numpy's legacy generator (MT19937): the numbers numpy draws for the same seed.",
  .methods = rs_methods, .repr = rs_repr, .construct = rs_construct};

static sh_obj *rs_construct(ARGS) {
  sh_obj *seed = NULL;
  if (sh_parse_args("RandomState", argc, argv, kw, "|seed", &seed) < 0) return NULL;
  rstate *r = sh_new(&rs_type);
  sh_obj *a[1] = {seed ? seed : SH_NONE};
  sh_obj *ok = m_seed((sh_obj *)r, 1, a, NULL);
  if (!ok) {
    sh_decref((sh_obj *)r);
    return NULL;
  }
  sh_decref(ok);
  return (sh_obj *)r;
}

static rstate *global;
static rstate *global_state(void) {
  if (!global) {
    global = sh_new(&rs_type);
    sh_obj *none = SH_NONE;
    sh_decref(m_seed((sh_obj *)global, 1, &none, NULL));
  }
  return global;
}

/* Methods get their RandomState; module functions get the module: the shared one. */
static rstate *st_of(sh_obj *self) { return self && self->type == &rs_type ? (rstate *)self : global_state(); }

sh_obj *np_random_module(void) {
  sh_obj *m = sh_module_new("numpy.random");
  sh_module_add_funcs(m, rs_methods);
  sh_module_add(m, "RandomState", sh_incref((sh_obj *)&rs_type));
  return m;
}
