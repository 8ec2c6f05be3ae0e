/* Gradients through tf.while_loop, as TF1 builds them: a gradient loop that runs the
 * forward loop's iterations backwards.
 *
 * The forward frame F gets a counter (its Exit is the number of iterations) and, per
 * forward value a gradient builder needs, a stack: a loop variable of F carries the stack's
 * handle through _StackPush, one push per iteration in order. The gradient frame G counts
 * down from that number; a loop variable of G per float loop variable of F carries the
 * gradient from the Exit back to the Enter, each iteration running the body's gradient
 * builders on values _StackPop gives back (a handle chained the same way), and an
 * accumulator per loop invariant (a constant Enter) sums what each iteration gives it. Values
 * from outside both frames enter G through constant Enters; new nodes without inputs wait
 * on G's pivot. A tf.cond in the body: a value of a branch is pushed merged with a zero that
 * is live when the branch is not taken. A loop in the body: its gradient loop is built inside
 * ours, what it needs from our body comes through our stacks (its counter and handles too,
 * pushed once per iteration of ours). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "runtime/gradients_int.h"
#include "runtime/op.h"

enum { AT_G = 0, AT_F = 1, AT_ROOT = 2 };

typedef struct loopvar {
  int enter, merge, sw, ident, exit, next;
} loopvar;

typedef struct gl {
  struct gl *parent;       /* the loop whose body holds this one (its gradient holds ours) */
  rt_graph *g;
  rt_status *st;
  int n0;
  const char *frame, *device;
  char base[400];          /* name prefix: "gradients/while/" */
  char gframe[500];
  int par;
  bool *in_f;              /* original nodes in F (and the Exits of loops inside it) */
  bool *inner_exit;        /* original nodes: an Exit of a loop inside F's body */
  bool *loop_ctl;          /* original nodes: F's own Enter/Merge/Switch/Exit/NextIteration/LoopCond */
  uint8_t *loop_ident;     /* original nodes: a loop variable's Identity (the body's inputs) */
  char pivot_f[400];       /* a node every live forward iteration runs */
  uint8_t *at;             /* new nodes: where their value lives (AT_*) */
  int at_cap;
  char lc_f[400], lc_g[400], pivot_g[400];
  int n_cache;
  char **cache_from, **cache_to;
} gl;

static bool is_op(const rt_node *n, const char *a, const char *b) {
  return !strcmp(n->op, a) || (b && !strcmp(n->op, b));
}

static void mark(gl *L, const char *name, int where) {
  rt_node *n = rt_graph_find(L->g, name);
  if (!n || n->id < L->n0) return;
  int i = n->id - L->n0;
  if (i >= L->at_cap) {
    int cap = L->at_cap ? 2 * L->at_cap : 256;
    while (cap <= i) cap *= 2;
    L->at = xrealloc(L->at, (size_t)cap);
    memset(L->at + L->at_cap, AT_G, (size_t)(cap - L->at_cap));
    L->at_cap = cap;
  }
  L->at[i] = (uint8_t)where;
}

typedef struct nspec {
  const char *op, *base;
  int n_in;
  const char *in[4];
  const char *ctl;         /* control input or NULL */
  const char *exact;       /* exact name (a NextIteration a Merge named ahead) */
  int where;
} nspec;

/* Add a node; its malloc'd name, or NULL (st set). attrs set by the caller on n via set. */
static char *mk(gl *L, const nspec *s, void (*set)(rt_node *, const void *), const void *arg) {
  char want[600], name[700];
  if (s->exact) {
    snprintf(name, sizeof name, "%s", s->exact);
  } else {
    snprintf(want, sizeof want, "%s%s", L->base, s->base);
    rt_graph_unique_name(L->g, want, name, sizeof name);
  }
  rt_node *n = rt_node_new(name, s->op);
  for (int i = 0; i < s->n_in; i++) rt_node_add_input(n, s->in[i]);
  if (s->ctl) rt_node_add_control(n, s->ctl);
  else if (!s->n_in && s->where == AT_ROOT && L->parent) rt_node_add_control(n, L->parent->pivot_f);
  if (L->device && *L->device) rt_node_set_device(n, L->device);
  if (set) set(n, arg);
  if (rt_graph_add(L->g, n, L->st)) return NULL;
  mark(L, name, s->where);
  return xstrdup(name);
}

static char *out_of(const char *node, int i) {
  char buf[800];
  snprintf(buf, sizeof buf, "%s:%d", node, i);
  return xstrdup(buf);
}

typedef struct enter_arg {
  const char *frame;
  bool constant;
  int par;
} enter_arg;

static void set_enter(rt_node *n, const void *a) {
  const enter_arg *e = a;
  rt_node_set_string(n, "frame_name", e->frame);
  rt_node_set_bool(n, "is_constant", e->constant);
  rt_node_set_int(n, "parallel_iterations", e->par);
}

static void set_i32(rt_node *n, const void *a) {
  rt_tensor *t = rt_tensor_scalar_i32(*(const int *)a);
  rt_node_set_tensor(n, "value", t);
  rt_node_set_type(n, "dtype", RT_INT32);
  rt_tensor_unref(t);
}

typedef struct pop_arg {
  rt_dtype t;
  rt_shape s;
} pop_arg;

static void set_pop(rt_node *n, const void *a) {
  const pop_arg *p = a;
  rt_node_set_type(n, "elem_type", p->t);
  rt_node_set_shape(n, "elem_shape", &p->s);
}

/* A loop variable: Enter(init) -> Merge(Enter, next) -> Switch(Merge, lc) -> Identity,
 * Exit. *next_name: the name the caller gives the NextIteration. Returns false on error. */
static bool loop_var(gl *L, const char *frame, const char *init, const char *lc, const char *what,
                     char **ident, char **exit_out, char **merge_out, char next_name[600]) {
  enter_arg ea = {frame, false, L->par};
  char base[300], want[600];
  snprintf(base, sizeof base, "%s/Enter", what);
  nspec se = {"Enter", base, 1, {init}, .where = frame == L->frame ? AT_F : AT_G};
  char *enter = mk(L, &se, set_enter, &ea);
  if (!enter) return false;
  snprintf(want, sizeof want, "%s%s/NextIteration", L->base, what);
  rt_graph_unique_name(L->g, want, next_name, 600);
  snprintf(base, sizeof base, "%s/Merge", what);
  nspec sm = {"Merge", base, 2, {enter, next_name}, .where = se.where};
  char *merge = mk(L, &sm, NULL, NULL);
  free(enter);
  if (!merge) return false;
  snprintf(base, sizeof base, "%s/Switch", what);
  nspec ss = {"Switch", base, 2, {merge, lc}, .where = se.where};
  char *sw = mk(L, &ss, NULL, NULL);
  if (!sw) {
    free(merge);
    return false;
  }
  char *s1 = out_of(sw, 1), *s0 = out_of(sw, 0);
  snprintf(base, sizeof base, "%s/Identity", what);
  nspec si = {"Identity", base, 1, {s1}, .where = se.where};
  *ident = mk(L, &si, NULL, NULL);
  snprintf(base, sizeof base, "%s/Exit", what);
  nspec sx = {"Exit", base, 1, {s0}, .where = AT_ROOT};
  *exit_out = *ident ? mk(L, &sx, NULL, NULL) : NULL;
  free(s1);
  free(s0);
  free(sw);
  if (merge_out) *merge_out = merge;
  else free(merge);
  return *ident && *exit_out;
}

/* "x" and "x:0" name one tensor: one cache entry (one stack) for both. */
static bool same_tensor(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la == lb) return !memcmp(a, b, la);
  if (la > lb) {
    const char *t = a;
    a = b, b = t;
    size_t tl = la;
    la = lb, lb = tl;
  }
  return lb == la + 2 && !memcmp(a, b, la) && !strcmp(b + la, ":0") && !strchr(a, ':');
}

static const char *cache_get(gl *L, const char *from) {
  for (int i = 0; i < L->n_cache; i++)
    if (same_tensor(L->cache_from[i], from)) return L->cache_to[i];
  return NULL;
}

static const char *cache_put(gl *L, const char *from, char *to) {
  if (!to) return NULL;
  L->cache_from = xrealloc(L->cache_from, (size_t)(L->n_cache + 1) * sizeof *L->cache_from);
  L->cache_to = xrealloc(L->cache_to, (size_t)(L->n_cache + 1) * sizeof *L->cache_to);
  L->cache_from[L->n_cache] = xstrdup(from);
  L->cache_to[L->n_cache] = to;
  return L->cache_to[L->n_cache++];
}

static const char *stacked(gl *L, const char *t, const rt_node *src, int idx);
static const char *remap(void *arg, const char *t);

/* A value outside F, where G's outside can use it: itself at the top; in a nested loop, the
 * parent loop's copy in its gradient (popped, or entered). */
static const char *outside(gl *L, const char *t) {
  if (!L->parent) return t;
  char name[400];
  int idx;
  if (!rt_tensor_name_parse(t, name, sizeof name, &idx)) return t;
  rt_node *m = rt_graph_find(L->g, name);
  if (!m) return t;
  if (m->id < L->n0) return remap(L->parent, t);
  return stacked(L->parent, t, m, idx);   /* made by us in the parent's body (counter, handle) */
}

/* t (outside both frames) as a constant of G. */
static const char *into_g(gl *L, const char *t) {
  const char *c = cache_get(L, t);
  if (c) return c;
  const char *o = outside(L, t);
  if (!o) return NULL;
  enter_arg ea = {L->gframe, true, L->par};
  nspec s = {"Enter", "Enter", 1, {o}, .where = AT_G};
  return cache_put(L, t, mk(L, &s, set_enter, &ea));
}

/* Whether output idx of node id of F is inside a tf.cond branch of the body: the branch's
 * Switch and output index (inputs walked back, stopping at Merges, Switches and the loop's
 * nodes). */
static bool in_branch(gl *L, int id, int idx, int *sw, int *branch) {
  if (id >= L->n0) return false;
  const rt_node *self = L->g->nodes[id];
  if (is_op(self, "Switch", "RefSwitch") && !L->loop_ctl[id]) {   /* a branch's way in */
    *sw = id;
    *branch = idx;
    return true;
  }
  int *stack = xcalloc((size_t)L->n0 + 1, sizeof *stack), sp = 0;
  bool *seen = xcalloc((size_t)L->n0 + 1, sizeof *seen), found = false;
  stack[sp++] = id;
  seen[id] = true;
  while (sp && !found) {
    const rt_node *n = L->g->nodes[stack[--sp]];
    if (is_op(n, "Merge", "RefMerge") || L->loop_ctl[n->id] || (L->loop_ident && L->loop_ident[n->id])) continue;
    for (int k = 0; k < n->n_inputs && !found; k++) {
      int s = n->edges[k].node;
      if (s >= L->n0 || !L->in_f[s] || seen[s]) continue;
      seen[s] = true;
      const rt_node *sn = L->g->nodes[s];
      if (is_op(sn, "Switch", "RefSwitch") && !L->loop_ctl[s] && n->edges[k].index >= 0) {
        *sw = s;
        *branch = n->edges[k].index;
        found = true;
      } else {
        stack[sp++] = s;
      }
    }
  }
  free(stack);
  free(seen);
  return found;
}

static void set_dst(rt_node *n, const void *a) { rt_node_set_type(n, "DstT", *(const rt_dtype *)a); }

/* t (a value of F): pushed each forward iteration, popped each gradient iteration. A value
 * inside a tf.cond branch is dead when the branch is not taken, and a dead push would end
 * the chain: what is pushed then is a zero standing in (live exactly when t is not), which
 * the gradient's own branch never reads. */
static const char *stacked(gl *L, const char *t, const rt_node *src, int idx) {
  const char *c = cache_get(L, t);
  if (c) return c;
  int sw, branch;
  char *pushed = NULL;
  if (in_branch(L, src->id, idx, &sw, &branch)) {
    int zero = 0;
    rt_dtype dt = src->out_types[idx];
    nspec sz = {"Const", "f_acc/zero", 0, .ctl = L->pivot_f, .where = AT_F};
    char *z = mk(L, &sz, set_i32, &zero);
    nspec ss = {"Switch", "f_acc/Switch", 2, {z, L->g->nodes[sw]->inputs[1]}, .where = AT_F};
    char *zs = z ? mk(L, &ss, NULL, NULL) : NULL;
    char *side = zs ? out_of(zs, 1 - branch) : NULL;
    nspec sc = {"Cast", "f_acc/Cast", 1, {side}, .where = AT_F};
    char *cast = side && dt != RT_INT32 ? mk(L, &sc, set_dst, &dt) : (side ? xstrdup(side) : NULL);
    nspec sm = {"Merge", "f_acc/Merge", 2, {t, cast}, .where = AT_F};
    char *m = cast ? mk(L, &sm, NULL, NULL) : NULL;
    pushed = m ? out_of(m, 0) : NULL;
    free(z);
    free(zs);
    free(side);
    free(cast);
    free(m);
    if (!pushed) return NULL;
  }
  nspec sn = {"_StackNew", "f_acc", 0, .where = AT_ROOT};
  char *h = mk(L, &sn, NULL, NULL);
  if (!h) return NULL;
  char *hid = NULL, *hexit = NULL, next[600];
  bool ok = loop_var(L, L->frame, h, L->lc_f, "f_acc_h", &hid, &hexit, NULL, next);
  free(h);
  char *push = NULL, *gid = NULL, *gexit = NULL, *pop = NULL, gnext[600];
  if (ok) {
    nspec sp = {"_StackPush", "StackPush", 2, {hid, pushed ? pushed : t}, .where = AT_F};
    push = mk(L, &sp, NULL, NULL);
    nspec sx = {"NextIteration", NULL, 1, {push}, .exact = next, .where = AT_F};
    char *nx = push ? mk(L, &sx, NULL, NULL) : NULL;
    ok = nx != NULL;
    free(nx);
  }
  const char *hout = ok ? outside(L, hexit) : NULL;
  if (ok) ok = hout && loop_var(L, L->gframe, hout, L->lc_g, "b_acc_h", &gid, &gexit, NULL, gnext);
  if (ok) {
    pop_arg pa = {src->out_types[idx], src->out_shapes[idx]};
    nspec sp = {"_StackPop", "StackPop", 1, {gid}, .where = AT_G};
    pop = mk(L, &sp, set_pop, &pa);
    char *h1 = pop ? out_of(pop, 1) : NULL;
    nspec sx = {"NextIteration", NULL, 1, {h1}, .exact = gnext, .where = AT_G};
    char *nx = h1 ? mk(L, &sx, NULL, NULL) : NULL;
    ok = nx != NULL;
    free(nx);
    free(h1);
  }
  char *r = ok ? out_of(pop, 0) : NULL;
  free(pushed);
  free(hid);
  free(hexit);
  free(push);
  free(gid);
  free(gexit);
  free(pop);
  return cache_put(L, t, r);
}

static void set_like(rt_node *n, const void *a) {
  const rt_node *m = a;
  rt_node_set_tensor(n, "value", rt_node_attr(m, "value")->tensor);
  rt_node_set_type(n, "dtype", rt_node_type(m, "dtype", RT_FLOAT));
}

/* A Const of F (its inputs control edges at most) as a Const of G: the same value each
 * iteration, no stack needed. */
static const char *const_g(gl *L, const char *t, const rt_node *m) {
  const char *c = cache_get(L, t);
  if (c) return c;
  const rt_attr_value *v = rt_node_attr(m, "value");
  if (!v || v->kind != RT_ATTR_TENSOR || !v->tensor) return stacked(L, t, m, 0);
  nspec s = {"Const", "Const", 0, .ctl = L->pivot_g, .where = AT_G};
  char *n = mk(L, &s, set_like, m);
  char *r = n ? out_of(n, 0) : NULL;
  free(n);
  return cache_put(L, t, r);
}

static const char *remap(void *arg, const char *t) {
  gl *L = arg;
  char name[400];
  int idx;
  if (!rt_tensor_name_parse(t, name, sizeof name, &idx) || idx < 0) return t;
  rt_node *m = rt_graph_find(L->g, name);
  if (!m) return t;
  if (m->id >= L->n0) {
    int i = m->id - L->n0;
    int where = i < L->at_cap ? L->at[i] : AT_G;
    return where == AT_ROOT ? into_g(L, t) : t;
  }
  if (!L->in_f[m->id]) return into_g(L, t);
  if (is_op(m, "Enter", "RefEnter") && rt_node_bool(m, "is_constant", false)) return into_g(L, m->inputs[0]);
  if (is_op(m, "Const", NULL) && m->n_data_inputs == 0) return const_g(L, t, m);
  return stacked(L, t, m, idx);
}

/* ---- the gradient loop ----------------------------------------------------------------- */

static bool is_float(rt_dtype t) { return t == RT_FLOAT || t == RT_DOUBLE; }

/* Sum of the names in l (consumed), in G. */
static char *sum_g(gl *L, rt_grad_list *l) {
  if (l->n == 0) return NULL;
  if (l->n == 1) {
    l->n = 0;
    return l->v[0];
  }
  char name[700], want[600];
  snprintf(want, sizeof want, "%sAddN", L->base);
  rt_graph_unique_name(L->g, want, name, sizeof name);
  rt_node *n = rt_node_new(name, "AddN");
  for (int i = 0; i < l->n; i++) {
    rt_node_add_input(n, l->v[i]);
    free(l->v[i]);
  }
  l->n = 0;
  if (L->device && *L->device) rt_node_set_device(n, L->device);
  if (rt_graph_add(L->g, n, L->st)) return NULL;
  return out_of(name, 0);
}

static int grad_loop(gl *parent, rt_graph *g, int n0, const char *frame, const char *const *exit_dy,
                     const int *exit_ids, int n_exits, const char *scope, rt_grad_out **outs,
                     int *n_outs, rt_status *st);

/* The loop invariants (F's constant Enters) and what each iteration gives them. */
typedef struct accs {
  int n, *node;
  rt_grad_list *in;
} accs;

/* Gradient grad (a G tensor, taken) of output index of original node `node`: to its
 * accumulator when node is a loop invariant, to the body's lists when node is F's. */
static void deliver(accs *A, gl *L, rt_grad_list *lg, const int *lg_off, int node, int index, char *grad,
                    int rc) {
  const rt_node *src = L->g->nodes[node];
  if (!rc && node < L->n0 && is_op(src, "Enter", "RefEnter") && rt_node_bool(src, "is_constant", false) &&
      L->in_f[node] && is_float(src->out_types[0])) {
    int a = 0;
    while (a < A->n && A->node[a] != node) a++;
    if (a == A->n) {
      A->node = xrealloc(A->node, (size_t)(A->n + 1) * sizeof *A->node);
      A->in = xrealloc(A->in, (size_t)(A->n + 1) * sizeof *A->in);
      A->node[a] = node;
      A->in[a] = (rt_grad_list){0};
      A->n++;
    }
    rt_grad_list_add(&A->in[a], grad);
  } else if (!rc && node < L->n0 && L->in_f[node] && !L->loop_ctl[node]) {
    rt_grad_list_add(&lg[lg_off[node] + index], grad);
  } else {
    free(grad);
  }
}

int rt_grad_while(rt_graph *g, int n0, const char *frame, const char *const *exit_dy,
                  const int *exit_ids, int n_exits, const char *scope, rt_grad_out **outs,
                  int *n_outs, rt_status *st) {
  return grad_loop(NULL, g, n0, frame, exit_dy, exit_ids, n_exits, scope, outs, n_outs, st);
}

/* F's iteration counter (f_count), and G's countdown from its final value (b_count): G's
 * LoopCond (lc_g) and pivot (pivot_g) in L. */
static int build_counters(gl *L, const char *frame) {
  rt_graph *g = L->g;
  rt_status *st = L->st;
  /* the forward counter; the gradient loop's countdown from it */
  int zero = 0, one = 1;
  char *c0 = NULL, *cid = NULL, *cexit = NULL, *c1 = NULL, *cadd = NULL, cnext[600];
  nspec s0 = {"Const", "f_count/Const", 0, .where = AT_ROOT};
  c0 = mk(L, &s0, set_i32, &zero);
  bool ok = c0 && loop_var(L, frame, c0, L->lc_f, "f_count", &cid, &cexit, NULL, cnext);
  if (ok) {
    nspec s1 = {"Const", "f_count/one", 0, .ctl = cid, .where = AT_F};
    c1 = mk(L, &s1, set_i32, &one);
    nspec sa = {"Add", "f_count/add", 2, {cid, c1}, .where = AT_F};
    cadd = c1 ? mk(L, &sa, NULL, NULL) : NULL;
    nspec sn = {"NextIteration", NULL, 1, {cadd}, .exact = cnext, .where = AT_F};
    char *nx = cadd ? mk(L, &sn, NULL, NULL) : NULL;
    ok = nx != NULL;
    free(nx);
  }
  /* countdown: Enter(n) -> Merge -> Greater(., 0) -> LoopCond -> Switch -> Identity - 1 */
  char *benter = NULL, *bmerge = NULL, *bz = NULL, *bgt = NULL, *blc = NULL, *bsw = NULL, *bid = NULL,
       *b1 = NULL, *bsub = NULL, bnext[600], want[700];
  if (ok) {
    enter_arg ea = {L->gframe, false, L->par};
    const char *cout = outside(L, cexit);
    nspec se = {"Enter", "b_count/Enter", 1, {cout}, .where = AT_G};
    benter = cout ? mk(L, &se, set_enter, &ea) : NULL;
    snprintf(want, sizeof want, "%sb_count/NextIteration", L->base);
    rt_graph_unique_name(g, want, bnext, sizeof bnext);
    nspec sm = {"Merge", "b_count/Merge", 2, {benter, bnext}, .where = AT_G};
    bmerge = benter ? mk(L, &sm, NULL, NULL) : NULL;
    nspec sz = {"Const", "b_count/zero", 0, .ctl = bmerge, .where = AT_G};
    bz = bmerge ? mk(L, &sz, set_i32, &zero) : NULL;
    nspec sg = {"Greater", "b_count/Greater", 2, {bmerge, bz}, .where = AT_G};
    bgt = bz ? mk(L, &sg, NULL, NULL) : NULL;
    nspec sl = {"LoopCond", "b_count/LoopCond", 1, {bgt}, .where = AT_G};
    blc = bgt ? mk(L, &sl, NULL, NULL) : NULL;
    nspec ss = {"Switch", "b_count/Switch", 2, {bmerge, blc}, .where = AT_G};
    bsw = blc ? mk(L, &ss, NULL, NULL) : NULL;
    char *s1 = bsw ? out_of(bsw, 1) : NULL;
    nspec si = {"Identity", "b_count/Identity", 1, {s1}, .where = AT_G};
    bid = s1 ? mk(L, &si, NULL, NULL) : NULL;
    free(s1);
    nspec so = {"Const", "b_count/one", 0, .ctl = bid, .where = AT_G};
    b1 = bid ? mk(L, &so, set_i32, &one) : NULL;
    nspec sb = {"Sub", "b_count/Sub", 2, {bid, b1}, .where = AT_G};
    bsub = b1 ? mk(L, &sb, NULL, NULL) : NULL;
    nspec sn = {"NextIteration", NULL, 1, {bsub}, .exact = bnext, .where = AT_G};
    char *nx = bsub ? mk(L, &sn, NULL, NULL) : NULL;
    ok = nx != NULL;
    free(nx);
    if (ok) {
      snprintf(L->lc_g, sizeof L->lc_g, "%s", blc);
      snprintf(L->pivot_g, sizeof L->pivot_g, "%s", bid);
    }
  }
  free(c0); free(cid); free(cexit); free(c1); free(cadd);
  free(benter); free(bmerge); free(bz); free(bgt); free(blc); free(bsw); free(bid); free(b1); free(bsub);
  if (!ok) return st->code ? st->code : rt_error(st, RT_INTERNAL, "building the gradient of '%s'", frame);
  return RT_OK;
}

/* The gradient of F's body, last node first, into the lists lg (per original output, at
 * lg_off) and, for the loop invariants, the accumulators in A; a loop in the body gets its
 * own gradient loop, inside ours. */
static int grad_body(gl *L, const loopvar *vars, int n_vars, rt_grad_list *lg, const int *lg_off,
                     const char *scope, accs *A) {
  rt_graph *g = L->g;
  rt_status *st = L->st;
  int n0 = L->n0, rc = RT_OK;
  char **done_inner = NULL;
  int n_done_inner = 0;
  for (int i = n0 - 1; i >= 0 && !rc; i--) {
    rt_node *n = g->nodes[i];
    if (!L->in_f[i] || L->loop_ctl[i]) continue;
    if (L->inner_exit[i]) {   /* a loop in the body: its gradient loop, inside ours */
      const char *inner = rt_grad_exit_frame(g, n);
      bool seen = false;
      for (int d = 0; d < n_done_inner; d++) seen |= !strcmp(done_inner[d], inner);
      if (seen) continue;
      done_inner = xrealloc(done_inner, (size_t)(n_done_inner + 1) * sizeof *done_inner);
      done_inner[n_done_inner++] = xstrdup(inner);
      int ne = 0, *ids = xcalloc((size_t)n0 + 1, sizeof *ids);
      char **dys = xcalloc((size_t)n0 + 1, sizeof *dys);
      for (int x = 0; x < n0; x++)
        if (L->inner_exit[x] && !strcmp(rt_grad_exit_frame(g, g->nodes[x]), inner)) {
          ids[ne] = x;
          dys[ne++] = sum_g(L, &lg[lg_off[x]]);
        }
      rt_grad_out *io = NULL;
      int n_io = 0;
      rc = grad_loop(L, g, n0, inner, (const char *const *)dys, ids, ne, scope, &io, &n_io, st);
      for (int o = 0; o < n_io; o++) deliver(A, L, lg, lg_off, io[o].node, io[o].index, io[o].grad, rc);
      free(io);
      for (int x = 0; x < ne; x++) free(dys[x]);
      free(dys);
      free(ids);
      continue;
    }
    bool is_ident = false;
    for (int j = 0; j < n_vars; j++) is_ident |= vars[j].ident == i;
    if (is_ident) continue;
    char **dy = xcalloc((size_t)n->n_outputs + 1, sizeof *dy);
    bool any = false;
    for (int o = 0; o < n->n_outputs; o++) {
      dy[o] = sum_g(L, &lg[lg_off[i] + o]);
      any |= dy[o] != NULL;
    }
    if (any && n->n_data_inputs) {
      char sc[800];
      snprintf(sc, sizeof sc, "%s%s_grad/", scope, n->name);
      char **dx = xcalloc((size_t)n->n_data_inputs + 1, sizeof *dx);
      /* the language's gradient too (tf.RegisterGradient): its nodes go through remap */
      rt_grad_ctx ctx = {.g = g, .node = n, .dy = (const char *const *)dy, .dx = dx, .scope = sc,
                         .st = st, .remap = remap, .remap_arg = L, .pivot = L->pivot_g};
      bool handled = false;
      rc = rt_grad_call_hook(&ctx, &handled);
      if (!rc && !handled && (!n->def || !n->def->grad))
        rc = rt_error(st, RT_LOOKUP_ERROR, "No gradient defined for operation '%s' (op type: %s)", n->name, n->op);
      else if (!rc && !handled)
        rc = n->def->grad(&ctx);
      n = g->nodes[i];
      for (int k = 0; k < n->n_data_inputs; k++)
        if (dx[k]) deliver(A, L, lg, lg_off, n->edges[k].node, n->edges[k].index, dx[k], rc);
      free(dx);
    }
    for (int o = 0; o < n->n_outputs; o++) free(dy[o]);
    free(dy);
  }
  for (int d = 0; d < n_done_inner; d++) free(done_inner[d]);
  free(done_inner);
  return rc;
}

/* G's accumulator of each loop invariant: zeros, plus each iteration's share; its Exit is
 * the invariant's gradient, appended to outs. */
static int build_accumulators(gl *L, int n_acc, const int *acc_node, rt_grad_list *acc_in,
                              rt_grad_out **outs, int *n_outs) {
  rt_graph *g = L->g;
  rt_status *st = L->st;
  int rc = RT_OK;
  for (int a = 0; a < n_acc && !rc; a++) {
    const rt_node *en = g->nodes[acc_node[a]];
    nspec sz = {"ZerosLike", "zeros_like", 1, {outside(L, en->inputs[0])}, .where = AT_ROOT};
    char *init = mk(L, &sz, NULL, NULL), *aid = NULL, *aexit = NULL, anext[600];
    if (!init || !loop_var(L, L->gframe, init, L->lc_g, "b_acc", &aid, &aexit, NULL, anext)) {
      rc = st->code;
      free(init);
      break;
    }
    free(init);
    rt_grad_list_add(&acc_in[a], out_of(aid, 0));
    char *sum = sum_g(L, &acc_in[a]);
    nspec sn = {"NextIteration", NULL, 1, {sum}, .exact = anext, .where = AT_G};
    char *nx = sum ? mk(L, &sn, NULL, NULL) : NULL;
    if (!nx) rc = st->code;
    else {
      rt_grad_out o = {en->edges[0].node, en->edges[0].index, out_of(aexit, 0)};
      *outs = xrealloc(*outs, (size_t)(*n_outs + 1) * sizeof **outs);
      (*outs)[(*n_outs)++] = o;
    }
    free(nx);
    free(sum);
    free(aid);
    free(aexit);
  }
  return rc;
}

/* F: forward from its Enters, through data and control edges (cons_n, cons: each original
 * node's consumers), stopping at its Exits, in L->in_f; a loop inside the body is not F's,
 * but its Exits are (L->inner_exit: F goes on from them). */
static void find_body(gl *L, const int *cons_n, const int *cons) {
  const rt_graph *g = L->g;
  int n0 = L->n0;
  const char *frame = L->frame;
  int *stack = xcalloc((size_t)n0 + 1, sizeof *stack), sp = 0;
  for (int i = 0; i < n0; i++) {
    const rt_node *n = g->nodes[i];
    if (is_op(n, "Enter", "RefEnter") && !strcmp(rt_node_string(n, "frame_name", ""), frame)) {
      L->in_f[i] = true;
      stack[sp++] = i;
      if (!L->device) L->device = n->device;
      L->par = (int)rt_node_int(n, "parallel_iterations", 10);
    }
  }
  /* a loop inside the body: not F's, but its Exits are (F goes on from them) */
  L->inner_exit = xcalloc((size_t)n0 + 1, sizeof *L->inner_exit);
  while (sp) {
    int u = stack[--sp];
    const rt_node *nu = g->nodes[u];
    if (is_op(nu, "Exit", "RefExit") && !L->inner_exit[u]) continue;
    for (int c = cons_n[u]; c < cons_n[u + 1]; c++) {
      int v = cons[c];
      const rt_node *nv = g->nodes[v];
      if (L->in_f[v]) continue;
      if (is_op(nv, "Enter", "RefEnter") && strcmp(rt_node_string(nv, "frame_name", ""), frame)) {
        const char *inner = rt_node_string(nv, "frame_name", "");
        for (int x = 0; x < n0; x++)
          if (!L->in_f[x] && is_op(g->nodes[x], "Exit", "RefExit") &&
              !strcmp(rt_grad_exit_frame(g, g->nodes[x]), inner)) {
            L->in_f[x] = L->inner_exit[x] = true;
            stack[sp++] = x;
          }
        continue;
      }
      L->in_f[v] = true;
      stack[sp++] = v;
    }
  }
  free(stack);
}

/* The loop variables: Merge(Enter, NextIteration) -> Switch -> Identity / Exit, into vars;
 * F's LoopCond in L->lc_f. */
static int find_loop_vars(gl *L, const int *cons_n, const int *cons, loopvar *vars, int *n_vars) {
  const rt_graph *g = L->g;
  rt_status *st = L->st;
  int n0 = L->n0, rc = RT_OK;
  for (int i = 0; i < n0 && !rc; i++) {
    const rt_node *n = g->nodes[i];
    if (!L->in_f[i]) continue;
    if (is_op(n, "Merge", "RefMerge")) {
      if (n->n_data_inputs != 2 || !is_op(g->nodes[n->edges[1].node], "NextIteration", "RefNextIteration")) {
        if (rt_node_string(n, "_cond_pred", NULL)) continue;   /* a tf.cond's, in the body */
        rc = rt_error(st, RT_UNIMPLEMENTED, "node '%s': a Merge of neither a loop nor a tf.cond", n->name);
        break;
      }
      loopvar *v = &vars[(*n_vars)++];
      *v = (loopvar){n->edges[0].node, i, -1, -1, -1, n->edges[1].node};
      for (int c = cons_n[i]; c < cons_n[i + 1]; c++)
        if (is_op(g->nodes[cons[c]], "Switch", "RefSwitch")) v->sw = cons[c];
      if (v->sw < 0) continue;
      for (int c = cons_n[v->sw]; c < cons_n[v->sw + 1]; c++) {
        const rt_node *cn = g->nodes[cons[c]];
        if (is_op(cn, "Identity", NULL) && cn->edges[0].index == 1) v->ident = cons[c];
        if (is_op(cn, "Exit", "RefExit")) v->exit = cons[c];
      }
      const rt_node *sw = g->nodes[v->sw];
      snprintf(L->lc_f, sizeof L->lc_f, "%s", sw->inputs[1]);
    }
  }
  return rc;
}

/* The loop's own control nodes (a tf.cond's Switch and Merge in the body are not), in
 * L->loop_ctl; its variables' Identities in L->loop_ident, the first one F's pivot. */
static void mark_loop_ctl(gl *L, const loopvar *vars, int n_vars) {
  const rt_graph *g = L->g;
  int n0 = L->n0;
  L->loop_ctl = xcalloc((size_t)n0 + 1, sizeof *L->loop_ctl);
  for (int i = 0; i < n0; i++) {
    const rt_node *n = g->nodes[i];
    L->loop_ctl[i] = L->in_f[i] && !L->inner_exit[i] &&
                    (is_op(n, "Enter", "RefEnter") || is_op(n, "Exit", "RefExit") ||
                     is_op(n, "NextIteration", "RefNextIteration") || is_op(n, "LoopCond", NULL));
  }
  for (int j = 0; j < n_vars; j++) {
    L->loop_ctl[vars[j].merge] = true;
    if (vars[j].sw >= 0) L->loop_ctl[vars[j].sw] = true;
    if (vars[j].ident >= 0 && !L->pivot_f[0]) snprintf(L->pivot_f, sizeof L->pivot_f, "%s", g->nodes[vars[j].ident]->name);
    if (vars[j].ident >= 0) L->loop_ident = L->loop_ident ? L->loop_ident : xcalloc((size_t)n0 + 1, 1);
    if (vars[j].ident >= 0) L->loop_ident[vars[j].ident] = 1;
  }
}

static int grad_loop(gl *parent, rt_graph *g, int n0, const char *frame, const char *const *exit_dy,
                     const int *exit_ids, int n_exits, const char *scope, rt_grad_out **outs,
                     int *n_outs, rt_status *st) {
  gl L = {.parent = parent, .g = g, .st = st, .n0 = n0, .frame = frame};
  *outs = NULL;
  *n_outs = 0;
  int rc = RT_OK;
  L.in_f = xcalloc((size_t)n0 + 1, sizeof *L.in_f);
  /* each original node's consumers: cons[cons_n[i] .. cons_n[i + 1]) */
  int *cons_n = xcalloc((size_t)n0 + 2, sizeof *cons_n), *cons = NULL;
  for (int i = 0; i < n0; i++)
    for (int k = 0; k < g->nodes[i]->n_inputs; k++)
      if (g->nodes[i]->edges[k].node < n0) cons_n[g->nodes[i]->edges[k].node + 1]++;
  for (int i = 0; i < n0; i++) cons_n[i + 1] += cons_n[i];
  cons = xcalloc((size_t)cons_n[n0] + 1, sizeof *cons);
  int *fill = xcalloc((size_t)n0 + 1, sizeof *fill);
  for (int i = 0; i < n0; i++)
    for (int k = 0; k < g->nodes[i]->n_inputs; k++) {
      int s = g->nodes[i]->edges[k].node;
      if (s < n0) cons[cons_n[s] + fill[s]++] = i;
    }
  free(fill);
  find_body(&L, cons_n, cons);
  int n_vars = 0;
  loopvar *vars = xcalloc((size_t)n0 + 1, sizeof *vars);
  /* the loop variables: Merge(Enter, NextIteration) -> Switch -> Identity / Exit */
  rc = find_loop_vars(&L, cons_n, cons, vars, &n_vars);
  /* the loop's own control nodes (a tf.cond's Switch and Merge in the body are not) */
  mark_loop_ctl(&L, vars, n_vars);
  if (!rc && (!n_vars || !L.lc_f[0]))
    rc = rt_error(st, RT_INVALID_ARGUMENT, "frame '%s': not a tf.while_loop", frame);
  const char *slash = strrchr(frame, '/');
  snprintf(L.base, sizeof L.base, "%s%.*s", scope, slash ? (int)(slash - frame + 1) : 0, frame);
  snprintf(L.gframe, sizeof L.gframe, "%s%s", scope, frame);

  rt_grad_list *lg = xcalloc((size_t)n0 + 1, sizeof *lg);      /* per original node, output 0.. */
  int *lg_off = xcalloc((size_t)n0 + 2, sizeof *lg_off);
  for (int i = 0; i < n0; i++) lg_off[i + 1] = lg_off[i] + g->nodes[i]->n_outputs;
  free(lg);
  lg = xcalloc((size_t)lg_off[n0] + 1, sizeof *lg);
  char **gident = xcalloc((size_t)n_vars + 1, sizeof *gident), **gexit = xcalloc((size_t)n_vars + 1, sizeof *gexit);
  char (*gnext)[600] = xcalloc((size_t)n_vars + 1, sizeof *gnext);
  rt_grad_list *acc_in = NULL;
  int n_acc = 0, *acc_node = NULL;

  /* the forward counter; the gradient loop's countdown from it */
  if (!rc) rc = build_counters(&L, frame);
  /* a gradient loop variable per float loop variable: its Exit's gradient, or zeros */
  for (int j = 0; j < n_vars && !rc; j++) {
    loopvar *v = &vars[j];
    const rt_node *m = g->nodes[v->merge];
    if (!is_float(m->out_types[0]) || v->ident < 0 || v->exit < 0) continue;
    char *init = NULL;
    for (int e = 0; e < n_exits; e++)
      if (exit_ids[e] == v->exit && exit_dy[e]) init = xstrdup(exit_dy[e]);
    if (!init) {
      char *ex = out_of(g->nodes[v->exit]->name, 0);
      nspec sz = {"ZerosLike", "zeros_like", 1, {outside(&L, ex)}, .where = AT_ROOT};
      init = mk(&L, &sz, NULL, NULL);
      free(ex);
      if (!init) {
        rc = st->code;
        break;
      }
    }
    char what[300];
    snprintf(what, sizeof what, "%s_grad", strrchr(g->nodes[v->exit]->name, '/') ? strrchr(g->nodes[v->exit]->name, '/') + 1 : g->nodes[v->exit]->name);
    if (!loop_var(&L, L.gframe, init, L.lc_g, what, &gident[j], &gexit[j], NULL, gnext[j])) rc = st->code;
    free(init);
    /* the body's outputs (NextIteration's input) get this iteration's gradient */
    if (!rc) {
      const rt_node *nx = g->nodes[v->next];
      rt_grad_list_add(&lg[lg_off[nx->edges[0].node] + nx->edges[0].index], out_of(gident[j], 0));
    }
  }
  /* the body, last node first */
  accs A = {0};
  if (!rc) rc = grad_body(&L, vars, n_vars, lg, lg_off, scope, &A);
  n_acc = A.n;
  acc_node = A.node;
  acc_in = A.in;
  /* each loop variable's NextIteration: what reached its Identity (or zeros) */
  for (int j = 0; j < n_vars && !rc; j++) {
    if (!gident[j]) continue;
    char *val = sum_g(&L, &lg[lg_off[vars[j].ident]]);
    if (!val) {
      nspec sz = {"ZerosLike", "zeros_like", 1, {gident[j]}, .where = AT_G};
      val = mk(&L, &sz, NULL, NULL);
    }
    nspec sn = {"NextIteration", NULL, 1, {val}, .exact = gnext[j], .where = AT_G};
    char *nx = val ? mk(&L, &sn, NULL, NULL) : NULL;
    if (!nx) rc = st->code;
    free(nx);
    free(val);
    if (!rc) {
      const rt_node *en = g->nodes[vars[j].enter];
      rt_grad_out o = {en->edges[0].node, en->edges[0].index, out_of(gexit[j], 0)};
      *outs = xrealloc(*outs, (size_t)(*n_outs + 1) * sizeof **outs);
      (*outs)[(*n_outs)++] = o;
    }
  }
  /* accumulators of the loop invariants: zeros, plus each iteration's share */
  if (!rc) rc = build_accumulators(&L, n_acc, acc_node, acc_in, outs, n_outs);
  for (int i = 0; i < lg_off[n0]; i++) rt_grad_list_free(&lg[i]);
  for (int a = 0; a < n_acc; a++) rt_grad_list_free(&acc_in[a]);
  for (int j = 0; j < n_vars; j++) {
    free(gident[j]);
    free(gexit[j]);
  }
  for (int i = 0; i < L.n_cache; i++) {
    free(L.cache_from[i]);
    free(L.cache_to[i]);
  }
  free(L.cache_from);
  free(L.cache_to);
  free(L.at);
  free(acc_in);
  free(acc_node);
  free(gident);
  free(gexit);
  free(gnext);
  free(lg);
  free(lg_off);
  free(vars);
  free(cons);
  free(cons_n);
  free(L.in_f);
  free(L.inner_exit);
  free(L.loop_ctl);
  free(L.loop_ident);
  if (rc) {
    for (int i = 0; i < *n_outs; i++) free((*outs)[i].grad);
    free(*outs);
    *outs = NULL;
    *n_outs = 0;
  }
  return rc;
}
