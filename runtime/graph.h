/* Graphs: nodes with data and control inputs, attrs, and requested / assigned devices.
 * A graph is plain data (GraphDef-like) so it can travel over the wire: inputs are names
 * ("node", "node:1", "^node" for a control input). rt_graph_add validates a node against
 * the op registry (op exists, inputs exist and have the right types, attrs known and
 * well-typed) and infers its output dtypes and shapes, so bad graphs fail where they are
 * built, naming the node. */
#ifndef TFSH_GRAPH_H
#define TFSH_GRAPH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/status.h"
#include "runtime/tensor.h"

typedef enum rt_attr_kind {
  RT_ATTR_NONE = 0,
  RT_ATTR_INT,
  RT_ATTR_FLOAT,
  RT_ATTR_BOOL,
  RT_ATTR_STRING,
  RT_ATTR_TYPE,
  RT_ATTR_SHAPE,
  RT_ATTR_TENSOR,
  RT_ATTR_LIST_INT,
  RT_ATTR_LIST_FLOAT,
  RT_ATTR_LIST_STRING,
  RT_ATTR_LIST_TYPE,
  RT_ATTR_LIST_SHAPE,
  /* A tensor attr of a dtype tfsh lacks (half, int16, ...), read from a GraphDef: its
   * TensorProto's bytes in list.v (list.n of them), written back as they came; a tensor attr
   * for the op's signature, which no kernel can read. */
  RT_ATTR_RAW,
} rt_attr_kind;

typedef struct rt_attr_value {
  rt_attr_kind kind;
  union {
    int64_t i;
    double f;
    bool b;
    char *s;            /* RT_ATTR_STRING */
    rt_dtype type;
    rt_shape shape;
    rt_tensor *tensor;  /* owned reference */
    struct {
      int n;
      void *v;          /* int64_t[], double[], char *[], rt_dtype[], rt_shape[] */
    } list;
  };
} rt_attr_value;

typedef struct rt_attr {
  char *name;
  rt_attr_value value;
} rt_attr;

/* A node's input resolved against the graph. */
typedef struct rt_edge {
  int node;    /* index in graph->nodes */
  int index;   /* output index; -1 for a control input */
} rt_edge;

typedef struct rt_node {
  char *name;
  char *op;
  int n_inputs;          /* data inputs first, then control inputs */
  int n_data_inputs;
  char **inputs;         /* "x", "x:1", "^x" */
  rt_edge *edges;        /* resolved inputs, same order */
  int n_attrs;
  rt_attr *attrs;
  char *device;          /* requested device, "" if none (may be partial) */
  char *assigned;        /* full device name after placement, NULL before */
  char *reason;          /* why the placer chose `assigned` (for the views) */
  int n_outputs;
  rt_dtype *out_types;
  rt_shape *out_shapes;
  bool *out_refs;        /* output is a reference (variables) */
  const struct rt_op_def *def;
  int id;                /* index in the graph */
  atomic_int shared;     /* other graphs holding this very node (rt_graph_add_shared) */
  struct rt_node *base;  /* a borrowed copy (rt_graph_add_borrowed): all but id and edges are
                          * base's, which it holds; NULL for a node of its own */
} rt_node;

/* One slot of a graph's name index: the name's hash (so probing and growing never touch
 * the nodes) and the node's id, -1 when the slot is empty. */
typedef struct rt_graph_slot {
  uint32_t hash;
  int id;
} rt_graph_slot;

typedef struct rt_graph {
  int n_nodes, cap;
  rt_node **nodes;
  /* open-addressing name index (linear probing, at most half full) */
  rt_graph_slot *index;
  int index_cap;
  /* Loops: a Merge's back edge names a NextIteration added after it. Until that node comes,
   * the edge points at the Merge's first input and waits here (node id, input index). */
  int n_fwd;
  struct rt_graph_fwd { int node, input; } *fwd;
} rt_graph;

/* attrs */
void rt_attr_value_clear(rt_attr_value *v);
int rt_attr_value_copy(rt_attr_value *dst, const rt_attr_value *src);
const char *rt_attr_kind_name(rt_attr_kind k);   /* "int", "list(int)", ... */

/* nodes: build one, then hand it to rt_graph_add */
rt_node *rt_node_new(const char *name, const char *op);
void rt_node_free(rt_node *n);
void rt_node_add_input(rt_node *n, const char *input);          /* "x", "x:1" */
void rt_node_add_control(rt_node *n, const char *node_name);     /* adds "^name" */
void rt_node_set_device(rt_node *n, const char *device);
/* Set (replace) an attr; the value is moved into the node (v is zeroed). */
void rt_node_set_attr(rt_node *n, const char *name, rt_attr_value *v);
void rt_node_set_int(rt_node *n, const char *name, int64_t v);
void rt_node_set_float(rt_node *n, const char *name, double v);
void rt_node_set_bool(rt_node *n, const char *name, bool v);
void rt_node_set_string(rt_node *n, const char *name, const char *v);
void rt_node_set_type(rt_node *n, const char *name, rt_dtype v);
void rt_node_set_shape(rt_node *n, const char *name, const rt_shape *v);
void rt_node_set_tensor(rt_node *n, const char *name, rt_tensor *v);  /* takes a new ref */
void rt_node_set_ints(rt_node *n, const char *name, int count, const int64_t *v);
void rt_node_set_strings(rt_node *n, const char *name, int count, const char *const *v);
const rt_attr_value *rt_node_attr(const rt_node *n, const char *name);
/* Typed getters with a default when the attr is absent. */
int64_t rt_node_int(const rt_node *n, const char *name, int64_t dflt);
double rt_node_float(const rt_node *n, const char *name, double dflt);
bool rt_node_bool(const rt_node *n, const char *name, bool dflt);
const char *rt_node_string(const rt_node *n, const char *name, const char *dflt);
rt_dtype rt_node_type(const rt_node *n, const char *name, rt_dtype dflt);
rt_node *rt_node_clone(const rt_node *n);   /* unvalidated copy (no edges/def/outputs) */

/* Parse "x:1" into node name and output index ("^x" gives index -1). Writes the node
 * name into buf. Returns false on a malformed name. */
bool rt_tensor_name_parse(const char *s, char *buf, size_t n, int *index);

/* graphs */
rt_graph *rt_graph_new(void);
void rt_graph_free(rt_graph *g);
/* Validate n against the registry and the graph, infer outputs, append it. On success the
 * graph owns n; on failure n is freed and st names the node and the problem. */
int rt_graph_add(rt_graph *g, rt_node *n, rt_status *st);
/* Add a copy of src, a node rt_graph_add accepted into another graph, to g, where input k of
 * src is node id_map[src->edges[k].node] of g, a copy made the same way (so that its
 * inputs, types and shapes are src's). Skips validation and shape inference, whose answer
 * is src's; fails only on a duplicate name. */
int rt_graph_add_copy(rt_graph *g, const rt_node *src, const int *id_map, rt_status *st);
/* Add src itself, a node of another graph, to g, which then holds it too (rt_node_free
 * frees it with the last graph). Only where it means the same in both: g has exactly
 * src->id nodes and each input of src is, in g, the node at the same id with the same
 * outputs (so src->id and src->edges hold in g). A shared node must not change. */
int rt_graph_add_shared(rt_graph *g, rt_node *src, rt_status *st);
/* rt_graph_add_copy's node without copying: only its id and edges are its own, the rest
 * (name, op, inputs, attrs, devices, outputs) is src's, held until g frees it. Only for a
 * graph read, never changed, while src stays as it is (a fragment packed at once). */
int rt_graph_add_borrowed(rt_graph *g, rt_node *src, const int *id_map, rt_status *st);
/* Append n as it is, unvalidated (no signature, no edges, no outputs): a graph only shown,
 * never run (a TensorFlow master's partition graphs, with TF's own ops). g owns n; fails
 * (n freed) only on a duplicate name. */
int rt_graph_add_unchecked(rt_graph *g, rt_node *n, rt_status *st);
rt_node *rt_graph_find(const rt_graph *g, const char *name);
/* A control input from node dep added to node n, already in g (ops built under
 * tf.control_dependencies by a graph pass, such as gradients). No-op if n has it. */
int rt_graph_add_control(rt_graph *g, rt_node *n, const char *dep, rt_status *st);
/* rt_op_find, remembering recent answers per thread. */
const struct rt_op_sig *rt_op_find_cached(const char *op);
/* Make room for n nodes in all (a hint: adding more still works). */
void rt_graph_reserve(rt_graph *g, int n);
/* Point data input k of node `node` at `tensor` (TF's _update_input: a loop's Merge gets
 * its NextIteration once the body is built). The dtype must not change. */
int rt_graph_update_input(rt_graph *g, int node, int k, const char *tensor, rt_status *st);
/* RT_OK when no Merge still waits for a back edge's node, else an error naming it. */
int rt_graph_check_complete(const rt_graph *g, rt_status *st);
/* A fresh name from base: "MatMul", "MatMul_1", ... as TF1 names nodes. */
void rt_graph_unique_name(const rt_graph *g, const char *base, char *buf, size_t n);
/* Resolve "x:1" to a node and output index, checking the index. */
int rt_graph_output(const rt_graph *g, const char *tensor, rt_node **node, int *index,
                    rt_status *st);

#endif
