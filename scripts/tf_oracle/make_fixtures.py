#!/usr/bin/env python3
"""Write the small TF-written fixtures under tests/fixtures/tf/ with real TensorFlow (the
oracle: never a dependency of the build or the tests). Run with TF's Python:
    /root/tfvenv/bin/python3 scripts/tf_oracle/make_fixtures.py [OUTDIR]
Everything it writes is deterministic except file times and event wall times; values.json
records what each checkpoint holds so the tests can compare without TF."""
import json
import os
import shutil
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np  # noqa: E402
import tensorflow.compat.v1 as tf  # noqa: E402

tf.disable_v2_behavior()
root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "fixtures", "tf"))
shutil.rmtree(root, ignore_errors=True)
os.makedirs(root)
values = {}


def record(name, sess, var_list):
    values[name] = {v.op.name: np.asarray(sess.run(v)).tolist() if v.dtype.base_dtype != tf.string
                    else [s.decode() for s in np.asarray(sess.run(v)).reshape(-1)]
                    for v in var_list}


# (Adding a fixture: run this into a scratch OUTDIR and copy the new directory and its
# values.json entry, so the others, with their file times, stay as they are.)

# 1. A small training directory: checkpoint, .meta, graph in both formats, an event file.
g = tf.Graph()
with g.as_default():
    tf.set_random_seed(1)
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    y = tf.placeholder(tf.float32, [None, 3], name="y")
    w = tf.Variable([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], name="w")
    b = tf.Variable([0.5, -0.5, 0.25], name="b")
    d = tf.Variable(np.array([1.5, 2.5]), name="d")          # float64
    i = tf.Variable(np.array([7, -8, 9], np.int32), name="i")
    flag = tf.Variable(True, name="flag")
    words = tf.Variable(["alpha", "", "gamma delta"], name="words")
    gs = tf.train.get_or_create_global_step()
    with tf.device("/cpu:0"):
        logits = tf.matmul(x, w) + b
    loss = tf.reduce_mean(tf.square(logits - y), name="loss")
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=gs, name="train")
    tf.summary.scalar("loss", loss)
    tf.summary.histogram("w", w)
    merged = tf.summary.merge_all()
    saver = tf.train.Saver(max_to_keep=3)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        feed = {x: [[1.0, 0.0], [0.0, 1.0]], y: [[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]]}
        writer = tf.summary.FileWriter(os.path.join(root, "train"), g, filename_suffix=".fixture")
        for step in range(3):
            s, _ = sess.run([merged, train_op], feed)
            writer.add_summary(s, step + 1)
        writer.close()
        saver.save(sess, os.path.join(root, "train", "model.ckpt"), global_step=gs)
        record("train/model.ckpt-3", sess, tf.global_variables())
    tf.train.write_graph(g, root, "graph.pb", as_text=False)
    tf.train.write_graph(g, root, "graph.pbtxt", as_text=True)

os.makedirs(os.path.join(root, "sharded"))
os.makedirs(os.path.join(root, "partitioned"))
# 1b. A forward graph (no training ops) with device fields and a _class colocation attr.
g = tf.Graph()
with g.as_default():
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    with tf.device("/job:ps/task:0"):
        w = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], name="w")
    with tf.colocate_with(w):
        b = tf.constant([0.5, -0.5, 0.25], name="b")
    with tf.device("/job:worker/task:0"):
        h = tf.nn.relu(tf.matmul(x, w) + b, name="h")
        out = tf.reduce_sum(h, axis=1, name="out")
    tf.train.write_graph(g, root, "forward.pb", as_text=False)
    tf.train.write_graph(g, root, "forward.pbtxt", as_text=True)
    xv = np.array([[1.0, 1.0], [-1.0, 0.5]], np.float32)   # its devices name a cluster: numpy
    wv = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32)
    bv = np.array([0.5, -0.5, 0.25], np.float32)
    values["forward.pb"] = {"x": xv.tolist(), "out": np.maximum(xv @ wv + bv, 0).sum(1).tolist()}

# 2. A sharded save over two devices.
g = tf.Graph()
with g.as_default():
    with tf.device("/cpu:0"):
        a = tf.Variable([1.0, 2.0, 3.0], name="a")
    with tf.device("/cpu:1"):
        c = tf.Variable([[10, 20], [30, 40]], dtype=tf.int64, name="c")
    saver = tf.train.Saver(sharded=True)
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        sess.run(tf.global_variables_initializer())
        saver.save(sess, os.path.join(root, "sharded", "model.ckpt"), global_step=5,
                   write_meta_graph=False)
        record("sharded/model.ckpt-5", sess, tf.global_variables())

# 3. A partitioned variable (slices).
g = tf.Graph()
with g.as_default():
    p = tf.get_variable("p", shape=[4, 2], initializer=tf.zeros_initializer(),
                        partitioner=tf.fixed_size_partitioner(2))
    full = np.arange(8, dtype=np.float32).reshape(4, 2)
    sets = [tf.assign(part, full[2 * k:2 * k + 2]) for k, part in enumerate(p)]
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(sets)
        saver.save(sess, os.path.join(root, "partitioned", "model.ckpt"), write_meta_graph=False)
        values["partitioned/model.ckpt"] = {"p": np.arange(8).reshape(4, 2).tolist()}

# 4. Partitioned variables saved sharded: a part on each device, so each shard holds one
# slice of "m" and the merged index lists both; "n" partitioned by min_max_variable_partitioner.
os.makedirs(os.path.join(root, "partsharded"))
g = tf.Graph()
with g.as_default():
    with tf.device(lambda op: "/cpu:1" if "part_1" in op.name else "/cpu:0"):
        m = tf.get_variable("m", shape=[5, 2], initializer=tf.zeros_initializer(),
                            partitioner=tf.fixed_size_partitioner(2))
        n = tf.get_variable("n", shape=[3, 4], dtype=tf.float64, initializer=tf.zeros_initializer(),
                            partitioner=tf.min_max_variable_partitioner(max_partitions=3, axis=1, min_slice_size=8))
    mv = np.arange(10, dtype=np.float32).reshape(5, 2)
    nv = np.arange(12, dtype=np.float64).reshape(3, 4) / 4
    sets = [tf.assign(m._get_variable_list()[0], mv[:3]), tf.assign(m._get_variable_list()[1], mv[3:]),
            tf.assign(n._get_variable_list()[0], nv[:, :2]), tf.assign(n._get_variable_list()[1], nv[:, 2:3]),
            tf.assign(n._get_variable_list()[2], nv[:, 3:])]
    saver = tf.train.Saver(sharded=True)
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(sets)
        saver.save(sess, os.path.join(root, "partsharded", "model.ckpt"), write_meta_graph=False)
        values["partsharded/model.ckpt"] = {"m": mv.tolist(), "n": nv.tolist()}

# 5. An event file with what the training directory's lacks: an image summary and a traced
# step's RunMetadata (tagged_run_metadata), on a graph of a few nodes.
g = tf.Graph()
with g.as_default():
    img = tf.reshape(tf.range(12, dtype=tf.float32), [1, 2, 2, 3], name="img")
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    y = tf.reduce_sum(tf.matmul(x, tf.constant([[1.0], [2.0]])), name="y")
    tf.summary.image("pic", img)
    tf.summary.scalar("y", y)
    merged = tf.summary.merge_all()
    with tf.Session() as sess:
        writer = tf.summary.FileWriter(os.path.join(root, "events"), g, filename_suffix=".fixture")
        rm = tf.RunMetadata()
        s = sess.run(merged, {x: [[1.0, 1.0]]}, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                     run_metadata=rm)
        writer.add_summary(s, 1)
        writer.add_run_metadata(rm, "step1", 1)
        writer.close()

# 6. A GraphDef with a uint8 tensor attr (ImageSummary's bad_color, DataType 4), both formats.
g = tf.Graph()
with g.as_default():
    x = tf.placeholder(tf.float32, [1, 2, 2, 3], name="x")
    tf.summary.image("pic", x)
    tf.identity(x * 2.0, name="y")
    tf.train.write_graph(g, os.path.join(root, "image"), "graph.pb", as_text=False)
    tf.train.write_graph(g, os.path.join(root, "image"), "graph.pbtxt", as_text=True)
g = tf.Graph()
with g.as_default():   # a uint8 constant (tfsh imports it since it has uint8)
    tf.constant([1, 2], tf.uint8, name="c8")
    tf.train.write_graph(g, os.path.join(root, "image"), "const_u8.pb", as_text=False)
g = tf.Graph()
with g.as_default(), tf.Session() as sess:   # a uint8 variable's checkpoint (tests/lang/tf_uint8_io)
    v8 = tf.Variable(np.array([[1, 2, 255]], np.uint8), name="v")
    sess.run(v8.initializer)
    os.makedirs(os.path.join(root, "uint8"), exist_ok=True)
    tf.train.Saver([v8]).save(sess, os.path.join(root, "uint8", "model"), write_meta_graph=False)
    os.remove(os.path.join(root, "uint8", "checkpoint"))

# 7. A MetaGraph in text format (export_meta_graph(as_text=True)) of a graph whose Saver is
# sharded (MergeV2Checkpoints over the packed prefixes), with its checkpoint.
g = tf.Graph()
with g.as_default():
    w = tf.Variable([[1.0, -2.0], [0.5, 4.0]], name="w")
    b = tf.Variable([0.25, 0.75], name="b")
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    tf.identity(tf.matmul(x, w) + b, name="out")
    gs = tf.train.get_or_create_global_step()
    saver = tf.train.Saver(sharded=True)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(tf.assign_add(gs, 2))
        os.makedirs(os.path.join(root, "textmeta"))
        saver.save(sess, os.path.join(root, "textmeta", "model.ckpt"), write_meta_graph=False)
        record("textmeta/model.ckpt", sess, tf.global_variables())
    tf.train.export_meta_graph(os.path.join(root, "textmeta", "model.meta"), as_text=True, saver_def=saver.as_saver_def())

# TF writes the state files with absolute paths; the fixtures keep them relative to their
# directory (as TF reads them), so they are the same wherever the tree is.
for sub in ("train", "sharded", "partitioned", "partsharded", "textmeta"):
    state = os.path.join(root, sub, "checkpoint")
    text = open(state).read().replace(os.path.join(root, sub) + "/", "")
    open(state, "w").write(text)

with open(os.path.join(root, "values.json"), "w") as f:
    json.dump(values, f, indent=1, sort_keys=True)
    f.write("\n")
print("wrote", root)
for dp, dn, fn in sorted(os.walk(root)):
    for n in sorted(fn):
        print("  %6d %s" % (os.path.getsize(os.path.join(dp, n)), os.path.relpath(os.path.join(dp, n), root)))

# The MetaGraph and GraphDef of a replica_device_setter graph (tests/fixtures/tf/dist/).
os.system("%s %s %s" % (sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "make_meta_fixtures.py"), root))
