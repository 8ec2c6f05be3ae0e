# Ctrl-C during a step while QueueRunner threads are alive: the step blocked on an empty
# queue ends with KeyboardInterrupt in the main thread; the queue threads and the session
# live on (the next step runs), and the Coordinator then stops them cleanly.
import tensorflow as tf

q = tf.FIFOQueue(4, tf.float32, shapes=[])
enq = q.enqueue(tf.random_uniform([]))
never = tf.FIFOQueue(1, tf.float32, shapes=[]).dequeue()
with tf.Session() as sess:
    coord = tf.train.Coordinator()
    threads = tf.train.QueueRunner(q, [enq] * 2).create_threads(sess, coord=coord, start=True)
    sess.run(q.dequeue())
    print("blocking", flush=True)
    try:
        sess.run(never)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
    v = sess.run(q.dequeue())
    print("next step", 0.0 <= v < 1.0, "threads alive", sum(t.is_alive() for t in threads))
    coord.request_stop()
    sess.run(q.close(cancel_pending_enqueues=True))
    coord.join(threads, stop_grace_period_secs=10)
    print("stopped", sum(t.is_alive() for t in threads))
