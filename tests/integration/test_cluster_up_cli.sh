#!/usr/bin/env bash
# `tfsh up SPEC` from the command line: a local cluster in the foreground, its ClusterSpec
# line printed, a client trains a step on it, and Ctrl-C (SIGINT) ends it with its tasks.
. "$(dirname "$0")/lib.sh"
start_tfsh up up ps=1 worker=1
wait_for "$WORK/up.log" "runs until Ctrl-C" 60
line=$(grep '^cluster = tf.train.ClusterSpec' "$WORK/up.log")
check "the ClusterSpec line" "yes" "$([ -n "$line" ] && echo yes || echo no)"
cat >"$WORK/client.py" <<PY
import tensorflow as tf
$line
with tf.device("/job:ps/task:0"):
    v = tf.Variable(1.0)
with tf.device("/job:worker/task:0"):
    y = v * 3.0
with tf.Session("grpc://" + cluster.as_dict()["worker"][0]) as sess:
    sess.run(v.initializer)
    print("step", sess.run(y))
PY
check "a client runs a step on it" "step 3.0" "$(timeout 60 "$TFSH" "$WORK/client.py" 2>&1 | tail -1)"
tasks=$(pgrep -P "$PID_up" | tr '\n' ' ')
kill -INT "$PID_up"
rc=0; wait_exit "$PID_up" 20 || rc=$?
check "Ctrl-C ends it" "0" "$rc"
gone=yes
for ((i = 0; i < 200; i++)); do
  gone=yes
  for t in $tasks; do kill -0 "$t" 2>/dev/null && gone=no; done
  [ $gone = yes ] && break
  sleep 0.05
done
check "and its tasks with it" "yes" "$gone"
finish
