#!/usr/bin/env bash
# tfsh vs TensorFlow 1.x on a tf.while_loop of 1,000 iterations whose body runs one tiny op
# on the ps task: scripts/bench/while_xdev.py under both, in the same run (tfsh: a
# `tfsh server` ps process and the worker script, over ZeroMQ; TF: two in-process servers,
# gRPC); prints each best time per sess.run and the ratio TF/tfsh (above 1: tfsh is faster).
#   scripts/bench/while_xdev.sh [ITERATIONS]
# Environment: TFSH (default build/tfsh), TF_PYTHON (default /root/tfvenv/bin/python).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
tfsh=${TFSH:-$root/build/tfsh}
py=${TF_PYTHON:-/root/tfvenv/bin/python}
n=${1:-1000}
[ -x "$py" ] || { echo "while_xdev.sh: no TensorFlow python at $py (set TF_PYTHON)" >&2; exit 77; }
export TFSH="$tfsh"
. "$root/tests/integration/lib.sh"
read -r P W P2 W2 <<<"$(free_ports 4)"
start_task ps --cluster "{\"ps\": [\"localhost:$P\"], \"worker\": [\"localhost:$W\"]}" --job ps --task 0
wait_for "$WORK/ps.log" "serving on"
a=$(timeout 300 "$tfsh" "$root/scripts/bench/while_xdev.py" "$P" "$W" "$n" | sed -n 's/^BEST //p')
b=$(timeout 300 "$py" "$root/scripts/tf_oracle/shim.py" "$root/scripts/bench/while_xdev.py" "$P2" "$W2" "$n" inproc 2>/dev/null |
    sed -n 's/^BEST //p')
[ -n "$a" ] && [ -n "$b" ] || { echo "while_xdev.sh: a run failed (tfsh '$a', TF '$b')" >&2; exit 1; }
awk -v a="$a" -v b="$b" -v n="$n" 'BEGIN {
  printf "while_loop of %d iterations, body op on ps: tfsh %.2f ms (%.1f us/iter), TF %.2f ms (%.1f us/iter), TF/tfsh %.2f\n",
         n, a * 1e3, a * 1e6 / n, b * 1e3, b * 1e6 / n, b / a }'
