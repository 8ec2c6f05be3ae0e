#!/usr/bin/env bash
# tf.keras in graph mode trains (scripts/examples/keras_fashion.tfs): a Sequential CNN with
# BatchNormalization and Dropout called on a placeholder, tf.train.AdamOptimizer, the
# layers' updates run with each step. One epoch of Fashion-MNIST (550 steps of batch 100)
# must reach 0.84 test accuracy (tfsh, seeds 1-4: 0.857-0.874; real TF on the same
# script: 0.849-0.874) within 90 s. Also: tf.keras.layers.LSTM builds (its loop: tests/lang/tf_keras_rnn.py).
set -u
: "${TFSH:?set TFSH to the tfsh binary}"
root=$(cd "$(dirname "$0")/../.." && pwd)
fails=0
msg=$(timeout 30 "$TFSH" -c 'import tensorflow as tf
print(tf.keras.layers.LSTM(4)(tf.placeholder(tf.float32, [None, 7, 3])).shape)' 2>&1)
want="(?, 4)"
if [ "$msg" = "$want" ]; then echo "ok: $msg"; else echo "FAIL: LSTM said '$msg'"; fails=1; fi
data=${FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
if [ ! -f "$data/train-images-idx3-ubyte.gz" ]; then
  echo "SKIP: no Fashion-MNIST under $data (apt install dataset-fashion-mnist)"
  [ $fails = 0 ] && exit 77
  exit 1
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
start=$(date +%s)
timeout 180 "$TFSH" "$root/scripts/examples/keras_fashion.tfs" --data_dir "$data" --epochs 1 >"$out" 2>&1
rc=$?
secs=$(( $(date +%s) - start ))
cat "$out"
check() {   # check WHAT CONDITION...: ok or FAIL, naming it
  local what=$1
  shift
  if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fails=1; fi
}
acc=$(sed -n 's/^test accuracy \([0-9.]*\)$/\1/p' "$out")
check "exit status $rc is 0" test "$rc" = 0
check "550 steps" grep -q '^steps 550$' "$out"
check "test accuracy '$acc' >= 0.84" awk -v a="${acc:-0}" 'BEGIN { exit !(a >= 0.84) }'
check "${secs} s < 90 s" test "$secs" -lt 90
exit $fails
