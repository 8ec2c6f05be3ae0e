# The spine issue's first results and bad inputs: each error names the node and the problem.
import tensorflow as tf
import numpy as np

a = [[1., 2.], [3., 4.]]
print(tf.Session().run(tf.matmul(a, a)))
print(tf.Session().run(tf.matmul(a, a, transpose_a=True, transpose_b=True)))
d = tf.constant(np.array([[1., 2.], [3., 4.]]))
print(tf.Session().run(tf.matmul(d, d)).dtype)
x = tf.placeholder(tf.float32, shape=[None, 2], name="x")
y = tf.identity(x * 2 - 1, name="y")
with tf.Session() as sess:
    print(sess.run(y, feed_dict={x: [[1, 2], [3, 4]]}))
    r, s = sess.run([y, tf.reduce_sum(y)], feed_dict={x: [[0.5, 1.5]]})
    print(r, s)
    print(sess.run({"sum": tf.add(1, 2), "op": tf.no_op()}))
    print(sess.run(tf.constant([1, 2, 3]) * 2))
    print(sess.run(tf.constant(True)), sess.run(tf.constant("hi")))


def attempt(what, f):
    try:
        f()
        print(what, "-> no error")
    except Exception as e:
        print(what, "->", type(e).__name__ + ":", str(e).replace("\n\t", " | "))


attempt("unknown op", lambda: tf._make_node("NoSuchOp"))
attempt("unknown attr", lambda: tf._make_node("NoOp", attrs={"bogus": 1}))
attempt("wrong dtype", lambda: tf.add(tf.constant(1), tf.constant(1.5)))
attempt("float for int", lambda: tf.add(tf.constant(1), 1.5))
attempt("MatMul shapes", lambda: tf.matmul(tf.constant([[1., 2., 3.], [4., 5., 6.]]), tf.constant([[1., 2.], [3., 4.]])))
attempt("MatMul rank", lambda: tf.matmul(tf.constant([1., 2.]), tf.constant([[1., 2.], [3., 4.]])))
attempt("Add shapes", lambda: tf.add(tf.constant([[1., 2., 3.], [4., 5., 6.]]), tf.constant([1., 2., 3., 4.])))
with tf.Session() as sess:
    attempt("missing feed", lambda: sess.run(y))
    attempt("fetch not in graph", lambda: sess.run("nope:0"))
    attempt("op not in graph", lambda: sess.run("nope"))
    attempt("feed of the wrong shape", lambda: sess.run(y, feed_dict={x: [1., 2., 3.]}))
    attempt("fetch None", lambda: sess.run(None))
    g2 = tf.Graph()
    with g2.as_default():
        other = tf.constant(1)
    attempt("tensor of another graph", lambda: sess.run(other))
    attempt("feed key not a tensor", lambda: sess.run(y, feed_dict={3: 1}))
    print("the session still works:", sess.run(y, feed_dict={x: [[1., 1.]]}))
attempt("run after close", lambda: sess.run(y))
