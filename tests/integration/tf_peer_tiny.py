# A small graph run on a TensorFlow master through TF's gRPC (TFSH_PEER=tf): CreateSession,
# RunStep with feeds, fetches and a target, ExtendSession (nodes added after the first
# run), an error from TF's kernel, CloseSession.   tf_peer_tiny.py TARGET
import sys

import numpy as np
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 3], name="x")
w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2), name="w")
y = tf.matmul(x, w, name="y")
with tf.Session(sys.argv[1]) as sess:
    sess.run(w.initializer)
    print(sess.run(y, {x: [[1, 2, 3], [4, 5, 6]]}))
    bump = tf.assign_add(w, tf.ones([3, 2]), name="bump")
    total = tf.reduce_sum(w, name="total")
    sess.run(bump)
    print(sess.run([total, y], {x: [[1, 0, 0]]}))
    names = tf.constant(["a", "bc"], name="names")
    print(sess.run(names))
    any_shape = tf.placeholder(tf.float32, name="any_shape")
    try:   # known only when it runs: TF's kernel says no
        sess.run(tf.reshape(any_shape, [5], name="bad"), {any_shape: [1, 2, 3]})
    except tf.errors.InvalidArgumentError as e:
        print("InvalidArgumentError:", [l for l in e.message.splitlines() if "reshape" in l][0].strip())
