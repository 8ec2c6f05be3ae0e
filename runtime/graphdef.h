/* GraphDefs in TensorFlow's binary format (runtime/proto/graph.proto through protobuf-c):
 * a graph's nodes with their inputs, devices and attrs out, and a TF-written GraphDef's
 * nodes in as unvalidated rt_nodes (the caller adds them to a graph, which checks each one
 * against the op registry). */
#ifndef TFSH_GRAPHDEF_H
#define TFSH_GRAPHDEF_H

#include <stdbool.h>
#include <stddef.h>

#include "base/status.h"
#include "runtime/graph.h"

/* TF 1.15's GraphDef producer version, which tfsh's GraphDefs claim. */
#define RT_GRAPHDEF_PRODUCER 134

/* Which device a node's NodeDef names. */
typedef enum rt_graphdef_devices { RT_GD_REQUESTED, RT_GD_ASSIGNED, RT_GD_CLEARED } rt_graphdef_devices;
/* Encode g (assigned devices where placed, requested ones, or none). *out is malloc'd. */
int rt_graphdef_encode(const rt_graph *g, rt_graphdef_devices devices, unsigned char **out, size_t *n, rt_status *st);
/* The same, with add_shapes: each node with outputs gets attr _output_shapes (the static
 * shape of each output, unknown dims -1), as TF's as_graph_def(add_shapes=True) writes it. */
int rt_graphdef_encode_shapes(const rt_graph *g, rt_graphdef_devices devices, bool add_shapes, unsigned char **out,
                              size_t *n, rt_status *st);

/* export_meta_graph(export_scope=SCOPE): the nodes of the binary GraphDef p whose names start
 * with SCOPE, "SCOPE/" taken off their names, inputs and _class colocations (TF's rules); an
 * input from outside is written "$unbound_inputs_NAME" (TF's mark) and listed in *unbound
 * (malloc'd). */
int rt_graphdef_scope(const unsigned char *p, size_t n, const char *scope, unsigned char **out, size_t *out_n,
                      char ***unbound, int *n_unbound, rt_status *st);

/* A node of g written as TF's ops where it is one of tfsh's own gradient helpers
 * (_SumToShapeOf, _ReduceGrad), which TF has no kernel for: *out gets new unvalidated nodes,
 * the last under n's name (the caller frees them and the array); 0 when n is written as it
 * is. */
int rt_graphdef_tf_ops(const rt_graph *g, const rt_node *n, rt_node ***out);
/* The first node of g that has no TensorFlow form (tfsh's own ops the encoder writes as they
 * are: a file only tfsh imports), with why; NULL when TF can load every node. */
const rt_node *rt_graphdef_tf_unexportable(const rt_graph *g, const char **why);

typedef struct rt_graphdef {
  int n;
  rt_node **nodes;   /* unvalidated: name, op, inputs, device, attrs */
  int producer;
} rt_graphdef;

/* Decode a binary GraphDef. `what` names the file in errors. Attrs tfsh cannot hold (a
 * function, a tensor of a dtype tfsh lacks) fail naming the node and the attr. */
int rt_graphdef_decode(const unsigned char *p, size_t n, const char *what, rt_graphdef *gd, rt_status *st);
void rt_graphdef_free(rt_graphdef *gd);

/* What adding a decoded GraphDef to a graph needs (tf.import_graph_def, tfsh inspect):
 * the node indexes in an order where every input comes first (a GraphDef need not be
 * sorted; malloc'd; NULL and st on a cycle); the tfsh op for a node's op (TF's newer names
 * for the same op, e.g. AddV2); and a node's attrs fitted to the op's signature (TF's
 * attrs the op lacks dropped, empty lists retyped, N filled in). */
int *rt_graphdef_order(const rt_graphdef *gd, rt_status *st);
const char *rt_graphdef_op(const char *op);
struct rt_op_sig;
void rt_graphdef_fit_attrs(rt_node *x, const struct rt_op_sig *sig);

/* One tensor as TF's TensorProto (tensor_content, or string_val), and back. */
int rt_tensor_proto_encode(const rt_tensor *t, unsigned char **out, size_t *n, rt_status *st);
int rt_tensor_proto_decode(const unsigned char *p, size_t n, const char *where, rt_tensor **out,
                           rt_status *st);

/* One gRPC message carries 2^31 - 1 bytes at most (TF's servers and clients allow no more).
 * RT_OK when n tensors, and a message of msg_bytes (0: not yet known), fit; else
 * RESOURCE_EXHAUSTED naming what ("RunStep's fetches") and what to do (advice), before the
 * message is made and sent. */
enum { RT_GRPC_MAX_MESSAGE = 0x7fffffff };
int rt_grpc_message_fits(const char *what, rt_tensor *const *t, int n, size_t msg_bytes, const char *advice,
                         rt_status *st);
/* The same for tensors of `bytes` in all, known before they are made: a client refuses a
 * 2 GiB feed before copying it. */
int rt_grpc_tensors_fit(const char *what, size_t bytes, const char *advice, rt_status *st);
/* The fetches of g named whose static shapes and types already make more than one gRPC
 * message: RESOURCE_EXHAUSTED before the step runs (tensors of unknown size count 0). */
int rt_grpc_fetches_fit(const rt_graph *g, const char *const *names, int n, rt_status *st);
#define RT_GRPC_FEED_ADVICE "feed less at a time (over several steps)"
#define RT_GRPC_FETCH_ADVICE "fetch less at a time (a slice, or over several steps)"

#endif
