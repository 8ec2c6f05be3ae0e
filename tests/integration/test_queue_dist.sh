#!/usr/bin/env bash
# A queue on a ps task (another process), used from a worker (its enqueue and dequeue ops
# are colocated with it, as TF's are; what consumes the dequeued tensors runs on the worker): a QueueRunner thread of the
# client fills it through the worker, the training loop drains it, closing it ends the
# epoch with OutOfRangeError; a dequeue blocked on the empty remote queue is cancelled by
# closing the session (from another thread), and the ps keeps serving afterwards.
. "$(dirname "$0")/lib.sh"
read -r A B <<<"$(free_ports 2)"
SPEC="{\"ps\": [\"localhost:$A\"], \"worker\": [\"localhost:$B\"]}"
start_task ps --cluster "$SPEC" --job ps --task 0
cat >"$WORK/client.py" <<PY
import threading
import time
import tensorflow as tf
cluster = tf.train.ClusterSpec($SPEC)
server = tf.train.Server(cluster, job_name="worker", task_index=0)
with tf.device("/job:ps/task:0"):
    q = tf.FIFOQueue(4, [tf.int32], shapes=[[]], shared_name="shared_q")
with tf.device("/job:worker/task:0"):
    src = tf.train.limit_epochs(tf.range(10), num_epochs=1)
    enq = q.enqueue_many([src])
    total = tf.reduce_sum(q.dequeue_many(2))
print(q.queue_ref.device, enq.device, total.device)
tf.train.add_queue_runner(tf.train.QueueRunner(q, [enq]))
with tf.Session(server.target) as sess:
    sess.run(tf.local_variables_initializer())
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess, coord)
    sums = []
    try:
        while True:
            sums.append(int(sess.run(total)))
    except tf.errors.OutOfRangeError:
        print("epoch over", sums)
    coord.request_stop()
    coord.join(threads)
# a dequeue waiting on the empty remote queue; another thread closes the session
with tf.device("/job:ps/task:0"):
    q2 = tf.FIFOQueue(4, [tf.int32], shapes=[[]], shared_name="empty_q")
sess = tf.Session(server.target)
closer = threading.Timer(0.5, sess.close)
closer.start()
t0 = time.time()
try:
    sess.run(q2.dequeue())
except (tf.errors.CancelledError, tf.errors.AbortedError, RuntimeError) as e:
    print("blocked dequeue cancelled:", type(e).__name__, time.time() - t0 < 10)
closer.join()
with tf.Session(server.target) as s2:
    print("ps still serving", s2.run(q.size()))
PY
wait_for "$WORK/ps.log" "serving on"
out=$(timeout 120 "$TFSH" "$WORK/client.py" 2>&1)
echo "$out"
check "the queue and its ops on the ps (colocated, as TF does), the sum on the worker" \
  "/job:ps/task:0 /job:ps/task:0 /job:worker/task:0" "$(echo "$out" | grep '^/job')"
check "closing the queue ends the epoch" "epoch over [1, 5, 9, 13, 17]" "$(echo "$out" | grep '^epoch over')"
check "session close cancels a blocked remote dequeue" "blocked dequeue cancelled: CancelledError True" \
  "$(echo "$out" | grep '^blocked dequeue')"
check "the ps keeps serving" "ps still serving 0" "$(echo "$out" | grep '^ps still')"
finish
