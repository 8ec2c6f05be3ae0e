#!/usr/bin/env bash
# More threads never lose: kernels on tfsh's default threads against one thread while
# something else holds a core, the case of a shared machine or of ctest -j2.
#   1. a second process spins on one core: MatMul 512 and 2048 (matmul.py), the tf.layers
#      CNN training step (cnn.py layers_train);
#   2. two tfsh processes train the MNIST MLP side by side (scripts/examples/mnist_mlp.tfs,
#      one epoch each, Fashion-MNIST), wall time of the pair.
# Prints default/one per case (target: <= 1.1). Alternating rounds, best kept.
#   scripts/bench/busy_core.sh [ROUNDS]   (default 3)
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
tfsh=${TFSH:-$root/build/tfsh}
rounds=${1:-3}
bench=$root/scripts/bench
[ -x "$tfsh" ] || { echo "busy_core.sh: build tfsh first" >&2; exit 77; }
best() { awk -v k="$2" '$1 == "BEST" && $2 == k && (m == "" || $3 < m) {m = $3} END {print m}' "$1"; }
ratio() {   # KEY DEFAULT_FILE ONE_FILE
  awk -v k="$1" -v d="$(best "$2" "$1")" -v one="$(best "$3" "$1")" 'BEGIN {
    printf "%-14s default %9.2f ms, one thread %9.2f ms, default/one %.2f\n", k, d * 1e3,
           one * 1e3, one ? d / one : 0 }'
}

echo "CPU: $(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) usable"
echo "== a second process spinning on one core"
python3 -c 'while True: pass' &
spinner=$!
trap 'kill $spinner 2>/dev/null' EXIT
d=$(mktemp) o=$(mktemp)
for _ in $(seq "$rounds"); do
  "$tfsh" "$bench/matmul.py" 512 2048 >>"$d"
  BLIS_NUM_THREADS=1 "$tfsh" "$bench/matmul.py" 512 2048 >>"$o"
  "$tfsh" "$bench/cnn.py" 5 layers_train >>"$d"
  BLIS_NUM_THREADS=1 "$tfsh" "$bench/cnn.py" 5 layers_train >>"$o"
done
for k in matmul_512 matmul_2048 layers_train; do ratio "$k" "$d" "$o"; done
kill $spinner 2>/dev/null
wait $spinner 2>/dev/null
trap - EXIT

data=/usr/share/datasets/fashion-mnist
if [ -r "$data/train-images-idx3-ubyte.gz" ]; then
  echo "== two MNIST MLP trainings side by side (one epoch each), wall seconds of the pair"
  pair() {   # env... : prints the pair's wall seconds
    local t0 t1
    t0=$(date +%s.%N)
    env "$@" "$tfsh" "$root/scripts/examples/mnist_mlp.tfs" --data_dir "$data" --epochs 1 >/dev/null 2>&1 &
    local p=$!
    env "$@" "$tfsh" "$root/scripts/examples/mnist_mlp.tfs" --data_dir "$data" --epochs 1 >/dev/null 2>&1
    wait $p
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }'
  }
  for _ in $(seq "$rounds"); do
    echo "BEST mlp_pair $(pair TFSH_BENCH=1)" >>"$d"
    echo "BEST mlp_pair $(pair BLIS_NUM_THREADS=1)" >>"$o"
  done
  ratio mlp_pair "$d" "$o"
fi
rm -f "$d" "$o"
