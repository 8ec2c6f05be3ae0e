# A tf.while_loop of N tiny iterations (a counter and a float sum), best wall time of a few
# sess.run after a warm-up. Run unchanged by tfsh and by TF 1.x (scripts/bench/while_loop.sh).
import sys
import time
import tensorflow as tf

n = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
i, s = tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + 1.0), [tf.constant(0), tf.constant(0.0)])
with tf.Session() as sess:
    print(sess.run([i, s]))
    best = 1e9
    for _ in range(7):
        t0 = time.time()
        sess.run(s)
        best = min(best, time.time() - t0)
print("BEST %.6f" % best)
