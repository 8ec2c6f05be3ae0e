#!/usr/bin/env bash
# The session-run hooks, one script each, in one process (Session('')), with deterministic
# output: a user SessionRunHook subclass, StopAtStepHook (last_step, then num_steps after a
# restore from checkpoint_dir), CheckpointSaverHook, LoggingTensorHook, NanTensorHook (raise
# and stop), StepCounterHook, SummarySaverHook (the event file parsed back), and
# MonitoredSession / SingularMonitoredSession closed by hand; Supervisor.loop.
. "$(dirname "$0")/lib.sh"
cd "$WORK" || exit 1
run() {   # run NAME: stdout in NAME.out, stderr's tensorflow lines in NAME.log
  timeout 60 "$TFSH" "$1.py" >"$1.out" 2>"$1.err"
  echo "rc $?" >>"$1.out"
  grep -E '^(INFO|WARNING|ERROR):tensorflow:' "$1.err" | sed 's/^[A-Z]*:tensorflow://' >"$1.log"
}
HEAD='import tensorflow as tf
tf.logging.set_verbosity(tf.logging.INFO)
x = tf.placeholder(tf.float32, [], name="x")
gs = tf.train.get_or_create_global_step()
v = tf.Variable(10.0, name="v")
train_op = tf.group(tf.assign_add(gs, 1), tf.assign_sub(v, 1.0), name="train")
NO = dict(save_checkpoint_secs=None, save_summaries_steps=None, log_step_count_steps=None)'

cat >user.py <<PY
$HEAD
class Recorder(tf.train.SessionRunHook):
    def begin(self):
        print("begin")
    def after_create_session(self, session, coord):
        print("after_create_session at step %d" % session.run(gs))
    def before_run(self, run_context):
        return tf.train.SessionRunArgs(x * 2.0, feed_dict=None)
    def after_run(self, run_context, run_values):
        print("after_run: x*2 = %.1f, caller fetched %s" % (run_values.results, run_context.original_args.fetches.name))
        if run_values.results >= 6.0:
            run_context.request_stop()
    def end(self, session):
        print("end at step %d" % session.run(gs))
with tf.train.MonitoredTrainingSession(hooks=[Recorder()], **NO) as sess:
    i = 0
    while not sess.should_stop():
        i += 1
        sess.run(train_op, feed_dict={x: float(i)})
print("stopped after", i, "runs; should_stop", sess.should_stop())
PY
run user
check "SessionRunHook subclass: begin, after_create_session, before/after_run, request_stop, end" \
"begin
after_create_session at step 0
after_run: x*2 = 2.0, caller fetched train
after_run: x*2 = 4.0, caller fetched train
after_run: x*2 = 6.0, caller fetched train
end at step 3
stopped after 3 runs; should_stop True
rc 0" "$(cat user.out)"

cat >stop.py <<PY
$HEAD
hooks = [tf.train.StopAtStepHook(last_step=6), tf.train.CheckpointSaverHook("ck", save_steps=4)]
with tf.train.MonitoredTrainingSession(hooks=hooks, **NO) as sess:
    while not sess.should_stop():
        _, step = sess.run([train_op, gs])
    print("last_step=6: stopped at", step)
print("latest", tf.train.latest_checkpoint("ck"))
with tf.train.MonitoredTrainingSession(checkpoint_dir="ck", hooks=[tf.train.StopAtStepHook(num_steps=3)],
                                       save_checkpoint_steps=100, save_summaries_steps=None, log_step_count_steps=None) as sess:
    print("restored at", sess.run(gs), "v", sess.run(v))
    while not sess.should_stop():
        _, step = sess.run([train_op, gs])
    print("num_steps=3: stopped at", step)
print("latest", tf.train.latest_checkpoint("ck"))
PY
run stop
check "StopAtStepHook last_step / num_steps, restore from checkpoint_dir" \
"last_step=6: stopped at 6
latest ck/model.ckpt-6
restored at 6 v 4.0
num_steps=3: stopped at 9
latest ck/model.ckpt-9
rc 0" "$(cat stop.out)"
check "CheckpointSaverHook: at creation, every 4 steps, at the end; no re-save of a restored step" \
"Saving checkpoints for 0 into ck/model.ckpt.
Saving checkpoints for 4 into ck/model.ckpt.
Saving checkpoints for 6 into ck/model.ckpt.
Restoring parameters from ck/model.ckpt-6
Saving checkpoints for 9 into ck/model.ckpt." "$(grep -E 'Saving|Restoring' stop.log)"
check "checkpoint files" "model.ckpt-0 model.ckpt-4 model.ckpt-6 model.ckpt-9" \
  "$(ls ck | sed -n 's/\.index$//p' | tr '\n' ' ' | sed 's/ $//')"

cat >logging.py <<PY
$HEAD
hooks = [tf.train.StopAtStepHook(last_step=5),
         tf.train.LoggingTensorHook({"x": x, "double": x * 2.0}, every_n_iter=2),
         tf.train.LoggingTensorHook([x], every_n_iter=4, formatter=lambda d: "formatted x=%.0f" % d["x:0"]),
         tf.train.LoggingTensorHook({"x_at_end": x}, at_end=True)]
sess = tf.train.MonitoredTrainingSession(hooks=hooks, **NO)
i = 0
while not sess.should_stop():
    i += 1
    sess.run(train_op, feed_dict={x: float(i)})
sess.close()
print("closed by hand after", i)
PY
sed -i 's/"x_at_end": x}/"x_at_end": tf.constant(7.0)}/' logging.py
run logging
check "LoggingTensorHook: every_n_iter, formatter, at_end" \
"double = 2.0, x = 1.0
formatted x=1
double = 6.0, x = 3.0 (N sec)
double = 10.0, x = 5.0 (N sec)
formatted x=5
x_at_end = 7.0" "$(grep -vE 'Graph was|local_init' logging.log | sed -E 's/\([0-9.]+ sec\)/(N sec)/')"
check "MonitoredTrainingSession closed by hand" "closed by hand after 5
rc 0" "$(cat logging.out)"

cat >nan.py <<PY
$HEAD
import sys
loss = tf.identity(x, name="loss")
fail = sys.argv[1] == "fail"
try:
    with tf.train.MonitoredTrainingSession(hooks=[tf.train.NanTensorHook(loss, fail_on_nan_loss=fail)], **NO) as sess:
        for i in [1.0, 2.0, float("nan"), 4.0]:
            if sess.should_stop():
                break
            sess.run(train_op, feed_dict={x: i})
            print("ran with loss", i)
    print("stopped before loss", i)
except tf.train.NanLossDuringTrainingError as e:
    print("NanLossDuringTrainingError:", e)
PY
timeout 30 "$TFSH" nan.py fail >nan.out 2>nan.err
check "NanTensorHook(fail_on_nan_loss=True) raises" "ran with loss 1.0
ran with loss 2.0
NanLossDuringTrainingError: NaN loss during training." "$(cat nan.out)"
check "... and logs an error" "ERROR:tensorflow:Model diverged with loss = NaN." "$(grep Model nan.err)"
timeout 30 "$TFSH" nan.py stop >nan2.out 2>nan2.err
check "NanTensorHook(fail_on_nan_loss=False) stops" "ran with loss 1.0
ran with loss 2.0
ran with loss nan
stopped before loss 4.0" "$(cat nan2.out)"

cat >counter.py <<PY
$HEAD
hooks = [tf.train.StopAtStepHook(last_step=9), tf.train.StepCounterHook(every_n_steps=4, output_dir="sc")]
with tf.train.MonitoredTrainingSession(hooks=hooks, **NO) as sess:
    while not sess.should_stop():
        sess.run(train_op)
PY
run counter
check "StepCounterHook logs global_step/sec every 4 steps" "global_step/sec: N
global_step/sec: N" "$(grep global_step counter.log | sed -E 's/: [0-9.e+-]+$/: N/')"

cat >summ.py <<PY
$HEAD
tf.summary.scalar("xval", x)
hooks = [tf.train.StopAtStepHook(last_step=7)]
with tf.train.MonitoredTrainingSession(checkpoint_dir="logs", hooks=hooks, save_summaries_steps=3,
                                       save_checkpoint_secs=None, log_step_count_steps=None) as sess:
    i = 0
    while not sess.should_stop():
        i += 1
        sess.run(train_op, feed_dict={x: i * 10.0})
PY
run summ
cat >events.py3 <<'PY'
import glob, struct, sys
def varint(b, i):
    r = s = 0
    while True:
        c = b[i]; i += 1; r |= (c & 0x7f) << s; s += 7
        if c < 0x80: return r, i
def fields(b):
    i, out = 0, []
    while i < len(b):
        k, i = varint(b, i)
        f, t = k >> 3, k & 7
        if t == 0: v, i = varint(b, i)
        elif t == 1: v = b[i:i + 8]; i += 8
        elif t == 5: v = b[i:i + 4]; i += 4
        elif t == 2: n, i = varint(b, i); v = b[i:i + n]; i += n
        out.append((f, v))
    return out
for path in sorted(glob.glob(sys.argv[1] + "/events.out.tfevents.*")):
    data = open(path, "rb").read()
    i = 0
    while i < len(data):
        n, = struct.unpack("<Q", data[i:i + 8]); rec = data[i + 12:i + 12 + n]; i += 16 + n
        ev = dict(fields(rec))
        if 5 in ev:
            for f, val in fields(ev[5]):
                vd = dict(fields(val))
                print("step %d %s=%g" % (ev.get(2, 0), vd[1].decode(), struct.unpack("<f", vd[2])[0]))
PY
# Every 3 steps as TF1 counts them: its "stale" global step is read in the same run as the
# train op, before or after the increment (a race in TF1 too), so the gap may be 2 or 3.
ev=$(python3 events.py3 logs | grep xval)
check "SummarySaverHook: first summary at step 1, last at 7" "step 1 xval=10 step 7 xval=70" \
  "$(echo "$ev" | head -1) $(echo "$ev" | tail -1)"
check "... each recorded at the global step of the run that made it, 2-3 steps apart" "ok" \
  "$(echo "$ev" | awk '{ split($3, a, "="); if (a[2] != $2 * 10) bad = 1; if (NR > 1 && ($2 - p < 2 || $2 - p > 3)) bad = 1; p = $2 } END { print bad ? "bad: " NR : "ok" }')"

cat >singular.py <<PY
$HEAD
sess = tf.train.SingularMonitoredSession(hooks=[tf.train.StopAtStepHook(num_steps=2)])
while not sess.should_stop():
    sess.run(train_op)
print("raw session step", sess.raw_session().run(gs))
sess.close()
with tf.train.MonitoredSession(session_creator=tf.train.ChiefSessionCreator(), hooks=[tf.train.FinalOpsHook(v * 1.0)]) as sess:
    sess.run(train_op)
print("MonitoredSession ran, v", sess.should_stop())
PY
sed -i 's/hooks=\[tf.train.FinalOpsHook(v \* 1.0)\]) as sess:/hooks=[fin]) as sess:/; s/^with tf.train.MonitoredSession/fin = tf.train.FinalOpsHook(v * 1.0)\nwith tf.train.MonitoredSession/; s/print("MonitoredSession ran, v", sess.should_stop())/print("MonitoredSession ran, final v", fin.final_ops_values)/' singular.py
run singular
check "SingularMonitoredSession, MonitoredSession(ChiefSessionCreator), FinalOpsHook" "raw session step 2
MonitoredSession ran, final v 9.0
rc 0" "$(cat singular.out)"
# Supervisor.loop: the target runs at once and then when its interval has passed (None:
# after every step), on the supervised session's runs; a target's own runs start nothing;
# nothing after request_stop; the loopers join like threads.
cat >svloop.py <<PY
$HEAD
sv = tf.train.Supervisor(logdir=None, global_step=gs, save_model_secs=0, summary_op=None)
with sv.managed_session("") as sess:
    calls = []
    def report(tag):
        calls.append(sess.run(gs))
        print("%s at step %d" % (tag, calls[-1]))
    every = sv.loop(None, report, args=("every step",))
    hourly = sv.loop(3600, report, kwargs={"tag": "hourly"})
    for i in range(2):
        sess.run(train_op)
    sv.request_stop()
    sess.run(train_op)
print("calls", calls, "runs", every.runs, hourly.runs)
sv.stop(threads=[every, hourly])
print("stopped")
PY
run svloop
check "Supervisor.loop" "every step at step 0
hourly at step 0
every step at step 1
every step at step 2
calls [0, 0, 1, 2] runs 3 1
stopped
rc 0" "$(cat svloop.out)"
[ $FAILS -gt 0 ] && tail -n 5 "$WORK"/*.err
finish
