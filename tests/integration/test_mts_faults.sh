#!/usr/bin/env bash
# Fault drills on 1 ps + 2 workers, trainers in TF1's second shape (argparse +
# tf.train.Server + MonitoredTrainingSession + StopAtStepHook + checkpoint_dir); the model is
# a counter so that the steps are cheap and each one is checkable.
#  1. the non-chief, started before the chief, waits (printing what for), then joins;
#  2. kill -9 the ps in mid-training, restart it: both workers' sessions are recreated, the
#     chief restores the latest checkpoint, and no worker's global step goes back further;
#  3. kill -9 the chief in the middle of a save (TFSH_CKPT_CRASH=data): the previous
#     checkpoint is intact and the restarted chief restores it.
. "$(dirname "$0")/lib.sh"
read -r P W0 W1 <<<"$(free_ports 3)"
CK=$WORK/ck
cat >"$WORK/trainer.py" <<'PY'
import argparse, sys, time
import tensorflow as tf
parser = argparse.ArgumentParser()
parser.add_argument("--ps_hosts", type=str, default="")
parser.add_argument("--worker_hosts", type=str, default="")
parser.add_argument("--job_name", type=str, default="")
parser.add_argument("--task_index", type=int, default=0)
parser.add_argument("--checkpoint_dir", type=str, default="")
parser.add_argument("--last_step", type=int, default=100)
parser.add_argument("--save_steps", type=int, default=10)
FLAGS, unparsed = parser.parse_known_args()

def main(_):
    tf.logging.set_verbosity(tf.logging.INFO)
    cluster = tf.train.ClusterSpec({"ps": FLAGS.ps_hosts.split(","), "worker": FLAGS.worker_hosts.split(",")})
    server = tf.train.Server(cluster, job_name=FLAGS.job_name, task_index=FLAGS.task_index)
    if FLAGS.job_name == "ps":
        server.join()
        return
    with tf.device(tf.train.replica_device_setter(worker_device="/job:worker/task:%d" % FLAGS.task_index,
                                                  cluster=cluster)):
        global_step = tf.train.get_or_create_global_step()
        total = tf.Variable(0.0, name="total")
        train_op = tf.group(tf.assign_add(total, 1.0), tf.assign_add(global_step, 1))
    hooks = [tf.train.StopAtStepHook(last_step=FLAGS.last_step)]
    # TF1's usual device filters: a worker needs the ps tasks and itself, not the other workers
    config = tf.ConfigProto(device_filters=["/job:ps", "/job:worker/task:%d" % FLAGS.task_index])
    with tf.train.MonitoredTrainingSession(master=server.target, is_chief=(FLAGS.task_index == 0),
                                           checkpoint_dir=FLAGS.checkpoint_dir, hooks=hooks, config=config,
                                           save_checkpoint_steps=FLAGS.save_steps) as sess:
        while not sess.should_stop():
            _, step = sess.run([train_op, global_step])
            print("worker %d step %d" % (FLAGS.task_index, step), flush=True)
            time.sleep(0.01)
    print("worker %d done" % FLAGS.task_index, flush=True)

if __name__ == "__main__":
    tf.app.run(main=main, argv=[sys.argv[0]] + unparsed)
PY
ARGS=(--ps_hosts="localhost:$P" --worker_hosts="localhost:$W0,localhost:$W1" --checkpoint_dir="$CK")
task() {   # task NAME ARGS...: the trainer in the background, log in $WORK/NAME.log
  local name=$1
  shift
  start_tfsh "$name" "$WORK/trainer.py" "${ARGS[@]}" "$@"
}
ckpt_step() { sed -n 's/^model_checkpoint_path: ".*model.ckpt-\([0-9]*\)"$/\1/p' "$CK/checkpoint" 2>/dev/null; }

# 1. the non-chief first
task ps --job_name=ps --task_index=0
task w1 --job_name=worker --task_index=1 --last_step=300
wait_for "$WORK/w1.log" "Waiting for model to be ready" 30
check "the non-chief waits, naming what is not initialized" \
  "INFO:tensorflow:Waiting for model to be ready.  Ready_for_local_init_op:  Variables not initialized: global_step, total, ready: None" \
  "$(grep -m1 'Waiting for model' "$WORK/w1.log")"
task w0 --job_name=worker --task_index=0 --last_step=300
wait_for "$WORK/w1.log" "worker 1 step" 30
check "then joins" "yes" "$(grep -q 'worker 1 step' "$WORK/w1.log" && echo yes)"

# 2. kill -9 the ps in mid-training, restart it
for ((i = 0; i < 1500; i++)); do s=$(ckpt_step); [ -n "$s" ] && [ "$s" -ge 40 ] && break; sleep 0.02; done
kill -9 "$PID_ps"
wait "$PID_ps" 2>/dev/null
at_kill=$(ckpt_step)
echo "ps killed; latest checkpoint at step $at_kill"
wait_for "$WORK/w0.log" "An error was raised" 20
wait_for "$WORK/w1.log" "An error was raised" 20
task ps2 --job_name=ps --task_index=0
rc0=0; rc1=0
wait_exit "$PID_w0" 90 || rc0=$?
wait_exit "$PID_w1" 90 || rc1=$?
check "both workers finish after the ps restart" "0 0" "$rc0 $rc1"
for w in w0 w1; do
  check "$w: the session was recreated" "INFO:tensorflow:Recovered: a new session was created." \
    "$(grep -m1 Recovered "$WORK/$w.log")"
done
restored=$(sed -n 's/.*Restoring parameters from .*model.ckpt-\([0-9]*\)$/\1/p' "$WORK/w0.log" | head -1)
check "the chief restores the latest checkpoint (>= the one at the kill)" "yes" \
  "$([ -n "$restored" ] && [ -n "$at_kill" ] && [ "$restored" -ge "$at_kill" ] && echo yes || echo "no: restored '$restored', at kill '$at_kill'")"
for w in w0 w1; do
  low=$(awk '/Recovered/ { on = 1 } on && /^worker [01] step/ { print $4; exit }' "$WORK/$w.log")
  check "$w: the first step after recovery follows the restored checkpoint ($restored)" "yes" \
    "$([ -n "$low" ] && [ "$low" -gt "$restored" ] && echo yes || echo "no: $low")"
  back=$(awk -v r="$restored" '/Recovered/ { on = 1 } on && /^worker [01] step/ && $4 <= r { print $4 }' "$WORK/$w.log" | head -1)
  check "$w: global_step never goes back further than the checkpoint" "" "$back"
done
last=$(ckpt_step)
check "training reaches the last step (300, or one more from the other worker's step in flight)" "yes" \
  "$([ -n "$last" ] && [ "$last" -ge 300 ] && [ "$last" -le 301 ] && echo yes || echo "no: $last")"

# 3. kill -9 the chief in the middle of a save
TFSH_CKPT_CRASH=data "$TFSH" "$WORK/trainer.py" "${ARGS[@]}" --job_name=worker --task_index=0 --last_step=340 \
  >"$WORK/crash.log" 2>&1 &
crash=$!
PIDS+=($crash)
rc=0
wait_exit $crash 60 || rc=$?
check "the chief is killed during its first save after the restore" "137" "$rc"
# The checkpoint named $last may hold step $last + 1: its name is global_step read just
# before the save, and the other worker's step in flight can land in between (as in TF1).
# Restored at $last, the chief's first save is at $last + 10; restored at $last + 1, a step
# with no checkpoint of its own, CheckpointSaverHook saves at once, as TF1's does.
n=$(sed -n 's/.*Saving checkpoints for \([0-9]*\) into.*/\1/p' "$WORK/crash.log" | tail -1)
r=$last
[ "$n" = $((last + 1)) ] && r=$((last + 1))
check "... which was of step $n ($last + 10, or at once when the restored step was $last + 1)" "yes" \
  "$([ "$n" = $((last + 10)) ] || [ "$n" = $((last + 1)) ] && echo yes || echo "no: '$n'")"
check "... and left its data file but no index" "model.ckpt-$n.data-00000-of-00001 no index" \
  "$(cd "$CK" && ls model.ckpt-$n.* | tr '\n' ' ')$([ -e "$CK/model.ckpt-$n.index" ] || echo "no index")"
check "the latest checkpoint is still the previous one" "$last" "$(ckpt_step)"
task w0c --job_name=worker --task_index=0 --last_step=340
rc=0
wait_exit "$PID_w0c" 60 || rc=$?
check "the restarted chief restores the previous checkpoint" \
  "INFO:tensorflow:Restoring parameters from $CK/model.ckpt-$last" "$(grep -m1 Restoring "$WORK/w0c.log")"
check "... and trains on from it" "0 worker 0 step $((r + 1)) 340" \
  "$rc $(grep -m1 'worker 0 step' "$WORK/w0c.log") $(ckpt_step)"
[ $FAILS -gt 0 ] && tail -n 15 "$WORK"/*.log
finish
