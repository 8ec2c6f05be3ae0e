# The first close shape: one thread loops sess.run(y, feed_dict=...) on a local session, the
# main thread sleeps 0.2 s and closes the session. The loop must end with one of TF's two
# errors (CancelledError for the run in flight, RuntimeError for a run started after), and
# the process must exit normally. Prints the error's class.
import threading
import time
import tensorflow as tf

x = tf.placeholder(tf.float32, shape=[3])
y = tf.reduce_sum(x * 2.0)
sess = tf.Session()
ended = []


def loop():
    try:
        while True:
            sess.run(y, feed_dict={x: [1.0, 2.0, 3.0]})
    except tf.errors.CancelledError as e:
        ended.append("CancelledError" if "Run call was cancelled" in str(e) else "CancelledError?" + str(e))
    except RuntimeError as e:
        ended.append("RuntimeError" if "closed Session" in str(e) else "RuntimeError?" + str(e))


t = threading.Thread(target=loop)
t.start()
time.sleep(0.2)
sess.close()
t.join()
print(ended[0] if ended else "no error")
