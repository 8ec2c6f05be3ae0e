# MetaGraphs TF wrote with gradients through a tf.while_loop (control flow v1; made by
# scripts/tf_oracle/make_while_grad_fixture.py): the gradient loop keeps each iteration's
# forward values on StackV2 stacks (StackPushV2 forward, StackPopV2 backward) and guards the
# pops with ControlTrigger. import_meta_graph, restore TF's checkpoint, train with TF's own
# train op; the numbers printed are TF's. (a) a loop multiplying by a variable;
# (c) a tf.cond in the loop body (dead pushes and pops: ControlTrigger still fires); (b) dynamic_rnn (BasicRNNCell, LSTMCell).
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()
tf.disable_control_flow_v2()   # what TF1 programs that write such graphs call
print(tf.control_flow_v2_enabled())


def r5(a):
    return [round(float(v), 5) for v in a.ravel()]


def run(name, feed, steps):
    fx = "../fixtures/tf/" + name + "/"
    with tf.Graph().as_default() as g:
        saver = tf.train.import_meta_graph(fx + "model.ckpt-0.meta")
        print(name, sorted(set(op.type for op in g.get_operations() if op.type.startswith("Stack") or op.type == "ControlTrigger")))
        vs = tf.trainable_variables()
        with tf.Session() as sess:
            saver.restore(sess, tf.train.latest_checkpoint(fx))
            print([v.op.name for v in vs])
            print(round(float(sess.run("loss:0", feed)), 5))
            print([r5(x) for x in sess.run(["grad_%d:0" % k for k in range(len(vs))], feed)])
            for _ in range(steps):
                sess.run("train", feed)
            print(round(float(sess.run("loss:0", feed)), 5))
            print([r5(x) for x in sess.run(vs)])


run("whilegrad_loop", {"x:0": [1.0, -0.5]}, 5)
run("whilegrad_cond", {"x:0": [1.0, -0.5]}, 5)
seq = {"x:0": [[[1.0, 0.5], [0.0, -1.0], [0.5, 0.5]], [[-0.5, 1.0], [1.0, 0.0], [0.25, -0.5]]],
       "t:0": [[0.5, -0.25, 0.0], [0.1, 0.2, 0.3]]}
run("whilegrad_rnn", seq, 10)
run("whilegrad_lstm", seq, 10)
