#!/usr/bin/env bash
# tf.data in a cluster. A pipeline runs in the interpreter of the process whose script built
# it, so its iterator's ops go to that process's own task whatever device the script named,
# and the elements reach their consumers on other tasks by Send/Recv. Expected output from
# real TF (the same program with its three tasks as in-process servers). A script with no
# server of its own cannot serve a pipeline to a remote master: said at once, not hung.
. "$(dirname "$0")/lib.sh"
read -r P W0 W1 <<<"$(free_ports 3)"
SPEC="{\"ps\": [\"localhost:$P\"], \"worker\": [\"localhost:$W0\", \"localhost:$W1\"]}"
start_task ps --cluster "$SPEC" --job ps --task 0
start_task w1 --cluster "$SPEC" --job worker --task 1
cat >"$WORK/client.py" <<PY
import tensorflow as tf
cluster = tf.train.ClusterSpec($SPEC)
server = tf.train.Server(cluster, job_name="worker", task_index=0)
ds = tf.data.Dataset.from_tensor_slices([1.0, 2.0, 3.0]).map(lambda x: x * 2.0).batch(2)
with tf.device("/job:worker/task:1"):
    it = tf.data.make_initializable_iterator(ds)
    x = it.get_next()
    y = x + 1.0
with tf.device("/job:ps/task:0"):
    s = tf.reduce_sum(y)
with tf.Session(server.target) as sess:
    for epoch in range(2):
        sess.run(it.initializer)
        while True:
            try:
                print(sess.run([y, s]))
            except tf.errors.OutOfRangeError:
                print("end of epoch", epoch)
                break
PY
wait_for "$WORK/ps.log" "serving on"
wait_for "$WORK/w1.log" "serving on"
check "an iterator placed on another task runs here; its elements go there" "[array([3., 5.], dtype=float32), 8.0]
[array([7.], dtype=float32), 7.0]
end of epoch 0
[array([3., 5.], dtype=float32), 8.0]
[array([7.], dtype=float32), 7.0]
end of epoch 1" "$(timeout 120 "$TFSH" "$WORK/client.py" 2>&1 | tail -6)"
cat >"$WORK/remote.py" <<PY
import tensorflow as tf
it = tf.data.Dataset.range(3).make_one_shot_iterator()
with tf.Session("grpc://localhost:$W1", config=tf.ConfigProto(device_filters=["/job:worker/task:1"])) as sess:
    try:
        sess.run(it.get_next())
    except tf.errors.UnimplementedError as e:
        print("UnimplementedError:", str(e).split("\n")[0])
PY
check "a pipeline of a process outside the cluster is refused before the step" \
  "UnimplementedError: node 'IteratorGetNext' (_HostIteratorGetNext): a tf.data iterator runs in the process whose script built it, and that process is not this session's master: start a tf.train.Server in the script and run the session on its target, or feed the elements with feed_dict" \
  "$(timeout 60 "$TFSH" "$WORK/remote.py" 2>&1 | tail -1)"
finish
