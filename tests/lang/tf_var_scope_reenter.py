# Re-entering a variable scope by name starts its subscopes' default names over, as TF's
# variable scope store does: aymericdamien's tensorflow_dataset_api.py builds its ConvNet
# twice, the second time under variable_scope('ConvNet', reuse=True), and its unnamed
# tf.layers must find conv2d/kernel and conv2d_1/kernel again (tfsh looked for
# conv2d_2/kernel). Entering with a VariableScope object keeps the counts as they were.
# Expected output from TF.
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 8, 8, 1])


def net(x, reuse):
    with tf.variable_scope("ConvNet", reuse=reuse):
        h = tf.layers.conv2d(x, 2, 3)
        h = tf.layers.conv2d(h, 2, 3)
        h = tf.layers.dense(tf.layers.flatten(h), 3)
        with tf.variable_scope(None, default_name="head"):
            w = tf.get_variable("w", [3])
    return h, w


a, wa = net(x, False)
b, wb = net(x, True)
print(a.name, b.name, wa.name, wb.name)
names = []
with tf.variable_scope("outer") as outer:
    for _ in range(2):
        with tf.variable_scope(None, default_name="blk") as sc:
            names.append(sc.name)
with tf.variable_scope(outer):
    for _ in range(2):
        with tf.variable_scope(None, default_name="blk") as sc:
            names.append(sc.name)
    with tf.variable_scope(None, default_name="cell") as sc:
        names.append(sc.name)
with tf.variable_scope(outer):
    with tf.variable_scope(None, default_name="cell") as sc:
        names.append(sc.name)
with tf.variable_scope("outer", reuse=True):
    with tf.variable_scope("x"):
        with tf.variable_scope(None, default_name="blk") as sc:
            names.append(sc.name)
print(names)
for v in tf.global_variables():
    print(v.name, v.get_shape().as_list())
