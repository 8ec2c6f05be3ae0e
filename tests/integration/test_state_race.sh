#!/usr/bin/env bash
# Two run signatures of one session draw from one random op at once: each
# draw is the op's own stream, none repeated, locally and on a remote session.
. "$(dirname "$0")/lib.sh"
PY="$TFSH_SRC/tests/integration/state_race.py"
WANT="draws 1000 distinct 1000 same stream True"
check "local: two signatures, one random op" "$WANT" "$(timeout 60 "$TFSH" "$PY" 500 2>&1)"
read -r W0 <<<"$(free_ports 1)"
start_task w0 --cluster "{\"worker\": [\"localhost:$W0\"]}" --job worker --task 0
wait_for "$WORK/w0.log" "intra-op"
check "remote: two signatures, one random op" "$WANT" "$(timeout 60 "$TFSH" "$PY" 500 "grpc://localhost:$W0" 2>&1)"
finish
