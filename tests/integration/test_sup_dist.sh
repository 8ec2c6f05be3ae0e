#!/usr/bin/env bash
# TF1's first trainer shape on 1 ps + 2 workers: tf.app.flags (--job_name, --task_index,
# --ps_hosts, --worker_hosts), tf.train.Server, replica_device_setter, Supervisor and
# `with sv.managed_session(server.target) as sess:` with `_, step = sess.run([train_op,
# global_step])`. The ps blocks in join(); the non-chief, started first, waits for the chief
# to initialize, then joins; the chief saves a final checkpoint into --logdir and a
# restarted chief restores it. (A counter model: cheap, checkable steps.) The chief starts
# its steps once the non-chief has joined (a counter on the ps): 400 steps take a fraction
# of a second, less than the non-chief's next look at whether the model is ready.
. "$(dirname "$0")/lib.sh"
read -r P W0 W1 <<<"$(free_ports 3)"
cat >"$WORK/trainer.py" <<'PY'
import time
import tensorflow as tf
flags = tf.app.flags
flags.DEFINE_string("job_name", "", "One of 'ps', 'worker'")
flags.DEFINE_integer("task_index", 0, "Index of task within the job")
flags.DEFINE_string("ps_hosts", "", "Comma-separated list of hostname:port pairs")
flags.DEFINE_string("worker_hosts", "", "Comma-separated list of hostname:port pairs")
flags.DEFINE_string("logdir", "", "The chief's checkpoints")
flags.DEFINE_integer("steps", 100, "Train until this global step")
FLAGS = flags.FLAGS

def main(_):
    tf.logging.set_verbosity(tf.logging.INFO)
    cluster = tf.train.ClusterSpec({"ps": FLAGS.ps_hosts.split(","), "worker": FLAGS.worker_hosts.split(",")})
    server = tf.train.Server(cluster, job_name=FLAGS.job_name, task_index=FLAGS.task_index)
    if FLAGS.job_name == "ps":
        server.join()
    elif FLAGS.job_name == "worker":
        with tf.device(tf.train.replica_device_setter(
                worker_device="/job:worker/task:%d" % FLAGS.task_index, cluster=cluster)):
            global_step = tf.Variable(0, name="global_step", trainable=False, dtype=tf.int64)
            total = tf.Variable(0.0, name="total")
            x = tf.placeholder(tf.float32, [], name="x")
            train_op = tf.group(tf.assign_add(total, x), tf.assign_add(global_step, 1))
            joined = tf.Variable(0, name="joined", trainable=False, dtype=tf.int64)
            join_op = tf.assign_add(joined, 1)
            started = tf.Variable(0, name="started", trainable=False, dtype=tf.int64)
            start_op = tf.assign_add(started, 1)
            saver = tf.train.Saver()
            init_op = tf.global_variables_initializer()
        sv = tf.train.Supervisor(is_chief=(FLAGS.task_index == 0), logdir=FLAGS.logdir, init_op=init_op,
                                 summary_op=None, saver=saver, global_step=global_step, save_model_secs=600)
        config = tf.ConfigProto(device_filters=["/job:ps", "/job:worker/task:%d" % FLAGS.task_index])
        with sv.managed_session(server.target, config=config) as sess:
            step = sess.run(global_step)
            print("worker %d: ready at step %d, total %.0f" % (FLAGS.task_index, step, sess.run(total)), flush=True)
            # the non-chief trains once the chief has read its step: it may be ready first
            if FLAGS.task_index != 0:
                sess.run(join_op)
                wait_for = started
            else:
                sess.run(start_op)
                wait_for = joined
            for _ in range(3000):   # bounded: 30 s
                if sess.run(wait_for) > 0:
                    break
                time.sleep(0.01)
            while not sv.should_stop() and step < FLAGS.steps:
                _, step = sess.run([train_op, global_step], feed_dict={x: 1.0})
                if step % 20 == 0:
                    print("worker %d: step %d" % (FLAGS.task_index, step), flush=True)
        sv.stop()
        print("worker %d: done" % FLAGS.task_index, flush=True)

if __name__ == "__main__":
    tf.app.run()
PY
ARGS=(--ps_hosts="localhost:$P" --worker_hosts="localhost:$W0,localhost:$W1" --logdir="$WORK/logdir")
task() {   # task NAME ARGS...: the trainer in the background, log in $WORK/NAME.log
  local name=$1
  shift
  start_tfsh "$name" "$WORK/trainer.py" "${ARGS[@]}" "$@"
}
task ps --job_name=ps --task_index=0
task w1 --job_name=worker --task_index=1 --steps=400
wait_for "$WORK/w1.log" "Waiting for model to be ready" 30
check "the non-chief waits for the chief" \
  "INFO:tensorflow:Waiting for model to be ready.  Ready_for_local_init_op:  Variables not initialized: global_step, total, joined, started, ready: None" \
  "$(grep -m1 'Waiting for model' "$WORK/w1.log")"
task w0 --job_name=worker --task_index=0 --steps=400
rc0=0; rc1=0
wait_exit "$PID_w0" 60 || rc0=$?
wait_exit "$PID_w1" 60 || rc1=$?
check "both workers finish" "0 0" "$rc0 $rc1"
check "the chief initialized" "worker 0: ready at step 0, total 0" "$(grep -m1 ready "$WORK/w0.log")"
check "the non-chief joined" "yes" "$(grep -q 'worker 1: step' "$WORK/w1.log" && echo yes)"
check "the ps is still serving (blocked in join)" "yes" "$(kill -0 "$PID_ps" && echo yes)"
last=$(sed -n 's/^model_checkpoint_path: ".*model.ckpt-\([0-9]*\)"$/\1/p' "$WORK/logdir/checkpoint")
check "the chief saved a final checkpoint on leaving managed_session" "yes" \
  "$([ -n "$last" ] && [ "$last" -ge 400 ] && echo yes || echo "no: '$last'")"
check "an event file in logdir" "1" "$(ls "$WORK/logdir" | grep -c '^events.out.tfevents')"
# A restarted chief restores: its first global step is the checkpoint's.
task w0b --job_name=worker --task_index=0 --steps=420
rc=0
wait_exit "$PID_w0b" 60 || rc=$?
check "a restarted chief restores from logdir" "0 INFO:tensorflow:Restoring parameters from $WORK/logdir/model.ckpt-$last" \
  "$rc $(grep -m1 Restoring "$WORK/w0b.log")"
# The checkpoint's name comes from global_step read just before the save, so one step of
# the other worker may land between that read and the save (as in TF1): the restored step is
# the checkpoint's number or one more, and total always equals it.
ready=$(sed -n 's/^worker 0: ready at step \([0-9]*\), total \([0-9]*\)$/\1 \2/p' "$WORK/w0b.log" | head -1)
check "... and resumes from its step" "yes" \
  "$(read -r s t <<<"$ready"; [ -n "$s" ] && [ "$s" = "$t" ] && [ "$s" -ge "$last" ] && [ "$s" -le $((last + 1)) ] && echo yes || echo "no: '$ready' after checkpoint $last")"
[ $FAILS -gt 0 ] && tail -n 15 "$WORK"/*.log
finish
