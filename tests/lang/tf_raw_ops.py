# tf.raw_ops and tensorflow.python.ops.gen_*_ops: any op by its signature, as TF's generated
# wrappers take it (positional inputs, then attrs; tf.raw_ops keywords only), one output as
# a Tensor, a list output as a list, several as a namedtuple. Expected output from real TF
# through scripts/tf_oracle; errors by their type only (TF's wording is its own).
import numpy as np
import tensorflow as tf
from tensorflow.python.ops import gen_array_ops, gen_math_ops, gen_nn_ops

x = tf.constant(np.array([1, 5, 2, 4, 3, 3, 0, 8, 7, 6, 9, 1, 2, 2, 4, 0],
                         np.float32).reshape(1, 4, 4, 1))
p = tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
dy = tf.constant(np.array([1, 2, 3, 4], np.float32).reshape(1, 2, 2, 1))
pool_grad = gen_nn_ops.max_pool_grad(x, p, dy, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
relu_grad = gen_nn_ops.relu_grad(tf.constant([1.0, 2.0, 3.0]), features=tf.constant([-1.0, 0.0, 2.0]))
add = tf.raw_ops.AddV2(x=tf.constant([1.5, 2.0]), y=tf.constant([2.0, -1.0]), name="raw_add")
halves = tf.raw_ops.Split(axis=0, value=tf.constant([1.0, 2.0, 3.0, 4.0]), num_split=2)
joined = gen_array_ops.concat_v2([tf.constant([1]), tf.constant([2, 3])], 0)
prod = gen_math_ops.mat_mul(tf.ones([2, 3]), tf.ones([2, 3]), transpose_b=True)
bn = gen_nn_ops.fused_batch_norm_v3(tf.constant(np.arange(12, dtype=np.float32).reshape(1, 2, 2, 3)),
                                    tf.ones([3]), tf.zeros([3]), tf.zeros([0]), tf.zeros([0]))
print(add.op.name, add.op.type in ("AddV2", "Add"), type(halves).__name__, len(halves))
print(type(bn).__name__, bn._fields[:3])
with tf.Session() as sess:
    print(sess.run(pool_grad).reshape(4, 4).tolist())
    print(sess.run(relu_grad).tolist(), sess.run(add).tolist(), [h.tolist() for h in sess.run(halves)])
    print(sess.run(joined).tolist(), sess.run(prod).tolist())
    print([round(float(v), 4) for v in sess.run(bn.batch_mean)])
for bad in (lambda: tf.raw_ops.AddV2(tf.constant(1.0), tf.constant(2.0)),
            lambda: tf.raw_ops.NoSuchOp,
            lambda: gen_nn_ops.relu_grad(tf.constant([1.0])),
            lambda: gen_nn_ops.relu_grad(tf.constant([1.0]), tf.constant([1.0]), bogus=1)):
    try:
        bad()
        print("no error")
    except (TypeError, AttributeError) as e:
        print(type(e).__name__)
