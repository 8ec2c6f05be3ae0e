# tf.nn.max_pool_with_argmax (values, argmax with and without the batch, int32, ties and NaN, its
# gradient, a SegNet-style unpooling with tf.scatter_nd) and tf.extract_image_patches (SAME/VALID,
# strides, rates, its gradient and a finite-difference check), with TF's errors, against TensorFlow.
import numpy as np
import tensorflow as tf

s = tf.Session()


def run(t, feed=None):
    v = s.run(t, feed)
    print(np.round(v, 3) if isinstance(v, np.ndarray) and v.dtype.kind == "f" else v)


x = tf.constant(np.sin(np.arange(2 * 5 * 5 * 2, dtype=np.float32) * 1.3).reshape(2, 5, 5, 2))
for k, st, pad, ib in [(2, 2, "SAME", False), (2, 2, "VALID", True), (3, 2, "SAME", True), (3, 2, "VALID", False)]:
    o, a = tf.nn.max_pool_with_argmax(x, [1, k, k, 1], [1, st, st, 1], pad, include_batch_in_index=ib)
    print(k, st, pad, ib, o.shape, a.shape, a.dtype)
    run(o[1, :, :, 0])
    run(a[1, :, :, 1])
    print(np.array_equal(*s.run([o, tf.nn.max_pool(x, [1, k, k, 1], [1, st, st, 1], pad)])))
    run(tf.gradients(tf.reduce_sum(o * o * tf.sign(o)), x)[0][1, :, :, 0])   # overlapping windows add up

r = tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 1, 1, 1], "VALID", Targmax=tf.int32, name="mp32")
print(type(r).__name__, r._fields, r.argmax.dtype, r.output.name, r.argmax.name)
run(r.argmax[0, :, :, 0])
r = tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 2, 2, 1], "SAME", output_dtype=tf.int32,
                              include_batch_in_index=True)
run(r.argmax[1, :, :, 1])

# ties keep the first in row-major order; a NaN wins only where it comes first
tv = np.array([[1, 3, 3, 0], [3, 2, np.nan, 1], [0, 1, 1, 2], [np.nan, 5, 5, 2]], np.float32)
t = tf.constant(tv.reshape(1, 4, 4, 1))
o, a = tf.nn.max_pool_with_argmax(t, [1, 2, 2, 1], [1, 1, 1, 1], "VALID")
run(o[0, :, :, 0])
run(a[0, :, :, 0])
ti = tf.constant(np.array([[4, 4, 1], [4, 4, 1], [0, 0, 4]], np.int32).reshape(1, 3, 3, 1))
o, a = tf.nn.max_pool_with_argmax(ti, [1, 2, 2, 1], [1, 1, 1, 1], "SAME")
run(o[0, :, :, 0])
run(a[0, :, :, 0])
neg = tf.constant(-np.ones((1, 3, 3, 1), np.float64))   # padding never wins
o, a = tf.nn.max_pool_with_argmax(neg, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
run(o[0, :, :, 0])
run(a[0, :, :, 0])

ph = tf.placeholder(tf.float32, [None, None, 5, 3])
o, a = tf.nn.max_pool_with_argmax(ph, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
print(o.shape, a.shape)
o, a = tf.nn.max_pool_with_argmax(tf.placeholder(tf.float32), [1, 3, 3, 1], [1, 2, 2, 1], "VALID")
print(o.shape, a.shape)


# SegNet's unpooling: each pooled value back at its argmax in a zero map the input's size
def unpool(pool, ind, shape, with_batch):
    if not with_batch:   # per-batch indices: offset each batch by its start
        b = tf.reshape(tf.range(shape[0], dtype=ind.dtype), [-1, 1, 1, 1]) * (shape[1] * shape[2] * shape[3])
        ind = ind + b
    up = tf.scatter_nd(tf.reshape(ind, [-1, 1]), tf.reshape(pool, [-1]), [int(np.prod(shape))])
    return tf.reshape(up, shape)


w = tf.constant(np.cos(np.arange(2 * 5 * 5 * 2, dtype=np.float32)).reshape(2, 5, 5, 2))
for ib in (True, False):
    o, a = tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 2, 2, 1], "SAME", include_batch_in_index=ib)
    up = unpool(o, a, [2, 5, 5, 2], ib)
    print(up.shape)
    run(up[1, :, :, 1])
    run(tf.gradients(tf.reduce_sum(up * w), x)[0][0, :, :, 0])

# patches: depth in (patch row, patch column, channel) order, zeros outside for SAME
im = tf.constant(np.arange(2 * 5 * 6 * 2, dtype=np.float32).reshape(2, 5, 6, 2) / 10.)
cases = [([1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "VALID"), ([1, 3, 3, 1], [1, 2, 2, 1], [1, 1, 1, 1], "SAME"),
         ([1, 2, 3, 1], [1, 2, 1, 1], [1, 2, 2, 1], "SAME"), ([1, 2, 2, 1], [1, 1, 2, 1], [1, 2, 1, 1], "VALID"),
         ([1, 3, 2, 1], [1, 2, 2, 1], [1, 2, 3, 1], "VALID")]
for ks, st, ra, pad in cases:
    p = tf.extract_image_patches(im, ks, st, ra, pad)
    print(ks, st, ra, pad, p.shape)
    run(p[1, :, 0])
    run(p[0, -1, -1])
    run(tf.gradients(tf.reduce_sum(p * p), im)[0][1, :, :, 1])
pi = tf.image.extract_patches(tf.constant(np.arange(16, dtype=np.int32).reshape(1, 4, 4, 1)), [1, 2, 2, 1],
                              [1, 2, 2, 1], [1, 1, 1, 1], "VALID")
print(pi.dtype, pi.shape)
run(pi)
run(tf.extract_image_patches(im, sizes=[1, 1, 2, 1], strides=[1, 3, 3, 1], rates=[1, 1, 1, 1], padding="SAME")[0])
php = tf.placeholder(tf.float32, [None, 7, 5, None])
print(tf.extract_image_patches(php, [1, 2, 2, 1], [1, 2, 2, 1], [1, 1, 1, 1], "VALID").shape,
      tf.extract_image_patches(ph, [1, 2, 2, 1], [1, 2, 2, 1], [1, 1, 1, 1], "SAME").shape,
      tf.extract_image_patches(im, [1, 5, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "VALID").shape)

# the gradient against central differences, and the gradient of the gradient
xv = np.cos(np.arange(1 * 4 * 5 * 2, dtype=np.float64)).reshape(1, 4, 5, 2)
xp = tf.placeholder(tf.float64, xv.shape)
p = tf.extract_image_patches(xp, [1, 3, 2, 1], [1, 2, 1, 1], [1, 1, 2, 1], "SAME")
wv = tf.constant(np.sin(np.arange(np.prod(p.shape.as_list()), dtype=np.float64)).reshape(p.shape.as_list()))
loss = tf.reduce_sum(tf.sin(p) * wv)
ga = s.run(tf.gradients(loss, xp)[0], {xp: xv})
gn = np.zeros_like(xv)
for i in np.ndindex(*xv.shape):
    d = np.zeros_like(xv)
    d[i] = 1e-6
    gn[i] = (s.run(loss, {xp: xv + d}) - s.run(loss, {xp: xv - d})) / 2e-6
print(np.max(np.abs(ga - gn)) < 1e-3)
dx = tf.gradients(p, xp, grad_ys=wv)[0]
gg = tf.gradients(dx, wv, grad_ys=tf.constant(xv))[0]
print(np.allclose(s.run(gg, {xp: xv}), s.run(p, {xp: xv})))


def _err(f):   # TF's words, without the node and the stack
    try:
        v = f()
        s.run(v)
        print("no error")
    except Exception as e:
        lines = getattr(e, "message", str(e)).split("\n")
        for i, l in enumerate(lines):
            if l.startswith("Node: '"):
                lines = lines[i + 1:]
                break
        print(type(e).__name__ + ":", lines[0].split(" for '")[0].split("[[")[0].strip())


_err(lambda: tf.nn.max_pool_with_argmax(x, [1, 2, 2], [1, 1, 1, 1], "VALID")[0])
_err(lambda: tf.nn.max_pool_with_argmax(x, [1, 6, 6, 1], [1, 1, 1, 1], "VALID")[0])
_err(lambda: tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 1, 1, 1], "VALID", Targmax=tf.float32)[0])
_err(lambda: tf.nn.max_pool_with_argmax(x, [2, 2, 2, 1], [1, 1, 1, 1], "VALID")[0])
_err(lambda: tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 1, 1, 1], "VALID", data_format="NCHW")[0])
_err(lambda: tf.extract_image_patches(im, [1, 7, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "VALID"))
_err(lambda: tf.extract_image_patches(im, [1, 2, 2, 2], [1, 1, 1, 1], [1, 1, 1, 1], "VALID"))
_err(lambda: tf.extract_image_patches(im, [1, 2, 2, 1], [1, 1, 1, 1], [1, 0, 1, 1], "VALID"))
_err(lambda: tf.extract_image_patches(im, [1, 2, 2, 1], [1, 1, 1, 1, 1], [1, 1, 1, 1], "VALID"))
