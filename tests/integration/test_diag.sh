#!/usr/bin/env bash
# The classic failures of TF1 clusters, each ending in a fast, precise message that names
# the task and the fix (issue: every classic failure ends in a precise message).
. "$(dirname "$0")/lib.sh"
read -r P0 W0 W1 <<<"$(free_ports 3)"
SPEC="{\"ps\": [\"localhost:$P0\"], \"worker\": [\"localhost:$W0\", \"localhost:$W1\"]}"

run() { timeout 30 "$TFSH" -c "$1" 2>&1 | tail -1; }

check "wrong job_name (Server)" \
  "ValueError: Job 'wroker' is not in the cluster spec; its jobs are: ps, worker (check --job_name)" \
  "$(run "import tensorflow as tf; tf.train.Server($SPEC, job_name='wroker', task_index=0)")"
check "task_index out of range (Server)" \
  "ValueError: Task index 2 is out of range for job 'worker', which has 2 tasks (0..1) (check --task_index)" \
  "$(run "import tensorflow as tf; tf.train.Server($SPEC, job_name='worker', task_index=2)")"
check "wrong job (tfsh server)" \
  "tfsh server: job 'wroker' is not in the cluster spec; its jobs are: ps, worker (check --job)" \
  "$("$TFSH" server --cluster "$SPEC" --job wroker --task 0 2>&1)"
check "task out of range (tfsh server)" \
  "tfsh server: task index 5 is out of range for job 'ps', which has 1 task (0..0) (check --task)" \
  "$("$TFSH" server --cluster "$SPEC" --job ps --task 5 2>&1)"
check "two tasks, one address (ClusterSpec)" \
  "ValueError: ClusterSpec: /job:ps/task:0 and /job:worker/task:1 both have address localhost:$P0; give each task its own host:port" \
  "$(run "import tensorflow as tf; tf.train.ClusterSpec({'ps': ['localhost:$P0'], 'worker': ['localhost:$W0', 'localhost:$P0']})")"
check "two tasks, one address (tfsh server)" \
  "tfsh server: cluster spec: /job:ps/task:0 and /job:ps/task:1 both have address localhost:$P0; give each task its own host:port" \
  "$("$TFSH" server --cluster "ps|localhost:$P0;localhost:$P0" --job ps 2>&1)"
check "malformed address (taken by ClusterSpec, as TF; refused when the Server starts)" \
  "InvalidArgumentError: Could not parse port for local server from \"localhost\". (tfsh: this task, /job:ps/task:0, has address 'localhost' in the cluster spec; expected \"host:port\")" \
  "$(run "import tensorflow as tf; tf.train.Server(tf.train.ClusterSpec({'ps': ['localhost']}), job_name='ps', task_index=0)")"

# TF_CONFIG read as TF1's TFConfigClusterResolver does.
check "TF_CONFIG: cluster, task and master" \
  "{'ps': ['localhost:$P0'], 'worker': ['localhost:$W0', 'localhost:$W1']} worker 1 grpc://localhost:$W1" \
  "$(TF_CONFIG="{\"cluster\": $SPEC, \"task\": {\"type\": \"worker\", \"index\": 1}}" \
     run "import tensorflow as tf
r = tf.distribute.cluster_resolver.TFConfigClusterResolver()
print(r.cluster_spec().as_dict(), r.task_type, r.task_id, r.master())")"

# A port another process holds: the port and the task, said plainly.
hold_port "$P0"
check "port in use" \
  "tfsh server: /job:ps/replica:0/task:0: cannot listen on tcp://127.0.0.1:$P0: address already in use (another process holds $P0: stop it, or give this task another port in the cluster spec)" \
  "$("$TFSH" server --cluster "$SPEC" --job ps --task 0 2>&1)"
kill "$HOLDER"
wait "$HOLDER" 2>/dev/null

# A task that never started: said within 2 s, with the elapsed time; operation_timeout_in_ms
# bounds the wait with an error naming the task; device_filters limit what is needed.
cat >"$WORK/never.py" <<PY
import sys, tensorflow as tf
server = tf.train.Server($SPEC, job_name="worker", task_index=0)
filters = sys.argv[2:] or None
cfg = tf.ConfigProto(operation_timeout_in_ms=int(sys.argv[1]), device_filters=filters)
with tf.Session(server.target, config=cfg) as sess:
    print(sess.run(tf.constant(41) + 1))
PY
start=$(date +%s%N)
timeout 30 "$TFSH" "$WORK/never.py" 2500 >"$WORK/never.out" 2>&1
secs=$(( ($(date +%s%N) - start) / 1000000 ))
check "waiting message names the task within 2 s" \
  "tfsh: waiting for /job:ps/replica:0/task:0 at localhost:$P0 (not connected), /job:worker/replica:0/task:1 at localhost:$W1 (not connected) (1 s)" \
  "$(head -1 "$WORK/never.out")"
check "operation_timeout_in_ms bounds the wait, naming the tasks" \
  "DeadlineExceededError: Timed out after 2500 ms (operation_timeout_in_ms) waiting for /job:ps/replica:0/task:0 at localhost:$P0 (not connected), /job:worker/replica:0/task:1 at localhost:$W1 (not connected): is the task started, at that address?" \
  "$(tail -1 "$WORK/never.out")"
check "and returns in time" "yes" "$([ "$secs" -lt 6000 ] && echo yes || echo "no ($secs ms)")"
check "device_filters: only the tasks named are needed" "42" \
  "$(timeout 30 "$TFSH" "$WORK/never.py" 5000 /job:worker/task:0 2>&1 | tail -1)"

# Different cluster specs: detected when tasks first talk, with what differs.
start_task ps --cluster "{\"ps\": [\"localhost:$P0\"], \"worker\": [\"localhost:$W0\"]}" --job ps --task 0
check "different cluster specs" \
  "FailedPreconditionError: /job:ps/replica:0/task:0 was started with a different cluster spec than /job:worker/replica:0/task:0 (/job:worker/replica:0/task:0 has /job:worker/task:1=localhost:$W1 but /job:ps/replica:0/task:0 does not); start every task with the same cluster spec" \
  "$(timeout 30 "$TFSH" "$WORK/never.py" 5000 /job:ps /job:worker/task:0 2>&1 | tail -1)"

# A device that does not exist: the node, the device requested, the devices that exist.
check "no such device" \
  "InvalidArgumentError: Cannot assign a device for operation 'c': Operation was explicitly assigned to /job:localhost/device:GPU:0 but available devices are [ /job:localhost/replica:0/task:0/device:CPU:0 ]. Make sure the device specification refers to a valid device." \
  "$(run "import tensorflow as tf
with tf.device('/job:localhost/gpu:0'):
    c = tf.constant(1, name='c')
tf.Session().run(c)")"
# Variables that other workers cannot share: a cluster with a ps job, variables on a worker.
kill -TERM "$PID_ps"
wait "$PID_ps" 2>/dev/null
start_task w1 --cluster "$SPEC" --job worker --task 1
start_task ps0 --cluster "$SPEC" --job ps --task 0
cat >"$WORK/unshared.py" <<PY
import tensorflow as tf
server = tf.train.Server($SPEC, job_name="worker", task_index=0)
with tf.device("/job:worker/task:0"):
    w = tf.Variable([1.0], name="w")
    b = tf.Variable([2.0], name="b")
with tf.Session(server.target) as sess:
    sess.run(tf.global_variables_initializer())
    print(sess.run(w + b))
PY
check "variables on a worker: a warning naming them and the fix" \
  "tfsh: warning: variables w, b are placed on /job:worker/replica:0/task:0, not on a ps task: other workers cannot share them. Place variables with tf.device(tf.train.replica_device_setter(cluster=...)) or tf.device(\"/job:ps/task:0\")." \
  "$(timeout 30 "$TFSH" "$WORK/unshared.py" 2>&1 | grep warning | head -1)"
finish
