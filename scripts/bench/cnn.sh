#!/usr/bin/env bash
# tfsh vs TensorFlow 1.x on the CNN of aymericdamien's tensorflow_dataset_api.py (tf.layers,
# batch 128, 28x28x1): one training step, one forward pass, and one training step of the
# tf.nn.conv2d tutorial CNN. The same script (scripts/bench/cnn.py) under both, in the same
# run, alternating ROUNDS times so that load from other processes hits both alike; prints
# each best time and the ratio TF/tfsh (above 1: tfsh is faster), and the load average.
#   scripts/bench/cnn.sh [REPS [ROUNDS [CASE]]]   (CASE: run only cases whose name has it)
# Environment: TFSH (default build/tfsh), TF_PYTHON (default /root/tfvenv/bin/python),
# TFSH_BASE (a baseline binary, e.g. a copy of build/tfsh before a change: run in each round
# too, its times and TF/base printed beside).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
tfsh=${TFSH:-$root/build/tfsh}
py=${TF_PYTHON:-/root/tfvenv/bin/python}
n=${1:-10} rounds=${2:-3} only=${3:-}
[ -x "$py" ] || { echo "cnn.sh: no TensorFlow python at $py (set TF_PYTHON)" >&2; exit 77; }
load0=$(cut -d' ' -f1 /proc/loadavg)
base=${TFSH_BASE:-}
a="" b="" c=""
for _ in $(seq "$rounds"); do
  [ -n "$base" ] && c+=$("$base" "$root/scripts/bench/cnn.py" "$n" "$only" | grep '^BEST ')$'\n'
  a+=$("$tfsh" "$root/scripts/bench/cnn.py" "$n" "$only" | grep '^BEST ')$'\n'
  b+=$("$py" "$root/scripts/tf_oracle/shim.py" "$root/scripts/bench/cnn.py" "$n" "$only" 2>/dev/null |
       grep '^BEST ')$'\n'
done
load1=$(cut -d' ' -f1 /proc/loadavg)
[ -n "${a//$'\n'/}" ] && [ -n "${b//$'\n'/}" ] || { echo "cnn.sh: a run failed" >&2; exit 1; }
best() { echo "$1" | awk -v w="$2" '$2 == w && (m == "" || $3 < m) {m = $3} END {print m}'; }
for what in layers_train layers_infer nn_train; do
  ta=$(best "$a" "$what") tb=$(best "$b" "$what")
  [ -n "$ta" ] && [ -n "$tb" ] || continue
  tc=$(best "$c" "$what")
  awk -v a="$ta" -v b="$tb" -v c="${tc:-0}" -v w="$what" 'BEGIN {
    printf "%-13s batch 128: tfsh %7.1f ms, TF %7.1f ms, TF/tfsh %.2f", w, a * 1e3, b * 1e3, b / a
    if (c > 0) printf "; base %7.1f ms, TF/base %.2f", c * 1e3, b / c
    printf "\n" }'
done
echo "load average $load0 before, $load1 after; best of $rounds alternating runs of $n steps each"
