# tf.feature_column as TF 1.x scripts (wide & deep, census) use it: numeric, bucketized,
# vocabulary (list and file), hash, identity and weighted columns through indicator and
# embedding columns into input_layer, linear_model's weighted sums, the variables' names,
# make_parse_example_spec, a small census-style model trained a few steps, and the messages
# of misuse; against TensorFlow.
import os
import numpy as np
import tensorflow as tf

fc = tf.feature_column
d = os.path.join(os.environ.get("TMPDIR", "/tmp"), "tfsh_fc_%d" % os.getpid())
os.makedirs(d, exist_ok=True)
vocab = os.path.join(d, "vocab.txt")
with open(vocab, "w") as f:
    f.write("red\ngreen\nblue\n")


def err(f):
    try:
        f()
        print("no error")
    except Exception as e:
        print(type(e).__name__ + ":", str(e).splitlines()[0])


def show(t, sess):
    v = sess.run(t)
    print(t.shape, np.round(v.astype(np.float64), 4).tolist())


age = fc.numeric_column("age")
xy = fc.numeric_column("xy", shape=(2,), normalizer_fn=lambda x: x * 2.0)
age_b = fc.bucketized_column(age, [18, 30, 50])
edu = fc.categorical_column_with_vocabulary_list("edu", ["hs", "bs", "ms"], num_oov_buckets=2)
num = fc.categorical_column_with_vocabulary_list("num", [3, 5, 7])
color = fc.categorical_column_with_vocabulary_file("color", vocab, num_oov_buckets=1)
occ = fc.categorical_column_with_hash_bucket("occ", 10)
zipc = fc.categorical_column_with_hash_bucket("zip", 7, dtype=tf.int64)
ident = fc.categorical_column_with_identity("id", 4)
ident_d = fc.categorical_column_with_identity("idd", 4, default_value=0)
for c in [age, xy, age_b, edu, num, color, occ, zipc, ident, ident_d]:
    print(c.name, getattr(c, "num_buckets", None))
print(age)
print(age_b)
print(edu)
print(ident)
print(fc.numeric_column("dv", shape=(2,), default_value=1).default_value)
print(color.vocabulary_size, edu.dtype, num.dtype, num.default_value)

feats = {
    "age": tf.constant([[10.], [20.], [40.], [60.]]),
    "xy": tf.constant([[1., 2.], [3., 4.], [5., 6.], [7., 8.]]),
    "edu": tf.constant([["hs"], ["ms"], ["phd"], [""]]),
    "num": tf.constant([[3], [7], [4], [-1]], dtype=tf.int64),
    "color": tf.constant(["blue", "red", "pink", "green"]),
    "occ": tf.constant([["doctor"], ["lawyer"], ["chef"], ["nurse"]]),
    "zip": tf.constant([[94110], [10001], [60601], [-1]], dtype=tf.int64),
    "id": tf.constant([[0], [3], [1], [2]], dtype=tf.int64),
    "idd": tf.constant([[1], [9], [3], [-1]], dtype=tf.int64),
}
sess = tf.Session()

# each dense column alone, then all together (sorted by name)
dense_cols = [age, xy, age_b, fc.indicator_column(edu), fc.indicator_column(num), fc.indicator_column(color),
              fc.indicator_column(occ), fc.indicator_column(zipc), fc.indicator_column(ident),
              fc.indicator_column(ident_d)]
outs = [fc.input_layer(feats, [c]) for c in dense_cols]
sess.run(tf.tables_initializer())
for c, o in zip(dense_cols, outs):
    print(c.name)
    show(o, sess)

emb_init = tf.constant_initializer(np.arange(15, dtype=np.float32).reshape(5, 3) / 10.0)
cv = {}
allin = fc.input_layer(feats, dense_cols + [fc.embedding_column(edu, 3, initializer=emb_init)], cols_to_vars=cv)
print(sorted((k.name, [v.name for v in vs]) for k, vs in cv.items()))
sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
show(allin, sess)

# embedding combiners over two values per example (dense with "" missing, and a SparseTensor)
tags = fc.categorical_column_with_vocabulary_list("tags", ["a", "b", "c", "d", "e"])
tfeat = {"tags": tf.constant([["a", "b"], ["c", ""], ["", ""], ["e", "e"]])}
sp = tf.SparseTensor([[0, 0], [0, 1], [1, 0], [3, 0], [3, 1]], ["a", "b", "c", "e", "e"], [4, 2])
for comb in ["mean", "sum", "sqrtn"]:
    e = fc.embedding_column(tags, 3, combiner=comb, initializer=emb_init)
    o1 = fc.input_layer(tfeat, [e])
    o2 = fc.input_layer({"tags": sp}, [e])
    sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
    print(comb)
    show(o1, sess)
    show(o2, sess)
e = fc.embedding_column(tags, 3, combiner="sum", initializer=emb_init, max_norm=0.5)
o = fc.input_layer(tfeat, [e])
sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
print("max_norm")
show(o, sess)
o = fc.input_layer(tfeat, [fc.indicator_column(tags)])
sess.run(tf.tables_initializer())
show(o, sess)

# weighted columns
wc = fc.weighted_categorical_column(ident, "w")
wfeat = {"id": tf.constant([[0, 2], [3, 1], [1, 1], [2, 0]], dtype=tf.int64),
         "w": tf.constant([[0.5, 2.0], [1.5, 9.0], [1.0, 3.0], [4.0, 4.0]])}
print(wc.name, wc.num_buckets)
show(fc.input_layer(wfeat, [fc.indicator_column(wc)]), sess)
we = fc.input_layer(wfeat, [fc.embedding_column(wc, 2, initializer=tf.constant_initializer(
    np.arange(8, dtype=np.float32).reshape(4, 2)))])
sess.run(tf.global_variables_initializer())
show(we, sess)

# linear_model: names, then values after assigning weights
g = tf.Graph()
with g.as_default():
    f2 = {k: tf.constant(sess.run(v)) if not isinstance(v, tf.SparseTensor) else v for k, v in feats.items()}
    f2["w"] = tf.constant([[0.5], [2.0], [1.0], [3.0]])
    f2["idd"] = tf.constant([[1], [9], [3], [0]], dtype=tf.int64)
    cols = [age, age_b, edu, occ, ident, fc.weighted_categorical_column(ident_d, "w"), fc.indicator_column(color)]
    cv = {}
    lm = fc.linear_model(f2, cols, units=2, cols_to_vars=cv)
    print(lm.shape)
    print([v.name for v in tf.global_variables()])
    print([v.name for v in tf.trainable_variables()])
    print(sorted((k if isinstance(k, str) else k.name, [v.name for v in vs]) for k, vs in cv.items()))
    s2 = tf.Session()
    s2.run([tf.global_variables_initializer(), tf.tables_initializer()])
    print(np.round(s2.run(lm).astype(np.float64), 4).tolist())
    ops = []
    for v in tf.global_variables():
        n = int(np.prod(v.shape.as_list()))
        ops.append(tf.assign(v, np.arange(n, dtype=np.float32).reshape(v.shape.as_list()) / 10.0 - 0.3))
    s2.run(ops)
    print(np.round(s2.run(lm).astype(np.float64), 4).tolist())

# sparse_combiner over two values per example; a second linear_model gets linear_model_1
with g.as_default():
    f3 = {"edu": tf.constant([["hs", "ms"], ["bs", ""], ["", ""], ["x", "hs"]]),
          "tags": tf.constant([["a", "b"], ["c", ""], ["", ""], ["e", "e"]])}
    for comb in ["mean", "sqrtn"]:
        lm3 = fc.linear_model(f3, [edu, tags], sparse_combiner=comb)
        vs = tf.global_variables()[-3:]
        print([v.name for v in vs])
        s2.run([tf.global_variables_initializer(), tf.tables_initializer()])
        s2.run([tf.assign(v, 2.0 + np.arange(int(np.prod(v.shape.as_list())), dtype=np.float32).reshape(
            v.shape.as_list())) for v in vs])
        print(np.round(s2.run(lm3).astype(np.float64), 4).tolist())

# make_parse_example_spec
spec = fc.make_parse_example_spec([age, age_b, edu, occ, fc.embedding_column(color, 2), wc,
                                   fc.numeric_column("z", shape=(2,), default_value=(1., 2.))])
for k in sorted(spec):
    v = spec[k]
    if type(v).__name__ == "FixedLenFeature":
        print(k, "Fixed", tuple(v.shape), v.dtype, v.default_value)
    else:
        print(k, type(v).__name__, v.dtype)

# a census-style model: numeric, bucketized, vocabulary and hash columns -> dense -> sigmoid
g = tf.Graph()
with g.as_default():
    rng = np.random.RandomState(0)
    n = 64
    ages = rng.randint(17, 80, size=(n, 1)).astype(np.float32)
    hours = rng.randint(10, 60, size=(n, 1)).astype(np.float32)
    edus = np.array([["hs", "bs", "ms", "phd"][i] for i in rng.randint(0, 4, size=n)]).reshape(n, 1)
    jobs = np.array([["tech", "sales", "farm", "admin", "exec"][i] for i in rng.randint(0, 5, size=n)]).reshape(n, 1)
    label = ((ages[:, 0] > 40) & (hours[:, 0] > 35)).astype(np.float32).reshape(n, 1)
    features = {"age": tf.constant(ages), "hours": tf.constant(hours), "edu": tf.constant(edus),
                "job": tf.constant(jobs)}
    a = fc.numeric_column("age", normalizer_fn=lambda x: (x - 45.0) / 15.0)
    cols = [a, fc.numeric_column("hours", normalizer_fn=lambda x: (x - 35.0) / 15.0),
            fc.bucketized_column(fc.numeric_column("age"), [25, 35, 45, 55, 65]),
            fc.indicator_column(fc.categorical_column_with_vocabulary_list("edu", ["hs", "bs", "ms"],
                                                                           num_oov_buckets=1)),
            fc.embedding_column(fc.categorical_column_with_hash_bucket("job", 20), 4,
                                initializer=tf.constant_initializer(0.05))]
    net = fc.input_layer(features, cols)
    print(net.shape)
    h = tf.layers.dense(net, 8, activation=tf.nn.relu, kernel_initializer=tf.constant_initializer(0.1),
                        bias_initializer=tf.constant_initializer(0.01))
    logits = tf.layers.dense(h, 1, kernel_initializer=tf.constant_initializer(-0.2),
                             bias_initializer=tf.constant_initializer(0.1))
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.constant(label), logits=logits))
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    print(sorted(v.name for v in tf.trainable_variables()))
    s3 = tf.Session()
    s3.run([tf.global_variables_initializer(), tf.tables_initializer()])
    for step in range(6):
        _, l = s3.run([train, loss])
        print(step, round(float(l), 4))

# misuse
err(lambda: fc.input_layer({"x": tf.constant([[1.]])}, [age]))
err(lambda: fc.bucketized_column(age, [3, 1]))
err(lambda: fc.bucketized_column(age, 3))
err(lambda: fc.bucketized_column("age", [1]))
err(lambda: fc.numeric_column("a", dtype=tf.string))
err(lambda: fc.numeric_column("a", shape=(0,)))
err(lambda: fc.input_layer({"edu": tf.constant([[1]])}, [fc.indicator_column(edu)]))
err(lambda: fc.input_layer({"edu": tf.constant([["a"]])}, [edu]))
err(lambda: fc.categorical_column_with_vocabulary_list("e", ["a", "a"]))
err(lambda: fc.categorical_column_with_vocabulary_list("e", []))
err(lambda: fc.categorical_column_with_vocabulary_list("e", ["a"], num_oov_buckets=1, default_value=3))
err(lambda: fc.categorical_column_with_vocabulary_file("e", ""))
err(lambda: fc.categorical_column_with_vocabulary_file("e", os.path.join(d, "nope.txt")))
err(lambda: fc.categorical_column_with_hash_bucket("e", 0))
err(lambda: fc.categorical_column_with_hash_bucket("e", 3, dtype=tf.float32))
err(lambda: fc.categorical_column_with_identity("e", 0))
err(lambda: fc.embedding_column(ident, 0))
err(lambda: fc.indicator_column(age))
err(lambda: fc.input_layer({}, []))
err(lambda: fc.input_layer({"age": tf.constant([[1.]])}, [age, age]))
os.remove(vocab)
os.rmdir(d)
