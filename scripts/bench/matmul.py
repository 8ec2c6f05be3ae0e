# MatMul through sess.run, n x n x n float32, the product run as a target (its buffer is
# recycled step to step, as in training): the best of several steps after a warm-up.
# Plain Python: tfsh and TensorFlow (through scripts/tf_oracle/shim.py) run it alike.
#   matmul.py N [N ...]   prints "BEST matmul_N SECONDS" per size
import sys
import time
import tensorflow as tf

for arg in sys.argv[1:]:
    n = int(arg)
    flops = 2.0 * n * n * n
    reps = max(3, min(30, int(3e10 / flops)))
    g = tf.Graph()
    with g.as_default():
        a = tf.Variable(tf.random_uniform([n, n]), name="a")
        b = tf.Variable(tf.random_uniform([n, n]), name="b")
        c = tf.matmul(a, b)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(c.op)
            best = 1e30
            for _ in range(reps):
                t = time.perf_counter()
                sess.run(c.op)
                best = min(best, time.perf_counter() - t)
    print("BEST matmul_%d %.6f" % (n, best))
    sys.stdout.flush()
