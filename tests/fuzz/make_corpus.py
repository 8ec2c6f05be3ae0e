#!/usr/bin/env python3
"""make_corpus.py: (re)write the seed corpora under tests/fuzz/corpus/ — valid messages
of every kind in net/PROTOCOL.md, their near misses, and small programs in tfsh's
language. Seeds are deterministic; fuzzing grows the working corpus elsewhere (README)."""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def pack(v):
    """A minimal msgpack encoder (python3 here has no msgpack module)."""
    if v is None:
        return b"\xc0"
    if v is True:
        return b"\xc3"
    if v is False:
        return b"\xc2"
    if isinstance(v, int):
        if 0 <= v < 128:
            return bytes([v])
        if -32 <= v < 0:
            return struct.pack("b", v)
        if v >= 0:
            return b"\xcf" + struct.pack(">Q", v)
        return b"\xd3" + struct.pack(">q", v)
    if isinstance(v, float):
        return b"\xcb" + struct.pack(">d", v)
    if isinstance(v, str):
        b = v.encode()
        return (bytes([0xa0 | len(b)]) if len(b) < 32 else b"\xd9" + bytes([len(b)])) + b if len(b) < 256 else b"\xda" + struct.pack(">H", len(b)) + b
    if isinstance(v, (bytes, bytearray)):
        return b"\xc4" + bytes([len(v)]) + bytes(v) if len(v) < 256 else b"\xc5" + struct.pack(">H", len(v)) + bytes(v)
    if isinstance(v, (list, tuple)):
        head = bytes([0x90 | len(v)]) if len(v) < 16 else b"\xdc" + struct.pack(">H", len(v))
        return head + b"".join(pack(x) for x in v)
    if isinstance(v, dict):
        head = bytes([0x80 | len(v)]) if len(v) < 16 else b"\xde" + struct.pack(">H", len(v))
        return head + b"".join(pack(k) + pack(x) for k, x in v.items())
    raise TypeError(v)


def msg(t, mid=7, **fields):
    d = {"v": 1, "t": t, "id": mid}
    d.update(fields)
    return pack(d)


def node(name, op, inputs=(), device="", attr=None, assigned=None):
    n = {"name": name, "op": op, "input": list(inputs), "device": device, "attr": attr or {}}
    if assigned:
        n["assigned"] = assigned
    return n


F32 = struct.pack("<2f", 1.0, 2.0)
CPU = "/job:worker/replica:0/task:0/device:CPU:0"
GRAPH = [
    node("a", "Placeholder", attr={"dtype": [5, 1], "shape": [6, [2]]}),
    node("b", "Const", attr={"dtype": [5, 1], "value": [7, {"dtype": 1, "shape": [2], "data": F32}]}),
    node("c", "Add", ["a", "b"], attr={"T": [5, 1]}),
    node("d", "Identity", ["c", "^b"], device="/cpu:0", attr={"T": [5, 1]}),
]
ATTRS = [
    node("i", "Const", attr={"dtype": [5, 3], "value": [7, {"dtype": 3, "shape": [], "data": b"\x07\0\0\0"}]}),
    node("s", "Const", attr={"dtype": [5, 7], "value": [7, {"dtype": 7, "shape": [2], "data": [b"ab", b""]}]}),
    node("l", "Const", attr={"dtype": [5, 9], "value": [7, {"dtype": 9, "shape": [0], "data": b""}],
                               "x": [8, [1, 2]], "y": [9, [0.5]], "z": [10, ["s"]], "w": [11, [1]], "u": [12, [[2, 3], None]]}),
    node("f", "Const", attr={"dtype": [5, 2], "value": [7, {"dtype": 2, "shape": [1, 1], "data": struct.pack("<d", 3.0)}],
                               "b": [3, True], "g": [2, 0.1], "st": [4, "x"]}),
]

net_header = {
    "ping": bytes.fromhex("df00000003a17601a174a450696e67a26964cf0000000000000007"),
    "getstatus": msg("GetStatus"),
    "runstep": msg("RunStep", session=42, feeds=[{"name": "x:0", "tensor": {"dtype": 1, "shape": [2], "frame": 0}}],
                   fetches=["y:0"], targets=[]),
    "recvtensor": msg("RecvTensor", step=7, key="/job:ps/replica:0/task:0/device:CPU:0;00000000000000ab;" + CPU + ";w:0;0:0"),
    "error": msg("error", code=5, msg="no session 9"),
    "abortstep": msg("AbortStep", step=1, code=10, msg="aborted"),
    "create": msg("CreateSession", config={"allow_soft_placement": True, "operation_timeout_in_ms": 5000}, graph=[]),
    "types": msg("T", n=None, b=False, f=1.5, neg=-1, big=2**64 - 1, s="x" * 40, bin=b"\0" * 300, arr=list(range(20)),
                 m={str(i): i for i in range(20)}),
    "nested": msg("N", x=[[[[[[1]]]]]]),
    "empty": b"",
    "not_map": b"\x93\x01\x02\x03",
    "truncated": msg("GetStatus")[:9],
    "huge_array": b"\x84\xa1v\x01\xa1t\xa9GetStatus\xa2id\x07\xa1x\xdd\xff\xff\xff\xff",
    "huge_str": b"\x84\xa1v\x01\xa1t\xa9GetStatus\xa2id\x07\xa1x\xdb\xff\xff\xff\xff",
    "ext": b"\x84\xa1v\x01\xa1t\xa9GetStatus\xa2id\x07\xa1x\xd4\x01\x01",
    "version2": msg("Ping")[:0] + pack({"v": 2, "t": "Ping", "id": 7}),
    "trailing": msg("Ping") + b"\x00",
    "map16": b"\xde\x00\x03" + msg("Ping")[1:],
}

codec = {
    "graph": msg("CreateSession", graph=GRAPH),
    "graph_attrs": msg("RegisterGraph", session=1, graph=ATTRS),
    "graph_assigned": msg("RegisterGraph", session=1, graph=[node("a", "NoOp", assigned=CPU)]),
    "graph_bad_op": msg("CreateSession", graph=[node("x", "Nope")]),
    "graph_bad_input": msg("CreateSession", graph=[node("x", "Identity", ["missing:3"], attr={"T": [5, 1]})]),
    "tensor_f32": msg("X", tensor={"dtype": 1, "shape": [2], "data": F32}),
    "tensor_i32": msg("X", tensor={"dtype": 3, "shape": [], "data": b"\x07\0\0\0"}),
    "tensor_str": msg("X", tensor={"dtype": 7, "shape": [2], "data": [b"a", b"bc"]}),
    "tensor_bool": msg("X", tensor={"dtype": 10, "shape": [3], "data": b"\x01\x00\x01"}),
    "tensor_bad_size": msg("X", tensor={"dtype": 1, "shape": [3], "data": F32}),
    "tensor_huge_shape": msg("X", tensor={"dtype": 1, "shape": [2**31, 2**31], "data": F32}),
    "tensor_neg_dim": msg("X", tensor={"dtype": 1, "shape": [-1], "data": b""}),
    "tensor_rank9": msg("X", tensor={"dtype": 1, "shape": [1] * 9, "data": b"\0\0\0\0"}),
    "msg_frame": msg("X", msg={"dtype": 1, "shape": [2], "frame": 0}),
    "msg_str": msg("X", msg={"dtype": 7, "shape": [1], "data": [b"hello"]}),
    "msg_i64": msg("X", msg={"dtype": 9, "shape": [1], "frame": 3}),
}

def write(target, files):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    for name, data in files.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)


write("fuzz_net_header", net_header)
write("fuzz_codec", dict(codec, **{k: v for k, v in net_header.items() if k in ("runstep", "create")}))
