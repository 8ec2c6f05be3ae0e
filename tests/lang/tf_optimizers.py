# TF1's optimizers: two exact steps of each on loss = 0.5 * var^2 (so grad = var), checked
# against the update formulas by hand; slots, slot names, beta powers and global_step.
import tensorflow as tf


def run(make, steps=2):
    tf.reset_default_graph()
    var = tf.Variable(1.0, name="var")
    loss = 0.5 * tf.square(var)
    gs = tf.train.get_or_create_global_step()
    opt = make()
    train_op = opt.minimize(loss, global_step=gs)
    out = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(steps):
            sess.run(train_op)
            out.append("%.5f" % sess.run(var).item())
        step = sess.run(gs)
        slots = ["%s=%s" % (n, opt.get_slot(var, n).op.name) for n in opt.get_slot_names()]
        extra = ["%s=%.6f" % (v.op.name, sess.run(v).item()) for v in opt.variables() if "power" in v.op.name]
    return "%s step=%d slots=%s %s" % (" ".join(out), step, slots, " ".join(extra))


# var = 1 - 0.1 = 0.9; 0.9 - 0.09 = 0.81
print("sgd", run(lambda: tf.train.GradientDescentOptimizer(0.1)))
# accum = 1, var = 0.9; accum = 0.9 * 1 + 0.9 = 1.8, var = 0.9 - 0.18 = 0.72
print("momentum", run(lambda: tf.train.MomentumOptimizer(0.1, 0.9)))
# accum = 1, var = 1 - 0.1 * (1 + 0.9 * 1) = 0.81; accum = 0.9 + 0.81 = 1.71,
# var = 0.81 - 0.1 * (0.81 + 0.9 * 1.71) = 0.5751
print("nesterov", run(lambda: tf.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True)))
# accum = 0.1 + 1 = 1.1, var = 1 - 0.1 / sqrt(1.1) = 0.904654; accum = 1.1 + 0.818399 = 1.918399,
# var = 0.904654 - 0.1 * 0.904654 / sqrt(1.918399) = 0.839340
print("adagrad", run(lambda: tf.train.AdagradOptimizer(0.1)))
# m = 0.1, v = 0.001, lr_t = 0.1 * sqrt(0.001) / 0.1: var = 1 - 0.1 = 0.9 (epsilon aside);
# step 2 as Kingma & Ba; beta powers 0.9^3 and 0.999^3 after two steps
print("adam", run(lambda: tf.train.AdamOptimizer(0.1)))
# ms starts at 1: ms = 0.9 + 0.1 = 1, mom = 0.1, var = 0.9; ms = 0.9 + 0.1 * 0.81 = 0.981,
# mom = 0.1 * 0.9 / sqrt(0.981) = 0.090867, var = 0.809133
print("rmsprop", run(lambda: tf.train.RMSPropOptimizer(0.1)))
# momentum in RMSProp: mom = 0.5 * mom + lr * g / sqrt(ms + eps)
print("rmsprop_momentum", run(lambda: tf.train.RMSPropOptimizer(0.1, momentum=0.5)))

# loss falls for each optimizer on a small least-squares problem
xs = [[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [2.0, 1.0]]
ys = [[1.0], [2.0], [3.0], [5.0]]
for name, make in [("sgd", lambda: tf.train.GradientDescentOptimizer(0.05)),
                   ("momentum", lambda: tf.train.MomentumOptimizer(0.02, 0.9)),
                   ("adagrad", lambda: tf.train.AdagradOptimizer(0.3)),
                   ("adam", lambda: tf.train.AdamOptimizer(0.1)),
                   ("rmsprop", lambda: tf.train.RMSPropOptimizer(0.05))]:
    tf.reset_default_graph()
    x = tf.placeholder(tf.float32, [None, 2])
    y = tf.placeholder(tf.float32, [None, 1])
    w = tf.get_variable("w", [2, 1], initializer=tf.zeros_initializer())
    b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
    train_op = make().minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        losses = []
        for i in range(60):
            l, _ = sess.run([loss, train_op], {x: xs, y: ys})
            losses.append(l.item())
    print(name, "loss %.2f ->" % losses[0], "< 0.2:", losses[-1] < 0.2, "falls:", losses[-1] < losses[30] < losses[0])

# apply_gradients by hand, compute_gradients' pairs, var_list, errors
tf.reset_default_graph()
a = tf.Variable(2.0, name="a")
b = tf.Variable(3.0, name="b")
c = tf.Variable(5.0, name="c", trainable=False)
loss = a * b * 0.5   # not a * b: TF's grappler turns dy * b (dy = 1) into b itself, which aliases the variable
opt = tf.train.GradientDescentOptimizer(0.5)
gv = opt.compute_gradients(loss)
print([(g is None, v.op.name) for g, v in gv])
step = opt.apply_gradients(gv)
print(type(step).__name__, step.type)
only_a = opt.minimize(loss, var_list=[a], name="only_a")
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    sess.run(step)
    print([x.item() for x in sess.run([a, b])])
    sess.run(only_a)
    print([x.item() for x in sess.run([a, b])])
try:
    opt.minimize(a * 2.0, var_list=[b, c])
except ValueError as e:
    print("ValueError:", str(e).split(",")[0])
try:
    tf.train.GradientDescentOptimizer(0.1).apply_gradients([])
except ValueError as e:
    print("ValueError:", e)
