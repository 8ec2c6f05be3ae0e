# A session closed by another thread while its long steps run on a second task:
# the master's close deregisters the fragments there (worker DeregisterGraph) while RunGraph
# still runs them. Each round: a thread loops on a step of 40 chained 256x256 matmuls placed
# on /job:worker/task:1, the main thread closes the session 0.3 s in; the thread's run ends
# with CancelledError (in flight) or RuntimeError (started after the close), never anything
# else. argv: the target (task 0), rounds. Then a new session still runs on task 1.
import sys
import threading
import time
import tensorflow as tf

target, rounds = sys.argv[1], int(sys.argv[2])
with tf.device("/job:worker/task:1"):
    x = tf.random_normal([256, 256], seed=1) * 0.05
    y = x
    for _ in range(40):
        y = tf.tanh(tf.matmul(y, x))
    out = tf.reduce_sum(y)
ends = {}
steps = [0]


def loop(sess):
    try:
        while True:
            sess.run(out)
            steps[0] += 1
    except tf.errors.CancelledError as e:
        ends["CancelledError"] = ends.get("CancelledError", 0) + 1
    except RuntimeError as e:
        key = "RuntimeError " + str(e)
        ends[key] = ends.get(key, 0) + 1
    except Exception as e:
        key = "%s %s" % (type(e).__name__, e)
        ends[key] = ends.get(key, 0) + 1


t0 = time.time()
for _ in range(rounds):
    sess = tf.Session(target)
    th = threading.Thread(target=loop, args=(sess,))
    th.start()
    time.sleep(0.3)
    sess.close()
    th.join(30)
    if th.is_alive():
        print("a run outlived its session's close by 30 s")
        sys.exit(1)
odd = {k: n for k, n in ends.items() if k != "CancelledError" and not k.startswith("RuntimeError Attempted to use a closed Session")}
print("ends", sum(ends.values()), "of", rounds, "odd", odd)
print("steps ran", "yes" if steps[0] > 0 else "no")
with tf.Session(target) as sess:
    print("task 1 still runs", bool(abs(sess.run(out)) >= 0))
print("in time", time.time() - t0 < 60)
