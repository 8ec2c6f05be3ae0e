# tf.nn.weighted_cross_entropy_with_logits, tf.nn.embedding_lookup_sparse, tf.metrics.mean_iou
# (compared with TensorFlow directly) and tf.contrib's metrics, layers.embed_sequence /
# optimize_loss, framework getters, crf and rnn additions (TF 2 has no tf.contrib: those parts
# print numpy references, and under tfsh whether tfsh's values match them).
import itertools

import numpy as np
import tensorflow as tf

TFSH = hasattr(tf, "contrib") and hasattr(tf.contrib, "crf")   # False under real TF 2
rs = np.random.RandomState(7)


def show(label, v):
    print(label, np.round(np.asarray(v, dtype=np.float64), 4).tolist())


def check(label, got, ref, tol=1e-4):
    """Under tfsh: does got match the numpy reference; under TF: the reference alone."""
    ok = True if got is None else bool(np.allclose(got, ref, atol=tol, rtol=tol))
    print(label, ok)
    show("  ref", ref)


# ---- tf.nn.weighted_cross_entropy_with_logits -------------------------------------------
g = tf.Graph()
with g.as_default():
    x = tf.constant([[1.5, -2.0, 30.0], [-40.0, 0.25, 0.0]])
    z = tf.constant([[1.0, 0.0, 0.3], [1.0, 1.0, 0.0]])
    l1 = tf.nn.weighted_cross_entropy_with_logits(labels=z, logits=x, pos_weight=3.0)
    l2 = tf.nn.weighted_cross_entropy_with_logits(targets=z, logits=x, pos_weight=tf.constant([0.5, 1.0, 2.0]))
    gx = tf.gradients(tf.reduce_sum(l1), x)[0]
    try:
        tf.nn.weighted_cross_entropy_with_logits(labels=z, targets=z, logits=x, pos_weight=1.0)
    except ValueError as e:
        print("ValueError", e)
    with tf.Session() as s:
        a, b, c = s.run([l1, l2, gx])
        show("wce", a)
        show("wce targets", b)
        show("wce grad", c)

# ---- tf.nn.embedding_lookup_sparse ------------------------------------------------------
g = tf.Graph()
with g.as_default():
    params = tf.constant(np.arange(15, dtype=np.float32).reshape(5, 3) - 6.0)
    ids = tf.SparseTensor(indices=[[0, 0], [0, 1], [0, 2], [2, 0], [3, 0], [3, 1]],
                          values=tf.constant([1, 3, 1, 4, 0, 2], tf.int64), dense_shape=[4, 3])
    wts = tf.SparseTensor(indices=[[0, 0], [0, 1], [0, 2], [2, 0], [3, 0], [3, 1]],
                          values=[1.0, 2.0, 0.5, 3.0, -1.0, 0.25], dense_shape=[4, 3])
    outs = []
    for comb in ("mean", "sqrtn", "sum"):
        for w in (None, wts):
            outs.append(tf.nn.embedding_lookup_sparse(params, ids, w, combiner=comb))
    outs.append(tf.nn.embedding_lookup_sparse(params, ids, None, max_norm=5.0))
    print("els shape", outs[0].shape.as_list()[1:])
    pv = tf.Variable(np.arange(15, dtype=np.float32).reshape(5, 3) / 10.0)
    ge = tf.gradients(tf.reduce_sum(tf.nn.embedding_lookup_sparse(pv, ids, wts, combiner="sqrtn") *
                                    tf.constant([1.0, 2.0, -1.0])), pv)[0]
    ge = tf.convert_to_tensor(ge)
    try:
        tf.nn.embedding_lookup_sparse(params, ids, None, combiner="max")
    except ValueError as e:
        print("ValueError", e)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        for comb, v in zip(["mean", "mean w", "sqrtn", "sqrtn w", "sum", "sum w", "max_norm"], s.run(outs)):
            show("els " + comb, v)
        show("els grad", s.run(ge))

# ---- tf.metrics.mean_iou ------------------------------------------------------------------
g = tf.Graph()
with g.as_default():
    lab = tf.placeholder(tf.int32, [None, 2])
    pred = tf.placeholder(tf.int32, [None, 2])
    wt = tf.placeholder(tf.float32, [None, 2])
    miou, up = tf.metrics.mean_iou(lab, pred, 4)
    miou_w, up_w = tf.metrics.mean_iou(lab, pred, 4, weights=wt, name="weighted")
    print("miou vars", [v.name for v in tf.local_variables()])
    print("miou dtypes", miou.dtype.name, up.dtype.base_dtype.name, up.shape.as_list())
    with tf.Session() as s:
        s.run(tf.local_variables_initializer())
        show("miou empty", s.run(miou))
        feeds = [([[0, 1], [1, 1]], [[0, 1], [0, 1]], [[1, 1], [0.5, 2]]),
                 ([[2, 2], [0, 1]], [[2, 1], [0, 0]], [[1, 0], [1, 1]])]
        for lb, pr, w in feeds:
            cm, cmw = s.run([up, up_w], {lab: lb, pred: pr, wt: w})
            show("miou cm", cm)
            show("miou cm w", cmw)
            show("miou", s.run([miou, miou_w]))

# ---- tf.contrib.metrics.streaming_accuracy / streaming_mean -----------------------------
g = tf.Graph()
with g.as_default():
    p = tf.placeholder(tf.int64, [None])
    y = tf.placeholder(tf.int64, [None])
    vals = tf.placeholder(tf.float32, [None])
    if TFSH:
        acc, acc_up = tf.contrib.metrics.streaming_accuracy(p, y)
        mean, mean_up = tf.contrib.metrics.streaming_mean(vals, weights=tf.ones_like(vals) * 2.0)
    else:
        acc, acc_up = tf.metrics.accuracy(y, p)
        mean, mean_up = tf.metrics.mean(vals, weights=tf.ones_like(vals) * 2.0)
    print("streaming vars", [v.name for v in tf.local_variables()])
    with tf.Session() as s:
        s.run(tf.local_variables_initializer())
        for pp, yy, vv in [([1, 2, 3], [1, 0, 3], [1.0, 2.0]), ([4], [4], [6.0])]:
            show("streaming", s.run([acc_up, mean_up], {p: pp, y: yy, vals: vv}))
        show("streaming value", s.run([acc, mean]))

# ---- tf.contrib.layers.embed_sequence, tf.contrib.framework ------------------------------
table = rs.randn(6, 4).astype(np.float32)
g = tf.Graph()
with g.as_default():
    seq = tf.constant([[1, 5, 0], [2, 2, 3]])
    if TFSH:
        emb = tf.contrib.layers.embed_sequence(seq, vocab_size=6, embed_dim=4,
                                               initializer=tf.constant_initializer(table))
        emb2 = tf.contrib.layers.embed_sequence(seq, 6, 2, scope="words")
        try:
            tf.contrib.layers.embed_sequence(seq)
        except ValueError as e:
            print("ValueError", e)
        names = [[v.op.name for v in f()] for f in (tf.contrib.framework.get_variables,
                                                    tf.contrib.framework.get_model_variables,
                                                    tf.contrib.framework.get_variables_to_restore)]
        names.append([v.op.name for v in tf.contrib.framework.get_variables("words")])
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            got = s.run(emb)
        print("embed shape", emb.shape.as_list(), emb2.shape.as_list())
    else:
        got = None
        print("ValueError Must specify vocab size and embedding dimension when not reusing. "
              "Got vocab_size=None and embed_dim=None")
        names = [["EmbedSequence/embeddings", "words/embeddings"]] * 3 + [["words/embeddings"]]
        print("embed shape", [2, 3, 4], [2, 3, 2])
    print("framework", names)
    check("embed_sequence", got, table[[[1, 5, 0], [2, 2, 3]]])

# ---- tf.contrib.layers.optimize_loss -----------------------------------------------------
X = rs.randn(8, 3).astype(np.float32)
Y = (X.dot([[1.0], [-2.0], [0.5]]) + 0.3).astype(np.float32)


def np_sgd(steps, lr0, clip, decay):
    w, b = np.full((3, 1), 0.1, np.float32), np.zeros(1, np.float32)
    losses = []
    for t in range(steps):
        err = X.dot(w) + b - Y
        losses.append(np.mean(err ** 2))
        gw, gb = 2 * X.T.dot(err) / len(X), 2 * err.mean(0)
        norm = np.sqrt(np.sum(gw ** 2) + np.sum(gb ** 2))
        scale = min(1.0, clip / norm)
        lr = lr0 * decay ** t
        w, b = w - lr * scale * gw, b - lr * scale * gb
    return losses, w


g = tf.Graph()
with g.as_default():
    gs = tf.train.get_or_create_global_step()
    w = tf.get_variable("w", [3, 1], initializer=tf.constant_initializer(0.1))
    b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
    loss = tf.reduce_mean(tf.square(tf.matmul(X, w) + b - Y))
    if TFSH:
        op = tf.contrib.layers.optimize_loss(loss, gs, 0.1, "SGD", clip_gradients=1.0,
                                             learning_rate_decay_fn=lambda lr, step: lr * 0.9 ** tf.cast(step,
                                                                                                        tf.float32))
        print("optimize_loss", op.dtype.name, op.shape.as_list(),
              sorted(v.op.name for v in tf.global_variables()))
        for bad in [dict(optimizer="Foo"), dict(optimizer="SGD", learning_rate="x"),
                    dict(optimizer="SGD", clip_gradients=1)]:
            args = dict(loss=loss, global_step=gs, learning_rate=0.1)
            args.update(bad)
            try:
                tf.contrib.layers.optimize_loss(**args)
            except ValueError as e:
                print("ValueError", str(e).split(",")[0].split(" of type")[0])
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            got = [s.run(op) for _ in range(5)]
            got_w, step = s.run([w, gs])
    else:
        print("optimize_loss float32 [] ['OptimizeLoss/learning_rate', 'b', 'global_step', 'w']")
        print("ValueError Optimizer name should be one of [Adagrad")
        print("ValueError Learning rate should be 0d Tensor or float. Got x")
        print("ValueError Unknown type <class 'int'> for clip_gradients")
        got, got_w, step = None, None, 5
    ref, ref_w = np_sgd(5, 0.1, 1.0, 0.9)
    check("optimize_loss SGD", got, ref)
    check("optimize_loss w", got_w, ref_w)
    print("global_step", step)

# optimize_loss("Adam") against AdamOptimizer.minimize
res = []
for use_contrib in (True, False):
    g = tf.Graph()
    with g.as_default():
        gs = tf.train.get_or_create_global_step()
        w = tf.get_variable("w", [3, 1], initializer=tf.constant_initializer(0.1))
        loss = tf.reduce_mean(tf.square(tf.matmul(X, w) - Y))
        if use_contrib and TFSH:
            op = tf.contrib.layers.optimize_loss(loss, gs, 0.05, "Adam")
        else:
            step = tf.train.AdamOptimizer(0.05).minimize(loss, global_step=gs)
            with tf.control_dependencies([step]):
                op = tf.identity(loss)
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            res.append([s.run(op) for _ in range(4)] + [s.run(gs)])
check("optimize_loss Adam", res[0], res[1])

# ---- tf.contrib.crf ----------------------------------------------------------------------
B, T, N = 3, 4, 3
U = rs.randn(B, T, N).astype(np.float32)
A = rs.randn(N, N).astype(np.float32)
TAGS = np.array([[0, 2, 1, 1], [1, 0, 2, 0], [2, 2, 0, 1]], np.int32)
LENS = np.array([4, 2, 1], np.int32)


def np_score(u, a, tags, n):
    return sum(u[t, tags[t]] for t in range(n)) + sum(a[tags[t], tags[t + 1]] for t in range(n - 1))


def np_crf(u, a, tags, lens):
    """Brute force over all tag sequences: unary, binary, score, log Z, best path and score."""
    out = {k: [] for k in ("unary", "binary", "score", "norm", "path", "best")}
    for i, n in enumerate(lens):
        out["unary"].append(sum(u[i, t, tags[i, t]] for t in range(n)))
        out["binary"].append(sum(a[tags[i, t], tags[i, t + 1]] for t in range(n - 1)))
        out["score"].append(np_score(u[i], a, tags[i], n))
        all_s = {p: np_score(u[i], a, p, n) for p in itertools.product(range(N), repeat=n)}
        m = max(all_s.values())
        out["norm"].append(m + np.log(sum(np.exp(v - m) for v in all_s.values())))
        best = max(all_s, key=all_s.get)
        out["path"].append(list(best) + [0] * (u.shape[1] - n))
        out["best"].append(all_s[best])
    return {k: np.array(v) for k, v in out.items()}


ref = np_crf(U, A, TAGS, LENS)
g = tf.Graph()
with g.as_default():
    if TFSH:
        crf = tf.contrib.crf
        u_in = tf.placeholder(tf.float32, [None, None, N])
        tg = tf.placeholder(tf.int32, [None, None])
        ln = tf.placeholder(tf.int32, [None])
        trans = tf.constant(A)
        ll, tp = crf.crf_log_likelihood(u_in, tg, ln, trans)
        parts = [crf.crf_unary_score(tg, ln, u_in), crf.crf_binary_score(tg, ln, trans),
                 crf.crf_sequence_score(u_in, tg, ln, trans), crf.crf_log_norm(u_in, ln, trans)]
        dec, best = crf.crf_decode(u_in, trans, ln)
        with tf.variable_scope("crf_layer"):
            ll2, tvar = crf.crf_log_likelihood(tf.constant(U), tf.constant(TAGS), tf.constant(LENS))
        print("transitions", tvar.name, tvar.shape.as_list(), tp is trans)
        uc = tf.constant(U)
        ll3, _ = crf.crf_log_likelihood(uc, tf.constant(TAGS), tf.constant(LENS), trans)
        tv = tf.Variable(A)
        ll4, _ = crf.crf_log_likelihood(uc, tf.constant(TAGS), tf.constant(LENS), tv)
        one, one_best = crf.crf_decode(tf.constant(U[:, :1]), trans, tf.constant([1, 1, 1]))
        one_ll, _ = crf.crf_log_likelihood(tf.constant(U[:, :1]), tf.constant(TAGS[:, :1]),
                                           tf.constant([1, 1, 0]), trans)
        feed = {u_in: U, tg: TAGS, ln: LENS}
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            got = s.run([ll] + parts + [dec, best], feed)
            got_one = s.run([one, one_best, one_ll])
            # time 1 only when run: the loops over time - 1 steps are empty
            dyn_one = s.run([dec, best], {u_in: U[:, :1], ln: [1, 1, 1]})
            err_u = tf.test.compute_gradient_error(uc, [B, T, N], ll3, [B])
            err_a = tf.test.compute_gradient_error(tv, [N, N], ll4, [B])
            print("crf grad errors < 1e-3", err_u < 1e-3, err_a < 1e-3)
            vit = [crf.viterbi_decode(U[i, :LENS[i]], A) for i in range(B)]
        print("crf_decode dtype", dec.dtype.name, best.dtype.name)
    else:
        print("transitions crf_layer/transitions:0 [3, 3] True")
        got, got_one, vit, dyn_one = [None] * 7, [None] * 3, None, [None] * 2
        print("crf grad errors < 1e-3", True, True)
        print("crf_decode dtype", "int32", "float32")
    check("crf_log_likelihood", got[0], ref["score"] - ref["norm"])
    for i, k in enumerate(["unary", "binary", "score", "norm"]):
        check("crf " + k, got[1 + i], ref[k])
    check("crf_decode tags", got[5], ref["path"], 0)
    check("crf_decode best", got[6], ref["best"])
    check("crf_decode len1", got_one[0], np.argmax(U[:, 0], 1)[:, None], 0)
    check("crf_decode len1 best", got_one[1], np.max(U[:, 0], 1))
    check("crf_decode time 1 fed", dyn_one[0], np.argmax(U[:, 0], 1)[:, None], 0)
    check("crf_decode time 1 fed best", dyn_one[1], np.max(U[:, 0], 1))
    m = U[:, 0].max(1)
    check("crf len1 ll", got_one[2], [U[0, 0, 0] - m[0] - np.log(np.exp(U[0, 0] - m[0]).sum()),
                                      U[1, 0, 1] - m[1] - np.log(np.exp(U[1, 0] - m[1]).sum()), 0.0])
    check("viterbi_decode", None if vit is None else [v[0] + [0] * (T - len(v[0])) for v in vit], ref["path"], 0)
    check("viterbi_decode score", None if vit is None else [v[1] for v in vit], ref["best"])

# ---- tf.contrib.rnn.LayerNormBasicLSTMCell -----------------------------------------------
H, D, TT = 3, 2, 3
XS = rs.randn(2, TT, D).astype(np.float32)
K = (rs.randn(D + H, 4 * H) * 0.5).astype(np.float32)
GB = {n: (1.0 + 0.1 * rs.randn(sz)).astype(np.float32) for n, sz in
      [("input", H), ("transform", H), ("forget", H), ("output", H), ("state", H)]}
BB = {n: (0.1 * rs.randn(sz)).astype(np.float32) for n, sz in
      [("input", H), ("transform", H), ("forget", H), ("output", H), ("state", H)]}


def np_ln(v, gamma, beta):
    mu = v.mean(1, keepdims=True)
    var = ((v - mu) ** 2).mean(1, keepdims=True)
    return (v - mu) / np.sqrt(var + 1e-12) * gamma + beta


def np_ln_lstm(xs, lens):
    sig = lambda v: 1 / (1 + np.exp(-v))
    c = np.zeros((xs.shape[0], H), np.float32)
    h = np.zeros_like(c)
    outs = []
    for t in range(xs.shape[1]):
        gates = np.concatenate([xs[:, t], h], 1).dot(K)
        i, j, f, o = [np_ln(q, GB[n], BB[n]) for q, n in
                      zip(np.split(gates, 4, 1), ["input", "transform", "forget", "output"])]
        nc = np_ln(c * sig(f + 1.0) + sig(i) * np.tanh(j), GB["state"], BB["state"])
        nh = np.tanh(nc) * sig(o)
        live = (t < lens)[:, None]
        c, h = np.where(live, nc, c), np.where(live, nh, h)
        outs.append(np.where(live, nh, 0.0))
    return np.stack(outs, 1), c, h


ref_o, ref_c, ref_h = np_ln_lstm(XS, np.array([3, 2]))
LN_NAMES = ["rnn/layer_norm_basic_lstm_cell/kernel"] + \
    ["rnn/layer_norm_basic_lstm_cell/%s/%s" % (n, v) for n in ("input", "transform", "forget", "output", "state")
     for v in ("gamma", "beta")]
g = tf.Graph()
with g.as_default():
    if TFSH:
        cell = tf.contrib.rnn.LayerNormBasicLSTMCell(H)
        out, st = tf.nn.dynamic_rnn(cell, tf.constant(XS), sequence_length=[3, 2], dtype=tf.float32)
        names = [v.op.name for v in tf.global_variables()]
        vals = {"kernel": K}
        vals.update({"%s/gamma" % n: GB[n] for n in GB})
        vals.update({"%s/beta" % n: BB[n] for n in BB})
        grads = tf.gradients(tf.reduce_sum(out), tf.trainable_variables())
        with tf.Session() as s:
            for v in tf.global_variables():
                v.load(vals[v.op.name.split("layer_norm_basic_lstm_cell/")[1]], s)
            got = s.run([out, st.c, st.h])
            print("ln lstm grads finite", all(np.all(np.isfinite(q)) for q in s.run(grads)))
        print("ln lstm state", type(st).__name__, cell.state_size, cell.output_size)
    else:
        names, got = LN_NAMES, [None] * 3
        print("ln lstm grads finite", True)
        print("ln lstm state", "LSTMStateTuple", "LSTMStateTuple(c=3, h=3)", 3)
    print("ln lstm vars", names)
    check("ln lstm outputs", got[0], ref_o)
    check("ln lstm c", got[1], ref_c)
    check("ln lstm h", got[2], ref_h)

# ---- tf.contrib.rnn.stack_bidirectional_dynamic_rnn / stack_bidirectional_rnn -------------
XB = rs.randn(2, 4, 3).astype(np.float32)


def fill(s):
    """Every variable its own deterministic values (by name), the same under TF and tfsh."""
    for v in tf.global_variables():
        seed = sum(ord(ch) for ch in v.op.name)
        v.load((np.random.RandomState(seed).randn(*v.shape.as_list()) * 0.4).astype(np.float32), s)


def stack_ref(cells_fw, cells_bw, x, lens, dynamic):
    # TF 1.15's stacking, written with core TF: each layer's fw/bw in scope cell_i
    with tf.variable_scope("stack_bidirectional_rnn"):
        states_fw, states_bw = [], []
        prev = x
        for i, (cf, cb) in enumerate(zip(cells_fw, cells_bw)):
            with tf.variable_scope("cell_%d" % i):
                if dynamic:
                    (of, ob), (sf, sb) = tf.nn.bidirectional_dynamic_rnn(cf, cb, prev, sequence_length=lens,
                                                                         dtype=tf.float32)
                    prev = tf.concat([of, ob], 2)
                else:
                    prev, sf, sb = tf.nn.static_bidirectional_rnn(cf, cb, prev, sequence_length=lens,
                                                                  dtype=tf.float32)
            states_fw.append(sf)
            states_bw.append(sb)
        return prev, tuple(states_fw), tuple(states_bw)


for dynamic in (True, False):
    g = tf.Graph()
    with g.as_default():
        cells_fw = [tf.nn.rnn_cell.BasicLSTMCell(2), tf.nn.rnn_cell.GRUCell(3)]
        cells_bw = [tf.nn.rnn_cell.BasicLSTMCell(2), tf.nn.rnn_cell.GRUCell(3)]
        x = tf.constant(XB) if dynamic else tf.unstack(tf.constant(XB), axis=1)
        lens = tf.constant([4, 3])
        if TFSH:
            f = tf.contrib.rnn.stack_bidirectional_dynamic_rnn if dynamic else tf.contrib.rnn.stack_bidirectional_rnn
            out, sfw, sbw = f(cells_fw, cells_bw, x, sequence_length=lens, dtype=tf.float32)
        else:
            out, sfw, sbw = stack_ref(cells_fw, cells_bw, x, lens, dynamic)
        print("stack", "dynamic" if dynamic else "static", type(sfw).__name__, len(sfw),
              type(sfw[0]).__name__, [v.op.name for v in tf.global_variables()])
        with tf.Session() as s:
            fill(s)
            o, a, b = s.run([out, sfw, sbw])
            show("stack out", o)
            show("stack fw h", a[0].h)
            show("stack bw", b[1])

if TFSH:
    for bad in [([], []), ([tf.nn.rnn_cell.GRUCell(2)], []), ([tf.nn.rnn_cell.GRUCell(2)] * 2,
                                                             [tf.nn.rnn_cell.GRUCell(2)])]:
        try:
            tf.contrib.rnn.stack_bidirectional_dynamic_rnn(bad[0], bad[1], tf.zeros([1, 2, 2]), dtype=tf.float32)
        except ValueError as e:
            print("ValueError", e)
else:
    print("ValueError Must specify at least one fw cell for BidirectionalRNN.")
    print("ValueError Must specify at least one bw cell for BidirectionalRNN.")
    print("ValueError Forward and Backward cells must have the same depth.")
