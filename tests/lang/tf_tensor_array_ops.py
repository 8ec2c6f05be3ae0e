# TensorArrayV3 and its family in the runtime (ops/tensor_array.c): element access, dynamic
# size, clear_after_read, element shape checks and TF's error messages, gradients through
# every op, map_fn/scan/foldl/foldr and dynamic_rnn on TensorArrays (op names and types as
# TF1 builds them). Expected output from real TF.
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()


def r4(a):
    return ["%.4f" % v for v in a.flatten().tolist()]


def run(f, feed=None):
    tf.reset_default_graph()
    try:
        with tf.Session() as s:
            out = s.run(f(), feed)
            print(out.tolist() if hasattr(out, "tolist") else out)
    except tf.errors.OpError as e:
        lines = e.message.split("\n")
        at = [k for k, l in enumerate(lines) if l.startswith("Node: ")]
        print(type(e).__name__, lines[at[0] + 1] if at else lines[0])


run(lambda: tf.TensorArray(tf.float32, size=2).write(0, 1.0).write(0, 2.0).read(0))


def twice():
    ta = tf.TensorArray(tf.float32, size=2).write(0, 1.0)
    a = ta.read(0)
    with tf.control_dependencies([a]):
        return ta.read(0)


run(twice)


def twice_kept():
    ta = tf.TensorArray(tf.float32, size=2, clear_after_read=False).write(0, 1.0)
    a = ta.read(0)
    with tf.control_dependencies([a]):
        return a + ta.read(0)


run(twice_kept)
run(lambda: tf.TensorArray(tf.float32, size=2).write(5, 1.0).flow)
run(lambda: tf.TensorArray(tf.float32, size=2).read(5))
run(lambda: tf.TensorArray(tf.float32, size=2).read(1))
run(lambda: tf.TensorArray(tf.float32, size=2, element_shape=[3]).read(1))
run(lambda: tf.TensorArray(tf.float32, size=2, infer_shape=False).write(0, [1.0]).write(1, [1., 2.]).stack())
run(lambda: tf.TensorArray(tf.float32, size=2, infer_shape=False).write(0, [1.0]).write(1, [1., 2.]).concat())
run(lambda: tf.TensorArray(tf.float32, size=0, dynamic_size=True).write(3, [1.0]).stack())
run(lambda: tf.TensorArray(tf.float32, size=0, dynamic_size=True).write(3, [1.0]).size())
run(lambda: tf.TensorArray(tf.float32, size=3, infer_shape=False).write(0, [1.0]).stack())
run(lambda: tf.TensorArray(tf.float32, size=3).unstack([1., 2.]).flow)
run(lambda: tf.TensorArray(tf.float32, size=2).split([1., 2., 3.], [1, 1]).flow)
run(lambda: tf.TensorArray(tf.float32, size=0, dynamic_size=True).split([1., 2., 3.], [1, 2]).concat())
run(lambda: tf.TensorArray(tf.float32, size=0, dynamic_size=True).scatter([4, 1], [[1., 2.], [3., 4.]]).gather([1, 4]))
run(lambda: tf.TensorArray(tf.float32, size=0, dynamic_size=True).scatter([4, 1], [[1., 2.], [3., 4.]]).stack())
run(lambda: tf.TensorArray(tf.int32, size=2).write(0, 1).write(1, 2).stack())
run(lambda: tf.TensorArray(tf.float32, size=0, element_shape=[2]).stack())



def fed(write_second):
    def f():
        p = tf.placeholder(tf.float32, name="p")
        ta = tf.TensorArray(tf.float32, size=2, element_shape=None if write_second else [2]).write(0, p)
        return ta.write(1, [1.]).stack() if write_second else ta.flow
    return f


def run_fed(f):
    tf.reset_default_graph()
    t = f()
    try:
        with tf.Session() as s:
            print(s.run(t, {"p:0": [1., 2., 3.]}))
    except tf.errors.OpError as e:
        lines = e.message.split("\n")
        at = [k for k, l in enumerate(lines) if l.startswith("Node: ")]
        print(type(e).__name__, lines[at[0] + 1] if at else lines[0])


run_fed(fed(False))
run_fed(fed(True))


def closed():
    ta = tf.TensorArray(tf.float32, size=2).write(0, 1.0)
    c = ta.close()
    with tf.control_dependencies([c]):
        return ta.size()


run(closed)

# static shape checks while building
tf.reset_default_graph()
try:
    tf.TensorArray(tf.float32, size=2, element_shape=[2]).write(0, [1., 2., 3.])
except ValueError as e:
    print("ValueError", e)
ta = tf.TensorArray(tf.float32, size=2).write(0, [1., 2.])
print(ta.element_shape, ta.read(1).shape, ta.stack().shape, ta.concat().shape, ta.dtype.name, ta.dynamic_size)

# gradients through every op
tf.reset_default_graph()
x = tf.constant([[1., 2.], [3., 4.], [5., 6.]])
w = tf.constant([0.5, -2.0])
ta = tf.TensorArray(tf.float32, size=3).unstack(x * w)
a = ta.read(0) * 3.0 + ta.read(2)
tb = tf.TensorArray(tf.float32, size=0, dynamic_size=True, infer_shape=False).split(tf.reshape(x, [-1]) * 2.0, [4, 2])
c = tb.concat()
td = tf.TensorArray(tf.float32, size=2).scatter([1, 0], x[:2] * x[:2])
d = td.gather([0, 1])
te = tf.TensorArray(tf.float32, size=2).write(0, w * w).write(1, w)
e = te.stack()
loss = tf.reduce_sum(a * a) + tf.reduce_sum(tf.reshape(c, [6]) * tf.range(6.0)) + tf.reduce_sum(d * [[1., 2.], [3., 4.]]) + \
    tf.reduce_sum(e * [[1., 1.], [2., 2.]])
gx, gw = tf.gradients(loss, [x, w])
with tf.Session() as s:
    for v in s.run([a, c, d, e, gx, gw]):
        print(v.tolist())

# map_fn, scan, foldl, foldr with gradients
tf.reset_default_graph()
x = tf.constant([[1., 2.], [3., 4.], [5., 6.]])
w = tf.constant([[0.5, -1.], [2., 1.]])
m = tf.map_fn(lambda v: tf.tanh(tf.matmul(tf.expand_dims(v, 0), w))[0], x)
m2 = tf.map_fn(lambda v: (v[0] * 2.0, v[1]), (x[:, 0], x[:, 1]), dtype=(tf.float32, tf.float32))
s1 = tf.scan(lambda a, v: a * 0.5 + v, x)
s2 = tf.scan(lambda a, v: a * v, x, initializer=tf.ones([2]), reverse=True)
f1 = tf.foldl(lambda a, v: a * 0.5 + v, x)
f2 = tf.foldr(lambda a, v: a * 0.5 + v, x, initializer=tf.zeros([2]))
f3 = tf.foldr(lambda a, v: a - v, tf.constant([1., 2., 5.]))
loss = tf.reduce_sum(m * m) + tf.reduce_sum(s1 * s1) + tf.reduce_sum(s2) + tf.reduce_sum(f1 * f2)
g = tf.gradients(loss, [x, w])
with tf.Session() as s:
    for v in s.run([m, s1, s2, f1, f2, f3] + list(m2) + g):
        print(r4(v))
print(m.shape, s1.shape, s2.shape, f1.shape)

# dynamic_rnn: forward, gradients, names of the TensorArray ops
tf.reset_default_graph()
tf.set_random_seed(1)
x = tf.constant([[[0.1 * (i + j + k) for k in range(4)] for j in range(3)] for i in range(2)])
with tf.variable_scope("v", initializer=tf.constant_initializer(0.1)):
    cell = tf.nn.rnn_cell.LSTMCell(5)
    out, st = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
    out2, st2 = tf.nn.dynamic_rnn(cell, x, sequence_length=[3, 1], dtype=tf.float32, scope="seq")
loss = tf.reduce_sum(out * out) + tf.reduce_sum(st.h) + tf.reduce_sum(out2)
grads = tf.gradients(loss, [x] + tf.trainable_variables())
with tf.Session() as s:
    s.run(tf.global_variables_initializer())
    for v in s.run([out, st.c, out2] + grads):
        print(r4(v))
print(out.shape, st.h.shape)
ops = sorted((o.name, o.type) for o in tf.get_default_graph().get_operations()
             if o.type.startswith("TensorArray") and not o.name.startswith("gradients"))
for n, t in ops:
    print(n, t)
gops = sorted(set(o.type for o in tf.get_default_graph().get_operations()
                  if o.type.startswith("TensorArray") and o.name.startswith("gradients")))
print(gops)

tf.reset_default_graph()
tf.map_fn(lambda v: v * 2, tf.constant([1., 2., 3.]))
tf.scan(lambda a, v: a + v, tf.constant([1., 2., 3.]))
for n, t in sorted((o.name, o.type) for o in tf.get_default_graph().get_operations() if o.type.startswith("TensorArray")):
    print(n, t)

# grad(): a gradient array keyed by source, sharing the size; writes to one index add up
tf.reset_default_graph()
ta = tf.TensorArray(tf.float32, size=2).write(0, [1., 2.]).write(1, [3., 4.])
g = ta.grad("mysrc")
g2 = g.write(0, [1., 1.]).write(0, [2., 2.])
r = g2.read(0)
print(g.flow.op.name, g.flow.op.type, g.handle.op.name, g.handle.op.type, g.handle.op.get_attr("source") in ("mysrc", b"mysrc"))
print(r.op.name, ta.identity().flow.op.type)
with tf.Session() as s:
    a, b, n = s.run([r, g2.read(1), g2.size()])
    print(a.tolist(), b.tolist(), int(n))

# through tf.cond branches (outside and inside a loop), gradients included
tf.reset_default_graph()
p = tf.placeholder(tf.bool, [])
ta = tf.TensorArray(tf.float32, size=2)
ta2 = tf.cond(p, lambda: ta.write(0, 1.0).write(1, 2.0), lambda: ta.write(0, 5.0).write(1, 6.0))
s = ta2.stack()


def body(i, t):
    return i + 1, tf.cond(i > 0, lambda: t.write(i, tf.cast(i, tf.float32)), lambda: t.write(i, -1.0))


_, t3 = tf.while_loop(lambda i, t: i < 3, body, [0, tf.TensorArray(tf.float32, size=3)])
x = tf.constant(2.0)
g = tf.gradients(tf.reduce_sum(tf.cond(p, lambda: ta.write(0, x * x).write(1, x).stack(),
                                       lambda: ta.write(0, x).write(1, x).stack())), x)[0]
with tf.Session() as sess:
    print(sess.run(s, {p: True}).tolist(), sess.run(s, {p: False}).tolist(), sess.run(t3.stack()).tolist())
    print(float(sess.run(g, {p: True})), float(sess.run(g, {p: False})))
