/* Reproducer (runtime/worker.c, the lead's): RecvTensor for steps nobody runs each hold a
 * server handler thread until the step is aborted; 256 of them (net_options.max_threads)
 * leave none for anything else, and the server stops answering (GetStatus times out).
 *   gcc -std=gnu17 -I. tests/fuzz/repro/recvtensor_flood.c -Wl,--whole-archive \
 *     build/libtfsh_core.a -Wl,--no-whole-archive -lzmq -lmsgpackc -ljansson -ledit -lz \
 *     -lblis -fopenmp -lpthread -lm -o /tmp/flood
 *   tfsh server --cluster '{"worker": ["localhost:PORT"]}' --job worker --task 0 &
 *   /tmp/flood tcp://127.0.0.1:PORT 400
 *   -> GetStatus after 400 RecvTensor for unknown steps: no reply from ... within 5000 ms
 * (100 leaves it serving.) Not built or run by the test suite. */
#include <stdio.h>
#include <stdlib.h>
#include "net/client.h"
#include "net/wire.h"
int main(int argc, char **argv) {
  rt_status st;
  void *d = zmq_socket(net_ctx(), ZMQ_DEALER);
  zmq_connect(d, argv[1]);
  for (int i = 0; i < atoi(argv[2]); i++) {
    net_msg *m = net_msg_new("RecvTensor");
    net_msg_uint(m, "step", 1000 + i);
    net_msg_str(m, "key", "k");
    net_wire_send(d, NULL, 0, m, i + 1);
  }
  zmq_pollitem_t it = {d, 0, ZMQ_POLLIN, 0}; zmq_poll(&it, 1, 3000);
  net_client *c = net_client_new(argv[1], NULL, &st);
  net_in *r;
  int rc = net_call(c, net_msg_new("GetStatus"), &r, 5000, &st);
  printf("GetStatus after %s RecvTensor for unknown steps: %s\n", argv[2], rc ? st.msg : "ok");
  return 0;
}
