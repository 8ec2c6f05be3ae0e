#!/usr/bin/env bash
# The MetaGraphs TF wrote with gradients through a tf.while_loop (tests/fixtures/tf/whilegrad_*,
# scripts/tf_oracle/make_while_grad_fixture.py) in a 2-task cluster: imported under
# replica_device_setter, the variables live on the ps task and the loops, their stacks and
# ControlTriggers on the worker; training gives TF's numbers (tests/lang/tf_import_while_grad.out,
# the same figures from real TF in one process).
. "$(dirname "$0")/lib.sh"
read -r P W <<<"$(free_ports 2)"
SPEC="{\"ps\": [\"localhost:$P\"], \"worker\": [\"localhost:$W\"]}"
start_task ps --cluster "$SPEC" --job ps --task 0
cat >"$WORK/client.py" <<PY
import tensorflow as tf
cluster = tf.train.ClusterSpec($SPEC)
server = tf.train.Server(cluster, job_name="worker", task_index=0)
def run(name, feed, steps):
    fx = "$TFSH_SRC/tests/fixtures/tf/" + name + "/"
    with tf.Graph().as_default() as g:
        with tf.device(tf.train.replica_device_setter(worker_device="/job:worker/task:0", cluster=cluster)):
            saver = tf.train.import_meta_graph(fx + "model.ckpt-0.meta")
        vs = tf.trainable_variables()
        print(name, sorted(set(v.device for v in vs)))
        with tf.Session(server.target) as sess:
            saver.restore(sess, tf.train.latest_checkpoint(fx))
            for _ in range(steps):
                sess.run("train", feed)
            print(round(float(sess.run("loss:0", feed)), 5))
run("whilegrad_loop", {"x:0": [1.0, -0.5]}, 5)
run("whilegrad_cond", {"x:0": [1.0, -0.5]}, 5)
PY
wait_for "$WORK/ps.log" "serving on"
out=$(timeout 120 "$TFSH" "$WORK/client.py" 2>&1)
check "variables on the ps" "whilegrad_loop ['/job:ps/task:0']" "$(echo "$out" | grep '^whilegrad_loop')"
check "a loop's gradient over two tasks trains as in TF" "0.00015" "$(echo "$out" | sed -n 2p)"
check "with a tf.cond in the loop" "0.00663" "$(echo "$out" | sed -n 4p)"
[ "$FAILS" = 0 ] || echo "$out"
finish
