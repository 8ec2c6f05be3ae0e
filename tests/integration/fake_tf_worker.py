# A stand-in for a TensorFlow server's gRPC port, for tests that run without TF: it
# answers WorkerService.GetStatus with the bytes a real TF 2.21 server sent
# (tests/data/tf_grpc, recorded by scripts/tf_oracle/record_grpc.py). Run by tfsh itself
# (Debian's python3-grpcio):
#   tfsh fake_tf_worker.py PORT MODE [HEXFILE]
# MODE: replay (HEXFILE's bytes), garbage (bytes that are no GetStatusResponse),
# nomethod (a gRPC server without WorkerService). Prints "serving" when ready; gives up
# by itself after 120 s.
import sys
from concurrent import futures

import grpc

port, mode = int(sys.argv[1]), sys.argv[2]
reply = bytes.fromhex(open(sys.argv[3]).read().strip()) if mode == "replay" else b"\x0a\xff\xff"


class Handler(grpc.GenericRpcHandler):
    def service(self, details):
        if mode == "nomethod" or details.method != "/tensorflow.WorkerService/GetStatus":
            return None
        return grpc.unary_unary_rpc_method_handler(lambda req, ctx: reply)


server = grpc.server(futures.ThreadPoolExecutor(max_workers=2), handlers=[Handler()])
server.add_insecure_port("127.0.0.1:%d" % port)
server.start()
print("serving", flush=True)
server.wait_for_termination(timeout=120)
