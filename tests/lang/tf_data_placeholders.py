# tf.data over placeholders, the TF 1.x idiom of aymericdamien's tensorflow_dataset_api.py:
# from_tensor_slices of placeholders captures them; the initializable iterator's initializer
# is run feeding them (again, with new values, to start over); map, batch and zip keep the
# capture; without the feed the initializer fails; a one-shot iterator refuses. From TF.
import numpy as np
import tensorflow as tf
d = tf.placeholder(tf.float32, [None, 3])
l = tf.placeholder(tf.int64, [None])
ds = tf.data.Dataset.from_tensor_slices((d, l)).map(lambda a, b: (a * 2.0, b + 1)).batch(2)
print(ds.output_types, ds.output_shapes)
it = ds.make_initializable_iterator()
x, y = it.get_next()
print(x.get_shape().as_list(), y.get_shape().as_list())
z = tf.data.Dataset.zip((tf.data.Dataset.from_tensor_slices(l), tf.data.Dataset.range(10)))
zi = z.make_initializable_iterator()
zn = zi.get_next()
with tf.Session() as sess:
    sess.run(it.initializer, feed_dict={d: np.arange(9, dtype=np.float32).reshape(3, 3), l: [7, 8, 9]})
    print(sess.run([x, y]))
    print(sess.run([x, y]))
    try:
        sess.run(x)
    except tf.errors.OutOfRangeError:
        print("end")
    sess.run(it.initializer, feed_dict={d: np.ones([1, 3], np.float32), l: [5]})
    print(sess.run([x, y]))
    sess.run(zi.initializer, feed_dict={l: [3, 4]})
    print(sess.run(zn), sess.run(zn))
    try:
        sess.run(it.initializer)
    except tf.errors.InvalidArgumentError as e:
        print("InvalidArgumentError")
try:
    tf.data.Dataset.from_tensor_slices(d).make_one_shot_iterator()
except ValueError as e:
    print(type(e).__name__, e)
