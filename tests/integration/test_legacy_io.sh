#!/usr/bin/env bash
# What TF1 tutorials do around the graph: tf.gfile / tf.io.gfile on the local disk, gradient
# clipping, errors
# a program raises itself (OpError(node_def, op, message)), and tf.summary.image, whose PNG
# images are parsed back here (chunk CRCs, inflated pixels) from the event file.
. "$(dirname "$0")/lib.sh"
cd "$WORK" || exit 1
cat >gfile.py <<'PY'
import tensorflow as tf
d = "logs"
if tf.gfile.Exists(d):
    tf.gfile.DeleteRecursively(d)
tf.gfile.MakeDirs(d + "/train/a")
tf.gfile.MakeDirs(d + "/train/a")           # exists already: fine
print(tf.gfile.IsDirectory(d), sorted(tf.gfile.ListDirectory(d + "/train")))
with tf.gfile.GFile(d + "/notes.txt", "w") as f:
    f.write("line 1\nline 2\n")
with tf.gfile.Open(d + "/notes.txt") as f:
    print([l.strip() for l in f])
tf.gfile.Copy(d + "/notes.txt", d + "/copy.txt")
try:
    tf.gfile.Copy(d + "/notes.txt", d + "/copy.txt")
except tf.errors.AlreadyExistsError as e:
    print("AlreadyExistsError:", e, e.error_code == tf.errors.ALREADY_EXISTS)
tf.gfile.Rename(d + "/copy.txt", d + "/moved.txt")
print(tf.gfile.Glob(d + "/*.txt"), tf.io.gfile.glob(d + "/*/a"))
print([(top, sorted(dirs), sorted(files)) for top, dirs, files in tf.gfile.Walk(d)])
tf.gfile.Remove(d + "/moved.txt")
tf.io.gfile.rmtree(d)
print(tf.io.gfile.exists(d))
for fn in (lambda: tf.gfile.Remove(d), lambda: tf.gfile.ListDirectory(d), lambda: tf.gfile.GFile(d + "/x").read()):
    try:
        fn()
    except tf.errors.NotFoundError as e:
        print("NotFoundError:", e)
e = tf.errors.InvalidArgumentError(None, None, "made by hand")
print(str(e), e.message, e.node_def, e.op, e.error_code == tf.errors.INVALID_ARGUMENT)
PY
check "tf.gfile, tf.io.gfile and errors made by hand" "True ['a']
['line 1', 'line 2']
AlreadyExistsError: file already exists: logs/copy.txt True
['logs/moved.txt', 'logs/notes.txt'] ['logs/train/a']
[('logs', ['train'], ['moved.txt', 'notes.txt']), ('logs/train', ['a'], []), ('logs/train/a', [], [])]
False
NotFoundError: logs; No such file or directory
NotFoundError: Could not find directory logs
NotFoundError: logs/x; No such file or directory
made by hand made by hand None None True" "$("$TFSH" gfile.py 2>&1)"

# tf.summary.image (tags name/image/i when max_outputs > 1, as TF1): a 2x3 RGB float image
# with negatives (scaled around 128), a 2x2
# grayscale uint-range image (scaled so that the largest is 255), max_outputs.
cat >image.py <<'PY'
import numpy as np
import tensorflow as tf
rgb = tf.constant([[[[-1.0, 0.0, 1.0], [0.5, 0.5, 0.5], [0.0, 0.0, 0.0]],
                    [[1.0, 1.0, 1.0], [-0.5, 0.25, 0.0], [0.0, -1.0, 0.0]]]])
gray = tf.placeholder(tf.float32, [None, 2, 2, 1])
s1 = tf.summary.image("rgb", rgb)
s2 = tf.summary.image("gray", gray, max_outputs=2)
merged = tf.summary.merge_all()
w = tf.summary.FileWriter("events")
with tf.Session() as sess:
    w.add_summary(sess.run(merged, {gray: np.array([[[[0.0], [1.0]], [[2.0], [4.0]]]] * 3)}), 7)
w.close()
try:
    with tf.Session() as sess:
        sess.run(tf.summary.image("bad", tf.zeros([1, 2, 2, 5])))
except tf.errors.InvalidArgumentError as e:
    print("InvalidArgumentError:", str(e).split("\n")[0])
PY
cat >png.py3 <<'PY'
import glob, struct, sys, zlib
data = open(glob.glob("events/events.out.tfevents.*")[0], "rb").read()
def records(b):
    i = 0
    while i < len(b):
        n = struct.unpack("<Q", b[i:i + 8])[0]
        yield b[i + 12:i + 12 + n]
        i += 12 + n + 4
def fields(b):
    i = 0
    while i < len(b):
        key = 0; shift = 0
        while True:
            c = b[i]; i += 1; key |= (c & 0x7f) << shift; shift += 7
            if c < 0x80: break
        f, wt = key >> 3, key & 7
        if wt == 0:
            v = 0; shift = 0
            while True:
                c = b[i]; i += 1; v |= (c & 0x7f) << shift; shift += 7
                if c < 0x80: break
        elif wt == 1: v = b[i:i + 8]; i += 8
        elif wt == 5: v = b[i:i + 4]; i += 4
        else:
            n = 0; shift = 0
            while True:
                c = b[i]; i += 1; n |= (c & 0x7f) << shift; shift += 7
                if c < 0x80: break
            v = b[i:i + n]; i += n
        yield f, v
def png(b):
    assert b[:8] == b"\x89PNG\r\n\x1a\n"
    i, idat, ihdr = 8, b"", None
    while i < len(b):
        n = struct.unpack(">I", b[i:i + 4])[0]
        t, d = b[i + 4:i + 8], b[i + 8:i + 8 + n]
        assert struct.unpack(">I", b[i + 8 + n:i + 12 + n])[0] == zlib.crc32(t + d), "bad CRC"
        if t == b"IHDR": ihdr = struct.unpack(">IIBBBBB", d)
        if t == b"IDAT": idat += d
        i += 12 + n
    w, h, depth, ctype = ihdr[0], ihdr[1], ihdr[2], ihdr[3]
    ch = {0: 1, 4: 2, 2: 3, 6: 4}[ctype]
    raw = zlib.decompress(idat)
    rows = [raw[y * (w * ch + 1):(y + 1) * (w * ch + 1)] for y in range(h)]
    assert all(r[0] == 0 for r in rows)
    return w, h, depth, ch, [list(r[1:]) for r in rows]
for rec in records(data):
    ev = dict((f, v) for f, v in fields(rec))
    if 5 not in ev:
        continue
    for f, val in fields(ev[5]):
        vd = dict(fields(val))
        img = dict(fields(vd[4]))
        w, h, depth, ch, rows = png(img[4])
        print(vd[1].decode(), "step", ev.get(2), "proto %dx%d c%d" % (img[1], img[2], img[3]), "png %dx%d depth %d c%d" % (w, h, depth, ch), rows)
PY
out=$("$TFSH" image.py 2>&1)
check "a bad image shape is named" "InvalidArgumentError: Tensor must be 4-D with last dim 1, 3, or 4, not [1,2,2,5]" "$out"
check "tf.summary.image: tags, sizes, PNG pixels as TF1 scales them" \
"rgb/image/0 step 7 proto 2x3 c3 png 3x2 depth 8 c3 [[1, 128, 255, 191, 191, 191, 128, 128, 128], [255, 255, 255, 64, 159, 128, 128, 1, 128]]
gray/image/0 step 7 proto 2x2 c1 png 2x2 depth 8 c1 [[0, 63], [127, 255]]
gray/image/1 step 7 proto 2x2 c1 png 2x2 depth 8 c1 [[0, 63], [127, 255]]" "$(python3 png.py3 2>&1)"
# Gradient clipping: values by hand (|[3, 4]| = 5; global norm of [3, 4] and [[1, 2], [2, 4]]
# is sqrt(25 + 25) = 7.0710678), and the gradient of sum(clip_by_norm(x, 1)) at [3, 4]
# against the analytic 1/|x| - x * sum(x) / |x|^3 = [0.032, -0.024].
cat >clip.py <<'PY'
import tensorflow as tf
a = tf.constant([3.0, 4.0])
b = tf.constant([[1.0, 2.0], [2.0, 4.0]])
x = tf.Variable([3.0, 4.0])
g = tf.gradients(tf.reduce_sum(tf.clip_by_norm(x, 1.0)), x)[0]
out, n = tf.clip_by_global_norm([a, None, b], 2.0)
with tf.Session() as s:
    s.run(x.initializer)
    print(s.run(tf.clip_by_norm(a, 1.0)), s.run(tf.clip_by_norm(a, 10.0)), s.run(tf.clip_by_norm(b, 1.0, axes=[1]))[1])
    print("%.6f" % s.run(n), out[1], s.run(out[0]), "%.6f" % s.run(tf.global_norm([a, b])))
    print(["%.5f" % v for v in s.run(g)])
PY
check "clip_by_norm, clip_by_global_norm, global_norm and a gradient through them" "[0.6 0.8] [3. 4.] [0.4472136 0.8944272]
7.071068 None [0.84852815 1.1313709 ] 7.071068
['0.03200', '-0.02400']" "$("$TFSH" clip.py 2>&1)"
# Composites legacy models use, against hand-computed values: log(e+e^2+e^3+e^4) = 4.44019,
# log(e^1+e^3) = 3.126928; polynomial decay (0.1-0.01)*(1-5/10)+0.01 = 0.055 and with cycle
# (decay_steps 4 -> 8) 0.04375; the layers' shapes and variable names.
cat >composites.py <<'PY'
import numpy as np
import tensorflow as tf
s = tf.Session()
a = tf.constant([[1.0, 2.0], [3.0, 4.0]])
print(s.run(tf.squared_difference(a, 1.0)).tolist(), s.run(tf.norm(a, axis=1)), s.run(tf.norm(a, ord=1)))
print(s.run(tf.reduce_logsumexp(a)), s.run(tf.reduce_logsumexp(a, axis=0, keepdims=True)))
print(s.run(tf.nn.l2_normalize(a, axis=1))[1], [m.tolist() for m in s.run(tf.nn.moments(a, axes=[0]))])
print(s.run(tf.nn.embedding_lookup(tf.constant(np.arange(12, dtype=np.float32).reshape(4, 3)), [2, 0])).tolist())
gs = tf.Variable(5, dtype=tf.int64)
s.run(gs.initializer)
print(s.run(tf.train.polynomial_decay(0.1, gs, 10, 0.01)), s.run(tf.train.polynomial_decay(0.1, gs, 4, 0.01, cycle=True)))
x = tf.placeholder(tf.float32, [None, 8, 8, 3])
c = tf.layers.conv2d(x, 4, 3, padding="same", activation=tf.nn.relu)
print(c.shape, tf.layers.max_pooling2d(c, 2, 2).shape, tf.layers.average_pooling2d(c, (2, 2), 2, padding="same").shape,
      [v.name for v in tf.trainable_variables()[1:]], tf.train.start_queue_runners(s))
PY
check "squared_difference, norm, reduce_logsumexp, l2_normalize, moments, embedding_lookup, polynomial_decay, layers.conv2d/pooling" \
"[[0.0, 1.0], [4.0, 9.0]] [2.236068 5.      ] 10.0
4.44019 [[3.126928 4.126928]]
[0.6 0.8] [[2.0, 3.0], [1.0, 1.0]]
[[6.0, 7.0, 8.0], [0.0, 1.0, 2.0]]
0.055 0.043750003
(?, 8, 8, 4) (?, 4, 4, 4) (?, 4, 4, 4) ['conv2d/kernel:0', 'conv2d/bias:0'] []" "$("$TFSH" composites.py 2>&1)"
# tf.where (TF1's Select): elementwise, a vector over the first dimension, a scalar; the
# gradient of sum(where(x > 0, x*x, 10x)) at [1, -2, 3] is [2, 10, 6]; a bad condition.
cat >where.py <<'PY'
import tensorflow as tf
s = tf.Session()
a = tf.constant([[1.0, -2.0], [-3.0, 4.0]])
print(s.run(tf.where(a > 0, a, tf.zeros_like(a))).tolist(), s.run(tf.where(tf.constant([True, False]), a, -a)).tolist(),
      s.run(tf.where(True, a, -a)).tolist())
x = tf.Variable([1.0, -2.0, 3.0])
y = tf.where(x > 0, x * x, 10.0 * x)
s.run(x.initializer)
print([v.tolist() for v in s.run([y, tf.gradients(tf.reduce_sum(y), x)[0]])])
try:
    s.run(tf.where(tf.constant([True, False, True]), a, a))
except tf.errors.InvalidArgumentError as e:
    print("InvalidArgumentError:", str(e).split("\n")[0])
PY
check "tf.where: values, gradient, a bad condition" "[[1.0, 0.0], [0.0, 4.0]] [[1.0, -2.0], [3.0, -4.0]] [[1.0, -2.0], [-3.0, 4.0]]
[[1.0, -20.0, 9.0], [2.0, 10.0, 6.0]]
InvalidArgumentError: condition must be a scalar, a vector over the first dimension of 'then', or the shape of 'then'; got 3 elements for 4" "$("$TFSH" where.py 2>&1)"
# tf.cond: a Python bool or a constant picks the branch while building; a tensor pred
# builds Switch/Merge (values and gradients follow the branch taken);
# tf.layers.dropout(training=tensor); a branch that assigns runs only when taken.
cat >cond.py <<'PY'
import numpy as np
import tensorflow as tf
s = tf.Session()
t = tf.placeholder(tf.bool, [])
x = tf.constant([1.0, 2.0, 3.0, 4.0])
y = tf.cond(t, lambda: x * 2.0, lambda: x - 1.0)
g = tf.gradients(tf.reduce_sum(y), x)[0]
print(s.run(y, {t: True}).tolist(), s.run(y, {t: False}).tolist(), s.run(g, {t: True}).tolist(), s.run(g, {t: False}).tolist())
a, b = tf.cond(t, lambda: (x, x + 1), lambda: (x * 0, x * 0))
print([v.tolist() for v in s.run([a, b], {t: False})], tf.cond(True, lambda: "yes", lambda: "no"),
      tf.cond(tf.constant(False), lambda: 1, lambda: 2))
d = tf.layers.dropout(tf.ones([1000]), rate=0.5, training=t, seed=1)
on, off = s.run(d, {t: True}), s.run(d, {t: False})
print(float(off.sum()), 300 < int((on > 0).sum()) < 700, float(on.max()))
v = tf.Variable(1.0)
c = tf.cond(t, lambda: tf.assign(v, 2.0), lambda: tf.identity(v))
s.run(v.initializer)
print(s.run(c, {t: False}), s.run(v), s.run(c, {t: True}), s.run(v))
PY
check "tf.cond: build-time branches, Switch/Merge results and gradients, dropout, stateful branches" \
"[2.0, 4.0, 6.0, 8.0] [0.0, 1.0, 2.0, 3.0] [2.0, 2.0, 2.0, 2.0] [1.0, 1.0, 1.0, 1.0]
[[0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]] yes 2
1000.0 True 2.0
1.0 1.0 2.0 2.0" "$("$TFSH" cond.py 2>&1)"
# Regularizers reach REGULARIZATION_LOSSES once per variable (get_variable, a scope's
# regularizer, layers' kernel_regularizer, contrib.layers.fully_connected):
# 0.5*l2(12 ones) + 0.5*l2(6 ones) + 0.1*|[-3, -3]| = 3 + 1.5 + 0.6 = 5.1; losses by hand:
# huber([.5, 2, -3], delta 1) = mean(.125, 1.5, 2.5) = 1.375, absolute 11/6, sigmoid ln 2.
cat >reg.py <<'PY'
import tensorflow as tf
x = tf.placeholder(tf.float32, [None, 3])
reg = tf.contrib.layers.l2_regularizer(0.5)
h = tf.contrib.layers.fully_connected(x, 4, weights_regularizer=reg, weights_initializer=tf.ones_initializer())
with tf.variable_scope("s", regularizer=tf.contrib.layers.l1_regularizer(0.1)):
    w = tf.get_variable("w", [2], initializer=tf.constant_initializer(-3.0))
with tf.variable_scope("s", reuse=True):
    w2 = tf.get_variable("w", [2])
d = tf.layers.dense(x, 2, kernel_initializer=tf.ones_initializer(), kernel_regularizer=reg)
print([t.name for t in tf.losses.get_regularization_losses()])
s = tf.Session()
s.run(tf.global_variables_initializer())
y, p = tf.constant([0.0, 0.0, 0.0]), tf.constant([0.5, 2.0, -3.0])
print(s.run(tf.losses.get_regularization_loss()), s.run(tf.losses.huber_loss(y, p)), s.run(tf.losses.absolute_difference(y, p)),
      s.run(tf.losses.sigmoid_cross_entropy(tf.constant([[1.0, 0.0]]), tf.constant([[0.0, 0.0]]))), s.run(h, {x: [[1.0, 1.0, 1.0]]}).tolist())
PY
check "regularizers, regularization losses, huber/absolute/sigmoid losses, contrib fully_connected" \
"['fully_connected/weights/Regularizer/l2_regularizer/value:0', 's/w/Regularizer/l1_regularizer/value:0', 'dense/kernel/Regularizer/l2_regularizer/value:0']
5.1 1.375 1.8333334 0.6931472 [[3.0, 3.0, 3.0, 3.0]]" "$("$TFSH" reg.py 2>&1)"
# tf.one_hot with TF1's defaults (on 1, off 0, float32 unless on/off say otherwise), axis=0;
# tf.nn.in_top_k (ties at the boundary are in); tf.to_float / to_int32 / to_int64.
cat >onehot.py <<'PY'
import tensorflow as tf
s = tf.Session()
p = tf.constant([[0.1, 0.8, 0.1], [0.5, 0.2, 0.3], [0.3, 0.3, 0.4]])
print(s.run(tf.one_hot([1, 2], 3)).tolist(), s.run(tf.one_hot([0], 2, on_value=5, off_value=-1)).tolist(),
      s.run(tf.one_hot([1, 0], 3, axis=0)).tolist(), tf.one_hot([1], 2, dtype=tf.float64).dtype)
print(s.run(tf.nn.in_top_k(p, [1, 2, 0], 1)).tolist(), s.run(tf.nn.in_top_k(p, [1, 2, 0], 2)).tolist())
print(tf.to_float(tf.constant(1)).name, tf.to_int64(tf.constant(1.5)).dtype, s.run(tf.to_int32(tf.constant(2.7))))
PY
check "one_hot defaults, in_top_k, to_float/to_int32/to_int64" \
"[[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]] [[5, -1]] [[0.0, 1.0], [1.0, 0.0], [0.0, 0.0]] <dtype: 'float64'>
[True, False, False] [True, True, True]
ToFloat:0 <dtype: 'int64'> 2" "$("$TFSH" onehot.py 2>&1)"
# More composites against hand values (selu(-2) = 1.0507*1.6733*(e^-2 - 1) = -1.5201665,
# swish(3) = 3/(1+e^-3) = 2.8577223), old (0.x) names, and TF 1.13+'s tf.math.
cat >more.py <<'PY'
import tensorflow as tf
s = tf.Session()
x = tf.constant([-2.0, 0.0, 3.0, float("nan"), float("inf")])
print(s.run(tf.nn.leaky_relu(x[:3])).tolist(), s.run(tf.nn.softsign(x[:3])).tolist(), s.run(tf.nn.selu(x[:3])).tolist(),
      s.run(tf.nn.swish(x[:3])).tolist())
print(s.run(tf.is_nan(x)).tolist(), s.run(tf.is_inf(x)).tolist(), s.run(tf.is_finite(x)).tolist(), s.run(tf.count_nonzero(x[:3])))
b = tf.constant([[True, False], [True, True]])
print(s.run(tf.reduce_any(b, 1)).tolist(), s.run(tf.reduce_all(b, 1)).tolist(), s.run(tf.reduce_all(b)))
print(s.run(tf.eye(3, 2)).tolist(), s.run(tf.linspace(0.0, 1.0, 5)).tolist(), s.run(tf.reciprocal(tf.constant([2.0, 4.0]))).tolist())
print(s.run(tf.math.reduce_sum(tf.math.square([1.0, 2.0]))), tf.select is tf.where, tf.pack is tf.stack,
      tf.scalar_summary("a", tf.constant(1.0)).name, tf.merge_all_summaries().name, s.run(tf.norm([3.0, -4.0], ord=float("inf"))))
PY
check "leaky_relu, softsign, selu, swish, is_nan/inf/finite, count_nonzero, reduce_any/all, eye, linspace, reciprocal, 0.x names, tf.math" \
"[-0.4000000059604645, 0.0, 3.0] [-0.6666666865348816, 0.0, 0.75] [-1.5201665163040161, 0.0, 3.1521029472351074] [-0.23840583860874176, 0.0, 2.857722282409668]
[False, False, False, True, False] [False, False, False, False, True] [True, True, True, False, False] 2
[True, True] [False, True] False
[[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]] [0.0, 0.25, 0.5, 0.75, 1.0] [0.5, 0.25]
5.0 True True a/ScalarSummary:0 Merge/MergeSummary:0 4.0" "$("$TFSH" more.py 2>&1)"
# tf.Print: the value passes through (and its gradient), the message and the first values
# of each data tensor go to stderr, first_n bounds how often.
cat >print.py <<'PY'
import tensorflow as tf
x = tf.constant([1.0, 2.5, 3.0, 4.0])
y = tf.Print(x, [x, tf.constant(7), tf.constant([True, False])], "x and friends: ")
z = tf.Print(x * 2, [x], first_n=2, summarize=10)
v = tf.Variable(3.0)
w = tf.Print(v * v, [v], "v=")
g = tf.gradients(w, v)[0]
with tf.Session() as s:
    s.run(v.initializer)
    print(s.run(y).tolist(), [s.run(z).tolist() for i in range(3)][2], s.run(g))
PY
check "tf.Print: stdout" "[1.0, 2.5, 3.0, 4.0] [2.0, 5.0, 6.0, 8.0] 6.0" "$("$TFSH" print.py 2>/dev/null)"
# w's gradient never runs w's Print: its seed's shape is a constant (w's shape is known), as
# TF's array_ops.shape makes it, so no "v=[3]" (TF 2.21 prints the same three lines).
check "tf.Print: stderr" "x and friends: [1 2.5 3...][7][1 0]
[1 2.5 3 4]
[1 2.5 3 4]" "$("$TFSH" print.py 2>&1 >/dev/null)"
# tf.nn.top_k: values and indices, largest first, ties to the lower index; too few columns.
cat >topk.py <<'PY'
import tensorflow as tf
s = tf.Session()
p = tf.constant([[0.1, 0.8, 0.1, 0.5], [3.0, 1.0, 2.0, 3.0]])
v, i = tf.nn.top_k(p, 2)
print(v.shape, i.dtype, [a.tolist() for a in s.run([v, i])], [a.tolist() for a in s.run(tf.nn.top_k(tf.constant([5, 1, 9]), k=3))])
try:
    s.run(tf.nn.top_k(p, 5))
except tf.errors.InvalidArgumentError as e:
    print("InvalidArgumentError:", str(e).split("\n")[0])
PY
check "tf.nn.top_k" "(2, 2) <dtype: 'int32'> [[[0.800000011920929, 0.5], [3.0, 3.0]], [[1, 3], [0, 3]]] [[9, 5, 1], [2, 0, 1]]
InvalidArgumentError: input must have at least k columns. Had 4, needed 5" "$("$TFSH" topk.py 2>&1)"
# tf.metrics: accuracy and mean over local variables, streaming across batches:
# 2 of 3 right, then 0 of 1: 2/3 then 2/4; the mean of 1, 0, 3, then 0: 4/3 then 1.
cat >metrics.py <<'PY'
import tensorflow as tf
labels = tf.placeholder(tf.int64, [None])
pred = tf.placeholder(tf.int64, [None])
acc, acc_op = tf.metrics.accuracy(labels=labels, predictions=pred)
m, m_op = tf.metrics.mean(tf.cast(pred, tf.float32))
print(acc.name, acc_op.name, [v.name for v in tf.local_variables()], tf.global_variables())
s = tf.Session()
s.run(tf.local_variables_initializer())
print(s.run(acc), s.run([acc_op, m_op], {labels: [1, 2, 3], pred: [1, 0, 3]}), s.run([acc_op, m_op], {labels: [1], pred: [0]}),
      s.run([acc, m]))
PY
check "tf.metrics.accuracy and mean" "accuracy/value:0 accuracy/update_op:0 ['accuracy/total:0', 'accuracy/count:0', 'mean/total:0', 'mean/count:0'] []
0.0 [0.6666667, 1.3333334] [0.5, 1.0] [0.5, 1.0]" "$("$TFSH" metrics.py 2>&1)"
# AdadeltaOptimizer: three steps on sum(w^2) from [1, -2] (lr 1, rho 0.9, eps 1e-6) against
# the update rule computed in double precision by python3 (to 6 decimals); TF1's slot names.
cat >adadelta.py <<'PY'
import tensorflow as tf
w = tf.Variable([1.0, -2.0])
step = tf.train.AdadeltaOptimizer(learning_rate=1.0, rho=0.9, epsilon=1e-6).minimize(tf.reduce_sum(w * w))
s = tf.Session()
s.run(tf.global_variables_initializer())
for i in range(3):
    s.run(step)
    print(" ".join("%.6f" % x for x in s.run(w)))
print([v.name for v in tf.global_variables()])
PY
want=$(python3 -c '
import math
w, a, b, rho, eps = [1.0, -2.0], [0.0, 0.0], [0.0, 0.0], 0.9, 1e-6
for it in range(3):
    for i in range(2):
        g = 2 * w[i]
        a[i] = rho * a[i] + (1 - rho) * g * g
        u = math.sqrt(b[i] + eps) / math.sqrt(a[i] + eps) * g
        b[i] = rho * b[i] + (1 - rho) * u * u
        w[i] -= u
    print(" ".join("%.6f" % x for x in w))
print(["Variable:0", "Variable/Adadelta:0", "Variable/Adadelta_1:0"])')
check "AdadeltaOptimizer against its update rule" "$want" "$("$TFSH" adadelta.py 2>&1)"
finish
