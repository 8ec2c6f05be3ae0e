"""The oracle's tensorflow.examples.tutorials.mnist.input_data (TF 2 no longer ships it):
MNIST-format IDX files from a directory, as TF 1.15's read them; never downloads."""
import gzip
import os

import numpy as np


def _open(path):
    if not os.path.exists(path) and os.path.exists(path[:-3]):
        path = path[:-3]
    print("Extracting", path)
    return gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb")


def _images(path):
    with _open(path) as f:
        data = f.read()
    n, rows, cols = (int.from_bytes(data[i:i + 4], "big") for i in (4, 8, 12))
    return np.frombuffer(data, np.uint8, offset=16).reshape(n, rows, cols, 1)


def _labels(path):
    with _open(path) as f:
        data = f.read()
    return np.frombuffer(data, np.uint8, offset=8)


def dense_to_one_hot(labels, num_classes):
    out = np.zeros((labels.shape[0], num_classes), np.float32)
    out[np.arange(labels.shape[0]), labels] = 1
    return out


class DataSet(object):
    def __init__(self, images, labels, dtype=np.float32, reshape=True, seed=None):
        if reshape:
            images = images.reshape(images.shape[0], -1)
        if np.dtype(getattr(dtype, "as_numpy_dtype", dtype)) != np.uint8:
            images = images.astype(np.float32) * (1.0 / 255.0)
        self._images, self._labels = images, labels
        self._num_examples = images.shape[0]
        self._epochs_completed = 0
        self._index_in_epoch = 0
        self._rng = np.random.RandomState(seed)

    images = property(lambda self: self._images)
    labels = property(lambda self: self._labels)
    num_examples = property(lambda self: self._num_examples)
    epochs_completed = property(lambda self: self._epochs_completed)

    def next_batch(self, batch_size, fake_data=False, shuffle=True):
        start = self._index_in_epoch
        if self._epochs_completed == 0 and start == 0 and shuffle:
            p = self._rng.permutation(self._num_examples)
            self._images, self._labels = self._images[p], self._labels[p]
        if start + batch_size > self._num_examples:
            self._epochs_completed += 1
            rest = self._num_examples - start
            ir, lr = self._images[start:], self._labels[start:]
            if shuffle:
                p = self._rng.permutation(self._num_examples)
                self._images, self._labels = self._images[p], self._labels[p]
            self._index_in_epoch = batch_size - rest
            end = self._index_in_epoch
            return (np.concatenate((ir, self._images[:end])), np.concatenate((lr, self._labels[:end])))
        self._index_in_epoch += batch_size
        return self._images[start:self._index_in_epoch], self._labels[start:self._index_in_epoch]


class Datasets(object):
    def __init__(self, train, validation, test):
        self.train, self.validation, self.test = train, validation, test


def read_data_sets(train_dir, fake_data=False, one_hot=False, dtype=np.float32, reshape=True,
                   validation_size=5000, seed=None, source_url=None, num_classes=10):
    parts = []
    for name, read in (("train-images-idx3-ubyte.gz", _images), ("train-labels-idx1-ubyte.gz", _labels),
                       ("t10k-images-idx3-ubyte.gz", _images), ("t10k-labels-idx1-ubyte.gz", _labels)):
        arr = read(os.path.join(train_dir, name))
        if read is _labels and one_hot:
            arr = dense_to_one_hot(arr, num_classes)
        parts.append(arr)
    ti, tl, si, sl = parts
    v = validation_size
    return Datasets(DataSet(ti[v:], tl[v:], dtype, reshape, seed), DataSet(ti[:v], tl[:v], dtype, reshape, seed),
                    DataSet(si, sl, dtype, reshape, seed))
