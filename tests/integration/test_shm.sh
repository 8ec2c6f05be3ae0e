#!/usr/bin/env bash
# Big tensors between tasks of one host go through shared memory (net/shm.h): the values
# arrive exact step after step (blocks recycled), a variable changed later in the same
# step still arrives as it was when sent (the copy into the outbox is the snapshot), and
# small tensors keep going over the socket.
. "$(dirname "$0")/lib.sh"
read -r A B <<<"$(free_ports 2)"
SPEC="{\"worker\": [\"localhost:$A\", \"localhost:$B\"]}"
start_task w1 --cluster "$SPEC" --job worker --task 1
cat >"$WORK/client.py" <<PY
import tensorflow as tf
cluster = tf.train.ClusterSpec($SPEC)
server = tf.train.Server(cluster, job_name="worker", task_index=0)
with tf.device("/job:worker/task:0"):
    v = tf.Variable(tf.ones([512, 512]), name="v")       # 1 MiB: through shared memory
    small = tf.Variable(tf.ones([8]), name="small")      # 32 bytes: over the socket
with tf.device("/job:worker/task:1"):
    total = tf.reduce_sum(v) + tf.reduce_sum(small)
with tf.control_dependencies([total]):
    bump = tf.assign_add(v, tf.ones([512, 512]))         # after the send, in the same step
with tf.Session(server.target) as sess:
    sess.run(tf.global_variables_initializer())
    got = [sess.run([total, bump])[0] for _ in range(20)]
    want = [512.0 * 512.0 * (i + 1) + 8.0 for i in range(20)]
    print("exact" if got == want else "wrong: %s" % [g for g, w in zip(got, want) if g != w][:3])
PY
wait_for "$WORK/w1.log" "serving on"
check "20 steps of 1 MiB through shared memory, each exact and as sent" "exact" \
  "$(timeout 120 "$TFSH" "$WORK/client.py" 2>&1 | tail -1)"
# The receiver mapped the sender's outbox (a memfd, kept mapped after the sender exits).
check "the tensor came through the sender's outbox" "yes" \
  "$(grep -q 'memfd:tfsh-outbox' "/proc/$PID_w1/maps" && echo yes || echo no)"
finish
