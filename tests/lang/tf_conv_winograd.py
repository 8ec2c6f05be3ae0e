# 5x5 and 3x3 stride-1 convolutions wide and big enough for tfsh's Winograd kernels
# (expected output from real TF, whose CPU kernels are direct): the forward, its input and
# filter gradients, and the conv + bias + relu + pool a training step's remapper fuses: 5x5
# SAME over 32 -> 64 channels (the tutorial CNN's second layer) and VALID over 16 -> 48 with
# odd sides, 3x3 VALID 32 -> 64 (the tf.layers CNN's), SAME 48 -> 32 with odd sides and
# SAME 128 -> 128 (a VGG-style layer, smaller blocks). Each
# is compared with numpy's float64 convolution (the worst error within 24 float ulps of the
# largest value), and a few single values printed to 4 significant digits.
import numpy as np
import tensorflow as tf


def r3(a):   # the sums' order differs from TF's in the last bits
    return [float("%.4g" % v) + 0.0 for v in np.asarray(a).reshape(-1)]


def conv_ref(x, w, pad):   # float64 correlation, NHWC x HWIO
    k = w.shape[0]
    x = np.pad(x.astype(np.float64), ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    n, h, wd, _ = x.shape
    oh, ow = h - k + 1, wd - k + 1
    y = np.zeros((n, oh, ow, w.shape[3]))
    for ky in range(k):
        for kx in range(k):
            y += np.tensordot(x[:, ky:ky + oh, kx:kx + ow, :], w[ky, kx].astype(np.float64), 1)
    return y


def within(got, want):
    return bool(np.abs(got - want).max() <= 24 * 1.1920929e-7 * np.abs(want).max())


rng = np.random.RandomState(7)
for k, n, h, wd, ic, oc, pad in ((5, 24, 14, 14, 32, 64, "SAME"), (5, 20, 13, 11, 16, 48, "VALID"),
                                  (3, 24, 12, 12, 32, 64, "VALID"), (3, 29, 9, 7, 48, 32, "SAME"),
                                  (3, 8, 16, 16, 128, 128, "SAME")):
    p = k // 2 if pad == "SAME" else 0
    xv = np.maximum(rng.uniform(-1, 1, (n, h, wd, ic)), 0).astype(np.float32)
    wv = rng.uniform(-0.2, 0.2, (k, k, ic, oc)).astype(np.float32)
    bv = rng.uniform(-0.5, 0.5, oc).astype(np.float32)
    x, w = tf.constant(xv), tf.Variable(wv)
    y = tf.nn.conv2d(x, w, [1, 1, 1, 1], pad)
    dyv = rng.uniform(-1, 1, y.shape.as_list()).astype(np.float32)
    dx, dw = tf.gradients(y, [x, w], tf.constant(dyv))
    h1 = tf.nn.max_pool(tf.nn.relu(y + bv), [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        yv, dxv, dwv, hv = sess.run([y, dx, dw, h1])
    ref = conv_ref(xv, wv, p)
    # dx: the correlation of dy with the filter turned half a circle, channels swapped
    dref = conv_ref(dyv, wv[::-1, ::-1].transpose(0, 1, 3, 2), k - 1 - p)
    xp = np.pad(xv.astype(np.float64), ((0, 0), (p, p), (p, p), (0, 0)))
    wref = np.zeros((k, k, ic, oc))
    for ky in range(k):
        for kx in range(k):
            sl = xp[:, ky:ky + yv.shape[1], kx:kx + yv.shape[2], :]
            wref[ky, kx] = np.tensordot(sl, dyv.astype(np.float64), ([0, 1, 2], [0, 1, 2]))
    print(k, pad, yv.shape, within(yv, ref), within(dxv, dref), within(dwv, wref))
    print(r3(yv[3, 5, 6, :4]), r3(dxv[2, 7, 6, :4]), r3(dwv[2, 2, 0, :4]), r3(dwv[0, k - 1, 9, :4]))
    print(hv.shape, r3(hv[3, 1, :4, 5]))
