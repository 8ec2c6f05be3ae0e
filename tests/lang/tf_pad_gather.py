# tf.pad (constant, with constant_values) and tf.gather along an axis, with gradients.
import tensorflow as tf
x = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
p = tf.pad(x, [[1, 0], [0, 2]])
q = tf.pad(x, tf.constant([[0, 1], [1, 1]]), constant_values=7.0)
g1 = tf.gather(x, [2, 0], axis=1)
g0 = tf.gather(x, [1, 1, 0])
gm = tf.gather(x, [[0, 1], [2, 2]], axis=-1)
print(p.op.type, p.shape, q.shape, g1.shape, g0.shape, gm.shape)
dp = tf.gradients(tf.reduce_sum(p * p), x)[0]
dq = tf.gradients(tf.reduce_sum(q * 2.0), x)[0]
dg = tf.gradients(tf.reduce_sum(g1 * g1) + tf.reduce_sum(gm), x)[0]
with tf.Session() as sess:
    for t in sess.run([p, q, g1, g0, gm, dp, dq, dg]):
        print(t)
