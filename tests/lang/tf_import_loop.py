# A GraphDef TensorFlow wrote with a tf.while_loop and a tf.cond in it (the Merge comes
# before its NextIteration: scripts/tf_oracle/make_loop_fixture.py) imports and runs, with
# TF's own node names. Expected output from real TF.
import tensorflow as tf

gd = tf.GraphDef()
with open("../fixtures/tf/while_loop.pb", "rb") as f:
    gd.ParseFromString(f.read())
tf.import_graph_def(gd, name="")
g = tf.get_default_graph()
print(sorted(op.type for op in g.get_operations() if op.type in ("Enter", "Merge", "Switch", "Exit", "NextIteration", "LoopCond")))
with tf.Session() as s:
    print(s.run("out:0", {"x:0": [1.0, 2.0]}).tolist(), s.run("out:0", {"x:0": [0.5, 0.25]}).tolist())
