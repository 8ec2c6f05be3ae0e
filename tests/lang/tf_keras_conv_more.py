# tf.keras.layers DepthwiseConv2D, SeparableConv2D and Conv2DTranspose in graph mode (expected output from
# TensorFlow): output shapes, weight names and shapes, values from fixed initializers, in a Sequential model.
import numpy as np
import tensorflow as tf

L = tf.keras.layers
s = tf.Session()


def run(t):
    print(np.round(s.run(t), 3))


def wts(layer):
    return [(w.name, w.shape.as_list()) for w in layer.weights]


x = tf.constant(np.sin(np.arange(2 * 6 * 5 * 3) * 0.7).reshape(2, 6, 5, 3).astype(np.float32))
c = tf.constant_initializer
d1 = L.DepthwiseConv2D(3, padding="same", depth_multiplier=2, depthwise_initializer=c(0.3), bias_initializer=c(0.1))
d2 = L.DepthwiseConv2D((2, 3), strides=2, use_bias=False, depthwise_initializer=c(-0.2), activation="relu")
s1 = L.SeparableConv2D(4, 3, depthwise_initializer=c(0.1), pointwise_initializer=c(0.2), bias_initializer=c(0.5))
s2 = L.SeparableConv2D(2, (3, 2), strides=(2, 1), padding="same", depth_multiplier=3, activation="relu",
                       depthwise_initializer=c(0.25), pointwise_initializer=c(-0.1))
t1 = L.Conv2DTranspose(2, 3, strides=2, padding="same", kernel_initializer=c(0.1), bias_initializer=c(0.2))
t2 = L.Conv2DTranspose(3, (2, 3), strides=(2, 1), kernel_initializer=c(0.05))
t3 = L.Conv2DTranspose(1, 3, strides=2, padding="same", output_padding=1, kernel_initializer=c(0.1))
ys = [layer(x) for layer in (d1, d2, s1, s2, t1, t2, t3)]
for layer, y in zip((d1, d2, s1, s2, t1, t2, t3), ys):
    print(layer.name, y.shape, wts(layer))
p = tf.placeholder(tf.float32, [None, None, None, 3])
yp = [L.DepthwiseConv2D(3)(p), L.SeparableConv2D(5, 3, padding="same")(p), L.Conv2DTranspose(4, 3, strides=2)(p)]
print([y.shape for y in yp])
s.run(tf.global_variables_initializer())
run(ys[0][1, :, :, 5]); run(ys[1][0, :, :, 2]); run(ys[2][0, :, :, 3]); run(ys[3][1, :, :, 1])
run(ys[4][0, :, :, 1]); run(ys[5][1, :, :, 2]); run(ys[6][0, :, :, 0])
print([r.shape for r in s.run(yp, {p: np.ones((1, 4, 5, 3), np.float32)})])

m = tf.keras.Sequential([L.SeparableConv2D(4, 3, input_shape=(6, 5, 3), pointwise_initializer=c(0.1),
                                           depthwise_initializer=c(0.2)),
                         L.DepthwiseConv2D(2, depthwise_initializer=c(0.5)),
                         L.Conv2DTranspose(2, 2, strides=2, kernel_initializer=c(0.3))])
print(m.output.shape, [w.name for w in m.weights], m.count_params())
s.run(tf.variables_initializer(m.weights))
pm = tf.placeholder(tf.float32, [None, 6, 5, 3])
print(np.round(s.run(m(pm), {pm: np.ones((1, 6, 5, 3), np.float32)})[0, :, :, 0], 3))
g = tf.gradients(tf.reduce_sum(m(x)), m.trainable_weights)
print([v.shape for v in g])
for r in s.run(g[:3]):
    print(np.round(r.reshape(-1)[:6], 3))

# Conv2D with dilation_rate 2 (TF 1.x: space_to_batch around a VALID conv)
cd = L.Conv2D(2, 3, dilation_rate=2, padding="same", kernel_initializer=c(0.25), name="dil")
yd = cd(x)
s.run(tf.variables_initializer(cd.weights))
print(yd.shape, cd.dilation_rate)
print(np.round(s.run(yd)[0, :, :, 1], 3))
