# Datasets and constants of Python and numpy strings: the dtype of a str or bytes array
# is tf.string (file-name lists are the common case).
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()

def drain(ds):
    nxt = tf.data.make_one_shot_iterator(ds).get_next()
    out = []
    with tf.Session() as s:
        try:
            while True:
                out.append(s.run(nxt))
        except tf.errors.OutOfRangeError:
            pass
    return out

print(drain(tf.data.Dataset.from_tensor_slices(["a.txt", "bb.txt"])))
print(drain(tf.data.Dataset.from_tensor_slices([b"x", b"yz"])))
print(drain(tf.data.Dataset.from_tensor_slices(np.array(["u", "vw"]))))
print(drain(tf.data.Dataset.from_tensor_slices((["k1", "k2"], [1, 2]))))
print(drain(tf.data.Dataset.from_tensor_slices(["p", "q", "r"]).map(lambda s: tf.strings.join([s, "!"])).batch(2)))
print(tf.as_dtype(np.array(["a"]).dtype), tf.as_dtype(np.array([b"a"]).dtype), tf.as_dtype(np.object_))
c = tf.constant(np.array(["m", "nn"]))
print(c.dtype, c.shape)
with tf.Session() as s:
    print(s.run(c))
