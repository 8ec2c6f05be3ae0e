#!/usr/bin/env bash
# 64 MiB tensors moved worker -> worker (produced on task 0, consumed on task 1) against
# raw ZeroMQ tcp loopback throughput measured in the same run. Target: at least 70%.
# Usage: scripts/bench/transfer_bench.sh [STEPS (20)]   (TFSH, BUILD: default build/)
set -eu
. "$(dirname "$0")/../ports.sh"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$SRC/build}
TFSH=${TFSH:-$BUILD/tfsh}
STEPS=${1:-20}
WORK=$(mktemp -d)
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$WORK"' EXIT
cp "$BUILD/net_bench" "$WORK/net_bench"   # built with tfsh (CMake target net_bench)
read -r A B <<<"$(free_ports 2)"
SPEC="{\"worker\": [\"localhost:$A\", \"localhost:$B\"]}"
for i in 0 1; do
  "$TFSH" server --cluster "$SPEC" --job worker --task $i >"$WORK/w$i.log" 2>&1 &
  PIDS+=($!)
done
for i in 0 1; do for _ in $(seq 500); do grep -q "serving on" "$WORK/w$i.log" && break; sleep 0.02; done; done
raw1=$("$WORK/net_bench" 200 10 | awk '/tcp loopback  64 MiB/ {print $6}')
out=$("$TFSH" "$SRC/scripts/bench/transfer_bench.tfs" "localhost:$A" "localhost:$B" "$STEPS")
raw2=$("$WORK/net_bench" 200 10 | awk '/tcp loopback  64 MiB/ {print $6}')
python3 - "$raw1" "$raw2" $(echo "$out" | awk '/moved_s/ {print $2, $4}') "$STEPS" <<'PY'
import sys
r1, r2, moved, stay, steps = map(float, sys.argv[1:])
raw = max(r1, r2)
mb = 64 * 1048576 / 1e6
whole = mb / moved
net = mb / max(moved - stay, 1e-9)
print("64 MiB worker->worker (best of %d steps):" % steps)
print("  step with the transfer %7.1f ms, same step without %6.1f ms" % (moved * 1e3, stay * 1e3))
print("  tfsh, whole step       %7.0f MB/s  (%3.0f%% of raw)" % (whole, 100 * whole / raw))
print("  tfsh, transfer only    %7.0f MB/s  (%3.0f%% of raw)" % (net, 100 * net / raw))
print("  raw zmq tcp            %7.0f MB/s  (before %.0f, after %.0f; the higher taken)" % (raw, r1, r2))
print("  target >= 70%% of raw (whole step): %s" % ("MET" if whole / raw >= 0.7 else "MISSED"))
PY
