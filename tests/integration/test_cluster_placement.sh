#!/usr/bin/env bash
# TF1 placement facts: replica_device_setter sends successive variables round-robin over
# the ps tasks and everything else to the worker device; the greedy strategy balances
# bytes; nested tf.device scopes merge field by field; tf.device(None) clears. Then the
# same graph on real tasks (2 ps + 1 worker): each variable lives on the ps task it was
# given, and the placer's fully specified devices say so.
. "$(dirname "$0")/lib.sh"
read -r P0 P1 W0 <<<"$(free_ports 3)"
SPEC="{\"ps\": [\"localhost:$P0\", \"localhost:$P1\"], \"worker\": [\"localhost:$W0\"]}"
cat >"$WORK/facts.py" <<PY
import tensorflow as tf
cluster = tf.train.ClusterSpec($SPEC)
with tf.device(tf.train.replica_device_setter(cluster=cluster, worker_device="/job:worker/task:0")):
    a = tf.Variable(1.0, name="a")
    b = tf.Variable(2.0, name="b")
    c = tf.Variable(3.0, name="c")
    s = a + b * c
print("round-robin", a.device, b.device, c.device)
print("other ops", s.device)
with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
    d = tf.Variable(0.0, name="d")
    e = tf.Variable(0.0, name="e")
    f = d + e
print("ps_tasks", d.device, e.device, f.device)
greedy = tf.contrib.training.GreedyLoadBalancingStrategy(2)
with tf.device(tf.train.replica_device_setter(ps_tasks=2, ps_strategy=greedy)):
    big = tf.Variable(tf.zeros([1000]), name="big")
    s1 = tf.Variable(tf.zeros([10]), name="s1")
    s2 = tf.Variable(tf.zeros([10]), name="s2")
    s3 = tf.Variable(tf.zeros([2000]), name="s3")
    s4 = tf.Variable(tf.zeros([10]), name="s4")
print("greedy", big.device, s1.device, s2.device, s3.device, s4.device)
with tf.device("/job:ps"):
    with tf.device("/task:1"):
        with tf.device("/cpu:0"):
            n = tf.constant(1.0, name="n")
            with tf.device(None):
                m = tf.constant(2.0, name="m")
print("nested", n.device)
print("none", repr(m.device))
with tf.device("/job:worker/task:0"):
    with tf.device("/job:ps"):
        o = tf.constant(3.0, name="o")
print("inner job wins", o.device)
with tf.Session("grpc://localhost:$W0") as sess:
    sess.run(tf.variables_initializer([a, b, c]))
    print("value", sess.run(s))
with tf.Graph().as_default():   # a fresh client graph: the variables are found by name
    with tf.device("/job:ps/task:1"):
        b2 = tf.Variable(0.0, name="b")
    with tf.Session("grpc://localhost:$W0") as sess:
        on_ps1 = sess.run(b2)
with tf.Graph().as_default():
    with tf.device("/job:ps/task:0"):
        b3 = tf.Variable(0.0, name="b")
    with tf.Session("grpc://localhost:$W0") as sess:
        print("b lives on ps/1", on_ps1, sess.run(tf.is_variable_initialized(b3)))
PY
start_task ps0 --cluster "$SPEC" --job ps --task 0
start_task ps1 --cluster "$SPEC" --job ps --task 1
start_task w0 --cluster "$SPEC" --job worker --task 0
out=$(timeout 60 "$TFSH" "$WORK/facts.py" 2>&1)
check "replica_device_setter: variables round-robin over ps tasks" \
  "round-robin /job:ps/task:0 /job:ps/task:1 /job:ps/task:0" "$(echo "$out" | grep '^round-robin')"
check "replica_device_setter: everything else on the worker device" "other ops /job:worker/task:0" \
  "$(echo "$out" | grep '^other ops')"
check "replica_device_setter(ps_tasks=2)" "ps_tasks /job:ps/task:0 /job:ps/task:1 /job:worker" "$(echo "$out" | grep '^ps_tasks')"
check "greedy strategy: the ps task with the fewest bytes" \
  "greedy /job:ps/task:0 /job:ps/task:1 /job:ps/task:1 /job:ps/task:1 /job:ps/task:0" "$(echo "$out" | grep '^greedy')"
check "nested /job:ps -> /task:1 -> /cpu:0" "nested /job:ps/task:1/device:CPU:0" "$(echo "$out" | grep '^nested')"
check "tf.device(None) clears" "none ''" "$(echo "$out" | grep '^none')"
check "an inner scope's field wins" "inner job wins /job:ps/task:0" "$(echo "$out" | grep '^inner job wins')"
check "the graph runs where it was placed" "value 7.0" "$(echo "$out" | grep '^value')"
check "b was initialized on ps/1 only" "b lives on ps/1 2.0 False" "$(echo "$out" | grep '^b lives')"
finish
