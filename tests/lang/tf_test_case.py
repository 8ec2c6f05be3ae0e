# What the PTB tutorial's reader.py and reader_test.py need, unchanged: tf.test.TestCase
# (sessions, unittest's and TF's assertions, get_temp_dir), tf.gfile.GFile(..., "rb")
# reading bytes, a tensor sliced at tensor bounds (raw_data[0:batch_size * batch_len]),
# tf.strided_slice with tensors in begin/end, and tf.assert_positive (tf.Assert), which
# fails the run with the values it names. Expected output from TF.
import os
import numpy as np
import tensorflow as tf


class T(tf.test.TestCase):
    def testSlices(self):
        raw = tf.convert_to_tensor([4, 3, 2, 1, 0, 5, 6, 1, 1, 1, 1, 0, 3, 4, 1], dtype=tf.int32)
        n = tf.size(raw) // 3
        data = tf.reshape(raw[0:3 * n], [3, n])
        i = tf.constant(1)
        x = tf.strided_slice(data, [0, i * 2], [3, (i + 1) * 2])
        row = data[i]
        cols = data[:, i:i + 2]
        col = data[tf.constant(2, tf.int64), 1::2]
        with self.test_session() as sess:
            for t in (data, x, row, cols, col):
                print(sess.run(t).tolist())
            self.assertAllEqual(sess.run(x), [[2, 1], [1, 1], [3, 4]])


t = T("testSlices")
t.setUp()
t.testSlices()
t.tearDown()
for f, args in ((t.assertAllEqual, ([1, 2], [1, 2])), (t.assertAllEqual, ([1, 2], [1, 3])),
                (t.assertAllEqual, ([1, 2], [[1, 2]])), (t.assertAllClose, ([1.0, 2.0], [1.0, 2.0000001])),
                (t.assertAllClose, ([1.0], [1.1])), (t.assertEqual, (3, 3)), (t.assertEqual, (3, 4)),
                (t.assertTrue, (0,)), (t.assertIn, (1, [1])), (t.assertLess, (2, 1))):
    try:
        f(*args)
        print("pass")
    except AssertionError:
        print("AssertionError")
with t.assertRaises(ValueError):
    raise ValueError("x")
print(os.path.isdir(tf.test.get_temp_dir()), os.path.isdir(t.get_temp_dir()), t.get_temp_dir() == t.get_temp_dir())

d = tf.test.get_temp_dir()
with tf.gfile.GFile(os.path.join(d, "w.txt"), "w") as fh:
    fh.write("a b\nc")
with tf.gfile.GFile(os.path.join(d, "w.txt"), "rb") as fh:
    b = fh.read()
with tf.gfile.GFile(os.path.join(d, "w.txt"), "r") as fh:
    s = fh.read()
print(type(b).__name__, type(s).__name__, b.decode("utf-8").replace("\n", "<eos>").split())

e = tf.placeholder(tf.int32, [])
ok = tf.assert_positive(e, message="epoch_size == 0, decrease batch_size or num_steps")
with tf.control_dependencies([ok]):
    e2 = tf.identity(e, name="epoch_size")
lt = tf.assert_less(tf.constant([1, 2]), tf.constant([3, 3]))
with tf.Session() as sess:
    print(sess.run(e2, {e: 5}))
    sess.run(lt)
    try:
        sess.run(e2, {e: 0})
    except tf.errors.InvalidArgumentError as err:
        print([l for l in err.message.split("\n") if "assertion failed" in l][0].replace(ok.inputs[4].name, "X"))
