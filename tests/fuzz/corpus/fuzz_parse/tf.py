import tensorflow as tf
from __future__ import print_function
x = tf.placeholder(tf.float32, [None, 784])
with tf.Session() as sess:
    print(sess.run(x, feed_dict={x: [[0.0] * 784]}))
