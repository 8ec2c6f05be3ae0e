# The candidate samplers (their draws are TF's Philox streams, their expected counts TF's
# float formulas), compute_accidental_hits, nce_loss and sampled_softmax_loss training a
# small embedding, against TensorFlow (nlintz's 08_word2vec.py stopped on tf.nn.nce_loss).
import numpy as np
import tensorflow as tf
labels = tf.constant([[1], [5], [0], [17]], tf.int64)
s1 = tf.nn.log_uniform_candidate_sampler(labels, 1, 8, True, 50, seed=3)
s2 = tf.nn.log_uniform_candidate_sampler(labels, 1, 6, False, 20, seed=4)
s3 = tf.nn.uniform_candidate_sampler(labels, 1, 5, True, 30, seed=5)
s4 = tf.nn.uniform_candidate_sampler(labels, 1, 5, False, 30, seed=6)
hits = tf.nn.compute_accidental_hits(labels, s1[0], num_true=1)
with tf.Session() as sess:
    for _ in range(2):
        for s in (s1, s2, s3, s4):
            a, b, c = sess.run(s)
            print(a.tolist()); print(b.ravel().tolist()); print(c.tolist())
    h = sess.run(hits)
    print([x.tolist() for x in h])
tf.set_random_seed(1)
V, D, B = 40, 8, 6
x = tf.placeholder(tf.int32, [B])
y = tf.placeholder(tf.int32, [B, 1])
emb = tf.Variable(tf.random_uniform([V, D], -1.0, 1.0, seed=11))
w = tf.Variable(tf.truncated_normal([V, D], stddev=0.3, seed=12))
b = tf.Variable(tf.zeros([V]))
e = tf.nn.embedding_lookup(emb, x)
nce = tf.reduce_mean(tf.nn.nce_loss(w, b, y, e, num_sampled=5, num_classes=V, sampled_values=tf.nn.log_uniform_candidate_sampler(tf.cast(y, tf.int64), 1, 5, True, V, seed=8)))
ssm = tf.reduce_mean(tf.nn.sampled_softmax_loss(w, b, y, e, num_sampled=5, num_classes=V, seed=7))
nce_hits = tf.reduce_mean(tf.nn.nce_loss(w, b, y, e, 5, V, remove_accidental_hits=True,
    sampled_values=tf.nn.uniform_candidate_sampler(tf.cast(y, tf.int64), 1, 5, True, V, seed=9)))
train = tf.train.GradientDescentOptimizer(0.5).minimize(nce + ssm + nce_hits)
xs = np.array([1, 2, 3, 4, 5, 6], np.int32)
ys = np.array([[2], [3], [0], [5], [1], [7]], np.int32)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(6):
        l1, l2, l3, _ = sess.run([nce, ssm, nce_hits, train], {x: xs, y: ys})
        print("%d %.5f %.5f %.5f" % (i, l1, l2, l3))
