# Optimizer.minimize / compute_gradients gate the gradients (TF's GATE_OP): no variable is
# updated before every gradient that reads it is computed, so one step of plain SGD on a
# 3-layer MLP gives TF's values (tfsh updated W3 before W1's gradient read it, and the
# runs drifted apart; aymericdamien tensorboard_advanced.py, which applies tf.gradients'
# own results, diverged to NaN).
# Expected output from TensorFlow 1.x through the oracle.
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(0)
xv = rng.rand(8, 6).astype(np.float32)
yv = np.zeros((8, 3), dtype=np.float32)
for i, k in enumerate(rng.randint(0, 3, 8)):
    yv[i, k] = 1.0
x = tf.placeholder(tf.float32, [None, 6])
y = tf.placeholder(tf.float32, [None, 3])
w1 = tf.Variable(rng.randn(6, 4).astype(np.float32), name="W1")
w2 = tf.Variable(rng.randn(4, 4).astype(np.float32), name="W2")
w3 = tf.Variable(rng.randn(4, 3).astype(np.float32), name="W3")
b1 = tf.Variable(rng.randn(4).astype(np.float32), name="b1")
b2 = tf.Variable(rng.randn(4).astype(np.float32), name="b2")
b3 = tf.Variable(rng.randn(3).astype(np.float32), name="b3")
l1 = tf.nn.relu(tf.add(tf.matmul(x, w1), b1))
l2 = tf.nn.relu(tf.add(tf.matmul(l1, w2), b2))
pred = tf.add(tf.matmul(l2, w3), b3)
loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(logits=pred, labels=y))
opt = tf.train.GradientDescentOptimizer(0.05)
gv = opt.compute_gradients(loss)
print([v.name for g, v in gv], [g.dtype.name for g, v in gv])
train = opt.apply_gradients(gv)
train2 = tf.train.GradientDescentOptimizer(0.05).minimize(loss)
# tf.gradients itself (no gate) then apply_gradients, as tensorboard_advanced.py does: TF's
# executor computes the gradients before the updates; tfsh gates them in apply_gradients
vs = tf.trainable_variables()
train3 = tf.train.GradientDescentOptimizer(0.05).apply_gradients(list(zip(tf.gradients(loss, vs), vs)))
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(4):
        _, c = sess.run([train, loss], {x: xv, y: yv})
        print(i, "%.4f" % c)
    for i in range(3):
        _, c = sess.run([train2, loss], {x: xv, y: yv})
        print(i, "%.4f" % c)
    for i in range(3):
        _, c = sess.run([train3, loss], {x: xv, y: yv})
        print(i, "%.4f" % c)
    print(np.round(sess.run(w1), 4))
