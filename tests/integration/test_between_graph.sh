#!/usr/bin/env bash
# Between-graph replication, as TF1 programs were written: one script, started once per
# task with tf.app.flags (--job_name, --task_index, --ps_hosts, --worker_hosts). The ps
# blocks in server.join(); the chief initializes; the other worker polls
# report_uninitialized_variables until it is empty; each worker runs STEPS steps of
# GradientDescentOptimizer.minimize(loss, global_step=...) and the shared global_step
# ends at exactly workers x steps; the chief leaves only then.
. "$(dirname "$0")/lib.sh"
read -r P0 W0 W1 <<<"$(free_ports 3)"
STEPS=50
cat >"$WORK/trainer.py" <<'PY'
import time
import tensorflow as tf

flags = tf.app.flags
flags.DEFINE_string("ps_hosts", "", "Comma-separated list of hostname:port pairs")
flags.DEFINE_string("worker_hosts", "", "Comma-separated list of hostname:port pairs")
flags.DEFINE_string("job_name", "", "One of 'ps', 'worker'")
flags.DEFINE_integer("task_index", 0, "Index of task within the job")
flags.DEFINE_integer("steps", 10, "Training steps per worker")
FLAGS = flags.FLAGS

def main(_):
    ps_hosts = FLAGS.ps_hosts.split(",")
    worker_hosts = FLAGS.worker_hosts.split(",")
    cluster = tf.train.ClusterSpec({"ps": ps_hosts, "worker": worker_hosts})
    server = tf.train.Server(cluster, job_name=FLAGS.job_name, task_index=FLAGS.task_index)
    if FLAGS.job_name == "ps":
        print("ps: joining", flush=True)
        server.join()
        return
    is_chief = FLAGS.task_index == 0
    with tf.device(tf.train.replica_device_setter(
            worker_device="/job:worker/task:%d" % FLAGS.task_index, cluster=cluster)):
        global_step = tf.train.get_or_create_global_step()
        x = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        y = tf.constant([[1.0], [2.0], [3.0]])
        w = tf.Variable(tf.zeros([2, 1]), name="w")
        b = tf.Variable(0.0, name="b")
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
        train_op = tf.train.GradientDescentOptimizer(0.01).minimize(loss, global_step=global_step)
        init_op = tf.global_variables_initializer()
        uninitialized = tf.report_uninitialized_variables()
    with tf.Session(server.target) as sess:
        if is_chief:
            sess.run(init_op)
            print("worker %d: initialized the model" % FLAGS.task_index, flush=True)
        else:
            while len(sess.run(uninitialized)) > 0:
                time.sleep(0.02)
            print("worker %d: model ready" % FLAGS.task_index, flush=True)
        first = sess.run(loss)
        for _ in range(FLAGS.steps):
            sess.run(train_op)
        print("worker %d: done, loss fell %s" % (FLAGS.task_index, sess.run(loss) < first), flush=True)
        # The chief stays until the others are done: a worker whose session starts after
        # the chief's process has ended waits for it (at CreateSession, as in TF1).
        while is_chief and sess.run(global_step) < len(worker_hosts) * FLAGS.steps:
            time.sleep(0.02)

if __name__ == "__main__":
    tf.app.run()
PY
HOSTS=(--ps_hosts="localhost:$P0" --worker_hosts="localhost:$W0,localhost:$W1")
"$TFSH" "$WORK/trainer.py" "${HOSTS[@]}" --job_name=ps --task_index=0 >"$WORK/ps.log" 2>&1 &
PIDS+=($!); PID_ps=$!
# The non-chief first, so that it really waits for the chief.
timeout 40 "$TFSH" "$WORK/trainer.py" "${HOSTS[@]}" --job_name=worker --task_index=1 --steps=$STEPS >"$WORK/w1.log" 2>&1 &
w1=$!
timeout 40 "$TFSH" "$WORK/trainer.py" "${HOSTS[@]}" --job_name=worker --task_index=0 --steps=$STEPS >"$WORK/w0.log" 2>&1 &
w0=$!
wait $w0 $w1
check "chief initializes" "worker 0: initialized the model" "$(head -1 "$WORK/w0.log")"
check "the other worker waits until the model is ready" "worker 1: model ready" "$(head -1 "$WORK/w1.log")"
check "worker 0 trains" "worker 0: done, loss fell True" "$(tail -1 "$WORK/w0.log")"
check "worker 1 trains" "worker 1: done, loss fell True" "$(tail -1 "$WORK/w1.log")"
check "ps blocks in join()" "ps: joining / alive" "$(head -1 "$WORK/ps.log") / $(kill -0 "$PID_ps" 2>/dev/null && echo alive)"
cat >"$WORK/read.py" <<PY
import tensorflow as tf
with tf.device("/job:ps/task:0"):
    gs = tf.train.get_or_create_global_step()
with tf.Session("grpc://localhost:$W1", config=tf.ConfigProto(device_filters=["/job:ps", "/job:worker/task:1"])) as sess:
    print(sess.run(gs))
PY
# The workers' in-process servers are gone: a plain tfsh server serves task 1 for the read.
start_task w1srv --ps_hosts "localhost:$P0" --worker_hosts "localhost:$W0,localhost:$W1" --job worker --task 1
wait_for "$WORK/w1srv.log" "serving on"
check "global_step = workers x steps" "$((2 * STEPS))" "$(timeout 30 "$TFSH" "$WORK/read.py" 2>&1 | tail -1)"
finish
