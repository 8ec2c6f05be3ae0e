# Dilated convolutions as TF 1.x composes them (space_to_batch_nd, a VALID Conv2D, batch_to_space_nd):
# tf.nn.atrous_conv2d SAME/VALID at rates 2 and 3 with its gradients, conv2d(dilations=), tf.nn.convolution,
# tf.layers.conv2d(dilation_rate=), atrous_conv2d_transpose, and TF's argument errors (expected output from TensorFlow).
import numpy as np
import tensorflow as tf
s = tf.Session()
def run(t, feed=None):
    v = s.run(t, feed)
    print(np.round(v, 3) if isinstance(v, np.ndarray) and v.dtype == np.float32 else v)
x = tf.constant(np.sin(np.arange(2 * 9 * 8 * 2, dtype=np.float32)).reshape(2, 9, 8, 2))
f = tf.constant(np.cos(np.arange(3 * 3 * 2 * 3, dtype=np.float32)).reshape(3, 3, 2, 3))
for rate in (2, 3):
    for pad in ("SAME", "VALID"):
        y = tf.nn.atrous_conv2d(x, f, rate, pad)
        print(rate, pad, y.shape, y.op.type)
        run(y[1, :, :, 2])
        gx, gf = tf.gradients(tf.reduce_sum(y * tf.cos(y)), [x, f])
        run(gx[0, :, :, 1]); run(gf[:, :, 1, 0])
y1 = tf.nn.atrous_conv2d(x, f, 1, "SAME")
run(tf.reduce_max(tf.abs(y1 - tf.nn.conv2d(x, f, [1, 1, 1, 1], "SAME"))))
c2 = tf.nn.conv2d(x, f, [1, 1, 1, 1], "SAME", dilations=[1, 2, 2, 1])
cv = tf.nn.convolution(x, f, "SAME", dilation_rate=[2, 2])
cv2 = tf.nn.convolution(x, f, "VALID", dilation_rate=[2, 1])
print(c2.shape, cv.shape, cv2.shape)
run(tf.reduce_max(tf.abs(c2 - tf.nn.atrous_conv2d(x, f, 2, "SAME"))))
run(cv[0, :, :, 0]); run(cv2[1, :, :, 1])
cs = tf.nn.conv2d(x, f, [1, 2, 2, 1], "SAME", dilations=[1, 2, 2, 1])
cs2 = tf.nn.conv2d(x, f, [1, 2, 3, 1], "VALID", dilations=2)
print(cs.shape, cs2.shape)
run(cs[0, :, :, 1]); run(cs2[1, :, :, 0])
seq = tf.constant(np.sin(np.arange(2 * 11 * 3, dtype=np.float32)).reshape(2, 11, 3))
c1 = tf.nn.convolution(seq, tf.constant(np.cos(np.arange(3 * 3 * 2, dtype=np.float32)).reshape(3, 3, 2)), "SAME", dilation_rate=[3])
print(c1.shape)
run(c1[0])
l = tf.layers.conv2d(x, 4, 3, dilation_rate=2, kernel_initializer=tf.constant_initializer(np.sin(np.arange(3 * 3 * 2 * 4)).reshape(3, 3, 2, 4)), bias_initializer=tf.constant_initializer(0.1), name="dil")
l2 = tf.layers.conv2d(x, 2, (2, 3), dilation_rate=(3, 2), padding="same", kernel_initializer=tf.constant_initializer(0.2), name="dil2")
print(l.shape, l2.shape, [v.name for v in tf.trainable_variables()])
p = tf.placeholder(tf.float32, [None, None, None, 2])
lp = tf.nn.atrous_conv2d(p, f, 2, "SAME")
lv = tf.nn.atrous_conv2d(p, f, 2, "VALID")
print(lp.shape, lv.shape)
s.run(tf.global_variables_initializer())
run(l[0, :, :, 3]); run(l2[1, :, :, 1])
gk = tf.gradients(tf.reduce_sum(l * l), tf.trainable_variables()[0])[0]
run(gk[:, :, 0, 1])
xv = np.cos(np.arange(1 * 7 * 6 * 2, dtype=np.float32)).reshape(1, 7, 6, 2)
print(s.run(lp, {p: xv}).shape, s.run(lv, {p: xv}).shape)
run(lp[0, :, :, 0], {p: xv})
# atrous_conv2d_transpose: value [2, h, w, 3] by a [3, 3, 2, 3] filter to output_shape
v = tf.constant(np.sin(np.arange(2 * 9 * 8 * 3, dtype=np.float32)).reshape(2, 9, 8, 3))
for rate, pad, osz in ((2, "SAME", [2, 9, 8, 2]), (3, "SAME", [2, 9, 8, 2]), (2, "VALID", [2, 13, 12, 2])):
    t = tf.nn.atrous_conv2d_transpose(v, f, osz, rate, pad)
    print(rate, pad, t.shape)
    run(t[1, :, :, 0])
    gv, gf = tf.gradients(tf.reduce_sum(t * tf.cos(t)), [v, f])
    run(gv[0, :, :, 2]); run(gf[:, :, 1, 2])
for fn in (lambda: tf.nn.atrous_conv2d(x, f, 0, "SAME"),
           lambda: tf.nn.atrous_conv2d(x, f, 2, "FOO"),
           lambda: tf.nn.convolution(x, f, "SAME", strides=[2, 2], dilation_rate=[2, 2]),
           lambda: tf.nn.atrous_conv2d_transpose(x, f, [2, 9, 8, 2], 0, "SAME"),
           lambda: tf.nn.atrous_conv2d_transpose(v, f, [2, 9, 8, 4], 2, "SAME"),
           lambda: tf.nn.atrous_conv2d_transpose(v, tf.zeros([3, 3, 2, 4]), [2, 9, 8, 2], 2, "SAME")):
    try:
        fn()
    except ValueError as e:
        print("ValueError:", str(e).split("\n")[0])
