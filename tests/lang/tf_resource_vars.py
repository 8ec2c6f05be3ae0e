# Resource variables in TF1 graph mode: the graph TF builds, reads, assignments, gradients,
# every optimizer's ResourceApply* kernel, Saver round trips with ref variables.
import os
import tempfile
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()


def r4(a):
    return [[round(float(x), 4) for x in row] for row in a]


def ops_of(g, start=0):
    return [(op.name, op.type) for op in g.get_operations()[start:]]


g = tf.Graph()
with g.as_default():
    v = tf.get_variable("v", [2], initializer=tf.constant_initializer([1., 2.]), use_resource=True)
    w = tf.Variable([3., 4.], name="w", use_resource=True)
    print(v, w)
    print(v.dtype, v.handle.dtype, v.handle.shape, v.op.type, v.initializer.name, v.initializer.type)
    print(v.shape, v.get_shape(), tf.resource, v.handle.dtype == tf.resource)
    for op in g.get_operations():
        print(op.name, op.type, [i.name for i in op.inputs])
    r = v.value()
    print(r.name, r.op.type, r.shape)
    with tf.Session() as s:
        try:
            s.run(r)
        except tf.errors.FailedPreconditionError as e:
            print("FailedPreconditionError", [l for l in e.message.splitlines() if "localhost/" in l][0])
        try:
            s.run(v.assign_add([1., 1.], read_value=False))
        except tf.errors.NotFoundError as e:
            print("NotFoundError", [l for l in e.message.splitlines() if "localhost/" in l][0])
        print(s.run(tf.report_uninitialized_variables()))
        s.run(tf.global_variables_initializer())
        print(s.run(tf.report_uninitialized_variables()))
        print(s.run([v, w]))
        print(s.run(v.assign_add([1., 1.])))
        print(s.run(tf.assign_sub(w, [1., 1.])))
        print(s.run(v.assign([5., 6.])))
        print(s.run(v.sparse_read([1, 0, 1])))
        print(s.run(v + w), s.run(v * 2.0), s.run(v[1]))
        a = v.assign([7., 8.], read_value=False)
        print(a.type, a.name)
        s.run(a)
        print(s.run(v.read_value()))
        print(s.run(tf.is_variable_initialized(v)))

# gradients through reads and gathers; minimize with each optimizer
def train(make_opt, steps=3):
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(1)
        x = tf.constant([[1., 2.], [3., 4.]])
        emb = tf.get_variable("emb", initializer=tf.constant([[0.5, -0.5], [0.25, 1.0], [2., 0.]]),
                              use_resource=True)
        wt = tf.get_variable("wt", initializer=tf.constant([[1., 0.5], [-1., 2.]]), use_resource=True)
        rows = tf.nn.embedding_lookup(emb, [0, 2]) if False else emb.sparse_read([0, 2])
        y = tf.matmul(x + rows, wt)
        loss = tf.reduce_sum(y * y) / 10.0
        opt = make_opt()
        n0 = len(g.get_operations())
        step = opt.minimize(loss)
        kinds = sorted(set(op.type for op in g.get_operations()[n0:] if op.type.startswith("ResourceApply")))
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            gr = s.run(tf.gradients(loss, [wt.handle])[0])
            for _ in range(steps):
                s.run(step)
            e, w2 = s.run([emb, wt])
        print(kinds, r4(gr))
        print(r4(e), r4(w2))


train(lambda: tf.train.GradientDescentOptimizer(0.1))
train(lambda: tf.train.MomentumOptimizer(0.05, 0.9))
train(lambda: tf.train.MomentumOptimizer(0.05, 0.9, use_nesterov=True))
train(lambda: tf.train.AdamOptimizer(0.1))
train(lambda: tf.train.AdagradOptimizer(0.1))
train(lambda: tf.train.RMSPropOptimizer(0.01))
train(lambda: tf.train.AdadeltaOptimizer(1.0))

# the ops minimize builds for one resource variable
g = tf.Graph()
with g.as_default():
    b = tf.get_variable("b", initializer=tf.constant([1., 2.]), use_resource=True)
    loss = tf.reduce_sum(b * b)
    n0 = len(g.get_operations())
    tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    print([t for t in ops_of(g, n0) if "Read" in t[1] or "Resource" in t[1] or "Assign" in t[1]])

# variable_scope(use_resource=True), enable_resource_variables()
g = tf.Graph()
with g.as_default():
    with tf.variable_scope("s", use_resource=True):
        a = tf.get_variable("a", [1])
        with tf.variable_scope("inner"):
            c = tf.get_variable("c", [1])
    d = tf.get_variable("d", [1])
    tf.enable_resource_variables()
    e = tf.get_variable("e", [1])
    f = tf.Variable(1.0, name="f")
    tf.disable_resource_variables()
    h = tf.Variable(1.0, name="h")
    print([(x.name, x.op.type) for x in [a, c, d, e, f, h]])

# Saver: a checkpoint of resource variables restores ref variables of the same names and back
ckdir = tempfile.mkdtemp()
g = tf.Graph()
with g.as_default():
    p = tf.get_variable("p", initializer=tf.constant([1.5, 2.5]), use_resource=True)
    q = tf.get_variable("q", initializer=tf.constant(3), use_resource=True)
    saver = tf.train.Saver()
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        s.run(p.assign([9., 8.]))
        path = saver.save(s, os.path.join(ckdir, "m"))
print(sorted(tf.train.list_variables(ckdir)))
g = tf.Graph()
with g.as_default():
    p = tf.get_variable("p", [2])
    q = tf.get_variable("q", [], dtype=tf.int32)
    with tf.Session() as s:
        tf.train.Saver().restore(s, path)
        print(p.dtype, s.run(p), int(s.run(q)))
        s.run(p.assign([4., 5.]))
        path2 = tf.train.Saver().save(s, os.path.join(ckdir, "n"))
g = tf.Graph()
with g.as_default():
    p = tf.get_variable("p", [2], use_resource=True)
    q = tf.get_variable("q", [], dtype=tf.int32, use_resource=True)
    with tf.Session() as s:
        tf.train.Saver().restore(s, path2)
        print(p.dtype, s.run(p), int(s.run(q)))
