# tf.nn.conv2d_backprop_input and conv2d_backprop_filter called directly (SAME/VALID,
# strides 1 and 2, sizes as lists and as tensors), the gradients of both, and a WGAN-GP
# style penalty (the gradient of a gradient through conv2d) against TensorFlow.
import numpy as np
import tensorflow as tf

s = tf.Session()


def run(t):
    v = s.run(t)
    print(np.round(v, 3) if isinstance(v, np.ndarray) and v.dtype in (np.float32, np.float64) else v)


x = tf.constant(np.sin(np.arange(2 * 5 * 5 * 3, dtype=np.float32)).reshape(2, 5, 5, 3))
f = tf.constant(np.cos(np.arange(3 * 3 * 3 * 4, dtype=np.float32)).reshape(3, 3, 3, 4))
for strides, pad in (([1, 1, 1, 1], "SAME"), ([1, 2, 2, 1], "SAME"), ([1, 1, 1, 1], "VALID"), ([1, 2, 2, 1], "VALID")):
    y = tf.nn.conv2d(x, f, strides, pad)
    dy = tf.constant(np.cos(np.arange(np.prod(y.shape.as_list()), dtype=np.float32)).reshape(y.shape.as_list()))
    dx = tf.nn.conv2d_backprop_input([2, 5, 5, 3], f, dy, strides, pad)
    df = tf.nn.conv2d_backprop_filter(x, tf.constant([3, 3, 3, 4]), dy, strides=strides, padding=pad)
    print(pad, strides[1], dx.shape, df.shape, dx.op.type, df.op.type)
    gx, gf = tf.gradients(y, [x, f], grad_ys=dy)
    print(np.allclose(*s.run([dx, gx]), atol=1e-5), np.allclose(*s.run([df, gf]), atol=1e-4))
    run(dx[1, :, :, 2])
    run(df[:, :, 1, 3])
    # their own gradients: dx is linear in f and dy, df in x and dy
    w = tf.constant(np.sin(np.arange(2 * 5 * 5 * 3, dtype=np.float32) * 0.7).reshape(2, 5, 5, 3))
    gdf, gdy = tf.gradients(tf.reduce_sum(dx * w), [f, dy])
    run(gdf[:, :, 0, 1])
    run(gdy[0, :, :, 3])
    wf = tf.constant(np.sin(np.arange(3 * 3 * 3 * 4, dtype=np.float32) * 0.3).reshape(3, 3, 3, 4))
    gx2, gdy2 = tf.gradients(tf.reduce_sum(df * wf), [x, dy])
    run(gx2[1, :, :, 0])
    run(gdy2[1, :, :, 2])

# TF 2's two spatial sizes alone
y2 = tf.nn.conv2d(x, f, [1, 2, 2, 1], "SAME")
dx2 = tf.nn.conv2d_backprop_input([5, 5], f, tf.ones_like(y2), [1, 2, 2, 1], "SAME")
print(dx2.shape)
run(dx2[0, :, :, 0])

# sizes from the graph, and float64
xd = tf.placeholder(tf.float64, [None, 6, 6, 2])
fd = tf.constant(np.cos(np.arange(2 * 2 * 2 * 3, dtype=np.float64)).reshape(2, 2, 2, 3))
yd = tf.nn.conv2d(xd, fd, [1, 2, 2, 1], "VALID")
dxd = tf.nn.conv2d_backprop_input(tf.shape(xd), fd, tf.ones_like(yd), [1, 2, 2, 1], "VALID")
print(dxd.shape, dxd.dtype)
print(s.run(dxd, {xd: np.zeros((1, 6, 6, 2))})[0, :, :, 1])

# WGAN-GP: the norm of D's input gradient, differentiated for D's weights
v1 = tf.Variable(np.cos(np.arange(3 * 3 * 3 * 4, dtype=np.float32) * 0.1).reshape(3, 3, 3, 4))
v2 = tf.Variable(np.sin(np.arange(2 * 2 * 4 * 1, dtype=np.float32)).reshape(2, 2, 4, 1))
h = tf.nn.relu(tf.nn.conv2d(x, v1, [1, 1, 1, 1], "SAME") + 0.1)
d = tf.reduce_sum(tf.nn.conv2d(h, v2, [1, 2, 2, 1], "SAME"))
gxin = tf.gradients(d, x)[0]
pen = tf.reduce_mean((tf.sqrt(tf.reduce_sum(gxin ** 2, axis=[1, 2, 3])) - 1.0) ** 2)
g1, g2 = tf.gradients(pen, [v1, v2])
s.run(tf.global_variables_initializer())
run(pen)
run(g1[:, :, 2, 0])
run(g2[:, :, 1, 0])


def _first(e):
    m = str(e)
    return m.split("\n")[0].split(" for '")[0].split("[[")[0].strip()


for args in (([2, 5, 5], f, tf.zeros([2, 5, 5, 4]), [1, 1, 1, 1], "SAME"),
             ([2, 5, 5, 3], f, tf.zeros([2, 5, 5, 5]), [1, 1, 1, 1], "SAME")):
    try:
        s.run(tf.nn.conv2d_backprop_input(*args))
        print("no error")
    except (ValueError, tf.errors.InvalidArgumentError) as e:
        print(type(e).__name__, _first(e))
