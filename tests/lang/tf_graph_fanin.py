# A graph whose nodes are each used several times by the next (add_n of the same tensor
# three times, 300 deep): the walks that find the needed nodes pushed a node once per use
# and overran their stacks (heap corruption, in the Gram-Schmidt of the orthogonal
# initializer). Expected output from real TF through scripts/tf_oracle.
import tensorflow as tf

x = tf.placeholder(tf.float32, [2], name="x")
y = x
for i in range(300):
    y = tf.add_n([y, y, y]) * (1.0 / 3.0)
with tf.Session() as sess:
    print([round(float(v), 3) for v in sess.run(y, {x: [1.0, 2.0]})])
    k = tf.orthogonal_initializer(seed=1)([32, 128])
    err = tf.reduce_max(tf.abs(tf.matmul(k, k, transpose_b=True) - tf.eye(32)))
    print(sess.run(err) < 1e-4)
