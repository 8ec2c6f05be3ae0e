#!/usr/bin/env bash
# The issue's full-size distributed training benchmark: both TF1 trainer shapes
# (scripts/examples/dist_mlp_supervisor.tfs: flags + Supervisor; dist_mlp_mts.tfs:
# argparse + MonitoredTrainingSession) on 1 ps + 2 workers on this host, a 784-128-10 MLP on
# Fashion-MNIST, 2000 global steps of batch 100 (Adam 0.001). Prints the chief's test
# accuracy (target: >= 0.84) and the wall time of each run.
#   scripts/bench/dist_train.sh [TFSH] [STEPS]
set -u
. "$(dirname "$0")/../ports.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
TFSH=${1:-${TFSH:-$root/build/tfsh}}
STEPS=${2:-2000}
work=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$work"' EXIT
for shape in supervisor mts; do
  read -r P W0 W1 <<<"$(free_ports 3)"
  script=$root/scripts/examples/dist_mlp_$shape.tfs
  args=(--ps_hosts="localhost:$P" --worker_hosts="localhost:$W0,localhost:$W1" --train_steps="$STEPS")
  if [ $shape = supervisor ]; then args+=(--logdir="$work/$shape"); else args+=(--checkpoint_dir="$work/$shape"); fi
  "$TFSH" "$script" --job_name=ps --task_index=0 "${args[@]}" >"$work/ps.log" 2>&1 &
  ps=$!
  pids+=($ps)
  start=$(date +%s.%N)
  timeout 900 "$TFSH" "$script" --job_name=worker --task_index=1 "${args[@]}" >"$work/w1.log" 2>&1 &
  w1=$!
  timeout 900 "$TFSH" "$script" --job_name=worker --task_index=0 "${args[@]}" >"$work/w0.log" 2>&1
  rc0=$?
  wait $w1
  rc1=$?
  secs=$(python3 -c "import time; print('%.1f' % (time.time() - $start))")
  kill $ps 2>/dev/null
  wait $ps 2>/dev/null
  acc=$(sed -n 's/^test accuracy \([0-9.]*\)$/\1/p' "$work/w0.log")
  echo "$shape: $STEPS global steps, exit $rc0/$rc1, test accuracy ${acc:-?}, ${secs} s" \
       "($(grep -h 'done,' "$work/w0.log" "$work/w1.log" | sed 's/, global step.*//' | tr '\n' ';'))"
  [ "$rc0$rc1" = 00 ] || tail -n 12 "$work/w0.log" "$work/w1.log"
done
