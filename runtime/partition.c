#include "runtime/partition.h"
#include "base/alloc.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/device.h"
#include "runtime/exec_int.h"   /* rt_cf_graph */

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
  (*parts)[*n] = (rt_partition){xstrdup(key), rt_graph_new()};
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

/* ---- loops across partitions ---------------------------------------------------------------
 *
 * As TF1's partitioner (AddControlFlow): a value that crosses partitions inside a loop frame
 * is sent every iteration, under a key that names the frame and iteration (exec_cf.c). The
 * receiving partition runs a control loop of its own for that frame, which counts the
 * iterations the partition that owns the LoopCond decides:
 *
 *   start (Const, or the parent frame's control Merge) -> Enter -> Merge(Enter, next)
 *   -> Switch(Merge, LoopCond(_Recv of the loop's LoopCond, every iteration))
 *   -> Identity(Switch:1) -> NextIteration "next" -> back into the Merge
 *
 * and each _Recv in the frame waits on that Merge (a control input), so it runs once per
 * iteration; in the last one (LoopCond false) the sender's side is dead and sends a dead
 * marker, so both sides end. A nested frame's control Enter starts from the parent frame's
 * control Merge. */

typedef struct pframe {
  const char *name;
  int parent, cond;        /* parent frame (-1: the root); the frame's LoopCond node or -1 */
  int64_t par;             /* parallel_iterations of its Enters */
} pframe;

typedef struct cloop {
  int frame, part;
  char base[320];          /* its nodes: base/start, base/enter, base/merge, ... */
  char *device;
} cloop;

typedef struct pctx {
  const rt_graph *g;
  const rt_partition_opts *o;
  rt_partition *parts;
  int *part;
  bool maybe_dead;         /* g has control flow: a _Recv may get a dead value */
  int *frame, *child;      /* per node of g (NULL: no loops); child: the frame an Enter enters */
  int n_fr;
  pframe *fr;
  int n_loops;
  cloop *loops;
  rt_status *st;
} pctx;

static bool op_is(const rt_node *n, const char *a, const char *ref) {
  return !strcmp(n->op, a) || !strcmp(n->op, ref);
}

/* The frame each node of g runs in, as exec_cf.c finds them (breadth first from the nodes
 * without inputs; an Enter runs in its parent's frame, an Exit in its loop's). A graph whose
 * frames do not add up is left without (the executor says what is wrong). */
static void find_frames(pctx *c) {
  const rt_graph *g = c->g;
  int n = g->n_nodes;
  int *first = xcalloc((size_t)n + 2, sizeof *first);
  c->frame = xmalloc(((size_t)n + 1) * sizeof *c->frame);
  c->child = xcalloc((size_t)n + 1, sizeof *c->child);
  c->fr = xcalloc(1, sizeof *c->fr);
  bool ok = true;
  size_t n_edges = 0;
  for (int i = 0; i < n; i++) {
    n_edges += (size_t)g->nodes[i]->n_inputs;
    for (int k = 0; k < g->nodes[i]->n_inputs; k++) first[g->nodes[i]->edges[k].node + 1]++;
  }
  int *outs = xmalloc((n_edges + 1) * sizeof *outs);
  int *queue = xmalloc(((size_t)n + 1) * sizeof *queue);
  int *fill = xcalloc((size_t)n + 1, sizeof *fill);
  for (int i = 0; i < n; i++) first[i + 1] += first[i];
  for (int i = 0; i < n; i++)
    for (int k = 0; k < g->nodes[i]->n_inputs; k++) {
      int src = g->nodes[i]->edges[k].node;
      outs[first[src] + fill[src]++] = i;
    }
  c->fr[0] = (pframe){"", -1, -1, 1};
  c->n_fr = 1;
  int qh = 0, qt = 0;
  for (int i = 0; i < n; i++) {
    c->frame[i] = -1;
    if (g->nodes[i]->n_inputs == 0) c->frame[i] = 0, queue[qt++] = i;
  }
  while (ok && qh < qt) {
    int u = queue[qh++], fv = c->frame[u];
    const rt_node *nu = g->nodes[u];
    if (op_is(nu, "Enter", "RefEnter")) {
      const char *name = rt_node_string(nu, "frame_name", "");
      int f = 1;
      while (f < c->n_fr && strcmp(c->fr[f].name, name)) f++;
      if (f == c->n_fr) {
        c->fr = xrealloc(c->fr, (size_t)(f + 1) * sizeof *c->fr);
        c->fr[c->n_fr++] = (pframe){name, fv, -1, rt_node_int(nu, "parallel_iterations", 10)};
      }
      ok = c->fr[f].parent == fv;
      fv = c->child[u] = f;
    } else if (op_is(nu, "Exit", "RefExit")) {
      ok = fv > 0;
      fv = ok ? c->fr[fv].parent : 0;
    }
    for (int e = first[u]; ok && e < first[u + 1]; e++) {
      int v = outs[e];
      if (c->frame[v] < 0) c->frame[v] = fv, queue[qt++] = v;
      else ok = c->frame[v] == fv;
    }
  }
  for (int i = 0; ok && i < n; i++) {
    if (c->frame[i] < 0) c->frame[i] = 0;
    if (!strcmp(g->nodes[i]->op, "LoopCond") && c->frame[i] > 0) c->fr[c->frame[i]].cond = i;
  }
  free(first);
  free(outs);
  free(queue);
  free(fill);
  if (!ok || c->n_fr == 1) {
    free(c->frame);
    free(c->child);
    c->frame = c->child = NULL;
  }
}

/* The frame the values of node src live in (TF's OutputFrame). */
static int out_frame(const pctx *c, int src) {
  const rt_node *n = c->g->nodes[src];
  if (op_is(n, "Enter", "RefEnter")) return c->child[src];
  if (op_is(n, "Exit", "RefExit")) return c->frame[src] > 0 ? c->fr[c->frame[src]].parent : 0;
  return c->frame[src];
}

static int add_placed(pctx *c, int p, rt_node *n, const char *device) {
  n->assigned = xstrdup(device);
  return rt_graph_add(c->parts[p].g, n, c->st);
}

/* Partition p's control loop of frame f (see above): made up to its Merge the first time
 * it is asked for (finish_loop adds the rest once every node is in place); -1 on error. */
static int control_loop(pctx *c, int f, int p, const char *device) {
  for (int l = 0; l < c->n_loops; l++)
    if (c->loops[l].frame == f && c->loops[l].part == p) return l;
  char start[340];
  if (c->fr[f].parent > 0) {
    int pl = control_loop(c, c->fr[f].parent, p, device);
    if (pl < 0) return -1;
    snprintf(start, sizeof start, "%s/merge", c->loops[pl].base);
  }
  c->loops = xrealloc(c->loops, (size_t)(c->n_loops + 1) * sizeof *c->loops);
  cloop *L = &c->loops[c->n_loops];
  *L = (cloop){.frame = f, .part = p, .device = xstrdup(device)};
  snprintf(L->base, sizeof L->base, "%s/_cloop_%d", c->fr[f].name, p);
  for (int k = 1;; k++) {   /* a second partitioning (per device, in a worker) names its own */
    char probe[340];
    snprintf(probe, sizeof probe, "%s/merge", L->base);
    if (!rt_graph_find(c->g, probe)) break;
    snprintf(L->base, sizeof L->base, "%s/_cloop_%d_%d", c->fr[f].name, p, k);
  }
  c->n_loops++;
  char name[400], in2[400];
  if (c->fr[f].parent <= 0) {
    snprintf(start, sizeof start, "%s/start", L->base);
    rt_node *k = rt_node_new(start, "Const");
    rt_tensor *z = rt_tensor_scalar_f32(0);
    rt_node_set_tensor(k, "value", z);
    rt_tensor_unref(z);
    rt_node_set_type(k, "dtype", RT_FLOAT);
    if (add_placed(c, p, k, device)) return -1;
  }
  snprintf(name, sizeof name, "%s/enter", L->base);
  rt_node *e = rt_node_new(name, "Enter");
  rt_node_add_input(e, start);
  rt_node_set_type(e, "T", RT_FLOAT);
  rt_node_set_string(e, "frame_name", c->fr[f].name);
  rt_node_set_bool(e, "is_constant", false);
  rt_node_set_int(e, "parallel_iterations", c->fr[f].par);
  if (add_placed(c, p, e, device)) return -1;
  snprintf(in2, sizeof in2, "%s/next", L->base);
  snprintf(name, sizeof name, "%s/merge", L->base);
  rt_node *mg = rt_node_new(name, "Merge");
  snprintf(start, sizeof start, "%s/enter", L->base);
  rt_node_add_input(mg, start);
  rt_node_add_input(mg, in2);   /* the back edge: "next" comes in finish_loop */
  rt_node_set_type(mg, "T", RT_FLOAT);
  rt_node_set_int(mg, "N", 2);
  if (add_placed(c, p, mg, device)) return -1;
  return c->n_loops - 1;
}

/* Edge src:index (index -1: a control edge) of g, into partition dp's node on device
 * dst_dev, crosses partitions: a _Send in src's partition (once), a _Recv in dp (once per
 * tensor); its name in rname. In loop frame f (> 0) the _Recv waits on dp's control loop. */
static int cross(pctx *c, int src_id, int index, int dp, const char *dst_dev, int f, char *rname,
                 size_t rn) {
  const rt_node *src = c->g->nodes[src_id];
  int sp = c->part[src_id];
  rt_graph *sg = c->parts[sp].g, *dst = c->parts[dp].g;
  uint64_t inc = c->o->incarnation ? c->o->incarnation(c->o->arg, src->assigned) : 0;
  char tensor[300], sname[400];
  bool control = index < 0;
  if (control) snprintf(tensor, sizeof tensor, "%s/_ctl", src->name);
  else snprintf(tensor, sizeof tensor, "%s:%d", src->name, index);
  snprintf(sname, sizeof sname, "%s/_send_%d", control ? tensor : src->name,
           control ? dp : index * 1000 + dp);
  snprintf(rname, rn, "%s/_recv_%d", control ? tensor : src->name, control ? sp : index * 1000 + sp);
  rt_dtype t = control ? RT_FLOAT : src->out_types[index];
  int l = -1;
  if (f > 0 && (l = control_loop(c, f, dp, dst_dev)) < 0) return c->st->code;
  if (!rt_graph_find(sg, sname)) {
    const char *what = tensor;
    char dummy[400];
    if (control) {   /* a dummy value that exists once src has run */
      snprintf(dummy, sizeof dummy, "%s/_dummy", tensor);
      if (!rt_graph_find(sg, dummy)) {
        rt_node *d = rt_node_new(dummy, "Const");
        rt_tensor *z = rt_tensor_scalar_f32(0);
        rt_node_set_tensor(d, "value", z);
        rt_tensor_unref(z);
        rt_node_set_type(d, "dtype", RT_FLOAT);
        rt_node_add_control(d, src->name);
        if (add_placed(c, sp, d, src->assigned)) return c->st->code;
      }
      what = dummy;
    }
    rt_node *s = rt_node_new(sname, "_Send");
    rt_node_add_input(s, what);
    set_sendrecv_attrs(s, tensor, t, src->assigned, inc, dst_dev);
    if (add_placed(c, sp, s, src->assigned)) return c->st->code;
  }
  if (!rt_graph_find(dst, rname)) {
    rt_node *r = rt_node_new(rname, "_Recv");
    set_sendrecv_attrs(r, tensor, t, src->assigned, inc, dst_dev);
    if (c->maybe_dead) rt_node_set_bool(r, "_maybe_dead", true);
    if (l >= 0) {   /* once per iteration of dp's control loop */
      char merge[340];
      snprintf(merge, sizeof merge, "%s/merge", c->loops[l].base);
      rt_node_add_control(r, merge);
    }
    if (add_placed(c, dp, r, dst_dev)) return c->st->code;
  }
  return RT_OK;
}

/* The rest of control loop l, from its Merge on: the LoopCond's value each iteration. */
static int finish_loop(pctx *c, int l) {
  cloop L = c->loops[l];
  int cond = c->fr[L.frame].cond;
  if (cond < 0 || c->part[cond] < 0)
    return rt_error(c->st, RT_INVALID_ARGUMENT, "loop frame '%s' runs on several devices but has "
                    "no LoopCond", c->fr[L.frame].name);
  char pred[400], name[400], in[400];
  if (c->part[cond] == L.part) {
    snprintf(pred, sizeof pred, "%s", c->g->nodes[cond]->name);
  } else {
    char rname[400];
    if (cross(c, cond, 0, L.part, L.device, L.frame, rname, sizeof rname)) return c->st->code;
    snprintf(pred, sizeof pred, "%s/cond", L.base);
    rt_node *lc = rt_node_new(pred, "LoopCond");   /* so a second partitioning finds the frame's */
    rt_node_add_input(lc, rname);
    if (add_placed(c, L.part, lc, L.device)) return c->st->code;
  }
  snprintf(name, sizeof name, "%s/switch", L.base);
  rt_node *sw = rt_node_new(name, "Switch");
  snprintf(in, sizeof in, "%s/merge", L.base);
  rt_node_add_input(sw, in);
  rt_node_add_input(sw, pred);
  rt_node_set_type(sw, "T", RT_FLOAT);
  if (add_placed(c, L.part, sw, L.device)) return c->st->code;
  snprintf(name, sizeof name, "%s/pivot", L.base);
  rt_node *pv = rt_node_new(name, "Identity");
  snprintf(in, sizeof in, "%s/switch:1", L.base);
  rt_node_add_input(pv, in);
  rt_node_set_type(pv, "T", RT_FLOAT);
  if (add_placed(c, L.part, pv, L.device)) return c->st->code;
  snprintf(name, sizeof name, "%s/next", L.base);
  rt_node *nx = rt_node_new(name, "NextIteration");
  snprintf(in, sizeof in, "%s/pivot", L.base);
  rt_node_add_input(nx, in);
  rt_node_set_type(nx, "T", RT_FLOAT);
  return add_placed(c, L.part, nx, L.device);
}

#ifndef NDEBUG
/* The invariants of a partitioning, for assert(): every node of a fragment is placed where
 * the fragment runs, and each _Send made here has exactly one _Recv made here under the same
 * rendezvous key, in another fragment, of the same type (and each _Recv its _Send). A _Send
 * or _Recv that g already held (a worker partitioning a master's fragment by device) meets
 * its peer elsewhere and is not counted. */
typedef struct sr_end {
  char key[1024];
  int part;
  bool send;
  rt_dtype t;
} sr_end;

static int sr_cmp(const void *a, const void *b) {
  const sr_end *x = a, *y = b;
  int c = strcmp(x->key, y->key);
  return c ? c : (int)y->send - (int)x->send;   /* the _Send first */
}

static bool partition_ok(const rt_graph *g, const rt_partition *parts, int np, bool by_task) {
  int n = 0, cap = 0;
  sr_end *e = NULL;
  char key[256];
  for (int p = 0; p < np; p++) {
    const char *last = NULL;   /* a device already checked for this fragment: not parsed again */
    for (int i = 0; i < parts[p].g->n_nodes; i++) {
      const rt_node *nd = parts[p].g->nodes[i];
      if (!nd->assigned) return false;
      if (!last || strcmp(last, nd->assigned)) {
        key_of(nd->assigned, by_task, key, sizeof key);
        if (strcmp(key, parts[p].name)) return false;
        last = nd->assigned;
      }
      bool send = !strcmp(nd->op, "_Send");
      if ((!send && strcmp(nd->op, "_Recv")) || rt_graph_find(g, nd->name)) continue;
      if (n == cap) e = xrealloc(e, (size_t)(cap = cap ? 2 * cap : 64) * sizeof *e);
      e[n] = (sr_end){.part = p, .send = send, .t = rt_node_type(nd, "T", RT_INVALID)};
      rt_rendezvous_key(nd, e[n].key, sizeof e[n].key);
      n++;
    }
  }
  if (n) qsort(e, (size_t)n, sizeof *e, sr_cmp);
  bool ok = n % 2 == 0;
  for (int i = 0; ok && i < n; i += 2)
    ok = e[i].send && !e[i + 1].send && !strcmp(e[i].key, e[i + 1].key) && e[i].part != e[i + 1].part &&
         e[i].t == e[i + 1].t && (i + 2 >= n || strcmp(e[i + 2].key, e[i].key));
  free(e);
  return ok;
}
#endif

/* Node a of a fragment computes what node b of g does, its inputs rewritten to _Recvs of the
 * same values: it takes b's outputs (a _Recv infers no shape; the worker infers its own), so
 * that what reads a can be copied. False where the types differ. */
static bool keep_outputs(rt_node *a, const rt_node *b) {
  if (a->n_outputs != b->n_outputs) return false;
  for (int k = 0; k < a->n_outputs; k++)
    if (a->out_types[k] != b->out_types[k] || a->out_refs[k] != b->out_refs[k]) return false;
  memcpy(a->out_shapes, b->out_shapes, (size_t)a->n_outputs * sizeof *a->out_shapes);
  return true;
}

int rt_partition_graph(const rt_graph *g, const bool *needed, const rt_partition_opts *o,
                       rt_partition **parts_out, int *n_out, rt_status *st) {
  rt_partition *parts = NULL;
  int np = 0, rc = RT_OK;
  /* part: the node's partition (-1: not kept); id: its id there; exact: its outputs there
   * are those it has in g (a copy of it, or of a node whose inputs are all exact, needs no
   * validation: rt_graph_add_copy, rt_graph_add_borrowed). */
  int *part = xcalloc((size_t)g->n_nodes + 1, sizeof *part);
  int *id = xcalloc((size_t)g->n_nodes + 1, sizeof *id);
  bool *exact = xcalloc((size_t)g->n_nodes + 1, sizeof *exact);
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
    int *count = xcalloc((size_t)np + 1, sizeof *count);
    for (int i = 0; i < g->n_nodes; i++)
      if (part[i] >= 0) count[part[i]]++;
    for (int p = 0; p < np; p++) rt_graph_reserve(parts[p].g, count[p]);
    free(count);
  }
  pctx c = {.g = g, .o = o, .parts = parts, .part = part, .st = st};
  if (np > 1 && (c.maybe_dead = rt_cf_graph(g))) find_frames(&c);

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
      ph->assigned = xstrdup(n->assigned);
      if ((rc = add_clone(dst, ph, st))) break;
      id[i] = dst->n_nodes - 1;
      continue;
    }
    /* A Merge waits for its back edge's NextIteration: that one goes through rt_graph_add,
     * which points the Merge at it (a copy would not). */
    same &= !(dst->n_fwd && op_is(n, "NextIteration", "RefNextIteration"));
    if (same) {   /* nothing to rewrite: a copy that keeps the validated node's outputs */
      /* Where the fragment so far is g itself (ids and inputs alike), the node itself. */
      bool at_home = dst->n_nodes == i;
      for (int k = 0; at_home && k < n->n_inputs; k++) at_home = id[n->edges[k].node] == n->edges[k].node;
      if ((rc = at_home    ? rt_graph_add_shared(dst, (rt_node *)n, st)
                : o->borrow ? rt_graph_add_borrowed(dst, (rt_node *)n, id, st)
                            : rt_graph_add_copy(dst, n, id, st)))
        break;
      id[i] = dst->n_nodes - 1;
      exact[i] = true;
      continue;
    }
    rt_node *cl = rt_node_clone(n);
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
      /* inside a loop frame (the same on both ends): once per iteration */
      int f = c.frame && out_frame(&c, e->node) == c.frame[i] ? c.frame[i] : 0;
      char rname[400];
      if ((rc = cross(&c, e->node, e->index, part[i], n->assigned, f, rname, sizeof rname))) break;
      free(cl->inputs[k]);
      if (e->index < 0) {
        char ctl[410];
        snprintf(ctl, sizeof ctl, "^%s", rname);
        cl->inputs[k] = xstrdup(ctl);
      } else {
        cl->inputs[k] = xstrdup(rname);
      }
    }
    if (rc) {
      rt_node_free(cl);
      break;
    }
    if ((rc = add_clone(dst, cl, st))) break;
    id[i] = dst->n_nodes - 1;
    exact[i] = keep_outputs(dst->nodes[id[i]], n);
  }
  for (int l = 0; l < c.n_loops && !rc; l++) rc = finish_loop(&c, l);
  for (int l = 0; l < c.n_loops; l++) free(c.loops[l].device);
  free(c.loops);
  free(c.frame);
  free(c.child);
  free(c.fr);
  free(part);
  free(id);
  free(exact);
  if (rc) {
    rt_partitions_free(parts, np);
    return rc;
  }
  assert(partition_ok(g, parts, np, o->by_task));
  *parts_out = parts;
  *n_out = np;
  return RT_OK;
}

int rt_graph_needed(const rt_graph *g, int n_feeds, const char *const *feeds, int n_fetches,
                    const char *const *fetches, int n_targets, const char *const *targets,
                    bool *needed, rt_status *st) {
  int n = g->n_nodes, sp = 0, rc = RT_OK;
  int *stack = xcalloc((size_t)n + (size_t)n_fetches + (size_t)n_targets + 1, sizeof *stack);
  bool *fed_node = xcalloc((size_t)n + 1, sizeof *fed_node);
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
