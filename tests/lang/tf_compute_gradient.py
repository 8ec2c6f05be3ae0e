# tf.test.compute_gradient and compute_gradient_error (TF 1.x's gradient checker): the
# Jacobians' shapes and values at given points, a list of xs, and the error of a few ops'
# gradients, against TensorFlow.
import numpy as np
import tensorflow as tf

with tf.Session():
    x = tf.placeholder(tf.float64, [2, 3])
    y = tf.reduce_sum(tf.sin(x) * x, axis=1)
    jt, jn = tf.test.compute_gradient(x, [2, 3], y, [2], x_init_value=np.arange(6.0).reshape(2, 3) * 0.3)
    print(jt.shape, jn.shape, jt.dtype)
    print(np.round(jt, 4))
    print(np.abs(jt - jn).max() < 1e-6)
    a = tf.constant([[0.5, -1.0], [2.0, 0.25]], tf.float64)
    b = tf.constant([[1.5, 0.5, -2.0], [0.1, 0.2, 0.3]], tf.float64)
    m = tf.matmul(a, b)
    pairs = tf.test.compute_gradient([a, b], [[2, 2], [2, 3]], m, [2, 3],
                                     x_init_value=[np.array([[0.5, -1.0], [2.0, 0.25]]),
                                                   np.array([[1.5, 0.5, -2.0], [0.1, 0.2, 0.3]])])
    for t, n in pairs:
        print(t.shape, np.round(t, 4).tolist() == np.round(n, 4).tolist())
    img = tf.constant(np.sin(np.arange(1 * 5 * 5 * 2)).reshape(1, 5, 5, 2), tf.float64)
    f = tf.constant(np.cos(np.arange(3 * 3 * 2 * 2)).reshape(3, 3, 2, 2), tf.float64)
    conv = tf.nn.conv2d(img, f, [1, 2, 2, 1], "SAME")
    print(tf.test.compute_gradient_error(img, [1, 5, 5, 2], conv, [1, 3, 3, 2],
                                         x_init_value=np.sin(np.arange(50.0)).reshape(1, 5, 5, 2)) < 1e-6)
    p = tf.nn.avg_pool(img, [1, 2, 2, 1], [1, 1, 1, 1], "VALID")
    print(tf.test.compute_gradient_error(img, [1, 5, 5, 2], p, [1, 4, 4, 2]) < 1e-6)
    x32 = tf.placeholder(tf.float32, [4])
    e = tf.test.compute_gradient_error(x32, [4], tf.tanh(x32), [4], x_init_value=np.array([0.1, 0.5, -0.3, 1.0]))
    print(type(e).__name__, e < 1e-2)
