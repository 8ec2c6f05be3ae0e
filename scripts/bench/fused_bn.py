# Batch normalization of a [32, 32, 32, 64] activation, forward and backward (the gradients
# of x, gamma and beta and the moving-average updates), fused (FusedBatchNormV3 and
# FusedBatchNormGradV3) and composite (moments, Rsqrt, Mul, Add ... and their gradients):
# best wall time of a few sess.run after a warm-up. Run unchanged by tfsh and by TF 1.x
# (scripts/bench/fused_bn.sh).
import sys
import time
import numpy as np
import tensorflow as tf

shape = [int(a) for a in sys.argv[1].split("x")] if len(sys.argv) > 1 else [32, 32, 32, 64]
xv = (np.arange(shape[0] * shape[1] * shape[2] * shape[3], dtype=np.float32) % 97.0 / 13.0).reshape(shape)
x = tf.Variable(xv, name="x")
runs = {}
for fused in (True, False):
    y = tf.layers.batch_normalization(x, training=True, fused=fused, name="fused" if fused else "composite")
    vs = [v for v in tf.trainable_variables() if v.name.startswith("fused/" if fused else "composite/")]
    gs = tf.gradients(tf.reduce_sum(y * y), [x] + vs)
    ups = [u for u in tf.get_collection(tf.GraphKeys.UPDATE_OPS) if u.name.startswith("fused/" if fused else "composite/")]
    runs["fused" if fused else "composite"] = tf.group(*(gs + ups))
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for name in ("fused", "composite"):
        sess.run(runs[name])
        best = 1e9
        for _ in range(7):
            t0 = time.time()
            sess.run(runs[name])
            best = min(best, time.time() - t0)
        print("BEST %s %.6f" % (name, best))
