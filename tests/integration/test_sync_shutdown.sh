#!/usr/bin/env bash
# SyncReplicasOptimizer's chief queue runner waits in _AccumTake on the ps between steps.
# Stopping it must cancel that wait on the ps, as TF's session close cancels pending ops
# and the queue runner exits quietly: coord.request_stop() + coord.join(threads), closing
# the session the runner was started on, leaving a MonitoredTrainingSession by an
# exception, and the end of the program each stop it at once. A take left waiting on the
# ps would steal the next runner's gradients: each phase's runner must get all of its own
# (runs == steps), the stopped ones none more, and the program must end within the bound.
. "$(dirname "$0")/lib.sh"
read -r P0 W0 <<<"$(free_ports 2)"
SPEC="{\"ps\": [\"localhost:$P0\"], \"worker\": [\"localhost:$W0\"]}"
start_task ps --cluster "$SPEC" --job ps --task 0
cat >"$WORK/chief.py" <<PY
import time, tensorflow as tf
cluster = tf.train.ClusterSpec($SPEC)
server = tf.train.Server(cluster, job_name="worker", task_index=0)
with tf.device(tf.train.replica_device_setter(cluster=cluster)):
    w = tf.Variable(100.0, name="w")
    gs = tf.Variable(0, name="global_step", trainable=False)   # int32, as most scripts make it
    opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(1.0), replicas_to_aggregate=1,
                                         total_num_replicas=1)
    train_op = opt.minimize(2.0 * w, global_step=gs)
    init = tf.global_variables_initializer()
    local_init = tf.local_variables_initializer()

def wait_runs(r, n):   # the runner's step count catches up with the token the worker took (bounded)
    for _ in range(4000):
        if r.runs >= n:
            return r.runs
        time.sleep(0.005)
    return r.runs

def train(sess, n):
    for _ in range(n):
        sess.run(train_op)

# 1: a coordinator's stop request and join stop the runner registered with it
sess = tf.Session(server.target)
sess.run([init, local_init])
coord = tf.train.Coordinator()
threads = opt.get_chief_queue_runner().create_threads(sess, coord=coord, start=True)
train(sess, 5)
r1 = threads[0]
runs = wait_runs(r1, 5)   # before the stop: a loaded host may not have run the last token yet
t0 = time.time()
coord.request_stop()
coord.join(threads)
print("coord: runs", runs, "error", r1.error, "stopped in time", time.time() - t0 < 10)
# 2: closing the session stops the runner started on it
qr = opt.get_chief_queue_runner()
r2 = qr.create_threads(sess)[0]
train(sess, 5)
runs = wait_runs(r2, 5)
t0 = time.time()
sess.close()
print("close: runs", runs, "error", r2.error, "stopped in time", time.time() - t0 < 10)
# 3: a MonitoredTrainingSession left by an exception closes its session: its runner stops.
# Its chief initializes the variables again (no checkpoint, as in TF: global_step 0, w 100)
# and the sync hook's chief_init_op starts the local step and the accumulators there.
hook = opt.make_session_run_hook(is_chief=True)
try:
    with tf.train.MonitoredTrainingSession(master=server.target, is_chief=True, hooks=[hook],
                                           save_checkpoint_secs=None, save_summaries_steps=None,
                                           log_step_count_steps=None) as mon:
        r3 = hook._runner._runner
        train(mon, 5)
        raise ValueError("out of the loop")
except ValueError as e:
    print("monitored:", e, "runs", wait_runs(r3, 5), "error", r3.error)
# 4: a session left open: the end of the program stops its runner
sess = tf.Session(server.target)
r4 = opt.get_chief_queue_runner().create_threads(sess)[0]
train(sess, 5)
print("open: runs", wait_runs(r4, 5), "global_step", sess.run(gs), "w", sess.run(w))
print("stopped runners took no more:", r1.runs, r2.runs, r3.runs)
PY
start_tfsh chief "$WORK/chief.py"
wait_exit "$PID_chief" 60
rc=$?
check "the program ends (exit 0, within the bound)" "0" "$rc"
check "coord.request_stop + join stop the runner quietly" "coord: runs 5 error None stopped in time True" \
  "$(grep '^coord:' "$WORK/chief.log")"
check "closing the session stops its runner quietly" "close: runs 5 error None stopped in time True" \
  "$(grep '^close:' "$WORK/chief.log")"
check "leaving a MonitoredTrainingSession by an exception stops its runner" \
  "monitored: out of the loop runs 5 error None" "$(grep '^monitored:' "$WORK/chief.log")"
check "a later runner gets every gradient (no take left waiting on the ps)" "open: runs 5 global_step 10 w 80.0" \
  "$(grep '^open:' "$WORK/chief.log")"
check "the stopped runners took none of the later gradients" "stopped runners took no more: 5 5 5" \
  "$(grep '^stopped' "$WORK/chief.log")"
[ "$FAILS" = 0 ] || tail -5 "$WORK/chief.log"
# the ps holds no step of the chief's any more: a new program trains on it at once
cat >"$WORK/again.py" <<PY
import tensorflow as tf
cluster = tf.train.ClusterSpec($SPEC)
server = tf.train.Server(cluster, job_name="worker", task_index=0)
with tf.device(tf.train.replica_device_setter(cluster=cluster)):
    w = tf.Variable(100.0, name="w")
    gs = tf.Variable(0, name="global_step", trainable=False)
    opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(1.0), replicas_to_aggregate=1,
                                         total_num_replicas=1)
    train_op = opt.minimize(2.0 * w, global_step=gs)
sess = tf.Session(server.target)
r = opt.get_chief_queue_runner().create_threads(sess)[0]
for _ in range(3):
    sess.run(train_op)
print("again: global_step", sess.run(gs), "w", sess.run(w))
PY
start_tfsh again "$WORK/again.py"
wait_exit "$PID_again" 60
check "a second program on the same ps trains and ends" "0 again: global_step 13 w 74.0" "$? $(grep '^again:' "$WORK/again.log")"
finish
