# Gradients of gradients (gradient penalties, Hessian-vector products): through the
# gradient ops of relu, relu6, sigmoid and tanh, avg_pool, reductions and broadcasting
# adds, against TensorFlow.
import numpy as np
import tensorflow as tf

s = tf.Session()


def run(t):
    v = np.round(s.run(t), 4)
    print(v + v.dtype.type(0))   # -0 and 0 alike: TF's kernels differ there by dtype


x = tf.constant(np.sin(np.arange(12, dtype=np.float64) * 1.3).reshape(3, 4) * 3.0)
v = tf.constant(np.cos(np.arange(12, dtype=np.float64)).reshape(3, 4))
for name, fn in (("sigmoid", tf.sigmoid), ("tanh", tf.tanh), ("relu", lambda t: tf.nn.relu(t) ** 2),
                 ("relu6", lambda t: tf.nn.relu6(t) * t)):
    y = tf.reduce_sum(fn(x) * v)
    g = tf.gradients(y, x)[0]
    hv = tf.gradients(g, x, grad_ys=v)[0]           # Hessian times v
    gg = tf.gradients(tf.reduce_sum(g * g), [x, v])
    print(name, g.op.type)
    run(hv)
    run(gg[0])
    run(gg[1])

# avg_pool's gradient is linear in dy: the gradient of a penalty on it
img = tf.constant(np.sin(np.arange(2 * 4 * 4 * 2, dtype=np.float32)).reshape(2, 4, 4, 2))
w = tf.constant(np.cos(np.arange(2 * 2 * 2 * 2, dtype=np.float32)).reshape(2, 2, 2, 2))
p = tf.nn.avg_pool(tf.nn.conv2d(img, w, [1, 1, 1, 1], "SAME"), [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
gi = tf.gradients(tf.reduce_sum(tf.tanh(p)), img)[0]
pen = tf.reduce_sum(gi ** 2)
run(pen)
run(tf.gradients(pen, w)[0][:, :, 0, 1])

# max_pool's gradient (MaxPoolGrad) and its gradient (MaxPoolGradGrad), SAME and VALID
for ks, st, pad in (([1, 2, 2, 1], [1, 2, 2, 1], "VALID"), ([1, 3, 3, 1], [1, 2, 2, 1], "SAME")):
    q = tf.nn.max_pool(tf.nn.conv2d(img, w, [1, 1, 1, 1], "SAME"), ks, st, pad)
    gi = tf.gradients(tf.reduce_sum(tf.sin(q) * q), img)[0]
    pen = tf.reduce_sum(gi ** 2)
    gw = tf.gradients(pen, w)[0]
    run(pen)
    run(gw[:, :, 1, 0])
    gq = tf.gradients(q, img, grad_ys=tf.cos(q))[0]              # MaxPoolGrad
    run(tf.gradients(gq, img, grad_ys=tf.sin(img))[0][0, :, :, 1])   # through MaxPoolGradGrad
    run(tf.gradients(tf.gradients(gq, img, grad_ys=img)[0], img, grad_ys=tf.cos(gq))[0][1, :, :, 0])

# reductions and broadcast adds inside the first gradient
a = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3) * 0.25)
b = tf.constant([0.5, -1.0, 2.0])
z = tf.reduce_mean(tf.square(a + b), axis=1, keepdims=True) + tf.reduce_sum(tf.sin(a * b), axis=0)
ga, gb = tf.gradients(z, [a, b])
for g2 in tf.gradients(tf.reduce_sum(ga ** 2) + tf.reduce_sum(gb ** 2), [a, b]):
    run(g2)
