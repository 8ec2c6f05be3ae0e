# The shape of TF1's mnist_replica.py --sync_replicas (it once hung): 1 ps + 2
# workers, each its own process running this script; a Supervisor with the sync
# optimizer's local_init_op / ready_for_local_init_op, the chief runs the init tokens op
# and starts the chief queue runner, then each worker trains until the global step
# reaches --train_steps.
import sys
import tempfile
import time
import tensorflow as tf
from tensorflow.examples.tutorials.mnist import input_data

flags = tf.app.flags
flags.DEFINE_string("data_dir", "/usr/share/datasets/fashion-mnist", "data")
flags.DEFINE_integer("task_index", None, "task")
flags.DEFINE_integer("train_steps", 50, "global steps")
flags.DEFINE_integer("batch_size", 100, "batch")
flags.DEFINE_boolean("sync_replicas", False, "sync")
flags.DEFINE_string("ps_hosts", "localhost:2222", "ps")
flags.DEFINE_string("worker_hosts", "localhost:2223,localhost:2224", "workers")
flags.DEFINE_string("job_name", None, "job")
FLAGS = flags.FLAGS


def main(unused_argv):
    mnist = input_data.read_data_sets(FLAGS.data_dir, one_hot=True)
    worker_spec = FLAGS.worker_hosts.split(",")
    num_workers = len(worker_spec)
    cluster = tf.train.ClusterSpec({"ps": FLAGS.ps_hosts.split(","), "worker": worker_spec})
    server = tf.train.Server(cluster, job_name=FLAGS.job_name, task_index=FLAGS.task_index)
    if FLAGS.job_name == "ps":
        server.join()
    is_chief = FLAGS.task_index == 0
    worker_device = "/job:worker/task:%d/cpu:0" % FLAGS.task_index
    with tf.device(tf.train.replica_device_setter(worker_device=worker_device, ps_device="/job:ps/cpu:0",
                                                  cluster=cluster)):
        global_step = tf.Variable(0, name="global_step", trainable=False)
        hid_w = tf.Variable(tf.truncated_normal([784, 100], stddev=1.0 / 28), name="hid_w")
        hid_b = tf.Variable(tf.zeros([100]), name="hid_b")
        sm_w = tf.Variable(tf.truncated_normal([100, 10], stddev=0.1), name="sm_w")
        sm_b = tf.Variable(tf.zeros([10]), name="sm_b")
        x = tf.placeholder(tf.float32, [None, 784])
        y_ = tf.placeholder(tf.float32, [None, 10])
        hid = tf.nn.relu(tf.nn.xw_plus_b(x, hid_w, hid_b))
        y = tf.nn.softmax(tf.nn.xw_plus_b(hid, sm_w, sm_b))
        cross_entropy = -tf.reduce_sum(y_ * tf.log(tf.clip_by_value(y, 1e-10, 1.0)))
        opt = tf.train.AdamOptimizer(0.01)
        if FLAGS.sync_replicas:
            opt = tf.train.SyncReplicasOptimizer(opt, replicas_to_aggregate=num_workers,
                                                 total_num_replicas=num_workers, name="mnist_sync_replicas")
        train_step = opt.minimize(cross_entropy, global_step=global_step)
        if FLAGS.sync_replicas:
            local_init_op = opt.local_step_init_op
            if is_chief:
                local_init_op = opt.chief_init_op
            ready_for_local_init_op = opt.ready_for_local_init_op
            chief_queue_runner = opt.get_chief_queue_runner()
            sync_init_op = opt.get_init_tokens_op()
        init_op = tf.global_variables_initializer()
        train_dir = tempfile.mkdtemp()
        if FLAGS.sync_replicas:
            sv = tf.train.Supervisor(is_chief=is_chief, logdir=train_dir, init_op=init_op,
                                     local_init_op=local_init_op,
                                     ready_for_local_init_op=ready_for_local_init_op,
                                     recovery_wait_secs=1, global_step=global_step)
        else:
            sv = tf.train.Supervisor(is_chief=is_chief, logdir=train_dir, init_op=init_op,
                                     recovery_wait_secs=1, global_step=global_step)
        sess_config = tf.ConfigProto(allow_soft_placement=True, log_device_placement=False,
                                     device_filters=["/job:ps", "/job:worker/task:%d" % FLAGS.task_index])
        sess = sv.prepare_or_wait_for_session(server.target, config=sess_config)
        print("Worker %d: Session initialization complete." % FLAGS.task_index)
        if FLAGS.sync_replicas and is_chief:
            sess.run(sync_init_op)
            sv.start_queue_runners(sess, [chief_queue_runner])
        print("Training begins @ %f" % time.time())
        sys.stdout.flush()
        local_step = 0
        while True:
            batch_xs, batch_ys = mnist.train.next_batch(FLAGS.batch_size)
            _, step = sess.run([train_step, global_step], feed_dict={x: batch_xs, y_: batch_ys})
            local_step += 1
            print("%f: Worker %d: training step %d done (global step: %d)" %
                  (time.time(), FLAGS.task_index, local_step, step))
            if step >= FLAGS.train_steps:
                break
        print("Training ends")
        val_xent = sess.run(cross_entropy, feed_dict={x: mnist.validation.images, y_: mnist.validation.labels})
        print("validation cross entropy is a number:", val_xent == val_xent)
        sys.stdout.flush()


if __name__ == "__main__":
    tf.app.run()
