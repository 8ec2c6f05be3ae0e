#!/usr/bin/env bash
# In-graph replication from one client: one tower per worker task (/job:worker/task:0 and
# :1), the variables on the ps, the towers' gradients averaged and applied on the ps.
# The variables live on the ps across clients: a second client reconnects, finds them
# initialized with the values the first one trained, and goes on.
. "$(dirname "$0")/lib.sh"
read -r P0 W0 W1 <<<"$(free_ports 3)"
SPEC="{\"ps\": [\"localhost:$P0\"], \"worker\": [\"localhost:$W0\", \"localhost:$W1\"]}"
start_task ps --cluster "$SPEC" --job ps --task 0
start_task w0 --cluster "$SPEC" --job worker --task 0
start_task w1 --cluster "$SPEC" --job worker --task 1

cat >"$WORK/ingraph.py" <<PY
import sys
import tensorflow as tf
phase = sys.argv[1]
with tf.device("/job:ps/task:0"):
    w = tf.Variable(tf.zeros([3, 1]), name="w")
    b = tf.Variable(0.0, name="b")
    steps = tf.Variable(0, dtype=tf.int64, name="steps")
xs = [tf.constant([[1.0, 2.0, 3.0], [0.5, 0.5, 0.5]]), tf.constant([[2.0, 0.0, 1.0], [1.0, 1.0, 0.0]])]
ys = [tf.constant([[2.0], [1.0]]), tf.constant([[1.5], [1.0]])]
opt = tf.train.GradientDescentOptimizer(0.05)
tower_grads, losses = [], []
for i in range(2):
    with tf.device("/job:worker/task:%d" % i), tf.name_scope("tower_%d" % i):
        loss = tf.reduce_mean(tf.square(tf.matmul(xs[i], w) + b - ys[i]))
        losses.append(loss)
        tower_grads.append(opt.compute_gradients(loss, var_list=[w, b]))
with tf.device("/job:ps/task:0"):
    averaged = []
    for pairs in zip(*tower_grads):
        grads = [g for g, _ in pairs]
        averaged.append((tf.add_n(grads) / 2.0, pairs[0][1]))
    train_op = tf.group(opt.apply_gradients(averaged), tf.assign_add(steps, 1))
    total = tf.add_n(losses)
print("devices", tower_grads[0][0][0].device, tower_grads[1][0][0].device, averaged[0][0].device)
with tf.Session("grpc://localhost:$W0") as sess:
    if phase == "first":
        sess.run(tf.global_variables_initializer())
    else:
        print("uninitialized", list(sess.run(tf.report_uninitialized_variables())))
        print("resumed at step", sess.run(steps))
    before = sess.run(total)
    for _ in range(40):
        sess.run(train_op)
    after = sess.run(total)
    print("loss fell", after < before, "steps", sess.run(steps))
    if phase == "first":
        print("w", " ".join("%.6f" % v for v in sess.run(w).flatten().tolist() + [float(sess.run(b))]))
PY
out=$(timeout 60 "$TFSH" "$WORK/ingraph.py" first 2>&1)
check "towers on both workers, the average on the ps" \
  "devices /job:worker/task:0 /job:worker/task:1 /job:ps/task:0" "$(echo "$out" | grep '^devices')"
check "in-graph replication trains" "loss fell True steps 40" "$(echo "$out" | grep '^loss fell')"

# Reference: the same 40 steps in plain Python, each the average of the two towers' gradients.
cat >"$WORK/check.py" <<'PY'
import sys
got = [float(v) for v in sys.argv[1:]]
xs = [[[1.0, 2.0, 3.0], [0.5, 0.5, 0.5]], [[2.0, 0.0, 1.0], [1.0, 1.0, 0.0]]]
ys = [[2.0, 1.0], [1.5, 1.0]]
w, b = [0.0, 0.0, 0.0], 0.0
for _ in range(40):
    gw, gb = [0.0, 0.0, 0.0], 0.0
    for x, y in zip(xs, ys):
        r = [sum(xi * wi for xi, wi in zip(row, w)) + b - yi for row, yi in zip(x, y)]
        for j in range(3):
            gw[j] += sum(2 * row[j] * ri for row, ri in zip(x, r)) / len(r)
        gb += sum(2 * ri for ri in r) / len(r)
    w = [wj - 0.05 * g / 2 for wj, g in zip(w, gw)]
    b -= 0.05 * gb / 2
print("averaged gradients", max(abs(a - e) for a, e in zip(got, w + [b])) < 1e-4)
PY
check "the update is the towers' averaged gradient" "averaged gradients True" \
  "$(python3 "$WORK/check.py" $(echo "$out" | grep '^w ' | cut -d' ' -f2-) 2>&1 | tail -1)"

out=$(timeout 60 "$TFSH" "$WORK/ingraph.py" again 2>&1)
check "a reconnecting client finds the variables initialized" "uninitialized []" "$(echo "$out" | grep '^uninitialized')"
check "and their trained values" "resumed at step 40" "$(echo "$out" | grep '^resumed')"
check "and trains on" "loss fell True steps 80" "$(echo "$out" | grep '^loss fell')"
finish
