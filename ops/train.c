/* TF1's training ops: each updates a variable (and its slots) in place, under the
 * variable's lock, and outputs the variable as a reference, as TF1's Apply* ops do. */
#include <math.h>
#include <string.h>

#include "ops/ops_int.h"
#include "runtime/device.h"
#include "runtime/pool.h"

enum { MAX_SLOTS = 3, MAX_SCALARS = 6 };

/* What one update needs: the variable and slot buffers, the scalar hyper-parameters and
 * the gradient, all as double-or-float arrays of n elements. */
typedef struct update {
  int n_refs, n_scalars;
  void *ref[MAX_SLOTS];        /* var, then slots */
  double s[MAX_SCALARS];
  const void *grad;
  int64_t n;
} update;

typedef void (*update_fn)(const rt_kernel_ctx *c, update *u, bool f32);

/* sqrt in the element type: sqrtf for float, so the loop vectorizes in single precision */
#define SQRT(x) (sizeof(T) == 4 ? (T)sqrtf((float)(x)) : (T)sqrt((double)(x)))

/* The update's elements in turn (a tile of them when run_update splits it). */
#define EACH(body)                                                                      \
  do {                                                                                  \
    if (f32) {                                                                          \
      typedef float T;                                                                  \
      T *v = u->ref[0], *a = u->ref[1], *b = u->ref[2];                                 \
      const T *g = u->grad;                                                             \
      (void)a, (void)b;                                                                 \
      _Pragma("omp simd") for (int64_t i = 0; i < u->n; i++) body;                      \
    } else {                                                                            \
      typedef double T;                                                                 \
      T *v = u->ref[0], *a = u->ref[1], *b = u->ref[2];                                 \
      const T *g = u->grad;                                                             \
      (void)a, (void)b;                                                                 \
      _Pragma("omp simd") for (int64_t i = 0; i < u->n; i++) body;                      \
    }                                                                                   \
  } while (0)

/* var -= alpha * delta */
static void gd(const rt_kernel_ctx *c, update *u, bool f32) {
  double lr = u->s[0];
  EACH(v[i] -= (T)lr * g[i]);
}

/* accum = accum * momentum + grad; var -= lr * accum (Nesterov: lr * (grad + momentum *
 * accum)) */
static void momentum(const rt_kernel_ctx *c, update *u, bool f32) {
  double lr = u->s[0], mu = u->s[1];
  if (rt_node_bool(c->node, "use_nesterov", false))
    EACH({ a[i] = a[i] * (T)mu + g[i]; v[i] -= g[i] * (T)lr + a[i] * (T)(mu * lr); });
  else
    EACH({ a[i] = a[i] * (T)mu + g[i]; v[i] -= (T)lr * a[i]; });
}

/* accum += grad^2; var -= lr * grad / sqrt(accum) */
static void adagrad(const rt_kernel_ctx *c, update *u, bool f32) {
  double lr = u->s[0];
  bool slots = rt_node_bool(c->node, "update_slots", true);
  EACH({ if (slots) a[i] += g[i] * g[i]; v[i] -= (T)lr * g[i] / SQRT(a[i]); });
}

/* m, v moving averages of g and g^2; var -= lr_t * m / (sqrt(v) + eps) */
static void adam(const rt_kernel_ctx *c, update *u, bool f32) {
  double b1p = u->s[0], b2p = u->s[1], lr = u->s[2], b1 = u->s[3], b2 = u->s[4], eps = u->s[5];
  double lr_t = lr * sqrt(1 - b2p) / (1 - b1p);
  if (rt_node_bool(c->node, "use_nesterov", false))
    EACH({
      a[i] += (g[i] - a[i]) * (T)(1 - b1);
      b[i] += (g[i] * g[i] - b[i]) * (T)(1 - b2);
      v[i] -= (T)lr_t * (a[i] * (T)b1 + (T)(1 - b1) * g[i]) / (SQRT(b[i]) + (T)eps);
    });
  else
    EACH({
      a[i] += (g[i] - a[i]) * (T)(1 - b1);
      b[i] += (g[i] * g[i] - b[i]) * (T)(1 - b2);
      v[i] -= (T)lr_t * a[i] / (SQRT(b[i]) + (T)eps);
    });
}

/* ms = rho * ms + (1 - rho) * g^2; mom = momentum * mom + lr * g / sqrt(ms + eps);
 * var -= mom */
static void rmsprop(const rt_kernel_ctx *c, update *u, bool f32) {
  double lr = u->s[0], rho = u->s[1], mu = u->s[2], eps = u->s[3];
  EACH({
    a[i] = a[i] * (T)rho + g[i] * g[i] * (T)(1 - rho);
    b[i] = b[i] * (T)mu + (T)lr * g[i] / SQRT(a[i] + (T)eps);
    v[i] -= b[i];
  });
}

/* accum = rho*accum + (1-rho)*g^2; upd = sqrt(accum_update+eps)/sqrt(accum+eps)*g;
 * accum_update = rho*accum_update + (1-rho)*upd^2; var -= lr*upd */
static void adadelta(const rt_kernel_ctx *c, update *u, bool f32) {
  double lr = u->s[0], rho = u->s[1], eps = u->s[2];
  EACH({
    a[i] = a[i] * (T)rho + g[i] * g[i] * (T)(1 - rho);
    T upd = SQRT(b[i] + (T)eps) / SQRT(a[i] + (T)eps) * g[i];
    b[i] = b[i] * (T)rho + upd * upd * (T)(1 - rho);
    v[i] -= (T)lr * upd;
  });
}

/* fn over u, in tiles on the pool for big updates (waking threads costs more than a
 * 100k-element update): a tile is u moved on to its first element. */
typedef struct update_job {
  const rt_kernel_ctx *c;
  const update *u;
  update_fn fn;
  bool f32;
} update_job;

static void update_tile(void *arg, int64_t lo, int64_t hi, int who) {
  const update_job *j = arg;
  update t = *j->u;
  size_t at = (size_t)lo * (j->f32 ? sizeof(float) : sizeof(double));
  for (int k = 0; k < t.n_refs; k++) t.ref[k] = (char *)t.ref[k] + at;
  t.grad = (const char *)t.grad + at;
  t.n = hi - lo;
  j->fn(j->c, &t, j->f32);
}

static void run_update(const rt_kernel_ctx *c, update *u, update_fn fn, bool f32) {
  update_job j = {.c = c, .u = u, .fn = fn, .f32 = f32};
  rt_parallel_range(u->n, 1, u->n >= (1 << 18) ? rt_intra_threads() : 1, update_tile, &j);
}

/* The sparse form: grad's row i updates row indices[i] of var and its slots (checked first:
 * grad is [len(indices), var's other dims], every index within var's rows). */
static int apply_rows(rt_kernel_ctx *c, update *u, const rt_tensor *var, const rt_tensor *grad,
                      const rt_tensor *indices, update_fn fn) {
  char sa[160], sb[160];
  int64_t n = rt_tensor_numel(indices), rows = var->shape.ndims > 0 ? var->shape.dims[0] : 0;
  if (indices->shape.ndims != 1)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "indices must be one-dimensional");
  bool ok = var->shape.ndims >= 1 && grad->shape.ndims == var->shape.ndims && grad->shape.dims[0] == n;
  for (int d = 1; ok && d < var->shape.ndims; d++) ok = grad->shape.dims[d] == var->shape.dims[d];
  if (!ok)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT,
                           "grad must be the variable's rows picked by indices: var %s, grad %s, "
                           "%lld indices", op_shape_tf(&var->shape, sa, sizeof sa),
                           op_shape_tf(&grad->shape, sb, sizeof sb), (long long)n);
  for (int64_t i = 0; i < n; i++) {
    int64_t k = rt_tensor_get_i64(indices, i);
    if (k < 0 || k >= rows)
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Index %lld at offset %lld in indices is out "
                             "of range", (long long)k, (long long)i);
  }
  int64_t row = rows ? rt_tensor_numel(var) / rows : 0;
  size_t es = rt_dtype_size(var->dtype);
  void *base[MAX_SLOTS];
  memcpy(base, u->ref, sizeof base);
  const char *g0 = u->grad;
  for (int64_t i = 0; i < n; i++) {
    size_t at = (size_t)(rt_tensor_get_i64(indices, i) * row) * es;
    for (int k = 0; k < u->n_refs; k++) u->ref[k] = (char *)base[k] + at;
    u->grad = g0 + (size_t)(i * row) * es;
    u->n = row;
    run_update(c, u, fn, var->dtype == RT_FLOAT);
  }
  return RT_OK;
}

/* Inputs: n_refs variables (references, or resource handles for the ResourceApply* ops),
 * n_scalars scalars, then the gradient; sparse: then the indices, and the gradient's rows
 * update those rows of the variable and its slots, one after the other. */
static int apply_impl(rt_kernel_ctx *c, int n_refs, int n_scalars, update_fn fn, bool sparse) {
  bool handles = c->inputs[0]->dtype == RT_RESOURCE && !c->inputs[0]->ref;
  rt_resource *res[MAX_SLOTS] = {0};
  const char *names_of[MAX_SLOTS] = {0};
  for (int k = 0; k < n_refs; k++) {
    names_of[k] = c->node->inputs[k];
    if (!handles) {
      res[k] = c->inputs[k]->ref;
    } else if (!(res[k] = op_resource_of(c, k, false, &names_of[k])) && c->st->code) {
      return c->st->code;
    }
  }
  rt_resource *r = res[0];
  if (!r && handles)
    return rt_kernel_error(c, RT_FAILED_PRECONDITION, "Attempting to use uninitialized value %s",
                           names_of[0]);
  if (!r) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s needs a variable as input 0", c->node->op);
  const rt_tensor *grad = c->inputs[n_refs + n_scalars];
  const rt_tensor *indices = sparse ? c->inputs[n_refs + n_scalars + 1] : NULL;
  update u = {.n_refs = n_refs, .n_scalars = n_scalars, .grad = rt_tensor_data(grad)};
  static const char *names[] = {"var", "accum", "v"};
  char sa[160], sb[160];
  int rc = RT_OK;
  pthread_mutex_lock(&r->mu);
  rt_tensor *var = r->value;
  for (int k = 0; k < n_refs && !rc; k++) {
    rt_resource *rk = res[k];
    rt_tensor *t = !rk ? NULL : k ? rk->value : var;
    if (!t || !t->buf)
      rc = rt_kernel_error(c, RT_FAILED_PRECONDITION, "Attempting to use uninitialized value %s",
                           names_of[k]);
    else if (sparse && (t->dtype != grad->dtype || !rt_shape_equal(&t->shape, &var->shape)))
      rc = rt_kernel_error(c, RT_INVALID_ARGUMENT, "var and %s do not have the same shape%s %s",
                           names[k ? 1 : 0], op_shape_tf(&var->shape, sa, sizeof sa),
                           op_shape_tf(&t->shape, sb, sizeof sb));
    else if (!sparse && (t->dtype != grad->dtype || !rt_shape_equal(&t->shape, &grad->shape)))
      rc = rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s and grad do not have the same shape%s %s",
                           names[k ? 1 : 0], op_shape_tf(&t->shape, sa, sizeof sa),
                           op_shape_tf(&grad->shape, sb, sizeof sb));
    else
      u.ref[k] = rt_tensor_data(t);
  }
  for (int k = 0; k < n_scalars && !rc; k++) {
    const rt_tensor *s = c->inputs[n_refs + k];
    if (rt_tensor_numel(s) != 1 || s->shape.ndims != 0)
      rc = rt_kernel_error(c, RT_INVALID_ARGUMENT, "hyper-parameter %d is not a scalar: %s",
                           k, op_shape_tf(&s->shape, sa, sizeof sa));
    else
      u.s[k] = rt_tensor_get_f64(s, 0);
  }
  if (!rc && grad->dtype != RT_FLOAT && grad->dtype != RT_DOUBLE)
    rc = rt_kernel_error(c, RT_UNIMPLEMENTED, "no CPU kernel for %s", rt_dtype_name(grad->dtype));
  if (!rc && sparse)
    rc = apply_rows(c, &u, var, grad, indices, fn);
  else if (!rc) {
    u.n = rt_tensor_numel(grad);
    run_update(c, &u, fn, grad->dtype == RT_FLOAT);
  }
  rt_tensor *out = rc || handles ? NULL : rt_tensor_wrap(var->dtype, &var->shape, var->buf);
  pthread_mutex_unlock(&r->mu);
  if (rc || handles) return rc;   /* the ResourceApply* ops have no output */
  if (!out) return rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory");
  out->ref = r;
  rt_tensor_unref(c->outputs[0]);
  c->outputs[0] = out;
  return RT_OK;
}

static int apply(rt_kernel_ctx *c, int n_refs, int n_scalars, update_fn fn) {
  return apply_impl(c, n_refs, n_scalars, fn, false);
}

/* Inputs reordered to var, slots, scalars, grad, indices (order[i]: which input goes i-th). */
static int apply_sparse(rt_kernel_ctx *c, int n_refs, int n_scalars, update_fn fn, const int *order) {
  rt_tensor *in[MAX_SLOTS + MAX_SCALARS + 2];
  for (int i = 0; i < n_refs + n_scalars + 2; i++) in[i] = c->inputs[order[i]];
  rt_kernel_ctx k = *c;
  k.inputs = in;
  return apply_impl(&k, n_refs, n_scalars, fn, true);
}

static int sparse_momentum_kernel(rt_kernel_ctx *c) {   /* var, accum, lr, grad, indices, momentum */
  return apply_sparse(c, 2, 2, momentum, (const int[]){0, 1, 2, 5, 3, 4});
}
static int sparse_adagrad_kernel(rt_kernel_ctx *c) {    /* var, accum, lr, grad, indices */
  return apply_sparse(c, 2, 1, adagrad, (const int[]){0, 1, 2, 3, 4});
}
static int sparse_rmsprop_kernel(rt_kernel_ctx *c) {    /* var, ms, mom, 4 scalars, grad, indices */
  return apply_sparse(c, 3, 4, rmsprop, (const int[]){0, 1, 2, 3, 4, 5, 6, 7, 8});
}
static int sparse_adadelta_kernel(rt_kernel_ctx *c) {   /* var, accum, accum_update, 3 scalars, grad, indices */
  return apply_sparse(c, 3, 3, adadelta, (const int[]){0, 1, 2, 3, 4, 5, 6, 7});
}

static int gd_kernel(rt_kernel_ctx *c) { return apply(c, 1, 1, gd); }
static int momentum_kernel(rt_kernel_ctx *c) {
  /* inputs: var, accum, lr, grad, momentum: move momentum before grad */
  rt_tensor *in[5] = {c->inputs[0], c->inputs[1], c->inputs[2], c->inputs[4], c->inputs[3]};
  rt_kernel_ctx k = *c;
  k.inputs = in;
  return apply(&k, 2, 2, momentum);
}
static int adagrad_kernel(rt_kernel_ctx *c) { return apply(c, 2, 1, adagrad); }
static int adam_kernel(rt_kernel_ctx *c) { return apply(c, 3, 6, adam); }
static int rmsprop_kernel(rt_kernel_ctx *c) { return apply(c, 3, 4, rmsprop); }
static int adadelta_kernel(rt_kernel_ctx *c) { return apply(c, 3, 3, adadelta); }

static int var_shape(rt_shape_ctx *c) {
  c->out_shapes[0] = c->in_shapes[0];
  return RT_OK;
}

#define TRAIN(nm, in, extra, k, h)                                                      \
  {.name = nm, .inputs = in, .outputs = "out: Ref(T)",                                  \
   .attrs = "T: {float, double}, use_locking: bool = false" extra, .help = h,           \
   .shape = var_shape, .kernel = {[RT_DEV_CPU] = k}, .flags = RT_OP_STATEFUL}

static const rt_op_def train_ops[] = {
  TRAIN("ApplyGradientDescent", "var: Ref(T), alpha: T, delta: T", "", gd_kernel,
        "var -= alpha * delta, in place."),
  TRAIN("ApplyMomentum", "var: Ref(T), accum: Ref(T), lr: T, grad: T, momentum: T",
        ", use_nesterov: bool = false", momentum_kernel,
        "accum = accum * momentum + grad; var -= lr * accum (or Nesterov's step)."),
  TRAIN("ApplyAdagrad", "var: Ref(T), accum: Ref(T), lr: T, grad: T",
        ", update_slots: bool = true", adagrad_kernel,
        "accum += grad^2; var -= lr * grad / sqrt(accum)."),
  TRAIN("ApplyRMSProp",
        "var: Ref(T), ms: Ref(T), mom: Ref(T), lr: T, rho: T, momentum: T, epsilon: T, grad: T",
        "", rmsprop_kernel,
        "ms = rho*ms + (1-rho)*grad^2; mom = momentum*mom + lr*grad/sqrt(ms+epsilon); var -= mom."),
  TRAIN("ApplyAdadelta", "var: Ref(T), accum: Ref(T), accum_update: Ref(T), lr: T, rho: T, epsilon: T, grad: T",
        "", adadelta_kernel,
        "Adadelta: accum, accum_update moving averages of grad^2 and update^2; var -= lr * update."),
  TRAIN("ApplyAdam",
        "var: Ref(T), m: Ref(T), v: Ref(T), beta1_power: T, beta2_power: T, lr: T, beta1: T, "
        "beta2: T, epsilon: T, grad: T",
        ", use_nesterov: bool = false", adam_kernel,
        "Adam: m, v moving averages; var -= lr_t * m / (sqrt(v) + epsilon)."),
};

/* The same updates on resource variables (handles in, no output), as TF's optimizers
 * build them for ResourceVariables. */
#define RTRAIN(nm, in, extra, k, h)                                                     \
  {.name = nm, .inputs = in, .attrs = "T: {float, double}, use_locking: bool = false" extra, \
   .help = h, .kernel = {[RT_DEV_CPU] = k}, .grad = op_no_grad, .flags = RT_OP_STATEFUL}

static const rt_op_def resource_train_ops[] = {
  RTRAIN("ResourceApplyGradientDescent", "var: resource, alpha: T, delta: T", "", gd_kernel,
         "var -= alpha * delta, on a resource variable."),
  RTRAIN("ResourceApplyMomentum",
         "var: resource, accum: resource, lr: T, grad: T, momentum: T",
         ", use_nesterov: bool = false", momentum_kernel,
         "ApplyMomentum on resource variables."),
  RTRAIN("ResourceApplyAdagrad", "var: resource, accum: resource, lr: T, grad: T",
         ", update_slots: bool = true", adagrad_kernel, "ApplyAdagrad on resource variables."),
  RTRAIN("ResourceApplyRMSProp",
         "var: resource, ms: resource, mom: resource, lr: T, rho: T, momentum: T, epsilon: T, "
         "grad: T", "", rmsprop_kernel, "ApplyRMSProp on resource variables."),
  RTRAIN("ResourceApplyAdadelta",
         "var: resource, accum: resource, accum_update: resource, lr: T, rho: T, epsilon: T, "
         "grad: T", "", adadelta_kernel, "ApplyAdadelta on resource variables."),
  RTRAIN("ResourceApplyAdam",
         "var: resource, m: resource, v: resource, beta1_power: T, beta2_power: T, lr: T, "
         "beta1: T, beta2: T, epsilon: T, grad: T",
         ", use_nesterov: bool = false", adam_kernel, "ApplyAdam on resource variables."),
};

/* TF's sparse updates (what its optimizers build for IndexedSlices gradients). */
#define RSPARSE(nm, in, extra, k, h)                                                    \
  {.name = nm, .inputs = in,                                                            \
   .attrs = "T: {float, double}, Tindices: {int32, int64}, use_locking: bool = false" extra, \
   .help = h, .kernel = {[RT_DEV_CPU] = k}, .grad = op_no_grad, .flags = RT_OP_STATEFUL}

static const rt_op_def resource_sparse_ops[] = {
  RSPARSE("ResourceSparseApplyMomentum",
          "var: resource, accum: resource, lr: T, grad: T, indices: Tindices, momentum: T",
          ", use_nesterov: bool = false", sparse_momentum_kernel,
          "ApplyMomentum on the rows of a resource variable that indices name."),
  RSPARSE("ResourceSparseApplyAdagrad",
          "var: resource, accum: resource, lr: T, grad: T, indices: Tindices",
          ", update_slots: bool = true", sparse_adagrad_kernel,
          "ApplyAdagrad on the rows of a resource variable that indices name."),
  RSPARSE("ResourceSparseApplyRMSProp",
          "var: resource, ms: resource, mom: resource, lr: T, rho: T, momentum: T, epsilon: T, "
          "grad: T, indices: Tindices", "", sparse_rmsprop_kernel,
          "ApplyRMSProp on the rows of a resource variable that indices name."),
  RSPARSE("ResourceSparseApplyAdadelta",
          "var: resource, accum: resource, accum_update: resource, lr: T, rho: T, epsilon: T, "
          "grad: T, indices: Tindices", "", sparse_adadelta_kernel,
          "ApplyAdadelta on the rows of a resource variable that indices name."),
};

void op_train_register(void) {
  rt_op_register(resource_sparse_ops, OP_COUNT(resource_sparse_ops));
  rt_op_register(train_ops, OP_COUNT(train_ops));
  rt_op_register(resource_train_ops, OP_COUNT(resource_train_ops));
}
