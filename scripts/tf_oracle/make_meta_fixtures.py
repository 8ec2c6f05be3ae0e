#!/usr/bin/env python3
"""Write tests/fixtures/tf/dist/ with real TensorFlow (the oracle; never a dependency of the
build or the tests): a small between-graph training graph as TF 1.x builds it under
tf.train.replica_device_setter (two ps tasks, variables spread round-robin, the rest on
worker 0), exported as a MetaGraph (train.meta, tf.train.export_meta_graph) and as a binary
GraphDef (train.pb). One node uses an op tfsh does not have (Digamma), so `tfsh inspect` has
something to report. make_fixtures.py runs this too. Run with TF's Python:
    /root/tfvenv/bin/python3 scripts/tf_oracle/make_meta_fixtures.py [FIXTURES_TF_DIR]"""
import os
import shutil
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow.compat.v1 as tf  # noqa: E402

tf.disable_v2_behavior()
root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "fixtures", "tf"))
out = os.path.join(root, "dist")
shutil.rmtree(out, ignore_errors=True)
os.makedirs(out)

g = tf.Graph()
with g.as_default():
    cluster = tf.train.ClusterSpec({"ps": ["ps0:2222", "ps1:2222"], "worker": ["w0:2222", "w1:2222"]})
    with tf.device(tf.train.replica_device_setter(cluster=cluster, worker_device="/job:worker/task:0")):
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        y = tf.placeholder(tf.float32, [None, 1], name="y")
        w = tf.Variable(tf.zeros([4, 1]), name="w")
        b = tf.Variable(tf.zeros([1]), name="b")
        gs = tf.train.get_or_create_global_step()
        pred = tf.add(tf.matmul(x, w), b, name="pred")
        loss = tf.reduce_mean(tf.square(pred - y), name="loss")
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=gs, name="train")
        tf.add_to_collection("train_op", train_op)
        tf.math.digamma(pred, name="digamma")   # an op tfsh does not have
    tf.train.export_meta_graph(os.path.join(out, "train.meta"))
    tf.train.write_graph(g, out, "train.pb", as_text=False)
print("wrote", out)
for n in sorted(os.listdir(out)):
    print("  %6d %s" % (os.path.getsize(os.path.join(out, n)), n))
