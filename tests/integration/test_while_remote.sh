#!/usr/bin/env bash
# Control flow across tasks. A tf.while_loop on the worker whose body reads a
# variable of the ps task (w/read crosses into the loop through an Enter on the worker),
# then a tf.cond on the ps task, on the worker's loop result, whose taken branch assigns
# the ps variable. Expected output
# from real TF (the same program under tf.compat.v1 with both tasks as in-process servers).
. "$(dirname "$0")/lib.sh"
read -r P W <<<"$(free_ports 2)"
SPEC="{\"ps\": [\"localhost:$P\"], \"worker\": [\"localhost:$W\"]}"
start_task ps --cluster "$SPEC" --job ps --task 0
cat >"$WORK/client.py" <<PY
import tensorflow as tf
cluster = tf.train.ClusterSpec($SPEC)
server = tf.train.Server(cluster, job_name="worker", task_index=0)
with tf.device("/job:ps/task:0"):
    w = tf.Variable([1.0, 2.0], name="w")
with tf.device("/job:worker/task:0"):
    def body(i, acc):
        return i + 1, acc + w * tf.cast(i, tf.float32)
    n, total = tf.while_loop(lambda i, acc: i < 5, body, [tf.constant(0), tf.zeros([2])])
with tf.device("/job:ps/task:0"):
    upd = tf.cond(total[0] > 5.0, lambda: tf.assign_add(w, [1.0, 1.0]), lambda: tf.identity(w))
with tf.Session(server.target) as sess:
    sess.run(tf.global_variables_initializer())
    print(sess.run([n, total]))
    print(sess.run(upd), sess.run(w))
    print(sess.run(total))
PY
wait_for "$WORK/ps.log" "serving on"
check "a loop on the worker reads the ps variable; a cond on ps assigns it" "[5, array([10., 20.], dtype=float32)]
[2. 3.] [2. 3.]
[20. 30.]" "$(timeout 120 "$TFSH" "$WORK/client.py" 2>&1 | tail -3)"
# A tf.cond branch whose ops run on two devices: the untaken branch's value crosses as a
# dead marker, so both sides finish (real TF prints 2.0 then 7.0).
cat >"$WORK/split.py" <<PY
import tensorflow as tf
cluster = tf.train.ClusterSpec($SPEC)
server = tf.train.Server(cluster, job_name="worker", task_index=0)
p = tf.placeholder(tf.bool, [])
with tf.device("/job:worker/task:0"):
    x = tf.constant(2.0)
    def branch():
        with tf.device("/job:ps/task:0"):
            y = x * 3.0
        return y + 1.0
    r = tf.cond(p, branch, lambda: x)
with tf.Session(server.target) as sess:
    print(sess.run(r, {p: False}))
    print(sess.run(r, {p: True}))
PY
check "a branch across devices runs, taken or not" "2.0
7.0" "$(timeout 60 "$TFSH" "$WORK/split.py" 2>&1 | tail -2)"
finish
