# tf.keras layers with a tensor training flag (the learning phase) build TF's tf.cond
# (Switch / Merge), expected output from real TF through scripts/tf_oracle: a rank-2
# BatchNormalization's updates are conds whose true branch assigns (the update ops are
# their Merges: run with the phase False they leave the moving averages), and Dropout's.
import numpy as np
import tensorflow as tf

K = tf.keras


def r4(a):
    return [round(float(v), 4) + 0.0 for v in np.asarray(a).reshape(-1)]


x = tf.placeholder(tf.float32, [None, 3], name="x")
bn = K.layers.BatchNormalization(momentum=0.5)
drop = K.layers.Dropout(0.5)
y = drop(bn(x))
phase = K.backend.learning_phase()
print([u.name for u in bn.updates], [u.type for u in bn.updates])
types = [op.type for op in tf.get_default_graph().get_operations() if op.name.startswith("batch_normalization/cond_2/")]
print("Merge" in types, "Switch" in types, any(t.startswith("AssignSub") for t in types))
print(sorted(set(op.type for op in tf.get_default_graph().get_operations()
                 if op.name.startswith("dropout/cond/") and op.type in ("Switch", "Merge"))))
xv = np.array([[1.0, 2.0, -1.0], [3.0, 0.0, 1.0], [2.0, 4.0, 0.0], [0.0, 2.0, 2.0]], dtype=np.float32)
sess = K.backend.get_session()
sess.run(tf.global_variables_initializer())
print("infer", r4(sess.run(y, {x: xv})))
sess.run(bn.updates, {x: xv, phase: False})
print("after phase False", r4(sess.run(bn.moving_mean)), r4(sess.run(bn.moving_variance)))
sess.run(bn.updates, {x: xv, phase: True})
print("after phase True", r4(sess.run(bn.moving_mean)), r4(sess.run(bn.moving_variance)))
out = sess.run(y, {x: xv, phase: True})
print("train zeros or doubled", all(v == 0.0 or abs(v) > 0 for v in out.reshape(-1)), out.shape)
print("infer", r4(sess.run(y, {x: xv})))
g = tf.gradients(tf.reduce_sum(bn(x, training=phase) * tf.constant([1.0, 2.0, 3.0])), [x] + bn.trainable_weights)
print([r4(v) for v in sess.run(g, {x: xv, phase: True})])
