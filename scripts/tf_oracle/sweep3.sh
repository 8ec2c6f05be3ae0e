#!/usr/bin/env bash
# Sweep 3: run public TF1-era scripts, unchanged, under tfsh (and TensorFlow when one is
# installed), one at a time, each bounded, and print one line per script and implementation.
#   scripts/tf_oracle/sweep3.sh SRC LIST
# LIST: lines "NAME|PATH-IN-SRC|LIMIT|ARGS" (# comments). Each run is in a fresh working
# directory under $OUT with MNIST_data -> $DATA_DIR (the scripts' own relative path) and the
# other files beside the script (csv data) linked in, the same for tfsh and TF (shim.py
# leaves the working directory as it finds it); /tmp/data/ (aymericdamien's path) gets
# links to $DATA_DIR's files if it does not exist; stdout unbuffered (PYTHONUNBUFFERED)
# so a run cut at its limit keeps its output. The process is a timeout(1), killed by pid.
# Sources are never checked in. $TF_PYTHON (default /opt/tfvenv/bin/python), $TFSH, $OUT.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
src=$(cd "${1:?usage: sweep3.sh SRC LIST}" && pwd) || exit 2
list=${2:?usage: sweep3.sh SRC LIST}
py=${TF_PYTHON:-/opt/tfvenv/bin/python}
tfsh=${TFSH:-$root/build/tfsh}
data=${DATA_DIR:-/usr/share/datasets/fashion-mnist}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
impls="tfsh"
[ -x "$py" ] && timeout 120 "$py" -c 'import tensorflow' 2>/dev/null && impls="tfsh tf"
echo "logs in $OUT; implementations: $impls" >&2
if [ ! -d /tmp/data ]; then
  mkdir -p /tmp/data && ln -sf "$data"/* /tmp/data/
fi
cur=
trap '[ -n "$cur" ] && kill -TERM "$cur" 2>/dev/null' EXIT
while IFS='|' read -r name path limit args; do
  case "$name" in ''|'#'*) continue ;; esac
  file=$src/$path
  [ -f "$file" ] || { echo "$name: no $file, skipped"; continue; }
  for impl in $impls; do
    dir=$OUT/$name.$impl
    rm -rf "$dir"; mkdir -p "$dir"
    ln -s "$data" "$dir/MNIST_data"
    for f in "$(dirname "$file")"/*; do
      case "$f" in *.py) ;; *) ln -s "$f" "$dir/$(basename "$f")" 2>/dev/null ;; esac
    done
    if [ "$impl" = tf ]; then cmd=("$py" "$here/shim.py" "$file"); else cmd=("$tfsh" "$file"); fi
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    (cd "$dir" && PYTHONUNBUFFERED=1 exec timeout "${limit:-300}" "${cmd[@]}" $args) \
      >"$dir/log" 2>&1 </dev/null &
    cur=$!
    wait "$cur"; rc=$?; cur=
    t=$(echo "$(date +%s.%N) - $t0" | bc)
    metric=$(grep -v -i -E '^(Extracting|tfsh: figure|Instructions for updating)|^\s*$|warn' "$dir/log" | tail -1 | cut -c1-160)
    err=
    # 124: timeout(1) cut it at its limit; otherwise the last error line (TF's oneDNN notice
    # speaks of round-off "errors": not one)
    if [ "$rc" = 124 ]; then err=" | cut at ${limit:-300} s"
    elif [ "$rc" != 0 ]; then err=" | $(grep -E 'Error|Exception|error:' "$dir/log" | tail -1 | cut -c1-240)"; fi
    printf '%-28s %-4s exit %-3s %6.1fs  %s%s\n' "$name" "$impl" "$rc" "$t" "$metric" "$err"
  done
done <"$list"
