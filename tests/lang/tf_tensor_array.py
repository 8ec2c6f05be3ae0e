# tf.TensorArray in a tf.while_loop: writes in the body, stack, read, unstack,
# and gradients through it. Expected output from real TF.
import tensorflow as tf

x = tf.constant([1.0, 2.0, 3.0])
n = tf.constant(4)
ta = tf.TensorArray(tf.float32, size=n, element_shape=[3])


def body(i, acc, ta):
    v = acc * x + tf.cast(i, tf.float32)
    return i + 1, v, ta.write(i, v)


_, last, ta = tf.while_loop(lambda i, acc, ta: i < n, body, [tf.constant(0), tf.ones([3]), ta])
stacked = ta.stack()
third = ta.read(2)
src = tf.TensorArray(tf.float32, size=3).unstack(tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
g = tf.gradients(tf.reduce_sum(stacked), x)[0]
with tf.Session() as s:
    print(s.run(stacked).tolist())
    print(s.run([last, third]), s.run(src.read(1)), s.run(src.size()))
    print(s.run(g).tolist())
