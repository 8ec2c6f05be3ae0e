# Variable scopes, get_variable, initializers, global step, schedules, tf.losses,
# tf.layers.dense: names, sharing and error messages as TF1 has them.
import math
import numpy as np
import tensorflow as tf

with tf.variable_scope("foo"):
    w = tf.get_variable("w", [3, 2])
    b = tf.get_variable("b", [2], initializer=tf.zeros_initializer())
    x = tf.constant(1.0, name="x")
    with tf.variable_scope("bar"):
        v = tf.get_variable("v", [1])
print(w.name, b.name, x.name, v.name, w.shape, b.dtype)
print(tf.get_default_graph().get_operation_by_name("foo/b/Initializer/zeros").type)
with tf.variable_scope("foo"):
    y = tf.constant(2.0, name="y")
print(y.name)
with tf.variable_scope("foo", reuse=True):
    print(tf.get_variable("w") is w, tf.get_variable("bar/v") is v, tf.get_variable_scope().reuse)
with tf.variable_scope("foo") as scope:
    scope.reuse_variables()
    print(tf.get_variable("w", [3, 2]) is w)
with tf.variable_scope("foo"):
    try:
        tf.get_variable("w", [3, 2])
    except ValueError as e:
        print("ValueError:", e)
with tf.variable_scope("foo", reuse=True):
    try:
        tf.get_variable("missing", [1])
    except ValueError as e:
        print("ValueError:", e)
    try:
        tf.get_variable("w", [2, 2])
    except ValueError as e:
        print("ValueError:", e)
try:
    tf.get_variable("noshape")
except ValueError as e:
    print("ValueError:", e)
try:
    tf.get_variable("both", [2], initializer=tf.constant([1.0, 2.0]))
except ValueError as e:
    print("ValueError:", e)
with tf.variable_scope("foo", reuse=tf.AUTO_REUSE):
    print(tf.get_variable("w") is w, tf.get_variable("auto", [1]).name, tf.get_variable("auto", [1]).name)
for i in range(2):
    with tf.variable_scope(None, default_name="layer"):
        print(tf.get_variable_scope().name, tf.get_variable("k", [1]).name)
with tf.variable_scope(scope):
    print(tf.get_variable_scope().name, tf.constant(0, name="c").name)
with tf.variable_scope("init", initializer=tf.constant_initializer(0.5)):
    c1 = tf.get_variable("c1", [2])
    c2 = tf.get_variable("c2", [2, 2], initializer=tf.ones_initializer())
    c3 = tf.get_variable("c3", [3], initializer=tf.constant_initializer([1.0, 2.0, 3.0]))
    c4 = tf.get_variable("c4", initializer=tf.constant([7, 8]))
i64 = tf.get_variable("i64", [2], dtype=tf.int64)
with tf.name_scope("ignored"):
    print(tf.get_variable("top", [1]).name)
print(c4.dtype, i64.dtype, c1 in tf.trainable_variables(), len(tf.global_variables()))

tf.set_random_seed(7)
g1 = tf.get_variable("glorot", [300, 200])
n1 = tf.get_variable("tnormal", [1000], initializer=tf.truncated_normal_initializer(stddev=0.5))
u1 = tf.get_variable("uniform", [1000], initializer=tf.random_uniform_initializer(-0.25, 0.25))
vs = tf.get_variable("vscale", [400, 100], initializer=tf.variance_scaling_initializer(scale=2.0))
xa = tf.get_variable("xavier", [50, 50], initializer=tf.contrib.layers.xavier_initializer())
gs = tf.train.get_or_create_global_step()
print(gs.name, gs.dtype, gs.trainable, tf.train.get_global_step() is gs, tf.get_collection(tf.GraphKeys.GLOBAL_STEP) == [gs])
try:
    tf.train.create_global_step()
except ValueError as e:
    print("ValueError:", e)
lr = tf.train.exponential_decay(0.1, gs, 10, 0.5)
lr_s = tf.train.exponential_decay(0.1, gs, 10, 0.5, staircase=True)
pw = tf.train.piecewise_constant(gs, [5, 10], [1.0, 0.5, 0.1])
bump = tf.assign_add(gs, 5)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    print(sess.run(w).shape, sess.run(b).tolist(), sess.run(c1).tolist(), sess.run(c2).tolist())
    print(sess.run(c3).tolist(), sess.run(c4).tolist(), sess.run(i64).tolist())
    gv = sess.run(g1)
    limit = math.sqrt(6.0 / 500)
    print("glorot within limit:", gv.max().item() <= limit, gv.min().item() >= -limit, "spread:", gv.max().item() > 0.9 * limit)
    nv = sess.run(n1)
    print("truncated within 2 stddev:", nv.max().item() <= 1.0, nv.min().item() >= -1.0, "mean ~0:", abs(nv.mean().item()) < 0.05)
    uv = sess.run(u1)
    print("uniform in range:", uv.max().item() <= 0.25, uv.min().item() >= -0.25)
    vv = sess.run(vs)
    print("variance scaling std ~ sqrt(2/400):", abs(math.sqrt((vv * vv).mean().item()) - math.sqrt(2.0 / 400)) < 0.005)
    xv = sess.run(xa)
    print("xavier within limit:", xv.max().item() <= math.sqrt(6.0 / 100))
    for _ in range(3):
        print(sess.run(gs), "%.4f %.4f %.2f" % (sess.run(lr).item(), sess.run(lr_s).item(), sess.run(pw).item()))
        sess.run(bump)

# the same seeds give the same initial values in the same graph built again
def seeded():
    tf.reset_default_graph()
    tf.set_random_seed(7)
    a = tf.get_variable("a", [20, 10])
    b = tf.get_variable("b", [20], initializer=tf.random_normal_initializer(seed=3))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(a), sess.run(b)


r1, r2 = seeded(), seeded()
print("seeded values repeat:", np.allclose(r1[0], r2[0], 0.0, 0.0), np.allclose(r1[1], r2[1], 0.0, 0.0),
      "differ:", not np.allclose(r1[0][0], r1[0][1], 0.0, 0.0))

# tf.layers.dense and tf.losses
tf.reset_default_graph()
inp = tf.placeholder(tf.float32, [None, 4])
h = tf.layers.dense(inp, 3, activation=tf.nn.relu)
out = tf.layers.dense(h, 2, name="logits")
print(h.shape, out.shape, [v.name for v in tf.trainable_variables()])
labels = tf.constant([[1.0, 0.0], [0.0, 1.0]])
logits = tf.constant([[2.0, 0.0], [0.0, 0.0]])
l1 = tf.losses.softmax_cross_entropy(labels, logits)
l2 = tf.losses.sparse_softmax_cross_entropy(tf.constant([0, 1]), logits)
l3 = tf.losses.mean_squared_error(labels, logits)
with tf.Session() as sess:
    print("%.5f %.5f %.5f" % (sess.run(l1).item(), sess.run(l2).item(), sess.run(l3).item()))
print(len(tf.losses.get_losses()))
