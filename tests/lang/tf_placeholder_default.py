# tf.placeholder_with_default: TF's op, its declared shape (not the default's) as the
# static shape that feeds are checked against, and the gradient passing to the default.
import numpy as np
import tensorflow as tf

x = tf.constant([1., 2., 3.])
p = tf.placeholder_with_default(x * 3, [None], name="pd")
q = tf.placeholder_with_default(tf.zeros([2, 2]), shape=[2, None])
print(p.op.type, p.name, p.shape, q.shape)
g = tf.gradients(tf.reduce_sum(p * p), x)[0]
with tf.Session() as s:
    print(s.run(p), s.run(p, {p: [4., 5.]}), s.run(g))
    print(s.run(q, {q: np.ones((2, 5))}).shape)
    try:
        s.run(q, {q: np.ones((3, 2))})
    except ValueError as e:
        print("ValueError", str(e).split(", which")[0].replace("'", ""))   # TF 1.15 quoted the name, 2.x not
