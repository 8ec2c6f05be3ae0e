# Smaller points of fidelity, each as TF 1.x prints it (expected output from real TF):
# nested lists of tensors pack, composite ops' name scopes, float32_ref, server.target,
# MonitoredSession.run after should_stop, socket.
import socket
import tensorflow as tf

a = tf.constant(1.0)
b = tf.constant(2.0)
s = tf.reduce_sum([(a, b), (b, a)], axis=0)
grads = [[a, b], [b, b]]
r = tf.random_normal([2], seed=1)
print(r.name, [o.name for o in tf.get_default_graph().get_operations() if o.name.startswith("random_normal")])
t = tf.truncated_normal([2, 2], stddev=0.1, name="init")
print(t.name, tf.random_uniform([2], -1.0, 1.0).name, tf.random_uniform([3], 0, 10, dtype=tf.int32).name)
with tf.name_scope("layer"):
    print(tf.random.normal([1]).name)
v = tf.Variable([1.0, 2.0], name="v")
gs = tf.Variable(0, name="global_step", trainable=False)
print(v.dtype, gs.dtype, v.value().dtype, v.dtype.base_dtype, v.dtype == tf.float32, v.dtype.base_dtype == tf.float32)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    print(sess.run(s), sess.run(tf.reduce_sum(grads, axis=0)))
server = tf.train.Server.create_local_server()
print(server.target.startswith("grpc://localhost:"))
step = tf.train.get_or_create_global_step()
inc = tf.assign_add(step, 1)
with tf.train.MonitoredTrainingSession(hooks=[tf.train.StopAtStepHook(last_step=2)]) as mon:
    n = 0
    while not mon.should_stop():
        mon.run(inc)
        n += 1
    print("steps", n)
    try:
        mon.run(inc)
    except RuntimeError as e:
        print("RuntimeError:", e)
print(socket.gethostname() == socket.gethostname(), len(socket.getfqdn()) > 0)
