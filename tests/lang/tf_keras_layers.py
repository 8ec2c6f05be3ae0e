# tf.keras layers in graph mode as TF 1.x builds them (expected output from real TF through
# scripts/tf_oracle): layer, variable and op names, shapes, weights and updates, numbers from
# fixed initializers and set_weights. TF's Keras makes resource variables (its update ops end
# in /AssignSubVariableOp); tfsh's are reference variables, so update names are printed
# without that suffix.
import numpy as np
import tensorflow as tf

K = tf.keras
L = tf.keras.layers


def names(vs):
    return [v.name for v in vs]


def upd(us):
    return [u.name.replace("/AssignSubVariableOp", "") for u in us]


def r4(a):
    return [round(float(v), 4) for v in np.asarray(a).reshape(-1)]


def ops_named(prefix, types):
    return [op.name for op in tf.get_default_graph().get_operations()
            if op.name.startswith(prefix) and op.type in types]


# a Sequential CNN built at once from input_shape, then called on a placeholder
x = tf.placeholder(tf.float32, [None, 8, 8, 1], name="x")
model = K.Sequential([
    L.Conv2D(4, 3, activation="relu", input_shape=(8, 8, 1)),
    L.MaxPooling2D(2),
    L.BatchNormalization(),
    L.Flatten(),
    L.Dropout(0.5),
    L.Dense(10, activation="softmax"),
])
print([l.name for l in model.layers], model.name)
print(model.input.name, model.input.shape, model.output.name, model.output.shape)
y = model(x)
print(y.name, y.shape)
print(names(model.trainable_variables))
print(names(model.non_trainable_variables))
print(names(model.variables) == names(model.weights), len(model.weights))
print(names(tf.global_variables()))
print(names(tf.trainable_variables()))
print(upd(model.updates), tf.get_collection(tf.GraphKeys.UPDATE_OPS))
print(ops_named("sequential/", ("Conv2D", "BiasAdd", "Relu", "MaxPool", "MatMul", "Softmax", "Reshape")))
print(ops_named("conv2d/", ("Conv2D", "BiasAdd", "Relu")))
print(model.layers[0].kernel.name, model.layers[0].bias.name, model.layers[2].moving_mean.name,
      model.layers[2].moving_variance.name)

# layers on their own: names made unique per graph, a second call in a new name scope
d = L.Dense(3, kernel_initializer=K.initializers.Constant(0.5), bias_initializer="ones")
print(d.name, d.built)
a = tf.placeholder(tf.float32, [None, 2], name="a")
h = d(a)
h2 = d(h[:, :2])
print(d.built, h.name, h.shape, h2.name, names(d.weights), d.kernel.shape, d.bias.shape)
with tf.name_scope("outer"):
    h3 = L.Dense(2, name="head", kernel_initializer="ones", use_bias=False)(h)
print(h3.name, names(tf.trainable_variables())[-1])
print(L.Dense(1).name, L.Conv2D(1, 1).name, L.BatchNormalization().name, K.Sequential().name)

# Input, a functional Model called again on a new tensor
inp = K.Input(shape=(2,))
mid = L.Dense(4, activation="relu", kernel_initializer="ones", name="f1")(inp)
out = L.Dense(1, kernel_initializer="ones", name="f2")(mid)
fm = K.Model(inp, out)
print(inp.name, inp.shape, out.name, [l.name for l in fm.layers], names(fm.trainable_weights))
fo = fm(a)
print(fo.name, fo.shape)

# Embedding, Activation, Reshape, Concatenate, Add, pooling, Flatten, Dropout
ids = tf.placeholder(tf.int32, [None, 3], name="ids")
emb = L.Embedding(5, 2, embeddings_initializer=K.initializers.Constant(np.arange(10.0).reshape(5, 2)))
e = emb(ids)
act = L.Activation("tanh")(e)
r = L.Reshape((6,))(e)
cat = L.Concatenate()([r, r])
sm = L.Add()([r, r])
img = tf.placeholder(tf.float32, [None, 4, 4, 2], name="img")
avg = L.AveragePooling2D()(img)
mx = L.MaxPooling2D(pool_size=(2, 2), strides=1, padding="same")(img)
fl = L.Flatten()(avg)
dr = L.Dropout(0.5)
d_off = dr(r, training=False)
print(e.name, e.shape, names(emb.weights), act.name, r.name, r.shape, cat.name, cat.shape, sm.name)
print(avg.name, avg.shape, mx.name, mx.shape, fl.name, fl.shape, d_off.name)

# BatchNormalization: training=True makes updates; training=False uses the moving statistics
bx = tf.placeholder(tf.float32, [None, 3], name="bx")
bn = L.BatchNormalization(momentum=0.9)
bt = bn(bx, training=True)
bi = bn(bx, training=False)
print(bt.name, bi.name, upd(bn.updates), names(bn.weights), names(bn.trainable_weights))
print([n.replace("/AssignSubVariableOp", "") for n in
       ops_named(bn.name + "/", ("Mean", "StopGradient", "Squeeze", "Rsqrt", "AssignSub", "AssignSubVariableOp"))])
reg = L.Dense(2, kernel_regularizer=K.regularizers.l2(0.01), name="rd")
ro = reg(bx)
print(names(reg.losses), tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES))


xv = np.array([[1.0, 2.0, 3.0], [3.0, 6.0, 9.0], [5.0, 1.0, 0.0], [7.0, 3.0, 4.0]], np.float32)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    print(sess.run(h, {a: [[1.0, 2.0], [0.0, -1.0]]}))
    print(sess.run(h2, {a: [[1.0, 2.0]]}), sess.run(h3, {a: [[1.0, 2.0]]}))
    print(sess.run(fo, {a: [[1.0, 2.0], [-3.0, 1.0]]}))
    print(sess.run(e, {ids: [[0, 4, 2]]}), sess.run(cat, {ids: [[1, 1, 1]]}))
    print(sess.run(sm, {ids: [[3, 0, 1]]}))
    im = np.arange(32.0).reshape(1, 4, 4, 2)
    print(sess.run(avg, {img: im}).reshape(-1), sess.run(mx, {img: im}).reshape(-1))
    print(sess.run(d_off, {ids: [[1, 2, 3]]}))
    print(r4(sess.run(bt, {bx: xv})))
    print(r4(sess.run(bi, {bx: xv})))
    sess.run(bn.updates, {bx: xv})
    print(r4(sess.run(bn.moving_mean)), r4(sess.run(bn.moving_variance)))
    print(r4(sess.run(bi, {bx: xv})))
    # set_weights / get_weights, the learning phase fed
    ws = model.layers[0].get_weights()
    print([w.shape for w in ws])
    model.layers[0].set_weights([np.ones((3, 3, 1, 4), np.float32) * 0.1, np.zeros(4, np.float32)])
    model.layers[5].set_weights([np.ones((36, 10), np.float32) * 0.01, np.arange(10.0).astype(np.float32)])
    im8 = np.arange(64.0).reshape(1, 8, 8, 1) / 64.0
    im16 = np.arange(128.0).reshape(2, 8, 8, 1) / 64.0
    print(r4(sess.run(y, {x: im8})))
    print(r4(sess.run(y, {x: im16, K.backend.learning_phase(): True})[:, :3]))
    print(sum([float(np.abs(v).sum()) for v in sess.run(model.layers[2].weights)]))
    sess.run(model.updates[2:], {x: im16, K.backend.learning_phase(): True})
    print(r4(sess.run(model.layers[2].moving_mean)))
    print(sess.run(tf.reduce_sum(reg.losses[0])) > 0.0)

# tf.layers.batch_normalization (in a graph of its own): reference variables, updates in UPDATE_OPS
with tf.Graph().as_default():
    bx = tf.placeholder(tf.float32, [None, 3], name="bx")
    lt = tf.layers.batch_normalization(bx, training=True, momentum=0.5)
    lf = tf.layers.batch_normalization(bx)
    ls = tf.layers.batch_normalization(bx, training=tf.constant(True), name="given")
    print(lt.name, lf.name, ls.name, [u.name for u in tf.get_collection(tf.GraphKeys.UPDATE_OPS)])
    print(names(tf.global_variables()), names(tf.trainable_variables()))
    print(ops_named("batch_normalization", ("VariableV2", "AssignSub", "Rsqrt")))
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        step = tf.identity(tf.reduce_sum(lt), name="step")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        print(r4(sess.run(lt, {bx: xv})))
        for i in range(2):
            sess.run(step, {bx: xv})
        print(r4(sess.run(tf.global_variables()[2])), r4(sess.run(tf.global_variables()[3])))
        print(r4(sess.run(lf, {bx: xv})))

# Keras layers and tf.layers in one graph: variable op names made unique as TF1 does
with tf.Graph().as_default():
    bx = tf.placeholder(tf.float32, [None, 3], name="bx")
    L.BatchNormalization()(bx)
    L.BatchNormalization()(bx)
    lt = tf.layers.batch_normalization(bx, training=True)
    lf = tf.layers.batch_normalization(bx)
    print(lt.name, lf.name, names(tf.global_variables())[8:])
    L.Dense(2)(bx)
    e = tf.layers.dense(bx, 2)
    print(e.name, names(tf.global_variables())[-2:])


# subclassed layers and models: names from the class name, layers tracked from attributes
class Scale(tf.keras.layers.Layer):
    def __init__(self, **kwargs):
        super(Scale, self).__init__(**kwargs)

    def build(self, input_shape):
        self.w = self.add_weight("w", shape=[int(input_shape[-1])], initializer="ones")
        super(Scale, self).build(input_shape)

    def call(self, x):
        return x * self.w


class MyModel(tf.keras.Model):
    def __init__(self):
        super(MyModel, self).__init__()
        self.d1 = L.Dense(4, activation="relu", kernel_initializer="ones")
        self.s = Scale()
        self.d2 = L.Dense(1, kernel_initializer="ones")

    def call(self, x):
        return self.d2(self.s(self.d1(x)))


with tf.Graph().as_default():
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    m = MyModel()
    y = m(x)
    print(m.name, y.name, names(m.trainable_variables), [l.name for l in m.layers])
    s = Scale(name="sc")
    z = s(x)
    print(z.name, names(s.weights), L.MaxPooling2D().name, L.AveragePooling2D().name, L.Conv2D(1, 1).name)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        print(sess.run(y, {x: [[1.0, 2.0]]}), sess.run(z, {x: [[1.0, 2.0]]}))

# get_updates_for: the updates computed from given inputs; tf.keras.losses
with tf.Graph().as_default():
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    model = K.Sequential([L.Dense(3, input_shape=(4,)), L.BatchNormalization()])
    y = model(x, training=True)
    print(upd(model.get_updates_for(x)), len(model.get_updates_for(model.input)), model.get_updates_for(None))
    labels = tf.constant([0, 2])
    logits = tf.constant([[2.0, 1.0, 0.1], [0.5, 0.5, 3.0]])
    probs = tf.nn.softmax(logits)
    onehot = tf.one_hot(labels, 3)
    ls = [K.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True),
          K.losses.sparse_categorical_crossentropy(labels, probs),
          K.losses.categorical_crossentropy(onehot, probs),
          K.losses.categorical_crossentropy(onehot, logits, from_logits=True),
          K.losses.mean_squared_error(onehot, probs),
          K.losses.SparseCategoricalCrossentropy(from_logits=True)(labels, logits),
          K.losses.MeanSquaredError()(onehot, probs)]
    with tf.Session() as sess:
        for v in sess.run(ls):
            print(r4(v))

# the Keras session: get_weights / set_weights / get_value outside a session block
with tf.Graph().as_default():
    d = L.Dense(2, kernel_initializer="ones", bias_initializer="zeros")
    x = tf.placeholder(tf.float32, [None, 3])
    y = d(x)
    print([w.tolist() for w in d.get_weights()])
    d.set_weights([np.zeros((3, 2), np.float32), np.ones(2, np.float32)])
    s = K.backend.get_session()
    print(s.run(y, {x: [[1.0, 2.0, 3.0]]}), K.backend.get_value(d.bias))
    K.backend.set_value(d.bias, [5.0, 6.0])
    print(K.backend.batch_get_value([d.bias]), s is K.backend.get_session())
    v = tf.Variable(3.0, name="plain")
    try:
        print(s.run(v))
    except tf.errors.FailedPreconditionError as e:
        print("FailedPreconditionError")

# Conv2D with strides and same padding, BatchNormalization over a 4-D input (TF: fused)
with tf.Graph().as_default():
    img = tf.placeholder(tf.float32, [None, 5, 5, 2], name="img")
    c = L.Conv2D(3, (3, 2), strides=2, padding="same", kernel_initializer=K.initializers.Constant(0.1),
                 bias_initializer=K.initializers.Constant(0.5))
    co = c(img)
    bn4 = L.BatchNormalization(momentum=0.5, epsilon=0.01)
    bo = bn4(co, training=True)
    print(co.name, co.shape, c.kernel.shape, bo.shape, names(bn4.weights))   # TF: bo is FusedBatchNormV3
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        im = (np.arange(100.0).reshape(2, 5, 5, 2) % 7.0) / 7.0
        print(r4(sess.run(co, {img: im})[:, 0]))
        print(r4(sess.run(bo, {img: im})[:, 1]))
        sess.run(bn4.updates, {img: im})
        print(r4(sess.run(bn4.moving_mean)), r4(sess.run(bn4.moving_variance)))

# seeded initializers draw TF's numbers (Philox, TF's per-output sample reservation)
with tf.Graph().as_default():
    tf.set_random_seed(1)
    x = tf.placeholder(tf.float32, [None, 3])
    inits = [K.initializers.glorot_uniform(seed=7), K.initializers.RandomNormal(seed=3),
             K.initializers.RandomUniform(seed=5), K.initializers.TruncatedNormal(seed=9),
             K.initializers.he_normal(seed=11), K.initializers.lecun_uniform(seed=2)]
    ds = [L.Dense(3, kernel_initializer=i) for i in inits]
    for d in ds:
        d(x)
    t = tf.truncated_normal([3, 7], seed=5)
    t64 = tf.truncated_normal([5], dtype=tf.float64, seed=6, stddev=2.0)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for d in ds:
            print(r4(sess.run(d.kernel)))
        print(r4(sess.run(t)), r4(sess.run(t64)))
