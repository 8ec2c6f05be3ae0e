# Workloads 3 and 4, between-graph replicated training of TF1's mnist_replica shape: 1 ps +
# 2 workers, a 784-100-10 MLP (relu hidden layer, softmax cross entropy), batch 100, Adam,
# replica_device_setter, a global step, MonitoredTrainingSession with StopAtStepHook; each
# worker runs until the global step reaches --steps. --sync 1 wraps Adam in
# SyncReplicasOptimizer (2 replicas to aggregate, 2 in total) and adds its session hook.
# The chief (worker 0) prints the training time per 1000 global steps, measured from its
# first step to its last, and each worker its last batch's loss (TF1's MonitoredSession
# refuses a run after should_stop, so no test accuracy). Before their first step both
# workers wait until both have their session (a counter variable on the ps), so that both
# train for the whole time.
# (The driver starts worker 1 once the chief prints "graph built": tfsh's chief waits for
# every task of the cluster to connect despite device_filters, while TF1's non-chief, if
# it asks before the chief has initialized the model, sleeps recovery_wait_secs = 30 s.)
# Runs unchanged under tfsh and python3 + TensorFlow (scripts/bench/tf1 shim).
import argparse
import time

import tensorflow as tf
from tensorflow.examples.tutorials.mnist import input_data

parser = argparse.ArgumentParser()
parser.add_argument("--ps_hosts", type=str, required=True)
parser.add_argument("--worker_hosts", type=str, required=True)
parser.add_argument("--job_name", type=str, required=True)
parser.add_argument("--task_index", type=int, default=0)
parser.add_argument("--steps", type=int, default=1000)
parser.add_argument("--sync", type=int, default=0)
parser.add_argument("--batch_size", type=int, default=100)
parser.add_argument("--learning_rate", type=float, default=0.001)
parser.add_argument("--data_dir", type=str, default="/usr/share/datasets/fashion-mnist")
args = parser.parse_args()

worker_hosts = args.worker_hosts.split(",")
cluster = tf.train.ClusterSpec({"ps": args.ps_hosts.split(","), "worker": worker_hosts})
server = tf.train.Server(cluster, job_name=args.job_name, task_index=args.task_index)
if args.job_name == "ps":
    print("ready", flush=True)
    server.join()
else:
    is_chief = args.task_index == 0
    mnist = input_data.read_data_sets(args.data_dir, one_hot=True, seed=args.task_index + 1)
    tf.set_random_seed(1)
    with tf.device(tf.train.replica_device_setter(
            worker_device="/job:worker/task:%d" % args.task_index, cluster=cluster)):
        x = tf.placeholder(tf.float32, [None, 784], name="x")
        y_ = tf.placeholder(tf.float32, [None, 10], name="y_")
        hid_w = tf.Variable(tf.truncated_normal([784, 100], stddev=1.0 / 28), name="hid_w")
        hid_b = tf.Variable(tf.zeros([100]), name="hid_b")
        sm_w = tf.Variable(tf.truncated_normal([100, 10], stddev=0.1), name="sm_w")
        sm_b = tf.Variable(tf.zeros([10]), name="sm_b")
        hid = tf.nn.relu(tf.matmul(x, hid_w) + hid_b)
        logits = tf.matmul(hid, sm_w) + sm_b
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y_, logits=logits))
        global_step = tf.train.get_or_create_global_step()
        joined = tf.Variable(0, dtype=tf.int32, trainable=False, name="joined")
        join = tf.assign_add(joined, 1)
        opt = tf.train.AdamOptimizer(args.learning_rate)
        if args.sync:
            opt = tf.train.SyncReplicasOptimizer(opt, replicas_to_aggregate=len(worker_hosts),
                                                 total_num_replicas=len(worker_hosts))
        train_op = opt.minimize(loss, global_step=global_step)
    hooks = [tf.train.StopAtStepHook(last_step=args.steps)]
    if args.sync:
        hooks.append(opt.make_session_run_hook(is_chief))
    print("graph built", flush=True)
    config = tf.ConfigProto(device_filters=["/job:ps", "/job:worker/task:%d" % args.task_index])
    with tf.train.MonitoredTrainingSession(master=server.target, is_chief=is_chief, hooks=hooks,
                                           config=config, checkpoint_dir=None,
                                           save_checkpoint_secs=None, save_summaries_steps=None,
                                           log_step_count_steps=None) as sess:
        print("session ready", flush=True)
        sess.run(join)
        deadline = time.time() + 300
        while sess.run(joined) < len(worker_hosts):
            assert time.time() < deadline, "the other worker never joined"
            time.sleep(0.01)
        local = 0
        t_first = None
        g_first = 0
        t_last = 0.0
        g_last = 0
        while not sess.should_stop():
            batch_xs, batch_ys = mnist.train.next_batch(args.batch_size)
            _, g, l = sess.run([train_op, global_step, loss], feed_dict={x: batch_xs, y_: batch_ys})
            local += 1
            if t_first is None:
                t_first = time.time()
                g_first = int(g)
            t_last = time.time()
            g_last = int(g)
        print("worker %d: %d local steps, global step %d -> %d in %.2f s" % (
            args.task_index, local, g_first, g_last, t_last - t_first), flush=True)
        print("last_loss %.4f" % float(l), flush=True)
        if is_chief:
            print("per1000_s %.3f" % ((t_last - t_first) / max(g_last - g_first, 1) * 1000), flush=True)
