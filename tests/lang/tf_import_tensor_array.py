# A GraphDef TensorFlow wrote whose loops run on TensorArrays (a frozen dynamic_rnn and a
# map_fn: scripts/tf_oracle/make_ta_fixture.py) imports and runs on tfsh's TensorArrayV3
# kernels. Expected output from real TF.
import tensorflow as tf

gd = tf.GraphDef()
with open("../fixtures/tf/tensor_array.pb", "rb") as f:
    gd.ParseFromString(f.read())
tf.import_graph_def(gd, name="")
g = tf.get_default_graph()
print(sorted(set(op.type for op in g.get_operations() if op.type.startswith("TensorArray"))))
x = [[[0.05 * (12 * b + 4 * t + k) for k in range(4)] for t in range(3)] for b in range(2)]
with tf.Session() as s:
    out, h, m = s.run(["out:0", "h:0", "m:0"], {"x:0": x})
    print(["%.5f" % v for v in out.flatten().tolist()])
    print(["%.5f" % v for v in h.flatten().tolist()])
    print(["%.4f" % v for v in m.tolist()])
