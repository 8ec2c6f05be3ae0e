# tf.variable_axis_size_partitioner: parts of at most max_shard_bytes along an axis (the
# partition lists TF computes, and a partitioned variable built with one).
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()

cases = [([10, 4], tf.float32, 64, 0, None), ([10, 4], tf.float32, 64, 1, None), ([10, 4], tf.float64, 1000, 0, None),
         ([7, 3], tf.int32, 1, 0, None), ([100, 2], tf.float32, 80, 0, 4), ([6], tf.string, 40, 0, None),
         ([5, 5, 2], tf.float32, 30, 2, None), ([9, 3], tf.int64, 50, 0, 2)]
for k, (shape, dt, mx, axis, ms) in enumerate(cases):
    p = tf.variable_axis_size_partitioner(mx, axis=axis, max_shards=ms)
    v = tf.get_variable("c%d" % k, shape=shape, dtype=dt, initializer=tf.zeros_initializer(), partitioner=p)
    print(shape, dt.name, mx, axis, ms, [x.get_shape().as_list() for x in v])
v = tf.get_variable("v", shape=[10, 3], initializer=tf.ones_initializer(),
                    partitioner=tf.variable_axis_size_partitioner(40))
print([x.get_shape().as_list() for x in v], [x.op.name for x in v])
for bad in [(0,), (10, 0, 0), (10, 0, 16, 0)]:
    try:
        tf.variable_axis_size_partitioner(*bad)
    except ValueError as e:
        print("ValueError:", e)
