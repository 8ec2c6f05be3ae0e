# uint8 through variables, queues, checkpoints, GraphDefs and numpy's integer operations.
import os
import shutil
import tempfile
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()

d = tempfile.mkdtemp()
v = tf.Variable(np.array([1, 2, 255], dtype=np.uint8), name="v")
q = tf.FIFOQueue(3, [tf.uint8], shapes=[[2]])
enq = q.enqueue([tf.constant([9, 8], tf.uint8)])
deq = q.dequeue()
saver = tf.train.Saver()
with tf.Session() as s:
    s.run(tf.global_variables_initializer())
    print(repr(s.run(v)))
    s.run(enq)
    print(repr(s.run(deq)))
    path = saver.save(s, os.path.join(d, "model"))
    s.run(v.assign(np.array([0, 0, 0], np.uint8)))
    saver.restore(s, path)
    print(repr(s.run(v)))
print(tf.train.list_variables(path))
gd = tf.get_default_graph().as_graph_def()
tf.train.write_graph(gd, d, "g.pb", as_text=False)
g2 = tf.Graph()
with g2.as_default():
    gd2 = tf.GraphDef()
    with open(os.path.join(d, "g.pb"), "rb") as f:
        gd2.ParseFromString(f.read())
    tf.import_graph_def(gd2, name="")
    with tf.Session() as s:
        print(repr(s.run("v/initial_value:0")))
shutil.rmtree(d)

# a uint8 checkpoint TensorFlow wrote (scripts/tf_oracle/make_fixtures.py)
with tf.Graph().as_default():
    v = tf.Variable(np.zeros([1, 3], np.uint8), name="v")
    with tf.Session() as s:
        tf.train.Saver().restore(s, "../fixtures/tf/uint8/model")
        print(repr(s.run(v)))

a = np.arange(6, dtype=np.uint8).reshape(2, 3)
print(a + a, a.sum(), a.max(), a[0] > 1, a[1] == 4, a.sum(), a[1].sum(), np.uint8(7), a.tolist())
print(np.array([1, 2], dtype=np.uint8) * np.array([200, 200], dtype=np.uint8))
print(repr(np.frombuffer(b"\x00\x00\x80\x3f\x00\x00\x00\x40", dtype=np.float32)), repr(np.frombuffer(b"abcd", np.uint8, 2, 1)))

# over the wire: a session on a local server feeds and fetches uint8
server = tf.train.Server.create_local_server()
with tf.Graph().as_default():
    p = tf.placeholder(tf.uint8, [None])
    with tf.Session(server.target) as s:
        print(s.run([tf.gather(p, [2, 1, 0]), tf.cast(p, tf.int32)], {p: np.array([1, 200, 255], np.uint8)}))
