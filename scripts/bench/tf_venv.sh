#!/usr/bin/env bash
# Creates (if missing) the Python venv with real TensorFlow that the side-by-side benchmarks
# (scripts/bench/vs_tf.sh) run against, outside the repository: $TFSH_TF_VENV, default
# $HOME/tfvenv. TensorFlow is never a dependency of tfsh's build, tests or CI; only these
# benchmarks use it, through the TF1 shim in scripts/bench/tf1/.
#   scripts/bench/tf_venv.sh          # prints the venv's python3 once it works
set -eu
VENV=${TFSH_TF_VENV:-$HOME/tfvenv}
if ! "$VENV/bin/python3" -c 'import tensorflow' >/dev/null 2>&1; then
  python3 -m venv "$VENV" >&2
  "$VENV/bin/pip" install -q tensorflow-cpu tf-keras tf-slim >&2
fi
echo "$VENV/bin/python3"
