#!/usr/bin/env bash
# Loops and conds whose own ops run on two tasks, as TF1's partitioner builds
# them (control loops per partition, dead values sent as markers, rendezvous keys that name
# the frame and iteration). Expected outputs from real TF: the same programs under
# tf.compat.v1, with the ps task and the worker as two in-process tf.train.Server's.
. "$(dirname "$0")/lib.sh"
read -r P W <<<"$(free_ports 2)"
SPEC="{\"ps\": [\"localhost:$P\"], \"worker\": [\"localhost:$W\"]}"
start_task ps --cluster "$SPEC" --job ps --task 0
cat >"$WORK/loops.py" <<PY
import tensorflow as tf
cluster = tf.train.ClusterSpec($SPEC)
server = tf.train.Server(cluster, job_name="worker", task_index=0,
                         config=tf.ConfigProto(device_count={"CPU": 2}))
PS, WK = "/job:ps/task:0", "/job:worker/task:0"
with tf.device(PS):
    w = tf.Variable([1.0, 2.0], name="w")
    counter = tf.Variable(0.0, name="counter")
    table = tf.Variable([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], name="table")
p = tf.placeholder(tf.bool, [])
with tf.device(WK):
    # (a) each iteration runs an op on ps, with a data dependency back
    def body_a(i, acc):
        with tf.device(PS):
            c = tf.assign_add(counter, 1.0)
            y = w * tf.cast(i, tf.float32) + tf.identity(c)
        return i + 1, acc + y
    na, ta = tf.while_loop(lambda i, acc: i < 5, body_a, [tf.constant(0), tf.zeros([2])],
                           parallel_iterations=1)
    # (b) nested loops, the inner body split
    def outer(i, acc):
        def inner(j, a):
            with tf.device(PS):
                z = w * tf.cast(i * 10 + j, tf.float32)
            return j + 1, a + z
        _, a2 = tf.while_loop(lambda j, a: j < i, inner, [tf.constant(0), acc])
        return i + 1, a2
    nb, tb = tf.while_loop(lambda i, acc: i < 4, outer, [tf.constant(0), tf.zeros([2])])
    # (c) a cond whose taken branch runs on both tasks
    x = tf.constant(2.0)
    def branch():
        with tf.device(PS):
            y = x * 3.0 + w[0]
        return y + 1.0
    r = tf.cond(p, branch, lambda: x)
    # (d) gradients of a loss from a split loop, w.r.t. ps variables
    def body_d(i, acc):
        with tf.device(PS):
            row = tf.gather(table, i)
            y = w * row
        return i + 1, acc + y * tf.cast(i + 1, tf.float32)
    _, td = tf.while_loop(lambda i, acc: i < 3, body_d, [tf.constant(0), tf.zeros([2])])
    loss = tf.reduce_sum(td * td)
    gw, gt = tf.gradients(loss, [w, table])
    gt = tf.convert_to_tensor(gt)
    with tf.device(PS):   # the gradient loop on ps: the forward loop pushes on ps's stacks
        gw2, gt2 = tf.gradients(loss, [w, table])
        gt2 = tf.convert_to_tensor(gt2)
    # (e) parallel_iterations=10, split body
    def body_e(i, acc):
        with tf.device(PS):
            y = tf.reduce_sum(w * tf.cast(i, tf.float32))
        return i + 1, acc + y
    ne, te = tf.while_loop(lambda i, acc: i < 100, body_e, [tf.constant(0), tf.constant(0.0)],
                           parallel_iterations=10)
    # (g) the loop variable comes straight back from ps (its NextIteration's input), and a
    # nested loop split over ps and both CPUs of the worker (partitioned again per device)
    def body_g(i, s):
        with tf.device(PS):
            t = s + 1.0
        return i + 1, t
    ng, tg = tf.while_loop(lambda i, s: i < 10, body_g, [tf.constant(0), tf.constant(0.0)])
    def outer_h(i, acc):
        def inner(j, a):
            with tf.device(PS):
                z = w * tf.cast(i * 10 + j, tf.float32)
            with tf.device(WK + "/cpu:1"):
                z2 = z * 2.0
            return j + 1, a + z2
        _, a2 = tf.while_loop(lambda j, a: j < i, inner, [tf.constant(0), acc])
        return i + 1, a2
    _, th = tf.while_loop(lambda i, acc: i < 4, outer_h, [tf.constant(0), tf.zeros([2])])
with tf.Session(server.target) as sess:
    sess.run(tf.global_variables_initializer())
    v = sess.run([na, ta]); print("a", int(v[0]), v[1].tolist(), sess.run(counter))
    v = sess.run([nb, tb]); print("b", int(v[0]), v[1].tolist())
    print("c", sess.run(r, {p: False}), sess.run(r, {p: True}))
    v = sess.run([td, loss, gw, gt]); print("d", v[0].tolist(), float(v[1]), v[2].tolist(), v[3].tolist())
    v = sess.run([gw2, gt2]); print("d2", v[0].tolist(), v[1].tolist())
    v = sess.run([ne, te]); print("e", int(v[0]), float(v[1]))
    v = sess.run([ng, tg, th]); print("g", int(v[0]), float(v[1]), v[2].tolist())
PY
wait_for "$WORK/ps.log" "serving on"
check "split loop bodies, a nested split loop, a split cond, gradients, parallel iterations" \
"a 5 [25.0, 35.0] 5.0
b 4 [144.0, 288.0]
c 2.0 8.0
d [22.0, 56.0] 3620.0 [968.0, 3136.0] [[44.0, 224.0], [88.0, 448.0], [132.0, 672.0]]
d2 [968.0, 3136.0] [[44.0, 224.0], [88.0, 448.0], [132.0, 672.0]]
e 100 14850.0
g 10 10.0 [288.0, 576.0]" "$(timeout 120 "$TFSH" "$WORK/loops.py" 2>&1 | tail -7)"
# (f) an error in the ps part of a loop body ends the step on both tasks, naming the task
# and the node. TF: "From /job:ps/replica:0/task:0:\nindices[0] = 3 is not in [0, 3)\n\t
# [[{{node while_1/GatherV2}}]]" and "ratio : Tensor had Inf values\n\t [[{{node
# while_2/CheckNumerics}}]]" (tfsh's tf.gather builds a Gather), then w is unchanged. Last,
# tfsh's own views (not TF's): the trace records of the ps task's part of a loop name their
# frame and iteration, as the loop's own device's do.
cat >"$WORK/errors.py" <<PY
import tensorflow as tf
cluster = tf.train.ClusterSpec($SPEC)
server = tf.train.Server(cluster, job_name="worker", task_index=0)
PS, WK = "/job:ps/task:0", "/job:worker/task:0"
with tf.device(PS):
    w = tf.Variable([1.0, 2.0], name="w")
    table = tf.Variable([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], name="table")
with tf.device(WK):
    def body_d(i, acc):
        with tf.device(PS):
            row = tf.gather(table, [i])[0]
            y = w * row
        return i + 1, acc + y * tf.cast(i + 1, tf.float32)
    _, td = tf.while_loop(lambda i, acc: i < 3, body_d, [tf.constant(0), tf.zeros([2])])
    _, bad = tf.while_loop(lambda i, acc: i < 5, body_d, [tf.constant(0), tf.zeros([2])],
                           parallel_iterations=1)
    def body_n(i, acc):
        with tf.device(PS):
            y = tf.debugging.check_numerics(w / tf.cast(2 - i, tf.float32), "ratio")
        return i + 1, acc + y
    _, tn = tf.while_loop(lambda i, acc: i < 4, body_n, [tf.constant(0), tf.zeros([2])])
with tf.Session(server.target) as sess:
    sess.run(tf.global_variables_initializer())
    for t in [bad, tn]:
        try:
            sess.run(t)
        except tf.errors.InvalidArgumentError as e:
            print(repr(str(e)))
    print(sess.run(td).tolist(), sess.run(w))
    # views: the ps task's records of the loop's nodes carry frame and iteration too
    md = tf.RunMetadata()
    sess.run(td, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=md)
    for d in md.step_stats.dev_stats:
        if "ps" in d.device:
            print(sorted(n.timeline_label.split(" [")[1] for n in d.node_stats if n.node_name == "while/mul"))
PY
check "an error in the remote part of a loop ends the step, naming task and node" \
"'/job:ps/replica:0/task:0: indices[0] = 3 is not in [0, 3)\\n\\t [[node while_1/Gather (op: Gather)]]'
'/job:ps/replica:0/task:0: ratio : Tensor had Inf values\\n\\t [[node while_2/CheckNumerics (op: CheckNumerics)]]'
[22.0, 56.0] [1. 2.]
['while/while_context:0]', 'while/while_context:1]', 'while/while_context:2]']" "$(timeout 60 "$TFSH" "$WORK/errors.py" 2>&1 | tail -4)"
finish
