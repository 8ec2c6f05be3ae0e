# A task killed while its peers' threads send: THREADS threads loop steps that carry a
# 4 MiB tensor from task 1 to task 0; when task 1 dies, every thread's step ends with TF's
# UnavailableError naming task 1, within 2 s, and no thread hangs. argv: target, threads.
import sys
import threading
import time
import tensorflow as tf

target, n = sys.argv[1], int(sys.argv[2])
with tf.device("/job:worker/task:1"):
    x = tf.random_uniform([1 << 20])
with tf.device("/job:worker/task:0"):
    y = tf.reduce_sum(x)
sess = tf.Session(target)
ended, lock = [], threading.Lock()
running = threading.Barrier(n + 1)


def loop():
    first = True
    while True:
        try:
            sess.run(y)
        except tf.errors.OpError as e:
            with lock:
                ended.append((type(e).__name__, "/job:worker/replica:0/task:1" in str(e), time.time()))
            return
        if first:
            first = False
            running.wait()


threads = [threading.Thread(target=loop) for _ in range(n)]
for t in threads:
    t.start()
running.wait()
print("running", flush=True)
for t in threads:
    t.join(30)
killed = float(open(sys.argv[3]).read()) if len(sys.argv) > 3 else 0.0
print("hung", sum(t.is_alive() for t in threads))
print("errors", sorted(set((k, named) for k, named, _ in ended)))
late = [round(at - killed, 2) for _, _, at in ended if at - killed >= 2.0]
print("within 2 s", not late, *late)
