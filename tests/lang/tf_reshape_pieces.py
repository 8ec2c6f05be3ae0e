# tf.reshape to a shape built from tf.shape() pieces and constants keeps what is known, as
# TF's shape inference does ([tf.shape(x)[0], -1, 4] is (?, ?, 4)), against TensorFlow.
import numpy as np
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, None, 8])
a = tf.reshape(x, [tf.shape(x)[0], -1, 4])
b = tf.reshape(x, [-1, tf.shape(x)[1], 2, 4])
c = tf.reshape(x, tf.stack([tf.shape(x)[0] * 2, -1]))
y = tf.placeholder(tf.float32, [3, 5, 8])
d = tf.reshape(y, [tf.shape(y)[0], -1, 4])
e = tf.reshape(y, [tf.shape(y)[-1], -1])
f = tf.reshape(y, [3, tf.shape(x)[2], 5])
print(a.shape, b.shape, c.shape, d.shape, e.shape, f.shape)
with tf.Session() as s:
    print(s.run(tf.shape(d), {y: np.zeros((3, 5, 8))}))
