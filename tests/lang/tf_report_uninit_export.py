# report_uninitialized_variables (the ready op of a Supervisor / MonitoredTrainingSession)
# exported in a MetaGraph and imported again: tfsh writes its _ReportUninitialized as TF's ops
# (IsVariableInitialized, Pack, LogicalNot, boolean_mask's Where/Squeeze/GatherV2).
import os
import shutil
import tempfile
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()

d = tempfile.mkdtemp()
path = os.path.join(d, "ready.meta")
g = tf.Graph()
with g.as_default():
    a = tf.Variable([1.0, 2.0], name="a")
    b = tf.Variable(3, name="b")
    with tf.name_scope("scope"):
        c = tf.Variable(["x"], name="c")
    ready = tf.report_uninitialized_variables(name="ready")
    none = tf.report_uninitialized_variables([], name="none")
    tf.add_to_collection("ready_op", ready)
    tf.add_to_collection("ready_op", none)
    tf.train.export_meta_graph(path)
g2 = tf.Graph()
with g2.as_default():
    tf.train.import_meta_graph(path)
    ready, none = tf.get_collection("ready_op")
    print(ready.op.type, ready.dtype, none.op.type)
    print(sorted(set(op.type for op in g2.get_operations()) & set(["Where", "GatherV2", "LogicalNot", "Pack",
                                                                  "IsVariableInitialized", "_ReportUninitialized"])))
    with tf.Session() as sess:
        print(sess.run([ready, none]))
        sess.run(g2.get_operation_by_name("a/Assign"))
        print(sess.run(ready))
        sess.run(tf.global_variables_initializer())
        print(sess.run(ready), sess.run(ready).shape)
shutil.rmtree(d)
