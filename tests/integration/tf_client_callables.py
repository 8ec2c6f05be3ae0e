# TF's own client on `tfsh server --grpc` (run by TF's Python; test_tf_client_replay.sh
# replays what it sent): callables (MasterService MakeCallable, RunCallable,
# ReleaseCallable), as tf.keras's backend functions make them in graph mode.
#   tf_client_callables.py TARGET
import sys

import numpy as np
import tensorflow as tf
from tensorflow.core.protobuf import config_pb2

target = sys.argv[1]
with tf.device("/job:worker/task:0"):
    v0 = tf.Variable(1.0, name="v0")
with tf.device("/job:worker/task:1"):
    v1 = tf.Variable(10.0, name="v1")
    x = tf.placeholder(tf.float32, [None], name="x")
    y = x * v1 + v0
    count = tf.Variable(0.0, name="count")
    step = tf.assign_add(count, 1.0, name="step")
with tf.Session(target) as sess:
    sess.run([v0.initializer, v1.initializer, count.initializer])
    opts = config_pb2.CallableOptions(feed=[x.name], fetch=[y.name], target=[step.name])
    f = sess._make_callable_from_options(opts)
    print("callable", f(np.array([1.0, 2.0], np.float32)))
    print("again", f(np.array([3.0], np.float32)))
    g = sess._make_callable_from_options(config_pb2.CallableOptions(fetch=[count.name]))
    print("count", g())
    try:
        sess._make_callable_from_options(config_pb2.CallableOptions(fetch=["nope:0"]))
    except tf.errors.OpError as e:
        print(type(e).__name__ + ":", e.message.splitlines()[0])
    del f
    print("released", g())
