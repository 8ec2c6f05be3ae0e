# Coordinator stop while QueueRunners block: producers block on a full queue and consumers
# on an empty one; request_stop must end every thread (TF closes the queue, cancelling
# pending enqueues) and coord.join must return, ROUNDS times.
import sys
import threading
import time
import tensorflow as tf

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 20
full = tf.FIFOQueue(2, tf.float32, shapes=[])
empty = tf.FIFOQueue(2, tf.float32, shapes=[])
enq = full.enqueue(tf.random_uniform([]))
deq = empty.dequeue()
ended = {}
lock = threading.Lock()


def consumer(sess, coord):
    try:
        while not coord.should_stop():
            sess.run(deq)
    except tf.errors.OutOfRangeError:
        k = "OutOfRange"
    except tf.errors.CancelledError:
        k = "Cancelled"
    else:
        k = "stopped"
    with lock:
        ended[k] = ended.get(k, 0) + 1


t0 = time.time()
for _ in range(rounds):
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        qr = tf.train.QueueRunner(full, [enq] * 3, close_op=full.close(cancel_pending_enqueues=True),
                                  cancel_op=full.close(cancel_pending_enqueues=True))
        threads = qr.create_threads(sess, coord=coord, start=True)
        cons = [threading.Thread(target=consumer, args=(sess, coord)) for _ in range(2)]
        for t in cons:
            t.start()
        while sess.run(full.size()) < 2:   # the producers now block on a full queue
            pass
        coord.request_stop()
        sess.run(empty.close(cancel_pending_enqueues=True))   # wakes the blocked consumers
        coord.join(threads + cons, stop_grace_period_secs=10)
print("rounds", rounds, "consumers", sorted(ended.items()), "in time", time.time() - t0 < 60)
