#!/usr/bin/env bash
# Partitioned variables in TF's checkpoint layout, without TensorFlow:
# tf.get_variable(..., partitioner=fixed_size_partitioner / min_max_variable_partitioner)
# makes TF's parts; Saver writes one entry per variable with its full shape and slices
# (the parts under their slice keys), sharded or not, and restores them; TF-written
# partitioned checkpoints (tests/fixtures/tf/partitioned, and partsharded: parts on two
# devices, Saver(sharded=True), made by scripts/tf_oracle/make_fixtures.py) restore into
# tfsh's partitioned variables and read through NewCheckpointReader / list_variables /
# load_variable. test_tf_oracle.sh has TF restore tfsh's partitioned save.
. "$(dirname "$0")/lib.sh"
FX=$TFSH_SRC/tests/fixtures/tf
cat >"$WORK/part.py" <<'PY'
import json
import sys
import numpy as np
import tensorflow as tf
fx, out = sys.argv[1], sys.argv[2]
values = json.load(open(fx + "/values.json"))
want = values["partsharded/model.ckpt"]
r = tf.train.NewCheckpointReader(fx + "/partsharded/model.ckpt")
print("reader", sorted(r.get_variable_to_shape_map().items()),
      r.get_tensor("m").tolist() == want["m"], r.get_tensor("n").tolist() == want["n"])
print("list_variables", tf.train.list_variables(fx + "/partsharded"))
print("load_variable", tf.train.load_variable(fx + "/partsharded", "n").tolist() == want["n"])
with tf.device(lambda op: "/cpu:1" if "part_1" in op.name else "/cpu:0"):
    m = tf.get_variable("m", shape=[5, 2], initializer=tf.ones_initializer(),
                        partitioner=tf.fixed_size_partitioner(2))
    n = tf.get_variable("n", shape=[3, 4], dtype=tf.float64, initializer=tf.ones_initializer(),
                        partitioner=tf.min_max_variable_partitioner(max_partitions=3, axis=1, min_slice_size=8))
p = tf.get_variable("p", shape=[4, 2], initializer=tf.ones_initializer(), partitioner=tf.fixed_size_partitioner(2))
print("parts", [v.op.name for v in m], [v.get_shape().as_list() for v in n], m.get_shape().as_list())
mt = tf.convert_to_tensor(m)
nt = tf.convert_to_tensor(n)
pt = tf.convert_to_tensor(p)
s_ms = tf.train.Saver([m, n], sharded=True)
s_p = tf.train.Saver({"p": p})
with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
    sess.run(tf.global_variables_initializer())
    s_ms.restore(sess, fx + "/partsharded/model.ckpt")
    s_p.restore(sess, fx + "/partitioned/model.ckpt")
    print("restore TF's", sess.run(mt).tolist() == want["m"], sess.run(nt).tolist() == want["n"],
          sess.run(pt).tolist() == values["partitioned/model.ckpt"]["p"])
    print("a part", sess.run(n._get_variable_list()[1]).tolist())
    one = tf.train.Saver().save(sess, out + "/one/model.ckpt")
    two = s_ms.save(sess, out + "/two/model.ckpt")
    sess.run(tf.global_variables_initializer())
    tf.train.Saver().restore(sess, one)
    print("restore tfsh's", sess.run(mt).tolist() == want["m"], sess.run(nt).tolist() == want["n"])
    sess.run(tf.global_variables_initializer())
    s_ms.restore(sess, two)
    print("restore tfsh's sharded", sess.run(mt).tolist() == want["m"], sess.run(nt).tolist() == want["n"])
for d in ("one", "two"):
    print(d, tf.train.list_variables(out + "/" + d),
          tf.train.load_variable(out + "/" + d, "n").tolist() == want["n"])
PY
mkdir -p "$WORK/out/one" "$WORK/out/two"
out=$(timeout 60 "$TFSH" "$WORK/part.py" "$FX" "$WORK/out" 2>&1)
check "NewCheckpointReader of TF's sharded partitioned save" "reader [('m', [5, 2]), ('n', [3, 4])] True True" "$(echo "$out" | grep "^reader")"
check "list_variables of it" "list_variables [('m', [5, 2]), ('n', [3, 4])]" "$(echo "$out" | grep "^list_variables")"
check "load_variable of it" "load_variable True" "$(echo "$out" | grep "^load_variable")"
check "TF's parts: names and shapes" "parts ['m/part_0', 'm/part_1'] [[3, 2], [3, 1], [3, 1]] [5, 2]" "$(echo "$out" | grep "^parts")"
check "Saver restores TF's partitioned checkpoints into parts" "restore TF's True True True" "$(echo "$out" | grep "^restore TF's")"
check "each part gets its slice" "a part [[0.5], [1.5], [2.5]]" "$(echo "$out" | grep "^a part")"
check "tfsh's partitioned save restores" "restore tfsh's True True" "$(echo "$out" | grep "^restore tfsh's T")"
check "tfsh's sharded partitioned save restores" "restore tfsh's sharded True True" "$(echo "$out" | grep "^restore tfsh's sharded")"
check "tfsh's saves list the full variables" "one [('m', [5, 2]), ('n', [3, 4]), ('p', [4, 2])] True
two [('m', [5, 2]), ('n', [3, 4])] True" "$(echo "$out" | grep -E "^(one|two) ")"
check "sharded: one data file per device" "checkpoint model.ckpt.data-00000-of-00002 model.ckpt.data-00001-of-00002 model.ckpt.index model.ckpt.meta" \
  "$(ls "$WORK/out/two" | tr '\n' ' ' | sed 's/ $//')"
[ "$FAILS" = 0 ] || echo "$out"
cat >"$WORK/scope.py" <<'PY'
import tensorflow as tf
with tf.variable_scope("s", partitioner=tf.fixed_size_partitioner(2)):
    a = tf.get_variable("a", shape=[4, 3])
    with tf.variable_scope("t"):
        b = tf.get_variable("b", shape=[2])
    with tf.variable_scope("s", reuse=True):
        pass
print([v.op.name for v in a], [v.op.name for v in b], len(tf.global_variables()))
PY
check "a variable_scope's partitioner, inherited" "['s/a/part_0', 's/a/part_1'] ['s/t/b/part_0', 's/t/b/part_1'] 4" \
  "$(timeout 30 "$TFSH" "$WORK/scope.py" 2>&1)"
finish
