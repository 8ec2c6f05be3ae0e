# The views see a loop's iterations: with FULL_TRACE, each run of a loop node is
# one NodeExecStats record (TF 1.x counts them the same way; tfsh's timeline labels add
# "[frame:iteration]"). Expected output from real TF.
import tensorflow as tf

r = tf.while_loop(lambda i: i < 3, lambda i: tf.add(i, 1, name="step"), [tf.constant(0)])
opts = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
md = tf.RunMetadata()
with tf.Session() as s:
    print(s.run(r, options=opts, run_metadata=md))
names = [ns.node_name for d in md.step_stats.dev_stats for ns in d.node_stats]
print(names.count("while/step"), names.count("while/NextIteration"), names.count("while/Exit"))
