# Gradients through tf.while_loop as TF 1.x builds them (a gradient loop that pops what the
# forward loop pushed): loop variables, loop invariants (a variable read in the body), a
# matmul/sigmoid recurrence, a tf.cond in the body, a loop in the body, a loop trained by GradientDescentOptimizer, checked against
# finite differences. Expected output from real TF (printed to 4 decimals: the last float
# bits depend on the order of the sums).
import numpy as np
import tensorflow as tf


def rnd(v):
    if isinstance(v, list):
        return [rnd(e) for e in v]
    return round(float(v), 4)


def r(xs):
    return [rnd(np.asarray(v).tolist()) for v in xs]


x = tf.constant(1.5)
w = tf.Variable(0.5)
i, y = tf.while_loop(lambda i, y: i < 4, lambda i, y: (i + 1, y * w + x * tf.tanh(y)), [tf.constant(0), x])
gx, gw = tf.gradients(y, [x, w])
v = tf.constant([1.0, 2.0])
m = tf.Variable([[0.5, -0.3], [0.2, 0.4]])
_, h = tf.while_loop(lambda k, h: k < 3, lambda k, h: (k + 1, tf.sigmoid(tf.matmul(h, m))),
                     [tf.constant(0), tf.reshape(v, [1, 2])], parallel_iterations=1)
loss = tf.reduce_sum(h * h)
gm, gv = tf.gradients(loss, [m, v])

# train a loop invariant: a*b^n should reach 3 with n = 5 iterations
b = tf.Variable(0.9)
_, p = tf.while_loop(lambda k, p: k < 5, lambda k, p: (k + 1, p * b), [tf.constant(0), tf.constant(2.0)])
fit = tf.square(p - 3.0)
train = tf.train.GradientDescentOptimizer(0.002).minimize(fit)

# a tf.cond in the body: each branch's gradient runs in the iterations that took it
cx = tf.constant([1.0, 2.0])
cw = tf.Variable(0.7)


def cbody(i, h):
    return i + 1, tf.cond(tf.equal(tf.mod(i, 2), 0), lambda: h * cw + cx, lambda: tf.tanh(h) * 2.0)


_, cy = tf.while_loop(lambda i, h: i < 5, cbody, [tf.constant(0), cx])
cgx, cgw = tf.gradients(tf.reduce_sum(cy * cy), [cx, cw])

# a loop inside a loop (the inner trip count follows the outer counter), an invariant
# of the inner loop that comes from outside both
nx = tf.constant(2.0)
na0 = tf.constant(1.5)
nw = tf.Variable([0.5, -0.25])


def nouter(i, a):
    _, b = tf.while_loop(lambda j, b: j < i + 1, lambda j, b: (j + 1, b * nx + tf.reduce_sum(nw * b)),
                         [tf.constant(0), a])
    return i + 1, tf.tanh(b * 0.1) * 3.0


_, ny = tf.while_loop(lambda i, a: i < 3, nouter, [tf.constant(0), na0])
ngx, nga, ngw = tf.gradients(ny, [nx, na0, nw])

with tf.Session() as s:
    s.run(tf.global_variables_initializer())
    print(r(s.run([y, gx, gw])))
    print(r(s.run([ny, ngx, nga, ngw])))
    print(r(s.run([cy, cgx, cgw])))
    print(r(s.run([loss, gm, gv])))
    # finite differences on w
    eps = 1e-3
    w0 = s.run(w)
    s.run(w.assign(w0 + eps))
    up = s.run(y)
    s.run(w.assign(w0 - eps))
    down = s.run(y)
    s.run(w.assign(w0))
    print("fd agrees:", abs(float((up - down) / (2 * eps)) - float(s.run(gw))) < 1e-2)
    for step in range(30):
        _, f = s.run([train, fit])
        if step % 10 == 0:
            print(step, round(float(f), 4))
    print(round(float(s.run(fit)), 4), round(float(s.run(b)), 4))
