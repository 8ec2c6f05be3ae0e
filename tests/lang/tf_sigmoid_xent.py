# tf.nn.sigmoid_cross_entropy_with_logits: values, and gradients at a logit of exactly 0
# (where Maximum / Abs would give the wrong side's), second order too, against TensorFlow.
import numpy as np
import tensorflow as tf

x = tf.constant([0., 0., 1.5, -2., 0.])
z = tf.constant([1., 0., 1., 0., 0.5])
l = tf.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x)
g = tf.gradients(tf.reduce_mean(l), x)[0]
h = tf.gradients(g, x, grad_ys=tf.ones([5]))[0]
gz = tf.gradients(tf.reduce_sum(l), z)[0]
print(l.name, l.shape)
with tf.Session() as s:
    for t in (l, g, h, gz):
        print(np.round(s.run(t), 5))
try:
    tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.ones([2, 3]), logits=tf.ones([3, 2]))
except ValueError as e:
    print("ValueError", e)
with tf.Session() as s:
    print(np.round(s.run(tf.nn.sigmoid_cross_entropy_with_logits(z, x)), 5))   # positional, as TF 2's v1
