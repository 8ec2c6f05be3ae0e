/* libFuzzer target: the runtime's decoders of graphs and tensors (runtime/codec.h) on a
 * header net_in_parse accepted: "graph" through rt_unpack_nodes into a fresh graph,
 * "tensor" through rt_unpack_tensor_inline, "msg" through rt_unpack_tensor_msg (no payload
 * frames: a frame index must be refused, string tensors decode inline). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "net/msg.h"
#include "ops/ops.h"
#include "runtime/codec.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  op_register_all();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  rt_status st;
  net_in *in = net_in_parse(data, size, NULL, NULL, &st);
  if (!in) return 0;
  const msgpack_object *o;
  if ((o = net_get(in, "graph"))) {
    rt_graph *g = rt_graph_new();
    rt_unpack_nodes(NULL, o, "graph", g, &st);
    rt_graph_free(g);
  }
  if ((o = net_get(in, "tensor"))) {
    rt_tensor *t = NULL;
    if (!rt_unpack_tensor_inline(o, "tensor", &t, &st) && !t) abort();
    rt_tensor_unref(t);
  }
  if ((o = net_get(in, "msg"))) {
    rt_tensor *t = NULL;
    if (!rt_unpack_tensor_msg(in, o, "msg", &t, &st) && !t) abort();
    rt_tensor_unref(t);
  }
  net_in_free(in);
  return 0;
}
