#!/usr/bin/env bash
# TensorBoard event files through protobuf-c, without TensorFlow: tf.train.summary_iterator
# reads the event file real TF wrote (tests/fixtures/tf/train/, made by
# scripts/tf_oracle/make_fixtures.py; the expected lines are what TF's own summary_iterator
# printed for the same script), and reads back what tfsh's FileWriter writes: scalars,
# histograms (TF's buckets), PNG images, the graph (then its MetaGraphDef, as TF's) and a
# traced step's RunMetadata. A damaged file gives the events before the damage, then an
# error naming the file and the record's offset. test_tf_oracle.sh has TF and
# tensorboard's loader read tfsh's files.
. "$(dirname "$0")/lib.sh"
FX=$TFSH_SRC/tests/fixtures/tf
EV=$FX/train/events.out.tfevents.1796051078.vm.fixture
cat >"$WORK/read.py" <<'PY'
import sys
import tensorflow as tf
try:
    for e in tf.train.summary_iterator(sys.argv[1]):
        w = e.WhichOneof("what")
        line = [e.step, w]
        if w == "file_version":
            line.append(e.file_version)
        elif w == "graph_def":
            gd = tf.GraphDef()
            gd.ParseFromString(e.graph_def)
            line.append(len(gd.node))
        elif w == "tagged_run_metadata":
            rm = tf.RunMetadata()
            rm.ParseFromString(e.tagged_run_metadata.run_metadata)
            line += [e.tagged_run_metadata.tag, len(rm.step_stats.dev_stats),
                     sorted(n.node_name for n in rm.step_stats.dev_stats[0].node_stats if n.node_name == "y")]
        for v in e.summary.value:
            k = v.WhichOneof("value")
            if k == "simple_value":
                line.append((v.tag, round(v.simple_value, 6)))
            elif k == "histo":
                line.append((v.tag, v.histo.min, v.histo.max, v.histo.num, len(v.histo.bucket)))
            elif k == "image":
                line.append((v.tag, v.image.width, v.image.height, v.image.colorspace,
                             v.image.encoded_image_string[1:4]))
        print(*line)
except tf.errors.OpError as e:
    print(type(e).__name__ + ": " + e.message)
PY
check "summary_iterator reads TF's event file" "0 file_version brain.Event:2
0 graph_def 110
0 meta_graph_def
1 summary ('loss_1', 14.1875) ('w_1', 1.0, 6.0, 6.0, 13)
2 summary ('loss_1', 11.989652) ('w_1', 0.972777783870697, 5.599721908569336, 6.0, 12)
3 summary ('loss_1', 10.176763) ('w_1', 0.9675740599632263, 5.422675609588623, 6.0, 13)" \
  "$(timeout 60 "$TFSH" "$WORK/read.py" "$EV" 2>&1)"

# TF's event file with an image summary and a traced step's RunMetadata (the expected lines
# are what TF's summary_iterator gave for the same script)
cat >"$WORK/read2.py" <<'PY'
import sys
import tensorflow as tf
for e in tf.train.summary_iterator(sys.argv[1]):
    w = e.WhichOneof("what")
    line = [e.step, w]
    if w == "graph_def":
        line.append(e.HasField("graph_def"))
    elif w == "tagged_run_metadata":
        rm = tf.RunMetadata()
        rm.ParseFromString(e.tagged_run_metadata.run_metadata)
        line += [e.tagged_run_metadata.tag, len(rm.step_stats.dev_stats),
                 sorted(n.node_name for d in rm.step_stats.dev_stats for n in d.node_stats if n.node_name in ("y", "img", "MatMul"))]
    for v in e.summary.value:
        k = v.WhichOneof("value")
        if k == "simple_value":
            line.append((v.tag, v.simple_value))
        elif k == "image":
            line.append((v.tag, v.image.height, v.image.width, v.image.colorspace, v.image.encoded_image_string[1:4] == b"PNG"))
    print(*line)
PY
check "summary_iterator reads TF's images and RunMetadata" "0 file_version
0 graph_def True
0 meta_graph_def
1 summary ('pic/image/0', 2, 2, 3, True) ('y_1', 3.0)
1 tagged_run_metadata step1 1 ['MatMul', 'y']" \
  "$(timeout 60 "$TFSH" "$WORK/read2.py" "$FX/events/events.out.tfevents.1796059894.vm.fixture" 2>&1)"

# tfsh writes every kind of event, and reads them back
cat >"$WORK/write.py" <<'PY'
import sys
import tensorflow as tf
x = tf.placeholder(tf.float32, [None, 2], name="x")
w = tf.Variable([[1.0, 2.0], [3.0, 4.0]], name="w")
y = tf.matmul(x, w, name="y")
tf.summary.scalar("loss", tf.reduce_sum(y))
tf.summary.histogram("weights", w)
tf.summary.image("img", tf.reshape(tf.range(12, dtype=tf.float32), [1, 2, 2, 3]))
merged = tf.summary.merge_all()
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    writer = tf.summary.FileWriter(sys.argv[1], sess.graph, filename_suffix=".t")
    for step in range(2):
        rm = tf.RunMetadata()
        s = sess.run(merged, {x: [[1.0, 2.0]]}, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                     run_metadata=rm)
        writer.add_summary(s, step + 1)
        writer.add_run_metadata(rm, "step%d" % step, step + 1)
    writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="by_hand", simple_value=2.5)]), 7)
    writer.add_session_log(tf.SessionLog(status=tf.SessionLog.STOP), 8)
    writer.close()
print(writer._path)
PY
mkdir -p "$WORK/ev"
path=$(timeout 60 "$TFSH" "$WORK/write.py" "$WORK/ev" 2>&1 | tail -1)
check "FileWriter names the file as TF does" "yes" "$(case "$path" in "$WORK"/ev/events.out.tfevents.*.t) echo yes ;; *) echo "$path" ;; esac)"
check "summary_iterator reads tfsh's events" "0 file_version brain.Event:2
0 graph_def 22
0 meta_graph_def
1 summary ('loss', 17.0) ('weights', 1.0, 4.0, 4.0, 9) ('img/image/0', 2, 2, 3, b'PNG')
1 tagged_run_metadata step0 1 ['y']
2 summary ('loss', 17.0) ('weights', 1.0, 4.0, 4.0, 9) ('img/image/0', 2, 2, 3, b'PNG')
2 tagged_run_metadata step1 1 ['y']
7 summary ('by_hand', 2.5)
8 session_log" "$(timeout 60 "$TFSH" "$WORK/read.py" "$path" 2>&1)"

cat >"$WORK/parse.py" <<'PY'
import tensorflow as tf
m = tf.summary.merge([tf.summary.scalar("a", tf.constant(2.5)), tf.summary.histogram("h", tf.constant([1.0, 2.0]))])
with tf.Session() as sess:
    out = sess.run(m)
summ = tf.Summary()
summ.ParseFromString(out)
print([(v.tag, v.WhichOneof("value")) for v in summ.value], summ.value[0].simple_value, summ.value[1].histo.num,
      tf.Summary.FromString(out).SerializeToString() == out)
PY
check "tf.Summary parses a summary op's output" "[('a', 'simple_value'), ('h', 'histo')] 2.5 2.0 True" \
  "$(timeout 30 "$TFSH" "$WORK/parse.py" 2>&1)"

# damaged files: the events before the damage, then the file and the record's offset
cp "$EV" "$WORK/bad1"
printf 'X' | dd of="$WORK/bad1" bs=1 seek=200 conv=notrunc 2>/dev/null
check "a damaged record names the file and its offset" "0 file_version brain.Event:2
DataLossError: $WORK/bad1: corrupted record at offset 78: the data's checksum does not match" \
  "$(timeout 30 "$TFSH" "$WORK/read.py" "$WORK/bad1" 2>&1)"
head -c 300 "$EV" >"$WORK/bad2"
check "a truncated file names the file and the record's offset" "0 file_version brain.Event:2
DataLossError: $WORK/bad2: truncated record at offset 78: 15537 bytes of data announced, 210 left" \
  "$(timeout 30 "$TFSH" "$WORK/read.py" "$WORK/bad2" 2>&1)"
printf 'X' | dd of="$WORK/bad3" bs=1 seek=0 conv=notrunc 2>/dev/null
head -c 1 "$EV" | dd of="$WORK/bad3" bs=1 seek=1 conv=notrunc 2>/dev/null
check "a file that is not TFRecords" "DataLossError: $WORK/bad3: truncated record at offset 0: 2 bytes of a 12-byte header" \
  "$(timeout 30 "$TFSH" "$WORK/read.py" "$WORK/bad3" 2>&1)"
# a record whose checksums are right but whose bytes are no Event
python3 - "$EV" "$WORK/bad4" <<'PY'
import struct
import sys
def crc32c(data):
    c = 0xffffffff
    for b in data:
        c ^= b
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    return c ^ 0xffffffff
def masked(data):
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xa282ead8) & 0xffffffff
first = open(sys.argv[1], "rb").read()[:78]
junk = b"\xff\xff\xff"
head = struct.pack("<Q", len(junk))
open(sys.argv[2], "wb").write(first + head + struct.pack("<I", masked(head)) + junk + struct.pack("<I", masked(junk)))
PY
check "a record that is no Event names the file and the record's offset" "0 file_version brain.Event:2
DataLossError: $WORK/bad4: record at offset 78: not a valid tensorflow.Event (3 bytes)" \
  "$(timeout 30 "$TFSH" "$WORK/read.py" "$WORK/bad4" 2>&1)"
finish
