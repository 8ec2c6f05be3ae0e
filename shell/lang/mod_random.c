/* The random module, on xoshiro256** seeded by splitmix64: deterministic per seed, but not
 * CPython's stream. */
#define _GNU_SOURCE
#include <math.h>
#include <string.h>
#include <time.h>

#include "shell/lang/interp.h"


static uint64_t st[4];

static uint64_t splitmix(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
static void seed(uint64_t s) { for (int i = 0; i < 4; i++) st[i] = splitmix(&s); }
static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
static uint64_t next64(void) {
  uint64_t r = rotl(st[1] * 5, 7) * 9, t = st[1] << 17;
  st[2] ^= st[0]; st[3] ^= st[1]; st[1] ^= st[2]; st[0] ^= st[3]; st[2] ^= t; st[3] = rotl(st[3], 45);
  return r;
}
static double uniform01(void) { return (next64() >> 11) * 0x1.0p-53; }
static int64_t below(uint64_t n) {   /* unbiased in [0, n) */
  uint64_t lim = UINT64_MAX - UINT64_MAX % n, x;
  do x = next64(); while (x >= lim);
  return (int64_t)(x % n);
}

static sh_obj *r_seed(ARGS) {
  uint64_t s = (uint64_t)time(NULL);
  if (argc && argv[0] != SH_NONE) {
    int64_t h;
    if (sh_hash(argv[0], &h) < 0) return NULL;
    s = (uint64_t)h;
  }
  seed(s);
  return sh_none();
}
static sh_obj *r_random(ARGS) { return sh_float(uniform01()); }
static sh_obj *r_uniform(ARGS) {
  double a, b;
  if (argc != 2 || sh_as_double(argv[0], &a) < 0 || sh_as_double(argv[1], &b) < 0)
    return sh_err_occurred() ? NULL : sh_raise(sh_TypeError, "uniform() takes 2 arguments");
  return sh_float(a + (b - a) * uniform01());
}
static sh_obj *r_randint(ARGS) {
  int64_t a, b;
  if (argc != 2 || sh_as_int(argv[0], &a) < 0 || sh_as_int(argv[1], &b) < 0)
    return sh_err_occurred() ? NULL : sh_raise(sh_TypeError, "randint() takes 2 arguments");
  if (b < a) return sh_raise(sh_ValueError, "empty range for randrange() (%lld, %lld, %lld)", (long long)a, (long long)b + 1, (long long)(b + 1 - a));
  return sh_int(a + below((uint64_t)(b - a) + 1));
}
static sh_obj *r_randrange(ARGS) {
  int64_t v[3] = {0, 0, 1};
  if (argc < 1 || argc > 3) return sh_raise(sh_TypeError, "randrange() takes 1 to 3 arguments");
  for (int i = 0; i < argc; i++) if (sh_as_int(argv[i], &v[i]) < 0) return NULL;
  int64_t start = argc == 1 ? 0 : v[0], stop = argc == 1 ? v[0] : v[1], step = argc == 3 ? v[2] : 1;
  if (step == 0) return sh_raise(sh_ValueError, "zero step for randrange()");
  int64_t n = step > 0 ? (stop - start + step - 1) / step : (start - stop - step - 1) / -step;
  if (n <= 0) return sh_raise(sh_ValueError, "empty range for randrange()");
  return sh_int(start + step * below(n));
}
static sh_obj *r_choice(ARGS) {
  if (argc != 1) return sh_raise(sh_TypeError, "choice() takes exactly one argument");
  int64_t n = sh_len(argv[0]);
  if (n < 0) return NULL;
  if (n == 0) return sh_raise(sh_IndexError, "Cannot choose from an empty sequence");
  sh_obj *i = sh_int(below(n));
  sh_obj *r = sh_getitem(argv[0], i);
  sh_decref(i);
  return r;
}
static sh_obj *r_shuffle(ARGS) {
  if (argc != 1 || argv[0]->type != &sh_list_type) return sh_raise(sh_TypeError, "shuffle() takes a list");
  sh_obj **it = SH_LIST_ITEMS(argv[0]);
  for (int64_t i = SH_LIST_N(argv[0]) - 1; i > 0; i--) {
    int64_t j = below(i + 1);
    sh_obj *t = it[i]; it[i] = it[j]; it[j] = t;
  }
  return sh_none();
}
static sh_obj *r_sample(ARGS) {
  if (argc != 2) return sh_raise(sh_TypeError, "sample() takes 2 arguments");
  sh_obj *l = sh_sequence_to_list(argv[0]);
  int64_t k;
  if (!l || sh_as_int(argv[1], &k) < 0) { sh_decref(l); return NULL; }
  int64_t n = SH_LIST_N(l);
  if (k < 0 || k > n) { sh_decref(l); return sh_raise(sh_ValueError, "Sample larger than population or is negative"); }
  sh_obj **it = SH_LIST_ITEMS(l);
  for (int64_t i = 0; i < k; i++) { int64_t j = i + below(n - i); sh_obj *t = it[i]; it[i] = it[j]; it[j] = t; }
  sh_obj *r = sh_list_new(0);
  for (int64_t i = 0; i < k; i++) sh_list_append(r, it[i]);
  sh_decref(l);
  return r;
}
static sh_obj *r_gauss(ARGS) {
  double mu = 0, sigma = 1;
  if ((argc > 0 && sh_as_double(argv[0], &mu) < 0) || (argc > 1 && sh_as_double(argv[1], &sigma) < 0)) return NULL;
  double u1 = uniform01(), u2 = uniform01();
  if (u1 < 1e-300) u1 = 1e-300;
  return sh_float(mu + sigma * sqrt(-2 * log(u1)) * cos(2 * M_PI * u2));
}

static const sh_method random_funcs[] = {
  {"seed", r_seed, "seed(a=None)", "Seed the generator (deterministic per seed)."},
  {"random", r_random, "random()", "A float in [0, 1)."},
  {"uniform", r_uniform, "uniform(a, b)", "A float in [a, b]."},
  {"randint", r_randint, "randint(a, b)", "An int in [a, b]."},
  {"randrange", r_randrange, "randrange(start, stop=None, step=1)", "An int from range(start, stop, step)."},
  {"choice", r_choice, "choice(seq)", "A random item."},
  {"shuffle", r_shuffle, "shuffle(list)", "Shuffle a list in place."},
  {"sample", r_sample, "sample(population, k)", "k distinct random items."},
  {"gauss", r_gauss, "gauss(mu=0.0, sigma=1.0)", "A normally distributed float."},
  {"normalvariate", r_gauss, "normalvariate(mu=0.0, sigma=1.0)", "A normally distributed float."},
  {NULL}};

sh_obj *sh_mod_random_init(void) {
  seed((uint64_t)time(NULL) ^ (uint64_t)clock());
  sh_obj *m = sh_module_new("random");
  sh_module_add_funcs(m, random_funcs);
  sh_module_add(m, "__doc__", sh_str("Pseudo-random numbers (xoshiro256**; not CPython's sequence)."));
  return m;
}
