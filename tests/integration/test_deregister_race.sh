#!/usr/bin/env bash
# DeregisterGraph while RunGraph runs the fragment: a client closes its session
# from another thread while long steps run on a second task; every run ends with TF's
# CancelledError or RuntimeError, both servers live on and serve a new session, in bounded time.
. "$(dirname "$0")/lib.sh"
read -r W0 W1 <<<"$(free_ports 2)"
CLUSTER="{\"worker\": [\"localhost:$W0\", \"localhost:$W1\"]}"
start_task w0 --cluster "$CLUSTER" --job worker --task 0
start_task w1 --cluster "$CLUSTER" --job worker --task 1
wait_for "$WORK/w0.log" "intra-op"
wait_for "$WORK/w1.log" "intra-op"
out=$(timeout 90 "$TFSH" "$TFSH_SRC/tests/integration/deregister_race.py" "grpc://localhost:$W0" 10 2>&1)
check "closes under long remote steps" "ends 10 of 10 odd {}
steps ran yes
task 1 still runs True
in time True" "$out"
check "both servers live on" "0 0" "$(kill -0 "$PID_w0" 2>/dev/null; echo -n "$? "; kill -0 "$PID_w1" 2>/dev/null; echo $?)"
finish
