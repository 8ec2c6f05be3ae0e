/* The runtime's values on the wire: graphs (nodes with attrs), tensors. Encoding is
 * msgpack inside a net message's header; large tensor payloads travel as separate raw
 * frames (zero-copy both ways). Decoding validates everything: kinds, counts, dtypes,
 * shapes against payload sizes; a bad value is an RT_INVALID_ARGUMENT naming the field.
 * net/PROTOCOL.md specifies the layout. */
#ifndef TFSH_CODEC_H
#define TFSH_CODEC_H

#include <msgpack.h>

#include "net/msg.h"
#include "runtime/graph.h"
#include "runtime/tensor.h"

/* Nodes: {"name", "op", "input": [..], "device", "attr": {name: [kind, value]}} plus
 * "assigned" when placed. */
void rt_pack_node(net_msg *m, msgpack_packer *pk, const rt_node *n);
/* Nodes [from, g->n_nodes) as an array. With a message m, tensor attrs over 4 KiB (big
 * constants) travel as payload frames of m instead of inside the header. */
void rt_pack_nodes(net_msg *m, msgpack_packer *pk, const rt_graph *g, int from);
/* Decode an array of nodes and add each to g (rt_graph_add validates them). `what` names
 * the field in errors; m (may be NULL) holds the frames of big tensor attrs. */
int rt_unpack_nodes(const net_in *m, const msgpack_object *o, const char *what, rt_graph *g,
                    rt_status *st);

/* A tensor inline (attrs, small values): {"dtype", "shape", "data": bin | [bin...]}. */
void rt_pack_tensor_inline(msgpack_packer *pk, const rt_tensor *t);
int rt_unpack_tensor_inline(const msgpack_object *o, const char *what, rt_tensor **out,
                            rt_status *st);

/* A tensor in a message: its description in the header, its bytes as the next payload
 * frame (zero-copy: the frame holds a reference to the tensor's buffer). Strings go
 * inline. {"dtype", "shape", "frame": i} */
void rt_pack_tensor_msg(net_msg *m, msgpack_packer *pk, const rt_tensor *t);
/* A feed of RunStep or RunGraph: {"name": name, "tensor": t (as rt_pack_tensor_msg)}. */
void rt_pack_feed(net_msg *m, msgpack_packer *pk, const char *name, const rt_tensor *t);
/* Decode; the tensor wraps the received frame without copying when it is aligned. */
int rt_unpack_tensor_msg(const net_in *m, const msgpack_object *o, const char *what,
                         rt_tensor **out, rt_status *st);

/* A tensor whose bytes wait in the sender's shared-memory outbox (net/shm.h), for a peer
 * on this host: {"dtype", "shape", "shm": {"path", "off"}}. The receiver's tensor wraps the
 * block; when it is freed, release(arg, off) tells the sender. */
void rt_pack_tensor_shm(msgpack_packer *pk, const rt_tensor *t, const char *path, uint64_t off);
bool rt_tensor_msg_is_shm(const msgpack_object *o);
int rt_unpack_tensor_shm(const msgpack_object *o, const char *what,
                         void (*release)(void *arg, uint64_t off), void *arg, rt_tensor **out,
                         rt_status *st);

#endif
