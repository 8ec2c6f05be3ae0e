# The CIFAR-10 tutorial's input pipeline (cifar10_input.py's read_cifar10, inputs and
# distorted_inputs, rebuilt here on a small file in the CIFAR-10 binary format): a
# FixedLengthRecordReader, decode_raw, strided_slice, the eval crop and standardization
# through tf.train.batch (deterministic: compared with TF), and the training distortions
# (random_crop, flips, brightness, contrast) through shuffle_batch (shapes and ranges).
import os
import numpy as np
import tensorflow as tf

d = os.path.join(os.environ.get("TMPDIR", "/tmp"), "tfsh_cifar_%d" % os.getpid())
os.makedirs(d, exist_ok=True)
path = os.path.join(d, "data_batch_1.bin")
rec = []
for i in range(6):
    img = (np.arange(3 * 32 * 32) * (i + 3) + i * 17) % 256
    rec.append(bytes([i % 10]) + img.astype(np.uint8).tobytes())
with open(path, "wb") as f:
    f.write(b"".join(rec))

def read_cifar10(filename_queue):
    reader = tf.FixedLengthRecordReader(record_bytes=1 + 3 * 32 * 32)
    key, value = reader.read(filename_queue)
    record_bytes = tf.decode_raw(value, tf.uint8)
    label = tf.cast(tf.strided_slice(record_bytes, [0], [1]), tf.int32)
    depth_major = tf.reshape(tf.strided_slice(record_bytes, [1], [1 + 3 * 32 * 32]), [3, 32, 32])
    return key, label, tf.transpose(depth_major, [1, 2, 0])

with tf.Graph().as_default():
    q = tf.train.string_input_producer([path], shuffle=False)
    key, label, image = read_cifar10(q)
    reshaped = tf.cast(image, tf.float32)
    resized = tf.image.resize_image_with_crop_or_pad(reshaped, 24, 24)
    float_image = tf.image.per_image_standardization(resized)
    float_image.set_shape([24, 24, 3])
    label.set_shape([1])
    images, labels = tf.train.batch([float_image, label], batch_size=4, num_threads=1, capacity=20)
    labels = tf.reshape(labels, [4])
    print(images.shape, labels.shape)
    with tf.Session() as s:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=s, coord=coord)
        for _ in range(2):
            im, lb = s.run([images, labels])
            print(lb, np.round(im[:, 0, :3, 0], 4), bool(np.all(np.abs(im.mean(axis=(1, 2, 3))) < 1e-4)), np.round(im.std(axis=(1, 2, 3)), 4))
        coord.request_stop()
        coord.join(threads)

with tf.Graph().as_default():
    q = tf.train.string_input_producer([path])
    key, label, image = read_cifar10(q)
    reshaped = tf.cast(image, tf.float32)
    distorted = tf.random_crop(reshaped, [24, 24, 3])
    distorted = tf.image.random_flip_left_right(distorted)
    distorted = tf.image.random_brightness(distorted, max_delta=63)
    distorted = tf.image.random_contrast(distorted, lower=0.2, upper=1.8)
    float_image = tf.image.per_image_standardization(distorted)
    float_image.set_shape([24, 24, 3])
    label.set_shape([1])
    images, labels = tf.train.shuffle_batch([float_image, label], batch_size=8, num_threads=2, capacity=40,
                                            min_after_dequeue=10)
    print(images.shape, labels.shape)
    with tf.train.MonitoredSession() as s:
        im, lb = s.run([images, labels])
        print(im.shape, lb.shape, set(lb.reshape(-1).tolist()) <= set([0, 1, 2, 3, 4, 5]),
              bool(np.all(np.abs(im.mean(axis=(1, 2, 3))) < 1e-3)), bool(np.all(np.abs(im.std(axis=(1, 2, 3)) - 1) < 1e-2)))
os.remove(path)
os.rmdir(d)
