# sess.run fetches namedtuples (an LSTM's LSTMStateTuple, tf.unique's result, the user's
# own) and OrderedDicts as their own types, and feeds a structure of tensors (an RNN's
# state, fed back step by step as char-rnn samplers do), against TensorFlow.
import collections
import numpy as np
import tensorflow as tf

x = tf.constant([[1., 2.], [3., 4.]])
P = collections.namedtuple("P", "a b")
cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.BasicLSTMCell(3) for _ in range(2)])
init = cell.zero_state(1, tf.float32)
inp = tf.placeholder(tf.float32, [1, 1, 2])
w = tf.get_variable("proj", [3, 2], initializer=tf.constant_initializer(0.25))
with tf.variable_scope("rnn", initializer=tf.constant_initializer(0.1)):
    out, st = tf.nn.dynamic_rnn(cell, inp, initial_state=init)
nxt = tf.tanh(tf.matmul(out[:, 0, :], w))
print(type(init).__name__, type(init[0]).__name__, init[0]._fields, init[1].dtype)
with tf.Session() as s:
    s.run(tf.global_variables_initializer())
    r = s.run(P(x, [x * 2, {"k": x}]))
    print(type(r).__name__, r.a.tolist(), type(r.b).__name__, r.b[1]["k"].shape)
    od = s.run(collections.OrderedDict([("z", x), ("a", x + 1)]))
    print(type(od).__name__, list(od.keys()))
    u = s.run(tf.unique([3, 1, 3, 2]))
    print(type(u).__name__, u.y.tolist(), u.idx.tolist())
    state = s.run(init)
    print(type(state).__name__, type(state[1]).__name__, state[1].h.tolist())
    v = np.full((1, 1, 2), 0.5, np.float32)
    for i in range(4):   # sampling: the state fed back, the output fed in
        o, state = s.run([nxt, st], {inp: v, init: state})
        v = o.reshape(1, 1, 2)
        print(i, np.round(o, 5).tolist(), np.round(state[1].c, 5).tolist())
    print(np.round(s.run(out, {inp: v, init[0].c: np.ones((1, 3), np.float32)}), 5).tolist())
    try:
        s.run(out, {inp: v, init: (1, 2, 3)})
    except ValueError:
        print("ValueError")
dd = collections.defaultdict(list)
dd["a"] = x
with tf.Session() as s:
    r = s.run(dd)
    print(type(r).__name__, r.default_factory, dict((k, v.tolist()) for k, v in r.items()))
