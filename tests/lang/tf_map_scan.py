# tf.map_fn, tf.scan, tf.foldl and tf.foldr as TF 1.x runs them (a tf.while_loop writing a
# TensorArray), their gradients, and a TensorArray written in a loop without an
# element_shape. Expected output from real TF.
import tensorflow as tf

x = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
sq = tf.map_fn(lambda r: r * r + 1.0, x)
pair = tf.map_fn(lambda r: (tf.reduce_sum(r), tf.cast(r[0], tf.int32)), x, dtype=(tf.float32, tf.int32))
run = tf.scan(lambda a, r: a + r, x)
run0 = tf.scan(lambda a, r: a * 0.5 + r, x, initializer=tf.zeros([2]))
back = tf.scan(lambda a, r: a + r, x, reverse=True)
left = tf.foldl(lambda a, r: a * 2.0 + r, x)
right = tf.foldr(lambda a, r: a * 2.0 + r, x)
total = tf.foldl(lambda a, r: a + tf.reduce_sum(r), x, initializer=tf.constant(0.0))
g = tf.gradients(tf.reduce_sum(sq) + tf.reduce_sum(run0) + tf.reduce_sum(left), x)[0]
ta = tf.TensorArray(tf.float32, size=3)
_, ta = tf.while_loop(lambda i, ta: i < 3, lambda i, ta: (i + 1, ta.write(i, tf.fill([2], tf.cast(i, tf.float32)))),
                      [tf.constant(0), ta])
print(sq.get_shape().as_list(), run.get_shape().as_list())
with tf.Session() as s:
    for t in (sq, pair[0], pair[1], run, run0, back, left, right, total, g, ta.stack()):
        print(s.run(t).tolist())
