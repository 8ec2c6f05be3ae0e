# A stand-in for a TensorFlow master, for tests that run without TF: it replays a session
# exchange recorded against real TF 2.21 (tests/data/tf_grpc/session_exchange.txt, made by
# scripts/tf_oracle/record_grpc.py). Each call must come in the recorded order with the
# recorded request bytes; it gets TF's recorded reply (or TF's error). A request that
# differs is answered INVALID_ARGUMENT naming the call and the first byte that differs.
# Run by tfsh itself (Debian's python3-grpcio):  tfsh fake_tf_master.py PORT EXCHANGE [DIE_AT]
# DIE_AT: the process exits when call DIE_AT comes (a master that dies mid-session).
# Prints "serving" when ready; gives up by itself after 120 s.
import os
import sys
import threading
from concurrent import futures

import grpc

port, path = int(sys.argv[1]), sys.argv[2]
die_at = int(sys.argv[3]) if len(sys.argv) > 3 else -1
calls = []
for line in open(path):
    method, req, code, rest = (line.rstrip("\n").split(" ", 3) + [""])[:4]
    calls.append((method, bytes.fromhex(req), int(code), rest))
lock = threading.Lock()
state = {"next": 0}


def first_difference(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


class Replay(grpc.GenericRpcHandler):
    def service(self, details):
        method = details.method

        def handle(req, ctx):
            with lock:
                i = state["next"]
                state["next"] += 1
            if i == die_at:
                os._exit(3)
            if i >= len(calls):
                ctx.abort(grpc.StatusCode.OUT_OF_RANGE, "call %d (%s): the recorded exchange has %d" % (i, method, len(calls)))
            want_method, want, code, rest = calls[i]
            if method != want_method or req != want:
                ctx.abort(grpc.StatusCode.INVALID_ARGUMENT,
                          "call %d: %s with %d bytes, but TF was sent %s with %d bytes (first difference at byte %d)"
                          % (i, method, len(req), want_method, len(want), first_difference(req, want)))
            if code:
                status = [s for s in grpc.StatusCode if s.value[0] == code][0]
                ctx.abort(status, rest.replace("\\n", "\n"))
            return bytes.fromhex(rest)
        return grpc.unary_unary_rpc_method_handler(handle)


server = grpc.server(futures.ThreadPoolExecutor(max_workers=2), handlers=[Replay()])
server.add_insecure_port("127.0.0.1:%d" % port)
server.start()
print("serving", flush=True)
server.wait_for_termination(timeout=120)
