# Sourced by tutorials.sh and legacy.sh after they set $here: what both take from the
# environment ($TF_PYTHON, $TFSH, $DATA_DIR, $LIMIT, $OUT), the logs' directory, and the
# skip (exit 77) when there is no TensorFlow to compare with.
root=$(cd "$here/../.." && pwd)
py=${TF_PYTHON:-/root/tfvenv/bin/python}
tfsh=${TFSH:-$root/build/tfsh}
data=${DATA_DIR:-/usr/share/datasets/fashion-mnist}
limit=${LIMIT:-900}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
[ -x "$py" ] || { echo "$(basename "$0"): no TensorFlow python at $py (set TF_PYTHON)" >&2; exit 77; }
echo "logs in $OUT" >&2
