# Trigonometric, hyperbolic and error functions with their gradients, Round and Atan2,
# against TensorFlow (printed to 5 decimals: libm and Eigen may differ in the last bit).
import numpy as np
import tensorflow as tf

x = tf.constant([-0.9, -0.3, 0.0, 0.2, 0.7])
y = tf.constant([1.0, -2.0, 0.5, -0.1, 3.0])
fns = [("sin", tf.sin), ("cos", tf.cos), ("tan", tf.tan), ("asin", tf.asin), ("acos", tf.acos), ("atan", tf.atan),
       ("sinh", tf.sinh), ("cosh", tf.cosh), ("expm1", tf.expm1), ("erf", tf.erf), ("erfc", tf.math.erfc)]
with tf.Session() as s:
    for name, f in fns:
        v = f(x)
        g = tf.gradients(tf.reduce_sum(v * tf.range(1.0, 6.0)), x)[0]
        a, b = s.run([v, g])
        print(name, np.round(a, 5), np.round(b, 5))
    t = tf.atan2(y, x)
    gy, gx = tf.gradients(tf.reduce_sum(t), [y, x])
    print("atan2", np.round(s.run(t), 5), np.round(s.run(gy), 5), np.round(s.run(gx), 5))
    print(s.run(tf.round(tf.constant([0.5, 1.5, 2.5, -0.5, -2.5, 2.6, -1.4], tf.float64))))
    print(np.round(s.run(tf.atan2(tf.constant([[1.0], [-1.0]]), tf.constant([0.0, -1.0]))), 5))
