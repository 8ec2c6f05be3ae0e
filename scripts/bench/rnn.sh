#!/usr/bin/env bash
# tfsh vs TensorFlow 1.x on one training step of an LSTM(64) over 100 time steps, Keras's
# LSTM(return_sequences=True) and tf.nn.dynamic_rnn, plus tf.nn.static_rnn (20 unrolled steps,
# sequence_length, batch 128: aymericdamien's dynamic_rnn.py): the same script (scripts/bench/rnn.py)
# under both, in the same run; prints each best time per step and the ratio TF/tfsh
# (above 1: tfsh is faster).
#   scripts/bench/rnn.sh [TIME_STEPS [ROUNDS [CASE]]]   (CASE: run only cases whose name has it)
# The two sides alternate ROUNDS times (default 3) and each case's best counts, so that load
# from other processes hits both alike.
# Environment: TFSH (default build/tfsh), TF_PYTHON (default /root/tfvenv/bin/python),
# TFSH_BASE (a baseline binary: run in each round too, its times and TF/base printed beside).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
tfsh=${TFSH:-$root/build/tfsh}
py=${TF_PYTHON:-/root/tfvenv/bin/python}
n=${1:-100} rounds=${2:-3} only=${3:-}
[ -x "$py" ] || { echo "rnn.sh: no TensorFlow python at $py (set TF_PYTHON)" >&2; exit 77; }
base=${TFSH_BASE:-}
a="" b="" c=""
for _ in $(seq "$rounds"); do
  [ -n "$base" ] && c+=$("$base" "$root/scripts/bench/rnn.py" "$n" "$only" | grep '^BEST ')$'\n'
  a+=$("$tfsh" "$root/scripts/bench/rnn.py" "$n" "$only" | grep '^BEST ')$'\n'
  b+=$("$py" "$root/scripts/tf_oracle/shim.py" "$root/scripts/bench/rnn.py" "$n" "$only" 2>/dev/null |
       grep '^BEST ')$'\n'
done
[ -n "${a//$'\n'/}" ] && [ -n "${b//$'\n'/}" ] || { echo "rnn.sh: a run failed (tfsh '$a', TF '$b')" >&2; exit 1; }
best() { echo "$1" | awk -v w="$2" '$2 == w && (m == "" || $3 < m) {m = $3} END {print m}'; }
for what in keras dynamic_rnn static_rnn; do
  ta=$(best "$a" "$what") tb=$(best "$b" "$what") tc=$(best "$c" "$what")
  [ -n "$ta" ] && [ -n "$tb" ] || continue
  [ "$what" = static_rnn ] && steps=20 || steps=$n
  awk -v a="$ta" -v b="$tb" -v c="${tc:-0}" -v w="$what" -v n="$steps" 'BEGIN {
    printf "%s LSTM(64) training step over %d steps: tfsh %.1f ms, TF %.1f ms, TF/tfsh %.2f",
           w, n, a * 1e3, b * 1e3, b / a
    if (c > 0) printf "; base %.1f ms, TF/base %.2f", c * 1e3, b / c
    printf "\n" }'
done
