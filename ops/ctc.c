/* Connectionist temporal classification and the edit distance, as TF 1.x has them:
 *   CTCLoss(inputs, labels_indices, labels_values, sequence_length)  -> loss, gradient
 *   CTCGreedyDecoder(inputs, sequence_length)  -> decoded sparse matrix, log_probability
 *   CTCBeamSearchDecoder(inputs, sequence_length; beam_width, top_paths)  -> top_paths
 *       sparse matrices, log_probability
 *   EditDistance(hypothesis sparse, truth sparse; normalize)  -> Levenshtein distances
 * inputs are time-major logits [max_time, batch, num_classes] whose last class is the blank.
 * The loss runs the forward-backward recursions in log space; its gradient is with respect
 * to the logits (softmax inside). Errors are TF's words. CPU only. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "ops/ops_int.h"

#define IN(i) (c->node->inputs[i])

static const double NEG_INF = -INFINITY;

static double lse(double a, double b) {
  if (a == NEG_INF) return b;
  if (b == NEG_INF) return a;
  return a > b ? a + log1p(exp(b - a)) : b + log1p(exp(a - b));
}

/* Logits element i as a double (T is float or double). */
static double logit(const rt_tensor *x, int64_t i) {
  return x->dtype == RT_DOUBLE ? ((const double *)rt_tensor_data(x))[i] : ((const float *)rt_tensor_data(x))[i];
}

static void put(rt_tensor *y, int64_t i, double v) {
  if (y->dtype == RT_DOUBLE) ((double *)rt_tensor_data(y))[i] = v;
  else ((float *)rt_tensor_data(y))[i] = (float)v;
}

/* Row (t, b) of x [T, B, C] as log-softmax into out[C]. */
static void log_softmax_row(const rt_tensor *x, int64_t t, int64_t b, int64_t C, double *out) {
  int64_t base = (t * x->shape.dims[1] + b) * C;
  double m = NEG_INF, s = 0;
  for (int64_t k = 0; k < C; k++) {
    out[k] = logit(x, base + k);
    if (out[k] > m) m = out[k];
  }
  for (int64_t k = 0; k < C; k++) s += exp(out[k] - m);
  double z = m + log(s);
  for (int64_t k = 0; k < C; k++) out[k] -= z;
}

/* The inputs and sequence lengths every CTC op takes, checked: seq gets the lengths
 * (xmalloc'd). `late` is the code of "sequence_length(b) <= max_time" (the decoders say
 * FAILED_PRECONDITION, the loss INVALID_ARGUMENT, which also refuses negative lengths). */
static int ctc_inputs(rt_kernel_ctx *c, const rt_tensor *x, const rt_tensor *sl, int late, int64_t **seq) {
  char a[160];
  *seq = NULL;
  if (x->shape.ndims != 3) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "inputs is not a 3-Tensor");
  if (sl->shape.ndims != 1) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "sequence_length is not a vector");
  int64_t T = x->shape.dims[0], B = x->shape.dims[1], C = x->shape.dims[2];
  if (sl->shape.dims[0] != B)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT,
                           "len(sequence_length) != batch_size.  len(sequence_length):  %lld batch_size: %lld",
                           (long long)sl->shape.dims[0], (long long)B);
  if (C == 0) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "num_classes cannot be 0: %s",
                                     op_shape_tf(&x->shape, a, sizeof a));
  if (C > INT32_MAX) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "num_classes cannot exceed max int");
  int64_t *s = xmalloc((size_t)(B ? B : 1) * sizeof *s);
  for (int64_t b = 0; b < B; b++) {
    s[b] = rt_tensor_get_i64(sl, b);
    if (s[b] < 0 && late == RT_INVALID_ARGUMENT) {
      free(s);
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "seq_len(%lld) < 0", (long long)b);
    }
    if (s[b] > T) {
      free(s);
      return rt_kernel_error(c, late, "sequence_length(%lld) <= %lld", (long long)b, (long long)T);
    }
    if (s[b] < 0) s[b] = 0;
  }
  *seq = s;
  return RT_OK;
}

/* "1,2,3": n int32 labels joined (xmalloc'd). */
static char *join_labels(const int32_t *v, int64_t n) {
  size_t cap = (size_t)n * 12 + 1, len = 0;
  char *s = xmalloc(cap);
  s[0] = 0;
  for (int64_t i = 0; i < n; i++) len += (size_t)snprintf(s + len, cap - len, i ? ",%d" : "%d", v[i]);
  return s;
}

/* ---- CTCLoss ------------------------------------------------------------------------ */

/* One batch element: logits rows b of x for t < T, labels lab[L] (blank C - 1). Writes
 * the gradient rows into g and returns the loss. Scratch: ly [T*C + C], la and lb [T*U]. */
static double ctc_one(const rt_tensor *x, int64_t b, int64_t T, int64_t C, const int32_t *lab, int64_t L,
                      bool merge, rt_tensor *g, double *ly, double *la, double *lb) {
  int64_t U = 2 * L + 1, B = x->shape.dims[1], blank = C - 1;
#define LP(s) ((s) % 2 ? (int64_t)lab[(s) / 2] : blank)
  for (int64_t t = 0; t < T; t++) log_softmax_row(x, t, b, C, ly + t * C);
  /* self loop s -> s; skip s - 2 -> s (both as ctc_merge_repeated says) */
#define SELF(s) (merge || LP(s) == blank)
#define SKIP(s) ((s) > 1 && LP(s) != blank && !(merge && LP((s) - 2) == LP(s)))
  for (int64_t s = 0; s < U; s++) la[s] = s < 2 ? ly[LP(s)] : NEG_INF;
  for (int64_t t = 1; t < T; t++)
    for (int64_t s = 0; s < U; s++) {
      const double *p = la + (t - 1) * U;
      double v = SELF(s) ? p[s] : NEG_INF;
      if (s > 0) v = lse(v, p[s - 1]);
      if (SKIP(s)) v = lse(v, p[s - 2]);
      la[t * U + s] = v == NEG_INF ? NEG_INF : v + ly[t * C + LP(s)];
    }
  for (int64_t s = 0; s < U; s++) lb[(T - 1) * U + s] = s >= U - 2 ? 0 : NEG_INF;
  for (int64_t t = T - 2; t >= 0; t--)
    for (int64_t s = 0; s < U; s++) {
      const double *n = lb + (t + 1) * U, *y = ly + (t + 1) * C;
      double v = SELF(s) ? n[s] + y[LP(s)] : NEG_INF;
      if (s + 1 < U) v = lse(v, n[s + 1] + y[LP(s + 1)]);
      if (s + 2 < U && SKIP(s + 2)) v = lse(v, n[s + 2] + y[LP(s + 2)]);
      lb[t * U + s] = v;
    }
  double lp = la[(T - 1) * U + U - 1];
  if (U > 1) lp = lse(lp, la[(T - 1) * U + U - 2]);
  /* d loss / d logit k at t: softmax_k - the posterior of the states labelled k */
  double *y = ly + T * C;   /* C more scratch after ly */
  for (int64_t t = 0; t < T; t++) {
    int64_t row = (t * B + b) * C;
    double *acc = ly + t * C;   /* this step's log-softmax, then the posterior sums */
    for (int64_t k = 0; k < C; k++) y[k] = exp(acc[k]);
    if (lp == NEG_INF) {   /* no alignment: TF's gradient is the softmax */
      for (int64_t k = 0; k < C; k++) put(g, row + k, y[k]);
      continue;
    }
    for (int64_t k = 0; k < C; k++) acc[k] = NEG_INF;
    for (int64_t s = 0; s < U; s++) acc[LP(s)] = lse(acc[LP(s)], la[t * U + s] + lb[t * U + s]);
    for (int64_t k = 0; k < C; k++) put(g, row + k, y[k] - exp(acc[k] - lp));
  }
#undef LP
#undef SELF
#undef SKIP
  return -lp;
}

/* Checks and collapses one batch element's labels as TF does: negative ones are refused,
 * labels >= num_classes - 1 are null and end the sequence (a non-null one after them is
 * refused). Returns the kept count, or -1 with the error set. */
static int64_t ctc_labels(rt_kernel_ctx *c, int64_t b, int64_t C, int32_t *lab, int64_t n, bool collapse) {
  if (collapse) {
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++)
      if (!m || lab[i] != lab[m - 1]) lab[m++] = lab[i];
    n = m;
  }
  int64_t kept = -1;
  for (int64_t i = 0; i < n; i++) {
    if (lab[i] < 0) {
      char *s = join_labels(lab, n);
      rt_kernel_error(c, RT_INVALID_ARGUMENT, "All labels must be nonnegative integers, batch: %lld labels: %s",
                      (long long)b, s);
      free(s);
      return -1;
    }
    if (lab[i] >= C - 1) {
      if (kept < 0) kept = i;
    } else if (kept >= 0) {
      char *s = join_labels(lab, n), *seen = join_labels(lab, kept);
      rt_kernel_error(c, RT_INVALID_ARGUMENT,
                      "Saw a non-null label (index >= num_classes - 1) following a null label, batch: %lld "
                      "num_classes: %lld labels: %s labels seen so far: %s",
                      (long long)b, (long long)C, s, seen);
      free(s), free(seen);
      return -1;
    }
  }
  return kept < 0 ? n : kept;
}

/* The labels' sparse indices checked as TF's SparseTensor::IndicesValid over the shape
 * [batch, 1 + the largest column]. */
static int check_sparse_2d(rt_kernel_ctx *c, const rt_tensor *ix, int64_t B, const char *what) {
  int64_t n = ix->shape.dims[0], cols = 0;
  for (int64_t i = 0; i < n; i++)
    if (rt_tensor_get_i64(ix, 2 * i + 1) + 1 > cols) cols = rt_tensor_get_i64(ix, 2 * i + 1) + 1;
  for (int64_t i = 0; i < n; i++) {
    int64_t r = rt_tensor_get_i64(ix, 2 * i), k = rt_tensor_get_i64(ix, 2 * i + 1);
    if (r < 0 || r >= B || k < 0 || k >= cols)
      return rt_kernel_error(c, RT_INVALID_ARGUMENT,
                             "%s SparseTensor is not valid: indices[%lld] = [%lld,%lld] is out of bounds: "
                             "need 0 <= index < [%lld,%lld]",
                             what, (long long)i, (long long)r, (long long)k, (long long)B, (long long)cols);
    if (i == 0) continue;
    int64_t pr = rt_tensor_get_i64(ix, 2 * i - 2), pk = rt_tensor_get_i64(ix, 2 * i - 1);
    if (r == pr && k == pk)
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s SparseTensor is not valid: indices[%lld] = [%lld,%lld] is repeated",
                             what, (long long)i, (long long)r, (long long)k);
    if (r < pr || (r == pr && k < pk))
      return rt_kernel_error(c, RT_INVALID_ARGUMENT,
                             "%s SparseTensor is not valid: indices[%lld] = [%lld,%lld] is out of order. "
                             "Many sparse ops require sorted indices.\n    Use `tf.sparse.reorder` to create a "
                             "correctly ordered copy.\n\n",
                             what, (long long)i, (long long)r, (long long)k);
  }
  return RT_OK;
}

static int ctc_loss_kernel(rt_kernel_ctx *c) {
  const rt_tensor *x = c->inputs[0], *ix = c->inputs[1], *vals = c->inputs[2], *sl = c->inputs[3];
  bool collapse = rt_node_bool(c->node, "preprocess_collapse_repeated", false);
  bool merge = rt_node_bool(c->node, "ctc_merge_repeated", true);
  bool ignore = rt_node_bool(c->node, "ignore_longer_outputs_than_inputs", false);
  char a[160], b2[160];
  if (x->shape.ndims != 3) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "inputs is not a 3-Tensor");
  if (ix->shape.ndims != 2 || ix->shape.dims[1] != 2)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "labels_indices is not a matrix");
  if (vals->shape.ndims != 1) return rt_kernel_error(c, RT_INVALID_ARGUMENT, "labels_values is not a vector");
  if (ix->shape.dims[0] != vals->shape.dims[0])
    return rt_kernel_error(c, RT_INVALID_ARGUMENT,
                           "labels_indices and labels_values must contain the same number of rows, but saw "
                           "shapes: %s vs. %s", op_shape_tf(&ix->shape, a, sizeof a),
                           op_shape_tf(&vals->shape, b2, sizeof b2));
  int64_t *seq;
  if (ctc_inputs(c, x, sl, RT_INVALID_ARGUMENT, &seq)) return c->st->code;
  int64_t B = x->shape.dims[1], C = x->shape.dims[2], n = ix->shape.dims[0];
  int64_t *start = NULL;
  int32_t *lab = NULL;
  double *scratch = NULL;
  if (check_sparse_2d(c, ix, B, "label")) goto out;
  /* the labels of batch element b: values[start[b] .. start[b + 1]) (rows are sorted) */
  start = xcalloc((size_t)B + 1, sizeof *start);
  for (int64_t i = 0; i < n; i++) start[rt_tensor_get_i64(ix, 2 * i) + 1]++;
  for (int64_t b = 0; b < B; b++) {
    if (!start[b + 1]) {
      rt_kernel_error(c, RT_INVALID_ARGUMENT, "Labels length is zero in batch %lld", (long long)b);
      goto out;
    }
    start[b + 1] += start[b];
  }
  rt_shape ls = {.ndims = 1, .dims = {B}};
  rt_tensor *loss = rt_kernel_output(c, 0, x->dtype, &ls);
  rt_tensor *g = loss ? rt_kernel_output(c, 1, x->dtype, &x->shape) : NULL;
  if (!g) goto out;
  memset(rt_tensor_data(g), 0, rt_tensor_nbytes(g));
  const int32_t *v = rt_tensor_data(vals);
  lab = xmalloc((size_t)(n ? n : 1) * sizeof *lab);
  for (int64_t b = 0; b < B; b++) {
    int64_t raw = start[b + 1] - start[b];
    memcpy(lab, v + start[b], (size_t)raw * sizeof *lab);
    int64_t L = ctc_labels(c, b, C, lab, raw, collapse);
    if (L < 0) goto out;
    if (raw > seq[b]) {
      if (!ignore) {
        rt_kernel_error(c, RT_INVALID_ARGUMENT,
                        "Not enough time for target transition sequence (required: %lld, available: %lld)%lld"
                        "You can turn this error into a warning by using the flag "
                        "ignore_longer_outputs_than_inputs",
                        (long long)raw, (long long)seq[b], (long long)b);
        goto out;
      }
      put(loss, b, 0);   /* skipped: no loss, no gradient */
      continue;
    }
    if (!seq[b]) {
      put(loss, b, L ? INFINITY : 0);
      continue;
    }
    /* ly [seq*C + C], la and lb [seq*U] doubles; U = 2L + 1 */
    size_t tt = (size_t)seq[b], u = 2 * (size_t)L + 1, cc = (size_t)C;
    if (tt > SIZE_MAX / 8 / (cc + 2 * u) - 1) {
      rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "CTCLoss's scratch for %lld steps is too large", (long long)seq[b]);
      goto out;
    }
    free(scratch);
    scratch = malloc((tt * (cc + 2 * u) + cc) * sizeof(double));
    if (!scratch) {
      rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory for CTCLoss's scratch");
      goto out;
    }
    double *la = scratch + tt * cc + cc;
    put(loss, b, ctc_one(x, b, seq[b], C, lab, L, merge, g, scratch, la, la + tt * u));
  }
out:
  free(seq), free(start), free(lab), free(scratch);
  return c->st->code;
}

/* TF's _CTCLossGrad: the loss's gradient output scaled by the incoming dy, per batch
 * element (dy reshaped to [1, batch, 1]); nothing for the labels or lengths. */
static int ctc_loss_grad(rt_grad_ctx *c) {
  if (!c->dy[0]) return RT_OK;
  char *shape = op_gints(c, 3, (int64_t[]){1, -1, 1});
  char *col = op_g2(c, "Reshape", c->dy[0], shape);
  char *g = xasprintf("%s:1", c->node->name);
  c->dx[0] = op_g2(c, "Mul", col, g);
  free(shape), free(col), free(g);
  return c->st->code;
}

/* ---- shapes of the CTC ops -------------------------------------------------------- */

/* inputs [T, B, C] and sequence_length [B]: checks the ranks and merges B (into *bdim). */
static int ctc_common_shape(rt_shape_ctx *c, int seq_input, int64_t *bdim) {
  const rt_shape *x = &c->in_shapes[0], *s = &c->in_shapes[seq_input];
  if (x->ndims >= 0 && x->ndims != 3) return op_rank_error(c, 3, x->ndims);
  if (s->ndims >= 0 && s->ndims != 1) return op_rank_error(c, 1, s->ndims);
  int64_t bx = x->ndims == 3 ? x->dims[1] : -1, bs = s->ndims == 1 ? s->dims[0] : -1;
  if (bx >= 0 && bs >= 0 && bx != bs) return op_dims_error(c, bx, bs);
  *bdim = bx >= 0 ? bx : bs;
  return RT_OK;
}

static int ctc_loss_shape(rt_shape_ctx *c) {
  int64_t B = -1;
  if (c->in_shapes[1].ndims >= 0 && c->in_shapes[1].ndims != 2) return op_rank_error(c, 2, c->in_shapes[1].ndims);
  if (c->in_shapes[2].ndims >= 0 && c->in_shapes[2].ndims != 1) return op_rank_error(c, 1, c->in_shapes[2].ndims);
  if (ctc_common_shape(c, 3, &B)) return c->st->code;
  c->out_shapes[0] = (rt_shape){.ndims = 1, .dims = {B}};
  const rt_shape *x = &c->in_shapes[0];
  c->out_shapes[1] = x->ndims == 3 ? (rt_shape){.ndims = 3, .dims = {x->dims[0], B, x->dims[2]}}
                                   : (rt_shape){.ndims = 3, .dims = {-1, B, -1}};
  return RT_OK;
}

/* The decoders' outputs: paths sparse matrices (indices [?, 2], values [?], shape [2]),
 * then log_probability [B, paths]. */
static int decoder_shape(rt_shape_ctx *c, int paths) {
  int64_t B = -1;
  if (ctc_common_shape(c, 1, &B)) return c->st->code;
  for (int p = 0; p < paths; p++) {
    c->out_shapes[p] = (rt_shape){.ndims = 2, .dims = {-1, 2}};
    c->out_shapes[paths + p] = (rt_shape){.ndims = 1, .dims = {-1}};
    c->out_shapes[2 * paths + p] = (rt_shape){.ndims = 1, .dims = {2}};
  }
  c->out_shapes[3 * paths] = (rt_shape){.ndims = 2, .dims = {B, paths}};
  return RT_OK;
}
static int greedy_shape(rt_shape_ctx *c) { return decoder_shape(c, 1); }
static int beam_shape(rt_shape_ctx *c) { return decoder_shape(c, (int)rt_node_int(c->node, "top_paths", 1)); }

/* ---- decoders ------------------------------------------------------------------------ */

/* Writes decoded path p (outputs p, P + p, 2P + p): the labels of batch element b are
 * lab[off[b] .. off[b + 1]). */
static int emit_sparse(rt_kernel_ctx *c, int p, int P, int64_t B, const int64_t *off, const int64_t *lab) {
  int64_t n = off[B], longest = 0;
  for (int64_t b = 0; b < B; b++)
    if (off[b + 1] - off[b] > longest) longest = off[b + 1] - off[b];
  rt_shape is = {.ndims = 2, .dims = {n, 2}}, vs = {.ndims = 1, .dims = {n}}, ss = {.ndims = 1, .dims = {2}};
  rt_tensor *ix = rt_kernel_output(c, p, RT_INT64, &is);
  rt_tensor *v = ix ? rt_kernel_output(c, P + p, RT_INT64, &vs) : NULL;
  rt_tensor *sh = v ? rt_kernel_output(c, 2 * P + p, RT_INT64, &ss) : NULL;
  if (!sh) return c->st->code;
  int64_t *ip = rt_tensor_data(ix), *vp = rt_tensor_data(v), *sp = rt_tensor_data(sh);
  for (int64_t b = 0; b < B; b++)
    for (int64_t i = off[b]; i < off[b + 1]; i++) ip[2 * i] = b, ip[2 * i + 1] = i - off[b], vp[i] = lab[i];
  sp[0] = B, sp[1] = longest;
  return RT_OK;
}

static int greedy_kernel(rt_kernel_ctx *c) {
  const rt_tensor *x = c->inputs[0];
  bool merge = rt_node_bool(c->node, "merge_repeated", true);
  int64_t *seq;
  if (ctc_inputs(c, x, c->inputs[1], RT_FAILED_PRECONDITION, &seq)) return c->st->code;
  int64_t T = x->shape.dims[0], B = x->shape.dims[1], C = x->shape.dims[2];
  int64_t blank = rt_node_int(c->node, "blank_index", -1);
  if (blank < 0) blank += C;
  if (blank < 0 || blank >= C) {
    free(seq);
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "blank_index expected to be between %lld and %lld but was %lld",
                           (long long)-C, (long long)C - 1, (long long)rt_node_int(c->node, "blank_index", -1));
  }
  rt_shape ps = {.ndims = 2, .dims = {B, 1}};
  rt_tensor *lp = rt_kernel_output(c, 3, x->dtype, &ps);
  if (!lp) {
    free(seq);
    return c->st->code;
  }
  /* at most T labels per element; B * T <= the input's element count */
  int64_t *off = xmalloc(((size_t)B + 1) * sizeof *off);
  int64_t *lab = xmalloc((size_t)(B * T > 0 ? B * T : 1) * sizeof *lab);
  off[0] = 0;
  for (int64_t b = 0; b < B; b++) {
    int64_t n = off[b], prev = -1;
    double sum = 0;
    for (int64_t t = 0; t < seq[b]; t++) {
      int64_t base = (t * B + b) * C, best = 0;
      double m = logit(x, base);
      for (int64_t k = 1; k < C; k++)
        if (logit(x, base + k) > m) m = logit(x, base + k), best = k;
      sum -= m;
      if (best != blank && !(merge && best == prev)) lab[n++] = best;
      prev = best;
    }
    off[b + 1] = n;
    put(lp, b, sum);
  }
  emit_sparse(c, 0, 1, B, off, lab);
  free(seq), free(off), free(lab);
  return c->st->code;
}

/* Prefix beam search as TF's CTCBeamSearchDecoder runs it (the default scorer): each beam
 * is a labelling prefix, a node of a tree, with the log probabilities of ending in a blank
 * or in its last label, at this step (n*) and the last (o*). */
typedef struct beam {
  struct beam *parent, *kids;   /* kids: num_classes - 1 of them, made when first expanded */
  int64_t label;                /* -1 for the root */
  double ob, ol, ot, nb, nl, nt;
} beam;

typedef struct beam_search {
  int64_t width, classes;       /* classes without the blank */
  beam **heap;                  /* the leaves: a min-heap on nt, at most width */
  int64_t n;
  beam **blocks;                /* every kids array, to free */
  int64_t n_blocks, cap_blocks;
} beam_search;

static bool beam_less(const beam *a, const beam *b) { return a->nt < b->nt; }

static void heap_down(beam_search *s, int64_t i) {
  for (;;) {
    int64_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < s->n && beam_less(s->heap[l], s->heap[m])) m = l;
    if (r < s->n && beam_less(s->heap[r], s->heap[m])) m = r;
    if (m == i) return;
    beam *t = s->heap[i];
    s->heap[i] = s->heap[m], s->heap[m] = t, i = m;
  }
}

/* Adds a leaf; when full, the new one replaces the lowest. */
static void heap_push(beam_search *s, beam *e) {
  if (s->n == s->width) {
    s->heap[0] = e;
    heap_down(s, 0);
    return;
  }
  int64_t i = s->n++;
  s->heap[i] = e;
  while (i > 0 && beam_less(s->heap[i], s->heap[(i - 1) / 2])) {
    beam *t = s->heap[i];
    s->heap[i] = s->heap[(i - 1) / 2], s->heap[(i - 1) / 2] = t, i = (i - 1) / 2;
  }
}

static int by_total_desc(const void *a, const void *b) {
  double x = (*(beam *const *)a)->nt, y = (*(beam *const *)b)->nt;
  return x > y ? -1 : x < y;
}

/* The leaves, best first, into out (the heap is emptied). */
static int64_t take_leaves(beam_search *s, beam **out) {
  int64_t n = s->n;
  memcpy(out, s->heap, (size_t)n * sizeof *out);
  qsort(out, (size_t)n, sizeof *out, by_total_desc);
  s->n = 0;
  return n;
}

static void beam_reset(beam *e) { e->nb = e->nl = e->nt = NEG_INF; }

static bool beam_candidate(const beam_search *s, double total) {
  return total > NEG_INF && (s->n < s->width || total > s->heap[0]->nt);
}

/* One step with log-probabilities in[classes + 1] (the blank last); branches: scratch of
 * width entries. False when out of memory. */
static bool beam_step(beam_search *s, const double *in, beam **br) {
  int64_t nb = take_leaves(s, br), blank = s->classes;
  for (int64_t i = 0; i < nb; i++) br[i]->ob = br[i]->nb, br[i]->ol = br[i]->nl, br[i]->ot = br[i]->nt;
  for (int64_t i = 0; i < nb; i++) {
    beam *b = br[i];
    if (b->parent) {
      if (b->parent->nt != NEG_INF) {
        double prev = b->label == b->parent->label ? b->parent->ob : b->parent->ot;
        b->nl = lse(b->nl, prev);
      }
      b->nl += in[b->label];
    }
    b->nb = b->ot + in[blank];
    b->nt = lse(b->nb, b->nl);
    heap_push(s, b);
  }
  for (int64_t i = 0; i < nb; i++) {
    beam *b = br[i];
    if (!s->classes || !beam_candidate(s, b->ot)) continue;
    if (!b->kids) {
      if (s->n_blocks == s->cap_blocks) {
        s->cap_blocks = s->cap_blocks ? 2 * s->cap_blocks : 64;
        s->blocks = xrealloc(s->blocks, (size_t)s->cap_blocks * sizeof *s->blocks);
      }
      b->kids = malloc((size_t)s->classes * sizeof *b->kids);
      if (!b->kids) return false;
      s->blocks[s->n_blocks++] = b->kids;
      for (int64_t k = 0; k < s->classes; k++) {
        beam *e = &b->kids[k];
        *e = (beam){.parent = b, .label = k};
        beam_reset(e);
        e->ob = e->ol = e->ot = NEG_INF;
      }
    }
    for (int64_t k = 0; k < s->classes; k++) {
      beam *e = &b->kids[k];
      if (e->nt != NEG_INF) continue;   /* already a leaf: updated above */
      e->nb = NEG_INF;
      e->nl = in[k] + (k == b->label ? b->ob : b->ot);
      e->nt = e->nl;
      if (beam_candidate(s, e->nt)) {
        if (s->n == s->width) beam_reset(s->heap[0]);   /* it drops out of the beam */
        heap_push(s, e);
      } else {
        beam_reset(e);
        e->ob = e->ol = e->ot = NEG_INF;
      }
    }
  }
  return true;
}

static void beam_free_tree(beam_search *s) {
  for (int64_t i = 0; i < s->n_blocks; i++) free(s->blocks[i]);
  s->n_blocks = 0;
  s->n = 0;
}

static int beam_kernel(rt_kernel_ctx *c) {
  const rt_tensor *x = c->inputs[0];
  bool merge = rt_node_bool(c->node, "merge_repeated", true);
  int64_t W = rt_node_int(c->node, "beam_width", 1), P = rt_node_int(c->node, "top_paths", 1);
  int64_t *seq;
  if (ctc_inputs(c, x, c->inputs[1], RT_FAILED_PRECONDITION, &seq)) return c->st->code;
  int64_t T = x->shape.dims[0], B = x->shape.dims[1], C = x->shape.dims[2];
  if (W < 1 || P < 1 || W > INT32_MAX || 3 * P + 1 != c->n_outputs) {
    free(seq);
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "beam_width %lld and top_paths %lld: each must be in 1 .. 2^31 - 1",
                           (long long)W, (long long)P);
  }
  rt_shape ps = {.ndims = 2, .dims = {B, P}};
  rt_tensor *lp = rt_kernel_output(c, 3 * (int)P, x->dtype, &ps);
  if (!lp) {
    free(seq);
    return c->st->code;
  }
  beam_search s = {.width = W, .classes = C - 1};
  /* paths' labels: P lists per element, each at most T long */
  int64_t *off = xcalloc((size_t)P * ((size_t)B + 1), sizeof *off);
  int64_t *lab = NULL, n_lab = 0, cap_lab = 0;
  double *in = xmalloc((size_t)C * sizeof *in);
  beam **br = malloc((size_t)W * 2 * sizeof *br);
  s.heap = br ? br + W : NULL;
  beam root;
  int64_t *path = xmalloc((size_t)(T + 1) * sizeof *path);
  /* path p of element b: lab[ps0[b*P + p] ..] of length pl[b*P + p] (regrouped per path below) */
  int64_t *pl = xcalloc((size_t)P * (size_t)B, sizeof *pl), *ps0 = xcalloc((size_t)P * (size_t)B, sizeof *ps0);
  if (!br) {
    rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory for a beam of width %lld", (long long)W);
    goto out;
  }
  if (P > W) {
    rt_kernel_error(c, RT_INVALID_ARGUMENT, "requested more paths than the beam width.");
    goto out;
  }
  for (int64_t b = 0; b < B; b++) {
    root = (beam){.label = -1, .nb = 0, .nl = NEG_INF, .nt = 0, .ob = NEG_INF, .ol = NEG_INF, .ot = NEG_INF};
    s.n = 0;
    heap_push(&s, &root);
    for (int64_t t = 0; t < seq[b]; t++) {
      log_softmax_row(x, t, b, C, in);
      if (!beam_step(&s, in, br)) {
        rt_kernel_error(c, RT_RESOURCE_EXHAUSTED, "out of memory for the beam search's prefixes");
        goto out;
      }
    }
    if (P > s.n) {
      rt_kernel_error(c, RT_INVALID_ARGUMENT, "Less leaves in the beam search than requested.");
      goto out;
    }
    take_leaves(&s, br);   /* best first */
    for (int64_t p = 0; p < P; p++) {
      int64_t len = 0, prev = -1;
      for (const beam *e = br[p]; e->parent; e = e->parent) {
        if (!merge || e->label != prev) path[len++] = e->label;
        prev = e->label;
      }
      if (n_lab + len > cap_lab) {
        cap_lab = 2 * (n_lab + len) + 16;
        lab = xrealloc(lab, (size_t)cap_lab * sizeof *lab);
      }
      for (int64_t i = 0; i < len; i++) lab[n_lab + i] = path[len - 1 - i];
      ps0[b * P + p] = n_lab, pl[b * P + p] = len;
      n_lab += len;
      put(lp, b * P + p, br[p]->nt);
    }
    beam_free_tree(&s);
  }
  /* regroup per path: path p's elements' labels consecutive */
  int64_t *tmp = xmalloc((size_t)(n_lab ? n_lab : 1) * sizeof *tmp);
  for (int64_t p = 0; p < P && !c->st->code; p++) {
    int64_t *o = off + p * (B + 1), k = 0;
    o[0] = 0;
    for (int64_t b = 0; b < B; b++) {
      memcpy(tmp + k, lab + ps0[b * P + p], (size_t)pl[b * P + p] * sizeof *tmp);
      k += pl[b * P + p];
      o[b + 1] = k;
    }
    emit_sparse(c, (int)p, (int)P, B, o, tmp);
  }
  free(tmp);
out:
  beam_free_tree(&s);
  free(s.blocks), free(br), free(seq), free(off), free(lab), free(in), free(path), free(pl), free(ps0);
  return c->st->code;
}

/* ---- EditDistance --------------------------------------------------------------------- */

/* Whether element i of a equals element j of b (same dtype). */
static bool same_value(const rt_tensor *a, int64_t i, const rt_tensor *b, int64_t j) {
  if (rt_dtype_is_str(a->dtype)) {
    const rt_str *x = (const rt_str *)rt_tensor_data(a) + i, *y = (const rt_str *)rt_tensor_data(b) + j;
    return x->len == y->len && !memcmp(x->ptr, y->ptr, x->len);
  }
  if (rt_dtype_is_float(a->dtype)) return rt_tensor_get_f64(a, i) == rt_tensor_get_f64(b, j);
  size_t es = rt_dtype_size(a->dtype);
  return !memcmp((const char *)rt_tensor_data(a) + (size_t)i * es, (const char *)rt_tensor_data(b) + (size_t)j * es, es);
}

/* Levenshtein distance of a[i0 .. i0 + n) and b[j0 .. j0 + m); row: m + 1 scratch. */
static int64_t levenshtein(const rt_tensor *a, int64_t i0, int64_t n, const rt_tensor *b, int64_t j0, int64_t m,
                           int64_t *row) {
  for (int64_t j = 0; j <= m; j++) row[j] = j;
  for (int64_t i = 1; i <= n; i++) {
    int64_t diag = row[0];
    row[0] = i;
    for (int64_t j = 1; j <= m; j++) {
      int64_t up = row[j], best = diag + !same_value(a, i0 + i - 1, b, j0 + j - 1);
      if (up + 1 < best) best = up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      diag = up, row[j] = best;
    }
  }
  return row[m];
}

/* -1, 0, 1: the group (all but the last index) of row i of ia against row j of ib. */
static int group_cmp(const rt_tensor *ia, int64_t i, const rt_tensor *ib, int64_t j, int r) {
  for (int d = 0; d < r - 1; d++) {
    int64_t x = rt_tensor_get_i64(ia, i * r + d), y = rt_tensor_get_i64(ib, j * r + d);
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

/* The end of the run of rows from i with row i's group. */
static int64_t group_end(const rt_tensor *ix, int64_t i, int64_t n, int r) {
  int64_t j = i + 1;
  while (j < n && !group_cmp(ix, j, ix, i, r)) j++;
  return j;
}

static int edit_distance_kernel(rt_kernel_ctx *c) {
  const rt_tensor *hi = c->inputs[0], *hv = c->inputs[1], *hs = c->inputs[2];
  const rt_tensor *ti = c->inputs[3], *tv = c->inputs[4], *ts = c->inputs[5];
  bool normalize = rt_node_bool(c->node, "normalize", true);
  char a[160], b[160];
  static const char *const names[] = {"hypothesis", "truth"};
  const rt_tensor *sets[2][3] = {{hi, hv, hs}, {ti, tv, ts}};
  for (int k = 0; k < 2; k++) {
    const rt_tensor *ix = sets[k][0], *v = sets[k][1], *sh = sets[k][2];
    if (ix->shape.ndims != 2)
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s_indices should be a matrix, but got shape: %s", names[k],
                             op_shape_tf(&ix->shape, a, sizeof a));
    if (v->shape.ndims != 1)
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s_values should be a vector, but got shape: %s", names[k],
                             op_shape_tf(&v->shape, a, sizeof a));
    if (sh->shape.ndims != 1)
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "%s_shape should be a vector, but got shape: %s", names[k],
                             op_shape_tf(&sh->shape, a, sizeof a));
    if (v->shape.dims[0] != ix->shape.dims[0])
      return rt_kernel_error(c, RT_INVALID_ARGUMENT,
                             "Expected %s_values.NumElements == #rows(%s_indices), their shapes are: %s and %s",
                             names[k], names[k], op_shape_tf(&v->shape, a, sizeof a),
                             op_shape_tf(&ix->shape, b, sizeof b));
    if (sh->shape.dims[0] != ix->shape.dims[1])
      return rt_kernel_error(c, RT_INVALID_ARGUMENT,
                             "Expected %s_shape.NumElements == #cols(%s_indices), their shapes are: %s and %s",
                             names[k], names[k], op_shape_tf(&sh->shape, a, sizeof a),
                             op_shape_tf(&ix->shape, b, sizeof b));
  }
  if (hs->shape.dims[0] != ts->shape.dims[0])
    return rt_kernel_error(c, RT_INVALID_ARGUMENT,
                           "Expected truth and hypothesis to have matching ranks, but their shapes are: %s and %s",
                           op_shape_tf(&ts->shape, a, sizeof a), op_shape_tf(&hs->shape, b, sizeof b));
  int r = (int)hs->shape.dims[0];
  if (r < 2 || r > RT_MAX_DIMS + 1)
    return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Input SparseTensors must have rank at least 2 and at most %d, "
                           "but the rank is: %d", RT_MAX_DIMS + 1, r);
  rt_shape os = {.ndims = r - 1};
  int64_t total = 1;
  for (int d = 0; d < r; d++) {
    int64_t x = rt_tensor_get_i64(hs, d), y = rt_tensor_get_i64(ts, d);
    if (x < 0 || y < 0)
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "Dimension %lld must be >= 0", (long long)(x < 0 ? x : y));
    if (d == r - 1) break;
    os.dims[d] = x > y ? x : y;
    if (os.dims[d] && total > INT64_MAX / os.dims[d])
      return rt_kernel_error(c, RT_INVALID_ARGUMENT, "EditDistance's output of shape %s is too large",
                             op_shape_tf(&os, a, sizeof a));
    total *= os.dims[d];
  }
  rt_tensor *y = rt_kernel_output(c, 0, RT_FLOAT, &os);
  if (!y) return c->st->code;
  float *out = rt_tensor_data(y);
  memset(out, 0, rt_tensor_nbytes(y));
  int64_t nh = hi->shape.dims[0], nt = ti->shape.dims[0], i = 0, j = 0;
  int64_t *row = xmalloc((size_t)(nt + 1) * sizeof *row);
  while (i < nh || j < nt) {
    /* which group comes next: hypothesis only (-1), both (0), truth only (1) */
    int w = i >= nh ? 1 : j >= nt ? -1 : group_cmp(hi, i, ti, j, r);
    const rt_tensor *kx = w > 0 ? ti : hi;
    int64_t at = w > 0 ? j : i;
    int64_t i2 = w <= 0 ? group_end(hi, i, nh, r) : i, j2 = w >= 0 ? group_end(ti, j, nt, r) : j;
    /* the output element: the group's index, flattened (unsigned: no overflow) */
    uint64_t lin = 0;
    for (int d = 0; d < r - 1; d++) lin = lin * (uint64_t)os.dims[d] + (uint64_t)rt_tensor_get_i64(kx, at * r + d);
    if ((int64_t)lin < 0 || (int64_t)lin >= total) {
      free(row);
      return rt_kernel_error(c, RT_INTERNAL, "Got an inner product %lld which would require writing to outside of "
                             "the buffer for the output tensor (max elements %lld)", (long long)lin, (long long)total);
    }
    double dist, tl = (double)(j2 - j);
    if (w == 0) dist = (double)levenshtein(hv, i, i2 - i, tv, j, j2 - j, row);
    else dist = w < 0 ? (double)(i2 - i) : tl;
    out[lin] = (float)(normalize ? dist / tl : dist);
    i = i2, j = j2;
  }
  free(row);
  return RT_OK;
}

/* Output: the leading dims, each the larger of the two shapes' (known when both are
 * constants); TF's rank checks. */
static int edit_distance_shape(rt_shape_ctx *c) {
  const rt_shape *hs = &c->in_shapes[2], *ts = &c->in_shapes[5];
  int64_t nh = hs->ndims == 1 ? hs->dims[0] : -1, nt = ts->ndims == 1 ? ts->dims[0] : -1;
  if (nh >= 0 && nh < 2)
    return op_shape_error(c, 1u << 2 | 1u << 5, "Input Hypothesis SparseTensors must have rank at least 2, but "
                          "hypothesis_shape rank is: %lld", (long long)nh);
  if (nt >= 0 && nt < 2)
    return op_shape_error(c, 1u << 2 | 1u << 5, "Input Truth SparseTensors must have rank at least 2, but "
                          "truth_shape rank is: %lld", (long long)nt);
  if (nh >= 0 && nt >= 0 && nh != nt)
    return op_shape_error(c, 1u << 2 | 1u << 5, "Num elements of hypothesis_shape does not match truth_shape: "
                          "%lld vs. %lld", (long long)nh, (long long)nt);
  int64_t n = nh >= 0 ? nh : nt;
  if (n < 0 || n - 1 > RT_MAX_DIMS) {
    c->out_shapes[0] = rt_shape_unknown();
    return RT_OK;
  }
  rt_shape o = {.ndims = (int)n - 1};
  int64_t h[RT_MAX_DIMS + 1], t[RT_MAX_DIMS + 1];
  int kh, kt;
  bool known = op_const_ints(c, 2, h, RT_MAX_DIMS + 1, &kh) && op_const_ints(c, 5, t, RT_MAX_DIMS + 1, &kt) &&
               kh == n && kt == n;
  for (int d = 0; d < o.ndims; d++) o.dims[d] = known ? (h[d] > t[d] ? h[d] : t[d]) : -1;
  c->out_shapes[0] = o;
  return RT_OK;
}

static const rt_op_def ctc_ops[] = {
  {.name = "CTCLoss", .inputs = "inputs: T, labels_indices: int64, labels_values: int32, sequence_length: int32",
   .outputs = "loss: T, gradient: T",
   .attrs = "preprocess_collapse_repeated: bool = false, ctc_merge_repeated: bool = true, "
            "ignore_longer_outputs_than_inputs: bool = false, T: {float, double} = float",
   .help = "CTC loss per batch element (-log p(labels | logits)) and its gradient for the time-major logits.",
   .shape = ctc_loss_shape, .kernel = {[RT_DEV_CPU] = ctc_loss_kernel}, .grad = ctc_loss_grad},
  {.name = "CTCGreedyDecoder", .inputs = "inputs: T, sequence_length: int32",
   .outputs = "decoded_indices: int64, decoded_values: int64, decoded_shape: int64, log_probability: T",
   .attrs = "merge_repeated: bool = false, blank_index: int = -1, T: {float, double} = float",
   .help = "Best path decoding: the most likely class per step, repeats merged, blanks dropped.",
   .shape = greedy_shape, .kernel = {[RT_DEV_CPU] = greedy_kernel}, .grad = op_no_grad},
  {.name = "CTCBeamSearchDecoder", .inputs = "inputs: T, sequence_length: int32",
   .outputs = "decoded_indices: top_paths * int64, decoded_values: top_paths * int64, "
              "decoded_shape: top_paths * int64, log_probability: T",
   .attrs = "beam_width: int >= 1, top_paths: int >= 1, merge_repeated: bool = true, T: {float, double} = float",
   .help = "Prefix beam search: the top_paths most likely labellings of a beam_width wide search.",
   .shape = beam_shape, .kernel = {[RT_DEV_CPU] = beam_kernel}, .grad = op_no_grad},
  {.name = "EditDistance",
   .inputs = "hypothesis_indices: int64, hypothesis_values: T, hypothesis_shape: int64, truth_indices: int64, "
             "truth_values: T, truth_shape: int64",
   .outputs = "output: float", .attrs = "normalize: bool = true, T: type",
   .help = "Levenshtein distance between sparse sequences (the last dimension), normalized by the truth's length.",
   .shape = edit_distance_shape, .kernel = {[RT_DEV_CPU] = edit_distance_kernel}, .grad = op_no_grad},
};

void op_ctc_register(void) { rt_op_register(ctc_ops, OP_COUNT(ctc_ops)); }
