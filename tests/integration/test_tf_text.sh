#!/usr/bin/env bash
# GraphDefs in protobuf's text format, without TensorFlow: google.protobuf.text_format
# Merge / Parse read the graph.pbtxt files real TF wrote (tf.train.write_graph(as_text=True),
# tests/fixtures/tf/), tf.import_graph_def runs what they hold; text_format.MessageToString
# of TF's binary forward.pb is byte for byte TF's forward.pbtxt, and tfsh's
# write_graph(as_text=True) reads back. Damaged text names the line and column (and the file
# where tfsh reads one itself). test_tf_oracle.sh has TF's text_format read tfsh's text.
. "$(dirname "$0")/lib.sh"
FX=$TFSH_SRC/tests/fixtures/tf
cat >"$WORK/text.py" <<'PY'
import json
import sys
import tensorflow as tf
from google.protobuf import text_format
fx, out = sys.argv[1], sys.argv[2]
want = json.load(open(fx + "/values.json"))["forward.pb"]
gd = tf.GraphDef()
text_format.Merge(open(fx + "/forward.pbtxt").read(), gd)
print("merged", len(gd.node), [n.op for n in gd.node][:3], gd.node[1].device)
x = tf.placeholder(tf.float32, [None, 2], name="x")
y, = tf.import_graph_def(gd, input_map={"x:0": x}, return_elements=["out:0"], name="m")
g = tf.get_default_graph()
print("colocation", g.get_operation_by_name("m/b").get_attr("_class"))
with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
    print("values", sess.run(y, {x: want["x"]}).tolist() == want["out"])
big = text_format.Parse(open(fx + "/graph.pbtxt").read(), tf.GraphDef())
print("parsed", len(big.node), big.node[-1].name)
b = tf.GraphDef()
b.ParseFromString(open(fx + "/forward.pb", "rb").read())
open(out + "/forward.pbtxt", "w").write(text_format.MessageToString(b))
path = tf.train.write_graph(g, out, "mine.pbtxt", as_text=True)
back = text_format.Parse(open(path).read(), tf.GraphDef())
print("round trip", [n.name for n in back.node] == [op.name for op in g.get_operations()])
PY
mkdir -p "$WORK/out"
out=$(timeout 60 "$TFSH" "$WORK/text.py" "$FX" "$WORK/out" 2>&1)
check "text_format.Merge of TF's .pbtxt" "merged 8 ['Placeholder', 'Const', 'Const'] /job:ps/task:0" "$(echo "$out" | grep "^merged")"
check "import_graph_def of it keeps _class colocation" "colocation [b'loc:@m/w']" "$(echo "$out" | grep "^colocation")"
check "the imported text graph runs" "values True" "$(echo "$out" | grep "^values")"
check "text_format.Parse of TF's training graph" "parsed 110 init" "$(echo "$out" | grep "^parsed")"
check "MessageToString writes what TF's text_format writes" "same" \
  "$(cmp "$WORK/out/forward.pbtxt" "$FX/forward.pbtxt" && echo same)"
check "write_graph(as_text=True) reads back" "round trip True" "$(echo "$out" | grep "^round trip")"
[ "$FAILS" = 0 ] || echo "$out"

# damaged text: the line and the column, word for word
cat >"$WORK/bad.py" <<'PY'
import sys
import tensorflow as tf
from google.protobuf import text_format
for text in ['node {\n  name: "a\n}\n',
             'node {\n  name: "a"\n  attr {\n    key: "T"\n    value { type: DT_FLOOT }\n  }\n}\n',
             'node {\n  name: "a"\n',
             'versions { producer: 1.5 }\n',
             'node { name "a" }\n',
             'node: 3\n']:
    try:
        text_format.Merge(text, tf.GraphDef())
        print("parsed?")
    except text_format.ParseError as e:
        print("ParseError:", e)
try:
    tf._pbtxt_read(sys.argv[1], tf.GraphDef())
except tf.errors.OpError as e:
    print(type(e).__name__ + ": " + e.message)
PY
printf 'node {\n  name: "x"\n  op: "Placeholder"\n}\nnode {\n  name: "y"\n  op: Identity\n}\n' >"$WORK/bad.pbtxt"
check "damaged text names the line and column" "ParseError: 2:9 : string not terminated
ParseError: 5:19 : enum type \"tensorflow.DataType\" has no value named DT_FLOOT
ParseError: 3:1 : expected '}', got end of input
ParseError: 1:22 : field \"producer\": not a valid integer: 1.5
ParseError: 1:8 : expected ':' after field \"name\"
ParseError: 1:7 : expected '{' for field \"node\", got \"3\"
InvalidArgumentError: $WORK/bad.pbtxt:7:7: expected a string, got \"Identity\"" \
  "$(timeout 30 "$TFSH" "$WORK/bad.py" "$WORK/bad.pbtxt" 2>&1)"
finish
