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
