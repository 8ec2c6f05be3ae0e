# Session.partial_run_setup: tfsh has no partial runs, and says so with TF's error class
# (TF 2.21 runs them; the words are tfsh's).
import tensorflow as tf

a = tf.placeholder(tf.float32, [])
with tf.Session() as sess:
    try:
        sess.partial_run_setup([a + 1.0], [a])
    except tf.errors.UnimplementedError as e:
        print("UnimplementedError:", e.message)
    print(callable(sess.partial_run))
