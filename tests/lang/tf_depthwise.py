# tf.nn.depthwise_conv2d (+ _native and its backprops) and tf.nn.separable_conv2d, tf.layers.separable_conv2d:
# shapes, op types, values and gradients (SAME/VALID, strides 1/2, multipliers 1/3, float64, rate 2),
# a finite-difference check, variables, and TF's error messages (expected output from TensorFlow).
import numpy as np
import tensorflow as tf

s = tf.Session()


def run(t, feed=None):
    v = s.run(t, feed)
    print(np.round(v, 3) if isinstance(v, np.ndarray) and v.dtype.kind == "f" else v)


def data(shape, f=np.sin, dtype=np.float32):
    n = int(np.prod(shape))
    return tf.constant(f(np.arange(n) * 0.7).reshape(shape).astype(dtype))


x = data((2, 5, 5, 2))
for strides, pad, mult in (([1, 1, 1, 1], "SAME", 1), ([1, 2, 2, 1], "SAME", 3), ([1, 1, 1, 1], "VALID", 3),
                           ([1, 2, 2, 1], "VALID", 1), ([1, 2, 1, 1], "SAME", 2)):
    f = data((3, 3, 2, mult), np.cos)
    y = tf.nn.depthwise_conv2d(x, f, strides, pad)
    print(y.shape, y.op.type, y.name)
    run(y[1, :, :, y.shape.as_list()[3] - 1])
    gx, gf = tf.gradients(tf.reduce_sum(y * y), [x, f])
    print(gx.op.type, gf.op.type, gx.shape, gf.shape)
    run(gx[0, :, :, 1]); run(gf[:, :, 0, mult - 1])

# odd sizes, a 2x4 window, float64, dilation rate 2
x64 = data((1, 7, 6, 3), dtype=np.float64)
f64 = data((2, 4, 3, 2), np.cos, np.float64)
y64 = tf.nn.depthwise_conv2d(x64, f64, [1, 1, 1, 1], "SAME")
print(y64.dtype, y64.shape)
run(y64[0, :, :, 3])
yr = tf.nn.depthwise_conv2d(x64, f64, [1, 1, 1, 1], "SAME", rate=[2, 2])
print(yr.shape)
run(yr[0, :, :, 5])
run(tf.gradients(tf.reduce_sum(yr * yr), f64)[0][:, :, 2, 1])

# the native op and its backprops called directly; the backprops' own gradients
f2 = data((3, 3, 2, 2), np.cos)
dy = data((2, 3, 3, 4), np.cos)
bi = tf.nn.depthwise_conv2d_native_backprop_input([2, 5, 5, 2], f2, dy, [1, 2, 2, 1], "SAME")
bf = tf.nn.depthwise_conv2d_native_backprop_filter(x, [3, 3, 2, 2], dy, [1, 2, 2, 1], "SAME")
nat = tf.nn.depthwise_conv2d_native(x, f2, [1, 2, 2, 1], "SAME")
print(bi.shape, bf.shape, nat.shape, bi.op.type, bf.op.type, nat.op.type)
run(bi[1, :, :, 0]); run(bf[:, :, 1, 0])
g1 = tf.gradients(tf.reduce_sum(bi * bi), [f2, dy])
g2 = tf.gradients(tf.reduce_sum(bf * bf), [x, dy])
print([g.op.type for g in g1 + g2])
run(g1[0][:, :, 0, 1]); run(g1[1][0, :, :, 2]); run(g2[0][1, :, :, 0]); run(g2[1][1, :, :, 3])

# unknown dims
p = tf.placeholder(tf.float32, [None, None, None, 2])
print(tf.nn.depthwise_conv2d(p, f2, [1, 1, 1, 1], "SAME").shape)
print(tf.nn.depthwise_conv2d_native(tf.placeholder(tf.float32), f2, [1, 2, 2, 1], "VALID").shape)
print(tf.nn.depthwise_conv2d_native(p, tf.placeholder(tf.float32), [1, 2, 2, 1], "VALID").shape)
print(tf.nn.depthwise_conv2d_native_backprop_input(tf.placeholder(tf.int32), f2, dy, [1, 2, 2, 1], "SAME").shape)
print(s.run(tf.nn.depthwise_conv2d(p, f2, [1, 2, 2, 1], "VALID"), {p: np.ones((1, 6, 7, 2))}).shape)

# finite differences (float64): central differences of sum(y * w) against tf.gradients
xf = tf.placeholder(tf.float64, [1, 4, 5, 2])
ff = tf.placeholder(tf.float64, [2, 3, 2, 2])
yf = tf.nn.depthwise_conv2d(xf, ff, [1, 2, 2, 1], "SAME")
w = np.cos(np.arange(np.prod(yf.shape.as_list()))).reshape(yf.shape.as_list())
loss = tf.reduce_sum(yf * w)
gxf, gff = tf.gradients(loss, [xf, ff])
xv, fv = np.sin(np.arange(40) * 0.3).reshape(1, 4, 5, 2), np.cos(np.arange(24) * 0.5).reshape(2, 3, 2, 2)
ax, af = s.run([gxf, gff], {xf: xv, ff: fv})
err = 0.0
for arr, an in ((xv, ax), (fv, af)):
    for i in np.ndindex(*arr.shape):
        old = arr[i]
        arr[i] = old + 1e-4
        hi = s.run(loss, {xf: xv, ff: fv})
        arr[i] = old - 1e-4
        lo = s.run(loss, {xf: xv, ff: fv})
        arr[i] = old
        err = max(err, abs((hi - lo) / 2e-4 - an[i]))
print("finite differences agree:", err < 1e-3)

# separable_conv2d: depthwise then 1x1 pointwise
pw = data((1, 1, 6, 4), np.cos)
sep = tf.nn.separable_conv2d(x, data((3, 3, 2, 3), np.cos), pw, [1, 1, 1, 1], "VALID")
print(sep.shape, sep.op.type, sep.name, sep.op.inputs[0].op.type, sep.op.inputs[0].name)
run(sep[1, :, :, 3])
dwf = data((3, 3, 2, 3), np.cos)
sep2 = tf.nn.separable_conv2d(x, dwf, pw, [1, 2, 2, 1], "SAME", name="sep")
print(sep2.shape, sep2.name)
gs = tf.gradients(tf.reduce_sum(sep2 * sep2), [x, dwf, pw])
run(gs[0][0, :, :, 0]); run(gs[1][:, :, 1, 2]); run(gs[2][0, 0])

# tf.layers.separable_conv2d
l1 = tf.layers.separable_conv2d(x, 3, 3, padding="same", depth_multiplier=2,
                                depthwise_initializer=tf.constant_initializer(0.1),
                                pointwise_initializer=tf.constant_initializer(0.2),
                                bias_initializer=tf.constant_initializer(0.5), activation=tf.nn.relu)
l2 = tf.layers.separable_conv2d(x, 4, (2, 3), strides=2, name="sep_b", use_bias=False)
print(l1.shape, l2.shape, l1.op.type)
print([(v.name, v.shape.as_list()) for v in tf.trainable_variables()])
s.run(tf.global_variables_initializer())
run(l1[0, :, :, 2])
print(s.run(l2).shape)


def _first(msg, start):   # TF's words, without the node and line decorations
    m = msg[msg.index(start):].split("\n")[0].split("[[")[0]
    return m.split(" for '")[0].strip()


for fn, start in ((lambda: tf.nn.depthwise_conv2d(x, tf.ones((3, 3, 4, 1)), [1, 1, 1, 1], "SAME"), "Dimensions"),
                  (lambda: tf.nn.depthwise_conv2d(tf.ones((5, 5, 2)), f2, [1, 1, 1, 1], "SAME"), "Shape must"),
                  (lambda: tf.nn.depthwise_conv2d_native(x, f2, [1, 1, 1], "SAME"), "DepthwiseConv2D"),
                  (lambda: tf.nn.depthwise_conv2d_native(x, f2, [1, 1, 1, 1], "SAME", dilations=[1, 2, 2]),
                   "DepthwiseConv2D"),
                  (lambda: tf.nn.depthwise_conv2d(x, tf.ones((7, 7, 2, 1)), [1, 1, 1, 1], "VALID"), "Negative"),
                  (lambda: tf.nn.separable_conv2d(x, f2, tf.ones((2, 1, 4, 4)), [1, 1, 1, 1], "SAME"), "Dimensions")):
    try:
        fn()
    except ValueError as e:
        print("ValueError:", _first(str(e), start))
px, pf = tf.placeholder(tf.float32), tf.placeholder(tf.float32)
for xv, fv, start in ((np.ones((1, 5, 5, 2)), np.ones((3, 3, 2)), "filter must"),
                      (np.ones((1, 5, 5, 2)), np.ones((7, 3, 2, 1)), "Computed")):
    try:
        s.run(tf.nn.depthwise_conv2d_native(px, pf, [1, 1, 1, 1], "VALID"), {px: xv, pf: fv})
    except tf.errors.InvalidArgumentError as e:
        print("InvalidArgumentError:", _first(e.message, start))
