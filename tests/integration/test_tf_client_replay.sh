#!/usr/bin/env bash
# tfsh server --grpc checked without TF: the requests a real TF 2.21 client sent (its
# GraphDef, RunStep feeds and fetches, ExtendSession, CloseSession; ListDevices, Reset and
# callables on a cluster of two tasks) replayed against fresh tfsh servers get the recorded answers
# byte for byte (tests/data/tf_grpc, scripts/tf_oracle/record_grpc.py; test_tf_peer.sh and
# test_tf_views.sh run the live pairings with TF).
. "$(dirname "$0")/lib.sh"
D=$TFSH_SRC/tests/data/tf_grpc
"$TFSH" -c "import grpc" 2>/dev/null || { echo "SKIP: no python3-grpcio to replay TF's client"; exit 77; }
read -r W G <<<"$(free_ports 2)"
start_task w --cluster "{\"worker\": [\"localhost:$W\"]}" --job worker --task 0 --grpc "localhost:$G"
wait_for "$WORK/w.log" "serving on"
check "TF's client, replayed" "ok: 11 calls answered as recorded" \
  "$(timeout 60 "$TFSH" "$TFSH_SRC/tests/integration/replay_tf_client.py" "localhost:$G" "$D/client_exchange.txt" 2>&1)"
two_tasks() {   # two_tasks NAME: a cluster of two tasks, NAME0 serving TF's MasterService on $GRPC
  local p0 p1
  read -r p0 p1 GRPC <<<"$(free_ports 3)"
  local spec="{\"worker\": [\"localhost:$p0\", \"localhost:$p1\"]}"
  start_task "${1}0" --cluster "$spec" --job worker --task 0 --grpc "localhost:$GRPC"
  start_task "${1}1" --cluster "$spec" --job worker --task 1
  for t in "${1}0" "${1}1"; do wait_for "$WORK/$t.log" "serving on"; done
}
# ListDevices and Reset (TF's Session.list_devices, tf.Session.reset) on two tasks
two_tasks d
G2=$GRPC
check "TF's client listing devices and resetting, replayed" "ok: 10 calls answered as recorded" \
  "$(timeout 60 "$TFSH" "$TFSH_SRC/tests/integration/replay_tf_client.py" "localhost:$G2" "$D/devices_exchange.txt" 2>&1)"
# Callables (tf.keras's backend functions), then what only a raw peer sends: a callable
# short of its feed, Reset with device_filters
two_tasks c
G3=$GRPC
check "TF's client making and running callables, replayed" "ok: 11 calls answered as recorded" \
  "$(timeout 60 "$TFSH" "$TFSH_SRC/tests/integration/replay_tf_client.py" "localhost:$G3" "$D/callables_exchange.txt" 2>&1)"
check "a raw peer: a callable short of its feed, a partial run, Reset with device_filters" "init OK
make OK
run without its feed ('INVALID_ARGUMENT', 'RunCallable: callable 0 takes 1 feed, got 0')
a partial run ('UNIMPLEMENTED', \"tfsh's TF master has no partial runs (Session.partial_run_setup)\")
reset task 0 ('OK', b'')
v0 ('FAILED_PRECONDITION', '/job:worker/replica:0/task:0: Attempting to use uninitialized value v0')
v1 OK
count OK
reset, a malformed filter ('INVALID_ARGUMENT', \"device_filters: Malformed device specification 'xx:yy': expected /job:NAME/replica:N/task:N/device:TYPE:N (any part may be omitted)\")
reset task 1 ('OK', b'')
v1 ('FAILED_PRECONDITION', '/job:worker/replica:0/task:1: Attempting to use uninitialized value v1')" \
  "$(timeout 60 "$TFSH" "$TFSH_SRC/tests/integration/tf_client_raw.py" "localhost:$G3" "$D/callables_exchange.txt" 2>&1)"
rpc() {   # rpc METHOD PY_BYTES: the status a bare call gets
  timeout 60 "$TFSH" -c "
import grpc
try:
    grpc.insecure_channel('localhost:$G').unary_unary('/tensorflow.MasterService/$1')($2, timeout=10)
except grpc.RpcError as e:
    print(e.code(), e.details())" 2>&1
}
check "an unknown method" "StatusCode.UNIMPLEMENTED tfsh's TF master has no method /tensorflow.MasterService/PartialRunSetup" \
  "$(rpc PartialRunSetup "b''")"
check "garbage instead of a RunStepRequest" "StatusCode.INVALID_ARGUMENT RunStep: 3 bytes that are not a RunStepRequest" \
  "$(rpc RunStep "b'\\x0a\\xff\\xff'")"
check "a session that is not there" "StatusCode.ABORTED Session nope is not found." "$(rpc RunStep "b'\\x0a\\x04nope'")"
check "ListDevices of a session that is not there (TF's words)" \
  "StatusCode.INVALID_ARGUMENT Session nope is not found. Possibly, this master has restarted." \
  "$(rpc ListDevices "b'\\x0a\\x04nope'")"
check "Reset with a malformed device filter" \
  "StatusCode.INVALID_ARGUMENT device_filters: Malformed device specification 'cpu': expected /job:NAME/replica:N/task:N/device:TYPE:N (any part may be omitted)" \
  "$(rpc Reset "b'\\x12\\x03cpu'")"
finish
