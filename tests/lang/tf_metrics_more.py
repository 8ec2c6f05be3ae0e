# tf.metrics counters over two batches: mean squared / absolute / root mean squared error,
# true/false positives/negatives, precision and recall (weighted too); values, update ops
# and the local variables they make, against TensorFlow.
import tensorflow as tf

labels = tf.placeholder(tf.float32, [None])
preds = tf.placeholder(tf.float32, [None])
w = tf.placeholder(tf.float32, [None])
ms = [tf.metrics.mean_squared_error(labels, preds), tf.metrics.mean_absolute_error(labels, preds, weights=w),
      tf.metrics.root_mean_squared_error(labels, preds)]
bl, bp = tf.placeholder(tf.bool, [None]), tf.placeholder(tf.bool, [None])
cs = [tf.metrics.true_positives(bl, bp), tf.metrics.false_positives(bl, bp), tf.metrics.false_negatives(bl, bp),
      tf.metrics.true_negatives(bl, bp), tf.metrics.precision(bl, bp), tf.metrics.recall(bl, bp),
      tf.metrics.precision(bl, bp, weights=w, name="wprec")]
print(sorted(v.op.name for v in tf.local_variables()))
with tf.Session() as s:
    s.run(tf.local_variables_initializer())
    print(s.run([m[0] for m in ms + cs]))
    batches = [([1.0, 0.0, 2.0], [1.5, 0.5, 1.0], [1.0, 2.0, 0.5], [True, False, True], [True, True, False]),
               ([3.0, 1.0], [2.0, 1.0], [1.0, 1.0], [False, True], [False, True])]
    for l, p, ww, b1, b2 in batches:
        ups = s.run([m[1] for m in ms + cs], {labels: l, preds: p, w: ww, bl: b1, bp: b2})
        print([round(float(u), 5) for u in ups])
    print([round(float(v), 5) for v in s.run([m[0] for m in ms + cs])])
