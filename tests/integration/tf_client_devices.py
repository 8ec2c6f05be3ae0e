# TF's own client on `tfsh server --grpc` (run by TF's Python): Session.list_devices()
# (MasterService.ListDevices) and tf.Session.reset (Reset), which drops the variables.
#   tf_client_devices.py TARGET
import sys

import tensorflow as tf

target = sys.argv[1]
with tf.device("/job:worker/task:1"):
    v = tf.Variable([1.0, 2.0], name="v")
with tf.Session(target) as sess:
    for d in sess.list_devices():
        print(d.name, d.device_type, d.incarnation != 0)
    sess.run(v.initializer)
    print("v", sess.run(v))
tf.Session.reset(target)
with tf.Session(target) as sess:
    try:
        sess.run(v)
    except tf.errors.FailedPreconditionError as e:
        line = [l for l in e.message.splitlines() if "uninitialized" in l][0]
        print("FailedPreconditionError:", line[line.index("Attempting"):])   # tfsh names the task first
