# Workload 1, a tiny 2-task step: cluster {worker: [a, b]}; this process is task 0 with its
# server in-process and the client session on it (tf.Session(server.target): TF1 takes its
# in-process LocalMaster path there, tfsh its in-process path); x = assign_add on a scalar
# variable of task 0 (read by an identity there) feeds y = x * 2 on task 1 (a tensor crosses tasks each step), y is
# fetched. Prints the best of 3 x STEPS mean time per sess.run after a warm-up.
# The other task runs this script with --task 1 (it only serves).
# Runs unchanged under tfsh and python3 + TensorFlow (scripts/bench/tf1 shim).
import argparse
import time

import tensorflow as tf

parser = argparse.ArgumentParser()
parser.add_argument("--hosts", type=str, required=True, help="host:port,host:port")
parser.add_argument("--task", type=int, default=0)
parser.add_argument("--steps", type=int, default=1000)
parser.add_argument("--warmup", type=int, default=200)
args = parser.parse_args()

cluster = tf.train.ClusterSpec({"worker": args.hosts.split(",")})
server = tf.train.Server(cluster, job_name="worker", task_index=args.task)
if args.task != 0:
    print("ready", flush=True)
    server.join()
else:
    with tf.device("/job:worker/task:0"):
        v = tf.Variable(0.0, name="v")
        # identity: tfsh colocates a ref edge's consumer with the variable (TF1 does so
        # only for ref-typed inputs, not for Mul's), so the ref is read on task 0 first.
        x = tf.identity(tf.assign_add(v, 1.0))
    with tf.device("/job:worker/task:1"):
        y = x * 2.0
    with tf.Session(server.target) as sess:
        sess.run(v.initializer)
        for _ in range(args.warmup):
            sess.run(y)
        best = None
        for rep in range(3):
            t0 = time.time()
            for _ in range(args.steps):
                r = sess.run(y)
            dt = (time.time() - t0) / args.steps
            best = dt if best is None or dt < best else best
        assert float(r) == 2.0 * (args.warmup + 3 * args.steps), r
        print("step_us %.1f" % (best * 1e6), flush=True)
