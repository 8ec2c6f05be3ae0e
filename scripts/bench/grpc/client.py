# A client in its own process on a running 2-task cluster {worker: [a, b]}, through the
# master of task 0 at TARGET: the two data-plane workloads of scripts/bench/vs_tf.sh.
#   step:     x = assign_add(v, 1) on task 0 feeds y = x * 2 on task 1, y fetched; the
#             best of 3 x STEPS mean time per sess.run after a warm-up.
#   transfer: a 64 MiB float32 variable of task 0 consumed on task 1 (one element taken
#             there, so the whole tensor crosses); the best of STEPS steps.
# Runs unchanged in tfsh (TFSH_PEER=tf for a TF master) and in TF (scripts/tf_oracle/shim.py).
#   client.py TARGET step|transfer STEPS
import sys
import time

import tensorflow as tf

target, what, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
if what == "step":
    with tf.device("/job:worker/task:0"):
        v = tf.Variable(0.0, name="v")
        x = tf.identity(tf.assign_add(v, 1.0))
    with tf.device("/job:worker/task:1"):
        y = x * 2.0
    with tf.Session(target) as sess:
        sess.run(v.initializer)
        for _ in range(200):
            sess.run(y)
        best = None
        for _ in range(3):
            t0 = time.time()
            for _ in range(steps):
                r = sess.run(y)
            dt = (time.time() - t0) / steps
            best = dt if best is None or dt < best else best
        assert float(r) == 2.0 * (200 + 3 * steps), r
        print("step_us %.1f" % (best * 1e6), flush=True)
else:
    with tf.device("/job:worker/task:0"):
        big = tf.Variable(tf.ones([16 * 1024 * 1024]), name="big")
    with tf.device("/job:worker/task:1"):
        moved = big[7] + 1.0
    with tf.Session(target) as sess:
        sess.run(big.initializer)
        sess.run(moved)
        best = None
        for _ in range(steps):
            t0 = time.time()
            r = sess.run(moved)
            dt = time.time() - t0
            best = dt if best is None or dt < best else best
        assert float(r) == 2.0, r
        print("moved_ms %.2f" % (best * 1e3), flush=True)
