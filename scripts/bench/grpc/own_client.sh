#!/usr/bin/env bash
# The tiny 2-task step from a client in its own process (scripts/bench/grpc/client.py on
# tfsh's own protocol: pairs.sh's tfsh -> tfsh column, without TensorFlow) for one or more
# tfsh binaries in the same run: each round starts a 2-task cluster of each binary in turn
# (the order alternating), runs the step from that binary's client, then the raw ZeroMQ tcp
# round trip (net_bench, the one beside the binary). Prints each binary's best step, the
# round trip of the same round and their ratio, and every round.
#   scripts/bench/grpc/own_client.sh [REPS (3)] [STEPS (300)] [TFSH ...] (default build/tfsh)
set -eu
TF_PY=${TF_PY:-python3}   # lib.sh's TensorFlow: not used here
. "$(dirname "$0")/../vs_tf/lib.sh"
reps=${1:-3} steps=${2:-300}
shift 2 2>/dev/null || shift $#
[ $# -gt 0 ] || set -- "$TFSH"
echo "CPU: $(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) usable; load $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 1; r <= reps; r++)); do
  order=("$@")
  if ((r % 2 == 0)); then order=(); for b in "$@"; do order=("$b" "${order[@]}"); done; fi
  for b in "${order[@]}"; do
    read -r A B <<<"$(free_ports 2)"
    spec="{\"worker\": [\"localhost:$A\", \"localhost:$B\"]}"
    TFSH=$b
    for i in 0 1; do
      start "$WORK/s$i.log" tfsh server --cluster "$spec" --job worker --task $i
      eval "t$i=$LAST"
      wait_line "$WORK/s$i.log" "serving on" "$LAST"
    done
    run_bounded 300 "$WORK/c.log" tfsh "$SRC/scripts/bench/grpc/client.py" "grpc://localhost:$A" step "$steps"
    kill "$t0" "$t1" 2>/dev/null || true
    wait "$t0" "$t1" 2>/dev/null || true
    NET_BENCH=$(dirname "$b")/net_bench
    echo "$b $(field step_us "$WORK/c.log") $(raw_rtt 5000)" >>"$WORK/results"
  done
done
echo "| binary | tiny step (us) | raw RTT, same round (us) | raw RTTs |"
echo "|---|---|---|---|"
for b in "$@"; do
  awk -v b="$b" '$1 == b && (s == "" || $2 < s) {s = $2; r = $3} END {
    printf "| %s | %s | %s | %.2f |\n", b, s, r, s / r }' "$WORK/results"
done
echo "every round (binary, step us, raw RTT us):"
sed 's/^/  /' "$WORK/results"
