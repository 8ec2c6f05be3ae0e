# tf.contrib.framework.arg_scope with contrib.layers' fully_connected, batch_norm and dropout,
# as hunkim's lab-10-7 builds its net (TF 2.x has no contrib to take expected output from:
# these are the values TF1's definitions give). updates_collections=None runs the moving
# averages with the output; arg_scope's defaults apply inside it and explicit ones win.
import numpy as np
import tensorflow as tf
from tensorflow.contrib.framework import arg_scope
from tensorflow.contrib.layers import fully_connected, batch_norm, dropout

x = tf.constant(np.arange(8, dtype=np.float32).reshape(4, 2))
train = tf.placeholder(tf.bool, name="train")
bn = {"is_training": train, "decay": 0.5, "updates_collections": None}
with arg_scope([fully_connected], activation_fn=None, weights_initializer=tf.ones_initializer(),
               normalizer_fn=batch_norm, normalizer_params=bn):
    h = fully_connected(x, 3, scope="h1")
    d = dropout(h, 0.5, is_training=train)
    out = fully_connected(d, 1, normalizer_fn=None, scope="out")
print(sorted(v.name for v in tf.global_variables()))
print(len(tf.get_collection(tf.GraphKeys.UPDATE_OPS)))
mean = [v for v in tf.global_variables() if "h1" in v.name and "moving_mean" in v.name][0]
with tf.Session() as s:
    s.run(tf.global_variables_initializer())
    print(["%.4f" % v for v in s.run(h, {train: False})[:, 0]])
    print(s.run(mean).tolist())
    s.run(h, {train: True})
    print(s.run(mean).tolist())
    print(s.run(d, {train: False}).shape, s.run(out, {train: False}).shape)
try:
    with arg_scope([tf.matmul], a=1):
        pass
except ValueError as e:
    print("ValueError:", e)
