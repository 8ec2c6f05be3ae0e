# SyncReplicasOptimizer with the usual int32 global step (tf.Variable(0, trainable=False)),
# as TF's sync replica example makes it: the graph builds (tfsh's tokens are int64; the
# step is cast). Output from real TF (scripts/tf_oracle/run.sh --write).
import tensorflow as tf

global_step = tf.Variable(0, name="global_step", trainable=False)
x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
y = tf.constant([[1.0], [2.0]])
w = tf.Variable(tf.zeros([2, 1]), name="w")
loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.01),
                                     replicas_to_aggregate=2, total_num_replicas=2)
train_op = opt.minimize(loss, global_step=global_step)
hook = opt.make_session_run_hook(is_chief=True)
init_tokens = opt.get_init_tokens_op()
print(global_step.dtype, loss.dtype, train_op is not None, init_tokens is not None)
print(opt.get_chief_queue_runner() is not None)
