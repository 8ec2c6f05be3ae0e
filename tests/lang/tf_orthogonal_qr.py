# tf.qr (the Qr op: Householder as TF's CPU kernel, R's diagonal signs included) and
# tf.diag_part, and the orthogonal initializer built as TF builds it (Qr, DiagPart, Sign):
# with a seed, TF's numbers (expected output from real TF through scripts/tf_oracle).
import numpy as np
import tensorflow as tf


def r4(a):
    return [round(float(v), 4) + 0.0 for v in np.asarray(a).reshape(-1)]


tall = np.array([[2.0, -1.0, 0.5], [1.0, 3.0, -2.0], [0.0, 1.0, 1.0], [-1.0, 2.0, 4.0]], dtype=np.float32)
wide = tall.T.copy()
p = tf.placeholder(tf.float32, None, name="p")
sess = tf.Session()
for m, full in ((tall, False), (tall, True), (wide, False), (wide, True)):
    q, r = tf.qr(p, full_matrices=full)
    qv, rv, qr = sess.run([q, r, tf.matmul(q, r)], {p: m})
    print(q.op.type, qv.shape, rv.shape, r4(qv), r4(rv))
    print("q r == a", np.abs(qr - m).max() < 1e-5)
batch = np.array([tall, tall * -1.0 + 0.5], dtype=np.float64)
qb, rb = tf.qr(tf.constant(batch))
print(qb.dtype, qb.shape, rb.shape, r4(sess.run(qb)[1]), r4(sess.run(rb)[1]))
zero_col = np.array([[1.0, 2.0], [0.0, 3.0], [0.0, 4.0]], dtype=np.float32)
print(r4(sess.run(tf.qr(p)[1], {p: zero_col})))   # no reflection where the column is zero below
print(r4(sess.run(tf.diag_part(p), {p: tall[:3]})), sess.run(tf.diag_part(tf.constant([[1, 2], [3, 4]]))))
print(sess.run(tf.diag_part(tf.reshape(tf.range(36.0), [2, 3, 2, 3]))))

g = tf.Graph()
with g.as_default():
    init = tf.orthogonal_initializer(seed=5)
    w = init([4, 3])
    print([op.type.replace("AddV2", "Add") for op in g.get_operations()])
    vals = tf.Session().run([w, tf.keras.initializers.Orthogonal(seed=7, gain=2.0)([2, 5]),
                             tf.orthogonal_initializer(seed=3)([2, 3, 4])])
    for v in vals:
        print(v.shape, r4(v))
    qtq = tf.Session().run(tf.matmul(w, w, transpose_a=True))
    print("orthonormal columns", np.abs(qtq - np.array([[1.0, 0, 0], [0, 1, 0], [0, 0, 1]])).max() < 1e-5)
