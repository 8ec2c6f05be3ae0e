# Threads loop sess.run while the main thread closes the session: every thread ends with one
# of TF's two errors (its run was in flight: CancelledError; it started after: RuntimeError),
# never a crash. argv: threads, sessions, target ("" for a local session).
import sys
import threading
import tensorflow as tf

nthreads = int(sys.argv[1])
nsess = int(sys.argv[2])
target = sys.argv[3] if len(sys.argv) > 3 else ""
cancelled = sys.argv[4] if len(sys.argv) > 4 else "Run call was cancelled"

x = tf.placeholder(tf.float32, shape=[2])
y = x * 2.0 + 1.0
lock = threading.Lock()
seen = {}


def note(k):
    with lock:
        seen[k] = seen.get(k, 0) + 1


def loop(sess, started):
    first = True
    while True:
        try:
            v = sess.run(y, feed_dict={x: [1.0, 2.0]})
            if list(v) != [3.0, 5.0]:
                note("wrong value")
                return
        except tf.errors.CancelledError as e:
            note("cancelled" if e.message == cancelled else "cancelled: " + e.message)
            return
        except RuntimeError as e:
            note("closed" if str(e) == "Attempted to use a closed Session." else "runtime: " + str(e))
            return
        except Exception as e:
            note("other: " + type(e).__name__ + ": " + str(e))
            return
        if first:
            first = False
            started.release()


for i in range(nsess):
    sess = tf.Session(target)
    ts = []
    sems = []
    for k in range(nthreads):
        started = threading.Semaphore(0)
        t = threading.Thread(target=loop, args=(sess, started))
        t.start()
        ts.append(t)
        sems.append(started)
    for s in sems:
        s.acquire()
    sess.close()
    for t in ts:
        t.join()

bad = [k for k in seen if k not in ("cancelled", "closed")]
print("ends", seen.get("cancelled", 0) + seen.get("closed", 0), "of", nthreads * nsess)
for k in sorted(bad):
    print(k, seen[k])
