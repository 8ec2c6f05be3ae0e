# tf.while_loop / tf.cond refusing bad arguments, with TF 1.x's words (expected output
# from real TF).
import tensorflow as tf


def attempt(fn):
    try:
        fn()
        print("no error")
    except (TypeError, ValueError) as e:
        print(type(e).__name__ + ":", str(e).split("\n")[0])


i0 = tf.constant(0)
attempt(lambda: tf.while_loop(1, lambda i: i + 1, [i0]))
attempt(lambda: tf.while_loop(lambda i: i < 3, 2, [i0]))
attempt(lambda: tf.cond(tf.logical_and(tf.constant(True), tf.placeholder(tf.bool)), 1, lambda: 2))
attempt(lambda: tf.cond(tf.placeholder(tf.bool), lambda: tf.constant(1), 2))
m0 = tf.ones([1, 2])
grow = lambda i, m: (i + 1, tf.concat([m, m * 2.0], 0))
attempt(lambda: tf.while_loop(lambda i, m: i < 3, grow, [i0, m0]))
# a shape invariant lets it grow (the placeholder's shape is a TensorShape in both)
free = tf.placeholder(tf.float32, [None, 2]).get_shape()
i, m = tf.while_loop(lambda i, m: i < 3, grow, [i0, m0], shape_invariants=[i0.get_shape(), free])
print(m.get_shape().as_list())
g = tf.gradients(tf.reduce_sum(m), m0)[0]
with tf.Session() as s:
    print(s.run(m).tolist(), s.run(g).tolist())
