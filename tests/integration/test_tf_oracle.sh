#!/usr/bin/env bash
# Real TensorFlow reads what tfsh wrote (skipped, exit 77, where TF is not installed): a
# checkpoint of one shard, a sharded one saved over two ps tasks, partitioned variables, a GraphDef in both formats
# (write_graph(as_text=False) and as_text=True), an event file (scalars, histograms, images, the graph,
# traced steps' RunMetadata), and the MetaGraphs Saver.save writes (TF's own training directory resumed
# by tfsh, and a training graph built by tfsh, which TF trains on); scripts/tf_oracle/check_tfsh_files.py
# has TF (and tensorboard's loader) read them. TF's Python: $TFSH_TF_PYTHON, else
# /root/tfvenv/bin/python3, else a python3 that imports tensorflow.
. "$(dirname "$0")/lib.sh"
PY=${TFSH_TF_PYTHON:-}
[ -z "$PY" ] && [ -x /root/tfvenv/bin/python3 ] && PY=/root/tfvenv/bin/python3
[ -z "$PY" ] && PY=python3
if ! "$PY" -c "import tensorflow" >/dev/null 2>&1; then
  echo "skip: no TensorFlow to read tfsh's files (set TFSH_TF_PYTHON)"
  exit 77
fi
D=$WORK/out
mkdir -p "$D/ckpt" "$D/sharded" "$D/events" "$D/resumed" "$D/built" "$D/partitioned"
read -r P0 P1 W0 <<<"$(free_ports 3)"
SPEC="{\"ps\": [\"localhost:$P0\", \"localhost:$P1\"], \"worker\": [\"localhost:$W0\"]}"
start_task ps0 --cluster "$SPEC" --job ps --task 0
start_task ps1 --cluster "$SPEC" --job ps --task 1
start_task w0 --cluster "$SPEC" --job worker --task 0
cat >"$WORK/write.py" <<PY
import json
import numpy as np
import tensorflow as tf
D = "$D"
expected = {}
w = tf.Variable([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], name="w")
b = tf.Variable([0.5, -0.5, 0.25], name="b")
d = tf.Variable(np.array([1.5, 2.5]), name="d")
i = tf.Variable(np.array([7, -8, 9], np.int32), name="i")
flag = tf.Variable(True, name="flag")
words = tf.Variable(["alpha", "", "gamma delta"], name="words")
gs = tf.train.get_or_create_global_step()
x = tf.placeholder(tf.float32, [None, 2], name="x")
out = tf.identity(tf.matmul(x, w) + b, name="out")
tf.summary.scalar("loss", tf.reduce_sum(out))
tf.summary.histogram("w", w)
tf.summary.image("img", tf.reshape(tf.range(12, dtype=tf.float32), [1, 2, 2, 3]))
merged = tf.summary.merge_all()
saver = tf.train.Saver()
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    sess.run(tf.assign_add(gs, 4))
    saver.save(sess, D + "/ckpt/model.ckpt", global_step=gs)
    vals = sess.run([w, b, d, i, flag, words, gs])
    expected["ckpt"] = {"w": vals[0].tolist(), "b": vals[1].tolist(), "d": vals[2].tolist(), "i": vals[3].tolist(),
                        "flag": bool(vals[4]), "words": ["alpha", "", "gamma delta"], "global_step": int(vals[6])}
    expected["_graph_out"] = sess.run(out, {x: [[1.0, 2.0]]}).tolist()
    writer = tf.summary.FileWriter(D + "/events", sess.graph)
    for step in range(3):
        rm = tf.RunMetadata()
        writer.add_summary(sess.run(merged, {x: [[1.0, 2.0]]}, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                                    run_metadata=rm), step)
        writer.add_run_metadata(rm, "step%d" % step, step)
    writer.close()
tf.train.write_graph(tf.get_default_graph(), D, "graph.pb", as_text=False)
tf.train.write_graph(tf.get_default_graph(), D, "graph.pbtxt", as_text=True)

g = tf.Graph()
with g.as_default():
    cluster = tf.train.ClusterSpec($SPEC)
    with tf.device(tf.train.replica_device_setter(cluster=cluster, worker_device="/job:worker/task:0")):
        a = tf.Variable([1.0, 2.0, 3.0], name="a")
        c = tf.Variable(np.array([[10, 20], [30, 40]], np.int64), name="c")
        s2 = tf.train.Saver(sharded=True)
    with tf.Session("grpc://localhost:$W0") as sess:
        sess.run(tf.global_variables_initializer())
        s2.save(sess, D + "/sharded/model.ckpt", global_step=5)
        expected["sharded"] = {"a": sess.run(a).tolist(), "c": sess.run(c).tolist()}
# TF's own training directory (tests/fixtures/tf/train) resumed here and saved again
g = tf.Graph()
with g.as_default():
    saver = tf.train.import_meta_graph("$TFSH_SRC/tests/fixtures/tf/train/model.ckpt-3.meta")
    feed = {g.get_tensor_by_name("x:0"): [[1.0, 0.0], [0.0, 1.0]], g.get_tensor_by_name("y:0"): [[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]]}
    with tf.Session() as sess:
        saver.restore(sess, tf.train.latest_checkpoint("$TFSH_SRC/tests/fixtures/tf/train"))
        sess.run(tf.get_collection("train_op")[0], feed)
        saver.save(sess, D + "/resumed/model.ckpt", global_step=tf.train.get_global_step())
        expected["resumed"] = dict((v.op.name, np.asarray(sess.run(v)).tolist() if v.op.name != "words" else ["alpha", "", "gamma delta"])
                                   for v in tf.global_variables())
# a training graph built here: its gradients (tfsh's own helpers) are written as TF's ops,
# so TF imports the .meta and trains on as tfsh does
g = tf.Graph()
with g.as_default():
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    w = tf.Variable([[1.0, 2.0], [3.0, 4.0]], name="w")
    b = tf.Variable([0.5, -0.5], name="b")
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b), name="loss")
    gs = tf.train.get_or_create_global_step()
    train_op = tf.train.GradientDescentOptimizer(0.01).minimize(loss, global_step=gs, name="train")
    saver = tf.train.Saver()
    feed = {x: [[1.0, 2.0], [-1.0, 0.5]]}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train_op, feed)
        saver.save(sess, D + "/built/model.ckpt", global_step=gs)
        saver.export_meta_graph(D + "/built_text.meta", as_text=True)
        expected["built"] = dict((v.op.name, np.asarray(sess.run(v)).tolist()) for v in tf.global_variables())
        expected["_train_built"] = {"feed": {"x:0": feed[x]}, "losses": [float(sess.run([loss, train_op], feed)[0]) for _ in range(2)]}
g = tf.Graph()
with g.as_default():   # partitioned variables: TF's slice layout
    m = tf.get_variable("m", shape=[5, 2], initializer=tf.zeros_initializer(), partitioner=tf.fixed_size_partitioner(2))
    n = tf.get_variable("n", shape=[3, 4], dtype=tf.float64, initializer=tf.zeros_initializer(),
                        partitioner=tf.min_max_variable_partitioner(max_partitions=3, axis=1, min_slice_size=8))
    mv = np.arange(10, dtype=np.float32).reshape(5, 2)
    nv = np.arange(12, dtype=np.float64).reshape(3, 4) / 4
    sets = [tf.assign(m._get_variable_list()[0], mv[:3]), tf.assign(m._get_variable_list()[1], mv[3:]),
            tf.assign(n._get_variable_list()[0], nv[:, :2]), tf.assign(n._get_variable_list()[1], nv[:, 2:3]),
            tf.assign(n._get_variable_list()[2], nv[:, 3:])]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(sets)
        tf.train.Saver().save(sess, D + "/partitioned/model.ckpt")
    expected["partitioned"] = {"m": mv.tolist(), "n": nv.tolist()}
g = tf.Graph()
with g.as_default():   # a MonitoredTrainingSession's Scaffold: its ready ops written as TF's ops
    v = tf.Variable([1.0, 2.0], name="v")
    with tf.name_scope("inner"):
        u = tf.Variable(0, name="u")
    scaffold = tf.train.Scaffold()
    scaffold.finalize()
    tf.train.export_meta_graph(D + "/ready.meta")
    with tf.Session() as sess:
        before = [x.tolist() for x in sess.run([scaffold.ready_op, scaffold.ready_for_local_init_op])]
        sess.run(scaffold.init_op)
        after = [x.tolist() for x in sess.run([scaffold.ready_op, scaffold.ready_for_local_init_op])]
    expected["_ready"] = {"before": [[s.decode() for s in x] for x in before], "after": after}
json.dump(expected, open(D + "/expected.json", "w"))
print("written")
PY
out=$(timeout 120 "$TFSH" "$WORK/write.py" 2>&1)
check "tfsh writes the files" "written" "$(echo "$out" | tail -1)"
check "sharded: one data file per ps" "checkpoint model.ckpt-5.data-00000-of-00002 model.ckpt-5.data-00001-of-00002 model.ckpt-5.index model.ckpt-5.meta" \
  "$(ls "$D/sharded" | tr '\n' ' ' | sed 's/ $//')"
res=$(timeout 240 "$PY" "$TFSH_SRC/scripts/tf_oracle/check_tfsh_files.py" "$D" 2>&1 | grep -E "^(ok|FAIL|skip)")
echo "$res"
check "TensorFlow reads every file tfsh wrote" "ok: 0 failed" "$(echo "$res" | tail -1)"
[ -n "${TFSH_KEEP:-}" ] && cp -r "$D" "$TFSH_KEEP"
finish
