#!/usr/bin/env bash
# Variables spread over two ps tasks, saved and restored from the chief's client through a
# worker: Saver(sharded=False) (one SaveV2 on the worker, values sent through the graph)
# and Saver(sharded=True) (one SaveV2 per ps, merged into one checkpoint). Both ps tasks are
# then killed -9 and restarted empty (the worker with them); a restore brings every value back.
. "$(dirname "$0")/lib.sh"
read -r P0 P1 W0 <<<"$(free_ports 3)"
SPEC="{\"ps\": [\"localhost:$P0\", \"localhost:$P1\"], \"worker\": [\"localhost:$W0\"]}"
start_task ps0 --cluster "$SPEC" --job ps --task 0
start_task ps1 --cluster "$SPEC" --job ps --task 1
start_task w0 --cluster "$SPEC" --job worker --task 0
D=$WORK/ckpt
mkdir -p "$D"
cat >"$WORK/client.py" <<PY
import sys
import tensorflow as tf
mode, sharded = sys.argv[1], sys.argv[2] == "sharded"
cluster = tf.train.ClusterSpec($SPEC)
with tf.device(tf.train.replica_device_setter(cluster=cluster, worker_device="/job:worker/task:0")):
    a = tf.Variable([1.0, 2.0, 3.0], name="a")
    b = tf.Variable(5, name="b", dtype=tf.int64)
    c = tf.Variable([[0.5], [1.5]], name="c")
    saver = tf.train.Saver(sharded=sharded)
print(a.op.device, b.op.device, c.op.device)
with tf.Session("grpc://localhost:$W0") as sess:
    if mode == "save":
        sess.run(tf.global_variables_initializer())
        sess.run([tf.assign_add(a, [10.0, 10.0, 10.0]), tf.assign_add(b, 1)])
        print(saver.save(sess, "$D/" + sys.argv[2] + "/model.ckpt", global_step=7))
    else:
        print(sess.run(tf.report_uninitialized_variables()).tolist())
        saver.restore(sess, tf.train.latest_checkpoint("$D/" + sys.argv[2]))
        print(sess.run(a).tolist(), sess.run(b), sess.run(c).tolist())
PY
# The worker is restarted too: re-connecting a live worker to a restarted ps is the
# runtime's recovery work, not what this test checks.
restart_ps() {
  kill -9 "$PID_ps0" "$PID_ps1" "$PID_w0"
  wait "$PID_ps0" "$PID_ps1" "$PID_w0" 2>/dev/null
  start_task ps0 --cluster "$SPEC" --job ps --task 0
  start_task ps1 --cluster "$SPEC" --job ps --task 1
  start_task w0 --cluster "$SPEC" --job worker --task 0
  wait_for "$WORK/ps0.log" serving && wait_for "$WORK/ps1.log" serving && wait_for "$WORK/w0.log" serving
}
for mode in single sharded; do
  mkdir -p "$D/$mode"
  out=$(timeout 60 "$TFSH" "$WORK/client.py" save $mode 2>&1)
  check "$mode: variables on both ps tasks" "/job:ps/task:0 /job:ps/task:1 /job:ps/task:0" "$(echo "$out" | head -1)"
  check "$mode: save from the chief" "$D/$mode/model.ckpt-7" "$(echo "$out" | tail -1)"
  files=$(ls "$D/$mode" | tr '\n' ' ' | sed 's/ $//')
  if [ $mode = single ]; then
    check "$mode: files" "checkpoint model.ckpt-7.data-00000-of-00001 model.ckpt-7.index model.ckpt-7.meta" "$files"
  else
    check "$mode: files (one data file per ps)" "checkpoint model.ckpt-7.data-00000-of-00002 model.ckpt-7.data-00001-of-00002 model.ckpt-7.index model.ckpt-7.meta" "$files"
  fi
  restart_ps
  out=$(timeout 60 "$TFSH" "$WORK/client.py" restore $mode 2>&1)
  check "$mode: restarted ps tasks are empty" "[b'a', b'b', b'c']" "$(echo "$out" | sed -n 2p)"
  check "$mode: restore onto both ps tasks" "[11.0, 12.0, 13.0] 6 [[0.5], [1.5]]" "$(echo "$out" | tail -1)"
done
[ $FAILS -gt 0 ] && tail -n 20 "$WORK"/*.log
finish
