# export_meta_graph(export_scope=...): only the nodes under the scope, the prefix taken off
# names, inputs, colocations and collections (TF's rules: "tower" takes "tower_1/..." too,
# unrenamed; the SaverDef is written as given); an input from outside the scope marked
# "$unbound_inputs_" and listed in the unbound_inputs collection. The scoped MetaGraph imports
# under another scope with that input mapped, and runs.
import os
import shutil
import tempfile
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()

d = tempfile.mkdtemp()
with tf.Graph().as_default():
    c = tf.constant(10.0, name="c")
    with tf.name_scope("tower"):
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        w = tf.Variable([[1.0], [2.0]], name="w")
        y = tf.matmul(x, w, name="y")
        tf.add_to_collection("outputs", y)
        saver = tf.train.Saver([w])
    outer = tf.train.Saver([w], name="outer_save")
    z = tf.add(y, c, name="z")
    tf.add_to_collection("outputs", z)
    with tf.name_scope("tower"):
        shifted = tf.add(y, c, name="shifted")
    mg = saver.export_meta_graph(os.path.join(d, "tower.meta"), export_scope="tower")
    nodes = [n.name for n in mg.graph_def.node]
    print(sorted(n for n in nodes if not n.startswith("save/")))   # (TF's saver nodes differ from tfsh's)
    print(sorted(mg.collection_def.keys()))
    print([v if isinstance(v, str) else v.decode() for v in mg.collection_def["unbound_inputs"].bytes_list.value])
    print(list(mg.collection_def["outputs"].node_list.value))
    print([list(n.input) for n in mg.graph_def.node if n.name in ("tower_1/shifted", "y", "w/Assign")])
    print(mg.saver_def.restore_op_name)
    mg2 = tf.train.export_meta_graph(os.path.join(d, "tower2.meta"), export_scope="tower/",
                                     collection_list=["variables", "trainable_variables"])
    print(sorted(mg2.collection_def.keys()), len(mg2.graph_def.node) == len(nodes))
with tf.Graph().as_default() as g:
    try:
        tf.train.import_meta_graph(os.path.join(d, "tower.meta"))
    except ValueError as e:
        print("ValueError:", e)
with tf.Graph().as_default() as g:
    s = tf.train.import_meta_graph(os.path.join(d, "tower.meta"), import_scope="copy",
                                   input_map={"$unbound_inputs_c": tf.constant(1.0)})
    print(sorted(v.op.name for v in tf.global_variables()), s is not None)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        print(sess.run(["copy/y:0", "copy/tower_1/shifted:0"], {"copy/x:0": [[1.0, 1.0]]}))
shutil.rmtree(d)
