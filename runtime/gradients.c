#include "runtime/gradients.h"
#include "base/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/op.h"

/* Gradient names collected for one output of one node. */
typedef struct glist {
  int n, cap;
  char **v;
} glist;

static void glist_add(glist *l, char *name) {
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 2;
    l->v = xrealloc(l->v, (size_t)l->cap * sizeof *l->v);
  }
  l->v[l->n++] = name;
}

static void glist_free(glist *l) {
  for (int i = 0; i < l->n; i++) free(l->v[i]);
  free(l->v);
}

static int add_node(rt_graph *g, rt_node *n, rt_status *st) { return rt_graph_add(g, n, st); }

/* One tensor holding the sum of the list (the list is emptied). */
static char *aggregate(rt_graph *g, glist *l, const char *scope, const char *base,
                       rt_status *st) {
  if (l->n == 0) return NULL;
  if (l->n == 1) {
    l->n = 0;
    return l->v[0];
  }
  char name[512], want[512];
  snprintf(want, sizeof want, "%s%s/AddN", scope, base);
  rt_graph_unique_name(g, want, name, sizeof name);
  rt_node *n = rt_node_new(name, "AddN");
  for (int i = 0; i < l->n; i++) rt_node_add_input(n, l->v[i]);
  for (int i = 0; i < l->n; i++) free(l->v[i]);
  l->n = 0;
  if (add_node(g, n, st)) return NULL;
  return strdup(name);
}

static char *ones_like(rt_graph *g, const char *y, const char *scope, rt_status *st) {
  char name[512], want[512];
  snprintf(want, sizeof want, "%sOnesLike", scope);
  rt_graph_unique_name(g, want, name, sizeof name);
  rt_node *n = rt_node_new(name, "OnesLike");
  rt_node_add_input(n, y);
  if (add_node(g, n, st)) return NULL;
  return strdup(name);
}

int rt_gradients(rt_graph *g, int n_ys, const char *const *ys, const char *const *grad_ys,
                 int n_xs, const char *const *xs, const char *scope, char **dx, rt_status *st) {
  int n0 = g->n_nodes, rc = RT_OK;
  for (int i = 0; i < n_xs; i++) dx[i] = NULL;
  bool *fwd = calloc((size_t)n0 + 1, sizeof *fwd);   /* reachable from xs */
  bool *bwd = calloc((size_t)n0 + 1, sizeof *bwd);   /* reaches ys */
  glist **grads = calloc((size_t)n0 + 1, sizeof *grads);
  if (!fwd || !bwd || !grads) {
    rc = rt_error(st, RT_RESOURCE_EXHAUSTED, "out of memory");
    goto out;
  }
  rt_node *nd;
  int idx;
  for (int i = 0; i < n_xs && !rc; i++)
    if (!(rc = rt_graph_output(g, xs[i], &nd, &idx, st))) fwd[nd->id] = true;
  /* Node order is topological (inputs are added first), so one pass forward... */
  for (int i = 0; i < n0 && !rc; i++)
    for (int k = 0; k < g->nodes[i]->n_data_inputs && !fwd[i]; k++)
      fwd[i] = fwd[g->nodes[i]->edges[k].node];
  for (int i = 0; i < n_ys && !rc; i++)
    if (!(rc = rt_graph_output(g, ys[i], &nd, &idx, st))) bwd[nd->id] = true;
  /* ...and one backward. */
  for (int i = n0 - 1; i >= 0 && !rc; i--)
    if (bwd[i])
      for (int k = 0; k < g->nodes[i]->n_data_inputs; k++) bwd[g->nodes[i]->edges[k].node] = true;
  if (rc) goto out;

  /* Seed with grad_ys (or ones). */
  for (int i = 0; i < n_ys && !rc; i++) {
    rt_graph_output(g, ys[i], &nd, &idx, st);
    if (!fwd[nd->id]) continue;
    if (!grads[nd->id]) grads[nd->id] = calloc((size_t)nd->n_outputs, sizeof(glist));
    char *seed = grad_ys && grad_ys[i] ? strdup(grad_ys[i]) : ones_like(g, ys[i], scope, st);
    if (!seed) {
      rc = st->code;
      break;
    }
    glist_add(&grads[nd->id][idx], seed);
  }

  for (int i = n0 - 1; i >= 0 && !rc; i--) {
    if (!fwd[i] || !bwd[i] || !grads[i]) continue;
    rt_node *n = g->nodes[i];
    bool is_x = false;
    for (int k = 0; k < n_xs; k++) {
      char node[256];
      int xi;
      rt_tensor_name_parse(xs[k], node, sizeof node, &xi);
      is_x |= !strcmp(node, n->name);
    }
    /* Sum what reached each output. */
    char **dy = calloc((size_t)n->n_outputs + 1, sizeof *dy);
    bool any = false;
    for (int o = 0; o < n->n_outputs && !rc; o++) {
      char base[300];
      snprintf(base, sizeof base, "%s_grad", n->name);
      dy[o] = aggregate(g, &grads[i][o], scope, base, st);
      if (!dy[o] && st->code) rc = st->code;
      any |= dy[o] != NULL;
    }
    /* An x keeps its summed gradient; differentiation stops at xs that are sources. */
    if (!rc && is_x) {
      for (int k = 0; k < n_xs; k++) {
        char node[256];
        int xi;
        rt_tensor_name_parse(xs[k], node, sizeof node, &xi);
        if (!strcmp(node, n->name) && xi < n->n_outputs && dy[xi] && !dx[k]) dx[k] = strdup(dy[xi]);
      }
    }
    bool needs_inputs = false;
    for (int k = 0; k < n->n_data_inputs; k++) needs_inputs |= fwd[n->edges[k].node];
    if (!rc && any && needs_inputs) {
      const rt_op_def *def = n->def;
      if (!def || !def->grad) {
        rc = rt_error(st, RT_LOOKUP_ERROR, "No gradient defined for operation '%s' (op type: %s)",
                      n->name, n->op);
      } else {
        char sc[600];
        snprintf(sc, sizeof sc, "%s%s_grad/", scope, n->name);
        char **in_grads = calloc((size_t)n->n_data_inputs + 1, sizeof *in_grads);
        rt_grad_ctx ctx = {g, n, (const char *const *)dy, in_grads, sc, st};
        rc = def->grad(&ctx);
        n = g->nodes[i];   /* g->nodes may have moved */
        for (int k = 0; k < n->n_data_inputs; k++) {
          if (!in_grads[k]) continue;
          const rt_edge *e = &n->edges[k];
          if (!rc && fwd[e->node]) {
            if (!grads[e->node])
              grads[e->node] = calloc((size_t)g->nodes[e->node]->n_outputs, sizeof(glist));
            glist_add(&grads[e->node][e->index], in_grads[k]);
          } else {
            free(in_grads[k]);
          }
        }
        free(in_grads);
      }
    }
    for (int o = 0; o < n->n_outputs; o++) free(dy[o]);
    free(dy);
  }
out:
  for (int i = 0; i < n0; i++)
    if (grads && grads[i]) {
      for (int o = 0; o < g->nodes[i]->n_outputs; o++) glist_free(&grads[i][o]);
      free(grads[i]);
    }
  free(grads);
  free(fwd);
  free(bwd);
  if (rc)
    for (int i = 0; i < n_xs; i++) {
      free(dx[i]);
      dx[i] = NULL;
    }
  return rc;
}
