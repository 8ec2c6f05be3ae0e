#!/usr/bin/env bash
# The legacy MNIST MLP example (scripts/examples/mnist_mlp.tfs) trains for one epoch on
# Fashion-MNIST read through input_data: one full epoch (550 Adam steps of batch 100)
# must reach at least 0.82 test accuracy (seeds 1-5 get 0.839-0.846; the full
# five-epoch run gets about 0.87), within 60 s.
set -u
: "${TFSH:?set TFSH to the tfsh binary}"
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$(dirname "$0")/need_fashion.sh"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
start=$(date +%s)
timeout 120 "$TFSH" "$root/scripts/examples/mnist_mlp.tfs" --data_dir "$data" --epochs 1 \
  >"$out" 2>&1
rc=$?
secs=$(( $(date +%s) - start ))
cat "$out"
fails=0
if [ "$rc" != 0 ]; then echo "FAIL: exit status $rc"; fails=1; fi
grep -q '^global step 550$' "$out" && echo "ok: 550 global steps" || { echo "FAIL: global step"; fails=1; }
acc=$(sed -n 's/^test accuracy \([0-9.]*\)$/\1/p' "$out")
if [ -n "$acc" ] && awk -v a="$acc" 'BEGIN { exit !(a >= 0.82) }'; then
  echo "ok: test accuracy $acc >= 0.82"
else
  echo "FAIL: test accuracy '$acc' < 0.82"; fails=1
fi
if [ "$secs" -lt 60 ]; then echo "ok: ${secs} s"; else echo "FAIL: took ${secs} s (limit 60)"; fails=1; fi
exit $fails
