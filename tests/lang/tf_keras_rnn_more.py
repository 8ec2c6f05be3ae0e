# tf.keras recurrent layers beyond the basics (expected output from real TF through
# scripts/tf_oracle), each part in a graph of its own: masks, stateful=True, dropout of
# stacked cells, unroll=True.
import numpy as np
import tensorflow as tf

K = tf.keras
L = tf.keras.layers


def r4(a):
    return [round(float(v), 4) + 0.0 for v in np.asarray(a).reshape(-1)]


def fixed(layer):
    """Fixed weights in place of the random ones."""
    ws = []
    for i, w in enumerate(layer.get_weights()):
        ws.append(((np.arange(w.size, dtype=np.float32) * 7 + i * 3) % 11 / 10.0 - 0.5).reshape(w.shape))
    layer.set_weights(ws)


# ---- mask --------------------------------------------------------------------
# Keras masks in graph mode:
# Embedding(mask_zero=True) and Masking give a mask that Dense carries and SimpleRNN, GRU,
# LSTM and Bidirectional read: a masked step keeps the previous states, and its output
# repeats the previous one (zeros in Bidirectional's sequences); Concatenate and Add merge
# their inputs' masks; numbers from fixed weights.
ids = tf.placeholder(tf.int32, [None, 5], name="ids")
idv = np.array([[3, 1, 0, 2, 0], [0, 0, 4, 5, 6], [1, 2, 3, 4, 5]], dtype=np.int32)
emb = L.Embedding(7, 3, mask_zero=True)
h = emb(ids)
dense = L.Dense(3)
hd = dense(h)
layers = [L.SimpleRNN(2), L.GRU(2, return_sequences=True), L.LSTM(2, return_sequences=True, return_state=True),
          L.LSTM(2, go_backwards=True), L.Bidirectional(L.SimpleRNN(2, return_sequences=True)),
          L.Bidirectional(L.GRU(2))]
outs = [l(hd) for l in layers]
print([o.name for o in tf.get_default_graph().get_operations() if o.type == "NotEqual"])
xm = tf.placeholder(tf.float32, [None, 4, 3], name="xm")
xmv = np.array([[[1, 2, 0], [0, 0, 0], [0.5, -1, 2], [0, 0, 0]],
                [[0, 0, 0], [1, 1, 1], [2, 0, 1], [0, 1, 0]]], dtype=np.float32)
masking = L.Masking(0.0)
mx = masking(xm)
mlstm = L.LSTM(3, return_sequences=True)
mo = mlstm(mx)
mgru = L.GRU(2)
mg = mgru(L.Masking(1.0)(xm))
print(mx.name)
sess = K.backend.get_session()
for l in [emb, dense] + layers + [mlstm, mgru]:
    fixed(l)
vals = sess.run([h, hd] + [o for o in outs if not isinstance(o, list)] + outs[2], {ids: idv})
for v in vals:
    print(r4(v))
for v in sess.run([mx, mo, mg], {xm: xmv}):
    print(r4(v))

# the merge layers: Concatenate's mask (all True where an input has none), Add's and-ed
ea = L.Embedding(7, 2, mask_zero=True)
eb = L.Embedding(7, 3)
ec = L.Embedding(7, 2, mask_zero=True)
other = ids * 0 + 1 - tf.cast(tf.equal(ids, 3), tf.int32)
cat = L.Concatenate()([ea(ids), eb(ids)])
add = L.Add()([ea(ids), ec(other)])
catr, addr = L.SimpleRNN(2, return_sequences=True), L.SimpleRNN(2, return_sequences=True)
rc, ra = catr(cat), addr(add)
sess = K.backend.get_session()
for l in (ea, eb, ec, catr, addr):
    fixed(l)
for v in sess.run([rc, ra], {ids: idv}):
    print(r4(v))


# ---- stateful ----------------------------------------------------------------
# stateful=True recurrent layers in graph mode (expected output from real TF through
# scripts/tf_oracle): the states are variables of the layer's batch size (lstm/Variable,
# lstm/Variable_1) that start each call, the layer's updates assign the final states to
# them, reset_states() zeros them or sets given values; a stateful layer without a known
# batch size is an error.
tf.reset_default_graph()
x = tf.placeholder(tf.float32, [2, 3, 4], name="x")
xv = ((np.arange(24, dtype=np.float32) * 5) % 7 / 7.0 - 0.4).reshape(2, 3, 4)
lstm = L.LSTM(2, stateful=True)
y = lstm(x)
print([v.name for v in lstm.states], [v.name for v in lstm.weights])
print([v.name for v in tf.global_variables()], len(tf.trainable_variables()))
print(len(lstm.updates), [u.type.replace("VariableOp", "") for u in lstm.updates])
gru = L.GRU(3, stateful=True, return_sequences=True)
ys = gru(x)
sess = K.backend.get_session()
fixed(lstm)
fixed(gru)
for step in range(3):
    out = sess.run([y, ys] + lstm.updates + gru.updates, {x: xv})
    print(step, r4(out[0]), r4(out[1][:, -1]))
print([r4(v) for v in sess.run(lstm.states + gru.states)])
lstm.reset_states()
print("reset", r4(sess.run(y, {x: xv})), [r4(v) for v in sess.run(lstm.states)])
lstm.reset_states([np.ones((2, 2), dtype=np.float32), np.ones((2, 2), dtype=np.float32) * 0.5])
print("given", r4(sess.run(y, {x: xv})), [r4(v) for v in sess.run(lstm.states)])
try:
    L.SimpleRNN(2, stateful=True)(tf.placeholder(tf.float32, [None, 3, 4]))
except ValueError as e:
    print("ValueError", str(e).split("\n")[0])
try:
    L.SimpleRNN(2).reset_states()
except AttributeError as e:
    print("AttributeError", e)
m = K.Sequential([L.SimpleRNN(2, stateful=True, batch_input_shape=(2, 3, 4)), L.Dense(1)])
print([v.name for v in m.layers[0].states], m.layers[0].states[0].shape)
fixed(m.layers[0])
first = sess.run(m.outputs[0], {m.inputs[0]: xv})
sess.run(m.updates, {m.inputs[0]: xv})
print("carried", np.abs(sess.run(m.outputs[0], {m.inputs[0]: xv}) - first).max() > 1e-4)
m.reset_states()
print("model reset", r4(sess.run(m.layers[0].states[0])), np.abs(sess.run(m.outputs[0], {m.inputs[0]: xv}) - first).max() < 1e-6)


# ---- stacked_dropout ---------------------------------------------------------
# dropout and recurrent_dropout of the cells in a stacked RNN (tf.keras.layers.RNN over a
# list of cells; expected output from real TF through scripts/tf_oracle): each cell's masks
# are made once before the loop, shaped like its own input (the cell below's output) and
# state, under a cond on the learning phase: the identity when not training (the numbers of
# the stack without dropout), dropped when training.
tf.reset_default_graph()
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


# ---- unroll ------------------------------------------------------------------
# unroll=True recurrent layers (expected output from real TF through scripts/tf_oracle): the
# steps one after another in the graph, no while loop; the numbers of the looped layer, with
# go_backwards, return_sequences, a mask and stacked cells; an undefined time dimension is an
# error.
tf.reset_default_graph()
x = tf.placeholder(tf.float32, [None, 4, 3], name="x")
xv = ((np.arange(24, dtype=np.float32) * 5) % 7 / 7.0 - 0.4).reshape(2, 4, 3)
xv[1, 3] = 0.0
pairs = []
for make in (lambda u: L.LSTM(3, unroll=u), lambda u: L.GRU(2, unroll=u, return_sequences=True, go_backwards=True),
             lambda u: L.RNN([L.SimpleRNNCell(2), L.LSTMCell(3)], unroll=u, return_state=True)):
    pairs.append((make(True), make(False)))
g = tf.get_default_graph()
outs = []
for un, lo in pairs:
    outs.append((un(x), lo(x)))
print(len([op for op in g.get_operations() if op.type == "Enter" and op.name.startswith("lstm/")]),
      len([op for op in g.get_operations() if op.type == "Enter" and op.name.startswith("lstm_1/")]) > 0)
masked = L.LSTM(2, unroll=True, return_sequences=True)
mo = masked(L.Masking(0.0)(x))
sess = K.backend.get_session()
for un, lo in pairs:
    fixed(un)
    fixed(lo)
fixed(masked)
for a, b in outs:
    av, bv = sess.run([a, b], {x: xv})
    fa = [v for t in (av if isinstance(a, list) else [av]) for v in r4(t)]
    fb = [v for t in (bv if isinstance(b, list) else [bv]) for v in r4(t)]
    print(fa, max([abs(p - q) for p, q in zip(fa, fb)]) < 1e-3)
print(r4(sess.run(mo, {x: xv})))
try:
    L.SimpleRNN(2, unroll=True)(tf.placeholder(tf.float32, [None, None, 3]))
except ValueError as e:
    print("ValueError", str(e).split("\n")[0])
