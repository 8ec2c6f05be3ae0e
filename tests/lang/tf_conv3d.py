# tf.nn.conv3d, conv3d_transpose, conv3d_backprop_filter_v2, max_pool3d, avg_pool3d, their gradients
# (SAME/VALID, strides 1/2, odd sizes, float64 convolutions: TF's 3-D pools are float32 only, dilations), a finite-difference check, unknown dims,
# tf.layers' and Keras's 3-D layers, and TF's error messages (expected output from TensorFlow).
import numpy as np
import tensorflow as tf

s = tf.Session()


def run(t, feed=None):
    v = s.run(t, feed)
    print(np.round(v, 3) if isinstance(v, np.ndarray) and v.dtype.kind == "f" else v)


def data(shape, f=np.sin, dtype=np.float32):
    n = int(np.prod(shape))
    return tf.constant(f(np.arange(n) * 0.7).reshape(shape).astype(dtype))


x = data((2, 5, 4, 5, 2))
for strides, pad, k in (([1, 1, 1, 1, 1], "SAME", (3, 3, 3)), ([1, 2, 2, 2, 1], "SAME", (3, 2, 3)),
                        ([1, 1, 1, 1, 1], "VALID", (2, 3, 2)), ([1, 2, 1, 2, 1], "VALID", (3, 3, 3))):
    f = data(k + (2, 3), np.cos)
    y = tf.nn.conv3d(x, f, strides, pad)
    print(y.shape, y.op.type, y.name)
    run(y[1, :, :, 0, 2])
    gx, gf = tf.gradients(tf.reduce_sum(y * y), [x, f])
    print(gx.op.type, gf.op.type, gx.shape, gf.shape)
    run(gx[0, :, 1, :, 1]); run(gf[:, :, 1, 0, 2])

# float64, a 1x1x1 filter, dilations 2 (TF's CPU has them for float32 only)
x64 = data((1, 6, 5, 7, 3), dtype=np.float64)
f64 = data((2, 3, 2, 3, 2), np.cos, np.float64)
y64 = tf.nn.conv3d(x64, f64, [1, 1, 1, 1, 1], "SAME")
print(y64.dtype, y64.shape)
run(y64[0, 2, :, :, 1])
p1 = tf.nn.conv3d(x64, data((1, 1, 1, 3, 4), np.cos, np.float64), [1, 1, 1, 1, 1], "VALID")
run(p1[0, 1, :, :, 3])
x32, f32 = data((1, 6, 5, 7, 3)), data((2, 3, 2, 3, 2), np.cos)
yd = tf.nn.conv3d(x32, f32, [1, 1, 1, 1, 1], "VALID", dilations=[1, 2, 2, 2, 1])   # TF's shape function swaps rows and cols
print(yd.shape)
run(yd[0, :, :, 0, 0])
gd = tf.gradients(tf.reduce_sum(yd * yd), [x32, f32])
run(gd[0][0, 3, :, :, 2]); run(gd[1][:, :, 1, 2, 1])

# conv3d_transpose and the backprops' own gradients
ft = data((3, 3, 3, 2, 4), np.cos)
v = data((2, 3, 2, 3, 4))
ct = tf.nn.conv3d_transpose(v, ft, [2, 5, 4, 5, 2], [1, 2, 2, 2, 1], "SAME")
print(ct.shape, ct.op.type, ct.name)
run(ct[1, :, :, 2, 0])
ct2 = tf.nn.conv3d_transpose(v, ft, [2, 7, 5, 7, 2], 2, "VALID")
print(ct2.shape)
run(ct2[0, 3, :, :, 1])
bf = tf.nn.conv3d_backprop_filter_v2(x, [3, 3, 3, 2, 4], v, [1, 2, 2, 2, 1], "SAME")
print(bf.shape, bf.op.type)
run(bf[:, :, 1, 1, 3])
g1 = tf.gradients(tf.reduce_sum(ct * ct), [ft, v])
g2 = tf.gradients(tf.reduce_sum(bf * bf), [x, v])
print([g.op.type for g in g1 + g2])
run(g1[0][:, 1, :, 0, 3]); run(g1[1][1, :, :, 1, 2]); run(g2[0][0, :, 2, :, 1]); run(g2[1][1, 1, :, :, 0])

# pools and their gradients
xp = tf.constant((np.round(np.sin(np.arange(2 * 5 * 6 * 5 * 3) * 1.3) * 4) / 4).reshape(2, 5, 6, 5, 3).astype(np.float32))
for ks, st, pad in ((2, 2, "VALID"), ([3, 3, 3], [2, 2, 2], "SAME"), ([1, 2, 3, 2, 1], [1, 1, 2, 1, 1], "SAME"),
                    ([1, 3, 1, 2, 1], [1, 2, 2, 1, 1], "VALID")):
    mp = tf.nn.max_pool3d(xp, ks, st, pad)
    ap = tf.nn.avg_pool3d(xp, ks, st, pad)
    print(mp.shape, mp.name, ap.shape, ap.name)
    run(mp[1, :, :, 1, 2]); run(ap[0, :, 1, :, 1])
    gm, ga = tf.gradients(tf.reduce_sum(mp * mp), xp)[0], tf.gradients(tf.reduce_sum(ap * ap), xp)[0]
    print(gm.op.type, ga.op.type)
    run(gm[1, :, :, 1, 2]); run(ga[0, :, 1, :, 1])
ag = tf.gradients(tf.reduce_sum(ga * ga), ga.op.inputs[1])[0]
print(ag.op.type, ag.shape)
run(ag[0, :, :, 0, 1])

# unknown dims
p = tf.placeholder(tf.float32, [None, None, 5, 6, 2])
f2 = data((2, 2, 2, 2, 3), np.cos)
print(tf.nn.conv3d(p, f2, [1, 2, 2, 2, 1], "SAME").shape)
print(tf.nn.conv3d(tf.placeholder(tf.float32), f2, [1, 2, 2, 2, 1], "VALID").shape)
print(tf.nn.conv3d(x, tf.placeholder(tf.float32), [1, 2, 2, 2, 1], "SAME").shape)
print(tf.nn.conv3d_transpose(tf.ones((1, 2, 2, 2, 3)), f2, tf.placeholder(tf.int32), [1, 2, 2, 2, 1]).shape)
print(tf.nn.max_pool3d(tf.placeholder(tf.float32, [None, 5, None, 3, 2]), 2, 2, "SAME").shape)
print(tf.nn.avg_pool3d(tf.placeholder(tf.float32), 2, 2, "VALID").shape)
print(s.run(tf.nn.conv3d(p, f2, [1, 2, 2, 2, 1], "VALID"), {p: np.ones((1, 7, 5, 6, 2))}).shape)

# finite differences (float64)
xf = tf.placeholder(tf.float64, [1, 4, 3, 5, 2])
ff = tf.constant(np.cos(np.arange(72) * 0.5).reshape(2, 3, 2, 2, 3))
yf = tf.nn.conv3d(xf, ff, [1, 2, 1, 2, 1], "SAME")
xv = np.sin(np.arange(120) * 0.3).reshape(1, 4, 3, 5, 2)
with s.as_default():
    e1 = tf.test.compute_gradient_error(xf, [1, 4, 3, 5, 2], yf, yf.shape.as_list(), x_init_value=xv)
    e2 = tf.test.compute_gradient_error(ff, [2, 3, 2, 2, 3], yf, yf.shape.as_list(), extra_feed_dict={xf: xv})
    tr = tf.nn.conv3d_transpose(xf, tf.constant(np.cos(np.arange(96) * 0.4).reshape(2, 2, 3, 4, 2)),
                                [1, 8, 3, 10, 4], [1, 2, 1, 2, 1], "SAME")
    e3 = tf.test.compute_gradient_error(xf, [1, 4, 3, 5, 2], tr, [1, 8, 3, 10, 4], x_init_value=xv)
print("finite differences agree:", e1 < 1e-3, e2 < 1e-3, e3 < 1e-3)

# tf.layers and Keras in a graph of their own (TF's op names are unique ignoring case)
with tf.Graph().as_default(), tf.Session() as s2:
    inp = tf.constant(np.sin(np.arange(2 * 6 * 7 * 5 * 2) * 0.4).reshape(2, 6, 7, 5, 2).astype(np.float32))
    l1 = tf.layers.conv3d(inp, 3, 3, padding="same", kernel_initializer=tf.constant_initializer(0.1),
                          bias_initializer=tf.constant_initializer(0.5))
    l2 = tf.layers.conv3d(inp, 4, (2, 3, 2), strides=(2, 1, 2), name="c3b", use_bias=False, activation=tf.nn.relu)
    l3 = tf.layers.conv3d_transpose(inp, 3, 3, strides=2, padding="same",
                                    kernel_initializer=tf.constant_initializer(0.2))
    l4 = tf.layers.conv3d_transpose(inp, 2, (2, 3, 2), strides=(1, 2, 3), padding="valid")
    l5 = tf.layers.max_pooling3d(inp, 2, 2)
    l6 = tf.layers.average_pooling3d(inp, 3, 2, padding="same")
    l7 = tf.layers.conv3d(inp, 2, 3, dilation_rate=2)
    for l in (l1, l2, l3, l4, l5, l6, l7):
        print(l.name, l.shape, l.op.type)
    print([(w.name, w.shape.as_list()) for w in tf.global_variables()])
    K = tf.keras.layers
    ks = [K.Conv3D(3, 3, padding="same", kernel_initializer="ones"), K.Conv3D(2, (2, 3, 2), strides=2),
          K.Conv3DTranspose(3, 3, strides=2, padding="same", kernel_initializer=tf.constant_initializer(0.1)),
          K.Conv3DTranspose(2, (2, 3, 2), strides=(1, 2, 3)), K.MaxPooling3D(), K.AveragePooling3D(3, 2, padding="same"),
          K.UpSampling3D((2, 1, 2)), K.MaxPooling3D(pool_size=(2, 3, 2), strides=1),
          K.Conv3D(2, 3, dilation_rate=2, activation="relu")]
    outs = [L(inp) for L in ks]
    for L, o in zip(ks, outs):
        print(o.shape, o.op.type, [w.shape.as_list() for w in L.weights])
    s2.run(tf.global_variables_initializer())
    v1, v3, v5, v6, k1, k3, k5, k6, k7 = s2.run([l1, l3, l5, l6, outs[0], outs[2], outs[4], outs[5], outs[6]])
    for a in (v1[1, :, :, 2, 0], v3[0, 3, :, :, 1], v5[1, :, :, 1, 0], v6[0, :, 2, :, 1], k1[0, 2, :, :, 0],
              k3[1, :, 4, :, 2], k5[0, 1, :, :, 1], k6[1, :, :, 0, 0], k7[0, :4, 0, :4, 1]):
        print(np.round(a, 3))


def _first(msg, start):   # TF's words, without the node and line decorations
    m = msg[msg.index(start):].split("\n")[0].split("[[")[0]
    return m.split(" for '")[0].strip()


for fn, start in ((lambda: tf.nn.conv3d(tf.ones((4, 4, 4, 2)), f2, [1, 1, 1, 1, 1], "SAME"), "Shape must"),
                  (lambda: tf.nn.conv3d(x, tf.ones((2, 2, 2, 3, 3)), [1, 1, 1, 1, 1], "SAME"), "Depth of"),
                  (lambda: tf.nn.conv3d(x, f2, [1, 1, 1, 1], "SAME"), "Attr"),
                  (lambda: tf.nn.conv3d(x, f2, [1, 1, 1, 1, 1, 1], "SAME"), "Conv3D"),
                  (lambda: tf.nn.conv3d(x, tf.ones((7, 2, 2, 2, 3)), [1, 1, 1, 1, 1], "VALID"), "Negative"),
                  (lambda: tf.nn.max_pool3d(x, [1, 2, 2, 2], 2, "VALID"), "ksize"),
                  (lambda: tf.nn.avg_pool3d(tf.ones((4, 4, 4, 2)), 2, 2, "VALID"), "Shape must"),
                  (lambda: tf.nn.max_pool3d(x, [1, 7, 2, 2, 1], 1, "VALID"), "Negative")):
    try:
        fn()
    except ValueError as e:
        print("ValueError:", _first(str(e), start))
px, pf = tf.placeholder(tf.float32), tf.placeholder(tf.float32)
for t, feed, start in ((tf.nn.conv3d(px, pf, [1, 1, 1, 1, 1], "VALID"), {px: np.ones((1, 4, 4, 4, 2)), pf: np.ones((2, 2, 2, 3, 3))}, "input and"),
                       (tf.nn.conv3d(px, pf, [1, 1, 1, 1, 1], "VALID"), {px: np.ones((1, 4, 4, 4, 2)), pf: np.ones((2, 2, 2, 3))}, "filter must"),
                       (tf.nn.conv3d(px, pf, [2, 1, 1, 1, 1], "VALID"), {px: np.ones((1, 4, 4, 4, 2)), pf: np.ones((2, 2, 2, 2, 3))}, "Current"),
                       (tf.nn.max_pool3d(px, [1, 2, 2, 2, 2], 1, "VALID"), {px: np.ones((1, 4, 4, 4, 2))}, "Pooling"),
                       (tf.nn.avg_pool3d(px, [2, 2, 2, 2, 1], 1, "VALID"), {px: np.ones((1, 4, 4, 4, 2))}, "Pooling")):
    try:
        s.run(t, feed)
    except (tf.errors.InvalidArgumentError, tf.errors.UnimplementedError) as e:
        print(type(e).__name__ + ":", _first(e.message, start))
