# tf.train.Example protos through TFRecord files, parsed with parse_example /
# parse_single_example (FixedLenFeature with defaults, VarLenFeature).
import os
import shutil
import tempfile
import tensorflow as tf

def example(i):
    f = {"x": tf.train.Feature(float_list=tf.train.FloatList(value=[i * 0.5, i * 1.5])),
         "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[i])),
         "tags": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"t%d" % k for k in range(i)]))}
    if i != 2:
        f["name"] = tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"n%d" % i]))
    return tf.train.Example(features=tf.train.Features(feature=f))

d = tempfile.mkdtemp()
path = os.path.join(d, "ex.tfrecord")
with tf.python_io.TFRecordWriter(path) as w:
    for i in range(4):
        w.write(example(i).SerializeToString())
spec = {"x": tf.FixedLenFeature([2], tf.float32), "label": tf.FixedLenFeature([], tf.int64),
        "name": tf.FixedLenFeature([], tf.string, default_value="none"), "tags": tf.VarLenFeature(tf.string)}
records = list(tf.python_io.tf_record_iterator(path))
batch = tf.parse_example(records, spec)
print(sorted(batch.keys()), batch["x"].dtype, batch["label"].dtype)
one = tf.parse_single_example(records[3], spec)
with tf.Session() as sess:
    x, label, name, ti, tv, ts = sess.run([batch["x"], batch["label"], batch["name"], batch["tags"].indices,
                                           batch["tags"].values, batch["tags"].dense_shape])
    print(x.tolist(), label.tolist(), name.tolist())
    print(ti.tolist(), tv.tolist(), ts.tolist())
    print(sess.run(one["x"]).tolist(), sess.run(one["label"]), sess.run(one["tags"].values).tolist(),
          sess.run(one["tags"].dense_shape).tolist())
    try:
        sess.run(tf.parse_single_example(records[0], {"x": tf.FixedLenFeature([3], tf.float32)})["x"])
    except tf.errors.InvalidArgumentError as e:
        print("InvalidArgumentError:", [l for l in e.message.split("\n") if "Key: x" in l][0].strip())
    try:
        sess.run(tf.parse_single_example(records[0], {"y": tf.FixedLenFeature([], tf.float32)})["y"])
    except tf.errors.InvalidArgumentError as e:
        print("InvalidArgumentError:", [l for l in e.message.split("\n") if "required" in l][0].strip())

# the classic pipeline: TFRecordReader -> parse_single_example -> shuffle_batch
files = tf.train.string_input_producer([path], num_epochs=2, shuffle=False)
_, ser = tf.TFRecordReader().read(files)
parsed = tf.parse_single_example(ser, {"label": tf.FixedLenFeature([], tf.int64)})
labels = tf.train.batch([parsed["label"]], batch_size=3, allow_smaller_final_batch=True)
with tf.Session() as sess:
    sess.run(tf.local_variables_initializer())
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess, coord)
    got = []
    try:
        while True:
            got.extend(sess.run(labels).tolist())
    except tf.errors.OutOfRangeError:
        print(sorted(got))
    coord.request_stop()
    coord.join(threads)
shutil.rmtree(d)
