# The shell's views of a session on a TensorFlow master (TFSH_PEER=tf), from what TF's
# RunStep returns in RunMetadata: %placement, %partitions and %dot (its partition graphs),
# a traced step's run_metadata and %trace (its step stats).
#   tf_peer_views.py DEVICE_A DEVICE_B TARGET   (the variable on A, the matmul on B;
#   %dot and %trace write graph.dot and trace.json in the current directory)
import sys

import tensorflow as tf

dev_a, dev_b, target = sys.argv[1:4]
with tf.device(dev_a):
    w = tf.Variable([[1.0, 2.0], [3.0, 4.0]], name="w")
with tf.device(dev_b):
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    y = tf.matmul(x, w, name="y")
    loss = tf.reduce_sum(y, name="loss")
sess = tf.Session(target)
with sess.as_default():
    try:   # TF places a graph only when it runs it
        tf._views_magic("placement")
    except tf.errors.FailedPreconditionError as e:
        print("FailedPreconditionError:", e.message)
    sess.run(w.initializer)
    print("loss", sess.run(loss, {x: [[1.0, 1.0]]}))
    print("loss", sess.run(loss, {x: [[2.0, 0.0]]}))   # the same step: nothing more asked
    tf._views_magic("placement", "loss")
    tf._views_magic("partitions", "loss")
    tf._views_magic("placement", "w/Assign")
    tf._views_magic("dot", "graph.dot loss")
    opts = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE, output_partition_graphs=True)
    md = tf.RunMetadata()
    print("loss", sess.run(loss, {x: [[1.0, 1.0]]}, options=opts, run_metadata=md))
    print("step_stats", sorted(set(d.device for d in md.step_stats.dev_stats)))
    print("traced", sorted(n.node_name for d in md.step_stats.dev_stats for n in d.node_stats
                           if n.node_name in ("w", "y", "loss")))
    print("partition_graphs", len(md.partition_graphs),
          sorted(set(n.device for g in md.partition_graphs for n in g.node)),
          sorted(n.name for g in md.partition_graphs for n in g.node if n.op == "_Send"))
    tf._views_magic("trace", "on")
    sess.run(loss, {x: [[1.0, 1.0]]})
    tf._views_magic("trace", "off")
    tf._views_magic("trace", "trace.json")
    try:
        tf._views_magic("placement", "x")
    except tf.errors.FailedPreconditionError as e:
        print("FailedPreconditionError:", e.message)
sess.close()
