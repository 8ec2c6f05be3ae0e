#!/usr/bin/env bash
# tfsh and TensorFlow over TF's gRPC, the three pairings in one run, each a
# client in its own process on a 2-task cluster (scripts/bench/grpc/client.py):
#   TF -> TF        TF's client, TF's servers (the baseline)
#   tfsh -> TF      tfsh's client (TFSH_PEER=tf), TF's servers
#   TF -> tfsh      TF's client, tfsh's servers (task 0 with --grpc)
#   tfsh -> tfsh    tfsh's own protocol (ZeroMQ and its direct lanes), for reference
# Workloads: the tiny step (us per sess.run) and the 64 MiB transfer (ms), and the raw
# ZeroMQ tcp round trip (net_bench) of each round for the tfsh -> tfsh step. REPS rounds,
# alternating the order, best kept.   scripts/bench/grpc/pairs.sh [REPS (3)] [STEPS (500)]
# Environment: TFSH (build/tfsh), TF_PYTHON (a Python with tensorflow; required).
set -u
root=$(cd "$(dirname "$0")/../../.." && pwd)
tfsh=${TFSH:-$root/build/tfsh}
py=${TF_PYTHON:-}
reps=${1:-3} steps=${2:-500}
[ -n "$py" ] && "$py" -c "import tensorflow" 2>/dev/null || { echo "pairs.sh: set TF_PYTHON to a Python with tensorflow" >&2; exit 77; }
client=$root/scripts/bench/grpc/client.py
work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$work"' EXIT
port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
waitfor() { for _ in $(seq 600); do grep -q "$2" "$1" 2>/dev/null && return; sleep 0.1; done; echo "pairs.sh: $1 never said $2" >&2; exit 1; }
A=$(port) B=$(port) C=$(port) D=$(port) G=$(port)
tfspec="{\"worker\": [\"localhost:$A\", \"localhost:$B\"]}"
tsspec="{\"worker\": [\"localhost:$C\", \"localhost:$D\"]}"
for i in 0 1; do
  "$py" "$root/tests/integration/tf_server.py" "$tfspec" worker $i >"$work/tf$i.log" 2>&1 &
  pids+=($!)
done
"$tfsh" server --cluster "$tsspec" --job worker --task 0 --grpc "localhost:$G" >"$work/ts0.log" 2>&1 &
pids+=($!)
"$tfsh" server --cluster "$tsspec" --job worker --task 1 >"$work/ts1.log" 2>&1 &
pids+=($!)
for f in tf0 tf1; do waitfor "$work/$f.log" serving; done
for f in ts0 ts1; do waitfor "$work/$f.log" "serving on"; done
echo "CPU: $(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) usable; load $(cut -d' ' -f1-3 /proc/loadavg)"
run() {   # run PAIRING WORKLOAD STEPS: prints the figure
  case $1 in
    tf_tf) "$py" "$root/scripts/tf_oracle/shim.py" "$client" "grpc://localhost:$A" "$2" "$3" 2>/dev/null ;;
    tfsh_tf) TFSH_PEER=tf "$tfsh" "$client" "grpc://localhost:$A" "$2" "$3" ;;
    tf_tfsh) "$py" "$root/scripts/tf_oracle/shim.py" "$client" "grpc://localhost:$G" "$2" "$3" 2>/dev/null ;;
    tfsh_tfsh) "$tfsh" "$client" "grpc://localhost:$C" "$2" "$3" ;;
  esac | awk '{print $2}'
}
pairs="tf_tf tfsh_tf tf_tfsh tfsh_tfsh"
for ((r = 1; r <= reps; r++)); do
  order=$pairs
  [ $((r % 2)) = 0 ] && order=$(echo $pairs | tr ' ' '\n' | tac | tr '\n' ' ')
  for p in $order; do
    echo "$p step $(run $p step "$steps")" >>"$work/results"
    echo "$p transfer $(run $p transfer 5)" >>"$work/results"
  done
  echo "raw rtt $("$(dirname "$tfsh")/net_bench" 5000 1 | awk '/tcp loopback  round trip/ {print $6}')" >>"$work/results"
done
best() { awk -v p="$1" -v w="$2" '$1 == p && $2 == w && $3 != "" && (m == "" || $3 < m) {m = $3} END {print m}' "$work/results"; }
base_s=$(best tf_tf step) base_t=$(best tf_tf transfer)
echo "| pairing | tiny step (us) | /TF->TF | 64 MiB transfer (ms) | /TF->TF |"
echo "|---|---|---|---|---|"
for p in $pairs; do
  s=$(best $p step) t=$(best $p transfer)
  awk -v p="$p" -v s="$s" -v t="$t" -v bs="$base_s" -v bt="$base_t" 'BEGIN {
    gsub("_", " -> ", p); printf "| %s | %s | %s | %s | %s |\n", p, s ? s : "failed", s && bs ? sprintf("%.2f", s / bs) : "-",
      t ? t : "failed", t && bt ? sprintf("%.2f", t / bt) : "-" }'
done
rtt=$(best raw rtt)
awk -v s="$(best tfsh_tfsh step)" -v r="$rtt" 'BEGIN { if (s && r) printf "tfsh -> tfsh tiny step: %.2f raw ZeroMQ round trips (best %s us; target <= 3)\n", s / r, r }'
