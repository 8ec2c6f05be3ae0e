#include "runtime/partition.h"
#include "base/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/device.h"

static void key_of(const char *device, bool by_task, char *buf, size_t n) {
  if (!by_task) {
    snprintf(buf, n, "%s", device);
    return;
  }
  rt_devname d;
  rt_devname_parse(device, &d, NULL);
  rt_devname_task_str(&d, buf, n);
}

static int part_index(rt_partition **parts, int *n, const char *key) {
  for (int i = 0; i < *n; i++)
    if (!strcmp((*parts)[i].name, key)) return i;
  *parts = xrealloc(*parts, (size_t)(*n + 1) * sizeof **parts);
  (*parts)[*n] = (rt_partition){strdup(key), rt_graph_new()};
  return (*n)++;
}

void rt_partitions_free(rt_partition *parts, int n) {
  for (int i = 0; i < n; i++) {
    free(parts[i].name);
    rt_graph_free(parts[i].g);
  }
  free(parts);
}

int rt_partition_of(const rt_partition *parts, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (rt_graph_find(parts[i].g, name)) return i;
  return -1;
}

/* Add a clone of n (placed) to g, keeping its assignment. */
static int add_clone(rt_graph *g, rt_node *c, rt_status *st) {
  return rt_graph_add(g, c, st);
}

static void set_sendrecv_attrs(rt_node *n, const char *tensor, rt_dtype t, const char *src_dev,
                               uint64_t inc, const char *dst_dev) {
  rt_node_set_string(n, "tensor_name", tensor);
  rt_node_set_string(n, "send_device", src_dev);
  rt_node_set_int(n, "send_device_incarnation", (int64_t)inc);
  rt_node_set_string(n, "recv_device", dst_dev);
  rt_node_set_bool(n, "client_terminated", false);
  rt_node_set_type(n, "T", t);
}

int rt_partition_graph(const rt_graph *g, const bool *needed, const rt_partition_opts *o,
                       rt_partition **parts_out, int *n_out, rt_status *st) {
  rt_partition *parts = NULL;
  int np = 0, rc = RT_OK;
  /* part: the node's partition (-1: not kept); id: its id there; exact: copied as it is,
   * with inputs that are all exact copies (rt_graph_add_copy: no validation needed). */
  int *part = calloc((size_t)g->n_nodes + 1, sizeof *part);
  int *id = calloc((size_t)g->n_nodes + 1, sizeof *id);
  bool *exact = calloc((size_t)g->n_nodes + 1, sizeof *exact);
  if (!part || !id || !exact) {
    free(part);
    free(id);
    free(exact);
    return rt_error(st, RT_RESOURCE_EXHAUSTED, "out of memory partitioning");
  }
  char key[256];
  const char *last = NULL;   /* nodes on one device share a key: parse it once */
  int last_part = -1;
  for (int i = 0; i < g->n_nodes; i++) {
    part[i] = -1;
    if (needed && !needed[i]) continue;
    const rt_node *n = g->nodes[i];
    if (!n->assigned) {
      rc = rt_error(st, RT_INTERNAL, "node '%s' was not placed", n->name);
      break;
    }
    if (last && !strcmp(last, n->assigned)) {
      part[i] = last_part;
      continue;
    }
    key_of(n->assigned, o->by_task, key, sizeof key);
    part[i] = last_part = part_index(&parts, &np, key);
    last = n->assigned;
  }
  if (!rc) {   /* size each fragment's graph once */
    int *count = calloc((size_t)np + 1, sizeof *count);
    if (count) {
      for (int i = 0; i < g->n_nodes; i++)
        if (part[i] >= 0) count[part[i]]++;
      for (int p = 0; p < np; p++) rt_graph_reserve(parts[p].g, count[p]);
    }
    free(count);
  }

  for (int i = 0; i < g->n_nodes && !rc; i++) {
    if (part[i] < 0) continue;
    const rt_node *n = g->nodes[i];
    rt_graph *dst = parts[part[i]].g;
    /* A kept node with an input the step does not need is fed (rt_graph_needed stops at
     * fed nodes): it stands in the fragment as a Placeholder of its name and type, since its
     * value comes from the feed (PlaceholderWithDefault, a fed Identity, ...). */
    bool fed = false, same = true;
    for (int k = 0; k < n->n_inputs; k++) {
      int sp = part[n->edges[k].node];
      fed |= sp < 0;
      same &= sp == part[i] && (n->edges[k].index < 0 || exact[n->edges[k].node]);
    }
    if (fed) {
      rt_node *ph = rt_node_new(n->name, "Placeholder");
      rt_node_set_type(ph, "dtype", n->out_types[0]);
      rt_node_set_shape(ph, "shape", &n->out_shapes[0]);
      rt_node_set_device(ph, n->device);
      ph->assigned = strdup(n->assigned);
      if ((rc = add_clone(dst, ph, st))) break;
      id[i] = dst->n_nodes - 1;
      continue;
    }
    if (same) {   /* nothing to rewrite: a copy that keeps the validated node's outputs */
      /* Where the fragment so far is g itself (ids and inputs alike), the node itself. */
      bool at_home = dst->n_nodes == i;
      for (int k = 0; at_home && k < n->n_inputs; k++) at_home = id[n->edges[k].node] == n->edges[k].node;
      if ((rc = at_home ? rt_graph_add_shared(dst, (rt_node *)n, st) : rt_graph_add_copy(dst, n, id, st)))
        break;
      id[i] = dst->n_nodes - 1;
      exact[i] = true;
      continue;
    }
    rt_node *c = rt_node_clone(n);
    /* Rewrite inputs that cross partitions. */
    for (int k = 0; k < n->n_inputs && !rc; k++) {
      const rt_edge *e = &n->edges[k];
      int sp = part[e->node];
      if (sp < 0) {
        rc = rt_error(st, RT_INTERNAL, "node '%s' needs '%s', which is not in the step",
                      n->name, n->inputs[k]);
        break;
      }
      if (sp == part[i]) continue;
      const rt_node *src = g->nodes[e->node];
      rt_graph *sg = parts[sp].g;
      uint64_t inc = o->incarnation ? o->incarnation(o->arg, src->assigned) : 0;
      char tensor[300], sname[400], rname[400];
      bool control = e->index < 0;
      if (control)
        snprintf(tensor, sizeof tensor, "%s/_ctl", src->name);
      else
        snprintf(tensor, sizeof tensor, "%s:%d", src->name, e->index);
      snprintf(sname, sizeof sname, "%s/_send_%d", control ? tensor : src->name,
               control ? part[i] : e->index * 1000 + part[i]);
      snprintf(rname, sizeof rname, "%s/_recv_%d", control ? tensor : src->name,
               control ? sp : e->index * 1000 + sp);
      rt_dtype t = control ? RT_FLOAT : src->out_types[e->index];
      if (!rt_graph_find(sg, sname)) {
        const char *what = tensor;
        if (control) {
          /* A dummy value that exists once src has run. */
          char dummy[400];
          snprintf(dummy, sizeof dummy, "%s/_dummy", tensor);
          if (!rt_graph_find(sg, dummy)) {
            rt_node *d = rt_node_new(dummy, "Const");
            rt_tensor *z = rt_tensor_scalar_f32(0);
            rt_node_set_tensor(d, "value", z);
            rt_tensor_unref(z);
            rt_node_set_type(d, "dtype", RT_FLOAT);
            rt_node_add_control(d, src->name);
            d->assigned = strdup(src->assigned);
            if ((rc = add_clone(sg, d, st))) break;
          }
          what = dummy;
          rt_node *s = rt_node_new(sname, "_Send");
          rt_node_add_input(s, what);
          set_sendrecv_attrs(s, tensor, t, src->assigned, inc, n->assigned);
          s->assigned = strdup(src->assigned);
          if ((rc = add_clone(sg, s, st))) break;
        } else {
          rt_node *s = rt_node_new(sname, "_Send");
          rt_node_add_input(s, what);
          set_sendrecv_attrs(s, tensor, t, src->assigned, inc, n->assigned);
          s->assigned = strdup(src->assigned);
          if ((rc = add_clone(sg, s, st))) break;
        }
      }
      if (!rt_graph_find(dst, rname)) {
        rt_node *r = rt_node_new(rname, "_Recv");
        set_sendrecv_attrs(r, tensor, t, src->assigned, inc, n->assigned);
        r->assigned = strdup(n->assigned);
        if ((rc = add_clone(dst, r, st))) break;
      }
      free(c->inputs[k]);
      if (control) {
        char ctl[410];
        snprintf(ctl, sizeof ctl, "^%s", rname);
        c->inputs[k] = strdup(ctl);
      } else {
        c->inputs[k] = strdup(rname);
      }
    }
    if (rc) {
      rt_node_free(c);
      break;
    }
    if (!(rc = add_clone(dst, c, st))) id[i] = dst->n_nodes - 1;
  }
  free(part);
  free(id);
  free(exact);
  if (rc) {
    rt_partitions_free(parts, np);
    return rc;
  }
  *parts_out = parts;
  *n_out = np;
  return RT_OK;
}

int rt_graph_needed(const rt_graph *g, int n_feeds, const char *const *feeds, int n_fetches,
                    const char *const *fetches, int n_targets, const char *const *targets,
                    bool *needed, rt_status *st) {
  int n = g->n_nodes, sp = 0, rc = RT_OK;
  int *stack = calloc((size_t)n + (size_t)n_fetches + (size_t)n_targets + 1, sizeof *stack);
  bool *fed_node = calloc((size_t)n + 1, sizeof *fed_node);
  if (!stack || !fed_node) {
    free(stack);
    free(fed_node);
    return rt_error(st, RT_RESOURCE_EXHAUSTED, "out of memory");
  }
  memset(needed, 0, (size_t)n * sizeof *needed);
  /* A fed node (all its used outputs fed, in practice a Placeholder) needs no inputs. */
  for (int i = 0; i < n_feeds && !rc; i++) {
    rt_node *nd;
    int idx;
    if (!(rc = rt_graph_output(g, feeds[i], &nd, &idx, st))) fed_node[nd->id] = true;
  }
  for (int i = 0; i < n_fetches && !rc; i++) {
    rt_node *nd;
    int idx;
    if (!(rc = rt_graph_output(g, fetches[i], &nd, &idx, st)) && !needed[nd->id]) {
      needed[nd->id] = true;
      stack[sp++] = nd->id;
    }
  }
  for (int i = 0; i < n_targets && !rc; i++) {
    rt_node *nd = rt_graph_find(g, targets[i]);
    if (!nd)
      rc = rt_error(st, RT_NOT_FOUND, "The operation '%s' does not exist in the graph.",
                    targets[i]);
    else if (!needed[nd->id]) {
      needed[nd->id] = true;
      stack[sp++] = nd->id;
    }
  }
  /* a node is marked when pushed, so it is pushed once: the stack holds at most n (a node
   * reached by several paths, pushed by each, overran it) */
  while (!rc && sp) {
    int id = stack[--sp];
    if (fed_node[id]) continue;
    const rt_node *nd = g->nodes[id];
    for (int k = 0; k < nd->n_inputs; k++) {
      int in = nd->edges[k].node;
      if (!needed[in]) {
        needed[in] = true;
        stack[sp++] = in;
      }
    }
  }
  free(stack);
  free(fed_node);
  return rc;
}
