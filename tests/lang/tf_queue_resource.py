# TF1's queues pass DT_RESOURCE handles (FIFOQueueV2 and the rest, as tf.FIFOQueue builds
# them): queue_ref's dtype, the ops that take it, and the queues still work.
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()

with tf.Graph().as_default() as g:
    q = tf.FIFOQueue(3, [tf.float32, tf.int32], shapes=[[2], []], name="fq")
    r = tf.RandomShuffleQueue(10, 0, tf.string, seed=1, name="rq")
    p = tf.PaddingFIFOQueue(5, tf.int32, shapes=[[None]], name="pq")
    print(q.queue_ref.name, q.queue_ref.dtype, q.queue_ref.op.type, r.queue_ref.op.type, p.queue_ref.op.type)
    enq = q.enqueue(([1.0, 2.0], 7))
    deq = q.dequeue()
    print(enq.type, [t.dtype.name for t in enq.inputs], deq[0].op.type, deq[0].op.inputs[0].dtype)
    print(q.size().op.type, q.close().type, r.enqueue_many([["a", "b", "c"]]).type)
    pe = [p.enqueue([[1, 2, 3]]), p.enqueue([[4]])]
    pd = p.dequeue_many(2)
    with tf.Session() as sess:
        sess.run(enq)
        sess.run(q.enqueue(([3.0, 4.0], 8)))
        print(sess.run(q.size()), sess.run(deq)[1], sess.run(deq)[1])
        for e in pe:
            sess.run(e)
        print(sess.run(pd).tolist())
        sess.run(q.close())
        try:
            sess.run(deq)
        except tf.errors.OutOfRangeError as e:
            print("OutOfRangeError", e.message.splitlines()[0] if "is closed" in e.message.splitlines()[0] else
                  [l for l in e.message.splitlines() if "is closed" in l][0])
