"""Run a TF1 program under real TensorFlow as TF 1.15 ran it: `import tensorflow as tf` is
tf.compat.v1 with v2 behaviour disabled, numpy prints as numpy 1.x did, and the tutorial
modules TF 1.15 shipped (tensorflow.examples.tutorials.mnist: input_data, mnist) exist.
Usage: python shim.py PROGRAM.py [ARGS...]  (see run.sh), in the directory PROGRAM is to run in.
Never used by the build or tests."""
import contextlib
import functools
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

from tensorflow.python.framework.smart_cond import smart_cond  # noqa: E402
from tensorflow.python.training import moving_averages  # noqa: E402

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


# tf.contrib.framework.arg_scope and the contrib.layers functions it applies to (TF 1.15's
# contrib/framework/python/ops/arg_scope.py and contrib/layers/python/layers/layers.py)
_arg_stack = [{}]


@contextlib.contextmanager
def _arg_scope(list_ops, **kwargs):
    current = dict(_arg_stack[-1])
    for op in list_ops:
        key = getattr(op, "_key_op", str(op))
        current[key] = dict(current.get(key, {}), **kwargs)
    _arg_stack.append(current)
    try:
        yield current
    finally:
        _arg_stack.pop()


def _add_arg_scope(func):
    key = str(func)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return func(*args, **dict(_arg_stack[-1].get(key, {}), **kwargs))
    wrapper._key_op = key
    return wrapper


def _xavier_initializer(uniform=True, seed=None, dtype=tf.float32):
    # contrib's variance_scaling_initializer(1.0, 'FAN_AVG', uniform): sqrt(6 / (in + out))
    if uniform:
        return tf.glorot_uniform_initializer(seed=seed, dtype=dtype)
    return tf.variance_scaling_initializer(1.0, "fan_avg", "truncated_normal", seed=seed, dtype=dtype)


@_add_arg_scope
def _fully_connected(inputs, num_outputs, activation_fn=tf.nn.relu, normalizer_fn=None, normalizer_params=None,
                     weights_initializer=None, weights_regularizer=None,
                     biases_initializer=tf.zeros_initializer(), biases_regularizer=None, reuse=None,
                     variables_collections=None, outputs_collections=None, trainable=True, scope=None):
    with tf.variable_scope(scope, "fully_connected", [inputs], reuse=reuse):
        outputs = tf.layers.dense(
            inputs, num_outputs, use_bias=bool(not normalizer_fn and biases_initializer),
            kernel_initializer=weights_initializer or _xavier_initializer(), bias_initializer=biases_initializer,
            kernel_regularizer=weights_regularizer, bias_regularizer=biases_regularizer, trainable=trainable)
        if normalizer_fn is not None:
            outputs = normalizer_fn(outputs, **(normalizer_params or {}))
        if activation_fn is not None:
            outputs = activation_fn(outputs)
    return outputs


@_add_arg_scope
def _batch_norm(inputs, decay=0.999, center=True, scale=False, epsilon=0.001, activation_fn=None,
                updates_collections=tf.GraphKeys.UPDATE_OPS, is_training=True, reuse=None, trainable=True,
                scope=None):
    # TF 1.15 takes the fused kernel for rank 2 and 4 (2-D reshaped to NHWC); updates_collections
    # None: the moving averages are updated in place, under control dependencies, when training
    with tf.variable_scope(scope, "BatchNorm", [inputs], reuse=reuse):
        inputs = tf.convert_to_tensor(inputs)
        shape = tf.shape(inputs)
        x = tf.reshape(inputs, [-1, 1, 1, inputs.shape[-1]]) if inputs.shape.ndims == 2 else inputs
        n = inputs.shape[-1:]
        beta = tf.get_variable("beta", n, initializer=tf.zeros_initializer(), trainable=trainable) if center \
            else tf.zeros(n)
        gamma = tf.get_variable("gamma", n, initializer=tf.ones_initializer(), trainable=trainable) if scale \
            else tf.ones(n)
        mm = tf.get_variable("moving_mean", n, initializer=tf.zeros_initializer(), trainable=False)
        mv = tf.get_variable("moving_variance", n, initializer=tf.ones_initializer(), trainable=False)
        out, mean, var = smart_cond(
            is_training, lambda: tf.nn.fused_batch_norm(x, gamma, beta, epsilon=epsilon),
            lambda: tf.nn.fused_batch_norm(x, gamma, beta, mm, mv, epsilon=epsilon, is_training=False))

        def _force_updates():
            um = moving_averages.assign_moving_average(mm, mean, decay, zero_debias=False)
            uv = moving_averages.assign_moving_average(mv, var, decay, zero_debias=False)
            with tf.control_dependencies([um, uv]):
                return tf.identity(out)
        if updates_collections is None:
            out = smart_cond(is_training, _force_updates, lambda: out)
        else:
            for u in (moving_averages.assign_moving_average(mm, mean, decay, zero_debias=False),
                      moving_averages.assign_moving_average(mv, var, decay, zero_debias=False)):
                tf.add_to_collection(updates_collections, u)
        out = tf.reshape(out, shape)
        return activation_fn(out) if activation_fn is not None else out


@_add_arg_scope
def _dropout(inputs, keep_prob=0.5, noise_shape=None, is_training=True, outputs_collections=None, scope=None,
             seed=None):
    with tf.variable_scope(scope, "Dropout", [inputs]):
        return tf.layers.dropout(inputs, rate=1 - keep_prob, noise_shape=noise_shape, seed=seed, training=is_training)


def _sequence_loss(logits, targets, weights, average_across_timesteps=True, average_across_batch=True,
                   softmax_loss_function=None, name=None):
    with tf.name_scope(name, "sequence_loss", [logits, targets, weights]):
        num_classes = tf.shape(logits)[2]
        logits_flat = tf.reshape(logits, [-1, num_classes])
        targets = tf.reshape(targets, [-1])
        loss_fn = softmax_loss_function or tf.nn.sparse_softmax_cross_entropy_with_logits
        crossent = loss_fn(labels=targets, logits=logits_flat) * tf.reshape(weights, [-1])
        if average_across_timesteps and average_across_batch:
            return tf.div_no_nan(tf.reduce_sum(crossent), tf.reduce_sum(weights))
        crossent = tf.reshape(crossent, tf.shape(logits)[0:2])
        if average_across_timesteps:
            return tf.div_no_nan(tf.reduce_sum(crossent, axis=[1]), tf.reduce_sum(weights, axis=[1]))
        if average_across_batch:
            return tf.div_no_nan(tf.reduce_sum(crossent, axis=[0]), tf.reduce_sum(weights, axis=[0]))
        return crossent


c_layers = _module("tensorflow.contrib.layers", flatten=tf.layers.flatten, xavier_initializer=_xavier_initializer,
                   fully_connected=_fully_connected, batch_norm=_batch_norm, dropout=_dropout)
c_framework = _module("tensorflow.contrib.framework", arg_scope=_arg_scope, add_arg_scope=_add_arg_scope)
c_seq2seq_new = _module("tensorflow.contrib.seq2seq", sequence_loss=_sequence_loss)
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
                     framework=c_framework, seq2seq=c_seq2seq_new,
                     learn=c_learn, lookup=c_lookup)
# tf.contrib.slim and contrib.layers' convolution layers: the tf-slim package (pip install
# tf-slim), TF 1.15's contrib/slim and contrib/layers code carried on, where it is installed.
try:
    import tf_slim as _tf_slim
except ImportError:
    _tf_slim = None
if _tf_slim is not None:
    sys.modules["tensorflow.contrib.slim"] = _tf_slim
    tf.contrib.slim = _tf_slim
    for _n in ("conv2d", "convolution2d", "conv2d_transpose", "convolution2d_transpose", "max_pool2d", "avg_pool2d",
               "layer_norm", "one_hot_encoding", "repeat", "stack"):
        setattr(c_layers, _n, getattr(_tf_slim.layers, _n))

# as `python PROG` runs it: PROG's directory first on sys.path, the working directory left
# where the caller put it (scripts read data such as MNIST_data/ relative to it, and tfsh
# runs them in the same directory)
prog = sys.argv[1]
sys.argv = sys.argv[1:]
sys.path[0] = os.path.dirname(os.path.abspath(prog))
runpy.run_path(prog, run_name="__main__")
