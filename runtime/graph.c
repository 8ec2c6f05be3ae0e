#include "runtime/graph.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/str.h"
#include "runtime/op.h"

/* A copy of s, "" for NULL (bookkeeping: fatal when memory runs out, base/alloc.h). */
static char *dup_str(const char *s) { return xstrdup(s ? s : ""); }

/* ---- attr values -------------------------------------------------------------------- */

static size_t list_elem_size(rt_attr_kind k) {
  switch (k) {
  case RT_ATTR_LIST_INT: return sizeof(int64_t);
  case RT_ATTR_LIST_FLOAT: return sizeof(double);
  case RT_ATTR_LIST_STRING: return sizeof(char *);
  case RT_ATTR_LIST_TYPE: return sizeof(rt_dtype);
  case RT_ATTR_LIST_SHAPE: return sizeof(rt_shape);
  case RT_ATTR_RAW: return 1;
  default: return 0;
  }
}

void rt_attr_value_clear(rt_attr_value *v) {
  switch (v->kind) {
  case RT_ATTR_STRING: free(v->s); break;
  case RT_ATTR_TENSOR: rt_tensor_unref(v->tensor); break;
  case RT_ATTR_LIST_STRING:
    for (int i = 0; i < v->list.n; i++) free(((char **)v->list.v)[i]);
    free(v->list.v);
    break;
  case RT_ATTR_LIST_INT: case RT_ATTR_LIST_FLOAT: case RT_ATTR_LIST_TYPE:
  case RT_ATTR_LIST_SHAPE: case RT_ATTR_RAW:
    free(v->list.v);
    break;
  default: break;
  }
  memset(v, 0, sizeof *v);
}

int rt_attr_value_copy(rt_attr_value *dst, const rt_attr_value *src) {
  *dst = *src;
  switch (src->kind) {
  case RT_ATTR_STRING: dst->s = dup_str(src->s); break;
  case RT_ATTR_TENSOR: rt_tensor_ref(dst->tensor); break;
  case RT_ATTR_LIST_INT: case RT_ATTR_LIST_FLOAT: case RT_ATTR_LIST_TYPE:
  case RT_ATTR_LIST_SHAPE: case RT_ATTR_LIST_STRING: case RT_ATTR_RAW: {
    size_t es = list_elem_size(src->kind);
    dst->list.v = xcalloc((size_t)src->list.n, es);
    if (src->list.n) memcpy(dst->list.v, src->list.v, (size_t)src->list.n * es);
    if (src->kind == RT_ATTR_LIST_STRING)
      for (int i = 0; i < src->list.n; i++)
        ((char **)dst->list.v)[i] = dup_str(((char **)src->list.v)[i]);
    break;
  }
  default: break;
  }
  return RT_OK;
}

/* ---- nodes -------------------------------------------------------------------------- */

rt_node *rt_node_new(const char *name, const char *op) {
  rt_node *n = xcalloc(1, sizeof *n);
  n->name = dup_str(name);
  n->op = dup_str(op);
  n->device = dup_str("");
  n->id = -1;
  return n;
}

void rt_node_free(rt_node *n) {
  if (!n) return;
  /* held by other graphs too: the last one frees it (a plain node goes from 0 to -1) */
  if (atomic_fetch_sub_explicit(&n->shared, 1, memory_order_acq_rel) > 0) return;
  if (n->base) {   /* everything else is base's */
    rt_node_free(n->base);
    free(n->edges);
    free(n);
    return;
  }
  for (int i = 0; i < n->n_inputs; i++) free(n->inputs[i]);
  free(n->inputs);
  free(n->edges);
  for (int i = 0; i < n->n_attrs; i++) {
    free(n->attrs[i].name);
    rt_attr_value_clear(&n->attrs[i].value);
  }
  free(n->attrs);
  free(n->out_shapes);   /* one block with out_types and out_refs (alloc_outputs) */
  free(n->name);
  free(n->op);
  free(n->device);
  free(n->assigned);
  free(n->reason);
  free(n);
}

void rt_node_add_input(rt_node *n, const char *input) {
  n->inputs = xrealloc(n->inputs, (size_t)(n->n_inputs + 1) * sizeof *n->inputs);
  n->inputs[n->n_inputs++] = dup_str(input);
}

void rt_node_add_control(rt_node *n, const char *node_name) {
  char buf[512];
  snprintf(buf, sizeof buf, "^%s", node_name);
  rt_node_add_input(n, buf);
}

void rt_node_set_device(rt_node *n, const char *device) {
  free(n->device);
  n->device = dup_str(device);
}

static rt_attr *attr_find(const rt_node *n, const char *name) {
  for (int i = 0; i < n->n_attrs; i++)
    if (n->attrs[i].name[0] == name[0] && !strcmp(n->attrs[i].name, name)) return &n->attrs[i];
  return NULL;
}

/* A node's attrs array has room for attrs_cap(n_attrs): it grows by doubling. */
static int attrs_cap(int k) {
  int c = 1;
  while (c < k) c *= 2;
  return c;
}

void rt_node_set_attr(rt_node *n, const char *name, rt_attr_value *v) {
  rt_attr *a = attr_find(n, name);
  if (a) {
    rt_attr_value_clear(&a->value);
  } else {
    if (!n->attrs || n->n_attrs == attrs_cap(n->n_attrs)) {
      n->attrs = xrealloc(n->attrs, (size_t)attrs_cap(n->n_attrs + 1) * sizeof *n->attrs);
    }
    a = &n->attrs[n->n_attrs++];
    a->name = dup_str(name);
  }
  a->value = *v;
  memset(v, 0, sizeof *v);
}

#define SETTER(fn, ctype, KIND, field)                          \
  void fn(rt_node *n, const char *name, ctype v) {              \
    rt_attr_value x = {.kind = KIND};                           \
    x.field = v;                                                \
    rt_node_set_attr(n, name, &x);                              \
  }
SETTER(rt_node_set_int, int64_t, RT_ATTR_INT, i)
SETTER(rt_node_set_float, double, RT_ATTR_FLOAT, f)
SETTER(rt_node_set_bool, bool, RT_ATTR_BOOL, b)
SETTER(rt_node_set_type, rt_dtype, RT_ATTR_TYPE, type)

void rt_node_set_string(rt_node *n, const char *name, const char *v) {
  rt_attr_value x = {.kind = RT_ATTR_STRING, .s = dup_str(v)};
  rt_node_set_attr(n, name, &x);
}

void rt_node_set_shape(rt_node *n, const char *name, const rt_shape *v) {
  rt_attr_value x = {.kind = RT_ATTR_SHAPE, .shape = *v};
  rt_node_set_attr(n, name, &x);
}

void rt_node_set_tensor(rt_node *n, const char *name, rt_tensor *v) {
  rt_attr_value x = {.kind = RT_ATTR_TENSOR, .tensor = rt_tensor_ref(v)};
  rt_node_set_attr(n, name, &x);
}

void rt_node_set_ints(rt_node *n, const char *name, int count, const int64_t *v) {
  rt_attr_value x = {.kind = RT_ATTR_LIST_INT};
  x.list.n = count;
  x.list.v = xcalloc((size_t)count, sizeof(int64_t));
  if (count) memcpy(x.list.v, v, (size_t)count * sizeof(int64_t));
  rt_node_set_attr(n, name, &x);
}

void rt_node_set_strings(rt_node *n, const char *name, int count, const char *const *v) {
  rt_attr_value x = {.kind = RT_ATTR_LIST_STRING};
  x.list.n = count;
  x.list.v = xcalloc((size_t)count, sizeof(char *));
  for (int i = 0; i < count; i++) ((char **)x.list.v)[i] = dup_str(v[i]);
  rt_node_set_attr(n, name, &x);
}

const rt_attr_value *rt_node_attr(const rt_node *n, const char *name) {
  rt_attr *a = attr_find(n, name);
  return a ? &a->value : NULL;
}

int64_t rt_node_int(const rt_node *n, const char *name, int64_t dflt) {
  const rt_attr_value *v = rt_node_attr(n, name);
  return v && v->kind == RT_ATTR_INT ? v->i : dflt;
}
double rt_node_float(const rt_node *n, const char *name, double dflt) {
  const rt_attr_value *v = rt_node_attr(n, name);
  return v && v->kind == RT_ATTR_FLOAT ? v->f : dflt;
}
bool rt_node_bool(const rt_node *n, const char *name, bool dflt) {
  const rt_attr_value *v = rt_node_attr(n, name);
  return v && v->kind == RT_ATTR_BOOL ? v->b : dflt;
}
const char *rt_node_string(const rt_node *n, const char *name, const char *dflt) {
  const rt_attr_value *v = rt_node_attr(n, name);
  return v && v->kind == RT_ATTR_STRING ? v->s : dflt;
}
rt_dtype rt_node_type(const rt_node *n, const char *name, rt_dtype dflt) {
  const rt_attr_value *v = rt_node_attr(n, name);
  return v && v->kind == RT_ATTR_TYPE ? v->type : dflt;
}

rt_node *rt_node_clone(const rt_node *n) {
  rt_node *c = xcalloc(1, sizeof *c);
  c->name = dup_str(n->name);
  c->op = dup_str(n->op);
  c->device = dup_str(n->device);
  c->id = -1;
  if (n->n_inputs) {
    c->inputs = xcalloc((size_t)n->n_inputs, sizeof *c->inputs);
    for (int i = 0; i < n->n_inputs; i++) c->inputs[i] = dup_str(n->inputs[i]);
    c->n_inputs = n->n_inputs;
  }
  if (n->n_attrs) {
    c->attrs = xcalloc((size_t)attrs_cap(n->n_attrs), sizeof *c->attrs);
    for (int i = 0; i < n->n_attrs; i++) {
      c->attrs[i].name = dup_str(n->attrs[i].name);
      rt_attr_value_copy(&c->attrs[i].value, &n->attrs[i].value);
    }
    c->n_attrs = n->n_attrs;
  }
  if (n->assigned) c->assigned = dup_str(n->assigned);
  if (n->reason) c->reason = dup_str(n->reason);
  return c;
}

bool rt_tensor_name_parse(const char *s, char *buf, size_t n, int *index) {
  bool control = s[0] == '^';
  if (control) s++;
  const char *colon = strrchr(s, ':');
  size_t len = colon ? (size_t)(colon - s) : strlen(s);
  if (len == 0 || len >= n) return false;
  memcpy(buf, s, len);
  buf[len] = '\0';
  if (control) {
    *index = -1;
    return colon == NULL;
  }
  if (!colon) {
    *index = 0;
    return true;
  }
  char *end;
  long v = strtol(colon + 1, &end, 10);
  if (end == colon + 1 || *end || v < 0 || v > 1 << 20) return false;
  *index = (int)v;
  return true;
}

/* ---- graphs ------------------------------------------------------------------------- */

static uint32_t hash_str(const char *s) { return str_hash(s, NULL); }

static void index_put(rt_graph_slot *index, int cap, uint32_t hash, int id) {
  size_t mask = (size_t)cap - 1;
  size_t i = hash & mask;
  while (index[i].id >= 0) i = (i + 1) & mask;
  index[i] = (rt_graph_slot){hash, id};
}

/* Rebuild the index with cap slots (a power of two) from the old one's stored hashes. */
static void index_resize(rt_graph *g, int cap) {
  rt_graph_slot *old = g->index;
  int old_cap = g->index_cap;
  g->index = xmalloc((size_t)cap * sizeof *g->index);
  for (int i = 0; i < cap; i++) g->index[i] = (rt_graph_slot){0, -1};
  g->index_cap = cap;
  for (int i = 0; i < old_cap; i++)
    if (old[i].id >= 0) index_put(g->index, cap, old[i].hash, old[i].id);
  free(old);
}

rt_graph *rt_graph_new(void) {
  rt_graph *g = xcalloc(1, sizeof *g);
  index_resize(g, 64);
  return g;
}

void rt_graph_reserve(rt_graph *g, int n) {
  if (n > g->cap) {
    g->cap = n;
    g->nodes = xrealloc(g->nodes, (size_t)g->cap * sizeof *g->nodes);
  }
  int cap = g->index_cap;
  while (2 * (size_t)n > (size_t)cap) cap *= 2;
  if (cap != g->index_cap) index_resize(g, cap);
}

void rt_graph_free(rt_graph *g) {
  if (!g) return;
  for (int i = 0; i < g->n_nodes; i++) rt_node_free(g->nodes[i]);
  free(g->nodes);
  free(g->index);
  free(g->fwd);
  free(g);
}

static rt_node *find_hashed(const rt_graph *g, const char *name, uint32_t hash) {
  size_t mask = (size_t)g->index_cap - 1;
  for (size_t i = hash & mask; g->index[i].id >= 0; i = (i + 1) & mask)
    if (g->index[i].hash == hash && !strcmp(g->nodes[g->index[i].id]->name, name))
      return g->nodes[g->index[i].id];
  return NULL;
}

rt_node *rt_graph_find(const rt_graph *g, const char *name) {
  return find_hashed(g, name, hash_str(name));
}

void rt_graph_unique_name(const rt_graph *g, const char *base, char *buf, size_t n) {
  snprintf(buf, n, "%s", base);
  for (int k = 1; rt_graph_find(g, buf); k++) snprintf(buf, n, "%s_%d", base, k);
}

int rt_graph_output(const rt_graph *g, const char *tensor, rt_node **node, int *index,
                    rt_status *st) {
  char name[256];
  if (!rt_tensor_name_parse(tensor, name, sizeof name, index) || *index < 0)
    return rt_error(st, RT_INVALID_ARGUMENT, "'%s' is not a valid tensor name", tensor);
  rt_node *n = rt_graph_find(g, name);
  if (!n)
    return rt_error(st, RT_NOT_FOUND, "The name '%s' refers to a Tensor which does not exist. "
                    "The operation, '%s', does not exist in the graph.", tensor, name);
  if (*index >= n->n_outputs)
    return rt_error(st, RT_NOT_FOUND, "The name '%s' refers to a Tensor which does not exist. "
                    "The operation, '%s', exists but only has %d outputs.", tensor, name,
                    n->n_outputs);
  *node = n;
  return RT_OK;
}

/* ---- validation --------------------------------------------------------------------- */

/* rt_op_find scans the registry with strcmp; a graph holds ops of a few kinds, so each
 * thread remembers recent ones by registry index (rt_op_at stays valid as it grows). */
const rt_op_sig *rt_op_find_cached(const char *op) {
  struct entry {
    uint32_t hash;
    int idx;   /* registry index + 1; 0: empty */
  };
  static _Thread_local struct entry cache[64];
  uint32_t h = hash_str(op);
  struct entry *c = &cache[h & 63];
  if (c->idx && c->hash == h) {
    const rt_op_sig *s = rt_op_at(c->idx - 1);
    if (s && !strcmp(s->def->name, op)) return s;
  }
  const rt_op_sig *s = rt_op_find(op);
  if (s) {
    c->hash = h;
    c->idx = (int)(s - rt_op_at(0)) + 1;
  }
  return s;
}

static bool name_char(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '_' || c == '.' || c == '-' || c == '/' || c == '>';
}

static bool valid_node_name(const char *s) {
  /* TF: [A-Za-z0-9.][A-Za-z0-9_.\-/>]* */
  if (!isalnum((unsigned char)s[0]) && s[0] != '.' && s[0] != '_') return false;
  for (const char *p = s; *p; p++)
    if (!name_char((unsigned char)*p)) return false;
  return true;
}

static const rt_attr_sig *sig_attr(const rt_op_sig *sig, const char *name) {
  for (int i = 0; i < sig->n_attrs; i++)
    if (!strcmp(sig->attrs[i].name, name)) return &sig->attrs[i];
  return NULL;
}

static void list_attrs(const rt_op_sig *sig, char *buf, size_t n) {
  size_t off = 0;
  buf[0] = '\0';
  for (int i = 0; i < sig->n_attrs && off < n; i++)
    off += (size_t)snprintf(buf + off, n - off, "%s%s", i ? ", " : "", sig->attrs[i].name);
  if (!sig->n_attrs) snprintf(buf, n, "none");
}

static int check_attrs(rt_node *n, const rt_op_sig *sig, rt_status *st) {
  for (int i = 0; i < n->n_attrs; i++) {
    const char *name = n->attrs[i].name;
    if (name[0] == '_') continue;   /* internal attrs such as _class (colocation) */
    const rt_attr_sig *as = sig_attr(sig, name);
    if (!as) {
      char names[256];
      list_attrs(sig, names, sizeof names);
      return rt_error(st, RT_INVALID_ARGUMENT, "node '%s': op %s has no attr '%s' (its attrs: %s)",
                      n->name, n->op, name, names);
    }
    rt_attr_kind got = n->attrs[i].value.kind;
    if (got == RT_ATTR_RAW && as->kind == RT_ATTR_TENSOR) {   /* its op's kernel would read it */
      const unsigned char *raw = n->attrs[i].value.list.v;   /* a TensorProto: field 1 (dtype) first */
      int dt = n->attrs[i].value.list.n >= 2 && raw[0] == 0x08 && raw[1] < 0x80 ? raw[1] : 0;
      return rt_error(st, RT_UNIMPLEMENTED, "node '%s': attr '%s' of op %s is a tensor of DataType %d, which tfsh does not have",
                      n->name, name, n->op, dt);
    }
    if (got != as->kind)
      return rt_error(st, RT_INVALID_ARGUMENT,
                      "node '%s': attr '%s' of op %s must be %s, not %s", n->name, name, n->op,
                      rt_attr_kind_name(as->kind), rt_attr_kind_name(got));
    if (as->has_min && got == RT_ATTR_INT && n->attrs[i].value.i < as->min)
      return rt_error(st, RT_INVALID_ARGUMENT,
                      "node '%s': attr '%s' of op %s is %lld, must be at least %lld", n->name,
                      name, n->op, (long long)n->attrs[i].value.i, (long long)as->min);
  }
  return RT_OK;
}

static int check_type_allowed(const rt_node *n, const rt_attr_sig *as, rt_dtype t,
                              rt_status *st) {
  if (!as->n_allowed) return RT_OK;
  for (int i = 0; i < as->n_allowed; i++)
    if (as->allowed[i] == t) return RT_OK;
  char allowed[128];
  size_t off = 0;
  for (int i = 0; i < as->n_allowed; i++)
    off += (size_t)snprintf(allowed + off, sizeof allowed - off, "%s%s", i ? ", " : "",
                            rt_dtype_name(as->allowed[i]));
  return rt_error(st, RT_TYPE_ERROR,
                  "Value passed to parameter '%s' of node '%s' (op %s) has DataType %s not in "
                  "list of allowed values: %s",
                  as->name, n->name, n->op, rt_dtype_name(t), allowed);
}

/* Bind type attrs from the inputs, check fixed dtypes and refs. `counts[i]` is the number of
 * graph inputs taken by signature argument i. */
static int bind_inputs(rt_graph *g, rt_node *n, const rt_op_sig *sig, int *counts,
                       rt_status *st) {
  int k = 0;
  for (int a = 0; a < sig->n_in; a++) {
    const rt_arg_sig *arg = &sig->in[a];
    for (int j = 0; j < counts[a]; j++, k++) {
      const rt_node *src = g->nodes[n->edges[k].node];
      int idx = n->edges[k].index;
      rt_dtype t = src->out_types[idx];
      if (arg->ref && !src->out_refs[idx])
        return rt_error(st, RT_TYPE_ERROR,
                        "Input '%s' of '%s' Op requires l-value input (node '%s', input '%s')",
                        arg->name, n->op, n->name, n->inputs[k]);
      if (arg->fixed != RT_INVALID) {
        if (t != arg->fixed)
          return rt_error(st, RT_TYPE_ERROR,
                          "Input '%s' of '%s' Op has type %s that does not match expected "
                          "type of %s (node '%s')",
                          arg->name, n->op, rt_dtype_name(t), rt_dtype_name(arg->fixed), n->name);
        continue;
      }
      const rt_attr_value *have = rt_node_attr(n, arg->type_attr);
      if (!have) {
        const rt_attr_sig *as = sig_attr(sig, arg->type_attr);
        if (as && as->kind == RT_ATTR_TYPE) {
          int rc = check_type_allowed(n, as, t, st);
          if (rc) return rc;
        }
        rt_node_set_type(n, arg->type_attr, t);
        continue;
      }
      if (have->kind == RT_ATTR_TYPE && have->type != t) {
        /* Name the first argument that bound this attr, as TF1 does. */
        const char *first = arg->name;
        for (int b = 0; b < a; b++)
          if (!strcmp(sig->in[b].type_attr, arg->type_attr)) {
            first = sig->in[b].name;
            break;
          }
        return rt_error(st, RT_TYPE_ERROR,
                        "Input '%s' of '%s' Op has type %s that does not match type %s of "
                        "argument '%s'.",
                        arg->name, n->op, rt_dtype_name(t), rt_dtype_name(have->type), first);
      }
    }
  }
  return RT_OK;
}

/* How many graph inputs each signature argument takes. */
static int count_inputs(rt_node *n, const rt_op_sig *sig, int *counts, rt_status *st) {
  int lists = 0, fixed = 0;
  for (int a = 0; a < sig->n_in; a++) {
    if (sig->in[a].number_attr[0])
      lists++;
    else
      counts[a] = 1, fixed++;
  }
  int extra = n->n_data_inputs - fixed;
  for (int a = 0; a < sig->n_in; a++) {
    if (!sig->in[a].number_attr[0]) continue;
    const rt_attr_value *v = rt_node_attr(n, sig->in[a].number_attr);
    if (v && v->kind == RT_ATTR_INT) {
      counts[a] = (int)v->i;
    } else if (lists == 1 && extra >= 0) {
      counts[a] = extra;
      rt_node_set_int(n, sig->in[a].number_attr, extra);
    } else {
      return rt_error(st, RT_INVALID_ARGUMENT, "node '%s': op %s needs attr '%s'", n->name,
                      n->op, sig->in[a].number_attr);
    }
  }
  int want = 0;
  for (int a = 0; a < sig->n_in; a++) want += counts[a];
  if (want != n->n_data_inputs)
    return rt_error(st, RT_INVALID_ARGUMENT, "node '%s': op %s takes %d input%s, got %d", n->name,
                    n->op, want, want == 1 ? "" : "s", n->n_data_inputs);
  return RT_OK;
}

static int resolve_edges(rt_graph *g, rt_node *n, rt_status *st) {
  n->edges = xcalloc((size_t)n->n_inputs, sizeof *n->edges);
  n->n_data_inputs = 0;
  bool seen_control = false;
  for (int i = 0; i < n->n_inputs; i++) {
    char name[256];
    int idx;
    if (!rt_tensor_name_parse(n->inputs[i], name, sizeof name, &idx))
      return rt_error(st, RT_INVALID_ARGUMENT, "node '%s': malformed input '%s'", n->name,
                      n->inputs[i]);
    if (idx >= 0 && seen_control)
      return rt_error(st, RT_INVALID_ARGUMENT,
                      "node '%s': data input '%s' after a control input", n->name, n->inputs[i]);
    seen_control |= idx < 0;
    rt_node *src = rt_graph_find(g, name);
    if (!src && i > 0 && idx >= 0 && n->edges[0].index >= 0 &&
        (!strcmp(n->op, "Merge") || !strcmp(n->op, "RefMerge"))) {
      /* a loop's back edge: its NextIteration comes later (see rt_graph.fwd) */
      n->edges[i] = n->edges[0];
      n->n_data_inputs++;
      g->fwd = xrealloc(g->fwd, (size_t)(g->n_fwd + 1) * sizeof *g->fwd);
      g->fwd[g->n_fwd++] = (struct rt_graph_fwd){-1, i};   /* node id set once added */
      continue;
    }
    if (!src)
      return rt_error(st, RT_INVALID_ARGUMENT, "node '%s': unknown input node '%s'", n->name,
                      n->inputs[i]);
    if (idx >= src->n_outputs)
      return rt_error(st, RT_INVALID_ARGUMENT,
                      "node '%s': input '%s' names output %d of '%s', which has %d output%s",
                      n->name, n->inputs[i], idx, name, src->n_outputs,
                      src->n_outputs == 1 ? "" : "s");
    n->edges[i] = (rt_edge){src->id, idx};
    if (idx >= 0) n->n_data_inputs++;
  }
  return RT_OK;
}

static int fill_defaults(rt_node *n, const rt_op_sig *sig, rt_status *st) {
  for (int i = 0; i < sig->n_attrs; i++) {
    const rt_attr_sig *as = &sig->attrs[i];
    if (rt_node_attr(n, as->name)) {
      if (as->kind == RT_ATTR_TYPE) {
        int rc = check_type_allowed(n, as, rt_node_attr(n, as->name)->type, st);
        if (rc) return rc;
      }
      continue;
    }
    if (!as->has_default)
      return rt_error(st, RT_INVALID_ARGUMENT, "node '%s': op %s needs attr '%s' (%s)", n->name,
                      n->op, as->name, rt_attr_kind_name(as->kind));
    rt_attr_value v;
    rt_attr_value_copy(&v, &as->dflt);
    rt_node_set_attr(n, as->name, &v);
  }
  return RT_OK;
}

/* out_shapes, out_types and out_refs, zeroed, in one block that out_shapes owns. */
static void alloc_outputs(rt_node *n, int total) {
  size_t k = (size_t)total;
  char *p = xcalloc(1, k * (sizeof(rt_shape) + sizeof(rt_dtype) + sizeof(bool)));
  n->n_outputs = total;
  n->out_shapes = (rt_shape *)p;
  n->out_types = (rt_dtype *)(p + k * sizeof(rt_shape));
  n->out_refs = (bool *)(p + k * (sizeof(rt_shape) + sizeof(rt_dtype)));
}

static int infer_outputs(rt_graph *g, rt_node *n, const rt_op_sig *sig, rt_status *st) {
  int total = 0, counts[16];
  for (int a = 0; a < sig->n_out; a++) {
    counts[a] = 1;
    if (sig->out[a].number_attr[0]) counts[a] = (int)rt_node_int(n, sig->out[a].number_attr, 0);
    if (counts[a] < 0 || counts[a] > 4096)
      return rt_error(st, RT_INVALID_ARGUMENT, "node '%s': bad output count %d", n->name,
                      counts[a]);
    total += counts[a];
  }
  alloc_outputs(n, total);
  for (int a = 0, k = 0; a < sig->n_out; a++)
    for (int j = 0; j < counts[a]; j++, k++) {
      const rt_arg_sig *arg = &sig->out[a];
      n->out_types[k] = arg->fixed != RT_INVALID ? arg->fixed : rt_node_type(n, arg->type_attr,
                                                                             RT_INVALID);
      n->out_shapes[k] = rt_shape_unknown();
      n->out_refs[k] = arg->ref;
    }
  if (!sig->def->shape) return RT_OK;

  int nd = n->n_data_inputs;
  /* A few inputs (nearly every node) live on the stack. */
  rt_dtype types_buf[8];
  rt_shape shapes_buf[8];
  const rt_tensor *values_buf[8] = {0};
  bool small = nd <= 8;
  rt_dtype *in_types = small ? types_buf : xcalloc((size_t)nd, sizeof *in_types);
  rt_shape *in_shapes = small ? shapes_buf : xcalloc((size_t)nd, sizeof *in_shapes);
  const rt_tensor **in_values = small ? values_buf : xcalloc((size_t)nd, sizeof *in_values);
  for (int i = 0; i < nd; i++) {
    const rt_node *src = g->nodes[n->edges[i].node];
    in_types[i] = src->out_types[n->edges[i].index];
    in_shapes[i] = src->out_shapes[n->edges[i].index];
    if (src->op[0] == 'C' && !strcmp(src->op, "Const")) {
      const rt_attr_value *v = rt_node_attr(src, "value");
      if (v && v->kind == RT_ATTR_TENSOR) in_values[i] = v->tensor;
    }
  }
  rt_shape_ctx ctx = {n, nd, in_types, in_shapes, in_values, total, n->out_types,
                      n->out_shapes, st, g};
  int rc = sig->def->shape(&ctx);
  if (!small) {
    free(in_types);
    free(in_shapes);
    free(in_values);
  }
  return rc;
}

static void append(rt_graph *g, rt_node *n, uint32_t hash) {
  if (g->n_nodes == g->cap) {
    g->cap = g->cap ? 2 * g->cap : 64;
    g->nodes = xrealloc(g->nodes, (size_t)g->cap * sizeof *g->nodes);
  }
  n->id = g->n_nodes;
  g->nodes[g->n_nodes++] = n;
  if (2 * g->n_nodes > g->index_cap) index_resize(g, 2 * g->index_cap);
  index_put(g->index, g->index_cap, hash, n->id);
}

/* The back edges waiting before n came (the first `before` of g->fwd) that name n: checked
 * (apply false, before n is added), or pointed at n (apply true, once it has its id). */
static int resolve_fwd(rt_graph *g, int before, const rt_node *n, bool apply, rt_status *st) {
  for (int i = 0; i < before;) {
    rt_node *m = g->nodes[g->fwd[i].node];
    int k = g->fwd[i].input, idx;
    char name[256];
    if (!rt_tensor_name_parse(m->inputs[k], name, sizeof name, &idx) || strcmp(name, n->name)) {
      i++;
      continue;
    }
    if (!apply) {
      if (idx >= n->n_outputs || n->out_types[idx] != m->out_types[0])
        return rt_error(st, RT_INVALID_ARGUMENT, "node '%s': input '%s' is not a %s output",
                        m->name, m->inputs[k], rt_dtype_name(m->out_types[0]));
      i++;
      continue;
    }
    m->edges[k] = (rt_edge){n->id, idx};
    g->fwd[i] = g->fwd[--before];       /* keep the entries after `before` (n's own) in place */
    g->fwd[before] = g->fwd[--g->n_fwd];
  }
  return RT_OK;
}

int rt_graph_check_complete(const rt_graph *g, rt_status *st) {
  if (!g->n_fwd) return RT_OK;
  const rt_node *m = g->nodes[g->fwd[0].node];
  return rt_error(st, RT_INVALID_ARGUMENT, "node '%s': unknown input node '%s'", m->name,
                  m->inputs[g->fwd[0].input]);
}

int rt_graph_update_input(rt_graph *g, int node, int k, const char *tensor, rt_status *st) {
  rt_node *m = g->nodes[node], *src;
  int idx;
  if (k < 0 || k >= m->n_data_inputs)
    return rt_error(st, RT_INVALID_ARGUMENT, "node '%s' has no input %d", m->name, k);
  if (rt_graph_output(g, tensor, &src, &idx, st)) return st->code;
  const rt_node *old = g->nodes[m->edges[k].node];
  if (src->out_types[idx] != old->out_types[m->edges[k].index])
    return rt_error(st, RT_INVALID_ARGUMENT, "node '%s': input %d is a %s, '%s' a %s", m->name,
                    k, rt_dtype_name(old->out_types[m->edges[k].index]), tensor,
                    rt_dtype_name(src->out_types[idx]));
  free(m->inputs[k]);
  m->inputs[k] = xstrdup(tensor);
  m->edges[k] = (rt_edge){src->id, idx};
  return RT_OK;
}

int rt_graph_add_control(rt_graph *g, rt_node *n, const char *dep, rt_status *st) {
  rt_node *src = rt_graph_find(g, dep);
  if (!src) return rt_error(st, RT_INVALID_ARGUMENT, "node '%s': unknown control input '%s'", n->name, dep);
  for (int i = 0; i < n->n_inputs; i++)
    if (n->edges[i].node == src->id) return RT_OK;
  rt_node_add_control(n, dep);
  n->edges = xrealloc(n->edges, (size_t)n->n_inputs * sizeof *n->edges);
  n->edges[n->n_inputs - 1] = (rt_edge){src->id, -1};
  return RT_OK;
}

int rt_graph_add(rt_graph *g, rt_node *n, rt_status *st) {
  int rc = RT_OK;
  const rt_op_sig *sig = rt_op_find_cached(n->op);
  int counts[16] = {0};
  uint32_t hash = hash_str(n->name);
  if (!valid_node_name(n->name))
    rc = rt_error(st, RT_INVALID_ARGUMENT, "'%s' is not a valid node name", n->name);
  else if (find_hashed(g, n->name, hash))
    rc = rt_error(st, RT_INVALID_ARGUMENT, "Duplicate node name in graph: '%s'", n->name);
  else if (!sig)
    rc = rt_error(st, RT_NOT_FOUND, "node '%s': Op type not registered '%s'", n->name, n->op);
  int fwd_before = g->n_fwd;
  if (!rc) rc = resolve_edges(g, n, st);
  if (!rc) rc = check_attrs(n, sig, st);
  if (!rc) rc = count_inputs(n, sig, counts, st);
  if (!rc) rc = bind_inputs(g, n, sig, counts, st);
  if (!rc) rc = fill_defaults(n, sig, st);
  if (!rc) {
    n->def = sig->def;
    rc = infer_outputs(g, n, sig, st);
  }
  if (!rc && fwd_before) rc = resolve_fwd(g, fwd_before, n, false, st);
  if (rc) {
    g->n_fwd = fwd_before;
    rt_node_free(n);
    return rc;
  }
  append(g, n, hash);
  if (fwd_before) resolve_fwd(g, fwd_before, n, true, st);
  /* n's own back edges (a Merge's) wait for their NextIteration */
  for (int i = 0; i < g->n_fwd; i++)
    if (g->fwd[i].node < 0) g->fwd[i].node = n->id;
  return RT_OK;
}

int rt_graph_add_shared(rt_graph *g, rt_node *src, rt_status *st) {
  uint32_t hash = hash_str(src->name);
  if (g->n_nodes != src->id)
    return rt_error(st, RT_INTERNAL, "node '%s' shared at id %d, not %d", src->name, g->n_nodes,
                    src->id);
  if (find_hashed(g, src->name, hash))
    return rt_error(st, RT_INVALID_ARGUMENT, "Duplicate node name in graph: '%s'", src->name);
  atomic_fetch_add_explicit(&src->shared, 1, memory_order_relaxed);
  append(g, src, hash);   /* keeps src->id */
  return RT_OK;
}

int rt_graph_add_unchecked(rt_graph *g, rt_node *n, rt_status *st) {
  uint32_t hash = hash_str(n->name);
  if (find_hashed(g, n->name, hash)) {
    rt_error(st, RT_INVALID_ARGUMENT, "Duplicate node name in graph: '%s'", n->name);
    rt_node_free(n);
    return st->code;
  }
  append(g, n, hash);
  return RT_OK;
}

/* src's edges, input k on node id_map[src->edges[k].node] */
static rt_edge *mapped_edges(const rt_node *src, const int *id_map) {
  rt_edge *e = xcalloc((size_t)src->n_inputs + 1, sizeof *e);
  for (int i = 0; i < src->n_inputs; i++) e[i] = (rt_edge){id_map[src->edges[i].node], src->edges[i].index};
  return e;
}

int rt_graph_add_borrowed(rt_graph *g, rt_node *src, const int *id_map, rt_status *st) {
  uint32_t hash = hash_str(src->name);
  if (find_hashed(g, src->name, hash))
    return rt_error(st, RT_INVALID_ARGUMENT, "Duplicate node name in graph: '%s'", src->name);
  rt_node *n = xmalloc(sizeof *n);
  memcpy(n, src, sizeof *n);
  atomic_init(&n->shared, 0);
  n->base = src->base ? src->base : src;
  atomic_fetch_add_explicit(&n->base->shared, 1, memory_order_relaxed);
  n->edges = mapped_edges(src, id_map);
  append(g, n, hash);
  return RT_OK;
}

int rt_graph_add_copy(rt_graph *g, const rt_node *src, const int *id_map, rt_status *st) {
  uint32_t hash = hash_str(src->name);
  if (find_hashed(g, src->name, hash))
    return rt_error(st, RT_INVALID_ARGUMENT, "Duplicate node name in graph: '%s'", src->name);
  rt_node *n = rt_node_clone(src);
  n->n_data_inputs = src->n_data_inputs;
  n->edges = mapped_edges(src, id_map);
  n->def = src->def;
  alloc_outputs(n, src->n_outputs);
  memcpy(n->out_shapes, src->out_shapes, (size_t)src->n_outputs * sizeof *n->out_shapes);
  memcpy(n->out_types, src->out_types, (size_t)src->n_outputs * sizeof *n->out_types);
  memcpy(n->out_refs, src->out_refs, (size_t)src->n_outputs * sizeof *n->out_refs);
  append(g, n, hash);
  return RT_OK;
}
