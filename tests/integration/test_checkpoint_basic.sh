#!/usr/bin/env bash
# Checkpoints and event files in one process: tf.train.Saver save / restore, the
# `checkpoint` state file, max_to_keep, latest_checkpoint; restore errors name the file and
# what is wrong (missing, tensor missing, bad CRC, truncated); a save killed in the middle
# (TFSH_CKPT_CRASH=data: after the data file, before the index) leaves the previous
# checkpoint as the latest and restorable; FileWriter's event file parses back (TFRecord
# length + masked CRC32C of length and data, Event fields: the MetaGraphDef's graph_def is
# its field 2) with a reader written here.
. "$(dirname "$0")/lib.sh"
D=$WORK/ckpt
mkdir -p "$D"
cat >"$WORK/model.py" <<PY
import sys
import tensorflow as tf
w = tf.Variable([[1.0, 2.0], [3.0, 4.0]], name="w")
b = tf.Variable(7, name="b", dtype=tf.int64)
if "extra" in sys.argv:
    v = tf.Variable(1.0, name="v")
gs = tf.train.get_or_create_global_step()
bump = tf.group(tf.assign_add(gs, 1), tf.assign_add(w, tf.ones([2, 2])), tf.assign_add(b, 1))
saver = tf.train.Saver(max_to_keep=2)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    if sys.argv[1] == "train":
        for i in range(int(sys.argv[2])):
            sess.run(bump)
            print(saver.save(sess, "$D/model.ckpt", global_step=gs))
    else:
        path = tf.train.latest_checkpoint("$D") if sys.argv[1] == "latest" else sys.argv[1]
        try:
            saver.restore(sess, path)
            print("restored", path, sess.run(w).tolist(), sess.run(b), sess.run(gs))
        except Exception as e:
            print(type(e).__name__ + ": " + str(e).split("\n")[0])
PY
out=$(timeout 60 "$TFSH" "$WORK/model.py" train 3 2>&1)
check "save returns the prefixes" "$D/model.ckpt-1 $D/model.ckpt-2 $D/model.ckpt-3" "$(echo $out)"
check "max_to_keep=2 keeps the last two (each with its .meta)" "checkpoint model.ckpt-2.data-00000-of-00001 model.ckpt-2.index model.ckpt-2.meta model.ckpt-3.data-00000-of-00001 model.ckpt-3.index model.ckpt-3.meta" "$(ls "$D" | tr '\n' ' ' | sed 's/ $//')"
check "state file in TF1's text format" "model_checkpoint_path: \"$D/model.ckpt-3\"
all_model_checkpoint_paths: \"$D/model.ckpt-2\"
all_model_checkpoint_paths: \"$D/model.ckpt-3\"" "$(cat "$D/checkpoint")"
check "restore latest" "restored $D/model.ckpt-3 [[4.0, 5.0], [6.0, 7.0]] 10 3" "$(timeout 60 "$TFSH" "$WORK/model.py" latest 2>&1)"
check "restore an older one" "restored $D/model.ckpt-2 [[3.0, 4.0], [5.0, 6.0]] 9 2" "$(timeout 60 "$TFSH" "$WORK/model.py" "$D/model.ckpt-2" 2>&1)"
check "missing checkpoint" "ValueError: The passed save_path is not a valid checkpoint: $D/nothere" \
  "$(timeout 60 "$TFSH" "$WORK/model.py" "$D/nothere" 2>&1)"
check "tensor missing" "NotFoundError: Key v not found in checkpoint $D/model.ckpt-3" \
  "$(timeout 60 "$TFSH" "$WORK/model.py" "$D/model.ckpt-3" extra 2>&1)"
cp "$D/model.ckpt-2.data-00000-of-00001" "$WORK/good"
printf '\xff\xff' | dd of="$D/model.ckpt-2.data-00000-of-00001" bs=1 seek=5 conv=notrunc 2>/dev/null
check "bad CRC names tensor and file" "DataLossError: Checksum does not match: stored" \
  "$(timeout 60 "$TFSH" "$WORK/model.py" "$D/model.ckpt-2" 2>&1 | cut -c1-46)"
timeout 60 "$TFSH" "$WORK/model.py" "$D/model.ckpt-2" 2>&1 | grep -q "for tensor b in $D/model.ckpt-2.data-00000-of-00001"
check "bad CRC message names the file" 0 $?
cp "$WORK/good" "$D/model.ckpt-2.data-00000-of-00001"
truncate -s 10 "$D/model.ckpt-2.data-00000-of-00001"
check "truncated data file" "DataLossError: $D/model.ckpt-2.data-00000-of-00001 is truncated: tensor global_step needs bytes [8, 16) but the file has 10" \
  "$(timeout 60 "$TFSH" "$WORK/model.py" "$D/model.ckpt-2" 2>&1)"
cp "$WORK/good" "$D/model.ckpt-2.data-00000-of-00001"
head -c 30 "$D/model.ckpt-3.index" >"$WORK/idx" && cp "$D/model.ckpt-3.index" "$WORK/good.idx" && cp "$WORK/idx" "$D/model.ckpt-3.index"
check "truncated index" "DataLossError: $D/model.ckpt-3.index is damaged at offset 0" \
  "$(timeout 60 "$TFSH" "$WORK/model.py" "$D/model.ckpt-3" 2>&1 | cut -d: -f1-2)"
cp "$WORK/good.idx" "$D/model.ckpt-3.index"

# crash drill: the 4th save is killed after its data file is written, before its index
( TFSH_CKPT_CRASH=data exec timeout 60 "$TFSH" "$WORK/model.py" train 1 >"$WORK/crash.log" 2>&1 ) 2>/dev/null
check "killed in the middle of a save" 137 $?
check "previous checkpoint still the latest" "restored $D/model.ckpt-3 [[4.0, 5.0], [6.0, 7.0]] 10 3" \
  "$(timeout 60 "$TFSH" "$WORK/model.py" latest 2>&1)"
check "no index for the interrupted save" "no" "$([ -e "$D/model.ckpt-1.index" ] && echo yes || echo no)"

# event files
cat >"$WORK/events.py" <<PY
import tensorflow as tf
x = tf.placeholder(tf.float32, [None])
tf.summary.scalar("loss", tf.reduce_mean(x))
with tf.name_scope("layer1"):
    tf.summary.histogram("acts", x)
merged = tf.summary.merge_all()
writer = tf.summary.FileWriter("$WORK/logs", tf.get_default_graph())
with tf.Session() as sess:
    for step in range(3):
        writer.add_summary(sess.run(merged, feed_dict={x: [1.0, 2.0, float(step)]}), step)
writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="acc", simple_value=0.5)]), 10)
writer.close()
PY
timeout 60 "$TFSH" "$WORK/events.py" >"$WORK/events.log" 2>&1
check "FileWriter script" 0 $?
cat >"$WORK/read_events.py" <<'PY'
import glob, struct, sys
def crc32c(data):
    c = 0xffffffff
    for b in data:
        c ^= b
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    return c ^ 0xffffffff
def masked(c):
    return (((c >> 15) | (c << 17)) + 0xa282ead8) & 0xffffffff
def varint(b, i):
    v = s = 0
    while True:
        x = b[i]; i += 1; v |= (x & 0x7f) << s; s += 7
        if not x & 0x80:
            return v, i
def fields(b):
    i, out = 0, []
    while i < len(b):
        k, i = varint(b, i)
        f, wt = k >> 3, k & 7
        if wt == 0: v, i = varint(b, i)
        elif wt == 1: v = b[i:i + 8]; i += 8
        elif wt == 5: v = b[i:i + 4]; i += 4
        elif wt == 2:
            n, i = varint(b, i); v = b[i:i + n]; i += n
        else: raise ValueError("wire type %d" % wt)
        out.append((f, v))
    return out
files = glob.glob(sys.argv[1] + "/events.out.tfevents.*." + sys.argv[2])
assert len(files) == 1, files
data = open(files[0], "rb").read()
i = 0
while i < len(data):
    hdr = data[i:i + 8]
    (n,) = struct.unpack("<Q", hdr)
    (lc,) = struct.unpack("<I", data[i + 8:i + 12])
    assert lc == masked(crc32c(hdr)), "bad length CRC at %d" % i
    body = data[i + 12:i + 12 + n]
    (dc,) = struct.unpack("<I", data[i + 12 + n:i + 16 + n])
    assert dc == masked(crc32c(body)), "bad data CRC at %d" % i
    i += 16 + n
    parts = []
    step = 0
    for f, v in fields(body):
        if f == 1: assert struct.unpack("<d", v)[0] > 1.5e9, "wall_time"
        elif f == 2: step = v
        elif f == 3: parts.append("version=" + v.decode())
        elif f == 4: parts.append("graph_nodes>0=%s" % (sum(1 for g in fields(v) if g[0] == 1) > 0))
        elif f == 9: parts.append("meta_graph_def=%s" % (sum(1 for g in fields(v) if g[0] == 2) == 1))
        elif f == 5:
            for _, val in fields(v):
                d = dict(fields(val))
                if 2 in d: parts.append("%s=%.4f" % (d[1].decode(), struct.unpack("<f", d[2])[0]))
                if 5 in d:
                    h = dict(fields(d[5]))
                    parts.append("%s:histo(num=%g,min=%g,max=%g)" % (d[1].decode(), struct.unpack("<d", h.get(3, bytes(8)))[0],
                                 struct.unpack("<d", h.get(1, bytes(8)))[0], struct.unpack("<d", h.get(2, bytes(8)))[0]))
    print("step=%d %s" % (step, " ".join(parts)))
PY
check "event file parses back" "step=0 version=brain.Event:2
step=0 graph_nodes>0=True
step=0 meta_graph_def=True
step=0 loss=1.0000 layer1/acts:histo(num=3,min=0,max=2)
step=1 loss=1.3333 layer1/acts:histo(num=3,min=1,max=2)
step=2 loss=1.6667 layer1/acts:histo(num=3,min=1,max=2)
step=10 acc=0.5000" "$(python3 "$WORK/read_events.py" "$WORK/logs" "$(hostname)" 2>&1)"
finish
