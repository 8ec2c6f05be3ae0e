# tf.nn.ctc_loss (values, gradient, flags, time_major), tf.nn.ctc_greedy_decoder,
# tf.nn.ctc_beam_search_decoder and tf.edit_distance, TF's error messages, and a tiny CRNN-style
# training loop (expected output from TensorFlow through the oracle)
import numpy as np
import tensorflow as tf


def data(shape, f=np.sin, dtype=np.float32, scale=0.7):
    n = int(np.prod(shape))
    return f(np.arange(n) * scale).reshape(shape).astype(dtype)


def show(v):
    print(np.round(v, 4) if isinstance(v, np.ndarray) and v.dtype.kind == "f" else v)


def show_sparse(st):
    print(st.indices.tolist(), st.values.tolist(), st.dense_shape.tolist())


def _first(msg):   # TF's words, without the node and line decorations
    for key in ("Not enough", "label SparseTensor", "sequence_length(", "seq_len(", "Saw a", "All labels",
                "Labels length", "len(sequence_length)", "Less leaves", "requested more", "Got an inner",
                "Dimensions must", "Shape must", "Num elements", "Expected"):
        if key in msg:
            msg = msg[msg.index(key):]
            break
    return msg.split("\n\t")[0].split(" for '")[0].strip()


s = tf.Session()
T, B, C = 6, 4, 5
x = tf.constant(data((T, B, C)))
# batch 0: [1, 2, 1]; 1: [1, 1] (a blank between); 2: [3]; 3: [0, 2, 2, 3]
lab = tf.SparseTensor([[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [2, 0], [3, 0], [3, 1], [3, 2], [3, 3]],
                      np.array([1, 2, 1, 1, 1, 3, 0, 2, 2, 3], np.int32), [4, 4])
seq = [6, 4, 3, 6]
loss = tf.nn.ctc_loss(lab, x, seq)
print(loss.op.type, loss.shape, loss.dtype)
show(s.run(loss))
g = tf.gradients(tf.reduce_sum(loss * [1., 2., 3., 0.5]), x)[0]
print(g.shape)
show(s.run(g))
for pre, merge in ((True, True), (False, False), (True, False)):
    show(s.run(tf.nn.ctc_loss(lab, x, seq, preprocess_collapse_repeated=pre, ctc_merge_repeated=merge)))
show(s.run(tf.nn.ctc_loss(lab, tf.cast(x, tf.float64), seq)))
xb = tf.constant(data((B, T, C), np.cos))
lb = tf.nn.ctc_loss(lab, xb, seq, time_major=False)
for v in s.run([lb, tf.gradients(tf.reduce_sum(lb), xb)[0][1]]):
    show(v)
# labels longer than the sequence: skipped (0) with the flag; [1, 1] in 2 steps is impossible (inf)
short = tf.nn.ctc_loss(lab, x, [2, 2, 3, 6], ignore_longer_outputs_than_inputs=True)
show(s.run(short))
show(s.run(tf.gradients(short, x)[0][:2, :2]))
# finite differences
with tf.Graph().as_default(), tf.Session():
    xv = data((4, 2, 3), np.cos, np.float64)
    xt = tf.constant(xv)
    lt = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], np.array([0, 1, 1], np.int32), [2, 2])
    err = tf.test.compute_gradient_error(xt, [4, 2, 3], tf.nn.ctc_loss(lt, xt, [4, 3]), [2], x_init_value=xv)
    print("gradient error < 1e-3:", err < 1e-3)

# greedy decoding
dec, lp = tf.nn.ctc_greedy_decoder(x, seq)
print(len(dec), lp.shape, dec[0].indices.shape)
d, p = s.run([dec[0], lp])
show_sparse(d)
show(p)
d, p = s.run(tf.nn.ctc_greedy_decoder(x, [6, 0, 2, 5], merge_repeated=False))
show_sparse(d[0])
show(p)
d, p = s.run(tf.nn.ctc_greedy_decoder(x, [0, 0, 0, 0]))
show_sparse(d[0])
show(p)
# beam search
xs = tf.constant(data((5, 3, 4), np.sin, scale=0.9))
dec, lp = tf.nn.ctc_beam_search_decoder(xs, [5, 4, 2], beam_width=4, top_paths=2)
print(len(dec), lp.shape)
d, p = s.run([dec, lp])
for t in d:
    show_sparse(t)
show(p)
d, p = s.run(tf.nn.ctc_beam_search_decoder(xs, [5, 3, 1], beam_width=6, top_paths=3, merge_repeated=False))
for t in d:
    show_sparse(t)
show(p)
d, p = s.run(tf.nn.ctc_beam_search_decoder(x, seq, beam_width=1))
show_sparse(d[0])
show(p)

# edit distance
h = tf.SparseTensor([[0, 0, 0], [0, 0, 1], [1, 0, 0], [1, 1, 0], [1, 1, 1]], ["a", "b", "c", "a", "b"], [2, 3, 2])
t = tf.SparseTensor([[0, 0, 0], [0, 1, 0], [1, 0, 0], [1, 0, 1], [1, 1, 0]], ["a", "c", "c", "d", "b"], [2, 3, 3])
e = tf.edit_distance(h, t)
print(e.op.type, e.shape, e.dtype)
show(s.run(e))
show(s.run(tf.edit_distance(h, t, normalize=False)))
hi = tf.SparseTensor([[0, 0], [0, 1], [1, 0], [3, 0], [3, 1]], [1, 2, 3, 4, 5], [4, 2])
ti = tf.SparseTensor([[0, 0], [2, 0], [3, 0], [3, 1], [3, 2]], [1, 5, 5, 4, 6], [4, 3])
show(s.run(tf.edit_distance(hi, ti)))   # row 1: empty truth (inf); row 2: empty hypothesis
show(s.run(tf.edit_distance(hi, ti, normalize=False)))
none = tf.SparseTensor(np.zeros((0, 2), np.int64), np.zeros(0, np.int32), [3, 1])
show(s.run(tf.edit_distance(none, none)))
show(s.run(tf.edit_distance(tf.SparseTensorValue([[0, 0]], np.array([1], np.int32), [2, 1]), none)))

# errors
cases = [
    lambda: tf.nn.ctc_loss(lab, x, [2, 4, 3, 6]),
    lambda: tf.nn.ctc_loss(lab, x, [7, 4, 3, 6]),
    lambda: tf.nn.ctc_loss(lab, x, [-1, 4, 3, 6]),
    lambda: tf.nn.ctc_loss(tf.SparseTensor([[1, 0], [0, 0]], np.array([1, 2], np.int32), [4, 1]), x, seq),
    lambda: tf.nn.ctc_loss(tf.SparseTensor([[0, 0], [1, 0], [4, 0]], np.array([1, 2, 1], np.int32), [5, 1]), x, seq),
    lambda: tf.nn.ctc_loss(tf.SparseTensor([[0, 0], [1, 0], [2, 0]], np.array([1, 2, 1], np.int32), [4, 1]), x, seq),
    lambda: tf.nn.ctc_loss(tf.SparseTensor([[0, 0], [1, 0], [2, 0], [3, 0]], np.array([1, -2, 1, 0], np.int32),
                                           [4, 1]), x, seq),
    lambda: tf.nn.ctc_loss(tf.SparseTensor([[0, 0], [0, 1], [0, 2], [1, 0], [2, 0], [3, 0]],
                                           np.array([1, 4, 2, 1, 1, 0], np.int32), [4, 3]), x, seq),
    lambda: tf.nn.ctc_greedy_decoder(x, [6, 7, 1, 1]),
    lambda: tf.nn.ctc_beam_search_decoder(x, [6, 0, 1, 1], beam_width=3, top_paths=2),
    lambda: tf.nn.ctc_beam_search_decoder(x, seq, beam_width=2, top_paths=3),
    lambda: tf.edit_distance(tf.SparseTensor([[0, 0], [5, 0]], [1, 2], [2, 1]), tf.SparseTensor([[0, 0]], [1], [2, 1])),
]
for f in cases:
    try:
        s.run(f())
        print("no error")
    except tf.errors.OpError as err:
        print(type(err).__name__ + ":", _first(err.message))
n = tf.placeholder(tf.int32, [None])
try:
    s.run(tf.nn.ctc_loss(lab, x, n), {n: [6, 4]})
except tf.errors.InvalidArgumentError as err:
    print("InvalidArgumentError:", _first(err.message))
for f in (lambda: tf.nn.ctc_loss(lab, x, [6, 4]), lambda: tf.nn.ctc_greedy_decoder(x[0], seq),
          lambda: tf.edit_distance(tf.SparseTensor([[0, 0, 0]], [1], [2, 1, 1]), tf.SparseTensor([[0, 0]], [1], [2, 1]))):
    with tf.Graph().as_default():
        xx = tf.constant(data((T, B, C)))
        x, lab = xx, tf.SparseTensor([[0, 0]], np.array([1], np.int32), [4, 1])
        try:
            f()
            print("no error")
        except ValueError as err:
            print("ValueError:", _first(str(err)))
s.close()

# a tiny CRNN-style head: features -> dense -> CTC, a few Adam steps
with tf.Graph().as_default():
    tf.set_random_seed(1)
    feats = tf.constant(data((2, 8, 6), np.cos, scale=0.37))                 # [batch, time, features]
    w = tf.Variable(tf.constant(data((6, 5), np.sin, scale=0.53) * 0.3))
    bias = tf.Variable(tf.zeros([5]))
    logits = tf.reshape(tf.matmul(tf.reshape(feats, [-1, 6]), w) + bias, [2, 8, 5])
    target = tf.SparseTensor([[0, 0], [0, 1], [0, 2], [1, 0], [1, 1]], np.array([0, 1, 1, 3, 2], np.int32), [2, 3])
    cost = tf.reduce_mean(tf.nn.ctc_loss(target, logits, [8, 7], time_major=False))
    step = tf.train.AdamOptimizer(0.1).minimize(cost)
    out, _ = tf.nn.ctc_greedy_decoder(tf.transpose(logits, [1, 0, 2]), [8, 7])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        costs = []
        for i in range(30):
            costs.append(sess.run([cost, step])[0])
        print([round(float(c), 3) for c in costs[::5]], costs[-1] < costs[0])
        show_sparse(sess.run(out[0]))
