#!/usr/bin/env bash
# A tfsh session on a TensorFlow master (TFSH_PEER=tf) checked without TF: every message
# tfsh sends (CreateSession with TF's GraphDef, ExtendSession, RunStep with feeds,
# fetches and targets, CloseSession) must be byte for byte what a real TF 2.21 master
# accepted, and TF's recorded replies (float and string tensors, an InvalidArgument error)
# must come out as they did then (tests/data/tf_grpc, scripts/tf_oracle/record_grpc.py).
# test_tf_peer.sh runs a real TF cluster where TF_PYTHON is set.
. "$(dirname "$0")/lib.sh"
D=$TFSH_SRC/tests/data/tf_grpc
fake_tf_master M "$D/session_exchange.txt"
out=$(TFSH_PEER=tf timeout 60 "$TFSH" "$TFSH_SRC/tests/integration/tf_peer_tiny.py" "grpc://localhost:$M" 2>&1)
check "the session's output, as against real TF" "$(cat "$D/session_tiny.out")" "$out"
# A master that dies in the middle of the session (at the first RunStep): TF's code and
# where, no hang.
fake_tf_master M2 "$D/session_exchange.txt" 1
out=$(TFSH_PEER=tf timeout 60 "$TFSH" "$TFSH_SRC/tests/integration/tf_peer_tiny.py" "grpc://localhost:$M2" 2>&1 | tail -1)
want="UnavailableError: RunStep on the TensorFlow master at localhost:$M2: "
check "the master dies mid-session (the step, where, and gRPC's words)" "$want" "${out:0:${#want}}"
# A master that is not there: a clear error, at once.
read -r N <<<"$(free_ports 1)"
out=$(TFSH_PEER=tf timeout 60 "$TFSH" -c "
import tensorflow as tf
try:
    tf.Session('grpc://localhost:$N')
except tf.errors.UnavailableError as e:
    print(e.message.split(': failed')[0], '...', e.message.split('(')[-1])" 2>&1)
check "no TF master there" "CreateSession on the TensorFlow master at localhost:$N ... is a TF server running there? \`tfsh probe\` asks every task)" "$out"
finish
