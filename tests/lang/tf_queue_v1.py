# TF's older queue ops (FIFOQueue, QueueEnqueue, QueueDequeue, QueueSize, QueueClose: the
# handle a Ref(string)) in a GraphDef TF wrote (tests/fixtures/tf/queue_v1.pb, made with
# tf.raw_ops by scripts/tf_oracle/make_resource_fixture.py) still run.
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()

gd = tf.GraphDef()
with open("../fixtures/tf/queue_v1.pb", "rb") as f:
    gd.ParseFromString(f.read())
with tf.Graph().as_default() as g:
    tf.import_graph_def(gd, name="")
    q = g.get_tensor_by_name("q1:0")
    print(q.dtype, q.op.type, g.get_operation_by_name("enq").type)
    with tf.Session() as sess:
        sess.run("enq", {"x:0": [1.0, 2.0]})
        sess.run("enq", {"x:0": [3.0, 4.0]})
        print(sess.run("size:0"), sess.run("deq:0").tolist())
        sess.run("close")
        print(sess.run("deq:0").tolist())
        try:
            sess.run("deq:0")
        except tf.errors.OutOfRangeError:
            print("OutOfRangeError")
