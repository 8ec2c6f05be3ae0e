# TF's GrpcServerTest checks on the public API: time limits, Session.reset of
# an unknown target, close under a blocked dequeue. argv: the server's target.
import sys
import threading
import time
import tensorflow as tf

target = sys.argv[1]
q = tf.FIFOQueue(10, [tf.float32])
d = q.dequeue()


def timed(sess, **kw):
    t0 = time.time()
    try:
        sess.run(d, **kw)
        print("no error")
    except tf.errors.DeadlineExceededError as e:
        dt = time.time() - t0
        print("DeadlineExceededError", e.message, "in time" if 0.9 * LIMIT <= dt < LIMIT + 2.0 else dt)


LIMIT = 1.0
with tf.Session(target) as sess:
    timed(sess, options=tf.RunOptions(timeout_in_ms=1000))
LIMIT = 0.5
with tf.Session(target, config=tf.ConfigProto(operation_timeout_in_ms=500)) as sess:
    timed(sess)
try:
    tf.Session.reset("nonexistent", ["a"])
except tf.errors.NotFoundError as e:
    print("NotFoundError", e.message)

sess = tf.Session(target)
out = []
started = threading.Event()


def blocked():
    started.set()
    try:
        sess.run(d)
        out.append("no error")
    except tf.errors.CancelledError as e:
        out.append("CancelledError " + ("Session::Close" if "Session::Close" in e.message else e.message))
    except RuntimeError as e:
        out.append("RuntimeError " + str(e))


t = threading.Thread(target=blocked)
t.start()
started.wait()
# As TF's testCloseCancelsBlockingOperation: give the dequeue time to reach the server (had
# it not, the thread would print RuntimeError's text instead: a failure, not a hang).
time.sleep(0.5)
sess.close()
t.join()
print(out[0])
