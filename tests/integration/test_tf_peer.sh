#!/usr/bin/env bash
# tfsh and TensorFlow talking TF's gRPC both ways, against TF 2.21 (TF_PYTHON;
# skipped without): mnist_replica's MLP, 20 steps, same op seeds and batches, in three
# pairings: TF's client on a TF cluster (the reference), tfsh's client on that TF cluster
# (TFSH_PEER=tf), and TF's client on a tfsh cluster (tfsh server --grpc). The loss curves
# agree within float noise (TF's oneDNN kernels and BLIS sum in their own orders).
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
MLP=$TFSH_SRC/tests/integration/tf_peer_mlp.py
ARGS=(localhost:$P0 localhost:$W0,localhost:$W1 20 "$data")
timeout 120 "$PY" "$TFSH_SRC/scripts/tf_oracle/shim.py" "$MLP" grpc://localhost:$W0 "${ARGS[@]}" >"$WORK/tf.txt" 2>/dev/null
check "TF's client trains on the TF cluster" "0" "$?"
TFSH_PEER=tf timeout 120 "$TFSH" "$MLP" grpc://localhost:$W0 "${ARGS[@]}" >"$WORK/tfsh.txt" 2>&1
check "tfsh's client trains on the TF cluster" "0" "$?"

# the same cluster layout served by tfsh, worker 0 also speaking TF's MasterService
read -r Q0 V0 V1 G <<<"$(free_ports 4)"
TSPEC="{\"ps\": [\"localhost:$Q0\"], \"worker\": [\"localhost:$V0\", \"localhost:$V1\"]}"
start_task tps --cluster "$TSPEC" --job ps --task 0
start_task tw0 --cluster "$TSPEC" --job worker --task 0 --grpc "localhost:$G"
start_task tw1 --cluster "$TSPEC" --job worker --task 1
for t in tps tw0 tw1; do wait_for "$WORK/$t.log" "serving on"; done
check "worker 0 says where TF's MasterService is" "tfsh: TF's MasterService (gRPC) on localhost:$G" \
  "$(grep MasterService "$WORK/tw0.log")"
timeout 120 "$PY" "$TFSH_SRC/scripts/tf_oracle/shim.py" "$MLP" grpc://localhost:$G localhost:$Q0 \
  localhost:$V0,localhost:$V1 20 "$data" >"$WORK/tf_on_tfsh.txt" 2>"$WORK/tf_on_tfsh.err"
check "TF's client trains on the tfsh cluster" "0" "$?"
for run in tfsh tf_on_tfsh; do
  check "$run: 20 steps" "20" "$(grep -c '^step ' "$WORK/$run.txt")"
  check "$run: TF's loss curve (relative 1e-5)" "" "$(paste "$WORK/$run.txt" "$WORK/tf.txt" | awk '{
    d = $4 - $8; if (d < 0) d = -d; if (d > 1e-5 * $8) print "step " NR ": " $4 " against TF " $8 }')"
done
[ "$FAILS" = 0 ] || tail -5 "$WORK/tfsh.txt" "$WORK/tf_on_tfsh.err"
# tf.keras's fit from TF's client (callables, IdentityN): the TF cluster's losses
for t in W0 G; do
  TF_USE_LEGACY_KERAS=1 timeout 120 "$PY" "$TFSH_SRC/scripts/tf_oracle/shim.py" "$TFSH_SRC/tests/integration/tf_client_keras.py" \
    "grpc://localhost:${!t}" >"$WORK/keras_$t.txt" 2>"$WORK/keras_$t.err"
done
check "TF's client fits a tf.keras model on the TF cluster" "loss" "$(cut -d' ' -f1 "$WORK/keras_W0.txt")"
check "the same on the tfsh cluster: TF's losses" "$(cat "$WORK/keras_W0.txt")" "$(cat "$WORK/keras_G.txt")"

# TF's gRPC has no authentication: off loopback only when asked
read -r R0 <<<"$(free_ports 1)"
check "--grpc off loopback is refused" "tfsh server: --grpc 0.0.0.0:$R0: TF's gRPC has no authentication; serve it on a loopback address (localhost:PORT) or add --insecure" \
  "$(timeout 20 "$TFSH" server --cluster "{\"worker\": [\"localhost:$R0\"]}" --job worker --task 0 --grpc "0.0.0.0:$R0" 2>&1 | grep -- --grpc)"
finish
