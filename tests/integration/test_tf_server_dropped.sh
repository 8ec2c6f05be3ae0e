#!/usr/bin/env bash
# A tf.train.Server keeps serving after the script drops its object, as TF's do (they live
# until the process ends): a ps script that starts its Server inside a function and keeps
# no reference still answers a client, which would otherwise wait for its master for ever.
# What the client prints is what real TensorFlow printed for the same two scripts.
. "$(dirname "$0")/lib.sh"
read -r P0 W0 <<<"$(free_ports 2)"
SPEC="{\"ps\": [\"localhost:$P0\"], \"worker\": [\"localhost:$W0\"]}"

cat >"$WORK/ps.py" <<PY
import gc, time
import tensorflow as tf

def serve(job, index):
    tf.train.Server(tf.train.ClusterSpec($SPEC), job_name=job, task_index=index)

serve("ps", 0)
gc.collect()
print("ps: server dropped", flush=True)
time.sleep(120)
PY
cat >"$WORK/worker.py" <<PY
import tensorflow as tf
server = tf.train.Server(tf.train.ClusterSpec($SPEC), job_name="worker", task_index=0)
with tf.device("/job:ps/task:0"):
    v = tf.Variable([1.0, 2.0], name="v")
    total = tf.reduce_sum(v) * 10
cfg = tf.ConfigProto(operation_timeout_in_ms=20000)
with tf.Session(server.target, config=cfg) as sess:
    sess.run(tf.global_variables_initializer())
    print(v.device, sess.run(total))
    print(sess.run(v.assign_add([1.0, 1.0])))
PY
start_tfsh ps "$WORK/ps.py"
wait_for "$WORK/ps.log" "server dropped" 30
timeout 60 "$TFSH" "$WORK/worker.py" >"$WORK/worker.out" 2>&1
rc=$?
check "the client's steps ran on the dropped server's task" "/job:ps/task:0 30.0
[2. 3.]" "$(cat "$WORK/worker.out")"
check "the client exited 0" 0 "$rc"
check "the ps script is still running" yes "$(kill -0 "$PID_ps" 2>/dev/null && echo yes)"
finish
