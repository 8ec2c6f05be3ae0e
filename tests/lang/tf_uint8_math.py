# uint8 arithmetic, min/max, comparisons, AddN and fills: TF's wrapping results.
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()
u = tf.constant([0, 1, 200, 255], tf.uint8)
w = tf.constant([1, 100, 100, 3], tf.uint8)
p = tf.placeholder(tf.uint8, [None])
with tf.Session() as s:
    for t in [u + w, u - w, u * w, tf.maximum(u, w), tf.minimum(u, w), u > w, u >= w, u < w, u <= w,
              tf.equal(u, w), tf.not_equal(u, w), u + 1, tf.ones([3], tf.uint8), tf.zeros([2], tf.uint8),
              tf.ones(tf.shape(u), tf.uint8), tf.ones([1000], tf.uint8)[998:], tf.add_n([u, w, w]),
              tf.cast(p, tf.float32) * (1. / 255) - 0.5]:
        print(repr(s.run(t, {p: np.array([0, 51, 255], np.uint8)})))

# reductions: sums and products wrap, means do not; argmax of uint8
x = tf.constant([[200, 200, 3], [1, 250, 7]], tf.uint8)
with tf.Session() as s:
    for f in [tf.reduce_sum, tf.reduce_mean, tf.reduce_max, tf.reduce_min, tf.reduce_prod]:
        for v in s.run([f(x), f(x, 0), f(x, 1)]):
            print(v)
    print(s.run(tf.argmax(x, 1)))
    print(s.run(tf.one_hot(x[0] - 198, 4)))

# an image summary of uint8 pixels
im = tf.summary.image("im", tf.constant(np.array([[[[0], [255]], [[128], [7]]]], np.uint8)))
with tf.Session() as sess:
    summ = tf.Summary()
    summ.ParseFromString(sess.run(im))
    v = summ.value[0]
    print(v.tag, v.image.height, v.image.width, v.image.colorspace, len(v.image.encoded_image_string) > 0)
