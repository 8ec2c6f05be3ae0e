# A MetaGraph in text format written by TF (tests/fixtures/tf/textmeta: export_meta_graph(as_text=True)
# of a graph whose Saver is sharded): import_meta_graph reads it, its Saver restores TF's
# checkpoint and saves again through TF's MergeV2Checkpoints; export_meta_graph(as_text=True)
# writes text that reads back the same.
import os
import shutil
import tempfile
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()

d = tempfile.mkdtemp()
fx = "../fixtures/tf/textmeta/"
with tf.Graph().as_default() as g:
    saver = tf.train.import_meta_graph(fx + "model.meta")
    print(sorted(v.op.name for v in tf.global_variables()), saver.saver_def.sharded)
    print(sorted(set(op.type for op in g.get_operations()) & set(["MergeV2Checkpoints", "StaticRegexFullMatch", "Pack"])))
    with tf.Session() as sess:
        saver.restore(sess, fx + "model.ckpt")
        print(sess.run("out:0", {"x:0": [[1.0, 1.0]]}).tolist(), sess.run("global_step:0"))
        sess.run(tf.assign(g.get_tensor_by_name("b:0"), [1.0, 2.0]))
        p = saver.save(sess, os.path.join(d, "again"), write_meta_graph=False)
    print(sorted(n for n, s in tf.train.list_variables(p)), tf.train.load_variable(p, "b").tolist())
    tf.train.export_meta_graph(os.path.join(d, "out.meta"), as_text=True)
text = open(os.path.join(d, "out.meta")).read()
print(text.startswith("meta_info_def {"), "graph_def {" in text, "collection_def {" in text)
with tf.Graph().as_default() as g:
    saver = tf.train.import_meta_graph(os.path.join(d, "out.meta"))
    with tf.Session() as sess:
        saver.restore(sess, p)
        print(sess.run("out:0", {"x:0": [[1.0, 1.0]]}).tolist())
shutil.rmtree(d)
