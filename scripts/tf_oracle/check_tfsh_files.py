#!/usr/bin/env python3
"""Real TensorFlow reads what tfsh wrote. Usage (TF's Python):
    check_tfsh_files.py DIR
DIR holds what tests/integration/test_tf_oracle.sh had tfsh write: ckpt/ (one shard),
sharded/ (two ps tasks, merged), partitioned/ (partitioned variables), resumed/ (TF's training directory
resumed by tfsh), built/ (a training graph tfsh built, whose train_op TF runs), each with the MetaGraph
Saver.save writes beside it, expected.json (the values tfsh saved), and, when present,
graph.pb / graph.pbtxt (write_graph, both formats) and events/ (a FileWriter's file). Prints one line per
check, "ok ..." or "FAIL ...", and exits 1 on any failure, 77 when TF is not importable."""
import glob
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
try:
    import numpy as np
    import tensorflow.compat.v1 as tf
except Exception as e:  # noqa
    print("skip: TensorFlow not importable (%s)" % e)
    sys.exit(77)
tf.disable_v2_behavior()
tf.get_logger().setLevel("ERROR")
from google.protobuf import text_format  # noqa: E402

d = sys.argv[1]
want = json.load(open(os.path.join(d, "expected.json")))
fails = 0


def check(name, ok, detail=""):
    global fails
    print("%s %s%s" % ("ok  " if ok else "FAIL", name, "" if ok else ": " + str(detail)))
    fails += 0 if ok else 1


def same(got, w):
    got = np.asarray(got)
    if isinstance(w, list) and w and isinstance(w[0], str):
        return [x.decode() for x in got.reshape(-1).tolist()] == w
    return np.allclose(got.astype(np.float64), np.array(w, dtype=np.float64))


for sub in sorted(k for k in want if not k.startswith("_")):
    prefix = tf.train.latest_checkpoint(os.path.join(d, sub))
    if prefix is None:   # a copied directory: the state file's absolute paths point elsewhere
        idx = sorted(glob.glob(os.path.join(d, sub, "*.index")))
        prefix = idx[-1][:-len(".index")] if idx else None
    check("%s: TF finds the latest checkpoint" % sub, prefix is not None, os.listdir(os.path.join(d, sub)))
    if prefix is None:
        continue
    try:
        r = tf.train.NewCheckpointReader(prefix)
        m = r.get_variable_to_shape_map()
        check("%s: NewCheckpointReader lists tfsh's variables" % sub, sorted(m) == sorted(want[sub]), sorted(m))
        for k in sorted(want[sub]):
            check("%s: %s has tfsh's value" % (sub, k), same(r.get_tensor(k), want[sub][k]), r.get_tensor(k))
    except Exception as e:  # noqa
        check("%s: NewCheckpointReader" % sub, False, e)
        continue
    # Saver.restore into a graph of TF's own
    g = tf.Graph()
    with g.as_default():
        vs = []
        for k in sorted(want[sub]):
            v = np.asarray(r.get_tensor(k))
            vs.append(tf.Variable(tf.zeros(v.shape, dtype=tf.as_dtype(r.get_variable_to_dtype_map()[k]))
                                  if v.dtype != object else tf.constant([""] * v.size), name=k))
        saver = tf.train.Saver()
        with tf.Session() as sess:
            try:
                saver.restore(sess, prefix)
                got = sess.run(vs)
                check("%s: tf.train.Saver.restore" % sub,
                      all(same(x, want[sub][k]) for x, k in zip(got, sorted(want[sub]))), got)
            except Exception as e:  # noqa
                check("%s: tf.train.Saver.restore" % sub, False, e)
    # the MetaGraph Saver.save wrote beside it: TF imports it and its Saver restores
    if os.path.exists(prefix + ".meta"):
        g = tf.Graph()
        with g.as_default():
            try:
                s = tf.train.import_meta_graph(prefix + ".meta", clear_devices=True)
                names = sorted(v.op.name for v in tf.global_variables())
                with tf.Session() as sess:
                    s.restore(sess, prefix)
                    got = dict((v.op.name, sess.run(v)) for v in tf.global_variables())
                if sub == "partitioned":   # TF's variables are the parts; joined they are tfsh's values
                    part = lambda v, k, axis: np.concatenate([got["%s/part_%d" % (v, i)] for i in range(k)], axis)
                    ok = (names == ["m/part_0", "m/part_1", "n/part_0", "n/part_1", "n/part_2"]
                          and same(part("m", 2, 0), want[sub]["m"]) and same(part("n", 3, 1), want[sub]["n"]))
                else:
                    ok = names == sorted(want[sub]) and all(same(got[k], want[sub][k]) for k in want[sub])
                if sub == "resumed":   # TF's own training graph, resumed and saved by tfsh
                    ok = ok and [op.name for op in tf.get_collection("train_op")] == ["train"]
                tr = want.get("_train_" + sub)
                if tr:   # a training graph tfsh built: TF runs its train_op, loss for loss
                    with tf.Session() as sess:
                        s.restore(sess, prefix)
                        loss = g.get_tensor_by_name("loss:0")
                        losses = [float(sess.run([loss, tf.get_collection("train_op")[0]], tr["feed"])[0])
                                  for _ in tr["losses"]]
                    check("%s: TF runs the train_op tfsh built (losses %s, tfsh's %s)" % (sub, losses, tr["losses"]),
                          np.allclose(losses, tr["losses"], rtol=1e-5), losses)
                check("%s: TF imports tfsh's MetaGraph (%d ops), its collections, and its Saver restores"
                      % (sub, len(g.get_operations())), ok, names)
                if sub == "sharded":   # tfsh's sharded Saver (MergeV2Checkpoints over packed prefixes) run by TF
                    import tempfile
                    with tempfile.TemporaryDirectory() as t, tf.Session() as sess:
                        s.restore(sess, prefix)
                        again = s.save(sess, os.path.join(t, "again"), write_meta_graph=False)
                        r2 = tf.train.NewCheckpointReader(again)
                        check("sharded: TF saves through tfsh's sharded Saver (MergeV2Checkpoints), the same values",
                              sorted(r2.get_variable_to_shape_map()) == sorted(want[sub]) and
                              all(same(r2.get_tensor(k), want[sub][k]) for k in want[sub]), os.listdir(t))
            except Exception as e:  # noqa
                check("%s: tf.train.import_meta_graph" % sub, False, e)

if "partitioned" in want:   # into TF's own partitioned variables, as TF1 makes them
    g = tf.Graph()
    with g.as_default():
        m = tf.get_variable("m", shape=[5, 2], partitioner=tf.fixed_size_partitioner(2))
        n = tf.get_variable("n", shape=[3, 4], dtype=tf.float64,
                            partitioner=tf.min_max_variable_partitioner(max_partitions=3, axis=1, min_slice_size=8))
        with tf.Session() as sess:
            try:
                tf.train.Saver().restore(sess, os.path.join(d, "partitioned", "model.ckpt"))
                got = sess.run([tf.convert_to_tensor(m), tf.convert_to_tensor(n)])
                check("partitioned: TF's Saver restores tfsh's slices into its partitioned variables",
                      same(got[0], want["partitioned"]["m"]) and same(got[1], want["partitioned"]["n"]), got)
            except Exception as e:  # noqa
                check("partitioned: TF's Saver restores tfsh's slices", False, e)

tm = os.path.join(d, "built_text.meta")
if os.path.exists(tm) and "built" in want:   # the built graph's MetaGraph in text format (as_text=True)
    g = tf.Graph()
    with g.as_default():
        try:
            mg = tf.MetaGraphDef()
            text_format.Merge(open(tm).read(), mg)
            s = tf.train.import_meta_graph(tm)
            with tf.Session() as sess:
                s.restore(sess, tf.train.latest_checkpoint(os.path.join(d, "built")) or
                          sorted(glob.glob(os.path.join(d, "built", "*.index")))[-1][:-len(".index")])
                got = dict((v.op.name, sess.run(v)) for v in tf.global_variables())
            check("built_text.meta: TF's text_format reads tfsh's text MetaGraph (%d nodes), import_meta_graph "
                  "restores through its Saver" % len(mg.graph_def.node),
                  sorted(got) == sorted(want["built"]) and all(same(got[k], want["built"][k]) for k in got), got)
        except Exception as e:  # noqa
            check("built_text.meta: TF reads the text MetaGraph", False, e)

rd = want.get("_ready")
if rd:   # a Scaffold's ready ops (tfsh's _ReportUninitialized, written as TF's ops) run by TF
    g = tf.Graph()
    with g.as_default():
        try:
            tf.train.import_meta_graph(os.path.join(d, "ready.meta"))
            ops = [tf.get_collection("ready_op")[0], tf.get_collection("ready_for_local_init_op")[0]]
            with tf.Session() as sess:
                before = [[x.decode() for x in v] for v in sess.run(ops)]
                sess.run(tf.get_collection("init_op")[0])
                after = [v.tolist() for v in sess.run(ops)]
            check("ready.meta: TF runs the Scaffold's ready ops tfsh wrote (uninitialized %s, then %s)" % (before, after),
                  before == rd["before"] and after == rd["after"], (before, after, rd))
        except Exception as e:  # noqa
            check("ready.meta: TF imports and runs the ready ops", False, e)

gp = os.path.join(d, "graph.pb")
if os.path.exists(gp):
    gd = tf.GraphDef()
    try:
        gd.ParseFromString(open(gp, "rb").read())
        check("graph.pb: tf.GraphDef parses tfsh's binary GraphDef (%d nodes)" % len(gd.node), len(gd.node) > 0)
        g = tf.Graph()
        with g.as_default():
            tf.import_graph_def(gd, name="")
            out = g.get_tensor_by_name("out:0")
            inits = [op for op in g.get_operations() if op.name == "init"]
            with tf.Session() as sess:
                if inits:   # tfsh's global_variables_initializer, run by TF
                    sess.run(inits[0])
                val = sess.run(out, {"x:0": [[1.0, 2.0]]})
        check("graph.pb: TF imports it and runs tfsh's initializer and forward pass", np.allclose(val, want.get("_graph_out", val)), val)
    except Exception as e:  # noqa
        check("graph.pb: TF parses and imports it", False, e)

tp = os.path.join(d, "graph.pbtxt")
if os.path.exists(tp) and os.path.exists(gp):
    from google.protobuf import text_format
    try:
        gt = text_format.Parse(open(tp).read(), tf.GraphDef())
        gb = tf.GraphDef()
        gb.ParseFromString(open(gp, "rb").read())
        check("graph.pbtxt: TF's text_format reads tfsh's text (%d nodes), the same GraphDef as graph.pb" %
              len(gt.node), gt == gb)
        check("graph.pbtxt: byte for byte what TF's text_format.MessageToString writes",
              text_format.MessageToString(gb) == open(tp).read())
    except Exception as e:  # noqa
        check("graph.pbtxt: TF's text_format parses it", False, e)

for ev in sorted(glob.glob(os.path.join(d, "events", "events.out.tfevents.*"))):
    try:
        kinds = []
        for e in tf.train.summary_iterator(ev):
            kinds.append(e.WhichOneof("what"))
        check("events: tf.train.summary_iterator reads tfsh's file (%s)" % ",".join(kinds), "summary" in kinds, kinds)
    except Exception as e:  # noqa
        check("events: summary_iterator", False, e)
    try:
        from tensorboard.backend.event_processing import event_accumulator
        acc = event_accumulator.EventAccumulator(os.path.dirname(ev), size_guidance={
            event_accumulator.IMAGES: 0, event_accumulator.HISTOGRAMS: 0})
        acc.Reload()
        tags = acc.Tags()
        check("events: tensorboard's EventAccumulator sees scalars %s, histograms %s, images %s, graph %s, "
              "run_metadata %s" % (tags.get("scalars"), tags.get("histograms"), tags.get("images"), tags.get("graph"),
                                   tags.get("run_metadata")),
              bool(tags.get("scalars")) and bool(tags.get("histograms")) and bool(tags.get("images")) and
              tags.get("graph") and bool(tags.get("run_metadata")), tags)
        for t in tags.get("histograms", []):
            h = acc.Histograms(t)[-1].histogram_value
            check("events: histogram %s has TF's buckets (%d)" % (t, len(h.bucket)),
                  h.num > 0 and len(h.bucket) == len(h.bucket_limit) and h.bucket_limit[-1] > 1e300, h)
        for t in tags.get("images", []):
            im = acc.Images(t)[-1]
            png = tf.image.decode_png(im.encoded_image_string)
            with tf.Session() as sess:
                shape = sess.run(png).shape
            check("events: image %s decodes as a %dx%d PNG" % (t, im.width, im.height),
                  tuple(shape) == (im.height, im.width, 3), shape)
        for t in tags.get("run_metadata", []):
            rm = acc.RunMetadata(t)
            check("events: run_metadata %s has step stats" % t,
                  len(rm.step_stats.dev_stats) > 0 and len(rm.step_stats.dev_stats[0].node_stats) > 0, rm)
        check("events: the graph has tfsh's nodes", len(acc.Graph().node) > 0, acc.Graph())
    except ImportError:
        print("skip events: tensorboard not installed")
    except Exception as e:  # noqa
        check("events: tensorboard's EventAccumulator", False, e)

print("%s: %d failed" % ("FAIL" if fails else "ok", fails))
sys.exit(1 if fails else 0)
