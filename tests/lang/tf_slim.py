# tf.contrib.slim and tf.contrib.layers' conv2d, conv2d_transpose, max_pool2d, avg_pool2d,
# layer_norm, repeat, stack and one-hot labels (variable names, shapes, collections and
# values), arg_scope, slim.losses (logits first) and create_train_op, against TF 1.15's code
# (the tf-slim package under TensorFlow).
import numpy as np
import tensorflow as tf
import tensorflow.contrib.slim as slim

x = tf.constant(np.sin(np.arange(2 * 8 * 8 * 3) * 0.37).reshape(2, 8, 8, 3).astype(np.float32))
c = tf.constant_initializer
with slim.arg_scope([slim.conv2d, slim.fully_connected], weights_initializer=c(0.05),
                    weights_regularizer=slim.l2_regularizer(0.01)):
    with slim.arg_scope([slim.conv2d], padding="SAME", activation_fn=tf.nn.relu):
        net = slim.conv2d(x, 4, [3, 3], scope="conv1")
        net = slim.max_pool2d(net, [2, 2], scope="pool1")
        net = slim.repeat(net, 2, slim.conv2d, 5, [3, 3], scope="conv2")
        net = slim.stack(net, slim.conv2d, [(6, [1, 1]), (3, [3, 3])], scope="st")
        up = slim.conv2d_transpose(net, 2, [3, 3], stride=2, scope="up", weights_initializer=c(0.1))
        ln = slim.layer_norm(up, scope="ln")
        pooled = slim.avg_pool2d(net, [2, 2], stride=1, padding="SAME")
    flat = slim.flatten(net)
    logits = slim.fully_connected(flat, 3, activation_fn=None, scope="fc")
print(net.shape, up.shape, ln.shape, pooled.shape, logits.shape)
print(net.op.name, pooled.op.name)
print([v.op.name for v in slim.get_model_variables()])
print([v.op.name for v in slim.get_variables("conv2")])
print([v.op.name for v in slim.get_variables(suffix="biases")])
print(len(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)))
labels = slim.one_hot_encoding(tf.constant([2, 0]), 3)
slim.losses.softmax_cross_entropy(logits, labels)
total = slim.losses.get_total_loss()
step = tf.train.get_or_create_global_step()
train_op = slim.learning.create_train_op(total, tf.train.GradientDescentOptimizer(0.1))
with tf.Session() as s:
    s.run(tf.global_variables_initializer())
    print(np.round(s.run(net)[1, :, :, 0], 4))
    print(np.round(s.run(ln)[0, :3, :3, 1], 4))
    print(np.round(s.run(pooled)[0, :, :, 2], 4))
    print(s.run(labels))
    print(np.round(s.run(total), 5))
    for _ in range(3):
        print(np.round(s.run(train_op), 5))
    print(s.run(step))
