# tf.sparse_placeholder fed a SparseTensorValue or a tuple (CTC's sparse labels, as speech
# scripts feed them), SparseTensor's static shape from a constant dense_shape, tf.get_static_value,
# tf.sparse_reorder of entries out of order, tf.nn.top_k's TopKV2 namedtuple (expected output
# from real TF through scripts/tf_oracle).
import numpy as np
import tensorflow as tf
a = tf.SparseTensor(indices=[[0, 0], [1, 2]], values=[1.0, 2.0], dense_shape=[3, 4])
print(a.get_shape(), a.shape)
b = tf.sparse_placeholder(tf.float32, shape=[None, 5], name="sp")
print(b.get_shape(), b.indices.name, b.values.name, b.dense_shape.name)
c = tf.sparse_reorder(a)
print(c.get_shape(), tf.sparse_tensor_to_dense(a).get_shape())
e = tf.SparseTensor(indices=tf.constant([[0, 1]], tf.int64), values=tf.constant([3.0]),
                    dense_shape=tf.constant([2, 2], tf.int64))
print(e.get_shape(), tf.sparse_tensor_to_dense(e).get_shape())
f = tf.sparse.placeholder(tf.int32)
g = tf.sparse_placeholder(tf.float32, shape=[2, 3])
print(f.get_shape(), g.get_shape())
x = tf.placeholder(tf.float32, [None, 4])
print(tf.get_static_value(tf.shape(x)), tf.get_static_value(tf.constant([[1, 2]])),
      tf.get_static_value(tf.rank(x)), tf.get_static_value(tf.shape(tf.zeros([2, 3]))))
d = tf.sparse_tensor_to_dense(b)
dg = tf.sparse_tensor_to_dense(g)
with tf.Session() as s:
    v = tf.SparseTensorValue([[0, 1], [2, 4]], np.array([5.0, 6.0], np.float32), [3, 5])
    print(s.run(d, {b: v}))
    print(s.run(d, {b: ([[1, 0]], [7.0], [2, 5])}))
    print(s.run(dg, {g: ([[1, 2]], [9.0], [2, 3])}))
    print(s.run(b, {b: v}))
# CTC with sparse labels, as speech scripts feed them
logits = tf.placeholder(tf.float32, [6, 2, 4])
labels = tf.sparse_placeholder(tf.int32)
seq = tf.placeholder(tf.int32, [2])
loss = tf.nn.ctc_loss(labels, logits, seq)
rng = np.random.RandomState(1)
with tf.Session() as s:
    lv = s.run(loss, {logits: rng.randn(6, 2, 4).astype(np.float32),
                      labels: tf.SparseTensorValue([[0, 0], [0, 1], [1, 0]], [1, 2, 1], [2, 2]),
                      seq: [6, 5]})
    print([round(float(t), 4) for t in lv])
u = tf.SparseTensor(indices=[[2, 1], [0, 3], [1, 0], [0, 1]], values=[1.0, 2.0, 3.0, 4.0],
                    dense_shape=[3, 4])
r = tf.sparse_reorder(u)
with tf.Session() as s:
    rv = s.run(r)
    print(rv.indices.tolist(), rv.values.tolist(), r.get_shape())
    t = tf.nn.top_k(tf.constant([[1.0, 5.0, 3.0], [2.0, 2.0, 0.5]]), 2)
    print(type(t).__name__, s.run(t.indices).tolist(), s.run(t.values).tolist(), s.run(t[1]).tolist())
