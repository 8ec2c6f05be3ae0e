#!/usr/bin/env bash
# Views on a real two-task cluster (ps + worker): FULL_TRACE step stats from both
# tasks and their Chrome trace (parsed by python3's json), partition graphs with _Send and
# _Recv, write_graph's GraphDef text, %placement reasons, %partitions edges, and no escape
# codes when stdout is not a terminal.
. "$(dirname "$0")/lib.sh"
read -r P0 W0 <<<"$(free_ports 2)"
SPEC="{\"ps\": [\"localhost:$P0\"], \"worker\": [\"localhost:$W0\"]}"
start_task ps --cluster "$SPEC" --job ps --task 0
start_task w0 --cluster "$SPEC" --job worker --task 0

cat >"$WORK/client.py" <<PY
import json
import tensorflow as tf
from tensorflow.python.client import timeline
cluster = tf.train.ClusterSpec($SPEC)
with tf.device(tf.train.replica_device_setter(cluster=cluster, worker_device="/job:worker/task:0")):
    w = tf.Variable([[1.0, 2.0], [3.0, 4.0]], name="w")
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    y = tf.matmul(x, w, name="y")
    loss = tf.reduce_sum(y, name="loss")
with tf.Session("grpc://localhost:$W0") as sess:
    sess.run(tf.global_variables_initializer())
    opts = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE, output_partition_graphs=True)
    md = tf.RunMetadata()
    print("loss", sess.run(loss, feed_dict={x: [[1.0, 1.0]]}, options=opts, run_metadata=md))
    devs = sorted(d.device for d in md.step_stats.dev_stats)
    print("devices", " ".join(devs))
    names = [n.node_name for d in md.step_stats.dev_stats for n in d.node_stats]
    print("traced y", "y" in names, "w" in names)
    ns = [n for d in md.step_stats.dev_stats for n in d.node_stats if n.node_name == "y"][0]
    print("y fields", ns.all_start_micros > 0, ns.op_end_rel_micros >= ns.op_start_rel_micros,
          ns.all_end_rel_micros >= 0, ns.thread_id > 0, ns.timeline_label.startswith("y = MatMul("),
          ns.output[0].tensor_description.allocation_description.requested_bytes)
    tl = timeline.Timeline(md.step_stats)
    with open("$WORK/trace.json", "w") as f:
        f.write(tl.generate_chrome_trace_format(show_dataflow=True, show_memory=False))
    ops = sorted(set(n.op for g in md.partition_graphs for n in g.node))
    print("partition ops", "_Send" in ops, "_Recv" in ops, len(md.partition_graphs))
    print("partition devices", " ".join(sorted(set(n.device for g in md.partition_graphs for n in g.node))))
    tf.train.write_graph(sess.graph_def, "$WORK", "graph.pbtxt", as_text=True)
    tf._views_magic("placement", "loss")
    tf._views_magic("partitions", "loss")
    tf._views_magic("trace", "$WORK/magic_trace.json")
    tf._views_magic("dot", "$WORK/graph.dot loss")
PY
out=$(timeout 60 "$TFSH" "$WORK/client.py" 2>&1)
echo "$out" > "$WORK/out.txt"
check "the traced step's result" "loss 10.0" "$(echo "$out" | grep '^loss [0-9]')"
check "step stats from both tasks" "devices /job:ps/replica:0/task:0/device:CPU:0 /job:worker/replica:0/task:0/device:CPU:0" \
  "$(echo "$out" | grep '^devices')"
check "nodes of both tasks traced" "traced y True True" "$(echo "$out" | grep '^traced')"
check "NodeExecStats fields" "y fields True True True True True 8" "$(echo "$out" | grep '^y fields')"
check "partition graphs hold _Send and _Recv" "partition ops True True 2" "$(echo "$out" | grep '^partition ops')"
check "partition graph nodes carry their devices" \
  "partition devices /job:ps/replica:0/task:0/device:CPU:0 /job:worker/replica:0/task:0/device:CPU:0" \
  "$(echo "$out" | grep '^partition devices')"
check "placement: replica_device_setter reason" "1" \
  "$(echo "$out" | grep -c '^w  *VariableV2  */job:ps/task:0  */job:ps/replica:0/task:0/device:CPU:0  *replica_device_setter: ps task 0 (round robin)$')"
check "placement: default reason for an unplaced node" "1" "$(echo "$out" | grep -c '^loss .* /job:worker/replica:0/task:0/device:CPU:0  *\(default\|explicit /job:worker/task:0\)')"
check "partitions: the variable's value crosses from ps to worker" "1" \
  "$(echo "$out" | grep -c 'send w/read:0 .* -> /job:worker/replica:0/task:0/device:CPU:0  float32(2, 2)  16 B')"
check "partitions: both tasks listed" "2" "$(echo "$out" | grep -c '^/job:')"
check "no escape codes when stdout is not a terminal" "0" "$(grep -c $'\033' "$WORK/out.txt")"

# the Chrome trace as TF's Timeline makes it: Allocators, then a Compute and a Tensors
# process per device, an X event per op from both tasks, flow events in pairs
check "Chrome trace structure" "ok" "$(python3 - "$WORK/trace.json" "$WORK/magic_trace.json" <<'PY'
import json, sys
for path in sys.argv[1:]:
    t = json.load(open(path))
    ev = t["traceEvents"]
    procs = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
    assert len(procs) == 5 and procs[0] == "Allocators", procs
    compute = dict((p, n) for p, n in procs.items() if n.endswith(" Compute"))
    assert len(compute) == 2 and len([n for n in procs.values() if n.endswith(" Tensors")]) == 2, procs
    assert any("/job:ps/" in p for p in compute.values()) and any("/job:worker/" in p for p in compute.values()), procs
    xs = [e for e in ev if e["ph"] == "X"]
    for e in xs:
        assert {"name", "pid", "tid", "ts", "dur", "args"} <= set(e), e
        assert e["dur"] >= 0 and e["pid"] in compute
    assert {e["pid"] for e in xs} == set(compute), "ops from both tasks"
    assert any(e["name"] == "MatMul" for e in xs) and any(e["name"] == "_Send" for e in xs)
    s = [e for e in ev if e["ph"] == "s"]
    f = [e for e in ev if e["ph"] == "t"]
    assert len(s) == len(f), (len(s), len(f))
    for a, b in zip(s, f):
        assert a["id"] == b["id"] and (a["pid"], a["tid"]) != (b["pid"], b["tid"]) and b["ts"] >= a["ts"]
print("ok")
PY
)"

# write_graph: TF1's GraphDef text format
check "GraphDef text format" "ok" "$(python3 - "$WORK/graph.pbtxt" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
depth, nodes = 0, []
scalar = re.compile(r'^[a-z_]+: ("([^"\\]|\\.)*"|[A-Za-z0-9_.+-]+)$')
for line in text.splitlines():
    s = line.strip()
    if not s:
        continue
    if s.endswith("{") and re.match(r'^[a-z_]+ \{$', s):
        depth += 1
        if s == "node {" and depth == 1:
            nodes.append({})
        continue
    if s == "}":
        depth -= 1
        assert depth >= 0
        continue
    if s.startswith(("tensor {", "shape {", "list {")) and s.endswith("}"):
        assert s.count("{") == s.count("}"), s
        continue
    assert scalar.match(s), s
    if depth == 1 and nodes:
        k, v = s.split(": ", 1)
        nodes[-1].setdefault(k, []).append(v)
assert depth == 0
names = [n["name"][0] for n in nodes]
assert '"w"' in names and '"y"' in names, names
y = [n for n in nodes if n["name"] == ['"y"']][0]
assert y["op"] == ['"MatMul"'] and y["input"] == ['"x"', '"w/read"'] or y["input"][0] == '"x"', y
assert 'versions {' in text
print("ok")
PY
)"
check "%dot: clusters per task and device, dashed Send/Recv edge" "2 2 1" \
  "$(echo "$(grep -c 'subgraph cluster_task' "$WORK/graph.dot") $(grep -c 'subgraph cluster_dev' "$WORK/graph.dot") $(grep -c 'style=dashed.*float32(2, 2)' "$WORK/graph.dot")")"
if command -v dot >/dev/null; then
  dot -Tsvg -o "$WORK/graph.svg" "$WORK/graph.dot"
  check "Graphviz renders the DOT" "0" "$?"
else
  echo "skip Graphviz rendering: dot is not installed"
fi
finish
