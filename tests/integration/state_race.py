# Two run signatures share one random op and run it at once, from two threads: every
# draw is one of the op's stream (the same draws as one thread running it as often), none
# repeated. argv: runs per thread, target ("" for a local session).
import sys
import threading
import tensorflow as tf

n = int(sys.argv[1])
target = sys.argv[2] if len(sys.argv) > 2 else ""
r = tf.random_uniform([4], seed=7)
c = tf.constant(1.0)
got = []
lock = threading.Lock()


def loop(sess, fetch):
    mine = []
    for i in range(n):
        v = sess.run(fetch)
        if isinstance(v, list):
            v = v[0]
        mine.append(tuple(float(a) for a in v))
    with lock:
        got.extend(mine)


with tf.Session(target) as sess:
    ts = [threading.Thread(target=loop, args=(sess, r)),
          threading.Thread(target=loop, args=(sess, [r, c]))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
with tf.Session(target) as sess:
    want = [tuple(float(a) for a in sess.run(r)) for i in range(2 * n)]
print("draws", len(got), "distinct", len(set(got)), "same stream", sorted(got) == sorted(want))
