# A traced step's RunMetadata carries what TensorBoard colours a graph's nodes by:
# per node, the memory it allocated (AllocatorMemoryUsed: allocator "cpu", total, peak and
# live bytes) and each output's TensorDescription (dtype, shape, allocation_description
# with requested_bytes, allocated_bytes where the node allocated it, allocator_name), read
# back through the wire format as add_run_metadata writes it. Ops whose buffers TF and tfsh
# handle alike (TF's Relu and Reshape reuse their input's buffer, tfsh's Relu does not).
# Expected output: real TensorFlow's, without oneDNN (whose allocator is "mklcpu"):
#   TF_ENABLE_ONEDNN_OPTS=0 scripts/tf_oracle/run.sh --write tests/lang/tf_trace_memory.py
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 4], name="x")
w = tf.Variable(tf.ones([4, 3]), name="w")
y = tf.matmul(x, w, name="y")
s = tf.reduce_sum(y, 1, name="s")
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    rm = tf.RunMetadata()
    sess.run(s, {x: [[1, 2, 3, 4], [5, 6, 7, 8]]}, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
             run_metadata=rm)
back = tf.RunMetadata()
back.ParseFromString(rm.SerializeToString())
print([d.device for d in back.step_stats.dev_stats])
for d in back.step_stats.dev_stats:
    for n in sorted(d.node_stats, key=lambda n: n.node_name):
        if n.node_name not in ("w", "w/read", "y", "s"):
            continue
        print(n.node_name)
        for m in n.memory:
            print("  memory", m.allocator_name, m.total_bytes, m.peak_bytes, m.live_bytes)
        for o in n.output:
            t = o.tensor_description
            a = t.allocation_description
            print("  output", o.slot, t.dtype, [k.size for k in t.shape.dim], a.requested_bytes, a.allocated_bytes,
                  a.allocator_name)
