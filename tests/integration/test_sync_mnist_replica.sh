#!/usr/bin/env bash
# The process layout and flags of TF1's mnist_replica.py --sync_replicas=True (once
# reported to hang after "Training begins"): 1 ps + 2 workers, each its own tfsh process,
# --train_steps=50, Fashion-MNIST; both workers finish training and validate.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/need_fashion.sh"
PY="$TFSH_SRC/tests/integration/sync_replica.py"
read -r P0 W0 W1 <<<"$(free_ports 3)"
FLAGS=(--ps_hosts="localhost:$P0" --worker_hosts="localhost:$W0,localhost:$W1" --sync_replicas=True --train_steps=50 --data_dir="$data")
start_tfsh ps "$PY" "${FLAGS[@]}" --job_name=ps --task_index=0
start_tfsh w0 "$PY" "${FLAGS[@]}" --job_name=worker --task_index=0
start_tfsh w1 "$PY" "${FLAGS[@]}" --job_name=worker --task_index=1
wait_exit "$PID_w0" 120; rc0=$?
wait_exit "$PID_w1" 120; rc1=$?
[ "$rc0$rc1" = 00 ] || { tail -n 5 "$WORK/w0.log" "$WORK/w1.log" >&2; }
check "the chief finishes" "0" "$rc0"
check "the other worker finishes" "0" "$rc1"
for w in w0 w1; do
  check "$w trained to the global step" "Training ends" "$(grep -m1 -o 'Training ends' "$WORK/$w.log")"
  check "$w validated" "validation cross entropy is a number: True" "$(grep -m1 'validation cross entropy' "$WORK/$w.log")"
done
last=$(grep -o 'global step: [0-9]*' "$WORK/w0.log" "$WORK/w1.log" | sed 's/.*: //' | sort -n | tail -n 1)
check "the global step reached 50" "yes" "$([ "${last:-0}" -ge 50 ] && echo yes || echo "no: ${last:-none}")"
finish
