#!/usr/bin/env bash
# Colocation on real tasks (2 ps + 1 worker): a variable, its initializer and read, the
# optimizer's update op and its slot all end on the variable's ps task, the placement view
# says why ("colocated with w"); a node colocated with v (its _class, as a GraphDef carries
# it) but pinned to another task fails without soft placement, the message naming both.
. "$(dirname "$0")/lib.sh"
read -r P0 P1 W0 <<<"$(free_ports 3)"
SPEC="{\"ps\": [\"localhost:$P0\", \"localhost:$P1\"], \"worker\": [\"localhost:$W0\"]}"
cat >"$WORK/client.py" <<PY
import tensorflow as tf
cluster = tf.train.ClusterSpec($SPEC)
with tf.device(tf.train.replica_device_setter(cluster=cluster, worker_device="/job:worker/task:0")):
    w = tf.Variable(tf.ones([2, 2]), name="w")
    b = tf.Variable(tf.zeros([2]), name="b")
    x = tf.constant([[1.0, 2.0]])
    loss = tf.reduce_sum(tf.matmul(x, w) + b)
    step = tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss)
with tf.Session("grpc://localhost:$W0") as sess:
    sess.run(tf.global_variables_initializer())
    md = tf.RunMetadata()
    sess.run(step, options=tf.RunOptions(output_partition_graphs=True), run_metadata=md)
    dev = {}
    for g in md.partition_graphs:
        for n in g.node:
            dev[n.name] = n.device
    for v in ["w", "b"]:
        names = [v, v + "/read", v + "/Momentum", "Momentum/update_%s/ApplyMomentum" % v]
        print("ran", v, " ".join(sorted(set(dev[n] for n in names))))
    tf._views_magic("placement", "")

with tf.Graph().as_default():
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(1.0, name="v")
    with tf.device("/job:ps/task:1"):
        y = tf._make_node("Identity", name="y", inputs=[v], attrs={"_class": ["loc:@v"], "T": tf.float32})
    for soft in [False, True]:
        with tf.Session("grpc://localhost:$W0", config=tf.ConfigProto(allow_soft_placement=soft)) as sess:
            try:
                sess.run(v.initializer)
                print("soft" if soft else "hard", "ran", sess.run(y.outputs[0]))
            except tf.errors.OpError as e:
                print("soft" if soft else "hard", "error", type(e).__name__, e.message)
PY
start_task ps0 --cluster "$SPEC" --job ps --task 0
start_task ps1 --cluster "$SPEC" --job ps --task 1
start_task w0 --cluster "$SPEC" --job worker --task 0
out=$(timeout 60 "$TFSH" "$WORK/client.py" 2>&1)
echo "$out" >"$WORK/out.txt"
check "w, its read, its slot and its update op ran on ps/0" \
  "ran w /job:ps/replica:0/task:0/device:CPU:0" "$(echo "$out" | grep '^ran w')"
check "b, its read, its slot and its update op ran on ps/1" \
  "ran b /job:ps/replica:0/task:1/device:CPU:0" "$(echo "$out" | grep '^ran b')"
row() { echo "$out" | grep -E "^$1 " | awk '{print $(NF-3), $(NF-2), $(NF-1), $NF}'; }
for n in w/Assign w/read w/Momentum w/Momentum/Assign Momentum/update_w/ApplyMomentum; do
  check "placement view: $n colocated with w" "/job:ps/replica:0/task:0/device:CPU:0 colocated with w" "$(row "$n")"
done
check "placement view: b's update op colocated with b" "/job:ps/replica:0/task:1/device:CPU:0 colocated with b" \
  "$(row Momentum/update_b/ApplyMomentum)"
check "an impossible colocation names both sides" \
  "hard error InvalidArgumentError Cannot colocate nodes 'v' and 'y': 'v' asks for /job:ps/task:0 but 'y' for /job:ps/task:1" \
  "$(echo "$out" | grep '^hard')"
check "with soft placement the group goes together" "soft ran 1.0" "$(echo "$out" | grep '^soft')"
finish
