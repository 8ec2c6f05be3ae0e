# One training step of an LSTM(64) over 100 time steps (batch 32, 32 features): Keras's
# LSTM with return_sequences, and tf.nn.dynamic_rnn with an LSTMCell; best wall time of a
# few sess.run after a warm-up. Run unchanged by tfsh and by TF 1.x (scripts/bench/rnn.sh).
import sys
import time
import numpy as np
import tensorflow as tf

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 100
only = sys.argv[2] if len(sys.argv) > 2 else ""   # run just the cases whose name has this
batch, feat, units = 32, 32, 64
data = np.ones((batch, steps, feat), dtype=np.float32) * 0.01


def timed(name, train, feed):
    if only not in name:
        return
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train, feed)
        best = 1e9
        for _ in range(10):
            t0 = time.time()
            sess.run(train, feed)
            best = min(best, time.time() - t0)
    print("BEST %s %.6f" % (name, best))


tf.reset_default_graph()
x = tf.placeholder(tf.float32, [batch, steps, feat])
y = tf.keras.layers.LSTM(units, return_sequences=True)(x)
loss = tf.reduce_mean(tf.square(tf.keras.layers.Dense(1)(y)))
timed("keras", tf.train.GradientDescentOptimizer(0.01).minimize(loss), {x: data})

tf.reset_default_graph()
x = tf.placeholder(tf.float32, [batch, steps, feat])
out, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.LSTMCell(units), x, dtype=tf.float32)
loss = tf.reduce_mean(tf.square(out))
timed("dynamic_rnn", tf.train.GradientDescentOptimizer(0.01).minimize(loss), {x: data})

# aymericdamien's dynamic_rnn.py shape: tf.nn.static_rnn (20 unrolled steps) of a
# BasicLSTMCell(64) with sequence_length, batch 128, 1 feature, the last relevant output
# gathered per sequence, softmax cross-entropy over 2 classes, SGD.
tf.reset_default_graph()
seq_len, sbatch = 20, 128
x = tf.placeholder(tf.float32, [None, seq_len, 1])
lab = tf.placeholder(tf.float32, [None, 2])
lens = tf.placeholder(tf.int32, [None])
xs = tf.unstack(x, seq_len, 1)
outs, _ = tf.nn.static_rnn(tf.nn.rnn_cell.BasicLSTMCell(units), xs, dtype=tf.float32,
                           sequence_length=lens)
outs = tf.reshape(tf.transpose(tf.stack(outs), [1, 0, 2]), [-1, units])
last = tf.gather(outs, tf.range(0, sbatch) * seq_len + (lens - 1))
w = tf.Variable(tf.random_normal([units, 2]))
bias = tf.Variable(tf.random_normal([2]))
loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(logits=tf.matmul(last, w) + bias,
                                                              labels=lab))
sfeed = {x: (np.arange(sbatch * seq_len, dtype=np.float32).reshape(sbatch, seq_len, 1) % 7) / 7,
         lab: np.array([[1, 0], [0, 1]] * (sbatch // 2), dtype=np.float32),
         lens: (np.arange(sbatch, dtype=np.int32) % seq_len) + 1}
timed("static_rnn", tf.train.GradientDescentOptimizer(0.01).minimize(loss), sfeed)
