# mnist_replica's model (TF1's tools/dist_test/python/mnist_replica.py: 784-100-10, Adam
# 0.01, batch 100, variables on the ps through replica_device_setter) trained on a running
# cluster given by its master's target, with fixed op seeds (TF 2 and TF 1 derive an op seed from the
# graph seed differently) and the first STEPS batches of
# Fashion-MNIST in file order, printing the loss of every step. The same script runs in
# tfsh (TFSH_PEER=tf: a TensorFlow cluster) and in TensorFlow (through
# scripts/tf_oracle/shim.py), so the two loss curves can be compared.
#   tf_peer_mlp.py TARGET PS_HOST WORKER_HOST,... STEPS DATA_DIR
import gzip
import os
import sys

import numpy as np
import tensorflow as tf

target, ps, workers, steps, data = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]


def idx(name, offset):
    with gzip.open(os.path.join(data, name)) as f:
        return np.frombuffer(f.read(), np.uint8, offset=offset)


images = idx("train-images-idx3-ubyte.gz", 16)[: steps * 100 * 784].reshape(-1, 784).astype(np.float32) / 255.0
labels = np.eye(10, dtype=np.float32)[idx("train-labels-idx1-ubyte.gz", 8)[: steps * 100]]

tf.set_random_seed(1)
cluster = tf.train.ClusterSpec({"ps": [ps], "worker": workers.split(",")})
with tf.device(tf.train.replica_device_setter(worker_device="/job:worker/task:0", ps_device="/job:ps/cpu:0",
                                              cluster=cluster)):
    global_step = tf.Variable(0, name="global_step", trainable=False)
    hid_w = tf.Variable(tf.truncated_normal([784, 100], stddev=1.0 / 28, seed=11), name="hid_w")
    hid_b = tf.Variable(tf.zeros([100]), name="hid_b")
    sm_w = tf.Variable(tf.truncated_normal([100, 10], stddev=0.1, seed=12), name="sm_w")
    sm_b = tf.Variable(tf.zeros([10]), name="sm_b")
    x = tf.placeholder(tf.float32, [None, 784])
    y_ = tf.placeholder(tf.float32, [None, 10])
    hid = tf.nn.relu(tf.nn.xw_plus_b(x, hid_w, hid_b))
    y = tf.nn.softmax(tf.nn.xw_plus_b(hid, sm_w, sm_b))
    cross_entropy = -tf.reduce_sum(y_ * tf.log(tf.clip_by_value(y, 1e-10, 1.0)))
    train_step = tf.train.AdamOptimizer(0.01).minimize(cross_entropy, global_step=global_step)

with tf.Session(target) as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(steps):
        b = slice(i * 100, (i + 1) * 100)
        _, loss, step = sess.run([train_step, cross_entropy, global_step], {x: images[b], y_: labels[b]})
        print("step %d loss %.6f" % (step, loss))
