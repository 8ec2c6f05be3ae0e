#!/usr/bin/env python3
"""Write tests/fixtures/tf/timeline/run_metadata.pb with real TensorFlow's protobuf classes
(the oracle; never a dependency of the build or the tests): a RunMetadata whose StepStats is
made by hand, so that its timestamps are fixed, with what TF's
tensorflow.python.client.timeline reads: a worker CPU whose ops overlap (lanes), a ps whose
variable read reaches the worker through a _Recv ("w/read/_3", which Timeline maps back to
"w/read": a dataflow arrow between devices), an op with two outputs, TF's RecvTensor
record, a GPU device with its own allocator, and a GPU tracer stream (kernel labels
"name@@node:op#..."). lang/tf_timeline prints what Timeline makes of it; its .out is TF's:
    /opt/tfvenv/bin/python3 scripts/tf_oracle/make_timeline_fixture.py
    scripts/tf_oracle/run.sh --write tests/lang/tf_timeline.py"""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow.compat.v1 as tf  # noqa: E402
from tensorflow.core.framework import step_stats_pb2  # noqa: E402

out = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "fixtures", "tf", "timeline"))
os.makedirs(out, exist_ok=True)

WORKER = "/job:worker/replica:0/task:0/device:CPU:0"
PS = "/job:ps/replica:0/task:0/device:CPU:0"
GPU = "/job:worker/replica:0/task:0/device:GPU:0"
STREAM = "/device:GPU:0/stream:all"


def node(dev, name, label, start, dur, tid, outputs=(), allocator="cpu"):
    ns = dev.node_stats.add(node_name=name, timeline_label=label, all_start_micros=start,
                            op_start_rel_micros=1, op_end_rel_micros=max(dur - 1, 1),
                            all_end_rel_micros=dur, thread_id=tid)
    for slot, (dims, allocated) in enumerate(outputs):
        n = 4
        for d in dims:
            n *= d
        o = ns.output.add(slot=slot)
        o.tensor_description.dtype = tf.float32.as_datatype_enum
        for d in dims:
            o.tensor_description.shape.dim.add(size=d)
        a = o.tensor_description.allocation_description
        a.requested_bytes = n
        a.allocator_name = allocator
        if allocated:
            a.allocated_bytes = n
            ns.memory.add(allocator_name=allocator, total_bytes=n, peak_bytes=n, live_bytes=n)
    return ns


rm = tf.RunMetadata()
ss = rm.step_stats
ps = ss.dev_stats.add(device=PS)
node(ps, "w", "w = VariableV2()", 1000, 3, 21, [([2, 2], False)])
node(ps, "w/read", "w/read = Identity(w)", 1004, 2, 21, [([2, 2], False)])
node(ps, "w/read/_2", "w/read/_2 = _Send(w/read)", 1007, 4, 22)
wk = ss.dev_stats.add(device=WORKER)
node(wk, "_SOURCE", "_SOURCE = NoOp()", 1001, 1, 7)
node(wk, "x", "x = Const()", 1003, 2, 7, [([2, 2], False)])
node(wk, "w/read/_3", "w/read/_3 = _Recv()", 1005, 9, 8)
node(wk, "RecvTensor", "RecvTensor", 1006, 6, 9)
node(wk, "MatMul", "MatMul = MatMul(x, w/read/_3)", 1015, 20, 7, [([2, 2], True)])
node(wk, "add", "add = Add(MatMul, x)", 1020, 6, 8, [([2, 2], True)])
node(wk, "y", "y = Relu(MatMul)", 1036, 3, 7, [([2, 2], True)])
node(wk, "split", "split = Split(split/dim, y)", 1040, 5, 7, [([2, 1], True), ([2, 1], True)])
node(wk, "z", "z = AddN(split, split:1, add)", 1046, 4, 9, [([2, 1], True)])
node(wk, "_SINK", "_SINK = NoOp(z)", 1051, 1, 7)
gpu = ss.dev_stats.add(device=GPU)
node(gpu, "g", "g = Mul(y, y)", 1041, 8, 30, [([2, 2], True)], allocator="GPU_0_bfc")
node(gpu, "g2", "g2 = Square(g)", 1050, 2, 30, [([2, 2], True)], allocator="GPU_0_bfc")
st = ss.dev_stats.add(device=STREAM)
node(st, "g", "Mul@@g:Mul#id=4#", 1043, 3, 0)
node(st, "g2", "g2:Square", 1051, 1, 0)
with open(os.path.join(out, "run_metadata.pb"), "wb") as f:
    f.write(rm.SerializeToString())
print("wrote", os.path.join(out, "run_metadata.pb"))
