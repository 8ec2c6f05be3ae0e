#!/usr/bin/env bash
# MetaGraphs without TensorFlow: TF's own training directory
# (tests/fixtures/tf/train, written by scripts/tf_oracle/make_fixtures.py) is resumed here:
# import_meta_graph restores the graph, its collections and its Saver, the checkpoint
# restores, and the imported train_op trains on, step for step as TF does (the expected
# losses and weights are TF's own, from the same resume run under TF). Saver.save writes the
# .meta beside the checkpoint, which imports again; export_meta_graph's collections and
# SaverDef read back; import_scope and clear_devices; a training graph built here, written
# with TF's ops for tfsh's gradient helpers, trains on after import; damaged .meta files
# are named with the
# offset where they break. test_tf_oracle.sh has TF import what tfsh wrote.
. "$(dirname "$0")/lib.sh"
FX=$TFSH_SRC/tests/fixtures/tf
cat >"$WORK/resume.py" <<'PY'
import sys
import tensorflow as tf
fx, out = sys.argv[1], sys.argv[2]
saver = tf.train.import_meta_graph(fx + "/train/model.ckpt-3.meta")
print("saver", type(saver).__name__)
print("trainable", [v.name for v in tf.trainable_variables()])
print("variables", [v.name for v in tf.global_variables()])
print("global_step", tf.train.get_global_step().name)
print("train_op", [op.name for op in tf.get_collection("train_op")])
print("summaries", [t.name for t in tf.get_collection("summaries")])
g = tf.get_default_graph()
feed = {g.get_tensor_by_name("x:0"): [[1.0, 0.0], [0.0, 1.0]], g.get_tensor_by_name("y:0"): [[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]]}
loss = g.get_tensor_by_name("loss:0")
with tf.Session() as sess:
    saver.restore(sess, tf.train.latest_checkpoint(fx + "/train"))
    print("restored step", sess.run(tf.train.get_global_step()))
    for _ in range(2):
        l, _ = sess.run([loss, tf.get_collection("train_op")[0]], feed)
        print("loss %.6f" % l)
    print("step", sess.run(tf.train.get_global_step()))
    print("w", [["%.6f" % x for x in row] for row in sess.run(g.get_tensor_by_name("w:0")).tolist()])
    print("saved", saver.save(sess, out + "/model.ckpt", global_step=tf.train.get_global_step()).split("/")[-1])
PY
mkdir -p "$WORK/out"
out=$(timeout 60 "$TFSH" "$WORK/resume.py" "$FX" "$WORK/out" 2>&1)
check "import_meta_graph returns a Saver" "saver Saver" "$(echo "$out" | grep "^saver")"
check "trainable variables restored" "trainable ['w:0', 'b:0', 'd:0', 'i:0', 'flag:0', 'words:0']" "$(echo "$out" | grep "^trainable")"
check "global variables restored" "variables ['w:0', 'b:0', 'd:0', 'i:0', 'flag:0', 'words:0', 'global_step:0']" "$(echo "$out" | grep "^variables")"
check "tf.train.get_global_step()" "global_step global_step:0" "$(echo "$out" | grep "^global_step")"
check "the train_op collection" "train_op ['train']" "$(echo "$out" | grep "^train_op")"
check "the summaries collection" "summaries ['loss_1:0', 'w_1:0']" "$(echo "$out" | grep "^summaries")"
check "TF's checkpoint restores through TF's own restore op" "restored step 3" "$(echo "$out" | grep "^restored")"
check "the imported train_op trains as under TF" "loss 8.677831 loss 7.435202 step 5" "$(echo "$out" | grep -E "^(loss|step)" | tr '\n' ' ' | sed 's/ $//')"
check "the weights after two steps are TF's" \
  "w [['0.970581', '1.970581', '2.731700'], ['3.346902', '4.346902', '5.108021']]" "$(echo "$out" | grep "^w ")"
check "Saver.save writes the checkpoint and its .meta" "saved model.ckpt-5 | checkpoint model.ckpt-5.data-00000-of-00001 model.ckpt-5.index model.ckpt-5.meta" \
  "$(echo "$out" | grep "^saved") | $(ls "$WORK/out" | tr '\n' ' ' | sed 's/ $//')"
[ "$FAILS" = 0 ] || echo "$out"

# the .meta tfsh wrote imports again (a fresh process), under a scope and without devices
cat >"$WORK/again.py" <<'PY'
import sys
import tensorflow as tf
out = sys.argv[1]
saver = tf.train.import_meta_graph(out + "/model.ckpt-5.meta", import_scope="m", clear_devices=True)
g = tf.get_default_graph()
print("scoped", [v.name for v in tf.trainable_variables()][:2], [op.name for op in tf.get_collection("train_op")])
print("devices", repr(g.get_operation_by_name("m/MatMul").device))
with tf.Session() as sess:
    saver.restore(sess, out + "/model.ckpt-5")
    print("step", sess.run(g.get_tensor_by_name("m/global_step:0")))
mg = tf.train.export_meta_graph(out + "/export.meta")
print("export", sorted(mg.collection_def.keys()), mg.HasField("saver_def"))
back = tf.MetaGraphDef()
back.ParseFromString(open(out + "/export.meta", "rb").read())
print("back", len(back.graph_def.node) == len(g.get_operations()), back.collection_def["train_op"].node_list.value,
      back.collection_def["variables"].WhichOneof("kind"), len(back.collection_def["variables"].bytes_list.value))
sd = saver.as_saver_def()
print("saver_def", sd.filename_tensor_name, sd.save_tensor_name, sd.restore_op_name, sd.max_to_keep)
with tf.Session() as sess:
    tf.train.Saver(saver_def=sd).restore(sess, out + "/model.ckpt-5")
    print("Saver(saver_def=...) restores", sess.run(g.get_tensor_by_name("m/global_step:0")))
PY
out=$(timeout 60 "$TFSH" "$WORK/again.py" "$WORK/out" 2>&1)
check "import_scope prefixes names and collections" "scoped ['m/w:0', 'm/b:0'] ['m/train']" "$(echo "$out" | grep "^scoped")"
check "clear_devices drops the device fields" "devices ''" "$(echo "$out" | grep "^devices")"
check "the scoped Saver restores tfsh's checkpoint" "step 5" "$(echo "$out" | grep "^step")"
check "export_meta_graph: collections, no SaverDef unless given" \
  "export ['global_step', 'summaries', 'train_op', 'trainable_variables', 'variables'] False" "$(echo "$out" | grep "^export")"
check "a MetaGraphDef parses back" "back True ['m/train'] bytes_list 7" "$(echo "$out" | grep "^back")"
check "the imported Saver's SaverDef" "saver_def m/save/Const:0 m/save/control_dependency:0 m/save/restore_all 3" "$(echo "$out" | grep "^saver_def")"
check "Saver(saver_def=...)" "Saver(saver_def=...) restores 5" "$(echo "$out" | grep "^Saver(saver_def")"
[ "$FAILS" = 0 ] || echo "$out"

# a training graph built here: its .meta (gradients written as TF's ops) imports in a fresh
# process and trains on loss for loss
cat >"$WORK/built.py" <<'PY'
import sys
import tensorflow as tf
out = sys.argv[1]
x = tf.placeholder(tf.float32, [None, 2], name="x")
w = tf.Variable([[1.0, 2.0], [3.0, 4.0]], name="w")
b = tf.Variable([0.5, -0.5], name="b")
loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b), name="loss")
gs = tf.train.get_or_create_global_step()
train_op = tf.train.GradientDescentOptimizer(0.01).minimize(loss, global_step=gs, name="train")
saver = tf.train.Saver()
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    sess.run(train_op, {x: [[1.0, 2.0]]})
    saver.save(sess, out + "/built/model.ckpt", global_step=gs)
    print("here %.4f %.4f" % tuple(sess.run([loss, train_op], {x: [[1.0, 2.0]]})[0] for _ in range(2)))
PY
cat >"$WORK/built2.py" <<'PY'
import sys
import tensorflow as tf
out = sys.argv[1]
saver = tf.train.import_meta_graph(out + "/built/model.ckpt-1.meta")
g = tf.get_default_graph()
print("helpers", sorted(set(op.type for op in g.get_operations() if op.type.startswith("_"))))
x = g.get_tensor_by_name("x:0")
with tf.Session() as sess:
    saver.restore(sess, out + "/built/model.ckpt-1")
    print("here %.4f %.4f" % tuple(sess.run([g.get_tensor_by_name("loss:0"), tf.get_collection("train_op")[0]], {x: [[1.0, 2.0]]})[0] for _ in range(2)))
PY
mkdir -p "$WORK/out/built"
first=$(timeout 60 "$TFSH" "$WORK/built.py" "$WORK/out" 2>&1)
again=$(timeout 60 "$TFSH" "$WORK/built2.py" "$WORK/out" 2>&1)
check "a tfsh-built training graph trains" "here 64.7237 57.1899" "$first"
check "its .meta has no tfsh-only ops" "helpers []" "$(echo "$again" | grep "^helpers")"
check "and imported again it trains on the same" "$first" "$(echo "$again" | grep "^here")"

# damaged files: errors name the file and the offset, never a crash
D=$WORK/bad
mkdir -p "$D"
cat >"$WORK/one.py" <<'PY'
import sys
import tensorflow as tf
try:
    tf.train.import_meta_graph(sys.argv[1])
    print("imported")
except tf.errors.OpError as e:
    print(type(e).__name__ + ": " + e.message)
PY
head -c 5000 "$FX/train/model.ckpt-3.meta" >"$D/trunc.meta"
check "a truncated .meta" "DataLossError: $D/trunc.meta: not a MetaGraphDef (damaged at offset 3025: a length past the end)" \
  "$(timeout 30 "$TFSH" "$WORK/one.py" "$D/trunc.meta" 2>&1)"
printf '\077not a protocol buffer' >"$D/junk.meta"
check "a file that is not one" "DataLossError: $D/junk.meta: not a MetaGraphDef (damaged at offset 0: an unknown wire type)" \
  "$(timeout 30 "$TFSH" "$WORK/one.py" "$D/junk.meta" 2>&1)"
printf 'not a protocol buffer' >"$D/text.meta"
check "text that is not a MetaGraph: the file, line and column" "InvalidArgumentError: $D/text.meta:1:5: expected ':', got \"a\"" \
  "$(timeout 30 "$TFSH" "$WORK/one.py" "$D/text.meta" 2>&1)"
sed '30,$d' "$FX/textmeta/model.meta" >"$D/cut_text.meta"
check "a text MetaGraph cut short: the file, line and column" "InvalidArgumentError: $D/cut_text.meta:30:1: expected '}', got end of input" \
  "$(timeout 30 "$TFSH" "$WORK/one.py" "$D/cut_text.meta" 2>&1)"
head -c 20 "$FX/train/model.ckpt-3.meta" >"$D/short.meta"
check "a .meta cut in its first field" "$(printf 'DataLossError: %s/short.meta: not a MetaGraphDef (damaged at offset 0: a length past the end)' "$D")" \
  "$(timeout 30 "$TFSH" "$WORK/one.py" "$D/short.meta" 2>&1)"
cat >"$WORK/badvar.py" <<'PY'
import sys
import tensorflow as tf
mg = tf.MetaGraphDef()
mg.ParseFromString(open(sys.argv[1], "rb").read())
good = mg.collection_def["variables"].bytes_list.value[0]
mg.collection_def["variables"] = tf.CollectionDef("bytes_list", [good, "\x0a\x09w:0"])   # a name cut short
open(sys.argv[2], "wb").write(mg.SerializeToString())
PY
timeout 30 "$TFSH" "$WORK/badvar.py" "$FX/train/model.ckpt-3.meta" "$D/badvar.meta"
check "a damaged VariableDef in a collection: the file, the collection, the value, the offset" \
  "DataLossError: $D/badvar.meta: collection variables, value 1: not a VariableDef (damaged at offset 0: a length past the end)" \
  "$(timeout 30 "$TFSH" "$WORK/one.py" "$D/badvar.meta" 2>&1)"
finish
