# RNNs as TF 1.x builds them: the cells of tf.nn.rnn_cell with TF's
# variable names (LSTMCell with peepholes and a projection too), dynamic_rnn (a while loop over time, sequence_length), static_rnn,
# bidirectional_dynamic_rnn, static_bidirectional_rnn, MultiRNNCell, DropoutWrapper; outputs, states and gradients
# with every variable set to the same deterministic values in TF and tfsh. Expected output
# from real TF (4 decimals).
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


x = wave([2, 3, 4], 1.0) * 3.0
xs = tf.unstack(tf.transpose(x, [1, 0, 2]), num=3)
lens = tf.constant([3, 2])
with tf.variable_scope("a"):
    o_basic, s_basic = tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicRNNCell(3), x, dtype=tf.float32)
with tf.variable_scope("b"):
    o_lstm, s_lstm = tf.nn.dynamic_rnn(tf.nn.rnn_cell.LSTMCell(3), x, sequence_length=lens, dtype=tf.float32)
with tf.variable_scope("c"):
    o_gru, s_gru = tf.nn.dynamic_rnn(tf.nn.rnn_cell.GRUCell(3), x, dtype=tf.float32)
with tf.variable_scope("d"):
    multi = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.BasicLSTMCell(3), tf.nn.rnn_cell.GRUCell(2)])
    o_multi, s_multi = tf.nn.dynamic_rnn(multi, x, dtype=tf.float32)
with tf.variable_scope("e"):
    o_static, s_static = tf.nn.static_rnn(tf.nn.rnn_cell.BasicLSTMCell(3), xs, dtype=tf.float32)
with tf.variable_scope("f"):
    (o_fw, o_bw), (s_fw, s_bw) = tf.nn.bidirectional_dynamic_rnn(
        tf.nn.rnn_cell.GRUCell(2), tf.nn.rnn_cell.GRUCell(2), x, sequence_length=lens, dtype=tf.float32)
with tf.variable_scope("h"):
    o_sbi, s_sfw, s_sbw = tf.nn.static_bidirectional_rnn(tf.nn.rnn_cell.BasicRNNCell(2), tf.nn.rnn_cell.GRUCell(2), xs,
                                                         dtype=tf.float32)
with tf.variable_scope("p"):
    o_peep, s_peep = tf.nn.dynamic_rnn(tf.nn.rnn_cell.LSTMCell(3, use_peepholes=True, num_proj=2, cell_clip=0.5),
                                       x, dtype=tf.float32)
with tf.variable_scope("g"):
    drop = tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.BasicRNNCell(2), output_keep_prob=1.0)
    o_drop, _ = tf.nn.dynamic_rnn(drop, x, dtype=tf.float32)

for v in tf.trainable_variables():
    print(v.name, v.get_shape().as_list())
print(o_lstm.get_shape().as_list(), s_lstm.h.get_shape().as_list(), len(o_static), o_static[0].get_shape().as_list())

loss = tf.reduce_sum(o_lstm * o_lstm) + tf.reduce_sum(o_gru) + tf.reduce_sum(s_multi[0].c) + tf.reduce_sum(o_bw)
grads = tf.gradients(loss, tf.trainable_variables())

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for k, v in enumerate(tf.trainable_variables()):
        sess.run(tf.assign(v, wave(v.get_shape().as_list(), float(k))))
    show(sess, o_basic, s_basic, o_lstm, s_lstm.c, o_gru, o_multi, s_multi[1], o_static[2], s_static.h)
    show(sess, o_fw, o_bw, s_bw, o_drop)
    show(sess, o_sbi[0], o_sbi[2], s_sfw, s_sbw)
    show(sess, o_peep, s_peep.c)
    for g in grads:
        if g is not None:
            show(sess, g)
