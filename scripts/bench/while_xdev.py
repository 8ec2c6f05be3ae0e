# A tf.while_loop of N iterations whose body runs one tiny op on the other task:
# the loop on the worker, `s + 1.0` on the ps task each iteration, so every iteration sends
# the loop value to ps, the sum back, and the LoopCond's value to ps's control loop. Best
# wall time of a few sess.run after a warm-up. Run unchanged by tfsh and by TF 1.x
# (scripts/bench/while_xdev.sh): argv = PS_PORT WORKER_PORT N [inproc], where inproc starts
# the ps task in this process (TF's two in-process servers, gRPC between them).
import sys
import time
import tensorflow as tf

ps_port, wk_port, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
cluster = tf.train.ClusterSpec({"ps": ["localhost:" + ps_port], "worker": ["localhost:" + wk_port]})
if len(sys.argv) > 4:
    ps_server = tf.train.Server(cluster, job_name="ps", task_index=0)
server = tf.train.Server(cluster, job_name="worker", task_index=0)
with tf.device("/job:worker/task:0"):
    def body(i, s):
        with tf.device("/job:ps/task:0"):
            t = s + 1.0
        return i + 1, t
    i, s = tf.while_loop(lambda i, s: i < n, body, [tf.constant(0), tf.constant(0.0)])
with tf.Session(server.target) as sess:
    print(sess.run([i, s]))
    best = 1e9
    for _ in range(7):
        t0 = time.time()
        sess.run(s)
        best = min(best, time.time() - t0)
print("BEST %.6f" % best)
