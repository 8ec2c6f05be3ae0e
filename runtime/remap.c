/* The remapper (runtime/remap.h): Conv2D -> BiasAdd (-> Relu (-> MaxPool)) into
 * _FusedConv2D, MaxPoolGrad -> ReluGrad into _FusedMaxPoolGrad, then a training step's
 * pool and its gradient onto a workspace (fuse_pool_argmax), then a first layer's filter
 * and bias gradients onto it too (fuse_filter_argmax). */
#include "runtime/remap.h"
#include "base/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What becomes of each node: copied, folded into the fused node after it, or that node. */
enum { KEEP, FOLDED, HEAD };
typedef struct fusion {
  int conv, bias;   /* node ids, for a HEAD; conv: the MaxPoolGrad, bias -1, for a pool's */
  int relu_node;    /* a MaxPool head's Relu, folded too; else -1 */
  bool relu;
} fusion;

static bool nhwc(const rt_node *n) { return !strcmp(rt_node_string(n, "data_format", "NHWC"), "NHWC"); }

/* Node i's data input k is output 0 of a node with op `op` on i's device: that node's id. */
static int input_of(const rt_graph *g, int i, int k, const char *op) {
  const rt_node *n = g->nodes[i];
  if (k >= n->n_data_inputs || n->edges[k].index != 0) return -1;
  const rt_node *s = g->nodes[n->edges[k].node];
  if (strcmp(s->op, op) || !s->assigned || !n->assigned || strcmp(s->assigned, n->assigned)) return -1;
  return s->id;
}

/* Per node: uses, edges into it; likes, those of _SumToShapeOf reading only its shape
 * (input 1: the gradient of a broadcast add, such as `conv + bias`), which the fused node,
 * of the same shape, can serve instead; first_like, the first such reader; pinned, the run
 * reads it. */
typedef struct counts {
  int *uses, *likes, *first_like;
  bool *pinned;
} counts;

/* A folded node needs one use besides its shape's (the next node of the pattern), no
 * control input, to be unpinned, and its shape's readers after the fused node at h. */
static bool foldable(const rt_graph *g, int id, int h, const counts *k) {
  const rt_node *n = g->nodes[id];
  return k->uses[id] - k->likes[id] == 1 && k->first_like[id] > h && !k->pinned[id] &&
         n->n_inputs == n->n_data_inputs && nhwc(n);
}

/* Add(conv, b) with b a vector of conv's channels: a BiasAdd (grappler's bias-semantic Add). */
static bool bias_add(const rt_graph *g, int a) {
  const rt_node *n = g->nodes[a];
  if (strcmp(n->op, "BiasAdd") && strcmp(n->op, "Add") && strcmp(n->op, "AddV2")) return false;
  if (n->n_data_inputs != 2 || !n->out_shapes || n->out_shapes[0].ndims != 4) return false;
  if (!strcmp(n->op, "BiasAdd")) return nhwc(n);
  const rt_node *b = g->nodes[n->edges[1].node];
  const rt_shape *bs = &b->out_shapes[n->edges[1].index];
  return bs->ndims == 1 && bs->dims[0] >= 0 && bs->dims[0] == n->out_shapes[0].dims[3];
}

static bool on_cpu(const rt_node *n) { return strstr(n->assigned, "/device:CPU:") != NULL; }

/* ReluGrad(MaxPoolGrad(a, p, g), a) at node i: the gradient routed only to maxima above 0,
 * which is ReluGrad's test on the same input (a is the Relu's output). */
static bool match_pool(const rt_graph *g, int i, const counts *k, fusion *f) {
  const rt_node *n = g->nodes[i];
  int m = input_of(g, i, 0, "MaxPoolGrad");
  if (m < 0 || n->n_data_inputs != 2 || !foldable(g, m, i, k) || !on_cpu(n)) return false;
  const rt_edge *a = &g->nodes[m]->edges[0], *b = &n->edges[1];
  if (a->node != b->node || a->index != b->index) return false;
  *f = (fusion){.conv = m, .bias = -1, .relu_node = -1, .relu = true};
  return true;
}

static bool match(const rt_graph *g, int i, const counts *k, fusion *f);

/* An int list attr equal to {1, 2, 2, 1}. */
static bool two_by_two(const rt_node *n, const char *attr) {
  const rt_attr_value *v = rt_node_attr(n, attr);
  if (!v || v->kind != RT_ATTR_LIST_INT || v->list.n != 4) return false;
  const int64_t *d = v->list.v;
  return d[0] == 1 && d[1] == 2 && d[2] == 2 && d[3] == 1;
}

/* MaxPool(Relu(BiasAdd(Conv2D))) at node i, a 2x2 window at stride 2 (a forward pass:
 * where the gradients read the Relu's output, it has other uses and stays). No folded
 * node may have shape readers: the fused output is the pooled one. */
static bool match_conv_pool(const rt_graph *g, int i, const counts *k, fusion *f) {
  const rt_node *n = g->nodes[i];
  int r = input_of(g, i, 0, "Relu");
  if (r < 0 || n->n_data_inputs != 1 || !two_by_two(n, "ksize") || !two_by_two(n, "strides") ||
      !nhwc(n) || !foldable(g, r, i, k) || k->likes[r] || !match(g, r, k, f) || !f->relu ||
      k->likes[f->bias] || k->likes[f->conv] || rt_node_type(n, "T", RT_FLOAT) != RT_FLOAT)
    return false;
  f->relu_node = r;
  return true;
}

/* The pattern ending at node i (MaxPool, Relu, ReluGrad, BiasAdd or a bias-semantic Add)
 * into *f. */
static bool match(const rt_graph *g, int i, const counts *k, fusion *f) {
  const rt_node *n = g->nodes[i];
  f->relu_node = -1;
  if (!strcmp(n->op, "ReluGrad")) return match_pool(g, i, k, f);
  if (!strcmp(n->op, "MaxPool")) return match_conv_pool(g, i, k, f);
  int b = i;
  f->relu = !strcmp(n->op, "Relu");
  if (f->relu) {
    b = n->n_data_inputs == 1 && n->edges[0].index == 0 ? n->edges[0].node : -1;
    if (b < 0 || strcmp(g->nodes[b]->assigned ? g->nodes[b]->assigned : "", n->assigned) ||
        !bias_add(g, b) || !foldable(g, b, i, k))
      return false;
  } else if (!bias_add(g, i)) {
    return false;
  }
  int c = input_of(g, b, 0, "Conv2D");
  if (c < 0 || !foldable(g, c, i, k) || !on_cpu(g->nodes[c])) return false;
  rt_dtype t = rt_node_type(g->nodes[c], "T", RT_FLOAT);
  if (t != RT_FLOAT && t != RT_DOUBLE) return false;
  f->conv = c, f->bias = b;
  return true;
}

/* The fused node for head h: the first node's data inputs and window attrs (and the
 * bias), h's name, device and control inputs. */
static rt_node *fused_node(const rt_graph *g, int h, const fusion *f) {
  static const char *const attrs[] = {"T", "strides", "padding", "data_format", "dilations",
                                      "use_cudnn_on_gpu", "ksize"};
  static const char *const ops[] = {"BiasAdd", "Relu", "MaxPool"}, *const pool_ops[] = {"ReluGrad"};
  const rt_node *head = g->nodes[h], *conv = g->nodes[f->conv];
  bool pool = f->bias < 0;
  rt_node *n = rt_node_new(head->name, pool ? "_FusedMaxPoolGrad" : "_FusedConv2D");
  for (int k = 0; k < conv->n_data_inputs; k++) rt_node_add_input(n, conv->inputs[k]);
  if (!pool) rt_node_add_input(n, g->nodes[f->bias]->inputs[1]);
  for (int k = head->n_data_inputs; k < head->n_inputs; k++) rt_node_add_input(n, head->inputs[k]);
  for (size_t a = 0; a < sizeof attrs / sizeof *attrs; a++) {
    const rt_attr_value *v = rt_node_attr(conv, attrs[a]);
    rt_attr_value copy;
    if (v && !rt_attr_value_copy(&copy, v)) rt_node_set_attr(n, attrs[a], &copy);
  }
  if (pool) {
    rt_node_set_strings(n, "fused_ops", 1, pool_ops);
  } else {
    rt_node_set_int(n, "num_args", 1);
    rt_node_set_strings(n, "fused_ops", f->relu_node >= 0 ? 3 : f->relu ? 2 : 1, ops);
    if (f->relu_node >= 0) rt_node_set_string(n, "pool_padding", rt_node_string(head, "padding", "VALID"));
  }
  rt_node_set_device(n, head->device);
  n->assigned = xstrdup(head->assigned);
  if (head->reason) n->reason = xstrdup(head->reason);
  return n;
}

/* Every pattern starts at a Conv2D or a MaxPoolGrad: a graph without one has nothing to fuse,
 * and a big graph of other ops is walked once, not once per head op. */
static bool has_first_node(const rt_graph *g) {
  for (int i = 0; i < g->n_nodes; i++) {
    const char *op = g->nodes[i]->op;
    if (!strcmp(op, "Conv2D") || !strcmp(op, "MaxPoolGrad")) return true;
  }
  return false;
}

/* pinned[id]: the run feeds, fetches or targets node id. */
static void pin(const rt_graph *g, const char *const *keep, int n_keep, bool *pinned) {
  for (int i = 0; i < n_keep; i++) {
    char name[512];
    int idx;
    rt_node *p = rt_tensor_name_parse(keep[i], name, sizeof name, &idx) ? rt_graph_find(g, name) : NULL;
    if (p) pinned[p->id] = true;
  }
}

/* A node's string-list attr is exactly ops[0 .. n). */
static bool fused_ops_are(const rt_node *n, int count, const char *const *ops) {
  const rt_attr_value *v = rt_node_attr(n, "fused_ops");
  if (!v || v->kind != RT_ATTR_LIST_STRING || v->list.n != count) return false;
  for (int i = 0; i < count; i++)
    if (strcmp(((char *const *)v->list.v)[i], ops[i])) return false;
  return true;
}

/* The pass's new graph in *gp's place (the old one freed) when rc is RT_OK; else out freed. */
static int replace_graph(rt_graph **gp, rt_graph *out, int rc) {
  if (rc) {
    rt_graph_free(out);
  } else {
    rt_graph_free(*gp);
    *gp = out;
  }
  return rc;
}

static void rename_node(rt_node *n, const char *name, const char *op) {
  free(n->name), free(n->op);
  n->name = xstrdup(name), n->op = xstrdup(op);
}

/* c as an Identity of `input` under its own name, its control inputs kept (a shape reader
 * or a gradient whose value another node now makes). */
static int add_identity(rt_graph *out, const rt_node *c, const char *input, rt_status *st) {
  rt_node *m = rt_node_clone(c);
  rename_node(m, c->name, "Identity");
  int nd = c->n_data_inputs;   /* a clone's count is rt_graph_add's to make */
  char *in = xstrdup(input);
  for (int k = 0; k < nd; k++) free(m->inputs[k]);
  m->inputs[0] = in;
  memmove(m->inputs + 1, m->inputs + nd, sizeof *m->inputs * (size_t)(m->n_inputs - nd));
  m->n_inputs -= nd - 1;
  for (int a = 0; a < m->n_attrs; a++)
    rt_attr_value_clear(&m->attrs[a].value), free(m->attrs[a].name);
  m->n_attrs = 0;
  rt_node_set_type(m, "T", RT_FLOAT);
  return rt_graph_add(out, m, st);
}

/* The training step's pool, after the patterns above: P = MaxPool(R) 2x2 at stride 2 with
 * R = _FusedConv2D [BiasAdd, Relu], and F = _FusedMaxPoolGrad(R, P, dy), where nothing but
 * P, F and _SumToShapeOf nodes reading R's shape with F as their data reads R, and R's
 * output has even sides. R goes: P becomes _FusedConv2DWithArgmax (the pooled output and
 * a byte a value of workspace), F _FusedMaxPoolGradWithArgmax(P:1, dy), the shape readers
 * Identity(F) (F has R's shape). The Relu's output (four times the pool's) is then never
 * written, nor read again by the pool and its gradient. */
static int fuse_pool_argmax(rt_graph **gp, const char *const *keep, int n_keep, rt_status *st) {
  static const char *const relu_ops[] = {"BiasAdd", "Relu"}, *const grad_ops[] = {"ReluGrad"};
  static const char *const pool_ops[] = {"BiasAdd", "Relu", "MaxPool"};
  const rt_graph *g = *gp;
  int n = g->n_nodes, found = 0;
  int *uses = xcalloc((size_t)n + 1, sizeof *uses), *grad = xcalloc((size_t)n + 1, sizeof *grad);
  int *pool = xcalloc((size_t)n + 1, sizeof *pool), *likes = xcalloc((size_t)n + 1, sizeof *likes);
  bool *pinned = xcalloc((size_t)n + 1, sizeof *pinned);
  pin(g, keep, n_keep, pinned);
  for (int i = 0; i < n; i++) grad[i] = pool[i] = -1;
  for (int i = 0; i < n; i++) {
    const rt_node *c = g->nodes[i];
    for (int e = 0; e < c->n_inputs; e++) uses[c->edges[e].node]++;
    if (!strcmp(c->op, "_FusedMaxPoolGrad") && c->n_data_inputs == 3 && !c->edges[0].index &&
        !c->edges[1].index && fused_ops_are(c, 1, grad_ops) && two_by_two(c, "ksize") &&
        two_by_two(c, "strides"))
      grad[c->edges[0].node] = i;   /* R's gradient; its P checked below */
  }
  for (int i = 0; i < n; i++) {   /* shape readers of R whose data is F */
    const rt_node *c = g->nodes[i];
    if (!strcmp(c->op, "_SumToShapeOf") && c->n_data_inputs == 2 && !c->edges[1].index) {
      int r = c->edges[1].node;
      if (grad[r] >= 0 && c->edges[0].node == grad[r] && !c->edges[0].index) likes[r]++;
    }
  }
  for (int i = 0; i < n; i++) {
    const rt_node *p = g->nodes[i];
    if (strcmp(p->op, "MaxPool") || p->n_data_inputs != 1 || p->edges[0].index ||
        !two_by_two(p, "ksize") || !two_by_two(p, "strides") || !nhwc(p) ||
        rt_node_type(p, "T", RT_FLOAT) != RT_FLOAT)
      continue;
    int r = p->edges[0].node, f = grad[r];
    const rt_node *R = g->nodes[r];
    if (f < 0 || g->nodes[f]->edges[1].node != i || uses[r] != 2 + likes[r] || pinned[r] ||
        strcmp(R->op, "_FusedConv2D") || !fused_ops_are(R, 2, relu_ops) || !R->assigned ||
        !p->assigned || strcmp(R->assigned, p->assigned) || !g->nodes[f]->assigned ||
        strcmp(g->nodes[f]->assigned, p->assigned) || !R->out_shapes ||
        R->out_shapes[0].ndims != 4)
      continue;
    const int64_t *d = R->out_shapes[0].dims;
    if (d[1] <= 0 || d[2] <= 0 || d[1] % 2 || d[2] % 2 || d[3] < 0) continue;
    pool[r] = i, found++;
  }
  int rc = RT_OK;
  if (found) {
    rt_graph *out = rt_graph_new();
    int *id_map = xcalloc((size_t)n + 1, sizeof *id_map), *of = xcalloc((size_t)n + 1, sizeof *of);
    for (int i = 0; i < n; i++) of[i] = -1;   /* P and F: their R */
    for (int r = 0; r < n; r++)
      if (pool[r] >= 0) of[pool[r]] = of[grad[r]] = r;
    rt_graph_reserve(out, n);
    for (int i = 0; i < n && !rc; i++) {
      const rt_node *c = g->nodes[i];
      id_map[i] = -1;
      if (pool[i] >= 0) continue;   /* R */
      int r = of[i];
      if (r >= 0 && i == pool[r]) {   /* P: R's inputs, P's control inputs and name */
        rt_node *m = rt_node_clone(g->nodes[r]);
        rename_node(m, c->name, "_FusedConv2DWithArgmax");
        for (int k = c->n_data_inputs; k < c->n_inputs; k++) rt_node_add_input(m, c->inputs[k]);
        rt_node_set_strings(m, "fused_ops", 3, pool_ops);
        rt_node_set_string(m, "pool_padding", rt_node_string(c, "padding", "VALID"));
        rt_node_set_device(m, c->device);
        free(m->assigned), free(m->reason);
        m->assigned = xstrdup(c->assigned), m->reason = c->reason ? xstrdup(c->reason) : NULL;
        rc = rt_graph_add(out, m, st);
      } else if (r >= 0) {   /* F: P's workspace and dy */
        rt_node *m = rt_node_clone(c);
        char ws[512];
        snprintf(ws, sizeof ws, "%s:1", g->nodes[pool[r]]->name);
        rename_node(m, c->name, "_FusedMaxPoolGradWithArgmax");
        free(m->inputs[0]), free(m->inputs[1]);
        m->inputs[0] = xstrdup(ws), m->inputs[1] = m->inputs[2];
        memmove(m->inputs + 2, m->inputs + 3, sizeof *m->inputs * (size_t)(m->n_inputs - 3));
        m->n_inputs--;
        rc = rt_graph_add(out, m, st);
      } else if (!strcmp(c->op, "_SumToShapeOf") && c->n_data_inputs == 2 &&
                 pool[c->edges[1].node] >= 0) {   /* F to its own shape: F */
        rc = add_identity(out, c, c->inputs[0], st);
      } else {
        rc = rt_graph_add_copy(out, c, id_map, st);
      }
      id_map[i] = out->n_nodes - 1;
    }
    free(id_map), free(of);
    rc = replace_graph(gp, out, rc);
  }
  free(uses), free(grad), free(pool), free(likes), free(pinned);
  return rc;
}

static bool (*filter_argmax_fast)(int64_t kh, int64_t kw, int64_t ic, int64_t oc);
void rt_remap_set_filter_argmax(bool (*fast)(int64_t kh, int64_t kw, int64_t ic, int64_t oc)) {
  filter_argmax_fast = fast;
}

/* A first layer after fuse_pool_argmax: B = Conv2DBackpropFilter(x, sizes, F), directly or
 * through Identities (the shape reader fuse_pool_argmax left, tf.tuple's
 * control_dependency), with F = _FusedMaxPoolGradWithArgmax(ws, dyp) whose other reader is
 * at most one _SumToShapeOf or BiasAddGrad S (the bias gradient): nothing asks for the
 * layer's input gradient, so F's output is read only to be summed twice. Where the CPU's
 * direct filter kernel runs the window (filter_argmax_fast), B becomes
 * _FusedConv2DBackpropFilterWithArgmax(x, ws, dyp) under B's name, placed where the first
 * of B and S stood (its filter's shape an attr, so that it needs no node made after S);
 * S becomes an Identity of its output 1 (summed as S sums: bias_sum). F and the Identities
 * go: their control inputs (tf.tuple's group) with them, and control inputs on them, which
 * must come after the new node, name it instead. */
enum { CHAIN_MAX = 4 };
typedef struct filter_fusion {
  int b, f, s, at;          /* B, F, S or -1, and where the new node goes (B or S) */
  int chain[CHAIN_MAX], n_chain;
} filter_fusion;

static bool match_filter(const rt_graph *g, int b, const int *duses, const int *sums,
                         const int *sum_of, const bool *pinned, filter_fusion *ff) {
  const rt_node *B = g->nodes[b];
  if (strcmp(B->op, "Conv2DBackpropFilter") || B->n_inputs != 3 || B->edges[2].index ||
      !B->assigned || !on_cpu(B) || !nhwc(B) || rt_node_type(B, "T", RT_FLOAT) != RT_FLOAT ||
      !B->out_shapes || B->out_shapes[0].ndims != 4 || !rt_shape_fully_known(&B->out_shapes[0]))
    return false;
  *ff = (filter_fusion){.b = b, .s = -1, .at = b};
  int f = B->edges[2].node;
  while (!strcmp(g->nodes[f]->op, "Identity")) {
    const rt_node *I = g->nodes[f];
    if (ff->n_chain == CHAIN_MAX || I->n_data_inputs != 1 || I->edges[0].index || duses[f] != 1 ||
        pinned[f] || !I->assigned || strcmp(I->assigned, B->assigned))
      return false;
    ff->chain[ff->n_chain++] = f;
    f = I->edges[0].node;
  }
  const rt_node *F = g->nodes[f];
  int s = sums[f] == 1 ? sum_of[f] : -1;
  if (strcmp(F->op, "_FusedMaxPoolGradWithArgmax") || F->n_data_inputs != 2 || pinned[f] ||
      sums[f] > 1 || duses[f] != 1 + (s >= 0) || !F->assigned || strcmp(F->assigned, B->assigned))
    return false;
  const int64_t *fd = B->out_shapes[0].dims;
  if (s >= 0) {   /* the bias gradient: a vector of the channels, before B or after */
    const rt_node *S = g->nodes[s];
    bool sum = !strcmp(S->op, "_SumToShapeOf");
    const rt_shape *bs = sum ? &g->nodes[S->edges[1].node]->out_shapes[S->edges[1].index]
                             : &S->out_shapes[0];
    if (S->n_inputs != S->n_data_inputs || bs->ndims != 1 || bs->dims[0] != fd[3] ||
        rt_node_type(S, "T", RT_FLOAT) != RT_FLOAT || !S->assigned ||
        strcmp(S->assigned, B->assigned) || B->edges[0].node >= s)
      return false;
    ff->s = s, ff->at = s < b ? s : b;
  }
  ff->f = f;
  return filter_argmax_fast(fd[0], fd[1], fd[2], fd[3]);
}

static int fuse_filter_argmax(rt_graph **gp, const char *const *keep, int n_keep, rt_status *st) {
  const rt_graph *g = *gp;
  int n = g->n_nodes, found = 0, rc = RT_OK;
  if (!filter_argmax_fast) return RT_OK;
  int *duses = xcalloc((size_t)n + 1, sizeof *duses), *sums = xcalloc((size_t)n + 1, sizeof *sums);
  int *sum_of = xcalloc((size_t)n + 1, sizeof *sum_of), *grp = xcalloc((size_t)n + 1, sizeof *grp);
  int *gone = xcalloc((size_t)n + 1, sizeof *gone);   /* F and the chain: the fusion's index + 1 */
  bool *pinned = xcalloc((size_t)n + 1, sizeof *pinned);
  filter_fusion *fu = xcalloc((size_t)n + 1, sizeof *fu);
  pin(g, keep, n_keep, pinned);
  for (int i = 0; i < n; i++) {
    const rt_node *c = g->nodes[i];
    grp[i] = -1;
    for (int e = 0; e < c->n_data_inputs; e++) duses[c->edges[e].node]++;
    if (((!strcmp(c->op, "_SumToShapeOf") && c->n_data_inputs == 2) ||
         (!strcmp(c->op, "BiasAddGrad") && c->n_data_inputs == 1 && nhwc(c))) &&
        !c->edges[0].index)
      sums[c->edges[0].node]++, sum_of[c->edges[0].node] = i;
  }
  for (int b = 0; b < n; b++) {
    filter_fusion ff;
    if (!match_filter(g, b, duses, sums, sum_of, pinned, &ff) || gone[ff.f]) continue;
    fu[found] = ff;
    gone[ff.f] = ++found;
    for (int k = 0; k < ff.n_chain; k++) gone[ff.chain[k]] = found;
  }
  /* Control inputs on what goes must come after the new node (and data inputs from B, S or
   * the chain only, which duses ensured): else that fusion is dropped. */
  for (int j = 0; j < n; j++) {
    const rt_node *c = g->nodes[j];
    for (int e = c->n_data_inputs; e < c->n_inputs; e++) {
      int k = gone[c->edges[e].node] - 1;
      if (k >= 0 && !gone[j] && j <= fu[k].at) fu[k].b = -1;
    }
  }
  for (int i = 0; i < n; i++) gone[i] = 0;
  int kept = 0;
  for (int k = 0; k < found; k++) {
    const filter_fusion *ff = &fu[k];
    if (ff->b < 0) continue;
    kept++;
    gone[ff->f] = k + 1, grp[ff->b] = k;
    for (int c = 0; c < ff->n_chain; c++) gone[ff->chain[c]] = k + 1;
    if (ff->s >= 0) grp[ff->s] = k;
  }
  if (kept) {
    rt_graph *out = rt_graph_new();
    int *id_map = xcalloc((size_t)n + 1, sizeof *id_map);
    rt_graph_reserve(out, n);
    for (int i = 0; i < n; i++) id_map[i] = -1;
    for (int i = 0; i < n && !rc; i++) {
      const rt_node *c = g->nodes[i];
      if (gone[i]) continue;
      int k = grp[i];
      if (k < 0) {
        bool names_gone = false;
        for (int e = c->n_data_inputs; e < c->n_inputs; e++)
          names_gone |= gone[c->edges[e].node] > 0;
        if (!names_gone) {
          rc = rt_graph_add_copy(out, c, id_map, st);
        } else {   /* ^F or ^an Identity: ^the new node, once */
          rt_node *m = rt_node_clone(c);
          int w = c->n_data_inputs;
          for (int e = c->n_data_inputs; e < m->n_inputs; e++) {
            int gk = gone[c->edges[e].node] - 1;
            char ctl[512];
            snprintf(ctl, sizeof ctl, "^%s", gk >= 0 ? g->nodes[fu[gk].b]->name : "");
            char *in = xstrdup(gk >= 0 ? ctl : m->inputs[e]);
            bool dup = false;
            for (int d = c->n_data_inputs; d < w && !dup; d++) dup = !strcmp(m->inputs[d], in);
            free(m->inputs[e]);
            if (dup) free(in);
            else m->inputs[w++] = in;
          }
          m->n_inputs = w;
          rc = rt_graph_add(out, m, st);
        }
        id_map[i] = out->n_nodes - 1;
        continue;
      }
      const filter_fusion *ff = &fu[k];
      const rt_node *B = g->nodes[ff->b], *F = g->nodes[ff->f];
      if (i == ff->at) {
        rt_node *m = rt_node_clone(B);
        rename_node(m, B->name, "_FusedConv2DBackpropFilterWithArgmax");
        for (int e = 1; e < m->n_inputs; e++) free(m->inputs[e]);
        m->inputs[1] = xstrdup(F->inputs[0]), m->inputs[2] = xstrdup(F->inputs[1]);
        m->n_inputs = 3;
        rt_node_set_ints(m, "filter_shape", 4, B->out_shapes[0].dims);
        if (ff->s >= 0) rt_node_set_string(m, "bias_sum", g->nodes[ff->s]->op);
        rc = rt_graph_add(out, m, st);
        id_map[ff->b] = out->n_nodes - 1;
        for (int c2 = 0; c2 < ff->n_chain; c2++) id_map[ff->chain[c2]] = id_map[ff->b];
        id_map[ff->f] = id_map[ff->b];
      }
      if (!rc && i == ff->s) {
        char bias[512];
        snprintf(bias, sizeof bias, "%s:1", B->name);
        rc = add_identity(out, c, bias, st);
        id_map[i] = out->n_nodes - 1;
      }
    }
    free(id_map);
    rc = replace_graph(gp, out, rc);
  }
  free(duses), free(sums), free(sum_of), free(grp), free(gone), free(pinned), free(fu);
  return rc;
}

int rt_remap_graph(rt_graph **gp, const char *const *keep, int n_keep, rt_status *st) {
  const rt_graph *g = *gp;
  if (!has_first_node(g)) return RT_OK;
  int n = g->n_nodes, found = 0;
  int *role = xcalloc((size_t)n + 1, sizeof *role), *head = xcalloc((size_t)n + 1, sizeof *head);
  counts k = {.uses = xcalloc((size_t)n + 1, sizeof *k.uses),
              .likes = xcalloc((size_t)n + 1, sizeof *k.likes),
              .first_like = xcalloc((size_t)n + 1, sizeof *k.first_like),
              .pinned = xcalloc((size_t)n + 1, sizeof *k.pinned)};
  fusion *fu = xcalloc((size_t)n + 1, sizeof *fu);
  bool forward = false;   /* a loop's back edge: the copy below needs inputs first */
  for (int i = 0; i < n; i++) k.first_like[i] = n;
  for (int i = 0; i < n; i++) {
    const rt_node *c = g->nodes[i];
    bool like = !strcmp(c->op, "_SumToShapeOf") && c->n_data_inputs == 2;
    for (int e = 0; e < c->n_inputs; e++) {
      int src = c->edges[e].node;
      k.uses[src]++;
      forward |= src >= i;
      if (like && e == 1 && c->edges[e].index == 0 && !k.likes[src]++) k.first_like[src] = i;
    }
  }
  pin(g, keep, n_keep, k.pinned);
  /* MaxPool heads first, then Relu heads, so that what a longer pattern folds is not a head
   * of its own. */
  static const char *const heads[] = {"MaxPool", "Relu", "ReluGrad", "BiasAdd", "Add", "AddV2"};
  for (int pass = 0; pass < 6 && !forward; pass++)
    for (int i = 0; i < n; i++) {
      fusion f;
      if (role[i] != KEEP || strcmp(g->nodes[i]->op, heads[pass]) || !match(g, i, &k, &f) ||
          role[f.conv] != KEEP || (f.bias >= 0 && role[f.bias] != KEEP) ||
          (f.relu_node >= 0 && role[f.relu_node] != KEEP))
        continue;
      role[i] = HEAD, fu[i] = f, found++;
      role[f.conv] = FOLDED, head[f.conv] = i;
      if (f.bias >= 0 && f.bias != i) role[f.bias] = FOLDED, head[f.bias] = i;
      if (f.relu_node >= 0) role[f.relu_node] = FOLDED, head[f.relu_node] = i;
    }
  int rc = RT_OK;
  if (found) {
    rt_graph *out = rt_graph_new();
    int *id_map = xcalloc((size_t)n + 1, sizeof *id_map);
    rt_graph_reserve(out, n);
    for (int i = 0; i < n && !rc; i++) {
      const rt_node *c = g->nodes[i];
      id_map[i] = -1;
      if (role[i] == FOLDED) continue;
      if (role[i] == HEAD) {
        rc = rt_graph_add(out, fused_node(g, i, &fu[i]), st);
      } else if (!strcmp(c->op, "_SumToShapeOf") && c->n_data_inputs == 2 &&
                 role[c->edges[1].node] == FOLDED) {   /* the shape from the fused node */
        rt_node *copy = rt_node_clone(c);
        free(copy->inputs[1]);
        copy->inputs[1] = xstrdup(g->nodes[head[c->edges[1].node]]->name);
        rc = rt_graph_add(out, copy, st);
      } else {
        rc = rt_graph_add_copy(out, c, id_map, st);
      }
      id_map[i] = out->n_nodes - 1;
    }
    free(id_map);
    if (!replace_graph(gp, out, rc)) {
      rc = fuse_pool_argmax(gp, keep, n_keep, st);
      if (!rc) rc = fuse_filter_argmax(gp, keep, n_keep, st);
    }
  }
  free(k.uses), free(k.likes), free(k.first_like), free(k.pinned), free(role), free(head), free(fu);
  return rc;
}
