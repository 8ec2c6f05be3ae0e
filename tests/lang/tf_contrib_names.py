# The tf.contrib names TF 1.x-era scripts import that tfsh gives (TF 2 has no tf.contrib:
# the oracle's shim.py gives them as TF 1.15 did): convert_to_records.py's mnist reader,
# tf.contrib.data's Dataset (aymericdamien's tensorflow_dataset_api.py), tf.contrib.rnn.
import tensorflow as tf
from tensorflow.contrib.learn.python.learn.datasets import mnist
from tensorflow.contrib import rnn

print(callable(mnist.read_data_sets))
print(tf.contrib.data.Dataset is tf.data.Dataset, tf.contrib.data.TFRecordDataset is tf.data.TFRecordDataset)
print(rnn.BasicLSTMCell is tf.nn.rnn_cell.BasicLSTMCell, rnn.static_rnn is tf.nn.static_rnn)
ds = tf.contrib.data.Dataset.from_tensor_slices([1, 2, 3]).batch(2)
n = ds.make_one_shot_iterator().get_next()
with tf.Session() as s:
    print(s.run(n).tolist(), s.run(n).tolist())
