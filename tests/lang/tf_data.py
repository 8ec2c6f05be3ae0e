# tf.data in TF1 graphs: sources, transformations, one-shot and initializable iterators,
# get_next in a loop until OutOfRangeError.
import os
import shutil
import tempfile
import numpy as np
import tensorflow as tf

def drain(sess, t):
    out = []
    try:
        while True:
            out.append(sess.run(t))
    except tf.errors.OutOfRangeError:
        pass
    return out

x = np.arange(10, dtype=np.float32).reshape(5, 2)
y = np.array([0, 1, 0, 1, 1], dtype=np.int64)
ds = tf.data.Dataset.from_tensor_slices((x, y))
print(ds.output_types, ds.output_shapes)
b = ds.map(lambda a, l: (a * 2.0, l + 1)).batch(2)
print(b.output_types, b.output_shapes)
it = b.make_one_shot_iterator()
nx, ny = it.get_next()
print(nx.dtype, nx.shape, ny.shape)
with tf.Session() as sess:
    for v in drain(sess, [nx, ny]):
        print(v[0].tolist(), v[1].tolist())

d2 = tf.data.Dataset.range(7).batch(3, drop_remainder=True)
print(d2.output_shapes)
with tf.Session() as sess:
    print([v.tolist() for v in drain(sess, tf.data.make_one_shot_iterator(d2).get_next())])

d3 = tf.data.Dataset.range(5).repeat(2).skip(3).take(5)
with tf.Session() as sess:
    print([int(v) for v in drain(sess, d3.make_one_shot_iterator().get_next())])

# shuffle keeps every element; an initializable iterator starts over on each init
d4 = tf.data.Dataset.range(8).shuffle(4, seed=1)
it4 = d4.make_initializable_iterator()
n4 = it4.get_next()
with tf.Session() as sess:
    for _ in range(2):
        sess.run(it4.initializer)
        print(sorted(int(v) for v in drain(sess, n4)))
    try:
        sess.run(tf.data.Dataset.range(1).make_initializable_iterator().get_next())
    except tf.errors.FailedPreconditionError as e:
        print("FailedPreconditionError")

# from_generator, from_tensors, dict elements
def gen():
    for i in range(3):
        yield i, [float(i)] * i
dg = tf.data.Dataset.from_generator(gen, (tf.int32, tf.float32), (tf.TensorShape([]), tf.TensorShape([None])))
print(dg.output_types, dg.output_shapes)
with tf.Session() as sess:
    for a, v in drain(sess, dg.make_one_shot_iterator().get_next()):
        print(a, v.tolist())
dd = tf.data.Dataset.from_tensor_slices({"a": [1, 2], "b": [[1.5], [2.5]]})
e = dd.make_one_shot_iterator().get_next()
print(sorted(e.keys()), e["a"].dtype, e["b"].dtype)
with tf.Session() as sess:
    print(sess.run(e)["b"].tolist(), sess.run(e)["a"])
with tf.Session() as sess:
    print(sess.run(tf.data.Dataset.from_tensors([1, 2, 3]).make_one_shot_iterator().get_next()))

# text lines and TFRecords
d = tempfile.mkdtemp()
p = os.path.join(d, "t.txt")
with open(p, "w") as f:
    f.write("alpha\nbeta\n")
r = os.path.join(d, "r.tfrecord")
with tf.io.TFRecordWriter(r) as w:
    w.write(b"one")
    w.write(b"two")
with tf.Session() as sess:
    print(drain(sess, tf.data.TextLineDataset(p).make_one_shot_iterator().get_next()))
    print(drain(sess, tf.data.TFRecordDataset([r, r]).make_one_shot_iterator().get_next()))
shutil.rmtree(d)

# a training loop fed by get_next until OutOfRangeError
tf.reset_default_graph()
tf.set_random_seed(0)
xs = (np.arange(32).astype(np.float32) / 16.0 - 1.0).reshape(32, 1)
ys = (3 * xs + 1).astype(np.float32)
feat, lab = tf.data.Dataset.from_tensor_slices((xs, ys)).repeat(40).batch(8).make_one_shot_iterator().get_next()
w = tf.Variable(0.0)
bias = tf.Variable(0.0)
loss = tf.reduce_mean(tf.square(feat * w + bias - lab))
train = tf.train.GradientDescentOptimizer(0.2).minimize(loss)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    steps = 0
    try:
        while True:
            sess.run(train)
            steps += 1
    except tf.errors.OutOfRangeError:
        pass
    print(steps, round(float(sess.run(w)), 2), round(float(sess.run(bias)), 2))
