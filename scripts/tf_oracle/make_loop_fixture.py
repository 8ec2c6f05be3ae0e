"""Write tests/fixtures/tf/while_loop.pb with real TensorFlow (tf.compat.v1, control flow
v1): a tf.while_loop and a tf.cond as TF 1.x serializes them (Enter/Merge/Switch/Exit/
NextIteration, the Merge before its NextIteration). tests/lang/tf_import_loop.py imports it.
Usage: /root/tfvenv/bin/python scripts/tf_oracle/make_loop_fixture.py"""
import os

import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "fixtures", "tf")
x = tf.placeholder(tf.float32, [2], name="x")
i, y = tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * 2.0 + x), [tf.constant(0), x])
z = tf.cond(y[0] > 10.0, lambda: y * 0.5, lambda: y, name="pick")
tf.identity(z, name="out")
tf.io.write_graph(tf.get_default_graph().as_graph_def(), root, "while_loop.pb", as_text=False)
