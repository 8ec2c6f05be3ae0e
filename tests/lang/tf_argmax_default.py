# tf.argmax / tf.argmin without axis or dimension reduce axis 0, as TF1's do (aymericdamien's
# and hunkim's scripts call tf.argmax(y) on vectors); dimension= and axis= still work.
import tensorflow as tf
x = tf.constant([[1, 5, 0], [3, 2, 4]])
with tf.Session() as s:
    for t in (tf.argmax(x), tf.argmin(x), tf.argmax(x, 1), tf.argmax(x, dimension=1),
              tf.math.argmax(x), tf.argmax(x, axis=1, output_type=tf.int32)):
        v = s.run(t)
        print(v.tolist(), v.dtype, t.dtype)
