# One training step and one forward pass of the CNN of aymericdamien's
# tensorflow_dataset_api.py (tf.layers: conv2d 5x5x32 and 3x3x64, VALID, relu, each with a
# 2x2 max pool; dense 1024, dropout 0.75, dense 10; softmax cross entropy, Adam 0.001) on a
# batch of 128 28x28x1 images fed by feed_dict, and the same step with the tf.nn.conv2d
# tutorial CNN (SAME 5x5x32, 5x5x64, fc 1024). Best wall time of a few sess.run after a
# warm-up. Run unchanged by tfsh and by TF 1.x (scripts/bench/cnn.sh).
import sys
import time
import numpy as np
import tensorflow as tf

reps = int(sys.argv[1]) if len(sys.argv) > 1 else 10
only = sys.argv[2] if len(sys.argv) > 2 else ""   # run just the cases whose name has this
batch = 128
rng = np.random.RandomState(0)
images = rng.uniform(0.0, 1.0, (batch, 784)).astype(np.float32)
labels = np.zeros((batch, 10), dtype=np.float32)
for i in range(batch):
    labels[i, i % 10] = 1.0


def timed(name, fetch, feed):
    if only not in name:
        return
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(fetch, feed)
        sess.run(fetch, feed)
        best = 1e9
        for _ in range(reps):
            t0 = time.time()
            sess.run(fetch, feed)
            best = min(best, time.time() - t0)
    print("BEST %s %.6f" % (name, best))


def layers_net(x, training):
    with tf.variable_scope("ConvNet", reuse=not training):
        x = tf.reshape(x, shape=[-1, 28, 28, 1])
        c1 = tf.layers.conv2d(x, 32, 5, activation=tf.nn.relu)
        c1 = tf.layers.max_pooling2d(c1, 2, 2)
        c2 = tf.layers.conv2d(c1, 64, 3, activation=tf.nn.relu)
        c2 = tf.layers.max_pooling2d(c2, 2, 2)
        f = tf.layers.flatten(c2)
        f = tf.layers.dense(f, 1024)
        f = tf.layers.dropout(f, rate=0.75, training=training)
        out = tf.layers.dense(f, 10)
        return out if training else tf.nn.softmax(out)


tf.reset_default_graph()
tf.set_random_seed(1)
x = tf.placeholder(tf.float32, [None, 784])
y = tf.placeholder(tf.float32, [None, 10])
logits = layers_net(x, True)
probs = layers_net(x, False)
loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(logits=logits, labels=y))
train = tf.train.AdamOptimizer(0.001).minimize(loss)
timed("layers_train", train, {x: images, y: labels})
timed("layers_infer", probs, {x: images})


def weight(shape):
    return tf.Variable(tf.truncated_normal(shape, stddev=0.1))


def bias(n):
    return tf.Variable(tf.constant(0.1, shape=[n]))


def conv(x, w):
    return tf.nn.conv2d(x, w, strides=[1, 1, 1, 1], padding="SAME")


def pool(x):
    return tf.nn.max_pool(x, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")


tf.reset_default_graph()
tf.set_random_seed(1)
x = tf.placeholder(tf.float32, [None, 784])
y = tf.placeholder(tf.float32, [None, 10])
keep = tf.placeholder(tf.float32)
h = tf.reshape(x, [-1, 28, 28, 1])
h = pool(tf.nn.relu(conv(h, weight([5, 5, 1, 32])) + bias(32)))
h = pool(tf.nn.relu(conv(h, weight([5, 5, 32, 64])) + bias(64)))
h = tf.nn.relu(tf.matmul(tf.reshape(h, [-1, 7 * 7 * 64]), weight([7 * 7 * 64, 1024])) + bias(1024))
h = tf.nn.dropout(h, keep)
out = tf.matmul(h, weight([1024, 10])) + bias(10)
loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(logits=out, labels=y))
train = tf.train.AdamOptimizer(1e-4).minimize(loss)
timed("nn_train", train, {x: images, y: labels, keep: 0.5})
