# stateful=True recurrent layers in graph mode (expected output from real TF through
# scripts/tf_oracle): the states are variables of the layer's batch size (lstm/Variable,
# lstm/Variable_1) that start each call, the layer's updates assign the final states to
# them, reset_states() zeros them or sets given values; a stateful layer without a known
# batch size is an error.
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
