# Summary tags as TF1's summary_scope makes them: illegal characters cleaned (a variable's
# name "W1:0" gives W1_0), repeated names made unique, a family prefixed again
# (expected output from TensorFlow 1.x through the oracle)
import numpy as np
import tensorflow as tf

w = tf.Variable(tf.constant([[1., 2.], [3., 4.]]), name="W1")
tf.summary.histogram(w.name, w)
tf.summary.histogram(w.name + "/gradient", w * 2.)
tf.summary.scalar("loss", tf.reduce_sum(w))
tf.summary.scalar("loss", tf.reduce_mean(w))
tf.summary.scalar("acc", tf.constant(0.5), family="train")
tf.summary.scalar("/lead slash, space", tf.constant(1.5))
with tf.name_scope("Model"):
    tf.summary.scalar("inner", tf.constant(2.5))
merged = tf.summary.merge_all()
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    s = tf.Summary()
    s.ParseFromString(sess.run(merged))
    for v in s.value:
        print(v.tag, v.simple_value if v.HasField("simple_value") else (v.histo.num, v.histo.sum))
