# tf.nn.conv2d_transpose (values and both gradients, SAME/VALID, strides 1/2), tf.layers.conv2d_transpose,
# conv1d, max_pooling1d and average_pooling1d: shapes, variables and values against TensorFlow.
import numpy as np
import tensorflow as tf
s = tf.Session()
def run(t):
    v = s.run(t)
    print(np.round(v, 3) if isinstance(v, np.ndarray) and v.dtype == np.float32 else v)
x = tf.constant(np.sin(np.arange(2 * 3 * 3 * 2, dtype=np.float32)).reshape(2, 3, 3, 2))
f = tf.constant(np.cos(np.arange(3 * 3 * 4 * 2, dtype=np.float32)).reshape(3, 3, 4, 2))
for strides, pad, osz in (([1, 1, 1, 1], "SAME", 3), ([1, 2, 2, 1], "SAME", 6), ([1, 2, 2, 1], "VALID", 7), ([1, 1, 1, 1], "VALID", 5)):
    y = tf.nn.conv2d_transpose(x, f, [2, osz, osz, 4], strides, padding=pad)
    print(y.shape)
    run(y[1, :, :, 2])
    gx, gf = tf.gradients(tf.reduce_sum(y * y), [x, f])
    run(gx[0, :, :, 1]); run(gf[:, :, 3, 0])
for pad in ("same", "valid"):
    with tf.variable_scope("v" + pad):
        l = tf.layers.conv2d_transpose(x, 3, (3, 2), strides=(2, 2), padding=pad, kernel_initializer=tf.constant_initializer(0.1), bias_initializer=tf.constant_initializer(0.5), activation=tf.nn.relu)
    print(l.shape, [(v.name, v.shape.as_list()) for v in tf.trainable_variables() if v.name.startswith("v" + pad)])
p = tf.placeholder(tf.float32, [None, None, None, 2])
l2 = tf.layers.conv2d_transpose(p, 1, 2, strides=2)
print(l2.shape)
seq = tf.constant(np.sin(np.arange(2 * 9 * 3, dtype=np.float32)).reshape(2, 9, 3))
c1 = tf.layers.conv1d(seq, 4, 3, padding="same", kernel_initializer=tf.constant_initializer(0.2), name="c1")
m1 = tf.layers.max_pooling1d(c1, 2, 2)
a1 = tf.layers.average_pooling1d(seq, 3, 2, padding="same")
print(c1.shape, m1.shape, a1.shape, [v.name for v in tf.trainable_variables() if v.name.startswith("c1")])
s.run(tf.global_variables_initializer())
run(l[0, :, :, 1])
run(m1[1]); run(a1[0])
print(s.run(l2, {p: np.ones((1, 2, 2, 2), np.float32)}).shape)
