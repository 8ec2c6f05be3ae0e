#!/usr/bin/env bash
# Time limits and close as TF's GrpcServerTest checks them, on a server started
# here: RunOptions.timeout_in_ms and operation_timeout_in_ms end a dequeue from an empty
# queue with DeadlineExceededError naming the node it waits in; Session.reset of an unknown
# target is NotFoundError; close under a blocked dequeue is CancelledError (Session::Close).
. "$(dirname "$0")/lib.sh"
read -r W0 <<<"$(free_ports 1)"
start_task w0 --cluster "{\"worker\": [\"localhost:$W0\"]}" --job worker --task 0
wait_for "$WORK/w0.log" "intra-op"
out=$(timeout 60 "$TFSH" "$TFSH_SRC/tests/integration/time_limits.py" "grpc://localhost:$W0" 2>&1)
DEV=/job:worker/replica:0/task:0/device:CPU:0
check "time limits, reset, close" "DeadlineExceededError Timed out after 1000 ms (RunOptions.timeout_in_ms) waiting for node 'fifo_queue_Dequeue' on $DEV in time
DeadlineExceededError Timed out after 500 ms (operation_timeout_in_ms) waiting for node 'fifo_queue_Dequeue' on $DEV in time
NotFoundError No session factory registered for the given session options: {target: \"nonexistent\" config: } Registered factories are {DIRECT_SESSION, GRPC_SESSION}.
CancelledError Session::Close" "$out"
finish
