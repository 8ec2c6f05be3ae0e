#!/usr/bin/env bash
# A 2-task tiny step (a scalar variable on a ps task read and incremented from a worker's
# session) against the raw ZeroMQ tcp loopback round trip, measured in the same run.
# Target: one step costs at most 4 raw round trips.
# Usage: scripts/bench/dist_step_bench.sh [STEPS (2000)]   (TFSH, BUILD: default build/)
set -eu
. "$(dirname "$0")/../ports.sh"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$SRC/build}
TFSH=${TFSH:-$BUILD/tfsh}
STEPS=${1:-2000}
WORK=$(mktemp -d)
PS_PID=
trap '[ -n "$PS_PID" ] && kill "$PS_PID" 2>/dev/null; rm -rf "$WORK"' EXIT
cp "$BUILD/net_bench" "$WORK/net_bench"   # built with tfsh (CMake target net_bench)
read -r P W <<<"$(free_ports 2)"
"$TFSH" server --cluster "{\"ps\": [\"localhost:$P\"], \"worker\": [\"localhost:$W\"]}" --job ps --task 0 \
  >"$WORK/ps.log" 2>&1 &
PS_PID=$!
for _ in $(seq 500); do grep -q "serving on" "$WORK/ps.log" && break; sleep 0.02; done
raw1=$("$WORK/net_bench" 20000 1 | awk '/tcp loopback  round trip/ {print $6}')
step=$("$TFSH" "$SRC/scripts/bench/dist_step_bench.tfs" "localhost:$P" "localhost:$W" "$STEPS" | awk '/step_us/ {print $2}')
raw2=$("$WORK/net_bench" 20000 1 | awk '/tcp loopback  round trip/ {print $6}')
raw=$(python3 -c "print(min($raw1, $raw2))")
python3 - "$step" "$raw" "$raw1" "$raw2" "$STEPS" <<'PY'
import sys
step, raw, r1, r2, steps = map(float, sys.argv[1:])
ratio = step / raw
print("dist step (2 tasks, scalar assign_add on the ps from the worker's session, %d steps):" % steps)
print("  sess.run        %8.1f us" % step)
print("  raw zmq tcp RTT %8.1f us  (before %.1f, after %.1f; the lower taken)" % (raw, r1, r2))
print("  ratio           %8.2f raw round trips per step (target <= 4): %s" % (ratio, "MET" if ratio <= 4 else "MISSED"))
PY
