#!/usr/bin/env bash
# Resource variables on a ps task (replica_device_setter), trained by two workers with
# between-graph replication: VarHandleOp on the ps, and every op that takes its handle
# (reads, Adam's ResourceApplyAdam, its slots' ops) colocated with it there, even one the
# program pins to the worker (TF ignores that request); global_step ends at workers x steps;
# the chief's checkpoint restores into fresh resource variables, and into ref variables of the
# same names, in a local session, with the values the ps holds.
. "$(dirname "$0")/lib.sh"
read -r P0 W0 W1 <<<"$(free_ports 3)"
STEPS=20
cat >"$WORK/trainer.py" <<'PY'
import time
import tensorflow as tf

flags = tf.app.flags
flags.DEFINE_string("ps_hosts", "", "ps")
flags.DEFINE_string("worker_hosts", "", "workers")
flags.DEFINE_string("job_name", "", "ps or worker")
flags.DEFINE_integer("task_index", 0, "task")
flags.DEFINE_integer("steps", 10, "steps per worker")
flags.DEFINE_string("ckpt", "", "checkpoint prefix (chief)")
FLAGS = flags.FLAGS

def main(_):
    cluster = tf.train.ClusterSpec({"ps": FLAGS.ps_hosts.split(","), "worker": FLAGS.worker_hosts.split(",")})
    server = tf.train.Server(cluster, job_name=FLAGS.job_name, task_index=FLAGS.task_index)
    if FLAGS.job_name == "ps":
        print("ps: joining", flush=True)
        server.join()
        return
    me = "/job:worker/task:%d" % FLAGS.task_index
    with tf.device(tf.train.replica_device_setter(worker_device=me, cluster=cluster)):
        global_step = tf.train.get_or_create_global_step()
        x = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        y = tf.constant([[1.0], [2.0], [3.0]])
        with tf.variable_scope("model", use_resource=True):
            w = tf.get_variable("w", initializer=tf.zeros([2, 1]))
            b = tf.get_variable("b", initializer=tf.constant(0.0))
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
        train_op = tf.train.AdamOptimizer(0.05).minimize(loss, global_step=global_step)
        with tf.device(me):
            pinned = w.value()   # asks for the worker; the handle's ps wins
        init_op = tf.global_variables_initializer()
        uninitialized = tf.report_uninitialized_variables()
        saver = tf.train.Saver()
    print("types", w.op.type, w.dtype.name, sorted(set(op.type for op in tf.get_default_graph().get_operations()
                                                   if op.type.startswith("ResourceApply"))), flush=True)
    with tf.Session(server.target) as sess:
        if FLAGS.task_index == 0:
            sess.run(init_op)
        else:
            while len(sess.run(uninitialized)) > 0:
                time.sleep(0.02)
        # The baseline is the initialized model's loss (w = 0, b = 0: mean(y^2)), not a loss
        # read when this worker starts: worker 1 starts after some of worker 0's steps, and
        # Adam's loss is not monotone here (it swings about the optimum: 0.014 at step 5,
        # 0.78 at 11, 0.001 at 18, 0.023 at 40), so a start that lands in a dip made
        # "loss fell" False on any binary (f5f1f52's too, 3 of 8 runs).
        first = sum(v * v for v in [1.0, 2.0, 3.0]) / 3
        sess.run(loss)
        md = tf.RunMetadata()
        sess.run(train_op, options=tf.RunOptions(output_partition_graphs=True), run_metadata=md)
        sess.run(pinned, options=tf.RunOptions(output_partition_graphs=True), run_metadata=md)
        dev = {}
        for g in md.partition_graphs:
            for n in g.node:
                dev[n.name] = n.device
        places = sorted(set(d for n, d in dev.items()
                            if n.startswith("model/") or "Resource" in n or "ReadVariableOp" in n))
        print("placed", " ".join(places), flush=True)
        print("pinned read on", dev.get(pinned.op.name), flush=True)
        for _ in range(FLAGS.steps - 1):
            sess.run(train_op)
        print("worker %d: done, loss fell %s" % (FLAGS.task_index, sess.run(loss) < first), flush=True)
        if FLAGS.ckpt:
            while sess.run(global_step) < 2 * FLAGS.steps:
                time.sleep(0.02)
            saver.save(sess, FLAGS.ckpt)
            print("values", sess.run(global_step), sess.run(w).ravel().tolist(), float(sess.run(b)), flush=True)

if __name__ == "__main__":
    tf.app.run()
PY
mkdir -p "$WORK/ckpt"
HOSTS=(--ps_hosts="localhost:$P0" --worker_hosts="localhost:$W0,localhost:$W1")
"$TFSH" "$WORK/trainer.py" "${HOSTS[@]}" --job_name=ps --task_index=0 >"$WORK/ps.log" 2>&1 &
PIDS+=($!)
timeout 60 "$TFSH" "$WORK/trainer.py" "${HOSTS[@]}" --job_name=worker --task_index=1 --steps=$STEPS >"$WORK/w1.log" 2>&1 &
w1=$!
timeout 60 "$TFSH" "$WORK/trainer.py" "${HOSTS[@]}" --job_name=worker --task_index=0 --steps=$STEPS \
  --ckpt="$WORK/ckpt/model" >"$WORK/w0.log" 2>&1 &
w0=$!
wait $w0 $w1
PS=/job:ps/replica:0/task:0/device:CPU:0
check "resource variables and ResourceApplyAdam" \
  "types VarHandleOp float32 ['ResourceApplyAdam']" "$(grep '^types' "$WORK/w0.log")"
check "handles, reads, slots and updates on the ps" "placed $PS" "$(grep '^placed' "$WORK/w0.log")"
check "a read pinned to the worker runs where the handle is" "pinned read on $PS" "$(grep '^pinned' "$WORK/w1.log")"
check "worker 0 trains" "worker 0: done, loss fell True" "$(grep '^worker 0' "$WORK/w0.log")"
check "worker 1 trains" "worker 1: done, loss fell True" "$(grep '^worker 1' "$WORK/w1.log")"
vals=$(grep '^values' "$WORK/w0.log")
check "global_step = workers x steps" "values $((2 * STEPS))" "$(echo "$vals" | cut -d' ' -f1-2)"
cat >"$WORK/restore.py" <<PY
import tensorflow as tf
for resource in [True, False]:
    with tf.Graph().as_default():
        gs = tf.train.get_or_create_global_step()
        with tf.variable_scope("model", use_resource=resource):
            w = tf.get_variable("w", [2, 1])
            b = tf.get_variable("b", [])
        with tf.Session() as sess:
            tf.train.Saver([gs, w, b]).restore(sess, "$WORK/ckpt/model")
            print("values", sess.run(gs), sess.run(w).ravel().tolist(), float(sess.run(b)))
PY
out=$(timeout 30 "$TFSH" "$WORK/restore.py" 2>&1)
check "the checkpoint restores resource variables" "$vals" "$(echo "$out" | sed -n 1p)"
check "and ref variables of the same names" "$vals" "$(echo "$out" | sed -n 2p)"
finish
