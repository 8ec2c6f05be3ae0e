# A small character language model: dynamic_rnn over a BasicLSTMCell, a softmax
# over the characters, trained with Adam on a text this test makes itself; every variable
# starts from the same deterministic values in TF and in tfsh, so the losses must fall the
# same way. Expected output from real TF (3 decimals).
import numpy as np
import tensorflow as tf

words = ["the", "river", "runs", "past", "a", "mill", "and", "under", "old", "stone", "bridge",
         "where", "children", "throw", "bread", "to", "ducks"]
text = " ".join(words[(i * 7 + i // 3) % len(words)] for i in range(120)) + "."
chars = sorted(set(text))
ix = dict((c, i) for i, c in enumerate(chars))
data = [ix[c] for c in text]
V, T, B, H = len(chars), 12, 8, 24
starts = [(b * 53) % (len(data) - T - 1) for b in range(B)]
xs = np.array([data[s:s + T] for s in starts], dtype=np.int32)
ys = np.array([data[s + 1:s + T + 1] for s in starts], dtype=np.int32)


def wave(shp, k):
    n = int(np.prod(shp))
    return tf.reshape((tf.mod(tf.cast(tf.range(n), tf.float32) * 0.618 + k * 0.31, 1.0) - 0.5) * 0.6, shp)


x = tf.placeholder(tf.int32, [B, T])
y = tf.placeholder(tf.int32, [B, T])
cell = tf.nn.rnn_cell.BasicLSTMCell(H)
out, _ = tf.nn.dynamic_rnn(cell, tf.one_hot(x, V), dtype=tf.float32)
w = tf.get_variable("softmax_w", [H, V])
b = tf.get_variable("softmax_b", [V], initializer=tf.zeros_initializer())
logits = tf.matmul(tf.reshape(out, [-1, H]), w) + b
loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.reshape(y, [-1]), logits=logits))
train = tf.train.AdamOptimizer(0.02).minimize(loss)
print(V, len(text), [v.name for v in tf.trainable_variables()])

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for k, v in enumerate(tf.trainable_variables()):
        sess.run(tf.assign(v, wave(v.get_shape().as_list(), float(k))))
    first = None
    for step in range(81):
        l, _ = sess.run([loss, train], {x: xs, y: ys})
        first = l if first is None else first
        if step % 10 == 0:
            print(step, round(float(l), 3))
    print("fell by more than half:", float(l) < float(first) / 2)
