#!/usr/bin/env bash
# Real tasks on loopback: 1 ps + 2 workers started with `tfsh server`; variables placed on
# the ps by replica_device_setter; two clients (one per worker task) update the same
# variables concurrently; the values persist across client sessions.
. "$(dirname "$0")/lib.sh"
read -r P0 W0 W1 <<<"$(free_ports 3)"
SPEC="{\"ps\": [\"localhost:$P0\"], \"worker\": [\"localhost:$W0\", \"localhost:$W1\"]}"
start_task ps --cluster "$SPEC" --job ps --task 0
start_task w0 --cluster "$SPEC" --job worker --task 0
start_task w1 --cluster "$SPEC" --job worker --task 1

cat >"$WORK/client.py" <<PY
import sys
import tensorflow as tf
task = int(sys.argv[1])
cluster = tf.train.ClusterSpec($SPEC)
with tf.device(tf.train.replica_device_setter(cluster=cluster, worker_device="/job:worker/task:%d" % task)):
    counter = tf.Variable(0, name="counter", dtype=tf.int64)
    w = tf.Variable([1.0, 2.0], name="w")
    bump = tf.assign_add(counter, 1)
    scale = w.assign(w * 1.0)
print(counter.op.device, w.op.device, bump.op.device)
with tf.Session("grpc://localhost:%d" % [$W0, $W1][task]) as sess:
    if task == 0 and sys.argv[2] == "init":
        sess.run(tf.global_variables_initializer())
        print("initialized")
    else:
        for i in range(100):
            sess.run(bump)
        print("done", sess.run(counter) >= 100)
PY
out=$(timeout 60 "$TFSH" "$WORK/client.py" 0 init 2>&1)
check "replica_device_setter placement (assign_add goes with its variable, as in TF)" "/job:ps/task:0 /job:ps/task:0 /job:ps/task:0" "$(echo "$out" | head -1)"
check "chief initializes" "initialized" "$(echo "$out" | tail -1)"
timeout 60 "$TFSH" "$WORK/client.py" 0 run >"$WORK/c0.out" 2>&1 &
c0=$!
timeout 60 "$TFSH" "$WORK/client.py" 1 run >"$WORK/c1.out" 2>&1 &
c1=$!
wait $c0 $c1
check "worker 0 ran" "done True" "$(tail -1 "$WORK/c0.out")"
check "worker 1 ran" "done True" "$(tail -1 "$WORK/c1.out")"
cat >"$WORK/read.py" <<PY
import tensorflow as tf
with tf.device("/job:ps/task:0"):
    counter = tf.Variable(0, name="counter", dtype=tf.int64)
    w = tf.Variable([0.0, 0.0], name="w")
with tf.Session("grpc://localhost:$W1") as sess:
    print(sess.run([counter, w]))
PY
check "shared counter: exactly 2 x 100 updates, state kept on the ps" "[200, array([1., 2.], dtype=float32)]" \
  "$(timeout 30 "$TFSH" "$WORK/read.py" 2>&1 | tail -1)"
cat >"$WORK/reset.py" <<PY
import tensorflow as tf
with tf.device("/job:ps/task:0"):
    counter = tf.Variable(0, name="counter", dtype=tf.int64)
tf.Session.reset("grpc://localhost:$W0")
try:
    tf.Session("grpc://localhost:$W1").run(counter)
except tf.errors.FailedPreconditionError as e:
    print(str(e).split("\n")[0])
PY
check "tf.Session.reset clears the ps's variables" "/job:ps/replica:0/task:0: Attempting to use uninitialized value counter" \
  "$(timeout 30 "$TFSH" "$WORK/reset.py" 2>&1 | tail -1)"
# Session.list_devices from worker 1's master: its own task first, then the others (TF's order)
check "list_devices on the cluster" "/job:worker/replica:0/task:1/device:CPU:0 /job:ps/replica:0/task:0/device:CPU:0 /job:worker/replica:0/task:0/device:CPU:0" \
  "$(timeout 30 "$TFSH" -c "
import tensorflow as tf
with tf.Session('grpc://localhost:$W1') as s:
    print(' '.join(d.name for d in s.list_devices()))" 2>&1)"
finish
