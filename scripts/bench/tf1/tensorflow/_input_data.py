# read_data_sets(dir, one_hot=...) of TF1's tensorflow/examples/tutorials/mnist/input_data,
# re-written on numpy for the side-by-side benchmarks: gzip'd IDX files, images scaled to
# [0, 1] float32 rows of 784, 5000 training images held out for validation, next_batch
# shuffling once per epoch.
import gzip
import os

import numpy


def _read(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic = int.from_bytes(data[0:4], "big")
    ndim = magic & 0xFF
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return numpy.frombuffer(data, numpy.uint8, offset=4 + 4 * ndim).reshape(dims)


class DataSet(object):
    def __init__(self, images, labels, seed=None):
        self._images = images
        self._labels = labels
        self._num_examples = images.shape[0]
        self._index = 0
        self._epochs_completed = 0
        self._rng = numpy.random.RandomState(seed)

    images = property(lambda self: self._images)
    labels = property(lambda self: self._labels)
    num_examples = property(lambda self: self._num_examples)
    epochs_completed = property(lambda self: self._epochs_completed)

    def next_batch(self, batch_size, fake_data=False, shuffle=True):
        if self._index == 0 and self._epochs_completed == 0 and shuffle:
            self._shuffle()
        if self._index + batch_size > self._num_examples:
            rest = self._num_examples - self._index
            xs, ys = self._images[self._index:], self._labels[self._index:]
            self._epochs_completed += 1
            if shuffle:
                self._shuffle()
            self._index = batch_size - rest
            return (numpy.concatenate([xs, self._images[:self._index]]),
                    numpy.concatenate([ys, self._labels[:self._index]]))
        start = self._index
        self._index += batch_size
        return self._images[start:self._index], self._labels[start:self._index]

    def _shuffle(self):
        perm = self._rng.permutation(self._num_examples)
        self._images = self._images[perm]
        self._labels = self._labels[perm]


class Datasets(object):
    def __init__(self, train, validation, test):
        self.train, self.validation, self.test = train, validation, test


def read_data_sets(train_dir, fake_data=False, one_hot=False, dtype=None, reshape=True,
                   validation_size=5000, seed=None, source_url=None):
    def load(prefix):
        images = _read(os.path.join(train_dir, prefix + "-images-idx3-ubyte.gz"))
        labels = _read(os.path.join(train_dir, prefix + "-labels-idx1-ubyte.gz"))
        images = images.reshape(images.shape[0], -1).astype(numpy.float32) / 255.0
        if one_hot:
            labels = numpy.eye(10, dtype=numpy.float32)[labels]
        return images, labels

    tx, ty = load("train")
    ex, ey = load("t10k")
    return Datasets(DataSet(tx[validation_size:], ty[validation_size:], seed),
                    DataSet(tx[:validation_size], ty[:validation_size], seed),
                    DataSet(ex, ey, seed))
