# TensorShape and Dimension as TF 1.x has them: shape[i].value, slices, merge_with, with_rank,
# the compatibility checks, == and +; Dimensions in shapes and int lists given to ops.
import numpy as np
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 3, 4])
s = x.get_shape()
tests = [
 "s[1].value", "s[0].value", "int(s[1])", "s[1] * 2", "s[-1] == 4", "s.ndims", "s.dims", "s[1:]", "s[1:].as_list()",
 "s.merge_with(tf.TensorShape([5, None, 4]))", "s.is_compatible_with([7, 3, 4])", "s.is_compatible_with([7, 2, 4])",
 "s.concatenate([2])", "s.with_rank(3)", "s.assert_has_rank(3)", "s.assert_is_compatible_with([1, 3, 4])",
 "s.as_list()", "s.num_elements()", "tf.TensorShape([1, 2]).num_elements()", "s == tf.TensorShape([None, 3, 4])",
 "s.with_rank_at_least(2)", "tf.TensorShape(None).ndims", "tf.Dimension(3).value", "tf.dimension_value(s[1])",
 "s[1].merge_with(3)", "list(s)", "s.rank", "str(s)", "repr(s[1])", "s.most_specific_compatible_shape([5, 3, 4])",
 "tf.TensorShape([2, 3]) + tf.TensorShape([4])", "s.is_fully_defined()", "x.shape[1].value",
]
for t in tests:
    try: r = eval(t)
    except Exception as e: r = "%s: %s" % (type(e).__name__, str(e)[:60])
    print(t, "->", r)
tests = ["tf.reshape(x, [-1, s[1] * s[2]]).shape", "tf.zeros([s[1], 2]).shape", "tf.ones(s[1:]).shape",
         "tf.placeholder(tf.float32, [None, s[1]]).shape", "tf.get_variable('w', [s[-1], 10]).shape",
         "tf.random_normal([s[2], s[1]]).shape", "tf.layers.dense(tf.reshape(x, [-1, s[1] * s[2]]), 5).shape",
         "tf.fill([s[1]], 1.0).shape", "tf.tile(x, [1, s[1], 1]).shape", "tf.split(x, s[1], axis=1)[0].shape",
         "tf.one_hot([1, 2], s[2]).shape", "tf.slice(x, [0, 0, 0], [-1, s[1], 2]).shape",
         "tf.TensorShape([s[1], None])", "tf.zeros(x.get_shape()[1:]).shape", "np.zeros([s[1], s[2]]).shape"]
for t in tests:
    try: r = eval(t)
    except Exception as e: r = "%s: %s" % (type(e).__name__, str(e)[:70])
    print(t, "->", r)
v = tf.get_variable("w3", shape=[s[1], s[2]])
with tf.variable_scope("r", reuse=tf.AUTO_REUSE):
    a = tf.get_variable("k", x.get_shape()[1:])
    b = tf.get_variable("k", [s[1], s[2]])
print(a.shape, b is a)

# + from either side: a list or a TensorShape on the left (TF's __radd__), None unknown
s = tf.placeholder(tf.float32, [None, 3, 4]).get_shape()
print(s + [5], [7] + s[1:], s[1:] + tf.TensorShape([9]), (7, 8) + s)
print(([1, 2] + s).as_list(), (None + s).ndims, (tf.TensorShape(None) + s).ndims)
print(3 + s, tf.TensorShape(3))   # an int is a one-dimensional shape there
