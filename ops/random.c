/* Random ops, TF1's stateful kind: seeded by the attrs seed and seed2 (both 0: fresh
 * seeds from the system), each node's generator living in its executor, so successive
 * runs give new values and a new session restarts the same sequence. Not differentiable,
 * as in TF1. Kernels in ops/cpu/random.c. */
#include "ops/ops_int.h"

#define SEEDS "seed: int = 0, seed2: int = 0, "

/* Output 0 from the shape vector (input 0): exact when constant. */
static int random_shape(rt_shape_ctx *c) {
  const rt_shape *s = &c->in_shapes[0];
  if (s->ndims >= 0 && s->ndims != 1) return op_rank_error(c, 1, s->ndims);
  for (int i = 1; i < c->n_inputs; i++)   /* RandomUniformInt's minval and maxval */
    if (c->in_shapes[i].ndims > 0) return op_rank_error(c, 0, c->in_shapes[i].ndims);
  int64_t v[RT_MAX_DIMS];
  int n;
  if (op_const_ints(c, 0, v, RT_MAX_DIMS, &n)) {
    for (int d = 0; d < n; d++)
      if (v[d] < -1)
        return op_shape_error(c, 1, "Invalid value in tensor used for shape: %lld", (long long)v[d]);
    c->out_shapes[0] = rt_shape_make(n, v);
  } else if (s->ndims == 1 && s->dims[0] >= 0 && s->dims[0] <= RT_MAX_DIMS) {
    rt_shape o = {.ndims = (int)s->dims[0]};
    for (int d = 0; d < o.ndims; d++) o.dims[d] = -1;
    c->out_shapes[0] = o;
  }
  return RT_OK;
}

#define RANDOM(nm, k, h)                                                                 \
  {.name = nm, .inputs = "shape: T", .outputs = "output: dtype",                         \
   .attrs = SEEDS "dtype: {float, double}, T: {int32, int64}", .help = h,                 \
   .shape = random_shape, .kernel = {[RT_DEV_CPU] = k}, .grad = op_no_grad,               \
   .flags = RT_OP_STATEFUL}

/* [num_sampled] candidates, the true classes' expected counts in their shape, and the
 * candidates' expected counts. */
static int sampler_shape(rt_shape_ctx *c) {
  int64_t k = rt_node_int(c->node, "num_sampled", 1);
  const rt_shape *t = &c->in_shapes[0];
  if (t->ndims >= 0 && t->ndims != 2) return op_rank_error(c, 2, t->ndims);
  c->out_shapes[0] = c->out_shapes[2] = rt_shape_make(1, &k);
  c->out_shapes[1] = *t;
  return RT_OK;
}

static int hits_shape(rt_shape_ctx *c) {
  int64_t unknown = -1;
  for (int i = 0; i < 3; i++) c->out_shapes[i] = rt_shape_make(1, &unknown);
  return RT_OK;
}

#define SAMPLER(nm, k, h)                                                                 \
  {.name = nm, .inputs = "true_classes: int64",                                          \
   .outputs = "sampled_candidates: int64, true_expected_count: float, "                  \
              "sampled_expected_count: float",                                           \
   .attrs = SEEDS "num_true: int, num_sampled: int, unique: bool, range_max: int", .help = h, \
   .shape = sampler_shape, .kernel = {[RT_DEV_CPU] = k}, .grad = op_no_grad,            \
   .flags = RT_OP_STATEFUL}

static const rt_op_def random_ops[] = {
  SAMPLER("LogUniformCandidateSampler", op_cpu_log_uniform_sampler,
          "num_sampled classes in [0, range_max), log-uniform (Zipfian), and expected counts."),
  SAMPLER("UniformCandidateSampler", op_cpu_uniform_sampler,
          "num_sampled classes in [0, range_max), uniform, and expected counts."),
  {.name = "ComputeAccidentalHits", .inputs = "true_classes: int64, sampled_candidates: int64",
   .outputs = "indices: int32, ids: int64, weights: float", .attrs = SEEDS "num_true: int",
   .help = "Where sampled candidates match true classes: row, position, -FLT_MAX.",
   .shape = hits_shape, .kernel = {[RT_DEV_CPU] = op_cpu_accidental_hits}, .grad = op_no_grad},
  RANDOM("RandomStandardNormal", op_cpu_random_normal,
         "Normal values, mean 0 and standard deviation 1 (Philox, Box-Muller)."),
  RANDOM("TruncatedNormal", op_cpu_truncated_normal,
         "Standard normal values, those beyond 2 standard deviations drawn again."),
  RANDOM("RandomUniform", op_cpu_random_uniform, "Uniform values in [0, 1)."),
  {.name = "RandomUniformInt", .inputs = "shape: T, minval: Tout, maxval: Tout",
   .outputs = "output: Tout", .attrs = SEEDS "Tout: {int32, int64}, T: {int32, int64}",
   .help = "Uniform integers in [minval, maxval).", .shape = random_shape,
   .kernel = {[RT_DEV_CPU] = op_cpu_random_uniform_int}, .grad = op_no_grad,
   .flags = RT_OP_STATEFUL},
  {.name = "RandomShuffle", .inputs = "value: T", .outputs = "output: T", .attrs = SEEDS "T: type",
   .help = "value with its first dimension randomly permuted.", .shape = op_shape_unchanged,
   .kernel = {[RT_DEV_CPU] = op_cpu_random_shuffle}, .grad = op_no_grad,
   .flags = RT_OP_STATEFUL},
};

void op_random_register(void) { rt_op_register(random_ops, OP_COUNT(random_ops)); }
