# Gradients built under tf.control_dependencies run after the control inputs, as in TF (the
# DOWNPOUR pattern: a window of local steps, each computing gradients after the last
# applied). Expected output from real TF through scripts/tf_oracle/run.sh --write.
import tensorflow as tf
a = tf.Variable(tf.constant(0., shape=[2]), collections=[tf.GraphKeys.LOCAL_VARIABLES])
ls = tf.Variable(0, dtype=tf.int32, trainable=False, name='local_step', collections=['local_non_trainable'])
loss = tf.reduce_mean(tf.square(a - 100.))
opt = tf.train.GradientDescentOptimizer(0.1)
grads, varss = zip(*opt.compute_gradients(loss, var_list=tf.local_variables()))
o1 = opt.apply_gradients(zip(grads, varss), global_step=ls)
with tf.control_dependencies([o1]):
    grads2, _ = zip(*opt.compute_gradients(loss, var_list=tf.local_variables()))
o2 = opt.apply_gradients(zip(grads2, varss), global_step=ls)
init = tf.variables_initializer(tf.local_variables() + tf.get_collection('local_non_trainable'))
with tf.Session() as s:
    s.run(init)
    for i in range(3):
        print(s.run([o2, ls])[1], s.run(ls))
x = tf.Variable(3.0)
bump = tf.assign_add(x, 1.0)
with tf.control_dependencies([bump]):
    g = tf.gradients(x * x, [x])[0]
with tf.Session() as s:
    s.run(x.initializer)
    print(s.run(g), s.run(x))
