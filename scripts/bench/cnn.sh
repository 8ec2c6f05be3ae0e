#!/usr/bin/env bash
# tfsh vs TensorFlow 1.x on the CNN of aymericdamien's tensorflow_dataset_api.py (tf.layers,
# batch 128, 28x28x1): one training step, one forward pass, and one training step of the
# tf.nn.conv2d tutorial CNN. The same script (scripts/bench/cnn.py) under both, in the same
# run; prints each best time and the ratio TF/tfsh (above 1: tfsh is faster), and the load.
#   scripts/bench/cnn.sh [REPS]
# Environment: TFSH (default build/tfsh), TF_PYTHON (default /root/tfvenv/bin/python).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
tfsh=${TFSH:-$root/build/tfsh}
py=${TF_PYTHON:-/root/tfvenv/bin/python}
n=${1:-10}
[ -x "$py" ] || { echo "cnn.sh: no TensorFlow python at $py (set TF_PYTHON)" >&2; exit 77; }
load0=$(cut -d' ' -f1 /proc/loadavg)
a=$("$tfsh" "$root/scripts/bench/cnn.py" "$n" | grep '^BEST ')
b=$("$py" "$root/scripts/tf_oracle/shim.py" "$root/scripts/bench/cnn.py" "$n" 2>/dev/null | grep '^BEST ')
load1=$(cut -d' ' -f1 /proc/loadavg)
[ -n "$a" ] && [ -n "$b" ] || { echo "cnn.sh: a run failed (tfsh '$a', TF '$b')" >&2; exit 1; }
for what in layers_train layers_infer nn_train; do
  ta=$(echo "$a" | awk -v w="$what" '$2 == w {print $3}')
  tb=$(echo "$b" | awk -v w="$what" '$2 == w {print $3}')
  awk -v a="$ta" -v b="$tb" -v w="$what" 'BEGIN {
    printf "%-13s batch 128: tfsh %7.1f ms, TF %7.1f ms, TF/tfsh %.2f\n", w, a * 1e3, b * 1e3, b / a }'
done
echo "load average $load0 before, $load1 after"
