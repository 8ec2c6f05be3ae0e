#!/usr/bin/env bash
# TensorFlow's own files without TensorFlow: the fixtures under tests/fixtures/tf/ were
# written by real TF (scripts/tf_oracle/make_fixtures.py); tfsh restores and reads them
# (plain, sharded over two devices, a partitioned variable) and must find what values.json
# says. tfsh's own checkpoints (one shard, and sharded over two ps tasks) read back through
# the same readers; a checkpoint in tfsh's first layout (tests/fixtures/tfsh1/) still
# restores; damaged indexes name the file and the offset. test_tf_oracle.sh has TF read
# tfsh's files.
. "$(dirname "$0")/lib.sh"
FX=$TFSH_SRC/tests/fixtures
cat >"$WORK/read.py" <<'PY'
import json
import sys
import numpy as np
import tensorflow as tf
fx = sys.argv[1]
values = json.load(open(fx + "/tf/values.json"))


def same(got, want):
    got = np.asarray(got)
    if isinstance(want, list) and want and isinstance(want[0], str):
        return [x.decode() for x in got.reshape(-1).tolist()] == want
    return np.allclose(got.astype(np.float64), np.array(want, dtype=np.float64))


for prefix in sorted(k for k in values if not k.endswith(".pb")):
    want = values[prefix]
    r = tf.train.NewCheckpointReader(fx + "/tf/" + prefix)
    names = sorted(r.get_variable_to_shape_map().keys())
    ok = names == sorted(want.keys()) and all(same(r.get_tensor(n), want[n]) for n in names)
    print(prefix, "reader", "ok" if ok else "DIFFERS %s" % names)
    d = prefix.split("/")[0]
    lv = tf.train.list_variables(fx + "/tf/" + d)
    print(prefix, "list_variables", [n for (n, s) in lv] == sorted(want.keys()))
    print(prefix, "load_variable", all(same(tf.train.load_variable(fx + "/tf/" + d, n), want[n]) for n in want))

# Saver.restore of TF's training checkpoint into variables built here
want = values["train/model.ckpt-3"]
w = tf.Variable(tf.zeros([2, 3]), name="w")
b = tf.Variable(tf.zeros([3]), name="b")
dd = tf.Variable(np.array([0.0, 0.0]), name="d")
i = tf.Variable(np.array([0, 0, 0], np.int32), name="i")
flag = tf.Variable(False, name="flag")
words = tf.Variable(["", "", ""], name="words")
gs = tf.train.get_or_create_global_step()
saver = tf.train.Saver()
with tf.Session() as sess:
    saver.restore(sess, tf.train.latest_checkpoint(fx + "/tf/train"))
    got = dict(zip(["w", "b", "d", "i", "flag", "words", "global_step"], sess.run([w, b, dd, i, flag, words, gs])))
    print("Saver.restore", all(same(got[k], want[k]) for k in want))
    # and tfsh's own save of the same values reads back
    path = saver.save(sess, sys.argv[2] + "/model.ckpt", global_step=gs)
r = tf.train.NewCheckpointReader(path)
print("tfsh save reads back", all(same(r.get_tensor(k), want[k]) for k in want))
print("tfsh1", tf.train.list_variables(fx + "/tfsh1/model.ckpt-1"), [x if isinstance(x, str) else x.decode() for x in tf.train.load_variable(fx + "/tfsh1/model.ckpt-1", "s").tolist()])
PY
mkdir -p "$WORK/out"
out=$(timeout 60 "$TFSH" "$WORK/read.py" "$FX" "$WORK/out" 2>&1)
for p in partitioned/model.ckpt sharded/model.ckpt-5 train/model.ckpt-3; do
  check "TF's $p: NewCheckpointReader" "$p reader ok" "$(echo "$out" | grep "^$p reader")"
  check "TF's $p: list_variables" "$p list_variables True" "$(echo "$out" | grep "^$p list_variables")"
  check "TF's $p: load_variable" "$p load_variable True" "$(echo "$out" | grep "^$p load_variable")"
done
check "Saver.restore of TF's checkpoint" "Saver.restore True" "$(echo "$out" | grep "^Saver.restore")"
check "tfsh's save reads back" "tfsh save reads back True" "$(echo "$out" | grep "^tfsh save")"
check "tfsh's save: the data file is byte for byte TF's" "same" \
  "$(cmp -s "$WORK/out/model.ckpt-3.data-00000-of-00001" "$FX/tf/train/model.ckpt-3.data-00000-of-00001" && echo same)"
check "tfsh's first layout still restores" "tfsh1 [('n', [2]), ('s', [2]), ('w', [2, 2])] ['x', 'yz']" "$(echo "$out" | grep "^tfsh1")"
[ "$FAILS" = 0 ] || echo "$out"

# GraphDefs: TF's binary format in (import_graph_def with input_map and return_elements,
# devices and _class kept) and out (write_graph(as_text=False), parsed back)
cat >"$WORK/graph.py" <<'PY'
import json
import sys
import tensorflow as tf
fx = sys.argv[1]
want = json.load(open(fx + "/tf/values.json"))["forward.pb"]
gd = tf.GraphDef()
gd.ParseFromString(open(fx + "/tf/forward.pb", "rb").read())
print("parsed", len(gd.node), [n.op for n in gd.node][:3])
x = tf.placeholder(tf.float32, [None, 2], name="x")
out, h = tf.import_graph_def(gd, input_map={"x:0": x}, return_elements=["out:0", "h"], name="m")
print("returned", out.name, h.name)
g = tf.get_default_graph()
print("devices", g.get_operation_by_name("m/w").device, g.get_operation_by_name("m/h").device)
print("colocation", g.get_operation_by_name("m/b").get_attr("_class"))
with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
    got = sess.run(out, {x: want["x"]}).tolist()
print("values", got == want["out"])
gd2 = tf.GraphDef()
gd2.ParseFromString(open(fx + "/tf/graph.pb", "rb").read())
tf.import_graph_def(gd2, name="t")
print("TF's training graph imports", len(gd2.node) == len([op for op in g.get_operations() if op.name.startswith("t/")]))
try:
    tf.import_graph_def(b"\x0a\x0d\x0a\x01a\x12\x08NoSuchOp")   # node {name: "a" op: "NoSuchOp"}
except ValueError as e:
    print("unknown ops:", str(e))
c8 = tf.GraphDef()   # a uint8 constant (DataType 4, TF's int_val) imports and runs
c8.ParseFromString(open(fx + "/tf/image/const_u8.pb", "rb").read())
with tf.Graph().as_default():
    tf.import_graph_def(c8, name="u")
    with tf.Session() as s:
        print("uint8 constant:", repr(s.run("u/c8:0")))
path = tf.train.write_graph(g, sys.argv[2], "g.pb", as_text=False)
back = tf.GraphDef()
back.ParseFromString(open(path, "rb").read())
print("round trip", [n.name for n in back.node] == [op.name for op in g.get_operations()],
      back.node[2].attr["value"].value[2] == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
PY
out=$(timeout 60 "$TFSH" "$WORK/graph.py" "$FX" "$WORK/out" 2>&1)
check "TF's binary GraphDef parses" "parsed 8 ['Placeholder', 'Const', 'Const']" "$(echo "$out" | grep "^parsed")"
check "import_graph_def: return_elements" "returned m/out:0 m/h" "$(echo "$out" | grep "^returned")"
check "import_graph_def: device fields kept" "devices /job:ps/task:0 /job:worker/task:0" "$(echo "$out" | grep "^devices")"
check "import_graph_def: _class colocation kept, renamed" "colocation [b'loc:@m/w']" "$(echo "$out" | grep "^colocation")"
check "import_graph_def: input_map, and the imported graph runs" "values True" "$(echo "$out" | grep "^values")"
check "import_graph_def: TF's training graph (gradients, saver) imports" "TF's training graph imports True" "$(echo "$out" | grep "^TF's training")"
check "import_graph_def: ops tfsh lacks are named" "unknown ops: import_graph_def: 1 node of GraphDef uses ops tfsh does not have: 'NoSuchOp' (node 'a')" "$(echo "$out" | grep "^unknown ops")"
check "a uint8 constant imports and runs" \
  "uint8 constant: array([1, 2], dtype=uint8)" \
  "$(echo "$out" | grep "^uint8 constant")"
check "write_graph(as_text=False) parses back" "round trip True True" "$(echo "$out" | grep "^round trip")"
[ "$FAILS" = 0 ] || echo "$out"

# damaged files: errors name the file and the offset
D=$WORK/bad
mkdir -p "$D"
cp "$FX"/tf/train/model.ckpt-3.* "$D/"
cat >"$WORK/one.py" <<'PY'
import sys
import tensorflow as tf
try:
    print(tf.train.load_variable(sys.argv[1], "w"))
except tf.errors.OpError as e:
    print(type(e).__name__ + ": " + e.message)
PY
printf 'XXXX' | dd of="$D/model.ckpt-3.index" bs=1 seek=20 conv=notrunc 2>/dev/null
check "a damaged block: checksum error naming the index and the block's offset" \
  "DataLossError: Checksum does not match in $D/model.ckpt-3.index: block at offset 0" \
  "$(timeout 30 "$TFSH" "$WORK/one.py" "$D/model.ckpt-3" 2>&1 | cut -d: -f1-3)"
head -c 100 "$FX/tf/train/model.ckpt-3.index" >"$D/model.ckpt-3.index"
check "a truncated index" "DataLossError: $D/model.ckpt-3.index is not a checkpoint index: no table magic at offset 92" \
  "$(timeout 30 "$TFSH" "$WORK/one.py" "$D/model.ckpt-3" 2>&1 | cut -d'(' -f1 | sed 's/ $//')"
cp "$FX"/tf/train/model.ckpt-3.index "$D/"
printf 'X' | dd of="$D/model.ckpt-3.data-00000-of-00001" bs=1 seek=50 conv=notrunc 2>/dev/null
check "a damaged tensor names it, the data file and the offset" \
  "DataLossError: Checksum does not match: stored 0xa70dc215 vs. calculated on the restored bytes 0x5c7a32ef, for tensor w in $D/model.ckpt-3.data-00000-of-00001 at offset 49" \
  "$(timeout 30 "$TFSH" "$WORK/one.py" "$D/model.ckpt-3" 2>&1)"
finish
