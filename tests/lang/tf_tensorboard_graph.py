# What TensorBoard reads of a small MLP's logs, as TF writes them: the GraphDef's
# _output_shapes (as_graph_def(add_shapes=True) and FileWriter's graph), the meta_graph_def
# event after the graph_def one, the gradients' seed, and their tf.tuple nodes under each op's
# gradient scope (their names, ops and shapes: tfsh's group_deps waits only for the
# gradients that lead to variables, TF's also for those towards placeholders). The
# expected output is real TensorFlow's (scripts/tf_oracle/run.sh --write).
import os
import shutil
import tempfile
import tensorflow as tf


def shapes(node):
    if "_output_shapes" not in node.attr:
        return "-"
    return [None if s.unknown_rank else [d.size for d in s.dim] for s in node.attr["_output_shapes"].list.shape]


x = tf.placeholder(tf.float32, [None, 4], name="x")
y_ = tf.placeholder(tf.float32, [None, 3], name="y_")
with tf.name_scope("hidden"):
    w1 = tf.Variable(tf.truncated_normal([4, 8], stddev=0.1, seed=1), name="weights")
    b1 = tf.Variable(tf.zeros([8]), name="biases")
    h = tf.nn.relu(tf.matmul(x, w1) + b1)
with tf.name_scope("out"):
    w2 = tf.Variable(tf.truncated_normal([8, 3], stddev=0.1, seed=2), name="weights")
    b2 = tf.Variable(tf.zeros([3]), name="biases")
    logits = tf.nn.bias_add(tf.matmul(h, w2), b2)
loss = tf.reduce_mean(tf.square(logits - y_), name="loss")
g = tf.get_default_graph()
forward = set(o.name for o in g.get_operations())
train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)

print("plain as_graph_def:", sum("_output_shapes" in n.attr for n in g.as_graph_def().node), "nodes with shapes")
gd = g.as_graph_def(add_shapes=True)
print("add_shapes:")
for n in gd.node:
    if n.name in forward:
        print(" ", n.name, shapes(n))
print("outside gradients/:", sorted(n.name for n in gd.node if not n.name.startswith("gradients/") and n.name not in forward))
print("gradient seed:", sorted((n.name, n.op) for n in gd.node if n.name.startswith(("gradients/grad_ys", "gradients/Shape"))))
print("gradient gates:")
for name in sorted(n.name for n in gd.node):
    if "tuple" in name or "group_deps" in name:
        node = [n for n in gd.node if n.name == name][0]
        print(" ", name, node.op, shapes(node))

with tf.Graph().as_default() as g2:   # tf.tuple itself: its scope, group_deps, control_dependency[_k]
    a, b = tf.constant(1.0, name="a"), tf.constant(2.0, name="b")
    t1 = tf.tuple([a, b])
    t2 = tf.tuple([a, None, b], name="pair")
    print("tf.tuple:", [t.name for t in t1], [t if t is None else t.name for t in t2],
          sorted(n.name for n in g2.as_graph_def().node if n.op == "NoOp"))

logdir = tempfile.mkdtemp()
try:
    w = tf.summary.FileWriter(logdir, g)
    w.close()
    path = os.path.join(logdir, os.listdir(logdir)[0])
    print("events:")
    for e in tf.train.summary_iterator(path):
        kind = e.WhichOneof("what")
        if kind == "graph_def":
            d = tf.GraphDef()
            d.ParseFromString(e.graph_def)
            print(" ", kind, sum("_output_shapes" in n.attr for n in d.node if n.name in forward), "of",
                  len(forward), "forward nodes with shapes; the others but NoOps too:",
                  all("_output_shapes" in n.attr for n in d.node if n.op != "NoOp"))
        elif kind == "meta_graph_def":
            m = tf.MetaGraphDef()
            m.ParseFromString(e.meta_graph_def)
            d = m.graph_def
            print(" ", kind, sum("_output_shapes" in n.attr for n in d.node if n.name in forward), "of",
                  len(forward), "forward nodes with shapes, collections", sorted(m.collection_def.keys()))
        else:
            print(" ", kind)
finally:
    shutil.rmtree(logdir)
