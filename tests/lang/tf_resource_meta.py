# A MetaGraph of resource variables written by TF (tests/fixtures/tf/resource, made by
# scripts/tf_oracle/make_resource_fixture.py): import_meta_graph makes them Variables again
# (VariableDef.is_resource), TF's Saver restores TF's checkpoint, TF's ResourceApplyAdam train
# op runs; export_meta_graph writes is_resource and the MetaGraph imports again.
import os
import shutil
import tempfile
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()


def r4(a):
    return [round(float(x), 4) for x in a.ravel()]


d = tempfile.mkdtemp()
fx = "../fixtures/tf/resource/"
feed = {"x:0": [[1.0, 2.0], [3.0, 4.0]], "y:0": [[1.0], [2.0]]}
with tf.Graph().as_default() as g:
    saver = tf.train.import_meta_graph(fx + "model.ckpt-3.meta")
    vs = tf.global_variables()
    print([(v.op.name, v.op.type, v.dtype.name) for v in vs])
    print([v.op.name for v in tf.trainable_variables()])
    print(sorted(set(op.type for op in g.get_operations() if "Resource" in op.type or "Variable" in op.type)))
    with tf.Session() as sess:
        saver.restore(sess, tf.train.latest_checkpoint(fx))
        print(r4(sess.run(vs[1].value())), int(sess.run(vs[0].value())))
        print(round(float(sess.run("loss:0", feed)), 4))
        sess.run("train", feed)
        print(round(float(sess.run("loss:0", feed)), 4), int(sess.run(vs[0].value())))
        print([r4(x) for x in sess.run([v.value() for v in vs])])
        p = saver.save(sess, os.path.join(d, "again"))
    tf.train.export_meta_graph(os.path.join(d, "out.meta"))
print(sorted(n for n, s in tf.train.list_variables(p)))
with tf.Graph().as_default() as g:
    saver = tf.train.import_meta_graph(os.path.join(d, "out.meta"))
    print([(v.op.name, v.op.type) for v in tf.global_variables()][:3])
    with tf.Session() as sess:
        saver.restore(sess, p)
        print(round(float(sess.run("loss:0", feed)), 4))
shutil.rmtree(d)
