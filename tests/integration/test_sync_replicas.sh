#!/usr/bin/env bash
# Synchronous training (SyncReplicasOptimizer) on 1 ps + 2 workers: every global step
# applies the mean of exactly 2 gradients. Worker 0's gradient is always 1, worker 1's
# always 3, learning rate 1: each global step lowers w by exactly 2 (one worker alone
# would lower it by 1 or 3, two of one worker by 1 or 3, a mean of three by 5/3 or 7/3).
# As in TF, a fast worker may take both tokens of a round (then one aggregated step has
# two of its gradients, and the other worker's next one is stale and dropped, which can
# strand a worker with a fixed step count at the end). So the workers keep in step: each
# starts its step i once both have finished step i-1 (a counter per worker on the ps).
. "$(dirname "$0")/lib.sh"
read -r P0 W0 W1 <<<"$(free_ports 3)"
SPEC="{\"ps\": [\"localhost:$P0\"], \"worker\": [\"localhost:$W0\", \"localhost:$W1\"]}"
start_task ps --cluster "$SPEC" --job ps --task 0
cat >"$WORK/trainer.py" <<PY
import sys, time, tensorflow as tf
task = int(sys.argv[1])
cluster = tf.train.ClusterSpec($SPEC)
server = tf.train.Server(cluster, job_name="worker", task_index=task)
with tf.device(tf.train.replica_device_setter(cluster=cluster, worker_device="/job:worker/task:%d" % task)):
    w = tf.Variable(100.0, name="w")
    gs = tf.train.get_or_create_global_step()
    loss = w * (1.0 if task == 0 else 3.0)
    opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(1.0),
                                         replicas_to_aggregate=2, total_num_replicas=2)
    train_op = opt.minimize(loss, global_step=gs)
with tf.device("/job:ps/task:0"):
    done = [tf.Variable(0, dtype=tf.int64, name="done%d" % i, trainable=False) for i in range(2)]
    step_done = tf.assign_add(done[task], 1)
hook = opt.make_session_run_hook(is_chief=(task == 0))

def in_step(sess, i):   # both workers have finished step i - 1 (bounded: 60 s)
    for _ in range(12000):
        if min(sess.run(done)) >= i:
            return
        time.sleep(0.005)
    raise RuntimeError("the other worker never finished step %d" % (i - 1))
steps = []
with tf.train.MonitoredTrainingSession(master=server.target, is_chief=(task == 0), hooks=[hook],
                                       config=tf.ConfigProto(device_filters=["/job:ps", "/job:worker/task:%d" % task]),
                                       save_checkpoint_secs=None, save_summaries_steps=None,
                                       log_step_count_steps=None) as sess:
    for i in range(10):
        in_step(sess, i)
        sess.run(train_op)
        sess.run(step_done)
    print("worker %d done: global_step %d w %s" % (task, sess.run(gs), sess.run(w)))
PY
timeout 120 "$TFSH" "$WORK/trainer.py" 0 >"$WORK/w0.out" 2>&1 &
a=$!
timeout 120 "$TFSH" "$WORK/trainer.py" 1 >"$WORK/w1.out" 2>&1 &
b=$!
wait $a
wait $b
r0=$(grep "done" "$WORK/w0.out" | tail -1)
r1=$(grep "done" "$WORK/w1.out" | tail -1)
[ -n "$r0" ] || tail -5 "$WORK/w0.out"
[ -n "$r1" ] || tail -5 "$WORK/w1.out"
# After its 10 steps a worker reads global_step and w: every aggregated step took 2 off.
check_step() {
  python3 - "$1" <<'PYC'
import re, sys
m = re.search(r"global_step (\d+) w ([0-9.]+)", sys.argv[1])
if not m:
    print("no result")
else:
    g, w = int(m.group(1)), float(m.group(2))
    print("ok" if abs(w - (100.0 - 2.0 * g)) < 1e-4 and g >= 9 else "global_step %d but w %s" % (g, w))
PYC
}
check "worker 0: each global step applied the mean of exactly 2 gradients" "ok" "$(check_step "$r0")"
check "worker 1: each global step applied the mean of exactly 2 gradients" "ok" "$(check_step "$r1")"

# The older path: Supervisor + get_chief_queue_runner + get_init_tokens_op.
cat >"$WORK/sv.py" <<PY
import sys, time, tensorflow as tf
task = int(sys.argv[1])
cluster = tf.train.ClusterSpec($SPEC)
server = tf.train.Server(cluster, job_name="worker", task_index=task)
with tf.device(tf.train.replica_device_setter(cluster=cluster, worker_device="/job:worker/task:%d" % task)):
    w = tf.Variable(50.0, name="w2")
    gs = tf.Variable(0, dtype=tf.int64, trainable=False, name="gs2")
    opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(1.0),
                                         replicas_to_aggregate=2, total_num_replicas=2)
    train_op = opt.minimize(w * (1.0 if task == 0 else 3.0), global_step=gs)
    init_tokens = opt.get_init_tokens_op()
with tf.device("/job:ps/task:0"):
    done = [tf.Variable(0, dtype=tf.int64, name="sv_done%d" % i, trainable=False) for i in range(2)]
    step_done = tf.assign_add(done[task], 1)
with tf.device(tf.train.replica_device_setter(cluster=cluster, worker_device="/job:worker/task:%d" % task)):
    chief_qr = opt.get_chief_queue_runner()
    init = tf.global_variables_initializer()
    local_init = tf.local_variables_initializer()
sv = tf.train.Supervisor(is_chief=(task == 0), init_op=init, local_init_op=local_init, global_step=gs,
                         logdir=None, recovery_wait_secs=1)
cfg = tf.ConfigProto(device_filters=["/job:ps", "/job:worker/task:%d" % task])
sess = sv.prepare_or_wait_for_session(server.target, config=cfg)
if task == 0:
    sv.start_queue_runners(sess, [chief_qr])
    sess.run(init_tokens)
def in_step(i):   # both workers have finished step i - 1 (bounded: 60 s)
    for _ in range(12000):
        if min(sess.run(done)) >= i:
            return
        time.sleep(0.005)
    raise RuntimeError("the other worker never finished step %d" % (i - 1))
for i in range(10):
    in_step(i)
    sess.run(train_op)
    sess.run(step_done)
print("worker %d done: global_step %d w %s" % (task, sess.run(gs), sess.run(w) + 50.0))
sv.stop()
PY
timeout 120 "$TFSH" "$WORK/sv.py" 0 >"$WORK/s0.out" 2>&1 &
a=$!
timeout 120 "$TFSH" "$WORK/sv.py" 1 >"$WORK/s1.out" 2>&1 &
b=$!
wait $a
wait $b
s0=$(grep "done" "$WORK/s0.out" | tail -1)
[ -n "$s0" ] || tail -5 "$WORK/s0.out"
check "Supervisor + chief queue runner + init tokens: exact means" "ok" "$(check_step "$s0")"
finish
