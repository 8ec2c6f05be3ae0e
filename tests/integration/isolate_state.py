# ConfigProto(isolate_session_state=True) as TF's GrpcServerTest checks it, on a
# server of this process (tf.train.Server.create_local_server()): sharing sessions see each
# other's variables; an isolated session has its own (FailedPreconditionError until it
# initializes them, its own shapes), for ref and resource variables alike; closing one leaves
# the others' variables alone, and a new isolated session starts with none.
import tensorflow as tf

server = tf.train.Server.create_local_server()
init_value = tf.placeholder(tf.int32)
v = tf.Variable(init_value, validate_shape=False, name="v")
with tf.variable_scope("r", use_resource=True):
    r = tf.get_variable("rv", initializer=tf.constant([1, 2, 3]))

sharing = tf.ConfigProto(isolate_session_state=False)
isolate = tf.ConfigProto(isolate_session_state=True)
share_0 = tf.Session(server.target, config=sharing)
share_1 = tf.Session(server.target, config=sharing)
iso_0 = tf.Session(server.target, config=isolate)
iso_1 = tf.Session(server.target, config=isolate)
names = {id(share_0): "share_0", id(share_1): "share_1", id(iso_0): "iso_0", id(iso_1): "iso_1"}


def show(sess, t):
    try:
        value = sess.run(t)
        print(names[id(sess)], getattr(value, "tolist", lambda: value)())
    except tf.errors.FailedPreconditionError as e:
        print(names[id(sess)], "FailedPreconditionError", e.message.splitlines()[0])


def all_four(t):
    for s in [share_0, share_1, iso_0, iso_1]:
        show(s, t)


print("-- nothing initialized")
all_four(v)
print("-- share_0 initializes v = 86")
share_0.run(v.initializer, feed_dict={init_value: 86})
all_four(v)
print("-- share_1 initializes v = [86, 99]")
share_1.run(v.initializer, feed_dict={init_value: [86, 99]})
all_four(v)
print("-- iso_0 initializes v = 37")
iso_0.run(v.initializer, feed_dict={init_value: 37})
all_four(v)
print("-- iso_1 initializes v = [19, 86]")
iso_1.run(v.initializer, feed_dict={init_value: [19, 86]})
all_four(v)
print("-- resource variable: iso_1 initializes it")
iso_1.run(r.initializer)
all_four(r)
print("-- iso_1 closes; a new isolated session starts with none")
iso_1.close()
iso_2 = tf.Session(server.target, config=isolate)
names[id(iso_2)] = "iso_2"
for s in [share_0, iso_0, iso_2]:
    show(s, v)
show(iso_2, r)
for s in [share_0, share_1, iso_0, iso_2]:
    s.close()
print("done")
