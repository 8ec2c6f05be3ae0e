# tf.py_func: numpy in, numpy out, in a session and inside a tf.data map; the errors of a
# function that fails or returns the wrong dtype or count, against TensorFlow.
import numpy as np
import tensorflow as tf

def f(x, y):
    return (x * 2 + y).astype(np.float32)

def g(x):
    return np.array([x.sum()], np.int64), x[::-1].copy()

def bad_value(x):
    raise ValueError("no good: %d" % x)

a = tf.constant([1.0, 2.0])
b = tf.constant([10.0, 20.0])
r = tf.py_func(f, [a, b], tf.float32)
print(r.dtype, r.shape, r.op.type)
r2 = tf.py_func(g, [tf.constant([1, 2, 3])], [tf.int64, tf.int32])
print(type(r2).__name__, len(r2), r2[1].dtype)
sl = tf.py_func(lambda x: x + 1, [a], tf.float32, stateful=False)
print(sl.op.type)
cases = [tf.py_func(lambda x: 1 // 0, [tf.constant(1)], tf.int32),
         tf.py_func(bad_value, [tf.constant(7)], tf.int32),
         tf.py_func(lambda x: x.astype(np.float64), [a], tf.float32),
         tf.py_func(lambda x: (x, x), [a], tf.float32),
         tf.py_func(lambda x: [x], [a], [tf.float32, tf.float32])]
with tf.Session() as s:
    print(s.run(r), s.run(r2), s.run(sl))
    print(s.run(tf.reduce_sum(r) * 2))
    for t in cases:
        try:
            s.run(t)
            print("ran")
        except tf.errors.OpError as e:
            lines = [l.strip() for l in e.message.splitlines() if l.strip() and "Traceback" not in l
                     and not l.startswith(("Graph", "Detected", "  ", "Node:", "\t", "File"))]
            print(type(e).__name__ + ":", lines[0])
ds = tf.data.Dataset.from_tensor_slices([1, 2, 3]).map(lambda x: tf.py_func(lambda v: v * 10, [x], tf.int32))
n = tf.data.make_one_shot_iterator(ds).get_next()
with tf.Session() as s:
    print([s.run(n) for _ in range(3)])
