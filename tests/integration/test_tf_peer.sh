#!/usr/bin/env bash
# A tfsh client on a real TensorFlow cluster (TFSH_PEER=tf, issue 26): 1 ps + 2 workers of
# TF 2.21 (TF_PYTHON; skipped without), mnist_replica's MLP trained for 20 steps by tfsh
# and then by TF's own client on the same cluster, same op seeds and batches: the two loss
# curves agree within float noise (TF's oneDNN kernels sum in their own order).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/need_fashion.sh"
PY=${TF_PYTHON:-}
[ -n "$PY" ] && "$PY" -c "import tensorflow" 2>/dev/null || { echo "SKIP: set TF_PYTHON to a Python with TensorFlow"; exit 77; }
read -r P0 W0 W1 <<<"$(free_ports 3)"
SPEC="{\"ps\": [\"localhost:$P0\"], \"worker\": [\"localhost:$W0\", \"localhost:$W1\"]}"
for t in "ps ps 0" "w0 worker 0" "w1 worker 1"; do
  set -- $t
  "$PY" "$TFSH_SRC/tests/integration/tf_server.py" "$SPEC" "$2" "$3" >"$WORK/$1.log" 2>&1 </dev/null &
  PIDS+=($!)
done
for t in ps w0 w1; do wait_for "$WORK/$t.log" serving 90; done
ARGS=(grpc://localhost:$W0 localhost:$P0 localhost:$W0,localhost:$W1 20 "$data")
TFSH_PEER=tf timeout 120 "$TFSH" "$TFSH_SRC/tests/integration/tf_peer_mlp.py" "${ARGS[@]}" >"$WORK/tfsh.txt" 2>&1
check "tfsh trains on the TF cluster" "0" "$?"
timeout 120 "$PY" "$TFSH_SRC/scripts/tf_oracle/shim.py" "$TFSH_SRC/tests/integration/tf_peer_mlp.py" "${ARGS[@]}" \
  >"$WORK/tf.txt" 2>/dev/null
check "TF's client trains on it" "0" "$?"
check "20 steps each" "20 20" "$(grep -c '^step ' "$WORK/tfsh.txt") $(grep -c '^step ' "$WORK/tf.txt")"
check "the same loss curve (relative 1e-5)" "" "$(paste "$WORK/tfsh.txt" "$WORK/tf.txt" | awk '{
  d = $4 - $8; if (d < 0) d = -d; if (d > 1e-5 * $8) print "step " $2 ": tfsh " $4 ", TF " $8 }')"
[ "$FAILS" = 0 ] || tail -5 "$WORK/tfsh.txt"
finish
