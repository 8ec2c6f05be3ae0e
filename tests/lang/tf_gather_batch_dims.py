# tf.gather(..., batch_dims=b): a gather along axis b for each index of the first b axes
# (expected output from TensorFlow 1.x through the oracle)
import numpy as np
import tensorflow as tf

p = tf.constant(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
i1 = tf.constant([[2, 0], [1, 1]])
g1 = tf.gather(p, i1, batch_dims=1)
i2 = tf.constant([[[3, 0], [1, 1], [0, 2]], [[2, 2], [0, 3], [1, 0]]], dtype=tf.int64)
g2 = tf.gather(p, i2, batch_dims=2)
g3 = tf.gather(p, tf.constant([[1], [0]]), axis=1, batch_dims=-1)
ph = tf.placeholder(tf.int32, [None, 2])
g4 = tf.gather(tf.constant([[10, 11, 12], [20, 21, 22], [30, 31, 32]]), ph, batch_dims=1)
print(g1.shape, g2.shape, g3.shape, g4.shape)
grad = tf.gradients(tf.reduce_sum(g1 * g1), p)[0]
with tf.Session() as sess:
    print(sess.run(g1))
    print(sess.run(g2))
    print(sess.run(g3))
    print(sess.run(g4, {ph: [[2, 0], [1, 1], [0, 2]]}))
    print(sess.run(tf.convert_to_tensor(grad)))
