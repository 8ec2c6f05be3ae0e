#!/usr/bin/env bash
# The differential harness: run a TF1 program under real TensorFlow (tf.compat.v1, v2
# behaviour disabled, numpy 1.x printing: shim.py) and under tfsh, and diff the two.
#   scripts/tf_oracle/run.sh PROGRAM.py [ARGS...]          diff stdout (and exit status)
#   scripts/tf_oracle/run.sh --write tests/lang/NAME.py     write NAME.out from TensorFlow
# Real TensorFlow comes from $TF_PYTHON (default /root/tfvenv/bin/python), a virtual
# environment outside the repository: never a dependency of the build, the tests or CI,
# which compare against the checked-in outputs (pip install tensorflow-cpu tf-keras tf-slim
# there; tf-slim is TF 1.15's tf.contrib.slim). $TFSH: the binary (default build/tfsh).
# Programs whose outputs must not differ keep what differs (timings, random draws) off stdout.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
py=${TF_PYTHON:-/root/tfvenv/bin/python}
tfsh=${TFSH:-$root/build/tfsh}
write=0
[ "${1:-}" = --write ] && { write=1; shift; }
prog=${1:?usage: run.sh [--write] PROGRAM.py [ARGS...]}
shift
[ -x "$py" ] || { echo "run.sh: no TensorFlow python at $py (set TF_PYTHON)" >&2; exit 77; }
tfout=$(mktemp) tfshout=$(mktemp) tferr=$(mktemp)
trap 'rm -f "$tfout" "$tfshout" "$tferr"' EXIT
t0=$(date +%s.%N)
(cd "$(dirname "$prog")" && "$py" "$here/shim.py" "$(basename "$prog")" "$@") >"$tfout" 2>"$tferr" </dev/null
tfrc=$?
t1=$(date +%s.%N)
if [ $write = 1 ]; then
  [ $tfrc = 0 ] || { cat "$tferr" >&2; echo "run.sh: TensorFlow exited $tfrc" >&2; exit 1; }
  cp "$tfout" "${prog%.py}.out"
  echo "wrote ${prog%.py}.out ($(wc -l <"${prog%.py}.out") lines)"
  exit 0
fi
(cd "$(dirname "$prog")" && "$tfsh" "$(basename "$prog")" "$@") >"$tfshout" </dev/null
tfshrc=$?
t2=$(date +%s.%N)
printf 'tensorflow: exit %s, %.2fs   tfsh: exit %s, %.2fs\n' "$tfrc" "$(echo "$t1 - $t0" | bc)" "$tfshrc" "$(echo "$t2 - $t1" | bc)" >&2
[ $tfrc = 0 ] || tail -5 "$tferr" >&2
if diff -u --label tensorflow --label tfsh "$tfout" "$tfshout"; then
  [ "$tfrc" = "$tfshrc" ] && { echo "same output" >&2; exit 0; }
fi
exit 1
