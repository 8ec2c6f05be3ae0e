# FusedBatchNormV3 and its gradient FusedBatchNormGradV3 (expected output from real TF
# through scripts/tf_oracle): tf.nn.fused_batch_norm training (batch moments, the
# Bessel-corrected variance, exponential_avg_factor) and inference, NHWC and NCHW, the
# gradients checked against finite differences; Keras's BatchNormalization on a 4-D input
# builds TF's fused graph (a cond on keras_learning_phase, a PlaceholderWithDefault, over
# a training and an inference FusedBatchNormV3, momentum 1 when not training), and
# tf.layers.batch_normalization with fused=None does the same; TF's errors; trainable=False.
import numpy as np
import tensorflow as tf


def r4(a):
    return [round(float(v), 4) + 0.0 for v in np.asarray(a).reshape(-1)]


xv = (np.arange(48, dtype=np.float32).reshape(2, 2, 3, 4) ** 1.5 / 7.0) % 5.0
x = tf.placeholder(tf.float32, [2, 2, 3, 4], name="x")
sc = tf.constant([1.0, 2.0, 0.5, -1.0])
of = tf.constant([0.1, -0.2, 0.3, 0.0])
m = tf.constant([1.0, 2.0, 3.0, 0.5])
v = tf.constant([4.0, 1.0, 2.0, 3.0])
sess = tf.Session()

y, bm, bv = tf.nn.fused_batch_norm(x, sc, of, epsilon=0.01)
print(y.op.type, y.shape, bm.shape, [t.name for t in (y, bm, bv)])
for t in sess.run([y, bm, bv], {x: xv}):
    print(r4(t))
y2, bm2, bv2 = tf.nn.fused_batch_norm(x, sc, of, m, v, epsilon=0.01, exponential_avg_factor=0.25)
for t in sess.run([y2, bm2, bv2], {x: xv}):
    print(r4(t))
yi, mi, vi = tf.nn.fused_batch_norm(x, sc, of, m, v, epsilon=0.01, is_training=False)
print(r4(sess.run(yi, {x: xv})), mi.shape, vi.shape)   # (TF's grappler drops outputs 1 and 2 here)

# NCHW: the channels on axis 1, the same numbers as NHWC of the transposed input
xc = tf.transpose(x, [0, 3, 1, 2])
yc, bmc, bvc = tf.nn.fused_batch_norm(xc, sc, of, epsilon=0.01, data_format="NCHW")
print(yc.shape, bmc.shape)
out = sess.run([tf.transpose(yc, [0, 2, 3, 1]), y, bmc, bm], {x: xv})
print(np.abs(out[0] - out[1]).max() < 1e-5, np.abs(out[2] - out[3]).max() < 1e-5)

# gradients: FusedBatchNormGradV3 (training and inference), against TF's numbers and
# central differences of the loss
w = tf.constant((np.arange(48, dtype=np.float32) / 23.5 - 1.0).reshape(2, 2, 3, 4))
for yy, training in ((y, True), (yi, False)):
    loss = tf.reduce_sum(yy * w)
    gx, gs, go = tf.gradients(loss, [x, sc, of])
    print(gx.op.type, gx.op.get_attr("is_training"))
    gxv, gsv, gov = sess.run([gx, gs, go], {x: xv})
    print(r4(gxv[0, 0]), r4(gsv), r4(gov))
    xd = xv.astype(np.float64)
    worst = 0.0
    for i in (0, 5, 17, 30, 47):
        e = np.zeros(48)
        e[i] = 1e-2
        e = e.reshape(xv.shape)
        lp = sess.run(loss, {x: (xd + e).astype(np.float32)})
        lm = sess.run(loss, {x: (xd - e).astype(np.float32)})
        worst = max(worst, abs((lp - lm) / 2e-2 - gxv.reshape(-1)[i]))
    print("finite differences agree", worst < 2e-2)

# NCHW inference: TF's gradient transposes x and dy to NHWC around FusedBatchNormGradV3
yci = tf.nn.fused_batch_norm(xc, sc, of, m, v, epsilon=0.01, is_training=False, data_format="NCHW")[0]
gci = tf.gradients(tf.reduce_sum(yci * tf.transpose(w, [0, 3, 1, 2])), [xc, sc, of])
gop = gci[1].op
print(gop.type, gop.get_attr("data_format") in ("NHWC", b"NHWC"), [t.op.type for t in gop.inputs][:2])
print([r4(t)[:6] for t in sess.run(gci, {x: xv})])
try:
    tf.nn.fused_batch_norm(x, sc, of, is_training=False)
except ValueError as e:
    print("ValueError", str(e)[:93])
for bad in ([2, 3, 4], [2, 3, 4, 5]):
    try:
        tf.nn.fused_batch_norm(tf.zeros(bad), tf.ones([4]), tf.zeros([4]))
    except ValueError as e:
        print("ValueError", str(e).split(" for ")[0])
# run-time checks (shapes unknown while building)
pu = tf.placeholder(tf.float32, name="pu")
for feed_x, feed_s in ((np.ones((2, 5), np.float32), np.ones(5, np.float32)),
                       (np.ones((2, 3, 4, 5), np.float32), np.ones(4, np.float32))):
    ps = tf.placeholder(tf.float32, name="ps")
    yb = tf.nn.fused_batch_norm(pu, ps, tf.zeros([5]))[0]
    try:
        sess.run(yb, {pu: feed_x, ps: feed_s})
    except tf.errors.InvalidArgumentError as e:
        print("InvalidArgumentError", [l for l in e.message.split("\n") if "must" in l][0])
# 5-D (NDHWC)
y5 = tf.nn.fused_batch_norm(pu, tf.ones([5]), tf.zeros([5]), data_format="NDHWC")
for t in sess.run(y5, {pu: (np.arange(60, dtype=np.float32).reshape(2, 3, 2, 1, 5) % 7)}):
    print(t.shape, r4(t.reshape(-1)[:6]))

# Keras: the fused layer under the learning phase
K = tf.keras
g = tf.Graph()
with g.as_default():
    kx = tf.placeholder(tf.float32, [None, 2, 3, 4], name="kx")
    bn = K.layers.BatchNormalization(momentum=0.5)
    ky = bn(kx)
    ops = g.get_operations()
    print(ky.name, [u.name.replace("/AssignSubVariableOp", "") for u in bn.updates])
    print([(op.name, op.type) for op in ops if op.type in ("FusedBatchNormV3", "PlaceholderWithDefault", "Merge")])
    print([op.get_attr("is_training") for op in ops if op.type == "FusedBatchNormV3"])
    print(sorted(set(op.type for op in ops) & set(["Mean", "Rsqrt", "Square", "SquaredDifference"])))
    phase = K.backend.learning_phase()
    grads = tf.gradients(tf.reduce_sum(ky * ky * tf.constant([1.0, 2.0, 3.0, 4.0])), [kx] + bn.trainable_weights)
    print(len([op for op in g.get_operations() if op.type == "FusedBatchNormGradV3"]))
    ks = tf.Session()
    ks.run(tf.global_variables_initializer())
    print("infer", r4(ks.run(ky, {kx: xv})[0, 0]))
    print("train", r4(ks.run(ky, {kx: xv, phase: True})[0, 0]))
    ks.run(bn.updates, {kx: xv, phase: False})
    print("after phase False", r4(ks.run(bn.moving_mean)), r4(ks.run(bn.moving_variance)))
    ks.run(bn.updates, {kx: xv, phase: True})
    print("after phase True", r4(ks.run(bn.moving_mean)), r4(ks.run(bn.moving_variance)))
    print("infer", r4(ks.run(ky, {kx: xv})[0, 0]))
    for t in ks.run(grads, {kx: xv, phase: True}) + ks.run(grads, {kx: xv}):
        print([round(float(a), 2) + 0.0 for a in np.asarray(t).reshape(-1)[:8]])
    # channels first
    bn1 = K.layers.BatchNormalization(axis=1)
    y1 = bn1(tf.transpose(kx, [0, 3, 1, 2]), training=True)
    print(y1.op.type, y1.op.get_attr("data_format") in ("NCHW", b"NCHW"), y1.shape)
    print(K.layers.BatchNormalization(axis=2)(kx).op.type in ("Add", "AddV2"))   # another axis: not fused

g2 = tf.Graph()
with g2.as_default():
    lx = tf.placeholder(tf.float32, [None, 2, 3, 4], name="lx")
    lt = tf.layers.batch_normalization(lx, training=True, momentum=0.5)
    lf = tf.layers.batch_normalization(lx)
    lu = tf.layers.batch_normalization(lx, training=True, fused=False, name="unfused")
    print(lt.op.type, lf.op.type, lu.op.type == "FusedBatchNormV3", [op.name for op in tf.get_collection(tf.GraphKeys.UPDATE_OPS)])
    ls = tf.Session()
    ls.run(tf.global_variables_initializer())
    a, b, c = ls.run([lt, lf, lu], {lx: xv})
    print(r4(a[1, 1]), r4(b[1, 1]), np.abs(a - c).max() < 1e-4)
    ls.run(tf.get_collection(tf.GraphKeys.UPDATE_OPS), {lx: xv})
    print([r4(ls.run(vv)) for vv in tf.global_variables() if "moving" in vv.name])

# trainable=False (TF1's v1 layer): still the batch's moments when training, but no updates
g3 = tf.Graph()
with g3.as_default():
    fx = tf.placeholder(tf.float32, [None, 2, 3, 4], name="fx")
    fb = K.layers.BatchNormalization(trainable=False)
    fy = fb(fx)
    fx2 = tf.placeholder(tf.float32, [None, 4], name="fx2")
    fb2 = K.layers.BatchNormalization(trainable=False)
    fy2 = fb2(fx2)
    ft = tf.layers.batch_normalization(fx, training=True, trainable=False)
    print(len(fb.updates), len(fb2.updates), len(tf.get_collection(tf.GraphKeys.UPDATE_OPS)), len(fb.weights),
          len(fb.trainable_weights))
    fph = K.backend.learning_phase()
    fs = tf.Session()
    fs.run(tf.global_variables_initializer())
    print(r4(fs.run(fy, {fx: xv, fph: True})[0, 0]), r4(fs.run(fy, {fx: xv})[0, 0]))
    print(r4(fs.run(fy2, {fx2: xv[0, 0], fph: True})), r4(fs.run(ft, {fx: xv})[0, 0]))
