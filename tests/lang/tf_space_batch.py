# tf.space_to_batch_nd / batch_to_space_nd (1-D and 2-D blocks, paddings and crops), the 4-D
# space_to_batch / batch_to_space, space_to_depth / depth_to_space, required_space_to_batch_paddings:
# shapes (unknown dims too), values, gradients and TF's error messages (expected output from TensorFlow).
import numpy as np
import tensorflow as tf
s = tf.Session()
def run(t, feed=None):
    v = s.run(t, feed)
    print(np.round(v, 3) if isinstance(v, np.ndarray) and v.dtype in (np.float32, np.float64) else v)
xi = tf.constant(np.arange(2 * 4 * 3 * 2, dtype=np.int32).reshape(2, 4, 3, 2))
xf = tf.constant(np.sin(np.arange(2 * 5 * 4 * 3, dtype=np.float32)).reshape(2, 5, 4, 3))
a = tf.space_to_batch_nd(xi, [2, 3], [[0, 0], [0, 0]])
b = tf.space_to_batch_nd(xf, [2, 2], [[1, 0], [2, 2]])
c = tf.space_to_batch_nd(tf.constant(np.arange(10, dtype=np.float64).reshape(2, 5)), [3], [[1, 0]])
d = tf.space_to_batch_nd(xi, tf.constant([2], tf.int64), tf.constant([[1, 1]], tf.int64))
print(a.shape, b.shape, c.shape, d.shape, a.op.type, a.dtype, c.dtype)
for t in (a, c, d[:, :, 1, :]):
    run(t)
run(b[:, :, 1, 0])
ra = tf.batch_to_space_nd(a, [2, 3], [[0, 0], [0, 0]])
rb = tf.batch_to_space_nd(b, [2, 2], [[1, 0], [2, 2]])
rc = tf.batch_to_space_nd(tf.constant(np.arange(24, dtype=np.int32).reshape(6, 2, 2)), [3], [[2, 1]])
print(ra.shape, rb.shape, rc.shape)
run(tf.reduce_all(tf.equal(ra, xi)))
run(tf.reduce_max(tf.abs(rb - xf)))
run(rc)
v1 = tf.space_to_batch(xf, [[1, 0], [0, 0]], block_size=2)
v2 = tf.batch_to_space(v1, [[1, 0], [0, 0]], 2)
v3 = tf.nn.space_to_batch(xi, [[0, 0], [1, 0]], block_size=2)
print(v1.shape, v2.shape, v3.shape, v1.op.type, v2.op.type)
run(v3[:, :, :, 0])
run(tf.reduce_max(tf.abs(v2 - xf)))
p4 = tf.placeholder(tf.float32, [None, 5, None, 2])
print(tf.space_to_batch_nd(p4, [2, 3], [[1, 0], [0, 1]]).shape, tf.batch_to_space_nd(p4, [2, 3], [[1, 0], [0, 1]]).shape)
print(tf.batch_to_space_nd(tf.placeholder(tf.float32, [12, 5, None, 2]), [2, 3], [[1, 0], [0, 1]]).shape)
print(tf.space_to_batch_nd(tf.placeholder(tf.float32, [3, 5, None, 2]), tf.placeholder(tf.int32, [2]),
                           tf.placeholder(tf.int32, [2, 2])).shape)
print(tf.space_to_batch_nd(tf.placeholder(tf.float32, [3, 5, None, 2]), [2, 2], tf.placeholder(tf.int32, [2, 2])).shape)
sb = tf.space_to_batch_nd(p4, [2, 3], [[1, 0], [0, 1]])
print(s.run(sb, {p4: np.ones((1, 5, 5, 2))}).shape)
# gradients: each op's is the other's with the same block and pads/crops
w = tf.constant(np.cos(np.arange(8 * 3 * 4 * 3, dtype=np.float32)).reshape(8, 3, 4, 3))
gb = tf.gradients(tf.reduce_sum(b * w), xf)[0]
print(gb.shape)
run(gb[1, :, :, 0])
gr = tf.gradients(tf.reduce_sum(rb * xf), b)[0]
run(tf.reduce_max(tf.abs(gr - b)))
gv = tf.gradients(tf.reduce_sum(v1 * v1), xf)[0]
run(gv[0, :, :, 2])
# space_to_depth / depth_to_space
z = tf.constant(np.arange(1 * 4 * 6 * 2, dtype=np.int32).reshape(1, 4, 6, 2))
sd = tf.space_to_depth(z, 2)
ds = tf.depth_to_space(sd, 2)
sd3 = tf.nn.space_to_depth(tf.constant(np.arange(2 * 3 * 6 * 1, dtype=np.float32).reshape(2, 3, 6, 1)), 3)
print(sd.shape, ds.shape, sd3.shape, sd.op.type, ds.op.type)
run(sd)
run(tf.reduce_all(tf.equal(ds, z)))
run(sd3)
zd = tf.constant(np.sin(np.arange(2 * 2 * 3 * 8, dtype=np.float32)).reshape(2, 2, 3, 8))
d2 = tf.nn.depth_to_space(zd, 2)
print(d2.shape)
run(d2[1, :, :, 1])
wd = tf.constant(np.cos(np.arange(2 * 4 * 6 * 2, dtype=np.float32)).reshape(2, 4, 6, 2))
gd = tf.gradients(tf.reduce_sum(d2 * wd), zd)[0]
run(gd[0, 1])
gs = tf.gradients(tf.reduce_sum(tf.space_to_depth(wd, 2) * zd), wd)[0]
run(gs[1, :, :, 0])
print(tf.space_to_depth(tf.placeholder(tf.float32, [None, 4, None, 2]), 2).shape,
      tf.depth_to_space(tf.placeholder(tf.float32, [None, 4, None, 8]), 2).shape,
      tf.space_to_depth(tf.placeholder(tf.float32), 2).shape)
print(s.run(tf.space_to_depth(tf.constant([[[["a"], ["b"]], [["c"], ["d"]]]]), 2)))
# required_space_to_batch_paddings
pads, crops = tf.required_space_to_batch_paddings([5, 7], [2, 3], base_paddings=[[1, 0], [0, 2]])
print(pads.shape, crops.shape)
run(pads); run(crops)
ps = tf.placeholder(tf.int32, [2])
pads2, crops2 = tf.required_space_to_batch_paddings(ps, [2, 4])
print(s.run([pads2, crops2], {ps: [5, 6]}))


def _first(msg):   # TF's words: the message's own line, without the node and shape decorations
    for line in msg.split("\n"):
        if line.strip() and not line[0].isspace() and not line.startswith(("Graph execution", "Detected at", "Node:")):
            return line.split(" for '")[0].split("[[")[0].strip()


for f in (lambda: tf.space_to_batch_nd(xf, [0, 2], [[0, 0], [0, 0]]),
          lambda: tf.space_to_batch_nd(xf, [3, 2], [[0, 0], [0, 0]]),
          lambda: tf.space_to_batch_nd(xf, [2, 2], [[-1, 2], [0, 0]]),
          lambda: tf.batch_to_space_nd(xf, [2, 2], [[0, 0], [0, 0]]),
          lambda: tf.batch_to_space_nd(b, [2, 2], [[5, 2], [0, 0]]),
          lambda: tf.space_to_depth(xf, 3),
          lambda: tf.depth_to_space(xf, 2),
          lambda: tf.space_to_depth(tf.zeros([4, 4, 1]), 2),
          lambda: tf.depth_to_space(xf, 1)):
    try:
        f()
    except ValueError as e:
        print("ValueError:", _first(str(e)))
px = tf.placeholder(tf.float32)
pb = tf.placeholder(tf.int32, [2])
pp = tf.placeholder(tf.int32)
for op, xs, bs, pd in ((tf.space_to_batch_nd, [1, 4, 4, 1], [0, 2], [[0, 0], [0, 0]]),
                       (tf.space_to_batch_nd, [1, 4, 4, 1], [3, 2], [[0, 0], [0, 0]]),
                       (tf.space_to_batch_nd, [1, 4, 4, 1], [2, 2], [[-1, 1], [0, 0]]),
                       (tf.space_to_batch_nd, [1, 4, 4, 1], [2, 2], [[0, 0], [0, 0], [0, 0]]),
                       (tf.space_to_batch_nd, [4], [2, 2], [[0, 0], [0, 0]]),
                       (tf.batch_to_space_nd, [1, 4, 4, 1], [2, 2], [[0, 0], [0, 0]]),
                       (tf.batch_to_space_nd, [4, 2, 2, 1], [2, 2], [[3, 2], [0, 0]]),
                       (tf.batch_to_space_nd, [4, 2, 2, 1], [2, 2], [[-1, 0], [0, 0]]),
                       (tf.batch_to_space_nd, [4, 2, 2, 1], [0, 2], [[0, 0], [0, 0]])):
    try:
        s.run(op(px, pb, pp), {px: np.zeros(xs), pb: bs, pp: pd})
    except tf.errors.InvalidArgumentError as e:
        print("InvalidArgumentError:", _first(e.message))
for f, xs in ((lambda t: tf.space_to_depth(t, 3), [1, 4, 4, 1]), (lambda t: tf.depth_to_space(t, 2), [1, 4, 4, 3]),
              (lambda t: tf.space_to_depth(t, 2), [4, 4, 1]), (lambda t: tf.depth_to_space(t, 2), [4, 4, 4])):
    try:
        s.run(f(px), {px: np.zeros(xs)})
    except tf.errors.InvalidArgumentError as e:
        print("InvalidArgumentError:", _first(e.message))
