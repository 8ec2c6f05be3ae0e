#!/usr/bin/env bash
# tfsh inspect FILE [--cluster SPEC] and %inspect: a legacy job's graph seen
# without TensorFlow. tests/fixtures/tf/dist/ holds a replica_device_setter training graph
# TF wrote (scripts/tf_oracle/make_meta_fixtures.py: variables on two ps tasks, the rest on
# worker 0, one Digamma node tfsh lacks) as a MetaGraph and a binary GraphDef. The output is
# checked whole against tests/integration/inspect/*.out: the devices asked for, the
# %placement and %partitions tables on the cluster (the graph's own jobs, job counts, a
# ClusterSpec's JSON), and what would fail (the unknown op, a ps task the spec lacks).
# Damaged and unreadable files and bad specs are named, exit 2.
. "$(dirname "$0")/lib.sh"
FX=$TFSH_SRC/tests/fixtures/tf
EX=$TFSH_SRC/tests/integration/inspect
run() { (cd "$1" && shift && timeout 30 "$TFSH" inspect "$@"; echo "rc=$?"); }
check "a MetaGraph on the jobs its devices name (Digamma would fail)" "$(cat "$EX/train_meta.out")" "$(run "$FX/dist" train.meta)"
check "its GraphDef on ps=1 worker=2: ps task 1 is missing" "$(cat "$EX/train_pb_ps1.out")" \
  "$(run "$FX/dist" train.pb --cluster "ps=1 worker=2")"
check "a forward graph on a ClusterSpec's JSON: nothing would fail" "$(cat "$EX/forward_json.out")" \
  "$(run "$FX" forward.pb --cluster '{"ps": ["ps0:2222"], "worker": ["w0:2222"]}')"
check "counts as JSON are job counts" "$(cat "$EX/train_pb_ps1.out")" \
  "$(run "$FX/dist" train.pb --cluster='{"ps": 1, "worker": 2}')"

# what cannot be read: named, exit 2, never a crash
D=$WORK/bad
mkdir -p "$D"
head -c 3000 "$FX/dist/train.meta" >"$D/cut.meta"
check "a truncated MetaGraph: the file and the offset" \
  "tfsh inspect: $D/cut.meta: not a MetaGraphDef (damaged at offset 2532: a length past the end)
rc=2" "$(run "$D" "$D/cut.meta" 2>&1)"
head -c 300 "$FX/dist/train.pb" >"$D/cut.pb"
check "a truncated GraphDef: the file and the offset" \
  "tfsh inspect: $D/cut.pb: not a binary GraphDef (damaged at offset 242: a length past the end)
rc=2" "$(run "$D" "$D/cut.pb" 2>&1)"
check "a text GraphDef: the same tables as its binary form" \
  "$(run "$FX" forward.pb --cluster '{"ps": ["ps0:2222"], "worker": ["w0:2222"]}' | sed 1s/forward.pb:/forward.pbtxt:/)" \
  "$(run "$FX" forward.pbtxt --cluster '{"ps": ["ps0:2222"], "worker": ["w0:2222"]}')"
check "a text MetaGraph (export_meta_graph(as_text=True), a sharded Saver)" "$(cat "$EX/textmeta.out")" \
  "$(run "$FX/textmeta" model.meta --cluster "localhost=1")"
head -c 500 "$FX/textmeta/model.meta" >"$D/cut_text.meta"
check "a truncated text MetaGraph: the file, line and column" \
  "tfsh inspect: $D/cut_text.meta:27:1: expected '}', got end of input
rc=2" "$(run "$D" "$D/cut_text.meta" 2>&1)"
printf 'node {\n  name: "a"\n  op: "Const"\n  attr { key: "x" value { i: zz } }\n}\n' >"$D/bad.pbtxt"
check "a damaged text GraphDef: the file, line and column" \
  "tfsh inspect: $D/bad.pbtxt:4:30: field \"i\": not a valid integer: zz
rc=2" "$(run "$D" "$D/bad.pbtxt" 2>&1)"
check "a missing file" "tfsh inspect: nope.pb: No such file or directory
rc=2" "$(run "$D" nope.pb 2>&1)"
check "a bad spec" "tfsh inspect: cluster spec: job ps has 0 tasks (1 to 1024)
rc=2" "$(run "$FX" forward.pb --cluster "ps=0" 2>&1)"
check "no file: the usage" "usage: tfsh inspect FILE [--cluster SPEC]" "$(timeout 10 "$TFSH" inspect 2>&1 | head -1)"
check "--help" "usage: tfsh inspect FILE [--cluster SPEC]" "$(timeout 10 "$TFSH" inspect --help | head -1)"

# the same from the shell: %inspect
out=$(cd "$FX/dist" && timeout 60 python3 "$TFSH_SRC/tests/integration/pty_drive.py" "$TFSH" \
  "%inspect train.meta --cluster ps=2 worker=1" "%inspect" 2>&1)
check "%inspect prints the same tables" "yes" \
  "$(echo "$out" | grep -q '^train/update_b/ApplyGradientDescent  *ApplyGradientDescent  */job:ps/task:1  */job:ps/replica:0/task:1/device:CPU:0  *colocated with b$' && echo yes || echo no)"
check "%inspect: what would fail" "  node 'digamma': op Digamma, which tfsh does not have" "$(echo "$out" | grep "^  node 'digamma'")"
check "%inspect alone: the usage" "yes" "$(echo "$out" | grep -q '^usage: tfsh inspect FILE' && echo yes || echo no)"
[ "$FAILS" = 0 ] || echo "$out" | tail -20
finish
