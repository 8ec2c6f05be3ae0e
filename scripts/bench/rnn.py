# One training step of an LSTM(64) over 100 time steps (batch 32, 32 features): Keras's
# LSTM with return_sequences, and tf.nn.dynamic_rnn with an LSTMCell; best wall time of a
# few sess.run after a warm-up. Run unchanged by tfsh and by TF 1.x (scripts/bench/rnn.sh).
import sys
import time
import numpy as np
import tensorflow as tf

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 100
batch, feat, units = 32, 32, 64
data = np.ones((batch, steps, feat), dtype=np.float32) * 0.01


def timed(name, train, feed):
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
