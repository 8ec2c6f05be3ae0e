#!/usr/bin/env bash
# Closing a session while other threads run steps in it: each thread's run ends
# with TF's CancelledError (in flight) or RuntimeError (started after the close), on a local
# session and on a remote one, 1 and 2 threads, many sessions; the process never crashes.
. "$(dirname "$0")/lib.sh"
PY="$TFSH_SRC/tests/integration/close_race.py"
check "local, 1 thread, 200 sessions" "ends 200 of 200" "$(timeout 120 "$TFSH" "$PY" 1 200 2>&1)"
check "local, 2 threads, 200 sessions" "ends 400 of 400" "$(timeout 120 "$TFSH" "$PY" 2 200 2>&1)"

read -r W0 <<<"$(free_ports 1)"
start_task w0 --cluster "{\"worker\": [\"localhost:$W0\"]}" --job worker --task 0
wait_for "$WORK/w0.log" "intra-op"
REMOTE="Session::Close: the session was closed while this step ran"
check "remote, 1 thread, 100 sessions" "ends 100 of 100" \
  "$(timeout 120 "$TFSH" "$PY" 1 100 "grpc://localhost:$W0" "$REMOTE" 2>&1)"
check "remote, 2 threads, 100 sessions" "ends 200 of 200" \
  "$(timeout 120 "$TFSH" "$PY" 2 100 "grpc://localhost:$W0" "$REMOTE" 2>&1)"
check "the server lives on" "0" "$(kill -0 "$PID_w0" 2>/dev/null; echo $?)"
finish
