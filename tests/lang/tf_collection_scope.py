# get_collection(key, scope), trainable_variables(scope) and global_variables(scope) keep
# what re.match(scope, name) matches, as a GAN's two optimizers' var_lists need, against TF.
import numpy as np
import tensorflow as tf

z = tf.constant(np.linspace(-1, 1, 8, dtype=np.float32).reshape(4, 2))
with tf.variable_scope("generator"):
    g = tf.layers.dense(z, 3, kernel_initializer=tf.constant_initializer(0.3), name="g1")
with tf.variable_scope("discriminator"):
    d = tf.layers.dense(g, 1, kernel_initializer=tf.constant_initializer(-0.2), name="d1")
with tf.variable_scope("generator_ema"):
    tf.get_variable("shadow", [1])
tf.add_to_collection("mixed", "not a tensor")
tf.add_to_collection("mixed", d)
gv = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="generator")
dv = tf.trainable_variables("discriminator")
print([v.name for v in gv])
print([v.name for v in dv])
print([v.name for v in tf.global_variables(scope="generator/")])
print([v.name for v in tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, "gen.*ema|disc")])
print([t.name for t in tf.get_collection("mixed", "disc")], len(tf.get_collection("mixed")))
print(tf.get_default_graph().get_collection(tf.GraphKeys.GLOBAL_VARIABLES, "nothing"))
loss = tf.reduce_mean(d)
g_step = tf.train.GradientDescentOptimizer(0.5).minimize(-loss, var_list=gv)
d_step = tf.train.GradientDescentOptimizer(0.5).minimize(loss, var_list=dv)
with tf.Session() as s:
    s.run(tf.global_variables_initializer())
    s.run(d_step)
    print(np.round(s.run(gv[0]), 4).tolist(), np.round(s.run(dv[0]), 4).tolist())
    s.run(g_step)
    print(np.round(s.run(gv[0]), 4).tolist(), np.round(s.run(dv[0]), 4).tolist())
