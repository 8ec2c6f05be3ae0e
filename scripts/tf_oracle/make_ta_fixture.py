"""Write tests/fixtures/tf/tensor_array.pb with real TensorFlow (tf.compat.v1, control flow
v1): a frozen dynamic_rnn (LSTMCell, constant weights) and a map_fn, whose loops run on
TF's TensorArrayV3 ops, as TF 1.x serializes them. tests/lang/tf_import_tensor_array.py
imports it. Usage: TF_USE_LEGACY_KERAS=1 /root/tfvenv/bin/python scripts/tf_oracle/make_ta_fixture.py"""
import os

import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "fixtures", "tf")
x = tf.placeholder(tf.float32, [2, 3, 4], name="x")
with tf.variable_scope("v", initializer=tf.constant_initializer(0.1)):
    out, st = tf.nn.dynamic_rnn(tf.nn.rnn_cell.LSTMCell(5), x, dtype=tf.float32)
m = tf.map_fn(lambda v: v * 2.0, tf.reshape(x, [-1]))
tf.identity(out, name="out")
tf.identity(st.h, name="h")
tf.identity(m, name="m")
with tf.Session() as s:
    s.run(tf.global_variables_initializer())
    gd = tf.graph_util.convert_variables_to_constants(s, s.graph.as_graph_def(), ["out", "h", "m"])
tf.io.write_graph(gd, root, "tensor_array.pb", as_text=False)
