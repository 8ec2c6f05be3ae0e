# dropout and recurrent_dropout of the cells in a stacked RNN (tf.keras.layers.RNN over a
# list of cells; expected output from real TF through scripts/tf_oracle): each cell's masks
# are made once before the loop, shaped like its own input (the cell below's output) and
# state, under a cond on the learning phase: the identity when not training (the numbers of
# the stack without dropout), dropped when training.
import numpy as np
import tensorflow as tf

K = tf.keras
L = tf.keras.layers


def r4(a):
    return [round(float(v), 4) + 0.0 for v in np.asarray(a).reshape(-1)]


def fixed(layer):
    ws = []
    for i, w in enumerate(layer.get_weights()):
        ws.append(((np.arange(w.size, dtype=np.float32) * 7 + i * 3) % 11 / 10.0 - 0.5).reshape(w.shape))
    layer.set_weights(ws)


x = tf.placeholder(tf.float32, [None, 4, 3], name="x")
xv = ((np.arange(24, dtype=np.float32) * 5) % 7 / 7.0 - 0.4).reshape(2, 4, 3)
cells = [L.LSTMCell(4, dropout=0.5, recurrent_dropout=0.25), L.GRUCell(3, recurrent_dropout=0.5),
         L.SimpleRNNCell(2, dropout=0.3)]
rnn = L.RNN(cells, return_sequences=True)
y = rnn(x)
plain = L.RNN([L.LSTMCell(4), L.GRUCell(3), L.SimpleRNNCell(2)], return_sequences=True)
yp = plain(x)
print([w.name for w in rnn.weights])
print(len([op for op in tf.get_default_graph().get_operations() if op.type == "RandomUniform"]))
sess = K.backend.get_session()
fixed(rnn)
fixed(plain)
phase = K.backend.learning_phase()
a, b = sess.run([y, yp], {x: xv})
print("infer", r4(a))
print("same as without dropout", np.abs(a - b).max() < 1e-6)
t1, t2 = sess.run(y, {x: xv, phase: True}), sess.run(y, {x: xv, phase: True})
print("train differs", np.abs(t1 - a).max() > 1e-3, np.abs(t1 - t2).max() > 1e-3, t1.shape)
g = tf.gradients(tf.reduce_sum(y * y), rnn.trainable_weights)
print([r4(v)[:3] for v in sess.run(g, {x: xv})])
