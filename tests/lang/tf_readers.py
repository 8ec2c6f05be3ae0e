# Readers of TF1's input pipelines: TextLineReader + decode_csv, TFRecordWriter +
# TFRecordReader, through string_input_producer and QueueRunner threads.
import os
import shutil
import tempfile
import tensorflow as tf

d = tempfile.mkdtemp()
csv = os.path.join(d, "data.csv")
with open(csv, "w") as f:
    f.write("x,y,label\n1.5,2,cat\n-3,,dog\n4e1,7,\"a,b\"\n")
rec = os.path.join(d, "data.tfrecord")
with tf.python_io.TFRecordWriter(rec) as w:
    for s in [b"first", b"", b"\x00\xffthird", "fourth"]:
        w.write(s)
print([r for r in tf.python_io.tf_record_iterator(rec)])

files = tf.train.string_input_producer([csv], num_epochs=1, shuffle=False)
reader = tf.TextLineReader(skip_header_lines=1)
key, value = reader.read(files)
x, y, label = tf.decode_csv(value, record_defaults=[[0.0], [-1], ["?"]])
print(x.dtype, y.dtype, label.dtype)
with tf.Session() as sess:
    sess.run(tf.local_variables_initializer())
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess, coord)
    try:
        while True:
            k, a, b, c = sess.run([key, x, y, label])
            print(os.path.basename(k.decode()), a, b, c)
    except tf.errors.OutOfRangeError:
        print("done")
    coord.request_stop()
    coord.join(threads)

# decode_csv errors and a batch of records at once
with tf.Session() as sess:
    print(sess.run(tf.decode_csv(["1|a", "2|b"], [[0], [""]], field_delim="|")))
    try:
        sess.run(tf.decode_csv(["1,2"], [[0]]))
    except tf.errors.InvalidArgumentError as e:
        print("InvalidArgumentError:", [l for l in e.message.split("\n") if "fields" in l][0].strip())
    try:
        sess.run(tf.decode_csv([","], [[0], []]))
    except tf.errors.InvalidArgumentError as e:
        print("InvalidArgumentError:", [l for l in e.message.split("\n") if "required" in l][0].strip())

tf.reset_default_graph()
files = tf.train.string_input_producer([rec, rec], num_epochs=1, shuffle=False)
key, value = tf.TFRecordReader().read(files)
with tf.Session() as sess:
    sess.run(tf.local_variables_initializer())
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess, coord)
    got = []
    try:
        while True:
            k, v = sess.run([key, value])
            got.append((os.path.basename(k.decode()), v))
    except tf.errors.OutOfRangeError:
        print(got)
    coord.request_stop()
    coord.join(threads)
shutil.rmtree(d)
