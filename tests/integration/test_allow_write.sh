#!/usr/bin/env bash
# A server's Save ops write only under the directories it allows (working directory and
# $TMPDIR by default, or --allow-write): a client cannot make a task overwrite other files.
. "$(dirname "$0")/lib.sh"
read -r W0 <<<"$(free_ports 1)"
SPEC="{\"worker\": [\"localhost:$W0\"]}"
mkdir -p "$WORK/run" "$WORK/elsewhere" "$WORK/allowed"
(cd "$WORK/run" && TMPDIR="$WORK/run" exec "$TFSH" server --cluster "$SPEC" --job worker --task 0 >"$WORK/w.log" 2>&1) &
PIDS+=($!)
cat >"$WORK/save.py" <<PY
import sys, tensorflow as tf
with tf.device("/job:worker/task:0"):
    v = tf.Variable([1.0, 2.0], name="v")
saver = tf.train.Saver(sharded=True)
with tf.Session("grpc://localhost:$W0") as sess:
    sess.run(v.initializer)
    try:
        print(saver.save(sess, sys.argv[1]))
    except tf.errors.PermissionDeniedError as e:
        print("PermissionDeniedError:", str(e).split("\n")[0])
PY
out=$(timeout 30 "$TFSH" "$WORK/save.py" "$WORK/elsewhere/model.ckpt" 2>&1 | tail -1)
check "a save outside the allowed directories is refused, naming them" "yes" \
  "$(echo "$out" | grep -q "^PermissionDeniedError: .*this task does not write $WORK/elsewhere/model.ckpt.*: it writes only under .*(start it with tfsh server --allow-write DIR to change that)" && echo yes || echo "no: $out")"
check "and no file was written there" "" "$(find "$WORK/elsewhere" -type f)"
check "a save under the working directory works" "$WORK/run/model.ckpt" \
  "$(timeout 30 "$TFSH" "$WORK/save.py" "$WORK/run/model.ckpt" 2>&1 | tail -1)"
finish
