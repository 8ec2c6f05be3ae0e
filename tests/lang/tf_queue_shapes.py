# Queue shapes as TF reads them: shapes=[] is one scalar shape, [3] one vector shape; FIFOQueue
# and RandomShuffleQueue need fully defined shapes, PaddingFIFOQueue does not.
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()
q = tf.FIFOQueue(2, tf.float32, shapes=[])
print(q.dequeue().shape)
q2 = tf.FIFOQueue(2, tf.int32, shapes=[3])
print(q2.dequeue().shape)
q3 = tf.FIFOQueue(2, [tf.int32, tf.float32], shapes=[[], [2]])
print([t.shape for t in q3.dequeue()])
q5 = tf.PaddingFIFOQueue(2, [tf.int32], shapes=[[None]])
print(q5.dequeue().shape)
for make in (lambda: tf.FIFOQueue(2, [tf.int32], shapes=[None]), lambda: tf.RandomShuffleQueue(4, 1, [tf.int32, tf.float32], shapes=[[2], [None, 3]])):
    try:
        make()
    except ValueError as e:
        print("ValueError:", e)
