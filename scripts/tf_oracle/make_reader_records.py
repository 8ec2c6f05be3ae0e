"""Write the TFRecords TF's reading_data examples (fully_connected_reader.py, both the
queue and the tf.data versions) read: DIR/train.tfrecords and DIR/validation.tfrecords,
one tf.train.Example per image with the features convert_to_records.py writes (height,
width, depth, label, image_raw: the 784 uint8 pixels), from Fashion-MNIST in MNIST's
format at DIR. convert_to_records.py itself calls ndarray.tostring, which numpy 2 no
longer has, so under today's TensorFlow it stops after opening its first file.
Usage: /root/tfvenv/bin/python make_reader_records.py DIR [VALIDATION_SIZE]"""
import gzip
import os
import sys

import numpy as np
import tensorflow as tf


def idx(path):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    ndim = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(raw, np.uint8, offset=4 + 4 * ndim).reshape(dims)


def feature_int(v):
    return tf.train.Feature(int64_list=tf.train.Int64List(value=[v]))


def write(path, images, labels):
    with tf.io.TFRecordWriter(path) as w:
        for img, lab in zip(images, labels):
            ex = tf.train.Example(features=tf.train.Features(feature={
                "height": feature_int(28), "width": feature_int(28), "depth": feature_int(1),
                "label": feature_int(int(lab)),
                "image_raw": tf.train.Feature(bytes_list=tf.train.BytesList(value=[img.tobytes()]))}))
            w.write(ex.SerializeToString())
    print("Writing", path, len(labels))


d = sys.argv[1]
val = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
images = idx(os.path.join(d, "train-images-idx3-ubyte.gz"))
labels = idx(os.path.join(d, "train-labels-idx1-ubyte.gz"))
write(os.path.join(d, "validation.tfrecords"), images[:val], labels[:val])
write(os.path.join(d, "train.tfrecords"), images[val:], labels[val:])
