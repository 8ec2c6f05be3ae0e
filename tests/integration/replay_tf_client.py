# TF's own client replayed against a tfsh server's TF MasterService (tfsh server --grpc), for
# a test that runs without TF: the requests a TF 2.21 client sent running tf_peer_tiny.py
# (tests/data/tf_grpc/client_exchange.txt, recorded by scripts/tf_oracle/record_grpc.py)
# are sent again in order; each answer must be the recorded one, byte for byte (its
# numbers are exact small integers), or the recorded error code and text.
# Run by tfsh itself (Debian's python3-grpcio):  tfsh replay_tf_client.py TARGET EXCHANGE
import sys

import grpc

target, path = sys.argv[1], sys.argv[2]
channel = grpc.insecure_channel(target)
n = 0
for i, line in enumerate(open(path)):
    method, req, code, rest = (line.rstrip("\n").split(" ", 3) + [""])[:4]
    call = channel.unary_unary(method)
    try:
        reply = call(bytes.fromhex(req), timeout=30)
        got = (0, reply.hex())
    except grpc.RpcError as e:
        got = (e.code().value[0], e.details().replace("\n", "\\n"))
    want = (int(code), rest)
    if got != want:
        print("call %d (%s): got %r, TF's client got %r" % (i, method, got, want))
        sys.exit(1)
    n += 1
print("ok: %d calls answered as recorded" % n)
