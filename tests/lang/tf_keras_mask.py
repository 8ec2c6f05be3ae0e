# Keras masks in graph mode (expected output from real TF through scripts/tf_oracle):
# Embedding(mask_zero=True) and Masking give a mask that Dense carries and SimpleRNN, GRU,
# LSTM and Bidirectional read: a masked step keeps the previous states, and its output
# repeats the previous one (zeros in Bidirectional's sequences); Concatenate and Add merge
# their inputs' masks; numbers from fixed weights.
import numpy as np
import tensorflow as tf

K = tf.keras
L = tf.keras.layers


def r4(a):
    return [round(float(v), 4) + 0.0 for v in np.asarray(a).reshape(-1)]


def fixed(layer):
    ws = []
    for i, w in enumerate(layer.get_weights()):
        n = w.size
        ws.append(((np.arange(n, dtype=np.float32) * 7 + i * 3) % 11 / 10.0 - 0.5).reshape(w.shape))
    layer.set_weights(ws)


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
