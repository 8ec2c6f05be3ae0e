# Queue runners start with the session: MonitoredTrainingSession (as its coordinated session
# creator does) and Supervisor.managed_session (start_standard_services); each reads to the end.
import tensorflow as tf
x, y = tf.train.slice_input_producer([tf.range(10), tf.range(10) * 2], num_epochs=1, shuffle=False)
xb, yb = tf.train.batch([x, y], batch_size=4, allow_smaller_final_batch=True)
gs = tf.train.get_or_create_global_step()
inc = tf.assign_add(gs, 1)
total = 0
with tf.train.MonitoredTrainingSession() as sess:
    while not sess.should_stop():
        a, b, _ = sess.run([xb, yb, inc])
        total += int(a.sum())
print("monitored", total)
tf.reset_default_graph()
x, = tf.train.slice_input_producer([tf.range(6)], num_epochs=1, shuffle=False)
xb = tf.train.batch([x], batch_size=3)
sv = tf.train.Supervisor(logdir=None, local_init_op=tf.local_variables_initializer())
got = []
with sv.managed_session() as sess:
    while not sv.should_stop():
        got.extend(sess.run(xb).tolist())
print("supervisor", sorted(got))
