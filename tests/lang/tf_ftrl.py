# tf.train.FtrlOptimizer (the linear estimators' default): slots accum and linear with TF's
# names, the variables after a few steps with and without l1 / l2 / shrinkage / another
# learning-rate power, and its argument checks, against TensorFlow.
import numpy as np
import tensorflow as tf

x = tf.constant(np.sin(np.arange(24, dtype=np.float32)).reshape(8, 3))
y = tf.constant(np.cos(np.arange(8, dtype=np.float32)).reshape(8, 1))
for i, kw in enumerate(({}, {"l1_regularization_strength": 0.05, "l2_regularization_strength": 0.1},
                        {"learning_rate_power": -0.7, "initial_accumulator_value": 0.5},
                        {"l2_shrinkage_regularization_strength": 0.2, "l1_regularization_strength": 0.01})):
    with tf.variable_scope("m%d" % i):
        w = tf.get_variable("w", [3, 1], initializer=tf.constant_initializer(0.3))
        b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
    opt = tf.train.FtrlOptimizer(0.5, **kw)
    step = opt.minimize(loss)
    print(sorted(v.op.name for v in tf.global_variables() if v.op.name.startswith("m%d" % i)))
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        for _ in range(5):
            s.run(step)
        print(np.round(s.run(loss), 5), np.round(s.run(w).ravel(), 5), np.round(s.run(opt.get_slot(w, "linear")).ravel(), 5))
for bad in ({"learning_rate_power": 0.5}, {"l1_regularization_strength": -1.0}, {"initial_accumulator_value": -0.1}):
    try:
        tf.train.FtrlOptimizer(0.1, **bad)
    except ValueError as e:
        print("ValueError", e)
