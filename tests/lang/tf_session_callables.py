# Session.list_devices and Session.make_callable (feed lists, options, an op, a bad feed_list)
# on a local session; expected output from TF 2.21.
import tensorflow as tf
a = tf.placeholder(tf.float32, [])
b = tf.placeholder(tf.float32, [])
r1 = a + b
v = tf.Variable(1.0)
inc = tf.assign_add(v, 1.0)
with tf.Session() as sess:
    sess.run(v.initializer)
    ds = sess.list_devices()
    print([(d.name, d.device_type, d.memory_limit_bytes, d.incarnation != 0) for d in ds])
    f = sess.make_callable(r1, [a, b])
    print(f(1.0, 2.0), f(3.0, b=0) if False else f(3.0, 4.0))
    g = sess.make_callable([r1, {"twice": r1 * 2}], [a, b], accept_options=True)
    print(g(1.0, 2.0))
    h = sess.make_callable(inc.op)
    print(h(), sess.run(v))
    k = sess.make_callable(inc, accept_options=True)
    md = tf.RunMetadata()
    print(k(options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=md), len(md.step_stats.dev_stats) > 0)
    try:
        sess.make_callable(r1, a)
    except TypeError as e:
        print("TypeError:", e)
