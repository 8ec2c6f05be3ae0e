#!/usr/bin/env bash
# Closing a session while other threads run steps in it: each thread's run ends
# with TF's CancelledError (in flight) or RuntimeError (started after the close), on a local
# session and on a remote one, 1 and 2 threads, many sessions; the process never crashes.
. "$(dirname "$0")/lib.sh"
# TFSH_STRESS_SESSIONS (default 200; scripts/stress.sh sets 1000) sessions locally, half remotely.
PY="$TFSH_SRC/tests/integration/close_race.py"
N=${TFSH_STRESS_SESSIONS:-200}
R=${TFSH_STRESS_REMOTE:-$((N / 2))}
T=$((60 + N * 3 / 10))   # seconds: generous for the TSan build
check "local, 1 thread, $N sessions" "ends $N of $N" "$(timeout $T "$TFSH" "$PY" 1 $N 2>&1)"
check "local, 2 threads, $N sessions" "ends $((2 * N)) of $((2 * N))" "$(timeout $T "$TFSH" "$PY" 2 $N 2>&1)"

read -r W0 <<<"$(free_ports 1)"
start_task w0 --cluster "{\"worker\": [\"localhost:$W0\"]}" --job worker --task 0
wait_for "$WORK/w0.log" "intra-op"
REMOTE="Session::Close: the session was closed while this step ran"
check "remote, 1 thread, $R sessions" "ends $R of $R" \
  "$(timeout $T "$TFSH" "$PY" 1 $R "grpc://localhost:$W0" "$REMOTE" 2>&1)"
check "remote, 2 threads, $R sessions" "ends $((2 * R)) of $((2 * R))" \
  "$(timeout $T "$TFSH" "$PY" 2 $R "grpc://localhost:$W0" "$REMOTE" 2>&1)"
check "the server lives on" "0" "$(kill -0 "$PID_w0" 2>/dev/null; echo $?)"
finish
