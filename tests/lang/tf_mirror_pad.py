# tf.pad with mode REFLECT and SYMMETRIC (MirrorPad) and their gradient (MirrorPadGrad),
# with TF's checks on the paddings (expected output from TensorFlow 1.x through the oracle)
import numpy as np
import tensorflow as tf

x = tf.constant([[1., 2., 3.], [4., 5., 6.]])
r = tf.pad(x, [[1, 1], [2, 2]], "REFLECT")
s = tf.pad(x, [[1, 1], [2, 2]], mode="SYMMETRIC")
s2 = tf.pad(x, [[2, 0], [3, 1]], mode="symmetric")
v = tf.constant(np.arange(5, dtype=np.int32))
rv = tf.pad(v, [[4, 2]], "REFLECT")
x3 = tf.constant(np.arange(12, dtype=np.float64).reshape(1, 3, 4))
r3 = tf.pad(x3, tf.constant([[0, 0], [1, 2], [3, 0]], dtype=tf.int64), "REFLECT")
ph = tf.placeholder(tf.float32, [None, 3])
rp = tf.pad(ph, [[1, 1], [1, 1]], "REFLECT")
print(r.shape, s.shape, s2.shape, rv.shape, r3.shape, rp.shape)
print(r.op.type, s.op.type)
w = tf.constant([[1., -2., 3., 0.5, 7., 1.5, -1.], [2., 1., 0., 4., -3., 2., 1.], [1., 1., 1., 1., 1., 1., 1.],
                 [0., 2., 0., 2., 0., 2., 0.]])
gr = tf.gradients(tf.reduce_sum(r * w), x)[0]
gs = tf.gradients(tf.reduce_sum(s * w), x)[0]
g3 = tf.gradients(tf.reduce_sum(r3 * r3), x3)[0]
dw = tf.gradients(r, x, grad_ys=w)[0]   # MirrorPadGrad, whose gradient is MirrorPad
gg = tf.gradients(dw, w, grad_ys=tf.constant([[1., 2., 3.], [4., 5., 6.]]))[0]


def _first(msg):   # TF's words, without the node and line decorations
    return msg[msg.index("paddings must"):].split("\n")[0].split("[[")[0].strip()


with tf.Session() as sess:
    for t in [r, s, s2, rv, r3, gr, gs, g3, dw, gg]:
        print(sess.run(t))
    print(sess.run(rp, {ph: [[1, 2, 3], [4, 5, 6]]}))
    for pads, mode in [([[0, 0], [3, 0]], "REFLECT"), ([[0, 0], [0, 4]], "SYMMETRIC"), ([[0, 0], [-1, 0]], "REFLECT")]:
        q = tf.placeholder(tf.int32, [2, 2])
        try:
            sess.run(tf.pad(x, q, mode), {q: pads})
        except tf.errors.InvalidArgumentError as e:
            print("InvalidArgumentError:", _first(e.message))
