#!/usr/bin/env bash
# Every unit test under valgrind: no definite leaks, no memory errors. A separate command
# (slow), run before a release:   scripts/valgrind-unit.sh [BUILD_DIR]
set -u
build=${1:-$(cd "$(dirname "$0")/.." && pwd)/build}
status=0
for t in "$build"/test_*; do
  [ -x "$t" ] || continue
  log=$(mktemp)
  timeout 900 valgrind --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=9 \
    --suppressions="$(dirname "$0")/valgrind.supp" "$t" >"$log" 2>&1
  rc=$?
  if [ $rc -eq 0 ]; then
    echo "ok   $(basename "$t")"
  elif [ $rc -eq 77 ]; then
    echo "skip $(basename "$t") (cannot run here)"
  else
    echo "FAIL $(basename "$t")"
    grep -E "definitely lost|Invalid|uninitialised|ERROR SUMMARY" "$log" | head -5
    status=1
  fi
  rm -f "$log"
done
exit $status
