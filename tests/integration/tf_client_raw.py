# What TF's own client never sends but a gRPC peer may, checked on `tfsh server --grpc`
# (a cluster of two tasks, the first serving TF's MasterService) with requests built from
# tests/data/tf_grpc/callables_exchange.txt: a callable run with the wrong number of feeds
# (TF's server dies on it), a partial run's step (tfsh has none), and Reset with device_filters (as TF's master: its own task and
# the tasks named drop their variables), one with a malformed filter (TF's master dies).
# Run by tfsh itself (Debian's python3-grpcio):  tfsh tf_client_raw.py TARGET EXCHANGE
import sys

import grpc

target, path = sys.argv[1], sys.argv[2]
calls = [line.split(" ", 3) for line in open(path)]
channel = grpc.insecure_channel(target)


def varint(n):
    out = b""
    while n > 0x7F:
        out, n = out + bytes([n & 0x7F | 0x80]), n >> 7
    return out + bytes([n])


def field(num, data):   # a length-delimited field
    return varint(num << 3 | 2) + varint(len(data)) + data


def call(method, req):
    try:
        return "OK", channel.unary_unary("/tensorflow.MasterService/" + method)(req, timeout=30)
    except grpc.RpcError as e:
        return e.code().name, e.details()


def recorded(method):   # the first request of this method TF's client sent
    return bytes.fromhex(next(c[1] for c in calls if c[0].endswith("/" + method)))


def session():          # a new session on the recorded graph: its handle
    code, rep = call("CreateSession", recorded("CreateSession"))
    assert code == "OK", rep
    return rep[2:2 + rep[1]]


h = session()
print("init", call("RunStep", field(1, h) + recorded("RunStep")[2 + len(h):])[0])
code, rep = call("MakeCallable", field(1, h) + recorded("MakeCallable")[2 + len(h):])
print("make", code)
print("run without its feed", call("RunCallable", field(1, h)))
print("a partial run", call("RunStep", field(1, h) + field(6, b"p")))
print("reset task 0", call("Reset", field(2, b"/job:worker/task:0")))
h = session()
for v in ("v0", "v1", "count"):
    code, rep = call("RunStep", field(1, h) + field(3, v.encode() + b":0"))
    print(v, code if code == "OK" else (code, rep))
print("reset, a malformed filter", call("Reset", field(2, b"xx:yy")))
print("reset task 1", call("Reset", field(2, b"/job:worker/task:1")))
h = session()
print("v1", call("RunStep", field(1, h) + field(3, b"v1:0")))
