/* The op registry: parses each op's signature strings once, at registration. */
#include "runtime/op.h"
#include "base/alloc.h"
#include "base/str.h"
#include "runtime/cpus.h"

#include <ctype.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- threads ---------------------------------------------------------------------- */

static pthread_mutex_t threads_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t threads_cv = PTHREAD_COND_INITIALIZER;
static int intra_set, inter_set, intra_dflt, inter_busy;
static _Atomic int intra_now, inter_now;
static char intra_why[320];   /* threads_mu */
static char dflt_why[256];

static int env_threads(const char **name) {
  *name = "BLIS_NUM_THREADS";
  const char *e = getenv(*name);
  if (!e || !*e) e = getenv(*name = "OMP_NUM_THREADS");
  long n = e ? atol(e) : 0;
  return n > 0 && n < 1 << 16 ? (int)n : 0;
}

static rt_cpu_limits limits;
static pthread_once_t limits_once = PTHREAD_ONCE_INIT;
static void limits_query(void) { rt_cpu_limits_query(&limits); }

static void threads_update(void) {   /* threads_mu held */
  const char *env;
  int n = intra_set;
  if (n) {
    snprintf(intra_why, sizeof intra_why, "intra_op_parallelism_threads %d", n);
  } else if ((n = env_threads(&env))) {
    snprintf(intra_why, sizeof intra_why, "%s=%d", env, n);
  } else if (intra_dflt) {
    n = intra_dflt;
    snprintf(intra_why, sizeof intra_why, "%s", dflt_why);
  } else {   /* no server yet: this process alone */
    pthread_once(&limits_once, limits_query);
    n = rt_cpus_for_task(&limits, 1, intra_why, sizeof intra_why);
  }
  intra_now = n > 0 ? n : 1;
  inter_now = inter_set;
}

void rt_threads_set(int intra, int inter) {
  pthread_mutex_lock(&threads_mu);
  if (intra > 0) intra_set = intra;
  if (inter > 0) inter_set = inter;
  threads_update();
  pthread_cond_broadcast(&threads_cv);
  pthread_mutex_unlock(&threads_mu);
}

void rt_threads_default(int tasks_on_host) {
  pthread_once(&limits_once, limits_query);
  pthread_mutex_lock(&threads_mu);
  if (!intra_dflt) {   /* the first server of the process decides */
    intra_dflt = rt_cpus_for_task(&limits, tasks_on_host, dflt_why, sizeof dflt_why);
    threads_update();
  }
  pthread_mutex_unlock(&threads_mu);
}

int rt_intra_threads(void) {
  int n = intra_now;
  if (n) return n;
  pthread_mutex_lock(&threads_mu);
  threads_update();
  pthread_mutex_unlock(&threads_mu);
  return intra_now;
}

static const char *(*cpu_summary)(void);
void rt_set_cpu_summary(const char *(*fn)(void)) { cpu_summary = fn; }
const char *rt_cpu_summary(void) { return cpu_summary ? cpu_summary() : NULL; }

int rt_intra_threads_why(char *why, size_t len) {
  int n = rt_intra_threads();
  pthread_mutex_lock(&threads_mu);
  snprintf(why, len, "%s", intra_why);
  pthread_mutex_unlock(&threads_mu);
  return n;
}

int rt_inter_threads(void) { return inter_now; }

bool rt_inter_acquire(void) {
  if (!inter_now) return false;
  pthread_mutex_lock(&threads_mu);
  while (inter_now && inter_busy >= inter_now) pthread_cond_wait(&threads_cv, &threads_mu);
  inter_busy++;
  pthread_mutex_unlock(&threads_mu);
  return true;
}

void rt_inter_release(void) {
  pthread_mutex_lock(&threads_mu);
  inter_busy--;
  pthread_cond_signal(&threads_cv);
  pthread_mutex_unlock(&threads_mu);
}

static rt_op_sig *ops;
static int n_ops, cap_ops;

static void die(const rt_op_def *d, const char *what, const char *text) {
  fprintf(stderr, "tfsh: internal error: op %s: bad %s signature near '%s'\n", d->name, what,
          text);
  abort();
}

/* Split "a: T, b: {x, y}" on top-level commas into trimmed items. Returns the count. */
static int split_items(const char *s, char items[][96], int max) {
  int n = 0, depth = 0;
  const char *start = s;
  for (const char *p = s;; p++) {
    if (*p == '{' || *p == '(' || *p == '[') depth++;
    if (*p == '}' || *p == ')' || *p == ']') depth--;
    if ((*p == ',' && depth == 0) || !*p) {
      while (start < p && isspace((unsigned char)*start)) start++;
      const char *end = p;
      while (end > start && isspace((unsigned char)end[-1])) end--;
      if (end > start && n >= max) return max + 1;   /* too many: the caller reports it */
      if (end > start && n < max) {
        size_t len = (size_t)(end - start) < 95 ? (size_t)(end - start) : 95;
        memcpy(items[n], start, len);
        items[n][len] = '\0';
        n++;
      }
      if (!*p) break;
      start = p + 1;
    }
  }
  return n;
}

static char *trim(char *s) {
  while (isspace((unsigned char)*s)) s++;
  char *e = s + strlen(s);
  while (e > s && isspace((unsigned char)e[-1])) *--e = '\0';
  return s;
}

/* "name: type" → name and the (trimmed) rest */
static bool split_colon(char *item, char **name, char **rest) {
  char *c = strchr(item, ':');
  if (!c) return false;
  *c = '\0';
  *name = trim(item);
  *rest = trim(c + 1);
  return **name != '\0';
}

static void parse_arg(const rt_op_def *d, const char *what, char *item, rt_arg_sig *a) {
  char *name, *type;
  memset(a, 0, sizeof *a);
  if (!split_colon(item, &name, &type) || strlen(name) >= sizeof a->name) die(d, what, item);
  strcpy(a->name, name);
  char *star = strchr(type, '*');
  if (star) {
    *star = '\0';
    snprintf(a->number_attr, sizeof a->number_attr, "%s", trim(type));
    type = trim(star + 1);
  }
  if (!strncmp(type, "Ref(", 4)) {
    a->ref = true;
    type += 4;
    char *close = strchr(type, ')');
    if (!close) die(d, what, item);
    *close = '\0';
  }
  if (!rt_dtype_from_name(type, &a->fixed)) {
    a->fixed = RT_INVALID;
    if (strlen(type) >= sizeof a->type_attr) die(d, what, item);
    strcpy(a->type_attr, type);
  }
}

static const struct { const char *name; rt_attr_kind kind; } attr_kinds[] = {
  {"int", RT_ATTR_INT},         {"float", RT_ATTR_FLOAT},
  {"bool", RT_ATTR_BOOL},       {"string", RT_ATTR_STRING},
  {"type", RT_ATTR_TYPE},       {"shape", RT_ATTR_SHAPE},
  {"tensor", RT_ATTR_TENSOR},   {"list(int)", RT_ATTR_LIST_INT},
  {"list(float)", RT_ATTR_LIST_FLOAT}, {"list(string)", RT_ATTR_LIST_STRING},
  {"list(type)", RT_ATTR_LIST_TYPE},   {"list(shape)", RT_ATTR_LIST_SHAPE},
};

const char *rt_attr_kind_name(rt_attr_kind k) {
  for (size_t i = 0; i < sizeof attr_kinds / sizeof *attr_kinds; i++)
    if (attr_kinds[i].kind == k) return attr_kinds[i].name;
  return k == RT_ATTR_RAW ? "tensor (of a dtype tfsh lacks)" : "none";
}

static void parse_default(const rt_op_def *d, rt_attr_sig *a, char *v) {
  rt_attr_value *x = &a->dflt;
  x->kind = a->kind;
  a->has_default = true;
  switch (a->kind) {
  case RT_ATTR_INT: x->i = strtoll(v, NULL, 0); break;
  case RT_ATTR_FLOAT: x->f = strtod(v, NULL); break;
  case RT_ATTR_BOOL: x->b = !strcmp(v, "true"); break;
  case RT_ATTR_STRING: {
    size_t n = strlen(v);
    if (n >= 2 && (v[0] == '\'' || v[0] == '"')) v[n - 1] = '\0', v++;
    x->s = xstrdup(v);
    break;
  }
  case RT_ATTR_TYPE:
    if (!rt_dtype_from_name(v, &x->type)) die(d, "attr default", v);
    break;
  case RT_ATTR_SHAPE:
    if (strcmp(v, "?")) die(d, "attr default (only ? for shapes)", v);
    x->shape = rt_shape_unknown();
    break;
  case RT_ATTR_LIST_INT: case RT_ATTR_LIST_FLOAT: case RT_ATTR_LIST_STRING:
  case RT_ATTR_LIST_TYPE: case RT_ATTR_LIST_SHAPE:
    if (strcmp(v, "[]")) die(d, "attr default (only [] for lists)", v);
    x->list.n = 0;
    x->list.v = NULL;
    break;
  default: die(d, "attr default", v);
  }
}

static void parse_attr(const rt_op_def *d, char *item, rt_attr_sig *a) {
  char *name, *kind;
  memset(a, 0, sizeof *a);
  if (!split_colon(item, &name, &kind) || strlen(name) >= sizeof a->name) die(d, "attr", item);
  strcpy(a->name, name);
  char *eq = strchr(kind, '=');
  char *dflt = NULL;
  if (eq && eq[1] != '=' && !(eq > kind && eq[-1] == '>')) {
    *eq = '\0';
    dflt = trim(eq + 1);
    kind = trim(kind);
  }
  char *ge = strstr(kind, ">=");
  if (ge) {
    *ge = '\0';
    a->has_min = true;
    a->min = strtoll(ge + 2, NULL, 0);
    kind = trim(kind);
  }
  if (kind[0] == '{') {
    a->kind = RT_ATTR_TYPE;
    char list[96], items[8][96];
    snprintf(list, sizeof list, "%s", kind + 1);
    char *close = strchr(list, '}');
    if (!close) die(d, "attr", item);
    *close = '\0';
    a->n_allowed = split_items(list, items, 8);
    for (int i = 0; i < a->n_allowed; i++)
      if (!rt_dtype_from_name(items[i], &a->allowed[i])) die(d, "attr type", items[i]);
  } else {
    a->kind = RT_ATTR_NONE;
    for (size_t i = 0; i < sizeof attr_kinds / sizeof *attr_kinds; i++)
      if (!strcmp(attr_kinds[i].name, kind)) a->kind = attr_kinds[i].kind;
    if (a->kind == RT_ATTR_NONE) die(d, "attr kind", kind);
  }
  if (dflt) parse_default(d, a, dflt);
}

static void parse_args(const rt_op_def *d, const char *what, const char *s, rt_arg_sig *out,
                       int *n) {
  char items[16][96];
  *n = s ? split_items(s, items, 16) : 0;
  if (*n > 16) die(d, what, "(more than 16 arguments)");
  for (int i = 0; i < *n; i++) parse_arg(d, what, items[i], &out[i]);
}

void rt_op_register(const rt_op_def *defs, int n) {
  for (int k = 0; k < n; k++) {
    const rt_op_def *d = &defs[k];
    if (rt_op_find(d->name)) continue;   /* idempotent */
    if (n_ops == cap_ops) {
      cap_ops = cap_ops ? 2 * cap_ops : 128;
      ops = xrealloc(ops, (size_t)cap_ops * sizeof *ops);
    }
    rt_op_sig *s = &ops[n_ops];
    memset(s, 0, sizeof *s);
    s->def = d;
    parse_args(d, "input", d->inputs, s->in, &s->n_in);
    parse_args(d, "output", d->outputs, s->out, &s->n_out);
    char items[24][96];
    s->n_attrs = d->attrs ? split_items(d->attrs, items, 24) : 0;
    if (s->n_attrs > 24) die(d, "attr", "(more than 24 attrs)");
    for (int i = 0; i < s->n_attrs; i++) parse_attr(d, items[i], &s->attrs[i]);
    n_ops++;
  }
}

const rt_op_sig *rt_op_find(const char *name) {
  for (int i = 0; i < n_ops; i++)
    if (!strcmp(ops[i].def->name, name)) return &ops[i];
  return NULL;
}

const rt_op_sig *rt_op_at(int i) { return i >= 0 && i < n_ops ? &ops[i] : NULL; }

/* Kernels added for other device types, by op (a few dozen: scanned). Written only while
 * op_register_all runs, before any reader. */
typedef struct extra_kernel {
  const rt_op_def *def;
  rt_device_type type;
  rt_kernel_fn fn;
  const char *types;
} extra_kernel;
static extra_kernel extra[256];
static int n_extra;

void rt_op_add_kernel(const char *op, rt_device_type t, rt_kernel_fn fn, const char *types) {
  const rt_op_sig *s = rt_op_find(op);
  if (!s || n_extra == (int)(sizeof extra / sizeof *extra)) {
    fprintf(stderr, "tfsh: internal error: a %s kernel for %s, %s\n", t == RT_DEV_GPU ? "GPU" : "CPU", op,
            s ? "past the table's end" : "an op that is not registered");
    abort();
  }
  extra[n_extra++] = (extra_kernel){s->def, t, fn, types ? types : ""};
}

static const extra_kernel *extra_find(const rt_op_def *d, rt_device_type t) {
  for (int i = 0; i < n_extra; i++)
    if (extra[i].def == d && extra[i].type == t) return &extra[i];
  return NULL;
}

rt_kernel_fn rt_op_kernel(const rt_op_def *d, rt_device_type t) {
  if (!d) return NULL;
  if (d->kernel[t]) return d->kernel[t];
  const extra_kernel *e = extra_find(d, t);
  return e ? e->fn : NULL;
}

bool rt_op_has_kernel(const rt_op_def *d, rt_device_type t) {
  return d && (d->kernel[t] || extra_find(d, t));
}

const char *rt_op_kernel_dtypes(const rt_op_def *d, rt_device_type t) {
  const extra_kernel *e = d && !d->kernel[t] ? extra_find(d, t) : NULL;
  return e ? e->types : "";
}

/* Does dtype t's name appear in the '|'-separated list [p, end)? */
static bool dtype_listed(rt_dtype t, const char *p, const char *end) {
  const char *name = rt_dtype_name(t);
  size_t len = strlen(name);
  if (t == RT_FLOAT) name = "float", len = 5;    /* rt_dtype_name says float32 */
  else if (t == RT_DOUBLE) name = "double", len = 6;
  while (p < end) {
    const char *bar = memchr(p, '|', (size_t)(end - p));
    const char *stop = bar ? bar : end;
    if ((size_t)(stop - p) == len && !strncmp(p, name, len)) return true;
    p = stop + 1;
  }
  return false;
}

bool rt_node_has_kernel(const rt_node *n, rt_device_type t) {
  const rt_op_def *d = n->def;
  if (!d) return false;
  if (d->kernel[t]) return true;
  const extra_kernel *e = extra_find(d, t);
  if (!e) return false;
  for (const char *p = e->types; *p;) {
    const char *semi = strchr(p, ';'), *end = semi ? semi : p + strlen(p), *eq = memchr(p, '=', (size_t)(end - p));
    if (eq) {
      char attr[32];
      str_put(attr, sizeof attr, 0, p, (size_t)(eq - p));
      rt_dtype dt = rt_node_type(n, attr, RT_INVALID);
      if (dt != RT_INVALID && !dtype_listed(dt, eq + 1, end)) return false;
    }
    p = semi ? semi + 1 : end;
  }
  return true;
}

const char *rt_op_kernel_types(const rt_op_def *d, char *buf, size_t n) {
  snprintf(buf, n, "%s%s%s", rt_op_has_kernel(d, RT_DEV_CPU) ? "CPU" : "",
           rt_op_has_kernel(d, RT_DEV_CPU) && rt_op_has_kernel(d, RT_DEV_GPU) ? " " : "",
           rt_op_has_kernel(d, RT_DEV_GPU) ? "GPU" : "");
  return buf;
}

int rt_kernel_error(rt_kernel_ctx *ctx, int code, const char *fmt, ...) {
  char msg[RT_MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return rt_error(ctx->st, code, "%s\n\t [[node %s (op: %s)]]", msg, ctx->node->name,
                  ctx->node->op);
}

/* ---- the runtime's own ops ---------------------------------------------------------- */

/* _Send / _Recv carry tensors across partitions; the executor runs them itself through
 * the step's rendezvous, so they have no kernels. */
static const rt_op_def internal_ops[] = {
  {.name = "_Send", .inputs = "tensor: T",
   .attrs = "T: type, tensor_name: string, send_device: string, send_device_incarnation: int, "
            "recv_device: string, client_terminated: bool = false",
   .help = "Hands a tensor to the rendezvous under its key (inserted by the partitioner).",
   .flags = RT_OP_INTERNAL | RT_OP_STATEFUL},
  {.name = "_Recv", .outputs = "tensor: T",
   .attrs = "T: type, tensor_name: string, send_device: string, send_device_incarnation: int, "
            "recv_device: string, client_terminated: bool = false",
   .help = "Takes a tensor from the rendezvous by its key (inserted by the partitioner).",
   .flags = RT_OP_INTERNAL | RT_OP_STATEFUL | RT_OP_SOURCE},
};

static void register_internal(void) {
  rt_op_register(internal_ops, (int)(sizeof internal_ops / sizeof *internal_ops));
}

void rt_op_init_internal(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, register_internal);
}
