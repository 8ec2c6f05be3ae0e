/* The executor for graphs with control flow, as TF1's: frames and iterations.
 *
 * Every node belongs to a static frame: the root, or the loop an Enter leads into (its
 * frame_name); an Exit's consumers are in its frame's parent. At run time a frame is
 * instantiated once per iteration of its parent that enters it, and holds up to
 * parallel_iterations live iterations, each with its own input slots and pending counts.
 * A value may be dead (the untaken output of a Switch): a node with a dead input does not
 * run and its outputs are dead, except Merge, which takes the first live input and is dead
 * only when every input is. NextIteration carries a value to the next iteration (a dead one
 * ends the loop there); an Enter with is_constant gives its value to every iteration. When
 * a frame finishes, an Exit that never had a live value gives its consumers a dead one.
 *
 * Split over devices (partition.c), a _Send in a loop sends once per iteration under a
 * rendezvous key whose last field names the frame instance and iteration, and sends a dead
 * value too (RT_DEAD: TF's is_dead); a _Recv runs even when its control input is dead, and
 * what it gets decides whether its output is. So each iteration's _Send meets that
 * iteration's _Recv and an untaken branch or a loop's last iteration ends on every side.
 *
 * exec.c hands runs here only for graphs that hold one of these ops (or a _Recv that may get
 * a dead value), so the plain executor pays nothing for them. */
#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "runtime/exec_int.h"
#include "runtime/step.h"
#include "runtime/trace.h"

/* The dead value of a rendezvous (step.h): no bytes, and a count no one brings to zero. */
rt_tensor rt_dead_value = {.refs = 1 << 30, .dtype = RT_FLOAT, .shape = {.ndims = 1}};

enum { K_NORMAL, K_SWITCH, K_MERGE, K_ENTER, K_EXIT, K_NEXT, K_FORWARD };

typedef struct cf_out {
  int dst, k, src_out;   /* k: data input of dst, -1 for a control edge */
  bool last;             /* the last data edge of output src_out: activate may move it there */
} cf_out;

typedef struct cf_iter {
  rt_tensor **in;          /* per input slot of the frame's nodes */
  int *pending, *dead;     /* per node of the frame */
  int outstanding;         /* nodes of this iteration ready or running */
  int child_frames;        /* frames entered from this iteration, not finished */
  struct cf_frame *children;
  struct cf_iter *next_free;
} cf_iter;

typedef struct cf_sframe {
  char *name;
  int parent;              /* static frame; -1 for the root */
  int n_nodes, n_slots;
  int *init_pending;       /* per node of the frame, for this run */
  int n_enters;            /* needed Enters into this frame, this run */
  int n_exits, *exits;     /* Exit nodes of this frame */
  cf_iter *free_iters;
} cf_sframe;

typedef struct cf_val {
  int node;
  rt_tensor *t;
  bool dead;
} cf_val;

typedef struct cf_frame {
  int sf;
  uint64_t fid;            /* names this instance in rendezvous keys: 0 for the root */
  struct cf_frame *parent, *sibling;    /* sibling: next child of the same parent iteration */
  struct cf_frame *all_prev, *all_next; /* every live frame, to free them after an error */
  int64_t parent_iter, iter_count, oldest;
  int outstanding_iters, max_par, pending_enters;
  cf_iter **iters;                      /* ring of max_par + 1 */
  int n_invs, cap_invs;
  cf_val *invs;                         /* loop invariants (constant Enters) */
  int n_def, cap_def;
  cf_val *deferred;                     /* values for an iteration parallel_iterations holds back */
  bool *exit_live;
} cf_frame;

typedef struct cf_item {
  int node;
  cf_frame *f;
  int64_t iter;
  bool dead;
} cf_item;

struct cf_exec {
  int n_sf;
  cf_sframe *sf;
  int *frame, *local, *in_off, *exit_idx, *child;
  uint8_t *kind;
  int *merge_first;        /* per Merge: data inputs that come in iteration 0 (not from a NextIteration) */
  int *merge_later;        /* per Merge: data inputs that come in later iterations (not from an Enter) */
  bool *index_used;        /* per Merge: a node takes its value_index (else no scalar is made) */
  int *out_first;
  cf_out *outs;
  int max_outputs;
  /* per run */
  cf_frame *root, *all;
  cf_item *q;
  int nq, capq;
  bool *fetch_slot;
  bool failed;
  rt_status *st;
  rt_step *step;
  int root_done, root_total;
  rt_tensor **scratch;
};

bool rt_cf_graph(const rt_graph *g) {
  for (int i = 0; i < g->n_nodes; i++) {
    const rt_node *n = g->nodes[i];
    const char *op = n->op;
    if (!strcmp(op, "Switch") || !strcmp(op, "RefSwitch") || !strcmp(op, "Merge") ||
        !strcmp(op, "RefMerge") || !strcmp(op, "Enter") || !strcmp(op, "RefEnter"))
      return true;
    /* a part of a graph with control flow may receive a dead value (partition.c) */
    if (op[0] == '_' && !strcmp(op, "_Recv") && rt_node_bool(n, "_maybe_dead", false)) return true;
  }
  return false;
}

static uint8_t kind_of(const char *op) {
  if (!strcmp(op, "Switch") || !strcmp(op, "RefSwitch")) return K_SWITCH;
  if (!strcmp(op, "Merge") || !strcmp(op, "RefMerge")) return K_MERGE;
  if (!strcmp(op, "Enter") || !strcmp(op, "RefEnter")) return K_ENTER;
  if (!strcmp(op, "Exit") || !strcmp(op, "RefExit")) return K_EXIT;
  if (!strcmp(op, "NextIteration") || !strcmp(op, "RefNextIteration")) return K_NEXT;
  if (!strcmp(op, "LoopCond")) return K_FORWARD;
  return K_NORMAL;
}

void rt_cf_free(struct cf_exec *cf) {
  if (!cf) return;
  for (int s = 0; s < cf->n_sf; s++) {
    free(cf->sf[s].name);
    free(cf->sf[s].init_pending);
    free(cf->sf[s].exits);
    for (cf_iter *it = cf->sf[s].free_iters, *nx; it; it = nx) {
      nx = it->next_free;
      free(it);
    }
  }
  free(cf->sf);
  free(cf->frame);
  free(cf->local);
  free(cf->in_off);
  free(cf->exit_idx);
  free(cf->child);
  free(cf->kind);
  free(cf->merge_first);
  free(cf->merge_later);
  free(cf->index_used);
  free(cf->out_first);
  free(cf->outs);
  free(cf->q);
  free(cf->fetch_slot);
  free(cf->scratch);
  free(cf);
}

static int frame_named(struct cf_exec *cf, const char *name, int parent) {
  for (int s = 0; s < cf->n_sf; s++)
    if (!strcmp(cf->sf[s].name, name)) return s;
  cf->sf = xrealloc(cf->sf, (size_t)(cf->n_sf + 1) * sizeof *cf->sf);
  cf->sf[cf->n_sf] = (cf_sframe){.name = xstrdup(name), .parent = parent};
  return cf->n_sf++;
}

int rt_cf_new(rt_exec *x, rt_status *st) {
  const rt_graph *g = x->g;
  int n = g->n_nodes;
  if (rt_graph_check_complete(g, st)) return st->code;
  struct cf_exec *cf = xcalloc(1, sizeof *cf);
  x->cf = cf;
  size_t nn = (size_t)n + 1;
  cf->frame = xmalloc(nn * sizeof *cf->frame);
  cf->local = xcalloc(nn, sizeof *cf->local);
  cf->in_off = xcalloc(nn, sizeof *cf->in_off);
  cf->exit_idx = xcalloc(nn, sizeof *cf->exit_idx);
  cf->child = xcalloc(nn, sizeof *cf->child);
  cf->kind = xcalloc(nn, 1);
  cf->merge_first = xcalloc(nn, sizeof *cf->merge_first);
  cf->merge_later = xcalloc(nn, sizeof *cf->merge_later);
  cf->index_used = xcalloc(nn, sizeof *cf->index_used);
  cf->out_first = xcalloc(nn + 1, sizeof *cf->out_first);
  frame_named(cf, "", -1);
  /* out edges, grouped by source */
  size_t n_edges = 0;
  for (int i = 0; i < n; i++) {
    const rt_node *nd = g->nodes[i];
    cf->kind[i] = kind_of(nd->op);
    x->nodes[i].forwards = cf->kind[i] != K_NORMAL;
    if (nd->n_outputs > cf->max_outputs) cf->max_outputs = nd->n_outputs;
    n_edges += (size_t)nd->n_inputs;
    for (int k = 0; k < nd->n_inputs; k++) {
      cf->out_first[nd->edges[k].node + 1]++;
      if (nd->edges[k].index == 1) cf->index_used[nd->edges[k].node] = true;   /* Merge's, below */
    }
    for (int k = 0; cf->kind[i] == K_MERGE && k < nd->n_data_inputs; k++) {
      uint8_t src = kind_of(g->nodes[nd->edges[k].node]->op);
      cf->merge_first[i] += src != K_NEXT;   /* a loop's Merge: Enter now, NextIteration later */
      cf->merge_later[i] += src != K_ENTER;  /* a tf.cond's in a body: both, every iteration */
    }
  }
  for (int i = 0; i < n; i++) cf->out_first[i + 1] += cf->out_first[i];
  cf->outs = xcalloc(n_edges + 1, sizeof *cf->outs);
  int *fill = xcalloc(nn, sizeof *fill);
  for (int i = 0; i < n; i++) {
    const rt_node *nd = g->nodes[i];
    for (int k = 0; k < nd->n_inputs; k++) {
      int src = nd->edges[k].node;
      cf->outs[cf->out_first[src] + fill[src]++] =
          (cf_out){i, nd->edges[k].index >= 0 ? k : -1, nd->edges[k].index, false};
    }
  }
  /* static frames: breadth first from the nodes without inputs */
  int *queue = fill, qh = 0, qt = 0, rc = RT_OK;
  for (int i = 0; i < n; i++) {
    cf->frame[i] = -1;
    if (g->nodes[i]->n_inputs == 0) {
      cf->frame[i] = 0;
      queue[qt++] = i;
    }
  }
  while (qh < qt && !rc) {
    int u = queue[qh++], fu = cf->frame[u], fv = fu;
    const rt_node *nu = g->nodes[u];
    if (cf->kind[u] == K_ENTER) {
      fv = cf->child[u] = frame_named(cf, rt_node_string(nu, "frame_name", ""), fu);
      if (cf->sf[fv].parent != fu) {
        rc = rt_error(st, RT_INVALID_ARGUMENT,
                      "node '%s': frame '%s' is entered from two different frames", nu->name,
                      cf->sf[fv].name);
        break;
      }
    } else if (cf->kind[u] == K_EXIT) {
      if (fu == 0) {
        rc = rt_error(st, RT_INVALID_ARGUMENT, "node '%s': an Exit outside of any loop", nu->name);
        break;
      }
      fv = cf->sf[fu].parent;
    }
    for (int e = cf->out_first[u]; e < cf->out_first[u + 1]; e++) {
      int v = cf->outs[e].dst;
      if (cf->frame[v] < 0) {
        cf->frame[v] = fv;
        queue[qt++] = v;
      } else if (cf->frame[v] != fv) {
        rc = rt_error(st, RT_INVALID_ARGUMENT,
                      "node '%s' is in frame '%s' but its input '%s' is in frame '%s' (a value "
                      "goes into a loop only through an Enter)", g->nodes[v]->name,
                      cf->sf[cf->frame[v]].name[0] ? cf->sf[cf->frame[v]].name : "(root)",
                      nu->name, cf->sf[fv].name[0] ? cf->sf[fv].name : "(root)");
        break;
      }
    }
  }
  free(fill);
  bool *seen = xcalloc((size_t)cf->max_outputs + 1, sizeof *seen);
  for (int i = 0; i < n; i++) {   /* each output's last data edge (edges grouped by source) */
    for (int e = cf->out_first[i + 1] - 1; e >= cf->out_first[i]; e--) {
      cf_out *o = &cf->outs[e];
      o->last = o->k >= 0 && !seen[o->src_out];
      if (o->k >= 0) seen[o->src_out] = true;
    }
    for (int e = cf->out_first[i]; e < cf->out_first[i + 1]; e++)
      if (cf->outs[e].k >= 0) seen[cf->outs[e].src_out] = false;
  }
  free(seen);
  for (int i = 0; i < n && !rc; i++) {
    if (cf->frame[i] < 0) cf->frame[i] = 0;   /* unreachable: never runs */
    cf_sframe *s = &cf->sf[cf->frame[i]];
    cf->local[i] = s->n_nodes++;
    cf->in_off[i] = s->n_slots;
    s->n_slots += g->nodes[i]->n_data_inputs;
    if (cf->kind[i] == K_EXIT) {
      cf_sframe *f = &cf->sf[cf->frame[i]];
      f->exits = xrealloc(f->exits, (size_t)(f->n_exits + 1) * sizeof *f->exits);
      cf->exit_idx[i] = f->n_exits;
      f->exits[f->n_exits++] = i;
    }
  }
  for (int s = 0; s < cf->n_sf; s++)
    cf->sf[s].init_pending = xcalloc((size_t)cf->sf[s].n_nodes + 1, sizeof(int));
  cf->fetch_slot = xcalloc((size_t)x->n_slots + 1, sizeof *cf->fetch_slot);
  cf->scratch = xcalloc((size_t)cf->max_outputs + 1, sizeof *cf->scratch);
  return rc;
}

/* ---- frames and iterations ---------------------------------------------------------------- */

static cf_iter *iter_new(struct cf_exec *cf, int sfi) {
  cf_sframe *s = &cf->sf[sfi];
  cf_iter *it = s->free_iters;
  if (it) {
    s->free_iters = it->next_free;
  } else {
    size_t bytes = sizeof *it + (size_t)s->n_slots * sizeof(rt_tensor *) +
                   2 * (size_t)s->n_nodes * sizeof(int);
    it = xcalloc(1, bytes);
    it->in = (rt_tensor **)(it + 1);
    it->pending = (int *)(it->in + s->n_slots);
    it->dead = it->pending + s->n_nodes;
  }
  memcpy(it->pending, s->init_pending, (size_t)s->n_nodes * sizeof(int));
  memset(it->dead, 0, (size_t)s->n_nodes * sizeof(int));
  it->outstanding = it->child_frames = 0;
  it->children = NULL;
  it->next_free = NULL;
  return it;
}

static void iter_free(struct cf_exec *cf, int sfi, cf_iter *it) {
  cf_sframe *s = &cf->sf[sfi];
  for (int i = 0; i < s->n_slots; i++)
    if (it->in[i]) {
      rt_tensor_unref(it->in[i]);
      it->in[i] = NULL;
    }
  it->next_free = s->free_iters;
  s->free_iters = it;
}

static inline cf_iter *iter_at(const cf_frame *f, int64_t i) {
  assert(i >= f->oldest && i <= f->iter_count);   /* a live iteration of f */
  return f->iters[i % (f->max_par + 1)];
}

static void push(struct cf_exec *cf, int node, cf_frame *f, int64_t iter, bool dead) {
  if (cf->nq == cf->capq) {
    cf->capq = cf->capq ? 2 * cf->capq : 256;
    cf->q = xrealloc(cf->q, (size_t)cf->capq * sizeof *cf->q);
  }
  cf->q[cf->nq++] = (cf_item){node, f, iter, dead};
  iter_at(f, iter)->outstanding++;
}

static cf_frame *frame_new(struct cf_exec *cf, int sfi, cf_frame *parent, int64_t parent_iter,
                           int max_par) {
  cf_frame *f = xcalloc(1, sizeof *f);
  f->sf = sfi;
  if (parent) {   /* the same on every device that runs this frame: names and iterations */
    uint64_t h = (parent->fid ^ (uint64_t)parent_iter * 0x9e3779b97f4a7c15ull) * 1099511628211ull;
    for (const unsigned char *p = (const unsigned char *)cf->sf[sfi].name; *p; p++)
      h = (h ^ *p) * 1099511628211ull;
    f->fid = h ? h : 1;
  }
  f->parent = parent;
  f->parent_iter = parent_iter;
  f->max_par = max_par < 1 ? 1 : max_par;
  f->iters = xcalloc((size_t)f->max_par + 1, sizeof *f->iters);
  f->pending_enters = cf->sf[sfi].n_enters;
  f->exit_live = xcalloc((size_t)cf->sf[sfi].n_exits + 1, sizeof *f->exit_live);
  f->iters[0] = iter_new(cf, sfi);
  f->outstanding_iters = 1;
  f->all_next = cf->all;
  if (cf->all) cf->all->all_prev = f;
  cf->all = f;
  return f;
}

static void frame_free(struct cf_exec *cf, cf_frame *f) {
  for (int64_t i = f->oldest; i <= f->iter_count; i++)
    if (iter_at(f, i)) iter_free(cf, f->sf, iter_at(f, i));
  for (int i = 0; i < f->n_invs; i++) rt_tensor_unref(f->invs[i].t);
  for (int i = 0; i < f->n_def; i++) rt_tensor_unref(f->deferred[i].t);
  if (f->all_prev) f->all_prev->all_next = f->all_next;
  else cf->all = f->all_next;
  if (f->all_next) f->all_next->all_prev = f->all_prev;
  free(f->invs);
  free(f->deferred);
  free(f->iters);
  free(f->exit_live);
  free(f);
}

/* The outputs of node src (out[i] NULL: dead) reach its consumers in iteration iter of f.
 * move: the caller lets go of out[] afterwards, so each output's last data edge takes the
 * caller's reference instead of a new one (two atomic operations less per value). */
static inline void take(rt_tensor **slot, rt_tensor **out, const cf_out *o, bool move) {
  rt_tensor_unref(*slot);
  if (move && o->last) {
    *slot = out[o->src_out];
    out[o->src_out] = NULL;
  } else {
    *slot = rt_tensor_ref(out[o->src_out]);
  }
}

static void activate(struct cf_exec *cf, rt_exec *x, cf_frame *f, int64_t iter, int src,
                     rt_tensor **out, bool dead, bool move) {
  cf_iter *it = iter_at(f, iter);
  for (int e = cf->out_first[src]; e < cf->out_first[src + 1]; e++) {
    const cf_out *o = &cf->outs[e];
    int dst = o->dst;
    if (!x->needed[dst]) continue;
    int l = cf->local[dst];
    bool ready, dst_dead;
    if (cf->kind[dst] == K_MERGE) {
      /* pending: 2 per control input, plus 1 until a live data input came */
      int expect = iter == 0 ? cf->merge_first[dst] : cf->merge_later[dst];
      if (o->k < 0) {
        it->pending[l] -= 2;
        assert(it->pending[l] >= 0);
        dst_dead = it->dead[l] == expect;
        ready = it->pending[l] == 0 || (it->pending[l] == 1 && dst_dead);
      } else if (dead || !out[o->src_out]) {
        dst_dead = ++it->dead[l] == expect;
        ready = it->pending[l] == 1 && dst_dead;
      } else if (it->pending[l] & 1) {
        take(&it->in[cf->in_off[dst] + o->k], out, o, move);
        dst_dead = false;
        ready = --it->pending[l] == 0;
      } else {
        continue;   /* a second live input: the first one counts */
      }
    } else {
      if (o->k >= 0) {
        if (dead || !out[o->src_out]) {
          it->dead[l]++;
        } else {
          take(&it->in[cf->in_off[dst] + o->k], out, o, move);
        }
      } else if (dead) {
        it->dead[l]++;
      }
      ready = --it->pending[l] == 0;
      assert(it->pending[l] >= 0);   /* each input edge brings one value per iteration */
      dst_dead = it->dead[l] > 0;
    }
    if (ready) push(cf, dst, f, iter, dst_dead);
  }
}

static void cleanup(struct cf_exec *cf, rt_exec *x, cf_frame *f, int64_t iter);

static void increment_iteration(struct cf_exec *cf, rt_exec *x, cf_frame *f) {
  int64_t i = ++f->iter_count;
  assert(!f->iters[i % (f->max_par + 1)]);   /* the ring's slot was freed with its iteration */
  f->iters[i % (f->max_par + 1)] = iter_new(cf, f->sf);
  f->outstanding_iters++;
  assert(f->outstanding_iters == f->iter_count - f->oldest + 1 && f->outstanding_iters <= f->max_par);
  for (int v = 0; v < f->n_invs; v++) activate(cf, x, f, i, f->invs[v].node, &f->invs[v].t, f->invs[v].dead, false);
  int nd = f->n_def;
  f->n_def = 0;
  for (int d = 0; d < nd; d++) {
    activate(cf, x, f, i, f->deferred[d].node, &f->deferred[d].t, false, false);
    rt_tensor_unref(f->deferred[d].t);
  }
}

static bool iteration_done(const cf_frame *f, int64_t i) {
  const cf_iter *it = iter_at(f, i);
  if (!it || it->outstanding || it->child_frames) return false;
  return i == 0 ? f->pending_enters == 0 : i - 1 < f->oldest;
}

static void delete_frame(struct cf_exec *cf, rt_exec *x, cf_frame *f) {
  cf_frame *p = f->parent;
  int64_t pi = f->parent_iter;
  const cf_sframe *s = &cf->sf[f->sf];
  for (int e = 0; e < s->n_exits; e++)
    if (x->needed[s->exits[e]] && !f->exit_live[e]) activate(cf, x, p, pi, s->exits[e], NULL, true, false);
  assert(f->pending_enters == 0 && f->outstanding_iters == 0);
  cf_iter *pit = iter_at(p, pi);
  assert(pit->child_frames > 0);
  for (cf_frame **c = &pit->children; *c; c = &(*c)->sibling)
    if (*c == f) {
      *c = f->sibling;
      break;
    }
  pit->child_frames--;
  frame_free(cf, f);
  if (p != cf->root) cleanup(cf, x, p, pi);
}

static void cleanup(struct cf_exec *cf, rt_exec *x, cf_frame *f, int64_t iter) {
  int64_t i = iter;
  while (i == f->oldest && i <= f->iter_count && iteration_done(f, i)) {
    iter_free(cf, f->sf, iter_at(f, i));
    f->iters[i % (f->max_par + 1)] = NULL;
    f->outstanding_iters--;
    f->oldest = ++i;
    assert(f->outstanding_iters == f->iter_count - f->oldest + 1);
    if (f->n_def) increment_iteration(cf, x, f);
  }
  if (f->pending_enters == 0 && f->outstanding_iters == 0) delete_frame(cf, x, f);
}

/* Node src of iteration iter of f produced out (dead: every output dead). */
static void propagate(struct cf_exec *cf, rt_exec *x, int src, cf_frame *f, int64_t iter,
                      rt_tensor **out, bool dead) {
  switch (cf->kind[src]) {
  case K_ENTER: {
    cf_iter *it = iter_at(f, iter);
    int sfi = cf->child[src];
    cf_frame *c = it->children;
    while (c && c->sf != sfi) c = c->sibling;
    if (!c) {
      c = frame_new(cf, sfi, f, iter, (int)rt_node_int(x->g->nodes[src], "parallel_iterations", 10));
      c->sibling = it->children;
      it->children = c;
      it->child_frames++;
    }
    if (rt_node_bool(x->g->nodes[src], "is_constant", false)) {
      if (c->n_invs == c->cap_invs) {
        c->cap_invs = c->cap_invs ? 2 * c->cap_invs : 8;
        c->invs = xrealloc(c->invs, (size_t)c->cap_invs * sizeof *c->invs);
      }
      rt_tensor *t = dead ? NULL : out[0];
      c->invs[c->n_invs++] = (cf_val){src, t ? rt_tensor_ref(t) : NULL, dead || !t};
      for (int64_t i = c->oldest; i <= c->iter_count; i++) activate(cf, x, c, i, src, out, dead, false);
    } else {
      activate(cf, x, c, 0, src, out, dead, true);
    }
    assert(c->pending_enters > 0);   /* each needed Enter into c runs once per parent iteration */
    c->pending_enters--;
    cleanup(cf, x, c, c->oldest);
    break;
  }
  case K_EXIT:
    if (!dead && out[0]) {
      f->exit_live[cf->exit_idx[src]] = true;
      activate(cf, x, f->parent, f->parent_iter, src, out, false, true);
    }
    break;
  case K_NEXT:
    if (dead || !out[0]) break;
    if (iter + 1 <= f->iter_count) {
      activate(cf, x, f, iter + 1, src, out, false, true);
    } else if (f->outstanding_iters >= f->max_par) {
      if (f->n_def == f->cap_def) {
        f->cap_def = f->cap_def ? 2 * f->cap_def : 8;
        f->deferred = xrealloc(f->deferred, (size_t)f->cap_def * sizeof *f->deferred);
      }
      f->deferred[f->n_def++] = (cf_val){src, rt_tensor_ref(out[0]), false};
    } else {
      increment_iteration(cf, x, f);
      activate(cf, x, f, iter + 1, src, out, false, true);
    }
    break;
  default:
    activate(cf, x, f, iter, src, out, dead, true);
  }
}

/* ---- running --------------------------------------------------------------------------- */

/* The rendezvous key of xn (a _Send or _Recv) in iteration iter of f: TF's, whose last
 * field is "frame_id:iter_id" ("0:0" in the root frame), so that iteration i of a loop
 * split over devices meets iteration i on the other side. */
static const char *frame_key(const xnode *xn, const cf_frame *f, int64_t iter, char *buf, size_t n) {
  if (!f->fid) return xn->key;
  const char *semi = strrchr(xn->key, ';');
  int pre = semi ? (int)(semi - xn->key) : (int)strlen(xn->key);
  snprintf(buf, n, "%.*s;%016" PRIx64 ":%" PRId64, pre, xn->key, f->fid, iter);
  return buf;
}

static int run_item(struct cf_exec *cf, rt_exec *x, const cf_item *item, rt_tensor **out,
                    rt_status *st) {
  xnode *xn = &x->nodes[item->node];
  const rt_node *n = xn->node;
  cf_iter *it = iter_at(item->f, item->iter);
  rt_tensor **in = it->in + cf->in_off[item->node];
  int rc = RT_OK;
  char kb[1200];
  if (item->dead && xn->is_send)   /* the other side learns it is dead (TF's is_dead) */
    rc = cf->step->send ? cf->step->send(cf->step, frame_key(xn, item->f, item->iter, kb, sizeof kb), RT_DEAD, st)
                        : rt_error(st, RT_INTERNAL, "node '%s': no rendezvous for _Send", n->name);
  if (!item->dead) switch (cf->kind[item->node]) {
    case K_MERGE: {
      int k = 0;
      while (k < n->n_data_inputs && !in[k]) k++;
      if (k == n->n_data_inputs) {
        rc = rt_error(st, RT_INTERNAL, "node '%s': Merge ran without a live input", n->name);
        break;
      }
      out[0] = rt_tensor_ref(in[k]);
      /* two allocations per Merge and iteration that nobody read (a loop's Merges) */
      if (cf->index_used[item->node] || cf->fetch_slot[xn->first_out + 1] || cf->step->trace)
        out[1] = rt_tensor_scalar_i32(k);
      break;
    }
    case K_SWITCH: {
      const rt_tensor *p = in[1];
      if (!p || !p->buf || p->dtype != RT_BOOL || p->shape.ndims != 0) {
        char shs[128] = "?";   /* as TF prints a shape: [2,3] */
        size_t off = 0;
        for (int d = 0; p && d < p->shape.ndims && off < sizeof shs - 24; d++)
          off += (size_t)snprintf(shs + off, sizeof shs - off, "%s%lld", d ? "," : "[", (long long)p->shape.dims[d]);
        if (p) snprintf(shs + off, sizeof shs - off, "%s", p->shape.ndims > 0 ? "]" : "[]");
        rc = rt_error(st, RT_INVALID_ARGUMENT,
                      "The second input must be a scalar, but it has shape %s\n\t [[node %s (op: %s)]]",
                      shs, n->name, n->op);
        break;
      }
      out[*(const bool *)rt_tensor_data(p) ? 1 : 0] = rt_tensor_ref(in[0]);
      break;
    }
    case K_ENTER: case K_EXIT: case K_NEXT: case K_FORWARD:
      out[0] = rt_tensor_ref(in[0]);
      break;
    default: {
      /* Each consumer's input slot holds its own reference, so one no one else holds is this
       * node's alone: the kernel may write over it, and what is left is recycled below. */
      uint64_t fwd = 0;
      for (int k = 0; k < n->n_data_inputs && k < 64; k++)
        if (!xn->ref_in[k] && rt_exec_forwardable(in[k])) fwd |= UINT64_C(1) << k;
      rt_tensor **reuse = x->reuse + xn->first_out;
      if (xn->is_send && item->f->fid) {   /* in a loop: the key names frame and iteration */
        char *root_key = xn->key;
        xn->key = (char *)frame_key(xn, item->f, item->iter, kb, sizeof kb);
        rc = rt_exec_kernel(x, xn, cf->step, in, out, reuse, &fwd, st);
        xn->key = root_key;
      } else {
        rc = rt_exec_kernel(x, xn, cf->step, in, out, reuse, &fwd, st);
      }
    }
    }
  /* A consumed input no one else holds waits in its producer's slot for the producer's next
   * run (this iteration's or the next step's: rt_kernel_output takes it if still unshared). */
  for (int k = 0; k < n->n_data_inputs; k++)
    if (in[k]) {
      rt_tensor **r = &x->reuse[xn->in_slots[k]];
      if (!*r && !xn->ref_in[k] && rt_exec_forwardable(in[k])) *r = in[k];
      else rt_tensor_unref(in[k]);
      in[k] = NULL;
    }
  return rc;
}

/* After item ran (or was received): its outputs go on, its iteration may be over. */
static void complete(struct cf_exec *cf, rt_exec *x, const cf_item *item, rt_tensor **out) {
  const rt_node *n = x->g->nodes[item->node];
  bool dead = item->dead;
  if (item->f == cf->root) cf->root_done++;
  /* a fetch takes the live value (an Exit's, from the loop's last iteration) */
  xnode *xn = &x->nodes[item->node];
  for (int i = 0; !dead && i < n->n_outputs; i++)
    if (out[i] && cf->fetch_slot[xn->first_out + i]) {
      rt_tensor_unref(x->values[xn->first_out + i]);
      x->values[xn->first_out + i] = rt_tensor_ref(out[i]);
    }
  propagate(cf, x, item->node, item->f, item->iter, out, dead);
  cf_frame *f = item->f;
  cf_iter *it = iter_at(f, item->iter);
  assert(it->outstanding > 0);   /* pushed once, completed once */
  if (--it->outstanding == 0 && it->child_frames == 0 && f != cf->root)
    cleanup(cf, x, f, item->iter);
}

static void free_frames(struct cf_exec *cf) {
  while (cf->all) frame_free(cf, cf->all);
  cf->root = NULL;
}

int rt_cf_run(rt_exec *x, rt_step *step, const rt_run_args *a, rt_status *st) {
  struct cf_exec *cf = x->cf;
  const rt_graph *g = x->g;
  int rc = RT_OK, n = x->n;
  int *stack = calloc((size_t)n + (size_t)a->n_fetches + (size_t)a->n_targets + 1, sizeof *stack);
  if (!stack) return rt_error(st, RT_RESOURCE_EXHAUSTED, "out of memory");
  memset(cf->fetch_slot, 0, (size_t)x->n_slots * sizeof *cf->fetch_slot);
  rc = rt_exec_feed(x, a, st);
  if (!rc) rc = rt_exec_mark_needed(x, a, stack, st);
  for (int i = 0; !rc && i < a->n_fetches; i++) {
    int s = rt_exec_slot_of(x, a->fetch_names[i], st);
    if (s < 0) rc = st->code;
    else cf->fetch_slot[s] = true;
  }
  /* pending counts per static frame; Enters per frame */
  int total = 0;
  for (int s = 0; s < cf->n_sf; s++) cf->sf[s].n_enters = 0;
  cf->root_total = 0;
  for (int i = 0; !rc && i < n; i++) {
    if (!x->needed[i]) continue;
    total++;
    const rt_node *nd = g->nodes[i];
    int pend = 0, ctl = 0;
    if (cf->frame[i] == 0) cf->root_total++;
    for (int k = 0; k < nd->n_inputs; k++) {
      const rt_edge *e = &nd->edges[k];
      if (e->index >= 0 && x->fed[x->nodes[e->node].first_out + e->index]) {
        if (cf->frame[i] != 0)
          rc = rt_error(st, RT_UNIMPLEMENTED, "node '%s' in loop frame '%s' takes the fed tensor '%s': "
                        "tfsh feeds tensors outside of loops only", nd->name,
                        cf->sf[cf->frame[i]].name, nd->inputs[k]);
        continue;
      }
      if (!x->needed[e->node]) continue;
      pend++;
      ctl += e->index < 0;
    }
    cf->sf[cf->frame[i]].init_pending[cf->local[i]] = cf->kind[i] == K_MERGE ? 2 * ctl + 1 : pend;
    if (cf->kind[i] == K_ENTER) cf->sf[cf->child[i]].n_enters++;
  }
  atomic_store(&step->ops_total, total);
  atomic_store(&step->ops_done, 0);
  cf->st = st;
  cf->step = step;
  cf->nq = 0;
  cf->root_done = 0;
  cf->root = rc ? NULL : frame_new(cf, 0, NULL, 0, 1);
  if (cf->root) {
    cf_iter *r = cf->root->iters[0];
    /* fed inputs first, then the nodes with nothing to wait for */
    for (int i = 0; i < n; i++) {
      if (!x->needed[i] || cf->frame[i] != 0) continue;
      const rt_node *nd = g->nodes[i];
      for (int k = 0; k < nd->n_data_inputs; k++) {
        int s = x->nodes[nd->edges[k].node].first_out + nd->edges[k].index;
        if (x->fed[s]) r->in[cf->in_off[i] + k] = rt_tensor_ref(x->values[s]);
      }
    }
    for (int i = n - 1; i >= 0; i--)
      if (x->needed[i] && cf->frame[i] == 0 && r->pending[cf->local[i]] == 0 && cf->kind[i] != K_MERGE)
        push(cf, i, cf->root, 0, false);
  }

  /* _Recvs whose tensor is not there yet, with their keys */
  cf_item *deferred = NULL;
  char **dkeys = NULL;
  int n_def = 0, cap_def = 0, done = 0, since_sweep = 0;
  rt_tensor **out = cf->scratch;
  uint32_t trace_tid = step->trace ? rt_trace_thread_id() : 0;   /* views */
  int64_t poll_at = 0;   /* the executor's last look at step->poll (poll_between) */
  char where[300];
  while (!rc && (cf->nq || n_def)) {
    int64_t trace_t0 = step->trace ? rt_trace_micros() : 0;       /* views */
    if (atomic_load(&step->cancelled) || rt_exec_poll_due(step, &poll_at)) {
      rc = rt_error(st, RT_CANCELLED, "Step was cancelled");
      break;
    }
    cf_item item;
    memset(out, 0, (size_t)cf->max_outputs * sizeof *out);
    if (cf->nq) {
      item = cf->q[--cf->nq];
      xnode *xn = &x->nodes[item.node];
      /* TF: a ControlTrigger runs, and is live, even when its inputs are dead */
      if (item.dead && !strcmp(xn->node->op, "ControlTrigger")) item.dead = false;
      if (xn->is_recv) {   /* runs even when dead (its control input): the send comes anyway */
        rt_tensor *t = NULL;
        char kb[1200];
        const char *key = frame_key(xn, item.f, item.iter, kb, sizeof kb);
        int r = step->recv ? step->recv(step, key, false, &t, st)
                           : rt_error(st, RT_INTERNAL, "no rendezvous for _Recv");
        if (r == RT_UNAVAILABLE) {
          if (n_def == cap_def) {
            cap_def = cap_def ? 2 * cap_def : 16;
            deferred = xrealloc(deferred, (size_t)cap_def * sizeof *deferred);
            dkeys = xrealloc(dkeys, (size_t)cap_def * sizeof *dkeys);
          }
          deferred[n_def] = item;
          dkeys[n_def++] = xstrdup(key);
          continue;
        }
        if (!r && t == RT_DEAD) item.dead = true, rt_tensor_unref(t), t = NULL;
        else if (!r) r = rt_exec_accept(x, &t, st);
        if ((rc = r)) break;
        if (item.dead) rt_tensor_unref(t), t = NULL;
        out[0] = t;
      } else {
        int64_t t0 = step->timed ? rt_trace_micros() : 0;   /* views: busy share */
        rc = run_item(cf, x, &item, out, st);
        if (step->timed) step->busy_us += rt_trace_micros() - t0;
        if (rc) break;
      }
    } else {
      int which = 0;
      rt_tensor *t = NULL;
      atomic_store(&step->current_op, x->nodes[deferred[0].node].node->name);   /* views */
      if ((rc = step->recv_any ? step->recv_any(step, (const char *const *)dkeys, n_def, &which, &t, st)
                               : step->recv(step, dkeys[0], true, &t, st)))
        break;
      item = deferred[which];
      free(dkeys[which]);
      n_def--;
      memmove(deferred + which, deferred + which + 1, (size_t)(n_def - which) * sizeof *deferred);
      memmove(dkeys + which, dkeys + which + 1, (size_t)(n_def - which) * sizeof *dkeys);
      if (t == RT_DEAD) item.dead = true, rt_tensor_unref(t), t = NULL;
      else if ((rc = rt_exec_accept(x, &t, st))) break;
      if (item.dead) rt_tensor_unref(t), t = NULL;
      out[0] = t;
    }
    if (step->trace && !item.dead) {   /* views: which frame and iteration (dead nodes did not run) */
      where[0] = '\0';
      if (item.f != cf->root)
        snprintf(where, sizeof where, " [%s:%" PRId64 "]", cf->sf[item.f->sf].name, item.iter);
      rt_exec_trace(x, &x->nodes[item.node], step, trace_t0, trace_tid, out, where);
    }
    if (++done <= total) atomic_store_explicit(&step->ops_done, done, memory_order_relaxed);   /* views */
    complete(cf, x, &item, out);
    for (int i = 0; i < cf->max_outputs; i++) {   /* NULL: a cancel before the next memset */
      rt_tensor_unref(out[i]);
      out[i] = NULL;
    }
    /* A deferred _Recv gets another chance every 64 nodes (exec.c does the same); with
     * nothing else to run, the wait above takes whichever comes first. */
    if (n_def && cf->nq && ++since_sweep >= 64) {
      for (int d = 0; d < n_def; d++) {   /* back in the queue, still outstanding */
        push(cf, deferred[d].node, deferred[d].f, deferred[d].iter, deferred[d].dead);
        iter_at(deferred[d].f, deferred[d].iter)->outstanding--;
        free(dkeys[d]);
      }
      n_def = 0;
      since_sweep = 0;
    }
  }
  if (rc) {
    for (int i = 0; i < cf->max_outputs; i++) {
      rt_tensor_unref(out[i]);
      out[i] = NULL;
    }
  }
  for (int d = 0; d < n_def; d++) free(dkeys[d]);
  free(deferred);
  free(dkeys);
  atomic_store(&step->current_op, NULL);
  if (!rc && (cf->root_done < cf->root_total || cf->root->iters[0]->child_frames))
    rc = rt_error(st, RT_INTERNAL, "graph has a cycle or a missing input (%d of %d ran)",
                  cf->root_done, cf->root_total);
  rc = rt_exec_fetch(x, a, rc, true, st);
  free_frames(cf);
  for (int s = 0; s < x->n_slots; s++) {
    rt_tensor_unref(x->values[s]);
    x->values[s] = NULL;
  }
  free(stack);
  return rc;
}
