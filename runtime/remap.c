/* The remapper (runtime/remap.h): Conv2D -> BiasAdd (-> Relu) into _FusedConv2D,
 * MaxPoolGrad -> ReluGrad into _FusedMaxPoolGrad. */
#include "runtime/remap.h"
#include "base/alloc.h"

#include <stdlib.h>
#include <string.h>

/* What becomes of each node: copied, folded into the fused node after it, or that node. */
enum { KEEP, FOLDED, HEAD };
typedef struct fusion {
  int conv, bias;   /* node ids, for a HEAD; conv: the MaxPoolGrad, bias -1, for a pool's */
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

/* uses: edges into each node, pinned: the run reads it; a folded node needs one use, by
 * the next node of the pattern, no control input, and to be unpinned. */
static bool foldable(const rt_graph *g, int id, const int *uses, const bool *pinned) {
  const rt_node *n = g->nodes[id];
  return uses[id] == 1 && !pinned[id] && n->n_inputs == n->n_data_inputs && nhwc(n);
}

static bool on_cpu(const rt_node *n) { return strstr(n->assigned, "/device:CPU:") != NULL; }

/* ReluGrad(MaxPoolGrad(a, p, g), a) at node i: the gradient routed only to maxima above 0,
 * which is ReluGrad's test on the same input (a is the Relu's output). */
static bool match_pool(const rt_graph *g, int i, const int *uses, const bool *pinned, fusion *f) {
  const rt_node *n = g->nodes[i];
  int m = input_of(g, i, 0, "MaxPoolGrad");
  if (m < 0 || n->n_data_inputs != 2 || !foldable(g, m, uses, pinned) || !on_cpu(n)) return false;
  const rt_edge *a = &g->nodes[m]->edges[0], *b = &n->edges[1];
  if (a->node != b->node || a->index != b->index) return false;
  *f = (fusion){.conv = m, .bias = -1, .relu = true};
  return true;
}

/* The pattern ending at node i (Relu or BiasAdd) into *f. */
static bool match(const rt_graph *g, int i, const int *uses, const bool *pinned, fusion *f) {
  const rt_node *n = g->nodes[i];
  if (!strcmp(n->op, "ReluGrad")) return match_pool(g, i, uses, pinned, f);
  int b = i;
  f->relu = !strcmp(n->op, "Relu");
  if (f->relu) {
    b = input_of(g, i, 0, "BiasAdd");
    if (b < 0 || !foldable(g, b, uses, pinned)) return false;
  } else if (strcmp(n->op, "BiasAdd") || !nhwc(n)) {
    return false;
  }
  int c = input_of(g, b, 0, "Conv2D");
  if (c < 0 || !foldable(g, c, uses, pinned) || !on_cpu(g->nodes[c])) return false;
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
  static const char *const ops[] = {"BiasAdd", "Relu"}, *const pool_ops[] = {"ReluGrad"};
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
    rt_node_set_strings(n, "fused_ops", f->relu ? 2 : 1, ops);
  }
  rt_node_set_device(n, head->device);
  n->assigned = xstrdup(head->assigned);
  if (head->reason) n->reason = xstrdup(head->reason);
  return n;
}

int rt_remap_graph(rt_graph **gp, const char *const *keep, int n_keep, rt_status *st) {
  const rt_graph *g = *gp;
  int n = g->n_nodes, found = 0;
  int *uses = xcalloc((size_t)n + 1, sizeof *uses), *role = xcalloc((size_t)n + 1, sizeof *role);
  bool *pinned = xcalloc((size_t)n + 1, sizeof *pinned);
  fusion *fu = xcalloc((size_t)n + 1, sizeof *fu);
  bool forward = false;   /* a loop's back edge: the copy below needs inputs first */
  for (int i = 0; i < n; i++)
    for (int k = 0; k < g->nodes[i]->n_inputs; k++) {
      uses[g->nodes[i]->edges[k].node]++;
      forward |= g->nodes[i]->edges[k].node >= i;
    }
  for (int i = 0; i < n_keep; i++) {
    char name[512];
    int idx;
    rt_node *k = rt_tensor_name_parse(keep[i], name, sizeof name, &idx) ? rt_graph_find(g, name) : NULL;
    if (k) pinned[k->id] = true;
  }
  /* Relu heads first, so a BiasAdd that a Relu folds is not a head of its own. */
  static const char *const heads[] = {"Relu", "ReluGrad", "BiasAdd"};
  for (int pass = 0; pass < 3 && !forward; pass++)
    for (int i = 0; i < n; i++) {
      fusion f;
      if (role[i] != KEEP || strcmp(g->nodes[i]->op, heads[pass]) ||
          !match(g, i, uses, pinned, &f) || role[f.conv] != KEEP || (f.bias >= 0 && role[f.bias] != KEEP))
        continue;
      role[i] = HEAD, fu[i] = f, found++;
      role[f.conv] = FOLDED;
      if (f.bias >= 0 && f.bias != i) role[f.bias] = FOLDED;
    }
  int rc = RT_OK;
  if (found) {
    rt_graph *out = rt_graph_new();
    int *id_map = xcalloc((size_t)n + 1, sizeof *id_map);
    rt_graph_reserve(out, n);
    for (int i = 0; i < n && !rc; i++) {
      id_map[i] = -1;
      if (role[i] == FOLDED) continue;
      rc = role[i] == HEAD ? rt_graph_add(out, fused_node(g, i, &fu[i]), st)
                           : rt_graph_add_copy(out, g->nodes[i], id_map, st);
      id_map[i] = out->n_nodes - 1;
    }
    free(id_map);
    if (rc) {
      rt_graph_free(out);
    } else {
      rt_graph_free(*gp);
      *gp = out;
    }
  }
  free(uses), free(role), free(pinned), free(fu);
  return rc;
}
