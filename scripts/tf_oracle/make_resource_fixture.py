#!/usr/bin/env python3
"""Write tests/fixtures/tf/resource/ with real TensorFlow (the oracle; never a dependency of
the build or the tests): a TF1 graph of resource variables (get_variable(use_resource=True)),
trained 3 steps with AdamOptimizer and a global step, saved by tf.train.Saver with its
MetaGraph (model.ckpt-3.meta: VariableDef.is_resource set, VarHandleOp, ReadVariableOp,
AssignVariableOp, ResourceApplyAdam); and queue_v1.pb, a GraphDef of TF's older queue ops
(FIFOQueue and the ops taking its Ref(string) handle), built with tf.raw_ops. Run with TF's Python:
    /root/tfvenv/bin/python3 scripts/tf_oracle/make_resource_fixture.py [FIXTURES_TF_DIR]"""
import os
import shutil
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow.compat.v1 as tf  # noqa: E402

tf.disable_v2_behavior()
root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "fixtures", "tf"))
out = os.path.join(root, "resource")
shutil.rmtree(out, ignore_errors=True)
os.makedirs(out)

g = tf.Graph()
with g.as_default():
    step = tf.train.get_or_create_global_step()
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    with tf.variable_scope("lin", use_resource=True):
        w = tf.get_variable("w", initializer=tf.constant([[0.5], [-0.25]]))
        b = tf.get_variable("b", initializer=tf.constant([0.1]))
    out_t = tf.add(tf.matmul(x, w), b, name="out")
    loss = tf.reduce_mean(tf.square(out_t - y), name="loss")
    tf.train.AdamOptimizer(0.1).minimize(loss, global_step=step, name="train")
    saver = tf.train.Saver()
    feed = {x: [[1.0, 2.0], [3.0, 4.0]], y: [[1.0], [2.0]]}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            sess.run("train", feed)
        saver.save(sess, os.path.join(out, "model.ckpt"), global_step=3)
ck = os.path.join(out, "checkpoint")   # relative paths, so the fixture can move
with open(ck) as f:
    text = f.read().replace(out + "/", "")
with open(ck, "w") as f:
    f.write(text)
g = tf.Graph()
with g.as_default():
    q = tf.raw_ops.FIFOQueue(component_types=[tf.float32], shapes=[[2]], capacity=4, name="q1")
    x = tf.placeholder(tf.float32, [2], name="x")
    tf.raw_ops.QueueEnqueue(handle=q, components=[x], name="enq")
    tf.raw_ops.QueueDequeue(handle=q, component_types=[tf.float32], name="deq")
    tf.raw_ops.QueueSize(handle=q, name="size")
    tf.raw_ops.QueueClose(handle=q, name="close")
    with open(os.path.join(root, "queue_v1.pb"), "wb") as f:
        f.write(g.as_graph_def().SerializeToString())
print("wrote", out, "and queue_v1.pb")
