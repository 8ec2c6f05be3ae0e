# tf.custom_gradient (a gradient reversal layer, a straight-through estimator, several
# inputs and outputs, variables made inside), and Python gradients inside a tf.while_loop's
# gradient (gradient_override_map, tf.RegisterGradient, custom_gradient in the body),
# against TensorFlow.
import numpy as np
import tensorflow as tf


@tf.custom_gradient
def flip(x):
    def grad(dy):
        return -0.5 * dy
    return tf.identity(x), grad


@tf.custom_gradient
def round_st(x):   # straight-through: round forward, identity backward
    return tf.round(x), lambda dy: dy


@tf.custom_gradient
def two(a, b):
    def grad(da, db):
        return da + db, da * 2.0 - db
    return [a * b, a + b], grad


x = tf.constant([0.3, -1.7, 2.4])
y = tf.constant([1.5, 0.5, -2.0])
s = tf.Session()
print(s.run(tf.gradients(tf.reduce_sum(flip(x) * x), x)))
r = round_st(x * 1.5)
print(s.run(r), s.run(tf.gradients(tf.reduce_sum(r * r), x)))
p, q = two(x, y)
print(p.op.type, s.run(tf.gradients(tf.reduce_sum(p * q), [x, y])))


@tf.custom_gradient
def dense(h):
    out = tf.layers.dense(h, 2, kernel_initializer=tf.constant_initializer(0.5), use_bias=False)

    def grad(dy, variables=None):
        return tf.matmul(dy, tf.transpose(variables[0])) * 0.0 + 1.0, [tf.ones_like(variables[0]) * 3.0]
    return out, grad


h = tf.constant([[1.0, 2.0, 3.0]])
with tf.variable_scope("cg", use_resource=True):
    o = dense(h)
k = [v for v in tf.trainable_variables() if v.name.startswith("cg")][0]
s.run(tf.global_variables_initializer())
print(k.name, s.run(o), s.run(tf.gradients(tf.reduce_sum(o), [h, k])))


@tf.custom_gradient
def bad(h):
    out = tf.layers.dense(h, 2, name="bad_dense")
    return out, lambda dy: dy


try:
    with tf.variable_scope("bad", use_resource=True):
        bad(h)
except TypeError as e:
    print("TypeError", e)


@tf.RegisterGradient("ClipGradX")
def _clip_grad(op, grad):
    return tf.clip_by_value(grad, -0.5, 0.5)


@tf.RegisterGradient("SquareTimesInput")
def _sq_grad(op, grad):
    return grad * 3.0 * op.inputs[0] * tf.constant(1.0) + op.outputs[0] * 0.0


g = tf.get_default_graph()
v = tf.constant([0.3, -1.2, 2.0])


def body(i, acc):
    with g.gradient_override_map({"Identity": "ClipGradX", "Square": "SquareTimesInput"}):
        hh = tf.identity(acc * 2.0)
        sq = tf.square(hh)
    return i + 1, sq * 0.1 + acc


_, out = tf.while_loop(lambda i, a: i < 3, body, [0, v])
print(np.round(s.run(out), 5), np.round(s.run(tf.gradients(tf.reduce_sum(out), v)[0]), 5))

_, y2 = tf.while_loop(lambda i, a: i < 2, lambda i, a: (i + 1, flip(a) * a), [0, v])
print(np.round(s.run(y2), 4), np.round(s.run(tf.gradients(tf.reduce_sum(y2), v)[0]), 4))
