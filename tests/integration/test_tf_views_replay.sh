#!/usr/bin/env bash
# The shell's views of a session on a TensorFlow master (TFSH_PEER=tf), checked without
# TF: tf_peer_views.py's requests (RunOptions asking for partition graphs on a step new to
# the session and FULL_TRACE when traced, nothing on a repeated step) must be byte for byte
# what a real TF 2.21 worker of two CPU devices was sent, and its recorded RunMetadata
# must give the %placement, %partitions, %dot, run_metadata and %trace output it gave then
# (tests/data/tf_grpc/views_*, scripts/tf_oracle/record_grpc.py ... views; test_tf_views.sh
# runs the same on a live TF cluster where TF_PYTHON is set).
. "$(dirname "$0")/lib.sh"
D=$TFSH_SRC/tests/data/tf_grpc
fake_tf_master M "$D/views_exchange.txt"
out=$(cd "$WORK" && TFSH_PEER=tf timeout 60 "$TFSH" "$TFSH_SRC/tests/integration/tf_peer_views.py" \
  /job:worker/task:0/device:CPU:0 /job:worker/task:0/device:CPU:1 "grpc://localhost:$M" 2>&1)
check "the views' output, as against real TF" "$(cat "$D/views_tiny.out")" "$out"
check "%trace's file: TF's two devices, an op event from each" "ok" "$(python3 - "$WORK/trace.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
procs = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
compute = sorted(n for n in procs.values() if n.endswith(" Compute"))
assert compute == ["/job:worker/replica:0/task:0/device:CPU:%d Compute" % i for i in (0, 1)], compute
names = set(e["args"]["name"] for e in ev if e["ph"] == "X")
assert {"w", "y", "loss"} <= names, names
print("ok")
PY
)"
check "%dot: each _Send to its _Recv on the other device, dashed, with its tensor's size" \
  '  "p0:_recv_x_0_G1" -> "p1:_recv_x_0_G2" [style=dashed, color="#d62728", label="float32(?, 2)\n? B"];
  "p0:w/read_G3" -> "p1:w/read_G4" [style=dashed, color="#d62728", label="float32(2, 2)\n16 B"];
  "p1:loss_G5" -> "p0:loss_G6" [style=dashed, color="#d62728", label="float32()\n4 B"];' \
  "$(grep dashed "$WORK/graph.dot")"
finish
