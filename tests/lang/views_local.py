# Views on a local session: RunMetadata's step_stats and partition_graphs,
# Timeline's Chrome trace, GraphDef (sess.graph_def, graph.as_graph_def, write_graph), and
# the view magics called from a script (%placement, %partitions).
import json
import os

import tensorflow as tf
from tensorflow.python.client import timeline

with tf.device("/cpu:0"):
    a = tf.constant([[1.0, 2.0], [3.0, 4.0]], name="a")
    b = tf.matmul(a, a, name="b")
with tf.device("/cpu:1"):
    c = tf.reduce_sum(b, name="c")
sess = tf.Session(config=tf.ConfigProto(device_count={"CPU": 2}))

md = tf.RunMetadata()
print(sess.run(c, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=md))
devs = sorted(d.device for d in md.step_stats.dev_stats)
print(devs)
stats = {}
for d in md.step_stats.dev_stats:
    for n in d.node_stats:
        stats[n.node_name] = (d.device[-5:], n)
print(sorted(k for k in stats if not k.startswith("b/") and not k.startswith("Const/")))
dev, nb = stats["b"]
print(dev, nb.timeline_label, nb.op_start_rel_micros <= nb.op_end_rel_micros <= nb.all_end_rel_micros)
out = nb.output[0].tensor_description
print(out.dtype, [d.size for d in out.shape.dim], out.allocation_description.requested_bytes)

trace = json.loads(timeline.Timeline(md.step_stats).generate_chrome_trace_format(show_dataflow=True, show_memory=False))
events = trace["traceEvents"]
print(sorted(e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"))
print(sorted(set(e["name"] for e in events if e["ph"] == "X")))
# a flow arrow joins ops on different threads (TF's rule), so how many depends on which pool
# thread ran each op: only that every start has its end is fixed
print(len([e for e in events if e["ph"] == "s"]) == len([e for e in events if e["ph"] == "t"]))

# no options: no metadata
md2 = tf.RunMetadata()
sess.run(c, run_metadata=md2)
print(hasattr(md2, "step_stats"))

md3 = tf.RunMetadata()
sess.run(c, options=tf.RunOptions(output_partition_graphs=True), run_metadata=md3)
for g in sorted(md3.partition_graphs, key=lambda g: g.node[0].device):
    print(g.node[0].device, sorted(n.op for n in g.node))
recv = [n for g in md3.partition_graphs for n in g.node if n.op == "_Recv"][0]
print(recv.name, recv.input, recv.attr["tensor_name"].s)

gd = sess.graph_def
print(len(gd.node), [n.name for n in gd.node], gd.node[1].input, gd.node[1].device)
print(len(tf.get_default_graph().as_graph_def().node))
d = os.environ.get("TMPDIR", "/tmp") + "/tfsh_views_local_%d" % os.getpid()
path = tf.train.write_graph(gd, d, "g.pbtxt", as_text=True)
print(path == os.path.join(d, "g.pbtxt"))
print(open(path).read())
tf._views_magic("placement", "c")
tf._views_magic("partitions", "c")
os.remove(path)
os.rmdir(d)
