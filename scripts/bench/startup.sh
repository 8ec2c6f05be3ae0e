#!/usr/bin/env bash
# Start-up, paired: tfsh -c pass, tfsh -c "import tensorflow", and the floor they stand on,
# Debian's /usr/bin/python3 -c pass and -c "import numpy" (and, where TF_PYTHON names a
# Python with TensorFlow, its import tensorflow), run alternating, N rounds (default 20),
# each command's best wall time printed in ms with its ratio to its floor.
#   scripts/bench/startup.sh [N]          TFSH=path/to/tfsh (default build/tfsh)
#   TFSH_BASE=/tmp/tfsh.old scripts/bench/startup.sh   also times an older tfsh, paired
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
n=${1:-20}
tfsh=${TFSH:-$root/build/tfsh}
[ -x "$tfsh" ] || { echo "startup.sh: no $tfsh (bash scripts/build.sh)" >&2; exit 1; }
cd "$(mktemp -d)"   # no script directory's modules on the path

names=() cmds=()
add() { names+=("$1"); cmds+=("$2"); }
add "python3 -c pass" "/usr/bin/python3 -c pass"
add "tfsh -c pass" "$tfsh -c pass"
[ -n "${TFSH_BASE:-}" ] && add "tfsh(base) -c pass" "$TFSH_BASE -c pass"
numpy_i=${#cmds[@]}
add "python3 -c 'import numpy'" "/usr/bin/python3 -c 'import numpy'"
add "tfsh -c 'import tensorflow'" "$tfsh -c 'import tensorflow'"
[ -n "${TFSH_BASE:-}" ] && add "tfsh(base) -c 'import tensorflow'" "$TFSH_BASE -c 'import tensorflow'"
if [ -n "${TF_PYTHON:-}" ] && "$TF_PYTHON" -c "import tensorflow" >/dev/null 2>&1; then
  add "TF_PYTHON -c 'import tensorflow'" "$TF_PYTHON -c 'import tensorflow'"
fi

declare -a best
for i in "${!cmds[@]}"; do best[$i]=999999999; done
for _ in $(seq "$n"); do
  for i in "${!cmds[@]}"; do
    s=$(date +%s%N)
    bash -c "${cmds[$i]}" >/dev/null 2>&1 </dev/null || { echo "startup.sh: failed: ${cmds[$i]}" >&2; exit 1; }
    e=$(date +%s%N)
    t=$(( (e - s) / 1000 ))
    [ "$t" -lt "${best[$i]}" ] && best[$i]=$t
  done
done
# bash -c's own start, measured the same way, comes off every figure
shell=999999999
for _ in $(seq "$n"); do
  s=$(date +%s%N); bash -c "true" </dev/null; e=$(date +%s%N)
  t=$(( (e - s) / 1000 )); [ "$t" -lt "$shell" ] && shell=$t
done

ms() { awk -v u="$1" 'BEGIN { printf "%7.1f ms", u / 1000 }'; }
echo "start-up, best of $n paired rounds ($(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) CPUs)"
floor_pass=$(( best[0] - shell ))
for i in "${!cmds[@]}"; do
  t=$(( best[$i] - shell ))
  case ${names[$i]} in
    *"-c pass") floor=$floor_pass ;;
    *) floor=$(( best[numpy_i] - shell )) ;;   # python3 -c 'import numpy'
  esac
  printf "%-36s %s  %5.2fx its python3 floor\n" "${names[$i]}" "$(ms $t)" "$(awk -v a=$t -v b=$floor 'BEGIN { print a / b }')"
done
