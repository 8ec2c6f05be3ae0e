#!/usr/bin/env bash
# A local cluster from task counts: `%cluster up ps=1 worker=2` (and the tfsh module's
# cluster_up) picks free ports, starts the tasks, and prints the ClusterSpec it chose as a
# line another process can paste and use; every SPEC form is in %help.
. "$(dirname "$0")/lib.sh"
export HOME=$WORK XDG_RUNTIME_DIR=$WORK

# One shell holds the cluster up; a second process pastes the line the first printed.
"$TFSH" -c "
import time, tfsh
spec = tfsh.cluster_up('ps=1 worker=2')
print('returned', sorted(spec.keys()), len(spec['ps']), len(spec['worker']), flush=True)
for _ in range(900):
    time.sleep(0.1)" >"$WORK/holder.out" 2>&1 &
holder=$!
PIDS+=($holder)
wait_for "$WORK/holder.out" "^returned" 40 || finish
line=$(grep "^cluster = " "$WORK/holder.out")
check "the chosen spec, as a ClusterSpec line" "yes" \
  "$(echo "$line" | grep -qE '^cluster = tf\.train\.ClusterSpec\(\{"ps": \["localhost:[0-9]+"\], "worker": \["localhost:[0-9]+", "localhost:[0-9]+"\]\}\)$' && echo yes || echo "no: $line")"
check "cluster_up returns the spec" "returned ['ps', 'worker'] 1 2" "$(grep '^returned' "$WORK/holder.out")"
ports=$(echo "$line" | grep -oE ':[0-9]+' | sort -u | wc -l)
check "three distinct ports" "3" "$ports"
cat >"$WORK/paste.py" <<PY
import tensorflow as tf
$line
with tf.device(tf.train.replica_device_setter(cluster=cluster, worker_device="/job:worker/task:1")):
    v = tf.Variable(2.0)
    y = v * 3.0
with tf.Session("grpc://" + cluster.task_address("worker", 1)) as sess:
    sess.run(tf.global_variables_initializer())
    print("step", sess.run(y), v.device)
PY
check "the pasted line reaches the cluster" "step 6.0 /job:ps/task:0" "$(timeout 60 "$TFSH" "$WORK/paste.py" 2>&1 | tail -1)"
kill -TERM "$holder"; wait "$holder" 2>/dev/null

# JSON counts, as the tfsh module gets them from a dict; mistakes said plainly.
out=$(timeout 60 "$TFSH" -c "
import tfsh
spec = tfsh.cluster_up({'ps': 1, 'worker': 2})
print('dict', [(t['task'], t['state']) for t in tfsh.tasks()])
tfsh.down()
for bad in ['ps=one', 'ps=1 worker', {'ps': 1, 'worker': ['localhost:1']}, 'ps=0', '--hosts a,b ps|localhost:2222']:
    try:
        tfsh.cluster_up(bad)
    except ValueError as e:
        print('error', e)
" 2>&1)
check "a dict of counts" "dict [('/job:ps/task:0', 'running'), ('/job:worker/task:0', 'running'), ('/job:worker/task:1', 'running')]" \
  "$(echo "$out" | grep '^dict')"
check "mistakes in a count spec" "error cluster spec: ps=one: the count must be a number (as in ps=1 worker=2)
error cluster spec: 'worker' should be JOB=COUNT (as in ps=1 worker=2)
error cluster spec: give every job a count ({\"ps\": 1, \"worker\": 2}) or every job its addresses ({\"ps\": [\"host:port\"], ...}), not both
error cluster spec: job ps: 0 tasks; give a count from 1 to 4096
error %cluster up --hosts: give task counts (ps=1 worker=2): tfsh chooses the addresses" "$(echo "$out" | grep '^error')"

# The magics at the prompt, and %help's examples of every SPEC form.
out=$(TFSH_CLUSTER_UP_TIMEOUT=60 timeout 120 python3 "$TFSH_SRC/tests/integration/pty_drive.py" "$TFSH" \
  "%cluster up worker=2" "%cluster" "%down" "%help" "%cluster up" 2>&1)
check "%cluster up worker=2" "yes" \
  "$(echo "$out" | grep -qE '^cluster = tf\.train\.ClusterSpec\(\{"worker": \["localhost:[0-9]+", "localhost:[0-9]+"\]\}\)$' && echo yes || echo no)"
check "%cluster lists both" "2" "$(echo "$out" | grep -cE '^/job:worker/task:[01] +localhost:[0-9]+ +[0-9]+ +running')"
for form in 'ps=1 worker=2' '{"ps": 1, "worker": 2}' '{"ps": ["localhost:2222"], "worker": ["localhost:2223"]}' \
    'ps|localhost:2222,worker|localhost:2223;localhost:2224' '--slurm ps=1 worker=2 [--partition P] [--time T]' \
    '--hosts h1,h2 ps=1 worker=2'; do
  check "%help shows $form" "yes" "$(echo "$out" | grep -qF -- "  $form" && echo yes || echo no)"
done
check "%cluster up alone gives the forms" "yes" \
  "$(echo "$out" | grep -q '^ValueError: usage: %cluster up SPEC, where SPEC is one of' && echo yes || echo no)"
[ $FAILS -gt 0 ] && { echo "--- what the shell wrote:"; echo "$out"; }
finish
