# bidirectional_dynamic_rnn (GRU forwards, LSTM backwards) over inputs of unknown batch and
# time, with sequence lengths, on TensorArrays: outputs and gradients. Expected output from
# real TF.
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()
x = tf.placeholder(tf.float32, [None, None, 3])
with tf.variable_scope("b", initializer=tf.constant_initializer(0.2)):
    (fw, bw), (sf, sb) = tf.nn.bidirectional_dynamic_rnn(tf.nn.rnn_cell.GRUCell(4), tf.nn.rnn_cell.BasicLSTMCell(2), x,
                                                         sequence_length=[3, 2], dtype=tf.float32)
loss = tf.reduce_sum(fw) + tf.reduce_sum(bw * bw) + tf.reduce_sum(sb.h)
g = tf.gradients(loss, [x] + tf.trainable_variables())
print(fw.shape, sf.shape)
data = np.arange(18, dtype=np.float32).reshape(2, 3, 3) * 0.1
with tf.Session() as s:
    s.run(tf.global_variables_initializer())
    for v in s.run([fw, bw] + g, {x: data}):
        print(["%.4f" % e for e in v.flatten().tolist()])
