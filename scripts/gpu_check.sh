#!/usr/bin/env bash
# Everything that needs a GPU, in one go, for a session that has a GPU machine for a few
# minutes: build with CUDA, the GPU tests (kernels vs CPU, training vs CPU, placement and
# the device layer), the Fashion-MNIST trainers on the GPU, then the GPU benchmarks. Bounded: each step has a timeout, ~10 min in
# all. Writes to OUTDIR (default gpu-check-DATE): summary.md (what ran, on which GPU, at
# which commit, pass/fail/skip per step), and each step's full log.
#   scripts/gpu_check.sh [OUTDIR]        e.g. on the device machine: scripts/gpu_check.sh "$OUT"
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/gpu-check-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
out=$(cd "$out" && pwd)
build=${TFSH_BUILD:-$root/build-gpu}
summary=$out/summary.md
status=0

step() {   # step NAME SECONDS COMMAND...: run it, log to $out/NAME.log, one line in the summary
  local name=$1 secs=$2 rc t0=$SECONDS
  shift 2
  timeout "$secs" "$@" >"$out/$name.log" 2>&1
  rc=$?
  local verdict=ok
  [ $rc -eq 77 ] && verdict=SKIPPED
  [ $rc -eq 124 ] && verdict="TIMED OUT after ${secs}s"
  [ $rc -ne 0 ] && [ $rc -ne 77 ] && [ $rc -ne 124 ] && verdict="FAILED (exit $rc)"
  [ "$verdict" = ok ] || status=1
  echo "| $name | $verdict | $((SECONDS - t0)) s | $name.log |" >>"$summary"
  return $rc
}

{
  echo "# GPU check"
  echo
  echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "- commit: $(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)$(git -C "$root" diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')"
  gpus=$(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null | head -4 | tr '\n' ';')
  echo "- GPU: ${gpus:-none seen by nvidia-smi}"
  echo "- CUDA: $(nvcc --version 2>/dev/null | tail -1 || echo 'nvcc not found')"
  echo
  echo "| step | result | time | log |"
  echo "|---|---|---|---|"
} >"$summary"

# 1. Build with CUDA (all cores), -Werror as everywhere.
step build 900 env TFSH_BUILD="$build" bash "$root/scripts/build.sh" || { cat "$summary"; exit 1; }
grep -q "CUDA kernels 1" "$build.log" "$build/CMakeCache.txt" 2>/dev/null ||
  grep -q "TFSH_HAVE_CUDA=1" "$build/build.ninja" 2>/dev/null ||
  echo "| build | WARNING: the build may lack CUDA (no TFSH_HAVE_CUDA=1 found) | | |" >>"$summary"

# 2. The GPU tests; a skip here means the GPU was not seen: that counts as a failure.
cd "$build" || exit 1
step tests 600 ctest -R "gpu" --timeout 300 --output-on-failure
if grep -q "Skipped" "$out/tests.log"; then
  echo "| tests | FAILED: a GPU test was skipped on a GPU machine (see tests.log) | | |" >>"$summary"
  status=1
fi
# The kernels one by one, with their printed GPU name, for the record.
step kernels 300 "$build/test_gpu_kernels"

# The Fashion-MNIST trainers (MLP, CNN), whose ops now default to GPU:0: same accuracy
# thresholds as on the CPU (skipped when the dataset is not installed: not a failure here).
step train 600 ctest -R "train_mlp|train_cnn" --timeout 300 --output-on-failure
[ $? -eq 0 ] || true

# 3. Benchmarks (MatMul 8192 through sess.run vs cuBLAS; host->device bandwidth).
step bench 600 env TFSH="$build/tfsh" bash "$root/scripts/bench/gpu.sh" 8192 256
{
  echo
  echo "## Benchmarks"
  echo
  cat "$out/bench.log"
  echo
  echo "Targets: MatMul ratio >= 0.9, host->device (staged copy) ratio >= 0.8."
} >>"$summary"
cat "$summary"
exit $status
