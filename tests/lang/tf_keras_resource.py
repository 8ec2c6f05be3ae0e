# tf.keras layers make resource variables in TF1 graph mode (as TF's Keras always does):
# VarHandleOp, VarIsInitializedOp, AssignVariableOp, ReadVariableOp; tf.layers.dense keeps
# ref variables; a Keras model trains with a TF1 optimizer through ResourceApply* ops.
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()


def r4(a):
    return [round(float(x), 4) for x in a.ravel()]


with tf.Graph().as_default() as g:
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = tf.layers.dense(x, 2, name="ld")
    z = tf.keras.layers.Dense(2, name="kd")(x)
    print([(op.name, op.type) for op in g.get_operations() if op.name.startswith("kd/") and "Initializer" not in op.name])
    print(sorted(set(op.type for op in g.get_operations() if op.name.startswith("ld/") and "Initializer" not in op.name)))
    kd = [v for v in tf.global_variables() if v.name.startswith("kd/")]
    print([(v.name, v.dtype.name, v.shape.as_list()) for v in kd])

with tf.Graph().as_default() as g:
    tf.set_random_seed(0)
    x = tf.constant([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]])
    t = tf.constant([[1.0], [0.0]])
    dense = tf.keras.layers.Dense(1, kernel_initializer=tf.constant_initializer([[0.1], [0.2], [-0.1]]),
                                  bias_initializer=tf.constant_initializer(0.5))
    loss = tf.reduce_mean(tf.square(dense(x) - t))
    n0 = len(g.get_operations())
    step = tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss)
    print(sorted(set(op.type for op in g.get_operations()[n0:] if "Resource" in op.type)))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(5):
            sess.run(step)
        print(r4(sess.run(dense.kernel)), r4(sess.run(dense.bias)), round(float(sess.run(loss)), 4))
