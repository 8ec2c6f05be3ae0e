#!/usr/bin/env bash
# tfsh vs TensorFlow 1.x on a tf.while_loop of 10,000 tiny iterations: the same
# script (scripts/bench/while_loop.py) under both, in the same run; prints each best time
# per sess.run and the ratio TF/tfsh (above 1: tfsh is faster).
#   scripts/bench/while_loop.sh [ITERATIONS]
# Environment: TFSH (default build/tfsh), TF_PYTHON (default /root/tfvenv/bin/python).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
tfsh=${TFSH:-$root/build/tfsh}
py=${TF_PYTHON:-/root/tfvenv/bin/python}
n=${1:-10000}
[ -x "$py" ] || { echo "while_loop.sh: no TensorFlow python at $py (set TF_PYTHON)" >&2; exit 77; }
a=$("$tfsh" "$root/scripts/bench/while_loop.py" "$n" | sed -n 's/^BEST //p')
b=$("$py" "$root/scripts/tf_oracle/shim.py" "$root/scripts/bench/while_loop.py" "$n" 2>/dev/null | sed -n 's/^BEST //p')
[ -n "$a" ] && [ -n "$b" ] || { echo "while_loop.sh: a run failed (tfsh '$a', TF '$b')" >&2; exit 1; }
awk -v a="$a" -v b="$b" -v n="$n" 'BEGIN {
  printf "while_loop of %d iterations: tfsh %.2f ms (%.2f us/iter), TF %.2f ms (%.2f us/iter), TF/tfsh %.2f\n",
         n, a * 1e3, a * 1e6 / n, b * 1e3, b * 1e6 / n, b / a }'
