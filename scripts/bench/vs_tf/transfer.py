# Workload 2, 64 MiB worker -> worker: cluster {worker: [a, b]}; a 64 MiB float32 variable
# on task 0 is consumed on task 1 (one element taken there, so the whole tensor must
# arrive); this process is task 1, its server in-process, the client session on it (only a
# scalar comes back to the client). Prints the best step of STEPS, and the best of the same
# step on a variable already on task 1 (no transfer), to show the transfer is the cost.
# The other task runs this script with --task 0 (it only serves).
# Runs unchanged under tfsh and python3 + TensorFlow (scripts/bench/tf1 shim).
import argparse
import time

import tensorflow as tf

parser = argparse.ArgumentParser()
parser.add_argument("--hosts", type=str, required=True, help="host:port,host:port")
parser.add_argument("--task", type=int, default=1)
parser.add_argument("--steps", type=int, default=10)
args = parser.parse_args()

cluster = tf.train.ClusterSpec({"worker": args.hosts.split(",")})
server = tf.train.Server(cluster, job_name="worker", task_index=args.task)
if args.task != 1:
    print("ready", flush=True)
    server.join()
else:
    n = 16 * 1024 * 1024                  # float32: 64 MiB
    with tf.device("/job:worker/task:0"):
        big = tf.Variable(tf.ones([n]), name="big")
    with tf.device("/job:worker/task:1"):
        local = tf.Variable(tf.ones([n]), name="local")
        moved = big[7] + 1.0
        stay = local[7] + 1.0

    def best(sess, t):
        sess.run(t)
        b = None
        for _ in range(args.steps):
            t0 = time.time()
            r = sess.run(t)
            d = time.time() - t0
            b = d if b is None or d < b else b
        assert float(r) == 2.0, r
        return b

    with tf.Session(server.target) as sess:
        sess.run(tf.global_variables_initializer())
        tm = best(sess, moved)
        ts = best(sess, stay)
        print("moved_s %.6f" % tm, flush=True)
        print("stay_s %.6f" % ts, flush=True)
