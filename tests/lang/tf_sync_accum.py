# Gradient accumulators of SyncReplicasOptimizer: stale gradients (computed before the
# last aggregated step) are dropped; a take returns the mean of what came in.
import tensorflow as tf

step = tf.placeholder(tf.int64, shape=[])
grad = tf.placeholder(tf.float32, shape=[2])
apply = tf._make_node("_AccumApply", inputs=[step, grad], attrs={"dtype": tf.float32, "shared_name": "acc"})
take = tf._make_node("_AccumTake", inputs=[tf.constant(2)], attrs={"dtype": tf.float32, "shared_name": "acc"}).outputs[0]
with tf.Session() as sess:
    sess.run(apply, {step: 0, grad: [1.0, 2.0]})
    sess.run(apply, {step: 0, grad: [3.0, 6.0]})
    print(sess.run(take))
    sess.run(apply, {step: 0, grad: [100.0, 100.0]})   # stale: the accumulator is at step 1
    sess.run(apply, {step: 1, grad: [2.0, 2.0]})
    sess.run(apply, {step: 1, grad: [4.0, 0.0]})
    print(sess.run(take))
