# tensor[...] names its nodes as TF does (TensorBoard groups them under the slice):
# strided_slice/stack, stack_1, stack_2 and strided_slice, in a unique scope per slice.
# Expected output: real TensorFlow's (scripts/tf_oracle/run.sh --write).
import numpy as np
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 4, 5], name="x")
a = tf.shape(x)[:1]
b = x[0, 1:]
with tf.name_scope("s"):
    c = x[..., 2]
print([(o.name, o.type) for o in tf.get_default_graph().get_operations()])
print(a.shape, b.shape, c.shape)
with tf.Session() as sess:
    print(sess.run([a, b[0, :2], c[0, 0]], {x: np.arange(40, dtype=np.float32).reshape(2, 4, 5)}))
