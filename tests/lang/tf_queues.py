# TF1 queues: FIFOQueue / RandomShuffleQueue / PaddingFIFOQueue, QueueRunner threads with a
# Coordinator, tf.train.batch and shuffle_batch, slice/string input producers with epochs.
import tensorflow as tf

def first_line(e):
    # TF 2's message starts with "Graph execution error:"; the queue's own line is the one
    return [l for l in e.message.split("\n") if "closed" in l][0].strip()

q = tf.FIFOQueue(3, [tf.int32, tf.float32], shapes=[[], [2]])
enq = q.enqueue_many([[1, 2, 3], [[1., 2.], [3., 4.], [5., 6.]]])
a, b = q.dequeue()
many = q.dequeue_many(2)
size = q.size()
print(q.queue_ref.op.type, a.shape, b.shape, many[0].shape, many[1].shape, size.dtype)
with tf.Session() as sess:
    sess.run(enq)
    print(sess.run(size))
    print(sess.run([a, b]))
    print(sess.run(many))
    sess.run(q.enqueue([7, [7., 7.]]))
    sess.run(q.close())
    print(sess.run(a), sess.run(q.is_closed()))
    try:
        sess.run(a)
    except tf.errors.OutOfRangeError as e:
        print("OutOfRangeError:", first_line(e))
    try:
        sess.run(q.enqueue([1, [1., 1.]]))
    except tf.errors.CancelledError as e:
        print("CancelledError:", first_line(e))

# dequeue_up_to gives the last, smaller batch once the queue is closed
q2 = tf.FIFOQueue(10, tf.string, shapes=[[]])
with tf.Session() as sess:
    sess.run(q2.enqueue_many([[b"a", b"b", b"c"]]))
    sess.run(q2.close())
    up = q2.dequeue_up_to(2)
    print(sess.run(up), sess.run(up))
    try:
        sess.run(up)
    except tf.errors.OutOfRangeError as e:
        print("OutOfRangeError:", first_line(e))

# PaddingFIFOQueue pads to the largest element of the batch
pq = tf.PaddingFIFOQueue(5, [tf.int32], shapes=[[None]])
with tf.Session() as sess:
    sess.run(pq.enqueue([[1]]))
    sess.run(pq.enqueue([[2, 3, 4]]))
    sess.run(pq.enqueue([[5, 6]]))
    print(sess.run(pq.dequeue_many(3)))

# RandomShuffleQueue: every element comes out once (order is random)
rq = tf.RandomShuffleQueue(20, 5, [tf.int64], shapes=[[]], seed=3)
with tf.Session() as sess:
    sess.run(rq.enqueue_many([list(range(12))]))
    sess.run(rq.close())
    print(sorted(sess.run(rq.dequeue_many(12)).tolist()))

# QueueRunner + Coordinator on real threads: a producer fills, training loop drains
tf.reset_default_graph()
data = tf.constant([[float(i), float(i * i)] for i in range(20)])
labels = tf.constant(list(range(20)))
x, y = tf.train.slice_input_producer([data, labels], num_epochs=2, shuffle=False)
xb, yb = tf.train.batch([x, y], batch_size=8, num_threads=2, capacity=16, allow_smaller_final_batch=True)
print(xb.shape, yb.shape, len(tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)))
with tf.Session() as sess:
    sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    seen = []
    try:
        while not coord.should_stop():
            xs, ys = sess.run([xb, yb])
            seen.extend(ys.tolist())
            assert all(r[1] == r[0] * r[0] for r in xs.tolist())
    except tf.errors.OutOfRangeError:
        print("epochs done")
    finally:
        coord.request_stop()
    coord.join(threads)
    print(len(seen), sorted(seen) == sorted(list(range(20)) * 2))

# shuffle_batch over string_input_producer names and a Coordinator stopping early
tf.reset_default_graph()
names = tf.train.string_input_producer(["a", "b", "c"], shuffle=False)
name = names.dequeue()
ids = tf.train.shuffle_batch([name], batch_size=4, capacity=20, min_after_dequeue=6, seed=1)
with tf.Session() as sess:
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess, coord)
    got = []
    for _ in range(5):
        got.extend(sess.run(ids).tolist())
    coord.request_stop()
    coord.join(threads)
    print(len(got), sorted(set(got)), all(t.is_alive() is False for t in threads))

# an error in a runner thread reaches coord.join
tf.reset_default_graph()
bad = tf.FIFOQueue(4, [tf.float32], shapes=[[2]])
ph = tf.placeholder(tf.float32)
qr = tf.train.QueueRunner(bad, [bad.enqueue([ph])])
with tf.Session() as sess:
    coord = tf.train.Coordinator()
    threads = qr.create_threads(sess, coord=coord, start=True)
    try:
        coord.join(threads)
    except tf.errors.InvalidArgumentError as e:
        print("InvalidArgumentError from a runner thread")
