"""Run a TF1 program under real TensorFlow as TF 1.15 ran it: `import tensorflow as tf` is
tf.compat.v1 with v2 behaviour disabled, numpy prints as numpy 1.x did, and the tutorial
modules TF 1.15 shipped (tensorflow.examples.tutorials.mnist: input_data, mnist) exist.
Usage: python shim.py PROGRAM.py [ARGS...]  (see run.sh). Never used by the build or tests."""
import os
import runpy
import sys
import types

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
import numpy as np  # noqa: E402

if int(np.__version__.split(".")[0]) >= 2:
    np.set_printoptions(legacy="1.25")   # 1.0, not np.float32(1.0): numpy 1.14–1.26's printing
import tensorflow.compat.v1 as tf  # noqa: E402

tf.disable_v2_behavior()
tf.logging.set_verbosity(tf.logging.WARN)
here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
sys.path.insert(0, here)
sys.modules["tensorflow"] = tf


def _module(name, **attrs):
    m = types.ModuleType(name)
    m.__dict__.update(attrs)
    sys.modules[name] = m
    return m


import input_data  # noqa: E402  (this directory's own reader of IDX files)

mnist_src = os.path.join(root, "shell", "tf", "mnist_tutorial.py.inc")
mnist = _module("tensorflow.examples.tutorials.mnist.mnist")
with open(mnist_src) as f:
    src = f.read()
src = src[src.index('R"PY(') + 5:src.rindex(')PY"')]
exec(compile(src, mnist_src, "exec"), mnist.__dict__)
pkg = _module("tensorflow.examples.tutorials.mnist", input_data=input_data, mnist=mnist)
sys.modules["tensorflow.examples.tutorials.mnist.input_data"] = input_data
tut = _module("tensorflow.examples.tutorials", mnist=pkg)
tf.examples = _module("tensorflow.examples", tutorials=tut)


# tf.contrib, gone from TF 2: the parts TF 1.x-era scripts use, as TF 1.15 defined them
# (contrib.rnn and contrib.data re-exported the core classes; legacy_seq2seq's two
# functions are written here after TF 1.15's definitions)
def _rnn_decoder(decoder_inputs, initial_state, cell, loop_function=None, scope=None):
    with tf.variable_scope(scope or "rnn_decoder"):
        state = initial_state
        outputs = []
        prev = None
        for i, inp in enumerate(decoder_inputs):
            if loop_function is not None and prev is not None:
                with tf.variable_scope("loop_function", reuse=True):
                    inp = loop_function(prev, i)
            if i > 0:
                tf.get_variable_scope().reuse_variables()
            output, state = cell(inp, state)
            outputs.append(output)
            if loop_function is not None:
                prev = output
    return outputs, state


def _sequence_loss_by_example(logits, targets, weights, average_across_timesteps=True,
                              softmax_loss_function=None, name=None):
    with tf.name_scope(name, "sequence_loss_by_example", logits + targets + weights):
        log_perp_list = []
        for logit, target, weight in zip(logits, targets, weights):
            if softmax_loss_function is None:
                target = tf.reshape(target, [-1])
                crossent = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=target, logits=logit)
            else:
                crossent = softmax_loss_function(labels=target, logits=logit)
            log_perp_list.append(crossent * weight)
        log_perps = tf.add_n(log_perp_list)
        if average_across_timesteps:
            total_size = tf.add_n(weights) + 1e-12
            log_perps /= total_size
    return log_perps


_rnn_names = ("RNNCell", "BasicRNNCell", "BasicLSTMCell", "LSTMCell", "GRUCell", "MultiRNNCell",
              "DropoutWrapper", "LSTMStateTuple")
c_rnn = _module("tensorflow.contrib.rnn", static_rnn=tf.nn.static_rnn,
                static_bidirectional_rnn=tf.nn.static_bidirectional_rnn,
                **{n: getattr(tf.nn.rnn_cell, n) for n in _rnn_names})
c_data = _module("tensorflow.contrib.data", Dataset=tf.data.Dataset, TFRecordDataset=tf.data.TFRecordDataset,
                 TextLineDataset=tf.data.TextLineDataset, Iterator=tf.data.Iterator)
c_layers = _module("tensorflow.contrib.layers", flatten=tf.layers.flatten)
c_seq2seq = _module("tensorflow.contrib.legacy_seq2seq", rnn_decoder=_rnn_decoder,
                    sequence_loss_by_example=_sequence_loss_by_example)
c_mnist = _module("tensorflow.contrib.learn.python.learn.datasets.mnist", read_data_sets=input_data.read_data_sets)
c_datasets = _module("tensorflow.contrib.learn.python.learn.datasets", mnist=c_mnist)
_module("tensorflow.contrib.learn.python.learn", datasets=c_datasets)
_module("tensorflow.contrib.learn.python", learn=sys.modules["tensorflow.contrib.learn.python.learn"])
c_learn = _module("tensorflow.contrib.learn", python=sys.modules["tensorflow.contrib.learn.python"])
from tensorflow.python.ops import lookup_ops as _lk
c_lookup = _module("tensorflow.contrib.lookup", HashTable=_lk.HashTable, MutableHashTable=_lk.MutableHashTable,
                   IdTableWithHashBuckets=_lk.IdTableWithHashBuckets, KeyValueTensorInitializer=_lk.KeyValueTensorInitializer,
                   TextFileInitializer=_lk.TextFileInitializer, TextFileIndex=_lk.TextFileIndex,
                   TextFileIdTableInitializer=_lk.TextFileIdTableInitializer,
                   TextFileStringTableInitializer=_lk.TextFileStringTableInitializer,
                   index_table_from_file=_lk.index_table_from_file, index_table_from_tensor=_lk.index_table_from_tensor,
                   index_to_string_table_from_file=_lk.index_to_string_table_from_file,
                   index_to_string_table_from_tensor=_lk.index_to_string_table_from_tensor)
tf.contrib = _module("tensorflow.contrib", rnn=c_rnn, data=c_data, layers=c_layers, legacy_seq2seq=c_seq2seq,
                     learn=c_learn, lookup=c_lookup)

prog = sys.argv[1]
sys.argv = sys.argv[1:]
sys.path[0] = os.path.dirname(os.path.abspath(prog))
os.chdir(os.path.dirname(os.path.abspath(prog)))
runpy.run_path(os.path.basename(prog), run_name="__main__")
