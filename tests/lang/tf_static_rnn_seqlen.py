# static_rnn and static_bidirectional_rnn with sequence_length, as aymericdamien's
# dynamic_rnn.py example calls them (tf.contrib.rnn.static_rnn(cell, x, dtype=...,
# sequence_length=seqlen)): past each sequence's length the output is zeros and the state
# stays; the backward direction reads each sequence reversed within its length. Outputs,
# states and gradients with deterministic variables; expected output from real TF.
import numpy as np
import tensorflow as tf


def wave(shp, k):
    n = int(np.prod(shp))
    return tf.reshape((tf.mod(tf.cast(tf.range(n), tf.float32) * 0.618 + k * 0.31, 1.0) - 0.5) * 0.6, shp)


def r4(a):
    if isinstance(a, list):
        return [r4(e) for e in a]
    return round(float(a), 4)


def show(sess, *ts):
    for t in ts:
        print(r4(np.asarray(sess.run(t)).tolist()))


x = wave([3, 4, 2], 1.0) * 3.0
xs = tf.unstack(x, 4, 1)
seqlen = tf.placeholder(tf.int32, [None])
with tf.variable_scope("s"):
    o_s, st_s = tf.contrib.rnn.static_rnn(tf.contrib.rnn.BasicLSTMCell(3), xs, dtype=tf.float32,
                                          sequence_length=seqlen)
with tf.variable_scope("b"):
    o_b, fw_b, bw_b = tf.nn.static_bidirectional_rnn(tf.nn.rnn_cell.GRUCell(2), tf.nn.rnn_cell.BasicRNNCell(2), xs,
                                                     dtype=tf.float32, sequence_length=seqlen)
print(len(o_s), o_s[0].get_shape().as_list(), st_s.c.get_shape().as_list(), o_b[1].get_shape().as_list())
loss = tf.reduce_sum(tf.stack(o_s) * tf.stack(o_s)) + tf.reduce_sum(st_s.h) + tf.reduce_sum(tf.stack(o_b)) + \
    tf.reduce_sum(bw_b)
grads = tf.gradients(loss, tf.trainable_variables())
feed = {seqlen: [4, 2, 1]}
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for k, v in enumerate(tf.trainable_variables()):
        sess.run(tf.assign(v, wave(v.get_shape().as_list(), float(k))))
    for t in o_s + [st_s.c, st_s.h] + o_b + [fw_b, bw_b]:
        print(r4(np.asarray(sess.run(t, feed)).tolist()))
    for g in grads:
        print(r4(np.asarray(sess.run(g, feed)).tolist()))
