#!/usr/bin/env bash
# tfsh vs TensorFlow 1.x (compat.v1, gRPC), side by side: the five data-plane workloads
# (step, transfer, async, sync, graph), each one script run unchanged by both
# (scripts/bench/vs_tf/*.py; TF through the
# shim in scripts/bench/tf1/, from the venv of scripts/bench/tf_venv.sh), then a summary.
#   scripts/bench/vs_tf.sh [step transfer async sync graph]   (default: all five)
# Each can also be run alone: scripts/bench/vs_tf/{step,transfer,graph}.sh,
# scripts/bench/vs_tf/train.sh {async|sync} [STEPS]. Environment: TFSH, TF_PY, REPS,
# TFSH_TF_VENV.
set -u
DIR=$(cd "$(dirname "$0")/vs_tf" && pwd)
TF_PY=${TF_PY:-$(bash "$DIR/../tf_venv.sh")} || exit 1
export TF_PY
OUT=$(mktemp /tmp/vs_tf_summary.XXXXXX)
trap 'rm -f "$OUT"' EXIT
[ $# -gt 0 ] || set -- step transfer async sync graph
for w in "$@"; do
  t0=$(date +%s)
  n0=$(grep -c '^SUMMARY' "$OUT")
  case $w in
    step | transfer | graph) bash "$DIR/$w.sh" ;;
    async | sync) bash "$DIR/train.sh" "$w" ;;
    *) echo "unknown workload $w" >&2; continue ;;
  esac 2>&1 | grep --line-buffered -v -e '^[EWI]0000 ' -e '^WARNING: All log messages' | tee -a "$OUT" | grep --line-buffered -v '^SUMMARY'
  rc=${PIPESTATUS[0]}
  [ "$rc" = 0 ] && [ "$(grep -c '^SUMMARY' "$OUT")" -gt "$n0" ] ||
    echo "SUMMARY $w | failed (exit $rc) | | | | | FAILED" | tee -a "$OUT"
  echo "   ($w: $(($(date +%s) - t0)) s)"
done
echo
echo "| workload | tfsh | TF | tfsh/TF | vs raw / linearity | target | |"
echo "|---|---|---|---|---|---|---|"
sed -n 's/^SUMMARY \(.*\)$/| \1 |/p' "$OUT"
