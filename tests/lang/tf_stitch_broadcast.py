# Ops a TF client's graphs bring (tf.keras's losses and the gradients of a mean):
# DivNoNan, DynamicStitch, BroadcastTo, IdentityN, and their errors; expected output from TF 2.21.
import numpy as np
import tensorflow as tf

x = tf.constant([1., 2., -3.])
y = tf.constant([0., 4., 2.])
z = tf.div_no_nan(x, y)
g = tf.gradients(tf.reduce_sum(z * tf.constant([1., 2., 3.])), [x, y])
st = tf.dynamic_stitch([tf.constant([0, 2]), tf.constant([[1], [3]])],
                       [tf.constant([[1., 1.], [2., 2.]]), tf.constant([[[3., 3.]], [[4., 4.]]])])
over = tf.dynamic_stitch([tf.constant([0, 1]), tf.constant([1])], [tf.constant([7, 8]), tf.constant([9])])
b = tf.broadcast_to(tf.constant([[1], [2]], tf.int32), [2, 3])
b3 = tf.broadcast_to(tf.constant([5., 6.]), tf.constant([2, 2, 2]))
p = tf.placeholder(tf.int32, [None])
bad = tf.broadcast_to(tf.constant([1, 2, 3]), p)
with tf.Session() as s:
    print(z.op.type, s.run(z))
    print([a.tolist() for a in s.run(g)])
    print(st.shape, s.run(st).tolist())
    print(s.run(over).tolist())
    print(b.shape, s.run(b).tolist())
    print(b3.shape, s.run(b3).tolist())
    try:
        s.run(bad, {p: [2, 2]})
    except tf.errors.InvalidArgumentError as e:
        print("InvalidArgumentError:", [l for l in e.message.splitlines() if "ncompatible" in l][0].strip())
i0 = tf.constant([1., 2.])
a, c = tf.identity_n([i0, tf.constant(3)])
ga = tf.gradients(tf.reduce_sum(a * a), [i0])
with tf.Session() as s:
    print(a.dtype.name, c.dtype.name, [v.tolist() for v in s.run([a, c])], a.op.type)
    print(s.run(ga)[0].tolist())
