# SelectV2 (tf.where_v2: condition, x and y broadcast as numpy does) and Reciprocal, with
# their gradients, against TensorFlow (TF 2's graphs use both: clip_by_value's and Log's gradients).
import numpy as np
import tensorflow as tf
c = tf.constant([[True], [False]])
x = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
y = tf.constant([10.0, 20.0, 30.0])
s = tf.where_v2(c, x, y)
gx, gy = tf.gradients(tf.reduce_sum(s * tf.constant([1.0, 2.0, 3.0])), [x, y])
r = tf.reciprocal(tf.constant([0.5, -4.0, 2.0]))
gr = tf.gradients(tf.reduce_sum(r * tf.constant([1.0, 2.0, 3.0])), r.op.inputs[0])[0]
with tf.Session() as sess:
    print(s.op.type, r.op.type)
    print(sess.run(s))
    print(sess.run(gx), sess.run(gy))
    print(sess.run(r), sess.run(gr))
    print(sess.run(tf.where_v2(tf.constant(False), 1.0, tf.constant([[7.0, 8.0]]))))
