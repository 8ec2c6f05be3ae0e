#!/usr/bin/env bash
# The shell's views on a real TensorFlow 2.21 cluster (TF_PYTHON; skipped without): tfsh's
# client (TFSH_PEER=tf) on a TF ps and worker gets %placement, %partitions, %dot, run_metadata
# and %trace from TF's RunMetadata, word for word; in the interactive shell (a pty) a long
# step's summary names TF's devices, ops and bytes from the next long step's trace. The
# other way, TF's client on a tfsh cluster lists its devices and resets it as on a TF
# cluster; Ctrl-C cancels a step on TF's master. test_tf_views_replay.sh and test_tf_client_replay.sh check the same without TF.
. "$(dirname "$0")/lib.sh"
PY=${TF_PYTHON:-}
[ -n "$PY" ] && "$PY" -c "import tensorflow" 2>/dev/null || { echo "SKIP: set TF_PYTHON to a Python with TensorFlow"; exit 77; }
read -r P0 W0 A0 A1 <<<"$(free_ports 4)"
SPEC="{\"ps\": [\"localhost:$P0\"], \"worker\": [\"localhost:$W0\"]}"
SPEC2="{\"worker\": [\"localhost:$A0\", \"localhost:$A1\"]}"
start_tf() {   # start_tf NAME SPEC JOB TASK: a TF server (tf_server.py), killed at exit
  "$PY" "$TFSH_SRC/tests/integration/tf_server.py" "$2" "$3" "$4" >"$WORK/$1.log" 2>&1 </dev/null &
  PIDS+=($!)
}
start_tf ps "$SPEC" ps 0
start_tf w0 "$SPEC" worker 0
start_tf a0 "$SPEC2" worker 0
start_tf a1 "$SPEC2" worker 1
for t in ps w0 a0 a1; do wait_for "$WORK/$t.log" serving 90; done
PS=/job:ps/replica:0/task:0/device:CPU:0 WK=/job:worker/replica:0/task:0/device:CPU:0

out=$(cd "$WORK" && TFSH_PEER=tf timeout 120 "$TFSH" "$TFSH_SRC/tests/integration/tf_peer_views.py" \
  /job:ps/task:0 /job:worker/task:0 "grpc://localhost:$W0" 2>&1)
check "the views of a session on a TF cluster" "FailedPreconditionError: a TensorFlow master places a graph only when it runs it, and this session has run nothing since the views were first asked for: run it (sess.run), then ask again
loss 10.0
loss 6.0
node    op          requested           assigned                                   reason
w       VariableV2  /job:ps/task:0      $PS      TensorFlow's placer
w/read  Identity    /job:ps/task:0      $PS      TensorFlow's placer
y       MatMul      /job:worker/task:0  $WK  TensorFlow's placer
Const   Const       /job:worker/task:0  $WK  TensorFlow's placer
loss    Sum         /job:worker/task:0  $WK  TensorFlow's placer
/job:worker/replica:0/task:0
  $WK: 6 nodes (3 ops, 1 _Send, 2 _Recv)
    recv w/read:0                 <- $PS  float32(2, 2)  16 B
/job:ps/replica:0/task:0
  $PS: 3 nodes (2 ops, 1 _Send, 0 _Recv)
    send w/read:0                 -> $WK  float32(2, 2)  16 B
node             op          requested       assigned                               reason
w/initial_value  Const       /job:ps/task:0  $PS  TensorFlow's placer
w                VariableV2  /job:ps/task:0  $PS  TensorFlow's placer
w/Assign         Assign      /job:ps/task:0  $PS  TensorFlow's placer
wrote graph.dot
loss 10.0
step_stats ['$PS', '$WK']
traced ['loss', 'w', 'y']
partition_graphs 2 ['$PS', '$WK'] ['_send_loss_0', 'w/read_S0']
tracing every run: on
tracing every run: off
wrote trace.json (3 devices; open it in https://ui.perfetto.dev or chrome://tracing)
FailedPreconditionError: a TensorFlow master places a graph only when it runs it, and this session has run nothing you named since the views were first asked for: run it (sess.run), then ask again" "$out"

check "%dot: the ps's _Send of w/read to the worker's _Recv, dashed" "1" \
  "$(grep -c '"p[01]:w/read_S0" -> "p[01]:w/read_S1" \[style=dashed, color="#d62728", label="float32(2, 2)\\n16 B"\];' "$WORK/graph.dot")"

# The interactive shell: steps of about a second (100 matmuls of 1000 x 1000 on the worker,
# the ps's variable read across). TF's master says nothing while a step runs: the first
# long step's summary says so, the next (traced) names the devices, ops and bytes.
cat >"$WORK/long.py" <<PY
import tensorflow as tf
with tf.device("/job:ps/task:0"):
    w = tf.Variable([[1.0, 2.0], [3.0, 4.0]], name="w")
with tf.device("/job:worker/task:0"):
    x = tf.random_normal([1000, 1000], seed=1, name="x")
    for i in range(100):
        x = tf.matmul(x, x) * 0.001
    total = tf.add(tf.reduce_sum(x), tf.reduce_sum(w), name="total")
sess = tf.Session("grpc://localhost:$W0")
sess.run(w.initializer)
PY
screen=$(TFSH_PEER=tf timeout 150 python3 "$TFSH_SRC/tests/integration/pty_drive.py" "$TFSH" \
  "exec(open('$WORK/long.py').read())" "r = sess.run(total)" "r = sess.run(total)" "%placement w/Assign" "sess.close()" 2>&1 |
  sed 's/\x1b\[[0-9;]*[A-Za-z]//g')
check "the first long step: TF's master told nothing of its devices" "1" \
  "$(grep -cE '^step [0-9]+\.[0-9]{2} s on a TensorFlow master \(the next long step is traced for its devices\)$' <<<"$screen")"
check "the next: TF's trace names 2 devices, 209 ops, the 16 B of w/read sent and received" "1" \
  "$(grep -cE '^step [0-9]+\.[0-9]{2} s: 2 devices, 209/209 ops, sent 16 B, recv 16 B(  [0-9.]+ steps/s)?$' <<<"$screen")"
check "the interactive shell keeps placements without asking" "w/Assign         Assign      /job:ps/task:0  $PS  TensorFlow's placer" \
  "$(grep '^w/Assign ' <<<"$screen")"

# Ctrl-C during a step on TF's master cancels its call, and TF's master the step: a
# dequeue that waits for ever is interrupted, and the next dequeue gets the item enqueued
# after (the cancelled step, were it still there, would have taken it).
cat >"$WORK/intr.py" <<'PY'
import sys
import tensorflow as tf
q = tf.FIFOQueue(10, tf.int32, shapes=[], name="q")
take, put = q.dequeue(name="take"), q.enqueue(7, name="put")
with tf.Session(sys.argv[1]) as sess:
    print("running", flush=True)
    try:
        sess.run(take)
        print("dequeued (too early)")
    except KeyboardInterrupt:
        print("interrupted", flush=True)
    sess.run(put)
    print("the next dequeue gets", sess.run(take, options=tf.RunOptions(timeout_in_ms=10000)))
PY
TFSH_PEER=tf timeout 60 "$TFSH" "$WORK/intr.py" "grpc://localhost:$W0" >"$WORK/intr.out" 2>&1 &
pid=$!
PIDS+=($pid)
wait_for "$WORK/intr.out" running 30
kill -INT $pid
wait $pid
check "Ctrl-C cancels a step on TF's master" "running
interrupted
the next dequeue gets 7" "$(cat "$WORK/intr.out")"

# TF's client on a tfsh cluster lists devices and resets as on TF's own cluster.
read -r T0 T1 G <<<"$(free_ports 3)"
TSPEC="{\"worker\": [\"localhost:$T0\", \"localhost:$T1\"]}"
start_task t0 --cluster "$TSPEC" --job worker --task 0 --grpc "localhost:$G"
start_task t1 --cluster "$TSPEC" --job worker --task 1
for t in t0 t1; do wait_for "$WORK/$t.log" "serving on"; done
DEV=$TFSH_SRC/tests/integration/tf_client_devices.py SHIM=$TFSH_SRC/scripts/tf_oracle/shim.py
ref=$(timeout 120 "$PY" "$SHIM" "$DEV" "grpc://localhost:$A0" 2>/dev/null)
check "TF's client on TF's cluster (the reference)" "$(cat "$TFSH_SRC/tests/data/tf_grpc/devices_tiny.out")" "$ref"
check "TF's client on the tfsh cluster: list_devices and reset as on TF's" "$ref" \
  "$(timeout 120 "$PY" "$SHIM" "$DEV" "grpc://localhost:$G" 2>/dev/null)"
finish
