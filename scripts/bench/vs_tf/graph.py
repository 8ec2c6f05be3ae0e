# Workload 5, create + place + partition of a big graph: a chain of N cheap ops fed by a
# scalar placeholder (so that TF's Grappler cannot fold it away to a constant), in blocks of
# 1000 (a Const, then 999 Adds, each adding the block's constant to the chain so far), the
# blocks alternating between task 0 and task 1 of {worker: [a, b]} (N/1000 cut edges).
# This process is task 0, its server in-process, the client session on it. For each size:
# graph construction time, the first sess.run (place, partition, register the fragments on
# both tasks, run) and a second sess.run (run only), each graph fresh.
# The other task runs this script with --task 1 (it only serves).
# Runs unchanged under tfsh and python3 + TensorFlow (scripts/bench/tf1 shim).
import argparse
import time

import tensorflow as tf

parser = argparse.ArgumentParser()
parser.add_argument("--hosts", type=str, required=True, help="host:port,host:port")
parser.add_argument("--task", type=int, default=0)
parser.add_argument("--sizes", type=str, default="25000,50000,100000")
parser.add_argument("--block", type=int, default=1000)
args = parser.parse_args()

cluster = tf.train.ClusterSpec({"worker": args.hosts.split(",")})
server = tf.train.Server(cluster, job_name="worker", task_index=args.task)
if args.task != 0:
    print("ready", flush=True)
    server.join()
else:
    for size in [int(s) for s in args.sizes.split(",")]:
        g = tf.Graph()
        with g.as_default():
            t0 = time.time()
            with tf.device("/job:worker/task:0"):
                x0 = tf.placeholder(tf.float32, [], name="x0")
            x = x0
            for b in range(size // args.block):
                with tf.device("/job:worker/task:%d" % (b % 2)):
                    c = tf.constant(1.0)
                    for _ in range(args.block - 1):
                        x = tf.add(x, c)
            t1 = time.time()
            nodes = len(g.get_operations())
        with tf.Session(server.target, graph=g) as sess:
            t2 = time.time()
            r = sess.run(x, feed_dict={x0: 0.0})
            t3 = time.time()
            sess.run(x, feed_dict={x0: 0.0})
            t4 = time.time()
        assert float(r) == float((args.block - 1) * (size // args.block)), (r, nodes)
        print("graph %d nodes: build_s %.3f first_run_s %.3f second_run_s %.4f" % (nodes, t1 - t0, t3 - t2, t4 - t3),
              flush=True)
        print("g%d %.4f %.4f %.4f" % (nodes, t1 - t0, t3 - t2, t4 - t3), flush=True)
