# A GraphDef written by TF with a uint8 tensor attr (ImageSummary's bad_color, DataType 4):
# parsed from binary and text, written out again with the attr
# as it came, imported and run (no kernel of tfsh's reads it; tfsh's ImageSummary has no
# bad_color, so a graph it imported is written without it: TF's default) (tests/fixtures/tf/image).
import tensorflow.compat.v1 as tf
from google.protobuf import text_format
tf.disable_v2_behavior()

data = open("../fixtures/tf/image/graph.pb", "rb").read()
gd = tf.GraphDef()
gd.ParseFromString(data)
print(len(gd.node), [n.op for n in gd.node])
gt = text_format.Parse(open("../fixtures/tf/image/graph.pbtxt").read(), tf.GraphDef())
print(gt.SerializeToString() == gd.SerializeToString())
again = tf.GraphDef()   # the attr's bytes kept: what tfsh writes parses to the same message
again.ParseFromString(gd.SerializeToString())
print("bad_color" in text_format.MessageToString(again), "DT_UINT8" in text_format.MessageToString(again))
feed = {"x:0": [[[[1, 2, 3], [4, 5, 6]], [[7, 8, 9], [10, 11, 12]]]]}
for src in (gd, gt):
    with tf.Graph().as_default() as g:
        tf.import_graph_def(src, name="")
        with tf.Session() as sess:
            y, s = sess.run(["y:0", "pic:0"], feed)
        v = tf.Summary.FromString(s).value[0]
        print(y[0, 1].tolist(), v.tag, v.image.height, v.image.width, v.image.colorspace)
        again = g.as_graph_def().SerializeToString()
    with tf.Graph().as_default() as g2:   # what the import wrote out loads again
        gd2 = tf.GraphDef()
        gd2.ParseFromString(again)
        tf.import_graph_def(gd2, name="")
        print(sorted(op.type for op in g2.get_operations()))
