# The CPU kernels' fast paths (expected output from real TF through scripts/tf_oracle):
# Conv2D over few columns (a 5x5 window over one channel, 3x3 over three: the direct
# kernel) with SAME and VALID padding, strides 1 and 2, at image edges; MaxPool and its
# gradient with ties in the windows (the first maximum takes the gradient) and overlapping
# windows; AvgPool's gradient; BiasAdd and its gradient NHWC and NCHW; sums over leading
# axes, over all, and reductions that reduce nothing.
import numpy as np
import tensorflow as tf


def r4(a):   # 3 decimals: the sums' order differs from TF's in the last bits
    return [round(float(v), 3) + 0.0 for v in np.asarray(a).reshape(-1)]


xv = ((np.arange(2 * 9 * 7, dtype=np.float32).reshape(2, 9, 7, 1) * 7) % 11) / 3.7 - 1.0
wv = ((np.arange(5 * 5 * 16, dtype=np.float32).reshape(5, 5, 1, 16) * 5) % 13) / 9.3 - 0.7
x = tf.constant(xv)
w = tf.constant(wv)
for s, p in ((1, "SAME"), (2, "SAME"), (1, "VALID"), (2, "VALID")):
    y = tf.nn.conv2d(x, w, [1, s, s, 1], p)
    print("conv5x5x1", s, p, y.shape.as_list())
    with tf.Session() as sess:
        print(r4(sess.run(tf.reduce_sum(y, [0, 1, 2]))))
        print(r4(sess.run(y)[1, :, :, 3]))

x3 = tf.constant(((np.arange(2 * 6 * 5 * 3, dtype=np.float32).reshape(2, 6, 5, 3) * 3) % 7) / 2.3)
w3 = tf.constant(((np.arange(3 * 3 * 3 * 8, dtype=np.float32).reshape(3, 3, 3, 8) * 11) % 5) / 4.1 - 0.5)
y3 = tf.nn.conv2d(x3, w3, [1, 2, 2, 1], "SAME")
with tf.Session() as sess:
    print("conv3x3x3", y3.shape.as_list(), r4(sess.run(y3)[0, :, :, 5]))

# pools: integer values with ties
pv = ((np.arange(2 * 6 * 6 * 3, dtype=np.float32).reshape(2, 6, 6, 3) * 5) % 4)
p = tf.constant(pv)
for k, s, pad in ((2, 2, "VALID"), (3, 2, "SAME"), (3, 1, "VALID")):
    for f in (tf.nn.max_pool, tf.nn.avg_pool):
        y = f(p, [1, k, k, 1], [1, s, s, 1], pad)
        up = tf.constant(np.arange(np.prod(y.shape.as_list()), dtype=np.float32).reshape(y.shape.as_list()) % 5 + 1)
        g = tf.gradients(y, p, grad_ys=up)[0]
        with tf.Session() as sess:
            yv, gv = sess.run([y, g])
        print(f.__name__, k, s, pad, r4(yv[1, :, :, 1]))
        print(r4(gv[1, :, :, 1]))
        print(r4(gv[0, :, :, 2]))

b = tf.constant([0.5, -1.0, 2.0])
for fmt, xs in (("NHWC", [2, 4, 5, 3]), ("NCHW", [2, 3, 4, 5])):
    xb = tf.constant(np.arange(np.prod(xs), dtype=np.float32).reshape(xs) % 7 - 3.0)
    y = tf.nn.bias_add(xb, b, data_format=fmt)
    g = tf.gradients(y * y, b)[0]
    with tf.Session() as sess:
        print("bias_add", fmt, r4(sess.run(y).reshape(-1)[:12]), r4(sess.run(g)))

m = tf.constant(np.arange(4 * 3 * 5, dtype=np.float32).reshape(4, 3, 5) / 7.3 - 2.0)
with tf.Session() as sess:
    for ax in ([0], [0, 1], None, [], [2], [0, 2]):
        print("sum", ax, r4(sess.run(tf.reduce_sum(m, ax))), r4(sess.run(tf.reduce_mean(m, ax))))
    v = tf.constant([[1.0, -2.0, 3.0]])
    a = tf.constant(np.ones((4, 3), dtype=np.float32))
    print("sum_to", r4(sess.run(tf.gradients(tf.reduce_sum((a + v) * (a + v)), v)[0])))
