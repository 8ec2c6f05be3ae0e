# A scalar fetch is a numpy scalar as in TF (numpy.float32, numpy.int64, ...), not a 0-d
# array: it indexes lists, counts range(), is a summary's step, formats and computes like
# numpy. Expected output from real TF 2.21 (tf.compat.v1) through scripts/tf_oracle/run.sh,
# with two numpy 1.x adjustments: the bool scalar type is named numpy.bool_ (numpy 2 says
# numpy.bool), and scalars print as numbers (numpy 1.x; the shim sets legacy printing).
# Arithmetic promotes as numpy 1.24 (Debian's, the numpy of TF1's days) does: a numpy
# scalar and a Python number give float64 / int64 (value-based casting before NEP 50).
import os
import tempfile
import numpy as np
import tensorflow as tf

c = tf.constant(1.5)
i = tf.constant(3)
j = tf.constant(3, dtype=tf.int64)
b = tf.constant(True)
d = tf.constant(2.5, dtype=tf.float64)
gs = tf.train.get_or_create_global_step()
inc = tf.assign_add(gs, 2)
loss = tf.constant(0.1)
s = tf.summary.scalar("loss", loss)
v = tf.constant([10.0, 20.0, 30.0, 40.0])
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    x, n, m, bb, dd = sess.run([c, i, j, b, d])
    for val in (x, n, m, bb, dd):
        print(type(val), repr(val), str(val), val.dtype, val.shape, val.ndim, val.size)
    print([x, n, m, bb, dd], (x, dd), {"loss": x})
    # the step of a summary, an index, a count
    sess.run(inc)
    summ, step = sess.run([s, gs])
    logdir = tempfile.mkdtemp()
    writer = tf.summary.FileWriter(logdir)
    writer.add_summary(summ, step)
    writer.close()
    print("step", step, type(step), len(os.listdir(logdir)))
    print([10, 20, 30, 40][n], list(range(n)), list(range(step, 5)), "ab"[step - 1], (1, 2, 3)[-n])
    print(sess.run(v[n]), sess.run(v[step:]), sess.run(tf.reshape(v, [step, -1])).shape)
    print(sess.run(c * 2, feed_dict={c: x * 2}), sess.run(tf.constant(dd)).dtype, tf.constant(m).dtype)
    saver = tf.train.Saver()
    print(os.path.basename(saver.save(sess, os.path.join(logdir, "model"), global_step=step)))

# formatting
print("%d %s %r %.3f %5.2f %e" % (n, x, x, x, x, dd))
print("{} {:.2f} {} {!r} {:>6}".format(x, x, n, x, n))
print(f"{loss.dtype!s} {x:.1f} {n:03d} {bb}")
f = np.float32(0.1)
print(f, repr(f), "{}".format(f), str(f * 3), [f, np.float64(0.1)])

# arithmetic and comparisons
print(x + 1, x * 2.0, 1 - x, x / 2, n + 1, n * 2.5, m // 2, n / 2, -x, abs(-x), x ** 2, m % 2)
print(type(x + 1), type(n + 1), type(m + 1), type(x * n), type(dd + x), type(n / 2), type(-n))
print(x > 1, x == 1.5, n == 3, n != 3, type(x > 1), bb and n, not bb, 2 < n < 4)
print(float(x), int(x), int(n), x.item(), type(x.item()), n.item(), type(n.item()), bool(bb))
print(round(x), round(dd, 1), max(x, 2.0), min(n, 2), sum([x, x]), np.isnan(x), type(np.isnan(x)))
total = 0
for k in range(3):
    total += x
print(total, type(total), hash(n) == hash(3), {n: "three"}[3], {3: "three"}[m])

# numpy scalars from arrays and constructors
arr = np.array([1.0, 2.0], dtype=np.float32)
ints = np.array([4, 5, 6])
print(arr * x, type(arr[0]), arr[0], repr(arr[1]), arr.sum(), type(arr.sum()), ints[n - 3], type(ints[0]))
print([type(e).__name__ for e in ints], np.mean(ints), type(np.mean(ints)), ints.max() + 1)
print(np.float32(0.1), repr(np.float64(2)), type(np.int32(7)), np.float32(), np.array(1.5), repr(np.array(1.5)))
print(isinstance(x, np.float32), isinstance(x, np.ndarray), isinstance(m, np.int64), isinstance(n, int))
print(type(x) == np.float32, x.dtype == np.float32, type(x).__name__, x.astype(np.float64), type(x.astype(np.int32)))
print(x[()], repr(x[...]), np.sqrt(np.float32(4.0)), type(np.sqrt(np.float32(4.0))))
for bad in (lambda: x[0], lambda: len(x), lambda: iter(x), lambda: range(x), lambda: [1, 2][x]):
    try:
        bad()
    except (IndexError, TypeError) as e:
        print(type(e).__name__ + ":", e)
