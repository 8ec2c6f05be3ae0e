# Scans, gather_nd / scatter_nd, unique, segment sums, sort / argsort, boolean_mask,
# sequence_mask, tensordot, meshgrid, conv1d, zero_fraction, schedules; values, gradients
# and messages against TensorFlow.
import numpy as np
import tensorflow as tf

s = tf.Session()

def run(t):
    try:
        v = s.run(t)
        print(np.round(v, 5) if isinstance(v, np.ndarray) and v.dtype == np.float32 else v)
    except tf.errors.OpError as e:
        m = getattr(e, "message", str(e))
        ls = [l for l in m.splitlines() if l.strip() and not l.startswith(("Graph", "Detected", "  ", "Node:", "\t"))]
        print(type(e).__name__ + ":", ls[0] if ls else m)

x = tf.constant(np.arange(1, 13, dtype=np.float32).reshape(3, 4) / 4.0)
run(tf.cumsum(x))
run(tf.cumsum(x, axis=1, exclusive=True))
run(tf.cumsum(x, axis=-1, reverse=True))
run(tf.cumsum(x, 0, exclusive=True, reverse=True))
run(tf.cumprod(x, axis=1))
run(tf.cumprod(tf.constant([2, 3, 4]), exclusive=True))
run(tf.math.cumsum(tf.constant([1, 2, 3], tf.int64), reverse=True))
w = tf.constant(((np.arange(12, dtype=np.float32) - 5.5) / 5.5).reshape(3, 4))
run(tf.gradients(tf.reduce_sum(tf.cumsum(x, axis=1) * w), x)[0])
run(tf.gradients(tf.reduce_sum(tf.cumsum(x, axis=0, exclusive=True, reverse=True) * w), x)[0])
run(tf.gradients(tf.reduce_sum(tf.cumprod(x, axis=1) * w), x)[0])
run(tf.cumsum(x, axis=2))

p = tf.constant(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
run(tf.gather_nd(p, [[0, 1], [1, 2]]))
run(tf.gather_nd(p, [[1, 0, 3], [0, 2, 2]]))
run(tf.gather_nd(p, [[[1], [0]]]))
run(tf.gather_nd(tf.constant([["a", "b"], ["c", "d"]]), [[1, 0], [0, 1]]))
run(tf.gather_nd(p, [[2, 0]]))
run(tf.gradients(tf.reduce_sum(tf.gather_nd(p, [[0, 1], [0, 1], [1, 2]]) * tf.range(4.0)), p)[0])
run(tf.scatter_nd([[1], [3], [1]], [10.0, 20.0, 5.0], [5]))
run(tf.scatter_nd([[0, 1], [2, 0]], tf.constant([[1, 2], [3, 4]]), [3, 2, 2]))
run(tf.scatter_nd([[7]], [1.0], [5]))
upd = tf.constant([1.0, 2.0, 3.0])
run(tf.gradients(tf.reduce_sum(tf.scatter_nd([[1], [3], [1]], upd, [5]) * tf.range(5.0)), upd)[0])

y, idx = tf.unique(tf.constant([4, 1, 4, 2, 1, 9]))
run(y); run(idx)
u = tf.unique(tf.constant(["b", "a", "b"]), out_idx=tf.int64)
run(u.y); run(u.idx)
data = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]])
ids = tf.constant([0, 2, 0, 1])
run(tf.unsorted_segment_sum(data, ids, 3))
run(tf.segment_sum(data, tf.constant([0, 0, 1, 2])))
run(tf.segment_mean(data, tf.constant([0, 0, 0, 2])))
run(tf.gradients(tf.reduce_sum(tf.unsorted_segment_sum(data, ids, 3) * tf.constant([[1.0, -1.0], [2.0, 0.5], [3.0, 3.0]])), data)[0])

v = tf.constant([[3.0, 1.0, 2.0, 1.0], [0.5, -2.0, 9.0, 4.0]])
run(tf.sort(v)); run(tf.sort(v, direction="DESCENDING")); run(tf.argsort(v)); run(tf.argsort(v, direction="DESCENDING"))
run(tf.sort(tf.constant([5, -1, 3])))

t = tf.constant(np.arange(12).reshape(3, 4))
run(tf.boolean_mask(t, [True, False, True]))
run(tf.boolean_mask(t, [[True, False, False, True], [False] * 4, [True] * 4]))
run(tf.boolean_mask(t, tf.constant([False, True, True, False]), axis=1))
bm = tf.boolean_mask(x, tf.greater(x, 1.0))
print(bm.shape)
run(bm)
run(tf.gradients(tf.reduce_sum(tf.boolean_mask(x, [True, False, True]) * 2.0), x)[0])
try:
    tf.boolean_mask(t, [True, False])
except ValueError as e:
    print("ValueError:", e)
run(tf.sequence_mask([1, 3, 2], 5))
run(tf.sequence_mask([[1, 0], [2, 3]]))
run(tf.sequence_mask(tf.constant([2, 0]), 3, dtype=tf.float32))

a = tf.constant(np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 10.0)
b = tf.constant(np.arange(20, dtype=np.float32).reshape(4, 5) / 10.0)
td = tf.tensordot(a, b, 1)
print(td.shape)
run(td[1])
run(tf.tensordot(a, tf.constant(np.ones((3, 2), np.float32)), [[1], [0]])[0])
run(tf.tensordot(a, a, [[0, 1, 2], [0, 1, 2]]))
run(tf.linalg.matrix_transpose(a)[0])
run(tf.broadcast_to(tf.constant([1, 2, 3]), [2, 3]))
gx, gy = tf.meshgrid(tf.constant([1, 2, 3]), tf.constant([10, 20]))
run(gx); run(gy)
gi, gj = tf.meshgrid(tf.constant([1, 2, 3]), tf.constant([10, 20]), indexing="ij")
run(gi); run(gj)
sig = tf.constant(np.sin(np.arange(2 * 7 * 3, dtype=np.float32)).reshape(2, 7, 3))
k = tf.constant(np.cos(np.arange(3 * 3 * 2, dtype=np.float32)).reshape(3, 3, 2))
c1 = tf.nn.conv1d(sig, k, 1, "SAME")
print(c1.shape)
run(c1[1])
run(tf.nn.conv1d(sig, k, 2, "VALID")[0])
run(tf.gradients(tf.reduce_sum(tf.nn.conv1d(sig, k, 1, "VALID") ** 2), k)[0][0])
run(tf.nn.zero_fraction(tf.constant([[0.0, 1.0], [0.0, 0.0]])))
run(tf.nn.zero_fraction(tf.constant([0, 3, 0])))
gs = tf.constant(30)
run([tf.train.cosine_decay(0.1, gs, 100), tf.train.cosine_decay(0.1, gs, 20, alpha=0.1),
     tf.train.natural_exp_decay(0.1, gs, 40, 0.5), tf.train.natural_exp_decay(0.1, gs, 40, 0.5, staircase=True)])
