#!/usr/bin/env python3
"""Write tests/fixtures/tf/whilegrad_loop/ and tests/fixtures/tf/whilegrad_rnn/ with real
TensorFlow (the oracle; never a dependency of the build or the tests): TF1 graphs (control
flow v1) whose gradients flow back through a tf.while_loop, so TF's MetaGraph holds the
StackV2 / StackPushV2 / StackPopV2 family and ControlTrigger. (a) a while loop whose body
multiplies by a variable; (c) one with a tf.cond in its body; (b) tf.nn.dynamic_rnn over a small seeded BasicRNNCell, and over an LSTMCell. Each is
trained with GradientDescentOptimizer; the graph is saved untrained (model.ckpt-0) so the
importer replays the training. tests/lang/tf_import_while_grad.py imports them; its .out is
made by running that script in TF. Run with TF's Python:
    TF_USE_LEGACY_KERAS=1 /root/tfvenv/bin/python3 scripts/tf_oracle/make_while_grad_fixture.py [DIR]"""
import os
import shutil
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
import tensorflow.compat.v1 as tf  # noqa: E402

tf.disable_v2_behavior()
tf.disable_control_flow_v2()
root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "fixtures", "tf"))


def save(g, name):
    out = os.path.join(root, name)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    with g.as_default():
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            saver.save(sess, os.path.join(out, "model.ckpt"), global_step=0)
    ck = os.path.join(out, "checkpoint")   # relative paths, so the fixture can move
    with open(ck) as f:
        text = f.read().replace(out + "/", "")
    with open(ck, "w") as f:
        f.write(text)
    print("wrote", out, sorted(set(op.type for op in g.get_operations())))


g = tf.Graph()
with g.as_default():
    x = tf.placeholder(tf.float32, [2], name="x")
    w = tf.get_variable("w", initializer=tf.constant([0.9, 1.1]))
    _, y = tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * w + 0.5),
                         [tf.constant(0), x], name="loop")
    loss = tf.reduce_sum(tf.square(y - 1.0), name="loss")
    opt = tf.train.GradientDescentOptimizer(0.05)
    for k, gr in enumerate(tf.gradients(loss, [w], name="gradients_check")):
        tf.identity(gr, name="grad_%d" % k)
    opt.minimize(loss, name="train")
save(g, "whilegrad_loop")

g = tf.Graph()   # (c) a tf.cond in the loop body: half the pushes and pops are dead in each
with g.as_default():   # iteration, and the ControlTriggers (f_sync, b_sync) still fire
    x = tf.placeholder(tf.float32, [2], name="x")
    w = tf.get_variable("w", initializer=tf.constant([0.9, 1.1]))

    def body(i, y):
        return i + 1, tf.cond(tf.equal(i % 2, 0), lambda: y * w, lambda: tf.sin(y) + w)
    _, y = tf.while_loop(lambda i, y: i < 4, body, [tf.constant(0), x], name="loop")
    loss = tf.reduce_sum(tf.square(y - 1.0), name="loss")
    for k, gr in enumerate(tf.gradients(loss, [w], name="gradients_check")):
        tf.identity(gr, name="grad_%d" % k)
    tf.train.GradientDescentOptimizer(0.05).minimize(loss, name="train")
save(g, "whilegrad_cond")

for name, make_cell in (("whilegrad_rnn", tf.nn.rnn_cell.BasicRNNCell), ("whilegrad_lstm", tf.nn.rnn_cell.LSTMCell)):
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(7)
        x = tf.placeholder(tf.float32, [2, 3, 2], name="x")      # batch 2, 3 steps, 2 features
        t = tf.placeholder(tf.float32, [2, 3], name="t")
        outs, _ = tf.nn.dynamic_rnn(make_cell(3), x, dtype=tf.float32, scope="rnn")
        loss = tf.reduce_mean(tf.square(outs - tf.expand_dims(t, -1)), name="loss")
        for k, gr in enumerate(tf.gradients(loss, tf.trainable_variables(), name="gradients_check")):
            tf.identity(gr, name="grad_%d" % k)
        tf.train.GradientDescentOptimizer(0.5).minimize(loss, name="train")
    save(g, name)
