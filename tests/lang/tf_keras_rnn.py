# tf.keras recurrent layers in graph mode as TF 1.x's Keras builds them (expected output
# from real TF through scripts/tf_oracle): SimpleRNN, GRU and LSTM (v1: hard_sigmoid
# recurrent activation, GRU reset_after=False), their cells under RNN, Bidirectional;
# variable names and shapes, outputs and states with weights from set_weights, gradients,
# the orthogonal initializer, and a small sequence classifier whose loss falls.
import numpy as np
import tensorflow as tf

L = tf.keras.layers


def r4(a):
    return [round(float(v), 4) + 0.0 for v in np.asarray(a).reshape(-1)]


def det(shape, k):
    n = int(np.prod(shape))
    vals = [((i * 37 + int(k * 10) * 11) % 29 - 14) / 28.0 for i in range(n)]
    return np.array(vals, dtype=np.float32).reshape(shape)


def fill(layer, k):
    layer.set_weights([det(w.shape.as_list(), k + i) for i, w in enumerate(layer.weights)])


xv = det([2, 5, 3], 0.1)
x = tf.placeholder(tf.float32, [None, 5, 3], name="x")
lstm = L.LSTM(4)
gru = L.GRU(4, return_sequences=True)
srnn = L.SimpleRNN(4, return_state=True, activation="relu")
lstm_s = L.LSTM(3, return_sequences=True, return_state=True, go_backwards=True)
gru_b = L.GRU(2, use_bias=False, recurrent_activation="sigmoid", go_backwards=True)
rnn = L.RNN(L.LSTMCell(3, unit_forget_bias=False), return_sequences=True)
bi = L.Bidirectional(L.LSTM(2, return_sequences=True))
outs = [lstm(x), gru(x)] + srnn(x) + lstm_s(x) + [gru_b(x), rnn(x), bi(x)]
for layer in (lstm, gru, srnn, lstm_s, gru_b, rnn, bi):
    print(layer.name, [(w.name, w.shape.as_list()) for w in layer.weights])
print([o.shape.as_list() for o in outs])
print(lstm.cell.recurrent_activation.__name__, gru.cell.reset_after, lstm.units, gru.cell.units)
sess = tf.keras.backend.get_session()
sess.run(tf.global_variables_initializer())
b = sess.run(lstm.cell.bias)
print("unit_forget_bias", r4(b), r4(sess.run(rnn.cell.bias)))
k = lstm.cell.recurrent_kernel
print("orthogonal rows", r4(sess.run(tf.matmul(k, k, transpose_b=True))))
k = srnn.cell.recurrent_kernel
print("orthogonal square", r4(sess.run(tf.matmul(k, k, transpose_a=True))))
for i, layer in enumerate((lstm, gru, srnn, lstm_s, gru_b, rnn, bi)):
    fill(layer, i)
vals = sess.run(outs, {x: xv})
for o, v in zip(outs, vals):
    print(o.shape.as_list(), r4(v))
loss = tf.add_n([tf.reduce_sum(o * o) for o in outs])
ws = tf.trainable_variables()
grads = tf.gradients(loss, ws)
for w, g in zip(ws, sess.run(grads, {x: xv})):
    print("grad", w.name, r4(g))

# dropout and recurrent_dropout (masks from a cond on the learning phase, made before the
# loop: the identity when not training) and GRU(reset_after=True)
tf.reset_default_graph()
xd = tf.placeholder(tf.float32, [None, 5, 3])
drops = [L.LSTM(4, dropout=0.5, recurrent_dropout=0.3), L.GRU(3, dropout=0.2, recurrent_dropout=0.2),
         L.SimpleRNN(2, dropout=0.4), L.GRU(3, reset_after=True, recurrent_activation="sigmoid"),
         L.GRU(2, reset_after=True, recurrent_dropout=0.5, return_sequences=True)]
yd = [d(xd) for d in drops]
print([[(w.name, w.shape.as_list()) for w in d.weights] for d in drops[3:]])
sess = tf.keras.backend.get_session()
sess.run(tf.global_variables_initializer())
for i, layer in enumerate(drops):
    fill(layer, 20 + i)
infer = sess.run(yd, {xd: xv})
for v in infer:
    print("infer", r4(v))
train = sess.run(yd, {xd: xv, tf.keras.backend.learning_phase(): True})
print("train differs", [bool(np.abs(a - b).max() > 1e-4) for a, b in zip(infer, train)])
g = tf.gradients(tf.add_n([tf.reduce_sum(y * y) for y in yd]), drops[3].weights)
print("grad reset_after", [r4(v) for v in sess.run(g, {xd: xv})])

# a small sequence classifier: is the sum of the sequence positive?
tf.reset_default_graph()
data = det([64, 6, 2], 0.3) * 2
labels = (data.sum(axis=2).sum(axis=1) > 0).astype(np.int32)
xs = tf.placeholder(tf.float32, [None, 6, 2])
ys = tf.placeholder(tf.int32, [None])
model = tf.keras.Sequential([L.LSTM(8), L.Dense(2)])
logits = model(xs)
loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=ys, logits=logits))
train = tf.train.AdamOptimizer(0.05).minimize(loss)
sess = tf.keras.backend.get_session()
sess.run(tf.global_variables_initializer())
for i, layer in enumerate(model.layers):
    fill(layer, 10 + i)
first = None
for step in range(60):
    l, _ = sess.run([loss, train], {xs: data, ys: labels})
    if step % 10 == 0:
        print("step", step, round(float(l), 3))
    first = l if first is None else first
final = sess.run(loss, {xs: data, ys: labels})
print("loss falls", final < first * 0.5, "final below 0.25", final < 0.25)

# inputs of the wrong rank; Sequential from input_shape; initial_state; return_state through
# Bidirectional; a cell called on its own
tf.reset_default_graph()
x2 = tf.placeholder(tf.float32, [None, 3])
try:
    L.LSTM(2)(x2)
except ValueError as e:
    print("ValueError", e)
x = tf.placeholder(tf.float32, [None, 4, 3])
m = tf.keras.Sequential([L.LSTM(5, input_shape=(4, 3), return_sequences=True), L.GRU(2)])
print(m.output.shape, [w.name for w in m.weights])
h0 = tf.placeholder(tf.float32, [None, 2])
c0 = tf.placeholder(tf.float32, [None, 2])
lst = L.LSTM(2, return_state=True)
o = lst(x, initial_state=[h0, c0])
print([t.shape.as_list() for t in o])
b = L.Bidirectional(L.GRU(2, return_state=True), merge_mode="sum")(x)
print([t.shape.as_list() for t in b])
cell = L.LSTMCell(3)
out, st = cell(x2, [tf.zeros([1, 3]), tf.zeros([1, 3])])
print(out.shape.as_list(), len(st), [w.name for w in cell.weights])
print(lst.count_params(), m.count_params())
sess = tf.keras.backend.get_session()
sess.run(tf.global_variables_initializer())
fill(lst, 30)
xv4 = det([2, 4, 3], 0.5)
hv, cv = det([2, 2], 0.6), det([2, 2], 0.7)
print("initial_state", [r4(v) for v in sess.run(o, {x: xv4, h0: hv, c0: cv})])

# RNN over a list of cells (StackedRNNCells): nested final states, weights in its scope
tf.reset_default_graph()
x = tf.placeholder(tf.float32, [None, 5, 3])
stk = L.RNN([L.LSTMCell(4), L.GRUCell(2), L.SimpleRNNCell(3)], return_state=True, return_sequences=True)
o = stk(x)
print(len(o), o[0].shape.as_list(), [w.name for w in stk.weights], list(stk.cell.state_size[0]),
      stk.cell.state_size[1:])
sess = tf.keras.backend.get_session()
sess.run(tf.global_variables_initializer())
fill(stk, 40)
vals = sess.run([o[0], o[1][0], o[1][1], o[2], o[3]], {x: xv})
print("stacked", [r4(v) for v in vals])
print("grads", [r4(v) for v in sess.run(tf.gradients(tf.reduce_sum(o[0] * o[0]), stk.weights[:3]), {x: xv})])
