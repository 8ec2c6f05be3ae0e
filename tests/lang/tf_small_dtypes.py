# The small and complex dtypes legacy models use: tf.int16, tf.uint16, tf.int8,
# tf.float16 (tf.half) and tf.complex64 as dtypes, fed and fetched, cast to and from
# float32 and int32, Add/Sub/Mul/Maximum on the small integers (aymericdamien's
# basic_operations.py adds int16 placeholders), and TF's TypeError for an op without them.
# Expected output: real TensorFlow's (scripts/tf_oracle/run.sh --write).
import numpy as np
import tensorflow as tf

names = ["int16", "uint16", "int8", "float16", "half", "complex64"]
for n in names:
    d = getattr(tf, n)
    print(n, repr(d), d, d.name, d.size, d.is_integer, d.is_floating, d.is_complex,
          d.as_numpy_dtype.__name__, d.as_datatype_enum)
    print("  as_dtype:", tf.as_dtype(n), tf.as_dtype(np.dtype(d.name)), tf.as_dtype(d.as_numpy_dtype),
          tf.as_dtype(d.as_datatype_enum), tf.as_dtype(n) == d)
print(tf.half is tf.float16, tf.int16.min, tf.int16.max, tf.uint16.max, tf.int8.min, tf.float16.max)
print(tf.complex64.real_dtype, tf.int16.is_unsigned, tf.uint16.is_unsigned)

a = tf.placeholder(tf.int16, name="a")
b = tf.placeholder(tf.int16, name="b")
u = tf.placeholder(tf.uint16, shape=[None])
i8 = tf.placeholder(tf.int8)
h = tf.placeholder(tf.float16)
c = tf.constant([1 + 2j, 3 - 1j], dtype=tf.complex64)
k = tf.constant([7, -3], dtype=tf.int16)
print(a.dtype, u.dtype, u.shape, h.dtype, c.dtype, k.dtype, tf.constant(1.5, tf.half).dtype)

with tf.Session() as sess:
    r = sess.run(a, {a: [1, 2, 3]})
    print(r, r.dtype, type(r).__name__)
    r = sess.run(u, {u: np.array([0, 65535], np.uint16)})
    print(r, r.dtype)
    r = sess.run(h, {h: [0.1, 2.5, -1]})
    print(r, r.dtype)
    r = sess.run(c)
    print(r, r.dtype)
    print(sess.run(k), sess.run(k).dtype, sess.run(tf.constant(3, tf.int8)), sess.run(tf.constant(0.5, tf.float16)))
    # tf.cast to and from float32 and int32
    print(sess.run(tf.cast(a, tf.float32), {a: [1, -2, 300]}))
    print(sess.run(tf.cast(a, tf.int32), {a: [1, -2, 300]}).dtype)
    print(sess.run(tf.cast(tf.constant([1.5, -2.7, 65504.0, 1e-5, 70000.0]), tf.float16)))
    print(sess.run(tf.cast(h, tf.float32), {h: np.array([0.1, 2.5], np.float16)}))
    print(sess.run(tf.cast(c, tf.float32)), sess.run(tf.cast(tf.constant([1.0, 2.0]), tf.complex64)))
    print(sess.run(tf.cast(tf.constant([1.9, -1.9, 40000.0]), tf.int16)),
          sess.run(tf.cast(tf.constant([1.9, 70000.0]), tf.uint16)))
    print(sess.run(tf.cast(tf.constant([1, -1, 200]), tf.int8)), sess.run(tf.cast(tf.constant([1, -1, 70000]), tf.uint16)))
    print(sess.run(tf.cast(i8, tf.float32), {i8: [-128, 127]}), sess.run(tf.cast(u, tf.int32), {u: [65535]}))
    print(sess.run(tf.cast(tf.cast(tf.constant([0.0, 1.0]), tf.float16), tf.bool)))
    # basic_operations.py: int16 placeholders added and multiplied
    add = tf.add(a, b)
    mul = tf.multiply(a, b)
    print("Addition with variables: %i" % sess.run(add, feed_dict={a: 2, b: 3}))
    print("Multiplication with variables: %i" % sess.run(mul, feed_dict={a: 2, b: 3}))
    print(sess.run(a * a - b, {a: [300, 2], b: [1, 1]}), sess.run(tf.maximum(i8, i8 + 1), {i8: [-3, 4]}))
    print(sess.run(u * u, {u: [300, 2]}), sess.run(a + 1, {a: [32767]}))
    # an op without these types: TF's error class, raised when the graph is built
    for f in [lambda: tf.reduce_max(c), lambda: tf.matmul(k[None], k[:, None])]:
        try:
            f()
            print("built")
        except TypeError as e:
            print(type(e).__name__, str(e).split(" has DataType ")[1].split(" not in ")[0],
                  str(e).startswith("Value passed to parameter"))
