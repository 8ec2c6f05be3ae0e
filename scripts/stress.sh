#!/usr/bin/env bash
# The concurrency stress runs, longer than the suite's: the close shapes 1000 times each,
# under the normal build and (with --tsan) the ThreadSanitizer build. A separate command:
#   scripts/stress.sh [--tsan] [N]      (N: sessions and runs, default 1000)
# 1. The suite's concurrency tests with N sessions (close_race local and remote, 1 and 2
#    threads), and the others as they are (deregister, state, threads, time limits, sync, pool).
# 2. close_sleep.py, N processes: a thread loops sess.run, the main thread sleeps 0.2 s and
#    closes: every run must end with TF's CancelledError or RuntimeError, never a crash
#    (the tally so far every 100 runs).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tsan=()
if [ "${1:-}" = --tsan ]; then tsan=(--tsan); shift; fi
n=${1:-1000}
build=$root/build
if [ ${#tsan[@]} != 0 ]; then
  build=$root/build-tsan
  export TFSH_CMAKE_ARGS="-DTFSH_SANITIZE=thread ${TFSH_CMAKE_ARGS:-}"
  # a build-tsan/ configured some other way is configured again
  grep -qs '^TFSH_SANITIZE:STRING=thread' "$build/CMakeCache.txt" || rm -f "$build/CMakeCache.txt"
fi
TFSH_BUILD=$build bash "$root/scripts/build.sh"
[ ${#tsan[@]} = 0 ] || export TSAN_OPTIONS="halt_on_error=1 suppressions=$root/tests/tsan.supp"
bad=0
(cd "$build" && TFSH_STRESS_SESSIONS=$n TFSH_STRESS_REMOTE=$n ctest --output-on-failure --timeout 3600 \
  -R 'close_race|state_race|deregister_race|thread_stress|time_limits|sync_mnist_replica|test_pool') || bad=1
declare -A seen=()
tally() { local k; for k in "${!seen[@]}"; do echo "close_sleep: ${seen[$k]} of $1: $k"; done; }
for i in $(seq "$n"); do
  r=$(timeout 120 "$build/tfsh" "$root/tests/integration/close_sleep.py" 2>&1 | tail -1) || r="exit $?: $r"
  seen[$r]=$((${seen[$r]:-0} + 1))
  ((i % 100)) || tally "$i" >&2
done
tally "$n"
for k in "${!seen[@]}"; do
  [ "$k" = CancelledError ] || [ "$k" = RuntimeError ] || bad=1
done
exit $bad
